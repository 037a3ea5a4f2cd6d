"""Muon (``torch.optim.Muon``): momentum whose step for a weight matrix is orthogonalized by
a Newton–Schulz iteration, on the base class of ``optimizers.py``.

torch runs the iteration in bfloat16 (its inputs rounded to bfloat16, each product
accumulated in float32 and rounded once to bfloat16); ``round_bfloat16`` rounds the same
way in float32 arrays, without ``ml_dtypes``, on NumPy and CuPy alike. The float32 sums
are the BLAS's here and the CPU kernel's in torch: on an Intel Xeon with AVX512-BF16 every
element of the tests' updates agreed bit for bit; a sum that lands on a bfloat16 rounding
boundary may round the other way where the two accumulate in other orders."""

import math

import numpy as np

from .. import backend
from ..ops.ternary import lerp_arrays
from .optimizers import Optimizer
from .state_tensors import rate_rounding, state_tensor

__all__ = ["Muon", "newton_schulz", "round_bfloat16"]

# the lr adjustments torch names (None: "original")
ADJUST_LR_FNS = (None, "original", "match_rms_adamw")
# torch refuses more iterations (for speed, at its step)
MAX_NS_STEPS = 100


def round_bfloat16(x):
    """A float32 array rounded to bfloat16's 8 significant bits, to nearest, ties to even
    (c10's rounding), kept in float32: the low 16 bits of each number cleared after adding
    ``0x7FFF`` plus the lowest kept bit. NaN stays NaN."""
    xp = backend.array_module(x)
    x = xp.asarray(x, dtype=np.float32, order="C")          # (a view needs C order)
    bits = x.view(np.uint32)
    carry = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    rounded = ((bits + carry) & np.uint32(0xFFFF0000)).view(np.float32)
    return xp.where(xp.isnan(x), x, rounded)


def newton_schulz(update, coefficients, steps, eps):
    r"""The orthogonalized ``update`` (R, C) of Muon, in bfloat16 as torch's: with
    :math:`X_0 = G / \max(\lVert G \rVert_F, \epsilon)` (G transposed when R > C, so the Gram
    matrix is the smaller one), ``steps`` quintic iterations

    .. math::
        A = X X^\top, \quad X \leftarrow a X + (b A + c A^2) X

    with ``coefficients`` (a, b, c), which push every singular value of X towards about 1
    (an approximation of :math:`U V^\top` of the SVD :math:`G = U S V^\top`). Each result is
    rounded to bfloat16; returned as a float32 array of ``update``'s shape.

    Example:
        >>> newton_schulz(np.eye(2) * 3, (3.4445, -4.775, 2.0315), 5, 1e-7)[0, 0]
        1.125
    """
    xp = backend.array_module(update)
    a, b, c = (np.float32(k) for k in coefficients)
    # a float64 update reaches bfloat16 through float32, as c10 rounds a double
    x = round_bfloat16(update.astype(np.float32))               # (R, C)
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T                                                  # (m, n), m <= n
    # the norm reduced in float32 or better, then rounded as torch's bfloat16 norm is
    norm = round_bfloat16(xp.sqrt(xp.sum(x.astype(np.float64) ** 2)).astype(np.float32))
    norm = xp.maximum(norm, round_bfloat16(xp.asarray(eps, dtype=np.float32)))
    x = round_bfloat16(x / norm)
    for _ in range(steps):
        gram = round_bfloat16(x @ x.T)                           # (m, m)
        poly = round_bfloat16(b * gram + c * (gram @ gram))      # (m, m): torch's addmm
        x = round_bfloat16(a * x + poly @ x)                     # (m, n)
    return x.T if tall else x


def adjusted_lr(lr, adjust_lr_fn, shape):
    r"""Muon's rate for a (A, B) matrix: ``"original"`` (and None) :math:`\eta
    \sqrt{\max(1, A/B)}`, which keeps the update's RMS alike across rectangular shapes;
    ``"match_rms_adamw"`` :math:`0.2\,\eta \sqrt{\max(A, B)}`, the RMS of an AdamW step, so
    AdamW's rate and weight decay can be reused."""
    rows, cols = shape[:2]
    if adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = math.sqrt(max(1, rows / cols))
    return lr * ratio                            # (torch's order of the products)


class Muon(Optimizer):
    r"""Muon (``torch.optim.Muon``), for the 2-D weights of hidden layers (biases, embeddings
    and other parameters take another optimizer, AdamW say). Per step, with
    :math:`\mathrm{NS}` the Newton–Schulz orthogonalization (``newton_schulz``):

    .. math::
        B \leftarrow \mu B + (1 - \mu) g, \quad
        \tilde B = \mu B + (1 - \mu) g \text{ if nesterov else } B, \quad
        \theta \leftarrow \theta (1 - \eta\lambda) - \eta'\, \mathrm{NS}(\tilde B)

    (B starts at zero; :math:`\eta'` is ``adjusted_lr``: a step of about unit singular
    values, whatever the gradient's scale). The iteration runs in bfloat16, as torch's.

    Args:
        params: 2-D parameters or groups of them (another shape: a ValueError).
        lr: the rate :math:`\eta` (default 1e-3; a 1-element Tensor is read at each step).
        weight_decay: decoupled, :math:`\lambda` (default 0.1).
        momentum: :math:`\mu` (default 0.95).
        nesterov: step along the Nesterov blend (default True).
        ns_coefficients: (a, b, c) of the quintic iteration (default torch's,
            (3.4445, -4.775, 2.0315)).
        eps: the floor of the norm that scales the update first (default 1e-7).
        ns_steps: iterations, fewer than 100 (default 5).
        adjust_lr_fn: ``"original"``, ``"match_rms_adamw"`` or None (``"original"``).

    Shape:
        Each parameter (A, B); its ``momentum_buffer`` state too.

    As torch's, a complex parameter is a RuntimeError at ``step``; a wrong ``ns_steps`` or
    ``ns_coefficients`` is torch's ValueError at construction here (torch: at the step).

    Example:
        >>> hidden = [p for p in model.parameters() if p.ndim == 2]
        >>> opt = Muon(hidden, lr=0.02, momentum=0.95)
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5,
                 adjust_lr_fn=None):
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay,
                                  "momentum": momentum, "nesterov": nesterov,
                                  "ns_coefficients": ns_coefficients, "eps": eps,
                                  "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn})

    updates_in_place = True                      # the momentum buffer, a Tensor
    complex_params = False                       # torch's RuntimeError at step

    def _check_option(self, name, value):
        if name == "adjust_lr_fn":
            if value not in ADJUST_LR_FNS:
                raise ValueError(f"Muon: adjust learning rate function {value!r} is not "
                                 f"supported (one of {ADJUST_LR_FNS})")
        elif name == "ns_coefficients":
            if not isinstance(value, (tuple, list)) or len(value) != 3:
                raise ValueError(f"Muon: ns_coefficients must be exactly 3 numbers (a, b, c), "
                                 f"got {value!r}")
            for number in value:
                float(number)                    # a TypeError for what is no number
        elif name == "ns_steps":
            if not isinstance(value, (int, np.integer)) or not 0 <= value < MAX_NS_STEPS:
                raise ValueError(f"Muon: ns_steps must be an int in [0, {MAX_NS_STEPS}), "
                                 f"got {value!r}")
        else:
            super()._check_option(name, value)

    def _check_group(self, group):
        super()._check_group(group)
        for p in group["params"]:
            if p.ndim != 2:
                raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                 f"parameter with size: {tuple(p.shape)}")

    def _update(self, param, grad, state, group):
        momentum = float(group["momentum"])
        held = state.get("momentum_buffer")
        if held is None:
            xp = backend.array_module(param)
            held = state["momentum_buffer"] = state_tensor(xp.zeros_like(grad))
        buf = held._array
        buf[...] = lerp_arrays(buf, grad, 1 - momentum)            # torch's lerp_, in place
        blend = lerp_arrays(grad, buf, momentum) if group["nesterov"] else buf
        orthogonal = newton_schulz(blend, group["ns_coefficients"], int(group["ns_steps"]),
                                   float(group["eps"])).astype(param.dtype)
        # a Tensor rate: torch's products with it are Tensors of its dtype, each rounded
        r, lr = rate_rounding(group), float(group["lr"])
        rate = r(adjusted_lr(lr, group["adjust_lr_fn"], param.shape))
        # torch's mul_, then add_ with alpha (one FMA)
        decayed = param * r(1 - r(lr * float(group["weight_decay"])))
        return backend.fused_multiply_add(orthogonal, param.dtype.type(-rate), decayed)

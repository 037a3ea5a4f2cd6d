"""GELU, exact and tanh, twice: the composite graph of primitives (erf or tanh and the
products around them) and one fused node that saves only x and computes the closed-form
derivative in backward, as PyTorch's GELU does."""

import math

import numpy as np

from .. import backend, ops
from ..autograd import op_group
from . import arguments
from .softmax import _computed, _x_only   # half precision computed in float32
from .spec import FusedNorm, Norm

__all__ = ["APPROXIMATIONS", "GELU", "gelu"]

APPROXIMATIONS = ("none", "tanh")
_SQRT_HALF = math.sqrt(0.5)                        # torch's M_SQRT1_2
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)         # φ(0)
_KAPPA = 0.044715


# ----- fused: one node, closed-form backward ----------------------------------------------
class Gelu(FusedNorm):
    saved_names = ("x",)

    @staticmethod
    def forward(ctx, x, approximate):
        xp, x32 = backend.array_module(x), _computed(x)
        with np.errstate(invalid="ignore", over="ignore"):    # -inf · 0 is NaN, as in torch
            if approximate == "tanh":
                inner = _SQRT_2_OVER_PI * (x32 + _KAPPA * (x32 * x32 * x32))
                y = 0.5 * x32 * (1 + xp.tanh(inner))
            else:
                y = 0.5 * x32 * (1 + backend.erf(x32 * _SQRT_HALF))
        ctx.approximate = approximate
        ctx.save_for_backward(x)                     # the derivative reads x alone
        return xp.asarray(y).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        xp, x = backend.array_module(x), _computed(x)
        with np.errstate(invalid="ignore", over="ignore"):
            if ctx.approximate == "tanh":
                # d/dx ½x(1 + t), t = tanh(u), u = √(2/π)(x + κx³):
                # ½(1 + t) + ½x(1 - t²)·√(2/π)(1 + 3κx²)
                t = xp.tanh(_SQRT_2_OVER_PI * (x + _KAPPA * (x * x * x)))
                slope = 0.5 * (1 + t) + (0.5 * x) * (1 - t * t) * (
                    _SQRT_2_OVER_PI * (1 + 3 * _KAPPA * (x * x)))
            else:                                    # Φ(x) + x·φ(x)
                slope = (0.5 * (1 + backend.erf(x * _SQRT_HALF))
                         + x * (_INV_SQRT_2PI * xp.exp(-0.5 * x * x)))
        return xp.asarray(g * slope).astype(g.dtype, copy=False)


# ----- composite: the graph of primitives -------------------------------------------------
def composite_gelu(x, approximate="none"):
    """The graph: ½x(1 + erf(x/√2)), or ½x(1 + tanh(√(2/π)(x + 0.044715x³)))."""
    if approximate == "tanh":
        inner = (x + _KAPPA * x * x * x) * _SQRT_2_OVER_PI
        return 0.5 * x * (1 + inner.tanh())
    return 0.5 * x * (1 + ops.erf(x * _SQRT_HALF))


# ----- the public entry -------------------------------------------------------------------
def gelu(x, approximate="none", *, impl=None):
    r"""GELU :math:`x\,\Phi(x) = \tfrac12 x (1 + \mathrm{erf}(x/\sqrt2))`; with
    ``approximate="tanh"``, GPT-2's :math:`\tfrac12 x (1 + \tanh(\sqrt{2/\pi}(x + 0.044715 x^3)))`.

    ``impl="fused"`` is one node saving only x; ``"composite"`` the graph of primitives;
    None follows ``mg.norm_impl`` (fused by default) and so a model's ``set_impl``.

    Example:
        >>> F.gelu(mg.tensor([-1.0, 0.0, 1.0]))           # [-0.1587, 0, 0.8413]
    """
    arguments.check_tensor("gelu", "x", x)
    if approximate not in APPROXIMATIONS:
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    impl = arguments.resolve_impl("gelu", impl)
    if impl == "composite":
        with op_group("gelu"):
            return composite_gelu(x, approximate)
    return Gelu.apply(x, approximate=approximate)


# ----- the spec ---------------------------------------------------------------------------
GELU = Norm("gelu", "GELU", gelu, composite_gelu, Gelu, (), None,
            lambda f, t, impl, running, training, approximate="none":
                f(t["x"], approximate, impl=impl),
            lambda tF, t, running, training, approximate="none":
                tF.gelu(t["x"], approximate=approximate),
            random_inputs=_x_only)

r"""Weight normalization, spectral normalization and orthogonal weights as
parametrizations (``torch.nn.utils.parametrizations``): the modern forms of
``nn.utils.weight_norm`` and ``nn.utils.spectral_norm``, registered with
``parametrize.register_parametrization``, so ``module.weight`` is computed at each access
from ``module.parametrizations.weight.original0`` / ``original1`` (weight norm's g and v) or
``.original`` (spectral norm's W, with the buffers ``_u`` and ``_v`` on the
parametrization; orthogonal's X, with the buffer ``base``), state dict keys as torch's."""

from enum import Enum, auto

import numpy as np

from .. import backend, ops
from .. import functional as F
from .. import linalg as mg_linalg
from ..autograd import no_grad
from ..factories import eye, randn, zeros
from ..ops.decompositions import matrix_exp
from ..ops.linalg import vdot
from ..tensor import Tensor
from . import parametrize
from .module import Module
from .spectral_norm import (check_iterations, default_dim, normalize_into,
                            random_unit_vectors, weight_matrix)
from .weight_norm import norm_except_dim, weight_norm_formula

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    r"""The weight norm parametrization: (g, v) -> :math:`g \, v / \lVert v \rVert`, the
    norm over every dim but ``dim`` (None or -1: the whole tensor); ``right_inverse(w)`` is
    ``(norm_except_dim(w, 2, dim), w)``."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        """w = g · v / ‖v‖. Shape: g (1, ..., d_dim, ..., 1) or (), v (*) -> (*)."""
        return weight_norm_formula(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        """(g, v) = (‖w‖ over every dim but ``dim``, w)."""
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    r"""Weight normalization of ``module.<name>`` as a parametrization
    (``torch.nn.utils.parametrizations.weight_norm``).

    .. math:: w = g \, \frac{v}{\lVert v \rVert}

    ``parametrizations.<name>.original0`` is g (``norm_except_dim(w, 2, dim)``) and
    ``original1`` is v (w at first); ``module.<name>`` is computed at each access (once per
    ``parametrize.cached()`` block). A state dict of the hook form (``<name>_g``,
    ``<name>_v``) loads into it, as torch's.

    Args:
        module: the module holding the parameter.
        name: the parameter's name.
        dim: the dim with one norm per index; None (or -1) one norm over the whole tensor.

    Shape:
        original0: w's shape with every dim but ``dim`` 1 (``()`` for None); original1: w's.

    Returns the module.

    Example:
        >>> m = nn.utils.parametrizations.weight_norm(nn.Linear(20, 40))
        >>> m.parametrizations.weight.original0.shape                    # (40, 1)
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_hook_form(state_dict, prefix, local_metadata, strict, missing_keys,
                       unexpected_keys, error_msgs):
        # the hook form's keys, renamed to this form's
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(load_hook_form)
    return module


class _SpectralNorm(Module):
    r"""The spectral norm parametrization: W -> :math:`W / (u^\top W v)`, W as a matrix
    with ``dim`` first; a 1-D W is divided by its norm (exact). The buffers ``_u`` and
    ``_v`` are drawn as torch draws them, then 15 power iteration steps run; in training
    each call first runs ``n_power_iterations`` steps, u ← normalize(W v),
    v ← normalize(Wᴴ u), in place."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        check_iterations(n_power_iterations)
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:            # a vector's norm is exact: no u, no v
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            u, v = random_unit_vectors(weight_mat, eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        return weight_matrix(weight, self.dim)                  # (h, w)

    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are written in place (an optimizer or a copy of the module shares them);
        # forward clones them so that a graph keeps the values it used
        with no_grad():
            for _ in range(n_power_iterations):
                normalize_into(self._u, ops.mv(weight_mat, self._v), self.eps)      # (h,)
                normalize_into(self._v, ops.mv(weight_mat.mH, self._u), self.eps)   # (w,)

    def forward(self, weight):
        """W / σ with σ = uᴴ W v (W / ‖W‖ for a vector). Shape: W's -> W's."""
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = vdot(u, ops.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        """The identity: an assigned W is stored as it is (σ is taken at each access)."""
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Spectral normalization of ``module.<name>`` as a parametrization
    (``torch.nn.utils.parametrizations.spectral_norm``).

    .. math:: W_{SN} = \frac{W}{\sigma(W)}, \qquad \sigma(W) = u^\top W v

    W stays as ``parametrizations.<name>.original``; u and v, estimates of W's first
    singular vectors, are the buffers ``parametrizations.<name>.0._u`` and ``._v``: drawn
    N(0, 1) and normalized as torch draws them, refined by 15 power iteration steps, then
    by ``n_power_iterations`` steps at each access in training (registering is one access,
    as torch's); in eval none. A 1-D W is divided by its norm.

    Args:
        module: the module holding the parameter or buffer.
        name: its name.
        n_power_iterations: power iteration steps per access in training, >= 1.
        eps: the smallest norm divided by.
        dim: the output dim (the matrix's rows): None gives 0, or 1 for
            ``ConvTranspose1d``/``ConvTranspose2d``.

    Shape:
        W (d_0, ..., d_{n-1}) seen as (d_dim, the other dims' product) = (h, w): ``_u``
        (h,), ``_v`` (w,).

    Returns the module.

    Example:
        >>> m = nn.utils.parametrizations.spectral_norm(nn.Linear(20, 40))
        >>> m.parametrizations.weight[0]._u.shape                          # (40,)
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    dim = default_dim(module) if dim is None else dim
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ----- orthogonal --------------------------------------------------------------------------
def _householder_product(A, tau):
    r"""The first n columns of :math:`H_1 \cdots H_k`, :math:`H_i = I - \tau_i v_i v_i^\top`,
    v_i column i of A below the diagonal with a 1 on it (``torch.linalg.householder_product``
    of real A), composed of primitives. Shape: A (*, m, n), tau (*, k) -> (*, m, n)."""
    m, n = A.shape[-2:]
    reflectors = A.tril(-1) + eye(m, n, dtype=A.dtype, device=A.device)       # (*, m, n)
    Q = eye(m, n, dtype=A.dtype, device=A.device)
    for i in reversed(range(tau.shape[-1])):            # H_i applied to H_{i+1} ... H_k I
        v = reflectors[..., :, i:i + 1]                                         # (*, m, 1)
        Q = Q - (tau[..., i:i + 1].unsqueeze(-1) * v) @ (v.mT @ Q)
    return Q


def _householder_inverse(Q):
    # the X whose householder map gives Q (tall, real): LAPACK's geqrf of Q (torch.geqrf:
    # the reflectors below the diagonal), the diagonal set to the signs of R's, flipped
    # where LAPACK skipped a reflection (tau 0). Shape: (*, n, k) -> (*, n, k)
    raw, tau = np.linalg.qr(backend.to_numpy(Q.detach()._array), mode="raw")
    X = np.swapaxes(raw, -1, -2).copy()                    # raw is the transposed factor
    diagonal = np.arange(tau.shape[-1])
    signs = np.sign(X[..., diagonal, diagonal])
    X[..., diagonal, diagonal] = np.where(tau == 0.0, -signs, signs)
    return Tensor(X, dtype=Q.dtype, device=Q.device)


def _is_orthogonal(Q):
    n, k = Q.shape[-2:]
    identity = eye(k, dtype=Q.dtype, device=Q.device)
    return ops.allclose(Q.mH @ Q, identity, atol=10.0 * n * float(np.finfo(Q.dtype).eps))


def _make_orthogonal(A):
    # the Q of A = QR with R's diagonal made positive: Q times the signs of R's diagonal
    Q, R = mg_linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    r"""The orthogonal parametrization: X -> Q with :math:`Q^\top Q = I` (tall X; a wide one
    is transposed, mapped, and transposed back), by one of three maps of X's lower part:
    ``matrix_exp`` :math:`e^{A}`, ``cayley`` :math:`(I - A/2)^{-1}(I + A/2)`, A the
    skew-symmetric :math:`L - L^\top` of X's lower triangle L (X padded square), or
    ``householder``, the product of the reflectors below X's diagonal. With
    ``use_trivialization`` the result is multiplied by the buffer ``base``, the orthogonal
    matrix that ``right_inverse`` stores (then X starts at -I, which maps to I)."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.dtype.kind == "c" and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        """Q, X's shape (*, n, k), orthonormal columns (rows if n < k)."""
        n, k = X.shape[-2:]
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map == _OrthMaps.householder:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            # X's diagonal (±1) picks each column's sign; no gradient through it
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            X = X.tril()
            if n != k:                                   # pad to (*, n, n)
                X = ops.cat([X, zeros(*X.shape[:-2], n, n - k, dtype=X.dtype,
                                      device=X.device)], dim=-1)
            A = X - X.mH                                 # skew-symmetric
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                identity = eye(n, dtype=A.dtype, device=A.device)
                Q = mg_linalg.solve(identity - 0.5 * A, identity + 0.5 * A)
            Q = Q[..., :k] if n != k else Q
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        """The X that maps to Q. With trivialization: ``base`` becomes Q (made orthogonal,
        completed by normal draws to a square matrix where Q is not square) and X is -I;
        without, for householder only, Q's reflectors with its signs on the diagonal."""
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2:]
        transpose = n < k
        if transpose:
            Q, n, k = Q.mT, k, n
        if "base" not in self._buffers:
            if self.orthogonal_map != _OrthMaps.householder:
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            X = _householder_inverse(Q)
            return X.mT if transpose else X
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:                                   # complete Q to a square orthogonal matrix
            N = randn(*(Q.shape[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(ops.cat([Q, N], dim=-1))
        self.base = Q
        neg_identity = zeros(*Q_init.shape, dtype=Q_init.dtype, device=Q_init.device)
        neg_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_identity


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    r"""Make ``module.<name>`` orthogonal (unitary) as a parametrization
    (``torch.nn.utils.parametrizations.orthogonal``): :math:`Q^\top Q = I` for a tall
    matrix, :math:`Q Q^\top = I` for a wide one, batches of matrices too.

    .. math:: Q = B \, \phi(X), \qquad \phi \in \{e^{A},\ (I - A/2)^{-1}(I + A/2),\
              H_1 \cdots H_k\}

    A the skew-symmetric part of X's lower triangle, H_i the Householder reflectors below
    X's diagonal, B the buffer ``base`` (with ``use_trivialization``: the weight made
    orthogonal at registration, and each assignment's), so the registered weight's value is
    its nearest orthogonal matrix's (Q of its QR) and optimization moves X from -I.

    Args:
        module: the module holding the parameter or buffer.
        name: its name; a matrix or a batch of matrices.
        orthogonal_map: "matrix_exp", "cayley" or "householder"; None: "matrix_exp" for a
            square (or complex) matrix, "householder" otherwise.
        use_trivialization: keep ``base`` and start X at -I (torch's default).

    Shape:
        W (*, n, k); ``parametrizations.<name>.original`` W's shape; ``base`` (*, max,
        max), max = max(n, k).

    Returns the module.

    Example:
        >>> m = nn.utils.parametrizations.orthogonal(nn.Linear(4, 4))
        >>> m.weight @ m.weight.T                       # the identity, to rounding
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.dtype.kind == "c" else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module

"""Matrix decompositions and the functions of a matrix that LAPACK computes, each one node
with torch's closed-form backward (derived in each class's docstring): Cholesky, QR, the
symmetric eigendecomposition, the SVD, the pseudoinverse and the matrix exponential, over
``solves.py`` (det, slogdet, the inverse, the solves, the checks); and the Tensor methods
torch has for all of them (``x.det()``, ``x.inverse()``, the older ``x.svd()``, ``x.qr()``,
``x.cholesky()``, ...). ``microgradnorm/linalg.py`` (``mg.linalg``) is the ``torch.linalg``
namespace over both.

An array (..., m, n) is a batch of matrices; Aᴴ is the conjugate transpose (the transpose of
a real A); ⟨X, Y⟩ = Re tr(XᴴY), so that dL = ⟨gA, dA⟩ defines the gradient gA of a real loss
L, torch's convention for complex inputs too. Float32, float64, complex64 and complex128:
NumPy's (CuPy's) LAPACK computes in the input's precision, as torch's.

``METHODS`` names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import math

import numpy as np

from .. import backend, dtypes
from ..autograd.function import Function
from . import linalg, return_types
from .base import broadcast_shape, check_tensor, constant
from .solves import (Det, Inverse, LinAlgError, SlogDet, batched, check_dtype, check_kernel,
                     check_matrices, eye_like, mH, raise_failed, solve, torch_name)

METHODS = ("det", "logdet", "slogdet", "inverse", "cholesky", "qr", "svd", "pinverse",
           "matrix_power", "matrix_exp")


def lapack(fn, routine, a, **options):
    """``routine(a, **options)``, an ``xp.linalg`` function; its LinAlgError (NumPy's, a
    ValueError) raised as torch's ``LinAlgError``, a RuntimeError, in torch's words."""
    try:
        return routine(a, **options)
    except np.linalg.LinAlgError:
        finite = bool(backend.array_module(a).isfinite(a).all())
        reason = "the input matrix is ill-conditioned or has too many repeated singular " \
            "values" if finite else "the input matrix contained non-finite values"
        raise LinAlgError(f"{fn}: The algorithm failed to converge because {reason}.") \
            from None


# ----- Cholesky, QR ---------------------------------------------------------------------------
def _cholesky_info(a):
    """LAPACK potf2's lower factor of each matrix of (B, n, n) and info, the order of its
    first leading minor that is not positive-definite (0 for none); a failed factor stops
    there, the failing pivot on its diagonal, as LAPACK leaves it."""
    xp = backend.array_module(a)
    low = xp.tril(a)
    info = xp.zeros(len(a), np.int32)
    for j in range(a.shape[-1]):
        going = info == 0
        row = low[:, j, :j]
        pivot = (low[:, j, j] - (row * row.conj()).sum(-1)).real
        failed = going & ~(pivot > 0)                                    # NaN fails too
        info = xp.where(failed, j + 1, info)
        low[failed, j, j] = pivot[failed]
        going = going & ~failed
        root = xp.sqrt(xp.where(going, pivot, 1))
        below = (low[:, j + 1:, :j] @ row.conj()[:, :, None])[..., 0]      # (B, n-j-1)
        column = (low[:, j + 1:, j] - below) / root[:, None]
        low[going, j, j] = root[going]
        low[going, j + 1:, j] = column[going]
    return low, info


class Cholesky(Function):
    r"""L with A = LLᴴ from A's lower triangle (with ``upper``, U = Lᴴ from its upper one),
    and info (potrf's, per matrix).

    dA = dL Lᴴ + L dLᴴ: L⁻¹dA L⁻ᴴ = Φ + Φᴴ with Φ = L⁻¹dL lower triangular, so dL = L Φ
    with Φ = tril(L⁻¹dA L⁻ᴴ), its diagonal halved. Its adjoint (Murray 2016, torch's):
    :math:`g_A = L^{-H} M L^{-1}`, :math:`M = \tfrac12(P + \mathrm{tril}(P, -1)^H)`,
    :math:`P = \mathrm{tril}(L^H g_L)` (Hermitian for real L)."""

    @staticmethod
    def forward(ctx, a, upper, fn=None):
        xp = backend.array_module(a)
        source = mH(a) if upper else a                 # U = Lᴴ of Aᴴ's lower triangle
        try:
            low, info = xp.linalg.cholesky(source), xp.zeros(a.shape[:-2], np.int32)
            if xp.isnan(xp.diagonal(low, 0, -2, -1)).any():    # a NaN pivot: LAPACK's fails
                raise np.linalg.LinAlgError
        except np.linalg.LinAlgError:
            low, info = _cholesky_info(batched(source)[0])
            fine = info == 0
            if fine.any():
                low[fine] = xp.linalg.cholesky(batched(source)[0][fine])
            low, info = low.reshape(a.shape), info.reshape(a.shape[:-2])
        if fn is not None:
            raise_failed(fn, info, lambda i: "The factorization could not be completed "
                          "because the input is not positive-definite (the leading minor "
                          f"of order {i} is not positive-definite).")
        ctx.save_for_backward(low)
        ctx.upper = upper
        return (mH(low) if upper else low), info

    @staticmethod
    def backward(ctx, grad, _):
        low, = ctx.saved
        xp = backend.array_module(low)
        grad = mH(grad) if ctx.upper else grad
        p = xp.tril(mH(low) @ grad)
        m = 0.5 * (p + mH(xp.tril(p, -1)))
        left = solve(mH(low), m)                                         # L⁻ᴴ M
        return mH(solve(mH(low), mH(left)))                              # (L⁻ᴴ M) L⁻¹


def _copy_upper(n):
    # the matrix whose upper triangle is n's and whose lower one mirrors it (Hermitian),
    # the diagonal's imaginary part dropped
    xp = backend.array_module(n)
    upper = xp.triu(n, 1)
    return upper + mH(upper) + xp.real(xp.diagonal(n, 0, -2, -1))[..., None] * eye_like(n)


class QR(Function):
    r"""(Q, R) with A = QR, Q's columns orthonormal, R upper triangular ("reduced": Q
    (m, k), R (k, n), k = min(m, n); "complete": Q (m, m); "r": R alone, Q empty).

    For m ≥ n: C = Qᴴ dA R⁻¹ = QᴴdQ + dR R⁻¹, the sum of a skew-Hermitian matrix and an upper
    triangular one with a real diagonal, which the strict lower triangle of C (and the
    imaginary diagonal) tell apart. The adjoint: with N = g_R Rᴴ - Qᴴg_Q,
    :math:`g_A = (g_Q + Q\,\mathrm{copyu}(N)) R^{-H}`, copyu(N) the Hermitian matrix of N's
    upper triangle (real diagonal). For m < n, A = Q[X | Y] with X square: Y = QᴴA₂ adds
    A₂g_Yᴴ to g_Q, the square case gives A₁'s gradient and A₂'s is Q g_Y."""

    @staticmethod
    def forward(ctx, a, mode):
        xp = backend.array_module(a)
        if mode == "r":
            q, r = xp.zeros((0,), a.dtype), xp.linalg.qr(a, mode="r")
        else:
            q, r = xp.linalg.qr(a, mode=mode)
        ctx.save_for_backward(q, r)
        ctx.mode = mode
        return q, r

    @staticmethod
    def backward(ctx, grad_q, grad_r):
        q, r = ctx.saved
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not "
                               "computed when mode='r'. Please use linalg.qr(A, mode='reduced') "
                               "if you are going to differentiate through linalg.qr.")
        m, n = q.shape[-2], r.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        if m >= n:
            return _qr_square_grad(q, r, grad_q, grad_r)
        xp = backend.array_module(q)
        x, y, grad_y = r[..., :m], r[..., m:], grad_r[..., m:]
        grad_q = grad_q + q @ (y @ mH(grad_y))                 # A₂ g_Yᴴ, A₂ = Q Y
        left = _qr_square_grad(q, x, grad_q, grad_r[..., :m])
        return xp.concatenate([left, q @ grad_y], axis=-1)


def _qr_square_grad(q, r, grad_q, grad_r):
    # gA = (g_Q + Q copyu(g_R Rᴴ - Qᴴ g_Q)) R⁻ᴴ for R square, solved as R⁻¹ on the right
    inner = grad_q + q @ _copy_upper(grad_r @ mH(r) - mH(q) @ grad_q)      # (..., m, n)
    return mH(solve(r, mH(inner)))


# ----- eigh, SVD ------------------------------------------------------------------------------
def _unused(grad):
    # a gradient the engine filled with zeros (its output reached no loss): torch's undefined
    return not grad.any()


def eigh_input(fn, A, UPLO):
    """``A`` checked for eigh as torch checks it: square matrices, floating or complex (torch's
    dispatch error, a NotImplementedError, for others), ``UPLO`` "L" or "U" in either case;
    returns UPLO upper-cased."""
    check_matrices(fn, A, dtype=False)
    check_kernel("linalg_eigh_cpu", A)
    check_dtype(fn, A)
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


class Eigh(Function):
    r"""(eigenvalues ascending, eigenvectors V) of a Hermitian A from its ``uplo`` triangle.

    dA = V(dΛ + Ω Λ - Λ Ω)Vᴴ with Ω = VᴴdV skew-Hermitian: dλᵢ = (VᴴdAV)ᵢᵢ and Ωᵢⱼ =
    (VᴴdAV)ᵢⱼ / (λⱼ - λᵢ). The adjoint (torch's): :math:`g_A = V (\tfrac12(V^H g_V -
    g_V^H V) / E + \operatorname{diag}(g_\lambda)) V^H`, E_ij = λⱼ - λᵢ; inf or NaN for a
    repeated eigenvalue when the vectors' gradient is used, as torch's; V diag(g_λ) Vᴴ when
    only the values are. A complex loss that depends on the vectors' phases is refused."""

    @staticmethod
    def forward(ctx, a, uplo):
        values, vectors = lapack("linalg.eigh", backend.array_module(a).linalg.eigh, a,
                                 UPLO=uplo)
        ctx.save_for_backward(values, vectors)
        return values, vectors

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        values, v = ctx.saved
        return eigh_grad(values, v, grad_values,
                         None if _unused(grad_vectors) else grad_vectors)


def check_eigenvector_phases(vhgv, fn="linalg_eigh_backward"):
    """torch's refusal of a complex loss that sees the eigenvectors' phases: the diagonal of
    Vᴴg_V (an array) must be real."""
    xp = backend.array_module(vhgv)
    if vhgv.dtype.kind == "c" and not np.allclose(backend.to_numpy(
            xp.diagonal(vhgv, 0, -2, -1).imag), 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError(f"{fn}: The eigenvectors in the complex case are "
                           "specified up to multiplication by e^{i phi}. The specified loss "
                           "function depends on this quantity, so it is ill-defined.")


def eigh_grad(values, v, grad_values, grad_vectors):
    """``Eigh``'s gradient of A (``grad_vectors`` None: only the values reach the loss)."""
    xp = backend.array_module(v)
    if grad_vectors is None:
        return (v * grad_values[..., None, :]) @ mH(v)
    vhgv = mH(v) @ grad_vectors
    check_eigenvector_phases(vhgv)
    skew = 0.5 * (vhgv - mH(vhgv))
    gaps = values[..., None, :] - values[..., :, None]                  # λⱼ - λᵢ
    gaps = gaps + eye_like(gaps)                       # 1 on the diagonal: 0 / 1 there
    inner = skew / gaps
    inner = inner - xp.diagonal(inner, 0, -2, -1)[..., None] * eye_like(inner) \
        + grad_values[..., None] * eye_like(inner)
    return v @ inner @ mH(v)


class EigvalsH(Function):
    """The eigenvalues of a Hermitian A, ascending; the gradient V diag(g) Vᴴ (``Eigh``)."""

    @staticmethod
    def forward(ctx, a, uplo):
        values, vectors = lapack("linalg.eigh", backend.array_module(a).linalg.eigh, a,
                                 UPLO=uplo)
        ctx.save_for_backward(values, vectors)
        return values

    @staticmethod
    def backward(ctx, grad):
        values, v = ctx.saved
        return eigh_grad(values, v, grad, None)


class SVD(Function):
    r"""(U, S descending, Vᴴ) with A = U diag(S) Vᴴ; ``full_matrices``: U (m, m), Vᴴ (n, n).

    With k = min(m, n) and the first k columns of U and rows of Vᴴ (the rest of a full one
    gets no gradient, as torch's): UᴴdA V = Ω_U S + dS - S Ω_V, Ω = UᴴdU, VᴴdV skew-Hermitian.
    The adjoint (torch's ``svd_backward``): :math:`g_A = U (\frac{[U^H g_U] S + S [V^H g_V]}
    {E} + \operatorname{diag}(g_S) + i\frac{\mathrm{Im}\,\mathrm{diag}(U^H g_U)}{S}) V^H`
    with [X] = X - Xᴴ and E_ij = s_j² - s_i², plus (I - UUᴴ) g_U S⁻¹ Vᴴ for m > n, or
    U S⁻¹ g_Vᴴ (I - VVᴴ) for m < n. Repeated singular values give inf or NaN when U or V
    reach the loss, as torch's; only S: U diag(g_S) Vᴴ."""

    @staticmethod
    def forward(ctx, a, full_matrices):
        u, s, vh = lapack("linalg.svd", backend.array_module(a).linalg.svd, a,
                          full_matrices=full_matrices)
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def backward(ctx, grad_u, grad_s, grad_vh):
        u, s, vh = ctx.saved
        k = s.shape[-1]
        return svd_grad(u[..., :k], s, vh[..., :k, :], grad_s,
                        None if _unused(grad_u) else grad_u[..., :k],
                        None if _unused(grad_vh) else grad_vh[..., :k, :])


def check_singular_vector_phases(uhgu, vhgv, s):
    """torch's refusal of a complex loss that sees the singular vectors' common phases:
    the imaginary diagonals of [Uᴴg_U] and [Vᴴg_V] (arrays, None for a factor that reaches
    no loss) must cancel."""
    xp = backend.array_module(s)
    im_u = xp.zeros_like(s) if uhgu is None else xp.diagonal(uhgu, 0, -2, -1).imag
    im_v = xp.zeros_like(s) if vhgv is None else xp.diagonal(vhgv, 0, -2, -1).imag
    if not np.allclose(backend.to_numpy(im_u), backend.to_numpy(-im_v), rtol=1e-2, atol=1e-2):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are "
                           "specified up to multiplication by e^{i phi}. The specified "
                           "loss function depends on this phase term, making it "
                           "ill-defined.")


def svd_grad(u, s, vh, grad_s, grad_u, grad_vh):
    """``SVD``'s gradient of A from the reduced factors (``grad_u``/``grad_vh`` None: that
    factor reaches no loss)."""
    xp = backend.array_module(u)
    s_row = s[..., None, :].astype(u.dtype)                              # (..., 1, k)
    s_col = s[..., :, None].astype(u.dtype)                              # (..., k, 1)
    if grad_u is None and grad_vh is None:
        return (u * grad_s[..., None, :]) @ vh
    m, n = u.shape[-2], vh.shape[-1]
    uhgu = None if grad_u is None else mH(u) @ grad_u
    vhgv = None if grad_vh is None else vh @ mH(grad_vh)
    uhgu = None if uhgu is None else uhgu - mH(uhgu)
    vhgv = None if vhgv is None else vhgv - mH(vhgv)
    if u.dtype.kind == "c":          # the loss must not see the vectors' common phases
        check_singular_vector_phases(uhgu, vhgv, s)
    squares = s * s
    gaps = squares[..., None, :] - squares[..., :, None]                # s_j² - s_i²
    gaps = gaps + eye_like(gaps)
    if uhgu is not None and vhgv is not None:
        inner = (uhgu * s_row + s_col * vhgv) / gaps
    elif uhgu is not None:
        inner = (uhgu / gaps) * s_row
    else:
        inner = s_col * (vhgv / gaps)
    inner = inner + grad_s[..., None] * eye_like(inner)
    if u.dtype.kind == "c" and uhgu is not None:
        inner = inner + (xp.diagonal(uhgu, 0, -2, -1) / (2 * s))[..., None] * eye_like(inner)
    if m > n and grad_u is not None:                  # U's columns span only part of Cᵐ
        gusinv = grad_u / s_row
        return (u @ inner + gusinv - u @ (mH(u) @ gusinv)) @ vh
    if m < n and grad_vh is not None:
        sinvgvh = grad_vh / s_col
        return u @ (inner @ vh + sinvgvh - (sinvgvh @ mH(vh)) @ vh)
    return u @ inner @ vh


class SVDVals(Function):
    """The singular values, descending; the gradient U diag(g) Vᴴ (``SVD``), U and Vᴴ
    computed only when a gradient will be asked for."""

    @staticmethod
    def forward(ctx, a):
        xp = backend.array_module(a)
        if not ctx.needs_input_grad[0]:
            return lapack("linalg.svd", xp.linalg.svd, a, compute_uv=False)
        u, s, vh = lapack("linalg.svd", xp.linalg.svd, a, full_matrices=False)
        ctx.save_for_backward(u, s, vh)
        return s

    @staticmethod
    def backward(ctx, grad):
        u, s, vh = ctx.saved
        return svd_grad(u, s, vh, grad, None, None)


# ----- pseudoinverse, matrix exponential ------------------------------------------------------
def pinv_array(a, atol, rtol, hermitian):
    """A⁺ through the SVD (``hermitian``: eigh of the lower triangle), singular values (|λ|)
    at most max(atol, rtol·σ₁) dropped, the tolerances float64 (broadcast over the batch)."""
    xp = backend.array_module(a)
    if hermitian:
        values, u = lapack("linalg.eigh", xp.linalg.eigh, a)
        size = xp.abs(values)
        largest = size.max(-1, keepdims=True) if size.shape[-1] else size[..., :1]
        v_h, s = mH(u), values
    else:
        u, s, v_h = lapack("linalg.svd", xp.linalg.svd, a, full_matrices=False)
        size, largest = s, s[..., :1]
    tol = threshold(atol[..., None], rtol[..., None], largest)                    # (..., 1)
    inverse = xp.where(size.astype(np.float64) > tol, 1 / xp.where(s == 0, 1, s), 0)
    return (mH(v_h) * inverse[..., None, :].astype(a.dtype)) @ mH(u)


def threshold(atol, rtol, largest):
    """max(atol, rtol·σ₁), float64: the singular values at most this count as zero."""
    return backend.array_module(largest).maximum(atol, rtol * largest.astype(np.float64))


def tolerances(fn, A, atol, rtol):
    """torch's (atol, rtol) as float64 arrays over A's batch: atol 0 if not given; rtol
    eps·max(m, n) if not given, 0 where a given atol is > 0; shapes that do not broadcast
    with A's batch raise torch's RuntimeError."""
    xp = A.xp

    def array(name, value):
        value = value._array if hasattr(value, "_array") else xp.asarray(value)
        if value.dtype.kind == "c":
            raise RuntimeError(f"{fn}: {name} tensor of complex type is not supported.")
        return value.astype(np.float64)
    default = float(dtypes.finfo(dtypes.real_of(A.dtype)).eps) * max(A.shape[-2:])
    given = None if atol is None else array("atol", atol)
    atol = xp.zeros(()) if given is None else given
    if rtol is not None:
        rtol = array("rtol", rtol)
    else:
        rtol = xp.asarray(default) if given is None else xp.where(given > 0, 0.0, default)
    broadcast_shape(fn, atol.shape, rtol.shape, A.shape[:-2])
    return atol, rtol


def check_lapack_input(fn, A):
    """``A`` of 2 or more dims and of float32, float64 or a complex dtype, else pinv's
    RuntimeError, in torch's words."""
    check_tensor(fn, A)
    if A.ndim < 2 or not (A.dtype in (np.float32, np.float64) or A.dtype.kind == "c"):
        raise RuntimeError(f"{fn}({torch_name(A.dtype)}{{{list(A.shape)}}}): expected a "
                           "tensor with 2 or more dimensions of float, double, cfloat or "
                           "cdouble types")


def singular_arrays(A, hermitian=False):
    # |eigenvalues| (hermitian) or singular values of A's array, descending, no graph
    xp = A.xp
    if hermitian:
        return -xp.sort(-xp.abs(lapack("linalg.eigh", xp.linalg.eigvalsh, A._array)), axis=-1)
    return lapack("linalg.svd", xp.linalg.svd, A._array, compute_uv=False)


def numerical_rank(s, atol, rtol):
    # how many of s (..., k), descending, exceed max(atol, rtol·s₁): int64 (...)
    xp = backend.array_module(s)
    largest = s[..., 0] if s.shape[-1] else xp.zeros(s.shape[:-1], s.dtype)
    tol = threshold(atol, rtol, largest)                                         # (...)
    return (s.astype(np.float64) > tol[..., None]).sum(-1).astype(np.int64)


class Pinv(Function):
    r"""The pseudoinverse A⁺ (``pinv_array``).

    Its derivative at a fixed rank (Golub and Pereyra 1973): dA⁺ = -A⁺dA A⁺ + A⁺A⁺ᴴdAᴴ(I -
    AA⁺) + (I - A⁺A)dAᴴA⁺ᴴA⁺, whose adjoint is torch's ``pinv_backward``:
    :math:`g_A = -A^{+H} g A^{+H} + (I - AA^+) g^H A^+ A^{+H} + A^{+H} A^+ g^H (I - A^+A)`,
    its products grouped by the smaller of m and n, as torch's."""

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        out = pinv_array(a, atol, rtol, hermitian)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, p = ctx.saved
        ph, gh = mH(p), mH(grad)
        if a.shape[-2] <= a.shape[-1]:
            k = gh @ p
            kph = k @ ph
            return -mH(p @ k) + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a)
        k = p @ gh
        phk = ph @ k
        return -mH(k @ p) + (gh - a @ k) @ p @ ph + phk - phk @ p @ a


# divided by b₀, so that V = I and exp(0) = I exactly
_PADE13 = tuple(b / 64764752532480000. for b in (
    64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
    129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920., 40840800.,
    960960., 16380., 182., 1.))
_THETA13 = 5.371920351148152                # the 1-norm up to which degree 13 is exact


def expm(a):
    """exp(A) of each matrix: the [13/13] Padé approximant after scaling A by 2⁻ˢ so that
    its 1-norm is at most θ₁₃, then s squarings (Higham 2005), s per matrix."""
    xp = backend.array_module(a)
    norm = xp.abs(a).sum(-2).max(-1) if a.size else xp.zeros(a.shape[:-2])
    with backend.silent_floats():                                   # log2(0) is -inf
        s = xp.ceil(xp.log2(norm / _THETA13))
    s = xp.where(xp.isfinite(s) & (s > 0), s, 0).astype(np.int64)     # NaN, inf: none
    a = a / (2.0 ** s)[..., None, None].astype(a.dtype)
    b, eye = _PADE13, eye_like(a)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    out = solve(v - u, v + u)
    for k in range(int(s.max()) if s.size else 0):
        out = xp.where((k < s)[..., None, None], out @ out, out)
    return out


class MatrixExp(Function):
    r"""exp(A) (``expm``). Its adjoint is the Fréchet derivative at Aᴴ:
    :math:`g_A = \left[\exp\begin{pmatrix} A^H & g \\ 0 & A^H \end{pmatrix}\right]_{12}`,
    the top-right block (torch's)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return expm(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved
        xp, n = backend.array_module(a), a.shape[-1]
        ah = xp.broadcast_to(mH(a), grad.shape)
        block = xp.concatenate([xp.concatenate([ah, grad], -1),
                                xp.concatenate([xp.zeros_like(ah), ah], -1)], -2)
        return expm(block)[..., :n, n:]


# ----- the Tensor methods ---------------------------------------------------------------------
def det(input):
    """``torch.det``, ``x.det()``: the determinant of each matrix (``Det``).

    Shape: input (..., n, n) -> (...).

    Example:
        >>> mg.tensor([[2.0, 1.0], [1.0, 3.0]]).det()                    # tensor(5.)
    """
    return Det.apply(check_matrices("linalg.det", input, kernel="lu_cpu"))


def slogdet(input):
    """``torch.slogdet``, ``x.slogdet()``: ``slogdet(sign, logabsdet)`` of each matrix, sign
    ±1 (complex: of modulus 1; 0 for a singular matrix) and log|det| (``SlogDet``).

    Shape: input (..., n, n) -> (...) each.

    Example:
        >>> mg.tensor([[-2.0, 0.0], [0.0, 3.0]]).slogdet()          # sign -1, log 6
    """
    return return_types.slogdet(*SlogDet.apply(check_matrices("linalg.slogdet", input)))


def logdet(input):
    """``torch.logdet``, ``x.logdet()``: log det of each matrix; NaN for a negative real
    determinant, -inf for a singular matrix (complex: log(sign) + log|det|).

    Shape: input (..., n, n) -> (...).

    Example:
        >>> mg.eye(3).mul(2.0).logdet()                               # 3 log 2
    """
    sign, logabsdet = SlogDet.apply(check_matrices("logdet", input))
    if input.dtype.kind == "c":        # singular: log 0 = -inf, its phase unknown (torch's NaN)
        return (sign.log() + logabsdet).masked_fill(sign._array == 0, complex(-math.inf,
                                                                               math.nan))
    return logabsdet.masked_fill(sign._array == -1, float("nan"))


def inverse(input):
    """``torch.inverse``, ``x.inverse()``: A⁻¹ of each matrix (``linalg.inv``); a singular
    one raises ``LinAlgError`` naming it.

    Shape: input (..., n, n) -> (..., n, n).

    Example:
        >>> mg.tensor([[2.0, 0.0], [0.0, 4.0]]).inverse()            # diag(0.5, 0.25)
    """
    return Inverse.apply(check_matrices("linalg.inv", input), fn="linalg.inv")[0]


def cholesky(input, upper=False):
    """``torch.cholesky``, ``x.cholesky(upper=False)``: ``linalg.cholesky(input,
    upper=upper)``, L with A = LLᴴ (U = Lᴴ with ``upper``).

    Shape: input (..., n, n) -> (..., n, n).

    Example:
        >>> mg.tensor([[4.0, 2.0], [2.0, 5.0]]).cholesky()          # [[2, 0], [1, 2]]
    """
    check_matrices("linalg.cholesky", input, dtype=False)
    check_kernel("cholesky_cpu", input)              # torch's method dispatches first
    return Cholesky.apply(input, upper=bool(upper), fn="linalg.cholesky")[0]


def qr(input, some=True):
    """``torch.qr``, ``x.qr(some=True)``: ``qr(Q, R)``, ``linalg.qr`` in mode "reduced"
    (``some``) or "complete".

    Shape: input (..., m, n) -> Q (..., m, k), R (..., k, n), k = min(m, n) (m with
    ``some=False``).

    Example:
        >>> q, r = mg.randn(4, 3).qr()
    """
    check_matrices("linalg.qr", input, square=False, kernel="geqrf_cpu")
    return return_types.qr(*QR.apply(input, mode="reduced" if some else "complete"))


def svd(input, some=True, compute_uv=True):
    """``torch.svd``, ``x.svd()``: ``svd(U, S, V)`` with A = U diag(S) Vᴴ: V, not Vᴴ
    (``linalg.svd``'s); ``some=False``: U (m, m), V (n, n); ``compute_uv=False``: S, with
    U and V zeros of (m, m), (n, n).

    Shape: input (..., m, n) -> U (..., m, k), S (..., k), V (..., n, k), k = min(m, n).

    Example:
        >>> u, s, v = mg.randn(4, 3).svd()                    # u @ s.diag() @ v.mT
    """
    check_matrices("linalg.svd", input, square=False, kernel="linalg_svd_cpu")
    if not compute_uv:
        xp, (m, n) = input.xp, input.shape[-2:]
        zeros = [constant(xp.zeros(input.shape[:-2] + (d, d), input.dtype)) for d in (m, n)]
        return return_types.svd(zeros[0], SVDVals.apply(input), zeros[1])
    u, s, vh = SVD.apply(input, full_matrices=not some)
    return return_types.svd(u, s, vh.mT.conj() if vh.dtype.kind == "c" else vh.mT)


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``, ``x.pinverse(rcond=1e-15)``: ``linalg.pinv(input, rtol=rcond)``,
    the singular values up to rcond·σ₁ dropped.

    Shape: input (..., m, n) -> (..., n, m).

    Example:
        >>> mg.ones(2, 3).pinverse()                                  # every entry 1/6
    """
    check_matrices("linalg.pinv", input, square=False)
    xp = input.xp
    return Pinv.apply(input, atol=xp.zeros(()), rtol=xp.asarray(float(rcond)),
                      hermitian=False)


def matrix_power(input, n):
    """``torch.matrix_power``, ``x.matrix_power(n)``: Aⁿ by repeated squaring (torch's order
    of products), A⁰ the identity (its gradient zero), a negative n a power of A⁻¹; integer
    matrices for n >= 0, bool ones for n = 0 and 1 (torch's matmul takes no bool).

    Shape: input (..., m, m) -> (..., m, m).

    Example:
        >>> mg.tensor([[1.0, 1.0], [0.0, 1.0]]).matrix_power(3)      # [[1, 3], [0, 1]]
    """
    check_matrices("linalg.matrix_power", input, dtype=False)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"linalg_matrix_power(): argument 'n' must be int, not "
                        f"{type(n).__name__}")
    if n == 0:
        eye = constant(eye_like(input._array).copy())
        return input.masked_fill(True, 0) + eye if input.requires_grad else eye
    if n < 0:
        input, n = inverse(input), -n
    if n == 1:
        return input.clone()
    if input.dtype == np.bool_:                      # torch's matmul takes no bool
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if n <= 3:
        square = linalg.matmul(input, input)
        return square if n == 2 else linalg.matmul(square, input)
    power = result = None
    while n:                                  # the bits of n, lowest first
        n, bit = divmod(n, 2)
        power = input if power is None else linalg.matmul(power, power)
        if bit:
            result = power if result is None else linalg.matmul(result, power)
    return result


def matrix_exp(input):
    """``torch.matrix_exp``, ``x.matrix_exp()``: exp(A) = Σ Aᵏ/k! of each matrix
    (``MatrixExp``).

    Shape: input (..., n, n) -> (..., n, n).

    Example:
        >>> mg.zeros(2, 2).matrix_exp()                                   # the identity
    """
    return MatrixExp.apply(check_matrices("linalg.matrix_exp", input))


"""Matrix products, mg.linalg and mg.fft against PyTorch at their corners: the error classes
of products (shapes that do not multiply, bool operands, complex scales), empty batches
through solve and LU, a singular matrix only LAPACK's rounding sees, ``linalg.eig``
(A V = V diag(w), unit-norm vectors, gauge-invariant gradients), ``irfft``
of an empty spectrum, ``rfftfreq`` of a negative n and the order of ``ihfftn``'s checks."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def rand(shape, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * rng.standard_normal(shape)
    return data.astype(dtype)


def values(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


def both(call, *arrays):
    """``call(lib, *tensors)`` for torch and for mg: (theirs, ours), or the exceptions."""
    out = []
    for lib in (torch, mg):
        tensors = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
        try:
            out.append(call(lib, *tensors))
        except Exception as error:                        # noqa: BLE001 (compared below)
            out.append(error)
    return out


def same(call, *arrays, rtol=1e-7, atol=1e-9):
    theirs, ours = both(call, *arrays)
    if isinstance(theirs, Exception):
        for builtin in (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError):
            if isinstance(theirs, builtin):
                assert isinstance(ours, builtin), (theirs, ours)
        return
    assert not isinstance(ours, Exception), ours
    theirs, ours = (theirs, ours) if isinstance(theirs, tuple) else ((theirs,), (ours,))
    for t, o in zip(theirs, ours):
        assert tuple(o.shape) == tuple(t.shape)
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(values(o), values(t), rtol=rtol, atol=atol)


# ----- products: torch's error classes ----------------------------------------------------
@pytest.mark.parametrize("shapes", [((2, 3), (4, 5)), ((3,), (4,)), ((3, 2, 4), (2, 4, 2)),
                                    ((3, 4, 4), (0, 4, 2))])
def test_matmul_shape_errors_are_runtime_errors(shapes):
    same(lambda L, a, b: L.matmul(a, b), *(rand(s) for s in shapes))
    same(lambda L, a, b: a @ b, *(rand(s) for s in shapes))


@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((3,), (3,)), ((2, 3), (3, 4)),
                                    ((2, 0), (0, 2)), ((0, 2), (2, 3)), ((3, 0, 2), (2,)),
                                    ((2, 2, 2), (2, 2))])
def test_matmul_of_bool(shapes):
    a, b = (np.ones(s, bool) for s in shapes)
    same(lambda L, a, b: L.matmul(a, b), a, b)


@pytest.mark.parametrize("fn, shapes", [("mm", ((2, 0), (0, 2))), ("mm", ((0, 2), (2, 3))),
                                       ("mm", ((2, 2), (2, 2))), ("bmm", ((0, 2, 2), (0, 2, 2))),
                                       ("bmm", ((1, 2, 0), (1, 0, 2))),
                                       ("bmm", ((1, 2, 2), (1, 2, 2))), ("mv", ((2, 0), (0,))),
                                       ("mv", ((2, 2), (2,))), ("dot", ((0,), (0,)))])
def test_matrix_products_of_bool(fn, shapes):
    # torch refuses a bool product only where it computes something (dot: always)
    a, b = (np.ones(s, bool) for s in shapes)
    same(lambda L, a, b: getattr(L, fn)(a, b), a, b)


def test_outer_of_matrices_and_cross_of_bool():
    same(lambda L, a, b: L.outer(a, b), rand((2, 3)), rand(3))
    same(lambda L, a, b: L.linalg.cross(a, b), np.ones((2, 3), bool), np.ones((2, 3), bool))
    same(lambda L, a, b: L.cross(a, b, dim=0), np.ones((3, 2), bool), np.ones((3, 2), bool))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int64])
@pytest.mark.parametrize("scales", [dict(alpha=1j), dict(beta=2j, alpha=0.5 - 1j),
                                    dict(beta=0j, alpha=True)])
def test_complex_scales_of_addmm(dtype, scales):
    same(lambda L, c, a, b: L.addmm(c, a, b, **scales),
         rand((2, 2), 1, dtype), rand((2, 3), 2, dtype), rand((3, 2), 3, dtype))
    same(lambda L, c, a, b: L.baddbmm(c, a, b, **scales),
         rand((2, 2), 1, dtype), rand((1, 2, 3), 2, dtype), rand((1, 3, 2), 3, dtype))


# ----- linalg: empty batches, LU without pivoting, singular matrices ------------------------
@pytest.mark.parametrize("a_shape, b_shape", [((3, 3), (2, 0, 3, 0)), ((3, 3), (2, 0, 3, 2)),
                                              ((2, 1, 3, 3), (2, 0, 3, 1))])
def test_solve_with_an_empty_batch_of_b(a_shape, b_shape):
    a = rand(a_shape) + 3 * np.eye(3)
    same(lambda L, a, b: L.linalg.solve_ex(a, b), a, rand(b_shape, 1))
    same(lambda L, a, b: L.linalg.solve(a, b), a, rand(b_shape, 1))


@pytest.mark.parametrize("shape", [(0, 3, 0), (3, 0), (0, 3), (2, 0, 5), (0, 1, 4, 0)])
@pytest.mark.parametrize("pivot", [True, False])
def test_lu_of_empty_matrices(shape, pivot):
    same(lambda L, a: L.linalg.lu(a, pivot=pivot), rand(shape))
    same(lambda L, a: L.linalg.lu_factor_ex(a, pivot=pivot), rand(shape))


def test_lu_without_pivoting_refused_for_a_matrix():
    same(lambda L, a: L.linalg.lu(a, pivot=False), rand((3, 3)))


def test_lu_gradient_of_an_empty_batch():
    for lib in (torch, mg):
        a = lib.zeros(3, 2, 0, 1, dtype=lib.float64, requires_grad=True)
        P, L_, U = lib.linalg.lu(a)
        (L_.sum() + U.sum()).backward()
        assert tuple(a.grad.shape) == (3, 2, 0, 1)


@pytest.mark.parametrize("fn", ["inv_ex", "inv", "solve"])
def test_a_zero_pivot_only_lapack_sees_is_not_an_error(fn):
    # float64 [[1, 2, 3], [4, 5, 6], [7, 8, 9]]: getrf's pivots are tiny, not zero
    a = np.arange(1.0, 10.0).reshape(3, 3)
    call = {"inv_ex": lambda L, a: L.linalg.inv_ex(a).info,
            "inv": lambda L, a: L.isfinite(L.linalg.inv(a)).all(),
            "solve": lambda L, a: L.isfinite(L.linalg.solve(a, L.ones(3, 1,
                                                                      dtype=a.dtype))).all()}
    same(call[fn], a)


SINGULAR_COMPLEX = [np.zeros((1, 1)), np.zeros((2, 2)), np.array([[1, 2], [2, 4]]),
                    np.array([[1j, 2], [2j, 4]]), np.zeros((2, 1, 1))]


@pytest.mark.parametrize("a", SINGULAR_COMPLEX)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("call", [
    lambda L, a: L.logdet(a), lambda L, a: L.linalg.inv_ex(a),
    lambda L, a: L.linalg.solve_ex(a, L.ones(*a.shape[:-1], 2, dtype=a.dtype)),
    lambda L, a: L.linalg.solve_triangular(a, L.ones(*a.shape[:-1], 3, dtype=a.dtype),
                                           upper=True),
    lambda L, a: L.linalg.solve_triangular(a, L.ones(*a.shape[:-2], 3, a.shape[-1],
                                                     dtype=a.dtype), upper=False, left=False)])
def test_complex_zero_pivots_give_nan(a, dtype, call):
    same(call, a.astype(dtype), rtol=1e-6)


# ----- linalg.eig ------------------------------------------------------------------------
EIG_SHAPES = [(0, 0), (1, 1), (3, 3), (2, 4, 4), (0, 2, 2), (2, 0, 3, 3)]


@pytest.mark.parametrize("shape", EIG_SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_eig_decomposes(shape, dtype):
    a = rand(shape, 4, dtype)
    (w_t, v_t), (w, v) = both(lambda L, a: L.linalg.eig(a), a)
    assert (str(w.dtype), str(v.dtype)) == (str(w_t.dtype), str(v_t.dtype))
    assert tuple(w.shape) == tuple(w_t.shape) and tuple(v.shape) == tuple(v_t.shape)
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-10
    w, v = values(w), values(v)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * 10)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol)
    if dtype in (np.float64, np.complex128):        # one LAPACK routine: one order
        np.testing.assert_allclose(w, values(w_t), atol=tol)


def _spectral(lib, w, v):
    # V f(Λ) V⁻¹ and the size of each vector's components: blind to each vector's phase
    f = (w * (0.3 + 0.1j)).exp()
    m = (v * f.unsqueeze(-2)) @ lib.linalg.inv(v)
    weights = lib.arange(v.shape[-1], dtype=v.real.dtype)
    return m.real.sum() + 0.5 * m.imag.sum() + (v.abs() ** 2 * weights).sum() \
        + (w * w).real.sum()


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("loss", ["spectral", "values"])
def test_eig_gradient(shape, dtype, loss):
    a = rand(shape, 5, dtype)
    grads = []
    for lib in (torch, mg):
        x = lib.tensor(a, requires_grad=True)
        w, v = lib.linalg.eig(x)
        out = _spectral(lib, w, v) if loss == "spectral" else (w * w).real.sum() + w.imag.sum()
        out.backward()
        grads.append(values(x.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-8)


def test_eig_refuses_a_loss_of_the_phases_and_bad_input():
    a = rand((3, 3), 6, np.complex128)
    for lib in (torch, mg):
        x = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
            lib.linalg.eig(x).eigenvectors.real.sum().backward()
    same(lambda L, a: L.linalg.eig(a), np.full((2, 2), np.nan))
    same(lambda L, a: L.linalg.eig(a), np.ones((2, 3)))
    same(lambda L, a: L.linalg.eig(a), np.ones((2, 2), np.int64))
    same(lambda L, a: L.linalg.eig(a), np.ones(2))
    for lib in (torch, mg):
        with pytest.raises(NotImplementedError), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)          # torch's ComplexHalf note
            lib.linalg.eigvals(lib.ones(2, 2, dtype=lib.float16))


def test_eig_of_a_repeated_eigenvalue():
    for loss in (lambda w, v: (v.abs() ** 2).sum(), lambda w, v: w.real.sum()):
        grads = []
        for lib in (torch, mg):
            x = lib.eye(3, dtype=lib.float64, requires_grad=True)
            loss(*lib.linalg.eig(x)).backward()
            grads.append(values(x.grad))
        np.testing.assert_array_equal(np.isnan(grads[1]), np.isnan(grads[0]))
        np.testing.assert_allclose(grads[1], grads[0])


# ----- fft ------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda L, x: L.fft.irfft(x, n=4), lambda L, x: L.fft.hfft(x, n=5),
    lambda L, x: L.fft.irfft2(x, s=(-1, 2)), lambda L, x: L.fft.irfftn(x, s=(1, 3))])
def test_irfft_of_an_empty_spectrum_is_zero(call):
    same(call, np.zeros((2, 1, 0), np.complex64))
    same(call, np.zeros((3, 0), np.complex128))


def test_irfft_of_an_empty_spectrum_gradient():
    for lib in (torch, mg):
        x = lib.zeros(3, 0, dtype=lib.complex128, requires_grad=True)
        lib.fft.irfft(x, n=4).sum().backward()
        assert tuple(x.grad.shape) == (3, 0)


@pytest.mark.parametrize("n", [-4, -3, -2, -1, 0, 1, 5])
@pytest.mark.parametrize("d", [1.0, 0.0, -0.5])
def test_fftfreq_of_small_and_negative_n(n, d):
    same(lambda L: L.fft.rfftfreq(n, d))
    same(lambda L: L.fft.fftfreq(n, d))
    same(lambda L: L.fft.rfftfreq(n, d, dtype=L.float64))


@pytest.mark.parametrize("kwargs", [dict(dim=(-2, -1)), dict(norm="bad"), dict(s=(0,)),
                                    dict()])
@pytest.mark.parametrize("fn", ["ihfftn", "ihfft2", "rfftn", "rfft2"])
def test_order_of_checks_of_real_input_transforms(fn, kwargs):
    same(lambda L, x: getattr(L.fft, fn)(x, **kwargs), rand(4, 7, np.complex128))


# ----- norms: the order's and the dtype's errors -------------------------------------------------
@pytest.mark.parametrize("call", [lambda L, x: L.linalg.vector_norm(x, 2j),
                                  lambda L, x: L.linalg.norm(x, 2j),
                                  lambda L, x: L.norm(x, p=1j),
                                  lambda L, x: L.dist(x, x, p=2j),
                                  lambda L, x: L.cdist(x[None], x[None], p=2j),
                                  lambda L, x: L.linalg.vector_norm(x, L.tensor(2j)),
                                  lambda L, x: L.linalg.matrix_norm(x[None], None)])
def test_norm_order_errors(call):
    same(call, rand(3))


@pytest.mark.parametrize("shape", [(2, 3), (0, 3)])
@pytest.mark.parametrize("ord", ["nuc", 2, -2, "fro", 1, -np.inf])
def test_half_matrix_norms(shape, ord):
    same(lambda L, x: L.linalg.matrix_norm(x, ord), np.ones(shape, np.float16), rtol=1e-3)
    same(lambda L, x: L.linalg.matrix_norm(x, ord, dtype=L.float32),
         np.ones(shape, np.float16), rtol=1e-3)


@pytest.mark.parametrize("x", [np.array([1.0, 2.0, 3.0]), np.array([1, 2]),
                               np.array([True, False]), np.array([]), np.array([1 + 2j, 3]),
                               np.ones((2, 2)), np.array(2.0)])
@pytest.mark.parametrize("kwargs", [{}, dict(N=0), dict(N=1), dict(N=4, increasing=True),
                                    dict(N=-1)])
def test_torch_vander(x, kwargs):
    same(lambda L, x: L.vander(x, **kwargs), x)


# ----- geqrf, orgqr, ormqr ------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 3), (0, 3), (2, 0, 3), (3, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_geqrf_orgqr_ormqr(shape, dtype):
    a = rand(shape, 7, dtype)
    same(lambda L, a: L.geqrf(a), a, rtol=1e-4, atol=1e-5)
    if shape[-2] >= shape[-1]:
        same(lambda L, a: L.orgqr(*L.geqrf(a)), a, rtol=1e-4, atol=1e-5)
    for left in (True, False):
        for transpose in (False, True):
            c = rand(shape[:-2] + ((shape[-2], 2) if left else (2, shape[-2])), 8, dtype)
            same(lambda L, a, c, left=left, transpose=transpose: L.ormqr(
                *L.geqrf(a), c, left=left, transpose=transpose), a, c, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("other_shape", [(2, 4, 2), (3, 4, 2), (1, 4, 2)])
def test_ormqr_refuses_other_batch_dims(other_shape):
    a = rand((2, 4, 3), 9)
    same(lambda L, a, c: L.ormqr(*L.geqrf(a), c), a, rand(other_shape, 10))
    same(lambda L, a, c: L.ormqr(*L.geqrf(a[0]), c), a, rand(other_shape, 10))


def test_geqrf_orgqr_ormqr_methods():
    a, c = rand((4, 3), 11), rand((4, 2), 12)
    same(lambda L, a: a.geqrf(), a)
    same(lambda L, a: a.geqrf().a.orgqr(a.geqrf().tau), a)
    same(lambda L, a, c: a.geqrf().a.ormqr(a.geqrf().tau, c, True, True), a, c)


def test_geqrf_has_no_gradient_and_ormqr_has_one():
    for lib in (torch, mg):
        with pytest.raises(NotImplementedError):
            lib.geqrf(lib.ones(3, 2, dtype=lib.float64, requires_grad=True)).a.sum().backward()
        with pytest.raises(RuntimeError):
            lib.geqrf(lib.ones(2, 2, dtype=lib.complex64, requires_grad=True))
    same(lambda L, x: L.geqrf(x), np.ones(3))
    same(lambda L, x: L.geqrf(x), np.ones((2, 2), np.int64))
    grads = []
    for lib in (torch, mg):
        inputs = [lib.tensor(rand(s, i), requires_grad=True)
                  for i, s in enumerate([(4, 3), (3,), (4, 2)])]
        (lib.ormqr(*inputs, transpose=True) ** 2).sum().backward()
        grads.append([values(t.grad) for t in inputs])
    for ours, theirs in zip(grads[1], grads[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)

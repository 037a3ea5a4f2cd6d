"""mg.linalg at the corners, against PyTorch: matrices holding inf or NaN (inverses, solves,
det, slogdet and their gradients), the gradient of lstsq's residuals, the error classes of
half precision inputs (torch's dispatch errors), argument spellings torch takes (UPLO in
lower case, a bool norm order), tolerances that do not broadcast, casts, and exp(0)."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm import linalg as LA

NAN, INF = float("nan"), float("inf")


def rand(shape, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    return data + 1j * rng.standard_normal(shape) if complex_ else data


def values(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


def same_values(call, *arrays, rtol=1e-12):
    """``call(lib, *tensors)`` (a tensor or a tuple) gives torch's values and dtypes, inf and
    NaN in the same places (``rtol=0``: every bit)."""
    ours = call(mg, *(mg.tensor(a) for a in arrays))
    theirs = call(torch, *(torch.tensor(a) for a in arrays))
    ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == str(t.dtype)
        np.testing.assert_allclose(values(o), values(t), rtol=rtol, atol=0)


def same_gradients(loss, *arrays, atol=1e-10):
    """The gradient of ``loss(lib, *tensors)`` into every input is torch's."""
    mine = [mg.tensor(a, requires_grad=True) for a in arrays]
    torchs = [torch.tensor(a, requires_grad=True) for a in arrays]
    loss(mg, *mine).backward()
    loss(torch, *torchs).backward()
    for m, t in zip(mine, torchs):
        np.testing.assert_allclose(m.grad.numpy(), values(t.grad), atol=atol, rtol=0)


def same_error(call):
    """``call(lib)`` raises in torch, and ours the same class (torch's LinAlgError is ours)."""
    with pytest.raises(Exception) as expected:          # noqa: PT011 (torch's class)
        call(torch)
    kind = LA.LinAlgError if expected.type.__name__ == "_LinAlgError" else expected.type
    with pytest.raises(kind):
        call(mg)


NON_FINITE = np.array([[[NAN, 1.0], [1.0, 1.0]], [[INF, 0.0], [0.0, 0.0]],
                       [[1.0, NAN], [0.0, 1.0]], [[NAN, 0.0], [0.0, 0.0]],
                       [[INF, 1.0], [1.0, 1.0]], [[-INF, 0.0], [0.0, 2.0]]])


# ----- inf and NaN ----------------------------------------------------------------------------
def test_inverses_and_solves_of_a_nan_matrix_give_nan_as_torch():
    # a NaN pivot: LAPACK's solve fails, torch's gives NaN and info 0
    batch = np.stack([NON_FINITE[0], [[1.0, 2.0], [2.0, 4.0]], np.eye(2)])
    ones = np.ones((3, 2))
    same_values(lambda L, a: tuple(L.linalg.inv_ex(a)), batch)
    same_values(lambda L, a, b: tuple(L.linalg.solve_ex(a, b)), batch, ones)
    for a in NON_FINITE[[0, 2, 4]]:                     # not singular to torch
        same_values(lambda L, t: L.linalg.inv(t), a)
        same_values(lambda L, t, b: L.linalg.solve(t, b), a, ones[0])
        same_values(lambda L, t: L.linalg.matrix_power(t, -2), a)
        for p in ("fro", 1, -1, INF, -INF):
            same_values(lambda L, t, p=p: L.linalg.cond(t, p), a)


@pytest.mark.parametrize("a", NON_FINITE)
def test_det_slogdet_logdet_of_non_finite_matrices_as_torch(a):
    # NumPy answers 0 (and -inf) at a zero pivot whatever the matrix holds; torch NaN
    for dtype in (np.float64, np.complex128, np.float32):
        a_typed = np.asarray(a, dtype=dtype)
        same_values(lambda L, t: L.linalg.det(t), a_typed)
        same_values(lambda L, t: tuple(L.linalg.slogdet(t)), a_typed)
        same_values(lambda L, t: t.logdet(), a_typed)
    for loss in (lambda L, t: L.linalg.det(t), lambda L, t: L.linalg.slogdet(t).logabsdet):
        ours, theirs = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        loss(mg, ours).backward()                 # no SVD or LAPACK error: torch's inf, NaN
        loss(torch, theirs).backward()
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


# ----- lstsq ----------------------------------------------------------------------------------
@pytest.mark.parametrize("driver", ["gels", "gelsd", "gelss"])
def test_lstsq_residuals_carry_torchs_gradient(driver):
    def loss(L, a, b):
        result = L.linalg.lstsq(a, b, driver=driver)
        return (result.residuals * result.residuals).sum() + result.solution.abs().sum()
    same_gradients(loss, rand((5, 3), 1), rand((5, 2), 2))
    same_gradients(loss, rand((1, 5, 3), 3), rand((4, 5), 4)[:, :, None])    # broadcast
    same_gradients(loss, rand((2, 5, 3), 5), rand((2, 5), 6))                 # vectors
    same_gradients(loss, rand((5, 3), 7, True), rand((5, 2), 8, True))
    result = LA.lstsq(mg.tensor(rand((5, 3), 1)), mg.tensor(rand((5, 2), 2)), driver=driver)
    assert result.residuals.requires_grad is False          # no input asked for a gradient


def test_lstsq_residuals_of_an_infinite_b_are_nan():
    a, b = rand((5, 3), 9), rand((5, 2), 10)
    b[0, 0] = INF
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = LA.lstsq(mg.tensor(a), mg.tensor(b), driver="gelsd").residuals
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver="gelsd").residuals
    assert np.isnan(ours[0].item()) and np.isnan(theirs[0].item())


def test_lstsq_gradient_where_rcond_drops_singular_values():
    # torch's backward uses pinv(A) at its default tolerance (1/0.1 in its gradient); the
    # gradient here is that of the value, pinv(A, rtol=rcond) @ B: the documented difference
    a, b = np.array([[1.0, 0.0], [0.0, 0.1], [0.0, 0.0]]), np.ones((3, 1))
    x, y = mg.tensor(a, requires_grad=True), mg.tensor(a, requires_grad=True)
    LA.lstsq(x, mg.tensor(b), rcond=0.5, driver="gelsd").solution.sum().backward()
    (LA.pinv(y, rtol=0.5) @ mg.tensor(b)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), atol=1e-15)
    t = torch.tensor(a, requires_grad=True)
    torch.linalg.lstsq(t, torch.tensor(b), rcond=0.5, driver="gelsd").solution.sum().backward()
    assert np.abs(t.grad.numpy()).max() == pytest.approx(100) and np.abs(x.grad.numpy()).max() <= 1
    same_gradients(lambda L, a, b: L.linalg.lstsq(a, b, rcond=0.05).solution.sum(), a, b)


# ----- error classes, spellings, tolerances ---------------------------------------------------
HALF_ERRORS = [
    lambda L: L.linalg.det(L.eye(2, dtype=L.float16)),            # "lu_cpu": NotImplementedError
    lambda L: L.eye(2, dtype=L.bfloat16).det(),
    lambda L: L.linalg.solve(L.eye(2, dtype=L.float16), L.ones(2, 1, dtype=L.float16)),
    lambda L: L.linalg.solve_ex(L.eye(2, dtype=L.float16), L.ones(2, 1, dtype=L.float16)),
    lambda L: L.linalg.cholesky(L.eye(2, dtype=L.float16)),
    lambda L: L.linalg.cholesky_ex(L.eye(2, dtype=L.float16)),
    lambda L: L.eye(2, dtype=L.float16).cholesky(),
    lambda L: L.eye(2, dtype=L.int64).cholesky(),                 # the method dispatches first
    lambda L: L.linalg.cholesky(L.eye(2, dtype=L.int64)),         # a RuntimeError
    lambda L: L.linalg.qr(L.eye(2, dtype=L.float16)),
    lambda L: L.eye(2, dtype=L.float16).qr(),
    lambda L: L.linalg.svd(L.eye(2, dtype=L.float16)),
    lambda L: L.linalg.svdvals(L.eye(2, dtype=L.bfloat16)),
    lambda L: L.eye(2, dtype=L.float16).svd(),
    lambda L: L.linalg.cond(L.eye(2, dtype=L.float16)),
    lambda L: L.linalg.cond(L.eye(2, dtype=L.float16), "nuc"),
    lambda L: L.linalg.cond(L.eye(2, dtype=L.float16), "fro"),   # linalg.inv's RuntimeError
    lambda L: L.linalg.inv(L.eye(2, dtype=L.float16)),
    lambda L: L.linalg.slogdet(L.eye(2, dtype=L.float16)),
    lambda L: L.linalg.matrix_power(L.eye(2, dtype=L.bool), 2),  # "addmm_impl_cpu_"
    lambda L: L.linalg.matrix_power(L.eye(2, dtype=L.bool), 3),
    lambda L: L.linalg.cond(L.zeros(0, 3), "fro"),                # square first, empty or not
    lambda L: L.linalg.cond(L.zeros(2, 3, 0), "nuc"),
    lambda L: L.linalg.matrix_norm(L.ones(2, 2), False),
    lambda L: L.linalg.pinv(L.eye(2, dtype=L.float64).expand(2, 2, 2),
                            atol=L.tensor([0, 1e-20, 3.0], dtype=L.float64)),
    lambda L: L.linalg.pinv(L.eye(2, dtype=L.float64).expand(2, 2, 2),
                            rtol=L.tensor([0, 1e-20, 3.0], dtype=L.float64)),
    lambda L: L.linalg.matrix_rank(L.eye(2, dtype=L.float64).expand(2, 2, 2),
                                   atol=L.tensor([0, 1e-20, 3.0], dtype=L.float64)),
]


@pytest.mark.parametrize("call", HALF_ERRORS, ids=range(len(HALF_ERRORS)))
def test_error_classes_are_torchs(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(call)


def test_what_torch_takes_and_computes():
    a = rand((2, 3, 3), 11) + 3 * np.eye(3)
    for uplo in ("l", "u"):                                   # either case
        same_gradients(lambda L, t, uplo=uplo: L.linalg.eigvalsh(t, uplo).sum()
                       + L.linalg.eigh(t, UPLO=uplo).eigenvalues.pow(2).sum(), a)
    np.testing.assert_allclose(LA.eigh(mg.tensor(a), UPLO="u").eigenvalues.numpy(),
                               torch.linalg.eigh(torch.tensor(a), UPLO="u").eigenvalues.numpy())
    for call in (lambda L, t: L.linalg.vector_norm(t, True), lambda L, t: L.linalg.vector_norm(
            t, False), lambda L, t: L.linalg.matrix_norm(t, True), lambda L, t: L.linalg.norm(
            t, True), lambda L, t: L.linalg.cond(t, True), lambda L, t: L.linalg.cond(
            L.zeros(0, 3, dtype=t.dtype), 1), lambda L, t: L.linalg.matrix_power(t > 0, 1)):
        same_values(call, a[0])
    same_values(lambda L, t, atol: L.linalg.pinv(t, atol=atol), a, np.array([[0.0], [9.0]]))


def test_solve_triangular_of_a_complex_b_for_a_real_a_warns_as_torch():
    a, b = np.triu(rand((3, 3), 12)) + 3 * np.eye(3), rand((3, 2), 13, True)
    with pytest.warns(UserWarning, match="discards the imaginary part"):   # torch's words
        x = mg.linalg.solve_triangular(mg.tensor(a), mg.tensor(b), upper=True)
    with warnings.catch_warnings():       # torch warns once a process: not asserted here
        warnings.simplefilter("ignore", UserWarning)
        expected = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(b), upper=True)
    assert str(x.dtype) == str(expected.dtype) == "torch.float64"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_gradients(lambda L, t, u: L.linalg.solve_triangular(t, u, upper=True).sum(), a, b)


def test_matrix_exp_of_zero_is_exactly_the_identity():
    for dtype in (np.float64, np.complex128, np.float32):
        same_values(lambda L, t: L.linalg.matrix_exp(t), np.zeros((2, 3, 3), dtype), rtol=0)

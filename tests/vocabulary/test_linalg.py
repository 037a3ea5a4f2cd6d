"""mg.linalg (torch.linalg) and the linear-algebra Tensor methods against PyTorch: values,
dtypes and the gradients of a random upstream into every input in float64 (complex128 for
the complex cases), float32 values, finite differences (``mg.gradcheck``), torch's result
types and error classes, empty and singular inputs, repeated eigen- and singular values.

Eigenvectors and singular vectors are each defined up to sign (phase), which LAPACK builds
may pick differently: they are compared through what does not depend on it (projections
v vᴴ, the products u vᴴ), as a loss must use them."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import shapes

import microgradnorm as mg
from microgradnorm import linalg as LA

pytestmark = pytest.mark.filterwarnings("ignore:torch.(cholesky|qr) is deprecated")

INF = float("inf")


def rand(shape, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    return data + 1j * rng.standard_normal(shape) if complex_ else data


def spd(shape, seed=0, complex_=False):
    # a (batch of) Hermitian positive-definite matrices, well conditioned
    a = rand(shape, seed, complex_)
    return a @ np.swapaxes(a, -1, -2).conj() + shape[-1] * np.eye(shape[-1])


def symmetric(shape, seed=0, complex_=False):
    a = rand(shape, seed, complex_)
    return a + np.swapaxes(a, -1, -2).conj()


def as_numpy(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


def agree(ours, theirs, *arrays, atol=1e-10, rtol=0):
    """Every output's values and dtype, and the gradient of one random upstream per output
    into every input, against torch (``ours``/``theirs`` take the tensors of each library and
    return a tensor or a tuple of them); an input torch leaves without a gradient gets
    zeros here."""
    mine = [mg.tensor(a, requires_grad=True) for a in arrays]
    torchs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = ours(*mine), theirs(*torchs)
    out = out if isinstance(out, tuple) else (out,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(out) == len(expected)
    rng = np.random.default_rng(1)
    loss, torch_loss = 0, 0
    for o, e in zip(out, expected):
        assert o.shape == tuple(e.shape) and str(o.dtype) == str(e.dtype)
        np.testing.assert_allclose(as_numpy(o), as_numpy(e), rtol=rtol, atol=atol)
        if not o.requires_grad:
            continue
        upstream = rng.standard_normal(o.shape)
        if o.dtype.kind == "c":
            upstream = upstream + 1j * rng.standard_normal(o.shape)
        loss = loss + (o * mg.tensor(upstream)).real.sum() if o.dtype.kind == "c" else \
            loss + (o * mg.tensor(upstream)).sum()
        product = e * torch.tensor(upstream)
        torch_loss = torch_loss + (product.real if e.is_complex() else product).sum()
    loss.backward()
    torch_loss.backward()
    for m, t in zip(mine, torchs):
        expected = np.zeros(t.shape) if t.grad is None else as_numpy(t.grad)
        np.testing.assert_allclose(m.grad.numpy(), expected, rtol=rtol, atol=atol)


def same_error(call):
    """``call(lib)`` raises in torch; ours raises the same class (torch's LinAlgError is
    ours, both RuntimeErrors), and then changes nothing."""
    with pytest.raises(Exception) as expected:          # noqa: PT011 (torch's class)
        call(torch)
    kind = LA.LinAlgError if expected.type.__name__ == "_LinAlgError" else expected.type
    with pytest.raises(kind):
        call(mg)


# ----- det, slogdet, logdet ------------------------------------------------------------------
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1)])
def test_det_slogdet_logdet_values_and_gradients(shape, complex_):
    a = rand(shape, 0, complex_)
    agree(LA.det, torch.linalg.det, a)
    agree(lambda t: tuple(LA.slogdet(t)), lambda t: tuple(torch.linalg.slogdet(t)), a)
    agree(lambda t: t.logdet(), lambda t: t.logdet(), a)        # NaN where det < 0
    agree(lambda t: t.det(), lambda t: t.det(), a)
    agree(lambda t: tuple(t.slogdet()), lambda t: tuple(t.slogdet()), a)


def test_det_at_singular_matrices_gives_the_cofactors():
    # torch's backward() gives zeros at an exactly singular matrix; its SVD path (taken with
    # create_graph=True) gives the cofactors, which finite differences confirm: ours
    for a in ([[1.0, 2.0], [2.0, 4.0]], [[1.0, 2, 3], [2, 4, 6], [1, 1, 1]], np.zeros((3, 3)),
              [[2.0, 0, 0], [0, 3, 0], [0, 0, 0]], [[[1.0, 2.0], [3.0, 6.0]], np.eye(2)]):
        a = np.asarray(a, dtype=np.float64)
        t = torch.tensor(a, requires_grad=True)
        d = torch.linalg.det(t)
        expected, = torch.autograd.grad(d.sum(), t, create_graph=True)
        x = mg.tensor(a, requires_grad=True)
        LA.det(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), expected.detach().numpy(), atol=1e-12)
        assert mg.gradcheck(LA.det, mg.tensor(a, requires_grad=True))


def test_slogdet_logdet_corners():
    singular = [[1.0, 2.0], [2.0, 4.0]]
    sign, logabsdet = LA.slogdet(mg.tensor(singular))
    assert sign.item() == 0 and logabsdet.item() == -INF
    assert mg.tensor(singular).logdet().item() == -INF
    assert np.isnan(mg.tensor([[-1.0, 0], [0, 2]]).logdet().item())
    empty = LA.slogdet(mg.zeros(0, 0))
    assert empty.sign.item() == 1 and empty.logabsdet.item() == 0
    assert LA.det(mg.zeros(2, 0, 0)).tolist() == [1.0, 1.0]
    assert LA.det(mg.zeros(0, 3, 3)).shape == (0,)
    # the gradient at a singular matrix: torch's inf and NaN
    x = mg.tensor(singular, requires_grad=True)
    LA.slogdet(x).logabsdet.backward()
    t = torch.tensor(singular, requires_grad=True)
    torch.linalg.slogdet(t).logabsdet.backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


# ----- inverses and solves --------------------------------------------------------------------
@pytest.mark.parametrize("complex_", [False, True])
def test_inv_and_inverse(complex_):
    a = rand((2, 3, 3), 1, complex_)
    agree(LA.inv, torch.linalg.inv, a)
    agree(lambda t: t.inverse(), lambda t: t.inverse(), a[0])
    agree(lambda t: tuple(LA.inv_ex(t)), lambda t: tuple(torch.linalg.inv_ex(t)), a)
    assert LA.inv(mg.zeros(0, 0)).shape == (0, 0)


def test_singular_inverses_and_solves_info_and_errors():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    batch = np.stack([np.eye(2), singular, np.zeros((2, 2))])
    for fn in (lambda L, a: tuple(L.linalg.inv_ex(a)),
               lambda L, a: tuple(L.linalg.solve_ex(a, L.ones(2, dtype=L.float64)))):
        ours, theirs = fn(mg, mg.tensor(batch)), fn(torch, torch.tensor(batch))
        for o, t in zip(ours, theirs):       # the info and LAPACK's inf and NaN, as torch's
            assert str(o.dtype) == str(t.dtype)
            np.testing.assert_array_equal(o.numpy(), t.numpy())
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\): The diagonal element 2 "
                                             "is zero"):
        LA.inv(mg.tensor(batch))
    with pytest.raises(LA.LinAlgError, match="The solver failed because the input matrix is "
                                             "singular"):
        LA.solve(mg.tensor(singular), mg.ones(2, dtype=mg.float64))
    with pytest.raises(RuntimeError):        # LinAlgError is torch's: a RuntimeError
        mg.tensor(singular).inverse()
    with pytest.raises(LA.LinAlgError):
        LA.inv_ex(mg.tensor(singular), check_errors=True)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("a_shape, b_shape, left", [
    ((3, 3), (3,), True), ((2, 3, 3), (3,), True), ((2, 3, 3), (2, 3), True),
    ((2, 3, 3), (3, 2), True), ((2, 3, 3), (4, 1, 3, 2), True), ((3, 3), (2, 3), False),
    ((2, 1, 3, 3), (4, 2, 3), False), ((0, 3, 3), (0, 3), True)])
def test_solve_shapes_broadcasting_and_gradients(a_shape, b_shape, left, complex_):
    a, b = rand(a_shape, 2, complex_) + 3 * np.eye(a_shape[-1]), rand(b_shape, 3, complex_)
    agree(lambda x, y: LA.solve(x, y, left=left), lambda x, y: torch.linalg.solve(x, y, left=left),
          a, b)
    agree(lambda x, y: tuple(LA.solve_ex(x, y, left=left)),
          lambda x, y: tuple(torch.linalg.solve_ex(x, y, left=left)), a, b)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(upper, left, unit):
    a = rand((2, 1, 4, 4), 4) + 4 * np.eye(4)         # both triangles hold values: only one read
    b = rand((3, 4, 2) if left else (3, 2, 4), 5)
    agree(lambda x, y: LA.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit),
          lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left,
                                                     unitriangular=unit), a, b)
    c = rand((3, 3), 6, True) + 3 * np.eye(3)
    agree(lambda x, y: LA.solve_triangular(x, y, upper=upper, left=left),
          lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left),
          c, rand((3, 3), 7, True))


def test_solve_triangular_zero_diagonal_and_dtypes():
    for lib in (mg, torch):   # inf and NaN (which, the BLAS decides), no error
        out = lib.linalg.solve_triangular(lib.tensor([[1.0, 2.0], [0.0, 0.0]]),
                                          lib.ones(2, 1), upper=True)
        assert not np.isfinite(out.numpy()).any()
    x = LA.solve_triangular(mg.eye(3, dtype=mg.float64), mg.ones(3, 1), upper=True)
    assert x.dtype == mg.float64                              # A's dtype, as torch's


# ----- Cholesky, QR ---------------------------------------------------------------------------
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_values_and_gradients(upper, complex_):
    a = spd((2, 4, 4), 8, complex_)
    a = a + np.triu(rand((4, 4), 9), 1) * (not upper)   # a lower input reads only its triangle
    agree(lambda t: LA.cholesky(t, upper=upper), lambda t: torch.linalg.cholesky(t, upper=upper),
          a)
    agree(lambda t: tuple(LA.cholesky_ex(t, upper=upper)),
          lambda t: tuple(torch.linalg.cholesky_ex(t, upper=upper)), a)
    agree(lambda t: t.cholesky(upper), lambda t: t.cholesky(upper), a[0])
    # one triangle is read, and the gradient is torch's symmetric one: differences of a
    # symmetric perturbation check it
    assert mg.gradcheck(lambda t: LA.cholesky((t + t.mT) / 2, upper=upper),
                        mg.tensor(spd((3, 3), 10), requires_grad=True))


def test_cholesky_failures_info_and_messages():
    batch = np.stack([2 * np.eye(3), np.diag([1.0, -1.0, 1.0]),
                      [[4.0, 2, 1], [2, 1, 0], [1, 0, 3]], [[np.nan, 0, 0], [0, 1, 0],
                                                            [0, 0, 1]]])
    ours, theirs = LA.cholesky_ex(mg.tensor(batch)), torch.linalg.cholesky_ex(
        torch.tensor(batch))
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())     # [0, 2, 2, 1]
    assert ours.info.dtype == mg.int32
    np.testing.assert_array_equal(ours.L.numpy()[:3], theirs.L.numpy()[:3])
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\): The factorization could "
                                             "not be completed because the input is not "
                                             r"positive-definite \(the leading minor of order "
                                             "2"):
        LA.cholesky(mg.tensor(batch))
    assert LA.cholesky(mg.zeros(0, 0)).shape == (0, 0)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape, mode", [((5, 3), "reduced"), ((3, 5), "reduced"),
                                         ((2, 4, 4), "reduced"), ((3, 5), "complete"),
                                         ((2, 4, 2), "reduced")])
def test_qr_values_and_gradients(shape, mode, complex_):
    agree(lambda t: tuple(LA.qr(t, mode)), lambda t: tuple(torch.linalg.qr(t, mode)),
          rand(shape, 11, complex_))


def test_qr_modes_corners_and_refused_gradients():
    a = rand((4, 3), 12)
    agree(lambda t: tuple(t.qr()), lambda t: tuple(t.qr()), a)
    agree(lambda t: tuple(t.qr(some=False)), lambda t: tuple(t.qr(some=False)), a.T)
    assert mg.gradcheck(lambda t: tuple(LA.qr(t)), mg.tensor(a, requires_grad=True))
    for mode in ("complete", "r"):          # computed; the backward refuses, as torch's
        q, r = LA.qr(mg.tensor(a, requires_grad=True), mode)
        tq, tr = torch.linalg.qr(torch.tensor(a, requires_grad=True), mode)
        assert q.shape == tuple(tq.shape)
        np.testing.assert_allclose(r.detach().numpy(), tr.detach().numpy(), atol=1e-12)
        with pytest.raises(RuntimeError):
            r.sum().backward()
    for shape in ((0, 3), (3, 0), (2, 0, 3)):
        ours, theirs = LA.qr(mg.zeros(*shape)), torch.linalg.qr(torch.zeros(*shape))
        assert [t.shape for t in ours] == [tuple(t.shape) for t in theirs]
    assert type(LA.qr(mg.eye(2))).__name__ == "linalg_qr" and LA.qr(mg.eye(2))._fields == \
        ("Q", "R")


# ----- eigh, SVD ------------------------------------------------------------------------------
def eigh_parts(lib, uplo="L"):
    def parts(t):
        values, vectors = lib.linalg.eigh(t, UPLO=uplo)
        first = vectors[..., :, :1]
        return values, first @ first.mT.conj(), vectors @ vectors.mT.conj()
    return parts


def svd_parts(lib, full):
    def parts(t):
        u, s, vh = lib.linalg.svd(t, full_matrices=full)
        k = s.shape[-1]
        return s, u[..., :, :1] @ vh[..., :1, :], u[..., :, :k] @ u[..., :, :k].mT.conj()
    return parts


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_values_and_gauge_free_gradients(uplo, complex_):
    a = symmetric((2, 4, 4), 13, complex_) + np.tril(rand((4, 4), 14), -1)   # one triangle read
    agree(eigh_parts(mg, uplo), eigh_parts(torch, uplo), a)
    agree(lambda t: LA.eigvalsh(t, uplo), lambda t: torch.linalg.eigvalsh(t, uplo), a)
    result = LA.eigh(mg.tensor(a[0]))
    assert type(result).__name__ == "linalg_eigh" and result._fields == ("eigenvalues",
                                                                        "eigenvectors")


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_values_and_gauge_free_gradients(shape, full, complex_):
    a = rand(shape, 15, complex_)
    agree(svd_parts(mg, full), svd_parts(torch, full), a)
    agree(LA.svdvals, torch.linalg.svdvals, a)


def test_old_svd_method_returns_v():
    a = rand((4, 3), 16)

    def parts(t, **options):
        u, s, v = t.svd(**options)
        return s, u[:, :1] @ v[:, :1].mT, u.abs(), v.abs()
    agree(parts, parts, a)
    agree(lambda t: parts(t, some=False), lambda t: parts(t, some=False), a)
    ours, theirs = mg.tensor(a).svd(compute_uv=False), torch.tensor(a).svd(compute_uv=False)
    for o, t in zip(ours, theirs):               # S, and U, V zeros of (m, m), (n, n)
        np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-12)
    assert type(ours).__name__ == "svd" and ours._fields == ("U", "S", "V")


def test_repeated_eigen_and_singular_values_follow_torch():
    a = np.diag([1.0, 1.0, 2.0])
    losses = [lambda L, t: L.linalg.eigh(t).eigenvectors[:, 0].abs().sum(),   # NaN in both
              lambda L, t: L.linalg.eigh(t).eigenvalues.pow(2).sum(),         # finite
              lambda L, t: L.linalg.eigvalsh(t).sum(),
              lambda L, t: L.linalg.svd(t).U[:, 0].sum(),
              lambda L, t: L.linalg.svd(t).S.sum(),
              lambda L, t: L.linalg.svdvals(t).sum(),
              lambda L, t: L.linalg.matrix_norm(t, 2)]                        # ties share
    for loss in losses:
        x, t = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        loss(mg, x).backward()
        loss(torch, t).backward()
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_phase_dependent_complex_losses_are_refused():
    a = spd((3, 3), 17, True)
    for lib in (mg, torch):
        x = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
            lib.linalg.eigh(x).eigenvectors.sum().abs().backward()
        x = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
            lib.linalg.svd(x).U.sum().abs().backward()


def test_decompositions_gradcheck():
    for fn, a in ((lambda t: eigh_parts(mg)((t + t.mT) / 2)[:2], symmetric((3, 3), 18)),
                  (lambda t: svd_parts(mg, False)(t)[:2], rand((4, 3), 19)),
                  (lambda t: svd_parts(mg, False)(t)[:2], rand((3, 4), 20)),
                  (LA.svdvals, rand((3, 4), 21)),
                  (LA.inv, rand((3, 3), 22)),
                  (lambda t: LA.slogdet(t).logabsdet, rand((3, 3), 23)),
                  (LA.pinv, rand((3, 4), 24)),
                  (LA.matrix_exp, rand((3, 3), 25))):
        assert mg.gradcheck(fn, mg.tensor(a, requires_grad=True))


# ----- pinv, lstsq, rank, cond ----------------------------------------------------------------
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 4)])
def test_pinv_values_and_gradients(shape, complex_):
    a = rand(shape, 26, complex_)
    agree(LA.pinv, torch.linalg.pinv, a)
    agree(lambda t: t.pinverse(), lambda t: t.pinverse(), a)
    if shape[-1] == shape[-2]:
        h = symmetric(shape, 27, complex_)
        agree(lambda t: LA.pinv(t, hermitian=True), lambda t: torch.linalg.pinv(t, hermitian=True),
              h)


def test_pinv_tolerances_and_rank():
    diag = np.diag([3.0, 1.0, 1e-3])
    stacked = np.stack([diag, diag, np.ones((3, 3)), np.zeros((3, 3))])
    for call in (lambda L, T: L.linalg.pinv(T(diag), atol=0.5),
                 lambda L, T: L.linalg.pinv(T(diag), 0.1),
                 lambda L, T: L.linalg.pinv(T(stacked), rtol=T([0.1, 0.5, 0.1, 0.0])),
                 lambda L, T: L.linalg.pinv(T([[2.0, 0, 0], [0, -1e-20, 0], [0, 0, -3]]),
                                            hermitian=True),
                 lambda L, T: T(diag).pinverse(0.1),
                 lambda L, T: L.linalg.pinv(T(np.zeros((0, 3)))),
                 lambda L, T: L.linalg.matrix_rank(T(stacked)),
                 lambda L, T: L.linalg.matrix_rank(T(diag), 0.01),
                 lambda L, T: L.linalg.matrix_rank(T(diag), rtol=0.5),
                 lambda L, T: L.linalg.matrix_rank(T(diag), atol=T(0.5)),
                 lambda L, T: L.linalg.matrix_rank(T(np.diag([3.0, -1.0, 0])), hermitian=True),
                 lambda L, T: L.linalg.matrix_rank(T(np.zeros((0, 3))))):
        ours = call(mg, lambda x: mg.tensor(np.asarray(x, dtype=np.float64)))
        theirs = call(torch, lambda x: torch.tensor(np.asarray(x, dtype=np.float64)))
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss", "gels"])
def test_lstsq_fields_and_gradients(driver):
    cases = [(rand((5, 3), 28), rand((5, 2), 29)), (rand((2, 5, 3), 30), rand((2, 5), 31)),
             (rand((3, 5), 32), rand(3, 33)), (np.ones((5, 3)), rand((5, 2), 34)),
             (rand((1, 5, 3), 35), rand((4, 5, 2), 36)), (np.ones((3, 0)), rand((3, 2), 37))]
    for a, b in cases:
        if driver == "gels" and np.linalg.matrix_rank(a).min() < min(a.shape[-2:]):
            continue                  # gels assumes full rank: torch's solution is not defined
        ours = LA.lstsq(mg.tensor(a), mg.tensor(b), driver=driver)
        theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        assert type(ours).__name__ == "linalg_lstsq" and ours._fields == (
            "solution", "residuals", "rank", "singular_values")
        for o, t in zip(ours, theirs):
            assert o.shape == tuple(t.shape) and str(o.dtype) == str(t.dtype)
            np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-9)
    agree(lambda x, y: LA.lstsq(x, y, driver=driver).solution,
          lambda x, y: torch.linalg.lstsq(x, y, driver=driver).solution,
          rand((2, 5, 3), 38), rand((2, 5, 2), 39))
    agree(lambda x, y: LA.lstsq(x, y).solution, lambda x, y: torch.linalg.lstsq(x, y).solution,
          rand((3, 5), 40, True), rand(3, 41, True))


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, INF, -INF, "nuc", "fro"])
def test_cond(p):
    a = rand((2, 3, 3), 42)
    if p in (None, 2, -2, "nuc"):
        agree(lambda t: LA.cond(t, p), lambda t: torch.linalg.cond(t, p), a, atol=0,
              rtol=1e-11)
    else:      # torch's backward fails here (an in-place write into what it saved)
        np.testing.assert_allclose(LA.cond(mg.tensor(a), p).numpy(),
                                   torch.linalg.cond(torch.tensor(a), p).numpy(), rtol=1e-12)
    # the gradient of the composition, which finite differences confirm
    assert mg.gradcheck(lambda t: LA.cond(t, p), mg.tensor(a[0], requires_grad=True))
    corners = [np.zeros((0, 0)), np.zeros((2, 2)), [[1.0, 0.0], [0.0, 0.0]]]
    if p not in (None, 2, -2, "nuc"):         # σ_n of a singular matrix is LAPACK's rounding
        corners.append([[1.0, 2.0], [2.0, 4.0]])
    for corner in corners:
        ours = LA.cond(mg.tensor(np.asarray(corner, dtype=np.float64)), p)
        theirs = torch.linalg.cond(torch.tensor(np.asarray(corner, dtype=np.float64)), p)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9)


def test_cond_of_a_rectangular_matrix():
    agree(LA.cond, torch.linalg.cond, rand((2, 3), 44), atol=0, rtol=1e-11)


# ----- norms ----------------------------------------------------------------------------------
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, INF, -INF])
@pytest.mark.parametrize("complex_", [False, True])
def test_matrix_norm(ord, complex_):
    a = rand((2, 4, 3), 45, complex_)
    agree(lambda t: LA.matrix_norm(t, ord), lambda t: torch.linalg.matrix_norm(t, ord), a)
    agree(lambda t: LA.matrix_norm(t, ord, dim=(2, 0), keepdim=True),
          lambda t: torch.linalg.matrix_norm(t, ord, dim=(2, 0), keepdim=True), a)
    agree(lambda t: LA.norm(t, ord, dim=(0, 1)), lambda t: torch.linalg.norm(t, ord, dim=(0, 1)),
          a)


def test_matrix_norm_corners():
    for ord in ("fro", "nuc", 2, 1, -1, INF, -INF, -2):
        for shape in ((0, 3), (3, 0), (2, 0, 3)):
            same_or_same_error = True
            try:
                theirs = torch.linalg.matrix_norm(torch.zeros(shape), ord)
            except IndexError:               # amin over an empty dim, as torch's
                with pytest.raises(IndexError):
                    LA.matrix_norm(mg.zeros(*shape, dtype=mg.float32), ord)
                same_or_same_error = False
            if same_or_same_error:
                ours = LA.matrix_norm(mg.zeros(*shape, dtype=mg.float32), ord)
                assert ours.shape == tuple(theirs.shape) and ours.dtype == mg.float32
                assert not ours.numpy().any()
    x = LA.matrix_norm(mg.ones(2, 2, dtype=mg.float32), 1, dtype=mg.float64)
    assert x.dtype == mg.float64 and x.item() == 2
    assert LA.matrix_norm(mg.ones(2, 2, dtype=mg.complex64)).dtype == mg.float32


@pytest.mark.parametrize("ord", [2, 1, 0, 0.5, 3, INF, -INF, -1])
def test_vector_norm_and_norm(ord):
    a = rand((3, 4), 46)
    a[0, 1] = 0.0                       # torch's gradient at a zero element
    agree(lambda t: LA.vector_norm(t, ord), lambda t: torch.linalg.vector_norm(t, ord), a)
    agree(lambda t: LA.vector_norm(t, ord, dim=1, keepdim=True),
          lambda t: torch.linalg.vector_norm(t, ord, dim=1, keepdim=True), a)
    agree(lambda t: LA.norm(t, ord, dim=0), lambda t: torch.linalg.norm(t, ord, dim=0), a)
    agree(lambda t: LA.norm(t[0], ord), lambda t: torch.linalg.norm(t[0], ord), a)


def test_norm_dispatch_and_vector_norm_options():
    a = rand((2, 3, 4), 47)
    agree(LA.norm, torch.linalg.norm, a)                                  # every element
    agree(lambda t: LA.norm(t, dim=(1, 2)), lambda t: torch.linalg.norm(t, dim=(1, 2)), a)
    agree(lambda t: LA.norm(t[0], "nuc"), lambda t: torch.linalg.norm(t[0], "nuc"), a)
    agree(lambda t: LA.vector_norm(t, dim=()), lambda t: torch.linalg.vector_norm(t, dim=()), a)
    agree(lambda t: LA.vector_norm(t[0, 0, 0]), lambda t: torch.linalg.vector_norm(t[0, 0, 0]),
          a)
    half = LA.vector_norm(mg.ones(3, dtype=mg.float16))
    assert half.dtype == mg.float16
    assert LA.vector_norm(mg.ones(3, dtype=mg.float16), dtype=mg.float32).dtype == mg.float32
    assert LA.vector_norm(mg.tensor([3.0, 4.0]), mg.tensor(1.0)).item() == 7


# ----- powers, exp, products ------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7, -1, -3])
def test_matrix_power(n):
    a = rand((2, 3, 3), 48) + np.eye(3)
    agree(lambda t: LA.matrix_power(t, n), lambda t: torch.linalg.matrix_power(t, n), a,
          atol=1e-9)
    agree(lambda t: t.matrix_power(n), lambda t: t.matrix_power(n), a[0], atol=1e-9)
    if n >= 0:
        ints = np.arange(9).reshape(3, 3)
        ours = LA.matrix_power(mg.tensor(ints), n)
        theirs = torch.linalg.matrix_power(torch.tensor(ints), n)
        assert ours.dtype == mg.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_matrix_exp(scale, complex_):
    a = scale * rand((2, 3, 3), 49, complex_)
    agree(LA.matrix_exp, torch.linalg.matrix_exp, a, atol=0, rtol=1e-10)
    # torch's unbatched path is less exact (2e-11 off SciPy's expm at scale 0.01, complex)
    agree(lambda t: t.matrix_exp(), lambda t: t.matrix_exp(), a[0], atol=1e-10, rtol=1e-10)
    linalg = pytest.importorskip("scipy.linalg")
    ours = LA.matrix_exp(mg.tensor(a)).numpy()
    np.testing.assert_allclose(ours, [linalg.expm(m) for m in a], rtol=1e-12, atol=1e-15)


def test_matrix_exp_corners():
    for a in ([[0.0, 1.0], [0.0, 0.0]], np.zeros((0, 0)), [[np.nan, 0.0], [0.0, 1.0]],
              np.zeros((2, 0, 0))):
        a = np.asarray(a, dtype=np.float64)
        np.testing.assert_allclose(LA.matrix_exp(mg.tensor(a)).numpy(),
                                   torch.linalg.matrix_exp(torch.tensor(a)).numpy())


def test_multi_dot_orders_vectors_and_gradients():
    shapes = [(3,), (3, 4), (4, 2)], [(2, 3), (3, 4), (4, 2), (2,)], [(2, 30), (30, 1),
                                                                     (1, 40), (40, 5), (5,)]
    for group in shapes:
        arrays = [rand(s, i) for i, s in enumerate(group)]
        agree(lambda *t: LA.multi_dot(t), lambda *t: torch.linalg.multi_dot(t), *arrays)
    agree(lambda a, b: LA.multi_dot([a, b]), lambda a, b: torch.linalg.multi_dot([a, b]),
          rand(3, 1), rand(3, 2))


def test_vecdot_cross_diagonal_matmul():
    for complex_ in (False, True):
        agree(LA.vecdot, torch.linalg.vecdot, rand((2, 3), 50, complex_), rand(3, 51, complex_))
        agree(lambda x, y: LA.vecdot(x, y, dim=0), lambda x, y: torch.linalg.vecdot(x, y, dim=0),
              rand((3, 2), 52, complex_), rand((3, 1), 53, complex_))
    agree(LA.cross, torch.linalg.cross, rand((4, 3), 54), rand((1, 3), 55))
    agree(lambda x, y: LA.cross(x, y, dim=0), lambda x, y: torch.linalg.cross(x, y, dim=0),
          rand((3, 2), 56), rand((3, 2), 57))
    agree(lambda t: LA.diagonal(t, offset=1), lambda t: torch.linalg.diagonal(t, offset=1),
          rand((2, 3, 4), 58))
    agree(lambda t: LA.diagonal(t, dim1=0, dim2=2),
          lambda t: torch.linalg.diagonal(t, dim1=0, dim2=2), rand((2, 3, 4), 59))
    agree(LA.matmul, torch.linalg.matmul, rand((2, 3, 4), 60), rand((4, 2), 61))


# ----- float32, errors, result types ----------------------------------------------------------
def test_float32_results():
    a = rand((2, 4, 4), 62).astype(np.float32)
    s = spd((4, 4), 63).astype(np.float32)
    for call in (lambda L, t: L.linalg.det(t), lambda L, t: L.linalg.inv(t),
                 lambda L, t: L.linalg.slogdet(t).logabsdet, lambda L, t: L.linalg.svdvals(t),
                 lambda L, t: L.linalg.matrix_exp(t), lambda L, t: L.linalg.pinv(t),
                 lambda L, t: L.linalg.solve(t, t[..., 0]), lambda L, t: L.linalg.qr(t).R,
                 lambda L, t: L.linalg.matrix_norm(t, "nuc"), lambda L, t: L.linalg.cond(t)):
        ours, theirs = call(mg, mg.tensor(a)), call(torch, torch.tensor(a))
        assert ours.dtype == mg.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-4, atol=2e-5)
    for call in (lambda L, t: L.linalg.cholesky(t), lambda L, t: L.linalg.eigvalsh(t)):
        ours, theirs = call(mg, mg.tensor(s)), call(torch, torch.tensor(s))
        assert ours.dtype == mg.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-5, atol=1e-5)


ERRORS = [
    lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.int64)),
    lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.float16)),
    lambda L: L.linalg.inv(L.ones(2, 3)),
    lambda L: L.linalg.inv(L.ones(3)),
    lambda L: L.linalg.det(L.ones(2, 3)),
    lambda L: L.ones(2, 2, dtype=L.int64).det(),
    lambda L: L.ones(2, 2, dtype=L.int64).logdet(),
    lambda L: L.linalg.cholesky(L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda L: L.linalg.cholesky(L.eye(2, dtype=L.int64)),
    lambda L: L.linalg.solve(L.eye(2, dtype=L.float64), L.ones(2)),
    lambda L: L.linalg.solve(L.eye(3), L.ones(2, 4)),
    lambda L: L.linalg.solve(L.ones(2, 3, 3), L.ones(3, 3, 3)),
    lambda L: L.linalg.solve(L.eye(3), L.ones(3), left=False),
    lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(3), upper=True),
    lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(2, 1), upper=True),
    lambda L: L.linalg.solve_triangular(L.eye(3, dtype=L.int64), L.ones(3, 1), upper=True),
    lambda L: L.linalg.qr(L.eye(3), mode="x"),
    lambda L: L.linalg.qr(L.eye(3, dtype=L.int64)),
    lambda L: L.linalg.eigh(L.eye(3, dtype=L.int64)),
    lambda L: L.linalg.eigh(L.eye(3, dtype=L.float16)),
    lambda L: L.linalg.eigh(L.eye(3), UPLO="X"),
    lambda L: L.linalg.eigh(L.ones(2, 3)),
    lambda L: L.linalg.svd(L.ones(3)),
    lambda L: L.linalg.svd(L.ones(3, 2), driver="gesvd"),
    lambda L: L.linalg.svd(L.tensor([[float("nan"), 1.0], [1.0, 2.0]])),
    lambda L: L.linalg.svdvals(L.ones(3, 2, dtype=L.int64)),
    lambda L: L.linalg.pinv(L.ones(3)),
    lambda L: L.linalg.pinv(L.ones(3, 2, dtype=L.int64)),
    lambda L: L.linalg.matrix_rank(L.ones(3)),
    lambda L: L.linalg.matrix_power(L.eye(3), 1.5),
    lambda L: L.linalg.matrix_power(L.ones(2, 3), 2),
    lambda L: L.linalg.matrix_power(L.zeros(3, 3), -1),
    lambda L: L.linalg.matrix_power(L.eye(3, dtype=L.int64), -1),
    lambda L: L.linalg.matrix_exp(L.ones(2, 3)),
    lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.int64)),
    lambda L: L.linalg.vector_norm(L.ones(3), "fro"),
    lambda L: L.linalg.vector_norm(L.ones(0, 3), INF),
    lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.float64), dtype=L.float32),
    lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.complex64), dtype=L.float64),
    lambda L: L.linalg.vector_norm(L.ones(3), dim=3),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), 3),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), "abc"),
    lambda L: L.linalg.matrix_norm(L.ones(3)),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), dim=(0, -2)),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.float16), 2),
    lambda L: L.linalg.norm(L.ones(3, 3, 3), 2),
    lambda L: L.linalg.norm(L.ones(3, 3, 3), dim=(0, 1, 2)),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 2), driver="x"),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(4, 2)),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(2, 2, 3, 2)),
    lambda L: L.linalg.multi_dot([L.ones(3)]),
    lambda L: L.linalg.multi_dot([L.ones(3, 2), L.ones(2), L.ones(1, 2)]),
    lambda L: L.linalg.multi_dot([L.ones(3, 2), L.ones(3)]),
    lambda L: L.linalg.multi_dot([L.ones(3, 2), L.ones(2, 2, dtype=L.float64)]),
    lambda L: L.linalg.vecdot(L.ones(3, 2), L.ones(3), dim=0),
    lambda L: L.linalg.vecdot(L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int64)),
    lambda L: L.linalg.cross(L.ones(3, 2), L.ones(3, 2)),
    lambda L: L.linalg.diagonal(L.ones(3)),
    lambda L: L.linalg.cond(L.eye(2), 3),
    lambda L: L.linalg.cond(L.ones(2, 3), "fro"),
]


@pytest.mark.parametrize("call", ERRORS, ids=range(len(ERRORS)))
def test_errors_are_torchs_classes(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(call)


def test_result_types_and_reprs():
    a = mg.tensor(spd((3, 3), 64))
    for result, name, fields in (
            (LA.slogdet(a), "linalg_slogdet", ("sign", "logabsdet")),
            (a.slogdet(), "slogdet", ("sign", "logabsdet")),
            (LA.svd(a), "linalg_svd", ("U", "S", "Vh")),
            (LA.inv_ex(a), "linalg_inv_ex", ("inverse", "info")),
            (LA.cholesky_ex(a), "linalg_cholesky_ex", ("L", "info")),
            (LA.solve_ex(a, a), "linalg_solve_ex", ("result", "info")),
            (a.qr(), "qr", ("Q", "R"))):
        assert type(result).__name__ == name and result._fields == fields
        assert repr(result).startswith(f"microgradnorm.return_types.{name}(\n{fields[0]}=")
    assert issubclass(LA.LinAlgError, RuntimeError)
    assert LA.inv_ex(a).info.dtype == mg.int32 and not LA.inv_ex(a).info.requires_grad


# ----- hypothesis: drawn batch shapes and sizes ------------------------------------------------
PROPERTIES = {
    "det": (lambda L, a: L.linalg.det(a), "square"),
    "slogdet": (lambda L, a: L.linalg.slogdet(a).logabsdet, "square"),
    "inv": (lambda L, a: L.linalg.inv(a), "square"),
    "solve": (lambda L, a: L.linalg.solve(a, a[..., :1, :].mT), "square"),
    "cholesky": (lambda L, a: L.linalg.cholesky(a @ a.mT + a.shape[-1] * L.eye(a.shape[-1],
                                                                             dtype=a.dtype)),
                 "square"),
    "qr": (lambda L, a: L.linalg.qr(a).R, "any"),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a + a.mT), "square"),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), "any"),
    "pinv": (lambda L, a: L.linalg.pinv(a), "any"),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a), "square"),
    "nuc": (lambda L, a: L.linalg.matrix_norm(a, "nuc"), "any"),
}


@settings(max_examples=12)
@given(st.sampled_from(sorted(PROPERTIES)), shapes(0, 2, 3), st.integers(1, 4),
       st.integers(1, 4), st.integers(0, 2**31))
def test_drawn_shapes_agree_with_torch(name, batch, m, n, seed):
    call, kind = PROPERTIES[name]
    n = m if kind == "square" else n
    a = rand(batch + (m, n), seed) + (3 * np.eye(m) if kind == "square" else 0)
    agree(lambda t: call(mg, t), lambda t: call(torch, t), a, atol=1e-8)

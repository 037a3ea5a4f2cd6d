"""F.affine_grid and F.grid_sample, the LU family (linalg.lu_factor, lu, lu_unpack, lu_solve,
torch.lu, torch.lu_solve), torch.triangular_solve, cholesky_solve, cholesky_inverse and the
regularized incomplete gamma functions (igamma, igammac, special.gammainc) against PyTorch:
values and the gradients of a random upstream into every input in float64, float32 values,
torch's pivots, result types, warnings and errors; a small spatial transformer network's
forward and backward."""

import itertools
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.ops.gamma import igamma_array

pytestmark = pytest.mark.filterwarnings(
    "ignore:torch.(lu|lu_solve|triangular_solve) is deprecated",
    "ignore:Default grid_sample and affine_grid behavior")


def rand(shape, seed=0, low=None, high=None):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) if low is None else rng.uniform(low, high, shape)


def as_numpy(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


def agree(ours, theirs, *arrays, atol=1e-12, seed=1):
    """The outputs (a tensor or a tuple) and the gradient of one random upstream per
    floating output into every input, ours against torch's; returns our outputs."""
    mine = [mg.tensor(a, requires_grad=True) for a in arrays]
    torchs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = ours(*mine), theirs(*torchs)
    out = out if isinstance(out, tuple) else (out,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(out) == len(expected)
    rng = np.random.default_rng(seed)
    loss_mine, loss_torch = 0, 0
    for o, e in zip(out, expected):
        assert o.shape == tuple(e.shape) and str(o.dtype) == str(e.dtype)
        np.testing.assert_allclose(as_numpy(o), as_numpy(e), rtol=0, atol=atol)
        if e.is_floating_point() or e.is_complex():
            w = rng.standard_normal(e.shape)
            loss_mine = loss_mine + (o * mg.tensor(w)).sum().real
            loss_torch = loss_torch + (e * torch.tensor(w)).sum().real
    loss_mine.backward()
    loss_torch.backward()
    for m, t in zip(mine, torchs):
        expected = np.zeros(t.shape) if t.grad is None else as_numpy(t.grad)
        got = np.zeros(m.shape) if m.grad is None else m.grad.numpy()
        np.testing.assert_allclose(got, expected, rtol=0, atol=atol * 10)
    return out


def raises_as_torch(call, error=None, match=None):
    """Both libraries refuse ``call(lib)`` with ``error`` (by default torch's error class),
    ours with ``match`` in its words."""
    with pytest.raises(error or Exception) as theirs:
        call(torch)
    with pytest.raises(error or type(theirs.value), match=match):
        call(mg)


# ----- grid_sample, affine_grid ---------------------------------------------------------------
def _grid(shape, seed):
    # positions inside and a little outside [-1, 1], a seventh of them on halves and ±1
    g = rand(shape, seed, -1.4, 1.4)
    g.flat[::7] = np.round(g.flat[::7] * 2) / 2
    return g


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d_agrees(mode, padding_mode, align_corners):
    x, g = rand((2, 3, 5, 6)), _grid((2, 4, 7, 2), 1)
    agree(lambda i, grid: F.grid_sample(i, grid, mode, padding_mode, align_corners),
          lambda i, grid: TF.grid_sample(i, grid, mode, padding_mode, align_corners),
          x, g, atol=1e-13)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d_agrees(mode, padding_mode, align_corners):
    x, g = rand((2, 2, 3, 4, 5)), _grid((2, 3, 4, 2, 3), 2)
    agree(lambda i, grid: F.grid_sample(i, grid, mode, padding_mode, align_corners),
          lambda i, grid: TF.grid_sample(i, grid, mode, padding_mode, align_corners),
          x, g, atol=1e-13)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_float32_and_edges(mode):
    x, g = rand((1, 2, 4, 5)).astype(np.float32), _grid((1, 3, 3, 2), 3).astype(np.float32)
    ours = F.grid_sample(mg.tensor(x), mg.tensor(g), mode, "border", False)
    theirs = TF.grid_sample(torch.tensor(x), torch.tensor(g), mode, "border", False)
    assert ours.dtype == mg.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=2e-6)
    # a 1-pixel input, empty batches and grids, a NaN position (2-D zeros: NaN, as torch's)
    for xs, gs in (((1, 1, 1, 1), (1, 2, 2, 2)), ((0, 1, 3, 3), (0, 2, 2, 2)),
                   ((1, 2, 3, 3), (1, 0, 2, 2))):
        a, b = rand(xs), _grid(gs, 4)
        np.testing.assert_allclose(
            F.grid_sample(mg.tensor(a), mg.tensor(b), mode, "reflection", True).numpy(),
            TF.grid_sample(torch.tensor(a), torch.tensor(b), mode, "reflection", True).numpy(),
            atol=1e-14)
    nan = np.array([[[[np.nan, 0.0]]]])
    for padding in ("zeros", "border"):
        np.testing.assert_array_equal(
            F.grid_sample(mg.ones(1, 1, 3, 3, dtype=mg.float64), mg.tensor(nan), "bilinear",
                          padding, False).numpy(),
            TF.grid_sample(torch.ones(1, 1, 3, 3, dtype=torch.float64), torch.tensor(nan),
                           "bilinear", padding, False).numpy())


def test_grid_sample_nearest_grid_gradient_is_zero():
    g = mg.tensor(_grid((1, 2, 2, 2), 5), requires_grad=True)
    F.grid_sample(mg.tensor(rand((1, 1, 3, 3))), g, "nearest", align_corners=False).sum() \
        .backward()
    assert g.grad.shape == g.shape and not g.grad.numpy().any()


def test_grid_sample_warns_and_refuses_as_torch():
    x, g = rand((1, 1, 3, 3)), _grid((1, 2, 2, 2), 6)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        F.grid_sample(mg.tensor(x), mg.tensor(g))
        F.affine_grid(mg.tensor(np.eye(2, 3)[None]), [1, 1, 2, 2])
    assert [str(w.message)[:48] for w in seen] == \
        ["Default grid_sample and affine_grid behavior has"] * 2

    def t(lib, a, dtype=None):
        return lib.tensor(a, dtype=dtype or lib.float64)
    calls = [
        (lambda L: F_of(L).grid_sample(t(L, x), t(L, g), mode="area"), ValueError, "mode"),
        (lambda L: F_of(L).grid_sample(t(L, x), t(L, g), padding_mode="wrap"), ValueError,
         "padding_mode"),
        (lambda L: F_of(L).grid_sample(t(L, x), t(L, g[..., :1])), RuntimeError,
         "size 2 in last dimension"),
        (lambda L: F_of(L).grid_sample(t(L, x[0]), t(L, g[..., :1])), RuntimeError,
         "expected 5D input"),
        (lambda L: F_of(L).grid_sample(t(L, np.ones((2, 1, 3, 3))), t(L, g)), RuntimeError,
         "same batch size"),
        (lambda L: F_of(L).grid_sample(t(L, np.ones((1, 1, 0, 3))), t(L, g)), RuntimeError,
         "non-empty spatial"),
        (lambda L: F_of(L).grid_sample(t(L, np.ones((1, 1, 2, 2, 2))),
                                       t(L, np.zeros((1, 1, 1, 1, 3))), mode="bicubic"),
         RuntimeError, "bicubic interpolation only supports 4D"),
        (lambda L: F_of(L).grid_sample(t(L, x), t(L, g, dtype=L.float32)), RuntimeError,
         "expected scalar type Double but found Float"),
        (lambda L: F_of(L).grid_sample(L.ones(1, 1, 3, 3, dtype=L.int64), t(L, g)),
         NotImplementedError, "grid_sampler_2d_cpu_kernel_impl"),
    ]
    for call, error, match in calls:
        raises_as_torch(call, error, match)


def F_of(lib):
    return TF if lib is torch else F


@pytest.mark.parametrize("size", [[2, 3, 5, 7], [2, 1, 1, 4], [2, 1, 3, 4, 6], [1, 1, 1, 1, 2]])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_agrees(size, align_corners):
    theta = rand((size[0], 2, 3) if len(size) == 4 else (size[0], 3, 4), 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # torch's unit-size warning, checked below
        agree(lambda th: F.affine_grid(th, size, align_corners),
              lambda th: TF.affine_grid(th, size, align_corners), theta, atol=1e-14)


def test_affine_grid_warns_and_refuses_as_torch():
    with pytest.warns(UserWarning, match="unit-size grids"):
        F.affine_grid(mg.tensor(np.eye(2, 3)[None]), [1, 1, 1, 4], align_corners=True)
    eye = np.eye(2, 3)[None]
    for call, error, match in [
            (lambda L: F_of(L).affine_grid(L.ones(1, 2, 3, dtype=L.int64), [1, 1, 2, 2], False),
             ValueError, "floating point type, but got torch.int64"),
            (lambda L: F_of(L).affine_grid(L.ones(1, 2, 4), [1, 1, 2, 2], False), ValueError,
             "shape Nx2x3"),
            (lambda L: F_of(L).affine_grid(L.ones(1, 2, 3), [1, 2, 2], False),
             NotImplementedError, "4D and 5D sizes"),
            (lambda L: F_of(L).affine_grid(L.tensor(eye), [1, 1, 0, 2], False), ValueError,
             "positive output size"),
            (lambda L: F_of(L).affine_grid(L.tensor(np.ones((2, 2, 3))), [1, 1, 3, 2], False),
             RuntimeError, "first two dimensions of batch2")]:
        raises_as_torch(call, error, match)


def test_spatial_transformer_forward_backward():
    """The spatial transformer tutorial's network, small: a localization net (conv, pool,
    relu, linear) regresses θ, started at the identity; the input is resampled through
    ``affine_grid`` and ``grid_sample``, then classified; every gradient against torch's."""
    rng = np.random.default_rng(8)
    params = {"conv": rng.standard_normal((4, 1, 5, 5)) * 0.2, "conv_b": rng.standard_normal(4),
              "fc": rng.standard_normal((6, 16)) * 0.05,
              "fc_b": np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]),
              "head": rng.standard_normal((3, 2 * 12 * 12)) * 0.1}
    x = rng.standard_normal((2, 2, 12, 12))

    def run(lib, functional):
        p = {k: lib.tensor(v, requires_grad=True) for k, v in params.items()}
        inp = lib.tensor(x, requires_grad=True)
        h = functional.conv2d(inp[:, :1], p["conv"], p["conv_b"])              # (2, 4, 8, 8)
        h = functional.relu(functional.max_pool2d(h, 4))                       # (2, 4, 2, 2)
        theta = functional.linear(h.reshape(2, -1), p["fc"], p["fc_b"]).reshape(2, 2, 3)
        grid = functional.affine_grid(theta, list(inp.shape), align_corners=False)
        warped = functional.grid_sample(inp, grid, align_corners=False)
        logits = functional.linear(warped.reshape(2, -1), p["head"])
        loss = functional.cross_entropy(logits, lib.tensor([0, 2]))
        loss.backward()
        return [loss, warped] + [p[k].grad for k in params] + [inp.grad]

    for ours, theirs in zip(run(mg, F), run(torch, TF)):
        np.testing.assert_allclose(as_numpy(ours), as_numpy(theirs), rtol=1e-10, atol=1e-12)


# ----- the LU factorization -------------------------------------------------------------------
LU_SHAPES = [(4, 4), (2, 3, 3), (3, 5), (5, 3), (2, 1, 4, 2)]


def _matrices(shape, seed, kind):
    a = rand(shape, seed)
    return a + 1j * rand(shape, seed + 50) if kind == "complex" else a


@pytest.mark.parametrize("shape", LU_SHAPES)
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_lu_factor_agrees(shape, kind):
    a = _matrices(shape, 9, kind)
    agree(lambda A: tuple(mg.linalg.lu_factor_ex(A)), lambda A: tuple(torch.linalg.lu_factor_ex(A)),
          a, atol=1e-13)
    agree(lambda A: tuple(mg.linalg.lu(A)), lambda A: tuple(torch.linalg.lu(A)), a, atol=1e-13)


def test_lu_pivots_singular_and_float32():
    # ties go to the first row of largest |value|; a zero column gives info and no scaling
    cases = [np.array([[1.0, 2.0], [-1.0, 3.0]]), np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 1.0],
                                                            [0.0, 2.0, 5.0]]),
             np.array([[2.0, 4.0], [1.0, 2.0]]), np.zeros((3, 3)),
             np.array([[1.0, 2.0], [3.0 + 0j, -3.0j]])]
    for a in cases:
        ours, theirs = mg.linalg.lu_factor_ex(mg.tensor(a)), torch.linalg.lu_factor_ex(
            torch.tensor(a))
        np.testing.assert_allclose(ours.LU.numpy(), theirs.LU.numpy(), atol=1e-15)
        np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
        assert ours.pivots.dtype == mg.int32 and ours.info.dtype == mg.int32
        assert int(ours.info) == int(theirs.info)
    a = rand((3, 4, 4), 10).astype(np.float32)
    ours, theirs = mg.linalg.lu_factor(mg.tensor(a)), torch.linalg.lu_factor(torch.tensor(a))
    np.testing.assert_allclose(ours.LU.numpy(), theirs.LU.numpy(), atol=2e-6)
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    singular = np.stack([np.eye(2), np.zeros((2, 2))])
    for call, match in [(lambda L: L.linalg.lu_factor(L.tensor(singular)),
                         r"torch.linalg.lu_factor: \(Batch element 1\): U\[1,1\] is zero"),
                        (lambda L: L.linalg.lu_factor_ex(L.tensor(singular), check_errors=True),
                         "lu_factor_ex"),
                        (lambda L: L.linalg.lu_factor(L.eye(2), pivot=False),
                         "LU without pivoting"),
                        (lambda L: L.linalg.lu_factor(L.ones(3)), "2 or more dimensions"),
                        (lambda L: L.linalg.lu(L.ones(2, 2, dtype=L.int64)), "lu_cpu")]:
        raises_as_torch(call, match=match)
    # torch.lu: never raises for a singular matrix; the info only with get_infos
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        plain = mg.lu(mg.tensor(singular))
    assert isinstance(plain, tuple) and len(plain) == 2
    with_info = mg.tensor(singular).lu(get_infos=True)
    assert type(with_info).__name__ == "_lu_with_info"
    np.testing.assert_array_equal(with_info.info.numpy(), [0, 1])


def test_lu_unpack_agrees():
    a = rand((2, 4, 3), 11)
    LU, pivots = mg.linalg.lu_factor(mg.tensor(a))
    expected = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(a)))
    for flags in [(True, True), (False, True), (True, False)]:
        ours = mg.lu_unpack(LU, pivots, *flags)
        theirs = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(a)), *flags)
        assert type(ours).__name__ == "lu_unpack"
        for o, t in zip(ours, theirs):
            assert o.shape == tuple(t.shape)
            np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-14)
    P, L, U = mg.lu_unpack(LU, pivots)
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-14)
    assert P.shape == tuple(expected.P.shape)
    agree(lambda A: tuple(mg.lu_unpack(*mg.linalg.lu_factor(A))),
          lambda A: tuple(torch.lu_unpack(*torch.linalg.lu_factor(A))), a, atol=1e-13)
    for call, match in [(lambda L: L.lu_unpack(L.eye(3), L.ones(3, dtype=L.int64)), "int32"),
                        (lambda L: L.lu_unpack(L.eye(3), L.tensor([5, 1, 1], dtype=L.int32)),
                         "between 1 and LU.size")]:
        raises_as_torch(call, RuntimeError, match)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_lu_solve_agrees(left, adjoint, kind):
    a = _matrices((2, 1, 4, 4), 12, kind) + 4 * np.eye(4)
    b = _matrices((3, 4, 2) if left else (3, 2, 4), 13, kind)

    def solved(lib):
        return lambda A, B: lib.linalg.lu_solve(*lib.linalg.lu_factor(A), B, left=left,
                                                adjoint=adjoint)
    agree(solved(mg), solved(torch), a, b, atol=1e-13)


def test_torch_lu_solve_triangular_solve_and_methods():
    a, b = rand((4, 4), 14) + 4 * np.eye(4), rand((4, 3), 15)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        mg.lu_solve(mg.tensor(b), *mg.linalg.lu_factor(mg.tensor(a)))
    agree(lambda A, B: B.lu_solve(*mg.linalg.lu_factor(A)),
          lambda A, B: B.lu_solve(*torch.linalg.lu_factor(A)), a, b, atol=1e-13)
    for flags in itertools.product((True, False), repeat=3):      # upper, transpose, unit
        agree(lambda A, B, flags=flags: tuple(mg.triangular_solve(B, A, *flags)),
              lambda A, B, flags=flags: tuple(torch.triangular_solve(B, A, *flags)),
              rand((2, 1, 4, 4), 16) + 4 * np.eye(4), rand((3, 4, 2), 17), atol=1e-13)
    out = mg.tensor(b).triangular_solve(mg.tensor(a))
    assert type(out).__name__ == "triangular_solve" and out.cloned_coefficient.shape == (4, 4)
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        mg.triangular_solve(mg.tensor(b), mg.tensor(a))
    for call, match in [
            (lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(a)), L.ones(3,
                                                                                 dtype=L.float64)),
             "at least 2 dimensions"),
            (lambda L: L.linalg.lu_solve(L.tensor(a), L.ones(4, dtype=L.int64), L.tensor(b)),
             "int32"),
            (lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(a)), L.ones(3, 2)),
             "same dtype"),
            (lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(a)),
                                         L.ones(3, 2, dtype=L.float64)), "Incompatible shapes"),
            (lambda L: L.triangular_solve(L.ones(3), L.tensor(a)), "b to have at least 2"),
            (lambda L: L.triangular_solve(L.ones(3, 2), L.tensor(a)), "same dtype"),
            (lambda L: L.triangular_solve(L.tensor(b), L.ones(4, 3, dtype=L.float64)),
             "square matrices"),
            (lambda L: L.triangular_solve(L.ones(3, 2, dtype=L.float64), L.tensor(a)),
             "Incompatible matrix sizes"),
            (lambda L: L.triangular_solve(L.ones(4, 2, dtype=L.int64),
                                          L.ones(4, 4, dtype=L.int64)), "triangular_solve_cpu")]:
        raises_as_torch(call, match=match)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_agree(upper):
    rng = np.random.default_rng(18)
    a = rng.standard_normal((2, 4, 4))
    low = np.linalg.cholesky(a @ a.swapaxes(-1, -2) + 4 * np.eye(4))
    factor = low.swapaxes(-1, -2) if upper else low
    # the other triangle is not read; torch's gradient (of all of L) reaches it all the same
    other = np.tril(rng.standard_normal((4, 4)), -1) if upper else \
        np.triu(rng.standard_normal((4, 4)), 1)
    for L in (factor, factor + other):
        agree(lambda B, C: mg.cholesky_solve(B, C, upper),
              lambda B, C: torch.cholesky_solve(B, C, upper), rand((3, 1, 4, 2), 19), L,
              atol=1e-13)
        agree(lambda C: mg.cholesky_inverse(C, upper), lambda C: torch.cholesky_inverse(C, upper),
              L, atol=1e-13)
    agree(lambda C: C.cholesky_inverse(upper=upper), lambda C: C.cholesky_inverse(upper=upper),
          factor[0], atol=1e-13)
    # complex, and double backward through both nodes
    c = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    lc = np.linalg.cholesky(c @ c.conj().T + 3 * np.eye(3))
    lc = lc.conj().T if upper else lc
    agree(lambda B, C: B.cholesky_solve(C, upper), lambda B, C: B.cholesky_solve(C, upper),
          rng.standard_normal((3, 2)) + 0j, lc, atol=1e-13)
    for lib in (mg, torch):
        lm, bm = lib.tensor(factor[0], requires_grad=True), lib.tensor(rand((4, 2), 20),
                                                                        requires_grad=True)
        out = lib.cholesky_solve(bm, lm, upper) + lib.cholesky_inverse(lm, upper) @ bm
        grads = lib.autograd.grad(out.pow(2).sum(), [lm, bm], create_graph=True)
        (grads[0].pow(2).sum() + grads[1].sum()).backward()
        if lib is mg:
            second = lm.grad.numpy(), bm.grad.numpy()
    np.testing.assert_allclose(second[0], lm.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(second[1], bm.grad.numpy(), atol=1e-12)


def test_cholesky_solve_and_inverse_refuse_as_torch():
    eye = np.eye(3)
    for call, error, match in [
            (lambda L: L.cholesky_solve(L.ones(3, dtype=L.float64), L.tensor(eye)),
             RuntimeError, "b should have at least 2"),
            (lambda L: L.cholesky_solve(L.ones(3, 2, dtype=L.float64), L.ones(3,
                                                                              dtype=L.float64)),
             RuntimeError, "u should have at least 2"),
            (lambda L: L.cholesky_solve(L.ones(3, 2), L.tensor(eye)), RuntimeError, "same dtype"),
            (lambda L: L.cholesky_solve(L.ones(3, 2, dtype=L.float64), L.ones(2, 2,
                                                                              dtype=L.float64)),
             RuntimeError, "Incompatible matrix sizes for cholesky_solve"),
            (lambda L: L.cholesky_solve(L.ones(2, 2, dtype=L.int64), L.ones(2, 2, dtype=L.int64)),
             NotImplementedError, "cholesky_solve_cpu"),
            (lambda L: L.cholesky_inverse(L.ones(3)), RuntimeError, "at least 2 dimensions"),
            (lambda L: L.cholesky_inverse(L.ones(2, 3)), RuntimeError, "square matrices"),
            (lambda L: L.cholesky_inverse(L.ones(2, 2, dtype=L.int64)), NotImplementedError,
             "cholesky_inverse_out_cpu"),
            (lambda L: L.cholesky_inverse(L.tensor([[0.0, 0.0], [1.0, 1.0]])),
             RuntimeError, "The diagonal element 1 is zero")]:       # both a LinAlgError
        raises_as_torch(call, error, match)
    with pytest.raises(mg.linalg.LinAlgError):
        mg.cholesky_inverse(mg.tensor([[0.0, 0.0], [1.0, 1.0]]))


# ----- igamma, igammac ------------------------------------------------------------------------
def _temme_region(a, x):
    # where torch sums Temme's expansion (its values there carry a float π: ~1e-9 off)
    ratio = np.abs(x - a) / a
    return ((a > 20) & (a < 200) & (ratio < 0.3)) | ((a > 200) & (ratio < 4.5 / np.sqrt(a)))


@pytest.mark.parametrize("upper", [False, True])
def test_igamma_agrees_with_torch_to_1e12(upper):
    rng = np.random.default_rng(21)
    a = 10 ** rng.uniform(-3, np.log10(150), 6000)
    x = 10 ** rng.uniform(-4, np.log10(500), 6000)
    keep = ~_temme_region(a, x)
    a, x = a[keep], x[keep]
    ours = (mg.igammac if upper else mg.igamma)(mg.tensor(a), mg.tensor(x)).numpy()
    theirs = (torch.igammac if upper else torch.igamma)(torch.tensor(a), torch.tensor(x))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12, atol=1e-300)


def test_igamma_where_torch_takes_temme_expansion():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    a = np.array([21.9, 50.0, 150.0, 199.0, 250.0, 1000.0, 5000.0])
    x = a * np.array([0.75, 0.9, 1.0, 1.2, 1.1, 0.95, 1.02])
    for upper in (False, True):
        ours = igamma_array(a, x, upper)
        exact = [float(mpmath.gammainc(p, q, mpmath.inf, regularized=True) if upper else
                       mpmath.gammainc(p, 0, q, regularized=True)) for p, q in zip(a, x)]
        np.testing.assert_allclose(ours, exact, rtol=2e-14)
        theirs = (torch.igammac if upper else torch.igamma)(torch.tensor(a), torch.tensor(x))
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-8)


def test_igamma_edges_gradients_and_errors():
    a = np.array([0.0, 0.0, 1.0, np.inf, np.nan, 1.0, 0.0, 2.0, np.inf, 1.0, -1.0, 3.0])
    x = np.array([1.0, 0.0, 0.0, 1.0, 1.0, np.inf, 0.0, -1.0, np.inf, np.nan, 1.0, 1e-320])
    for ours, theirs in ((mg.igamma, torch.igamma), (mg.special.gammaincc, torch.igammac)):
        np.testing.assert_array_equal(ours(mg.tensor(a), mg.tensor(x)).numpy(),
                                      theirs(torch.tensor(a), torch.tensor(x)).numpy())
    shape_a, shape_x = rand((3, 1), 22, 0.2, 8), rand((4,), 23, 0.1, 12)
    agree(lambda p, q: mg.igamma(p.detach(), q), lambda p, q: torch.igamma(p.detach(), q),
          shape_a, shape_x)
    agree(lambda p, q: p.detach().igammac(q), lambda p, q: p.detach().igammac(q),
          shape_a, shape_x)
    # float32 in torch's float arithmetic: a few ulp of float32 apart
    a32, x32 = rand(500, 24, 0.1, 30).astype(np.float32), rand(500, 25, 0.01, 40).astype(
        np.float32)
    np.testing.assert_allclose(mg.igamma(mg.tensor(a32), mg.tensor(x32)).numpy(),
                               torch.igamma(torch.tensor(a32), torch.tensor(x32)).numpy(),
                               rtol=1e-4, atol=2e-6)
    inplace = mg.tensor([1.0, 2.0])
    inplace.igamma_(mg.tensor([1.0, 2.0]))
    np.testing.assert_allclose(inplace.numpy(),
                               torch.tensor([1.0, 2.0]).igamma_(torch.tensor([1.0, 2.0])),
                               rtol=1e-6)
    assert mg.special.gammainc is mg.igamma
    for call, error, match in [
            (lambda L: L.igamma(L.tensor([1.0], requires_grad=True), L.tensor([1.0])).sum()
             .backward(), NotImplementedError, "derivative for 'igamma: input'"),
            (lambda L: L.igammac(L.tensor([1.0], requires_grad=True), L.tensor([1.0])).sum()
             .backward(), NotImplementedError, "derivative for 'igammac: input'"),
            (lambda L: L.igamma(L.tensor([1, 2]), L.tensor([1, 2])), NotImplementedError,
             "igamma_cpu"),
            (lambda L: L.igamma(L.tensor([1.0]), 2.0), TypeError, "other"),
            (lambda L: L.tensor([1, 2]).igamma_(L.tensor([1.0, 2.0])), RuntimeError,
             "can't be cast")]:
        raises_as_torch(call, error, match)

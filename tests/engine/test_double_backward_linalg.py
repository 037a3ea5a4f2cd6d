"""Double backward (create_graph=True) of the matrix functions, einsum, the complex views,
diagonals and strided views, the index writes, the Fourier transforms and the convolution
nodes (ops/double_backward_linalg.py, convolution.py, convolution_more.py): against PyTorch
in float64, against finite differences of the first gradient, and a WGAN-GP gradient
penalty through a small conv net against PyTorch in float64 and float32."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg


def _leaves(lib, arrays, dtype):
    if lib is torch:
        return [torch.tensor(a, dtype=getattr(torch, dtype) if a.dtype.kind == "f" else None,
                             requires_grad=True) for a in arrays]
    return [mg.tensor(a, dtype=getattr(mg, dtype) if a.dtype.kind == "f" else None,
                      requires_grad=True) for a in arrays]


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _weighted(lib, grads, weights):
    # Σ Re(w·g) over the gradients that exist: a real scalar of the gradients
    terms = [(g * lib.tensor(w, dtype=g.real.dtype)) for g, w in zip(grads, weights)
             if g is not None]
    return sum((t.real if t.is_complex() else t).sum() for t in terms)


def second_order(lib, fn, arrays, out_grads, weights, dtype="float64"):
    """(the gradients of fn's outputs · out_grads, taken with create_graph; the leaves'
    .grad of Σ weights · those gradients)."""
    leaves = _leaves(lib, arrays, dtype)
    outs = _as_list(fn(lib, *leaves))
    grads = lib.autograd.grad(outs, leaves, create_graph=True, allow_unused=True,
                              grad_outputs=[lib.tensor(v, dtype=o.dtype)
                                            for v, o in zip(out_grads, outs)])
    _weighted(lib, grads, weights).backward()
    return ([None if g is None else g.detach().numpy() for g in grads],
            [None if t.grad is None else t.grad.numpy() for t in leaves])


def _draws(fn, arrays, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        outs = _as_list(fn(torch, *[torch.tensor(a) for a in arrays]))
    out_grads = [rng.standard_normal(o.shape) + (1j * rng.standard_normal(o.shape)
                                                  if o.is_complex() else 0) for o in outs]
    return out_grads, [rng.standard_normal(a.shape) for a in arrays]


def assert_matches_torch(fn, arrays, seed=0, rtol=1e-10, atol=1e-11, dtype="float64"):
    out_grads, weights = _draws(fn, arrays, seed)
    ours, theirs = (second_order(lib, fn, arrays, out_grads, weights, dtype)
                    for lib in (mg, torch))
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


rng = np.random.default_rng(1)


def R(*shape):
    return rng.standard_normal(shape)


def C(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def spd(n, complex_=False):
    m = C(n, n) if complex_ else R(n, n)
    return m @ m.conj().T + n * np.eye(n)


SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])


def _svd_gauge_free(u, s, vh):
    # what a loss may read of the SVD: the factors' signs (phases) are LAPACK's choice
    return u ** 2 if not u.is_complex() else s, s, u[..., :, :1] * vh[..., :1, :]


def _eigh_gauge_free(values, v):
    return values, v[..., :, :1] * v[..., :, :1].conj().mT


CASES = {
    # einsum: products, a diagonal, a label of one operand, broadcasting, ellipsis, complex
    "einsum-mm": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b).sin(), [R(3, 4), R(4, 2)]),
    "einsum-diagonal": (lambda lib, a, b: lib.einsum("iij,j->ij", a, b) ** 2, [R(3, 3, 2), R(2)]),
    "einsum-own-label": (lambda lib, a, b: lib.einsum("i,jk->", a, b).exp(), [R(3), R(2, 2)]),
    "einsum-broadcast": (lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b).tanh(),
                         [R(1, 3, 4), R(2, 4, 2)]),
    "einsum-ellipsis": (lambda lib, a, b: lib.einsum("...ij,...j->...i", a, b) ** 3,
                        [R(2, 3, 4), R(4)]),
    "einsum-one-operand": (lambda lib, a: lib.einsum("ii->i", a) ** 3, [R(3, 3)]),
    "einsum-0d": (lambda lib, a, b: lib.einsum("i,->i", a, b) ** 2, [R(3), R()]),
    "einsum-complex": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b) ** 2, [C(3, 4), C(4, 2)]),
    # det, slogdet, inverse, solves
    "det": (lambda lib, a: lib.linalg.det(a) ** 2, [R(2, 3, 3)]),
    "det-singular": (lambda lib, a: lib.linalg.det(a), [SINGULAR]),
    "det-batch-with-singular": (lambda lib, a: lib.linalg.det(a) * 1.5,
                                [np.stack([R(3, 3), SINGULAR])]),
    "det-complex": (lambda lib, a: lib.linalg.det(a), [C(3, 3)]),
    "slogdet": (lambda lib, a: lib.linalg.slogdet(a)[1].sin(), [R(2, 3, 3)]),
    "slogdet-complex": (lambda lib, a: lib.linalg.slogdet(a), [C(2, 3, 3)]),
    "inverse": (lambda lib, a: lib.linalg.inv(a), [R(2, 3, 3)]),
    "inverse-complex": (lambda lib, a: lib.linalg.inv(a), [C(3, 3)]),
    "solve-broadcast": (lambda lib, a, b: lib.linalg.solve(a, b), [R(2, 3, 3), R(3, 2)]),
    "solve-vector": (lambda lib, a, b: lib.linalg.solve(a, b), [R(3, 3), R(3)]),
    "solve-right": (lambda lib, a, b: lib.linalg.solve(a, b, left=False), [R(3, 3), R(2, 3)]),
    "solve-complex": (lambda lib, a, b: lib.linalg.solve(a, b), [C(3, 3), C(3, 2)]),
    "solve-triangular": (lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
                         [R(3, 3) + 3 * np.eye(3), R(3, 2)]),
    "solve-triangular-unit": (lambda lib, a, b: lib.linalg.solve_triangular(
        a, b, upper=False, unitriangular=True), [R(2, 3, 3), R(3, 2)]),
    # decompositions (losses that do not see the factors' signs or phases)
    "cholesky": (lambda lib, a: lib.linalg.cholesky(a), [spd(3)]),
    "cholesky-upper": (lambda lib, a: lib.linalg.cholesky(a, upper=True), [spd(3)]),
    "cholesky-complex": (lambda lib, a: lib.linalg.cholesky(a), [spd(3, complex_=True)]),
    "qr-tall": (lambda lib, a: lib.linalg.qr(a), [R(4, 3)]),
    "qr-wide": (lambda lib, a: lib.linalg.qr(a), [R(2, 4)]),
    "qr-complex": (lambda lib, a: lib.linalg.qr(a), [C(3, 3)]),
    "eigh": (lambda lib, a: _eigh_gauge_free(*lib.linalg.eigh(a + a.mT)), [R(2, 3, 3)]),
    "eigh-values": (lambda lib, a: lib.linalg.eigh(a + a.mT)[0], [R(3, 3)]),
    "eigh-complex": (lambda lib, a: _eigh_gauge_free(*lib.linalg.eigh(a + a.mH)), [C(3, 3)]),
    "eigvalsh": (lambda lib, a: lib.linalg.eigvalsh(a + a.mT), [R(2, 3, 3)]),
    "svd-tall": (lambda lib, a: _svd_gauge_free(*lib.linalg.svd(a, full_matrices=False)),
                 [R(4, 3)]),
    "svd-wide": (lambda lib, a: _svd_gauge_free(*lib.linalg.svd(a, full_matrices=False)),
                 [R(2, 4)]),
    "svd-complex": (lambda lib, a: _svd_gauge_free(*lib.linalg.svd(a, full_matrices=False)),
                    [C(3, 4)]),
    "svd-full": (lambda lib, a: (lambda u, s, vh: (u[:, :3] ** 2, s))(*lib.linalg.svd(a)),
                 [R(4, 3)]),
    "svdvals": (lambda lib, a: lib.linalg.svdvals(a), [R(4, 3)]),
    "pinv-tall": (lambda lib, a: lib.linalg.pinv(a), [R(4, 3)]),
    "pinv-wide": (lambda lib, a: lib.linalg.pinv(a), [R(3, 4)]),
    "matrix-exp": (lambda lib, a: lib.linalg.matrix_exp(a), [R(2, 3, 3)]),
    # complex views and parts
    "real-imag": (lambda lib, a: (lib.view_as_complex(a) ** 2).real
                  * (lib.view_as_complex(a) ** 3).imag, [R(3, 2)]),
    "view-as-real": (lambda lib, a, b: lib.view_as_real(lib.complex(a, b) ** 2) ** 2, [R(3), R(3)]),
    "complex-broadcast": (lambda lib, a, b: lib.complex(a, b) ** 3, [R(2, 3), R(3)]),
    "conj": (lambda lib, a, b: (lib.complex(a, b).conj() * lib.complex(b, a)) ** 2, [R(3), R(3)]),
    "polar": (lambda lib, a, b: lib.polar(a, b) ** 2, [R(2, 3), R(3)]),
    "angle": (lambda lib, a, b: lib.angle(lib.complex(a, b) ** 2) ** 2, [R(4), R(4)]),
    "angle-real": (lambda lib, a: lib.angle(a) + a ** 2, [R(4)]),
    # diagonals, strided views, in-place comparisons
    "diagonal": (lambda lib, a: a.diagonal(1, 0, 2) ** 3, [R(3, 2, 4)]),
    "diag-embed": (lambda lib, a: lib.diag_embed(a ** 2, offset=-1, dim1=0, dim2=2) ** 2,
                   [R(2, 3)]),
    "diagonal-scatter": (lambda lib, a, b: lib.diagonal_scatter(a ** 2, b ** 3, 1) ** 2,
                         [R(3, 4), R(3)]),
    "as-strided-overlapping": (lambda lib, a: a.as_strided((3, 3), (1, 2)) ** 3, [R(7)]),
    "as-strided-expanded": (lambda lib, a: (a ** 2).expand(3, 4).as_strided((2, 2), (1, 1))
                            ** 3, [R(4)]),
    "unfold": (lambda lib, a: (a ** 2).unfold(1, 3, 2) ** 3, [R(2, 7)]),
    "unfold-overlapping": (lambda lib, a: (a ** 2).unfold(0, 3, 1) ** 3, [R(6)]),
    "comparison-in-place": (lambda lib, x: ((x * 2).lt_(1.0) + x) ** 2, [R(4)]),
    # index writes
    "index-reduce-mean": (lambda lib, a, b: (a ** 2).index_reduce(
        0, lib.tensor([0, 2, 0]), b ** 3, "mean") ** 2, [R(3, 2), R(3, 2)]),
    # Fourier transforms
    "fft-padded": (lambda lib, a: lib.fft.fft(a ** 2, n=6), [R(2, 4)]),
    "fft-cut-ortho": (lambda lib, a: lib.fft.fft(a ** 2, n=3, dim=0, norm="ortho"), [R(4, 2)]),
    "ifft2-complex": (lambda lib, a, b: lib.fft.ifft2(lib.complex(a, b) ** 2, norm="forward"),
                      [R(3, 4), R(3, 4)]),
    "rfft": (lambda lib, a: lib.fft.rfft(a ** 2, n=5), [R(2, 4)]),
    "rfftn": (lambda lib, a: lib.fft.rfftn(a ** 2), [R(3, 4)]),
    "irfft-even": (lambda lib, a, b: lib.fft.irfft(lib.complex(a, b) ** 2, n=6), [R(4), R(4)]),
    "irfft-odd-ortho": (lambda lib, a, b: lib.fft.irfft(lib.complex(a, b) ** 2, n=5, norm="ortho"),
                        [R(2, 3), R(2, 3)]),
    "irfft-of-real": (lambda lib, a: lib.fft.irfft(a ** 2, n=4), [R(3)]),
    # convolutions and pooling
    "conv2d": (lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2, padding=1).tanh(),
               [R(2, 2, 5, 5), R(3, 2, 3, 3), R(3)]),
    "conv1d-groups": (lambda lib, x, w: lib.nn.functional.conv1d(x, w, dilation=2, groups=2)
                      .tanh(), [R(2, 4, 7), R(2, 2, 2)]),
    "conv-transpose2d": (lambda lib, x, w: lib.nn.functional.conv_transpose2d(
        x, w, stride=2, padding=1, output_padding=1).tanh(), [R(1, 2, 3, 3), R(2, 3, 3, 3)]),
    "conv-transpose1d": (lambda lib, x, w, b: lib.nn.functional.conv_transpose1d(
        x, w, b, stride=3, output_padding=2).tanh(), [R(2, 2, 4), R(2, 3, 2), R(3)]),
    "conv-transpose1d-padded-past-the-windows": (lambda lib, x, w: lib.nn.functional
                                                 .conv_transpose1d(x, w, dilation=2,
                                                                   output_padding=1) ** 2,
                                                 [R(1, 2, 4), R(2, 2, 3)]),
    "max-pool2d": (lambda lib, x: lib.nn.functional.max_pool2d(x ** 2, 2, padding=1) ** 2,
                   [R(2, 2, 5, 5)]),
    "max-pool1d": (lambda lib, x: lib.nn.functional.max_pool1d(x ** 2, 3, stride=2, dilation=2)
                   ** 2, [R(2, 2, 9)]),
    "avg-pool2d": (lambda lib, x: lib.nn.functional.avg_pool2d(x ** 2, 3, stride=2, padding=1)
                   ** 2, [R(2, 2, 5, 5)]),
    "adaptive-avg-pool2d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x ** 2, (3, 2))
                            ** 2, [R(2, 2, 5, 7)]),
    "adaptive-avg-pool1d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x ** 2, 4) ** 2,
                            [R(2, 2, 7)]),
    "fold": (lambda lib, x: lib.nn.functional.fold(x ** 2, (4, 5), 2) ** 2, [R(1, 8, 12)]),
    "unfold-im2col": (lambda lib, x: lib.nn.functional.unfold(x ** 2, 2, padding=1) ** 2,
                      [R(1, 2, 3, 3)]),
}
for _reduce in ("sum", "mean", "amax", "amin"):
    for _self in (True, False):
        CASES[f"scatter-reduce-{_reduce}-{_self}"] = (
            lambda lib, a, b, reduce=_reduce, include=_self: (a ** 2).scatter_reduce(
                0, lib.tensor([0, 1, 0, 2]), b ** 3, reduce, include_self=include) ** 2,
            [R(3), R(4)])


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivatives_match_torch(name):
    fn, arrays = CASES[name]
    assert_matches_torch(fn, arrays)


@pytest.mark.parametrize("name", ["einsum-broadcast", "inverse", "solve-broadcast", "eigh",
                                  "svd-tall", "fft-padded", "irfft-even", "conv2d",
                                  "max-pool2d", "adaptive-avg-pool2d", "unfold"])
def test_float32_second_derivatives_match_torch(name):
    fn, arrays = CASES[name]
    assert_matches_torch(fn, arrays, rtol=2e-4, atol=2e-4, dtype="float32")


def _second_derivative_by_differences(fn, arrays, seed, step=1e-6):
    """(x.grad of <∇f(x), v> by double backward, its central differences), f = Σ u·fn."""
    rng = np.random.default_rng(seed)
    outs = _as_list(fn(mg, *[mg.tensor(a) for a in arrays]))
    us = [rng.standard_normal(o.shape) for o in outs]
    vs = [rng.standard_normal(a.shape) for a in arrays]

    def inner(values, keep):
        leaves = [mg.tensor(a, requires_grad=True) for a in values]
        grads = mg.autograd.grad(_as_list(fn(mg, *leaves)), leaves, grad_outputs=us,
                                 create_graph=keep)
        total = sum((g * mg.tensor(v)).sum() for g, v in zip(grads, vs))
        return total, leaves
    total, leaves = inner(arrays, True)
    total.backward()
    numerical = []
    for k, a in enumerate(arrays):
        slope = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            moved = []
            for sign in (1, -1):
                shifted = [b.copy() for b in arrays]
                shifted[k][i] += sign * step
                moved.append(inner(shifted, False)[0].item())
            slope[i] = (moved[0] - moved[1]) / (2 * step)
        numerical.append(slope)
    return [t.grad.numpy() for t in leaves], numerical


def assert_matches_differences(fn, arrays, seed=0, rtol=1e-5, atol=1e-6):
    ours, numerical = _second_derivative_by_differences(fn, arrays, seed)
    for a, b in zip(ours, numerical):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@settings(max_examples=8)
@given(n=st.integers(1, 3), batch=st.sampled_from([(), (1,), (2,)]), seed=st.integers(0, 999))
def test_solves_second_derivative_agrees_with_finite_differences(n, batch, seed):
    draw = np.random.default_rng(seed)
    a = draw.standard_normal(batch + (n, n)) + 2 * n * np.eye(n)
    b = draw.standard_normal((n, 2))
    assert_matches_differences(
        lambda lib, a, b: (lib.linalg.det(a).unsqueeze(-1).unsqueeze(-1) * lib.linalg.solve(a, b),
                         lib.linalg.inv(a).sin(), lib.linalg.slogdet(a)[1]), [a, b], seed)


@settings(max_examples=8)
@given(batch_a=st.sampled_from([1, 2]), batch_b=st.sampled_from([1, 2]),
       k=st.integers(0, 3), seed=st.integers(0, 999))
def test_einsum_second_derivative_agrees_with_finite_differences(batch_a, batch_b, k, seed):
    # broadcast batch dims, a diagonal, an empty contraction (k = 0)
    draw = np.random.default_rng(seed)
    a, b = draw.standard_normal((batch_a, k, k)), draw.standard_normal((batch_b, k, 3))
    assert_matches_differences(lambda lib, a, b: (lib.einsum("bij,bjk->bik", a, b).tanh(),
                                                lib.einsum("bii,bik->bk", a, b) ** 2),
                               [a, b], seed)


@settings(max_examples=6)
@given(stride=st.integers(1, 2), padding=st.integers(0, 1), size=st.integers(3, 5),
       seed=st.integers(0, 999))
def test_conv_and_pooling_second_derivative_agrees_with_finite_differences(stride, padding,
                                                                           size, seed):
    draw = np.random.default_rng(seed)
    x, w = draw.standard_normal((1, 2, size, size)), draw.standard_normal((2, 2, 2, 2))
    F = mg.nn.functional
    assert_matches_differences(
        lambda lib, x, w: F.adaptive_avg_pool2d(F.conv2d(x, w, stride=stride, padding=padding)
                                              .tanh(), 2) ** 2
        + F.conv_transpose2d(x.sin(), w, stride=stride).sum(), [x, w], seed)


@settings(max_examples=6)
@given(n=st.integers(1, 6), seed=st.integers(0, 999))
def test_fourier_second_derivative_agrees_with_finite_differences(n, seed):
    draw = np.random.default_rng(seed)
    x = draw.standard_normal((2, n))
    assert_matches_differences(
        lambda lib, x: (lib.fft.irfft(lib.fft.rfft(x.sin(), n=n + 1) ** 2, n=n).cos(),
                      lib.view_as_real(lib.fft.fft(x * x, dim=0)).sin()), [x], seed)


def test_det_at_a_singular_matrix_is_differentiated_through_its_cofactors():
    # det² at a singular A: the Hessian is 2 cof ⊗ cof, which torch's plain backward of det
    # (zeros at a singular A) drops; finite differences keep it
    assert_matches_differences(lambda lib, a: lib.linalg.det(a) ** 2, [SINGULAR.copy()])
    assert_matches_differences(lambda lib, a: lib.linalg.det(a), [np.stack([SINGULAR, R(3, 3)])])


def test_decompositions_agree_with_finite_differences():
    a = R(3, 3)
    assert_matches_differences(lambda lib, a: (lib.linalg.eigvalsh(a + a.mT),
                                               lib.linalg.svdvals(a), lib.linalg.matrix_exp(a)),
                               [a])
    eye = np.eye(3)
    assert_matches_differences(lambda lib, a: lib.linalg.cholesky(a @ a.mT + 3 * lib.tensor(eye))
                               .exp(), [a])


WEIGHT = R(1, 2, 2, 2)


def _third_order(lib, fn, arrays, seed=0):
    # x.grad of <∇<∇Σ fn, w>, u>: two create_graph passes, then a plain one
    draw = np.random.default_rng(seed)
    (x,) = _leaves(lib, arrays, "float64")
    (g,) = lib.autograd.grad(fn(lib, x).sum(), x, create_graph=True)
    (h,) = lib.autograd.grad((g * lib.tensor(draw.standard_normal(x.shape))).sum(), x,
                             create_graph=True)
    (h * lib.tensor(draw.standard_normal(x.shape))).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.nn.functional.conv2d(x ** 2, lib.tensor(WEIGHT), padding=1) ** 2,
    lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x ** 3, 2) ** 2,
    lambda lib, x: lib.nn.functional.fold(lib.nn.functional.unfold(x ** 2, 2), (3, 4), 2) ** 3,
    lambda lib, x: lib.diag_embed(x.diagonal(0, 2, 3) ** 3) ** 2,
    lambda lib, x: x.unfold(3, 2, 1) ** 4,
], ids=["conv2d", "adaptive-avg-pool", "fold-unfold", "diagonal", "unfold"])
def test_the_linear_nodes_differentiate_each_other_to_third_order(fn):
    x = R(1, 2, 3, 4)
    np.testing.assert_allclose(_third_order(mg, fn, [x]), _third_order(torch, fn, [x]),
                               rtol=1e-10, atol=1e-11)


def _critic(lib, params):
    # conv → leaky relu → max pool → conv → tanh → avg pool → linear: WGAN-GP's critic
    F = lib.nn.functional
    w1, b1, w2, b2, w3, b3 = params

    def critic(x):
        h = F.max_pool2d(F.leaky_relu(F.conv2d(x, w1, b1, padding=1), 0.2), 2)
        h = F.avg_pool2d(F.conv2d(h, w2, b2, padding=1).tanh(), 2, stride=1)
        return F.linear(h.flatten(1), w3, b3)
    return critic


def _gradient_penalty(lib, dtype, arrays):
    real, fake, mix, *weights = arrays
    params = _leaves(lib, weights, dtype)
    critic = _critic(lib, params)
    as_tensor = (lambda a: torch.tensor(a, dtype=getattr(torch, dtype))) if lib is torch \
        else (lambda a: mg.tensor(a, dtype=getattr(mg, dtype)))
    x = as_tensor(mix) * as_tensor(real) + (1 - as_tensor(mix)) * as_tensor(fake)
    x.requires_grad_(True)
    scores = critic(x)
    (g,) = lib.autograd.grad(scores.sum(), x, create_graph=True)
    norm = (g.flatten(1).pow(2).sum(1) + 1e-12).sqrt()
    loss = scores.mean() + 10 * ((norm - 1) ** 2).mean()
    loss.backward()
    return [loss.detach().numpy()] + [p.grad.numpy() for p in params]


@pytest.mark.parametrize("dtype, rtol, atol", [("float64", 1e-10, 1e-12),
                                               ("float32", 2e-4, 2e-5)])
def test_wgan_gp_gradient_penalty_through_a_conv_net_matches_torch(dtype, rtol, atol):
    draw = np.random.default_rng(7)
    arrays = [draw.standard_normal((3, 2, 6, 6)), draw.standard_normal((3, 2, 6, 6)),
              draw.uniform(size=(3, 1, 1, 1)),
              draw.standard_normal((4, 2, 3, 3)) * 0.4, draw.standard_normal(4) * 0.1,
              draw.standard_normal((3, 4, 3, 3)) * 0.3, draw.standard_normal(3) * 0.1,
              draw.standard_normal((1, 12)) * 0.3, draw.standard_normal(1) * 0.1]
    ours, theirs = (_gradient_penalty(lib, dtype, arrays) for lib in (mg, torch))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)

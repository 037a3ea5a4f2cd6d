"""ops/statistics.py and ops/creation.py against PyTorch: the trapezoidal rule, cov and
corrcoef, the histograms, nanmedian, the quantiles (float64 values and gradients, dtypes,
empty and 0-d inputs, NaN, errors), and the factories: asarray, scalar_tensor, logspace,
the triangle indices, cartesian_prod, combinations, block_diag, the windows, empty_strided,
range, concat, unravel_index."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from strategies import shapes

import microgradnorm as mg
from test_torch_more import check, same
from torch_compare import pair, same_error


def close(ours, theirs, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(np.asarray(ours, np.float64), np.asarray(theirs, np.float64),
                               rtol=rtol, atol=atol)


def normal(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ----- trapezoid, cumulative_trapezoid --------------------------------------------------------
@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoidal_rules_match_torch_with_gradients(name):
    ours, theirs = getattr(mg, name), getattr(torch, name)
    y, yt = pair(normal((3, 5)))
    check(ours(y), theirs(yt), [(y, yt)])
    y, yt = pair(normal((3, 5, 2), 1))
    check(ours(y, dx=0.25, dim=1), theirs(yt, dx=0.25, dim=1), [(y, yt)])
    for x_data in [np.cumsum(np.abs(normal(5, 2))), np.cumsum(np.abs(normal((3, 5), 3)), 1)]:
        y, yt = pair(normal((3, 5), 4))
        x, xt = pair(x_data)
        check(ours(y, x), theirs(yt, xt), [(y, yt), (x, xt)])
    y, yt = pair(normal((4, 3), 5))
    x, xt = pair(np.array([0.0, 0.5, 2.0, 2.5]))
    check(ours(y, x, dim=0), theirs(yt, xt, dim=0), [(y, yt), (x, xt)])


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])
def test_trapezoidal_rules_dtypes_corners_and_errors_match_torch(name):
    def call(lib, *args, **kwargs):
        return getattr(lib, name)(*args, **kwargs)
    y = np.array([1.0, 2.0, 3.0])
    for data in [np.array([1, 2, 3]), y.astype(np.float32), np.zeros(0), np.zeros((2, 0), int),
                 np.array([[1.0], [2.0]]), np.array([2.5])]:
        same(call, data)
        same(lambda lib, data: call(lib, data, dx=2), data)
    same(lambda lib, y, x: call(lib, y, x), y.astype(np.float32), np.array([0.0, 1, 3]))
    same(lambda lib, y, x: call(lib, y, x), np.array([1, 2, 3]), np.array([0, 1, 3]))
    same(lambda lib, y: call(lib, y, dx=lib.tensor(2.0)), y)
    for bad in [lambda lib, y: call(lib, y, dim=1), lambda lib, y: call(lib, y[0]),
                lambda lib, y: call(lib, y, lib.tensor([0.0, 1.0])),
                lambda lib, y: call(lib, y.bool()), lambda lib, y: call(lib, y, dx=True),
                lambda lib, y: call(lib, y, lib.tensor([[0.0, 1, 2]] * 2))]:
        same(bad, y)                           # a 0-d y, a mismatched x, bool, dims
    with pytest.raises(TypeError):
        getattr(mg, name)(mg.tensor(y), mg.tensor(y), dx=1.0)


def test_complex_scans_and_cumulative_trapezoid_match_torch_with_gradients():
    # complex stays complex (not cast to int64); the gradient is torch's grad · conj(∂out/∂x)
    rng = np.random.default_rng(4)
    data = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    data[1, 2] = 0                                   # the products' gradient at a zero
    upstream = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    for call in [lambda lib, x: lib.cumulative_trapezoid(x), lambda lib, x: lib.cumsum(x, 1),
                 lambda lib, x: lib.cumprod(x, 1), lambda lib, x: lib.prod(x, 1),
                 lambda lib, x: lib.prod(x), lambda lib, x: x.cumprod(0)]:
        x, xt = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")           # NumPy's ComplexWarning of a real cast
            ours, theirs = call(mg, x), call(torch, xt)
            assert str(ours.dtype) == "torch.complex128" == str(theirs.dtype)
            np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                                       rtol=1e-12, atol=1e-12)
            grad = upstream.reshape(-1)[:theirs.numel()].reshape(theirs.shape)
            ours.backward(grad)
            theirs.backward(torch.tensor(grad))
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    same(lambda lib, x: lib.cumsum(x, 0), data.astype(np.complex64), rtol=2e-6)


# ----- cov, corrcoef --------------------------------------------------------------------------
def test_cov_and_corrcoef_match_torch_with_gradients():
    for data in [normal((3, 6)), normal(6, 1), normal((1, 4), 2)]:
        x, xt = pair(data)
        check(mg.cov(x), torch.cov(xt), [(x, xt)])
        x, xt = pair(data)
        check(x.corrcoef(), xt.corrcoef(), [(x, xt)])
    fweights = np.array([1, 2, 0, 3, 1, 1])
    aweights = np.abs(normal(6, 3)) + 0.1
    for correction in [0, 1, 2]:
        x, xt = pair(normal((2, 6), 4))
        a, at = pair(aweights)
        check(mg.cov(x, correction=correction, fweights=mg.tensor(fweights), aweights=a),
              torch.cov(xt, correction=correction, fweights=torch.tensor(fweights),
                        aweights=at), [(x, xt), (a, at)])
        x, xt = pair(normal((2, 6), 5))
        check(mg.cov(x, correction=correction, fweights=mg.tensor(fweights)),
              torch.cov(xt, correction=correction, fweights=torch.tensor(fweights)), [(x, xt)])


def test_cov_and_corrcoef_dtypes_corners_and_errors_match_torch():
    m = np.array([[1.0, 2, 4], [3, 1, 0]])
    for data in [m.astype(np.int64), m.astype(np.float32), np.array(1.0), np.zeros(0),
                 np.array([[1.0, 2, 4], [3, 3, 3]]), np.array([5.0])]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # degrees of freedom <= 0: both warn
            same(lambda lib, x: lib.cov(x), data, rtol=1e-6)
            same(lambda lib, x: lib.corrcoef(x), data, rtol=1e-6)
    same(lambda lib, x, w: lib.cov(x, aweights=w), m.astype(np.float32), np.array([1.0, 2, 1]),
         rtol=1e-6)
    for kwargs in [{"fweights": np.array([1.0, 2, 1])}, {"fweights": np.array([1, -2, 1])},
                   {"aweights": np.array([1.0, -2, 1])}, {"aweights": np.array([0.0, 0, 0])},
                   {"aweights": np.array([1, 2, 1])}, {"fweights": np.array([1, 2])},
                   {"fweights": np.array([[1, 2, 1]])}, {"fweights": np.array([True] * 3)}]:
        same(lambda lib, x, kwargs: lib.cov(x, **{k: lib.tensor(v) for k, v in kwargs.items()}),
             m, kwargs)
    for data in [m[None], np.array([True, False])]:
        same(lambda lib, x: lib.cov(x), data)
        same(lambda lib, x: lib.corrcoef(x), data)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert np.isinf(mg.cov(mg.tensor([[1.0, 2, 4]]), correction=3).item())


# ----- histc, histogram -----------------------------------------------------------------------
def test_histc_counts_as_torch():
    data = np.random.default_rng(1).standard_normal(500).astype(np.float32) * 3
    for args in [(7,), (13, -2, 2.5), (4, 0, 3), (1,), (100,)]:
        for dtype in ["float32", "float64", "float16"]:
            same(lambda lib, x, args: lib.histc(x, *args), data.astype(dtype), args)
            same(lambda lib, x, args: x.histc(*args), data.astype(dtype), args)
    edges = np.array([0.0, 3.0, 1.5, 0.75, 2.25, -0.0, 3.0000002, -1e-9], np.float32)
    for data, kwargs in [(edges, {"bins": 4, "min": 0, "max": 3}),
                         (np.array([1.0, 2, 1]), {}), (np.ones(3), {}), (np.zeros(0), {"bins": 4}),
                         (np.array([1.0, 2, np.inf]), {"bins": 4, "min": 0, "max": 3}),
                         (np.array([1.0, np.nan, 2.0]), {"bins": 3, "min": 0, "max": 3})]:
        same(lambda lib, x, kwargs: lib.histc(x, **kwargs), data, kwargs)
    for bad, kwargs in [(np.array([1, 2]), {"bins": 4, "min": 0, "max": 3}),
                        (np.ones(2), {"bins": 0}), (np.ones(2), {"bins": 4, "min": 3, "max": 0}),
                        (np.array([1.0, np.nan]), {"bins": 4}),
                        (np.array([1.0, np.inf]), {"bins": 4})]:
        same(lambda lib, x, kwargs: lib.histc(x, **kwargs), bad, kwargs)
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    assert not mg.histc(x, 4).requires_grad


def test_histogram_matches_torch_in_counts_edges_weights_and_density():
    data = np.random.default_rng(2).standard_normal((4, 50)).astype(np.float32) * 2
    weight = np.random.default_rng(3).uniform(0, 2, (4, 50)).astype(np.float32)
    bins = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, 4.0], np.float32)
    for call in [lambda lib, x, w, b: lib.histogram(x, 9), lambda lib, x, w, b: x.histogram(4),
                 lambda lib, x, w, b: lib.histogram(x, 5, range=(-1.0, 1.5)),
                 lambda lib, x, w, b: lib.histogram(x, 6, density=True),
                 lambda lib, x, w, b: lib.histogram(x, b),
                 lambda lib, x, w, b: lib.histogram(x, b, density=True),
                 lambda lib, x, w, b: lib.histogram(x, 7, weight=w),
                 lambda lib, x, w, b: lib.histogram(x, b, weight=w, density=True)]:
        for dtype in ["float32", "float64"]:
            ours, theirs = [call(lib, *[lib.tensor(a.astype(dtype)) for a in (data, weight,
                                                                              bins)])
                            for lib in (mg, torch)]
            assert type(ours).__name__ == "histogram" and ours.hist is ours[0]
            for a, b in zip(ours, theirs):
                assert str(a.dtype) == str(b.dtype)
                close(a.numpy(), b.numpy(), rtol=3e-7, atol=0)   # linspace's edges: an ulp
    for data, args in [(np.array([1.0, 2, 1]), (4,)), (np.ones(3), (4,)), (np.zeros(0), (4,)),
                       (np.array([0.0, 1.0, 0.25, 0.5, 0.75]), (4,)),
                       (np.array([[1.0, 2], [1, 5]]), (2,))]:
        same(lambda lib, x, args: lib.histogram(x, *args)[0], data, args)
        same(lambda lib, x, args: lib.histogram(x, *args)[1], data, args)
    for call in [lambda lib, x: lib.histogram(x.long(), 2), lambda lib, x: lib.histogram(x, 0),
                 lambda lib, x: lib.histogram(x, 4, range=(3.0, 0.0)),
                 lambda lib, x: lib.histogram(x, lib.tensor([0.0, 1.0], dtype=lib.float32)),
                 lambda lib, x: lib.histogram(x / 0 * 0, 4)]:
        same(call, np.array([1.0, 2.0, 1.0]))


def test_histogram_without_bins_takes_torchs_100():
    """``hy, hx = torch.histogram(t, density=True)``, as activation plots call it."""
    data = np.random.default_rng(5).standard_normal(400) * 2
    for call in [lambda lib, x: lib.histogram(x, density=True), lambda lib, x: lib.histogram(x),
                 lambda lib, x: x.histogram(range=(-2.0, 2.0))]:
        ours, theirs = call(mg, mg.tensor(data)), call(torch, torch.tensor(data))
        assert ours.hist.shape == (100,) and ours.bin_edges.shape == (101,)
        for a, b in zip(ours, theirs):
            close(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)   # linspace's edges: an ulp


@pytest.mark.parametrize("name", ["histc", "histogram"])
def test_histograms_near_the_dtypes_limits_count_as_torch_without_warnings(name):
    # a width past the dtype's max: torch's edges are NaN and nothing counts; a range a half
    # tensor cannot hold: torch's RuntimeError
    def call(lib, x, low, high):
        if name == "histc":
            return lib.histc(x, 2, low, high)
        return lib.histogram(x, 2, range=(low, high))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for low, high in [(-3e38, 3e38), (-1e38, 3e38), (0.0, 3e38)]:
            same(call, np.array([1.0, 2.0], np.float32), low, high)
        same(call, np.array([1.0, 2.0], np.float16), 0.0, 1e6)
        same(call, np.array([1.0, 2.0], np.float16), -1e6, 1.0)
        same(call, np.array([1.0, 2.0], np.float16), 0.0, 6e4)
    if name == "histogram":                          # the edge search with an overflowing guess
        same(call, np.array([2e38, 3e38, 1.0], np.float32), 0.0, 3e38)


def test_histogram_refuses_a_bins_tensor_of_no_bin_or_with_a_range_as_torch():
    for call in [lambda lib, x: lib.histogram(x, lib.tensor([1.0])),
                 lambda lib, x: lib.histogram(x, lib.tensor([], dtype=lib.float64)),
                 lambda lib, x: lib.histogram(x, lib.tensor([0.0, 3.0]), range=(0.0, 1.0))]:
        same(call, np.array([1.0, 2.0]))


def test_asarray_names_the_arrays_device_when_it_refuses_to_alias():
    with pytest.raises(ValueError, match="float32 on cpu with copy=False"):
        mg.asarray(np.array([1, 2]), dtype=mg.float32, copy=False)


# ----- nanmedian ------------------------------------------------------------------------------
def test_nanmedian_matches_torch_with_its_gradient():
    data = np.array([[1.0, np.nan, 3.0, 2.0], [5.0, 4.0, 4.0, np.nan], [2.0, 2.0, 7.0, 1.0]])
    x, xt = pair(data)
    check(mg.nanmedian(x), torch.nanmedian(xt), [(x, xt)])
    for dim, keepdim in [(1, False), (0, True), (-1, True)]:
        x, xt = pair(data)
        ours, theirs = x.nanmedian(dim, keepdim), xt.nanmedian(dim, keepdim)
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
        check(ours.values, theirs.values, [(x, xt)])
    for data in [np.array([1, 3, 2, 2]), np.zeros(0), np.array([np.nan, np.nan]),
                 np.array(3.5), np.array([1.5, np.nan], np.float32)]:
        same(lambda lib, x: lib.nanmedian(x), data)
    same(lambda lib, x: lib.nanmedian(x, 0).values, np.array([np.nan, np.nan]))
    same(lambda lib, x: lib.nanmedian(x, 0).values, np.array(3.5))
    same(lambda lib, x: lib.nanmedian(x, 1).values, np.zeros((2, 0)))
    same(lambda lib, x: lib.nanmedian(x, 2), np.zeros((2, 3)))
    with pytest.raises(IndexError):              # as mg.median (torch: int64's minimum)
        mg.nanmedian(mg.zeros(0, dtype=mg.int64))
    x, xt = pair(np.array([np.nan, np.nan, 1.0]))
    check(mg.nanmedian(x), torch.nanmedian(xt), [(x, xt)])
    assert type(mg.nanmedian(mg.ones(2, 2), 0)).__name__ == "nanmedian"


# ----- quantile, nanquantile ------------------------------------------------------------------
MODES = ["linear", "lower", "higher", "nearest", "midpoint"]


@pytest.mark.parametrize("mode", MODES)
def test_quantiles_match_torch_with_gradients(mode):
    q = np.array([0.1, 0.5, 0.77, 1.0, 0.0, 0.375])
    for name in ["quantile", "nanquantile"]:
        data = normal((3, 5), 2)
        if name == "nanquantile":
            data[0, 1], data[2] = np.nan, np.nan
        for kwargs in [{"dim": 1}, {"dim": 0, "keepdim": True}, {}, {"keepdim": True}]:
            x, xt = pair(data)
            qm, qt = pair(q)
            check(getattr(mg, name)(x, qm, interpolation=mode, **kwargs),
                  getattr(torch, name)(xt, qt, interpolation=mode, **kwargs),
                  [(x, xt), (qm, qt)])
            x, xt = pair(data)
            check(getattr(x, name)(0.3, interpolation=mode, **kwargs),
                  getattr(xt, name)(0.3, interpolation=mode, **kwargs), [(x, xt)])
    data = normal((3, 5), 4)
    data[1, 2] = np.nan                                      # quantile: NaN for that row
    same(lambda lib, x: lib.quantile(x, lib.tensor([0.2, 0.9]), dim=1, interpolation=mode),
         data)
    same(lambda lib, x: lib.quantile(x, 0.5, dim=-1, keepdim=True), normal((2, 3, 4), 5))


def test_quantiles_corners_and_errors_match_torch():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    for call in [lambda lib, x: lib.quantile(x, 0.5), lambda lib, x: lib.quantile(x.float(), 0.25),
                 lambda lib, x: lib.quantile(x[0], 0.5), lambda lib, x: lib.quantile(x[0], 0.5, 0),
                 lambda lib, x: lib.quantile(x, lib.tensor(0.3, dtype=lib.float64), dim=0),
                 lambda lib, x: lib.nanquantile(x / 0 * 0, 0.5),
                 lambda lib, x: lib.quantile(x, 1.5), lambda lib, x: lib.quantile(x, -0.1),
                 lambda lib, x: lib.quantile(x, lib.tensor([1.5], dtype=lib.float64)),
                 lambda lib, x: lib.quantile(x.long(), 0.5),
                 lambda lib, x: lib.quantile(x.half(), 0.5),
                 lambda lib, x: lib.quantile(x, lib.tensor([[0.5]], dtype=lib.float64)),
                 lambda lib, x: lib.quantile(x, lib.tensor([0.5])),
                 lambda lib, x: lib.quantile(x[:0], 0.5),
                 lambda lib, x: lib.quantile(x, 0.5, interpolation="foo"),
                 lambda lib, x: lib.quantile(x, 0.5, dim=1)]:
        same(call, x)


# ----- the factories --------------------------------------------------------------------------
def test_asarray_shares_memory_and_follows_torchs_flags():
    a = np.array([1.0, 2.0])
    t = mg.asarray(a)
    a[0] = 5.0
    assert t[0].item() == 5.0 and mg.asarray(a, copy=True).numpy() is not a
    for data in [[1, 2], [1.0, 2], 3.5, np.int32(3), [True, 2], np.array([1.0, 2]), "a"]:
        same(lambda lib, d: lib.asarray(d), data)
    same(lambda lib, d: lib.asarray(d, dtype=lib.float32), np.array([1.0, 2]))
    for data in [np.array([1.0, 2]), [1.0, 2]]:
        same(lambda lib, d: lib.asarray(d, dtype=lib.float32, copy=False), data)
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    assert mg.asarray(x) is x and mg.asarray(x, dtype=mg.float64).grad_fn is not None
    copied = mg.asarray(x, copy=True)
    assert copied is not x and copied.grad_fn is not None
    with pytest.raises(ValueError):
        mg.asarray(x, dtype=mg.float64, copy=False)
    y = mg.tensor([1.0])
    assert mg.asarray(y, requires_grad=True) is y and y.requires_grad
    leaf = mg.asarray([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    assert leaf.is_leaf and leaf.requires_grad and leaf.dtype == mg.float64


def test_scalar_tensor_and_logspace_match_torch():
    for s, kwargs in [(3, {}), (3.5, {"dtype": "float64"}), (True, {}), (3, {"dtype": "int32"}),
                      ("a", {}), (1 + 2j, {}), (1e40, {}), (-1, {"dtype": "uint8"})]:
        same(lambda lib, s, kwargs: lib.scalar_tensor(
            s, **{k: getattr(lib, v) for k, v in kwargs.items()}), s, kwargs)
    same(lambda lib: lib.scalar_tensor(lib.tensor(2.0)))
    same(lambda lib: lib.scalar_tensor(lib.tensor([2.0])))
    assert mg.scalar_tensor(2, requires_grad=True).requires_grad
    for args, kwargs in [((0, 2, 3), {}), ((0, 2, 3), {"base": 2}), ((0, 2, 3), {"dtype": "int64"}),
                         ((0, 2, 0), {}), ((0, 2, 1), {}), ((0, 2, -1), {}),
                         ((-1, 2, 4), {"base": -2}), ((0.5, 2, 4), {"dtype": "float64"}),
                         ((0.3, 7.1, 50), {}), ((0.3, 7.1, 51), {"dtype": "float64"}),
                         ((2.7, 0.1, 9), {"base": 3.0}), ((0.5, 2.7, 5), {"dtype": "int32"}),
                         ((0, 2, 5), {"dtype": "float16"}), ((0, 1, 2), {"base": 1j})]:
        same(lambda lib, args, kwargs: lib.logspace(*args, **{
            k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}), args, kwargs,
             rtol=2e-6)
    assert mg.logspace(0, 1, 3, requires_grad=True).is_leaf


def test_triangle_indices_cartesian_prod_and_combinations_match_torch():
    for name in ["tril_indices", "triu_indices"]:
        for args in [(3, 3), (3, 4, 1), (3, 4, -5), (0, 4), (4, 3, -1), (-1, 3), (5, 2, 10),
                     (3, 2.0)]:
            same(lambda lib, args, name: getattr(lib, name)(*args), args, name)
        for dtype in ["int32", "float32"]:
            same(lambda lib, name, dtype: getattr(lib, name)(3, 3, dtype=getattr(lib, dtype)),
                 name, dtype)
    a, at = pair(np.array([1.0, 2.0]))
    b, bt = pair(np.array([3.0, 4.0, 5.0]))
    check(mg.cartesian_prod(a, b, a), torch.cartesian_prod(at, bt, at), [(a, at), (b, bt)])
    for call in [lambda lib: lib.cartesian_prod(lib.tensor([1, 2])),
                 lambda lib: lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3.0])),
                 lambda lib: lib.cartesian_prod(lib.tensor([[1, 2]]), lib.tensor([3, 4])),
                 lambda lib: lib.cartesian_prod(), lambda lib: lib.cartesian_prod(
                     lib.tensor(1.0), lib.tensor([3.0])),
                 lambda lib: lib.cartesian_prod(lib.tensor([1.0]), lib.zeros(0))]:
        same(call)
    for r in [0, 1, 2, 3, 4, -1]:
        for replacement in [False, True]:
            same(lambda lib, r, rep: lib.combinations(lib.tensor([1, 2, 3]), r, rep), r,
                 replacement)
    same(lambda lib: lib.combinations(lib.tensor([[1, 2, 3]])))
    same(lambda lib: lib.combinations(lib.zeros(0), 2))
    x, xt = pair(normal(4, 6))
    check(mg.combinations(x, 3, True), torch.combinations(xt, 3, True), [(x, xt)])


def test_block_diag_matches_torch():
    blocks = [normal((2, 2)), normal(3, 1), normal(()), normal((2, 1), 2), np.zeros((0, 2))]
    pairs = [pair(b) for b in blocks]
    check(mg.block_diag(*[p[0] for p in pairs]), torch.block_diag(*[p[1] for p in pairs]),
          pairs[:4])
    for call in [lambda lib: lib.block_diag(), lambda lib: lib.block_diag(lib.tensor(5),
                                                                          lib.tensor([1, 2])),
                 lambda lib: lib.block_diag(lib.tensor([[[1]]])),
                 lambda lib: lib.block_diag(lib.tensor([[1, 2]], dtype=lib.int32),
                                            lib.tensor([True])),
                 lambda lib: lib.block_diag(lib.tensor([[1, 2]]), lib.tensor([[1.5]])),
                 lambda lib: lib.block_diag(lib.tensor(5.0, dtype=lib.float64),
                                            lib.tensor([1.0, 2.0]))]:
        same(call)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
def test_windows_match_torch(name):
    for n in [0, 1, 2, 5, 10, 33]:
        for periodic in [True, False]:
            for dtype in ["float32", "float64"]:
                ours = getattr(mg, name)(n, periodic, dtype=getattr(mg, dtype))
                theirs = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
                assert str(ours.dtype) == str(theirs.dtype)
                close(ours.numpy(), theirs.numpy(), rtol=0,     # kaiser: torch's float32 I0
                      atol=(4e-15 if dtype == "float64" else 6e-7) if "kaiser" in name else
                      1e-15 if dtype == "float64" else 2e-7)
    for call in [lambda lib: getattr(lib, name)(-1), lambda lib: getattr(lib, name)(5.0),
                 lambda lib: getattr(lib, name)(5, dtype=lib.int64), lambda lib: getattr(
                     lib, name)(7, dtype=lib.float16), lambda lib: getattr(lib, name)(9)]:
        same(call, rtol=2e-3)
    assert getattr(mg, name)(4, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match=f"^{name} requires non-negative"):
        getattr(mg, name)(-1)                        # the error names the window asked for


def test_window_parameters_match_torch():
    same(lambda lib: lib.hamming_window(5, False, 0.5, 0.4))
    same(lambda lib: lib.hamming_window(8, True, 0.6, 0.3, dtype=lib.float64))
    same(lambda lib: lib.kaiser_window(9, periodic=False, beta=8.0, dtype=lib.float64),
         rtol=1e-14)


def test_empty_strided_range_concat_and_unravel_index_match_torch():
    assert mg.empty_strided((2, 3), (3, 1)).shape == (2, 3)
    assert mg.empty_strided((2, 3), (3, 1), dtype=mg.int64).dtype == mg.int64
    assert mg.empty_strided((2, 1), (1, 5)).shape == (2, 1)
    assert mg.empty_strided((), ()).shape == () and mg.empty_strided((2, 0), (7, 9)).size == 0
    same_error(lambda: mg.empty_strided((2, 3), (3,)), lambda: torch.empty_strided((2, 3), (3,)))
    for size, stride in [((2, 3), (1, 2)), ((2, 2), (0, 0)), ((3, 2), (5, 2))]:
        made, theirs = mg.empty_strided(size, stride), torch.empty_strided(size, stride)
        assert (made.shape, made.stride()) == (tuple(theirs.shape), theirs.stride())
        assert made.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
    same_error(lambda: mg.empty_strided((2, 3), (-1, 2)),
               lambda: torch.empty_strided((2, 3), (-1, 2)))
    for args, kwargs in [((1, 4), {}), ((1, 4, 0.5), {}), ((1, 4), {"dtype": "int64"}),
                         ((0, 5, 2.5), {"dtype": "int64"}), ((4, 1, -1), {}), ((4, 1), {}),
                         ((1, 4, 0), {}), ((0, 1, 0.3), {}), ((0.1, 0.3, 0.1), {}),
                         ((0, 5, 2.5), {"dtype": "float64"}), ((1, 2), {"dtype": "bool"})]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)      # torch.range is deprecated
            same(lambda lib, args, kwargs: lib.range(*args, **{
                k: getattr(lib, v) for k, v in kwargs.items()}), args, kwargs)
    with pytest.warns(UserWarning, match="deprecated"):
        mg.range(0, 2)
    same(lambda lib: lib.concat([lib.tensor([[1]]), lib.tensor([[2]])], dim=1))
    same(lambda lib: lib.concat([lib.tensor([[1]]), lib.tensor([[2]])], axis=1))
    for indices, shape in [([4, 1], (2, 3)), (4, (2, 3)), ([6], (2, 3)), ([-1], (2, 3)),
                           ([-7], (2, 3)), ([1], 6), ([[1, 2]], (6,)), ([3, 5], (2, 2, 2)),
                           ([0], (0,)), ([1], (2, -3))]:
        same(lambda lib, i, s: lib.stack(list(lib.unravel_index(lib.tensor(i), s))), indices,
             shape)
    assert mg.unravel_index(mg.tensor([1]), ()) == ()
    for call in [lambda lib: lib.unravel_index(lib.tensor([1.0]), (2, 3)),
                 lambda lib: lib.unravel_index(lib.tensor([True]), (2, 3)),
                 lambda lib: lib.unravel_index(lib.tensor([3], dtype=lib.int32), (2, 3))[0],
                 lambda lib: lib.unravel_index(lib.tensor([3]), (2.0, 3))]:
        same(call)


@settings(max_examples=15, deadline=None)
@given(shape=shapes(1, 3, max_side=4))
def test_quantile_and_trapezoid_on_drawn_shapes(shape):
    data = np.random.default_rng(len(shape) + sum(shape)).standard_normal(shape)
    for dim in range(-len(shape), len(shape)):
        x, xt = pair(data)
        check(mg.quantile(x, 0.3, dim=dim), torch.quantile(xt, 0.3, dim=dim), [(x, xt)])
        x, xt = pair(data)
        check(mg.trapezoid(x, dim=dim), torch.trapezoid(xt, dim=dim), [(x, xt)])

"""torch's ``out=`` of the functions added to ``ops/out_arguments.py``'s rules (the linear
algebra, bitwise, special, histogram and sampling functions, the factories, the fft
transforms and ``split_with_sizes_copy``), each call made in torch and here: the values,
dtype, shape, ``out`` returned, its version moved, the resize warnings and the class of each
error compared at test time."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg

F64, F32, I64, C128 = torch.float64, torch.float32, torch.int64, torch.complex128


def _inputs():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 3, dtype=F64, generator=g)
    A = x @ x.T + 3 * torch.eye(3, dtype=F64)
    b = torch.randn(2, 3, 3, dtype=F64, generator=g)
    v = torch.randn(3, dtype=F64, generator=g)
    i = torch.tensor([[1, 2, 3], [4, 6, 8], [9, 12, 5]])
    edges = torch.tensor([-1.0, 0.0, 1.0], dtype=F64)
    return x, A, b, v, i, edges


def _cases():
    x, A, b, v, i, edges = _inputs()
    LU, pivots = torch.linalg.lu_factor(A)
    a, tau = torch.geqrf(x)
    return {
        "addbmm": ((x, b, b), {}), "addmv": ((v, x, v), {}), "addr": ((x, v, v), {}),
        "baddbmm": ((b, b, b), {}), "bitwise_and": ((i, i.flip(0)), {}),
        "bitwise_or": ((i, i.flip(0)), {}), "bitwise_xor": ((i, i.flip(0)), {}),
        "bitwise_left_shift": ((i, i % 4), {}), "bitwise_right_shift": ((i, i % 4), {}),
        "bitwise_not": ((i,), {}), "gcd": ((i, i.flip(1)), {}), "lcm": ((i, i.flip(1)), {}),
        "bucketize": ((x, edges), {}), "searchsorted": ((edges, x), {}),
        "cholesky": ((A,), {}), "complex": ((v, v.flip(0)), {}),
        "polar": ((v.abs(), v), {}), "conj_physical": ((x,), {}),
        "float_power": ((x.abs(), 2), {}), "frexp": ((x,), {}),
        "geqrf": ((x,), {}), "heaviside": ((x, x.flip(0)), {}),
        "histc": ((x,), {"bins": 4}), "histogram": ((x,), {"bins": 4}),
        "igamma": ((x.abs(), x.abs().T), {}), "igammac": ((x.abs(), x.abs().T), {}),
        # ldexp's exponent as a float, as torch's OpInfo gives it (an integer one trips an
        # internal assertion of torch's kernel for an out of another dtype)
        "inverse": ((A,), {}), "ldexp": ((x, (i % 5).to(x.dtype)), {}),
        "lu_unpack": ((LU, pivots), {}), "matrix_power": ((x, 3), {}),
        "mvlgamma": ((x.abs() + 2, 2), {}), "polygamma": ((1, x.abs() + 0.5), {}),
        "nanmean": ((x, 0), {}), "quantile": ((x, 0.3, 0), {}),
        "nanquantile": ((x, 0.3, 1), {}), "narrow_copy": ((x, 0, 1, 2), {}),
        "nonzero": ((i % 3,), {}), "norm": ((x,), {"dim": 0}), "ormqr": ((a, tau, x), {}),
        "renorm": ((x, 2, 0, 1.0), {}), "svd": ((x,), {}), "vdot": ((v, v.flip(0)), {}),
        "softmax": ((x, 0), {}), "log_softmax": ((x, 1), {}),
    }


CASES = _cases()


def _mg(value):
    if isinstance(value, torch.Tensor):
        return mg.tensor(value.detach().clone().numpy(), requires_grad=value.requires_grad)
    return value


def _outs(result, dtypes=None, shape=(0,)):
    results = result if isinstance(result, tuple) else (result,)
    dtypes = dtypes or [r.dtype for r in results]
    made = tuple(torch.zeros(shape, dtype=d) for d in dtypes)
    return made if isinstance(result, tuple) else made[0]


def _to_mg(out):
    return tuple(map(_mg, out)) if isinstance(out, tuple) else _mg(out)


def _call(library, name, args, kwargs, out):
    fn = getattr(library, name)
    if library is mg:
        args, kwargs = tuple(map(_mg, args)), {k: _mg(w) for k, w in kwargs.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args, **kwargs, out=out)
        except Exception as error:          # noqa: BLE001 (its class is compared)
            return error, caught
    return result, caught


def _resized(caught):
    return [str(w.message)[:40] for w in caught if "resized" in str(w.message)]


def _flat(out):
    return out if isinstance(out, tuple) else (out,)


def _same_values(ours, theirs):
    for o, t in zip(_flat(ours), _flat(theirs)):
        assert str(o.dtype) == str(t.dtype)
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(np.asarray(o.numpy(), dtype=complex),
                                   np.asarray(t.numpy(), dtype=complex), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("shape", [(0,), (2, 2)], ids=["empty", "resized"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_the_result_dtype(name, shape):
    args, kwargs = CASES[name]
    expected = getattr(torch, name)(*args, **kwargs)
    out_t = _outs(expected, shape=shape)
    out_m = _to_mg(out_t)
    versions = [o._version for o in _flat(out_m)]
    torch_versions = [o._version for o in _flat(out_t)]
    got_t, caught_t = _call(torch, name, args, kwargs, out_t)
    got_m, caught_m = _call(mg, name, args, kwargs, out_m)
    assert not isinstance(got_t, Exception), got_t
    assert not isinstance(got_m, Exception), got_m
    _same_values(out_m, out_t)
    assert all(g is o for g, o in zip(_flat(got_m), _flat(out_m)))
    assert isinstance(got_m, tuple) == isinstance(got_t, tuple)
    moved_t = [o._version > v for o, v in zip(_flat(out_t), torch_versions)]
    assert [o._version > v for o, v in zip(_flat(out_m), versions)] == moved_t
    assert bool(_resized(caught_m)) == bool(_resized(caught_t))


@pytest.mark.parametrize("dtype", [F32, I64, C128], ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_another_dtype(name, dtype):
    args, kwargs = CASES[name]
    expected = getattr(torch, name)(*args, **kwargs)
    count = len(_flat(expected))
    out_t = _outs(expected, [dtype] * count)
    got_t, _ = _call(torch, name, args, kwargs, out_t)
    out_m = _to_mg(out_t)
    got_m, _ = _call(mg, name, args, kwargs, out_m)
    if isinstance(got_t, Exception):
        assert isinstance(got_m, type(got_t)), (got_t, got_m)
    else:
        assert not isinstance(got_m, Exception), got_m
        _same_values(out_m, out_t)


@pytest.mark.parametrize("name", sorted(n for n, (args, _) in CASES.items()
                                        if any(isinstance(a, torch.Tensor)
                                               and a.is_floating_point() for a in args)))
def test_an_input_that_requires_grad(name):
    args, kwargs = CASES[name]
    args = tuple(a.clone().requires_grad_() if isinstance(a, torch.Tensor)
                 and a.is_floating_point() else a for a in args)
    expected = getattr(torch, name)(*args, **kwargs)
    got_t, _ = _call(torch, name, args, kwargs, _outs(expected))
    got_m, _ = _call(mg, name, args, kwargs, _to_mg(_outs(expected)))
    assert isinstance(got_m, Exception) == isinstance(got_t, Exception), (got_t, got_m)
    if isinstance(got_t, Exception):
        assert isinstance(got_m, type(got_t))


def test_an_out_that_overlaps_an_input():
    x = torch.randn(3, 3, dtype=F64)
    got_t, _ = _call(torch, "renorm", (x, 2, 0, 1.0), {}, x[1:].reshape(-1)[:4].view(2, 2))
    xm = _mg(x)
    got_m, _ = _call(mg, "renorm", (xm, 2, 0, 1.0), {}, xm[1:].reshape(-1)[:4].view(2, 2))
    assert isinstance(got_t, RuntimeError) and isinstance(got_m, RuntimeError)


def test_a_bad_out_is_a_type_error():
    x, *_ = _inputs()
    for library in (torch, mg):
        with pytest.raises(TypeError):
            library.frexp(_mg(x) if library is mg else x, out=library.zeros(0))
        with pytest.raises(TypeError):
            library.inverse(_mg(x) if library is mg else x, out=(library.zeros(0),))


def test_nanmean_and_bernoulli_run_in_outs_dtype():
    x, *_ = _inputs()
    p = x.abs().clamp(max=1)
    for name, args, dtype in (("nanmean", (x, 0), F32), ("nanmean", (x, 0), I64),
                              ("nanmean", (x, 0), C128), ("bernoulli", (p,), I64),
                              ("bernoulli", (p,), F32), ("bernoulli", (p,), C128)):
        got_t, _ = _call(torch, name, args, {}, torch.zeros(0, dtype=dtype))
        out_m = _mg(torch.zeros(0, dtype=dtype))
        got_m, _ = _call(mg, name, args, {}, out_m)
        if isinstance(got_t, Exception):
            assert isinstance(got_m, type(got_t)), (name, dtype, got_t, got_m)
            continue
        assert got_m is out_m and str(out_m.dtype) == str(dtype)
        assert tuple(out_m.shape) == tuple(got_t.shape)
        if name == "nanmean":
            _same_values(out_m, got_t)
    # the draws into out are those without it, from the same generator state
    mg.manual_seed(3)
    drawn = mg.bernoulli(_mg(p))
    mg.manual_seed(3)
    out = mg.zeros(0, dtype=mg.int64)
    mg.bernoulli(_mg(p), out=out)
    np.testing.assert_array_equal(out.numpy(), drawn.numpy())


FACTORIES = {
    "zeros": ((2, 3), {}), "ones": ((2, 3), {}), "full": (((2, 3), 7), {}),
    "eye": ((3,), {}), "arange": ((5,), {}), "arange_step": ((0, 1, 0.25), {}),
    "linspace": ((0, 1, 5), {}), "logspace": ((0, 1, 5), {}),
    "randint": ((0, 9, (2, 3)), {}), "randperm": ((5,), {}), "rand": ((2, 3), {}),
    "randn": ((2, 3), {}), "normal": ((0.0, 1.0, (2, 3)), {}), "empty": ((2, 3), {}),
}
RANDOM = ("randint", "randperm", "rand", "randn", "normal", "empty")


@pytest.mark.parametrize("shape", [(0,), (2, 2), (6,)], ids=["empty", "resized", "same"])
@pytest.mark.parametrize("dtype", [F64, F32, I64], ids=str)
@pytest.mark.parametrize("case", sorted(FACTORIES))
def test_factories(case, dtype, shape):
    args, kwargs = FACTORIES[case]
    name = case.split("_")[0]
    out_t = torch.zeros(shape, dtype=dtype)
    out_m = _mg(out_t)
    version_t, version_m = out_t._version, out_m._version
    got_t, caught_t = _call(torch, name, args, kwargs, out_t)
    mg.manual_seed(5)
    got_m, caught_m = _call(mg, name, args, kwargs, out_m)
    if isinstance(got_t, Exception):
        assert isinstance(got_m, type(got_t)), (got_t, got_m)
        return
    assert got_m is out_m, got_m
    assert str(out_m.dtype) == str(dtype)
    assert tuple(out_m.shape) == tuple(out_t.shape)
    assert (out_m._version > version_m) == (out_t._version > version_t)
    assert bool(_resized(caught_m)) == bool(_resized(caught_t))
    if name not in RANDOM:
        _same_values(out_m, out_t)
    elif name != "empty":                   # the draw of out's dtype, from the same state
        mg.manual_seed(5)
        drawn = getattr(mg, name)(*args, **kwargs, dtype=getattr(mg, str(dtype)[6:]))
        np.testing.assert_array_equal(out_m.numpy(), drawn.numpy())


@pytest.mark.parametrize("case", sorted(FACTORIES))
def test_factories_dtype_and_grad(case):
    args, kwargs = FACTORIES[case]
    name = case.split("_")[0]
    for given, out_dtype, grad in ((F32, F64, False), (F64, F64, False), (None, F32, True)):
        out_t = torch.zeros(0, dtype=out_dtype, requires_grad=grad)
        extra = {} if given is None else {"dtype": given}
        got_t, _ = _call(torch, name, args, {**kwargs, **extra}, out_t)
        extra = {} if given is None else {"dtype": getattr(mg, str(given)[6:])}
        got_m, _ = _call(mg, name, args, {**kwargs, **extra}, _mg(out_t))
        assert isinstance(got_m, Exception) == isinstance(got_t, Exception), (got_t, got_m)
        if isinstance(got_t, Exception):
            assert isinstance(got_m, type(got_t)), (got_t, got_m)


def test_std_mean_takes_no_out_as_torchs():
    x, *_ = _inputs()
    for library, value in ((torch, x), (mg, _mg(x))):
        with pytest.raises(TypeError):
            library.std_mean(value, 0, out=(library.zeros(0), library.zeros(0)))



def _fft_cases():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 8, dtype=F32, generator=g)
    z = torch.randn(3, 5, dtype=torch.complex64, generator=g)
    cube = torch.randn(2, 4, 6, dtype=F64, generator=g)
    return {
        "fft": ((x,), {}), "fft_n_norm": ((x,), {"n": 6, "dim": 0, "norm": "ortho"}),
        "ifft": ((z,), {"norm": "forward"}), "ifft_real": ((x,), {}),
        "rfft": ((x,), {"n": 10}), "irfft": ((z,), {"n": 7, "norm": "ortho"}),
        "hfft": ((z,), {}), "ihfft": ((x,), {"norm": "forward"}),
        "fft2": ((x,), {"s": (4, 6)}), "ifft2": ((z,), {"dim": (0, 1)}),
        "rfft2": ((cube,), {"dim": (0, 2)}), "irfft2": ((z,), {"s": (2, 6)}),
        "hfft2": ((z,), {"norm": "ortho"}), "ihfft2": ((cube,), {}),
        "fftn": ((cube,), {"s": (3, 5), "dim": (2, 0), "norm": "forward"}),
        "ifftn": ((cube.to(C128),), {"dim": 1}), "rfftn": ((cube,), {"s": (4, 4)}),
        "irfftn": ((z,), {"s": (4, 8), "norm": "forward"}), "hfftn": ((z,), {"dim": (0, 1)}),
        "ihfftn": ((cube,), {"s": (4, 6)}),
    }


FFT_CASES = _fft_cases()


def _fft_call(library, case, out, requires_grad=False):
    (x,), kwargs = FFT_CASES[case]
    x = x.clone().requires_grad_(requires_grad)
    fn = getattr(library.fft, case.split("_")[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return fn(_mg(x) if library is mg else x, **kwargs, out=out), caught
        except Exception as error:          # noqa: BLE001 (its class is compared)
            return error, caught


@pytest.mark.parametrize("shape", [(0,), (2, 2)], ids=["empty", "resized"])
@pytest.mark.parametrize("dtype", [C128, torch.complex64, F64, F32, torch.float16, I64],
                         ids=str)
@pytest.mark.parametrize("case", sorted(FFT_CASES))
def test_fft_out(case, dtype, shape):
    # a wider out holds the result widened, a narrower one the result rounded, as torch's
    # copy into it; a real out of a complex result, a complex or integer one of a real
    # result, and another dtype for ifft and ihfft of a real input are RuntimeErrors
    out_t = torch.ones(shape, dtype=dtype)
    out_m = _mg(out_t)
    version = out_m._version
    got_t, caught_t = _fft_call(torch, case, out_t)
    got_m, caught_m = _fft_call(mg, case, out_m)
    if isinstance(got_t, Exception):
        assert isinstance(got_m, type(got_t)), (got_t, got_m)
        assert str(got_t).split(",")[0][-24:] in str(got_m), (got_t, got_m)
        assert out_m._version == version and tuple(out_m.shape) == shape
        return
    assert got_m is out_m, got_m
    assert out_m._version == version + 1
    assert bool(_resized(caught_m)) == bool(_resized(caught_t))
    assert str(out_m.dtype) == str(out_t.dtype)
    _close(out_m, out_t, 1e-3 if dtype == torch.float16 else 1e-5)


def _close(ours, theirs, tolerance=1e-5):
    # within float32's rounding: the transforms here and torch's sum in other orders
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(np.asarray(ours.numpy(), dtype=complex),
                               np.asarray(theirs.numpy(), dtype=complex),
                               rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("case", sorted(c for c in FFT_CASES if c != "ifft_real"))
def test_fft_out_requiring_grad(case):
    # refused under grad mode, the input's or out's (torch's ifft and ihfft of a real input
    # take it: docs/pytorch.md), taken under no_grad
    dtype = _fft_call(torch, case, None)[0].dtype
    for input_grad in (True, False):
        out_t = torch.zeros(0, dtype=dtype, requires_grad=not input_grad)
        got_t, _ = _fft_call(torch, case, out_t, input_grad)
        got_m, _ = _fft_call(mg, case, _mg(out_t), input_grad)
        if case != "ihfft":
            assert isinstance(got_t, RuntimeError), got_t
        assert isinstance(got_m, RuntimeError), got_m
        assert "automatic differentiation" in str(got_m)
        with torch.no_grad(), mg.no_grad():
            got_t, _ = _fft_call(torch, case, out_t.detach(), input_grad)
            out_m = _mg(out_t.detach())
            assert _fft_call(mg, case, out_m, input_grad)[0] is out_m
        _close(out_m, got_t)


def test_fft_out_that_overlaps_or_is_expanded():
    # a transform computes before it writes: an out overlapping its input is taken, as
    # torch's; an expanded out is refused
    z = torch.randn(12, dtype=torch.complex64)
    zm = _mg(z)
    torch.fft.fft(z[:8], out=z[2:10])
    mg.fft.fft(zm[:8], out=zm[2:10])
    _close(zm, z)
    for library, value in ((torch, z), (mg, zm)):
        with pytest.raises(RuntimeError):
            library.fft.fft(value[:4], out=library.zeros(1, dtype=library.complex64).expand(4))


def test_fft_out_must_be_one_tensor():
    x = torch.randn(4)
    for library, value in ((torch, x), (mg, _mg(x))):
        with pytest.raises(TypeError):
            library.fft.fft(value, out=(library.zeros(0, dtype=library.complex64),))


@pytest.mark.parametrize("outs", [
    [((0,),), ((0,),)], [((2, 3),), ((4, 3),)], [((3, 3),), ((3, 3),)], [((0,),)],
    [((0,),), ((0,),), ((0,),)], [((0,), F64), ((0,),)], [((0,),), ((0,), I64)]], ids=str)
def test_split_with_sizes_copy_out(outs):
    # a list (or tuple) of outs, each of its piece's dtype, resized with torch's warning;
    # the wrong count is torch's RuntimeError
    y = torch.randn(6, 3)
    out_t = [torch.ones(o[0], dtype=o[1] if len(o) > 1 else F32) for o in outs]
    out_m = [_mg(o) for o in out_t]
    got_t, caught_t = _call(torch, "split_with_sizes_copy", (y, [2, 4]), {}, out_t)
    got_m, caught_m = _call(mg, "split_with_sizes_copy", (_mg(y), [2, 4]), {}, out_m)
    if isinstance(got_t, Exception):
        assert isinstance(got_m, type(got_t)), (got_t, got_m)
        return
    assert isinstance(got_m, list) and all(g is o for g, o in zip(got_m, out_m))
    assert bool(_resized(caught_m)) == bool(_resized(caught_t))
    _same_values(tuple(out_m), tuple(out_t))


def test_split_with_sizes_copy_out_takes_grad():
    # torch's out= kernel has no autograd check: an input that requires grad is taken
    y = torch.randn(6, 3, requires_grad=True)
    out_t = [torch.zeros(0), torch.zeros(0)]
    torch.split_with_sizes_copy(y, [1, 2], dim=1, out=out_t)
    out_m = [mg.zeros(0), mg.zeros(0)]
    mg.split_with_sizes_copy(_mg(y), [1, 2], dim=1, out=out_m)
    _same_values(tuple(out_m), tuple(out_t))

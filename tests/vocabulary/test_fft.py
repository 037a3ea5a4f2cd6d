"""mg.fft (torch.fft) against PyTorch: every transform's values and dtype, and the gradient
of a random real upstream through a real loss of its output (its real and imaginary parts
weighted) into real and complex inputs, for each ``norm``, with the signal padded and cut
(``n``, ``s``) and over chosen ``dim``s, in float64/complex128 (float32/complex64 within
their rounding); the frequencies and shifts; torch's error classes; and the composite
losses models write (``fft(x).abs().sum()``, ``irfft(rfft(x) * w)``)."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.fft
from microgradnorm.ops import fft as fft_nodes

RNG = np.random.default_rng(0)
REAL = RNG.standard_normal((3, 6))
CPLX = RNG.standard_normal((3, 6)) + 1j * RNG.standard_normal((3, 6))
NORMS = [None, "backward", "ortho", "forward"]
TOLERANCE = {"float64": 1e-12, "complex128": 1e-12, "float32": 2e-5, "complex64": 2e-5}


def as_numpy(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


def loss(lib, y, seed=1):
    """A real loss of y that weights each real and imaginary part by its own random number."""
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal(tuple(y.shape)).astype(str(y.dtype).split(".")[-1]
                                                         .replace("complex64", "float32")
                                                         .replace("complex128", "float64"))
    total = (y.real * lib.tensor(weights)).sum()
    if y.is_complex():
        total = total + (y.imag * lib.tensor(weights[::-1].copy())).sum()
    return total


def agree(fn, x, **options):
    """mg.fft.<fn>(x, **options) against torch's: dtype, shape, values, and the gradient of
    ``loss`` into x."""
    results = []
    for lib in (torch, mg):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.fft, fn)(t, **options)
        loss(lib, y).backward()
        results.append((y, t.grad))
    (theirs, their_grad), (ours, our_grad) = results
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    tol = TOLERANCE[str(x.dtype)]
    scale = max(1.0, np.abs(as_numpy(theirs)).max())
    np.testing.assert_allclose(as_numpy(ours), as_numpy(theirs), atol=tol * scale, rtol=0)
    assert our_grad.dtype == x.dtype
    grad_scale = max(1.0, np.abs(as_numpy(their_grad)).max())
    np.testing.assert_allclose(as_numpy(our_grad), as_numpy(their_grad), atol=tol * grad_scale,
                               rtol=0)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 4, 9])
@pytest.mark.parametrize("fn, x", [("fft", REAL), ("fft", CPLX), ("ifft", REAL),
                                   ("ifft", CPLX), ("rfft", REAL), ("ihfft", REAL)])
def test_one_dim_transforms(fn, x, n, norm):
    agree(fn, x, n=n, norm=norm)
    agree(fn, x.T.copy(), n=n, norm=norm, dim=0)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 4, 9, 10])
@pytest.mark.parametrize("fn, x", [("irfft", CPLX), ("irfft", REAL), ("hfft", CPLX),
                                   ("hfft", REAL)])
def test_one_sided_inverses(fn, x, n, norm):
    # n even and odd, shorter and longer than the spectrum: the doubled bins move
    agree(fn, x, n=n, norm=norm)
    agree(fn, x.T.copy(), n=n, norm=norm, dim=-2)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("options", [{}, {"s": (4, 8)}, {"s": (2, 5)}, {"dim": (1, 0)},
                                     {"s": (-1, 7)}, {"s": (5,), "dim": (0,)}, {"dim": 1}])
@pytest.mark.parametrize("fn", ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn",
                                "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"])
def test_n_dim_transforms(fn, options, norm):
    x = REAL if fn.startswith(("rfft", "ihfft")) else CPLX
    if fn.endswith("2") and "dim" in options and len(np.atleast_1d(options["dim"])) != 2:
        return                                        # fft2's dims are two
    agree(fn, x, norm=norm, **options)


def test_three_dims_and_batches():
    x = RNG.standard_normal((2, 3, 4, 5))
    agree("fftn", x, dim=(1, 3))
    agree("rfftn", x, s=(3, 6), dim=(-1, 1))
    agree("irfftn", x + 1j * x[::-1], s=(3, 4, 6))
    agree("rfft2", x)
    agree("fftn", x[0, 0], dim=())                    # no dims: the input as complex


@pytest.mark.parametrize("fn", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2",
                                "rfftn", "irfftn"])
def test_float32_and_complex64(fn):
    x = REAL if fn in ("rfft", "ihfft", "rfftn") else CPLX
    agree(fn, x.astype(np.complex64 if x.dtype.kind == "c" else np.float32))


def test_dtypes():
    for lib in (torch, mg):
        assert str(lib.fft.fft(lib.ones(4, dtype=lib.float32)).dtype).endswith("complex64")
        assert str(lib.fft.irfft(lib.ones(3, dtype=lib.complex64)).dtype).endswith("float32")
        assert str(lib.fft.irfft(lib.ones(3, dtype=lib.float64)).dtype).endswith("float64")
        assert str(lib.fft.ihfft(lib.ones(3, dtype=lib.float64)).dtype).endswith("complex128")
    # an integer input: the default float dtype's complex
    ours, theirs = mg.fft.fft(mg.arange(4)), torch.fft.fft(torch.arange(4))
    assert str(ours.dtype) == str(theirs.dtype) == "torch.complex64"
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-6)


def test_the_losses_models_write():
    w = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    results = []
    for lib in (torch, mg):
        x = lib.tensor(REAL, requires_grad=True)
        weights = lib.tensor(w, requires_grad=True)
        a = lib.fft.fft(x).abs().sum()                           # a spectral penalty
        b = lib.fft.irfft(lib.fft.rfft(x) * weights, n=6).pow(2).sum()   # a global filter
        c = lib.fft.fft(lib.fft.fft(x, dim=-1), dim=-2).real.sum()       # FNet's mixing
        (a + b + c).backward()
        results.append([a.item(), b.item(), c.item(), as_numpy(x.grad),
                        as_numpy(weights.grad)])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 5, 6])
@pytest.mark.parametrize("d", [1.0, 0.5, 0.1, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frequencies(n, d, dtype):
    for fn in ("fftfreq", "rfftfreq"):
        ours = getattr(mg.fft, fn)(n, d, dtype=getattr(mg, dtype))
        theirs = getattr(torch.fft, fn)(n, d, dtype=getattr(torch, dtype))
        assert ours.dtype == getattr(mg, dtype)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert mg.fft.fftfreq(4, requires_grad=True).requires_grad


@pytest.mark.parametrize("d", [0.5, "float64", "int64", "bool", "float16"])
def test_frequencies_of_a_0d_tensor_spacing(d):
    # torch reads a 0-d tensor without a graph as its number
    results = []
    for lib in (torch, mg):
        spacing = {"float64": lib.tensor(0.1, dtype=lib.float64), "int64": lib.tensor(2),
                   "bool": lib.tensor(True), "float16": lib.tensor(0.1, dtype=lib.float16),
                   0.5: lib.tensor(0.5)}[d]
        results.append([lib.fft.fftfreq(5, spacing).numpy(),
                        lib.fft.rfftfreq(6, spacing, dtype=lib.float64).numpy()])
    for ours, theirs in zip(results[1], results[0]):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


def test_shifts_check_each_dim():
    x = np.arange(10.0).reshape(2, 5)
    for fn in ("fftshift", "ifftshift"):
        for dim in ((0, 0), (1, -1, 0), [-2]):          # a dim named twice: rolled twice
            ours = getattr(mg.fft, fn)(mg.tensor(x), dim=dim)
            theirs = getattr(torch.fft, fn)(torch.tensor(x), dim=dim)
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        for dim in (2, (1, -3)):             # torch: "Dimension out of range (expected ...)"
            with pytest.raises(IndexError, match=f"{fn}: axis -?[23] is out of range for a "
                                                 "tensor with 2 dims"):
                getattr(mg.fft, fn)(mg.tensor(x), dim=dim)
        with pytest.raises(IndexError) as theirs:
            getattr(torch.fft, fn)(torch.tensor(1.0), dim=0)
        with pytest.raises(IndexError, match=str(theirs.value)):
            getattr(mg.fft, fn)(mg.tensor(1.0), dim=0)


def test_an_empty_batch_is_transformed_where_torch_refuses():
    # docs/pytorch.md: torch's oneMKL refuses zero signals; NumPy transforms them
    for fn, dtype in (("fft", "float32"), ("rfft", "float32"), ("irfft", "complex64"),
                      ("fft2", "float64")):
        ours = getattr(mg.fft, fn)(mg.zeros(0, 4, 4, dtype=getattr(mg, dtype)))
        one = getattr(torch.fft, fn)(torch.zeros(1, 4, 4, dtype=getattr(torch, dtype)))
        assert ours.shape == (0,) + tuple(one.shape[1:])
        assert str(ours.dtype) == str(one.dtype)
        if torch.backends.mkl.is_available():
            with pytest.raises(RuntimeError, match="MKL FFT error"):
                getattr(torch.fft, fn)(torch.zeros(0, 4, 4, dtype=getattr(torch, dtype)))


def double_precision_fft(monkeypatch):
    # NumPy 1.x's transforms: any input computed in double, complex128 or float64 out
    for name in ("fftn", "ifftn", "rfftn", "irfftn"):
        original = getattr(np.fft, name)

        def upcast(a, *args, original=original, **kwargs):
            a = np.asarray(a)
            return original(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                            *args, **kwargs)
        monkeypatch.setattr(np.fft, name, upcast)


class Ctx:
    """A bare context for calling a node's forward and backward on arrays."""


@pytest.mark.parametrize("node, dtype, out, options", [
    ("FFT", "float32", "complex64", {"inverse": False}),
    ("FFT", "complex64", "complex64", {"inverse": True}),
    ("RFFT", "float32", "complex64", {}),
    ("IRFFT", "complex64", "float32", {}),
    ("IRFFT", "float32", "float32", {})])
def test_single_precision_where_numpy_transforms_in_double(monkeypatch, node, dtype, out,
                                                           options):
    # each node's forward and backward arrays at torch's dtypes, as NumPy 1.x computes
    double_precision_fft(monkeypatch)
    function, ctx = getattr(fft_nodes, node), Ctx()
    y = function.forward(ctx, np.ones((2, 4), dtype), axes=(1,), sizes=(6,), norm="ortho",
                         **options)
    grad = function.backward(ctx, np.ones_like(y))
    assert (str(y.dtype), str(grad.dtype), grad.shape) == (out, dtype, (2, 4))
    x = mg.tensor(np.ones((2, 4), dtype), requires_grad=True)
    fn = {"FFT": "ifft" if options.get("inverse") else "fft", "RFFT": "rfft"}.get(node, "irfft")
    y = getattr(mg.fft, fn)(x, n=6)
    assert str(y.dtype) == f"torch.{out}" == str(getattr(torch.fft, fn)(
        torch.ones(2, 4, dtype=getattr(torch, dtype)), n=6).dtype)


def test_shifts():
    x = np.arange(30.0).reshape(5, 6)
    for options in ({}, {"dim": 1}, {"dim": (0,)}, {"dim": (-1, 0)}):
        for fn in ("fftshift", "ifftshift"):
            ours = getattr(mg.fft, fn)(mg.tensor(x), **options)
            theirs = getattr(torch.fft, fn)(torch.tensor(x), **options)
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    x = mg.tensor(x, requires_grad=True)
    mg.fft.ifftshift(mg.fft.fftshift(x)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((5, 6)))


BAD = {
    "half": lambda lib: lib.fft.fft(lib.ones(4, dtype=lib.float16)),
    "complex rfft": lambda lib: lib.fft.rfft(lib.ones(4, dtype=lib.complex64)),
    "complex ihfft": lambda lib: lib.fft.ihfft(lib.ones(4, dtype=lib.complex128)),
    "complex rfftn": lambda lib: lib.fft.rfftn(lib.ones(2, 4, dtype=lib.complex128)),
    "n = 0": lambda lib: lib.fft.fft(lib.ones(4), n=0),
    "n = -1": lambda lib: lib.fft.ifft(lib.ones(4), n=-1),
    "float n": lambda lib: lib.fft.fft(lib.ones(4), n=2.0),
    "dim out of range": lambda lib: lib.fft.fft(lib.ones(4), dim=3),
    "0-d": lambda lib: lib.fft.fft(lib.tensor(1.0)),
    "bad norm": lambda lib: lib.fft.fft(lib.ones(4), norm="bad"),
    "fft2 of 1-d": lambda lib: lib.fft.fft2(lib.ones(4)),
    "repeated dims": lambda lib: lib.fft.fftn(lib.ones(4), s=(3, 3), dim=(0, 0)),
    "s too long": lambda lib: lib.fft.fftn(lib.ones(3, 4), s=(3, 5, 6)),
    "s and dim differ": lambda lib: lib.fft.fftn(lib.ones(3, 4), s=(3,), dim=(0, 1)),
    "rfftn no dims": lambda lib: lib.fft.rfftn(lib.ones(3, 4), dim=()),
    "irfftn no dims": lambda lib: lib.fft.irfftn(lib.ones(3, 4, dtype=lib.complex64), dim=()),
    "irfft of one bin": lambda lib: lib.fft.irfft(lib.ones(1, dtype=lib.complex64)),
    "empty": lambda lib: lib.fft.fft(lib.zeros(0)),
    "a list": lambda lib: lib.fft.fft([1.0, 2.0]),
    "integer frequencies": lambda lib: lib.fft.fftfreq(5, dtype=lib.int64),
    "shift of 0-d": lambda lib: lib.fft.fftshift(lib.tensor(1.0)),
    "shift dim out of range": lambda lib: lib.fft.fftshift(lib.ones(2, 5), dim=2),
    "shift dim below range": lambda lib: lib.fft.ifftshift(lib.ones(2, 5), dim=(1, -3)),
    "shift dim of 0-d": lambda lib: lib.fft.fftshift(lib.tensor(1.0), dim=0),
    "shift dim a float": lambda lib: lib.fft.fftshift(lib.ones(2, 5), dim=1.0),
    "complex frequencies": lambda lib: lib.fft.fftfreq(4, dtype=lib.complex64),
    "complex rfftfreq": lambda lib: lib.fft.rfftfreq(4, dtype=lib.complex128),
    "spacing a 1-d tensor": lambda lib: lib.fft.fftfreq(4, lib.tensor([0.5])),
    "spacing requiring grad": lambda lib: lib.fft.fftfreq(4, lib.tensor(0.5,
                                                                        requires_grad=True)),
    "spacing complex": lambda lib: lib.fft.rfftfreq(4, lib.tensor(1 + 1j)),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_errors_are_torchs_class(case):
    with pytest.raises(Exception) as theirs:
        BAD[case](torch)
    with pytest.raises(theirs.type):
        BAD[case](mg)


def test_gradient_by_finite_differences():
    x = mg.tensor(RNG.standard_normal(5), requires_grad=True)
    re, im = (mg.tensor(RNG.standard_normal(4), requires_grad=True) for _ in range(2))
    mg.gradcheck(lambda x: mg.fft.irfft(mg.fft.rfft(x, n=7) * 1.5j, n=6), (x,))
    mg.gradcheck(lambda x: mg.fft.hfft(mg.fft.ifft(x), n=5, norm="ortho"), (x,))
    mg.gradcheck(lambda re, im: mg.fft.irfft(mg.complex(re, im), n=7), (re, im))
    mg.gradcheck(lambda re, im: mg.fft.fft(mg.complex(re, im), n=6).abs(), (re, im))

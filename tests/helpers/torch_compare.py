"""Comparisons against torch that the vocabulary and program tests share."""

import math
import warnings
from contextlib import contextmanager

import numpy as np
import pytest
import torch

import microgradnorm as mg


# the (torch, nn, F) a program written once is run with, under each library's name
LIBRARIES = {"torch": (torch, torch.nn, torch.nn.functional),
             "microgradnorm": (mg, mg.nn, mg.nn.functional)}


# the tutorial programs' tolerances. float64: rounding amplified by a few training steps;
# float32: torch's blocked and vectorised sums against NumPy's pairwise ones, then the same
# steps
TUTORIAL_TOLERANCES = {"float64": {"rtol": 1e-9, "atol": 1e-12},
                       "float32": {"rtol": 2e-5, "atol": 2e-5}}


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """torch's kernels on one thread for a module's tests (import it there: autouse): the
    same sums every run, and no waiting on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def under_both(program, plain, *args, ignore=Warning):
    """[``plain`` of ``program(torch, nn, F, *args)`` under torch, the same under
    microgradnorm]: warnings of the class ``ignore`` (deprecations, disabled devices) are
    silenced, as they are not the program's output."""
    results = []
    for name in ("torch", "microgradnorm"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ignore)
            results.append(plain(program(*LIBRARIES[name], *args)))
    return results


def pair(array, requires_grad=True):
    """The array as a tensor of each library; a floating one requires grad."""
    array = np.asarray(array)
    grad = requires_grad and array.dtype.kind == "f"
    return mg.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad)


def compare_module(ours, theirs, arrays, rng, **call):
    """Two Modules called on the same arrays: the outputs, then the gradients of the inputs
    and of every parameter from one upstream gradient drawn from ``rng``, float64."""
    mine, reference = zip(*[pair(a) for a in arrays])
    out, expected = ours(*mine, **call), theirs(*reference, **call)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    upstream = rng.standard_normal(out.shape)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)
    params = dict(ours.named_parameters())
    for name, param in theirs.named_parameters():
        np.testing.assert_allclose(params[name].grad.numpy(), param.grad.numpy(), atol=1e-12)


def same_error(ours, theirs, match=None):
    """``theirs()`` raises; ``ours()`` raises an instance of the same class (whose message
    names ``match``, where given)."""
    with pytest.raises(Exception) as expected:                # noqa: PT011 (torch's class)
        theirs()
    with pytest.raises(expected.type, match=match):
        ours()


def compare_functional(name, arrays, rng, atol=1e-12, **options):
    """``F.name`` and ``torch.nn.functional.name`` on the same arrays (``rng``'s float64 for
    shapes): the output, the indices if any, and each floating input's gradient of one
    upstream drawn from ``rng`` (none for an empty output)."""
    import torch.nn.functional as TF

    import microgradnorm.functional as F
    arrays = [rng.standard_normal(a) if isinstance(a, tuple) else a for a in arrays]
    ours, theirs = zip(*[pair(a) for a in arrays])
    out, expected = getattr(F, name)(*ours, **options), getattr(TF, name)(*theirs, **options)
    if isinstance(expected, tuple):                              # with indices
        assert out[1].dtype == np.int64
        np.testing.assert_array_equal(out[1].numpy(), expected[1].numpy())
        out, expected = out[0], expected[0]
    assert out.shape == tuple(expected.shape)
    assert str(out.dtype) == str(expected.dtype)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=atol)
    if not out.requires_grad or out.size == 0:
        return
    upstream = rng.standard_normal(out.shape)
    out.backward(mg.tensor(upstream, dtype=out.dtype))
    expected.backward(torch.tensor(upstream, dtype=expected.dtype))
    for mine, reference in zip(ours, theirs):
        if reference.requires_grad:
            np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), atol=atol)


def seeded_twins(cls, *args, **options):
    """Ours and torch's ``nn.cls`` built after the same seed: the same repr, state-dict
    names, order, shapes and float32 values."""
    mg.manual_seed(11)
    torch.manual_seed(11)
    ours, theirs = getattr(mg.nn, cls)(*args, **options), getattr(torch.nn, cls)(*args, **options)
    assert repr(ours) == repr(theirs)
    state, expected = ours.state_dict(), theirs.state_dict()
    assert list(state) == list(expected)
    for key in expected:
        np.testing.assert_array_equal(state[key].numpy(), expected[key].numpy())
    return ours, theirs


def check(ours, theirs, inputs, atol=1e-12, rtol=1e-12):
    """Values, dtype, and the gradient of a random upstream into each input, against torch."""
    assert str(ours.dtype) == str(theirs.dtype)
    expected = theirs.detach().numpy()
    np.testing.assert_allclose(ours.detach().numpy(), expected, rtol=0, atol=atol)
    upstream = np.asarray(np.random.default_rng(0).standard_normal(expected.shape))
    ours.backward(upstream)
    theirs.backward(torch.tensor(upstream, dtype=theirs.dtype))
    for a, b in inputs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)


def same(ours, theirs):
    """Both calls raise the same class, or give one dtype and equal values."""
    try:
        expected = theirs()
    except Exception as error:                                # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            ours()
        return
    got = ours()
    assert str(got.dtype) == str(expected.dtype), (got, expected)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


def same_call(call, *args, ulps, rtol=None):
    """``call(lib, *args)`` for mg and torch, each NumPy array among ``args`` made a tensor of
    that library: both raise the same class, or give one dtype and equal values (NaN ==
    NaN) within ``ulps[dtype]`` relative (0 for a dtype not listed) or ``rtol``; bfloat16
    compared as float32 (torch's bfloat16 has no NumPy form)."""
    def run(lib):
        return call(lib, *[lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    try:
        expected = run(torch)
    except Exception as error:                               # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            run(mg)
        return
    got = run(mg)
    dtype = str(got.dtype)
    assert dtype == str(expected.dtype), (got, expected)
    if dtype == "torch.bfloat16":
        got, expected = got.float(), expected.float()
    tolerance = ulps.get(dtype.removeprefix("torch."), 0) if rtol is None else rtol
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=0, rtol=tolerance)


@contextmanager
def default_dtype(name):
    """Both libraries' default dtype set to ``name`` for the block."""
    previous = torch.get_default_dtype(), mg.get_default_dtype()
    torch.set_default_dtype(getattr(torch, name))
    mg.set_default_dtype(getattr(mg, name))
    try:
        yield
    finally:
        torch.set_default_dtype(previous[0])
        mg.set_default_dtype(previous[1])


def leaves(printed):
    """The numbers, strings and flags a program printed, nested lists flattened."""
    if isinstance(printed, (list, tuple)):
        return [leaf for item in printed for leaf in leaves(item)]
    return [printed]


def errors_named(got, expected):
    """Both outputs' leaves with each exception class replaced by the name of torch's, once
    ours is checked to be that class or a subclass of it (ours may be an IndexError and a
    RuntimeError where torch's is a RuntimeError)."""
    got, expected = leaves(got), leaves(expected)
    assert len(got) == len(expected), (len(got), len(expected))
    for i, theirs in enumerate(expected):
        if isinstance(theirs, type) and issubclass(theirs, BaseException):
            ours = got[i]
            assert isinstance(ours, type) and issubclass(ours, theirs), (i, ours, theirs)
            got[i] = expected[i] = theirs.__name__
    return got, expected


def assert_same_output(got, expected, rtol, atol):
    """A program's printed output against torch's: the same leaves, each of the same type,
    floats within ``rtol``/``atol``, the rest equal."""
    got, expected = leaves(got), leaves(expected)
    assert len(got) == len(expected), (len(got), len(expected))
    for i, (ours, theirs) in enumerate(zip(got, expected)):
        assert type(ours) is type(theirs), (i, ours, theirs)
        if isinstance(theirs, float):
            assert math.isclose(ours, theirs, rel_tol=rtol, abs_tol=atol), (i, ours, theirs)
        else:
            assert ours == theirs, (i, ours, theirs)


def assert_comparison_catches(expected, rtol, atol):
    """``assert_same_output`` fails on ``expected`` with one printed number moved by more
    than the tolerance, and with one printed flag flipped: a program test can fail."""
    changed = leaves(expected)
    index = next(i for i, v in enumerate(changed) if isinstance(v, float) and v)
    changed[index] *= 1 + 100 * rtol + 1e-7
    with pytest.raises(AssertionError):
        assert_same_output(changed, expected, rtol, atol)
    flipped = leaves(expected)
    index = next(i for i, v in enumerate(flipped) if isinstance(v, bool))
    flipped[index] = not flipped[index]
    with pytest.raises(AssertionError):
        assert_same_output(flipped, expected, rtol, atol)


def plain_batch(value):
    """A data loader's batch of either library as plain Python, to compare: a tensor as
    ("tensor", dtype name, shape, values), containers (a namedtuple, a dict) by their type's
    name and their items."""
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        return ("tensor", str(value.dtype).removeprefix("torch."), tuple(value.shape),
                value.tolist())
    if isinstance(value, dict):
        return (type(value).__name__, [(key, plain_batch(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [plain_batch(item) for item in value])
    return value

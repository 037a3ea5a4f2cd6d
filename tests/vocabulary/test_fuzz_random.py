"""Random draws a differential fuzzer against PyTorch found differing, each against torch:
the error classes of refused calls (randint, random_, randperm, multinomial, normal,
uniform_, bernoulli, the seeds and states of a generator), complex draws (rand, randn,
uniform_, normal_ fill the real and imaginary parts), multinomial without replacement from
rows with fewer nonzero weights than draws and of no row, randperm's dtype limits, samplers
of an empty integer tensor, ``mg.poisson``'s counts, and ``manual_seed``'s conversion of its
argument."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

BUILTINS = (NotImplementedError, RuntimeError, ValueError, TypeError, IndexError)


def outcome(lib, call):
    """``call(lib)`` as ("ok", value) or ("error", the builtin classes it is an instance of)."""
    try:
        return "ok", call(lib)
    except Exception as error:                       # noqa: BLE001 - compared below
        return "error", {cls for cls in BUILTINS if isinstance(error, cls)}


def as_array(t):
    return t.detach().numpy()


REFUSED = {
    "randint low = high": lambda L: L.randint(3, 3, (2,)),
    "randint high < 0": lambda L: L.randint(-3, size=(2,)),
    "randint_like low > high": lambda L: L.randint_like(L.zeros(2), 5, 2),
    "randint complex": lambda L: L.randint(0, 2, (3,), dtype=L.complex64),
    "randint low= alone": lambda L: L.randint(low=2, size=(3,)),
    "randint 5, low=": lambda L: L.randint(5, low=2, size=(3,)),
    "randint low=, high=, no size": lambda L: L.randint(low=2, high=5),
    "random_ from below uint8": lambda L: L.zeros(2, dtype=L.uint8).random_(-1, 3),
    "random_ to past int16": lambda L: L.zeros(2, dtype=L.int16).random_(0, 2 ** 20),
    "random_ to past bool": lambda L: L.zeros(2, dtype=L.bool).random_(0, 3),
    "random_ complex": lambda L: L.zeros(2, dtype=L.complex64).random_(),
    "randperm n < 0": lambda L: L.randperm(-1),
    "randperm uint8 257": lambda L: L.randperm(257, dtype=L.uint8),
    "randperm int8 129": lambda L: L.randperm(129, dtype=L.int8),
    "randperm float16 2050": lambda L: L.randperm(2050, dtype=L.float16),
    "randperm bool": lambda L: L.randperm(2, dtype=L.bool),
    "rand size < 0": lambda L: L.rand(-1),
    "zeros size < 0": lambda L: L.zeros(2, -1),
    "multinomial too many": lambda L: L.multinomial(L.tensor([0, 1, 1.0]), 4),
    "multinomial zero samples": lambda L: L.multinomial(L.tensor([0, 1, 1.0]), 0),
    "multinomial 3-D": lambda L: L.multinomial(L.ones(2, 2, 2), 1),
    "multinomial 0-D": lambda L: L.multinomial(L.tensor(1.0), 1),
    "multinomial int64": lambda L: L.multinomial(L.tensor([1, 2]), 1),
    "multinomial no category": lambda L: L.multinomial(L.zeros(2, 0), 1),
    "multinomial no category, replacement": lambda L: L.multinomial(L.zeros(2, 0), 1, True),
    "multinomial negative": lambda L: L.multinomial(L.tensor([0, -1, 1.0]), 1),
    "multinomial zero row": lambda L: L.multinomial(L.tensor([[1.0, 1], [0, 0]]), 2, True),
    "normal shapes": lambda L: L.normal(L.zeros(2, 3), L.ones(3, 1)),
    "normal int64 mean": lambda L: L.normal(L.zeros(2, dtype=L.int64), 1.0),
    "bernoulli int64": lambda L: L.bernoulli(L.zeros(2, dtype=L.int64)),
    "bernoulli_ int64 p": lambda L: L.zeros(2).bernoulli_(L.tensor([1, 0])),
    "bernoulli_ complex": lambda L: L.zeros(2, dtype=L.complex64).bernoulli_(0.5),
    "dropout complex": lambda L: L.nn.functional.dropout(L.ones(2, dtype=L.complex64)),
    "dropout int64": lambda L: L.nn.functional.dropout(L.ones(3, dtype=L.int64), 0.5),
    "dropout bool in place": lambda L: L.nn.functional.dropout(
        L.ones(3, dtype=L.bool), 0.5, inplace=True),
    "uniform_ to inf": lambda L: L.zeros(2).uniform_(0, float("inf")),
    "poisson negative": lambda L: L.poisson(L.tensor([1.0, -1.0])),
    "poisson nan": lambda L: L.poisson(L.tensor([float("nan")])),
    "poisson int64": lambda L: L.poisson(L.tensor([1])),
    "Generator.manual_seed float": lambda L: L.Generator().manual_seed(1.5),
    "Generator.manual_seed str": lambda L: L.Generator().manual_seed("1"),
    "set_state size": lambda L: L.Generator().set_state(L.zeros(5, dtype=L.uint8)),
    "set_state zeros": lambda L: L.Generator().set_state(L.zeros(5056, dtype=L.uint8)),
    "Generator.get_offset": lambda L: L.Generator().get_offset(),
    "Generator.set_offset": lambda L: L.Generator().set_offset(3),
    "Generator.graphsafe_get_state": lambda L: L.Generator().graphsafe_get_state(),
    "trunc_normal_ a > b": lambda L: L.nn.init.trunc_normal_(L.empty(3), a=2.0, b=1.0),
    "Generator on meta": lambda L: L.Generator("meta"),
    "Generator of an int": lambda L: L.Generator(3),
    "manual_seed None": lambda L: L.manual_seed(None),
    "manual_seed nan": lambda L: L.manual_seed(float("nan")),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_calls_raise_torch_classes(name):
    """Each call torch refuses is refused here with (at least) torch's builtin class."""
    expected, mine = outcome(torch, REFUSED[name]), outcome(mg, REFUSED[name])
    assert expected[0] == "error", name
    assert mine[0] == "error", f"{name}: no error here"
    assert expected[1] <= mine[1], f"{name}: torch {expected[1]}, here {mine[1]}"


def _same_draws(call, seed=5):
    torch.manual_seed(seed)
    mg.manual_seed(seed)
    expected, mine = call(torch), call(mg)
    assert str(mine.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(as_array(mine), as_array(expected))
    # the generators stand at the same place afterwards
    np.testing.assert_array_equal(as_array(mg.rand(4)), as_array(torch.rand(4)))


COMPLEX_DRAWS = {
    "rand": lambda L, dtype, shape: L.rand(shape, dtype=dtype),
    "randn": lambda L, dtype, shape: L.randn(shape, dtype=dtype),
    "uniform_": lambda L, dtype, shape: L.empty(shape, dtype=dtype).uniform_(-1, 3),
    "normal_": lambda L, dtype, shape: L.empty(shape, dtype=dtype).normal_(0.5, 3.0),
    "normal_ transposed": lambda L, dtype, shape: L.empty(
        shape + (3,), dtype=dtype).transpose(0, -1).normal_(),
    "rand_like": lambda L, dtype, shape: L.rand_like(L.zeros(shape, dtype=dtype)),
    "randn_like transposed": lambda L, dtype, shape: L.randn_like(
        L.zeros(shape + (2,), dtype=dtype).transpose(0, -1)),
}


@pytest.mark.parametrize("shape", [(1,), (7,), (17,), (3, 11)])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(COMPLEX_DRAWS))
def test_complex_draws_fill_both_parts_as_torch(name, dtype, shape):
    _same_draws(lambda L: COMPLEX_DRAWS[name](L, getattr(L, dtype), shape))


MULTINOMIAL = {
    "fewer nonzero than samples": lambda L: L.multinomial(L.tensor([0.0, 1, 3, 0]), 3),
    "only the nonzero": lambda L: L.multinomial(L.tensor([[0.0, 2, 0, 1], [1, 0, 0, 0]]), 1),
    "no row": lambda L: L.multinomial(L.zeros(0, 3), 2),
    "no row, replacement": lambda L: L.multinomial(L.zeros(0, 3), 2, True),
    "no row, one sample": lambda L: L.multinomial(L.zeros(0, 3), 1),
    "no row, no category": lambda L: L.multinomial(L.zeros(0, 0), 1, True),
    "0-d num_samples": lambda L: L.multinomial(L.tensor([1.0, 2, 3]), L.tensor(2)),
}


@pytest.mark.parametrize("name", sorted(MULTINOMIAL))
def test_multinomial_corners(name):
    if name == "fewer nonzero than samples":      # the zero-weight draw's index is a tie
        for lib in (torch, mg):
            lib.manual_seed(3)
        expected, mine = MULTINOMIAL[name](torch), MULTINOMIAL[name](mg)
        assert as_array(mine)[:2].tolist() == as_array(expected)[:2].tolist()
        assert as_array(mine)[2] in (0, 3)
        return
    _same_draws(MULTINOMIAL[name])


@pytest.mark.parametrize("n, dtype", [(256, "uint8"), (128, "int8"), (2049, "float16"),
                                      (300, "int16"), (1, "uint8"), (0, "int8")])
def test_randperm_at_the_dtype_limit(n, dtype):
    _same_draws(lambda L: L.randperm(n, dtype=getattr(L, dtype)))


EMPTY_INTEGER = {
    "randn": lambda L: L.randn(0, dtype=L.int64),
    "normal_": lambda L: L.empty(0, dtype=L.int64).normal_(),
    "exponential_": lambda L: L.empty(0, dtype=L.int32).exponential_(),
    "log_normal_": lambda L: L.empty(0, 2, dtype=L.int64).log_normal_(),
    "randn_like": lambda L: L.randn_like(L.zeros(0, dtype=L.int64)),
}


@pytest.mark.parametrize("name", sorted(EMPTY_INTEGER))
def test_samplers_of_an_empty_integer_tensor(name):
    """torch checks these dtypes in a kernel that no empty tensor runs."""
    _same_draws(EMPTY_INTEGER[name])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rates", [
    [0.0, 0.5, 1.0, 3.0, 9.99],
    [10.0, 11.0, 50.0, 1e3, 2e6],
    [[1.0, 2e12, 4.0], [30.0, 0.0, 7.5]],
    [float("inf"), 5.0],
])
def test_poisson_counts(rates, dtype):
    _same_draws(lambda L: L.poisson(L.tensor(rates, dtype=getattr(L, dtype))))


def test_poisson_of_a_transposed_tensor_with_a_generator():
    def call(L):
        g = L.Generator().manual_seed(11)
        rates = (L.arange(12.0).reshape(3, 4) * 3).t()
        return L.poisson(rates, generator=g), L.rand(3, generator=g)
    expected, mine = call(torch), call(mg)
    for a, b in zip(expected, mine):
        np.testing.assert_array_equal(as_array(b), as_array(a))


def test_poisson_without_a_c_library_falls_back(monkeypatch):
    """Where ctypes finds no C library (Windows, some musl systems) the sampler takes
    Python's lgamma: it still imports, runs and gives torch's counts at these rates."""
    import ctypes
    import math
    import sys
    module = sys.modules["microgradnorm.poisson"]

    def no_library(*args, **kwargs):
        raise OSError("no C math library")
    monkeypatch.setattr(ctypes, "CDLL", no_library)
    module._lgamma.cache_clear()
    try:
        assert module._lgamma() is math.lgamma
        _same_draws(lambda L: L.poisson(L.tensor([3.0, 15.0, 400.0, 1e6], dtype=L.float64)))
    finally:
        module._lgamma.cache_clear()


def test_poisson_gradient_is_zero():
    x, y = torch.tensor([1.0, 20.0], requires_grad=True), mg.tensor([1.0, 20.0],
                                                                      requires_grad=True)
    torch.poisson(x).sum().backward()
    out = mg.poisson(y)
    assert out.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(as_array(y.grad), as_array(x.grad))


@pytest.mark.parametrize("seed", [1.5, "7", True, -1.5, 2 ** 64 - 1])
def test_manual_seed_converts_with_int(seed):
    assert mg.manual_seed(seed).initial_seed() == torch.manual_seed(seed).initial_seed()
    np.testing.assert_array_equal(as_array(mg.rand(3)), as_array(torch.rand(3)))


def test_manual_seed_of_a_one_element_tensor():
    assert mg.manual_seed(mg.tensor(3)).initial_seed() == \
        torch.manual_seed(torch.tensor(3)).initial_seed()


def test_clone_state_continues_the_stream_and_its_cached_normal():
    def call(L):
        g = L.Generator().manual_seed(4)
        L.randn(3, generator=g)                 # fewer than 16: a normal left cached
        clone = g.clone_state()
        return (clone.initial_seed(), L.randn(1, generator=clone), L.randn(1, generator=g),
                L.rand(5, generator=clone))
    expected, mine = call(torch), call(mg)
    assert mine[0] == expected[0]
    for a, b in zip(expected[1:], mine[1:]):
        np.testing.assert_array_equal(as_array(b), as_array(a))


@pytest.mark.parametrize("a, mean", [(1.0, 0.0), (0.0, 0.0), (2.0, 2.0)])
def test_trunc_normal_of_a_window_of_one_point(a, mean):
    _same_draws(lambda L: L.nn.init.trunc_normal_(L.empty(20), mean=mean, a=a, b=a))


ZERO_GRADIENT = {
    "normal(tensor, tensor)": lambda L, a, b: L.normal(a, b),
    "normal(tensor, float)": lambda L, a, b: L.normal(a, 2.0),
    "normal(float, tensor)": lambda L, a, b: L.normal(1.0, b),
    "normal broadcast": lambda L, a, b: L.normal(a.reshape(3, 1), b),
    "bernoulli(p)": lambda L, a, b: L.bernoulli(a.sigmoid()),
    "poisson": lambda L, a, b: L.poisson(b * 4),
}


@pytest.mark.parametrize("name", sorted(ZERO_GRADIENT))
def test_draws_from_parameters_that_require_grad_pass_a_zero_gradient(name):
    """torch records these draws in the graph, each parameter's gradient zero."""
    grads = []
    for lib in (torch, mg):
        lib.manual_seed(0)
        a = lib.tensor([0.1, 0.5, 0.9], requires_grad=True)
        b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = ZERO_GRADIENT[name](lib, a, b)
        assert out.requires_grad
        out.sum().backward()
        grads.append([None if t.grad is None else as_array(t.grad) for t in (a, b)])
        with lib.no_grad():
            assert not ZERO_GRADIENT[name](lib, a, b).requires_grad
    for expected, mine in zip(*grads):
        assert (expected is None) == (mine is None)
        if expected is not None:
            np.testing.assert_array_equal(mine, expected)

"""``mg.Generator`` and the random factories against PyTorch's CPU generator, bit for bit:
the same seed gives the same values (rand, randn, randint, randperm, multinomial, normal_,
uniform_, random_, bernoulli, exponential_, dropout, nn.Linear/Embedding and nn.init) in
float32 and float64, below and above normal_'s 16-element block, odd and empty sizes, over
consecutive calls (the stream and the cached normal sample carry on), and the generator's
state is torch's byte for byte. Then the Generator API, the default dtypes and bad input
(a clear error, the stream unmoved)."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import dtypes, nn

SIZES = (0, 1, 2, 7, 15, 16, 17, 31, 32, 33, 100, 1001)
FLOATS = ((mg.float32, torch.float32), (mg.float64, torch.float64))


def same(mine, theirs):
    np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
    assert mine.dtype == np.dtype(str(theirs.dtype).removeprefix("torch."))


def generators(seed=0):
    return mg.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)


def same_state(g, t):
    ours, theirs = g.get_state(), t.get_state()
    assert isinstance(ours, mg.Tensor) and ours.dtype == mg.uint8      # torch's ByteTensor
    assert ours.shape == theirs.shape and not ours.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype, torch_dtype", FLOATS)
def test_rand_randn_normal_uniform_match_torch_over_sizes_and_consecutive_calls(
        dtype, torch_dtype):
    g, t = generators(0)
    for n in SIZES:            # one stream: each call continues where the last one stopped
        same(mg.rand(n, generator=g, dtype=dtype), torch.rand(n, generator=t, dtype=torch_dtype))
        same(mg.randn(n, generator=g, dtype=dtype),
             torch.randn(n, generator=t, dtype=torch_dtype))
        same(mg.empty(n, dtype=dtype).normal_(0.3, 2.5, generator=g),
             torch.empty(n, dtype=torch_dtype).normal_(0.3, 2.5, generator=t))
        same(mg.empty(n, dtype=dtype).uniform_(-2, 0.7, generator=g),
             torch.empty(n, dtype=torch_dtype).uniform_(-2, 0.7, generator=t))
        same_state(g, t)                     # the cached normal sample included
    same(mg.randn(3, 5, 7, generator=g, dtype=dtype),
         torch.randn(3, 5, 7, generator=t, dtype=torch_dtype))
    same(mg.normal(-1.0, 0.1, (4, 9), generator=g, dtype=dtype),
         torch.normal(-1.0, 0.1, (4, 9), generator=t, dtype=torch_dtype))


def test_a_million_float32_normals_match_torch():
    g, t = generators(123)
    same(mg.randn(1_000_003, generator=g), torch.randn(1_000_003, generator=t))


@pytest.mark.parametrize("seed", [1, 2 ** 40 + 3, 2 ** 64 - 1, -7])
def test_seeds_over_the_whole_range_match_torch(seed):
    mg.manual_seed(seed)
    torch.manual_seed(seed)
    assert mg.initial_seed() == torch.initial_seed()
    same(mg.randn(40), torch.randn(40))
    same(mg.rand(5, dtype=mg.float64), torch.rand(5, dtype=torch.float64))
    np.testing.assert_array_equal(mg.get_rng_state().numpy(), torch.get_rng_state().numpy())


def test_a_seed_given_again_restarts_the_same_stream():
    # the expanded seed is kept for reuse: drawing must not change what the next
    # manual_seed of the same seed (or of one equal in its low 32 bits) starts from
    g = mg.Generator()
    first = g.manual_seed(5).get_state().numpy().copy()
    mg.randn(1000, generator=g)
    np.testing.assert_array_equal(g.manual_seed(5).get_state().numpy(), first)
    t = torch.Generator().manual_seed(2 ** 32 + 5)
    np.testing.assert_array_equal(g.manual_seed(2 ** 32 + 5).get_state().numpy(),
                                  t.get_state().numpy())


def test_integer_samplers_match_torch():
    g, t = generators(5)
    for n in SIZES:
        same(mg.randint(0, 10, (n,), generator=g), torch.randint(0, 10, (n,), generator=t))
        same(mg.randint(-5, 2 ** 40, (n,), generator=g),      # a range of 2**28 or more
             torch.randint(-5, 2 ** 40, (n,), generator=t))
        same(mg.randperm(n, generator=g), torch.randperm(n, generator=t))
    same(mg.randint(7, (2, 3), generator=g, dtype=mg.int32),
         torch.randint(7, (2, 3), generator=t, dtype=torch.int32))
    for dtype in ("int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64"):
        mine, theirs = mg.empty(50, dtype=dtype), torch.empty(50, dtype=getattr(torch, dtype))
        same(mine.random_(generator=g), theirs.random_(generator=t))
        same(mine.random_(2, generator=g), theirs.random_(2, generator=t))
        same(mine.random_(0, None, generator=g), theirs.random_(0, None, generator=t))
    same(mg.empty(9, dtype=mg.int64).random_(-2 ** 63, None, generator=g),
         torch.empty(9, dtype=torch.int64).random_(-2 ** 63, None, generator=t))
    same(mg.randint_like(mg.zeros(4, 3), 3, 9, generator=g),
         torch.randint_like(torch.zeros(4, 3), 3, 9, generator=t))
    same_state(g, t)


@pytest.mark.parametrize("replacement, samples", [(False, 1), (False, 4), (True, 1), (True, 9)])
@pytest.mark.parametrize("dtype, torch_dtype", FLOATS)
def test_multinomial_matches_torch(replacement, samples, dtype, torch_dtype):
    g, t = generators(9)
    probs = np.random.default_rng(0).random((5, 40))
    probs[0, :3] = 0
    for rows in (probs, probs[1]):                                     # 2-D and 1-D
        for _ in range(3):
            same(mg.multinomial(mg.tensor(rows, dtype=dtype), samples, replacement,
                                generator=g),
                 torch.multinomial(torch.tensor(rows, dtype=torch_dtype), samples,
                                   replacement, generator=t))
    same_state(g, t)


@pytest.mark.parametrize("dtype, torch_dtype", FLOATS)
def test_bernoulli_exponential_and_the_like_factories_match_torch(dtype, torch_dtype):
    g, t = generators(3)
    p = np.linspace(0, 1, 37)
    for n in (1, 16, 37):
        same(mg.empty(n, dtype=dtype).bernoulli_(0.3, generator=g),
             torch.empty(n, dtype=torch_dtype).bernoulli_(0.3, generator=t))
        same(mg.empty(n, dtype=dtype).exponential_(2.0, generator=g),
             torch.empty(n, dtype=torch_dtype).exponential_(2.0, generator=t))
    same(mg.bernoulli(mg.tensor(p, dtype=dtype), generator=g),
         torch.bernoulli(torch.tensor(p, dtype=torch_dtype), generator=t))
    same(mg.empty(37, dtype=mg.int64).bernoulli_(mg.tensor(p, dtype=dtype), generator=g),
         torch.empty(37, dtype=torch.int64).bernoulli_(torch.tensor(p, dtype=torch_dtype),
                                                       generator=t))
    x, tx = mg.zeros(5, 7, dtype=dtype), torch.zeros(5, 7, dtype=torch_dtype)
    same(mg.rand_like(x, generator=g), torch.rand_like(tx, generator=t))
    same(mg.randn_like(x, generator=g), torch.randn_like(tx, generator=t))
    mean, std = mg.tensor([[0.0], [5.0]], dtype=dtype), mg.tensor([1.0, 2.0, 3.0], dtype=dtype)
    tmean, tstd = torch.tensor([[0.0], [5.0]], dtype=torch_dtype), \
        torch.tensor([1.0, 2.0, 3.0], dtype=torch_dtype)
    same(mg.normal(mean, 2.0, generator=g), torch.normal(tmean, 2.0, generator=t))
    same(mg.normal(1.0, std, generator=g), torch.normal(1.0, tstd, generator=t))
    same(mg.normal(mean, std, generator=g), torch.normal(tmean, tstd, generator=t))
    same_state(g, t)


def test_half_precision_draws_match_torch():
    g, t = generators(4)
    kinds = [(mg.float16, torch.float16)]
    if dtypes.has_bfloat16():
        kinds.append((mg.bfloat16, torch.bfloat16))
    for dtype, torch_dtype in kinds:
        for n in (5, 16, 40):
            for mine, theirs in ((mg.rand(n, generator=g, dtype=dtype),
                                  torch.rand(n, generator=t, dtype=torch_dtype)),
                                 (mg.randn(n, generator=g, dtype=dtype),
                                  torch.randn(n, generator=t, dtype=torch_dtype))):
                np.testing.assert_array_equal(mine.numpy().astype(np.float32),
                                              theirs.float().numpy())
    same_state(g, t)


def test_non_contiguous_fills_follow_memory_order_as_torch():
    g, t = generators(6)
    for method, args in (("uniform_", ()), ("normal_", ()), ("bernoulli_", (0.4,))):
        mine, theirs = mg.zeros(5, 7).T, torch.zeros(5, 7).t()     # a transposed view
        getattr(mine, method)(*args, generator=g)
        getattr(theirs, method)(*args, generator=t)
        same(mine, theirs)
    same_state(g, t)


def test_modules_and_initialisers_draw_torchs_weights():
    for seed in (0, 1):
        mg.manual_seed(seed)
        torch.manual_seed(seed)
        for mine, theirs in ((nn.Linear(3, 4), torch.nn.Linear(3, 4)),
                             (nn.Linear(300, 40), torch.nn.Linear(300, 40)),
                             (nn.Embedding(30, 7), torch.nn.Embedding(30, 7))):
            for name, param in theirs.named_parameters():
                same(getattr(mine, name), param)
    cases = [("uniform_", {"a": -0.2, "b": 0.5}), ("normal_", {"std": 0.02}),
             ("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {}),
             ("kaiming_uniform_", {"a": 0.1}), ("kaiming_normal_", {"mode": "fan_out"}),
             ("trunc_normal_", {"std": 0.02}), ("trunc_normal_", {"a": 0.5, "b": 0.9})]
    for name, kwargs in cases:
        for dtype, torch_dtype in FLOATS:
            g, t = generators(2)
            mine = getattr(nn.init, name)(mg.empty(24, 18, dtype=dtype), generator=g, **kwargs)
            theirs = getattr(torch.nn.init, name)(torch.empty(24, 18, dtype=torch_dtype),
                                                  generator=t, **kwargs)
            same(mine, theirs)
            same_state(g, t)


def test_orthogonal_init_draws_torchs_normals_and_agrees_to_rounding():
    g, t = generators(8)
    mine = nn.init.orthogonal_(mg.empty(6, 10, dtype=mg.float64), generator=g)
    theirs = torch.nn.init.orthogonal_(torch.empty(6, 10, dtype=torch.float64), generator=t)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), atol=1e-12)
    same_state(g, t)


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_masks_match_torch(p):
    x = np.random.default_rng(0).standard_normal((7, 33)).astype(np.float32)
    mg.manual_seed(3)
    torch.manual_seed(3)
    same(F.dropout(mg.tensor(x), p), torch.nn.functional.dropout(torch.tensor(x), p))
    same(nn.Dropout(p)(mg.tensor(x)), torch.nn.Dropout(p)(torch.tensor(x)))


def test_generator_api():
    g = mg.Generator()
    assert g.device == "cpu" and g.initial_seed() == torch.Generator().initial_seed()
    assert g.manual_seed(42) is g and g.initial_seed() == 42
    assert g.manual_seed(-1).initial_seed() == 2 ** 64 - 1          # torch's wrap-around
    state = g.get_state()
    assert state.dtype == np.uint8 and state.shape == (5056,)
    mg.randn(5, generator=g, dtype=mg.float64)             # leaves a cached normal sample
    state = g.get_state()
    first = mg.randn(9, generator=g, dtype=mg.float64)
    assert g.set_state(state) is g
    same(mg.randn(9, generator=g, dtype=mg.float64), first)         # replays, cache too
    other = torch.Generator().set_state(torch.from_numpy(g.get_state().numpy()))  # into torch
    same(mg.rand(4, generator=g), torch.rand(4, generator=other))
    fresh = mg.Generator().set_state(other.get_state())                   # and back
    same(mg.rand(4, generator=fresh), torch.rand(4, generator=other))
    a, b = generators(1)[0], generators(1)[0]               # two generators: independent
    mg.rand(10, generator=a)
    assert not np.array_equal(mg.rand(3, generator=a).numpy(), mg.rand(3, generator=b).numpy())
    seed = g.seed()
    assert g.initial_seed() == seed and 0 <= seed < 2 ** 64


def test_the_default_generator_and_module_functions():
    assert mg.manual_seed(7) is mg.default_generator
    assert mg.initial_seed() == 7
    state = mg.get_rng_state()
    assert isinstance(state, mg.Tensor) and state.dtype == mg.uint8
    first = mg.rand(3)
    mg.set_rng_state(state)
    same(mg.rand(3), first)
    torch.manual_seed(7)
    mg.set_rng_state(torch.get_rng_state())                 # torch's state works here too
    same(mg.randn(20), (torch.manual_seed(7), torch.randn(20))[1])
    assert mg.seed() == mg.initial_seed()


def test_default_float_dtypes():
    for made in (mg.rand(2), mg.randn(2), mg.zeros(2), mg.ones(2), mg.empty(2),
                 mg.full((2,), 1.5), mg.arange(0, 1, 0.5), mg.linspace(0, 1, 3),
                 mg.normal(0.0, 1.0, (2,))):
        assert made.dtype == mg.float32
    assert mg.rand(2, dtype=mg.float64).dtype == mg.float64
    assert mg.randint(3, (2,)).dtype == mg.int64 and mg.full((1,), 2).dtype == mg.int64
    mg.set_default_dtype(mg.float64)
    assert mg.randn(2).dtype == mg.float64 and mg.linspace(0, 1, 3).dtype == mg.float64
    mg.set_default_dtype(mg.float32)
    same(mg.linspace(-1, 2, 7), torch.linspace(-1, 2, 7))


def test_random_fills_in_a_graph_and_on_leaves_follow_torch():
    x = mg.ones(3, requires_grad=True)
    y = x * 2
    y.uniform_()                                            # recorded: no gradient to x
    y.sum().backward()
    assert not x.grad.numpy().any()
    with pytest.raises(RuntimeError, match="leaf"):
        x.normal_()
    version = x._version
    with mg.no_grad():
        x.normal_()
    assert x._version == version + 1


def unmoved(call, error, match):
    """``call`` raises ``error`` and the default stream is where it was."""
    mg.manual_seed(11)
    state = mg.get_rng_state().numpy()
    with pytest.raises(error, match=match):
        call()
    np.testing.assert_array_equal(mg.get_rng_state().numpy(), state)


@pytest.mark.parametrize("call, error, match", [
    (lambda: mg.rand(2, generator=np.random.default_rng(0)), TypeError, "generator"),
    (lambda: mg.randn(2, generator=torch.Generator()), TypeError, "generator"),
    (lambda: mg.multinomial(mg.ones(3), 1, generator=1), TypeError, "generator"),
    (lambda: mg.zeros(3).normal_(generator="g"), TypeError, "generator"),
    (lambda: nn.init.uniform_(mg.zeros(3), generator=np.random), TypeError, "generator"),
    (lambda: F.dropout(mg.ones(3), generator=object()), TypeError, "generator"),
    (lambda: mg.Generator().manual_seed(1.5), TypeError, "seed"),      # mg.manual_seed:
    (lambda: mg.Generator().manual_seed(True), TypeError, "seed"),     # int(seed), as torch
    (lambda: mg.Generator().manual_seed("1"), TypeError, "seed"),
    (lambda: mg.manual_seed(2 ** 64), ValueError, "seed"),
    (lambda: mg.manual_seed(-2 ** 63 - 1), ValueError, "seed"),
    (lambda: mg.set_rng_state(np.zeros(10, np.uint8)), ValueError, "5056"),
    (lambda: mg.set_rng_state(np.zeros(5056, np.float32)), TypeError, "uint8"),
    (lambda: mg.set_rng_state(np.zeros(5056, np.uint8)), ValueError, "invalid"),
    (lambda: mg.rand(2, dtype=mg.int64), TypeError, "floating"),
    (lambda: mg.rand(2, requires_grad=1), TypeError, "requires_grad"),
    (lambda: mg.randint(5, (3,), requires_grad=True), TypeError, "floating"),
    (lambda: mg.randn(2, device="tpu"), ValueError, "device"),
    (lambda: mg.zeros(3).normal_(0, -1), ValueError, "std"),
    (lambda: mg.zeros(3).uniform_(1, 0), ValueError, "from"),
    (lambda: mg.zeros(3).bernoulli_(1.5), ValueError, "p"),
    (lambda: mg.zeros(3).bernoulli_(mg.tensor([0.5, 2.0, 0.1])), ValueError, "p"),
    (lambda: mg.zeros(3).exponential_(0), ValueError, "lambd"),
    (lambda: mg.zeros(3, dtype=mg.int8).random_(0, 300), ValueError, "to - 1"),
    (lambda: mg.zeros(3).random_(5, 2), ValueError, "from"),
    (lambda: mg.ones(3, requires_grad=True).uniform_(), RuntimeError, "leaf"),
    (lambda: mg.normal(0.0, 1.0), TypeError, "size"),
    (lambda: mg.normal(mg.zeros(2), mg.tensor([1.0, -1.0])), ValueError, "std"),
    (lambda: mg.multinomial(mg.tensor([1, 2]), 1), TypeError, "floating"),
    # torch's RuntimeError (and a ValueError, as the other ranges)
    (lambda: mg.multinomial(mg.tensor([1.0, -1.0]), 1), RuntimeError, "non-negative"),
    (lambda: mg.multinomial(mg.tensor([0.0, 0.0]), 1), RuntimeError, "positive sum"),
    (lambda: mg.Generator(device="cuda"), ValueError, "cpu"),
])
def test_bad_input_is_a_clear_error_and_draws_nothing(call, error, match):
    unmoved(call, error, match)


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_unsigned_randint_and_bounded_random_match_torch(dtype):
    g, t = generators(3)
    theirs_dtype = getattr(torch, dtype)
    for n in (0, 1, 7, 100):
        same(mg.randint(0, 10, (n,), generator=g, dtype=dtype),
             torch.randint(0, 10, (n,), generator=t, dtype=theirs_dtype))
        same(mg.randint(3, 1 << 15, (n,), generator=g, dtype=dtype),
             torch.randint(3, 1 << 15, (n,), generator=t, dtype=theirs_dtype))
        mine, theirs = mg.empty(n, dtype=dtype), torch.empty(n, dtype=theirs_dtype)
        same(mine.random_(5, generator=g), theirs.random_(5, generator=t))
        same(mine.random_(2, 9, generator=g), theirs.random_(2, 9, generator=t))
    if dtype == "uint64":                                  # a 64-bit draw, as torch's
        same(mg.randint(0, 1 << 40, (9,), generator=g, dtype=dtype),
             torch.randint(0, 1 << 40, (9,), generator=t, dtype=theirs_dtype))
    with pytest.raises(NotImplementedError):               # torch has no random_() kernel
        torch.empty(3, dtype=theirs_dtype).random_()
    with pytest.raises(NotImplementedError):
        mg.empty(3, dtype=dtype).random_()

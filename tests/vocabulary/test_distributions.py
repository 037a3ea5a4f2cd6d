"""mg.distributions (torch.distributions) against PyTorch: each family's values (log_prob,
entropy, cdf, icdf, moments, mode), shapes (batch_shape, event_shape, sample shapes) and
the gradients of a random upstream through log_prob, entropy, rsample and kl_divergence into
every parameter, in float64 (float32 within its rounding); the draws of sample and rsample
under one manual_seed (torch's values); the argument checks (ValueError, as torch's) and
their switches; kl_divergence's registry and dispatch."""

import math
import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.distributions as MD

TD = torch.distributions
RNG = np.random.default_rng(0)
LOC = RNG.standard_normal((3, 4))
SCALE = RNG.uniform(0.3, 2.0, (3, 4))
VALUE = RNG.standard_normal((2, 3, 4))
LOGITS = RNG.standard_normal((3, 5))
PROBS = RNG.uniform(0.0, 1.0, (3, 5))
P01 = RNG.uniform(0.05, 0.95, (3, 4))
TRIL = np.tril(RNG.standard_normal((2, 3, 3)) * 0.5) + 2 * np.eye(3)
QUANTILES = RNG.uniform(0.05, 0.95, (3, 4))


def numpy_of(t):
    return t.detach().numpy()


def run(lib, build, *arrays):
    """build(lib, D, *tensors) with float64 leaves that require grad: its outputs (a tuple),
    and the gradients of a random upstream through them into each leaf (zeros for none)."""
    dists = TD if lib is torch else MD
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    outs = build(lib, dists, *leaves)
    outs = outs if isinstance(outs, tuple) else (outs,)
    rng = np.random.default_rng(1)
    total = 0
    for out in outs:
        if out.requires_grad:
            upstream = rng.standard_normal(tuple(out.shape))
            finite = lib.tensor(np.isfinite(numpy_of(out)).astype(np.float64))
            total = total + (out * finite * lib.tensor(upstream)).nan_to_num().sum()
    if isinstance(total, (lib.Tensor,)) and total.requires_grad:
        total.backward()
    grads = [numpy_of(t.grad) if t.grad is not None else np.zeros(t.shape) for t in leaves]
    return [numpy_of(o) for o in outs], [str(o.dtype).split(".")[-1] for o in outs], grads


def agree(build, *arrays, atol=1e-12):
    """Values, dtypes and gradients of ``build`` here and in torch."""
    ours, our_dtypes, our_grads = run(mg, build, *arrays)
    theirs, their_dtypes, their_grads = run(torch, build, *arrays)
    assert our_dtypes == their_dtypes
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, atol=atol, rtol=1e-10)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, atol=atol, rtol=1e-10)


def same_draws(build, seed=0):
    """build(lib, D) under manual_seed(seed) here and in torch: equal draws (bit for bit)."""
    torch.manual_seed(seed)
    theirs = build(torch, TD)
    mg.manual_seed(seed)
    ours = build(mg, MD)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    ours = ours if isinstance(ours, tuple) else (ours,)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_array_equal(numpy_of(a), numpy_of(b))


def raises_like_torch(build):
    """build(lib, D) raises one exception class here and in torch."""
    with pytest.raises(Exception) as theirs:
        build(torch, TD)
    with pytest.raises(theirs.type):
        build(mg, MD)


# ----- Normal and Uniform ---------------------------------------------------------------------
def test_normal_values_and_gradients():
    def build(lib, D, loc, scale, value):
        d = D.Normal(loc, scale)
        return (d.log_prob(value), d.entropy(), d.cdf(value), d.icdf(lib.tensor(QUANTILES)),
                d.mean, d.mode,
                d.stddev, d.variance, d.perplexity())
    agree(build, LOC, SCALE, VALUE)


def test_normal_shapes():
    for lib, D in ((torch, TD), (mg, MD)):
        d = D.Normal(lib.tensor(LOC), lib.tensor(SCALE))
        assert tuple(d.batch_shape) == (3, 4) and tuple(d.event_shape) == ()
        assert tuple(d.sample((2, 5)).shape) == (2, 5, 3, 4)
        assert tuple(D.Normal(0.0, 1.0).batch_shape) == ()
        assert tuple(D.Normal(lib.zeros(3), 1.0).batch_shape) == (3,)
        assert tuple(d.expand((2, 3, 4)).batch_shape) == (2, 3, 4)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_normal_draws_are_torchs(dtype):
    def build(lib, D):
        d = D.Normal(lib.tensor(LOC.astype(dtype)), lib.tensor(SCALE.astype(dtype)))
        return d.sample(), d.rsample((5,)), d.sample((2,)), d.rsample()
    same_draws(build)


def test_normal_rsample_gradient():
    def build(lib, D, loc, scale):
        lib.manual_seed(7)
        return D.Normal(loc, scale).rsample((6,))
    agree(build, LOC, SCALE)


def test_float32_within_rounding():
    def build(lib, D):
        loc, scale = lib.tensor(LOC.astype("float32")), lib.tensor(SCALE.astype("float32"))
        value = lib.tensor(VALUE.astype("float32"))
        d = D.Normal(loc, scale)
        c = D.Categorical(logits=lib.tensor(LOGITS.astype("float32")))
        return d.log_prob(value), d.entropy(), d.cdf(value), c.entropy(), c.probs
    ours, theirs = build(mg, MD), build(torch, TD)
    for a, b in zip(ours, theirs):
        assert str(a.dtype).split(".")[-1] == "float32"
        np.testing.assert_allclose(numpy_of(a), numpy_of(b), rtol=2e-6, atol=2e-6)


def test_uniform_values_gradients_and_draws():
    low, high = LOC, LOC + SCALE

    def build(lib, D, low, high, value):
        d = D.Uniform(low, high, validate_args=False)
        lib.manual_seed(3)
        return (d.log_prob(value), d.entropy(), d.cdf(value), d.icdf(value.sigmoid()),
                d.mean, d.stddev, d.variance, d.rsample((4,)))
    agree(build, low, high, VALUE * 0.5 + LOC)

    def draws(lib, D):
        d = D.Uniform(lib.tensor(low), lib.tensor(high))
        return d.sample(), d.rsample((3, 2)), d.mode
    same_draws(draws)


def test_uniform_log_prob_outside_is_minus_inf():
    d = MD.Uniform(mg.tensor([0.0, 1.0]), mg.tensor([2.0, 1.5]), validate_args=False)
    assert d.log_prob(mg.tensor([3.0, 1.2])).tolist()[0] == -math.inf


# ----- Bernoulli ------------------------------------------------------------------------------
def test_bernoulli_values_and_gradients():
    value = (RNG.uniform(size=(3, 4)) < 0.5).astype(np.float64)

    def by_probs(lib, D, probs):
        d = D.Bernoulli(probs=probs)
        return (d.log_prob(lib.tensor(value)), d.entropy(), d.logits, d.mean, d.variance,
                d.enumerate_support())

    def by_logits(lib, D, logits):
        d = D.Bernoulli(logits=logits)
        return d.log_prob(lib.tensor(value)), d.entropy(), d.probs, d.mode
    agree(by_probs, P01)
    agree(by_logits, LOC)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_bernoulli_draws_and_mode(dtype):
    def build(lib, D):
        d = D.Bernoulli(probs=lib.tensor(np.array([0.2, 0.5, 0.9, 0.5]).astype(dtype)))
        return d.sample(), d.sample((5,)), d.sample((2, 3)), d.mode
    same_draws(build)


@pytest.mark.parametrize("layout", ["expanded", "transposed", "sliced", "permuted"])
def test_bernoulli_of_strided_probabilities_draws_torchs(layout):
    # torch's bernoulli writes a row-major result whatever the layout of p (Bernoulli.sample
    # hands it p expanded to the sample's shape)
    views = {"expanded": lambda t: t[0].expand(5, 6), "transposed": lambda t: t.T,
             "sliced": lambda t: t[:, ::2],
             "permuted": lambda t: t.reshape(2, 3, 4).permute(2, 0, 1)}
    probs = RNG.uniform(size=(4, 6))
    same_draws(lambda lib, D: lib.bernoulli(views[layout](lib.tensor(probs))), seed=3)


# ----- Categorical and OneHotCategorical ------------------------------------------------------
def test_categorical_values_and_gradients():
    actions = np.array([0, 4, 2])

    def by_logits(lib, D, logits):
        d = D.Categorical(logits=logits)
        return d.log_prob(lib.tensor(actions)), d.entropy(), d.probs, d.logits

    def by_probs(lib, D, probs):
        d = D.Categorical(probs=probs)
        return (d.log_prob(lib.tensor(actions)), d.entropy(), d.logits, d.probs, d.mean,
                d.variance)
    agree(by_logits, LOGITS)
    agree(by_probs, PROBS)
    with_zero = PROBS.copy()
    with_zero[1, 2] = 0.0                       # a zero probability: entropy stays finite
    agree(by_probs, with_zero)
    impossible = LOGITS.copy()
    impossible[0, 3] = -math.inf                # an impossible class: entropy stays finite
    agree(lambda lib, D, logits: D.Categorical(logits=logits).entropy(), impossible)


def test_categorical_log_prob_broadcasts_over_samples():
    def build(lib, D, logits):
        d = D.Categorical(logits=logits)
        value = lib.tensor(np.array([[0, 1, 2], [4, 4, 0]]))          # (2, 3): a sample
        return d.log_prob(value), d.log_prob(lib.tensor(np.array([3]))), d.mode
    agree(build, LOGITS)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_categorical_draws_are_torchs(dtype):
    def build(lib, D):
        d = D.Categorical(logits=lib.tensor(LOGITS.astype(dtype)))
        e = D.Categorical(probs=lib.tensor(np.array([0.1, 0.0, 0.6, 0.3]).astype(dtype)))
        return d.sample(), d.sample((4,)), d.sample((2, 3)), e.sample((7,)), e.sample()
    same_draws(build, seed=11)


def test_categorical_shapes_and_support():
    for lib, D in ((torch, TD), (mg, MD)):
        d = D.Categorical(logits=lib.tensor(LOGITS))
        assert tuple(d.batch_shape) == (3,) and tuple(d.event_shape) == ()
        assert tuple(d.param_shape) == (3, 5)
        assert tuple(d.sample((2, 4)).shape) == (2, 4, 3)
        assert tuple(d.enumerate_support().shape) == (5, 3)
        assert tuple(d.enumerate_support(expand=False).shape) == (5, 1)
        e = d.expand((2, 3))
        assert tuple(e.batch_shape) == (2, 3) and tuple(e.logits.shape) == (2, 3, 5)
        assert tuple(D.Categorical(probs=lib.ones(4)).batch_shape) == ()


def test_one_hot_categorical():
    value = np.eye(5)[[1, 0, 4]]

    def build(lib, D, logits):
        d = D.OneHotCategorical(logits=logits)
        return d.log_prob(lib.tensor(value)), d.entropy(), d.mean, d.variance, d.mode

    def straight_through(lib, D, logits):
        lib.manual_seed(2)
        return D.OneHotCategoricalStraightThrough(logits=logits).rsample((3,))
    agree(build, LOGITS)
    agree(straight_through, LOGITS)

    def draws(lib, D):
        d = D.OneHotCategorical(probs=lib.tensor(PROBS))
        return d.sample(), d.sample((4,)), d.enumerate_support()
    same_draws(draws, seed=5)


# ----- MultivariateNormal and Independent -----------------------------------------------------
def test_multivariate_normal_values_and_gradients():
    loc = RNG.standard_normal((4, 2, 3))                       # batch (4, 2), L batch (2,)
    value = RNG.standard_normal((5, 4, 2, 3))

    def by_tril(lib, D, loc, tril):
        d = D.MultivariateNormal(loc, scale_tril=tril)
        lib.manual_seed(4)
        return (d.log_prob(lib.tensor(value)), d.entropy(), d.rsample((2,)), d.variance,
                d.covariance_matrix, d.precision_matrix, d.mean)

    def by_covariance(lib, D, loc, tril):
        d = D.MultivariateNormal(loc, covariance_matrix=tril @ tril.mT)
        return d.log_prob(lib.tensor(value)), d.entropy(), d.scale_tril

    def by_precision(lib, D, loc, tril):
        d = D.MultivariateNormal(loc, precision_matrix=tril @ tril.mT)
        return d.log_prob(lib.tensor(value)), d.scale_tril
    agree(by_tril, loc, TRIL, atol=1e-11)
    agree(by_covariance, loc, TRIL, atol=1e-11)
    agree(by_precision, loc, TRIL, atol=1e-11)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_multivariate_normal_draws_and_shapes(dtype):
    def build(lib, D):
        d = D.MultivariateNormal(lib.tensor(LOC[:2, :3].astype(dtype)),
                                 scale_tril=lib.tensor(TRIL.astype(dtype)))
        assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3,)
        return d.sample(), d.rsample((4,)), d.expand((5, 2)).sample()
    torch.manual_seed(0)
    theirs = build(torch, TD)
    mg.manual_seed(0)
    ours = build(mg, MD)
    for a, b in zip(ours, theirs):          # one product L ε: equal to its rounding
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(numpy_of(a), numpy_of(b), rtol=1e-6, atol=1e-6)


def test_independent():
    def build(lib, D, loc, scale):
        d = D.Independent(D.Normal(loc, scale), 1)
        e = D.Independent(D.Normal(loc * 0.5, scale + 1), 1)
        lib.manual_seed(1)
        return (d.log_prob(lib.tensor(VALUE)), d.entropy(), d.rsample((2,)), d.mean,
                D.kl_divergence(d, e))
    agree(build, LOC, SCALE)
    for lib, D in ((torch, TD), (mg, MD)):
        d = D.Independent(D.Normal(lib.tensor(LOC), lib.tensor(SCALE)), 2)
        assert tuple(d.batch_shape) == () and tuple(d.event_shape) == (3, 4)
        assert tuple(d.expand((5,)).sample().shape) == (5, 3, 4)
        assert d.has_rsample and not d.has_enumerate_support


# ----- kl_divergence --------------------------------------------------------------------------
def test_kl_between_normals_uniforms_and_bernoullis():
    def build(lib, D, loc, scale, probs):
        p, q = D.Normal(loc, scale), D.Normal(loc.flip(0), scale * 0.7)
        u = D.Uniform(loc - scale, loc + scale)
        v = D.Uniform(loc - 2 * scale, loc + 2 * scale)
        b, c = D.Bernoulli(probs=probs), D.Bernoulli(logits=loc)
        return (D.kl_divergence(p, q), D.kl_divergence(u, p), D.kl_divergence(p, u),
                D.kl_divergence(u, v), D.kl_divergence(v, u), D.kl_divergence(b, c),
                D.kl_divergence(c, b))
    agree(build, LOC, SCALE, P01)


def test_kl_between_categoricals_with_zeros():
    p = PROBS.copy()
    p[0, 1] = 0.0
    q = PROBS[::-1].copy()
    q[1, 3] = 0.0

    def build(lib, D, p, q):
        a, b = D.Categorical(probs=p), D.Categorical(probs=q)
        c, e = D.OneHotCategorical(probs=p), D.OneHotCategorical(probs=q)
        bern = D.Bernoulli(probs=lib.tensor(np.array([0.0, 0.3, 1.0])))
        bern2 = D.Bernoulli(probs=lib.tensor(np.array([0.2, 0.0, 1.0])))
        return (D.kl_divergence(a, b), D.kl_divergence(b, a), D.kl_divergence(c, e),
                D.kl_divergence(bern, bern2), D.kl_divergence(bern2, bern))
    agree(build, p, q)


def test_kl_between_multivariate_normals():
    def build(lib, D, loc, tril):
        p = D.MultivariateNormal(loc, scale_tril=tril)
        q = D.MultivariateNormal(loc.flip(-1) * 0.3, covariance_matrix=tril[0] @ tril[0].mT)
        return D.kl_divergence(p, q), D.kl_divergence(q, p)
    agree(build, LOC[:2, :3], TRIL, atol=1e-11)


def test_kl_dispatch_and_registry():
    raises_like_torch(lambda lib, D: D.kl_divergence(
        D.Normal(0.0, 1.0), D.Categorical(logits=lib.zeros(3))))
    raises_like_torch(lambda lib, D: D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.3)))

    class Shifted(MD.Normal):
        """A subclass: Normal's KL until one is registered for it."""

    p, q = Shifted(mg.tensor(0.5), mg.tensor(2.0)), MD.Normal(mg.tensor(0.0), mg.tensor(1.0))
    expected = MD.kl_divergence(MD.Normal(mg.tensor(0.5), mg.tensor(2.0)), q)
    assert MD.kl_divergence(p, q).item() == expected.item()
    try:
        MD.register_kl(Shifted, MD.Normal)(lambda p, q: mg.tensor(-1.0))
        assert MD.kl_divergence(p, q).item() == -1.0
        assert MD.kl_divergence(q, q).item() == 0.0
    finally:
        del MD.kl._KL_REGISTRY[Shifted, MD.Normal]
        MD.kl._KL_MEMOIZE.clear()
    with pytest.raises(TypeError):
        MD.register_kl(int, MD.Normal)


# ----- argument checks ------------------------------------------------------------------------
BAD_ARGUMENTS = {
    "negative scale": lambda lib, D: D.Normal(lib.zeros(2), -lib.ones(2)),
    "NaN loc": lambda lib, D: D.Normal(lib.tensor([math.nan]), lib.ones(1)),
    "negative probs": lambda lib, D: D.Categorical(probs=lib.tensor([-0.2, 0.5, 0.3])),
    "both": lambda lib, D: D.Categorical(lib.ones(3), lib.zeros(3)),
    "neither": lambda lib, D: D.Bernoulli(),
    "0-d probs": lambda lib, D: D.Categorical(probs=lib.tensor(1.0)),
    "probs above 1": lambda lib, D: D.Bernoulli(probs=lib.tensor([1.5])),
    "low above high": lambda lib, D: D.Uniform(lib.tensor([0.0, 1.0]), lib.tensor([2.0, 0.5])),
    "not positive definite": lambda lib, D: D.MultivariateNormal(
        lib.zeros(2), covariance_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "not symmetric": lambda lib, D: D.MultivariateNormal(
        lib.zeros(2), covariance_matrix=lib.tensor([[1.0, 0.5], [0.0, 1.0]])),
    "not lower": lambda lib, D: D.MultivariateNormal(
        lib.zeros(2), scale_tril=lib.tensor([[1.0, 2.0], [0.0, 1.0]])),
    "two matrices": lambda lib, D: D.MultivariateNormal(
        lib.zeros(2), scale_tril=lib.eye(2), covariance_matrix=lib.eye(2)),
    "0-d loc": lambda lib, D: D.MultivariateNormal(lib.tensor(0.0), scale_tril=lib.eye(1)),
    "too many dims": lambda lib, D: D.Independent(D.Normal(lib.zeros(2), 1.0), 2),
    "class out of range": lambda lib, D: D.Categorical(logits=lib.zeros(3)).log_prob(
        lib.tensor(3)),
    "not a tensor": lambda lib, D: D.Normal(0.0, 1.0).log_prob(1.0),
    "not 0 or 1": lambda lib, D: D.Bernoulli(probs=lib.tensor([0.5])).log_prob(
        lib.tensor([0.5])),
    "wrong event shape": lambda lib, D: D.MultivariateNormal(
        lib.zeros(3), scale_tril=lib.eye(3)).log_prob(lib.zeros(2)),
    "not broadcastable": lambda lib, D: D.Normal(lib.zeros(3), 1.0).log_prob(lib.zeros(2)),
    "a list": lambda lib, D: D.Normal([0.0], 1.0),
}


@pytest.mark.parametrize("case", sorted(BAD_ARGUMENTS))
def test_bad_arguments_raise_torchs_class(case):
    raises_like_torch(BAD_ARGUMENTS[case])


def test_validation_switches():
    d = MD.Normal(mg.zeros(2), -mg.ones(2), validate_args=False)       # no check
    assert d.scale.tolist() == [-1.0, -1.0]
    assert MD.Categorical(logits=mg.zeros(3), validate_args=False).log_prob(
        mg.tensor(1)).item() == pytest.approx(-math.log(3))
    try:
        MD.Distribution.set_default_validate_args(False)
        MD.Uniform(mg.tensor([1.0]), mg.tensor([0.0]))                  # no check now
    finally:
        MD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        MD.Uniform(mg.tensor([1.0]), mg.tensor([0.0]))
    with pytest.raises(ValueError):
        MD.Distribution.set_default_validate_args("yes")


def test_messages_and_repr_read_as_torchs():
    for case in ("negative scale", "class out of range"):
        with pytest.raises(ValueError) as theirs:
            BAD_ARGUMENTS[case](torch, TD)
        with pytest.raises(ValueError) as ours:
            BAD_ARGUMENTS[case](mg, MD)
        first = str(theirs.value).split("distribution")[0]
        assert str(ours.value).startswith(first)
    assert repr(MD.Normal(0.0, 1.0)) == repr(TD.Normal(0.0, 1.0))
    assert repr(MD.constraints.positive) == repr(TD.constraints.positive)
    assert repr(MD.constraints.real_vector) == repr(TD.constraints.real_vector)
    assert repr(MD.Categorical(logits=mg.zeros(3)).support) == \
        repr(TD.Categorical(logits=torch.zeros(3)).support)


def test_constraints_check_as_torchs():
    values = RNG.standard_normal((4, 3))
    matrices = [np.eye(3), TRIL[0], TRIL[0] @ TRIL[0].T, -np.eye(3), np.ones((3, 3))]
    for name in ("real", "positive", "nonnegative", "unit_interval", "boolean", "simplex",
                 "real_vector", "one_hot", "nonnegative_integer"):
        ours = getattr(MD.constraints, name).check(mg.tensor(values))
        theirs = getattr(TD.constraints, name).check(torch.tensor(values))
        np.testing.assert_array_equal(numpy_of(ours), numpy_of(theirs))
    for name in ("lower_triangular", "lower_cholesky", "symmetric", "positive_definite",
                 "positive_semidefinite", "square"):
        for m in matrices:
            ours = getattr(MD.constraints, name).check(mg.tensor(m))
            theirs = getattr(TD.constraints, name).check(torch.tensor(m))
            assert bool(ours) == bool(theirs), (name, m)
    assert MD.constraints.is_dependent(MD.Uniform.support)
    assert MD.Uniform(0.0, 2.0).support.check(mg.tensor([1.0, 3.0])).tolist() == [True, False]


def test_expand_keeps_values_and_validation():
    d = MD.Normal(mg.tensor([0.0, 1.0]), mg.tensor([1.0, 2.0]))
    e = d.expand((3, 2))
    assert tuple(e.batch_shape) == (3, 2) and e._validate_args == d._validate_args
    np.testing.assert_array_equal(e.log_prob(mg.zeros(3, 2)).numpy()[2],
                                  d.log_prob(mg.zeros(2)).numpy())

    class Custom(MD.Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)
    with pytest.raises(NotImplementedError):
        Custom(mg.zeros(2)).expand((3, 2))


def test_sample_is_outside_the_graph_and_rsample_inside():
    loc = mg.tensor(LOC, requires_grad=True)
    d = MD.Normal(loc, mg.tensor(SCALE))
    assert not d.sample().requires_grad and d.rsample().requires_grad
    assert MD.Normal.has_rsample and not MD.Categorical.has_rsample
    with pytest.raises(NotImplementedError):
        MD.Categorical(logits=mg.zeros(3)).rsample()


def test_generic_exponential_family_entropy():
    # the Bregman entropy (ExponentialFamily's) of a Normal: its closed form, in values
    d = MD.Normal(mg.tensor(LOC), mg.tensor(SCALE))
    bregman = MD.ExponentialFamily.entropy(d)
    np.testing.assert_allclose(bregman.detach().numpy(), d.entropy().numpy(), atol=1e-12)
    # with parameters that require grad, as torch's: ∇F recorded (create_graph) from detached
    # natural parameters, so the result has history but the parameters get no gradient
    found = []
    for lib, dist in ((mg, MD), (torch, TD)):
        loc = lib.tensor(LOC, requires_grad=True)
        entropy = dist.ExponentialFamily.entropy(dist.Normal(loc, lib.tensor(SCALE)))
        entropy.sum().backward()
        found.append((entropy.detach().numpy(), entropy.requires_grad, loc.grad))
    np.testing.assert_allclose(found[0][0], found[1][0], rtol=1e-12)
    assert found[0][1:] == found[1][1:] == (True, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert MD.Bernoulli(0.3).entropy().item() == pytest.approx(
            TD.Bernoulli(0.3).entropy().item())

"""``mg.distributions`` against ``torch.distributions``, computed at test time: the families
beyond Normal/Uniform/Bernoulli/Categorical/MultivariateNormal (Beta, Gamma, Chi2,
Dirichlet, Exponential, Laplace, Cauchy, Gumbel, LogNormal, HalfNormal, StudentT, Pareto,
Weibull, InverseGamma, Kumaraswamy, FisherSnedecor, VonMises, Poisson, Geometric, Binomial,
NegativeBinomial, Multinomial, the relaxed Bernoulli and one-hot categorical,
LowRankMultivariateNormal, MixtureSameFamily, TransformedDistribution and its transforms):
shapes, moments, entropies, log-probabilities, CDFs and their gradients in float64; the
draws of one seed (the gamma, Dirichlet and binomial samplers bit for bit) and the
reparameterized gradients; the registered KL pairs and NotImplementedError for the others;
the argument and support checks (ValueError); the private samplers ``_standard_gamma``,
``_sample_dirichlet``, ``_standard_gamma_grad``, ``_dirichlet_grad`` and ``binomial``.
``biject_to`` and ``transform_to``. The parameters of the batch shape kept as given
(``broadcast_tensors``)."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

TD, MD = torch.distributions, mg.distributions


def _lib(lib):
    return (torch, TD) if lib == "t" else (mg, MD)


def _tensor(lib, value, dtype="float64", grad=False):
    module, _ = _lib(lib)
    if isinstance(value, (int, float)):
        return value
    out = module.tensor(np.array(value, dtype), dtype=getattr(module, dtype))
    return out.requires_grad_() if grad else out


def _np(x):
    return np.asarray(x.detach().numpy(), dtype=float)


def _close(a, b, rtol=1e-10, atol=1e-12):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True)


# name -> (positional parameter arrays, keyword parameter arrays, a value in the support)
POS = np.array([0.4, 1.5, 7.0])
FAMILIES = {
    "Beta": ([POS, POS[::-1]], {}, [0.2, 0.5, 0.9]),
    "Gamma": ([POS, [0.5, 2.0, 1.0]], {}, [0.3, 2.0, 5.0]),
    "Chi2": ([POS], {}, [0.3, 2.0, 5.0]),
    "Dirichlet": ([[[0.5, 1.0, 2.0], [3.0, 0.3, 1.0]]], {}, [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]),
    "Exponential": ([POS], {}, [0.0, 1.0, 3.0]),
    "Laplace": ([[-1.0, 0.0, 2.0], POS], {}, [0.5, -2.0, 2.0]),
    "Cauchy": ([[-1.0, 0.0, 2.0], POS], {}, [0.5, -2.0, 2.0]),
    "Gumbel": ([[-1.0, 0.0, 2.0], POS], {}, [0.5, -2.0, 2.0]),
    "LogNormal": ([[-1.0, 0.0, 2.0], POS], {}, [0.5, 2.0, 9.0]),
    "HalfNormal": ([POS], {}, [0.0, 2.0, 9.0]),
    "StudentT": ([[0.7, 2.0, 5.0], [0.0, 1.0, -1.0], POS], {}, [0.5, -2.0, 2.0]),
    "Poisson": ([[0.0, 1.5, 20.0]], {}, [0.0, 3.0, 17.0]),
    "Geometric": ([], {"probs": [0.2, 0.5, 1.0]}, [0.0, 3.0, 0.0]),
    "Binomial": ([[5.0, 10.0, 10.0]], {"logits": [-1.0, 0.5, 2.0]}, [0.0, 4.0, 10.0]),
    "Multinomial": ([7], {"probs": [[0.2, 0.3, 0.5]]}, [[1.0, 2.0, 4.0]]),
    "NegativeBinomial": ([[0.5, 3.0, 10.0]], {"probs": [0.2, 0.5, 0.9]}, [0.0, 4.0, 10.0]),
    "Pareto": ([POS, [0.5, 2.5, 4.0]], {}, [0.5, 2.0, 9.0]),
    "Weibull": ([POS, [0.5, 2.5, 4.0]], {}, [0.5, 2.0, 9.0]),
    "InverseGamma": ([POS, [0.5, 2.5, 4.0]], {}, [0.5, 2.0, 9.0]),
    "Kumaraswamy": ([POS, [0.5, 2.5, 4.0]], {}, [0.1, 0.5, 0.9]),
    "FisherSnedecor": ([[0.5, 2.5, 6.0], [1.0, 3.0, 5.0]], {}, [0.3, 1.0, 4.0]),
    "VonMises": ([[0.3, -2.0, 3.0], [1e-6, 0.5, 8.0]], {}, [0.1, 1.0, -3.0]),
    "RelaxedBernoulli": ([0.5], {"logits": [-1.0, 0.5, 2.0]}, [0.1, 0.5, 0.9]),
    "RelaxedOneHotCategorical": ([0.7], {"logits": [[0.1, -1.0, 2.0]]}, [[0.2, 0.3, 0.5]]),
}


def _make(lib, name, dtype="float64", grad=False):
    module, dists = _lib(lib)
    args, kwargs, _ = FAMILIES[name]
    leaves = []

    def convert(value, i):
        if name == "Multinomial" and i == 0:
            return value                                 # an int total_count
        if name in ("Binomial", "NegativeBinomial") and i == 0:
            return _tensor(lib, value, dtype)            # counts: no gradient
        if name.startswith("Relaxed") and i == 0:
            return module.tensor(value, dtype=getattr(module, dtype))
        t = _tensor(lib, value, dtype, grad)
        if grad:
            leaves.append(t)
        return t

    pos = [convert(a, i) for i, a in enumerate(args)]
    kws = {k: convert(v, 1) for k, v in kwargs.items()}
    return getattr(dists, name)(*pos, **kws), leaves


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_values_and_gradients_match_torch(name):
    value = FAMILIES[name][2]
    results = {}
    for lib in "tm":
        module, _ = _lib(lib)
        d, leaves = _make(lib, name, grad=True)
        out = {"shapes": (tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample,
                          repr(d.support).replace("torch.", ""))}
        for attr in ("mean", "mode", "variance", "stddev", "entropy", "log_prob", "cdf"):
            try:
                if attr in ("log_prob", "cdf"):
                    y = getattr(d, attr)(_tensor(lib, value))
                else:
                    y = getattr(d, attr)() if attr == "entropy" else getattr(d, attr)
            except NotImplementedError:
                out[attr] = "NotImplementedError"
                continue
            try:
                grads = module.autograd.grad(y.sum(), leaves, allow_unused=True,
                                             retain_graph=True) if y.requires_grad else ()
            except NotImplementedError:          # igamma's derivative in its first argument
                grads = "NotImplementedError"
            out[attr] = [y, grads]
        results[lib] = out
    for key, expected in results["t"].items():
        actual = results["m"][key]
        if not isinstance(expected, list):
            assert actual == expected, key
            continue
        _close(expected[0], actual[0])
        if isinstance(expected[1], str) or isinstance(actual[1], str):
            assert actual[1] == expected[1], key
            continue
        assert len(actual[1]) == len(expected[1]), key
        for g_t, g_m in zip(expected[1], actual[1]):
            assert (g_t is None) == (g_m is None), key
            if g_t is not None:
                _close(g_t, g_m, rtol=1e-9, atol=1e-11)


SEEDED = ["Beta", "Gamma", "Chi2", "Dirichlet", "Exponential", "Cauchy", "StudentT",
          "FisherSnedecor",
          "Poisson", "Geometric", "Binomial", "NegativeBinomial", "Multinomial"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", SEEDED)
def test_draws_of_one_seed_are_torchs(name, dtype):
    draws = []
    for lib in "tm":
        module, _ = _lib(lib)
        module.manual_seed(11)
        d, _ = _make(lib, name, dtype)
        draws.append((d.sample((4,)), d.sample(), module.randn(3)))   # and the stream after
    for expected, actual in zip(*draws):
        assert expected.shape == tuple(actual.shape)
        np.testing.assert_array_equal(_np(actual), _np(expected))


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-10), ("float32", 1e-4)])
@pytest.mark.parametrize("name", ["Gamma", "Chi2", "Beta", "Dirichlet", "StudentT"])
def test_rsample_gradients_are_torchs(name, dtype, rtol):
    outs = []
    for lib in "tm":
        module, _ = _lib(lib)
        module.manual_seed(5)
        d, leaves = _make(lib, name, dtype, grad=True)
        x = d.rsample((6,))
        weights = module.arange(x.numel(), dtype=x.dtype).reshape(x.shape).sin()
        outs.append((x, module.autograd.grad((x * weights).sum(), leaves)))
    (x_t, g_t), (x_m, g_m) = outs
    np.testing.assert_array_equal(_np(x_m), _np(x_t))
    for a, b in zip(g_t, g_m):
        _close(a, b, rtol=rtol, atol=1e-30)


def _pair(lib, spec):
    _, dists = _lib(lib)
    name, args = spec
    leaves = [_tensor(lib, a, grad=True) for a in args]
    return getattr(dists, name)(*leaves), leaves


KL_SPECS = {
    "Beta": ("Beta", ([0.5, 2.0], [1.5, 3.0])),
    "Gamma": ("Gamma", ([0.5, 2.0], [1.5, 3.0])),
    "Exponential": ("Exponential", ([0.5, 2.0],)),
    "Laplace": ("Laplace", ([0.3, -1.0], [1.5, 3.0])),
    "Gumbel": ("Gumbel", ([0.3, -1.0], [1.5, 3.0])),
    "Normal": ("Normal", ([0.3, -1.0], [1.5, 0.7])),
    "Uniform": ("Uniform", ([0.1, -0.5], [0.6, 0.9])),
    "Poisson": ("Poisson", ([0.5, 4.0],)),
    "HalfNormal": ("HalfNormal", ([0.5, 4.0],)),
    "Cauchy": ("Cauchy", ([0.3, -1.0], [1.5, 3.0])),
    "LogNormal": ("LogNormal", ([0.3, -1.0], [1.5, 0.7])),
    "Dirichlet": ("Dirichlet", ([[0.5, 2.0, 1.0], [1.5, 3.0, 0.2]],)),
    "Geometric": ("Geometric", ([0.3, 0.8],)),
    "Bernoulli": ("Bernoulli", ([0.3, 0.8],)),
    "Pareto": ("Pareto", ([0.3, 1.2], [2.5, 3.5])),
}
KL_PAIRS = [(p, q) for p in KL_SPECS for q in KL_SPECS
            if (p == "Dirichlet") == (q == "Dirichlet")]


@pytest.mark.parametrize("p, q", KL_PAIRS)
def test_kl_divergence_matches_torch(p, q):
    results = []
    for lib in "tm":
        module, dists = _lib(lib)
        (dp, lp), (dq, lq) = _pair(lib, KL_SPECS[p]), _pair(lib, KL_SPECS[q])
        try:
            kl = dists.kl_divergence(dp, dq)
        except NotImplementedError:
            results.append("NotImplementedError")
            continue
        grads = None
        if kl.requires_grad and bool(module.isfinite(kl).all()):
            grads = module.autograd.grad(kl.sum(), lp + lq, allow_unused=True)
        results.append((kl, grads))
    expected, actual = results
    if isinstance(expected, str) or isinstance(actual, str):
        assert actual == expected
        return
    _close(expected[0], actual[0])
    for a, b in zip(expected[1] or (), actual[1] or ()):
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b, rtol=1e-9, atol=1e-11)


BAD = [("Gamma", ([-1.0, 2.0], [1.0, 1.0])), ("Beta", ([1.0, 0.0], [1.0, 1.0])),
       ("Dirichlet", ([[1.0, -2.0]],)), ("Exponential", ([0.0],)),
       ("Laplace", ([0.0], [-1.0])), ("Poisson", ([-0.5],)), ("StudentT", ([0.0],)),
       ("HalfNormal", ([-1.0],)), ("LogNormal", ([0.0], [0.0])), ("Chi2", ([-3.0],))]


@pytest.mark.parametrize("name, args", BAD)
def test_bad_parameters_raise_torchs_value_error(name, args):
    messages = []
    for lib in "tm":
        _, dists = _lib(lib)
        with pytest.raises(ValueError) as info:
            getattr(dists, name)(*[_tensor(lib, a) for a in args])
        messages.append(str(info.value).split(" of distribution")[0])
    assert messages[0] == messages[1]


OUTSIDE = [("Gamma", [-1.0, 2.0, 1.0]), ("Beta", [1.5, 0.5, 0.5]),
           ("Exponential", [-0.5, 1.0, 1.0]), ("Poisson", [0.5, 1.0, 1.0]),
           ("Geometric", [-1.0, 1.0, 1.0]), ("HalfNormal", [-1.0, 1.0, 1.0]),
           ("Dirichlet", [[0.5, 0.6, 0.2], [0.2, 0.3, 0.5]]), ("Binomial", [11.0, 1.0, 1.0])]


@pytest.mark.parametrize("name, value", OUTSIDE)
def test_log_prob_outside_the_support_raises(name, value):
    for lib in "tm":
        d, _ = _make(lib, name)
        with pytest.raises(ValueError, match="within the support"):
            d.log_prob(_tensor(lib, value))
        dists = _lib(lib)[1]
        dists.Distribution.set_default_validate_args(False)
        try:
            _make(lib, name)[0].log_prob(_tensor(lib, value))   # no check without validation
        finally:
            dists.Distribution.set_default_validate_args(True)


@pytest.mark.parametrize("transforms", [
    "tanh", "affine_tanh", "sigmoid", "compose_exp_affine", "softplus", "power", "inv_exp"])
def test_transformed_distribution_matches_torch(transforms):
    outs = []
    for lib in "tm":
        module, dists = _lib(lib)
        loc = _tensor(lib, [0.3, -1.2, 0.8], grad=True)
        scale = _tensor(lib, [0.5, 1.1, 0.2], grad=True)
        chain = {"tanh": [dists.TanhTransform(cache_size=1)],
                 "affine_tanh": [dists.AffineTransform(1.5, 2.0), dists.TanhTransform()],
                 "sigmoid": dists.SigmoidTransform(),
                 "compose_exp_affine": [dists.ComposeTransform(
                     [dists.ExpTransform(), dists.AffineTransform(0.5, -3.0)])],
                 "softplus": [dists.SoftplusTransform()],
                 "power": [dists.ExpTransform(), dists.PowerTransform(2.0)],
                 "inv_exp": [dists.ExpTransform().inv.inv]}[transforms]
        d = dists.TransformedDistribution(dists.Normal(loc, scale), chain)
        module.manual_seed(3)
        a = d.rsample((5,))                              # a SAC policy's action
        logp = d.log_prob(a)
        grads = module.autograd.grad(logp.sum() + a.sum(), [loc, scale])
        p = _tensor(lib, [0.2, 0.5, 0.7])
        outs.append([a, logp, *grads, d.icdf(p), d.cdf(d.icdf(p)),
                     repr(d.support).replace("torch.", ""), tuple(d.expand((2, 3)).batch_shape)])
    for expected, actual in zip(*outs):
        if isinstance(expected, (str, tuple)):
            assert actual == expected
        else:
            _close(expected, actual, rtol=1e-7, atol=1e-9)   # draws to the last bits of tanh


def test_transforms_algebra_matches_torch():
    outs = []
    for lib in "tm":
        _, dists = _lib(lib)
        x = _tensor(lib, [0.2, -0.7])
        compose = dists.ComposeTransform([dists.ExpTransform(), dists.TanhTransform()])
        y = compose(x)
        outs.append([y, compose.inv(y), compose.log_abs_det_jacobian(x, y),
                     dists.ExpTransform() == dists.ExpTransform(),
                     dists.ExpTransform().inv == dists.ExpTransform().inv,
                     dists.AffineTransform(1.0, 2.0) == dists.AffineTransform(1.0, 2.0),
                     dists.AffineTransform(1.0, -2.0).sign, compose.sign, compose.bijective,
                     repr(dists.ExpTransform().inv), dists.TanhTransform().event_dim])
        with pytest.raises(ValueError, match="cache_size"):
            dists.ExpTransform(cache_size=2)
        with pytest.raises(ValueError, match="transforms must be"):
            dists.TransformedDistribution(dists.Normal(0.0, 1.0), 3)
    for expected, actual in zip(*outs):
        if hasattr(expected, "detach"):
            _close(expected, actual)
        else:
            assert actual == expected


def test_mixture_same_family_matches_torch():
    outs = []
    for lib in "tm":
        module, dists = _lib(lib)
        logits = _tensor(lib, [[0.1, 1.0, -0.5], [0.0, 0.0, 2.0]], grad=True)
        loc = _tensor(lib, [[-1.0, 0.0, 2.0], [0.5, 1.5, -3.0]], grad=True)
        scale = _tensor(lib, [[0.5, 1.0, 2.0], [1.0, 0.3, 0.7]], grad=True)
        gmm = dists.MixtureSameFamily(dists.Categorical(logits=logits),
                                      dists.Normal(loc, scale))
        y = _tensor(lib, [0.3, -2.0])
        nll = -gmm.log_prob(y)
        module.manual_seed(2)
        outs.append([nll, *module.autograd.grad(nll.sum(), [logits, loc, scale]), gmm.mean,
                     gmm.variance, gmm.cdf(y), gmm.sample((4,)), tuple(gmm.batch_shape)])
    for expected, actual in zip(*outs):
        if isinstance(expected, tuple):
            assert actual == expected
        else:
            _close(expected, actual)


def test_private_samplers_match_torch():
    alpha = np.array([0.05, 0.5, 1.0, 2.5, 9.0, 40.0])
    for dtype in ("float64", "float32"):
        outs = []
        for lib in "tm":
            module, _ = _lib(lib)
            module.manual_seed(7)
            a = _tensor(lib, alpha, dtype)
            x = module._standard_gamma(a)
            rows = module._sample_dirichlet(_tensor(lib, alpha.reshape(2, 3), dtype))
            counts = module.binomial(_tensor(lib, [0.0, 5.0, 40.0, 300.0], dtype),
                                     _tensor(lib, [0.5, 0.7, 0.1, 0.45], dtype))
            outs.append([x, rows, counts, module._standard_gamma_grad(a, x),
                         module._dirichlet_grad(rows, _tensor(lib, alpha.reshape(2, 3), dtype),
                                                _tensor(lib, [[3.0] * 3, [50.0] * 3], dtype))])
        for i, (expected, actual) in enumerate(zip(*outs)):
            if i < 3:
                np.testing.assert_array_equal(_np(actual), _np(expected))
            else:
                _close(expected, actual, rtol=1e-10 if dtype == "float64" else 1e-5)
    for lib in "tm":
        module, _ = _lib(lib)
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            module._standard_gamma(module.tensor([1, 2]))
        with pytest.raises(ValueError, match="floating-point dtypes for count, got: Long"):
            module.binomial(module.tensor([1, 2]), module.tensor([0.5, 0.5]))


def test_kl_of_an_unregistered_pair_raises_not_implemented():
    for lib in "tm":
        _, dists = _lib(lib)
        with pytest.raises(NotImplementedError):
            dists.kl_divergence(dists.StudentT(_tensor(lib, [3.0])),
                                dists.StudentT(_tensor(lib, [4.0])))
        with pytest.raises(NotImplementedError):
            dists.kl_divergence(dists.Beta(2.0, 3.0), dists.Poisson(2.0))


def test_low_rank_multivariate_normal_matches_torch():
    rng = np.random.RandomState(0)
    loc, w, d, x = rng.randn(2, 4), rng.randn(2, 4, 2), rng.uniform(0.5, 2, (2, 4)), rng.randn(2, 4)
    tril = np.linalg.cholesky(np.eye(4) + 0.3 * np.ones((4, 4)))
    outs = []
    for lib in "tm":
        module, dists = _lib(lib)
        leaves = [_tensor(lib, a, grad=True) for a in (loc, w, d)]
        p = dists.LowRankMultivariateNormal(*leaves)
        q = dists.LowRankMultivariateNormal(leaves[0] * 0.5, leaves[1] * 1.5, leaves[2] + 1)
        full = dists.MultivariateNormal(_tensor(lib, loc[::-1]), scale_tril=_tensor(lib, tril))
        module.manual_seed(0)
        values = [p.log_prob(_tensor(lib, x)), p.entropy(), p.variance, p.scale_tril,
                  p.covariance_matrix, p.precision_matrix, p.rsample((3,)),
                  dists.kl_divergence(p, q), dists.kl_divergence(p, full),
                  dists.kl_divergence(full, p)]
        grads = module.autograd.grad(sum(v.sum() for v in values), leaves)
        outs.append(values + list(grads))
    for expected, actual in zip(*outs):
        _close(expected, actual, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (2, 1))])
def test_parameters_of_the_batch_shape_are_kept_as_given(shapes):
    # broadcast_tensors returns a tensor that already has the shape itself, as torch's
    answers = []
    for lib in "tm":
        loc, scale = (_tensor(lib, np.ones(s)) for s in shapes)
        d = _lib(lib)[1].Normal(loc, scale)
        answers.append((d.loc is loc, d.scale is scale, tuple(d.batch_shape)))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_samplers_at_the_edges_match_torch(dtype):
    # NaN, inf, 0, negative and tiny concentrations; a NaN probability, zero counts
    edges = [float("nan"), float("inf"), -0.5, 0.0, 1e-30, 1e30]
    outs = []
    for lib in "tm":
        module, _ = _lib(lib)
        module.manual_seed(0)
        gammas = module._standard_gamma(_tensor(lib, edges, dtype))
        rows = module._sample_dirichlet(_tensor(lib, [[edges[0], 1.0], [edges[1], 1.0],
                                                      [1e-30, 1e-30]], dtype))
        counts = module.binomial(_tensor(lib, [5.0, 0.0, 3.0, 1e6], dtype),
                                 _tensor(lib, [float("nan"), 0.5, 1e-30, 0.3], dtype))
        outs.append([gammas, rows, counts, module.randn(2)])
    for expected, actual in zip(*outs):
        np.testing.assert_array_equal(_np(actual), _np(expected))


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("constraint", [
    "real", "positive", "nonnegative", "greater_than", "less_than", "unit_interval",
    "interval", "simplex", "real_vector", "independent_positive", "lower_cholesky"])
def test_constraint_registry_matches_torch(registry, constraint):
    rng = np.random.RandomState(1)
    x_value = rng.randn(2, 3, 3) if constraint == "lower_cholesky" else rng.randn(2, 3)
    outs = []
    for lib in "tm":
        module, dists = _lib(lib)
        c = dists.constraints
        target = {"real": c.real, "positive": c.positive, "nonnegative": c.nonnegative,
                  "greater_than": c.greater_than(_tensor(lib, 1.5)),
                  "less_than": c.less_than(-2.0), "unit_interval": c.unit_interval,
                  "interval": c.interval(-1.0, 3.0), "simplex": c.simplex,
                  "real_vector": c.real_vector,
                  "independent_positive": c.independent(c.positive, 1),
                  "lower_cholesky": c.lower_cholesky}[constraint]
        try:
            t = getattr(dists, registry)(target)
        except NotImplementedError as e:
            outs.append(str(e))
            continue
        x = _tensor(lib, x_value, grad=True)
        y = t(x)
        try:
            ladj = t.log_abs_det_jacobian(x, y)
        except NotImplementedError:
            ladj = module.zeros(())
        grad = module.autograd.grad(y.sum() + ladj.sum(), x)[0]
        outs.append([type(t).__name__, bool(target.check(y).all()), y, ladj, t.inv(y), grad])
    expected, actual = outs
    if isinstance(expected, str):
        assert actual == expected
        return
    for a, b in zip(expected, actual):
        if isinstance(a, (str, bool)):
            assert b == a
        else:
            _close(a, b)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_expand_matches_torch(name):
    # the expanded family: its type, shapes, parameters (logits or probs as given) and scores
    value = FAMILIES[name][2]
    outs = []
    for lib in "tm":
        module, _ = _lib(lib)
        d = _make(lib, name)[0].expand((2,) + tuple(_make(lib, name)[0].batch_shape))
        module.manual_seed(4)
        outs.append([type(d).__name__, tuple(d.batch_shape), tuple(d.event_shape),
                     sorted(k for k in ("probs", "logits") if k in d.__dict__),
                     d.log_prob(_tensor(lib, value)), tuple(d.sample((3,)).shape)])
    for expected, actual in zip(*outs):
        if hasattr(expected, "detach"):
            _close(expected, actual)
        else:
            assert actual == expected

"""The rest of torch's names that were missing, against torch at test time: fractional max
pooling (with torch's ``_random_samples`` and its draws) and ``nn.CrossMapLRN2d``; the
distributions ``HalfCauchy``, ``ContinuousBernoulli``, ``LogisticNormal``,
``GeneralizedPareto``, ``Wishart``, ``LKJCholesky`` and the transforms ``CatTransform``,
``StackTransform``, ``CorrCholeskyTransform``, ``CumulativeDistributionTransform``,
``PositiveDefiniteTransform``; ``special``'s Bessel J, Y, K and Airy Ai (values, dtypes,
draws, gradients and errors)."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import microgradnorm as mg  # noqa: E402
import microgradnorm.functional as F  # noqa: E402

RNG = np.random.default_rng(1)


def same_error(ours, theirs):
    with pytest.raises(Exception) as expected:                 # noqa: PT011 (torch's class)
        theirs(torch)
    with pytest.raises(expected.type):
        ours(mg)


# ----- fractional max pooling, CrossMapLRN2d --------------------------------------------------
@pytest.mark.parametrize("dims, shape, kernel, options, dtype", [
    (2, (2, 3, 9, 11), 2, dict(output_size=(5, 7)), np.float64),
    (2, (3, 10, 10), 3, dict(output_ratio=(0.5, 0.5)), np.float64),
    (2, (2, 3, 9, 11), (2, 3), dict(output_ratio=(0.7, 0.6)), np.float32),
    (2, (2, 2, 30, 30), 2, dict(output_size=(17, 23)), np.float32),
    (2, (1, 1, 5, 5), 5, dict(output_size=1), np.float64),
    (3, (2, 2, 6, 7, 8), 2, dict(output_size=(3, 4, 5)), np.float64),
    (3, (2, 6, 7, 8), (2, 1, 3), dict(output_ratio=0.5), np.float32),
])
def test_fractional_max_pool_with_given_samples(dims, shape, kernel, options, dtype):
    import torch.nn.functional as TF
    name = f"fractional_max_pool{dims}d"
    data = RNG.standard_normal(shape).astype(dtype)
    batch = shape[0] if len(shape) == dims + 2 else 1
    samples = RNG.uniform(size=(batch, shape[-dims - 1], dims)).astype(dtype)
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    got, index = getattr(F, name)(x, kernel, _random_samples=mg.tensor(samples),
                                  return_indices=True, **options)
    want, expected = getattr(TF, name)(tx, kernel, _random_samples=torch.tensor(samples),
                                       return_indices=True, **options)
    np.testing.assert_array_equal(index.numpy(), expected.numpy())
    assert index.dtype == np.int64 and got.dtype == dtype
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    up = RNG.standard_normal(got.shape).astype(dtype)
    (got * mg.tensor(up)).sum().backward()
    (want * torch.tensor(up)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    pair = getattr(F, name + "_with_indices")(x, kernel, _random_samples=mg.tensor(samples),
                                              **options)
    np.testing.assert_array_equal(pair[1].numpy(), expected.numpy())


def test_fractional_max_pool_draws_and_modules():
    import torch.nn.functional as TF
    for dims, ratio in ((2, (0.5, 0.5)), (3, 0.5)):
        data = RNG.standard_normal((2, 3) + (9,) * dims)
        mg.manual_seed(3)
        torch.manual_seed(3)
        got = getattr(F, f"fractional_max_pool{dims}d")(mg.tensor(data), 2, output_ratio=ratio)
        want = getattr(TF, f"fractional_max_pool{dims}d")(torch.tensor(data), 2,
                                                          output_ratio=ratio)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        cls = f"FractionalMaxPool{dims}d"
        mg.manual_seed(5)
        torch.manual_seed(5)
        ours = getattr(mg.nn, cls)(2, output_ratio=0.6, return_indices=True)
        theirs = getattr(torch.nn, cls)(2, output_ratio=0.6, return_indices=True)
        assert repr(ours) == repr(theirs)
        for a, b in zip(ours(mg.tensor(data)), theirs(torch.tensor(data))):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        for options in (dict(), dict(output_size=2, output_ratio=0.5), dict(output_ratio=1.5)):
            same_error(lambda m, c=cls, o=options: getattr(m.nn, c)(2, **o),
                       lambda t, c=cls, o=options: getattr(t.nn, c)(2, **o))
    data = RNG.standard_normal((2, 4, 6, 6))
    extra = RNG.uniform(size=(3, 4, 2))              # more rows than the batch: the first ones
    got = F.fractional_max_pool2d(mg.tensor(data), 2, 3, _random_samples=mg.tensor(extra))
    want = TF.fractional_max_pool2d(torch.tensor(data), 2, 3,
                                    _random_samples=torch.tensor(extra))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for shape in ((1, 4, 2), (2, 3, 2), (2, 4, 3)):
        bad = RNG.uniform(size=shape)
        same_error(lambda m, b=bad: F.fractional_max_pool2d(m.tensor(data), 2, 3,
                                                            _random_samples=m.tensor(b)),
                   lambda t, b=bad: TF.fractional_max_pool2d(t.tensor(data), 2, 3,
                                                             _random_samples=t.tensor(b)))
    data = np.ones((1, 1, 4, 4))
    for call in (lambda f, x: f.fractional_max_pool2d(x, 3, (3, 3)),
                 lambda f, x: f.fractional_max_pool2d(x[0, 0], 2, (2, 2)),
                 lambda f, x: f.fractional_max_pool2d(x, 2),
                 lambda f, x: f.fractional_max_pool2d(x, 2, output_ratio=0.5)):
        same_error(lambda m, c=call: c(F, m.tensor(data)),
                   lambda t, c=call: c(TF, t.tensor(data)))
    # the 3-D check is strict: windows reaching the input's last element are refused
    same_error(lambda m: F.fractional_max_pool3d(m.ones(1, 1, 4, 5, 5), 2, (3, 3, 3)),
               lambda t: TF.fractional_max_pool3d(t.ones(1, 1, 4, 5, 5), 2, (3, 3, 3)))


@pytest.mark.parametrize("size, channels", [(3, 5), (5, 7), (4, 3), (6, 2), (2, 6), (1, 4)])
def test_cross_map_lrn2d(size, channels):
    data = RNG.standard_normal((2, channels, 3, 4))
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ours = mg.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.7, k=1.5)
    theirs = torch.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.7, k=1.5)
    assert repr(ours) == repr(theirs)
    got, want = ours(x), theirs(tx)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)
    up = RNG.standard_normal(data.shape)
    if size == 1:                              # torch's backward fails: its narrow is too long
        same_error(lambda m: got.backward(m.tensor(up)), lambda t: want.backward(t.tensor(up)))
        return
    got.backward(mg.tensor(up))
    want.backward(torch.tensor(up))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    same_error(lambda m: m.nn.CrossMapLRN2d(3)(m.ones(2, 3, 4)),
               lambda t: t.nn.CrossMapLRN2d(3)(t.ones(2, 3, 4)))


# ----- distributions and transforms ---------------------------------------------------------
FAMILIES = [
    ("HalfCauchy", [np.array([0.5, 1.0, 2.0])], np.array([0.1, 1.5, 3.0]), 1e-10),
    ("GeneralizedPareto", [np.array([0.1, -0.3, 0.0], np.float32),
                           np.array([0.5, 1.0, 2.0], np.float32),
                           np.array([0.3, 0.0, -0.2], np.float32)], None, 1e-5),
    ("LogisticNormal", [RNG.standard_normal((2, 3)), RNG.uniform(0.5, 2, (2, 3))], None,
     1e-10),
    ("ContinuousBernoulli", [np.array([0.2, 0.4995, 0.9])], np.array([0.3, 0.5, 0.95]),
     1e-10),
]


@pytest.mark.parametrize("name, params, value, atol", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_new_families_against_torch(name, params, value, atol):
    import torch.distributions as TD
    ours_params = [mg.tensor(p, requires_grad=True) for p in params]
    torch_params = [torch.tensor(p, requires_grad=True) for p in params]
    ours, theirs = getattr(mg.distributions, name)(*ours_params), \
        getattr(TD, name)(*torch_params)
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    mg.manual_seed(2)
    torch.manual_seed(2)
    sample, expected = ours.rsample((4,)), theirs.rsample((4,))
    np.testing.assert_allclose(sample.detach().numpy(), expected.detach().numpy(), atol=atol,
                               rtol=1e-5)
    at = mg.tensor(value) if value is not None else sample.detach()
    torch_at = torch.tensor(value) if value is not None else expected.detach()
    log_prob, torch_log_prob = ours.log_prob(at), theirs.log_prob(torch_at)
    np.testing.assert_allclose(log_prob.detach().numpy(), torch_log_prob.detach().numpy(),
                               atol=atol, rtol=1e-5)
    for attr in ("mean", "variance", "mode", "entropy"):
        try:
            want = getattr(theirs, attr)
            want = want() if callable(want) else want
        except NotImplementedError:
            continue
        got = getattr(ours, attr)
        got = got() if callable(got) else got
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=atol,
                                   rtol=1e-5)
    if name != "LogisticNormal":
        np.testing.assert_allclose(ours.cdf(at).detach().numpy(),
                                   theirs.cdf(torch_at).detach().numpy(), atol=atol, rtol=1e-5)
    (log_prob.sum() + sample.sum()).backward()
    (torch_log_prob.sum() + expected.sum()).backward()
    for a, b in zip(ours_params, torch_params):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=atol * 10, rtol=1e-5)
    expanded = ours.expand((5,) + tuple(ours.batch_shape))
    assert expanded.batch_shape == (5,) + tuple(ours.batch_shape)


def test_continuous_bernoulli_by_logits_and_errors():
    import torch.distributions as TD
    ours = mg.distributions.ContinuousBernoulli(logits=mg.tensor([0.3, -2.0]))
    theirs = TD.ContinuousBernoulli(logits=torch.tensor([0.3, -2.0]))
    at = [0.2, 0.7]
    # float32 results of terms near 1 that cancel (-0.0037 of a log normalizer about 0.15):
    # an ulp of the terms apart where torch's vectorized float32 log and exp round otherwise
    np.testing.assert_allclose(ours.log_prob(mg.tensor(at)).numpy(),
                               theirs.log_prob(torch.tensor(at)).numpy(), rtol=1e-6, atol=2.4e-7)
    np.testing.assert_allclose(ours.entropy().numpy(), theirs.entropy().numpy(), rtol=1e-6,
                               atol=2.4e-7)
    same_error(lambda m: m.distributions.ContinuousBernoulli(),
               lambda t: TD.ContinuousBernoulli())
    same_error(lambda m: m.distributions.HalfCauchy(m.tensor([-1.0])),
               lambda t: TD.HalfCauchy(t.tensor([-1.0])))


def test_matrix_transforms():
    import torch.distributions as TD
    data = RNG.standard_normal((2, 6))
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ours, theirs = mg.distributions.CorrCholeskyTransform(), TD.CorrCholeskyTransform()
    y, ty = ours(x), theirs(tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.inv(y).detach().numpy(), theirs.inv(ty).detach().numpy(),
                               atol=1e-10)
    jac, tjac = ours.log_abs_det_jacobian(x, y), theirs.log_abs_det_jacobian(tx, ty)
    np.testing.assert_allclose(jac.detach().numpy(), tjac.detach().numpy(), atol=1e-12)
    (y.sum() + jac.sum()).backward()
    (ty.sum() + tjac.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    assert mg.distributions.constraints.corr_cholesky.check(y).tolist() == \
        TD.constraints.corr_cholesky.check(ty).tolist()
    assert ours.forward_shape((2, 6)) == tuple(theirs.forward_shape((2, 6)))
    same_error(lambda m: m.distributions.CorrCholeskyTransform().forward_shape((5,)),
               lambda t: TD.CorrCholeskyTransform().forward_shape((5,)))
    square = RNG.standard_normal((3, 3))
    ours, theirs = mg.distributions.PositiveDefiniteTransform(), TD.PositiveDefiniteTransform()
    y, ty = ours(mg.tensor(square)), theirs(torch.tensor(square))
    np.testing.assert_allclose(y.numpy(), ty.numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.inv(y).numpy(), theirs.inv(ty).numpy(), atol=1e-10)
    for registry in ("biject_to", "transform_to"):
        got = getattr(mg.distributions, registry)(mg.distributions.constraints.corr_cholesky)
        assert type(got).__name__ == "CorrCholeskyTransform"
    assert type(mg.distributions.transform_to(
        mg.distributions.constraints.positive_definite)).__name__ == "PositiveDefiniteTransform"


def test_cdf_cat_and_stack_transforms():
    import torch.distributions as TD
    D = mg.distributions
    values = RNG.standard_normal(4)
    ours = D.CumulativeDistributionTransform(D.Normal(mg.tensor(0.5), mg.tensor(2.0)))
    theirs = TD.CumulativeDistributionTransform(TD.Normal(torch.tensor(0.5),
                                                          torch.tensor(2.0)))
    x, tx = mg.tensor(values), torch.tensor(values)
    np.testing.assert_allclose(ours(x).numpy(), theirs(tx).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.log_abs_det_jacobian(x, None).numpy(),
                               theirs.log_abs_det_jacobian(tx, None).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.inv(ours(x)).numpy(), theirs.inv(theirs(tx)).numpy(),
                               rtol=1e-5)
    data = RNG.standard_normal((4, 3))
    x, tx = mg.tensor(data), torch.tensor(data)
    pairs = [
        (D.CatTransform([D.ExpTransform(), D.transforms.identity_transform], 1, [2, 1]),
         TD.CatTransform([TD.ExpTransform(), TD.transforms.identity_transform], 1, [2, 1])),
        (D.StackTransform([D.ExpTransform(), D.AffineTransform(1.0, 2.0),
                           D.SigmoidTransform()], 1),
         TD.StackTransform([TD.ExpTransform(), TD.AffineTransform(1.0, 2.0),
                            TD.SigmoidTransform()], 1)),
    ]
    for ours, theirs in pairs:
        y, ty = ours(x), theirs(tx)
        np.testing.assert_allclose(y.numpy(), ty.numpy(), atol=1e-12)
        np.testing.assert_allclose(ours.inv(y).numpy(), theirs.inv(ty).numpy(), atol=1e-12)
        np.testing.assert_allclose(ours.log_abs_det_jacobian(x, y).numpy(),
                                   theirs.log_abs_det_jacobian(tx, ty).numpy(), atol=1e-12)
        assert ours.codomain.check(y).tolist() == theirs.codomain.check(ty).tolist()
        assert ours.codomain.event_dim == theirs.codomain.event_dim
        assert ours.bijective == theirs.bijective
    cat = D.constraints.cat([D.constraints.positive, D.constraints.real], 1, [2, 1])
    assert type(D.biject_to(cat)).__name__ == "CatTransform"
    same_error(lambda m: m.distributions.CatTransform([m.distributions.ExpTransform()])(
        m.ones(3)), lambda t: TD.CatTransform([TD.ExpTransform()])(t.ones(3)))


@pytest.mark.parametrize("given", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart(given):
    import torch.distributions as TD
    a = RNG.standard_normal((3, 3))
    cov = a @ a.T + np.eye(3)
    param = np.linalg.cholesky(cov) if given == "scale_tril" else cov
    df = np.array([4.5, 6.0])
    p, tp = mg.tensor(param, requires_grad=True), torch.tensor(param, requires_grad=True)
    nu, tnu = mg.tensor(df, requires_grad=True), torch.tensor(df, requires_grad=True)
    ours = mg.distributions.Wishart(nu, **{given: p})
    theirs = TD.Wishart(tnu, **{given: tp})
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    mg.manual_seed(1)
    torch.manual_seed(1)
    with warnings.catch_warnings():            # torch warns of singular samples at each draw
        warnings.simplefilter("ignore")
        sample, expected = ours.rsample((2,)), theirs.rsample((2,))
    np.testing.assert_allclose(sample.detach().numpy(), expected.detach().numpy(), rtol=1e-9)
    log_prob = ours.log_prob(sample.detach())
    torch_log_prob = theirs.log_prob(expected.detach())
    np.testing.assert_allclose(log_prob.detach().numpy(), torch_log_prob.detach().numpy(),
                               rtol=1e-9)
    for attr in ("mean", "variance", "mode"):
        np.testing.assert_allclose(getattr(ours, attr).detach().numpy(),
                                   getattr(theirs, attr).detach().numpy(), rtol=1e-9)
    (log_prob.sum() + ours.entropy().sum()).backward()
    (torch_log_prob.sum() + theirs.entropy().sum()).backward()
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(nu.grad.numpy(), tnu.grad.numpy(), rtol=1e-7)
    same_error(lambda m: m.distributions.Wishart(m.tensor(1.0), covariance_matrix=m.eye(3)),
               lambda t: TD.Wishart(t.tensor(1.0), covariance_matrix=t.eye(3)))


def test_lkj_cholesky():
    import torch.distributions as TD
    for eta in (0.5, 1.0, 3.0):
        ours = mg.distributions.LKJCholesky(4, mg.tensor([eta, eta + 1.0], dtype=mg.float64))
        theirs = TD.LKJCholesky(4, torch.tensor([eta, eta + 1.0], dtype=torch.float64))
        mg.manual_seed(3)
        torch.manual_seed(3)
        sample, expected = ours.sample((3,)), theirs.sample((3,))
        np.testing.assert_allclose(sample.numpy(), expected.numpy(), atol=1e-12)
        eta_ours = mg.tensor([eta, eta + 1.0], requires_grad=True, dtype=mg.float64)
        eta_torch = torch.tensor([eta, eta + 1.0], requires_grad=True, dtype=torch.float64)
        log_prob = mg.distributions.LKJCholesky(4, eta_ours).log_prob(sample)
        torch_log_prob = TD.LKJCholesky(4, eta_torch).log_prob(expected)
        np.testing.assert_allclose(log_prob.detach().numpy(), torch_log_prob.detach().numpy(),
                                   rtol=1e-10)
        log_prob.sum().backward()
        torch_log_prob.sum().backward()
        np.testing.assert_allclose(eta_ours.grad.numpy(), eta_torch.grad.numpy(), rtol=1e-10)
    assert mg.distributions.constraints.corr_cholesky.check(sample).all().item()
    same_error(lambda m: m.distributions.LKJCholesky(1), lambda t: TD.LKJCholesky(1))


# ----- special: Bessel J, Y, K and Airy Ai ---------------------------------------------------
BESSEL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai", "modified_bessel_k0",
          "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]
POINTS = np.concatenate([np.linspace(-30, 30, 601), [0.0, -0.0, 1e-6, -1e-6, 2.0, 2.09, -2.09,
                                                     5.0, 8.32, 8.33, 103.8, 104.0, 1e3,
                                                     np.inf, -np.inf, np.nan, 700.0, 750.0]])


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_and_airy_against_torch(name):
    got = getattr(mg.special, name)(mg.tensor(POINTS)).numpy()
    want = getattr(torch.special, name)(torch.tensor(POINTS)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)       # NaN and inf too
    single = POINTS.astype(np.float32)
    got = getattr(mg.special, name)(mg.tensor(single))
    want = getattr(torch.special, name)(torch.tensor(single))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-4, atol=5e-6)
    assert getattr(mg.special, name)(mg.tensor([1, 2])).dtype == np.float32
    x = mg.tensor([0.5, 1.5], requires_grad=True)
    assert not getattr(mg.special, name)(x).requires_grad      # no gradient, as torch's
    for dtype in ("float16", "bfloat16", "complex64"):
        same_error(lambda m, d=dtype: getattr(m.special, name)(m.ones(2, dtype=getattr(m, d))),
                   lambda t, d=dtype: getattr(t.special, name)(t.ones(2, dtype=getattr(t, d))))

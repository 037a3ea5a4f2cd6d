"""F.group_norm and F.instance_norm against PyTorch in float64, both implementations: values,
the gradients of x, weight and bias, running statistics, result dtypes, errors (PyTorch's
class) with nothing changed, empty inputs; and the numba kernels against the reference."""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.kernels import reference

torch = pytest.importorskip("torch")
TF = torch.nn.functional
IMPLS = ("fused", "composite")
TOL = 1e-12


def draw(shape, seed=0):
    """x of ``shape``, weight, bias (C,) and an upstream gradient, float64."""
    rng = np.random.default_rng(seed)
    channels = shape[1]
    return (rng.standard_normal(shape), 1 + 0.5 * rng.standard_normal(channels),
            0.5 * rng.standard_normal(channels), rng.standard_normal(shape))


def ours_and_torch(fn, torch_fn, arrays, upstream, **kwargs):
    """(outputs and gradients of each array, ours; the same from PyTorch): None arrays are
    left out of both calls' gradients."""
    given = [mg.tensor(a, requires_grad=True) if a is not None else None for a in arrays]
    y = fn(*given, **kwargs)
    leaves = [t for t in given if t is not None]
    ours = [y.detach().numpy()] + [g.numpy() for g in mg.grad(y, leaves, upstream)]
    given_t = [torch.tensor(a, requires_grad=True) if a is not None else None for a in arrays]
    y_t = torch_fn(*given_t)
    leaves_t = [t for t in given_t if t is not None]
    theirs = [y_t.detach().numpy()] + [g.numpy() for g in
                                       torch.autograd.grad(y_t, leaves_t, torch.tensor(upstream))]
    return ours, theirs


def assert_all_close(ours, theirs):
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape, i
        np.testing.assert_allclose(a, b, rtol=0, atol=TOL, err_msg=f"item {i}")


# ----- GroupNorm ------------------------------------------------------------------------------
GROUP_CASES = [((4, 6, 5, 3), 3), ((3, 4, 7), 1), ((3, 4, 7), 4), ((5, 8), 2),
               ((2, 6, 2, 2, 2), 3), ((2, 3), 3)]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape, groups", GROUP_CASES, ids=str)
def test_group_norm_matches_torch(shape, groups, impl):
    x, w, b, dy = draw(shape, seed=len(shape) + groups)
    ours, theirs = ours_and_torch(
        lambda x, w, b: F.group_norm(x, groups, w, b, eps=1e-4, impl=impl),
        lambda x, w, b: TF.group_norm(x, groups, w, b, eps=1e-4), (x, w, b), dy)
    assert_all_close(ours, theirs)


@pytest.mark.parametrize("impl", IMPLS)
def test_group_norm_without_bias_or_affine(impl):
    x, w, _, dy = draw((3, 6, 4))
    ours, theirs = ours_and_torch(lambda x, w: F.group_norm(x, 2, w, impl=impl),
                                  lambda x, w: TF.group_norm(x, 2, w), (x, w), dy)
    assert_all_close(ours, theirs)
    ours, theirs = ours_and_torch(lambda x: F.group_norm(x, 3, impl=impl),
                                  lambda x: TF.group_norm(x, 3), (x,), dy)
    assert_all_close(ours, theirs)


def test_group_norm_endpoints_are_layer_norm_and_instance_norm():
    x = mg.tensor(draw((3, 4, 5, 2))[0])
    np.testing.assert_allclose(F.group_norm(x, 1).numpy(), F.layer_norm(x, (4, 5, 2)).numpy(),
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(F.group_norm(x, 4).numpy(), F.instance_norm(x).numpy(),
                               rtol=0, atol=TOL)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_group_norm_keeps_the_dtype_of_x_and_of_each_gradient(dtype):
    x, w, b, dy = (a.astype(dtype) for a in draw((4, 6, 3)))
    tensors = [mg.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = F.group_norm(tensors[0], 3, *tensors[1:])
    expected = TF.group_norm(*(torch.tensor(a.astype(np.float32)) for a in (x,)), 3,
                             *(torch.tensor(a.astype(np.float32)) for a in (w, b)))
    assert y.dtype == dtype and expected.dtype == torch.float32
    y.backward(mg.tensor(dy))
    assert all(t.grad.dtype == dtype for t in tensors)
    tol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(y.detach().numpy().astype(np.float64), expected.numpy(),
                               atol=tol)


# ----- InstanceNorm ---------------------------------------------------------------------------
def running(channels, seed=7):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(channels), rng.uniform(0.5, 2.0, channels)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("shape", [(4, 3, 5), (1, 2, 3, 4)], ids=str)
def test_instance_norm_matches_torch_with_running_statistics(shape, use_input_stats, impl):
    x, w, b, dy = draw(shape, seed=len(shape))
    mean, var = running(shape[1])
    ours_stats, torch_stats = (mean.copy(), var.copy()), (torch.tensor(mean), torch.tensor(var))
    ours, theirs = ours_and_torch(
        lambda x, w, b: F.instance_norm(x, *ours_stats, w, b, use_input_stats=use_input_stats,
                                        momentum=0.3, eps=1e-4, impl=impl),
        lambda x, w, b: TF.instance_norm(x, *torch_stats, w, b, use_input_stats=use_input_stats,
                                         momentum=0.3, eps=1e-4), (x, w, b), dy)
    assert_all_close(ours, theirs)
    assert_all_close(list(ours_stats), [s.numpy() for s in torch_stats])
    assert use_input_stats != np.array_equal(ours_stats[0], mean)     # moved in training only


@pytest.mark.parametrize("impl", IMPLS)
def test_instance_norm_without_running_statistics_or_affine(impl):
    x, _, _, dy = draw((3, 4, 6))
    ours, theirs = ours_and_torch(lambda x: F.instance_norm(x, impl=impl),
                                  lambda x: TF.instance_norm(x), (x,), dy)
    assert_all_close(ours, theirs)


def test_instance_norm_running_statistics_of_another_dtype_as_torch():
    # PyTorch's instance_norm takes float64 running statistics beside float32 x
    x = draw((4, 3, 6))[0].astype(np.float32)
    mean, var = (s.copy() for s in running(3))
    torch_stats = [torch.tensor(s) for s in (mean, var)]
    y = F.instance_norm(mg.tensor(x), mean, var)
    expected = TF.instance_norm(torch.tensor(x), *torch_stats)
    assert y.dtype == "float32" and mean.dtype == np.float64
    np.testing.assert_allclose(y.numpy(), expected.numpy(), atol=1e-5)
    np.testing.assert_allclose(mean, torch_stats[0].numpy(), atol=1e-7)
    np.testing.assert_allclose(var, torch_stats[1].numpy(), atol=1e-7)


@pytest.mark.parametrize("impl", IMPLS)
def test_eps_zero_on_a_constant_channel_is_torchs_beta_or_nan(impl):
    # InstanceNorm runs PyTorch's BatchNorm kernels, whose rstd is 0 where var and eps are:
    # y = β; GroupNorm's give 0·∞ = NaN, as LayerNorm's
    x, w, b, dy = draw((2, 3, 4))
    x[:] = 0.5
    ours, theirs = ours_and_torch(
        lambda x, w, b: F.instance_norm(x, None, None, w, b, eps=0.0, impl=impl),
        lambda x, w, b: TF.instance_norm(x, None, None, w, b, eps=0.0), (x, w, b), dy)
    assert_all_close(ours, theirs)
    np.testing.assert_array_equal(ours[0], np.broadcast_to(b[:, None], x.shape[1:])[None]
                                  .repeat(2, 0))
    with np.errstate(invalid="ignore"):             # 0/0, the NaN PyTorch gives too
        y = F.group_norm(mg.tensor(x), 3, eps=0.0, impl=impl).numpy()
    assert np.isnan(y).all() and np.isnan(TF.group_norm(torch.tensor(x), 3, eps=0.0).numpy()).all()


# ----- empty inputs: empty results, zero parameter gradients, statistics unchanged ------
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape", [(0, 6, 4), (2, 0, 4), (2, 6, 0)], ids=str)
def test_empty_inputs_match_torch(shape, impl):
    x, w, b, dy = draw(shape)
    groups = 2 if shape[1] else 1
    ours, theirs = ours_and_torch(lambda x, w, b: F.group_norm(x, groups, w, b, impl=impl),
                                  lambda x, w, b: TF.group_norm(x, groups, w, b), (x, w, b), dy)
    if shape[2] == 0:
        # no positions: PyTorch's weight gradient is NaN, a sum over no values; ours is 0,
        # as its bias gradient and its instance_norm's weight gradient are
        assert np.isnan(theirs[2]).all() and not ours[2].any()
        ours, theirs = ours[:2] + ours[3:], theirs[:2] + theirs[3:]
    assert_all_close(ours, theirs)
    mean, var = (np.zeros(shape[1]), np.ones(shape[1]))
    ours, theirs = ours_and_torch(lambda x: F.instance_norm(x, mean, var, impl=impl),
                                  lambda x: TF.instance_norm(x), (x,), dy)
    assert_all_close(ours, theirs)
    assert not mean.any() and (var == 1).all()
    # with affine parameters PyTorch fails on an empty batch or no channels (an IndexError
    # in its functional); ours gives the empty output and zero gradients
    given = [mg.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = F.instance_norm(*given[:1], mean, var, *given[1:], impl=impl)
    assert y.shape == shape
    assert all(not g.numpy().any() for g in mg.grad(y, given, dy))


# ----- errors: PyTorch's class, and nothing changed ---------------------------------------
def x64(*shape):
    return draw(shape)[0]


def stats(channels):
    return np.zeros(channels), np.ones(channels)


BAD_CALLS = {
    "channels not divisible": lambda m, T: m.group_norm(T(x64(2, 6, 4)), 4),
    "negative num_groups": lambda m, T: m.group_norm(T(x64(2, 6, 4)), -2),
    "num_groups a float": lambda m, T: m.group_norm(T(x64(2, 6, 4)), 2.0),
    "num_groups a bool": lambda m, T: m.group_norm(T(x64(2, 6, 4)), True),
    "weight of 5 for 6 channels": lambda m, T: m.group_norm(T(x64(2, 6, 4)), 2, T(np.ones(5))),
    "bias of 5 for 6 channels": lambda m, T: m.group_norm(T(x64(2, 6, 4)), 2, None,
                                                          T(np.ones(5))),
    "weight float32": lambda m, T: m.group_norm(T(x64(2, 6, 4)), 2,
                                                T(np.ones(6, np.float32))),
    "x 1-D": lambda m, T: m.group_norm(T(np.ones(6)), 2),
    "x 0-d": lambda m, T: m.group_norm(T(np.array(1.0)), 1),
    "x int64": lambda m, T: m.group_norm(T(np.ones((2, 6, 4), np.int64)), 2),
    "x bool": lambda m, T: m.group_norm(T(np.ones((2, 6, 4), bool)), 2),
    "one value per group": lambda m, T: m.group_norm(T(x64(1, 3)), 3),
    "instance: one position": lambda m, T: m.instance_norm(T(x64(2, 3, 1))),
    "instance: 2-D x": lambda m, T: m.instance_norm(T(x64(2, 3))),
    "instance: running_mean of 4": lambda m, T: m.instance_norm(
        T(x64(2, 3, 4)), T(np.zeros(4)), T(np.ones(3))),
    "instance: running_var alone": lambda m, T: m.instance_norm(
        T(x64(2, 3, 4)), None, T(np.ones(3))),
    "instance: eval without running": lambda m, T: m.instance_norm(
        T(x64(2, 3, 4)), use_input_stats=False),
    "instance: weight of 4": lambda m, T: m.instance_norm(T(x64(2, 3, 4)), weight=T(np.ones(4))),
    "instance: x int64": lambda m, T: m.instance_norm(T(np.ones((2, 3, 4), np.int64))),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_bad_input_raises_torchs_error_class(case):
    with pytest.raises(Exception) as theirs:
        BAD_CALLS[case](TF, torch.tensor)
    with pytest.raises(type(theirs.value)) as ours:
        BAD_CALLS[case](F, mg.tensor)
    fn = "instance_norm" if case.startswith("instance") else "group_norm"
    assert str(ours.value).startswith(f"{fn}: ")


def test_running_mean_requiring_grad_is_torchs_runtime_error():
    with pytest.raises(RuntimeError):
        TF.instance_norm(torch.randn(2, 3, 4), torch.zeros(3, requires_grad=True),
                         torch.ones(3))
    with pytest.raises(RuntimeError, match="running_mean requires grad"):
        F.instance_norm(mg.tensor(x64(2, 3, 4)), mg.zeros(3, requires_grad=True), mg.ones(3))


@pytest.mark.parametrize("impl", IMPLS)
def test_a_failed_call_changes_nothing(impl):
    x = mg.tensor(x64(4, 3, 5), requires_grad=True)
    mean, var = stats(3)
    var.flags.writeable = False                       # the second statistic fails its check
    with pytest.raises(ValueError, match="running_var is read-only"):
        F.instance_norm(x, mean, var, impl=impl)
    assert not mean.any() and x.grad is None
    with pytest.raises(TypeError, match="momentum"):
        F.instance_norm(x, *stats(3), momentum="0.1", impl=impl)
    weight = mg.ones(3, dtype="float64", requires_grad=True)
    with pytest.raises(ValueError, match="divisible"):
        F.group_norm(x, 2, weight, impl=impl)
    assert weight.grad is None and weight._version == 0


def test_training_moves_running_tensors_and_their_versions():
    mean, var = mg.zeros(3, dtype="float64"), mg.ones(3, dtype="float64")
    F.instance_norm(mg.tensor(x64(4, 3, 5)), mean, var)
    assert mean._version == 1 and var._version == 1 and mean.numpy().any()
    F.instance_norm(mg.tensor(x64(4, 3, 5)), mean, var, use_input_stats=False)
    assert mean._version == 1                          # eval only reads them


# ----- the graph and the kernels --------------------------------------------------------------
def test_the_fused_nodes_are_one_node_and_save_less():
    x, w, b = (mg.tensor(a, requires_grad=True) for a in draw((4, 6, 8))[:3])
    for call in (lambda impl: F.group_norm(x, 2, w, b, impl=impl),
                 lambda impl: F.instance_norm(x, weight=w, bias=b, impl=impl)):
        fused, composite = (mg.graph_stats(call(impl)) for impl in IMPLS)
        assert fused.nodes == 1 and composite.nodes > 5
        assert fused.saved_bytes < composite.saved_bytes


def test_gradcheck_of_the_fused_nodes():
    x, w, b = (mg.tensor(a, requires_grad=True) for a in draw((2, 4, 3))[:3])
    assert mg.gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), [x, w, b])
    mean, var = stats(4)
    assert mg.gradcheck(lambda x, w, b: F.instance_norm(x, mean, var, w, b,
                                                        use_input_stats=False), [x, w, b])


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_numba_kernels_agree_with_the_reference(dtype, tol, training):
    numba_cpu = pytest.importorskip("microgradnorm.kernels.numba_cpu")
    x, w, b, dy = (a.astype(dtype) for a in draw((3, 8, 10), seed=5))
    groups = 4
    outputs = []
    for kernels in (reference, numba_cpu):
        mean, var = kernels.group_norm_statistics(x, groups)
        y, rstd = kernels.group_norm_forward(x, groups, mean, var, w, b, 1e-5)
        outputs.append((mean, var, y, rstd,
                        *kernels.group_norm_backward(dy, x, groups, w, mean, rstd, training)))
    for name, a, r in zip(("mean", "var", "y", "rstd", "dx", "dweight", "dbias"), *outputs):
        assert a.dtype == r.dtype and a.shape == r.shape, name
        np.testing.assert_allclose(a, r, rtol=tol, atol=tol, err_msg=name)
    # views and no parameters: the reference runs them
    no_params = numba_cpu.group_norm_forward(x[:, ::2], 2, *reference.group_norm_statistics(
        x[:, ::2], 2), None, None, 1e-5)
    assert no_params[0].shape == (3, 4, 10)

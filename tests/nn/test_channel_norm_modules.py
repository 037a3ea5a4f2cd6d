"""nn.GroupNorm, nn.InstanceNorm1d/2d and nn.BatchNorm2d against PyTorch's modules in
float64: constructor defaults, parameters, buffers and state_dict keys, outputs and the
gradients of the input and of every parameter, running statistics and num_batches_tracked
over training steps and in eval, momentum=None, batch-less input and errors."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn

torch = pytest.importorskip("torch")
from norm_modules import TOL, pair, step  # noqa: E402








# ----- GroupNorm ------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"bias": False}, {"eps": 1e-3}],
                         ids=str)
def test_group_norm_matches_torch(kwargs):
    ours, theirs = pair("GroupNorm", 3, 6, **kwargs)
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn(p.shape, dtype=torch.float64))        # not ones and zeros
    ours.load_state_dict({k: v.numpy().copy() for k, v in theirs.state_dict().items()})
    for shape in ((4, 6, 5, 5), (2, 6, 7), (3, 6)):
        step(ours, theirs, shape)
    ours.eval(), theirs.eval()
    step(ours, theirs, (2, 6, 3, 3), seed=1)             # no running statistics: the same


def test_group_norm_constructor_and_input_errors_are_torchs():
    with pytest.raises(ValueError, match="divisible"):
        torch.nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by "
                                         r"num_groups \(4\)"):
        nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError):
        torch.nn.GroupNorm(2, 6)(torch.randn(2, 4, 3))
    with pytest.raises(RuntimeError, match="weight must have shape"):
        nn.GroupNorm(2, 6)(mg.randn(2, 4, 3))
    gn = nn.GroupNorm(2, 4, impl="composite")
    assert gn.weight.shape == (4,) and gn.weight.dtype == "float32"     # the default dtype


# ----- InstanceNorm ---------------------------------------------------------------------------
@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (4, 3, 7)),
                                         ("InstanceNorm2d", (4, 3, 5, 6))])
def test_instance_norm_defaults_have_no_parameters_and_no_state(name, shape):
    ours, theirs = pair(name, 3)
    assert not ours.affine and not ours.track_running_stats and ours.state_dict() == {}
    step(ours, theirs, shape)
    ours.eval(), theirs.eval()
    step(ours, theirs, shape, seed=1)                    # the sample's own statistics still


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (4, 3, 7)),
                                         ("InstanceNorm2d", (2, 3, 4, 5))])
def test_instance_norm_running_statistics_match_torch(name, shape, momentum):
    ours, theirs = pair(name, 3, affine=True, track_running_stats=True, momentum=momentum)
    for seed in range(3):
        step(ours, theirs, shape, seed)                  # running stats move (not with None)
    assert int(ours.num_batches_tracked.item()) == 0     # PyTorch's InstanceNorm never counts
    ours.eval(), theirs.eval()
    step(ours, theirs, shape, seed=5)                    # the running statistics normalize


@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (3, 7)),
                                         ("InstanceNorm2d", (3, 5, 6))])
def test_instance_norm_takes_a_single_sample(name, shape):
    ours, theirs = pair(name, 3, affine=True, track_running_stats=True)
    step(ours, theirs, shape)


def test_instance_norm_input_errors_are_torchs():
    for ours, theirs in (pair("InstanceNorm1d", 3, affine=True),
                         pair("InstanceNorm2d", 3, affine=True)):
        for shape in ((2, 3, 4, 5, 6), (3,)):
            with pytest.raises(ValueError, match="expected 2D or 3D|expected 3D or 4D"):
                theirs(torch.randn(*shape, dtype=torch.float64))
            with pytest.raises(ValueError, match="D input, got"):
                ours(mg.randn(*shape, dtype="float64"))
        wrong = (2, 4, 5) if isinstance(ours, nn.InstanceNorm1d) else (2, 4, 5, 5)
        with pytest.raises(ValueError, match="num_features"):
            theirs(torch.randn(*wrong, dtype=torch.float64))
        with pytest.raises(ValueError, match=r"dim=1 to match num_features \(3\), got 4"):
            ours(mg.randn(*wrong, dtype="float64"))


def test_instance_norm_without_affine_warns_on_other_channels_as_torch():
    ours, theirs = pair("InstanceNorm1d", 3)
    x = np.random.default_rng(0).standard_normal((2, 5, 4))
    with pytest.warns(UserWarning):
        expected = theirs(torch.tensor(x))
    with pytest.warns(UserWarning, match="not used because affine=False"):
        got = ours(mg.tensor(x))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=0, atol=TOL)


# ----- BatchNorm2d ----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"momentum": None}, {"affine": False},
                                    {"track_running_stats": False}, {"bias": False}], ids=str)
def test_batch_norm_2d_matches_torch_in_training_and_eval(kwargs):
    ours, theirs = pair("BatchNorm2d", 3, **kwargs)
    for seed in range(3):
        step(ours, theirs, (4, 3, 5, 5), seed)
    if ours.track_running_stats:
        assert int(ours.num_batches_tracked.item()) == 3
    ours.eval(), theirs.eval()
    step(ours, theirs, (2, 3, 4, 4), seed=7)


def test_batch_norm_2d_input_errors_are_torchs_and_change_nothing():
    ours, theirs = pair("BatchNorm2d", 3)
    for shape in ((4, 3, 5), (4, 2, 5, 5)):
        with pytest.raises((ValueError, RuntimeError)) as error:
            theirs(torch.randn(*shape, dtype=torch.float64))
        with pytest.raises(type(error.value), match=r"BatchNorm2d(\(3\))?: expected input"):
            ours(mg.randn(*shape, dtype="float64"))
    with pytest.raises(ValueError):
        theirs(torch.randn(1, 3, 1, 1, dtype=torch.float64))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        ours(mg.randn(1, 3, 1, 1, dtype="float64"))
    assert not ours.running_mean.numpy().any() and int(ours.num_batches_tracked.item()) == 0


# ----- the registry's place "channel", and impl ------------------------------------------------
def test_a_conv_net_builds_each_channel_norm_by_name():
    built = {name: nn.make_norm(name, 64, place="channel")
             for name in ("batch_norm", "group_norm", "instance_norm")}
    assert isinstance(built["batch_norm"], nn.BatchNorm2d)
    assert isinstance(built["instance_norm"], nn.InstanceNorm2d)
    assert (built["group_norm"].num_groups, built["group_norm"].num_channels) == (32, 64)
    assert [nn.make_norm("group_norm", c, place="channel").num_groups
            for c in (1, 8, 12, 16, 128)] == [1, 4, 2, 8, 32]
    assert isinstance(nn.make_norm("batch_norm", 8, place="mlp"), nn.BatchNorm1d)


@pytest.mark.parametrize("name, args", [("GroupNorm", (2, 4)), ("InstanceNorm2d", (4,)),
                                        ("BatchNorm2d", (4,))])
def test_set_impl_switches_to_the_composite_graph_with_the_same_result(name, args):
    x = mg.randn(3, 4, 5, 5, dtype="float64", requires_grad=True)
    fused = getattr(nn, name)(*args, dtype="float64")
    composite = getattr(nn, name)(*args, dtype="float64").set_impl("composite")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(fused(x).detach().numpy(), composite(x).detach().numpy(),
                                   rtol=0, atol=TOL)
    assert mg.graph_stats(fused(x)).nodes == 1 < mg.graph_stats(composite(x)).nodes

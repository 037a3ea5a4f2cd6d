"""ao.quantization.fuse_modules and ao.nn.intrinsic against torch's, side by side: the fused
model's structure and text, its outputs (equal to the unfused eval model's), the QAT form
and the errors."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.ao import quantization as mq
from microgradnorm.ao.nn import intrinsic as mni

torch = pytest.importorskip("torch")
import torch.ao.nn.intrinsic as tni  # noqa: E402
import torch.ao.quantization as tq  # noqa: E402


def arr(t):
    return t.detach().numpy()


def build(nn, dims=2):
    """A small model of every fusable run, in float64."""
    conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dims]
    bn = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[dims]
    block = nn.Sequential(conv(3, 4, 3), bn(4), nn.ReLU())
    return nn.Sequential(
        block,                                           # 0: conv, bn, relu
        conv(4, 4, 1), bn(4),                            # 1, 2: conv, bn
        conv(4, 5, 1), nn.ReLU(),                        # 3, 4: conv, relu
        bn(5), nn.ReLU(),                                # 5, 6: bn, relu (dims 2, 3)
        nn.Flatten(),                                    # 7
    ).double()


def twins(dims=2):
    ours, theirs = build(mg.nn, dims), build(torch.nn, dims)
    rng = np.random.default_rng(dims)
    state = {}
    for key, value in ours.state_dict().items():
        if key.endswith("running_var"):
            state[key] = rng.uniform(0.5, 2.0, value.shape)
        elif key.endswith("num_batches_tracked"):
            state[key] = np.array(3)
        else:
            state[key] = rng.standard_normal(value.shape)
    ours.load_state_dict({k: mg.tensor(v) for k, v in state.items()})
    theirs.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in state.items()})
    return ours.eval(), theirs.eval()


PLAN = {1: [["0.0", "0.1", "0.2"], ["1", "2"], ["3", "4"]],
        2: [["0.0", "0.1", "0.2"], ["1", "2"], ["3", "4"], ["5", "6"]],
        3: [["0.0", "0.1", "0.2"], ["1", "2"], ["3", "4"], ["5", "6"]]}


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_eval_fusion_matches_torch_and_the_unfused_model(dims):
    ours, theirs = twins(dims)
    fused, expected = mq.fuse_modules(ours, PLAN[dims]), tq.fuse_modules(theirs, PLAN[dims])
    assert repr(fused) == repr(expected)
    assert [type(m).__name__ for m in fused.modules()] == \
        [type(m).__name__ for m in expected.modules()]
    assert fused is not ours and isinstance(ours[2], mg.nn.BatchNorm1d if dims == 1 else
                                            (mg.nn.BatchNorm2d if dims == 2
                                             else mg.nn.BatchNorm3d))
    x = np.random.default_rng(0).standard_normal((2, 3) + (7,) * dims)
    out = arr(fused(mg.tensor(x)))
    np.testing.assert_allclose(out, arr(expected(torch.from_numpy(x))), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(out, arr(ours(mg.tensor(x))), rtol=1e-12, atol=1e-12)


def test_linear_runs_nested_names_and_inplace():
    def model(nn):
        inner = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 3), nn.ReLU())
        outer = nn.Module()
        outer.layer1 = nn.ModuleList([inner])
        return outer.double()

    ours, theirs = model(mg.nn), model(torch.nn)
    rng = np.random.default_rng(1)
    for key, value in ours.state_dict().items():
        v = rng.uniform(0.5, 2, value.shape) if "var" in key else rng.standard_normal(value.shape)
        if key.endswith("num_batches_tracked"):
            continue
        ours.state_dict()[key].copy_(mg.tensor(v))
        theirs.state_dict()[key].copy_(torch.from_numpy(v))
    ours.eval()
    theirs.eval()
    plan = [["layer1.0.0", "layer1.0.1"], ["layer1.0.2", "layer1.0.3"]]
    x = rng.standard_normal((5, 4))
    before = arr(ours.layer1[0](mg.tensor(x)))
    result = mq.fuse_modules(ours, plan, inplace=True)
    tq.fuse_modules(theirs, plan, inplace=True)
    assert result is ours
    assert repr(ours) == repr(theirs)
    assert type(ours.layer1[0][2]).__name__ == "LinearReLU"
    np.testing.assert_allclose(arr(ours.layer1[0](mg.tensor(x))),
                               arr(theirs.layer1[0](torch.from_numpy(x))), rtol=1e-12)
    np.testing.assert_allclose(arr(ours.layer1[0](mg.tensor(x))), before, rtol=1e-12)


def test_training_mode_conv_bn_raises_torchs_assertion():
    ours, theirs = twins()
    ours.train()
    theirs.train()
    with pytest.raises(AssertionError) as expected:
        tq.fuse_modules(theirs, ["1", "2"])
    with pytest.raises(type(expected.value)):
        mq.fuse_modules(ours, ["1", "2"])
    with pytest.raises(AssertionError):       # conv eval, bn train: mixed modes
        ours[1].eval()
        mq.fuse_modules(ours, ["1", "2"])


def test_unknown_pattern_raises_as_torchs():
    ours, theirs = twins()
    with pytest.raises(AssertionError):
        tq.fuse_modules(theirs, ["0.2", "1"])
    with pytest.raises(AssertionError, match="did not find fuser method"):
        mq.fuse_modules(ours, ["0.2", "1"])


def test_qat_fusion_keeps_batch_norm():
    ours, theirs = twins()
    ours.train()
    theirs.train()
    plan = [["0.0", "0.1", "0.2"], ["1", "2"]]
    fused, expected = mq.fuse_modules_qat(ours, plan), tq.fuse_modules_qat(theirs, plan)
    assert repr(fused) == repr(expected)
    assert isinstance(fused[0][0], mni.ConvBnReLU2d) and isinstance(fused[1], mni.ConvBn2d)
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 6))
    np.testing.assert_allclose(arr(fused(mg.tensor(x))), arr(expected(torch.from_numpy(x))),
                               rtol=1e-10, atol=1e-10)


def test_intrinsic_classes_check_types_like_torchs():
    assert sorted(mni.__all__) == sorted(n for n in mni.__all__ if hasattr(tni, n))
    fused = mni.ConvReLU2d(mg.nn.Conv2d(1, 2, 3), mg.nn.ReLU())
    expected = tni.ConvReLU2d(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU())
    assert repr(fused) == repr(expected)
    assert isinstance(fused, mg.nn.Sequential)
    with pytest.raises(AssertionError):
        tni.ConvReLU2d(torch.nn.Conv1d(1, 2, 3), torch.nn.ReLU())
    with pytest.raises(AssertionError, match="Conv1d and ReLU"):
        mni.ConvReLU2d(mg.nn.Conv1d(1, 2, 3), mg.nn.ReLU())


def test_hooks_move_to_the_fused_module_and_custom_fusers():
    ours, theirs = twins()
    seen = {"ours": [], "theirs": []}
    for model, key in ((ours, "ours"), (theirs, "theirs")):
        model[1].register_forward_pre_hook(lambda m, i, key=key: seen[key].append("pre"))
        model[2].register_forward_hook(lambda m, i, o, key=key: seen[key].append("post"))
    fused, expected = mq.fuse_modules(ours, ["1", "2"]), tq.fuse_modules(theirs, ["1", "2"])
    fused(mg.tensor(np.zeros((1, 3, 5, 5))))
    expected(torch.zeros(1, 3, 5, 5, dtype=torch.float64))
    # the folded copy of the conv keeps its own pre-hook too, as torch's: it runs twice
    assert seen["ours"] == seen["theirs"] and "post" in seen["ours"]
    assert not fused[2]._forward_hooks

    def swap(is_qat, bn, relu):
        return mg.nn.Sequential(relu, bn)

    config = {"additional_fuser_method_mapping": {(mg.nn.BatchNorm2d, mg.nn.ReLU): swap}}
    fused = mq.fuse_modules(ours, ["5", "6"], fuse_custom_config_dict=config)
    assert isinstance(fused[5][0], mg.nn.ReLU) and isinstance(fused[6], mg.nn.Identity)


def test_namespaces():
    import microgradnorm.ao.quantization as by_path
    import microgradnorm.quantization as old_name
    assert by_path is mq is mg.ao.quantization is old_name
    assert mg.ao.nn.intrinsic is mni

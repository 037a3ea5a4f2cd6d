"""nn.utils.prune against torch's, run side by side: the masks (the same entries, ties and
seeded draws included), the pruned form of the module, composition, removal and errors."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.ops.sorting import topk_indices
from microgradnorm.nn.utils import prune

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as tprune  # noqa: E402


def arr(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def twins(kind="linear", values=None):
    """A module of ours and torch's of the same kind holding the same weights."""
    if kind == "linear":
        ours, theirs = mg.nn.Linear(6, 5), torch.nn.Linear(6, 5)
    else:
        ours, theirs = mg.nn.Conv2d(3, 4, 3), torch.nn.Conv2d(3, 4, 3)
    if values is not None:
        ours.weight.data = mg.tensor(values(tuple(ours.weight.shape)), dtype=mg.float32)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(arr(ours.weight).copy()))
        theirs.bias.copy_(torch.from_numpy(arr(ours.bias).copy()))
    return ours, theirs


def same_mask(ours, theirs, name="weight"):
    np.testing.assert_array_equal(arr(getattr(ours, name + "_mask")),
                                  arr(getattr(theirs, name + "_mask")))


@pytest.mark.parametrize("amount", [0, 3, 0.0, 0.35, 0.5, 1.0, 30])
def test_l1_unstructured_mask_is_torchs(amount):
    ours, theirs = twins()
    prune.l1_unstructured(ours, "weight", amount)
    tprune.l1_unstructured(theirs, "weight", amount)
    same_mask(ours, theirs)


@pytest.mark.parametrize("seed", [0, 7])
def test_random_methods_draw_torchs_masks(seed):
    ours, theirs = twins("conv")
    mg.manual_seed(seed)
    torch.manual_seed(seed)
    prune.random_unstructured(ours, "weight", 0.4)
    tprune.random_unstructured(theirs, "weight", 0.4)
    same_mask(ours, theirs)
    prune.random_structured(ours, "weight", 2, dim=0)
    tprune.random_structured(theirs, "weight", 2, dim=0)
    same_mask(ours, theirs)
    # the generator is left where torch's is
    np.testing.assert_array_equal(arr(mg.rand(4)), arr(torch.rand(4)))


@pytest.mark.parametrize("kind,n,dim,amount", [
    ("conv", 1, 0, 2), ("conv", 2, 0, 0.5), ("conv", float("inf"), 1, 1),
    ("linear", "fro", -1, 0.34), ("conv", 2, -3, 1), ("linear", -1, 0, 3)])
def test_ln_structured_mask_is_torchs(kind, n, dim, amount):
    ours, theirs = twins(kind)
    prune.ln_structured(ours, "weight", amount, n=n, dim=dim)
    tprune.ln_structured(theirs, "weight", amount, n=n, dim=dim)
    same_mask(ours, theirs)


def test_ties_are_broken_as_torchs_topk():
    # integer-valued weights: many equal magnitudes straddle the pruning boundary
    rng = np.random.default_rng(3)
    ours, theirs = twins(values=lambda shape: rng.integers(-2, 3, shape))
    for amount in (0.3, 4, 0.7):
        prune.l1_unstructured(ours, "weight", amount)
        tprune.l1_unstructured(theirs, "weight", amount)
        same_mask(ours, theirs)
    ours, theirs = twins("conv", values=lambda shape: rng.integers(0, 2, shape))
    prune.ln_structured(ours, "weight", 2, n=1, dim=0)
    tprune.ln_structured(theirs, "weight", 2, n=1, dim=0)
    same_mask(ours, theirs)


@pytest.mark.parametrize("n", [5, 63, 64, 300, 1000])
def test_topk_selection_with_ties_and_nan_is_torchs(n):
    rng = np.random.default_rng(n)
    for trial in range(30):
        values = rng.integers(0, 4, n).astype(np.float32)
        if trial % 3 == 0:
            values[rng.integers(0, n, max(1, n // 8))] = np.nan
        k = int(rng.integers(0, n + 1)) if trial % 2 else int(rng.integers(0, n // 64 + 2))
        k = min(k, n)
        largest = bool(trial % 4 < 2)
        expected = torch.topk(torch.from_numpy(values), k, largest=largest).indices
        assert topk_indices(values, k, largest).tolist() == expected.tolist()


def test_iterative_pruning_composes_into_a_container():
    ours, theirs = twins("conv")
    mg.manual_seed(1)
    torch.manual_seed(1)
    steps = [("l1_unstructured", dict(amount=0.2)),
             ("ln_structured", dict(amount=1, n=2, dim=0)),
             ("random_unstructured", dict(amount=0.25)),
             ("random_structured", dict(amount=1, dim=1)),
             ("l1_unstructured", dict(amount=5))]
    for fn, kwargs in steps:
        getattr(prune, fn)(ours, "weight", **kwargs)
        getattr(tprune, fn)(theirs, "weight", **kwargs)
        same_mask(ours, theirs)
    hook = next(iter(ours._forward_pre_hooks.values()))
    expected = next(iter(theirs._forward_pre_hooks.values()))
    assert isinstance(hook, prune.PruningContainer) and len(ours._forward_pre_hooks) == 1
    assert [type(m).__name__ for m in hook] == [type(m).__name__ for m in expected]
    assert hook._tensor_name == "weight"


def test_pruned_module_state_forward_and_gradients_are_torchs():
    ours, theirs = twins()
    prune.l1_unstructured(ours, "weight", 0.5)
    tprune.l1_unstructured(theirs, "weight", 0.5)
    prune.identity(ours, "bias")
    tprune.identity(theirs, "bias")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert "weight" not in dict(ours.named_parameters())
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    out, expected = ours(mg.tensor(x)), theirs(torch.from_numpy(x))
    np.testing.assert_allclose(arr(out), arr(expected), rtol=1e-6, atol=1e-6)
    (out * out).sum().backward()
    (expected * expected).sum().backward()
    np.testing.assert_allclose(arr(ours.weight_orig.grad), arr(theirs.weight_orig.grad),
                               rtol=1e-5, atol=1e-6)
    assert (arr(ours.weight_orig.grad)[arr(ours.weight_mask) == 0] == 0).all()
    # the pre-hook recomputes `weight` from weight_orig at each call
    ours.weight_orig.data = ours.weight_orig.data * 2
    ours(mg.tensor(x))
    np.testing.assert_allclose(arr(ours.weight), 2 * arr(theirs.weight), rtol=1e-6)


def test_remove_makes_pruning_permanent():
    ours, theirs = twins("conv")
    for mod, lib in ((ours, prune), (theirs, tprune)):
        lib.ln_structured(mod, "weight", 0.5, n=2, dim=0)
        lib.l1_unstructured(mod, "weight", 0.2)
        assert lib.is_pruned(mod)
        lib.remove(mod, "weight")
        assert not lib.is_pruned(mod)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert isinstance(ours.weight, mg.nn.Parameter) and ours.weight.requires_grad
    np.testing.assert_array_equal(arr(ours.weight), arr(theirs.weight))
    assert not ours._forward_pre_hooks
    with pytest.raises(ValueError, match="has to be pruned"):
        prune.remove(ours, "weight")
    with pytest.raises(ValueError):
        tprune.remove(theirs, "weight")


def test_is_pruned_sees_submodules():
    model = mg.nn.Sequential(mg.nn.Linear(2, 2), mg.nn.Sequential(mg.nn.Linear(2, 2)))
    reference = torch.nn.Sequential(torch.nn.Linear(2, 2),
                                    torch.nn.Sequential(torch.nn.Linear(2, 2)))
    assert prune.is_pruned(model) == tprune.is_pruned(reference) is False
    prune.identity(model[1][0], "weight")
    tprune.identity(reference[1][0], "weight")
    assert prune.is_pruned(model) == tprune.is_pruned(reference) is True


def test_global_unstructured_ranks_all_parameters_together():
    (a, ta), (b, tb) = twins(), twins("conv")
    scores = {(b, "weight"): mg.tensor(np.arange(108.0).reshape(4, 3, 3, 3), dtype=mg.float32)}
    tscores = {(tb, "weight"): torch.arange(108.0).reshape(4, 3, 3, 3)}
    prune.l1_unstructured(a, "weight", 0.3)
    tprune.l1_unstructured(ta, "weight", 0.3)
    for amount in (0.4, 20):
        prune.global_unstructured([(a, "weight"), (b, "weight"), (a, "bias")],
                                  pruning_method=prune.L1Unstructured,
                                  importance_scores=scores, amount=amount)
        tprune.global_unstructured([(ta, "weight"), (tb, "weight"), (ta, "bias")],
                                   pruning_method=tprune.L1Unstructured,
                                   importance_scores=tscores, amount=amount)
        for ours, theirs, name in ((a, ta, "weight"), (b, tb, "weight"), (a, ta, "bias")):
            same_mask(ours, theirs, name)
    with pytest.raises(TypeError, match="unstructured"):
        prune.global_unstructured([(a, "weight")], prune.RandomStructured, amount=1)
    with pytest.raises(TypeError, match="dict"):
        prune.global_unstructured([(a, "weight")], prune.L1Unstructured,
                                  importance_scores=[1], amount=1)


def test_custom_from_mask_and_method_objects():
    ours, theirs = twins()
    mask = np.array([1, 0, 1, 1, 0], dtype=np.float32)
    prune.custom_from_mask(ours, "bias", mg.tensor(mask))
    tprune.custom_from_mask(theirs, "bias", torch.from_numpy(mask))
    same_mask(ours, theirs, "bias")
    np.testing.assert_array_equal(arr(ours.bias), arr(theirs.bias))
    t = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)
    pruned = prune.L1Unstructured(amount=6).prune(mg.tensor(t))
    expected = tprune.L1Unstructured(amount=6).prune(torch.from_numpy(t))
    np.testing.assert_array_equal(arr(pruned), arr(expected))
    assert prune.LnStructured.PRUNING_TYPE == "structured"
    assert prune.CustomFromMask.PRUNING_TYPE == "global"


def test_custom_method_subclass():
    class EveryOther(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    layer = mg.nn.Linear(3, 4)
    EveryOther.apply(layer, "bias")
    np.testing.assert_array_equal(arr(layer.bias_mask), [0, 1, 0, 1])
    prune.l1_unstructured(layer, "bias", 1)     # composes: prunes one of the two kept
    assert arr(layer.bias_mask).sum() == 1


@pytest.mark.parametrize("call,error", [
    (lambda lib, m: lib.l1_unstructured(m, "weight", amount="x"), TypeError),
    (lambda lib, m: lib.l1_unstructured(m, "weight", amount=-1), ValueError),
    (lambda lib, m: lib.l1_unstructured(m, "weight", amount=1.5), ValueError),
    (lambda lib, m: lib.l1_unstructured(m, "weight", amount=31), ValueError),
    (lambda lib, m: lib.random_structured(m, "bias", amount=1, dim=0), ValueError),
    (lambda lib, m: lib.ln_structured(m, "weight", amount=1, n=2, dim=2), IndexError),
    (lambda lib, m: lib.random_structured(m, "weight", amount=6, dim=0), ValueError),
])
def test_bad_arguments_raise_torchs_errors_and_change_nothing(call, error):
    ours, theirs = twins()
    with pytest.raises(error):
        call(tprune, theirs)
    with pytest.raises(error):
        call(prune, ours)
    # the parameter is back (last, as torch puts it back), no mask, no hook
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_array_equal(arr(ours.weight), arr(theirs.weight))
    assert not ours._forward_pre_hooks and not prune.is_pruned(ours)


def test_importance_scores_shape_and_container_checks():
    ours, _ = twins()
    with pytest.raises(AssertionError, match="same shape"):
        prune.l1_unstructured(ours, "weight", 1, importance_scores=mg.ones(3))
    container = prune.PruningContainer()
    container._tensor_name = "weight"
    with pytest.raises(TypeError):
        container.add_pruning_method(object())
    other = prune.Identity()
    other._tensor_name = "bias"
    with pytest.raises(ValueError, match="bias"):
        container.add_pruning_method(other)


def test_torch_style_import_paths():
    import microgradnorm.nn.utils.prune as by_path
    assert by_path is prune is mg.nn.utils.prune


def _float64_twins():
    ours, theirs = mg.nn.Linear(6, 5, dtype=mg.float64), torch.nn.Linear(6, 5).double()
    values = np.random.RandomState(3).randn(5, 6)
    values[0, :3], values[1, :3] = 0.5, -0.5                 # ties across the cut
    ours.weight.data = mg.tensor(values)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(values))
        theirs.bias.copy_(torch.from_numpy(arr(ours.bias).copy()))
    return ours, theirs


def test_every_kind_in_turn_on_one_float64_parameter_then_bias_remove_and_again():
    ours, theirs = _float64_twins()
    mg.manual_seed(1)
    torch.manual_seed(1)
    for lib, module in ((prune, ours), (tprune, theirs)):
        lib.l1_unstructured(module, "weight", 0.3)
        lib.ln_structured(module, "weight", 1, n=2, dim=0)
        lib.random_unstructured(module, "weight", 3)
        lib.random_structured(module, "weight", 0.5, dim=1)
        lib.l1_unstructured(module, "bias", 2)
    same_mask(ours, theirs)
    same_mask(ours, theirs, "bias")
    assert arr(ours.weight).dtype == np.float64
    x = np.random.RandomState(4).randn(3, 6)
    np.testing.assert_allclose(arr(ours(mg.tensor(x))), arr(theirs(torch.from_numpy(x))),
                               rtol=1e-13, atol=1e-14)       # the matmuls' orders differ
    prune.remove(ours, "weight")
    tprune.remove(theirs, "weight")
    prune.l1_unstructured(ours, "weight", 0.5)
    tprune.l1_unstructured(theirs, "weight", 0.5)
    same_mask(ours, theirs)
    # a pruned model's state loads into another given the pruned form
    fresh, fresh_theirs = _float64_twins()
    for lib, module, source in ((prune, fresh, ours), (tprune, fresh_theirs, theirs)):
        lib.identity(module, "weight")
        lib.identity(module, "bias")
        module.load_state_dict(source.state_dict())
    same_mask(fresh, fresh_theirs)
    np.testing.assert_allclose(arr(fresh(mg.tensor(x))), arr(fresh_theirs(torch.from_numpy(x))),
                               rtol=1e-13, atol=1e-14)


def test_a_failed_second_pruning_keeps_the_first_hook_and_mask():
    # torch's apply drops the parameter's hook when the new method fails; here nothing changes
    ours, theirs = twins()
    prune.l1_unstructured(ours, "weight", 20)
    tprune.l1_unstructured(theirs, "weight", 20)
    hooks, mask = dict(ours._forward_pre_hooks), ours.weight_mask
    with pytest.raises(ValueError):
        prune.l1_unstructured(ours, "weight", 11)         # only 10 entries are left
    with pytest.raises(AssertionError):
        prune.l1_unstructured(ours, "weight", 1, importance_scores=mg.ones(2))
    prune.ln_structured(ours, "weight", 1, n=1, dim=0)
    with pytest.raises(ValueError):
        prune.random_structured(ours, "weight", 7, dim=0)  # a container now
    assert len(list(ours._forward_pre_hooks.values())[0]) == 2
    tprune.ln_structured(theirs, "weight", 1, n=1, dim=0)
    same_mask(ours, theirs)
    assert hooks and mask is not ours.weight_mask          # the container and its mask
    x = np.ones((2, 6), np.float32)
    ours.weight_orig.data = ours.weight_orig.data * 2      # the hook still recomputes weight
    with torch.no_grad():
        theirs.weight_orig.mul_(2)
    np.testing.assert_array_equal(arr(ours(mg.tensor(x))), arr(theirs(torch.from_numpy(x))))

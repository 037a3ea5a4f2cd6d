"""state_dict / load_state_dict and nn.save / nn.load: round trips and bad state dicts."""

import collections

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn


def make_model(seed):
    np.random.seed(seed)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def torch_twin():
    torch = pytest.importorskip("torch")
    return torch, torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                      torch.nn.ReLU(), torch.nn.Linear(4, 2))


def test_state_dict_shares_memory_module_by_module_as_torch():
    torch, theirs = torch_twin()
    model = make_model(0)
    state = model.state_dict()
    version = model[0].weight._version
    assert list(state) == list(theirs.state_dict())      # each module's params, then buffers
    assert not any(value.requires_grad for value in state.values())
    with mg.no_grad():
        state["0.weight"].copy_(mg.ones((4, 3)))         # nanoGPT's from_pretrained idiom
        state["1.running_mean"].fill_(2.0)
    assert (model[0].weight.data == 1).numpy().all()
    assert (model[1].running_mean.data == 2).numpy().all()
    assert model[0].weight._version == version + 1       # the write is seen by autograd
    with torch.no_grad():                                # the behaviour copied
        theirs.state_dict()["0.weight"].copy_(torch.ones(4, 3))
    assert (theirs[0].weight == 1).all()


def tied(nn):
    """nanoGPT's weight tying (the embedding's weight is the head's), built from ``nn``."""
    model = nn.Module()
    model.wte = nn.Embedding(5, 3)
    model.ln = nn.LayerNorm(3)
    model.head = nn.Linear(3, 5, bias=False)
    model.wte.weight = model.head.weight
    return model


def test_tied_weight_is_in_the_state_dict_under_each_name_and_loads_from_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs, ours = tied(torch.nn), tied(nn)
    torch_state = theirs.state_dict()
    assert list(ours.state_dict()) == list(torch_state) == [
        "wte.weight", "ln.weight", "ln.bias", "head.weight"]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert len(ours.parameters()) == 3
    ours.load_state_dict({key: value.numpy() for key, value in torch_state.items()})
    np.testing.assert_array_equal(ours.wte.weight.data, theirs.head.weight.detach().numpy())
    assert ours.wte.weight is ours.head.weight
    ours.load_state_dict({key: mg.tensor(value.numpy()) for key, value in torch_state.items()})


def test_save_load_round_trip(tmp_path):
    model = make_model(0)
    model(mg.tensor(np.random.randn(8, 3), dtype="float32"))     # running stats move
    path = tmp_path / "model.npz"
    nn.save(model.state_dict(), path)
    other = make_model(1)
    params = other.parameters()
    other.load_state_dict(nn.load(path))
    assert all(a is b for a, b in zip(params, other.parameters()))
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(other.state_dict()[key], value, err_msg=key)
    x = mg.tensor(np.random.randn(5, 3), dtype="float32")
    model.eval()
    other.eval()
    np.testing.assert_array_equal(model(x).detach().numpy(), other(x).detach().numpy())


def test_saved_file_is_plain_arrays(tmp_path):
    path = tmp_path / "m.npz"
    nn.save(make_model(0).state_dict(), path)
    with np.load(path, allow_pickle=False) as archive:
        assert "1.num_batches_tracked" in archive.files
        assert archive["1.num_batches_tracked"].dtype == np.int64


@pytest.mark.parametrize("change, match", [
    (lambda s: s.pop("0.bias"), r'Missing key\(s\) in state_dict: "0.bias"\.'),
    (lambda s: s.update(extra=np.ones(2)), r'Unexpected key\(s\) in state_dict: "extra"\.'),
    (lambda s: s.update({"3.weight": np.ones((2, 5))}),
     r"size mismatch for 3.weight: .* model is torch.Size\(\[2, 4\]\)"),
    (lambda s: s.update({"3.bias": np.array(["a", "b"])}), r"3.bias: cannot be loaded"),
    (lambda s: s.update({"3.bias": [[1.0, 2.0], [3.0]]}), r"3.bias: cannot be loaded"),
])
def test_bad_state_dict_is_a_clear_error_and_changes_nothing(change, match):
    model = make_model(0)
    before = {key: value.numpy().copy() for key, value in model.state_dict().items()}
    state = make_model(1).state_dict()
    change(state)
    with pytest.raises(ValueError, match=match):
        model.load_state_dict(state)
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[key], err_msg=key)


def test_non_strict_load_reports_missing_and_unexpected():
    model = make_model(0)
    state = make_model(1).state_dict()
    state.pop("0.bias")
    state["extra"] = np.ones(1)
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert missing == ["0.bias"] and unexpected == ["extra"]
    np.testing.assert_array_equal(model[0].weight.data, state["0.weight"])


def test_load_accepts_tensors_and_casts_to_the_parameter_dtype():
    model = nn.Linear(2, 2, dtype="float32")
    model.load_state_dict({"weight": mg.tensor(np.ones((2, 2))), "bias": np.zeros(2)})
    assert model.weight.dtype == np.float32 and (model.weight.data == 1).numpy().all()


def test_the_safe_globals_list_is_kept_as_torchs_and_loads_stay_data_only(tmp_path):
    import torch
    from microgradnorm import serialization
    for lib_serialization in (serialization, torch.serialization):
        before = lib_serialization.get_safe_globals()
        try:
            lib_serialization.add_safe_globals([collections.OrderedDict])
            assert collections.OrderedDict in lib_serialization.get_safe_globals()
            with lib_serialization.safe_globals([collections.Counter]):
                assert collections.Counter in lib_serialization.get_safe_globals()
            assert collections.Counter not in lib_serialization.get_safe_globals()
        finally:
            lib_serialization.clear_safe_globals()
            lib_serialization.add_safe_globals(before)
    with pytest.raises(TypeError, match="expected a list"):
        serialization.add_safe_globals(collections.OrderedDict)
    path = tmp_path / "state.pt"
    serialization.save({"w": mg.ones(2)}, path)
    assert serialization.load(path, weights_only=True)["w"].tolist() == [1.0, 1.0]

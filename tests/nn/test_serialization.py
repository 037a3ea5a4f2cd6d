"""state_dict / load_state_dict and nn.save / nn.load: round trips and bad state dicts."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn


def make_model(seed):
    np.random.seed(seed)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def test_state_dict_has_parameters_and_buffers_as_copies():
    model = make_model(0)
    state = model.state_dict()
    assert list(state) == ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias",
                           "1.running_mean", "1.running_var", "1.num_batches_tracked"]
    state["0.weight"][...] = 7
    assert not (model[0].weight.data == 7).any()


def test_save_load_round_trip(tmp_path):
    model = make_model(0)
    model(mg.tensor(np.random.randn(8, 3)))                      # running stats move
    path = tmp_path / "model.npz"
    nn.save(model, path)
    other = make_model(1)
    params = other.parameters()
    other.load_state_dict(nn.load(path))
    assert all(a is b for a, b in zip(params, other.parameters()))
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(other.state_dict()[key], value, err_msg=key)
    x = mg.tensor(np.random.randn(5, 3))
    model.eval()
    other.eval()
    np.testing.assert_array_equal(model(x).data, other(x).data)


def test_saved_file_is_plain_arrays(tmp_path):
    path = tmp_path / "m.npz"
    nn.save(make_model(0), path)
    with np.load(path, allow_pickle=False) as archive:
        assert "1.num_batches_tracked" in archive.files
        assert archive["1.num_batches_tracked"].dtype == np.int64


@pytest.mark.parametrize("change, match", [
    (lambda s: s.pop("0.bias"), r"missing keys \['0.bias'\]"),
    (lambda s: s.update(extra=np.ones(2)), r"unexpected keys \['extra'\]"),
    (lambda s: s.update({"3.weight": np.ones((2, 5))}), r"3.weight: expected shape \(2, 4\)"),
    (lambda s: s.update({"3.bias": np.array(["a", "b"])}), r"3.bias: cannot be loaded"),
    (lambda s: s.update({"3.bias": [[1.0, 2.0], [3.0]]}), r"3.bias: cannot be loaded"),
])
def test_bad_state_dict_is_a_clear_error_and_changes_nothing(change, match):
    model = make_model(0)
    before = model.state_dict()
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
    assert model.weight.dtype == np.float32 and (model.weight.data == 1).all()

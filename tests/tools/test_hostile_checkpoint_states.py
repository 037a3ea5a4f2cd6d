"""A checkpoint whose saved random states hold integers no generator takes is the documented
ValueError naming the file and the field, never an OverflowError."""

import copy

import pytest

import microgradnorm as mg
from microgradnorm import nn
from microgradnorm.checkpoint import load_checkpoint, save_checkpoint
from microgradnorm.nn.serialization import save_file

HUGE = 2 ** 200
EDITS = {
    "random.numpy": lambda c: c["random"]["numpy"]["state"].__setitem__("key", [HUGE] * 624),
    "random.numpy pos": lambda c: c["random"]["numpy"]["state"].__setitem__("pos", HUGE),
    "random.python": lambda c: c["random"].__setitem__("python", [3, [HUGE] * 625, None]),
    "random.default_generator": lambda c: c["random"].__setitem__("default_generator",
                                                                  [HUGE] * 10),
}


@pytest.mark.parametrize("field", EDITS)
def test_huge_integers_in_a_saved_random_state_are_a_value_error(field, tmp_path):
    path = tmp_path / "run.npz"
    save_checkpoint(path, nn.Linear(2, 2))
    hostile = copy.deepcopy(mg.load(path))
    EDITS[field](hostile)
    save_file(hostile, path, "test")
    model = nn.Linear(2, 2)
    before = model.weight.detach().numpy().copy()
    with pytest.raises(ValueError, match=f"{path}: {field.split()[0]}"):
        load_checkpoint(path, model)
    assert (model.weight.detach().numpy() == before).all()


@pytest.mark.parametrize("config", [[], "abc", 3])
def test_a_resumed_checkpoint_whose_config_is_not_an_object_is_a_value_error(config):
    from microgradnorm import train
    with pytest.raises(ValueError, match="run.npz: its extra field 'config' must be a JSON"):
        train._check_same_run("run.npz", config, train.TrainConfig(steps=5))

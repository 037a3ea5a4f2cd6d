"""A checkpoint is checked whole before anything changes: a missing or damaged field (step,
extra, each random state, the optimizer's and scheduler's state, the model's) is one
ValueError naming the file and the field, and the model, optimizer, scheduler and every
random state stay as they were."""

import random

import numpy as np
import pytest

import microgradnorm as mg
from checkpoint_cases import trained
from microgradnorm.checkpoint import load_checkpoint, save_checkpoint


def rewrite(path, meta=None, arrays=None):
    """Apply ``meta`` and ``arrays`` (functions of the checkpoint's dict, as ``mg.load``
    reads it) to the file, and save it back."""
    record = mg.load(path)
    for edit in (meta, arrays):
        if edit:
            edit(record)
    mg.save(record, path)


def pop(*keys):
    def edit(record):
        for key in keys[:-1]:
            record = record[key]
        del record[keys[-1]]
    return edit


def put(*keys_and_value):
    *keys, value = keys_and_value

    def edit(record):
        for key in keys[:-1]:
            record = record[key]
        record[keys[-1]] = value
    return edit


def set_array(*keys_and_value):
    *keys, value = keys_and_value
    return pop(*keys) if value is None else put(*keys, value)


DAMAGES = {
    # name: (meta edit, arrays edit, the field the error names)
    "no step": (pop("step"), None, "step"),
    "negative step": (put("step", -1), None, "step"),
    "float step": (put("step", 2.5), None, "step"),
    "bool step": (put("step", True), None, "step"),
    "string step": (put("step", "3"), None, "step"),
    "extra a list": (put("extra", [1, 2]), None, "extra"),
    "no random": (pop("random"), None, "random"),
    "no python rng": (pop("random", "python"), None, "random.python"),
    "short python rng": (put("random", "python", [3, [1, 2, 3], None]), None,
                         "random.python"),
    "python rng of strings": (put("random", "python", [3, ["x"] * 625, None]), None,
                              "random.python"),
    "no numpy pos": (pop("random", "numpy", "state", "pos"), None, "random.numpy"),
    "no numpy key": (None, set_array("random", "numpy", "state", "key", None), "random.numpy"),
    "short numpy key": (None, set_array("random", "numpy", "state", "key",
                                        np.zeros(5, np.uint32)), "random.numpy"),
    "no generator": (put("random", "generator", None), None, "random.generator"),
    "short default generator": (put("random", "default_generator", np.zeros(5, np.uint8)),
                                None, "random.default_generator"),
    "bad generator": (put("random", "generator", "state", "x"), None, "random.generator"),
    "no param_groups": (pop("optimizer", "param_groups"), None, "optimizer"),
    "groups not a list": (put("optimizer", "param_groups", 3), None, "optimizer"),
    "one parameter fewer": (put("optimizer", "param_groups", 0, "params", [0, 1, 2]), None,
                            "optimizer"),
    "exp_avg of a wrong shape": (None, set_array("optimizer", "state", 0, "exp_avg",
                                                 np.zeros((5, 5))), "optimizer"),
    "optimizer index not a number": (None, set_array("optimizer", "state", "x",
                                                     {"exp_avg": np.zeros(2)}), "optimizer"),
    "no last_epoch": (pop("scheduler", "last_epoch"), None, "scheduler"),
    "two base_lrs for one group": (put("scheduler", "base_lrs", [0.1, 0.1]), None,
                                   "scheduler"),
    "model weight missing": (None, set_array("model", "1.bias", None), "model"),
    "model weight of a wrong shape": (None, set_array("model", "0.weight", np.zeros((2, 2))),
                                      "model"),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_field_names_the_file_and_field_and_changes_nothing(damage, tmp_path):
    model, optimizer, scheduler, rng = trained()
    path = save_checkpoint(tmp_path / "c.npz", model, optimizer, step=1, scheduler=scheduler,
                           rng=rng, extra={"k": 1})
    meta_edit, arrays_edit, field = DAMAGES[damage]
    rewrite(path, meta_edit, arrays_edit)

    np.random.seed(1)
    target, target_optimizer, target_scheduler, target_rng = trained()
    target_optimizer.step()
    random.seed(9)
    np.random.seed(9)
    before = (target.state_dict(), target_optimizer.state_dict(),
              target_scheduler.state_dict(), target_optimizer.param_groups[0]["lr"],
              random.getstate(), np.random.get_state(legacy=False),
              target_rng.bit_generator.state)
    default_state = mg.default_generator.get_state()
    with pytest.raises(ValueError, match=f"{path}: {field}"):
        load_checkpoint(path, target, target_optimizer, target_scheduler, target_rng)
    after = (target.state_dict(), target_optimizer.state_dict(),
             target_scheduler.state_dict(), target_optimizer.param_groups[0]["lr"],
             random.getstate(), np.random.get_state(legacy=False),
             target_rng.bit_generator.state)
    for key, value in before[0].items():
        np.testing.assert_array_equal(after[0][key], value)
    assert repr(after[1]) == repr(before[1])                    # every array, every option
    assert after[2:5] == before[2:5]
    assert after[5]["state"]["pos"] == before[5]["state"]["pos"]
    np.testing.assert_array_equal(after[5]["state"]["key"], before[5]["state"]["key"])
    assert after[6] == before[6]
    np.testing.assert_array_equal(mg.default_generator.get_state(), default_state)


def test_an_intact_checkpoint_still_loads_every_field(tmp_path):
    model, optimizer, scheduler, rng = trained()
    path = save_checkpoint(tmp_path / "c.npz", model, optimizer, step=1, scheduler=scheduler,
                           rng=rng, extra={"k": 1})
    rewrite(path)                                   # the same content, loaded and saved
    target, target_optimizer, target_scheduler, target_rng = trained()
    loaded = load_checkpoint(path, target, target_optimizer, target_scheduler, target_rng)
    assert (loaded.step, loaded.extra) == (1, {"k": 1})
    assert target_rng.random() == rng.random()

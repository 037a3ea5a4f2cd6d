"""Checkpoints and saves: a run stopped and resumed ends bitwise where an unbroken one does,
every random state comes back, a damaged or mismatched checkpoint is one clear error
that changes nothing, and a save killed mid-write leaves the previous file loadable."""

import io
import os
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from numpy.lib import format as np_format

import microgradnorm as mg
from microgradnorm import nn, optim, train
from microgradnorm.checkpoint import load_checkpoint, read_extra, save_checkpoint

torch = pytest.importorskip("torch")

ROOT = Path(__file__).parents[2]


def tiny_gpt(steps, **options):
    """``train_tiny_gpt`` of ``TrainConfig(steps=steps, **options)``, without a bar."""
    return train.train_tiny_gpt(train.TrainConfig(steps=steps, **options), progress=False)


# ----- checkpoints ------------------------------------------------------------------------
@pytest.mark.parametrize("impl", ["fused", "composite"])
def test_run_stopped_at_k_and_resumed_ends_bitwise_at_2k(impl, tmp_path):
    k = 4
    kwargs = {"impl": impl, "d_model": 16, "n_layers": 2,
              "context_length": 8, "batch_size": 4, "seed": 5, "lr_schedule": "cosine",
              "warmup_steps": 2, "min_lr": 3e-4, "lr_decay_steps": 2 * k,
              "grad_accum_steps": 2, "weight_decay": 0.1}
    straight = tiny_gpt(2 * k, **kwargs)
    path = tmp_path / "run.npz"
    first = tiny_gpt(k, checkpoint=path, **kwargs)
    np.random.seed(999)                    # whatever runs in between moves the global state
    resumed = tiny_gpt(2 * k, resume=path, **kwargs)
    assert resumed.start_step == k
    assert resumed.losses[:k] == first.losses
    assert resumed.losses == straight.losses
    for key, value in straight.model.state_dict().items():
        np.testing.assert_array_equal(resumed.model.state_dict()[key], value, err_msg=key)


def test_resuming_a_different_run_is_a_clear_error(tmp_path):
    kwargs = {"d_model": 8, "n_layers": 1, "context_length": 8, "batch_size": 4,
              "lr_schedule": "cosine"}
    path = tmp_path / "run.npz"
    tiny_gpt(2, checkpoint=path, lr_decay_steps=4, **kwargs)
    with pytest.raises(ValueError, match=r"lr=0.003 in the checkpoint, 0.01 now"):
        tiny_gpt(4, resume=path, lr_decay_steps=4, **{**kwargs, "lr": 0.01})
    with pytest.raises(ValueError, match="the cosine ends at step 4 in the checkpoint, 6 now"):
        tiny_gpt(6, resume=path, **kwargs)
    assert tiny_gpt(4, resume=path, lr_decay_steps=4, impl="composite",
                    **kwargs).start_step == 2


def test_a_checkpoint_that_names_its_norm_by_the_older_spelling_resumes(tmp_path):
    # checkpoints written before the registry say "layernorm": the same norm as "layer_norm"
    kwargs = {"d_model": 8, "n_layers": 1, "context_length": 8, "batch_size": 4}
    path = tmp_path / "run.npz"
    tiny_gpt(2, checkpoint=path, **kwargs)
    checkpoint = mg.load(path)                    # a checkpoint is a file of mg.save
    assert checkpoint["extra"]["config"]["norm"] == "layer_norm"
    checkpoint["extra"]["config"]["norm"] = "layernorm"
    mg.save(checkpoint, path)
    assert tiny_gpt(4, resume=path, **kwargs).start_step == 2
    with pytest.raises(ValueError, match=r"norm='layer_norm' in the checkpoint, 'rms_norm' now"):
        tiny_gpt(4, resume=path, **{**kwargs, "norm": "rms_norm"})


def test_resuming_a_different_run_names_the_option_and_changes_no_random_state(tmp_path):
    import random
    kwargs = {"d_model": 8, "n_layers": 1, "context_length": 8, "batch_size": 4}
    path = tmp_path / "run.npz"
    tiny_gpt(2, checkpoint=path, **kwargs)
    random.seed(5)
    before = random.getstate()
    with pytest.raises(ValueError, match="lr=0.003 in the checkpoint, 0.01 now"):
        tiny_gpt(4, resume=path, **{**kwargs, "lr": 0.01})
    assert random.getstate() == before
    with pytest.raises(ValueError, match="d_model=8 in the checkpoint, 16 now"):
        tiny_gpt(4, resume=path, **{**kwargs, "d_model": 16})
    with pytest.raises(ValueError, match="warmup_steps=0 in the checkpoint, 2 now"):
        tiny_gpt(4, resume=path, **{**kwargs, "warmup_steps": 2})

def test_checkpoint_restores_every_random_state_and_rejects_a_mismatch(tmp_path):
    import random
    np.random.seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))
    opt = optim.AdamW(model.parameters(), lr=0.1)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(opt, 10)
    rng = np.random.default_rng(7)
    model(mg.ones((2, 3))).sum().backward()
    opt.step()
    scheduler.step()
    path = save_checkpoint(tmp_path / "c", model, opt, step=1, scheduler=scheduler, rng=rng,
                           extra={"note": "x"})
    assert path == str(tmp_path / "c")            # as given, as torch.save: no suffix added
    expected = (np.random.random(), random.random(), rng.random(),
                model(mg.ones((2, 3))).detach().numpy().copy())    # dropout draws too

    np.random.seed(1)
    other = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))
    other_opt = optim.AdamW(other.parameters(), lr=0.5)
    other_scheduler = optim.lr_scheduler.CosineAnnealingLR(other_opt, 10)
    other_rng = np.random.default_rng(8)
    loaded = load_checkpoint(path, other, other_opt, other_scheduler, other_rng)
    assert loaded.step == 1 and loaded.extra == {"note": "x"}
    assert other_opt.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    got = (np.random.random(), random.random(), other_rng.random(),
           other(mg.ones((2, 3))).detach().numpy())
    assert got[:3] == expected[:3]
    np.testing.assert_array_equal(got[3], expected[3])

    wrong = nn.Sequential(nn.Linear(3, 5), nn.Dropout(0.5), nn.Linear(5, 2))
    before = {key: value.numpy().copy() for key, value in wrong.state_dict().items()}
    state = np.random.get_state(legacy=False)
    with pytest.raises(ValueError, match="size mismatch for"):
        load_checkpoint(path, wrong, optim.AdamW(wrong.parameters()))
    with pytest.raises(ValueError, match="holds AdamW, got a SGD"):
        load_checkpoint(path, other, optim.SGD(other.parameters()))
    for key, value in before.items():
        np.testing.assert_array_equal(wrong.state_dict()[key], value)
    assert np.random.get_state(legacy=False)["state"]["pos"] == state["state"]["pos"]


def test_checkpoint_failing_optimizer_leaves_the_model_unchanged(tmp_path):
    np.random.seed(0)
    model = nn.Linear(2, 2)
    opt = optim.Adam(model.parameters())
    model(mg.ones((1, 2))).sum().backward()
    opt.step()
    path = save_checkpoint(tmp_path / "c.npz", model, opt, step=1)
    target = nn.Linear(2, 2)
    before = {key: value.numpy().copy() for key, value in target.state_dict().items()}
    bad_opt = optim.Adam([target.weight])            # one parameter fewer than saved
    with pytest.raises(ValueError, match="parameters in state_dict"):
        load_checkpoint(path, target, bad_opt)
    for key, value in before.items():
        np.testing.assert_array_equal(target.state_dict()[key], value)



@pytest.mark.parametrize("bit_generator", [np.random.MT19937, np.random.Philox,
                                           np.random.SFC64, np.random.PCG64DXSM])
def test_checkpoint_stores_a_generator_of_any_bit_generator(bit_generator, tmp_path):
    model = nn.Linear(2, 2)
    rng = np.random.Generator(bit_generator(3))
    rng.random(5)
    path = save_checkpoint(tmp_path / "c.npz", model, rng=rng)
    expected = rng.random(4)
    other = np.random.Generator(bit_generator(4))
    load_checkpoint(path, model, rng=other)
    np.testing.assert_array_equal(other.random(4), expected)


def test_checkpoint_of_another_bit_generator_is_refused_before_anything_loads(tmp_path):
    np.random.seed(0)
    path = save_checkpoint(tmp_path / "c.npz", nn.Linear(2, 2), rng=np.random.default_rng(1))
    np.random.seed(5)
    other = nn.Linear(2, 2)
    before = {key: value.numpy().copy() for key, value in other.state_dict().items()}
    numpy_state = np.random.get_state(legacy=False)
    rng = np.random.Generator(np.random.MT19937(0))
    with pytest.raises(ValueError, match="holds the state of a PCG64 generator, rng uses "
                                         "MT19937"):
        load_checkpoint(path, other, rng=rng)
    for key, value in before.items():
        np.testing.assert_array_equal(other.state_dict()[key], value)
    assert np.random.get_state(legacy=False)["state"]["pos"] == numpy_state["state"]["pos"]
    assert rng.random() == np.random.Generator(np.random.MT19937(0)).random()


def test_checkpoint_of_numpy_scalar_options_saves_them_and_blames_only_extra(tmp_path):
    model = nn.Linear(2, 2)
    # betas: NumPy float64s (Python floats), as torch's Adam takes them
    opt = optim.Adam(model.parameters(), lr=np.float32(0.01), betas=(np.float64(0.9), 0.99))
    path = save_checkpoint(tmp_path / "c.npz", model, opt)
    other = optim.Adam(model.parameters())
    load_checkpoint(path, model, other)
    assert other.param_groups[0]["lr"] == np.float32(0.01)
    assert other.param_groups[0]["betas"] == (np.float64(0.9), 0.99)
    path = save_checkpoint(tmp_path / "e.npz", model, opt,
                           extra={"loss": np.float32(1.5), "seen": np.arange(2)})
    assert load_checkpoint(path, model, opt).extra == {"loss": 1.5, "seen": [0, 1]}
    with pytest.raises(TypeError, match="extra must be JSON-compatible"):
        save_checkpoint(tmp_path / "d.npz", model, opt, extra={"loss": object()})
    assert not (tmp_path / "d.npz").exists()


def test_train_saves_a_checkpoint_with_numpy_number_options(tmp_path):
    path = tmp_path / "run.npz"
    kwargs = {"lr": np.float32(1e-3), "d_model": 8, "n_layers": 1, "n_heads": 2,
              "context_length": 4, "batch_size": 2}
    tiny_gpt(1, checkpoint=path, **kwargs)
    assert read_extra(path)["config"]["lr"] == np.float32(1e-3)
    tiny_gpt(2, resume=path, **kwargs)                                  # the same run


@pytest.mark.parametrize("damage", ["truncate", "not_a_zip", "npy", "huge_header",
                                    "bad_meta"])
def test_a_damaged_checkpoint_is_one_error_naming_the_file(damage, tmp_path):
    model = nn.Linear(2, 2)
    path = save_checkpoint(tmp_path / "c.npz", model, extra={"k": 1})
    if damage == "truncate":
        data = Path(path).read_bytes()
        Path(path).write_bytes(data[: len(data) // 2])
    elif damage == "not_a_zip":
        Path(path).write_bytes(b"hello")
    elif damage == "npy":
        np.save(path, np.ones(2))
        os.replace(path + ".npy" if not str(path).endswith(".npy") else path, path)
    elif damage == "huge_header":
        np.savez(path, meta=np.ones(2))
        _claim_huge(path)
    else:
        np.savez(path, meta=np.array("{not json"))
    before = model.weight.detach().numpy().copy()
    for read in (lambda: load_checkpoint(path, model), lambda: read_extra(path)):
        with pytest.raises(ValueError, match=str(path).replace(".", r"\.")):
            read()
    assert np.array_equal(model.weight.data, before)


def _claim_huge(path):
    # rewrite the one member's header to claim 100000 x 100000 float64
    with zipfile.ZipFile(path) as archive:
        (name,) = archive.namelist()
    header = {"descr": "<f8", "fortran_order": False, "shape": (100000, 100000)}
    buffer = io.BytesIO()
    np_format.write_array_header_1_0(buffer, header)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(name, buffer.getvalue() + b"\0" * 16)

# ----- saving survives a kill -------------------------------------------------------------
KILLED_SAVE = textwrap.dedent("""
    import sys, time
    import numpy as np
    import numpy.lib.format as fmt
    sys.path.insert(0, {root!r})
    from microgradnorm import nn
    from microgradnorm.checkpoint import save_checkpoint

    write_array = fmt.write_array
    def slow_write_array(*args, **kwargs):        # write the first array, then hang
        write_array(*args, **kwargs)
        args[0].flush() if hasattr(args[0], "flush") else None
        print("writing", flush=True)
        time.sleep(60)
    fmt.write_array = slow_write_array
    model = nn.Linear(300, 300)
    if {how!r} == "checkpoint":
        save_checkpoint({path!r}, model, step=2)
    elif {how!r} == "nn.save":
        nn.save(model.state_dict(), {path!r})
    else:
        np.savez({path!r}, **model.state_dict())  # what nn.save did before: in place
""")


def _kill_while_saving(path, how):
    code = KILLED_SAVE.format(root=str(ROOT), path=str(path), how=how)
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "writing"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("how", ["checkpoint", "nn.save"])
def test_a_save_killed_mid_write_leaves_the_previous_file_loadable(how, tmp_path):
    np.random.seed(0)
    model = nn.Linear(300, 300)
    path = tmp_path / "last.npz"
    if how == "checkpoint":
        save_checkpoint(path, model, step=1)
    else:
        nn.save(model.state_dict(), path)
    _kill_while_saving(path, how)
    partial = [p for p in tmp_path.iterdir() if p.name != "last.npz"]
    assert len(partial) == 1 and partial[0].name.startswith(".last.npz.")
    assert partial[0].stat().st_size > 0                      # the kill hit a real write
    restored = nn.Linear(300, 300)
    if how == "checkpoint":
        assert load_checkpoint(path, restored).step == 1
    else:
        restored.load_state_dict(nn.load(path))
    np.testing.assert_array_equal(restored.weight.data, model.weight.data)


def test_an_in_place_save_killed_mid_write_destroys_the_file(tmp_path):
    """The failure the atomic save prevents: np.savez straight over the old file."""
    np.random.seed(0)
    path = tmp_path / "last.npz"
    nn.save(nn.Linear(300, 300), path)
    _kill_while_saving(path, "np.savez")
    with pytest.raises(Exception):                           # noqa: B017 (zip or npy error)
        nn.load(path)


@pytest.mark.parametrize("how", ["checkpoint", "nn.save"])
def test_a_failed_save_names_the_path_asked_for_not_the_temporary(how, tmp_path):
    path = tmp_path / "missing" / "run.npz"
    with pytest.raises(FileNotFoundError) as error:
        if how == "checkpoint":
            save_checkpoint(path, nn.Linear(2, 2))
        else:
            nn.save(nn.Linear(2, 2), path)
    assert str(path) in str(error.value) and ".tmp" not in str(error.value)
    (tmp_path / "dir.npz").mkdir()                  # os.replace onto a directory fails
    with pytest.raises(OSError) as error:
        save_checkpoint(tmp_path / "dir.npz", nn.Linear(2, 2))
    assert "dir.npz" in str(error.value) and ".tmp" not in str(error.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.npz"]


def test_an_interrupted_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path,
                                                                        monkeypatch):
    import numpy.lib.format as fmt
    path = tmp_path / "m.npz"
    nn.save({"w": np.ones(3)}, path)
    write_array = fmt.write_array
    calls = []

    def interrupted(*args, **kwargs):                       # Ctrl-C after the first array
        if calls:
            raise KeyboardInterrupt
        calls.append(1)
        write_array(*args, **kwargs)

    monkeypatch.setattr(fmt, "write_array", interrupted)
    with pytest.raises(KeyboardInterrupt):
        nn.save({"w": np.zeros(3), "v": np.zeros(2)}, path)
    assert calls and sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    monkeypatch.undo()
    np.testing.assert_array_equal(nn.load(path)["w"], np.ones(3))

"""A diverging run never overwrites a good checkpoint, a resumed run says only what it did,
and TrainConfig refuses a seed NumPy would refuse later."""

import math

import numpy as np
import pytest

from microgradnorm import cli, train
from microgradnorm.checkpoint import read_extra

SMALL = {"d_model": 8, "n_layers": 1, "n_heads": 2, "context_length": 8, "batch_size": 4}
SMALL_ARGS = ["--d-model", "8", "--layers", "1", "--heads", "2", "--context", "8",
              "--batch-size", "4", "--no-progress", "--sample", "0"]


def run_main(argv, capsys):
    try:
        code = cli.main(argv)
    except SystemExit as exit:
        code = exit.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_diverging_run_stops_at_the_nan_and_keeps_the_last_good_checkpoint(tmp_path):
    path = tmp_path / "ck.npz"
    with np.errstate(all="ignore"), pytest.raises(train.Diverged, match=r"the loss at step 2 "
                                                  r"is nan.*ck.npz keeps step 1"):
        train.train_tiny_gpt(train.TrainConfig(steps=5, lr=1e300, checkpoint=str(path),
                                               checkpoint_every=1, **SMALL), progress=False)
    losses = read_extra(path)["losses"]
    assert len(losses) == 1 and math.isfinite(losses[0])
    with np.load(path) as archive:
        weights = [archive[key] for key in archive.files if key.startswith("model/")]
    assert weights and all(np.isfinite(w).all() for w in weights)


def test_weights_made_infinite_by_the_last_step_are_not_saved(tmp_path, monkeypatch):
    # a finite loss whose update overflows: the check before saving catches it
    path = tmp_path / "ck.npz"
    step = train.optim.AdamW.step

    def overflowing(self):
        step(self)
        self.param_groups[0]["params"][0].data[...] = np.inf

    monkeypatch.setattr(train.optim.AdamW, "step", overflowing)
    with pytest.raises(train.Diverged, match="step 1 made the weights NaN or infinite; not "
                                             "saved; .*ck.npz was not written by this run"):
        train.train_tiny_gpt(train.TrainConfig(steps=1, checkpoint=str(path), **SMALL),
                             progress=False)
    assert not path.exists()


def test_the_cli_stops_a_diverging_run_with_its_own_exit_status(capsys, tmp_path):
    path = tmp_path / "ck.npz"
    code, out, err = run_main(["train", "--steps", "1", "--checkpoint", str(path)]
                              + SMALL_ARGS, capsys)
    assert code == 0
    good = path.read_bytes()
    code, out, err = run_main(["train", "--steps", "5", "--lr", "1e300", "--checkpoint",
                               str(path), "--checkpoint-every", "1"] + SMALL_ARGS, capsys)
    assert code == 3                                            # not 2, bad arguments
    assert err.strip().splitlines() == [
        f"microgradnorm train: diverged: the loss at step 2 is nan; stopped before updating; "
        f"{path} keeps step 1 (lower lr?)"]
    assert "Traceback" not in out + err and "checkpoint:" not in out
    assert path.read_bytes() != good                            # step 1 of the new run...
    assert len(read_extra(path)["losses"]) == 1                 # ...finite, kept


def test_train_help_documents_the_exit_statuses(capsys):
    code, out, err = run_main(["train", "--help"], capsys)
    assert code == 0 and "NaN or infinite" in " ".join(out.split())


def test_resuming_at_steps_trains_nothing_and_claims_no_save(capsys, tmp_path):
    path = tmp_path / "ck.npz"
    run_main(["train", "--steps", "2", "--checkpoint", str(path)] + SMALL_ARGS, capsys)
    before = path.stat().st_mtime_ns, path.read_bytes()
    code, out, err = run_main(["train", "--steps", "2", "--resume", str(path),
                               "--checkpoint", str(path)] + SMALL_ARGS, capsys)
    assert code == 0, err
    assert "nothing to train: already at --steps 2" in out and "checkpoint:" not in out
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before


def test_resuming_past_steps_is_refused_before_anything(capsys, tmp_path):
    path = tmp_path / "ck.npz"
    run_main(["train", "--steps", "3", "--checkpoint", str(path)] + SMALL_ARGS, capsys)
    before = path.read_bytes()
    code, out, err = run_main(["train", "--steps", "2", "--resume", str(path),
                               "--checkpoint", str(path)] + SMALL_ARGS, capsys)
    assert code == 2 and f"resume={path} is at step 3, past steps=2" in err
    assert "checkpoint:" not in out and path.read_bytes() == before


@pytest.mark.parametrize("seed", [-1, 2**32, True, 1.5])
def test_train_config_refuses_a_seed_numpy_would_refuse(seed):
    with pytest.raises((ValueError, TypeError), match="TrainConfig: seed"):
        train.TrainConfig(seed=seed)
    if seed in (-1, 2**32):
        with pytest.raises(ValueError):
            np.random.seed(seed)                                # what it would meet later


def test_a_read_only_checkpoint_is_refused_before_step_0(capsys, tmp_path, monkeypatch):
    import os
    path = tmp_path / "ck.npz"
    path.write_bytes(b"keep")
    access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(path)
                        and mode & os.W_OK else access(p, mode, **kw))
    code, out, err = run_main(["train", "--steps", "1", "--checkpoint", str(path)]
                              + SMALL_ARGS, capsys)
    assert code == 2 and err.strip() == (f"microgradnorm train: error: --checkpoint {path}: "
                                         "the file is read-only (see microgradnorm train "
                                         "--help)")
    assert out == "" and path.read_bytes() == b"keep"

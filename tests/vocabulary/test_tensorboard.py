"""microgradnorm.utils.tensorboard.SummaryWriter: the event files it writes read back with
TensorBoard's own readers (tags, steps, values), event for event the same as torch's
SummaryWriter writes for the same calls, and the message when ``tensorboard`` is missing."""

import pathlib
import re
import socket
import sys

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.utils.tensorboard import SummaryWriter


def test_without_tensorboard_a_writer_says_how_to_install_it(tmp_path, monkeypatch):
    for name in [n for n in sys.modules if n == "tensorboard" or n.startswith("tensorboard.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "tensorboard", None)     # as if never installed
    with pytest.raises(ModuleNotFoundError, match=r"'tensorboard'.*pip install tensorboard"):
        SummaryWriter(tmp_path / "run")
    assert not (tmp_path / "run").exists()


try:                          # the readers, and torch's writer as the reference
    import torch
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
except ImportError:           # the test above still runs
    TorchWriter = None
needs_tensorboard = pytest.mark.skipif(
    TorchWriter is None, reason="needs tensorboard (pip install tensorboard) and torch")


def read(folder):
    accumulator = EventAccumulator(str(folder))
    accumulator.Reload()
    return accumulator


def events(folder):
    """Every event of the one event file in ``folder``, wall times cleared."""
    (path,) = pathlib.Path(folder).glob("events.out.tfevents.*")
    found = list(EventFileLoader(str(path)).Load())
    for event in found:
        event.wall_time = 0
    return found


@needs_tensorboard
def test_scalars_read_back_with_their_tags_steps_and_values(tmp_path):
    values = [1.0, mg.tensor(0.5), mg.tensor([0.25], requires_grad=True), np.float64(0.125),
              np.array([[2.0]]), 3]
    with SummaryWriter(tmp_path) as writer:
        for step, value in enumerate(values):
            writer.add_scalar("train/loss", value, step * 10, walltime=100.0 + step)
        writer.add_scalars("acc", {"train": 0.75, "valid": mg.tensor(0.5)}, 7)
    run = read(tmp_path)
    assert run.Tags()["scalars"] == ["train/loss"]
    scalars = run.Scalars("train/loss")
    assert [s.step for s in scalars] == [0, 10, 20, 30, 40, 50]
    assert [s.wall_time for s in scalars] == [100.0 + i for i in range(6)]
    expected = [float(np.float32(v)) for v in (1.0, 0.5, 0.25, 0.125, 2.0, 3.0)]
    assert [s.value for s in scalars] == expected
    for tag, value in (("train", 0.75), ("valid", 0.5)):
        (event,) = read(tmp_path / f"acc_{tag}").Scalars("acc")
        assert (event.step, event.value) == (7, value)


@needs_tensorboard
def test_events_are_torchs_event_for_event(tmp_path):
    values = np.random.default_rng(0).standard_normal(500)

    def log(writer, tensor):
        writer.add_scalar("loss", 0.5, 1)
        writer.add_scalar("exact", 1 / 3, 2, new_style=True, double_precision=True)
        writer.add_histogram("weights", tensor(values), 3)
        writer.add_histogram("coarse", values, 4, bins=12, max_bins=5)
        writer.add_histogram("edges", values, 5, bins=np.linspace(-1, 1, 9))
        writer.add_text("notes", "a **markdown** note", 6)

    with SummaryWriter(tmp_path / "ours", purge_step=1) as writer:
        log(writer, mg.tensor)
    with TorchWriter(tmp_path / "theirs", purge_step=1) as writer:
        log(writer, torch.tensor)
    ours, theirs = events(tmp_path / "ours"), events(tmp_path / "theirs")
    assert len(ours) == len(theirs) == 9
    assert ours == theirs
    run = read(tmp_path / "ours")
    assert run.Tags()["histograms"] == ["weights", "coarse", "edges"]
    histogram = run.Histograms("weights")[0].histogram_value
    assert (histogram.num, histogram.min, histogram.max) == (500, values.min(), values.max())
    (text,) = run.Tensors("notes/text_summary")
    assert (text.step, text.tensor_proto.string_val) == (6, [b"a **markdown** note"])


@needs_tensorboard
def test_default_log_dir_is_torchs_and_close_then_write_opens_a_new_file(tmp_path,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="-lr0.1")
    pattern = r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(socket.gethostname())
    assert re.fullmatch(pattern + "-lr0.1", writer.get_logdir().replace("\\", "/"))
    with TorchWriter(comment="-torch") as theirs:              # a folder of its own
        assert re.fullmatch(pattern + "-torch", theirs.get_logdir().replace("\\", "/"))
    writer.add_scalar("x", 1.0, 0)
    writer.close()
    writer.add_scalar("x", 2.0, 1)               # after close: a new event file, as torch
    writer.flush()
    assert len(list(pathlib.Path(writer.get_logdir()).glob("events.out.tfevents.*"))) == 2
    assert [s.value for s in read(writer.get_logdir()).Scalars("x")] == [1.0, 2.0]
    writer.close()


@needs_tensorboard
def test_bad_values_raise_torchs_errors_and_write_nothing(tmp_path):
    with SummaryWriter(tmp_path / "ours") as ours, TorchWriter(tmp_path / "theirs") as theirs:
        for call in (lambda w, t: w.add_scalar("x", t([1.0, 2.0])),
                     lambda w, t: w.add_histogram("h", t(np.zeros(0)))):
            with pytest.raises(Exception) as error:
                call(theirs, torch.tensor)
            with pytest.raises(type(error.value), match="SummaryWriter.add_"):
                call(ours, mg.tensor)
        with pytest.raises(TypeError, match="tag must be a str"):
            ours.add_scalar(3, 1.0)
        with pytest.raises(TypeError, match="global_step must be an int"):
            ours.add_scalar("x", 1.0, 1.5)
        with pytest.raises(TypeError, match="expected a number"):
            ours.add_scalar("x", "1.0")
    assert read(tmp_path / "ours").Tags()["scalars"] == []
    assert len(events(tmp_path / "ours")) == 1           # the file version only

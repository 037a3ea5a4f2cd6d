"""Saving and loading a whole model, as PyTorch's tutorial does it (``torch.save(model, PATH)``,
``torch.load(PATH, weights_only=False)``), under both libraries at test time: the model comes
back as its own class with its weights, buffers, training flag and tied parameters; a
checkpoint dict with the optimizer and an ``argparse.Namespace`` resumes stepping as the
original does; the default ``weights_only=True`` refuses the file with torch's
``UnpicklingError``; ``safe_globals`` allows the named classes; damaged and missing files
raise torch's classes."""

import argparse
import io
import pickle

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

LIBS = {"torch": torch, "mg": mg}


# ----- models defined here, one per library (pickled by reference to this module) ---------
def _build_cnn(model, nn):
    model.conv = nn.Conv2d(1, 3, 3)
    model.bn = nn.BatchNorm2d(3)
    model.pool = nn.MaxPool2d(2)
    model.fc = nn.Linear(3 * 3 * 3, 4)


def _cnn_forward(model, x, F):
    x = model.pool(F.relu(model.bn(model.conv(x))))
    return model.fc(x.reshape(x.shape[0], -1))


class TorchCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        _build_cnn(self, torch.nn)

    def forward(self, x):
        return _cnn_forward(self, x, torch.nn.functional)


class MgCNN(mg.nn.Module):
    def __init__(self):
        super().__init__()
        _build_cnn(self, mg.nn)

    def forward(self, x):
        return _cnn_forward(self, x, mg.nn.functional)


def _build_tied(model, nn):
    model.wte = nn.Embedding(10, 4)
    model.lm_head = nn.Linear(4, 10, bias=False)
    model.lm_head.weight = model.wte.weight          # tied, as GPT-2's


class TorchTied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        _build_tied(self, torch.nn)

    def forward(self, idx):
        return self.lm_head(self.wte(idx))


class MgTied(mg.nn.Module):
    def __init__(self):
        super().__init__()
        _build_tied(self, mg.nn)

    def forward(self, idx):
        return self.lm_head(self.wte(idx))


CLASSES = {"cnn": {"torch": TorchCNN, "mg": MgCNN}, "tied": {"torch": TorchTied, "mg": MgTied}}


def make(kind, lib):
    """The model ``kind`` of library ``lib``, with torch's initial weights (seeded) in both."""
    torch.manual_seed(0)
    if kind == "sequential":
        reference = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(),
                                        torch.nn.Linear(5, 2))
        model = reference if lib == "torch" else \
            mg.nn.Sequential(mg.nn.Linear(3, 5), mg.nn.ReLU(), mg.nn.Linear(5, 2))
    else:
        reference = CLASSES[kind]["torch"]()
        model = reference if lib == "torch" else CLASSES[kind]["mg"]()
    if lib == "mg":
        model.load_state_dict({k: v.detach().numpy().copy()
                               for k, v in reference.state_dict().items()})
    return model


def numpy(value):
    return value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)


def round_trip(lib, obj, **options):
    buffer = io.BytesIO()
    LIBS[lib].save(obj, buffer)
    buffer.seek(0)
    return LIBS[lib].load(buffer, **options)


def inputs(kind, lib):
    rng = np.random.default_rng(1)
    if kind == "cnn":
        return LIBS[lib].tensor(rng.standard_normal((2, 1, 8, 8)).astype(np.float32))
    if kind == "tied":
        return LIBS[lib].tensor(np.array([[1, 2, 3]]))
    return LIBS[lib].tensor(rng.standard_normal((4, 3)).astype(np.float32))


def assert_same(ours, theirs, path="result"):
    if isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs), path
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{path}[{key!r}]")
    elif isinstance(theirs, (np.ndarray, torch.Tensor)):
        np.testing.assert_allclose(numpy(ours), numpy(theirs), rtol=1e-5, atol=1e-6,
                                   err_msg=path)
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-5, abs=1e-7), path
    else:
        assert ours == theirs, path


# ----- the whole model comes back --------------------------------------------------------
def whole_model(lib, kind):
    model = make(kind, lib)
    x = inputs(kind, lib)
    model(x)                                          # BatchNorm's running stats move
    model.eval()
    loaded = round_trip(lib, model, weights_only=False)
    loaded.eval()
    own = CLASSES.get(kind, {}).get(lib)
    before, after = model.state_dict(), loaded.state_dict()
    return [own is None or type(loaded) is own, type(loaded).__name__.replace(lib.title(), ""),
            loaded.training, list(after), all(np.array_equal(numpy(before[k]), numpy(after[k]))
                                               for k in before),
            all(type(p).__name__ == "Parameter" for p in loaded.parameters()),
            len(list(loaded.parameters())), numpy(loaded(x)), numpy(model(x))]


@pytest.mark.parametrize("kind", ["cnn", "sequential", "tied"])
def test_the_whole_model_round_trips_as_torchs(kind):
    theirs, ours = whole_model("torch", kind), whole_model("mg", kind)
    assert theirs[0] and ours[0]
    assert_same(ours, theirs)


def test_tied_weights_stay_one_parameter():
    for lib in LIBS:
        loaded = round_trip(lib, make("tied", lib), weights_only=False)
        assert loaded.lm_head.weight is loaded.wte.weight, lib
        loaded.wte.weight.data[0, 0] = 7.0               # one memory, seen from both
        assert float(loaded.lm_head.weight.detach()[0, 0]) == 7.0, lib


def test_views_share_memory_as_torchs_storages():
    observed = {}
    for lib in LIBS:
        base = LIBS[lib].arange(6.0)
        loaded = round_trip(lib, {"model": make("sequential", lib), "base": base,
                                  "view": base[2:5]}, weights_only=False)
        loaded["base"][3] = 100.0
        observed[lib] = [numpy(loaded["view"]), loaded["model"][0].weight.shape[0]]
    assert_same(observed["mg"], observed["torch"])


# ----- a checkpoint dict: model, optimizer, Namespace; training resumes identically -------
def train_steps(lib, model, optimizer, steps):
    rng = np.random.default_rng(5)
    losses = []
    for _ in range(steps):
        x = LIBS[lib].tensor(rng.standard_normal((4, 3)).astype(np.float32))
        loss = (model(x) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def resumed(lib):
    model = make("sequential", lib)
    optimizer = LIBS[lib].optim.Adam(model.parameters(), lr=0.01)
    train_steps(lib, model, optimizer, 3)
    args = argparse.Namespace(lr=0.01, batch_size=4, name="run")
    loaded = round_trip(lib, {"model": model, "optimizer": optimizer, "epoch": 3,
                              "args": args}, weights_only=False)
    same_params = all(a is b for a, b in zip(loaded["optimizer"].param_groups[0]["params"],
                                             loaded["model"].parameters()))
    original = train_steps(lib, model, optimizer, 3)
    again = train_steps(lib, loaded["model"], loaded["optimizer"], 3)
    return [original == again, same_params, loaded["epoch"], vars(loaded["args"]),
            type(loaded["optimizer"]).__name__, original,
            [numpy(p) for p in loaded["model"].parameters()]]


def test_a_checkpoint_with_model_optimizer_and_namespace_resumes_identically():
    theirs, ours = resumed("torch"), resumed("mg")
    assert theirs[0] and ours[0] and theirs[1] and ours[1]
    assert_same(ours, theirs)


def test_map_location_applies_to_the_tensors_inside():
    for lib in LIBS:
        model = make("sequential", lib)
        for where in ["cpu", {"cpu": "cpu"}]:
            loaded = round_trip(lib, model, weights_only=False, map_location=where)
            assert str(loaded[0].weight.device) == "cpu", lib
            np.testing.assert_array_equal(numpy(loaded[0].weight), numpy(model[0].weight))


# ----- weights_only and the allowlist ----------------------------------------------------
@pytest.mark.parametrize("kind", ["cnn", "sequential"])
def test_a_weights_only_load_refuses_the_pickle_naming_the_global(kind):
    for lib in LIBS:
        buffer = io.BytesIO()
        model = make(kind, lib)
        LIBS[lib].save(model, buffer)
        buffer.seek(0)
        with pytest.raises(pickle.UnpicklingError) as error:
            LIBS[lib].load(buffer)
        message = str(error.value)
        assert "weights_only" in message and "False" in message, lib
        assert type(model).__name__ in message, (lib, message)


RAN = []


def _record(value):
    RAN.append(value)
    return value


class Payload:
    """An object whose unpickling calls a function: what a weights-only load must not run."""

    def __reduce__(self):
        return (_record, ("ran",))


def test_a_weights_only_load_runs_nothing_and_weights_only_false_runs_the_file():
    for lib in LIBS:
        buffer = io.BytesIO()
        LIBS[lib].save({"w": LIBS[lib].ones(2), "payload": Payload()}, buffer)
        buffer.seek(0)
        RAN.clear()
        with pytest.raises(pickle.UnpicklingError, match="_record"):
            LIBS[lib].load(buffer)
        assert RAN == [], lib
        buffer.seek(0)
        loaded = LIBS[lib].load(buffer, weights_only=False)
        assert RAN == ["ran"] and loaded["payload"] == "ran", lib
        assert numpy(loaded["w"]).tolist() == [1.0, 1.0], lib


def test_safe_globals_allow_the_named_classes():
    for lib in LIBS:
        nn, serialization = LIBS[lib].nn, LIBS[lib].serialization
        model = make("sequential", lib)
        buffer = io.BytesIO()
        LIBS[lib].save(model, buffer)
        before = serialization.get_safe_globals()
        with serialization.safe_globals([nn.Sequential, nn.Linear, nn.ReLU]):
            buffer.seek(0)
            loaded = LIBS[lib].load(buffer)
        assert set(map(str, serialization.get_safe_globals())) == set(map(str, before)), lib
        assert type(loaded) is nn.Sequential, lib
        np.testing.assert_array_equal(numpy(loaded[2].bias), numpy(model[2].bias))
        buffer.seek(0)
        with pytest.raises(pickle.UnpicklingError):    # the block's allowlist is gone
            LIBS[lib].load(buffer)


def test_data_keeps_loading_weights_only():
    # a state dict needs no pickle in either library: the default load reads it
    for lib in LIBS:
        model = make("cnn", lib)
        state = round_trip(lib, {"model": model.state_dict(), "epoch": 3})
        assert state["epoch"] == 3 and list(state["model"]) == list(model.state_dict()), lib


# ----- damaged and missing files ---------------------------------------------------------
def test_a_truncated_file_raises_torchs_class():
    for lib in LIBS:
        buffer = io.BytesIO()
        LIBS[lib].save(make("sequential", lib), buffer)
        data = buffer.getvalue()
        with pytest.raises(RuntimeError):
            LIBS[lib].load(io.BytesIO(data[:len(data) // 2]), weights_only=False)


def test_a_missing_path_is_file_not_found(tmp_path):
    for lib in LIBS:
        with pytest.raises(FileNotFoundError):
            LIBS[lib].load(tmp_path / "missing.pt", weights_only=False)


def test_an_unpicklable_object_raises_pickles_error_and_writes_nothing(tmp_path):
    errors = {}
    for lib in LIBS:
        path = tmp_path / f"{lib}.pt"
        with pytest.raises((pickle.PicklingError, AttributeError)) as error:
            LIBS[lib].save({"model": make("sequential", lib), "fn": lambda x: x}, path)
        errors[lib] = type(error.value)
        assert not path.exists() or lib == "torch", lib     # torch leaves a partial file
    assert errors["mg"] is errors["torch"]


def test_a_path_round_trip_as_the_tutorial_writes_it(tmp_path):
    outputs = {}
    for lib in LIBS:
        path = tmp_path / f"{lib}_model.pt"
        model = make("cnn", lib)
        LIBS[lib].save(model, path)
        loaded = LIBS[lib].load(path, weights_only=False)
        loaded.eval()
        outputs[lib] = numpy(loaded(inputs("cnn", lib)))
    assert_same(outputs["mg"], outputs["torch"])

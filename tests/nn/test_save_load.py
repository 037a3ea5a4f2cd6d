"""mg.save / mg.load with torch.save / torch.load's contract, data on a file that nothing
pickles: every kind of object round-trips (what torch.load gives for the same object: the
same containers and types), the path is used as given or a file object is taken, what is
not data is pickled as torch pickles it, an object that can't be pickled writes nothing,
hostile files are one ValueError naming the file, and files from before the format still
load."""

import collections
import io
import json
import math
import pickle
import random
import zipfile

import numpy as np
import pytest
from numpy.lib import format as np_format

import microgradnorm as mg
from microgradnorm import cli, nn, optim
from microgradnorm.checkpoint import load_checkpoint, read_extra, save_checkpoint
from microgradnorm.nn import serialization
from checkpoint_cases import trained

torch = pytest.importorskip("torch")

needs_bfloat16 = pytest.mark.skipif(not mg.dtypes.has_bfloat16(), reason="needs ml_dtypes")
DTYPES = ["float16", pytest.param("bfloat16", marks=needs_bfloat16), "float32", "float64",
          "int64", "bool"]


def round_trip(obj, **load_options):
    buffer = io.BytesIO()
    mg.save(obj, buffer)
    buffer.seek(0)
    return mg.load(buffer, **load_options)


def bits(value):
    """The bytes of a Tensor's or array's data, with its dtype and shape: equal bitwise."""
    array = value.detach().numpy() if isinstance(value, mg.Tensor) else np.asarray(value)
    return array.dtype, array.shape, np.ascontiguousarray(array).tobytes()


# ----- round trips ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3, 4)])
def test_a_tensor_of_each_dtype_and_shape_round_trips_bitwise(dtype, shape):
    values = np.random.default_rng(0).standard_normal(shape) * 100
    tensor = mg.tensor(values, dtype=dtype)
    loaded = round_trip(tensor)
    assert type(loaded) is mg.Tensor and loaded.dtype == tensor.dtype
    assert bits(loaded) == bits(tensor) and loaded.device == "cpu"
    assert not loaded.requires_grad


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_tensors_and_arrays_round_trip(dtype):
    base = mg.tensor(np.arange(24.0).reshape(4, 6), dtype=dtype)
    array = np.asarray(base.numpy())
    views = {"transposed": base.t(), "strided": base[::2, 1::3],
             # memory with negative strides, which the public constructors refuse as torch's
             "flipped": mg.Tensor._from_op(array[::-1], None)}
    arrays = {"fortran": np.asfortranarray(array), "strided": array[1::2, ::-2]}
    loaded = round_trip({"views": views, "arrays": arrays})
    for key, view in views.items():
        assert bits(loaded["views"][key]) == bits(view), key
    for key, value in arrays.items():
        assert type(loaded["arrays"][key]) is np.ndarray
        assert bits(loaded["arrays"][key]) == bits(value), key


def test_requires_grad_and_parameters_come_back_as_torch_gives_them():
    leaf = mg.tensor([1.0, 2.0], requires_grad=True)
    parameter = nn.Parameter(mg.ones(2))
    ours = round_trip({"leaf": leaf, "made": leaf * 2, "parameter": parameter})
    theirs_leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    buffer = io.BytesIO()
    torch.save({"leaf": theirs_leaf, "made": theirs_leaf * 2,
                "parameter": torch.nn.Parameter(torch.ones(2))}, buffer)
    buffer.seek(0)
    theirs = torch.load(buffer)
    for key in ("leaf", "made", "parameter"):           # a made tensor comes back a leaf
        assert ours[key].requires_grad == theirs[key].requires_grad, key
        assert ours[key].is_leaf and theirs[key].is_leaf, key
    assert isinstance(ours["parameter"], nn.Parameter)
    assert isinstance(theirs["parameter"], torch.nn.Parameter)
    assert not isinstance(ours["leaf"], nn.Parameter)


def test_numpy_arrays_and_numbers_keep_their_types():
    obj = {"f16": np.float16(1.5), "f32": np.float32(0.1), "f64": np.float64(1 / 3),
           "i64": np.int64(-2 ** 63), "u64": np.uint64(2 ** 64 - 1), "u8": np.uint8(255),
           "flag": np.bool_(True), "nan": np.float32("nan"), "inf": np.float64("-inf"),
           "array": np.arange(6, dtype=np.int32).reshape(2, 3), "empty": np.zeros((0, 2))}
    if mg.dtypes.has_bfloat16():
        obj["bf16"] = np.array(3.25, mg.dtypes.bfloat16)[()]
    loaded = round_trip(obj)
    assert list(loaded) == list(obj)
    for key, value in obj.items():
        assert type(loaded[key]) is type(value) and loaded[key].dtype == value.dtype, key
        assert bits(loaded[key]) == bits(value), key


def test_plain_values_round_trip_exactly():
    obj = {"none": None, "true": True, "zero": 0, "big": 2 ** 100, "negative": -7,
           "float": 0.1, "minus_zero": -0.0, "nan": math.nan, "inf": math.inf,
           "-inf": -math.inf, "tiny": 5e-324, "text": "caf\u00e9 \u2713 \"quoted\"\n",
           "surrogate": "\udcff", "empty": ["", [], (), {}],
           "tuple": (1, (2.5, None), [3]), "ordered": collections.OrderedDict(b=1, a=2),
           "size": mg.ones((2, 0, 3)).size(),
           1: "int key", -3: "negative key", "mixed": {0: "a", "0": "b"}}
    loaded = round_trip(obj)
    assert list(loaded) == list(obj)
    assert type(loaded["ordered"]) is collections.OrderedDict
    assert type(loaded["size"]) is type(obj["size"]) and loaded["size"] == (2, 0, 3)
    assert list(loaded["ordered"]) == ["b", "a"]
    assert loaded["tuple"] == (1, (2.5, None), [3]) and type(loaded["tuple"][2]) is list
    assert math.copysign(1, loaded["minus_zero"]) == -1 and math.isnan(loaded["nan"])
    assert loaded["mixed"] == {0: "a", "0": "b"}
    for key in obj:
        if key not in ("nan", "ordered"):
            assert loaded[key] == obj[key] and type(loaded[key]) is type(obj[key]), key


def test_a_training_script_checkpoint_round_trips_and_resumes_bitwise():
    # nanoGPT's checkpoint: {'model', 'optimizer', 'model_args', 'iter_num', ...}
    np.random.seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    opt = optim.AdamW(model.parameters(), lr=np.float32(1e-2), betas=(0.9, 0.95))

    def step(model, opt, seed):
        x = mg.tensor(np.random.default_rng(seed).standard_normal((5, 3)), dtype="float32")
        opt.zero_grad()
        (model(x) ** 2).mean().backward()
        opt.step()

    step(model, opt, 1)
    checkpoint = {"model": model.state_dict(), "optimizer": opt.state_dict(),
                  "model_args": {"n_layer": 2, "bias": False, "dropout": 0.0},
                  "iter_num": 1, "best_val_loss": 2.5,
                  "config": {"dataset": "shakespeare", "compile": False, "seed": None}}
    loaded = round_trip(checkpoint)
    assert {key: type(value) for key, value in loaded.items()} == \
        {key: type(value) for key, value in checkpoint.items()}
    assert loaded["optimizer"]["param_groups"] == checkpoint["optimizer"]["param_groups"]
    assert type(loaded["optimizer"]["param_groups"][0]["lr"]) is np.float32
    np.random.seed(5)
    other = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    other_opt = optim.AdamW(other.parameters())
    other.load_state_dict(loaded["model"])
    other_opt.load_state_dict(loaded["optimizer"])
    step(model, opt, 2)
    step(other, other_opt, 2)
    for key, value in model.state_dict().items():
        assert bits(other.state_dict()[key]) == bits(value), key


def test_optimizer_state_dicts_of_each_optimizer_round_trip(tmp_path):
    for make in (lambda p: optim.SGD(p, lr=0.1, momentum=0.9), lambda p: optim.Adam(p),
                 lambda p: optim.AdamW(p, weight_decay=0.1)):
        model = nn.Linear(2, 3)
        opt = make(model.parameters())
        model(mg.ones((4, 2))).sum().backward()
        opt.step()
        state = opt.state_dict()
        mg.save(state, tmp_path / "opt.pt")
        loaded = mg.load(tmp_path / "opt.pt")
        assert list(loaded["state"]) == list(state["state"]) == [0, 1]      # int keys
        assert repr(loaded) == repr(state)


def test_tied_weights_come_back_sharing_memory_as_torch_gives_them():
    model = nn.Module()
    model.wte = nn.Embedding(5, 3)
    model.head = nn.Linear(3, 5, bias=False)
    model.wte.weight = model.head.weight
    buffer = io.BytesIO()
    mg.save(model.state_dict(), buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        assert archive.namelist() == ["wte.weight.npy", "__structure__.npy"]   # stored once
    buffer.seek(0)
    ours = mg.load(buffer)
    assert np.shares_memory(ours["wte.weight"].numpy(), ours["head.weight"].numpy())
    theirs_model = torch.nn.Module()
    theirs_model.wte = torch.nn.Embedding(5, 3)
    theirs_model.head = torch.nn.Linear(3, 5, bias=False)
    theirs_model.wte.weight = theirs_model.head.weight
    buffer = io.BytesIO()
    torch.save(theirs_model.state_dict(), buffer)
    buffer.seek(0)
    theirs = torch.load(buffer)
    assert theirs["wte.weight"].data_ptr() == theirs["head.weight"].data_ptr()
    same = mg.tensor([1.0])
    loaded = round_trip([same, same, same.detach()])         # one object, as pickle's memo
    assert loaded[0] is loaded[1] and loaded[2] is not loaded[0]


def test_a_module_is_pickled_whole_and_refused_by_a_weights_only_load():
    model = nn.Linear(2, 2)
    buffer = io.BytesIO()
    mg.save(model, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        mg.load(buffer)
    buffer.seek(0)
    loaded = mg.load(buffer, weights_only=False)
    assert type(loaded) is nn.Linear and loaded.weight is not model.weight
    assert bits(loaded.weight) == bits(model.weight)


# ----- PyTorch's contract -----------------------------------------------------------------
def skeleton(value):
    """What a loaded object is made of: containers, keys and types; tensors as (dtype, shape,
    requires_grad); NaN as "nan"."""
    if isinstance(value, dict):
        return (type(value).__name__, [(key, skeleton(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [skeleton(item) for item in value])
    if isinstance(value, (mg.Tensor, torch.Tensor)):
        return ("tensor", str(value.dtype).replace("torch.", ""), tuple(value.shape),
                value.requires_grad)
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def to_torch(value):
    """``value`` with every mg.Tensor as the equal torch tensor."""
    if isinstance(value, dict):
        return type(value)((key, to_torch(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(to_torch(item) for item in value)
    if isinstance(value, mg.Tensor):
        dtype = getattr(torch, str(value.dtype).removeprefix("torch."))
        array = value.detach().numpy()
        if dtype == torch.bfloat16:
            return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
        return torch.from_numpy(array.copy()).to(dtype).requires_grad_(value.requires_grad)
    return value


@pytest.mark.parametrize("weights_only", [True, False])
def test_the_loaded_structure_is_what_torch_load_gives(weights_only, tmp_path):
    obj = {"model": {"w": mg.tensor(np.ones((2, 3)), dtype="float32"),
                     "steps": mg.tensor([3], dtype="int64"), "mask": mg.tensor([True])},
           "optimizer": {"state": {0: {"step": 3}}, "param_groups": [{"lr": 0.1,
                                                                     "betas": (0.9, 0.99),
                                                                     "params": [0]}]},
           "iter_num": 7, "best_val_loss": math.inf, "loss": math.nan, "name": "run",
           "parent": None, "flags": [True, False], "shape": (2, 3), 5: "int key",
           "leaf": mg.tensor([1.0, 2.0], requires_grad=True), "scalar": mg.tensor(2.0)}
    if mg.dtypes.has_bfloat16():
        obj["model"]["half"] = mg.tensor([1.5, -2.0], dtype="bfloat16")
    torch.save(to_torch(obj), tmp_path / "theirs")
    mg.save(obj, tmp_path / "ours")
    theirs = torch.load(tmp_path / "theirs", weights_only=weights_only)
    ours = mg.load(tmp_path / "ours", weights_only=weights_only)
    assert skeleton(ours) == skeleton(theirs)
    for key, value in ours["model"].items():
        want = theirs["model"][key]
        want = want.view(torch.int16).numpy().view(np.uint16) if want.dtype == torch.bfloat16 \
            else want.numpy()
        got = value.numpy()
        assert (got.view(np.uint16) if got.dtype == mg.dtypes.bfloat16 else got).tobytes() \
            == want.tobytes(), key


def test_the_path_is_used_exactly_as_given_as_torch_save_does(tmp_path):
    names = ["ckpt.pt", "noext", "model.npz", "two.dots.bin"]
    for name in names:
        mg.save({"w": mg.ones(2)}, tmp_path / name)
        torch.save({"w": torch.ones(2)}, tmp_path / f"torch-{name}")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        names + [f"torch-{name}" for name in names])
    assert mg.load(tmp_path / "noext")["w"].tolist() == [1.0, 1.0]
    assert mg.load(str(tmp_path / "noext").encode())["w"].tolist() == [1.0, 1.0]


def test_file_objects_open_files_and_streams(tmp_path):
    state = {"w": mg.arange(3.0), "n": 1}
    with open(tmp_path / "m.pt", "wb") as file:
        mg.save(state, file)
    with open(tmp_path / "m.pt", "rb") as file:
        assert mg.load(file)["w"].tolist() == [0.0, 1.0, 2.0]

    class Stream(io.RawIOBase):                      # a pipe: no seek, no tell
        def __init__(self, data=b""):
            self.data, self.written = bytearray(data), bytearray()

        def readable(self):
            return True

        def writable(self):
            return True

        def readinto(self, buffer):
            n = min(len(buffer), len(self.data))
            buffer[:n], self.data[:n] = self.data[:n], b""
            return n

        def write(self, data):
            self.written += data
            return len(data)

    out = Stream()
    mg.save(state, out)
    assert mg.load(Stream(out.written))["n"] == 1
    prefixed = io.BytesIO(b"a header before it")
    prefixed.seek(0, io.SEEK_END)
    mg.save(state, prefixed)                         # at the position, as torch.save
    prefixed.seek(len(b"a header before it"))
    assert mg.load(prefixed)["n"] == 1
    with open(tmp_path / "t.txt", "w") as text, pytest.raises(TypeError, match="text mode"):
        mg.save(state, text)
    with open(tmp_path / "m.pt") as text, pytest.raises(TypeError, match="text mode"):
        mg.load(text)


def test_map_location_and_weights_only(tmp_path):
    path = tmp_path / "m.pt"
    mg.save({"w": mg.ones(2), "a": np.ones(2)}, path)
    for where in (None, "cpu", torch.device("cpu"), {"cuda:0": "cpu"}, {"cpu": "cpu"}):
        loaded = mg.load(path, map_location=where)
        assert loaded["w"].device == "cpu" and type(loaded["a"]) is np.ndarray
    seen = []
    loaded = mg.load(path, map_location=lambda storage, location: seen.append(location))
    assert seen == ["cpu"] and loaded["w"].tolist() == [1.0, 1.0]
    assert mg.load(path, map_location=lambda storage, loc: storage)["w"].device == "cpu"
    assert mg.load(path, weights_only=False)["w"].tolist() == [1.0, 1.0]
    for bad in ("tpu", "cuda:1", 3, {"cpu": "tpu"}):
        with pytest.raises(ValueError, match="map_location must be"):
            mg.load(path, map_location=bad)
    with pytest.raises(TypeError, match="weights_only must be True or False"):
        mg.load(path, weights_only="yes")
    assert nn.save is mg.save and nn.load is mg.load


@pytest.mark.skipif(not mg.backend.cuda_available(), reason="needs CuPy and a GPU")
def test_cuda_tensors_come_back_where_they_were_or_where_mapped(tmp_path):
    path = tmp_path / "m.pt"
    weight = mg.tensor(np.arange(6.0).reshape(2, 3), dtype="float32").cuda()
    model = nn.Linear(3, 2).to("cuda")
    opt = optim.Adam(model.parameters())
    model(mg.ones((1, 3)).cuda()).sum().backward()
    opt.step()
    mg.save({"w": weight, "tied": weight, "optimizer": opt.state_dict()}, path)
    loaded = mg.load(path)
    assert loaded["w"].device == "cuda" and loaded["w"] is loaded["tied"]
    assert bits(loaded["w"].cpu()) == bits(weight.cpu())
    on_cpu = mg.load(path, map_location="cpu")
    assert on_cpu["w"].device == "cpu" and bits(on_cpu["w"]) == bits(weight.cpu())
    assert type(on_cpu["optimizer"]["state"][0]["exp_avg"]) is np.ndarray
    assert mg.load(path, map_location={"cuda": "cpu"})["w"].device == "cpu"
    other = optim.Adam(model.parameters())
    other.load_state_dict(loaded["optimizer"])


# ----- what can't be saved writes nothing -------------------------------------------------
def deep(levels):
    value = []
    for _ in range(levels):
        value = [value]
    return value


def cycle():
    value = {"a": []}
    value["a"].append(value)
    return value


# what torch.save pickles: a file holding a pickle, whose weights-only load refuses a global
PICKLED = {
    "a class": ({"cls": nn.Linear}, "microgradnorm.nn.linear.Linear"),
    "an optimizer": ({"opt": "optimizer"}, "microgradnorm.optim.optimizers.AdamW"),
    "a set": ([1, {2, 3}], None),
    "a float key": ({1.5: 1}, None),
    "a NumPy int key": ({np.int64(1): 1}, "numpy"),
    "a bool key": ({False: 1}, None),
    "an object array": ({"w": np.array([1, "x"], dtype=object)}, "numpy"),
    "a complex array": ({"w": np.ones(2, complex)}, "numpy"),
    "a NumPy string": ({"s": np.str_("x")}, "numpy"),
    "a cycle": (cycle(), None),
    "101 levels": (deep(101), None),
    "a huge int": ({"n": 10 ** 5000}, None),
}


@pytest.mark.parametrize("case", PICKLED)
def test_what_is_not_data_is_pickled_as_torch_pickles_it(case):
    obj, refused = PICKLED[case]
    if case == "an optimizer":
        obj = {"opt": optim.AdamW(nn.Linear(2, 2).parameters())}
    buffer = io.BytesIO()
    mg.save(obj, buffer)
    buffer.seek(0)
    if refused is not None:
        with pytest.raises(pickle.UnpicklingError, match=f"global {refused}"):
            mg.load(buffer)
        buffer.seek(0)
    loaded = mg.load(buffer, weights_only=refused is None)
    if case == "an optimizer":
        assert repr(loaded["opt"].state_dict()) == repr(obj["opt"].state_dict())
    else:                                  # the same object, by what pickle makes of it
        assert pickle.dumps(loaded) == pickle.dumps(obj)


# what torch.save cannot pickle either: pickle's error, and nothing written
UNSTORABLE = {
    "a lambda": ({"config": {"fn": lambda x: x}}, pickle.PicklingError, "lambda"),
    "a class not in its module": ({"s": type("Name", (str,), {})("x")}, pickle.PicklingError,
                                  "Name"),
}


@pytest.mark.parametrize("case", UNSTORABLE)
def test_what_cant_be_stored_is_refused_before_anything_is_written(case, tmp_path):
    obj, error, match = UNSTORABLE[case]
    path = tmp_path / "m.pt"
    mg.save({"old": mg.ones(3)}, path)
    before = path.read_bytes()
    buffer = io.BytesIO(b"kept")
    with pytest.raises(error, match=match):
        mg.save(obj, path)
    with pytest.raises(error, match=match):
        mg.save(obj, buffer)
    with pytest.raises(error):
        torch.save(obj, io.BytesIO())
    assert path.read_bytes() == before and buffer.getvalue() == b"kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pt"]


def test_100_levels_save_and_load_and_a_structure_too_large_is_refused(tmp_path, monkeypatch):
    assert round_trip(deep(99)) == deep(99)
    path = tmp_path / "m.pt"
    mg.save(list(range(50)), path)
    monkeypatch.setattr(serialization, "MAX_JSON_BYTES", 100)
    with pytest.raises(ValueError, match=f"{path}: its __structure__ member is uint8"):
        mg.load(path)
    mg.save(list(range(50)), path)       # too long a record for data: pickled, as torch's
    assert mg.load(path) == list(range(50))


# ----- hostile files ----------------------------------------------------------------------
def npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def crafted(path, structure, members=()):
    """A zip of ``members`` ({name: bytes}) and a structure member of ``structure`` (a
    dict, dumped, or raw bytes)."""
    if not isinstance(structure, bytes):
        structure = json.dumps({"format": "microgradnorm.save", "version": 1,
                                "obj": structure}).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in dict(members).items():
            archive.writestr(name, data)
        archive.writestr("__structure__.npy", npy(np.frombuffer(structure, np.uint8)))
    return path


def tensor_node(member="w", dtype="float64", shape=(2,), **fields):
    return {"tensor": {"member": member, "dtype": dtype, "shape": list(shape),
                       "device": "cpu", "requires_grad": False, "ref": 0, **fields}}


HOSTILE = {
    "deep JSON": (b'{"format":"microgradnorm.save","version":1,"obj":' + b"[" * 100_000
                  + b"]" * 100_000 + b"}", {}, "its structure record nests 100,001 deep"),
    "deep strings": (b'{"a":"' + b"[" * 1000 + b'\\"' + b'"}', {}, "not valid JSON|not 'micro"),
    "unterminated": (b'{"format": "microgradnorm.save", "obj": "\\' + b"\\" * 9, {},
                     "not valid JSON"),
    "deep nodes": (deep(150), {}, "nests more than 100 containers deep"),
    "not JSON": (b"\xff\xfe not json", {}, "not valid JSON"),
    "another format": (b'{"format": "torch", "version": 1, "obj": 1}', {},
                       "not 'microgradnorm.save'"),
    "a newer version": (b'{"format": "microgradnorm.save", "version": 9, "obj": 1}', {},
                        "format version 9; this microgradnorm reads version 1"),
    "an unknown tag": ({"pickle": "cos\nsystem"}, {}, "a 'pickle' node this format does not"),
    "two tags": ({"tuple": [], "dict": []}, {}, "is not a node of this format"),
    "a missing member": (tensor_node("gone"), {}, "names the member 'gone'"),
    "the structure as a tensor": (tensor_node("__structure__"), {}, "names the member"),
    "a lying dtype": (tensor_node(), {"w.npy": npy(np.ones(2, np.int64))},
                      r"says float64\[2\] but its member 'w' holds int64\[2\]"),
    "a lying shape": (tensor_node(shape=(10 ** 12,)), {"w.npy": npy(np.ones(2))},
                      r"says float64\[1000000000000\]"),
    "an unknown dtype": (tensor_node(dtype="complex128"), {"w.npy": npy(np.ones(2))},
                         "has dtype 'complex128'"),
    "int requiring grad": (tensor_node(dtype="int64", requires_grad=True),
                           {"w.npy": npy(np.ones(2, np.int64))}, "requires grad"),
    "another device": (tensor_node(device="tpu"), {"w.npy": npy(np.ones(2))},
                       "saved on device 'tpu'"),
    "an array as a view": ({"ndarray": {"member": "w", "dtype": "float64", "shape": [2],
                                        "device": "cpu", "offset": 0, "stride": [1]}},
                           {"w.npy": npy(np.ones(2))}, "has fields"),
    "a bad key": ({"dict": [[1.5, 1]]}, {}, "not a \\[str or int key, value\\]"),
    "a scalar out of range": ({"scalar": ["int8", 300]}, {}, "NumPy int8 of value 300"),
    "a bool scalar of 2": ({"scalar": ["bool", 2]}, {}, "NumPy bool of value 2"),
    "a pickle member": ({"x": 1}, {"w.npy": npy(np.array([{"run": "me"}], dtype=object))},
                        "'w' has dtype object, not a numeric array"),
    "a member not .npy": ({"x": 1}, {"payload.pkl": pickle.dumps(print)},
                          "holds 'payload.pkl', which is not an array"),
    "a header claiming more": (tensor_node(shape=(100000, 100000)),
                               {"w.npy": npy(np.ones(2))[:128] + b"\0" * 16},
                               "claims shape|truncated or corrupt"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_file_is_one_value_error_naming_it(case, tmp_path, monkeypatch):
    structure, members, match = HOSTILE[case]
    if case == "a header claiming more":
        header = io.BytesIO()
        np_format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (100000, 100000)})
        members = {"w.npy": header.getvalue() + b"\0" * 16}
    path = crafted(tmp_path / "evil.pt", structure, members)

    def never(*args, **kwargs):
        raise AssertionError("unpickled")

    monkeypatch.setattr(pickle, "load", never)
    monkeypatch.setattr(pickle, "loads", never)
    with pytest.raises(ValueError, match=match) as error:
        mg.load(path)
    assert str(error.value).startswith(f"mg.load: {path}")


@pytest.mark.parametrize("damage", ["truncate", "not a zip", "npy", "empty", "flipped bytes"])
def test_a_damaged_file_is_one_value_error(damage, tmp_path):
    path = tmp_path / "m.pt"
    mg.save({"w": mg.ones((4, 4)), "config": {"lr": 0.1}}, path)
    data = path.read_bytes()
    rng = np.random.default_rng(0)
    if damage == "truncate":
        cuts = [len(data) * k // 40 for k in range(40)]
        files = [data[:cut] for cut in cuts]
    elif damage == "not a zip":
        files = [b"hello", b"PK\x03\x04" + bytes(100), bytes(1000)]
    elif damage == "npy":
        files = [npy(np.ones(3))]
    elif damage == "empty":
        files = [b""]
    else:                                             # anything but a clear error is a bug
        files = []
        for _ in range(200):
            damaged = bytearray(data)
            for position in rng.integers(0, len(data), 3):
                damaged[position] ^= 1 << int(rng.integers(0, 8))
            files.append(bytes(damaged))
    for content in files:
        path.write_bytes(content)
        try:
            mg.load(path)
        except ValueError as error:
            assert str(error).startswith(f"mg.load: {path}")
        else:
            assert damage == "flipped bytes"          # a flip zipfile doesn't check


# ----- files written before this format ---------------------------------------------------
def test_a_state_dict_saved_by_nn_save_before_loads_as_tensors(tmp_path):
    # nn.save wrote np.savez's layout, a bfloat16 array as its uint16 bits named in a JSON
    # record "__dtypes__"
    path = tmp_path / "old.npz"
    model = nn.Linear(3, 2)
    arrays = {key: value.numpy() for key, value in model.state_dict().items()}
    if mg.dtypes.has_bfloat16():
        arrays["half"] = np.array([1.5, -2.0], mg.dtypes.bfloat16).view(np.uint16)
        arrays["__dtypes__"] = np.array(json.dumps({"half": "bfloat16"}))
    np.savez(path, **arrays)
    loaded = mg.load(path)
    assert all(type(value) is mg.Tensor for value in loaded.values())
    if mg.dtypes.has_bfloat16():
        assert loaded.pop("half").dtype == mg.dtypes.bfloat16
    other = nn.Linear(3, 2)
    other.load_state_dict(loaded)
    for key, value in model.state_dict().items():
        assert bits(other.state_dict()[key]) == bits(value), key


def legacy_save_checkpoint(path, model, optimizer=None, step=0, scheduler=None, rng=None,
                           extra=None):
    """save_checkpoint before mg.save's format (version 1), as it was, with np.savez."""
    arrays = {f"model/{key}": value.numpy() for key, value in model.state_dict().items()}
    meta = {"format": 1, "step": int(step), "extra": extra or {}}
    if optimizer is not None:
        state = optimizer.state_dict()
        meta["optimizer"] = {"type": type(optimizer).__name__,
                             "param_groups": state["param_groups"]}
        for index, entries in state["state"].items():
            for name, value in entries.items():
                arrays[f"optimizer/{index}/{name}"] = np.asarray(value)
    if scheduler is not None:
        meta["scheduler"] = {"type": type(scheduler).__name__, **scheduler.state_dict()}
    numpy_state = np.random.get_state(legacy=False)
    arrays["numpy_random_key"] = numpy_state["state"]["key"]
    meta["random"] = {
        "numpy": {key: value for key, value in numpy_state.items() if key != "state"}
        | {"pos": int(numpy_state["state"]["pos"])},
        "python": random.getstate(),
        "generator": rng.bit_generator.state if rng is not None else None,
    }
    arrays["meta"] = np.array(json.dumps(meta, default=lambda value: value.tolist()))
    np.savez(path, **arrays)


def test_a_checkpoint_written_before_loads_every_field(tmp_path):
    model, opt, scheduler, rng = trained()
    path = tmp_path / "old.npz"
    random.seed(4)
    legacy_save_checkpoint(path, model, opt, 2, scheduler, rng, extra={"losses": [1.5]})
    expected = (np.random.random(), random.random(), rng.random())
    target, target_opt, target_scheduler, target_rng = trained()
    np.random.seed(9)
    random.seed(9)
    loaded = load_checkpoint(path, target, target_opt, target_scheduler, target_rng)
    assert (loaded.step, loaded.extra) == (2, {"losses": [1.5]})
    assert (np.random.random(), random.random(), target_rng.random()) == expected
    assert repr(target_opt.state_dict()) == repr(opt.state_dict())
    assert target_scheduler.state_dict() == scheduler.state_dict()
    for key, value in model.state_dict().items():
        assert bits(target.state_dict()[key]) == bits(value), key
    assert read_extra(path) == {"losses": [1.5]}
    with pytest.raises(ValueError, match="a checkpoint written before mg.save's format.*"
                                         "load_checkpoint"):
        mg.load(path)


@pytest.mark.parametrize("damage, field", [
    (lambda meta, arrays: meta.pop("step"), "step"),
    (lambda meta, arrays: meta["random"]["numpy"].pop("pos"), "random.numpy"),
    (lambda meta, arrays: arrays.pop("numpy_random_key"), "random.numpy"),
    (lambda meta, arrays: arrays.update({"optimizer/x/exp_avg": np.zeros(2)}), "optimizer"),
    (lambda meta, arrays: meta["optimizer"].pop("param_groups"), "optimizer"),
    (lambda meta, arrays: meta["scheduler"].pop("last_epoch"), "scheduler"),
    (lambda meta, arrays: arrays.pop("model/1.bias"), "model"),
])
def test_a_damaged_field_of_a_checkpoint_written_before_is_named(damage, field, tmp_path):
    model, opt, scheduler, rng = trained()
    path = tmp_path / "old.npz"
    legacy_save_checkpoint(path, model, opt, 2, scheduler, rng)
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    meta = json.loads(str(arrays["meta"]))
    damage(meta, arrays)
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(path, **arrays)
    target, target_opt, target_scheduler, target_rng = trained()
    target_opt.step()
    before = repr((target.state_dict(), target_opt.state_dict()))
    with pytest.raises(ValueError, match=f"load_checkpoint: {path}: {field}"):
        load_checkpoint(path, target, target_opt, target_scheduler, target_rng)
    assert repr((target.state_dict(), target_opt.state_dict())) == before


# ----- checkpoints and the command are files of mg.save -----------------------------------
def test_a_checkpoint_is_a_file_of_mg_save_at_the_path_given(tmp_path):
    model, opt, scheduler, rng = trained()
    path = save_checkpoint(tmp_path / "run", model, opt, 3, scheduler, rng, extra={"k": 1})
    assert path == str(tmp_path / "run") and sorted(tmp_path.iterdir()) == [tmp_path / "run"]
    checkpoint = mg.load(path)
    assert sorted(checkpoint) == ["checkpoint_version", "extra", "model", "optimizer",
                                  "optimizer_type", "random", "scheduler", "scheduler_type",
                                  "step"]
    assert (checkpoint["step"], checkpoint["optimizer_type"], checkpoint["extra"]) == \
        (3, "AdamW", {"k": 1})
    other = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    other.load_state_dict(checkpoint["model"])          # torch's idiom works on it
    optim.AdamW(other.parameters()).load_state_dict(checkpoint["optimizer"])
    assert type(checkpoint["random"]["python"]) is tuple


def test_the_train_command_prints_the_path_it_wrote(tmp_path, capsys):
    path = tmp_path / "run"
    code = cli.main(["train", "--steps", "1", "--checkpoint", str(path), "--d-model", "8",
                     "--layers", "1", "--heads", "2", "--context", "8", "--batch-size", "4",
                     "--no-progress", "--sample", "0"])
    out = capsys.readouterr().out
    assert code in (0, None) and f"checkpoint: {path} (step 1)" in out
    assert sorted(tmp_path.iterdir()) == [path] and mg.load(path)["step"] == 1

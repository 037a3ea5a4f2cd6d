"""The nn.Module API and serialization against PyTorch, computed at test time: conversions
(``to``, ``float``, ``double``, ``half``, ``cpu``, ``type``, ``to_empty``, ``share_memory``)
through ``Module._apply`` with torch's identity rules and ``__future__`` switches; members
put straight into ``_parameters`` / ``_buffers`` / ``_modules``; a state dict's
``_metadata`` through ``mg.save`` / ``mg.load`` and into ``_load_from_state_dict``; the
InstanceNorm check of version-less state dicts; load post-hooks before the strict check;
torch's wording of ``load_state_dict`` errors; ``copy.deepcopy`` of Parameters; pickled
optimizers; ``torch.save``'s keywords; and files written by ``torch.save`` read by
``mg.load``."""

import copy
import io
import os
import pickle
import re
import zipfile

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def _both(build):
    """``build(lib)`` for torch and mg, each after its own seed."""
    torch.manual_seed(0)
    mg.manual_seed(0)
    return build(torch), build(mg)


def _array(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    return np.asarray((t.float() if str(t.dtype) == "torch.bfloat16" else t).numpy())


def _dtype(t):
    return str(t.dtype).replace("torch.", "")


def _model(lib):
    nn = lib.nn
    m = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Linear(1, 2))
    m[0].weight.grad = lib.ones(3, 2, 1, 1)
    m.register_buffer("steps", lib.arange(3))
    return m


def _tensors(m):
    return list(m.parameters()) + list(m.buffers())


def _describe(m):
    return [(n, _dtype(t), type(t).__name__, t.requires_grad,
             None if t.grad is None else _dtype(t.grad))
            for n, t in list(m.named_parameters()) + list(m.named_buffers())]


CONVERSIONS = {
    "double": lambda m, lib: m.double(),
    "half": lambda m, lib: m.half(),
    "float_back": lambda m, lib: m.double().float(),
    "cpu": lambda m, lib: m.cpu(),
    "to_dtype": lambda m, lib: m.to(lib.float64),
    "to_device_dtype": lambda m, lib: m.to("cpu", lib.float16, True),
    "to_tensor": lambda m, lib: m.to(lib.ones(1, dtype=lib.float64)),
    "to_complex": lambda m, lib: m.to(lib.complex64),
    "to_channels_last": lambda m, lib: m.to(memory_format=lib.channels_last),
    "type": lambda m, lib: m.type(lib.float64),
    "type_name": lambda m, lib: m.type("torch.DoubleTensor"),
    "type_int_frozen": lambda m, lib: m.requires_grad_(False).type(lib.int32),
    "to_empty": lambda m, lib: m.to_empty(device="cpu"),
    "share_memory": lambda m, lib: m.share_memory(),
    "apply_clone": lambda m, lib: m._apply(lambda t: t.clone()),
    "apply_no_recurse": lambda m, lib: m._apply(lambda t: t * 2, recurse=False),
}


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_conversions_keep_parameters_and_replace_buffers_as_torch(name):
    # a Parameter keeps its object (and its .grad its object), a buffer that changes is a
    # new tensor, the dtypes follow torch's rule for each method
    results = []
    for m, lib in zip(_both(_model), (torch, mg)):
        before = list(_tensors(m))    # held, so no new tensor can take a freed one's id
        grad = m[0].weight.grad
        with pytest.warns(UserWarning) if name == "to_complex" else _no_warning():
            out = CONVERSIONS[name](m, lib)
        results.append((out is m, _describe(m), [t is old for t, old in
                                                 zip(_tensors(m), before)],
                        m[0].weight.grad is grad))
    assert results[0] == results[1]


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("method", ["double", "half", "float", "cpu", "to", "type",
                                    "to_empty", "share_memory"])
def test_a_model_that_overrides_apply_sees_every_conversion(method):
    # a model moving a cached table along with its parameters, as rotary embeddings do
    def build(lib):
        nn = lib.nn

        class Rotary(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(2, 2)
                self.cache = lib.ones(4)
                self.calls = 0

            def _apply(self, fn, recurse=True):
                self.cache = fn(self.cache)
                self.calls += 1
                return super()._apply(fn, recurse)

        return nn.Sequential(Rotary())

    args = {"to": lambda lib: (lib.float64,), "type": lambda lib: (lib.float64,)}
    kwargs = {"to_empty": {"device": "cpu"}}
    got = []
    for m, lib in zip(_both(build), (torch, mg)):
        getattr(m, method)(*args.get(method, lambda lib: ())(lib), **kwargs.get(method, {}))
        got.append((m[0].calls, _dtype(m[0].cache), _dtype(m[0].proj.weight)))
    assert got[0] == got[1]


@pytest.mark.parametrize("switch", ["overwrite", "swap", "both"])
@pytest.mark.parametrize("method", ["double", "float"])
def test_future_switches_decide_whether_parameters_are_new_objects(switch, method):
    got = []
    for m, lib in zip(_both(lambda lib: lib.nn.Linear(1, 2)), (torch, mg)):
        m.weight.grad = lib.ones(2, 1)
        weight, grad = m.weight, m.weight.grad
        future = lib.__future__
        try:
            if switch in ("overwrite", "both"):
                future.set_overwrite_module_params_on_conversion(True)
            if switch in ("swap", "both"):
                future.set_swap_module_params_on_conversion(True)
            getattr(m, method)()
        finally:
            future.set_overwrite_module_params_on_conversion(False)
            future.set_swap_module_params_on_conversion(False)
        got.append((m.weight is weight, m.weight.grad is grad, _dtype(m.weight),
                    _dtype(m.weight.grad), m.weight.is_leaf, type(m.weight).__name__,
                    [n for n, _ in m.named_parameters()]))
    assert got[0] == got[1]


@pytest.mark.parametrize("call", [
    lambda m, lib: m.to(lib.int64),
    lambda m, lib: m.to(lib.bool),
    lambda m, lib: m.to(lib.ones(1, dtype=lib.int32)),
    lambda m, lib: m.type(lib.int64),              # parameters that require grad
])
def test_non_floating_conversions_fail_as_torchs(call):
    errors, states = [], []
    for m, lib in zip(_both(lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 2),
                                                          lib.nn.BatchNorm1d(2))),
                      (torch, mg)):
        with pytest.raises(Exception) as info:
            call(m, lib)
        errors.append(info.value)
        states.append(_describe(m))                  # nothing changed
    assert isinstance(errors[1], type(errors[0]))
    assert states[0] == states[1]


TABLE_EDITS = {
    "set_parameter": lambda m, lib: m._parameters.__setitem__("extra", lib.nn.Parameter(
        lib.ones(2))),
    "set_buffer": lambda m, lib: m._buffers.__setitem__("stat", lib.zeros(3)),
    "set_module": lambda m, lib: m._modules.__setitem__("head", lib.nn.Linear(2, 1)),
    "del_parameter": lambda m, lib: m._parameters.__delitem__("bias"),
    "pop_parameter": lambda m, lib: m._parameters.pop("weight"),
    "update_parameters": lambda m, lib: m._parameters.update(
        {"extra": lib.nn.Parameter(lib.ones(1))}),
    "clear_parameters": lambda m, lib: m._parameters.clear(),
    "setdefault_buffer": lambda m, lib: m._buffers.setdefault("stat", lib.ones(1)),
    "replace_parameter": lambda m, lib: m._parameters.__setitem__(
        "weight", lib.nn.Parameter(lib.zeros(3, 2))),
}


@pytest.mark.parametrize("then", ["nothing", "pickle", "deepcopy", "double"])
@pytest.mark.parametrize("edit", list(TABLE_EDITS))
def test_members_put_straight_into_the_tables_behave_as_registered(edit, then):
    got = []
    for m, lib in zip(_both(lambda lib: lib.nn.Linear(2, 3)), (torch, mg)):
        TABLE_EDITS[edit](m, lib)
        if then == "pickle":
            m = pickle.loads(pickle.dumps(m))
        elif then == "deepcopy":
            m = copy.deepcopy(m)
        elif then == "double":
            m.double()
        names = ("weight", "bias", "extra", "stat", "head")
        attrs = [(n, hasattr(m, n) and getattr(m, n) is not None) for n in names]
        same = [getattr(m, n) is t for n, t in m.named_parameters(recurse=False)] + \
            [getattr(m, n) is t for n, t in m.named_buffers(recurse=False)] + \
            [getattr(m, n) is c for n, c in m.named_children()]
        m._parameters["late"] = lib.nn.Parameter(lib.ones(1))   # the copy's table too
        got.append((attrs, same, list(m.state_dict()), m.late.shape == (1,),
                    [n for n, _ in m.named_modules()], _describe(m)))
    assert got[0] == got[1]


def _versioned(lib, log):
    nn = lib.nn

    class Versioned(nn.Module):
        _version = 3

        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.ones(2))

        def _load_from_state_dict(self, sd, prefix, local_metadata, *args):
            log.append((prefix, dict(local_metadata)))
            if local_metadata.get("version", 0) < 3 and prefix + "old_w" in sd:
                sd[prefix + "w"] = sd.pop(prefix + "old_w")    # an older file's name
            super()._load_from_state_dict(sd, prefix, local_metadata, *args)

    return nn.Sequential(Versioned(), nn.ModuleList([Versioned(), None]), nn.BatchNorm1d(2))


def _round_trip(lib, obj, to_path=None):
    if to_path is not None:
        lib.save(obj, to_path)
        return lib.load(to_path)
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return lib.load(buffer)


@pytest.mark.parametrize("old", [False, True])
@pytest.mark.parametrize("where", ["bytes", "path"])
def test_saved_state_dicts_keep_their_metadata(where, old, tmp_path):
    got = []
    for lib in (torch, mg):
        sd = _versioned(lib, []).state_dict()
        if old:                                   # an older module version's state dict
            sd["0.old_w"] = sd.pop("0.w") * 5
            sd._metadata["0"] = {"version": 1}
            sd.pop("2.num_batches_tracked")
            sd._metadata["2"] = {"version": 1}
        path = str(tmp_path / f"{lib.__name__}.pt") if where == "path" else None
        loaded = _round_trip(lib, sd, path)
        log = []
        model = _versioned(lib, log)
        keys = model.load_state_dict(loaded)
        got.append((dict(loaded._metadata), log, list(keys.missing_keys),
                    _array(model[0].w).tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("metadata", [True, False])
@pytest.mark.parametrize("strict", [True, False])
def test_instance_norm_refuses_running_stats_of_a_versionless_state_dict(metadata, strict):
    outcomes = []
    for lib in (torch, mg):
        sd = lib.nn.InstanceNorm1d(3, track_running_stats=True).state_dict()
        if not metadata:
            sd = dict(sd)
        try:
            keys = lib.nn.InstanceNorm1d(3).load_state_dict(sd, strict=strict)
            outcomes.append(("ok", list(keys.unexpected_keys)))
        except RuntimeError as error:
            outcomes.append(("error", "Unexpected running stats buffer(s)" in str(error)))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("edit", [
    lambda keys: keys.unexpected_keys.clear(),
    lambda keys: keys.missing_keys.clear(),
    lambda keys: None,
])
@pytest.mark.parametrize("state", ["extra_key", "missing_key"])
def test_load_post_hooks_run_before_the_strict_check(edit, state):
    outcomes = []
    for m, lib in zip(_both(lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 2))),
                      (torch, mg)):
        seen = []
        m[0].register_load_state_dict_post_hook(
            lambda module, keys, seen=seen: (seen.append(list(keys.unexpected_keys)),
                                             edit(keys))[-1])
        sd = m.state_dict()
        if state == "extra_key":
            sd["0.extra"] = lib.ones(1)
        else:
            sd.pop("0.bias")
        try:
            keys = m.load_state_dict(sd)
            outcomes.append((seen, "ok", list(keys.missing_keys), list(keys.unexpected_keys)))
        except RuntimeError:
            outcomes.append((seen, "error"))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("damage", [
    lambda sd, lib: sd.pop("0.bias"),
    lambda sd, lib: sd.__setitem__("0.extra", lib.ones(1)),
    lambda sd, lib: sd.__setitem__("0.weight", lib.ones(4, 2)),
    lambda sd, lib: (sd.pop("1.running_mean"), sd.__setitem__("x", lib.ones(1)),
                     sd.__setitem__("0.bias", lib.ones(5))),
])
def test_load_state_dict_errors_say_what_torchs_say(damage):
    messages = []
    for m, lib in zip(_both(lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 3),
                                                          lib.nn.BatchNorm1d(3))),
                      (torch, mg)):
        sd = m.state_dict()
        damage(sd, lib)
        with pytest.raises(RuntimeError) as info:
            m.load_state_dict(sd)
        messages.append(str(info.value))
    for phrase in ("Missing key(s) in state_dict: ", "Unexpected key(s) in state_dict: ",
                   "size mismatch for "):
        assert (phrase in messages[0]) == (phrase in messages[1])
    assert re.findall(r'"([^"]+)"', messages[0]) == re.findall(r'"([^"]+)"', messages[1])
    assert messages[1].startswith("Error(s) in loading state_dict for Sequential:\n\t")


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.Linear(2, 2),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2)),
    lambda lib: lib.nn.Parameter(lib.ones(3)),
])
def test_deepcopied_parameters_leave_their_grad_behind(build):
    got = []
    for obj, lib in zip(_both(build), (torch, mg)):
        params = [obj] if isinstance(obj, lib.nn.Parameter) else list(obj.parameters())
        for p in params:
            p.grad = lib.ones(p.shape)
        copied = copy.deepcopy(obj)
        copies = [copied] if isinstance(copied, lib.nn.Parameter) else \
            list(copied.parameters())
        got.append([(type(c).__name__, c.grad is None, c.requires_grad, c is p,
                     _array(c).tolist() == _array(p).tolist()) for c, p in zip(copies, params)])
    assert got[0] == got[1]


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_a_pickled_optimizer_keeps_its_state(optimizer):
    got = []
    for m, lib in zip(_both(lambda lib: lib.nn.Linear(2, 2)), (torch, mg)):
        kwargs = {"momentum": 0.9} if optimizer in ("SGD", "RMSprop") else {}
        opt = getattr(lib.optim, optimizer)(m.parameters(), lr=0.1, **kwargs)
        m(lib.ones(1, 2)).sum().backward()
        opt.step()
        again = pickle.loads(pickle.dumps(opt))
        state = again.state_dict()["state"]
        got.append({k: {name: np.asarray(_array(v) if hasattr(v, "detach") else v).tolist()
                        for name, v in entries.items()} for k, entries in state.items()})
    assert got[0] == got[1]


@pytest.mark.parametrize("save_kwargs, load_kwargs", [
    ({"pickle_module": pickle}, {"pickle_module": pickle}),
    ({"pickle_protocol": 2}, {"mmap": False}),
    ({"_use_new_zipfile_serialization": True}, {"encoding": "latin1", "weights_only": False}),
    ({}, {"weights_only": True, "map_location": "cpu"}),
])
def test_save_and_load_take_torchs_keywords(save_kwargs, load_kwargs):
    got = []
    for lib in (torch, mg):
        buffer = io.BytesIO()
        lib.save({"w": lib.arange(3.0), "n": 2}, buffer, **save_kwargs)
        buffer.seek(0)
        loaded = lib.load(buffer, **load_kwargs)
        got.append((_array(loaded["w"]).tolist(), loaded["n"]))
    assert got[0] == got[1]


def _torch_objects():
    m = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    opt = torch.optim.Adam(m.parameters())
    m(torch.ones(2, 2)).sum().backward()
    opt.step()
    base = torch.arange(12.0).reshape(3, 4)
    return {
        "state_dict": m.state_dict(),
        "optimizer": opt.state_dict(),
        "views": [base, base.t(), base[1], base[:, 2:], base.reshape(-1)[3:7]],
        "dtypes": [torch.ones(2, dtype=d) for d in (torch.float64, torch.float16,
                                                    torch.int64, torch.int32, torch.int8,
                                                    torch.uint8, torch.bool,
                                                    torch.complex64)],
        "corners": [torch.tensor(2.5), torch.zeros(0, 3), torch.tensor([float("nan"),
                                                                         float("inf")])],
        "parameter": torch.nn.Parameter(torch.ones(2)),
        "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False),
        "plain": {"size": torch.Size([2, 3]), "dtype": torch.float16, "n": [1, 2.5, None,
                                                                            "s", (True,)]},
    }


def _flat(obj):
    if isinstance(obj, (torch.Tensor, mg.Tensor)):
        return [(type(obj).__name__, _dtype(obj), tuple(obj.shape), obj.requires_grad,
                 str(_array(obj).tolist()))]
    if isinstance(obj, dict):
        return [type(obj).__name__, sorted(getattr(obj, "_metadata", {}).items())] + \
            [x for k, v in obj.items() for x in [repr(k)] + _flat(v)]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__] + [x for v in obj for x in _flat(v)]
    return [str(obj).replace("torch.", "")]


@pytest.mark.parametrize("where", ["bytes", "path"])
@pytest.mark.parametrize("name", list(_torch_objects()))
def test_load_reads_files_torch_save_wrote(name, where, tmp_path):
    obj = _torch_objects()[name]
    if where == "path":
        target = str(tmp_path / "torch.pt")
        torch.save(obj, target)
        expected, got = torch.load(target), mg.load(target, map_location="cpu")
    else:
        buffer = io.BytesIO()
        torch.save(obj, buffer)
        buffer.seek(0)
        expected = torch.load(buffer)
        buffer.seek(0)
        got = mg.load(buffer)
    assert _flat(got) == _flat(expected)
    if name == "views":                              # one storage, shared as torch's
        got[0][1, 2] = -1.0
        expected[0][1, 2] = -1.0
        assert [_array(t).tolist() for t in got] == [_array(t).tolist() for t in expected]
    if name == "state_dict":
        model = mg.nn.Sequential(mg.nn.Linear(2, 3), mg.nn.BatchNorm1d(3))
        assert not model.load_state_dict(got).missing_keys


class _Payload:
    def __reduce__(self):
        return (os.getcwd, ())


@pytest.mark.parametrize("obj", [{"x": _Payload()}, [np.ones(2)]])
def test_load_refuses_torch_files_with_what_is_no_data(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(buffer)                        # torch's weights-only load refuses too
    buffer.seek(0)
    with pytest.raises(ValueError, match="weights-only"):
        mg.load(buffer)


def _rewritten(pickled=None, storage=None):
    # torch.save's zip of a tensor, its pickle or its one storage replaced
    source, target = io.BytesIO(), io.BytesIO()
    torch.save(torch.ones(4), source)
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename.endswith("data.pkl") and pickled is not None:
                data = pickled
            elif "/data/" in info.filename and storage is not None:
                data = storage
            new.writestr(info.filename, data)
    target.seek(0)
    return target


@pytest.mark.parametrize("damage", [
    {"pickled": b"\x80\x02ctorch\nFloatStorage\n)R."},        # a dtype called: no callable
    {"pickled": b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nK\x01\x85R."},  # wrong args
    {"storage": b"\0" * 8},                                    # fewer bytes than elements
])
def test_load_refuses_damaged_torch_files_naming_them(damage):
    buffer = _rewritten(**damage)
    with pytest.raises((pickle.UnpicklingError, TypeError, RuntimeError)):
        torch.load(buffer)                        # torch refuses each too, in its classes
    buffer.seek(0)
    with pytest.raises(ValueError, match=r"^mg\.load: the BytesIO: "):
        mg.load(buffer)


@pytest.mark.parametrize("cls, args, kwargs", [
    ("Linear", (2, 3), {"bias": False}), ("Conv2d", (2, 3, 3), {"bias": False}),
    ("ConvTranspose1d", (2, 3, 3), {"bias": False}), ("Bilinear", (2, 2, 3), {"bias": False}),
    ("LayerNorm", (4,), {"elementwise_affine": False}), ("LayerNorm", (4,), {"bias": False}),
    ("RMSNorm", (4,), {"elementwise_affine": False}), ("GroupNorm", (2, 4), {"affine": False}),
    ("BatchNorm1d", (3,), {"affine": False, "track_running_stats": False}),
    ("InstanceNorm1d", (3,), {}), ("LazyLinear", (3,), {"bias": False}),
    ("LazyConv2d", (3, 3), {"bias": False}),
])
def test_absent_parameters_and_buffers_are_registered_as_none(cls, args, kwargs):
    # torch registers a missing bias (or running statistic) as None: the name stays a
    # parameter's (a plain Tensor is refused) or a buffer's (a Tensor assigned is saved)
    got = []
    for m, lib in zip(_both(lambda lib: getattr(lib.nn, cls)(*args, **kwargs)), (torch, mg)):
        row = [list(m._parameters), list(m._buffers), list(m.state_dict())]
        for name in [n for n, p in m._parameters.items() if p is None]:
            with pytest.raises(TypeError):
                setattr(m, name, lib.ones(3))
        for name in [n for n, b in m._buffers.items() if b is None]:
            setattr(m, name, lib.ones(3))
        row.append(list(m.state_dict()))
        got.append(row)
    assert got[0] == got[1]


@pytest.mark.parametrize("call", [
    lambda m, lib: m.get_submodule(0),
    lambda m, lib: m.get_submodule(None),
    lambda m, lib: m.requires_grad_(1),
    lambda m, lib: m.requires_grad_("no"),
    lambda m, lib: m.train(1),
])
def test_bad_arguments_of_module_methods_raise_torchs_class(call):
    errors, states = [], []
    for m, lib in zip(_both(lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 2))), (torch, mg)):
        with pytest.raises(Exception) as info:
            call(m, lib)
        errors.append(info.value)
        states.append(_describe(m) + [m.training])
    assert isinstance(errors[1], type(errors[0]))
    assert states[0] == states[1]


@pytest.mark.parametrize("kind", ["parameter", "module", "buffer"])
@pytest.mark.parametrize("replace", [False, True])
def test_global_registration_hooks_see_every_registration(kind, replace):
    got = []
    for lib in (torch, mg):
        calls, returned = [], set()

        def hook(module, name, value, lib=lib, calls=calls, returned=returned):
            calls.append((type(module).__name__, name, type(value).__name__))
            if not replace:
                return None
            out = lib.nn.Identity() if kind == "module" else copy.deepcopy(value)
            returned.add(id(out))
            return out

        register = getattr(lib.nn.modules.module, f"register_module_{kind}_registration_hook")
        handle = register(hook)
        try:
            model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
            model.register_buffer("steps", lib.ones(1))
            model.extra = lib.nn.Parameter(lib.ones(1))
            model.steps = lib.ones(2)
        finally:
            handle.remove()
        lib.nn.Linear(1, 1)                           # removed: not called again
        members = [*model.named_parameters(), *model.named_buffers(), *model.named_modules()]
        got.append((calls, [(n, id(t) in returned) for n, t in members], repr(model)))
    assert got[0] == got[1]

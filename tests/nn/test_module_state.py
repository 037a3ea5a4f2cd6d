"""Module-state semantics copied from torch.nn: load_state_dict's _IncompatibleKeys,
non-persistent buffers, Parameter sharing its data's memory, torch's attribute-assignment
rules, casts that change nothing returning the same tensor (and keeping a model's arrays),
and a BatchNorm state dict without num_batches_tracked; each beside torch."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm import nn


def pair(make):
    """The same module built from each library: ``make(nn)``."""
    return make(nn), make(torch.nn)


# ----- load_state_dict's result -------------------------------------------------------------
def test_load_state_dict_returns_incompatible_keys_as_torch():
    ours, theirs = pair(lambda lib: lib.Linear(2, 3))
    result, expected = ours.load_state_dict(ours.state_dict()), \
        theirs.load_state_dict(theirs.state_dict())
    assert repr(result) == repr(expected) == str(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    partial = {"weight": ours.weight.detach(), "extra": np.ones(1)}
    result = ours.load_state_dict(partial, strict=False)
    expected = theirs.load_state_dict({"weight": theirs.weight.detach(),
                                       "extra": torch.ones(1)}, strict=False)
    assert repr(result) == repr(expected) == (
        "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['extra'])")
    missing, unexpected = result                         # unpacks as the two lists
    assert (missing, unexpected) == (result.missing_keys, result.unexpected_keys) == (
        expected.missing_keys, expected.unexpected_keys)
    assert result[0] is missing and isinstance(result, tuple)


# ----- non-persistent buffers ---------------------------------------------------------------
def with_buffers(lib, tensor):
    module = lib.Linear(2, 2)
    module.register_buffer("mask", tensor(np.ones(2)), persistent=False)
    module.register_buffer("scale", tensor(np.full(2, 3.0)))
    return module


def test_a_non_persistent_buffer_is_a_buffer_outside_the_state_dict():
    ours = with_buffers(nn, mg.tensor)
    theirs = with_buffers(torch.nn, torch.tensor)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "bias", "scale"]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()] == [
        "mask", "scale"]
    # a state dict without it loads strictly; one with it has an unexpected key
    assert repr(ours.load_state_dict(ours.state_dict())) == "<All keys matched successfully>"
    state = {**ours.state_dict(), "mask": np.zeros(2)}
    with pytest.raises(ValueError, match=r'Unexpected key\(s\) in state_dict: "mask"\.'):
        ours.load_state_dict(state)
    result = ours.load_state_dict(state, strict=False)
    expected = theirs.load_state_dict({**theirs.state_dict(), "mask": torch.zeros(2)},
                                      strict=False)
    assert result.unexpected_keys == expected.unexpected_keys == ["mask"]
    assert ours.mask.tolist() == [1.0, 1.0]                     # not loaded
    ours.to(dtype="float32")                                    # moved and cast all the same
    assert ours.mask.dtype == np.float32


def test_registering_again_as_persistent_puts_it_back_and_del_forgets_it():
    module = with_buffers(nn, mg.tensor)
    module.register_buffer("mask", mg.tensor(np.zeros(2)))
    assert "mask" in module.state_dict()
    module.register_buffer("mask", None, persistent=False)      # None: registered, not listed
    assert "mask" not in module.state_dict() and "mask" in module._buffers
    module.mask = mg.tensor(np.ones(2))                        # still a non-persistent buffer
    assert [n for n, _ in module.named_buffers()] == ["mask", "scale"]
    assert "mask" not in module.state_dict()
    del module.mask
    module.mask = mg.tensor(np.ones(2))                        # a plain attribute now
    assert [n for n, _ in module.named_buffers()] == ["scale"]


def test_register_buffer_refuses_bad_names_and_other_attributes():
    module = nn.Linear(2, 2)
    with pytest.raises(KeyError, match="already exists"):
        module.register_buffer("weight", mg.tensor(np.ones(2)))
    with pytest.raises(KeyError, match="without '.'"):
        module.register_buffer("a.b", mg.tensor(np.ones(2)))
    with pytest.raises(TypeError, match="must be a Tensor or None"):
        module.register_buffer("b", [1.0])
    with pytest.raises(TypeError, match="cannot assign 'list' as buffer 'scale'"):
        with_buffers(nn, mg.tensor).scale = [1.0]


# ----- Parameter shares its data ------------------------------------------------------------
def test_parameter_shares_a_tensors_memory_and_version_counter_as_torch():
    for lib, make in ((nn, mg.tensor), (torch.nn, torch.tensor)):
        t = make(np.ones(3))
        p = lib.Parameter(t)
        t[0] = 7.0
        with (mg if lib is nn else torch).no_grad():
            p[1] = 5.0
        assert p.tolist() == t.tolist() == [7.0, 5.0, 1.0]
        assert p._version == t._version == 2
        assert p.is_leaf and p.requires_grad and not t.requires_grad


def test_parameter_of_a_non_leaf_is_a_leaf_on_the_same_memory():
    x = mg.tensor(np.ones(2), requires_grad=True)
    y = x * 2.0
    p = nn.Parameter(y)
    assert p.is_leaf and p.grad_fn is None and np.shares_memory(p.detach().numpy(),
                                                                  y.detach().numpy())


def test_parameter_of_a_numpy_array_shares_it_as_torch_from_numpy():
    a = np.ones(3, np.float32)
    p, q = nn.Parameter(a), torch.nn.Parameter(torch.from_numpy(a))
    a[0] = 5.0
    assert p.tolist() == q.tolist() == [5.0, 1.0, 1.0]
    assert p.dtype == np.float32 and q.dtype == torch.float32
    b = np.ones(2)                                              # float64 stays float64
    assert nn.Parameter(b).dtype == np.float64 and np.shares_memory(
        nn.Parameter(b).detach().numpy(), b)


def test_parameter_copies_for_another_dtype_a_read_only_array_or_a_list():
    a = np.ones(3)
    assert not np.shares_memory(nn.Parameter(a, dtype="float32").detach().numpy(), a)
    frozen = np.ones(3)
    frozen.flags.writeable = False
    p = nn.Parameter(frozen)                                    # torch only warns here
    p.detach()[0] = 2.0                                         # its own, writeable memory
    assert frozen[0] == 1.0
    assert nn.Parameter([1.0, 2.0]).dtype == mg.get_default_dtype()
    assert nn.Parameter().shape == (0,)


def test_parameter_dict_wraps_a_tensor_sharing_its_memory():
    t = mg.tensor(np.zeros(2))
    params = nn.ParameterDict()
    params["w"] = t
    t[0] = 4.0
    assert params["w"].tolist() == [4.0, 0.0]


# ----- assignment rules ---------------------------------------------------------------------
def test_assigning_a_plain_tensor_to_a_parameter_is_torchs_type_error():
    ours, theirs = pair(lambda lib: lib.Linear(2, 3))
    with pytest.raises(TypeError) as torch_error:
        theirs.weight = torch.zeros(3, 2)
    with pytest.raises(TypeError) as error:
        ours.weight = mg.tensor(np.zeros((3, 2)))
    assert str(error.value) == ("cannot assign 'Tensor' as parameter 'weight' "
                                "(torch.nn.Parameter or None expected)")
    assert str(torch_error.value).endswith("as parameter 'weight' (torch.nn.Parameter or None "
                                           "expected)")
    assert isinstance(ours.weight, nn.Parameter) and len(ours.parameters()) == 2


def test_none_keeps_the_name_registered_and_a_parameter_replaces_it():
    ours, theirs = pair(lambda lib: lib.Linear(2, 3))
    ours.weight, theirs.weight = None, None
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias"]
    assert "weight" in ours._parameters and "weight" in theirs._parameters
    ours.weight = nn.Parameter(mg.tensor(np.ones((3, 2))))
    assert [n for n, _ in ours.named_parameters()] == ["weight", "bias"]


def test_a_sub_module_name_takes_a_module_or_none():
    model = nn.Sequential(nn.Linear(1, 1))
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module '0' "
                                        r"\(torch.nn.Module or None expected\)"):
        setattr(model, "0", 3)
    setattr(model, "0", None)
    assert list(model.state_dict()) == []


# ----- casts that change nothing ------------------------------------------------------------
@pytest.mark.parametrize("dtype, cast", [("float64", "double"), ("float32", "float"),
                                         ("float16", "half"), ("int64", "long")])
def test_a_cast_to_the_same_dtype_returns_the_tensor_itself_as_torch(dtype, cast):
    x = mg.tensor(np.ones(2, dtype))
    xt = torch.ones(2, dtype=getattr(torch, dtype))
    assert getattr(x, cast)() is x and getattr(xt, cast)() is xt
    assert x.to(dtype) is x and x.to(dtype=dtype) is x and x.type_as(x) is x
    assert x.astype(dtype) is not x                    # NumPy's astype copies by default
    assert x.astype(dtype, copy=False) is x


def test_a_no_op_cast_keeps_the_recorded_graph():
    x = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x.double()
    assert y is x
    (y * y).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    z = (x * 3.0).float()                                # a real cast: in the graph
    assert z.dtype == np.float32 and z.grad_fn is not None


def test_a_module_cast_that_changes_nothing_keeps_its_arrays():
    model = nn.Linear(2, 2, dtype="float64")
    state = model.state_dict()
    arrays = [p._array for p in model.parameters()]
    versions = [p._version for p in model.parameters()]
    assert model.double() is model and model.to("cpu", "float64") is model
    assert [p._array for p in model.parameters()] == arrays                # the same objects
    assert all(a is b for a, b in zip((p._array for p in model.parameters()), arrays))
    assert [p._version for p in model.parameters()] == versions
    with mg.no_grad():
        state["weight"].fill_(3.0)                       # the state dict is still live
    assert (model.weight.numpy(force=True) == 3.0).all()
    model.float()                                        # a real change: new arrays
    assert model.weight.dtype == np.float32 and model.weight._array is not arrays[0]


# ----- BatchNorm's optional counter ---------------------------------------------------------
def test_batch_norm_loads_a_state_dict_without_num_batches_tracked():
    ours, theirs = pair(lambda lib: lib.BatchNorm1d(3))
    state = {k: v for k, v in ours.state_dict().items() if k != "num_batches_tracked"}
    torch_state = {k: v for k, v in theirs.state_dict().items() if k != "num_batches_tracked"}
    result, expected = ours.load_state_dict(state), theirs.load_state_dict(torch_state)
    assert repr(result) == repr(expected) == "<All keys matched successfully>"
    assert int(ours.num_batches_tracked.item()) == int(theirs.num_batches_tracked) == 0
    ours(mg.tensor(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)))
    ours.load_state_dict(state)                          # the counter keeps its value
    assert int(ours.num_batches_tracked.item()) == 1
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    nested = {k: v for k, v in model.state_dict().items() if k != "1.num_batches_tracked"}
    assert model.load_state_dict(nested).missing_keys == []
    with pytest.raises(ValueError, match=r'Missing key\(s\) in state_dict: "1.running_mean"\.'):
        model.load_state_dict({k: v for k, v in nested.items() if k != "1.running_mean"})

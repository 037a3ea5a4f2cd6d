"""PyTorch's own error inputs (``op_db`` OpInfos, ``error_inputs``) run through this package:
for each op of the sweeps in tests/engine/test_opinfo_generic.py, each bad call PyTorch's
suite checks is converted as a user writes it (tests/helpers/opinfo_generic.py), keeping
which tensors share memory (an ``out`` that is an input, or a view of one, or expanded), and
made here (before torch's own call, which may resize an ``out`` before it refuses). It must
raise an instance of torch's exception class (the message may differ), and leave every
tensor it was given as it was: values, shape, dtype and version.

A bad call torch itself accepts is not ours to test. The cases this package answers
otherwise, on purpose or by a limit of NumPy, are listed in ``EXPECTED`` with the reason;
each is checked still to differ, so that a fix shows up as a failure here.
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

from opinfo_generic import describe, op_table, resolve, tensors_of, to_mg  # noqa: E402
from test_opinfo_generic import OPS_A_TO_L, OPS_FUNCTIONAL, OPS_M_TO_Z  # noqa: E402

import microgradnorm as mg  # noqa: E402

pytestmark = pytest.mark.slow          # torch's tables take seconds to import

_NUMBERS = "maximum/minimum take a Python number here (docs/pytorch.md: lenient)"
_NDIM = "NumPy holds at most 64 dims: the 65-dim input cannot be made"
_META = "a tensor on the meta device, which has no counterpart here"
_UNBOUND = ("the unbound method called with a Python number as self (Tensor.__radd__(2, t)): "
            "Python never makes that call (2 + t is t.__radd__(2))")

# (name, variant, index of the error input): why this package differs from torch there
EXPECTED = {
    ("__radd__", "", 0): _UNBOUND, ("__radd__", "", 1): _UNBOUND,
    ("__rmul__", "", 0): _UNBOUND, ("__rmul__", "", 1): _UNBOUND,
    ("amax", "", 1): _NDIM, ("amax", "", 2): _NDIM,
    ("amin", "", 1): _NDIM, ("amin", "", 2): _NDIM,
    ("aminmax", "", 1): _NDIM, ("aminmax", "", 2): _NDIM,
    ("gradient", "", 3): _META, ("gradient", "", 10): _META, ("gradient", "", 17): _META,
    ("maximum", "", 0): _NUMBERS, ("maximum", "", 1): _NUMBERS, ("maximum", "", 2): _NUMBERS,
    ("minimum", "", 0): _NUMBERS, ("minimum", "", 1): _NUMBERS, ("minimum", "", 2): _NUMBERS,
}


def _converter():
    """``to_mg`` that keeps memory shared where torch's tensors share it: a view is made
    here through its base's memory, read-only where a stride is 0 (an expanded tensor's
    elements share memory), and the same tensor object gives the same Tensor here."""
    made = {}

    def convert(value):
        if isinstance(value, torch.Tensor):
            if id(value) not in made:
                made[id(value)] = (value, _tensor(value, convert))       # (value: kept alive)
            return made[id(value)][1]
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(convert(v) for v in value)
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        return to_mg(value)
    return convert


def _tensor(value, convert):
    if value.dtype == torch.bfloat16 or value.is_conj() or value.is_neg() \
            or value.device.type != "cpu":
        return to_mg(value)
    base = value._base
    if base is None or base.dtype != value.dtype or not base.is_contiguous():
        array = value.detach().numpy().copy()      # (torch's memory: a later call resizes it)
    else:                   # a view: of the memory of its base, as a user's view would be
        memory = convert(base).detach().numpy().reshape(-1)
        array = np.lib.stride_tricks.as_strided(
            memory[value.storage_offset() - base.storage_offset():], tuple(value.shape),
            tuple(s * memory.itemsize for s in value.stride()))
    if any(s == 0 for s, n in zip(value.stride(), value.shape) if n > 1):
        array = array.view()
        array.flags.writeable = False
    out = mg.from_numpy(array)
    return out.requires_grad_(True) if value.requires_grad else out


def _state(tensors):
    # the values of a tensor of up to 2^20 elements (a larger one: its version only)
    return [(t.detach().numpy().copy() if t.numel() <= 1 << 20 else None, t.dtype,
             t._version, tuple(t.shape)) for t in tensors]


def _outcome(function, error_input, convert):
    """'' where ours raises torch's class and changes nothing, else what happened."""
    sample = error_input.sample_input
    args = convert((sample.input, sample.args, sample.kwargs))
    ours = [t for t in tensors_of(args) if isinstance(t, mg.Tensor)]
    before = _state(ours)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            function(args[0], *args[1], **args[2])
    except Exception as error:                # noqa: BLE001 (any class: checked below)
        if not isinstance(error, error_input.error_type):
            return f"raised {type(error).__name__}: {str(error)[:200]}"
    else:
        return "raised nothing"
    for i, (t, (values, *rest)) in enumerate(zip(ours, before)):
        if rest != [t.dtype, t._version, tuple(t.shape)] or values is not None \
                and not np.array_equal(values, t.detach().numpy(), equal_nan=True):
            return f"the failed call changed tensor {i} of its arguments"
    return ""


def _torch_refuses(op, error_input):
    sample = error_input.sample_input
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op(sample.input, *sample.args, **sample.kwargs)
    except error_input.error_type:
        return True
    except Exception:               # noqa: BLE001 (another class: torch's own table is off)
        return False
    return False


@pytest.mark.parametrize("key", OPS_A_TO_L + OPS_M_TO_Z + OPS_FUNCTIONAL,
                         ids=lambda k: ".".join(filter(None, k)))
def test_error_inputs_raise_pytorchs_class(key):
    op = op_table()[key]
    if op.error_inputs_func is None:
        pytest.skip(f"torch gives {key[0]} no error inputs")
    function = resolve(op)
    failures, checked = [], 0
    for i, error_input in enumerate(op.error_inputs("cpu")):
        try:            # ours first: torch's failed call may resize its out before refusing
            outcome = _outcome(function, error_input, _converter())
        except Exception as error:      # noqa: BLE001 (the call cannot be written here)
            outcome = f"cannot be made here: {type(error).__name__}: {str(error)[:100]}"
        if not _torch_refuses(op, error_input):
            continue                # torch accepts its own bad call: not ours to test
        expected = EXPECTED.get((*key, i))
        if expected is not None:
            if not outcome:
                failures.append(f"error input {i} now raises torch's class: drop it from "
                                f"EXPECTED ({expected})")
            continue
        checked += 1
        if outcome:
            failures.append(f"error input {i} {describe(error_input.sample_input)}: wants "
                            f"{error_input.error_type.__name__}, {outcome}")
    assert not failures, "\n".join(failures)


def test_expected_differences_name_real_error_inputs():
    for name, variant, index in EXPECTED:
        assert (name, variant) in OPS_A_TO_L + OPS_M_TO_Z + OPS_FUNCTIONAL, name
        count = sum(1 for _ in op_table()[name, variant].error_inputs("cpu"))
        assert index < count, (name, index, count)



def _raised(call):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except Exception as error:                # noqa: BLE001 (the class is compared after)
        return error
    return None


# bad calls of the kinds above that torch's error inputs leave out, each given its library
# and a tensor that the refused call must leave as it was
BEYOND_THE_TABLES = {
    "add_expanded_out": lambda lib, a: lib.add(lib.ones(3, 3), 1, out=a.expand(3, 3)),
    "mul_expanded_out_resized": lambda lib, a: lib.mul(lib.ones(2), 2, out=a.expand(3, 3)),
    "stack_of_a_tensor": lambda lib, a: lib.stack(a),
    "stack_of_a_list": lambda lib, a: lib.stack([a, [1.0, 2.0, 3.0]]),
}


@pytest.mark.parametrize("name", sorted(BEYOND_THE_TABLES))
def test_bad_calls_beyond_the_tables_raise_pytorchs_class(name):
    call = BEYOND_THE_TABLES[name]
    theirs = _raised(lambda: call(torch, torch.zeros(3)))
    a = mg.zeros(3)
    ours = _raised(lambda: call(mg, a))
    assert theirs is not None and isinstance(ours, type(theirs)), (ours, theirs)
    np.testing.assert_array_equal(a.numpy(), [0.0, 0.0, 0.0])       # nothing written
    assert a._version == 0

"""torch's float8 dtypes against PyTorch's CPU: conversions into and out of them (rounding,
ties, subnormals, e4m3fn's saturation, e5m2's inf, NaN, e8m0fnu's sign and zero) byte for
byte over hypothesis-drawn and corner values, the dtype's facts (itemsize, finfo,
is_floating_point), copies, cat, view between 1-byte dtypes, and torch's refusal to
promote a float8 dtype beside another."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg
from microgradnorm import dtypes

pytestmark = pytest.mark.skipif(dtypes.ml_dtypes is None, reason="needs ml_dtypes")
NAMES = dtypes.FLOAT8_NAMES
CORNERS = [0.0, -0.0, 1.0, -1.0, 448.0, 449.0, 464.0, 465.0, 1000.0, 57344.0, 61440.0, 1e6,
           float("inf"), -float("inf"), float("nan"), 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11,
           1.0625, 1.125, 1.1875, 2.0 ** -127, 3e38, 1e-45, -2.5]


def bytes_of(t):
    return t.view(mg.uint8 if isinstance(t, mg.Tensor) else torch.uint8).numpy()


def check_into(values, name, source):
    ours = mg.tensor(np.asarray(values, source)).to(getattr(mg, name))
    theirs = torch.from_numpy(np.asarray(values, source)).to(getattr(torch, name))
    np.testing.assert_array_equal(bytes_of(ours), bytes_of(theirs))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("source", ["float32", "float64", "float16"])
def test_corner_values_convert_as_torchs(name, source):
    with np.errstate(over="ignore"):
        check_into(CORNERS, name, source)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=1,
                       max_size=40))
def test_drawn_float32_values_convert_as_torchs(name, values):
    check_into(values, name, "float32")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("target", ["float32", "float64", "float16", "bfloat16", "int64",
                                    "int32", "int16", "uint8", "int8", "uint16", "uint32",
                                    "uint64", "bool"])
def test_every_byte_converts_out_as_torchs(name, target):
    every = np.arange(256, dtype=np.uint8)
    ours = mg.tensor(every).view(getattr(mg, name)).to(dtypes.as_dtype(target))
    theirs = torch.from_numpy(every).view(getattr(torch, name)).to(getattr(torch, target))
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


@pytest.mark.parametrize("name", NAMES)
def test_the_dtypes_facts_are_torchs(name):
    ours, theirs = getattr(mg, name), getattr(torch, name)
    assert ours.itemsize == theirs.itemsize
    assert mg.zeros(2, dtype=ours).is_floating_point() == theirs.is_floating_point
    assert repr(mg.finfo(ours)) == repr(torch.finfo(theirs))
    assert dtypes.torch_name(ours) == str(torch.empty(0, dtype=theirs).to(theirs).dtype) \
        .replace("torch.f", "F")
    assert mg.empty(3, dtype=ours).dtype == ours and mg.zeros(3, dtype=ours).dtype == ours


@pytest.mark.parametrize("name", NAMES)
def test_tensor_copy_cat_index_and_view_as_torchs(name):
    data = [1.0, 2.0, 500.0, -0.25]
    ours = mg.tensor(data, dtype=getattr(mg, name))
    theirs = torch.tensor(data, dtype=getattr(torch, name))
    np.testing.assert_array_equal(bytes_of(ours), bytes_of(theirs))
    np.testing.assert_array_equal(bytes_of(mg.cat([ours, ours[1:]])),
                                  bytes_of(torch.cat([theirs, theirs[1:]])))
    np.testing.assert_array_equal(mg.zeros(4).copy_(ours).numpy(),
                                  torch.zeros(4).copy_(theirs).numpy())
    np.testing.assert_array_equal(ours.view(mg.int8).numpy(), theirs.view(torch.int8).numpy())
    np.testing.assert_array_equal((ours == ours).numpy(), (theirs == theirs).numpy())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("other", ["float32", "float64", "float16", "int64", "bool"] + list(NAMES))
def test_promotion_refused_as_torchs(name, other):
    try:
        theirs = torch.promote_types(getattr(torch, name), getattr(torch, other))
    except RuntimeError:
        with pytest.raises(RuntimeError, match="Promotion for Float8"):
            mg.promote_types(getattr(mg, name), dtypes.as_dtype(other))
        return
    assert str(mg.promote_types(getattr(mg, name), dtypes.as_dtype(other))) == str(theirs)


# ops torch's CPU refuses on float8 and that refuse here too (on half precision's paths, free
# for float32 and float64), and ops both compute; e5m2's NumPy kind is "f", the others' "V",
# so each is taken by every dtype (docs/pytorch.md lists the refused ops that compute here)
REFUSED_HERE_TOO = {
    "sum": lambda m, t: t.sum(), "mean": lambda m, t: t.mean(0),
    "sigmoid": lambda m, t: t.sigmoid(), "logsumexp": lambda m, t: t.logsumexp(0),
    "rand": lambda m, t: m.rand(3, dtype=t.dtype), "normal_": lambda m, t: t.clone().normal_(),
    "uniform_": lambda m, t: t.clone().uniform_(),
    "exponential_": lambda m, t: t.clone().exponential_(),
    "nextafter": lambda m, t: m.nextafter(t, t), "random_": lambda m, t: t.clone().random_(),
}
COMPUTED_BY_BOTH = {
    "mul": lambda m, t: t * t, "eq": lambda m, t: t == t, "ne": lambda m, t: t != t,
    "clone": lambda m, t: t.clone(), "cat": lambda m, t: m.cat([t, t]),
    "fill_": lambda m, t: t.clone().fill_(1.0), "index": lambda m, t: t[1:],
    "tolist": lambda m, t: t.tolist(), "to_float": lambda m, t: t.float(),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("op", sorted(REFUSED_HERE_TOO))
def test_ops_torch_refuses_are_refused(name, op):
    theirs = torch.tensor([[1.0, 2.0], [0.5, 4.0]]).to(getattr(torch, name))
    with pytest.raises(NotImplementedError):
        REFUSED_HERE_TOO[op](torch, theirs)
    ours = mg.tensor([[1.0, 2.0], [0.5, 4.0]]).to(getattr(mg, name))
    with pytest.raises(NotImplementedError, match="not implemented for"):
        REFUSED_HERE_TOO[op](mg, ours)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("op", sorted(COMPUTED_BY_BOTH))
def test_ops_torch_computes_compute(name, op):
    values = [[1.0, 2.0], [0.5, 4.0]]
    theirs = COMPUTED_BY_BOTH[op](torch, torch.tensor(values).to(getattr(torch, name)))
    ours = COMPUTED_BY_BOTH[op](mg, mg.tensor(values).to(getattr(mg, name)))
    if isinstance(theirs, list):
        assert ours == theirs
    else:
        np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())

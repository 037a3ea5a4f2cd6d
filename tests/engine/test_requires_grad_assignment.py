"""``t.requires_grad = flag`` assigned, ``detach()`` and ``.data`` of inference tensors, and
``Module.to()`` inside and outside ``inference_mode``: each against torch, run side by side."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn

torch = pytest.importorskip("torch")


def outcome(call):
    """("ok", value) or the exception's class: what a call gave, comparable across libraries."""
    try:
        return "ok", call()
    except Exception as error:            # noqa: BLE001 (any class is compared)
        return "raised", error


def same_outcome(ours, theirs):
    kind, value = ours
    torch_kind, torch_value = theirs
    assert kind == torch_kind, (ours, theirs)
    if kind == "raised":
        assert isinstance(value, type(torch_value)), (ours, theirs)
    return value, torch_value


def assign(tensor, flag):
    def call():
        tensor.requires_grad = flag
        return tensor.requires_grad
    return call


def pairs():
    """(name, ours, torch's) tensors in the cases torch's setter distinguishes."""
    values = np.array([1.0, -2.0, 3.0])
    a, ta = mg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    plain, tplain = mg.tensor(values), torch.tensor(values)
    yield "leaf", a, ta
    yield "leaf without grad", plain, tplain
    yield "non-leaf", a * 2, ta * 2
    yield "view of a leaf", a[:2], ta[:2]
    yield "view of a leaf without grad", plain[:2], tplain[:2]
    yield "int64", mg.tensor([1, 2]), torch.tensor([1, 2])
    yield "bool", mg.tensor([True]), torch.tensor([True])
    yield "complex", mg.tensor(values.astype(np.complex64)), torch.tensor(
        values.astype(np.complex64))
    yield "parameter", nn.Parameter(mg.tensor(values)), torch.nn.Parameter(torch.tensor(values))
    yield "detached non-leaf", (a * 2).detach(), (ta * 2).detach()


@pytest.mark.parametrize("flag", [True, False, 1, 0, None, np.bool_(True)],
                         ids=["True", "False", "1", "0", "None", "np.bool_"])
@pytest.mark.parametrize("case", [name for name, _, _ in pairs()])
def test_assignment_matches_torch(case, flag):
    _, ours, theirs = next(p for p in pairs() if p[0] == case)
    before = ours.requires_grad
    got, expected = same_outcome(outcome(assign(ours, flag)), outcome(assign(theirs, flag)))
    if isinstance(got, Exception):
        assert ours.requires_grad is before          # a refused assignment changes nothing
    else:
        assert got is expected
        assert ours.requires_grad is theirs.requires_grad


def test_leaf_that_stops_requiring_grad_records_nothing():
    a, ta = mg.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    a.requires_grad, ta.requires_grad = False, False
    assert (a * 2).requires_grad is (ta * 2).requires_grad
    a.requires_grad, ta.requires_grad = True, True
    (a * a).sum().backward()
    (ta * ta).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())


def test_non_leaf_refusal_hints_at_detach_only_for_false():
    b, tb = mg.ones(2, requires_grad=True) * 2, torch.ones(2, requires_grad=True) * 2
    for flag in (True, False):
        ours, theirs = outcome(assign(b, flag)), outcome(assign(tb, flag))
        same_outcome(ours, theirs)
        assert ("detach" in str(ours[1])) is ("detach" in str(theirs[1]))


def inference_pair():
    with mg.inference_mode():
        ours = mg.ones(3)
    with torch.inference_mode():
        theirs = torch.ones(3)
    return ours, theirs


@pytest.mark.parametrize("flag", [True, False])
def test_inference_tensor_outside_the_mode(flag):
    ours, theirs = inference_pair()
    got, expected = same_outcome(outcome(assign(ours, flag)), outcome(assign(theirs, flag)))
    assert ours.requires_grad is theirs.requires_grad


def test_inference_tensor_inside_the_mode():
    with mg.inference_mode():
        ours = mg.ones(3)
        got = outcome(assign(ours, True))
    with torch.inference_mode():
        theirs = torch.ones(3)
        expected = outcome(assign(theirs, True))
    same_outcome(got, expected)
    assert ours.requires_grad is theirs.requires_grad


def written(tensor):
    """What an in-place write into ``tensor`` gives: the outcome, then the values and the
    version (or the refusal of ``_version``) of it."""
    result = outcome(lambda: tensor.add_(1))
    return result, outcome(lambda: tensor._version)


@pytest.mark.parametrize("how", ["detach", "data"])
@pytest.mark.parametrize("taken_inside", [False, True], ids=["taken outside", "taken inside"])
def test_detach_and_data_of_an_inference_tensor(how, taken_inside):
    ours, theirs = inference_pair()
    take = (lambda t: t.detach()) if how == "detach" else (lambda t: t.data)
    if taken_inside:
        with mg.inference_mode():
            d = take(ours)
        with torch.inference_mode():
            td = take(theirs)
    else:
        d, td = take(ours), take(theirs)
    assert d.is_inference() is td.is_inference()
    assert outcome(lambda: d._version)[0] == outcome(lambda: td._version)[0]
    (got, got_version), (expected, expected_version) = written(d), written(td)
    same_outcome(got, expected)
    got_v, expected_v = same_outcome(got_version, expected_version)
    if got_version[0] == "ok":
        assert got_v == expected_v
    if got[0] == "ok":              # (torch writes before it refuses; refused here unwritten)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())     # the memory is shared
    for check in (lambda t: t.requires_grad_(True), lambda t: t.detach()._version):
        same_outcome(outcome(lambda c=check: c(d)), outcome(lambda c=check: c(td)))


def test_detach_of_an_inference_tensor_is_not_saved_for_backward():
    ours, theirs = inference_pair()
    w, tw = mg.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    same_outcome(outcome(lambda: w * ours.detach()), outcome(lambda: tw * theirs.detach()))


def test_data_of_an_ordinary_tensor_inside_the_mode():
    a, ta = mg.ones(3), torch.ones(3)
    with mg.inference_mode():
        d, dd = a.data, a.detach()
    with torch.inference_mode():
        td, tdd = ta.data, ta.detach()
    assert (d.is_inference(), dd.is_inference()) == (td.is_inference(), tdd.is_inference())
    same_outcome(outcome(lambda: d.add_(1)), outcome(lambda: td.add_(1)))
    np.testing.assert_array_equal(a.numpy(), ta.numpy())


CONVERSIONS = {
    "double": lambda m: m.double(), "float": lambda m: m.float(), "half": lambda m: m.half(),
    "to float64": lambda m: m.to(dtype="float64"), "to float32": lambda m: m.to("float32"),
    "to cpu": lambda m: m.to("cpu"),
}
TORCH_CONVERSIONS = {
    "double": lambda m: m.double(), "float": lambda m: m.float(), "half": lambda m: m.half(),
    "to float64": lambda m: m.to(dtype=torch.float64),
    "to float32": lambda m: m.to(torch.float32), "to cpu": lambda m: m.to("cpu"),
}


def linear(made_inside, library):
    if made_inside:
        with library.inference_mode():
            return library.nn.Linear(2, 2)
    return library.nn.Linear(2, 2)


@pytest.mark.parametrize("conversion", list(CONVERSIONS))
@pytest.mark.parametrize("converted_inside", [False, True], ids=["outside", "inside"])
@pytest.mark.parametrize("made_inside", [False, True], ids=["ordinary", "inference"])
def test_module_to_follows_the_mode(made_inside, converted_inside, conversion):
    model, tmodel = linear(made_inside, mg), linear(made_inside, torch)
    weight, tweight = model.weight, tmodel.weight
    for m, library, convert in ((model, mg, CONVERSIONS[conversion]),
                                (tmodel, torch, TORCH_CONVERSIONS[conversion])):
        if converted_inside:
            with library.inference_mode():
                convert(m)
        else:
            convert(m)
    assert model.weight is weight and tmodel.weight is tweight
    assert str(model.weight.dtype) == str(tmodel.weight.dtype)
    assert model.weight.is_inference() is tmodel.weight.is_inference()
    assert model.weight.requires_grad is tmodel.weight.requires_grad
    if made_inside == converted_inside or not made_inside:
        # (torch's inference parameter converted outside the mode is no inference tensor
        # that refuses all the same: not followed here)
        with mg.no_grad():
            got = outcome(lambda: model.weight.mul_(2))
        with torch.no_grad():
            expected = outcome(lambda: tmodel.weight.mul_(2))
        same_outcome(got, expected)
        same_outcome(outcome(lambda: model.weight._version),
                     outcome(lambda: tmodel.weight._version))
        x = mg.ones(1, 2, dtype=model.weight.dtype)
        tx = torch.ones(1, 2, dtype=tmodel.weight.dtype)
        if not str(model.weight.dtype) == "torch.float16":
            same_outcome(outcome(lambda: model(x).sum().backward()),
                         outcome(lambda: tmodel(tx).sum().backward()))


def method(tensor, flag):
    return lambda: tensor.requires_grad_(flag).requires_grad


@pytest.mark.parametrize("flag", [True, False, 1, 0, None, np.bool_(True)],
                         ids=["True", "False", "1", "0", "None", "np.bool_"])
@pytest.mark.parametrize("case", [name for name, _, _ in pairs()])
def test_requires_grad_method_matches_torch(case, flag):
    """``requires_grad_(flag)``: a bool only (torch's TypeError, the flag unchanged), and
    ``True`` on a non-leaf allowed, unlike the assignment."""
    _, ours, theirs = next(p for p in pairs() if p[0] == case)
    before = ours.requires_grad
    got, expected = same_outcome(outcome(method(ours, flag)), outcome(method(theirs, flag)))
    if isinstance(got, Exception):
        assert ours.requires_grad is before
    else:
        assert got is expected
    assert ours.requires_grad is theirs.requires_grad


@pytest.mark.parametrize("view", [lambda t: t[0], lambda t: t.view(6), lambda t: t.t(),
                                  lambda t: t[:, 1:]], ids=["index", "view", "t", "slice"])
def test_view_of_a_detached_inference_tensor_is_one_that_refuses(view):
    """A detach() of an inference tensor takes writes outside the mode; its views, as
    torch's, do not, read no ``_version`` and are not saved for backward."""
    with mg.inference_mode():
        ours = mg.ones(2, 3)
    with torch.inference_mode():
        theirs = torch.ones(2, 3)
    v, tv = view(ours.detach()), view(theirs.detach())
    w, tw = mg.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    assert v.is_inference() is tv.is_inference()
    same_outcome(outcome(lambda: v._version), outcome(lambda: tv._version))
    same_outcome(outcome(lambda: v.add_(1)), outcome(lambda: tv.add_(1)))
    same_outcome(outcome(lambda: w * v), outcome(lambda: tw * tv))       # saved for backward
    np.testing.assert_array_equal(ours.numpy(), np.ones((2, 3)))   # refused unwritten (torch
    # writes before it refuses)

"""torch's NumPy spellings of ``input`` (``x``, ``a``, ``x1``) and ``other`` (``x2``): taken by
every native function and, for ``other``, by every Tensor method; refused by the functions
torch writes in Python (``norm``, ``unique``, ``stft``, ``torch.nn.functional``). Each call
runs on both libraries: refused by both with one error class, or taken by both with the same
values."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

A = np.array([[0.5, -1.25, 2.0], [3.0, 0.75, -0.5]], dtype=np.float32)
B = np.array([[1.5, 0.25, -2.0], [0.5, 2.5, 1.0]], dtype=np.float32)


def _tensors(lib):
    return lib.tensor(A.copy()), lib.tensor(B.copy())


def _unary(lib, a, b):
    return [
        lambda: lib.exp(x=a),
        lambda: lib.abs(a=a),
        lambda: lib.sigmoid(x1=a),
        lambda: lib.neg(input=a),
        lambda: lib.clamp(x=a, min=0.0),
        lambda: lib.exp_(x=a.clone()),
        lambda: lib.nan_to_num(a=a),
    ]


def _binary(lib, a, b):
    return [
        lambda: lib.add(x=a, other=b),
        lambda: lib.add(x1=a, x2=b, alpha=2),
        lambda: lib.mul(x1=a, x2=b),
        lambda: lib.sub(a, x2=b),
        lambda: lib.div(a=a, x2=b, rounding_mode="floor"),
        lambda: lib.maximum(x=a, x2=b),
        lambda: lib.atan2(x1=a, other=b),
        lambda: lib.eq(x=a, x2=a),
        lambda: lib.matmul(x1=a, x2=b.T),
        lambda: lib.where(a > 0, x=a, x2=b),
        lambda: lib.max(x=a, other=b),
        lambda: lib.pow(x=a, exponent=2),
    ]


def _reductions(lib, a, b):
    return [
        lambda: lib.sum(a=a, axis=0),
        lambda: lib.mean(x=a, dim=1, keepdims=True),
        lambda: lib.amax(x1=a, axis=1),
        lambda: lib.logsumexp(x=a, dim=0),
        lambda: lib.cumsum(a=a, axis=1),
        lambda: lib.cummax(x=a, axis=1).values,
        lambda: lib.max(x=a),
        lambda: lib.std(x=a, axis=1),
        lambda: lib.linalg.norm(x=a),                    # native in torch.linalg
        lambda: lib.linalg.norm(x=a, ord=1, dim=0, keepdims=True),
        lambda: lib.linalg.vector_norm(x=a, ord=2, axis=0, keepdims=True),
        lambda: lib.linalg.matrix_norm(a, keepdims=True),
        lambda: lib.special.logsumexp(a, axis=1, keepdims=True),
    ]


def _methods(lib, a, b):
    return [
        lambda: a.add(x2=b),
        lambda: a.add(x2=b, alpha=3),
        lambda: a.mul(x2=b),
        lambda: a.eq(x2=b),
        lambda: a.maximum(x2=b),
        lambda: a.max(x2=b),
        lambda: a.matmul(x2=b.T),
        lambda: a.clone().add_(x2=b),
        lambda: a.clone().mul_(x2=b),
        lambda: a.clone().div_(x2=b),
    ]


def _outs(lib, a, b):
    def into(call):
        out = lib.empty(0)
        result = call(out)
        assert result is out
        return out
    return [
        lambda: into(lambda out: lib.exp(x=a, out=out)),
        lambda: into(lambda out: lib.add(x1=a, x2=b, out=out)),
        lambda: into(lambda out: lib.maximum(a=a, x2=b, out=out)),
        lambda: into(lambda out: lib.sum(x=a, axis=1, out=out)),
    ]


def _refusals(lib, a, b):
    return [
        lambda: lib.add(input=a, x=a, other=b),         # one argument spelled twice
        lambda: lib.add(x=a, a=a, other=b),
        lambda: lib.mul(a, x=b, other=b),                # given by position and by name
        lambda: lib.add(a, other=b, x2=b),
        lambda: a.add(x=b),                              # a method's self has no other name
        lambda: a.exp(x=a),
        lambda: a.sum(x=a),
        lambda: lib.norm(x=a),                           # torch's Python-level functions
        lambda: lib.linalg.norm(a, x=a),                 # linalg's input given twice
        lambda: lib.unique(x=a),
        lambda: lib.split(x=a, split_size_or_sections=1),
        lambda: lib.nn.functional.relu(x=a),
        lambda: lib.nn.functional.softmax(x=a, dim=0),
        lambda: lib.cat(x=[a, b]),                       # no parameter named input
        lambda: lib.add(x=a, other="text"),              # an error of the op itself
        lambda: lib.exp(x=a, y=b),                       # an unknown name stays unknown
    ]


GROUPS = {"unary": _unary, "binary": _binary, "reductions": _reductions,
          "methods": _methods, "out": _outs, "refusals": _refusals}
CASES = [(group, index) for group, make in GROUPS.items()
         for index in range(len(make(np, None, None)))]


def _outcome(call):
    try:
        return call(), None
    except Exception as error:                           # noqa: BLE001 - compared below
        return None, error


def _array(value):
    return np.asarray(value.detach().numpy() if hasattr(value, "detach") else value)


@pytest.mark.parametrize(("group", "index"), CASES, ids=[f"{g}-{i}" for g, i in CASES])
def test_each_spelling_is_taken_or_refused_as_by_torch(group, index):
    expected, torch_error = _outcome(GROUPS[group](torch, *_tensors(torch))[index])
    got, error = _outcome(GROUPS[group](mg, *_tensors(mg))[index])
    if torch_error is not None:
        assert error is not None, f"torch refuses ({torch_error!r}); ours gave {got!r}"
        assert isinstance(error, type(torch_error)), (error, torch_error)
        return
    assert error is None, f"torch takes it; ours raised {error!r}"
    np.testing.assert_allclose(_array(got), _array(expected), rtol=1e-6, atol=1e-6)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]


def test_the_refusals_are_refusals():
    """The refusal group does fail in torch, so its cases test a refusal, not a call."""
    a, b = _tensors(torch)
    for call in _refusals(torch, a, b):
        assert _outcome(call)[1] is not None


def test_an_error_inside_the_op_is_its_own():
    """A TypeError raised by the op under an alias is the op's, unchanged."""
    a = mg.tensor(A)
    with pytest.raises(TypeError) as aliased:
        mg.add(x=a, other="text")
    with pytest.raises(TypeError) as plain:
        mg.add(a, "text")
    assert str(aliased.value) == str(plain.value)


def test_the_aliases_change_no_signature_and_no_gradient():
    import inspect

    assert list(inspect.signature(mg.add).parameters)[:2] == ["input", "other"]
    assert mg.add.__doc__ and mg.add.__name__ == "add"
    a = mg.tensor(A, requires_grad=True)
    mg.mul(x1=a, x2=a).sum().backward()                  # recorded as the plain call
    np.testing.assert_allclose(a.grad.numpy(), 2 * A)


def test_the_hot_calls_carry_no_wrapper():
    """``add``, ``sub`` and their methods read the spellings in their own signatures, so a
    plain ``mg.add(a, b)`` or ``a.add(b)`` runs no extra call."""
    for function in (mg.add, mg.sub, mg.subtract, mg.Tensor.add, mg.Tensor.sub):
        assert not hasattr(function, "__wrapped__"), function


@pytest.mark.parametrize("call", [lambda a, out: mg.exp(x=a, out=out),
                                  lambda a, out: mg.add(x1=a, x2=a, out=out),
                                  lambda a, out: mg.mul(a, x2=a, out=out),
                                  lambda a, out: mg.cumsum(a=a, axis=0, out=out)])
def test_a_warning_under_the_aliases_names_the_callers_line(call):
    with pytest.warns(UserWarning, match="was resized") as record:
        call(mg.ones(3), mg.zeros(2))
    assert record[0].filename == __file__

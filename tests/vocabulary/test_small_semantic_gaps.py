"""Small corners where the library follows torch's semantics, each compared with torch at
test time: ``set_`` from a tensor that requires grad, deep copies' and inference tensors'
version counters and index writes, NumPy arrays with negative strides."""

import copy

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def _outcome(f):
    # (the exception's class name, or None), and the value f returned
    try:
        return None, f()
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        return type(error), None


def _same_class(ours, theirs):
    # ours may subclass torch's class (RuntimeError subclasses, ...)
    return (ours is None) == (theirs is None) and (ours is None or issubclass(ours, theirs))


# ----- set_ from a tensor that requires grad ---------------------------------------------------
@pytest.mark.parametrize("source_kind", ["leaf", "non_leaf"])
@pytest.mark.parametrize("grad_enabled", [True, False])
def test_set_takes_requires_grad_from_the_source(source_kind, grad_enabled):
    results = []
    for lib in (mg, torch):
        source = lib.randn(3, requires_grad=True)
        if source_kind == "non_leaf":
            source = source * 2
        x = lib.zeros(3)
        with lib.set_grad_enabled(grad_enabled):
            returned = x.set_(source)
        results.append((returned is x, x.requires_grad, x.is_leaf, x.grad_fn is None))
    assert results[0] == results[1]


def test_set_from_a_source_that_requires_grad_has_no_derivative():
    errors = []
    for lib in (mg, torch):
        source = lib.randn(3, requires_grad=True)
        x = lib.zeros(3)
        x.set_(source)
        error, _ = _outcome(lambda x=x: x.sum().backward())
        errors.append(error)
        assert source.grad is None
    assert errors[1] is not None and _same_class(errors[0], errors[1])


def test_set_on_tensors_that_require_grad():
    # a leaf that requires grad: refused with grad enabled, taken under no_grad; a non-leaf:
    # taken, and it keeps requiring grad
    for make, grad_enabled in [("leaf", True), ("leaf", False), ("non_leaf", True)]:
        results = []
        for lib in (mg, torch):
            x = lib.zeros(3, requires_grad=True)
            if make == "non_leaf":
                x = x * 1
            with lib.set_grad_enabled(grad_enabled):
                error, _ = _outcome(lambda x=x, lib=lib: x.set_(lib.ones(3)))
            results.append((error, x.requires_grad, x.is_leaf))
        assert _same_class(results[0][0], results[1][0]), make
        assert results[0][1:] == results[1][1:], make


def test_set_with_a_tensor_and_sizes_reads_its_storage_without_a_graph():
    results = []
    for lib in (mg, torch):
        source = lib.arange(10.0, requires_grad=True)[3:]
        x = lib.zeros(1)
        x.set_(source, 1, (2,), (2,))
        results.append((x.detach().tolist(), x.storage_offset(), x.requires_grad))
    assert results[0] == results[1]


# ----- deep copies and detached inference tensors ---------------------------------------------
def _detached_inference(lib):
    with lib.inference_mode():
        made = lib.ones(4)
    return made, made.detach()


@pytest.mark.parametrize("kind", ["plain", "requires_grad", "inference_detached", "parameter"])
def test_deepcopy_version(kind):
    versions = []
    for lib in (mg, torch):
        if kind == "plain":
            t = lib.ones(3)
            t.add_(1)
        elif kind == "requires_grad":
            t = lib.ones(3, requires_grad=True)
        elif kind == "parameter":
            t = lib.nn.Parameter(lib.ones(2))
        else:
            t = _detached_inference(lib)[1]
        copied = copy.deepcopy(t)
        versions.append((copied._version, copied.is_inference(), type(copied).__name__))
    assert versions[0] == versions[1]


_WRITES = {
    "add_": lambda d, lib: d.add_(1),
    "copy_": lambda d, lib: d.copy_(lib.zeros(4)),
    "fill_": lambda d, lib: d.fill_(2),
    "element_add_": lambda d, lib: d[0].add_(1),
    "view_add_": lambda d, lib: d.view(4).add_(1),
    "setitem_int": lambda d, lib: d.__setitem__(0, 5.0),
    "setitem_slice": lambda d, lib: d.__setitem__(slice(0, 2), 5.0),
    "setitem_none": lambda d, lib: d.__setitem__((None, 1), 5.0),
    "setitem_ellipsis": lambda d, lib: d.__setitem__(Ellipsis, 5.0),
    "setitem_list": lambda d, lib: d.__setitem__([0, 2], 5.0),
    "setitem_mask": lambda d, lib: d.__setitem__(lib.tensor([True, False, True, False]), 5.0),
    "setitem_tensor_index": lambda d, lib: d.__setitem__(lib.tensor([1]), 7.0),
}


@pytest.mark.parametrize("write", sorted(_WRITES))
def test_writes_into_a_detached_inference_tensor(write):
    results = []
    for lib in (mg, torch):
        made, detached = _detached_inference(lib)
        error, _ = _outcome(lambda d=detached, lib=lib: _WRITES[write](d, lib))
        version = None if error else detached._version
        with lib.inference_mode():
            values = made.tolist()
        results.append((error, version, values))
    (ours, *rest), (theirs, *torch_rest) = results
    assert _same_class(ours, theirs), (ours, theirs)
    if theirs is None:
        assert rest == torch_rest
    else:                       # torch writes, then refuses; a refused write here writes nothing
        assert rest == [None, [1.0] * 4]


def test_writes_into_a_detached_inference_tensor_inside_the_mode():
    results = []
    for lib in (mg, torch):
        made, detached = _detached_inference(lib)
        with lib.inference_mode():
            detached[1] = 3.0
            results.append(made.tolist())
    assert results[0] == results[1]


# ----- NumPy arrays with negative strides ------------------------------------------------------
_REVERSED = {
    "reversed": lambda: np.arange(5.0)[::-1],
    "reversed_columns": lambda: np.arange(6.0).reshape(2, 3)[:, ::-1],
    "forward_slice": lambda: np.arange(6.0)[::2],
}


@pytest.mark.parametrize("array", sorted(_REVERSED))
@pytest.mark.parametrize("call", [
    "as_tensor", "as_tensor_float32", "asarray", "asarray_copy", "tensor", "from_numpy"])
def test_negative_strides(array, call):
    def run(lib):
        data = _REVERSED[array]()
        calls = {"as_tensor": lambda: lib.as_tensor(data),
                 "as_tensor_float32": lambda: lib.as_tensor(data, dtype=lib.float32),
                 "asarray": lambda: lib.asarray(data),
                 "asarray_copy": lambda: lib.asarray(data, copy=True),
                 "tensor": lambda: lib.tensor(data),
                 "from_numpy": lambda: lib.from_numpy(data)}
        error, result = _outcome(calls[call])
        return error, None if result is None else result.tolist()
    (ours, ours_values), (theirs, their_values) = run(mg), run(torch)
    assert _same_class(ours, theirs), (ours, theirs)
    assert ours_values == their_values


# ----- module constructors given a bool size ---------------------------------------------------
_BOOL_SIZES = {
    "Linear(True, 3)": lambda nn: nn.Linear(True, 3),
    "Linear(3, True)": lambda nn: nn.Linear(3, True),
    "Linear(3, False)": lambda nn: nn.Linear(3, False),
    "Linear(True, True)": lambda nn: nn.Linear(True, True),
    "Bilinear(True, True, 2)": lambda nn: nn.Bilinear(True, True, 2),
    "Bilinear(2, 2, True)": lambda nn: nn.Bilinear(2, 2, True),
    "Embedding(3, True)": lambda nn: nn.Embedding(3, True),
    "Embedding(True, 3)": lambda nn: nn.Embedding(True, 3),
    "LazyLinear(True)": lambda nn: nn.LazyLinear(True),
}


@pytest.mark.parametrize("build", sorted(_BOOL_SIZES))
def test_module_constructors_given_a_bool_size(build):
    results = []
    for lib in (mg, torch):
        error, module = _outcome(lambda lib=lib: _BOOL_SIZES[build](lib.nn))
        lazy = build.startswith("Lazy")        # its parameters get their shapes at the call
        shapes = None if module is None or lazy else [tuple(p.shape)
                                                      for p in module.parameters()]
        results.append((error, shapes, None if module is None else repr(module)))
    assert _same_class(results[0][0], results[1][0]), results
    assert results[0][1:] == results[1][1:]


def test_a_linear_layer_of_bool_size_computes_as_torch():
    torch.manual_seed(0)
    theirs = torch.nn.Linear(True, 3)
    ours = mg.nn.Linear(True, 3)
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.array([[2.0]], np.float32)
    np.testing.assert_allclose(ours(mg.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6)

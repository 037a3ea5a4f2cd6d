"""The ``layout=`` and ``pin_memory=`` keywords of the tensor factories (``zeros``,
``arange``, ``rand``, the ``*_like``, ``Tensor.new_zeros``, ``tensor``, ...), against
PyTorch called the same way: the strided (and default) values build the same tensor; a
sparse layout, ``pin_memory=True`` and values of the wrong type raise PyTorch's exception
class (or a subclass of it) where PyTorch raises; where PyTorch builds a sparse tensor ours
refuses with a NotImplementedError naming the argument (no sparse layout here), and where
PyTorch ignores the layout (``scalar_tensor``) ours builds the same strided tensor."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def _factories(lib):
    # (name: a call of the factory in ``lib`` taking the keywords under test)
    x = lib.zeros(2, 3)
    return {
        "zeros": lambda **k: lib.zeros(2, 3, **k),
        "ones": lambda **k: lib.ones(3, **k),
        "empty": lambda **k: lib.empty(2, **k),
        "full": lambda **k: lib.full((2,), 1.5, **k),
        "arange": lambda **k: lib.arange(5, **k),
        "linspace": lambda **k: lib.linspace(0, 1, 4, **k),
        "logspace": lambda **k: lib.logspace(0, 1, 3, **k),
        "eye": lambda **k: lib.eye(3, **k),
        "rand": lambda **k: lib.rand(2, **k),
        "randn": lambda **k: lib.randn(2, **k),
        "randint": lambda **k: lib.randint(5, (3,), **k),
        "randperm": lambda **k: lib.randperm(4, **k),
        "normal": lambda **k: lib.normal(0.0, 1.0, (2,), **k),
        "empty_strided": lambda **k: lib.empty_strided((2, 3), (3, 1), **k),
        "zeros_like": lambda **k: lib.zeros_like(x, **k),
        "ones_like": lambda **k: lib.ones_like(x, **k),
        "empty_like": lambda **k: lib.empty_like(x, **k),
        "full_like": lambda **k: lib.full_like(x, 2.0, **k),
        "rand_like": lambda **k: lib.rand_like(x, **k),
        "randn_like": lambda **k: lib.randn_like(x, **k),
        "randint_like": lambda **k: lib.randint_like(x, 5, **k),
        "new_zeros": lambda **k: x.new_zeros(2, **k),
        "new_ones": lambda **k: x.new_ones((1, 2), **k),
        "new_full": lambda **k: x.new_full((2, 2), 4.0, **k),
        "new_empty": lambda **k: x.new_empty(3, **k),
        "hann_window": lambda **k: lib.hann_window(5, **k),
        "hamming_window": lambda **k: lib.hamming_window(4, periodic=False, **k),
        "blackman_window": lambda **k: lib.blackman_window(6, **k),
        "bartlett_window": lambda **k: lib.bartlett_window(5, **k),
        "kaiser_window": lambda **k: lib.kaiser_window(7, **k),
        "tril_indices": lambda **k: lib.tril_indices(3, 4, **k),
        "triu_indices": lambda **k: lib.triu_indices(4, 3, 1, **k),
        "scalar_tensor": lambda **k: lib.scalar_tensor(2.5, **k),
        "range": lambda **k: lib.range(0, 3, **k),
    }


NAMES = sorted(_factories(torch))
SAMPLED = {"empty", "empty_strided", "empty_like", "new_empty", "rand", "randn", "randint",
           "randperm", "normal", "rand_like", "randn_like", "randint_like"}
ACCEPTED = {"strided": {"layout": "strided"}, "none": {"layout": None},
            "jagged": {"layout": "jagged"}, "unpinned": {"pin_memory": False},
            "pin_none": {"pin_memory": None},
            "both": {"layout": "strided", "pin_memory": False}}
REFUSED = {"sparse_coo": {"layout": "sparse_coo"}, "sparse_csr": {"layout": "sparse_csr"},
           "pinned": {"pin_memory": True}, "layout_str": {"layout": "a string"},
           "layout_dtype": {"layout": "float32"}, "pin_int": {"pin_memory": 1}}


def _keywords(lib, spec):
    # the spec's names read in ``lib`` (torch.strided, mg.sparse_coo, ...)
    out = {}
    for key, value in spec.items():
        named = key == "layout" and value not in (None, "a string")
        out[key] = getattr(lib, value) if named else value
    return out


def _call(lib, name, spec):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _factories(lib)[name](**_keywords(lib, spec))


@pytest.mark.parametrize("spec", ACCEPTED.values(), ids=ACCEPTED.keys())
@pytest.mark.parametrize("name", NAMES)
def test_accepted_values_build_torch_tensor(name, spec):
    try:
        theirs = _call(torch, name, spec)
    except Exception as error:   # a factory whose keywords torch reads its own way (range)
        with pytest.raises(type(error)):
            _call(mg, name, spec)
        return
    ours = _call(mg, name, spec)
    assert theirs.layout == torch.strided and ours.layout == mg.strided
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    if name not in SAMPLED:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("spec", REFUSED.values(), ids=REFUSED.keys())
@pytest.mark.parametrize("name", NAMES)
def test_refused_values_raise_torch_class(name, spec):
    try:
        theirs = _call(torch, name, spec)
    except Exception as error:          # torch refuses: ours raises its class, or a subclass
        expected = type(error)
    else:
        if theirs.layout == torch.strided:      # torch ignores the layout (scalar_tensor)
            assert tuple(_call(mg, name, spec).shape) == tuple(theirs.shape)
            return
        expected = NotImplementedError  # torch builds a sparse tensor: ours refuses plainly
    with pytest.raises(expected) as caught:
        _call(mg, name, spec)
    assert ("layout" if "layout" in spec else "pin_memory") in str(caught.value)


@pytest.mark.parametrize("name", ["rand", "randn", "randint", "randperm", "rand_like"])
def test_refused_draw_leaves_generator(name):
    mg.manual_seed(3)
    with pytest.raises(RuntimeError):
        _call(mg, name, {"pin_memory": True})
    after = _call(mg, name, {})
    mg.manual_seed(3)
    np.testing.assert_array_equal(after.numpy(), _call(mg, name, {}).numpy())


def test_tensor_takes_pin_memory_not_layout():
    ours = mg.tensor([1.0, 2.0], pin_memory=False)
    theirs = torch.tensor([1.0, 2.0], pin_memory=False)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for spec in ({"pin_memory": True}, {"pin_memory": 1}, {"layout": None}):
        with pytest.raises(Exception) as torch_error:
            torch.tensor([1.0], **_keywords(torch, spec))
        with pytest.raises(torch_error.type):
            mg.tensor([1.0], **_keywords(mg, spec))


@pytest.mark.filterwarnings("ignore:torch.range is deprecated:UserWarning")
@pytest.mark.parametrize("name", ["zeros", "arange", "randn", "ones_like", "new_ones",
                                  "new_full", "hann_window", "tril_indices", "range"])
def test_torch_layout_objects_read_by_name(name):
    # code written for torch hands its own layout objects over
    ours = _factories(mg)[name](layout=torch.strided)
    assert tuple(ours.shape) == tuple(_factories(torch)[name](layout=torch.strided).shape)
    with pytest.raises(NotImplementedError, match="layout"):
        _factories(mg)[name](layout=torch.sparse_coo)

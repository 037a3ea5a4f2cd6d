"""PyTorch's own sample inputs (``op_db`` OpInfos) run through the other forms of each op:
the Tensor method (``x.add(y)``), the in-place method (``x.add_(y)``) and the ``out=``
argument of the function, each compared with the same form of torch's. The conversion and
the comparison are tests/helpers/opinfo_generic.py's.

``run_variant(op, variant, dtype)`` returns ``(ran, failures)`` for ``variant`` one of
``VARIANTS``, and raises Unresolved when this package has no such form of the op.
"""

import inspect
import itertools
import warnings

import numpy as np
import torch

import microgradnorm as mg
from opinfo_generic import (compare, describe, mg_dtype, _numpy, RANDOM, resolve, run_sample, taken,
                            tensors_of, to_mg, TOLERANCES, Unresolved)

VARIANTS = ("method", "inplace", "out")


def _detached(sample):
    return sample.transform(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t)


class _Form:
    """torch's form of an op, callable as run_sample calls an OpInfo."""

    def __init__(self, name, function):
        self.name, self.function = name, function

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)


def ours(op, variant):
    """This package's ``variant`` form of ``op``, or Unresolved."""
    name = op.name
    if variant == "method":
        if op.method_variant is None or "." in name or not hasattr(mg.Tensor, name):
            raise Unresolved(name)
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    if variant == "inplace":
        if op.inplace_variant is None:
            raise Unresolved(name + "_")
        if name.startswith("nn.functional."):      # torch's: the function with inplace=True
            function = getattr(mg.nn.functional, name.split(".")[-1], None)
            if function is None or "inplace" not in inspect.signature(function).parameters:
                raise Unresolved(name + "(inplace=True)")
            return lambda x, *a, **k: function(x, *a, inplace=True, **k)
        method = name if name.endswith("_") else name + "_"      # (zero_ is its own)
        if "." in name or not hasattr(mg.Tensor, method):
            raise Unresolved(method)
        return lambda x, *a, **k: getattr(x, method)(*a, **k)
    if not op.supports_out:
        raise Unresolved(name)
    function = resolve(op)
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        parameters = ()
    takes_out = any(p.name == "out" for p in parameters) or \
        getattr(op.op, "__name__", "") == "<lambda>" and any(   # torch's lambda passing its
            p.kind is p.VAR_KEYWORD for p in parameters) and any(   # keywords to a function
            _takes_out(getattr(mg, n, None)) for n in op.op.__code__.co_names)  # taking out
    if not takes_out:
        raise Unresolved(f"{name}(out=)")
    return function


def _takes_out(function):
    try:
        return "out" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _same_values(got, expected, dtype, name, where="output"):
    # the looser of the dtype computed in and the dtype the result is written into
    tolerances = {k: tuple(map(max, v, TOLERANCES[dtype])) for k, v in TOLERANCES.items()}
    if name in RANDOM:           # random draws: shape and dtype only
        got, expected = _layout(got), _layout(expected)
        assert got == expected, f"{where}: {got} vs {expected}"
        return
    compare(got, expected, dtype, where, tolerances)


def _layout(value):
    # the shapes and dtypes of a result, what a random draw is compared by
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        return tuple(value.shape), str(value.dtype).split(".")[-1]
    if isinstance(value, (tuple, list)):
        return [_layout(v) for v in value]
    return value


def _raises(function, *args, **kwargs):
    """``(result, None)`` or ``(None, exception)``."""
    try:
        return function(*args, **kwargs), None
    except Exception as error:        # noqa: BLE001 - the class is what is compared
        return None, error


def _check_error(mine, theirs, where):
    assert mine is not None, f"{where}: torch raises {type(theirs).__name__} " \
                             f"({str(theirs)[:120]}), ours does not"
    assert isinstance(mine, type(theirs)), \
        f"{where}: {type(mine).__name__} ({mine}) vs torch's {type(theirs).__name__}"


def _method_sample(op, function, sample, dtype):
    run_sample(function, _Form(op.name, op.method_variant), sample, dtype)


def _inplace_sample(op, function, sample, dtype, check_leaf):
    plain = _detached(sample)
    x = plain.input.clone()          # (a new tensor: its version counter at 0)
    expected, error = _raises(op.inplace_variant, x, *plain.args, **plain.kwargs)
    mine = to_mg(plain.input)
    before, snapshot = mine._version, _numpy(mine).copy()
    got, my_error = _raises(function, mine, *to_mg(plain.args), **to_mg(plain.kwargs))
    if error is not None:
        _check_error(my_error, error, "in-place")
        np.testing.assert_array_equal(_numpy(mine), snapshot, "a refused call wrote")
        return
    if my_error is not None:
        raise my_error
    assert got is mine, "in-place: the result is not the input"
    _same_values(got, expected, dtype, op.name, "in-place")
    assert (mine._version > before) == (x._version > 0), \
        f"in-place: version counter moved: {mine._version > before}, torch's: {x._version > 0}"
    if check_leaf and plain.input.dtype.is_floating_point:
        leaf = plain.input.clone().requires_grad_()
        _, error = _raises(op.inplace_variant, leaf, *plain.args, **plain.kwargs)
        my_leaf = to_mg(plain.input).requires_grad_()
        _, my_error = _raises(function, my_leaf, *to_mg(plain.args), **to_mg(plain.kwargs))
        if error is not None:
            _check_error(my_error, error, "in-place on a leaf that requires grad")
    if dtype == torch.float64 and op.name not in RANDOM and any(
            t.requires_grad for t in tensors_of((sample.input, sample.args, sample.kwargs))):
        run_sample(lambda x, *a, **k: function(x.clone(), *a, **k),
                   _Form(op.name, lambda x, *a, **k: op.inplace_variant(x.clone(), *a, **k)),
                   sample, dtype)


def _empty_like(value, dtype=None, shape=None, library=torch):
    # made apart in each library: a torch tensor read through numpy() can no longer resize
    if isinstance(value, torch.Tensor):
        dtype = dtype or value.dtype
        return library.empty(value.shape if shape is None else shape,
                             dtype=dtype if library is torch else mg_dtype(dtype))
    return type(value)(_empty_like(v, dtype, shape, library) for v in value)


def _out_call(op, function, plain, expected, where, sample_dtype, **like):
    """Call torch's and our form with an ``out`` like ``expected`` (``dtype``, ``shape``
    changed by ``like``); compare what each raises, warns, returns and writes."""
    out_t = _empty_like(expected, **like)
    out_m = _empty_like(expected, library=mg, **like)
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        _, error = _raises(op.op, plain.input, *plain.args, **plain.kwargs, out=out_t)
    with warnings.catch_warnings(record=True) as my_warned:
        warnings.simplefilter("always")
        got, my_error = _raises(function, to_mg(plain.input), *to_mg(plain.args),
                                **to_mg(plain.kwargs), out=out_m)
    if error is not None:
        _check_error(my_error, error, where)
        return
    if my_error is not None:
        raise AssertionError(f"{where}: {type(my_error).__name__}: {my_error}")
    theirs_resized = any("resized" in str(w.message) for w in theirs_warned)
    mine_resized = any("resized" in str(w.message) for w in my_warned)
    assert theirs_resized == mine_resized, \
        f"{where}: torch warns of a resize: {theirs_resized}, ours: {mine_resized}"
    if isinstance(out_t, torch.Tensor):
        assert got is out_m, f"{where}: the return is not out"
    else:
        assert isinstance(got, (tuple, list)) and len(got) == len(out_m) and all(
            a is b for a, b in zip(got, out_m)), f"{where}: the return is not out"
    _same_values(out_m, out_t, sample_dtype, op.name, where)


def _out_sample(op, function, sample, dtype):
    plain = _detached(sample)
    expected = op(plain.input, *plain.args, **plain.kwargs)
    if not tensors_of(expected) or len(tensors_of(expected)) != (
            1 if isinstance(expected, torch.Tensor) else len(expected)):
        return
    _out_call(op, function, plain, expected, "out", dtype)
    _out_call(op, function, plain, expected, "out of no elements", dtype, shape=(0,))
    if any(t.numel() != 1 for t in tensors_of(expected)):
        _out_call(op, function, plain, expected, "out of the wrong shape", dtype, shape=(1,))
    for other in (torch.int64, torch.complex128, torch.float32, torch.float64):
        if isinstance(expected, torch.Tensor) and expected.dtype != other:
            _out_call(op, function, plain, expected, f"out of {other}", dtype, dtype=other)


def samples_of(op, dtype, max_samples, max_numel=None):
    """The first ``max_samples`` reference inputs of ``op`` whose tensors have at most
    ``max_numel`` elements each (float64 ones requiring grad where the op has a gradient)."""
    def small(samples):
        return (s for s in samples if max_numel is None or all(
            t.numel() <= max_numel for t in tensors_of((s.input, s.args, s.kwargs))))
    requires_grad = dtype == torch.float64 and op.supports_autograd
    try:
        return list(itertools.islice(small(
            op.reference_inputs("cpu", dtype, requires_grad=requires_grad)), max_samples))
    except (RuntimeError, ValueError):     # torch's generator asks grad of a bool tensor
        return list(itertools.islice(small(
            op.reference_inputs("cpu", dtype, requires_grad=False)), max_samples))


def run_variant(op, variant, dtype=torch.float64, max_samples=8, max_numel=None):
    """``(ran, failures)`` of ``op``'s ``variant`` form over its first ``max_samples``
    samples (of tensors of at most ``max_numel`` elements) that torch's function takes;
    Unresolved where this package lacks the form."""
    function = ours(op, variant)
    ran, failures, leaf_checked = 0, [], False
    for i, sample in enumerate(samples_of(op, dtype, max_samples, max_numel)):
        if variant != "out" and not isinstance(sample.input, torch.Tensor):
            continue
        sample = taken(op, sample)
        if sample is None:
            continue
        ran += 1
        try:
            if variant == "method":
                _method_sample(op, function, sample, dtype)
            elif variant == "inplace":
                _inplace_sample(op, function, sample, dtype, not leaf_checked)
                leaf_checked = True
            else:
                _out_sample(op, function, sample, dtype)
        except Exception as error:
            message = " ".join(str(error).strip().split("\n"))
            failures.append(f"sample {i} {describe(sample)}: {type(error).__name__}: "
                            f"{message[:300]}")
    return ran, failures

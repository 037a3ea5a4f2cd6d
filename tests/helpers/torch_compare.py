"""Comparisons against torch that the vocabulary tests share."""

import numpy as np
import pytest
import torch

import microgradnorm as mg


def pair(array, requires_grad=True):
    """The array as a tensor of each library; a floating one requires grad."""
    array = np.asarray(array)
    grad = requires_grad and array.dtype.kind == "f"
    return mg.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad)


def compare_module(ours, theirs, arrays, rng, **call):
    """Two Modules called on the same arrays: the outputs, then the gradients of the inputs
    and of every parameter from one upstream gradient drawn from ``rng``, float64."""
    mine, reference = zip(*[pair(a) for a in arrays])
    out, expected = ours(*mine, **call), theirs(*reference, **call)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    upstream = rng.standard_normal(out.shape)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)
    params = dict(ours.named_parameters())
    for name, param in theirs.named_parameters():
        np.testing.assert_allclose(params[name].grad.numpy(), param.grad.numpy(), atol=1e-12)


def same_error(ours, theirs):
    """``theirs()`` raises; ``ours()`` raises an instance of the same class."""
    with pytest.raises(Exception) as expected:                # noqa: PT011 (torch's class)
        theirs()
    with pytest.raises(expected.type):
        ours()


def check(ours, theirs, inputs, atol=1e-12, rtol=1e-12):
    """Values, dtype, and the gradient of a random upstream into each input, against torch."""
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    expected = theirs.detach().numpy()
    np.testing.assert_allclose(ours.detach().numpy(), expected, rtol=0, atol=atol)
    upstream = np.asarray(np.random.default_rng(0).standard_normal(expected.shape))
    ours.backward(upstream)
    theirs.backward(torch.tensor(upstream, dtype=theirs.dtype))
    for a, b in inputs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)


def same(ours, theirs):
    """Both calls raise the same class, or give one dtype and equal values."""
    try:
        expected = theirs()
    except Exception as error:                                # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            ours()
        return
    got = ours()
    assert str(got.dtype) == str(expected.dtype).removeprefix("torch."), (got, expected)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


def same_call(call, *args, ulps, rtol=None):
    """``call(lib, *args)`` for mg and torch, each NumPy array among ``args`` made a tensor of
    that library: both raise the same class, or give one dtype and equal values (NaN ==
    NaN) within ``ulps[dtype]`` relative (0 for a dtype not listed) or ``rtol``; bfloat16
    compared as float32 (torch's bfloat16 has no NumPy form)."""
    def run(lib):
        return call(lib, *[lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    try:
        expected = run(torch)
    except Exception as error:                               # noqa: BLE001 (torch's class)
        with pytest.raises(type(error)):
            run(mg)
        return
    got = run(mg)
    dtype = str(got.dtype)
    assert dtype == str(expected.dtype).removeprefix("torch."), (got, expected)
    if dtype == "bfloat16":
        got, expected = got.float(), expected.float()
    tolerance = ulps.get(dtype, 0) if rtol is None else rtol
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=0, rtol=tolerance)

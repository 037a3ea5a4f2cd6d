"""Comparisons against torch that the vocabulary tests share."""

import numpy as np
import pytest
import torch


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

"""What the differential sweep of the normalization family against PyTorch shares
(tests/norms/test_fuzz_norm_family.py, test_fuzz_norm_modules.py): the dtypes and their
tolerances, tensor pairs, the comparison of results, exception classes and module state."""

import numpy as np
import torch

import microgradnorm as mg

IMPLS = ("fused", "composite")
DTYPES = {"float64": (mg.float64, torch.float64, 1e-9),
          "float32": (mg.float32, torch.float32, 3e-5),
          "float16": (mg.float16, torch.float16, 2e-2),
          "bfloat16": (mg.bfloat16, torch.bfloat16, 6e-2)}


def _numpy(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy().astype(np.float64)
    return t.numpy().astype(np.float64)


def close(ours, theirs, tol=1e-9, what=""):
    """Same presence, dtype, shape and values (NaN where torch's NaN) within ``tol``."""
    assert (ours is None) == (theirs is None), what
    if theirs is None:
        return
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], what
    assert tuple(ours.shape) == tuple(theirs.shape), what
    np.testing.assert_allclose(_numpy(ours), _numpy(theirs), rtol=tol, atol=tol,
                               equal_nan=True, err_msg=str(what))


def outcome(ours, theirs, what=""):
    """Both calls' results, or None where both raised an exception of torch's class."""
    errors = []
    results = []
    for call in (ours, theirs):
        try:
            results.append(call())
            errors.append(None)
        except Exception as error:          # noqa: BLE001 - compared below
            results.append(None)
            errors.append(error)
    mine, torchs = errors
    assert (mine is None) == (torchs is None), (what, mine, torchs)
    if torchs is not None:
        assert isinstance(mine, type(torchs)), (what, mine, torchs)
        return None
    return results


def pair(array, dtype="float64", requires_grad=True):
    if array is None:
        return None, None
    md, td, _ = DTYPES[dtype]
    return (mg.tensor(array, dtype=md, requires_grad=requires_grad),
            torch.tensor(array, dtype=td, requires_grad=requires_grad))


def backward_both(ys, upstream, dtype="float64"):
    md, td, _ = DTYPES[dtype]
    ys[0].backward(mg.tensor(upstream, dtype=md))
    ys[1].backward(torch.tensor(upstream, dtype=td))


def grads(tensors):
    return [None if t is None else t.grad for t in tensors]


def same_state(tag, ours, theirs):
    assert repr(ours).replace(f", impl='{ours.impl}'", "") == repr(theirs), tag
    assert list(ours.state_dict()) == list(theirs.state_dict()), tag
    for key, value in theirs.state_dict().items():
        close(ours.state_dict()[key], value, 1e-12, (tag, key))
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]


def set_random(module, theirs, rng):
    for name, param in theirs.named_parameters():
        value = rng.standard_normal(tuple(param.shape))
        with mg.no_grad():
            getattr(module, name).copy_(mg.tensor(value))
        with torch.no_grad():
            param.copy_(torch.tensor(value))

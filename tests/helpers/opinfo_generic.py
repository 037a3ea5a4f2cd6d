"""PyTorch's own sample inputs (``op_db`` OpInfos) run through this package with no adapter:
each op resolved by its name (``torch.X`` as ``mg.X``, ``nn.functional.X`` as
``mg.nn.functional.X``, ``special``, ``linalg``, ``fft``, else the Tensor method), its
arguments converted as they are, the results (values, dtype, shape) and the float64
gradients compared with PyTorch's.

``run_op(op, dtype)`` returns ``(ran, failures)``; the sweeps in
tests/engine/test_opinfo_generic.py hold the ops that pass every sample they take.
"""

import functools
import importlib
import itertools
import types

import numpy as np
import torch

import microgradnorm as mg

TOLERANCES = {torch.float64: (1e-7, 1e-9), torch.float32: (1e-4, 1e-5),
              torch.float16: (1e-2, 1e-3), torch.bfloat16: (3e-2, 1e-2),
              torch.complex128: (1e-7, 1e-9), torch.complex64: (1e-4, 1e-5)}
# torch.testing.assert_close's defaults, which torch's own OpInfo tests of the half dtypes use
TORCH_TOLERANCES = {**TOLERANCES, torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5)}


class Unresolved(Exception):
    """The op has no counterpart of the same name here."""


def mg_dtype(dtype):
    return getattr(mg, str(dtype).split(".")[-1])


def to_mg(value):
    """A torch sample's input, args or kwargs, converted as a user would write them here."""
    if isinstance(value, torch.Tensor):
        data = value.detach()
        if data.dtype == torch.bfloat16:
            out = mg.tensor(data.float().numpy().copy()).to(mg.bfloat16)
        else:
            out = mg.tensor(data.numpy().copy())
        if value.requires_grad:
            out.requires_grad_(True)
        return out
    if isinstance(value, torch.dtype):
        return mg_dtype(value)
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, torch.device):
        return str(value)
    if isinstance(value, torch.nn.PairwiseDistance):      # a distance_function argument
        return mg.nn.PairwiseDistance(p=value.norm, eps=value.eps, keepdim=value.keepdim)
    if isinstance(value, torch.memory_format):
        return getattr(mg, str(value).split(".")[-1])
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(to_mg(v) for v in value)
    if isinstance(value, dict):
        return {k: to_mg(v) for k, v in value.items()}
    return value


def resolve(op):
    """The callable here of the same name as ``op``'s function (or its Tensor method)."""
    name = op.name
    if getattr(op.op, "__name__", "") == "<lambda>":      # torch's OpInfo wraps the call:
        return types.FunctionType(op.op.__code__, {**op.op.__globals__, "torch": mg},
                                  None, op.op.__defaults__, op.op.__closure__)  # the same, here
    if name.startswith("__r") or name.startswith("_"):
        if name == "__getitem__" or name.startswith("__r"):     # the reflected operators
            return lambda x, *a, **k: getattr(x, name)(*a, **k)
        raise Unresolved(name)
    parts = name.split(".")
    module = mg
    try:
        for part in parts[:-1]:
            module = getattr(module, part) if hasattr(module, part) else \
                importlib.import_module(f"{module.__name__}.{part}")
    except (AttributeError, ImportError):
        raise Unresolved(name) from None
    found = getattr(module, parts[-1], None)
    if name == "nn.functional.embedding":       # torch's OpInfo passes the weight first
        return lambda weight, ids, *a, **k: found(ids, weight, *a, **k)
    if callable(found) and not isinstance(found, type):     # (mg.float32 is a dtype)
        return found
    if len(parts) == 1 and hasattr(mg.Tensor, name):
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    raise Unresolved(name)


def tensors_of(value):
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_of(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_of(v)]
    return []


def _numpy(t):
    if isinstance(t, torch.Tensor):      # (force: a ZeroTensor gradient, sgn's, reads too)
        t = t.detach().resolve_conj().resolve_neg()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy(force=True)
    t = t.detach()
    return np.asarray(t.float() if str(t.dtype) == "torch.bfloat16" else t)


def compare(ours, theirs, dtype, where="output", tolerances=TOLERANCES):
    """Raise AssertionError where ``ours`` differs from torch's ``theirs``."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, mg.Tensor), f"{where}: {type(ours).__name__}, not a Tensor"
        assert tuple(ours.shape) == tuple(theirs.shape), \
            f"{where}: shape {tuple(ours.shape)} vs {tuple(theirs.shape)}"
        assert str(ours.dtype) == str(theirs.dtype), \
            f"{where}: dtype {ours.dtype} vs {theirs.dtype}"
        rtol, atol = tolerances.get(theirs.dtype, (0, 0))
        a, b = _numpy(ours), _numpy(theirs)
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol, atol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{where}: {type(ours).__name__}, not a tuple"
        assert len(ours) == len(theirs), f"{where}: {len(ours)} outputs vs {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            compare(a, b, dtype, f"{where}[{i}]", tolerances)
    elif isinstance(theirs, float):
        np.testing.assert_allclose(float(ours), theirs, *TOLERANCES[torch.float64],
                                   err_msg=where)
    else:
        assert ours == theirs, f"{where}: {ours!r} vs {theirs!r}"


def _differentiable(out):
    if isinstance(out, torch.Tensor):
        return [out] if out.requires_grad and out.dtype.is_floating_point else []
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _differentiable(o)]
    return []


def _pick(ours, theirs, chosen):
    # ours' tensors at the positions of torch's differentiable outputs
    if isinstance(theirs, torch.Tensor):
        return [ours] if any(theirs is c for c in chosen) else []
    if isinstance(theirs, (tuple, list)):
        return [t for a, b in zip(ours, theirs) for t in _pick(a, b, chosen)]
    return []


# ops whose values are random draws or uninitialised memory: their shape and dtype compared
RANDOM = ("bernoulli", "normal", "rand", "randn", "randint", "rand_like", "randn_like",
          "randint_like", "multinomial", "empty", "empty_like", "empty_strided", "new_empty",
          "new_empty_strided", "empty_permuted", "uniform", "cauchy", "exponential",
          "geometric", "log_normal", "nn.functional.dropout", "nn.functional.dropout2d",
          "nn.functional.dropout3d", "nn.functional.alpha_dropout",
          "nn.functional.feature_alpha_dropout", "nn.functional.rrelu")


def _shapes(value):
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        return (tuple(value.shape), str(value.dtype).split(".")[-1])
    if isinstance(value, (tuple, list)):
        return [_shapes(v) for v in value]
    return type(value).__name__


def run_sample(function, op, sample, dtype, tolerances=TOLERANCES):
    """Compare one sample: forward, then (float64) the gradients of its leaves."""
    # a view made under no_grad of a leaf: torch's autograd sends it nothing, a leaf here
    sample = sample.transform(lambda t: t.detach().requires_grad_() if isinstance(
        t, torch.Tensor) and t.requires_grad and t.grad_fn is None and t._base is not None
        else t)
    expected = op(sample.input, *sample.args, **sample.kwargs)
    mg_input, mg_args = to_mg(sample.input), to_mg(sample.args)
    mg_kwargs = to_mg(sample.kwargs)
    mg.manual_seed(42)          # torch's OpInfos seed 42 before an op that draws (dropout)
    got = function(mg_input, *mg_args, **mg_kwargs)
    if op.name in RANDOM:
        assert _shapes(got) == _shapes(expected), (_shapes(got), _shapes(expected))
        return
    compare(got, expected, dtype, tolerances=tolerances)
    if dtype != torch.float64:
        return
    outs = _differentiable(expected)
    leaves = [t for t in tensors_of((sample.input, sample.args, sample.kwargs))
              if t.requires_grad]
    if not outs or not leaves:
        return
    mg_outs = _pick(got, expected, outs)
    mg_leaves = [t for t in tensors_of((mg_input, mg_args, mg_kwargs))
                 if isinstance(t, mg.Tensor) and t.requires_grad]
    assert len(mg_leaves) == len(leaves), "leaves"
    rng = np.random.default_rng(0)
    upstream = [rng.standard_normal(tuple(o.shape)) for o in outs]
    try:
        theirs = torch.autograd.grad(outs, leaves, [torch.tensor(u) for u in upstream],
                                     allow_unused=True)
    except RuntimeError:            # torch's own backward refuses the sample
        return
    ours = mg.autograd.grad(mg_outs, mg_leaves, [mg.tensor(u) for u in upstream],
                            allow_unused=True)
    for i, (a, b, leaf) in enumerate(zip(ours, theirs, mg_leaves)):
        a = np.zeros(leaf.shape) if a is None else _numpy(a)
        b = np.zeros(tuple(leaf.shape)) if b is None else _numpy(b)
        tolerance = TOLERANCES.get(leaves[i].dtype, TOLERANCES[torch.float64])
        np.testing.assert_allclose(a, b, *tolerance, equal_nan=True, err_msg=f"gradient {i}")


def describe(sample):
    def short(v):
        if isinstance(v, torch.Tensor):
            return f"T{tuple(v.shape)}"
        if isinstance(v, (list, tuple)):
            return type(v)(short(x) for x in v)
        return v
    return f"input={short(sample.input)} args={short(sample.args)} " \
           f"kwargs={ {k: short(v) for k, v in sample.kwargs.items()} }"


def run_op(op, dtype=torch.float64, max_samples=40, tolerances=TOLERANCES, max_numel=None,
           first=0):
    """``(ran, failures)``: how many samples ran and 'sample i ...: error' for the others
    (the values within ``tolerances``, by dtype; a sample holding a tensor of more than
    ``max_numel`` elements left out), samples ``first`` to ``max_samples`` (not included).
    Raises Unresolved when the op has no counterpart here."""
    function = resolve(op)
    ran, failures = 0, []
    requires_grad = dtype == torch.float64 and op.supports_autograd
    try:
        samples = list(itertools.islice(
            op.reference_inputs("cpu", dtype, requires_grad=requires_grad), first,
            max_samples))
    except (RuntimeError, ValueError):     # torch's generator asks grad of a bool tensor
        samples = list(itertools.islice(
            op.reference_inputs("cpu", dtype, requires_grad=False), first, max_samples))
    for i, sample in enumerate(samples, first):
        if max_numel is not None and any(
                t.numel() > max_numel for t in tensors_of((sample.input, sample.args,
                                                            sample.kwargs))):
            continue
        sample = taken(op, sample)
        if sample is None:
            continue
        ran += 1
        try:
            run_sample(function, op, sample, dtype, tolerances)
        except Exception as error:
            message = str(error).strip().split("\n")
            failures.append(f"sample {i} {describe(sample)}: {type(error).__name__}: "
                            f"{' '.join(message)[:300]}")
    return ran, failures


def taken(op, sample):
    """``sample`` as the sweeps run it (a view among its tensors made a leaf of its own:
    torch's autograd gives a view that is a leaf no gradient), or None where torch's own
    function refuses it (not ours to test)."""
    if any(t._base is not None for t in tensors_of((sample.input, sample.args,
                                                      sample.kwargs))):
        sample = sample.transform(lambda t: t.detach().clone().requires_grad_(
            t.requires_grad) if isinstance(t, torch.Tensor) else t)
    try:
        op(sample.input, *sample.args, **sample.kwargs)
    except Exception:
        return None
    return sample


@functools.lru_cache(maxsize=None)
def op_table():
    """{(name, variant): OpInfo} of torch's op_db (imported once; it takes seconds)."""
    from torch.testing._internal.common_methods_invocations import op_db
    return {(op.name, op.variant_test_name): op for op in op_db}

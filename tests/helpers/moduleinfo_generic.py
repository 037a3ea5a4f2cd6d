"""PyTorch's own module samples (``module_db`` ModuleInfos) run through this package with no
adapter: each class found in ``nn`` by its name, built in both libraries from the same
converted constructor arguments (a module argument, such as TransformerEncoder's layer, is
built here from the arguments torch's was built with), torch's parameters and buffers loaded
into ours, then in training and in eval mode the outputs (nested tuples too, and which of
them require grad), the buffers after the call, and the ``.grad`` of the floating inputs and
of every parameter after ``backward`` of a fixed random weighting of the outputs (optionally
the second-order gradients too) compared with PyTorch's. Modules that draw at random in
training (dropout, RReLU) are compared by their outputs' shapes and dtypes there.

``run_module(info, dtype)`` returns ``(ran, failures)``; tests/nn/test_moduleinfo_generic.py
holds the (class, dtype) keys that pass every sample.
"""

import contextlib
import dataclasses
import functools
import itertools
import warnings
import weakref

import numpy as np
import torch

import microgradnorm as mg
from opinfo_generic import (_differentiable, _pick, _shapes, compare, describe, tensors_of,
                            to_mg)

# modules whose training-mode values are random draws: their shapes and dtypes compared
RANDOM = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
          "FeatureAlphaDropout", "RReLU", "FractionalMaxPool2d", "FractionalMaxPool3d")

_BUILT_WITH = weakref.WeakKeyDictionary()        # torch module -> (args, kwargs) it was built of


@contextlib.contextmanager
def _recording_construction():
    """Remember the constructor arguments of the torch modules (of the classes ``nn`` has)
    made inside the block; the outermost ``__init__`` of an instance is the one recorded."""
    originals = {cls: cls.__dict__["__init__"] for cls in vars(torch.nn).values()
                 if isinstance(cls, type) and issubclass(cls, torch.nn.Module)
                 and hasattr(mg.nn, cls.__name__) and "__init__" in cls.__dict__}

    def recording(init):
        @functools.wraps(init)
        def __init__(self, *args, **kwargs):
            _BUILT_WITH.setdefault(self, (args, kwargs))
            init(self, *args, **kwargs)
        return __init__
    for cls, init in originals.items():
        cls.__init__ = recording(init)
    try:
        yield
    finally:
        for cls, init in originals.items():
            cls.__init__ = init


def convert(value, memo):
    """``to_mg`` that keeps one tensor one tensor (MultiheadAttention's query is its key),
    builds torch modules and option records (``nn.LinearCrossEntropyOptions``) here and finds
    torch's functions (``F.gelu``) by name."""
    if isinstance(value, torch.Tensor):
        if id(value) not in memo:
            memo[id(value)] = to_mg(value)
        return memo[id(value)]
    if isinstance(value, torch.nn.Module):
        args, kwargs = _BUILT_WITH[value]
        return getattr(mg.nn, type(value).__name__)(*convert(args, memo),
                                                    **convert(kwargs, memo))
    if dataclasses.is_dataclass(value) and hasattr(mg.nn, type(value).__name__):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return getattr(mg.nn, type(value).__name__)(**convert(fields, memo))   # its options
    name = getattr(value, "__name__", "")
    if callable(value) and getattr(torch.nn.functional, name, None) is value:
        return getattr(mg.nn.functional, name)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(convert(v, memo) for v in value)
    if isinstance(value, dict):
        return {k: convert(v, memo) for k, v in value.items()}
    return to_mg(value)


def _unique(tensors):
    seen = {}
    for t in tensors:
        seen.setdefault(id(t), t)
    return list(seen.values())


def _build(info, sample, dtype, training, memo):
    """(torch's module, ours), torch's state loaded into ours."""
    args, kwargs = sample.constructor_input.args, sample.constructor_input.kwargs
    torch.manual_seed(0)            # torch's parameters: the same ones every run
    theirs = info.module_cls(*args, **kwargs).to(dtype)
    ours = getattr(mg.nn, info.module_cls.__name__)(*convert(args, memo),
                                                    **convert(kwargs, memo))
    ours = ours.to(to_mg(dtype))
    if info.is_lazy:        # torch's shapes from the input, without a forward that counts
        theirs._infer_parameters(theirs, sample.forward_input.args,
                                 sample.forward_input.kwargs)
    theirs.train(training)
    ours.train(training)
    state = theirs.state_dict()
    if state:
        ours.load_state_dict({k: to_mg(v) for k, v in state.items()})
    return theirs, ours


def _requires_grad(value):
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        return value.requires_grad
    if isinstance(value, (tuple, list)):
        return [_requires_grad(v) for v in value]
    return None


def run_sample(info, sample, dtype, training, second_order=False):
    """Compare one ModuleInput: outputs, buffers after the call, and the ``.grad`` that
    ``backward`` of a fixed random weighting of the outputs leaves on the floating inputs and
    on every parameter (with ``second_order``, then the gradients of a weighting of those
    first gradients, taken with ``create_graph=True``)."""
    memo = {}
    theirs, ours = _build(info, sample, dtype, training, memo)
    forward = sample.forward_input
    our_args, our_kwargs = convert(forward.args, memo), convert(forward.kwargs, memo)
    for t in tensors_of((forward.args, forward.kwargs)):
        if t.requires_grad and t.grad_fn is not None:
            t.retain_grad()         # a computed sample input: a leaf once converted
    torch.manual_seed(0)
    expected = theirs(*forward.args, **forward.kwargs)
    mg.manual_seed(0)
    got = ours(*our_args, **our_kwargs)
    if training and info.module_cls.__name__ in RANDOM:
        assert _shapes(got) == _shapes(expected), (_shapes(got), _shapes(expected))
        return
    compare(got, expected, dtype)
    assert _requires_grad(got) == _requires_grad(expected), \
        f"requires_grad {_requires_grad(got)} vs {_requires_grad(expected)}"
    our_state = ours.state_dict()
    for key, value in theirs.state_dict().items():
        compare(our_state[key], value, dtype, f"state {key} after the call")
    outs = _differentiable(expected)
    inputs = [t for t in _unique(tensors_of((forward.args, forward.kwargs)))
              if t.requires_grad and t.dtype.is_floating_point]
    leaves = dict(theirs.named_parameters(), **{f"input {i}": t for i, t in enumerate(inputs)})
    our_leaves = dict(ours.named_parameters(),
                      **{f"input {i}": memo[id(t)] for i, t in enumerate(inputs)})
    if not outs or not leaves:
        return
    rng = np.random.default_rng(0)
    upstream = [rng.standard_normal(tuple(o.shape)) for o in outs]
    try:
        torch.autograd.backward(outs, [torch.tensor(u, dtype=o.dtype)
                                       for u, o in zip(upstream, outs)],
                                create_graph=second_order)
    except RuntimeError:            # torch's own backward refuses the sample
        return
    mg.autograd.backward(_pick(got, expected, outs),
                         [mg.tensor(u).to(to_mg(o.dtype)) for u, o in zip(upstream, outs)],
                         create_graph=second_order)
    for name, leaf in leaves.items():
        if leaf.grad is None:
            assert our_leaves[name].grad is None or not our_leaves[name].grad.any(), \
                f"gradient of {name}: torch's is None"
            continue
        mine = our_leaves[name].grad
        compare(mg.zeros(tuple(leaf.shape)).to(to_mg(leaf.dtype)) if mine is None else mine,
                leaf.grad, dtype, f"gradient of {name}")
    if second_order:
        _compare_second_order(leaves, our_leaves, dtype)


def _compare_second_order(leaves, our_leaves, dtype):
    firsts = [n for n, t in leaves.items() if t.grad is not None and t.grad.requires_grad]
    if not firsts:
        return
    rng = np.random.default_rng(1)
    weights = {n: rng.standard_normal(tuple(leaves[n].shape)) for n in firsts}
    total = sum((leaves[n].grad * torch.tensor(weights[n])).sum() for n in firsts)
    ours = sum((our_leaves[n].grad * mg.tensor(weights[n])).sum() for n in firsts)
    if not total.requires_grad:         # the first gradients are constants
        return
    try:
        theirs = torch.autograd.grad(total, list(leaves.values()), allow_unused=True)
    except RuntimeError:            # torch has no second derivative for the sample
        return
    # torch's first gradients of a piecewise-linear module require grad (its backward
    # formulas take the input); here they are constants: no second-order gradient, zeros
    mine = (mg.autograd.grad(ours, list(our_leaves.values()), allow_unused=True)
            if ours.requires_grad else [None] * len(theirs))
    for name, a, b, leaf in zip(leaves, mine, theirs, leaves.values()):
        compare(mg.zeros(tuple(leaf.shape)).to(to_mg(leaf.dtype)) if a is None else a,
                torch.zeros_like(leaf) if b is None else b, dtype,
                f"second-order gradient of {name}")


def run_module(info, dtype=torch.float64, max_samples=16, second_order=False):
    """``(ran, failures)`` over training and eval mode: how many samples ran and
    'train|eval sample i ...: error' for the others. At most ``max_samples`` of each mode,
    taken at even steps through torch's list."""
    ran, failures = 0, []
    for training in (True, False):
        torch.manual_seed(0)        # the samples' values: the same ones every run
        with _recording_construction():
            samples = info.module_inputs_func(info, device="cpu", dtype=dtype,
                                              requires_grad=True, training=training)
        step = -(-len(samples) // max_samples)         # spread over the whole list
        for i, sample in itertools.islice(enumerate(samples), 0, None, step):
            if not _torch_takes(info, sample, dtype, training):
                continue
            ran += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")    # the same notes in both libraries
                    run_sample(info, sample, dtype, training, second_order)
            except Exception as error:
                message = " ".join(str(error).strip().split("\n"))[:300]
                failures.append(f"{'train' if training else 'eval'} sample {i} "
                                f"{describe_module(sample)}: {type(error).__name__}: "
                                f"{message}")
    return ran, failures


def _torch_takes(info, sample, dtype, training):
    """Whether torch itself runs the sample (one it refuses is not ours to test)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = info.module_cls(*sample.constructor_input.args,
                                     **sample.constructor_input.kwargs).to(dtype)
            module.train(training)
            forward = sample.forward_input
            with torch.no_grad():
                module(*[a.clone() if isinstance(a, torch.Tensor) else a
                         for a in forward.args], **forward.kwargs)
    except Exception:
        return False
    return True


def describe_module(sample):
    constructor = sample.constructor_input
    forward = type("Forward", (), {})()

    def named(v):                   # a module argument by its class, not its whole repr
        return type(v).__name__ if isinstance(v, torch.nn.Module) else v
    forward.input, forward.args = tuple(named(v) for v in constructor.args), ()
    forward.kwargs = {k: named(v) for k, v in constructor.kwargs.items()}
    built = describe(forward).replace("input=", "module")
    forward.input, forward.args, forward.kwargs = (), sample.forward_input.args, \
        sample.forward_input.kwargs
    return f"{built} forward {describe(forward).replace('input=() ', '')}"


@functools.lru_cache(maxsize=None)
def module_table():
    """{class name: ModuleInfo} of torch's module_db for the classes ``nn`` has."""
    from torch.testing._internal.common_modules import module_db
    return {info.module_cls.__name__: info for info in module_db
            if hasattr(mg.nn, info.module_cls.__name__)}

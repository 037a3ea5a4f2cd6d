"""Norm test cases drawn from the registry: inputs, calls, PyTorch's twin and comparisons for
any ``Norm`` in ``microgradnorm.norms.NORMS``, so a norm added there is tested by the generic
tests without a line of its own.

    from norm_cases import SPECS, inputs, run, run_torch, assert_close

A run gives one flat {name: array} dict: its outputs (``spec.outputs``), ``grad <input>``
for every input and, for a norm with running statistics, their values after the call.
"""

import itertools

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

import microgradnorm as mg
from microgradnorm.norms import NORMS

IMPLS = ("fused", "composite")
SPECS = list(NORMS.values())
FLOAT64_TOL = 1e-10


def spec_id(spec):
    return spec.name


def trainings(spec):
    """The modes that differ: training and eval for a norm with running statistics."""
    return (True, False) if spec.running else (True,)


def param_subsets(spec):
    """Every subset of the optional learned inputs: with and without each of them."""
    return [subset for size in range(len(spec.optional_params) + 1)
            for subset in itertools.combinations(spec.optional_params, size)]


def fits(spec, shape, training=True):
    """Whether ``spec`` takes an x of ``shape``: the dims it declares (``Norm.ndim``) and,
    for statistics per channel in training, more than one value per channel."""
    fewest, most = spec.ndim
    if len(shape) < fewest or (most is not None and len(shape) > most):
        return False
    return not (spec.per_channel and training) or np.prod(shape) // shape[1] >= 2


def at_least(spec, shape):
    """``shape`` with leading dims of 1 added up to the fewest dims ``spec`` takes (a batch
    of one: the last dims keep their values in order)."""
    return (1,) * max(0, spec.ndim[0] - len(shape)) + tuple(shape)


def accepts(spec, shape, training=True):
    """Whether the norm itself takes an x of ``shape``: not a statistic of one value that
    PyTorch refuses too (a group of one value; the parity test checks each refusal against
    PyTorch's), whatever the declaration cannot say."""
    arrays, running = inputs(spec, shape)
    try:
        with mg.no_grad():
            spec.run(tensors_of(arrays), "fused", running, training)
    except ValueError:
        return False
    return True


def statistics_axes(spec, ndim):
    """The axes one statistic runs over: every axis but the channels' (``statistics``
    "channel"), or the last one."""
    return (0,) + tuple(range(2, ndim)) if spec.per_channel else (ndim - 1,)


def inputs(spec, shape, params=None, seed=0, dtype=np.float64):
    """({name: array}, running statistics or None) for an x of ``shape``, with only the
    optional learned inputs named in ``params`` (default: all; the required ones always).
    Running statistics are drawn away from (0, 1) so that eval mode visibly uses them."""
    params = spec.optional_params if params is None else params
    arrays = {name: a for name, a in spec.make_inputs(shape, seed=seed).items()
              if name not in spec.optional_params or name in params}
    running = spec.running_stats(arrays)
    if running is not None:
        rng = np.random.default_rng(seed + 77)
        running = {name: a + rng.uniform(0.5, 2.0, a.shape) for name, a in running.items()}
    return cast(arrays, dtype), cast(running, dtype)


def cast(arrays, dtype):
    return None if arrays is None else {name: a.astype(dtype) for name, a in arrays.items()}


def upstream(spec, shape, seed=0, dtype=np.float64):
    """One upstream gradient per output."""
    rng = np.random.default_rng(seed + 1000)
    return [rng.standard_normal(shape).astype(dtype) for _ in spec.outputs]


def tensors_of(arrays):
    return {name: mg.tensor(a.copy(), requires_grad=True) for name, a in arrays.items()}


def run(spec, impl, arrays, running=None, training=True, grads=None, **options):
    """Outputs, ``grad <input>`` for upstream ``grads`` (if given) and running statistics
    after the call, of ``spec`` with ``impl`` on copies of ``arrays`` and ``running``."""
    t = tensors_of(arrays)
    running = None if running is None else {n: a.copy() for n, a in running.items()}
    outputs = spec.run(t, impl, running, training, **options)
    named = {name: o.detach().numpy() for name, o in zip(spec.outputs, outputs)}
    if grads is not None:
        named.update({f"grad {n}": g.numpy() for n, g in zip(t, mg.grad(outputs, list(t.values()),
                                                                          grads))})
    return named | (running or {})


def run_torch(torch, spec, arrays, running=None, training=True, grads=None, **options):
    """``run``'s dict from PyTorch (``spec.run_torch``) on the same values; ``options``:
    ``eps``."""
    t = {name: torch.tensor(a, requires_grad=True) for name, a in arrays.items()}
    running = None if running is None else {n: torch.tensor(a.copy()) for n, a in
                                            running.items()}
    outputs = spec.run_torch(torch.nn.functional, t, running, training, **options)
    named = {name: o.detach().numpy() for name, o in zip(spec.outputs, outputs)}
    if grads is not None:
        torch_grads = torch.autograd.grad(outputs, list(t.values()),
                                          [torch.tensor(g) for g in grads])
        named.update({f"grad {n}": g.numpy() for n, g in zip(t, torch_grads)})
    return named | {name: a.numpy() for name, a in (running or {}).items()}


def assert_close(actual, expected, tol, what=""):
    """Every named array of ``actual`` within ``tol`` (absolute) of ``expected``."""
    assert set(actual) == set(expected), f"{what}{sorted(actual)} != {sorted(expected)}"
    for name, e in expected.items():
        a = actual[name]
        assert a is not None, f"{what}{name}: missing"
        assert a.shape == e.shape, f"{what}{name}: shape {a.shape} != {e.shape}"
        # (values compared as arrays: a NumPy reduction of a Tensor is torch's TypeError)
        diff = np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(e, dtype=np.float64)),
                      initial=0.0)
        assert diff <= tol, f"{what}{name}: max |difference| {diff:.3g} > {tol:g}"


@st.composite
def cases(draw, spec, max_dims=4, max_side=6):
    """(shape, params, training, seed) that ``spec`` takes: its fewest dims to ``max_dims``
    (or its most), sides 1..max_side, any subset of the optional learned inputs."""
    fewest, most = spec.ndim
    ndim = draw(st.integers(fewest, max_dims if most is None else min(most, max_dims)))
    shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=ndim, max_size=ndim)))
    training = draw(st.sampled_from(trainings(spec))) if fits(spec, shape) else False
    assume(accepts(spec, shape, training))
    params = draw(st.sampled_from(param_subsets(spec)))
    return shape, params, training, draw(st.integers(0, 2**31 - 1))

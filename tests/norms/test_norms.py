"""Every norm of ``microgradnorm.norms.NORMS``, both implementations, checked the same way:
against PyTorch (forward, every gradient, running statistics), fused against composite over
hypothesis-drawn shapes in float64 and in low precision, finite-difference gradcheck,
zero-size input, extreme inputs, and the graph each implementation records. A norm added
to ``NORMS`` is tested here without a line of its own; its bad input is tested in
test_norm_errors.py, what is particular to one norm in test_norm_formulas.py.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from norm_cases import (FLOAT64_TOL, IMPLS, SPECS, assert_close, at_least, cases, fits,
                        inputs, param_subsets, run, run_torch, spec_id, statistics_axes,
                        tensors_of, trainings, upstream)

import microgradnorm as mg
from microgradnorm import dtypes
from microgradnorm.norms.arguments import machine_eps
from microgradnorm.norms.group_norm import groups_for

# bfloat16 (ml_dtypes, optional) joins every low-precision family when it is installed.
BFLOAT16 = pytest.param(dtypes.bfloat16, id="bfloat16",
                        marks=pytest.mark.skipif(not dtypes.has_bfloat16(),
                                                 reason="bfloat16 needs ml_dtypes"))


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def case_id(spec, shape, params, training):
    mode = "" if len(trainings(spec)) == 1 else "-train" if training else "-eval"
    return (f"{spec.name}-{'x'.join(map(str, shape))}-{'+'.join(params) or 'no_affine'}"
            f"{mode}")


# ----- 1. parity with PyTorch ---------------------------------------------------------------
PARITY_SHAPES = [(5, 8), (8, 3), (2, 3, 4), (2, 3, 4, 5), (2, 2, 3, 4),
                 (7,),                          # a single row
                 (6, 1), (1, 6), (3, 1, 6),     # D = 1 (or one channel), batch 1, sequence 1
                 (1, 3, 5), (1, 1, 1)]
PARITY_CASES = [pytest.param(spec, shape, params, training,
                             id=case_id(spec, shape, params, training))
                for spec in SPECS for shape in PARITY_SHAPES for params in param_subsets(spec)
                for training in trainings(spec) if fits(spec, shape, training)]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec, shape, params, training", PARITY_CASES)
def test_matches_torch_forward_every_grad_and_running_stats(torch, spec, shape, params,
                                                            training, impl):
    arrays, running = inputs(spec, shape, params, seed=len(shape))
    grads = upstream(spec, shape, seed=3)
    try:
        theirs = run_torch(torch, spec, arrays, running, training, grads)
    except (ValueError, RuntimeError) as refusal:    # e.g. one value per statistic: ours
        with pytest.raises(type(refusal)):           # refuses it too, with torch's class
            run(spec, impl, arrays, running, training, grads)
        return
    assert_close(run(spec, impl, arrays, running, training, grads), theirs, FLOAT64_TOL)


# ----- 2. composite and fused agree ---------------------------------------------------------
def both_impls(spec, case, dtype=np.float64, change=None):
    """{impl: run(...)} on one drawn case, inputs cast to ``dtype`` (after ``change``)."""
    shape, params, training, seed = case
    arrays, running = inputs(spec, shape, params, seed)
    arrays = change(arrays) if change else arrays
    arrays = {name: a.astype(dtype) for name, a in arrays.items()}
    running = None if running is None else {n: a.astype(dtype) for n, a in running.items()}
    grads = upstream(spec, shape, seed, dtype)
    return {impl: run(spec, impl, arrays, running, training, grads) for impl in IMPLS}


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_composite_matches_fused_float64(spec, data):
    sides = both_impls(spec, data.draw(cases(spec)))
    assert_close(sides["composite"], sides["fused"], FLOAT64_TOL)


# About 20 units in the last place of float16 (2^-11), 64 of bfloat16 (2^-8): the composite
# graph rounds to bfloat16 after each of its ~10 ops, and with 2-element rows (x̂ = ±1, dx
# a cancellation to 0) those roundings add up to 25-55 units of the gradient's scale (55:
# Add + LayerNorm, rows (5, 2), its sum x + residual rounded first).
LOW_PRECISION = [pytest.param(np.float32, 1e-5, id="float32"),
                 pytest.param(np.float16, 1e-2, id="float16"),
                 pytest.param(dtypes.bfloat16, 2.5e-1, id="bfloat16",
                              marks=BFLOAT16.marks)]


def assert_low_precision_close(spec, named, reference, dtype, tol, what):
    """Within tol·max(1, |reference|) elementwise; outputs and grads keep their dtype.

    A parameter gradient is a sum over every row (or every N·L value of a channel): the
    composite graph forms it in the low dtype, so its rounding error scales with the largest
    terms of the sum, not with the sum itself, which may cancel to nearly 0. Its tolerance
    is therefore normwise: tol·max(1, max |reference|) for the whole tensor.
    """
    # a declared scalar (DyT's α) sums every element's term: its rounding error grows with
    # the square root of their count, a random walk, where a per-feature one sums one row each
    scalars = {f"grad {i.name}" for i in spec.inputs_of("scalar")}
    count = max((r.size for r in reference.values()), default=1)
    for name, ref in reference.items():
        got = named[name]
        assert got.dtype == dtype, f"{what}{name}: dtype {got.dtype}, expected {dtype}"
        reduced = name in {f"grad {p}" for p in spec.params}
        scale = np.max(np.abs(ref), initial=0) if reduced else np.abs(ref)
        if name in scalars:
            scale = np.maximum(1, scale) * np.sqrt(count)
        excess = np.abs(got.astype(np.float64) - ref) - tol * np.maximum(1, scale)
        assert excess.max(initial=0) <= 0, (
            f"{what}{name}: max |difference| {np.max(np.abs(got - ref)):.3g} over tolerance")


def spread(spec, arrays):
    """x plus a fixed ramp over every position one statistic reduces (a row's last axis,
    a channel's N and L together, or a GroupNorm group's C/G channels and every position),
    so no row, channel or group is (nearly) constant: a float16 row whose variance is ~eps
    is ill-conditioned for any implementation that computes in float16. (A ramp along N
    alone left a BatchNorm channel with N = 1 unspread; one along the last axis alone left
    a group of (N, C, 1) unspread, and one across C barely spread a group of two channels.)

    The low-precision bound, tol·rstd, is the error model of a statistic whose |mean| is
    within a few std of it: a composite graph rounds the mean to the low dtype, which moves
    every centred value by up to u·|mean|/2, and its backward (Div, then Sqrt) multiplies
    that shift by rstd²·mean(g): an error up to u·rstd·(|mean|·rstd)·|g|, not u·rstd·|g|.
    Unspread, bfloat16 groups of two values a few ulps apart (|mean|·rstd 40 to 90, rstd
    20 to 50) passed the bound. Spread, every statistic has |mean|·rstd of order 1, where
    the bound holds; the fused kernels, whose statistics are float32's, meet it either way."""
    x = arrays[spec.x]
    if "num_groups" in spec.defaults:       # a statistic per sample and group of channels
        n, groups = x.shape[0], groups_for(x.shape[1])          # the spec's own num_groups
        ramp = np.linspace(-2, 2, x.size // (n * groups))         # (C/G·positions,)
        return arrays | {spec.x: (x.reshape(n, groups, -1) + ramp).reshape(x.shape)}
    axes = statistics_axes(spec, x.ndim)
    reduced = [x.shape[a] for a in axes]
    ramp = np.linspace(-2, 2, int(np.prod(reduced))).reshape(reduced)
    return arrays | {spec.x: x + np.expand_dims(ramp, [a for a in range(x.ndim) if a not in axes])}


def largest_rstd(spec, arrays, running, training, **options):
    """max(1, the largest 1/sqrt(statistic + eps) the fused node saves): the composite
    graph's intermediate gradients are rstd·g large and cancel (for D = 1 exactly), so its
    rounding error grows with rstd. 1 for a norm that saves no rstd."""
    outputs = spec.run(tensors_of(arrays), "fused", running, training, **options)
    rstd = dict(outputs[0].grad_fn.named_saved_arrays()).get("rstd")
    return max(1.0, float(np.max(rstd, initial=0))) if rstd is not None else 1.0


@pytest.mark.parametrize("dtype, tol", LOW_PRECISION)
@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_low_precision_close_to_float64_and_keeps_dtype(spec, dtype, tol, data):
    shape, params, training, seed = case = data.draw(cases(spec))
    low = both_impls(spec, case, dtype, lambda a: spread(spec, a))
    # The float64 computation on exactly the same (rounded) values.
    arrays, running = inputs(spec, shape, params, seed)
    arrays = {n: a.astype(dtype).astype(np.float64) for n, a in spread(spec, arrays).items()}
    added = [i.name for i in spec.inputs_of("like-x")]
    if added:
        # s = x + residual is an output: every implementation rounds it to dtype before the
        # norm reads it, so the exact computation starts from that rounded s (x = s, residual
        # 0: each gets the gradient of s). A drawn row whose rounding moves s by a large part
        # of its spread would otherwise be charged to the norm.
        s = sum(arrays[name] for name in added) + arrays[spec.x]
        s = s.astype(dtype).astype(np.float64)
        arrays |= {spec.x: s} | {name: np.zeros_like(s) for name in added}
    running = None if running is None else {n: a.astype(dtype).astype(np.float64)
                                            for n, a in running.items()}
    grads = [g.astype(np.float64) for g in upstream(spec, shape, seed, dtype)]
    # an eps that defaults to a machine epsilon (RMSNorm's) is the low dtype's here too
    same_eps = {"eps": machine_eps(dtype)} if spec.has_eps and spec.eps is None else {}
    reference = run(spec, "fused", arrays, running, training, grads, **same_eps)
    conditioning = largest_rstd(spec, arrays, running, training, **same_eps)
    if dtype == np.float16:
        # The composite graph's intermediate gradients grow like rstd³·|x| (Div, then Sqrt
        # backward): past rstd ~20 they pass float16's 65504 and become inf, a range limit
        # of float16 arithmetic, not an error of either implementation.
        assume(conditioning <= 20)
    for impl in IMPLS:
        assert_low_precision_close(spec, low[impl], reference, dtype, tol * conditioning,
                                   f"{impl} ")


@pytest.mark.parametrize("dtype", [np.float16, BFLOAT16, np.float32, np.float64])
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_backward_fills_grad_with_each_tensors_dtype(spec, impl, dtype):
    arrays, _ = inputs(spec, (4, 3, 5), seed=2, dtype=dtype)
    t = tensors_of(arrays)
    outputs = spec.run(t, impl, None, training=True)
    sum(o.sum() for o in outputs).backward()
    for o in outputs:
        assert o.dtype == dtype and o.shape == (4, 3, 5)
    for name, tensor in t.items():
        assert tensor.grad is not None, name
        assert tensor.grad.dtype == dtype and tensor.grad.shape == tensor.shape, name
        assert np.all(np.isfinite(tensor.grad)), name


# ----- 3. finite-difference gradcheck -------------------------------------------------------
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_gradcheck(spec, impl, data):
    shape, params, training, seed = data.draw(cases(spec, max_dims=3, max_side=4))
    arrays, running = inputs(spec, shape, params, seed)
    t = tensors_of(arrays)

    def fn(*tensors):
        # In training the running statistics change on every call but never reach the output.
        return spec.run(dict(zip(t, tensors)), impl, running, training)

    assert mg.gradcheck(fn, list(t.values()))


# ----- 4. zero-size input: an empty result, zero parameter gradients, nothing updated --------
ZERO_SIZE = [(0, 4), (2, 0), (3, 2, 0), (0, 3, 2)]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape", ZERO_SIZE, ids=str)
@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_zero_size_input(spec, shape, impl):
    if not fits(spec, shape, training=False):
        pytest.skip(f"{spec.name} takes {spec.shape_text}")
    for training in trainings(spec):
        arrays, running = inputs(spec, shape)
        before = None if running is None else {n: a.copy() for n, a in running.items()}
        t = tensors_of(arrays)
        outputs = spec.run(t, impl, running, training)
        assert [o.shape for o in outputs] == [shape] * len(spec.outputs)
        sum(o.sum() for o in outputs).backward()
        for name, tensor in t.items():
            assert tensor.grad.shape == tensor.shape and not tensor.grad.numpy().any(), name
        for name, array in (running or {}).items():
            assert np.array_equal(array, before[name]), f"{name} moved"


# ----- 5. extreme inputs stay finite ----------------------------------------------------------
def rows(values, count=3):
    return np.tile(np.asarray(values, dtype=np.float64), (count, 1))


EXTREME_INPUTS = {
    "constant rows": rows([0.7] * 6),
    "all zeros": np.zeros((3, 6)),
    "tiny scale 1e-10": np.random.default_rng(0).standard_normal((3, 6)) * 1e-10,
    "huge scale 1e10": np.random.default_rng(1).standard_normal((3, 6)) * 1e10,
    "mixed 1e-8 and 1e8": rows([1e-8, 1e8, -1e-8, -1e8, 1e-8, 1e8]),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@pytest.mark.parametrize("case", EXTREME_INPUTS, ids=str)
def test_extreme_inputs_give_finite_outputs_and_grads(case, spec, impl, dtype):
    # The values run along each statistic: a row, or (transposed) a channel.
    x = EXTREME_INPUTS[case].T.copy() if spec.per_channel else EXTREME_INPUTS[case]
    x = x.reshape(at_least(spec, x.shape))
    arrays, _ = inputs(spec, x.shape, dtype=dtype)
    arrays[spec.x] = x.astype(dtype)
    for added in spec.inputs_of("like-x"):
        arrays[added.name] = np.zeros_like(x, dtype)         # x + residual is x itself
    named = run(spec, impl, arrays, None, True, upstream(spec, x.shape, dtype=dtype))
    assert named["output"].dtype == dtype
    for name, value in named.items():
        assert np.all(np.isfinite(value)), name


# ----- 6. the graph: one fused node against the composite's many ------------------------------
def graph_of(spec, impl, shape=(16, 64)):
    arrays, running = inputs(spec, at_least(spec, shape))
    return mg.graph_stats(*spec.run(tensors_of(arrays), impl, running, True))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_graph_stats_fused_is_one_node_and_saves_no_more(spec):
    fused, composite = graph_of(spec, "fused"), graph_of(spec, "composite")
    functions = spec.fused if isinstance(spec.fused, tuple) else (spec.fused,)
    assert fused.nodes == 1
    assert set(fused.by_op) <= {f.__name__ for f in functions}
    assert composite.nodes > 1
    assert sum(composite.by_op.values()) == composite.nodes
    assert fused.saved_bytes <= composite.saved_bytes


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_compare_reports_one_fused_node_and_tiny_differences(spec):
    result = mg.compare(spec.name, (4, 6, 8), repeat=1)
    assert result.fused.nodes == 1
    assert result.composite.nodes > 1                 # the graph of primitives
    assert result.fused.saved_bytes <= result.composite.saved_bytes
    assert result.max_abs_diff
    assert all(diff <= FLOAT64_TOL for diff in result.max_abs_diff.values()), result.table()

"""The numba CPU kernels (``kernels.numba_cpu``) and how they are chosen.

The kernels are checked against the reference kernels, their oracle: every output and
every gradient over hypothesis-drawn shapes (1 row, 1 column, D not a multiple of 8),
float32 and float64, with and without weight, bias and residual; NaN and inf rows; the
cases that delegate to the reference. Then the fused norms end to end with the numba
kernels selected: against the composite graph, against PyTorch, and gradcheck. Then the
selection API (``set_cpu_kernels``, ``cpu_kernels``, ``MICROGRADNORM_CPU_KERNELS``; numba's
kernels are the default where numba imports). What the numba kernels do not take they hand
to the blocked kernels (the default without numba), whose results they then return exactly.

Tolerances (docs/benchmarks.md): both sides round differently (sums in another order, and
here in float64), so agreement is to a few units in the last place of each output's
scale: |numba - reference| <= ULPS · eps(dtype) · max(1, max |reference|), and for dx
the scale of its terms, rstd·|dy·w| (dx is a difference of such terms: fused multiply-adds
round the products there differently; with D = 1 dx is 0 in exact arithmetic, and each
side returns its rounding of the terms' cancellation). Inputs are
well-conditioned random rows (no near-constant row, where the centred values are
themselves rounding noise in either kernel).

The kernels compile once per dtype in this process (numba's disk cache may make that
free); every test reuses them.
"""

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import kernels
from microgradnorm.kernels import blocked, reference

numba = pytest.importorskip("numba")
from microgradnorm.kernels import numba_cpu  # noqa: E402  (after the skip)

ULPS = 16
DTYPES = (np.float32, np.float64)
ROW_NORMS = ("layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm")


@pytest.fixture(autouse=True)
def numpy_kernels_around_each_test():
    """Every test starts with the NumPy CPU kernels; the choice before it comes back after
    it, whatever it selects (also where the test hid numba: the state, not set_cpu_kernels)."""
    saved = dict(kernels._cpu)
    kernels.set_cpu_kernels("numpy")
    yield
    kernels._cpu.clear()
    kernels._cpu.update(saved)


def close(actual, expected, dtype, ulps=ULPS, scale=1.0):
    """Agreement to ``ulps`` units of ``dtype`` at the scale of ``expected`` (at least
    ``scale``); NaN where and only where the reference has NaN, the same infinities."""
    if expected is None or actual is None:
        return actual is None and expected is None
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    nan = np.isnan(expected)
    if not np.array_equal(nan, np.isnan(actual)):
        return False
    finite = np.isfinite(expected)
    if not np.array_equal(actual[~finite & ~nan], expected[~finite & ~nan]):
        return False
    if not finite.any():
        return True
    scale = max(scale, float(np.max(np.abs(expected[finite]))))
    error = float(np.max(np.abs(actual[finite].astype(np.float64) - expected[finite])))
    return error <= ulps * np.finfo(dtype).eps * scale


def row_inputs(norm, rows, cols, dtype, affine, seed):
    """Random rows, parameters far from 1 and 0, an upstream gradient (and ds)."""
    rng = np.random.default_rng(seed)
    draw = lambda *shape: rng.standard_normal(shape).astype(dtype)      # noqa: E731
    inputs = {"x": draw(rows, cols) * 3 + 1, "dy": draw(rows, cols)}
    if norm.startswith("add_"):
        inputs.update(residual=draw(rows, cols), ds=draw(rows, cols))
    inputs["weight"] = draw(cols) + 1.5 if affine in ("weight", "both") else None
    has_bias = "layer" in norm and affine in ("bias", "both")
    inputs["bias"] = draw(cols) if has_bias else None
    return inputs


def run_forward(module, norm, inputs, eps=1e-5):
    """The forward kernel of ``norm`` in ``module``; outputs as a tuple."""
    x, residual, weight, bias = (inputs["x"], inputs.get("residual"), inputs["weight"],
                                 inputs["bias"])
    if norm == "layer_norm":
        return module.layer_norm_forward(x, weight, bias, eps)
    if norm == "rms_norm":
        return module.rms_norm_forward(x, weight, eps)
    if norm == "add_layer_norm":
        return module.add_layer_norm_forward(x, residual, weight, bias, eps)
    return module.add_rms_norm_forward(x, residual, weight, eps)


def run_backward(module, norm, inputs, forward, need_bias_grad=True):
    """The backward kernel of ``norm`` in ``module`` from the reference's statistics."""
    dy, ds, weight = inputs["dy"], inputs.get("ds"), inputs["weight"]
    if norm == "layer_norm":
        _, mean, rstd = forward
        return module.layer_norm_backward(dy, inputs["x"], weight, mean, rstd, need_bias_grad)
    if norm == "rms_norm":
        return module.rms_norm_backward(dy, inputs["x"], weight, forward[1])
    if norm == "add_layer_norm":
        _, s, mean, rstd = forward
        return module.add_layer_norm_backward(dy, ds, s, weight, mean, rstd, need_bias_grad)
    _, s, rstd = forward
    return module.add_rms_norm_backward(dy, ds, s, weight, rstd)


# ----- against the reference kernels --------------------------------------------------------
@settings(max_examples=60)
@given(norm=st.sampled_from(ROW_NORMS), rows=st.integers(1, 9),
       cols=st.sampled_from([1, 2, 3, 7, 8, 13, 64, 100]),
       dtype=st.sampled_from(DTYPES), affine=st.sampled_from(["none", "weight", "bias", "both"]),
       need_bias_grad=st.booleans(), seed=st.integers(0, 2**16))
def test_every_output_and_gradient_agrees_with_the_reference(norm, rows, cols, dtype, affine,
                                                             need_bias_grad, seed):
    inputs = row_inputs(norm, rows, cols, dtype, affine, seed)
    expected = run_forward(reference, norm, inputs)
    actual = run_forward(numba_cpu, norm, inputs)
    for name, a, e in zip(("y", "s/mean", "mean/rstd", "rstd"), actual, expected):
        assert close(a, e, dtype), (name, a, e)
    need_bias_grad = need_bias_grad and inputs["bias"] is not None
    expected_grads = run_backward(reference, norm, inputs, expected, need_bias_grad)
    actual_grads = run_backward(numba_cpu, norm, inputs, expected, need_bias_grad)
    for name, a, e in zip(("dx", "dweight", "dbias"), actual_grads, expected_grads):
        scale = dx_scale(inputs, expected) if name == "dx" else 1.0
        assert close(a, e, dtype, scale=scale), (name, a, e)


def dx_scale(inputs, forward):
    """The size of dx's terms: max rstd · max |dy·w| (see the module docstring)."""
    rstd = forward[-1]
    weight = 1 if inputs["weight"] is None else inputs["weight"]
    return float(np.max(np.abs(rstd))) * float(np.max(np.abs(inputs["dy"] * weight)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", ROW_NORMS)
def test_a_wide_and_a_tall_block_agree_with_the_reference(norm, dtype):
    """Rows longer than a vector loop's unrolling, and many rows into dweight / dbias."""
    for rows, cols in ((3, 1031), (600, 24)):
        inputs = row_inputs(norm, rows, cols, dtype, "both", seed=rows)
        expected = run_forward(reference, norm, inputs)
        assert all(close(a, e, dtype) for a, e in
                   zip(run_forward(numba_cpu, norm, inputs), expected))
        grads = zip(run_backward(numba_cpu, norm, inputs, expected),
                    run_backward(reference, norm, inputs, expected))
        assert all(close(a, e, dtype) for a, e in grads)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", ROW_NORMS)
def test_nan_and_inf_rows_propagate_as_in_the_reference(norm, dtype):
    inputs = row_inputs(norm, 4, 9, dtype, "both", seed=3)
    inputs["x"][0, 2] = np.nan
    inputs["x"][1, 5] = np.inf
    inputs["dy"][2, 1] = -np.inf
    with np.errstate(all="ignore"):
        expected = run_forward(reference, norm, inputs)
        actual = run_forward(numba_cpu, norm, inputs)
        assert np.isnan(actual[0][0]).all() and np.isfinite(actual[0][3]).all()
        assert all(close(a, e, dtype) for a, e in zip(actual, expected))
        expected_grads = run_backward(reference, norm, inputs, expected)
        actual_grads = run_backward(numba_cpu, norm, inputs, expected)
    assert np.isnan(actual_grads[0][0]).all() and np.isfinite(actual_grads[0][3]).all()
    assert all(close(a, e, dtype) for a, e in zip(actual_grads, expected_grads))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", ROW_NORMS)
def test_a_zero_variance_row_with_eps_0_divides_as_numpy_does(norm, dtype):
    """eps = 0 is allowed: a constant row (LayerNorm) or a zero row (RMSNorm) then has
    rstd = 1/0 = inf, and its outputs are what the reference's IEEE arithmetic gives
    (NaN, inf), never a ZeroDivisionError."""
    inputs = row_inputs(norm, 3, 6, dtype, "both", seed=5)
    inputs["x"][1] = 0 if "rms" in norm else 2.5
    if norm.startswith("add_"):
        inputs["residual"][1] = 0
    with np.errstate(all="ignore"):
        expected = run_forward(reference, norm, inputs, eps=0.0)
        actual = run_forward(numba_cpu, norm, inputs, eps=0.0)
        assert np.isinf(expected[-1][1])
        assert all(close(a, e, dtype) for a, e in zip(actual, expected))
        expected_grads = run_backward(reference, norm, inputs, expected)
        actual_grads = run_backward(numba_cpu, norm, inputs, expected)
    assert np.isfinite(actual_grads[0][0]).all()
    assert all(close(a, e, dtype) for a, e in zip(actual_grads, expected_grads))


def spy_on_blocked(monkeypatch):
    """Record every call the numba module makes to a blocked row-norm function."""
    calls = []
    for name in ("layer_norm_forward", "layer_norm_backward", "rms_norm_forward",
                 "rms_norm_backward", "add_layer_norm_forward", "add_layer_norm_backward",
                 "add_rms_norm_forward", "add_rms_norm_backward"):
        original = getattr(blocked, name)

        def spy(*args, _name=name, _original=original):
            calls.append(_name)
            return _original(*args)
        monkeypatch.setattr(blocked, name, spy)
    return calls


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", ROW_NORMS)
def test_float32_and_float64_contiguous_rows_run_compiled(norm, dtype, monkeypatch):
    inputs = row_inputs(norm, 3, 5, dtype, "both", seed=0)
    forward = run_forward(reference, norm, inputs)
    calls = spy_on_blocked(monkeypatch)
    run_forward(numba_cpu, norm, inputs)
    run_backward(numba_cpu, norm, inputs, forward)
    assert calls == []


@pytest.mark.parametrize("norm", ROW_NORMS)
def test_a_gradient_that_is_a_view_is_copied_and_runs_compiled(norm, monkeypatch):
    """The broadcast ones of ``y.sum().backward()`` (stride 0) and a transposed gradient
    give what their C-contiguous copies give, through the compiled loops (the blocked
    kernels' NumPy passes took twice the copy and the loop at (1024, 64))."""
    inputs = row_inputs(norm, 5, 7, np.float32, "both", seed=2)
    forward = run_forward(reference, norm, inputs)
    dense = run_backward(numba_cpu, norm, dict(inputs, dy=np.ones((5, 7), np.float32)),
                         forward)
    calls = spy_on_blocked(monkeypatch)
    ones = dict(inputs, dy=np.broadcast_to(np.float32(1), (5, 7)))
    if "ds" in inputs:
        ones["ds"] = np.asfortranarray(inputs["ds"])                 # the same values
    for actual, expected in zip(run_backward(numba_cpu, norm, ones, forward), dense):
        np.testing.assert_array_equal(actual, expected)
    assert calls == []


def delegated_cases():
    """(description, norm, inputs) the numba module hands to the blocked kernels."""
    base = lambda dtype=np.float32: row_inputs("layer_norm", 4, 6, dtype, "both", 1)  # noqa
    half = {k: None if v is None else v.astype(np.float16) for k, v in base().items()}
    mixed = dict(base(np.float64), weight=base()["weight"])          # float32 weight
    strided = dict(base(), x=np.asfortranarray(base()["x"]))
    empty_rows = row_inputs("layer_norm", 0, 6, np.float32, "both", 1)
    empty_cols = row_inputs("layer_norm", 4, 0, np.float64, "both", 1)
    return [("float16", half), ("mixed dtypes", mixed), ("non-contiguous x", strided),
            ("M = 0", empty_rows), ("D = 0", empty_cols)]


@pytest.mark.parametrize("case", delegated_cases(), ids=lambda case: case[0])
def test_other_inputs_delegate_to_blocked_and_get_its_exact_results(case, monkeypatch):
    _, inputs = case
    with np.errstate(all="ignore"):
        expected = run_forward(blocked, "layer_norm", inputs)
        expected_grads = run_backward(blocked, "layer_norm", inputs, expected)
        calls = spy_on_blocked(monkeypatch)
        actual = run_forward(numba_cpu, "layer_norm", inputs)
        actual_grads = run_backward(numba_cpu, "layer_norm", inputs, expected)
    assert calls == ["layer_norm_forward", "layer_norm_backward"]
    for a, e in zip(actual + actual_grads, expected + expected_grads):
        np.testing.assert_array_equal(a, e)


def outcome(call):
    """What ``call()`` gives: its arrays, or the type of the exception it raises."""
    try:
        return call()
    except Exception as error:                              # noqa: BLE001
        return type(error)


@pytest.mark.parametrize("bad", ["short", "long", "2-D"])
@pytest.mark.parametrize("param", ["weight", "bias"])
@pytest.mark.parametrize("norm", ROW_NORMS)
def test_a_parameter_of_another_shape_is_the_blocked_kernels_business(norm, param, bad):
    """The compiled loops index weight[j] and bias[j] for j < D unchecked: a parameter of
    another shape must go to the blocked kernels (an error, or their broadcast), never be
    read past its end."""
    if param == "bias" and "layer" not in norm:
        pytest.skip("RMSNorm has no bias")
    inputs = row_inputs(norm, 3, 8, np.float64, "both", seed=4)
    good = inputs[param]
    inputs[param] = {"short": good[:5], "long": np.concatenate([good, good]),
                     "2-D": good[None, :]}[bad]
    expected = outcome(lambda: run_forward(blocked, norm, inputs))
    actual = outcome(lambda: run_forward(numba_cpu, norm, inputs))
    if isinstance(expected, type):
        assert actual is expected
    else:
        for a, e in zip(actual, expected):
            np.testing.assert_array_equal(a, e)
    if param == "bias":
        return                                      # backward takes no bias
    forward = run_forward(blocked, norm, dict(inputs, **{param: good}))
    expected = outcome(lambda: run_backward(blocked, norm, inputs, forward))
    actual = outcome(lambda: run_backward(numba_cpu, norm, inputs, forward))
    if isinstance(expected, type):
        assert actual is expected
    else:
        for a, e in zip(actual, expected):
            np.testing.assert_array_equal(a, e)


def test_what_is_not_compiled_is_the_references():
    assert numba_cpu.accumulation_dtype is reference.accumulation_dtype
    assert numba_cpu.update_running_stats is reference.update_running_stats


def test_the_fastmath_flags_keep_nan_and_inf_semantics():
    from microgradnorm.kernels import numba_jit
    for options in (numba_jit.OPTIONS, numba_jit.EXACT_OPTIONS):
        assert {"nnan", "ninf", "fast"}.isdisjoint(options["fastmath"])


# ----- the fused norms, end to end, with the numba kernels selected -------------------------
def call_norm(norm, impl, x, residual, weight, bias):
    if norm == "layer_norm":
        return (F.layer_norm(x, x.shape[-1], weight, bias, impl=impl),)
    if norm == "rms_norm":
        return (F.rms_norm(x, x.shape[-1], weight, impl=impl),)
    if norm == "add_layer_norm":
        return F.add_layer_norm(x, residual, x.shape[-1], weight, bias, impl=impl)
    return F.add_rms_norm(x, residual, x.shape[-1], weight, impl=impl)


def forward_backward(norm, impl, arrays, upstream):
    tensors = {k: mg.tensor(v, requires_grad=True) for k, v in arrays.items()}
    outputs = call_norm(norm, impl, tensors["x"], tensors.get("residual"),
                        tensors.get("weight"), tensors.get("bias"))
    grads = mg.grad(list(outputs), list(tensors.values()),
                    [g[:o.shape[0]].reshape(o.shape) for o, g in zip(outputs, upstream)])
    return [o.data for o in outputs], list(grads)


def norm_arrays(norm, dtype, shape=(2, 3, 10), seed=0):
    rng = np.random.default_rng(seed)
    arrays = {"x": rng.standard_normal(shape) * 2 + 0.5}
    if norm.startswith("add_"):
        arrays["residual"] = rng.standard_normal(shape)
    arrays["weight"] = rng.standard_normal(shape[-1]) + 1.5
    if "layer" in norm:
        arrays["bias"] = rng.standard_normal(shape[-1])
    upstream = [rng.standard_normal(shape) for _ in range(2 if norm.startswith("add_") else 1)]
    cast = lambda a: a.astype(dtype)                                      # noqa: E731
    return {k: cast(v) for k, v in arrays.items()}, [cast(u) for u in upstream]


@pytest.mark.parametrize("norm", ROW_NORMS)
def test_fused_with_numba_kernels_matches_the_composite_graph_in_float64(norm):
    arrays, upstream = norm_arrays(norm, np.float64)
    composite = forward_backward(norm, "composite", arrays, upstream)
    with mg.cpu_kernels("numba"):
        fused = forward_backward(norm, "fused", arrays, upstream)
    for a, e in zip(fused[0] + fused[1], composite[0] + composite[1]):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-10)])
@pytest.mark.parametrize("norm", ROW_NORMS)
def test_fused_with_numba_kernels_matches_pytorch(norm, dtype, tol):
    torch = pytest.importorskip("torch")
    arrays, upstream = norm_arrays(norm, dtype)
    with mg.cpu_kernels("numba"):
        outputs, grads = forward_backward(norm, "fused", arrays, upstream)
    t = {k: torch.tensor(v, requires_grad=True) for k, v in arrays.items()}
    x = t["x"] + t["residual"] if norm.startswith("add_") else t["x"]
    size = (x.shape[-1],)
    if "layer" in norm:
        y = torch.nn.functional.layer_norm(x, size, t["weight"], t["bias"], 1e-5)
    else:
        y = torch.nn.functional.rms_norm(x, size, t["weight"])    # eps: both default
    expected_outputs = [y, x] if norm.startswith("add_") else [y]
    expected_grads = torch.autograd.grad(expected_outputs, list(t.values()),
                                         [torch.tensor(u) for u in upstream])
    for a, e in zip(outputs + grads, expected_outputs + list(expected_grads)):
        np.testing.assert_allclose(a, e.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("norm", ROW_NORMS)
def test_gradcheck_with_numba_kernels(norm):
    arrays, _ = norm_arrays(norm, np.float64, shape=(3, 5))
    tensors = [mg.tensor(v, requires_grad=True) for v in arrays.values()]
    names = list(arrays)

    def fn(*args):
        given = dict(zip(names, args))
        return call_norm(norm, "fused", given["x"], given.get("residual"),
                         given.get("weight"), given.get("bias"))

    with mg.cpu_kernels("numba"):
        assert mg.gradcheck(fn, tensors)


# ----- choosing the kernels -----------------------------------------------------------------
def hide_numba(monkeypatch):
    """As where numba is not installed: importing it raises, and the numba kernel modules
    are imported afresh (each of them imports numba), so they raise too."""
    monkeypatch.setitem(sys.modules, "numba", None)          # import numba -> ImportError
    for name in ("numba_cpu", "numba_activations", "numba_gelu", "numba_jit"):
        monkeypatch.delitem(sys.modules, f"microgradnorm.kernels.{name}", raising=False)
        monkeypatch.delattr(kernels, name, raising=False)


@pytest.fixture
def fresh_choice(monkeypatch):
    """No choice made yet in this process (as at import), restored afterwards."""
    monkeypatch.delenv(kernels.ENVIRONMENT_VARIABLE, raising=False)
    saved = dict(kernels._cpu)
    kernels._cpu.clear()
    yield
    kernels._cpu.clear()
    kernels._cpu.update(saved)


def test_the_default_is_numba_where_it_imports_and_for_array_gives_its_kernels(fresh_choice):
    x = np.ones((2, 3), np.float32)
    assert kernels.default_cpu_kernels() == "numba"
    assert mg.get_cpu_kernels() == "numba"
    assert kernels.for_array(x) is numba_cpu


def test_without_numba_the_default_is_numpy_and_for_array_gives_blocked(fresh_choice,
                                                                         monkeypatch):
    hide_numba(monkeypatch)
    assert mg.get_cpu_kernels() == "numpy"
    assert kernels.for_array(np.ones((2, 3))) is blocked


def test_set_cpu_kernels_switches_what_for_array_gives():
    x = np.ones((2, 3))
    mg.set_cpu_kernels("numba")
    assert mg.get_cpu_kernels() == "numba" and kernels.for_array(x) is numba_cpu
    mg.set_cpu_kernels("reference")
    assert mg.get_cpu_kernels() == "reference" and kernels.for_array(x) is reference
    mg.set_cpu_kernels("numpy")
    assert kernels.for_array(x) is blocked


def test_the_environment_variable_picks_the_kernels_on_first_use(fresh_choice, monkeypatch):
    monkeypatch.setenv(kernels.ENVIRONMENT_VARIABLE, "numba")
    assert mg.get_cpu_kernels() == "numba"
    assert kernels.for_array(np.ones(3)) is numba_cpu


def test_a_bad_environment_variable_is_a_value_error_naming_it(fresh_choice, monkeypatch):
    monkeypatch.setenv(kernels.ENVIRONMENT_VARIABLE, "fortran")
    with pytest.raises(ValueError, match="MICROGRADNORM_CPU_KERNELS.*'fortran'"):
        kernels.for_array(np.ones(3))


def test_a_bad_name_is_a_value_error_naming_the_argument_and_changes_nothing():
    mg.set_cpu_kernels("numba")
    with pytest.raises(ValueError,
                       match=r"name must be one of 'numpy', 'numba', 'reference', got 'NUMBA'"):
        mg.set_cpu_kernels("NUMBA")
    with pytest.raises(ValueError, match="got 'c'"):
        with mg.cpu_kernels("c"):
            pass
    assert mg.get_cpu_kernels() == "numba"


def test_the_context_manager_restores_the_choice_even_after_an_error():
    with pytest.raises(ZeroDivisionError):
        with mg.cpu_kernels("numba"):
            assert kernels.for_array(np.ones(3)) is numba_cpu
            1 / 0                                                   # noqa: B018
    assert mg.get_cpu_kernels() == "numpy"


def test_without_numba_the_error_names_the_extra_and_changes_nothing(monkeypatch):
    hide_numba(monkeypatch)
    with pytest.raises(RuntimeError, match=r'pip install "microgradnorm\[numba\]"'):
        mg.set_cpu_kernels("numba")
    assert mg.get_cpu_kernels() == "numpy"


def test_cuda_arrays_never_get_the_numba_kernels():
    class FakeCupyArray:
        pass
    FakeCupyArray.__module__ = "cupy._core.core"
    from microgradnorm.kernels import cuda
    with mg.cpu_kernels("numba"):
        assert kernels.for_array(FakeCupyArray()) is cuda


# ----- the bench ----------------------------------------------------------------------------
def test_the_bench_times_fused_numba_beside_the_others():
    from microgradnorm.cli import bench
    rows = bench.run_norm_bench(["layernorm"], [(16, 24)], ["float32"],
                                ("composite", "fused", bench.NUMBA_IMPL), repeat=1, warmup=1)
    numba_rows = [r for r in rows if r.impl == "fused-numba"]
    assert [r.phase for r in numba_rows] == list(bench.PHASES)
    assert all(r.vs_composite > 0 and r.timing.median > 0 for r in numba_rows)
    assert mg.get_cpu_kernels() == "numpy"                    # the choice is left as it was


def test_without_a_writable_cache_directory_the_kernels_compile_in_memory(monkeypatch):
    """numba refuses cache=True at decoration time when no cache directory is writable;
    the module then compiles without the disk cache."""
    made, original = [], numba.njit

    def njit(*function, **options):
        if function:                        # numba's own modules decorate with it
            return original(*function, **options)
        if options.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        made.append(options)
        return original(*function, **options)

    from microgradnorm.kernels import numba_jit
    monkeypatch.setattr(numba, "njit", njit)
    square = numba_jit._jit(lambda a: a * a)
    assert square(3.0) == 9.0 and made == [numba_jit.OPTIONS]


def test_bench_refuses_numba_kernels_on_cuda(capsys):
    from microgradnorm.cli.main import main
    assert main(["bench", "--device", "cuda", "--cpu-kernels", "numba", "--quick"]) == 2
    assert "--cpu-kernels numba" in capsys.readouterr().err


@pytest.mark.parametrize("norm", ROW_NORMS)
def test_backward_runs_the_kernels_its_forward_ran_whatever_is_selected_then(norm):
    """A graph recorded under one choice and back-propagated under another: each node's
    backward is the closed form of the forward that made it (as in PyTorch, where the
    node recorded names its backward), so the gradients are those of a run entirely
    under the forward's choice, bit for bit."""
    arrays, upstream = norm_arrays(norm, np.float32, shape=(6, 40, 96), seed=2)

    def mixed(forward_choice, backward_choice):
        tensors = {k: mg.tensor(v, requires_grad=True) for k, v in arrays.items()}
        with mg.cpu_kernels(forward_choice):
            outputs = call_norm(norm, "fused", tensors["x"], tensors.get("residual"),
                                tensors.get("weight"), tensors.get("bias"))
        with mg.cpu_kernels(backward_choice):
            return mg.grad(list(outputs), list(tensors.values()),
                           [g.reshape(o.shape) for o, g in zip(outputs, upstream)])

    for forward_choice, backward_choice in (("numba", "numpy"), ("numpy", "numba")):
        expected = mixed(forward_choice, forward_choice)
        actual = mixed(forward_choice, backward_choice)
        for a, e in zip(actual, expected):
            np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("train", [False, True])
def test_bench_without_numba_says_what_to_install_before_any_timing(train, monkeypatch,
                                                                    capsys, tmp_path):
    from microgradnorm.cli.main import main
    hide_numba(monkeypatch)
    argv = ["bench", "--quick", "--cpu-kernels", "numpy", "numba", "--norm", "layernorm"]
    argv += ["--train", "--out", str(tmp_path)] if train else []
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("microgradnorm bench: error: --cpu-kernels numba: ")
    assert 'pip install "microgradnorm[numba]"' in err
    assert mg.get_cpu_kernels() == "numpy"


def test_bench_times_each_cpu_kernels_choice_once():
    import argparse

    from microgradnorm.cli import bench
    args = argparse.Namespace(cpu_kernels=["numba", "numpy", "numba", "numpy"])
    assert bench.fused_impls(args) == ("fused", bench.NUMBA_IMPL)      # "fused": numpy here
    with mg.cpu_kernels("numba"):
        assert bench.fused_impls(args) == ("fused", "fused-numpy")
    assert bench.fused_impls(argparse.Namespace(cpu_kernels=())) == ("fused",)

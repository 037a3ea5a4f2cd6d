"""The numba softmax / log_softmax row kernels (``numba_cpu.softmax_forward`` and the rest,
compiled in ``kernels.numba_activations``) against the reference kernels and PyTorch.

Against the reference, in the same dtype (float32 and float64), with eps that dtype's:
  * bit for bit where the arithmetic allows: one column (softmax 1, log_softmax 0, zero
    gradients), masked (-inf) entries (0 and -inf, gradients 0 and g), rows of -inf (NaN),
    rows holding +inf or NaN (NaN);
  * elsewhere within a few ulps of each output's own scale, as exp (within 1 ulp here and
    there) and the row sums (float64 here, NumPy's pairwise in the dtype there) differ
    (in brackets the largest seen over these cases and 20 more seeds, both dtypes):
      softmax y:          |Δ| <= 8 eps·y                          (4.5)
      log_softmax y:      |Δ| <= 4 eps·max(|x|, |ℓ|),  ℓ = x - y   (1.9)
      logsumexp ℓ:        |Δ| <= 4 eps·max(|m|, |ℓ|)
      softmax dx:         |Δ| <= 6 eps·y·(|g| + Σ|g·y|)           (3.0)
      log_softmax dx:     |Δ| <= 4 eps·(|g| + exp(y)·Σ|g|)        (1.0)
Against torch in float64, forward and backward, within the same bounds. The vectorized exps
(``_exp64``, ``_exp32``) within 1 ulp over dense sweeps, subnormal results and overflow
included. What the compiled rows do not take (another axis, views, half precision, 0-d and
empty arrays) is the reference's, exactly."""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.kernels import reference

numba = pytest.importorskip("numba")
from microgradnorm.kernels import numba_activations, numba_cpu  # noqa: E402  (after the skip)

DTYPES = (np.float32, np.float64)
OPS = ("softmax", "log_softmax")
SHAPES = [(5, 1), (7, 1025), (2, 3, 4, 17), (3, 16), (1, 64)]


def inputs(shape, dtype, seed=0):
    """x of ``shape`` with special rows where there are rows enough: a row of -inf, a row
    with +inf, one with NaN, one with -NaN, a row of -inf but one entry, a constant row,
    and large values (the shift matters); and an upstream gradient g."""
    rng = np.random.default_rng(seed)
    x = 4 * rng.standard_normal(shape)
    rows = x.reshape(-1, shape[-1])
    specials = [lambda r: r.fill(-np.inf), lambda r: r.__setitem__(0, np.inf),
                lambda r: r.__setitem__(-1, np.nan), lambda r: r.__setitem__(0, -np.nan),
                lambda r: (r.fill(-np.inf), r.__setitem__(-1, 2.0)), lambda r: r.fill(3.5),
                lambda r: r.__imul__(3000.0)]
    for row, special in zip(rows[1::2], specials):       # every other row stays plain
        special(row)
    return x.astype(dtype), rng.standard_normal(shape).astype(dtype)


def causal(length, dtype, seed=0):
    """Attention-like scores (2, length, length) with -inf above the diagonal."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((2, length, length))
    scores[:, np.triu(np.ones((length, length), bool), 1)] = -np.inf
    return scores.astype(dtype), rng.standard_normal(scores.shape).astype(dtype)


def forward(module, op, x):
    return getattr(module, f"{op}_forward")(x, x.ndim - 1)


def backward(module, op, g, y):
    return getattr(module, f"{op}_backward")(g, y, y.ndim - 1)


def assert_same_specials(actual, expected):
    """NaN, ±inf and exact zeros where the reference has them."""
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    for where in (np.isinf(expected), expected == 0):
        np.testing.assert_array_equal(actual[where], expected[where])


def assert_within(actual, expected, scale, bound):
    """|actual - expected| <= bound · scale where the reference is finite and not 0."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert_same_specials(actual, expected)
    check = np.isfinite(expected) & (expected != 0)
    error = np.abs(actual[check].astype(np.float64) - expected[check])
    allowed = bound * scale[check]
    assert (error <= allowed).all(), (error / scale[check]).max()


def forward_scale(op, x, y):
    if op == "softmax":
        return np.abs(y.astype(np.float64))
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.maximum(np.abs(x64), np.abs(x64 - y64))


def backward_scale(op, g, y):
    g64, y64 = g.astype(np.float64), y.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if op == "softmax":
            return y64 * (np.abs(g64) + np.abs(g64 * y64).sum(-1, keepdims=True))
        return np.abs(g64) + np.exp(y64) * np.abs(g64).sum(-1, keepdims=True)


def check_against(expected_module, op, x, g):
    """Our kernels against ``expected_module``'s (the reference, or a torch stand-in) on
    x, and on the reference's y with upstream g, within the bounds above."""
    eps = np.finfo(x.dtype).eps
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        y_expected = forward(expected_module, op, x)
        dx_expected = backward(expected_module, op, g, y_expected)
    y, dx = forward(numba_cpu, op, x), backward(numba_cpu, op, g, y_expected)
    forward_bound, backward_bound = (8, 6) if op == "softmax" else (4, 4)
    assert_within(y, y_expected, forward_scale(op, x, y_expected), forward_bound * eps)
    assert_within(dx, dx_expected, backward_scale(op, g, y_expected), backward_bound * eps)


# ----- against the reference ----------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::RuntimeWarning")       # the reference's inf - inf
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_rows_agree_with_the_reference_within_a_few_ulps(op, dtype, shape):
    check_against(reference, op, *inputs(shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_masked_causal_rows_are_exact_where_masked(op, dtype):
    x, g = causal(33, dtype)
    check_against(reference, op, x, g)
    y = forward(numba_cpu, op, x)
    dx = backward(numba_cpu, op, g, y)
    masked = np.isneginf(x)
    assert (y[masked] == (0 if op == "softmax" else -np.inf)).all()
    np.testing.assert_array_equal(dx[masked], 0 if op == "softmax" else g[masked])
    assert np.isfinite(dx).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_one_column_and_non_finite_rows_are_the_references_bit_for_bit(op, dtype):
    x = np.array([[1.5], [-np.inf], [np.inf], [np.nan], [-1e30], [0.0]], dtype)
    g = np.arange(1, 7, dtype=dtype).reshape(6, 1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        y_ref = forward(reference, op, x)
        dx_ref = backward(reference, op, g, y_ref)
        rows = np.array([[0.0, -np.inf, 1.0], [-np.inf] * 3, [np.inf, 0.0, 1.0],
                         [np.nan, 0.0, 1.0], [1.0, np.inf, np.inf]], dtype)
        rows_ref = forward(reference, op, rows)
    np.testing.assert_array_equal(forward(numba_cpu, op, x), y_ref)
    np.testing.assert_array_equal(backward(numba_cpu, op, g, y_ref), dx_ref)
    ours = forward(numba_cpu, op, rows)
    np.testing.assert_array_equal(ours[0, 1], rows_ref[0, 1])     # masked: 0 or -inf
    assert np.isnan(ours[1:]).all() and np.isnan(rows_ref[1:]).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_logsumexp_rows_agree_with_the_reference(dtype):
    x, _ = inputs((9, 130), dtype)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        expected = reference.logsumexp(x, 1)
        top = np.abs(np.nan_to_num(np.where(np.isneginf(x), 0, x))).max(1, keepdims=True)
    ours = numba_cpu.logsumexp(x, 1)
    assert ours.shape == (9, 1)
    scale = np.maximum(top, np.abs(np.nan_to_num(expected.astype(np.float64))))
    assert_within(ours, expected, scale, 4 * np.finfo(dtype).eps)


def test_the_bounds_can_fail():
    """A softmax off by 16 ulps, or a dx off by 12 eps of its scale, fails the comparison."""
    x, g = inputs((7, 1025), np.float32)
    y = forward(reference, "softmax", x)
    finite = np.isfinite(y) & (y > 0)
    worse = np.where(finite, y * np.float32(1 + 16 * np.finfo(np.float32).eps), y)
    with pytest.raises(AssertionError):
        assert_within(worse, y, forward_scale("softmax", x, y), 8 * np.finfo(np.float32).eps)
    dx = backward(reference, "softmax", g, y)
    scale = backward_scale("softmax", g, y)
    with np.errstate(invalid="ignore"):
        worse = (dx + 12 * np.finfo(np.float32).eps * scale).astype(np.float32)
    with pytest.raises(AssertionError):
        assert_within(worse, dx, scale, 6 * np.finfo(np.float32).eps)


# ----- against torch ------------------------------------------------------------------------
class TorchRows:
    """torch's softmax and log_softmax kernels (float64), with the reference's signatures."""

    @staticmethod
    def _run(name, *arrays):
        torch = pytest.importorskip("torch")
        aten = torch.ops.aten
        tensors = [torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]
        if name == "softmax_forward":
            return aten._softmax(tensors[0], -1, False).numpy()
        if name == "log_softmax_forward":
            return aten._log_softmax(tensors[0], -1, False).numpy()
        g, y = tensors
        backward_data = (aten._softmax_backward_data if name == "softmax_backward"
                         else aten._log_softmax_backward_data)
        return backward_data(g, y, -1, y.dtype).numpy()

    def __getattr__(self, name):
        return lambda *arrays_and_axis: self._run(name, *arrays_and_axis[:-1])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", ["plain", "causal"])
@pytest.mark.parametrize("op", OPS)
def test_rows_agree_with_torch_in_float64(op, case):
    x, g = inputs((6, 200), np.float64) if case == "plain" else causal(20, np.float64)
    check_against(TorchRows(), op, x, g)


def test_the_fused_nodes_with_numba_kernels_match_torch_autograd():
    torch = pytest.importorskip("torch")
    x, g = causal(12, np.float64)
    for op in OPS:
        with mg.cpu_kernels("numba"):
            ours = mg.tensor(x, requires_grad=True)
            out = getattr(F, op)(ours, -1, impl="fused")
            assert out.grad_fn.kernels is numba_cpu
            out.backward(mg.tensor(g))
        theirs = torch.tensor(x, requires_grad=True)
        t_out = getattr(torch, op)(theirs, -1)
        t_out.backward(torch.tensor(g))
        np.testing.assert_allclose(out.data, t_out.detach().numpy(), rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op", OPS)
def test_gradcheck_with_numba_kernels(op):
    x = mg.tensor(np.random.default_rng(3).standard_normal((3, 2, 5)), requires_grad=True)
    with mg.cpu_kernels("numba"):
        assert mg.gradcheck(lambda t: getattr(F, op)(t, -1, impl="fused"), [x])


# ----- the vectorized exps ------------------------------------------------------------------
@numba.njit
def _exps(z, out):
    for i in range(z.size):
        out[i] = numba_activations._exp(z[i])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")       # NumPy's exp overflowing
def test_exp64_is_within_one_ulp_of_numpys_with_its_edges():
    z = np.concatenate([np.linspace(-746, 710, 1_000_001), np.linspace(-1, 1, 100_001),
                        [-745.13, -745.14, -744.4, -708.4, -708.39, 709.78, 709.79, 0.0,
                         -0.0, 1e-300, np.inf, -np.inf, np.nan]])
    ours, expected = np.empty_like(z), np.exp(z)
    _exps(z, ours)
    assert_same_specials(ours, expected)
    finite = np.isfinite(expected) & (expected > 0)
    ulps = np.abs(ours[finite] - expected[finite]) / np.spacing(expected[finite])
    assert ulps.max() <= 1, ulps.max()


def test_exp32_is_within_one_ulp_of_the_exact_value_with_its_edges():
    z = np.concatenate([np.linspace(-104, 89, 1_000_001), np.linspace(-1, 1, 100_001),
                        [-103.97, -103.98, -87.34, -87.33, 88.72, 88.73, 0.0, -0.0, 1e-30,
                         np.inf, -np.inf, np.nan]]).astype(np.float32)
    ours = np.empty_like(z)
    _exps(z, ours)
    with np.errstate(over="ignore"):
        exact = np.exp(z.astype(np.float64))
        rounded = exact.astype(np.float32)
    assert_same_specials(ours, rounded)
    finite = np.isfinite(rounded) & (rounded > 0)
    ulps = (np.abs(ours[finite] - exact[finite])
            / np.spacing(rounded[finite]).astype(np.float64))
    assert ulps.max() <= 1, ulps.max()


# ----- what the compiled rows take, and what they hand on -----------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_contiguous_rows_never_call_the_reference(dtype, monkeypatch):
    for name in ("softmax_forward", "softmax_backward", "log_softmax_forward",
                 "log_softmax_backward", "logsumexp"):
        monkeypatch.setattr(reference, name, None)          # a delegation would fail
    x, g = inputs((2, 3, 40), dtype)
    for op in OPS:
        y = forward(numba_cpu, op, x)
        backward(numba_cpu, op, g, y)
        backward(numba_cpu, op, np.broadcast_to(g[:1], g.shape), y)    # a view: copied
    numba_cpu.logsumexp(x, -1)


def every_other_column(values):
    """``values`` as a view: every other column of an array twice as wide."""
    wide = np.zeros(values.shape[:-1] + (2 * values.shape[-1],), values.dtype)
    wide[..., ::2] = values
    return wide[..., ::2]


def delegated():
    """{case: (x, axis, y laid out as x is, for the backward)}."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 6))
    same = lambda y: y                                                  # noqa: E731
    return {"axis 0": (x, 0, same), "a view": (every_other_column(x), 1, every_other_column),
            "float16": (x.astype(np.float16), 1, same), "0-d": (np.array(0.5), 0, same),
            "no rows": (np.ones((0, 6)), 1, same), "no columns": (np.ones((4, 0)), 1, same),
            "Fortran order": (np.asfortranarray(x), 1, np.asfortranarray)}


@pytest.mark.parametrize("case", list(delegated()))
@pytest.mark.parametrize("op", OPS)
def test_the_rest_is_the_references_exactly(op, case, monkeypatch):
    x, axis, laid_out = delegated()[case]
    g = np.ones_like(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected_y = laid_out(getattr(reference, f"{op}_forward")(x, axis))
        expected_dx = getattr(reference, f"{op}_backward")(g, expected_y, axis)
    calls = []
    for name in (f"{op}_forward", f"{op}_backward"):
        original = getattr(reference, name)
        monkeypatch.setattr(reference, name, lambda *a, _o=original, _n=name:
                            calls.append(_n) or _o(*a))
    with np.errstate(divide="ignore", invalid="ignore"):
        y = getattr(numba_cpu, f"{op}_forward")(x, axis)
        dx = getattr(numba_cpu, f"{op}_backward")(g, expected_y, axis)
    assert calls == [f"{op}_forward", f"{op}_backward"]
    for actual, expected in ((y, expected_y), (dx, expected_dx)):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)


def test_a_gradient_of_another_dtype_is_the_references():
    x = np.random.default_rng(6).standard_normal((3, 8))
    y = numba_cpu.softmax_forward(x, 1)
    g = np.ones((3, 8), np.float32)
    np.testing.assert_array_equal(numba_cpu.softmax_backward(g, y, 1),
                                  reference.softmax_backward(g, y, 1))


# ----- cross-entropy's backward --------------------------------------------------------------
def cross_entropy_case(rows, classes, dtype, seed=0):
    """Logits, their ℓ (the reference's), classes, row weights with ignored rows (0)."""
    rng = np.random.default_rng(seed)
    x = (3 * rng.standard_normal((rows, classes))).astype(dtype)
    weight = rng.standard_normal(rows).astype(dtype)
    weight[::3] = 0                                         # ignored rows
    return x, reference.logsumexp(x, 1), rng.integers(0, classes, rows), weight


@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (64, 64), (33, 1000)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_backward_runs_compiled_within_an_ulp_of_the_reference(shape, dtype,
                                                                             monkeypatch):
    """(p - onehot)·w: each element within 1 ulp of the reference's at the scale |w| (the
    exp within 1 ulp; the target's p - 1 is rounded once, as the reference's), ignored
    rows exactly 0."""
    x, lse, classes, weight = cross_entropy_case(*shape, dtype)
    expected = reference.cross_entropy_backward(x, lse, classes, weight)
    monkeypatch.setattr(reference, "cross_entropy_backward", None)   # a delegation fails
    actual = numba_cpu.cross_entropy_backward(x, lse, classes, weight)
    assert actual.dtype == dtype and actual.shape == shape
    bound = np.finfo(dtype).eps * np.abs(weight)[:, None]
    assert np.all(np.abs(actual.astype(np.float64) - expected) <= bound)
    assert not actual[weight == 0].any()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_cross_entropy_backward_hands_the_rest_to_the_reference_exactly():
    x, lse, classes, weight = cross_entropy_case(4, 5, np.float64)
    for args in [(x.astype(np.float16), lse.astype(np.float32), classes,
                  weight.astype(np.float32)),
                 (np.asfortranarray(x), lse, classes, weight),
                 (x, lse, classes, weight[::-1])]:                # a reversed view
        np.testing.assert_array_equal(numba_cpu.cross_entropy_backward(*args),
                                      reference.cross_entropy_backward(*args))

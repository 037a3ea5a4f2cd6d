"""The numba row-norm kernels' two-pass statistics and their row sums in blocks
(``numba_cpu.SUM_BLOCK`` elements in x's dtype, the partial sums in float64).

Rows shorter than, equal to and longer than a block, and crossing several, agree with the
reference (the oracle) in every output and gradient; float32 rows far from 0 keep their
variance where the one-pass formula loses it; long float32 rows keep about 1 ulp; NaN and
inf stay in their rows wherever they sit in a block; constant rows get an exact mean; the
parameter gradients add up across the kernel's groups of ``COLUMN_BLOCK`` rows; and the
kernels agree with PyTorch's. Tolerances are those of tests/kernels/test_numba_kernels.py
(its ``close``: 16 units in the last place of each output's scale).
"""

import numpy as np
import pytest

pytest.importorskip("numba")
from microgradnorm.kernels import numba_cpu, reference  # noqa: E402  (after the skip)
from test_numba_kernels import (ROW_NORMS, close, dx_scale, row_inputs,  # noqa: E402
                                run_backward, run_forward)

DTYPES = (np.float32, np.float64)
# 1 and 3: a block's remainder only; 17: a vector and a remainder; the block's length and
# one either side; several blocks with a remainder of 1 (1025) and of 4 (4100)
LENGTHS = (1, 3, 17, numba_cpu.SUM_BLOCK - 1, numba_cpu.SUM_BLOCK, numba_cpu.SUM_BLOCK + 1,
           1025, 4100)


def ulps32(actual, truth):
    """max |actual - truth| / |truth| in units of float32's epsilon."""
    return float(np.max(np.abs(actual - truth) / np.abs(truth))) / np.finfo(np.float32).eps


def float64_statistics(x):
    """The mean and rstd (eps 1e-5) of x's rows computed in float64: the truth."""
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1)
    return mean, 1 / np.sqrt(((x64 - mean[:, None]) ** 2).mean(axis=1) + 1e-5)


@pytest.mark.parametrize("cols", LENGTHS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", ROW_NORMS)
def test_rows_of_every_length_around_a_block_agree_with_the_reference(norm, dtype, cols):
    inputs = row_inputs(norm, 5, cols, dtype, "both", seed=cols)
    expected = run_forward(reference, norm, inputs)
    actual = run_forward(numba_cpu, norm, inputs)
    for name, a, e in zip(("y", "s/mean", "mean/rstd", "rstd"), actual, expected):
        assert close(a, e, dtype), name
    grads = zip(run_backward(numba_cpu, norm, inputs, expected),
                run_backward(reference, norm, inputs, expected))
    for name, (a, e) in zip(("dx", "dweight", "dbias"), grads):
        assert close(a, e, dtype, scale=dx_scale(inputs, expected) if name == "dx" else 1.0), name


@pytest.mark.parametrize("centre", [1e4, 3e4, -2e5])
def test_float32_rows_far_from_zero_keep_their_variance_where_one_pass_loses_it(centre):
    """|mean| ≫ std: x - mean is exact in float32 near the mean, so the two passes get
    rstd to float32's rounding; Σx²/D - (Σx/D)² in float32 cancels every digit."""
    rng = np.random.default_rng(7)
    x = (centre + rng.standard_normal((6, 1025))).astype(np.float32)
    weight, bias = np.full(1025, 1.5, np.float32), np.full(1025, 0.25, np.float32)
    y, mean, rstd = numba_cpu.layer_norm_forward(x, weight, bias, 1e-5)
    true_mean, true_rstd = float64_statistics(x)
    assert ulps32(rstd, true_rstd) <= 4
    assert ulps32(mean, true_mean) <= 1
    # y is formed from the statistics as saved (the mean rounded to float32, 2e-3 apart at
    # 1e4, as the reference and PyTorch round it), the variance about the unrounded mean
    # (the reference's float32 variance is about the rounded one: 240 ulp off at -2e5)
    saved = (x - mean[:, None].astype(np.float64)) * rstd[:, None].astype(np.float64)
    assert close(y, (saved * 1.5 + 0.25).astype(np.float32), np.float32)
    one_pass_mean = x.sum(axis=1, dtype=np.float32) / np.float32(1025)
    one_pass_var = (x * x).sum(axis=1, dtype=np.float32) / np.float32(1025) - one_pass_mean**2
    with np.errstate(invalid="ignore", divide="ignore"):
        one_pass_rstd = 1 / np.sqrt(np.maximum(one_pass_var, 0) + np.float32(1e-5))
    assert ulps32(one_pass_rstd, true_rstd) > 1e4 * max(ulps32(rstd, true_rstd), 1)


def test_long_float32_rows_keep_about_one_ulp():
    """2^20 elements a row: block sums of SUM_BLOCK elements in float32, added in float64,
    err as one block does (a float32 sum along the whole row erred by 4.5 ulp here)."""
    rng = np.random.default_rng(3)
    x = (3 + rng.standard_normal((3, 2**20))).astype(np.float32)
    _, mean, rstd = numba_cpu.layer_norm_forward(x, None, None, 1e-5)
    true_mean, true_rstd = float64_statistics(x)
    assert ulps32(rstd, true_rstd) <= 2 and ulps32(mean, true_mean) <= 2


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", ROW_NORMS)
def test_nan_and_inf_stay_in_their_rows_wherever_they_sit_in_a_block(norm, dtype):
    inputs = row_inputs(norm, 5, 1025, dtype, "both", seed=11)
    inputs["x"][0, 1000] = np.nan                       # in the last full block
    inputs["x"][1, 300] = np.inf                        # in the second
    inputs["x"][2, 1024] = -np.inf                      # the remainder of one element
    inputs["dy"][3, 700] = np.nan
    with np.errstate(all="ignore"):
        expected = run_forward(reference, norm, inputs)
        actual = run_forward(numba_cpu, norm, inputs)
        assert all(close(a, e, dtype) for a, e in zip(actual, expected))
        assert np.isnan(actual[0][0]).all() and np.isfinite(actual[0][3:]).all()
        expected_grads = run_backward(reference, norm, inputs, expected)
        actual_grads = run_backward(numba_cpu, norm, inputs, expected)
    assert all(close(a, e, dtype) for a, e in zip(actual_grads, expected_grads))
    assert np.isnan(actual_grads[0][:4]).all() and np.isfinite(actual_grads[0][4]).all()


@pytest.mark.parametrize("cols", [17, 1025, 4100])
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_constant_row_has_its_exact_mean_and_gives_the_bias(dtype, cols):
    """The sum of 0.1 over a row is not D·0.1 in any dtype; the correction step makes the
    mean 0.1 exactly, so x - mean is 0 and y is b, as in the reference and PyTorch."""
    x = np.full((2, cols), 0.1, dtype)
    bias = np.linspace(-1, 1, cols).astype(dtype)
    y, mean, rstd = numba_cpu.layer_norm_forward(x, np.ones(cols, dtype), bias, 1e-5)
    np.testing.assert_array_equal(mean, np.full(2, 0.1, dtype))
    np.testing.assert_array_equal(y, np.broadcast_to(bias, x.shape))
    np.testing.assert_array_equal(y, reference.layer_norm_forward(x, None, bias, 1e-5)[0])


@pytest.mark.parametrize("rows", [1, numba_cpu.COLUMN_BLOCK - 1, numba_cpu.COLUMN_BLOCK,
                                  numba_cpu.COLUMN_BLOCK + 1, 3 * numba_cpu.COLUMN_BLOCK + 5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_parameter_gradients_add_up_across_groups_of_rows(dtype, rows):
    """dweight and dbias collect COLUMN_BLOCK rows in x's dtype, then add in float64: every
    row counts once, the last group's too, with or without ds."""
    for norm in ("layer_norm", "add_layer_norm"):
        inputs = row_inputs(norm, rows, 40, dtype, "both", seed=rows)
        expected = run_forward(reference, norm, inputs)
        grads = zip(run_backward(numba_cpu, norm, inputs, expected),
                    run_backward(reference, norm, inputs, expected))
        for name, (a, e) in zip(("dx", "dweight", "dbias"), grads):
            scale = dx_scale(inputs, expected) if name == "dx" else 1.0
            assert close(a, e, dtype, scale=scale), (norm, name)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("cols", [64, 1025, 4100])
def test_forward_and_backward_agree_with_pytorch(dtype, tol, cols):
    torch = pytest.importorskip("torch")
    inputs = row_inputs("layer_norm", 33, cols, dtype, "both", seed=cols)
    y, mean, rstd = run_forward(numba_cpu, "layer_norm", inputs)
    dx, dweight, dbias = run_backward(numba_cpu, "layer_norm", inputs, (y, mean, rstd))
    t = {k: torch.tensor(inputs[k], requires_grad=True) for k in ("x", "weight", "bias")}
    ty = torch.nn.functional.layer_norm(t["x"], (cols,), t["weight"], t["bias"], 1e-5)
    expected = [ty, *torch.autograd.grad(ty, list(t.values()), torch.tensor(inputs["dy"]))]
    for name, a, e in zip(("y", "dx", "dweight", "dbias"), (y, dx, dweight, dbias), expected):
        e = e.detach().numpy()
        assert np.max(np.abs(a - e)) <= tol * max(1.0, float(np.max(np.abs(e)))), name

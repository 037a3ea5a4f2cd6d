"""gradcheck fails on NaN and inf (a comparison with NaN is never true), validates its
arguments; compare flags a quantity that is non-finite in one implementation only."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.checks.comparison import compare_arrays


class OneNaNBackward(mg.Function):
    """2x with a backward that is right except for one NaN element."""

    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad):
        g = 2 * grad
        g.reshape(-1)[1] = np.nan
        return g


def test_a_wrong_backward_with_one_nan_fails():
    x = mg.tensor(np.arange(4.0), requires_grad=True)
    with pytest.raises(mg.GradcheckError, match=r"analytical gradient .* index \(1,\)"):
        mg.gradcheck(OneNaNBackward.apply, x)


def test_an_all_nan_input_fails():
    x = mg.tensor(np.full(3, np.nan), requires_grad=True)
    with pytest.raises(mg.GradcheckError, match="not finite"):
        mg.gradcheck(lambda t: t * t, x)


def test_an_inf_numerical_gradient_fails():
    # sqrt at 0: the analytical gradient is inf, the numerical one NaN (sqrt(-eps)).
    x = mg.tensor(np.array([0.0, 1.0]), requires_grad=True)
    with np.errstate(all="ignore"), pytest.raises(mg.GradcheckError, match=r"index \(0,\)"):
        mg.gradcheck(lambda t: t.sqrt(), x)


@pytest.mark.parametrize("kwargs, error", [
    (dict(eps=0), ValueError), (dict(eps=-1e-6), ValueError), (dict(eps=np.nan), ValueError),
    (dict(atol=-1), ValueError), (dict(rtol=np.inf), ValueError), (dict(eps="1"), TypeError),
    (dict(atol=True), TypeError)])
def test_arguments_are_validated(kwargs, error):
    x = mg.tensor(np.ones(2), requires_grad=True)
    with pytest.raises(error, match=next(iter(kwargs))):
        mg.gradcheck(lambda t: t * t, x, **kwargs)
    assert x.grad is None


def test_a_correct_gradient_still_passes():
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert mg.gradcheck(lambda t: (t * t).tanh(), x)


def test_compare_arrays_flags_nonfinite_in_one_side():
    diff, note = compare_arrays(np.array([1.0, np.inf]), np.array([1.0, 2.0]))
    assert diff == np.inf
    assert "composite result has 1 NaN/inf values of 2" in note
    assert "fused result is finite everywhere" in note
    diff, note = compare_arrays(np.array([1.0, np.nan]), np.array([1.5, np.nan]))
    assert diff == 0.5 and "same 1 of 2 places" in note
    assert compare_arrays(np.ones(3), np.ones(3)) == (0.0, "")


def test_float16_composite_overflow_is_flagged_in_words():
    with np.errstate(all="ignore"):
        result = mg.compare("layernorm", (2, 4, 8), "float16", repeat=1, scale=0.001)
    assert result.max_abs_diff["grad x"] == np.inf
    assert "composite result has" in result.nonfinite["grad x"]
    assert "WARNING grad x" in result.table()
    with pytest.raises(ValueError, match="repeat"):
        mg.compare("rmsnorm", repeat=0)


def test_jacobian_keeps_nan_and_rejects_integers():
    with np.errstate(all="ignore"):
        J = mg.jacobian(lambda t: t.sqrt(), mg.tensor([-1.0, 4.0]))
    assert np.isnan(J[0, 0]) and J[1, 1] == 0.25
    with pytest.raises(TypeError, match="floating-point"):
        mg.jacobian(lambda t: t, mg.tensor([1, 2]))
    assert mg.jacobian(lambda t: t * 2.0, [1.0, 2.0]).tolist() == [[2.0, 0.0], [0.0, 2.0]]


def test_fn_raising_on_a_perturbed_point_leaves_the_input_as_it_was():
    x = mg.tensor(np.array([1.0, 0.5]), requires_grad=True)

    def fn(t):
        if (t.data > 1.0).numpy().any():
            raise ValueError("out of the domain")
        return (t * t).sum()

    with pytest.raises(ValueError, match="out of the domain"):
        mg.gradcheck(fn, x)
    np.testing.assert_array_equal(x.data, [1.0, 0.5])

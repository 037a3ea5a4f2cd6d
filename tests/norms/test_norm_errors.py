"""Bad input to the functional norms: a clear TypeError or ValueError that names the
argument (and the expected vs actual shape or dtype), and nothing changed - no running
statistic, parameter, ``.grad`` or version counter - for both implementations."""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F

IMPLS = ("fused", "composite")


def state():
    """x (4, 3, 8) and parameters of size 8 with a gradient already accumulated, and
    running statistics of 3 channels (BatchNorm normalizes dim 1)."""
    rng = np.random.default_rng(0)
    s = {"x": mg.tensor(rng.standard_normal((4, 3, 8)), requires_grad=True),
         "residual": mg.tensor(rng.standard_normal((4, 3, 8)), requires_grad=True),
         "weight": mg.tensor(1 + rng.standard_normal(8), requires_grad=True),
         "bias": mg.tensor(rng.standard_normal(8), requires_grad=True),
         "channel_weight": mg.tensor(1 + rng.standard_normal(3), requires_grad=True),
         "running_mean": mg.tensor(rng.standard_normal(3)),
         "running_var": mg.tensor(1 + rng.random(3))}
    for t in s.values():
        if t.requires_grad:
            t.grad = rng.standard_normal(t.shape)
    return s


def snapshot(s):
    return {name: (t.data.copy(), None if t.grad is None else t.grad.copy(), t._version)
            for name, t in s.items()}


def assert_unchanged(s, before):
    for name, (data, grad, version) in before.items():
        t = s[name]
        np.testing.assert_array_equal(t.data, data, err_msg=f"{name} data changed")
        if grad is not None:
            np.testing.assert_array_equal(t.grad, grad, err_msg=f"{name}.grad changed")
        assert t._version == version, f"{name}: version counter moved"


def f32(t):
    return mg.tensor(t.data.astype(np.float32), requires_grad=True)


# (id, call(s, impl), error type, pattern the message must match: the argument's name and
# the expected vs actual values)
BAD_CALLS = [
    ("layer_norm wrong normalized_shape",
     lambda s, impl: F.layer_norm(s["x"], 7, impl=impl),
     ValueError, r"normalized_shape \(7,\).*shape \(4, 3, 8\)"),
    ("layer_norm normalized_shape longer than x",
     lambda s, impl: F.layer_norm(s["x"], (2, 4, 3, 8), impl=impl),
     ValueError, r"normalized_shape \(2, 4, 3, 8\).*shape \(4, 3, 8\)"),
    ("layer_norm multi-dim normalized_shape mismatch",
     lambda s, impl: F.layer_norm(s["x"], (4, 8), impl=impl),
     ValueError, r"normalized_shape \(4, 8\).*shape \(4, 3, 8\)"),
    ("layer_norm zero normalized_shape on x with D = 8",      # D = 0 is allowed, as in torch
     lambda s, impl: F.layer_norm(s["x"], 0, impl=impl),
     ValueError, r"normalized_shape \(0,\) must equal the trailing dims"),
    ("layer_norm negative normalized_shape",
     lambda s, impl: F.layer_norm(s["x"], -8, impl=impl),
     ValueError, r"normalized_shape must be a non-negative int.*-8"),
    ("layer_norm float normalized_shape",
     lambda s, impl: F.layer_norm(s["x"], 8.0, impl=impl),
     ValueError, r"normalized_shape must be a non-negative int.*8\.0"),
    ("layer_norm weight shape",
     lambda s, impl: F.layer_norm(s["x"], 8, s["channel_weight"], impl=impl),
     ValueError, r"weight must have shape \(8,\), got \(3,\)"),
    ("layer_norm bias shape",
     lambda s, impl: F.layer_norm(s["x"], 8, s["weight"], s["channel_weight"], impl=impl),
     ValueError, r"bias must have shape \(8,\), got \(3,\)"),
    ("layer_norm weight dtype",
     lambda s, impl: F.layer_norm(s["x"], 8, f32(s["weight"]), impl=impl),
     TypeError, r"weight must have x's dtype float64, got float32"),
    ("layer_norm weight not a tensor",
     lambda s, impl: F.layer_norm(s["x"], 8, np.ones(8), impl=impl),
     TypeError, r"weight must be a microgradnorm Tensor, got ndarray"),
    ("layer_norm integer x",
     lambda s, impl: F.layer_norm(mg.tensor(np.ones((2, 8), dtype=np.int64)), 8, impl=impl),
     TypeError, r"x must be a floating-point tensor.*int64"),
    ("layer_norm array x",
     lambda s, impl: F.layer_norm(s["x"].data, 8, impl=impl),
     TypeError, r"x must be a microgradnorm Tensor, got ndarray"),
    ("layer_norm negative eps",
     lambda s, impl: F.layer_norm(s["x"], 8, eps=-1e-5, impl=impl),
     ValueError, r"eps must be a non-negative number, got -1e-05"),
    ("layer_norm nan eps",
     lambda s, impl: F.layer_norm(s["x"], 8, eps=float("nan"), impl=impl),
     ValueError, r"eps must be a non-negative number, got nan"),
    ("rms_norm weight shape",
     lambda s, impl: F.rms_norm(s["x"], 8, s["channel_weight"], impl=impl),
     ValueError, r"rms_norm: weight must have shape \(8,\), got \(3,\)"),
    ("rms_norm wrong normalized_shape",
     lambda s, impl: F.rms_norm(s["x"], (3, 9), impl=impl),
     ValueError, r"rms_norm: normalized_shape \(3, 9\)"),
    ("add_layer_norm residual shape",
     lambda s, impl: F.add_layer_norm(s["x"], s["residual"][:, :2], 8, impl=impl),
     ValueError, r"residual must have the shape of x \(4, 3, 8\), got \(4, 2, 8\)"),
    ("add_layer_norm residual dtype",
     lambda s, impl: F.add_layer_norm(s["x"], f32(s["residual"]), 8, impl=impl),
     TypeError, r"residual must have x's dtype float64, got float32"),
    ("add_rms_norm residual not a tensor",
     lambda s, impl: F.add_rms_norm(s["x"], s["residual"].data, 8, impl=impl),
     TypeError, r"residual must be a microgradnorm Tensor"),
    ("add_rms_norm weight shape",
     lambda s, impl: F.add_rms_norm(s["x"], s["residual"], 8, s["channel_weight"], impl=impl),
     ValueError, r"add_rms_norm: weight must have shape \(8,\), got \(3,\)"),
]

# BatchNorm calls in training mode: a call that got past its checks would update the
# running statistics, so "nothing changed" is the point here.
BAD_BATCH_NORM_CALLS = [
    ("running_mean shape",
     lambda s, impl: F.batch_norm(s["x"], s["running_mean"][:2], s["running_var"],
                                  training=True, impl=impl),
     ValueError, r"running_mean must have shape \(3,\), got \(2,\)"),
    ("running_var dtype",
     lambda s, impl: F.batch_norm(s["x"], s["running_mean"], np.ones(3, dtype=np.int64),
                                  training=True, impl=impl),
     TypeError, r"running_var must be floating point, got dtype int64"),
    ("running_mean a list",
     lambda s, impl: F.batch_norm(s["x"], [0.0, 0.0, 0.0], s["running_var"],
                                  training=True, impl=impl),
     TypeError, r"running_mean must be a Tensor or an array, got list"),
    ("weight of the normalized size, not the channels",
     lambda s, impl: F.batch_norm(s["x"], s["running_mean"], s["running_var"], s["weight"],
                                  training=True, impl=impl),
     ValueError, r"weight must have shape \(3,\), got \(8,\)"),
    ("bias dtype",
     lambda s, impl: F.batch_norm(s["x"], s["running_mean"], s["running_var"],
                                  s["channel_weight"], f32(s["channel_weight"]),
                                  training=True, impl=impl),
     TypeError, r"bias must have x's dtype float64, got float32"),
    ("momentum out of range",
     lambda s, impl: F.batch_norm(s["x"], s["running_mean"], s["running_var"],
                                  training=True, momentum=1.5, impl=impl),
     ValueError, r"momentum must be a number in \[0, 1\], got 1.5"),
    ("one value per channel",
     lambda s, impl: F.batch_norm(s["x"][:1, :, :1], s["running_mean"], s["running_var"],
                                  training=True, impl=impl),
     ValueError, r"more than 1 value per channel.*\(1, 3, 1\)"),
    ("1-D x",
     lambda s, impl: F.batch_norm(s["x"][0, 0], s["running_mean"], s["running_var"],
                                  training=True, impl=impl),
     ValueError, r"x must have shape \(N, C\) or \(N, C, L\), got \(8,\)"),
    ("eval without running statistics",
     lambda s, impl: F.batch_norm(s["x"], s["running_mean"], None, training=False, impl=impl),
     ValueError, r"running_mean and running_var are required when training=False"),
    ("bad impl",
     lambda s, impl: F.batch_norm(s["x"], s["running_mean"], s["running_var"],
                                  training=True, impl="fast"),
     ValueError, r"impl must be one of \('fused', 'composite'\), got 'fast'"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("call, error, pattern",
                         [c[1:] for c in BAD_CALLS + BAD_BATCH_NORM_CALLS],
                         ids=[c[0] for c in BAD_CALLS + BAD_BATCH_NORM_CALLS])
def test_bad_input_is_a_clear_error_and_changes_nothing(call, error, pattern, impl):
    s = state()
    before = snapshot(s)
    with pytest.raises(error, match=pattern):
        call(s, impl)
    assert_unchanged(s, before)


@pytest.mark.parametrize("fn", [F.layer_norm, F.rms_norm])
def test_bad_impl_names_the_argument(fn):
    s = state()
    with pytest.raises(ValueError, match=rf"{fn.__name__}: impl must be one of .* got 'Fused'"):
        fn(s["x"], 8, impl="Fused")


@pytest.mark.parametrize("impl", IMPLS)
def test_a_good_call_after_a_bad_one_is_unaffected(impl):
    # The failed call left no half-made state behind: the next call gives what a fresh
    # state gives.
    s, fresh = state(), state()
    with pytest.raises(ValueError):
        F.batch_norm(s["x"], s["running_mean"][:2], s["running_var"], training=True,
                     impl=impl)
    for t in (s, fresh):
        F.batch_norm(t["x"], t["running_mean"], t["running_var"], training=True, impl=impl)
    np.testing.assert_array_equal(s["running_mean"].data, fresh["running_mean"].data)
    np.testing.assert_array_equal(s["running_var"].data, fresh["running_var"].data)


@pytest.mark.parametrize("impl", IMPLS)
def test_inplace_change_of_a_saved_weight_is_detected_and_changes_no_grad(impl):
    s = state()
    y = F.layer_norm(s["x"] * 1.0, 8, s["weight"], s["bias"], impl=impl)
    loss = (y * y).sum()
    with mg.no_grad():
        s["weight"].mul_(2.0)                  # saved by the fused node, or by Mul
    before = snapshot(s)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()
    assert_unchanged(s, before)

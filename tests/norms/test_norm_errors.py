"""Bad input to the functional norms: a clear TypeError or ValueError that names the
function and the argument (and the expected vs actual shape or dtype), and nothing changed -
no running statistic, parameter, ``.grad`` or version counter - for both implementations.
The bad inputs every norm shares are drawn from the registry; those particular to one norm
(normalized_shape, BatchNorm's running statistics and options) are listed by hand."""

import numpy as np
import pytest
from norm_cases import IMPLS, SPECS, inputs, spec_id

import microgradnorm as mg
import microgradnorm.functional as F


def snapshot(s):
    return {name: (t.detach().clone(), None if t.grad is None else t.grad.clone(), t._version)
            for name, t in s.items()}


def assert_unchanged(s, before):
    for name, (data, grad, version) in before.items():
        t = s[name]
        np.testing.assert_array_equal(t.data, data, err_msg=f"{name} data changed")
        if grad is not None:
            np.testing.assert_array_equal(t.grad, grad, err_msg=f"{name}.grad changed")
        assert t._version == version, f"{name}: version counter moved"


def f32(t):
    return t.detach().float().requires_grad_()


# ----- every norm of the registry -----------------------------------------------------------
def registry_state(spec):
    """{name: Tensor} of x (4, 3, 8) and its inputs, each with a gradient already
    accumulated, and running statistics as Tensors (BatchNorm normalizes dim 1)."""
    arrays, running = inputs(spec, (4, 3, 8))
    s = {name: mg.tensor(a, requires_grad=True) for name, a in arrays.items()}
    for t in s.values():
        t.grad = mg.tensor(np.random.default_rng(1).standard_normal(t.shape))
    return s, {name: mg.tensor(a) for name, a in (running or {}).items()}


def bad_inputs(spec):
    """(id, {input: spoil(Tensor)}, options, error, message pattern after "<name>: "), from
    the declaration: x, eps where the norm has one, each learned and like-x input."""
    x = spec.x
    cases = [(f"{x} a NumPy array", {x: lambda t: t.detach().numpy()}, {}, TypeError,
              f"{x} must be a microgradnorm Tensor, got ndarray"),
             (f"{x} of int64", {x: lambda t: mg.tensor(t.data.astype(np.int64))}, {},
              TypeError, f"{x} must be a floating-point tensor .*got dtype torch\\.int64"),
             ("impl 'Fused'", {}, {"impl": "Fused"}, ValueError,
              r"impl must be one of \('fused', 'composite'\), got 'Fused'")]
    if spec.has_eps:                             # a norm with an eps
        cases += [("eps a string", {}, {"eps": "1e-5"}, TypeError,
                   "eps must be a real number, got str '1e-5'"),
                  ("eps a list", {}, {"eps": [1e-5]}, TypeError,
                   "eps must be a real number, got list")]
    for spec_input in spec.inputs_of("per-feature", "per-channel", "scalar", "like-x"):
        name = spec_input.name
        if spec_input.kind == "scalar":                 # two numbers where one is learned
            wrong, says = (lambda t: t.reshape(1).expand(2)), rf"{name} must .*\(2,\)"
        else:
            shape = "the shape of x" if spec_input.kind == "like-x" else "shape"
            wrong, says = (lambda t: t[:-1]), rf"{name} must have {shape} \(.*\), got \("
        cases += [(f"{name} of another shape", {name: wrong}, {}, ValueError, says),
                  (f"{name} a NumPy array", {name: lambda t: t.detach().numpy()}, {}, TypeError,
                   rf"{name} must be a microgradnorm Tensor, got ndarray")]
        if not spec_input.other_float:          # (rms_norm's weight: torch's composite runs)
            cases += [(f"{name} float32", {name: f32}, {}, TypeError,
                       rf"{name} must have x's dtype torch.float64, got torch.float32")]
    return cases


REGISTRY_CASES = [pytest.param(spec, *case[1:], id=f"{spec.name}-{case[0]}")
                  for spec in SPECS for case in bad_inputs(spec)]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec, spoil, options, error, pattern", REGISTRY_CASES)
def test_bad_input_to_any_norm_is_a_clear_error_and_changes_nothing(spec, spoil, options,
                                                                     error, pattern, impl):
    s, running = registry_state(spec)
    before = snapshot(s | running)
    bad = s | {name: change(s[name]) for name, change in spoil.items()}
    options = {"impl": impl} | options
    # training: a call that got past its checks would update the running statistics
    with pytest.raises(error, match=rf"^{spec.name}: {pattern}"):
        spec.run(bad, options.pop("impl"), running, True, **options)
    assert_unchanged(s | running, before)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", [s for s in SPECS if s.params], ids=spec_id)
def test_inplace_change_of_a_saved_weight_is_detected_and_changes_no_grad(spec, impl):
    s, running = registry_state(spec)
    t = s | {spec.x: s[spec.x] * 1.0}
    outputs = spec.run(t, impl, running, True)
    loss = sum((o * o).sum() for o in outputs)
    with mg.no_grad():
        s[spec.params[0]].mul_(2.0)           # saved by the fused node, or by Mul
    before = snapshot(s)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()
    assert_unchanged(s, before)


# ----- what is particular to one norm --------------------------------------------------------
def state():
    """x (4, 3, 8) with a gradient already accumulated, and running statistics of 3
    channels (BatchNorm normalizes dim 1)."""
    rng = np.random.default_rng(0)
    s = {"x": mg.tensor(rng.standard_normal((4, 3, 8)), requires_grad=True),
         "running_mean": mg.tensor(rng.standard_normal(3)),
         "running_var": mg.tensor(1 + rng.random(3))}
    s["x"].grad = mg.tensor(rng.standard_normal((4, 3, 8)))
    return s


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
    ("rms_norm wrong normalized_shape",
     lambda s, impl: F.rms_norm(s["x"], (3, 9), impl=impl),
     ValueError, r"rms_norm: normalized_shape \(3, 9\)"),
    # torch's RuntimeError ("at least 1-dimensional"), and a ValueError as the others
    ("layer_norm empty normalized_shape",
     lambda s, impl: F.layer_norm(s["x"], (), impl=impl),
     RuntimeError, r"layer_norm: normalized_shape must be a non-negative int.*\(\)"),
    ("rms_norm empty normalized_shape",
     lambda s, impl: F.rms_norm(s["x"], [], impl=impl),
     RuntimeError, r"rms_norm: normalized_shape must be a non-negative int.*\[\]"),
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
    ("momentum a string",
     lambda s, impl: F.batch_norm(s["x"], s["running_mean"], s["running_var"],
                                  training=True, momentum="0.1", impl=impl),
     TypeError, r"momentum must be a real number, got str"),
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

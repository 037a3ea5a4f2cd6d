"""The pointwise losses as one node each (loss_nodes.py: mse_loss, smooth_l1_loss,
huber_loss, binary_cross_entropy, binary_cross_entropy_with_logits, nll_loss, logsigmoid)
against PyTorch, for every reduction: the node's name, the values and the gradients of a
random upstream to the input and the target in float64, float32, bfloat16 and float16 on
inputs with ties, the boundaries |d| = β and |d| = δ, 0, NaN, ±inf, empty tensors and random
values; second derivatives (create_graph) in float64; gradcheck and gradgradcheck over
hypothesis-drawn shapes."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg
import microgradnorm.nn.functional as F
from strategies import arrays, shapes
from torch_compare import one_torch_thread  # noqa: F401  (autouse: one torch thread)

TF = torch.nn.functional
REDUCTIONS = ["none", "mean", "sum"]
# (rtol, atol) of each dtype against torch: the same formulas; half precision computed in
# float32 and rounded once, a sum's order aside
TOLERANCES = {"float64": (1e-12, 1e-300), "float32": (2e-6, 1e-30),
              "bfloat16": (2 ** -7, 1e-30), "float16": (2 ** -10, 1e-6)}


def pair(name, **kwargs):
    """(ours, theirs): the F function ``name`` of each library, taking (x, t, reduction)."""
    return (lambda x, t, r: getattr(F, name)(x, t, reduction=r, **kwargs),
            lambda x, t, r: getattr(TF, name)(x, t, reduction=r, **kwargs))


def differences(boundary):
    """(x, t) pairs whose differences are the ties, ±boundary exactly and either side of
    it, 0, NaN and ±inf (of either operand), then random ones."""
    b = boundary
    x = [1.0, 0.0, -0.0, b, -b, 0.0, 0.0, np.nextafter(b, 0), np.nextafter(b, 9),
         np.nan, 0.0, np.inf, -np.inf, 0.0, np.inf, 30.0, -30.0]
    t = [1.0, 0.0, 0.0, 0.0, 0.0, b, -b, 0.0, 0.0, 0.0, np.nan, 0.0, 0.0, np.inf, np.inf,
         0.0, 0.0]
    rng = np.random.default_rng(0)
    return (np.concatenate([x, 2 * rng.standard_normal(23)]),
            np.concatenate([t, 2 * rng.standard_normal(23)]))


def logits():
    """Logits with 0, ±inf, NaN and far out, targets in [0, 1] with 0 and 1."""
    x, _ = differences(1.0)
    t = np.resize([0.0, 1.0, 0.5, 0.25, 1.0, 0.0], x.shape)
    return x, np.where(np.arange(x.size) >= 17, np.random.default_rng(1).random(x.size), t)


def probabilities():
    """Probabilities with 0, 1 (each against targets 0 and 1) and random values."""
    rng = np.random.default_rng(2)
    x = np.concatenate([[0.0, 0.0, 1.0, 1.0, 0.5, 1e-13, 1 - 1e-13], rng.random(33)])
    t = np.concatenate([[0.0, 1.0, 0.0, 1.0, 0.5, 1.0, 0.0], rng.random(33)])
    return x, t


WEIGHT = np.random.default_rng(3).random(40)
# name: (ours, theirs), torch's node name, the (x, t) data, whether t is differentiated
CASES = {
    "mse_loss": (pair("mse_loss"), "MseLossBackward0", differences(1.0), True),
    "smooth_l1_loss": (pair("smooth_l1_loss"), "SmoothL1LossBackward0", differences(1.0),
                       True),
    "smooth_l1_loss_beta": (pair("smooth_l1_loss", beta=0.5), "SmoothL1LossBackward0",
                            differences(0.5), True),
    "huber_loss": (pair("huber_loss"), "HuberLossBackward0", differences(1.0), True),
    "huber_loss_delta": (pair("huber_loss", delta=0.75), "HuberLossBackward0",
                         differences(0.75), True),
    "bce_with_logits": (pair("binary_cross_entropy_with_logits"),
                        "BinaryCrossEntropyWithLogitsBackward0", logits(), True),
    "binary_cross_entropy": (pair("binary_cross_entropy"), "BinaryCrossEntropyBackward0",
                             probabilities(), True),
}


def weighted_cases(library):
    """bce_with_logits with a weight and a pos_weight, bce with a weight (constants)."""
    functional = F if library is mg else TF

    def weights(x):
        return (library.tensor(WEIGHT).to(x.dtype),
                library.tensor(WEIGHT[::-1].copy() * 3).to(x.dtype))
    return {
        "bce_with_logits_weights": lambda x, t, r: functional.binary_cross_entropy_with_logits(
            x, t, weights(x)[0], reduction=r, pos_weight=weights(x)[1]),
        "binary_cross_entropy_weight": lambda x, t, r: functional.binary_cross_entropy(
            x, t, weights(x)[0], reduction=r),
    }


WEIGHTED = {"bce_with_logits_weights": ("BinaryCrossEntropyWithLogitsBackward0", logits()),
            "binary_cross_entropy_weight": ("BinaryCrossEntropyBackward0", probabilities())}


def as_float64(t):
    return t.detach().to(mg.float64).numpy() if isinstance(t, mg.Tensor) \
        else t.detach().double().numpy()


def run(fn, library, data, dtype, reduction, upstream_seed=4):
    """(the output, x's gradient, t's gradient, the node's name) of fn on data in dtype."""
    x_data, t_data = data
    kind = getattr(library, dtype)
    x = library.tensor(x_data).to(kind).requires_grad_()
    t = library.tensor(t_data).to(kind).requires_grad_()
    out = fn(x, t, reduction)
    upstream = np.random.default_rng(upstream_seed).standard_normal(tuple(out.shape))
    out.backward(library.tensor(upstream).to(kind))
    return (as_float64(out), as_float64(x.grad), as_float64(t.grad), out.grad_fn.name())


def assert_close(got, expected, dtype):
    rtol, atol = TOLERANCES[dtype]
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def compare(ours, theirs, node, data, dtype, reduction):
    try:
        expected = run(theirs, torch, data, dtype, reduction)
    except RuntimeError:                     # no torch CPU kernel for this dtype
        pytest.skip(f"torch has no CPU kernel for {dtype}")
    got = run(ours, mg, data, dtype, reduction)
    assert got[3] == expected[3] == node
    for a, b in zip(got[:3], expected[:3]):
        assert_close(a, b, dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", list(TOLERANCES))
@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_and_node_name_match_torch(name, dtype, reduction):
    (ours, theirs), node, data, _ = CASES[name]
    if name == "binary_cross_entropy" and dtype in ("bfloat16", "float16"):
        # probabilities rounded to half precision: 1 - 1e-13 is 1
        data = tuple(np.asarray(torch.tensor(d).to(getattr(torch, dtype)).double())
                     for d in data)
    compare(ours, theirs, node, data, dtype, reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(WEIGHTED))
def test_weighted_values_gradients_and_node_name_match_torch(name, dtype, reduction):
    node, data = WEIGHTED[name]
    compare(weighted_cases(mg)[name], weighted_cases(torch)[name], node, data, dtype,
            reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", list(CASES))
def test_empty_inputs_match_torch(name, reduction):
    (ours, theirs), node, _, _ = CASES[name]
    compare(ours, theirs, node, (np.zeros((0, 3)), np.zeros((0, 3))), "float64", reduction)


@pytest.mark.parametrize("dtype", list(TOLERANCES))
def test_logsigmoid_matches_torch(dtype):
    data, _ = differences(1.0)
    upstream = np.random.default_rng(5).standard_normal(data.shape)
    results = []
    for library, functional in ((mg, F), (torch, TF)):
        x = library.tensor(data).to(getattr(library, dtype)).requires_grad_()
        out = functional.logsigmoid(x)
        out.backward(library.tensor(upstream).to(getattr(library, dtype)))
        results.append((as_float64(out), as_float64(x.grad), out.grad_fn.name()))
    assert results[0][2] == results[1][2] == "LogSigmoidBackward0"
    for a, b in zip(results[0][:2], results[1][:2]):
        assert_close(a, b, dtype)


# ----- nll_loss -----------------------------------------------------------------------------
NLL_SHAPES = [(5,), (4, 5), (3, 5, 4), (2, 5, 3, 2), (2, 5, 2, 2, 3)]


def nll_case(shape, seed=6):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    target_shape = () if len(shape) == 1 else shape[:1] + shape[2:]
    target = rng.integers(0, shape[0 if len(shape) == 1 else 1], target_shape)
    if x.ndim > 1:
        x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]       # in rows a target may pick
    return x, target


def nll_run(library, functional, x_data, target, dtype, **kwargs):
    x = library.tensor(x_data).to(getattr(library, dtype)).requires_grad_()
    weight = kwargs.pop("weight", None)
    if weight is not None:
        weight = library.tensor(weight).to(getattr(library, dtype))
    out = functional.nll_loss(x, library.tensor(target), weight, **kwargs)
    upstream = np.random.default_rng(7).standard_normal(tuple(out.shape))
    out.backward(library.tensor(upstream).to(getattr(library, dtype)))
    return as_float64(out), as_float64(x.grad), out.grad_fn.name()


@pytest.mark.parametrize("options", [{}, {"weight": [0.5, 0.0, 2.0, 1.0, 3.0]},
                                     {"ignore_index": 1},
                                     {"weight": [0.0, 0.0, 0.0, 0.0, 0.0], "ignore_index": 2}],
                         ids=["plain", "weight", "ignore_index", "zero_weights"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", list(TOLERANCES))
@pytest.mark.parametrize("shape", NLL_SHAPES, ids=str)
def test_nll_loss_matches_torch(shape, dtype, reduction, options):
    x, target = nll_case(shape)
    try:
        expected = nll_run(torch, TF, x, target, dtype, reduction=reduction, **options)
    except RuntimeError:
        pytest.skip(f"torch has no CPU nll_loss for {dtype}")
    got = nll_run(mg, F, x, target, dtype, reduction=reduction, **options)
    # torch views the output of a 3-D or 5-D input's "none" (ViewBackward0); ours is the
    # node itself
    viewed = reduction == "none" and len(shape) in (3, 5)
    node = "NllLoss2DBackward0" if len(shape) > 2 else "NllLossBackward0"
    assert got[2] == node and (viewed or expected[2] == node)
    if reduction != "none" and len(shape) > 2 and dtype in ("bfloat16", "float16"):
        # torch's nll_loss2d sums the rows in the half dtype itself; ours in float32, and
        # rounds once: a few of its ulps apart
        np.testing.assert_allclose(got[0], expected[0], rtol=8 * TOLERANCES[dtype][0])
        got, expected = got[1:2], expected[1:2]
    for a, b in zip(got[:2], expected[:2]):
        assert_close(a, b, dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_of_an_empty_batch_matches_torch(reduction):
    got = nll_run(mg, F, np.zeros((0, 3)), np.zeros(0, np.int64), "float64",
                  reduction=reduction)
    expected = nll_run(torch, TF, np.zeros((0, 3)), np.zeros(0, np.int64), "float64",
                       reduction=reduction)
    assert got[2] == expected[2]
    for a, b in zip(got[:2], expected[:2]):
        np.testing.assert_array_equal(a, b)


# ----- second derivatives -------------------------------------------------------------------
def second_derivatives(fn, library, data, reduction, seed=8):
    """The gradients of x, t and the upstream of sum(dx·u + dt·v), (dx, dt) the gradient of
    fn at (x, t) for the upstream (create_graph=True)."""
    x, t = (library.tensor(d, requires_grad=True) for d in data)
    out = fn(x, t, reduction)
    rng = np.random.default_rng(seed)
    grad = library.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=True)
    dx, dt = library.autograd.grad(out, (x, t), grad, create_graph=True)
    u, v = (library.tensor(rng.standard_normal(data[0].shape)) for _ in range(2))
    (dx * u + dt * v).sum().backward()
    return [np.zeros(tuple(a.shape)) if a.grad is None else a.grad.numpy()
            for a in (x, t, grad)]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", list(CASES))
def test_second_derivatives_match_torch(name, reduction):
    (ours, theirs), _, data, _ = CASES[name]
    if name == "binary_cross_entropy":
        # inside (0, 1): at 0 and 1 torch's double backward adds ε to x and 1 - x, ours
        # clamps x (1 - x)
        data = tuple(d[7:] for d in data)
    finite = np.isfinite(data[0]) & np.isfinite(data[1])
    data = tuple(d[finite] for d in data)
    expected = second_derivatives(theirs, torch, data, reduction)
    got = second_derivatives(ours, mg, data, reduction)
    # torch's double backward of binary_cross_entropy divides by (x + ε)² (1 - x + ε)², ε =
    # 1e-12, ours by x² (1 - x)²: a relative 1e-12 / min(x, 1 - x) apart
    rtol = 1e-8 if name == "binary_cross_entropy" else 1e-10
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_second_derivatives_match_torch(reduction):
    x, target = nll_case((4, 5, 3), seed=9)
    results = []
    for library, functional in ((mg, F), (torch, TF)):
        inputs = library.tensor(x, requires_grad=True)
        out = functional.nll_loss(inputs, library.tensor(target), reduction=reduction)
        grad = library.tensor(np.ones(tuple(out.shape)), requires_grad=True)
        (dx,) = library.autograd.grad(out, inputs, grad, create_graph=True)
        (dx * library.tensor(np.arange(x.size).reshape(x.shape))).sum().backward()
        results.append((as_float64(dx), grad.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# ----- gradcheck and gradgradcheck over drawn shapes ----------------------------------------
def away_from_kinks(x, t, kinks, gap=1e-3):
    """x moved so that no |x - t| lies within ``gap`` of a kink (finite differences
    straddling one disagree)."""
    for kink in kinks:
        near = np.abs(np.abs(x - t) - kink) < gap
        x = np.where(near, x + 10 * gap, x)
    return x


@settings(max_examples=10, deadline=None)
@given(shape=shapes(0, 3), data=arrays((48,), -3.0, 3.0),
       reduction=st.sampled_from(REDUCTIONS))
def test_gradcheck_and_gradgradcheck_on_drawn_shapes(shape, data, reduction):
    size = int(np.prod(shape))
    raw_x, raw_t = np.resize(data, shape), np.resize(data[::-1], shape)
    for name, kinks in (("mse_loss", []), ("smooth_l1_loss_beta", [0.5]),
                        ("huber_loss_delta", [0.75]), ("bce_with_logits", [])):
        ours = CASES[name][0][0]
        t = raw_t if name != "bce_with_logits" else raw_t / 8 + 0.5       # in (0, 1)
        x = away_from_kinks(raw_x, t, kinks)
        args = (mg.tensor(x, requires_grad=True), mg.tensor(t, requires_grad=True))
        def loss(a, b, fn=ours):
            return fn(a, b, reduction)
        assert mg.autograd.gradcheck(loss, args), name
        assert mg.autograd.gradgradcheck(loss, args), name
    probabilities = (np.resize(data, shape) + 3.5) / 7                     # inside (0, 1)
    args = (mg.tensor(probabilities, requires_grad=True),
            mg.tensor(np.resize(data[::-1], shape) / 8 + 0.5, requires_grad=True))
    def bce(a, b):
        return F.binary_cross_entropy(a, b, reduction=reduction)
    assert mg.autograd.gradcheck(bce, args)
    assert mg.autograd.gradgradcheck(bce, args)
    x = mg.tensor(np.resize(data, shape), requires_grad=True)
    assert mg.autograd.gradcheck(F.logsigmoid, (x,))
    assert mg.autograd.gradgradcheck(F.logsigmoid, (x,))
    if size and len(shape) >= 1:
        classes = shape[0 if len(shape) == 1 else 1]
        target_shape = () if len(shape) == 1 else shape[:1] + shape[2:]
        target = mg.tensor(np.resize(np.arange(7) % classes, target_shape).astype(np.int64))
        def nll(a):
            return F.nll_loss(a, target, reduction=reduction)
        assert mg.autograd.gradcheck(nll, (x,))
        assert mg.autograd.gradgradcheck(nll, (x,))


@pytest.mark.parametrize("which", ["weight", "pos_weight"])
def test_a_write_into_a_logits_weight_before_backward_raises_as_torchs(which):
    # the node keeps the weights it read: writing one before backward is torch's error
    outcomes = []
    for lib in (torch, mg):
        x, t = lib.zeros(3, requires_grad=True), lib.full((3,), 0.25)
        weights = {"weight": lib.ones(3), "pos_weight": lib.full((3,), 2.0)}
        loss = lib.nn.functional.binary_cross_entropy_with_logits(x, t, **weights)
        weights[which].add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as error:
            loss.backward()
        outcomes.append(type(error.value))
    assert issubclass(outcomes[1], RuntimeError)

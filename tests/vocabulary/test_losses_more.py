"""The losses of losses_more.py and their nn Modules (loss_more.py) against PyTorch: the
margin losses (ranking, hinge embedding, soft margin, multi-label and multi-class margins),
the embedding losses (cosine, triplet, triplet with a distance) and the likelihood losses
(Gaussian, Poisson): float64 values and the gradient of a random upstream into each input
for every reduction, the gradient at each hinge's kink, float32, result dtypes, 0-d and
empty inputs, errors (PyTorch's classes), signatures, reprs and buffers of the modules."""

import inspect
import math
import tracemalloc
import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from microgradnorm.dtypes import check_bool
from torch_compare import check, pair, same_error

TF = torch.nn.functional
REDUCTIONS = ("mean", "sum", "none")
NAMES = ("margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
         "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss",
         "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
         "gaussian_nll_loss", "poisson_nll_loss")
MODULES = ("MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss", "MultiMarginLoss",
           "CosineEmbeddingLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
           "GaussianNLLLoss", "PoissonNLLLoss")


def signs(rng, shape):
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def multilabel_targets():
    # lists ended by -1, a class listed twice, a full row, an empty list, values after -1
    return np.array([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3], [-1, 0, 0, 0], [2, 2, -1, 0]])


def cases():
    """(id, name, arrays, which require grad, options): float64 calls run by both."""
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal((5, 4)) for _ in range(3))
    counts = rng.integers(0, 5, (5, 4)).astype(float)
    counts[0, :3] = [0.0, 0.5, 1.0]                         # Stirling's term left out here
    mixed = np.array([1.0, -1.0, 0.0, 2.0])                 # hinge: 0 and 2 add both terms
    yield "ranking", "margin_ranking_loss", [x, y, signs(rng, (5, 4))], [1, 1, 0], \
        {"margin": 0.3}
    yield "ranking-broadcast-target-grad", "margin_ranking_loss", \
        [x[:, :1], y[:1], signs(rng, (5, 4)) * rng.random((5, 4))], [1, 1, 1], {}
    yield "ranking-0d", "margin_ranking_loss", [np.array(0.2), np.array(0.5), np.array(1.0)], \
        [1, 1, 0], {"margin": 0.1}
    yield "hinge", "hinge_embedding_loss", [np.abs(x), signs(rng, (5, 4))], [1, 0], {}
    yield "hinge-broadcast", "hinge_embedding_loss", [x[:, :1], mixed], [1, 0], \
        {"margin": 0.5}
    yield "soft", "soft_margin_loss", [3 * x, signs(rng, (5, 4))], [1, 0], {}
    yield "soft-broadcast", "soft_margin_loss", [x, signs(rng, (4,))], [1, 0], {}
    labels = (rng.random((5, 4)) < 0.5).astype(float)
    yield "multilabel-soft", "multilabel_soft_margin_loss", [x, labels], [1, 1], {}
    yield "multilabel-soft-weight", "multilabel_soft_margin_loss",  \
        [x, labels, rng.random(4) + 0.5], [1, 0, 1], {}
    yield "multilabel-soft-1d", "multilabel_soft_margin_loss", [x[0], labels[0]], [1, 0], {}
    yield "multilabel-soft-3d", "multilabel_soft_margin_loss",  \
        [rng.standard_normal((2, 3, 4)), (rng.random((2, 3, 4)) < 0.5).astype(float)], \
        [1, 0], {}
    yield "multilabel", "multilabel_margin_loss", [x, multilabel_targets()], [1, 0], {}
    yield "multilabel-1d", "multilabel_margin_loss", [x[0], np.array([2, 0, -1, 3])], \
        [1, 0], {}
    yield "multilabel-0d", "multilabel_margin_loss", [np.array(0.3), np.array([0])], [1, 0], {}
    classes = np.array([0, 3, 1, 1, 2])
    for p in (1, 2):
        yield f"multi-p{p}", "multi_margin_loss", [x, classes], [1, 0], {"p": p}
        yield f"multi-p{p}-weight", "multi_margin_loss",  \
            [x, classes], [1, 0], {"p": p, "margin": 0.7, "weight": rng.random(4) + 0.5}
    yield "multi-1d", "multi_margin_loss", [x[0], np.array(2)], [1, 0], {}
    yield "multi-1d-target1", "multi_margin_loss", [x[0], np.array([2])], [1, 0], {}
    yield "multi-0d", "multi_margin_loss", [np.array(0.3), np.array(0)], [1, 0], {}
    targets = np.array([1.0, -1.0, 1.0, -1.0, 0.0])
    zero_row = x.copy()
    zero_row[0] = 0.0                                       # 1 - 0/√(ε‖x2‖²): finite
    yield "cosine", "cosine_embedding_loss", [zero_row, y, targets], [1, 1, 0], {}
    yield "cosine-margin", "cosine_embedding_loss", [x, y[:1], targets], [1, 1, 0], \
        {"margin": -0.5}
    yield "cosine-1d", "cosine_embedding_loss", [x[0], y[0], np.array(-1.0)], [1, 1, 0], {}
    for p, swap in [(2, False), (1, True), (1.5, True), (math.inf, False), (3, True)]:
        yield f"triplet-p{p}-{swap}", "triplet_margin_loss", [x, y / 2, z], [1, 1, 1], \
            {"p": p, "swap": swap, "margin": 2.0}
    yield "triplet-1d", "triplet_margin_loss", [x[0], y[0], z[0]], [1, 1, 1], {"eps": 0.0}
    yield "triplet-3d", "triplet_margin_loss", [rng.standard_normal((2, 3, 4)), y[None, :3],
                                                 z[:2, None]], [1, 1, 1], {"swap": True}
    yield "triplet-0d", "triplet_margin_loss", [np.array(0.5), np.array(0.1), np.array(2.0)], \
        [1, 1, 1], {}
    for swap in (False, True):
        yield f"triplet-distance-{swap}", "triplet_margin_with_distance_loss", \
            [x, y / 2, z], [1, 1, 1], {"swap": swap, "margin": 2.0}
    variance = rng.random((5, 4)) + 0.1
    clamped = variance.copy()
    clamped[0, :2] = [1e-9, 0.0]                            # below eps: its gradient at eps
    yield "gaussian", "gaussian_nll_loss", [x, y, variance], [1, 1, 1], {}
    yield "gaussian-full-eps", "gaussian_nll_loss", [x, y, clamped], [1, 1, 1], \
        {"full": True, "eps": 0.2}
    yield "gaussian-rows", "gaussian_nll_loss", [x, y, variance[:, 0]], [1, 0, 1], {}
    yield "gaussian-one-dim", "gaussian_nll_loss", [x, y, variance[:1]], [1, 0, 1], {}
    yield "gaussian-target-broadcast", "gaussian_nll_loss", [x[0], y, variance[0]], \
        [1, 1, 1], {}
    yield "gaussian-0d", "gaussian_nll_loss", [np.array(0.3), np.array(1.0), np.array(0.4)], \
        [1, 1, 1], {}
    for log_input in (True, False):
        for full in (False, True):
            data = x if log_input else np.abs(x) + 0.01
            yield f"poisson-{log_input}-{full}", "poisson_nll_loss", [data, counts], [1, 1], \
                {"log_input": log_input, "full": full}
    yield "poisson-broadcast", "poisson_nll_loss", [x[0], counts + 2], [1, 1], {"full": True}


CASES = list(cases())


def call(lib, name, arrays, grads, options, reduction, dtype=None):
    """The loss of one library, its tensors (requiring grad as ``grads``) made from arrays;
    a "weight" option becomes a tensor too."""
    functional = F if lib is mg else TF
    tensors = []
    for array, grad in zip(arrays, grads):
        if dtype is not None and array.dtype.kind == "f":
            array = array.astype(dtype)
        tensors.append(lib.tensor(array, requires_grad=bool(grad)))
    options = dict(options)
    if "weight" in options:
        weight = options["weight"] if dtype is None else options["weight"].astype(dtype)
        options["weight"] = lib.tensor(weight)
    inputs = [t for t, grad in zip(tensors, grads) if grad]
    if name == "multilabel_soft_margin_loss" and len(tensors) == 3:
        options["weight"] = tensors.pop()
    return getattr(functional, name)(*tensors, reduction=reduction, **options), inputs


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_loss_matches_torch_in_float64(case, reduction):
    _, name, arrays, grads, options = case
    ours, our_inputs = call(mg, name, arrays, grads, options, reduction)
    theirs, their_inputs = call(torch, name, arrays, grads, options, reduction)
    assert ours.shape == tuple(theirs.shape)
    check(ours, theirs, list(zip(our_inputs, their_inputs)))


@pytest.mark.parametrize("case", CASES[::3], ids=[case[0] for case in CASES[::3]])
def test_loss_matches_torch_in_float32(case):
    _, name, arrays, grads, options = case
    ours, our_inputs = call(mg, name, arrays, grads, options, "none", np.float32)
    theirs, their_inputs = call(torch, name, arrays, grads, options, "none", np.float32)
    check(ours, theirs, list(zip(our_inputs, their_inputs)), atol=1e-5, rtol=1e-5)


# ----- the kinks ----------------------------------------------------------------------------
def grads_at(lib, name, arrays, grads, **options):
    loss, inputs = call(lib, name, [np.asarray(a, float) if np.asarray(a).dtype.kind == "f"
                                    else np.asarray(a) for a in arrays], grads, options, "sum")
    loss.backward()
    return loss.item(), [t.grad.numpy() for t in inputs]


KINKS = [  # each loss exactly at its hinge: clamp_min passes the gradient, `z > 0` does not
    ("margin_ranking_loss", [[0.5], [0.5], [1.0]], [1, 1, 0], {}),
    ("hinge_embedding_loss", [[1.0, 0.25], [-1.0, -1.0]], [1, 0], {"margin": 1.0}),
    ("multilabel_margin_loss", [[[0.0, 1.0, 0.5]], [[1, -1, 0]]], [1, 0], {}),
    ("multi_margin_loss", [[[0.0, 1.0, 0.5]], [1]], [1, 0], {}),
    ("multi_margin_loss", [[[0.0, 1.0, 0.5]], [1]], [1, 0], {"p": 2}),
    ("cosine_embedding_loss", [[[1.0, 0.0]], [[0.0, 1.0]], [-1.0]], [1, 1, 0], {}),
    ("triplet_margin_loss", [[[0.0, 0.0]], [[1.0, 0.0]], [[2.0, 0.0]]], [1, 1, 1],
     {"eps": 0.0}),
    ("triplet_margin_loss", [[[0.0, 0.0]], [[0.0, 0.5]], [[0.0, 0.25]]], [1, 1, 1],   # a tie
     {"eps": 0.0, "swap": True, "margin": 0.5}),
    ("triplet_margin_with_distance_loss", [[[0.0, 0.0]], [[1.0, 0.0]], [[2.0, 0.0]]],
     [1, 1, 1], {}),
]


@pytest.mark.parametrize("name, arrays, grads, options", KINKS,
                         ids=[f"{k[0]}-{i}" for i, k in enumerate(KINKS)])
def test_gradient_at_the_kink_is_torch_s(name, arrays, grads, options):
    loss, ours = grads_at(mg, name, arrays, grads, **options)
    expected_loss, theirs = grads_at(torch, name, arrays, grads, **options)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-15, atol=0)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-15, atol=0)
    assert any(np.any(g != 0) for g in theirs) or name.startswith("multi")


# ----- what the class margins' kernels leave out ----------------------------------------------
NAN_SCORES = np.array([[0.2, np.nan, 0.5, -1.0], [1.0, 2.0, 3.0, np.inf],
                       [np.inf, np.inf, 0.0, 0.0]])


@pytest.mark.parametrize("name, target, options", [
    ("multi_margin_loss", [0, 1, 0], {"p": 1}),
    ("multi_margin_loss", [0, 1, 0], {"p": 2}),
    ("multilabel_margin_loss", [[0, -1, 0, 0], [3, -1, 0, 0], [0, 1, -1, 0]], {}),
])
def test_a_nan_margin_adds_nothing_as_in_torch_s_kernel(name, target, options):
    # the kernels add a pair only where z > 0: a NaN z (a NaN score, inf - inf) adds 0
    (x, xt), (t, tt) = pair(NAN_SCORES), pair(np.array(target))
    ours = getattr(F, name)(x, t, reduction="none", **options)
    theirs = getattr(TF, name)(xt, tt, reduction="none", **options)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-15)
    assert np.isfinite(ours.detach().numpy()[[0, 2]]).all()
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-15)


def test_a_nan_weight_reaches_only_the_classes_the_kernel_counts():
    (x, xt), (w, wt) = pair(np.array([[0.0, 1.0, 0.5]])), pair(np.array([1.0, np.nan, 3.0]),
                                                               requires_grad=False)
    F.multi_margin_loss(x, mg.tensor([1]), weight=w).backward()
    TF.multi_margin_loss(xt, torch.tensor([1]), weight=wt).backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())         # [0, nan, nan]


def test_multilabel_margin_loss_memory_does_not_grow_with_slots_times_classes():
    # 500 target slots of 1000 classes: one (16, 500, 1000) float64 array would be 64 MB
    rng = np.random.default_rng(7)
    scores = rng.standard_normal((16, 1000))
    target = np.argsort(rng.random((16, 1000)), axis=1)
    target[:, 500] = -1
    (x, xt), (t, tt) = pair(scores), pair(target)
    tracemalloc.start()
    try:
        loss = F.multilabel_margin_loss(x, t)
        loss.backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32e6, f"peak {peak / 1e6:.0f} MB"
    expected = TF.multilabel_margin_loss(xt, tt)
    expected.backward()
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-15)


# ----- dtypes, 0-d and empty inputs ---------------------------------------------------------
def run_both(function, *arrays, **options):
    """``F.<function>`` of both libraries on the arrays; (ours, theirs) without grad. Only
    torch's warnings are silenced: a RuntimeWarning of ours stays an error."""
    ours = getattr(F, function)(*[mg.tensor(a) for a in arrays], **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ours, getattr(TF, function)(*[torch.tensor(a) for a in arrays], **options)


DTYPE_CASES = [
    ("margin_ranking_loss", [np.array([0, 2, 5]), np.array([1, 1, 1]), np.array([-1, -1, 1])],
     {"margin": 1.5}),                                       # integer scores: float32
    ("hinge_embedding_loss", [np.float32([0.5, 2]), np.array([-1.0, 1.0])], {}),
    ("hinge_embedding_loss", [np.array([0, 2, 5]), np.array([-1, -1, 1])],
     {"margin": 1.5, "reduction": "sum"}),                   # input's dtype, as torch
    ("soft_margin_loss", [np.float32([0.5, 2]), np.array([-1.0, 1.0])], {}),
    ("soft_margin_loss", [np.array([0.5, 2]), np.array([-1, 1])], {}),
    ("multilabel_soft_margin_loss", [np.float32([[0.5, 2]]), np.array([[0.0, 1.0]])], {}),
    ("multilabel_soft_margin_loss", [np.array([[0.5, 2]]), np.array([[0, 1]])], {}),
    ("cosine_embedding_loss", [np.float32([[1, 2]]), np.float32([[3, 1]]), np.array([1.0])],
     {}),
    ("cosine_embedding_loss", [np.array([[1, 2]]), np.array([[3, 1]]), np.array([-1])], {}),
    ("triplet_margin_loss", [np.ones((2, 3), np.int64)] * 3, {}),
    ("triplet_margin_loss", [np.float32([[1, 2]]), np.array([[3.0, 1]]),
                             np.float32([[0, 0]])], {}),
    ("poisson_nll_loss", [np.array([0, 1, 4]), np.array([0, 1, 4])], {"reduction": "none"}),
    ("poisson_nll_loss", [np.float32([0, 1, 4]), np.array([0.0, 1, 4])], {"full": True}),
]


@pytest.mark.parametrize("name, arrays, options", DTYPE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(DTYPE_CASES)])
def test_result_dtypes_are_torch_s(name, arrays, options):
    ours, theirs = run_both(name, *arrays, **options)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_gaussian_dtypes_and_a_float_variance_as_torch():
    x, y = np.float32([[0.5, 2.0]]), np.float32([[0.0, 1.0]])
    for var, var_torch in [(0.5, 0.5), (mg.tensor(np.array([[0.5, 2.0]])),
                                         torch.tensor(np.array([[0.5, 2.0]])))]:
        ours = F.gaussian_nll_loss(mg.tensor(x), mg.tensor(y), var, reduction="none")
        theirs = TF.gaussian_nll_loss(torch.tensor(x), torch.tensor(y), var_torch,
                                      reduction="none")
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    var = mg.tensor([1e-9, 2.0])                             # the clamp is on a copy
    F.gaussian_nll_loss(mg.tensor([0.0, 1.0]), mg.tensor([1.0, 1.0]), var)
    assert var.numpy()[0] == np.float32(1e-9)


EMPTY_AND_0D = [
    ("margin_ranking_loss", [np.zeros(0)] * 3),
    ("hinge_embedding_loss", [np.zeros(0), np.zeros(0)]),
    ("soft_margin_loss", [np.zeros(0), np.zeros(0)]),
    ("soft_margin_loss", [np.array(0.3), np.array(-1.0)]),
    ("hinge_embedding_loss", [np.array(0.3), np.array(-1.0)]),
    ("multilabel_soft_margin_loss", [np.zeros((0, 4)), np.zeros((0, 4))]),
    ("multilabel_soft_margin_loss", [np.zeros((2, 0)), np.zeros((2, 0))]),
    ("multilabel_margin_loss", [np.array(0.3), np.array(-1)]),
    ("multi_margin_loss", [np.array(0.3), np.array(0)]),
    ("multi_margin_loss", [np.array([0.3, 0.5]), np.array(1)]),
    ("multi_margin_loss", [np.array(0.3), np.array([0])]),
    ("cosine_embedding_loss", [np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0)]),
    ("triplet_margin_loss", [np.zeros((0, 3))] * 3),
    ("triplet_margin_with_distance_loss", [np.zeros((0, 3))] * 3),
    ("gaussian_nll_loss", [np.zeros((0, 3)), np.zeros((0, 3)), np.ones((0, 3))]),
    ("gaussian_nll_loss", [np.array(0.3), np.array(1.0), np.array(0.5)]),
    ("poisson_nll_loss", [np.zeros(0), np.zeros(0)]),
    ("poisson_nll_loss", [np.array(0.3), np.array(2.0)]),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, arrays", EMPTY_AND_0D,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(EMPTY_AND_0D)])
def test_empty_and_0d_inputs_as_torch(name, arrays, reduction):
    ours, theirs = run_both(name, *arrays, reduction=reduction)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())      # NaN == NaN


@pytest.mark.parametrize("name, target", [("multi_margin_loss", np.zeros(0, np.int64)),
                                          ("multilabel_margin_loss", np.zeros((0, 3), np.int64))])
def test_class_margin_losses_of_no_samples(name, target):
    # torch's "mean" and "sum" of a batch of 0 return whatever its uninitialised output
    # holds; here the mean of nothing is NaN and the sum 0, as for every other loss
    x, xt = mg.zeros(0, 3, dtype=mg.float64, requires_grad=True), torch.zeros(0, 3)
    assert math.isnan(getattr(F, name)(x, mg.tensor(target)).item())
    total = getattr(F, name)(x, mg.tensor(target), reduction="sum")
    assert total.item() == 0
    total.backward()
    assert x.grad.shape == (0, 3)
    assert getattr(F, name)(x, mg.tensor(target), reduction="none").shape == \
        tuple(getattr(TF, name)(xt, torch.tensor(target), reduction="none").shape) == (0,)


# ----- errors -------------------------------------------------------------------------------
X, Y = np.ones((2, 3)), np.full((2, 3), 0.5)
L2 = np.array([1, 0])
ERRORS = [  # (name, arrays, options): torch raises; ours must raise an instance of its class
    ("margin_ranking_loss", [X, X, X], {"reduction": "avg"}),
    ("margin_ranking_loss", [X, X, X[0]], {}),
    ("margin_ranking_loss", [X[0], X[0, :2], X[0]], {}),
    ("margin_ranking_loss", [X, X, X], {"margin": "1"}),
    ("hinge_embedding_loss", [X, np.ones((2, 4))], {}),
    ("hinge_embedding_loss", [np.ones(3, np.int64), np.ones(3, np.int64)], {}),
    ("soft_margin_loss", [X[0], X], {}),
    ("soft_margin_loss", [np.ones(3, np.int64), np.ones(3, np.int64)], {}),
    ("soft_margin_loss", [X, X], {"reduction": "batchmean"}),
    ("multilabel_soft_margin_loss", [np.array(0.3), np.array(1.0)], {}),
    ("multilabel_soft_margin_loss", [np.ones((2, 3), np.int64), X], {}),
    ("multilabel_soft_margin_loss", [X, X, np.ones(4)], {}),
    ("multilabel_soft_margin_loss", [X, X], {"reduction": "x"}),
    ("multilabel_margin_loss", [np.zeros((2, 2, 2)), np.zeros((2, 2, 2), np.int64)], {}),
    ("multilabel_margin_loss", [np.zeros((2, 0)), np.zeros((2, 0), np.int64)], {}),
    ("multilabel_margin_loss", [np.zeros(0), np.zeros(0, np.int64)], {}),
    ("multilabel_margin_loss", [X, np.zeros((2, 3), np.int32)], {}),
    ("multilabel_margin_loss", [X, np.zeros((2, 3))], {}),
    ("multilabel_margin_loss", [X, np.zeros((2, 4), np.int64)], {}),
    ("multilabel_margin_loss", [X[0], np.zeros((1, 3), np.int64)], {}),
    ("multilabel_margin_loss", [X, np.array([[3, -1, 0], [0, 1, 2]])], {}),
    ("multilabel_margin_loss", [X, np.array([[0, -1, 7], [0, 1, 2]])], {}),
    ("multilabel_margin_loss", [X, np.array([[-2, -1, 0], [0, 1, 2]])], {}),
    ("multilabel_margin_loss", [np.ones((2, 3), np.int64), np.zeros((2, 3), np.int64)], {}),
    ("multilabel_margin_loss", [X, np.zeros((2, 3), np.int64)], {"reduction": "x"}),
    ("multi_margin_loss", [X, L2], {"p": 3}),
    ("multi_margin_loss", [X, L2], {"weight": np.ones((1, 3))}),
    ("multi_margin_loss", [X, L2], {"weight": np.ones(4)}),
    ("multi_margin_loss", [X, L2], {"weight": np.ones(3, np.float32)}),
    ("multi_margin_loss", [X, np.array([1, 0, 1])], {}),
    ("multi_margin_loss", [X, np.array([[1, 0]])], {}),
    ("multi_margin_loss", [X[0], np.array([1, 0])], {}),
    ("multi_margin_loss", [X, np.array([3, 0])], {}),
    ("multi_margin_loss", [X, np.array([-1, 0])], {}),
    ("multi_margin_loss", [X, L2.astype(np.int32)], {}),
    ("multi_margin_loss", [X, L2.astype(float)], {}),
    ("multi_margin_loss", [np.ones((2, 3), np.int64), L2], {}),
    ("multi_margin_loss", [np.zeros((2, 0)), L2], {}),
    ("multi_margin_loss", [np.zeros((2, 2, 2)), L2], {}),
    ("multi_margin_loss", [X, L2], {"margin": None}),
    ("multi_margin_loss", [X, L2], {"reduction": "x"}),
    ("cosine_embedding_loss", [X, X, np.ones((2, 1))], {}),
    ("cosine_embedding_loss", [X[0], X[0], np.ones(1)], {}),
    ("cosine_embedding_loss", [X, X, np.array(1.0)], {}),
    ("cosine_embedding_loss", [np.array(1.0), np.array(1.0), np.array(1.0)], {}),
    ("cosine_embedding_loss", [X, np.ones((2, 4)), np.ones(2)], {}),
    ("cosine_embedding_loss", [X, X, np.ones(3)], {}),
    ("cosine_embedding_loss", [X, X, np.ones(2)], {"reduction": "x"}),
    ("triplet_margin_loss", [X, X, X], {"margin": 0.0}),
    ("triplet_margin_loss", [X, X[0], X], {}),
    ("triplet_margin_loss", [X, X, X], {"swap": 1}),
    ("triplet_margin_loss", [X, X, X], {"p": "x"}),
    ("triplet_margin_loss", [X, np.ones((3, 3)), X], {}),
    ("triplet_margin_loss", [X[:1], X, np.ones((3, 3))], {}),
    ("triplet_margin_loss", [X, X, X], {"reduction": "x"}),
    ("triplet_margin_with_distance_loss", [X, X, X], {"margin": -1.0}),
    ("triplet_margin_with_distance_loss", [X, X[0], X], {}),
    ("triplet_margin_with_distance_loss", [X, X, X], {"reduction": "x"}),
    ("gaussian_nll_loss", [X, Y, np.ones(3)], {}),
    ("gaussian_nll_loss", [X, Y, np.ones((1, 1))], {}),
    ("gaussian_nll_loss", [np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 1, 1))], {}),
    ("gaussian_nll_loss", [np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 1, 0))], {}),
    ("gaussian_nll_loss", [X, Y, -X], {}),
    ("gaussian_nll_loss", [X, Y, X], {"reduction": "x"}),
    ("gaussian_nll_loss", [X, np.ones((3, 3)), X], {}),
    ("poisson_nll_loss", [X, X], {"reduction": "x"}),
    ("poisson_nll_loss", [X, X], {"log_input": 1}),
    ("poisson_nll_loss", [X, X], {"full": 1}),
    ("poisson_nll_loss", [X, np.ones((3, 3))], {}),
]


def expect_same_error(name, arrays, options):
    options = dict(options)
    weight = options.pop("weight", None)

    def run(lib):
        functional = F if lib is mg else TF
        extra = {} if weight is None else {"weight": lib.tensor(weight)}
        return getattr(functional, name)(*[lib.tensor(a) for a in arrays], **options, **extra)
    with pytest.raises(Exception) as expected:                # noqa: PT011 (torch's class)
        run(torch)
    with pytest.raises(expected.type):
        run(mg)


@pytest.mark.parametrize("name, arrays, options", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors_are_torch_s(name, arrays, options):
    expect_same_error(name, arrays, options)


def test_errors_of_arguments_torch_takes_only_as_python_values():
    x, xt = mg.tensor(X), torch.tensor(X)
    for ours, theirs in [
            (lambda: F.gaussian_nll_loss(x, x, -0.5), lambda: TF.gaussian_nll_loss(xt, xt, -0.5)),
            (lambda: F.gaussian_nll_loss(x, x, 1), lambda: TF.gaussian_nll_loss(xt, xt, 1)),
            (lambda: F.triplet_margin_with_distance_loss(x, x, x, 1.0),
             lambda: TF.triplet_margin_with_distance_loss(xt, xt, xt, 1.0)),
            (lambda: F.triplet_margin_loss(x, x, x, margin=-1),
             lambda: TF.triplet_margin_loss(xt, xt, xt, margin=-1))]:
        with pytest.raises(Exception) as expected:            # noqa: PT011 (torch's class)
            theirs()
        with pytest.raises(expected.type):
            ours()
    with pytest.raises(TypeError, match="input must be a Tensor"):
        F.soft_margin_loss(X, x)
    with pytest.raises(TypeError, match="distance_function must be callable"):
        F.triplet_margin_with_distance_loss(x, x, x, distance_function="euclidean")


def test_a_target_or_weight_that_requires_grad_is_refused_where_torch_refuses_it():
    x, xt = mg.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    t, tt = mg.tensor(Y, requires_grad=True), torch.tensor(Y, requires_grad=True)
    w, wt = mg.tensor(np.ones(3), requires_grad=True), torch.tensor(np.ones(3),
                                                                    requires_grad=True)
    for ours, theirs in [(lambda: F.soft_margin_loss(x, t), lambda: TF.soft_margin_loss(xt, tt)),
                         (lambda: F.multi_margin_loss(x, mg.tensor(L2), weight=w),
                          lambda: TF.multi_margin_loss(xt, torch.tensor(L2), weight=wt))]:
        with pytest.raises(RuntimeError, match="not differentiable"):
            theirs()
        with pytest.raises(RuntimeError, match="not differentiable"):
            ours()
        with mg.no_grad(), torch.no_grad():                  # without a graph: computed
            np.testing.assert_allclose(ours().item(), theirs().item(), rtol=1e-14)
    loss = F.multi_margin_loss(x, mg.tensor(L2), weight=w.detach())
    loss.backward()
    assert x.grad is not None and w.grad is None


def test_cosine_embedding_loss_names_a_target_that_does_not_fit_the_pairs():
    with pytest.raises(RuntimeError, match=r"target of shape \(3,\).* input1 \(2, 3\)"):
        F.cosine_embedding_loss(mg.tensor(X), mg.tensor(X), mg.tensor(np.ones(3)))


def test_gaussian_module_names_var_when_var_is_of_the_wrong_kind():
    same_error(lambda: nn.GaussianNLLLoss()(X, Y, 1),
               lambda: torch.nn.GaussianNLLLoss()(torch.tensor(X), torch.tensor(Y), 1))
    with pytest.raises(TypeError, match="var must be a Tensor or a float, got int"):
        nn.GaussianNLLLoss()(X, Y, 1)
    np.testing.assert_allclose(                                    # an array var: a Tensor
        nn.GaussianNLLLoss()(X, Y, np.full(2, 0.5)).item(),
        torch.nn.GaussianNLLLoss()(torch.tensor(X), torch.tensor(Y),
                                   torch.full((2,), 0.5, dtype=torch.float64)).item(),
        rtol=1e-15)


def test_a_function_and_its_module_refuse_an_option_in_the_same_words():
    x = mg.tensor(X)
    for function, module in [
            (lambda: F.triplet_margin_loss(x, x, x, margin=0.0),
             lambda: nn.TripletMarginLoss(margin=0.0)),
            (lambda: F.triplet_margin_with_distance_loss(x, x, x, margin=-1.0),
             lambda: nn.TripletMarginWithDistanceLoss(margin=-1.0)),
            (lambda: F.triplet_margin_with_distance_loss(x, x, x, distance_function=3),
             lambda: nn.TripletMarginWithDistanceLoss(distance_function=3)),
            (lambda: F.multi_margin_loss(x, mg.tensor(L2), p=3),
             lambda: nn.MultiMarginLoss(p=3)),
            (lambda: F.poisson_nll_loss(x, x, full=1), lambda: nn.PoissonNLLLoss(full=1))]:
        with pytest.raises((TypeError, ValueError)) as by_function:
            function()
        with pytest.raises(by_function.type) as by_module:
            module()
        # "<where>: <what>": the same what
        assert str(by_module.value).split(": ", 1)[1] == str(by_function.value).split(": ", 1)[1]
    with pytest.raises(TypeError, match="flag must be a bool, got int 1"):
        check_bool("f", "flag", 1)


def test_target_out_of_range_is_also_the_project_s_out_of_range_error():
    with pytest.raises(mg.ops.OutOfRangeError, match=r"in \[0, 3\)"):
        F.multi_margin_loss(mg.tensor(X), mg.tensor([3, 0]))
    with pytest.raises(IndexError, match=r"in \[-1, 3\)"):
        F.multilabel_margin_loss(mg.tensor(X), mg.tensor([[0, 5, -1], [0, 1, 2]]))


# ----- signatures and modules ---------------------------------------------------------------
def parameters(function):
    """(name, default, kind) of each parameter but self."""
    return [(p.name, p.default, p.kind) for p in inspect.signature(function).parameters.values()
            if p.name != "self"]


@pytest.mark.parametrize("name", NAMES + MODULES)
def test_signatures_are_torch_s(name):
    ours = getattr(F, name, None) or getattr(nn, name)
    theirs = getattr(TF, name, None) or getattr(torch.nn, name)
    # the same names, order, defaults and kinds, the deprecated size_average and reduce too
    assert parameters(ours) == parameters(theirs)
    assert name in F.__all__ or name in nn.__all__


def module_pairs(rng):
    weight = rng.random(4) + 0.5
    yield "scores", nn.MarginRankingLoss(0.2), torch.nn.MarginRankingLoss(0.2)
    yield "pair", nn.HingeEmbeddingLoss(margin=0.5, reduction="sum"), \
        torch.nn.HingeEmbeddingLoss(margin=0.5, reduction="sum")
    yield "pair", nn.SoftMarginLoss(reduction="none"), torch.nn.SoftMarginLoss(reduction="none")
    yield "labels", nn.MultiLabelSoftMarginLoss(mg.tensor(weight)), \
        torch.nn.MultiLabelSoftMarginLoss(torch.tensor(weight))
    yield "lists", nn.MultiLabelMarginLoss(), torch.nn.MultiLabelMarginLoss()
    yield "classes", nn.MultiMarginLoss(2, 0.5, mg.tensor(weight)), \
        torch.nn.MultiMarginLoss(2, 0.5, torch.tensor(weight))
    yield "cosine", nn.CosineEmbeddingLoss(0.1), torch.nn.CosineEmbeddingLoss(0.1)
    yield "triplet", nn.TripletMarginLoss(2.0, 1.0, 0.0, True), \
        torch.nn.TripletMarginLoss(2.0, 1.0, 0.0, True)
    yield "triplet", nn.TripletMarginWithDistanceLoss(swap=True), \
        torch.nn.TripletMarginWithDistanceLoss(swap=True)
    yield "triplet", nn.TripletMarginWithDistanceLoss(
        distance_function=nn.PairwiseDistance(p=1.0), margin=2.0), \
        torch.nn.TripletMarginWithDistanceLoss(
            distance_function=torch.nn.PairwiseDistance(p=1.0), margin=2.0)
    yield "gaussian", nn.GaussianNLLLoss(full=True), torch.nn.GaussianNLLLoss(full=True)
    yield "poisson", nn.PoissonNLLLoss(False, True, eps=1e-3), \
        torch.nn.PoissonNLLLoss(False, True, eps=1e-3)


def module_arguments(kind, rng):
    """The forward's arrays, and which take a gradient."""
    x, y, z = (rng.standard_normal((5, 4)) for _ in range(3))
    return {"scores": ([x[:, 0], y[:, 0], signs(rng, 5)], [1, 1, 0]),
            "pair": ([x, signs(rng, (5, 4))], [1, 0]),
            "labels": ([x, (rng.random((5, 4)) < 0.5).astype(float)], [1, 0]),
            "lists": ([x, multilabel_targets()], [1, 0]),
            "classes": ([x, np.array([0, 3, 1, 1, 2])], [1, 0]),
            "cosine": ([x, y, signs(rng, 5)], [1, 1, 0]),
            "triplet": ([x, y, z], [1, 1, 1]),
            "gaussian": ([x, y, rng.random((5, 4)) + 0.1], [1, 1, 1]),
            "poisson": ([np.abs(x), rng.integers(0, 5, (5, 4)).astype(float)], [1, 0])}[kind]


def test_modules_match_torch_s_output_repr_and_state():
    rng = np.random.default_rng(5)
    for kind, ours, theirs in module_pairs(rng):
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
        arrays, grads = module_arguments(kind, rng)
        inputs = [mg.tensor(a, requires_grad=bool(g)) for a, g in zip(arrays, grads)]
        torch_inputs = [torch.tensor(a, requires_grad=bool(g)) for a, g in zip(arrays, grads)]
        pairs = [(a, b) for a, b, g in zip(inputs, torch_inputs, grads) if g]
        check(ours(*inputs), theirs(*torch_inputs), pairs)


def test_modules_take_arrays_and_a_float_variance():
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(
        nn.GaussianNLLLoss()(x, y, 0.5).item(),
        torch.nn.GaussianNLLLoss()(torch.tensor(x), torch.tensor(y), 0.5).item(), rtol=1e-14)
    np.testing.assert_allclose(
        nn.MultiMarginLoss()(x, np.array([0, 1, 3])).item(),
        torch.nn.MultiMarginLoss()(torch.tensor(x), torch.tensor([0, 1, 3])).item(),
        rtol=1e-14)
    loss = nn.MultiMarginLoss(weight=mg.tensor([1.0, 2.0, 3.0, 4.0]))
    loss.to(dtype=mg.float64)                                  # the weight is a buffer
    assert loss.weight.dtype == mg.float64
    assert isinstance(nn.TripletMarginWithDistanceLoss().distance_function, nn.PairwiseDistance)


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.MultiMarginLoss(p=3),
    lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
    lambda lib: lib.nn.TripletMarginLoss(margin=0.0),
    lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1.0),
])
def test_module_options_are_checked_when_built_as_torch(build):
    with pytest.raises(ValueError):
        build(torch)
    with pytest.raises(ValueError):
        build(mg)


def test_module_options_torch_checks_late_are_checked_when_built():
    for build in [lambda: nn.MarginRankingLoss(reduction="avg"),
                  lambda: nn.TripletMarginLoss(swap=1), lambda: nn.PoissonNLLLoss(full=1),
                  lambda: nn.CosineEmbeddingLoss(margin="0"),
                  lambda: nn.TripletMarginWithDistanceLoss(distance_function=3),
                  lambda: nn.TripletMarginWithDistanceLoss(swap="no"),
                  lambda: nn.GaussianNLLLoss(full="no")]:
        with pytest.raises((ValueError, TypeError)):
            build()
    # positional as torch's: margin, size_average, reduce, reduction
    assert nn.MarginRankingLoss(0.1, None, None, "sum").reduction == "sum"

"""The losses of ``F`` (losses.py) and their nn Modules against PyTorch: nll_loss, the binary
cross-entropies, l1/smooth-l1/huber/mse, kl_div: float64 values and the gradient of a random
upstream into each input, result dtypes, errors (PyTorch's classes), 0-d and empty inputs;
the modules' reprs, buffers and options."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from torch_compare import check, pair, same

TF = torch.nn.functional
REDUCTIONS = ("mean", "sum", "none")




def same_error(ours, theirs):
    """``theirs()`` raises; ``ours()`` raises an instance of the same class."""
    with pytest.raises(Exception) as expected:                # noqa: PT011 (torch's class)
        quiet(theirs)
    with pytest.raises(expected.type):
        quiet(ours)




def quiet(function, *args, **kwargs):
    """``function(*args, **kwargs)`` without its warnings (NumPy's mean of nothing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


# ----- nll_loss ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5,), (4, 5), (3, 4, 2)])
def test_nll_loss_matches_torch(shape):
    rng = np.random.default_rng(1)
    classes = shape[1] if len(shape) > 1 else shape[0]
    target = rng.integers(0, classes, size=shape[:1] + shape[2:] if len(shape) > 1 else ())
    if target.ndim:
        target.reshape(-1)[0] = 2                              # ignored below
    weight = rng.random(classes) + 0.1
    for reduction in REDUCTIONS:
        for use_weight, ignore_index in [(False, -100), (True, -100), (True, 2), (False, 2)]:
            x, xt = pair(rng.standard_normal(shape))
            w = mg.tensor(weight) if use_weight else None
            wt = torch.tensor(weight) if use_weight else None
            check(F.nll_loss(x, mg.tensor(target), w, ignore_index=ignore_index,
                             reduction=reduction),
                  TF.nll_loss(xt, torch.tensor(target), wt, ignore_index=ignore_index,
                              reduction=reduction), [(x, xt)])


def test_nll_loss_of_log_softmax_is_cross_entropy():
    rng = np.random.default_rng(2)
    logits, target = mg.tensor(rng.standard_normal((6, 4))), mg.tensor(rng.integers(0, 4, 6))
    np.testing.assert_allclose(F.nll_loss(F.log_softmax(logits, dim=1), target).item(),
                               F.cross_entropy(logits, target).item(), rtol=1e-14)


def test_nll_loss_edges_and_errors_as_torch():
    for reduction in REDUCTIONS:                              # empty, all ignored: NaN or 0
        x, xt = pair(np.zeros((0, 3)))
        empty = np.zeros(0, np.int64)
        got = quiet(F.nll_loss, x, mg.tensor(empty), reduction=reduction)
        want = TF.nll_loss(xt, torch.tensor(empty), reduction=reduction)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        ignored = np.full(2, -100)
        x, xt = pair(np.ones((2, 3)))
        check(F.nll_loss(x, mg.tensor(ignored), reduction=reduction),
              TF.nll_loss(xt, torch.tensor(ignored), reduction=reduction), [(x, xt)])
    x = np.random.default_rng(3).standard_normal((3, 4))
    t = np.array([0, 1, 3])
    cases = [(np.array(1.0), np.array(0), None, {}),                  # a 0-d input
             (np.array([[1, 2]]), np.array([0]), None, {}),             # an integer input
             (x, t.astype(np.float64), None, {}), (x, t.astype(np.int32), None, {}),
             (x, np.array([0, 1, 4]), None, {}), (x, np.array([-1, 1, 0]), None, {}),
             (x, np.array([0, 1]), None, {}), (x, t, np.ones(3), {}),
             (x, t, np.ones(4, np.float32), {}), (x, t, None, {"reduction": "avg"}),
             (x, t, None, {"ignore_index": 1.5})]
    for input, target, weight, kwargs in cases:
        def call(module, input=input, target=target, weight=weight, kwargs=kwargs):
            f = F.nll_loss if module is mg else TF.nll_loss
            return f(module.tensor(input), module.tensor(target),
                     None if weight is None else module.tensor(weight), **kwargs)
        same_error(lambda call=call: call(mg), lambda call=call: call(torch))


# ----- binary cross-entropy -------------------------------------------------------------------
def test_binary_cross_entropy_matches_torch_at_the_clamped_ends_too():
    rng = np.random.default_rng(4)
    probs = np.concatenate([rng.uniform(0.01, 0.99, 8), [0.0, 1.0, 0.0, 1.0]])  # log 0: -100
    labels = np.concatenate([rng.uniform(0, 1, 8), [1.0, 0.0, 0.0, 1.0]])
    weight = rng.random(12) + 0.5
    for reduction in REDUCTIONS:
        for w in (None, weight):
            x, xt = pair(probs.reshape(3, 4))
            t, tt = pair(labels.reshape(3, 4))
            check(F.binary_cross_entropy(x, t, None if w is None else mg.tensor(w.reshape(3, 4)),
                                         reduction=reduction),
                  TF.binary_cross_entropy(xt, tt, None if w is None else
                                          torch.tensor(w.reshape(3, 4)), reduction=reduction),
                  [(x, xt)], atol=1e-9, rtol=1e-8)     # 1e10 where x(1 - x) = 0
    x, xt = pair(probs[:8])                     # the target's gradient, away from 0 and 1
    t, tt = pair(labels[:8])
    check(F.binary_cross_entropy(x, t), TF.binary_cross_entropy(xt, tt), [(x, xt), (t, tt)])


def test_binary_cross_entropy_dtypes_shapes_and_errors():
    x, t = mg.tensor([0.2, 0.7]), mg.tensor([0.0, 1.0])
    assert F.binary_cross_entropy(x, t).dtype == mg.float32
    w = mg.tensor([1.0, 2.0], dtype=mg.float64)            # the input's dtype wins, as torch's
    assert F.binary_cross_entropy(x, t, w).dtype == \
        getattr(mg, str(TF.binary_cross_entropy(torch.tensor([0.2, 0.7]), torch.tensor(
            [0.0, 1.0]), torch.tensor([1.0, 2.0], dtype=torch.float64)).dtype)[6:])
    for ours, theirs in [
            (lambda: F.binary_cross_entropy(mg.tensor([1.5]), mg.tensor([0.5])),
             lambda: TF.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([0.5]))),
            (lambda: F.binary_cross_entropy(mg.tensor([0.5]), mg.tensor([1.5])),
             lambda: TF.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([1.5]))),
            (lambda: F.binary_cross_entropy(mg.tensor([np.nan]), mg.tensor([0.5])),
             lambda: TF.binary_cross_entropy(torch.tensor([np.nan]), torch.tensor([0.5]))),
            (lambda: F.binary_cross_entropy(mg.tensor([0.5, 0.5]), mg.tensor([0.5])),
             lambda: TF.binary_cross_entropy(torch.tensor([0.5, 0.5]), torch.tensor([0.5]))),
            (lambda: F.binary_cross_entropy(mg.tensor([0.5]), mg.tensor([1])),
             lambda: TF.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([1]))),
            (lambda: F.binary_cross_entropy(mg.tensor([0]), mg.tensor([1])),
             lambda: TF.binary_cross_entropy(torch.tensor([0]), torch.tensor([1]))),
            (lambda: F.binary_cross_entropy(mg.tensor([0.5]), mg.tensor([0.5], dtype=mg.float64)),
             lambda: TF.binary_cross_entropy(torch.tensor([0.5]),
                                             torch.tensor([0.5], dtype=torch.float64))),
            (lambda: F.binary_cross_entropy(mg.ones(3) / 2, mg.ones(3) / 2, mg.ones(2, 3)),
             lambda: TF.binary_cross_entropy(torch.ones(3) / 2, torch.ones(3) / 2,
                                             torch.ones(2, 3)))]:
        same_error(ours, theirs)
    for shape in [(), (0,)]:
        for reduction in REDUCTIONS:
            x, xt = pair(np.full(shape, 0.3))
            t, tt = pair(np.full(shape, 1.0))
            got = quiet(F.binary_cross_entropy, x, t, reduction=reduction)
            want = TF.binary_cross_entropy(xt, tt, reduction=reduction)
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-15)


def test_binary_cross_entropy_with_logits_matches_torch():
    rng = np.random.default_rng(5)
    logits = np.concatenate([3 * rng.standard_normal(10), [800.0, -800.0]]).reshape(3, 4)
    labels = rng.uniform(0, 1, (3, 4))
    weight, pos_weight = rng.random(4) + 0.5, rng.random(4) * 3
    for reduction in REDUCTIONS:
        for w, p in [(None, None), (weight, None), (None, pos_weight), (weight, pos_weight)]:
            x, xt = pair(logits)
            t, tt = pair(labels)
            w_ours, w_theirs = (None, None) if w is None else pair(w, False)
            p_ours, p_theirs = (None, None) if p is None else pair(p, False)
            check(F.binary_cross_entropy_with_logits(x, t, w_ours, reduction=reduction,
                                                     pos_weight=p_ours),
                  TF.binary_cross_entropy_with_logits(xt, tt, w_theirs, reduction=reduction,
                                                      pos_weight=p_theirs),
                  [(x, xt), (t, tt)], atol=1e-10)


def test_binary_cross_entropy_with_logits_dtypes_edges_and_errors():
    for x_dtype, t_dtype in [("float32", "float64"), ("float64", "float32")]:
        got = F.binary_cross_entropy_with_logits(mg.tensor([0.5], dtype=x_dtype),
                                                 mg.tensor([0.5], dtype=t_dtype))
        want = TF.binary_cross_entropy_with_logits(
            torch.tensor([0.5], dtype=getattr(torch, x_dtype)),
            torch.tensor([0.5], dtype=getattr(torch, t_dtype)))
        assert str(got.dtype) == str(want.dtype)
    for shape in [(), (0,)]:
        for reduction in REDUCTIONS:
            got = quiet(F.binary_cross_entropy_with_logits, mg.zeros(shape, dtype=mg.float64),
                        mg.ones(shape, dtype=mg.float64), reduction=reduction)
            want = TF.binary_cross_entropy_with_logits(
                torch.zeros(shape, dtype=torch.float64), torch.ones(shape, dtype=torch.float64),
                reduction=reduction)
            np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-15)
    x, t = np.zeros((2, 3)), np.ones((2, 3))
    for kwargs in [{"target": np.ones(3)}, {"target": np.ones((2, 3), np.int64)},
                   {"input": np.zeros((2, 3), np.int64)}, {"pos_weight": np.ones(2)},
                   {"weight": np.ones((4, 3))}, {"reduction": "avg"}]:
        def call(module, kwargs=kwargs):
            args = {"input": x, "target": t, **kwargs}
            tensors = {k: module.tensor(v) if isinstance(v, np.ndarray) else v
                       for k, v in args.items()}
            f = (F if module is mg else TF).binary_cross_entropy_with_logits
            return f(tensors.pop("input"), tensors.pop("target"), **tensors)
        same_error(lambda: call(mg), lambda: call(torch))


# ----- l1, smooth l1, huber, mse ----------------------------------------------------------
POINTWISE = {
    "l1_loss": ({}, {}),
    "mse_loss": ({}, {}),
    "smooth_l1_loss": ({"beta": 0.5}, {"beta": 0.0}),
    "huber_loss": ({"delta": 0.5}, {"delta": 2.0}),
}


@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_losses_match_torch(name):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 4))
    a[0, :2] = [0.5, -0.5]                  # on the bounds beta = delta = 0.5
    b = rng.standard_normal((3, 4))
    b[0, :2] = 0.0
    b[1, 0] = a[1, 0]                       # a tie: |d|'s gradient at 0
    for options in POINTWISE[name]:
        for reduction in REDUCTIONS:
            x, xt = pair(a)
            t, tt = pair(b)
            check(getattr(F, name)(x, t, reduction=reduction, **options),
                  getattr(TF, name)(xt, tt, reduction=reduction, **options), [(x, xt), (t, tt)])
        with pytest.warns(UserWarning, match="broadcast"):
            got = getattr(F, name)(mg.tensor(a), mg.tensor(b[0]), **options)
        with pytest.warns(UserWarning):
            want = getattr(TF, name)(torch.tensor(a), torch.tensor(b[0]), **options)
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-14)
        for shape in [(), (0, 2)]:
            got = quiet(getattr(F, name), mg.ones(shape), mg.zeros(shape), **options)
            want = getattr(TF, name)(torch.ones(shape), torch.zeros(shape), **options)
            np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_losses_dtypes_and_errors_as_torch(name):
    ours, theirs = getattr(F, name), getattr(TF, name)
    for a, b in [([1.0, 2.0], [0.5, 0.0]), ([1, 2], [0.5, 0.0]), ([1.0, 2.0], [0, 0]),
                 ([1, 2], [0, 0])]:
        for dtype_a, dtype_b in [(None, None), ("float64", None), (None, "float64")]:
            def call(module, reduction, a=a, b=b, dtype_a=dtype_a, dtype_b=dtype_b):
                def dtype(name, values):      # a float64 variant of the float inputs only
                    return getattr(module, name) if name and isinstance(values[0], float) \
                        else None
                x = module.tensor(a, dtype=dtype(dtype_a, a))
                t = module.tensor(b, dtype=dtype(dtype_b, b))
                return (ours if module is mg else theirs)(x, t, reduction=reduction)
            for reduction in ("mean", "sum"):
                same(lambda r=reduction: call(mg, r), lambda r=reduction: call(torch, r))
    x, t = mg.ones(2), mg.zeros(2)
    if name == "smooth_l1_loss":
        same_error(lambda: ours(x, t, beta=-1.0), lambda: theirs(torch.ones(2), torch.zeros(2),
                                                                  beta=-1.0))
    if name == "huber_loss":
        for delta in (0.0, -1.0):
            same_error(lambda d=delta: ours(x, t, delta=d),
                       lambda d=delta: theirs(torch.ones(2), torch.zeros(2), delta=d))
    same_error(lambda: ours(x, t, reduction="avg"),
               lambda: theirs(torch.ones(2), torch.zeros(2), reduction="avg"))
    with pytest.raises(ValueError, match="broadcast"):          # torch: a RuntimeError
        ours(mg.ones(2), mg.zeros(3))


# ----- kl_div ---------------------------------------------------------------------------------
def test_kl_div_matches_torch():
    rng = np.random.default_rng(7)
    logp = np.log(rng.dirichlet(np.ones(5), size=3))
    probs = rng.dirichlet(np.ones(5), size=3)
    probs[0, 1] = 0.0                                        # t log t = 0 at t = 0
    for log_target in (False, True):
        target = np.log(probs + 0.01) if log_target else probs
        for reduction in ("sum", "none", "batchmean"):
            x, xt = pair(logp)
            t, tt = pair(target, requires_grad=log_target)    # t's gradient is NaN at t = 0
            check(F.kl_div(x, t, reduction=reduction, log_target=log_target),
                  TF.kl_div(xt, tt, reduction=reduction, log_target=log_target),
                  [(x, xt), (t, tt)] if log_target else [(x, xt)])
        x, xt = pair(logp)
        with pytest.warns(UserWarning, match="batchmean"):
            got = F.kl_div(x, mg.tensor(target), log_target=log_target)
        with pytest.warns(UserWarning):
            want = TF.kl_div(xt, torch.tensor(target), log_target=log_target)
        check(got, want, [(x, xt)])
    x, xt = pair(logp[0])                                    # the target's gradient, t > 0
    t, tt = pair(probs[1])
    check(F.kl_div(x, t, reduction="sum"), TF.kl_div(xt, tt, reduction="sum"),
          [(x, xt), (t, tt)])


def test_kl_div_edges_and_errors_as_torch():
    got = F.kl_div(mg.tensor([-1.0, -2.0]), mg.tensor([-1.0, 1.0]), reduction="none")
    want = TF.kl_div(torch.tensor([-1.0, -2.0]), torch.tensor([-1.0, 1.0]), reduction="none")
    np.testing.assert_allclose(got.numpy(), want.numpy())        # NaN for a negative target
    for shape in [(), (0, 3)]:
        for reduction in ("batchmean", "sum", "none"):
            got = quiet(F.kl_div, -mg.ones(shape), mg.ones(shape) / 2, reduction=reduction)
            want = TF.kl_div(-torch.ones(shape), torch.ones(shape) / 2, reduction=reduction)
            np.testing.assert_allclose(got.numpy(), want.numpy())
    same(lambda: F.kl_div(mg.ones(3), mg.ones(3, dtype=mg.float64), reduction="sum"),
         lambda: TF.kl_div(torch.ones(3), torch.ones(3, dtype=torch.float64), reduction="sum"))
    for kwargs, x, t in [({}, [1, 2], [0.5, 0.5]), ({"log_target": 1}, [1.0], [1.0]),
                         ({"reduction": "avg"}, [1.0], [1.0])]:
        same_error(lambda x=x, t=t, kw=kwargs: F.kl_div(mg.tensor(x), mg.tensor(t), **kw),
                   lambda x=x, t=t, kw=kwargs: TF.kl_div(torch.tensor(x), torch.tensor(t), **kw))


# ----- the Modules ----------------------------------------------------------------------------
def module_pairs(weight, pos_weight):
    w, wt = pair(weight, False)
    p, pt = pair(pos_weight, False)
    return [
        (nn.CrossEntropyLoss(w, label_smoothing=0.1), torch.nn.CrossEntropyLoss(
            wt, label_smoothing=0.1), "classes"),
        (nn.CrossEntropyLoss(ignore_index=1, reduction="sum"),
         torch.nn.CrossEntropyLoss(ignore_index=1, reduction="sum"), "classes"),
        (nn.NLLLoss(w, reduction="none"), torch.nn.NLLLoss(wt, reduction="none"), "classes"),
        (nn.BCELoss(reduction="sum"), torch.nn.BCELoss(reduction="sum"), "probs"),
        (nn.BCEWithLogitsLoss(pos_weight=p), torch.nn.BCEWithLogitsLoss(pos_weight=pt), "probs"),
        (nn.MSELoss(reduction="sum"), torch.nn.MSELoss(reduction="sum"), "values"),
        (nn.L1Loss(), torch.nn.L1Loss(), "values"),
        (nn.SmoothL1Loss(beta=0.5), torch.nn.SmoothL1Loss(beta=0.5), "values"),
        (nn.HuberLoss("none", 0.5), torch.nn.HuberLoss("none", 0.5), "values"),
        (nn.KLDivLoss(reduction="batchmean", log_target=True),
         torch.nn.KLDivLoss(reduction="batchmean", log_target=True), "values"),
    ]


def test_loss_modules_match_torch_modules():
    rng = np.random.default_rng(8)
    targets = {"classes": rng.integers(0, 4, 3), "probs": rng.uniform(0, 1, (3, 4)),
               "values": rng.standard_normal((3, 4))}
    for ours, theirs, kind in module_pairs(rng.random(4) + 0.5, rng.random(4) + 0.5):
        assert repr(ours) == repr(theirs)
        assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
        assert sorted(name for name, _ in ours.named_buffers()) == \
            sorted(name for name, _ in theirs.named_buffers())
        data = rng.uniform(0.05, 0.95, (3, 4)) if kind == "probs" and \
            isinstance(ours, nn.BCELoss) else rng.standard_normal((3, 4))
        if isinstance(ours, nn.NLLLoss):
            data = np.log(rng.dirichlet(np.ones(4), 3))
        x, xt = pair(data)
        t = targets[kind]
        check(ours(x, t), theirs(xt, torch.tensor(t)), [(x, xt)])


def test_loss_modules_take_arrays_move_their_weight_and_check_their_options():
    loss = nn.CrossEntropyLoss(mg.tensor([1.0, 2.0, 3.0]))
    loss.to(dtype=mg.float64)
    assert loss.weight.dtype == mg.float64 and loss.state_dict()["weight"].shape == (3,)
    logits = np.random.default_rng(9).standard_normal((2, 3))
    np.testing.assert_allclose(
        loss(logits, np.array([0, 2])).item(),
        torch.nn.CrossEntropyLoss(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))(
            torch.tensor(logits), torch.tensor([0, 2])).item(), rtol=1e-14)
    with pytest.raises(TypeError):                       # a buffer is a Tensor, as in torch
        nn.BCELoss(weight=[1.0, 2.0])
    with pytest.raises(TypeError):
        torch.nn.BCELoss(weight=[1.0, 2.0])
    for build in [lambda: nn.L1Loss(reduction="avg"), lambda: nn.KLDivLoss(reduction="avg"),
                  lambda: nn.CrossEntropyLoss(label_smoothing=1.5),
                  lambda: nn.SmoothL1Loss(beta=-1.0), lambda: nn.HuberLoss(delta=0.0),
                  lambda: nn.NLLLoss(ignore_index=0.5), lambda: nn.MSELoss("sum")]:
        with pytest.raises((ValueError, RuntimeError, TypeError)):
            build()
    assert nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_cross_entropy_of_integer_logits_is_torchs_not_implemented(dtype):
    # torch's log_softmax has no integer kernel: NotImplementedError, as here
    data = np.array([[1, 0], [0, 1]]).astype(dtype)
    with pytest.raises(NotImplementedError):
        torch.nn.functional.cross_entropy(torch.tensor(data), torch.tensor([0, 1]))
    with pytest.raises(NotImplementedError):
        F.cross_entropy(mg.tensor(data), mg.tensor([0, 1]))

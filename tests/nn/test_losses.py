"""Activations, softmax, losses and dropout in ``microgradnorm.functional``: against PyTorch
in float64 (value and gradient), finite-difference gradcheck on drawn shapes, stability."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import shapes

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn

torch = pytest.importorskip("torch")
TF = torch.nn.functional

ACTIVATIONS = {
    "gelu": (F.gelu, TF.gelu),                                   # exact, both defaults
    "gelu_tanh": (lambda t: F.gelu(t, approximate="tanh"),
                  lambda t: TF.gelu(t, approximate="tanh")),
    "silu": (F.silu, TF.silu),
    "sigmoid": (F.sigmoid, torch.sigmoid),
    "softmax": (lambda x: F.softmax(x, -1), lambda t: torch.softmax(t, -1)),
    "log_softmax": (lambda x: F.log_softmax(x, -1), lambda t: torch.log_softmax(t, -1)),
}


def check_against_torch(fn, torch_fn, x_data, tol=1e-12):
    x = mg.tensor(x_data, requires_grad=True)
    xt = torch.tensor(x_data, requires_grad=True)
    y, yt = fn(x), torch_fn(xt)
    np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=0, atol=tol)
    upstream = np.random.default_rng(0).standard_normal(y.shape)
    y.backward(upstream)
    yt.backward(torch.tensor(upstream))
    np.testing.assert_allclose(x.grad, xt.grad.numpy(), rtol=0, atol=tol)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations_match_torch(name):
    x_data = 3 * np.random.default_rng(1).standard_normal((4, 7))
    check_against_torch(*ACTIVATIONS[name], x_data)


@pytest.mark.parametrize("name", ACTIVATIONS)
@settings(max_examples=15)
@given(shape=shapes(min_dims=1, max_dims=3), seed=st.integers(0, 2**16))
def test_activations_gradcheck(name, shape, seed):
    x = mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)
    assert mg.gradcheck(ACTIVATIONS[name][0], x)


def test_softmax_is_stable_for_huge_logits():
    x = mg.tensor([[1e300, -1e300, 0.0], [1000.0, 1000.0, 1000.0]], dtype=mg.float64,
                  requires_grad=True)                            # 1e300 needs float64
    y = F.softmax(x, dim=-1)
    np.testing.assert_allclose(y.data, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]])
    logp = F.log_softmax(mg.tensor([[1000.0, 0.0]]), dim=-1)
    np.testing.assert_allclose(logp.data, [[0.0, -1000.0]])


def test_sigmoid_does_not_overflow():
    with np.errstate(all="raise"):
        y = F.sigmoid(mg.tensor([-1000.0, 0.0, 1000.0]))
    np.testing.assert_allclose(y.data, [0.0, 0.5, 1.0])


@pytest.mark.parametrize("shape", [(4,), (5, 4), (2, 4, 3), (2, 4, 3, 2)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted, label_smoothing, ignored", [
    (False, 0.0, False), (True, 0.0, True), (False, 0.3, True), (True, 0.1, False)])
def test_cross_entropy_matches_torch(shape, reduction, weighted, label_smoothing, ignored):
    rng = np.random.default_rng(0)
    logits_data = 4 * rng.standard_normal(shape)
    classes = shape[1] if len(shape) > 1 else shape[0]        # the class dim is dim 1
    target = rng.integers(0, classes, size=shape[:1] + shape[2:] if len(shape) > 1 else ())
    if ignored and target.ndim:
        target.reshape(-1)[0] = -100
    weight = rng.random(classes) + 0.1 if weighted else None
    logits = mg.tensor(logits_data, requires_grad=True)
    logits_t = torch.tensor(logits_data, requires_grad=True)
    loss = F.cross_entropy(logits, target, weight, reduction=reduction,
                           label_smoothing=label_smoothing)
    loss_t = TF.cross_entropy(logits_t, torch.as_tensor(target),
                              None if weight is None else torch.tensor(weight),
                              reduction=reduction, label_smoothing=label_smoothing)
    assert loss.shape == tuple(loss_t.shape)
    np.testing.assert_allclose(loss.data, loss_t.detach().numpy(), rtol=0, atol=1e-12)
    upstream = rng.standard_normal(loss.shape)
    loss.backward(upstream)
    loss_t.backward(torch.tensor(upstream))
    np.testing.assert_allclose(logits.grad, logits_t.grad.numpy(), rtol=0, atol=1e-12)


@settings(max_examples=15)
@given(n=st.integers(1, 4), classes=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_cross_entropy_gradcheck(n, classes, seed):
    rng = np.random.default_rng(seed)
    target = rng.integers(0, classes, size=(n, 2))
    logits = mg.tensor(rng.standard_normal((n, classes, 2)), requires_grad=True)
    assert mg.gradcheck(lambda t: F.cross_entropy(t, target), logits)


def test_cross_entropy_takes_the_class_dim_second_even_when_it_equals_the_length():
    # (B, C, T) with C == T: the class dim last would read the same array the other way
    # round and give another number without an error
    rng = np.random.default_rng(1)
    logits, target = rng.standard_normal((2, 3, 3)), rng.integers(0, 3, (2, 3))
    mine = F.cross_entropy(mg.tensor(logits), target)
    theirs = TF.cross_entropy(torch.tensor(logits), torch.tensor(target))
    assert abs(mine.item() - theirs.item()) < 1e-12


def test_cross_entropy_bad_weight_and_label_smoothing():
    logits = mg.tensor(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="weight must be a floating tensor of shape"):
        F.cross_entropy(logits, np.array([0, 1]), np.ones(2))
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        F.cross_entropy(logits, np.array([0, 1]), label_smoothing=1.5)


def test_cross_entropy_bad_targets():
    logits = mg.tensor(np.zeros((2, 3)), requires_grad=True)
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        F.cross_entropy(logits, np.array([0, 3]))
    with pytest.raises(ValueError, match="shape"):
        F.cross_entropy(logits, np.array([0, 1, 2]))
    with pytest.raises(TypeError, match="integer"):
        F.cross_entropy(logits, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(logits, np.array([0, 1]), reduction="avg")
    assert logits.grad is None


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_torch(reduction):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    check_against_torch(lambda t: F.mse_loss(t, b, reduction=reduction),
                        lambda t: TF.mse_loss(t, torch.tensor(b), reduction=reduction), a)
    with pytest.raises(ValueError, match="shape"):
        F.mse_loss(mg.tensor(a), b[:2])


def test_dropout_keeps_the_expectation_and_its_gradient_is_the_mask():
    rng = np.random.default_rng(0)
    x = mg.tensor(np.ones(20000), requires_grad=True)
    y = F.dropout(x, 0.25, rng=rng)
    assert abs(y.data.mean() - 1) < 0.03
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, y.data)                 # mask / (1 - p)
    assert F.dropout(x, 0.25, training=False) is x


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        F.gelu(mg.tensor([1.0]), approximate="sigmoid")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_erf_keeps_the_dtype_and_matches_torch(dtype):
    x = np.linspace(-4, 4, 33).astype(dtype)
    y = mg.ops.erf(mg.tensor(x))
    assert y.dtype == np.dtype(dtype)
    expected = torch.erf(torch.tensor(x.astype(np.float64))).numpy()
    np.testing.assert_allclose(y.data, expected, atol=float(np.finfo(dtype).eps))


def test_erf_and_gelu_of_a_0d_tensor():
    x = mg.tensor(np.array(0.5), requires_grad=True)
    y = F.gelu(x)
    y.backward()
    expected = TF.gelu(torch.tensor(0.5, dtype=torch.float64)).item()
    assert y.shape == () and abs(float(y.data) - expected) < 1e-15 and x.grad.shape == ()


def test_erf_gradcheck():
    x = mg.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    assert mg.gradcheck(mg.ops.erf, x)
    assert mg.gradcheck(F.gelu, x)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target, ignore_index", [([0, 2, 1], -100), ([-100, 2, 1], -100),
                                                  ([-100, -100, -100], -100),
                                                  ([1, 2, 1], 1), ([1, 1, 1], 1)])
def test_cross_entropy_ignore_index_matches_torch(reduction, target, ignore_index):
    logits = np.random.default_rng(0).standard_normal((3, 4))
    x, tx = mg.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    mine = F.cross_entropy(x, mg.tensor(target), reduction=reduction,
                           ignore_index=ignore_index)
    theirs = torch.nn.functional.cross_entropy(tx, torch.tensor(target), reduction=reduction,
                                               ignore_index=ignore_index)
    np.testing.assert_allclose(mine.data, theirs.detach().numpy(), rtol=1e-12,
                               equal_nan=True)
    upstream = np.ones(mine.shape)
    np.testing.assert_allclose(mg.grad(mine, [x], upstream)[0],
                               torch.autograd.grad(theirs, [tx], torch.tensor(upstream))[0],
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_ignored_row_with_a_masked_logit_stays_finite(reduction):
    # the ignored row's logit of class 0 is -inf (a masked vocabulary entry): torch ignores
    # the row entirely, so neither the loss nor the gradient may turn NaN
    logits = np.array([[-np.inf, 1.0, 2.0], [0.5, 1.0, -1.0]])
    target = [-100, 1]
    x, tx = mg.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    mine = F.cross_entropy(x, mg.tensor(target), reduction=reduction)
    theirs = torch.nn.functional.cross_entropy(tx, torch.tensor(target), reduction=reduction)
    np.testing.assert_allclose(mine.data, theirs.detach().numpy(), rtol=1e-12)
    upstream = np.ones(mine.shape)
    np.testing.assert_allclose(mg.grad(mine, [x], upstream)[0],
                               torch.autograd.grad(theirs, [tx], torch.tensor(upstream))[0],
                               rtol=1e-12, atol=1e-15)


def test_cross_entropy_target_out_of_range_is_an_index_error_naming_it():
    with pytest.raises(IndexError, match=r"\[0, 3\) or ignore_index -100, got min 0, max 3"):
        F.cross_entropy(mg.tensor(np.zeros((2, 3))), mg.tensor([0, 3]))
    with pytest.raises(ValueError):                    # and a ValueError, as it was
        F.cross_entropy(mg.tensor(np.zeros((2, 3))), mg.tensor([-1, 0]))


def test_mse_loss_broadcasts_with_a_warning_as_torch():
    a = np.arange(6.0).reshape(2, 3)
    with pytest.warns(UserWarning, match="broadcast"):
        mine = F.mse_loss(mg.tensor(a), mg.tensor([1.0, 2.0, 3.0]))
    with pytest.warns(UserWarning):
        theirs = torch.nn.functional.mse_loss(torch.tensor(a), torch.tensor([1.0, 2.0, 3.0],
                                                                            dtype=torch.float64))
    assert mine.item() == pytest.approx(theirs.item())
    with pytest.raises(ValueError, match="does not broadcast"):
        F.mse_loss(mg.tensor(a), mg.tensor([1.0, 2.0]))


def test_dropout_with_p_1_zeroes_everything_as_torch():
    x = mg.tensor(np.ones((2, 3)), requires_grad=True)
    y = F.dropout(x, p=1.0)
    assert not y.detach().numpy().any()
    y.sum().backward()
    assert not x.grad.numpy().any()
    assert not nn.Dropout(1.0)(x).detach().numpy().any()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        F.dropout(x, p=1.5)


def test_rms_norm_eps_none_is_the_dtypes_epsilon_as_torch():
    data = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    expected = torch.nn.functional.rms_norm(torch.tensor(data), (8,), eps=None).numpy()
    for impl in ("fused", "composite"):
        np.testing.assert_allclose(F.rms_norm(mg.tensor(data), 8, eps=None, impl=impl).data,
                                   expected, rtol=1e-6)
    np.testing.assert_allclose(nn.RMSNorm(8, eps=None).to("float32")(mg.tensor(data)).data,
                               expected, rtol=1e-6)


@pytest.mark.parametrize("pad", [(1, 2), (0, 1, 2, 0), (-1, 2, 1, -1), (1, 1, 0, 0, 1, 0)])
def test_pad_matches_torch(pad):
    data = np.random.default_rng(0).standard_normal((2, 3, 4))
    x, xt = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    y, yt = F.pad(x, pad, value=0.5), TF.pad(xt, pad, value=0.5)
    np.testing.assert_array_equal(y.data, yt.detach().numpy())
    upstream = np.random.default_rng(1).standard_normal(y.shape)
    y.backward(upstream)
    yt.backward(torch.tensor(upstream))
    np.testing.assert_array_equal(x.grad, xt.grad.numpy())

"""A failed batch norm changes nothing: every argument is checked before any running
statistic moves (functional, nn and the seed-style layer)."""

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import layers, nn


def x64(shape=(8, 3), seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("impl", F.IMPLS)
def test_read_only_running_var_leaves_running_mean_alone(impl):
    rm, rv = np.zeros(3), np.ones(3)
    rv.flags.writeable = False
    with pytest.raises(ValueError, match="running_var is read-only"):
        F.batch_norm(x64(), rm, rv, training=True, impl=impl)
    assert rm.tolist() == [0.0, 0.0, 0.0]
    y = F.batch_norm(x64(), rm, rv, training=False, impl=impl)   # eval only reads them
    assert y.shape == (8, 3)


@pytest.mark.parametrize("impl", F.IMPLS)
def test_running_stats_of_another_dtype_are_refused(impl):
    # torch's CPU kernels raise "mixed dtype"; float32 stats with float64 x would round
    # every update to float32 silently.
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
    with pytest.raises(TypeError, match="running_mean must have x's dtype torch.float64"):
        F.batch_norm(x64(), rm, rv, training=True, impl=impl)
    assert rm.tolist() == [0.0] * 3 and rv.tolist() == [1.0] * 3
    x16 = mg.tensor(np.random.default_rng(0).standard_normal((8, 3)).astype(np.float16))
    F.batch_norm(x16, rm, rv, training=True, impl=impl)          # float16 x: float32 stats
    assert rm.any()


@pytest.mark.parametrize("bad", [dict(momentum="0.1"), dict(training="yes"),
                                 dict(eps="0.1"), dict(eps=-1.0), dict(eps=0.0)])
def test_bad_options_change_nothing(bad):
    rm, rv = np.zeros(3), np.ones(3)
    kwargs = dict(training=True) | bad
    with pytest.raises((TypeError, ValueError)):
        F.batch_norm(x64(), rm, rv, **kwargs)
    assert rm.tolist() == [0.0] * 3 and rv.tolist() == [1.0] * 3


def test_nn_batchnorm1d_names_the_module_and_num_features():
    bn = nn.BatchNorm1d(4)
    with pytest.raises(ValueError, match=r"BatchNorm1d\(4\).*num_features=4.*got 5"):
        bn(mg.ones(2, 5))                     # the module's dtype: only the channels are wrong
    assert bn.running_mean.tolist() == [0.0] * 4 and int(bn.num_batches_tracked.item()) == 0


# ----- the seed-style layer ----------------------------------------------------------------
def seed_bn():
    bn = layers.BatchNorm(3)
    return bn, np.random.default_rng(0).standard_normal((8, 3))


def test_seed_int_running_var_leaves_running_mean_alone():
    bn, x = seed_bn()
    bn.running_var = np.ones(3, dtype=np.int64)
    with pytest.raises(TypeError, match="running_var must be a floating-point array"):
        bn.forward(x)
    assert bn.running_mean.tolist() == [0.0] * 3


def test_seed_int_gamma_is_refused():
    bn, x = seed_bn()
    bn.gamma = np.ones(3, dtype=np.int64)
    with pytest.raises(TypeError, match="gamma must be a floating-point array"):
        bn.forward(x)
    assert bn.running_mean.tolist() == [0.0] * 3
    ln = layers.LayerNorm(3)
    ln.beta = np.zeros(3, dtype=np.int32)
    with pytest.raises(TypeError, match="beta"):
        ln.forward(x)


@pytest.mark.parametrize("make, error", [
    (lambda: layers.BatchNorm(3, eps="1"), "eps"), (lambda: layers.BatchNorm(3, momentum="5"),
                                                     "momentum"),
    (lambda: layers.LayerNorm(3, eps=None), "eps"),
    (lambda: layers.RMSNorm(3, eps=[1e-6]), "eps")])
def test_seed_constructor_options_are_checked(make, error):
    # any number is taken, as torch's norms take it; what is no number is a TypeError
    with pytest.raises(TypeError, match=error):
        make()


def test_seed_options_changed_later_are_checked_before_the_update():
    bn, x = seed_bn()
    bn.momentum = "5"
    with pytest.raises(TypeError, match="momentum"):
        bn.forward(x)
    assert bn.running_mean.tolist() == [0.0] * 3


def test_seed_eval_without_running_var_is_an_error_not_nan():
    bn, x = seed_bn()
    bn.eval()
    bn.running_var = None
    with pytest.raises(TypeError, match="running_var must be an array"):
        bn.forward(x)


def test_seed_forward_of_a_tensor_says_to_pass_an_array():
    bn, x = seed_bn()
    with pytest.raises(TypeError, match=r"got a Tensor.*detach\(\)\.numpy\(\)"):
        bn.forward(mg.tensor(x))


# ----- zero-size inputs (every norm with a last-dim normalized_shape: test_norms.py) ------
@pytest.mark.parametrize("impl", F.IMPLS)
def test_zero_size_multi_dim_normalized_shape(impl):
    x = mg.tensor(np.zeros((3, 2, 0)), requires_grad=True)
    w = mg.tensor(np.ones((2, 0)), requires_grad=True)
    for y in (F.layer_norm(x, (2, 0), w, impl=impl), F.rms_norm(x, (2, 0), w, impl=impl),
              F.add_layer_norm(x, x, (2, 0), w, impl=impl)[0]):
        assert y.shape == (3, 2, 0)
        y.sum().backward()
    assert x.grad.shape == (3, 2, 0) and w.grad.shape == (2, 0)

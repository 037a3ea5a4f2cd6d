"""Adam's and AdamW's update: the numba kernel (``numba_cpu.adam_update``, one loop) against
the reference (``reference.adam_update``, NumPy), bit for bit over hypothesis-drawn shapes,
options and values (NaN and inf among them), several steps; what it hands to the reference
(views, mixed dtypes, half precision) exactly; and the optimizers on either kernels: the
same parameters bit for bit, and torch's within rounding in float32."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg
from microgradnorm import nn, optim
from microgradnorm.kernels import reference

pytest.importorskip("numba")
from microgradnorm.kernels import numba_cpu  # noqa: E402  (after the skip)

SPECIAL = np.array([0.0, -0.0, 1e-30, 3e38, -3e38, 1e-45, np.inf, -np.inf, np.nan])


def arrays(rng, shape, dtype, special):
    """param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq: normal values, a few special ones
    (in the gradient and the parameter) where ``special``; the second moments >= 0."""
    param, grad, m = (rng.standard_normal(shape) for _ in range(3))
    v, top = np.abs(rng.standard_normal(shape)), np.abs(rng.standard_normal(shape)) * 2
    if special and param.size:
        for a in (param, grad):
            flat = a.reshape(-1)
            picks = rng.integers(0, flat.size, min(3, flat.size))
            flat[picks] = rng.choice(SPECIAL, picks.size)
    with np.errstate(over="ignore"):
        return [np.asarray(a, dtype) for a in (param, grad, m, v, top)]


def run(module, state, steps, options, amsgrad):
    param, grad, m, v, top = (a.copy() for a in state)
    for step in range(1, steps + 1):
        module.adam_update(param, grad, m, v, top if amsgrad else None, step, **options)
        grad = grad * np.asarray(-0.5, grad.dtype)        # a new gradient each step
    return param, m, v, top


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from([np.float32, np.float64]),
       decoupled=st.booleans(), maximize=st.booleans(), amsgrad=st.booleans(),
       weight_decay=st.sampled_from([0.0, 0.01, 0.3, 1e-50]),     # 1e-50: 0 in float32
       lr=st.sampled_from([1e-3, 0.1]), betas=st.sampled_from([(0.9, 0.999), (0.5, 0.9)]),
       eps=st.sampled_from([1e-8, 1e-3]), special=st.booleans(), seed=st.integers(0, 2**16))
def test_the_numba_update_equals_the_reference_bit_for_bit(shape, dtype, decoupled, maximize,
                                                           amsgrad, weight_decay, lr, betas,
                                                           eps, special, seed):
    state = arrays(np.random.default_rng(seed), shape, dtype, special)
    options = dict(lr=lr, beta1=betas[0], beta2=betas[1], eps=eps, weight_decay=weight_decay,
                   decoupled=decoupled, maximize=maximize)
    with np.errstate(all="ignore"):
        ours = run(numba_cpu, state, 3, options, amsgrad)
        expected = run(reference, state, 3, options, amsgrad)
    for a, b in zip(ours, expected):
        assert a.dtype == b.dtype == dtype
        assert_same_bits(a, b)


def assert_same_bits(a, b):
    """NaN where NaN; every bit elsewhere, signed zeros included."""
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    bits = np.dtype(f"u{a.dtype.itemsize}")
    keep = ~np.isnan(a)
    np.testing.assert_array_equal(a[keep].view(bits), b[keep].view(bits))


@pytest.mark.parametrize("case", ["weight decay rounding to 0", "maximize a NaN"])
def test_the_corners_of_rounding_and_nan_are_the_references(case):
    """Adam's λ = 1e-50 is 0 in float32, yet the reference adds 0·θ (NaN for an inf θ);
    maximize negates a NaN gradient as the reference's -grad does."""
    param = np.array([np.inf, 1.0, -0.0], np.float32)
    grad = np.array([0.5, np.nan, -0.0], np.float32)
    options = dict(lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=1e-50,
                   decoupled=False, maximize=case == "maximize a NaN")
    results = []
    for module in (numba_cpu, reference):
        p, m, v = param.copy(), np.zeros(3, np.float32), np.zeros(3, np.float32)
        with np.errstate(all="ignore"):
            module.adam_update(p, grad, m, v, None, 1, **options)
        results.append((p, m, v))
    assert np.isnan(results[1][1][0])                    # the reference's 0·inf
    for a, b in zip(*results):
        assert_same_bits(a, b)


OPTIONS = dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1, decoupled=True,
               maximize=False)


@pytest.mark.parametrize("case", ["param view", "grad view", "float16", "grad float64"])
def test_what_the_kernel_does_not_take_runs_the_reference(case):
    rng = np.random.default_rng(0)
    dtype = np.float16 if case == "float16" else np.float32
    base = [a.astype(dtype) for a in (rng.standard_normal((6, 8)) for _ in range(4))]
    base[3] = np.abs(base[3])
    if case == "param view":
        base[0] = np.asfortranarray(base[0])
    if case == "grad view":
        base[1] = base[1].T.copy().T                     # the same values, strided
    if case == "grad float64":
        base[1] = base[1].astype(np.float64)
    results = []
    for module in (numba_cpu, reference):
        param, grad, m, v = (a.copy(order="K") for a in base)
        module.adam_update(param, grad, m, v, None, 1, **OPTIONS)
        results.append((param, m, v))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_a_strided_gradient_is_copied_and_runs_compiled():
    rng = np.random.default_rng(1)
    param, m, v = rng.standard_normal((3, 5, 4)).astype(np.float32)
    v = np.abs(v)
    grad = np.broadcast_to(rng.standard_normal(4).astype(np.float32), (5, 4))
    results = []
    for module in (numba_cpu, reference):
        p, mm, vv = param.copy(), m.copy(), v.copy()
        module.adam_update(p, grad, mm, vv, None, 2, **OPTIONS)
        results.append((p, mm, vv))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def model_after_steps(kernels, dtype, name, options, steps=4):
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8, dtype=dtype), nn.Tanh(), nn.Linear(8, 3, dtype=dtype))
    optimizer = getattr(optim, name)(model.parameters(), **options)
    x = mg.tensor(np.random.default_rng(0).standard_normal((5, 6)), dtype=dtype)
    with mg.cpu_kernels(kernels):
        for _ in range(steps):
            optimizer.zero_grad()
            model(x).square().sum().backward()
            optimizer.step()
    return [p.detach().numpy().copy() for p in model.parameters()], optimizer


@pytest.mark.parametrize("name, options", [
    ("AdamW", {}), ("Adam", {"weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.1, "maximize": True, "amsgrad": True})])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_the_optimizers_give_the_same_parameters_on_either_kernels(name, options, dtype):
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    compiled, optimizer = model_after_steps("numba", dtype, name, options)
    expected, _ = model_after_steps("reference", dtype, name, options)
    for a, b in zip(compiled, expected):
        np.testing.assert_array_equal(a, b)
    state = next(iter(optimizer.state.values()))
    assert state["step"] == 4 and state["exp_avg"].dtype == (
        np.float32 if dtype == "bfloat16" else np.dtype(dtype))


def test_adamw_in_float32_follows_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    inits = [rng.standard_normal(s).astype(np.float32) for s in [(16, 8), (8,), (3, 4, 5)]]
    ours = [nn.Parameter(a) for a in inits]
    theirs = [torch.tensor(a, requires_grad=True) for a in inits]
    opt = optim.AdamW(ours, lr=0.01, weight_decay=0.1, amsgrad=True)
    opt_t = torch.optim.AdamW(theirs, lr=0.01, weight_decay=0.1, amsgrad=True)
    for _ in range(5):
        grads = [rng.standard_normal(a.shape).astype(np.float32) for a in inits]
        for p, g in zip(ours, grads):
            p.grad = mg.tensor(g)
        for p, g in zip(theirs, grads):
            p.grad = torch.tensor(g)
        opt.step()
        opt_t.step()
        for p, t in zip(ours, theirs):        # torch rounds m's update as a lerp: a few ulps
            np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=2e-6,
                                       atol=2e-7)


def test_the_update_is_in_place_and_a_read_only_parameter_changes_nothing():
    a, b = nn.Parameter(np.ones(3, np.float32)), nn.Parameter(np.ones(2, np.float32))
    opt = optim.AdamW([a, b], lr=0.1)
    array = a._array
    a.grad, b.grad = mg.ones_like(a), mg.ones_like(b)
    opt.step()
    assert a._array is array and a._version == 1 and not np.any(array == 1)
    exp_avg = opt.state[id(a)]["exp_avg"]
    b._array.flags.writeable = False
    before = array.copy()
    with pytest.raises(ValueError, match="read-only; nothing was updated"):
        opt.step()
    np.testing.assert_array_equal(array, before)
    assert opt.state[id(a)]["step"] == 1 and opt.state[id(a)]["exp_avg"] is exp_avg

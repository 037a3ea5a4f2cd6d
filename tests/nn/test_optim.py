"""Optimizers and gradient clipping against torch.optim, step for step, in float64."""

import math

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn, optim

torch = pytest.importorskip("torch")

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.02, "betas": (0.5, 0.9), "weight_decay": 0.3}),
]


def quadratic_loss(xp, params, targets):
    """A loss whose gradients change from step to step: sum((p - t)^2 * |p|)."""
    return sum(((p - t) * (p - t) * (p * p + 1).sqrt()).sum()
               for p, t in zip(params, targets))


@pytest.mark.parametrize("name, options", CASES)
def test_optimizer_matches_torch_over_several_steps(name, options):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    inits = [rng.standard_normal(s) for s in shapes]
    targets = [rng.standard_normal(s) for s in shapes]
    params = [nn.Parameter(a) for a in inits]
    params_t = [torch.tensor(a, requires_grad=True) for a in inits]
    opt = getattr(optim, name)(params, **options)
    opt_t = getattr(torch.optim, name)(params_t, **options)
    for step in range(6):
        opt.zero_grad()
        opt_t.zero_grad()
        quadratic_loss(np, params, targets).backward()
        quadratic_loss(torch, params_t, [torch.tensor(t) for t in targets]).backward()
        opt.step()
        opt_t.step()
        for p, pt in zip(params, params_t):
            np.testing.assert_allclose(p.data, pt.detach().numpy(), rtol=0, atol=1e-12,
                                       err_msg=f"{name} step {step}")


def test_parameter_groups_have_their_own_options():
    a, b = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(2))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    a.grad, b.grad = mg.ones_like(a), mg.ones_like(b)
    opt.step()
    np.testing.assert_allclose(a.data, 0.9)
    np.testing.assert_allclose(b.data, 0.0)


@pytest.mark.parametrize("name, group_options", [
    ("Adam", {"betas": (0.5, 0.6), "lr": 0.05}),
    ("AdamW", {"betas": (0.3, 0.99), "weight_decay": 0.2}),
    ("SGD", {"momentum": 0.9, "nesterov": True}),
])
def test_group_options_take_torch_names_and_match_torch(name, group_options):
    rng = np.random.default_rng(3)
    inits = [rng.standard_normal(3), rng.standard_normal(2)]
    params = [nn.Parameter(a) for a in inits]
    params_t = [torch.tensor(a, requires_grad=True) for a in inits]
    groups = [{"params": [params[0]]}, {"params": [params[1]], **group_options}]
    groups_t = [{"params": [params_t[0]]}, {"params": [params_t[1]], **group_options}]
    opt, opt_t = getattr(optim, name)(groups, lr=0.1), getattr(torch.optim, name)(groups_t,
                                                                                  lr=0.1)
    for _ in range(3):
        for p, pt in zip(params, params_t):
            p.grad, pt.grad = p.data ** 3, pt.detach() ** 3
        opt.step()
        opt_t.step()
    for p, pt in zip(params, params_t):
        np.testing.assert_allclose(p.data, pt.detach().numpy(), rtol=0, atol=1e-12)


def test_an_unknown_group_option_is_an_error():
    a = nn.Parameter(np.ones(2))
    with pytest.raises(ValueError, match=r"unknown options in a parameter group: \['beta1'\]"):
        optim.Adam([{"params": [a], "beta1": 0.5}])
    with pytest.raises(ValueError, match="nesterov needs momentum"):
        optim.SGD([{"params": [a], "nesterov": True}], lr=0.1)


def test_step_skips_parameters_without_grad_and_keeps_objects():
    a = nn.Parameter(np.ones(3))
    opt = optim.Adam([a])
    memory = a.detach().numpy()
    opt.step()
    np.testing.assert_array_equal(a.data, 1)
    a.grad = mg.ones_like(a)
    opt.step()
    assert not np.any(memory == 1)                                # updated in place
    assert np.shares_memory(a.detach().numpy(), memory) and a._version == 1


def test_step_after_forward_invalidates_the_graph():
    w = nn.Parameter(np.ones(3))
    y = (w * w).sum()
    w.grad = mg.ones_like(w)
    optim.SGD([w], lr=0.1).step()
    with pytest.raises(RuntimeError, match="modified in place"):
        y.backward()


@pytest.mark.parametrize("bad, error", [
    ({"lr": -1}, ValueError), ({"betas": (0.9, 1.0)}, ValueError), ({"eps": None}, TypeError),
    ({"lr": "1e-3"}, TypeError), ({"betas": ("0.9", 0.99)}, TypeError)])
def test_bad_options(bad, error):
    with pytest.raises(error, match=next(iter(bad))):           # as torch: a string is a
        optim.Adam([nn.Parameter(np.ones(1))], **bad)           # TypeError, -1 a ValueError


def test_bad_params():
    with pytest.raises(ValueError, match="empty"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="Tensors, got float"):    # torch's class
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(ValueError, match="nesterov"):
        optim.SGD([nn.Parameter(np.ones(1))], lr=0.1, nesterov=True)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_a_frozen_parameter_is_taken_and_moves_once_it_has_a_gradient_as_torch(name):
    """Fine-tuning passes ``model.parameters()`` whole, frozen ones (and a plain leaf)
    included: torch takes them, and the step skips what has no gradient."""
    def run(lib):
        frozen = lib.nn.Parameter(lib.ones(2, dtype=lib.float64), requires_grad=False)
        live = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        plain = lib.tensor([1.0, 2.0], dtype=lib.float64)
        opt = getattr(lib.optim, name)([frozen, live, plain], lr=0.1)
        (live * 3).sum().backward()
        opt.step()
        moved = [frozen.tolist(), live.tolist(), plain.tolist()]
        frozen.requires_grad_(True)
        (frozen * 2).sum().backward()
        opt.step()
        return moved + [frozen.tolist(), live.tolist()]
    np.testing.assert_allclose(run(mg), run(torch), rtol=1e-12)


@pytest.mark.parametrize("max_norm, norm_type", [(0.5, 2.0), (100.0, 2.0), (0.3, 1.0),
                                                 (0.1, float("inf")), (0.1, -float("inf")),
                                                 (0.5, 0.0), (1.5, 0), (0.2, -1.0),
                                                 (3.0, 0.5), (0.4, 3)])
@pytest.mark.parametrize("zeros", [False, True])
def test_clip_grad_norm_matches_torch(max_norm, norm_type, zeros):
    # the total is torch's norm of the per-tensor norms: for order 0 the number of tensors
    # holding a nonzero, for negative orders 0 once any gradient entry is 0
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((3, 2)), rng.standard_normal(5), rng.standard_normal(2)]
    if zeros:
        grads[0][1] = 0.0
        grads[2][:] = 0.0
    params = [nn.Parameter(np.zeros(g.shape)) for g in grads]
    params_t = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for p, pt, g in zip(params, params_t, grads):
        p.grad, pt.grad = mg.tensor(g), torch.tensor(g)
    total = nn.clip_grad_norm_((p for p in params), max_norm, norm_type)  # a generator too
    total_t = torch.nn.utils.clip_grad_norm_(params_t, max_norm, norm_type)
    assert total == pytest.approx(float(total_t), abs=1e-12)
    for p, pt in zip(params, params_t):
        np.testing.assert_allclose(p.grad, pt.grad.numpy(), rtol=0, atol=1e-12)


def test_failed_step_changes_nothing():
    a, b = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(3))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad, b._grad = mg.ones_like(a), mg.ones(2, dtype=b.dtype)   # b's has a bad shape
    # (set behind the setter's back: it refuses a wrong shape, as torch's does)
    with pytest.raises(ValueError, match=r"shape \(2,\), its parameter \(3,\)"):
        opt.step()
    np.testing.assert_array_equal(a.data, 1)
    assert opt.state == {} and a._version == 0


def test_load_state_dict_accepts_bfloat16_state_and_keeps_float32():
    pytest.importorskip("ml_dtypes")
    weight = mg.tensor(np.ones((2, 3)), dtype="bfloat16", requires_grad=True)
    optimizer = optim.AdamW([weight])
    weight.grad = mg.full((2, 3), 0.5, dtype=weight.dtype)
    optimizer.step()
    state = optimizer.state_dict()
    (entry,) = state["state"].values()
    for key, value in entry.items():
        if np.ndim(value):
            entry[key] = np.asarray(value).astype(weight.dtype)   # as a bfloat16 checkpoint
    again = optim.AdamW([weight])
    again.load_state_dict(state)
    (loaded,) = again.state_dict()["state"].values()
    assert all(np.asarray(v).dtype == np.float32 for v in loaded.values() if np.ndim(v))


@pytest.mark.parametrize("grad", [[np.nan, 1.0, 1.0], [np.inf, 1.0, 1.0], [3.0, 4.0, 0.0]])
@pytest.mark.parametrize("norm_type", [2.0, math.inf])
def test_clip_grad_norm_of_a_nonfinite_gradient_matches_torch(grad, norm_type):
    torch = pytest.importorskip("torch")
    p = nn.Parameter(np.ones(3))
    p.grad = mg.tensor(np.array(grad))
    tp = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    tp.grad = torch.tensor(grad, dtype=torch.float64)
    total = nn.clip_grad_norm_([p], 1.0, norm_type)
    expected = torch.nn.utils.clip_grad_norm_([tp], 1.0, norm_type)
    np.testing.assert_allclose(total, float(expected), rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(p.grad, tp.grad.numpy(), rtol=1e-12, equal_nan=True)


def test_clip_grad_norm_inf_norm_keeps_a_nan_in_a_later_parameter():
    # the largest absolute value over several parameters: a NaN in any of them (not only
    # the first) makes the total NaN, as in torch, so the gradients are not clipped by 4
    torch = pytest.importorskip("torch")
    grads = [[3.0, 4.0], [np.nan]]
    params, params_t = [], []
    for g in grads:
        params.append(nn.Parameter(np.ones(len(g))))
        params[-1].grad = mg.tensor(np.array(g))
        params_t.append(torch.nn.Parameter(torch.ones(len(g), dtype=torch.float64)))
        params_t[-1].grad = torch.tensor(g, dtype=torch.float64)
    total = nn.clip_grad_norm_(params, 1.0, math.inf)
    expected = torch.nn.utils.clip_grad_norm_(params_t, 1.0, math.inf)
    np.testing.assert_allclose(total, float(expected), equal_nan=True)
    for p, tp in zip(params, params_t):
        np.testing.assert_allclose(p.grad, tp.grad.numpy(), equal_nan=True)
    with pytest.raises(RuntimeError, match="error_if_nonfinite"):
        nn.clip_grad_norm_(params, 1.0, math.inf, error_if_nonfinite=True)


def test_clip_grad_norm_error_if_nonfinite_changes_nothing():
    p = nn.Parameter(np.ones(3))
    p.grad = mg.tensor(np.array([np.nan, 1.0, 1.0]))
    with pytest.raises(RuntimeError, match="error_if_nonfinite"):
        nn.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert np.isnan(p.grad[0]) and p.grad[1:].tolist() == [1.0, 1.0]
    empty = nn.Parameter(np.ones((0, 3)))
    empty.grad = mg.ones_like(empty)
    assert nn.clip_grad_norm_([empty], 1.0) == 0.0
    with pytest.raises(RuntimeError, match="identity"):     # torch's: inf has no identity
        nn.clip_grad_norm_([empty], 1.0, norm_type=math.inf)


@pytest.mark.parametrize("name, options", [
    ("Adam", {"amsgrad": True}), ("AdamW", {"amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"maximize": True, "weight_decay": 0.1}), ("AdamW", {"maximize": True}),
    ("SGD", {"maximize": True, "momentum": 0.9, "weight_decay": 0.1}),
])
def test_amsgrad_and_maximize_follow_torch(name, options):
    torch = pytest.importorskip("torch")
    w = nn.Parameter(np.array([1.0, -2.0, 0.5]))
    tw = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64))
    mine = getattr(optim, name)([w], lr=0.1, **options)
    theirs = getattr(torch.optim, name)([tw], lr=0.1, **options)
    for step in range(5):                    # a shrinking gradient: amsgrad's max matters
        g = np.array([0.5, 0.25, -1.0]) * (3 - step)
        w.grad, tw.grad = mg.tensor(g), torch.tensor(g)
        mine.step()
        theirs.step()
    np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-14, atol=1e-16)
    assert sorted(mine.state_dict()["state"][0]) == sorted(theirs.state_dict()["state"][0])


def test_a_state_dict_saved_without_the_new_flags_still_loads():
    w = nn.Parameter(np.ones(2))
    opt = optim.Adam([w], amsgrad=True)
    saved = opt.state_dict()
    for group in saved["param_groups"]:
        del group["amsgrad"], group["maximize"]          # as written before they existed
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["amsgrad"] is True
    with pytest.raises(ValueError, match="amsgrad must be True or False"):
        optim.Adam([w], amsgrad=1)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "RMSprop", "Adagrad"])
def test_a_parameter_whose_data_changed_shape_is_refused_and_nothing_changes(name):
    """Its state keeps the old shape: torch refuses the step (a size mismatch); here a
    ValueError names the state, before any parameter or state moves (the compiled Adam
    update would otherwise read and write past the state's end)."""
    a = nn.Parameter(np.ones(3, np.float32))
    b = nn.Parameter(np.ones(3, np.float32))
    options = {"momentum": 0.9} if name in ("SGD", "RMSprop") else {}
    opt = getattr(optim, name)([a, b], lr=0.1, **options)
    a.grad, b.grad = mg.ones_like(a), mg.ones_like(b)
    opt.step()
    b.data = mg.ones(4)
    b.grad = mg.ones(4)
    before = a.detach().numpy().copy()
    states = {k: {n: np.copy(v) for n, v in opt.state[id(p)].items()}
              for k, p in (("a", a), ("b", b))}
    with pytest.raises(ValueError, match=r"state '\w+' has shape \(3,\), its parameter \(4,\)"):
        opt.step()
    np.testing.assert_array_equal(a.detach().numpy(), before)
    for key, p in (("a", a), ("b", b)):
        for n, v in opt.state[id(p)].items():
            np.testing.assert_array_equal(v, states[key][n])


@pytest.mark.parametrize("kernels", ["numba", "reference"])
def test_numpy_scalar_options_act_as_python_numbers(kernels):
    """lr = np.float64(...) on float32 parameters computes as lr = float(...) (PyTorch
    takes either as a number), whichever kernels run."""
    pytest.importorskip("numba")
    results = []
    for lr in (1e-3, np.float64(1e-3)):
        p = nn.Parameter(np.linspace(-1, 1, 50, dtype=np.float32))
        opt = optim.AdamW([p], lr=lr, weight_decay=np.float64(0.1))
        with mg.cpu_kernels(kernels):
            for _ in range(3):
                p.grad = mg.tensor(np.cos(np.arange(50, dtype=np.float32)))
                opt.step()
        results.append(p.detach().numpy().copy())
    np.testing.assert_array_equal(*results)

"""optim.LBFGS against torch.optim.LBFGS: the same losses, parameters and state counters step
after step, with the fixed step and the strong-Wolfe line search, a short history that
forgets, float64 and float32, a complex parameter; the state dict resumes the run; torch's
errors."""

import numpy as np
import pytest
import torch

import microgradnorm as mg

RNG_SEED = 3


def problem(lib, dtype="float64", complex_part=False):
    """Parameters of a small least-squares fit with a quartic term (so the Hessian changes
    along the way) and its closure-making function."""
    rng = np.random.default_rng(RNG_SEED)
    x, y = rng.standard_normal((12, 3)), rng.standard_normal(12)
    as_dtype = getattr(lib, dtype)
    w = lib.tensor(rng.standard_normal((3, 1)), dtype=as_dtype, requires_grad=True)
    b = lib.tensor(rng.standard_normal(1), dtype=as_dtype, requires_grad=True)
    params = [w, b]
    z_target = None
    if complex_part:
        z_target = lib.tensor(rng.standard_normal(2) + 1j * rng.standard_normal(2))
        params.append(lib.tensor(np.zeros(2, complex), requires_grad=True))
    xt, yt = lib.tensor(x, dtype=as_dtype), lib.tensor(y, dtype=as_dtype)

    def make_closure(optimizer):
        def closure():
            optimizer.zero_grad()
            residual = (xt @ w).reshape(-1) + b - yt
            loss = (residual ** 2).mean() + 0.1 * (w ** 4).sum()
            if complex_part:
                loss = loss + ((params[2] - z_target).abs() ** 2).sum()
            loss.backward()
            return loss
        return closure
    return params, make_closure


def run(lib, steps=3, dtype="float64", complex_part=False, **options):
    params, make_closure = problem(lib, dtype, complex_part)
    optimizer = lib.optim.LBFGS(params, **options)
    closure = make_closure(optimizer)
    record = []
    for _ in range(steps):
        loss = optimizer.step(closure)
        state = optimizer.state[params[0]] if lib is torch else \
            optimizer.state[id(params[0])]
        record.append((loss.item(), [p.detach().numpy().copy() for p in params],
                       state["func_evals"], state["n_iter"]))
    return record


def assert_same_runs(ours, theirs, rtol):
    for (loss, params, evals, iters), (t_loss, t_params, t_evals, t_iters) in zip(ours, theirs):
        assert (evals, iters) == (t_evals, t_iters)
        np.testing.assert_allclose(loss, t_loss, rtol=rtol)
        for p, t in zip(params, t_params):
            np.testing.assert_allclose(p, t, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("options", [
    {},
    {"lr": 0.5, "max_iter": 7, "history_size": 2},
    {"line_search_fn": "strong_wolfe"},
    {"line_search_fn": "strong_wolfe", "max_iter": 4, "history_size": 1, "lr": 2.0},
    {"line_search_fn": "strong_wolfe", "lr": 0.01},
    {"max_eval": 5, "tolerance_change": 1e-3},
], ids=["defaults", "short_history", "strong_wolfe", "wolfe_zoom", "wolfe_extrapolate",
        "max_eval"])
def test_steps_match_torch_float64(options):
    assert_same_runs(run(mg, **options), run(torch, **options), rtol=1e-9)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_a_step_matches_torch_float32(line_search_fn):
    # one step: its stopping tests (a loss change below 1e-9, ...) compare float32 numbers
    # whose last bit follows the summation order, so later steps may stop an iteration apart
    ours = run(mg, steps=1, dtype="float32", line_search_fn=line_search_fn, max_iter=5)
    theirs = run(torch, steps=1, dtype="float32", line_search_fn=line_search_fn, max_iter=5)
    assert ours[0][1][0].dtype == np.float32
    assert_same_runs(ours, theirs, rtol=2e-4)


def test_a_complex_parameter_moves_as_its_real_and_imaginary_parts():
    options = {"line_search_fn": "strong_wolfe", "max_iter": 6}
    ours = run(mg, complex_part=True, **options)
    assert_same_runs(ours, run(torch, complex_part=True, **options), rtol=1e-9)
    assert ours[-1][1][2].dtype == np.complex128


def test_a_resumed_run_continues_exactly():
    options = {"max_iter": 4, "history_size": 3}
    whole = run(mg, steps=3, **options)
    params, make_closure = problem(mg)
    first = mg.optim.LBFGS(params, **options)
    first.step(make_closure(first))
    state = first.state_dict()
    assert list(state["state"]) == [0] and state["state"][0]["n_iter"] == 4
    second = mg.optim.LBFGS(params, **options)
    second.load_state_dict(state)
    closure = make_closure(second)
    second.step(closure)
    second.step(closure)
    for p, expected in zip(params, whole[-1][1]):
        np.testing.assert_array_equal(p.detach().numpy(), expected)


def test_the_closure_runs_with_grad_under_no_grad_and_the_first_loss_returns():
    params, make_closure = problem(mg)
    optimizer = mg.optim.LBFGS(params, max_iter=3)
    closure = make_closure(optimizer)
    first = closure().item()
    with mg.no_grad():
        loss = optimizer.step(closure)
    assert loss.item() == first and loss.requires_grad


def test_torchs_errors():
    w = mg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        mg.optim.LBFGS([w], lr=-1)
    with pytest.raises(ValueError, match="parameter groups"):
        mg.optim.LBFGS([{"params": [w]}, {"params": [mg.zeros(1, requires_grad=True)]}])
    optimizer = mg.optim.LBFGS([w], line_search_fn="armijo")

    def closure():
        optimizer.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        optimizer.step(closure)


def test_a_group_added_later_is_refused_at_the_step_as_torchs():
    for lib in (mg, torch):
        p, q = (lib.tensor([3.0], requires_grad=True) for _ in range(2))
        optimizer = lib.optim.LBFGS([p])
        optimizer.add_param_group({"params": [q]})

        def closure(optimizer=optimizer, p=p, q=q):
            optimizer.zero_grad()
            loss = (p * p).sum() + (q * q).sum()
            loss.backward()
            return loss
        with pytest.raises(AssertionError, match="Expected exactly one param_group, but got 2"):
            optimizer.step(closure)
        assert p.tolist() == q.tolist() == [3.0]

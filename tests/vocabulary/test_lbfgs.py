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


# float32: the arithmetic of the iterations itself, step by step against torch's. The two
# runs see the same losses and gradients (torch computes them for both, from our
# parameters), and the three results whose last bit is each library's own (the dot
# products' and the 1-norm's summation order, the line search's square root) are torch's
# (``lbfgs._dot``, ``_sum``, ``_sqrt`` replaced), so whatever else differs (a multiply-add
# rounded twice where torch's kernel rounds once, a float64 intermediate, another order of
# operations or tolerance test) shows as a differing bit, which ill-conditioned steps grow.

def float32_problem(kind):
    """torch tensors of a float32 problem: its parameters and its loss function."""
    rng = np.random.default_rng(RNG_SEED)
    if kind == "quadratic":
        root = rng.standard_normal((6, 6))
        a = torch.tensor(root @ root.T + np.eye(6), dtype=torch.float32)
        b = torch.tensor(rng.standard_normal(6), dtype=torch.float32)
        x = torch.tensor(rng.standard_normal(6), dtype=torch.float32, requires_grad=True)
        return [x], lambda: 0.5 * (x * (a @ x)).sum() - (b * x).sum()
    inputs = torch.tensor(rng.standard_normal((16, 3)), dtype=torch.float32)
    targets = torch.tensor(rng.standard_normal((16, 1)), dtype=torch.float32)
    shapes = [(3, 8), (8,), (8, 1)]
    w1, b1, w2 = (torch.tensor(0.5 * rng.standard_normal(s), dtype=torch.float32,
                               requires_grad=True) for s in shapes)
    return [w1, b1, w2], lambda: ((torch.tanh(inputs @ w1 + b1) @ w2 - targets) ** 2).mean()


def float32_run(lib, kind, steps=3, **options):
    """The parameters at each closure call and after each step, and the final state."""
    torch_params, loss_fn = float32_problem(kind)
    params = torch_params if lib is torch else \
        [mg.tensor(p.detach().numpy().copy(), requires_grad=True) for p in torch_params]
    optimizer = lib.optim.LBFGS(params, **options)
    points = []

    def closure():
        optimizer.zero_grad()
        if lib is mg:                   # torch's loss and gradient at our parameters
            with torch.no_grad():
                for t, p in zip(torch_params, params):
                    t.copy_(torch.from_numpy(p.detach().numpy().copy()))
                    t.grad = None
        with torch.enable_grad():
            loss = loss_fn()
            loss.backward()
        points.append([t.detach().numpy().copy() for t in torch_params])
        if lib is torch:
            return loss
        for t, p in zip(torch_params, params):
            p.grad = mg.tensor(t.grad.numpy().copy())
        return mg.tensor(loss.item(), dtype=mg.float32)

    after_steps = []
    for _ in range(steps):
        optimizer.step(closure)
        after_steps.append([p.detach().numpy().copy() for p in params])
    state = optimizer.state[params[0]] if lib is torch else optimizer.state[id(params[0])]
    return points, after_steps, state


def torch_rounds_add_alpha_once():
    # torch's add_(x, alpha=a) is one FMA where its kernels are compiled with them (x86 with
    # AVX2, ARM); ours follows that rounding
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    alpha = np.float32(0.1)
    fused = (x.astype(np.float64) * float(alpha) + y).astype(np.float32)
    return np.array_equal(torch.from_numpy(y).add_(torch.from_numpy(x), alpha=float(alpha)),
                          fused)


@pytest.mark.parametrize("kind", ["quadratic", "mlp"])
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("history_size", [3, 10])
@pytest.mark.parametrize("max_iter", [20, 50])
def test_float32_iterations_round_as_torchs(monkeypatch, kind, max_iter, history_size,
                                            line_search_fn):
    torch = pytest.importorskip("torch")
    from microgradnorm.optim import lbfgs
    monkeypatch.setattr(lbfgs, "_dot", lambda a, b: torch.from_numpy(a).dot(
        torch.from_numpy(b)).numpy()[()])
    monkeypatch.setattr(lbfgs, "_sum", lambda a: torch.from_numpy(a).sum().numpy()[()])
    monkeypatch.setattr(lbfgs, "_sqrt", lambda a: torch.tensor(a).sqrt().numpy()[()])
    options = {"lr": 1 if line_search_fn else 0.5, "max_iter": max_iter,
               "history_size": history_size, "line_search_fn": line_search_fn}
    if not torch_rounds_add_alpha_once():
        pytest.skip("this torch build's add_(x, alpha=a) rounds twice (no FMA kernels)")
    points, after, state = float32_run(mg, kind, **options)
    t_points, t_after, t_state = float32_run(torch, kind, **options)
    for ours, theirs in zip(after, t_after):        # the parameters after each outer step
        for p, t in zip(ours, theirs):
            assert p.dtype == np.float32
            np.testing.assert_array_equal(p, t)
    assert len(points) == len(t_points)            # every closure call at the same point
    for ours, theirs in zip(points, t_points):
        for p, t in zip(ours, theirs):
            np.testing.assert_array_equal(p, t)
    assert (state["n_iter"], state["func_evals"]) == (t_state["n_iter"], t_state["func_evals"])
    np.testing.assert_array_equal(state["d"].numpy(), t_state["d"].numpy())
    for key in ("al", "old_dirs", "ro"):            # the history's scratch values too
        for ours, theirs in zip(state[key], t_state[key]):
            if theirs is not None:
                np.testing.assert_array_equal(np.asarray(ours.numpy()), theirs.numpy())


@pytest.mark.parametrize("steps_are", ["numbers", "float32"])
def test_the_cubic_step_rounds_as_torchs(monkeypatch, steps_are):
    """The line search's cubic interpolation, bit for bit, with torch's square root: a
    Python number divided by a float32 step is torch's reciprocal-times-number."""
    torch = pytest.importorskip("torch")
    import torch.optim.lbfgs as torch_lbfgs

    from microgradnorm.optim import lbfgs
    monkeypatch.setattr(lbfgs, "_sqrt", lambda a: torch.tensor(a).sqrt().numpy()[()])
    rng = np.random.default_rng(RNG_SEED)
    compared = 0
    for _ in range(300):
        x1, x2 = (float(x) for x in rng.random(2) * 2)
        f1, f2 = rng.standard_normal(2)
        g1, g2 = rng.standard_normal(2).astype(np.float32)
        if steps_are == "float32":
            x1, x2 = np.float32(x1), np.float32(x2)
            t_x1, t_x2 = torch.tensor(x1), torch.tensor(x2)
        else:
            t_x1, t_x2 = float(x1), float(x2)
        ours = lbfgs._cubic_interpolate(x1, float(f1), g1, x2, float(f2), g2)
        theirs = torch_lbfgs._cubic_interpolate(t_x1, float(f1), torch.tensor(g1), t_x2,
                                                float(f2), torch.tensor(g2))
        assert float(ours) == float(theirs)
        compared += 1
    assert compared == 300

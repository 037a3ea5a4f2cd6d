"""Habits of PyTorch code found in public training files, each as a short program run twice:
under PyTorch and here, the same text given either library (``torch``, ``nn``, ``F``). A
program returns what it computed (numbers, shapes, flags); the two runs must agree to
rounding. The habits: torch's keyword names for sizes and dims (``x.repeat(repeats=...)``,
``torch.randint(low=, high=, size=)``), the deprecated ``set_default_tensor_type``, the
deprecated scalar-first overloads of the optimizers written before ``alpha=`` and ``value=``
(``p.data.add_(-lr, grad)``, ``exp_avg_sq.addcmul_(1 - beta2, grad, grad)``), a softmax
given no dim, and optimizers written by hand on ``torch.optim.optimizer.Optimizer``."""

import math
import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

from torch_compare import under_both  # noqa: E402


def plain(value):
    """Tensors as nested lists of floats, dtypes by name, containers walked."""
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        return np.asarray(value.detach().numpy(), dtype=np.float64).tolist()
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (torch.dtype, np.dtype, mg.dtype)):
        return str(value).replace("torch.", "")
    return value


def assert_close(got, expected, rtol=1e-6, atol=1e-7):
    """``got`` against ``expected`` (nested lists, dicts, floats, anything else exactly)."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and list(got) == list(expected), (got, expected)
        for key in expected:
            assert_close(got[key], expected[key], rtol, atol)
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), (got, expected)
        for ours, theirs in zip(got, expected):
            assert_close(ours, theirs, rtol, atol)
    elif isinstance(expected, float):
        assert math.isclose(got, expected, rel_tol=rtol, abs_tol=atol) or (
            math.isnan(got) and math.isnan(expected)), (got, expected)
    else:
        assert got == expected, (got, expected)


def run_both(program):
    return under_both(program, plain, ignore=UserWarning)   # deprecations: not the output


# ----- torch's keyword names for sizes and dims ------------------------------------------
def sizes_by_keyword(torch, nn, F):
    x = torch.arange(6.0).reshape(2, 3)
    cls = torch.ones(1, 1, 4)
    return [x.repeat(repeats=(2, 1)), cls.repeat(repeats=(3, 1, 1)).shape,
            x.view(size=(3, 2)), x.reshape(shape=(3, 2)), torch.reshape(x, shape=(6,)),
            x.expand(size=(2, 2, 3)), x.permute(dims=(1, 0)), torch.permute(x, dims=(1, 0)),
            x.tile(dims=(2,)), x.transpose(dim0=0, dim1=1), torch.transpose(x, dim0=1, dim1=0),
            x.new_zeros(size=(2,)), x.new_ones(size=[1, 2]), x.new_empty(size=(3,)).shape,
            x.clone().resize_(size=(3, 2)).shape, x.view(dtype=torch.int32).shape,
            torch.zeros(size=(2, 1)), torch.ones(size=(2,)), torch.empty(size=(1, 2)).shape,
            torch.arange(end=4), torch.arange(start=1, end=4), torch.arange(1, 5, step=2)]


def random_sizes_by_keyword(torch, nn, F):
    torch.manual_seed(0)
    return [torch.randn(size=(2, 3)), torch.rand(size=(3,)),
            torch.randint(low=0, high=10, size=(4,)), torch.randint(high=5, size=(3,)),
            torch.randint(2, 9, size=(2,)), torch.randint(0, 7, (3,))]


def misused_size_keywords(torch, nn, F):
    # torch's refusals: a keyword beside positional sizes, alpha given positionally
    x = torch.ones(2, 3)
    calls = [lambda: x.view(3, 2, size=(3, 2)), lambda: x.repeat(1, 1, repeats=(1, 1)),
             lambda: torch.zeros(2, size=(2,)), lambda: x.clone().add_(x, 2),
             lambda: x.clone().add_(2, x, alpha=3), lambda: torch.arange(),
             lambda: torch.arange(5, step=2), lambda: x.view(size=(6,), dtype=torch.int32),
             lambda: torch.subtract(x, 2, x), lambda: x.subtract(2, x)]
    failures = []
    for call in calls:
        try:
            call()
            failures.append(None)
        except TypeError:
            failures.append("TypeError")
    return failures


# ----- the deprecated default tensor type -------------------------------------------------
def default_tensor_type(torch, nn, F):
    previous = torch.get_default_dtype()
    try:
        torch.set_default_tensor_type("torch.DoubleTensor")
        double = [torch.tensor([1.5]).dtype, torch.zeros(2).dtype, nn.Linear(2, 2).weight.dtype]
        torch.set_default_tensor_type("torch.BFloat16Tensor")
        brain = torch.get_default_dtype()
        torch.set_default_tensor_type(torch.FloatTensor)
        single = torch.ones(1).dtype
        refused = []
        for bad in ("torch.LongTensor", torch.LongTensor, "torch.cuda.FloatTensor"):
            try:
                torch.set_default_tensor_type(bad)
                refused.append(None)
            except TypeError:
                refused.append("TypeError")
        return [double, brain, single, refused, torch.get_default_dtype()]
    finally:
        torch.set_default_dtype(previous)


# ----- the scalar-first overloads of old optimizers ---------------------------------------
def scalar_first_overloads(torch, nn, F):
    g = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    p = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    avg, avg_sq = torch.zeros(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    avg.mul_(0.9).add_(1 - 0.9, g)
    avg_sq.mul_(0.999).addcmul_(1 - 0.999, g, g)
    denom = avg_sq.sqrt().add_(1e-8)
    p.addcdiv_(-0.01, avg, denom)
    p.sub_(0.1, g)
    return [avg, avg_sq, p, p.add(2, g), torch.add(p, 3, g), p.sub(0.5, g),
            torch.addcmul(p, 0.5, g, g), p.addcdiv(2, g, denom), p.add_(2, 3),
            torch.add(p, torch.tensor(0.5, dtype=torch.float64), g)]     # a 0-dim alpha


def sgd_by_hand(torch, nn, F):
    # a character model's update, as older tutorials wrote it
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
    x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
    losses = []
    for _ in range(4):
        model.zero_grad()
        loss = F.nll_loss(F.log_softmax(model(x), dim=1), y)
        loss.backward()
        for p in model.parameters():
            p.data.add_(-0.1, p.grad.data)
        losses.append(loss.item())
    return losses


# ----- a softmax given no dim: torch's legacy implicit one ----------------------------------
def implicit_softmax_dim(torch, nn, F):
    x = torch.arange(24.0).reshape(2, 3, 4) / 7
    return [F.softmax(x), F.log_softmax(x), F.softmax(x.reshape(2, 3, 2, 2)),
            F.softmax(x[0, 0]), F.softmax(x[0], None), F.softmax(x, dtype=torch.float64),
            F.softmax(x, -1), nn.Softmax()(x), nn.LogSoftmax()(x[0])]


def implicit_dim_warns(torch, nn, F):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.softmax(torch.ones(2, 3))
        F.softmax(torch.ones(2, 3), dim=1)
    return [str(w.message).split(".")[0] for w in caught]


# ----- an optimizer written by hand on torch.optim.optimizer.Optimizer ---------------------
def hand_written_optimizer(torch, nn, F):
    from importlib import import_module
    base = import_module(torch.optim.__name__ + ".optimizer")

    class Momentum(base.Optimizer):
        def __init__(self, params, lr=base.required, beta=0.9):
            if lr is not base.required and lr < 0.0:
                raise ValueError(f"Invalid learning rate: {lr}")
            super().__init__(params, dict(lr=lr, beta=beta))

        def step(self, closure=None):
            loss = closure() if closure is not None else None
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["velocity"] = torch.zeros_like(p.data)
                    state["step"] += 1
                    state["velocity"].mul_(group["beta"]).add_(p.grad.data)
                    p.data.add_(state["velocity"], alpha=-group["lr"])
            return loss

    torch.manual_seed(1)
    model = nn.Linear(3, 2).double()
    x, y = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 2, dtype=torch.float64)
    optimizer = Momentum(model.parameters(), lr=0.1)

    def closure():
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss
    losses = [optimizer.step(closure).item() for _ in range(3)]
    saved = optimizer.state_dict()
    entry = saved["state"][0]
    restored = Momentum(model.parameters(), lr=0.1)
    restored.load_state_dict(saved)
    kept = restored.state[model.weight]
    losses += [restored.step(closure).item() for _ in range(2)]
    return [losses, type(entry["step"]).__name__, entry["step"], entry["velocity"],
            type(kept["step"]).__name__, kept["velocity"], repr(base.required)]


PROGRAMS = {f.__name__: f for f in (
    sizes_by_keyword, random_sizes_by_keyword, misused_size_keywords, default_tensor_type,
    scalar_first_overloads, sgd_by_hand, implicit_softmax_dim, implicit_dim_warns,
    hand_written_optimizer)}


# torch's first Optimizer subclass imports its compiler's modules: seconds
SLOW = {"hand_written_optimizer"}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW
                                  else name for name in PROGRAMS])
def test_the_habit_computes_what_it_computes_under_pytorch(name):
    expected, got = run_both(PROGRAMS[name])
    assert_close(got, expected)


def test_scalar_first_overload_warns_as_torch_words_it():
    mg.backend._WARNED.discard("scalar-first overload")      # (a process's first only)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mg.ones(2).add_(2, mg.ones(2))
        mg.ones(2).addcmul_(0.5, mg.ones(2), mg.ones(2))          # once a process, as torch
    assert [str(w.message).splitlines()[:2] for w in caught] == [
        ["This overload of add_ is deprecated:", "\tadd_(Number alpha, Tensor other)"]]


def test_the_comparison_can_fail():
    expected, _ = run_both(scalar_first_overloads)
    changed = [np.add(expected[0], 1e-4).tolist()] + expected[1:]
    with pytest.raises(AssertionError):
        assert_close(changed, expected)

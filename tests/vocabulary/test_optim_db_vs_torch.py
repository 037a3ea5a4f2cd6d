"""PyTorch's own optimizer test inputs (``optim_db``'s OptimizerInfos) run here: every error
input torch's tests raise (at construction or at the first step) raises an instance of
torch's class here too, and every option set of ``optim_inputs_func`` (momentum, nesterov,
amsgrad, maximize, weight decay, Tensor rates, ...) moves parameters as torch's does over
five steps in float64.

Inputs are converted from a deep copy made before torch runs (torch's constructor writes
into the groups it is given). Left out: SparseAdam's sparse parameters (no sparse layout
here: docs/pytorch.md) and the options torch's tests give only the GPU or the compiler
(``fused``, ``capturable``, ``differentiable``, which docs/pytorch.md lists)."""

import copy
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")
from torch.testing._internal.common_optimizers import (OptimizerErrorEnum,  # noqa: E402
                                                       optim_db)

import microgradnorm as mg  # noqa: E402

pytestmark = pytest.mark.slow          # torch's tables take seconds to import

INFOS = {info.optim_cls.__name__: info for info in optim_db}


def to_mg(value, memo):
    """torch's value as a user writes it here (one Tensor per torch Tensor, shared where
    torch's is)."""
    if isinstance(value, torch.Tensor):
        if id(value) not in memo:
            data = value.detach()
            tensor = mg.tensor(data.float().numpy().copy()).to(mg.bfloat16) \
                if data.dtype == torch.bfloat16 else mg.tensor(data.numpy().copy())
            memo[id(value)] = mg.nn.Parameter(tensor) \
                if isinstance(value, torch.nn.Parameter) else tensor
            if value.grad is not None:                 # an error input's gradient, at step
                memo[id(value)].grad = to_mg(value.grad, memo)
        return memo[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(to_mg(v, memo) for v in value)
    if isinstance(value, dict):
        return {k: to_mg(v, memo) for k, v in value.items()}
    return value


def error_cases():
    for name, info in INFOS.items():
        inputs = info.optim_error_inputs_func(device="cpu", dtype=torch.float32)
        for i, error_input in enumerate(inputs):
            if issubclass(error_input.error_type, Warning):
                continue
            sparse = any(isinstance(t, torch.Tensor) and t.is_sparse
                         for t in _tensors(error_input.optimizer_error_input.params))
            if not sparse:
                yield pytest.param(name, i, id=f"{name}-{i}")


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


@pytest.mark.parametrize("name, index", list(error_cases()))
def test_torchs_error_inputs_raise_its_class(name, index):
    info = INFOS[name]
    error_input = list(info.optim_error_inputs_func(device="cpu", dtype=torch.float32))[index]
    optim_input = error_input.optimizer_error_input
    ours = to_mg(copy.deepcopy((optim_input.params, optim_input.kwargs)), {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error_input.error_type):          # torch's own, at its phase
            optimizer = info.optim_cls(optim_input.params, **optim_input.kwargs)
            if error_input.error_on == OptimizerErrorEnum.STEP_ERROR:
                optimizer.step()
        ours_cls = getattr(mg.optim, name)
        with pytest.raises(error_input.error_type):
            optimizer = ours_cls(ours[0], **ours[1])
            if error_input.error_on == OptimizerErrorEnum.STEP_ERROR:
                optimizer.step()


def option_cases():
    for name, info in INFOS.items():
        if name == "SparseAdam":
            continue
        for i, optim_input in enumerate(info.optim_inputs_func(device="cpu",
                                                               dtype=torch.float64)):
            kwargs = optim_input.kwargs
            if optim_input.params is None and not any(
                    kwargs.get(k) for k in ("fused", "capturable", "differentiable")):
                yield pytest.param(name, i, id=f"{name}-{optim_input.desc}")


@pytest.mark.parametrize("name, index", list(option_cases()))
def test_torchs_option_sets_step_as_torchs(name, index):
    info = INFOS[name]
    optim_input = list(info.optim_inputs_func(device="cpu", dtype=torch.float64))[index]
    rng = np.random.default_rng(index)
    shapes = [(3, 4), (4, 2)] if name == "Muon" else [(3, 4), (3,)]   # Muon: matrices only
    start = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(5)]
    finals = []
    for lib in (torch, mg):
        params = [lib.nn.Parameter(lib.tensor(a.copy())) for a in start]
        kwargs = optim_input.kwargs if lib is torch else to_mg(optim_input.kwargs, {})
        optimizer = getattr(lib.optim, name)(params, **kwargs)
        for step_grads in grads:
            if name == "LBFGS":                  # a closure: a quadratic with these slopes
                def closure(step_grads=step_grads, optimizer=optimizer, params=params,
                            lib=lib):
                    optimizer.zero_grad()
                    loss = sum((p * lib.tensor(g)).sum() + (p * p).sum()
                               for p, g in zip(params, step_grads))
                    loss.backward()
                    return loss
                optimizer.step(closure)
            else:
                for p, g in zip(params, step_grads):
                    p.grad = lib.tensor(g.copy())
                optimizer.step()
        finals.append([p.detach().numpy().copy() for p in params])
    # Muon orthogonalizes in bfloat16 (test_muon_and_samplers_vs_torch.py: a rounding apart)
    tolerance = {"rtol": 0, "atol": 4e-4} if name == "Muon" else {"rtol": 1e-9, "atol": 1e-12}
    for ours, theirs in zip(*finals[::-1]):
        np.testing.assert_allclose(ours, theirs, **tolerance)


def test_the_comparisons_can_fail():
    # a rate torch's would not take, and a step of another rate, are both caught
    with pytest.raises(pytest.fail.Exception):
        with pytest.raises(ValueError):
            mg.optim.SGD([mg.nn.Parameter(mg.ones(2))], lr=0.1)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(np.ones(2), np.ones(2) * (1 + 1e-8), rtol=1e-9, atol=1e-12)

"""Muon, DistributedSampler and ``nn.parameter``'s uninitialized tensors against torch: Muon's
Newton–Schulz update (bfloat16) to torch's roundings, parameter and momentum trajectories
over 10 steps, state dicts (layout, round trips, torch's loaded into ours) and torch's
errors; the sampler's index lists for the same arguments and its errors; the uninitialized
tensors' ``isinstance`` answers.

The Newton–Schulz products round to bfloat16 after a float32 accumulation whose order is
the BLAS's here and the CPU kernel's in torch (oneDNN's with AVX512-BF16, another loop
without): on the Intel Xeon where these were written every element agreed bit for bit, but
an element whose float32 sum lies at a bfloat16 rounding boundary may round the other way
elsewhere. So the update is held to one bfloat16 rounding per element (and nearly all
elements equal), the parameters to what such a rounding moves them, and the momentum, which
no rounding to bfloat16 reaches, to float64's and float32's own."""

import copy
import inspect

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn, optim
from microgradnorm.optim.muon import newton_schulz
from microgradnorm.utils.data import DistributedSampler

torch = pytest.importorskip("torch")
from torch.optim._muon import _zeropower_via_newtonschulz  # noqa: E402  (after the skip)

COEFFICIENTS = (3.4445, -4.775, 2.0315)
SHAPES = [(4, 6), (8, 3), (5, 5)]          # wide, tall (transposed inside), square


@pytest.mark.parametrize("shape", [(4, 6), (8, 3), (16, 16), (32, 64), (64, 20)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_newton_schulz_is_torchs_to_a_bfloat16_rounding(shape, dtype):
    grad = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    expected = _zeropower_via_newtonschulz(torch.tensor(grad), COEFFICIENTS, 5, 1e-7)
    got = newton_schulz(grad, COEFFICIENTS, 5, 1e-7)
    assert got.dtype == np.float32 and got.shape == shape
    assert_bfloat16_close(got, expected.float().numpy())


def assert_bfloat16_close(got, expected):
    # within a few bfloat16 roundings of the elements' scale, and nearly every element equal
    np.testing.assert_allclose(got, expected, rtol=2 ** -6, atol=2 ** -6 * np.abs(expected).max())
    assert np.mean(got == expected) >= 0.98


def test_newton_schulz_of_zeros_and_other_coefficients():
    for grad, coefficients, steps in [(np.zeros((3, 4)), COEFFICIENTS, 5),
                                      (np.arange(12.0).reshape(4, 3), (2.0, -1.5, 0.5), 3)]:
        expected = _zeropower_via_newtonschulz(torch.tensor(grad), coefficients, steps, 1e-7)
        assert_bfloat16_close(newton_schulz(grad, coefficients, steps, 1e-7),
                              expected.float().numpy())


def twins(dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape).astype(dtype) for shape in SHAPES]
    return ([nn.Parameter(a.copy()) for a in arrays],
            [torch.tensor(a.copy(), requires_grad=True) for a in arrays])


def step_both(opt, opt_t, params, params_t, rng, dtype):
    for p, p_t in zip(params, params_t):
        grad = rng.standard_normal(p.shape).astype(dtype)
        p.grad, p_t.grad = mg.tensor(grad.copy()), torch.tensor(grad.copy())
    opt.step()
    opt_t.step()


OPTIONS = [{}, {"lr": 0.02, "momentum": 0.9, "nesterov": False, "weight_decay": 0.0},
           {"lr": 0.05, "adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.2},
           {"lr": 0.01, "adjust_lr_fn": "original", "ns_steps": 3, "eps": 1e-5,
            "ns_coefficients": (2.0, -1.5, 0.5)}]


# a parameter moved by lr·(orthogonal update) a step: one bfloat16 rounding of an update
# element (|u| <= 1) moves it by at most lr·2⁻⁸ (0.05 at most here, times the adjustment)
PARAMETER_ATOL = 4e-4


def assert_same_run(params, params_t, opt, opt_t, rtol, atol=PARAMETER_ATOL):
    for p, p_t in zip(params, params_t):
        np.testing.assert_allclose(p.detach().numpy(), p_t.detach().numpy(), rtol=rtol,
                                   atol=max(rtol, atol))
        np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(),
                                   opt_t.state[p_t]["momentum_buffer"].numpy(),
                                   rtol=rtol, atol=rtol)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_muon_steps_as_torchs(options, dtype, rtol):
    params, params_t = twins(dtype)
    opt, opt_t = optim.Muon(params, **options), torch.optim.Muon(params_t, **options)
    rng = np.random.default_rng(2)
    for _ in range(10):
        step_both(opt, opt_t, params, params_t, rng, dtype)
        assert_same_run(params, params_t, opt, opt_t, rtol)
    assert all(p.dtype == dtype for p in params)


def test_the_comparison_can_fail():
    params, params_t = twins(np.float64)
    opt, opt_t = optim.Muon(params, lr=0.02), torch.optim.Muon(params_t, lr=0.03)
    step_both(opt, opt_t, params, params_t, np.random.default_rng(2), np.float64)
    with pytest.raises(AssertionError):
        assert_same_run(params, params_t, opt, opt_t, 1e-12)


def test_groups_and_a_tensor_rate():
    params, params_t = twins(np.float64)
    groups = [{"params": params[:2], "lr": mg.tensor(0.03)}, {"params": params[2:]}]
    groups_t = [{"params": params_t[:2], "lr": torch.tensor(0.03)}, {"params": params_t[2:]}]
    opt, opt_t = optim.Muon(groups, lr=0.01), torch.optim.Muon(groups_t, lr=0.01)
    rng = np.random.default_rng(3)
    for _ in range(5):
        step_both(opt, opt_t, params, params_t, rng, np.float64)
    assert_same_run(params, params_t, opt, opt_t, 1e-12)


def plain(state_dict):
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in group.items()
               if k != "lr"} for group in state_dict["param_groups"]]
    state = {i: {k: np.asarray(v) for k, v in entry.items()}
             for i, entry in state_dict["state"].items()}
    return state, groups


def test_state_dict_is_torchs_and_loads_both_ways():
    params, params_t = twins(np.float64)
    opt, opt_t = optim.Muon(params, lr=0.02), torch.optim.Muon(params_t, lr=0.02)
    rng = np.random.default_rng(4)
    for _ in range(3):
        step_both(opt, opt_t, params, params_t, rng, np.float64)
    (state, groups), (state_t, groups_t) = plain(opt.state_dict()), plain(opt_t.state_dict())
    assert groups == groups_t
    assert state.keys() == state_t.keys() and all(
        state[i].keys() == state_t[i].keys() == {"momentum_buffer"} for i in state)
    for i in state:
        np.testing.assert_allclose(state[i]["momentum_buffer"],
                                   state_t[i]["momentum_buffer"], rtol=1e-12)
    # torch's state dict loaded here, and ours into a fresh one of ours: the runs go on alike
    saved_t = opt_t.state_dict()
    loaded = optim.Muon([nn.Parameter(p.detach().numpy().copy()) for p in params], lr=0.5)
    loaded.load_state_dict({"state": {i: {k: mg.tensor(v.numpy()) for k, v in e.items()}
                                      for i, e in saved_t["state"].items()},
                            "param_groups": saved_t["param_groups"]})
    again = optim.Muon([nn.Parameter(p.detach().numpy().copy()) for p in params], lr=0.5)
    again.load_state_dict(copy.deepcopy(opt.state_dict()))    # (its Tensors are opt's)
    for other in (loaded, again):
        assert other.param_groups[0]["lr"] == 0.02
    others = [(loaded, loaded.param_groups[0]["params"]),
              (again, again.param_groups[0]["params"])]
    for _ in range(3):
        grads = [rng.standard_normal(p.shape) for p in params]
        for optimizer, group in [(opt, params), *others]:
            for p, grad in zip(group, grads):
                p.grad = mg.tensor(grad.copy())
            optimizer.step()
        for p_t, grad in zip(params_t, grads):
            p_t.grad = torch.tensor(grad.copy())
        opt_t.step()
    for _, group in others:
        for p, p_t in zip(group, params_t):
            np.testing.assert_allclose(p.detach().numpy(), p_t.detach().numpy(), rtol=1e-12,
                                       atol=PARAMETER_ATOL)


def test_defaults_and_signature_are_torchs():
    ours = inspect.signature(optim.Muon).parameters
    theirs = inspect.signature(torch.optim.Muon).parameters
    assert list(ours) == list(theirs)
    assert all(ours[k].default == theirs[k].default for k in theirs if k != "params")
    opt = optim.Muon([nn.Parameter(mg.zeros(2, 3))])
    opt_t = torch.optim.Muon([torch.zeros(2, 3, requires_grad=True)])
    assert opt.defaults == opt_t.defaults


@pytest.mark.parametrize("options", [{"lr": -1.0}, {"momentum": -0.1},
                                     {"weight_decay": -1e-3}, {"adjust_lr_fn": "rms"}])
def test_bad_options_are_torchs_value_errors(options):
    with pytest.raises(ValueError):
        torch.optim.Muon([torch.zeros(2, 3, requires_grad=True)], **options)
    with pytest.raises(ValueError):
        optim.Muon([nn.Parameter(mg.zeros(2, 3))], **options)


@pytest.mark.parametrize("shape", [(3,), (2, 3, 4), ()])
def test_only_matrices(shape):
    with pytest.raises(ValueError):
        torch.optim.Muon([torch.zeros(shape, requires_grad=True)])
    with pytest.raises(ValueError):
        optim.Muon([nn.Parameter(mg.zeros(shape))])


@pytest.mark.parametrize("options", [{"ns_steps": 100}, {"ns_coefficients": (1.0, 2.0)}])
def test_bad_iterations_are_value_errors(options):
    # torch's at its first step, ours at construction: the same class
    p_t = torch.zeros(2, 3, requires_grad=True)
    opt_t = torch.optim.Muon([p_t], **options)
    p_t.grad = torch.ones(2, 3)
    with pytest.raises(ValueError):
        opt_t.step()
    with pytest.raises(ValueError):
        optim.Muon([nn.Parameter(mg.zeros(2, 3))], **options)


def test_a_complex_parameter_is_a_runtime_error_at_step():
    p_t = torch.zeros(2, 3, dtype=torch.complex128, requires_grad=True)
    opt_t = torch.optim.Muon([p_t])
    p_t.grad = torch.ones(2, 3, dtype=torch.complex128)
    with pytest.raises(RuntimeError):
        opt_t.step()
    p = nn.Parameter(mg.zeros(2, 3, dtype=mg.complex128))
    opt = optim.Muon([p])
    p.grad = mg.ones(2, 3, dtype=mg.complex128)
    with pytest.raises(RuntimeError):
        opt.step()


# ----- DistributedSampler ----------------------------------------------------------------------
@pytest.mark.parametrize("size", [0, 1, 7, 10, 12])
@pytest.mark.parametrize("replicas", [1, 3, 4, 9])
@pytest.mark.parametrize("shuffle, drop_last", [(True, False), (False, False), (True, True),
                                                (False, True)])
def test_distributed_sampler_lists_are_torchs(size, replicas, shuffle, drop_last):
    dataset = list(range(size))
    for rank in range(replicas):
        for seed, epoch in [(0, 0), (5, 3)]:
            ours = DistributedSampler(dataset, replicas, rank, shuffle, seed, drop_last)
            theirs = torch.utils.data.DistributedSampler(dataset, replicas, rank, shuffle,
                                                         seed, drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)
            assert (len(ours), ours.num_samples, ours.total_size) == \
                (len(theirs), theirs.num_samples, theirs.total_size)


def test_distributed_sampler_epochs_reshuffle_and_shares_cover_the_dataset():
    samplers = [DistributedSampler(range(10), num_replicas=3, rank=r, seed=1)
                for r in range(3)]
    first = [list(s) for s in samplers]
    assert sum(len(share) for share in first) == 12          # two indices repeated
    assert {i for share in first for i in share} == set(range(10))
    for s in samplers:
        s.set_epoch(1)
    assert [list(s) for s in samplers] != first


def test_distributed_sampler_errors_are_torchs():
    for kwargs in [{}, {"num_replicas": 2}, {"rank": 0}]:      # no process group
        with pytest.raises(ValueError):
            torch.utils.data.DistributedSampler(range(4), **kwargs)
        with pytest.raises(ValueError):
            DistributedSampler(range(4), **kwargs)
    for rank in (-1, 2, 5):
        with pytest.raises(ValueError, match="Invalid rank"):
            torch.utils.data.DistributedSampler(range(4), num_replicas=2, rank=rank)
        with pytest.raises(ValueError, match="Invalid rank"):
            DistributedSampler(range(4), num_replicas=2, rank=rank)


def test_distributed_sampler_feeds_a_dataloader():
    data = mg.utils.data.TensorDataset(mg.arange(10))
    sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=False)
    batches = [b[0].tolist() for b in mg.utils.data.DataLoader(data, 2, sampler=sampler)]
    assert batches == [[0, 2], [4, 6], [8]]


# ----- nn.parameter's uninitialized tensors ----------------------------------------------------
def kinds(module, value):
    return (isinstance(value, module.Parameter), isinstance(value, module.Buffer),
            module.is_lazy(value))


def test_uninitialized_tensors_are_in_nn_parameter_as_torchs():
    ours, theirs = mg.nn.parameter, torch.nn.parameter
    assert ours.UninitializedParameter is nn.UninitializedParameter
    assert ours.UninitializedBuffer is nn.UninitializedBuffer
    for name in ("UninitializedParameter", "UninitializedBuffer"):
        value, value_t = getattr(ours, name)(), getattr(theirs, name)()
        assert kinds(ours, value) == kinds(theirs, value_t)
        assert isinstance(value, mg.Tensor) and isinstance(value, getattr(ours, name))
        value.materialize((2, 3))
        value_t.materialize((2, 3))
        assert kinds(ours, value) == kinds(theirs, value_t)
        assert type(value).__name__ == type(value_t).__name__
    buffer, buffer_t = ours.UninitializedBuffer(persistent=False), \
        theirs.UninitializedBuffer(persistent=False)
    assert buffer.persistent is buffer_t.persistent is False
    assert not ours.is_lazy(mg.zeros(2)) and not theirs.is_lazy(torch.zeros(2))


def test_lazy_batch_norm_statistics_are_uninitialized_buffers():
    module, module_t = nn.LazyBatchNorm1d(), torch.nn.LazyBatchNorm1d()
    assert kinds(mg.nn.parameter, module.running_mean) == \
        kinds(torch.nn.parameter, module_t.running_mean)
    module(mg.randn(4, 3))
    module_t(torch.randn(4, 3))
    assert list(module.state_dict()) == list(module_t.state_dict())
    assert type(module.running_mean) is mg.Tensor

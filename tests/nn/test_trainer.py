"""What a toy-transformer trainer expects: optimizer state dicts, learning-rate schedules
against torch.optim.lr_scheduler, gradient accumulation, checkpoints that resume bitwise,
saves that survive being killed, and LLaMA's SwiGLU feed-forward against torch."""

import io
import os
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from numpy.lib import format as np_format

import microgradnorm as mg
from microgradnorm import nn, optim, train
from microgradnorm.checkpoint import load_checkpoint, read_extra, save_checkpoint
from microgradnorm.optim.lr_scheduler import warmup_cosine

torch = pytest.importorskip("torch")

ROOT = Path(__file__).parents[2]


def tiny_gpt(steps, **options):
    """``train_tiny_gpt`` of ``TrainConfig(steps=steps, **options)``, without a bar."""
    return train.train_tiny_gpt(train.TrainConfig(steps=steps, **options), progress=False)

OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.02, "weight_decay": 0.3}),
]


def loss_of(params, targets):
    return sum(((p - t) * (p - t) * (p * p + 1).sqrt()).sum() for p, t in zip(params, targets))


def make_params(seed=0):
    rng = np.random.default_rng(seed)
    return [nn.Parameter(rng.standard_normal(s)) for s in [(3, 4), (4,), (2, 2, 2)]]


def run_steps(opt, params, targets, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss_of(params, targets).backward()
        opt.step()


# ----- optimizer state_dict ---------------------------------------------------------------
@pytest.mark.parametrize("name, options", OPTIMIZERS)
def test_optimizer_resumed_from_state_dict_continues_bitwise(name, options):
    targets = [t.data * 0.5 for t in make_params(1)]
    params = make_params()
    opt = getattr(optim, name)(params, **options)
    run_steps(opt, params, targets, 6)

    first = make_params()
    opt_first = getattr(optim, name)(first, **options)
    run_steps(opt_first, first, targets, 3)
    saved = opt_first.state_dict()
    resumed = [nn.Parameter(p.data.copy()) for p in first]
    opt_resumed = getattr(optim, name)(resumed, lr=123.0)     # options come from the state
    opt_resumed.load_state_dict(saved)
    run_steps(opt_resumed, resumed, targets, 3)
    for a, b in zip(params, resumed):
        np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize("name, options", OPTIMIZERS)
def test_optimizer_state_dict_matches_torch_layout_and_values(name, options):
    targets = [t.data for t in make_params(1)]
    params = make_params()
    params_t = [torch.tensor(p.data, requires_grad=True) for p in params]
    opt = getattr(optim, name)(params, **options)
    opt_t = getattr(torch.optim, name)(params_t, **options)
    run_steps(opt, params, targets, 3)
    for _ in range(3):
        opt_t.zero_grad()
        loss_of(params_t, [torch.tensor(t) for t in targets]).backward()
        opt_t.step()
    ours, theirs = opt.state_dict(), opt_t.state_dict()
    assert ours["param_groups"][0]["params"] == theirs["param_groups"][0]["params"]
    assert set(ours["param_groups"][0]) <= set(theirs["param_groups"][0])
    assert set(ours["state"]) == set(theirs["state"])
    for index, entries in ours["state"].items():
        assert set(entries) == set(theirs["state"][index])
        for key, value in entries.items():
            np.testing.assert_allclose(np.asarray(value), theirs["state"][index][key].numpy(),
                                       rtol=0, atol=1e-12, err_msg=key)


def test_optimizer_state_dict_is_a_copy():
    params = make_params()
    opt = optim.Adam(params)
    run_steps(opt, params, [p.data for p in make_params(1)], 1)
    saved = opt.state_dict()
    saved["state"][0]["exp_avg"][...] = 99
    saved["param_groups"][0]["betas"] = (0.1, 0.2)
    assert not (opt.state[id(params[0])]["exp_avg"] == 99).any()
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)


@pytest.mark.parametrize("change, match", [
    (lambda s: s["param_groups"].append(dict(s["param_groups"][0])), "2 parameter groups"),
    (lambda s: s["param_groups"][0]["params"].pop(), "2 parameters in state_dict, 3"),
    (lambda s: s["state"][1].update(exp_avg=np.zeros(5)), r"'exp_avg' of parameter 1 has "
                                                          r"shape \(5,\)"),
    (lambda s: s["param_groups"][0].update(lr=-1.0), "lr must be a non-negative number"),
    (lambda s: s["param_groups"][0].pop("eps"), "expected"),
    (lambda s: s.pop("state"), "expected a dict with keys"),
])
def test_bad_optimizer_state_dict_is_a_clear_error_and_changes_nothing(change, match):
    params = make_params()
    opt = optim.Adam(params, lr=0.01)
    run_steps(opt, params, [p.data for p in make_params(1)], 2)
    before = opt.state_dict()
    other = optim.Adam(make_params(), lr=0.5)
    run_steps(other, other.param_groups[0]["params"], [p.data for p in make_params(2)], 1)
    state = other.state_dict()
    change(state)
    with pytest.raises(ValueError, match=match):
        opt.load_state_dict(state)
    after = opt.state_dict()
    assert after["param_groups"] == before["param_groups"]
    for index, entries in before["state"].items():
        for key, value in entries.items():
            np.testing.assert_array_equal(after["state"][index][key], value)


# ----- learning-rate schedules ------------------------------------------------------------
SCHEDULERS = [
    ("LambdaLR", {"lr_lambda": lambda step: 0.9 ** step + 0.01 * (step % 3)}),
    ("LinearLR", {"start_factor": 0.1, "total_iters": 7}),
    ("LinearLR", {"start_factor": 1.0, "end_factor": 0.2, "total_iters": 5}),
    ("CosineAnnealingLR", {"T_max": 12, "eta_min": 0.001}),
    ("CosineAnnealingLR", {"T_max": 5}),
]


@pytest.mark.parametrize("name, options", SCHEDULERS)
def test_scheduler_matches_torch(name, options):
    groups = [{"params": [nn.Parameter(np.zeros(2))]}, {"params": [nn.Parameter(np.zeros(1))],
                                                         "lr": 0.3}]
    groups_t = [{"params": [torch.zeros(2, requires_grad=True)]},
                {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.3}]
    opt, opt_t = optim.SGD(groups, lr=0.1), torch.optim.SGD(groups_t, lr=0.1)
    scheduler = getattr(optim.lr_scheduler, name)(opt, **options)
    scheduler_t = getattr(torch.optim.lr_scheduler, name)(opt_t, **options)
    steps = options.get("T_max", 20)            # torch's recursive cosine: one half period
    for step in range(steps + 1):
        ours = [g["lr"] for g in opt.param_groups]
        theirs = [g["lr"] for g in opt_t.param_groups]
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15, err_msg=f"step {step}")
        assert scheduler.get_last_lr() == ours
        opt.step()
        opt_t.step()
        scheduler.step()
        scheduler_t.step()


def test_lambda_lr_takes_one_function_per_group_and_resumes_from_state_dict():
    groups = [{"params": [nn.Parameter(np.zeros(1))]}, {"params": [nn.Parameter(np.zeros(1))]}]
    opt = optim.SGD(groups, lr=1.0)
    lambdas = [lambda s: 1 / (s + 1), lambda s: 2.0 ** -s]
    scheduler = optim.lr_scheduler.LambdaLR(opt, lambdas)
    for _ in range(4):
        scheduler.step()
    assert scheduler.get_last_lr() == [1 / 5, 2.0 ** -4]
    saved = scheduler.state_dict()
    opt2 = optim.SGD([{"params": [nn.Parameter(np.zeros(1))]},
                      {"params": [nn.Parameter(np.zeros(1))]}], lr=1.0)
    resumed = optim.lr_scheduler.LambdaLR(opt2, lambdas)
    resumed.load_state_dict(saved)
    assert [g["lr"] for g in opt2.param_groups] == [1 / 5, 2.0 ** -4]
    resumed.step()
    scheduler.step()
    assert resumed.get_last_lr() == scheduler.get_last_lr()
    with pytest.raises(ValueError, match="list of 2 functions"):
        optim.lr_scheduler.LambdaLR(opt, [lambdas[0]])
    with pytest.raises(TypeError, match="optimizer must be an optim.Optimizer"):
        optim.lr_scheduler.CosineAnnealingLR(object(), 3)
    with pytest.raises(ValueError, match="T_max must be a positive int"):
        optim.lr_scheduler.CosineAnnealingLR(opt, 0)



@pytest.mark.parametrize("base_lrs", [["x"], [None], [-1.0], [True]])
def test_scheduler_refuses_bad_base_lrs_and_changes_nothing(base_lrs):
    opt = optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(opt, 10)
    scheduler.step()
    before = scheduler.state_dict(), opt.param_groups[0]["lr"], scheduler.get_last_lr()
    with pytest.raises(ValueError, match="base_lrs must be numbers >= 0"):
        scheduler.load_state_dict({"last_epoch": 3, "base_lrs": base_lrs})
    assert (scheduler.state_dict(), opt.param_groups[0]["lr"],
            scheduler.get_last_lr()) == before


def test_a_schedule_function_that_raises_changes_nothing():
    opt = optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    scheduler = optim.lr_scheduler.LambdaLR(opt, lambda step: 1 / (2 - step))
    scheduler.step()
    with pytest.raises(ZeroDivisionError):
        scheduler.step()
    assert scheduler.last_epoch == 1 and opt.param_groups[0]["lr"] == 0.1
    with pytest.raises(ZeroDivisionError):
        scheduler.load_state_dict({"last_epoch": 2, "base_lrs": [0.2]})
    assert scheduler.state_dict() == {"last_epoch": 1, "base_lrs": [0.1]}


def test_warmup_cosine_ramps_then_decays_to_the_floor():
    f = warmup_cosine(warmup_steps=4, total_steps=14, min_factor=0.1)
    assert [f(s) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert f(4) == 1.0
    assert f(9) == pytest.approx(0.1 + 0.9 * 0.5)                     # half way: cos = 0
    assert f(14) == pytest.approx(0.1) and f(100) == pytest.approx(0.1)
    decay = [f(s) for s in range(4, 15)]
    assert all(a > b for a, b in zip(decay, decay[1:]))
    assert warmup_cosine(0, 10)(0) == 1.0
    with pytest.raises(ValueError, match="warmup_steps must be an int in"):
        warmup_cosine(10, 10)


def test_the_training_loop_follows_its_schedule(monkeypatch):
    used, step = [], optim.AdamW.step

    def recording_step(self):                   # the rate each optimizer step runs with
        used.append(self.param_groups[0]["lr"])
        step(self)

    monkeypatch.setattr(optim.AdamW, "step", recording_step)
    result = tiny_gpt(6, d_model=8, n_layers=1, context_length=8, lr=0.01,
                      lr_schedule="cosine", warmup_steps=2, min_lr=0.001)
    f = warmup_cosine(2, 6, 0.1)
    assert used == pytest.approx([0.01 * f(s) for s in range(6)])
    model_lr = 0.01 * f(6)                      # the rate after the last scheduler.step()
    assert result.config.lr_schedule == "cosine"
    assert model_lr == pytest.approx(0.001)
    with pytest.raises(ValueError, match="lr_schedule must be one of"):
        train.TrainConfig(steps=1, lr_schedule="step")
    with pytest.raises(ValueError, match="grad_accum_steps must be an int >= 1"):
        train.TrainConfig(steps=1, grad_accum_steps=0)


def test_a_cosine_schedule_with_lr_zero_trains_at_rate_zero():
    kwargs = {"d_model": 8, "n_layers": 1, "context_length": 8, "batch_size": 4, "lr": 0.0}
    result = tiny_gpt(2, lr_schedule="cosine", **kwargs)
    constant = tiny_gpt(2, **kwargs)
    assert result.losses == constant.losses
    for key, value in constant.model.state_dict().items():
        np.testing.assert_array_equal(result.model.state_dict()[key], value)


@pytest.mark.parametrize("steps, options", [(0, {}), (3, {"warmup_steps": 3}),
                                            (9, {"warmup_steps": 4, "lr_decay_steps": 4})])
def test_a_cosine_ending_before_its_warmup_names_the_options_of_train(steps, options):
    with pytest.raises(ValueError, match="TrainConfig: the cosine schedule needs "
                                         "warmup_steps < lr_decay_steps"):
        train.TrainConfig(steps=steps, lr_schedule="cosine", **options)


@pytest.mark.parametrize("option, value, message", [
    ("warmup_steps", -1, "warmup_steps must be an int >= 0"),
    ("lr_decay_steps", 0, "lr_decay_steps must be an int >= 1"),
    ("min_lr", -1.0, "min_lr must be a number >= 0"),
    ("min_lr", float("nan"), "min_lr must be a number >= 0"),
    ("min_lr", 0.01, r"min_lr must be in \[0, lr=0.003\]"),
])
def test_schedule_options_are_checked_even_when_the_schedule_is_constant(option, value,
                                                                         message):
    """A value that the constant schedule would not use is still refused, not kept."""
    with pytest.raises(ValueError, match=message):
        train.TrainConfig(steps=1, **{option: value})


def test_a_checkpoint_path_that_cannot_be_written_is_refused_before_step_0(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    folder = tmp_path / "run.npz"
    folder.mkdir()
    for path, message in ((afile / "x.npz", "does not exist or is not a folder"),
                          (folder, "is a directory")):
        with pytest.raises(ValueError, match=message) as error:
            tiny_gpt(1, checkpoint=str(path))
        assert str(path) in str(error.value)


@pytest.mark.parametrize("command, option, value", [
    ("train", "--warmup-steps", "-1"), ("train", "--lr-decay-steps", "0"),
    ("train", "--min-lr", "-1"), ("train", "--grad-accum-steps", "0"),
    ("train", "--checkpoint-every", "-2"), ("train", "--multiple-of", "0"),
    ("memory", "--batch-size", "0"), ("memory", "--layers", "0"), ("memory", "--vocab", "0"),
])
def test_cli_refuses_bad_counts_before_any_work(command, option, value, tmp_path, capsys):
    from microgradnorm import cli
    with pytest.raises(SystemExit) as exit_info:
        cli.main([command, option, value, "--out" if command == "memory" else "--sample",
                  str(tmp_path / "out") if command == "memory" else "0"])
    assert exit_info.value.code == 2
    assert option in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# ----- gradient accumulation --------------------------------------------------------------
def test_gradient_accumulation_equals_one_large_batch():
    """Two micro-batches of 4 with losses scaled by 1/2 give the gradient of the batch of 8:
    the same windows, since drawing 4 + 4 start positions is the same stream as 8."""
    kwargs = {"d_model": 8, "n_layers": 1, "context_length": 8, "seed": 2}
    big = tiny_gpt(3, batch_size=8, **kwargs)
    accumulated = tiny_gpt(3, batch_size=4, grad_accum_steps=2, **kwargs)
    np.testing.assert_allclose(accumulated.losses, big.losses, rtol=1e-12)
    for key, value in big.model.state_dict().items():
        np.testing.assert_allclose(accumulated.model.state_dict()[key], value, rtol=1e-10,
                                   atol=1e-12, err_msg=key)
    single = tiny_gpt(3, batch_size=4, **kwargs)
    assert single.losses[1] != accumulated.losses[1]        # it does see more windows


# ----- checkpoints ------------------------------------------------------------------------
@pytest.mark.parametrize("impl", ["fused", "composite"])
def test_run_stopped_at_k_and_resumed_ends_bitwise_at_2k(impl, tmp_path):
    k = 4
    kwargs = {"impl": impl, "d_model": 16, "n_layers": 2,
              "context_length": 8, "batch_size": 4, "seed": 5, "lr_schedule": "cosine",
              "warmup_steps": 2, "min_lr": 3e-4, "lr_decay_steps": 2 * k,
              "grad_accum_steps": 2, "weight_decay": 0.1}
    straight = tiny_gpt(2 * k, **kwargs)
    path = tmp_path / "run.npz"
    first = tiny_gpt(k, checkpoint=path, **kwargs)
    np.random.seed(999)                    # whatever runs in between moves the global state
    resumed = tiny_gpt(2 * k, resume=path, **kwargs)
    assert resumed.start_step == k
    assert resumed.losses[:k] == first.losses
    assert resumed.losses == straight.losses
    for key, value in straight.model.state_dict().items():
        np.testing.assert_array_equal(resumed.model.state_dict()[key], value, err_msg=key)


def test_resuming_a_different_run_is_a_clear_error(tmp_path):
    kwargs = {"d_model": 8, "n_layers": 1, "context_length": 8, "batch_size": 4,
              "lr_schedule": "cosine"}
    path = tmp_path / "run.npz"
    tiny_gpt(2, checkpoint=path, lr_decay_steps=4, **kwargs)
    with pytest.raises(ValueError, match=r"lr=0.003 in the checkpoint, 0.01 now"):
        tiny_gpt(4, resume=path, lr_decay_steps=4, **{**kwargs, "lr": 0.01})
    with pytest.raises(ValueError, match="the cosine ends at step 4 in the checkpoint, 6 now"):
        tiny_gpt(6, resume=path, **kwargs)
    assert tiny_gpt(4, resume=path, lr_decay_steps=4, impl="composite",
                    **kwargs).start_step == 2


def test_resuming_a_different_run_names_the_option_and_changes_no_random_state(tmp_path):
    import random
    kwargs = {"d_model": 8, "n_layers": 1, "context_length": 8, "batch_size": 4}
    path = tmp_path / "run.npz"
    tiny_gpt(2, checkpoint=path, **kwargs)
    random.seed(5)
    before = random.getstate()
    with pytest.raises(ValueError, match="lr=0.003 in the checkpoint, 0.01 now"):
        tiny_gpt(4, resume=path, **{**kwargs, "lr": 0.01})
    assert random.getstate() == before
    with pytest.raises(ValueError, match="d_model=8 in the checkpoint, 16 now"):
        tiny_gpt(4, resume=path, **{**kwargs, "d_model": 16})
    with pytest.raises(ValueError, match="warmup_steps=0 in the checkpoint, 2 now"):
        tiny_gpt(4, resume=path, **{**kwargs, "warmup_steps": 2})

def test_checkpoint_restores_every_random_state_and_rejects_a_mismatch(tmp_path):
    import random
    np.random.seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))
    opt = optim.AdamW(model.parameters(), lr=0.1)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(opt, 10)
    rng = np.random.default_rng(7)
    model(mg.tensor(np.ones((2, 3)))).sum().backward()
    opt.step()
    scheduler.step()
    path = save_checkpoint(tmp_path / "c", model, opt, step=1, scheduler=scheduler, rng=rng,
                           extra={"note": "x"})
    assert path.endswith("c.npz")
    expected = (np.random.random(), random.random(), rng.random(),
                model(mg.tensor(np.ones((2, 3)))).data.copy())    # dropout draws too

    np.random.seed(1)
    other = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))
    other_opt = optim.AdamW(other.parameters(), lr=0.5)
    other_scheduler = optim.lr_scheduler.CosineAnnealingLR(other_opt, 10)
    other_rng = np.random.default_rng(8)
    loaded = load_checkpoint(path, other, other_opt, other_scheduler, other_rng)
    assert loaded.step == 1 and loaded.extra == {"note": "x"}
    assert other_opt.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    got = (np.random.random(), random.random(), other_rng.random(),
           other(mg.tensor(np.ones((2, 3)))).data)
    assert got[:3] == expected[:3]
    np.testing.assert_array_equal(got[3], expected[3])

    wrong = nn.Sequential(nn.Linear(3, 5), nn.Dropout(0.5), nn.Linear(5, 2))
    before = wrong.state_dict()
    state = np.random.get_state(legacy=False)
    with pytest.raises(ValueError, match="expected shape"):
        load_checkpoint(path, wrong, optim.AdamW(wrong.parameters()))
    with pytest.raises(ValueError, match="holds AdamW, got a SGD"):
        load_checkpoint(path, other, optim.SGD(other.parameters()))
    for key, value in before.items():
        np.testing.assert_array_equal(wrong.state_dict()[key], value)
    assert np.random.get_state(legacy=False)["state"]["pos"] == state["state"]["pos"]


def test_checkpoint_failing_optimizer_leaves_the_model_unchanged(tmp_path):
    np.random.seed(0)
    model = nn.Linear(2, 2)
    opt = optim.Adam(model.parameters())
    model(mg.tensor(np.ones((1, 2)))).sum().backward()
    opt.step()
    path = save_checkpoint(tmp_path / "c.npz", model, opt, step=1)
    target = nn.Linear(2, 2)
    before = target.state_dict()
    bad_opt = optim.Adam([target.weight])            # one parameter fewer than saved
    with pytest.raises(ValueError, match="parameters in state_dict"):
        load_checkpoint(path, target, bad_opt)
    for key, value in before.items():
        np.testing.assert_array_equal(target.state_dict()[key], value)



@pytest.mark.parametrize("bit_generator", [np.random.MT19937, np.random.Philox,
                                           np.random.SFC64, np.random.PCG64DXSM])
def test_checkpoint_stores_a_generator_of_any_bit_generator(bit_generator, tmp_path):
    model = nn.Linear(2, 2)
    rng = np.random.Generator(bit_generator(3))
    rng.random(5)
    path = save_checkpoint(tmp_path / "c.npz", model, rng=rng)
    expected = rng.random(4)
    other = np.random.Generator(bit_generator(4))
    load_checkpoint(path, model, rng=other)
    np.testing.assert_array_equal(other.random(4), expected)


def test_checkpoint_of_another_bit_generator_is_refused_before_anything_loads(tmp_path):
    np.random.seed(0)
    path = save_checkpoint(tmp_path / "c.npz", nn.Linear(2, 2), rng=np.random.default_rng(1))
    np.random.seed(5)
    other = nn.Linear(2, 2)
    before, numpy_state = other.state_dict(), np.random.get_state(legacy=False)
    rng = np.random.Generator(np.random.MT19937(0))
    with pytest.raises(ValueError, match="holds the state of a PCG64 generator, rng uses "
                                         "MT19937"):
        load_checkpoint(path, other, rng=rng)
    for key, value in before.items():
        np.testing.assert_array_equal(other.state_dict()[key], value)
    assert np.random.get_state(legacy=False)["state"]["pos"] == numpy_state["state"]["pos"]
    assert rng.random() == np.random.Generator(np.random.MT19937(0)).random()


def test_checkpoint_of_numpy_scalar_options_saves_them_and_blames_only_extra(tmp_path):
    model = nn.Linear(2, 2)
    opt = optim.Adam(model.parameters(), lr=np.float32(0.01), betas=(np.float32(0.9), 0.99))
    path = save_checkpoint(tmp_path / "c.npz", model, opt)
    other = optim.Adam(model.parameters())
    load_checkpoint(path, model, other)
    assert other.param_groups[0]["lr"] == np.float32(0.01)
    assert other.param_groups[0]["betas"] == (np.float32(0.9), 0.99)
    path = save_checkpoint(tmp_path / "e.npz", model, opt,
                           extra={"loss": np.float32(1.5), "seen": np.arange(2)})
    assert load_checkpoint(path, model, opt).extra == {"loss": 1.5, "seen": [0, 1]}
    with pytest.raises(TypeError, match="extra must be JSON-compatible"):
        save_checkpoint(tmp_path / "d.npz", model, opt, extra={"loss": object()})
    assert not (tmp_path / "d.npz").exists()


def test_train_saves_a_checkpoint_with_numpy_number_options(tmp_path):
    path = tmp_path / "run.npz"
    kwargs = {"lr": np.float32(1e-3), "d_model": 8, "n_layers": 1, "n_heads": 2,
              "context_length": 4, "batch_size": 2}
    tiny_gpt(1, checkpoint=path, **kwargs)
    assert read_extra(path)["config"]["lr"] == np.float32(1e-3)
    tiny_gpt(2, resume=path, **kwargs)                                  # the same run


@pytest.mark.parametrize("damage", ["truncate", "not_a_zip", "npy", "huge_header",
                                    "bad_meta"])
def test_a_damaged_checkpoint_is_one_error_naming_the_file(damage, tmp_path):
    model = nn.Linear(2, 2)
    path = save_checkpoint(tmp_path / "c.npz", model, extra={"k": 1})
    if damage == "truncate":
        data = Path(path).read_bytes()
        Path(path).write_bytes(data[: len(data) // 2])
    elif damage == "not_a_zip":
        Path(path).write_bytes(b"hello")
    elif damage == "npy":
        np.save(path, np.ones(2))
        os.replace(path + ".npy" if not str(path).endswith(".npy") else path, path)
    elif damage == "huge_header":
        np.savez(path, meta=np.ones(2))
        _claim_huge(path)
    else:
        np.savez(path, meta=np.array("{not json"))
    before = model.weight.data.copy()
    for read in (lambda: load_checkpoint(path, model), lambda: read_extra(path)):
        with pytest.raises(ValueError, match=str(path).replace(".", r"\.")):
            read()
    assert np.array_equal(model.weight.data, before)


def _claim_huge(path):
    # rewrite the one member's header to claim 100000 x 100000 float64
    with zipfile.ZipFile(path) as archive:
        (name,) = archive.namelist()
    header = {"descr": "<f8", "fortran_order": False, "shape": (100000, 100000)}
    buffer = io.BytesIO()
    np_format.write_array_header_1_0(buffer, header)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(name, buffer.getvalue() + b"\0" * 16)

# ----- saving survives a kill -------------------------------------------------------------
KILLED_SAVE = textwrap.dedent("""
    import sys, time
    import numpy as np
    import numpy.lib.format as fmt
    sys.path.insert(0, {root!r})
    from microgradnorm import nn
    from microgradnorm.checkpoint import save_checkpoint

    write_array = fmt.write_array
    def slow_write_array(*args, **kwargs):        # write the first array, then hang
        write_array(*args, **kwargs)
        args[0].flush() if hasattr(args[0], "flush") else None
        print("writing", flush=True)
        time.sleep(60)
    fmt.write_array = slow_write_array
    model = nn.Linear(300, 300)
    if {how!r} == "checkpoint":
        save_checkpoint({path!r}, model, step=2)
    elif {how!r} == "nn.save":
        nn.save(model, {path!r})
    else:
        np.savez({path!r}, **model.state_dict())  # what nn.save did before: in place
""")


def _kill_while_saving(path, how):
    code = KILLED_SAVE.format(root=str(ROOT), path=str(path), how=how)
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "writing"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("how", ["checkpoint", "nn.save"])
def test_a_save_killed_mid_write_leaves_the_previous_file_loadable(how, tmp_path):
    np.random.seed(0)
    model = nn.Linear(300, 300)
    path = tmp_path / "last.npz"
    if how == "checkpoint":
        save_checkpoint(path, model, step=1)
    else:
        nn.save(model, path)
    _kill_while_saving(path, how)
    partial = [p for p in tmp_path.iterdir() if p.name != "last.npz"]
    assert len(partial) == 1 and partial[0].name.startswith(".last.npz.")
    assert partial[0].stat().st_size > 0                      # the kill hit a real write
    restored = nn.Linear(300, 300)
    if how == "checkpoint":
        assert load_checkpoint(path, restored).step == 1
    else:
        restored.load_state_dict(nn.load(path))
    np.testing.assert_array_equal(restored.weight.data, model.weight.data)


def test_an_in_place_save_killed_mid_write_destroys_the_file(tmp_path):
    """The failure the atomic save prevents: np.savez straight over the old file."""
    np.random.seed(0)
    path = tmp_path / "last.npz"
    nn.save(nn.Linear(300, 300), path)
    _kill_while_saving(path, "np.savez")
    with pytest.raises(Exception):                           # noqa: B017 (zip or npy error)
        nn.load(path)


@pytest.mark.parametrize("how", ["checkpoint", "nn.save"])
def test_a_failed_save_names_the_path_asked_for_not_the_temporary(how, tmp_path):
    path = tmp_path / "missing" / "run.npz"
    with pytest.raises(FileNotFoundError) as error:
        if how == "checkpoint":
            save_checkpoint(path, nn.Linear(2, 2))
        else:
            nn.save(nn.Linear(2, 2), path)
    assert str(path) in str(error.value) and ".tmp" not in str(error.value)
    (tmp_path / "dir.npz").mkdir()                  # os.replace onto a directory fails
    with pytest.raises(OSError) as error:
        save_checkpoint(tmp_path / "dir.npz", nn.Linear(2, 2))
    assert "dir.npz" in str(error.value) and ".tmp" not in str(error.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.npz"]


def test_an_interrupted_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path,
                                                                        monkeypatch):
    import numpy.lib.format as fmt
    path = tmp_path / "m.npz"
    nn.save({"w": np.ones(3)}, path)
    write_array = fmt.write_array
    calls = []

    def interrupted(*args, **kwargs):                       # Ctrl-C after the first array
        if calls:
            raise KeyboardInterrupt
        calls.append(1)
        write_array(*args, **kwargs)

    monkeypatch.setattr(fmt, "write_array", interrupted)
    with pytest.raises(KeyboardInterrupt):
        nn.save({"w": np.zeros(3), "v": np.zeros(2)}, path)
    assert calls and sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    monkeypatch.undo()
    np.testing.assert_array_equal(nn.load(path)["w"], np.ones(3))


# ----- SwiGLU -----------------------------------------------------------------------------
class TorchSwiGLU(torch.nn.Module):
    """LLaMA's FeedForward, written from its definition."""

    def __init__(self, dim, hidden_dim, multiple_of):
        super().__init__()
        hidden_dim = int(2 * hidden_dim / 3)
        hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
        self.w1 = torch.nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = torch.nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = torch.nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)) * self.w3(x))


@pytest.mark.parametrize("d_model, hidden, multiple_of", [(16, None, 8), (12, 40, 16),
                                                          (8, None, 256)])
def test_swiglu_matches_llama_feedforward_in_torch(d_model, hidden, multiple_of):
    np.random.seed(0)
    ff = nn.FeedForward(d_model, hidden, activation="swiglu", multiple_of=multiple_of)
    ref = TorchSwiGLU(d_model, 4 * d_model if hidden is None else hidden, multiple_of).double()
    assert ff.hidden == ref.w1.out_features
    assert [n for n, _ in ff.named_parameters()] == ["fc1.weight", "fc3.weight", "fc2.weight"]
    with torch.no_grad():
        for ours, theirs in ((ff.fc1, ref.w1), (ff.fc2, ref.w2), (ff.fc3, ref.w3)):
            theirs.weight.copy_(torch.tensor(ours.weight.data))
    x = np.random.randn(2, 5, d_model)
    dy = np.random.randn(2, 5, d_model)
    xm = mg.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    y, yt = ff(xm), ref(xt)
    np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=1e-12, atol=1e-13)
    y.backward(dy)
    yt.backward(torch.tensor(dy))
    np.testing.assert_allclose(xm.grad, xt.grad.numpy(), rtol=1e-12, atol=1e-13)
    for ours, theirs in ((ff.fc1, ref.w1), (ff.fc2, ref.w2), (ff.fc3, ref.w3)):
        np.testing.assert_allclose(ours.weight.grad, theirs.weight.grad.numpy(), rtol=1e-12,
                                   atol=1e-13)


def test_swiglu_hidden_follows_llama():
    assert nn.swiglu_hidden(4 * 4096) == 11008                  # LLaMA-7B
    assert nn.swiglu_hidden(4 * 5120) == 13824                  # LLaMA-13B
    assert nn.swiglu_hidden(4 * 32, multiple_of=8) == 88
    with pytest.raises(ValueError, match="activation"):
        nn.FeedForward(8, activation="geglu")
    with pytest.raises(ValueError, match="multiple_of"):
        nn.FeedForward(8, activation="swiglu", multiple_of=0)
    for bad in (0, -8):
        with pytest.raises(ValueError, match="swiglu_hidden: multiple_of must be a positive"):
            nn.swiglu_hidden(128, multiple_of=bad)
    with pytest.raises(TypeError, match="swiglu_hidden: multiple_of must be an int"):
        nn.swiglu_hidden(128, multiple_of=2.5)
    with pytest.raises(ValueError, match="swiglu_hidden: hidden must be a positive int"):
        nn.swiglu_hidden(0)


def test_gpt_with_swiglu_trains_and_deepnorm_scales_the_gate():
    result = tiny_gpt(15, d_model=16, n_layers=1, context_length=8, activation="swiglu",
                      lr=1e-2)
    assert result.losses[-1] < result.losses[0] - 0.3
    assert "fc3" in dict(result.model.blocks[0].mlp.named_modules())
    np.random.seed(0)
    plain = nn.TransformerBlock(8, 2, activation="swiglu", n_layers=4)
    np.random.seed(0)
    deep = nn.TransformerBlock(8, 2, activation="swiglu", placement="deepnorm", n_layers=4)
    beta = nn.deepnorm_constants(4)[1]
    np.testing.assert_allclose(deep.mlp.fc3.weight.data, beta * plain.mlp.fc3.weight.data)


def test_train_command_resumes_from_its_checkpoint(tmp_path):
    common = ["--d-model", "8", "--layers", "1", "--context", "8", "--batch-size", "4",
              "--lr-schedule", "cosine", "--warmup-steps", "2", "--lr-decay-steps", "6",
              "--grad-accum-steps", "2", "--no-progress", "--sample", "0"]
    path = str(tmp_path / "run.npz")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args):
        out = subprocess.run([sys.executable, "-m", "microgradnorm", "train", *common, *args],
                             capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout

    straight = run("--steps", "6")
    run("--steps", "3", "--checkpoint", path)
    resumed = run("--steps", "6", "--resume", path)
    assert "resumed from" in resumed and "at step 3" in resumed
    # "loss <first> -> <last> in 6 steps": the same numbers, printed to 4 decimals
    assert straight.split(" in 6 steps")[0].split("\n")[-1] == \
        resumed.split(" in 6 steps")[0].split("\n")[-1]


def test_half_precision_optimizer_state_resumes_bitwise_in_float32():
    """float16 parameters keep float32 moments and master copies; a resume keeps them."""
    def make():
        return [nn.Parameter(p.data.astype(np.float16)) for p in make_params()]
    targets = [t.data.astype(np.float16) * 0.5 for t in make_params(1)]
    straight = make()
    opt = optim.AdamW(straight, lr=1e-2, master_weights=True)
    run_steps(opt, straight, targets, 4)
    first = make()
    opt_first = optim.AdamW(first, lr=1e-2, master_weights=True)
    run_steps(opt_first, first, targets, 2)
    saved = opt_first.state_dict()
    assert saved["state"][0]["exp_avg"].dtype == saved["state"][0]["master"].dtype == np.float32
    resumed = [nn.Parameter(p.data.copy()) for p in first]
    opt_resumed = optim.AdamW(resumed, lr=1e-2, master_weights=True)
    opt_resumed.load_state_dict(saved)
    assert opt_resumed.state[id(resumed[0])]["master"].dtype == np.float32
    run_steps(opt_resumed, resumed, targets, 2)
    for a, b in zip(straight, resumed):
        np.testing.assert_array_equal(a.data, b.data)


HALF_DTYPES = ["float16", pytest.param("bfloat16", marks=pytest.mark.skipif(
    not mg.dtypes.has_bfloat16(), reason="bfloat16 needs ml_dtypes"))]


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_half_precision_checkpoint_and_save_round_trip_bitwise(tmp_path, dtype):
    dtype = mg.dtypes.as_dtype(dtype)

    def make(seed):
        np.random.seed(seed)
        return nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2)).to(dtype=dtype)

    model = make(0)
    opt = optim.AdamW(model.parameters(), lr=0.1)
    model(mg.tensor(np.ones((2, 3)), dtype=dtype)).sum().backward()
    opt.step()
    path = save_checkpoint(tmp_path / "c.npz", model, opt, step=1)
    other = make(1)
    other_opt = optim.AdamW(other.parameters(), lr=0.1)
    load_checkpoint(path, other, other_opt)
    for (key, want), got in zip(model.state_dict().items(), other.state_dict().values()):
        assert got.dtype == want.dtype == dtype, key
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))  # bitwise
    want_state, got_state = opt.state_dict()["state"], other_opt.state_dict()["state"]
    for index, entries in want_state.items():
        for name, value in entries.items():
            value, got = np.asarray(value), np.asarray(got_state[index][name])
            assert got.dtype == value.dtype, (index, name)
            assert got.tobytes() == value.tobytes(), (index, name)

    saved = tmp_path / "m.npz"
    nn.save(model, saved)
    loaded = nn.load(saved)
    assert all(loaded[key].dtype == dtype for key in model.state_dict())
    with np.load(saved, allow_pickle=False) as raw:             # .npz itself: no void dtype
        assert all(raw[key].dtype.kind != "V" for key in raw.files)
        if dtype == mg.dtypes.bfloat16:
            assert raw["0.weight"].dtype == np.uint16 and "__dtypes__" in raw.files
        else:
            assert "__dtypes__" not in raw.files
    fresh = make(2)
    fresh.load_state_dict(loaded)
    for key, want in model.state_dict().items():
        assert fresh.state_dict()[key].tobytes() == want.tobytes(), key


def test_save_rejects_the_reserved_dtype_record_name(tmp_path):
    with pytest.raises(ValueError, match="reserved"):
        nn.save({"__dtypes__": np.ones(2)}, tmp_path / "x.npz")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("d_model, hidden, multiple_of", [(32, None, 8), (32, None, 256),
                                                          (24, 40, 16), (16, None, 1)])
def test_multiple_of_reaches_every_block_of_gpt_as_in_llama(d_model, hidden, multiple_of):
    want = TorchSwiGLU(d_model, 4 * d_model if hidden is None else hidden,
                       multiple_of).w1.out_features                  # LLaMA's formula
    model = nn.GPT(11, 4, d_model, 4, 3, hidden=hidden, activation="swiglu",
                   multiple_of=multiple_of)
    assert [block.mlp.hidden for block in model.blocks] == [want] * 3
    assert [block.mlp.fc3.weight.shape for block in model.blocks] == [(want, d_model)] * 3
    block = nn.TransformerBlock(d_model, 4, hidden=hidden, activation="swiglu",
                                multiple_of=multiple_of)
    assert block.mlp.fc2.weight.shape == (d_model, want)
    gelu = nn.GPT(11, 4, d_model, 4, 1, hidden=hidden, multiple_of=multiple_of)
    assert gelu.blocks[0].mlp.hidden == (4 * d_model if hidden is None else hidden)


def test_multiple_of_in_train_and_its_command(tmp_path):
    default = nn.GPT(11, 4, 32, 4, 1, activation="swiglu")
    assert default.blocks[0].mlp.hidden == 256                   # LLaMA's rounding, unchanged
    result = tiny_gpt(2, d_model=32, n_layers=1, context_length=8, activation="swiglu",
                      multiple_of=8)
    assert result.model.blocks[0].mlp.hidden == 88 and result.config.multiple_of == 8
    for bad, error in ((0, ValueError), (-8, ValueError), (2.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="multiple_of must be a"):
            nn.GPT(11, 4, 32, 4, 1, activation="swiglu", multiple_of=bad)
    path = str(tmp_path / "run.npz")
    tiny_gpt(1, d_model=8, n_layers=1, context_length=8, activation="swiglu", multiple_of=8,
             checkpoint=path)
    with pytest.raises(ValueError, match="multiple_of=8 in the checkpoint, 4 now"):
        tiny_gpt(2, d_model=8, n_layers=1, context_length=8, activation="swiglu",
                 multiple_of=4, resume=path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    counts = []
    for multiple_of in ("8", "256"):
        out = subprocess.run([sys.executable, "-m", "microgradnorm", "train", "--steps", "1",
                              "--d-model", "32", "--layers", "1", "--context", "8",
                              "--activation", "swiglu", "--multiple-of", multiple_of,
                              "--no-progress", "--sample", "0"],
                             capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        counts.append(int(out.stdout.split(" parameters")[0].split()[-1].replace(",", "")))
    assert counts[1] - counts[0] == 3 * 32 * (256 - 88)          # three Linears, no bias


def test_a_lying_dtype_record_is_refused(tmp_path):
    import json
    import zipfile
    path = tmp_path / "m.npz"
    np.savez(path, w=np.ones(2), __dtypes__=np.array(json.dumps({"w": "bfloat16"})))
    with pytest.raises(ValueError, match="only uint16 arrays recorded as 'bfloat16'"):
        nn.load(path)
    np.savez(path, w=np.ones(2, np.uint16), __dtypes__=np.array('["w"]'))
    with pytest.raises(ValueError, match="not a mapping"):
        nn.load(path)
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["__dtypes__.npy", "w.npy"]

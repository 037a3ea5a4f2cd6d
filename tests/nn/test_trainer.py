"""What a toy-transformer trainer expects: optimizer state dicts, learning-rate schedules
against torch.optim.lr_scheduler, gradient accumulation, half-precision states, and LLaMA's
SwiGLU feed-forward against torch (checkpoints: tests/tools/test_checkpoints.py)."""

import copy
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn, optim, train
from microgradnorm.checkpoint import load_checkpoint, save_checkpoint
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
    resumed = [nn.Parameter(p.detach().clone()) for p in first]
    opt_resumed = getattr(optim, name)(resumed, lr=123.0)     # options come from the state
    opt_resumed.load_state_dict(saved)
    run_steps(opt_resumed, resumed, targets, 3)
    for a, b in zip(params, resumed):
        np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize("name, options", OPTIMIZERS)
def test_optimizer_state_dict_matches_torch_layout_and_values(name, options):
    targets = [t.data for t in make_params(1)]
    params = make_params()
    params_t = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in params]
    opt = getattr(optim, name)(params, **options)
    opt_t = getattr(torch.optim, name)(params_t, **options)
    run_steps(opt, params, targets, 3)
    for _ in range(3):
        opt_t.zero_grad()
        loss_of(params_t, [torch.tensor(t.numpy()) for t in targets]).backward()
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


def test_optimizer_state_dict_shares_the_state_and_copies_the_options():
    # as torch's: the state's Tensors themselves (a deepcopy is a snapshot), the groups copied
    params = make_params()
    opt = optim.Adam(params)
    run_steps(opt, params, [p.data for p in make_params(1)], 1)
    saved = opt.state_dict()
    snapshot = copy.deepcopy(saved)
    saved["state"][0]["exp_avg"][...] = 99
    saved["param_groups"][0]["betas"] = (0.1, 0.2)
    assert (opt.state[id(params[0])]["exp_avg"] == 99).all()
    assert not (snapshot["state"][0]["exp_avg"] == 99).any()
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
    before = scheduler.state_dict()
    with pytest.raises(ZeroDivisionError):
        scheduler.load_state_dict({"last_epoch": 2, "base_lrs": [0.2]})
    assert scheduler.state_dict() == before
    assert (before["last_epoch"], before["base_lrs"], before["_step_count"]) == (1, [0.1], 2)


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
    ff = nn.FeedForward(d_model, hidden, activation="swiglu", multiple_of=multiple_of).double()
    ref = TorchSwiGLU(d_model, 4 * d_model if hidden is None else hidden, multiple_of).double()
    assert ff.hidden == ref.w1.out_features
    assert [n for n, _ in ff.named_parameters()] == ["fc1.weight", "fc3.weight", "fc2.weight"]
    with torch.no_grad():
        for ours, theirs in ((ff.fc1, ref.w1), (ff.fc2, ref.w2), (ff.fc3, ref.w3)):
            theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
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
    mg.manual_seed(0)
    plain = nn.TransformerBlock(8, 2, activation="swiglu", n_layers=4)
    mg.manual_seed(0)
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
    resumed = [nn.Parameter(p.detach().clone()) for p in first]
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
        assert got.dtype == want.dtype == dtype, key  # bitwise below
        np.testing.assert_array_equal(got.numpy().view(np.uint16), want.numpy().view(np.uint16))
    want_state, got_state = opt.state_dict()["state"], other_opt.state_dict()["state"]
    for index, entries in want_state.items():
        for name, value in entries.items():
            value, got = np.asarray(value), np.asarray(got_state[index][name])
            assert got.dtype == value.dtype, (index, name)
            assert got.tobytes() == value.tobytes(), (index, name)

    saved = tmp_path / "m.npz"
    nn.save(model.state_dict(), saved)
    loaded = nn.load(saved)
    assert all(loaded[key].dtype == dtype for key in model.state_dict())
    with np.load(saved, allow_pickle=False) as raw:             # .npz itself: no void dtype
        assert all(raw[key].dtype.kind != "V" for key in raw.files)
        # bfloat16, which .npy can't name, as its uint16 bits, named in the JSON record
        bits = np.uint16 if dtype == mg.dtypes.bfloat16 else dtype
        assert raw["0.weight"].dtype == bits
        assert b'"dtype":"%s"' % str(dtype).encode() in raw["__structure__"].tobytes()
    fresh = make(2)
    fresh.load_state_dict(loaded)
    for key, want in model.state_dict().items():
        assert fresh.state_dict()[key].numpy().tobytes() == want.numpy().tobytes(), key


def test_a_key_named_like_a_record_is_an_array_like_any_other(tmp_path):
    # the structure record is a member of its own; a key never takes its name
    state = {"__dtypes__": np.ones(2), "__structure__": np.zeros(3)}
    nn.save(state, tmp_path / "x.npz")
    loaded = nn.load(tmp_path / "x.npz")
    assert sorted(loaded) == sorted(state)
    np.testing.assert_array_equal(loaded["__structure__"], np.zeros(3))


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
    path = tmp_path / "m.npz"
    np.savez(path, w=np.ones(2), __dtypes__=np.array(json.dumps({"w": "bfloat16"})))
    with pytest.raises(ValueError, match="only uint16 arrays recorded as 'bfloat16'"):
        nn.load(path)
    np.savez(path, w=np.ones(2, np.uint16), __dtypes__=np.array('["w"]'))
    with pytest.raises(ValueError, match="not a mapping"):
        nn.load(path)
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["__dtypes__.npy", "w.npy"]

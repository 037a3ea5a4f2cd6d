"""Train a tiny character-level GPT on the Zen of Python: the loop behind ``microgradnorm
train`` and the examples (docs/training.md)."""

import codecs
import contextlib
import dataclasses
import io
import math
import numbers
import os
import statistics
import sys
import time

import numpy as np

from . import functional as F
from . import nn, optim
from .autograd import no_grad
from .checkpoint import load_checkpoint, read_extra, save_checkpoint
from .checks.memory import memory_timeline
from .checks.stats import graph_stats
from .dtypes import check_number
from .factories import manual_seed
from .optim.lr_scheduler import LambdaLR, warmup_cosine
from .norms import lookup
from .savefile import check_writable

__all__ = ["CharTokenizer", "Diverged", "ImplComparison", "Progress", "TrainConfig",
           "TrainResult", "compare_impls", "gpt_step_timeline", "sample", "train_tiny_gpt",
           "zen_of_python"]


class Progress:
    """tqdm's bar on a terminal or notebook; in a log, one line ``"<desc>: <summary>"`` at
    ``close(summary)``; nothing when not ``enabled``."""

    def __init__(self, iterable, desc, enabled=True):
        from tqdm.auto import tqdm

        self.desc = desc
        # disable=None: tqdm turns itself off when its stream is not a terminal.
        self.bar = tqdm(iterable, desc=desc, disable=None if enabled else True, leave=False)
        self.summarize = bool(enabled and self.bar.disable)

    def __iter__(self):
        return iter(self.bar)

    def set_postfix(self, **values):
        """Show ``values`` after the bar (no effect without a bar)."""
        self.bar.set_postfix(**values)

    def close(self, summary):
        """Remove the bar; without one, write ``summary`` as one line to stderr."""
        self.bar.close()
        if self.summarize:
            print(f"{self.desc}: {summary}", file=sys.stderr, flush=True)


def zen_of_python():
    """The Zen of Python (PEP 20) as a string, from the standard library's ``this``."""
    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return codecs.decode(this.s, "rot13")


class CharTokenizer:
    """Characters ↔ integer ids, the vocabulary being the sorted set of ``text``'s chars."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    @property
    def vocab_size(self):
        """The number of distinct characters (ids are 0 .. vocab_size - 1)."""
        return len(self.chars)

    def encode(self, text):
        """``text`` as int64 ids, shape (len(text),); an unknown character: ValueError."""
        unknown = sorted(set(text) - self.index.keys())
        if unknown:
            raise ValueError(f"encode: characters not in the vocabulary: {unknown}")
        return np.array([self.index[c] for c in text], dtype=np.int64)

    def decode(self, ids):
        """The string of the characters with ids ``ids`` (any iterable of ints)."""
        return "".join(self.chars[int(i)] for i in ids)


LR_SCHEDULES = ("constant", "cosine")


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """Every option of one ``train_tiny_gpt`` run, checked when it is built.

    Example:
        >>> config = TrainConfig(steps=200, norm="rms_norm", lr_schedule="cosine")
    """

    steps: int = 300                # optimizer steps
    impl: str = "fused"             # "fused" or "composite", for every norm of the model
    dtype: str = "float64"          # of the parameters: "float64", "float32", "float16"
    seed: int = 0                   # initial weights (mg.manual_seed) and batches
    norm: str = "layer_norm"        # nn.GPT's norm, placement, sizes and init
    placement: str = "pre"          # "pre", "post", "sandwich" or "deepnorm"
    d_model: int = 32               # model width
    n_heads: int = 4                # attention heads per block
    n_layers: int = 2               # transformer blocks
    context_length: int = 32        # characters per training window
    init: str = "gpt2"              # "gpt2" or "xavier"
    activation: str = "gelu"        # "gelu" or LLaMA's "swiglu"
    multiple_of: int = 256          # swiglu's inner width rounding (nn.swiglu_hidden)
    batch_size: int = 16            # windows per micro-batch
    lr: float = 3e-3                # AdamW's learning rate
    weight_decay: float = 0.0       # AdamW's decoupled weight decay
    grad_clip: float | None = 1.0   # the largest gradient norm kept (None: no clipping)
    lr_schedule: str = "constant"   # "constant" or "cosine" (warmup_cosine in a LambdaLR)
    warmup_steps: int = 0           # linear warmup steps
    min_lr: float = 0.0             # the cosine's final rate
    lr_decay_steps: int | None = None   # where the cosine ends (None: at steps)
    grad_accum_steps: int = 1       # micro-batches per step, their gradients added up
    text: str | None = None         # at least context_length + 2 characters (None: the Zen)
    device: str = "cpu"             # "cpu" or "cuda"
    checkpoint: str | None = None   # where the run is saved (save_checkpoint)
    checkpoint_every: int = 0       # save every this many steps (0: at the end only)
    resume: str | None = None       # a checkpoint to go on from, bitwise as an unbroken run

    def __post_init__(self):
        # every option is checked, used or not; the norm is kept under its canonical name
        object.__setattr__(self, "norm", lookup(self.norm, "TrainConfig: norm", nn.NORMS).name)
        counts = {"steps": 0, "seed": 0, "context_length": 1, "batch_size": 1,
                  "grad_accum_steps": 1, "checkpoint_every": 0, "warmup_steps": 0}
        if self.lr_decay_steps is not None:
            counts["lr_decay_steps"] = 1
        for name, low in counts.items():
            value = getattr(self, name)
            check_number("TrainConfig", name, value, integer=True)
            if value < low:
                raise ValueError(f"TrainConfig: {name} must be an int >= {low}, got {value!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"TrainConfig: lr_schedule must be one of {LR_SCHEDULES}, got "
                             f"{self.lr_schedule!r}")
        check_number("TrainConfig", "min_lr", self.min_lr)
        if not self.min_lr >= 0:
            raise ValueError(f"TrainConfig: min_lr must be a number >= 0, got {self.min_lr!r}")
        if isinstance(self.lr, numbers.Real) and self.min_lr > self.lr:  # a bad lr: AdamW's
            raise ValueError(f"TrainConfig: min_lr must be in [0, lr={self.lr}], got "
                             f"{self.min_lr!r}")
        if self.lr_schedule == "cosine" and not self.warmup_steps < _decay_end(vars(self)):
            raise ValueError(f"TrainConfig: the cosine schedule needs warmup_steps < "
                             f"lr_decay_steps (default: steps), got warmup_steps="
                             f"{self.warmup_steps}, lr_decay_steps={self.lr_decay_steps}, "
                             f"steps={self.steps}")
        if not isinstance(self.training_text, str):
            raise TypeError(f"TrainConfig: text must be a str or None, got "
                            f"{type(self.text).__name__}")
        if self.grad_clip is not None:
            check_number("TrainConfig", "grad_clip", self.grad_clip)
            if not self.grad_clip >= 0:
                raise ValueError(f"TrainConfig: grad_clip must be a number >= 0 or None, got "
                                 f"{self.grad_clip!r}")
        if not 0 <= self.seed < 2**32:                # NumPy's seeds: 0 .. 2**32 - 1
            raise ValueError(f"TrainConfig: seed must be an int in [0, 2**32 - 1], got "
                             f"{self.seed!r}")
        for name in ("checkpoint", "resume"):
            if not isinstance(getattr(self, name), (str, os.PathLike, type(None))):
                raise TypeError(f"TrainConfig: {name} must be a path (str) or None, got "
                                f"{type(getattr(self, name)).__name__}")

    def check_text(self):
        """The text is long enough for one window of ``context_length + 1`` characters and
        its next one; checked by the loop that trains on it (``memory`` uses no text)."""
        if len(self.training_text) < self.context_length + 2:
            raise ValueError(f"TrainConfig: text must have at least context_length + 2 = "
                             f"{self.context_length + 2} characters, got "
                             f"{len(self.training_text)}")

    @property
    def training_text(self):
        """``text``, or the Zen of Python when it is None."""
        return zen_of_python() if self.text is None else self.text


def _decay_end(config):
    """The step where the cosine ends, of a config's fields as a dict (or a saved one)."""
    return config.get("lr_decay_steps") or config.get("steps")


@dataclasses.dataclass
class TrainResult:
    """What ``train_tiny_gpt`` returns; ``seconds_per_step`` is the median step time."""

    losses: list                # training loss per step, len(losses) == steps
    step_seconds: list          # wall time of each step run (forward, backward, optimizer)
    graph_nodes: int            # op nodes behind the first step's loss (mg.graph_stats)
    saved_bytes: int            # the bytes those nodes saved for backward
    model: nn.GPT               # the trained model
    tokenizer: CharTokenizer
    config: TrainConfig
    start_step: int = 0         # the step a resumed run started from
    saved_step: int | None = None   # the step of the last checkpoint this run wrote

    @property
    def seconds_per_step(self):
        """The median wall time of one step (forward, backward, update), in seconds."""
        return statistics.median(self.step_seconds) if self.step_seconds else float("nan")

    def sample(self, prompt="", length=200, temperature=1.0, seed=0):
        """``length`` characters sampled from the trained model after ``prompt``
        (see the module-level ``sample``)."""
        return sample(self.model, self.tokenizer, prompt, length, temperature, seed)


class Diverged(FloatingPointError):
    """The loss or the weights of a training step became NaN or infinite; the step was not
    saved, so the last checkpoint holds the last finite weights."""


def train_tiny_gpt(config=None, progress=True):
    """Train a character-level ``nn.GPT`` with AdamW as ``config`` (None: the defaults)
    says; returns a ``TrainResult``. ``progress``: a bar, or one line in a log.

    Example:
        >>> result = train_tiny_gpt(TrainConfig(steps=50), progress=False)
    """
    config = _check_config("train_tiny_gpt", config)
    config.check_text()
    if config.checkpoint is not None:
        check_writable(config.checkpoint)          # before step 0, not after the whole run
    tokenizer = CharTokenizer(config.training_text)
    data = tokenizer.encode(config.training_text)
    model, optimizer = _model_and_optimizer(config, tokenizer.vocab_size)
    scheduler = _make_scheduler(optimizer, config)
    rng = np.random.default_rng(config.seed)
    losses, step_seconds, stats, start_step, saved_step = [], [], None, 0, None
    if config.resume is not None:
        # compared first, so the error names the option that differs, not a weight shape
        _check_same_run(config.resume, read_extra(config.resume).get("config", {}), config)
        saved = load_checkpoint(config.resume, model, optimizer, scheduler=scheduler, rng=rng)
        if saved.step > config.steps:
            raise ValueError(f"train_tiny_gpt: resume={config.resume} is at step {saved.step}, "
                             f"past steps={config.steps}")
        start_step, losses = saved.step, list(saved.extra.get("losses", []))[:saved.step]
    steps, accum, T = config.steps, config.grad_accum_steps, config.context_length
    # the run, for a resumption to compare with (not its text or where its files are)
    saved_config = {k: v for k, v in vars(config).items()
                    if k not in ("text", "checkpoint", "resume")}
    bar = Progress(range(start_step, steps), f"train {config.impl}", enabled=progress)
    for step in bar:
        start = time.perf_counter()
        optimizer.zero_grad()
        loss_sum = 0.0
        for _ in range(accum):
            starts = rng.integers(0, len(data) - T - 1, size=config.batch_size)
            windows = np.stack([data[s:s + T + 1] for s in starts])     # (B, T+1)
            logits = model(windows[:, :-1])                                 # (B, T, V)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),   # (B·T, V)
                                   windows[:, 1:].reshape(-1), impl=config.impl)
            if stats is None:
                stats = graph_stats(loss)
            if accum > 1:
                loss = loss * (1.0 / accum)               # the gradients add up to the mean
            loss.backward()
            loss_sum += float(loss.item())
        if not math.isfinite(loss_sum):               # before the update: keep finite weights
            raise Diverged(f"train_tiny_gpt: the loss at step {step + 1} is {loss_sum}; "
                           f"stopped before updating{_kept(config, saved_step)} (lower lr?)")
        if config.grad_clip is not None:
            nn.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        step_seconds.append(time.perf_counter() - start)
        losses.append(loss_sum)
        bar.set_postfix(loss=f"{losses[-1]:.4f}")
        every = config.checkpoint_every
        if config.checkpoint is not None and (step + 1 == steps or (
                every and (step + 1) % every == 0)):
            if not all(np.isfinite(p.detach().numpy()).all() for p in model.parameters()):
                raise Diverged(f"train_tiny_gpt: step {step + 1} made the weights NaN or "
                               f"infinite; not saved{_kept(config, saved_step)} (lower lr?)")
            save_checkpoint(config.checkpoint, model, optimizer, step + 1, scheduler, rng,
                            extra={"config": saved_config, "losses": losses})
            saved_step = step + 1
    if len(losses) > start_step:
        done = f"{steps} steps" if not start_step else f"steps {start_step + 1}-{steps}"
        bar.close(f"{done}, loss {losses[start_step]:.4f} -> {losses[-1]:.4f}, "
                  f"{sum(step_seconds):.1f} s")
    else:
        bar.close("0 steps")
    return TrainResult(losses, step_seconds, stats.nodes if stats else 0,
                       stats.saved_bytes if stats else 0, model, tokenizer, config, start_step,
                       saved_step)


def _kept(config, saved_step):
    """What a diverged run leaves on disk, for its error."""
    if config.checkpoint is None:
        return ""
    if saved_step is None:
        return f"; {config.checkpoint} was not written by this run"
    return f"; {config.checkpoint} keeps step {saved_step}"


def _check_config(where, config):
    """``config``, or the default ``TrainConfig`` for None."""
    if config is None:
        return TrainConfig()
    if not isinstance(config, TrainConfig):
        raise TypeError(f"{where}: config must be a TrainConfig or None, got "
                        f"{type(config).__name__}")
    return config


def _model_and_optimizer(config, vocab_size):
    """The run's ``nn.GPT`` (initial weights drawn from ``config.seed``) and its AdamW."""
    manual_seed(config.seed)                      # the default generator: the weights
    model = nn.GPT(vocab_size, config.context_length, config.d_model, config.n_heads,
                   config.n_layers, norm=config.norm, placement=config.placement,
                   impl=config.impl, init=config.init, dtype=config.dtype,
                   device=config.device, activation=config.activation,
                   multiple_of=config.multiple_of)
    optimizer = optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    return model, optimizer


def _make_scheduler(optimizer, config):
    """None for a constant rate without warmup (the plain AdamW run); else a LambdaLR."""
    warmup, lr = config.warmup_steps, config.lr
    if config.lr_schedule == "constant" and not warmup:
        return None
    if config.lr_schedule == "cosine":
        floor = config.min_lr / lr if lr else 0.0          # lr = 0: every factor gives 0
        return LambdaLR(optimizer, warmup_cosine(warmup, _decay_end(vars(config)), floor))
    return LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))


# may differ on resumption: impl and device change rounding only; the rest say where files go
_FREE_ON_RESUME = ("steps", "impl", "device", "lr_decay_steps", "text", "checkpoint",
                   "checkpoint_every", "resume")


def _check_same_run(path, saved, config):
    """A resumed run must be the run that was saved, or it would not continue it."""
    # an option a checkpoint lacks was added later: that run had its default; a norm saved
    # under an older spelling ("layernorm") is the same norm
    if not isinstance(saved, dict):
        raise ValueError(f"train_tiny_gpt: resume={path}: its extra field 'config' must be "
                         f"a JSON object, got {type(saved).__name__}")
    defaults = {field.name: field.default for field in dataclasses.fields(TrainConfig)}
    if isinstance(saved.get("norm"), str):
        saved = {**saved, "norm": lookup(saved["norm"], f"{path}: the checkpoint's norm").name}
    changed = [f"{key}={saved.get(key, defaults[key])!r} in the checkpoint, {value!r} now"
               for key, value in vars(config).items()
               if key not in _FREE_ON_RESUME and saved.get(key, defaults[key]) != value]
    if config.lr_schedule == "cosine" and _decay_end(saved) != _decay_end(vars(config)):
        changed.append(f"the cosine ends at step {_decay_end(saved)} in the checkpoint, "
                       f"{_decay_end(vars(config))} now (pass the same lr_decay_steps)")
    if changed:
        raise ValueError(f"train_tiny_gpt: resume={path} was saved by a different run: "
                         + "; ".join(changed))


@dataclasses.dataclass
class ImplComparison:
    """Two runs of ``train_tiny_gpt`` that differ only in ``impl``."""

    composite: TrainResult
    fused: TrainResult
    max_loss_diff: float        # max over steps of |loss composite - loss fused|


def compare_impls(config=None, progress=True):
    """Train ``config``'s run (same seed, weights and batches) with composite and with fused
    norms; in float64 the loss curves agree to rounding."""
    config = _check_config("compare_impls", config)
    runs = {impl: train_tiny_gpt(dataclasses.replace(config, impl=impl), progress)
            for impl in ("composite", "fused")}
    diffs = [abs(a - b) for a, b in zip(runs["composite"].losses, runs["fused"].losses)]
    return ImplComparison(runs["composite"], runs["fused"], max(diffs, default=0.0))


def gpt_step_timeline(config=None, vocab_size=32, trace=False):
    """The ``mg.memory_timeline`` of one AdamW step of ``config``'s model on random ids,
    after a first step that creates the optimizer's state."""
    config = _check_config("gpt_step_timeline", config)
    model, optimizer = _model_and_optimizer(config, vocab_size)
    shape = (config.batch_size, config.context_length + 1)
    batch = np.random.default_rng(config.seed).integers(0, vocab_size, size=shape)

    def step():
        optimizer.zero_grad()
        logits = model(batch[:, :-1])                                       # (B, T, V)
        loss = F.cross_entropy(logits.reshape(-1, vocab_size), batch[:, 1:].reshape(-1),
                               impl=config.impl)
        loss.backward()
        optimizer.step()

    step()
    return memory_timeline(step, trace=trace)


def sample(model, tokenizer, prompt="", length=200, temperature=1.0, seed=0):
    """``length`` characters after ``prompt``, each drawn from softmax(logits / temperature)."""
    if temperature <= 0:
        raise ValueError(f"sample: temperature must be positive, got {temperature!r}")
    rng = np.random.default_rng(seed)
    ids = list(tokenizer.encode(prompt)) if prompt else [int(rng.integers(tokenizer.vocab_size))]
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            for _ in range(length):
                window = np.array([ids[-model.context_length:]], dtype=np.int64)     # (1, T)
                logits = model(window).numpy()[0, -1].astype(np.float64) / temperature
                probs = np.exp(logits - logits.max())
                ids.append(int(rng.choice(len(probs), p=probs / probs.sum())))
    finally:
        model.train(was_training)
    return tokenizer.decode(ids)

"""Train a tiny character-level GPT: the loop behind ``microgradnorm train``,
``examples/tiny_gpt.py``, ``examples/composite_vs_fused.py`` and the demo.

    from microgradnorm.train import train_tiny_gpt
    result = train_tiny_gpt(steps=200, impl="fused")
    print(result.losses[-1], result.sample("Beautiful", length=80))

The text is the Zen of Python (PEP 20), which ships with every Python as the ``this``
module. Same ``seed`` ⇒ same initial weights and same batches, so two runs that differ only
in ``impl`` differ only by floating-point rounding.
"""

import codecs
import contextlib
import dataclasses
import io
import numbers
import statistics
import sys
import time

import numpy as np

from . import functional as F
from . import nn, optim
from .autograd import no_grad
from .checkpoint import load_checkpoint, read_extra, save_checkpoint
from .checks.stats import graph_stats
from .dtypes import check_number
from .lr_scheduler import LambdaLR, warmup_cosine
from .savefile import check_writable

__all__ = ["CharTokenizer", "ImplComparison", "Progress", "TrainResult", "compare_impls",
           "sample", "train_tiny_gpt", "zen_of_python"]


class Progress:
    """A progress bar that stays out of logs: tqdm's bar when ``enabled`` and stderr is a
    terminal (or in a notebook); otherwise no bar, and ``close(summary)`` writes one line,
    ``"<desc>: <summary>"``, to stderr instead (nothing at all when not ``enabled``).

    Example:
        >>> bar = Progress(range(100), "train", enabled=True)
        >>> for step in bar:
        ...     bar.set_postfix(loss=f"{0.5:.4f}")
        >>> bar.close("100 steps, loss 3.8 -> 0.5")     # in a log: "train: 100 steps, ..."
    """

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
    """The Zen of Python as a string (decoded from the ``this`` module, which prints it when
    first imported; that print is swallowed)."""
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
        """``text`` as an int64 array of ids, shape (len(text),); an unknown character is a
        ValueError."""
        unknown = sorted(set(text) - self.index.keys())
        if unknown:
            raise ValueError(f"encode: characters not in the vocabulary: {unknown}")
        return np.array([self.index[c] for c in text], dtype=np.int64)

    def decode(self, ids):
        """The string of the characters with ids ``ids`` (any iterable of ints)."""
        return "".join(self.chars[int(i)] for i in ids)


@dataclasses.dataclass
class TrainResult:
    """What ``train_tiny_gpt`` returns.

    Attributes:
        losses: training loss per step (floats), ``len(losses) == steps``.
        step_seconds: wall time of each step (forward, backward, optimizer).
        seconds_per_step: median of ``step_seconds``.
        graph_nodes, saved_bytes: op nodes behind the first step's loss and the bytes they
            saved for backward (``mg.graph_stats``).
        model, tokenizer: the trained model and its tokenizer.
        config: the arguments of the run.
    """

    losses: list
    step_seconds: list
    graph_nodes: int
    saved_bytes: int
    model: nn.GPT
    tokenizer: CharTokenizer
    config: dict

    @property
    def seconds_per_step(self):
        """The median wall time of one step (forward, backward, update), in seconds."""
        return statistics.median(self.step_seconds) if self.step_seconds else float("nan")

    def sample(self, prompt="", length=200, temperature=1.0, seed=0):
        """``length`` characters sampled from the trained model after ``prompt``
        (see the module-level ``sample``)."""
        return sample(self.model, self.tokenizer, prompt, length, temperature, seed)


def train_tiny_gpt(steps=300, impl="fused", dtype="float64", seed=0, progress=True, *,
                   norm="layernorm", placement="pre", d_model=32, n_heads=4, n_layers=2,
                   context_length=32, batch_size=16, lr=3e-3, weight_decay=0.0,
                   grad_clip=1.0, init="gpt2", text=None, device="cpu", activation="gelu",
                   lr_schedule="constant", warmup_steps=0, min_lr=0.0, lr_decay_steps=None,
                   grad_accum_steps=1, checkpoint=None, checkpoint_every=0, resume=None,
                   multiple_of=256):
    """Train a character-level ``nn.GPT`` on ``text`` (the Zen of Python by default) with
    AdamW and cross-entropy on next-character prediction.

    Args:
        steps: optimizer steps.
        impl: ``"fused"`` or ``"composite"``, for every norm in the model.
        dtype: ``"float64"``, ``"float32"`` or ``"float16"`` parameters.
        seed: initial weights (via ``np.random.seed``, NumPy's global state) and batches.
        progress: show a tqdm progress bar with the running loss when stderr is a
            terminal; in a log, one summary line instead (see ``Progress``).
        norm, placement, d_model, n_heads, n_layers, context_length, init: the model
            (see ``nn.GPT``).
        batch_size, lr, weight_decay: the AdamW run; ``grad_clip``: max gradient norm
            (None for no clipping).
        text: the training text (at least context_length + 2 characters).
        device: ``"cpu"`` or ``"cuda"``.
        activation: of the feed-forward, ``"gelu"`` or ``"swiglu"`` (LLaMA's), ...
        multiple_of: swiglu only, the rounding of the inner width (``nn.swiglu_hidden``):
            LLaMA's 256 by default, which gives d_model 32 an inner width of 256; 8 gives 88.
        lr_schedule: ``"constant"`` or ``"cosine"`` (decay to ``min_lr`` at
            ``lr_decay_steps``, default ``steps``), after a linear warmup over
            ``warmup_steps`` (``optim.lr_scheduler.warmup_cosine`` in a ``LambdaLR``).
        grad_accum_steps: micro-batches of ``batch_size`` per optimizer step; their
            gradients add up (each loss scaled by 1/grad_accum_steps), so one step sees
            ``grad_accum_steps * batch_size`` windows. The recorded loss is their mean.
        checkpoint: a path; model, optimizer, scheduler, step and random states are saved
            there (atomically) every ``checkpoint_every`` steps (0: only at the end).
        resume: a checkpoint path to continue from: the run goes on from its step to
            ``steps`` and ends with the weights an uninterrupted run would have, bitwise.

    Returns:
        a ``TrainResult`` (losses per step, time per step, the model, ...).

    Example:
        >>> fused = train_tiny_gpt(50, impl="fused", progress=False)
        >>> composite = train_tiny_gpt(50, impl="composite", progress=False)
        >>> max(abs(a - b) for a, b in zip(fused.losses, composite.losses))   # ~1e-15
        >>> half = train_tiny_gpt(20, checkpoint="run.npz", lr_decay_steps=40)
        >>> full = train_tiny_gpt(40, resume="run.npz", lr_decay_steps=40)
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"train_tiny_gpt: steps must be a non-negative int, got {steps!r}")
    config = {"steps": steps, "impl": impl, "dtype": dtype, "seed": seed, "norm": norm,
              "placement": placement, "d_model": d_model, "n_heads": n_heads,
              "n_layers": n_layers, "context_length": context_length,
              "batch_size": batch_size, "lr": lr, "weight_decay": weight_decay,
              "grad_clip": grad_clip, "init": init, "device": device, "activation": activation,
              "lr_schedule": lr_schedule, "warmup_steps": warmup_steps, "min_lr": min_lr,
              "lr_decay_steps": lr_decay_steps, "grad_accum_steps": grad_accum_steps,
              "multiple_of": multiple_of}
    _check_training_options(lr_schedule, grad_accum_steps, checkpoint_every, warmup_steps,
                            min_lr, lr_decay_steps, lr, steps)
    if checkpoint is not None:
        check_writable(checkpoint)          # before step 0, not after the whole run
    text = zen_of_python() if text is None else text
    if len(text) < context_length + 2:
        raise ValueError(f"train_tiny_gpt: text must have at least context_length + 2 = "
                         f"{context_length + 2} characters, got {len(text)}")
    tokenizer = CharTokenizer(text)
    data = tokenizer.encode(text)
    np.random.seed(seed)
    model = nn.GPT(tokenizer.vocab_size, context_length, d_model, n_heads, n_layers, norm=norm,
                   placement=placement, impl=impl, init=init, dtype=dtype, device=device,
                   activation=activation, multiple_of=multiple_of)
    optimizer = optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    scheduler = _make_scheduler(optimizer, lr, lr_schedule, warmup_steps, min_lr,
                                lr_decay_steps or steps)
    rng = np.random.default_rng(seed)
    losses, step_seconds, stats, start_step = [], [], None, 0
    if resume is not None:
        # the run is compared first: a different one changes no state, and its error names
        # the option that differs rather than a weight shape or a missing scheduler
        _check_same_run(resume, read_extra(resume).get("config", {}), config)
        saved = load_checkpoint(resume, model, optimizer, scheduler=scheduler, rng=rng)
        start_step, losses = saved.step, list(saved.extra.get("losses", []))[:saved.step]
    config["start_step"] = start_step
    bar = Progress(range(start_step, steps), f"train {impl}", enabled=progress)
    for step in bar:
        start = time.perf_counter()
        optimizer.zero_grad()
        loss_sum = 0.0
        for _ in range(grad_accum_steps):
            starts = rng.integers(0, len(data) - context_length - 1, size=batch_size)
            windows = np.stack([data[s:s + context_length + 1] for s in starts])  # (B, T+1)
            logits = model(windows[:, :-1])                                      # (B, T, V)
            loss = F.cross_entropy(logits, windows[:, 1:])
            if stats is None:
                stats = graph_stats(loss)
            if grad_accum_steps > 1:
                loss = loss * (1.0 / grad_accum_steps)    # the gradients add up to the mean
            loss.backward()
            loss_sum += float(loss.item())
        if grad_clip is not None:
            nn.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        step_seconds.append(time.perf_counter() - start)
        losses.append(loss_sum)
        bar.set_postfix(loss=f"{losses[-1]:.4f}")
        if checkpoint is not None and (step + 1 == steps or (
                checkpoint_every and (step + 1) % checkpoint_every == 0)):
            save_checkpoint(checkpoint, model, optimizer, step + 1, scheduler, rng,
                            extra={"config": config, "losses": losses})
    if len(losses) > start_step:
        done = f"{steps} steps" if not start_step else f"steps {start_step + 1}-{steps}"
        bar.close(f"{done}, loss {losses[start_step]:.4f} -> {losses[-1]:.4f}, "
                  f"{sum(step_seconds):.1f} s")
    else:
        bar.close("0 steps")
    return TrainResult(losses, step_seconds, stats.nodes if stats else 0,
                       stats.saved_bytes if stats else 0, model, tokenizer, config)


LR_SCHEDULES = ("constant", "cosine")


def _check_training_options(lr_schedule, grad_accum_steps, checkpoint_every, warmup_steps,
                            min_lr, lr_decay_steps, lr, steps):
    """Every schedule option is checked, used or not: a bad value is never silently kept."""
    if lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"train_tiny_gpt: lr_schedule must be one of {LR_SCHEDULES}, got "
                         f"{lr_schedule!r}")
    counts = (("grad_accum_steps", grad_accum_steps, 1), ("checkpoint_every", checkpoint_every, 0),
              ("warmup_steps", warmup_steps, 0))
    if lr_decay_steps is not None:
        counts += (("lr_decay_steps", lr_decay_steps, 1),)
    for name, value, low in counts:
        check_number("train_tiny_gpt", name, value, integer=True)
        if value < low:
            raise ValueError(f"train_tiny_gpt: {name} must be an int >= {low}, got {value!r}")
    check_number("train_tiny_gpt", "min_lr", min_lr)
    if not min_lr >= 0:
        raise ValueError(f"train_tiny_gpt: min_lr must be a number >= 0, got {min_lr!r}")
    if isinstance(lr, numbers.Real) and min_lr > lr:          # a bad lr: AdamW names it
        raise ValueError(f"train_tiny_gpt: min_lr must be in [0, lr={lr}], got {min_lr!r}")
    if lr_schedule == "cosine" and not warmup_steps < (lr_decay_steps or steps):
        raise ValueError(f"train_tiny_gpt: the cosine schedule needs warmup_steps < "
                         f"lr_decay_steps (default: steps), got warmup_steps={warmup_steps}, "
                         f"lr_decay_steps={lr_decay_steps}, steps={steps}")


# What must not change between a run and its resumption (impl may: it changes rounding only)
_RUN_KEYS = ("seed", "dtype", "norm", "placement", "d_model", "n_heads", "n_layers",
             "context_length", "batch_size", "lr", "weight_decay", "grad_clip", "init",
             "activation", "lr_schedule", "warmup_steps", "min_lr", "grad_accum_steps",
             "multiple_of")

# Keys a checkpoint written before they existed lacks: it ran with these values
_RUN_DEFAULTS = {"multiple_of": 256}


def _check_same_run(path, saved, config):
    """A resumed run must be the run that was saved, or it would not continue it."""
    def decay_end(c):
        return c.get("lr_decay_steps") or c.get("steps")
    changed = [f"{key}={saved.get(key)!r} in the checkpoint, {config[key]!r} now"
               for key in _RUN_KEYS if saved.get(key, _RUN_DEFAULTS.get(key)) != config[key]]
    if config["lr_schedule"] == "cosine" and decay_end(saved) != decay_end(config):
        changed.append(f"the cosine ends at step {decay_end(saved)} in the checkpoint, "
                       f"{decay_end(config)} now (pass the same lr_decay_steps)")
    if changed:
        raise ValueError(f"train_tiny_gpt: resume={path} was saved by a different run: "
                         + "; ".join(changed))


def _make_scheduler(optimizer, lr, lr_schedule, warmup_steps, min_lr, decay_steps):
    """None for a constant rate without warmup (the plain AdamW run); else a LambdaLR."""
    if lr_schedule == "constant" and not warmup_steps:
        return None
    if lr_schedule == "cosine":
        floor = min_lr / lr if lr else 0.0          # lr = 0: every factor gives rate 0
        return LambdaLR(optimizer, warmup_cosine(warmup_steps, decay_steps, floor))
    return LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup_steps))


@dataclasses.dataclass
class ImplComparison:
    """Two runs of ``train_tiny_gpt`` that differ only in ``impl``.

    Attributes:
        composite, fused: the two ``TrainResult``s.
        max_loss_diff: max over steps of |loss composite - loss fused|.
    """

    composite: TrainResult
    fused: TrainResult
    max_loss_diff: float


def compare_impls(steps=50, dtype="float64", seed=0, progress=True, **options):
    """Train the same tiny GPT (same seed, weights and batches) with composite and with
    fused norms; ``options`` go to ``train_tiny_gpt``. In float64 the loss curves agree to
    about 1e-15 (the tests require <= 1e-8 over 50 steps).

    Example:
        >>> result = compare_impls(50, progress=False)
        >>> result.max_loss_diff <= 1e-8, result.fused.seconds_per_step
    """
    runs = {impl: train_tiny_gpt(steps, impl=impl, dtype=dtype, seed=seed, progress=progress,
                                 **options) for impl in ("composite", "fused")}
    diffs = [abs(a - b) for a, b in zip(runs["composite"].losses, runs["fused"].losses)]
    return ImplComparison(runs["composite"], runs["fused"], max(diffs, default=0.0))


def sample(model, tokenizer, prompt="", length=200, temperature=1.0, seed=0):
    """Generate ``length`` characters after ``prompt`` from ``model`` (in eval mode, no
    graph), drawing each next character from softmax(logits / temperature)."""
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

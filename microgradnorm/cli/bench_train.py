"""``bench --train``: the tiny GPT's training step against the same model in PyTorch, and
the engine's cost per node against PyTorch's per op, both on one thread.

  * ``train_step_comparison(...)`` times one training step (forward, cross-entropy,
    ``zero_grad``, backward, AdamW) of ``nn.GPT`` with fused and with composite norms and
    of ``TorchGPT``, the same architecture written in PyTorch, in turns.
  * ``engine_comparison(...)`` times a chain of tiny ops (forward + backward) in both
    engines and divides by the node count.
  * ``model_file_comparison(...)`` times a model file written for PyTorch
    (``pytorch_style_gpt.py``, nanoGPT's idiom) run here with only its imports changed and
    under PyTorch, next to ``nn.GPT`` and ``torch_gpt``, in float64 and float32.
  * ``scaling_sweep(...)`` repeats the step comparison over d_model and context length;
    ``plot_scaling`` draws it.
  * ``single_thread()`` pins NumPy's BLAS (through ``threadpoolctl`` when it is installed)
    and PyTorch to one thread for the duration of a ``with`` block.

NumPy's ufuncs always run on one thread; its BLAS (OpenBLAS) and PyTorch's intra-op pool
use every core unless told otherwise, so a fair comparison pins both.
"""

import contextlib
import dataclasses
import math
import pathlib
import types

import numpy as np

from .. import backend, nn, optim
from ..capture import capture
from ..checks.stats import graph_stats
from ..factories import manual_seed
from ..functional import cross_entropy
from ..tensor import tensor
from .bench_harness import (UNSTEADY, cpu_timer, fused_impls, graph_impl, kernel_choice,
                            time_interleaved, torch_available, unsteady)
from .common import load_every_blas

TRAIN_SIZES = (                   # (d_model, n_layers, context_length, batch_size)
    (64, 2, 64, 16),
    (128, 4, 128, 16),
)
SWEEP_D_MODEL = (32, 64, 128, 256)
SWEEP_CONTEXT = (32, 64, 128, 256)
QUICK_SIZES = ((16, 1, 8, 2),)          # --quick: seconds, for a smoke test
QUICK_SWEEP = (8, 16)
PLOT_NAME = "train_step_scaling.png"


# ----- threads ------------------------------------------------------------------------------
@contextlib.contextmanager
def single_thread():
    """Run the block with NumPy's BLAS and PyTorch on one thread each; yields a short text
    naming the thread counts in force (BLAS "unchanged" when threadpoolctl is missing)."""
    with contextlib.ExitStack() as stack:
        blas = "unchanged (threadpoolctl not installed)"
        try:
            import threadpoolctl
        except ImportError:
            pass
        else:
            load_every_blas()
            stack.enter_context(threadpoolctl.threadpool_limits(1, user_api="blas"))
            infos = threadpoolctl.threadpool_info()
            blas = ", ".join(f"{i['internal_api']} {i.get('architecture', '')} "
                             f"{i['num_threads']} thread(s)" for i in infos
                             if i["user_api"] == "blas") or "none found"
        torch_threads = "torch not installed"
        try:
            import torch
        except ImportError:
            pass
        else:
            previous = torch.get_num_threads()
            torch.set_num_threads(1)
            stack.callback(torch.set_num_threads, previous)
            torch_threads = f"torch {torch.get_num_threads()} thread"
        yield f"numpy BLAS: {blas}; {torch_threads}"


# ----- the same GPT in PyTorch --------------------------------------------------------------
def torch_gpt(vocab_size, context_length, d_model, n_heads, n_layers, dtype="float32"):
    """``nn.GPT``'s default architecture (pre-norm LayerNorm blocks, one qkv Linear,
    explicit causal softmax attention, GELU-tanh feed-forward of 4·d_model, final norm,
    bias-free LM head) written in PyTorch, initialised as ``nn.GPT`` (N(0, 0.02²))."""
    import torch
    import torch.nn as tnn
    import torch.nn.functional as TF

    class Block(tnn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = tnn.LayerNorm(d_model), tnn.LayerNorm(d_model)
            self.qkv = tnn.Linear(d_model, 3 * d_model)
            self.proj = tnn.Linear(d_model, d_model)
            self.fc1 = tnn.Linear(d_model, 4 * d_model)
            self.fc2 = tnn.Linear(4 * d_model, d_model)
            self.register_buffer("mask", torch.triu(
                torch.full((context_length, context_length), -math.inf), diagonal=1))

        def attention(self, x):
            B, T, C = x.shape
            H, D = n_heads, C // n_heads
            q, k, v = (t.reshape(B, T, H, D).transpose(1, 2)          # each (B, H, T, D)
                       for t in self.qkv(x).split(C, dim=-1))
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))   # (B, H, T, T)
            att = TF.softmax(scores + self.mask[:T, :T], dim=-1)
            return self.proj((att @ v).transpose(1, 2).reshape(B, T, C))

        def forward(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.fc2(TF.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class GPT(tnn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = tnn.Embedding(vocab_size, d_model)
            self.pos_emb = tnn.Embedding(context_length, d_model)
            self.blocks = tnn.ModuleList(Block() for _ in range(n_layers))
            self.ln_f = tnn.LayerNorm(d_model)
            self.lm_head = tnn.Linear(d_model, vocab_size, bias=False)
            for module in self.modules():
                if isinstance(module, (tnn.Linear, tnn.Embedding)):
                    tnn.init.normal_(module.weight, 0.0, 0.02)
                if isinstance(module, tnn.Linear) and module.bias is not None:
                    tnn.init.zeros_(module.bias)

        def forward(self, idx):
            T = idx.shape[1]
            x = self.tok_emb(idx) + self.pos_emb(torch.arange(T))
            for block in self.blocks:
                x = block(x)
            return self.lm_head(self.ln_f(x))

    return GPT().to(getattr(torch, dtype))


# ----- the training step --------------------------------------------------------------------
def gpt_training_step(impl, vocab_size, context_length, d_model, n_heads, n_layers,
                      batch_size, dtype="float64", seed=0, device="cpu"):
    """One training step of ``nn.GPT`` on random tokens, ready to time: forward,
    cross-entropy, ``zero_grad``, backward and an AdamW update. Weights and tokens come from
    ``seed``. ``impl="captured"`` is the fused step with its forward and cross-entropy
    under ``mg.capture`` (its first two calls record, the later ones replay). Returns ``(step,
    nodes)``: the callable and the op nodes behind its loss (1 when captured)."""
    captured = impl == "captured"
    impl = "fused" if captured else impl
    manual_seed(seed)                                                    # the weights
    model = nn.GPT(vocab_size, context_length, d_model, n_heads, n_layers,
                   impl=graph_impl(impl), dtype=dtype, device=device)
    optimizer = optim.AdamW(model.parameters(), lr=1e-3)
    tokens = np.random.default_rng(seed).integers(0, vocab_size,
                                                  (batch_size, context_length + 1))
    inputs, targets = tokens[:, :-1], tokens[:, 1:].reshape(-1)         # (B, T), (B·T,)

    def loss_of(idx, target):
        return cross_entropy(model(idx).reshape(-1, vocab_size), target,
                             impl=graph_impl(impl))

    loss_fn = capture(loss_of) if captured else loss_of

    def step():
        with kernel_choice(impl):
            loss = loss_fn(inputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    with kernel_choice(impl):
        return step, graph_stats(loss_fn(inputs, targets)).nodes


@dataclasses.dataclass(frozen=True)
class TrainStepResult:
    """One configuration's step timings, {impl: Timing}, impl in "fused", "captured",
    "composite", "torch"; ``nodes`` is microgradnorm's op-node count per step for each of
    its impls (1 for "captured": the step's one node)."""

    d_model: int
    n_layers: int
    context_length: int
    batch_size: int
    dtype: str
    timings: dict
    nodes: dict

    def median_ms(self, impl):
        return self.timings[impl].median * 1e3

    def vs_torch(self, impl):
        """Our step time / PyTorch's (below 1: faster than PyTorch)."""
        return self.timings[impl].median / self.timings["torch"].median


def _torch_step(vocab_size, context_length, d_model, n_heads, n_layers, batch_size, dtype,
                seed):
    import torch
    import torch.nn.functional as TF

    torch.manual_seed(seed)
    model = torch_gpt(vocab_size, context_length, d_model, n_heads, n_layers, dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.from_numpy(np.random.default_rng(seed).integers(
        0, vocab_size, (batch_size, context_length + 1)))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    def step():
        logits = model(inputs)
        loss = TF.cross_entropy(logits.reshape(-1, vocab_size), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def train_step_comparison(d_model=64, n_layers=2, context_length=64, batch_size=16,
                          n_heads=4, vocab_size=64, dtype="float32",
                          impls=("fused", "composite", "torch"), repeat=9, warmup=2, seed=0,
                          timer=None):
    """Time one training step of ``nn.GPT`` (``impl`` "fused" and "composite" norms, and
    "captured": the fused step replayed by ``mg.capture``) and of ``torch_gpt`` on the same
    sizes, in turns; run it inside ``single_thread()`` for the one-thread comparison.

    ``timer``: as in ``time_call`` (``cpu_timer`` on a shared machine).

    Returns:
        a ``TrainStepResult``.

    Example:
        >>> with single_thread():
        ...     r = train_step_comparison(64, 2, 64, 16)
        >>> r.vs_torch("fused")        # < 1: faster than PyTorch
    """
    sizes = (vocab_size, context_length, d_model, n_heads, n_layers, batch_size, dtype, seed)
    steps, nodes = {}, {}
    for impl in impls:
        if impl == "torch":
            steps[impl] = _torch_step(*sizes)
        else:
            steps[impl], nodes[impl] = gpt_training_step(impl, *sizes)
    timings = time_interleaved(steps, repeat, warmup, timer=timer)
    return TrainStepResult(d_model, n_layers, context_length, batch_size, dtype, timings,
                           nodes)


# ----- a PyTorch model file, run here and under PyTorch -----------------------------------
MODEL_FILE = pathlib.Path(__file__).with_name("pytorch_style_gpt.py")
TORCH_IMPORTS = {"import microgradnorm as torch": "import torch",
                 "import microgradnorm.nn as nn": "import torch.nn as nn",
                 "from microgradnorm.nn import functional as F":
                     "from torch.nn import functional as F"}
FILE_DTYPES = ("float64", "float32")


def load_model_file(under_torch):
    """``pytorch_style_gpt.py`` as a fresh module: as it is, or with PyTorch's three imports
    in place of ours (``under_torch``); nothing else in the file changes."""
    source = MODEL_FILE.read_text()
    if under_torch:
        for ours, theirs in TORCH_IMPORTS.items():
            assert source.count(ours) == 1, ours
            source = source.replace(ours, theirs)
    module = types.ModuleType("pytorch_style_gpt_torch" if under_torch else "pytorch_style_gpt")
    exec(compile(source, str(MODEL_FILE), "exec"), module.__dict__)
    return module


def model_file_step(under_torch, vocab_size, context_length, d_model, n_heads, n_layers,
                    batch_size, dtype="float32", seed=0):
    """One training step of the model file's GPT (nanoGPT's flash attention path, its
    AdamW parameter groups), here or under PyTorch: forward with the loss, backward, step."""
    module = load_model_file(under_torch)
    lib = module.torch                          # microgradnorm or torch, as the file sees it
    lib.manual_seed(seed)                       # torch's, or ours: the same CPU stream
    config = module.GPTConfig(block_size=context_length, vocab_size=vocab_size,
                              n_layer=n_layers, n_head=n_heads, n_embd=d_model, flash=True)
    model = module.GPT(config).to(getattr(lib, dtype))
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
    tokens = np.random.default_rng(seed).integers(0, vocab_size,
                                                  (batch_size, context_length + 1))
    idx, targets = lib.tensor(tokens[:, :-1]), lib.tensor(tokens[:, 1:])

    def step():
        _, loss = model(idx, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def model_file_comparison(d_model=64, n_layers=2, context_length=64, batch_size=16,
                          n_heads=4, vocab_size=64, dtypes=FILE_DTYPES, repeat=9, warmup=2,
                          seed=0, timer=None):
    """Time, per dtype and in turns, the model file's step here ("file") and under PyTorch
    ("file torch"), and ``nn.GPT`` ("gpt", fused) and ``torch_gpt`` ("gpt torch"); run it
    inside ``single_thread()``. Returns {dtype: {name: Timing}}."""
    sizes = (vocab_size, context_length, d_model, n_heads, n_layers, batch_size)
    timings = {}
    for dtype in dtypes:
        steps = {"file": model_file_step(False, *sizes, dtype, seed),
                 "file torch": model_file_step(True, *sizes, dtype, seed),
                 "gpt": gpt_training_step("fused", *sizes, dtype, seed)[0],
                 "gpt torch": _torch_step(*sizes, dtype, seed)}
        timings[dtype] = time_interleaved(steps, repeat, warmup, timer=timer)
    return timings


def format_model_files(timings):
    """One line per model and dtype: our ms, PyTorch's ms and the ratio (ours / PyTorch's),
    marked "?" when either side's samples spread more than ``UNSTEADY``."""
    lines = []
    for dtype, t in timings.items():
        for name, title in (("file", "nanoGPT-style file"), ("gpt", "nn.GPT (fused)")):
            ours, theirs = t[name], t[name + " torch"]
            mark = "?" if unsteady(ours.spread, theirs.spread) else ""
            lines.append(f"  {title:18} {dtype}: ours {ours.median * 1e3:8.2f} ms, "
                         f"torch {theirs.median * 1e3:8.2f} ms, "
                         f"ratio {ours.median / theirs.median:.2f}{mark}")
    if any("?" in line for line in lines):
        lines.append(f"  (? : samples spread more than {UNSTEADY:.0%} of the median: "
                     "do not quote it)")
    return "\n".join(lines)


def format_train_steps(results):
    """One line per configuration: ms per step of each impl and the ratio to PyTorch."""
    lines = []
    for r in results:
        head = (f"  d_model {r.d_model:>3}, {r.n_layers} layers, context {r.context_length:>3},"
                f" batch {r.batch_size}, {r.dtype}:")
        parts = [f"{impl} {r.median_ms(impl):8.2f} ms" + (
            "" if impl == "torch" or "torch" not in r.timings
            else f" ({r.vs_torch(impl):.2f}x torch)") for impl in r.timings]
        lines.append(head + "  " + ", ".join(parts))
    return "\n".join(lines)


def scaling_sweep(d_models=SWEEP_D_MODEL, contexts=SWEEP_CONTEXT, n_layers=2, batch_size=16,
                  impls=("fused", "composite", "torch"), repeat=9, warmup=1, progress=None,
                  base=64, timer=None):
    """Step timings against d_model (context ``base``) and against context (d_model
    ``base``).

    Returns:
        {"d_model": [TrainStepResult...], "context": [TrainStepResult...]}.
    """
    sweep = {"d_model": [], "context": []}
    for d_model in d_models:
        if progress is not None:
            progress(f"d_model {d_model}")
        sweep["d_model"].append(train_step_comparison(
            d_model, n_layers, base, batch_size, impls=impls, repeat=repeat, warmup=warmup,
            timer=timer))
    for context in contexts:
        if progress is not None:
            progress(f"context {context}")
        sweep["context"].append(train_step_comparison(
            base, n_layers, context, batch_size, impls=impls, repeat=repeat, warmup=warmup,
            timer=timer))
    return sweep


def plot_scaling(sweep, path):
    """Two panels, step time (ms, log scale) against d_model and against context length,
    one line per impl; written to ``path`` (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    base_context = sweep["d_model"][0].context_length
    base_d_model = sweep["context"][0].d_model
    for ax, (key, label) in zip(axes, (("d_model", f"d_model (context {base_context})"),
                                       ("context", f"context length (d_model {base_d_model})"))):
        results = sweep[key]
        xs = [r.d_model if key == "d_model" else r.context_length for r in results]
        for impl in results[0].timings:
            ax.plot(xs, [r.median_ms(impl) for r in results], marker="o",
                    label="PyTorch" if impl == "torch" else "microgradnorm, captured step"
                    if impl == "captured" else f"microgradnorm, {impl} norms")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.set_xlabel(label)
        ax.set_ylabel("training step, ms (median)")
        ax.grid(True, which="both", alpha=0.3)
    r = sweep["d_model"][0]
    layers = f"{r.n_layers} layer" + ("s" if r.n_layers != 1 else "")
    fig.suptitle(f"Tiny GPT training step, one thread each ({layers}, batch "
                 f"{r.batch_size}, {r.dtype}, AdamW)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ----- per-node overhead --------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class EngineComparison:
    nodes: int                   # nodes (ops) per forward + backward, the same in both
    timings: dict                # {"microgradnorm": Timing, "torch": Timing}

    def us_per_node(self, impl):
        return self.timings[impl].median / self.nodes * 1e6


def engine_comparison(layers=50, width=4, batch=2, repeat=50, warmup=3, timer=None):
    """The chain of ``bench.engine_overhead`` (``h = tanh(h @ W + b)``, 3 nodes per layer
    on (batch, width) float64 tensors, then ``.sum().backward()``) in microgradnorm and in
    PyTorch, timed in turns. Per node: the median step / the node count (the sum counted)."""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((batch, width))
    weights = [(rng.standard_normal((width, width)) / width, rng.standard_normal(width))
               for _ in range(layers)]
    x = tensor(x0)
    params = [(tensor(w, requires_grad=True), tensor(b, requires_grad=True))
              for w, b in weights]

    def ours():
        h = x
        for weight, bias in params:
            h = (h @ weight + bias).tanh()
        h.sum().backward()

    steps = {"microgradnorm": ours}
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        tx = torch.from_numpy(x0)
        tparams = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
                   for w, b in weights]

        def theirs():
            h = tx
            for weight, bias in tparams:
                h = torch.tanh(h @ weight + bias)
            h.sum().backward()

        steps["torch"] = theirs
    timings = time_interleaved(steps, repeat, warmup, timer=timer)
    return EngineComparison(3 * layers + 1, timings)


def format_engine(result):
    text = (f"  engine: {result.us_per_node('microgradnorm'):.2f} us per node, forward + "
            f"backward ({result.nodes} nodes, tiny tensors)")
    if "torch" in result.timings:
        ratio = result.timings["microgradnorm"].median / result.timings["torch"].median
        text += (f"; torch {result.us_per_node('torch'):.2f} us per op "
                 f"({ratio:.2f}x torch)")
    return text


# ----- the command ------------------------------------------------------------------------
def run(args, progress=None):
    """``microgradnorm bench --train``: the engine line, the step at ``TRAIN_SIZES``, the
    sweep and its plot, all with NumPy's BLAS and PyTorch on one thread."""
    import os
    import platform

    impls = fused_impls(args) + ("captured", "composite") + (("torch",) if torch_available()
                                                             else ())
    repeat = args.repeat or (3 if args.quick else 9)
    timer = cpu_timer if args.clock == "cpu" else None
    sizes = QUICK_SIZES if args.quick else TRAIN_SIZES
    sweep_points = QUICK_SWEEP if args.quick else None
    print("microgradnorm bench --train: the tiny GPT's training step (forward, "
          "cross-entropy, backward, AdamW), medians of " f"{repeat}, "
          + ("process CPU time" if timer else "wall-clock time"))
    with single_thread() as threads:
        print(f"  python {platform.python_version()}, numpy {np.__version__}"
              + (f", torch {_torch_version()}" if "torch" in impls else ""))
        print(f"  threads: {threads}")
        kept = backend.keep_freed_memory()
        print(f"  malloc: {'freed memory kept for reuse' if kept else 'defaults'} "
              "(backend.keep_freed_memory)")
        print(format_engine(engine_comparison(repeat=max(9, 3 * repeat), timer=timer)))
        print("  step (nn.GPT: pre-norm LayerNorm, 4 heads, vocab 64; captured: the fused "
              "step replayed by mg.capture; ratio: our time / PyTorch's):")
        results = [train_step_comparison(*size, impls=impls, repeat=repeat, timer=timer)
                   for size in sizes]
        print(format_train_steps(results))
        if "torch" in impls:
            print("  a PyTorch model file (pytorch_style_gpt.py) run here with its imports "
                  "changed, and nn.GPT, each against PyTorch (ratio: ours / PyTorch's):")
            print(format_model_files(model_file_comparison(*sizes[0], repeat=repeat,
                                                           timer=timer)))
        options = {"d_models": sweep_points, "contexts": sweep_points,
                   "base": 16} if sweep_points else {}
        sweep = scaling_sweep(impls=impls, repeat=repeat, progress=progress, timer=timer,
                              n_layers=1 if args.quick else 2, **options)
    print("  scaling, 2 layers, batch 16 (by d_model, then by context):" if not args.quick
          else "  scaling (quick):")
    print(format_train_steps(sweep["d_model"] + sweep["context"]))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("  (no plot: matplotlib is not installed)")
        return
    os.makedirs(args.out, exist_ok=True)
    print(f"  plot: {plot_scaling(sweep, os.path.join(args.out, PLOT_NAME))}")


def _torch_version():
    import torch
    return torch.__version__


__all__ = ["PLOT_NAME", "TRAIN_SIZES", "EngineComparison", "TrainStepResult",
           "engine_comparison", "format_engine", "format_model_files", "format_train_steps",
           "gpt_training_step", "load_model_file", "model_file_comparison", "model_file_step",
           "plot_scaling", "run",
           "scaling_sweep", "single_thread", "torch_gpt", "train_step_comparison"]

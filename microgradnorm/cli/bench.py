"""``bench``: how fast each norm runs, composite vs fused vs PyTorch, and what a node costs.

The harness is device-agnostic; a device contributes only how to wait for its work and how
to read a clock:

  * ``time_call(fn, repeat, warmup, synchronize=None, timer=None)`` runs ``fn`` and keeps
    every sample (seconds); ``Timing.median`` is what tables show. The default timer is the
    wall clock around one call, with ``synchronize()`` before and after it when given (a
    GPU stream); pass ``timer(fn) -> seconds`` to measure otherwise (CUDA events).
    ``time_interleaved({name: fn}, ...)`` times several callables in turns, so that load
    from other processes falls on all of them alike.
  * ``copy_bandwidth(xp, ...)`` is the machine's own yardstick: GB/s of ``xp.copyto``
    between two large arrays (bytes read + bytes written), measured in the same run.
  * ``BenchRow`` is one measurement (norm, shape, dtype, impl, phase, timing, the minimal
    bytes that phase must move, bytes saved for backward); its GB/s, % of copy bandwidth
    and speed-ups over the composite graph and over PyTorch derive from it.
  * ``format_table(rows)`` prints them; ``run_norm_bench`` fills them.
  * ``engine_overhead()`` is the engine's cost per node on tiny tensors, and
    ``transformer_step(impl)`` the training step of the tiny ``nn.GPT``.

Minimal bytes: a norm must at least read its full-size inputs and write its full-size
outputs once. LayerNorm, RMSNorm, BatchNorm: forward reads x and writes y (2·M·D·itemsize),
backward reads x and dy and writes dx (3·M·D·itemsize). The residual forms read x and
residual and write y and s (4·M·D), and backward reads dy, ds and s and writes one dsum
(4·M·D) that is the gradient of both x and residual. Parameters and per-row statistics are
negligible and not counted.
"""

import contextlib
import dataclasses
import platform
import statistics
import sys
import time

import numpy as np

from .. import backend, kernels
from ..autograd import grad
from ..checks.comparison import NORMS, make_inputs, output_names, run_norm
from ..checks.stats import graph_stats
from ..tensor import Tensor
from .common import check_memory, check_out_dir, parse_shape, positive_int

SHAPES = ((4096, 1024), (1024, 4096), (16384, 256))
QUICK_SHAPES = ((128, 256), (512, 64))
DTYPES = ("float32", "float64")
IMPLS = ("composite", "fused", "torch")
# The fused norms on NumPy arrays run the default CPU kernels, kernels.blocked ("fused");
# "fused-numba" and "fused-reference" are the same graph with the numba or the reference CPU
# kernels selected (kernels.set_cpu_kernels), timed beside it.
NUMBA_IMPL = "fused-numba"
KERNEL_IMPLS = {"numpy": "fused", "numba": NUMBA_IMPL, "reference": "fused-reference"}
PHASES = ("forward", "forward+backward")

# (forward, backward) count of full-size (M·D) arrays each norm must read or write once.
FULL_SIZE_ARRAYS = {"layernorm": (2, 3), "rmsnorm": (2, 3), "batchnorm": (2, 3),
                    "add_layer_norm": (4, 4), "add_rms_norm": (4, 4)}


# ----- timing -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Timing:
    """Every sample of one timed call, in seconds."""

    samples: tuple

    @property
    def median(self):
        return statistics.median(self.samples)

    @property
    def min(self):
        return min(self.samples)


def wall_timer(synchronize=None):
    """A timer that reads the wall clock around one call of ``fn``; ``synchronize()``
    (e.g. waiting for a GPU stream) runs before the clock starts and before it stops, so
    queued asynchronous work is neither charged to the call nor left out of it."""
    def timer(fn):
        if synchronize is not None:
            synchronize()
        start = time.perf_counter()
        fn()
        if synchronize is not None:
            synchronize()
        return time.perf_counter() - start
    return timer


def cpu_timer(fn):
    """A timer that reads this process's CPU time (user + system, every thread) around one
    call of ``fn``: on a machine shared with other jobs, time spent waiting for a core is
    not counted, so single-threaded code reads the same under load. Not for GPU work."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def time_call(fn, repeat=5, warmup=1, synchronize=None, timer=None):
    """Run ``fn()`` ``warmup`` times untimed (caches, allocator, lazy compilation), then
    ``repeat`` times timed.

    Args:
        fn: a callable taking no arguments.
        repeat: timed calls (at least 1); the median is robust to a noisy neighbour.
        warmup: untimed calls first.
        synchronize: called before and after each timed call by the default timer.
        timer: ``timer(fn) -> seconds`` for one call; overrides the default wall timer.

    Returns:
        a ``Timing`` with all ``repeat`` samples.

    Example:
        >>> time_call(lambda: np.ones(10**6).sum(), repeat=5).median   # seconds
    """
    if repeat < 1:
        raise ValueError(f"time_call: repeat must be at least 1, got {repeat}")
    timer = timer or wall_timer(synchronize)
    for _ in range(warmup):
        fn()
    return Timing(tuple(timer(fn) for _ in range(repeat)))


def time_interleaved(fns, repeat=5, warmup=1, synchronize=None, timer=None):
    """``time_call`` for several callables in turns (a, b, c, a, b, c, ...), so a burst of
    load from other processes falls on all of them alike instead of on whichever ran
    then: on a shared machine their ratios stay meaningful.

    Args:
        fns: {name: callable}.
        repeat, warmup, synchronize, timer: as in ``time_call``.

    Returns:
        {name: Timing}.
    """
    if repeat < 1:
        raise ValueError(f"time_interleaved: repeat must be at least 1, got {repeat}")
    timer = timer or wall_timer(synchronize)
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            samples[name].append(timer(fn))
    return {name: Timing(tuple(s)) for name, s in samples.items()}


def copy_bandwidth(xp=np, nbytes=64 * 2**20, repeat=5, warmup=1, synchronize=None, timer=None):
    """GB/s of ``xp.copyto(dst, src)`` between two arrays of ``nbytes`` each, counting the
    bytes read and the bytes written (2·nbytes per copy), as GB/s of the norms counts them.
    Large enough not to fit in a CPU cache, so it measures memory."""
    src = xp.ones(nbytes // 4, dtype=np.float32)
    dst = xp.empty_like(src)
    timing = time_call(lambda: xp.copyto(dst, src), repeat, warmup, synchronize, timer)
    return 2 * src.nbytes / timing.median / 1e9


def minimal_bytes(norm, shape, dtype, phase):
    """The bytes ``phase`` must move at least: full-size arrays read or written once (see
    the module docstring); forward+backward is the sum of both."""
    if norm not in FULL_SIZE_ARRAYS:
        raise ValueError(f"minimal_bytes: norm must be one of {tuple(FULL_SIZE_ARRAYS)}, "
                         f"got {norm!r}")
    forward, backward = FULL_SIZE_ARRAYS[norm]
    arrays = {"forward": forward, "backward": backward, "forward+backward": forward + backward}
    if phase not in arrays:
        raise ValueError(f"minimal_bytes: phase must be one of {tuple(arrays)}, got {phase!r}")
    return arrays[phase] * int(np.prod(shape)) * np.dtype(dtype).itemsize


# ----- results ------------------------------------------------------------------------------
@dataclasses.dataclass
class BenchRow:
    """One measurement. ``composite_s`` and ``torch_s`` are the medians of the composite
    graph and of PyTorch for the same norm, shape, dtype and phase (None where not run)."""

    device: str
    norm: str
    shape: tuple
    dtype: str
    impl: str
    phase: str
    timing: Timing
    bytes_moved: int                   # minimal bytes of this phase
    copy_gbps: float | None = None     # the device's copy bandwidth, same run
    saved_bytes: int | None = None     # bytes kept for backward (None: not measured)
    composite_s: float | None = None
    torch_s: float | None = None

    @property
    def median_ms(self):
        return self.timing.median * 1e3

    @property
    def gbps(self):
        return self.bytes_moved / self.timing.median / 1e9

    @property
    def pct_copy(self):
        return None if not self.copy_gbps else 100 * self.gbps / self.copy_gbps

    @property
    def vs_composite(self):
        """Speed-up over the composite graph: composite time / this time (> 1 is faster)."""
        return None if self.composite_s is None else self.composite_s / self.timing.median

    @property
    def vs_torch(self):
        """Speed-up over PyTorch: torch time / this time (< 1 is slower than PyTorch)."""
        return None if self.torch_s is None else self.torch_s / self.timing.median


def fill_ratios(rows):
    """Set ``composite_s`` and ``torch_s`` of every row from the rows it is compared with."""
    medians = {(r.device, r.norm, r.shape, r.dtype, r.phase, r.impl): r.timing.median
               for r in rows}
    for r in rows:
        key = (r.device, r.norm, r.shape, r.dtype, r.phase)
        r.composite_s = medians.get(key + ("composite",))
        r.torch_s = medians.get(key + ("torch",))
    return rows


COLUMNS = ("norm", "shape", "dtype", "impl", "phase", "median ms", "GB/s", "% copy",
           "saved MB", "x composite", "x torch")


def format_table(rows):
    """The rows as an aligned text table, one line per row. ``x composite`` and ``x torch``
    are speed-ups (the other's median / this median); "-" where a value is missing."""
    def number(value, digits):
        return "-" if value is None else f"{value:.{digits}f}"

    cells = [COLUMNS]
    for r in rows:
        saved = None if r.saved_bytes is None else r.saved_bytes / 2**20
        cells.append((r.norm, "x".join(map(str, r.shape)), r.dtype, r.impl, r.phase,
                      number(r.median_ms, 3), number(r.gbps, 2), number(r.pct_copy, 1),
                      number(saved, 1), number(r.vs_composite, 2), number(r.vs_torch, 2)))
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    text_columns = 5                      # left-aligned names, right-aligned numbers
    lines = ["  ".join(c.ljust(w) if i < text_columns else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths))) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# ----- the norms ----------------------------------------------------------------------------
def torch_available():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


@dataclasses.dataclass
class Case:
    """One implementation of one norm on fixed inputs: ``forward()`` and ``step()``
    (forward + backward) to time, and the bytes it saves for backward."""

    forward: object
    step: object
    saved_bytes: int | None


def kernel_choice(impl):
    """A context in which ``impl`` runs: the numba (reference) CPU kernels for
    "fused-numba" ("fused-reference"), the current choice otherwise."""
    names = {value: name for name, value in KERNEL_IMPLS.items() if name != "numpy"}
    return kernels.cpu_kernels(names[impl]) if impl in names else contextlib.nullcontext()


def graph_impl(impl):
    """The ``impl=`` of the graph: "fused-numba" and "fused-reference" are the fused graph."""
    return "fused" if impl in KERNEL_IMPLS.values() else impl


def microgradnorm_case(norm, impl, arrays, upstream, device="cpu"):
    """``impl`` ("composite", "fused" or "fused-numba") of ``norm`` on copies of ``arrays``
    placed on ``device``. The step computes gradients with ``mg.grad`` (no ``.grad``
    accumulates); BatchNorm runs in training mode with running statistics."""
    tensors = {name: Tensor(a, requires_grad=True, device=device) for name, a in arrays.items()}
    grads = [backend.to_device(g, device) for g in upstream]
    channels = arrays["x"].shape[1]
    running = None
    if norm == "batchnorm":
        xp = tensors["x"].xp
        running = {"running_mean": xp.zeros(channels, arrays["x"].dtype),
                   "running_var": xp.ones(channels, arrays["x"].dtype)}

    def forward():
        with kernel_choice(impl):
            return run_norm(norm, graph_impl(impl), tensors, running)

    def step():                     # the nodes keep forward's kernels for their backward
        return grad(forward(), list(tensors.values()), grads)

    return Case(forward, step, graph_stats(*forward()).saved_bytes)


def torch_case(norm, arrays, upstream, device="cpu"):
    """PyTorch's own functions for ``norm`` (``F.layer_norm``, ``F.rms_norm``,
    ``F.batch_norm``; the residual forms as ``x + residual`` followed by the norm) with
    the same eps as microgradnorm's defaults."""
    import torch
    import torch.nn.functional as TF

    tensors = {name: torch.tensor(a, device=device, requires_grad=True)
               for name, a in arrays.items()}
    grads = [torch.tensor(g, device=device) for g in upstream]
    x, weight, bias = tensors["x"], tensors.get("weight"), tensors.get("bias")
    size = tuple(x.shape[-1:])
    running = (torch.zeros(x.shape[1], dtype=x.dtype, device=device),
               torch.ones(x.shape[1], dtype=x.dtype, device=device))

    def forward():
        if norm == "layernorm":
            return (TF.layer_norm(x, size, weight, bias, 1e-5),)
        if norm == "rmsnorm":
            return (TF.rms_norm(x, size, weight, 1e-6),)
        if norm == "batchnorm":
            return (TF.batch_norm(x, *running, weight, bias, training=True),)
        s = x + tensors["residual"]
        if norm == "add_layer_norm":
            return TF.layer_norm(s, size, weight, bias, 1e-5), s
        return TF.rms_norm(s, size, weight, 1e-6), s

    def step():
        return torch.autograd.grad(forward(), list(tensors.values()), grads)

    return Case(forward, step, _torch_saved_bytes(forward))


def _torch_saved_bytes(forward):
    # Every tensor autograd packs for backward passes through this hook; storages are
    # counted once, as mg.graph_stats counts buffers once.
    import torch
    storages = {}

    def pack(t):
        storage = t.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        forward()
    return sum(storages.values())


def run_norm_bench(norms=NORMS, shapes=SHAPES, dtypes=DTYPES, impls=IMPLS, device="cpu",
                   repeat=5, warmup=1, synchronize=None, timer=None, copy_gbps=None,
                   progress=None):
    """Time every (norm, shape, dtype, impl, phase); returns ``BenchRow``s with ratios.
    The implementations of one case are timed in turns (``time_interleaved``).

    Args:
        norms, shapes, dtypes, impls: what to run; "torch" is skipped when PyTorch is not
            importable. Shapes are 2-D (M, D): M rows of D features (BatchNorm: N, C).
        device: where the tensors live ("cpu" or "cuda").
        repeat, warmup, synchronize, timer: as in ``time_call``.
        copy_gbps: the device's copy bandwidth for the % column (None: not shown).
        progress: called with a short text before each case (e.g. ``print``), or None.
    """
    impls = [i for i in impls if i != "torch" or torch_available()]
    rows = []
    for norm in norms:
        for shape in shapes:
            for dtype in dtypes:
                arrays = make_inputs(norm, shape, dtype)
                rng = np.random.default_rng(1)
                upstream = [rng.standard_normal(shape).astype(dtype)
                            for _ in output_names(norm)]
                if progress is not None:
                    progress(f"{norm} {shape} {dtype}")
                cases = {impl: torch_case(norm, arrays, upstream, device) if impl == "torch"
                         else microgradnorm_case(norm, impl, arrays, upstream, device)
                         for impl in impls}
                for phase in PHASES:
                    timings = time_interleaved(
                        {impl: case.forward if phase == "forward" else case.step
                         for impl, case in cases.items()}, repeat, warmup, synchronize, timer)
                    rows += [BenchRow(device, norm, tuple(shape), dtype, impl, phase,
                                      timings[impl], minimal_bytes(norm, shape, dtype, phase),
                                      copy_gbps, cases[impl].saved_bytes) for impl in impls]
    return fill_ratios(rows)


# ----- the engine ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class EngineResult:
    nodes: int
    timing: Timing               # one forward + backward of the whole graph

    @property
    def us_per_node(self):
        return self.timing.median / self.nodes * 1e6


def engine_overhead(layers=50, width=4, batch=2, repeat=20, warmup=2):
    """Per-node cost of recording and back-propagating: a tiny MLP-like chain
    ``h = tanh(h @ W + b)`` (matmul, broadcasting add, tanh: 3 nodes per layer) on
    (batch, width) float64 tensors, then ``.sum().backward()``. The arrays are so small
    that the time is the engine's bookkeeping, not arithmetic."""
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((batch, width)))
    params = [(Tensor(rng.standard_normal((width, width)) / width, requires_grad=True),
               Tensor(rng.standard_normal(width), requires_grad=True)) for _ in range(layers)]

    def step():
        h = x
        for weight, bias in params:
            h = (h @ weight + bias).tanh()
        h.sum().backward()

    h = x
    for weight, bias in params:
        h = (h @ weight + bias).tanh()
    nodes = graph_stats(h.sum()).nodes
    return EngineResult(nodes, time_call(step, repeat, warmup))


@dataclasses.dataclass(frozen=True)
class StepResult:
    impl: str
    nodes: int                   # op nodes behind one step's loss
    timing: Timing               # one training step

    @property
    def us_per_node(self):
        return self.timing.median / self.nodes * 1e6


def gpt_training_step(impl, vocab_size, context_length, d_model, n_heads, n_layers,
                      batch_size, dtype="float64", seed=0, device="cpu"):
    """One training step of ``nn.GPT`` on random tokens, ready to time: forward,
    cross-entropy, ``zero_grad``, backward and an AdamW update. Weights and tokens come from
    ``seed``. Returns ``(step, nodes)``: the callable and the op nodes behind its loss."""
    from .. import nn, optim
    from ..functional import cross_entropy

    np.random.seed(seed)                                                 # the weights
    model = nn.GPT(vocab_size, context_length, d_model, n_heads, n_layers,
                   impl=graph_impl(impl), dtype=dtype, device=device)
    optimizer = optim.AdamW(model.parameters(), lr=1e-3)
    tokens = np.random.default_rng(seed).integers(0, vocab_size,
                                                  (batch_size, context_length + 1))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]                     # (B, T), (B, T)

    def step():
        with kernel_choice(impl):
            loss = cross_entropy(model(inputs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    return step, graph_stats(cross_entropy(model(inputs), targets)).nodes


def transformer_step(impl="fused", d_model=32, n_heads=4, n_layers=2, context_length=32,
                     batch_size=16, vocab_size=64, dtype="float64", repeat=5, warmup=1,
                     device="cpu", seed=0, timer=None):
    """Time one training step of the tiny transformer: ``nn.GPT`` with the defaults of
    ``train_tiny_gpt`` (d_model 32, 4 heads, 2 blocks, context 32, batch 16, float64) on
    random tokens (``gpt_training_step``). ``impl`` picks the norms; at this size the step
    is mostly engine work."""
    step, nodes = gpt_training_step(impl, vocab_size, context_length, d_model, n_heads,
                                    n_layers, batch_size, dtype, seed, device)
    return StepResult(impl, nodes, time_call(step, repeat, warmup, timer=timer))


# ----- the whole run ------------------------------------------------------------------------
def machine_description(device="cpu"):
    """A few lines naming what the numbers were measured on."""
    lines = [f"python {platform.python_version()}, numpy {np.__version__}"]
    if torch_available():
        import torch
        lines[0] += f", torch {torch.__version__} ({torch.get_num_threads()} threads)"
    if device == "cpu":
        lines.append(f"cpu: {_cpu_model()}")
    return lines


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as info:
            models = [line.split(":", 1)[1].strip() for line in info
                      if line.startswith("model name")]
        return f"{models[0]} x {len(models)}" if models else platform.processor()
    except OSError:
        return platform.processor() or "unknown"


# ----- the command ------------------------------------------------------------------------
def add_parser(commands):
    parser = commands.add_parser(
        "bench", help="time composite vs fused vs PyTorch; the engine's cost per node")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where to run; cuda needs CuPy and a GPU (default %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="small shapes, few repeats: seconds, not minutes")
    parser.add_argument("--norm", nargs="+", choices=NORMS,
                        help="default: every norm (cpu); layernorm rmsnorm (cuda)")
    parser.add_argument("--dtype", nargs="+",
                        choices=("float32", "float64", "float16", "bfloat16"),
                        help="default: float32 float64 (cpu); float32 float16 "
                             "bfloat16 (cuda)")
    parser.add_argument("--shape", nargs="+", type=parse_shape,
                        help="2-D shapes M,D (default 4096,1024 1024,4096 16384,256)")
    parser.add_argument("--repeat", type=positive_int,
                        help="timed calls per case, the median is shown (default: 7, "
                             "--train 9, --quick 3)")
    parser.add_argument("--torch-threads", type=positive_int,
                        help="PyTorch's intra-op threads (default: PyTorch's choice)")
    parser.add_argument("--one-thread", action="store_true",
                        help="NumPy's BLAS (through threadpoolctl) and PyTorch on one thread")
    parser.add_argument("--train", action="store_true",
                        help="instead of the norms: the tiny GPT's training step against "
                             "the same model in PyTorch, one thread each, and its scaling "
                             "with d_model and context (a PNG in --out)")
    parser.add_argument("--out", default=".",
                        help="--train: directory for train_step_scaling.png (default: here)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: time each call by this process's CPU time, not the wall "
                             "clock: steadier on a machine shared with other jobs; CPU only "
                             "(default %(default)s)")
    parser.add_argument("--cpu-kernels", nargs="+", choices=kernels.CPU_KERNELS,
                        default=("numpy",),
                        help="CPU kernels to time the fused norms with: numpy (the default "
                             "kernels, impl fused), numba (impl fused-numba, needs numba), "
                             "reference (impl fused-reference); several: side by side "
                             "(default: numpy)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(run=run)


def fused_impls(args):
    """The fused impls ``--cpu-kernels`` asks for ("fused", "fused-numba", "fused-reference";
    numba must import, else a ValueError naming the option and the extra to install)."""
    if "numba" in args.cpu_kernels:
        try:
            with kernels.cpu_kernels("numba"):
                pass
        except RuntimeError as error:          # numba missing: the message names the extra
            raise ValueError(f"--cpu-kernels numba: {error}") from None
    return tuple(KERNEL_IMPLS[name] for name in dict.fromkeys(args.cpu_kernels))   # each once


def progress_printer(args):
    """One stderr line per case, or None with ``--quiet``."""
    if args.quiet:
        return None
    return lambda text: print(f"  running {text}", file=sys.stderr, flush=True)


def run(args):
    if args.device == "cuda":
        other = [name for name in args.cpu_kernels if name != "numpy"]
        if args.train or args.clock == "cpu" or other:
            given = ("--train" if args.train else "--clock cpu" if args.clock == "cpu"
                     else f"--cpu-kernels {other[0]}")
            raise ValueError(f"{given} is for --device cpu")
        from . import bench_cuda
        return bench_cuda.run(args)
    from . import bench_train
    if args.repeat is not None and args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, got {args.repeat}")
    if args.train:
        check_out_dir(args.out)
        return bench_train.run(args, progress_printer(args))
    if not args.one_thread:
        return run_norms(args, bench_train)
    with bench_train.single_thread():
        return run_norms(args, bench_train)


def run_norms(args, bench_train):
    fused = fused_impls(args)
    args.norm = args.norm or NORMS
    args.dtype = args.dtype or ("float32", "float64")
    if "bfloat16" in args.dtype:
        raise ValueError("--dtype bfloat16 is for --device cuda (the CUDA kernels' storage)")
    if args.torch_threads is not None and torch_available():
        import torch
        torch.set_num_threads(args.torch_threads)
    if args.shape and any(len(shape) != 2 for shape in args.shape):
        raise ValueError(f"--shape takes 2-D shapes M,D, got {args.shape}")
    shapes = args.shape or (QUICK_SHAPES if args.quick else SHAPES)
    for shape in shapes:
        for dtype in args.dtype:
            check_memory(shape, dtype, arrays=24)
    repeat = args.repeat or (3 if args.quick else 7)
    timer = cpu_timer if args.clock == "cpu" else None
    print("microgradnorm bench --device cpu: composite vs fused vs PyTorch, medians"
          + (" of process CPU time" if timer else ""))
    for line in machine_description(args.device):
        print(f"  {line}")
    copy_gbps = copy_bandwidth(np, nbytes=(8 if args.quick else 64) * 2**20, repeat=repeat,
                               timer=timer)
    print(f"  np.copyto bandwidth: {copy_gbps:.2f} GB/s (read + write)")
    print(bench_train.format_engine(
        bench_train.engine_comparison(repeat=max(9, repeat * 3), timer=timer)))
    steps = [transformer_step(impl, repeat=repeat, timer=timer)
             for impl in ("composite",) + fused]
    print("  tiny transformer training step (nn.GPT d_model 32, 2 blocks, batch 16 x 32, "
          "float64, AdamW):")
    print("    " + ", ".join(f"{s.impl} norms {s.timing.median * 1e3:.1f} ms ({s.nodes} nodes)"
                            for s in steps))
    rows = run_norm_bench(args.norm, shapes, args.dtype, ("composite",) + fused + ("torch",),
                          device=args.device,
                          repeat=repeat, warmup=1, copy_gbps=copy_gbps,
                          progress=progress_printer(args), timer=timer)
    print()
    print(format_table(rows))

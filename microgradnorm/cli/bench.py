"""``bench``: how fast each norm runs, composite vs fused vs PyTorch, and what a node costs.

``run_norm_bench`` times every (norm, shape, dtype, impl, phase) on the CPU (or on CuPy
arrays) as ``BenchRow``s of the shared harness (``bench_harness``: timing, minimal bytes,
the table); ``engine_overhead()`` is the engine's cost per node on tiny tensors, and
``transformer_step(impl)`` the training step of the tiny ``nn.GPT``. The command also runs
``bench --device cuda`` (``bench_cuda``) and ``bench --train`` (``bench_train``).
"""

import dataclasses

import numpy as np

from .. import backend, kernels
from ..autograd import grad
from ..checks.stats import graph_stats
from ..norms import NORMS, lookup
from ..tensor import tensor
from . import bench_cuda, bench_train
from .bench_harness import (NUMBA_IMPL, BenchRow, Timing, copy_bandwidth, cpu_timer,
                            fill_ratios, format_table, fused_impls, graph_impl, kernel_choice,
                            load_warning, machine_description, minimal_bytes,
                            progress_printer, steadiness_note, time_call, time_interleaved,
                            torch_available)
from .common import check_memory, check_out_dir, norm_name, parse_shape, positive_int

__all__ = ["DTYPES", "IMPLS", "NUMBA_IMPL", "PHASES", "QUICK_SHAPES", "SHAPES", "Case",
           "EngineResult", "StepResult", "add_parser", "engine_overhead",
           "microgradnorm_case", "run", "run_norm_bench", "torch_case", "transformer_step"]

SHAPES = ((4096, 1024), (1024, 4096), (16384, 256))
QUICK_SHAPES = ((128, 256), (512, 64))
DTYPES = ("float32", "float64")
IMPLS = ("composite", "fused", "torch")
PHASES = ("forward", "forward+backward")


# ----- the norms ----------------------------------------------------------------------------
@dataclasses.dataclass
class Case:
    """One implementation of one norm on fixed inputs: ``forward()`` and ``step()``
    (forward + backward) to time, and the bytes it saves for backward."""

    forward: object
    step: object
    saved_bytes: int | None


def microgradnorm_case(norm, impl, arrays, upstream, device="cpu"):
    """``impl`` ("composite", "fused", "fused-numpy", ...) of ``norm`` (a ``Norm``) on copies
    of ``arrays`` placed on ``device``. The step computes gradients with ``mg.grad`` (no
    ``.grad`` accumulates); BatchNorm runs in training mode with running statistics."""
    tensors = {name: tensor(a, requires_grad=True, device=device) for name, a in arrays.items()}
    grads = [backend.to_device(g, device) for g in upstream]
    running = {name: backend.to_device(a, device)
               for name, a in (norm.running_stats(arrays) or {}).items()}

    def forward():
        with kernel_choice(impl):
            return norm.run(tensors, graph_impl(impl), running)

    def step():                     # the nodes keep forward's kernels for their backward
        return grad(forward(), list(tensors.values()), grads)

    return Case(forward, step, graph_stats(*forward()).saved_bytes)


def torch_case(norm, arrays, upstream, device="cpu"):
    """PyTorch's own functions for ``norm`` (``Norm.run_torch``: ``F.layer_norm``, ...;
    the residual forms as ``x + residual`` followed by the norm), with our default eps."""
    import torch
    import torch.nn.functional as TF

    tensors = {name: torch.tensor(a, device=device, requires_grad=True)
               for name, a in arrays.items()}
    grads = [torch.tensor(g, device=device) for g in upstream]
    running = {name: torch.tensor(a, device=device)
               for name, a in (norm.running_stats(arrays) or {}).items()}

    def forward():
        return norm.run_torch(TF, tensors, running)

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


def run_norm_bench(norms=tuple(NORMS), shapes=SHAPES, dtypes=DTYPES, impls=IMPLS, device="cpu",
                   repeat=5, warmup=1, synchronize=None, timer=None, copy_gbps=None,
                   progress=None):
    """Time every (norm, shape, dtype, impl, phase); returns ``BenchRow``s with ratios.
    The implementations of one case are timed in turns (``time_interleaved``).

    Args:
        norms, shapes, dtypes, impls: what to run (norms by name or alias); "torch" is
            skipped when PyTorch is not importable. Shapes are 2-D (M, D): M rows of D
            features (BatchNorm: N, C).
        device: where the tensors live ("cpu" or "cuda").
        repeat, warmup, synchronize, timer: as in ``time_call``.
        copy_gbps: the device's copy bandwidth for the % column (None: not shown).
        progress: called with a short text before each case (e.g. ``print``), or None.
    """
    impls = [i for i in impls if i != "torch" or torch_available()]
    rows = []
    for norm in (lookup(name, "run_norm_bench: norm") for name in norms):
        for shape in shapes:
            # M rows of D for a norm that needs more dims (InstanceNorm's (N, C, L)): one
            # sample of M channels of D positions, the same work on the same bytes
            shape = (1,) * (norm.ndim[0] - len(shape)) + tuple(shape)
            for dtype in dtypes:
                arrays = norm.make_inputs(shape, dtype)
                rng = np.random.default_rng(1)
                upstream = [rng.standard_normal(shape).astype(dtype) for _ in norm.outputs]
                if progress is not None:
                    progress(f"{norm.name} {shape} {dtype}")
                cases = {impl: torch_case(norm, arrays, upstream, device) if impl == "torch"
                         else microgradnorm_case(norm, impl, arrays, upstream, device)
                         for impl in impls}
                for phase in PHASES:
                    timings = time_interleaved(
                        {impl: case.forward if phase == "forward" else case.step
                         for impl, case in cases.items()}, repeat, warmup, synchronize, timer)
                    rows += [BenchRow(device, norm.name, tuple(shape), dtype, impl, phase,
                                      timings[impl], minimal_bytes(norm.name, shape, dtype, phase),
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
    x = tensor(rng.standard_normal((batch, width)))
    params = [(tensor(rng.standard_normal((width, width)) / width, requires_grad=True),
               tensor(rng.standard_normal(width), requires_grad=True)) for _ in range(layers)]

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


def transformer_step(impl="fused", d_model=32, n_heads=4, n_layers=2, context_length=32,
                     batch_size=16, vocab_size=64, dtype="float64", repeat=5, warmup=1,
                     device="cpu", seed=0, timer=None):
    """Time one training step of the tiny transformer: ``nn.GPT`` with the defaults of
    ``train_tiny_gpt`` (d_model 32, 4 heads, 2 blocks, context 32, batch 16, float64) on
    random tokens (``bench_train.gpt_training_step``). ``impl`` picks the norms; at this
    size the step is mostly engine work."""
    step, nodes = bench_train.gpt_training_step(impl, vocab_size, context_length, d_model,
                                                n_heads, n_layers, batch_size, dtype, seed,
                                                device)
    return StepResult(impl, nodes, time_call(step, repeat, warmup, timer=timer))


# ----- the command ------------------------------------------------------------------------
def add_parser(commands):
    parser = commands.add_parser(
        "bench", help="time composite vs fused vs PyTorch; the engine's cost per node")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where to run; cuda needs CuPy and a GPU (default %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="small shapes, few repeats: seconds, not minutes")
    parser.add_argument("--norm", nargs="+", type=norm_name, choices=tuple(NORMS),
                        help="default: every norm (cpu); "
                             f"{' '.join(bench_cuda.GPU_NORMS)} (cuda)")
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
    parser.add_argument("--out", default="out/bench",
                        help="--train: directory for train_step_scaling.png "
                             "(default %(default)s)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: time each call by this process's CPU time, not the wall "
                             "clock: steadier on a machine shared with other jobs; CPU only "
                             "(default %(default)s)")
    parser.add_argument("--cpu-kernels", nargs="+", choices=kernels.CPU_KERNELS,
                        default=(),
                        help="CPU kernels to time the fused norms with beside the default "
                             "ones (impl fused): numpy (impl fused-numpy), numba (impl "
                             "fused-numba, needs numba), reference (impl fused-reference); "
                             "several: side by side")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(run=run)


def run(args):
    if args.device == "cuda":
        other = [name for name in args.cpu_kernels if name != "numpy"]
        if args.train or args.clock == "cpu" or other:
            given = ("--train" if args.train else "--clock cpu" if args.clock == "cpu"
                     else f"--cpu-kernels {other[0]}")
            raise ValueError(f"{given} is for --device cpu")
        return bench_cuda.run(args)
    if args.repeat is not None and args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, got {args.repeat}")
    if args.train:
        check_out_dir(args.out)
        return bench_train.run(args, progress_printer(args))
    if not args.one_thread:
        return run_norms(args)
    with bench_train.single_thread():
        return run_norms(args)


def run_norms(args):
    fused = fused_impls(args)
    args.norm = args.norm or tuple(NORMS)
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
    busy = load_warning()
    if busy:
        print(f"  {busy}")
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
    for note in (load_warning() if not busy else None, steadiness_note(rows)):
        if note:
            print(f"  {note}")
    print()
    print(format_table(rows))

"""The ``microgradnorm`` command line."""

import argparse
import sys

import numpy as np

from . import comparison, demo, viz


def _shape(text):
    try:
        shape = tuple(int(n) for n in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"shape must be comma-separated ints, got {text!r}") from None
    if not shape or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"shape must be positive ints, got {text!r}")
    return shape


def _add_compare_args(parser, norms):
    parser.add_argument("--shape", type=_shape, default=(2, 4, 8),
                        help="input shape, comma-separated (default 2,4,8)")
    parser.add_argument("--dtype", choices=("float64", "float32", "float16"), default="float64")
    parser.add_argument("--no-affine", dest="affine", action="store_false",
                        help="without weight and bias")
    parser.add_argument("--repeat", type=int, default=5, help="timing repetitions (median)")
    parser.add_argument("--seed", type=int, default=0)
    if norms:
        parser.add_argument("--norm", choices=comparison.NORMS, default="layernorm")


def cmd_compare(args):
    result = comparison.compare(args.norm, args.shape, args.dtype, args.affine, args.seed,
                                args.repeat)
    print(result.table())


def cmd_demo(args):
    print("microgradnorm demo: every norm as a composite graph and as one fused node, "
          f"written to {args.out}/\n")
    demo.run_demo(args.out, args.shape, args.dtype, args.repeat, args.seed, args.train_steps)


def cmd_graph(args):
    norms = comparison.NORMS if args.norm == "all" else (args.norm,)
    for norm in norms:
        dot = viz.compare(norm, args.shape, args.dtype, show_saved=args.saved,
                          affine=args.affine, seed=args.seed)
        written = viz.render(dot, args.out, demo.twin_name(norm), formats=(args.format,))
        print(f"{norm}: " + ", ".join(str(p) for p in written))
    if not viz.dot_available():
        print(viz.INSTALL_HINT)


def cmd_train(args):
    from . import train

    result = train.train_tiny_gpt(
        args.steps, impl=args.impl, dtype=args.dtype, seed=args.seed,
        progress=not args.no_progress, norm=args.norm, placement=args.placement,
        d_model=args.d_model, n_heads=args.heads, n_layers=args.layers,
        context_length=args.context, batch_size=args.batch_size, lr=args.lr)
    losses = result.losses
    print(f"tiny GPT on the Zen of Python: {result.model.num_parameters():,} parameters, "
          f"{args.norm} {args.placement}-norm, impl={args.impl}, {args.dtype}")
    if losses:
        print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} steps, "
              f"{1000 * result.seconds_per_step:.1f} ms/step (median)")
    if args.sample:
        print("sample:\n" + result.sample("Beautiful", length=args.sample, seed=args.seed))


def _add_train_parser(commands):
    from .functional import IMPLS
    from .nn import NORMS, PLACEMENTS

    train = commands.add_parser("train", help="train a tiny character-level GPT on the Zen "
                                "of Python")
    train.add_argument("--steps", type=int, default=300)
    train.add_argument("--impl", choices=IMPLS, default="fused")
    train.add_argument("--norm", choices=NORMS, default="layernorm")
    train.add_argument("--placement", choices=PLACEMENTS, default="pre")
    train.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    train.add_argument("--layers", type=int, default=2)
    train.add_argument("--d-model", type=int, default=32)
    train.add_argument("--heads", type=int, default=4)
    train.add_argument("--context", type=int, default=32)
    train.add_argument("--batch-size", type=int, default=16)
    train.add_argument("--lr", type=float, default=3e-3)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--sample", type=int, default=200,
                       help="characters to sample after training (0: none)")
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.set_defaults(run=cmd_train)


def cmd_bench(args):
    from . import bench
    if args.device == "cuda":
        return cmd_bench_cuda(args)
    args.norm = args.norm or comparison.NORMS
    args.dtype = args.dtype or ("float32", "float64")
    if "bfloat16" in args.dtype:
        raise ValueError("--dtype bfloat16 is for --device cuda (the CUDA kernels' storage)")
    if args.torch_threads is not None and bench.torch_available():
        import torch
        torch.set_num_threads(args.torch_threads)
    if args.shape and any(len(shape) != 2 for shape in args.shape):
        raise ValueError(f"--shape takes 2-D shapes M,D, got {args.shape}")
    shapes = args.shape or (bench.QUICK_SHAPES if args.quick else bench.SHAPES)
    repeat = args.repeat or (3 if args.quick else 7)
    print("microgradnorm bench --device cpu: composite vs fused vs PyTorch, medians")
    for line in bench.machine_description(args.device):
        print(f"  {line}")
    copy_gbps = bench.copy_bandwidth(np, nbytes=(8 if args.quick else 64) * 2**20,
                                     repeat=repeat)
    print(f"  np.copyto bandwidth: {copy_gbps:.2f} GB/s (read + write)")
    engine = bench.engine_overhead(repeat=repeat * 3)
    print(f"  engine: {engine.us_per_node:.1f} us per node, forward + backward "
          f"({engine.nodes} nodes, tiny tensors)")
    steps = [bench.transformer_step(impl, repeat=repeat) for impl in ("composite", "fused")]
    print("  tiny transformer training step (nn.GPT d_model 32, 2 blocks, batch 16 x 32, "
          "float64, AdamW):")
    print("    " + ", ".join(f"{s.impl} norms {s.timing.median * 1e3:.1f} ms ({s.nodes} nodes)"
                            for s in steps))
    progress = None if args.quiet else (lambda text: print(f"  running {text}",
                                                           file=sys.stderr, flush=True))
    rows = bench.run_norm_bench(args.norm, shapes, args.dtype, device=args.device,
                                repeat=repeat, warmup=1, copy_gbps=copy_gbps,
                                progress=progress)
    print()
    print(bench.format_table(rows))


def cmd_bench_cuda(args):
    """``bench --device cuda``: validate each CUDA kernel against the float64 reference,
    then time kernel, fused, composite and PyTorch with CUDA events (docs/gpu.md)."""
    from . import backend, bench, bench_cuda
    if not backend.cuda_available():
        raise ValueError("--device cuda needs CuPy and a GPU (pip install -e \".[gpu]\")")
    norms = args.norm or bench_cuda.GPU_NORMS
    unknown = sorted(set(norms) - set(bench_cuda.GPU_NORMS))
    if unknown:
        raise ValueError(f"--device cuda times {bench_cuda.GPU_NORMS}, got {unknown}")
    dtypes = args.dtype or bench_cuda.GPU_DTYPES
    if "float64" in dtypes:
        raise ValueError("--device cuda times float32, float16 and bfloat16 (the kernels' "
                         "dtypes), not float64")
    if args.shape and any(len(shape) != 2 for shape in args.shape):
        raise ValueError(f"--shape takes 2-D shapes M,D, got {args.shape}")
    repeat = args.repeat or (3 if args.quick else 10)
    min_bytes = bench_cuda.QUICK_INPUT_BYTES if args.quick else bench_cuda.MIN_INPUT_BYTES
    cols = (1024, 4096) if args.quick else bench_cuda.GPU_COLS
    print("microgradnorm bench --device cuda: kernel vs fused vs composite vs PyTorch, "
          "medians of CUDA-event times")
    for line in bench.machine_description("cuda"):
        print(f"  {line}")
    print(f"  gpu: {bench_cuda.device_description()}")
    copy_gbps = bench_cuda.device_copy_bandwidth(nbytes=min_bytes, repeat=repeat)
    print(f"  device-to-device copy: {copy_gbps:.1f} GB/s (read + write)")
    overhead = bench_cuda.host_overhead()
    print(f"  host time per fused forward call, (8, 1024) float32: kernel functions "
          f"{overhead['kernel']:.1f} us, F.layer_norm on GPU tensors {overhead['fused']:.1f} us")
    progress = None if args.quiet else (lambda text: print(f"  running {text}",
                                                           file=sys.stderr, flush=True))
    rows = bench_cuda.run_gpu_bench(norms, cols, dtypes, min_bytes=min_bytes,
                                    shapes=args.shape, repeat=repeat, copy_gbps=copy_gbps,
                                    progress=progress)
    print("  every kernel matched the float64 reference before it was timed")
    print()
    print(bench.format_table(rows))


def build_parser():
    parser = argparse.ArgumentParser(
        prog="microgradnorm",
        description="A miniature autograd engine whose subject is normalization.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo_ = commands.add_parser(
        "demo", help="the main job: every norm composite vs fused, twin graphs, report.md")
    _add_compare_args(demo_, norms=False)
    demo_.add_argument("--out", default="microgradnorm-demo",
                       help="directory for the graphs and report.md (default %(default)s)")
    demo_.add_argument("--train-steps", type=int, default=60,
                       help="tiny-GPT training steps per impl, 0 to skip (default %(default)s)")
    demo_.set_defaults(run=cmd_demo)
    graph = commands.add_parser(
        "graph", help="draw one norm's composite and fused backward graphs side by side")
    _add_compare_args(graph, norms=False)
    graph.add_argument("--norm", choices=comparison.NORMS + ("all",), default="layernorm")
    graph.add_argument("--out", default=".", help="output directory (default: here)")
    graph.add_argument("--format", choices=viz.FORMATS, default="svg")
    graph.add_argument("--no-saved", dest="saved", action="store_false",
                       help="without the arrays saved for backward")
    graph.set_defaults(run=cmd_graph)
    compare = commands.add_parser(
        "compare", help="one norm, composite vs fused: nodes, saved bytes, |diff|, time")
    _add_compare_args(compare, norms=True)
    compare.set_defaults(run=cmd_compare)
    bench_parser = commands.add_parser(
        "bench", help="time composite vs fused vs PyTorch; the engine's cost per node")
    bench_parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    bench_parser.add_argument("--quick", action="store_true",
                              help="small shapes, few repeats: seconds, not minutes")
    bench_parser.add_argument("--norm", nargs="+", choices=comparison.NORMS,
                              help="default: every norm (cpu); layernorm rmsnorm (cuda)")
    bench_parser.add_argument("--dtype", nargs="+",
                              choices=("float32", "float64", "float16", "bfloat16"),
                              help="default: float32 float64 (cpu); float32 float16 "
                                   "bfloat16 (cuda)")
    bench_parser.add_argument("--shape", nargs="+", type=_shape,
                              help="2-D shapes M,D (default 4096,1024 1024,4096 16384,256)")
    bench_parser.add_argument("--repeat", type=int, help="timed calls per case (median)")
    bench_parser.add_argument("--torch-threads", type=int,
                              help="PyTorch's intra-op threads (default: PyTorch's choice)")
    bench_parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    bench_parser.set_defaults(run=cmd_bench)
    _add_train_parser(commands)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (ValueError, TypeError) as error:
        print(f"microgradnorm {args.command}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

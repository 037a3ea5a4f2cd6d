"""The ``microgradnorm`` command line."""

import argparse
import sys

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
    demo.run_demo(args.out, args.shape, args.dtype, args.repeat, args.seed)


def cmd_graph(args):
    norms = comparison.NORMS if args.norm == "all" else (args.norm,)
    for norm in norms:
        dot = viz.compare(norm, args.shape, args.dtype, show_saved=args.saved,
                          affine=args.affine, seed=args.seed)
        written = viz.render(dot, args.out, demo.twin_name(norm), formats=(args.format,))
        print(f"{norm}: " + ", ".join(str(p) for p in written))
    if not viz.dot_available():
        print(viz.INSTALL_HINT)


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

"""The ``microgradnorm`` command line."""

import argparse
import sys

from . import comparison


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
    print("microgradnorm demo: every norm as a composite graph and as one fused node\n")
    for norm in comparison.NORMS:
        result = comparison.compare(norm, args.shape, args.dtype, args.affine, args.seed,
                                        args.repeat)
        print(result.table(), end="\n\n")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="microgradnorm",
        description="A miniature autograd engine whose subject is normalization.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="compare composite and fused for every norm")
    _add_compare_args(demo, norms=False)
    demo.set_defaults(run=cmd_demo)
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

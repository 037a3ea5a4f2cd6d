"""``microgradnorm compare``: one norm, composite against fused, as one table."""

from ..checks import comparison
from .common import add_compare_args, check_memory, positive_float


def add_parser(commands):
    parser = commands.add_parser(
        "compare", help="one norm, composite vs fused: nodes, saved bytes, |diff|, time")
    add_compare_args(parser, norms=True, repeat=True)
    parser.add_argument("--scale", type=positive_float, default=1.0,
                        help="inputs are scale x standard normal draws (default 1; try "
                             "--dtype float16 --scale 0.001 to see where float16 breaks)")
    parser.set_defaults(run=run)


def run(args):
    check_memory(args.shape, args.dtype)
    result = comparison.compare(args.norm, args.shape, args.dtype, args.affine, args.seed,
                                args.repeat, scale=args.scale)
    print(result.table())

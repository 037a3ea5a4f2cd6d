"""``microgradnorm compare``: one norm, composite against fused, as one table."""

from ..checks import comparison
from .common import add_compare_args


def add_parser(commands):
    parser = commands.add_parser(
        "compare", help="one norm, composite vs fused: nodes, saved bytes, |diff|, time")
    add_compare_args(parser, norms=True, repeat=True)
    parser.set_defaults(run=run)


def run(args):
    result = comparison.compare(args.norm, args.shape, args.dtype, args.affine, args.seed,
                                args.repeat)
    print(result.table())

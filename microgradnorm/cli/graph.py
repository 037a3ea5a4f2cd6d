"""``microgradnorm graph``: one norm's composite and fused backward graphs side by side."""

from .. import viz
from ..norms import NORMS
from .common import add_compare_args, check_memory, check_out_dir, norm_name
from .demo import twin_name


def add_parser(commands):
    parser = commands.add_parser(
        "graph", help="draw one norm's composite and fused backward graphs side by side")
    add_compare_args(parser, norms=False)
    parser.add_argument("--norm", type=norm_name, choices=(*NORMS, "all"), default="layer_norm",
                        help="which norm, or all of them (default %(default)s)")
    parser.add_argument("--out", default="out/graph",
                        help="output directory (default %(default)s)")
    parser.add_argument("--format", choices=viz.FORMATS, default="svg",
                        help="picture format, besides the .dot source (default %(default)s)")
    parser.add_argument("--no-saved", dest="saved", action="store_false",
                        help="without the arrays saved for backward")
    parser.set_defaults(run=run)


def run(args):
    check_memory(args.shape, args.dtype)
    norms = tuple(NORMS) if args.norm == "all" else (args.norm,)
    # every graph is built (and its shape checked) before the first file is written
    dots = {norm: viz.compare(norm, args.shape, args.dtype, show_saved=args.saved,
                              affine=args.affine, seed=args.seed) for norm in norms}
    check_out_dir(args.out)
    for norm, dot in dots.items():
        written = viz.render(dot, args.out, twin_name(norm), formats=(args.format,))
        print(f"{norm}: " + ", ".join(str(p) for p in written))
    if not viz.dot_available():
        print(viz.INSTALL_HINT)

"""Argument types and options that several commands share."""

import argparse

from ..checks.comparison import NORMS


def parse_shape(text):
    """``"2,4,8"`` -> ``(2, 4, 8)``; argparse reports the error with the option's name."""
    try:
        shape = tuple(int(n) for n in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"shape must be comma-separated ints, got {text!r}") from None
    if not shape or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"shape must be positive ints, got {text!r}")
    return shape


def add_compare_args(parser, norms, repeat=False, affine=True):
    """The options of a composite-vs-fused run: shape, dtype, seed, and those a command
    asks for: ``--norm`` (``norms``), ``--no-affine`` (``affine``), ``--repeat``
    (``repeat``: only for a command that times something)."""
    parser.add_argument("--shape", type=parse_shape, default=(2, 4, 8),
                        help="input shape, comma-separated (default 2,4,8)")
    parser.add_argument("--dtype", choices=("float64", "float32", "float16", "bfloat16"),
                        default="float64", help="dtype of inputs and parameters; bfloat16 "
                                                "needs ml_dtypes (default %(default)s)")
    if affine:
        parser.add_argument("--no-affine", dest="affine", action="store_false",
                            help="without weight and bias")
    if repeat:
        parser.add_argument("--repeat", type=int, default=5,
                            help="timed calls per measurement; the median is shown "
                                 "(default %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random inputs (default %(default)s)")
    if norms:
        parser.add_argument("--norm", choices=NORMS, default="layernorm",
                            help="which norm (default %(default)s)")

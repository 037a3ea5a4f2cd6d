"""Argument types and options that several commands share, the checks every command
makes before it does any work or writes any file, the one-line error of every rejection,
and the one BLAS thread the programs run on."""

import argparse
import contextlib
import dataclasses
import os
from pathlib import Path

import numpy as np

from .. import nn
from ..dtypes import as_dtype
from ..norms import NORMS, lookup
from ..savefile import available_memory
from ..train import TrainConfig


# ----- rejections: one line, exit code 2 ------------------------------------------------------
def error_line(prog, message):
    """The one line that rejects a call: ``"<prog>: error: <message> (see <prog> --help)"``
    (a message of several lines is joined into one)."""
    message = " ".join(str(message).splitlines())
    return f"{prog}: error: {message} (see {prog} --help)"


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr (``error_line``, no usage
    block) and exit code 2. Its sub-command parsers are of the same class; ``commands`` is
    the sub-parsers action once ``add_subparsers`` has made one."""

    commands = None

    def add_subparsers(self, **kwargs):
        """``ArgumentParser.add_subparsers``, kept as ``self.commands``."""
        self.commands = super().add_subparsers(**kwargs)
        return self.commands

    def error(self, message):
        """Print ``error_line(self.prog, message)`` to stderr and exit with code 2."""
        self.exit(2, error_line(self.prog, message) + "\n")


# ----- threads ------------------------------------------------------------------------------
# A user's own choice of BLAS threads, which the programs leave as it is
BLAS_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def one_blas_thread(every_blas=True):
    """Run the block with NumPy's BLAS on one thread, restored after (``threadpoolctl``).

    The programs multiply small matrices (the tiny GPT's activations are 512 x 32), where a
    second BLAS thread only waits and, on a machine busy with other work, spins for a core:
    pinned, the demo takes under a quarter of the CPU time (the README's set-up has the
    figures). Nothing is changed without threadpoolctl, or when one of
    ``BLAS_THREAD_VARIABLES`` is set. ``every_blas``: load SciPy's BLAS first, so that it is
    pinned too (``load_every_blas``; 0.37 s of CPU, spared a command on NumPy's kernels)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is None or any(os.environ.get(v) for v in BLAS_THREAD_VARIABLES):
        yield
        return
    if every_blas:
        load_every_blas()
    with threadpool_limits(1, user_api="blas"):
        yield


def load_every_blas():
    """Load SciPy's BLAS, where SciPy is installed, before threads are limited: the numba
    attention kernels multiply through it (numba's ``np.dot``), a second OpenBLAS beside
    NumPy's, and ``threadpoolctl`` limits only the libraries already loaded."""
    try:
        import scipy.linalg.cython_blas  # noqa: F401
    except ImportError:
        pass


# ----- argument types -----------------------------------------------------------------------
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


def norm_name(text):
    """A norm's name in ``NORMS`` for its name or an alias (``"layernorm"`` -> ``"layer_norm"``);
    anything else is returned as given, for ``choices`` to refuse with the list of names."""
    try:
        return lookup(text).name
    except ValueError:
        return text


def _number(text, kind, test, what):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not test(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def positive_int(text):
    """An int >= 1 (argparse names the option in its error)."""
    return _number(text, int, lambda v: v >= 1, "an integer >= 1")


def nonnegative_int(text):
    """An int >= 0."""
    return _number(text, int, lambda v: v >= 0, "an integer >= 0")


def seed(text):
    """A NumPy seed: an int in [0, 2**32 - 1]."""
    return _number(text, int, lambda v: 0 <= v < 2**32, "an integer in [0, 2**32 - 1]")


def positive_float(text):
    """A finite float > 0."""
    return _number(text, float, lambda v: np.isfinite(v) and v > 0, "a finite number > 0")


def any_float(text):
    """Any float, negative, inf and NaN too, as torch's norms take an ``eps``; only text
    that is no number is refused."""
    return _number(text, float, lambda v: True, "a number")


def nonnegative_float(text):
    """A finite float >= 0."""
    return _number(text, float, lambda v: np.isfinite(v) and v >= 0, "a finite number >= 0")


# A composite-vs-fused run holds about this many arrays of the input's size at once: the
# inputs and their copies, the composite graph's intermediates and saved arrays, the
# upstream gradients and every gradient of both sides.
ARRAYS_PER_RUN = 32


def check_memory(shape, dtype, option="--shape", arrays=ARRAYS_PER_RUN):
    """Refuse a shape whose run cannot fit in memory, before allocating anything."""
    elements = int(np.prod(shape, dtype=object))
    needed = elements * as_dtype(dtype).itemsize * arrays
    shown = ",".join(map(str, shape))
    check_fits(needed, f"{option} {shown} in {as_dtype(dtype)}",
               f"{arrays} arrays of {_bytes(needed // arrays)}", "use a smaller shape")


def check_fits(needed, what, parts, advice):
    """The one memory check of every command: a ValueError ``"<what> needs about N (<parts>),
    but only M of memory is available; <advice>"`` when ``needed`` bytes do not fit."""
    available = available_memory()
    if available is not None and needed > available:
        raise ValueError(f"{what} needs about {_bytes(needed)} ({parts}), but only "
                         f"{_bytes(available)} of memory is available; {advice}")


def check_gpt_memory(config, vocab_size):
    """Refuse a tiny-GPT run (``train``, ``memory``; a ``TrainConfig``) whose weights, AdamW
    state and one step's activations cannot fit in memory, naming the options; before
    building it."""
    d, layers, heads = config.d_model, config.n_layers, config.n_heads
    tokens, context = config.batch_size * config.context_length, config.context_length
    swiglu = config.activation == "swiglu"
    hidden = nn.swiglu_hidden(4 * d, config.multiple_of) if swiglu else 4 * d
    ffn = 3 * d * hidden if swiglu else 2 * d * hidden + hidden + d
    parameters = 2 * vocab_size * d + context * d + layers * (4 * d * d + 4 * d + ffn + 4 * d)
    # what one step holds per token (saved for backward, and the gradients): per block ~48
    # arrays of width d, 6 of the inner width, 6 of the attention's (heads, T); 6 of the
    # logits' width. The default GPT: 27 MB, where `microgradnorm memory` measures 26 MB
    activations = tokens * (layers * (48 * d + 6 * hidden + 6 * heads * context)
                            + 6 * vocab_size)
    check_fits((4 * parameters + activations) * as_dtype(config.dtype).itemsize,
               f"--d-model {d} --layers {layers} --heads {heads} --context {context} "
               f"--batch-size {config.batch_size} in {config.dtype}",
               f"{parameters:,} parameters with gradients and AdamW state, and one step's "
               "activations", "use a smaller --d-model, --layers, --context or --batch-size")


def _bytes(n):
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000


def check_out_dir(path, option="--out"):
    """Make sure ``path`` is (or can be made) a writable directory, before any work.
    Raises ValueError with one line naming the path."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"{option} {path}: cannot create the directory "
                         f"({error.strerror or error})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {path}: the directory is not writable")
    return path


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
                            help="without the norm's optional learned inputs (its "
                                 "weight and bias)")
    if repeat:
        parser.add_argument("--repeat", type=positive_int, default=5,
                            help="timed calls per measurement; the median is shown "
                                 "(default %(default)s)")
    parser.add_argument("--seed", type=seed, default=0,
                        help="seed of the random inputs (default %(default)s)")
    if norms:
        parser.add_argument("--norm", type=norm_name, choices=tuple(NORMS),
                            default="layer_norm", help="which norm (default %(default)s)")


# TrainConfig's defaults, which the options of train and memory show and keep
TRAIN_DEFAULTS = {field.name: field.default for field in dataclasses.fields(TrainConfig)}


def train_config(args, **overrides):
    """The ``TrainConfig`` of the parsed options named as its fields, and ``overrides``."""
    options = {name: value for name, value in vars(args).items() if name in TRAIN_DEFAULTS}
    return TrainConfig(**{**options, **overrides})


def add_model_args(parser):
    """The tiny GPT's options that ``train`` and ``memory`` share: norm, placement, dtype
    and the sizes, each with its help and ``TrainConfig``'s default."""
    defaults = TRAIN_DEFAULTS
    parser.add_argument("--norm", type=norm_name, choices=nn.NORMS, default=defaults["norm"],
                        help="the norm in every block (default %(default)s)")
    parser.add_argument("--placement", choices=nn.PLACEMENTS, default=defaults["placement"],
                        help="where the norms sit in a block (default %(default)s)")
    parser.add_argument("--dtype", choices=("float64", "float32"), default=defaults["dtype"],
                        help="dtype of the parameters (default %(default)s)")
    parser.add_argument("--layers", dest="n_layers", metavar="N", type=positive_int,
                        default=defaults["n_layers"],
                        help="transformer blocks (default %(default)s)")
    parser.add_argument("--d-model", type=positive_int, default=defaults["d_model"],
                        help="width of the residual stream (default %(default)s)")
    parser.add_argument("--heads", dest="n_heads", metavar="N", type=positive_int,
                        default=defaults["n_heads"],
                        help="attention heads; must divide --d-model (default %(default)s)")
    parser.add_argument("--context", dest="context_length", metavar="T", type=positive_int,
                        default=defaults["context_length"],
                        help="tokens per training window, T (default %(default)s)")
    parser.add_argument("--batch-size", type=positive_int, default=defaults["batch_size"],
                        help="windows per step, B (default %(default)s)")
    parser.add_argument("--seed", type=seed, default=defaults["seed"],
                        help="seed of the initial weights, the batches (and train's sampling) "
                             "(default %(default)s)")

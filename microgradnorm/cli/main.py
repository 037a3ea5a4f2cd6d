"""The ``microgradnorm`` command line: one sub-command per module of this package."""

import contextlib
import re
import sys

from .. import backend
from . import bench, compare, demo, explain, graph, memory, precision, train
from .common import CliParser, error_line, one_blas_thread

# in the order ``--help`` lists them
COMMANDS = (demo, graph, compare, bench, train, precision, memory, explain)
# the commands that choose their threads themselves (bench: --one-thread, --torch-threads)
OWN_THREADS = ("bench",)


def build_parser():
    parser = CliParser(
        prog="microgradnorm",
        description="A miniature autograd engine whose subject is normalization.")
    package = sys.modules[__name__.partition(".")[0]]      # imported before any of its modules
    parser.add_argument("--version", action="version", version=f"%(prog)s {package.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def join_negative_values(argv):
    """``--shape -3,4`` -> ``--shape=-3,4``: argparse takes a value that starts with ``-``
    and is not a plain number for an option, and would not say which value was wrong."""
    joined = []
    for arg in argv:
        if joined and joined[-1].startswith("--") and "=" not in joined[-1] \
                and re.match(r"-[0-9.]", arg):
            joined[-1] = f"{joined[-1]}={arg}"
        else:
            joined.append(arg)
    return joined


def main(argv=None):
    argv = join_negative_values(sys.argv[1:] if argv is None else list(argv))
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    prog = f"microgradnorm {args.command}"
    if unknown:             # argparse would name "microgradnorm", not the command that refused
        parser.commands.choices[args.command].error(
            f"unrecognized arguments: {' '.join(unknown)}")
    # programs reuse freed arrays' memory (no page faults), unless the environment says no
    backend.keep_freed_memory_by_default()
    threads = (contextlib.nullcontext() if args.command in OWN_THREADS else
               one_blas_thread(every_blas=getattr(args, "numba_kernels", True)))
    try:
        with threads:
            args.run(args)
    except (ValueError, TypeError) as error:
        print(error_line(prog, error), file=sys.stderr)
        return 2
    except OSError as error:            # a file or directory it could not read or write
        where = f"{error.filename}: " if error.filename else ""
        print(f"{prog}: {where}{error.strerror or error}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{prog}: out of memory; use smaller sizes (see {prog} --help)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``microgradnorm`` command line: one sub-command per module of this package."""

import argparse
import sys

from .. import backend
from . import bench, compare, demo, explain, graph, memory, precision, train

# in the order ``--help`` lists them
COMMANDS = (demo, graph, compare, bench, train, precision, memory, explain)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="microgradnorm",
        description="A miniature autograd engine whose subject is normalization.")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    backend.keep_freed_memory()       # programs: reuse freed arrays' memory (no page faults)
    try:
        args.run(args)
    except (ValueError, TypeError) as error:
        print(f"microgradnorm {args.command}: {error}", file=sys.stderr)
        return 2
    except OSError as error:            # a file or directory it could not read or write
        where = f"{error.filename}: " if error.filename else ""
        print(f"microgradnorm {args.command}: {where}{error.strerror or error}",
              file=sys.stderr)
        return 1
    except MemoryError:
        print(f"microgradnorm {args.command}: out of memory; use smaller sizes (see "
              f"microgradnorm {args.command} --help)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the example scripts share with the commands: an argument error is one line and exit
code 2, ``--quick`` fills in only the options the user did not give, and ``--out`` is
checked before any work."""

import argparse

from .common import check_out_dir, positive_int


class ScriptParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr (no usage) and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def positive_ints(text):
    """``"6,12"`` -> ``[6, 12]``, each an int >= 1 (argparse names the option)."""
    return [positive_int(part) for part in text.split(",")]


def parse_args(parser, argv=None, quick=None):
    """Parse ``argv``; with ``--quick``, each option of ``quick`` ({dest: value}) that
    ``argv`` does not give takes its quick value. A ``--out`` directory is made and checked
    writable here, before the script does any work."""
    args = parser.parse_args(argv)
    if quick and getattr(args, "quick", False):
        # argparse leaves an attribute the namespace already has unless argv gives it
        unset = object()
        given = parser.parse_args(argv, argparse.Namespace(**dict.fromkeys(quick, unset)))
        for name, value in quick.items():
            if getattr(given, name) is unset:
                setattr(args, name, value)
    if getattr(args, "out", None) is not None:
        try:
            check_out_dir(args.out)
        except ValueError as error:
            parser.error(str(error))
    return args

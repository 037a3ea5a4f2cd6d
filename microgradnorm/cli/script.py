"""What the example scripts share with the commands: a rejection is one line and exit code
2 (``CliParser``), ``--quick`` fills in only the options the user did not give, the
script's own checks and ``--out`` run before any work, and the work runs on one BLAS
thread (``one_blas_thread``)."""

import argparse
import os
import sys

from .common import CliParser, check_out_dir, error_line, one_blas_thread, positive_int

ScriptParser = CliParser            # the examples' name for it


def positive_ints(text):
    """``"6,12"`` -> ``[6, 12]``, each an int >= 1 (argparse names the option)."""
    return [positive_int(part) for part in text.split(",")]


def parse_args(parser, argv=None, quick=None, check=None):
    """Parse ``argv``; with ``--quick``, each option of ``quick`` ({dest: value}) that
    ``argv`` does not give takes its quick value. Then ``check(args)``, where a script
    checks what its options must satisfy together, raising ValueError (one line, exit code
    2, like argparse's own errors); then a ``--out`` directory is made and checked writable,
    all before the script does any work."""
    args = parser.parse_args(argv)
    if quick and getattr(args, "quick", False):
        # argparse leaves an attribute the namespace already has unless argv gives it
        unset = object()
        given = parser.parse_args(argv, argparse.Namespace(**dict.fromkeys(quick, unset)))
        for name, value in quick.items():
            if getattr(given, name) is unset:
                setattr(args, name, value)
    try:
        if check is not None:
            check(args)
        if getattr(args, "out", None) is not None:
            check_out_dir(args.out)
    except ValueError as error:
        parser.error(str(error))
    return args


def run_script(main):
    """Run an example's ``main()`` as a program: on one BLAS thread, and a ValueError or
    TypeError that escapes it (a combination of options no check caught) as one line on
    stderr with exit code 2, as the commands do."""
    try:
        with one_blas_thread():
            main()
    except (ValueError, TypeError) as error:
        print(error_line(os.path.basename(sys.argv[0]), error), file=sys.stderr)
        raise SystemExit(2) from None

"""Reproduce the CPU table of docs/benchmarks.md.

    PYTHONPATH=. python benchmarks/cpu.py                # every norm, shape and dtype
    PYTHONPATH=. python benchmarks/cpu.py --norm layer_norm rms_norm --dtype float32

Arguments are those of ``microgradnorm bench`` (``--device cpu`` is implied); the table is
printed last. Run it on a quiet machine: the medians of a shared one are noisy.
"""

import sys

from microgradnorm import cli

if __name__ == "__main__":
    sys.exit(cli.main(["bench", "--device", "cpu", *sys.argv[1:]]))

"""Run the GPU benchmark of docs/gpu.md: every CUDA kernel validated against the float64
reference, then timed against the device's copy bandwidth, our composite graph and PyTorch.

    PYTHONPATH=. python benchmarks/gpu.py                      # the full table (needs a GPU)
    PYTHONPATH=. python benchmarks/gpu.py --quick              # small inputs, seconds
    PYTHONPATH=. python benchmarks/gpu.py --norm rms_norm --dtype bfloat16

Arguments are those of ``microgradnorm bench`` (``--device cuda`` is implied).
"""

import sys

from microgradnorm import cli

if __name__ == "__main__":
    sys.exit(cli.main(["bench", "--device", "cuda", *sys.argv[1:]]))

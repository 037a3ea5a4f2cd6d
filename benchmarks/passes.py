"""Where the time of a fused row norm goes: the cost of the elementary operations that the
blocked NumPy kernels (``kernels.blocked``) are built from, at one shape, over the whole
array and over the cache-sized row blocks the kernels use.

    PYTHONPATH=. python benchmarks/passes.py [M D] [float32|float64]

Multiply a row by the number of such operations in a kernel (see docs/benchmarks.md) to
account for its time; the copy line is the floor set by main memory.
"""

import sys

import numpy as np

from microgradnorm.cli import bench_harness
from microgradnorm.kernels import blocked as blocked_kernels


def operations(x, other, w, r, ones, out):
    return {
        "copy (np.copyto)": lambda: np.copyto(out, x),
        "x * other -> out (two full inputs)": lambda: np.multiply(x, other, out=out),
        "out *= w (per-column factor)": lambda: np.multiply(out, w, out=out),
        "out *= r[:, None] (per-row factor)": lambda: np.multiply(out, r[:, None], out=out),
        "x @ ones (BLAS row sums)": lambda: x @ ones,
        "r @ x (BLAS column sums)": lambda: r @ x,
        "x.sum(axis=0) (NumPy column sums)": lambda: x.sum(axis=0),
        "5 x (out *= w), one after another": lambda: [np.multiply(out, w, out=out)
                                                      for _ in range(5)],
    }


def main(rows=4096, size=1024, dtype="float32", repeat=15):
    rng = np.random.default_rng(0)
    x, other = (rng.standard_normal((rows, size)).astype(dtype) for _ in range(2))
    w, ones = np.ones(size, dtype), np.ones(size, dtype)     # w = 1: repeats stay finite
    r = rng.standard_normal(rows).astype(dtype)
    out = np.empty_like(x)
    blocks = blocked_kernels._row_blocks(x)
    print(f"{rows}x{size} {dtype}: median ms per full-array pass; blocked = the same work "
          f"done in {len(blocks)} blocks of {blocks[0].stop} rows, as the kernels do")
    whole = operations(x, other, w, r, ones, out)
    parts = [operations(x[b], other[b], w, r[b], ones, out[b]) for b in blocks]
    for name, fn in whole.items():
        def blocked(name=name):
            for ops in parts:
                ops[name]()
        t_whole = bench_harness.time_call(fn, repeat).median * 1e3
        t_blocked = bench_harness.time_call(blocked, repeat).median * 1e3
        print(f"  {name:<38} whole {t_whole:7.3f}   blocked {t_blocked:7.3f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    shape = (int(args[0]), int(args[1])) if len(args) >= 2 else (4096, 1024)
    main(*shape, dtype=args[2] if len(args) >= 3 else "float32")

"""Seeded bugs for the differential fuzzer: each mutation is applied to a copy of the
repository, ``tests/engine/test_fuzz.py`` runs there, and the table says whether it caught the
bug, how long it took and the program it reported. The repository itself is never edited.

    python tests/meta/mutate.py                 # every mutation, the default profile, as CI runs it
                                           # (derandomized: the same examples every run)
    python tests/meta/mutate.py --profile fuzz  # a longer search per mutation

docs/testing.md shows the table of the latest run.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (name, file, the exact text replaced, its replacement, what the bug is)
MUTATIONS = [
    ("unbroadcast keeps stretched dims", "microgradnorm/ops/base.py",
     "    if 1 in shape:\n", "    if False:\n",
     "unbroadcast forgets to sum over size-1 dims that broadcasting stretched"),
    ("unbroadcast sums the wrong leading axes", "microgradnorm/ops/base.py",
     "grad = reduce_sum(grad, tuple(range(extra)), False)",
     "grad = reduce_sum(grad, tuple(range(1, extra + 1)), False)",
     "off by one in the axes that broadcasting added"),
    ("Max ties not shared", "microgradnorm/ops/reductions.py",
     "return is_extreme * (grad.reshape(out.shape) / count.astype(grad.dtype))",
     "return is_extreme * grad.reshape(out.shape)",
     "every tied maximum gets the full gradient instead of 1/count"),
    ("Max ties off by one", "microgradnorm/ops/reductions.py",
     "count = is_extreme.sum(axis=ctx.axis, keepdims=True)",
     "count = (lambda c: c - (c > 1))(is_extreme.sum(axis=ctx.axis, keepdims=True))",
     "the tie count is one short when there is a tie"),
    ("fused dweight without rstd", "microgradnorm/kernels/blocked.py",
     "dweight += rb @ dy_xc", "dweight += ones_rows[:rows_here] @ dy_xc",
     "the fused LayerNorm/RMSNorm weight gradient uses x - mean instead of x̂"),
    ("running_var updated with the biased variance", "microgradnorm/kernels/reference.py",
     "unbiased = var * (count / (count - 1))", "unbiased = var",
     "BatchNorm's running_var moves towards the biased batch variance (both impls)"),
    ("Permute backward uses the axes", "microgradnorm/ops/shape.py",
     "return grad.transpose(np.argsort(ctx.axes))",
     "return grad.transpose(ctx.axes)",
     "permute's backward applies the permutation instead of its inverse"),
    ("Maximum tie split 1/½", "microgradnorm/ops/elementwise.py",
     "unbroadcast(xp.where(beats(b, a), 0, shared).astype(grad.dtype), a.shape)",
     "unbroadcast(xp.where(beats(b, a), 0, grad).astype(grad.dtype), a.shape)",
     "maximum gives a tie's whole gradient to a instead of half (b keeps its half)"),
]


def run(name, path, old, new, profile):
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "__pycache__",
                                                                   "*.egg-info"))
        target = copy / path
        text = target.read_text()
        if text.count(old) != 1:
            raise SystemExit(f"{name}: the text to replace occurs {text.count(old)} times "
                             f"in {path}; update MUTATIONS")
        target.write_text(text.replace(old, new))
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
             "tests/engine/test_fuzz.py", f"--hypothesis-profile={profile}"],
            cwd=copy, capture_output=True, text=True, timeout=3600,
            env={**os.environ, "CI": "true"})      # derandomized: CI's examples, reproducible
        seconds = time.perf_counter() - start
    caught = result.returncode != 0
    program = re.search(r"(?:value \d+|gradient of leaf \d+ \([^)]*\)|running statistic \d+); "
                        r"program: (.*)$", result.stdout, flags=re.M)
    if program is None:                        # an exception other than a value mismatch
        program = re.search(r"^E\s+((?:RuntimeError|ValueError|IndexError): .*)$",
                            result.stdout, flags=re.M)
    return caught, seconds, program.group(1)[:150] if program else ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="microgradnorm")
    parser.add_argument("--only", help="run the mutations whose name contains this")
    args = parser.parse_args(argv)
    print("| mutation | the bug | file | caught | seconds | failure reported (shrunk) |")
    print("|---|---|---|---|---|---|")
    missed = 0
    for name, path, old, new, bug in MUTATIONS:
        if args.only and args.only not in name:
            continue
        caught, seconds, program = run(name, path, old, new, args.profile)
        missed += not caught
        print(f"| {name} | {bug} | `{path}` | {'yes' if caught else 'NO'} | {seconds:.0f} | "
              f"`{program}` |", flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The bandwidth model of docs/gpu.md ("Predicted bandwidth"): a model, not a measurement.

    PYTHONPATH=. python benchmarks/gpu_model.py                  # this tree's columns
    PYTHONPATH=. python benchmarks/gpu_model.py --before 29f31b2  # a git ref's columns first

For every row length and dtype of the table it compiles the launcher's instantiations with
``nvcc -Xptxas -v`` (sm_90), reads registers and shared memory from ptxas, derives the
blocks an H100 SM holds, and applies Little's law over a row's whole iteration
(``predict``). Needs nvcc; no GPU.
"""

import argparse
import importlib.util
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(__file__), "..", "tests", d)
                for d in ("kernels", "helpers")]

from test_cuda_compile import instantiating_unit  # noqa: E402
from test_cuda_resources import mangled  # noqa: E402

from microgradnorm.kernels import cuda, launch  # noqa: E402

# H100 SXM (assumed, not measured): copy bandwidth, loaded DRAM latency, SMs, clock, and an
# SM's registers, threads, blocks and shared memory.
BANDWIDTH = 3.0e12          # bytes/s
LATENCY = 700e-9            # s
SMS = 132
CLOCK = 1.7e9               # Hz
SM_REGISTERS, SM_THREADS, SM_BLOCKS, SM_SHARED = 65536, 2048, 32, 228 * 1024
# Cycles of the work between a row's data arriving and the next row's loads (assumed):
# a float add or fma in a dependent chain, a warp's 5 shuffle steps, a block-wide sum's
# shared-memory round and barrier, and the issue slots of one value's final pass.
ADD_CYCLES, SHUFFLE_CYCLES, BARRIER_CYCLES, ISSUE_PER_VALUE = 4, 28, 100, 8
ROWS = 32768
COLS = (1024, 2048, 4096, 8192, 1025, 4100, 8191)
DTYPES = ("float32", "float16", "bfloat16")


def ptxas_resources(source, names):
    """{name expression: (registers, spill bytes, static shared bytes)} from ptxas -v."""
    with tempfile.TemporaryDirectory() as directory:
        unit = os.path.join(directory, "model.cu")
        with open(unit, "w", encoding="utf-8") as file:
            file.write(instantiating_unit(os.path.abspath(source), sorted(names)))
        run = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-Xptxas", "-v",
                              launch.BFLOAT16_OPTION, "-o", os.path.join(directory, "m.cubin"),
                              unit], capture_output=True, text=True, check=True)
    found, current = {}, None
    for line in (run.stdout + run.stderr).splitlines():
        match = re.search(r"Compiling entry function '(\w+)'", line)
        if match:
            current = match.group(1)
            found[current] = [0, 0, 0]
        match = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if match and current:
            found[current][1] = int(match.group(1)) + int(match.group(2))
        match = re.search(r"Used (\d+) registers.*?(\d+) bytes smem", line)
        if match and current:
            found[current][0], found[current][2] = int(match.group(1)), int(match.group(2))
    def prefixes(name):       # without the UNEVEN argument too: older sources lack it
        prefix = mangled(name)
        return (prefix, prefix[:-len("Lb0EE")] + "E") if prefix.endswith("Lb0EE") else (prefix,)

    return {name: next(tuple(v) for k, v in found.items() if k.startswith(prefixes(name)))
            for name in names}


def blocks_per_sm(registers, shared, block):
    """Blocks of ``block`` threads an SM holds: registers (allocated per warp in units of
    256), threads, blocks and shared memory (1 KiB reserved a block)."""
    warps = -(-block // 32)
    per_warp = -(-registers * 32 // 256) * 256
    return min(SM_REGISTERS // (warps * per_warp), SM_THREADS // block, SM_BLOCKS,
               SM_SHARED // (shared + 1024))


def configurations(dtype, cols, launcher=launch):
    """(pass, config, name expression) of the forward and backward that ``launcher`` (the
    module ``kernels.cuda``, or an older one) runs."""
    vec = launcher.vector_width(launch.ITEMSIZE[dtype], cols, [256])
    out = []
    for kernel, pick in (("norm_forward", launcher.forward_config),
                         ("norm_backward", launcher.backward_config)):
        config = pick(cols, vec)
        uneven = {"uneven": True} if cols % config.vec else {}
        out.append((kernel, config, launcher.kernel_name(
            kernel, launch.CXX_TYPES[dtype], config.vec, config.nv, launcher.launch_bound(config),
            **uneven)))
    return out


def prefetches(source):
    """The nv whose kernels prefetch the next row (NORM_PREFETCH_NV in the source), or
    None."""
    with open(source, encoding="utf-8") as file:
        match = re.search(r"#define NORM_PREFETCH_NV (\d+)", file.read())
    return int(match.group(1)) if match else None


def resident_blocks(kernel, config, resources):
    """Blocks of a launch an SM holds at once: as many as fit (``blocks_per_sm``); the
    backward's one-wave grid asks for no more than 1024 threads' worth."""
    registers, _, shared = resources
    resident = blocks_per_sm(registers, shared, config.block)
    if kernel == "norm_backward":
        resident = min(resident, -(-launch.BACKWARD_RESIDENT_THREADS // config.block))
    return resident


def predict(kernel, dtype, cols, config, resident, prefetch):
    """(average KiB of loads in flight an SM, predicted share of copy bandwidth) for
    LayerNorm at ``ROWS`` rows with ``resident`` blocks an SM: Little's law over one
    iteration of a row group (docs/gpu.md). ``prefetch``: the next row's loads are issued
    before this row's work."""
    backward = kernel == "norm_backward"
    itemsize = launch.ITEMSIZE[dtype]
    row_bytes = cols * itemsize
    reads, writes = (2, 1) if backward else (1, 1)                # x (and dy); y or dx
    values = config.nv * config.vec                               # a thread's, of a row
    passes = 1 if backward else 2                                 # dependent sums a row
    shuffle = 5 * (SHUFFLE_CYCLES + ADD_CYCLES)
    block_sum = BARRIER_CYCLES + (config.threads_per_row // 32) * ADD_CYCLES
    reduce = shuffle + (block_sum if config.threads_per_row > 32 else 0)
    warps_per_scheduler = resident * config.block / 32 / 4
    issue = values * ISSUE_PER_VALUE * warps_per_scheduler * (2 if backward else 1)
    work = (passes * (values * ADD_CYCLES + reduce) + issue) / CLOCK     # seconds
    # Without prefetch a row group waits for its loads, then works: the loads are in flight
    # for LATENCY of each iteration. With it, the next row's loads cover the whole iteration.
    iteration = max(LATENCY, work) if prefetch else LATENCY + work
    groups = resident * config.rows_per_block
    bytes_read = groups * reads * row_bytes                       # an iteration, an SM
    in_flight = bytes_read * LATENCY / iteration                  # Little's law, averaged
    rate = groups * (reads + writes) * row_bytes / iteration      # bytes/s an SM
    share = min(1.0, rate / (BANDWIDTH / SMS))
    if backward:      # the dweight/dbias partials: written once and read once, at copy speed
        grid = min(SMS * resident, -(-ROWS // config.rows_per_block))
        main = ROWS * (reads + writes) * row_bytes
        extra = 2 * 2 * grid * launch.partial_stride(cols) * 4
        launches = len(launch.sum_partials_launches(grid, cols))
        seconds = main / (share * BANDWIDTH) + extra / BANDWIDTH + launches * 2 * LATENCY
        share = main / BANDWIDTH / seconds
    return in_flight / 1024, share


def mapping(config):
    threads = "warp" if config.threads_per_row == 32 else str(config.threads_per_row)
    return f"{threads} × {config.nv}" + (" (vec 1)" if config.vec == 1 else "")


def table(columns):
    """The markdown rows of docs/gpu.md's table: for each (norms.cu path, launcher module)
    of ``columns`` (before, after), the mapping, ptxas' registers and the model's figures."""
    lines = []
    plans = [{(d, c): configurations(d, c, launcher) for d in DTYPES for c in COLS}
             for _, launcher in columns]
    resources = [ptxas_resources(source, {n for plan in plans[i].values() for _, _, n in plan})
                 for i, (source, _) in enumerate(columns)]
    for cols in COLS:
        for dtype in DTYPES:
            for step, kernel in enumerate(("norm_forward", "norm_backward")):
                cells = [str(cols), dtype, "fwd" if kernel == "norm_forward" else "bwd"]
                for i, (source, _) in enumerate(columns):
                    _, config, name = plans[i][dtype, cols][step]
                    registers, spills, _ = resources[i][name]
                    resident = resident_blocks(kernel, config, resources[i][name])
                    prefetch = config.nv == prefetches(source)
                    in_flight, share = predict(kernel, dtype, cols, config, resident, prefetch)
                    spilled = f" ({spills} B spilled)" if spills else ""
                    cells += [mapping(config), f"{registers}{spilled}",
                              f"{resident} × {config.block}", f"{in_flight:.1f}",
                              f"{math.floor(100 * share)} %"]
                lines.append("| " + " | ".join(cells) + " |")
    return lines


def older_launcher(ref, directory):
    """(norms.cu path, kernels.cuda module) as they were at git ``ref``."""
    root = os.path.join(os.path.dirname(__file__), "..")
    files = []
    for path in (cuda.SOURCE, cuda.__file__):
        relative = os.path.relpath(path, root)
        files.append(os.path.join(directory, os.path.basename(path)))
        with open(files[-1], "w", encoding="utf-8") as file:
            file.write(subprocess.run(["git", "show", f"{ref}:{relative}"], cwd=root,
                                      capture_output=True, text=True, check=True).stdout)
    spec = importlib.util.spec_from_file_location("microgradnorm.kernels.cuda_before",
                                                  files[1])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return files[0], module


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a git ref whose norms.cu and launcher give the "
                                         "first columns")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        columns = [(cuda.SOURCE, cuda)]
        if args.before:
            columns.insert(0, older_launcher(args.before, directory))
        print("\n".join(table(columns)))


if __name__ == "__main__":
    main()

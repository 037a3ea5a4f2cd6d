"""NumPy's BLAS against PyTorch's on the matrix products of one training step of the tiny
GPT, one product at a time: is OpenBLAS, as NumPy ships it, what separates the step's
products from PyTorch's, and does forcing another OpenBLAS kernel set, or another NumPy
build, help?

    PYTHONPATH=. python benchmarks/blas.py                    # OpenBLAS as it detects the CPU
    PYTHONPATH=. python benchmarks/blas.py --coretype auto Haswell SkylakeX Zen
    PYTHONPATH=. python benchmarks/blas.py --threads 1 2      # NumPy and PyTorch, n threads each
    PYTHONPATH=. python benchmarks/blas.py --threads 1 2 --numpy-only   # NumPy's threads alone
    PYTHONPATH=. python benchmarks/blas.py --python here=python other=/tmp/venv/bin/python
    PYTHONPATH=. python benchmarks/blas.py --products         # every product's row as well
    PYTHONPATH=. python benchmarks/blas.py --quick            # a tiny GPT, few repeats: seconds

The products are those of ``nn.GPT`` at the sizes of ``microgradnorm bench --train``
(d_model 64, 2 layers, context 64, and d_model 128, 4 layers, context 128; batch 16, 4
heads, vocabulary 64): one step (forward, cross-entropy, backward, AdamW) runs with
``ops.linalg._matmul``, through which every Tensor product goes, recording each call's
operands: the Linears' and, since the step runs with composite norms and attention, the
attention's q·kᵀ and P·v and their gradients (the fused attention node makes the same
products in blocks inside its kernel, where they cannot be recorded). Each distinct
product (shapes, and the strides that make an operand a transposed or row-strided view, as
``k.mT`` and the q, k, v slices of the qkv output are) is rebuilt on random data in float32
and float64 and timed as the step calls it, ``a @ b``, against ``torch.matmul`` (``mm`` for
two matrices, batched ``bmm`` otherwise) on the same memory (``torch.from_numpy``), in turns,
by the process's CPU time (medians; each sample repeats a small product to about 2 ms). A
step's time is the sum over its products of count × median.

OpenBLAS chooses its kernels for the CPU when it loads (threadpoolctl's ``architecture``);
``OPENBLAS_CORETYPE`` forces a kernel set, and is read only then, so each configuration
(``--python`` × ``--coretype`` × ``--threads``) times the products in a fresh process of
this file, with the variable set ("auto": removed, OpenBLAS detects the CPU) and the BLAS
thread variables (OpenBLAS, MKL, BLIS) and ``torch.set_num_threads`` at the thread count. A
kernel set the CPU cannot execute ends its process with SIGILL; the table says so. The
timing process imports only NumPy (and PyTorch, threadpoolctl when they are there), so
``--python`` may name any interpreter, such as a virtual environment with another NumPy
build; glibc keeps freed memory there as ``backend.keep_freed_memory()`` has it
(``GLIBC_TUNABLES``), so large outputs cost no page faults on either side. Configurations
run in turns, ``--rounds`` times.

Columns: numpy ms and torch ms are a step's products by CPU time; numpy/torch is their
ratio in the same process (above 1: NumPy's BLAS is slower); "vs first" compares NumPy's
time with the first configuration's (another process, so less steady); "wall" gives both
by the wall clock, which is what a second thread can shorten (CPU time adds up every
thread's work, a thread spinning for a core included).
"""

import argparse
import collections
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES = ((64, 2, 64, 16), (128, 4, 128, 16))  # (d_model, layers, context, batch): bench --train
QUICK_SIZES = ((16, 1, 8, 2),)
VOCAB, HEADS = 64, 4
SAMPLE_SECONDS = 2e-3                     # a small product is repeated to about this per sample
UNSTEADY = 0.2                            # IQR / median above which a ratio is marked "?"
CPU_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile")
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
# backend.keep_freed_memory()'s mallopt, as the command line runs the step, for any
# interpreter: glibc keeps freed blocks below 32 MiB and up to 1 GiB freed at the top
KEEP_FREED_MEMORY = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824"


# ----- the products of one step (this process) ----------------------------------------------
def product_label(a_shape, a_strides, b_shape, b_strides):
    """"(1024x64)N @ (64x192)T": N an operand with unit stride along its rows, T a
    transposed view (unit stride down its columns); a batch count first."""
    def side(shape, strides):
        order = "T" if strides[-1] != 1 and shape[-1] > 1 else "N"
        return f"({shape[-2]}x{shape[-1]}){order}"
    batch = int(np.prod(np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))))
    text = f"{side(a_shape, a_strides)} @ {side(b_shape, b_strides)}"
    return f"{batch} x {text}" if batch > 1 else text


def step_products(d_model, n_layers, context, batch):
    """The distinct products of one training step of ``nn.GPT`` (composite, float32), each
    a dict of its operands' shapes and strides (in elements: one record serves float32 and
    float64) and its count of calls."""
    from microgradnorm.cli import bench_train
    from microgradnorm.ops import linalg

    step, _ = bench_train.gpt_training_step("composite", VOCAB, context, d_model, HEADS,
                                            n_layers, batch, dtype="float32")
    counts = collections.Counter()
    original = linalg._matmul

    def recording(a, b):
        counts[(a.shape, tuple(s // a.itemsize for s in a.strides),
                b.shape, tuple(s // b.itemsize for s in b.strides))] += 1
        return original(a, b)

    linalg._matmul = recording
    try:
        step()
    finally:
        linalg._matmul = original
    return [{"d_model": d_model, "a_shape": a, "a_strides": sa, "b_shape": b,
             "b_strides": sb, "count": count} for (a, sa, b, sb), count in counts.items()]


def expected_calls(n_layers):
    """The products a step of ``nn.GPT`` makes: 3 per Linear (forward, dx, dW; 4 a block and
    the head) and 6 per attention (q·kᵀ and P·v, and two gradients each)."""
    return 3 * (4 * n_layers + 1) + 6 * n_layers


def describe_products(sizes, products):
    """A line per size: distinct products and calls, and a warning when some of the
    step's products did not go through ``ops.linalg._matmul`` and so are not timed."""
    lines = []
    for d_model, n_layers, *_ in sizes:
        mine = [p for p in products if p["d_model"] == d_model]
        calls, expected = sum(p["count"] for p in mine), expected_calls(n_layers)
        lines.append(f"  d_model {d_model}, {n_layers} layers: {len(mine)} distinct products, "
                     f"{calls} calls a step" + ("" if calls == expected else
                                                f" (WARNING: nn.GPT makes {expected}; the "
                                                "rest bypass ops.linalg._matmul)"))
    return "\n".join(lines)


# ----- timing (a fresh process: NumPy, and PyTorch when it imports) -------------------------
def strided(shape, strides, dtype, rng):
    """Random values in a view of ``shape`` and ``strides`` (elements), over the smallest
    buffer that holds it (the step's own buffer may be larger: the qkv output)."""
    size = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    base = rng.standard_normal(size).astype(dtype)
    return np.lib.stride_tricks.as_strided(base, shape, [s * base.itemsize for s in strides])


def median_and_spread(samples):
    if len(samples) < 2:
        return samples[0], 0.0
    low, median, high = statistics.quantiles(samples, n=4, method="inclusive")
    return median, (high - low) / median


def time_product(product, dtype, repeat, sample_seconds, rng, torch=None):
    """Per-call medians of ``a @ b`` and, given the ``torch`` module, ``torch.matmul``, by
    CPU time and by the wall clock, timed in turns (numpy, torch, numpy, ...)."""
    a = strided(product["a_shape"], product["a_strides"], dtype, rng)
    b = strided(product["b_shape"], product["b_strides"], dtype, rng)
    fns = {"numpy": lambda: a @ b}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        fns["torch"] = lambda: torch.matmul(ta, tb)
    calls = {}
    for name, fn in fns.items():                                # warm-up, then one call
        fn()
        start = time.process_time()
        fn()
        one = max(time.process_time() - start, 1e-7)
        calls[name] = max(1, min(1000, round(sample_seconds / one)))
    cpu, wall = {name: [] for name in fns}, {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(calls[name]):
                fn()
            cpu[name].append((time.process_time() - start_cpu) / calls[name])
            wall[name].append((time.perf_counter() - start_wall) / calls[name])
    result = {}
    for name in fns:
        median, spread = median_and_spread(cpu[name])
        result[name] = {"cpu": median, "wall": statistics.median(wall[name]),
                        "spread": spread}
    return result


def blas_description():
    """NumPy's BLAS as threadpoolctl reads it: name, version, kernels, threads."""
    try:
        import threadpoolctl
    except ImportError:
        return {"name": "?", "kernels": "? (threadpoolctl not installed)", "threads": "?"}
    found = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    # NumPy's own (numpy.libs/), not SciPy's copy, when both are loaded
    ours = [i for i in found
            if os.path.basename(os.path.dirname(i["filepath"])).startswith("numpy")]
    if not found:
        return blis_renamed()
    info = (ours or found)[0]
    version = re.match(r"[\d.]*", info.get("version") or "").group().split(".")
    version = ".".join(version[:3])
    kernels = info.get("architecture") or info.get("threading_layer") or "?"
    return {"name": f"{info['internal_api']} {version}".strip(), "kernels": kernels,
            "threads": info["num_threads"]}


def blis_renamed():
    """BLIS loaded as libblas.so.3 (Debian's alternatives), a name threadpoolctl does not
    look for: its version and kernels from the libblis beside it (the same build; the
    kernels are chosen by CPUID alike)."""
    import ctypes
    import glob
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "libblas" in line})
    except OSError:
        paths = []
    for path in paths:
        beside = glob.glob(os.path.join(os.path.dirname(os.path.realpath(path)), "libblis*.so*"))
        if not beside:
            continue
        library = ctypes.CDLL(beside[0])
        for name in ("bli_info_get_version_str", "bli_arch_string"):
            getattr(library, name).restype = ctypes.c_char_p
        return {"name": f"blis {library.bli_info_get_version_str().decode()}",
                "kernels": library.bli_arch_string(library.bli_arch_query_id()).decode(),
                "threads": os.environ.get("BLIS_NUM_THREADS", "?")}
    return {"name": "none found", "kernels": "?", "threads": "?"}


def torch_description(torch):
    if torch is None:
        return "no torch"
    version = re.search(r"Math Kernel Library Version ([\w.]+)", torch.__config__.show())
    blas = f"MKL {version.group(1)}" if version else "its BLAS"
    return f"torch {torch.__version__} ({blas}, {torch.get_num_threads()} thread(s))"


def child():
    """Time the products read from stdin; print one line of JSON."""
    job = json.load(sys.stdin)
    torch = None
    if job["torch"]:
        try:
            import torch
        except ImportError:
            pass
        else:
            torch.set_num_threads(int(os.environ.get("OPENBLAS_NUM_THREADS", "1")))
    rng = np.random.default_rng(0)
    records = []
    for product in job["products"]:
        for dtype in job["dtypes"]:
            times = time_product(product, dtype, job["repeat"], job["sample_seconds"], rng,
                                 torch)
            records.append({**product, "dtype": dtype, "times": times})
    print(json.dumps({"python": platform.python_version(), "numpy": np.__version__,
                      "blas": blas_description(), "torch": torch_description(torch),
                      "records": records}))


# ----- configurations, each in a fresh process ----------------------------------------------
def run_configuration(python, coretype, threads, job):
    env = {**os.environ, **{name: str(threads) for name in THREAD_VARIABLES},
           "GLIBC_TUNABLES": KEEP_FREED_MEMORY}
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype != "auto":
        env["OPENBLAS_CORETYPE"] = coretype
    done = subprocess.run([python, os.path.abspath(__file__), "--child"], env=env,
                          input=json.dumps(job), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        why = f"exit {done.returncode}" if done.returncode > 0 else \
            f"signal {-done.returncode}" + (" (SIGILL: the CPU cannot run these kernels)"
                                            if done.returncode == -4 else "")
        return {"failed": why, "stderr": done.stderr.strip().splitlines()[-3:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def step_totals(result):
    """{(d_model, dtype): {impl: {"cpu", "wall"}: seconds per step}}: count × median."""
    totals = collections.defaultdict(lambda: collections.defaultdict(
        lambda: {"cpu": 0.0, "wall": 0.0}))
    for r in result["records"]:
        for impl, t in r["times"].items():
            for clock in ("cpu", "wall"):
                totals[(r["d_model"], r["dtype"])][impl][clock] += r["count"] * t[clock]
    return totals


def flops(record):
    batch = np.prod(np.broadcast_shapes(tuple(record["a_shape"][:-2]),
                                        tuple(record["b_shape"][:-2])))
    return 2 * batch * record["a_shape"][-2] * record["a_shape"][-1] * record["b_shape"][-1]


def format_products(name, result):
    lines = [f"  products, {name}: calls per step, NumPy's GFLOP/s, ms per call",
             f"  {'d_model':>7}  {'dtype':<7}  {'product':<36}  {'count':>5}  "
             f"{'GFLOP/s':>7}  {'numpy ms':>9}  {'torch ms':>9}  {'numpy/torch':>11}"]
    for r in result["records"]:
        numpy, torch = r["times"]["numpy"], r["times"].get("torch")
        label = product_label(r["a_shape"], r["a_strides"], r["b_shape"], r["b_strides"])
        if torch is None:
            torch_ms, ratio = "n/a", "n/a"
        else:
            torch_ms = f"{torch['cpu'] * 1e3:.4f}"
            steady = max(numpy["spread"], torch["spread"]) <= UNSTEADY
            ratio = f"{numpy['cpu'] / torch['cpu']:.2f}" + ("" if steady else "?")
        lines.append(f"  {r['d_model']:>7}  {r['dtype']:<7}  {label:<36}  {r['count']:>5}  "
                     f"{flops(r) / numpy['cpu'] / 1e9:>7.1f}  {numpy['cpu'] * 1e3:>9.4f}  "
                     f"{torch_ms:>9}  {ratio:>11}")
    return "\n".join(lines)


def format_ratios(rows):
    """One line per configuration, step and dtype: the table of ratios, by CPU time, then
    the wall clock's milliseconds (which tell what a second thread buys)."""
    header = (f"  {'configuration':<22}  {'numpy BLAS, kernels':<28}  {'threads':>7}  "
              f"{'d_model':>7}  {'dtype':<7}  {'numpy ms':>9}  {'torch ms':>9}  "
              f"{'numpy/torch':>11}  {'vs first':>8}  {'wall: numpy':>11}  {'torch':>9}")
    lines, first = [header, "  " + "-" * (len(header) - 2)], {}
    for (name, threads), result in rows:
        if "failed" in result:
            lines.append(f"  {name:<22}  {'-':<28}  {threads:>7}  failed: {result['failed']}")
            continue
        blas = f"{result['blas']['name']} {result['blas']['kernels']}"
        for (d_model, dtype), t in sorted(step_totals(result).items()):
            numpy_ms = t["numpy"]["cpu"] * 1e3
            first.setdefault((d_model, dtype), numpy_ms)
            torch_ms, ratio, torch_wall = "n/a", "n/a", "n/a"
            if "torch" in t:
                torch_ms = f"{t['torch']['cpu'] * 1e3:.3f}"
                ratio = f"{t['numpy']['cpu'] / t['torch']['cpu']:.2f}"
                torch_wall = f"{t['torch']['wall'] * 1e3:.3f}"
            lines.append(f"  {name:<22}  {blas:<28}  {threads:>7}  {d_model:>7}  {dtype:<7}  "
                         f"{numpy_ms:>9.3f}  {torch_ms:>9}  {ratio:>11}  "
                         f"{numpy_ms / first[(d_model, dtype)]:>8.2f}  "
                         f"{t['numpy']['wall'] * 1e3:>11.3f}  {torch_wall:>9}")
    return "\n".join(lines)


def cpu_description():
    """The CPU model, its count, family and model numbers, and the vector extensions that
    decide which OpenBLAS kernels it can run, from /proc/cpuinfo."""
    fields, count = {}, 0
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                key, _, value = line.partition(":")
                key = key.strip()
                count += key == "processor"
                fields.setdefault(key, value.strip())
    except OSError:
        return platform.processor() or platform.machine()
    flags = set(fields.get("flags", "").split())
    has = " ".join(f for f in CPU_FLAGS if f in flags) or "none of " + " ".join(CPU_FLAGS)
    return (f"{fields.get('model name', platform.machine())} x {count} (family "
            f"{fields.get('cpu family', '?')} model {fields.get('model', '?')}); {has}")


def load():
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coretype", nargs="+", default=["auto"],
                        help='OPENBLAS_CORETYPE values, one process each; "auto" unsets it')
    parser.add_argument("--threads", nargs="+", type=int, default=[1])
    parser.add_argument("--python", nargs="+", default=[sys.executable],
                        help="interpreters that time the products, each LABEL=PATH or PATH")
    parser.add_argument("--d-model", nargs="+", type=int, default=[s[0] for s in SIZES],
                        choices=[s[0] for s in SIZES])
    parser.add_argument("--dtype", nargs="+", default=["float32", "float64"],
                        choices=["float32", "float64"])
    parser.add_argument("--repeat", type=int, default=0, help="samples per product (9)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of every configuration")
    parser.add_argument("--products", action="store_true", help="every product's row too")
    parser.add_argument("--numpy-only", action="store_true",
                        help="no PyTorch in the timing processes: its threads then take no "
                             "core from NumPy's (for --threads above 1)")
    parser.add_argument("--quick", action="store_true", help="a tiny GPT, 3 samples")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        return child()
    sizes = QUICK_SIZES if args.quick else [s for s in SIZES if s[0] in args.d_model]
    job = {"products": [p for size in sizes for p in step_products(*size)],
           "dtypes": args.dtype, "repeat": args.repeat or (3 if args.quick else 9),
           "sample_seconds": SAMPLE_SECONDS / (10 if args.quick else 1),
           "torch": not args.numpy_only}
    pythons = [p.split("=", 1) if "=" in p else (p, p) for p in args.python]
    print("benchmarks/blas.py: the matrix products of one nn.GPT training step, NumPy "
          "(a @ b) against torch.matmul, process CPU time, medians")
    print(f"  cpu: {cpu_description()}")
    print(f"  OPENBLAS_CORETYPE in this environment: {os.environ.get('OPENBLAS_CORETYPE')}; "
          f"malloc: freed memory kept (GLIBC_TUNABLES); load average at start: {load()}")
    print(describe_products(sizes, job["products"]))
    rows = []
    for _ in range(args.rounds):
        for label, python in pythons:
            for coretype in args.coretype:
                for threads in args.threads:
                    name = coretype if len(pythons) == 1 else f"{label}, {coretype}"
                    result = run_configuration(python, coretype, threads, job)
                    rows.append(((name, threads), result))
                    if "failed" in result:
                        print(f"  {name}: failed, {result['failed']}: "
                              + " | ".join(result["stderr"]))
                        continue
                    print(f"  {name}, {threads} thread(s): python {result['python']}, numpy "
                          f"{result['numpy']} with {result['blas']['name']} "
                          f"{result['blas']['kernels']} {result['blas']['threads']} "
                          f"thread(s); {result['torch']}")
    print(f"  load average at end: {load()}")
    if args.products:
        for (name, threads), result in rows:
            if "failed" not in result:
                print(format_products(f"{name}, {threads} thread(s)", result))
    print("  step: the sum over its products of count x median per call; numpy/torch above 1: "
          "NumPy slower")
    print(format_ratios(rows))


if __name__ == "__main__":
    main()

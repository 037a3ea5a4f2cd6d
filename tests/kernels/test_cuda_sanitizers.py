"""The CUDA kernels of norms.cu under sanitizers, on the CPU (docs/testing.md, "Sanitizers").

Two builds of the host emulation (tests/kernels/cuda_emulation/), each running a matrix of
kernel checks through ``kernels.cuda``'s launch path in one subprocess:

* memcheck: AddressSanitizer and UBSan, every array argument in an allocation of its exact
  size (a read one past the end stops the run), pointers to const checked unchanged, CUDA's
  alignment asserted on the vector types;
* racecheck: shared and global memory accesses recorded per barrier interval (hazards
  between threads and blocks, uninitialised shared reads, accesses misaligned for the
  vector the compiler assumed), barrier divergence and partial-warp shuffles.

The positive controls plant one bug each in a copy of norms.cu and check that the matching
sanitizer reports it. Each build compiles only the kernels its cases launch, found by running
the cases once through the plain build (conftest.py's ``plain_emulation``): a fraction of
every instantiation's compile time (the two builds of FAST's kernels took 7 s of CPU against
21 s). Without g++ and its sanitizer runtimes these tests skip, except in CI (CI=true),
where .ci/run installs them: there they fail.
"""

import concurrent.futures
import os
import re
import subprocess
import sys

import pytest
from kernel_checks import CONVENTION_CASES, DTYPES, KERNELS

from microgradnorm.kernels import cuda

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMULATION = os.path.join(ROOT, "tests", "kernels", "cuda_emulation")
sys.path.insert(0, EMULATION)
import emulation  # noqa: E402  (lives beside the emulation's headers)
import sanitize  # noqa: E402

pytestmark = pytest.mark.sanitizer
BUILDS = ("memcheck", "racecheck")


def _unavailable(why):
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI has the toolchain (.ci/run installs it): {why}")
    pytest.skip(str(why))


def _build(directory, kinds, **options):
    """{build: library path} for each build of ``kinds``, compiled side by side."""
    try:
        emulation.asan_runtime()
        with concurrent.futures.ThreadPoolExecutor(len(kinds)) as pool:
            futures = {kind: pool.submit(emulation.build, str(directory), kind, **options)
                       for kind in kinds}
            return {kind: future.result() for kind, future in futures.items()}
    except emulation.ToolchainMissing as error:
        _unavailable(error)


def _launched(plain_library, cases):
    """The names of the kernels ``cases`` launch: the launch log of a run through the plain
    build, in this process (the launch plans are the host's, whatever the build)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cuda, "_plans", {})
        log = emulation.install(plain_library, patch.setattr)
        for case in cases:
            sanitize.run(case)
    return {name for name, _, _ in log}


def _start(build, library, cases):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT, os.path.join(ROOT, "tests", "helpers"), EMULATION,
         os.environ.get("PYTHONPATH", "")]))
    if build == "memcheck":
        # Python itself is not instrumented: the runtime must be loaded first, and Python's
        # own allocations are not leaks to report.
        env.update(LD_PRELOAD=emulation.asan_runtime(),
                   ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:exitcode=86",
                   UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    return subprocess.Popen([sys.executable, os.path.join(EMULATION, "sanitize.py"), library,
                             *cases], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _run(libraries, cases, timeout=900):
    """Runs ``cases`` (sanitize.py's) under each build at once; {build: (status, output)}."""
    processes = {build: _start(build, path, cases) for build, path in libraries.items()}
    results = {}
    for build, process in processes.items():
        out, err = process.communicate(timeout=timeout)
        results[build] = (process.returncode, out + err)
    return results


def _assert_clean(libraries, cases):
    for build, (status, output) in _run(libraries, cases).items():
        done = re.findall(r"^ok (\S+)", output, re.M)
        assert status == 0 and len(done) == len(cases), f"{build}:\n{output[-6000:]}"


# ----- the matrix ---------------------------------------------------------------------------
COLS = (1, 3, 127, 1000, 1025, 8191, 12288)
ROWS = (1, 7)
EXTRA = ([f"kernel:add_layer_norm:{dtype}:127:96" for dtype in DTYPES]     # many rows a group
         + [f"kernel:layer_norm:{dtype}:512:40" for dtype in DTYPES]      # warps fold
         + ["tree:160:400:40", "tree:8:4200:600"])      # partial sums: 2 and 3 levels


def _rms(case, cols, rows):
    casting, offset, x_dtype, weight_dtype, residual = case
    return f"rms:{casting}:{offset}:{x_dtype}:{weight_dtype}:{int(residual)}:{cols}:{rows}"


def _conventions_available(case):
    return "bfloat16" in DTYPES or "bfloat16" not in case[2:4]


CONVENTIONS = [case for case in CONVENTION_CASES if _conventions_available(case)]
FULL = ([f"kernel:{k}:{dtype}:{cols}:{rows}" for k in KERNELS for dtype in DTYPES
         for cols in COLS for rows in ROWS]
        # 8191: random rows' rstd differs in more last bits than check_conventions allows
        # (y 2 units of float16, 5 of float32), in every build alike: a tolerance, not memory
        + [_rms(case, cols, 7) for case in CONVENTIONS for cols in COLS if cols != 8191]
        + EXTRA)
# A representative few (about 20 s): every kernel and dtype with scalar loads (3, 127),
# vector loads of a warp a row (1000) and a block a row (1025); each casting mode with each
# weight dtype pairing; many rows a group; two levels of partial sums.
FAST = ([f"kernel:{k}:{dtype}:{(3, 1000, 1025, 127)[i % 4]}:7"
         for i, (k, dtype) in enumerate((k, d) for k in KERNELS for d in DTYPES)]
        + [_rms(case, 1024 if case[4] else 127, 7) for case in CONVENTIONS if case[1] == 1
           and case[4] == (case[0] == "none")]
        + [f"kernel:add_layer_norm:{DTYPES[-1]}:127:96", "tree:160:400:40"])


def test_sanitizers_find_nothing_in_the_kernels(tmp_path, plain_emulation):
    _assert_clean(_build(tmp_path, BUILDS, names=_launched(plain_emulation, FAST)), FAST)


# minutes of CPU a build (half an hour on a loaded 2-core machine): asked for, not by default
@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("MICROGRADNORM_SANITIZE_ALL"),
                    reason="the full matrix: set MICROGRADNORM_SANITIZE_ALL=1")
def test_sanitizers_find_nothing_in_the_full_matrix(tmp_path):
    _assert_clean(_build(tmp_path, BUILDS), FULL)


# ----- positive controls: one planted bug each, caught by its sanitizer ---------------------
CONTROLS = {
    # (build, text of norms.cu, replaced by, case, what the report says)
    "off-by-one load": (
        "memcheck", "if (j < span.packs()) {\n                to.xs[i] = load_pack<T>(x + offset, "
        "j, span);\n                if (residual",
        "if (j <= span.packs()) {\n                to.xs[i] = load_pack<T>(x + offset, "
        "j, span);\n                if (residual",      # an even row: whole vector packs
        "kernel:layer_norm:float32:1000:7", r"AddressSanitizer: heap-buffer-overflow"),
    "misaligned pack": (
        "racecheck", "store_pack<T>(dx + offset, j, span, out);",
        "store_pack<T>(dx + offset - (row > 0), j, span, out);",
        "kernel:layer_norm:float32:1000:7",
        r"misaligned 16-byte access .* \(a multiple of 16 assumed\).*norms\.cu:\d+"),
    "misaligned float4": (
        "memcheck", "* stride + col);", "* stride + col - (col > 0) * 2);",
        "kernel:layer_norm:float32:1000:7",     # UBSan binds float4's copy to its source
        r"misaligned address 0x[0-9a-f]+ for type 'const struct float4', which requires 16"),
    "missing parity flip": (
        "racecheck", "    parity ^= 1;\n", "\n", "kernel:layer_norm:float32:1025:7",
        r"write-after-read hazard at shared memory byte \d+: read by block 0 thread \d+ "
        r"\(norms\.cu:\d+\), written by block 0 thread \d+ \(norms\.cu:\d+\)"),
    "return before a barrier": (
        "racecheck", "    warp_sums[warp][lane] = total;\n",
        "    if (col >= stride) return;\n    warp_sums[warp][lane] = total;\n",
        "kernel:layer_norm:float32:1000:7",
        r"barrier divergence in block \d+ .*threads \d+-\d+ wait at line \d+ "
        r"\(__syncthreads\); threads \d+-\d+ returned"),
    "blocks write one partial row": (
        "racecheck", "const long long at = (long long)blockIdx.x * partial_stride;",
        "const long long at = 0;", "kernel:layer_norm:float32:1025:7",
        r"write-after-write hazard at argument 7 byte \d+: written by block 0 thread \d+ "
        r"\(norms\.cu:\d+\), written by block 1"),
    "partial shuffle mask": (
        "racecheck", "__shfl_xor_sync(0xffffffffu,", "__shfl_xor_sync(0x0000ffffu,",
        "kernel:rms_norm:float32:127:7", r"__shfl_xor_sync at line \d+ with the partial mask"),
    "write to a const input": (
        "memcheck", "store_pack<T>(sum_out + offset, j, span, xs[i]);",
        "store_pack<T>(const_cast<T*>(residual) + offset, j, span, xs[i]);",
        "kernel:add_layer_norm:float32:1000:7",
        r"argument 1 points to const, and the launch changed it"),
}


@pytest.mark.parametrize("control", CONTROLS)
def test_planted_bug_is_caught_by_its_sanitizer(tmp_path, plain_emulation, control):
    build, text, replacement, case, report = CONTROLS[control]
    with open(cuda.SOURCE, encoding="utf-8") as file:
        source = file.read()
    assert source.count(text) == 1, f"{control}: norms.cu changed, update the control"
    planted = tmp_path / "norms.cu"
    planted.write_text(source.replace(text, replacement), encoding="utf-8")
    library = _build(tmp_path, (build,), source=str(planted),
                     names=_launched(plain_emulation, [case]))
    (status, output), = _run(library, [case], timeout=300).values()
    assert status != 0 and re.search(report, output), f"{control}: {output[-4000:]}"

"""Runs ``kernels.cuda`` on the CPU: NumPy dressed as the part of CuPy it uses, and norms.cu
compiled with g++ against the host emulation of this folder (cuda_emulation.h).

``build`` compiles a library of every instantiation of ``kernels.cuda.name_expressions()``
in one of three builds (``BUILDS``): "plain" (test_cuda_emulated.py), "memcheck"
(AddressSanitizer and UBSan) and "racecheck" (GCC's thread-sanitizer instrumentation, served
by sanitizers.h); ``install`` makes ``kernels.cuda`` launch through it. A launch whose checks
find something (sanitizers.h) raises ``KernelFindings``.
"""

import ctypes
import os
import re
import shutil
import subprocess
import sys
import types

import numpy as np

import kernel_checks
from microgradnorm.kernels import cuda, launch

HERE = os.path.dirname(os.path.abspath(__file__))
_COMMON = ["-std=c++20", "-fPIC", "-g", "-Wno-unknown-pragmas", f"-I{HERE}"]
_ASAN = ["-fsanitize=address,undefined"]
# build -> (compile options, link options). Each is -O0: a quarter of -O1's compile time (the
# plain build of every instantiation took 4 s of CPU against 18.5 s, and its tests ran in less
# than the difference: 27.5 s in all against 38 s), and the sanitizers check the same accesses.
BUILDS = {
    "plain": (["-O0"], []),
    "memcheck": (["-O0", *_ASAN, "-fno-sanitize-recover=all"], _ASAN),
    # Compiled for thread-sanitizer hooks, linked without its runtime: sanitizers.h is it.
    # -O0 keeps every Pack copy one access, with the alignment the compiler gives it.
    "racecheck": (["-O0", "-DEMU_RACECHECK", "-fsanitize=thread",
                   "--param", "tsan-instrument-func-entry-exit=0"], []),
}


class ToolchainMissing(Exception):
    """No g++ with C++20 and ucontext (Linux), or no sanitizer runtime for a build."""


class KernelFindings(AssertionError):
    """A launch the emulation's checks found something wrong in."""


# ----- NumPy dressed as the part of CuPy that kernels.cuda uses -------------------------------
class _Memory:
    def __init__(self, ptr):
        self.ptr = ptr


class _Device:
    id = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class EmulatedArray(np.ndarray):
    """A NumPy array with CuPy's ``.data.ptr``, ``.device`` and ``.get()``."""

    @property
    def data(self):
        return _Memory(self.ctypes.data)

    @property
    def device(self):
        return _Device()

    def get(self):
        return np.array(self.view(np.ndarray))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """CuPy's ufuncs take device arrays and scalars (NumPy's too), never a NumPy array,
        not even a 0-d one (``TypeError: Unsupported type <class 'numpy.ndarray'>``). The
        emulation refuses 0-d NumPy arrays, ``np.asarray(number, dtype)``, so code that
        would fail that way on a GPU fails here (larger NumPy arrays are allowed: the
        reference's ``xp`` is NumPy here, and its arrays stand in for CuPy's)."""
        outputs = kwargs.get("out") or ()
        for value in (*inputs, *outputs):
            if type(value) is np.ndarray and value.ndim == 0:
                raise TypeError(f"Unsupported type {type(value)}")
        plain = [v.view(np.ndarray) if isinstance(v, EmulatedArray) else v for v in inputs]
        if outputs:
            kwargs["out"] = tuple(o.view(np.ndarray) for o in outputs)
        result = getattr(ufunc, method)(*plain, **kwargs)
        if outputs:
            return outputs[0] if len(outputs) == 1 else outputs
        if isinstance(result, tuple):
            return tuple(_dressed(r) for r in result)
        return _dressed(result)


def _dressed(value):
    if isinstance(value, np.ndarray) and not isinstance(value, EmulatedArray):
        return value.view(EmulatedArray)
    return value


class EmulatedCupy:
    """``cp.empty``, ``cp.full``, ... are NumPy's, returning ``EmulatedArray``s."""

    ndarray = EmulatedArray

    def __getattr__(self, name):
        function = getattr(np, name)
        return lambda *args, **kwargs: _dressed(function(*args, **kwargs))

    @staticmethod
    def asnumpy(array):
        return np.array(np.asarray(array).view(np.ndarray))


# ----- the emulated kernels -------------------------------------------------------------------
def build(directory, kind="plain", source=cuda.SOURCE, dtypes=launch.KINDS, names=None):
    """Compiles ``source`` (norms.cu or a copy) in build ``kind``, with the kernels of
    ``dtypes`` (kinds of ``kernels.cuda.KINDS``), or only the instantiations ``names`` when
    given, into a library in ``directory``; returns its path."""
    if sys.platform != "linux" or shutil.which("g++") is None:
        raise ToolchainMissing("the CUDA emulation needs g++ and ucontext (Linux)")
    names = launch.name_expressions(dtypes) if names is None else sorted(names)
    lines = [f"#define {launch.BFLOAT16_OPTION[2:]}", '#include "cuda_fp16.h"',
             '#include "cuda_bf16.h"', f'#include "{source}"', '#include "launchers.h"',
             "extern const Entry emu_entries[] = {"]
    lines += [f'    {{"{name}", &run_{name}}},' for name in names]
    lines += ["};", f"extern const int emu_entry_count = {len(names)};"]
    unit = os.path.join(directory, f"emulated_kernels_{kind}.cpp")
    with open(unit, "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
    library = os.path.join(directory, f"libemulated_kernels_{kind}.so")
    compile_options, link_options = BUILDS[kind]
    for command in (["g++", *compile_options, *_COMMON, "-c", "-o", unit + ".o", unit],
                    ["g++", "-shared", *link_options, "-o", library, unit + ".o"]):
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
        missing = re.search(r"c\+\+20|cannot find -l[a-z]*san|sanitizer/\w+\.h", result.stderr)
        if result.returncode != 0 and missing:
            raise ToolchainMissing(f"g++ cannot build the {kind} emulation: "
                                   f"{result.stderr[:300]}")
        assert result.returncode == 0, result.stderr
    return library


def asan_runtime():
    """The path of g++'s AddressSanitizer runtime, which the memcheck library needs loaded
    first (LD_PRELOAD) in a Python process."""
    if shutil.which("g++") is None:
        raise ToolchainMissing("no g++")
    path = subprocess.run(["g++", "-print-file-name=libasan.so"], capture_output=True,
                          text=True, check=True).stdout.strip()
    if not os.path.isabs(path):
        raise ToolchainMissing("g++ has no libasan.so")
    return path


def symbolize(library, text):
    """``pc 0x1a2b`` of a finding -> ``norms.cu:465``, the line of the kernel's access."""
    pcs = sorted(set(re.findall(r"pc (0x[0-9a-f]+)", text)))
    if not pcs or shutil.which("addr2line") is None:
        return text
    lines = subprocess.run(["addr2line", "-e", library, *pcs], capture_output=True,
                           text=True).stdout.split("\n")
    for pc, line in zip(pcs, lines):
        text = text.replace(f"pc {pc}", os.path.basename(line.split(" ")[0]))
    return text


def _argument(value):
    """(ctypes value, bytes it points to: 0 for a scalar or the null pointer)."""
    if isinstance(value, np.ndarray):
        return ctypes.c_void_p(value.ctypes.data), value.nbytes
    if isinstance(value, np.uint64):
        return ctypes.c_void_p(int(value) or None), 0           # the null pointer
    if isinstance(value, np.int32):
        return ctypes.c_int(int(value)), 0
    if isinstance(value, np.int64):
        return ctypes.c_longlong(int(value)), 0
    if isinstance(value, np.float32):
        return ctypes.c_float(float(value)), 0
    raise TypeError(f"unexpected kernel argument {type(value).__name__}")


def install(library_path, setattr):
    """Makes ``kernels.cuda`` launch through the library at ``library_path`` (a device of
    2 SMs, 2 blocks each: few backward blocks, many rows each), with ``setattr(object,
    name, value)`` (pytest's monkeypatch.setattr, or the builtin); returns the launch log
    of (name, grid, block)."""
    library = ctypes.CDLL(library_path)
    library.emu_run.restype = ctypes.c_char_p
    launches = []

    def function(cp, name):
        def launch(grid, block, args):
            values, sizes = zip(*(_argument(a) for a in args))
            pointers = (ctypes.c_void_p * len(values))(
                *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
            grid = tuple(grid) + (1,) * (3 - len(grid))
            launches.append((name, grid[0] if grid[1:] == (1, 1) else grid, block[0]))
            findings = library.emu_run(name.encode(), *grid, block[0], pointers,
                                       (ctypes.c_longlong * len(sizes))(*sizes), len(sizes))
            assert findings is not None, f"no emulated kernel {name}"
            if findings:
                raise KernelFindings(f"{name}, grid {grid}, block {block[0]}:\n"
                                     + symbolize(library_path, findings.decode()))
        return launch

    fake = EmulatedCupy()
    setattr(kernel_checks, "cp", fake)
    setattr(cuda, "_cupy", lambda: fake)
    setattr(cuda, "_function", function)
    setattr(cuda, "_sm_count", lambda cp: 2)
    setattr(cuda, "_blocks_per_sm", lambda cp, name, block: 2)
    kernel_checks.poison(types.SimpleNamespace(setattr=setattr))
    return launches

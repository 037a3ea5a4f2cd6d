"""Every CUDA source compiles, for sm_80 and sm_90, with every template instantiation the
loader asks for, warnings as errors. Runs on machines without a GPU (CI has nvcc, not a GPU).

The instantiation list comes from ``cuda.name_expressions()``, the table the loader hands to
``cupy.RawModule``: a translation unit includes the ``.cu`` file and takes the address of each
instantiation, which makes nvcc compile it. Without nvcc the test skips, except in CI
(``CI=true``), where a missing nvcc is a failure.

The loader compiles with NVRTC, not nvcc; where a ``libnvrtc`` can be found (``ctypes``'s
search, or the path in ``MICROGRADNORM_NVRTC``), the same source and names also go through
NVRTC, with ``-I`` on the CUDA headers next to nvcc (or ``CUDA_PATH``'s).
"""

import ctypes
import ctypes.util
import glob
import os
import re
import shutil
import subprocess

import pytest

from microgradnorm.kernels import cuda

ARCHS = ("sm_80", "sm_90")
SOURCES = sorted(glob.glob(os.path.join(os.path.dirname(cuda.SOURCE), "*.cu")))


def nvcc_or_skip():
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nvcc is not on PATH in CI: the CUDA sources cannot be checked")
        pytest.skip("nvcc is not on PATH")
    return nvcc


def instantiating_unit(source, names):
    """A translation unit that compiles ``source`` and each of the template ``names``."""
    lines = [f'#include "{source}"', "", "// Taking an address instantiates the template.",
             "void* microgradnorm_instances[] = {"]
    lines += [f"    (void*)&{name}," for name in names]
    return "\n".join(lines + ["};", ""])


def test_the_loader_compiles_one_source():
    assert SOURCES == [cuda.SOURCE]       # a new .cu needs its own name table here and there


def test_every_cu_file_compiles_for_sm80_and_sm90(tmp_path):
    nvcc = nvcc_or_skip()
    names = cuda.name_expressions()
    unit = tmp_path / "instances.cu"
    unit.write_text(instantiating_unit(cuda.SOURCE, names))
    # One nvcc call per architecture, both at once (device code only: -cubin).
    runs = {arch: subprocess.Popen(
        [nvcc, "-cubin", f"-arch={arch}", "-Werror", "all-warnings", cuda.BFLOAT16_OPTION,
         "-o", str(tmp_path / f"{arch}.cubin"), str(unit)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for arch in ARCHS}
    for arch, run in runs.items():
        output, _ = run.communicate(timeout=300)
        assert run.returncode == 0, f"nvcc -arch={arch} failed:\n{output}"
        binary = (tmp_path / f"{arch}.cubin").read_bytes()
        for kernel in ("norm_forward", "norm_backward", "sum_partials"):
            wanted = sum(name.startswith(kernel + "<") for name in names)
            symbols = set(re.findall(rb"_Z\d+" + kernel.encode() + rb"I\w+", binary))
            assert len(symbols) == wanted, (arch, kernel, sorted(symbols))


def test_the_float32_float16_module_compiles_without_bfloat16(tmp_path):
    # The module CuPy builds without -DMICROGRADNORM_BFLOAT16 must not need cuda_bf16.h.
    nvcc = nvcc_or_skip()
    unit = tmp_path / "fp.cu"
    unit.write_text(instantiating_unit(cuda.SOURCE, cuda.name_expressions(("float32",
                                                                           "float16"))))
    run = subprocess.run([nvcc, "-E", str(unit)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "cuda_bf16.h" not in run.stdout             # the preprocessor never opened it
    run = subprocess.run([nvcc, "-cubin", "-arch=sm_80", "-Werror", "all-warnings", "-o",
                          str(tmp_path / "fp.cubin"), str(unit)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr


# ----- NVRTC, as CuPy compiles (only where a libnvrtc is at hand) ---------------------------
def nvrtc_library():
    path = os.environ.get("MICROGRADNORM_NVRTC") or ctypes.util.find_library("nvrtc")
    if not path:
        pytest.skip("no libnvrtc found (set MICROGRADNORM_NVRTC to its path)")
    return ctypes.CDLL(path)


def cuda_include_dir():
    roots = [os.environ.get("CUDA_PATH", "")]
    if shutil.which("nvcc"):
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("nvcc")))))
    roots.append("/usr/local/cuda")
    for root in roots:
        if root and os.path.exists(os.path.join(root, "include", "cuda_fp16.h")):
            return os.path.join(root, "include")
    pytest.skip("no CUDA headers (cuda_fp16.h) found for NVRTC")


@pytest.mark.parametrize("arch", ["compute_80", "compute_90"])
def test_the_source_compiles_under_nvrtc(arch):
    lib = nvrtc_library()
    include = cuda_include_dir()
    with open(cuda.SOURCE, encoding="utf-8") as file:
        code = file.read().encode()
    program = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(program), code, b"norms.cu", 0, None, None) == 0
    try:
        for name in cuda.name_expressions():
            assert lib.nvrtcAddNameExpression(program, name.encode()) == 0
        options = [f"--gpu-architecture={arch}".encode(), f"-I{include}".encode(),
                   cuda.BFLOAT16_OPTION.encode()]
        result = lib.nvrtcCompileProgram(program, len(options),
                                         (ctypes.c_char_p * len(options))(*options))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(program, log)
        assert result == 0, log.value.decode()
        for name in cuda.name_expressions():
            lowered = ctypes.c_char_p()
            assert lib.nvrtcGetLoweredName(program, name.encode(), ctypes.byref(lowered)) == 0
            assert lowered.value
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))

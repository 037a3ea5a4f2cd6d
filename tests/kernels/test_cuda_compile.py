"""Every CUDA source compiles with every template instantiation the loader asks for: with
nvcc for sm_90, warnings as errors, and through CuPy's NVRTC path for sm_80 and sm_90. Runs on
machines without a GPU (CI has nvcc and CuPy, not a GPU).

The instantiation list comes from ``cuda.name_expressions()``, the table the loader hands to
``cupy.RawModule``: a translation unit includes the ``.cu`` file and takes the address of each
instantiation, which makes nvcc compile it. Without nvcc the test skips, except in CI
(``CI=true``), where a missing nvcc is a failure.

The loader compiles with NVRTC through ``cupy.RawModule``, not with nvcc: where CuPy is
installed (with its ``ctk`` extra or NVRTC and the CUDA runtime headers; .ci/run installs
them, and there a missing CuPy is a failure) each module also goes through CuPy's own compile
path, with the options CuPy itself adds (tests/helpers/cupy_compile.py).
"""

import glob
import os
import re
import shutil
import subprocess

import cupy_compile
import pytest

from microgradnorm.kernels import cuda

# One architecture for nvcc's warnings-as-errors build: the CuPy tests below build both
# sm_80 and sm_90, and test_cuda_resources.py runs ptxas for both (each build costs seconds).
ARCHS = ("sm_90",)
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


def test_every_cu_file_compiles_with_nvcc_warnings_as_errors(tmp_path):
    nvcc = nvcc_or_skip()
    names = cuda.name_expressions()
    unit = tmp_path / "instances.cu"
    unit.write_text(instantiating_unit(cuda.SOURCE, names))
    # One nvcc call per architecture, all at once (device code only: -cubin).
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


def test_the_float32_float16_module_does_not_include_cuda_bf16(tmp_path):
    # The module built without -DMICROGRADNORM_BFLOAT16 must not open cuda_bf16.h (its
    # compile is test_cupy_compiles_every_module_as_rawmodule_would's).
    nvcc = nvcc_or_skip()
    unit = tmp_path / "fp.cu"
    unit.write_text(instantiating_unit(cuda.SOURCE, cuda.name_expressions(("float32",
                                                                           "float16"))))
    run = subprocess.run([nvcc, "-E", str(unit)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "cuda_bf16.h" not in run.stdout             # the preprocessor never opened it
    assert "cuda_fp16.h" in run.stdout


# ----- NVRTC, through CuPy's own compile path -------------------------------------------------
def cupy_or_skip():
    cupy = cupy_compile.cupy_or_none()
    if cupy is None:
        if os.environ.get("CI") == "true":
            pytest.fail('CuPy is not installed in CI: .ci/run installs it to compile norms.cu '
                        'as cupy.RawModule does')
        pytest.skip("CuPy is not installed")
    reason = cupy_compile.check_version(cupy)
    if reason:
        pytest.fail(reason)
    return cupy


@pytest.mark.parametrize("dtypes", cuda.MODULE_DTYPES, ids="+".join)
@pytest.mark.parametrize("arch", ["80", "90"])
def test_cupy_compiles_every_module_as_rawmodule_would(arch, dtypes):
    """The loader's modules, built by CuPy's RawModule compile path with the loader's options
    and name expressions: every name expression lowers to a kernel present in the binary."""
    cupy_or_skip()
    with open(cuda.SOURCE, encoding="utf-8") as file:
        code = file.read()
    names = cuda.name_expressions(dtypes)
    options, binary, mapping = cupy_compile.rawmodule_compile(
        code, cuda.compile_options(dtypes), names, arch)
    missing = sorted(set(names) - set(mapping or {}))
    assert not missing, f"name expressions CuPy did not lower: {missing}"
    absent = [name for name in names if mapping[name].encode() not in binary]
    assert not absent, f"kernels missing from the sm_{arch} binary: {absent}"
    # The options are CuPy's own: the loader's, the architecture, and the headers directory.
    assert f"-arch=sm_{arch}" in options
    assert all(option in options for option in cuda.compile_options(dtypes))
    includes = [o[2:] for o in options if o.startswith("-I")]
    assert any(os.path.exists(os.path.join(d, "cuda_fp16.h")) for d in includes), includes


def test_cupy_flushes_float32_denormals_whatever_the_caller_asks():
    """CuPy appends -ftz=true after the caller's options, and NVRTC obeys the last of two
    -ftz options: through RawModule the kernels always run with float32 denormals flushed
    to zero. The host emulation flushes too (cuda_emulation.h) and docs/gpu.md says so;
    this test notices if CuPy changes that."""
    cupy_or_skip()
    code = 'extern "C" __global__ void k(float* a) { a[0] = a[1] * a[2]; }'
    options, _, _ = cupy_compile.rawmodule_compile(code, ("-ftz=false",), ["k"], "80")
    ftz = [option for option in options if option.startswith("-ftz")]
    assert ftz == ["-ftz=false", "-ftz=true"], options

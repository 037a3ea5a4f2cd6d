"""Every CUDA source compiles with every template instantiation the loader asks for: with
nvcc for sm_90, warnings as errors, and through CuPy's NVRTC path (each kind's kernels for
sm_90, every instantiation for sm_80). Runs on machines without a GPU (CI has nvcc and CuPy,
not a GPU).

The instantiation list comes from ``launch.name_expressions()``, the table the loader compiles
from: nvcc builds it once per test run, split over the cores (tests/helpers/nvcc_build.py),
and test_cuda_resources.py reads ptxas's report of the same build. Without nvcc the test
skips, except in CI (``CI=true``), where a missing nvcc is a failure.

The loader compiles with NVRTC through ``cupy.RawModule``, not with nvcc: where CuPy is
installed (with its ``ctk`` extra or NVRTC and the CUDA runtime headers; .ci/run installs
them, and there a missing CuPy is a failure) each module also goes through CuPy's own compile
path, with the options CuPy itself adds (tests/helpers/cupy_compile.py): by default a kernel
of each kind alone, as the loader compiles it; every kernel in the slow test.
"""

import glob
import os
import re
import subprocess

import cupy_compile
import pytest
from nvcc_build import instantiating_unit, nvcc_or_skip

from microgradnorm.kernels import cuda, launch

ARCH = "sm_90"        # conftest.py's sm90_build: the one nvcc build of every instantiation
SOURCES = sorted(glob.glob(os.path.join(os.path.dirname(cuda.SOURCE), "*.cu")))


def test_the_loader_compiles_one_source():
    assert SOURCES == [cuda.SOURCE]       # a new .cu needs its own name table here and there


def test_every_cu_file_compiles_with_nvcc_warnings_as_errors(sm90_build):
    names = launch.name_expressions()
    symbols = set()
    for unit_names, returncode, output, binary in sm90_build:
        assert returncode == 0, f"nvcc -arch={ARCH} failed for {unit_names}:\n{output}"
        symbols |= set(re.findall(rb"_Z\d+(?:norm_forward|norm_backward|sum_partials)I\w+",
                                  binary))
    for kernel in ("norm_forward", "norm_backward", "sum_partials"):
        wanted = sum(name.startswith(kernel + "<") for name in names)
        found = {s for s in symbols if re.match(rb"_Z\d+" + kernel.encode() + rb"I", s)}
        assert len(found) == wanted, (kernel, sorted(found))


def test_the_float32_float16_module_does_not_include_cuda_bf16(tmp_path):
    # The module built without -DMICROGRADNORM_BFLOAT16 must not open cuda_bf16.h (its
    # compile is test_cupy_compiles_every_module_as_rawmodule_would's).
    nvcc = nvcc_or_skip()
    unit = tmp_path / "fp.cu"
    unit.write_text(instantiating_unit(cuda.SOURCE, launch.name_expressions(("float32",
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


def _cupy_compile_and_check(names, options, arch, ptx=False):
    """Compile ``names`` through CuPy's RawModule path; every name lowers to a kernel in the
    binary (the PTX where ``ptx``), with CuPy's own options (the loader's, the architecture,
    the headers)."""
    options, binary, mapping = cupy_compile.rawmodule_compile(
        _source(), options, names, arch, ptx)
    missing = sorted(set(names) - set(mapping or {}))
    assert not missing, f"name expressions CuPy did not lower: {missing}"
    absent = [name for name in names if mapping[name].encode() not in binary]
    assert not absent, f"kernels missing from the {arch} binary: {absent}"
    assert f"-arch={'compute' if ptx else 'sm'}_{arch}" in options
    includes = [o[2:] for o in options if o.startswith("-I")]
    assert any(os.path.exists(os.path.join(d, "cuda_fp16.h")) for d in includes), includes
    return options


def _source():
    with open(cuda.SOURCE, encoding="utf-8") as file:
        return file.read()


@pytest.mark.parametrize("kind", launch.KINDS)
def test_cupy_compiles_each_kernel_alone_as_the_loader_does(kind):
    """The loader compiles one instantiation a module (``cuda._module``): here the forward
    and backward kernels a D = 1024 row takes and the kind's sum_partials, each alone, with
    the loader's options, for sm_90 (every kernel, for sm_80: the slow test below)."""
    cupy_or_skip()
    dtype, _, weight = kind.partition("/")
    weight_cxx = launch.CXX_TYPES[weight] if weight else None
    vec = launch.vector_width(launch.ITEMSIZE[dtype], 1024, [256])
    names = [launch.kernel_name(kernel, launch.CXX_TYPES[dtype], config.vec, config.nv,
                              launch.launch_bound(config), weight_cxx)
             for kernel, config in (("norm_forward", launch.forward_config(1024, vec)),
                                    ("norm_backward", launch.backward_config(1024, vec)))]
    names.append(launch.sum_partials_name(weight_cxx or launch.CXX_TYPES[dtype],
                                        launch.CXX_TYPES[dtype]))
    assert set(names) <= set(launch.name_expressions((kind,)))
    for name in names:
        options = launch.compile_options(launch.module_dtypes(name))
        used = _cupy_compile_and_check([name], options, "90")
        assert all(option in used for option in options)


# sm_80 only: for sm_90, nvcc builds every instantiation (sm90_build) and the test above takes
# NVRTC's path; NVRTC's front end is the same for both architectures, and building every
# module for sm_90 as well cost 53 s of CPU, half of this test. PTX, as CuPy compiles under
# CUPY_COMPILE_WITH_PTX=1: NVRTC's front end and optimizer for compute_80 without ptxas,
# which the sm_90 build runs on every instantiation (the bfloat16 module: 7.2 s, not 13.3)
@pytest.mark.slow
@pytest.mark.parametrize("dtypes", launch.MODULE_DTYPES, ids="+".join)
def test_cupy_compiles_every_module_as_rawmodule_would(dtypes):
    """Every instantiation of ``dtypes`` through CuPy's RawModule compile path with the
    loader's options, for sm_80 (one module per group of options: the loader's one-kernel
    modules are these kernels, compiled more often): every name expression lowers to a
    kernel."""
    cupy_or_skip()
    options = launch.compile_options(dtypes)
    used = _cupy_compile_and_check(launch.name_expressions(dtypes), options, "80", ptx=True)
    assert all(option in used for option in options)


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

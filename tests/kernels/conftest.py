"""Each kernel test starts with no launch plans: a plan keeps the kernel handle and the CuPy
module it was made with, and the tests replace those (the host emulation, a fake CuPy). The
nvcc build of every instantiation is made once per test run and shared: the compile test
checks it, the resources test reads ptxas's report of it."""

import pytest
from nvcc_build import build, nvcc_or_skip

from microgradnorm.kernels import cuda, launch


@pytest.fixture(autouse=True)
def fresh_launch_plans(monkeypatch):
    monkeypatch.setattr(cuda, "_plans", {})


@pytest.fixture(scope="session")
def sm90_build(tmp_path_factory):
    """Every instantiation built once per test run for sm_90, warnings as errors, with
    ptxas's report (-Xptxas -v) for test_cuda_resources.py: [(names, return code, output,
    cubin bytes)], one unit per core (tests/helpers/nvcc_build.py)."""
    nvcc = nvcc_or_skip()
    return build(nvcc, cuda.SOURCE, launch.name_expressions(),
                 ["-arch=sm_90", "-Werror", "all-warnings", "-Xptxas", "-v",
                  launch.BFLOAT16_OPTION], str(tmp_path_factory.mktemp("sm90")))

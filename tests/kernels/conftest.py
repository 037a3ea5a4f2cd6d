"""Each kernel test starts with no launch plans: a plan keeps the kernel handle and the CuPy
module it was made with, and the tests replace those (the host emulation, a fake CuPy). Two
builds are made once per test run and shared: nvcc's of every instantiation (the compile
test checks it, the resources test reads ptxas's report of it) and the host emulation's plain
build (test_cuda_emulated.py runs the kernels through it; test_cuda_sanitizers.py runs its
cases through it first, to compile only the kernels they launch)."""

import os
import sys

import pytest
from nvcc_build import build, nvcc_or_skip

from microgradnorm.kernels import cuda, launch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_emulation"))
import emulation  # noqa: E402  (lives beside the emulation's headers)


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


@pytest.fixture(scope="session")
def plain_emulation(tmp_path_factory):
    """The host emulation's plain build of every instantiation (tests/kernels/cuda_emulation/):
    the library's path. Skips without g++ (C++20) or ucontext, except in CI (``CI=true``),
    where .ci/run installs them: there it fails."""
    try:
        return emulation.build(str(tmp_path_factory.mktemp("cuda_emulation")))
    except emulation.ToolchainMissing as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI has the toolchain (.ci/run installs it): {error}")
        pytest.skip(str(error))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Under pytest-xdist's ``--dist loadgroup`` (tests/conftest.py) the tests of the two
    shared builds run in one worker, which makes each build once. ``tryfirst``: the group
    must be set before pytest-xdist's own hook reads it into the tests' ids."""
    for item in items:
        if {"sm90_build", "plain_emulation"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("cuda-builds"))

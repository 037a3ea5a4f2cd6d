"""Each kernel test starts with no launch plans: a plan keeps the kernel handle and the CuPy
module it was made with, and the tests replace those (the host emulation, a fake CuPy)."""

import pytest

from microgradnorm.kernels import cuda


@pytest.fixture(autouse=True)
def fresh_launch_plans(monkeypatch):
    monkeypatch.setattr(cuda, "_plans", {})

"""Shared test settings.

Hypothesis runs without deadlines (timings on a loaded 2-core machine are noisy) and, in CI
(CI=true), derandomized, so a run is reproducible: the same examples every time.

Profiles (``python -m pytest --hypothesis-profile NAME``):
  * ``microgradnorm`` (default): 100 examples per property, a few seconds for the fuzzer.
  * ``fuzz``: 5,000 examples per property, for a longer search (minutes).
  * ``fuzz-long``: 50,000 examples, e.g. overnight, with ``tests/engine/test_fuzz.py`` alone.
"""

import os
import sys
from pathlib import Path

from hypothesis import settings

settings.register_profile("microgradnorm", deadline=None,
                          derandomize=os.environ.get("CI") == "true")
settings.register_profile("fuzz", parent=settings.get_profile("microgradnorm"),
                          max_examples=5_000, derandomize=False)
settings.register_profile("fuzz-long", parent=settings.get_profile("microgradnorm"),
                          max_examples=50_000, derandomize=False)
settings.load_profile("microgradnorm")

# The shared tables and strategies in tests/helpers/ import as top-level modules
# (``from strategies import arrays``) from every test folder.
sys.path.insert(0, str(Path(__file__).parent / "helpers"))

import pytest  # noqa: E402

import microgradnorm as mg  # noqa: E402


@pytest.fixture(autouse=True)
def _default_dtype_restored():
    """Every test starts with PyTorch's default dtype, float32, and leaves it so, and with the
    default generator seeded (as PyTorch's own test cases seed it), so a run repeats."""
    mg.set_default_dtype(mg.float32)
    mg.manual_seed(0)
    yield
    mg.set_default_dtype(mg.float32)


@pytest.fixture
def float64_default():
    """The default dtype float64 for a test whose oracle is float64 arithmetic (PyTorch's own
    suites do the same with ``torch.set_default_dtype``); float32 again afterwards."""
    mg.set_default_dtype(mg.float64)
    yield
    mg.set_default_dtype(mg.float32)

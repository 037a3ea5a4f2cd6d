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

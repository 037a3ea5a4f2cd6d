"""Shared test settings.

Hypothesis runs without deadlines (timings on a loaded 2-core machine are noisy) and, in CI
(CI=true), derandomized, so a run is reproducible: the same examples every time.
"""

import os

from hypothesis import settings

settings.register_profile("microgradnorm", deadline=None,
                          derandomize=os.environ.get("CI") == "true")
settings.load_profile("microgradnorm")

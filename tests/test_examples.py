"""Every example runs, at a small size, and says what it promises."""

import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[1] / "examples"


def run_example(name, *args):
    result = subprocess.run([sys.executable, str(EXAMPLES / name), *args],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_quickstart_shows_both_graphs_and_agreement():
    out = run_example("quickstart.py", "--rows", "6", "--features", "5")
    assert re.search(r"composite: (\d+) op nodes", out)
    assert "fused: 1 op nodes" in out
    diffs = re.findall(r"max \|fused - composite\| .*? ([0-9.e+-]+)$", out, flags=re.M)
    assert len(diffs) == 4                          # output, grad x, grad weight, grad bias
    assert max(float(value) for value in diffs) <= 1e-10
    assert "gradcheck of the fused backward (3 x 5, float64): passed" in out

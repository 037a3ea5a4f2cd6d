"""examples/dyt_vs_layernorm.py --quick: it runs within the examples' CPU budget, fits every
LayerNorm of the model, reports every DyT and draws its picture."""

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
QUICK_CPU_SECONDS = 15          # test_examples.py's allowance: 3x the 5 s budget


def test_dyt_vs_layernorm_quick(tmp_path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "dyt_vs_layernorm.py"), "--quick",
         "--no-progress", "--out", str(tmp_path / "plots")], capture_output=True, text=True,
        timeout=300, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert result.returncode == 0, result.stderr
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert cpu < QUICK_CPU_SECONDS, f"--quick took {cpu:.1f} s of CPU time"
    out = result.stdout
    names = ["blocks.0.ln1", "blocks.0.ln2", "blocks.1.ln1", "blocks.1.ln2", "ln_f"]
    fits = re.findall(r"^(\S+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)%\s+([0-9.]+)%$", out,
                      flags=re.MULTILINE)
    assert [name for name, *_ in fits] == names
    for name, _, _, tanh_left, line_left in fits:
        # c·tanh(αx) tends to the line c·α·x as α -> 0: the tanh never fits worse
        assert float(tanh_left) <= float(line_left) + 0.1, name
    states = re.findall(r"^(\S+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)%$", out, flags=re.MULTILINE)
    assert [name for name, *_ in states] == names               # every DyT of the twin
    assert re.search(r"final loss .*: layer_norm [0-9.]+, dyt [0-9.]+, rms_norm [0-9.]+", out)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "[plot]" in out
    else:
        assert (tmp_path / "plots" / "dyt_vs_layernorm.png").stat().st_size > 1000

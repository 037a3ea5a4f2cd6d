"""docs/tutorial.md: its Python blocks, run in order as one script, print what it says."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"


def test_tutorial_code_runs(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 10
    script = tmp_path / "tutorial.py"
    script.write_text("\n".join(blocks))
    result = subprocess.run([sys.executable, str(script)], check=False, capture_output=True,
                            text=True, timeout=600, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert ("[('LayerNorm', 'blocks.0.ln1'), ('AddLayerNorm', 'blocks.0.ln2'), "
            "('LayerNorm', 'blocks.1.ln1'), ('AddLayerNorm', 'blocks.1.ln2'), "
            "('LayerNorm', 'ln_f')]") in out
    assert "blocks.0.ln1.weight" in out
    first, last = map(float, re.search(r"loss ([0-9.]+) -> ([0-9.]+)", out).groups())
    assert last < first - 1.0
    lines = out.splitlines()
    diff_line = lines[lines.index(next(line for line in lines if "-> " in line)) + 1]
    assert float(diff_line) <= 1e-8                  # composite vs fused, 50 steps, float64
    assert (tmp_path / "tiny_gpt.npz").exists()

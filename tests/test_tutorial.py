"""docs/tutorial.md: its Python blocks run, in order, in one namespace."""

import re
from pathlib import Path

TUTORIAL = Path(__file__).parents[1] / "docs" / "tutorial.md"


def test_tutorial_code_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 10
    monkeypatch.chdir(tmp_path)                      # it saves tiny_gpt.npz
    namespace = {}
    for block in blocks:
        exec(compile(block, str(TUTORIAL), "exec"), namespace)
    out = capsys.readouterr().out
    assert ("[('LayerNorm', 'blocks.0.ln1'), ('AddLayerNorm', 'blocks.0.ln2'), "
            "('LayerNorm', 'blocks.1.ln1'), ('AddLayerNorm', 'blocks.1.ln2'), "
            "('LayerNorm', 'ln_f')]") in out
    assert "blocks.0.ln1.weight" in out
    losses = namespace["losses"]
    assert sum(losses[-20:]) / 20 < losses[0] - 1.0
    fused, composite = namespace["fused"], namespace["composite"]
    assert max(abs(a - b) for a, b in zip(fused.losses, composite.losses)) <= 1e-8
    assert (tmp_path / "tiny_gpt.npz").exists()

"""Every ```python block of README.md and docs/*.md runs as written.

Conventions, visible in the rendered page (docs/testing.md describes them):

* A block runs on its own, in a fresh interpreter, in an empty working directory.
* A block whose first line is ``# continued from the block above`` runs in the same script as
  the previous block of the same file (a tutorial is one script told in steps).
* A block whose first line is ``# not run by the docs test: <reason>`` is skipped with that
  reason (a GPU, a long run); it is still compiled, so a syntax error fails.
* A signature sketch (``...`` as values) is not a Python block: write it as plain text.

Some files also have their printed output checked (``OUTPUT_CHECKS``).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CONTINUED = "# continued from the block above"
SKIPPED = "# not run by the docs test:"
BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)


def python_blocks(path):
    """(line number, code) of each ```python block of ``path``."""
    text = path.read_text()
    return [(text[:m.start()].count("\n") + 1, m.group(1)) for m in BLOCK.finditer(text)]


def scripts(path):
    """The blocks of ``path`` joined into scripts: a block and the blocks that continue it.

    Returns a list of (first line, code, skip reason or None)."""
    result = []
    for line, code in python_blocks(path):
        first = code.split("\n", 1)[0].strip()
        if first == CONTINUED:
            if not result:
                raise AssertionError(f"{path.name}:{line}: the first block cannot continue one")
            start, previous, reason = result[-1]
            result[-1] = (start, previous + "\n" + code, reason)
            continue
        reason = first[len(SKIPPED):].strip() if first.startswith(SKIPPED) else None
        result.append((line, code, reason))
    return result


CASES = [pytest.param(path, line, code, reason, id=f"{path.relative_to(ROOT)}:{line}",
                      # a script that trains a model takes seconds: in the slow set
                      marks=[pytest.mark.slow] if "opt.step()" in code else [])
         for path in DOC_FILES for line, code, reason in scripts(path)]


def check_tutorial(code, out, workdir):
    assert ("[('LayerNorm', 'blocks.0.ln1'), ('AddLayerNorm', 'blocks.0.ln2'), "
            "('LayerNorm', 'blocks.1.ln1'), ('AddLayerNorm', 'blocks.1.ln2'), "
            "('LayerNorm', 'ln_f')]") in out
    assert "blocks.0.ln1.weight" in out
    first, last = map(float, re.search(r"loss ([0-9.]+) -> ([0-9.]+)", out).groups())
    assert last < first - 1.0
    lines = out.splitlines()
    diff_line = lines[lines.index(next(line for line in lines if "-> " in line)) + 1]
    assert float(diff_line) <= 1e-8                  # composite vs fused, 50 steps, float64
    assert (workdir / "tiny_gpt.npz").exists()


def check_readme(code, out, workdir):
    if "nn.GPT" not in code:
        return
    # "A character-level GPT trained on the Zen of Python, in 20 lines"
    assert len([line for line in code.splitlines() if line.strip()]) <= 20
    losses = [float(v) for v in re.findall(r"loss ([0-9.]+)", out)]
    assert len(losses) == 5 and losses[-1] < losses[0] - 0.5


def check_visualizer(code, out, workdir):
    # rendering leaves the picture only, not graphviz's extensionless DOT source beside it
    leftovers = [p.name for p in workdir.iterdir() if not p.suffix]
    assert not leftovers, leftovers


OUTPUT_CHECKS = {"docs/tutorial.md": check_tutorial, "README.md": check_readme,
                 "docs/visualizer.md": check_visualizer}


def test_every_doc_has_been_found():
    assert sum(len(python_blocks(path)) for path in DOC_FILES) >= 20
    assert any(path.name == "tutorial.md" for path, *_ in (c.values for c in CASES))


@pytest.mark.parametrize("path, line, code, reason", CASES)
def test_doc_block_runs(path, line, code, reason, tmp_path):
    name = str(path.relative_to(ROOT))
    compile(code, f"{name}:{line}", "exec")
    if reason is not None:
        pytest.skip(f"{name}:{line}: {reason}")
    script = tmp_path / "block.py"
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script)], check=False, capture_output=True,
                            text=True, timeout=600, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"})
    assert result.returncode == 0, f"{name}:{line} failed:\n{code}\n{result.stderr}"
    if name in OUTPUT_CHECKS:
        OUTPUT_CHECKS[name](code, result.stdout, tmp_path)


def test_continuation_and_skip_markers_are_read(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("```python\nx = 1\n```\ntext\n```python\n# continued from the block above\n"
                   "print(x)\n```\n```python\n# not run by the docs test: needs a GPU\n"
                   "import cupy\n```\n")
    found = scripts(doc)
    assert [(line, reason) for line, _, reason in found] == [(1, None), (9, "needs a GPU")]
    assert "x = 1" in found[0][1] and "print(x)" in found[0][1]


def test_docs_refer_only_to_what_the_repository_holds():
    for path in DOC_FILES:
        text = path.read_text()
        assert "shared/" not in text and "seeds/" not in text, f"{path.name} cites a path " \
            "outside the repository; state what it says in the docs instead"
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (path.parent / target).exists(), f"{path.name} links to missing {target}"
        for src in re.findall(r'<img src="([^"]+)"', text):
            assert (path.parent / src).exists(), f"{path.name} shows missing {src}"


def test_seed_style_is_explained_where_the_readme_first_uses_it():
    text = (ROOT / "README.md").read_text()
    first = text.index("seed-style")
    prose = text[first:text.index("```", first)]      # before the next code block
    assert "grad_gamma" in prose and "backward" in prose and "no autograd" in prose


def test_tutorial_lists_the_differences_from_pytorch():
    text = (ROOT / "docs" / "tutorial.md").read_text()
    section = text[text.index("## Differences from PyTorch"):]
    for habit in ("dim=", "keepdim=", "float(t)", "np.asarray(t)", "allow_unused=True",
                  "retain_grad()", "nn.MLP(2, 16, 2)", "model.to(dtype=", "correction=1",
                  "(values, indices)", "set_default_dtype", "In-place ops"):
        assert habit in section, habit


def test_timing_claims_give_the_machine():
    # a duration quoted in the docs comes with the machine it was measured on
    for path in DOC_FILES:
        for line_no, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"about (a|one|two|three|ten) (minute|second)s?|a few seconds", line):
                raise AssertionError(f"{path.name}:{line_no}: an unmeasured duration: {line}")

"""Every example runs, at a small size, and says what it promises."""

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"


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


def test_quickstart_quick_is_small():
    out = run_example("quickstart.py", "--quick")
    assert "fused: 1 op nodes" in out
    assert "gradcheck of the fused backward (3 x 5, float64): passed" in out


def test_readme_lists_every_example_and_each_has_quick():
    readme = (EXAMPLES.parent / "README.md").read_text()
    for script in sorted(EXAMPLES.glob("*.py")):
        assert f"| `examples/{script.name}` |" in readme, f"README's table lacks {script.name}"
        assert "--quick" in script.read_text(), f"{script.name} has no --quick"


# ----- the training examples, each with --quick in a temporary directory --------------------
# --quick's budget is 5 s of CPU time (measured in the README's set-up); a loaded machine
# stretches CPU time too, so the test allows three times that and catches a regression to
# the tens of seconds a quick run once took
QUICK_CPU_SECONDS = 15


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_quick(name, tmp_path, *args, stderr=False):
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES.parent)}
    start = children_cpu()
    result = subprocess.run([sys.executable, str(EXAMPLES / name), "--quick", "--out",
                             str(tmp_path / "plots"), *args], check=False, capture_output=True,
                            text=True, timeout=300, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    cpu = children_cpu() - start
    assert cpu < QUICK_CPU_SECONDS, f"{name} --quick took {cpu:.1f} s of CPU time"
    return (result.stdout, result.stderr) if stderr else result.stdout


def assert_plotted(out, tmp_path, filename):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "pip install" in out and "[plot]" in out
        return
    assert (tmp_path / "plots" / filename).stat().st_size > 1000


def test_tiny_gpt_quick(tmp_path):
    out = run_quick("tiny_gpt.py", tmp_path, "--no-progress")
    first, last = map(float, re.search(r"loss: first ([0-9.]+), last ([0-9.]+)", out).groups())
    assert last < first
    assert "sample (temperature 0.8):\nBeautiful is" in out
    assert_plotted(out, tmp_path, "tiny_gpt_loss.png")


def test_composite_vs_fused_quick_agree_to_1e_8(tmp_path):
    out = run_quick("composite_vs_fused.py", tmp_path, "--no-progress")
    steps, diff = re.search(r"first (\d+) steps ([0-9.e+-]+)", out).groups()
    assert int(steps) == 30 and float(diff) <= 1e-8           # --quick's steps, all compared
    nodes = dict(re.findall(r"^\s*(composite|fused)\s+(\d+)", out, flags=re.MULTILINE))
    assert int(nodes["fused"]) < int(nodes["composite"])
    assert_plotted(out, tmp_path, "composite_vs_fused.png")


@pytest.mark.parametrize("norm", ["batchnorm", "layernorm"])
def test_mlp_quick_reaches_95_percent(tmp_path, norm):
    out, err = run_quick("mlp.py", tmp_path, "--norm", norm, stderr=True)
    assert err == "train: 150 Adam steps\n"        # in a log: no bar, one summary line
    assert float(re.search(r"train accuracy ([0-9.]+)%", out)[1]) >= 95
    assert_plotted(out, tmp_path, "mlp_moons.png")


def test_batchnorm_modes_quick(tmp_path):
    out = run_quick("batchnorm_modes.py", tmp_path)
    assert "in eval the two batches give the same row: True" in out
    assert "2. batch size 1 in training: ValueError" in out
    means = [float(v) for v in re.findall(r"running_mean ([0-9.-]+) \(data 3.0\)", out)]
    assert len(means) == 2 and all(abs(m - 3.0) < 0.6 for m in means)
    item3 = [line for line in out.splitlines() if "running_mean" in line]
    assert all(line.startswith("   m") for line in item3)      # indented like the items
    assert len({line.index("running_mean") for line in item3}) == 1
    assert_plotted(out, tmp_path, "batchnorm_modes.png")


def assert_table_aligned(header, rows):
    # text columns are left-aligned under their labels, the last (numeric) column ends
    # where its label ends
    for row in rows:
        placement = re.search(r"\b(pre|post|sandwich|deepnorm)\b", row)
        assert header.index("placement") == placement.start(), (header, row)
        assert len(header) == len(row), (header, row)


def test_norm_placement_quick(tmp_path):
    from microgradnorm import nn
    out = run_quick("norm_placement.py", tmp_path)
    rows = re.findall(rf"^\s*({'|'.join(nn.NORMS)})\s+({'|'.join(nn.PLACEMENTS)})\s+(\d+)\s+"
                      r"([0-9.]+)\s+([0-9.]+)", out, flags=re.MULTILINE)
    assert len(rows) == len(nn.NORMS) * len(nn.PLACEMENTS) * 2     # x quick's 2 depths
    lines = out.splitlines()
    for head in (next(i for i, line in enumerate(lines) if "early/late param" in line),
                 next(i for i, line in enumerate(lines) if line.split()[:1] == ["placement"])):
        assert_table_aligned(lines[head], lines[head + 1:head + 4])
    assert "composite graph nodes per norm" in out
    assert_plotted(out, tmp_path, "norm_placement.png")


def test_plots_are_skipped_with_a_hint_without_matplotlib(monkeypatch, capsys):
    from microgradnorm.cli import plotting
    monkeypatch.setitem(sys.modules, "matplotlib", None)       # import matplotlib fails
    assert plotting.pyplot() is None
    assert 'pip install "microgradnorm[plot]"' in capsys.readouterr().out


# ----- --quick yields to the options given (rejections: test_cli_errors.py) -----------------
def test_quick_fills_only_the_options_not_given():
    from microgradnorm.cli.script import ScriptParser, parse_args
    parser = ScriptParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--quick", action="store_true")
    quick = {"steps": 5, "width": 8}
    assert vars(parse_args(parser, ["--quick"], quick)) == {"steps": 5, "width": 8,
                                                            "quick": True}
    assert vars(parse_args(parser, ["--quick", "--steps", "7"], quick))["steps"] == 7
    assert vars(parse_args(parser, ["--steps", "7", "--quick"], quick))["width"] == 8
    assert vars(parse_args(parser, [], quick)) == {"steps": 200, "width": 64, "quick": False}


def test_composite_vs_fused_quick_keeps_the_steps_given(tmp_path):
    out = run_quick("composite_vs_fused.py", tmp_path, "--no-progress", "--steps", "6")
    assert "6 steps, seed 0" in out

"""The command line, run as a user runs it: in a subprocess."""

import re
import subprocess
import sys

import pytest

from microgradnorm import cli


def run_cli(*args, cwd=None):
    result = subprocess.run([sys.executable, "-m", "microgradnorm", *args], cwd=cwd,
                            capture_output=True, text=True, timeout=120)
    return result


def diffs(text):
    return [float(v) for v in re.findall(r"^\s+(?:output|grad \w+|sum x \+ residual|running_\w+)"
                                         r"\s+([0-9.e+-]+)$", text, flags=re.M)]


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm", "batchnorm"])
def test_compare_prints_nodes_bytes_diffs_and_times(norm):
    result = run_cli("compare", "--norm", norm, "--shape", "2,4,8", "--dtype", "float64")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    nodes = re.search(r"op nodes\s+(\d+)\s+(\d+)", out)
    composite_nodes, fused_nodes = int(nodes.group(1)), int(nodes.group(2))
    assert fused_nodes == 1 and composite_nodes >= 6
    saved = re.search(r"bytes saved for backward\s+([\d,]+)\s+([\d,]+)", out)
    assert int(saved.group(2).replace(",", "")) < int(saved.group(1).replace(",", ""))
    assert "forward time" in out and "backward time" in out
    found = diffs(out)
    assert len(found) >= 3 and max(found) <= 1e-10


def test_compare_rejects_a_bad_shape():
    result = run_cli("compare", "--norm", "layernorm", "--shape", "2,x")
    assert result.returncode != 0
    assert "shape" in result.stderr


def test_compare_reports_bad_batchnorm_input_clearly():
    result = run_cli("compare", "--norm", "batchnorm", "--shape", "1,3")
    assert result.returncode == 2
    assert "batch_norm" in result.stderr and "1 value per channel" in result.stderr


def test_demo_compares_every_norm(tmp_path):
    result = run_cli("demo", "--shape", "2,3,4", "--repeat", "1", "--train-steps", "0",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for norm in ("layernorm", "rmsnorm", "batchnorm", "add_layer_norm", "add_rms_norm"):
        row = re.search(rf"^{norm}\s+output\s+(\d+) / 1\s.*\s(\S+)\s+-\s+-\s",
                        result.stdout, flags=re.M)
        assert row and int(row.group(1)) > 1, norm
        assert float(row.group(2)) <= 1e-10            # |fused - composite| of the output
    assert (tmp_path / "microgradnorm-demo" / "report.md").exists()


def test_console_script_points_at_main():
    import tomllib
    from pathlib import Path
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["microgradnorm"] == "microgradnorm.cli:main"
    assert callable(cli.main)

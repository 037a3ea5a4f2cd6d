"""examples/cnn_norms.py --quick: the CNNs with BatchNorm2d and GroupNorm learn the blob
task (train accuracy rises, ends well above chance), within the examples' CPU budget; a
bad option is one line and exit code 2. And examples/group_norm_between.py --quick, the
picture of docs/derivations.md §13: GroupNorm's two ends are LayerNorm and InstanceNorm."""

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "examples" / "cnn_norms.py"
QUICK_CPU_SECONDS = 15        # --quick's budget is 5 s; a loaded machine stretches it


def run(tmp_path, *args, script=SCRIPT):
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parents[1])}
    return subprocess.run([sys.executable, str(script), *args], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env=env)


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_quick_training_raises_accuracy_well_above_chance(tmp_path):
    start = children_cpu()
    result = run(tmp_path, "--quick")
    cpu = children_cpu() - start
    assert result.returncode == 0, result.stderr
    assert cpu < QUICK_CPU_SECONDS, f"--quick took {cpu:.1f} s of CPU time"
    epochs = re.findall(r"^\s+epoch\s+\d+\s+batch_norm ([0-9.]+)\s+group_norm ([0-9.]+)$",
                        result.stdout, flags=re.MULTILINE)
    assert len(epochs) == 4, result.stdout                  # --quick's 4 epochs
    for column in zip(*epochs):
        accuracy = [float(a) for a in column]
        assert accuracy[-1] > accuracy[0] and accuracy[-1] > 0.7, result.stdout
    held = dict(re.findall(r"^(\w+): train .* held-out accuracy \(eval mode\) ([0-9.]+)$",
                           result.stdout, flags=re.MULTILINE))
    assert set(held) == {"batch_norm", "group_norm"}
    assert all(float(a) > 0.6 for a in held.values()), result.stdout
    assert os.listdir(tmp_path) == []                        # no files written


def test_a_norm_without_a_channel_module_is_one_line_exit_2(tmp_path):
    result = run(tmp_path, "--norms", "layer_norm")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "--norms" in result.stderr


def test_group_norm_between_moves_from_layer_norm_to_instance_norm(tmp_path):
    start = children_cpu()
    result = run(tmp_path, "--quick", "--out", str(tmp_path / "plots"),
                 script=SCRIPT.with_name("group_norm_between.py"))
    assert result.returncode == 0, result.stderr
    assert children_cpu() - start < QUICK_CPU_SECONDS
    ends = re.findall(r"against F\.(layer_norm|instance_norm).*difference\| ([0-9.e+-]+)$",
                      result.stdout, flags=re.MULTILINE)
    assert [name for name, _ in ends] == ["layer_norm", "instance_norm"]
    assert all(float(diff) <= 1e-12 for _, diff in ends), result.stdout
    rows = [tuple(map(float, row)) for row in re.findall(
        r"^\s*(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)$", result.stdout, flags=re.MULTILINE)]
    groups, with_layer, with_instance, contrast = zip(*rows)
    assert groups == (1, 2, 4, 8, 16, 32)
    assert with_layer[0] == 1 and with_instance[-1] == 1 and contrast[-1] == 0
    assert list(with_layer) == sorted(with_layer, reverse=True)      # away from LayerNorm
    assert list(with_instance) == sorted(with_instance)              # toward InstanceNorm
    assert list(contrast) == sorted(contrast, reverse=True)
    if "plots skipped" not in result.stdout:
        assert (tmp_path / "plots" / "groupnorm_between.png").stat().st_size > 1000

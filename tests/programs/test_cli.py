"""The command line, run as a user runs it: in a subprocess."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from microgradnorm import cli
from microgradnorm.cli.common import BLAS_THREAD_VARIABLES as BLAS_VARIABLES

ROOT = Path(__file__).parents[2]


def run_cli(*args, cwd=None):
    # PYTHONPATH: the package of this checkout, also when cwd is elsewhere
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "microgradnorm", *args], cwd=cwd,
                            capture_output=True, text=True, timeout=120, env=env)
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
    result = run_cli("demo", "--quick", "--shape", "2,3,4", "--train-steps", "0", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Training the tiny GPT" not in result.stdout       # --train-steps 0 over --quick
    for norm in ("layer_norm", "rms_norm", "batch_norm", "add_layer_norm", "add_rms_norm"):
        row = re.search(rf"^{norm}\s+output\s+(\d+) / 1\s.*\s(\S+)\s+-\s+-\s",
                        result.stdout, flags=re.M)
        assert row and int(row.group(1)) > 1, norm
        assert float(row.group(2)) <= 1e-10            # |fused - composite| of the output
    assert (tmp_path / "out" / "demo" / "report.md").exists()


def test_console_script_points_at_main():
    import tomllib
    from pathlib import Path
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["microgradnorm"] == "microgradnorm.cli:main"
    assert callable(cli.main)


# ----- help texts, options that do something, logs without progress bars --------------------
def subcommand_parsers():
    import argparse

    from microgradnorm.cli.main import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return commands.choices


def test_every_option_of_every_command_has_help_and_shows_its_default():
    import argparse

    for name, parser in subcommand_parsers().items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            option = f"microgradnorm {name} " + (action.option_strings[0]
                                                 if action.option_strings else action.dest)
            assert action.help, f"{option} has no help text"
            flag = isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction))
            if not flag and action.default is not None:
                assert "default" in action.help, f"{option} does not show its default"


def test_train_help_lists_defaults():
    result = run_cli("train", "--help")
    assert result.returncode == 0
    help_text = " ".join(result.stdout.split())
    for text in ("AdamW steps (default 300)", "(default fused)", "(default layer_norm)",
                 "learning rate (default 0.003)", "(default 16)"):
        assert text in help_text, text


@pytest.mark.parametrize("command, own_options", [
    ("train", {"sample", "no_progress"}), ("memory", {"vocab", "trace", "out", "no_plot"})])
def test_train_and_memory_options_are_train_config_fields(command, own_options):
    import dataclasses

    from microgradnorm.cli.common import train_config
    from microgradnorm.train import TrainConfig
    fields = {field.name for field in dataclasses.fields(TrainConfig)}
    defaults = cli.build_parser().parse_args([command])
    assert set(vars(defaults)) - {"command", "run"} - own_options <= fields   # none dropped
    assert train_config(defaults, impl="fused") == TrainConfig()    # the same defaults
    args = cli.build_parser().parse_args([command, "--heads", "2", "--layers", "3",
                                          "--context", "8", "--d-model", "16"])
    config = train_config(args)
    assert (config.n_heads, config.n_layers, config.context_length, config.d_model) == \
        (2, 3, 8, 16)


def test_only_commands_that_time_something_take_repeat():
    takes_repeat = {name for name, parser in subcommand_parsers().items()
                    if any("--repeat" in a.option_strings for a in parser._actions)}
    assert takes_repeat == {"demo", "compare", "bench"}
    result = run_cli("graph", "--repeat", "3")
    assert result.returncode == 2 and "unrecognized arguments: --repeat" in result.stderr


def test_demo_in_a_log_writes_one_flushed_line_per_phase_and_no_bar(tmp_path):
    # stdout and stderr are one pipe here, as in `microgradnorm demo > log 2>&1`: each
    # phase's line on stderr comes after what the phase printed, so stdout was flushed
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "microgradnorm", "demo", "--quick"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout
    log = result.stdout
    assert "\r" not in log and "it/s" not in log
    phases = re.findall(r"^demo (\d)/4: (.+): [0-9.]+ s$", log, flags=re.M)
    assert [int(number) for number, _ in phases] == [1, 2, 3, 4]
    assert "5 steps" in phases[1][1]                           # --quick's training
    order = [log.index(text) for text in ("add_rms_norm    output", "demo 1/4:",
                                          "loss curves agree", "demo 2/4:",
                                          "Low precision against float64", "demo 4/4:")]
    assert order == sorted(order)
    quiet = run_cli("demo", "--quick", "--train-steps", "0", "--no-progress", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""
    quiet = run_cli("train", "--steps", "2", "--sample", "0", "--no-progress", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_demo_quick_fills_only_the_options_not_given(monkeypatch, tmp_path):
    from microgradnorm.cli import demo
    calls = []
    monkeypatch.setattr(demo, "run_demo", lambda *args, **kwargs: calls.append(args))
    for argv in ([], ["--quick"], ["--quick", "--repeat", "3"], ["--train-steps", "7"]):
        assert cli.main(["demo", "--out", str(tmp_path), *argv]) == 0
    # run_demo(out, shape, dtype, repeat, seed, train_steps)
    assert [(args[3], args[5]) for args in calls] == [
        (demo.DEFAULTS["repeat"], demo.DEFAULTS["train_steps"]),
        (demo.QUICK["repeat"], demo.QUICK["train_steps"]), (3, demo.QUICK["train_steps"]),
        (demo.DEFAULTS["repeat"], 7)]
    assert demo.QUICK["train_steps"] < demo.DEFAULTS["train_steps"]


def test_demo_runs_the_numpy_kernels_unless_the_environment_names_others(monkeypatch,
                                                                          tmp_path, capsys):
    import microgradnorm as mg
    from microgradnorm import kernels
    from microgradnorm.cli import demo
    seen = []
    monkeypatch.setattr(demo, "run_demo", lambda *args, **kwargs: seen.append(
        mg.get_cpu_kernels()))
    monkeypatch.delenv(kernels.ENVIRONMENT_VARIABLE, raising=False)
    before = mg.get_cpu_kernels()
    with mg.cpu_kernels("reference"):
        assert cli.main(["demo", "--out", str(tmp_path)]) == 0
        monkeypatch.setenv(kernels.ENVIRONMENT_VARIABLE, "reference")
        assert cli.main(["demo", "--out", str(tmp_path)]) == 0
    assert seen == ["numpy", "reference"] and mg.get_cpu_kernels() == before
    out = capsys.readouterr().out
    assert "(numpy kernels)" in out and "(reference kernels)" in out


# ----- threads: one BLAS thread for the programs --------------------------------------------
def blas_threads():
    from threadpoolctl import threadpool_info
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


@pytest.mark.parametrize("command, pinned", [("graph", True), ("bench", False)])
def test_commands_run_on_one_blas_thread_except_bench(command, pinned, monkeypatch, tmp_path):
    pytest.importorskip("threadpoolctl")
    from microgradnorm.cli import bench, graph
    for name in BLAS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with threadpool_limits_of(2):
        before, seen = blas_threads(), []
        if set(before) != {2}:
            pytest.skip(f"NumPy's BLAS does not take 2 threads here: {before}")
        module = {"graph": graph, "bench": bench}[command]
        monkeypatch.setattr(module, "run", lambda args: seen.append(blas_threads()))
        assert cli.main([command]) == 0
        if pinned:                       # every BLAS loaded then, SciPy's too (numba's dot)
            assert len(seen) == 1 and set(seen[0]) == {1}
        else:
            assert seen == [before]
        assert set(blas_threads()) == {2}                    # restored after the command


def test_an_example_runs_on_one_blas_thread_unless_the_environment_says(monkeypatch):
    pytest.importorskip("threadpoolctl")
    from microgradnorm.cli.script import run_script
    for name in BLAS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with threadpool_limits_of(2):
        if set(blas_threads()) != {2}:
            pytest.skip(f"NumPy's BLAS does not take 2 threads here: {blas_threads()}")
        seen = []
        run_script(lambda: seen.append(blas_threads()))
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")      # the user's own choice stands
        run_script(lambda: seen.append(blas_threads()))
        assert [set(threads) for threads in seen] == [{1}, {2}]


def threadpool_limits_of(threads):
    from threadpoolctl import threadpool_limits
    return threadpool_limits(threads, user_api="blas")


def test_demo_no_progress_reaches_the_training_loop(monkeypatch, tmp_path):
    from microgradnorm.cli import demo
    seen = {}
    monkeypatch.setattr(demo, "run_demo", lambda *args, **kwargs: seen.update(kwargs))
    assert cli.main(["demo", "--out", str(tmp_path), "--no-progress"]) == 0
    assert seen["progress"] is False


def test_every_command_and_example_writes_under_out_by_default():
    from microgradnorm.cli.main import build_parser
    examples = Path(__file__).parents[2] / "examples"
    for argv in (["demo"], ["graph"], ["bench"], ["memory"], ["explain", "jacobian"],
                 ["precision"]):
        assert build_parser().parse_args(argv).out == f"out/{argv[0]}", argv
    for script in examples.glob("*.py"):
        source = script.read_text()
        if '"--out"' in source:
            assert f'default="out/{script.stem}"' in source, script.name
    ignored = (examples.parent / ".gitignore").read_text().splitlines()
    assert "out/" in ignored


SCIPY_BLAS_PROBE = """
import sys
from microgradnorm import cli
from microgradnorm.cli import demo, graph
seen = []
for module in (graph, demo):
    module.run = lambda args: seen.append("scipy.linalg.cython_blas" in sys.modules)
assert cli.main(["demo"]) == 0 and cli.main(["graph"]) == 0
print(seen)
"""


def test_scipys_blas_is_loaded_to_be_pinned_unless_the_command_runs_numpys_kernels():
    """The numba attention kernels multiply through SciPy's BLAS, which threadpoolctl pins
    only if it is loaded: a command loads it first, but the demo (NumPy's kernels)."""
    pytest.importorskip("threadpoolctl")
    pytest.importorskip("scipy")
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARIABLES}
    done = subprocess.run([sys.executable, "-c", SCIPY_BLAS_PROBE], env=env, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["[False,", "True]"]

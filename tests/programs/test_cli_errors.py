"""User errors on the command line and in the examples: one line on stderr,
``"<prog>: error: <message> (see <prog> --help)"``, naming the argument or path; exit code
2, nothing on stdout, no traceback, and nothing written. Run in-process (``cli.main``, each
example's ``main``) for speed; a few examples also as programs."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from microgradnorm import cli
from microgradnorm.cli.script import run_script

EXAMPLES = Path(__file__).parents[2] / "examples"


def run_main(argv, capsys):
    try:
        code = cli.main(argv)
    except SystemExit as exit:                    # argparse's own errors
        code = exit.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_rejected(code, out, err, prog, needle):
    """Exit code 2, nothing on stdout, and one line on stderr in the form every rejection
    takes, containing ``needle``."""
    assert code == 2, err
    assert out == "" and "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"{prog}: error: ") and err.endswith(f" (see {prog} --help)\n"), err
    assert needle in err, err


def command_prog(argv):
    commands = cli.build_parser().commands.choices
    return f"microgradnorm {argv[0]}" if argv and argv[0] in commands else "microgradnorm"


CASES = [
    # (argv, text the one-line error must contain)
    (["demo", "--train-steps", "-1"], "--train-steps"),
    (["demo", "--repeat", "0"], "--repeat"),
    (["demo", "--shape", "100000,100000"], "--shape 100000,100000"),
    (["graph", "--shape", "100000,100000", "--dtype", "float32"], "in float32 needs about"),
    (["graph", "--shape", "0,4"], "--shape"),
    (["graph", "--norm", "all", "--shape", "4"], "batch_norm needs a shape"),
    (["compare", "--repeat", "0"], "--repeat"),
    (["compare", "--scale", "nan"], "--scale"),
    (["compare", "--shape", "100000,100000"], "memory is available"),
    (["train", "--batch-size", "0"], "--batch-size"),
    (["train", "--sample", "-3"], "--sample"),
    (["train", "--steps", "-1"], "--steps"),
    (["train", "--lr", "-0.1"], "--lr"),
    (["train", "--heads", "0"], "--heads"),
    (["train", "--seed", "-1"], "argument --seed: expected an integer in [0, 2**32 - 1]"),
    (["train", "--seed", str(2**32)], "argument --seed"),
    (["memory", "--seed", "-1"], "argument --seed"),
    (["compare", "--seed", "-1"], "argument --seed"),
    (["train", "--d-model", "100000"], "use a smaller --d-model, --layers, --context or"),
    (["train", "--batch-size", "100000000"], "--batch-size 100000000 in float64 needs"),
    (["memory", "--d-model", "100000"], "use a smaller --d-model"),
    (["train", "--resume", "missing.npz"], "--resume missing.npz: No such file or directory"),
    (["train", "--resume", "/dev/zero"], "--resume /dev/zero: /dev/zero is not a regular"),
    (["train", "--resume", "/tmp"], "--resume /tmp: Is a directory"),
    (["train", "--checkpoint", "nodir/ck.npz"], "--checkpoint nodir/ck.npz: the folder"),
    (["explain", "batchnorm", "--steps", "-2"], "--steps"),
    (["explain", "placement", "--seeds", "0"], "--seeds"),
    (["explain", "placement", "--train-steps", "-1"], "--train-steps"),
    (["explain", "placement", "--train-depth", "0"], "--train-depth"),
    (["bench", "--device", "cuda", "--clock", "cpu"], "--clock cpu is for --device cpu"),
    (["bench", "--device", "cuda", "--train"], "--train is for --device cpu"),
    (["bench", "--repeat", "-1"], "--repeat"),
    (["bench", "--torch-threads", "0"], "--torch-threads"),
    (["bench", "--shape", "100000,100000", "--quick"], "memory is available"),
    (["demo", "--shape", "3", "--train-steps", "0"], "batch_norm needs a shape"),
    (["demo", "--shape", "-3,4"], "--shape: shape must be positive ints, got '-3,4'"),
    (["graph", "--shape", "-3"], "--shape: shape must be positive ints, got '-3'"),
    (["memory", "--heads", "3"], "--heads 3 must divide --d-model 32"),
    (["explain", "jacobian", "--eps", "small"], "--eps: expected a number"),
    (["explain", "placement", "--widths", "6", "--seeds", "1"], "--widths"),
    # argparse's own refusals: one line too, never the usage block
    ([], "the following arguments are required: command"),
    (["nosuch"], "invalid choice: 'nosuch'"),
    (["demo", "--bogus"], "unrecognized arguments: --bogus"),
    (["demo", "--quick", "--train-steps", "x"], "argument --train-steps"),
    (["demo", "--dtype", "int8"], "argument --dtype: invalid choice"),
    (["graph", "--format", "gif"], "argument --format: invalid choice"),
    (["graph", "--norm", "nope"], "argument --norm: invalid choice"),
    (["compare", "--norm", "nope"], "argument --norm: invalid choice"),
    (["compare", "--shape"], "argument --shape: expected one argument"),
    (["bench", "--device", "tpu"], "argument --device: invalid choice"),
    (["bench", "--clock", "gpu"], "argument --clock: invalid choice"),
    (["bench", "--dtype", "bfloat16", "--quick"], "--dtype bfloat16 is for --device cuda"),
    (["bench", "--shape", "2,3,4", "--quick"], "--shape takes 2-D shapes M,D"),
    (["train", "--impl", "fast"], "argument --impl: invalid choice"),
    (["train", "--placement", "middle"], "argument --placement: invalid choice"),
    (["train", "extra"], "unrecognized arguments: extra"),
    (["precision", "--dtype", "float8"], "argument --dtype: invalid choice"),
    (["precision", "--seed", "x"], "argument --seed: expected an integer in"),
    (["precision", "--seed", "-5"], "argument --seed: expected an integer in"),
    (["precision", "--bogus"], "unrecognized arguments: --bogus"),
    (["memory", "--vocab", "0"], "argument --vocab"),
    (["memory", "--activation", "relu"], "unrecognized arguments: --activation relu"),
    (["explain"], "the following arguments are required: topic"),
    (["explain", "nope"], "argument topic: invalid choice: 'nope'"),
    (["explain", "jacobian", "--dim", "1"], "--dim must be in [2, 1024]"),
    (["explain", "jacobian", "--dim", "100000000"], "--dim must be in [2, 1024]"),
    (["explain", "jacobian", "--seed", "-1"], "argument --seed: expected an integer in"),
]


@pytest.mark.parametrize("argv, needle", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_arguments_are_one_line_and_write_nothing(argv, needle, capsys, tmp_path,
                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    if argv[:1] in (["demo"], ["graph"]):
        argv = argv + ["--out", str(tmp_path / "out")]
    code, out, err = run_main(argv, capsys)
    assert_rejected(code, out, err, command_prog(argv), needle)
    assert os.listdir(tmp_path) == []            # validated before any file or directory


def test_every_command_has_rejections_checked():
    refused = {argv[0] for argv, _ in CASES if argv}
    assert refused == set(cli.build_parser().commands.choices) | {"nosuch"}


@pytest.mark.parametrize("command", ["demo", "graph"])
def test_an_out_path_that_cannot_be_a_directory(command, capsys, tmp_path):
    existing = tmp_path / "afile"
    existing.write_text("keep")
    for out_path, needle in (("/proc/x", "cannot create"), (str(existing), "not a directory")):
        code, out, err = run_main([command, "--out", out_path, "--train-steps", "0"]
                                  if command == "demo" else [command, "--out", out_path], capsys)
        assert code == 2 and needle in err and out_path in err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert existing.read_text() == "keep"
    assert sorted(os.listdir(tmp_path)) == ["afile"]


OUT_COMMANDS = [
    ["memory", "--batch-size", "2", "--context", "4"],
    ["explain", "jacobian"],
    ["bench", "--train", "--quick", "--repeat", "1", "--quiet"],
    ["precision", "--quick"],
]


@pytest.mark.parametrize("argv", OUT_COMMANDS, ids=[c[0] for c in OUT_COMMANDS])
def test_an_out_file_is_refused_before_the_measurements(argv, capsys, tmp_path):
    existing = tmp_path / "afile"
    existing.write_text("keep")
    code, out, err = run_main(argv + ["--out", str(existing)], capsys)
    assert code == 2 and "not a directory" in err and str(existing) in err
    assert out == "" and len(err.strip().splitlines()) == 1
    assert existing.read_text() == "keep"


def test_an_oserror_during_the_run_is_one_line(capsys, monkeypatch, tmp_path):
    from microgradnorm import viz

    def fail(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "x.dot"))

    monkeypatch.setattr(viz, "render", fail)
    code, out, err = run_main(["graph", "--out", str(tmp_path)], capsys)
    assert code == 1
    assert err.strip() == f"microgradnorm graph: {tmp_path / 'x.dot'}: Permission denied"


def test_graph_draws_the_dtype_asked_for(capsys, tmp_path):
    code, out, err = run_main(["graph", "--norm", "rmsnorm", "--dtype", "float32",
                               "--out", str(tmp_path)], capsys)
    assert code == 0, err
    source = (tmp_path / "rms_norm_twin.dot").read_text()       # the alias's file name
    assert "float32" in source and "float64" not in source


def test_compare_warns_in_words_when_float16_composite_overflows(capsys):
    code, out, err = run_main(["compare", "--norm", "layernorm", "--dtype", "float16",
                               "--scale", "0.001", "--repeat", "1"], capsys)
    assert code == 0, err
    assert "WARNING grad x: the composite result has" in out
    assert "while the fused result is finite everywhere" in out


def test_version(capsys):
    from microgradnorm import __version__
    code, out, err = run_main(["--version"], capsys)
    assert code == 0 and out.strip() == f"microgradnorm {__version__}"


# ----- the examples -------------------------------------------------------------------------
def example(name):
    """The example script ``name`` as a module (its ``main`` not run)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLE_CASES = [
    # (script, argv, text the one-line error must contain)
    ("quickstart", ["--rows", "0"], "argument --rows"),
    ("quickstart", ["--features", "x"], "argument --features"),
    ("quickstart", ["--quick", "--bogus"], "unrecognized arguments: --bogus"),
    ("tiny_gpt", ["--layers", "0", "--quick"], "argument --layers"),
    ("tiny_gpt", ["--d-model", "6"], "--d-model must be a multiple of the 4 attention heads"),
    ("tiny_gpt", ["--impl", "fast"], "argument --impl: invalid choice"),
    ("composite_vs_fused", ["--steps", "0"], "argument --steps"),
    ("composite_vs_fused", ["--norm", "group_norm"], "argument --norm: invalid choice"),
    ("composite_vs_fused", ["--out", "/proc/nope"], "/proc/nope"),
    ("mlp", ["--out", "/proc/nope"], "/proc/nope"),
    ("mlp", ["--steps", "-1"], "argument --steps"),
    ("mlp", ["--batch-size", "500", "--quick"], "--batch-size 500 is more than the 200"),
    ("mlp", ["--batch-size", "1"], "--batch-size must be at least 2 for batch_norm"),
    ("batchnorm_modes", ["--batch-size", "0"], "argument --batch-size"),
    ("batchnorm_modes", ["--batch-size", "1"], "--batch-size must be at least 2"),
    ("norm_placement", ["--depths", "2,x"], "argument --depths"),
    ("norm_placement", ["--out", "/proc/nope"], "/proc/nope"),
    ("norm_placement", ["--d-model", "6", "--quick"], "--d-model must be a multiple of the 4"),
    ("norm_placement", ["--init", "lecun"], "argument --init: invalid choice"),
    ("dyt_vs_layernorm", ["--steps", "5"], "--steps must be at least 20"),
    ("dyt_vs_layernorm", ["--d-model", "6", "--quick"], "--d-model must be a multiple of the 4"),
    ("dyt_vs_layernorm", ["--init", "lecun"], "argument --init: invalid choice"),
    ("dyt_vs_layernorm", ["--out", "/proc/nope"], "/proc/nope"),
]


@pytest.mark.parametrize("name, argv, needle", EXAMPLE_CASES,
                         ids=[f"{n} {' '.join(a)}" for n, a, _ in EXAMPLE_CASES])
def test_bad_example_arguments_are_one_line_and_write_nothing(name, argv, needle, capsys,
                                                              tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [f"{name}.py"])       # argparse's prog, as when run
    main = example(name).main
    with pytest.raises(SystemExit) as exit:
        run_script(lambda: main(argv))
    captured = capsys.readouterr()
    assert_rejected(exit.value.code, captured.out, captured.err, f"{name}.py", needle)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.py")))
def test_every_example_refuses_an_unknown_option_in_one_line(name, capsys, tmp_path,
                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [f"{name}.py"])
    main = example(name).main
    with pytest.raises(SystemExit) as exit:
        run_script(lambda: main(["--quick", "--no-such-option"]))
    captured = capsys.readouterr()
    assert_rejected(exit.value.code, captured.out, captured.err, f"{name}.py",
                    "unrecognized arguments: --no-such-option")
    assert os.listdir(tmp_path) == []


def test_an_example_run_as_a_program_is_refused_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES.parent)}
    result = subprocess.run([sys.executable, str(EXAMPLES / "tiny_gpt.py"), "--d-model", "6"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert_rejected(result.returncode, result.stdout, result.stderr, "tiny_gpt.py",
                    "--d-model must be a multiple of the 4 attention heads, got 6")
    assert os.listdir(tmp_path) == []


def test_a_value_error_that_escapes_an_example_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["examples/tiny_gpt.py"])

    def main():
        raise ValueError("TrainConfig: lr must be > 0,\ngot -1")

    with pytest.raises(SystemExit) as exit:
        run_script(main)
    captured = capsys.readouterr()
    assert_rejected(exit.value.code, captured.out, captured.err, "tiny_gpt.py",
                    "TrainConfig: lr must be > 0, got -1")

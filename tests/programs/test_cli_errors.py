"""User errors on the command line: one line on stderr naming the argument or path, a
non-zero exit, no traceback, and nothing written. Run in-process (``cli.main``) for speed."""

import os

import pytest

from microgradnorm import cli


def run_main(argv, capsys):
    try:
        code = cli.main(argv)
    except SystemExit as exit:                    # argparse's own errors
        code = exit.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


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
    (["explain", "jacobian", "--eps", "-1"], "--eps"),
    (["explain", "placement", "--widths", "6", "--seeds", "1"], "--widths"),
]


@pytest.mark.parametrize("argv, needle", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_arguments_are_one_line_and_write_nothing(argv, needle, capsys, tmp_path,
                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    if argv[0] in ("demo", "graph"):
        argv = argv + ["--out", str(tmp_path / "out")]
    code, out, err = run_main(argv, capsys)
    assert code == 2
    assert needle in err
    assert "Traceback" not in err + out
    assert err.strip().splitlines()[-1].startswith("microgradnorm")
    assert os.listdir(tmp_path) == []            # validated before any file or directory


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

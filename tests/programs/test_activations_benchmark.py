"""benchmarks/activations.py: a quick run times every case on each kernel set and PyTorch
and prints one row per case and dtype, with the machine it ran on."""

import importlib.util
import pathlib
import re

import pytest

pytest.importorskip("numba")
pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("activations_benchmark",
                                              ROOT / "benchmarks" / "activations.py")
activations = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(activations)

ROW = re.compile(r"^(?P<label>.+?)\s+(?P<dtype>float32|float64)\s+(?P<numbers>[\d.\s]+)$")


def test_a_quick_run_prints_every_case_with_ratios(capsys):
    activations.main(["--quick", "--repeat", "1"])
    out = capsys.readouterr().out
    assert "cpu: " in out and "numpy BLAS:" in out and "torch 1 thread" in out
    rows = {}
    for line in out.splitlines():
        match = ROW.match(line)
        if match:
            numbers = [float(n) for n in match["numbers"].split()]
            assert len(numbers) == 5 and all(n > 0 for n in numbers), line
            rows[match["label"], match["dtype"]] = numbers
    labels = ["GELU exact (64, 32)", "GELU tanh (64, 32)", "softmax rows (64, 16)",
              "log-softmax rows (64, 16)", "causal attention (2, 2, 16, 8)",
              "causal attention (2, 2, 16, 8), heads of one projection"]
    expected = {(label, dtype) for label in labels for dtype in ("float32", "float64")}
    assert expected <= set(rows)
    assert sum(label.startswith("AdamW step") for label, _ in rows) == 2
    assert len(rows) == len(expected) + 2

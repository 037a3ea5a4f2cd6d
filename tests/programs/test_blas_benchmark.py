"""benchmarks/blas.py: the products it records are every product of a step of nn.GPT, with
their layouts; the operands it rebuilds have those layouts and multiply as the originals
do; and a quick run from a checkout times them in a fresh process, with
OPENBLAS_CORETYPE reaching that process, and prints its table of ratios."""

import importlib.util
import os
import pathlib
import platform
import re
import subprocess
import sys

import numpy as np
import pytest

from microgradnorm.cli import bench_train

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("blas_benchmark", ROOT / "benchmarks" / "blas.py")
blas = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(blas)


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as info:
            return next((set(line.split(":", 1)[1].split()) for line in info
                         if line.startswith("flags")), set())
    except OSError:
        return set()


def test_one_step_records_every_product_of_nn_gpt():
    assert blas.SIZES == bench_train.TRAIN_SIZES            # the sizes bench --train times
    assert blas.QUICK_SIZES == bench_train.QUICK_SIZES
    d_model, n_layers, context, batch = blas.QUICK_SIZES[0]
    products = blas.step_products(d_model, n_layers, context, batch)
    assert sum(p["count"] for p in products) == blas.expected_calls(n_layers) == 21
    rows = batch * context
    # the head's forward: (B·T, d) stacked rows times its weight's transpose, a view
    head = [p for p in products if p["a_shape"] == (rows, d_model)
            and p["b_shape"] == (d_model, blas.VOCAB)]
    assert head and head[0]["b_strides"] == (1, d_model)
    assert blas.product_label(head[0]["a_shape"], head[0]["a_strides"], head[0]["b_shape"],
                              head[0]["b_strides"]) == f"({rows}x{d_model})N @ ({d_model}x64)T"
    # attention's batched products: (B, H) of them, one label with the batch count first
    batched = [p for p in products if len(p["a_shape"]) == 4]
    assert batched and all(p["a_shape"][:2] == (batch, blas.HEADS) for p in batched)
    assert blas.describe_products(blas.QUICK_SIZES, products).count("WARNING") == 0
    assert "WARNING" in blas.describe_products(blas.QUICK_SIZES, products[1:])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rebuilt_operands_have_the_recorded_strides_and_multiply_alike(dtype):
    rng = np.random.default_rng(1)
    qkv = rng.standard_normal((2, 5, 3 * 8)).astype(dtype)           # (B, T, 3C), C = 8
    q = qkv[..., :8].reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)       # (B, H, T, D) view
    k_t = q.swapaxes(-1, -2)                                         # (B, H, D, T) view
    record = {"a_shape": q.shape, "a_strides": tuple(s // q.itemsize for s in q.strides),
              "b_shape": k_t.shape, "b_strides": tuple(s // q.itemsize for s in k_t.strides)}
    a = blas.strided(record["a_shape"], record["a_strides"], dtype, rng)
    b = blas.strided(record["b_shape"], record["b_strides"], dtype, rng)
    assert a.strides == q.strides and b.strides == k_t.strides and a.dtype == dtype
    expected = np.ascontiguousarray(a) @ np.ascontiguousarray(b)
    np.testing.assert_allclose(a @ b, expected, rtol=1e-5 if dtype == "float32" else 1e-12)
    assert blas.product_label(**record) == "4 x (5x4)N @ (4x5)T"


def test_a_product_is_timed_by_both_clocks_and_without_torch_alone():
    product = {"a_shape": (8, 4), "a_strides": (4, 1), "b_shape": (4, 3), "b_strides": (1, 4)}
    times = blas.time_product(product, "float64", 3, 1e-4, np.random.default_rng(0))
    assert set(times) == {"numpy"}                                  # --numpy-only
    assert times["numpy"]["cpu"] > 0 and times["numpy"]["wall"] > 0
    torch = pytest.importorskip("torch")
    times = blas.time_product(product, "float32", 3, 1e-4, np.random.default_rng(0), torch)
    assert set(times) == {"numpy", "torch"} and times["torch"]["spread"] >= 0


def test_the_table_sums_each_product_count_times_its_median():
    times = {"numpy": {"cpu": 2e-3, "wall": 2e-3, "spread": 0.0},
             "torch": {"cpu": 1e-3, "wall": 1e-3, "spread": 0.0}}
    result = {"blas": {"name": "openblas 0.3.31", "kernels": "SkylakeX", "threads": 1},
              "records": [{"d_model": 64, "dtype": "float32", "count": 3, "times": times},
                          {"d_model": 64, "dtype": "float32", "count": 1, "times": times}]}
    totals = blas.step_totals(result)[(64, "float32")]
    assert totals["numpy"]["cpu"] == pytest.approx(8e-3)
    assert totals["torch"]["cpu"] == pytest.approx(4e-3)
    table = blas.format_ratios([(("auto", 1), result), (("Haswell", 1), {"failed": "signal 4"})])
    assert re.search(r"auto\s+openblas 0\.3\.31 SkylakeX\s+1\s+64\s+float32\s+8\.000\s+4\.000"
                     r"\s+2\.00\s+1\.00", table)
    assert "failed: signal 4" in table


def test_quick_run_from_a_checkout_prints_the_table():
    # Haswell's kernels where the CPU runs them, to see OPENBLAS_CORETYPE reach the process
    forced = platform.machine() in ("x86_64", "AMD64") and {"avx2", "fma"} <= cpu_flags()
    coretype = "Haswell" if forced else "auto"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "blas.py"), "--quick",
                           "--coretype", coretype], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "cpu: " in out and "load average at start" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(f"  {coretype} ")]
    assert len(rows) == 2, out                                    # float32 and float64
    at = [next(i for i, word in enumerate(row) if word.startswith("float")) for row in rows]
    assert {row[i] for row, i in zip(rows, at)} == {"float32", "float64"}, out
    if "openblas" in rows[0] and forced:
        assert rows[0][rows[0].index("openblas") + 2] == "Haswell", out
    for row, i in zip(rows, at):
        numpy_ms, torch_ms, ratio = row[i + 1:i + 4]
        assert float(numpy_ms) > 0, out
        if torch_ms != "n/a":         # the ratio of the times, each printed to 0.001 ms
            low = (float(numpy_ms) - 5e-4) / (float(torch_ms) + 5e-4)
            high = (float(numpy_ms) + 5e-4) / (float(torch_ms) - 5e-4)
            assert low - 0.005 <= float(ratio) <= high + 0.005, out

"""The benchmark harness: timing, bytes and GB/s arithmetic, the table, the command."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from microgradnorm.cli import bench, bench_harness

ROOT = Path(__file__).parents[2]


def fake_timer(samples):
    """A timer that calls fn and returns the next of ``samples`` as its duration."""
    samples = iter(samples)

    def timer(fn):
        fn()
        return next(samples)
    return timer


def test_time_call_runs_warmup_untimed_and_keeps_every_sample():
    calls = []
    timing = bench_harness.time_call(lambda: calls.append(1), repeat=3, warmup=2,
                             timer=fake_timer([0.3, 0.1, 0.2]))
    assert len(calls) == 5
    assert timing.samples == (0.3, 0.1, 0.2)
    assert timing.median == 0.2 and timing.min == 0.1


def test_median_of_an_even_count_is_the_mean_of_the_middle_two():
    assert bench_harness.Timing((4.0, 1.0, 3.0, 2.0)).median == 2.5


def test_default_timer_synchronizes_before_and_after_each_timed_call():
    events = []
    bench_harness.time_call(lambda: events.append("call"), repeat=2, warmup=1,
                    synchronize=lambda: events.append("sync"))
    assert events == ["call"] + ["sync", "call", "sync"] * 2


def test_time_call_rejects_zero_repeats():
    with pytest.raises(ValueError, match="repeat"):
        bench_harness.time_call(lambda: None, repeat=0)


def test_copy_bandwidth_counts_read_and_write_bytes():
    gbps = bench_harness.copy_bandwidth(np, nbytes=2**20, repeat=3, warmup=0,
                                timer=fake_timer([1e-3, 2e-3, 3e-3]))
    assert gbps == pytest.approx(2 * 2**20 / 2e-3 / 1e9)


def test_minimal_bytes_per_norm_and_phase():
    minimal_bytes = bench_harness.minimal_bytes
    assert minimal_bytes("layer_norm", (4, 8), "float32", "forward") == 2 * 32 * 4
    assert minimal_bytes("rms_norm", (4, 8), "float64", "forward+backward") == 5 * 32 * 8
    assert minimal_bytes("batch_norm", (4, 8), "float32", "backward") == 3 * 32 * 4
    assert minimal_bytes("add_layer_norm", (4, 8), "float32", "backward") == 4 * 32 * 4
    assert minimal_bytes("add_rms_norm", (4, 8), "float32", "forward") == 4 * 32 * 4
    assert minimal_bytes("layernorm", (4, 8), "float32", "forward") == 2 * 32 * 4   # an alias
    with pytest.raises(ValueError, match="norm"):
        minimal_bytes("groupnorm", (4, 8), "float32", "forward")
    with pytest.raises(ValueError, match="phase"):
        minimal_bytes("layer_norm", (4, 8), "float32", "backward only")


def make_row(impl, median_s, phase="forward", **kwargs):
    return bench_harness.BenchRow(
        "cpu", "layer_norm", (1000, 1000), "float32", impl, phase,
        bench_harness.Timing((median_s,)),
        bench_harness.minimal_bytes("layer_norm", (1000, 1000), "float32", phase), **kwargs)


def test_row_derives_gbps_percent_of_copy_and_speedups():
    row = make_row("fused", 0.004, copy_gbps=4.0)
    assert row.median_ms == pytest.approx(4.0)
    assert row.gbps == pytest.approx(8e6 / 0.004 / 1e9)            # 2.0 GB/s
    assert row.pct_copy == pytest.approx(50.0)
    assert row.vs_composite is None and row.vs_torch is None
    rows = bench_harness.fill_ratios([make_row("composite", 0.012), row, make_row("torch", 0.002),
                              make_row("fused", 0.001, phase="forward+backward")])
    assert row.vs_composite == pytest.approx(3.0)
    assert row.vs_torch == pytest.approx(0.5)
    assert rows[0].vs_composite == pytest.approx(1.0)
    assert rows[3].vs_composite is None             # no composite row for that phase


def test_table_has_a_header_and_one_line_per_row_with_dashes_for_missing_values():
    rows = bench_harness.fill_ratios([make_row("composite", 0.012), make_row("fused", 0.004)])
    lines = bench_harness.format_table(rows).splitlines()
    assert lines[0].split()[:3] == ["norm", "shape", "dtype"]
    assert set(lines[1]) == {"-", " "}
    assert len(lines) == 4
    fused = lines[3].split()
    assert fused[:5] == ["layer_norm", "1000x1000", "float32", "fused", "forward"]
    assert fused[5] == "4.000" and fused[-2] == "3.00" and fused[-1] == "-"


def test_run_norm_bench_measures_every_impl_and_phase():
    impls = ("composite", "fused") + (("torch",) if bench_harness.torch_available() else ())
    rows = bench.run_norm_bench(("layernorm", "add_rms_norm"), ((6, 8),), ("float64",),
                                impls, repeat=1, warmup=0)     # an alias is named as NORMS
    assert len(rows) == 2 * len(impls) * 2
    by_key = {(r.norm, r.impl, r.phase): r for r in rows}
    for norm in ("layer_norm", "add_rms_norm"):
        fused = by_key[(norm, "fused", "forward+backward")]
        composite = by_key[(norm, "composite", "forward+backward")]
        assert fused.saved_bytes < composite.saved_bytes
        assert fused.vs_composite == pytest.approx(composite.timing.median / fused.timing.median)
        assert all(s > 0 for s in fused.timing.samples)


def test_engine_overhead_counts_three_nodes_per_layer_and_the_sum():
    result = bench.engine_overhead(layers=3, repeat=2, warmup=0)
    assert result.nodes == 3 * 3 + 1
    assert result.us_per_node == pytest.approx(result.timing.median / 10 * 1e6)


def test_transformer_step_times_a_training_step_with_fewer_nodes_when_fused():
    steps = {impl: bench.transformer_step(impl, d_model=8, n_heads=2, n_layers=1,
                                          context_length=4, batch_size=2, vocab_size=11,
                                          repeat=2, warmup=0)
             for impl in ("composite", "fused")}
    assert steps["fused"].nodes < steps["composite"].nodes
    for step in steps.values():
        assert len(step.timing.samples) == 2 and step.timing.min > 0
        assert step.us_per_node == pytest.approx(step.timing.median / step.nodes * 1e6)


def run_cli(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "microgradnorm", *args], check=False,
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)


def test_bench_quick_prints_the_machine_the_engine_and_the_table_last():
    result = run_cli("bench", "--quick", "--norm", "layernorm", "rmsnorm", "--dtype",
                     "float32")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert re.search(r"copyto bandwidth: [0-9.]+ GB/s", out)
    assert re.search(r"engine: [0-9.]+ us per node", out)
    assert re.search(r"composite norms [0-9.]+ ms \(\d+ nodes\), fused norms [0-9.]+ ms "
                     r"\(\d+ nodes\)", out)
    table = out.strip().split("\n\n")[-1].splitlines()
    assert table[0].startswith("norm")
    rows = [line.split() for line in table[2:]]
    impls = 3 if bench_harness.torch_available() else 2
    assert len(rows) == 2 * len(bench.QUICK_SHAPES) * impls * 2
    assert {r[0] for r in rows} == {"layer_norm", "rms_norm"}      # the aliases' names
    assert all(float(r[5]) > 0 for r in rows)


def test_bench_on_cuda_without_a_gpu_says_what_it_needs():
    from microgradnorm import backend
    if backend.cuda_available():
        pytest.skip("a GPU is usable here")
    result = run_cli("bench", "--device", "cuda", "--quick")
    assert result.returncode == 2
    assert "needs CuPy and a GPU" in result.stderr


def test_time_interleaved_takes_turns_and_keeps_samples_per_callable():
    calls = []
    timings = bench_harness.time_interleaved({"a": lambda: calls.append("a"),
                                      "b": lambda: calls.append("b")}, repeat=2, warmup=1,
                                     timer=fake_timer([1.0, 2.0, 3.0, 4.0]))
    assert calls == ["a", "b", "a", "b", "a", "b"]
    assert timings["a"].samples == (1.0, 3.0) and timings["b"].samples == (2.0, 4.0)
    with pytest.raises(ValueError, match="repeat"):
        bench_harness.time_interleaved({"a": lambda: None}, repeat=0)


def test_benchmark_scripts_run_from_a_checkout():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    passes = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "passes.py"), "64",
                             "32"], check=False, capture_output=True, text=True, timeout=120,
                            env=env)
    assert passes.returncode == 0, passes.stderr
    assert re.search(r"copy \(np.copyto\)\s+whole\s+[0-9.]+\s+blocked\s+[0-9.]+", passes.stdout)
    cpu = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cpu.py"), "--quick",
                          "--norm", "rmsnorm", "--dtype", "float64", "--quiet"], check=False,
                         capture_output=True, text=True, timeout=300, env=env)
    assert cpu.returncode == 0, cpu.stderr
    assert cpu.stdout.strip().splitlines()[-1].startswith("rms_norm")


def test_step_profile_rejects_an_unknown_dtype_before_it_builds_a_model():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "step_profile.py"),
                             "float16"], check=False, capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 2
    assert "invalid choice: 'float16'" in result.stderr and "Traceback" not in result.stderr


def test_bench_rejects_a_shape_that_is_not_2d():
    result = run_cli("bench", "--quick", "--shape", "4,8,16")
    assert result.returncode == 2
    assert "--shape takes 2-D shapes M,D" in result.stderr


def test_cpu_timer_counts_this_process_cpu_time_not_sleep():
    import time
    slept = bench_harness.cpu_timer(lambda: time.sleep(0.05))
    assert slept < 0.02
    busy = bench_harness.cpu_timer(lambda: sum(range(300_000)))
    assert busy > 0


def test_bench_clock_cpu_is_refused_for_cuda():
    result = run_cli("bench", "--device", "cuda", "--clock", "cpu", "--quick")
    assert result.returncode == 2 and "--clock cpu" in result.stderr


# ----- a busy machine: unsteady samples and load are said, not hidden ---------------------
def test_spread_is_the_interquartile_range_over_the_median():
    samples = (1.0, 1.1, 1.2, 1.5, 3.0)
    q1, median, q3 = np.percentile(samples, [25, 50, 75])      # NumPy's linear = inclusive
    assert bench_harness.Timing(samples).spread == pytest.approx((q3 - q1) / median)
    assert bench_harness.Timing((2.0,)).spread == 0.0


def test_a_ratio_on_unsteady_samples_is_marked_and_explained():
    steady = [0.010, 0.010, 0.0101, 0.0099, 0.010]
    noisy = [0.004, 0.002, 0.009, 0.004, 0.012]                 # IQR/median 1.75
    rows = [make_row("composite", 0.0), make_row("fused", 0.0), make_row("torch", 0.0)]
    for row, samples in zip(rows, (steady, noisy, steady)):
        row.timing = bench_harness.Timing(tuple(samples))
    bench_harness.fill_ratios(rows)
    table = [line.split() for line in bench_harness.format_table(rows).splitlines()[2:]]
    composite, fused, torch_row = table
    assert fused[-2] == "2.50?" and fused[-1] == "2.50?"         # noisy vs steady
    assert composite[-2:] == torch_row[-2:] == ["1.00", "1.00"]  # steady vs steady, itself
    note = bench_harness.steadiness_note(rows)
    assert "1 of 3 rows" in note and "--clock cpu" in note and "--torch-threads 1" in note
    steady_rows = bench_harness.fill_ratios([make_row("composite", 0.01),
                                             make_row("fused", 0.004)])
    assert bench_harness.steadiness_note(steady_rows) is None
    assert "?" not in bench_harness.format_table(steady_rows)


def test_a_load_above_the_core_count_is_a_warning_naming_the_steady_flags():
    assert bench_harness.load_warning(load=1.5, cores=2) is None
    warning = bench_harness.load_warning(load=5.0, cores=2)
    assert "load average 5.0 on 2 cores" in warning
    assert all(flag in warning for flag in ("--clock cpu", "--torch-threads 1", "--repeat"))

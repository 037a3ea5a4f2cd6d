"""`microgradnorm explain`: the Jacobian spectra against their closed forms, BatchNorm's
train/eval gap, batch sizes 2 and 1, and the command."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.cli import explain

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("dim", [3, 8])
@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_jacobian_spectrum_matches_the_closed_form(norm, dim):
    spectrum = explain.jacobian_spectrum(norm, dim, eps=1e-5, seed=1)
    np.testing.assert_allclose(spectrum.jacobian, spectrum.closed_form, atol=1e-13)
    nonzero = spectrum.predicted > 0
    np.testing.assert_allclose(spectrum.singular_values[nonzero], spectrum.predicted[nonzero],
                               rtol=1e-6)
    assert np.all(spectrum.singular_values[~nonzero] < 1e-14)
    xhat, ones = spectrum.xhat(), np.ones(dim)
    # the smallest: 1 for LayerNorm (exactly 0), x_hat for RMSNorm (eps-sized)
    assert spectrum.cosines(ones if norm == "layer_norm" else xhat)[0] == pytest.approx(1, abs=1e-9)
    if norm == "layer_norm":
        assert spectrum.cosines(xhat)[1] == pytest.approx(1, abs=1e-9)
        assert np.abs(spectrum.jacobian @ ones).max() < 1e-13
    else:
        assert np.linalg.norm(spectrum.jacobian @ ones) > 0.1        # 1 is not annihilated
    assert "singular values" in spectrum.report()


def test_the_centering_identity_holds_for_values_and_jacobians():
    dim, x = 6, np.random.default_rng(3).normal(2.0, 3.0, 6)
    centering = np.eye(dim) - 1 / dim
    np.testing.assert_allclose(F.layer_norm(mg.tensor(x), dim).data,
                               F.rms_norm(mg.tensor(centering @ x), dim, eps=1e-5).data,
                               atol=1e-14)
    j_ln = mg.jacobian(lambda t: F.layer_norm(t, dim), mg.tensor(x))
    j_rms = mg.jacobian(lambda t: F.rms_norm(t, dim, eps=1e-5), mg.tensor(centering @ x))
    np.testing.assert_allclose(j_ln, j_rms @ centering, atol=1e-14)
    assert "centering identity" in explain.centering_identity(dim)


def test_batchnorm_gap_shrinks_with_batch_size_and_needs_converged_running_stats():
    gaps = explain.batchnorm_gaps(batch_sizes=(4, 16, 64), momenta=(0.01, None), steps=60,
                                  features=8, eval_batches=10)
    cumulative = gaps.gap[None]
    assert cumulative[0] > cumulative[1] > cumulative[2]
    assert cumulative[0] / cumulative[2] == pytest.approx(4, rel=0.35)     # about 1/sqrt(B)
    assert gaps.gap[0.01][2] > 3 * cumulative[2]     # momentum 0.01: not converged in 60 steps
    assert gaps.running_error[0.01][2] > gaps.running_error[None][2]
    assert "B=16" in gaps.report()


def test_batch_of_two_loses_the_values_and_batch_of_one_fails_in_training():
    text = explain.batch_of_two()
    values = [float(v) for v in text.split("[")[1].split("]")[0].split()]
    assert len(values) == 12 and all(abs(v - 1) < 1e-2 for v in values)
    assert "ValueError" in explain.batch_of_one() and "LayerNorm(6)" in explain.batch_of_one()


@pytest.mark.parametrize("topic, extra", [("jacobian", ["--dim", "5"]),
                                          ("batchnorm", ["--steps", "20"])])
def test_explain_command_prints_and_draws(topic, extra, tmp_path):
    pytest.importorskip("matplotlib")
    out = subprocess.run([sys.executable, "-m", "microgradnorm", "explain", topic, *extra,
                          "--out", str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert (tmp_path / f"explain_{topic}.png").stat().st_size > 10_000
    assert ("singular values" if topic == "jacobian" else "train - y_eval") in out.stdout


def test_placement_sweep_and_warmup_runs_small():
    sweep = explain.placement_sweep(widths=(8,), depths=(2, 4), seeds=2, inits=("xavier",))
    assert set(sweep.ratios) == {("xavier", 8, p, d) for p in ("pre", "post", "sandwich",
                                                               "deepnorm") for d in (2, 4)}
    assert all(len(r) == 2 and all(v > 0 for v in r) for r in sweep.ratios.values())
    assert sweep.profiles["xavier", 8, "pre", 4].shape == (4,)
    params, stream = explain.block_grad_norms(4, "layernorm", "pre", 8, "xavier", seed=0)
    assert explain.early_late(params) == pytest.approx(params[0] / params[-1])  # 1 block each
    assert "post per seed" in sweep.report()
    settings = [("post", "xavier", 1e-2, 0), ("post", "xavier", 1e-2, 2)]
    runs = explain.warmup_runs(steps=3, depth=1, settings=settings, d_model=8)
    assert all(len(losses) == 3 for losses in runs.values())
    assert runs[settings[0]][0] == runs[settings[1]][0]              # same first batch
    assert runs[settings[0]][1] != runs[settings[1]][1]              # lr/2 at step 0
    assert "warmup" in explain.warmup_report(runs, 3, 1)


def test_training_runs_cover_every_placement_and_are_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    assert {s[0] for s in explain.WARMUP_SETTINGS} == set(mg.nn.PLACEMENTS)
    for placement in mg.nn.PLACEMENTS:                       # the common setting, both inits
        for init in ("xavier", "gpt2"):
            assert (placement, init, 3e-3, 0) in explain.WARMUP_SETTINGS
    settings = [(p, "xavier", 1e-2, 0) for p in ("sandwich", "deepnorm")]
    runs = explain.warmup_runs(steps=3, depth=2, settings=settings, d_model=8)
    assert runs[settings[0]] != runs[settings[1]]            # different models were trained
    report = explain.warmup_report(runs, 3, 2)
    assert "sandwich" in report and "deepnorm" in report
    sweep = explain.placement_sweep(widths=(8,), depths=(2,), seeds=1, inits=("xavier", "gpt2"))
    path = explain.plot_placement(sweep, runs, tmp_path)
    assert Path(path).stat().st_size > 10_000


def test_explain_jacobian_refuses_dim_1_in_one_line_before_writing(tmp_path, capsys):
    from microgradnorm.cli.main import main
    assert main(["explain", "jacobian", "--dim", "1", "--out", str(tmp_path / "new")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("microgradnorm explain: error: --dim must be in [2, 1024] for the jacobian "
                   "(a D x D matrix, drawn), got 1 (see microgradnorm explain --help)")
    assert not (tmp_path / "new").exists()

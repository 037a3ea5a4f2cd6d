"""``mg.precision_report`` and ``microgradnorm precision``: the lessons the report exists to
show are asserted with its own numbers, and the command runs end to end."""

import sys

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import dtypes
from microgradnorm.checks import precision
from microgradnorm import cli


@pytest.fixture(scope="module")
def report():
    return mg.precision_report(quick=True)


def worst(report, norm, impl, dtype, family):
    cell = report.cell(norm, impl, dtype, family)
    return np.inf if cell.nonfinite else cell.worst


def test_float16_composite_returns_zeros_past_256_where_fused_does_not(report):
    # x² = 9·10⁴ passes 65504: the composite variance is inf and x̂ = centred / inf = 0.
    assert worst(report, "layer_norm", "composite", "float16", "scale 300") > 1
    assert worst(report, "layer_norm", "fused", "float16", "scale 300") < 1e-2
    assert worst(report, "rms_norm", "composite[none]", "float16", "scale 300") > 1
    assert worst(report, "rms_norm", "fused[none]", "float16", "scale 300") < 1e-2
    # llama and gemma cast x to float32 first: no overflow in either impl.
    for impl in ("composite[llama]", "composite[gemma]"):
        assert worst(report, "rms_norm", impl, "float16", "scale 300") < 1e-2


def test_one_pass_variance_fails_where_two_pass_does_not(report):
    assert report.cell("layer_norm", "one-pass", "float16", "offset 1e4").nonfinite > 0
    assert worst(report, "layer_norm", "one-pass", "float32", "constant rows") > 0.1
    assert worst(report, "layer_norm", "fused", "float32", "constant rows") < 0.1
    assert worst(report, "layer_norm", "fused", "float16", "offset 1e4") < 1e-2


def test_eps_outside_the_square_root_against_pytorchs_convention(report):
    # var = 0: d sqrt(var)/d var is infinite, so its backward is inf/NaN.
    for dtype in report.dtypes:
        assert report.cell("layer_norm", "eps-outside", dtype, "constant rows").nonfinite > 0
        assert report.cell("layer_norm", "fused", dtype, "constant rows").nonfinite == 0
    # Even on normal rows the float32 result is ~eps/2 off PyTorch's, 10× float32 rounding.
    assert (worst(report, "layer_norm", "eps-outside", "float32", "normal")
            > 10 * worst(report, "layer_norm", "fused", "float32", "normal"))


def test_casting_modes_show_their_rounding(report):
    for dtype in report.dtypes:
        if dtype == "float32":        # no cast at all: the modes are the same function
            assert (report.cell("rms_norm", "fused[llama]", dtype, "normal").errors
                    == report.cell("rms_norm", "fused[gemma]", dtype, "normal").errors)
            continue
        # gemma rounds once; llama rounds x̂ and then y.
        assert (worst(report, "rms_norm", "fused[gemma]", dtype, "normal")
                <= worst(report, "rms_norm", "fused[llama]", dtype, "normal"))


def test_low_precision_errors_sit_at_the_dtypes_resolution(report):
    scale = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24}
    for dtype in report.dtypes:
        got = worst(report, "layer_norm", "fused", dtype, "normal")
        assert scale[dtype] < got < 64 * scale[dtype], dtype


def test_table_and_markdown_list_every_cell(report):
    table = report.table()
    markdown = report.markdown("heat.png")
    for norm, impl in report.rows():
        assert impl in table and f"| {norm} | {impl} |" in markdown
    assert "![precision heatmap](heat.png)" in markdown
    assert len(report.cells) == len(report.rows()) * len(report.dtypes) * 5


def test_precision_command_end_to_end(tmp_path, capsys):
    assert cli.main(["precision", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "layer_norm composite" in out and "scale 300" in out
    markdown = (tmp_path / "precision.md").read_text()
    assert "# Precision report" in markdown and "one-pass" in markdown
    pytest.importorskip("matplotlib")
    png = (tmp_path / "precision_heatmap.png").read_bytes()
    assert png.startswith(b"\x89PNG") and "precision_heatmap.png" in markdown


def test_without_matplotlib_the_report_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert cli.main(["precision", "--quick", "--dtype", "float32", "--out",
                     str(tmp_path)]) == 0
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert not (tmp_path / "precision_heatmap.png").exists()
    assert "![" not in (tmp_path / "precision.md").read_text()


def test_without_ml_dtypes_bfloat16_is_skipped_with_a_note(monkeypatch):
    monkeypatch.setattr(dtypes, "bfloat16", None)
    report = precision.precision_report(quick=True, families=("normal",))
    assert report.dtypes == ("float16", "float32")
    assert "ml_dtypes" in report.table()


@pytest.mark.parametrize("kwargs, match", [
    ({"dtypes_": ["float8"]}, "dtypes must be among"),
    ({"families": ["uniform"]}, "families must be among"),
    ({"shape": (1, 8)}, "shape must be"),
])
def test_bad_arguments_are_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        precision.precision_report(quick=True, **kwargs)


# ----- BatchNorm ----------------------------------------------------------------------------
def test_batch_norm_rows_are_in_the_report(report):
    rows = report.rows()
    for impl in ("composite", "fused", "one-pass"):
        assert ("batch_norm", impl) in rows
    assert "batch_norm" in report.table()
    assert set(report.cell("batch_norm", "fused", "float32", "normal").errors) == {
        "y", "dx", "dweight", "dbias"}


@pytest.mark.parametrize("family", precision.FAMILIES)
def test_families_land_on_what_each_norm_normalizes(family):
    shape = (6, 10)
    rows_x = precision.draw_input("layer_norm", family, shape, np.random.default_rng(1))
    batch_x = precision.draw_input("batch_norm", family, shape, np.random.default_rng(1))
    assert rows_x.shape == batch_x.shape == shape
    channels = precision.draw_family(family, shape[::-1], np.random.default_rng(1))
    np.testing.assert_array_equal(batch_x, channels.T)    # drawn as rows of channels
    if family == "constant rows":     # LayerNorm's rows, BatchNorm's channels are constant
        assert (np.ptp(rows_x, axis=1) == 0).all() and (np.ptp(rows_x, axis=0) > 0).all()
        assert (np.ptp(batch_x, axis=0) == 0).all() and (np.ptp(batch_x, axis=1) > 0).all()


def test_batch_norm_float16_composite_overflows_where_fused_does_not(report):
    # (x − μ)² of the scale-300 family passes 65504 in the composite graph.
    assert worst(report, "batch_norm", "composite", "float16", "scale 300") > 1
    assert worst(report, "batch_norm", "fused", "float16", "scale 300") < 1e-2


def test_batch_norm_one_pass_variance_fails_on_the_offset_family(report):
    # E[x²] − E[x]² per channel: x² = 10⁸ overflows float16; in float32 the difference of
    # two numbers agreeing to 14 digits goes negative, and its square root is NaN.
    assert report.cell("batch_norm", "one-pass", "float16", "offset 1e4").nonfinite > 0
    assert report.cell("batch_norm", "one-pass", "float32", "offset 1e4").nonfinite > 0
    for dtype in report.dtypes:
        assert report.cell("batch_norm", "fused", dtype, "offset 1e4").nonfinite == 0
    assert worst(report, "batch_norm", "fused", "float16", "offset 1e4") < 1e-2

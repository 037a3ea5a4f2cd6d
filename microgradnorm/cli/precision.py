"""``microgradnorm precision``: accuracy against float64 across dtypes and input families.

Runs ``mg.precision_report`` (LayerNorm, RMSNorm and BatchNorm, every implementation,
float16 / bfloat16 / float32, five input families), prints the table, and writes
``precision.md`` and, with matplotlib, ``precision_heatmap.png`` into the output directory.
``--quick`` uses (8, 64) inputs and runs in 1.5 s wall, the full run (64, 512) in 2.9 s,
both mostly imports and the PNG (loaded 2-core AMD EPYC). docs/precision.md reads it.
"""

from pathlib import Path

from ..checks.precision import DTYPES, PrecisionReport, precision_report
from .common import check_out_dir
from .plotting import INSTALL_HINT

HEATMAP, REPORT = "precision_heatmap.png", "precision.md"


def run_precision(out_dir, quick=False, seed=0, dtypes=None, echo=print):
    """Measure, print the table, write the report (and heatmap) into ``out_dir``; returns
    (report, list of written paths)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = precision_report(quick=quick, seed=seed, dtypes_=dtypes)
    echo(report.table())
    files = []
    heatmap = report.heatmap(out_dir / HEATMAP)
    if heatmap is None:
        echo(INSTALL_HINT)
    else:
        files.append(Path(heatmap))
    path = out_dir / REPORT
    path.write_text(report.markdown(HEATMAP if heatmap else None), encoding="utf-8")
    files.append(path)
    echo("\nwrote " + ", ".join(str(p) for p in files))
    return report, files


def summary(report: PrecisionReport):
    """A line per lesson the table shows, with its numbers, for other reports."""
    lines = []
    for dtype, family, norm, a, b in (
            ("float16", "scale 300", "layer_norm", "composite", "fused"),
            ("float16", "scale 300", "rms_norm", "composite[none]", "fused[none]"),
            ("float16", "scale 300", "batch_norm", "composite", "fused"),
            ("float32", "constant rows", "layer_norm", "one-pass", "fused"),
            ("float32", "offset 1e4", "batch_norm", "one-pass", "fused"),
            ("float32", "offset 1e4", "layer_norm", "eps-outside", "fused")):
        if dtype not in report.dtypes or family not in report.families:
            continue
        worse, better = (report.cell(norm, impl, dtype, family) for impl in (a, b))
        lines.append(f"{norm} {dtype} '{family}': {a} {_short(worse)}, {b} {_short(better)}")
    return lines


def _short(cell):
    return f"inf/NaN x{cell.nonfinite}" if cell.nonfinite else f"{cell.worst:.1e}"


def add_parser(commands):
    parser = commands.add_parser(
        "precision", help="accuracy vs float64 by dtype and input family: table, heatmap")
    parser.add_argument("--quick", action="store_true",
                        help="small inputs, (8, 64) instead of (64, 512)")
    parser.add_argument("--out", default="microgradnorm-precision",
                        help="directory for precision.md and the heatmap (default %(default)s)")
    parser.add_argument("--dtype", dest="dtypes", action="append", choices=DTYPES,
                        help="a dtype to measure (repeatable; default all)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random inputs (default %(default)s)")
    parser.set_defaults(run=run)


def run(args):
    check_out_dir(args.out)
    run_precision(args.out, args.quick, args.seed, args.dtypes)

"""``microgradnorm precision``: accuracy against float64 across dtypes and input families.

Runs ``mg.precision_report`` (LayerNorm, RMSNorm and BatchNorm, every implementation,
float16 / bfloat16 / float32, five input families), prints the table, and writes
``precision.md`` and, with matplotlib, ``precision_heatmap.png`` into the output directory.
``--quick`` uses (8, 64) inputs and runs in 1.5 s wall, the full run (64, 512) in 2.9 s,
both mostly imports and the PNG (loaded 2-core AMD EPYC). docs/precision.md reads it.
"""

import math
from pathlib import Path

import numpy as np

from ..checks.precision import DTYPES, PrecisionReport, precision_report
from ..norms import lookup
from .common import check_out_dir, seed
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
    heatmap = draw_heatmap(report, out_dir / HEATMAP)
    if heatmap is None:
        echo(INSTALL_HINT)
    else:
        files.append(Path(heatmap))
    path = out_dir / REPORT
    path.write_text(report.markdown(HEATMAP if heatmap else None), encoding="utf-8")
    files.append(path)
    echo("\nwrote " + ", ".join(str(p) for p in files))
    return report, files


def draw_heatmap(report, path):
    """Write a PNG heatmap of log10(worst error) of ``report``: rows norm/impl, columns
    dtype × family. Returns the path, or None when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = report.rows()
    columns = [(d, f) for d in report.dtypes for f in report.families]
    values = np.array([[_log_error(report.cell(n, i, d, f)) for d, f in columns]
                       for n, i in rows])
    fig, ax = plt.subplots(figsize=(1.0 + 0.62 * len(columns), 1.2 + 0.42 * len(rows)))
    cmap = plt.get_cmap("viridis").with_extremes(bad="#d62728")   # inf / NaN: red
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=-8, vmax=1, aspect="auto")
    for (r, c), v in np.ndenumerate(values):
        ax.text(c, r, "inf" if not np.isfinite(v) else f"{v:.1f}", ha="center", va="center",
                fontsize=6, color="white" if not np.isfinite(v) or v < -3 else "black")
    ax.set_xticks(range(len(columns)), [f"{d}\n{f}" for d, f in columns], fontsize=6,
                  rotation=90)
    ax.set_yticks(range(len(rows)), [f"{n} {i}" for n, i in rows], fontsize=7)
    for boundary in range(1, len(report.dtypes)):
        ax.axvline(boundary * len(report.families) - 0.5, color="white", linewidth=2)
    fig.colorbar(image, ax=ax, label="log10 max |error| / rms(truth)  (red: inf/NaN)")
    ax.set_title("composite vs fused vs naive, against float64", fontsize=9)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _log_error(cell):
    if cell.nonfinite or not np.isfinite(cell.worst):
        return np.nan
    return math.log10(max(cell.worst, 1e-12))


def summary(report: PrecisionReport):
    """A line per lesson the table shows, with its numbers, for other reports: each norm's
    composite against fused in float16 on the "scale 300" family (the variant where the
    composite does worst), and each naive row in the cell it declares (``Norm.naive``)."""
    lessons = []
    for name in dict.fromkeys(norm for norm, _ in report.rows()):
        spec = lookup(name)
        composites = [impl for norm, impl in report.rows()
                      if norm == name and impl.startswith("composite")]
        if "float16" in report.dtypes and "scale 300" in report.families:
            worst = max(composites, key=lambda impl: _badness(
                report.cell(name, impl, "float16", "scale 300")))
            lessons.append((name, "float16", "scale 300", worst,
                            worst.replace("composite", "fused")))
        lessons += [(name, *naive.shows, impl, "fused") for impl, naive in spec.naive.items()]
    lines = []
    for norm, dtype, family, a, b in lessons:
        if dtype not in report.dtypes or family not in report.families:
            continue
        worse, better = (report.cell(norm, impl, dtype, family) for impl in (a, b))
        lines.append(f"{norm} {dtype} '{family}': {a} {_short(worse)}, {b} {_short(better)}")
    return lines


def _badness(cell):
    return (cell.nonfinite, cell.worst)


def _short(cell):
    return f"inf/NaN x{cell.nonfinite}" if cell.nonfinite else f"{cell.worst:.1e}"


def add_parser(commands):
    parser = commands.add_parser(
        "precision", help="accuracy vs float64 by dtype and input family: table, heatmap")
    parser.add_argument("--quick", action="store_true",
                        help="small inputs, (8, 64) instead of (64, 512)")
    parser.add_argument("--out", default="out/precision",
                        help="directory for precision.md and the heatmap (default %(default)s)")
    parser.add_argument("--dtype", dest="dtypes", action="append", choices=DTYPES,
                        help="a dtype to measure (repeatable; default all)")
    parser.add_argument("--seed", type=seed, default=0,
                        help="seed of the random inputs (default %(default)s)")
    parser.set_defaults(run=run)


def run(args):
    check_out_dir(args.out)
    run_precision(args.out, args.quick, args.seed, args.dtypes)

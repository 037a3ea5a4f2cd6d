"""The main job, ``microgradnorm demo``: every norm as a composite graph and as one fused
node, drawn side by side, checked against each other and against finite differences, and
gathered in a report.

For each norm in ``comparison.NORMS`` the demo writes ``<norm>_twin.svg`` and ``.png``
(and the ``.dot`` source) into the output directory, prints one table for all norms, and
writes ``report.md``, which puts the pictures and the table together. Without Graphviz's
``dot`` program it still completes: it writes the ``.dot`` sources, the table and the
report, and says how to install Graphviz.
"""

import dataclasses
import datetime
import platform
from pathlib import Path

import numpy as np

from . import viz
from .comparison import NORMS, compare, summary_table


@dataclasses.dataclass
class DemoResult:
    """What the demo made: the comparisons, the files written and the report's path."""

    comparisons: list
    files: list
    report: Path
    rendered: bool           # False when Graphviz's dot was missing (only .dot written)


def run_demo(out_dir, shape=(2, 4, 8), dtype="float64", repeat=5, seed=0, echo=print):
    """Run the demo into ``out_dir`` (created if needed); ``echo`` receives the progress
    lines and the table. Returns a ``DemoResult``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rendered = viz.dot_available()
    comparisons, files = [], []
    for norm in NORMS:
        comparisons.append(compare(norm, shape, dtype, seed=seed, repeat=repeat,
                                   finite_differences=True))
        written = viz.render(viz.compare(norm, shape, dtype, seed=seed), out_dir,
                             twin_name(norm))
        files += written
        echo(f"  {norm:<15} twin graph -> " + ", ".join(p.name for p in written))
    if not rendered:
        echo(viz.INSTALL_HINT)
    report = out_dir / "report.md"
    report.write_text(report_markdown(comparisons, rendered))
    files.append(report)
    echo("")
    echo(summary_table(comparisons))
    echo(f"\nreport: {report}")
    return DemoResult(comparisons, files, report, rendered)


def twin_name(norm):
    return f"{norm}_twin"


def report_markdown(comparisons, rendered):
    """The report: the table, then each norm's twin graph with its numbers."""
    first = comparisons[0]
    lines = [
        "# microgradnorm demo: composite vs fused normalization",
        "",
        f"Made {datetime.datetime.now():%Y-%m-%d %H:%M} on {platform.machine()} with "
        f"Python {platform.python_version()} and NumPy {np.__version__}. Inputs of shape "
        f"{first.shape}, dtype {first.dtype}; times are medians of one machine's run at this "
        f"small shape, where per-node overhead dominates (`microgradnorm bench` measures "
        f"large shapes).",
        "",
        "Each norm is computed twice on the same inputs: as the textbook **composite** graph "
        "of primitive ops, which autograd differentiates op by op, and as one **fused** node "
        "with a closed-form backward. `|fused - comp|` is the largest difference between "
        "the two; `FD` columns compare each side's gradients with central finite "
        "differences of the same function in float64 (step 1e-6, so about 1e-9 is "
        "agreement). How to read the pictures: `docs/visualizer.md`.",
        "",
        summary_table(comparisons, markdown=True),
        "",
    ]
    if not rendered:
        lines += [f"> {viz.INSTALL_HINT}", ""]
    for result in comparisons:
        c, f = result.composite, result.fused
        lines += [
            f"## {result.norm}",
            "",
            f"composite: {c.nodes} op nodes, {c.saved_bytes:,} bytes saved for backward; "
            f"fused: {f.nodes} op node, {f.saved_bytes:,} bytes "
            f"({f.saved_bytes / c.saved_bytes:.0%} of composite).",
            "",
        ]
        name = twin_name(result.norm)
        lines += ([f"![{result.norm}: composite and fused backward graphs]({name}.svg)", ""]
                  if rendered else [f"Graph source: [{name}.dot]({name}.dot)", ""])
    return "\n".join(lines)

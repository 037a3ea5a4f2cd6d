"""The main job, ``microgradnorm demo``: every norm as a composite graph and as one fused
node, drawn side by side, checked against each other and against finite differences, and
gathered in a report.

For each norm in ``norms.NORMS`` the demo writes ``<norm>_twin.svg`` and ``.png``
(and the ``.dot`` source) into the output directory and prints one table for all norms.
Then it trains the tiny GPT twice from the same seed, once with composite and once with
fused norms, reports that the loss curves agree, and draws the model's backward graph
with each composite norm, attention and MLP folded into one box (``tiny_gpt_graph``).
Last, a quick precision check (``mg.precision_report(quick=True)``, 0.2 s): the
few lines of ``microgradnorm precision`` that show where low precision parts composite
from fused. ``report.md`` puts the pictures, the tables and the training run together. Without
Graphviz's ``dot`` program it still completes: it writes the ``.dot`` sources, the table
and the report, and says how to install Graphviz.

Each line is flushed as it is made; in a log (stdout not a terminal) each phase also ends
with one line on stderr, its name and its time. ``--quick`` (one timed call, 5 training
steps: under 3 s of CPU time) is for tests and a first look.
"""

import contextlib
import dataclasses
import datetime
import functools
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from .. import functional as F
from .. import kernels, viz
from ..checks.comparison import compare, summary_table
from ..checks.precision import precision_report
from ..norms import NORMS
from ..train import TrainConfig, compare_impls, zen_of_python
from . import precision as precision_command
from .common import add_compare_args, check_memory, check_out_dir, nonnegative_int, positive_int

# the options --quick changes, at their plain and their quick values
DEFAULTS = {"repeat": 5, "train_steps": 60}
QUICK = {"repeat": 1, "train_steps": 5}


@dataclasses.dataclass
class DemoResult:
    """What the demo made: the comparisons, the files written and the report's path."""

    comparisons: list
    training: object         # train.ImplComparison, or None with train_steps=0
    precision: object        # checks.precision.PrecisionReport (quick)
    files: list
    report: Path
    rendered: bool           # False when Graphviz's dot was missing (only .dot written)


def run_demo(out_dir, shape=(2, 4, 8), dtype="float64", repeat=5, seed=0, train_steps=60,
             progress=True, echo=None):
    """Run the demo into ``out_dir`` (created if needed); ``echo`` receives the lines and
    the tables. ``train_steps=0`` skips the training run. ``progress``: the training's bars
    when stderr is a terminal, and one line per phase on stderr when stdout is not one (a
    log); False: neither. Returns a ``DemoResult``."""
    echo = echo or functools.partial(print, flush=True)     # a log shows each line at once
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rendered = viz.dot_available()
    phase = Phases(4 if train_steps else 2, enabled=progress and not sys.stdout.isatty())
    comparisons, files = [], []
    with phase("every norm compared and drawn"):
        for norm in NORMS:
            comparisons.append(compare(norm, shape, dtype, seed=seed, repeat=repeat,
                                       finite_differences=True))
            written = viz.render(viz.compare(norm, shape, dtype, seed=seed), out_dir,
                                 twin_name(norm))
            files += written
            echo(f"  {norm:<15} twin graph -> " + ", ".join(p.name for p in written))
        echo("")
        echo(summary_table(comparisons))
    training = None
    if train_steps:
        echo(f"\nTraining the tiny GPT ({train_steps} AdamW steps, float64) with composite "
             "and with fused norms, from one seed:")
        with phase(f"tiny GPT trained, {train_steps} steps composite and fused"):
            # the bars only: in a log the phase's line says it
            training = compare_impls(TrainConfig(steps=train_steps, seed=seed),
                                     progress and sys.stderr.isatty())
            echo(training_summary(training))
        with phase("its backward graph drawn"):
            written = viz.render(gpt_graph(training.composite), out_dir, "tiny_gpt_graph")
            files += written
            echo("  backward graph, norms, attention and MLPs folded -> "
                 + ", ".join(p.name for p in written))
    with phase("precision checked, report written"):
        precision = precision_report(quick=True, seed=seed)
        echo("\nLow precision against float64 (quick; `microgradnorm precision` for all of it):")
        for line in precision_command.summary(precision):
            echo(f"  {line}")
        if not rendered:
            echo(viz.INSTALL_HINT)
        report = out_dir / "report.md"
        report.write_text(report_markdown(comparisons, rendered, training, precision))
        files.append(report)
        echo(f"\nreport: {report}")
    return DemoResult(comparisons, training, precision, files, report, rendered)


class Phases:
    """The demo's phases, each ending with one line on stderr when ``enabled``:
    ``"demo 2/4: tiny GPT trained, ...: 3.1 s"`` (flushed, wall time)."""

    def __init__(self, count, enabled):
        self.count, self.enabled, self.done = count, enabled, 0

    @contextlib.contextmanager
    def __call__(self, name):
        """Time the block as the next phase, called ``name``."""
        start = time.perf_counter()
        yield
        self.done += 1
        if self.enabled:
            print(f"demo {self.done}/{self.count}: {name}: {time.perf_counter() - start:.1f} s",
                  file=sys.stderr, flush=True)


def training_summary(training):
    """The training run in a few lines: loss agreement, loss, time and graph per impl."""
    c, f = training.composite, training.fused
    agree = "agree" if training.max_loss_diff <= 1e-8 else "DISAGREE"
    return "\n".join([
        f"  loss curves {agree}: max |composite - fused| over {len(c.losses)} steps = "
        f"{training.max_loss_diff:.1e}",
        f"  loss {c.losses[0]:.3f} -> {c.losses[-1]:.3f} (composite), "
        f"{f.losses[0]:.3f} -> {f.losses[-1]:.3f} (fused)",
        f"  median step: composite {c.seconds_per_step * 1e3:.1f} ms, fused "
        f"{f.seconds_per_step * 1e3:.1f} ms",
        f"  op nodes per step: composite {c.graph_nodes}, fused {f.graph_nodes}; bytes saved "
        f"for backward: composite {c.saved_bytes:,}, fused {f.saved_bytes:,}",
    ])


def gpt_graph(run):
    """The backward graph of one training batch of ``run``'s model (a ``TrainResult``), with
    every composite norm call, attention and MLP folded, boxed by module."""
    model, config = run.model, run.config
    ids = run.tokenizer.encode(zen_of_python()[:config.context_length + 1])
    loss = F.cross_entropy(model(ids[None, :-1])[0], ids[1:], impl=config.impl)   # (T, V), (T,)
    return viz.draw(loss, cluster=True, collapse=["norms", "attn", "mlp"],
                    title=f"tiny GPT, {config.impl} norms: {config.n_layers} blocks, "
                          f"d_model {config.d_model}")


def twin_name(norm):
    return f"{norm}_twin"


def report_markdown(comparisons, rendered, training=None, precision=None):
    """The report: the table, each norm's twin graph with its numbers, the training run,
    and a short precision section."""
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
        lines += _picture(name, f"{result.norm}: composite and fused backward graphs",
                          rendered)
    if training is not None:
        lines += ["## Training the tiny GPT: composite vs fused", "",
                  "The same model, seed, weights and batches, trained once with composite and "
                  "once with fused norms (`microgradnorm.train.compare_impls`):", "",
                  "```", training_summary(training), "```", "",
                  "Its backward graph with the composite norms, each attention and each MLP "
                  "folded into one grey box (`viz.draw(loss, cluster=True, "
                  "collapse=[\"norms\", \"attn\", \"mlp\"])`):", ""]
        lines += _picture("tiny_gpt_graph", "the tiny GPT's backward graph, folded", rendered)
    if precision is not None:
        lines += precision_section(precision)
    return "\n".join(lines)


def precision_section(precision):
    """Markdown lines: where float16/float32 part the implementations (quick run)."""
    rows, cols = precision.shape
    lines = ["## Low precision: where composite and fused part", "",
             f"Each norm on ({rows}, {cols}) inputs rounded to the dtype, against PyTorch's "
             "formula in float64 on the same values; the number is the largest "
             "|error| / rms(truth) over the output and every gradient "
             "(`mg.precision_report(quick=True)`; `microgradnorm precision` writes the "
             "whole table and a heatmap, explained in docs/precision.md):", ""]
    lines += [f"- {line}" for line in precision_command.summary(precision)]
    return lines + [""]


def _picture(name, alt, rendered):
    if rendered:
        return [f"![{alt}]({name}.svg)", ""]
    return [f"Graph source: [{name}.dot]({name}.dot)", ""]


# ----- the command ------------------------------------------------------------------------
def add_parser(commands):
    parser = commands.add_parser(
        "demo", help="the main job: every norm composite vs fused, twin graphs, report.md")
    add_compare_args(parser, norms=False, affine=False)
    # --quick's options default to None: a value given wins over --quick's
    parser.add_argument("--repeat", type=positive_int,
                        help="timed calls per measurement; the median is shown (default "
                             f"{DEFAULTS['repeat']}, --quick {QUICK['repeat']})")
    parser.add_argument("--out", default="out/demo",
                        help="directory for the graphs and report.md (default %(default)s)")
    parser.add_argument("--train-steps", type=nonnegative_int,
                        help="tiny-GPT training steps per impl, 0 to skip (default "
                             f"{DEFAULTS['train_steps']}, --quick {QUICK['train_steps']})")
    parser.add_argument("--quick", action="store_true",
                        help="a first look, for tests: "
                             + ", ".join(f"--{name.replace('_', '-')} {value}"
                                         for name, value in QUICK.items()))
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars, and in a log no line per phase")
    parser.set_defaults(run=run, numba_kernels=False)    # NumPy's kernels: no SciPy BLAS


def run(args):
    for name, value in (QUICK if args.quick else DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    check_memory(args.shape, args.dtype)
    for spec in NORMS.values():              # every norm takes the shape, before any file
        spec.make_inputs(args.shape, args.dtype)
    check_out_dir(args.out)
    with demo_kernels() as chosen:
        print("microgradnorm demo: every norm as a composite graph and as one fused node "
              f"({chosen} kernels), written to {args.out}/\n", flush=True)
        run_demo(args.out, args.shape, args.dtype, args.repeat, args.seed, args.train_steps,
                 progress=not args.no_progress)


@contextlib.contextmanager
def demo_kernels():
    """The fused norms' CPU kernels for the demo, yielding their name: the NumPy kernels,
    unless ``MICROGRADNORM_CPU_KERNELS`` names others. At the demo's sizes numba's kernels
    are no faster, and a first run would spend 5 s of CPU time compiling their versions
    (one per kernel and dtype)."""
    if os.environ.get(kernels.ENVIRONMENT_VARIABLE, "").strip():
        yield kernels.get_cpu_kernels()
        return
    with kernels.cpu_kernels("numpy"):
        yield "numpy"

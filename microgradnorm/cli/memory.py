"""``microgradnorm memory``: where the memory of one training step of the tiny GPT goes.

For composite and for fused norms, ``train.gpt_step_timeline`` builds the same model (same
seed), runs one AdamW step to create the optimizer state, then records
``mg.memory_timeline`` of the next step (forward, backward, optimizer); this command prints
the peak split by module and kind. With ``--trace`` every event is also checked against
``tracemalloc``. With matplotlib it draws ``memory_timeline.png``: the bytes held after
every node, one line per impl, each peak marked, and the peak by module as bars.
"""

from ..checks.memory import CATEGORIES
from ..functional import IMPLS
from ..train import gpt_step_timeline
from . import plotting
from .common import (add_model_args, check_gpt_memory, check_out_dir, positive_int,
                     train_config)


def add_parser(commands):
    """Register the ``memory`` sub-command."""
    parser = commands.add_parser(
        "memory", help="bytes held at every node of one training step, composite vs fused")
    add_model_args(parser)
    parser.add_argument("--vocab", type=positive_int, default=32,
                        help="vocabulary size (default %(default)s)")
    parser.add_argument("--trace", action="store_true",
                        help="check every event against tracemalloc (slower)")
    parser.add_argument("--out", default="out/memory",
                        help="directory for memory_timeline.png (default %(default)s)")
    parser.add_argument("--no-plot", action="store_true", help="print the tables only")
    parser.set_defaults(run=run)


def run(args):
    """Print the peak tables (and the tracemalloc check), then draw the plot."""
    if args.d_model % args.n_heads:
        raise ValueError(f"--heads {args.n_heads} must divide --d-model {args.d_model}")
    check_gpt_memory(train_config(args), args.vocab)
    if not args.no_plot:
        check_out_dir(args.out)
    timelines = {}
    for impl in IMPLS:
        timelines[impl] = timeline = gpt_step_timeline(train_config(args, impl=impl),
                                                       args.vocab, args.trace)
        print(f"impl={impl}: {len(timeline.events)} events; {timeline.table()}\n")
        if args.trace:
            worst = max(abs(e.traced_bytes - e.total_bytes) for e in timeline.events)
            print(f"  tracemalloc: peak {max(e.traced_bytes for e in timeline.events) / 1e6:.3f}"
                  f" MB; largest |traced - counted| over the step {worst / 1e6:.3f} MB = "
                  f"{100 * worst / timeline.peak.total_bytes:.1f}% of the peak\n")
    composite, fused = (timelines[i].peak for i in ("composite", "fused"))
    print(f"peak composite {composite.total_bytes / 1e6:.3f} MB, fused "
          f"{fused.total_bytes / 1e6:.3f} MB (fused/composite "
          f"{fused.total_bytes / composite.total_bytes:.3f}); norms at the peak: "
          f"{composite.by_category['norms'] / 1e6:.3f} MB vs "
          f"{fused.by_category['norms'] / 1e6:.3f} MB")
    if not args.no_plot:
        plot_timelines(timelines, args.out, title=f"GPT d_model={args.d_model}, "
                       f"{args.n_layers} blocks, B={args.batch_size}, T={args.context_length}, "
                       f"{args.norm} {args.placement}-norm, {args.dtype}")


def plot_timelines(timelines, out_dir, title="", name="memory_timeline.png"):
    """Draw {impl: MemoryTimeline}: bytes per event with each peak marked, and the peak by
    category as bars. Returns the path written, or None without matplotlib."""
    plt = plotting.pyplot()
    if plt is None:
        return None
    fig, (line_ax, bar_ax) = plt.subplots(1, 2, figsize=(13, 4.5),
                                          gridspec_kw={"width_ratios": [1.6, 1]})
    width = 0.8 / len(timelines)
    for i, (impl, timeline) in enumerate(timelines.items()):
        totals = [t / 1e6 for t in timeline.totals()]
        peak = timeline.peak
        line, = line_ax.plot(totals, label=f"{impl}: peak {peak.total_bytes / 1e6:.2f} MB")
        line_ax.plot(peak.index, peak.total_bytes / 1e6, "o", color=line.get_color())
        backward = timeline.phase_bounds().get("backward")
        if backward:
            line_ax.axvline(backward[0], color=line.get_color(), linestyle=":", linewidth=1)
        positions = [c + (i - (len(timelines) - 1) / 2) * width for c in range(len(CATEGORIES))]
        bar_ax.bar(positions, [peak.by_category[c] / 1e6 for c in CATEGORIES], width,
                   label=impl, color=line.get_color())
    line_ax.set_xlabel("event: graph node of forward, then of backward (dotted: start of "
                       "backward)")
    line_ax.set_ylabel("MB held (saved + held + gradients)")
    line_ax.legend()
    bar_ax.set_xticks(range(len(CATEGORIES)), CATEGORIES, rotation=30)
    bar_ax.set_ylabel("MB at the peak")
    bar_ax.legend()
    fig.suptitle(title)
    return plotting.save(fig, out_dir, name)

"""The same tiny GPT, same seed, trained with composite and with fused norms.

Run:  python examples/composite_vs_fused.py [--steps 200] [--norm rms_norm]
      python examples/composite_vs_fused.py --quick            # 30 steps

The two runs differ only in how every norm is computed: the textbook graph of primitive
ops or one node with a closed-form backward. In float64 their loss curves agree to
rounding (asserted: <= 1e-8 over the first 50 steps); the fused run records fewer graph
nodes, saves fewer bytes for backward and takes less time per step.
"""

import numpy as np

from microgradnorm import nn
from microgradnorm.cli import plotting
from microgradnorm.cli.common import norm_name, positive_int
from microgradnorm.cli.script import ScriptParser, parse_args, run_script
from microgradnorm.train import TrainConfig, compare_impls

TOLERANCE = 1e-8          # float64, first 50 steps


def main(argv=None):
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=positive_int, default=200)
    parser.add_argument("--norm", type=norm_name, choices=nn.NORMS, default="layer_norm")
    parser.add_argument("--placement", choices=nn.PLACEMENTS, default="pre")
    parser.add_argument("--layers", type=positive_int, default=2)
    parser.add_argument("--out", default="out/composite_vs_fused", help="directory for the plot")
    parser.add_argument("--quick", action="store_true", help="30 steps (unless given)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (none is drawn when stderr is not a terminal)")
    args = parse_args(parser, argv, quick={"steps": 30})

    config = TrainConfig(steps=args.steps, dtype="float64", seed=0, norm=args.norm,
                         placement=args.placement, n_layers=args.layers)
    result = compare_impls(config, progress=not args.no_progress)
    composite, fused = result.composite, result.fused
    runs = {"composite": composite, "fused": fused}
    diffs = np.abs(np.array(composite.losses) - np.array(fused.losses))
    print(f"tiny GPT, {args.norm}, {args.placement}-norm, {args.layers} blocks, float64, "
          f"{args.steps} steps, seed 0")
    print(f"{'':>10} {'graph nodes':>12} {'saved for backward':>19} {'ms/step':>8} "
          f"{'final loss':>11}")
    for impl, run in runs.items():
        print(f"{impl:>10} {run.graph_nodes:>12} {run.saved_bytes:>17,} B "
              f"{1000 * run.seconds_per_step:>8.2f} {run.losses[-1]:>11.6f}")
    first = diffs[:50]
    print(f"max |loss composite - loss fused|: first {len(first)} steps {first.max():.2e}, "
          f"all {len(diffs)} steps {diffs.max():.2e}")
    params = {name: p.detach().numpy() for name, p in fused.model.named_parameters()}
    weight_diff = max(np.abs(p.detach().numpy() - params[name]).max()
                      for name, p in composite.model.named_parameters())
    print(f"max |weight composite - weight fused| after training: {weight_diff:.2e}")
    print(f"fused saves {1 - fused.saved_bytes / composite.saved_bytes:.0%} of the bytes "
          f"and {composite.graph_nodes - fused.graph_nodes} graph nodes; step time ratio "
          f"composite/fused {composite.seconds_per_step / fused.seconds_per_step:.2f} "
          "(one machine, medians, noisy)")
    assert first.max() <= TOLERANCE, f"loss curves differ by {first.max():.2e} > {TOLERANCE}"

    plt = plotting.pyplot()
    if plt is not None:
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 5), sharex=True)
        for impl, run in runs.items():
            top.plot(run.losses, lw=1, ls="-" if impl == "composite" else "--", label=impl)
        top.set(ylabel="loss", title="composite vs fused norms, same seed, float64")
        top.legend()
        floor = 1e-18                          # where an exact zero is drawn on the log axis
        bottom.semilogy(np.maximum(diffs, floor), lw=0.8,
                        label=f"|composite - fused|, exact zeros drawn at {floor:g}")
        bottom.set(xlabel="step", ylabel="|difference|")
        bottom.legend(fontsize=8)
        plotting.save(fig, args.out, "composite_vs_fused.png")


if __name__ == "__main__":
    run_script(main)

"""Where the norm sits: gradient norm per layer at initialisation, for depth 6 to 48.

Run:  python examples/norm_placement.py [--depths 6,12,24,48] [--train-steps 300]
      python examples/norm_placement.py --quick

For every placement (pre, post, sandwich, deepnorm) and row norm (``nn.NORMS``) it
builds a GPT of each depth (d_model 32, 4 heads, float64; Xavier init as in the placement
papers, or --init gpt2), takes one cross-entropy loss on a fixed random batch of tokens,
and measures ‖∂L/∂θ_l‖ for the parameters θ_l of each block l and ‖∂L/∂x_l‖ for its input,
averaged over a few initialisations. The ratio early blocks / late blocks says whether
gradients reach the early layers unchanged (≈ 1), fade on the way down (« 1) or grow (» 1);
the last block's gradient says how large the updates near the output are. Then, at
depth 6 (or the largest depth below it) and the same width, it trains each combination
briefly on the Zen of Python and compares the losses:
RMSNorm against LayerNorm, and the placements against one another. The conclusions are in
docs/norm_placement.md. (The measurement is ``microgradnorm.cli.explain.block_grad_norms``;
``microgradnorm explain placement`` sweeps it over widths and initialisations.)
"""

import sys

import numpy as np
from tqdm import tqdm

import microgradnorm as mg
from microgradnorm import nn
from microgradnorm.cli import plotting
from microgradnorm.cli.common import positive_int
from microgradnorm.cli.explain import PLACEMENT_HEADS, block_grad_norms, early_late
from microgradnorm.cli.script import ScriptParser, parse_args, positive_ints, run_script
from microgradnorm.norms import NORMS
from microgradnorm.train import Progress, TrainConfig, train_tiny_gpt


def composite_nodes(norm):
    """Op nodes of ``norm``'s composite graph, with weight (and bias), on a (2, 8) input."""
    spec = NORMS[norm]
    tensors = {name: mg.tensor(array, requires_grad=True)
               for name, array in spec.make_inputs((2, 8)).items()}
    return mg.graph_stats(*spec.run(tensors, "composite")).nodes


def check_width(args):
    """The models' attention heads must divide their width."""
    if args.d_model % PLACEMENT_HEADS:
        raise ValueError(f"--d-model must be a multiple of the {PLACEMENT_HEADS} attention "
                         f"heads, got {args.d_model}")


def main(argv=None):
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=positive_ints, default=[6, 12, 24, 48],
                        help="comma-separated depths (default 6,12,24,48)")
    parser.add_argument("--d-model", type=positive_int, default=32)
    parser.add_argument("--init", choices=("xavier", "gpt2"), default="xavier",
                        help="weight initialisation (see nn.GPT)")
    parser.add_argument("--seeds", type=positive_int, default=3,
                        help="initialisations to average")
    parser.add_argument("--train-steps", type=positive_int, default=200)
    parser.add_argument("--out", default="out/norm_placement", help="directory for the plot")
    parser.add_argument("--quick", action="store_true",
                        help="depths 2,3, d_model 16, 5 training steps, 1 seed (unless given)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (none is drawn when stderr is not a terminal)")
    args = parse_args(parser, argv, quick={"depths": [2, 3], "d_model": 16,
                                          "train_steps": 5, "seeds": 1}, check=check_width)
    depths = args.depths

    print(f"gradient norms per block at initialisation: GPT d_model={args.d_model}, "
          f"init={args.init}, float64, one batch of 8x16 random tokens per "
          f"seed, geometric means over seeds {list(range(args.seeds))}")
    print("  early/late: ‖∂L/∂θ‖ of the first quarter of the blocks over the last quarter "
          "(param), the same for ‖∂L/∂x‖ of the block inputs (stream);")
    print("  last: ‖∂L/∂θ_L‖ of the last block; spread: max/min of ‖∂L/∂θ_l‖ over the blocks")
    print(f"{'norm':<10} {'placement':<9} {'depth':>5} {'early/late param':>16} "
          f"{'early/late stream':>17} {'last':>9} {'spread':>7}")
    profiles = {}
    cells = [(n, p, d) for n in nn.NORMS for p in nn.PLACEMENTS for d in depths]
    bar = Progress(cells, "gradient norms", enabled=not args.no_progress)
    for norm, placement, depth in bar:
        runs = [block_grad_norms(depth, norm, placement, args.d_model, args.init, seed)
                for seed in range(args.seeds)]
        params = np.exp(np.mean([np.log(p) for p, _ in runs], axis=0))   # per block
        stream = np.exp(np.mean([np.log(s) for _, s in runs], axis=0))
        profiles[norm, placement, depth] = params
        tqdm.write(f"{norm:<10} {placement:<9} {depth:>5} {early_late(params):>16.3f} "
                   f"{early_late(stream):>17.3f} {params[-1]:>9.3f} "
                   f"{params.max() / params.min():>7.2f}", file=sys.stdout)
    bar.close(f"{len(cells)} models, {args.seeds} seeds each")

    train_depth = min(6, max(depths))
    print(f"\ntraining at depth {train_depth}, d_model {args.d_model}, {args.train_steps} "
          f"AdamW steps (lr 3e-3, batch 16, context 32, init {args.init}), Zen of Python; "
          "loss = mean of the last 20 steps")
    width = max(10, *map(len, nn.NORMS))                   # a column per norm
    print(f"{'placement':<9} " + " ".join(f"{norm:>{width}}" for norm in nn.NORMS))
    final = {}
    for placement in nn.PLACEMENTS:
        row = []
        for norm in nn.NORMS:
            run = train_tiny_gpt(TrainConfig(steps=args.train_steps, norm=norm,
                                             placement=placement, n_layers=train_depth,
                                             d_model=args.d_model, init=args.init),
                                 progress=not args.no_progress)
            final[norm, placement] = float(np.mean(run.losses[-20:]))
            row.append(f"{final[norm, placement]:>{width}.4f}")
        print(f"{placement:<9} " + " ".join(row), flush=True)
    print("composite graph nodes per norm (with affine): "
          + ", ".join(f"{norm} {composite_nodes(norm)}" for norm in nn.NORMS))

    plt = plotting.pyplot()
    if plt is not None:
        deepest = max(depths)
        fig, axes = plt.subplots(1, len(nn.NORMS), figsize=(5.5 * len(nn.NORMS), 4),
                                 sharey=True, squeeze=False)
        for ax, norm in zip(axes[0], nn.NORMS):
            for placement in nn.PLACEMENTS:
                g = profiles[norm, placement, deepest]
                ax.semilogy(np.arange(1, deepest + 1), g, marker=".", label=placement)
            ax.set(xlabel="block (1 = next to the embeddings)",
                   title=f"{norm}, depth {deepest}, init {args.init}, {args.seeds} seeds")
            ax.legend()
        axes[0, 0].set_ylabel("‖∂L/∂θ_block‖ at init (geometric mean over seeds)")
        plotting.save(fig, args.out, "norm_placement.png")


if __name__ == "__main__":
    run_script(main)

"""DyT's tanh against LayerNorm's statistics: what a trained block's LayerNorm does per element.

Run:  python examples/dyt_vs_layernorm.py [--steps 300] [--out docs/images]
      python examples/dyt_vs_layernorm.py --quick

It trains the tiny GPT (two pre-norm blocks, d_model 32, AdamW on the Zen of Python) with
LayerNorm, runs one batch through it and records, for every LayerNorm of the model, each
element's input x and its normalized output x̂ = (x - μ)/σ, before γ and β. Per element
these form the cloud the DyT paper (Zhu et al. 2025) shows: each token a straight line of
slope 1/σ through its mean, the tokens that reach far out (large σ) flatter, so that the
cloud bends like tanh. It fits x̂ ≈ c·tanh(αx) and, for comparison, the line x̂ ≈ kx by
least squares and prints the share of x̂'s variance each leaves unexplained. Then it trains
the same GPT with DyT (y = γ·tanh(αx) + β, no statistics) and with RMSNorm from the same
seed, and prints their losses and, for each DyT, the α it learned, the spread of its input
and the share of its elements where the tanh saturates (1 - tanh² < 0.01: the gradient
through it below 1%). docs/dyt.md shows the picture and what the numbers say.
"""

import numpy as np

import microgradnorm as mg
from microgradnorm import nn
from microgradnorm.cli import plotting
from microgradnorm.cli.common import positive_int, seed
from microgradnorm.cli.script import ScriptParser, parse_args, run_script
from microgradnorm.train import TrainConfig, train_tiny_gpt

NORMS = ("layer_norm", "dyt", "rms_norm")       # the runs compared, LayerNorm's first
LAST = 20                                       # final loss: the mean of the last steps
HEADS = TrainConfig.n_heads                     # attention heads per block
POINTS = 4000                                   # elements drawn per panel


def check_options(args):
    """The attention heads must divide the width; the final loss needs ``LAST`` steps."""
    if args.d_model % HEADS:
        raise ValueError(f"--d-model must be a multiple of the {HEADS} attention heads, got "
                         f"{args.d_model}")
    if args.steps < LAST:
        raise ValueError(f"--steps must be at least {LAST} (the final loss is the mean of "
                         f"the last {LAST}), got {args.steps}")


def norm_inputs(model, kind, windows):
    """{name: (module, x)} for each norm of class ``kind`` in ``model`` on one batch: its
    input, x or x + residual where the block adds one, as (B·T, D)."""
    inputs, handles = {}, []
    for name, module in model.named_modules():
        if isinstance(module, kind):
            def record(module, args, output, name=name):
                x = args[0] if len(args) == 1 else args[0] + args[1]     # (B, T, D)
                inputs[name] = module, x.detach().numpy().reshape(-1, x.shape[-1])
            handles.append(module.register_forward_hook(record))
    with mg.no_grad():
        model(windows)
    for handle in handles:
        handle.remove()
    return inputs


def layer_norm_pairs(model, windows):
    """{name: (x, x̂)} for each LayerNorm of ``model``: its input and that input normalized,
    before γ and β."""
    return {name: (x, (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True)
                                                                  + module.eps))
            for name, (module, x) in norm_inputs(model, nn.LayerNorm, windows).items()}


def dyt_states(model, windows):
    """{name: (α, σ of the input, saturated share)} for each DyT of ``model``: the share of
    elements whose 1 - tanh²(αx) is below 0.01, where almost no gradient passes."""
    states = {}
    for name, (module, x) in norm_inputs(model, nn.DyT, windows).items():
        alpha = float(module.alpha.item())
        t = np.tanh(alpha * x)
        states[name] = alpha, float(x.std()), float(np.mean(1 - t * t < 0.01))
    return states


def fit_tanh(x, y):
    """(α, c, unexplained) of the least-squares y ≈ c·tanh(αx): c in closed form for each
    α of a log grid, refined once around the best; ``unexplained`` is the residual's share
    of y's variance."""
    x, y = x.ravel(), y.ravel()

    def residual(alpha):
        t = np.tanh(alpha * x)
        c = (t @ y) / (t @ t)
        return float(((y - c * t) ** 2).sum()), c

    grid = np.geomspace(1e-2, 1e3, 121)
    best = grid[np.argmin([residual(a)[0] for a in grid])]
    fine = best * np.geomspace(0.9, 1.1, 41)
    alpha = fine[np.argmin([residual(a)[0] for a in fine])]
    sse, c = residual(alpha)
    return float(alpha), float(c), sse / float(((y - y.mean()) ** 2).sum())


def fit_line(x, y):
    """(k, unexplained) of the least-squares line y ≈ kx through 0."""
    x, y = x.ravel(), y.ravel()
    k = (x @ y) / (x @ x)
    return float(k), float(((y - k * x) ** 2).sum() / ((y - y.mean()) ** 2).sum())


def eval_windows(run, count=16, draw_seed=1):
    """``count`` windows (B, T) of the training text, from a generator of their own."""
    data = run.tokenizer.encode(run.config.training_text)
    T = run.config.context_length
    starts = np.random.default_rng(draw_seed).integers(0, len(data) - T, size=count)
    return np.stack([data[s:s + T] for s in starts])


def draw(plt, pairs, fits, runs, args):
    """One panel per LayerNorm (its cloud, coloured by each token's σ, with both fits) and
    one of the three loss curves."""
    panels = len(pairs) + 1
    columns = 3
    rows = -(-panels // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.6 * rows))
    axes = axes.ravel()
    for ax, (name, (x, xhat)) in zip(axes, pairs.items()):
        alpha, c, unexplained = fits[name]["tanh"]
        k, unexplained_line = fits[name]["line"]
        sigma = np.broadcast_to(x.std(-1, keepdims=True), x.shape).ravel()
        shown = np.random.default_rng(0).permutation(x.size)[:POINTS]     # (fitted on all)
        points = ax.scatter(x.ravel()[shown], xhat.ravel()[shown], c=sigma[shown], s=1,
                            cmap="viridis", alpha=0.5, rasterized=True)
        grid = np.linspace(x.min(), x.max(), 200)
        ax.plot(grid, c * np.tanh(alpha * grid), color="tab:red",
                label=f"{c:.2f}·tanh({alpha:.2f}x): {100 * unexplained:.1f}% left")
        ax.plot(grid, k * grid, color="black", linestyle="--", linewidth=1,
                label=f"{k:.2f}x: {100 * unexplained_line:.1f}% left")
        ax.set(title=name, xlabel="LayerNorm input x", ylabel="x̂ = (x − μ)/σ")
        ax.set_ylim(1.15 * xhat.min(), 1.15 * xhat.max())
        ax.legend(fontsize=7, loc="upper left")
        fig.colorbar(points, ax=ax, label="σ of the token's row")
    ax = axes[len(pairs)]
    for norm, run in runs.items():
        ax.plot(np.arange(1, len(run.losses) + 1), run.losses, label=norm, linewidth=1)
    ax.set(title=f"training loss, init {args.init}, seed {args.seed}", xlabel="step",
           ylabel="cross-entropy")
    ax.legend()
    for ax in axes[panels:]:
        ax.axis("off")
    fig.suptitle(f"LayerNorm's input vs its normalized output after {args.steps} steps, "
                 "and the tanh DyT replaces it with")
    fig.tight_layout()
    plotting.save(fig, args.out, "dyt_vs_layernorm.png")


def main(argv=None):
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=positive_int, default=300)
    parser.add_argument("--d-model", type=positive_int, default=32,
                        help="model width, a multiple of the 4 attention heads")
    parser.add_argument("--context", type=positive_int, default=32,
                        help="characters per training window")
    parser.add_argument("--init", choices=("gpt2", "xavier"), default="gpt2",
                        help="weight initialisation (see nn.GPT): gpt2's N(0, 0.02²) "
                             "embeddings, or xavier's N(0, 1)")
    parser.add_argument("--seed", type=seed, default=0, help="initial weights and batches")
    parser.add_argument("--out", default="out/dyt_vs_layernorm", help="directory for the plot")
    parser.add_argument("--quick", action="store_true",
                        help=f"{LAST} steps, d_model 16, context 16 (unless given)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (none is drawn when stderr is not a terminal)")
    args = parse_args(parser, argv, quick={"steps": LAST, "d_model": 16, "context": 16},
                      check=check_options)

    runs = {norm: train_tiny_gpt(TrainConfig(steps=args.steps, norm=norm, seed=args.seed,
                                             d_model=args.d_model, init=args.init,
                                             context_length=args.context),
                                 progress=not args.no_progress)
            for norm in NORMS}
    windows = eval_windows(runs["layer_norm"])
    pairs = layer_norm_pairs(runs["layer_norm"].model, windows)
    fits = {name: {"tanh": fit_tanh(x, xhat), "line": fit_line(x, xhat)}
            for name, (x, xhat) in pairs.items()}

    print(f"tiny GPT, d_model {args.d_model}, context {args.context}, init {args.init}, "
          f"{args.steps} AdamW steps, seed {args.seed}; one batch of 16 windows through each "
          "trained model")
    print(f"{'LayerNorm':<14} {'α':>7} {'c':>6} {'left: tanh':>10} {'line':>6}")
    for name, fit in fits.items():
        alpha, c, unexplained = fit["tanh"]
        print(f"{name:<14} {alpha:>7.3f} {c:>6.3f} {100 * unexplained:>9.1f}% "
              f"{100 * fit['line'][1]:>5.1f}%")
    print(f"\n{'DyT':<14} {'α':>7} {'σ of x':>8} {'saturated':>10}")
    for name, (alpha, sigma, saturated) in dyt_states(runs["dyt"].model, windows).items():
        print(f"{name:<14} {alpha:>7.3f} {sigma:>8.3f} {100 * saturated:>9.1f}%")
    print(f"\nfinal loss (mean of the last {LAST} steps): "
          + ", ".join(f"{norm} {np.mean(run.losses[-LAST:]):.4f}" for norm, run in runs.items()))

    plt = plotting.pyplot()
    if plt is not None:
        draw(plt, pairs, fits, runs, args)


if __name__ == "__main__":
    run_script(main)

"""An MLP with BatchNorm or LayerNorm learns two interleaved half-moons.

Run:  python examples/mlp.py [--norm layer_norm] [--impl composite] [--steps 500]
      python examples/mlp.py --quick

The data is made with NumPy (no scikit-learn). Training reaches >= 95 % accuracy (the
script asserts it) and, with matplotlib, draws the decision boundary to OUT/mlp_moons.png.
"""

import numpy as np

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn, optim
from microgradnorm.cli import plotting
from microgradnorm.cli.common import norm_name, positive_int
from microgradnorm.cli.script import ScriptParser, parse_args, run_script
from microgradnorm.train import Progress


def two_moons(n, noise=0.1, seed=0):
    """``n`` points on two interleaved half circles, labels 0 and 1 (scikit-learn's
    make_moons): returns x (n, 2) float32 (the models' default dtype), y (n,) int64."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, np.pi, n)
    label = rng.integers(0, 2, n)
    x = np.where(label[:, None] == 0,
                 np.stack([np.cos(angle), np.sin(angle)], 1),
                 np.stack([1 - np.cos(angle), 0.5 - np.sin(angle)], 1))
    return (x + noise * rng.standard_normal((n, 2))).astype(np.float32), label


def accuracy(model, x, y):
    model.eval()
    with mg.no_grad():
        predicted = model(mg.tensor(x)).numpy().argmax(-1)
    model.train()
    return float((predicted == y).mean())


def check_batch(args):
    """A batch is drawn without replacement from the points; BatchNorm needs 2 of them."""
    if args.batch_size > args.points:
        raise ValueError(f"--batch-size {args.batch_size} is more than the {args.points} "
                         "--points it is drawn from")
    if args.norm == "batch_norm" and args.batch_size < 2:
        raise ValueError("--batch-size must be at least 2 for batch_norm (a variance over "
                         f"the batch), got {args.batch_size}")


def main(argv=None):
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--norm", type=norm_name, choices=("batch_norm", "layer_norm", "rms_norm"),
                        default="batch_norm")
    parser.add_argument("--impl", choices=F.IMPLS, default="fused")
    parser.add_argument("--points", type=positive_int, default=400)
    parser.add_argument("--steps", type=positive_int, default=500)
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--out", default="out/mlp", help="directory for the plot")
    parser.add_argument("--quick", action="store_true",
                        help="200 points, 150 steps (unless given)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (none is drawn when stderr is not a terminal)")
    args = parse_args(parser, argv, quick={"points": 200, "steps": 150}, check=check_batch)

    x, y = two_moons(args.points)
    mg.manual_seed(0)                                  # the weights
    model = nn.MLP([2, 32, 32, 2], norm=args.norm, impl=args.impl)
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(0)
    bar = Progress(range(args.steps), "train", enabled=not args.no_progress)
    for _ in bar:
        batch = rng.choice(len(x), size=args.batch_size, replace=False)
        loss = F.cross_entropy(model(mg.tensor(x[batch])), y[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    bar.close(f"{args.steps} Adam steps")
    acc = accuracy(model, x, y)
    print(f"MLP 2-32-32-2 with {args.norm} ({args.impl}), {args.steps} Adam steps of "
          f"{args.batch_size}: train accuracy {acc:.1%} on {len(x)} points (eval mode)")
    assert acc >= 0.95, f"accuracy {acc:.1%} < 95%"

    plt = plotting.pyplot()
    if plt is not None:
        grid = np.stack(np.meshgrid(np.linspace(-1.5, 2.5, 200), np.linspace(-1, 1.5, 150)), -1)
        model.eval()
        with mg.no_grad():
            probs = F.softmax(model(mg.tensor(grid.reshape(-1, 2), dtype=mg.float32)), dim=-1)
            probs = probs.numpy()[:, 1]
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.contourf(grid[..., 0], grid[..., 1], probs.reshape(grid.shape[:2]), levels=20,
                    cmap="RdBu", alpha=0.35)
        for label, colour in ((0, "tab:red"), (1, "tab:blue")):   # RdBu's ends, solid
            ax.scatter(*x[y == label].T, color=colour, edgecolors="k", linewidths=0.4, s=14,
                       label=f"class {label}")
        ax.legend(loc="upper right", fontsize=8)
        ax.set(title=f"two moons, MLP with {args.norm}: accuracy {acc:.1%}")
        plotting.save(fig, args.out, "mlp_moons.png")


if __name__ == "__main__":
    run_script(main)

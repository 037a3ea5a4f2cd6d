"""Quickstart: one LayerNorm as a composite graph and as a fused node.

Run:  python examples/quickstart.py [--rows 64 --features 32]
      python examples/quickstart.py --quick      (6 rows of 5 features)

It builds both graphs on the same input, shows their size and what they keep for
backward, checks that they agree and that the fused backward passes gradcheck.
"""

import numpy as np

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.cli.common import positive_int
from microgradnorm.cli.script import ScriptParser, parse_args, run_script


def main(argv=None):
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=positive_int, default=64,
                        help="rows of the input (default %(default)s)")
    parser.add_argument("--features", type=positive_int, default=32,
                        help="features per row, the normalized size (default %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="a small input (6 x 5) unless --rows/--features say otherwise")
    args = parse_args(parser, argv, quick={"rows": 6, "features": 5})

    rng = np.random.default_rng(0)
    x_data = rng.standard_normal((args.rows, args.features))
    weight_data = 1 + 0.1 * rng.standard_normal(args.features)
    bias_data = 0.1 * rng.standard_normal(args.features)
    upstream = rng.standard_normal(x_data.shape)

    results = {}
    for impl in ("composite", "fused"):
        x = mg.tensor(x_data, requires_grad=True)
        weight = mg.tensor(weight_data, requires_grad=True)
        bias = mg.tensor(bias_data, requires_grad=True)
        y = F.layer_norm(x, args.features, weight, bias, impl=impl)
        stats = mg.graph_stats(y)
        y.backward(upstream)
        results[impl] = (y.detach().numpy(), x.grad.numpy(), weight.grad.numpy(),
                         bias.grad.numpy())
        print(f"{impl:>9}: {stats.nodes} op nodes {stats.by_op}, "
              f"{stats.saved_bytes:,} bytes saved for backward")

    names = ("output", "grad x", "grad weight", "grad bias")
    for name, fused, composite in zip(names, results["fused"], results["composite"]):
        print(f"max |fused - composite| {name:<12} {np.abs(fused - composite).max():.2e}")

    # gradcheck raises GradcheckError naming the input and element if a gradient is wrong.
    size = min(5, args.features)
    small = mg.tensor(x_data[:3, :size], requires_grad=True)
    gamma = mg.tensor(weight_data[:size], requires_grad=True)
    mg.gradcheck(lambda t, g: F.layer_norm(t, size, g), [small, gamma])
    print(f"gradcheck of the fused backward (3 x {size}, float64): passed")


if __name__ == "__main__":
    run_script(main)

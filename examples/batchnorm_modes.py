"""BatchNorm in training and in eval: batch statistics vs running statistics.

Run:  python examples/batchnorm_modes.py [--steps 100]
      python examples/batchnorm_modes.py --quick

Four things to see, each printed (and plotted with matplotlib):
  1. In training a sample's output depends on the rest of its batch; in eval it does not.
  2. Batch size 1 cannot be normalized in training (no variance) but is fine in eval and
     for LayerNorm, which normalizes each sample on its own.
  3. The running statistics converge to the data's mean and variance: exponentially with
     momentum 0.1, as a plain average with momentum=None.
  4. Eval output approaches training output as the running statistics converge.
"""

import numpy as np

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from microgradnorm.cli import plotting
from microgradnorm.cli.common import positive_int
from microgradnorm.cli.script import ScriptParser, parse_args, run_script

MEAN, STD = 3.0, 2.0          # the data distribution, per feature


def check_batch(args):
    """Training batches need 2 samples for a variance."""
    if args.batch_size < 2:
        raise ValueError("--batch-size must be at least 2 (BatchNorm's variance over the "
                         f"batch), got {args.batch_size}")


def main(argv=None):
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=positive_int, default=100, help="training batches")
    parser.add_argument("--batch-size", type=positive_int, default=32)
    parser.add_argument("--out", default="out/batchnorm_modes", help="directory for the plot")
    parser.add_argument("--quick", action="store_true", help="30 steps (unless given)")
    args = parse_args(parser, argv, quick={"steps": 30}, check=check_batch)
    rng = np.random.default_rng(0)

    def normal(*shape):
        """Draws from the data distribution as float32, the default dtype (as torch's)."""
        return rng.normal(MEAN, STD, shape).astype(np.float32)

    # 1. batch dependence
    bn = nn.BatchNorm1d(4)
    sample = normal(1, 4)
    outputs = [bn(mg.tensor(np.concatenate([sample, normal(7, 4)]))).detach().numpy()[0]
               for _ in range(2)]
    print("1. the same sample in two different training batches -> first output row:")
    for out in outputs:
        print("   ", np.array2string(out, precision=4))
    bn.eval()
    eval_outputs = [bn(mg.tensor(np.concatenate([sample, normal(7, 4)]))).detach().numpy()[0]
                    for _ in range(2)]
    print(f"   in eval the two batches give the same row: "
          f"{np.array_equal(eval_outputs[0], eval_outputs[1])}")

    # 2. batch size 1
    bn.train()
    try:
        bn(mg.tensor(sample))
    except ValueError as error:
        print(f"2. batch size 1 in training: ValueError: {error}")
    in_eval = bn.eval()(mg.tensor(sample)).detach().numpy()[0]
    print(f"   in eval: {np.array2string(in_eval, precision=4)}")
    layer_norm = nn.LayerNorm(4)(mg.tensor(sample)).detach().numpy()[0]
    print(f"   LayerNorm on that one sample: {np.array2string(layer_norm, precision=4)}")

    # 3. and 4. running statistics over training
    models = {"momentum 0.1": nn.BatchNorm1d(4), "momentum None": nn.BatchNorm1d(4,
                                                                                 momentum=None)}
    history = {name: [] for name in models}
    gap = []
    probe = normal(256, 4)
    for _ in range(args.steps):
        batch = normal(args.batch_size, 4)
        for name, model in models.items():
            model.train()(mg.tensor(batch))
            history[name].append((model.running_mean.numpy()[0], model.running_var.numpy()[0]))
        model = models["momentum 0.1"]
        # Training-mode output of the probe without updating the running statistics:
        train_out = F.batch_norm(mg.tensor(probe), None, None, model.weight, model.bias,
                                 training=True).detach().numpy()
        eval_out = model.eval()(mg.tensor(probe)).detach().numpy()
        gap.append(np.abs(train_out - eval_out).mean())
    print(f"3. after {args.steps} batches of {args.batch_size} from N({MEAN}, {STD}^2):")
    for name, values in history.items():
        mean, var = values[-1]
        print(f"   {name + ':':<14} running_mean {mean:.3f} (data {MEAN}), running_var {var:.3f} "
              f"(data {STD ** 2})")
    print(f"4. mean |train output - eval output| on a probe batch: step 1 {gap[0]:.3f}, "
          f"step {len(gap)} {gap[-1]:.3f}")

    plt = plotting.pyplot()
    if plt is not None:
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
        for name, values in history.items():
            values = np.array(values)
            left.plot(values[:, 0], label=f"mean, {name}")
            left.plot(values[:, 1], ls="--", label=f"var, {name}")
        left.axhline(MEAN, color="gray", lw=0.5)
        left.axhline(STD ** 2, color="gray", lw=0.5)
        left.set(xlabel="training batch", title="running statistics (feature 0)")
        left.legend(fontsize=7)
        right.plot(gap)
        right.set(xlabel="training batch", ylabel="mean |train - eval|",
                  title="train vs eval output on a probe batch")
        plotting.save(fig, args.out, "batchnorm_modes.png")


if __name__ == "__main__":
    run_script(main)

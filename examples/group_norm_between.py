"""GroupNorm between LayerNorm (G = 1) and InstanceNorm (G = C) on one CNN activation.

Run:  python examples/group_norm_between.py [--channels 32] [--out docs/images]
      python examples/group_norm_between.py --quick

The activation is a fixed convolution's, ReLU(Conv2d(1, C, 3)) of smoothed noise images,
whose channels differ in mean and scale as a CNN's do. For every G dividing C it
normalizes the activation with F.group_norm (no affine) and measures:
  * the correlation of the output with LayerNorm's over (C, H, W) and with InstanceNorm's,
    over all N·C·H·W values: 1 with LayerNorm's at G = 1, 1 with InstanceNorm's at G = C;
  * the channel contrast kept: the spread across channels of each channel's mean output,
    averaged over the images. LayerNorm keeps how much more one channel fired than another;
    each group's normalization removes it between groups' channels' means, and InstanceNorm
    (one channel a group) removes it all.
It checks the two ends against F.layer_norm and F.instance_norm, prints the table and draws
it (groupnorm_between.png).
"""

import numpy as np

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from microgradnorm.cli import plotting
from microgradnorm.cli.common import positive_int
from microgradnorm.cli.script import ScriptParser, parse_args, run_script

SIDE = 12                   # image side


def activation(count, channels):
    """ReLU(Conv2d(1, channels, 3, padding=1)) of ``count`` images of noise averaged over
    3 x 3 neighbourhoods, all drawn from seed 0: (N, C, SIDE, SIDE), float64."""
    mg.manual_seed(0)
    conv = nn.Conv2d(1, channels, 3, padding=1, dtype="float64")
    with mg.no_grad():
        images = F.avg_pool2d(mg.randn(count, 1, SIDE, SIDE, dtype="float64"), 3, stride=1,
                              padding=1)
        return conv(images).relu()


def correlation(a, b):
    """Pearson's correlation of all the values of two arrays."""
    return float(np.corrcoef(a.reshape(-1), b.reshape(-1))[0, 1])


def channel_contrast(y):
    """The standard deviation across channels of each channel's mean, averaged over the
    images of y (N, C, H, W)."""
    return float(y.mean(axis=(2, 3)).std(axis=1).mean())


def main(argv=None):
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=positive_int, default=32,
                        help="C, the activation's channels; G runs over its divisors")
    parser.add_argument("--images", type=positive_int, default=64)
    parser.add_argument("--out", default="out/group_norm_between", help="directory for the plot")
    parser.add_argument("--quick", action="store_true", help="16 images (unless given)")
    args = parse_args(parser, argv, quick={"images": 16})

    x = activation(args.images, args.channels)                          # (N, C, S, S)
    channels = args.channels
    layer = F.layer_norm(x, (channels, SIDE, SIDE)).numpy()
    instance = F.instance_norm(x).numpy()
    groups = [g for g in range(1, channels + 1) if channels % g == 0]
    outputs = {g: F.group_norm(x, g).numpy() for g in groups}
    print(f"activation {tuple(x.shape)}: ReLU(Conv2d(1, {channels}, 3)) of smoothed noise")
    print(f"G = 1 against F.layer_norm over (C, H, W): max |difference| "
          f"{np.abs(outputs[1] - layer).max():.1e}")
    print(f"G = C against F.instance_norm: max |difference| "
          f"{np.abs(outputs[channels] - instance).max():.1e}")
    rows = [(g, correlation(outputs[g], layer), correlation(outputs[g], instance),
             channel_contrast(outputs[g])) for g in groups]
    print(f"{'G':>4}  {'corr. LayerNorm':>15}  {'corr. InstanceNorm':>18}  "
          f"{'channel contrast':>16}")
    for g, with_layer, with_instance, contrast in rows:
        print(f"{g:>4}  {with_layer:>15.4f}  {with_instance:>18.4f}  {contrast:>16.4f}")

    plt = plotting.pyplot()
    if plt is not None:
        g, with_layer, with_instance, contrast = map(np.array, zip(*rows))
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
        left.plot(g, with_layer, "o-", label="with LayerNorm (G = 1)")
        left.plot(g, with_instance, "s-", label="with InstanceNorm (G = C)")
        left.set(xscale="log", xlabel="groups G", ylabel="correlation of the outputs",
                 title="GroupNorm against its two ends")
        right.plot(g, contrast, "o-", color="C2")
        right.set(xscale="log", xlabel="groups G", ylabel="std of channel means",
                  title="channel contrast kept")
        fig.suptitle(f"F.group_norm of one CNN activation {tuple(x.shape)}, G dividing C",
                     y=1.02)
        for axis in (left, right):
            axis.set_xticks(g, [str(v) for v in g])
            axis.minorticks_off()
        left.legend(fontsize=8)
        plotting.save(fig, args.out, "groupnorm_between.png")


if __name__ == "__main__":
    run_script(main)

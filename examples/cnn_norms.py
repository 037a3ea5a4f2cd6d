"""Small CNNs with each channel norm, trained on a synthetic image task: which quadrant holds
the bright blob?

Run:  python examples/cnn_norms.py [--epochs 8] [--norms batch_norm group_norm instance_norm]
      python examples/cnn_norms.py --quick

Each 12 x 12 image is noise, scaled and shifted by a random contrast and brightness, with a
Gaussian blob in one of its four quadrants; the label is the quadrant (chance: 25%). The
same network, Conv2d -> norm -> ReLU -> MaxPool2d twice, then Linear, is trained from the
same seed with each norm of ``--norms`` (any norm registered for a conv net's channels:
BatchNorm2d, GroupNorm, InstanceNorm2d), by name through ``nn.make_norm(..., place=
"channel")``. It prints each model's train accuracy per epoch and, at the end, its accuracy
on held-out images in eval mode (where BatchNorm switches to its running statistics).
"""

import numpy as np

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn, optim
from microgradnorm.cli.common import norm_name, positive_int
from microgradnorm.cli.script import ScriptParser, parse_args, run_script
from microgradnorm.norms import fitting

SIDE = 12                     # image side; a quadrant is SIDE/2 square
CHANNELS = (8, 16)            # the two convolutions' channels


def blob_images(count):
    """(images (count, 1, SIDE, SIDE) float32, labels (count,) int64) from the default
    generator: the blob's centre uniform in a random quadrant, 1.5 pixels wide."""
    labels = mg.randint(0, 4, (count,)).numpy()
    corner = np.stack([labels // 2, labels % 2], axis=1) * (SIDE // 2)      # (count, 2)
    centre = corner + 1 + mg.rand(count, 2).numpy() * (SIDE // 2 - 2)       # row, column
    grid = np.arange(SIDE)
    distance2 = ((grid[None, :, None] - centre[:, None, None, 0]) ** 2
                 + (grid[None, None, :] - centre[:, None, None, 1]) ** 2)   # (count, S, S)
    blob = np.exp(-distance2 / (2 * 1.5 ** 2))
    noise = mg.randn(count, SIDE, SIDE).numpy()
    contrast = np.exp(mg.randn(count, 1, 1).numpy())       # per image, 1/3 to 3 times
    brightness = 2 * mg.randn(count, 1, 1).numpy()
    images = contrast * (2 * blob + 0.5 * noise) + brightness
    return images[:, None].astype(np.float32), labels


def cnn(norm):
    """Conv2d -> norm -> ReLU -> MaxPool2d, twice (12 -> 6 -> 3), then Linear to 4."""
    layers, channels = [], 1
    for width in CHANNELS:
        layers += [nn.Conv2d(channels, width, 3, padding=1),
                   nn.make_norm(norm, width, place="channel"), nn.ReLU(), nn.MaxPool2d(2)]
        channels = width
    side = SIDE // 2 ** len(CHANNELS)
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(channels * side * side, 4))


def accuracy(logits, labels):
    return float((logits.detach().numpy().argmax(1) == labels).mean())


def train(norm, images, labels, args):
    """The model of ``norm`` trained from seed 1; returns it and its train accuracy per
    epoch (over the epoch's batches, in training mode)."""
    mg.manual_seed(1)                                       # the same weights and batches
    model = cnn(norm)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    history = []
    for _ in range(args.epochs):
        order = mg.randperm(len(labels)).numpy()
        correct = 0.0
        for start in range(0, len(order), args.batch_size):
            batch = order[start:start + args.batch_size]
            logits = model(mg.tensor(images[batch]))
            loss = F.cross_entropy(logits, mg.tensor(labels[batch]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            correct += accuracy(logits, labels[batch]) * len(batch)
        history.append(correct / len(order))
    return model, history


def check_options(args):
    """A training batch of BatchNorm needs 2 images; the batches come from ``--images``."""
    if args.batch_size < 2 or args.batch_size > args.images:
        raise ValueError(f"--batch-size must be between 2 and --images {args.images}, got "
                         f"{args.batch_size}")


def main(argv=None):
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--norms", nargs="+", type=norm_name, choices=fitting("channel"),
                        default=["batch_norm", "group_norm"],
                        help="the norms compared (default: batch_norm group_norm)")
    parser.add_argument("--images", type=positive_int, default=1024, help="training images")
    parser.add_argument("--epochs", type=positive_int, default=8)
    parser.add_argument("--batch-size", type=positive_int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate")
    parser.add_argument("--quick", action="store_true",
                        help="384 images, 4 epochs (unless given)")
    args = parse_args(parser, argv, quick={"images": 384, "epochs": 4}, check=check_options)

    mg.manual_seed(0)                                       # the data
    images, labels = blob_images(args.images)
    held_images, held_labels = blob_images(256)
    print(f"{args.images} training images {SIDE}x{SIDE}, 4 classes (chance 0.25); "
          f"{args.epochs} epochs of batches of {args.batch_size}")
    results = {}
    for norm in args.norms:
        model, history = train(norm, images, labels, args)
        with mg.no_grad():
            held = accuracy(model.eval()(mg.tensor(held_images)), held_labels)
        results[norm] = (history, held)
    width = max(map(len, args.norms))
    print("train accuracy per epoch:")
    for epoch in range(args.epochs):
        row = "  ".join(f"{norm:<{width}} {results[norm][0][epoch]:.3f}" for norm in args.norms)
        print(f"  epoch {epoch + 1:>2}  {row}")
    for norm, (history, held) in results.items():
        print(f"{norm}: train accuracy {history[0]:.3f} -> {history[-1]:.3f}, held-out "
              f"accuracy (eval mode) {held:.3f}")


if __name__ == "__main__":
    run_script(main)

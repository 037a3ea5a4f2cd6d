"""A character-level GPT trained on the Zen of Python, then asked to write some.

Run:  python examples/tiny_gpt.py [--steps 1500] [--norm rms_norm] [--impl composite]
      python examples/tiny_gpt.py --quick          # 40 steps of a 1-block model
Same as `microgradnorm train`. Writes the loss curve to OUT/tiny_gpt_loss.png when
matplotlib is installed.
"""

import numpy as np

from microgradnorm import nn
from microgradnorm.cli import plotting
from microgradnorm.cli.common import TRAIN_DEFAULTS, norm_name, positive_int
from microgradnorm.cli.script import ScriptParser, parse_args, run_script
from microgradnorm.functional import IMPLS
from microgradnorm.train import TrainConfig, train_tiny_gpt


def check_heads(args):
    """The model's attention heads must divide its width."""
    heads = TRAIN_DEFAULTS["n_heads"]
    if args.d_model % heads:
        raise ValueError(f"--d-model must be a multiple of the {heads} attention heads, "
                         f"got {args.d_model}")


def main(argv=None):
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=positive_int, default=1500)
    parser.add_argument("--impl", choices=IMPLS, default="fused")
    parser.add_argument("--norm", type=norm_name, choices=nn.NORMS, default="layer_norm")
    parser.add_argument("--placement", choices=nn.PLACEMENTS, default="pre")
    parser.add_argument("--d-model", type=positive_int, default=64)
    parser.add_argument("--layers", type=positive_int, default=2)
    parser.add_argument("--out", default="out/tiny_gpt", help="directory for the plot")
    parser.add_argument("--quick", action="store_true",
                        help="40 steps of a 1-block model of width 16 (unless given)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (none is drawn when stderr is not a terminal)")
    args = parse_args(parser, argv, quick={"steps": 40, "d_model": 16, "layers": 1},
                      check=check_heads)

    config = TrainConfig(steps=args.steps, impl=args.impl, norm=args.norm,
                         placement=args.placement, d_model=args.d_model, n_layers=args.layers)
    result = train_tiny_gpt(config, progress=not args.no_progress)
    losses = result.losses
    chance = np.log(result.tokenizer.vocab_size)
    print(f"{result.model.num_parameters():,} parameters, vocabulary of "
          f"{result.tokenizer.vocab_size} characters (chance loss {chance:.3f})")
    print(f"loss: first {losses[0]:.4f}, last {losses[-1]:.4f}, mean of last 20 "
          f"{np.mean(losses[-20:]):.4f}; {1000 * result.seconds_per_step:.1f} ms/step")
    print("sample (temperature 0.8):")
    print(result.sample("Beautiful is", length=300, temperature=0.8))

    plt = plotting.pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(losses, lw=0.8)
        ax.axhline(chance, color="gray", ls="--", lw=0.8, label="chance (uniform)")
        ax.set(xlabel="step", ylabel="cross-entropy", title=f"tiny GPT, {args.norm}, "
               f"{args.placement}-norm, {args.impl}")
        ax.legend()
        plotting.save(fig, args.out, "tiny_gpt_loss.png")


if __name__ == "__main__":
    run_script(main)

"""``microgradnorm train``: the tiny character-level GPT on the Zen of Python.

The training loop itself is the library's (``microgradnorm.train.train_tiny_gpt``); this
module only turns command-line options into its arguments and prints the result.
"""

from .. import train
from ..functional import IMPLS
from .common import (add_model_args, nonnegative_float, nonnegative_int, positive_float,
                     positive_int)


def add_parser(commands):
    parser = commands.add_parser(
        "train", help="train a tiny character-level GPT on the Zen of Python")
    parser.add_argument("--steps", type=nonnegative_int, default=300,
                        help="AdamW steps (default %(default)s)")
    parser.add_argument("--impl", choices=IMPLS, default="fused",
                        help="implementation of every norm (default %(default)s)")
    add_model_args(parser)
    parser.add_argument("--lr", type=positive_float, default=3e-3,
                        help="AdamW learning rate (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the initial weights, batches and sampling "
                             "(default %(default)s)")
    parser.add_argument("--sample", type=nonnegative_int, default=200,
                        help="characters to sample after training, 0 for none "
                             "(default %(default)s)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (none is drawn when stderr is not a terminal)")
    parser.add_argument("--activation", choices=("gelu", "swiglu"), default="gelu",
                        help="feed-forward: GPT-2's GELU MLP or LLaMA's gated SwiGLU "
                             "(default %(default)s)")
    parser.add_argument("--multiple-of", type=positive_int, default=256,
                        help="swiglu: round the inner width int(2/3 * 4 * d_model) up to a "
                             "multiple of N (LLaMA: %(default)s; a tiny model wants e.g. 8)")
    parser.add_argument("--lr-schedule", choices=train.LR_SCHEDULES, default="constant",
                        help="learning rate after the warmup: constant, or a cosine decay "
                             "to --min-lr (default %(default)s)")
    parser.add_argument("--warmup-steps", type=nonnegative_int, default=0,
                        help="linear warmup over N steps: lr/N, 2lr/N, ..., lr "
                             "(default %(default)s)")
    parser.add_argument("--min-lr", type=nonnegative_float, default=0.0,
                        help="learning rate at the end of the cosine decay "
                             "(default %(default)s)")
    parser.add_argument("--lr-decay-steps", type=positive_int, default=None,
                        help="step where the cosine reaches --min-lr (default: --steps; set "
                             "it when a run is split and resumed)")
    parser.add_argument("--grad-accum-steps", type=positive_int, default=1,
                        help="micro-batches of --batch-size whose gradients add up before "
                             "each optimizer step (default %(default)s)")
    parser.add_argument("--checkpoint", metavar="PATH", default=None,
                        help="save model, optimizer, schedule, step and random state here, "
                             "atomically (default: no checkpoint)")
    parser.add_argument("--checkpoint-every", type=nonnegative_int, default=0,
                        help="steps between checkpoints; 0: only at the end "
                             "(default %(default)s)")
    parser.add_argument("--resume", metavar="PATH", default=None,
                        help="continue from this checkpoint up to --steps; the run ends "
                             "bitwise where an uninterrupted one would (default: none)")
    parser.set_defaults(run=run)


def run(args):
    result = train.train_tiny_gpt(
        args.steps, impl=args.impl, dtype=args.dtype, seed=args.seed,
        progress=not args.no_progress, norm=args.norm, placement=args.placement,
        d_model=args.d_model, n_heads=args.heads, n_layers=args.layers,
        context_length=args.context, batch_size=args.batch_size, lr=args.lr,
        activation=args.activation, multiple_of=args.multiple_of,
        lr_schedule=args.lr_schedule,
        warmup_steps=args.warmup_steps, min_lr=args.min_lr, lr_decay_steps=args.lr_decay_steps,
        grad_accum_steps=args.grad_accum_steps, checkpoint=args.checkpoint,
        checkpoint_every=args.checkpoint_every, resume=args.resume)
    losses = result.losses
    print(f"tiny GPT on the Zen of Python: {result.model.num_parameters():,} parameters, "
          f"{args.norm} {args.placement}-norm, impl={args.impl}, {args.dtype}")
    start = result.config["start_step"]
    if start:
        print(f"resumed from {args.resume} at step {start}")
    if len(losses) > start:
        print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} steps, "
              f"{1000 * result.seconds_per_step:.1f} ms/step (median)")
    if args.checkpoint:
        print(f"checkpoint: {args.checkpoint} (step {len(losses)})")
    if args.sample:
        print("sample:\n" + result.sample("Beautiful", length=args.sample, seed=args.seed))

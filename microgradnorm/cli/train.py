"""``microgradnorm train``: the tiny character-level GPT on the Zen of Python.

The training loop is the library's (``microgradnorm.train.train_tiny_gpt``); this module
turns the options into a ``TrainConfig`` (each option's name is its field's, and its
default the field's) and prints the result.
"""

import sys

import numpy as np

from .. import train
from ..checkpoint import read_extra
from ..functional import IMPLS
from ..savefile import check_writable
from .common import (TRAIN_DEFAULTS, add_model_args, check_gpt_memory, nonnegative_float,
                     nonnegative_int, positive_float, positive_int, train_config)

DIVERGED = 3        # the exit status of a run whose loss or weights became NaN or infinite


def add_parser(commands):
    defaults = TRAIN_DEFAULTS
    parser = commands.add_parser(
        "train", help="train a tiny character-level GPT on the Zen of Python",
        epilog=f"exit status: 0 done; 1 a file could not be read or written; 2 bad options; "
               f"{DIVERGED} the loss or the weights became NaN or infinite (the run stops "
               "before saving them: --checkpoint keeps the last finite step)")
    parser.add_argument("--steps", type=nonnegative_int, default=defaults["steps"],
                        help="AdamW steps (default %(default)s)")
    parser.add_argument("--impl", choices=IMPLS, default=defaults["impl"],
                        help="implementation of every norm (default %(default)s)")
    add_model_args(parser)
    parser.add_argument("--lr", type=positive_float, default=defaults["lr"],
                        help="AdamW learning rate (default %(default)s)")
    parser.add_argument("--sample", type=nonnegative_int, default=200,
                        help="characters to sample after training, 0 for none "
                             "(default %(default)s)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (none is drawn when stderr is not a terminal)")
    parser.add_argument("--activation", choices=("gelu", "swiglu"),
                        default=defaults["activation"],
                        help="feed-forward: GPT-2's GELU MLP or LLaMA's gated SwiGLU "
                             "(default %(default)s)")
    parser.add_argument("--multiple-of", type=positive_int, default=defaults["multiple_of"],
                        help="swiglu: round the inner width int(2/3 * 4 * d_model) up to a "
                             "multiple of N (LLaMA: %(default)s; a tiny model wants e.g. 8)")
    parser.add_argument("--lr-schedule", choices=train.LR_SCHEDULES,
                        default=defaults["lr_schedule"],
                        help="learning rate after the warmup: constant, or a cosine decay "
                             "to --min-lr (default %(default)s)")
    parser.add_argument("--warmup-steps", type=nonnegative_int,
                        default=defaults["warmup_steps"],
                        help="linear warmup over N steps: lr/N, 2lr/N, ..., lr "
                             "(default %(default)s)")
    parser.add_argument("--min-lr", type=nonnegative_float, default=defaults["min_lr"],
                        help="learning rate at the end of the cosine decay "
                             "(default %(default)s)")
    parser.add_argument("--lr-decay-steps", type=positive_int,
                        default=defaults["lr_decay_steps"],
                        help="step where the cosine reaches --min-lr (default: --steps; set "
                             "it when a run is split and resumed)")
    parser.add_argument("--grad-accum-steps", type=positive_int,
                        default=defaults["grad_accum_steps"],
                        help="micro-batches of --batch-size whose gradients add up before "
                             "each optimizer step (default %(default)s)")
    parser.add_argument("--checkpoint", metavar="PATH", default=defaults["checkpoint"],
                        help="save model, optimizer, schedule, step and random state to "
                             "this exact path (no suffix added), atomically, in mg.save's "
                             "format: mg.load reads it (default: no checkpoint)")
    parser.add_argument("--checkpoint-every", type=nonnegative_int,
                        default=defaults["checkpoint_every"],
                        help="steps between checkpoints; 0: only at the end "
                             "(default %(default)s)")
    parser.add_argument("--resume", metavar="PATH", default=defaults["resume"],
                        help="continue from this checkpoint up to --steps; the run ends "
                             "bitwise where an uninterrupted one would (default: none)")
    parser.set_defaults(run=run)


def run(args):
    config = train_config(args)
    check_options(config)
    try:
        # a diverging run overflows on its way to the NaN that stops it: one line says it
        with np.errstate(over="ignore", invalid="ignore"):
            result = train.train_tiny_gpt(config, progress=not args.no_progress)
    except train.Diverged as error:
        print(f"microgradnorm train: diverged: {str(error).removeprefix('train_tiny_gpt: ')}",
              file=sys.stderr)
        raise SystemExit(DIVERGED) from None
    losses, start = result.losses, result.start_step
    print(f"tiny GPT on the Zen of Python: {result.model.num_parameters():,} parameters, "
          f"{config.norm} {config.placement}-norm, impl={config.impl}, {config.dtype}")
    if start:
        print(f"resumed from {config.resume} at step {start}")
    if len(losses) > start:
        print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} steps, "
              f"{1000 * result.seconds_per_step:.1f} ms/step (median)")
    else:
        print(f"nothing to train: already at --steps {config.steps}")
    if result.saved_step is not None:
        print(f"checkpoint: {config.checkpoint} (step {result.saved_step})")
    if args.sample:
        print("sample:\n" + result.sample("Beautiful", length=args.sample, seed=config.seed))


def check_options(config):
    """What the options name on disk and the memory the run needs, before step 0."""
    if config.resume is not None:
        try:
            read_extra(config.resume, where=f"--resume {config.resume}")
        except OSError as error:
            raise ValueError(f"--resume {config.resume}: {error.strerror}") from None
    if config.checkpoint is not None:
        try:
            check_writable(config.checkpoint)
        except ValueError as error:
            raise ValueError(f"--checkpoint {error}") from None
    check_gpt_memory(config, len(set(config.training_text)))

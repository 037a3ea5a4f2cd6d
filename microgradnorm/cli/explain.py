"""``microgradnorm explain``: claims about normalization as measured pictures.

    microgradnorm explain jacobian     # LayerNorm and RMSNorm Jacobians: spectrum, null space
    microgradnorm explain batchnorm    # BatchNorm's train/eval gap vs batch size and momentum
    microgradnorm explain placement    # gradient per block at init vs depth; warm-up runs

Each topic prints its numbers and, with matplotlib, writes ``explain_<topic>.png`` into
``--out``. ``docs/explain.md`` shows the pictures and what they say.
"""

import argparse
import dataclasses

import numpy as np

from .. import functional as F
from .. import nn
from ..autograd import no_grad
from ..train import TrainConfig, train_tiny_gpt
from ..checks import jacobian as dense_jacobian
from ..factories import manual_seed
from ..norms import NORMS, lookup
from ..tensor import tensor
from . import plotting
from .common import any_float, check_out_dir, nonnegative_int, positive_int, seed

TOPICS = ("jacobian", "batchnorm", "placement")
# The norms of the Jacobian topic: those that scale each row by its statistics, centred
# first or not (``Norm.centres``): LayerNorm and RMSNorm
JACOBIAN_NORMS = tuple(name for name, norm in NORMS.items()
                       if norm.statistics == "row" and not norm.residual)


def add_parser(commands):
    """Register the ``explain`` sub-command."""
    parser = commands.add_parser(
        "explain", help="measured pictures: norm Jacobians, BatchNorm's train/eval gap, "
                        "norm placement")
    parser.add_argument("topic", choices=TOPICS, help="what to measure and draw")
    parser.add_argument("--dim", type=int, default=8,
                        help="jacobian: the row length D (default %(default)s)")
    parser.add_argument("--eps", type=any_float, default=1e-5,
                        help="jacobian: epsilon of both norms, any number as the norms take "
                             "it (default %(default)s)")
    parser.add_argument("--steps", type=nonnegative_int, default=100,
                        help="batchnorm: training batches before eval (default %(default)s)")
    parser.add_argument("--seed", type=seed, default=0, help="random inputs (default "
                                                             "%(default)s)")
    parser.add_argument("--widths", type=parse_ints, default=(16, 32, 64),
                        help="placement: d_model values, comma-separated (default 16,32,64)")
    parser.add_argument("--depths", type=parse_ints, default=(6, 12, 24, 48),
                        help="placement: numbers of blocks (default 6,12,24,48)")
    parser.add_argument("--seeds", type=positive_int, default=3,
                        help="placement: initialisations per setting (default %(default)s)")
    parser.add_argument("--train-steps", type=nonnegative_int, default=150,
                        help="placement: AdamW steps of each warm-up run; 0: none "
                             "(default %(default)s)")
    parser.add_argument("--train-depth", type=positive_int, default=12,
                        help="placement: blocks of the warm-up runs (default %(default)s)")
    parser.add_argument("--out", default="out/explain",
                        help="directory for the picture (default %(default)s)")
    parser.add_argument("--no-plot", action="store_true", help="print the numbers only")
    parser.set_defaults(run=run)


MAX_JACOBIAN_DIM = 1024      # a D x D Jacobian a picture can show


def run(args):
    """Measure the topic, print it, draw it."""
    if args.topic == "jacobian" and not 2 <= args.dim <= MAX_JACOBIAN_DIM:
        raise ValueError(f"--dim must be in [2, {MAX_JACOBIAN_DIM}] for the jacobian (a D x D "
                         f"matrix, drawn), got {args.dim}")
    if args.topic == "placement" and any(width % PLACEMENT_HEADS for width in args.widths):
        raise ValueError(f"--widths must be multiples of {PLACEMENT_HEADS} (the attention "
                         f"heads), got {','.join(map(str, args.widths))}")
    if not args.no_plot:
        check_out_dir(args.out)
    if args.topic == "jacobian":
        spectra = [jacobian_spectrum(norm, args.dim, args.eps, args.seed)
                   for norm in JACOBIAN_NORMS]
        for spectrum in spectra:
            print(spectrum.report())
        print(centering_identity(args.dim, args.eps, args.seed))
        if not args.no_plot:
            plot_jacobians(spectra, args.out)
    elif args.topic == "placement":
        sweep = placement_sweep(args.widths, args.depths, args.seeds)
        print(sweep.report())
        runs = warmup_runs(args.train_steps, args.train_depth) if args.train_steps else {}
        if runs:
            print(warmup_report(runs, args.train_steps, args.train_depth))
        if not args.no_plot:
            plot_placement(sweep, runs, args.out)
    else:
        gaps = batchnorm_gaps(steps=args.steps, seed=args.seed)
        print(gaps.report())
        print(batch_of_two(args.seed))
        print(batch_of_one(args.seed))
        if not args.no_plot:
            plot_batchnorm(gaps, args.out)


def parse_ints(text):
    """``"6,12"`` -> ``(6, 12)``; argparse reports a bad value with the option's name."""
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated ints, got {text!r}") \
            from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive ints, got {text!r}")
    return values


# ----- Jacobians ------------------------------------------------------------------------
@dataclasses.dataclass
class JacobianSpectrum:
    """The Jacobian of one norm (no affine) at one row x, and what its SVD shows.

    Attributes:
        norm, dim, eps, x: the norm's name, D, epsilon and the row.
        jacobian: (D, D), by ``mg.jacobian`` (one backward per output).
        closed_form: (D, D), rstd·(I − 11ᵀ/D − x̂x̂ᵀ/D) for LayerNorm, rstd·(I − x̂x̂ᵀ/D) for
            RMSNorm.
        singular_values: descending.
        predicted: the singular values the closed form predicts, descending: rstd (D − 2
            times for LayerNorm, D − 1 for RMSNorm), rstd·eps/(s² + eps) along x̂ (s² the
            variance or the mean square) and, for LayerNorm, 0 along 1.
        null_vectors: the right singular vectors of the smallest singular value (and of
            the second smallest, for LayerNorm); ``cosines(direction)`` compares them with
            1 or x̂.
    """

    norm: str
    dim: int
    eps: float
    x: np.ndarray
    jacobian: np.ndarray
    closed_form: np.ndarray
    singular_values: np.ndarray
    predicted: np.ndarray
    null_vectors: np.ndarray

    def cosines(self, direction):
        """|cos| between each of ``null_vectors`` and ``direction``."""
        unit = direction / np.linalg.norm(direction)
        return np.abs(self.null_vectors @ unit)

    def report(self):
        """The numbers, as text."""
        xhat = self.xhat()
        lines = [f"{self.norm}, D={self.dim}, eps={self.eps:g}: singular values of dy/dx",
                 "  measured  " + " ".join(f"{s:.3e}" for s in self.singular_values),
                 "  predicted " + " ".join(f"{s:.3e}" for s in self.predicted),
                 f"  max |J - closed form| = {np.abs(self.jacobian - self.closed_form).max():.1e}"]
        ones = np.ones(self.dim)
        gain_ones = np.linalg.norm(self.jacobian @ ones) / np.sqrt(self.dim)
        gain_xhat = np.linalg.norm(self.jacobian @ xhat) / np.linalg.norm(xhat)
        lines.append(f"  |J 1| / |1| = {gain_ones:.3e}   |J x_hat| / |x_hat| = {gain_xhat:.3e}")
        for i, _ in enumerate(self.null_vectors):
            lines.append(f"  right singular vector of the {'smallest' if i == 0 else '2nd'}"
                         f" singular value: |cos| with 1 = "
                         f"{self.cosines(np.ones(self.dim))[i]:.6f}, with x_hat = "
                         f"{self.cosines(xhat)[i]:.6f}")
        return "\n".join(lines)

    def xhat(self):
        """The normalized row."""
        centered = self.x - self.x.mean() if NORMS[self.norm].centres else self.x
        return centered / np.sqrt((centered ** 2).mean() + self.eps)


def jacobian_spectrum(norm, dim=8, eps=1e-5, seed=0):
    """Measure the Jacobian of ``F.layer_norm`` or ``F.rms_norm`` (``norm``, by name or
    alias; no affine, fused) at a random row of length ``dim`` (mean 1, std 2), and compare
    it with its closed form.

    Example:
        >>> jacobian_spectrum("layer_norm", 8).singular_values[-1]     # ~1e-16: along 1
    """
    norm = lookup(norm, "jacobian_spectrum: norm", among=JACOBIAN_NORMS)
    centres = norm.centres
    x = np.random.default_rng(seed).normal(1.0, 2.0, dim)
    centered, removed = (x - x.mean(), 2) if centres else (x, 1)
    measured = dense_jacobian(lambda t: norm.function(t, dim, eps=eps), tensor(x))
    second_moment = (centered ** 2).mean()
    rstd = 1 / np.sqrt(second_moment + eps)
    xhat = centered * rstd
    eye = np.eye(dim)
    closed = rstd * (eye - np.outer(xhat, xhat) / dim)
    if centres:
        closed -= rstd * np.ones((dim, dim)) / dim
    if np.isfinite(measured).all():
        _, singular_values, vt = np.linalg.svd(measured)
    else:       # a negative eps past the row's moment: the norm's NaN, which SVD refuses
        singular_values, vt = np.full(dim, np.nan), np.full((dim, dim), np.nan)
    predicted = [rstd] * (dim - removed) + [rstd * eps / (second_moment + eps)]
    predicted += [0.0] if centres else []
    return JacobianSpectrum(norm.name, dim, eps, x, measured, closed, singular_values,
                            np.array(predicted), vt[::-1][:removed])


def centering_identity(dim=8, eps=1e-5, seed=0):
    """The source derivation's centering identity, measured: LayerNorm(x) = RMSNorm(Cx)
    with C = I − 11ᵀ/D the centering matrix, so J_LN(x) = J_RMS(Cx)·C, and C's null space
    (the direction 1) is LayerNorm's. Returns the report as text."""
    x = np.random.default_rng(seed).normal(1.0, 2.0, dim)
    centering = np.eye(dim) - np.ones((dim, dim)) / dim
    ln = F.layer_norm(tensor(x), dim, eps=eps).detach().numpy()
    rms_of_centered = F.rms_norm(tensor(centering @ x), dim, eps=eps).detach().numpy()
    j_ln = dense_jacobian(lambda t: F.layer_norm(t, dim, eps=eps), tensor(x))
    j_rms = dense_jacobian(lambda t: F.rms_norm(t, dim, eps=eps), tensor(centering @ x))
    return (f"centering identity, D={dim}: max |LN(x) - RMS(Cx)| = "
            f"{np.abs(ln - rms_of_centered).max():.1e}, max |J_LN(x) - J_RMS(Cx) C| = "
            f"{np.abs(j_ln - j_rms @ centering).max():.1e}, J_LN(x) 1 = "
            f"{np.abs(j_ln @ np.ones(dim)).max():.1e}")


def plot_jacobians(spectra, out_dir):
    """Singular values (measured and predicted) and the Jacobians as heat maps."""
    plt = plotting.pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    floor = 1e-18                          # a zero singular value, drawn at the bottom
    for spectrum, marker in zip(spectra, ("o", "s")):
        index = np.arange(1, spectrum.dim + 1)
        axes[0].semilogy(index, np.maximum(spectrum.singular_values, floor), marker,
                         label=f"{spectrum.norm}: measured", markersize=8, alpha=0.6)
        axes[0].semilogy(index, np.maximum(spectrum.predicted, floor), "k+", markersize=10)
    axes[0].plot([], [], "k+", label="closed form")
    axes[0].set_xlabel("index (descending)")
    axes[0].set_ylabel(f"singular value of dy/dx (exact zeros drawn at {floor:g})")
    axes[0].set_title(f"D = {spectra[0].dim}: rstd, then x̂'s ε-sized one,\n"
                      "then LayerNorm's exact zero along 1")
    axes[0].legend(fontsize=8)
    for ax, spectrum in zip(axes[1:], spectra):
        limit = np.abs(spectrum.jacobian).max()
        image = ax.imshow(spectrum.jacobian, cmap="RdBu_r", vmin=-limit, vmax=limit)
        ax.set_title(f"{spectrum.norm} Jacobian dy_i/dx_j")
        fig.colorbar(image, ax=ax, shrink=0.8)
    return plotting.save(fig, out_dir, "explain_jacobian.png")


# ----- BatchNorm ------------------------------------------------------------------------
MEAN, STD = 3.0, 2.0                       # the data: every feature N(3, 2²)
BATCH_SIZES = (2, 4, 8, 16, 32, 64, 256)
MOMENTA = (0.01, 0.1, 0.5, None)


@dataclasses.dataclass
class BatchNormGaps:
    """Train/eval gap of ``nn.BatchNorm1d`` after ``steps`` training batches.

    Attributes:
        gap: {momentum: [gap per batch size]}, the mean over fresh batches of
            mean |y_train − y_eval|, both normalizing the same batch (train: with the batch's
            statistics; eval: with the running ones).
        running_error: {momentum: [max over features of |running_mean − 3| + |running_var
            − 4| per batch size]}.
    """

    batch_sizes: tuple
    momenta: tuple
    steps: int
    gap: dict
    running_error: dict

    def report(self):
        """The gap table, as text."""
        head = f"{'momentum':>9} " + "".join(f"{'B=' + str(b):>9}" for b in self.batch_sizes)
        lines = [f"BatchNorm1d, data N({MEAN:g}, {STD:g}^2), {self.steps} training batches: "
                 f"mean |y_train - y_eval|", head]
        for momentum in self.momenta:
            lines.append(f"{str(momentum):>9} " + "".join(f"{g:9.4f}" for g in self.gap[momentum]))
        lines += ["running statistics error |mean - 3| + |var - 4| (max over features)", head]
        for momentum in self.momenta:
            lines.append(f"{str(momentum):>9} "
                         + "".join(f"{e:9.4f}" for e in self.running_error[momentum]))
        return "\n".join(lines)


def batchnorm_gaps(batch_sizes=BATCH_SIZES, momenta=MOMENTA, steps=100, features=16,
                   eval_batches=20, seed=0):
    """Train ``nn.BatchNorm1d(features)`` for ``steps`` batches of each size with each
    momentum (None: cumulative average), then measure the train/eval gap on fresh batches.
    The ideal gap is that of batch statistics against the true ones, which shrinks like
    1/√B; the running statistics add their own error, larger with a larger momentum."""
    gap = {m: [] for m in momenta}
    running_error = {m: [] for m in momenta}
    for momentum in momenta:
        for batch_size in batch_sizes:
            rng = np.random.default_rng(seed)
            bn = nn.BatchNorm1d(features, momentum=momentum, dtype="float64")   # as the data
            with no_grad():
                for _ in range(steps):
                    bn(tensor(rng.normal(MEAN, STD, (batch_size, features))))
                bn.eval()
                diffs = []
                for _ in range(eval_batches):
                    x = tensor(rng.normal(MEAN, STD, (batch_size, features)))
                    diffs.append(np.abs(_train_output(bn, x) - bn(x).detach().numpy()).mean())
            gap[momentum].append(float(np.mean(diffs)))
            error = (np.abs(bn.running_mean.numpy() - MEAN)
                     + np.abs(bn.running_var.numpy() - STD ** 2))
            running_error[momentum].append(float(error.max()))
    return BatchNormGaps(tuple(batch_sizes), tuple(momenta), steps, gap, running_error)


def _train_output(bn, x):
    """BatchNorm's training-mode output on ``x`` without moving its running statistics."""
    y = F.batch_norm(x, None, None, bn.weight, bn.bias, training=True, eps=bn.eps)
    return y.detach().numpy()


def batch_of_two(seed=0):
    """With two samples per batch, training-mode BatchNorm maps every feature to ±1 (up to
    eps) whatever the inputs: (x₁ − μ)/σ = ±1 when μ and σ come from x₁ and x₂ alone."""
    x = np.random.default_rng(seed).normal(MEAN, STD, (2, 6))
    y = nn.BatchNorm1d(6, dtype="float64")(tensor(x)).detach().numpy()
    return (f"batch of 2 in training: |y| = {np.array2string(np.abs(y).ravel(), precision=5)}"
            f" -> every output is +-1; the values of x are gone")


def batch_of_one(seed=0):
    """Batch size 1 in training: no variance to normalize with (a ValueError, as in
    PyTorch); eval (after training on larger batches) and LayerNorm handle it."""
    rng = np.random.default_rng(seed)
    x = tensor(rng.normal(MEAN, STD, (1, 6)))
    bn = nn.BatchNorm1d(6, momentum=None, dtype="float64")
    with no_grad():
        for _ in range(100):                      # running statistics from 100 batches of 32
            bn(tensor(rng.normal(MEAN, STD, (32, 6))))
    try:
        bn(x)
        trained = "no error"
    except ValueError as error:
        trained = f"ValueError: {error}"
    bn.eval()
    layer_norm = nn.LayerNorm(6, dtype="float64")(x).detach().numpy()[0]
    return (f"batch of 1 in training: {trained}\n"
            f"  in eval, with running statistics of 100 batches of 32: "
            f"{np.array2string(bn(x).detach().numpy()[0], precision=4)}\n"
            f"  LayerNorm(6) on the same sample: {np.array2string(layer_norm, precision=4)}")


def plot_batchnorm(gaps, out_dir):
    """The train/eval gap and the running statistics' error against batch size."""
    plt = plotting.pyplot()
    if plt is None:
        return None
    fig, (gap_ax, error_ax) = plt.subplots(1, 2, figsize=(12, 4))
    for momentum in gaps.momenta:
        label = "cumulative (None)" if momentum is None else f"momentum {momentum}"
        gap_ax.loglog(gaps.batch_sizes, gaps.gap[momentum], "o-", label=label)
        error_ax.loglog(gaps.batch_sizes, gaps.running_error[momentum], "o-", label=label)
    sizes = np.array(gaps.batch_sizes, dtype=float)
    gap_ax.loglog(sizes, gaps.gap[None][0] * np.sqrt(sizes[0] / sizes), "k:", label="∝ 1/√B")
    gap_ax.set_xlabel("batch size B")
    gap_ax.set_ylabel("mean |y_train − y_eval|")
    gap_ax.set_title(f"train/eval gap after {gaps.steps} batches")
    gap_ax.legend(fontsize=8)
    error_ax.set_xlabel("batch size B")
    error_ax.set_ylabel("|running mean − 3| + |running var − 4|")
    error_ax.set_title("error of the running statistics")
    return plotting.save(fig, out_dir, "explain_batchnorm.png")


# ----- norm placement ---------------------------------------------------------------------
PLACEMENT_VOCAB, PLACEMENT_CONTEXT, PLACEMENT_BATCH, PLACEMENT_HEADS = 64, 16, 8, 4


def block_grad_norms(depth, norm, placement, d_model, init, seed=0):
    """(‖∂L/∂θ_l‖, ‖∂L/∂x_l‖) per block l of a freshly initialised ``nn.GPT`` (4 heads,
    float64) on one cross-entropy loss over a random batch of 8 × 16 tokens (vocabulary 64):
    the gradient of each block's parameters and of its input (the residual stream entering
    it), as NumPy arrays."""
    manual_seed(seed)
    model = nn.GPT(PLACEMENT_VOCAB, PLACEMENT_CONTEXT, d_model, PLACEMENT_HEADS, depth, norm=norm,
                   placement=placement, init=init, dtype="float64")
    inputs = []
    for block in model.blocks:                     # keep each block's input and its grad
        def forward(x, block_forward=block.forward):
            x.retain_grad()
            inputs.append(x)
            return block_forward(x)
        block.forward = forward
    tokens = np.random.default_rng(seed).integers(
        0, PLACEMENT_VOCAB, size=(PLACEMENT_BATCH, PLACEMENT_CONTEXT + 1))
    logits = model(tokens[:, :-1])                                          # (B, T, V)
    F.cross_entropy(logits.reshape(-1, PLACEMENT_VOCAB), tokens[:, 1:].reshape(-1)).backward()
    params = [np.sqrt(sum(float((p.grad ** 2).sum()) for p in block.parameters()))
              for block in model.blocks]
    stream = [float(np.linalg.norm(x.grad.numpy())) for x in inputs]
    return np.array(params), np.array(stream)


def early_late(values):
    """Geometric mean over the first quarter of ``values`` / over the last quarter: < 1 when
    gradients fade towards the input, > 1 when they grow."""
    quarter = max(1, len(values) // 4)
    log = np.log(values)
    return float(np.exp(log[:quarter].mean() - log[-quarter:].mean()))


@dataclasses.dataclass
class PlacementSweep:
    """Early/late gradient ratios at initialisation.

    Attributes:
        ratios: {(init, d_model, placement, depth): [early/late of ‖∂L/∂θ_l‖ per seed]}.
        profiles: {(init, d_model, placement, depth): ‖∂L/∂θ_l‖ per block, geometric
            mean over seeds}.
    """

    widths: tuple
    depths: tuple
    seeds: int
    ratios: dict
    profiles: dict

    def report(self):
        """One line per (init, width, depth): early/late for each placement, and post-norm's
        seed-to-seed range."""
        lines = [f"early/late of the blocks' parameter gradients at initialisation (LayerNorm, "
                 f"geometric mean over {self.seeds} seeds; < 1: fading towards the input)",
                 f"{'init':>6} {'d':>3} {'depth':>5} " + "".join(f"{p:>10}" for p in
                                                              nn.PLACEMENTS)
                 + "   post per seed"]
        for init, width, depth in sorted({k[:2] + k[3:] for k in self.ratios}):
            row = [_geomean(self.ratios[init, width, p, depth]) for p in nn.PLACEMENTS]
            seeds = " ".join(f"{r:.2f}" for r in self.ratios[init, width, "post", depth])
            lines.append(f"{init:>6} {width:>3} {depth:>5} " + "".join(f"{r:10.2f}" for r in row)
                         + f"   {seeds}")
        return "\n".join(lines)


def _geomean(values):
    return float(np.exp(np.mean(np.log(values))))


def placement_sweep(widths=(16, 32, 64), depths=(6, 12, 24, 48), seeds=3,
                    inits=("xavier", "gpt2"), norm="layer_norm"):
    """``block_grad_norms`` for every placement, width, depth and init, over ``seeds``."""
    ratios, profiles = {}, {}
    for init in inits:
        for width in widths:
            for placement in nn.PLACEMENTS:
                for depth in depths:
                    runs = [block_grad_norms(depth, norm, placement, width, init, seed)[0]
                            for seed in range(seeds)]
                    key = (init, width, placement, depth)
                    ratios[key] = [early_late(r) for r in runs]
                    profiles[key] = np.exp(np.mean(np.log(runs), axis=0))
    return PlacementSweep(tuple(widths), tuple(depths), seeds, ratios, profiles)


# (placement, init, lr, warm-up steps) of the training runs
WARMUP_SETTINGS = (("post", "xavier", 3e-3, 0), ("post", "xavier", 3e-3, 30),
                   ("post", "xavier", 1e-3, 30), ("post", "gpt2", 3e-3, 0),
                   ("pre", "xavier", 3e-3, 0), ("pre", "gpt2", 3e-3, 0),
                   ("sandwich", "xavier", 3e-3, 0), ("sandwich", "gpt2", 3e-3, 0),
                   ("deepnorm", "xavier", 3e-3, 0), ("deepnorm", "gpt2", 3e-3, 0))
# line style of each placement's loss curves
PLACEMENT_STYLES = {"pre": ":", "post": "-", "sandwich": "--", "deepnorm": "-."}


def warmup_runs(steps=150, depth=12, settings=WARMUP_SETTINGS, d_model=32):
    """Train the tiny GPT (``train_tiny_gpt``, seed 0) for each (placement, init, lr,
    warm-up steps) of ``settings``; returns {setting: losses}."""
    return {(placement, init, lr, warmup): train_tiny_gpt(TrainConfig(
                steps=steps, placement=placement, n_layers=depth, d_model=d_model, init=init,
                lr=lr, warmup_steps=warmup), progress=False).losses
            for placement, init, lr, warmup in settings}


def warmup_report(runs, steps, depth, d_model=32):
    """Mean loss of the first 10 and last 20 steps of each run, as text."""
    lines = [f"training, {depth} blocks, d_model {d_model}, {steps} AdamW steps, Zen of Python "
             f"(uniform guessing: 3.81)",
             f"{'placement':>9} {'init':>6} {'lr':>7} {'warmup':>6} {'first 10':>9} "
             f"{'last 20':>8}"]
    for (placement, init, lr, warmup), losses in runs.items():
        lines.append(f"{placement:>9} {init:>6} {lr:>7g} {warmup:>6} "
                     f"{np.mean(losses[:10]):9.3f} {np.mean(losses[-20:]):8.3f}")
    return "\n".join(lines)


def plot_placement(sweep, runs, out_dir):
    """Early/late against depth per placement (Xavier, GPT-2 init), post-norm's seeds, and
    the warm-up runs' loss curves."""
    plt = plotting.pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, 4 if runs else 3, figsize=(20 if runs else 15, 4))
    width = 32 if 32 in sweep.widths else sweep.widths[0]
    for ax, init in zip(axes[:2], ("xavier", "gpt2")):
        for placement in nn.PLACEMENTS:
            ax.semilogy(sweep.depths, [_geomean(sweep.ratios[init, width, placement, d])
                                       for d in sweep.depths], "o-", label=placement)
        ax.axhline(1, color="grey", linewidth=0.8)
        ax.set(xlabel="blocks", ylabel="early/late ‖∂L/∂θ‖ at init",
               title=f"init {init}, d_model {width}")
        ax.legend(fontsize=8)
    for w in sweep.widths:
        for depth in sweep.depths:
            values = sweep.ratios["xavier", w, "post", depth]
            axes[2].semilogy([depth * (1 + 0.04 * (w // 16 - 2))] * len(values), values, "o",
                             color=f"C{sweep.widths.index(w)}", alpha=0.7,
                             label=f"d_model {w}" if depth == sweep.depths[0] else None)
    axes[2].axhline(1, color="grey", linewidth=0.8)
    axes[2].set(xlabel="blocks", ylabel="early/late, one point per seed",
                title="post-norm, Xavier: seed to seed")
    axes[2].legend(fontsize=8)
    if runs:
        for (placement, init, lr, warmup), losses in runs.items():
            axes[3].plot(losses, label=f"{placement} {init} lr {lr:g} warmup {warmup}",
                         linestyle=PLACEMENT_STYLES.get(placement, "-"), linewidth=1.2)
        axes[3].set(xlabel="step", ylabel="training loss",
                    title="training runs, the four placements")
        axes[3].legend(fontsize=7)
    return plotting.save(fig, out_dir, "explain_placement.png")

"""``precision_report``: where composite and fused part in low precision, and why.

For each norm and implementation, each dtype (float16, bfloat16, float32) and each input
family, the inputs are drawn in float64, rounded to the dtype, and run forward and
backward; the *truth* is PyTorch's formula (two-pass variance, eps inside the square root)
evaluated in float64 on exactly the rounded values. Every output and gradient gets

    error_i = |got_i - truth_i| / rms(truth)       (elementwise, scaled by the tensor's RMS)

summarised as its max and median, and the count of inf/NaN elements in ``got``. Scaling by
the RMS (not by |truth_i|) keeps elements that are nearly 0 from reading as huge errors.

Norms: ``layer_norm`` and ``rms_norm`` normalize each row of the (rows, cols) input;
``batch_norm`` (training mode, as a network trains) normalizes each column: the input is
(N, C) = (rows, cols), and each channel is normalized over the batch.

Implementations (the ``impl`` column):
  * ``composite`` / ``fused``: the library's two; RMSNorm once per casting mode
    (``composite[llama]``, ...).
  * ``one-pass``: LayerNorm and BatchNorm with the naive variance E[x²] − E[x]²
    (deliberately wrong: catastrophic cancellation when |mean| ≫ std).
  * ``eps-outside``: LayerNorm with x̂ = (x − μ) / (σ + eps), the placement the source
    derivation (§10.2) calls right, against PyTorch's 1 / sqrt(σ² + eps) (derivations §8a).

Input families: ``normal`` N(0, 1); ``scale 300`` (300·N(0, 1): x² passes float16's
65504); ``offset 1e4`` (mean 1e4, std 1e-3: E[x²] and E[x]² agree to 14 digits);
``constant rows`` (variance exactly 0); ``heavy tails`` (Student's t, 2 degrees of freedom).
Each family is drawn along what the norm normalizes over: for BatchNorm the "rows" of a
family are its channels, so "constant rows" gives channels constant over the batch.
"""

import dataclasses
import math

import numpy as np

from .. import dtypes
from .. import functional as F
from ..autograd import grad
from ..kernels import CASTINGS
from ..tensor import Tensor

FAMILIES = ("normal", "scale 300", "offset 1e4", "constant rows", "heavy tails")
DTYPES = ("float16", "bfloat16", "float32")
EPS = {"layer_norm": 1e-5, "rms_norm": 1e-6, "batch_norm": 1e-5}
QUICK_SHAPE, FULL_SHAPE = (8, 64), (64, 512)


def draw_family(family, shape, rng):
    """float64 rows of ``family`` (see the module doc)."""
    rows, cols = shape
    if family == "normal":
        return rng.standard_normal(shape)
    if family == "scale 300":
        return 300 * rng.standard_normal(shape)
    if family == "offset 1e4":
        return 1e4 + 1e-3 * rng.standard_normal(shape)
    if family == "constant rows":
        return np.repeat(3 * rng.standard_normal((rows, 1)), cols, axis=1)
    if family == "heavy tails":
        return rng.standard_t(2, shape)
    raise ValueError(f"precision: family must be one of {FAMILIES}, got {family!r}")


def draw_input(norm, family, shape, rng):
    """x (rows, cols) of ``family`` for ``norm``, the family's hard case on what the norm
    normalizes over: rows for LayerNorm and RMSNorm, channels (columns of (N, C)) for
    BatchNorm, so "constant rows" gives BatchNorm channels constant over the batch."""
    if norm == "batch_norm":
        return np.ascontiguousarray(draw_family(family, shape[::-1], rng).T)
    return draw_family(family, shape, rng)


# ----- the implementations ------------------------------------------------------------------
def _one_pass_layer_norm(x, weight, bias, eps):
    # var = E[x²] − E[x]²: one pass over the row, and wrong when |mean| ≫ std.
    mean = x.mean(-1, keepdims=True)
    var = (x * x).mean(-1, keepdims=True) - mean * mean
    return (x - mean) / (var + eps).sqrt() * weight + bias


def _one_pass_batch_norm(x, weight, bias, eps):
    # The same naive variance per channel, over the batch (axis 0 of (N, C)).
    mean = x.mean(0, keepdims=True)
    var = (x * x).mean(0, keepdims=True) - mean * mean
    return (x - mean) / (var + eps).sqrt() * weight + bias


def _batch_norm(impl):
    """BatchNorm in training mode on (N, C): batch statistics, no running statistics."""
    return lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True,
                                        eps=EPS["batch_norm"], impl=impl)


def _eps_outside_layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)
    centered = x - mean
    std = (centered * centered).mean(-1, keepdims=True).sqrt()
    return centered / (std + eps) * weight + bias


def implementations():
    """{(norm, impl): fn(x, weight, bias) -> y} for every row of the report."""
    def layer(impl):
        return lambda x, w, b: F.layer_norm(x, x.shape[-1], w, b, EPS["layer_norm"], impl)

    def rms(impl, casting):
        return lambda x, w, b: F.rms_norm(x, x.shape[-1], w, EPS["rms_norm"], impl,
                                          casting=casting)

    table = {("layer_norm", impl): layer(impl) for impl in ("composite", "fused")}
    table[("layer_norm", "one-pass")] = lambda x, w, b: _one_pass_layer_norm(
        x, w, b, EPS["layer_norm"])
    table[("layer_norm", "eps-outside")] = lambda x, w, b: _eps_outside_layer_norm(
        x, w, b, EPS["layer_norm"])
    for casting in CASTINGS:
        for impl in ("composite", "fused"):
            table[("rms_norm", f"{impl}[{casting}]")] = rms(impl, casting)
    for impl in ("composite", "fused"):
        table[("batch_norm", impl)] = _batch_norm(impl)
    table[("batch_norm", "one-pass")] = lambda x, w, b: _one_pass_batch_norm(
        x, w, b, EPS["batch_norm"])
    return table


def _truth(norm):
    """PyTorch's formula in float64 (the fused node: eps inside, two-pass variance)."""
    if norm == "batch_norm":
        return _batch_norm("fused")
    if norm == "layer_norm":
        return lambda x, w, b: F.layer_norm(x, x.shape[-1], w, b, EPS[norm])
    return lambda x, w, b: F.rms_norm(x, x.shape[-1], w, EPS[norm])


# ----- one cell -------------------------------------------------------------------------------
@dataclasses.dataclass
class Cell:
    """One norm/impl/dtype/family: {tensor name: (max error, median error, non-finite)}."""

    norm: str
    impl: str
    dtype: str
    family: str
    errors: dict

    @property
    def worst(self):
        """The largest max error over the output and every gradient (inf if any is)."""
        return max(e[0] for e in self.errors.values())

    @property
    def nonfinite(self):
        return sum(e[2] for e in self.errors.values())


def _run(fn, arrays, dtype):
    """Forward and backward of ``fn`` on ``arrays`` cast to ``dtype``: float64 results."""
    leaves = {name: Tensor(a, requires_grad=name != "dy", dtype=dtype)
              for name, a in arrays.items()}
    y = fn(leaves["x"], leaves["weight"], leaves.get("bias"))
    params = [leaves[n] for n in ("x", "weight", "bias") if n in leaves]
    grads = grad([y], params, [leaves["dy"].data.astype(y.dtype)])
    out = {"y": y.data}
    out.update({f"d{n}": g for n, g in zip(("x", "weight", "bias"), grads)})
    with np.errstate(all="ignore"):
        return {name: np.asarray(a, np.float32).astype(np.float64) if a.dtype.itemsize == 2
                else np.asarray(a, np.float64) for name, a in out.items()}


def _error(got, truth):
    nonfinite = int(np.size(got) - np.count_nonzero(np.isfinite(got)))
    scale = math.sqrt(float(np.mean(truth * truth))) if truth.size else 0.0
    with np.errstate(all="ignore"):
        error = np.abs(got - truth) / (scale if scale > 0 else 1.0)
    error = np.where(np.isfinite(got), error, np.inf)
    return float(np.max(error)), float(np.median(error)), nonfinite


def measure(norm, impl, dtype, family, shape=QUICK_SHAPE, seed=0):
    """The ``Cell`` of one norm/impl/dtype/family."""
    fn = implementations()[(norm, impl)]
    rng = np.random.default_rng(seed)
    rows, cols = shape
    arrays = {"x": draw_input(norm, family, shape, rng),
              "weight": 1 + 0.1 * rng.standard_normal(cols),
              "dy": rng.standard_normal(shape)}
    if norm != "rms_norm":
        arrays["bias"] = 0.1 * rng.standard_normal(cols)
    low = dtypes.as_dtype(dtype)
    with np.errstate(all="ignore"):
        rounded = {n: a.astype(low).astype(np.float32).astype(np.float64)
                   for n, a in arrays.items()}
        truth = _run(_truth(norm), rounded, np.float64)
        got = _run(fn, arrays, low)              # overflow and 0/0 are what we measure
    return Cell(norm, impl, str(dtype), family,
                {name: _error(got[name], truth[name]) for name in truth})


# ----- the report ---------------------------------------------------------------------------
@dataclasses.dataclass
class PrecisionReport:
    cells: list
    shape: tuple
    dtypes: tuple
    families: tuple
    skipped: list            # notes on what could not run (bfloat16 without ml_dtypes)

    def cell(self, norm, impl, dtype, family):
        """The ``Cell`` of one norm/impl/dtype/family (KeyError if it was not measured)."""
        for c in self.cells:
            if (c.norm, c.impl, c.dtype, c.family) == (norm, impl, dtype, family):
                return c
        raise KeyError((norm, impl, dtype, family))

    def rows(self):
        """(norm, impl) pairs in report order."""
        seen = []
        for c in self.cells:
            if (c.norm, c.impl) not in seen:
                seen.append((c.norm, c.impl))
        return seen

    def table(self):
        """Plain text: one line per norm/impl/dtype, the worst max error per family."""
        head = f"{'norm':<11}{'impl':<18}{'dtype':<10}" + "".join(f"{f:>15}" for f in self.families)
        lines = [f"precision vs float64 (max |error| / rms(truth) over y and every grad; "
                 f"shape {self.shape})", head, "-" * len(head)]
        for norm, impl in self.rows():
            for dtype in self.dtypes:
                cells = [self.cell(norm, impl, dtype, f) for f in self.families]
                lines.append(f"{norm:<11}{impl:<18}{dtype:<10}"
                             + "".join(f"{_fmt(c):>15}" for c in cells))
        lines += [f"note: {note}" for note in self.skipped]
        return "\n".join(lines)

    def markdown(self, heatmap=None):
        """The report as markdown: the summary table, then max/median per tensor."""
        out = ["# Precision report", "",
               f"Inputs of shape {self.shape}, rounded to each dtype; truth = PyTorch's "
               "formula in float64 on the rounded values. Each entry is the largest "
               "|got − truth| / rms(truth) over the output and every gradient; "
               "`inf (n)` means n elements of the result were inf or NaN.", ""]
        if heatmap:
            out += [f"![precision heatmap]({heatmap})", ""]
        out += ["| norm | impl | dtype | " + " | ".join(self.families) + " |",
                "|---|---|---|" + "---|" * len(self.families)]
        for norm, impl in self.rows():
            for dtype in self.dtypes:
                cells = [self.cell(norm, impl, dtype, f) for f in self.families]
                out.append(f"| {norm} | {impl} | {dtype} | "
                           + " | ".join(_fmt(c) for c in cells) + " |")
        out += ["", "## Per tensor (max / median error, inf+NaN count)", "",
                "| norm | impl | dtype | family | " + " | ".join(_TENSORS) + " |",
                "|---|---|---|---|" + "---|" * len(_TENSORS)]
        for c in self.cells:
            parts = [_fmt_tensor(c.errors.get(name)) for name in _TENSORS]
            out.append(f"| {c.norm} | {c.impl} | {c.dtype} | {c.family} | "
                       + " | ".join(parts) + " |")
        out += [""] + [f"Note: {note}" for note in self.skipped]
        return "\n".join(out) + "\n"

    def heatmap(self, path):
        """Write a PNG heatmap of log10(worst error): rows norm/impl, columns dtype ×
        family. Returns the path, or None when matplotlib is missing."""
        try:
            import matplotlib
        except ImportError:
            return None
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        rows = self.rows()
        columns = [(d, f) for d in self.dtypes for f in self.families]
        values = np.array([[_log_error(self.cell(n, i, d, f)) for d, f in columns]
                           for n, i in rows])
        fig, ax = plt.subplots(figsize=(1.0 + 0.62 * len(columns), 1.2 + 0.42 * len(rows)))
        cmap = plt.get_cmap("viridis").with_extremes(bad="#d62728")   # inf / NaN: red
        image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=-8, vmax=1,
                          aspect="auto")
        for r in range(len(rows)):
            for c in range(len(columns)):
                v = values[r, c]
                text = "inf" if not np.isfinite(v) else f"{v:.1f}"
                ax.text(c, r, text, ha="center", va="center", fontsize=6,
                        color="white" if not np.isfinite(v) or v < -3 else "black")
        ax.set_xticks(range(len(columns)), [f"{d}\n{f}" for d, f in columns], fontsize=6,
                      rotation=90)
        ax.set_yticks(range(len(rows)), [f"{n} {i}" for n, i in rows], fontsize=7)
        for boundary in range(1, len(self.dtypes)):
            ax.axvline(boundary * len(self.families) - 0.5, color="white", linewidth=2)
        fig.colorbar(image, ax=ax, label="log10 max |error| / rms(truth)  (red: inf/NaN)")
        ax.set_title("composite vs fused vs naive, against float64", fontsize=9)
        fig.savefig(path, dpi=120, bbox_inches="tight")
        plt.close(fig)
        return path


_TENSORS = ("y", "dx", "dweight", "dbias")


def _fmt(cell):
    if cell.nonfinite:
        return f"inf ({cell.nonfinite})"
    return f"{cell.worst:.1e}"


def _fmt_tensor(entry):
    if entry is None:
        return "–"
    worst, median, nonfinite = entry
    if nonfinite:
        return f"inf / {median:.1e} ({nonfinite})"
    return f"{worst:.1e} / {median:.1e}"


def _log_error(cell):
    if cell.nonfinite or not np.isfinite(cell.worst):
        return np.nan
    return math.log10(max(cell.worst, 1e-12))


def precision_report(quick=False, shape=None, dtypes_=None, families=None, seed=0):
    """Measure every norm/impl/dtype/family (see the module doc).

    Args:
        quick: a small shape, (8, 64): 0.2 s for the whole report (1.6 s at the
            full shape), measured on a loaded 2-core AMD EPYC.
        shape: (rows, cols) of the inputs, (N, C) for BatchNorm; default (64, 512), or
            (8, 64) with ``quick``.
        dtypes_: dtypes to measure, a subset of ("float16", "bfloat16", "float32");
            bfloat16 is skipped (with a note) when ml_dtypes is missing.
        families: input families, a subset of ``FAMILIES``.
        seed: of the random inputs.

    Returns:
        ``PrecisionReport``: ``.table()``, ``.markdown()``, ``.heatmap(path)``, ``.cell()``.

    Example:
        >>> report = mg.precision_report(quick=True)
        >>> report.cell("layer_norm", "composite", "float16", "scale 300").nonfinite > 0
        True
    """
    shape = tuple(shape or (QUICK_SHAPE if quick else FULL_SHAPE))
    if len(shape) != 2 or min(shape) < 2:
        raise ValueError(f"precision_report: shape must be (rows, cols) with both >= 2, "
                         f"got {shape}")
    chosen = tuple(dtypes_ or DTYPES)
    unknown = [d for d in chosen if d not in DTYPES]
    if unknown:
        raise ValueError(f"precision_report: dtypes must be among {DTYPES}, got {unknown}")
    families = tuple(families or FAMILIES)
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        raise ValueError(f"precision_report: families must be among {FAMILIES}, got {bad}")
    skipped = []
    if "bfloat16" in chosen and not dtypes.has_bfloat16():
        chosen = tuple(d for d in chosen if d != "bfloat16")
        skipped.append("bfloat16 skipped: ml_dtypes is not installed (pip install ml_dtypes)")
    cells = [measure(norm, impl, dtype, family, shape, seed)
             for norm, impl in implementations()
             for dtype in chosen for family in families]
    return PrecisionReport(cells, shape, chosen, families, skipped)

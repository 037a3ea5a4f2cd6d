"""``precision_report``: every norm and impl against float64, by dtype and input family.

The truth is PyTorch's formula (two-pass variance, eps inside the square root) in float64
on the same rounded inputs; each output and gradient is scored by |got − truth| / rms(truth).
Every norm of ``NORMS`` but the residual forms is measured through its declaration: its
learned inputs, the variants of its options (RMSNorm's casting modes) and its naive rows
(``Norm.naive``). docs/precision.md explains the families, the naive impls and the results.
"""

import dataclasses
import math

import numpy as np

from .. import dtypes
from ..autograd import grad
from ..fused.twin import LEARNED
from ..norms import NORMS, lookup
from ..norms.arguments import machine_eps
from ..tensor import Tensor

__all__ = ["DTYPES", "FAMILIES", "Cell", "PrecisionReport", "draw_family", "draw_input",
           "implementations", "measure", "precision_report"]

FAMILIES = ("normal", "scale 300", "offset 1e4", "constant rows", "heavy tails")
DTYPES = ("float16", "bfloat16", "float32")
QUICK_SHAPE, FULL_SHAPE = (8, 64), (64, 512)
# the norms of a 2-D (rows, cols) x, but for the residual forms (x + residual: the same)
MEASURED = [norm for norm in NORMS.values() if not norm.residual and norm.ndim[0] <= 2]


def draw_family(family, shape, rng):
    """float64 rows of ``family`` (docs/precision.md describes each)."""
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
    """x (rows, cols) of ``family`` drawn along what ``norm`` normalizes over (BatchNorm:
    the channels, the columns of (N, C))."""
    if lookup(norm, "precision: norm").per_channel:
        return np.ascontiguousarray(draw_family(family, shape[::-1], rng).T)
    return draw_family(family, shape, rng)


# ----- the implementations ------------------------------------------------------------------
def implementations():
    """{(norm, impl): fn({name: Tensor}) -> y} for every row of the report: each norm's
    composite and fused (once per variant of its options, RMSNorm's casting modes:
    ``composite[llama]``, ...) and its naive rows (``Norm.naive``)."""
    table = {}
    for norm in MEASURED:
        for variant, options in norm.variants():
            for impl in ("composite", "fused"):
                table[norm.name, impl + variant] = _library(norm, impl, **options)
        for impl, naive in norm.naive.items():
            table[norm.name, impl] = (lambda given, fn=naive.function, defaults=norm.defaults:
                                      fn(given, **defaults))
    return table


def _library(norm, impl="fused", **options):
    # the norm's output with its default options; BatchNorm trains on batch statistics
    return lambda given: norm.run(given, impl, **options)[0]


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
    # forward and backward of fn on arrays cast to dtype (dy: the upstream gradient);
    # float64 results, "y" and "d<input>"
    leaves = {name: Tensor(a, requires_grad=True, dtype=dtype)
              for name, a in arrays.items() if name != "dy"}
    y = fn(leaves)
    dy = Tensor(arrays["dy"], dtype=dtype)._array.astype(y.dtype)
    grads = grad([y], list(leaves.values()), [dy])
    out = {"y": y._array}
    out.update({f"d{name}": g._array for name, g in zip(leaves, grads)})
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
    """The ``Cell`` of one norm/impl/dtype/family: x of ``family``, every learned input the
    norm declares (its ``init`` + 0.1·N(0, 1)) and the upstream gradient dy."""
    spec = lookup(norm, "precision: norm")
    fn = implementations()[(spec.name, impl)]
    rng = np.random.default_rng(seed)
    arrays = {spec.x: draw_input(spec.name, family, shape, rng)}
    for i, learned in enumerate(spec.inputs_of(*LEARNED)):
        size = learned.shape_for(shape)
        arrays[learned.name] = learned.init + 0.1 * rng.standard_normal(size)
        if i == 0:      # dy after the first: the order of every earlier report, whose
            arrays["dy"] = rng.standard_normal(shape)      # numbers docs/precision.md quotes
    if "dy" not in arrays:                                  # a norm that learns nothing
        arrays["dy"] = rng.standard_normal(shape)
    low = dtypes.as_dtype(dtype)
    with np.errstate(all="ignore"):
        rounded = {n: a.astype(low).astype(np.float32).astype(np.float64)
                   for n, a in arrays.items()}
        # the truth: PyTorch's formula (the fused node: eps inside, two-pass variance); an
        # eps that defaults to a machine epsilon (RMSNorm's) is the low dtype's in both
        same_eps = {"eps": machine_eps(low)} if spec.has_eps and spec.eps is None else {}
        truth = _run(_library(spec, **same_eps), rounded, np.float64)
        got = _run(fn, arrays, low)              # overflow and 0/0 are what we measure
    return Cell(spec.name, impl, str(dtype), family,
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
        return list(dict.fromkeys((c.norm, c.impl) for c in self.cells))

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
        tensors = list(dict.fromkeys(name for c in self.cells for name in c.errors))  # y, dx, ...
        out += ["", "## Per tensor (max / median error, inf+NaN count)", "",
                "| norm | impl | dtype | family | " + " | ".join(tensors) + " |",
                "|---|---|---|---|" + "---|" * len(tensors)]
        for c in self.cells:
            parts = [_fmt_tensor(c.errors.get(name)) for name in tensors]
            out.append(f"| {c.norm} | {c.impl} | {c.dtype} | {c.family} | "
                       + " | ".join(parts) + " |")
        out += [""] + [f"Note: {note}" for note in self.skipped]
        return "\n".join(out) + "\n"


def _fmt(cell):
    return f"inf ({cell.nonfinite})" if cell.nonfinite else f"{cell.worst:.1e}"


def _fmt_tensor(entry):
    if entry is None:
        return "–"
    worst, median, nonfinite = entry
    if nonfinite:
        return f"inf / {median:.1e} ({nonfinite})"
    return f"{worst:.1e} / {median:.1e}"


def _subset(name, given, allowed):
    bad = [value for value in given if value not in allowed]
    if bad:
        raise ValueError(f"precision_report: {name} must be among {allowed}, got {bad}")
    return tuple(given)


def precision_report(quick=False, shape=None, dtypes_=None, families=None, seed=0):
    """Measure every norm/impl/dtype/family (docs/precision.md).

    Args:
        quick: the small shape (8, 64) instead of (64, 512).
        shape: (rows, cols) of the inputs, (N, C) for BatchNorm.
        dtypes_: a subset of ``DTYPES``; bfloat16 is skipped, with a note, without ml_dtypes.
        families: a subset of ``FAMILIES``.

    Returns:
        ``PrecisionReport``: ``.table()``, ``.markdown()``, ``.cell()``.

    Example:
        >>> report = mg.precision_report(quick=True)
        >>> report.cell("layer_norm", "composite", "float16", "scale 300").nonfinite > 0
        True
    """
    shape = tuple(shape or (QUICK_SHAPE if quick else FULL_SHAPE))
    if len(shape) != 2 or min(shape) < 2:
        raise ValueError(f"precision_report: shape must be (rows, cols) with both >= 2, "
                         f"got {shape}")
    chosen = _subset("dtypes", dtypes_ or DTYPES, DTYPES)
    families = _subset("families", families or FAMILIES, FAMILIES)
    skipped = []
    if "bfloat16" in chosen and not dtypes.has_bfloat16():
        chosen = tuple(d for d in chosen if d != "bfloat16")
        skipped.append("bfloat16 skipped: ml_dtypes is not installed (pip install ml_dtypes)")
    cells = [measure(norm, impl, dtype, family, shape, seed)
             for norm, impl in implementations()
             for dtype in chosen for family in families]
    return PrecisionReport(cells, shape, chosen, families, skipped)

"""``compare``: one norm (or softmax, cross-entropy, attention: ``norms.SPECS``) as a
composite graph and as a fused node, side by side, on the same inputs and upstream
gradients: graph size, saved bytes, times and differences."""

import dataclasses
import statistics
import time

import numpy as np

from ..autograd import grad, no_grad
from ..norms import SPECS, lookup
from ..tensor import tensor
from .gradcheck import numerical_grad
from .stats import graph_stats

__all__ = ["Comparison", "ImplResult", "compare", "compare_arrays", "make_leaves",
           "summary_table"]


@dataclasses.dataclass
class ImplResult:
    """One implementation's side: graph size, saved bytes, median times in seconds."""

    nodes: int
    by_op: dict
    saved_bytes: int
    forward_s: float
    backward_s: float
    outputs: dict            # name -> array
    grads: dict              # name -> array


@dataclasses.dataclass(repr=False)
class Comparison:
    """What ``compare`` returns: both sides and how far apart they are. It prints as
    ``table()``; the arrays are ``fused.outputs``, ``fused.grads`` (and ``composite.``)."""

    norm: str
    shape: tuple
    dtype: str
    fused: ImplResult
    composite: ImplResult
    max_abs_diff: dict       # "output", "grad x", ... -> max |fused - composite|
    # "grad x", ... -> (composite, fused) max |analytic - finite differences|
    finite_difference: dict = dataclasses.field(default_factory=dict)
    # "output", "grad x", ... -> a sentence where the two differ in NaN/inf
    nonfinite: dict = dataclasses.field(default_factory=dict)

    def __repr__(self):
        return self.table()

    def table(self):
        """The comparison as a text table."""
        f, c = self.fused, self.composite
        rows = [("", "composite", "fused"),
                ("op nodes", str(c.nodes), str(f.nodes)),
                ("bytes saved for backward", f"{c.saved_bytes:,}", f"{f.saved_bytes:,}"),
                ("forward time (median)", _ms(c.forward_s), _ms(f.forward_s)),
                ("backward time (median)", _ms(c.backward_s), _ms(f.backward_s))]
        width = max(len(r[0]) for r in rows) + 2
        lines = [f"{self.norm}  shape={self.shape}  dtype={self.dtype}"]
        lines += [f"  {a:<{width}}{b:>14}{c_:>14}" for a, b, c_ in rows]
        lines.append("  max |fused - composite|:")
        lines += [f"    {name:<{width - 2}}{diff:>14.3e}" for name, diff in
                  self.max_abs_diff.items()]
        if self.finite_difference:
            lines.append(f"  max |analytic - finite differences|:{'composite':>12}{'fused':>14}")
            lines += [f"    {name:<{width - 2}}{c_:>14.3e}{f_:>14.3e}" for name, (c_, f_) in
                      self.finite_difference.items()]
        lines += [f"  WARNING {name}: {note}" for name, note in self.nonfinite.items()]
        return "\n".join(lines)


def _ms(seconds):
    return f"{seconds * 1e3:.3f} ms"


def compare(norm, shape=(2, 4, 8), dtype="float64", affine=True, seed=0, repeat=5,
            finite_differences=False, scale=1.0):
    """Composite vs fused for ``norm`` on random inputs of ``shape``.

    Args:
        norm: a name in ``norms.SPECS`` or an alias; batch_norm runs in training mode.
        shape: input shape; LayerNorm/RMSNorm/softmax normalize the last dim, BatchNorm
            dim 1; cross_entropy's logits (N, C); attention's query, key and value.
        repeat: timing repetitions (the median is kept).
        finite_differences: also check both sides' gradients against float64 central
            differences (two forward calls per input element: keep the shape small).
        scale: of the standard normal x (and residual); a large one shows overflow.

    Returns:
        a ``Comparison``; ``print(result.table())`` shows it.

    Example:
        >>> r = mg.compare("layer_norm", (2, 4, 8))
        >>> r.fused.nodes, r.composite.nodes
        (1, 9)
    """
    norm = lookup(norm, "compare: norm", SPECS)
    if repeat < 1:
        raise ValueError(f"compare: repeat must be at least 1, got {repeat}")
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"compare: scale must be a finite number > 0, got {scale!r}")
    arrays = norm.make_inputs(shape, dtype, affine, seed, scale)
    rng = np.random.default_rng(seed + 1)
    with no_grad():
        shapes = [o.shape for o in norm.run(make_leaves(norm, arrays), "fused",
                                            norm.running_stats(arrays))]
    upstream = [rng.standard_normal(s).astype(dtype) for s in shapes]
    # Overflow and NaN are reported below in words (``nonfinite``), not as NumPy warnings.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sides = {impl: _run_side(norm, impl, arrays, upstream, repeat)
                 for impl in ("composite", "fused")}
    diffs, notes = {}, {}
    for kind in ("outputs", "grads"):
        for name, fused_value in getattr(sides["fused"], kind).items():
            composite_value = getattr(sides["composite"], kind)[name]
            diffs[name], note = compare_arrays(composite_value, fused_value)
            if note:
                notes[name] = note
    result = Comparison(norm.name, tuple(shape), str(np.dtype(dtype)), sides["fused"],
                        sides["composite"], diffs, nonfinite=notes)
    if finite_differences:
        by_impl = {impl: _finite_difference_diffs(norm, impl, arrays, upstream, side.grads)
                   for impl, side in sides.items()}
        result.finite_difference = {name: (by_impl["composite"][name], by_impl["fused"][name])
                                    for name in by_impl["fused"]}
    return result


def compare_arrays(composite, fused):
    """(max |fused - composite|, note) for two arrays of one shape.

    NaN/inf at different places make the difference inf; at the same places it is over
    the finite rest. ``note`` says which in words, or is "" when all is finite."""
    c = np.asarray(composite, dtype=np.float64)
    f = np.asarray(fused, dtype=np.float64)
    c_bad, f_bad = ~np.isfinite(c), ~np.isfinite(f)
    finite = ~(c_bad | f_bad)
    diff = float(np.max(np.abs(f[finite] - c[finite]), initial=0.0))
    if not (c_bad.any() or f_bad.any()):
        return diff, ""
    if np.array_equal(c_bad, f_bad):
        rest = ("the difference shown is over the others" if finite.any()
                else "no finite value is left to compare")
        return diff, (f"both implementations give NaN or inf at the same {int(c_bad.sum())} "
                      f"of {c.size} places; {rest}")

    def side(name, bad, other):
        if not bad.any():
            return f"the {name} result is finite everywhere"
        only = bad & ~other
        where = tuple(int(k) for k in np.argwhere(only if only.any() else bad)[0])
        return (f"the {name} result has {int(bad.sum())} NaN/inf values of {bad.size} "
                f"(first at index {where})")

    return float("inf"), (
        f"{side('composite', c_bad, f_bad)}, while {side('fused', f_bad, c_bad)}: the two "
        "implementations do not compute the same numbers here (in float16 an intermediate "
        "value of the composite graph, such as (x - mean)² for |x - mean| >= 256 or the "
        "rstd³ of a row with a small spread, can overflow where the fused node, which "
        "computes in float32, does not)")


def _finite_difference_diffs(norm, impl, arrays, upstream, analytic):
    # Σ upstream·outputs, whose gradient backward computed, in float64 whatever the dtype
    tensors = {name: tensor(a if name in norm.constants else a.astype(np.float64))
               for name, a in arrays.items()}
    upstream = [u.astype(np.float64) for u in upstream]

    def objective():
        with no_grad():
            outputs = norm.run(tensors, impl)   # batch_norm: batch statistics only
        return sum(float((o._array * u).sum()) for o, u in zip(outputs, upstream))

    return {f"grad {name}": float(np.max(np.abs(
                analytic[f"grad {name}"].astype(np.float64) - numerical_grad(objective, t._array))))
            for name, t in tensors.items() if name not in norm.constants}


def _run_side(norm, impl, arrays, upstream, repeat):
    forward_times, backward_times = [], []
    for _ in range(repeat):
        tensors = make_leaves(norm, arrays)
        running = norm.running_stats(arrays)
        start = time.perf_counter()
        outputs = norm.run(tensors, impl, running)
        forward_times.append(time.perf_counter() - start)
        stats = graph_stats(*outputs)
        start = time.perf_counter()
        differentiated = [t for t in tensors.values() if t.requires_grad]
        grads = grad(outputs, differentiated, upstream)
        backward_times.append(time.perf_counter() - start)
    values = {name: o._array for name, o in zip(norm.outputs, outputs)}
    values.update({name: a for name, a in (running or {}).items()})
    return ImplResult(stats.nodes, stats.by_op, stats.saved_bytes,
                      statistics.median(forward_times), statistics.median(backward_times),
                      values, {f"grad {name}": g._array for name, g in
                               zip([n for n, t in tensors.items() if t.requires_grad], grads)})


def make_leaves(norm, arrays):
    """{name: a fresh Tensor of a copy of the array}, requiring grad but for the spec's
    ``constants``."""
    return {name: tensor(a, requires_grad=name not in norm.constants)
            for name, a in arrays.items()}


SUMMARY_HEADER = ("norm", "quantity", "nodes c/f", "saved bytes c/f", "|fused - comp|",
                  "|comp - FD|", "|fused - FD|", "fwd+bwd ms c/f", "speed-up")


def summary_table(results, markdown=False):
    """One table (Markdown, or aligned text) for several ``Comparison`` results: a row per
    output and gradient; each norm's first row also has its nodes, bytes and times."""
    rows = []
    for r in results:
        c, f = r.composite, r.fused
        c_time, f_time = c.forward_s + c.backward_s, f.forward_s + f.backward_s
        first = [r.norm, "", f"{c.nodes} / {f.nodes}",
                 f"{c.saved_bytes:,} / {f.saved_bytes:,}", "", "", "",
                 f"{c_time * 1e3:.3f} / {f_time * 1e3:.3f}", f"{c_time / f_time:.1f}x"]
        for i, (name, diff) in enumerate(r.max_abs_diff.items()):
            fd = r.finite_difference.get(name)
            row = first if i == 0 else [""] * len(SUMMARY_HEADER)
            row[1], row[4] = name, f"{diff:.1e}"
            row[5], row[6] = (f"{fd[0]:.1e}", f"{fd[1]:.1e}") if fd else ("-", "-")
            rows.append(row)
    return _format_table(SUMMARY_HEADER, rows, markdown)


def _format_table(header, rows, markdown):
    if markdown:
        def line(cells):
            return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
        return "\n".join([line(header), "|" + "---|" * len(header)] + [line(r) for r in rows])
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" if i < 2 else f"{{:>{w}}}" for i, w in enumerate(widths))
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    return "\n".join(lines + [fmt.format(*row).rstrip() for row in rows])

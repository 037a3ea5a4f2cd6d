"""The benchmark harness that ``bench``, ``bench --device cuda`` and ``bench --train``
share. It is device-agnostic; a device contributes only how to wait for its work and how to
read a clock:

  * ``time_call(fn, repeat, warmup, synchronize=None, timer=None)`` runs ``fn`` and keeps
    every sample (seconds); ``Timing.median`` is what tables show. The default timer is the
    wall clock around one call, with ``synchronize()`` before and after it when given (a
    GPU stream); pass ``timer(fn) -> seconds`` to measure otherwise (CUDA events).
    ``time_interleaved({name: fn}, ...)`` times several callables in turns, so that load
    from other processes falls on all of them alike.
  * ``copy_bandwidth(xp, ...)`` is the machine's own yardstick: GB/s of ``xp.copyto``
    between two large arrays (bytes read + bytes written), measured in the same run.
  * ``BenchRow`` is one measurement (norm, shape, dtype, impl, phase, timing, the minimal
    bytes that phase must move, bytes saved for backward); its GB/s, % of copy bandwidth
    and speed-ups over the composite graph and over PyTorch derive from it.
    ``format_table(rows)`` prints them.
  * the impls beside "composite" and "fused" (the default CPU kernels): "fused-numpy",
    "fused-numba" and "fused-reference" are the fused graph with the blocked NumPy, the
    numba or the reference CPU kernels selected (``kernel_choice``, ``graph_impl``,
    ``fused_impls``).

Minimal bytes: a norm must at least read its full-size inputs and write its full-size
outputs once. LayerNorm, RMSNorm, BatchNorm: forward reads x and writes y (2·M·D·itemsize),
backward reads x and dy and writes dx (3·M·D·itemsize). The residual forms read x and
residual and write y and s (4·M·D), and backward reads dy, ds and s and writes one dsum
(4·M·D) that is the gradient of both x and residual. Parameters and per-row statistics are
negligible and not counted.
"""

import contextlib
import dataclasses
import os
import platform
import statistics
import sys
import time

import numpy as np

from .. import kernels
from ..norms import lookup

__all__ = ["COLUMNS", "KERNEL_IMPLS", "NUMBA_IMPL", "STEADY_FLAGS", "UNSTEADY", "BenchRow",
           "Timing", "copy_bandwidth", "cpu_timer", "fill_ratios", "format_table",
           "fused_impls", "graph_impl", "kernel_choice", "load_warning", "machine_description",
           "minimal_bytes", "progress_printer", "steadiness_note", "time_call",
           "time_interleaved", "torch_available", "unsteady", "wall_timer"]

# The fused norms on NumPy arrays run the default CPU kernels ("fused": numba's when numba
# is installed, else kernels.blocked); the other impls here are the same graph with other
# CPU kernels selected (kernels.set_cpu_kernels), timed beside it.
NUMBA_IMPL = "fused-numba"
KERNEL_IMPLS = {"numpy": "fused-numpy", "numba": NUMBA_IMPL, "reference": "fused-reference"}


# ----- timing -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Timing:
    """Every sample of one timed call, in seconds."""

    samples: tuple

    @property
    def median(self):
        return statistics.median(self.samples)

    @property
    def min(self):
        return min(self.samples)

    @property
    def spread(self):
        """Interquartile range over median: 0 for steady samples; above ``UNSTEADY`` the
        median is not worth a ratio."""
        if len(self.samples) < 2:
            return 0.0
        low, _, high = statistics.quantiles(self.samples, n=4, method="inclusive")
        return (high - low) / self.median


# A cell whose samples spread more than this (IQR / median), or a machine loaded above its
# core count, gives ratios that another run would not repeat.
UNSTEADY = 0.2
STEADY_FLAGS = "--clock cpu, --torch-threads 1 and a larger --repeat"


def load_warning(load=None, cores=None):
    """A line when the 1-minute load average is above the core count, else None."""
    load = os.getloadavg()[0] if load is None else load
    cores = (os.cpu_count() or 1) if cores is None else cores
    if load <= cores:
        return None
    return (f"WARNING: load average {load:.1f} on {cores} cores: other jobs share this "
            f"machine and the times move with them; {STEADY_FLAGS} give steadier ratios")


def wall_timer(synchronize=None):
    """A timer that reads the wall clock around one call of ``fn``; ``synchronize()``
    (e.g. waiting for a GPU stream) runs before the clock starts and before it stops, so
    queued asynchronous work is neither charged to the call nor left out of it."""
    def timer(fn):
        if synchronize is not None:
            synchronize()
        start = time.perf_counter()
        fn()
        if synchronize is not None:
            synchronize()
        return time.perf_counter() - start
    return timer


def cpu_timer(fn):
    """A timer that reads this process's CPU time (user + system, every thread) around one
    call of ``fn``: on a machine shared with other jobs, time spent waiting for a core is
    not counted, so single-threaded code reads the same under load. Not for GPU work."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def time_call(fn, repeat=5, warmup=1, synchronize=None, timer=None):
    """Run ``fn()`` ``warmup`` times untimed (caches, allocator, lazy compilation), then
    ``repeat`` times timed.

    Args:
        fn: a callable taking no arguments.
        repeat: timed calls (at least 1); the median is robust to a noisy neighbour.
        warmup: untimed calls first.
        synchronize: called before and after each timed call by the default timer.
        timer: ``timer(fn) -> seconds`` for one call; overrides the default wall timer.

    Returns:
        a ``Timing`` with all ``repeat`` samples.

    Example:
        >>> time_call(lambda: np.ones(10**6).sum(), repeat=5).median   # seconds
    """
    if repeat < 1:
        raise ValueError(f"time_call: repeat must be at least 1, got {repeat}")
    timer = timer or wall_timer(synchronize)
    for _ in range(warmup):
        fn()
    return Timing(tuple(timer(fn) for _ in range(repeat)))


def time_interleaved(fns, repeat=5, warmup=1, synchronize=None, timer=None):
    """``time_call`` for several callables in turns (a, b, c, a, b, c, ...), so a burst of
    load from other processes falls on all of them alike instead of on whichever ran
    then: on a shared machine their ratios stay meaningful.

    Args:
        fns: {name: callable}.
        repeat, warmup, synchronize, timer: as in ``time_call``.

    Returns:
        {name: Timing}.
    """
    if repeat < 1:
        raise ValueError(f"time_interleaved: repeat must be at least 1, got {repeat}")
    timer = timer or wall_timer(synchronize)
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            samples[name].append(timer(fn))
    return {name: Timing(tuple(s)) for name, s in samples.items()}


def copy_bandwidth(xp=np, nbytes=64 * 2**20, repeat=5, warmup=1, synchronize=None, timer=None):
    """GB/s of ``xp.copyto(dst, src)`` between two arrays of ``nbytes`` each, counting the
    bytes read and the bytes written (2·nbytes per copy), as GB/s of the norms counts them.
    Large enough not to fit in a CPU cache, so it measures memory."""
    src = xp.ones(nbytes // 4, dtype=np.float32)
    dst = xp.empty_like(src)
    timing = time_call(lambda: xp.copyto(dst, src), repeat, warmup, synchronize, timer)
    return 2 * src.nbytes / timing.median / 1e9


def minimal_bytes(norm, shape, dtype, phase):
    """The bytes ``phase`` of ``norm`` must move at least: full-size arrays read or written
    once (see the module docstring); forward+backward is the sum of both."""
    norm = lookup(norm, "minimal_bytes: norm")
    forward, backward = (4, 4) if norm.residual else (2, 3)
    arrays = {"forward": forward, "backward": backward, "forward+backward": forward + backward}
    if phase not in arrays:
        raise ValueError(f"minimal_bytes: phase must be one of {tuple(arrays)}, got {phase!r}")
    return arrays[phase] * int(np.prod(shape)) * np.dtype(dtype).itemsize


# ----- results ------------------------------------------------------------------------------
@dataclasses.dataclass
class BenchRow:
    """One measurement. ``composite_s`` and ``torch_s`` are the medians of the composite
    graph and of PyTorch for the same norm, shape, dtype and phase (None where not run)."""

    device: str
    norm: str
    shape: tuple
    dtype: str
    impl: str
    phase: str
    timing: Timing
    bytes_moved: int                   # minimal bytes of this phase
    copy_gbps: float | None = None     # the device's copy bandwidth, same run
    saved_bytes: int | None = None     # bytes kept for backward (None: not measured)
    composite_s: float | None = None
    torch_s: float | None = None
    composite_spread: float = 0.0      # the compared rows' Timing.spread
    torch_spread: float = 0.0

    @property
    def median_ms(self):
        return self.timing.median * 1e3

    @property
    def gbps(self):
        return self.bytes_moved / self.timing.median / 1e9

    @property
    def pct_copy(self):
        return None if not self.copy_gbps else 100 * self.gbps / self.copy_gbps

    @property
    def vs_composite(self):
        """Speed-up over the composite graph: composite time / this time (> 1 is faster)."""
        return None if self.composite_s is None else self.composite_s / self.timing.median

    @property
    def vs_torch(self):
        """Speed-up over PyTorch: torch time / this time (< 1 is slower than PyTorch)."""
        return None if self.torch_s is None else self.torch_s / self.timing.median

    def unsteady_vs(self, other):
        """Whether the ratio to ``other`` ("composite" or "torch") rests on samples that
        spread too much (``unsteady``); a row's ratio to itself is always 1."""
        spread = {"composite": self.composite_spread, "torch": self.torch_spread}[other]
        return self.impl != other and unsteady(self.timing.spread, spread)


def fill_ratios(rows):
    """Set ``composite_s`` and ``torch_s`` of every row from the rows it is compared with."""
    medians = {(r.device, r.norm, r.shape, r.dtype, r.phase, r.impl): r.timing.median
               for r in rows}
    spreads = {(r.device, r.norm, r.shape, r.dtype, r.phase, r.impl): r.timing.spread
               for r in rows}
    for r in rows:
        key = (r.device, r.norm, r.shape, r.dtype, r.phase)
        r.composite_s = medians.get(key + ("composite",))
        r.torch_s = medians.get(key + ("torch",))
        r.composite_spread = spreads.get(key + ("composite",), 0.0)
        r.torch_spread = spreads.get(key + ("torch",), 0.0)
    return rows


def unsteady(spread, *others):
    """Whether a ratio of timings with these spreads is not worth printing as it is."""
    return max((spread, *others)) > UNSTEADY


COLUMNS = ("norm", "shape", "dtype", "impl", "phase", "median ms", "GB/s", "% copy",
           "saved MB", "x composite", "x torch")


def format_table(rows):
    """The rows as an aligned text table, one line per row. ``x composite`` and ``x torch``
    are speed-ups (the other's median / this median); "-" where a value is missing, "?"
    after a ratio whose samples spread too much (``unsteady``) to stand behind."""
    def number(value, digits, mark=False):
        return "-" if value is None else f"{value:.{digits}f}" + ("?" if mark else "")

    cells = [COLUMNS]
    for r in rows:
        saved = None if r.saved_bytes is None else r.saved_bytes / 2**20
        cells.append((r.norm, "x".join(map(str, r.shape)), r.dtype, r.impl, r.phase,
                      number(r.median_ms, 3), number(r.gbps, 2), number(r.pct_copy, 1),
                      number(saved, 1),
                      number(r.vs_composite, 2, r.unsteady_vs("composite")),
                      number(r.vs_torch, 2, r.unsteady_vs("torch"))))
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    text_columns = 5                      # left-aligned names, right-aligned numbers
    lines = ["  ".join(c.ljust(w) if i < text_columns else c.rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths))) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def steadiness_note(rows):
    """A line on the ratios marked "?" in ``format_table(rows)``, or None when none is."""
    marked = sum(r.composite_s is not None and r.unsteady_vs("composite")
                 or r.torch_s is not None and r.unsteady_vs("torch") for r in rows)
    if not marked:
        return None
    return (f"note: {marked} of {len(rows)} rows have a ratio marked ? (its samples spread "
            f"more than {UNSTEADY:.0%} of the median, IQR/median): do not quote it; "
            f"{STEADY_FLAGS} give steadier ratios")


# ----- impls, the machine, progress ---------------------------------------------------------
def kernel_choice(impl):
    """A context in which ``impl`` runs: the NumPy (numba, reference) CPU kernels for
    "fused-numpy" ("fused-numba", "fused-reference"), the current choice otherwise."""
    names = {value: name for name, value in KERNEL_IMPLS.items()}
    return kernels.cpu_kernels(names[impl]) if impl in names else contextlib.nullcontext()


def graph_impl(impl):
    """The ``impl=`` of the graph: "fused-numpy", "fused-numba" and "fused-reference" are the
    fused graph."""
    return "fused" if impl in KERNEL_IMPLS.values() else impl


def fused_impls(args):
    """The fused impls to time: "fused" (the default CPU kernels), then one for each other
    kernels ``--cpu-kernels`` names ("fused-numpy", "fused-numba", "fused-reference"; numba
    must import, else a ValueError naming the option and the extra to install)."""
    if "numba" in args.cpu_kernels:
        try:
            with kernels.cpu_kernels("numba"):
                pass
        except RuntimeError as error:          # numba missing: the message names the extra
            raise ValueError(f"--cpu-kernels numba: {error}") from None
    others = dict.fromkeys(name for name in args.cpu_kernels          # each once
                           if name != kernels.get_cpu_kernels())
    return ("fused",) + tuple(KERNEL_IMPLS[name] for name in others)


def torch_available():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def machine_description(device="cpu"):
    """A few lines naming what the numbers were measured on."""
    lines = [f"python {platform.python_version()}, numpy {np.__version__}"]
    if torch_available():
        import torch
        lines[0] += f", torch {torch.__version__} ({torch.get_num_threads()} threads)"
    if device == "cpu":
        lines.append(f"cpu: {_cpu_model()}")
        name = kernels.get_cpu_kernels()
        if name == "numba":
            import numba
            name += f" {numba.__version__}"
        lines.append(f"fused: the default CPU kernels, {name}")
    return lines


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as info:
            models = [line.split(":", 1)[1].strip() for line in info
                      if line.startswith("model name")]
        return f"{models[0]} x {len(models)}" if models else platform.processor()
    except OSError:
        return platform.processor() or "unknown"


def progress_printer(args):
    """One stderr line per case, or None with ``--quiet``."""
    if args.quiet:
        return None
    return lambda text: print(f"  running {text}", file=sys.stderr, flush=True)

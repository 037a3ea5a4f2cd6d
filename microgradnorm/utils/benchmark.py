"""``torch.utils.benchmark``: timing Python statements (``Timer``), the statistics of the
times (``Measurement``) and tables of many of them (``Compare``), with torch's API,
statistics and text.

``Timer(stmt, setup, globals=...)`` runs ``stmt`` through Python's ``timeit`` with
``time.perf_counter``; ``timeit(number)`` times one block of ``number`` runs (after a
warm-up of ``number // 100``), ``blocked_autorange`` picks a block size whose timer
overhead is negligible and times blocks for at least ``min_run_time`` seconds,
``adaptive_autorange`` times blocks until the interquartile range is within
``threshold`` of the median. ``num_threads`` is set with ``mg.set_num_threads`` (NumPy's
BLAS threads) for the measurement and restored after. torch's C++ statements
(``language="c++"``) and Callgrind counts have nothing to run here: refused.

Example:
    >>> from microgradnorm.utils import benchmark
    >>> t = benchmark.Timer("x @ x", globals={"x": mg.randn(64, 64)}, label="matmul")
    >>> m = t.blocked_autorange(min_run_time=0.2); m.median   # seconds per run
"""

import collections
import dataclasses
import math
import textwrap
import time
import timeit as _timeit

import numpy as np

from .. import torch_misc

__all__ = ["Compare", "Measurement", "TaskSpec", "Timer", "ordered_unique", "select_unit",
           "trim_sigfig", "unit_to_english"]

_MAX_FIGURES = 4
_MIN_CONFIDENCE = 25e-9          # a confidence interval below 25 ns is not believed
_IQR_WARN = 0.1
_IQR_GROSS_WARN = 0.25
_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def _log10(x):
    # torch's statistics here run in float32 (tensors of Python floats): so do these, the
    # log rounded once from float64 (NumPy's float32 log10 of float32(1e-6) is an ulp below
    # -6, so 1e-6 s read as "ns"; torch's float32 log10 gives -6 on an Intel AVX-512 CPU)
    x = np.float32(x)
    return float(np.float32(math.log10(x))) if x > 0 else float(np.log10(x))


def select_unit(t):
    """The unit (``"ns"``, ``"us"``, ``"ms"`` or ``"s"``) and its scale in seconds that
    show the time ``t`` (seconds) with one to three leading digits.

    Example:
        >>> benchmark.select_unit(2.5e-5)
        ('us', 1e-06)
    """
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10(t) // 3), "s")
    return unit, _UNITS[unit]


def unit_to_english(u):
    """The word of a unit: ``"us"`` -> ``"microsecond"``."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """``x`` rounded to ``n`` significant figures (float32 arithmetic, as torch's).

    Example:
        >>> benchmark.trim_sigfig(123.456, 2)
        120.0
    """
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(np.ceil(np.float32(_log10(abs(x)))))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))


def ordered_unique(elements):
    """The distinct elements in order of first appearance."""
    return list(dict.fromkeys(elements))


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """What a Timer measures: the statement, its setup and the labels a table sorts by."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """The label (or the statement), with the sub-label after a colon."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        extra = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{extra}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        """The setup as a Measurement's text shows it (nothing for ``"pass"``)."""
        if self.setup in ("pass", ""):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        """The title, description and setup, one a line."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_SPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(repr=False)
class Measurement:
    """The times of one statement: ``raw_times`` (seconds per block of ``number_per_run``
    runs), ``times`` (per run), their ``median``, ``mean``, ``iqr`` (the 75th minus the
    25th percentile, linear interpolation), ``significant_figures`` (how many digits of the
    median the spread supports, 1 to 4) and warnings when the spread is large. The task
    spec's fields (``label``, ``stmt``, ``num_threads``, ...) read through.

    Example:
        >>> m = benchmark.Timer("x + 1", globals={"x": 1}).timeit(1000)
        >>> m.mean, m.median, m.times
    """

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __post_init__(self):
        self._sorted = ()
        self._warnings = ()

    def __getattr__(self, name):
        if name in _SPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        """Seconds per run of each block."""
        return [t / self.number_per_run for t in self.raw_times]

    def _stats(self):
        if self.raw_times and not self._sorted:
            self._sorted = tuple(sorted(self.times))
            arr = np.array(self._sorted, dtype=np.float64)
            self._median, self._mean = float(np.quantile(arr, 0.5)), float(arr.mean())
            self._p25, self._p75 = float(np.quantile(arr, 0.25)), float(np.quantile(arr, 0.75))
            if not self.meets_confidence(_IQR_GROSS_WARN):
                self._warn("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN):
                self._warn("This could indicate system fluctuation.")

    def _warn(self, why):
        spread = self.iqr / self.median * 100
        self._warnings += (f"  WARNING: Interquartile range is {spread:.1f}% of the median "
                           f"measurement.\n           {why}",)

    @property
    def median(self):
        """The median time per run (seconds)."""
        self._stats()
        return self._median

    @property
    def mean(self):
        """The mean time per run (seconds)."""
        self._stats()
        return self._mean

    @property
    def iqr(self):
        """The interquartile range of the times per run (seconds)."""
        self._stats()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """The digits of the median a 90 % confidence interval of the middle half of the
        times supports, between 1 and 4."""
        self._stats()
        n = len(self._sorted)
        middle = np.array(self._sorted[n // 4:int(np.ceil(np.float32(3 * n / 4)))],
                          dtype=np.float32)
        spread = float(middle.std()) / float(np.sqrt(np.float32(len(middle))))
        interval = max(1.645 * spread, _MIN_CONFIDENCE)
        figures = int(np.floor(np.float32(_log10(self._median / interval))))
        return min(max(figures, 1), _MAX_FIGURES)

    @property
    def has_warnings(self):
        """Whether the spread of the times drew a warning."""
        self._stats()
        return bool(self._warnings)

    def meets_confidence(self, threshold=_IQR_WARN):
        """Whether the interquartile range is below ``threshold`` times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        """The task spec's ``env`` (None when unset, what torch's reads give)."""
        return self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._stats()
        n = len(self._sorted)
        unit, scale = select_unit(self._median)
        lines = [f"<{type(self).__module__}.{type(self).__qualname__} object at "
                 f"{hex(id(self))}>", self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} "
                         f"to {self._p75 / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """One Measurement per task spec, the times of its replicates joined (per run)."""
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


class Timer:
    """Time a Python statement (``torch.utils.benchmark.Timer``).

    Args:
        stmt: the statement timed (a string, or a callable).
        setup: run once before timing.
        global_setup: accepted for torch's C++ timers; unused for Python.
        timer: the clock (``time.perf_counter``).
        globals: the names ``stmt`` and ``setup`` see (``torch`` and ``mg`` are this
            package unless given).
        label, sub_label, description, env: the labels of the Measurement and of
            ``Compare``'s table (label: its title; sub_label: the row; description: the
            column).
        num_threads: NumPy's BLAS threads during the measurement.

    Example:
        >>> benchmark.Timer("a.sum()", setup="a = mg.ones(100)").timeit(100).mean
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=time.perf_counter,
                 globals=None, label=None, sub_label=None, description=None, env=None,
                 num_threads=1, language="python"):
        if language not in ("python", "py"):
            raise NotImplementedError(f"Timer: language={language!r} is not supported here; "
                                      "only Python statements can be timed")
        if not isinstance(stmt, str) and not callable(stmt):
            raise ValueError(f"Timer: stmt must be a string or a callable, got "
                             f"{type(stmt).__name__}")
        import microgradnorm
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", microgradnorm)
        self._globals.setdefault("mg", microgradnorm)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer,
                                    globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt if isinstance(stmt, str) else repr(stmt),
                                   setup=setup if isinstance(setup, str) else repr(setup),
                                   global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env,
                                   num_threads=num_threads)

    def _time(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def _threads(self):
        return _Threads(self._task_spec.num_threads)

    def timeit(self, number=1000000):
        """One block of ``number`` runs, after ``max(number // 100, 2)`` warm-up runs."""
        with self._threads():
            self._time(max(number // 100, 2))
            return Measurement(number, [self._time(number)], self._task_spec)

    def _block_size(self, min_run_time):
        overhead = sorted(self._time(0) for _ in range(5))[2]
        number = 1
        while True:
            took = self._time(number)
            if overhead / took <= 1e-4 and took >= min_run_time / 1000:
                return number
            if took > min_run_time or number * 10 > 2 ** 31 - 1:
                return number
            number *= 10

    def _loop(self, number, done, min_run_time, max_run_time, callback):
        times, total = [], 0.0
        while True:
            took = self._time(number)
            times.append(took)
            total += took
            if callback:
                callback(number, took)
            stop = done(times)
            if (total >= min_run_time and stop) or (max_run_time and total > max_run_time):
                return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a size whose timer overhead is below 1e-4 of their time, timed until
        ``min_run_time`` seconds are spent; ``callback(number, seconds)`` after each."""
        with self._threads():
            number = self._block_size(min_run_time)
            times = self._loop(number, lambda times: True, min_run_time, None, callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks timed until there are more than 3 and their interquartile range is
        below ``threshold`` of the median (at least ``min_run_time``, at most
        ``max_run_time`` seconds)."""
        def done(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec) \
                .meets_confidence(threshold=threshold)

        with self._threads():
            number = self._block_size(0.05)
            times = self._loop(number, done, min_run_time, max_run_time, callback)
        return Measurement(number, times, self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("Timer.collect_callgrind: Callgrind counts need torch's "
                                  "C++ toolchain and valgrind; not available here")


class _Threads:
    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.prior = torch_misc.get_num_threads()
        if self.prior != self.n:
            torch_misc.set_num_threads(self.n)

    def __exit__(self, *exc):
        if self.prior != self.n:
            torch_misc.set_num_threads(self.prior)


_COLORS = {"best": "\033[92m\033[1m", "good": "\033[34m\033[1m", "bad": "\033[2m\033[91m",
           "very_bad": "\033[31m\033[1m"}


class Compare:
    """A table of Measurements: one per label, rows by thread count and ``sub_label``
    (or statement), columns by ``description``, the medians in one unit.

    Example:
        >>> results = [benchmark.Timer("x * 2", globals={"x": x}, label="scale",
        ...            sub_label=str(n), description="mul").blocked_autorange() for ...]
        >>> benchmark.Compare(results).print()
    """

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim = False
        self._colorize = None
        self._highlight = False

    def extend_results(self, results):
        """Add Measurements (a ValueError for anything else)."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} "
                                 "instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """Show each time to the digits its spread supports."""
        self._trim = True

    def colorize(self, rowwise=False):
        """Colour each time against the best of its column (or row)."""
        self._colorize = "rowwise" if rowwise else "columnwise"

    def highlight_warnings(self):
        """Mark the times whose spread drew a warning with ``(! XX%)``."""
        self._highlight = True

    def print(self):
        print(str(self))

    def __str__(self):
        groups = collections.defaultdict(list)
        for m in Measurement.merge(self._results):
            groups[m.label].append(m)
        return "\n".join(_render(group, self._colorize, self._trim, self._highlight)
                         for group in groups.values())


def _leading_digits(value):
    return int(np.ceil(np.float32(_log10(value))))


def _column_format(results, scale, trim, highlight):
    # one format per column: room for the largest value's digits, and (trimmed) as many
    # decimals as the least precise value supports
    present = [m for m in results if m is not None]
    digits = [_leading_digits(m.median / scale) for m in present]
    decimals = (min(max(m.significant_figures - d, 0) for d, m in zip(digits, present))
                if trim else 1)
    width = max(digits) + decimals + (1 if decimals else 0)
    marks = highlight and any(m.has_warnings for m in present)

    def show(m):
        if m is None:
            return " " * len(show_value(1.0, 1, None))
        spread = m.iqr / m.median if m.has_warnings else None
        return show_value(m.median / scale, m.significant_figures, spread)

    def show_value(value, figures, spread):
        if trim:
            value = trim_sigfig(value, figures)
        note = f" (! {spread * 100:.0f}%)" if marks and spread is not None else ""
        return f"{value:>{width}.{decimals}f}" + f"{note:>{7 if marks else 0}}"
    return show


def _paint(text, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return _COLORS["best"] + text + "\033[0m" * 2
    if value <= best * 1.1:
        return _COLORS["good"] + text + "\033[0m" * 2
    if value >= best * 5:
        return _COLORS["very_bad"] + text + "\033[0m" * 2
    if value >= best * 2:
        return _COLORS["bad"] + text + "\033[0m" * 2
    return text


def _render(results, colorize, trim, highlight):
    unit, scale = select_unit(min(m.median for m in results))
    rows = ordered_unique((m.num_threads, m.env, m.as_row_name) for m in results)
    rows.sort(key=lambda key: key[:2])          # stable: statements keep their order
    cols = ordered_unique(m.description for m in results)
    grid = {(r, c): None for r in rows for c in cols}
    for m in results:
        grid[((m.num_threads, m.env, m.as_row_name), m.description)] = m
    envs = {m.env for m in results}
    env_width = max(len(e) for e in envs) if len(envs) > 1 else 0
    # a column's format, and its best values, are per thread-count group of rows
    formats = [_column_format([grid[r, c] for r in rows], scale, trim, highlight)
               for c in cols]
    text_rows, prior = [], (None, None)
    for r in rows:
        env = f"({r[1]})" if len(envs) > 1 and (r[0], r[1]) != prior else ""
        cells = [grid[r, c] for c in cols]
        text_rows.append(["  " + env.ljust(env_width + 4) + r[2]]
                         + [fmt(m) for fmt, m in zip(formats, cells)])
        prior = r[:2]
    header = [""] + [c if c is not None else "" for c in cols]
    widths = [max(len(row[i]) for row in [header] + text_rows) for i in range(len(header))]
    lines = ["  |  ".join(h.center(w) for h, w in zip(header, widths))]
    overall = len(lines[0])
    for i, (r, texts) in enumerate(zip(rows, text_rows)):
        if i == 0 or rows[i - 1][0] != r[0]:
            lines.append(f"{r[0]} threads: ".ljust(overall, "-"))
        cells = [grid[r, c] for c in cols]
        if colorize == "rowwise":
            bests = [min(m.median for m in cells if m is not None)] * len(cols)
        else:
            bests = [min((grid[q, c].median for q in rows
                          if q[0] == r[0] and grid[q, c] is not None), default=None)
                     for c in cols]
        out = [texts[0].ljust(widths[0])]
        for text, width, m, best in zip(texts[1:], widths[1:], cells, bests):
            text = text.center(width)
            if colorize and m is not None and best is not None:
                text = _paint(text, m.median, best)
            out.append(text)
        lines.append("  |  ".join(out))
    label = results[0].label
    warned = highlight and any(m.has_warnings for m in results)
    return (f"[{(' ' + (label or '') + ' ').center(overall - 2, '-')}]\n"
            + "\n".join(lines) + f"\n\nTimes are in {unit_to_english(unit)}s ({unit}).\n"
            + ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
               if warned else ""))

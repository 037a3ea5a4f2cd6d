"""What a profile holds once recorded (``torch.autograd.profiler_util``): ``FunctionEvent``
(one op, backward node or ``record_function`` range), ``EventList`` (the events, with
``key_averages``, ``table`` and ``export_chrome_trace``) and ``FunctionEventAvg`` (one row of
``key_averages``). Times are in microseconds, as torch's; a table reads as torch's (its
columns, widths and number formats)."""

import gzip
import json
import os

from ..savefile import atomic_write

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(time_us, total_us):
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class _TimeStrings:
    """The ``*_str`` forms torch's events and rows give of their times."""

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    # no device time is measured here: torch's names answer 0
    device_time = device_time_total = self_device_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0
    flops, is_async, use_device, node_id = 0, False, None, -1


class FunctionEvent(_TimeStrings):
    """One recorded op (``"aten::mm"``), backward node (``"MulBackward0"``) or
    ``record_function`` range, with its nested events (``cpu_children``).

    ``cpu_time_total`` is its duration in µs, ``self_cpu_time_total`` that less its
    children's; ``cpu_memory_usage`` the bytes its outputs (a backward node: its gradients)
    hold, ``self_cpu_memory_usage`` that less its children's."""

    def __init__(self, id, name, kind, thread, start_us, end_us, input_shapes=(),
                 cpu_memory_usage=0, stack=()):
        # a profile's steps are one row, as torch's: "ProfilerStep*" (the trace keeps "#N")
        self.trace_name = name
        name = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        self.id, self.name, self.kind, self.thread = id, name, kind, thread
        self.start_us, self.end_us = start_us, end_us
        self.input_shapes, self.cpu_memory_usage = list(input_shapes), cpu_memory_usage
        self.stack = list(stack)
        self.cpu_children, self.cpu_parent = [], None
        self.count = 1

    key = property(lambda self: self.name)
    cpu_time_total = property(lambda self: self.end_us - self.start_us)
    cpu_time = cpu_time_total
    time_range = property(lambda self: (self.start_us, self.end_us))

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def is_user_annotation(self):
        return self.kind == "user_annotation"

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg(_TimeStrings):
    """The events of one ``key`` (and input shapes, or stack, where grouped by them):
    their count and summed times and memory; ``cpu_time`` is the mean."""

    def __init__(self, key, input_shapes=None, stack=()):
        self.key, self.input_shapes, self.stack = key, input_shapes, list(stack)
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.cpu_parent = None              # (as torch's rows: none is nested)
        self.is_user_annotation = False

    def add(self, event):
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        self.is_user_annotation = event.is_user_annotation
        return self

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


class EventList(list):
    """A profile's events (``prof.events()``, ``key_averages()``), printed as a table."""

    def __init__(self, events=(), profile_memory=False, with_stack=False):
        super().__init__(events)
        self.profile_memory, self.with_stack = profile_memory, with_stack

    @property
    def self_cpu_time_total(self):
        """The time of all events, each counted once (the sum of self times), in µs."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One ``FunctionEventAvg`` per name (and input shapes, and first ``n`` frames of
        the stack, where asked), in the order each first occurs."""
        rows = {}
        for e in self:
            key = [e.name]
            if group_by_input_shape:
                key.append(str(e.input_shapes))
            if group_by_stack_n:
                key.append(tuple(e.stack[:group_by_stack_n]))
            key = tuple(key)
            if key not in rows:
                rows[key] = FunctionEventAvg(
                    e.name, e.input_shapes if group_by_input_shape else None,
                    e.stack[:group_by_stack_n] if group_by_stack_n else ())
            rows[key].add(e)
        return EventList(rows.values(), self.profile_memory, self.with_stack)

    def total_average(self):
        """One row summing every event."""
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg,
        (CPU Mem, Self CPU Mem,) # of Calls (, Input Shapes, Source Location).

        Args:
            sort_by: an attribute of the rows, largest first ("cpu_time_total",
                "self_cpu_time_total", "count", "cpu_memory_usage", ...); None keeps
                the order of the events.
            row_limit: the most rows shown.
            time_unit: "s", "ms" or "us" for every time; None picks one per value.
        """
        return _build_table(self, sort_by, row_limit, max_src_column_width,
                            max_name_column_width, max_shapes_column_width, header,
                            top_level_events_only, time_unit)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto): one
        complete ("X") event per op, backward node and range, times in µs; a path ending
        in ".gz" is gzipped."""
        pid = os.getpid()
        events = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
                   "args": {"name": "python"}}]
        for e in sorted(self, key=lambda e: (e.start_us, -e.end_us)):
            event = {"ph": "X", "cat": e.kind, "name": e.trace_name, "pid": pid,
                     "tid": e.thread, "ts": e.start_us, "dur": e.cpu_time_total, "args": {}}
            if e.input_shapes:
                event["args"]["Input Dims"] = e.input_shapes
            if e.stack:
                event["args"]["Call stack"] = ";".join(e.stack)
            events.append(event)
        text = json.dumps({"schemaVersion": 1, "displayTimeUnit": "ms",
                           "traceEvents": events}, indent=1).encode()
        if str(path).endswith(".gz"):
            text = gzip.compress(text)
        return atomic_write(path, lambda file: file.write(text), "export_chrome_trace")


def _build_table(events, sort_by, row_limit, max_src_width, max_name_width,
                 max_shapes_width, header, top_level_only, time_unit):
    # torch's _build_table for the CPU columns: widths, formats and the footer line
    if not events:
        return ""
    memory = events.profile_memory
    if sort_by is not None:
        name = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, name), reverse=True)
    name_width = min(max(len(e.key) for e in events) + 4, max_name_width)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    headers += ["CPU Mem", "Self CPU Mem"] if memory else []
    headers += ["# of Calls"]
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(min(max(len(str(e.input_shapes)) for e in events) + 4,
                          max_shapes_width))
    if stacks:
        headers.append("Source Location")
        widths.append(min(max(len(s) for stack in stacks for s in stack) + 4, max_src_width))
    row_format = "".join("{: " + ("<" if stacks and i == len(widths) - 1 else ">") + str(w)
                         + "}  " for i, w in enumerate(widths))
    separator = "".join("-" * w + "  " for w in widths)
    total = sum(e.self_cpu_time_total for e in events)

    def timed(us):
        if time_unit in ("s", "ms", "us"):
            return f"{us / {'s': 1e6, 'ms': 1e3, 'us': 1.0}[time_unit]:.3f}{time_unit}"
        return _format_time(us)

    def trimmed(path):
        if len(path) > widths[-1]:
            path = "..." + path[len(path) - widths[-1] + 3:]
        return path

    lines = []
    if header is not None:
        lines += ["=" * (sum(widths) + 2 * len(widths) - 2), header]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key if len(e.key) < max_name_width - 3 else e.key[:max_name_width - 3] + "..."
        row = [name, _format_share(e.self_cpu_time_total, total), timed(e.self_cpu_time_total),
               _format_share(e.cpu_time_total, total), timed(e.cpu_time_total),
               timed(e.cpu_time)]
        if memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:widths[len(row)]])
        if stacks:
            row.append(trimmed(e.stack[0]) if e.stack else "")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            lines += [row_format.format(*blank, trimmed(s)) for s in e.stack[1:]]
            lines.append(row_format.format(*blank, ""))
    lines += [separator, f"Self CPU time total: {timed(total)}"]
    return "\n".join(lines) + "\n"

"""Profiling the engine's ops (``torch.autograd.profiler``: ``profile``, ``record_function``;
``mg.profiler``, torch.profiler's names, builds on it).

A profile is an observer of the engine (``scopes.observe``, as the memory timeline): each
op call, a recorded node or not (under ``no_grad``, or with no input that requires grad: an
inference, as torch's profiler sees it), is an event named as torch's aten op where the op is
clearly one (``Mul``: ``"aten::mul"``, see ``ATEN_NAMES``), else the op's own name; each
node backward runs is an event named as its node (``"MulBackward0"``); ``record_function(
name)`` adds a range, and ``aten_op`` one named as torch's op around a composition of nodes
(``aten::conv2d``). The engine calls an observer after an op's work, so an op's event starts
where the last event of the thread ended (the op before it, a range's edge, the profile's
start): the Python between two ops counts to the second. An op that runs ops (a custom
Function's forward or backward) holds their events: they came after it began (each event
keeps a stamp of the engine's creation order, ``Context.seq``). No profile active, the
engine pays its one test of the observers, and ``record_function`` and ``aten_op`` one test
of ``_recorders``.

Example:
    >>> with mg.autograd.profiler.profile(record_shapes=True) as prof:
    ...     with mg.autograd.profiler.record_function("step"):
    ...         F.cross_entropy(model(x), y).backward()
    >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
"""

import contextlib
import functools
import math
import os
import sys
import threading
from time import perf_counter_ns

from .function import _next_seq
from .inputs import _tensor
from .profiler_util import EventList, FunctionEvent
from .scopes import observe

__all__ = ["ATEN_NAMES", "aten_op", "profile", "record_function"]

# the recorders that are active, in any thread; empty, ``record_function`` costs one test
_recorders = []

# op name -> torch's aten op, where the node is that one op (the ops that are one node here
# for several of torch's, named per public function as torch names its nodes: View,
# Unsqueeze, Select, Mm, ... (autograd/graph.py ``node_alias``); a MatMul of other dims:
# ``_matmul_name``)
ATEN_NAMES = {
    "Add": "aten::add", "Sub": "aten::sub", "Mul": "aten::mul", "Div": "aten::div",
    "Neg": "aten::neg", "Pow": "aten::pow", "Exp": "aten::exp", "Log": "aten::log",
    "Sqrt": "aten::sqrt", "Rsqrt": "aten::rsqrt", "Abs": "aten::abs", "Tanh": "aten::tanh",
    "Sigmoid": "aten::sigmoid", "Relu": "aten::relu", "Gelu": "aten::gelu",
    "Sin": "aten::sin", "Cos": "aten::cos", "Log1p": "aten::log1p", "Expm1": "aten::expm1",
    "Erf": "aten::erf", "Reciprocal": "aten::reciprocal", "Clamp": "aten::clamp",
    "Where": "aten::where", "Maximum": "aten::maximum", "Minimum": "aten::minimum",
    "Sum": "aten::sum", "Mean": "aten::mean", "Prod": "aten::prod", "CumSum": "aten::cumsum",
    "Cumsum": "aten::cumsum", "Cumprod": "aten::cumprod", "Rsub": "aten::rsub",
    "MaxAll": "aten::max", "MinAll": "aten::min", "Max": "aten::max", "Min": "aten::min",
    "Amax": "aten::amax", "Amin": "aten::amin", "Median": "aten::median",
    "Mm": "aten::mm", "Bmm": "aten::bmm", "Dot": "aten::dot", "Mv": "aten::mv",
    "View": "aten::view", "Unsqueeze": "aten::unsqueeze", "Squeeze": "aten::squeeze",
    "Transpose": "aten::transpose", "T": "aten::t", "Permute": "aten::permute",
    "Cat": "aten::cat", "Select": "aten::select", "Slice": "aten::slice",
    "Index": "aten::index", "Alias": "aten::alias", "IndexSelect": "aten::index_select",
    "Embedding": "aten::embedding", "ToCopy": "aten::to", "Sort": "aten::sort",
    "Topk": "aten::topk", "MaskedFill": "aten::masked_fill", "Tril": "aten::tril",
    "Triu": "aten::triu", "Softmax": "aten::softmax",
    "LogSoftmax": "aten::log_softmax", "CrossEntropy": "aten::cross_entropy_loss",
    "LayerNorm": "aten::layer_norm", "RMSNorm": "aten::rms_norm",
    "GroupNorm": "aten::group_norm", "BatchNorm": "aten::batch_norm",
    "Linear": "aten::linear", "Einsum": "aten::einsum", "Concatenate": "aten::cat",
    "Stack": "aten::stack", "Split": "aten::split", "Expand": "aten::expand",
    "Gather": "aten::gather", "Clone": "aten::clone", "Cast": "aten::to",
    "Lerp": "aten::lerp", "Addcmul": "aten::addcmul", "Addcdiv": "aten::addcdiv",
    "ScaledDotProductAttention": "aten::scaled_dot_product_attention",
}


def _matmul_name(ctx):
    # torch's op for the operands' dims: mm (2-D by 2-D), bmm (3-D by 3-D), else matmul
    dims = [len(t.shape) for t in ctx.inputs]
    return {(2, 2): "aten::mm", (3, 3): "aten::bmm"}.get(tuple(dims), "aten::matmul")


def event_name(ctx):
    """The name of ``ctx``'s forward event: torch's aten op, or the op's own name."""
    name = str(ctx.name)
    return _matmul_name(ctx) if name == "MatMul" else ATEN_NAMES.get(name, name)


_ENGINE = os.path.dirname(os.path.abspath(__file__))      # frames of autograd/ left out


def _python_stack():
    # "file(line): function" of each frame outside the engine and contextlib, innermost first
    frame, stack = sys._getframe(1), []
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith(_ENGINE) and path != contextlib.__file__:
            stack.append(f"{path}({frame.f_lineno}): {frame.f_code.co_name}")
        frame = frame.f_back
    return stack


class _Recorder:
    """The observer of one profile, in the thread that started it: ``raw`` holds [name,
    kind, start ns, end ns, input shapes, bytes, stack, stamp] per event (the stamp: when
    it began in the engine's creation order of nodes); ``last`` is when the thread's last
    event ended, where the next op's begins."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack = with_stack
        self.thread, self.native_thread = threading.get_ident(), threading.get_native_id()
        self.raw, self.open = [], []
        self.origin = self.last = perf_counter_ns()
        self._observing = observe(self, unrecorded=True)
        self._observing.__enter__()
        _recorders.append(self)

    def restart(self):
        """Drop what was recorded so far (the end of a schedule's warm-up)."""
        self.raw, self.open = [], []
        self.origin = self.last = perf_counter_ns()

    def _add(self, name, shapes, nbytes, stack, began):
        # an op event; the events stamped after ``began`` ran inside it (an op that runs ops)
        end, start, raw = perf_counter_ns(), self.last, self.raw
        i = len(raw)
        while i and raw[i - 1][7] > began:
            i -= 1
            start = min(start, raw[i][2])
        raw.append([name, "cpu_op", start, end, shapes, nbytes, stack, began])
        self.last = end

    def _op(self, ctx, outputs_meta):
        shapes = [[] if t is None else list(t.shape) for t in ctx.inputs] \
            if self.record_shapes else ()
        nbytes = sum(math.prod(shape) * dtype.itemsize for shape, dtype in outputs_meta) \
            if self.profile_memory else 0
        self._add(event_name(ctx), shapes, nbytes,
                  _python_stack() if self.with_stack else (), ctx.seq)

    def on_forward(self, ctx):
        self._op(ctx, ctx.outputs_meta)

    def on_unrecorded(self, ctx, outputs):
        self._op(ctx, [(t._array.shape, t._array.dtype) for t in outputs]
                 if self.profile_memory else ())

    def on_backward(self, node, pending, captured):
        shapes = [list(shape) for shape, _ in node.outputs_meta] if self.record_shapes else ()
        nbytes = sum(getattr(getattr(t, "_array", None), "nbytes", 0)    # the gradients
                     for t, needed in zip(node.inputs, node.needs_input_grad) if needed) \
            if self.profile_memory else 0
        # a custom Function's backward stamps where it began: the ops it ran are inside
        began = node.backward_seq if node.backward_seq is not None else _next_seq()
        self._add(node.name(), shapes, nbytes, (), began)

    def on_free(self, nodes):
        self.last = perf_counter_ns()   # the release of the graph is no node's time

    def begin(self, name, kind="user_annotation", shapes=()):
        now = perf_counter_ns()
        entry = [name, kind, now, None, list(shapes) if self.record_shapes else [], None,
                 _python_stack() if self.with_stack else (), _next_seq()]
        self.raw.append(entry)
        self.open.append(entry)
        self.last = now
        return entry

    def end(self, entry):
        if entry in self.open:          # (a range left open at a restart or stop is closed)
            self.open.remove(entry)
            entry[3] = self.last = perf_counter_ns()

    def stop(self):
        """Stop observing; the events recorded, ranges nested, as an ``EventList``."""
        _recorders.remove(self)
        self._observing.__exit__(None, None, None)
        now = perf_counter_ns()
        for entry in self.open:
            entry[3] = now
        # by start, the longer first, a range (its bytes None until its events are summed)
        # before an op of the same span
        order = sorted(self.raw, key=lambda r: (r[2], -r[3], r[5] is not None))
        events, enclosing, ranges = [], [], set()
        for i, (name, kind, start, end, shapes, nbytes, stack, _) in enumerate(order):
            if nbytes is None:
                ranges.add(i)
            event = FunctionEvent(i, name, kind, self.native_thread,
                                  (start - self.origin) / 1e3, (end - self.origin) / 1e3,
                                  shapes, nbytes, stack)
            while enclosing and enclosing[-1].end_us <= event.start_us:
                enclosing.pop()
            if enclosing and event.end_us <= enclosing[-1].end_us:
                event.cpu_parent = enclosing[-1]
                enclosing[-1].cpu_children.append(event)
            enclosing.append(event)
            events.append(event)
        for event in reversed(events):      # a range holds what its events hold
            if event.id in ranges:
                event.cpu_memory_usage = sum(c.cpu_memory_usage for c in event.cpu_children)
        return EventList(events, self.profile_memory, self.with_stack)


class record_function(contextlib.ContextDecorator):
    """A named range in the profiles active in this thread, as a block or a decorator
    (``torch.profiler.record_function``); its events nest the ops run inside it.

    Args:
        name: the range's name in the table and the trace.
        args: taken, as torch's.

    Example:
        >>> with mg.profiler.record_function("attention"):
        ...     y = attn(x)
    """

    kind, shapes = "user_annotation", ()

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._open = []                  # per entry (a decorated recursion nests)

    def __enter__(self):
        entries = ()
        if _recorders:
            here = threading.get_ident()
            entries = [(r, r.begin(self.name, self.kind, self.shapes)) for r in list(_recorders)
                       if r.thread == here]
        self._open.append(entries)
        return self

    def __exit__(self, *exc):
        for recorder, entry in self._open.pop():
            recorder.end(entry)
        return False


class _aten_range(record_function):
    """An op's event around the nodes it is composed of (torch's ``aten::conv2d``): the
    input shapes of torch's op's arguments; the bytes of what it returns, as torch's
    allocator nets out the temporaries freed inside (its nodes' outputs)."""

    kind = "cpu_op"

    def __init__(self, name, shapes):
        super().__init__(name)
        self.shapes = shapes

    def returned(self, result):
        nbytes = sum(t._array.nbytes for t in (result if type(result) is tuple else (result,))
                     if isinstance(t, _tensor.Tensor))
        for recorder, entry in self._open[-1]:
            if recorder.profile_memory:
                entry[5] = nbytes


def aten_op(arguments, event=None):
    """Decorate ``function(fn, dims, *args)``, an op composed of several nodes (a
    convolution: im2col, a matmul, the bias), so that a profile sees one event ``aten::{fn}``
    holding its nodes, as torch's ``aten::conv2d`` holds the kernels it runs; its input
    shapes are those of ``args``, the first ``arguments`` (the number torch's op takes, or a
    function of ``dims`` giving it); ``event(fn, args)``, where given, names the event
    instead. No profile active, a call pays one test.

    Example:
        >>> @aten_op(7)     # aten::conv2d(input, weight, bias, stride, padding, dilation, groups)
        ... def _convolution(fn, dims, input, weight, bias, stride, padding, dilation, groups):
    """
    def decorate(function):
        @functools.wraps(function)
        def run(fn, dims, *args, **kwargs):
            if not _recorders:
                return function(fn, dims, *args, **kwargs)
            count = arguments(dims) if callable(arguments) else arguments
            shapes = [list(a.shape) if isinstance(a, _tensor.Tensor) else [] for a in args]
            shapes = (shapes + [[]] * count)[:count]
            name = event(fn, args) if event is not None else f"aten::{fn}"
            with _aten_range(name, shapes) as scope:
                result = function(fn, dims, *args, **kwargs)
                scope.returned(result)
            return result
        return run
    return decorate


class _Results:
    """What a finished profile answers, from ``self._events`` (None before it finishes)."""

    _events = None

    def _finished(self):
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._events

    def events(self):
        """The events recorded: ops, backward nodes and ranges, by start."""
        return self._finished()

    function_events = property(events)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One row per event name (and input shapes, with ``group_by_input_shape=True``
        under ``record_shapes=True``; and stack, with ``group_by_stack_n``): its calls, CPU
        total and self CPU time; ``.table(sort_by=..., row_limit=...)`` prints them."""
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n)

    @property
    def self_cpu_time_total(self):
        return self._finished().self_cpu_time_total

    def total_average(self):
        return self._finished().total_average()

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON; ``chrome://tracing``, Perfetto)."""
        return self._finished().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write ``frame;...;name value`` per event with a stack (``with_stack=True``), the
        collapsed form flame graph tools read; ``value`` in µs of ``metric``."""
        lines = [";".join([*reversed(e.stack), e.name]) + f" {int(getattr(e, metric))}"
                 for e in self._finished() if e.stack]
        with open(path, "w") as file:
            file.write("\n".join(lines) + ("\n" if lines else ""))


class profile(_Results):
    """Record the ops, backward nodes and ``record_function`` ranges this thread runs in a
    block (``torch.autograd.profiler.profile``).

    Args:
        enabled: False records nothing.
        record_shapes: keep each op's input shapes (``key_averages(group_by_input_shape=
            True)``; a backward node: its gradients').
        profile_memory: keep the bytes of each op's outputs (a backward node: of the
            gradients it returns): the table's "CPU Mem" columns.
        with_stack: keep the Python stack of each op and range.
        use_cuda, use_device, with_flops, with_modules, use_kineto, use_cpu,
            experimental_config, acc_events, custom_trace_id_callback: taken, as torch's;
            the times are the CPU's.

    Example:
        >>> with mg.autograd.profiler.profile() as prof:
        ...     loss.backward()
        >>> print(prof.table(sort_by="self_cpu_time_total"))
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled, self.record_shapes = enabled, record_shapes
        self.profile_memory, self.with_stack = profile_memory, with_stack
        self._recorder = None

    def __enter__(self):
        if self.enabled:
            if self._recorder is not None:
                raise RuntimeError("Profiler context manager is not reentrant")
            self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_stack)
        return self

    def __exit__(self, *exc):
        if self._recorder is not None:
            self._events, self._recorder = self._recorder.stop(), None
        return False

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """The events' table (``EventList.table``), one row per event."""
        return self._finished().table(sort_by, row_limit, max_src_column_width,
                                      max_name_column_width, max_shapes_column_width, header,
                                      top_level_events_only)

    def __str__(self):
        return self.table() if self._events is not None else "<unfinished profile>"

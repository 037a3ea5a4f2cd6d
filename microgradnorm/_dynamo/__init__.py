"""``mg._dynamo``: torch's ``torch._dynamo`` as training files touch it (``config``,
``reset``, ``disable``, the shape marks), on ``mg.compiler``'s terms: nothing compiles here,
so the decorators return their function, the marks change nothing and nothing is ever
compiling."""

from ..compiler import allow_in_graph, assume_constant_result, disable, is_compiling, reset
from ..compiler import list_backends
from . import config

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph",
           "graph_break", "is_compiling", "list_backends", "mark_dynamic", "mark_static",
           "mark_static_address", "maybe_mark_dynamic", "optimize", "reset"]


def disallow_in_graph(fn):
    """``fn`` itself (``torch._dynamo.disallow_in_graph``)."""
    return fn


def graph_break():
    """Nothing to break (``torch._dynamo.graph_break``)."""


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Nothing (``torch._dynamo.mark_dynamic``: a hint for the tracer's shapes)."""


def maybe_mark_dynamic(t, index):
    """Nothing (``torch._dynamo.maybe_mark_dynamic``)."""


def mark_static(t, index=None):
    """Nothing (``torch._dynamo.mark_static``)."""


def mark_static_address(t, guard=True):
    """Nothing (``torch._dynamo.mark_static_address``)."""


def optimize(*args, **kwargs):
    """A decorator that returns its function (``torch._dynamo.optimize(backend)``, the older
    spelling of ``torch.compile``)."""
    return lambda fn: fn

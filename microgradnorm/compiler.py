"""``mg.compiler``, torch's ``torch.compiler``, beside ``mg.compile`` (``torch_misc.py``), which
returns what it is given: there is no compiler here, so these answer as torch's eager code
sees them. Nothing is ever compiling or exporting; ``disable``, ``allow_in_graph``,
``assume_constant_result`` and ``substitute_in_graph`` leave their function as it is; ``reset``
and ``cudagraph_mark_step_begin`` have nothing to clear or mark; ``set_stance`` records the
stance (a call, a block or a decorator, as torch's), which changes nothing here; ``config``
holds torch's settings of the compiler, recorded. ``mg._dynamo`` and ``mg._inductor`` are the
private modules training files set (``torch._dynamo.config.cache_size_limit = 64``,
``torch._inductor.config.coordinate_descent_tuning = True``), on the same terms."""

import contextlib
import functools
import types

__all__ = ["allow_in_graph", "assume_constant_result", "config", "cudagraph_mark_step_begin",
           "disable", "get_stance", "is_compiling", "is_dynamo_compiling", "is_exporting",
           "list_backends", "reset", "set_stance", "substitute_in_graph"]

# torch.compiler.config's settings that scripts set, with torch's defaults; any other name
# assigned is recorded too (torch's config modules refuse a name they do not know)
config = types.SimpleNamespace(job_id=None, dynamic_sources="", unbacked_sources="",
                               cache_key_tag="", force_disable_caches=False)

_BACKENDS = ("cudagraphs", "inductor", "openxla", "tvm")      # what torch lists by default


def is_compiling():
    """False: no code here runs under ``torch.compile``'s tracer
    (``torch.compiler.is_compiling``)."""
    return False


def is_dynamo_compiling():
    """False, as ``is_compiling`` (``torch.compiler.is_dynamo_compiling``)."""
    return False


def is_exporting():
    """False: nothing here is exported (``torch.compiler.is_exporting``)."""
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """``fn`` itself (``torch.compiler.disable``: run it without compiling, which is how
    everything runs here); with no ``fn``, a decorator that returns its function."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    return fn


def allow_in_graph(fn):
    """``fn`` itself (``torch.compiler.allow_in_graph``)."""
    return fn


def assume_constant_result(fn):
    """``fn`` itself (``torch.compiler.assume_constant_result``)."""
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False,
                        skip_signature_check=False):
    """A decorator that returns its function as it is (``torch.compiler.substitute_in_graph``:
    the substitute is used only while compiling, which never happens here)."""
    if not callable(original_fn):
        raise TypeError(f"substitute_in_graph expects a function but got {type(original_fn)!r}")
    return lambda fn: fn


def reset():
    """Nothing to clear (``torch.compiler.reset``: the compiled code caches)."""


def cudagraph_mark_step_begin():
    """Nothing to mark (``torch.compiler.cudagraph_mark_step_begin``)."""


def list_backends(exclude_tags=("debug", "experimental")):
    """The names torch lists by default (``torch.compiler.list_backends``); any of them, or
    none, gives the same eager run here."""
    return list(_BACKENDS)


class set_stance(contextlib.ContextDecorator):
    """``torch.compiler.set_stance(stance)``: called, it sets the stance at once; as a block or
    a decorator it puts the previous one back after. The stance ("default", "force_eager",
    "eager_on_recompile", "fail_on_recompile", ...) is recorded and read by ``get_stance``;
    every stance runs eagerly here."""

    _current = ("default", False, None)

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        self.prior = set_stance._current
        set_stance._current = (stance, skip_guard_eval_unsafe, force_backend)
        self.stance = set_stance._current

    def __enter__(self):
        set_stance._current = self.stance
        return self

    def __exit__(self, *exc_info):
        set_stance._current = self.prior
        return False


def get_stance():
    """The stance ``set_stance`` last set: "default" at first."""
    return set_stance._current[0]

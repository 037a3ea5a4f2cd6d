"""``Function`` records one graph node, a ``Context``, per call: the op's forward runs on
plain arrays, and the node keeps what its backward needs (``history.py`` holds the node's
version checks and freeing)."""

import itertools

import numpy as np

from ..backend import FLOAT_ERRORS, IGNORE_FLOAT_ERRORS
from .grad_mode import _state
from .graph import Node, NodeAPI, node_name
from .history import NodeHistory
from .inputs import (_kept_constants, _refuse_stale_view, _share_versions_with_bases, _tensor,
                     _unpack)
from .scopes import _observers, notify_forward


class Context(NodeHistory, NodeAPI):
    """A graph node, ``ctx`` in forward and backward: ``ctx.save_for_backward(*arrays)``
    keeps arrays that ``ctx.saved`` returns; ``ctx.needs_input_grad``, one bool per input,
    says which gradients backward may leave None. Any other attribute set in forward (an
    option, a shape) is there in backward. ``module`` and ``group`` serve the visualizer."""

    # the structure in slots, kept by ``free``; forward's own attributes: the dict it empties
    __slots__ = ("function", "inputs", "needs_input_grad", "seq", "module", "group",
                 "outputs_meta", "tensor_hooks", "_saved", "_saved_versions", "_kept_versions",
                 "_freed", "_graph", "__dict__", "__weakref__")

    def __init__(self, function, inputs, needs_input_grad):
        self.function = function
        self.inputs = inputs
        self.needs_input_grad = needs_input_grad
        self.seq = _next_seq()      # creation order: which in-place writes came after it
        state = _state
        modules, groups = state.module_stack, state.group_stack
        self.module = modules[-1] if modules else ""          # _module_path(), inline
        self.group = groups[-1] if groups else None
        self.outputs_meta = ()      # (shape, dtype) of each output, to fill missing grads
        self.tensor_hooks = None    # {output index: (id of the tensor, {handle id: hook})}
        self._saved = self._saved_versions = self._kept_versions = ()
        self._freed = False
        self._graph = None          # hooks and metadata on the node (graph.py), if ever any

    @property
    def name(self):                  # "Mul"; name() is "MulBackward0" (graph.py)
        return self.function._node_name

    def __repr__(self):              # PyTorch's grad_fn reads <MulBackward0 object at ...>
        return f"<{self.name()} object at {id(self):#x}>"

    def save_for_backward(self, *arrays):
        """Keep ``arrays`` (and None placeholders) until backward; see ``saved``."""
        self._saved = arrays

    @property
    def saved(self):
        """The arrays given to ``save_for_backward``, checked against in-place changes."""
        if self._freed:
            self.check_not_freed()
        for box, version, _ in self._saved_versions:       # inline: the common case
            if box[0] != version:
                self.check_versions(self._saved_versions)      # raises, naming it
        return self._saved


_next_seq = itertools.count().__next__
Node.register(Context)


def once_differentiable(backward):
    """PyTorch's decorator of a custom Function's backward that is not differentiable: it
    returns ``backward`` marked (not wrapped); under ``create_graph=True`` a backward
    through its result raises, as torch's (``custom.py``)."""
    backward._once_differentiable = True
    return backward

# the recorders of graph capture (tape.py's ``Tape``, one per capturing thread); empty, it
# costs ``apply`` one test
_tapes = []


class Function:
    """Base class of every differentiable op; subclass it with two static methods on plain
    arrays (NumPy or CuPy) and call ``apply``::

        forward(ctx, *arrays, **options) -> array or tuple of arrays
        backward(ctx, *output_grads)     -> one gradient (or None) per input

    ``apply(*inputs, **options)`` takes Tensors; numbers and arrays become constants and
    None stays None (an absent bias); ``options`` (keywords) reach forward unchanged, but
    for those named in ``kept_options``: arrays the node keeps for backward (an index, a
    mask), which reach forward as arrays, a tensor's version checked at backward and any
    other array copied. ``saved_names`` names the saved arrays, in ``save_for_backward``'s
    order (visualizer).
    """

    saved_names = ()
    kept_options = ()
    node_suffix = "Backward0"       # its nodes' name(): MulBackward0, as PyTorch's

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._node_name = node_name(cls)

    @staticmethod
    def forward(ctx, *args, **options):
        """The op on plain arrays; returns an array or a tuple of arrays."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        """dL/d(input) per input (None where not ``ctx.needs_input_grad``) from dL/d(output)."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs, **options):
        """Run ``forward`` on the inputs' arrays; the outputs get a node when recording."""
        tensors, arrays, needs_input_grad = _unpack(cls.__name__, inputs)
        ctx = Context(cls, tensors, needs_input_grad)
        record = _state.grad_enabled and True in needs_input_grad
        given = options               # as passed: a tape traces the arrays kept_options copy
        if cls.kept_options:
            options = _kept_constants(ctx, options, cls.kept_options, record)
        token = FLOAT_ERRORS.set(IGNORE_FLOAT_ERRORS)    # inf and NaN silently, as torch's
        try:
            raw = cls.forward(ctx, *arrays, **options)
        finally:
            FLOAT_ERRORS.reset(token)
        make, node = _tensor.Tensor._from_op, ctx if record else None
        single = not isinstance(raw, tuple)
        if single and raw.shape == () and isinstance(raw, np.generic):
            raw = ctx._as_array(raw)  # NumPy's 0-d results are scalars: memory takes writes
        if single:                              # one output, the usual case: no loops
            outputs = (make(raw, node, 0),)
            if getattr(raw, "base", None) is not None:
                _share_versions_with_bases(tensors, outputs)
        else:
            raw = tuple([ctx._as_array(a) if isinstance(a, np.generic) else a for a in raw])
            outputs = tuple([make(a, node, i) for i, a in enumerate(raw)])
            _share_versions_with_bases(tensors, outputs)
        if record:
            for t in tensors:
                if t is not None and t._view_version is not None \
                        and t._view_version != t._version_box[0]:
                    _refuse_stale_view(cls.__name__, t)
            ctx.outputs_meta = ((raw.shape, raw.dtype),) if single else \
                tuple([(a.shape, a.dtype) for a in raw])
            if ctx._saved:
                ctx._track_saved(tensors, outputs)
        if _observers:                # a node, or (a profile's) a call that records none
            notify_forward(ctx, outputs, record)
        if _tapes:                    # graph capture sees every call, recorded or not (tape.py)
            _tapes[-1].record(cls, ctx, tensors, arrays, given, options, outputs, record)
        return outputs[0] if single else outputs

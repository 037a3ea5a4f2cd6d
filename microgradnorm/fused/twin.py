"""``Twin``: the spec of an op offered twice, a composite graph of primitives and one fused
node, with what it takes declared (``Input``, ``Option``); and ``FusedFunction``, the base of
every fused node. ``norms.Norm`` is a ``Twin`` with what a normalization declares besides.

Tools and generic tests read the declaration, never a name: ``make_inputs`` draws each input
by its kind, ``run`` and ``run_torch`` call the op and PyTorch's on {name: value},
``constants`` are the inputs that take no gradient, ``running`` the state changed in place,
``empty_output`` the result of a zero-size input.
"""

import dataclasses
import itertools
from typing import Callable

import numpy as np

from ..autograd.double import first_order
from ..autograd.function import Function
from ..autograd.gradients import grad

__all__ = ["KINDS", "LEARNED", "FusedFunction", "Input", "Option", "Twin"]

# What each kind of input is; ``make_inputs`` draws each by it, for an x of a given shape.
KINDS = {
    "x": "the input itself, of the shape a tool asks for (attention: query, key, value)",
    "like-x": "x's shape, dtype and device (a residual, added to x)",
    "per-feature": "learned, one value per feature of the normalized shape (the last dim)",
    "per-channel": "learned, one value per channel, dim 1 of x (N, C, *)",
    "scalar": "learned, one number (DyT's α)",
    "running": "running statistics, one per channel, updated in place in training",
    "index": "integer class indices along x's last dim (cross-entropy's target)",
}
LEARNED = ("per-feature", "per-channel", "scalar")


@dataclasses.dataclass(frozen=True)
class Input:
    """One input of a twin, as ``run`` takes it in its dict.

    Attributes:
        name: the key, and the entry's parameter name (``F.layer_norm``'s ``weight``); a
            norm's x is keyed "x" where its entry takes torch's ``input``, which the norm's
            ``call`` passes by position.
        kind: one of ``KINDS``.
        optional: may be left out (None): an affine weight or bias.
        differentiable: takes a gradient (not running statistics or class indices).
        init: where random values centre (a weight's 1, a bias's 0, DyT's α 0.5; the
            running variance's 1), the module's initial value.
        other_float: may be of another floating dtype than x, as torch's entry takes it
            (``rms_norm``'s weight: its composite then runs).
    """

    name: str
    kind: str
    optional: bool = False
    differentiable: bool = True
    init: float = 0.0
    other_float: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Input {self.name!r}: kind must be one of {tuple(KINDS)}, "
                             f"got {self.kind!r}")
        if self.differentiable and self.kind in ("running", "index"):
            raise ValueError(f"Input {self.name!r}: a {self.kind} input takes no gradient "
                             "(differentiable=False)")

    def shape_for(self, shape):
        """This input's shape beside an x of ``shape``."""
        return {"x": shape, "like-x": shape, "per-feature": shape[-1:], "scalar": (),
                "per-channel": shape[1:2], "running": shape[1:2],
                "index": shape[:-1]}[self.kind]


@dataclasses.dataclass(frozen=True)
class Option:
    """A keyword option of a twin and its default, which ``run`` and ``run_torch`` pass.

    Attributes:
        variants: values a report shows as rows of their own (RMSNorm's casting modes).
        torch: PyTorch's twin takes it too (RMSNorm's ``offset`` and ``casting``: no).
    """

    name: str
    default: object
    variants: tuple = ()
    torch: bool = True


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class Twin:
    """One op both ways, and what a tool needs to call it generically.

    Attributes:
        name: the one spelling (``"softmax"``), ``F``'s and the tools'; ``title`` is for
            tables; ``aliases`` are other spellings ``norms.lookup`` accepts.
        function: the public, checked entry (``F.softmax``); ``composite`` the unchecked
            graph of primitives; ``fused`` the ``FusedFunction`` of the fused node.
        inputs: the ``Input``s, in the order of ``run``'s dict.
        options: the ``Option``s (eps with its default, momentum, ...); none for no eps.
        outputs: the names of the outputs (a residual form: also ``x + residual``).
        call: ``(function, {name: value}, impl, **options) -> output(s)``; the default
            calls ``function(**inputs, impl=impl, **options)``, every input named as the
            entry's parameter.
        torch: ``(torch.nn.functional, {name: torch.Tensor}, **options) -> output(s)``, the
            same computation in PyTorch.
        ndim: (fewest, most or None) dims of x; ``shape_text`` says it in words.
    """

    name: str
    title: str
    function: Callable
    composite: Callable
    fused: type
    inputs: tuple
    torch: Callable
    call: Callable = None
    options: tuple = ()
    outputs: tuple = ("output",)
    aliases: tuple = ()
    ndim: tuple = (1, None)
    shape_text: str = "(*, D)"

    # ----- what the declaration says ---------------------------------------------------
    def inputs_of(self, *kinds):
        """The ``Input``s of these kinds, in declaration order."""
        return tuple(spec_input for spec_input in self.inputs if spec_input.kind in kinds)

    @property
    def x(self):
        """The name of the input itself (the first of kind "x")."""
        return self.inputs_of("x")[0].name

    @property
    def params(self):
        """The names of the learned inputs (weight, bias, DyT's α)."""
        return tuple(i.name for i in self.inputs_of(*LEARNED))

    @property
    def optional_params(self):
        """The names of the learned inputs that may be left out (an affine weight, bias)."""
        return tuple(i.name for i in self.inputs_of(*LEARNED) if i.optional)

    @property
    def running(self):
        """The names of the running statistics, updated in place in training."""
        return tuple(i.name for i in self.inputs_of("running"))

    @property
    def constants(self):
        """The names of the inputs given as values that take no gradient."""
        return tuple(i.name for i in self.inputs if not i.differentiable
                     and i.kind != "running")

    @property
    def residual(self):
        """Whether it adds a residual to x (and returns the sum as a second output)."""
        return bool(self.inputs_of("like-x"))

    @property
    def defaults(self):
        """{option: default}."""
        return {option.name: option.default for option in self.options}

    @property
    def eps(self):
        """The default eps, or None: for a twin without one, or one whose default is the
        machine epsilon of x's statistics (RMSNorm's, PyTorch's); ``has_eps`` tells the two
        apart."""
        return self.defaults.get("eps")

    @property
    def has_eps(self):
        """Whether it takes an eps (declares the option)."""
        return "eps" in self.defaults

    def variants(self):
        """[(label, {option: value})]: one per combination of the options' ``variants``
        (``[("[llama]", {"casting": "llama"}), ...]``), or [("", {})]."""
        swept = [option for option in self.options if option.variants]
        return [("".join(f"[{v}]" for v in values),
                 {option.name: v for option, v in zip(swept, values)})
                for values in itertools.product(*(o.variants for o in swept))]

    # ----- calling it --------------------------------------------------------------------
    def run(self, tensors, impl="fused", running=None, training=True, **options):
        """The op on {name: Tensor} (class indices too) with ``impl``, as
        a tuple (``outputs`` names it). ``running``: {name: array or Tensor} of the running
        statistics, updated in place when ``training``; ``options`` override the defaults."""
        given, options = self._arguments(tensors, running, training, options, torch=False)
        out = (self.call or _keyword_call)(self.function, given, impl, **options)
        return out if isinstance(out, tuple) else (out,)

    def run_torch(self, torch_functional, tensors, running=None, training=True, **options):
        """PyTorch's result for {name: torch.Tensor}, as a tuple, with the options PyTorch
        takes (``Option.torch``)."""
        given, options = self._arguments(tensors, running, training, options, torch=True)
        out = self.torch(torch_functional, given, **options)
        return out if isinstance(out, tuple) else (out,)

    def _arguments(self, tensors, running, training, options, torch):
        defaults = {o.name: o.default for o in self.options if o.torch or not torch}
        if self.running:
            defaults["training"] = training
        left_out = {i.name: None for i in self.inputs if i.optional}
        return {**left_out, **tensors, **(running or {})}, {**defaults, **options}

    def make_inputs(self, shape, dtype="float64", affine=True, seed=0, scale=1.0):
        """Random {name: array} for an x of ``shape`` (running statistics: ``running_stats``):
        x and like-x ``scale`` times standard normal, learned inputs ``init`` + 0.5·N(0, 1)
        (so the affine path is exercised; ``affine=False`` leaves the optional ones out),
        class indices uniform. Drawn from one generator in declaration order."""
        shape = tuple(shape)
        fewest, most = self.ndim
        if len(shape) < fewest or (most is not None and len(shape) > most):
            raise ValueError(f"{self.name} needs a shape {self.shape_text}, got {shape}")
        rng = np.random.default_rng(seed)
        arrays = {}
        for spec_input in self.inputs:
            kind, size = spec_input.kind, spec_input.shape_for(shape)
            if kind == "running" or (spec_input.optional and not affine and kind in LEARNED):
                continue
            if kind == "index":
                arrays[spec_input.name] = rng.integers(0, shape[-1], size)
                continue
            spread = scale if kind in ("x", "like-x") else 0.5
            draw = np.asarray(spec_input.init + spread * rng.standard_normal(size))
            arrays[spec_input.name] = draw.astype(dtype)
        return arrays

    def running_stats(self, arrays):
        """Fresh running statistics (each at its ``init``: mean 0, variance 1) for the x of
        ``arrays``, in its dtype; None for a twin without them."""
        if not self.running:
            return None
        x = arrays[self.x]
        return {i.name: np.full(i.shape_for(x.shape), i.init, x.dtype)
                for i in self.inputs_of("running")}

    def empty_output(self, x, /, **given):
        """The output of a zero-size ``x``: as empty as x, in the graph of every learned
        input given (None: left out), so that backward gives each a zero gradient, as
        PyTorch does; its dtype is the promotion of x's and theirs."""
        y = x * 1.0
        for spec_input in self.inputs_of(*LEARNED):
            value = given.get(spec_input.name)
            if value is not None:
                if spec_input.kind == "per-channel":          # (C,) along dim 1
                    value = value.reshape((1, -1) + (1,) * (x.ndim - 2))
                y = y + value * 0.0
        return y


def _keyword_call(function, given, impl, **options):
    return function(**given, impl=impl, **options)


class FusedFunction(Function):
    """The base of every fused node, the norms' and softmax's, attention's and GELU's (the
    visualizer draws these apart); ``saved_names`` lists what forward saves, in order; a
    norm's ``mean`` and ``rstd`` hold one value per ``statistics_of``.

    ``recompute(ctx, *inputs)`` is the node's twin: the composite graph on ``inputs`` (the
    node's input Tensors, in ``apply``'s order) with the options its forward kept on ctx,
    the same output(s). Under ``create_graph=True`` the one ``graph_backward`` of every fused
    node differentiates it (``composite_gradients``); forward does no work for it.
    """

    saved_names = ()
    statistics_of = "row"
    recompute = None

    @staticmethod
    def graph_backward(ctx, *grads):
        """The input gradients as Tensors with history, for double backward: the twin's
        (``composite_gradients``)."""
        return composite_gradients(ctx, grads)


def composite_gradients(ctx, grads):
    """A fused node's input gradients under ``create_graph=True`` (double backward): its
    twin's composite graph recomputed from the node's inputs (``recompute``) and
    differentiated with ``create_graph=True``, so each gradient is a graph of primitives,
    each with its own formula (ops/double_backward.py); None for an input that takes none.

    The composite runs on a view of each input that takes a gradient: the inner ``grad``
    runs only the nodes between the outputs and those views (as torch's), not what made the
    input, and two inputs that are one tensor (attention's q = k = v) get a gradient each.
    A later backward goes through the view on to the input.
    """
    function = ctx.function
    if function.recompute is None:               # no twin: the exact first-order gradients
        return tuple(first_order(ctx, grads))
    needs = ctx.needs_input_grad
    inputs = [t.view_as(t) if need else t for t, need in zip(ctx.inputs, needs)]
    cut = [t for t, need in zip(inputs, needs) if need]
    outputs = function.recompute(ctx, *inputs)
    found = iter(grad(outputs, cut, grads, create_graph=True, allow_unused=True))
    return tuple(next(found) if need else None for need in needs)

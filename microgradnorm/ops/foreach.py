"""torch's ``_foreach_*`` functions: one op applied to every tensor of a list, the form
model-averaging and optimizer code writes (an EMA of the weights in three calls):

    torch._foreach_lerp_(ema_params, model_params, weight=1 - decay)
    torch._foreach_mul_(ema_params, decay); torch._foreach_add_(ema_params, p, alpha=1 - d)
    norms = torch._foreach_norm(grads)

Each is the Tensor op of its name applied tensor by tensor (so gradients flow as theirs):
a second operand may be one number or 0-d Tensor (every tensor takes it), a list of numbers
(one per tensor) or a list of Tensors (one per tensor). The out-of-place forms return a
tuple, the in-place ones (``_``) the list they were given, as torch's. The lists are
checked first, with torch's errors: a RuntimeError for an empty list or lists of
different lengths, a TypeError for what is not a list of Tensors."""

import numbers

from .. import tensor as _tensor
from .elementwise import pow as _pow

__all__ = []      # filled below: every _foreach_ name

UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
         "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
         "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow")
TERNARY = ("addcmul", "addcdiv", "lerp")
# maximum/minimum take a Tensor: a number goes to the clamp of the same meaning
_SCALAR_FORM = {"maximum": "clamp_min", "minimum": "clamp_max"}


def _tensors(fn, value, what="self"):
    """``value`` as a list of Tensors, refused as torch refuses."""
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(item, _tensor.Tensor) for item in value):
        raise TypeError(f"{fn}(): argument '{what}' must be a list or tuple of Tensors, not "
                        f"{type(value).__name__}")
    if not value:
        raise RuntimeError(f"{fn}(): Tensor list must have at least one tensor.")
    return value


def _per_tensor(fn, value, count, what):
    """A second operand as one value per tensor: a list given whole (its length checked, all
    Tensors or all numbers), a number or 0-d Tensor repeated; refused as torch refuses."""
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            kind = ("Tensor lists must have the same number of tensors" if all(
                isinstance(item, _tensor.Tensor) for item in value) else
                "Tensor list must have same number of elements as scalar list")
            raise RuntimeError(f"{fn}(): {kind}, got {count} and {len(value)} ('{what}').")
        if not (all(isinstance(item, _tensor.Tensor) for item in value) or all(
                isinstance(item, numbers.Number) for item in value)):
            raise TypeError(f"{fn}(): argument '{what}' must hold Tensors or numbers, not "
                            "both (torch's overloads take one kind)")
        return list(value)
    if isinstance(value, _tensor.Tensor) and value.dim() != 0:
        # one Tensor for every tensor is a scalar: torch refuses broadcasting a larger one
        raise RuntimeError(f"{fn}(): a Tensor '{what}' for every tensor must be 0-d, got "
                           f"shape {tuple(value.shape)}")
    if isinstance(value, (_tensor.Tensor, numbers.Number)):
        return [value] * count
    raise TypeError(f"{fn}(): argument '{what}' must be a number, a Tensor or a list of "
                    f"them, not {type(value).__name__}")


def _apply(tensors, method, in_place, *operands, **kwargs):
    """Tensor method ``method`` (``method_`` in place) of each tensor with its operands."""
    name = method + ("_" if in_place else "")
    results = [getattr(t, name)(*(op[i] for op in operands), **kwargs)
               for i, t in enumerate(tensors)]
    return tensors if in_place else tuple(results)


def _doc(fn, what, in_place, args, example):
    """The docstring of one generated _foreach_ function."""
    result = ("``self``, each tensor written in place" if in_place else
              "a tuple of the results, one per tensor")
    return (f"{what}, torch's ``{fn}``: {result}.\n\n    Args:\n"
            f"        self: a list or tuple of Tensors.\n{args}\n"
            f"    Example:\n        >>> mg.{example}\n    ")


def _unary(op, in_place):
    fn = f"_foreach_{op}{'_' if in_place else ''}"

    def foreach(self):
        return _apply(_tensors(fn, self), op, in_place)
    foreach.__doc__ = _doc(fn, f"``{op}`` of every tensor of ``self``", in_place, "",
                           f"{fn}([mg.ones(2), mg.zeros(3)])")
    return fn, foreach


def _binary(op, in_place):
    fn = f"_foreach_{op}{'_' if in_place else ''}"

    def foreach(self, other, **kwargs):
        if op == "pow" and isinstance(self, numbers.Number) and not in_place:
            exponents = _tensors(fn, other, "exponent")        # a number to each power
            return tuple(_pow(self, e) for e in exponents)
        tensors = _tensors(fn, self)
        others = _per_tensor(fn, other, len(tensors), "other")
        if "alpha" in kwargs and isinstance(others[0], numbers.Number):
            # torch's overloads with alpha take a 0-d Tensor or a list of Tensors
            raise TypeError(f"{fn}(): alpha is taken with a Tensor or a list of Tensors, "
                            f"not with {type(other).__name__} of numbers")
        if op in _SCALAR_FORM:
            results = [_extremum(op, t, o, in_place) for t, o in zip(tensors, others)]
            return tensors if in_place else tuple(results)
        return _apply(tensors, op, in_place, others, **kwargs)
    foreach.__doc__ = _doc(
        fn, f"``{op}(other)`` of every tensor of ``self``" + (
            " (or a number ``self`` to the powers of the list ``other``)" if op == "pow"
            else ""), in_place,
        "        other: a number or 0-d Tensor for every tensor, or a list of numbers or of\n"
        "            Tensors, one per tensor" + (" (``alpha=`` scales it)" if op in ("add", "sub")
                                            else "") + ".\n",
        f"{fn}([mg.ones(2), mg.ones(3)], [0.5, 2.0])")
    return fn, foreach


def _extremum(op, t, other, in_place):
    # a number: the clamp of the same meaning; a Tensor: maximum, written back in place
    # (a Tensor has no maximum_)
    if isinstance(other, numbers.Number):
        return getattr(t, _SCALAR_FORM[op] + ("_" if in_place else ""))(other)
    result = getattr(t, op)(other)
    return t.copy_(result) if in_place else result


def _ternary(op, in_place):
    fn = f"_foreach_{op}{'_' if in_place else ''}"

    if op == "lerp":
        def foreach(self, tensors1, weight):
            tensors = _tensors(fn, self)
            ends = _per_tensor(fn, _tensors(fn, tensors1, "tensors1"), len(tensors),
                               "tensors1")
            return _apply(tensors, op, in_place, ends,
                          _per_tensor(fn, weight, len(tensors), "weight"))
    else:
        def foreach(self, tensor1, tensor2, value=1):
            tensors = _tensors(fn, self)
            firsts = _per_tensor(fn, _tensors(fn, tensor1, "tensor1"), len(tensors),
                                 "tensor1")
            seconds = _per_tensor(fn, _tensors(fn, tensor2, "tensor2"), len(tensors),
                                  "tensor2")
            if isinstance(value, _tensor.Tensor):     # torch's: a 1-D Tensor, one per tensor
                if value.dim() != 1:
                    raise RuntimeError(f"{fn}(): a Tensor value must be 1-D, one per tensor, "
                                       f"got shape {tuple(value.shape)}")
                value = value.tolist()
            elif isinstance(value, (list, tuple)) and not all(
                    isinstance(v, numbers.Number) for v in value):
                raise TypeError(f"{fn}(): argument 'scalars' must be a list of numbers")
            values = _per_tensor(fn, value, len(tensors), "scalars")
            results = [getattr(t, op + ("_" if in_place else ""))(a, b, value=v)
                       for t, a, b, v in zip(tensors, firsts, seconds, values)]
            return tensors if in_place else tuple(results)
    args = ("        tensors1: the ends, a list of Tensors, one per tensor.\n"
            "        weight: a number, or a list of numbers or of Tensors, one per tensor.\n"
            if op == "lerp" else
            "        tensor1, tensor2: lists of Tensors, one per tensor.\n"
            "        value: a number, or a list of numbers or a 1-D Tensor of them, one per\n"
            "            tensor.\n")
    foreach.__doc__ = _doc(
        fn, f"``{op}`` of every tensor of ``self`` with the matching tensors of the other "
        "lists", in_place, args,
        f"{fn}([mg.zeros(2)], [mg.ones(2)], 0.25)" if op == "lerp" else
        f"{fn}([mg.zeros(2)], [mg.ones(2)], [mg.full((2,), 2.0)], value=0.5)")
    return fn, foreach


def _foreach_norm(self, ord=2, dtype=None):
    """The vector norm of each tensor of ``self`` (``torch._foreach_norm``), a tuple of 0-d
    Tensors: what gradient-norm logging and clipping compute per parameter.

    Args:
        self: a list or tuple of Tensors.
        ord: the norm's order (2 by default; ``inf`` for the largest magnitude).
        dtype: the dtype each norm is computed and returned in.

    Example:
        >>> mg._foreach_norm([mg.ones(4), mg.full((2,), 3.0)])      # (tensor(2.), tensor(4.2426))
    """
    tensors = _tensors("_foreach_norm", self)
    return tuple(t.norm(p=ord, dtype=dtype) for t in tensors)     # all elements' norm


def _foreach_max(self):
    """The largest element of each tensor of ``self`` (``torch._foreach_max``), a tuple."""
    return tuple(t.max() for t in _tensors("_foreach_max", self))


def _foreach_clone(self):
    """A copy of each tensor of ``self`` (``torch._foreach_clone``), a tuple."""
    return tuple(t.clone() for t in _tensors("_foreach_clone", self))


def _foreach_zero_(self):
    """Every tensor of ``self`` filled with zeros in place (``torch._foreach_zero_``)."""
    tensors = _tensors("_foreach_zero_", self)
    for t in tensors:
        t.zero_()
    return tensors


def _foreach_copy_(self, src, non_blocking=False):
    """Each tensor of ``src`` copied into the matching one of ``self`` in place
    (``torch._foreach_copy_``): an EMA's reset to the model's weights."""
    tensors = _tensors("_foreach_copy_", self)
    sources = _per_tensor("_foreach_copy_", _tensors("_foreach_copy_", src, "src"),
                          len(tensors), "src")
    for t, s in zip(tensors, sources):
        t.copy_(s, non_blocking=non_blocking)
    return tensors


def _build():
    made = {}
    for family, make in ((UNARY, _unary), (BINARY, _binary), (TERNARY, _ternary)):
        for op in family:
            for in_place in (False, True):
                fn, foreach = make(op, in_place)
                foreach.__name__ = foreach.__qualname__ = fn
                made[fn] = foreach
    return made


globals().update(_build())
__all__ += sorted(name for name in globals() if name.startswith("_foreach_"))

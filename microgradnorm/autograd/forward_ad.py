"""``torch.autograd.forward_ad``: dual tensors, computed here without forward-mode AD. A
dual tensor is its primal recorded by the reverse-mode graph as a tensor that requires
grad; ``unpack_dual`` gives the tangent J·t of a result by the double-backward trick of
``autograd.functional.jvp`` (two backward passes over the graph from the level's duals). A
custom Function with a ``jvp`` staticmethod, applied to duals, has its tangents from that
``jvp`` (``custom_jvp``): its outputs are duals of their own."""

import collections

from .grad_mode import no_grad as _no_grad
from .gradients import grad as _grad
from .inputs import _tensor

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "``unpack_dual``'s result: the primal and its tangent (or None)."

_levels = []            # the one level open, as torch's (no nesting): {id(dual): (dual, t)}


def enter_dual_level():
    """Open the forward-AD level (torch's: one at a time); returns its index, 0.

    Example:
        >>> level = enter_dual_level()
    """
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _levels.append({})
    return 0


def exit_dual_level(*, level=None):
    """Close the level: its dual tensors are plain tensors again (no tangent).

    Args:
        level: None or the index ``enter_dual_level`` returned.

    Example:
        >>> exit_dual_level()
    """
    if not _levels or level not in (None, 0):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one "
                           "that was created. This is not supported.")
    _levels.pop()


class dual_level:
    """The block (a context manager) inside which dual tensors live: ``make_dual`` there,
    ``unpack_dual`` of the results; on exit they have no tangent any more.

    Example:
        >>> with dual_level():
        ...     y = make_dual(x, v).sin()
        ...     jvp = unpack_dual(y).tangent            # x.cos() * v
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def make_dual(tensor, tangent, *, level=None):
    """``tensor`` with ``tangent`` as its forward gradient, at the open level.

    Args:
        tensor: a floating or complex Tensor (the primal).
        tangent: a floating or complex Tensor of its shape.
        level: None or 0, the open level.

    Shape: tangent as tensor.

    Example:
        >>> with dual_level():
        ...     d = make_dual(mg.ones(3), mg.full((3,), 2.0))
    """
    Tensor = _tensor.Tensor
    if not _levels:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first.")
    for name, value in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(value, Tensor):
            raise TypeError(f"make_dual(): {name} must be a Tensor, got "
                            f"{type(value).__name__}")
    check_tangent(tensor, tangent)
    duals = _levels[-1]
    if id(tensor) in duals:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           "gradient at the same level 0 is not supported.")
    # a node of its own where the primal has history (its gradient stays the primal's)
    dual = tensor.clone() if tensor.requires_grad else tensor.detach().requires_grad_()
    duals[id(dual)] = (dual, tangent)
    return dual


def check_tangent(primal, tangent):
    """Torch's checks of a (primal, tangent) pair of Tensors, ``make_dual``'s and
    ``func.jvp``'s: both floating or complex (ValueError), the tangent of the primal's
    shape (RuntimeError)."""
    for name, value in (("primal", primal), ("tangent", tangent)):
        if not (value.is_floating_point() or value.is_complex()):
            raise ValueError(f"Expected {name} to be floating point or complex, but got: "
                             f"{value.dtype}")
    if tuple(tangent.shape) != tuple(primal.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(primal.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor``: the tangent J·t that the level's duals carry to
    it, or None where none reaches it (no level open, an integer result, a detached one).

    Args:
        tensor: a Tensor. level: None or 0.

    Shape: the tangent as the tensor.

    Example:
        >>> with dual_level():
        ...     primal, tangent = unpack_dual(make_dual(x, v) ** 2)    # 2 x v
    """
    Tensor = _tensor.Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    duals = _levels[-1] if _levels else {}
    reached, outside = _reached(tensor, duals) if duals else ([], False)
    primal = tensor if outside else tensor.detach()
    if duals.get(id(tensor), (None,))[0] is tensor:     # a dual: the tangent it was given
        return UnpackedDualTensor(primal, duals[id(tensor)][1])
    if not reached or not (tensor.is_floating_point() or tensor.is_complex()):
        return UnpackedDualTensor(primal, None)
    tangents = [duals[id(d)][1] for d in reached]
    u = tensor.new_zeros(tensor.shape).requires_grad_()
    backs = _grad([tensor], reached, [u], retain_graph=True, create_graph=True,
                  allow_unused=True)
    pairs = [(g, t) for g, t in zip(backs, tangents) if g is not None and g.requires_grad]
    found = None
    if pairs:
        record = outside or any(t.requires_grad for _, t in pairs)
        found = _grad([g for g, _ in pairs], [u], [t.to(g.dtype) for g, t in pairs],
                      retain_graph=True, create_graph=record, allow_unused=True)[0]
    return UnpackedDualTensor(primal, tensor.new_zeros(tensor.shape) if found is None
                              else found)


def custom_jvp(user, ctx, args, outputs):
    """The tangents of a custom Function's ``outputs`` from its ``jvp(ctx, *tangents)``,
    where a level is open and a Tensor argument carries a tangent (else ``outputs`` as they
    are): one tangent per argument (zeros for a Tensor without one, None for a non-Tensor),
    one per output back. Each floating output comes back as a dual of its own, without the
    reverse graph of the Function (its tangent would otherwise be counted twice).

    Example:
        >>> outputs = custom_jvp(Exp, ctx, (x,), (y,))       # y's tangent: jvp(ctx, x_t)
    """
    Tensor = _tensor.Tensor
    if not _levels:
        return outputs
    tangents = [unpack_dual(a).tangent if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return outputs
    tangents = [a.new_zeros(a.shape) if t is None and isinstance(a, Tensor) else t
                for a, t in zip(args, tangents)]
    with _no_grad():
        out_tangents = user.jvp(ctx, *tangents)
    out_tangents = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
    if len(out_tangents) != len(outputs):
        raise RuntimeError(f"{user.__name__}.jvp returned {len(out_tangents)} tangents; "
                           f"the function has {len(outputs)} outputs")
    duals, result = _levels[-1], []
    for out, t in zip(outputs, out_tangents):
        if t is None or not (out.is_floating_point() or out.is_complex()):
            result.append(out)
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"{user.__name__}.jvp must return Tensors (or None), got "
                            f"{type(t).__name__}")
        check_tangent(out, t)
        dual = out.detach().requires_grad_()
        duals[id(dual)] = (dual, t.detach())
        result.append(dual)
    return tuple(result)


def _reached(tensor, duals):
    """The level's duals in ``tensor``'s history, and whether it also reaches a tensor that
    requires grad of its own (its backward-mode history, kept by the primal)."""
    reached, outside, seen, stack = [], False, set(), [tensor]
    while stack:
        t = stack.pop()
        if t is None or not t.requires_grad or id(t) in seen:
            continue
        seen.add(id(t))
        if id(t) in duals:
            reached.append(t)
            if t.grad_fn is None:
                continue
        node = t.grad_fn
        if node is None:
            outside = True
        else:
            stack.extend(node.inputs)
    return reached, outside

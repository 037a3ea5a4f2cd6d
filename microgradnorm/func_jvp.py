"""``torch.func.jvp``: the forward-mode product J·t, computed here without forward-mode AD
by the double-backward trick of ``autograd.functional.jvp`` inside ``func_transforms``'s
machinery (fresh inputs, results leaving the transform detached, nesting with ``grad`` and
``vjp``); ``linearize``, a ``jvp`` at fixed primals as a function of the tangents."""

from .autograd import enable_grad
from .autograd import grad as autograd_grad
from .autograd.forward_ad import check_tangent
from .factories import zeros_like
from .func_transforms import (_differentiable, _flatten, _leaving, _reaches_outside, _running,
                              _spec_text, _split_aux, _unflatten)
from .tensor import Tensor

__all__ = ["jvp", "linearize"]

_API = "jvp(f, primals, tangents)"


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    r"""``(func(*primals), J·tangents)`` (``torch.func.jvp``): the directional derivative of
    ``func`` at ``primals`` along ``tangents``.

    Formula:
        with u a zero cotangent of each output recorded as a leaf, g(u) = uᵀ·J is linear
        in u, so ∂(g·t)/∂u = J·t: two backward passes, whatever the sizes (torch: one
        forward-mode pass; the values agree).

    Args:
        func: a function of the primals returning a Tensor or a pytree of Tensors (with
            ``has_aux``, ``(output, aux)``).
        primals: a tuple of Tensors (or pytrees of them), floating or complex.
        tangents: a tuple of the primals' structure and shapes.
        strict: taken, as torch's.
        has_aux: ``func`` returns ``(output, aux)``; aux comes back third.

    Shape:
        each tangent as its primal; the second result as the output.

    Example:
        >>> out, t = jvp(lambda x: x.sin(), (x,), (mg.ones_like(x),))    # t = x.cos()
    """
    del strict
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise RuntimeError(f"{_API}: Expected {name} to be a tuple. E.g. it should be "
                               "valid to call f(*primals).")
    flat_primals, primals_spec = _flatten(primals)
    flat_tangents, tangents_spec = _flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_API}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           "tangents also must be. Got primals with structure "
                           f"{_spec_text(primals_spec)} and tangents with structure "
                           f"{_spec_text(tangents_spec)}")
    if not flat_primals:
        raise RuntimeError(f"{_API}: Expected primals to contain at least one Tensor.")
    for p, t in zip(flat_primals, flat_tangents):
        for name, value in (("primals", p), ("tangents", t)):
            if not isinstance(value, Tensor):
                raise RuntimeError(f"{_API}: Expected {name} to only contain Tensors, got "
                                   f"{type(value)}")
        check_tangent(p, t)
    with enable_grad():
        diff, inputs, own, _ = _differentiable(primals)
        with _running(own):
            output = func(*diff)
        if has_aux and not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError(f"{_API}: output of function f should be a tuple: (output, "
                               "aux) if has_aux is True")
        output, aux = _split_aux(_API, output, has_aux)
        flat_output, output_spec = _flatten(output)
        for out in flat_output:
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{_API}: expected f(*primals) to return only tensors, "
                                   f"got unsupported type {type(out)}")
        tangent_out = _pushed(flat_output, inputs, flat_tangents, own)
    result = _leaving(output, own)
    tangent_out = _leaving(_unflatten(tangent_out, output_spec), own)
    if has_aux:
        return result, tangent_out, _leaving(aux, own)
    return result, tangent_out


def _pushed(outputs, inputs, tangents, own):
    """J·t for each output, zeros where the output does not depend on the inputs: the
    gradient of uᵀ·J (recorded at u = 0) by u, along the tangents."""
    live = [i for i, out in enumerate(outputs) if out.requires_grad and
            (out.is_floating_point() or out.is_complex())]
    found = [zeros_like(out) for out in outputs]
    if not live:
        return found
    us = [zeros_like(outputs[i]).requires_grad_() for i in live]
    backs = autograd_grad([outputs[i] for i in live], inputs, us, create_graph=True,
                          allow_unused=True)
    pairs = [(g, t) for g, t in zip(backs, tangents) if g is not None and g.requires_grad]
    if not pairs:
        return found
    record = _reaches_outside([outputs[i] for i in live] + list(tangents), own)
    along = autograd_grad([g for g, _ in pairs], us, [t.to(g.dtype) for g, t in pairs],
                          create_graph=record, allow_unused=True)
    for i, g in zip(live, along):
        if g is not None:
            found[i] = g
    return found


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)`` (``torch.func.linearize``): ``jvp_fn(*tangents)`` is
    J·tangents, the Jacobian of ``func`` at ``primals`` applied to the tangents, for as many
    tangents as wanted.

    Torch traces ``func``'s forward-mode graph once and replays it per call; here each call
    of ``jvp_fn`` is one ``jvp`` at the primals' values when ``linearize`` was called (kept as
    copies), the same values.

    Args:
        func: a function of the primals returning a Tensor or a pytree of Tensors.
        *primals: the Tensors (or pytrees of them) at which J is taken.

    Returns:
        ``func(*primals)`` and ``jvp_fn``, which takes tangents of the primals' structure,
        each of its primal's shape and dtype (RuntimeError otherwise, as torch's), and
        returns J·t in the output's structure.

    Example:
        >>> out, jvp_fn = linearize(lambda x: x.sin(), x)
        >>> jvp_fn(mg.ones_like(x))                # x.cos()
    """
    output = func(*primals)
    flat, spec = _flatten(primals)
    fixed = _unflatten([p.detach().clone() if isinstance(p, Tensor) else p for p in flat],
                       spec)

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = _flatten(tangents)
        if tangents_spec != spec:
            raise RuntimeError(f"Expected the tangents {_spec_text(tangents_spec)} to have "
                               f"the same argspec as the primals {_spec_text(spec)}")
        for i, (p, t) in enumerate(zip(flat, flat_tangents)):
            for what in ("shape", "device", "dtype"):
                if getattr(t, what, None) != getattr(p, what):
                    raise RuntimeError(f"tangent:{i} with {what} {getattr(t, what, None)} in "
                                       f"flattened pytree doesn't match the {what} "
                                       f"{getattr(p, what)} of the corresponding primal.")
        return jvp(func, fixed, tangents)[1]

    return output, jvp_fn

"""``torch.func``'s function transforms, ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``,
``jacfwd``, ``hessian`` and ``vmap`` (``mg.func`` re-exports them, and ``mg.vmap`` is
``vmap``), computed by the one reverse-mode engine:

* ``grad`` and ``vjp`` call ``func`` on fresh inputs: a tensor that requires no grad
  becomes a new leaf (``x.detach().requires_grad_()``), one that does (an outer transform's
  input, a parameter) a ``clone`` of it, through which the outer graph goes on. The
  gradients are ``mg.autograd.grad``'s, recorded (``create_graph=True``) where the output's
  history reaches a tensor that requires grad outside the transform, so ``grad(grad(f))``
  differentiates the inner gradient, and a plain backward otherwise. A result whose history
  reaches only the transform's own leaves comes back detached, as torch's results leave
  their transform's level; one that reaches further keeps its history.
* ``jacrev`` is one ``vjp`` and a backward per output element (``vmap`` of the vjp over the
  rows of the identity). ``jacfwd`` gives the same Jacobian by the same reverse passes (no
  forward-mode AD here), and ``hessian`` is ``jacfwd(jacrev(f))``: a backward per input
  element through the recorded gradient.
* ``vmap`` calls ``func`` once per index of the mapped dim, on the slices (``unbind``), and
  stacks the outputs along ``out_dims``: torch's values for a function without side
  effects, at the cost of a Python call per index where torch's batching rules run one
  batched op. ``randomness`` watches the default generator: "error" raises torch's error
  when a call draws, "same" gives every index the first index's draws, "different" lets
  each index draw on from the stream (torch's values for ``rand``; a batched ``randn``
  of torch's may order its draws otherwise).

Pytrees are nested tuples, lists and dicts, as ``torch.utils._pytree`` reads them.
"""

import contextlib
import functools
import threading

import numpy as np

from . import generator as streams
from .autograd import enable_grad, is_grad_enabled
from .autograd import grad as autograd_grad
from .autograd.custom import transform_scope
from .factories import eye, zeros, zeros_like
from .ops import stack
from .tensor import Tensor

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "vjp", "vmap"]


# ---- pytrees: nested tuples, lists and dicts of leaves (None one too), as torch.utils._pytree
# reads them; a spec is _LEAF or (type, the dict's keys or None, the children's specs)
_LEAF = "*"


def _flatten(tree):
    """(leaves, spec): the leaves of ``tree`` left to right (a dict's in its keys' order)."""
    if not isinstance(tree, (tuple, list, dict)):
        return [tree], _LEAF
    keys = list(tree) if isinstance(tree, dict) else None
    leaves, specs = [], []
    for child in (tree[k] for k in keys) if keys is not None else tree:
        child_leaves, spec = _flatten(child)
        leaves += child_leaves
        specs.append(spec)
    return leaves, (type(tree), keys, tuple(specs))


def _unflatten(leaves, spec):
    """The tree of ``spec`` with ``leaves`` in its places."""
    return _fill(iter(leaves), spec)


def _fill(leaves, spec):
    if spec == _LEAF:
        return next(leaves)
    kind, keys, specs = spec
    children = [_fill(leaves, s) for s in specs]
    if keys is not None:
        return kind(zip(keys, children))
    if issubclass(kind, tuple) and kind is not tuple:         # a named tuple
        return kind(*children)
    return kind(children)


def _count(spec):
    return 1 if spec == _LEAF else sum(map(_count, spec[2]))


def _spec_text(spec):
    # the structure in torch's notation: "*" a leaf, "(*, [*, *])"
    if spec == _LEAF:
        return spec
    kind, keys, specs = spec
    parts = [_spec_text(s) for s in specs]
    if keys is not None:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"
    if issubclass(kind, list):
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _broadcast(prefix, spec):
    """``prefix`` (in_dims or out_dims: an int or None for a whole subtree) as one value per
    leaf of the tree of ``spec``; None where its structure does not fit the tree's."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * _count(spec)
    if spec == _LEAF:
        return None
    kind, keys, specs = spec
    if isinstance(prefix, dict) != (keys is not None) or len(prefix) != len(specs) \
            or isinstance(prefix, list) != issubclass(kind, list):
        return None
    if keys is not None and set(prefix) != set(keys):
        return None
    flat = []
    for part, child in zip((prefix[k] for k in keys) if keys is not None else prefix, specs):
        values = _broadcast(part, child)
        if values is None:
            return None
        flat += values
    return flat


# ---- grad, grad_and_value, vjp: func called on fresh inputs, differentiated by the engine
def grad(func, argnums=0, has_aux=False):
    """``grad(func)(*args)``: the gradient of ``func``'s scalar output with respect to the
    argument(s) ``argnums`` (``torch.func.grad``), ∂func/∂args[argnums], of the shape of
    the argument (a pytree of tensors: the same pytree of gradients). Nests:
    ``grad(grad(f))`` is the second derivative, ``vmap(grad(f))`` per-sample gradients.

    Args:
        func: a function of one or more arguments returning a one-element 0-dim Tensor, or
            ``(output, aux)`` with ``has_aux``.
        argnums: an int, or a tuple of ints (then a tuple of gradients comes back).
        has_aux: ``func`` returns ``(output, aux)``; the result is ``(gradients, aux)``.

    Example:
        >>> cos_x = grad(lambda x: x.sin())(x)                       # x: a 0-dim tensor
        >>> per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, inputs, targets)
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradients, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (gradients, value[1]) if has_aux else gradients
    return wrapper


def grad_and_value(func, argnums=0, has_aux=False):
    """``grad_and_value(func)(*args)``: ``(gradients, output)``, the gradient of ``grad``
    and the value of ``func`` from one call (``torch.func.grad_and_value``); with
    ``has_aux``, ``(gradients, (output, aux))``. Arguments as ``grad``'s.

    Example:
        >>> g, loss = grad_and_value(compute_loss)(params, x, y)
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return wrapper


def _grad_and_value(func, argnums, has_aux, args, kwargs):
    api = "grad_and_value(f)(*args)"
    with enable_grad():                  # a transform: an outer no_grad does not reach func
        argnums = _checked_argnums(argnums, len(args))
        diff, inputs, own, spec = _differentiable(_sliced(args, argnums))
        with _running(own):
            output = func(*_replaced(args, diff, argnums), **kwargs)
        output, aux = _split_aux(api, output, has_aux)
        if not isinstance(output, Tensor):
            raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got "
                               f"{type(output)}")
        if output.dim() != 0:
            raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got "
                               f"tensor with {output.dim()} dims. Maybe you wanted to use the "
                               "vjp or jacrev APIs instead?")
        recorded = _reaches_outside([output], own)
        gradients = _unflatten(_gradients([output], inputs, create_graph=recorded), spec)
        value = output if recorded else output.detach()
        if has_aux:
            return _leaving(gradients, own), (value, _leaving(aux, own))
        return _leaving(gradients, own), value


def _split_aux(api, output, has_aux):
    # (output, aux) of func's result, aux None without has_aux; checked as torch checks it
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return output


def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)``: ``func(*primals)`` and the function of the cotangents v (one per
    output, the output's pytree) that returns vᵀ·∂func/∂primal for each primal, a tuple
    (``torch.func.vjp``); with ``has_aux``, ``(output, vjp_fn, aux)``.

    ``vjp_fn(cotangents, retain_graph=True, create_graph=None)`` may be called many times;
    ``create_graph`` defaults to whether grad mode is on.

    Args:
        func: a function of the primals returning a Tensor or a pytree of float Tensors.
        primals: the tensors (or pytrees of tensors) to differentiate at.
        has_aux: ``func`` returns ``(output, aux)``.

    Example:
        >>> out, vjp_fn = vjp(lambda x: x.sin(), x)
        >>> (g,) = vjp_fn(mg.ones_like(out))                          # x.cos()
    """
    return _vjp(func, primals, None, has_aux)


def _vjp(func, primals, argnums, has_aux):
    # vjp, or with argnums only those primals differentiated (jacrev's); errors as vjp's
    api = "vjp(f, *primals)"
    with enable_grad():
        if argnums is None:
            diff, inputs, own, primals_spec = _differentiable(primals)
        else:
            argnums = _checked_argnums(argnums, len(primals))
            diff, inputs, own, primals_spec = _differentiable(_sliced(primals, argnums))
            diff = _replaced(primals, diff, argnums)
        with _running(own):
            output = func(*diff)
        output, aux = _split_aux(api, output, has_aux)
        aux = None if aux is None else _leaving(aux, own)
        flat_output, output_spec = _flatten(output)
        if not flat_output or len(flat_output) == 1 and flat_output[0] is None:
            raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                               f"(got output = {flat_output})")
        for out in flat_output:
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(out)}")
            if not (out.is_floating_point() or out.is_complex()):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {out.dtype}")
        result = _leaving(output, own)
        recordable = _reaches_outside(flat_output, own)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = is_grad_enabled()
        flat_cotangents, cotangents_spec = _flatten(cotangents)
        if cotangents_spec != output_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. cotangents: "
                               f"{_spec_text(cotangents_spec)}, primal output: "
                               f"{_spec_text(output_spec)}")
        found = _gradients(flat_output, inputs, flat_cotangents, retain_graph,
                           create_graph and recordable)
        return _leaving(_unflatten(found, primals_spec), own)

    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def _checked_argnums(argnums, count):
    # argnums with negative ones counted from the end, checked as torch checks them
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        checked = tuple(_checked_argnums(a, count) for a in argnums)
        if len(set(checked)) != len(checked):
            raise RuntimeError(f"argnums elements must be unique, got {checked}")
        return checked
    if not -count <= argnums < count:
        raise RuntimeError(f"Got argnum={argnums}, but only {count} positional inputs")
    return argnums % count


def _sliced(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _replaced(args, new, argnums):
    if isinstance(argnums, int):
        new, argnums = (new,), (argnums,)
    given = dict(zip(argnums, new))
    return tuple(given.get(i, arg) for i, arg in enumerate(args))


def _differentiable(tree):
    """``tree``'s tensors as this transform differentiates them: (the new tree, its tensors,
    the ids of those that are new leaves, its spec). A tensor that requires grad becomes a
    clone, so a gradient of the result reaches it (an outer transform's input)."""
    leaves, spec = _flatten(tree)
    inputs, own = [], set()
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if x.requires_grad:
            x = x.clone()
        else:
            x = x.detach().requires_grad_()
            x._transform_leaf = True         # outside this transform's run, a constant
            own.add(id(x))
        inputs.append(x)
    return _unflatten(inputs, spec), inputs, own, spec


class _Running(threading.local):
    """The leaves (``own`` id sets) of the differentiating transforms whose function this
    thread is running, outermost first."""

    def __init__(self):
        self.owns = []


_RUNNING = _Running()


@contextlib.contextmanager
def _running(own):
    # func's call inside a transform: its leaves are live for the transforms nested in it
    _RUNNING.owns.append(own)
    try:
        with transform_scope("grad"):
            yield
    finally:
        _RUNNING.owns.pop()


def _gradients(outputs, inputs, cotangents=None, retain_graph=True, create_graph=True):
    """Σ vᵀ·∂output/∂input for each input, zeros where unused. Callers record the backward
    (``create_graph``) only where the outputs reach beyond the transform's own leaves:
    otherwise nothing outside could differentiate the gradients again."""
    cotangents = [None] * len(outputs) if cotangents is None else cotangents
    pairs = [(out, v) for out, v in zip(outputs, cotangents) if out.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    outputs, cotangents = zip(*pairs)
    found = autograd_grad(outputs, inputs, cotangents, retain_graph=retain_graph,
                          create_graph=create_graph, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(found, inputs)]


def _reaches_outside(tensors, own):
    """Whether the history of ``tensors`` reaches a tensor that requires grad other than the
    transform's own leaves (``own``: ids): a parameter ``func`` closes over, an outer
    transform's input (the leaves of a nested transform that has returned are constants)."""
    stack_, seen = list(tensors), set()
    while stack_:
        t = stack_.pop()
        if t is None or not t.requires_grad:
            continue
        node = t.grad_fn
        if node is None:
            if id(t) not in own and (not getattr(t, "_transform_leaf", False) or
                                     any(id(t) in live for live in _RUNNING.owns)):
                return True
        elif id(node) not in seen:
            seen.add(id(node))
            stack_.extend(node.inputs)
    return False


def _leaving(tree, own):
    """``tree``'s tensors as results of the transform: detached where their history reaches
    only its own leaves, as torch's results leave their transform's level."""
    leaves, spec = _flatten(tree)
    for t in leaves:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
    return _unflatten([t.detach() if t.requires_grad and not _reaches_outside([t], own)
                       else t for t in leaves], spec)


# ---- Jacobians and Hessians: a backward per output element
def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """``jacrev(func)(*args)``: the Jacobian ∂func/∂args[argnums] by reverse mode
    (``torch.func.jacrev``): one ``vjp`` and a backward per output element, the rows of the
    identity as cotangents. Nests (``jacrev(jacrev(f))``: the Hessian).

    Args:
        func: a function returning a Tensor or a pytree of Tensors.
        argnums: an int, or a tuple of ints (a tuple of Jacobians per output).
        has_aux: ``func`` returns ``(output, aux)``; the result is ``(jacobian, aux)``.
        chunk_size: checked and taken; the rows run one backward at a time whatever it is.

    Shape:
        the Jacobian of an output of shape (*O) by an argument of shape (*I): (*O, *I).

    Example:
        >>> jacrev(lambda x: x.sin())(x)                        # (5,) -> (5, 5): diag(cos x)
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        return _jacobian("jacrev", func, argnums, has_aux, args)
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """``jacfwd(func)(*args)``: the Jacobian ∂func/∂args[argnums] (``torch.func.jacfwd``),
    torch's forward-mode result computed here by the reverse passes of ``jacrev`` (there is
    no forward-mode AD): the same values, one backward per output element instead of one
    forward per input element. ``randomness`` as ``vmap``'s: "error" refuses a draw in
    ``func``; "same" and "different" let ``func``'s one call draw.

    Example:
        >>> jacfwd(lambda x, y: x * y, argnums=(0, 1))(x, y)   # (diag(y), diag(x))
    """
    @functools.wraps(func)
    def wrapper(*args):
        _check_randomness(randomness)
        draws = _Draws(randomness)

        def watched(*inner):
            value = func(*inner)
            draws.after_call()
            return value
        return _jacobian("jacfwd", watched, argnums, has_aux, args)
    return wrapper


def hessian(func, argnums=0):
    """``hessian(func)(*args)``: the second derivatives of ``func``'s output with respect to
    ``args[argnums]``, ``jacfwd(jacrev(func, argnums), argnums)`` (``torch.func.hessian``).

    Shape:
        an output of shape (*O) and an argument of shape (*I): (*O, *I, *I).

    Example:
        >>> hessian(lambda x: x.sin().sum())(x)                 # diag(-x.sin())
    """
    return jacfwd(jacrev(func, argnums), argnums)


def _jacobian(api, func, argnums, has_aux, args):
    _check_real(api, args, "inputs")
    output, vjp_fn, *aux = _vjp(func, args, argnums, has_aux)
    flat_output, output_spec = _flatten(output)
    _check_real(api, flat_output, "outputs")
    flat_primals, primals_spec = _flatten((args[argnums],) if isinstance(argnums, int)
                                          else tuple(args[i] for i in argnums))
    numels = [out.numel() for out in flat_output]
    rows = _flatten(vmap(vjp_fn)(_unflatten(_standard_basis(flat_output), output_spec)))[0]
    by_input = [[block.reshape(tuple(out.shape) + tuple(primal.shape))      # (*O, *I)
                 for block, out in zip(row.split(numels), flat_output)]
                for row, primal in zip(rows, flat_primals)]            # row: (ΣO, *I)
    by_output = [_unflatten(blocks, primals_spec) for blocks in zip(*by_input)]
    if isinstance(argnums, int):
        by_output = [blocks[0] for blocks in by_output]
    jacobian = _unflatten(by_output, output_spec)
    return (jacobian, aux[0]) if has_aux else jacobian


def _standard_basis(flat_output):
    # the identity of the outputs' N elements, split by output: (N, *output.shape) each
    total = sum(out.numel() for out in flat_output)
    identity = eye(total, dtype=flat_output[0].dtype, device=flat_output[0].device)
    basis, start = [], 0
    for out in flat_output:
        block = identity[:, start:start + out.numel()].to(dtype=out.dtype)
        basis.append(block.reshape((total,) + tuple(out.shape)))
        start += out.numel()
    return basis


def _check_real(api, tree, what):
    for i, t in enumerate(_flatten(tree)[0]):
        if isinstance(t, Tensor) and t.is_complex():
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


# ---- vmap: func once per index of the mapped dim, the outputs stacked
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``vmap(func)(*args)``: ``func`` mapped over a dim of its inputs (``torch.vmap``,
    ``torch.func.vmap``): output[..., b, ...] = func(args sliced at b along their ``in_dims``),
    b along ``out_dims``. Computed here by calling ``func`` once per index b on the slices
    and stacking what it returns: torch's values for a function without side effects,
    slower than torch's batching rules by about one Python call of ``func`` per index.
    Keyword arguments reach every call unmapped. Nests: ``vmap(vmap(f))``,
    ``vmap(grad(f))``.

    Args:
        func: a function of one or more arguments returning a Tensor or a pytree of Tensors.
        in_dims: the mapped dim of each argument: an int for all, or a tuple with an entry
            per argument (an int, None for an argument not mapped, or a pytree of those
            matching the argument's).
        out_dims: where the mapped dim goes in each output: an int, or a tuple with an
            entry per output; None for an output that is the same at every index.
        randomness: "error" raises if ``func`` draws from the default generator; "same"
            gives every index the same draws; "different" lets each index draw its own.
        chunk_size: None or a positive int, taken; the indices run one call at a time
            whatever it is.

    Shape:
        an input (B, *S) mapped along 0 reaches ``func`` as (*S); an output (*T) of
        ``func`` comes back (B, *T) for ``out_dims=0``.

    Example:
        >>> batched_dot = vmap(mg.dot)                   # (B, D), (B, D) -> (B,)
        >>> vmap(mg.dot, in_dims=(0, None))(x, y)        # (B, D), (D,) -> (B,)
    """
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap(func, in_dims, out_dims, randomness, args, kwargs)
    return wrapped


def _vmap(func, in_dims, out_dims, randomness, args, kwargs):
    _check_out_dims(out_dims, func)
    size, flat_in_dims, flat_args, args_spec = _batched_inputs(in_dims, args, func)
    # each mapped leaf as its slices (one node: their gradients meet in one backward); no
    # index: one call on zeros of a slice's shape gives the outputs' shapes
    slices = [None if dim is None else arg.unbind(dim) if size else [_slice_zeros(arg, dim)]
              for arg, dim in zip(flat_args, flat_in_dims)]
    draws, outputs = _Draws(randomness), []
    for b in range(max(size, 1)):
        draws.before_call()
        flat = [arg if pieces is None else pieces[b] for arg, pieces in zip(flat_args, slices)]
        with transform_scope("vmap"):
            outputs.append(func(*_unflatten(flat, args_spec), **kwargs))
        draws.after_call()
    return _stacked(outputs, out_dims, func, size)


def _slice_zeros(arg, dim):
    return zeros(arg.shape[:dim] + arg.shape[dim + 1:], dtype=arg.dtype, device=arg.device)


def _batched_inputs(in_dims, args, func):
    """(batch size, the in_dim of each leaf of ``args``, counted from 0, the leaves, their
    spec), checked as torch's vmap checks them."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         "to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    flat_args, spec = _flatten(args)
    flat_in_dims = _broadcast(in_dims, spec)
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if flat_in_dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {_spec_text(_flatten(in_dims)[1])} but inputs "
                         f"has structure {_spec_text(spec)}.")
    for i, (arg, dim) in enumerate(zip(flat_args, flat_in_dims)):
        if dim is None:
            continue
        if not isinstance(dim, int):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but in_dim must be either "
                             "an integer dimension or None.")
        if not isinstance(arg, Tensor):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but the input is of type "
                             f"{type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        if not -arg.dim() <= dim < arg.dim():
            raise ValueError(f"{where}: Got in_dim={dim} for some input, but that input is a "
                             f"Tensor of dimensionality {arg.dim()} so expected in_dim to "
                             f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        flat_in_dims[i] = dim % arg.dim()
    sizes = [arg.shape[dim] for arg, dim in zip(flat_args, flat_in_dims) if dim is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, spec


def _stacked(outputs, out_dims, func, size):
    """The per-index outputs of ``func`` as torch's vmap returns them: each output stacked
    along its out_dim; one whose out_dim is None returned once (it must not vary)."""
    name, (first_leaves, spec) = _name(func), _flatten(outputs[0])
    lone = isinstance(outputs[0], Tensor) and isinstance(out_dims, tuple) and len(out_dims) == 1
    flat_out_dims = _broadcast(out_dims[0] if lone else out_dims, spec)   # torch's edge case
    if flat_out_dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{_spec_text(_flatten(out_dims)[1])} but outputs has structure "
                         f"{_spec_text(spec)}.")
    columns = [first_leaves]
    for out in outputs[1:]:
        leaves, other = _flatten(out)
        if other != spec:
            raise ValueError(f"vmap({name}, ...): `{name}` returned outputs of different "
                             f"structures at different indices: {_spec_text(spec)} and "
                             f"{_spec_text(other)}")
        columns.append(leaves)
    stacked = []
    for values, dim in zip(zip(*columns), flat_out_dims):
        if dim is None:
            stacked.append(_unbatched(values, name))
        elif not isinstance(values[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(values[0])}. Did you mean to set out_dims= to None for "
                             "output?")
        else:
            out = stack(values, dim=dim)
            stacked.append(out if size else out.narrow(dim, 0, 0))
    return _unflatten(stacked, spec)


def _unbatched(values, name):
    # an output with out_dim None: the same at every index (torch: not batched), given once
    first = values[0]
    if isinstance(first, Tensor) and not all(
            v is first or isinstance(v, Tensor) and v.shape == first.shape
            and bool((v == first).all()) for v in values[1:]):
        raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                         "out_dim is None")
    return first


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    if any(not (d is None or isinstance(d, int)) for d in _flatten(out_dims)[0]):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be "
                         "an int, None or a python collection of ints representing where in "
                         "the outputs the vmapped dimension should appear.")


def _check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def _name(func):
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", None) or repr(func)


class _Draws:
    """The default generator around the calls of one vmap: "error" refuses a draw (and puts
    the state back), "same" starts every call from the state before the first, "different"
    lets the stream run on."""

    def __init__(self, randomness):
        self.randomness = randomness
        self.state = None if randomness == "different" else \
            streams.default_generator.state_array()

    def before_call(self):
        if self.randomness == "same":
            streams.default_generator.set_state(self.state)

    def after_call(self):
        if self.randomness == "error" and \
                not np.array_equal(streams.default_generator.state_array(), self.state):
            streams.default_generator.set_state(self.state)
            raise RuntimeError("vmap: called random operation while in randomness error mode. "
                               "Please either use the 'same' or 'different' randomness flags "
                               "on vmap or perform the randomness operation out of vmap")

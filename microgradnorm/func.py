"""``torch.func``: ``functional_call`` and ``stack_module_state``, which call a Module with
given tensors, and the function transforms ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``,
``jacfwd``, ``hessian`` and ``vmap``, with torch's signatures, errors and results, so the
per-sample-gradient, ensembling, Jacobian and Hessian recipes run as written.

``functional_call`` runs a Module with some of its parameters and buffers replaced by given
tensors for one call, the way ensembles, meta-learning loops and hypernetworks call a model
with weights they computed. The module's own tensors come back afterwards, whatever the call
did; gradients flow to the tensors given.

``stack_module_state`` stacks the tensors of an ensemble of Modules for ``vmap``;
``replace_all_batch_norm_modules_`` turns off the running statistics of a model's BatchNorms
for it. ``functionalize`` returns its function: this eager engine has no traced program
whose mutations it would rewrite.

The transforms live in ``func_transforms.py``, which says how each is computed by the one
reverse-mode engine: ``grad`` and ``vjp`` differentiate ``func`` at fresh inputs with
``mg.autograd.grad`` (recorded where an outer transform needs it, so they nest); ``jacrev``,
``jacfwd`` and ``hessian`` are a backward per output element (no forward-mode AD here); and
``vmap`` calls ``func`` once per index of the mapped dim and stacks the outputs along
``out_dims`` (torch's values for a function without side effects, one Python call per index
where torch runs one batched op).
"""

import functools

from .func_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, vjp, vmap
from .func_jvp import jvp, linearize
from .nn.module import Module
from .nn.normalization import _BatchNorm
from .ops import stack
from .tensor import Tensor

__all__ = ["functional_call", "functionalize", "grad", "grad_and_value", "hessian", "jacfwd",
           "jacrev", "jvp", "linearize", "replace_all_batch_norm_modules_",
           "stack_module_state", "vjp", "vmap"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers of
    ``parameter_and_buffer_dicts`` (one dict of ``{"0.weight": tensor}`` or several, names
    as ``named_parameters()`` gives them) in place of the module's own, for this call only.

    Args:
        module: the Module to call.
        parameter_and_buffer_dicts: a dict, or a tuple/list of dicts that share no name.
        args: the positional argument (a tuple of them, or one value).
        kwargs: keyword arguments of the call.
        tie_weights: a tensor given for one name of a tied parameter (one Parameter under
            two names) replaces it under every name, as torch's.
        strict: every parameter and buffer must be given, and no other name.

    Example:
        >>> y = functional_call(model, {"weight": w, "bias": b}, (x,))
    """
    if not isinstance(module, Module):
        raise TypeError(f"functional_call: module must be an nn.Module, got "
                        f"{type(module).__name__}")
    dicts = parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts,
                                                     (tuple, list)) \
        else (parameter_and_buffer_dicts,)
    given = {}
    for d in dicts:
        if not isinstance(d, dict):
            raise TypeError(f"functional_call: expected dicts of tensors, got "
                            f"{type(d).__name__}")
        repeated = sorted(set(given) & set(d))
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        given.update(d)
    given = _tied(module, given) if tie_weights else given
    _check_names(module, given, strict)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    swapped = []
    try:
        for name, value in given.items():
            swapped.append(_swap(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, table, key, old, old_attribute in reversed(swapped):
            if table is not None:
                table[key] = old
            if old_attribute is _ABSENT:
                owner.__dict__.pop(key, None)
            else:
                owner.__dict__[key] = old_attribute


_ABSENT = object()


def _named_tensors(module):
    # {name: tensor} of every parameter and buffer, tied names included (a shared
    # Parameter under each of its names)
    return {**dict(module.named_parameters(remove_duplicate=False)),
            **dict(module.named_buffers(remove_duplicate=False))}


def _tied(module, given):
    # a tensor given under one name of a Parameter also goes under its other names; two
    # different tensors for one tied Parameter are torch's ValueError
    names_of = {}
    for name, tensor in _named_tensors(module).items():
        names_of.setdefault(id(tensor), []).append(name)
    out = dict(given)
    for names in names_of.values():
        values = {n: given[n] for n in names if n in given}
        if len(names) < 2 or not values:
            continue
        if len({id(v) for v in values.values()}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(values)}, "
                             "which are tied. Consider using tie_weights=False")
        value = next(iter(values.values()))
        out.update((n, value) for n in names)
    return out


def _check_names(module, given, strict):
    tables = _named_tensors(module)
    for name, value in given.items():
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"functional_call: {name!r} must be a Tensor, got "
                            f"{type(value).__name__}")
    if strict:
        unexpected = sorted(set(given) - set(tables))
        missing = sorted(set(tables) - set(given))
        if unexpected or missing:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected)
                             + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError("\n".join(lines))


def _swap(module, name, value):
    # put ``value`` under ``name``: in the submodule's parameter or buffer table and in its
    # attributes, which Module keeps in step for fast reads (another name: a plain attribute
    # of the submodule, as torch's setattr); returns what undoes it
    *path, key = name.split(".")
    owner = module
    for part in path:
        owner = owner._modules.get(part)
        if owner is None:
            raise AttributeError(f"functional_call: {type(module).__name__} has no submodule "
                                 f"{'.'.join(path)!r} (for {name!r})")
    table = next((t for t in (owner._parameters, owner._buffers) if key in t), None)
    old = None if table is None else table[key]
    old_attribute = owner.__dict__.get(key, _ABSENT)
    if table is not None:
        table[key] = value
    owner.__dict__[key] = value
    return owner, table, key, old, old_attribute


def stack_module_state(models):
    """The parameters and buffers of ``models`` (Modules of one class, in one mode) stacked
    along a new first dim, two dicts indexed by name, for ``vmap`` over an ensemble
    (``torch.func.stack_module_state``). Stacked parameters are new leaves that require
    grad, unrelated to the models' own (an optimizer takes them as they are).

    Args:
        models: a list or ``nn.ModuleList`` of M Modules.

    Shape:
        each value: (M, *the models' tensor's shape).

    Example:
        >>> params, buffers = stack_module_state(models)
        >>> call = lambda p, b, x: functional_call(models[0], (p, b), (x,))
        >>> outputs = vmap(call, in_dims=(0, 0, None))(params, buffers, x)   # (M, N, out)
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return ({name: _stacked_leaf([p[name] for p in params], name) for name in params[0]},
            {name: _stacked_leaf([b[name] for b in buffers], name) for name in buffers[0]})


def _stacked_leaf(tensors, name):
    requires_grad = {t.requires_grad for t in tensors}
    if len(requires_grad) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    stacked = stack(tensors)
    return stacked.detach().requires_grad_() if True in requires_grad else stacked


_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func, *, remove="mutations"):
    """``func`` with its in-place ops and views rewritten as out-of-place ones
    (``torch.func.functionalize``). Torch rewrites the ops a tracer records, and writes the
    changes of an input back into it at the end; this eager engine records no program to
    rewrite, so the function returned runs ``func`` as it is: the same values, the same
    changes of the inputs.

    Args:
        func: the function.
        remove: ``"mutations"`` (default) or ``"mutations_and_views"``, as torch's
            (RuntimeError otherwise).

    Returns:
        A function of ``func``'s arguments (its name and docstring ``func``'s).

    Example:
        >>> f = functionalize(lambda x: x.clone().add_(1))
        >>> f(mg.zeros(2))                       # tensor([1., 1.])
    """
    if remove not in _REMOVE:
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}. Valid options are {_REMOVE}")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)

    return functionalized


def replace_all_batch_norm_modules_(root):
    """Stop every BatchNorm in ``root`` (``root`` too) tracking running statistics, in place
    (``torch.func.replace_all_batch_norm_modules_``): ``running_mean``, ``running_var`` and
    ``num_batches_tracked`` become None and ``track_running_stats`` False, so each normalizes
    by its batch's statistics, in training and in eval mode, as ``vmap`` over a model needs.

    Args:
        root: a Module.

    Returns:
        ``root``.

    Example:
        >>> net = replace_all_batch_norm_modules_(nn.Sequential(nn.BatchNorm1d(3)))
        >>> net[0].running_mean is None
        True
    """
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root

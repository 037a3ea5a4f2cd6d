"""``torch.func``'s ``functional_call``: run a Module with some of its parameters and buffers
replaced by given tensors for one call, the way ensembles, meta-learning loops and
hypernetworks call a model with weights they computed. The module's own tensors come back
afterwards, whatever the call did; gradients flow to the tensors given.

``vmap``, ``grad`` and the other transforms of ``torch.func`` are not here: the engine has
no batching rule (higher derivatives: ``mg.autograd.grad(..., create_graph=True)`` and
``mg.autograd.functional``).
"""

from .nn.module import Module
from .tensor import Tensor

__all__ = ["functional_call"]


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
    if table is not None:
        table[key] = value
    old_attribute = owner.__dict__.get(key, _ABSENT)
    owner.__dict__[key] = value
    return owner, table, key, old, old_attribute

r"""Pruning, ``torch.nn.utils.prune``: zeroing entries of a module's parameter through a mask.

Pruning the parameter ``name`` of a module moves it to the parameter ``name + "_orig"``,
adds the buffer ``name + "_mask"`` (1 kept, 0 pruned) and makes ``name`` a plain
attribute, the product

.. math:: \text{name} = \text{name\_mask} \odot \text{name\_orig},

recomputed before every forward by the pruning method itself, registered as a forward
pre-hook (``module._forward_pre_hooks``). The product is in the graph, so the gradient
of ``name_orig`` is the masked one. Pruning the same parameter again composes the methods
in a :class:`PruningContainer`: the new method only sees the entries still kept
(unstructured), or the channels still kept along its ``dim`` (structured). ``remove``
makes the pruning permanent: ``name`` a parameter again, holding the masked values.

The masks are torch's: the same entries for the same input and, for the random methods,
the same seed (``mg.manual_seed``), since the draws are the default generator's torch
draws (``rand_like`` for the unstructured method, ``rand(channels)`` for the structured
one) and the choice among equal values is that of torch's ``topk``
(``ops.sorting.topk_indices``).
"""

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import numpy as np

from .. import backend, factories, ops
from ..ops import sorting
from ..ops.sorting import topk_indices
from ..tensor import Tensor

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured",
           "LnStructured", "PruningContainer", "RandomStructured", "RandomUnstructured",
           "custom_from_mask", "global_unstructured", "identity", "is_pruned",
           "l1_unstructured", "ln_structured", "random_structured", "random_unstructured",
           "remove"]


def _host(t):
    return backend.to_numpy(t.detach()._array)


def _index(indices, like):
    return Tensor(backend.to_device(indices, like.device), dtype=indices.dtype)


class BasePruningMethod(ABC):
    """The base of every pruning method: ``compute_mask`` says which entries stay,
    ``apply`` prunes a module's parameter with a new method (composing it with one already
    there), the instance is the module's forward pre-hook that recomputes the pruned
    parameter, and ``remove`` makes the pruning permanent.

    A subclass sets ``PRUNING_TYPE`` (``"unstructured"``, ``"structured"``, with a ``dim``
    attribute, or ``"global"``), which says what part of a tensor it sees when composed.

    Example:
        >>> class EveryOther(prune.BasePruningMethod):
        ...     PRUNING_TYPE = "unstructured"
        ...     def compute_mask(self, t, default_mask):
        ...         mask = default_mask.clone(); mask.view(-1)[::2] = 0; return mask
        >>> EveryOther.apply(layer, "bias")
    """

    _tensor_name = None

    def __call__(self, module, inputs):
        """The forward pre-hook: sets ``module.<name>`` to the masked parameter."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask of ``t`` (same shape), pruning more of what ``default_mask`` (the
        mask so far) keeps."""

    def apply_mask(self, module):
        """The masked parameter, ``name_mask * name_orig`` (in the graph of
        ``name_orig``)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module``'s parameter ``name`` with ``cls(*args, **kwargs)``, composed
        with the pruning already on it; returns the method now in the pre-hooks.

        Args:
            module: the Module holding the tensor.
            name: the parameter's name in ``module``.
            importance_scores: a tensor of the parameter's shape ranking its entries
                (the parameter itself by default).
        """
        hooks = module._forward_pre_hooks
        saved_hooks = list(hooks.items())      # _composite takes the old pruning hook out
        method = _composite(cls, module, name, args, kwargs)
        first = not isinstance(method, PruningContainer)
        try:
            orig = getattr(module, name)
            importance_scores = _scores(importance_scores, orig,
                                        f"parameter {name} of {module}")
        except Exception:
            _restore(module, method, first, saved_hooks, None)
            raise
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = factories.ones_like(orig)
            old_mask = None
        else:
            old_mask = getattr(module, name + "_mask")
            default_mask = old_mask.detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:      # a failed call changes nothing: the parameter goes back
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            _restore(module, method, first, saved_hooks, old_mask)
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times its mask (``compute_mask`` of ``importance_scores``, ``t`` by
        default), without touching any module."""
        importance_scores = _scores(importance_scores, t, "tensor t")
        if default_mask is None:
            default_mask = factories.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``name`` a parameter again holding the masked
        values, ``name_orig`` and ``name_mask`` gone. The pre-hook is the caller's to drop
        (``prune.remove`` does both)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 "removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _scores(importance_scores, like, what):
    """The scores a mask is computed from: ``like`` where None is given, else
    ``importance_scores`` of ``like``'s shape (torch's AssertionError, naming ``what``)."""
    if importance_scores is None:
        return like
    if tuple(importance_scores.shape) != tuple(like.shape):
        raise AssertionError(f"importance_scores should have the same shape as {what}, got "
                             f"{tuple(importance_scores.shape)} vs {tuple(like.shape)}")
    return importance_scores


def _restore(module, method, first, saved_hooks, old_mask):
    # after a failed apply: the pre-hooks, the container's methods and the mask as they were
    # (torch's apply leaves a pruned parameter without its hook there)
    hooks = module._forward_pre_hooks
    hooks.clear()
    hooks.update(saved_hooks)
    if not first:
        method._pruning_methods = method._pruning_methods[:-1]
        if old_mask is not None:
            module.register_buffer(method._tensor_name + "_mask", old_mask)


def _composite(cls, module, name, args, kwargs):
    # the new method, or the container it joins when `name` is already pruned
    found = [(key, hook) for key, hook in module._forward_pre_hooks.items()
             if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(found) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    method = cls(*args, **kwargs)
    method._tensor_name = name
    for key, _ in found:
        del module._forward_pre_hooks[key]
    if not found:
        return method
    old = found[0][1]
    if not isinstance(old, PruningContainer):
        old = PruningContainer(old)
    old.add_pruning_method(method)
    return old


class PruningContainer(BasePruningMethod):
    """The pruning methods applied in turn to one tensor; its mask is the last method's,
    computed on what the earlier ones kept.

    Args:
        *args: the methods (each with the same ``_tensor_name``).

    Example:
        >>> prune.l1_unstructured(layer, "weight", 0.3); prune.l1_unstructured(layer,
        ...     "weight", 0.3)
        >>> list(layer._forward_pre_hooks.values())[0]   # a PruningContainer of two
    """

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Append ``method`` (a BasePruningMethod acting on the same tensor)."""
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the last method's mask written over the part of ``t`` it
        sees: the kept entries (unstructured), the kept channels along its ``dim``
        (structured), or all of ``t`` (global)."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            where = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            others = [d for d in range(ndim) if d != dim]
            keep = default_mask.sum(dim=others) != 0
            where = tuple(keep if d == dim else slice(None) for d in range(ndim))
        elif kind == "global":
            where = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[where], default_mask=default_mask[where])
        new_mask[where] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """A pruning method that prunes nothing (its mask all ones): gives any parameter the
    ``_orig``/``_mask`` form.

    Example:
        >>> prune.Identity.apply(layer, "weight")
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Prune nothing of ``module.<name>``, giving it the pruned form."""
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.nelement()
        count = _count(self.amount, size)
        _check_fits(count, size)
        mask = default_mask.clone()
        if count != 0:
            mask.view(-1)[_index(self._pick(t, count), mask)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prune ``amount`` entries of the tensor drawn at random (a uniform draw per entry,
    ``rand_like``, the ``amount`` largest draws pruned, as torch's).

    Args:
        amount: a float in [0, 1], the fraction pruned (rounded to the nearest count), or
            a non-negative int, the count.

    Example:
        >>> mg.manual_seed(0); prune.RandomUnstructured.apply(layer, "weight", amount=0.5)
    """

    def _pick(self, t, count):
        draws = factories.rand_like(t.detach())
        return topk_indices(_host(draws), count, largest=True)

    @classmethod
    def apply(cls, module, name, amount):
        """Prune ``amount`` random entries of ``module.<name>``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prune the ``amount`` entries of smallest absolute value (ties broken as torch's
    ``topk``).

    Args:
        amount: a float in [0, 1], the fraction pruned, or a non-negative int, the count.

    Example:
        >>> prune.L1Unstructured.apply(layer, "weight", amount=0.2)
    """

    def _pick(self, t, count):
        return topk_indices(np.abs(_host(t)), count, largest=False)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Prune the ``amount`` entries of ``module.<name>`` whose ``importance_scores``
        (the parameter's by default) are smallest in absolute value."""
        return super().apply(module, name, amount=amount,
                             importance_scores=importance_scores)


def _channel_mask(t, dim, kept):
    # ones on the kept channels (a bool mask or indices) of `dim`, zeros elsewhere
    mask = factories.zeros_like(t)
    mask[tuple(kept if d == dim else slice(None) for d in range(t.dim()))] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` whole channels along ``dim``, drawn at random (``rand(channels)``,
    the channels whose draw is at most the ``amount``-th smallest pruned, as torch's).

    Args:
        amount: a float in [0, 1], the fraction of channels pruned, or a non-negative int.
        dim: the dim whose channels are pruned (default -1).

    Example:
        >>> prune.RandomStructured.apply(conv, "weight", amount=2, dim=0)
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        size, count = _structured_count(t, self.amount, self.dim)
        if count == 0:
            return default_mask
        draws = factories.rand(size)
        threshold = sorting.kthvalue(draws, k=count).values
        mask = _channel_mask(t, self.dim, draws > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` channels along ``dim`` of smallest ``n``-norm (the norm over
    every other dim, ``mg.norm(t, p=n, dim=...)``).

    Args:
        amount: a float in [0, 1], the fraction of channels pruned, or a non-negative int.
        n: the norm's order (as ``p`` of ``mg.norm``: an int, float, ``inf``, ``"fro"``).
        dim: the dim whose channels are pruned (default -1).

    Example:
        >>> prune.LnStructured.apply(conv, "weight", amount=0.5, n=2, dim=0)
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        size, count = _structured_count(t, self.amount, self.dim)
        if self.dim < -t.dim():
            raise IndexError(f"Invalid index {self.dim} for tensor of size {tuple(t.shape)}")
        dim = self.dim % t.dim()
        norms = ops.norm(t.detach(), p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        kept = topk_indices(_host(norms), size - count, largest=True)
        if count == 0:
            return default_mask
        mask = _channel_mask(t, dim, _index(kept, t))
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest
        ``n``-norm of ``importance_scores`` (the parameter's by default)."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune with a given mask (multiplied into the mask so far).

    Args:
        mask: a tensor of the parameter's shape, 0 where pruned.

    Example:
        >>> prune.CustomFromMask.apply(layer, "bias", mask=mg.tensor([0., 1, 1]))
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise AssertionError(f"default_mask shape {tuple(default_mask.shape)} must match "
                                 f"self.mask shape {tuple(self.mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Prune ``module.<name>`` with ``mask``."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Give ``module.<name>`` the pruned form with an all-ones mask; returns ``module``.

    Example:
        >>> prune.identity(layer, "bias"); layer.bias_mask
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` random entries of ``module.<name>`` (see
    :class:`RandomUnstructured`); returns ``module``.

    Example:
        >>> prune.random_unstructured(layer, "weight", amount=0.3)
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` of smallest absolute value (see
    :class:`L1Unstructured`); returns ``module``.

    Example:
        >>> prune.l1_unstructured(layer, "weight", amount=0.2)
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim`` (see
    :class:`RandomStructured`); returns ``module``.

    Example:
        >>> prune.random_structured(conv, "weight", amount=0.5, dim=0)
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest
    ``n``-norm (see :class:`LnStructured`); returns ``module``.

    Example:
        >>> prune.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune several parameters as one: their entries ranked together by an unstructured
    ``pruning_method`` (e.g. ``L1Unstructured``, ``amount`` counting over all), each
    parameter then pruned by its slice of the joint mask (a :class:`CustomFromMask`).

    Args:
        parameters: an iterable of ``(module, name)`` pairs.
        pruning_method: an unstructured BasePruningMethod subclass.
        importance_scores: a dict from ``(module, name)`` to a tensor of that parameter's
            shape (the parameter's own values for those missing).
        **kwargs: the method's arguments (``amount=``).

    Example:
        >>> prune.global_unstructured([(l1, "weight"), (l2, "weight")],
        ...                           pruning_method=prune.L1Unstructured, amount=0.2)
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = ops.cat([importance_scores.get((m, n), getattr(m, n)).reshape(-1)
                      for m, n in parameters])
    default_mask = ops.cat([(getattr(m, n + "_mask") if hasattr(m, n + "_mask")
                             else factories.ones_like(getattr(m, n))).reshape(-1)
                            for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the '
                        f"`pruning_method`. Found method {pruning_method} of type "
                        f"{method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        size = param.numel()
        custom_from_mask(module, name, mask=final[start:start + size].view_as(param))
        start += size


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` with ``mask`` (see :class:`CustomFromMask`); returns
    ``module``.

    Example:
        >>> prune.custom_from_mask(layer, "bias", mask=mg.tensor([0., 1, 1]))
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent: ``name`` a parameter holding the
    masked values, the ``_orig``, ``_mask`` and pre-hook gone; returns ``module``.
    A ValueError if ``name`` is not pruned.

    Example:
        >>> prune.remove(layer, "weight"); "weight" in dict(layer.named_parameters())
        True
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before "
                     "pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or any of its submodules holds a pruning pre-hook.

    Example:
        >>> prune.is_pruned(model)
        False
    """
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())


def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or (not integral and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or "
                         "a non-negative integer")


def _structured_count(t, amount, dim):
    """A structured method's checks of ``t`` and ``dim``, then (the channels along ``dim``,
    how many of them ``amount`` prunes)."""
    _check_structured(t)
    _check_dim(t, dim)
    size = t.shape[dim]
    count = _count(amount, size)
    _check_fits(count, size)
    return size, count


def _check_fits(amount, size):
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                         f"to prune={size}")


def _check_structured(t):
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional "
                         f"tensors. Found tensor of shape {tuple(t.shape)} with {t.dim()} "
                         "dims")


def _check_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _count(amount, size):
    # an int is a count, a float a fraction rounded half to even, as Python's round
    return amount if isinstance(amount, numbers.Integral) else round(amount * size)

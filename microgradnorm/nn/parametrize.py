r"""Parametrizations (``torch.nn.utils.parametrize``): a module's parameter or buffer
replaced by a function of unconstrained tensors,

.. math:: \text{module.weight} = P_k(\cdots P_1(P_0(\text{original}))),

recomputed at every access (once per ``cached()`` block). As torch's, the module's class
becomes a subclass, ``Parametrized<Name>``, with a property per parametrized name; the
functions and the originals live in ``module.parametrizations.<name>`` (a
``ParametrizationList``: ``original``, or ``original0``, ``original1``, ... when the first
function's ``right_inverse`` returns several tensors), so the state dict keys are torch's
(``parametrizations.weight.original``). Each access is a forward of the functions, so the
gradient reaches the originals through the graph."""

import contextlib
import copy
import copyreg
from collections.abc import Sequence

from ..autograd import no_grad
from ..tensor import Tensor
from .container import ModuleDict, ModuleList
from .module import Module, Parameter, bind_tables

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "transfer_parametrizations_and_params",
           "type_before_parametrizations"]

_cache_depth = [0]          # how many cached() blocks are open
_cache = {}                 # (id(module), name) -> the tensor computed in the block


@contextlib.contextmanager
def cached():
    """Compute each parametrized tensor once inside the block, at its first access, and
    reuse it (torch's ``parametrize.cached``): a module that reads its weight several times
    per step, or a recurrent loop, runs the parametrization once. Blocks nest; the cache is
    emptied when the outermost one exits.

    Example:
        >>> with nn.utils.parametrize.cached():
        ...     y = rnn(x)
    """
    _cache_depth[0] += 1
    try:
        yield
    finally:
        _cache_depth[0] -= 1
        if not _cache_depth[0]:
            _cache.clear()


def _register_parameter_or_buffer(module, name, tensor):
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def _set_data(dest, src):
    # torch's dest.set_(src): dest keeps its identity (an optimizer holds it) and takes
    # src's memory; the version moves
    if dest is not src:
        dest.data = src
        dest._bump_version()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its original(s): the
    ``module.parametrizations.<name>`` that ``register_parametrization`` makes.

    Calling it computes the parametrized tensor from the originals; ``right_inverse(value)``
    writes the originals so that it computes ``value`` (assigning ``module.<name>``).

    Args:
        modules: the parametrizations, at least one.
        original: the parameter or buffer parametrized.
        unsafe: skip the checks that the result keeps the original's shape and dtype.
    """

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        # originals = right_inverse of the last ... the first parametrization (the identity
        # where one has none or raises NotImplementedError)
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        shape, dtype, data = original.shape, original.dtype, original.data
        if self.is_tensor:
            self._register_one(original, new)
        else:
            self._register_many(original, new)
        if not self.unsafe:
            try:           # against the tensor as it was: right_inverse may have reshaped it
                self._check_result(shape, dtype)
            except Exception:
                _set_data(original, data)                   # a refused call changes nothing
                raise

    def _register_one(self, original, new):
        # the original keeps its identity, so an optimizer built before still holds it
        for what, before, after in (("dtype", original.dtype, new.dtype),
                                    ("device", original.device, new.device)):
            if before != after:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change "
                                 f"the {what}.\noriginal.{what}: {before}\n"
                                 f"right_inverse(original).{what}: {after}")
        with no_grad():
            _set_data(original, new)
        _register_parameter_or_buffer(self, "original", original)

    def _register_many(self, original, new):
        for i, tensor in enumerate(new):
            if not isinstance(tensor, Tensor):
                raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                 f"tensors (list, tuple...). Got element {i} of the sequence "
                                 f"with type {type(tensor).__name__}.")
            if isinstance(original, Parameter):
                tensor = Parameter(tensor, original.requires_grad)
            tensor.requires_grad_(original.requires_grad)
            _register_parameter_or_buffer(self, f"original{i}", tensor)

    def _check_result(self, shape, dtype):
        result = self()
        if not isinstance(result, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got "
                             f"{type(result).__name__}.")
        for what, before, after in (("dtype", dtype, result.dtype),
                                    ("shape", shape, result.shape)):
            if before != after:
                raise ValueError(f"Registering a parametrization may not change the {what} "
                                 f"of the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized {what}: {before}\n"
                                 f"parametrized {what}: {after}")

    def right_inverse(self, value):
        """Set the originals so that this list computes ``value``: each parametrization's
        ``right_inverse``, last to first (RuntimeError where one has none)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_data(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got "
                                 f"{type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError(f"'right_inverse' must return a sequence of tensors. "
                                     f"Got element {i} of type {type(tensor).__name__}.")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{tensor.dtype} while `original{i}` has dtype "
                                     f"{original_i.dtype}")
                _set_data(original_i, tensor)

    def forward(self):
        """The parametrized tensor: the first parametrization of the original(s), each next
        one of the previous result."""
        first, *rest = list(self)
        if self.is_tensor:
            x = first(self.original)
        else:
            x = first(*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in rest:
            x = module(x)
        return x


def _deepcopy(self, memo):
    # a plain deepcopy (the class refuses __getstate__): a new instance of the same class
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    object.__setattr__(replica, "__dict__", copy.deepcopy(self.__dict__, memo))
    bind_tables(replica)
    for slot in copyreg._slotnames(type(self)):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _getstate(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                       "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                       "inference-and-or-resuming-training")


def _inject_new_class(module):
    # module's class becomes a subclass named Parametrized<Name>, to hold the properties
    cls = type(module)

    def __setattr__(self, name, value):
        # a parametrized name takes a value through its property (right_inverse). A
        # Parameter there is refused as torch refuses it; a Module too, deliberately: torch
        # registers it as a child that the property hides from every read (docs/pytorch.md)
        if isinstance(value, (Parameter, Module)) and is_parametrized(self, name):
            raise KeyError(f"attribute '{name}' already exists")
        cls.__setattr__(self, name, value)

    attributes = {"__getstate__": _getstate, "__setattr__": __setattr__}
    if not hasattr(cls, "__deepcopy__"):
        attributes["__deepcopy__"] = _deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), attributes)


def _inject_property(module, tensor_name):
    # module.<tensor_name> reads the parametrization (from the cache in a cached() block)
    # and an assignment goes through right_inverse
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_depth[0]:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def _check_appended(module, tensor_name, parametrization):
    # a further parametrization maps the current tensor's space to itself
    current = getattr(module, tensor_name)
    result = parametrization(current)
    if not isinstance(result, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got "
                         f"{type(result).__name__}.")
    checks = [("dtype", current.dtype, result.dtype, "parametrization(module.{0})"),
              ("shape", current.shape, result.shape, "parametrization(module.{0})")]
    if hasattr(parametrization, "right_inverse"):
        try:
            inverse = parametrization.right_inverse(result)
        except NotImplementedError:
            inverse = None
        if inverse is not None:
            if not isinstance(inverse, Tensor):
                raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                                 f"{type(inverse).__name__}")
            checks += [("dtype", current.dtype, inverse.dtype, "returned"),
                       ("shape", current.shape, inverse.shape, "returned")]
    for what, before, after, label in checks:
        if before != after:
            raise ValueError(f"Registering a parametrization may not change the {what} of "
                             f"the tensor, unless the `unsafe` flag is enabled.\n"
                             f"module.{tensor_name}.{what}: {before}\n"
                             f"{label.format(tensor_name)}.{what}: {after}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    r"""Parametrize ``module.<tensor_name>`` (a parameter or a buffer) by the module
    ``parametrization`` (``torch.nn.utils.parametrize.register_parametrization``).

    .. math:: \text{module.}\langle\text{name}\rangle = P(\text{original})

    The first registration moves the tensor to ``module.parametrizations.<name>.original``
    (``original0``, ``original1``, ... if ``P.right_inverse`` returns a sequence; the
    original is first set to ``P.right_inverse(tensor)`` when P has one), turns the
    module's class into ``Parametrized<Name>`` and makes ``module.<name>`` a property
    computing P(original) at each access; assigning it calls ``right_inverse``. A second
    registration on the same name appends P: the result is P₂(P₁(original)).

    Args:
        module: the module holding the tensor.
        tensor_name: the parameter's or buffer's name, or an already parametrized one.
        parametrization: an ``nn.Module`` whose forward maps the original(s) to the tensor;
            an optional ``right_inverse(tensor)`` returns the original(s).
        unsafe: skip the checks that P keeps the tensor's shape and dtype.

    Shape:
        P's result has the tensor's shape and dtype unless ``unsafe``.

    Returns the module. Raises ValueError for a name that is no parameter, buffer or
    parametrized tensor.

    Example:
        >>> class Symmetric(nn.Module):
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).mT
        >>> m = nn.Linear(3, 3)
        >>> parametrize.register_parametrization(m, "weight", Symmetric())
        >>> type(m).__name__, list(m.state_dict())[1]
        ('ParametrizedLinear', 'parametrizations.weight.original')
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_appended(module, tensor_name, parametrization)
        parametrizations = module.parametrizations[tensor_name]
        parametrizations.append(parametrization)
        parametrizations.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has a parametrization on ``tensor_name`` (None: on anything).

    Example:
        >>> parametrize.is_parametrized(nn.Linear(3, 3))                  # False
    """
    parametrizations = module.__dict__.get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Remove the parametrizations on ``tensor_name``
    (``torch.nn.utils.parametrize.remove_parametrizations``).

    Args:
        module: the parametrized module.
        tensor_name: the parametrized name.
        leave_parametrized: True: the tensor keeps its current parametrized value (the
            original object, an optimizer's, takes it; a parametrization of several
            originals gives a new Parameter); False: the original comes back as it is
            (one original only).

    Returns the module; its class is the plain one again when nothing else stays
    parametrized. Raises ValueError where ``tensor_name`` has no parametrization.

    Example:
        >>> parametrize.remove_parametrizations(m, "weight")
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                _set_data(original, getattr(module, tensor_name))
    elif leave_parametrized:
        value = getattr(module, tensor_name)       # with grad: whether the originals need it
        original = Parameter(value.detach()) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        object.__setattr__(module, "__class__", type(module).__bases__[0])
    return module


def type_before_parametrizations(module):
    """The module's class before any parametrization (``Linear`` for a
    ``ParametrizedLinear``)."""
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Register ``from_module``'s parametrizations (of ``tensor_name``, None: all) on
    ``to_module`` and give it the same originals (the tensor objects themselves); a name
    ``to_module`` lacks is first created as a Parameter of ``from_module``'s value.
    Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if source.is_tensor:
            target.original = source.original
        else:
            for i in range(source.ntensors):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
    return to_module

r"""Weight normalization (Salimans and Kingma, 2016), torch's hook form
(``nn.utils.weight_norm``, ``nn.utils.remove_weight_norm``): a weight w written as a
magnitude g and a direction v,

.. math:: w = g \, \frac{v}{\lVert v \rVert},

the norm taken over every dim of v but ``dim``. The formula (``weight_norm_formula``) is
composed of the tensor primitives, so the graph gives the gradients of g and v; the
parametrization form (``nn.utils.parametrizations.weight_norm``) calls the same formula."""

import numbers
import warnings

from ..autograd import no_grad
from ..ops.base import AxisError
from ..tensor import Tensor
from .conv_more import UninitializedParameter
from .module import Parameter

__all__ = ["WeightNorm", "norm_except_dim", "remove_weight_norm", "weight_norm",
           "weight_norm_formula"]


def _norm_dim(v, dim):
    # torch's rule: an int (not a bool); -1 (and None) is the whole tensor; any other dim
    # counts as usual, and a 0-d v has none to keep (its range is torch's [-1, 0])
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, numbers.Integral)):
        raise TypeError(f"norm_except_dim(): argument 'dim' (position 3) must be int, not "
                        f"{type(dim).__name__}")
    if dim is None or dim == -1:
        return None
    ndim = max(v.ndim, 1)
    if not -ndim <= dim < ndim:
        raise AxisError(f"Dimension out of range (expected to be in range of "
                        f"[-{ndim}, {ndim - 1}], but got {dim})")
    if v.ndim == 0:
        raise AxisError(f"Dimension specified as {dim} but tensor has no dimensions")
    return dim % v.ndim


def norm_except_dim(v, pow=2, dim=0):
    r"""The ``pow``-norm of ``v`` over every dim but ``dim`` (``torch.norm_except_dim``),
    :math:`\lVert v \rVert` kept with size 1 in those dims; ``dim`` -1 (or None) the norm of
    the whole tensor, 0-d.

    Args:
        v: a floating tensor. pow: the norm's order. dim: the dim kept, -1 for none.

    Shape:
        v (d_0, ..., d_{n-1}) -> (1, ..., d_dim, ..., 1); () for dim -1.

    Example:
        >>> norm_except_dim(mg.ones(4, 3), 2, 0)          # (4, 1), each sqrt(3)
    """
    if not isinstance(v, Tensor):
        raise TypeError(f"norm_except_dim(): argument 'v' (position 1) must be Tensor, not "
                        f"{type(v).__name__}")
    dim = _norm_dim(v, dim)
    if dim is None:
        return v.norm(pow)
    axes = tuple(axis for axis in range(v.ndim) if axis != dim)
    if not axes:                              # a 1-D v: each element its own norm
        return v.unsqueeze(-1).norm(pow, dim=-1)
    return v.norm(pow, dim=axes, keepdim=True)


def weight_norm_formula(v, g, dim=0):
    r""":math:`w = v \, (g / \lVert v \rVert)` (``torch._weight_norm``), the norm over every
    dim of v but ``dim`` (-1 or None: all of them); composed of primitives, so the graph
    carries the gradients of g and v.

    Args:
        v: the direction, any shape. g: the magnitude, ``norm_except_dim(v, 2, dim)``'s
            shape. dim: the dim that keeps one norm per index.

    Shape:
        v (d_0, ..., d_{n-1}), g (1, ..., d_dim, ..., 1) or () -> w, v's shape.

    Example:
        >>> w = weight_norm_formula(v, g, 0)         # each row of w has norm |g_i|
    """
    if isinstance(v, Tensor) and v.ndim == 0 and (dim is None or dim == -1):
        # torch._weight_norm keeps a dim even for the whole tensor's norm
        raise AxisError("Dimension specified as -1 but tensor has no dimensions")
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook ``weight_norm`` registers (torch's ``WeightNorm``): before each
    ``forward`` it sets ``module.<name>`` to ``g · v / ‖v‖`` of ``<name>_g`` and
    ``<name>_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        """w from the module's current ``<name>_g`` and ``<name>_v``, in the graph."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_formula(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        """Replace the parameter ``name`` by ``<name>_g`` and ``<name>_v`` and register the
        hook; returns it."""
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)                 # AttributeError, as torch
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        with no_grad():
            g = norm_except_dim(weight, 2, fn.dim)     # checks v and dim before any change
        if name not in module._parameters:             # a buffer or a plain attribute
            raise KeyError(name)
        delattr(module, name)
        module.register_parameter(name + "_g", Parameter(g))
        module.register_parameter(name + "_v", Parameter(weight.data))   # weight's memory
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        """Put w back as the plain parameter ``name`` (its current value)."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        delattr(module, self.name + "_g")
        delattr(module, self.name + "_v")
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    r"""Weight normalization of the parameter ``name`` of ``module``, as a forward pre-hook
    (``torch.nn.utils.weight_norm``, deprecated there in favour of
    ``nn.utils.parametrizations.weight_norm``: it warns FutureWarning, as torch's).

    .. math:: w = g \, \frac{v}{\lVert v \rVert}

    The parameter is replaced by ``<name>_g`` (the magnitude, ``norm_except_dim(w, 2,
    dim)``) and ``<name>_v`` (the direction, w itself at first, sharing its memory);
    ``module.<name>`` becomes a plain tensor recomputed before every ``forward``.

    Args:
        module: the module holding the parameter.
        name: the parameter's name.
        dim: the dim with one norm per index (0: per output feature of Linear and Conv);
            None (or -1) one norm over the whole tensor.

    Shape:
        ``<name>_g`` is w's shape with every dim but ``dim`` 1 (``()`` for None),
        ``<name>_v`` w's.

    Returns the module.

    Example:
        >>> m = nn.utils.weight_norm(nn.Linear(20, 40))
        >>> m.weight_g.shape, m.weight_v.shape                # (40, 1), (40, 20)
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo ``weight_norm`` on ``name``: the parameter ``name`` holds the current w again.

    Raises ValueError when ``name`` has no weight_norm hook. Returns the module.

    Example:
        >>> m = nn.utils.remove_weight_norm(nn.utils.weight_norm(nn.Linear(20, 40)))
    """
    remove_hook(module, WeightNorm, name, "weight_norm")
    return module


def remove_hook(module, kind, name, what):
    """Undo the forward pre-hook of class ``kind`` that ``what`` (weight_norm, spectral_norm)
    put on ``name``: its ``remove(module)``, then out of the table; ValueError if none."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return
    raise ValueError(f"{what} of '{name}' not found in {module}")

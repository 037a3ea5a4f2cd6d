"""torch's checks of the shape functions' arguments that are given as tensors: a sequence of
tensors (``torch.cat``'s and ``torch.stack``'s ``tensors``: a sequence, not a Tensor, whose
elements are tensors, each refused by name and position otherwise with torch's TypeError;
any iterable is read as the sequence here, where torch takes a tuple or a list only),
``narrow``'s ``start`` as a tensor (a 0-d integer one only), ``split``'s sizes; an argument
that must be a Tensor (``tensor_argument``, torch's parser's TypeError); and the device and
dtype of ``Tensor.to`` and ``Module.to`` (``to_arguments``)."""

import numbers

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor


def tensor_sequence(fn, tensors, name="tensors"):
    """``tensors`` as a tuple, after torch's checks: a sequence (not a Tensor, whose rows
    torch does not read as the sequence), each element a Tensor (a NumPy array is
    taken too).

    Args:
        fn: the function's name, for the messages.
        tensors: the argument as given.
        name: the argument's name, for the messages.

    Example:
        >>> tensor_sequence("cat", [mg.ones(2), mg.zeros(2)])    # doctest: +SKIP
        (tensor([1., 1.]), tensor([0., 0.]))
        >>> tensor_sequence("cat", mg.ones(2, 3))                 # doctest: +SKIP
        TypeError: cat(): argument 'tensors' must be a tuple of Tensors, not Tensor
    """
    if isinstance(tensors, _tensor.Tensor) or not hasattr(tensors, "__iter__"):
        raise TypeError(f"{fn}(): argument '{name}' must be a tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    tensors = tuple(tensors)
    for i, each in enumerate(tensors):
        if not isinstance(each, (_tensor.Tensor, np.ndarray)):
            raise TypeError(f"{fn}(): expected Tensor as element {i} in argument '{name}', "
                            f"but got {type(each).__name__}")
    return tensors


class StartTensorError(RuntimeError, TypeError):
    """``narrow``'s ``start`` given as a tensor other than a 0-d integer one: torch's
    RuntimeError, and the TypeError of a start that is not an int."""


def tensor_start(fn, start):
    """``start`` given as a Tensor, as the int it holds: torch takes a 0-d integer tensor
    and refuses any other (a bool one, one of more elements) with its RuntimeError.

    Args:
        fn: the function's name, for the message.
        start: the Tensor given.

    Example:
        >>> tensor_start("narrow", mg.tensor(2))                 # doctest: +SKIP
        2
    """
    if start.ndim != 0 or start.dtype.kind not in "iu":
        raise StartTensorError(f"{fn}(): start must be an 0-dim integral Tensor, got one of "
                               f"shape {tuple(start.shape)} and dtype {start.dtype}")
    return int(start.item())


def split_sizes(fn, given):
    """``split``'s ``split_size_or_sections`` as torch reads it: an int (a Tensor of one
    element as ``int()`` reads it, as ``Tensor.split`` does; an integer NumPy scalar its int)
    or a sequence of sizes read as the factories read one (a bool first refused, a bool
    after it its int, a 0-d integer tensor its int). Anything else is torch's TypeError.

    Args:
        fn: the function's name, for the messages.
        given: the argument as given.

    Returns:
        an int, or a tuple of ints (their sum and signs are the caller's to check).

    Example:
        >>> split_sizes("split", mg.tensor(2)), split_sizes("split", [mg.tensor(1), 5])
        (2, (1, 5))                                                # doctest: +SKIP
    """
    if isinstance(given, _tensor.Tensor) and given.numel() == 1:
        return int(given.item())
    given = dtypes.index_of(given)
    if given.__class__ is int:
        return given
    if isinstance(given, (tuple, list)):
        sizes = dtypes.factory_shape(given, f"{fn}(): split_size")
        if all(isinstance(n, numbers.Integral) for n in sizes):
            return tuple(int(n) for n in sizes)
    raise TypeError(f"{fn}(): split_size must be an int or a sequence of ints, got "
                    f"{type(given).__name__} {given!r}")


def to_arguments(name, args, device=None, dtype=None):
    """``(device, dtype)`` from the arguments of ``Tensor.to`` or ``nn.Module.to``: PyTorch's
    forms ``(device)``, ``(dtype)``, ``(device, dtype)``, ``(tensor)`` and the keywords."""
    if len(args) > 2:
        raise TypeError(f"{name} takes at most 2 positional arguments (device, dtype), "
                        f"got {len(args)}")
    if len(args) == 1 and isinstance(args[0], _tensor.Tensor):
        if device is not None or dtype is not None:
            raise TypeError(f"{name} with a tensor takes its device and dtype; give no "
                            "device= or dtype= beside it")
        return args[0].device, args[0].dtype
    for i, arg in enumerate(args):
        if isinstance(arg, _tensor.Tensor):
            raise TypeError(f"{name}: a tensor argument must come alone, got it at "
                            f"position {i} of {len(args)}")
        if backend.is_device(arg):
            if device is not None or i > 0:
                raise TypeError(f"{name}: the device must come first and once, got "
                                f"{arg!r} at position {i}")
            device = arg
        else:
            if dtype is not None:
                raise TypeError(f"{name}: dtype given twice ({dtype!r} and {arg!r})")
            dtype = arg
    if device is not None:
        backend.check_device(device)
    if dtype is not None:
        try:
            dtype = dtypes.as_dtype(dtype)
        except TypeError as error:
            if isinstance(dtype, str) and dtype != "bfloat16":    # bfloat16: what to install
                raise backend.DeviceError(f"{name}: {dtype!r} is neither a device "
                                          f"{backend.DEVICES} nor a dtype") from error
            raise
    return device, dtype


def tensor_argument(fn, name, value, position=None, optional=False):
    """``value`` itself if it is a Tensor (or None where ``optional``), else torch's argument
    parser's TypeError: "fn(): argument 'name' (position N) must be Tensor, not T" (the
    position where ``position`` is given)."""
    if isinstance(value, _tensor.Tensor) or value is None and optional:
        return value
    where = "" if position is None else f" (position {position})"
    raise TypeError(f"{fn}(): argument '{name}'{where} must be Tensor, not "
                    f"{type(value).__name__}")

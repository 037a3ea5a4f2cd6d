"""Torch's deprecated scalar-first overloads, which older training code still calls:
``p.data.add_(-lr, grad)`` for ``p.data.add_(grad, alpha=-lr)``, ``torch.add(x, 2, y)``,
``x.sub_(alpha, y)``, and the hand-written optimizers' ``exp_avg_sq.addcmul_(1 - beta2, grad,
grad)`` and ``p.data.addcdiv_(-step_size, exp_avg, denom)`` for ``value=``. Torch takes them
with one UserWarning a process (whichever op comes first); so does this library. Any other
extra positional argument is the TypeError Python gives for too many of them, as torch's
(``x.add_(y, 2)``: ``alpha`` is keyword-only)."""

import numbers

from ..backend import warn_once
from ..tensor import Tensor
from .numpy_names import user_stacklevel

__all__ = ["scalar_first"]


def scalar_first(fn, args, count, keyword, given, old, new, stacklevel=None):
    """``(value, operands)`` of the call ``fn(*args)`` in torch's deprecated form, ``args`` the
    positional arguments after ``self`` (or ``input``): a number first, then the operands.

    Args:
        fn: the op's name, for the messages.
        args: the positional arguments, more than the current form takes.
        count: how many the current form takes (``add_``: 1, ``addcmul_``: 2).
        keyword: the name of the keyword the number stands for (``alpha``, ``value``).
        given: whether that keyword was given too (torch refuses both).
        old, new: the two signatures, as torch's warning writes them.
        stacklevel: the warning's, counted from here (3: the caller of the op that calls
            this); by default the first line outside this package's.

    Example:
        >>> value, (t1, t2) = scalar_first("addcmul_", (0.5, g, g), 2, "value", False, ...)
    """
    value, *operands = args
    if isinstance(value, Tensor) and value.ndim == 0:
        value = value.item()                # a 0-dim tensor is the Number, as torch reads it
    if len(args) != count + 1 or not isinstance(value, numbers.Number):
        raise TypeError(f"{fn}() takes {count} positional argument{'s' * (count > 1)} but "
                        f"{len(args)} were given")
    if given:
        raise TypeError(f"{fn}() received an invalid combination of arguments - got "
                        f"unrecognized keyword arguments: {keyword}")
    warn_once(f"This overload of {fn} is deprecated:\n\t{fn}({old})\nConsider using one "
              f"of the following signatures instead:\n\t{fn}({new})",
              (stacklevel or user_stacklevel()) + 1,
              key="scalar-first overload")       # one warning, for whichever op comes first
    return value, operands

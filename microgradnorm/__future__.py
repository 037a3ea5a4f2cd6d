"""``mg.__future__`` (torch's ``torch.__future__``): the switches of how ``Module._apply``
(``to``, ``float``, ``cpu``, ...) puts a converted parameter in its module."""

_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False


def set_overwrite_module_params_on_conversion(value):
    """True: a conversion (``model.double()``) gives each parameter a new Parameter object
    (and its ``.grad`` a new tensor) in place of setting the old one's ``.data``.

    Args:
        value: bool.

    Example:
        >>> mg.__future__.set_overwrite_module_params_on_conversion(False)   # the default
    """
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion():
    """Whether a conversion makes new Parameter objects (default False).

    Example:
        >>> mg.__future__.get_overwrite_module_params_on_conversion()          # False
    """
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value):
    """True: a conversion keeps each Parameter object and gives it the converted data, as
    torch's ``swap_tensors``; it takes precedence over the overwrite switch.

    Args:
        value: bool.

    Example:
        >>> mg.__future__.set_swap_module_params_on_conversion(False)        # the default
    """
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion():
    """Whether a conversion swaps the Parameters' data in place (default False).

    Example:
        >>> mg.__future__.get_swap_module_params_on_conversion()             # False
    """
    return _swap_module_params_on_conversion

"""The numeric options of the optimizers as torch reads them: at construction, a number, a
bool, a NumPy scalar or a one-element Tensor (the group keeps what it was given, as
torch's); at each step, the numbers of the options held as Tensors, and torch's errors
where its step passes an option to a Tensor op that takes only a Python number."""

import math

from ..dtypes import float_of
from ..tensor import Tensor

__all__ = ["check_betas_kinds", "check_step_numbers", "kept_number", "option_number",
           "step_numbers"]


# the options torch reads as a Python number where a 1-D Tensor is its TypeError (Adagrad's
# full_like of initial_accumulator_value at construction; SGD's dampening and Rprop's
# step_sizes in the step's arithmetic, where several elements are a TypeError too)
# (the value: the most elements a Tensor refused so may have; more, a RuntimeError)
ZERO_D_ONLY = {("Adagrad", "initial_accumulator_value"): 1, ("SGD", "dampening"): math.inf,
               ("Rprop", "step_sizes"): math.inf}


def option_number(optimizer, name, value):
    """A numeric option as torch's checks read it: a number, a bool, a NumPy scalar or a
    one-element Tensor (which the group keeps, as torch's) as its Python number
    (``float_of``); a Tensor of several elements is torch's RuntimeError (its comparison's),
    anything else a TypeError naming the option.

    Example:
        >>> option_number("SGD", "momentum", mg.tensor([0.5]))
        0.5
    """
    if isinstance(value, Tensor) and value.ndim and value.numel() <= ZERO_D_ONLY.get(
            (optimizer, name), 0):
        raise TypeError(f"{optimizer}: {name} must be a number or a 0-d Tensor, got a Tensor "
                        f"of shape {tuple(value.shape)}")
    if isinstance(value, Tensor) and value.numel() != 1:
        raise RuntimeError(f"{optimizer}: {name} must be a number or a 1-element Tensor, got "
                           f"a Tensor of shape {tuple(value.shape)}")
    return float_of(value, optimizer, name, one_element=True)


def kept_number(where, name, value):
    """A schedule's numeric option, checked as ``option_number`` reads it and kept as given
    (a bool, a NumPy scalar: torch keeps them), a Tensor as its number.

    Example:
        >>> kept_number("StepLR", "gamma", mg.tensor(0.5)), kept_number("StepLR", "gamma", True)
        (0.5, True)
    """
    number = option_number(where, name, value)
    return number if isinstance(value, Tensor) else value


def step_numbers(group):
    """``group`` as a step reads it: where options hold Tensors (torch keeps them), a copy
    with their numbers; the group itself when none does."""
    found = {key: value for key, value in group.items() if key != "params" and (
        isinstance(value, Tensor) or isinstance(value, tuple)
        and any(isinstance(item, Tensor) for item in value))}
    if not found:
        return group
    numbers = {key: tuple(item.item() if isinstance(item, Tensor) else item for item in value)
               if isinstance(value, tuple) else value.item() for key, value in found.items()}
    return {**group, **numbers}


def check_step_numbers(optimizer, group):
    """Raise torch's error of a step whose group holds, for an option the optimizer's
    ``python_number_options`` names (torch passes it as a Python number), a 1-D Tensor (its
    TypeError, or RuntimeError where the class says) or ``weight_decay=True`` (torch's
    RuntimeError: a bool factor of a float sum); nothing is written before."""
    name = type(optimizer).__name__
    for key, error in optimizer.python_number_options.items():
        if key == "weight_decay" and group.get("decoupled_weight_decay"):
            continue                      # a product with the rate, which takes a Tensor
        value = group.get(key)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, Tensor) and item.ndim > 0:
                raise error(f"{name}.step: {key} must be a number or a 0-d Tensor, got a "
                            f"Tensor of shape {tuple(item.shape)} (torch's step passes it "
                            f"as a Python number)")
        if key == "weight_decay" and value is True:
            raise RuntimeError(f"{name}.step: weight_decay=True: torch's step refuses a bool "
                               f"factor (\"Boolean alpha only supported for Boolean "
                               f"results\"); give a number")


def check_foreach_tensors(optimizer, group):
    """torch's Adam and AdamW: a Tensor ``lr`` or ``betas[0]`` is refused with
    ``foreach=True`` unless ``capturable`` (its foreach kernels take numbers)."""
    for option, value in (("lr", group["lr"]), ("betas[0]", group["betas"][0])):
        if isinstance(value, Tensor) and group["foreach"] and not group["capturable"]:
            raise ValueError(f"{optimizer}: {option} as a Tensor is not supported for "
                             "capturable=False and foreach=True (torch's error)")


def check_betas_kinds(optimizer, name, betas):
    """torch's Adam and AdamW, for option ``name``: ``betas`` both Python floats or both
    Tensors (a ValueError for an int, a NumPy float32 or a mix, as torch's)."""
    if name == "betas" and not (all(isinstance(b, float) for b in betas)
            or all(isinstance(b, Tensor) for b in betas)):
        raise ValueError(f"{optimizer}: betas must be either both floats or both Tensors, got "
                         f"{tuple(type(b).__name__ for b in betas)}")

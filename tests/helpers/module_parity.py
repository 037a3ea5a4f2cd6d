"""What the nn.Module parity tests share: run one case on both libraries (``lib`` is
``torch`` or ``microgradnorm``) and compare what it returns, or the class of its error."""

import numpy as np
import torch

import microgradnorm as mg

LIBS = (torch, mg)


def names(module):
    return [(name, type(child).__name__) for name, child in module.named_children()]


class Raised:
    """An error, compared by class (torch's messages are its own): ours equals torch's
    where torch's builtin class is one of ours (an error here may be two builtins)."""

    def __init__(self, error):
        self.classes = [c.__name__ for c in type(error).__mro__ if c.__module__ == "builtins"]

    def __eq__(self, other):
        return isinstance(other, Raised) and (other.classes[0] in self.classes
                                              or self.classes[0] in other.classes)

    def __repr__(self):
        return f"raises {self.classes[0]}"


def outcome(case, lib):
    """What ``case(lib)`` returns, with dtypes as their names, or the error it raised."""
    try:
        return plain(case(lib))
    except Exception as error:
        return Raised(error)


def plain(value):
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, (torch.dtype, np.dtype, mg.dtype)):
        return str(value).replace("torch.", "")
    return value


def same_on_both(case):
    ours, theirs = outcome(case, mg), outcome(case, torch)
    assert ours == theirs, f"microgradnorm: {ours}\ntorch: {theirs}"

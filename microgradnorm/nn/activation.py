"""Activations as Modules: ReLU, GELU (exact or tanh), SiLU, Tanh."""

from .. import functional as F
from .module import Module, _check_choice


class ReLU(Module):
    """max(x, 0) elementwise. Shape: any, unchanged."""

    def forward(self, x):
        """relu(x). Shape: (*) -> (*)."""
        return x.relu()


class GELU(Module):
    """GELU (see ``F.gelu``): exact by default, as in PyTorch; ``approximate="tanh"`` for
    GPT-2's form."""

    def __init__(self, approximate="none"):
        super().__init__()
        _check_choice("GELU", "approximate", approximate, ("none", "tanh"))
        self.approximate = approximate

    def forward(self, x):
        """gelu(x) in the chosen form. Shape: (*) -> (*)."""
        return F.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x · sigmoid(x) elementwise (swish). Shape: any, unchanged."""

    def forward(self, x):
        """silu(x). Shape: (*) -> (*)."""
        return F.silu(x)


class Tanh(Module):
    """tanh(x) elementwise. Shape: any, unchanged."""

    def forward(self, x):
        """tanh(x). Shape: (*) -> (*)."""
        return x.tanh()


ACTIVATIONS = {"relu": ReLU, "gelu": GELU, "silu": SiLU, "tanh": Tanh}

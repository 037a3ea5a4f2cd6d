"""Activations as Modules: ReLU, GELU (exact or tanh), SiLU, Tanh."""

from .. import functional as F
from .module import Module, _check_choice


class ReLU(Module):
    def forward(self, x):
        return x.relu()


class GELU(Module):
    """GELU (see ``F.gelu``): exact by default, as in PyTorch; ``approximate="tanh"`` for
    GPT-2's form."""

    def __init__(self, approximate="none"):
        super().__init__()
        _check_choice("GELU", "approximate", approximate, ("none", "tanh"))
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def forward(self, x):
        return F.silu(x)


class Tanh(Module):
    def forward(self, x):
        return x.tanh()


ACTIVATIONS = {"relu": ReLU, "gelu": GELU, "silu": SiLU, "tanh": Tanh}

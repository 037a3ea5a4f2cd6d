"""The multi-layer perceptron: Linear layers with activations and optional norms."""

import itertools
import numbers

from .activation import ACTIVATIONS
from .container import Sequential
from .linear import Linear
from ..norms import fitting, lookup
from .module import Module, _check_choice
from .normalization import make_norm


class MLP(Module):
    """Linear layers of ``sizes`` (a list, or the sizes themselves) with a norm (optional)
    and an activation after each hidden one, in ``self.layers``: ``MLP(2, 16, 2,
    norm="batch_norm")`` is Linear(2,16) → BatchNorm1d(16) → ReLU → Linear(16,2); ``norm``
    is any registered norm that fits an MLP (``norms.fitting("mlp")``), built by its module.

    Shape:
        input (*, sizes[0]) (BatchNorm: (N, sizes[0])), output (*, sizes[-1]).
    """

    def __init__(self, *sizes, activation="relu", norm=None, impl=None, dtype=None,
                 device=None):
        super().__init__()
        if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
            sizes = sizes[0]
        sizes = list(sizes)
        if sizes and isinstance(sizes[-1], str):
            raise TypeError(f"MLP: activation and norm are keyword arguments: "
                            f"MLP({sizes[0]!r}, activation={sizes[-1]!r})")
        if len(sizes) < 2 or any(isinstance(n, bool) or not isinstance(n, numbers.Integral)
                                 or n < 1 for n in sizes):
            raise ValueError(f"MLP: sizes must be at least two positive ints, given as a list "
                             f"(MLP([2, 16, 2])) or as arguments (MLP(2, 16, 2)); got "
                             f"{sizes!r}")
        _check_choice("MLP", "activation", activation, tuple(ACTIVATIONS))
        norm = None if norm is None else lookup(norm, "MLP: norm", fitting("mlp")).name
        layers = []
        for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
            layers.append(Linear(n_in, n_out, dtype=dtype, device=device))
            if i < len(sizes) - 2:
                if norm is not None:
                    layers.append(make_norm(norm, n_out, impl, dtype, device, place="mlp"))
                layers.append(ACTIVATIONS[activation]())
        self.sizes = sizes
        self.layers = Sequential(*layers)

    def forward(self, x):
        """The layers in order. Shape: (*, sizes[0]) -> (*, sizes[-1])."""
        return self.layers(x)

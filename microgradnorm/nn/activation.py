"""Activations as Modules, each ``forward`` the ``F`` function of its name: ReLU, GELU
(exact or tanh), SiLU, Tanh, Sigmoid, LeakyReLU, ELU, Softplus, Mish, Hardtanh, Softmax and
LogSoftmax. ``ACTIVATIONS`` names those built without arguments (MLP's and FeedForward's
``activation``)."""

import warnings

from .. import functional as F
from ..dtypes import check_number
from .module import Module, _check_choice


def _inplace_repr(module, text=""):
    # PyTorch shows inplace only when it is on
    return ", ".join(([text] if text else []) + (["inplace=True"] if module.inplace else []))


class ReLU(Module):
    """max(x, 0) elementwise; ``inplace`` writes the result into the input. Shape: any,
    unchanged."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        """relu(x). Shape: (*) -> (*)."""
        return F.relu(self._check_input(x), self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


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


class Sigmoid(Module):
    """1 / (1 + e^-x) elementwise. Shape: any, unchanged."""

    def forward(self, x):
        """sigmoid(x). Shape: (*) -> (*)."""
        return F.sigmoid(self._check_input(x))


class LeakyReLU(Module):
    """x where x > 0, else ``negative_slope`` · x (``F.leaky_relu``). Shape: any, unchanged.

    Example:
        >>> nn.LeakyReLU(0.2)(mg.tensor([-1.0, 1.0]))          # [-0.2, 1.0]
    """

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        check_number("LeakyReLU", "negative_slope", negative_slope)
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x):
        """leaky_relu(x). Shape: (*) -> (*)."""
        return F.leaky_relu(self._check_input(x), self.negative_slope, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"negative_slope={self.negative_slope}")


class ELU(Module):
    """x where x > 0, else α (e^x - 1) (``F.elu``). Shape: any, unchanged."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        check_number("ELU", "alpha", alpha)
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        """elu(x). Shape: (*) -> (*)."""
        return F.elu(self._check_input(x), self.alpha, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"alpha={self.alpha}")


class Softplus(Module):
    """log(1 + e^(βx)) / β, and x where βx > ``threshold`` (``F.softplus``). Shape: any,
    unchanged."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        check_number("Softplus", "beta", beta)
        check_number("Softplus", "threshold", threshold)
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        """softplus(x). Shape: (*) -> (*)."""
        return F.softplus(self._check_input(x), self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(Module):
    """x · tanh(softplus(x)) (``F.mish``). Shape: any, unchanged."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        """mish(x). Shape: (*) -> (*)."""
        return F.mish(self._check_input(x), self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class Hardtanh(Module):
    """x clipped to [min_val, max_val] (``F.hardtanh``). Shape: any, unchanged."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        check_number("Hardtanh", "min_val", min_val)
        check_number("Hardtanh", "max_val", max_val)
        if max_val <= min_val:
            raise F.AssertionValueError(f"Hardtanh: max_val ({max_val}) must be greater than "
                                        f"min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, x):
        """hardtanh(x). Shape: (*) -> (*)."""
        return F.hardtanh(self._check_input(x), self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"min_val={self.min_val}, max_val={self.max_val}")


def _softmax_dim(fn, dim, ndim):
    # dim, or for None PyTorch's legacy implicit dim (0 for 0-, 1- and 3-d inputs, else 1)
    # with its warning
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Module):
    """exp(x) / Σ exp(x) along ``dim`` (``F.softmax``); dim None picks PyTorch's legacy
    implicit dim, with its warning. Shape: any, unchanged.

    Example:
        >>> nn.Softmax(dim=-1)(logits)                         # rows sum to 1
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        """softmax(x) along ``dim``. Shape: (*) -> (*)."""
        x = self._check_input(x)
        return F.softmax(x, dim=_softmax_dim("softmax", self.dim, x.ndim))

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - log Σ exp(x) along ``dim`` (``F.log_softmax``); dim None as in ``Softmax``.
    Shape: any, unchanged."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        """log_softmax(x) along ``dim``. Shape: (*) -> (*)."""
        x = self._check_input(x)
        return F.log_softmax(x, dim=_softmax_dim("log_softmax", self.dim, x.ndim))

    def extra_repr(self):
        return f"dim={self.dim}"


ACTIVATIONS = {"relu": ReLU, "gelu": GELU, "silu": SiLU, "tanh": Tanh, "sigmoid": Sigmoid,
               "leaky_relu": LeakyReLU, "elu": ELU, "softplus": Softplus, "mish": Mish,
               "hardtanh": Hardtanh}

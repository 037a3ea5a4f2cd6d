"""Activations as Modules, each ``forward`` the ``F`` function of its name: ReLU, GELU
(exact or tanh), SiLU, Tanh, Sigmoid, LeakyReLU, ELU, Softplus, Mish, Hardtanh, Softmax,
LogSoftmax, and the rarer ones (ReLU6, Hardsigmoid, Hardswish, SELU, CELU, GLU, Softsign,
Softmin, LogSigmoid, PReLU, Threshold, Softshrink, Hardshrink, Tanhshrink, RReLU,
Softmax2d), with PyTorch's arguments, defaults and ``repr``. ``ACTIVATIONS`` names those
built without arguments (MLP's and FeedForward's ``activation``)."""

import warnings

import numpy as np

from .. import functional as F
from ..dtypes import check_number, float_of
from ..fused.arguments import implicit_dim
from . import init
from .module import Module, Parameter, _check_choice, _dtype


def _inplace_repr(module, text=""):
    # PyTorch shows inplace only when it is on
    return ", ".join(([text] if text else []) + (["inplace=True"] if module.inplace else []))


class ReLU(Module):
    """max(x, 0) elementwise; ``inplace`` writes the result into the input. Shape: any,
    unchanged."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """relu(x). Shape: (*) -> (*)."""
        return F.relu(self._check_input(input), self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class GELU(Module):
    """GELU (see ``F.gelu``): exact by default, as in PyTorch; ``approximate="tanh"`` for
    GPT-2's form."""

    def __init__(self, approximate="none"):
        super().__init__()
        _check_choice("GELU", "approximate", approximate, ("none", "tanh"))
        self.approximate = approximate

    def forward(self, input):
        """gelu(x) in the chosen form. Shape: (*) -> (*)."""
        return F.gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x · sigmoid(x) elementwise (swish); ``inplace`` writes the result into the input.
    Shape: any, unchanged."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """silu(x). Shape: (*) -> (*)."""
        return F.silu(input, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class Tanh(Module):
    """tanh(x) elementwise. Shape: any, unchanged."""

    def forward(self, input):
        """tanh(x). Shape: (*) -> (*)."""
        return self._check_input(input).tanh()


class Sigmoid(Module):
    """1 / (1 + e^-x) elementwise. Shape: any, unchanged."""

    def forward(self, input):
        """sigmoid(x). Shape: (*) -> (*)."""
        return F.sigmoid(self._check_input(input))


class LeakyReLU(Module):
    """x where x > 0, else ``negative_slope`` · x (``F.leaky_relu``). Shape: any, unchanged.

    Example:
        >>> nn.LeakyReLU(0.2)(mg.tensor([-1.0, 1.0]))          # [-0.2, 1.0]
    """

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        float_of(negative_slope, "LeakyReLU", "negative_slope")
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        """leaky_relu(x). Shape: (*) -> (*)."""
        return F.leaky_relu(self._check_input(input), self.negative_slope, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"negative_slope={self.negative_slope}")


class ELU(Module):
    """x where x > 0, else α (e^x - 1) (``F.elu``). Shape: any, unchanged."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        float_of(alpha, "ELU", "alpha")
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        """elu(x). Shape: (*) -> (*)."""
        return F.elu(self._check_input(input), self.alpha, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"alpha={self.alpha}")


class Softplus(Module):
    """log(1 + e^(βx)) / β, and x where βx > ``threshold`` (``F.softplus``). Shape: any,
    unchanged."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        float_of(beta, "Softplus", "beta")
        float_of(threshold, "Softplus", "threshold")
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        """softplus(x). Shape: (*) -> (*)."""
        return F.softplus(self._check_input(input), self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(Module):
    """x · tanh(softplus(x)) (``F.mish``). Shape: any, unchanged."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """mish(x). Shape: (*) -> (*)."""
        return F.mish(self._check_input(input), self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class Hardtanh(Module):
    """x clipped to [min_val, max_val] (``F.hardtanh``). Shape: any, unchanged."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        # torch's deprecated spellings, taken with its FutureWarning
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to "
                          "`min_val`", FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to "
                          "`max_val`", FutureWarning, stacklevel=2)
            max_val = max_value
        float_of(min_val, "Hardtanh", "min_val")
        float_of(max_val, "Hardtanh", "max_val")
        if max_val <= min_val:
            raise F.AssertionValueError(f"Hardtanh: max_val ({max_val}) must be greater than "
                                        f"min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        """hardtanh(x). Shape: (*) -> (*)."""
        return F.hardtanh(self._check_input(input), self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"min_val={self.min_val}, max_val={self.max_val}")


def _softmax_dim(fn, dim, ndim):
    # dim, or for None PyTorch's legacy implicit dim (0 for 0-, 1- and 3-d inputs, else 1)
    # with its warning
    return dim if dim is not None else implicit_dim(fn, ndim, stacklevel=4)


class _SoftmaxFamily(Module):
    """The softmax family's modules: a ``dim``, None for PyTorch's legacy implicit dim."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxFamily):
    """exp(x) / Σ exp(x) along ``dim`` (``F.softmax``); dim None picks PyTorch's legacy
    implicit dim, with its warning. Shape: any, unchanged.

    Example:
        >>> nn.Softmax(dim=-1)(logits)                         # rows sum to 1
    """

    def forward(self, input):
        """softmax(x) along ``dim``. Shape: (*) -> (*)."""
        input = self._check_input(input)
        return F.softmax(input, dim=_softmax_dim("softmax", self.dim, input.ndim))


class LogSoftmax(_SoftmaxFamily):
    """x - log Σ exp(x) along ``dim`` (``F.log_softmax``); dim None as in ``Softmax``.
    Shape: any, unchanged."""

    def forward(self, input):
        """log_softmax(x) along ``dim``. Shape: (*) -> (*)."""
        input = self._check_input(input)
        return F.log_softmax(input, dim=_softmax_dim("log_softmax", self.dim, input.ndim))


class ReLU6(Hardtanh):
    """min(max(x, 0), 6) elementwise (``F.relu6``): a Hardtanh on [0, 6], as PyTorch's.
    Shape: any, unchanged.

    Example:
        >>> nn.ReLU6()(mg.tensor([-1.0, 7.0]))                 # [0, 6]
    """

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        """relu6(x). Shape: (*) -> (*)."""
        return F.relu6(self._check_input(input), self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class Hardsigmoid(Module):
    """ReLU6(x + 3) / 6 elementwise (``F.hardsigmoid``). Shape: any, unchanged."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """hardsigmoid(x). Shape: (*) -> (*)."""
        return F.hardsigmoid(self._check_input(input), self.inplace)


class Hardswish(Module):
    """x · ReLU6(x + 3) / 6 elementwise (``F.hardswish``). Shape: any, unchanged."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """hardswish(x). Shape: (*) -> (*)."""
        return F.hardswish(self._check_input(input), self.inplace)


class SELU(Module):
    """scale · (max(0, x) + min(0, α (e^x - 1))) with the self-normalising constants
    (``F.selu``). Shape: any, unchanged."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """selu(x). Shape: (*) -> (*)."""
        return F.selu(self._check_input(input), self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class CELU(Module):
    """max(0, x) + min(0, α (e^(x/α) - 1)) (``F.celu``). Shape: any, unchanged."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        float_of(alpha, "CELU", "alpha")
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        """celu(x). Shape: (*) -> (*)."""
        return F.celu(self._check_input(input), self.alpha, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"alpha={self.alpha}")


class GLU(Module):
    """a · σ(b), a and b the halves of the input along ``dim`` (``F.glu``).
    Shape: (*, 2n, *) -> (*, n, *).

    Example:
        >>> nn.GLU()(mg.ones(2, 6)).shape                      # (2, 3)
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """glu(x) along ``dim``. Shape: (*, 2n, *) -> (*, n, *)."""
        return F.glu(self._check_input(input), self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softsign(Module):
    """x / (1 + |x|) elementwise (``F.softsign``). Shape: any, unchanged."""

    def forward(self, input):
        """softsign(x). Shape: (*) -> (*)."""
        return F.softsign(self._check_input(input))


class Tanhshrink(Module):
    """x - tanh(x) elementwise (``F.tanhshrink``). Shape: any, unchanged."""

    def forward(self, input):
        """tanhshrink(x). Shape: (*) -> (*)."""
        return F.tanhshrink(self._check_input(input))


class LogSigmoid(Module):
    """log σ(x) elementwise, stable (``F.logsigmoid``). Shape: any, unchanged."""

    def forward(self, input):
        """logsigmoid(x). Shape: (*) -> (*)."""
        return F.logsigmoid(self._check_input(input))


class Softmin(_SoftmaxFamily):
    """exp(-x) / Σ exp(-x) along ``dim`` (``F.softmin``); dim None as in ``Softmax``.
    Shape: any, unchanged."""

    def forward(self, input):
        """softmin(x) along ``dim``. Shape: (*) -> (*)."""
        input = self._check_input(input)
        return F.softmin(input, dim=_softmax_dim("softmin", self.dim, input.ndim))


class Softmax2d(Module):
    """Softmax over the channels at each position (``nn.Softmax2d``): dim -3 of a
    (N, C, H, W) or (C, H, W) input. Shape: unchanged."""

    def forward(self, input):
        """softmax(x, dim=-3). Shape: (N, C, H, W) or (C, H, W), unchanged."""
        input = self._check_input(input)
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, dim=-3)


class PReLU(Module):
    """x where x > 0, else a · x, with a learnt slope ``weight`` (``F.prelu``): one for all
    channels (num_parameters=1) or one per channel (dim 1), each starting at ``init``.

    Shape: input (N, C, *) or any with num_parameters=1; output as input.

    Example:
        >>> nn.PReLU(16)(mg.randn(8, 16, 5, 5)).shape          # (8, 16, 5, 5)
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        check_number("PReLU", "num_parameters", num_parameters, integer=True)
        if num_parameters < 0:                # 0 is a weight of no slopes, as torch's
            raise RuntimeError(f"PReLU: num_parameters must be >= 0, got {num_parameters}")
        float_of(init, "PReLU", "init")
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(np.zeros(num_parameters, _dtype(dtype)), device=device)
        self.reset_parameters()

    def reset_parameters(self):
        """Every slope back to ``init`` (``constant_``, as PyTorch's)."""
        init.constant_(self.weight, self.init)

    def forward(self, input):
        """prelu(x, weight). Shape: (*) -> (*)."""
        return F.prelu(self._check_input(input), self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Threshold(Module):
    """x where x > ``threshold``, else ``value`` (``F.threshold``). Shape: any, unchanged."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        float_of(threshold, "Threshold", "threshold")
        float_of(value, "Threshold", "value")
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        """threshold(x). Shape: (*) -> (*)."""
        return F.threshold(self._check_input(input), self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"threshold={self.threshold}, value={self.value}")


class Softshrink(Module):
    """x - λ above λ, x + λ below -λ, else 0 (``F.softshrink``). Shape: any, unchanged."""

    def __init__(self, lambd=0.5):
        super().__init__()
        float_of(lambd, "Softshrink", "lambd")
        self.lambd = lambd

    def forward(self, input):
        """softshrink(x). Shape: (*) -> (*)."""
        return F.softshrink(self._check_input(input), self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(Module):
    """x where |x| > λ, else 0 (``F.hardshrink``). Shape: any, unchanged."""

    def __init__(self, lambd=0.5):
        super().__init__()
        float_of(lambd, "Hardshrink", "lambd")
        self.lambd = lambd

    def forward(self, input):
        """hardshrink(x). Shape: (*) -> (*)."""
        return F.hardshrink(self._check_input(input), self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class RReLU(Module):
    """The randomized leaky ReLU (``F.rrelu``): in training a slope drawn from U(lower,
    upper) per element x <= 0 (torch's draws for the same seed), in evaluation their mean
    (lower + upper) / 2. Shape: any, unchanged.

    Example:
        >>> act = nn.RReLU(); act.eval(); act(mg.tensor([-1.0]))    # [-(1/8 + 1/3) / 2]
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        float_of(lower, "RReLU", "lower")
        float_of(upper, "RReLU", "upper")
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        """rrelu(x), random slopes while training. Shape: (*) -> (*)."""
        return F.rrelu(self._check_input(input), self.lower, self.upper, self.training,
                       self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"lower={self.lower}, upper={self.upper}")


ACTIVATIONS = {"relu": ReLU, "gelu": GELU, "silu": SiLU, "tanh": Tanh, "sigmoid": Sigmoid,
               "leaky_relu": LeakyReLU, "elu": ELU, "softplus": Softplus, "mish": Mish,
               "hardtanh": Hardtanh, "relu6": ReLU6, "hardsigmoid": Hardsigmoid,
               "hardswish": Hardswish, "selu": SELU, "celu": CELU, "softsign": Softsign,
               "tanhshrink": Tanhshrink, "logsigmoid": LogSigmoid}

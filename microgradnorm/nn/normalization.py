"""The norms' modules: LayerNorm, RMSNorm, DyT and BatchNorm1d (``impl="fused" |
"composite"``), BatchNorm's and InstanceNorm's shared body (``_NormBase``, ``_BatchNorm``),
and what a model builds a norm with: ``module_for``, ``make_norm``.

Each module holds its parameters and forwards to its functional norm, which checks the
input. A module declares the norm it computes (``LayerNorm.norm = "layer_norm"``, a name of
``norms.NORMS``); that declaration fills ``MODULES``, so a model takes any registered norm
that fits its place (``norms.fitting``) without a list of names here.
"""

import numpy as np

from .. import functional as F
from ..dtypes import check_number
from ..norms import arguments, fitting, lookup
from ..norms.arguments import ChannelNormError
from ..norms.rms_norm import check_rms_options
from ..tensor import Tensor
from .module import Module, Parameter, _check_sizes, _dtype

MODULES = {}        # (norm name, place) -> the module class; filled by ``NormModule``s

# the norms a Transformer block (``TrainConfig``, ``train --norm``) takes: a view of the
# registry, every norm whose spec lists the place "row"
NORMS = fitting("row")


class NormModule(Module):
    """The base of a norm's module. A subclass that declares ``norm = "<name>"`` is the
    module models build for that norm, in each of its places (``places``: default, every
    place the norm's spec lists; two modules may not claim one place of one norm).
    ``for_width`` builds it for a width (``Module(width)`` unless a module says otherwise);
    ``set_impl`` reaches it (``switches_impl``)."""

    norm = None
    places = None
    switches_impl = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "norm" not in vars(cls):
            return
        spec = lookup(cls.norm, f"{cls.__name__}.norm")
        for place in cls.places or spec.places:
            taken = MODULES.setdefault((spec.name, place), cls)
            if taken is not cls:
                raise TypeError(f"{cls.__name__}: {spec.name!r} in place {place!r} is "
                                f"already {taken.__name__}'s; declare places = (...)")

    @classmethod
    def for_width(cls, width, impl=None, dtype=None, device=None):
        """The module for ``width`` features (or channels), with its defaults otherwise."""
        return cls(width, impl=impl, dtype=dtype, device=device)

    def _impl_repr(self):
        # ``impl`` after PyTorch's fields, only when it is set: the default repr is torch's
        return "" if self.impl is None else f", impl={self.impl!r}"


class LayerNorm(NormModule):
    r"""LayerNorm over the trailing ``normalized_shape`` dims (``torch.nn.LayerNorm``):

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    ``ln(x, residual)`` returns ``(ln(x + residual), x + residual)`` (``F.add_layer_norm``);
    ``impl``: ``"fused"`` (one node), ``"composite"`` (the textbook graph) or None, the
    default: the thread's choice (``mg.norm_impl``, "fused" outside a block).

    Shape:
        input (*, *normalized_shape), output the same.

    Example:
        >>> ln = nn.LayerNorm(8, impl="composite"); y = ln(mg.tensor(np.random.randn(2, 8)))
    """

    norm = "layer_norm"

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None, *, impl=None):
        super().__init__()
        self.normalized_shape = arguments.normalized_shape("LayerNorm", normalized_shape)
        arguments.check_eps("LayerNorm", eps)
        arguments.check_impl("LayerNorm", impl)
        self.eps, self.impl, self.elementwise_affine = eps, impl, elementwise_affine
        dtype = _dtype(dtype)
        ones, zeros = np.ones(self.normalized_shape, dtype), np.zeros(self.normalized_shape, dtype)
        # None registered too, as torch's
        self.register_parameter("weight", Parameter(ones, device=device)
                                if elementwise_affine else None)
        self.register_parameter("bias", Parameter(zeros, device=device)
                                if elementwise_affine and bias else None)

    def reset_parameters(self):
        """γ to ones and β to zeros, in place (``torch.nn.LayerNorm.reset_parameters``)."""
        _fill(self.weight, 1.0)
        _fill(self.bias, 0.0)

    def forward(self, input, residual=None):
        """LayerNorm of ``input`` (or of ``input + residual``, and that sum). Shape:
        unchanged."""
        if residual is None:
            return F.layer_norm(self._check_input(input), self.normalized_shape, self.weight,
                                self.bias, self.eps, self.impl)
        return F.add_layer_norm(self._check_input(input), residual, self.normalized_shape,
                                self.weight, self.bias, self.eps, self.impl)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}{self._impl_repr()}")


class RMSNorm(NormModule):
    r"""RMSNorm over the trailing dims (``torch.nn.RMSNorm``):

    .. math::
        y = \frac{x}{\sqrt{\mathrm{E}[x^2] + \epsilon}} \cdot (\text{offset} + \gamma)

    ``eps=None`` (PyTorch's default) is float32's machine epsilon for float16 and bfloat16
    input in every casting mode, else the input's own; LLaMA's 1e-6 is passed explicitly,
    as the models here do (``for_width``). ``rms(x, residual)`` returns
    ``(rms(x + residual), x + residual)`` (``F.add_rms_norm``); γ starts at ``1 - offset``;
    ``casting`` as ``F.rms_norm``.

    Shape:
        input (*, *normalized_shape), output the same.

    Example:
        >>> llama = nn.RMSNorm(8, eps=1e-6)
        >>> gemma = nn.RMSNorm(8, eps=1e-6, offset=1.0, casting="gemma")   # weight starts at 0
    """

    norm = "rms_norm"
    LLAMA_EPS = 1e-6            # the eps of LLaMA's RMSNorm, which the models here use

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None, *, impl=None, offset=0.0, casting="llama"):
        super().__init__()
        self.normalized_shape = arguments.normalized_shape("RMSNorm", normalized_shape)
        arguments.check_eps("RMSNorm", 0.0 if eps is None else eps)
        arguments.check_impl("RMSNorm", impl)
        check_rms_options("RMSNorm", offset, casting, elementwise_affine)
        self.eps, self.impl, self.elementwise_affine = eps, impl, elementwise_affine
        self.offset, self.casting = offset, casting
        init = np.full(self.normalized_shape, 1.0 - offset).astype(_dtype(dtype))
        self.register_parameter("weight", Parameter(init, device=device)
                                if elementwise_affine else None)     # None too, as torch's

    @classmethod
    def for_width(cls, width, impl=None, dtype=None, device=None):
        """A model's RMSNorm of ``width`` features: LLaMA's, eps 1e-6 (a Transformer block's
        and an MLP's norm here), where the module's own default is PyTorch's None."""
        return cls(width, eps=cls.LLAMA_EPS, impl=impl, dtype=dtype, device=device)

    def reset_parameters(self):
        """γ back to ``1 - offset`` (ones without an offset, ``torch.nn.RMSNorm``'s), in place."""
        _fill(self.weight, 1.0 - self.offset)

    def forward(self, x, residual=None):
        """RMSNorm of ``x`` (or of ``x + residual``, and that sum). Shape: unchanged."""
        if residual is None:
            return F.rms_norm(self._check_input(x), self.normalized_shape, self.weight,
                              self.eps, self.impl, self.offset, self.casting)
        return F.add_rms_norm(self._check_input(x), residual, self.normalized_shape,
                              self.weight, self.eps, self.impl, self.offset, self.casting)

    def extra_repr(self):
        extra = "" if not self.offset else f", offset={self.offset}"
        extra += "" if self.casting == "llama" else f", casting={self.casting!r}"
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}{self._impl_repr()}{extra}")


class _NormBase(NormModule):
    """BatchNorm's and InstanceNorm's shared state (PyTorch's ``_NormBase``): weight γ (ones)
    and bias β (zeros) of shape (C,) when ``affine``, and with ``track_running_stats`` the
    buffers ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked``
    (0, int64); ``reset_running_stats`` and ``reset_parameters`` put them back, in place."""

    # torch's state-dict version of these modules: 2 added num_batches_tracked, and a state
    # dict without it loads, the counter left as it is (torch's _load_from_state_dict)
    _version = 2
    _optional_state = ("num_batches_tracked",)

    def __init__(self, num_features, eps, momentum, affine, track_running_stats, device, dtype,
                 bias, impl):
        super().__init__()
        name = type(self).__name__
        # 0 features: torch's empty parameters and buffers; a negative count fails here,
        # where an InstanceNorm without affine or running stats of torch's builds
        if type(num_features) is int and num_features < 0:    # torch: a negative size
            raise ChannelNormError(f"{name}: num_features must be a non-negative int, got "
                                   f"{num_features}")
        num_features, = _check_sizes(name, num_features=num_features)
        # without affine parameters or running statistics torch makes no tensor of dtype
        # and builds with any (int64 too): checked only where a tensor is made of it
        if affine or track_running_stats:
            dtype = _dtype(dtype)
        self._set_options(num_features, eps, momentum, affine, track_running_stats, impl)
        # None registered too, as torch's
        self.register_parameter("weight", Parameter(np.ones(num_features, dtype), device=device)
                                if affine else None)
        self.register_parameter("bias", Parameter(np.zeros(num_features, dtype), device=device)
                                if affine and bias else None)
        if track_running_stats:
            for buffer, value in (("running_mean", np.zeros(num_features, dtype)),
                                  ("running_var", np.ones(num_features, dtype)),
                                  ("num_batches_tracked", np.array(0, np.int64))):
                self.register_buffer(buffer, Tensor(value, dtype=value.dtype, device=device))
        else:
            for buffer in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(buffer, None)      # None registered, as torch's

    def _set_options(self, num_features, eps, momentum, affine, track_running_stats, impl):
        name = type(self).__name__
        arguments.check_eps(name, eps)
        arguments.check_impl(name, impl)
        arguments.check_momentum(name, momentum, allow_none=True)
        self.num_features, self.eps, self.momentum, self.impl = num_features, eps, momentum, impl
        self.affine, self.track_running_stats = affine, track_running_stats

    def reset_running_stats(self):
        """running_mean to 0, running_var to 1, num_batches_tracked to 0, in place (nothing
        without ``track_running_stats``)."""
        if self.track_running_stats:
            _fill(self.running_mean, 0.0)
            _fill(self.running_var, 1.0)
            _fill(self.num_batches_tracked, 0)

    def reset_parameters(self):
        """``reset_running_stats``, then γ to ones and β to zeros, in place."""
        self.reset_running_stats()
        if self.affine:
            _fill(self.weight, 1.0)
            _fill(self.bias, 0.0)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}{self._impl_repr()}")


class _BatchNorm(_NormBase):
    """BatchNorm1d's, 2d's, 3d's and SyncBatchNorm's forward (PyTorch's ``_BatchNorm``): the
    batch's statistics in training, moving the running ones (``momentum=None``: their
    cumulative average), the running ones in eval; a module whose running statistics are
    None (``track_running_stats=False``) normalizes with the batch's in eval too.
    ``input_dims`` are the dims it takes."""

    input_dims = None

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True, impl=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias, impl)

    def _check_input_dim(self, x):
        if x.ndim not in self.input_dims:
            dims = " or ".join(map(str, self.input_dims))
            raise ValueError(f"{type(self).__name__}: expected input of {dims} dims (got "
                             f"{x.ndim}D input of shape {x.shape})")

    def _feature_dim(self, x):
        """The channels' dim of ``x`` (1), its dims checked."""
        self._check_input_dim(x)
        return 1

    def _batch_norm(self, x):
        """PyTorch's ``_BatchNorm.forward``: the dims and channels checked, then
        ``F.batch_norm`` with the statistics the mode and the buffers call for."""
        x, name = self._check_input(x), type(self).__name__
        self._feature_dim(x)
        # torch's rules, read from the buffers as they are now (a user may set them to None)
        passed = not self.training or self.track_running_stats    # else nothing moves
        running = [self.running_mean, self.running_var] if passed else [None, None]
        per_channel = [t for t in (self.weight, self.bias, *running) if t is not None]
        if per_channel and x.shape[1] != self.num_features:   # else any C, as torch's
            raise ChannelNormError(f"{name}({self.num_features}): expected input with "
                                   f"num_features={self.num_features} channels in dim 1, "
                                   f"got {x.shape[1]} (input of shape {x.shape})")
        counts = self.training and self.track_running_stats and \
            self.num_batches_tracked is not None
        momentum = 0.0 if self.momentum is None else self.momentum
        if counts and self.momentum is None:         # cumulative moving average
            momentum = 1.0 / (int(self.num_batches_tracked.item()) + 1)
        batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        y = F.batch_norm(x, *running, self.weight, self.bias, training=batch_stats,
                         momentum=momentum, eps=self.eps, impl=self.impl)
        if counts:                                  # counted only after a successful call
            self.num_batches_tracked._array[...] += 1
            self.num_batches_tracked._bump_version()
        return y


class BatchNorm1d(_BatchNorm):
    r"""BatchNorm over (N, C) or (N, C, L) per channel (``torch.nn.BatchNorm1d``):

    .. math::
        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    Batch statistics in training (updating the running ones; ``momentum=None``: the
    cumulative average), running statistics in eval unless ``track_running_stats=False``.

    Shape:
        input (N, C) or (N, C, L), output the same.

    Example:
        >>> bn = nn.BatchNorm1d(4); y = bn(mg.tensor(np.random.randn(32, 4)))
    """

    norm = "batch_norm"
    places = ("mlp",)                            # BatchNorm2d's is "channel"
    input_dims = (2, 3)

    def forward(self, input):
        """BatchNorm of ``input`` per channel (dim 1). Shape: (N, C) or (N, C, L) -> the
        same."""
        return self._batch_norm(input)


class DyT(NormModule):
    r"""Dynamic Tanh (Zhu et al. 2025), LayerNorm's replacement without statistics:

    .. math::
        y = \gamma \odot \tanh(\alpha x) + \beta

    ``alpha`` is one learned number (shape (1,), ``alpha_init_value`` to start), ``weight``
    γ (ones) and ``bias`` β (zeros) have ``normalized_shape``, as in the paper's module;
    ``dyt(x, residual)`` returns ``(dyt(x + residual), x + residual)`` as a block's norm
    does; ``impl`` as ``nn.LayerNorm``'s. ``nn.DynamicTanh`` is the same class.

    Shape:
        input (*, *normalized_shape), output the same.

    Example:
        >>> dyt = nn.DyT(8); y = dyt(mg.tensor(np.random.randn(2, 8)))      # in (-1, 1)
    """

    norm = "dyt"

    def __init__(self, normalized_shape, alpha_init_value=0.5, elementwise_affine=True,
                 bias=True, impl=None, dtype=None, device=None):
        super().__init__()
        self.normalized_shape = arguments.normalized_shape("DyT", normalized_shape)
        check_number("DyT", "alpha_init_value", alpha_init_value)
        arguments.check_impl("DyT", impl)
        self.alpha_init_value, self.impl = alpha_init_value, impl
        self.elementwise_affine = elementwise_affine
        dtype = _dtype(dtype)
        ones, zeros = np.ones(self.normalized_shape, dtype), np.zeros(self.normalized_shape, dtype)
        self.alpha = Parameter(np.full(1, alpha_init_value, dtype), device=device)
        # None registered too, as torch's
        self.register_parameter("weight", Parameter(ones, device=device)
                                if elementwise_affine else None)
        self.register_parameter("bias", Parameter(zeros, device=device)
                                if elementwise_affine and bias else None)

    def forward(self, x, residual=None):
        """DyT of ``x`` (or of ``x + residual``, and that sum). Shape: unchanged."""
        x = self._check_input(x, self.normalized_shape,
                              f"normalized_shape={self.normalized_shape}", self.alpha)
        if residual is None:
            return F.dyt(x, self.alpha, self.weight, self.bias, self.impl)
        arguments.check_like("DyT", "residual", residual, x)
        s = x + residual
        return F.dyt(s, self.alpha, self.weight, self.bias, self.impl), s

    def extra_repr(self):
        return (f"{self.normalized_shape}, alpha_init_value={self.alpha_init_value}, "
                f"elementwise_affine={self.elementwise_affine}{self._impl_repr()}")


DynamicTanh = DyT


def _fill(tensor, value):
    """``tensor`` (a parameter or buffer, or None) set to ``value`` in place, a new version."""
    if tensor is not None:
        tensor._array[...] = value
        tensor._bump_version()


def module_for(norm, place):
    """The module class of ``norm`` (a name or alias) in ``place``; a ValueError when no
    module declares it."""
    spec = lookup(norm, "module_for: norm")
    if (spec.name, place) not in MODULES:
        raise ValueError(f"module_for: no nn module declares norm = {spec.name!r} for place "
                         f"{place!r}")
    return MODULES[spec.name, place]


def make_norm(norm, width, impl=None, dtype=None, device=None, place="row"):
    """The module of ``norm`` (by name or alias, one that fits ``place``: "row", a
    Transformer block's, by default; "mlp"; "channel") for ``width`` features.

    Example:
        >>> make_norm("rms_norm", 64)                     # nn.RMSNorm(64, eps=1e-6)
    """
    spec = lookup(norm, "make_norm: norm", fitting(place))
    return module_for(spec.name, place).for_width(width, impl=impl, dtype=dtype, device=device)

"""Seed-style layers: explicit ``forward(x)`` / ``backward(grad_output)`` on arrays, no
autograd; ``backward`` overwrites ``grad_gamma`` / ``grad_beta`` with that call's gradients.
The math is the reference kernels' (docs/architecture.md, "Seed-style layers")."""

import numbers

import numpy as np

from .backend import array_module
from .kernels import reference
from .norms.arguments import check_eps, check_momentum

__all__ = ["LayerNorm", "RMSNorm", "BatchNorm"]


def _features(cls_name, normalized_shape, d_model):
    if (normalized_shape is None) == (d_model is None):
        raise TypeError(f"{cls_name}() takes the feature size as normalized_shape or as the "
                        f"keyword d_model (exactly one), got normalized_shape="
                        f"{normalized_shape!r}, d_model={d_model!r}")
    size = normalized_shape if d_model is None else d_model
    if isinstance(size, tuple) and len(size) == 1:
        size = size[0]
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise ValueError(f"{cls_name}: normalized_shape must be a positive int, got {size!r}")
    return int(size)


def _check_input(cls_name, x, ndims, feature_axis, features):
    if hasattr(x, "grad_fn") and hasattr(x, "data"):          # a microgradnorm Tensor
        raise TypeError(f"{cls_name}.forward: x must be a NumPy (or CuPy) array, got a "
                        "Tensor; the seed layers work on arrays without autograd: pass "
                        "t.detach().numpy(), or use nn / functional for Tensors")
    xp = array_module(x)
    x = xp.asarray(x)
    if x.dtype.kind != "f":
        raise TypeError(f"{cls_name}.forward: x must be a floating-point array, got dtype "
                        f"{x.dtype}")
    if x.ndim not in ndims:
        raise ValueError(f"{cls_name}.forward: x must have {' or '.join(map(str, ndims))} "
                         f"dims, got shape {x.shape}")
    if x.shape[feature_axis] != features:
        raise ValueError(f"{cls_name}.forward: x.shape[{feature_axis}] must be {features}, "
                         f"got x of shape {x.shape}")
    return x


def _check_params(layer, shape, names):
    # the user may replace γ, β and eps between calls: checked before anything is computed
    cls_name = type(layer).__name__
    for name in names:
        value = getattr(layer, name)
        if tuple(getattr(value, "shape", ())) != shape:
            raise ValueError(f"{cls_name}.forward: {name} must be an array of "
                             f"shape {shape}, got {getattr(value, 'shape', type(value).__name__)}")
        if getattr(getattr(value, "dtype", None), "kind", None) != "f":
            raise TypeError(f"{cls_name}.forward: {name} must be a floating-point array, got "
                            f"dtype {value.dtype} (its gradient would be truncated)")
    check_eps(cls_name, layer.eps)


def _check_running(layer, training):
    # both checked first, so a bad running_var cannot leave running_mean moved
    for name in ("running_mean", "running_var"):
        value = getattr(layer, name)
        if value is None or not hasattr(value, "shape") or not hasattr(value, "dtype"):
            raise TypeError(f"BatchNorm.forward: {name} must be an array of shape "
                            f"({layer.num_features},), got {type(value).__name__}")
        if tuple(value.shape) != (layer.num_features,):
            raise ValueError(f"BatchNorm.forward: {name} must have shape "
                             f"({layer.num_features},), got {tuple(value.shape)}")
        if value.dtype.kind != "f":
            raise TypeError(f"BatchNorm.forward: {name} must be a floating-point array, got "
                            f"dtype {value.dtype}")
        if training and not getattr(getattr(value, "flags", None), "writeable", True):
            raise ValueError(f"BatchNorm.forward: {name} is read-only, but training updates "
                             "it in place")


def _normalized(x2, cache, shape):
    # x̂ = (x - mean)·rstd (RMSNorm: x·rstd); statistics per row or channel, as (K, 1)
    stats = (slice(None), None)
    centered = x2 if "mean" not in cache else x2 - cache["mean"][stats]
    return (centered * cache["rstd"][stats]).reshape(shape)


def _check_grad(cls_name, grad_output, cache):
    if cache is None:
        raise RuntimeError(f"{cls_name}.backward called before forward: call forward(x) first; "
                           "backward uses what forward cached")
    grad_output = array_module(grad_output).asarray(grad_output)
    if grad_output.shape != cache["x"].shape:
        raise ValueError(f"{cls_name}.backward: grad_output must have the shape of the last "
                         f"forward's output {cache['x'].shape}, got {grad_output.shape}")
    return grad_output


class _RowNorm:
    # LayerNorm and RMSNorm: (B, D) or (B, L, D) input, statistics over the last dim

    def __init__(self, normalized_shape, eps, d_model):
        self.normalized_shape = _features(type(self).__name__, normalized_shape, d_model)
        check_eps(type(self).__name__, eps)
        self.eps = eps
        self.gamma = np.ones(self.normalized_shape)                 # (D,)
        self.grad_gamma = None
        self._cache = None

    def _rows(self, x):
        x = _check_input(type(self).__name__, x, (2, 3), -1, self.normalized_shape)
        return x, x.reshape(-1, self.normalized_shape)                # (M, D)

    @property
    def x_hat(self):
        """x̂ of the latest forward, recomputed from the cache."""
        if self._cache is None:
            return None
        rows = self._cache["x"].reshape(-1, self.normalized_shape)
        return _normalized(rows, self._cache, self._cache["x"].shape)

    def __repr__(self):
        return f"{type(self).__name__}({self.normalized_shape}, eps={self.eps})"


class LayerNorm(_RowNorm):
    """Seed-style LayerNorm over the last dim D (``normalized_shape`` or ``d_model``):
    y = γ·(x − mean)/sqrt(var + eps) + β; γ, β are float64 arrays the user may replace.

    Shape:
        x: (B, D) or (B, L, D); output and dx the same; γ, β, grad_gamma, grad_beta (D,).
    """

    def __init__(self, normalized_shape=None, eps=1e-5, *, d_model=None):
        super().__init__(normalized_shape, eps, d_model)
        self.beta = np.zeros(self.normalized_shape)                 # (D,)
        self.grad_beta = None

    def forward(self, x):
        """y = γ·(x − mean)·rstd + β per row, rstd = 1/sqrt(var + eps); caches for backward.

        Args:
            x: NumPy (or CuPy) float array, (B, D) or (B, L, D).
        Returns:
            y, of x's shape and dtype.
        """
        x, rows = self._rows(x)
        _check_params(self, (self.normalized_shape,), ("gamma", "beta"))
        xp = array_module(x)
        gamma, beta = xp.asarray(self.gamma), xp.asarray(self.beta)
        y, mean, rstd = reference.layer_norm_forward(rows, gamma, beta, self.eps)
        # copies of x and γ: without version counters, a later in-place change by the
        # caller must not change this backward; x̂ is recomputed from x, mean, rstd
        self._cache = {"x": x.copy(), "mean": mean, "rstd": rstd, "gamma": gamma.copy()}
        return y.reshape(x.shape)

    def backward(self, grad_output):
        """dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) per row, g = dy·γ; sets ``grad_gamma`` =
        Σ dy·x̂ and ``grad_beta`` = Σ dy.

        Args:
            grad_output: dL/dy, of the forward input's shape.
        Returns:
            dx, of that shape.
        """
        grad_output = _check_grad("LayerNorm", grad_output, self._cache)
        cache = self._cache
        rows = cache["x"].reshape(-1, self.normalized_shape)
        dx, dgamma, dbeta = reference.layer_norm_backward(
            grad_output.reshape(rows.shape), rows, cache["gamma"], cache["mean"], cache["rstd"])
        self.grad_gamma = dgamma.astype(self.gamma.dtype)
        self.grad_beta = dbeta.astype(self.beta.dtype)
        return dx.reshape(cache["x"].shape)


class RMSNorm(_RowNorm):
    """Seed-style RMSNorm over the last dim: y = γ·x/sqrt(mean(x²) + eps); no β.

    Shape:
        x: (B, D) or (B, L, D); output and dx the same; γ and grad_gamma (D,).
    """

    def __init__(self, normalized_shape=None, eps=1e-6, *, d_model=None):
        super().__init__(normalized_shape, eps, d_model)

    def forward(self, x):
        """y = γ·x·rstd per row, rstd = 1/sqrt(mean(x²) + eps); caches x, γ and rstd.

        Args:
            x: array (B, D) or (B, L, D).
        Returns:
            y, of x's shape and dtype.
        """
        x, rows = self._rows(x)
        _check_params(self, (self.normalized_shape,), ("gamma",))
        gamma = array_module(x).asarray(self.gamma)
        y, rstd = reference.rms_norm_forward(rows, gamma, self.eps)
        self._cache = {"x": x.copy(), "rstd": rstd, "gamma": gamma.copy()}
        return y.reshape(x.shape)

    def backward(self, grad_output):
        """dx = rstd·(g − x̂·mean(g·x̂)) per row, g = dy·γ; sets ``grad_gamma`` = Σ dy·x̂.

        Args:
            grad_output: dL/dy, of the forward input's shape.
        Returns:
            dx, of that shape.
        """
        grad_output = _check_grad("RMSNorm", grad_output, self._cache)
        cache = self._cache
        rows = cache["x"].reshape(-1, self.normalized_shape)
        dx, dgamma = reference.rms_norm_backward(
            grad_output.reshape(rows.shape), rows, cache["gamma"], cache["rstd"])
        self.grad_gamma = dgamma.astype(self.gamma.dtype)
        return dx.reshape(cache["x"].shape)


class BatchNorm:
    """Seed-style BatchNorm per channel (dim 1): y = γ·(x − mean)/sqrt(var + eps) + β, with
    batch statistics (updating the running ones) in training, the running ones in eval.

    Shape:
        x: (N, C) or (N, C, L); output and dx the same; γ, β and running stats (C,).
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.num_features = _features("BatchNorm", num_features, None)
        check_eps("BatchNorm", eps)
        check_momentum("BatchNorm", momentum)
        self.eps, self.momentum = eps, momentum
        self.gamma = np.ones(self.num_features)
        self.beta = np.zeros(self.num_features)
        self.running_mean = np.zeros(self.num_features)
        self.running_var = np.ones(self.num_features)
        self.grad_gamma = self.grad_beta = None
        self.training = True
        self._cache = None

    def train(self, mode=True):
        """Use batch statistics (and update the running ones) when ``mode``; returns self."""
        self.training = mode
        return self

    def eval(self):
        """``train(False)``: normalize with the running statistics; returns self."""
        return self.train(False)

    def forward(self, x):
        """y = γ·(x − mean)·rstd + β per channel, batch or running statistics.

        Args:
            x: array (N, C) or (N, C, L); training needs more than one value per channel.
        Returns:
            y, of x's shape and dtype.
        """
        x = _check_input("BatchNorm", x, (2, 3), 1, self.num_features)
        _check_params(self, (self.num_features,), ("gamma", "beta"))
        check_momentum("BatchNorm", self.momentum)
        _check_running(self, self.training)
        x3 = x.reshape(x.shape[0], x.shape[1], -1)                   # (N, C, L)
        xp = array_module(x)
        gamma, beta = xp.asarray(self.gamma), xp.asarray(self.beta)
        if self.training:
            if x3.shape[0] * x3.shape[2] < 2:
                raise ValueError(f"BatchNorm.forward: training needs more than 1 value per "
                                 f"channel, got x of shape {x.shape}; use eval() for one sample")
            mean, var = reference.batch_norm_statistics(x3)
            reference.update_running_stats(self.running_mean, self.running_var, mean, var,
                                           x3.shape[0] * x3.shape[2], self.momentum)
        else:
            acc = reference.batch_norm_dtype(x)
            mean = xp.asarray(self.running_mean).astype(acc)
            var = xp.asarray(self.running_var).astype(acc)
        y, rstd = reference.batch_norm_forward(x3, mean, var, gamma, beta, self.eps)
        self._cache = {"x": x.copy(), "mean": mean, "rstd": rstd, "gamma": gamma.copy(),
                       "training": self.training}
        return y.reshape(x.shape)

    def backward(self, grad_output):
        """dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) per channel in training, g·rstd in eval
        (g = dy·γ); sets ``grad_gamma`` and ``grad_beta``.

        Args:
            grad_output: dL/dy, of the forward input's shape.
        Returns:
            dx, of that shape.
        """
        grad_output = _check_grad("BatchNorm", grad_output, self._cache)
        cache = self._cache
        x3 = cache["x"].reshape(cache["x"].shape[0], self.num_features, -1)
        dx, dgamma, dbeta = reference.batch_norm_backward(
            grad_output.reshape(x3.shape), x3, cache["gamma"], cache["mean"], cache["rstd"],
            cache["training"])
        self.grad_gamma = dgamma.astype(self.gamma.dtype)
        self.grad_beta = dbeta.astype(self.beta.dtype)
        return dx.reshape(cache["x"].shape)

    @property
    def x_hat(self):
        """x̂ of the latest forward, recomputed from the cache."""
        if self._cache is None:
            return None
        x = self._cache["x"]
        return _normalized(x.reshape(x.shape[0], self.num_features, -1), self._cache, x.shape)

    def __repr__(self):
        return (f"BatchNorm({self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"training={self.training})")

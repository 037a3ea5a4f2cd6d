"""``Norm``, the spec every tool and generic test looks up in ``NORMS``, and the helpers
the norm families share."""

import dataclasses
import math
from typing import Callable

import numpy as np

from ..autograd import Function

__all__ = ["FusedNorm", "Norm"]


@dataclasses.dataclass(frozen=True)
class Norm:
    """One normalization, both ways, and what a tool needs to call it generically.

    Attributes:
        name: the one spelling (``"layer_norm"``), ``F``'s and the tools'; ``title`` is for
            tables (``"LayerNorm"``); ``aliases`` are other spellings ``lookup`` accepts.
        function: the public, checked entry (``F.layer_norm``); ``composite`` the unchecked
            textbook graph; ``fused`` the ``Function`` of the fused node.
        residual: takes ``(x, residual, ...)`` and returns ``(y, x + residual)``.
        per_channel: statistics per channel (dim 1, BatchNorm) instead of per row.
        call, torch: run ``function`` / PyTorch's functional on {name: tensor} (``run``,
            ``run_torch``).
        random_inputs: ``(shape, dtype, seed, scale) -> {name: array}``, where the inputs
            are not a norm's x and parameters (``FUSED_OPS``: softmax, attention, ...);
            ``constants`` names those that take no gradient (cross-entropy's targets).
    """

    name: str
    title: str
    function: Callable
    composite: Callable
    fused: type
    params: tuple
    eps: float
    call: Callable
    torch: Callable
    residual: bool = False
    per_channel: bool = False
    aliases: tuple = ()
    random_inputs: Callable = None
    constants: tuple = ()

    @property
    def outputs(self):
        """The names of the outputs: a residual form also returns x + residual."""
        return ("output", "sum x + residual") if self.residual else ("output",)

    def run(self, tensors, impl="fused", running=None, training=True, **options):
        """The norm on {name: Tensor} with ``impl``, as a tuple (``outputs`` names it);
        ``running`` is BatchNorm's {"running_mean": array, "running_var": array} or None."""
        out = self.call(self.function, tensors, impl, running or {}, training, **options)
        return out if isinstance(out, tuple) else (out,)

    def run_torch(self, torch_functional, tensors, running=None, training=True, **options):
        """PyTorch's result for {name: torch.Tensor}, as a tuple (``outputs`` names it);
        ``options``: ``eps``."""
        out = self.torch(torch_functional, tensors, running or {}, training, **options)
        return out if isinstance(out, tuple) else (out,)

    def make_inputs(self, shape, dtype="float64", affine=True, seed=0, scale=1.0):
        """Random {name: array} for ``shape``: x (and residual) ``scale`` times standard
        normal; parameters not all ones, so the affine path is exercised."""
        shape = tuple(shape)
        if self.random_inputs is not None:
            return self.random_inputs(shape, dtype, seed, scale)
        if self.per_channel and len(shape) < 2:
            raise ValueError(f"{self.name} needs a shape (N, C) or (N, C, L), got {shape}")
        rng = np.random.default_rng(seed)
        param_shape = (shape[1],) if self.per_channel else shape[-1:]
        arrays = {"x": scale * rng.standard_normal(shape)}
        if self.residual:
            arrays["residual"] = scale * rng.standard_normal(shape)
        if affine:
            arrays["weight"] = 1 + 0.5 * rng.standard_normal(param_shape)
            if "bias" in self.params:
                arrays["bias"] = 0.5 * rng.standard_normal(param_shape)
        return {name: a.astype(dtype) for name, a in arrays.items()}

    def running_stats(self, arrays):
        """Fresh running statistics (mean 0, variance 1) for a per-channel norm, else None."""
        if not self.per_channel:
            return None
        channels, dtype = arrays["x"].shape[1], arrays["x"].dtype
        return {"running_mean": np.zeros(channels, dtype),
                "running_var": np.ones(channels, dtype)}


# ----- helpers shared by the norm families ------------------------------------------------
def row_norm_call(function, t, impl, running, training, **options):
    """``Norm.call`` of a row norm: x (and residual), the last dim, the parameters given."""
    first = (t["x"], t["residual"]) if "residual" in t else (t["x"],)
    return function(*first, t["x"].shape[-1:], impl=impl, **_given_params(t), **options)


def row_norm_torch(name, eps):
    """``Norm.torch`` of a row norm: PyTorch's ``F.<name>`` with ``eps`` (by default),
    after the residual add if there is one."""
    def run(tF, t, running, training, eps=eps):
        s = t["x"] + t["residual"] if "residual" in t else t["x"]
        y = getattr(tF, name)(s, s.shape[-1:], eps=eps, **_given_params(t))
        return (y, s) if "residual" in t else y
    return run


def _given_params(t):
    return {name: t[name] for name in ("weight", "bias") if t.get(name) is not None}


def rows(array, normalized_shape):
    """(..., *normalized_shape) -> (M, D)."""
    size = math.prod(normalized_shape)
    return array.reshape(array.size // size if size else 0, size)


def flat(param):
    """A parameter of the normalized shape as (D,), or None."""
    return param if param is None or param.ndim == 1 else param.reshape(-1)


def shaped(grad, like):
    """A gradient (D,) back in ``like``'s shape, or None."""
    return None if grad is None or like is None else grad.reshape(like.shape)


def affine(xhat, weight, bias):
    """x̂·γ + β with either left out when None (a Tensor expression)."""
    if weight is not None:
        xhat = xhat * weight
    if bias is not None:
        xhat = xhat + bias
    return xhat


def empty_norm(x, weight, bias):
    """A zero-size input's empty output, in the graph so that backward gives weight and bias
    zero gradients."""
    return affine(x * 1.0, weight, bias)


class FusedNorm(Function):
    """The base of every fused node, the norms' and softmax's and attention's (the
    visualizer colours these); ``saved_names`` lists what forward saves; its ``mean`` and
    ``rstd`` (a norm's) hold one value per ``statistics_of``."""

    saved_names = ()
    statistics_of = "row"

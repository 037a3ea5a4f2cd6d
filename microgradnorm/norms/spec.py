"""What a norm is: ``Norm``, the spec every tool and generic test looks up in ``NORMS``,
and the small array helpers the norm families share."""

import dataclasses
from typing import Callable

import numpy as np

from ..autograd import Function

__all__ = ["FusedNorm", "Norm"]


@dataclasses.dataclass(frozen=True)
class Norm:
    """One normalization, both ways: its composite graph, its fused node and what a tool
    needs to call it generically.

    Attributes:
        name: the one spelling (``"layer_norm"``): ``F``'s name, the CLI's and the tools'.
        title: for tables and drawings (``"LayerNorm"``).
        function: the public, checked entry (``F.layer_norm``); ``impl`` picks the graph.
        composite: the textbook graph of primitives (unchecked; ``function`` checks).
        fused: the ``Function`` (or Functions) of the fused node.
        params: the learned parameters' names, ``("weight", "bias")``.
        eps: the default eps.
        residual: a residual form: takes ``(x, residual, ...)``, returns ``(y, x + residual)``.
        per_channel: statistics per channel (dim 1, BatchNorm) instead of per row.
        aliases: other spellings ``lookup`` accepts (``"layernorm"``).
        call: ``call(function, tensors, impl, running, training, **options)`` -> output
            Tensor or tuple, for {name: Tensor} inputs (see ``run``).
        torch: ``torch(torch_functional, tensors, running, training)`` -> PyTorch's result
            for the same inputs as torch tensors: the twin tests and benchmarks compare with.
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

    @property
    def outputs(self):
        """The names of the outputs: a residual form also returns x + residual."""
        return ("output", "sum x + residual") if self.residual else ("output",)

    @property
    def inputs(self):
        """The names of the Tensor inputs, in call order."""
        return ("x",) + (("residual",) if self.residual else ()) + self.params

    def run(self, tensors, impl="fused", running=None, training=True, **options):
        """Call the norm on {name: Tensor} (``x``, ``residual``, ``weight``, ``bias``;
        missing parameters are None) with ``impl``; ``running`` holds BatchNorm's running
        statistics ({"running_mean": array, "running_var": array}) or is None. Returns a
        tuple of output Tensors (``outputs`` names them)."""
        out = self.call(self.function, tensors, impl, running or {}, training, **options)
        return out if isinstance(out, tuple) else (out,)

    def run_torch(self, torch_functional, tensors, running=None, training=True):
        """PyTorch's result for {name: torch.Tensor}, as a tuple (``outputs`` names it)."""
        out = self.torch(torch_functional, tensors, running or {}, training)
        return out if isinstance(out, tuple) else (out,)

    def make_inputs(self, shape, dtype="float64", affine=True, seed=0, scale=1.0):
        """Random {name: array} for ``shape``: x (and residual) ``scale`` times standard
        normal draws; the parameters have the normalized (or channel) shape and are not
        all ones, so the affine path is exercised."""
        shape = tuple(shape)
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
def rows(array, normalized_shape):
    """(..., *normalized_shape) -> (M, D)."""
    size = int(np.prod(normalized_shape))
    return array.reshape(array.size // size if size else 0, size)


def flat(param):
    """A parameter of the normalized shape as (D,), or None."""
    return None if param is None else param.reshape(-1)


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
    """A zero-size input's output: as empty as x (PyTorch returns it too), recorded in the
    graph so that backward gives x an empty gradient and weight and bias zero ones."""
    return affine(x * 1.0, weight, bias)


class FusedNorm(Function):
    """The base of every fused norm node: one graph node whose backward is a closed form
    (the visualizer labels these as norms). ``saved_names`` lists what forward saves."""

    saved_names = ()

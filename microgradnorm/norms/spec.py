"""``Norm``, the spec every tool and generic test looks up in ``NORMS``, and the helpers the
norm families share.

A ``Norm`` is a ``fused.Twin`` (the op both ways, its inputs and options declared) with
what a normalization declares besides. The fields, in short:

    name, title, aliases                 "layer_norm", "LayerNorm", ("layernorm",)
    function, composite, fused           F's checked entry, the graph of primitives, the node
    inputs    Input(name, kind, optional=False, differentiable=True, init=0.0), kinds:
              "x", "like-x" (a residual), "per-feature" (the normalized shape),
              "per-channel" (dim 1), "scalar" (DyT's α), "running", "index"
    options   Option(name, default, variants=(), torch=True): ("eps", 1e-5), momentum, ...;
              a norm without eps declares none; ("eps", None): PyTorch's machine epsilon of
              x's statistics (RMSNorm, ``arguments.machine_eps``)
    outputs   ("output",), or ("output", "sum x + residual")
    call      (function, {name: value}, impl, **options) -> output(s); default: keywords
    torch     (torch.nn.functional, {name: value}, **options) -> PyTorch's output(s)
    ndim, shape_text                     x's fewest and most dims, and in words
    places    where a model may put it: "row", "mlp", "channel" (``PLACES``); its module is
              the nn class that declares ``norm = "<name>"``
    statistics                           "row", "channel", or None (no statistics: DyT)
    centres   subtracts a mean (LayerNorm, BatchNorm) or not (RMSNorm, DyT)
    naive     {label: Naive(function, shows=(dtype, family))}: precision's wrong rows
    kernels   the kernel functions its fused node calls (``kernels.for_array(x).<name>``)
    kernel_calls, kernel_outputs         (kernels, arrays, **options) -> (forward, backward)
              closures on arrays, and the names of what they return: the GPU bench's

Derived, never declared: ``x``, ``params`` (the learned inputs), ``optional_params``,
``running``, ``constants``, ``residual``, ``per_channel``, ``eps``, ``has_eps``, ``defaults``,
``variants()``, ``make_inputs``, ``running_stats``, ``run``, ``run_torch``, ``empty_output``.
"""

import dataclasses
import math
from typing import Callable

import numpy as np

from ..fused.twin import FusedFunction, Input, Option, Twin

__all__ = ["PLACES", "STATISTICS", "FusedFunction", "Input", "Naive", "Norm", "Option"]

# Where a model puts a norm, and what it then takes; a norm lists the places it fits.
PLACES = {
    "row": "a Transformer block's norm (nn.TransformerBlock, nn.GPT, TrainConfig, train "
           "--norm): x (B, T, D) over D; its module is built as Module(D) and also takes "
           "module(x, residual) -> (norm(x + residual), x + residual)",
    "mlp": "an MLP's hidden norm (nn.MLP): x (N, D), the module built as Module(D)",
    "channel": "a conv net's norm: x (N, C, H, W) per channel, the module built as Module(C)",
}
STATISTICS = ("row", "channel", None)


@dataclasses.dataclass(frozen=True)
class Naive:
    """A deliberately wrong implementation that the precision report shows beside the
    library's two: ``function(inputs, **options) -> output`` on {name: Tensor}, and the
    (dtype, family) cell where its lesson shows (``cli.precision.summary``)."""

    function: Callable
    shows: tuple


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class Norm(Twin):
    """One normalization, both ways: a ``Twin`` (this module's docstring lists the fields)
    with the places it fits, its statistics, whether it centres, its naive variants and
    its kernels."""

    places: tuple = ()
    statistics: str = "row"
    centres: bool = True
    naive: dict = dataclasses.field(default_factory=dict)
    kernels: tuple = ()
    kernel_calls: Callable = None
    kernel_outputs: tuple = ()

    def __post_init__(self):
        unknown = [place for place in self.places if place not in PLACES]
        if unknown or self.statistics not in STATISTICS:
            raise ValueError(f"Norm {self.name!r}: places must be among {tuple(PLACES)} and "
                             f"statistics one of {STATISTICS}, got {self.places}, "
                             f"{self.statistics!r}")

    @property
    def per_channel(self):
        """Statistics per channel (dim 1, BatchNorm) instead of per row."""
        return self.statistics == "channel"


# ----- helpers shared by the norm families ------------------------------------------------
def row_norm_call(function, given, impl, **options):
    """``Norm.call`` of a row norm: x (and residual), x's last dim as the normalized shape,
    the learned inputs given."""
    first = [given[name] for name in ("x", "residual") if name in given]
    learned = {name: value for name, value in given.items()
               if name not in ("x", "residual") and value is not None}
    return function(*first, first[0].shape[-1:], impl=impl, **learned, **options)


def row_norm_torch(name):
    """``Norm.torch`` of a row norm: PyTorch's ``F.<name>`` over the last dim, after the
    residual add if there is one."""
    def run(tF, given, **options):
        s = given["x"] + given["residual"] if "residual" in given else given["x"]
        learned = {n: v for n, v in given.items() if n not in ("x", "residual")
                   and v is not None}
        y = getattr(tF, name)(s, s.shape[-1:], **learned, **options)
        return (y, s) if "residual" in given else y
    return run


def one_pass_norm(axis):
    """A naive norm over ``axis``: the variance as Σx²/n − (Σx/n)², wrong when |mean| ≫
    std (plain sums: the mean primitive's correction step would make it exact on constant
    rows)."""
    def norm(given, eps, **options):
        x = given["x"]
        n = x.shape[axis]
        mean = x.sum(axis, keepdims=True) / n
        var = (x * x).sum(axis, keepdims=True) / n - mean * mean
        return affine((x - mean) / (var + eps).sqrt(), given.get("weight"), given.get("bias"))
    return norm


def rows(array, normalized_shape):
    """(..., *normalized_shape) -> (M, D)."""
    size = math.prod(normalized_shape)
    return array.reshape(array.size // size if size else 0, size)


def unrows(array, shape):
    """``rows``' inverse: an (M, D) result in x's ``shape``, itself where it has that shape
    already (x of 2 dims): a view costs ``Function.apply`` a look for the input whose
    memory it shares, 0.9 us a call."""
    return array if array.shape == shape else array.reshape(shape)


def flat(param):
    """A parameter of the normalized shape as (D,), or None."""
    return param if param is None or param.ndim == 1 else param.reshape(-1)


def shaped(grad, like):
    """A gradient (D,) back in ``like``'s shape, or None."""
    return None if grad is None or like is None else grad.reshape(like.shape)


def eps_beside(var, rstd, shape, dtype):
    """The eps a fused forward added to ``var`` (the variance or mean square its composite
    computes, one per statistic), recovered from the rstd its node kept: 1/rstd² − var, as
    an array of ``shape`` (var's, kept dims) in ``dtype``. The composite given it computes
    var + eps = 1/rstd² again, row by row, and so the fused node's function (``recompute``,
    for double backward) without the node keeping eps; rstd 0 (InstanceNorm's constant
    channel at eps 0) gives eps inf, and rstd 0 again."""
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = 1 / (rstd * rstd) - var
    return eps.reshape(shape).astype(dtype, copy=False)


def affine(xhat, weight, bias):
    """x̂·γ + β with either left out when None (a Tensor expression)."""
    if weight is not None:
        xhat = xhat * weight
    if bias is not None:
        xhat = xhat + bias
    return xhat

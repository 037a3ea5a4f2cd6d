"""The norms, each twice: a composite graph of primitives and a fused node.

``NORMS`` maps one spelling per norm to its ``Norm`` spec, where every tool and generic test
looks norms up. One file per family holds its graphs, its public entry (``F.<name>``) and
its spec; ``arguments`` holds every check. ``FUSED_OPS`` holds the other ops offered both
ways with specs of the same kind: softmax, log_softmax, cross_entropy, attention (softmax
normalization of the scores) and GELU; ``SPECS`` is both, what ``mg.compare`` and
``viz.compare`` take.

Example::

    >>> from microgradnorm.norms import NORMS, lookup
    >>> list(NORMS)
    ['layer_norm', 'rms_norm', 'batch_norm', 'add_layer_norm', 'add_rms_norm']
    >>> lookup("layernorm").name                     # the old spelling is an alias
    'layer_norm'
"""

from .arguments import CASTINGS, IMPLS, get_norm_impl, norm_impl
from .attention import ATTENTION, scaled_dot_product_attention
from .batch_norm import BATCH_NORM, batch_norm
from .gelu import GELU, gelu
from .layer_norm import ADD_LAYER_NORM, LAYER_NORM, add_layer_norm, layer_norm
from .rms_norm import ADD_RMS_NORM, RMS_NORM, add_rms_norm, rms_norm
from .softmax import CROSS_ENTROPY, LOG_SOFTMAX, SOFTMAX, cross_entropy_rows, log_softmax, softmax
from .spec import FusedNorm, Norm

__all__ = ["CASTINGS", "FUSED_OPS", "IMPLS", "NORMS", "SPECS", "FusedNorm", "Norm",
           "add_layer_norm", "add_rms_norm", "batch_norm", "cross_entropy_rows", "gelu",
           "get_norm_impl", "layer_norm", "log_softmax", "lookup", "norm_impl", "rms_norm",
           "scaled_dot_product_attention", "softmax"]

NORMS = {norm.name: norm for norm in (LAYER_NORM, RMS_NORM, BATCH_NORM, ADD_LAYER_NORM,
                                      ADD_RMS_NORM)}
FUSED_OPS = {op.name: op for op in (SOFTMAX, LOG_SOFTMAX, CROSS_ENTROPY, ATTENTION, GELU)}
SPECS = {**NORMS, **FUSED_OPS}
_SPELLINGS = {alias: spec for spec in SPECS.values() for alias in (spec.name, *spec.aliases)}


def lookup(name, argument="norm", among=None):
    """The ``Norm`` spec called ``name`` (or an alias, ``"layernorm"``), one of ``among``
    (default: the norms; ``SPECS`` for every op offered both ways); a ValueError naming
    ``argument`` and the allowed names otherwise."""
    among = tuple(NORMS) if among is None else tuple(among)
    norm = _SPELLINGS.get(name) if isinstance(name, str) else None
    if norm is None or norm.name not in among:
        raise ValueError(f"{argument} must be one of {', '.join(map(repr, among))}, "
                         f"got {name!r}")
    return norm

"""The norms, each twice: a composite graph of primitives and a fused node.

``NORMS`` maps one spelling per norm to its ``Norm`` spec (``spec.py`` lists its fields),
where every tool and generic test looks norms up. One file per family holds its graphs, its
public entry (``F.<name>``), its own argument checks and its spec; ``arguments`` holds the
checks the families share. ``FUSED_OPS`` (``microgradnorm.fused``) holds the other ops
offered both ways, softmax, log_softmax, cross_entropy, attention and GELU, with specs of
the same kind (``Twin``); ``SPECS`` is both, what ``mg.compare`` and ``viz.compare`` take.

Example::

    >>> from microgradnorm.norms import NORMS, fitting, lookup
    >>> lookup("layernorm") is NORMS["layer_norm"]   # the old spelling is an alias
    True
    >>> "rms_norm" in fitting("row"), "batch_norm" in fitting("row")   # a block's norms
    (True, False)
"""

from ..fused import FUSED_OPS
from .arguments import IMPLS, get_norm_impl, norm_impl
from .batch_norm import BATCH_NORM, batch_norm
from .dyt import DYT, dyt
from .group_norm import GROUP_NORM, INSTANCE_NORM, group_norm, instance_norm
from .layer_norm import ADD_LAYER_NORM, LAYER_NORM, add_layer_norm, layer_norm
from .rms_norm import ADD_RMS_NORM, CASTINGS, RMS_NORM, add_rms_norm, rms_norm
from .spec import PLACES, Norm

__all__ = ["CASTINGS", "FUSED_OPS", "IMPLS", "NORMS", "PLACES", "SPECS", "Norm",
           "add_layer_norm", "add_rms_norm", "batch_norm", "dyt", "fitting", "get_norm_impl",
           "group_norm", "instance_norm", "layer_norm", "lookup", "norm_impl", "rms_norm"]

NORMS = {norm.name: norm for norm in (LAYER_NORM, RMS_NORM, BATCH_NORM, ADD_LAYER_NORM,
                                      ADD_RMS_NORM, GROUP_NORM, INSTANCE_NORM, DYT)}
SPECS = {**NORMS, **FUSED_OPS}
_SPELLINGS = {alias: spec for spec in SPECS.values() for alias in (spec.name, *spec.aliases)}


def lookup(name, argument="norm", among=None):
    """The spec called ``name`` (or an alias, ``"layernorm"``), one of ``among`` (default:
    the norms; ``SPECS`` for every op offered both ways); a ValueError naming ``argument``
    and the allowed names otherwise."""
    among = tuple(NORMS) if among is None else tuple(among)
    norm = _SPELLINGS.get(name) if isinstance(name, str) else None
    if norm is None or norm.name not in among:
        raise ValueError(f"{argument} must be one of {', '.join(map(repr, among))}, "
                         f"got {name!r}")
    return norm


def fitting(place):
    """The names of the norms that fit ``place`` (one of ``PLACES``: "row", a Transformer
    block's; "mlp", an MLP's; "channel", a conv net's), in registry order."""
    if place not in PLACES:
        raise ValueError(f"fitting: place must be one of {tuple(PLACES)}, got {place!r}")
    return tuple(name for name, norm in NORMS.items() if place in norm.places)

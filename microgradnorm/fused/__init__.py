"""The other ops offered twice, as a composite graph of primitives and as one fused node
with a closed-form backward: softmax, log_softmax and cross-entropy (``softmax.py``),
scaled dot-product attention, a softmax normalization of the scores (``attention.py``), and
GELU (``gelu.py``). ``FUSED_OPS`` holds their specs.

What every twin shares lives here too, and the norms build on it: ``twin.Twin`` (the spec:
inputs and options declared), ``twin.FusedFunction`` (the base of every fused node) and
``arguments`` (the tensor and ``impl`` checks, ``norm_impl``).
"""

from .arguments import IMPLS, get_norm_impl, norm_impl
from .attention import ATTENTION, scaled_dot_product_attention
from .gelu import GELU, gelu
from .softmax import CROSS_ENTROPY, LOG_SOFTMAX, SOFTMAX, cross_entropy_rows, log_softmax, softmax
from .twin import FusedFunction, Input, Option, Twin

__all__ = ["FUSED_OPS", "IMPLS", "FusedFunction", "Input", "Option", "Twin",
           "cross_entropy_rows", "gelu", "get_norm_impl", "log_softmax", "norm_impl",
           "scaled_dot_product_attention", "softmax"]

FUSED_OPS = {op.name: op for op in (SOFTMAX, LOG_SOFTMAX, CROSS_ENTROPY, ATTENTION, GELU)}

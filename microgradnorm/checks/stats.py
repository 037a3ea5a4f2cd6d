"""``graph_stats``: how many op nodes stand behind a tensor and what they keep alive."""

import dataclasses
from collections import Counter

from ..autograd import topological_order
from ..backend import memory_owner


@dataclasses.dataclass(frozen=True)
class GraphStats:
    """Op nodes behind a tensor (leaves are not nodes), {op name: count}, and the bytes
    saved for backward, each buffer once; ``freed``: the nodes a backward() has freed
    (they save nothing any more)."""

    nodes: int
    by_op: dict
    saved_bytes: int
    freed: int = 0


def graph_stats(*tensors):
    """Count the nodes behind ``tensors`` (one or several outputs) and the bytes they save.

    Example:
        >>> y = F.layer_norm(x, 8, w, b, impl="composite")
        >>> mg.graph_stats(y).nodes
        9
    """
    order = topological_order([t.grad_fn for t in tensors if t.grad_fn is not None])
    return GraphStats(nodes=len(order), by_op=dict(Counter(node.name for node in order)),
                      saved_bytes=saved_bytes(order),
                      freed=sum(1 for node in order if node._freed))


def saved_bytes(nodes):
    """Bytes of the arrays ``nodes`` saved for backward, each base buffer once."""
    buffers = {}
    for node in nodes:
        for array in node.saved_arrays():
            base = memory_owner(array)
            buffers[id(base)] = base.nbytes
    return sum(buffers.values())

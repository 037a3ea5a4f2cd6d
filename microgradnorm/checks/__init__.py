"""The checking tools: is a gradient right, and what does a graph cost?

    gradcheck.py    gradcheck, gradgradcheck, jacobian: analytic against float64 central
                    differences (gradgradcheck: the double backward against differences
                    of the gradient)
    stats.py        graph_stats: op nodes behind a tensor and the bytes saved for backward
    comparison.py   compare: one norm, composite against fused, every output and gradient
    memory.py       memory_timeline: the bytes a training step holds, node by node
    precision.py    precision_report: every norm and impl against float64, by dtype and input

Each is also ``mg.<name>`` (``mg.gradcheck``, ``mg.compare``, ...).
"""

from ..norms import NORMS
from .comparison import Comparison, compare
from .gradcheck import GradcheckError, gradcheck, gradgradcheck, jacobian
from .memory import MemoryTimeline, memory_timeline
from .precision import PrecisionReport, precision_report
from .stats import GraphStats, graph_stats

__all__ = ["NORMS", "Comparison", "GradcheckError", "GraphStats", "MemoryTimeline",
           "PrecisionReport", "compare", "gradcheck", "gradgradcheck", "graph_stats",
           "jacobian", "memory_timeline", "precision_report"]

"""Distances between two inputs as Modules, PyTorch's: PairwiseDistance and
CosineSimilarity (``F.pairwise_distance``, ``F.cosine_similarity``)."""

from .. import functional as F
from .module import Module


class PairwiseDistance(Module):
    """‖x1 - x2 + eps‖_p along the last dim (``F.pairwise_distance``); PyTorch keeps ``p``
    as ``self.norm``.

    Shape: x1 and x2 broadcast to (*, D); output (*) ((*, 1) with ``keepdim``).

    Example:
        >>> nn.PairwiseDistance()(a, b)                        # (N, D), (N, D) -> (N,)
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        """pairwise_distance(x1, x2). Shape: (*, D), (*, D) -> (*)."""
        return F.pairwise_distance(self._check_input(x1), self._check_input(x2), self.norm,
                                   self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Σ x1 x2 / (max(‖x1‖, eps) max(‖x2‖, eps)) along ``dim`` (``F.cosine_similarity``).

    Shape: x1 and x2 broadcast to (*, D, *), D at ``dim``; output (*, *).

    Example:
        >>> nn.CosineSimilarity(dim=1)(a, b)                   # (N, D), (N, D) -> (N,)
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        """cosine_similarity(x1, x2, dim). Shape: (*, D, *), (*, D, *) -> (*, *)."""
        return F.cosine_similarity(self._check_input(x1), self._check_input(x2), self.dim,
                                   self.eps)

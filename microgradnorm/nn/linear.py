"""Linear, Embedding and Dropout: the layers with weights that are not norms."""

import math

import numpy as np

from .. import backend, ops
from ..dtypes import check_number
from .. import functional as F
from ..tensor import Tensor
from . import init
from .module import Module, Parameter, _check_positive, _dtype


class Linear(Module):
    r""":math:`y = x W^T + b`, W and b drawn uniform in :math:`\pm 1/\sqrt{\text{in\_features}}`.

    Shape:
        input (*, in_features), output (*, out_features).

    Example:
        >>> y = nn.Linear(4, 2)(mg.tensor(np.ones((3, 4))))      # (3, 2)
    """

    def __init__(self, in_features, out_features, bias=True, dtype=None, device="cpu"):
        super().__init__()
        _check_positive("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        dtype = _dtype(dtype)
        self.weight = Parameter(np.zeros((out_features, in_features), dtype), device=device)
        self.bias = (Parameter(np.zeros(out_features, dtype), device=device) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw W and b again as PyTorch does, in its order: W by ``kaiming_uniform_(a=√5)``
        (uniform in ±√3 · gain/√in_features, gain = √(1/3): ±1/√in_features up to rounding),
        then b uniform in ±1/√in_features; the same seed gives torch's Linear."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        """y = x Wᵀ + b. Shape: (*, in_features) -> (*, out_features)."""
        x = self._check_input(x, (self.in_features,), f"in_features={self.in_features}",
                              self.weight)
        y = x @ self.weight.T                                 # (*, in) @ (in, out)
        return y + self.bias if self.bias is not None else y

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` for token id ``i``; initialised N(0, 1).

    Shape:
        input: integer array or Tensor (*), output (*, embedding_dim).

    Example:
        >>> y = nn.Embedding(10, 4)(np.array([[1, 2, 1]]))         # (1, 3, 4)
    """

    def __init__(self, num_embeddings, embedding_dim, dtype=None, device="cpu"):
        super().__init__()
        _check_positive("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(np.zeros((num_embeddings, embedding_dim), _dtype(dtype)),
                                device=device)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the table again from N(0, 1), as PyTorch does (``init.normal_``)."""
        init.normal_(self.weight)

    def forward(self, idx):
        """Rows of ``weight`` for the ids. Shape: integer (*) -> (*, embedding_dim)."""
        idx = idx._array if isinstance(idx, Tensor) else idx
        idx = backend.to_device(idx if backend.is_cupy_array(idx) else np.asarray(idx),
                                self.weight.device)
        if idx.dtype.kind not in "iu":
            raise TypeError(f"Embedding: input must hold integer ids, got dtype {idx.dtype}")
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= self.num_embeddings):
            raise ops.OutOfRangeError(
                f"Embedding: ids must be in [0, {self.num_embeddings}), got min "
                f"{int(idx.min())}, max {int(idx.max())}")
        return self.weight[idx]

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Dropout(Module):
    """Zero elements with probability ``p`` in training (scaling the rest by 1/(1-p));
    the identity in eval."""

    def __init__(self, p=0.5):
        super().__init__()
        check_number("Dropout", "p", p)
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must be a number in [0, 1], got {p!r}")
        self.p = p

    def forward(self, x):
        """Dropout in training, the identity in eval. Shape: (*) -> (*)."""
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"

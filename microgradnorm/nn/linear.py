"""Linear, Embedding and Dropout: the layers with weights that are not norms."""

import math

import numpy as np

from ..autograd import no_grad
from ..dtypes import check_number
from .. import functional as F
from . import init
from .module import Module, Parameter, _check_positive, _dtype


class Linear(Module):
    r""":math:`y = x W^T + b`, W and b drawn uniform in :math:`\pm 1/\sqrt{\text{in\_features}}`.

    Shape:
        input (*, in_features), output (*, out_features).

    Example:
        >>> y = nn.Linear(4, 2)(mg.tensor(np.ones((3, 4))))      # (3, 2)
    """

    def __init__(self, in_features, out_features, bias=True, device="cpu", dtype=None):
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

    def forward(self, input):
        """y = x Wᵀ + b. Shape: (*, in_features) -> (*, out_features)."""
        weight = self.weight          # read once: a parametrized weight is computed per read
        x = self._check_input(input, (self.in_features,), f"in_features={self.in_features}",
                              weight)
        return F.linear(x, weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under the name torch gives ``MultiheadAttention.out_proj`` (torch's
    quantization tools skip it by its class); it computes as Linear does, and its repr
    names it, as torch's."""


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` for token id ``i``; initialised N(0, 1), the
    ``padding_idx`` row zeros, as PyTorch's. ``forward`` is ``F.embedding``.

    Args:
        num_embeddings, embedding_dim: the table's shape.
        padding_idx: an id whose row starts at zero and never receives a gradient; a
            negative one counts from the end.
        max_norm, norm_type: rows looked up whose ``norm_type``-norm exceeds ``max_norm`` are
            scaled down to it in place first.
        scale_grad_by_freq, sparse: PyTorch's options, not implemented: False only.
        _weight, _freeze: a table to use instead of drawing one (``from_pretrained``), and
            whether it is frozen.

    Shape:
        input: integer array or Tensor (*), output (*, embedding_dim).

    Example:
        >>> y = nn.Embedding(10, 4, padding_idx=0)(np.array([[1, 2, 0]]))     # (1, 3, 4)
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device="cpu", dtype=None):
        super().__init__()
        _check_positive("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: scale_grad_by_freq and sparse gradients are "
                                      "not implemented; pass False")
        if max_norm is not None:
            check_number("Embedding", "max_norm", max_norm)
        check_number("Embedding", "norm_type", norm_type)
        self.padding_idx = F.embedding_padding_idx("Embedding", padding_idx, num_embeddings)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(np.zeros((num_embeddings, embedding_dim), _dtype(dtype)),
                                    device=device)
            self.reset_parameters()
            return
        if tuple(_weight.shape) != (num_embeddings, embedding_dim):
            raise F.AssertionValueError(
                f"Embedding: _weight's shape must be (num_embeddings, embedding_dim) = "
                f"({num_embeddings}, {embedding_dim}), got {tuple(_weight.shape)}")
        self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose table is ``embeddings`` (num_embeddings, embedding_dim),
        sharing its memory as PyTorch's, frozen (``requires_grad=False``) unless ``freeze``
        is False; the padding row is kept as given.

        Example:
            >>> emb = nn.Embedding.from_pretrained(mg.tensor([[0.0, 1.0], [2.0, 3.0]]))
        """
        if len(np.shape(embeddings)) != 2:
            raise F.AssertionValueError(f"Embedding.from_pretrained: embeddings must be 2-D "
                                        f"(num_embeddings, embedding_dim), got shape "
                                        f"{tuple(np.shape(embeddings))}")
        rows, cols = np.shape(embeddings)
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def reset_parameters(self):
        """Draw the table again from N(0, 1), then zero the padding row, as PyTorch does."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input):
        """Rows of ``weight`` for the ids. Shape: integer (*) -> (*, embedding_dim)."""
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        return text


class Dropout(Module):
    """Zero elements with probability ``p`` in training (scaling the rest by 1/(1-p));
    the identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        name = type(self).__name__
        check_number(name, "p", p)
        if not 0 <= p <= 1:
            raise ValueError(f"{name}: p must be a number in [0, 1], got {p!r}")
        self.p, self.inplace = p, bool(inplace)

    def forward(self, input):
        """Dropout in training, the identity in eval. Shape: (*) -> (*)."""
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """Zero whole channels with probability ``p`` in training (``F.dropout2d``: one draw per
    sample and channel, torch's), scaling the rest by 1/(1-p); the identity in eval."""

    def forward(self, input):
        """Channel dropout in training, the identity in eval. Shape: (N, C, H, W) or
        (N, C, L), unchanged."""
        return F.dropout2d(input, self.p, self.training, self.inplace)

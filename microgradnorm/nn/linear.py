"""Linear, Embedding, EmbeddingBag and Dropout: the layers with weights that are not norms."""

import math

import numpy as np

from ..autograd import no_grad
from ..dtypes import float_of
from .. import functional as F
from . import init
from ..dtypes import check_nonnegative_ints
from .module import Module, Parameter, _dtype


class Linear(Module):
    r""":math:`y = x W^T + b`, W and b drawn uniform in :math:`\pm 1/\sqrt{\text{in\_features}}`.

    Shape:
        input (*, in_features), output (*, out_features).

    Example:
        >>> y = nn.Linear(4, 2)(mg.tensor(np.ones((3, 4))))      # (3, 2)
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        in_features, out_features = check_nonnegative_ints(
            "Linear", ("out_features",), in_features=in_features,
            out_features=out_features)      # Linear(True, 3): torch's
        self.in_features, self.out_features = in_features, out_features
        dtype = _dtype(dtype)
        self.weight = Parameter(np.zeros((out_features, int(in_features)), dtype),
                                device=device)
        self.register_parameter(   # None registered too, as torch's (a Tensor refused there)
            "bias", Parameter(np.zeros(out_features, dtype), device=device) if bias else None)
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
        scale_grad_by_freq: each row's gradient divided by its id's count in the input.
        sparse: True: the gradient of ``weight`` is dense here (torch's is a sparse tensor
            of the rows read); its values are torch's, and ``optim.SparseAdam`` takes it.
        _weight, _freeze: a table to use instead of drawing one (``from_pretrained``), and
            whether it is frozen.

    Shape:
        input: integer array or Tensor (*), output (*, embedding_dim).

    Example:
        >>> y = nn.Embedding(10, 4, padding_idx=0)(np.array([[1, 2, 0]]))     # (1, 3, 4)
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        num_embeddings, embedding_dim = check_nonnegative_ints(
            "Embedding", ("num_embeddings",), num_embeddings=num_embeddings,
            embedding_dim=embedding_dim)    # a bool dim: torch's
        if max_norm is not None:
            float_of(max_norm, "Embedding", "max_norm")
        float_of(norm_type, "Embedding", "norm_type")
        self.padding_idx = F.embedding_padding_idx("Embedding", padding_idx, num_embeddings)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(np.zeros((num_embeddings, int(embedding_dim)),
                                             _dtype(dtype)), device=device)
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


class EmbeddingBag(Module):
    r"""Sums, means or maxima of bags of rows of a table, initialised N(0, 1) (the
    ``padding_idx`` row zeros), as PyTorch's; ``forward`` is ``F.embedding_bag``. With bags of
    one length and no padding, ``mode="sum"`` is ``Embedding`` then ``sum(dim=1)``.

    Args:
        num_embeddings, embedding_dim: the table's shape.
        max_norm, norm_type: rows looked up whose ``norm_type``-norm exceeds ``max_norm`` are
            scaled down to it in place first.
        scale_grad_by_freq: each row's gradient divided by its id's count in the input.
        sparse: True gives the dense gradient here (the values of torch's sparse one).
        mode: "sum", "mean" or "max" (checked here, not at the first call).
        include_last_offset: the offsets have one more entry, the end (CSR).
        padding_idx: an id left out of every bag, whose row starts at zero; a negative one
            counts from the end.
        _weight: a table to use instead of drawing one (``from_pretrained``).

    Shape:
        input (N,) with offsets (B,) (or (B + 1,)), or (B, L); per_sample_weights input's
        shape; output (B, embedding_dim).

    Example:
        >>> bag = nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag(mg.tensor([1, 2, 4, 5, 4, 3]), mg.tensor([0, 4]))            # (2, 3)
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        name = "EmbeddingBag"
        num_embeddings, embedding_dim = check_nonnegative_ints(
            name, ("num_embeddings",), num_embeddings=num_embeddings,
            embedding_dim=embedding_dim)    # a bool dim: torch's, as Embedding's
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"{name}: mode has to be one of sum, mean or max, got {mode!r}")
        if max_norm is not None:
            float_of(max_norm, name, "max_norm")
        float_of(norm_type, name, "norm_type")
        self.padding_idx = F.embedding_padding_idx(name, padding_idx, num_embeddings)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.mode, self.include_last_offset = mode, include_last_offset
        if _weight is None:
            self.weight = Parameter(np.zeros((num_embeddings, int(embedding_dim)),
                                             _dtype(dtype)), device=device)
            self.reset_parameters()
        elif tuple(_weight.shape) != (num_embeddings, embedding_dim):
            raise F.AssertionValueError(f"{name}: Shape of weight does not match "
                                        f"num_embeddings and embedding_dim ({num_embeddings}, "
                                        f"{embedding_dim}), got {tuple(_weight.shape)}")
        else:
            self.weight = Parameter(_weight)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose table is ``embeddings`` (num_embeddings, embedding_dim),
        sharing its memory as PyTorch's, frozen unless ``freeze`` is False; the padding row
        is kept as given.

        Example:
            >>> bag = nn.EmbeddingBag.from_pretrained(mg.tensor([[1.0, 2.3], [4.0, 5.1]]))
        """
        if len(np.shape(embeddings)) != 2:
            raise F.AssertionValueError(f"EmbeddingBag.from_pretrained: Embeddings parameter "
                                        f"is expected to be 2-dimensional, got shape "
                                        f"{tuple(np.shape(embeddings))}")
        rows, cols = np.shape(embeddings)
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def reset_parameters(self):
        """Draw the table again from N(0, 1), then zero the padding row, as PyTorch does."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input, offsets=None, per_sample_weights=None):
        """The bags' sums, means or maxima. Shape: (N,) with offsets, or (B, L) ->
        (B, embedding_dim)."""
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx!r}"
        return text


class Dropout(Module):
    """Zero elements with probability ``p`` in training (scaling the rest by 1/(1-p));
    the identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        name = type(self).__name__
        float_of(p, name, "p")
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


class Dropout3d(Dropout):
    """Zero whole channels (3-D feature maps) with probability ``p`` in training
    (``torch.nn.Dropout3d``, see ``F.dropout3d``: one draw per sample and channel, torch's),
    scaling the rest by 1/(1-p); the identity in eval.

    Example:
        >>> nn.Sequential(nn.Conv3d(3, 8, 3), nn.ReLU(), nn.Dropout3d(0.1))
    """

    def forward(self, input):
        """Channel dropout in training, the identity in eval. Shape: (N, C, D, H, W) or
        (C, D, H, W), unchanged."""
        return F.dropout3d(self._check_input(input), self.p, self.training, self.inplace)

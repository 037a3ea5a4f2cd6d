"""``nn.AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2017), torch's
Python implementation line for line, on the library's ops (index_select, gather,
index_copy, log_softmax); in-place writes into fresh tensors are out-of-place copies here,
with the same values and gradients."""

import collections

import numpy as np

from .. import backend, ops
from .. import functional as F
from ..dtypes import check_bool, check_number, index_of
from ..tensor import Tensor
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module, _check_positive, _check_sizes

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    r"""Efficient softmax approximation (Grave et al., "Efficient softmax approximation for
    GPUs"): the classes, sorted by frequency, split at ``cutoffs`` into a head (the
    shortlist and one entry per cluster) and tail clusters, each cluster's logits from a
    projection to ``in_features // div_value**(i+1)`` features. The log-probability of
    class c in cluster i is :math:`\log p_{head}(i) + \log p_i(c)`.

    Args:
        in_features: the input's features. n_classes: the number of classes.
        cutoffs: increasing ints in [1, n_classes - 1], the clusters' first classes.
        div_value: the factor each cluster's projection size shrinks by.
        head_bias: whether the head's Linear has a bias.

    Parameters are created (and drawn) as torch's: ``head`` (Linear), then for each cluster
    ``tail[i]``, a Sequential of two bias-free Linears; one seed gives torch's values.

    Shape:
        input (N, in_features) or (in_features,); target (N,) or (); ``forward`` returns
        ``_ASMoutput(output, loss)``: each target's log-probability (N,) (or ()) and the
        mean negative log-likelihood ().

    Example:
        >>> asm = nn.AdaptiveLogSoftmaxWithLoss(16, 100, cutoffs=[10, 40])
        >>> output, loss = asm(mg.randn(8, 16), mg.randint(0, 100, (8,)))
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        in_features, = _check_sizes(name, (), in_features=in_features)   # a bool: torch's
        n_classes = index_of(n_classes)          # a 0-d int tensor; a bool fails the cutoffs
        if n_classes.__class__ is not bool:
            _check_positive(name, n_classes=n_classes)
        check_number(name, "div_value", div_value)
        check_bool(name, "head_bias", head_bias)
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = [int(c) for c in cutoffs] + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        sizes = [int(in_features // (div_value ** (i + 1))) for i in range(self.n_clusters)]
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = ModuleList()
        for i, hidden in enumerate(sizes):
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                Linear(hidden, size, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self):
        """Draw every Linear again, in the order they were made (head, then each
        cluster's two)."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        """Each target's log-probability and the mean negative log-likelihood, as
        ``_ASMoutput(output, loss)``. Shape: (N, in_features), (N,) -> (N,), (); or
        (in_features,), () -> (), ()."""
        input_ = self._check_input(input_)
        if not isinstance(target_, Tensor):
            raise TypeError(f"{type(self).__name__}: target must be a Tensor, got "
                            f"{type(target_).__name__}")
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.shape}")
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.shape}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target_.dtype.kind not in "iu":
            raise RuntimeError(f"{type(self).__name__}: target must hold class indices "
                               f"(int64), got {target_.dtype}")
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = backend.to_numpy((target_ if batched else target_.unsqueeze(0))._array)
        target = target.astype(np.int64, copy=False)
        output = input.new_zeros(len(target))                                    # (N,)
        gather_inds = np.empty(len(target), np.int64)      # each row's entry of the head
        used_rows = 0
        cutoff_values = [0] + self.cutoffs
        for i in range(len(cutoff_values) - 1):
            low, high = cutoff_values[i], cutoff_values[i + 1]
            target_mask = (target >= low) & (target < high)
            row_indices = np.flatnonzero(target_mask)
            if row_indices.size == 0:
                continue
            if i == 0:
                gather_inds[row_indices] = target[target_mask]
            else:
                relative_target = target[target_mask] - low
                cluster_output = self.tail[i - 1](input.index_select(0, row_indices))
                gather_inds[row_indices] = self.shortlist_size + i - 1
                cluster_logprob = F.log_softmax(cluster_output, dim=1)
                local_logprob = cluster_logprob.gather(1, relative_target[:, None])
                output = output.index_copy(0, row_indices, local_logprob.squeeze(1))
            used_rows += row_indices.size
        if used_rows != len(target):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min()}, {target.max()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather_inds[:, None]).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        # (N, n_classes): the shortlist's head log-probabilities, then each cluster's own
        # plus its head entry's, laid side by side
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob
                         + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return ops.cat(parts, 1)

    def log_prob(self, input):
        r"""The log-probabilities of all ``n_classes`` classes. Shape: (N, in_features) ->
        (N, n_classes).

        Example:
            >>> asm.log_prob(mg.randn(8, 16)).exp().sum(1)                   # ones
        """
        input = self._check_input(input)
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row, ``log_prob(input).argmax(dim=1)``, computing
        the clusters only for rows whose head's best entry is a cluster. Shape:
        (N, in_features) -> (N,).

        Example:
            >>> asm.predict(mg.randn(8, 16))                                  # (8,) int64
        """
        input = self._check_input(input)
        head_output = self.head(input)
        output = ops.argmax(head_output, dim=1)
        not_in_shortlist = backend.to_numpy((output >= self.shortlist_size)._array)
        if not not_in_shortlist.any():
            return output
        if not_in_shortlist.all():
            return ops.argmax(self._get_full_log_prob(input, head_output), dim=1)
        rows = np.flatnonzero(not_in_shortlist)
        log_prob = self._get_full_log_prob(input[rows], head_output[rows])
        predicted = backend.to_numpy(output._array).copy()
        predicted[rows] = backend.to_numpy(ops.argmax(log_prob, dim=1)._array)
        return Tensor(predicted, dtype=predicted.dtype, device=input.device)


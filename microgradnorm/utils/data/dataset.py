"""Datasets (``torch.utils.data``): the map-style ``Dataset`` and its ``TensorDataset``,
``ConcatDataset``, ``StackDataset`` and ``Subset``, the ``IterableDataset`` and its
``ChainDataset``, and ``random_split``."""

import bisect
import collections.abc
import itertools
import math
import numbers
import warnings

import numpy as np

from ...factories import randperm
from ...generator import default_generator
from ...tensor import Tensor

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset",
           "Subset", "TensorDataset", "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``;
    ``a + b`` is their ``ConcatDataset``.

    Example:
        >>> class Squares(Dataset):
        ...     def __len__(self):
        ...         return 10
        ...     def __getitem__(self, i):
        ...         return i * i
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of Dataset must define "
                                  f"__getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset, collections.abc.Iterable):
    """A dataset that is a stream: subclasses define ``__iter__`` (abstract, as in torch: a
    class without it cannot be instantiated); a DataLoader batches what it yields, in order
    (no sampler, no shuffle)."""


class TensorDataset(Dataset):
    """Samples are the tensors' rows: ``dataset[i]`` is ``(t[i] for t in tensors)``.

    Args:
        *tensors: Tensors with the same first dimension (else an AssertionError, as torch's).

    Example:
        >>> data = TensorDataset(mg.randn(100, 3), mg.arange(100))
        >>> x, y = data[0]
    """

    def __init__(self, *tensors):
        if not tensors:
            raise IndexError("TensorDataset: expected at least one tensor, got none")
        for i, tensor in enumerate(tensors):
            if not isinstance(tensor, Tensor):
                raise TypeError(f"TensorDataset: tensors[{i}] must be a Tensor, got "
                                f"{type(tensor).__name__}")
            if tensor.ndim == 0:
                raise IndexError(f"TensorDataset: tensors[{i}] is 0-d; every tensor needs a "
                                 f"first dimension to index")
        sizes = [tensor.shape[0] for tensor in tensors]
        if any(size != sizes[0] for size in sizes):
            raise AssertionError(f"TensorDataset: Size mismatch between tensors: first "
                                 f"dimensions {sizes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Datasets side by side: sample ``i`` is ``(d[i] for d in datasets)`` as a tuple, or a
    dict ``{name: d[i]}`` when they are given by name (``torch.utils.data.StackDataset``).

    Args:
        *args: map-style datasets of one length, stacked as a tuple.
        **kwargs: the same by name, stacked as a dict (not both).

    Example:
        >>> pairs = StackDataset(image=images, label=labels)
        >>> pairs[0]                               # {"image": images[0], "label": labels[0]}
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset: Supported either ``tuple``- (via ``args``) or"
                             "``dict``- (via ``kwargs``) like input/output, but both types "
                             "are given.")
        if not args and not kwargs:
            raise ValueError("StackDataset: At least one dataset should be passed")
        parts = list(args or kwargs.values())
        lengths = [len(dataset) for dataset in parts]
        if any(length != lengths[0] for length in lengths):
            raise ValueError(f"StackDataset: Size mismatch between datasets (lengths "
                             f"{lengths})")
        self._length, self.datasets = lengths[0], args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices):
        # a batch at once, each part through its own __getitems__ where it has one
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        samples = [{} if named else [] for _ in indices]
        for key, dataset in parts:
            if callable(getattr(dataset, "__getitems__", None)):
                items = dataset.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError(f"StackDataset: Nested dataset's output size mismatch. "
                                     f"Expected {len(indices)}, got {len(items)}")
            else:
                items = [dataset[i] for i in indices]
            for sample, item in zip(samples, items):
                if named:
                    sample[key] = item
                else:
                    sample.append(item)
        return samples if named else [tuple(sample) for sample in samples]

    def __len__(self):
        return self._length


class ChainDataset(IterableDataset):
    """IterableDatasets one after another, read as they are iterated
    (``torch.utils.data.ChainDataset``).

    Args:
        datasets: an iterable of IterableDatasets (an AssertionError names one that is not,
            when it is reached).
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from dataset

    def __len__(self):
        total = 0
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(dataset)
        return total


class ConcatDataset(Dataset):
    """The datasets one after another: index ``i`` runs through the first, then the next.

    Args:
        datasets: a non-empty iterable of map-style datasets.
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("ConcatDataset: datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError(f"ConcatDataset: absolute value of index should not exceed "
                                 f"dataset length: index {index} exceeds the length {len(self)}")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        if which == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {index} is out of range for length "
                             f"{len(self)}")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    Args:
        dataset: a map-style dataset. indices: a sequence of its indices.
    """

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices
        if type(self).__getitem__ is not Subset.__getitem__ \
                and type(self).__getitems__ is Subset.__getitems__:
            # torch's refusal: the DataLoader would read batches past the override
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When "
                f"subclassing Subset and overriding __getitem__, you must also override "
                f"__getitems__ to ensure DataLoader works correctly with your custom logic. "
                f"A simple implementation:\n\ndef __getitems__(self, indices):\n"
                f"    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices):
        # a batch at once: through the dataset's own __getitems__ where it has one
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def _split_length(i, length):
    # torch sums what it is given: a one-element Tensor counts as its number in its dtype
    # (a float32 fraction sums in float32, as NumPy's scalar does), a bool as 0/1
    if isinstance(length, Tensor) and length.numel() == 1:
        length = length.detach().numpy().reshape(())[()]
    if isinstance(length, np.bool_):
        length = bool(length)
    if not isinstance(length, numbers.Real):
        raise TypeError(f"random_split: lengths[{i}] must be a number, got "
                        f"{type(length).__name__} {length!r}")
    return length


def random_split(dataset, lengths, generator=default_generator):
    """Split ``dataset`` into non-overlapping ``Subset``s of the given lengths, shuffled by
    ``randperm(len(dataset), generator=generator)``: the same seed gives torch's split.

    Fractions summing to 1 give ``floor(fraction * len(dataset))`` each, the remainder handed
    out one by one from the first split on (a split of length 0 warns).

    Args:
        dataset: a map-style dataset with ``len``.
        lengths: ints summing to ``len(dataset)``, or fractions summing to 1 (a
            one-element Tensor counts as its number, a bool as 0 or 1, as in torch).
        generator: a ``mg.Generator`` (default: the default generator).

    Example:
        >>> train, test = random_split(range(10), [0.8, 0.2],
        ...                            generator=mg.Generator().manual_seed(42))
    """
    lengths = [_split_length(i, length) for i, length in enumerate(lengths)]
    size = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split: Fraction at index {i} is not between 0 and "
                                 f"1 (got {fraction!r})")
        counts = [math.floor(size * fraction) for fraction in lengths]
        for i in range(size - sum(counts)):
            counts[i % len(counts)] += 1
        for i, count in enumerate(counts):
            if count == 0:
                warnings.warn(f"random_split: Length of split at index {i} is 0. This might "
                              f"result in an empty dataset.", stacklevel=2)
        lengths = counts
    if sum(lengths) != size:
        raise ValueError(f"random_split: Sum of input lengths does not equal the length of the "
                         f"input dataset! (the lengths sum to {sum(lengths)}, the dataset has "
                         f"{size} samples)")
    for i, length in enumerate(lengths):
        # torch's randperm refuses a float size with a TypeError
        if not isinstance(length, numbers.Integral):
            raise TypeError(f"random_split: lengths must be ints or fractions summing to 1, "
                            f"got lengths[{i}]={length!r} in {lengths}")
        if length < 0:
            raise ValueError(f"random_split: lengths must be non-negative, got "
                             f"lengths[{i}]={length!r} in {lengths}")
    order = randperm(size, generator=generator).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - length:end]) for end, length in zip(ends, lengths)]

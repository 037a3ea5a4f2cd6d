"""Samplers (``torch.utils.data``): the orders in which a DataLoader visits a map-style
dataset. The random ones draw exactly what torch's draw, so the same seed gives the same
order."""

import itertools
import math

from ... import distributed
from ...dtypes import float64, int64
from ...factories import as_tensor, empty, multinomial, randint, randperm
from ...generator import Generator, check_generator

__all__ = ["BatchSampler", "DistributedSampler", "RandomSampler", "Sampler",
           "SequentialSampler", "SubsetRandomSampler", "WeightedRandomSampler"]


class Sampler:
    """Base class: an iterable of indices (or of lists of indices, for a batch sampler)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of Sampler must define "
                                  f"__iter__")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _fresh_generator():
    # torch's RandomSampler without a generator: a seed drawn from the default generator
    # (a 64-bit random_() of an int64 scalar), then a generator of its own with that seed
    seed = int(empty((), dtype=int64).random_().item())
    return Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """Indices in a random order: a permutation per pass of the dataset (the last pass cut
    to ``num_samples``), or ``num_samples`` draws with replacement, in chunks of 32 as torch
    draws them.

    Args:
        data_source: a dataset with ``len``.
        replacement: draw with replacement.
        num_samples: how many indices (default ``len(data_source)``).
        generator: a ``mg.Generator``; without one, each pass seeds a generator of its own
            from the default generator, as torch's does (``mg.manual_seed(s)`` then gives
            the order ``torch.manual_seed(s)`` gives).
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement should be a boolean value, but got "
                            f"replacement={replacement!r}")
        check_generator("RandomSampler", generator)
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        count = self.num_samples
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
            raise ValueError(f"RandomSampler: num_samples should be a positive integer value, "
                             f"but got num_samples={count!r}")

    @property
    def num_samples(self):
        """How many indices a pass yields (the dataset's length unless given)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, count = len(self.data_source), self.num_samples
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:            # lazily: makemore asks for 1e10 draws
            for _ in range(count // 32):
                yield from randint(n, (32,), generator=generator).tolist()
            yield from randint(n, (count % 32,), generator=generator).tolist()
            return
        for _ in range(count // n):
            yield from randperm(n, generator=generator).tolist()
        # drawn even when nothing of it is kept: the generator moves as torch's does
        yield from randperm(n, generator=generator).tolist()[:count % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """``indices`` in a random order (``randperm`` of their count from ``generator``, by
    default the default generator)."""

    def __init__(self, indices, generator=None):
        check_generator("SubsetRandomSampler", generator)
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``weights`` (a 1-D sequence of non-negative numbers, summing
    to anything positive), index i drawn with probability weights[i] / Σ weights, with or
    without ``replacement``: ``mg.multinomial`` of the weights in float64, as torch's, so one
    seed gives torch's indices.

    Example:
        >>> mg.manual_seed(0); list(WeightedRandomSampler([0.1, 0.9, 0.5], 5))
        [2, 2, 1, 2, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        check_generator("WeightedRandomSampler", generator)
        weights = as_tensor(weights, dtype=float64)
        if weights.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights, self.num_samples = weights, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):
        drawn = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; the last one shorter unless
    ``drop_last``.

    Example:
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size should be a positive integer value, "
                             f"but got batch_size={batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last should be a boolean value, but got "
                             f"drop_last={drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return -(-len(self.sampler) // self.batch_size)


class DistributedSampler(Sampler):
    r"""One replica's share of a map-style dataset (``torch.utils.data.DistributedSampler``):
    the dataset's indices (shuffled by ``randperm`` from a generator seeded with
    ``seed + epoch``, or in order) made a multiple of ``num_replicas`` long, by repeating
    the first ones (or, with ``drop_last``, by cutting the tail), then every
    ``num_replicas``-th from ``rank``:

    .. math::
        \text{indices}[\text{rank} :: \text{num\_replicas}], \quad
        \text{num\_samples} = \lceil n / \text{num\_replicas} \rceil
        \ (\lceil (n - \text{num\_replicas}) / \text{num\_replicas} \rceil
        \text{ with drop\_last, when it does not divide } n)

    so each replica sees as many indices and, together, every index (the same lists as
    torch's for the same arguments). Call ``set_epoch(epoch)`` before each epoch for a new
    shuffle.

    Args:
        dataset: a dataset with ``len``.
        num_replicas, rank: the replicas' count and this one's rank in [0, num_replicas);
            None asks the default process group, which is never made here: torch's
            ValueError, so give both.
        shuffle: shuffle the indices (default True).
        seed: the shuffle's seed, the same on every replica (default 0).
        drop_last: cut the tail instead of repeating indices (default False).

    Shape:
        ``len(sampler)`` is ``num_samples``; ``total_size`` = num_samples · num_replicas.

    Example:
        >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = distributed.get_world_size()  # torch's ValueError: no group
        if rank is None:
            rank = distributed.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:          # every replica draws the same permutation
            generator = Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=generator).tolist()
        else:
            indices = list(range(n))
        padding = self.total_size - n
        if self.drop_last:
            indices = indices[:self.total_size]
        elif padding > 0:         # the first indices again, cycled as often as needed
            indices += (indices * math.ceil(padding / n))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Make the next pass's shuffle the one of ``seed + epoch`` (the same on every
        replica, another each epoch)."""
        self.epoch = epoch

"""The DataLoader (``torch.utils.data.DataLoader``) and its collate functions.

Batches are loaded in the calling process. ``num_workers > 0`` runs the workers there in
turn (``workers.py``), with one warning: each with its own dataset copy, seeds,
``get_worker_info()`` and ``worker_init_fn``, so the batches, their order and every draw are
torch's; only the parallelism is missing. ``pin_memory`` is accepted and does nothing
(torch's warning where no GPU is seen): arrays live in ordinary memory.
"""

import collections.abc
import copy
import functools
import multiprocessing
import re
import warnings

import numpy as np

from ...backend import cuda_available
from ...dtypes import float64, int64
from ...factories import empty, from_numpy
from ...generator import check_generator
from ...ops import stack
from ...tensor import Tensor, tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .workers import IterableFetcher, Worker, WorkerPass, fetch_map, get_worker_info

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

# NumPy dtypes that hold strings or objects: left as they are (``dtype.str`` as "<U5", "|O")
_NOT_NUMERIC = re.compile(r"[SaUO]")
_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                  "or lists; found {}")


def default_collate(batch):
    """Put a list of samples together as torch's ``default_collate`` does: Tensors are
    stacked on a new first dimension, NumPy arrays and scalars become Tensors first, Python
    floats a float64 Tensor, ints (and bools) an int64 (bool) Tensor, strings stay a list;
    dicts, named tuples, tuples and lists are collated field by field (a tuple gives a list).

    Example:
        >>> default_collate([(mg.zeros(2), 0), (mg.ones(2), 1)])
        [tensor([[0., 0.],
                [1., 1.]]), tensor([0, 1])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        for i, item in enumerate(batch):
            if not isinstance(item, Tensor):    # stack would take an array; torch's refuses
                raise TypeError(f"default_collate: expected Tensor as element {i} of the "
                                f"batch, but got {type(item).__name__}")
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if _NOT_NUMERIC.search(elem.dtype.str):
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return default_collate([from_numpy(item) for item in batch])
    if isinstance(elem, (np.bool_, np.number, np.object_)):
        return tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_mapping(elem, {key: default_collate([d[key] for d in batch])
                                    for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):            # a named tuple
        return type(elem)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(item) != len(elem) for item in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of "
                               "equal size")
        fields = [default_collate(field) for field in zip(*batch)]
        return fields if isinstance(elem, tuple) else _same_sequence(elem, fields)
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data):
    """What a DataLoader without batching (``batch_size=None``) does to each sample, as
    torch's ``default_convert``: NumPy arrays and scalars become Tensors (an array shares its
    memory), containers are converted inside (a tuple gives a list), the rest is left as is.
    """
    if isinstance(data, Tensor):
        return data
    if type(data).__module__ == "numpy" and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray):
            return data if _NOT_NUMERIC.search(data.dtype.str) else from_numpy(data)
        return tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _same_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(item) for item in data))
    if isinstance(data, tuple):
        return [default_convert(item) for item in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_sequence(data, [default_convert(item) for item in data])
    return data


def _same_mapping(original, values):
    # the original's type where it can be made (a copy of a mutable one keeps its extras)
    try:
        if isinstance(original, collections.abc.MutableMapping):
            clone = copy.copy(original)
            clone.update(values)
            return clone
        return type(original)(values)
    except TypeError:
        return values


def _same_sequence(original, items):
    try:
        if isinstance(original, collections.abc.MutableSequence):
            clone = copy.copy(original)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(original)(items)
    except TypeError:                          # range, and types that cannot be rebuilt
        return items


class DataLoader:
    """Batches of a dataset (``torch.utils.data.DataLoader``): indices from a sampler,
    grouped by a batch sampler, each group's samples put together by ``collate_fn``.

    ``shuffle=True`` draws a new order every pass (a ``RandomSampler``); with a seeded
    default generator (``mg.manual_seed``) or ``generator``, the orders are torch's for the
    same seed, because every draw torch makes is made here too, the seed torch draws for its
    workers at the start of each pass included.

    Args:
        dataset: a map-style ``Dataset`` (or anything with ``__getitem__`` and ``__len__``)
            or an ``IterableDataset``.
        batch_size: samples per batch; None yields samples one by one (``default_convert``).
        shuffle: a new random order every pass.
        sampler, batch_sampler: the order of indices, or of batches of indices, instead.
        num_workers: workers, run in turn in this process (a warning says so): torch's
            batches, seeds and ``get_worker_info()``; ``worker_init_fn(id)`` runs in each,
            ``persistent_workers`` keeps them (and their streams) from pass to pass.
        collate_fn: puts a list of samples together (default ``default_collate``).
        drop_last: leave out a last, smaller batch.
        generator: a ``mg.Generator`` for the shuffle.

    Example:
        >>> loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
        >>> for xb, yb in loader:
        ...     loss = F.cross_entropy(model(xb), yb)
    """

    _fixed = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
              "persistent_workers")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        _check_workers(num_workers, timeout, prefetch_factor, persistent_workers)
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        _check_context(multiprocessing_context, num_workers)
        check_generator("DataLoader", generator)
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value!r}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with "
                                 "batch_size, shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and "
                             "is mutually exclusive with drop_last")
        if sampler is None and not iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if iterable and batch_size is not None:
            BatchSampler(None, batch_size, drop_last)             # the same checks
        batching = batch_size is not None or batch_sampler is not None
        settings = dict(dataset=dataset, batch_size=batch_size, drop_last=drop_last,
                        sampler=sampler, batch_sampler=batch_sampler, generator=generator,
                        num_workers=num_workers, pin_memory=pin_memory, timeout=timeout,
                        worker_init_fn=worker_init_fn, prefetch_factor=prefetch_factor,
                        multiprocessing_context=multiprocessing_context,
                        persistent_workers=persistent_workers,
                        pin_memory_device=pin_memory_device, in_order=in_order,
                        collate_fn=collate_fn or (default_collate if batching
                                                  else default_convert))
        vars(self).update(settings)
        self._batching, self._iterable = batching, iterable
        self._workers, self._pass, self._prefetch = None, None, prefetch_factor
        self._initialized = True

    def __setattr__(self, name, value):
        if name in self._fixed and getattr(self, "_initialized", False):
            raise ValueError(f"DataLoader: the {name} attribute should not be set after the "
                             f"DataLoader is initialized")
        super().__setattr__(name, value)

    def __iter__(self):
        """A pass over the dataset: one batch (or sample) at a time."""
        workers = self.num_workers
        if workers > 0:
            warnings.warn(f"DataLoader: num_workers={workers} loads in this process; "
                          f"its workers run in turn, giving torch's batches", stacklevel=2)
        index_sampler = None if self._iterable else (
            self.batch_sampler if self._batching else self.sampler)
        keep = self.persistent_workers and workers > 0
        if keep and self._workers:
            started = self._workers
            if self._pass is not None:     # torch's workers finish what they were handed
                self._pass.drain()
        else:
            # torch draws a base seed for its workers as each iterator is made (once for
            # persistent workers), from the loader's generator or the default one
            if self.pin_memory and not cuda_available():
                warnings.warn("'pin_memory' argument is set as true but no accelerator is "
                              "found, then device pinned memory won't be used.", stacklevel=2)
            base_seed = int(empty((), dtype=int64).random_(generator=self.generator).item())
            if workers == 0 and self.timeout != 0:
                raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
            if workers > 0 and self._prefetch <= 0:
                raise AssertionError("prefetch_factor must be greater than 0 for "
                                     "MultiProcessingDataLoaderIter")
            started = [Worker(i, workers, base_seed, self.dataset, self.worker_init_fn)
                       for i in range(workers)]
            vars(self)["_workers"] = started if keep else None
        # iterators that, as torch's, go on after an error in one batch
        if workers == 0:
            if self._iterable:
                return _Pass(self, iter(IterableFetcher(self.dataset, self.batch_size,
                                                        self.drop_last, self.collate_fn).fetch,
                                        _NEVER))
            return _Pass(self, map(functools.partial(fetch_map, self.dataset,
                                                     batching=self._batching,
                                                     collate_fn=self.collate_fn),
                                   iter(index_sampler)))
        if self._iterable:
            for worker in started:
                with worker:
                    worker.stream = IterableFetcher(worker.info.dataset, self.batch_size,
                                                    self.drop_last, self.collate_fn)
            tasks = WorkerPass(started, _next_of_stream, None, self._prefetch)
        else:
            # torch hands each worker its first indices (prefetch_factor of them) at once
            tasks = WorkerPass(started, functools.partial(
                _fetch_in, batching=self._batching, collate_fn=self.collate_fn),
                iter(index_sampler), self._prefetch)
        if keep:
            vars(self)["_pass"] = tasks
        return _Pass(self, tasks)

    def __len__(self):
        """The number of batches in a pass (of samples with ``batch_size=None``); for an
        IterableDataset, computed from its ``len``."""
        if not self._iterable:
            return len(self.batch_sampler if self._batching else self.sampler)
        length = len(self.dataset)
        if self.batch_size is None:
            return length
        return length // self.batch_size if self.drop_last else -(-length // self.batch_size)


class _Pass:
    # a pass's iterator: its batches, and ``len`` of the loader as torch's iterator has
    __slots__ = ("_loader", "_batches")

    def __init__(self, loader, batches):
        self._loader, self._batches = loader, batches

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self):
        return len(self._loader)


class _Never:
    # the sentinel of ``iter(fetch, _NEVER)``: equal to no batch, asked first (a stream
    # ends by its StopIteration)
    __hash__ = object.__hash__

    def __eq__(self, other):
        return False


_NEVER = _Never()


def _next_of_stream(worker, _index):
    return worker.stream.fetch()


def _fetch_in(worker, index, batching, collate_fn):
    return fetch_map(worker.info.dataset, index, batching, collate_fn)


def _check_workers(num_workers, timeout, prefetch_factor, persistent_workers):
    # torch's checks of the multiprocessing options, with torch's messages, kept so that
    # the same calls fail
    if isinstance(num_workers, bool) or not isinstance(num_workers, int):
        raise TypeError(f"DataLoader: num_workers must be an int, got {num_workers!r}")
    if num_workers < 0:
        raise ValueError(f"DataLoader: num_workers option should be non-negative; use "
                         f"num_workers=0 to disable multiprocessing. Got {num_workers}")
    if timeout < 0:
        raise ValueError(f"DataLoader: timeout option should be non-negative (got {timeout})")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(f"DataLoader: prefetch_factor option could only be specified in "
                         f"multiprocessing.let num_workers > 0 to enable multiprocessing, "
                         f"otherwise set prefetch_factor to None. Got num_workers=0, "
                         f"prefetch_factor={prefetch_factor!r}")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError(f"DataLoader: prefetch_factor option should be non-negative (got "
                         f"{prefetch_factor})")
    if persistent_workers and num_workers == 0:
        raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")


def _check_context(context, num_workers):
    # torch's checks of multiprocessing_context; the workers here run in this process, so
    # a valid context is taken and not used
    if context is None:
        return
    if num_workers == 0:
        raise ValueError(f"DataLoader: multiprocessing_context can only be used with "
                         f"multi-process loading (num_workers > 0), but got "
                         f"num_workers={num_workers}")
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(f"DataLoader: multiprocessing_context option should specify a "
                             f"valid start method in {methods!r}, but got "
                             f"multiprocessing_context={context!r}")
    elif not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(f"DataLoader: multiprocessing_context option should be a valid "
                        f"context object or a string specifying the start method, but got "
                        f"multiprocessing_context={context}")

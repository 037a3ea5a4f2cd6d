"""A DataLoader's workers (``num_workers > 0``), run in turn in the calling process as
torch's worker processes would run them: each worker has its own copy of the dataset, its
own default generator seeded ``base_seed + id``, Python's ``random`` seeded the same and
NumPy's global generator seeded as torch seeds it, ``get_worker_info()`` answers inside it,
and ``worker_init_fn(id)`` runs in it once it starts. The caller's generators are put back
around each step, so the batches, the draws made inside ``__getitem__``/``__iter__``/
``collate_fn`` and the caller's stream afterwards are torch's.

A map-style dataset's batch ``k`` of a pass is fetched by worker ``k % num_workers``; an
IterableDataset's workers each batch their own stream and are read in turn, one batch each,
a worker whose stream ends leaving the turn (torch's order with ``in_order=True``). An
error in a batch is raised as it is (torch's names the worker process in its message) and
the pass goes on; persistent workers fetch what an abandoned pass handed them before the
next pass starts, as torch's do."""

import collections
import copy
import dataclasses
import itertools
import random

import numpy as np

from ...generator import Generator, default_generator

__all__ = ["IterableFetcher", "Worker", "WorkerInfo", "WorkerPass", "fetch_map",
           "get_worker_info", "numpy_seed"]

_current = None          # the WorkerInfo of the worker whose code is running, if any


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` gives inside a worker (``torch.utils.data.WorkerInfo``).

    Attributes:
        id: the worker's number, ``0 .. num_workers - 1``.
        num_workers: how many workers the DataLoader has.
        seed: ``base_seed + id``, the seed of the worker's default generator and ``random``.
        dataset: the worker's copy of the dataset (a shallow copy: attributes set on it,
            in ``worker_init_fn`` say, stay in the worker).
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """Inside a DataLoader worker (``num_workers > 0``), its ``WorkerInfo`` (``id``,
    ``num_workers``, ``seed``, ``dataset``); None elsewhere, as
    ``torch.utils.data.get_worker_info``. An IterableDataset reads it in ``__iter__`` to
    give each worker its own share of the stream.

    Example:
        >>> class Range(IterableDataset):
        ...     def __iter__(self):
        ...         info = get_worker_info()
        ...         if info is None:
        ...             return iter(range(10))
        ...         return iter(range(info.id, 10, info.num_workers))
    """
    return _current


def numpy_seed(base_seed, worker_id):
    """The four 32-bit words torch seeds a worker's ``np.random`` with: NumPy's
    ``SeedSequence`` hashing of ``[worker_id, base_seed's low and high words, 0]``."""
    mask = 0xFFFFFFFF
    mult_a, mult_b = 0x931E8875, 0x58F38DED
    hash_const = [0x43B0D7E5]

    def hash_word(value):
        value = (value ^ hash_const[0]) & mask
        hash_const[0] = (hash_const[0] * mult_a) & mask
        value = (value * hash_const[0]) & mask
        return (value ^ (value >> 16)) & mask

    def mix(x, y):
        result = ((0xCA01F9DD * x) - (0x4973F715 * y)) & mask
        return (result ^ (result >> 16)) & mask

    pool = [hash_word(word) for word in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for source in range(4):
        for target in range(4):
            if source != target:
                pool[target] = mix(pool[target], hash_word(pool[source]))
    state, const_b = [], 0x8B51F9DD
    for word in pool:
        word = (word ^ const_b) & mask
        const_b = (const_b * mult_b) & mask
        word = (word * const_b) & mask
        state.append((word ^ (word >> 16)) & mask)
    return state


class Worker:
    """One worker: its ``WorkerInfo`` and its three random streams, entered with ``with``
    around each piece of its work (the caller's streams are kept aside meanwhile)."""

    def __init__(self, worker_id, num_workers, base_seed, dataset, init_fn):
        seed = base_seed + worker_id
        try:
            dataset = copy.copy(dataset)
        except Exception:          # a dataset that cannot be copied is shared
            pass
        self.info = WorkerInfo(worker_id, num_workers, seed, dataset)
        self._torch = Generator().manual_seed(seed).state_array()
        self._python = random.Random(seed).getstate()
        self._numpy = np.random.RandomState(numpy_seed(base_seed, worker_id)).get_state()
        self.stream = None
        self._saved = None
        if init_fn is not None:
            with self:
                init_fn(worker_id)

    def __enter__(self):
        global _current
        self._saved = (default_generator.state_array(), random.getstate(),
                       np.random.get_state(), _current)
        default_generator.set_state(self._torch)
        random.setstate(self._python)
        np.random.set_state(self._numpy)
        _current = self.info
        return self

    def __exit__(self, *exc):
        global _current
        self._torch = default_generator.state_array()
        self._python, self._numpy = random.getstate(), np.random.get_state()
        torch_state, python_state, numpy_state, _current = self._saved
        default_generator.set_state(torch_state)
        random.setstate(python_state)
        np.random.set_state(numpy_state)
        self._saved = None
        return False


def fetch_map(dataset, index, batching, collate_fn):
    """A map-style dataset's batch (or sample) for ``index``, as torch's fetcher reads it:
    ``__getitems__`` where the dataset has one, else one ``__getitem__`` per index."""
    if not batching:
        return collate_fn(dataset[index])
    many = getattr(dataset, "__getitems__", None)
    samples = many(index) if many else [dataset[i] for i in index]
    return collate_fn(samples)


class IterableFetcher:
    """An IterableDataset's stream cut into batches as torch's fetcher cuts it: a batch of
    ``batch_size`` items, the last one shorter (left out with ``drop_last``); once the
    stream has ended it is not read again. ``fetch`` raises StopIteration at the end."""

    def __init__(self, dataset, batch_size, drop_last, collate_fn):
        self.stream, self.ended = iter(dataset), False
        self.batch_size, self.drop_last, self.collate_fn = batch_size, drop_last, collate_fn

    def fetch(self):
        if self.ended:
            raise StopIteration
        if self.batch_size is None:
            return self.collate_fn(next(self.stream))
        batch = []
        for _ in range(self.batch_size):
            try:
                batch.append(next(self.stream))
            except StopIteration:
                self.ended = True
                break
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            raise StopIteration
        return self.collate_fn(batch)


class WorkerPass:
    """One pass of the workers, as torch's in-order iterator hands out and takes back tasks:
    ``prefetch_factor`` tasks per worker at the start, one more as each result is taken
    (before an error in it is raised), each to the next worker in turn that is still
    active. ``fetch(worker, index)`` runs a task inside its worker (``index`` is None for an
    IterableDataset, whose StopIteration ends that worker's share of the pass). An error
    leaves the pass usable: the next batch follows, as torch's. ``drain`` runs the tasks
    still handed out, as torch's persistent workers do before their next pass."""

    def __init__(self, workers, fetch, indices, prefetch):
        self.workers, self.fetch, self.indices = workers, fetch, indices
        self.active = [True] * len(workers)
        self.turns = itertools.cycle(range(len(workers)))
        self.tasks = collections.deque()
        for _ in range(prefetch * len(workers)):
            self._put()

    def _put(self):
        if self.indices is None:
            index = None
        else:
            index = next(self.indices, _END)
            if index is _END:
                return
        for _ in self.workers:
            which = next(self.turns)
            if self.active[which]:
                self.tasks.append((which, index))
                return

    def __iter__(self):
        return self

    def __next__(self):
        while self.tasks:
            which, index = self.tasks.popleft()
            if not self.active[which]:
                continue                       # handed out before its worker ran dry
            try:
                with self.workers[which] as worker:
                    batch = self.fetch(worker, index)
            except Exception as error:
                ended = self.indices is None and isinstance(error, StopIteration)
                if ended:                      # an IterableDataset's worker ran dry
                    self.active[which] = False
                self._put()
                if ended:
                    continue
                raise
            self._put()
            return batch
        raise StopIteration

    def drain(self):
        """Fetch, and drop, what an abandoned pass had handed out (errors included)."""
        while self.tasks:
            which, index = self.tasks.popleft()
            if self.active[which]:
                try:
                    with self.workers[which] as worker:
                        self.fetch(worker, index)
                except StopIteration:
                    self.active[which] = self.indices is not None
                except Exception:              # noqa: BLE001 (torch drops these too)
                    pass


_END = object()

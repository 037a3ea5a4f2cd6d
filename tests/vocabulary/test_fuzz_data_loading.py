"""microgradnorm.utils.data against torch.utils.data with drawn cases: the samplers' orders,
``random_split``'s subsets and DataLoader batches for the same seeds, and the default
generator's stream after a pass; DataLoader options, lengths and torch's error messages;
collation of every kind of sample; workers (``num_workers > 0``) giving torch's batches, the
draws made inside a worker, ``get_worker_info()``, ``worker_init_fn`` and persistent workers;
IterableDatasets sharded by worker; the datasets ``+``, ``Subset``, ``StackDataset``,
``ChainDataset`` and ``__getitems__`` batching."""

import collections
import gc
import random
import re
import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.utils import data

torch = pytest.importorskip("torch")
tdata = torch.utils.data

from torch_compare import plain_batch  # noqa: E402

Point = collections.namedtuple("Point", "x y")


def run(call, lib, dlib):
    try:
        return "ok", plain_batch(call(lib, dlib))
    except Exception as error:                            # noqa: BLE001 (torch's class)
        return "error", error


def same(call, message=True):
    """``call(torch, tdata)`` and ``call(mg, data)`` give the same plain result, or raise
    the same class, ours saying torch's message (unless ``message`` is False)."""
    expected, got = run(call, torch, tdata), run(call, mg, data)
    if expected[0] == "error":
        assert got[0] == "error", (got, expected)
        assert isinstance(got[1], type(expected[1])), (got[1], expected[1])
        assert not message or str(expected[1]) in str(got[1]), (str(got[1]),
                                                                 str(expected[1]))
        return
    assert got == expected


def seed_both(seed):
    torch.manual_seed(seed)
    mg.manual_seed(seed)


def maybe_generator(lib, seed):
    return None if seed is None else lib.Generator().manual_seed(seed)


# ----- samplers and random_split ----------------------------------------------------------
@pytest.mark.parametrize("case", range(12))
def test_random_samplers_draw_torchs_orders_and_leave_torchs_stream(case):
    rng = np.random.default_rng(case)
    n = int(rng.integers(1, 25))
    replacement = bool(rng.integers(2))
    num_samples = None if rng.random() < 0.4 else int(rng.integers(1, 3 * n + 40))
    own = None if rng.random() < 0.5 else int(rng.integers(1000))
    seed = int(rng.integers(1000))

    def call(lib, dlib):
        lib.manual_seed(seed)
        sampler = dlib.RandomSampler(range(n), replacement, num_samples,
                                     generator=maybe_generator(lib, own))
        return list(sampler), list(sampler), len(sampler), lib.rand(3).tolist()
    same(call)


@pytest.mark.parametrize("case", range(8))
def test_subset_weighted_batch_samplers_draw_torchs_orders(case):
    rng = np.random.default_rng(100 + case)
    indices = rng.permutation(40)[:int(rng.integers(1, 15))].tolist()
    weights = (rng.random(int(rng.integers(2, 9))) * rng.integers(0, 2, 1)[0] + 0.01).tolist()
    count = int(rng.integers(1, len(weights) + 1))
    replacement = bool(rng.integers(2))
    own = None if case % 2 else int(rng.integers(1000))
    batch, drop_last = int(rng.integers(1, 6)), bool(rng.integers(2))

    def call(lib, dlib):
        lib.manual_seed(case)
        subset = dlib.SubsetRandomSampler(indices, generator=maybe_generator(lib, own))
        weighted = dlib.WeightedRandomSampler(weights, count, replacement,
                                              generator=maybe_generator(lib, own))
        batches = dlib.BatchSampler(dlib.SequentialSampler(indices), batch, drop_last)
        return (list(subset), list(subset), list(weighted), list(weighted), list(batches),
                len(batches), len(subset), len(weighted), lib.rand(2).tolist())
    same(call)


@pytest.mark.parametrize("case", range(10))
def test_random_split_gives_torchs_subsets_for_drawn_lengths(case):
    rng = np.random.default_rng(200 + case)
    size, parts = int(rng.integers(1, 30)), int(rng.integers(1, 5))
    if case % 2:
        cuts = np.sort(rng.integers(0, size + 1, parts - 1))
        lengths = np.diff(np.concatenate([[0], cuts, [size]])).tolist()
    else:
        raw = rng.random(parts)
        lengths = (raw / raw.sum()).tolist()
        lengths[-1] = 1 - sum(lengths[:-1])
    own = None if case % 3 == 0 else int(rng.integers(1000))

    def call(lib, dlib):
        lib.manual_seed(case)
        kwargs = {} if own is None else {"generator": maybe_generator(lib, own)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            splits = dlib.random_split(range(size), lengths, **kwargs)
        return [list(split) for split in splits], lib.rand(2).tolist()
    same(call)


@pytest.mark.parametrize("lengths", [[3, 8], [0.3, 0.8], [0.5, -0.5, 1.0], [11]])
def test_random_split_refuses_with_torchs_messages(lengths):
    same(lambda lib, dlib: dlib.random_split(range(10), lengths))


def test_sampler_errors_say_torchs_messages():
    same(lambda lib, dlib: dlib.RandomSampler(range(3), num_samples=0))
    same(lambda lib, dlib: dlib.RandomSampler(range(3), replacement=1))
    same(lambda lib, dlib: dlib.BatchSampler(range(3), 0, False))
    same(lambda lib, dlib: dlib.BatchSampler(range(3), 2, 1))
    same(lambda lib, dlib: dlib.WeightedRandomSampler([1.0, 2.0], 0))


# ----- the DataLoader ---------------------------------------------------------------------
class Pairs:
    """A map dataset of (tensor, int) tuples, as a classification dataset gives them."""

    def __init__(self, lib, n):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return self.lib.arange(3, dtype=self.lib.float32) + 3 * index, index % 4


@pytest.mark.parametrize("case", range(14))
def test_loader_batches_orders_and_stream_are_torchs(case):
    rng = np.random.default_rng(300 + case)
    n = int(rng.integers(1, 20))
    batch_size = None if rng.random() < 0.2 else int(rng.integers(1, n + 3))
    drop_last = batch_size is not None and bool(rng.integers(2))
    shuffle = bool(rng.integers(2))
    own = None if rng.random() < 0.5 else int(rng.integers(1000))
    tensors = case % 2 == 0

    def call(lib, dlib):
        lib.manual_seed(case)
        dataset = dlib.TensorDataset(lib.arange(2 * n).reshape(n, 2), lib.arange(n)) \
            if tensors else Pairs(lib, n)
        loader = dlib.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
                                 drop_last=drop_last, generator=maybe_generator(lib, own))
        return list(loader), list(loader), len(loader), lib.rand(3).tolist()
    same(call)


@pytest.mark.parametrize("options", [
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True},
    {"multiprocessing_context": "fork"},
    {"num_workers": 1, "multiprocessing_context": "no such method"},
    {"num_workers": 1, "multiprocessing_context": 3},
    {"batch_size": 0},
    {"drop_last": 1},
])
def test_loader_refuses_what_torch_refuses_with_its_messages(options):
    same(lambda lib, dlib: dlib.DataLoader(range(5), **options))


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_loader_asserts_at_iteration_as_torch():
    same(lambda lib, dlib: iter(dlib.DataLoader(range(5), timeout=2)))
    with pytest.warns(UserWarning, match="loads in this process"):
        same(lambda lib, dlib: iter(dlib.DataLoader(range(5), num_workers=1,
                                                    prefetch_factor=0)))
    gc.collect()               # torch's half-made iterator complains as it is collected


def test_samplers_batch_samplers_collate_fn_and_len_are_torchs():
    same(lambda lib, dlib: list(dlib.DataLoader(range(10), sampler=[3, 1, 4, 1], batch_size=3)))
    same(lambda lib, dlib: [list(loader) + [len(loader)] for loader in [dlib.DataLoader(
        range(10), batch_sampler=dlib.BatchSampler(range(7), 3, drop)) for drop in (0, 1)]])
    same(lambda lib, dlib: list(dlib.DataLoader(range(5), batch_size=2,
                                                collate_fn=lambda batch: sum(batch))))
    same(lambda lib, dlib: list(dlib.DataLoader(range(5), batch_size=None,
                                                collate_fn=lambda sample: -sample)))
    same(lambda lib, dlib: list(dlib.DataLoader(
        [np.ones(2, np.float32), (np.int16(3), [np.float64(2)]), {"a": np.arange(2)}],
        batch_size=None)))
    same(lambda lib, dlib: [len(dlib.DataLoader(range(10), batch_size=b, drop_last=d))
                            for b in (None, 1, 3, 10, 11) for d in (False, True)
                            if not (b is None and d)])


def test_pin_memory_warns_as_torch_without_a_gpu():
    if mg.cuda.is_available():
        pytest.skip("a GPU is seen: pinning is taken without a warning")
    with pytest.warns(UserWarning, match="no accelerator is found") as caught:
        expected = list(tdata.DataLoader(range(3), batch_size=2, pin_memory=True))
    message = str(caught[0].message)
    with pytest.warns(UserWarning, match=re.escape(message)):
        got = list(data.DataLoader(range(3), batch_size=2, pin_memory=True))
    assert plain_batch(got) == plain_batch(expected)


# ----- collation --------------------------------------------------------------------------
SAMPLES = {
    "ints": lambda lib: [1, 2, 3],
    "floats": lambda lib: [1.5, 2.0],
    "bools": lambda lib: [True, False],
    "int then float": lambda lib: [1, 2.5],
    "strings": lambda lib: ["a", "b"],
    "bytes": lambda lib: [b"a", b"b"],
    "numpy float32 scalars": lambda lib: [np.float32(1), np.float32(2.5)],
    "numpy int16 scalars": lambda lib: [np.int16(1), np.int16(2)],
    "numpy bools": lambda lib: [np.bool_(True), np.bool_(False)],
    "numpy uint16": lambda lib: [np.uint16(3), np.uint16(4)],
    "numpy arrays": lambda lib: [np.arange(3, dtype=np.int32), np.ones(3, np.int32)],
    "numpy 0-d": lambda lib: [np.array(1.5), np.array(2.5)],
    "numpy strings": lambda lib: [np.array(["a"]), np.array(["b"])],
    "numpy str scalars": lambda lib: [np.str_("a"), np.str_("b")],
    "tensors 0-d": lambda lib: [lib.tensor(1.0), lib.tensor(2.0)],
    "tensors float64": lambda lib: [lib.zeros(2, dtype=lib.float64),
                                    lib.ones(2, dtype=lib.float64)],
    "tensors empty": lambda lib: [lib.zeros(0, 2), lib.zeros(0, 2)],
    "tensors unequal": lambda lib: [lib.zeros(2), lib.zeros(3)],
    "dicts": lambda lib: [{"a": 1, "b": lib.zeros(1)}, {"a": 2, "b": lib.ones(1)}],
    "ordered dicts": lambda lib: [collections.OrderedDict(a=1.0), collections.OrderedDict(a=2.0)],
    "tuples": lambda lib: [(1, "x"), (2, "y")],
    "tensor and int": lambda lib: [(lib.zeros(2), 1), (lib.ones(2), 2)],
    "namedtuples": lambda lib: [Point(1, 2.0), Point(3, 4.0)],
    "lists": lambda lib: [[1, 2], [3, 4]],
    "lists unequal": lambda lib: [[1, 2], [3]],
    "empty tuples": lambda lib: [(), ()],
    "nested": lambda lib: [{"a": [(1, np.zeros(2)), Point("p", [1.0])]},
                           {"a": [(2, np.ones(2)), Point("q", [2.0])]}],
    "none": lambda lib: [None, None],
    "complex": lambda lib: [complex(1, 2), complex(3, 4)],
}


@pytest.mark.parametrize("case", SAMPLES)
def test_default_collate_and_convert_are_torchs(case):
    # torch's stack names shapes as lists: the class is checked, not the words
    same(lambda lib, dlib: dlib.default_collate(SAMPLES[case](lib)),
         message=case != "tensors unequal")
    same(lambda lib, dlib: dlib.default_convert(SAMPLES[case](lib)))
    same(lambda lib, dlib: dlib.default_convert(SAMPLES[case](lib)[0]))


# ----- workers ----------------------------------------------------------------------------
class Noisy:
    """A map dataset whose samples draw from the three generators and name their worker."""

    def __init__(self, lib, dlib, n=7):
        self.lib, self.dlib, self.n, self.offset = lib, dlib, n, 0

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        info = self.dlib.get_worker_info()
        worker = (-1, 0, 0) if info is None else (info.id, info.num_workers,
                                                 self.offset - info.seed)
        return (index, self.lib.rand(1).item(), random.random(), float(np.random.rand()),
                worker)


def shift_by_seed(dlib):
    """A worker_init_fn that writes into the worker's own copy of the dataset."""
    def init(worker_id):
        info = dlib.get_worker_info()
        assert info.id == worker_id
        info.dataset.offset = info.seed
    return init


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("workers, persistent, own, shuffle", [
    (1, False, None, True), (2, False, 7, False), (3, True, None, False), (2, True, 5, True)])
def test_workers_give_torchs_batches_draws_and_stream(workers, persistent, own, shuffle):
    def call(lib, dlib):
        lib.manual_seed(3)
        random.seed(4)
        np.random.seed(5)
        loader = dlib.DataLoader(Noisy(lib, dlib), batch_size=2, shuffle=shuffle,
                                 num_workers=workers, persistent_workers=persistent,
                                 worker_init_fn=shift_by_seed(dlib),
                                 generator=maybe_generator(lib, own))
        first = list(loader)
        return (first, list(loader), lib.rand(2).tolist(), random.random(),
                float(np.random.rand()), loader.dataset.offset, dlib.get_worker_info())
    with pytest.warns(UserWarning, match="loads in this process"):
        same(call)


class Failing(Noisy):
    """Noisy, but index 5 raises (after its draws)."""

    def __getitem__(self, index):
        sample = super().__getitem__(index)
        if index == 5:
            raise KeyError(index)
        return sample


def steps(loader, count):
    """``count`` calls of ``next`` on a new pass: each batch, or the class of its error."""
    batches, out = iter(loader), []
    for _ in range(count):
        try:
            out.append(plain_batch(next(batches)))
        except StopIteration:
            out.append("end")
        except Exception as error:                        # noqa: BLE001 (torch's class)
            out.append(type(error).__name__)
    return out


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.filterwarnings("ignore:DataLoader. num_workers")
@pytest.mark.parametrize("workers, persistent, cut", [
    (0, False, 9), (2, False, 9), (2, False, 6), (3, False, 2), (3, True, 1), (2, True, 3),
    (2, True, 9)])
def test_errors_and_abandoned_passes_leave_torchs_loader(workers, persistent, cut,
                                                       monkeypatch):
    # a batch that raises leaves the pass going on; a pass left half-way lets the next one
    # start afresh, persistent workers first fetching what they were handed. (torch's
    # workers poll their queues every MP_STATUS_CHECK_INTERVAL seconds, 5: a worker that
    # raised then holds up the loader's shutdown that long; the workers fork after this)
    monkeypatch.setattr(tdata._utils, "MP_STATUS_CHECK_INTERVAL", 0.05)
    def call(lib, dlib):
        lib.manual_seed(2)
        random.seed(4)
        np.random.seed(5)
        options = {"num_workers": workers, "prefetch_factor": 1 + persistent} \
            if workers else {}
        loader = dlib.DataLoader(Failing(lib, dlib, 12), batch_size=1, shuffle=True,
                                 persistent_workers=persistent, **options)
        return ([steps(loader, cut + turn) for turn in range(3)], lib.rand(1).tolist(),
                random.random(), float(np.random.rand()))
    same(call)


def test_workers_draw_indices_ahead_as_torch():
    def call(lib, dlib):
        lib.manual_seed(11)
        loader = dlib.DataLoader(range(20), batch_size=3, shuffle=True, num_workers=2,
                                 prefetch_factor=1)
        batches = iter(loader)
        before = lib.rand(1).tolist()                 # after the first indices are drawn
        return next(batches), before, list(batches), lib.rand(1).tolist()
    with pytest.warns(UserWarning, match="loads in this process"):
        same(call)
    assert data.DataLoader(range(3), num_workers=2).prefetch_factor == \
        tdata.DataLoader(range(3), num_workers=2).prefetch_factor


def make_stream(dlib, start, end, shard=True):
    class Stream(dlib.IterableDataset):
        def __iter__(self):
            info = dlib.get_worker_info()
            if info is None or not shard:
                return iter(range(start, end))
            share = -(-(end - start) // info.num_workers)
            low = start + info.id * share
            return iter(range(low, min(low + share, end)))

        def __len__(self):
            return end - start
    return Stream()


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
@pytest.mark.parametrize("workers, batch_size, drop_last, shard", [
    (0, 3, False, True), (0, 4, True, True), (2, 2, False, True), (3, 3, True, True),
    (2, None, False, True), (2, 2, False, False)])
def test_iterable_datasets_batch_per_worker_in_torchs_turns(workers, batch_size, drop_last,
                                                           shard):
    def call(lib, dlib):
        loader = dlib.DataLoader(make_stream(dlib, 0, 11, shard), batch_size=batch_size,
                                 drop_last=drop_last, num_workers=workers)
        return list(loader), len(loader)
    with pytest.warns(UserWarning) if workers else _no_warning():
        same(call)


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_iterable_datasets_refuse_samplers_and_len_as_torch():
    for option in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        same(lambda lib, dlib, option=option: dlib.DataLoader(make_stream(dlib, 0, 3),
                                                               **option))

    def no_len(lib, dlib):
        class Stream(dlib.IterableDataset):
            def __iter__(self):
                return iter(range(3))
        return len(dlib.DataLoader(Stream()))
    same(no_len)
    same(lambda lib, dlib: [len(dlib.DataLoader(make_stream(dlib, 0, 7), batch_size=b,
                                                drop_last=d))
                            for b in (None, 1, 2, 7, 8) for d in (False, True)
                            if not (b is None and d)])


# ----- datasets ---------------------------------------------------------------------------
class Batched:
    """A map dataset with ``__getitems__``; it records how it was read."""

    def __init__(self, lib):
        self.lib, self.reads = lib, []

    def __len__(self):
        return 7

    def __getitem__(self, index):
        self.reads.append(("one", index))
        return self.lib.tensor([index, index]), index

    def __getitems__(self, indices):
        self.reads.append(("many", list(indices)))
        return [(self.lib.tensor([i, -i]), i * 1.5) for i in indices]


def test_getitems_reads_batches_through_subsets_and_stacks_as_torch():
    def call(lib, dlib):
        lib.manual_seed(3)
        dataset = Batched(lib)
        batches = (list(dlib.DataLoader(dataset, batch_size=3, shuffle=True)),
                   list(dlib.DataLoader(dlib.Subset(dataset, [6, 5, 4, 0]), batch_size=3)),
                   list(dlib.DataLoader(dataset, batch_size=None))[:2],
                   list(dlib.DataLoader(dlib.StackDataset(dataset, range(7)), batch_size=3)),
                   list(dlib.DataLoader(dlib.StackDataset(a=dataset, b=range(7)),
                                        batch_size=4)))
        return batches, dataset.reads
    same(call)


def test_dataset_compositions_are_torchs():
    def tensors(lib, dlib):
        return dlib.TensorDataset(lib.arange(4), lib.arange(4) * 1.5)
    same(lambda lib, dlib: [list(tensors(lib, dlib) + dlib.Subset(tensors(lib, dlib), [3, 1]))])
    same(lambda lib, dlib: (tensors(lib, dlib) + tensors(lib, dlib))[-9])
    same(lambda lib, dlib: dlib.TensorDataset(lib.zeros(3), lib.zeros(4)))
    same(lambda lib, dlib: dlib.ConcatDataset([make_stream(dlib, 0, 2)]))
    same(lambda lib, dlib: (dlib.StackDataset(range(3), list("abc"))[1],
                            dlib.StackDataset(x=range(3), y=list("abc"))[2],
                            len(dlib.StackDataset(range(3), range(3)))))
    same(lambda lib, dlib: dlib.StackDataset(range(3), x=range(3)))
    same(lambda lib, dlib: dlib.StackDataset())
    same(lambda lib, dlib: dlib.StackDataset(range(3), range(4)))
    same(lambda lib, dlib: (list(dlib.ChainDataset([make_stream(dlib, 0, 3),
                                                    make_stream(dlib, 10, 12)])),
                            len(dlib.ChainDataset([make_stream(dlib, 0, 3),
                                                   make_stream(dlib, 5, 6)])),
                            list(dlib.DataLoader(dlib.ChainDataset(
                                [make_stream(dlib, 0, 3), make_stream(dlib, 9, 11)]),
                                batch_size=2))))
    same(lambda lib, dlib: len(dlib.ChainDataset([make_stream(dlib, 0, 3), range(3)])))
    same(lambda lib, dlib: list(dlib.ChainDataset([make_stream(dlib, 0, 3), range(3)])))

    def partial_subset(lib, dlib):
        class Doubled(dlib.Subset):
            def __getitem__(self, index):
                return 2 * super().__getitem__(index)
        return Doubled(range(4), [1, 2])
    same(partial_subset)

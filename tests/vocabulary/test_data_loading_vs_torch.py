"""Data loading as training scripts write it, run under torch.utils.data and under
microgradnorm.utils.data at test time: a user's map-style dataset of each kind of sample
(tensors, tuples, dicts, NumPy arrays of every dtype, Python numbers, strings, nested
containers) through a DataLoader with each common option, seed for seed, two passes, with
the default generator's next draw after the loop; ``random_split`` with the lengths scripts
pass (fractions, ints, NumPy and 0-d tensors, bools); ``len(iter(loader))``; collation of
mixed batches; and the errors, by class."""

import collections
import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.utils import data

torch = pytest.importorskip("torch")
tdata = torch.utils.data

from torch_compare import plain_batch  # noqa: E402

Point = collections.namedtuple("Point", "x y")


def outcome(call, lib, dlib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", plain_batch(call(lib, dlib))
    except Exception as error:                       # noqa: BLE001 (the class is compared)
        return "error", error


def same(call):
    """``call(torch, torch.utils.data)`` and ``call(mg, mg.utils.data)`` give the same plain
    result, or raise: ours an instance of torch's class."""
    expected, got = outcome(call, torch, tdata), outcome(call, mg, data)
    if expected[0] == "error":
        assert got[0] == "error", (got, expected)
        assert isinstance(got[1], type(expected[1])), (got[1], expected[1])
    else:
        assert got == expected


# ----- a user's dataset through the loader -----------------------------------------------
def sample(lib, kind, i):
    """Sample ``i`` of a dataset of the given kind, made with ``lib``."""
    return {
        "tensor pair": lambda: (lib.full((2,), i * 0.5), i),
        "dict": lambda: {"x": np.full((2,), i, np.float32), "y": float(i), "name": f"s{i}",
                         "even": i % 2 == 0},
        "nested": lambda: {"a": (i, {"b": [float(i), str(i)]}), "p": Point(i, np.float64(i))},
        "float": lambda: i / 4,
        "int": lambda: i - 3,
        "bool": lambda: i % 3 == 0,
        "string": lambda: f"word{i}",
        "list": lambda: [i, float(i)],
        "numpy int64 scalar": lambda: np.int64(i),
        "numpy float32 scalar": lambda: np.float32(i) / 3,
        "numpy 0-d": lambda: np.array(i * 1.5),
    }[kind]()


class Samples:
    """A plain map-style dataset (no base class), as tutorials write one."""

    def __init__(self, lib, kind, n=11):
        self.lib, self.kind, self.n = lib, kind, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return sample(self.lib, self.kind, i)


class Arrays:
    """Samples that are NumPy arrays of one dtype."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return (np.arange(3) + i).astype(self.dtype)


LOADINGS = {
    "shuffled": dict(batch_size=4, shuffle=True),
    "shuffled, drop_last": dict(batch_size=4, shuffle=True, drop_last=True),
    "in order, drop_last": dict(batch_size=3, drop_last=True),
    "one by one": dict(batch_size=None),
    "one by one, shuffled": dict(batch_size=None, shuffle=True),
}


def through_loader(make, options, seed=7, own=None):
    """Two passes of a loader over ``make(lib, dlib)``, its len, and the next global draw."""
    def call(lib, dlib):
        lib.manual_seed(seed)
        generator = None if own is None else lib.Generator().manual_seed(own)
        loader = dlib.DataLoader(make(lib, dlib), generator=generator, **options)
        return list(loader), list(loader), len(loader), lib.rand(3).tolist()
    return call


@pytest.mark.parametrize("loading", LOADINGS)
@pytest.mark.parametrize("kind", ["tensor pair", "dict", "nested", "float", "int", "bool",
                                  "string", "list", "numpy int64 scalar",
                                  "numpy float32 scalar", "numpy 0-d"])
def test_a_users_dataset_gives_torchs_batches_and_stream(kind, loading):
    same(through_loader(lambda lib, dlib: Samples(lib, kind), LOADINGS[loading]))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32",
                                   "uint32", "int64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_numpy_samples_of_each_dtype_collate_as_torch(dtype):
    same(through_loader(lambda lib, dlib: Arrays(dtype), dict(batch_size=3, shuffle=True)))
    same(through_loader(lambda lib, dlib: Arrays(dtype), dict(batch_size=None)))


@pytest.mark.parametrize("seed, own", [(0, None), (1, None), (42, None), (0, 5), (3, 1234)])
def test_tensor_datasets_shuffle_seed_for_seed(seed, own):
    def make(lib, dlib):
        return dlib.TensorDataset(lib.arange(34.).reshape(17, 2), lib.arange(17) % 3)
    same(through_loader(make, dict(batch_size=5, shuffle=True), seed, own))


@pytest.mark.parametrize("size", [10, 60000])
def test_next_of_a_fresh_iterator_after_manual_seed_is_torchs(size):
    def call(lib, dlib):
        lib.manual_seed(0)
        loader = dlib.DataLoader(range(size), batch_size=16, shuffle=True)
        return next(iter(loader)), next(iter(loader)), lib.rand(2).tolist()
    same(call)


@pytest.mark.parametrize("sampler", ["random", "random, 25 with replacement", "random, 13",
                                     "subset", "weighted", "weighted, without replacement"])
@pytest.mark.parametrize("own", [None, 3])
def test_loaders_over_each_random_sampler_are_torchs(sampler, own):
    def make_sampler(lib, dlib):
        generator = None if own is None else lib.Generator().manual_seed(own)
        return {
            "random": lambda: dlib.RandomSampler(range(10), generator=generator),
            "random, 25 with replacement": lambda: dlib.RandomSampler(
                range(10), replacement=True, num_samples=25, generator=generator),
            "random, 13": lambda: dlib.RandomSampler(range(10), num_samples=13,
                                                     generator=generator),
            "subset": lambda: dlib.SubsetRandomSampler([9, 2, 4, 7, 0], generator=generator),
            "weighted": lambda: dlib.WeightedRandomSampler([0.1, 2, 0, 1, 3, 0.5, 1, 1, 2, 1],
                                                           12, generator=generator),
            "weighted, without replacement": lambda: dlib.WeightedRandomSampler(
                [0.1, 2, 0, 1, 3, 0.5, 1, 1, 2, 1], 6, replacement=False,
                generator=generator),
        }[sampler]()

    def call(lib, dlib):
        lib.manual_seed(11)
        loader = dlib.DataLoader(range(10), batch_size=4, sampler=make_sampler(lib, dlib))
        batches = dlib.DataLoader(range(10), batch_sampler=dlib.BatchSampler(
            make_sampler(lib, dlib), 3, drop_last=True))
        return list(loader), list(loader), list(batches), len(batches), lib.rand(2).tolist()
    same(call)


@pytest.mark.parametrize("workers, shuffle", [(2, False), (2, True), (3, True)])
def test_two_workers_give_torchs_batches(workers, shuffle):
    def make(lib, dlib):
        return dlib.TensorDataset(lib.arange(11), lib.arange(11) * 0.5)
    same(through_loader(make, dict(batch_size=3, shuffle=shuffle, num_workers=workers)))


# ----- random_split -----------------------------------------------------------------------
LENGTHS = {
    "fractions 0.8/0.2": lambda lib: [0.8, 0.2],
    "a tuple of fractions": lambda lib: (0.7, 0.2, 0.1),
    "fractions with a remainder": lambda lib: [0.33, 0.33, 0.34],
    "tenths": lambda lib: [0.1] * 10,
    "ints": lambda lib: [8, 2],
    "an empty split": lambda lib: [10, 0],
    "numpy ints": lambda lib: list(np.array([3, 7])),
    "a numpy array of fractions": lambda lib: np.array([0.3, 0.7]),
    "0-d integer tensors": lambda lib: [lib.tensor(3), lib.tensor(7)],
    "a float32 tensor fraction": lambda lib: [lib.tensor(0.3), 0.7],
    "bools as fractions": lambda lib: [True, False],
    "a bool among ints": lambda lib: [True, 9],
    # refused: the classes are torch's
    "floats that sum to the size": lambda lib: [3.0, 7.0],
    "a float tensor that sums to the size": lambda lib: [lib.tensor(3.0), 7],
    "ints that do not sum": lambda lib: [3, 3],
    "fractions that do not sum": lambda lib: [0.5, 0.4],
    "fractions over 1": lambda lib: [0.5, 0.6],
    "a fraction out of range": lambda lib: [1.2, -0.2],
    "strings": lambda lib: ["a", "b"],
    "not a sequence": lambda lib: 3,
}


@pytest.mark.parametrize("lengths", LENGTHS)
@pytest.mark.parametrize("own", [None, 5])
def test_random_split_takes_torchs_lengths_and_gives_torchs_subsets(lengths, own):
    def call(lib, dlib):
        lib.manual_seed(3)
        kwargs = {} if own is None else {"generator": lib.Generator().manual_seed(own)}
        parts = dlib.random_split(dlib.TensorDataset(lib.arange(10) * 2), LENGTHS[lengths](lib),
                                  **kwargs)
        loaders = [list(dlib.DataLoader(part, batch_size=3)) for part in parts]
        return [part.indices for part in parts], loaders, lib.rand(1).tolist()
    same(call)


# ----- the iterator, collation, errors ----------------------------------------------------
@pytest.mark.parametrize("options", [dict(batch_size=2), dict(batch_size=2, drop_last=True),
                                     dict(batch_size=None), dict(batch_size=3, num_workers=2)])
def test_a_pass_iterator_has_the_loaders_len(options):
    def call(lib, dlib):
        passing = iter(dlib.DataLoader(range(7), **options))
        return len(passing), iter(passing) is passing, list(passing)
    same(call)


COLLATED = {
    "a tensor and an array": lambda lib: [lib.zeros(2), np.zeros(2)],
    "an int then a tensor": lambda lib: [1, lib.zeros(())],
    "int then float": lambda lib: [1, 2.5],
    "float then int": lambda lib: [2.5, 1],
    "big ints": lambda lib: [2**40, -3],
    "ints past int64": lambda lib: [2**70, 3],
    "int32 then float32 tensors": lambda lib: [lib.zeros(2, dtype=lib.int32),
                                               lib.zeros(2, dtype=lib.float32)],
    "float32 then float64 arrays": lambda lib: [np.zeros(2, np.float32), np.zeros(2)],
    "non-contiguous arrays": lambda lib: [np.arange(6.).reshape(2, 3).T] * 2,
    "reversed arrays": lambda lib: [np.arange(4.)[::-1]] * 2,
    "defaultdicts": lambda lib: [collections.defaultdict(int, a=1),
                                 collections.defaultdict(int, a=2)],
    "dicts with other keys": lambda lib: [{"a": 1}, {"b": 2}],
    "sets": lambda lib: [{1}, {2}],
    "an empty batch": lambda lib: [],
}


@pytest.mark.parametrize("batch", COLLATED)
def test_mixed_batches_collate_or_fail_as_torch(batch):
    same(lambda lib, dlib: dlib.default_collate(COLLATED[batch](lib)))


LOADER_ERRORS = {
    "batch_size with batch_sampler": dict(batch_size=2, batch_sampler=[[0, 1]]),
    "shuffle with batch_sampler": dict(shuffle=True, batch_sampler=[[0, 1]]),
    "drop_last with batch_sampler": dict(drop_last=True, batch_sampler=[[0, 1]]),
    "shuffle with sampler": dict(shuffle=True, sampler=[0, 1]),
    "drop_last without batching": dict(batch_size=None, drop_last=True),
    "batch_size 0": dict(batch_size=0),
    "a float batch_size": dict(batch_size=2.0),
    "negative num_workers": dict(num_workers=-1),
    "persistent workers without workers": dict(persistent_workers=True),
    "a timeout without workers": dict(timeout=1),
}


@pytest.mark.parametrize("options", LOADER_ERRORS)
def test_loader_options_are_refused_as_torch(options):
    same(lambda lib, dlib: list(dlib.DataLoader(range(5), **LOADER_ERRORS[options])))

"""microgradnorm.utils.data against torch.utils.data: datasets, random_split's indices,
the samplers' orders for the same seeds, DataLoader batches over several passes, collation
(values, dtypes, containers) and the errors torch raises."""

import collections
import inspect

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.utils import data

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Pair = collections.namedtuple("Pair", "x y")


def same(ours, theirs):
    """Assert that two collated values have the same structure, dtypes, shapes and values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, mg.Tensor), type(ours)
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.numpy())
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for key in theirs:
            same(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            same(a, b)
    else:
        assert ours == theirs


def twin_tensor_datasets(n=13):
    x = np.arange(3.0 * n).reshape(n, 3)
    return (data.TensorDataset(mg.tensor(x), mg.arange(n)),
            tdata.TensorDataset(torch.tensor(x), torch.arange(n)))


def raises_like_torch(ours, theirs, match=None):
    """``theirs()`` raises; ``ours()`` raises the same class (and says ``match``)."""
    with pytest.raises(Exception) as error:
        theirs()
    with pytest.raises(type(error.value), match=match):
        ours()


# ----- datasets ---------------------------------------------------------------------------
def test_tensor_concat_and_subset_datasets_index_as_torch():
    ds, ds_t = twin_tensor_datasets()
    assert len(ds) == len(ds_t) == 13
    same(ds[4], ds_t[4])
    joined, joined_t = ds + data.Subset(ds, [3, 1]), ds_t + tdata.Subset(ds_t, [3, 1])
    assert isinstance(joined, data.ConcatDataset) and len(joined) == len(joined_t) == 15
    for index in (0, 12, 13, 14, -1, -15):
        same(joined[index], joined_t[index])
    raises_like_torch(lambda: joined[-16], lambda: joined_t[-16], "exceeds")
    raises_like_torch(lambda: joined[15], lambda: joined_t[15], "out of range")
    raises_like_torch(lambda: data.ConcatDataset([]), lambda: tdata.ConcatDataset([]), "empty")
    raises_like_torch(lambda: data.TensorDataset(mg.zeros(3), mg.zeros(4)),
                      lambda: tdata.TensorDataset(torch.zeros(3), torch.zeros(4)),
                      r"Size mismatch between tensors: first dimensions \[3, 4\]")
    raises_like_torch(lambda: data.TensorDataset(mg.zeros(())),
                      lambda: tdata.TensorDataset(torch.zeros(())), "0-d")
    empty, empty_t = data.TensorDataset(mg.zeros(0, 2)), tdata.TensorDataset(torch.zeros(0, 2))
    assert len(empty) == len(empty_t) == 0


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [10]])
@pytest.mark.parametrize("seed", [0, 1234])
def test_random_split_gives_torchs_indices(lengths, seed):
    ours = data.random_split(range(10), lengths, generator=mg.Generator().manual_seed(seed))
    theirs = tdata.random_split(range(10), lengths,
                                generator=torch.Generator().manual_seed(seed))
    assert [s.indices for s in ours] == [s.indices for s in theirs]
    assert [list(s) for s in ours] == [list(s) for s in theirs]
    mg.manual_seed(seed)
    torch.manual_seed(seed)                            # the default generator, as torch's
    assert [s.indices for s in data.random_split(range(7), [0.5, 0.5])] == \
        [s.indices for s in tdata.random_split(range(7), [0.5, 0.5])]


def test_random_split_errors_and_empty_split_warning():
    raises_like_torch(lambda: data.random_split(range(10), [3, 3]),
                      lambda: tdata.random_split(range(10), [3, 3]), "sum to 6")
    raises_like_torch(lambda: data.random_split(range(10), [1.5, -0.5]),
                      lambda: tdata.random_split(range(10), [1.5, -0.5]), "index 0")
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        parts = data.random_split(range(1), [0.5, 0.5])
    assert [len(p) for p in parts] == [1, 0]


# ----- samplers ---------------------------------------------------------------------------
@pytest.mark.parametrize("options", [{}, {"num_samples": 23}, {"num_samples": 4},
                                     {"replacement": True}, {"replacement": True,
                                                             "num_samples": 70}])
def test_random_sampler_draws_torchs_order(options):
    mg.manual_seed(5)
    torch.manual_seed(5)
    for _ in range(2):                                 # each pass draws a new order
        assert list(data.RandomSampler(range(10), **options)) == \
            list(tdata.RandomSampler(range(10), **options))
    generator, generator_t = mg.Generator().manual_seed(9), torch.Generator().manual_seed(9)
    ours = data.RandomSampler(range(10), generator=generator, **options)
    theirs = tdata.RandomSampler(range(10), generator=generator_t, **options)
    assert list(ours) + list(ours) == list(theirs) + list(theirs)
    assert len(ours) == len(theirs)
    assert list(data.SubsetRandomSampler([5, 7, 9], generator)) == \
        list(tdata.SubsetRandomSampler([5, 7, 9], generator_t))


@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_and_sequential_samplers_match_torch(drop_last):
    for n, size in [(10, 3), (9, 3), (2, 5), (0, 2)]:
        ours = data.BatchSampler(data.SequentialSampler(range(n)), size, drop_last)
        theirs = tdata.BatchSampler(tdata.SequentialSampler(range(n)), size, drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("make, match", [
    (lambda d: d.BatchSampler(range(3), 0, False), "batch_size"),
    (lambda d: d.BatchSampler(range(3), True, False), "batch_size"),
    (lambda d: d.BatchSampler(range(3), 2, 1), "drop_last"),
    (lambda d: d.RandomSampler(range(3), replacement=1), "replacement"),
    (lambda d: d.RandomSampler(range(3), num_samples=0), "num_samples"),
    (lambda d: d.RandomSampler(range(0)), "num_samples"),
])
def test_sampler_errors_are_torchs(make, match):
    raises_like_torch(lambda: make(data), lambda: make(tdata), match)


# ----- DataLoader -------------------------------------------------------------------------
@pytest.mark.parametrize("options", [
    {"batch_size": 4, "shuffle": True}, {"batch_size": 5, "shuffle": True, "drop_last": True},
    {"batch_size": 3}, {"batch_size": None, "shuffle": True}, {"batch_size": 20},
])
def test_loader_batches_and_orders_are_torchs(options):
    ds, ds_t = twin_tensor_datasets()
    loader, loader_t = data.DataLoader(ds, **options), tdata.DataLoader(ds_t, **options)
    assert len(loader) == len(loader_t)
    mg.manual_seed(3)
    torch.manual_seed(3)
    passes = []
    for _ in range(3):
        batches = list(loader)
        same(batches, list(loader_t))
        passes.append(str(batches))
    assert (len(set(passes)) == 3) == bool(options.get("shuffle"))   # reshuffled each pass
    same(mg.rand(3), torch.rand(3))        # the default generator moved as torch's did
    generator, generator_t = mg.Generator().manual_seed(8), torch.Generator().manual_seed(8)
    same(list(data.DataLoader(ds, generator=generator, **options)),
         list(tdata.DataLoader(ds_t, generator=generator_t, **options)))


def stream(module):
    """An IterableDataset of 0 .. 6 with a length, of ``module`` (ours or torch's)."""
    class Stream(module.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7
    return Stream


def test_loader_takes_samplers_batch_samplers_collate_fn_and_iterable_datasets():
    ds, ds_t = twin_tensor_datasets(7)
    same(list(data.DataLoader(ds, sampler=[6, 0, 3], batch_size=2)),
         list(tdata.DataLoader(ds_t, sampler=[6, 0, 3], batch_size=2)))
    same(list(data.DataLoader(ds, batch_sampler=[[1, 2], [5]])),
         list(tdata.DataLoader(ds_t, batch_sampler=[[1, 2], [5]])))
    assert list(data.DataLoader(range(5), batch_size=2, collate_fn=sum)) == [1, 5, 4]

    for options in ({"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                    {"batch_size": None}):
        loader = data.DataLoader(stream(data)(), **options)
        loader_t = tdata.DataLoader(stream(tdata)(), **options)
        same(list(loader), list(loader_t))
        assert len(loader) == len(loader_t)


def test_num_workers_loads_in_process_with_a_warning():
    ds, ds_t = twin_tensor_datasets()
    loader = data.DataLoader(ds, batch_size=4, shuffle=True, num_workers=2)
    mg.manual_seed(1)
    torch.manual_seed(1)
    with pytest.warns(UserWarning, match="num_workers=2 loads in this process"):
        batches = list(loader)
    same(batches, list(tdata.DataLoader(ds_t, batch_size=4, shuffle=True)))


@pytest.mark.parametrize("options, match", [
    ({"shuffle": True, "sampler": [0, 1]}, "mutually exclusive with shuffle"),
    ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually"),
    ({"batch_size": None, "drop_last": True}, "disables auto-batching"),
    ({"num_workers": -1}, "non-negative"),
    ({"timeout": -1}, "timeout"),
    ({"prefetch_factor": 2}, "prefetch_factor"),
    ({"persistent_workers": True}, "persistent_workers"),
    ({"batch_size": 0}, "batch_size"),
])
def test_loader_errors_are_torchs(options, match):
    ds, ds_t = twin_tensor_datasets()
    raises_like_torch(lambda: data.DataLoader(ds, **options),
                      lambda: tdata.DataLoader(ds_t, **options), match)


def test_loader_settings_are_fixed_once_made_and_iterable_datasets_refuse_shuffle():
    ds, ds_t = twin_tensor_datasets()
    loader, loader_t = data.DataLoader(ds), tdata.DataLoader(ds_t)

    def set_size(target):
        target.batch_size = 5
    raises_like_torch(lambda: set_size(loader), lambda: set_size(loader_t), "batch_size")
    assert loader.batch_size == 1
    raises_like_torch(lambda: data.DataLoader(stream(data)(), shuffle=True),
                      lambda: tdata.DataLoader(stream(tdata)(), shuffle=True), "shuffle")
    raises_like_torch(lambda: data.IterableDataset(), lambda: tdata.IterableDataset(),
                      "abstract")


# ----- collation --------------------------------------------------------------------------
COLLATE_CASES = {
    "float64 rows": lambda t: [t(np.arange(3.0)), t(np.ones(3))],
    "int and bool": lambda t: [t(np.array([1, 2])), t(np.array([3, 4]))],
    "0-d": lambda t: [t(np.array(1.5)), t(np.array(2.5))],
    "empty": lambda t: [t(np.zeros((0, 2))), t(np.zeros((0, 2)))],
    "bool": lambda t: [t(np.array([True])), t(np.array([False]))],
    "float32": lambda t: [t(np.ones(2, np.float32)), t(np.zeros(2, np.float32))],
    "python numbers": lambda t: [(1, 2.5, True, "a"), (3, 0.5, False, "b")],
    "mixed ints then float": lambda t: [1, 2.5],
    "numpy": lambda t: [np.arange(3, dtype=np.int32), np.ones(3, np.int32)],
    "numpy scalars": lambda t: [np.float32(1.5), np.float32(2)],
    "containers": lambda t: [{"x": t(np.ones(2)), "y": [1, 2], "p": Pair(1.0, "s")},
                             {"x": t(np.zeros(2)), "y": [3, 4], "p": Pair(2.0, "t")}],
}


@pytest.mark.parametrize("case", COLLATE_CASES)
def test_default_collate_is_torchs(case):
    ours = data.default_collate(COLLATE_CASES[case](mg.tensor))
    theirs = tdata.default_collate(COLLATE_CASES[case](torch.tensor))
    same(ours, theirs)
    converted = data.default_convert(COLLATE_CASES[case](mg.tensor))
    same(converted, tdata.default_convert(COLLATE_CASES[case](torch.tensor)))


def test_default_collate_errors_are_torchs():
    for batch, match in [([[1, 2], [3]], "equal size"), ([object()], "found"),
                         ([np.array(["a"])], "found")]:
        raises_like_torch(lambda b=batch: data.default_collate(b),
                          lambda b=batch: tdata.default_collate(b), match)


def test_collated_batches_take_part_in_autograd():
    ds = data.TensorDataset(mg.tensor(np.ones((4, 2)), requires_grad=True))
    (batch,) = next(iter(data.DataLoader(ds, batch_size=4)))
    batch.sum().backward()
    np.testing.assert_array_equal(ds.tensors[0].grad.numpy(), np.ones((4, 2)))


def test_public_names_have_docstrings():
    for name in data.__all__:
        obj = getattr(data, name)
        assert inspect.getdoc(obj), name
        for member, value in vars(obj).items() if inspect.isclass(obj) else ():
            if not member.startswith("_") and callable(value):
                assert inspect.getdoc(value), f"{name}.{member}"


def test_random_sampler_with_replacement_draws_lazily_as_torch():
    # makemore's InfiniteDataLoader: 1e10 samples; the first batch must not build them all
    import itertools
    import time
    start = time.perf_counter()
    ours = mg.utils.data.RandomSampler(range(5), replacement=True, num_samples=int(1e10),
                                       generator=mg.Generator().manual_seed(3))
    theirs = torch.utils.data.RandomSampler(range(5), replacement=True,
                                            num_samples=int(1e10),
                                            generator=torch.Generator().manual_seed(3))
    assert list(itertools.islice(iter(ours), 70)) == list(itertools.islice(iter(theirs), 70))
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("replacement", [True, False])
def test_the_weighted_sampler_draws_torchs_indices(replacement):
    weights = [0.9, 0.4, 0.05, 0.2, 0.3, 0.1]
    draws = []
    for lib in (mg, torch):
        lib.manual_seed(3)
        first = list(lib.utils.data.WeightedRandomSampler(weights, 5, replacement))
        generator = lib.Generator().manual_seed(5)
        second = list(lib.utils.data.WeightedRandomSampler(weights, 4, replacement,
                                                           generator=generator))
        draws.append((first, second))
    assert draws[0] == draws[1]
    assert len(mg.utils.data.WeightedRandomSampler(weights, 5)) == 5


@pytest.mark.parametrize("weights, num_samples, replacement, match", [
    ([[1.0]], 2, True, "1d sequence"),
    ([1.0, 2.0], 0, True, "num_samples"),
    ([1.0, 2.0], 2, 1, "replacement"),
])
def test_the_weighted_sampler_refuses_what_torch_refuses(weights, num_samples, replacement,
                                                         match):
    for lib in (mg, torch):
        with pytest.raises(ValueError, match=match):
            lib.utils.data.WeightedRandomSampler(weights, num_samples, replacement)

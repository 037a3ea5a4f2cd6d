"""``resize_``, ``resize_as_`` and ``set_`` corners against torch: a view resized to no
element and back keeps its storage offset (NumPy points an empty slice at its parent's
start), the memory format a resize lays out (``memory_format=``, ``resize_as_``'s
``preserve_format``), ``set_`` over a tensor or a storage, and torch's errors. Each compares
shape, strides, storage offset, values, the memory shared with the base and what a write
through the result does to the base."""

import pytest
import torch

import microgradnorm as mg


def _layout(lib, t, base):
    return {"shape": tuple(t.shape), "stride": t.stride(), "offset": t.storage_offset(),
            "shares": t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr(),
            "contiguous": t.is_contiguous(),
            "channels_last": t.is_contiguous(memory_format=lib.channels_last)
            if t.dim() == 4 and t.numel() else None}


def _fmt(lib, name):
    return None if name is None else getattr(lib, name)


# name: (the resizes of a view of base = arange(40.)), each (sizes, memory format or None))
CHAINS = {
    "a slice to none and back": (lambda b: b[3:], [((0,), None), ((4,), None)]),
    "to none, to a matrix": (lambda b: b[3:], [((0,), None), ((2, 2), None)]),
    "none twice, then three": (lambda b: b[3:], [((0,), None), ((0, 3), None), ((3,), None)]),
    "a row of a view": (lambda b: b.view(4, 10)[1], [((0,), None), ((3,), None)]),
    "a stepped slice": (lambda b: b[1::2], [((0,), None), ((3,), None)]),
    "a transposed view": (lambda b: b.view(5, 8).t(), [((3,), None)]),
    "to none, channels-last": (lambda b: b[5:], [((0,), None), ((1, 3, 2, 2), "channels_last")]),
    "channels-last": (lambda b: b[:24], [((1, 2, 3, 4), "channels_last")]),
    "channels-last at an offset": (lambda b: b[7:], [((2, 3, 2, 2), "channels_last")]),
    "channels-last, 1x1": (lambda b: b, [((2, 3, 1, 1), "channels_last")]),
    # a channels-last view of the base's memory: the same shape again, re-laid out if asked
    "same shape, row-major given": (lambda b: _channels_last_view(b),
                                    [((1, 2, 3, 4), "contiguous_format")]),
    "same shape, no format": (lambda b: _channels_last_view(b), [((1, 2, 3, 4), None)]),
    "channels-last 3-D": (lambda b: b[:24], [((1, 2, 3, 2, 2), "channels_last_3d")]),
}


def _channels_last_view(base):
    return base[:24].view(1, 3, 4, 2).permute(0, 3, 1, 2)          # (1, 2, 3, 4), strides CL


@pytest.mark.parametrize("case", list(CHAINS))
def test_resize_chains_keep_torchs_offset_layout_and_memory(case):
    make, steps = CHAINS[case]
    found = {}
    for lib in (mg, torch):
        base = lib.arange(40.0)
        t = make(base)
        for sizes, form in steps:
            assert t.resize_(*sizes, memory_format=_fmt(lib, form)) is t
        layout = _layout(lib, t, base)
        values = t.tolist()
        t.fill_(-1.0)                          # the write lands in the base's memory
        found[lib] = layout, values, base.tolist()
    assert found[mg] == found[torch]


def test_resize_as_takes_the_templates_format_where_asked():
    templates = {"row-major": lambda lib: lib.zeros(1, 2, 3, 4),
                 "channels-last": lambda lib: lib.zeros(1, 2, 3, 4).permute(0, 2, 3, 1)
                 .contiguous().permute(0, 3, 1, 2)}
    for name, template in templates.items():
        for form in (None, "preserve_format", "contiguous_format", "channels_last"):
            found = {}
            for lib in (mg, torch):
                base = lib.arange(40.0)
                t = base[3:].resize_as_(template(lib), memory_format=_fmt(lib, form))
                found[lib] = _layout(lib, t, base), t.tolist()
            assert found[mg] == found[torch], (name, form)


@pytest.mark.parametrize("call", [
    lambda lib, t: t.resize_(2, 3, 4, 5, memory_format=lib.preserve_format),
    lambda lib, t: t.resize_(2, 3, 4, memory_format=lib.channels_last),
    lambda lib, t: t.resize_(2, 3, 4, 5, memory_format=lib.channels_last_3d),
    lambda lib, t: t.resize_(2, 3, memory_format="channels_last"),
], ids=["preserve", "channels-last of rank 3", "channels-last 3-D of rank 4", "a string"])
def test_resize_refuses_what_torch_refuses_and_changes_nothing(call):
    raised = {}
    for lib in (torch, mg):
        t = lib.arange(10.0)[2:]
        with pytest.raises((RuntimeError, TypeError)) as error:
            call(lib, t)
        raised[lib] = error.type
    assert issubclass(raised[mg], raised[torch])
    # (torch's has resized before its format check fails; nothing changes here)
    assert tuple(t.shape) == (8,) and t.storage_offset() == 2 and t[0].item() == 2.0


# name: x.set_(...) with base = arange(10.), then resized where the case says so
SETS = {
    "nothing": lambda lib, b: lib.tensor([1.0]).set_(),
    "a storage": lambda lib, b: lib.tensor([1.0]).set_(b.untyped_storage()),
    "a storage from 2, (3,)": lambda lib, b: lib.tensor([1.0]).set_(b.untyped_storage(), 2,
                                                                     (3,)),
    "a storage, (2, 2) strided": lambda lib, b: lib.tensor([1.0]).set_(
        b.untyped_storage(), 2, (2, 2), (1, 3)),
    "a storage, keywords": lambda lib, b: lib.tensor([1.0]).set_(
        b.untyped_storage(), storage_offset=1, size=(2,), stride=(2,)),
    "a storage, a zero stride": lambda lib, b: lib.tensor([1.0]).set_(
        b.untyped_storage(), 0, (2, 3), (0, 1)),
    "a storage, no element": lambda lib, b: lib.tensor([1.0]).set_(b.untyped_storage(), 3,
                                                                    (0, 2)),
    "a storage, 0-d": lambda lib, b: lib.tensor([1.0]).set_(b.untyped_storage(), 5, (), ()),
    "a typed storage": lambda lib, b: lib.tensor([1.0]).set_(b.storage()),
    "an untyped storage as float64": lambda lib, b: lib.tensor([1.0], dtype=lib.float64)
    .set_(b.untyped_storage()),
    "a tensor": lambda lib, b: lib.tensor([1.0]).set_(b[3:]),
    "a transposed slice": lambda lib, b: lib.tensor([1.0]).set_(b.view(2, 5).t()[1:]),
    "a stepped slice, keyword": lambda lib, b: lib.tensor([1.0]).set_(source=b[::3]),
    "then resized to none and back": lambda lib, b: lib.tensor([1.0]).set_(
        b.untyped_storage(), 4, (2,)).resize_(0).resize_(3),
}


@pytest.mark.parametrize("case", list(SETS))
@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_set_views_the_memory_as_torchs(case):
    found = {}
    for lib in (mg, torch):
        base = lib.arange(10.0)
        t = SETS[case](lib, base)
        layout = {"shape": tuple(t.shape), "stride": t.stride(), "offset": t.storage_offset(),
                  "shares": t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr(),
                  "dtype": str(t.dtype).rsplit(".", 1)[-1]}
        values = t.tolist()
        if t.numel():
            t.fill_(-1.0)                      # through the shared memory
        found[lib] = layout, values, base.tolist()
    assert found[mg] == found[torch]


@pytest.mark.parametrize("call", [
    lambda lib, b: lib.tensor([1.0], dtype=lib.float64).set_(b.storage()),
    lambda lib, b: lib.tensor([1.0], dtype=lib.float64).set_(b),
    lambda lib, b: lib.ones(3, requires_grad=True).set_(),
    lambda lib, b: lib.tensor([1.0]).set_(b.untyped_storage(), -1, (2,)),
    lambda lib, b: lib.tensor([1.0]).set_(b.untyped_storage(), 0, (2,), (1, 2)),
    lambda lib, b: lib.tensor([1.0]).set_([1, 2]),
], ids=["a typed storage of another dtype", "a tensor of another dtype",
        "a leaf that requires grad", "a negative offset", "strides for another rank",
        "a list"])
@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_set_refuses_what_torch_refuses(call):
    raised = {}
    for lib in (torch, mg):
        base = lib.arange(10.0)
        with pytest.raises((RuntimeError, TypeError)) as error:
            call(lib, base)
        raised[lib] = error.type
    assert issubclass(raised[mg], raised[torch])


def test_set_past_the_storage_is_refused_where_torch_grows_it():
    base = mg.arange(10.0)
    t = mg.tensor([1.0])
    with pytest.raises(RuntimeError, match="torch grows the storage"):
        t.set_(base.untyped_storage(), 8, (2, 2), (1, 3))
    assert t.tolist() == [1.0] and base.untyped_storage().nbytes() == 40


@pytest.mark.parametrize("shape, fmt", [((2, 3), "contiguous_format"),
                                        ((1, 2, 3, 4), "channels_last")])
def test_a_resize_to_the_same_shape_bumps_no_version_as_torchs(shape, fmt):
    for lib in (mg, torch):
        w, x = lib.ones(shape, requires_grad=True), lib.ones(shape)
        y = (w * x).sum()
        version = x._version
        x.resize_(shape, memory_format=getattr(lib, fmt))
        assert x._version == version
        y.backward()                        # the saved x is still the one it was
        assert w.grad.tolist() == lib.ones(shape).tolist()
    assert mg.ones(shape).resize_(shape, memory_format=getattr(mg, fmt)).stride() == \
        torch.ones(shape).resize_(shape, memory_format=getattr(torch, fmt)).stride()

"""What a tensor says about itself, against PyTorch: device flags, strides and storage
offsets of views, dims, item sizes, signedness, the integer casts, ``is_nonzero``,
``retains_grad``, ``detach_``, ``select`` and the sampling methods."""

import numpy as np
import pytest
import torch

import microgradnorm as mg

ARRAY = np.arange(60.0).reshape(3, 4, 5)
VIEWS = {
    "itself": lambda t: t,
    "a row": lambda t: t[1],
    "columns from 2": lambda t: t[:, :, 2:],
    "every other": lambda t: t[::2, 1::2],
    "a transpose": lambda t: t.transpose(0, 2),
    "a permutation of a slice": lambda t: t[1:, 2:].permute(2, 0, 1),
    "expanded": lambda t: t[:1, :1, :1].expand(3, 4, 5),
    "reversed": lambda t: t.flip(0),
    "a column": lambda t: t[:, 1, 2],
    "new dims": lambda t: t[None, :, None],
    "unsqueezed last": lambda t: t.unsqueeze(-1),
    "empty slice": lambda t: t[:, :0],
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_layout_as_torch(view):
    ours, theirs = VIEWS[view](mg.tensor(ARRAY)), VIEWS[view](torch.tensor(ARRAY))
    assert ours.shape == tuple(theirs.shape)
    if view != "reversed":               # torch's flip copies: its strides are a new tensor's
        assert ours.stride() == theirs.stride()
        assert ours.storage_offset() == theirs.storage_offset()
    for dim in range(-ours.ndim, ours.ndim):
        assert ours.stride(dim) == ours.stride()[dim]
    assert ours.ndimension() == theirs.ndimension() == ours.dim()


@pytest.mark.parametrize("shape", [(0, 3), (2, 0), (0,), (), (1, 1), (3, 0, 1)])
def test_strides_of_new_tensors_as_torch(shape):
    assert mg.zeros(shape).stride() == torch.zeros(shape).stride()
    assert mg.empty(shape).stride() == torch.empty(shape).stride()


def test_stride_of_a_dim_out_of_range_is_an_index_error():
    for lib in (mg, torch):
        with pytest.raises(IndexError):
            lib.tensor(ARRAY).stride(3)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8", "uint8",
                                   "bool", "int16", "int32", "complex64"])
def test_item_size_and_signedness(dtype):
    ours, theirs = mg.zeros(2, dtype=dtype), torch.zeros(2, dtype=getattr(torch, dtype))
    assert ours.itemsize == theirs.itemsize == ours.element_size()
    assert ours.is_signed() == theirs.is_signed()


def test_device_flags():
    ours = mg.ones(2)
    assert (ours.is_cpu, ours.is_cuda, ours.get_device()) == (True, False, -1)
    if mg.cuda.is_available():                # pinned: NumPy memory, read by the copy
        assert ours.pin_memory() is ours
    else:                                     # torch's RuntimeError without an accelerator
        with pytest.raises(RuntimeError, match="accelerator"):
            ours.pin_memory()
    assert not ours.is_pinned()
    assert ours.share_memory_() is ours and ours.is_inference() is False


@pytest.mark.parametrize("name, dtype", [("short", "int16"), ("char", "int8"), ("byte", "uint8")])
def test_integer_casts(name, dtype):
    values = np.array([-3.7, 0.2, 2.9, 130.0])
    ours, theirs = getattr(mg.tensor(values), name)(), getattr(torch.tensor(values), name)()
    assert str(ours.dtype) == f"torch.{dtype}" == str(theirs.dtype)
    if name != "byte":                   # a negative float to uint8 is undefined in C
        assert ours.tolist() == theirs.tolist()
    assert ours.grad_fn is None


@pytest.mark.parametrize("values", [[0.0], [-2.5], [[1.0]], [], [1.0, 2.0], [float("nan")]])
def test_is_nonzero(values):
    try:
        expected = torch.tensor(values).is_nonzero()
    except RuntimeError as error:
        with pytest.raises(RuntimeError, match=str(error).split(" is ")[0]):
            mg.tensor(values).is_nonzero()
        return
    assert mg.tensor(values).is_nonzero() is expected


def test_is_same_size():
    a = mg.zeros(2, 3)
    assert a.is_same_size(mg.ones(2, 3)) and not a.is_same_size(mg.ones(3, 2))


def test_retains_grad():
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = x * 2, x * 3
        y.retain_grad()
        assert (x.retains_grad, y.retains_grad, z.retains_grad) == (False, True, False)


def test_detach_in_place_drops_the_node_and_refuses_views():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    (y * x).sum().backward()                           # y is a constant now
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    view = (x * 2)[:1]
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        view.detach_()
    assert view.grad_fn is not None                    # a failed call changes nothing


@pytest.mark.parametrize("dim, index", [(0, 1), (1, -1), (-1, 0), (2, 4)])
def test_select_values_and_gradient(dim, index):
    ours = mg.tensor(ARRAY, requires_grad=True)
    theirs = torch.tensor(ARRAY, requires_grad=True)
    a, b = ours.select(dim, index), theirs.select(dim, index)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    upstream = np.random.default_rng(0).standard_normal(tuple(b.shape))
    a.backward(upstream)
    b.backward(torch.tensor(upstream))
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_select_out_of_range_is_an_index_error():
    for lib in (mg, torch):
        with pytest.raises(IndexError):
            lib.tensor(ARRAY).select(0, 3)
        with pytest.raises(IndexError):
            lib.tensor(ARRAY).select(3, 0)


def test_multinomial_and_bernoulli_methods_draw_torchs_values():
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    for seed in (0, 3):
        mg.manual_seed(seed)
        torch.manual_seed(seed)
        ours = mg.tensor(probs).multinomial(2)
        theirs = torch.tensor(probs).multinomial(2)
        assert ours.tolist() == theirs.tolist()
        mg.manual_seed(seed)
        torch.manual_seed(seed)
        assert mg.tensor(probs).bernoulli().tolist() == torch.tensor(probs).bernoulli().tolist()


def test_an_element_taken_by_integers_is_a_view_as_torchs():
    # t[1, 2] was a copy: t[1, 2].add_(5) and t[1][0].fill_(3) changed nothing in t
    results = []
    for lib in (mg, torch):
        t = lib.zeros(2, 3)
        element = t[1, 2]
        element.add_(5)
        t[1][0].fill_(3)
        t[-1, -2].mul_(0)
        t.add_(1)
        results.append((t.tolist(), element.item(), element.storage_offset()))
    assert results[0] == results[1]


def test_detach_in_place_keeps_what_earlier_nodes_read():
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        total = y.sum()
        y.detach_()
        total.backward()                          # the sum's path to x is still there
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
        y = x * 2
        square = (y * y).sum()                    # the product saved y
        y.detach_()
        with pytest.raises(RuntimeError):
            square.backward()


def test_an_element_is_a_copy_while_recorded_so_augmented_assignment_works():
    # y[0] += 5 on a recorded y: y[0] (a view would be refused in place), += , y[0] = ...
    results = []
    for lib in (mg, torch):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = w * 1
        y[0] += 5
        y.sum().backward()
        losses = w * w
        loss = losses[0]
        loss += losses[1]
        loss.backward()
        results.append((y.tolist(), loss.item(), w.grad.tolist()))
    assert results[0] == results[1]


def test_a_0d_integer_tensor_indexes_as_an_int():
    results = []
    for lib in (mg, torch):
        counts = lib.zeros(3)
        for label in lib.tensor([0, 2, 2]):
            counts[label].add_(1)
        t = lib.zeros(2, 3)
        t[lib.tensor(1)].add_(1)
        results.append((counts.tolist(), t.tolist(), t.select(0, lib.tensor(1)).tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "__iadd__", "__imul__"])
@pytest.mark.parametrize("dtype, other", [("float32", [1j, 2j]), ("int64", 2.5),
                                          ("int64", [0.5, 1.5]), ("float64", [1 + 1j, 0])])
def test_an_in_place_result_the_tensor_cannot_hold_raises_as_torchs(op, dtype, other):
    # it was NumPy's UFuncTypeError (a TypeError); torch raises RuntimeError, writing nothing
    for lib in (mg, torch):
        x = lib.zeros(2, dtype=getattr(lib, dtype))
        operand = lib.tensor(other) if isinstance(other, list) else other
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            getattr(x, op)(operand)
        assert x.tolist() == [0, 0]


@pytest.mark.parametrize("value, dtype", [
    (255.5, "int8"), (127.9, "int8"), (-128.5, "int8"), (-1.0, "uint8"), (255.9, "uint8"),
    (256.0, "uint8"), (127.0, "int8"), (-1, "uint8"), (126.5, "int8"), (True, "uint8"),
    (1e39, "float32"), (float("nan"), "int64"), (float("inf"), "float16"), (-129, "int8")])
def test_full_converts_its_value_as_torchs_scalar(value, dtype):
    # a float is checked against the integer dtype's range before it is truncated (255.5
    # into int8 gave -1); an integer below an unsigned range wraps, as torch's
    try:
        expected = torch.full((2,), value, dtype=getattr(torch, dtype)).tolist()
    except RuntimeError:
        with pytest.raises(RuntimeError, match="cannot be converted"):
            mg.full((2,), value, dtype=dtype)
        return
    assert mg.full((2,), value, dtype=dtype).tolist() == expected


def test_an_element_of_a_recorded_tensor_follows_the_view_rules():
    # a copy while recorded: an in-place op on it would be lost, so it is refused as on
    # any view; y[0] += v checks the result as the in-place op would
    a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a * 1
    with pytest.raises(RuntimeError, match="in-place op on a view"):
        y[0].add_(5)
    assert y.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        y[0] += 1j
    with pytest.raises(RuntimeError, match="doesn't match"):
        y[0] += mg.tensor([1.0, 2.0])
    assert y.tolist() == [1.0, 2.0, 3.0]


def test_an_element_held_across_writes_into_other_elements_stays_usable():
    # h[t] = f(h[t - 1]), as recurrences are written: torch's gradient
    results = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * 1
        previous = h[0]
        h[1] = previous * 2
        h[2] = previous * 3
        h.sum().backward()
        results.append((h.tolist(), x.grad.tolist()))
    assert results[0] == results[1]


def test_a_captured_step_indexing_with_a_0d_tensor_reads_the_index_at_each_call():
    weight = mg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    step = mg.capture(lambda i: (weight[i] * 2).sum())
    got = [step(mg.tensor(k)).item() for k in (0, 0, 1, 2, 0)]
    assert got == [(weight[k] * 2).sum().item() for k in (0, 0, 1, 2, 0)]


def test_an_int_no_dtype_holds_raises_torchs_overflow_error():
    for lib in (mg, torch):
        for dtype in ("int64", "uint8"):
            with pytest.raises(OverflowError):
                lib.tensor([1], dtype=getattr(lib, dtype)) + 2**64


@pytest.mark.parametrize("value", [np.float32(3.5), np.float16(-2.0), np.int64(7)])
def test_full_takes_a_numpy_scalar_into_a_wider_dtype_without_a_warning(value):
    # np.float32(3.5) beside float64's max cast the max to float32: an overflow warning (a
    # RuntimeWarning of the library fails a test, pyproject.toml)
    expected = [float(value)] * 2
    got = [mg.full((2,), value, dtype=mg.float64),
           mg.full_like(mg.zeros(2, dtype=mg.float64), value),
           mg.zeros(1, dtype=mg.float64).new_full((2,), value)]
    assert [(str(t.dtype), t.tolist()) for t in got] == [("torch.float64", expected)] * 3
    assert torch.full((2,), value, dtype=torch.float64).tolist() == expected


@pytest.mark.parametrize("dtype, shape, number", [("float32", (2,), 1e40), ("float32", (), -1e40),
                                                  ("float16", (), 1e10), ("float16", (2,), 7e4),
                                                  ("bfloat16", (), 1e300)])
def test_a_float_past_the_tensors_dtype_is_inf_without_a_warning(dtype, shape, number):
    # 1e40 as float32 is inf, as torch's; NumPy's cast warned (a RuntimeWarning fails a test)
    def run(lib):
        x = lib.ones(shape, dtype=getattr(lib, dtype))
        return [(str(y.dtype).removeprefix("torch."), y.float().tolist())
                for y in (x + number, x * number, x - number, x > number)]
    assert run(mg) == run(torch)


@pytest.mark.parametrize("call", [lambda u: u / 300, lambda u: u + (-1), lambda u: u * 300,
                                  lambda u: u // -1, lambda u: u == 256])
def test_an_int_a_dtype_cannot_hold_gives_torchs_value_or_an_error(call):
    # torch casts it to the op's computing type (u / 300 divides in float); a wrapped copy
    # of it in the tensor's dtype would be a silent wrong answer (u / 300 as u / 44)
    u = np.array([44, 1, 200], dtype=np.uint8)
    expected = call(torch.tensor(u)).tolist()
    try:
        got = call(mg.tensor(u)).tolist()
    except OverflowError:
        return
    assert got == expected


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "uint8",
                                   "int64"])
@pytest.mark.parametrize("value", [1e5, 3.4e38, 1e39, 2**63, -1, 300, 127.5, float("inf"),
                                   float("nan"), True, -128.5])
@pytest.mark.parametrize("how", ["full", "fill_", "masked_fill"])
def test_a_fill_value_is_converted_or_refused_as_torchs(dtype, value, how):
    # refused past every float range (torch's one-element fills give inf past a half
    # dtype's: not followed); an int wraps into uint8; no NumPy warning
    def run(lib):
        kind = getattr(lib, dtype)
        if how == "full":
            return lib.full((2,), value, dtype=kind)
        if how == "fill_":
            return lib.zeros(2, dtype=kind).fill_(value)
        return lib.zeros(2, dtype=kind).masked_fill(lib.tensor([True, False]), value)
    try:
        expected = str(run(torch).tolist())
    except RuntimeError:
        with pytest.raises(RuntimeError):
            run(mg)
        return
    assert str(run(mg).tolist()) == expected

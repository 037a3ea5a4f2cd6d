"""ops/tensor_more.py against PyTorch: the in-place view changes (t_, transpose_, squeeze_,
...), as_strided and unfold, the in-place comparisons, logical and bitwise ops, the shifts,
the in-place matrix products with addbmm and addr, unique_consecutive, the conjugate
transposes and flags, and the post-accumulate-grad hooks: float64 values and gradients of
a random upstream, dtypes, 0-d and empty tensors, and torch's exception classes. The writes
by index (ops/index_writes.py) are in test_index_writes.py."""

import operator

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_vocabulary_more import data, same

import microgradnorm as mg
from microgradnorm.capture import CaptureError


def both(array, requires_grad=True):
    return mg.tensor(array, requires_grad=requires_grad), \
        torch.tensor(array, requires_grad=requires_grad)


# ----- the shape changed in place ------------------------------------------------------------
VIEW_CHANGES = [("t_", ()), ("transpose_", (0, 2)), ("transpose_", (-1, 0)),
                ("swapaxes_", (1, 2)), ("swapdims_", (0, 1)), ("squeeze_", ()),
                ("squeeze_", (1,)), ("squeeze_", ((1, 3),)), ("unsqueeze_", (0,)),
                ("unsqueeze_", (-1,))]


@pytest.mark.parametrize("name, args", VIEW_CHANGES)
def test_view_changes_in_place_keep_the_memory_and_match_torch(name, args):
    shape = (3, 4) if name == "t_" else (2, 1, 3, 1)
    x, xt = both(data(*shape), requires_grad=False)
    array, version = x._array, x._version
    assert getattr(x, name)(*args) is x
    getattr(xt, name)(*args)
    assert x.shape == tuple(xt.shape) and x.stride() == xt.stride()
    assert np.shares_memory(x._array, array) and x._version == version + 1
    np.testing.assert_array_equal(x.numpy(), xt.numpy())
    # a tensor of the graph: the gradient flows through the new view, as torch's
    a, at = both(data(*shape))
    b, bt = a * 2.0, at * 2.0
    getattr(b, name)(*args)
    getattr(bt, name)(*args)
    upstream = data(*bt.shape)
    (b * mg.tensor(upstream)).sum().backward()
    (bt * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), rtol=0, atol=1e-12)


def test_view_changes_refuse_what_torch_refuses():
    leaf = mg.tensor(data(2, 3), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.t_()
    assert leaf.shape == (2, 3) and leaf._version == 0             # nothing changed
    with mg.no_grad():
        leaf.t_()                                                  # allowed, as torch's
    assert leaf.shape == (3, 2)
    for call in [lambda lib: lib.zeros(2, 2, 2).t_(), lambda lib: lib.zeros(2, 3).squeeze_(5),
                 lambda lib: lib.zeros(2, 3).unsqueeze_(5),
                 lambda lib: lib.zeros(2, 3).transpose_(0, 5),
                 lambda lib: lib.zeros(2, 3).swapaxes_(-3, 0)]:
        same(call)
    same(lambda lib: lib.zeros(3).t_())
    same(lambda lib: lib.tensor(2.0).unsqueeze_(0).squeeze_())


def test_nodes_made_before_a_view_change_see_the_old_shape():
    a, at = both(data(2, 3))
    b, bt = a * 1.0, at * 1.0
    c, ct = b.exp(), bt.exp()
    v = b[0]
    b.t_()
    bt.t_()
    upstream = data(3, 2)
    (c.sum() + (b * mg.tensor(upstream)).sum()).backward()
    (ct.sum() + (bt * torch.tensor(upstream)).sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), atol=1e-12)
    # a view taken before the change reads the changed base again, as torch's
    a, at = both(data(2, 3))
    b, bt = a * 1.0, at * 1.0
    v, vt = b[0], bt[0]
    b.t_()
    bt.t_()
    (v * mg.tensor([1.0, 2.0, 3.0])).sum().backward()
    (vt * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), atol=1e-12)
    # an array saved before the change fails its version check, as torch's
    a, at = both(data(2, 3))
    b, bt = a * 1.0, at * 1.0
    c, ct = b * b, bt * bt
    b.t_()
    bt.t_()
    with pytest.raises(RuntimeError):
        ct.sum().backward()
    with pytest.raises(RuntimeError, match="modified in place"):
        c.sum().backward()


def test_a_view_of_a_recorded_tensor_changes_its_shape_in_place():
    a, at = both(data(4, 3))
    v, vt = (a * 3.0)[1:3], (at * 3.0)[1:3]
    v.t_().unsqueeze_(0)
    vt.t_().unsqueeze_(0)
    assert v.shape == tuple(vt.shape)
    upstream = data(*vt.shape)
    (v * mg.tensor(upstream)).sum().backward()
    (vt * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("change", [lambda v: v.t_(), lambda v: v.unsqueeze_(0),
                                    lambda v: v.squeeze_(), lambda v: v.logical_not_()])
def test_a_stale_view_is_read_from_its_written_base_as_torchs(change):
    # v is stale once x is written: torch regenerates v's node (a.grad [6, 6, 0]), and so
    # does the engine here (autograd/views.py), never the old node's gradient ([2, 2, 0])
    def stale(lib):
        a = lib.ones(3, requires_grad=True)
        x = a * 2.0
        v = x[:2]
        x.mul_(3.0)
        return a, v
    for lib in (torch, mg):
        a, v = stale(lib)
        change(v)
        (v * 1.0).sum().backward()
        assert a.grad.tolist() == [6.0, 6.0, 0.0]


# ----- as_strided, unfold ---------------------------------------------------------------------
AS_STRIDED = [((2, 2), (3, 1), None), ((2, 2), (3, 1), 1), ((3,), (2,), None), ((), (), 4),
              ((0, 2), (300, 1), 100), ((3, 3), (1, 1), None), ((2, 3), (0, 1), 2)]


@pytest.mark.parametrize("size, stride, offset", AS_STRIDED)
def test_as_strided_values_and_gradients_match_torch(size, stride, offset):
    # overlapping outputs ((3, 3) over (1, 1), (0, 1)) sum their gradients, as torch's
    same(lambda lib, x: x.as_strided(size, stride, offset), data(9))
    same(lambda lib, x: lib.as_strided(x * 1.0, size, stride, storage_offset=offset), data(9))


def test_as_strided_reads_the_storage_of_a_view_as_torch():
    # the view starts at its storage offset, reads outside its own elements, and an
    # expanded input divides its gradient among its copies (torch's as_strided_backward)
    views = [lambda x: x[2:], lambda x: x[::2], lambda x: x.reshape(3, 4).t(),
             lambda x: x[:6].expand(2, 6), lambda x: x.reshape(3, 4)[1:, 1:]]
    geometries = [((2, 2), (3, 1), None), ((3,), (1,), 0), ((2, 2), (1, 4), None),
                  ((3,), (2,), None), ((2,), (4,), 3)]
    for view, (size, stride, offset) in zip(views, geometries):
        same(lambda lib, x, view=view, where=(size, stride, offset):
             view(x * 1.0).as_strided(*where), data(12))


def test_as_strided_refuses_what_torch_refuses_and_is_read_only():
    for size, stride, offset in [((2, 2), (3, 1), 7), ((2, 2), (-3, 1), None),
                                 ((2, 2), (3,), None), ((2, -2), (3, 1), None),
                                 ((2, 2), (3, 1), -1)]:
        same(lambda lib, x, where=(size, stride, offset): x.as_strided(*where), data(9),
             grad=False)
    view = mg.arange(9.0).as_strided((2,), (2,))
    with pytest.raises(ValueError, match="read-only"):
        view.add_(1.0)
    for where in [(2, 1), ((2.0,), (1,)), ((2,), (1,), 1.0)]:      # torch's TypeErrors
        same(lambda lib, x, where=where: x.as_strided(*where), data(9), grad=False)


def test_a_captured_as_strided_reads_the_storage_of_each_call():
    # the default offset and the bounds are the argument's at each call: a replay of a
    # step recorded on arrays of their own reads a view at its own start, and refuses an
    # offset past a smaller storage as the eager call does
    w = mg.tensor([1.0, 1.0], requires_grad=True)
    step = mg.capture(lambda x: (x.as_strided((2,), (1,)) * w).sum())
    for _ in range(3):                     # recorded twice, then replayed
        assert step(mg.arange(4.0)).item() == 1.0
    expected = torch.arange(10.0)[2:6].as_strided((2,), (1,)).sum().item()      # 2 + 3
    assert step(mg.arange(10.0)[2:6]).item() == expected == 5.0
    w3 = mg.ones(3, requires_grad=True)
    fixed = mg.capture(lambda x: x.as_strided((3,), (1,), 7) * w3)
    big = mg.arange(100.0, 112.0)
    for _ in range(3):
        assert fixed(big[:4]).tolist() == [107.0, 108.0, 109.0]
    with pytest.raises(RuntimeError, match="out of bounds"):
        fixed(mg.arange(4.0))
    with pytest.raises(RuntimeError):
        torch.arange(4.0).as_strided((3,), (1,), 7)
    assert fixed(big[:4]).tolist() == [107.0, 108.0, 109.0]


@settings(max_examples=25)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.integers(0, 2),
       st.integers(0, 3), st.integers(1, 3))
def test_unfold_matches_torch_on_drawn_shapes(shape, dim, size, step):
    dim = dim % len(shape)
    same(lambda lib, x: x.unfold(dim, size, step), data(*shape))


def test_unfold_corners_match_torch():
    x = data(7)
    for args in [(0, 3, 2), (0, 7, 1), (0, 8, 1), (0, 0, 1), (0, 2, 0), (0, -1, 1), (1, 2, 1)]:
        same(lambda lib, x, args=args: x.unfold(*args), x)
    for args in [(0, 1, 1), (0, 2, 1), (-1, 1, 5), (0, 0, 1)]:
        same(lambda lib, x, args=args: x.unfold(*args), np.array(3.0))
    same(lambda lib, x: x.unfold(1, 2, 1), data(2, 3, 4))
    same(lambda lib, x: x.unfold(0, 0, 1), np.zeros((0, 3)))
    same(lambda lib, x: x.unfold(-1, 3, 1), np.arange(10, dtype=np.int32).reshape(2, 5))
    x = mg.arange(6.0)
    x.unfold(0, 2, 2).mul_(10.0)                         # windows apart: a writable view
    assert x.tolist() == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    assert mg.arange(6.0).unfold(0, 3, 1).stride() == torch.arange(6.0).unfold(0, 3, 1).stride()


# ----- in-place comparisons, logical and bitwise ----------------------------------------------
COMPARISONS = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "less_", "greater_equal_",
               "less_equal_", "not_equal_", "logical_and_", "logical_or_", "logical_xor_"]


@pytest.mark.parametrize("name", COMPARISONS)
def test_in_place_comparisons_match_torch(name):
    logical = name.startswith("logical")
    for array in [np.array([1.0, 2.0, 0.0, np.nan]), np.array([1, 2, 0, 3]),
                  np.array([True, False, True, False]),
                  np.array([1.5, 2.0, 0.0, -1.0], np.float32)]:
        for other in [np.array([2.0, 2.0, 0.0, 1.0]), np.array([2, 1, 0, 0]),
                      np.array([True, True, False, False])] + ([] if logical else [2, 1.5]):
            same(lambda lib, x, y: getattr(x.clone(), name)(y), array, other, grad=False)
    same(lambda lib, x, y: getattr(x.clone(), name)(y), data(3), data(2, 3), grad=False)
    same(lambda lib, x, y: getattr(x.clone(), name)(y), data(2, 3), data(3), grad=False)
    same(lambda lib, x, y: getattr(x.clone(), name)(y), np.array(1.0), np.array(1.0),
         grad=False)
    # on a tensor of the graph: recorded, with a zero gradient, as torch's
    same(lambda lib, x, y: getattr(x * 1.0, name)(y), data(2, 3), data(2, 3))
    same(lambda lib, x, y: getattr(x.detach(), name)(y * 1.0), data(2, 3), data(3))
    x = mg.tensor([1.0, 2.0])
    assert getattr(x, name)(mg.tensor([1.0, 3.0])) is x and x._version == 1


def test_in_place_logical_not_and_bitwise_match_torch():
    for array in [np.array([1.0, 0.0, np.nan]), np.array([3, 0, -1]), np.array([True, False])]:
        same(lambda lib, x: x.clone().logical_not_(), array, grad=False)
        same(lambda lib, x: x.clone().bitwise_not_(), array, grad=False)
    same(lambda lib, x: (x * 1.0).logical_not_(), data(3))
    ints, narrow = np.array([7, 5, -3]), np.array([7, 5, -3], np.int32)
    for name in ["bitwise_and_", "bitwise_or_", "bitwise_xor_"]:
        for x, y in [(ints, np.array([3, 1, 6])), (narrow, np.array([3, 1, 6])),
                     (ints, 6), (ints, 1.5), (np.array([True, False]), np.array([1, 1])),
                     (np.array([True, False]), np.array([True, True])),
                     (data(3), np.array([1, 2, 3])), (ints, np.array([[1, 2, 3]] * 2))]:
            same(lambda lib, x, y, name=name: getattr(x.clone(), name)(y), x, y, grad=False)


def test_in_place_logical_ops_on_an_element_of_a_recorded_tensor_are_refused():
    # y[0] of a recorded y is a copy here (indexing.getitem): torch writes into y, [0, 2, 2];
    # a write into the copy would be lost, so it is refused, as add_ on it is
    yt = torch.ones(3, requires_grad=True) * 2.0
    yt[0].logical_not_()
    assert yt.tolist() == [0.0, 2.0, 2.0]
    y = mg.ones(3, requires_grad=True) * 2.0
    for name, args in [("logical_not_", ()), ("logical_and_", (mg.tensor(0.0),))]:
        with pytest.raises(RuntimeError, match="view"):
            getattr(y[0], name)(*args)
        assert y.tolist() == [2.0, 2.0, 2.0]
    with mg.no_grad():
        y[0].logical_not_()                # a view of y: written into it, as torch's
    assert y.tolist() == [0.0, 2.0, 2.0]


WRAPPING = [lambda x: x.bitwise_xor_(300), lambda x: x.__ixor__(300),
            lambda x: x.bitwise_and_(-1), lambda x: x.__ior__(256), lambda x: x.lt_(-1),
            lambda x: x.eq_(259), lambda x: x.ge_(300), lambda x: x.fmod_(-1),
            lambda x: x.remainder_(300), lambda x: x.__ifloordiv__(258),
            lambda x: x.__imod__(258), lambda x: x.bitwise_and(-1), lambda x: x ^ 300,
            lambda x: -1 | x, lambda x: x < -1, lambda x: x.lt(-1), lambda x: 300 // x,
            lambda x: x.floor_divide(258), lambda x: x.bitwise_or_(2**64)]


@pytest.mark.parametrize("call", WRAPPING)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_an_int_past_an_integer_dtype_wraps_as_torchs(call, dtype):
    # torch casts the number to the tensor's dtype (C's wrap: -1 is 255 in uint8, 300 is
    # 44 in int8) where the op computes in that dtype; an int past 64 bits is an OverflowError
    same(lambda lib, x: call(x.clone()), np.array([3, 5, 100], dtype))


def test_in_place_division_forms_match_torch():
    for name in ["fmod_", "remainder_", "floor_divide_"]:
        for x, y in [(np.array([5.0, -7.0, 2.5]), 3), (np.array([5.0, -7.0, 2.5]), data(3)),
                     (np.array([5, -7, 9]), 2), (np.array([5, 7]), 2.5),
                     (np.array([5, 7]), np.array([2, 0]))]:
            same(lambda lib, x, y, name=name: getattr(x.clone(), name)(y), x, y, grad=False)
    for name in ["fmod_", "remainder_"]:
        same(lambda lib, x, y, name=name: getattr(x * 1.0, name)(y), data(2, 3) * 4,
             data(3) + 3)


# ----- the shifts -----------------------------------------------------------------------------
SHIFTS = [(np.array([1, 2, -3]), np.array([1, 63, 64])),
          (np.array([1, 2, -3]), np.array([-1, -2, -70])),
          (np.array([1, 2, -3], np.int8), np.array([1, 7, 8], np.int8)),
          (np.array([1, 2, -3], np.int8), np.array([1, 8, 100])),
          (np.array([200, 255], np.uint8), np.array([1, 8], np.uint8)),
          (np.array([1, -5], np.int32), np.array(3, np.int64)), (np.array(-9), np.array(2))]


@pytest.mark.parametrize("x, y", SHIFTS)
def test_shifts_match_torch_past_the_width_too(x, y):
    for name in ["bitwise_left_shift", "bitwise_right_shift"]:
        same(lambda lib, x, y, name=name: getattr(lib, name)(x, y), x, y)
        same(lambda lib, x, y, name=name: getattr(x, name)(y), x, y)
        same(lambda lib, x, y, name=name: getattr(x.clone(), name + "_")(y), x, y)
    same(lambda lib, x, y: (x << y, x >> y), x, y)


def test_shifts_with_numbers_and_refusals_match_torch():
    for x, number in [(np.array([200, 255], np.uint8), 2), (np.array([1], np.int8), 300),
                      (np.array([1], np.uint8), -1), (np.array([True, False]), 1),
                      (np.array([3, -4]), 1)]:
        same(lambda lib, x, number=number: (lib.bitwise_left_shift(x, number), x >> number,
                                            number << x, lib.bitwise_right_shift(number, x)),
             x)
    for x, y in [(np.array([True]), np.array([True])), (np.array([1.5]), 1),
                 (np.array([1]), 1.5), (np.array([1.0]), np.array([1]))]:
        same(lambda lib, x, y: lib.bitwise_left_shift(x, y), x, y, grad=False)
    same(lambda lib, x, y: x.clone().bitwise_left_shift_(y), np.array([5], np.int32),
         np.array([1]))
    x, xt = mg.tensor([1, 2], dtype=mg.int16), torch.tensor([1, 2], dtype=torch.int16)
    x <<= 3
    xt <<= 3
    x >>= mg.tensor([1, 2])
    xt >>= torch.tensor([1, 2])
    assert x.dtype == np.int16 and x.tolist() == xt.tolist()


def test_in_place_operator_forms_write_into_the_tensor():
    x, xt = mg.tensor([6, 5, 12]), torch.tensor([6, 5, 12])
    array = x._array
    for op in ["__iand__", "__ior__", "__ixor__", "__ifloordiv__", "__imod__"]:
        assert getattr(x, op)(mg.tensor([3, 3, 5])) is x
        getattr(xt, op)(torch.tensor([3, 3, 5]))
        assert x.tolist() == xt.tolist() and x._array is array
    # an element of a recorded tensor: computed out of place and written back
    a, at = both(data(3) * 5)
    b, bt = a * 1.0, at * 1.0
    b[1] %= 1.5
    bt[1] %= 1.5
    b[2] //= 2.0
    bt[2] //= 2.0
    np.testing.assert_allclose(b.detach().numpy(), bt.detach().numpy(), atol=1e-12)
    # whose result must fit the element, as the in-place op's: torch's RuntimeError
    for op in [operator.imod, operator.ifloordiv, operator.iadd]:
        same(lambda lib, x, y, op=op: op((x * 1.0)[0], y), data(3), np.array([2.0, 3.0]))


# ----- matrix products in place, addbmm, addr -------------------------------------------------
def test_in_place_matrix_products_match_torch():
    same(lambda lib, x, a, b: (x * 1.0).addmm_(a, b, beta=0.5, alpha=2.0), data(2, 4),
         data(2, 3), data(3, 4))
    same(lambda lib, x, a, b: (x * 1.0).addmv_(a, b), data(4), data(4, 3), data(3))
    same(lambda lib, x, a, b: lib.addmv_(x * 1.0, a, b, alpha=3), data(4), data(4, 3), data(3))
    same(lambda lib, x, a, b: (x * 1.0).baddbmm_(a, b, beta=0), data(2, 2, 4), data(2, 2, 3),
         data(2, 3, 4))
    same(lambda lib, x, a, b: x.clone().addmm_(a, b), np.zeros((2, 4), np.int64),
         data(2, 5), data(5, 4), grad=False)
    same(lambda lib, x, a, b: x.clone().addmm_(a, b), data(1, 4), data(2, 3), data(3, 4),
         grad=False)


def test_addbmm_matches_torch():
    for shape in [(2, 4), (4,), (1, 1)]:
        same(lambda lib, x, a, b: lib.addbmm(x, a, b), data(*shape), data(3, 2, 5), data(3, 5, 4))
    same(lambda lib, x, a, b: x.addbmm(a, b, beta=0.5, alpha=-2.0), data(2, 4), data(3, 2, 5),
         data(3, 5, 4))
    same(lambda lib, x, a, b: (x * 1.0).addbmm_(a, b), data(2, 4), data(3, 2, 5), data(3, 5, 4))
    same(lambda lib, x, a, b: lib.addbmm(x, a, b), data(2, 4), data(0, 2, 5), data(0, 5, 4))
    same(lambda lib, x, a, b: lib.addbmm(x, a, b, beta=0), np.full((2, 4), np.nan),
         data(3, 2, 5), data(3, 5, 4))
    ones = np.ones((3, 2, 5), np.int64)
    same(lambda lib, x, a, b: lib.addbmm(x, a, b, alpha=1.5), np.zeros((2, 4), np.int64), ones,
         np.ones((3, 5, 4), np.int64))
    for shapes in [((2, 4), (3, 2, 5), (2, 5, 4)), ((2, 4), (3, 2, 5), (3, 4, 4)),
                   ((3, 4), (3, 2, 5), (3, 5, 4)), ((2, 4), (2, 5), (3, 5, 4))]:
        same(lambda lib, x, a, b: lib.addbmm(x, a, b), *(data(*s) for s in shapes), grad=False)
    same(lambda lib, x, a, b: lib.addbmm(x, a, b), data(2, 4), data(3, 2, 5).astype(np.float32),
         data(3, 5, 4).astype(np.float32), grad=False)
    same(lambda lib, x, a, b: lib.addbmm(x, a, b), np.zeros((2, 4), bool),
         np.ones((3, 2, 5), bool), np.ones((3, 5, 4), bool), grad=False)


def test_addr_matches_torch_with_promotion_and_bools():
    same(lambda lib, x, a, b: lib.addr(x, a, b, beta=0.5, alpha=2), data(2, 3), data(2), data(3))
    same(lambda lib, x, a, b: x.addr(a, b), data(3), data(2), data(3))
    same(lambda lib, x, a, b: (x * 1.0).addr_(a, b), data(2, 3), data(2), data(3))
    same(lambda lib, x, a, b: lib.addr(x, a, b, beta=0), np.full((2, 3), np.nan), data(2),
         data(3))
    f32 = data(1, 3).astype(np.float32)
    same(lambda lib, x, a, b: lib.addr(x, a, b), f32, data(2), data(3))
    same(lambda lib, x, a, b: lib.addr(x, a, b), np.ones((2, 3)), np.array([1, 2]),
         np.array([1, 2, 3]))
    truth = np.array([[True, False, False], [False, True, False]])
    for beta, alpha in [(1, 1), (False, 1), (2, 1), (1, 0), (True, True)]:
        same(lambda lib, x, a, b, beta=beta, alpha=alpha: lib.addr(x, a, b, beta=beta,
                                                                   alpha=alpha),
             truth, np.array([True, False]), np.array([True, False, True]))
    for beta, alpha in [(1, 1.5), (0.5, 1)]:
        same(lambda lib, x, a, b, beta=beta, alpha=alpha: lib.addr(x, a, b, beta=beta,
                                                                   alpha=alpha),
             np.zeros((2, 3), np.int64), np.array([1, 2]), np.array([1, 2, 3]))
    for shapes in [((1, 3), (2,), (3,)), ((2, 3), (2,), (1, 3)), ((2, 2, 3), (2,), (3,))]:
        same(lambda lib, x, a, b: lib.addr(x, a, b), *(data(*s) for s in shapes))
    same(lambda lib, x, a, b: x.clone().addr_(a, b), data(1, 3), data(2), data(3), grad=False)


# ----- unique_consecutive ---------------------------------------------------------------------
def test_unique_consecutive_matches_torch():
    runs = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    rows = np.array([[1, 1], [1, 1], [2, 3], [1, 1]])
    cases = [(runs, None), (rows, 0), (rows, 1), (rows, -1), (np.array([np.nan, np.nan, 1.0]),
             None), (np.array([True, True, False]), None), (np.array([]), None),
             (np.array(3.0), None), (np.zeros((0, 3)), 0), (rows, None),
             (rows.astype(np.float32), 0)]
    for array, dim in cases:
        for inverse in (False, True):
            for counts in (False, True):
                same(lambda lib, x, dim=dim, inverse=inverse, counts=counts:
                     lib.unique_consecutive(x, return_inverse=inverse, return_counts=counts,
                                            dim=dim), array, grad=False)
    same(lambda lib, x: x.unique_consecutive(return_counts=True), runs)
    for array, dim in [(np.array(3.0), 0), (rows, 2), (np.zeros((2, 0)), 0)]:
        same(lambda lib, x, dim=dim: lib.unique_consecutive(x, dim=dim), array, grad=False)


# ----- conjugate transposes, flags, copies ----------------------------------------------------
def test_conjugate_transposes_and_flags_match_torch():
    for shape in [(2, 3), (3,), (), (2, 2, 3)]:
        same(lambda lib, x: x.H, data(*shape))
        same(lambda lib, x: x.mH, data(*shape))
        same(lambda lib, x: x.adjoint(), data(*shape))
        same(lambda lib, x: lib.adjoint(x), data(*shape))
    z = np.array([[1 + 2j, 3j], [2.0, -1j]])
    for attribute in ["H", "mH"]:
        np.testing.assert_array_equal(getattr(mg.tensor(z), attribute).numpy(),
                                      getattr(torch.tensor(z), attribute).resolve_conj()
                                      .numpy())
    x = mg.tensor(data(2, 3))
    assert x.is_conj() is False and x.is_neg() is False and not mg.is_conj(mg.tensor(z))
    assert x.resolve_conj() is x and mg.resolve_neg(x) is x and x.H.shape == (3, 2)
    with pytest.raises(TypeError, match="complex32"):
        x.chalf()


def test_narrow_copy_and_new_empty_strided_match_torch():
    for args in [(1, 1, 2), (0, 0, 2), (0, 3, 1), (2, 0, 1)]:
        same(lambda lib, x, args=args: x.narrow_copy(*args), data(2, 3))
    # torch's backward of a negative start that ends at the dim's end (start + length == 0)
    # sends nothing back for one element and raises for more; here the gradient goes to the
    # elements taken, as narrow's, as torch's does for the other negative starts
    same(lambda lib, x: x.narrow_copy(1, -1, 1), data(2, 3), grad=False)
    same(lambda lib, x: x.narrow_copy(0, -3, 2), data(4))
    x = mg.tensor(data(2, 3), requires_grad=True)
    x.narrow_copy(1, -1, 1).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    same(lambda lib, x: lib.narrow_copy(x, 0, 1, 1), data(2, 3))
    x = mg.narrow_copy(mg.arange(6.0), 0, 1, 2)
    assert x._array.base is None
    for size, stride in [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((0, 3), (5, 1)), ((4,), (0,))]:
        made = mg.zeros(2).new_empty_strided(size, stride)
        assert made.shape == size and made.stride() == \
            torch.zeros(2).new_empty_strided(size, stride).stride()
    made = mg.zeros(2).new_empty_strided((2, 3), (1, 2), dtype=mg.int64, requires_grad=False)
    assert made.dtype == np.int64
    assert mg.zeros(2).new_empty_strided((2,), (1,), requires_grad=True).requires_grad
    for size, stride in [((2, 3), (1,)), ((2, 3), (-1, 2)), ((2,), 1), ((2,), (1.0,))]:
        same(lambda lib, size=size, stride=stride: lib.zeros(2).new_empty_strided(size, stride))


# ----- post-accumulate-grad hooks -------------------------------------------------------------
def test_post_accumulate_grad_hooks_run_after_the_gradient_is_accumulated():
    for lib in (mg, torch):
        w = lib.ones(2, requires_grad=True)
        w.register_hook(lambda g: g * 10)              # a gradient hook runs before
        seen = []
        handle = w.register_post_accumulate_grad_hook(
            lambda p, seen=seen: seen.append(p.grad.tolist()))
        w.register_post_accumulate_grad_hook(lambda p, seen=seen, w=w: seen.append(p is w))
        (w * 3).sum().backward()
        (w * 3).sum().backward()
        handle.remove()
        (w * 3).sum().backward()
        lib.autograd.grad((w * 1).sum(), w) if lib is torch else mg.grad((w * 1).sum(), [w])
        assert seen == [[30.0, 30.0], True, [60.0, 60.0], True, True], lib


def test_post_accumulate_grad_hooks_refuse_what_torch_refuses():
    same(lambda lib: (lib.ones(2, requires_grad=True) * 1)
         .register_post_accumulate_grad_hook(lambda p: None))
    same(lambda lib: lib.ones(2).register_post_accumulate_grad_hook(lambda p: None))
    w = mg.ones(2, requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda p: 5)
    with pytest.raises(TypeError, match="return None"):
        (w * 3).sum().backward()
    with pytest.raises(TypeError, match="callable"):
        w.register_post_accumulate_grad_hook(3)
    # an optimizer step in the hook (the optimizer-in-backward pattern)
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    optimizer = mg.optim.SGD([w], lr=0.5)

    def step(parameter):
        optimizer.step()
        optimizer.zero_grad()
    w.register_post_accumulate_grad_hook(step)
    (w * w).sum().backward()
    assert w.tolist() == [0.0, 0.0] and w.grad is None


@pytest.mark.parametrize("before", [True, False])
def test_a_post_accumulate_hook_registered_inside_a_captured_step_is_refused(before):
    # a replay would not register it again: eagerly the hooks pile up (1 + 2 + 3 + 4 runs),
    # replayed they would not
    w = mg.ones(2, requires_grad=True)

    def step(x):
        if before:
            w.register_post_accumulate_grad_hook(lambda p: None)
        out = (x * w).sum()
        if not before:
            w.register_post_accumulate_grad_hook(lambda p: None)
        return out
    captured = mg.capture(step)
    with pytest.raises(CaptureError, match="hook"):
        for _ in range(4):
            captured(mg.ones(2)).backward()

"""Every op of the op table (tests/helpers/op_table.py), two ways: against PyTorch (forward
value and the gradient of every input, float64) and with finite-difference ``mg.gradcheck``,
over hypothesis-drawn shapes. Then shape ops, indexing, matmul, the Python operators that map
onto the ops, and the dtype rules."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_table import BINARY as BINARY_OPS
from op_table import REDUCTIONS as REDUCTION_OPS
from op_table import UNARY as UNARY_OPS
from strategies import (arrays, broadcastable_pair, distinct_arrays, nonzero_arrays,
                        positive_arrays, seeded_normal, shapes)

import microgradnorm as mg
from microgradnorm import ops

torch = pytest.importorskip("torch")

FAST = settings(max_examples=25, deadline=None)
GRADCHECK = settings(max_examples=10, deadline=None)


def assert_close(actual, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def check_against_torch(mg_fn, torch_fn, arrays_in, needs_grad=None, seed=0):
    """Run ``mg_fn`` on Tensors and ``torch_fn`` on torch tensors made from ``arrays_in``;
    compare the forward value, then back-propagate one random upstream gradient through
    both and compare the gradient of every input (None where it needs none)."""
    needs_grad = [True] * len(arrays_in) if needs_grad is None else list(needs_grad)
    mine = [mg.tensor(a.copy(), requires_grad=r) for a, r in zip(arrays_in, needs_grad)]
    theirs = [torch.tensor(a, requires_grad=r) for a, r in zip(arrays_in, needs_grad)]
    out = mg_fn(*mine)
    expected = torch_fn(*theirs)
    assert isinstance(out, mg.Tensor)
    assert out.shape == tuple(expected.shape)
    assert out.dtype == np.float64
    assert_close(out.data, expected.detach().numpy())

    upstream = seeded_normal(out.shape, seed)
    out.backward(upstream)
    expected.backward(torch.from_numpy(upstream))
    for i, (t, tt, r) in enumerate(zip(mine, theirs, needs_grad)):
        if not r:
            assert t.grad is None, f"input {i} needs no grad but got one"
            continue
        assert t.grad is not None, f"input {i} got no grad"
        assert t.grad.shape == t.shape and t.grad.dtype == t.dtype
        assert_close(t.grad, tt.grad.numpy())
    return out


def leaves(*arrays_in):
    return [mg.tensor(a, requires_grad=True) for a in arrays_in]


# ----- binary elementwise ops, with broadcasting ------------------------------------------
BINARY = {name: (op.ours, op.torch) for name, op in BINARY_OPS.items()}
NEEDS_GRAD_PAIRS = [(True, True), (True, False), (False, True)]


def draw_binary_inputs(data, name):
    shape_a, shape_b = data.draw(broadcastable_pair(), label="shapes")
    a = data.draw(arrays(shape_a), label="a")
    divisor = BINARY_OPS[name].domain == "positive"
    b = data.draw(nonzero_arrays(shape_b) if divisor else arrays(shape_b), label="b")
    return a, b


@pytest.mark.parametrize("name", BINARY)
@FAST
@given(data=st.data())
def test_binary_op_matches_torch_with_broadcasting(name, data):
    a, b = draw_binary_inputs(data, name)
    needs_grad = data.draw(st.sampled_from(NEEDS_GRAD_PAIRS), label="needs_grad")
    mg_fn, torch_fn = BINARY[name]
    check_against_torch(mg_fn, torch_fn, [a, b], needs_grad)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shape_a, shape_b", [
    ((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)), ((), (2, 3)),
    ((2, 3), ()), ((1,), (3, 1, 2)),
])
def test_binary_op_matches_torch_on_fixed_broadcasts(name, shape_a, shape_b):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2.0, shape_a)
    b = rng.uniform(0.5, 2.0, shape_b) * rng.choice([-1.0, 1.0], shape_b)
    check_against_torch(*BINARY[name], [a, b])


@pytest.mark.parametrize("name", BINARY)
@GRADCHECK
@given(data=st.data())
def test_binary_op_gradcheck(name, data):
    shape_a, shape_b = data.draw(broadcastable_pair(), label="shapes")
    if BINARY_OPS[name].ties:              # one distinct grid split in two: no ties
        size_a = int(np.prod(shape_a, dtype=np.int64))
        both = data.draw(distinct_arrays((size_a + int(np.prod(shape_b, dtype=np.int64)),)))
        a, b = both[:size_a].reshape(shape_a), both[size_a:].reshape(shape_b)
    else:
        a, b = draw_binary_inputs(data, name)
    assert mg.gradcheck(BINARY[name][0], leaves(a, b))


def test_maximum_splits_gradient_half_half_on_ties():
    a = np.array([[1.0, 2.0, 3.0], [0.0, 5.0, -1.0]])
    b = np.array([1.0, 0.0, 3.0])          # ties at (0, 0) and (0, 2), broadcast over rows
    ta, tb = leaves(a, b)
    ops.maximum(ta, tb).sum().backward()
    # torch.maximum's convention: each side of a tie gets half the gradient.
    assert_close(ta.grad, [[0.5, 1.0, 0.5], [0.0, 1.0, 0.0]])
    assert_close(tb.grad, [0.5 + 1.0, 0.0, 0.5 + 1.0])
    check_against_torch(ops.maximum, torch.maximum, [a, b])


@FAST
@given(data=st.data())
def test_maximum_with_many_ties_matches_torch(data):
    shape_a, shape_b = data.draw(broadcastable_pair(), label="shapes")
    few_values = st.sampled_from([-1.0, 0.0, 1.0])
    a = data.draw(hnp.arrays(np.float64, shape_a, elements=few_values))
    b = data.draw(hnp.arrays(np.float64, shape_b, elements=few_values))
    check_against_torch(ops.maximum, torch.maximum, [a, b])


def test_maximum_method_and_number_operand():
    x = np.array([-1.0, 0.5, 2.0])
    check_against_torch(lambda t: t.maximum(0.5),
                        lambda t: torch.maximum(t, torch.tensor(0.5, dtype=t.dtype)), [x])


# ----- unary elementwise ops --------------------------------------------------------------
UNARY = {                                   # name: (mg, torch, domain of the input)
    name: (op.ours, op.torch, positive_arrays if op.domain == "positive" else arrays)
    for name, op in UNARY_OPS.items()}


@pytest.mark.parametrize("name", UNARY)
@FAST
@given(data=st.data())
def test_unary_op_matches_torch(name, data):
    mg_fn, torch_fn, domain = UNARY[name]
    x = data.draw(domain(data.draw(shapes(0, 3), label="shape")), label="x")
    check_against_torch(mg_fn, torch_fn, [x])


@pytest.mark.parametrize("name", UNARY)
@GRADCHECK
@given(data=st.data())
def test_unary_op_gradcheck(name, data):
    mg_fn, _, domain = UNARY[name]
    shape = data.draw(shapes(0, 3), label="shape")
    distinct = UNARY_OPS[name].ties
    x = data.draw(distinct_arrays(shape) if distinct else domain(shape), label="x")
    assert mg.gradcheck(mg_fn, leaves(x))


def test_relu_gradient_at_zero_is_zero_like_torch():
    check_against_torch(lambda t: t.relu(), torch.relu, [np.array([-1.0, 0.0, 0.0, 2.0])])


def test_pow_takes_a_tensor_exponent_like_torch():
    # both get torch's gradient: d/dexponent = x ** e · log(x), 0 at x = 0 for e >= 0
    check_against_torch(lambda x, e: x ** e, lambda x, e: x ** e,
                        [np.array([0.5, 2.0, 0.0, 3.0]), np.array([2.0, -0.5, 2.0, 0.0])])


def test_pow_of_an_integer_tensor_by_a_float_is_float_like_torch():
    # the result must not be cast back to the integer dtype: 9 ** 0.5 is 3.0, 2 ** 0.5 is
    # not 1
    x = np.array([4, 9, 2])
    got = mg.tensor(x) ** 0.5
    expected = torch.tensor(x) ** 0.5
    assert got.dtype.kind == "f"
    np.testing.assert_allclose(got.data, expected.numpy(), rtol=1e-6)
    assert (mg.tensor(x) ** 2).dtype == np.int64          # an int exponent stays integral


# ----- reductions -------------------------------------------------------------------------
@st.composite
def shape_and_axis(draw, min_dims=1):
    """A shape and an axis argument: None, an int (maybe negative) or a tuple of distinct
    axes, each maybe written negative."""
    shape = draw(shapes(min_dims, 3, 4))
    ndim = len(shape)
    as_tuple = st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True)
    axes = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1), as_tuple))
    if isinstance(axes, list):
        negate = draw(st.lists(st.booleans(), min_size=len(axes), max_size=len(axes)))
        axes = tuple(a - ndim if neg else a for a, neg in zip(axes, negate))
    return shape, axes


def torch_dim(axis, ndim):
    return tuple(range(ndim)) if axis is None else axis


REDUCTIONS = {name: (op.ours, op.torch) for name, op in REDUCTION_OPS.items()}


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("keepdims", [False, True])
@FAST
@given(data=st.data())
def test_reduction_matches_torch(name, keepdims, data):
    shape, axis = data.draw(shape_and_axis(), label="shape, axis")
    x = data.draw(arrays(shape), label="x")    # repeated values: max ties included
    mg_fn, torch_fn = REDUCTIONS[name]
    check_against_torch(lambda t: mg_fn(t, axis, keepdims),
                        lambda t: torch_fn(t, axis, keepdims), [x])


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("keepdims", [False, True])
@GRADCHECK
@given(data=st.data())
def test_reduction_gradcheck(name, keepdims, data):
    shape, axis = data.draw(shape_and_axis(), label="shape, axis")
    x = data.draw(distinct_arrays(shape), label="x")
    mg_fn = REDUCTIONS[name][0]
    assert mg.gradcheck(lambda t: mg_fn(t, axis, keepdims), leaves(x))


@pytest.mark.parametrize("keepdims", [False, True])
@FAST
@given(data=st.data())
def test_amax_with_many_ties_spreads_gradient_like_torch(keepdims, data):
    shape, axis = data.draw(shape_and_axis(), label="shape, axis")
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1.0, 2.0])))
    check_against_torch(lambda t: t.amax(axis=axis, keepdims=keepdims),
                        lambda t: torch.amax(t, dim=torch_dim(axis, len(shape)),
                                             keepdim=keepdims), [x])


def test_amax_ties_share_the_gradient_evenly():
    x = mg.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
    x.amax(axis=1).backward(np.array([1.0, 3.0]))
    assert_close(x.grad, [[0.0, 0.5, 0.5], [1.0, 1.0, 1.0]])


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_of_a_zero_dim_tensor(name):
    check_against_torch(lambda t: REDUCTIONS[name][0](t, None, False),
                        lambda t: REDUCTIONS[name][1](t, None, False), [np.array(1.5)])


# ----- shape ops --------------------------------------------------------------------------
@st.composite
def shape_and_new_shape(draw):
    shape = draw(shapes(0, 3, 4))
    size = int(np.prod(shape, dtype=np.int64))
    candidates = [(size,), (-1,), tuple(reversed(shape)), (1,) + shape + (1,), (size, 1),
                  (1, -1)]
    if len(shape) >= 1:
        candidates += [(-1, shape[-1]), shape[:1] + (-1,)]
    return shape, draw(st.sampled_from(candidates))


@FAST
@given(data=st.data())
def test_reshape_matches_torch(data):
    shape, new_shape = data.draw(shape_and_new_shape(), label="shape, new_shape")
    x = data.draw(arrays(shape), label="x")
    check_against_torch(lambda t: t.reshape(new_shape), lambda t: t.reshape(new_shape), [x])
    if new_shape:                          # torch has no reshape() without arguments
        check_against_torch(lambda t: t.reshape(*new_shape), lambda t: t.reshape(*new_shape),
                            [x])


@FAST
@given(data=st.data())
def test_permute_matches_torch(data):
    shape = data.draw(shapes(1, 4, 3), label="shape")
    ndim = len(shape)
    axes = data.draw(st.permutations(range(ndim)), label="axes")
    negate = data.draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
    axes = tuple(a - ndim if neg else a for a, neg in zip(axes, negate))
    x = data.draw(arrays(shape), label="x")
    check_against_torch(lambda t: t.permute(axes), lambda t: t.permute(axes), [x])
    check_against_torch(lambda t: t.permute(*axes), lambda t: t.permute(*axes), [x])


@FAST
@given(data=st.data())
def test_transpose_and_T_match_torch(data):
    shape = data.draw(shapes(2, 4, 3), label="shape")
    ndim = len(shape)
    axis0 = data.draw(st.integers(-ndim, ndim - 1), label="axis0")
    axis1 = data.draw(st.integers(-ndim, ndim - 1), label="axis1")
    x = data.draw(arrays(shape), label="x")
    check_against_torch(lambda t: t.transpose(axis0, axis1),
                        lambda t: t.transpose(axis0, axis1), [x])
    check_against_torch(lambda t: t.transpose(), lambda t: t.transpose(-2, -1), [x])
    check_against_torch(lambda t: t.T, lambda t: t.permute(*reversed(range(ndim))), [x])


@st.composite
def shape_and_expanded(draw):
    """A shape with some sides 1, and a target: 1-sides stretched, other sides kept or
    written -1, maybe new leading dims."""
    shape = draw(shapes(0, 3, 3))
    target = []
    for side in shape:
        if side == 1:
            target.append(draw(st.integers(1, 4)))
        else:
            target.append(draw(st.sampled_from([side, -1])))
    lead = draw(st.lists(st.integers(1, 3), max_size=2))
    return shape, tuple(lead) + tuple(target)


@FAST
@given(data=st.data())
def test_expand_matches_torch(data):
    shape, target = data.draw(shape_and_expanded(), label="shape, target")
    x = data.draw(arrays(shape), label="x")
    check_against_torch(lambda t: t.expand(target), lambda t: t.expand(target), [x])
    if target:                             # torch has no expand() without arguments
        check_against_torch(lambda t: t.expand(*target), lambda t: t.expand(*target), [x])


def test_expand_rejects_minus_one_in_a_new_leading_dim():
    # torch: "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing
    # dimension"; there is no size to keep for a dim the tensor does not have.
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises((ValueError, RuntimeError)):
        x.expand(-1, 3)


@GRADCHECK
@given(data=st.data())
def test_shape_ops_gradcheck(data):
    shape, new_shape = data.draw(shape_and_new_shape(), label="shape, new_shape")
    x = leaves(data.draw(arrays(shape), label="x"))
    assert mg.gradcheck(lambda t: t.reshape(new_shape), x)
    assert mg.gradcheck(lambda t: t.T, x)
    shape, target = data.draw(shape_and_expanded(), label="shape, target")
    assert mg.gradcheck(lambda t: t.expand(target), leaves(data.draw(arrays(shape))))


# ----- indexing ---------------------------------------------------------------------------
def _torch_index(index):
    def convert(part):
        return torch.from_numpy(part) if isinstance(part, np.ndarray) else part
    return tuple(convert(p) for p in index) if isinstance(index, tuple) else convert(index)


GETITEM_INDICES = {
    "int": 1,
    "negative_int": -1,
    "slice": slice(1, 3),
    "step_slice": slice(None, None, 2),
    "int_in_tuple": (slice(None), 2),
    "ellipsis": (Ellipsis, 0),
    "none": (None, slice(1, None), Ellipsis),
    "none_in_middle": (1, None, slice(0, 2)),
    "mixed_basic": (slice(None, None, 2), slice(1, 4), -1),
    "int_array_repeated": np.array([0, 2, 2, -4]),
    "int_array_2d": np.array([[0, 3], [3, 3]]),
    "int_array_and_slice": (np.array([3, 0, 3]), slice(1, 3)),
    "slice_and_int_array": (slice(None), np.array([1, 1, 4])),
    "two_int_arrays": (np.array([0, 0, 2]), slice(None), np.array([1, 1, 0])),
    "bool_mask": np.array([True, False, True, True]),
}


@pytest.mark.parametrize("name", GETITEM_INDICES)
def test_getitem_matches_torch(name):
    index = GETITEM_INDICES[name]
    x = np.random.default_rng(2).standard_normal((4, 5, 3))
    check_against_torch(lambda t: t[index], lambda t: t[_torch_index(index)], [x])


@pytest.mark.parametrize("index", [slice(None, None, -1), (slice(None, None, -2), 1)])
def test_getitem_negative_step_refused_as_torch(index):
    x = np.random.default_rng(3).standard_normal((5, 3))
    for t in (torch.from_numpy(x), mg.tensor(x)):            # flip reverses, in both
        with pytest.raises(ValueError, match="step must be greater than zero"):
            t[index]


@FAST
@given(data=st.data())
def test_embedding_lookup_accumulates_repeated_rows_like_torch(data):
    vocab, dim = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    ids_shape = data.draw(shapes(1, 2, 4), label="ids shape")     # (B,) or (B, T)
    ids = data.draw(hnp.arrays(np.int64, ids_shape, elements=st.integers(0, vocab - 1)))
    weight = data.draw(arrays((vocab, dim)), label="weight")
    check_against_torch(lambda w: w[ids], lambda w: w[torch.from_numpy(ids)], [weight])
    check_against_torch(lambda w: w[mg.tensor(ids)],                  # ids as an int Tensor
                        lambda w: torch.nn.functional.embedding(torch.from_numpy(ids), w),
                        [weight])


def test_embedding_lookup_repeated_ids_sum_their_gradients():
    weight = mg.tensor(np.zeros((3, 2)), requires_grad=True)
    ids = np.array([[0, 2, 0], [0, 1, 2]])                       # row 0 three times
    weight[ids].sum().backward()
    assert_close(weight.grad, [[3.0, 3.0], [1.0, 1.0], [2.0, 2.0]])


@pytest.mark.parametrize("row_shape", [(), (7,), (2, 3)])
def test_a_batch_of_ids_sums_like_add_at_and_torch(row_shape):
    """640 ids (past the sorted-sum path's threshold), repeated and negative, into weights
    of 1-D, 2-D and 3-D rows: the same gradient as np.add.at and torch."""
    rng = np.random.default_rng(3)
    ids = rng.integers(-11, 11, (16, 40))
    weight, g = rng.standard_normal((11, *row_shape)), rng.standard_normal((16, 40, *row_shape))
    ours = mg.tensor(weight, requires_grad=True)
    ours[ids].backward(g)
    expected = np.zeros_like(weight)
    np.add.at(expected, ids, g)
    theirs = torch.tensor(weight, requires_grad=True)
    theirs[torch.from_numpy(ids)].backward(torch.from_numpy(g))
    np.testing.assert_allclose(ours.grad, expected, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-13, atol=1e-13)


@GRADCHECK
@given(data=st.data())
def test_getitem_gradcheck(data):
    shape = data.draw(shapes(1, 3, 4), label="shape")
    x = leaves(data.draw(arrays(shape), label="x"))
    ids = data.draw(hnp.arrays(np.int64, (3,), elements=st.integers(0, shape[0] - 1)))
    assert mg.gradcheck(lambda t: t[ids], x)
    assert mg.gradcheck(lambda t: t[..., :1], x)


# ----- concatenate and stack --------------------------------------------------------------
@st.composite
def tensors_to_join(draw, stack):
    """Arrays to concatenate (sides along ``axis`` may differ) or stack (same shape), the
    axis (maybe negative), and which of them require grad (at least one)."""
    shape = draw(shapes(1, 3, 3))
    ndim = len(shape) + (1 if stack else 0)
    axis = draw(st.integers(-ndim, ndim - 1))
    count = draw(st.integers(1, 3))
    pieces = []
    for _ in range(count):
        piece_shape = list(shape)
        if not stack:
            piece_shape[axis] = draw(st.integers(1, 3))
        pieces.append(draw(arrays(tuple(piece_shape))))
    needs_grad = draw(st.lists(st.booleans(), min_size=count, max_size=count)
                      .filter(any))
    return pieces, axis, needs_grad


@FAST
@given(joined=tensors_to_join(stack=False))
def test_concatenate_matches_torch(joined):
    pieces, axis, needs_grad = joined
    check_against_torch(lambda *ts: ops.concatenate(ts, axis),
                        lambda *ts: torch.cat(ts, dim=axis), pieces, needs_grad)


@FAST
@given(joined=tensors_to_join(stack=True))
def test_stack_matches_torch(joined):
    pieces, axis, needs_grad = joined
    check_against_torch(lambda *ts: ops.stack(ts, axis),
                        lambda *ts: torch.stack(ts, dim=axis), pieces, needs_grad)


@pytest.mark.parametrize("shapes", [[(2, 3), (3, 2)], [(6,), (2, 3)], [(2, 3), (2, 3), (2,)]])
def test_stack_refuses_tensors_of_different_shapes_as_torch(shapes):
    # reshaping each to the first's shape once let (2, 3) and (3, 2) stack into (2, 2, 3)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.stack([torch.ones(s) for s in shapes])
    with pytest.raises(ValueError, match=r"equal size, but got shape \(2, 3\) at entry 0|"
                                         r"equal size, but got shape \(6,\) at entry 0"):
        ops.stack([mg.ones(s, requires_grad=True) for s in shapes])


@GRADCHECK
@given(data=st.data())
def test_concatenate_and_stack_gradcheck(data):
    pieces, axis, _ = data.draw(tensors_to_join(stack=False))
    assert mg.gradcheck(lambda *ts: ops.concatenate(ts, axis), leaves(*pieces))
    pieces, axis, _ = data.draw(tensors_to_join(stack=True))
    assert mg.gradcheck(lambda *ts: ops.stack(ts, axis), leaves(*pieces))


# ----- matmul -----------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3, 4), (4, 2)),                   # 2-D
    ((2, 3, 4), (2, 4, 5)),             # batched 3-D
    ((2, 1, 3, 4), (5, 4, 2)),          # broadcast batch dims
    ((1, 3, 4), (2, 4, 5)),
    ((3, 4), (2, 4, 5)),                # 2-D with a batched right side
    ((4,), (4, 3)),                     # 1-D @ 2-D
    ((3, 4), (4,)),                     # 2-D @ 1-D
    ((4,), (4,)),                       # 1-D @ 1-D: a scalar
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 3)),
]


def _matmul_id(shapes_ab):
    return "@".join("x".join(map(str, shape)) for shape in shapes_ab)


MATMUL_IDS = [_matmul_id(pair) for pair in MATMUL_SHAPES]


@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES, ids=MATMUL_IDS)
def test_matmul_matches_torch(shape_a, shape_b):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    for needs_grad in NEEDS_GRAD_PAIRS:
        check_against_torch(lambda x, y: x @ y, torch.matmul, [a, b], needs_grad)
    check_against_torch(ops.matmul, torch.matmul, [a, b])


@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES, ids=MATMUL_IDS)
def test_matmul_gradcheck(shape_a, shape_b):
    rng = np.random.default_rng(5)
    assert mg.gradcheck(ops.matmul, leaves(rng.standard_normal(shape_a),
                                           rng.standard_normal(shape_b)))


@st.composite
def matmul_shapes(draw):
    """Operands for a @ b: broadcastable batch dims, or a 1-D operand on either side."""
    batch_a, batch_b = draw(broadcastable_pair(0, 2, 3))
    n, k, m = (draw(st.integers(1, 4)) for _ in range(3))
    shape_a = (k,) if draw(st.booleans()) else batch_a + (n, k)
    shape_b = (k,) if draw(st.booleans()) else batch_b + (k, m)
    return shape_a, shape_b


@FAST
@given(data=st.data())
def test_matmul_matches_torch_on_drawn_shapes(data):
    shape_a, shape_b = data.draw(matmul_shapes(), label="shapes")
    a, b = data.draw(arrays(shape_a), label="a"), data.draw(arrays(shape_b), label="b")
    check_against_torch(lambda x, y: x @ y, torch.matmul, [a, b])


# ----- Python operators -------------------------------------------------------------------
CONST = np.array([[0.5, -1.5, 2.0, 1.0]])                            # (1, 4): broadcasts
MATRIX = np.array([[1.0, 0.5], [-2.0, 1.5], [0.25, 3.0], [1.0, -1.0]])  # (4, 2)
OPERATORS = {
    "tensor + int": (lambda a: a + 2, lambda a: a + 2),
    "int + tensor": (lambda a: 2 + a, lambda a: 2 + a),
    "int - tensor": (lambda a: 2 - a, lambda a: 2 - a),
    "tensor - float": (lambda a: a - 0.5, lambda a: a - 0.5),
    "tensor * ndarray": (lambda a: a * CONST, lambda a: a * torch.from_numpy(CONST)),
    "ndarray * tensor": (lambda a: CONST * a, lambda a: torch.from_numpy(CONST) * a),
    "ndarray + tensor": (lambda a: CONST + a, lambda a: torch.from_numpy(CONST) + a),
    "ndarray - tensor": (lambda a: CONST - a, lambda a: torch.from_numpy(CONST) - a),
    "ndarray / tensor": (lambda a: CONST / a, lambda a: torch.from_numpy(CONST) / a),
    "neg": (lambda a: -a, lambda a: -a),
    "pow": (lambda a: a ** 2, lambda a: a ** 2),
    "tensor / int": (lambda a: a / 3, lambda a: a / 3),
    "int / tensor": (lambda a: 3 / a, lambda a: 3 / a),
    "float * tensor": (lambda a: 2.5 * a, lambda a: 2.5 * a),
    "tensor @ ndarray": (lambda a: a @ MATRIX, lambda a: a @ torch.from_numpy(MATRIX)),
    "ndarray @ tensor": (lambda a: MATRIX.T @ a.T, lambda a: torch.from_numpy(MATRIX.T) @ a.T),
}


@pytest.mark.parametrize("name", OPERATORS)
def test_python_operator_gives_tensor_with_torch_values_and_grads(name):
    a = np.array([[1.0, -2.0, 0.5, 3.0], [-0.5, 1.5, 2.0, -1.0], [0.75, 1.0, -3.0, 2.5]])
    check_against_torch(*OPERATORS[name], [a])


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "matmul"])
def test_python_operators_on_two_tensors(name):
    fns = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
           "div": lambda x, y: x / y, "matmul": lambda x, y: x @ y.T}
    rng = np.random.default_rng(6)
    a, b = rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(0.5, 2.0, (3, 4))
    check_against_torch(fns[name], fns[name], [a, b])


def test_ndarray_on_the_left_defers_to_the_tensor():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    for result in (np.ones(2) + a, np.ones(2) - a, np.ones(2) * a, np.ones(2) / a):
        assert isinstance(result, mg.Tensor) and result.grad_fn is not None


# ----- dtype rules ------------------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    lambda a: a * 2.0, lambda a: 2.0 * a, lambda a: a + 1, lambda a: a - 0.5,
    lambda a: 1.5 - a, lambda a: a / 3, lambda a: 3 / a, lambda a: a ** 2, lambda a: -a,
    lambda a: a.maximum(0.5),
])
def test_python_number_does_not_widen_float32(expr):
    a = mg.tensor(np.array([1.0, 2.0, 4.0], dtype=np.float32), requires_grad=True)
    out = expr(a)
    assert out.dtype == np.float32
    out.sum().backward()
    assert a.grad.dtype == np.float32


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum"])
def test_float32_with_float64_promotes_and_each_grad_keeps_its_dtype(name):
    mg_fn, torch_fn = BINARY[name]
    rng = np.random.default_rng(7)
    a32 = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    b64 = rng.uniform(0.5, 2.0, (4,))
    a, b = mg.tensor(a32, requires_grad=True), mg.tensor(b64, requires_grad=True)
    out = mg_fn(a, b)
    assert out.dtype == np.float64
    ta, tb = torch.tensor(a32, requires_grad=True), torch.tensor(b64, requires_grad=True)
    expected = torch_fn(ta, tb)
    assert_close(out.data, expected.detach().numpy())
    upstream = seeded_normal(out.shape)
    out.backward(upstream)
    expected.backward(torch.from_numpy(upstream))
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64
    assert_close(a.grad, ta.grad.numpy(), rtol=1e-6, atol=1e-6)
    assert_close(b.grad, tb.grad.numpy())


def _plus_y(f):
    return lambda x, y: f(x) + y


# every binary op on (x, y), every unary op on x, added to y; inputs in [0.5, 2]. (ours, torch)
FLOAT16_OPS = {**{name: (op.ours, op.torch) for name, op in BINARY_OPS.items()},
               **{name: (_plus_y(op.ours), _plus_y(op.torch)) for name, op in UNARY_OPS.items()},
               "relu_kink": (lambda x, y: (x - 1.0).relu() + y,) * 2,
               "neg_pow": (lambda x, y: -(x ** 2) / y,) * 2}


@pytest.mark.parametrize("name", FLOAT16_OPS)
def test_float16_elementwise_ops(name):
    fn, torch_fn = FLOAT16_OPS[name]
    rng = np.random.default_rng(8)
    x, y = rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(0.5, 2.0, (4,))
    a = mg.tensor(x.astype(np.float16), requires_grad=True)
    b = mg.tensor(y.astype(np.float16), requires_grad=True)
    out = fn(a, b)
    assert out.dtype == np.float16
    # Reference: the same float16-rounded inputs, computed in float64 by torch.
    ta = torch.tensor(a.detach().numpy().astype(np.float64), requires_grad=True)
    tb = torch.tensor(b.detach().numpy().astype(np.float64), requires_grad=True)
    expected = torch_fn(ta, tb)
    assert_close(out.data, expected.detach().numpy(), rtol=1e-2, atol=1e-2)
    out.backward(np.ones(out.shape, dtype=np.float16))
    expected.backward(torch.ones(expected.shape, dtype=torch.float64))
    assert a.grad.dtype == np.float16 and b.grad.dtype == np.float16
    assert_close(a.grad, ta.grad.numpy(), rtol=1e-2, atol=1e-2)
    assert_close(b.grad, tb.grad.numpy(), rtol=1e-2, atol=2e-2)


# ----- split --------------------------------------------------------------------------------
@pytest.mark.parametrize("sections, axis", [(2, 0), (3, 1), ([1, 4, 2], -1), (7, 2), (4, -1)])
def test_split_matches_torch_forward_and_backward(sections, axis):
    x = seeded_normal((3, 5, 7), 4)
    weights = [seeded_normal((3, 5, 7), 5 + i) for i in range(7)]

    def joined(pieces, xp):
        # every piece used, each weighted differently, so a mix-up of pieces shows
        return sum((p * xp(w[tuple(slice(0, n) for n in p.shape)])).sum()
                   for p, w in zip(pieces, weights))

    check_against_torch(
        lambda t: joined(t.split(sections, axis=axis), lambda a: a),
        lambda t: joined(t.split(sections, dim=axis), torch.from_numpy), [x])


def test_split_is_one_node_with_views_and_zero_gradient_for_an_unused_piece():
    x = mg.tensor(np.arange(12.0).reshape(2, 6), requires_grad=True)
    a, b, c = x.split(2, axis=1)
    assert a.grad_fn is b.grad_fn is c.grad_fn
    np.testing.assert_array_equal(b.data, [[2, 3], [8, 9]])
    assert np.shares_memory(b.data, x.data)
    (b * 3).sum().backward()
    np.testing.assert_array_equal(x.grad, [[0, 0, 3, 3, 0, 0]] * 2)


def test_split_rejects_bad_sections_and_axis_naming_them():
    x = mg.tensor(np.zeros((2, 6)))
    with pytest.raises(ValueError, match="adding up to the size 6"):
        x.split([2, 3], axis=1)
    with pytest.raises(ValueError, match="split_size must be a positive int"):
        x.split(0, axis=1)
    with pytest.raises(IndexError, match=r"axis 2 is out of range .* \(expected -2 <= axis < 2\)"):
        x.split(2, axis=2)
    with pytest.raises(TypeError, match="axis must be an int"):
        x.split(2, axis=True)


def test_attention_projects_qkv_once():
    from microgradnorm import nn
    attention = nn.CausalSelfAttention(8, 2)
    y = attention(mg.randn(2, 3, 8))
    # qkv and proj: one Linear node each, qkv's output split into q, k and v
    assert mg.graph_stats(y).by_op["Linear"] == 2

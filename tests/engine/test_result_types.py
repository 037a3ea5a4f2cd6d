"""The ops with two results return torch's named tuples (``mg.return_types``): x.max(dim),
x.min(dim), median, mode, sort, topk, kthvalue and aminmax, against PyTorch in float64:
values, int64 indices, shapes, keepdim, negative dims, ties, NaN, empty and 0-d tensors,
and the gradient through ``values``. Also the overloads that stay values: x.max() (no dim),
x.max(other) and mg.max(a, b) (elementwise), amax/amin."""

import numpy as np
import pytest
import torch

import microgradnorm as mg

NAN = np.nan


def both(array, requires_grad=True):
    array = np.asarray(array)
    grad = requires_grad and array.dtype.kind == "f"
    return mg.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad)


def close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours.detach().numpy(), np.float64),
                               np.asarray(theirs.detach().numpy(), np.float64),
                               rtol=0, atol=1e-12)


def check_grad(ours, theirs, x, xt, seed=0):
    """Back-propagate one random upstream through both outputs; compare x's gradients."""
    upstream = np.random.default_rng(seed).standard_normal(ours.shape)
    ours.backward(upstream)
    theirs.backward(torch.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=0, atol=1e-12)


def check_result(ours, theirs):
    """Same named tuple: class name, fields, shapes, values; int64 indices equal to torch's."""
    assert isinstance(ours, tuple) and len(ours) == 2
    assert type(ours).__name__ == type(theirs).__name__
    assert ours._fields == tuple(f for f in ("values", "indices", "min", "max")
                                 if hasattr(theirs, f))
    for mine, want in zip(ours, theirs):
        assert mine.shape == tuple(want.shape)
        close(mine, want)
    if "indices" in ours._fields:
        assert ours.indices.dtype == np.int64 and ours.indices.grad_fn is None
        assert ours.indices.tolist() == theirs.indices.tolist()


# ----- the named tuples ---------------------------------------------------------------------
CALLS = {
    "max": lambda t: t.max(1), "min": lambda t: t.min(dim=1), "median": lambda t: t.median(1),
    "mode": lambda t: t.mode(1), "sort": lambda t: t.sort(1), "topk": lambda t: t.topk(2, 1),
    "kthvalue": lambda t: t.kthvalue(2, 1), "aminmax": lambda t: t.aminmax(dim=1),
}


@pytest.mark.parametrize("name", CALLS)
def test_result_is_a_named_tuple_that_unpacks_and_indexes_as_torchs(name):
    x, xt = both(np.array([[4.0, 1.0, 3.0], [2.0, 6.0, 5.0]]))
    ours, theirs = CALLS[name](x), CALLS[name](xt)
    check_result(ours, theirs)
    first, second = ours                                   # unpacking gives both
    assert first is ours[0] and second is ours[1] and ours[-1] is second
    fields = ("min", "max") if name == "aminmax" else ("values", "indices")
    assert (getattr(ours, fields[0]), getattr(ours, fields[1])) == (first, second)
    assert type(ours) is getattr(mg.return_types, name)
    # torch's layout: the qualified class name, then one field a line
    text = repr(ours)
    assert text.startswith(f"microgradnorm.return_types.{name}(\n{fields[0]}=tensor(")
    assert f",\n{fields[1]}=tensor(" in text and repr(theirs).count("\n") >= 2


# ----- max / min over a dim -----------------------------------------------------------------
@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_match_torch_values_indices_and_gradient(fn, dim, keepdim):
    x, xt = both(np.random.default_rng(0).standard_normal((3, 4, 5)))
    ours = getattr(x, fn)(dim, keepdim=keepdim)
    theirs = getattr(xt, fn)(dim, keepdim=keepdim)
    check_result(ours, theirs)
    check_grad(ours.values, theirs.values, x, xt)
    # the function form and the NumPy names, as torch accepts them
    alias = getattr(mg, fn)(x, dim=dim, keepdims=keepdim)
    assert alias.indices.tolist() == theirs.indices.tolist()
    assert getattr(x, fn)(axis=dim, keepdim=keepdim).indices.tolist() == \
        theirs.indices.tolist()


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_ties_pick_the_first_and_send_it_the_whole_gradient(fn):
    data = np.array([[3.0, 1.0, 3.0, 3.0], [1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 0.0, 2.0]])
    for dim in (0, 1):
        x, xt = both(data)
        ours, theirs = getattr(x, fn)(dim), getattr(xt, fn)(dim)
        check_result(ours, theirs)
        check_grad(ours.values, theirs.values, x, xt)     # no sharing, unlike amax


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_dim_nan_wins_and_its_first_index_is_returned(fn):
    data = np.array([[1.0, NAN, 3.0, NAN], [2.0, 5.0, -1.0, 0.0], [NAN, NAN, NAN, NAN]])
    for dim in (0, 1):
        x, xt = both(data)
        ours, theirs = getattr(x, fn)(dim), getattr(xt, fn)(dim)
        np.testing.assert_array_equal(ours.values.detach().numpy(),
                                      theirs.values.detach().numpy())     # NaN in place
        assert ours.indices.tolist() == theirs.indices.tolist()
        check_grad(ours.values, theirs.values, x, xt)


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_dim_of_integers_and_bools(fn):
    for data in (np.array([[3, 7, 7], [-2, -2, 5]]), np.array([[True, False, True]])):
        x, xt = both(data)
        ours, theirs = getattr(x, fn)(1), getattr(xt, fn)(1)
        assert ours.values.dtype == data.dtype and ours.values.grad_fn is None
        assert ours.values.tolist() == theirs.values.tolist()
        assert ours.indices.tolist() == theirs.indices.tolist()


def test_max_without_a_dim_stays_a_value_and_shares_ties_and_nan_as_torch():
    for data in ([[1.0, 3.0], [3.0, 2.0]], [1.0, NAN, 3.0, NAN]):
        for fn in ("max", "min"):
            x, xt = both(np.array(data))
            ours, theirs = getattr(x, fn)(), getattr(xt, fn)()
            assert isinstance(ours, mg.Tensor) and ours.shape == ()
            np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
            check_grad(ours, theirs, x, xt)       # ties share; NaN: shared by the NaNs


def test_amax_amin_stay_values_with_their_nan_gradient():
    x, xt = both(np.array([[1.0, NAN, 3.0], [3.0, 3.0, 0.0]]))
    for fn in ("amax", "amin"):
        ours, theirs = getattr(x, fn)(dim=1), getattr(xt, fn)(dim=1)
        assert isinstance(ours, mg.Tensor)
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
        x.grad, xt.grad = None, None
        check_grad(ours, theirs, x, xt)           # NaN rows: NaN everywhere, as torch


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_of_another_tensor_is_elementwise(fn):
    a, at = both(np.array([[1.0, 5.0, 2.0], [4.0, 0.0, 2.0]]))
    b, bt = both(np.array([3.0, 2.0, 2.0]))
    ours, theirs = getattr(a, fn)(b), getattr(at, fn)(bt)
    close(ours, theirs)
    check_grad(ours, theirs, a, at)
    np.testing.assert_allclose(b.grad.numpy(), bt.grad.numpy(), rtol=0, atol=1e-12)
    close(getattr(mg, fn)(a, b), getattr(torch, fn)(at, bt))


def test_max_refuses_what_torch_refuses():
    x = mg.tensor(np.ones((2, 3)))
    with pytest.raises(TypeError, match="amax"):
        x.max(dim=(0, 1))                         # several dims: amax
    with pytest.raises(TypeError, match="keepdim needs a dim"):
        x.min(keepdim=True)
    with pytest.raises(TypeError, match="both dim"):
        x.max(1, axis=1)
    with pytest.raises(IndexError, match="out of range"):
        x.max(2)
    with pytest.raises(TypeError, match="expected a Tensor"):
        mg.max(np.ones(3), 0)


# ----- median, kthvalue, mode ---------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name", ["median", "kthvalue", "mode", "sort", "topk"])
def test_order_statistics_match_torch_on_distinct_values(name, dim, keepdim):
    # distinct values: every index is determined, so torch's must be equal
    data = np.random.default_rng(1).permutation(30).reshape(5, 6) / 7.0
    x, xt = both(data)
    call = {"median": lambda t: t.median(dim, keepdim=keepdim),
            "kthvalue": lambda t: t.kthvalue(3, dim, keepdim=keepdim),
            "mode": lambda t: t.mode(dim, keepdim=keepdim),     # all once: the smallest
            "sort": lambda t: t.sort(dim, descending=keepdim),
            "topk": lambda t: t.topk(3, dim, largest=keepdim)}[name]
    ours, theirs = call(x), call(xt)
    check_result(ours, theirs)
    check_grad(ours.values, theirs.values, x, xt)


def test_median_is_the_lower_middle_value():
    x, xt = both(np.array([[4.0, 1.0, 3.0, 2.0], [9.0, -1.0, 5.0, 7.0]]))
    check_result(x.median(1), xt.median(1))
    ours, theirs = x.median(), xt.median()                      # every element: 3.0
    assert isinstance(ours, mg.Tensor) and ours.shape == () and float(ours) == 3.0
    close(ours, theirs)
    check_grad(ours, theirs, x, xt)


def test_median_ties_share_without_dim_and_pick_one_index_with_a_dim():
    data = np.array([[2.0, 1.0, 2.0, 1.0, 2.0, 1.0], [2.0, 2.0, 3.0, 1.0, 2.0, 0.0]])
    x, xt = both(data)
    ours, theirs = x.median(), xt.median()
    close(ours, theirs)
    check_grad(ours, theirs, x, xt)               # spread over every element equal to it
    x, xt = both(data)
    ours, theirs = x.median(1), xt.median(1)
    close(ours.values, theirs.values)
    # torch leaves which of equal values unspecified; ours: the stable sort's middle
    rows = np.arange(len(data))
    assert np.array_equal(data[rows, ours.indices.numpy()], ours.values.detach().numpy())
    assert ours.indices.tolist() == [5, 0]                      # as torch's, here
    ours.values.sum().backward()
    assert x.grad.numpy().sum(axis=1).tolist() == [1.0, 1.0]    # one element each


def test_median_and_kthvalue_nan_as_torch():
    data = np.array([[3.0, 1.0, NAN, 1.0, NAN], [0.0, 2.0, 1.0, 5.0, 4.0]])
    x, xt = both(data)
    ours, theirs = x.median(1), xt.median(1)
    np.testing.assert_array_equal(ours.values.detach().numpy(), theirs.values.detach().numpy())
    assert ours.indices.tolist() == theirs.indices.tolist()         # the first NaN
    check_grad(ours.values, theirs.values, x, xt)
    for k in (1, 3, 4, 5):                                          # NaN as the largest
        ours, theirs = mg.kthvalue(mg.tensor(data), k), torch.kthvalue(torch.tensor(data), k)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        assert ours.indices[1].item() == theirs.indices[1].item()
    x, xt = both(np.array([[1.0, NAN, 3.0, NAN]]))
    ours, theirs = x.median(), xt.median()
    assert np.isnan(ours.item()) and np.isnan(theirs.item())
    check_grad(ours, theirs, x, xt)               # to the NaNs, as torch's


def test_kthvalue_ties_take_torchs_index_and_check_k():
    data = np.array([[2.0, 1.0, 2.0, 1.0, 2.0, 1.0]])
    x, xt = both(data)
    for k in range(1, 7):
        ours, theirs = x.kthvalue(k), xt.kthvalue(k)
        close(ours.values, theirs.values)
        assert ours.indices.item() == theirs.indices.item()     # its quickselect's place
    with pytest.raises(ValueError, match="k must be an int in"):
        x.kthvalue(7)
    with pytest.raises(ValueError, match="k must be an int in"):
        x.kthvalue(0)


@pytest.mark.parametrize("data", [
    [[1.0, 2.0, 1.0, 2.0]], [[3.0, 1.0, 3.0, 2.0, 1.0]], [[5.0, 5.0, 5.0, 0.0]],
    [[0.5, -1.0, 0.5, -1.0, 0.5, 2.0, 2.0, 2.0, -1.0, 7.0, 7.0, 7.0, 7.0, 0.0, 0.0, 0.0]],
    [[2, 4, 4, 2, 9], [1, 1, 3, 3, 3]],
])
def test_mode_ties_as_torch_the_smallest_value_at_its_last_place(data):
    # torch's CPU kernel gives these for slices of up to 16 (its sort is stable there)
    x, xt = both(np.array(data))
    ours, theirs = x.mode(), xt.mode()
    check_result(ours, theirs)
    if x.is_floating_point():
        check_grad(ours.values, theirs.values, x, xt)
    ours, theirs = x.mode(0, keepdim=True), xt.mode(0, keepdim=True)
    check_result(ours, theirs)


# ----- sort / topk / aminmax ----------------------------------------------------------------
def test_sort_and_topk_put_nan_last_or_first_as_torch():
    data = np.array([[3.0, 1.0, NAN, 1.0, NAN, 0.0]])
    for call in (lambda t: t.sort(dim=1, stable=True),
                 lambda t: t.sort(dim=1, descending=True, stable=True),
                 lambda t: t.topk(3, 1), lambda t: t.topk(3, 1, largest=False)):
        x, xt = both(data)
        ours, theirs = call(x), call(xt)
        np.testing.assert_array_equal(ours.values.detach().numpy(),
                                      theirs.values.detach().numpy())
        # a stable sort fixes the order of equal values; topk's is its selection's, torch's
        # ([5, 3, 1] for the smallest 3 here, where a stable order gives [5, 1, 3])
        assert ours.indices.tolist() == theirs.indices.tolist()
        check_grad(ours.values, theirs.values, x, xt)


@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_aminmax_matches_torch_and_shares_ties_as_amin_amax(dim, keepdim):
    data = np.array([[1.0, 3.0, 3.0], [2.0, 1.0, 0.5]])
    x, xt = both(data)
    kwargs = {"keepdim": keepdim} if dim is None else {"dim": dim, "keepdim": keepdim}
    ours, theirs = x.aminmax(**kwargs), xt.aminmax(**kwargs)
    check_result(ours, theirs)
    lo, hi = ours
    check_grad(lo * 2.0 + hi, theirs.min * 2.0 + theirs.max, x, xt)
    assert mg.aminmax(x, **kwargs).max.tolist() == theirs.max.tolist()


# ----- empty and 0-d ------------------------------------------------------------------------
EMPTY_DIM = {
    "max": lambda t: t.max(0), "min": lambda t: t.min(0), "median": lambda t: t.median(0),
    "mode": lambda t: t.mode(0), "kthvalue": lambda t: t.kthvalue(1, 0),
    "aminmax": lambda t: t.aminmax(dim=0),
}


@pytest.mark.parametrize("name", EMPTY_DIM)
def test_an_empty_reduced_dim_is_an_index_error_as_torchs(name):
    with pytest.raises(IndexError, match="non-zero size"):
        EMPTY_DIM[name](torch.zeros(0, 3))
    with pytest.raises(IndexError, match="empty dim"):
        EMPTY_DIM[name](mg.tensor(np.zeros((0, 3))))


@pytest.mark.parametrize("name", ["max", "min", "median", "mode", "sort", "topk", "kthvalue"])
def test_reducing_a_full_dim_of_an_empty_tensor_gives_empty_results(name):
    call = {"max": lambda t: t.max(1), "min": lambda t: t.min(1, keepdim=True),
            "median": lambda t: t.median(1), "mode": lambda t: t.mode(1),
            "sort": lambda t: t.sort(0), "topk": lambda t: t.topk(0, 0),
            "kthvalue": lambda t: t.kthvalue(2, 1)}[name]
    x, xt = both(np.zeros((0, 3)))
    ours, theirs = call(x), call(xt)
    check_result(ours, theirs)
    ours.values.sum().backward()
    assert x.grad.shape == (0, 3)


def test_median_and_max_of_every_element_of_an_empty_tensor():
    assert np.isnan(mg.tensor(np.zeros((0, 3))).median().item())
    assert np.isnan(torch.zeros(0, 3).median().item())
    with pytest.raises(IndexError, match="empty dim"):    # torch: a RuntimeError
        mg.tensor(np.zeros(0)).max()


@pytest.mark.parametrize("name", ["max", "min", "median", "mode", "sort", "topk", "kthvalue"])
@pytest.mark.parametrize("dim", [0, -1])
def test_a_0d_tensor_reduces_along_dim_0_or_minus_1(name, dim):
    call = {"max": lambda t: t.max(dim), "min": lambda t: t.min(dim, keepdim=True),
            "median": lambda t: t.median(dim), "mode": lambda t: t.mode(dim),
            "sort": lambda t: t.sort(dim), "topk": lambda t: t.topk(1, dim),
            "kthvalue": lambda t: t.kthvalue(1, dim)}[name]
    x, xt = both(np.array(2.5))
    ours, theirs = call(x), call(xt)
    check_result(ours, theirs)
    check_grad(ours.values, theirs.values, x, xt)
    with pytest.raises(IndexError, match="out of range"):
        x.max(1)


# ----- the library's own callers ------------------------------------------------------------
def test_the_top_k_sampling_idiom_of_model_files():
    # nanoGPT's generate (cli/pytorch_style_gpt.py; the model is compared with torch's in
    # tests/models): unpack topk, then mask below the k-th largest
    data = np.random.default_rng(2).standard_normal((2, 7))
    for lib, make in ((mg, mg.tensor), (torch, torch.tensor)):
        logits = make(data.copy())
        v, _ = lib.topk(logits, 3)
        logits[logits < v[:, [-1]]] = -float("Inf")
        kept = np.isfinite(np.asarray(logits.tolist())).sum(axis=1)
        assert kept.tolist() == [3, 3]

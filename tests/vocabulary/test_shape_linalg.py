"""ops/shape.py's and ops/linalg.py's wider vocabulary against PyTorch: unbind, unflatten,
movedim, repeat_interleave, narrow, flip, roll, expand_as, the layout questions
(is_contiguous, nbytes, data_ptr, ...), the new_* factories, einsum, addmm, baddbmm,
addmv, dot, mv and the errors of mm and bmm: float64 values and gradients, result dtypes,
errors (torch's classes), 0-d and empty tensors."""

from functools import partial

import numpy as np
import pytest
import torch

import microgradnorm as mg


def both(shape, seed=0, dtype=np.float64):
    data = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    grad = data.dtype.kind == "f"
    return mg.tensor(data, requires_grad=grad), torch.tensor(data, requires_grad=grad)


def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def agree(ours_fn, torch_fn, *shapes, dtype=np.float64):
    """Values, dtypes and shapes of every output, and the gradient into every input of one
    random upstream per output, against torch; the outputs may be a tuple."""
    pairs = [both(shape, seed, dtype) for seed, shape in enumerate(shapes)]
    ours, theirs = ours_fn(*[p[0] for p in pairs]), torch_fn(*[p[1] for p in pairs])
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    rng = np.random.default_rng(1)
    loss, torch_loss = 0.0, 0.0
    for o, t in zip(ours, theirs):
        assert o.shape == tuple(t.shape) and dtype_name(o.dtype) == dtype_name(t.dtype)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=0,
                                   atol=1e-12)
        upstream = rng.standard_normal(o.shape)
        loss = loss + (o * mg.tensor(upstream)).sum()
        torch_loss = torch_loss + (t * torch.tensor(upstream)).sum()
    if np.dtype(dtype).kind != "f":
        return
    grads = mg.grad(loss, [p[0] for p in pairs], allow_unused=True)
    expected = torch.autograd.grad(torch_loss, [p[1] for p in pairs], allow_unused=True)
    for (x, _), g, e in zip(pairs, grads, expected):
        e = np.zeros(x.shape) if e is None else e.numpy()
        g = np.zeros(x.shape) if g is None else g.numpy()
        np.testing.assert_allclose(g, e, rtol=0, atol=1e-12)


def method(name, *args, **kwargs):
    """``x.name(*other inputs, *args, **kwargs)``, the same call for either library."""
    def call(x, *others):
        return getattr(x, name)(*others, *args, **kwargs)
    return call, call


def function(name, *args, **kwargs):
    """``mg.name(*inputs, *args, **kwargs)`` and ``torch.name(...)``."""
    return (lambda *xs: getattr(mg, name)(*xs, *args, **kwargs),
            lambda *xs: getattr(torch, name)(*xs, *args, **kwargs))


def raises_like(ours, theirs):
    """torch's call raises; ours raises the same class."""
    with pytest.raises(Exception) as error:            # noqa: B017 (the class is torch's)
        theirs()
    with pytest.raises(error.type):
        ours()


# ----- unbind, unflatten, movedim ----------------------------------------------------------
def test_unbind_values_gradients_views_and_corners():
    for dim in (0, 1, -1):
        agree(*method("unbind", dim), (2, 3, 4))
    agree(lambda x: mg.unbind(x, 1), lambda x: torch.unbind(x, 1), (0, 3))
    assert mg.zeros(0, 3).unbind(0) == () == torch.zeros(0, 3).unbind(0)
    x = mg.zeros(2, 3)
    x.unbind(0)[1][0] = 5.0                           # a view, as torch's
    assert x[1, 0].item() == 5.0
    s, ts = mg.tensor(1.0), torch.tensor(1.0)
    raises_like(lambda: s.unbind(0), lambda: ts.unbind(0))
    raises_like(lambda: x.unbind(2), lambda: torch.zeros(2, 3).unbind(2))


def test_unflatten_values_inference_and_errors():
    agree(lambda x: x.unflatten(1, (3, 4)), lambda x: x.unflatten(1, (3, 4)), (2, 12))
    agree(lambda x: mg.unflatten(x, -1, [-1, 2]), lambda x: torch.unflatten(x, -1, [-1, 2]),
          (2, 12))
    assert mg.zeros(2, 0).unflatten(1, (0, 5)).shape == (2, 0, 5)
    x, tx = mg.zeros(2, 12), torch.zeros(2, 12)
    for sizes in [(5, 2), (-1, -1), (), (3, -2), (-1, 0)]:
        raises_like(partial(x.unflatten, 1, sizes), partial(tx.unflatten, 1, sizes))
    raises_like(lambda: x.unflatten(1, 12), lambda: tx.unflatten(1, 12))
    raises_like(lambda: x.unflatten(1, (3.0, 4)), lambda: tx.unflatten(1, (3.0, 4)))
    raises_like(lambda: x.unflatten(2, (12,)), lambda: tx.unflatten(2, (12,)))
    raises_like(lambda: mg.tensor(1.0).unflatten(0, (1,)),
                lambda: torch.tensor(1.0).unflatten(0, (1,)))
    raises_like(lambda: mg.zeros(2, 0).unflatten(1, (-1, 0)),
                lambda: torch.zeros(2, 0).unflatten(1, (-1, 0)))


def test_movedim_and_moveaxis():
    cases = [(0, 2), (-1, 0), ((0, 1), (2, 0)), ([2, 0], [0, 1]), ((), ())]
    for source, destination in cases:
        agree(*method("movedim", source, destination), (2, 3, 4))
        agree(*function("moveaxis", source, destination), (2, 3, 4))
    agree(lambda x: x.movedim(0, -1), lambda x: x.movedim(0, -1), ())
    x, tx = mg.zeros(2, 3), torch.zeros(2, 3)
    for source, destination in [((0,), (1, 0)), ((0, 0), (1, 0)), ((0, 1), (0, 0)), (0, 5),
                                (0.0, 1)]:
        raises_like(partial(x.movedim, source, destination),
                    partial(tx.movedim, source, destination))
    raises_like(lambda: mg.tensor(1.0).movedim(1, 0), lambda: torch.tensor(1.0).movedim(1, 0))


# ----- repeat_interleave, narrow, flip, roll, expand_as ------------------------------------
def test_repeat_interleave_values_gradients_and_dtypes():
    cases = [(2, None), (2, 1), ([1, 0, 3], 1), (2, 0), ([2], -1)]
    for counts, dim in cases:
        as_tensors = isinstance(counts, list) or dim == 0            # (2, 0): a 0-d tensor
        ours = mg.tensor(counts) if as_tensors else counts
        theirs = torch.tensor(counts) if as_tensors else counts
        agree(method("repeat_interleave", ours, dim)[0],
              method("repeat_interleave", theirs, dim)[0], (2, 3))
    agree(lambda x: mg.repeat_interleave(x, 3), lambda x: torch.repeat_interleave(x, 3), ())
    agree(lambda x: x.repeat_interleave(2, dim=0), lambda x: x.repeat_interleave(2, dim=0),
          (0, 3))
    agree(lambda x: x.repeat_interleave(2, 0, output_size=4),
          lambda x: x.repeat_interleave(2, 0, output_size=4), (2, 3))
    for dtype in (np.int32, np.bool_):
        agree(*method("repeat_interleave", 2, 1), (2, 3), dtype=dtype)
    ours = mg.repeat_interleave(mg.tensor([1, 0, 3]))
    theirs = torch.repeat_interleave(torch.tensor([1, 0, 3]))
    assert ours.tolist() == theirs.tolist() and dtype_name(ours.dtype) == "int64"


def test_repeat_interleave_errors():
    x, tx = mg.zeros(2, 3), torch.zeros(2, 3)
    for repeats in [-1, [1, 2, 3], [1, -2], [1.0, 2.0], [[1, 2]], [True, False]]:
        ours = repeats if isinstance(repeats, int) else mg.tensor(repeats)
        theirs = repeats if isinstance(repeats, int) else torch.tensor(repeats)
        raises_like(partial(x.repeat_interleave, ours, 0),
                    partial(tx.repeat_interleave, theirs, 0))
    raises_like(lambda: x.repeat_interleave(2.0), lambda: tx.repeat_interleave(2.0))
    raises_like(lambda: x.repeat_interleave(2, 2), lambda: tx.repeat_interleave(2, 2))
    raises_like(lambda: x.repeat_interleave(2, 0, output_size=5),
                lambda: tx.repeat_interleave(2, 0, output_size=5))


def test_narrow_is_a_view_with_torchs_bounds():
    for dim, start, length in [(1, 1, 2), (1, -1, 1), (0, 0, 2), (1, 3, 0), (-1, -3, 3)]:
        agree(*method("narrow", dim, start, length), (2, 3))
    agree(lambda x: mg.narrow(x, 0, mg.tensor(1), 1),
          lambda x: torch.narrow(x, 0, torch.tensor(1), 1), (2, 3))
    x, tx = mg.zeros(2, 3), torch.zeros(2, 3)
    x.narrow(1, 1, 1)[0, 0] = 7.0
    assert x[0, 1].item() == 7.0
    for dim, start, length in [(1, 2, 2), (1, -4, 1), (1, 4, 0), (1, 1, -1), (2, 0, 1),
                               (1, 1.0, 2)]:
        raises_like(partial(x.narrow, dim, start, length), partial(tx.narrow, dim, start, length))
    raises_like(lambda: mg.tensor(1.0).narrow(0, 0, 1), lambda: torch.tensor(1.0).narrow(0, 0, 1))


def test_flip_copies_and_refuses_as_torch():
    for dims in [(0,), (0, 2), (), (-1, 1)]:
        agree(*method("flip", dims), (2, 3, 4))
        agree(*function("flip", list(dims)), (2, 3, 4))
    agree(lambda x: x.flip(0, 1), lambda x: x.flip(0, 1), (2, 3))
    agree(lambda x: x.flip(0), lambda x: x.flip(0), ())
    agree(lambda x: x.flip(1), lambda x: x.flip(1), (0, 3))
    agree(lambda x: x.flip(1), lambda x: x.flip(1), (2, 3), dtype=np.int64)
    x, tx = mg.zeros(2, 3), torch.zeros(2, 3)
    flipped = x.flip(0)
    x[0, 0] = 1.0                                     # new memory, as torch's
    assert flipped.sum().item() == 0.0 and flipped.is_contiguous()
    raises_like(lambda: x.flip((0, 0)), lambda: tx.flip((0, 0)))
    raises_like(lambda: x.flip(2), lambda: tx.flip(2))
    raises_like(lambda: mg.flip(x, 0), lambda: torch.flip(tx, 0))


def test_flip_method_takes_dims_by_name_as_torch():
    for dims in [(0,), [1], (0, 1), ()]:
        agree(lambda x, d=dims: x.flip(dims=d), lambda x, d=dims: x.flip(dims=d), (2, 3))
    x, tx = mg.zeros(2, 3), torch.zeros(2, 3)
    raises_like(lambda: x.flip(dims=0), lambda: tx.flip(dims=0))
    raises_like(lambda: x.flip(0, dims=(1,)), lambda: tx.flip(0, dims=(1,)))


def test_roll_values_gradients_and_errors():
    cases = [(1, None), (-7, None), (1, 1), ((1, 2), (0, 1)), ((2, -1), (1, 1)), (3, -1)]
    for shifts, dims in cases:
        agree(*method("roll", shifts, dims), (2, 3))
        agree(*function("roll", shifts, dims), (2, 3), dtype=np.int64)
    agree(lambda x: x.roll(2), lambda x: x.roll(2), ())
    agree(lambda x: x.roll(1, 0), lambda x: x.roll(1, 0), (0, 3))
    x = mg.zeros(3)
    same = x.roll(3)
    x[0] = 1.0
    assert same.sum().item() == 0.0                   # a whole turn is a copy too
    x, tx = mg.zeros(2, 3), torch.zeros(2, 3)
    for shifts, dims in [((1, 2), (0,)), (1, 2), ((), ()), (1.5, None), (1, (0, 0))]:
        raises_like(partial(x.roll, shifts, dims), partial(tx.roll, shifts, dims))
    raises_like(lambda: mg.tensor(1.0).roll(1, 0), lambda: torch.tensor(1.0).roll(1, 0))


def test_expand_as():
    for shape in [(3,), (2, 1), (1, 3), ()]:
        agree(lambda x: x.expand_as(mg.zeros(4, 2, 3)),
              lambda x: x.expand_as(torch.zeros(4, 2, 3)), shape)
    x, tx = mg.zeros(2), torch.zeros(2)
    raises_like(lambda: x.expand_as(mg.zeros(2, 3)), lambda: tx.expand_as(torch.zeros(2, 3)))
    raises_like(lambda: mg.zeros(2, 2).expand_as(x), lambda: torch.zeros(2, 2).expand_as(tx))
    raises_like(lambda: x.expand_as(3), lambda: tx.expand_as(3))


@pytest.mark.parametrize("shape, target", [((3,), (2, 4)), ((2, 3), (2, 4)), ((2, 3), (3,)),
                                           ((2, 3), (-1, 3, 3)), ((3,), (-1, 2, 3)),
                                           ((2,), (2, -2))])
def test_expand_to_a_shape_that_does_not_fit_is_torchs_error(shape, target):
    # torch's RuntimeError, checked from the last dim, its message naming both shapes
    for make in (lambda L: L.zeros(shape).expand(*target),
                 lambda L: L.zeros(shape).expand(target),
                 lambda L: L.broadcast_to(L.zeros(shape), target)):
        with pytest.raises(RuntimeError) as theirs:
            make(torch)
        with pytest.raises(RuntimeError) as ours:
            make(mg)
        assert str(list(target)) in str(ours.value) and str(list(shape)) in str(ours.value)
        if "non-singleton dimension" in str(theirs.value):
            dim = str(theirs.value).split("non-singleton dimension ")[1].split(".")[0]
            assert f"non-singleton dimension {dim};" in str(ours.value)


# ----- layout: contiguity, sizes, pointers, ravel ------------------------------------------
LAYOUTS = {
    "plain": lambda x: x, "transpose": lambda x: x.transpose(0, 1),
    "step": lambda x: x[:, ::2], "column": lambda x: x[:, :1], "row": lambda x: x[1:],
    "expanded": lambda x: x[:, :1].expand(2, 4), "permuted": lambda x: x.reshape(2, 2, 2)
    .permute(2, 0, 1), "size-1 transpose": lambda x: x[:1].transpose(0, 1),
    "0-d": lambda x: x[0, 1:2].reshape(()), "empty": lambda x: x[:0].transpose(0, 1),
}


def test_layout_questions_match_torch():
    data = np.arange(8.0).reshape(2, 4)
    x, tx = mg.tensor(data), torch.tensor(data)
    for name, view in LAYOUTS.items():
        ours, theirs = view(x), view(tx)
        assert ours.is_contiguous() == theirs.is_contiguous(), name
        assert ours.nelement() == theirs.nelement() and ours.nbytes == theirs.nbytes, name
        assert ours.element_size() == theirs.element_size(), name
        assert (ours.data_ptr() == 0) == (theirs.data_ptr() == 0), name      # empty: 0
        if ours.nelement():
            assert ours.data_ptr() - x.data_ptr() == theirs.data_ptr() - tx.data_ptr(), name
        flat, torch_flat = ours.ravel(), theirs.ravel()
        assert flat.tolist() == torch_flat.tolist(), name
        shares = flat.data_ptr() == ours.data_ptr() and ours.nelement() > 0
        assert shares == (torch_flat.data_ptr() == theirs.data_ptr() and theirs.nelement() > 0)
    for dtype in ("float16", "bfloat16", "int32", "int64", "bool", "uint8"):
        assert mg.zeros(3, dtype=dtype).element_size() == \
            torch.zeros(3, dtype=getattr(torch, dtype)).element_size()
    agree(lambda x: mg.ravel(x.transpose(0, 1)), lambda x: torch.ravel(x.transpose(0, 1)),
          (2, 3))
    agree(lambda x: x.ravel(), lambda x: x.ravel(), ())


# ----- x.new_full, new_tensor, new_empty ---------------------------------------------------
def test_new_factories_take_dtype_and_device_from_the_tensor():
    for dtype in ("float32", "int64", "bool", "float64"):
        x, tx = mg.zeros(2, dtype=dtype), torch.zeros(2, dtype=getattr(torch, dtype))
        made = [(x.new_full((2, 3), 3.7), tx.new_full((2, 3), 3.7)),
                (x.new_full([1], True), tx.new_full([1], True)),
                (x.new_tensor([1.5, -2.0]), tx.new_tensor([1.5, -2.0])),
                (x.new_tensor(3), tx.new_tensor(3)),
                (x.new_full((2,), 3, dtype=mg.int32), tx.new_full((2,), 3, dtype=torch.int32))]
        empty = [(x.new_empty(2, 3), tx.new_empty(2, 3)), (x.new_empty((0,)), tx.new_empty((0,)))]
        for ours, theirs in made + empty:
            assert dtype_name(ours.dtype) == dtype_name(theirs.dtype)
            assert ours.shape == tuple(theirs.shape) and ours.device == mg.device("cpu")
            assert not ours.requires_grad
        for ours, theirs in made:
            assert ours.tolist() == theirs.tolist()
    x, tx = mg.zeros(2), torch.zeros(2)
    source = mg.tensor([1.0, 2.0], requires_grad=True)
    made = x.new_tensor(source, requires_grad=True)
    assert made.is_leaf and made.requires_grad and made.data_ptr() != source.data_ptr()
    assert x.new_full((2,), 1.0, requires_grad=True).requires_grad
    raises_like(lambda: x.new_full(2, 1.0), lambda: tx.new_full(2, 1.0))
    raises_like(lambda: mg.zeros(2, dtype="int8").new_full((2,), 300),
                lambda: torch.zeros(2, dtype=torch.int8).new_full((2,), 300))


# ----- einsum ------------------------------------------------------------------------------
EINSUMS = [
    ("ij,jk->ik", (2, 3), (3, 4)), ("ij,jk", (2, 3), (3, 4)), ("ii->i", (3, 3)),
    ("ii", (3, 3)), ("bij,bjk->bik", (1, 2, 3), (5, 3, 4)), ("...ij->...ji", (2, 3, 4)),
    ("...i,...i->...", (2, 1, 3), (4, 3)), ("i,j->ij", (2,), (3,)), ("ij->", (2, 3)),
    ("iij->ij", (2, 2, 3)), ("ij,ij->ij", (1, 3), (2, 3)), ("ij->j", (2, 3)),
    (" i j , j k -> i k ", (2, 3), (3, 4)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    ("yX", (2, 3)), ("ij,->ij", (2, 3), ()), ("ij,jk->ik", (2, 0), (0, 3)),
    ("...ij->ij", (4, 2, 3)), ("ij->...", (2, 3)), ("iji,j->ij", (3, 2, 3), (1,)),
    ("bhqd,bhkd->bhqk", (2, 1, 3, 4), (2, 2, 5, 4)), ("ij->ji", (2, 3)),
]


def test_einsum_values_and_gradients():
    for equation, *shapes in EINSUMS:
        agree(partial(mg.einsum, equation), partial(torch.einsum, equation), *shapes)
    agree(lambda a, b: mg.einsum("ij,jk->ik", [a, b]),
          lambda a, b: torch.einsum("ij,jk->ik", [a, b]), (2, 3), (3, 4))
    agree(lambda a, b: mg.einsum("ij,jk->ik", a, b), lambda a, b: torch.einsum("ij,jk->ik", a, b),
          (2, 3), (3, 4), dtype=np.int64)
    a, b = mg.randn(2, 3, dtype="float16"), mg.randn(3, 4, dtype="float16")
    ours = mg.einsum("ij,jk->ik", a, b)
    theirs = torch.einsum("ij,jk->ik", torch.tensor(a.numpy()), torch.tensor(b.numpy()))
    assert dtype_name(ours.dtype) == dtype_name(theirs.dtype) == "float16"
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-3, atol=2e-3)
    x = mg.zeros(2, 3)
    mg.einsum("ij->ji", x)[0, 0] = 1.0                # new memory, never a view of x
    assert x.sum().item() == 0.0


def test_einsum_errors_are_torchs():
    a, b = mg.zeros(2, 3), mg.zeros(3, 4)
    ta, tb = torch.zeros(2, 3), torch.zeros(3, 4)
    calls = [("ij,jk->ik", (a,), (ta,)), ("ij->ji", (a, a), (ta, ta)),
             ("ij,jk->ik", (a, a), (ta, ta)), ("ij->iij", (a,), (ta,)), ("ij->k", (a,), (ta,)),
             ("ijk->", (a,), (ta,)), ("ii->i", (a,), (ta,)), ("i1->i", (a,), (ta,)),
             ("...i...->i", (a,), (ta,)), ("..i->i", (a,), (ta,)), ("ij->ij->", (a,), (ta,)),
             ("i...,i...", (a, mg.zeros(2, 4)), (ta, torch.zeros(2, 4))),
             ("ij,jk->ik", (a, b.double()), (ta, tb.double())),
             ("ij,jk->ik", (a.bool(), b.bool()), (ta.bool(), tb.bool())),
             ("i->i", ([1.0, 2.0],), ([1.0, 2.0],)), ("ij->ij", (), ())]
    for equation, ours, theirs in calls:
        raises_like(partial(mg.einsum, equation, *ours),
                    partial(torch.einsum, equation, *theirs))
    raises_like(lambda: mg.einsum(3, a), lambda: torch.einsum(3, ta))


# ----- addmm, baddbmm, addmv, dot, mv, mm, bmm ---------------------------------------------
def test_scaled_products_values_gradients_and_beta_zero():
    for beta, alpha in [(1, 1), (0.5, 2.0), (0, 1), (2, 0)]:
        for input_shape in [(2, 4), (4,), (), (1, 4)]:
            agree(*function("addmm", beta=beta, alpha=alpha), input_shape, (2, 3), (3, 4))
        agree(*function("baddbmm", beta=beta, alpha=alpha), (2, 4), (5, 2, 3), (5, 3, 4))
        agree(*method("addmv", beta=beta, alpha=alpha), (2,), (2, 3), (3,))
    agree(lambda i, a, b: i.addmm(a, b, beta=3, alpha=2),
          lambda i, a, b: i.addmm(a, b, beta=3, alpha=2), (2, 4), (2, 3), (3, 4),
          dtype=np.int64)
    nan = float("nan")
    ours = mg.full((2, 4), nan, dtype="float64").requires_grad_()
    theirs = torch.full((2, 4), nan, dtype=torch.float64, requires_grad=True)
    a, ta = both((2, 3))
    b, tb = both((3, 4), seed=1)
    agree(lambda a, b: mg.addmm(ours, a, b, beta=0), lambda a, b: torch.addmm(theirs, a, b,
                                                                               beta=0),
          (2, 3), (3, 4))
    mg.addmm(ours, a, b, beta=0).sum().backward()
    torch.addmm(theirs, ta, tb, beta=0).sum().backward()
    assert ours.grad.tolist() == theirs.grad.tolist()            # zeros, not NaN


def test_dot_and_mv():
    agree(lambda a, b: a.dot(b), lambda a, b: a.dot(b), (3,), (3,))
    agree(lambda a, b: mg.dot(a, b), lambda a, b: torch.dot(a, b), (0,), (0,))
    agree(lambda a, b: a.dot(b), lambda a, b: a.dot(b), (3,), (3,), dtype=np.int64)
    agree(lambda a, b: a.mv(b), lambda a, b: a.mv(b), (2, 3), (3,))
    agree(lambda a, b: mg.mv(a, b), lambda a, b: torch.mv(a, b), (2, 0), (0,))
    agree(lambda a, b: mg.mm(a, b), lambda a, b: torch.mm(a, b), (2, 0), (0, 3))
    agree(lambda a, b: mg.bmm(a, b), lambda a, b: torch.bmm(a, b), (2, 1, 3), (2, 3, 2),
          dtype=np.int32)


def test_product_errors_are_torchs():
    m, v, s = mg.zeros(2, 3), mg.zeros(3), mg.tensor(1.0)
    tm, tv, ts = torch.zeros(2, 3), torch.zeros(3), torch.tensor(1.0)
    calls = [
        ("mm", (m, m), (tm, tm)), ("mm", (m, v), (tm, tv)), ("mm", (m, 3), (tm, 3)),
        ("mm", (m, m.t().double()), (tm, tm.t().double())),
        ("mm", (m.bool(), m.t().bool()), (tm.bool(), tm.t().bool())),
        ("bmm", (m, m), (tm, tm)), ("bmm", (mg.zeros(2, 2, 3), mg.zeros(3, 3, 4)),
                                    (torch.zeros(2, 2, 3), torch.zeros(3, 3, 4))),
        ("dot", (v, mg.zeros(4)), (tv, torch.zeros(4))), ("dot", (m, m), (tm, tm)),
        ("dot", (s, s), (ts, ts)), ("dot", (v, v.double()), (tv, tv.double())),
        ("dot", (v.bool(), v.bool()), (tv.bool(), tv.bool())),
        ("mv", (m, mg.zeros(4)), (tm, torch.zeros(4))), ("mv", (m, m), (tm, tm)),
        ("mv", (m, v.double()), (tm, tv.double())),
        ("addmm", (mg.zeros(3), m, mg.zeros(3, 4)), (torch.zeros(3), tm, torch.zeros(3, 4))),
        ("addmm", (mg.zeros(1, 2, 4), m, mg.zeros(3, 4)),
         (torch.zeros(1, 2, 4), tm, torch.zeros(3, 4))),
        ("addmm", (mg.zeros(2, 4, dtype="float64"), m, mg.zeros(3, 4)),
         (torch.zeros(2, 4, dtype=torch.float64), tm, torch.zeros(3, 4))),
        ("addmm", (mg.zeros(2, 4), m, v), (torch.zeros(2, 4), tm, tv)),
        ("baddbmm", (mg.zeros(3, 2, 4), mg.zeros(5, 2, 3), mg.zeros(5, 3, 4)),
         (torch.zeros(3, 2, 4), torch.zeros(5, 2, 3), torch.zeros(5, 3, 4))),
        ("addmv", (mg.zeros(3), m, v), (torch.zeros(3), tm, tv)),
    ]
    for name, ours, theirs in calls:
        raises_like(partial(getattr(mg, name), *ours), partial(getattr(torch, name), *theirs))
    with pytest.raises(ValueError, match="mm: both operands must be 2-D"):
        m.mm(v)                                       # a ValueError too, as this library's

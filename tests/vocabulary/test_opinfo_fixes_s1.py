"""Against PyTorch, where its OpInfo reference inputs (ops a to l) found a difference or a
missing op: the dtype methods with ``memory_format=``, the rounding of a float64 output
gradient into float16, ``linalg.lstsq``'s empty residuals in the graph, and the ops added
(``alias_copy``, ``as_strided_copy``, ``diagonal_copy``, ``expand_copy``,
``constant_pad_nd``, ``gradient``, ``empty_permuted``, ``as_strided_scatter``,
``linalg.vander``, ``tensorinv``, ``tensorsolve``): values, dtypes, strides, gradients and
errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import microgradnorm as mg  # noqa: E402

RNG = np.random.default_rng(7)


def both(array, requires_grad=False):
    return (torch.tensor(array, requires_grad=requires_grad),
            mg.tensor(array, requires_grad=requires_grad))


def close(ours, theirs, rtol=1e-10, atol=1e-12):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(np.asarray(ours.detach()), theirs.detach().numpy(), rtol, atol)


def grads_match(ours_out, theirs_out, ours_in, theirs_in):
    g = RNG.standard_normal(tuple(theirs_out.shape))
    theirs = torch.autograd.grad(theirs_out, theirs_in, torch.tensor(g))
    ours = mg.autograd.grad(ours_out, ours_in, mg.tensor(g))
    for a, b in zip(ours, theirs):
        close(a, b)


@pytest.mark.parametrize("method", ["float", "double", "half", "bfloat16", "long", "int", "bool",
                                    "byte", "char", "short", "cfloat", "cdouble"])
@pytest.mark.parametrize("form", ["contiguous_format", "channels_last", "preserve_format"])
def test_dtype_methods_take_memory_format(method, form):
    t, m = both(RNG.standard_normal((2, 3, 2, 3)))
    t, m = t.permute(0, 2, 1, 3), m.permute(0, 2, 1, 3)
    theirs = getattr(t, method)(memory_format=getattr(torch, form))
    ours = getattr(m, method)(memory_format=getattr(mg, form))
    assert ours.stride() == theirs.stride()
    assert str(ours.dtype) == str(theirs.dtype)
    if method == "bfloat16":
        ours, theirs = ours.float(), theirs.float()
    np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())


def test_dtype_method_without_a_change_is_the_tensor():
    t, m = both(RNG.standard_normal((2, 3)).astype(np.float32))
    assert t.float(memory_format=torch.preserve_format) is t
    assert m.float(memory_format=mg.preserve_format) is m
    assert m.float() is m


def test_float64_output_gradient_rounds_into_float16_as_torch():
    # torch's engine casts a float64 gradient of a float16 output through float32
    upstream = RNG.standard_normal((400, 300))
    t, m = both(np.zeros((400, 300)), requires_grad=True)
    theirs = torch.autograd.grad(t.half(), t, torch.tensor(upstream))[0]
    ours = mg.autograd.grad(m.half(), m, mg.tensor(upstream))[0]
    np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())
    assert not np.array_equal(upstream.astype(np.float16), upstream.astype(np.float32)
                              .astype(np.float16))              # the case the test is about


@pytest.mark.parametrize("shape", [(2, 3), (3, 3), (4, 3)])
@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_residuals_are_in_the_graph(shape, driver):
    a, b = RNG.standard_normal(shape), RNG.standard_normal((shape[0], 2))
    (ta, ma), (tb, mb) = both(a, True), both(b, True)
    theirs = torch.linalg.lstsq(ta, tb, driver=driver)
    ours = mg.linalg.lstsq(ma, mb, driver=driver)
    assert ours.residuals.requires_grad == theirs.residuals.requires_grad
    close(ours.residuals, theirs.residuals, 1e-8, 1e-10)
    outs = [o for o in (ours.solution, ours.residuals)]
    touts = [theirs.solution, theirs.residuals]
    g = [RNG.standard_normal(tuple(o.shape)) for o in touts]
    expected = torch.autograd.grad(touts, [ta, tb], [torch.tensor(x) for x in g])
    got = mg.autograd.grad(outs, [ma, mb], [mg.tensor(x) for x in g])
    for a_, b_ in zip(got, expected):
        close(a_, b_, 1e-8, 1e-10)


@pytest.mark.parametrize("name, args", [
    ("alias_copy", ()), ("as_strided_copy", ((2, 2), (1, 3), 1)),
    ("diagonal_copy", (1, 0, 1)), ("expand_copy", ((2, 3, 4),))])
def test_view_copies(name, args):
    shape = (1, 4) if name == "expand_copy" else (3, 4)
    t, m = both(RNG.standard_normal(shape), True)
    theirs, ours = getattr(torch, name)(t, *args), getattr(mg, name)(m, *args)
    close(ours, theirs)
    assert ours.stride() == theirs.stride() and ours.is_contiguous()
    assert not np.shares_memory(np.asarray(ours.detach()), np.asarray(m.detach()))
    grads_match(ours, theirs, [m], [t])


@pytest.mark.parametrize("pad, value", [((1, 2), 0), ((1, -1, 2, 0), 2.5), ((0, 0, 0, 1), -1)])
def test_constant_pad_nd(pad, value):
    t, m = both(RNG.standard_normal((2, 3, 4)), True)
    theirs, ours = torch.constant_pad_nd(t, pad, value), mg.constant_pad_nd(m, pad, value)
    close(ours, theirs)
    grads_match(ours, theirs, [m], [t])
    with pytest.raises(RuntimeError, match="Length of pad must be even"):
        mg.constant_pad_nd(m, (1,))


@pytest.mark.parametrize("kwargs", [
    {}, {"spacing": 2.0}, {"spacing": [0.5, 2.0, 3.0], "edge_order": 2}, {"dim": 1},
    {"dim": (0, -1), "spacing": "coordinates"}, {"dim": (2, 1), "spacing": "coordinates",
                                                  "edge_order": 2}])
def test_gradient(kwargs):
    t, m = both(RNG.standard_normal((4, 5, 6)), True)
    tk, mk = dict(kwargs), dict(kwargs)
    if kwargs.get("spacing") == "coordinates":
        sizes = [(4, 5, 6)[d] for d in kwargs["dim"]]
        coords = [np.cumsum(RNG.uniform(0.5, 2.0, n)) for n in sizes]
        tk["spacing"] = [torch.tensor(c) for c in coords]
        mk["spacing"] = [mg.tensor(c) for c in coords]
    theirs, ours = torch.gradient(t, **tk), mg.gradient(m, **mk)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        close(a, b)
    g = [RNG.standard_normal(tuple(x.shape)) for x in theirs]
    expected = torch.autograd.grad(theirs, t, [torch.tensor(x) for x in g])[0]
    close(mg.autograd.grad(list(ours), m, [mg.tensor(x) for x in g])[0], expected)


def test_gradient_of_integers_and_errors():
    theirs = torch.gradient(torch.tensor([1, 4, 9, 16]), spacing=2)
    ours = mg.gradient(mg.tensor([1, 4, 9, 16]), spacing=2)
    close(ours[0], theirs[0])
    for call in (lambda L: L.gradient(L.ones(2, 3), edge_order=2),
                 lambda L: L.gradient(L.ones(5, 3), spacing=[1.0, 2.0, 3.0]),
                 lambda L: L.gradient(L.ones(5, 3), edge_order=3)):
        with pytest.raises(RuntimeError) as theirs_error:
            call(torch)
        with pytest.raises(RuntimeError) as ours_error:
            call(mg)
        assert str(ours_error.value) == str(theirs_error.value)


@pytest.mark.parametrize("size, layout", [((2, 3, 4), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)),
                                          ((3,), (0,))])
def test_empty_permuted(size, layout):
    theirs = torch.empty_permuted(size, layout, dtype=torch.float32)
    ours = mg.empty_permuted(size, layout, dtype=mg.float32)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours.dtype == mg.float32
    for bad in ((0,) * (len(size) + 1), (0,) * len(size) if len(size) > 1 else None):
        if bad is None:
            continue
        with pytest.raises(RuntimeError) as theirs_error:
            torch.empty_permuted(size, bad)
        with pytest.raises(RuntimeError) as ours_error:
            mg.empty_permuted(size, bad)
        assert str(ours_error.value) == str(theirs_error.value)


@pytest.mark.parametrize("size, stride, offset", [((2, 2), (1, 3), 0), ((2, 2), (3, 1), 1),
                                                  ((3,), (4,), None)])
def test_as_strided_scatter(size, stride, offset):
    (t, m), (ts, ms) = both(RNG.standard_normal((3, 4)), True), both(RNG.standard_normal(size),
                                                                     True)
    theirs = torch.as_strided_scatter(t, ts, size, stride, offset)
    ours = mg.as_strided_scatter(m, ms, size, stride, offset)
    close(ours, theirs)
    # the gradient: src's is torch's; input's the derivative (docs/pytorch.md), the one a copy
    # through the view gives in torch
    g = RNG.standard_normal((3, 4))
    ours_x, ours_src = mg.autograd.grad(ours, [m, ms], mg.tensor(g))
    x2 = t.detach().clone().requires_grad_()
    y = x2.clone()
    y.as_strided(size, stride, 0 if offset is None else offset).copy_(ts)
    expected_x, expected_src = torch.autograd.grad(y, [x2, ts], torch.tensor(g))
    close(ours_x, expected_x)
    close(ours_src, expected_src)


@pytest.mark.parametrize("shape, N", [((4,), None), ((2, 3), 5), ((), 2)])
def test_linalg_vander(shape, N):
    t, m = both(RNG.standard_normal(shape), True)
    theirs, ours = torch.linalg.vander(t, N=N), mg.linalg.vander(m, N=N)
    close(ours, theirs)
    grads_match(ours, theirs, [m], [t])
    close(mg.linalg.vander(mg.tensor([1, 2, 3], dtype=mg.int8)),
          torch.linalg.vander(torch.tensor([1, 2, 3], dtype=torch.int8)))
    for L in (torch, mg):
        with pytest.raises(RuntimeError, match="N must be greater than 1"):
            L.linalg.vander(L.ones(3, dtype=L.float64), N=1)


def test_tensorinv_and_tensorsolve():
    a = RNG.standard_normal((6, 2, 3)) + 3 * np.eye(6).reshape(6, 2, 3)
    t, m = both(a, True)
    theirs, ours = torch.linalg.tensorinv(t, ind=1), mg.linalg.tensorinv(m, ind=1)
    close(ours, theirs, 1e-9, 1e-10)
    grads_match(ours, theirs, [m], [t])
    (ta, ma), (tb, mb) = both(a.reshape(2, 3, 6), True), both(RNG.standard_normal((2, 3)), True)
    theirs, ours = torch.linalg.tensorsolve(ta, tb), mg.linalg.tensorsolve(ma, mb)
    close(ours, theirs, 1e-9, 1e-10)
    grads_match(ours, theirs, [ma, mb], [ta, tb])
    theirs = torch.linalg.tensorsolve(t, tb, dims=(0,))
    close(mg.linalg.tensorsolve(m, mb, dims=(0,)), theirs, 1e-9, 1e-10)
    for call in (lambda L: L.linalg.tensorinv(L.ones(4, 3), ind=1),
                 lambda L: L.linalg.tensorinv(L.ones(4, 4), ind=0),
                 lambda L: L.linalg.tensorsolve(L.ones(2, 3, 5), L.ones(2, 3))):
        with pytest.raises(RuntimeError) as theirs_error:
            call(torch)
        with pytest.raises(RuntimeError) as ours_error:
            call(mg)
        assert str(ours_error.value) == str(theirs_error.value)


@pytest.mark.parametrize("shape, k", [((5, 3), 2), ((2, 4, 4), 4), ((5, 3), 0)])
def test_householder_product(shape, k):
    t, m = both(RNG.standard_normal(shape), True)
    (tt, mt) = both(RNG.standard_normal(shape[:-2] + (k,)), True)
    theirs = torch.linalg.householder_product(t, tt)
    ours = mg.linalg.householder_product(m, mt)
    close(ours, theirs)
    assert ours.requires_grad == theirs.requires_grad
    if k:                               # no reflection: torch's graph reaches neither input
        grads_match(ours, theirs, [m, mt], [t, tt])
    a = RNG.standard_normal((4, 3))
    geqrf = torch.geqrf(torch.tensor(a))
    q = mg.linalg.householder_product(mg.tensor(geqrf.a.numpy()), mg.tensor(geqrf.tau.numpy()))
    close(q, torch.linalg.qr(torch.tensor(a)).Q)
    for call in (lambda L: L.linalg.householder_product(L.ones(3, 5), L.ones(2)),
                 lambda L: L.linalg.householder_product(L.ones(5, 3), L.ones(4)),
                 lambda L: L.linalg.householder_product(L.ones(5, 3), L.ones(2, 3))):
        with pytest.raises(RuntimeError) as theirs_error:
            call(torch)
        with pytest.raises(RuntimeError) as ours_error:
            call(mg)
        assert str(ours_error.value) == str(theirs_error.value)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_grid_sampler_2d_takes_torch_enums(mode, padding):
    t, m = both(RNG.standard_normal((2, 3, 5, 6)), True)
    (tg, mg_grid) = both(RNG.uniform(-1.2, 1.2, (2, 4, 3, 2)), True)
    theirs = torch.grid_sampler_2d(t, tg, mode, padding, True)
    ours = mg.grid_sampler_2d(m, mg_grid, mode, padding, True)
    close(ours, theirs)
    grads_match(ours, theirs, [m, mg_grid], [t, tg])


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
def test_linalg_eigvals(dtype):
    a = RNG.standard_normal((3, 4, 4))
    if dtype == "complex128":
        a = a + 1j * RNG.standard_normal((3, 4, 4))
    a = a.astype(dtype)
    t, m = both(a, True)
    theirs, ours = torch.linalg.eigvals(t), mg.linalg.eigvals(m)
    tol = (1e-4, 1e-5) if dtype == "float32" else (1e-10, 1e-12)
    close(ours, theirs, *tol)
    g = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
    g = g.astype(np.complex64 if dtype == "float32" else np.complex128)
    expected = torch.autograd.grad(theirs, t, torch.tensor(g))[0]
    got = mg.autograd.grad(ours, m, mg.tensor(g))[0]
    close(got, expected, *tol)
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        mg.linalg.eigvals(mg.ones(2, 3))

"""Behaviours PyTorch's own reference inputs (``op_db``) found different, now torch's:
tensordot over a contracted dim of size 1, ``Tensor.to``'s positional flags; and the ops
added beside them: the ``*_copy`` view copies, torch.special's orthogonal polynomials and
torch.signal.windows."""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def close(ours, theirs, rtol=1e-12, atol=1e-14):
    np.testing.assert_allclose(np.asarray(ours.detach()), theirs.detach().numpy(), rtol, atol)


@pytest.mark.parametrize("shapes,dims", [(((1, 1, 1), (2, 1, 2)), ([0, 1], [2, 0])),
                                         (((3, 1), (4, 5)), ([1], [0])),
                                         (((3, 4), (1, 5)), ([1], [0])),
                                         (((2, 3), (3, 2)), 1)])
def test_tensordot_broadcasts_a_contracted_dim_of_size_1_as_torch(shapes, dims):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s) for s in shapes)
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    ma, mb = (mg.tensor(v, requires_grad=True) for v in (a, b))
    expected, got = torch.tensordot(ta, tb, dims=dims), mg.tensordot(ma, mb, dims=dims)
    assert tuple(got.shape) == tuple(expected.shape)
    close(got, expected)
    up = rng.standard_normal(tuple(expected.shape))
    expected.backward(torch.tensor(up))
    got.backward(mg.tensor(up))
    close(ma.grad, ta.grad)
    close(mb.grad, tb.grad)


def test_tensordot_still_refuses_other_mismatched_sizes():
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        mg.tensordot(mg.ones(2, 3), mg.ones(4, 5), dims=([1], [0]))


def test_to_takes_non_blocking_and_copy_positionally_as_torch():
    x = mg.randn(2, 3)
    assert x.to("cpu", mg.float32, False, True) is not x          # copy=True
    assert x.to(mg.float32, True) is x                             # non_blocking only
    assert x.to(mg.float32, False, True) is not x
    assert x.to(x, False, True) is not x
    y = x.to("cpu", mg.float64, True, True)
    assert y.dtype == mg.float64
    with pytest.raises(TypeError):
        x.to(mg.float32, True, True, True)


@pytest.mark.parametrize("name,args", [("permute_copy", ((2, 0, 1),)), ("t_copy", ()),
                                       ("transpose_copy", (0, 2)), ("squeeze_copy", ()),
                                       ("squeeze_copy", (1,)), ("unsqueeze_copy", (-1,)),
                                       ("view_copy", ((4, 3),)), ("unfold_copy", (2, 2, 1)),
                                       ("unbind_copy", (2,)),
                                       ("split_with_sizes_copy", ([1, 2], 2))])
def test_view_copies_match_torch_with_their_gradient(name, args):
    shape = (2, 3) if name == "t_copy" else (2, 1, 3) if name == "squeeze_copy" else (2, 2, 3)
    a = np.random.default_rng(1).standard_normal(shape)
    ta, ma = torch.tensor(a, requires_grad=True), mg.tensor(a, requires_grad=True)
    expected = getattr(torch, name)(ta, *args)
    got = getattr(mg, name)(ma, *args)
    if isinstance(expected, torch.Tensor):
        expected, got = [expected], [got]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert tuple(g.shape) == tuple(e.shape) and g.is_contiguous()
        close(g, e)
    sum(e.sum() * (i + 1) for i, e in enumerate(expected)).backward()
    sum(g.sum() * (i + 1) for i, g in enumerate(got)).backward()
    close(ma.grad, ta.grad)


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials_match_torch(name):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-1.2, 1.2, 60), [-1.0, 0.0, 1.0, 0.5, np.nan]])[:, None]
    n = np.arange(-2, 16, dtype=np.float64)[None, :]
    expected = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
    got = getattr(mg.special, name)(mg.tensor(x), mg.tensor(n))
    assert got.dtype == mg.float64 and got.grad_fn is None
    np.testing.assert_allclose(np.asarray(got), expected.numpy(), 1e-9, 1e-9, equal_nan=True)
    ints = getattr(torch.special, name)(torch.tensor([0, 1, 2]), 3)      # integers: floats
    np.testing.assert_allclose(np.asarray(getattr(mg.special, name)(mg.tensor([0, 1, 2]), 3)),
                               ints.numpy(), 1e-6)


WINDOWS = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {"tau": 2.5}),
           ("gaussian", {"std": 1.7}), ("general_cosine", {"a": [0.3, 0.5, 0.2]}),
           ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}),
           ("kaiser", {"beta": 5.0}), ("nuttall", {})]


@pytest.mark.parametrize("name,kwargs", WINDOWS)
@pytest.mark.parametrize("sym", [True, False])
def test_signal_windows_match_torch(name, kwargs, sym):
    for m in (0, 1, 2, 7, 12):
        for dtype in ("float32", "float64"):
            expected = getattr(torch.signal.windows, name)(m, sym=sym, **kwargs,
                                                           dtype=getattr(torch, dtype))
            got = getattr(mg.signal.windows, name)(m, sym=sym, **kwargs,
                                                   dtype=getattr(mg, dtype))
            assert str(got.dtype) == f"torch.{dtype}" and tuple(got.shape) == (m,)
            np.testing.assert_allclose(np.asarray(got), expected.numpy(), 1e-6, 1e-7)


def test_signal_exponential_center_goes_with_sym_false_as_torch():
    np.testing.assert_allclose(
        np.asarray(mg.signal.windows.exponential(7, center=1.5, sym=False)),
        torch.signal.windows.exponential(7, center=1.5, sym=False).numpy(), 1e-6)
    with pytest.raises(ValueError):
        mg.signal.windows.exponential(7, center=1.5)


def test_modified_bessel_past_float32_is_inf_without_a_warning_as_torch():
    x = np.float32([100.0, -100.0])
    for name in ("modified_bessel_i0", "modified_bessel_i1"):
        got = getattr(mg.special, name)(mg.tensor(x))         # warnings are errors here
        np.testing.assert_array_equal(np.asarray(got),
                                      getattr(torch.special, name)(torch.tensor(x)).numpy())


def test_normal_takes_torchs_layout_keyword():
    mg.manual_seed(0)
    x = mg.normal(1.6, 0.3, [2, 2, 2], dtype=mg.float32, layout=mg.strided, device="cpu")
    assert tuple(x.shape) == (2, 2, 2) and x.dtype == mg.float32

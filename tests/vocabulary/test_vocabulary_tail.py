"""The last common Tensor methods and functions, against PyTorch in float64: isposinf,
isneginf, isreal, outer/ger/vdot as methods, positive, cumsum_/cumprod_, msort, diagflat,
split_with_sizes and sum_to_size (values, dtypes, gradients, errors)."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
from torch_compare import pair

DATA = np.random.default_rng(0).standard_normal((2, 3, 4))


@pytest.mark.parametrize("name", ["isposinf", "isneginf", "isreal"])
@pytest.mark.parametrize("values", [[1.0, np.inf, -np.inf, np.nan, 0.0], [1, -2], [True],
                                    [1 + 0j, 1j, np.inf + 0j], []])
def test_classifications(name, values):
    ours, theirs = mg.tensor(values), torch.tensor(values)
    if name != "isreal" and ours.dtype.kind == "c":
        with pytest.raises(Exception):                    # noqa: B017 (torch's class varies)
            getattr(torch, name)(theirs)
        return
    got, want = getattr(mg, name)(ours), getattr(torch, name)(theirs)
    assert got.dtype == np.bool_ and got.tolist() == want.tolist()
    assert getattr(ours, name)().tolist() == want.tolist()


def test_outer_ger_and_vdot_methods():
    a, b = np.array([1.0, -2.0]), np.array([3.0, 4.0, 0.5])
    for name in ("outer", "ger"):
        (x, tx), (y, ty) = pair(a), pair(b)
        got, want = getattr(x, name)(y), getattr(tx, name)(ty)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    z = np.array([1 + 1j, 2j, -1.5])
    w = np.array([1 + 0j, 1j, 2 + 2j])
    assert complex(mg.vdot(mg.tensor(z), mg.tensor(w)).item()) == \
        complex(torch.vdot(torch.tensor(z), torch.tensor(w)).item())
    assert mg.tensor(a).vdot(mg.tensor(a)).item() == torch.tensor(a).vdot(torch.tensor(a)).item()


def test_positive():
    x = mg.tensor([1.0, -2.0])
    assert mg.positive(x) is x and x.positive() is x
    with pytest.raises(RuntimeError):
        torch.positive(torch.tensor([True]))
    with pytest.raises(RuntimeError):
        mg.positive(mg.tensor([True]))


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumulative_in_place(name, dim):
    ours, theirs = mg.tensor(DATA), torch.tensor(DATA)
    assert getattr(ours, name)(dim) is ours
    getattr(theirs, name)(dim)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-14)
    leaf, tleaf = pair(DATA)
    y, ty = leaf * 1, tleaf * 1
    getattr(y, name)(dim)
    getattr(ty, name)(dim)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), tleaf.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.msort(x), lambda lib, x: x.msort(),
    lambda lib, x: lib.diagflat(x[0]), lambda lib, x: lib.diagflat(x[1, 1], -2),
    lambda lib, x: x.split_with_sizes([1, 0, 3], 2)[2], lambda lib, x: x.split_with_sizes((2,))[0],
    lambda lib, x: x.sum_to_size(3, 1), lambda lib, x: x.sum_to_size((1, 3, 4)),
    lambda lib, x: x.sum_to_size(4), lambda lib, x: x.sum_to_size(2, 3, 4),
    lambda lib, x: x.sum_to_size(1, 1, 1)])
def test_shape_methods_values_and_gradients(call):
    (x, tx) = pair(DATA)
    got, want = call(mg, x), call(torch, tx)
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-14)
    upstream = np.random.default_rng(1).standard_normal(tuple(want.shape))
    got.backward(upstream)
    want.backward(torch.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-13)


@pytest.mark.parametrize("call", [lambda x: x.sum_to_size(2, 4),
                                  lambda x: x.sum_to_size(1, 2, 3, 4),
                                  lambda x: x.split_with_sizes([1, 2], 2),
                                  lambda x: x.split_with_sizes([5, -1], 2)])
def test_shape_method_errors(call):
    with pytest.raises(RuntimeError):
        call(torch.tensor(DATA))
    with pytest.raises(RuntimeError):
        call(mg.tensor(DATA))


@pytest.mark.parametrize("name", ["vdot", "mm", "matmul", "einsum", "bmm"])
def test_complex_products_take_the_conjugate_in_their_gradients(name):
    # dL/da = grad @ conj(b)ᵀ, as torch's; the gradients were grad @ bᵀ
    rng = np.random.default_rng(2)
    shapes = {"vdot": ((3,), (3,)), "mm": ((2, 3), (3, 4)), "matmul": ((5, 2, 3), (3, 4)),
              "einsum": ((2, 3), (3, 4)), "bmm": ((2, 2, 3), (2, 3, 4))}[name]
    arrays = [rng.standard_normal(s) + 1j * rng.standard_normal(s) for s in shapes]
    grads = []
    for lib in (mg, torch):
        a, b = (lib.tensor(x, requires_grad=True) for x in arrays)
        out = (lib.einsum("ij,jk->ik", a, b) if name == "einsum" else
               getattr(lib, name)(a, b))
        (out.real.sum() + 2 * out.imag.sum()).backward()
        grads.append([np.asarray(a.grad.numpy()), np.asarray(b.grad.numpy())])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor(3.0).split_with_sizes([1]),
    lambda lib: lib.arange(3.0).split_with_sizes([4, -1]),
    lambda lib: lib.isposinf(lib.tensor([1j])),
    lambda lib: lib.isneginf(lib.tensor([1j])),
    lambda lib: lib.zeros(2, dtype=lib.float16).fill_(np.float32(1e30)),
    lambda lib: lib.zeros(2, dtype=lib.uint8).fill_(np.float16(65504)),
    lambda lib: lib.zeros(2, dtype=lib.int8).masked_fill(lib.tensor([True, False]),
                                                         lib.tensor(300)),
    lambda lib: lib.zeros(2, dtype=lib.int32).masked_fill(lib.tensor([True, False]),
                                                          lib.tensor(float("nan")))])
def test_refused_as_torch_refuses(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError):
        call(mg)


def test_unary_plus_and_a_half_number_past_the_range():
    x = mg.tensor([1.0, -2.0])
    assert (+x) is x
    half = mg.tensor(1.0, dtype=mg.float16) * 65536           # inf, as torch's, silently
    assert half.item() == torch.tensor(1.0, dtype=torch.float16).mul(65536).item()

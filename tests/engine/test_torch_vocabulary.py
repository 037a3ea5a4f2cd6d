"""PyTorch's tensor vocabulary that model files use: x.size(), dtype names, sort/topk,
tril/triu, norm, outer, pow of a number, the random factories and the function forms, each
against PyTorch in float64."""

import numpy as np
import pytest
import torch

import microgradnorm as mg


def both(array, requires_grad=True):
    return mg.tensor(array, requires_grad=requires_grad), \
        torch.tensor(array, requires_grad=requires_grad)


def check(ours, theirs, inputs):
    """Values, and the gradient of a random projection into each input, against torch."""
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=0,
                               atol=1e-12)
    upstream = np.random.default_rng(0).standard_normal(ours.shape)
    ours.backward(upstream)
    theirs.backward(torch.tensor(upstream))
    for a, b in inputs:
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=0, atol=1e-12)


def test_size_is_the_element_count_and_pytorchs_method():
    x = mg.zeros(2, 3, 4)
    assert x.size == 24 and isinstance(x.size, int) and x.size + 1 == 25     # NumPy's
    assert x.size() == torch.zeros(2, 3, 4).size() == (2, 3, 4)
    assert isinstance(x.size(), mg.Size) and x.size().numel() == 24
    assert x.size(-1) == 4 and x.size(0) == 2 and x.size(dim=1) == 3
    B, T, C = x.size()
    assert (B, T, C) == (2, 3, 4) and x.numel() == 24 and x.dim() == 3
    with pytest.raises(IndexError, match="out of range"):
        x.size(3)


def test_dtype_names_compare_with_tensor_dtypes_and_are_taken_everywhere():
    pairs = {"float32": mg.float, "float64": mg.double, "float16": mg.half,
             "int64": mg.long, "int32": mg.int, "bool": mg.bool, "int16": mg.short}
    for name, ours in pairs.items():
        assert ours == getattr(mg, name) == np.dtype(name)
        assert str(getattr(torch, name)).endswith(name)
    assert mg.ones(2).dtype == mg.float32 and mg.ones(2).double().dtype == mg.double
    assert mg.arange(0, 3, dtype=mg.long).dtype == mg.int64
    assert mg.tensor([1, 2], dtype=mg.long).dtype == mg.long
    assert mg.ones(2).to(mg.float32).dtype == mg.float32
    assert mg.nn.Linear(2, 2).to(mg.float32).weight.dtype == mg.float32
    assert mg.is_floating_point(mg.ones(2)) and not mg.arange(3).is_floating_point()
    assert mg.finfo(mg.float32).eps == torch.finfo(torch.float32).eps
    assert mg.iinfo(mg.int64).max == torch.iinfo(torch.int64).max


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, -1])
def test_sort_matches_torch_ties_included(descending, dim):
    data = np.array([[3.0, 1.0, 3.0, 2.0], [0.5, 0.5, -1.0, 0.5], [2.0, 7.0, 1.0, 7.0]])
    x, xt = both(data)
    values, indices = mg.sort(x, dim=dim, descending=descending)
    values_t, indices_t = torch.sort(xt, dim=dim, descending=descending, stable=True)
    assert indices.tolist() == indices_t.tolist()
    assert mg.argsort(x, dim, descending).tolist() == indices_t.tolist()
    check(values, values_t, [(x, xt)])


@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_torch_and_its_gradient_goes_to_the_picked(largest):
    data = np.random.default_rng(1).standard_normal((3, 6))
    x, xt = both(data)
    values, indices = x.topk(3, largest=largest)
    values_t, indices_t = torch.topk(xt, 3, largest=largest)
    assert indices.tolist() == indices_t.tolist()
    check(values, values_t, [(x, xt)])
    with pytest.raises(ValueError, match="k must be an int in"):
        mg.topk(x, 7)


@pytest.mark.parametrize("diagonal", [-1, 0, 2])
def test_tril_triu_match_torch_and_keep_inf_out(diagonal):
    data = np.random.default_rng(2).standard_normal((2, 3, 4))
    data[0, 0, 3] = np.inf                               # above the diagonal: 0, not NaN
    for fn in ("tril", "triu"):
        x, xt = both(data)
        check(getattr(mg, fn)(x, diagonal=diagonal), getattr(torch, fn)(xt, diagonal), [(x, xt)])


def test_norm_outer_pow_rsqrt_match_torch():
    data = np.random.default_rng(3).standard_normal((3, 4))
    for p in (2, 1, 3.0, np.inf):
        x, xt = both(data)
        check(x.norm(p, dim=-1, keepdim=True), xt.norm(p, dim=-1, keepdim=True), [(x, xt)])
    x, xt = both(np.zeros((2, 3)))                       # a zero norm: gradient 0, not NaN
    check(x.norm(dim=1), xt.norm(dim=1), [(x, xt)])
    (a, at), (b, bt) = both(data[0]), both(data[1, :3])
    check(mg.outer(a, b), torch.outer(at, bt), [(a, at), (b, bt)])
    x, xt = both(data)
    check(mg.pow(2.0, x), torch.pow(2.0, xt), [(x, xt)])
    x, xt = both(np.abs(data) + 0.5)
    check(mg.rsqrt(x) + mg.clamp(x, min=1.0), torch.rsqrt(xt) + torch.clamp(xt, min=1.0),
          [(x, xt)])


@pytest.mark.parametrize("shape", [(2, 3, 4), (5,), ()])
@pytest.mark.parametrize("dims", [(0, -1), (0, 1), (1, 2), (-2, -1), (0, 0), (2, 1)])
def test_flatten_start_and_end_dims_match_torch(shape, dims):
    try:
        expected = tuple(torch.zeros(shape).flatten(*dims).shape)
    except (IndexError, RuntimeError) as error:
        with pytest.raises((IndexError, ValueError)):
            mg.zeros(shape).flatten(*dims)
        assert error
        return
    assert mg.zeros(shape).flatten(*dims).shape == expected


def test_function_forms_are_the_methods():
    x = mg.tensor(np.arange(6.0).reshape(2, 3))
    assert mg.flatten(x).shape == (6,) and mg.numel(x) == 6
    assert mg.transpose(x, 0, 1).shape == (3, 2) and mg.unsqueeze(x, 0).shape == (1, 2, 3)
    assert mg.sum(x).item() == 15 and mg.argmax(x).item() == 5
    with mg.inference_mode():
        assert not (mg.tensor([1.0], requires_grad=True) * 2).requires_grad


def test_randint_randperm_follow_manual_seed_and_torchs_forms():
    mg.manual_seed(0)
    a = mg.randint(0, 5, (200,))
    mg.manual_seed(0)
    assert mg.randint(5, (200,)).tolist() == a.tolist()
    assert a.dtype == mg.long and a.shape == (200,) and set(a.tolist()) == set(range(5))
    assert sorted(mg.randperm(7).tolist()) == list(range(7))
    with pytest.raises(ValueError, match="low must be below high"):
        mg.randint(3, 3, (2,))


def test_multinomial_draws_in_proportion_and_without_replacement():
    probs = mg.tensor([[0.1, 0.0, 0.9], [0.5, 0.25, 0.25]])
    mg.manual_seed(0)
    draws = mg.multinomial(probs, num_samples=4000, replacement=True)
    assert draws.shape == (2, 4000) and draws.dtype == mg.int64
    counts = np.stack([np.bincount(row, minlength=3) for row in draws.numpy()]) / 4000
    np.testing.assert_allclose(counts, probs.numpy(), atol=0.03)     # ~5 standard errors
    unique = mg.multinomial(mg.ones(5), 5, generator=mg.Generator().manual_seed(1))
    assert sorted(unique.tolist()) == list(range(5))
    with pytest.raises(ValueError, match="without replacement"):
        mg.multinomial(probs, 4)          # more than the 3 categories (torch: a RuntimeError)
    with pytest.raises(ValueError, match="non-negative"):
        mg.multinomial(mg.tensor([0.5, -0.1]), 1)

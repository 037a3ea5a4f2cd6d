"""Memory formats against PyTorch: ``mg.channels_last`` and its kin, the strides and the
``is_contiguous`` answers of ``to``, ``contiguous``, ``clone``, the ``*_like`` factories,
``mg.empty`` and ``Module.to`` for views of every kind, torch's errors, the copies as graph
nodes (values and gradients unchanged, float64 and float32), and the ops that keep a
channels-last input channels-last (conv2d and the poolings by a copy at the end)."""

import pickle

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm.ops import memory_formats

RNG = np.random.default_rng(0)
FORMATS = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")


def fmt(L, name):
    return getattr(L, name)


def both(array, requires_grad=False):
    return (torch.tensor(array, requires_grad=requires_grad),
            mg.tensor(array, requires_grad=requires_grad))


def outcome(call):
    """``("ok", value)`` or ``(exception class name, message)``: torch's and ours compared."""
    try:
        return "ok", call()
    except (RuntimeError, TypeError) as error:
        return type(error).__name__, str(error)


# ----- the objects ----------------------------------------------------------------------------
def test_the_formats_print_compare_and_pickle_as_torchs():
    for name in FORMATS:
        ours, theirs = fmt(mg, name), fmt(torch, name)
        assert repr(ours) == repr(theirs) == str(ours) == f"torch.{name}"
        assert isinstance(ours, mg.memory_format)
        assert pickle.loads(pickle.dumps(ours)) is ours
        assert ours == ours and hash(ours) == hash(ours)
    assert mg.channels_last != mg.contiguous_format
    with pytest.raises(TypeError, match="cannot create 'torch.memory_format' instances"):
        mg.memory_format()
    assert {name for name in FORMATS} <= set(mg.__all__)


# ----- strides of every kind of view, against torch's answers ---------------------------------
def random_view(L, base, rng):
    """A view of ``base`` (a float64 tensor of 4 or 5 dims) drawn by ``rng``: a permutation,
    a channels-last copy, slices with steps, an expanded dim."""
    x = L.tensor(base)
    ndim = x.ndim
    choice = rng.integers(5)
    if choice == 0:
        x = x.permute(*rng.permutation(ndim).tolist())
    elif choice == 1:
        x = x.to(memory_format=L.channels_last if ndim == 4 else L.channels_last_3d)
    elif choice == 2:           # a channels-last array viewed as (N, C, ...)
        x = x.permute(0, *range(2, ndim), 1).contiguous().permute(0, ndim - 1, *range(1, ndim - 1))
    if rng.random() < 0.5:
        dim = int(rng.integers(ndim))
        x = x.narrow(dim, 0, max(1, x.shape[dim] - 1))
    if rng.random() < 0.4:
        dim = int(rng.integers(ndim))
        index = [slice(None)] * ndim
        index[dim] = slice(None, None, 2)
        x = x[tuple(index)]
    if rng.random() < 0.2:
        dim = int(rng.integers(ndim))
        x = x.narrow(dim, 0, 1).expand(*[3 if d == dim else n for d, n in enumerate(x.shape)])
    return x


def strides(y):
    """y's strides where they place elements: a size-1 dim's is any number (torch keeps the
    one it was given, which a layout here cannot always hold: docs/pytorch.md)."""
    return tuple(s if n > 1 else None for n, s in zip(y.shape, y.stride()))


def format_answers(L, x, name):
    """What each op answers about x with ``memory_format=`` the format ``name``."""
    form = fmt(L, name)

    def copied(y):
        return y is x, strides(y)
    return {("is_contiguous", name): outcome(lambda: x.is_contiguous(memory_format=form)),
            ("to", name): outcome(lambda: copied(x.to(memory_format=form))),
            ("contiguous", name): outcome(lambda: copied(x.contiguous(memory_format=form))),
            ("clone", name): outcome(lambda: strides(x.clone(memory_format=form))),
            ("empty_like", name): outcome(
                lambda: strides(L.empty_like(x, memory_format=form))),
            ("to float32", name): outcome(
                lambda: strides(x.to(L.float32, memory_format=form)))}


def layout_answers(L, x):
    """Everything a format question answers about x, as comparable values."""
    out = {"stride": x.stride()}
    for name in FORMATS:
        out.update(format_answers(L, x, name))
    out["clone"] = strides(x.clone())
    out["to float32"] = strides(x.to(L.float32))
    out["zeros_like"] = strides(L.zeros_like(x))
    return out


@pytest.mark.parametrize("ndim", [4, 5])
def test_stride_answers_match_torchs_for_random_views(ndim):
    rng = np.random.default_rng(ndim)
    checked = 0
    for case in range(120):
        shape = [int(n) for n in rng.integers(1, 5, ndim)]
        base = rng.standard_normal(shape)
        seed = int(rng.integers(1 << 30))
        theirs = random_view(torch, base, np.random.default_rng(seed))
        ours = random_view(mg, base, np.random.default_rng(seed))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        if ours.stride() != theirs.stride():
            continue        # a view whose size-1 dims NumPy strides otherwise: not ours to read
        checked += 1
        expected, got = layout_answers(torch, theirs), layout_answers(mg, ours)
        for key, value in expected.items():
            if value[0] != "ok" and got[key][0] == value[0]:
                continue                         # the same error class; messages below
            assert got[key] == value, (case, shape, theirs.stride(), key)
    assert checked > 100


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 1, 1), (2, 1, 4, 5), (1, 3, 1, 4),
                                   (2, 3, 4, 5, 2), (3, 1, 1, 1, 1)])
def test_a_format_copy_and_its_answers_match_torchs(shape):
    base = RNG.standard_normal(shape)
    for name in FORMATS:
        assert format_copy(torch, base, name) == format_copy(mg, base, name), name


def format_copy(L, base, name):
    # x.to(memory_format=) of a row-major x: the error, or the strides and the answers
    x = L.tensor(base)
    y = outcome(lambda: x.to(memory_format=fmt(L, name)))
    if y[0] != "ok":
        return y[0]
    return y[1].stride(), [y[1].is_contiguous(memory_format=fmt(L, f)) for f in FORMATS]


# ----- errors -------------------------------------------------------------------------------
ERRORS = {
    "to a channels-last of 2-D": lambda L: L.ones(3, 4).to(memory_format=L.channels_last),
    "to channels_last_3d of 4-D": lambda L: L.ones(1, 2, 3, 4).to(
        memory_format=L.channels_last_3d),
    "contiguous of 5-D": lambda L: L.ones(1, 2, 3, 4, 5).contiguous(
        memory_format=L.channels_last),
    "clone of 3-D": lambda L: L.ones(2, 3, 4).clone(memory_format=L.channels_last),
    "empty_like of 2-D": lambda L: L.empty_like(L.ones(2, 3), memory_format=L.channels_last),
    "empty of 2-D": lambda L: L.empty(2, 3, memory_format=L.channels_last),
    "empty preserving": lambda L: L.empty(2, 3, memory_format=L.preserve_format),
    "contiguous preserving a transpose": lambda L: L.ones(2, 3).t().contiguous(
        memory_format=L.preserve_format),
    "contiguous of None": lambda L: L.ones(2).contiguous(memory_format=None),
    "is_contiguous of None": lambda L: L.ones(2).is_contiguous(memory_format=None),
    "zeros_like of an int": lambda L: L.zeros_like(L.ones(2), memory_format=3),
    "Module.to a channels-last Conv3d": lambda L: L.nn.Conv3d(2, 3, 2).to(
        memory_format=L.channels_last),
    "Module.to channels_last_3d Conv2d": lambda L: L.nn.Conv2d(2, 3, 2).to(
        memory_format=L.channels_last_3d),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_torchs(name):
    theirs = outcome(lambda: ERRORS[name](torch))
    ours = outcome(lambda: ERRORS[name](mg))
    assert theirs[0] != "ok" and ours[0] == theirs[0]
    if "None" in name or "int" in name or "required rank" in theirs[1]:
        assert ours[1] == theirs[1]
    else:
        assert ours[1] in theirs[1] or theirs[1] in ours[1]


def test_the_answers_torch_gives_without_error():
    for L in (torch, mg):
        x = L.ones(2, 3, 4, 5)
        assert x.to(memory_format=None) is x
        assert x.contiguous(memory_format=L.preserve_format) is x
        assert x.is_contiguous(memory_format=L.preserve_format)
        assert not x.transpose(1, 2).is_contiguous(memory_format=L.preserve_format)
        assert not L.ones(3, 4).is_contiguous(memory_format=L.channels_last)
        assert x.clone(memory_format=None).stride() == (60, 20, 5, 1)
        assert L.empty(2, 3, memory_format=None).stride() == (3, 1)


def test_a_failed_module_conversion_changes_nothing():
    model = mg.nn.Sequential(mg.nn.Conv2d(2, 3, 2), mg.nn.Conv3d(3, 2, 2))
    weight = model[0].weight._array
    with pytest.raises(RuntimeError, match="required rank 4 tensor"):
        model.to(memory_format=mg.channels_last)
    assert model[0].weight._array is weight


# ----- the copies are graph nodes: values and gradients unchanged -----------------------------
COPIES = {
    "to": lambda L, x: x.to(memory_format=L.channels_last),
    "to float64": lambda L, x: x.to(L.float64, memory_format=L.channels_last),
    "contiguous": lambda L, x: x.contiguous(memory_format=L.channels_last),
    "clone": lambda L, x: x.clone(memory_format=L.channels_last),
    "back to row-major": lambda L, x: x.to(memory_format=L.channels_last).contiguous(),
    "clone preserving": lambda L, x: x.permute(0, 2, 3, 1)[:, ::2].clone(),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", COPIES)
def test_a_copy_to_a_format_passes_the_gradient_on(name, dtype):
    base = RNG.standard_normal((2, 3, 4, 5)).astype(dtype)
    results = []
    for L in (torch, mg):
        x = L.tensor(base, requires_grad=True)
        y = COPIES[name](L, x)
        weights = L.tensor(np.arange(y.numel(), dtype=dtype).reshape(y.shape))
        (y * weights).sum().backward()
        results.append((y.detach().numpy(), y.stride(), y.requires_grad, x.grad.numpy(),
                        x.grad.stride()))
    (values, stride, requires, grad, grad_stride), expected = results[1], results[0]
    np.testing.assert_array_equal(values, expected[0])           # a copy: the same numbers
    assert (stride, requires, grad_stride) == (expected[1], expected[2], expected[4])
    np.testing.assert_array_equal(grad, expected[3])


def test_a_channels_last_leaf_gets_a_channels_last_grad_and_double_backward_runs():
    base = RNG.standard_normal((2, 3, 4, 5))
    results = []
    for L in (torch, mg):
        x = L.tensor(base).to(memory_format=L.channels_last).requires_grad_()
        y = x.contiguous()
        (g,) = L.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad((g * L.tensor(base)).sum(), x)
        (x.clone() * 2).sum().backward()
        results.append((g.detach().numpy(), gg.numpy(), x.grad.stride(), x.is_leaf))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12)
    assert results[1][2:] == results[0][2:] == ((60, 1, 15, 3), True)


# ----- the factories --------------------------------------------------------------------------
LIKES = {
    "empty_like": lambda L, x, **kw: L.empty_like(x, **kw),
    "zeros_like": lambda L, x, **kw: L.zeros_like(x, **kw),
    "ones_like": lambda L, x, **kw: L.ones_like(x, **kw),
    "full_like": lambda L, x, **kw: L.full_like(x, 2.5, **kw),
    "rand_like": lambda L, x, **kw: L.rand_like(x, **kw),
    "randn_like": lambda L, x, **kw: L.randn_like(x, **kw),
    "randint_like": lambda L, x, **kw: L.randint_like(x, 7, **kw),
}


@pytest.mark.parametrize("name", LIKES)
def test_the_like_factories_lay_out_and_draw_as_torchs(name):
    base = RNG.standard_normal((2, 3, 4, 5))
    results = []
    for L in (torch, mg):
        cl = L.tensor(base).to(memory_format=L.channels_last)
        row = []
        for x, kw in ((cl, {}), (cl, {"memory_format": L.contiguous_format}),
                      (L.tensor(base), {"memory_format": L.channels_last}),
                      (cl[:, :, ::2], {}), (L.tensor(base).transpose(1, 3), {}),
                      (cl, {"dtype": L.float32})):
            L.manual_seed(4)
            y = LIKES[name](L, x, **kw)
            row.append((y.stride(), str(y.dtype).replace("torch.", "")))
            if name not in ("empty_like",):
                row.append(y.numpy().tolist())          # rand*: drawn in memory order
        results.append(row)
    assert results[1] == results[0]


def test_empty_of_a_format():
    for shape, name in (((2, 3, 4, 5), "channels_last"), ((2, 3, 4, 5, 6), "channels_last_3d"),
                        ((2, 3, 4, 5), "contiguous_format"), ((2, 3, 1, 1), "channels_last")):
        assert mg.empty(*shape, memory_format=fmt(mg, name)).stride() == \
            torch.empty(*shape, memory_format=fmt(torch, name)).stride()


# ----- Module.to --------------------------------------------------------------------------
def test_module_to_lays_out_4d_parameters_buffers_and_grads_as_torchs():
    results = []
    for L in (torch, mg):
        L.manual_seed(0)
        model = L.nn.Sequential(L.nn.Conv2d(3, 4, 3), L.nn.BatchNorm2d(4),
                                L.nn.Conv2d(4, 2, 1), L.nn.Flatten(), L.nn.Linear(2 * 4, 3))
        model[0].weight.grad = L.ones(4, 3, 3, 3)
        weight = model[0].weight
        assert model.to(memory_format=L.channels_last) is model
        assert model[0].weight is weight
        strides = [p.stride() for p in model.parameters()]
        strides += [b.stride() for b in model.buffers()] + [weight.grad.stride()]
        model.to(L.float64, memory_format=L.channels_last)
        x = L.tensor(RNG.standard_normal((2, 3, 4, 4))).to(memory_format=L.channels_last)
        with L.no_grad():
            model[0].weight.copy_(L.tensor(np.linspace(-1, 1, 108).reshape(4, 3, 3, 3)))
        y = model[:3](x)
        results.append((strides, model[0].weight.stride(), y.stride(),
                        model[2].weight.stride()))
    assert results[1] == results[0]
    m3 = mg.nn.Conv3d(2, 3, 2).to(memory_format=mg.channels_last_3d)
    assert m3.weight.stride() == torch.nn.Conv3d(2, 3, 2).to(
        memory_format=torch.channels_last_3d).weight.stride()


# ----- ops that keep channels-last ----------------------------------------------------------
def _conv(L, x, w, **kw):
    bias = L.tensor(np.linspace(-1, 1, w.shape[0]), dtype=x.dtype)
    return L.nn.functional.conv2d(x, w.to(x.dtype), bias, **kw)


OPS = {
    "conv2d": lambda L, x: _conv(L, x, L.tensor(RNG_W[0]), padding=1),
    "conv2d stride 2": lambda L, x: _conv(L, x, L.tensor(RNG_W[0]), stride=2),
    "conv2d dilated": lambda L, x: _conv(L, x, L.tensor(RNG_W[0]), dilation=2),
    "conv2d groups": lambda L, x: _conv(L, x, L.tensor(RNG_W[1]), groups=2),
    "conv2d 1x1": lambda L, x: _conv(L, x, L.tensor(RNG_W[2])),
    "max_pool2d": lambda L, x: L.nn.functional.max_pool2d(x, 2),
    "max_pool2d padded": lambda L, x: L.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True),
    "avg_pool2d": lambda L, x: L.nn.functional.avg_pool2d(x, 2),
    "avg_pool2d padded": lambda L, x: L.nn.functional.avg_pool2d(x, 3, 2, 1),
    "lp_pool2d": lambda L, x: L.nn.functional.lp_pool2d(x, 2, 2),
    "adaptive_avg_pool2d": lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (2, 3)),
    "adaptive_max_pool2d": lambda L, x: L.nn.functional.adaptive_max_pool2d(x, 3),
    "BatchNorm2d": lambda L, x: L.nn.BatchNorm2d(4).to(x.dtype)(x),
    "BatchNorm2d eval": lambda L, x: L.nn.BatchNorm2d(4).to(x.dtype).eval()(x),
    "relu": lambda L, x: L.relu(x),
    "gelu, exp, * 2": lambda L, x: L.nn.functional.gelu(x).exp() * 2,
    "add of two": lambda L, x: x + x.sin(),
    "add of a (C, 1, 1)": lambda L, x: x + L.tensor(np.linspace(0, 1, 4).reshape(4, 1, 1)),
    "dropout": lambda L, x: L.nn.functional.dropout(x, 0.3),
    "mean over H, W": lambda L, x: x.mean((2, 3), keepdim=True).expand_as(x) * x,
}
RNG_W = [RNG.standard_normal(s) for s in ((3, 4, 3, 3), (6, 2, 3, 3), (5, 4, 1, 1))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", OPS)
def test_ops_keep_a_channels_last_input_channels_last_as_torch(name, dtype):
    base = RNG.standard_normal((2, 4, 7, 6)).astype(dtype)
    results = []
    for L in (torch, mg):
        x = L.tensor(base).to(memory_format=L.channels_last).requires_grad_()
        L.manual_seed(2)
        y = OPS[name](L, x if dtype == "float64" else x)
        if dtype == "float32" and y.dtype != x.dtype:
            y = y.to(x.dtype)
        upstream = L.tensor(np.cos(np.arange(y.numel())).reshape(y.shape).astype(dtype))
        (y * upstream).sum().backward()
        results.append((y.detach().numpy(), y.stride(),
                        y.is_contiguous(memory_format=L.channels_last), x.grad.numpy(),
                        x.grad.stride()))
    (values, stride, is_cl, grad, grad_stride), expected = results[1], results[0]
    assert is_cl and expected[2]
    assert stride == expected[1] and grad_stride == expected[4]
    tolerance = 1e-10 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(values, expected[0], rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(grad, expected[3], rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_channels_last_weight_makes_conv2d_channels_last(dtype):
    x_array, w_array = RNG.standard_normal((2, 4, 6, 6)), RNG.standard_normal((3, 4, 3, 3))
    strides = []
    for L in (torch, mg):
        x, w = L.tensor(x_array.astype(dtype)), L.tensor(w_array.astype(dtype))
        w = w.to(memory_format=L.channels_last)
        strides.append(L.nn.functional.conv2d(x, w).stride())
        strides.append(L.nn.functional.conv2d(x[:, :, ::2], w.contiguous()).stride())
    assert strides[2:] == strides[:2]


def test_max_pool_indices_and_3d_pooling_follow_torchs_layouts():
    x4, x5 = RNG.standard_normal((2, 3, 6, 6)), RNG.standard_normal((2, 3, 4, 4, 4))
    results = []
    for L in (torch, mg):
        F = L.nn.functional
        a = L.tensor(x4).to(memory_format=L.channels_last)
        b = L.tensor(x5).to(memory_format=L.channels_last_3d)
        values, indices = F.max_pool2d(a, 2, return_indices=True)
        _, adaptive_indices = F.adaptive_max_pool2d(a, 3, return_indices=True)
        results.append([indices.stride(), indices.numpy().tolist(), adaptive_indices.stride(),
                        F.max_pool3d(b, 2).stride(), F.avg_pool3d(b, 2).stride(),
                        F.adaptive_avg_pool3d(b, 2).stride(), F.max_pool2d(a[0], 2).stride()])
    assert results[1] == results[0]


def test_the_layout_helpers_read_strides_as_torch():
    for shape, perm in (((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 3, 4, 5), (0, 1, 2, 3)),
                        ((2, 3, 1, 1), (0, 2, 3, 1)), ((1, 3, 1, 4, 2), (0, 2, 3, 4, 1))):
        array = np.empty([shape[d] for d in perm]).transpose(np.argsort(perm))
        tensor = torch.from_numpy(array)
        assert memory_formats.element_strides(array) == tensor.stride()
        expected = {torch.channels_last: "channels_last",
                    torch.channels_last_3d: "channels_last_3d"}
        suggested = memory_formats.suggest_memory_format(array)
        torch_says = [name for form, name in expected.items()
                      if tensor.ndim == (4 if name == "channels_last" else 5)
                      and tensor.to(memory_format=form) is tensor]
        assert suggested._name == (torch_says[0] if torch_says else "contiguous_format")


def test_make_tensor_takes_a_memory_format():
    results = []
    for L in (torch, mg):
        L.manual_seed(7)
        t = L.testing.make_tensor(2, 3, 4, 5, dtype=L.float64, device="cpu",
                                  memory_format=L.channels_last)
        results.append((t.stride(), t.numpy().tolist()))
    assert results[1] == results[0]

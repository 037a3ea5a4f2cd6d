"""Modules and functions of size 0, against PyTorch at test time.

PyTorch takes a size of 0 wherever an allocation of 0 elements is legal (a Linear of 0
inputs, a table of no rows, a convolution of 0 channels) and refuses a negative one (its
allocation's RuntimeError, or its own ValueError). Each case builds the module in both
libraries: the outcome (built, or the exception class, ours a subclass of torch's), then for
a built one its forward on an input of its (maybe empty) shape, the gradients of
``out.sum()``, the state dict's shapes and the repr.
"""

import warnings

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _vary(name, build, **defaults):
    # one case per size argument and per value 0, -1; the others at their defaults
    cases = []
    for key in defaults:
        for value in (0, -1):
            kwargs = dict(defaults, **{key: value})
            cases.append(pytest.param(build, kwargs, id=f"{name}-{key}={value}"))
    return cases


def _conv(cls):
    return lambda nn, i, o, g: getattr(nn, cls)(i, o, 1, groups=g)


def _by_features(cls, **options):
    return lambda nn, f: getattr(nn, cls)(f, **options)


CONSTRUCTIONS = [
    *_vary("Linear", lambda nn, i, o: nn.Linear(i, o), i=3, o=2),
    *_vary("Bilinear", lambda nn, a, b, o: nn.Bilinear(a, b, o), a=3, b=2, o=4),
    *_vary("Embedding", lambda nn, n, d: nn.Embedding(n, d), n=3, d=2),
    *_vary("EmbeddingBag", lambda nn, n, d: nn.EmbeddingBag(n, d), n=3, d=2),
    *[case for cls in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                       "ConvTranspose3d")
      for case in _vary(cls, _conv(cls), i=2, o=2, g=1)],
    *_vary("LazyConv2d", lambda nn, o: nn.LazyConv2d(o, 1), o=2)[:1],
    *_vary("LazyLinear", lambda nn, o: nn.LazyLinear(o), o=2)[:1],
    *_vary("LayerNorm", lambda nn, n: nn.LayerNorm([2, n]), n=3),
    *_vary("RMSNorm", lambda nn, n: nn.RMSNorm(n), n=3),
    *_vary("GroupNorm", lambda nn, c: nn.GroupNorm(1, c), c=2),
    *_vary("GroupNorm-groups", lambda nn, g: nn.GroupNorm(g, 2), g=1),
    *[case for cls in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm")
      for case in _vary(cls, _by_features(cls), f=2)],
    *[case for cls in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")
      for case in _vary(cls + "-affine", _by_features(cls, affine=True), f=2)],
    *_vary("InstanceNorm1d", _by_features("InstanceNorm1d"), f=2)[:1],
    *_vary("LocalResponseNorm", lambda nn, s: nn.LocalResponseNorm(s), s=2),
    *[case for cls in ("RNN", "LSTM", "GRU")
      for case in _vary(cls, lambda nn, i, h, n, cls=cls: getattr(nn, cls)(i, h, n),
                        i=2, h=3, n=1)],
    *[case for cls in ("RNNCell", "LSTMCell", "GRUCell")
      for case in _vary(cls, lambda nn, i, h, cls=cls: getattr(nn, cls)(i, h), i=2, h=3)],
    *_vary("MultiheadAttention", lambda nn, e, h: nn.MultiheadAttention(e, h), e=4, h=2),
    *_vary("MultiheadAttention-kv",
           lambda nn, k, v: nn.MultiheadAttention(4, 2, kdim=k, vdim=v), k=3, v=3),
    *_vary("TransformerEncoderLayer",
           lambda nn, d, h, f: nn.TransformerEncoderLayer(d, h, f), d=4, h=2, f=8),
    *_vary("TransformerDecoderLayer",
           lambda nn, f: nn.TransformerDecoderLayer(4, 2, f), f=8),
    *_vary("AdaptiveLogSoftmaxWithLoss",
           lambda nn, i, c: nn.AdaptiveLogSoftmaxWithLoss(i, c, [2]), i=3, c=5),
    *_vary("Unflatten", lambda nn, a: nn.Unflatten(1, (a, 2)), a=3),
    *_vary("AdaptiveAvgPool2d", lambda nn, o: nn.AdaptiveAvgPool2d(o), o=2),
    *_vary("PixelShuffle", lambda nn, r: nn.PixelShuffle(r), r=2),
    *_vary("Upsample", lambda nn, s: nn.Upsample(size=s), s=2),
]

# where torch's outcome is an accident of its implementation (docs/pytorch.md): a negative
# size it never allocates (a lazy module's, an InstanceNorm's without affine or running
# stats, GroupNorm's num_groups) builds there and fails at the first call (but
# InstanceNorm's); here it fails at construction, a RuntimeError and a ValueError
NOT_COPIED = {"LazyConv2d-o=-1", "LazyLinear-o=-1", "InstanceNorm1d-f=-1",
              "GroupNorm-groups-g=-1"}


def _outcome(nn, build, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return build(nn, **kwargs), None
        except Exception as error:      # noqa: BLE001 (the class is what is compared)
            return None, error


@pytest.mark.parametrize("build, kwargs", CONSTRUCTIONS)
def test_construction_outcome(build, kwargs, request):
    """Built in both, or ours raises a subclass of torch's exception."""
    _, theirs = _outcome(torch.nn, build, kwargs)
    _, ours = _outcome(mg.nn, build, kwargs)
    if request.node.callspec.id in NOT_COPIED:
        assert theirs is None and isinstance(ours, ValueError)
        assert isinstance(ours, RuntimeError)       # what torch raises at the first call
        return
    if theirs is None:
        assert ours is None, f"torch builds it, ours raises {ours!r}"
    else:
        assert isinstance(ours, type(theirs)), f"torch: {theirs!r}; ours: {ours!r}"


# ----- forward and backward of the modules torch builds ----------------------------------
def _array(shape, seed, integer=None):
    rng = np.random.default_rng(seed)
    if integer is not None:
        return rng.integers(0, max(integer, 1), size=shape) if integer else \
            np.zeros(shape, np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def _sync(ours, theirs):
    # torch's drawn values into ours, so the outputs compare value for value
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def _flat(out):
    if isinstance(out, tuple):
        return [o for item in out for o in _flat(item)]
    return [] if out is None else [out]


# (id, builder, inputs as (shape, integer range or None)); every builder runs as
# builder(nn) in eval mode, dropout 0
FORWARD = [
    ("Linear-in0", lambda nn: nn.Linear(0, 3), [((2, 0), None)]),
    ("Linear-out0", lambda nn: nn.Linear(3, 0), [((2, 3), None)]),
    ("Linear-both0", lambda nn: nn.Linear(0, 0), [((2, 0), None)]),
    ("Bilinear-in2=0", lambda nn: nn.Bilinear(2, 0, 3), [((4, 2), None), ((4, 0), None)]),
    ("Bilinear-out0", lambda nn: nn.Bilinear(2, 3, 0), [((4, 2), None), ((4, 3), None)]),
    ("Embedding-rows0", lambda nn: nn.Embedding(0, 3), [((0,), 0)]),
    ("Embedding-rows0-2d", lambda nn: nn.Embedding(0, 3), [((2, 0), 0)]),
    ("Embedding-dim0", lambda nn: nn.Embedding(4, 0), [((2, 3), 4)]),
    ("EmbeddingBag-dim0", lambda nn: nn.EmbeddingBag(4, 0, mode="sum"), [((2, 3), 4)]),
    ("EmbeddingBag-rows0", lambda nn: nn.EmbeddingBag(0, 3, mode="sum"), [((2, 0), 0)]),
    ("Conv1d-in0", lambda nn: nn.Conv1d(0, 2, 1), [((2, 0, 5), None)]),
    ("Conv1d-out0", lambda nn: nn.Conv1d(2, 0, 3), [((2, 2, 5), None)]),
    ("Conv2d-in0", lambda nn: nn.Conv2d(0, 2, 3, padding=1), [((1, 0, 4, 4), None)]),
    ("Conv2d-out0", lambda nn: nn.Conv2d(2, 0, 3), [((1, 2, 4, 4), None)]),
    ("Conv3d-out0", lambda nn: nn.Conv3d(2, 0, 1), [((1, 2, 2, 2, 2), None)]),
    ("ConvTranspose1d-in0", lambda nn: nn.ConvTranspose1d(0, 2, 3), [((2, 0, 4), None)]),
    ("ConvTranspose1d-out0", lambda nn: nn.ConvTranspose1d(2, 0, 3), [((2, 2, 4), None)]),
    ("ConvTranspose2d-out0", lambda nn: nn.ConvTranspose2d(2, 0, 2), [((1, 2, 3, 3), None)]),
    ("LayerNorm-0", lambda nn: nn.LayerNorm(0), [((2, 0), None)]),
    ("LayerNorm-2x0", lambda nn: nn.LayerNorm([2, 0]), [((3, 2, 0), None)]),
    ("RMSNorm-0", lambda nn: nn.RMSNorm(0), [((2, 0), None)]),
    ("GroupNorm-0", lambda nn: nn.GroupNorm(1, 0), [((2, 0, 4), None)]),
    ("BatchNorm1d-0", lambda nn: nn.BatchNorm1d(0), [((3, 0), None)]),
    ("BatchNorm2d-0", lambda nn: nn.BatchNorm2d(0), [((2, 0, 3, 3), None)]),
    ("InstanceNorm1d-0", lambda nn: nn.InstanceNorm1d(0, affine=True), [((2, 0, 4), None)]),
    ("LocalResponseNorm-0ch", lambda nn: nn.LocalResponseNorm(2), [((2, 0, 4), None)]),
    ("RNNCell-in0", lambda nn: nn.RNNCell(0, 3), [((2, 0), None)]),
    ("RNNCell-hidden0", lambda nn: nn.RNNCell(2, 0), [((2, 2), None)]),
    ("LSTMCell-in0", lambda nn: nn.LSTMCell(0, 3), [((2, 0), None)]),
    ("GRUCell-hidden0", lambda nn: nn.GRUCell(2, 0), [((2, 2), None)]),
    ("MultiheadAttention-kv0",
     lambda nn: nn.MultiheadAttention(4, 2, kdim=0, vdim=0),
     [((3, 2, 4), None), ((5, 2, 0), None), ((5, 2, 0), None)]),
    ("TransformerEncoderLayer-ff0",
     lambda nn: nn.TransformerEncoderLayer(4, 2, 0, dropout=0.0), [((3, 2, 4), None)]),
    ("AdaptiveLogSoftmaxWithLoss-in0",
     lambda nn: nn.AdaptiveLogSoftmaxWithLoss(0, 5, [2]), [((3, 0), None), ((3,), 5)]),
    ("Unflatten-0", lambda nn: nn.Unflatten(1, (0, 2)), [((2, 0), None)]),
    ("AdaptiveAvgPool1d-0", lambda nn: nn.AdaptiveAvgPool1d(0), [((2, 3, 4), None)]),
    ("AdaptiveMaxPool2d-0", lambda nn: nn.AdaptiveMaxPool2d(0), [((2, 3, 4, 4), None)]),
    ("PixelShuffle-0ch", lambda nn: nn.PixelShuffle(2), [((1, 0, 2, 2), None)]),
    ("Flatten-empty", lambda nn: nn.Flatten(), [((2, 0, 3), None)]),
    ("PixelUnshuffle-0ch", lambda nn: nn.PixelUnshuffle(2), [((1, 0, 4, 4), None)]),
    ("ChannelShuffle-0ch", lambda nn: nn.ChannelShuffle(2), [((1, 0, 4), None)]),
    ("LSTM-batch0", lambda nn: nn.LSTM(2, 3), [((4, 0, 2), None)]),
    ("MultiheadAttention-seq0", lambda nn: nn.MultiheadAttention(4, 2),
     [((0, 2, 4), None), ((0, 2, 4), None), ((0, 2, 4), None)]),
    ("TransformerEncoderLayer-seq0",
     lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), [((0, 2, 4), None)]),
]


def _run(lib, nn, build, specs):
    torch.manual_seed(0)
    module = build(nn)
    module.eval()
    inputs = []
    for index, (shape, integer) in enumerate(specs):
        array = _array(shape, index, integer)
        if lib is torch:
            tensor = torch.tensor(array)
            tensor.requires_grad_(integer is None)
        else:
            tensor = mg.tensor(array, requires_grad=integer is None)
        inputs.append(tensor)
    return module, inputs


def _bias_only(module, inputs):
    # a convolution of 0 input channels: every output is the bias, (N, out_channels, L')
    x = inputs[0]
    length = x.shape[2] + 2 * module.padding[0] - module.kernel_size[0] + 1
    shape = (x.shape[0], module.out_channels) + (length,) * (x.ndim - 2)
    bias = module.bias.detach().numpy().reshape((1, -1) + (1,) * (x.ndim - 2))
    return np.broadcast_to(bias, shape)


def _empty_like_input(module, inputs):
    return np.zeros(inputs[0].shape, np.float32)


def _unshuffled(module, inputs):
    n, c, h, w = inputs[0].shape
    r = module.downscale_factor
    return np.zeros((n, c * r * r, h // r, w // r), np.float32)


# torch's forward is an accident there, not copied (docs/pytorch.md): a convolution of 0
# input channels returns 0 output channels, where the sum over no channels is the bias;
# BatchNorm and an affine InstanceNorm of 0 channels raise IndexError, where F.batch_norm
# (and ours) return the empty output; PixelUnshuffle of 0 channels returns its input's shape
FORWARD_NOT_COPIED = {
    "Conv1d-in0": _bias_only, "Conv2d-in0": _bias_only,
    "BatchNorm1d-0": _empty_like_input, "BatchNorm2d-0": _empty_like_input,
    "InstanceNorm1d-0": _empty_like_input, "PixelUnshuffle-0ch": _unshuffled,
}
# torch's backward raises RuntimeError there (adaptive pooling to size 0 refuses an empty
# gradient; PixelShuffle's and ChannelShuffle's backward of 0 channels returns a wrongly
# shaped one): the gradient of an empty output is a zero one here
BACKWARD_NOT_COPIED = {"AdaptiveAvgPool1d-0", "AdaptiveMaxPool2d-0", "PixelShuffle-0ch",
                       "ChannelShuffle-0ch"}


def _check_zero_grads(tensors):
    for tensor in tensors:
        if tensor.requires_grad:
            assert tensor.grad is None or not np.any(tensor.grad.numpy())
            if tensor.grad is not None:
                assert tensor.grad.shape == tensor.shape


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
@pytest.mark.parametrize("name, build, specs", FORWARD, ids=[case[0] for case in FORWARD])
def test_forward_backward(name, build, specs):
    """Output values and shapes, the gradients of ``out.sum()``, state dict and repr."""
    theirs, t_inputs = _run(torch, torch.nn, build, specs)
    ours, m_inputs = _run(mg, mg.nn, build, specs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert repr(ours) == repr(theirs)
    _sync(ours, theirs)
    if name in FORWARD_NOT_COPIED:
        expected = FORWARD_NOT_COPIED[name](ours, m_inputs)
        try:
            t_shape = tuple(theirs(*t_inputs).shape)
        except IndexError:
            t_shape = None
        assert t_shape != expected.shape      # still torch's accident
        out = ours(*m_inputs)
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-6)
        out.sum().backward()
        assert m_inputs[0].grad.shape == m_inputs[0].shape
        return
    try:
        t_out = _flat(theirs(*t_inputs))
    except Exception as error:      # noqa: BLE001 (torch refuses it: ours must too)
        with pytest.raises(type(error)):
            ours(*m_inputs)
        return
    m_out = _flat(ours(*m_inputs))
    assert len(t_out) == len(m_out)
    for t, m in zip(t_out, m_out):
        assert tuple(m.shape) == tuple(t.shape)
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
    t_grads = [o for o in t_out if o.requires_grad]
    m_grads = [o for o in m_out if o.requires_grad]
    assert len(t_grads) == len(m_grads)
    if not t_grads:
        return
    sum(o.sum() for o in m_grads).backward()
    if name in BACKWARD_NOT_COPIED:
        with pytest.raises(RuntimeError):
            sum(o.sum() for o in t_grads).backward()
        _check_zero_grads(m_inputs)
        return
    sum(o.sum() for o in t_grads).backward()
    pairs = [(t, m) for t, m in zip(t_inputs, m_inputs) if t.requires_grad]
    pairs += list(zip(theirs.parameters(), ours.parameters()))
    for t, m in pairs:
        if t.grad is None:
            assert m.grad is None or not np.any(m.grad.numpy())
            continue
        assert m.grad is not None and tuple(m.grad.shape) == tuple(t.grad.shape)
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)


# ----- functional forms on empty inputs ---------------------------------------------------
def _pair(shape, seed, integer=None):
    array = _array(shape, seed, integer)
    if integer is not None:
        return torch.tensor(array), mg.tensor(array)
    return (torch.tensor(array, requires_grad=True), mg.tensor(array, requires_grad=True))


FUNCTIONAL = [
    ("linear-k0", lambda f, x, w, b: f.linear(x, w, b),
     [((2, 0), None), ((3, 0), None), ((3,), None)]),
    ("linear-out0", lambda f, x, w: f.linear(x, w), [((2, 3), None), ((0, 3), None)]),
    ("bilinear-in2=0", lambda f, a, b, w: f.bilinear(a, b, w),
     [((4, 2), None), ((4, 0), None), ((3, 2, 0), None)]),
    ("embedding-empty", lambda f, i, w: f.embedding(i, w), [((0,), 0), ((0, 3), None)]),
    ("embedding-dim0", lambda f, i, w: f.embedding(i, w), [((2, 2), 4), ((4, 0), None)]),
    ("conv1d-out0", lambda f, x, w: f.conv1d(x, w), [((2, 3, 5), None), ((0, 3, 2), None)]),
    ("conv2d-out0", lambda f, x, w, b: f.conv2d(x, w, b),
     [((1, 2, 4, 4), None), ((0, 2, 3, 3), None), ((0,), None)]),
    ("conv_transpose2d-out0", lambda f, x, w: f.conv_transpose2d(x, w),
     [((1, 2, 3, 3), None), ((2, 0, 2, 2), None)]),
    ("layer_norm-0", lambda f, x, w, b: f.layer_norm(x, (0,), w, b),
     [((2, 0), None), ((0,), None), ((0,), None)]),
    ("layer_norm-batch0", lambda f, x: f.layer_norm(x, (3,)), [((0, 3), None)]),
    ("rms_norm-0", lambda f, x: f.rms_norm(x, (0,)), [((4, 0), None)]),
    ("group_norm-ch0", lambda f, x: f.group_norm(x, 1), [((2, 0, 3), None)]),
    ("group_norm-batch0", lambda f, x: f.group_norm(x, 2), [((0, 4, 3), None)]),
    ("batch_norm-ch0", lambda f, x, m, v: f.batch_norm(x, m.detach(), v.detach(), training=True),
     [((3, 0), None), ((0,), None), ((0,), None)]),
    ("instance_norm-ch0", lambda f, x: f.instance_norm(x), [((2, 0, 4), None)]),
    ("softmax-empty", lambda f, x: f.softmax(x, dim=1), [((2, 0), None)]),
    ("adaptive_avg_pool2d-0", lambda f, x: f.adaptive_avg_pool2d(x, 0),
     [((1, 2, 3, 3), None)]),
    ("conv2d-in0", lambda f, x, w, b: f.conv2d(x, w, b),
     [((1, 0, 4, 4), None), ((3, 0, 3, 3), None), ((3,), None)]),
]


FUNCTIONAL_BACKWARD_NOT_COPIED = {"adaptive_avg_pool2d-0"}     # as BACKWARD_NOT_COPIED


@pytest.mark.parametrize("name, call, specs", FUNCTIONAL, ids=[c[0] for c in FUNCTIONAL])
def test_functional_empty(name, call, specs):
    """The functional form: outcome, output and the inputs' gradients as torch's."""
    pairs = [_pair(shape, seed, integer) for seed, (shape, integer) in enumerate(specs)]
    if name == "conv2d-in0":        # torch's 0 output channels: not copied (see above)
        x, weight, bias = (m for _, m in pairs)
        out = call(F, x, weight, bias)
        assert call(TF, *[t for t, _ in pairs]).shape[1] == 0
        expected = np.broadcast_to(bias.detach().numpy()[None, :, None, None], (1, 3, 2, 2))
        np.testing.assert_allclose(out.detach().numpy(), expected)
        out.sum().backward()
        assert weight.grad.shape == weight.shape and x.grad.shape == x.shape
        np.testing.assert_allclose(bias.grad.numpy(), np.full(3, 4.0))
        return
    try:
        t_out = call(TF, *[t for t, _ in pairs])
    except Exception as error:      # noqa: BLE001 (the class is what is compared)
        with pytest.raises(type(error)):
            call(F, *[m for _, m in pairs])
        return
    m_out = call(F, *[m for _, m in pairs])
    assert tuple(m_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    m_out.sum().backward()
    if name in FUNCTIONAL_BACKWARD_NOT_COPIED:
        with pytest.raises(RuntimeError):
            t_out.sum().backward()
        _check_zero_grads([m for _, m in pairs])
        return
    t_out.sum().backward()
    for t, m in pairs:
        if t.grad is None:          # not reached (a detached running statistic)
            assert m.grad is None
        else:
            assert tuple(m.grad.shape) == tuple(t.grad.shape)
            np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), atol=1e-6)


# ----- nn.init on empty weights: the outcome and the warnings' classes ---------------------
INITS = [
    ("uniform_", ()), ("normal_", ()), ("constant_", (0.5,)), ("ones_", ()), ("zeros_", ()),
    ("xavier_uniform_", ()), ("xavier_normal_", ()), ("kaiming_uniform_", ()),
    ("kaiming_normal_", ()), ("trunc_normal_", ()), ("orthogonal_", ()), ("sparse_", (0.5,)),
    ("eye_", ()),
]


def _init_outcome(lib_init, empty, fn, args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            getattr(lib_init, fn)(empty, *args)
            error = None
        except Exception as exc:        # noqa: BLE001 (the class is what is compared)
            error = exc
    return error, sorted({w.category.__name__ for w in caught})


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)], ids=str)
@pytest.mark.parametrize("fn, args", INITS, ids=[i[0] for i in INITS])
def test_init_on_empty_weight(fn, args, shape):
    """Each init on an empty 2-D weight: raises as torch's (a subclass) or runs, with the
    same warning classes ("Initializing zero-element tensors is a no-op")."""
    t_error, t_warnings = _init_outcome(torch.nn.init, torch.empty(shape), fn, args)
    m_error, m_warnings = _init_outcome(mg.nn.init, mg.zeros(*shape), fn, args)
    if t_error is None:
        assert m_error is None, repr(m_error)
    else:
        assert isinstance(m_error, type(t_error)), f"torch {t_error!r}, ours {m_error!r}"
    assert m_warnings == t_warnings


@pytest.mark.parametrize("build", [
    lambda nn: nn.Linear(0, 3), lambda nn: nn.Conv2d(0, 2, 3), lambda nn: nn.Conv1d(2, 0, 1),
    lambda nn: nn.Embedding(0, 3), lambda nn: nn.Bilinear(2, 0, 1)], ids=[
    "Linear-in0", "Conv2d-in0", "Conv1d-out0", "Embedding-rows0", "Bilinear-in2=0"])
def test_construction_warnings(build):
    """Building an empty module warns as torch's does (an init of an empty weight)."""
    def categories(nn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            build(nn)
        return sorted({w.category.__name__ for w in caught})
    assert categories(mg.nn) == categories(torch.nn)


@pytest.mark.parametrize("cls", ["LazyConv1d", "LazyConvTranspose1d"])
def test_lazy_convolution_of_0_channels(cls):
    """A lazy convolution first called on 0 channels becomes the plain module of
    ``in_channels=0`` as torch's, drawing nothing and warning of nothing; its forward is the
    plain module's (a ConvTranspose refuses it with torch's class)."""
    x = np.ones((2, 0, 4), np.float32)
    theirs = getattr(torch.nn, cls)(3, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = getattr(mg.nn, cls)(3, 1)
        state = mg.default_generator.get_state()
        try:
            theirs(torch.tensor(x))
        except RuntimeError:
            with pytest.raises(RuntimeError):
                ours(x)
        else:
            assert ours(x).shape == (2, 3, 4)       # the bias, not torch's 0 channels
    assert repr(ours) == repr(theirs) and type(ours).__name__ == type(theirs).__name__
    assert ours.bias.shape == (3,) and not np.any(ours.bias.detach().numpy())
    np.testing.assert_array_equal(mg.default_generator.get_state(), state)


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
def test_empty_conv_bias_draws_nothing():
    """A convolution of 0 input channels draws no bias (torch's leaves it as allocated):
    the generator's next draw is the one it would be without the module."""
    mg.manual_seed(3)
    mg.nn.Conv2d(0, 2, 3)
    after = mg.rand(4).numpy()
    mg.manual_seed(3)
    np.testing.assert_array_equal(mg.rand(4).numpy(), after)

"""Three of torch's behaviours against PyTorch: a Python int beside an integer tensor that
its dtype cannot hold (wrapped into the dtype where the op computes in it, read as it is
where the op computes in floating point, checked where torch converts it with a check,
torch's OverflowError past [-2**63, 2**64)); ``F.cross_entropy`` with class-probability
targets; and ``nn.Conv1d``/``nn.Conv2d`` with the padding modes other than "zeros". Float64
values and gradients of a random upstream, result dtypes, and torch's exception classes."""

import numpy as np
import pytest
import torch
from test_vocabulary_more import data, same

import microgradnorm as mg

RNG = np.random.default_rng(2)

# ----- a Python int beside an integer tensor --------------------------------------------------
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8]
# in each dtype's range, past it, past int64 into uint64, and past what torch reads
NUMBERS = [3, 300, -300, 70_000, 2**33 + 5, -(2**40) - 7, 2**63 - 1, 2**63, 2**64 - 1,
           -(2**63), 2**64, -(2**63) - 1, 2**70]

ARITHMETIC = {
    "x + n": lambda lib, x, n: x + n,
    "n + x": lambda lib, x, n: n + x,
    "x - n": lambda lib, x, n: x - n,
    "n - x": lambda lib, x, n: n - x,
    "x * n": lambda lib, x, n: x * n,
    "n * x": lambda lib, x, n: n * x,
    "add alpha": lambda lib, x, n: lib.add(x, n, alpha=2),
    "x.sub": lambda lib, x, n: x.sub(n),
    "rsub": lambda lib, x, n: lib.rsub(x, n),
    "sub(n, x)": lambda lib, x, n: lib.sub(n, x),
    "mul(n, x)": lambda lib, x, n: lib.mul(n, x),
    "add_": lambda lib, x, n: x.clone().add_(n),
    "sub_": lambda lib, x, n: x.clone().sub_(n),
    "mul_": lambda lib, x, n: x.clone().mul_(n),
    "add_ alpha": lambda lib, x, n: x.clone().add_(n, alpha=3),
    "x += n": lambda lib, x, n: _augmented(x.clone(), n),
    # the ops that compute in the tensor's dtype, already wrapping (ops/logical.py)
    "x < n": lambda lib, x, n: x < n,
    "x == n": lambda lib, x, n: x == n,
    "x & n": lambda lib, x, n: x & n,
    "x // n": lambda lib, x, n: x // n,
    "x % n": lambda lib, x, n: x % n,
    "div floor": lambda lib, x, n: lib.div(x, n, rounding_mode="floor"),
    # the ops that compute integers in floating point: the int as read, not wrapped
    "x / n": lambda lib, x, n: x / n,
    "n / x": lambda lib, x, n: n / x,
    "true_divide": lambda lib, x, n: lib.true_divide(x, n),
    "copysign": lambda lib, x, n: lib.copysign(x, n),
    "xlogy": lambda lib, x, n: lib.xlogy(x, n),
    "float_power": lambda lib, x, n: lib.float_power(n, x),
    "n ** x": lambda lib, x, n: n ** x,
}


def _augmented(x, n):
    x += n
    return x


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(ARITHMETIC))
def test_an_int_past_an_integer_dtype_gives_torchs_value_or_error(name, dtype):
    call = ARITHMETIC[name]
    for number in NUMBERS:
        for x in (np.array([3, 5, 100], dtype), np.array(7, dtype)):     # dims, and 0-d
            same(call, x, number)


def test_a_numpy_int_is_a_python_int_to_torch():
    for number in (np.int64(300), np.int32(-129), np.int64(-(2**63))):
        for x in (np.array([3, 5, 100], np.int8), np.array(7, np.int8)):
            same(lambda lib, x, n: x + n, x, number)
            same(lambda lib, x, n: x < n, x, number)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_a_float_tensor_reads_an_int_as_torch_and_keeps_its_gradient(dtype):
    # float arithmetic, but torch reads no int past [-2**63, 2**64): its OverflowError
    for number in (3, 2**63, 2**64 - 1, -(2**63), 2**64, -(2**63) - 1, 2**70):
        for call in (lambda lib, x, n: x * n, lambda lib, x, n: n - x,
                     lambda lib, x, n: x / n, lambda lib, x, n: x < n,
                     lambda lib, x, n: (x * 1).add_(n), lambda lib, x, n: x.clamp(max=n),
                     lambda lib, x, n: x.masked_fill(x > 0, n),
                     lambda lib, x, n: lib.where(x > 0, x, n)):
            same(call, data(2, 3).astype(dtype), number, atol=0, rtol=1e-6)


def test_the_float_path_keeps_its_node_and_dtype():
    x = mg.tensor(data(4).astype(np.float32), requires_grad=True)
    for y in (x + 1, x * 2, 1 - x, x / 2):
        assert y.dtype == np.float32 and y.grad_fn is not None


def test_true_division_of_integer_tensors_casts_each_straight_to_float():
    # int8 beside a 0-d int64 300: torch divides by 300.0, not by the 44 of 300 in int8
    small, big = np.array([1, 2, -100], np.int8), np.array(300)
    same(lambda lib, a, b: a / b, small, big)
    same(lambda lib, a, b: b / a, small, big)
    same(lambda lib, a, b: lib.atan2(a, b), small, big)
    same(lambda lib, a, b: lib.copysign(a, -b), small, big)
    same(lambda lib, a, b: a / b, np.array([True, False]), np.array([3, 7], np.uint8))


CHECKED = {
    # torch converts these numbers with a check (c10::checked_convert): a RuntimeError where
    # the dtype cannot hold one, -1 .. -max into an unsigned dtype wrapping
    "clamp max": lambda lib, x, n: x.clamp(max=n),
    "clamp min": lambda lib, x, n: lib.clamp(x, min=n),
    "clamp_": lambda lib, x, n: x.clone().clamp_(max=n),
    "where b": lambda lib, x, n: lib.where(x > 4, x, n),
    "where a": lambda lib, x, n: lib.where(x > 4, n, x),
    "fill_": lambda lib, x, n: x.clone().fill_(n),
    "masked_fill": lambda lib, x, n: x.masked_fill(x > 4, n),
    "full": lambda lib, x, n: lib.full((2,), n, dtype=x.dtype),
    "pow": lambda lib, x, n: x ** n,
    "alpha": lambda lib, x, n: lib.add(x, x, alpha=n),
    "sub_ alpha": lambda lib, x, n: x.clone().sub_(x, alpha=n),
    "addcmul value": lambda lib, x, n: lib.addcmul(x, x, x, value=n),
}


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(CHECKED))
def test_a_checked_conversion_refuses_what_torch_refuses(name, dtype):
    for number in (3, 127, 300, -1, -255, -256, 2**31, 2**63, 2**70):
        same(CHECKED[name], np.array([3, 5, 100], dtype), number)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_checked_conversion_of_a_float_past_the_dtype_raises_as_torchs(dtype):
    for number in (1e40, 7e4, 2.5):
        for call in (lambda lib, x, n: x.clamp(max=n), lambda lib, x, n: x.fill_(n),
                     lambda lib, x, n: lib.where(x > 0, x, n),
                     lambda lib, x, n: lib.add(x, x, alpha=n)):
            same(call, data(3).astype(dtype), number, grad=False, rtol=1e-3)


def test_an_int_past_int64_names_torchs_limit():
    x = mg.tensor([1, 2], dtype=mg.int8)
    with pytest.raises(OverflowError, match="int too big to convert"):
        x + 2**64
    with pytest.raises(OverflowError, match="can't convert negative int"):
        x * (-(2**63) - 1)


# ----- cross_entropy with class probabilities ---------------------------------------------
def _soft(*shape):
    # a probability per class along dim 1 (dim 0 for one sample)
    scores = RNG.standard_normal(shape)
    axis = 0 if len(shape) == 1 else 1
    return np.exp(scores) / np.exp(scores).sum(axis, keepdims=True)


def _cross_entropy(impl=None, **options):
    def call(lib, *tensors):
        extra = {"impl": impl} if lib is mg and impl else {}
        return lib.nn.functional.cross_entropy(*tensors, **options, **extra)
    return call


@pytest.mark.parametrize("shape", [(5,), (4, 5), (3, 5, 2), (2, 5, 3, 2)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("impl", ["fused", "composite"])
def test_cross_entropy_of_probabilities_matches_torch(shape, reduction, impl):
    # values and the gradients of input, target and weight, each a tensor requiring grad
    x, target, weight = data(*shape), _soft(*shape), RNG.uniform(0.2, 2.0, shape[:2][-1])
    same(lambda lib, x, t: _cross_entropy(impl, reduction=reduction)(lib, x, t), x, target)
    same(lambda lib, x, t, w: _cross_entropy(impl, reduction=reduction)(lib, x, t, w),
         x, target, weight)
    for smoothing in (0.2, 1.0):
        same(lambda lib, x, t, w, s: _cross_entropy(impl, reduction=reduction,
                                                    label_smoothing=s)(lib, x, t, w),
             x, target, weight, smoothing)
    # targets need not sum to 1, nor be positive: the formula, as torch's
    same(lambda lib, x, t: _cross_entropy(impl, reduction=reduction)(lib, x, t),
         x, data(*shape))


def test_cross_entropy_of_probabilities_dtypes_as_torch():
    # float32 logits with float64 targets: a float64 loss (whose gradients come of float32
    # log-probabilities, so compared at float32's tolerance); float16 targets: float32
    x32 = data(4, 5).astype(np.float32)
    same(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), x32, _soft(4, 5),
         grad=False, rtol=1e-6)
    same(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t.double()), x32,
         _soft(4, 5).astype(np.float32), rtol=1e-6)
    same(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), x32,
         _soft(4, 5).astype(np.float16), rtol=1e-3)
    same(lambda lib, x, t, w: lib.nn.functional.cross_entropy(x, t, w), x32,
         _soft(4, 5).astype(np.float32), RNG.uniform(0.5, 1.5, 5).astype(np.float32), rtol=1e-5)
    same(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), data(4, 5),
         _soft(4, 5).astype(np.float32))


def test_cross_entropy_of_probabilities_of_no_rows_as_torch():
    for reduction in ("mean", "sum", "none"):
        same(lambda lib, x, t, r: _cross_entropy(reduction=r)(lib, x, t),
             np.zeros((0, 5)), np.zeros((0, 5)), reduction, grad=False)


def test_cross_entropy_module_takes_probabilities():
    x, target, weight = data(6, 4), _soft(6, 4), RNG.uniform(0.5, 1.5, 4)
    same(lambda lib, x, t: lib.nn.CrossEntropyLoss(
        weight=lib.tensor(weight), label_smoothing=0.1)(x, t), x, target)
    same(lambda lib, x, t: lib.nn.CrossEntropyLoss(ignore_index=2)(x, t), x, target)


@pytest.mark.parametrize("target, options", [
    (np.ones((4, 5), np.int64), {}),                    # integers of the input's shape
    (np.ones((4, 5), bool), {}),
    (_soft(4, 5), {"ignore_index": 0}),                 # no class to ignore
    (_soft(4, 5), {"ignore_index": 3}),
    (_soft(4, 5), {"ignore_index": -1}),                # a negative one is taken
    (_soft(4, 5), {"weight": np.ones(4)}),
    (_soft(4, 5), {"label_smoothing": 1.5}),
    (_soft(4, 5), {"reduction": "batchmean"}),
    (_soft(3, 5), {}),                                  # another batch size: torch's ValueError
    (_soft(4, 4), {}),                                  # class indices' shape error
    (_soft(4, 5)[:, 0], {}),                            # floats as class indices
    (np.array([0, 1, 2]), {}),
])
def test_cross_entropy_refuses_what_torch_refuses(target, options):
    def call(lib, x, t):
        kwargs = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v
                  for k, v in options.items()}
        return lib.nn.functional.cross_entropy(x, t, **kwargs)
    same(call, data(4, 5), target, grad=False)


# ----- padding_mode of Conv1d and Conv2d ----------------------------------------------------
CONVS = [("Conv1d", (2, 3, 9), dict(kernel_size=3, padding=2)),
         ("Conv1d", (3, 9), dict(kernel_size=3, padding=1, stride=2)),             # unbatched
         ("Conv1d", (2, 3, 9), dict(kernel_size=4, padding="same", dilation=2)),
         ("Conv1d", (2, 3, 9), dict(kernel_size=3, padding="valid")),
         ("Conv2d", (2, 3, 7, 8), dict(kernel_size=3, padding=1)),
         ("Conv2d", (2, 3, 7, 8), dict(kernel_size=(3, 2), padding=(2, 1), stride=2)),
         ("Conv2d", (3, 7, 8), dict(kernel_size=3, padding=1, groups=3)),           # unbatched
         ("Conv2d", (2, 3, 7, 8), dict(kernel_size=(3, 4), padding="same", dilation=(1, 2))),
         ("Conv2d", (2, 3, 3, 4), dict(kernel_size=3, padding=(3, 2)))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, pad", [((3, 6), (2, 1)), ((2, 3, 6), (2, 1)),
                                        ((2, 3, 5, 6), (1, 2, 2, 1)), ((3, 5, 6), (1, 2, 2, 1)),
                                        ((2, 3, 5, 6), (0, 1)), ((2, 3, 3), (3, 0)),
                                        ((2, 3, 3), (4, 0))])
def test_pad_modes_conv_uses_match_torch(mode, shape, pad):
    # what a padding_mode pads with: values, gradients, and the pads a mode refuses
    same(lambda lib, x: lib.nn.functional.pad(x, pad, mode=mode), data(*shape))


def _conv(cls, options):
    # the module with the weight and bias given: its output
    def call(lib, x, weight, bias):
        module = getattr(lib.nn, cls)(3, 6, **options).double()
        module.weight, module.bias = lib.nn.Parameter(weight), lib.nn.Parameter(bias)
        return module(x)
    return call


@pytest.mark.parametrize("cls, shape, options", CONVS)
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "zeros"])
def test_conv_padding_modes_match_torch(cls, shape, options, mode):
    # values and the gradients of input, weight and bias; a pad past what reflect can mirror
    # is torch's RuntimeError
    kernel = options["kernel_size"]
    kernel = kernel if isinstance(kernel, tuple) else (kernel,) * (1 if cls == "Conv1d" else 2)
    weight, bias = data(6, 3 // options.get("groups", 1), *kernel), data(6)
    same(_conv(cls, dict(options, padding_mode=mode)), data(*shape), weight, bias)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "zeros"])
def test_conv_repr_and_state_dict_show_padding_mode_as_torchs(mode):
    for cls, args in (("Conv1d", (2, 3, 3)), ("Conv2d", (2, 3, 3))):
        for options in (dict(padding=1), dict(padding="same", bias=False)):
            ours = getattr(mg.nn, cls)(*args, padding_mode=mode, **options)
            theirs = getattr(torch.nn, cls)(*args, padding_mode=mode, **options)
            assert repr(ours) == repr(theirs)
            assert list(ours.state_dict()) == list(theirs.state_dict())
            assert ours.padding_mode == mode
            assert list(ours._reversed_padding_repeated_twice) == \
                list(theirs._reversed_padding_repeated_twice)


@pytest.mark.parametrize("cls", ["Conv2d", "ConvTranspose1d", "ConvTranspose2d"])
@pytest.mark.parametrize("mode", ["reflect", "mirror"])
def test_padding_modes_refused_as_torchs(cls, mode):
    # a mode torch does not know, and any but "zeros" for a transposed convolution
    try:
        getattr(torch.nn, cls)(2, 3, 3, padding_mode=mode)
    except ValueError:
        with pytest.raises(ValueError):
            getattr(mg.nn, cls)(2, 3, 3, padding_mode=mode)
    else:
        assert getattr(mg.nn, cls)(2, 3, 3, padding_mode=mode).padding_mode == mode

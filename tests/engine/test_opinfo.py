"""PyTorch's own sample inputs (``op_db`` OpInfos) for every op this package has, run
through an adapter: float64, the forward value and the gradient of every input that
requires grad, compared with PyTorch's. A sample is skipped only when it uses an argument
(or argument value) this package does not have; each skip says which.

Needs ``expecttest`` (the ``test`` extra) to import torch's test tables; at most
``MAX_SAMPLES`` samples per op keep the file fast.
"""

import numbers

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F

pytestmark = pytest.mark.slow          # torch's tables take seconds to import
torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from opinfo_generic import tensors_of  # noqa: E402

MAX_SAMPLES = 24
RTOL, ATOL = 1e-7, 1e-9


class Unsupported(Exception):
    """The sample uses an argument this package does not have (the message says which)."""


# ----- conversion -----------------------------------------------------------------------------
def to_mg(value):
    if isinstance(value, torch.Tensor):
        data = value.detach().numpy().copy()
        return mg.tensor(data, requires_grad=value.requires_grad and data.dtype.kind == "f")
    if isinstance(value, (list, tuple)):
        return type(value)(to_mg(v) for v in value)
    return value


def only(kwargs, allowed, op):
    extra = sorted(set(kwargs) - set(allowed))
    if extra:
        raise Unsupported(f"{op}: argument(s) {extra} not supported")


def dims(dim):
    """torch's dim (None, int, list/tuple; [] means all for sum/mean/amax) as an axis."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


# Each adapter: (input, args, kwargs) in microgradnorm values -> output Tensor(s).
def reduction(method):
    def run(x, args, kwargs):
        only(kwargs, ("dim", "keepdim"), method)
        dim = args[0] if args else kwargs.get("dim")
        keepdim = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        if dim is None and method in ("max", "min"):    # x.max(None) is torch's TypeError
            return getattr(x, method)(keepdims=keepdim)
        return getattr(x, method)(dims(dim), keepdims=keepdim)
    return run


def max_with_dim(x, args, kwargs, method="max"):
    only(kwargs, (), method)
    return getattr(x, method)(args[0], keepdims=args[1] if len(args) > 1 else False)


def min_with_dim(x, args, kwargs):
    return max_with_dim(x, args, kwargs, "min")


def var(x, args, kwargs, method="var"):
    only(kwargs, ("dim", "keepdim", "unbiased", "correction"), method)
    unbiased = kwargs.get("unbiased", args[0] if args else True)
    correction = kwargs.get("correction")
    if correction is None:                      # torch: None means the default, 1
        correction = 1 if unbiased else 0
    return getattr(x, method)(dims(kwargs.get("dim")), keepdims=kwargs.get("keepdim", False),
                              correction=correction)


def std(x, args, kwargs):
    return var(x, args, kwargs, "std")


def arg_reduce(method):
    def run(x, args, kwargs):
        only(kwargs, ("dim", "keepdim"), method)
        dim = args[0] if args else kwargs.get("dim")
        keepdim = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        return getattr(x, method)(dim, keepdims=keepdim)
    return run


def softmax(fn):
    def run(x, args, kwargs):
        only(kwargs, ("dim",), fn.__name__)
        return fn(x, args[0] if args else kwargs["dim"])
    return run


def binary(op):
    def run(a, args, kwargs):
        only(kwargs, (), "binary op")
        b = args[0]
        if isinstance(b, numbers.Number) and not isinstance(b, numbers.Real):
            raise Unsupported("a complex scalar operand")
        return op(a, b)
    return run


def pow_(x, args, kwargs):
    only(kwargs, (), "pow")
    if not isinstance(args[0], numbers.Real):
        raise Unsupported("pow: a Tensor exponent (only a number exponent is supported)")
    return x ** args[0]


def unary(method):
    def run(x, args, kwargs):
        only(kwargs, (), method)
        if args:
            raise Unsupported(f"{method}: positional options")
        return getattr(x, method)()
    return run


def clamp(x, args, kwargs):
    only(kwargs, ("min", "max"), "clamp")
    bounds = dict(zip(("min", "max"), args), **kwargs)
    return x.clamp(bounds.get("min"), bounds.get("max"))


def masked_fill(x, args, kwargs):
    only(kwargs, (), "masked_fill")
    mask, value = args
    return x.masked_fill(mask, value)


def index_op(method):
    def run(x, args, kwargs):
        only(kwargs, (), method)
        return getattr(x, method)(*args)
    return run


def where(x, args, kwargs):
    only(kwargs, (), "where")
    condition, other = args
    return mg.where(condition, x, other)


def chunk(x, args, kwargs):
    only(kwargs, ("dim",), "chunk")
    return x.chunk(args[0], kwargs.get("dim", args[1] if len(args) > 1 else 0))


def attribute(name):
    def run(x, args, kwargs):
        only(kwargs, (), name)
        return getattr(x, name)
    return run


def np_dtype(dtype):
    return None if dtype is None else np.dtype(str(dtype).replace("torch.", ""))


def factory(make, extra=()):
    def run(first, args, kwargs):
        only(kwargs, ("dtype", "device", "requires_grad") + extra, "factory")
        options = {"dtype": np_dtype(kwargs.get("dtype")), "device": kwargs.get("device"),
                   "requires_grad": kwargs.get("requires_grad", False),
                   **{k: kwargs[k] for k in extra if k in kwargs}}
        return make(first, args, {k: v for k, v in options.items() if v is not None})
    return run


def conversion(method):
    def run(x, args, kwargs):
        only(kwargs, (), method)
        return getattr(x, method)()
    return run


def gelu(x, args, kwargs):
    only(kwargs, ("approximate",), "gelu")
    return F.gelu(x, kwargs.get("approximate", "none"))


def cat(xs, args, kwargs):
    only(kwargs, ("dim",), "cat")
    return mg.concatenate(xs, kwargs.get("dim", args[0] if args else 0))


def stack(xs, args, kwargs):
    only(kwargs, ("dim",), "stack")
    return mg.stack(xs, kwargs.get("dim", args[0] if args else 0))


def shape_op(method):
    def run(x, args, kwargs):
        only(kwargs, (), method)
        return getattr(x, method)(*args)
    return run


def squeeze(x, args, kwargs):
    only(kwargs, (), "squeeze")
    return x.squeeze(*args)


def flatten(x, args, kwargs):
    only(kwargs, ("start_dim", "end_dim"), "flatten")
    if kwargs.get("end_dim", -1) not in (-1, x.ndim - 1):
        raise Unsupported("flatten: end_dim other than the last dim")
    return x.flatten(kwargs.get("start_dim", 0))


def getitem(x, args, kwargs):
    # Index tensors (integer or bool) become NumPy arrays: x[array] is this package's
    # advanced indexing (an embedding lookup is weight[ids]).
    index = args[0]
    if isinstance(index, tuple):
        return x[tuple(_raw(p) for p in index)]
    return x[_raw(index)]


def _raw(part):
    return part.numpy() if isinstance(part, mg.Tensor) else part


def layer_norm(x, args, kwargs):
    only(kwargs, ("weight", "bias", "eps"), "layer_norm")
    shape = args[0]
    rest = dict(zip(("weight", "bias", "eps"), args[1:]), **kwargs)
    return F.layer_norm(x, tuple(shape), rest.get("weight"), rest.get("bias"),
                        rest.get("eps", 1e-5))


def rms_norm(x, args, kwargs):
    only(kwargs, ("weight", "eps"), "rms_norm")
    rest = dict(zip(("weight", "eps"), args[1:]), **kwargs)
    eps = rest.get("eps")
    if eps is None:                   # torch's default is the dtype's machine epsilon
        eps = float(np.finfo(x.dtype).eps)
    return F.rms_norm(x, tuple(args[0]), rest.get("weight"), eps)


def batch_norm(x, args, kwargs):
    only(kwargs, ("weight", "bias", "training", "momentum", "eps"), "batch_norm")
    rest = dict(zip(("running_mean", "running_var", "weight", "bias", "training", "momentum",
                     "eps"), args), **kwargs)
    momentum = rest.get("momentum", 0.1)
    stats = [None if rest.get(k) is None else rest[k].data
             for k in ("running_mean", "running_var")]
    y = F.batch_norm(x, stats[0], stats[1], rest.get("weight"), rest.get("bias"),
                     rest.get("training", False), momentum, rest.get("eps", 1e-5))
    return y, stats


def mse_loss(x, args, kwargs):
    only(kwargs, ("reduction",), "mse_loss")
    return F.mse_loss(x, args[0], reduction=kwargs.get("reduction", "mean"))


ADAPTERS = {
    ("sum", ""): reduction("sum"), ("mean", ""): reduction("mean"),
    ("amax", ""): reduction("amax"), ("max", "reduction_no_dim"): reduction("max"),
    ("max", "reduction_with_dim"): max_with_dim, ("max", "binary"): binary(mg.maximum),
    ("var", ""): var, ("var", "unbiased"): var, ("std", ""): std, ("std", "unbiased"): std,
    ("argmax", ""): arg_reduce("argmax"), ("argmin", ""): arg_reduce("argmin"),
    ("abs", ""): unary("abs"),
    ("softmax", ""): softmax(F.softmax), ("log_softmax", ""): softmax(F.log_softmax),
    ("add", ""): binary(lambda a, b: a + b), ("sub", ""): binary(lambda a, b: a - b),
    ("mul", ""): binary(lambda a, b: a * b),
    ("div", "no_rounding_mode"): binary(lambda a, b: a / b),
    ("maximum", ""): binary(mg.maximum), ("matmul", ""): binary(mg.matmul),
    ("neg", ""): unary("__neg__"), ("exp", ""): unary("exp"), ("log", ""): unary("log"),
    ("sqrt", ""): unary("sqrt"), ("tanh", ""): unary("tanh"), ("clone", ""): unary("clone"),
    ("nn.functional.relu", ""): unary("relu"),
    ("erf", ""): lambda x, a, k: mg.ops.erf(x),
    ("sigmoid", ""): unary("sigmoid"),
    ("nn.functional.silu", ""): lambda x, a, k: (only(k, (), "silu"), F.silu(x))[1],
    ("nn.functional.gelu", ""): gelu,
    ("cat", ""): cat, ("stack", ""): stack,
    ("reshape", ""): shape_op("reshape"), ("view", ""): shape_op("view"),
    ("permute", ""): shape_op("permute"), ("expand", ""): shape_op("expand"),
    ("unsqueeze", ""): shape_op("unsqueeze"), ("transpose", ""): shape_op("transpose"),
    ("squeeze", ""): squeeze, ("squeeze", "multiple"): squeeze, ("flatten", ""): flatten,
    ("__getitem__", ""): getitem,
    ("amin", ""): reduction("amin"), ("min", "reduction_no_dim"): reduction("min"),
    ("min", "reduction_with_dim"): min_with_dim, ("min", "binary"): binary(mg.minimum),
    ("minimum", ""): binary(mg.minimum), ("clamp", ""): clamp,
    ("clamp_min", ""): binary(lambda x, low: x.clamp(min=low)),
    ("clamp_max", ""): binary(lambda x, high: x.clamp(max=high)),
    ("rsqrt", ""): unary("rsqrt"), ("square", ""): unary("square"), ("sign", ""): unary("sign"),
    ("repeat", ""): shape_op("repeat"), ("masked_fill", ""): masked_fill,
    ("mm", ""): binary(lambda a, b: a.mm(b)), ("bmm", ""): binary(lambda a, b: a.bmm(b)),
    ("t", ""): unary("t"), ("mT", ""): attribute("mT"), ("T", ""): attribute("T"),
    ("chunk", ""): chunk, ("gather", ""): index_op("gather"),
    ("index_select", ""): index_op("index_select"), ("where", ""): where,
    ("contiguous", ""): unary("contiguous"), ("long", ""): conversion("long"),
    ("int", ""): conversion("int"), ("bool", ""): conversion("bool"),
    ("zeros_like", ""): factory(lambda x, a, k: mg.zeros_like(x, **k)),
    ("ones_like", ""): factory(lambda x, a, k: mg.ones_like(x, **k)),
    ("new_zeros", ""): factory(lambda x, a, k: x.new_zeros(*a, **k)),
    ("new_ones", ""): factory(lambda x, a, k: x.new_ones(*a, **k)),
    ("full", ""): factory(lambda size, a, k: mg.full(size, *a, **k)),
    ("arange", ""): factory(lambda start, a, k: mg.arange(start, *a, **k), ("end",)),
    ("nn.functional.layer_norm", ""): layer_norm, ("nn.functional.rms_norm", ""): rms_norm,
    ("nn.functional.batch_norm", ""): batch_norm,
    ("nn.functional.mse_loss", ""): mse_loss,
}

# Ops this package has whose every OpInfo sample uses an argument it does not have.
EXCLUDED = {
    ("pow", ""): "every sample has a Tensor exponent; x ** p here takes a number p "
                 "(covered by test_ops' gradchecks)",
}

OPS = {(op.name, op.variant_test_name): op for op in op_db
       if (op.name, op.variant_test_name) in ADAPTERS}


def test_every_adapter_has_its_opinfo():
    assert sorted(ADAPTERS) == sorted(OPS)


@pytest.mark.parametrize("key", sorted(EXCLUDED))
def test_excluded_ops_really_have_no_usable_sample(key):
    # If torch adds a sample with a number exponent, move pow back into ADAPTERS.
    (op,) = [o for o in op_db if (o.name, o.variant_test_name) == key]
    for sample in op.sample_inputs("cpu", torch.float64, requires_grad=True):
        with pytest.raises(Unsupported):
            pow_(to_mg(sample.input), to_mg(sample.args), sample.kwargs)


def run_sample(key, sample):
    """Compare one sample; returns None, or the reason it was skipped."""
    op = OPS[key]
    mg_input, mg_args, mg_kwargs = to_mg(sample.input), to_mg(sample.args), \
        {k: to_mg(v) for k, v in sample.kwargs.items()}
    torch_leaves = [t for t in tensors_of((sample.input, sample.args, sample.kwargs))
                    if t.requires_grad]
    torch_out = op(sample.input, *sample.args, **sample.kwargs)
    try:
        mg_out = ADAPTERS[key](mg_input, mg_args, mg_kwargs)
    except Unsupported as reason:
        return str(reason)
    if key in (("max", "reduction_with_dim"), ("min", "reduction_with_dim")):
        # both return (values, indices); the indices (no gradient) must match exactly
        np.testing.assert_array_equal(mg_out.indices.numpy(), torch_out.indices.numpy())
        assert mg_out.indices.dtype == np.int64
        mg_out, torch_out = mg_out.values, torch_out.values
    if isinstance(torch_out, (tuple, list)):        # chunk: one output per piece
        assert len(mg_out) == len(torch_out), (len(mg_out), len(torch_out))
        if torch_out and torch_out[0].requires_grad:
            weights = [torch.tensor(np.random.default_rng(i).standard_normal(
                tuple(t.shape))) for i, t in enumerate(torch_out)]
            torch_out = sum((t * w).sum() for t, w in zip(torch_out, weights))
            mg_out = sum((t * w.numpy()).sum() for t, w in zip(mg_out, weights))
        else:
            for got, want in zip(mg_out, torch_out):
                np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
            return None
    stats = None
    if key == ("nn.functional.batch_norm", ""):
        mg_out, stats = mg_out
        for name, array in zip(("running_mean", "running_var"), stats):
            torch_stat = sample.args[("running_mean", "running_var").index(name)]
            if array is not None:
                np.testing.assert_allclose(array, torch_stat.numpy(), RTOL, ATOL, err_msg=name)
    assert mg_out.shape == tuple(torch_out.shape), (mg_out.shape, torch_out.shape)
    assert mg_out.dtype == np_dtype(torch_out.dtype), (mg_out.dtype, torch_out.dtype)
    np.testing.assert_allclose(mg_out.detach().numpy(), torch_out.detach().numpy(), RTOL, ATOL,
                               err_msg="forward")
    mg_leaves = [t for t in tensors_of((mg_input, mg_args, mg_kwargs))
                 if isinstance(t, mg.Tensor) and t.requires_grad]
    assert len(mg_leaves) == len(torch_leaves)
    if not torch_leaves or not torch_out.requires_grad:
        return None
    upstream = np.random.default_rng(0).standard_normal(tuple(torch_out.shape))
    torch_grads = torch.autograd.grad(torch_out, torch_leaves, torch.tensor(upstream),
                                      allow_unused=True)
    mg_grads = mg.grad(mg_out, mg_leaves, upstream)
    for i, (g_mg, g_torch, leaf) in enumerate(zip(mg_grads, torch_grads, mg_leaves)):
        expected = np.zeros(leaf.shape) if g_torch is None else g_torch.numpy()
        got = np.zeros(leaf.shape) if g_mg is None else g_mg
        np.testing.assert_allclose(got, expected, RTOL, ATOL, err_msg=f"gradient {i}")
    return None


@pytest.mark.parametrize("key", sorted(ADAPTERS), ids=lambda k: ".".join(filter(None, k)))
def test_opinfo_samples_match_pytorch(key):
    op = OPS[key]
    samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=True))[:MAX_SAMPLES]
    skipped, failures = [], []
    for i, sample in enumerate(samples):
        try:
            reason = run_sample(key, sample)
        except Exception as error:           # collect all failures of the op, then report
            failures.append(f"sample {i} {describe(sample)}: {type(error).__name__}: "
                            f"{str(error)[:300]}")
            continue
        if reason:
            skipped.append(reason)
    assert not failures, "\n".join(failures)
    assert len(skipped) < len(samples), f"every sample skipped: {set(skipped)}"


def describe(sample):
    def show(v):
        if isinstance(v, torch.Tensor):
            return f"T{tuple(v.shape)}"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(show(x) for x in v) + "]"
        return repr(v)
    return f"input={show(sample.input)} args={show(sample.args)} kwargs=" + \
        "{" + ", ".join(f"{k}={show(v)}" for k, v in sample.kwargs.items()) + "}"

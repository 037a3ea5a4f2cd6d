"""PyTorch's own samples (``op_db`` OpInfos, ``reference_inputs``, float64) with one argument
made wrong: a tensor argument given as a list, None, a string, a tensor of another dtype or
shape, a 0-d tensor; an int argument given as a float, a bool, a huge or negative value, a
tensor, None, a string; a keyword torch does not take. Each bad call is made under torch and
here (the arguments converted as tests/helpers/opinfo_generic.py converts them):

* where torch raises, ours raises an instance of torch's class (the message may differ, but
  names no internal object: no "object has no attribute") and changes no tensor it was given;
* where torch returns, ours returns the same values, dtype and shape.

``FIXED`` holds the calls that once failed here (a list, None or a string given for a
function's ``input`` or ``other`` failing deep inside with an AttributeError, or taken by
``dropout``; a list taken as an ``index``; a float or bool taken as ``select``'s index;
None or a string as ``index_add``'s ``alpha`` failing inside NumPy; a complex tensor given
to the orthogonal polynomials of ``special``, NumPy's TypeError where torch's is
NotImplementedError, and an integer or bool one beside a float64 ``n``, float32 where torch
promotes first, to float64;
``round``'s ``decimals`` past 308 places, an OverflowError where torch's result is NaN;
``fft.fftshift``'s ``dim`` as a 0-d integer tensor, which torch takes);
``SPREAD`` a spread of the others, by kind of change.
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

from opinfo_generic import compare, op_table, resolve, taken, tensors_of, to_mg  # noqa: E402

pytestmark = pytest.mark.slow          # torch's tables take seconds to import

HUGE = 2 ** 40


def _wrong_tensor(t, how):
    t = t.detach()
    if how == "list":
        return t.tolist()
    if how in ("None", "str"):
        return None if how == "None" else "abc"
    if how in ("int64", "bool", "complex128"):
        return t.to(getattr(torch, how))
    if how == "dim+1":
        return t.unsqueeze(0)
    if how == "dim-1":
        return t.select(0, 0).clone() if t.shape[0] else t.reshape(-1)[:0]
    if how == "size0":
        return torch.empty((0,) + tuple(t.shape[1:]), dtype=t.dtype)
    assert how == "0d", how
    return t.reshape(-1)[0].clone() if t.numel() else torch.tensor(0.0, dtype=t.dtype)


def _wrong_int(v, how):
    return {"float": v + 0.5, "bool": True, "huge": HUGE, "neg": -HUGE, "negsmall": -v - 7,
            "tensor": torch.tensor(v), "None": None, "str": "x"}[how]


def _mutated(sample, slot, how):
    """(input, args, kwargs) of ``sample`` with the argument at ``slot`` changed by ``how``."""
    inp, args, kwargs = sample.input, list(sample.args), dict(sample.kwargs)
    if slot == "typo":
        return inp, tuple(args), {**kwargs, "typo": 1}
    if slot == "input":
        given = inp
    elif slot.startswith("args"):
        given = args[int(slot[5:-1])]
    else:
        given = kwargs[slot[7:-1]]
    new = _wrong_tensor(given, how) if isinstance(given, torch.Tensor) else _wrong_int(given, how)
    if slot == "input":
        inp = new
    elif slot.startswith("args"):
        args[int(slot[5:-1])] = new
    else:
        kwargs[slot[7:-1]] = new
    return inp, tuple(args), kwargs


def _sample(op, index):
    """The ``index``-th of op's float64 samples that torch itself takes."""
    for sample in op.reference_inputs("cpu", torch.float64, requires_grad=False):
        sample = taken(op, sample)
        if sample is not None:
            if not index:
                return sample
            index -= 1
    raise AssertionError("too few samples torch takes")


# (op, variant, slot, change[, which sample, 0 by default]): slot "input", "args[i]",
# "kwargs[name]" or "typo"
FIXED = [
    ("amax", "", "input", "list"), ("amin", "", "input", "None"), ("argmax", "", "input", "str"),
    ("aminmax", "", "input", "list"), ("flatten", "", "input", "None"),
    ("gather", "", "input", "str"), ("index_select", "", "input", "None"),
    ("softmax", "", "input", "list"), ("log_softmax", "with_dtype", "input", "None"),
    ("grid_sampler_2d", "", "input", "str"),
    ("gather", "", "args[1]", "list"), ("index_select", "", "args[1]", "list"),
    ("index_add", "", "args[1]", "list"), ("index_copy", "", "args[1]", "list"),
    ("index_reduce", "prod", "args[1]", "list"), ("scatter_add", "", "args[1]", "list"),
    ("scatter_reduce", "sum", "args[1]", "list"), ("take", "", "args[0]", "list"),
    ("take_along_dim", "", "args[0]", "list"),
    ("select", "", "args[1]", "float"), ("select", "", "args[1]", "bool"),
    ("index_add", "", "kwargs[alpha]", "None"), ("index_add", "", "kwargs[alpha]", "str"),
    ("nn.functional.dropout", "", "input", "list"), ("nn.functional.dropout", "", "input", "str"),
    ("special.chebyshev_polynomial_t", "", "input", "complex128"),
    ("special.laguerre_polynomial_l", "", "args[0]", "complex128"),
    ("special.chebyshev_polynomial_t", "", "input", "int64"),
    ("special.hermite_polynomial_h", "", "input", "bool"),
    ("round", "decimals_3", "kwargs[decimals]", "huge"),
    ("round", "decimals_neg_3", "kwargs[decimals]", "neg"),
    ("fft.fftshift", "", "kwargs[dim]", "tensor", 1),
    ("fft.ifftshift", "", "kwargs[dim]", "tensor", 1),
    ("maximum", "", "args[0]", "None"), ("matmul", "", "args[0]", "None"),
]
SPREAD = [
    ("log", "", "input", "0d"), ("equal", "", "input", "0d"), ("clamp_min", "", "args[0]", "0d"),
    ("round", "decimals_neg_3", "kwargs[decimals]", "None"), ("cummin", "", "args[0]", "None"),
    ("transpose", "", "args[1]", "None"), ("scatter_reduce", "prod", "args[1]", "None"),
    ("nn.functional.instance_norm", "", "kwargs[weight]", "bool"),
    ("nn.functional.conv2d", "", "input", "bool"), ("baddbmm", "", "kwargs[alpha]", "bool"),
    ("addcmul", "", "args[0]", "complex128"), ("logical_and", "", "input", "complex128"),
    ("div", "trunc_rounding", "input", "complex128"),
    ("nn.functional.embedding_bag", "", "args[0]", "complex128"),
    ("linalg.tensorsolve", "", "input", "dim+1"), ("linalg.cholesky", "", "input", "dim+1"),
    ("nn.functional.conv2d", "", "input", "dim+1"),
    ("nn.functional.margin_ranking_loss", "", "input", "dim+1"),
    ("diagonal", "", "input", "dim-1"), ("trapezoid", "", "input", "dim-1"),
    ("special.ndtr", "", "input", "dim-1"), ("scatter_add", "", "input", "dim-1"),
    ("index_select", "", "args[0]", "float"), ("round", "decimals_0", "kwargs[decimals]", "float"),
    ("nn.functional.local_response_norm", "", "args[0]", "float"),
    ("transpose_copy", "", "args[1]", "float"), ("nn.functional.avg_pool2d", "", "args[2]", "huge"),
    ("addbmm", "", "kwargs[alpha]", "huge"), ("unfold_copy", "", "args[2]", "huge"),
    ("nn.functional.conv_transpose1d", "", "kwargs[padding]", "huge"),
    ("broadcast_tensors", "", "input", "int64"), ("index_reduce", "amin", "args[1]", "int64"),
    ("div", "no_rounding_mode", "input", "int64"), ("asin", "", "input", "int64"),
    ("kron", "", "input", "list"), ("nn.functional.bilinear", "", "args[0]", "list"),
    ("addmm", "", "args[0]", "list"), ("nn.functional.cross_entropy", "", "input", "list"),
    ("select", "", "args[0]", "neg"), ("nn.functional.channel_shuffle", "", "args[0]", "neg"),
    ("transpose_copy", "", "args[1]", "neg"), ("uniform", "", "args[0]", "neg"),
    ("transpose", "", "args[0]", "negsmall"), ("cumprod", "", "args[0]", "negsmall"),
    ("unfold_copy", "", "args[2]", "negsmall"), ("index_fill", "", "args[0]", "negsmall"),
    ("scatter_add", "", "input", "size0"), ("addmm", "decomposed", "args[1]", "size0"),
    ("flip", "", "input", "size0"), ("unsafe_split", "", "args[0]", "str"),
    ("linalg.householder_product", "", "args[0]", "str"), ("linalg.vecdot", "", "input", "str"),
    ("special.zeta", "", "args[0]", "str"), ("take_along_dim", "", "args[1]", "tensor"),
    ("nn.functional.conv_transpose1d", "", "kwargs[padding]", "tensor"),
    ("nn.functional.adaptive_max_pool1d", "", "args[0]", "tensor"),
    ("unfold", "", "args[2]", "tensor"), ("special.scaled_modified_bessel_k0", "", "typo", ""),
    ("sum_to_size", "", "typo", ""), ("ne", "", "typo", ""), ("index_reduce", "mean", "typo", ""),
]


def _state(tensors):
    return [(np.array(t.detach().numpy(), copy=True), t.dtype, tuple(t.shape)) for t in tensors]


@pytest.mark.parametrize("case", FIXED + SPREAD,
                         ids=lambda c: "-".join(str(v) for v in c if v != ""))
def test_one_wrong_argument_answers_as_pytorch(case):
    name, variant, slot, how, *which = case
    op = op_table()[name, variant]
    inp, args, kwargs = _mutated(_sample(op, which[0] if which else 0), slot, how)
    ours = to_mg((inp, args, kwargs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected, refused = op(inp, *args, **kwargs), None
        except Exception as error:          # noqa: BLE001 (torch's class, whichever it is)
            expected, refused = None, error
        given = [t for t in tensors_of(ours) if hasattr(t, "_version")]
        before = _state(given)
        if refused is None:
            got = resolve(op)(ours[0], *ours[1], **ours[2])
            if "uniform" not in name:           # a random draw: its shape and dtype
                compare(got, expected, torch.float64)
            else:
                assert tuple(got.shape) == tuple(expected.shape)
            return
        with pytest.raises(type(refused)) as raised:
            resolve(op)(ours[0], *ours[1], **ours[2])
    assert "object has no attribute" not in str(raised.value), raised.value
    for (values, dtype, shape), t in zip(before, given):
        assert (dtype, shape) == (t.dtype, tuple(t.shape))
        np.testing.assert_array_equal(values, t.detach().numpy())

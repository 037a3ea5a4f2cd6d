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
``SPREAD`` a spread of the others, by kind of change. ``REFUSED`` holds more such calls made
directly (a ``dim`` given None where torch types it as a plain int, a dim torch reads before
its shape check missing, a dtype without a kernel, an int argument given a float, None or a
bool, a Tensor argument given None or a list); ``TAKEN`` the defaults beside them.
"""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

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


# ----- the same differences called directly: a dim torch types as a plain int given None, a
# dim torch reads before its own shape check missing, an integer or complex tensor where torch
# has no kernel, an int argument given a float, a string, a bool or None, a Tensor argument
# given None or a list. Each case is ``(id, call)``, ``call(L, t)`` with ``L`` the library
# (torch or mg) and ``t(*shape, dtype=...)`` making a float64 tensor (the same values under
# both) that the test checks is left unchanged.

def _fn(L):
    return L.nn.functional


def _piv(L, shape=()):           # int32 pivots of ones (a 0-d one by default)
    return L.ones(shape, dtype=L.int32)


REFUSED = [
    # 1. dim=None given where torch's dim is a plain int (left out, it is the default)
    ("cat", lambda L, t: L.cat([t(2, 3), t(2, 3)], dim=None)),
    ("concat", lambda L, t: L.concat([t(2, 3)], dim=None)),
    ("stack", lambda L, t: L.stack([t(2, 3), t(2, 3)], dim=None)),
    ("unbind", lambda L, t: L.unbind(t(2, 3), dim=None)),
    ("Tensor.unbind", lambda L, t: t(2, 3).unbind(None)),
    ("topk", lambda L, t: L.topk(t(2, 3), 1, dim=None)),
    ("sort", lambda L, t: L.sort(t(2, 3), dim=None)),
    ("sort positional", lambda L, t: t(2, 3).sort(None)),
    ("argsort", lambda L, t: L.argsort(t(2, 3), dim=None)),
    ("linalg.cross", lambda L, t: L.linalg.cross(t(2, 3), t(2, 3), dim=None)),
    ("trapezoid", lambda L, t: L.trapezoid(t(2, 3), dim=None)),
    ("split", lambda L, t: L.split(t(2, 3), 1, dim=None)),
    ("Tensor.split", lambda L, t: t(2, 3).split(1, dim=None)),
    ("chunk", lambda L, t: L.chunk(t(2, 3), 2, dim=None)),
    ("squeeze", lambda L, t: L.squeeze(t(1, 3), dim=None)),
    ("squeeze positional", lambda L, t: t(1, 3).squeeze(None)),
    ("squeeze_", lambda L, t: t(1, 3).squeeze_(dim=None)),
    ("softmax", lambda L, t: L.softmax(t(2, 3), dim=None)),
    ("Tensor.log_softmax", lambda L, t: t(2, 3).log_softmax(dim=None)),
    ("special.softmax", lambda L, t: L.special.softmax(t(2, 3), None)),
    ("gumbel_softmax", lambda L, t: _fn(L).gumbel_softmax(t(2, 3), dim=None)),
    ("max", lambda L, t: L.max(t(2, 3), dim=None)),
    ("Tensor.min", lambda L, t: t(2, 3).min(None)),
    ("median", lambda L, t: L.median(t(2, 3), dim=None)),
    ("nanmedian", lambda L, t: t(2, 3).nanmedian(dim=None)),
    ("select", lambda L, t: L.select(t(2, 3), None, 0)),
    ("flatten", lambda L, t: L.flatten(t(2, 3), start_dim=None)),
    ("cumsum", lambda L, t: L.cumsum(t(2, 3), dim=None)),
    # 2. a dim torch reads first missing (IndexError), shapes torch refuses (RuntimeError)
    ("addbmm batch1 0-d", lambda L, t: L.addbmm(t(2, 4), t(), t(2, 3, 4))),
    ("addbmm batch2 2-D", lambda L, t: L.addbmm(t(2, 4), t(2, 2, 3), t(3, 4))),
    ("addbmm batch1 2-D", lambda L, t: L.addbmm(t(2, 4), t(2, 3), t(2, 3, 4))),
    ("baddbmm batch1 1-D", lambda L, t: L.baddbmm(t(2, 2, 4), t(2), t(2, 3, 4))),
    ("baddbmm batch2 0-d", lambda L, t: L.baddbmm(t(2, 2, 4), t(2, 2, 3), t())),
    ("mv 0-d mat", lambda L, t: L.mv(t(), t(3))),
    ("mv 3-D mat", lambda L, t: L.mv(t(1, 2, 3), t(3))),
    ("scatter src 1-D", lambda L, t: L.scatter(t(2, 3), 0, L.tensor([[0, 1, 1]]), t(3))),
    ("scatter src 0-d", lambda L, t: L.scatter(t(2, 3), 0, L.tensor([[0, 1, 1]]), t())),
    ("scatter_add src 1-D", lambda L, t: L.scatter_add(t(2, 3), 0, L.tensor([[0, 1, 1]]),
                                                       t(3))),
    ("scatter_reduce src 1-D", lambda L, t: L.scatter_reduce(
        t(2, 3), 0, L.tensor([[0, 1, 1]]), t(3), "sum")),
    ("lu_solve 0-d pivots", lambda L, t: L.linalg.lu_solve(t(3, 3), _piv(L), t(3, 1))),
    ("lu_solve pivots of one more dim", lambda L, t: L.linalg.lu_solve(
        t(3, 3), _piv(L, (1, 3)), t(3, 1))),
    ("householder_product 0-d tau", lambda L, t: L.linalg.householder_product(t(3, 2), t())),
    ("ldl_solve 0-d pivots", lambda L, t: L.linalg.ldl_solve(t(3, 3), _piv(L), t(3, 1))),
    ("ldl_solve pivots of one more dim", lambda L, t: L.linalg.ldl_solve(
        t(3, 3), _piv(L, (1, 3)), t(3, 1))),
    ("lu_unpack 0-d pivots", lambda L, t: L.lu_unpack(t(3, 3), _piv(L))),
    ("native_batch_norm 0-d running stats", lambda L, t: L.native_batch_norm(
        t(2, 3), None, None, t(), t(), True, 0.1, 1e-5)),
    ("native_batch_norm 2-D running stats, eval", lambda L, t: L.native_batch_norm(
        t(2, 3), None, None, t(1, 3), t(1, 3), False, 0.1, 1e-5)),
    # 3. no kernel for the dtype: NotImplementedError
    ("native_layer_norm int64", lambda L, t: L.native_layer_norm(
        t(2, 3, dtype=L.int64), [3], None, None, 1e-5)),
    ("native_batch_norm bool", lambda L, t: L.native_batch_norm(
        t(2, 3, dtype=L.bool), None, None, None, None, True, 0.1, 1e-5)),
    ("native_group_norm int64", lambda L, t: L.native_group_norm(
        t(2, 4, 3, dtype=L.int64), None, None, 2, 4, 3, 2, 1e-5)),
    ("bmm bool", lambda L, t: L.bmm(t(2, 2, 2, dtype=L.bool), t(2, 2, 2, dtype=L.bool))),
    ("cross bool", lambda L, t: L.linalg.cross(t(2, 3, dtype=L.bool), t(2, 3, dtype=L.bool))),
    *[(f"special.{name} complex", lambda L, t, name=name: getattr(L.special, name)(
        t(3, dtype=L.complex128))) for name in
      ("entr", "i1", "ndtri", "i0e", "i1e", "erfcx", "log_ndtr")],
    # 4. an int argument given a float, a string, a bool or None: TypeError
    ("tensorinv ind float", lambda L, t: L.linalg.tensorinv(t(4, 2, 2), ind=1.5)),
    ("tensorinv ind None", lambda L, t: L.linalg.tensorinv(t(4, 2, 2), ind=None)),
    ("vander N str", lambda L, t: L.linalg.vander(t(3), N="x")),
    ("vander N bool", lambda L, t: L.linalg.vander(t(3), N=True)),
    ("native_group_norm N float", lambda L, t: L.native_group_norm(
        t(2, 4, 3), None, None, 2.5, 4, 3, 2, 1e-5)),
    ("native_group_norm HxW None", lambda L, t: L.native_group_norm(
        t(2, 4, 3), None, None, 2, 4, None, 2, 1e-5)),
    ("native_group_norm group bool", lambda L, t: L.native_group_norm(
        t(2, 4, 3), None, None, 2, 4, 3, True, 1e-5)),
    ("grid_sampler mode float", lambda L, t: L.grid_sampler(
        t(1, 1, 3, 3), t(1, 2, 2, 2), 0.5, 0, False)),
    ("grid_sampler padding str", lambda L, t: L.grid_sampler(
        t(1, 1, 3, 3), t(1, 2, 2, 2), 0, "x", False)),
    ("grid_sampler_2d mode None", lambda L, t: L.grid_sampler_2d(
        t(1, 1, 3, 3), t(1, 2, 2, 2), None, 0, False)),
    # 5. a Tensor argument given None or a list: torch's parser's TypeError
    ("outer vec2 None", lambda L, t: L.outer(t(3), None)),
    ("outer vec2 list", lambda L, t: L.outer(t(3), [1.0, 2.0])),
    ("Tensor.outer None", lambda L, t: t(3).outer(None)),
    ("bilinear input1 None", lambda L, t: _fn(L).bilinear(None, t(2, 3), t(4, 3, 3))),
    ("bilinear input2 list", lambda L, t: _fn(L).bilinear(t(2, 3), [[1.0] * 3] * 2,
                                                          t(4, 3, 3))),
    ("pinv None", lambda L, t: L.linalg.pinv(None)),
    ("pinv list", lambda L, t: L.linalg.pinv([[1.0, 2.0], [3.0, 4.0]])),
]
# the defaults these checks must leave as they were: the dim left out, or None where torch
# takes it (torch.cross's legacy dim, F.softmax's implicit one)
TAKEN = [
    ("cat", lambda L, t: L.cat([t(2, 3), t(2, 3)])),
    ("stack", lambda L, t: L.stack([t(2, 3), t(2, 3)], 1)),
    ("unbind", lambda L, t: L.unbind(t(2, 3))[1]),
    ("sort", lambda L, t: t(2, 3).sort(descending=True).indices),
    ("topk", lambda L, t: L.topk(t(2, 3), 2).values),
    ("split", lambda L, t: t(4, 3).split(3)[1]),
    ("chunk", lambda L, t: L.chunk(t(3, 2), 2)[1]),
    ("squeeze", lambda L, t: L.squeeze(t(1, 3, 1))),
    ("squeeze_", lambda L, t: t(1, 3).squeeze_()),
    ("max", lambda L, t: t(2, 3).max()), ("median", lambda L, t: L.median(t(2, 3))),
    ("nanmedian", lambda L, t: L.nanmedian(t(2, 3))),
    ("softmax", lambda L, t: L.softmax(t(2, 3), 0)),
    ("F.softmax dim None", lambda L, t: _fn(L).softmax(t(2, 3), dim=None)),
    ("F.log_softmax empty", lambda L, t: _fn(L).log_softmax(t(0, 3), dim=1)),
    ("cross dim None", lambda L, t: L.cross(t(2, 3), t(2, 3) * 2 + 1, dim=None)),
    ("outer", lambda L, t: L.outer(t(3), t(2))),
    ("vander N", lambda L, t: L.linalg.vander(t(3), N=L.tensor(4))),
    ("grid_sampler", lambda L, t: L.grid_sampler(t(1, 1, 3, 3), t(1, 2, 2, 2) / 12, 1, 0, False)),
]


def _maker(L, made):
    """``t(*shape, dtype=None)``: a tensor of the values 1/4, 2/4, ... in ``L``, appended with
    its state (values, dtype, shape) as made to ``made``."""
    def t(*shape, dtype=None):
        values = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float64).reshape(shape) / 4
        tensor = L.tensor(values) if dtype is None else L.tensor(values).to(dtype)
        made.append((tensor, _state([tensor])[0]))
        return tensor
    return t


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_a_call_torch_refuses_is_refused_with_its_class(case):
    _, call = case
    made = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:          # noqa: PT011 (torch's, whichever)
            call(torch, _maker(torch, []))
        with pytest.raises(type(theirs.value)) as ours:
            call(mg, _maker(mg, made))
    assert "object has no attribute" not in str(ours.value), ours.value
    assert "tuple index out of range" not in str(ours.value), ours.value   # a bare one
    for tensor, (values, dtype, shape) in made:          # a failed call changes nothing
        assert (dtype, shape) == (tensor.dtype, tuple(tensor.shape))
        np.testing.assert_array_equal(values, tensor.detach().numpy())


@pytest.mark.parametrize("case", TAKEN, ids=[c[0] for c in TAKEN])
def test_the_defaults_those_checks_keep(case):
    _, call = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = call(torch, _maker(torch, []))
        got = call(mg, _maker(mg, []))
    compare(got, expected, torch.float64)

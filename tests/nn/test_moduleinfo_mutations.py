"""PyTorch's own module samples (``module_db`` ModuleInfos, the first sample torch takes,
float64, training mode) with one thing made wrong, made under torch and here:

* a constructor argument given as a float, a bool, a negative int, 0, a string, None, a tuple
  of the wrong length or a tensor; a keyword torch does not take; ``dtype=`` a string or an
  integer dtype; ``device="meta"`` or ``"nope"``;
* a forward input with one dim more or one less, an empty batch, a wrong channel count,
  another dtype, a list, None or a 0-d tensor; one positional argument too many;
* the state: ``load_state_dict`` of the module's own state with one entry of the wrong shape
  or dtype, a key missing or one extra (strict or not); ``to("nope")``, ``to(int64)``,
  ``half().double()``, ``zero_grad()`` before any backward, ``train("yes")``.

Where torch raises, ours raises an instance of torch's (builtin) class, names no internal
object, and leaves the module's parameters, buffers and training flag as they were; where
torch returns, ours returns the same (outputs compared as tests/helpers/moduleinfo_generic.py
compares them; a module built by both: its state's names, shapes and dtypes).

``FIXED`` holds the cases that once failed here: a list or None given to a module (a
TypeError where torch's Python code raises AttributeError; Tanh's own AttributeError), a
Linear input of the wrong width or rank, an integer ``dtype=``, a float channel or group
count (Conv*, GroupNorm) or a negative kernel size, each of another class than torch's; a
0-d input to Bilinear, CTCLoss, CrossEntropyLoss, FractionalMaxPool or LPPool2d, a bool
ConvTranspose input, a non-floating CTC ``log_probs``, NLLLoss's target of the wrong shape,
likewise; Embedding taking a list, a complex input taken by Hardtanh or refused by L1Loss,
a bool HuberLoss target refused, FractionalMaxPool's ``output_ratio`` as a string or a 0-d
tensor, LinearCrossEntropyLoss's ``out_features``, ``weight``, ``ignore_index`` and
``device`` checks; InstanceNorm refusing an integer ``dtype`` it never uses; a
float MultiheadAttention head count, a key of another shape than the value, a tensor as
ConvTranspose's ``output_size``, AvgPool2d's input of too few dims, each refused with
another class than torch's; bool or complex CTCLoss targets refused; complex values
(BCEWithLogitsLoss's target, SoftMarginLoss's and SiLU's input) refused where torch computes
with them, taken where it refuses them (Threshold's input, SoftMarginLoss's target of a real
input) or refused with another class (MultiLabelMarginLoss's target); a float32 input to a
float64 RMSNorm refused.
``SPREAD`` holds one case of each kind of change and outcome.

Left as they are: a string ``dtype=`` ("float64"), which modules here take as NumPy's name
(torch takes only its dtype objects); the second positional argument of LayerNorm and
RMSNorm, a residual here (``ln(x, residual)``); InstanceNorm's ``num_features`` that is no
size (a float, bool, negative int, string, None or tuple), which torch takes without weights
and ours refuses where the module is made (docs/pytorch.md; tests/nn/test_int_like_sizes.py
keeps the difference); the complex input of RMSNorm; PoissonNLLLoss
of a bool input, whose float32 ``exp(1)`` NumPy rounds one ulp away from torch's.
"""

import functools
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import microgradnorm as mg  # noqa: E402
from moduleinfo_generic import (_build, _recording_construction, _torch_takes,  # noqa: E402
                                convert, module_table)
from opinfo_generic import compare  # noqa: E402

pytestmark = pytest.mark.slow          # torch's tables take seconds to import

# messages of Python or NumPy failing inside the library rather than checking an argument
INTERNAL = ("object has no attribute", "setting an array element with a sequence",
            "unhashable type", "index out of range", "object is not subscriptable",
            "not supported between instances", "can't multiply sequence",
            "object is not iterable", "'NoneType' object", "unsupported operand type")


@functools.lru_cache(maxsize=None)
def first_sample(name):
    """torch's first float64 training sample of class ``name`` that torch itself runs."""
    info = module_table()[name]
    torch.manual_seed(0)
    with _recording_construction():
        samples = info.module_inputs_func(info, device="cpu", dtype=torch.float64,
                                          requires_grad=False, training=True)
    for sample in samples:
        if _torch_takes(info, sample, torch.float64, True):
            return info, sample
    return info, None


def _wrong_value(v, how):
    return {"float": (v + 0.5) if isinstance(v, (int, float)) and not isinstance(v, bool)
            else 2.5, "bool": True, "neg": -3, "zero": 0, "str": "x", "None": None,
            "tuple3": (2, 2, 2) if not (isinstance(v, tuple) and len(v) == 3) else (2, 2),
            "tensor": torch.tensor(v if isinstance(v, (int, float)) else 2)}[how]


def _wrong_tensor(t, how):
    t = t.detach()
    if how == "list":
        return t.tolist()
    if how == "None":
        return None
    if how in ("int64", "bool", "complex128", "float32"):
        return t.to(getattr(torch, how))
    if how == "dim+1":
        return t.unsqueeze(0)
    if how == "dim-1":
        return t.select(0, 0).clone() if t.dim() and t.shape[0] else t.reshape(-1)[:0]
    if how == "size0":
        return torch.empty((0,) + tuple(t.shape[1:]), dtype=t.dtype)
    if how == "chan":           # one more along dim 1 (or 0): a wrong channel/feature count
        d = 1 if t.dim() > 1 else 0
        return torch.cat([t, t.narrow(d, 0, 1)], d) if t.dim() and t.shape[d] else t
    assert how == "0d", how
    return t.reshape(-1)[0].clone() if t.numel() else torch.tensor(0.0, dtype=t.dtype)


def _replace(args, kwargs, slot, new):
    args, kwargs = list(args), dict(kwargs)
    if slot.startswith("args"):
        args[int(slot[5:-1])] = new
    else:
        kwargs[slot[7:-1]] = new
    return tuple(args), kwargs


def _given(args, kwargs, slot):
    return args[int(slot[5:-1])] if slot.startswith("args") else kwargs[slot[7:-1]]


def _builtin(error):
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


def _snapshot(module):
    state = [(k, np.array(v.detach().numpy(), copy=True), v.dtype)
             for k, v in module.state_dict().items()]
    return state, [m.training for m in module.modules()]


def _state_shapes(module):
    return {k: (tuple(v.shape), str(v.dtype).split(".")[-1])
            for k, v in module.state_dict().items()}


def _call(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(), None
        except Exception as error:         # noqa: BLE001 (whichever class it is)
            return None, error


def _runs(module, args, kwargs):
    """Whether torch's ``module`` runs the sample's forward (in training and eval mode)."""
    def run():
        for mode in (True, False):
            module.train(mode)
            module(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)
    return _call(run)[1] is None


def _state_mutation(module, lib, slot, how):
    """The call ``slot`` made on ``module`` (a closure), in library ``lib``."""
    state = dict(module.state_dict())
    strict = how == "strict"
    if slot.startswith(("shape:", "dtype:")):
        key = slot[6:]
        v = state[key]
        state[key] = (v.reshape(-1)[:0] if v.numel() else lib.ones(3)) \
            if slot.startswith("shape:") else v.to(lib.int64)
        return lambda: module.load_state_dict(state, strict=strict)
    if slot == "missing":
        state.pop(next(iter(state)))
        return lambda: module.load_state_dict(state, strict=strict)
    if slot == "extra":
        state["typo.weight"] = lib.ones(2)
        return lambda: module.load_state_dict(state, strict=strict)
    return {"to_nope": lambda: module.to("nope"), "to_int64": lambda: module.to(lib.int64),
            "half_double": lambda: module.half().double(),
            "zero_grad": lambda: module.zero_grad(),
            "train_yes": lambda: module.train("yes")}[slot]


def run_case(name, part, slot, how):
    """'same' or 'both raise', or raise AssertionError naming the difference."""
    info, sample = first_sample(name)
    if sample is None:
        return "no sample"
    cargs, ckwargs = sample.constructor_input.args, sample.constructor_input.kwargs
    fargs, fkwargs = sample.forward_input.args, sample.forward_input.kwargs
    memo = {}
    ours = None
    if part == "ctor":
        if slot == "typo":
            cargs, ckwargs = cargs, {**ckwargs, "typo": 1}
        elif slot == "dtype":
            ckwargs = {**ckwargs, "dtype": {"str": "float64", "int64": torch.int64}[how]}
        elif slot == "device":
            ckwargs = {**ckwargs, "device": how}
        else:
            cargs, ckwargs = _replace(cargs, ckwargs, slot,
                                      _wrong_value(_given(cargs, ckwargs, slot), how))
        torch.manual_seed(0)
        expected, refused = _call(lambda: info.module_cls(*cargs, **ckwargs))
        a, k = convert(cargs, memo), convert(ckwargs, memo)
        got, failed = _call(lambda: getattr(mg.nn, name)(*a, **k))
    else:
        theirs, ours = _build(info, sample, torch.float64, True, memo)
        before = _snapshot(ours)
        if part == "fwd":
            if slot == "extra":
                fargs = tuple(fargs) + (fargs[0] if fargs else torch.ones(2),)
            else:
                fargs, fkwargs = _replace(fargs, fkwargs, slot,
                                          _wrong_tensor(_given(fargs, fkwargs, slot), how))
            torch.manual_seed(0)
            expected, refused = _call(lambda: theirs(*fargs, **fkwargs))
            a, k = convert(fargs, memo), convert(fkwargs, memo)
            mg.manual_seed(0)
            got, failed = _call(lambda: ours(*a, **k))
        else:
            expected, refused = _call(_state_mutation(theirs, torch, slot, how))
            got, failed = _call(_state_mutation(ours, mg, slot, how))
    if refused is not None:
        assert failed is not None, \
            f"torch raises {type(refused).__name__}: {refused}; ours returns"
        assert isinstance(failed, _builtin(refused)), \
            f"torch raises {type(refused).__name__}: {str(refused)[:200]}; " \
            f"ours {type(failed).__name__}: {failed}"
        message = str(failed)
        assert not any(s in message for s in INTERNAL), \
            f"internal message: {type(failed).__name__}: {message}"
        if ours is not None:
            after = _snapshot(ours)
            assert [k for k, _, _ in after[0]] == [k for k, _, _ in before[0]]
            for (k, x, dt), (_, y, dt2) in zip(before[0], after[0]):
                assert dt == dt2 and x.shape == y.shape, f"{k} changed by a failed call"
                np.testing.assert_array_equal(x, y, err_msg=f"{k} changed by a failed call")
            assert before[1] == after[1], "training flag changed by a failed call"
        return "both raise"
    if failed is not None and part == "ctor" and not _runs(expected, fargs, fkwargs):
        # a module torch builds but cannot call: refused where it is made here
        # (docs/pytorch.md), with a clean message
        assert not any(s in str(failed) for s in INTERNAL), str(failed)
        return "refused at construction"
    assert failed is None, f"torch returns; ours raises {type(failed).__name__}: {failed}"
    if part == "ctor" and not info.is_lazy:     # a lazy module's state has no shapes yet
        assert _state_shapes(got) == _state_shapes(expected), \
            (_state_shapes(got), _state_shapes(expected))
    elif part == "fwd":
        if name not in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                        "FeatureAlphaDropout", "RReLU", "FractionalMaxPool2d",
                        "FractionalMaxPool3d"):
            compare(got, expected, torch.float64)
    elif slot.startswith(("shape:", "dtype:", "missing", "extra")):
        assert (sorted(got.missing_keys), sorted(got.unexpected_keys)) == \
            (sorted(expected.missing_keys), sorted(expected.unexpected_keys))
    if part == "state":
        mine = ours.state_dict()
        for key, value in theirs.state_dict().items():
            compare(mine[key], value, torch.float64, f"state {key}")
    return "same"


def cases(name):
    """Every mutation of class ``name``'s first sample."""
    info, sample = first_sample(name)
    if sample is None:
        return []
    out = []
    c = sample.constructor_input
    for slot in [f"args[{i}]" for i in range(len(c.args))] + [f"kwargs[{k}]" for k in c.kwargs]:
        v = _given(c.args, c.kwargs, slot)
        if isinstance(v, (torch.nn.Module, torch.Tensor)) or callable(v):
            continue
        for how in ("float", "bool", "neg", "zero", "str", "None", "tuple3", "tensor"):
            out.append((name, "ctor", slot, how))
    out += [(name, "ctor", "typo", ""), (name, "ctor", "dtype", "str"),
            (name, "ctor", "dtype", "int64"), (name, "ctor", "device", "meta"),
            (name, "ctor", "device", "nope")]
    f = sample.forward_input
    for slot in [f"args[{i}]" for i in range(len(f.args))] + [f"kwargs[{k}]" for k in f.kwargs]:
        if not isinstance(_given(f.args, f.kwargs, slot), torch.Tensor):
            continue
        for how in ("dim+1", "dim-1", "size0", "chan", "int64", "bool", "float32",
                    "complex128", "list", "None", "0d"):
            out.append((name, "fwd", slot, how))
    out.append((name, "fwd", "extra", ""))
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = info.module_cls(*c.args, **c.kwargs)
    keys = list(module.state_dict())
    for key in keys[:2]:
        out += [(name, "state", f"shape:{key}", "strict"), (name, "state", f"dtype:{key}", "")]
    if keys:
        out += [(name, "state", "missing", "strict"), (name, "state", "missing", "loose")]
    out += [(name, "state", "extra", "strict"), (name, "state", "extra", "loose")]
    out += [(name, "state", s, "") for s in ("to_nope", "to_int64", "half_double",
                                             "zero_grad", "train_yes")]
    return out


FIXED = [
    ("Linear", "fwd", "kwargs[input]", "chan"), ("Linear", "fwd", "kwargs[input]", "0d"),
    ("Linear", "ctor", "dtype", "int64"), ("BatchNorm1d", "fwd", "args[0]", "list"),
    ("AdaptiveAvgPool2d", "fwd", "args[0]", "None"), ("Bilinear", "fwd", "args[0]", "0d"),
    ("CTCLoss", "fwd", "args[0]", "int64"), ("CTCLoss", "fwd", "args[0]", "complex128"),
    ("CTCLoss", "fwd", "args[0]", "0d"), ("Conv2d", "ctor", "args[0]", "float"),
    ("Conv1d", "ctor", "args[2]", "neg"), ("ConvTranspose1d", "ctor", "args[1]", "float"),
    ("ConvTranspose2d", "fwd", "args[0]", "bool"), ("CrossEntropyLoss", "fwd", "args[0]", "0d"),
    ("Embedding", "fwd", "args[0]", "list"),
    ("FractionalMaxPool2d", "ctor", "kwargs[output_ratio]", "str"),
    ("FractionalMaxPool3d", "ctor", "kwargs[output_ratio]", "tensor"),
    ("FractionalMaxPool2d", "fwd", "args[0]", "list"),
    ("FractionalMaxPool3d", "fwd", "args[0]", "0d"), ("GroupNorm", "ctor", "args[0]", "float"),
    ("GroupNorm", "ctor", "args[1]", "bool"), ("Hardtanh", "fwd", "args[0]", "complex128"),
    ("HingeEmbeddingLoss", "fwd", "args[0]", "complex128"),
    ("HuberLoss", "fwd", "args[1]", "bool"), ("L1Loss", "fwd", "args[0]", "complex128"),
    ("LPPool2d", "fwd", "args[0]", "0d"), ("NLLLoss", "fwd", "args[0]", "dim-1"),
    ("LinearCrossEntropyLoss", "ctor", "kwargs[out_features]", "float"),
    ("LinearCrossEntropyLoss", "ctor", "kwargs[weight]", "str"),
    ("LinearCrossEntropyLoss", "ctor", "kwargs[ignore_index]", "tensor"),
    ("LinearCrossEntropyLoss", "ctor", "kwargs[device]", "float"),
    ("Tanh", "fwd", "args[0]", "list"),
    # InstanceNorm without affine or running stats: torch builds with any dtype
    *[(f"InstanceNorm{d}d", "ctor", "dtype", "int64") for d in (1, 2, 3)],
    # a float head count: torch's assert (embed_dim // num_heads) * num_heads == embed_dim
    ("MultiheadAttention", "ctor", "kwargs[embed_dim]", "float"),
    ("MultiheadAttention", "ctor", "kwargs[num_heads]", "float"),
    ("Transformer", "ctor", "kwargs[d_model]", "float"),
    ("Transformer", "ctor", "kwargs[nhead]", "float"),
    ("TransformerDecoderLayer", "ctor", "args[0]", "float"),
    ("TransformerDecoderLayer", "ctor", "args[1]", "float"),
    ("TransformerEncoderLayer", "ctor", "args[0]", "float"),
    ("TransformerEncoderLayer", "ctor", "args[1]", "float"),
    ("MultiheadAttention", "fwd", "args[1]", "chan"),
    ("MultiheadAttention", "fwd", "args[2]", "chan"),
    # a tensor as ConvTranspose's output_size (one positional argument too many)
    ("ConvTranspose1d", "fwd", "extra", ""), ("ConvTranspose2d", "fwd", "extra", ""),
    ("ConvTranspose3d", "fwd", "extra", ""), ("LazyConvTranspose1d", "fwd", "extra", ""),
    ("LazyConvTranspose2d", "fwd", "extra", ""), ("LazyConvTranspose3d", "fwd", "extra", ""),
    ("AvgPool2d", "fwd", "args[0]", "dim-1"), ("AvgPool2d", "fwd", "args[0]", "0d"),
    ("CTCLoss", "fwd", "args[1]", "bool"), ("CTCLoss", "fwd", "args[1]", "complex128"),
    ("BCEWithLogitsLoss", "fwd", "args[1]", "complex128"),
    ("SoftMarginLoss", "fwd", "args[0]", "complex128"),
    ("SoftMarginLoss", "fwd", "args[1]", "complex128"),
    ("MultiLabelMarginLoss", "fwd", "args[1]", "complex128"),
    ("SiLU", "fwd", "args[0]", "complex128"), ("Threshold", "fwd", "args[0]", "complex128"),
    ("RMSNorm", "fwd", "args[0]", "float32"),
]
SPREAD = [
    ("LayerNorm", "ctor", "typo", ""), ("GroupNorm", "ctor", "args[0]", "None"),
    ("InstanceNorm3d", "ctor", "args[1]", "None"),
    ("LinearCrossEntropyLoss", "ctor", "kwargs[device]", "None"),
    ("Embedding", "ctor", "kwargs[num_embeddings]", "bool"),
    ("LinearCrossEntropyLoss", "ctor", "kwargs[reduction]", "bool"),
    ("LPPool3d", "ctor", "args[2]", "bool"), ("LSTM", "ctor", "kwargs[input_size]", "float"),
    ("LazyConvTranspose1d", "ctor", "args[0]", "float"), ("LPPool3d", "ctor", "args[1]", "float"),
    ("LazyConvTranspose1d", "ctor", "dtype", "int64"), ("MSELoss", "ctor", "device", "meta"),
    ("InstanceNorm1d", "ctor", "device", "meta"), ("LSTM", "ctor", "kwargs[hidden_size]", "neg"),
    ("LazyConv2d", "ctor", "args[0]", "neg"), ("LPPool3d", "ctor", "args[2]", "neg"),
    ("LazyConv2d", "ctor", "device", "nope"), ("InstanceNorm2d", "ctor", "device", "nope"),
    ("LSTM", "ctor", "kwargs[bias]", "str"), ("InstanceNorm3d", "ctor", "args[2]", "str"),
    ("LPPool3d", "ctor", "args[1]", "str"), ("LSTM", "ctor", "kwargs[bias]", "tensor"),
    ("GELU", "ctor", "args[0]", "tensor"), ("LPPool1d", "ctor", "args[1]", "tensor"),
    ("LSTM", "ctor", "kwargs[input_size]", "tuple3"),
    ("InstanceNorm3d", "ctor", "args[1]", "tuple3"), ("LayerNorm", "ctor", "args[0]", "tuple3"),
    ("LSTM", "ctor", "kwargs[batch_first]", "zero"),
    ("CrossEntropyLoss", "ctor", "kwargs[reduction]", "zero"),
    ("LPPool2d", "ctor", "args[0]", "zero"), ("LazyConv1d", "fwd", "extra", ""),
    ("LazyConvTranspose1d", "fwd", "args[0]", "0d"), ("LeakyReLU", "fwd", "args[0]", "0d"),
    ("LazyConvTranspose2d", "fwd", "args[0]", "None"), ("GRUCell", "fwd", "args[1]", "None"),
    ("LeakyReLU", "fwd", "args[0]", "bool"), ("LPPool1d", "fwd", "args[0]", "bool"),
    ("KLDivLoss", "fwd", "args[1]", "chan"), ("MaxPool1d", "fwd", "args[0]", "chan"),
    ("LazyConv1d", "fwd", "args[0]", "complex128"),
    ("PoissonNLLLoss", "fwd", "args[0]", "complex128"), ("LPPool1d", "fwd", "args[0]", "dim+1"),
    ("LogSoftmax", "fwd", "args[0]", "dim+1"), ("LogSoftmax", "fwd", "args[0]", "dim-1"),
    ("LPPool1d", "fwd", "args[0]", "dim-1"), ("LayerNorm", "fwd", "args[0]", "float32"),
    ("LocalResponseNorm", "fwd", "args[0]", "float32"), ("LSTMCell", "fwd", "args[0]", "int64"),
    ("MSELoss", "fwd", "args[1]", "int64"), ("LazyConvTranspose2d", "fwd", "args[0]", "list"),
    ("MSELoss", "fwd", "args[0]", "size0"), ("LPPool2d", "fwd", "args[0]", "size0"),
    ("GroupNorm", "state", "dtype:bias", ""), ("LayerNorm", "state", "extra", "strict"),
    ("LayerNorm", "state", "extra", "loose"), ("LayerNorm", "state", "half_double", ""),
    ("GroupNorm", "state", "missing", "strict"), ("GroupNorm", "state", "missing", "loose"),
    ("GroupNorm", "state", "shape:bias", "strict"), ("LayerNorm", "state", "to_int64", ""),
    ("LayerNorm", "state", "to_nope", ""), ("LayerNorm", "state", "train_yes", ""),
    ("LayerNorm", "state", "zero_grad", ""),
]


@pytest.mark.parametrize("case", FIXED + SPREAD, ids=lambda c: "-".join(v for v in c if v))
def test_one_wrong_thing_answers_as_pytorch(case):
    run_case(*case)

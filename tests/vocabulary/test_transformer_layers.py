"""nn.TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder,
TransformerDecoder and Transformer against torch's: parameter names, order and seeded
values, a torch state dict loaded, float64 outputs and the gradient of a random upstream
into the inputs and every parameter (post- and pre-norm, both layouts, relu / gelu / a
callable, bool and float masks, causal masks detected), float32, empty and unbatched
inputs, torch's causal mask, deep copies, warnings and errors of the same class."""

import copy
import warnings

import numpy as np
import pytest
import torch
from torch.nn.modules import transformer as torch_transformer

import microgradnorm as mg
from microgradnorm import nn
from microgradnorm.nn import transformer_layers

E, HEADS, FF, N, S, T = 8, 2, 12, 2, 4, 3
RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _quiet_warnings():
    # both libraries warn at building an encoder that torch's nested-tensor path skips, and
    # at a bool padding mask beside a float mask (tested once below, as torch's)
    with warnings.catch_warnings():
        for message in ("enable_nested_tensor is True", "Support for mismatched",
                        "The PyTorch API of nested tensors"):
            warnings.filterwarnings("ignore", message)
        yield


def twins(name, *args, dtype="float64", **options):
    """A torch module and ours holding its state dict (the same keys, in the same order)."""
    theirs = getattr(torch.nn, name)(*args, dtype=getattr(torch, dtype), **options)
    ours = getattr(nn, name)(*args, dtype=dtype, **options)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    return ours.eval(), theirs.eval()


def stacks(name, num_layers=2, norm=True, **options):
    """Encoder or decoder stacks of ``num_layers`` layers, with a final LayerNorm."""
    layer = {"TransformerEncoder": "TransformerEncoderLayer",
             "TransformerDecoder": "TransformerDecoderLayer"}[name]
    theirs_layer = getattr(torch.nn, layer)(E, HEADS, FF, dtype=torch.float64, **options)
    ours_layer = getattr(nn, layer)(E, HEADS, FF, dtype="float64", **options)
    theirs = getattr(torch.nn, name)(theirs_layer, num_layers, norm and torch.nn.LayerNorm(
        E, dtype=torch.float64) or None)
    ours = getattr(nn, name)(ours_layer, num_layers, norm and nn.LayerNorm(
        E, dtype="float64") or None)
    for layer in theirs.layers:                       # copies differ from here on
        torch.nn.init.normal_(layer.linear1.weight)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    return ours.eval(), theirs.eval()


def seq(length, batch_first=False, batched=True, dtype=np.float64):
    if not batched:
        return RNG.standard_normal((length, E)).astype(dtype)
    shape = (N, length, E) if batch_first else (length, N, E)
    return RNG.standard_normal(shape).astype(dtype)


def lib_value(value, lib):
    # arrays become each library's tensor; other arguments pass as they are
    if isinstance(value, np.ndarray):
        return mg.tensor(value) if lib is mg else torch.tensor(value)
    return value


def run_both(ours, theirs, arrays, call=None, atol=1e-12):
    """Output and every gradient (inputs and parameters) of both modules, compared."""
    call = call or {}
    mine = [mg.tensor(a, requires_grad=True) for a in arrays]
    reference = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = ours(*mine, **{k: lib_value(v, mg) for k, v in call.items()})
    expected = theirs(*reference, **{k: lib_value(v, torch) for k, v in call.items()})
    assert str(out.dtype) == str(expected.dtype)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=atol,
                               rtol=0)
    upstream = RNG.standard_normal(out.shape).astype(out.dtype)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=atol, rtol=0)
    theirs_named = dict(theirs.named_parameters())
    names = [name for name, _ in ours.named_parameters()]
    assert names == list(theirs_named)
    for name, parameter in ours.named_parameters():
        np.testing.assert_allclose(parameter.grad.numpy(), theirs_named[name].grad.numpy(),
                                   atol=atol, rtol=0, err_msg=name)
    return out


def causal(length, kind):
    mask = np.triu(np.ones((length, length), bool), 1)
    return mask if kind == "bool" else np.where(mask, -np.inf, 0.0)


def padding(length, kind="bool"):
    mask = np.zeros((N, length), bool)
    mask[0, -1] = mask[1, 0] = True
    return mask if kind == "bool" else np.where(mask, -np.inf, 0.0)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu", "callable"])
def test_encoder_layer_matches_torch(norm_first, batch_first, activation):
    act = {"relu": ("relu", "relu"), "gelu": ("gelu", "gelu"),
           "callable": (lambda x: mg.tanh(x) * 2.0, lambda x: torch.tanh(x) * 2.0)}[activation]
    theirs = torch.nn.TransformerEncoderLayer(E, HEADS, FF, activation=act[1],
                                              norm_first=norm_first, batch_first=batch_first,
                                              dtype=torch.float64).eval()
    ours = nn.TransformerEncoderLayer(E, HEADS, FF, activation=act[0], norm_first=norm_first,
                                      batch_first=batch_first, dtype="float64").eval()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert ours.activation_relu_or_gelu == theirs.activation_relu_or_gelu
    x = seq(S, batch_first)
    run_both(ours, theirs, [x])
    run_both(ours, theirs, [x], dict(src_mask=causal(S, "float"),
                                     src_key_padding_mask=padding(S)))


@pytest.mark.parametrize("call", [
    dict(src_mask=causal(S, "bool"), is_causal=True),             # the hint: SDPA's flag
    dict(src_mask=causal(S, "float"), is_causal=True),
    dict(src_mask=causal(S, "bool"), src_key_padding_mask=padding(S, "bool")),
    dict(src_key_padding_mask=padding(S, "float")),
    dict(src_mask=RNG.standard_normal((N * HEADS, S, S))),
])
def test_encoder_layer_masks(call):
    ours, theirs = twins("TransformerEncoderLayer", E, HEADS, FF, norm_first=True)
    run_both(ours, theirs, [seq(S)], call)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_matches_torch(norm_first, batch_first):
    ours, theirs = twins("TransformerDecoderLayer", E, HEADS, FF, norm_first=norm_first,
                         batch_first=batch_first, activation="gelu")
    arrays = [seq(T, batch_first), seq(S, batch_first)]
    run_both(ours, theirs, arrays)
    run_both(ours, theirs, arrays, dict(tgt_mask=causal(T, "bool"), tgt_is_causal=True,
                                        memory_key_padding_mask=padding(S, "float"),
                                        tgt_key_padding_mask=padding(T)))
    run_both(ours, theirs, arrays, dict(tgt_mask=causal(T, "float"),
                                        memory_mask=RNG.standard_normal((T, S))))


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_stacks_detect_the_causal_mask_as_torch(kind):
    ours, theirs = stacks("TransformerEncoder", batch_first=True)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    run_both(ours, theirs, [seq(S, True)], dict(mask=causal(S, kind)))
    run_both(ours, theirs, [seq(S, True)], dict(mask=causal(S, kind),
                                                src_key_padding_mask=padding(S)))
    ours, theirs = stacks("TransformerDecoder", norm=False, norm_first=True)
    run_both(ours, theirs, [seq(T), seq(S)], dict(tgt_mask=causal(T, kind),
                                                  memory_key_padding_mask=padding(S)))


@pytest.mark.parametrize("mask, hint, size", [
    (causal(S, "float"), None, S), (causal(S, "bool"), None, S), (causal(S, "bool"), None, 3),
    (np.zeros((S, S)), None, S), (causal(S, "float"), False, S), (None, True, S),
    (None, None, S), (np.zeros((S, S)), True, S), (np.zeros((N * HEADS, S, S)), None, S),
    (causal(S, "float").astype(np.float32), None, S),
])
def test_causal_detection_is_torchs(mask, hint, size):
    expected = torch_transformer._detect_is_causal_mask(
        None if mask is None else torch.tensor(mask), hint, size)
    like = mg.tensor(seq(size))
    got = transformer_layers._detect_is_causal_mask(
        None if mask is None else mg.tensor(mask), hint, size, like)
    assert got == expected
    assert transformer_layers._detect_is_causal_mask(mask, hint, size, like) == expected


@pytest.mark.parametrize("options", [dict(), dict(batch_first=True, norm_first=True)])
def test_transformer_matches_torch(options):
    ours, theirs = twins("Transformer", E, HEADS, 2, 1, FF, **options)
    bf = options.get("batch_first", False)
    arrays = [seq(S, bf), seq(T, bf)]
    run_both(ours, theirs, arrays, atol=1e-11)
    run_both(ours, theirs, arrays, dict(
        src_mask=causal(S, "float"), tgt_mask=causal(T, "bool"),
        memory_mask=RNG.standard_normal((T, S)), src_key_padding_mask=padding(S),
        tgt_key_padding_mask=padding(T), memory_key_padding_mask=padding(S)), atol=1e-11)


def test_unbatched_and_empty_inputs():
    ours, theirs = twins("Transformer", E, HEADS, 1, 1, FF)
    run_both(ours, theirs, [seq(S, batched=False), seq(T, batched=False)],
             dict(tgt_mask=causal(T, "float"), src_key_padding_mask=padding(S)[0]))
    ours, theirs = twins("TransformerEncoderLayer", E, HEADS, FF)
    for shape in ((0, N, E), (S, 0, E)):
        run_both(ours, theirs, [np.zeros(shape)])


def test_float32_and_training_without_dropout():
    ours, theirs = twins("Transformer", E, HEADS, 1, 1, FF, dtype="float32", dropout=0.0)
    ours.train()
    theirs.train()
    out = run_both(ours, theirs, [seq(S, dtype=np.float32), seq(T, dtype=np.float32)],
                   dict(tgt_mask=causal(T, "bool")), atol=1e-5)
    assert out.dtype == np.float32


def test_eval_without_grad_matches_torchs_fast_paths():
    ours, theirs = twins("TransformerEncoderLayer", E, HEADS, FF, batch_first=True)
    x = seq(S, True)
    with torch.no_grad(), mg.no_grad():                 # torch's fused inference kernel
        for call in (dict(), dict(src_key_padding_mask=padding(S))):
            np.testing.assert_allclose(
                ours(mg.tensor(x), **{k: lib_value(v, mg) for k, v in call.items()}).numpy(),
                theirs(torch.tensor(x), **{k: lib_value(v, torch) for k, v in call.items()}),
                atol=1e-12, rtol=0)
    # the stack's nested-tensor path writes zeros at padded positions; here (and in torch
    # with grad) they are computed as the others (docs/pytorch.md)
    ours, theirs = stacks("TransformerEncoder", batch_first=True)
    pad = np.zeros((N, S), bool)
    pad[0, -1] = True                                 # padding at the end: torch's path
    with torch.no_grad(), mg.no_grad():
        got = ours(mg.tensor(x), src_key_padding_mask=mg.tensor(pad)).numpy()
        nested = theirs(torch.tensor(x), src_key_padding_mask=torch.tensor(pad)).numpy()
    computed = theirs(torch.tensor(x), src_key_padding_mask=torch.tensor(pad)).detach()
    np.testing.assert_allclose(got, computed.numpy(), atol=1e-12, rtol=0)
    np.testing.assert_array_equal(nested[0, -1], 0.0)
    np.testing.assert_allclose(got[~pad], nested[~pad], atol=1e-12, rtol=0)


def test_dropout_only_in_training():
    ours, _ = twins("TransformerEncoderLayer", E, HEADS, FF, dropout=0.5)
    x = mg.tensor(seq(S))
    kept = ours(x).detach().numpy()
    np.testing.assert_array_equal(ours(x).detach().numpy(), kept)
    assert not np.allclose(ours.train()(x).detach().numpy(), kept)


@pytest.mark.parametrize("sz, dtype", [(0, None), (1, None), (4, None), (3, "float64"),
                                       (3, "bool"), (3, "float16")])
def test_generate_square_subsequent_mask(sz, dtype):
    got = nn.Transformer.generate_square_subsequent_mask(sz, dtype=dtype)
    expected = torch.nn.Transformer.generate_square_subsequent_mask(
        sz, dtype=None if dtype is None else getattr(torch, dtype))
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert not got.requires_grad


@pytest.mark.parametrize("args", [(-1,), (2.0,), (True,), (3, None, "int64")])
def test_generate_square_subsequent_mask_errors(args):
    theirs = [getattr(torch, a) if isinstance(a, str) else a for a in args]
    with pytest.raises(Exception) as expected:                # noqa: PT011 (torch's class)
        torch.nn.Transformer.generate_square_subsequent_mask(*theirs)
    with pytest.raises(expected.type):
        nn.Transformer.generate_square_subsequent_mask(*args)


@pytest.mark.parametrize("name, args, options", [
    ("Transformer", (E, HEADS, 1, 1, FF), dict()),
    ("Transformer", (E, HEADS, 1, 2, FF), dict(bias=False, norm_first=True)),
    ("TransformerEncoderLayer", (E, HEADS), dict()),
    ("TransformerDecoderLayer", (E, HEADS, FF), dict(bias=False)),
])
def test_parameters_are_torchs(name, args, options):
    mg.manual_seed(5)
    torch.manual_seed(5)
    ours, theirs = getattr(nn, name)(*args, **options), getattr(torch.nn, name)(*args, **options)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    state, expected = ours.state_dict(), theirs.state_dict()
    assert list(state) == list(expected)
    for key, value in expected.items():                   # float32, drawn in torch's order
        assert state[key].dtype == np.float32
        np.testing.assert_array_equal(state[key].numpy(), value.numpy(), err_msg=key)


def test_layers_are_independent_deep_copies():
    layer = nn.TransformerEncoderLayer(E, HEADS, FF)
    encoder = nn.TransformerEncoder(layer, 3)
    first, second = encoder.layers[0], encoder.layers[1]
    assert first is not layer and first.linear1.weight is not second.linear1.weight
    np.testing.assert_array_equal(second.linear1.weight.detach().numpy(),
                                  layer.linear1.weight.detach().numpy())
    with mg.no_grad():
        first.linear1.weight.fill_(1.0)
    assert not np.any(second.linear1.weight.detach().numpy() == 1.0)
    assert not np.any(layer.linear1.weight.detach().numpy() == 1.0)
    clone = copy.deepcopy(encoder)
    assert len(clone.parameters()) == len(encoder.parameters()) == 3 * 12
    assert all(a is not b for a, b in zip(clone.parameters(), encoder.parameters()))


def test_an_activation_module_is_registered_as_torchs():
    theirs = torch.nn.TransformerEncoderLayer(E, HEADS, FF, dtype=torch.float64,
                                              activation=torch.nn.GELU("tanh")).eval()
    ours = nn.TransformerEncoderLayer(E, HEADS, FF, dtype="float64",
                                      activation=nn.GELU("tanh")).eval()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert ours.activation_relu_or_gelu == theirs.activation_relu_or_gelu == 2
    run_both(ours, theirs, [seq(S)])


def test_custom_encoder_and_warnings_as_torchs():
    for options in (dict(), dict(batch_first=True), dict(batch_first=True, norm_first=True),
                    dict(batch_first=True, activation=torch.tanh)):
        mine = dict(options, activation=mg.tanh) if "activation" in options else options
        for library, kwargs in ((torch.nn, options), (nn, mine)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                layer = library.TransformerEncoderLayer(E, HEADS, FF, **kwargs)
                encoder = library.TransformerEncoder(layer, 1)
            found = [(w.category, str(w.message)) for w in caught
                     if "nested" in str(w.message)]
            if library is torch.nn:
                expected, use = found, encoder.use_nested_tensor
            else:
                assert found == expected and encoder.use_nested_tensor == use
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, HEADS, FF), 1)
    model = nn.Transformer(E, HEADS, 0, 1, FF, custom_encoder=encoder)
    assert model.encoder is encoder
    with pytest.warns(UserWarning, match="mismatched src_key_padding_mask and src_mask"):
        encoder.layers[0](mg.randn(S, N, E), src_mask=mg.zeros(S, S),
                          src_key_padding_mask=mg.tensor(padding(S)))


def _same_error(ours, theirs):
    with pytest.raises(Exception) as expected:                # noqa: PT011 (torch's class)
        theirs()
    with pytest.raises(expected.type):
        ours()


@pytest.mark.parametrize("name, args, options", [
    ("TransformerEncoderLayer", (E, HEADS, FF), dict(activation="tanh")),
    ("TransformerDecoderLayer", (E, HEADS, FF), dict(dropout=1.5)),
    ("TransformerEncoderLayer", (E, 3, FF), dict()),
    ("TransformerEncoderLayer", (E, 0, FF), dict()),
    ("TransformerEncoderLayer", (E, HEADS, -1), dict()),
    ("TransformerDecoderLayer", (E, HEADS), dict(dim_feedforward=2.0)),
])
def test_constructor_errors_as_torch(name, args, options):
    _same_error(lambda: getattr(nn, name)(*args, **options),
                lambda: getattr(torch.nn, name)(*args, **options))


@pytest.mark.parametrize("name", ["TransformerEncoderLayer", "TransformerDecoderLayer"])
@pytest.mark.parametrize("options, error", [
    (dict(dim_feedforward=-1), RuntimeError),
    (dict(layer_norm_eps="1e-5"), TypeError),
])
def test_constructor_errors_name_the_argument(name, options, error):
    # torch builds any eps (a string fails at its first call); the layer names its own
    # argument (before any draw)
    state = mg.default_generator.get_state()
    with pytest.raises(error, match=f"{name}: {next(iter(options))}"):
        getattr(nn, name)(E, HEADS, **options)
    np.testing.assert_array_equal(mg.default_generator.get_state(), state)


@pytest.mark.parametrize("count", [2.0, "2"])
def test_stack_errors_as_torch(count):
    _same_error(lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(E, HEADS, FF), count),
                lambda: torch.nn.TransformerEncoder(
                    torch.nn.TransformerEncoderLayer(E, HEADS, FF), count))
    ours, theirs = (nn.TransformerDecoder(nn.TransformerDecoderLayer(E, HEADS, FF), 0),
                    torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(E, HEADS, FF), 0))
    x = seq(S, dtype=np.float32)
    _same_error(lambda: ours(mg.tensor(x), mg.tensor(x)),
                lambda: theirs(torch.tensor(x), torch.tensor(x)))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("case", [
    dict(src=(S, N, E - 1)), dict(src=(E,)), dict(src=(1, S, N, E)), dict(src=()),
    dict(src=(S, N, E), dtype=np.float32),
    dict(src_mask=np.zeros((S, S), np.int64)), dict(is_causal=True),
    dict(src_mask=np.zeros((S, S + 1), bool)), dict(src_mask=np.zeros((S, S), np.float16)),
    dict(src_key_padding_mask=np.zeros((N, S), np.float16)),
])
def test_encoder_layer_errors_as_torch(norm_first, case):
    ours, theirs = twins("TransformerEncoderLayer", E, HEADS, FF, norm_first=norm_first)
    src = RNG.standard_normal(case.get("src", (S, N, E))).astype(case.get("dtype", np.float64))
    call = {k: v for k, v in case.items() if k not in ("src", "dtype")}
    _same_error(lambda: ours(mg.tensor(src), **{k: lib_value(v, mg) for k, v in call.items()}),
                lambda: theirs(torch.tensor(src),
                               **{k: lib_value(v, torch) for k, v in call.items()}))


@pytest.mark.parametrize("case", [
    dict(memory=(S, N + 1, E)), dict(memory=(S, N, E - 1)), dict(memory=(S, E)),
    dict(tgt_mask=np.zeros((T, T), np.int64)), dict(memory_is_causal=True),
    dict(tgt=(T, N, E), dtype=np.float32), dict(memory_mask=np.zeros((T, S), np.float16)),
])
def test_decoder_errors_as_torch(case):
    ours, theirs = stacks("TransformerDecoder", 1, norm_first=True)
    shapes = {"tgt": (T, N, E), "memory": (S, N, E)}
    shapes.update({k: v for k, v in case.items() if k in shapes})
    arrays = {k: RNG.standard_normal(v).astype(case.get("dtype", np.float64))
              for k, v in shapes.items()}
    call = {k: v for k, v in case.items() if k not in ("tgt", "memory", "dtype")}
    _same_error(lambda: ours(**{k: mg.tensor(v) for k, v in arrays.items()},
                             **{k: lib_value(v, mg) for k, v in call.items()}),
                lambda: theirs(**{k: torch.tensor(v) for k, v in arrays.items()},
                               **{k: lib_value(v, torch) for k, v in call.items()}))


@pytest.mark.parametrize("batch_first, src, tgt", [
    (False, (S, N, E), (T, N + 1, E)), (True, (N, S, E), (N + 1, T, E)),
    (False, (S, N, E), (T, N, E - 1)), (True, (N, S, E + 1), (N, T, E)),
    (False, (E,), (E,)), (True, (E,), (E,)), (False, (S, E + 1), (T, E)), (True, (), ()),
])
def test_transformer_errors_as_torch(batch_first, src, tgt):
    ours, theirs = twins("Transformer", E, HEADS, 1, 1, FF, batch_first=batch_first)
    a, b = RNG.standard_normal(src), RNG.standard_normal(tgt)
    _same_error(lambda: ours(mg.tensor(a), mg.tensor(b)),
                lambda: theirs(torch.tensor(a), torch.tensor(b)))


def test_a_failed_call_changes_nothing():
    ours, _ = twins("Transformer", E, HEADS, 1, 1, FF)
    before = {k: v.numpy().copy() for k, v in ours.state_dict().items()}
    src = mg.tensor(seq(S), requires_grad=True)
    with pytest.raises(RuntimeError):
        ours(src, mg.tensor(seq(T)), tgt_mask=mg.tensor(np.zeros((T, T + 1), bool)))
    assert src.grad is None and all(p.grad is None for p in ours.parameters())
    for key, value in ours.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])


@pytest.mark.parametrize("name, mask_name, lengths", [
    ("TransformerEncoderLayer", "src_mask", (S, S)),
    ("TransformerDecoderLayer", "memory_mask", (T, S)),
])
def test_an_array_mask_is_copied(name, mask_name, lengths):
    # the attention keeps its mask for backward: writing to the caller's array between
    # forward and backward must not change a gradient
    ours, theirs = twins(name, E, HEADS, FF)
    arrays = [seq(length) for length in lengths][:1 if mask_name == "src_mask" else 2]
    mask = RNG.standard_normal((lengths[0], S))
    given = mask.copy()
    mine = [mg.tensor(a, requires_grad=True) for a in arrays]
    reference = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = ours(*mine, **{mask_name: given})
    expected = theirs(*reference, **{mask_name: torch.tensor(mask)})
    given[:] = 0.0
    upstream = RNG.standard_normal(out.shape)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12, rtol=0)


@pytest.mark.parametrize("given", ["list", "float64 array"])
def test_array_float_masks_take_the_models_dtype(given):
    ours, theirs = twins("TransformerEncoderLayer", E, HEADS, FF, dtype="float32")
    mask, x = causal(S, "float"), seq(S, dtype=np.float32)              # a float64 mask
    out = ours(mg.tensor(x), src_mask=mask.tolist() if given == "list" else mask)
    expected = theirs(torch.tensor(x), src_mask=torch.tensor(mask, dtype=torch.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-5,
                               rtol=0)


def test_float32_masks_in_a_float64_model_as_torch():
    # torch's attention takes a float32 mask whatever the query's dtype
    f32 = np.float32
    ours, theirs = twins("TransformerEncoderLayer", E, HEADS, FF)
    run_both(ours, theirs, [seq(S)], dict(src_mask=causal(S, "float").astype(f32)))
    run_both(ours, theirs, [seq(S)], dict(src_mask=RNG.standard_normal((S, S)).astype(f32),
                                          src_key_padding_mask=padding(S, "float").astype(f32)))
    ours, theirs = twins("TransformerDecoderLayer", E, HEADS, FF)
    run_both(ours, theirs, [seq(T), seq(S)], dict(
        tgt_mask=causal(T, "float").astype(f32),
        memory_mask=RNG.standard_normal((T, S)).astype(f32)))
    ours, theirs = stacks("TransformerEncoder", batch_first=True)   # detected causal
    run_both(ours, theirs, [seq(S, True)], dict(mask=causal(S, "float").astype(f32)))


@pytest.mark.parametrize("name, call", [
    ("TransformerEncoderLayer", lambda lib: dict(src_mask=lib.zeros(S, S),
                                                 src_key_padding_mask=lib.tensor(padding(S)))),
    ("TransformerDecoderLayer", lambda lib: dict(tgt_mask=lib.zeros(T, T),
                                                 tgt_key_padding_mask=lib.tensor(padding(T)))),
])
def test_mismatched_masks_warn_as_torch(name, call):
    found = {}
    for lib, module in ((torch, torch.nn), (mg, nn)):
        layer = getattr(module, name)(E, HEADS, FF)
        arrays = ([lib.randn(T, N, E), lib.randn(S, N, E)] if "Decoder" in name
                  else [lib.randn(S, N, E)])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer(*arrays, **call(lib))
        found[lib] = [str(w.message) for w in caught if "mismatched" in str(w.message)]
    assert found[mg] == found[torch] != []


def test_dropout_one_trains_as_torch():
    # every dropout zeroes all, the attention's too (torch's SDPA gives zeros): the same
    # deterministic output and gradients
    ours, theirs = twins("Transformer", E, HEADS, 1, 1, FF, dropout=1.0)
    ours.train()
    theirs.train()
    run_both(ours, theirs, [seq(S), seq(T)], dict(tgt_mask=causal(T, "bool")))


@pytest.mark.parametrize("batch_first", [False, True])
def test_dropout_trains_as_torch_for_one_seed(batch_first):
    # every dropout draws torch's mask: the attention's (torch's CPU attention drops its
    # probabilities out as F.dropout does) and those after it (over torch's memory layout
    # of the attention's output)
    ours, theirs = twins("Transformer", E, HEADS, 1, 1, FF, dropout=0.3,
                         batch_first=batch_first)
    ours.train()
    theirs.train()
    mg.manual_seed(11)
    torch.manual_seed(11)
    run_both(ours, theirs, [seq(S, batch_first), seq(T, batch_first)],
             dict(tgt_mask=causal(T, "float")), atol=1e-11)
    assert mg.rand(2).tolist() == torch.rand(2).tolist()


def test_the_decoder_stack_names_tgt():
    ours, theirs = stacks("TransformerDecoder", 1)
    _same_error(lambda: ours(mg.tensor(np.float64(1)), mg.tensor(seq(S))),
                lambda: theirs(torch.tensor(np.float64(1)), torch.tensor(seq(S))))
    with pytest.raises(IndexError, match="tgt has shape"):
        ours(mg.tensor(np.float64(1)), mg.tensor(seq(S)))

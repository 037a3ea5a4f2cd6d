"""nn.MultiheadAttention against torch.nn.MultiheadAttention: parameters (names, shapes,
order, seeded values), a torch state dict loaded, float64 outputs, weights and the gradient
of a random upstream into the inputs and every parameter, masks bool and float, and errors
of the same class."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm import nn

RNG = np.random.default_rng(0)
E, HEADS, N, L, S = 8, 2, 2, 3, 4


def twins(**options):
    """A torch module in float64 and ours holding its state dict."""
    theirs = torch.nn.MultiheadAttention(E, HEADS, dtype=torch.float64, **options)
    ours = nn.MultiheadAttention(E, HEADS, dtype="float64", **options)
    ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def inputs(options, batched=True):
    """query, key, value arrays in the module's layout."""
    def shape(length, features):
        if not batched:
            return (length, features)
        return (N, length, features) if options.get("batch_first") else (length, N, features)
    return (RNG.standard_normal(shape(L, E)), RNG.standard_normal(shape(S, options.get("kdim", E))),
            RNG.standard_normal(shape(S, options.get("vdim", E))))


def as_mask(array, lib):
    return None if array is None else (mg.tensor(array) if lib is mg else torch.tensor(array))


def run_both(options, call=None, batched=True, self_attention=False):
    """Outputs, weights and gradients of both modules on the same inputs, compared."""
    ours, theirs = twins(**options)
    call = call or {}
    arrays = inputs(options, batched)
    if self_attention:
        arrays = (arrays[0],) * 3
    mine = [mg.tensor(a, requires_grad=True) for a in arrays]
    reference = [torch.tensor(a, requires_grad=True) for a in arrays]
    masks = {k: call[k] for k in ("key_padding_mask", "attn_mask") if k in call}
    flags = {k: v for k, v in call.items() if k not in masks}
    out, weights = ours(*mine, **{k: as_mask(v, mg) for k, v in masks.items()}, **flags)
    expected, expected_weights = theirs(*reference, **{k: as_mask(v, torch)
                                                       for k, v in masks.items()}, **flags)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    assert (weights is None) == (expected_weights is None)
    if weights is not None:
        np.testing.assert_allclose(weights.detach().numpy(), expected_weights.detach().numpy(),
                                   atol=1e-12)
    upstream = RNG.standard_normal(out.shape)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)
    theirs_named = dict(theirs.named_parameters())
    for name, parameter in ours.named_parameters():
        np.testing.assert_allclose(parameter.grad.numpy(), theirs_named[name].grad.numpy(),
                                   atol=1e-12, err_msg=name)
    return out


def padding_mask(kind):
    mask = np.zeros((N, S), bool)
    mask[0, -1] = mask[1, 0] = True
    return mask if kind == "bool" else np.where(mask, -1.5, 0.0)


def attention_mask(kind, heads_dim=False):
    shape = (N * HEADS, L, S) if heads_dim else (L, S)
    if kind == "bool":
        mask = RNG.random(shape) < 0.3
        mask[..., 1] = False           # every query attends to a key no padding mask hides
        return mask
    return RNG.standard_normal(shape)


@pytest.mark.parametrize("options, call", [
    (dict(), dict()),
    (dict(batch_first=True), dict(need_weights=False)),
    (dict(), dict(key_padding_mask=padding_mask("bool"), attn_mask=attention_mask("bool"))),
    (dict(batch_first=True), dict(key_padding_mask=padding_mask("float"),
                                  attn_mask=attention_mask("float", heads_dim=True),
                                  average_attn_weights=False)),
    (dict(), dict(attn_mask=attention_mask("bool", heads_dim=True), need_weights=False)),
    (dict(kdim=3, vdim=5), dict(key_padding_mask=padding_mask("bool"))),
    (dict(add_bias_kv=True, add_zero_attn=True), dict(attn_mask=attention_mask("float"),
                                                      key_padding_mask=padding_mask("float"))),
    (dict(bias=False, add_zero_attn=True), dict(need_weights=False,
                                                key_padding_mask=padding_mask("bool"))),
])
def test_matches_torch(options, call):
    run_both(options, call)


def test_self_attention_and_unbatched_input():
    run_both(dict(batch_first=True), self_attention=True)
    run_both(dict(), dict(attn_mask=attention_mask("bool")), batched=False)
    run_both(dict(), dict(attn_mask=attention_mask("float", heads_dim=True)[:HEADS]),
             batched=False)
    run_both(dict(kdim=3, vdim=5), dict(key_padding_mask=padding_mask("bool")[0],
                                        average_attn_weights=False), batched=False)


def test_causal_hint_as_torch():
    causal = np.triu(np.ones((L, S), bool), 1)                         # True: may not attend
    for need_weights in (False, True):                  # SDPA's causal flag, or the mask
        run_both(dict(batch_first=True), dict(attn_mask=causal, is_causal=True,
                                              need_weights=need_weights))


def test_parameters_are_torchs():
    for options in (dict(), dict(kdim=3, vdim=5, add_bias_kv=True), dict(bias=False)):
        mg.manual_seed(3)
        torch.manual_seed(3)
        ours = nn.MultiheadAttention(E, HEADS, **options)
        theirs = torch.nn.MultiheadAttention(E, HEADS, **options)
        state, expected = ours.state_dict(), theirs.state_dict()
        assert list(state) == list(expected)
        for key, value in expected.items():               # float32, drawn in torch's order
            assert state[key].dtype == np.float32
            np.testing.assert_array_equal(state[key].numpy(), value.numpy(), err_msg=key)


def test_repr_and_out_proj_class_are_torchs():
    # torch's out_proj is a NonDynamicallyQuantizableLinear: its repr names it, in the
    # attention's and in every Transformer layer's
    from microgradnorm.nn.modules.linear import NonDynamicallyQuantizableLinear
    for options in (dict(), dict(bias=False, kdim=3, vdim=5)):
        ours = nn.MultiheadAttention(E, HEADS, **options)
        assert repr(ours) == repr(torch.nn.MultiheadAttention(E, HEADS, **options))
        assert type(ours.out_proj) is NonDynamicallyQuantizableLinear
        assert isinstance(ours.out_proj, nn.Linear)
    assert repr(nn.TransformerEncoderLayer(E, HEADS, 16)) == \
        repr(torch.nn.TransformerEncoderLayer(E, HEADS, 16))
    assert "NonDynamicallyQuantizableLinear" not in nn.modules.linear.__all__
    assert not hasattr(nn, "NonDynamicallyQuantizableLinear")      # nor in torch.nn

def test_float32_output_and_dtype_mismatch():
    ours, theirs = nn.MultiheadAttention(E, HEADS), torch.nn.MultiheadAttention(E, HEADS)
    q = RNG.standard_normal((L, N, E))
    out, weights = ours(*(mg.tensor(q, dtype="float32"),) * 3)
    assert out.dtype == weights.dtype == np.float32
    with pytest.raises(RuntimeError):
        theirs(*(torch.tensor(q),) * 3)
    with pytest.raises(RuntimeError):
        ours(*(mg.tensor(q),) * 3)


def test_dropout_only_in_training():
    ours, theirs = twins(dropout=0.5)
    q = RNG.standard_normal((L, N, E))
    ours.eval()
    theirs.eval()
    out, kept = ours(*(mg.tensor(q),) * 3)
    with torch.no_grad():
        expected, _ = theirs(*(torch.tensor(q),) * 3)
    np.testing.assert_allclose(out.detach().numpy(), expected.numpy(), atol=1e-12)
    ours.train()
    dropped, weights = ours(*(mg.tensor(q),) * 3)
    assert not np.allclose(dropped.detach().numpy(), out.detach().numpy())
    # torch returns the dropped weights: zeros and 1/(1 - p) scaled, rows no longer summing to 1
    assert not np.allclose(weights.detach().numpy().sum(-1), 1.0)
    np.testing.assert_allclose(kept.detach().numpy().sum(-1), 1.0, atol=1e-12)


def _same_error(ours, theirs):
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(type(expected.value)):
        ours()


@pytest.mark.parametrize("args, options", [
    ((8, 3), dict()),                    # embed_dim not divisible by num_heads
    ((0, 2), dict()),
    ((8, 0), dict()),
])
def test_constructor_errors_as_torch(args, options):
    _same_error(lambda: nn.MultiheadAttention(*args, **options),
                lambda: torch.nn.MultiheadAttention(*args, **options))


@pytest.mark.parametrize("case", [
    dict(query=(1, L, N, E)),                                     # query dims
    dict(key=(S, E)),                                             # key dims differ
    dict(query=(L, N, E + 1)),                                    # query features
    dict(key=(S, N, E + 1), value=(S, N, E + 1)),                 # key features
    dict(value=(S + 1, N, E)),                                    # key and value lengths
    dict(key_padding_mask=np.zeros((N, S + 1), bool)),
    dict(key_padding_mask=np.zeros((S,), bool)),
    dict(attn_mask=np.zeros((L, S + 1), bool)),
    dict(attn_mask=np.zeros((N, L, S), bool)),
    dict(attn_mask=np.zeros((L,), bool)),
    dict(attn_mask=np.zeros((L, S), np.int64)),
    dict(is_causal=True),                                         # the hint needs its mask
    dict(query=(L, E), key=(S, E), value=(S, E), attn_mask=np.zeros((N * HEADS, L, S))),
    dict(attn_mask=np.zeros((L, S), np.float16)),        # neither float32 nor the model's
    dict(attn_mask=np.zeros((L, S), np.float16), need_weights=False),
])
def test_forward_errors_as_torch(case):
    ours, theirs = twins()
    shapes = {"query": (L, N, E), "key": (S, N, E), "value": (S, N, E)}
    shapes.update({k: v for k, v in case.items() if k in shapes})
    arrays = {k: RNG.standard_normal(v) for k, v in shapes.items()}
    extra = {k: v for k, v in case.items() if k not in shapes}
    _same_error(lambda: ours(**{k: mg.tensor(v) for k, v in arrays.items()},
                             **{k: as_mask(v, mg) if isinstance(v, np.ndarray) else v
                                for k, v in extra.items()}),
                lambda: theirs(**{k: torch.tensor(v) for k, v in arrays.items()},
                               **{k: as_mask(v, torch) if isinstance(v, np.ndarray) else v
                                  for k, v in extra.items()}))


def test_a_failed_call_changes_nothing():
    ours, _ = twins()
    before = {k: v.numpy().copy() for k, v in ours.state_dict().items()}
    q = mg.tensor(RNG.standard_normal((L, N, E)), requires_grad=True)
    with pytest.raises(RuntimeError):
        ours(q, q, q, attn_mask=mg.tensor(np.zeros((L, L + 1), bool)))
    assert q.grad is None and all(p.grad is None for p in ours.parameters())
    for key, value in ours.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])


@pytest.mark.parametrize("need_weights", [False, True])
def test_an_array_mask_is_copied(need_weights):
    # the attention keeps its mask for backward: writing to the caller's array between
    # forward and backward must not change a gradient
    ours, theirs = twins()
    arrays = inputs({})
    mask = attention_mask("float")
    given = mask.copy()
    mine = [mg.tensor(a, requires_grad=True) for a in arrays]
    reference = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = ours(*mine, attn_mask=given, need_weights=need_weights)[0]
    expected = theirs(*reference, attn_mask=torch.tensor(mask), need_weights=need_weights)[0]
    given[:] = 0.0
    upstream = RNG.standard_normal(out.shape)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)


def test_float32_masks_in_a_float64_module_as_torchs_attention():
    # torch's attention (need_weights=False) takes a float32 mask whatever the query's
    # dtype; with the weights torch refuses the mix, here the mask is cast (docs/pytorch.md)
    f32 = np.float32
    run_both(dict(), dict(attn_mask=attention_mask("float").astype(f32), need_weights=False))
    # (not both at once: torch adds the two in float32, a rounding this does not repeat)
    run_both(dict(), dict(key_padding_mask=padding_mask("float").astype(f32),
                          need_weights=False))
    ours, _ = twins()
    q = mg.tensor(inputs({})[0])
    cast = ours(q, q, q, attn_mask=mg.tensor(np.zeros((L, L), f32)))[0]
    np.testing.assert_allclose(cast.detach().numpy(), ours(q, q, q)[0].detach().numpy(),
                               atol=1e-12)


def test_mismatched_masks_warn_as_torch():
    found = {}
    for lib, module in ((torch, torch.nn), (mg, nn)):
        attn = module.MultiheadAttention(E, HEADS)
        q = lib.randn(L, N, E)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            attn(q, q, q, attn_mask=lib.zeros(L, L),
                 key_padding_mask=lib.tensor(np.zeros((N, L), bool)))
        found[lib] = [str(w.message) for w in caught if "mismatched" in str(w.message)]
    assert found[mg] == found[torch] != []


def test_dropout_one_in_training_as_torch():
    # the attention's dropout zeroes every weight: torch's SDPA gives zeros, F.dropout too
    for need_weights in (False, True):
        ours, theirs = twins(dropout=1.0)
        q = RNG.standard_normal((L, N, E))
        out, weights = ours(*(mg.tensor(q),) * 3, need_weights=need_weights)
        expected, _ = theirs(*(torch.tensor(q),) * 3, need_weights=need_weights)
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(),
                                   atol=1e-12)
        assert weights is None or not weights.detach().numpy().any()


@pytest.mark.parametrize("options, batched", [({}, True), ({"batch_first": True}, True),
                                              ({}, False)])
def test_the_output_has_torchs_memory_layout(options, batched):
    # (L, N, E) in memory, a batch_first output its transposed view: a dropout after the
    # module draws its mask in memory order, so torch's layout gives torch's mask
    ours, theirs = twins(**options)
    arrays = inputs(options, batched)
    out = ours(*(mg.tensor(a) for a in arrays), need_weights=False)[0]
    expected = theirs(*(torch.tensor(a) for a in arrays), need_weights=False)[0]
    assert out.stride() == expected.stride()
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)

"""``F.multi_head_attention_forward`` against torch's, in float64: outputs, weights and the
gradients of every input, over its argument forms (packed and separate projections,
``bias_k``/``bias_v``, the zero position, ``static_k``/``static_v``, masks, unbatched
input, dropout at one seed); ``nn.MultiheadAttention`` calls it."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn

torch = pytest.importorskip("torch")

E, HEADS, N, L, S = 4, 2, 3, 5, 6
RNG = np.random.default_rng(0)


def _args(separate=False, bias_kv=False, batched=True):
    shape = (N,) if batched else ()
    arrays = {
        "query": RNG.standard_normal((L,) + shape + (E,)),
        "key": RNG.standard_normal((S,) + shape + (E,)),
        "value": RNG.standard_normal((S,) + shape + (E,)),
        "in_proj_weight": None if separate else RNG.standard_normal((3 * E, E)),
        "in_proj_bias": RNG.standard_normal(3 * E),
        "bias_k": RNG.standard_normal(E) if bias_kv else None,
        "bias_v": RNG.standard_normal(E) if bias_kv else None,
        "out_proj_weight": RNG.standard_normal((E, E)),
        "out_proj_bias": RNG.standard_normal(E),
    }
    if separate:
        arrays.update({f"{n}_proj_weight": RNG.standard_normal((E, E)) for n in "qkv"})
    return arrays


def _both(arrays, **options):
    """(ours, theirs, our leaves, their leaves) of one call."""
    mine, reference = {}, {}
    for name, a in arrays.items():
        if a is None:
            mine[name] = reference[name] = None
            continue
        mine[name] = mg.tensor(a, requires_grad=True)
        reference[name] = torch.tensor(a, requires_grad=True)
    masks = {k: v for k, v in options.items() if isinstance(v, np.ndarray)}
    flags = {k: v for k, v in options.items() if k not in masks}
    positional = ("query", "key", "value")
    rest = ("in_proj_weight", "in_proj_bias", "bias_k", "bias_v")
    tail = ("out_proj_weight", "out_proj_bias")
    keywords = {k: mine[k] for k in mine if k not in positional + rest + tail}
    their_keywords = {k: reference[k] for k in reference if k not in positional + rest + tail}
    flags.setdefault("dropout_p", 0.0)
    dropout = flags.pop("dropout_p")
    zero_attn = flags.pop("add_zero_attn", False)
    mg.manual_seed(42)
    ours = nn.functional.multi_head_attention_forward(
        *(mine[k] for k in positional), E, HEADS, *(mine[k] for k in rest), zero_attn,
        dropout, *(mine[k] for k in tail), **keywords,
        **{k: mg.tensor(v) for k, v in masks.items()}, **flags)
    torch.manual_seed(42)
    theirs = torch.nn.functional.multi_head_attention_forward(
        *(reference[k] for k in positional), E, HEADS, *(reference[k] for k in rest),
        zero_attn, dropout, *(reference[k] for k in tail), **their_keywords,
        **{k: torch.tensor(v) for k, v in masks.items()}, **flags)
    leaves = [(mine[k], reference[k]) for k in mine if mine[k] is not None]
    return ours, theirs, leaves


def _check(arrays, **options):
    (out, weights), (expected, expected_weights), leaves = _both(arrays, **options)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert (weights is None) == (expected_weights is None)
    if weights is not None:
        np.testing.assert_allclose(weights.detach().numpy(), expected_weights.detach().numpy(),
                                   rtol=1e-10, atol=1e-12)
    upstream = RNG.standard_normal(tuple(expected.shape))
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    for ours, theirs in leaves:
        got = np.zeros(ours.shape) if ours.grad is None else ours.grad.numpy()
        want = np.zeros(tuple(theirs.shape)) if theirs.grad is None else theirs.grad.numpy()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("separate", [False, True])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("options", [
    {},
    {"need_weights": False},
    {"average_attn_weights": False},
    {"attn_mask": RNG.standard_normal((L, S))},
    {"add_zero_attn": True},
    {"dropout_p": 0.5, "training": True},          # torch's draws at one seed
    {"dropout_p": 0.5, "training": False},
])
def test_matches_torch(separate, batched, options):
    _check(_args(separate, batched=batched), use_separate_proj_weight=separate, **options)


@pytest.mark.parametrize("options", [
    {"key_padding_mask": np.array([[False] * (S - 1) + [True]] * N)},
    {"key_padding_mask": RNG.standard_normal((N, S)), "attn_mask": RNG.standard_normal((L, S))},
    {"attn_mask": RNG.standard_normal((N * HEADS, L, S)), "add_zero_attn": True},
    {"attn_mask": np.triu(np.ones((L, S), bool), 1), "need_weights": False, "is_causal": True},
])
def test_masks_and_bias_kv(options):
    _check(_args(bias_kv=True), **options)


def test_static_k_and_v():
    arrays = _args()
    arrays["static_k"] = RNG.standard_normal((N * HEADS, S + 1, E // HEADS))
    arrays["static_v"] = RNG.standard_normal((N * HEADS, S + 1, E // HEADS))
    _check(arrays, add_zero_attn=True)


def test_refuses_what_torch_refuses():
    arrays = _args()
    for options in ({"embed_dim": E + 1}, {"separate": True}):
        mine = {k: None if v is None else mg.tensor(v) for k, v in arrays.items()}
        with pytest.raises(AssertionError):
            nn.functional.multi_head_attention_forward(
                mine["query"], mine["key"], mine["value"], options.get("embed_dim", E), HEADS,
                mine["in_proj_weight"], mine["in_proj_bias"], None, None, False, 0.0,
                mine["out_proj_weight"], mine["out_proj_bias"],
                use_separate_proj_weight=options.get("separate", False))


@pytest.mark.parametrize("weight_shape, target", [
    ((5, E), RNG.integers(0, 5, N)),                           # class indices
    ((5, E), RNG.random((N, 5))),                              # probabilities
    ((5, 2, E), RNG.integers(0, 5, (N, 2))),                   # K-dim: logits (N, 5, 2)
])
@pytest.mark.parametrize("options", [{}, {"reduction": "none"}, {"label_smoothing": 0.2},
                                     {"ignore_index": 1, "reduction": "sum"}])
def test_linear_cross_entropy_matches_torch(weight_shape, target, options):
    if target.dtype.kind == "f" and "ignore_index" in options:
        options = {}                          # torch refuses an ignore_index for probabilities
    x, w = RNG.standard_normal((N, E)), RNG.standard_normal(weight_shape)
    b = RNG.standard_normal(weight_shape[:-1])
    mine = [mg.tensor(a, requires_grad=True) for a in (x, w, b)]
    reference = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    ours = nn.functional.linear_cross_entropy(mine[0], mine[1], mg.tensor(target),
                                              linear_bias=mine[2], **options)
    theirs = torch.nn.functional.linear_cross_entropy(
        reference[0], reference[1], torch.tensor(target), linear_bias=reference[2], **options)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
    ours.sum().backward()
    theirs.sum().backward()
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_linear_cross_entropy_refuses_what_torch_refuses():
    x, w = mg.tensor(RNG.standard_normal(E)), mg.tensor(RNG.standard_normal((5, 2, E)))
    with pytest.raises(RuntimeError):               # a K-dim loss needs a batch
        nn.functional.linear_cross_entropy(x, w, mg.tensor(np.array(1)))
    with pytest.raises(RuntimeError):               # in_features differ
        nn.functional.linear_cross_entropy(x, mg.tensor(RNG.standard_normal((5, E + 1))),
                                           mg.tensor(np.array(1)))

"""nn Modules against PyTorch (float64, copied weights): outputs and every gradient.

Linear, Embedding, the norm modules (train/eval, running statistics), causal multi-head
attention, TransformerBlock for every placement and norm, and the GPT forward and backward.
The PyTorch references are written with torch ops from the same parameter dict, so the
comparison covers the math, not a shared implementation.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import autograd, nn
from microgradnorm.norms import lookup

torch = pytest.importorskip("torch")
TF = torch.nn.functional
TOL = 1e-10
# float64 math against float64 torch: the default dtype float64, as torch's suites set it
pytestmark = pytest.mark.usefixtures("float64_default")


def to_torch(array, requires_grad=False):
    return torch.tensor(np.asarray(array), dtype=torch.float64, requires_grad=requires_grad)


def torch_params(module):
    return {name: to_torch(p.data, True) for name, p in module.named_parameters()}


def assert_close(actual, expected, tol=TOL, what=""):
    expected = expected.detach().numpy() if isinstance(expected, torch.Tensor) else expected
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tol, err_msg=what)


def assert_grads_match(module, params):
    for name, p in module.named_parameters():
        assert p.grad is not None, name
        assert_close(p.grad, params[name].grad, what=name)


# ----- torch references, from a dict of named parameters -----------------------------------
def t_linear(params, prefix, x):
    y = x @ params[f"{prefix}.weight"].T
    bias = params.get(f"{prefix}.bias")
    return y if bias is None else y + bias


def t_norm(params, prefix, x, norm):
    """PyTorch's twin of the registry's norm ``norm`` on x, with the module's parameters and
    the options of the module a model builds for it (a model's RMSNorm: LLaMA's eps 1e-6)."""
    spec = lookup(norm)
    module = nn.make_norm(norm, x.shape[-1])
    options = {o.name: getattr(module, o.name) for o in spec.options
               if o.torch and getattr(module, o.name, None) is not None}
    tensors = {"x": x, **{name: params[f"{prefix}.{name}"] for name in spec.params}}
    return spec.run_torch(TF, tensors, **options)[0]


def t_attention(params, prefix, x, n_heads):
    B, T, C = x.shape
    q, k, v = t_linear(params, f"{prefix}.qkv", x).split(C, dim=-1)
    q, k, v = (t.reshape(B, T, n_heads, C // n_heads).transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(C // n_heads)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    att = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    return t_linear(params, f"{prefix}.proj", (att @ v).transpose(1, 2).reshape(B, T, C))


def t_mlp(params, prefix, x):
    h = TF.gelu(t_linear(params, f"{prefix}.fc1", x), approximate="tanh")
    return t_linear(params, f"{prefix}.fc2", h)


def t_block(params, prefix, x, n_heads, norm, placement, alpha=1.0):
    def ln(name, t):
        return t_norm(params, f"{prefix}.{name}", t, norm)

    def attn(t):
        return t_attention(params, f"{prefix}.attn", t, n_heads)

    def mlp(t):
        return t_mlp(params, f"{prefix}.mlp", t)

    if placement == "pre":
        x = x + attn(ln("ln1", x))
        return x + mlp(ln("ln2", x))
    if placement == "sandwich":
        x = x + ln("ln1_out", attn(ln("ln1", x)))
        return x + ln("ln2_out", mlp(ln("ln2", x)))
    x = ln("ln1", alpha * x + attn(x))                    # post (alpha = 1) and deepnorm
    return ln("ln2", alpha * x + mlp(x))


def t_gpt(params, idx, model):
    T = idx.shape[1]
    x = params["tok_emb.weight"][torch.as_tensor(idx)] + params["pos_emb.weight"][:T]
    for i, block in enumerate(model.blocks):
        x = t_block(params, f"blocks.{i}", x, block.attn.n_heads, block.norm, block.placement,
                    block.alpha)
    if model.ln_f is not None:
        x = t_norm(params, "ln_f", x, model.norm)
    return x @ params["lm_head.weight"].T


def with_random_affine(module, seed=0):
    """Norm weights far from 1 and biases far from 0, so a mix-up would show."""
    rng = np.random.default_rng(seed)
    for name, p in module.named_parameters():
        if ".ln" in f".{name}" or name.startswith("ln"):
            p.data[...] = (1 if name.endswith("weight") else 0) + 0.3 * rng.standard_normal(
                p.shape)
    return module


# ----- basic layers -------------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4)])
def test_linear_matches_torch(bias, shape):
    np.random.seed(0)
    layer = nn.Linear(4, 3, bias=bias)
    ref = torch.nn.Linear(4, 3, bias=bias, dtype=torch.float64)
    with torch.no_grad():
        ref.weight.copy_(to_torch(layer.weight.data))
        if bias:
            ref.bias.copy_(to_torch(layer.bias.data))
    x_data = np.random.default_rng(1).standard_normal(shape)
    x, xt = mg.tensor(x_data, requires_grad=True), to_torch(x_data, True)
    y, yt = layer(x), ref(xt)
    assert_close(y.data, yt)
    upstream = np.random.default_rng(2).standard_normal(y.shape)
    y.backward(upstream)
    yt.backward(to_torch(upstream))
    assert_close(x.grad, xt.grad)
    assert_close(layer.weight.grad, ref.weight.grad)
    if bias:
        assert_close(layer.bias.grad, ref.bias.grad)
    else:
        assert layer.bias is None


def test_linear_default_init_is_pytorchs_uniform_bound():
    np.random.seed(0)
    layer = nn.Linear(16, 200)
    bound = 1 / math.sqrt(16)
    assert np.abs(layer.weight.data).max() <= bound
    assert np.abs(layer.weight.data).max() > 0.9 * bound          # fills the range
    assert np.abs(layer.bias.data).max() <= bound


def test_embedding_matches_torch_with_repeated_ids():
    np.random.seed(0)
    emb = nn.Embedding(7, 3)
    weight = to_torch(emb.weight.data, True)
    idx = np.array([[1, 2, 1], [6, 1, 0]])
    y = emb(idx)
    yt = TF.embedding(torch.as_tensor(idx), weight)
    assert_close(y.data, yt)
    upstream = np.random.default_rng(0).standard_normal(y.shape)
    y.backward(upstream)
    yt.backward(to_torch(upstream))
    assert_close(emb.weight.grad, weight.grad)                    # row 1 accumulates 3 times


def test_embedding_rejects_out_of_range_and_float_ids():
    emb = nn.Embedding(4, 2)
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        emb(np.array([0, 4]))
    with pytest.raises(TypeError, match="integer"):
        emb(np.array([0.0, 1.0]))
    # torch's classes: IndexError out of range, RuntimeError for float ids
    with pytest.raises(IndexError):
        torch.nn.Embedding(4, 2)(torch.tensor([0, 4]))
    with pytest.raises(IndexError):
        emb(mg.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="Long, Int"):
        torch.nn.Embedding(4, 2)(torch.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="integer ids"):
        emb(mg.tensor([0.0, 1.0]))


@pytest.mark.parametrize("impl", ["fused", "composite"])
@pytest.mark.parametrize("cls", ["LayerNorm", "RMSNorm"])
def test_row_norm_modules_match_torch(cls, impl):
    rng = np.random.default_rng(0)
    module = getattr(nn, cls)(6, impl=impl)
    with_random_affine(module)
    ref = (torch.nn.LayerNorm(6, dtype=torch.float64) if cls == "LayerNorm"
           else torch.nn.RMSNorm(6, dtype=torch.float64))     # eps: both default, None
    ref.load_state_dict({k: to_torch(v) for k, v in module.state_dict().items()})
    x_data = rng.standard_normal((2, 3, 6))
    x, xt = mg.tensor(x_data, requires_grad=True), to_torch(x_data, True)
    y, yt = module(x), ref(xt)
    assert_close(y.data, yt)
    upstream = rng.standard_normal(y.shape)
    y.backward(upstream)
    yt.backward(to_torch(upstream))
    assert_close(x.grad, xt.grad)
    for name, p in module.named_parameters():
        assert_close(p.grad, dict(ref.named_parameters())[name].grad)


@pytest.mark.parametrize("impl", ["fused", "composite"])
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5)])
def test_batchnorm1d_train_eval_and_running_stats_match_torch(impl, momentum, shape):
    rng = np.random.default_rng(0)
    bn = nn.BatchNorm1d(3, momentum=momentum, impl=impl)
    ref = torch.nn.BatchNorm1d(3, momentum=momentum, dtype=torch.float64)
    bn.weight.data[...] = 1 + 0.3 * rng.standard_normal(3)
    bn.bias.data[...] = 0.3 * rng.standard_normal(3)
    ref.load_state_dict({k: torch.as_tensor(v.numpy()) for k, v in bn.state_dict().items()})
    for step in range(3):                                        # three training batches
        x_data = 2 + 3 * rng.standard_normal(shape)
        x, xt = mg.tensor(x_data, requires_grad=True), to_torch(x_data, True)
        y, yt = bn(x), ref(xt)
        assert_close(y.data, yt, what=f"train output, step {step}")
        upstream = rng.standard_normal(shape)
        y.backward(upstream)
        yt.backward(to_torch(upstream))
        assert_close(x.grad, xt.grad, what="grad x")
    assert_close(bn.weight.grad, ref.weight.grad)
    assert_close(bn.bias.grad, ref.bias.grad)
    for name in ("running_mean", "running_var"):
        assert_close(getattr(bn, name).data, getattr(ref, name), what=name)
    assert int(bn.num_batches_tracked.item()) == int(ref.num_batches_tracked) == 3
    bn.eval()
    ref.eval()
    x_data = rng.standard_normal((1,) + shape[1:])                  # batch 1 is fine in eval
    assert_close(bn(mg.tensor(x_data)).data, ref(to_torch(x_data)), what="eval output")


def test_batchnorm1d_without_running_stats_uses_batch_stats_in_eval():
    rng = np.random.default_rng(0)
    bn = nn.BatchNorm1d(3, track_running_stats=False).eval()
    ref = torch.nn.BatchNorm1d(3, track_running_stats=False, dtype=torch.float64).eval()
    x_data = rng.standard_normal((6, 3))
    assert_close(bn(mg.tensor(x_data)).data, ref(to_torch(x_data)))
    assert bn.state_dict().keys() == {"weight", "bias"}


def test_batchnorm1d_failed_call_changes_nothing():
    bn = nn.BatchNorm1d(3)
    before = {key: value.numpy().copy() for key, value in bn.state_dict().items()}
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        bn(mg.tensor(np.ones((1, 3))))                           # batch 1 in training
    with pytest.raises(ValueError, match="shape"):
        bn(mg.tensor(np.ones((4, 5))))                           # wrong channel count
    for key, value in bn.state_dict().items():
        np.testing.assert_array_equal(value, before[key])


# ----- attention and blocks -----------------------------------------------------------------
@pytest.mark.parametrize("n_heads", [1, 2, 4])
def test_causal_attention_matches_torch(n_heads):
    np.random.seed(0)
    attn = nn.CausalSelfAttention(8, n_heads)
    params = torch_params(attn)
    x_data = np.random.default_rng(1).standard_normal((2, 5, 8))
    x, xt = mg.tensor(x_data, requires_grad=True), to_torch(x_data, True)
    y = attn(x)
    yt = t_attention({"." + k: v for k, v in params.items()}, "", xt, n_heads)
    assert_close(y.data, yt)
    upstream = np.random.default_rng(2).standard_normal(y.shape)
    y.backward(upstream)
    yt.backward(to_torch(upstream))
    assert_close(x.grad, xt.grad)
    assert_grads_match(attn, params)


def test_causal_attention_matches_torch_scaled_dot_product():
    np.random.seed(0)
    attn = nn.CausalSelfAttention(8, 2)
    x_data = np.random.default_rng(1).standard_normal((3, 4, 8))
    qkv = to_torch(x_data) @ to_torch(attn.qkv.weight.data).T + to_torch(attn.qkv.bias.data)
    q, k, v = (t.reshape(3, 4, 2, 4).transpose(1, 2) for t in qkv.split(8, dim=-1))
    heads = TF.scaled_dot_product_attention(q, k, v, is_causal=True)
    expected = heads.transpose(1, 2).reshape(3, 4, 8) @ to_torch(attn.proj.weight.data).T \
        + to_torch(attn.proj.bias.data)
    assert_close(attn(mg.tensor(x_data)).data, expected)


def test_causal_attention_is_causal():
    np.random.seed(0)
    attn = nn.CausalSelfAttention(8, 2)
    x_data = np.random.default_rng(1).standard_normal((1, 6, 8))
    changed = x_data.copy()
    changed[0, 4:] += 10.0                                       # change the future only
    y, y_changed = attn(mg.tensor(x_data)).data, attn(mg.tensor(changed)).data
    np.testing.assert_allclose(y[0, :4], y_changed[0, :4], rtol=0, atol=1e-12)
    assert not np.allclose(y[0, 4:], y_changed[0, 4:])


def test_attention_softmax_is_stable_for_huge_scores():
    attn = nn.CausalSelfAttention(4, 1)
    attn.qkv.weight.data[...] *= 1e4                             # scores ~ 1e8
    y = attn(mg.tensor(np.random.default_rng(0).standard_normal((1, 3, 4))))
    assert np.isfinite(y.data).all()


@pytest.mark.parametrize("impl", ["fused", "composite"])
@pytest.mark.parametrize("norm", nn.NORMS)
@pytest.mark.parametrize("placement", nn.PLACEMENTS)
def test_transformer_block_matches_torch(placement, norm, impl):
    np.random.seed(0)
    block = with_random_affine(nn.TransformerBlock(8, 2, norm=norm, placement=placement,
                                                   impl=impl, n_layers=3))
    params = torch_params(block)
    dotted = {"." + k: v for k, v in params.items()}
    x_data = np.random.default_rng(1).standard_normal((2, 4, 8))
    x, xt = mg.tensor(x_data, requires_grad=True), to_torch(x_data, True)
    y = block(x)
    yt = t_block(dotted, "", xt, 2, norm, placement, block.alpha)
    assert_close(y.data, yt)
    upstream = np.random.default_rng(2).standard_normal(y.shape)
    y.backward(upstream)
    yt.backward(to_torch(upstream))
    assert_close(x.grad, xt.grad)
    assert_grads_match(block, params)


def test_deepnorm_constants_and_init_scaling_follow_deepnet():
    alpha, beta = nn.deepnorm_constants(6)
    assert alpha == pytest.approx(12 ** 0.25) and beta == pytest.approx(48 ** -0.25)
    mg.manual_seed(0)
    plain = nn.TransformerBlock(8, 2, placement="post")
    mg.manual_seed(0)
    deep = nn.TransformerBlock(8, 2, placement="deepnorm", n_layers=6)
    assert deep.alpha == pytest.approx(alpha) and plain.alpha == 1.0
    w_plain, w_deep = plain.attn.qkv.weight.data, deep.attn.qkv.weight.data
    np.testing.assert_allclose(w_deep[:16], w_plain[:16])                 # Q, K unscaled
    np.testing.assert_allclose(w_deep[16:], beta * w_plain[16:])          # V scaled by beta
    for name in ("attn.proj", "mlp.fc1", "mlp.fc2"):
        a = dict(deep.named_parameters())[f"{name}.weight"].data
        b = dict(plain.named_parameters())[f"{name}.weight"].data
        np.testing.assert_allclose(a, beta * b, err_msg=name)


@pytest.mark.parametrize("placement", nn.PLACEMENTS)
def test_gpt_forward_and_backward_match_torch(placement):
    np.random.seed(0)
    model = with_random_affine(nn.GPT(vocab_size=11, context_length=6, d_model=8, n_heads=2,
                                      n_layers=2, norm="rmsnorm" if placement == "post"
                                      else "layernorm", placement=placement))
    params = torch_params(model)
    idx = np.random.default_rng(1).integers(0, 11, size=(3, 5))
    target = np.random.default_rng(2).integers(0, 11, size=(3, 5))
    logits = model(idx)
    logits_t = t_gpt(params, idx, model)
    assert logits.shape == (3, 5, 11)
    assert_close(logits.data, logits_t)
    loss = F.cross_entropy(logits.reshape(-1, 11), target.reshape(-1))
    loss_t = TF.cross_entropy(logits_t.reshape(-1, 11), torch.as_tensor(target).reshape(-1))
    assert_close(loss.data, loss_t)
    loss.backward()
    loss_t.backward()
    assert_grads_match(model, params)


def test_gpt_rejects_too_long_context():
    model = nn.GPT(5, context_length=4, d_model=4, n_heads=1, n_layers=1)
    with pytest.raises(ValueError, match="context_length"):
        model(np.zeros((1, 5), dtype=np.int64))


def test_gpt_init_is_gpt2s():
    np.random.seed(0)
    model = nn.GPT(50, 8, d_model=64, n_heads=4, n_layers=2)
    std = np.std(model.blocks[0].mlp.fc1.weight.detach().numpy())
    assert 0.018 < std < 0.022
    assert not model.blocks[0].mlp.fc1.bias.detach().numpy().any()


@pytest.mark.parametrize("bad, match", [
    ({"placement": "middle"}, "placement"), ({"norm": "batchnorm"}, "norm"),
    ({"impl": "fast"}, "impl"), ({"n_heads": 3}, "divisible")])
def test_transformer_block_bad_arguments(bad, match):
    with pytest.raises(ValueError, match=match):
        nn.TransformerBlock(**{"d_model": 8, "n_heads": 2, **bad})


# ----- module machinery ---------------------------------------------------------------------
def test_module_scopes_and_parameter_names_follow_the_outermost_module():
    model = nn.GPT(7, 4, d_model=8, n_heads=2, n_layers=2)
    for _, p in model.named_parameters():
        assert p.name is None                                    # named at the first call
    loss = F.cross_entropy(model(np.zeros((1, 4), dtype=np.int64))[0], np.zeros(4, int))
    for name, p in model.named_parameters():
        assert p.name == name
    scopes = {node.module for node in autograd.topological_order([loss.grad_fn])}
    module_names = {name for name, _ in model.named_modules()}
    assert {"blocks.0.ln1", "blocks.1.attn.qkv", "blocks.1.mlp.act", "lm_head"} <= scopes
    assert scopes <= module_names                                # "" is the GPT itself
    # A block called on its own is the outermost module: names are relative to it.
    block = model.blocks[1]
    block(mg.tensor(np.zeros((1, 2, 8))))
    assert block.ln1.weight.name == "ln1.weight"
    model(np.zeros((1, 2), dtype=np.int64))                      # the GPT names them back
    assert block.ln1.weight.name == "blocks.1.ln1.weight"


def test_module_scope_of_a_norm_node():
    model = nn.MLP([2, 4, 2], norm="layernorm")
    y = model(mg.tensor(np.ones((3, 2))))
    nodes = autograd.topological_order([y.grad_fn])
    norm_nodes = [n for n in nodes if n.name == "LayerNorm"]
    assert [n.module for n in norm_nodes] == ["layers.1"]


def test_set_impl_reaches_every_norm():
    model = nn.GPT(7, 4, d_model=8, n_heads=2, n_layers=2, placement="sandwich",
                   impl="composite")
    norms = [m for m in model.modules() if isinstance(m, (nn.LayerNorm, nn.RMSNorm))]
    assert len(norms) == 2 * 4 + 1 and all(m.impl == "composite" for m in norms)
    idx = np.zeros((1, 4), dtype=np.int64)
    composite = model(idx)
    assert model.set_impl("fused") is model
    assert all(m.impl == "fused" for m in norms)
    fused = model(idx)
    assert mg.graph_stats(fused).nodes < mg.graph_stats(composite).nodes
    np.testing.assert_allclose(fused.data, composite.data, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="impl"):
        model.set_impl("triton")


def test_to_moves_in_place_keeps_parameters_and_checks_device():
    model = nn.MLP([3, 4, 2], norm="batchnorm")
    params = model.parameters()
    assert model.to("cpu") is model
    assert all(a is b for a, b in zip(params, model.parameters()))
    with pytest.raises(ValueError, match="device"):
        model.to("tpu")
    model.to(dtype="float32")
    assert {p.dtype for p in model.parameters()} == {np.dtype(np.float32)}
    assert model.layers[1].running_var.dtype == np.float32
    assert model.layers[1].num_batches_tracked.dtype == np.int64
    assert model(mg.tensor(np.ones((4, 3)), dtype="float32")).dtype == np.float32


def test_train_eval_zero_grad_and_repr():
    model = nn.MLP([2, 3, 1], norm="batchnorm", activation="tanh")
    assert all(m.training for m in model.modules())
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    model(mg.tensor(np.random.randn(4, 2))).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    text = repr(model)
    assert "Linear(in_features=2, out_features=3, bias=True)" in text
    assert "BatchNorm1d(3, eps=1e-05" in text and "Tanh()" in text


def test_shared_parameter_is_listed_once():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    model[1].weight = model[0].weight
    names = [name for name, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "1.bias"]


def test_dropout_train_and_eval():
    np.random.seed(0)
    drop = nn.Dropout(0.5)
    x = mg.tensor(np.ones((1000,)))
    y = drop(x).data
    assert set(np.unique(y)) == {0.0, 2.0}
    assert 0.4 < (y == 0).float().mean() < 0.6
    assert drop.eval()(x) is x
    with pytest.raises(ValueError, match="p must be"):
        nn.Dropout(1.5)


@pytest.mark.parametrize("norm", [None, "batchnorm", "layernorm", "rmsnorm"])
def test_mlp_gradcheck(norm):
    np.random.seed(0)
    model = nn.MLP([3, 5, 2], norm=norm, activation="silu")
    x = mg.tensor(np.random.default_rng(0).standard_normal((6, 3)), requires_grad=True)
    assert mg.gradcheck(lambda t: model(t), x)


def test_gpt_dropout_is_random_in_training_and_off_in_eval():
    np.random.seed(0)
    model = nn.GPT(7, 4, d_model=8, n_heads=2, n_layers=1, dropout=0.5)
    idx = np.zeros((2, 4), dtype=np.int64)
    assert not np.allclose(model(idx).data, model(idx).data)
    model.eval()
    np.testing.assert_array_equal(model(idx).data, model(idx).data)


def test_nn_and_optim_are_reachable_from_the_package():
    assert mg.nn is nn and mg.optim.AdamW is not None


# ----- finite differences and drawn shapes --------------------------------------------------
@pytest.mark.parametrize("placement", nn.PLACEMENTS)
def test_transformer_block_gradcheck(placement):
    np.random.seed(0)
    block = with_random_affine(nn.TransformerBlock(4, 2, placement=placement, n_layers=2))
    x = mg.tensor(np.random.default_rng(1).standard_normal((2, 3, 4)), requires_grad=True)
    assert mg.gradcheck(block, x)


@settings(max_examples=12)
@given(batch=st.integers(1, 2), seq=st.integers(1, 4), heads=st.sampled_from([1, 2]),
       head_dim=st.integers(1, 3), placement=st.sampled_from(nn.PLACEMENTS),
       norm=st.sampled_from(nn.NORMS), seed=st.integers(0, 2**16))
def test_block_fused_equals_composite_on_drawn_shapes(batch, seq, heads, head_dim, placement,
                                                      norm, seed):
    np.random.seed(seed)
    d_model = heads * head_dim
    block = nn.TransformerBlock(d_model, heads, norm=norm, placement=placement, n_layers=3)
    x_data = np.random.default_rng(seed).standard_normal((batch, seq, d_model))
    results = []
    for impl in ("fused", "composite"):
        block.set_impl(impl)
        block.zero_grad()
        x = mg.tensor(x_data, requires_grad=True)
        y = block(x)
        y.backward(np.cos(np.arange(y.size)).reshape(y.shape))
        results.append([y.data, x.grad] + [p.grad for p in block.parameters()])
    for fused, composite in zip(*results):
        np.testing.assert_allclose(fused, composite, rtol=0, atol=1e-10)


def test_names_follow_changes_to_the_module_tree():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    x = mg.tensor(np.ones((1, 2)))
    model(x)
    old_weight = model[0].weight
    model[0].weight = nn.Parameter(np.zeros((2, 2)))          # a new parameter: renamed
    model(x)
    assert model[0].weight.name == "0.weight"
    model[0].bias = None                                        # a removed parameter
    assert [name for name, _ in model.named_parameters()] == ["0.weight"]
    assert old_weight.name == "0.weight"                        # names only what it owns
    model(x)


def test_forward_hooks_and_pre_hooks_run_and_remove_as_in_torch():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    x = mg.tensor(np.ones((4, 2)))
    plain = model(x).data
    calls = []
    pre = model.register_forward_pre_hook(lambda module, args: calls.append(args[0].shape))
    doubled = model[2].register_forward_hook(lambda module, args, out: out + 1.0)
    hooked = model(x)
    assert calls == [(4, 2)]
    assert not np.allclose(hooked.data, plain)
    doubled.remove()
    doubled.remove()                                   # a second remove does nothing
    np.testing.assert_array_equal(model(x).data, plain)
    with model.register_forward_pre_hook(lambda module, args: (args[0] * 0.0,)):
        np.testing.assert_array_equal(model(x).data, model(mg.tensor(np.zeros((4, 2)))).data)
    pre.remove()
    assert len(calls) == 4                              # the block above called twice
    with pytest.raises(TypeError, match="hook must be callable"):
        model.register_forward_hook("not a function")


def test_module_registration_and_lookup_helpers_match_torch_names():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    model.add_module("head", nn.Linear(3, 1))
    model.register_parameter("scale", nn.Parameter(np.ones(1)))
    assert [name for name, _ in model.named_children()] == ["0", "1", "head"]
    assert [name for name, _ in model.named_parameters()] == [
        "scale", "0.weight", "0.bias", "head.weight", "head.bias"]
    assert model.get_submodule("head") is model.head
    assert model.get_parameter("0.bias") is model[0].bias
    with pytest.raises(AttributeError, match="Sequential has no attribute `tail`"):
        model.get_submodule("tail.weight")
    with pytest.raises(TypeError):
        model.register_parameter("w", np.ones(2))
    with pytest.raises(KeyError):
        model.add_module("a.b", nn.ReLU())
    # as torch: never overwrite an attribute of another kind, and change nothing
    with pytest.raises(KeyError, match="'head' already exists"):
        model.register_parameter("head", nn.Parameter(np.ones(1)))
    with pytest.raises(KeyError, match="'scale' already exists"):
        model.add_module("scale", nn.ReLU())
    with pytest.raises(KeyError, match="'forward' already exists"):
        model.add_module("forward", nn.ReLU())
    assert isinstance(model.head, nn.Linear) and isinstance(model.scale, nn.Parameter)
    replacement = nn.Parameter(np.zeros(1))
    model.register_parameter("scale", replacement)       # the same kind: replaced
    assert model.scale is replacement
    order = []
    assert model.apply(lambda m: order.append(type(m).__name__)) is model
    assert order == ["Linear", "ReLU", "Linear", "Sequential"]
    assert model.float().head.weight.dtype == np.float32
    assert model.double().head.weight.dtype == np.float64
    assert model.half().scale.dtype == np.float16


def test_set_impl_switches_the_norm_modules_and_leaves_a_users_impl_alone():
    class Attention(nn.Module):                 # a user's module with an impl of its own
        def __init__(self):
            super().__init__()
            self.impl, self.norm = "flash", nn.LayerNorm(4)

    model = nn.Sequential(Attention(), nn.RMSNorm(4)).set_impl("composite")
    assert [model[0].impl, model[0].norm.impl, model[1].impl] == ["flash", "composite",
                                                                  "composite"]

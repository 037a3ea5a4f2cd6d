"""The meta device (``device="meta"``) beside torch's, each case run under both libraries:
factories, ops, backward, in-place writes, the generator, refusals, printing, and a model
built on meta then materialized with ``to_empty`` and initialised from a seed."""

import copy
import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.meta_arrays import memory_root

torch = pytest.importorskip("torch")


def described(t):
    """(shape, dtype name, device type, is_meta) of a tensor of either library."""
    return tuple(t.shape), str(t.dtype).replace("torch.", ""), t.device.type, t.is_meta


def raised(fn):
    try:
        fn()
    except Exception as error:            # noqa: BLE001 - the class is what is compared
        return type(error)
    return None


def same_class(ours, theirs):
    assert theirs is not None and ours is not None and issubclass(ours, theirs), \
        (ours, theirs)


FACTORIES = [
    ("empty", lambda L: L.empty(2, 3, device="meta")),
    ("zeros", lambda L: L.zeros(2, 3, device="meta", dtype=L.float64)),
    ("ones", lambda L: L.ones(4, device="meta", dtype=L.int64)),
    ("full", lambda L: L.full((2, 2), 7.0, device="meta")),
    ("randn", lambda L: L.randn(3, 4, device="meta")),
    ("rand", lambda L: L.rand(5, device="meta", dtype=L.float16)),
    ("randint", lambda L: L.randint(0, 9, (3,), device="meta")),
    ("arange", lambda L: L.arange(6, device="meta")),
    ("tensor", lambda L: L.tensor([1.0, 2.0], device="meta")),
    ("zeros_like", lambda L: L.zeros_like(L.ones(2, 5), device="meta")),
    ("empty_like", lambda L: L.empty_like(L.empty(3, device="meta"))),
    ("randn_like", lambda L: L.randn_like(L.empty(3, 2, device="meta"))),
    ("new_zeros", lambda L: L.empty(2, device="meta").new_zeros(4, 1)),
    ("new_full", lambda L: L.empty(2, device="meta").new_full((3,), 2.0)),
    ("to", lambda L: L.ones(2, 3).to("meta")),
    ("to_device", lambda L: L.ones(2, 3).to(L.device("meta"))),
    ("parameter", lambda L: L.nn.Parameter(L.empty(3, device="meta"))),
    ("linear", lambda L: L.nn.Linear(3, 4, device="meta").weight),
    ("block", lambda L: _in_block(L)),
    ("deepcopy", lambda L: copy.deepcopy(L.nn.Linear(2, 3, device="meta")).weight),
    ("0-d", lambda L: L.zeros((), device="meta")),
    ("empty 0", lambda L: L.zeros(0, 3, device="meta")),
]


def _in_block(L):
    with L.device("meta"):
        return L.nn.Linear(3, 4).bias


@pytest.mark.parametrize("name, make", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factories_make_meta_tensors(name, make):
    ours, theirs = make(mg), make(torch)
    assert described(ours) == described(theirs)
    assert str(ours.device) == str(theirs.device) == "meta"


def test_a_meta_tensor_holds_one_element():
    x = mg.empty(1000, 1000, device="meta")
    assert memory_root(x._array).nbytes == x.element_size()
    model = mg.nn.GPT(50, 8, d_model=32, n_layers=2, device="meta")
    held = sum(memory_root(p._array).nbytes for p in model.parameters())
    assert held <= 4 * len(model.parameters())


def _rope(L, x):
    half = x.shape[-1] // 2
    angles = L.arange(x.shape[-2], device=x.device, dtype=x.dtype)[:, None] * \
        L.ones(half, device=x.device, dtype=x.dtype)
    cos, sin = angles.cos(), angles.sin()
    a, b = x[..., :half], x[..., half:]
    return L.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


OPS = [
    ("add", lambda L, x: x + 1.5),
    ("broadcast", lambda L, x: x[:, :1] * x),
    ("0-d cpu", lambda L, x: x * L.tensor(2.0)),
    ("matmul", lambda L, x: x @ x.transpose(-1, -2)),
    ("sum", lambda L, x: x.sum(-1, keepdim=True)),
    ("mean", lambda L, x: x.mean()),
    ("var", lambda L, x: x.var(0)),
    ("max", lambda L, x: x.max(dim=1)[1]),
    ("argmax", lambda L, x: x.argmax(-1)),
    ("view", lambda L, x: x.view(6, 4).t()),
    ("reshape", lambda L, x: x.transpose(0, 1).reshape(-1)),
    ("slices", lambda L, x: x[1:, ::2, None]),
    ("int index", lambda L, x: x[L.tensor([0, 1, 1])]),
    ("cat", lambda L, x: L.cat([x, x], 1)),
    ("stack", lambda L, x: L.stack([x, x], -1)),
    ("softmax", lambda L, x: L.nn.functional.softmax(x, -1)),
    ("log_softmax", lambda L, x: L.nn.functional.log_softmax(x.double(), 0)),
    ("layer_norm", lambda L, x: L.nn.functional.layer_norm(x, (4,))),
    ("rms_norm", lambda L, x: L.nn.functional.rms_norm(x, (4,))),
    ("gelu", lambda L, x: L.nn.functional.gelu(x, approximate="tanh")),
    ("attention", lambda L, x: L.nn.functional.scaled_dot_product_attention(
        x, x, x, is_causal=True)),
    ("cross_entropy", lambda L, x: L.nn.functional.cross_entropy(
        x.reshape(-1, 4), L.zeros(6, dtype=L.int64, device="meta"))),
    ("half", lambda L, x: x.half() * 2),
    ("compare", lambda L, x: x > 0),
    ("where", lambda L, x: L.where(x > 0, x, 0.0)),
    ("masked_fill", lambda L, x: x.masked_fill(
        L.ones(3, 4, dtype=L.bool, device="meta").triu(1), float("-inf"))),
    ("cumsum", lambda L, x: x.cumsum(1)),
    ("sort", lambda L, x: x.sort(-1)[1]),
    ("rope", lambda L, x: _rope(L, x)),
    ("embedding", lambda L, x: L.nn.functional.embedding(
        L.zeros(2, 3, dtype=L.int64, device="meta"), x[0])),
]


@pytest.mark.parametrize("name, op", OPS, ids=[o[0] for o in OPS])
def test_ops_give_meta_results_of_torchs_shape_and_dtype(name, op):
    ours = op(mg, mg.empty(2, 3, 4, device="meta"))
    theirs = op(torch, torch.empty(2, 3, 4, device="meta"))
    assert described(ours) == described(theirs)


BACKWARD = ["add", "matmul", "softmax", "layer_norm", "rms_norm", "gelu", "attention",
            "cross_entropy", "rope", "slices", "cat"]


@pytest.mark.parametrize("name", BACKWARD)
def test_backward_gives_meta_gradients(name):
    op = dict(OPS)[name]
    grads = []
    for L in (mg, torch):
        x = L.randn(2, 3, 4, device="meta", requires_grad=True)
        op(L, x).sum().backward()
        grads.append(described(x.grad))
    assert grads[0] == grads[1]


def _rng_after(L, meta_draw):
    L.manual_seed(5)
    meta_draw(L)
    return L.rand(4).numpy() if L is torch else L.rand(4).numpy()


DRAWS = [
    ("randn", lambda L: L.randn(100, device="meta")),
    ("normal_", lambda L: L.empty(10, 10, device="meta").normal_()),
    ("uniform_", lambda L: L.empty(10, device="meta").uniform_(-1, 1)),
    ("randn_like", lambda L: L.randn_like(L.empty(7, device="meta"))),
    ("kaiming", lambda L: L.nn.init.kaiming_uniform_(L.empty(4, 3, device="meta"))),
    ("trunc_normal", lambda L: L.nn.init.trunc_normal_(L.empty(4, 3, device="meta"))),
    ("xavier", lambda L: L.nn.init.xavier_normal_(L.empty(4, 3, device="meta"))),
    ("linear", lambda L: L.nn.Linear(8, 8, device="meta")),
    ("dropout", lambda L: L.nn.functional.dropout(L.empty(9, device="meta"), 0.5)),
]


@pytest.mark.parametrize("name, draw", DRAWS, ids=[d[0] for d in DRAWS])
def test_meta_random_ops_leave_the_generator_as_torch(name, draw):
    np.testing.assert_array_equal(_rng_after(mg, draw), _rng_after(torch, draw))


INPLACE = [
    ("zero_", lambda L, x: x.zero_()),
    ("fill_", lambda L, x: x.fill_(2.0)),
    ("add_", lambda L, x: x.add_(1)),
    ("copy_ cpu", lambda L, x: x.copy_(L.ones(3, 4))),
    ("mul_ cpu", lambda L, x: x.mul_(L.ones(3, 4))),
    ("normal_", lambda L, x: L.nn.init.normal_(x, 0.0, 0.02)),
    ("zeros_", lambda L, x: L.nn.init.zeros_(x)),
    ("ones_", lambda L, x: L.nn.init.ones_(x)),
]


@pytest.mark.parametrize("name, write", INPLACE, ids=[w[0] for w in INPLACE])
def test_inplace_writes_keep_the_tensor_meta(name, write):
    for L in (mg, torch):
        x = L.empty(3, 4, device="meta")
        out = write(L, x)
        assert x.is_meta and (out is None or out.is_meta)
        assert described(x) == ((3, 4), "float32", "meta", True)


REFUSED = [
    ("item", lambda L, x: x[0, 0].item()),
    ("item many", lambda L, x: x.item()),
    ("bool", lambda L, x: bool(x[0, 0])),
    ("float", lambda L, x: float(x.sum())),
    ("tolist", lambda L, x: x.tolist()),
    ("numpy", lambda L, x: x.numpy()),
    ("nonzero", lambda L, x: x.nonzero()),
    ("unique", lambda L, x: x.unique()),
    ("masked_select", lambda L, x: x.masked_select(x > 0)),
    ("bool index", lambda L, x: x[x > 0]),
    ("to cpu", lambda L, x: x.to("cpu")),
    ("cpu", lambda L, x: x.cpu()),
    ("copy out", lambda L, x: L.zeros(2, 3).copy_(x)),
    ("meta + cpu", lambda L, x: x + L.ones(2, 3)),
    ("cpu + meta", lambda L, x: L.ones(2, 3) + x),
    ("cat", lambda L, x: L.cat([x, L.ones(2, 3)])),
    ("where", lambda L, x: L.where(x > 0, x, L.ones(2, 3))),
]


@pytest.mark.parametrize("name, fn", REFUSED, ids=[r[0] for r in REFUSED])
def test_value_reads_and_mixed_devices_raise_torchs_class(name, fn):
    theirs = raised(lambda: fn(torch, torch.ones(2, 3, device="meta")))
    ours = raised(lambda: fn(mg, mg.ones(2, 3, device="meta")))
    same_class(ours, theirs)


def test_item_says_meta():
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        mg.ones(1, device="meta").item()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        mg.ones(1, device="meta").to("cpu")


@pytest.mark.parametrize("make", [
    lambda L: L.ones(2, 3, device="meta"),
    lambda L: L.ones(2, dtype=L.int32, device="meta"),
    lambda L: L.ones((), device="meta"),
    lambda L: L.ones(0, 2, dtype=L.float64, device="meta"),
    lambda L: L.ones(2, 3, device="meta", requires_grad=True) * 2,
])
def test_repr_is_torchs(make):
    assert repr(make(mg)) == repr(make(torch))


def gpt_style(L, vocab=17, context=8, width=16, heads=2, tied=True):
    """A small GPT-style model, written once against either library's API."""
    nn, F = L.nn, L.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
            return x + self.down(F.gelu(self.up(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(context, width)
            self.blocks = nn.ModuleList([Block(), Block()])
            self.ln_f, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)
            if tied:
                self.head.weight = self.tok.weight

        def forward(self, idx):
            x = self.tok(idx) + self.pos(L.arange(idx.shape[1], device=idx.device))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

        def _init_weights(self, module):
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, 0.0, 0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
            if isinstance(module, nn.LayerNorm):
                module.reset_parameters()

    return GPT()


def llama_block(L, width=16, heads=2):
    """A LLaMA-style block (RMSNorm, rotary positions, SwiGLU) against either API."""
    nn, F = L.nn, L.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = nn.RMSNorm(width), nn.RMSNorm(width)
            self.qkv = nn.Linear(width, 3 * width, bias=False)
            self.o = nn.Linear(width, width, bias=False)
            self.gate, self.up = (nn.Linear(width, 32, bias=False) for _ in range(2))
            self.down = nn.Linear(32, width, bias=False)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2)
                       for t in self.qkv(self.n1(x)).chunk(3, dim=-1))
            a = F.scaled_dot_product_attention(_rope(L, q), _rope(L, k), v, is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(B, T, C))
            h = self.n2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    return Block()


@pytest.mark.parametrize("build, make_input", [
    (gpt_style, lambda L: L.zeros(3, 8, dtype=L.int64, device="meta")),
    (llama_block, lambda L: L.randn(2, 5, 16, device="meta")),
])
def test_a_meta_model_runs_forward_and_backward(build, make_input):
    seen = []
    for L in (mg, torch):
        with L.device("meta"):
            model = build(L)
        out = model(make_input(L))
        out.float().pow(2).mean().backward()
        grads = [described(p.grad) for p in model.parameters()]
        seen.append((described(out), [described(p) for p in model.parameters()], grads))
    assert seen[0] == seen[1]
    assert all(g[2] == "meta" for g in seen[0][2])


def test_to_empty_then_seeded_init_gives_torchs_values():
    models = []
    for L in (mg, torch):
        with L.device("meta"):
            model = gpt_style(L)
        model.to_empty(device="cpu")
        assert model.head.weight is not model.tok.weight     # untied, as torch's
        model.head.weight = model.tok.weight                 # tied again
        L.manual_seed(11)
        model.apply(model._init_weights)
        models.append(model)
    ours, theirs = (dict(m.state_dict()) for m in models)
    assert list(ours) == list(theirs)
    for key in ours:
        assert ours[key].device == mg.device("cpu")
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy(), err_msg=key)
    idx = [[1, 2, 3, 4], [5, 6, 7, 8]]
    np.testing.assert_allclose(models[0](mg.tensor(idx)).detach().numpy(),
                               models[1](torch.tensor(idx)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_load_state_dict_assign_takes_the_tensors():
    for L in (mg, torch):
        source = L.nn.Linear(3, 2).state_dict()
        model = L.nn.Linear(3, 2, device="meta")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.load_state_dict(source)                    # a copy into meta: a no-op
        assert model.weight.is_meta and caught
        assert "assign=True" in str(caught[0].message)
        model.load_state_dict(source, assign=True)
        assert not model.weight.is_meta and model.weight.requires_grad
        assert isinstance(model.weight, L.nn.Parameter)
        assert model.weight.data_ptr() == source["weight"].data_ptr()


def test_a_meta_device_object():
    for L in (mg, torch):
        d = L.device("meta")
        assert (d.type, d.index, str(d), repr(d)) == ("meta", None, "meta",
                                                       "device(type='meta')")
    assert mg.empty(2, device="meta").device == mg.device("meta")

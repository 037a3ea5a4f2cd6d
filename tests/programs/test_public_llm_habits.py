"""Habits of public PyTorch language-model files (LLaMA's and Mistral's reference models,
llama2.c, gpt-fast's model and generator, minGPT and its forks, nanoGPT's train.py, a minimal
Mamba, RWKV in 150 lines), each as a short program of its own run twice: under PyTorch and
here, the same text given either library (``torch``, ``nn``, ``F``). A program returns what it
computed; the two runs must agree to rounding.

The habits the files showed missing or different here, now as torch's: a one-element tensor
written into one slot of a token buffer (``seq[T] = next_token``, torch drops the value's
leading 1s), ``Tensor.split(split_size=...)``, a model written on ``torch.jit.ScriptModule``,
``torch._dynamo``'s and ``torch._inductor``'s settings and ``torch.compiler``, the attention
kernels' flags (``torch.backends.cuda.sdp_kernel``, ``torch.nn.attention.sdpa_kernel``),
``with torch.device(...)`` blocks, ``torch.cuda``'s memory counters, a GradScaler on the CPU,
the autocast queries, grad-mode blocks that bind None, ``get_worker_info``, ``torch.version``.
Beside them, habits the files ran right at once, kept here so they stay so: rotary embeddings
through ``polar``/``view_as_complex`` and a KV cache under ``inference_mode``, top-p sampling,
sampling through ``exponential_``, a rotating cache filled with ``scatter_`` on a view, a
banded mask through ``log``, grouped-query attention by ``expand``, a low-rank SVD of the
values, minGPT's ``@autocast()`` decorator."""

import math
from importlib import import_module

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

from torch_compare import under_both  # noqa: E402
from test_public_code_habits import assert_close as _assert_close  # noqa: E402


def part(torch, name):
    """A submodule of the library (``part(torch, "nn.attention")``), imported by name."""
    return import_module(f"{torch.__name__}.{name}")


def plain(value):
    """Tensors as nested lists of floats, dtypes by name, containers walked."""
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        return np.asarray(value.detach().float().numpy() if str(value.dtype).endswith("bfloat16")
                          else value.detach().numpy(), dtype=np.float64).tolist()
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (torch.dtype, np.dtype, mg.dtype)):
        return str(value).replace("torch.", "")
    if isinstance(value, np.generic):
        return value.item()
    return value


def assert_close(got, expected, rtol=1e-5, atol=1e-6):
    """test_public_code_habits' comparison, at float32 training's tolerances."""
    _assert_close(got, expected, rtol, atol)


def run_both(program):
    return under_both(program, plain)       # deprecations and disabled devices: not output


# ----- a token buffer written one slot at a time, sampled without a sync --------------------
def token_buffer(torch, nn, F):
    # gpt-fast's generator: a preallocated sequence, a cache indexed by a positions tensor,
    # top-k through a pivot and `where`, a draw by exponential noise and argmax
    torch.manual_seed(4)
    vocab, width = 11, 6
    table, head = torch.randn(vocab, width), torch.randn(width, vocab)
    cache = torch.zeros(1, 2, 12, 3)
    prompt = torch.tensor([3, 1, 4], dtype=torch.int)
    seq = torch.empty(10, dtype=prompt.dtype)
    seq[:3] = prompt
    pos = torch.arange(0, 3)
    for step in range(3, 10):
        hidden = table[seq[:step].long()]                           # (step, width)
        cache[:, :, pos] = hidden[-len(pos):, :3].reshape(1, 1, len(pos), 3).expand(1, 2, -1, 3)
        logits = (hidden @ head)[-1] / 0.7
        top, _ = torch.topk(logits, 4)
        pivot = top.select(-1, -1).unsqueeze(-1)
        probs = F.softmax(torch.where(logits < pivot, -float("Inf"), logits), dim=-1)
        noise = torch.empty_like(probs).exponential_(1)
        nxt = torch.argmax(probs / noise, dim=-1, keepdim=True).to(dtype=torch.int)
        seq[step] = nxt                                             # (1,) into one slot
        pos = torch.tensor([step])
    grid = torch.zeros(2, 3)
    grid[0] = torch.ones(1, 3)                                      # a (1, 3) row
    grid[grid == 0] = torch.full((1, 3), 2.0)                       # (1, 3) through a mask
    slot = torch.zeros(4)
    slot[1] = torch.tensor([[5.0]])                                 # (1, 1) into one slot
    refused = []
    for bad in (lambda: slot.__setitem__(2, torch.ones(2)),
                lambda: grid.__setitem__(0, torch.ones(2, 3))):
        try:
            bad()
            refused.append(None)
        except RuntimeError:
            refused.append("RuntimeError")
    return [seq, cache.sum(), grid, slot, refused]


def written_slot_gradient(torch, nn, F):
    w = torch.tensor([0.5], requires_grad=True)
    buffer = torch.zeros(4)
    buffer[2] = w * 3
    (buffer * torch.arange(4.0)).sum().backward()
    return [buffer, w.grad]


# ----- split by the method's keyword (a minimal Mamba) ----------------------------------------
def selective_scan(torch, nn, F):
    torch.manual_seed(6)
    d_in, n, rank = 6, 3, 2
    proj = nn.Linear(4, 2 * d_in, bias=False)
    conv = nn.Conv1d(d_in, d_in, kernel_size=3, groups=d_in, padding=2)
    x_proj = nn.Linear(d_in, rank + 2 * n, bias=False)
    dt_proj = nn.Linear(rank, d_in)
    a_log = nn.Parameter(torch.log(torch.arange(1, n + 1).repeat(d_in, 1).float()))
    u = torch.randn(2, 5, 4)
    both = proj(u).transpose(1, 2)                                  # (b, 2 d_in, l)
    x, res = both.split(split_size=[d_in, d_in], dim=1)
    x = F.silu(conv(x)[:, :, :5])
    delta, B, C = x_proj(x.transpose(1, 2)).split(split_size=[rank, n, n], dim=-1)
    delta = F.softplus(dt_proj(delta))                              # (b, l, d_in)
    dA = torch.exp(torch.einsum("bld,dn->bdln", delta, -torch.exp(a_log)))
    dBu = torch.einsum("bld,bln,bdl->bdln", delta, B, x)
    state, ys = torch.zeros(2, d_in, n), []
    for i in range(5):
        state = dA[:, :, i] * state + dBu[:, :, i]
        ys.append(torch.einsum("bdn,bn->bd", state, C[:, i]))
    y = torch.stack(ys, dim=2) * F.silu(res)
    y.square().mean().backward()
    pieces = [t.shape for t in torch.split(u, split_size_or_sections=2, dim=1)]
    try:
        u.split(split_size_or_sections=2)
        misuse = None
    except TypeError:
        misuse = "TypeError"
    return [y, a_log.grad, conv.weight.grad, [list(p) for p in pieces], misuse]


# ----- a model written on torch.jit.ScriptModule (RWKV in 150 lines) --------------------------
def script_module_model(torch, nn, F):
    jit = part(torch, "jit")

    class Mixer(jit.ScriptModule):
        def __init__(self, width):
            super().__init__()
            self.eval()
            self.key = nn.Linear(width, width, bias=False)
            self.first = nn.Parameter(torch.linspace(-1.0, 1.0, width))

        @jit.script_method
        def mix(self, x, state, i: int):
            k = self.key(x)
            top = torch.maximum(state[2 * i + 1], self.first + k)
            out = (torch.exp(state[2 * i + 1] - top) * state[2 * i]
                   + torch.exp(self.first + k - top) * x)
            state[2 * i] = x
            state[2 * i + 1] = top
            return out

        def forward(self, token, state):
            with torch.no_grad():
                if state == None:                                   # noqa: E711, as the file
                    state = torch.zeros(4, 5)
                    state[1] = state[3] = -1e30
                x = F.layer_norm(torch.eye(5)[token], (5,), weight=None, bias=None)
                for i in range(2):
                    x = x + self.mix(x, state, i)
                return x.float(), state

    torch.manual_seed(8)
    model, state, outs = Mixer(5), None, []
    for token in (1, 3, 0, 4):
        out, state = model(token, state)
        outs.append(out)
    return [outs, state, model.training, isinstance(model, nn.Module),
            sorted(model.state_dict())]


# ----- the compiler's settings and switches (gpt-fast, nanoGPT) -----------------------------
def compiler_settings(torch, nn, F):
    dynamo, inductor = part(torch, "_dynamo.config"), part(torch, "_inductor.config")
    compiler = part(torch, "compiler")
    kept = (dynamo.cache_size_limit, dynamo.suppress_errors,
            inductor.coordinate_descent_tuning, inductor.triton.unique_kernel_names,
            inductor.fx_graph_cache)
    try:
        defaults = list(kept)
        dynamo.cache_size_limit = 64
        dynamo.suppress_errors = True
        inductor.coordinate_descent_tuning = True
        inductor.triton.unique_kernel_names = False
        inductor.fx_graph_cache = True
        set_ = [dynamo.cache_size_limit, dynamo.suppress_errors,
                inductor.coordinate_descent_tuning, inductor.triton.unique_kernel_names]

        @compiler.disable
        def plain_step(x):
            return x * 2 + 1

        @compiler.disable(recursive=False)
        def other_step(x):
            return x - 1

        part(torch, "_dynamo").reset()
        model = nn.Linear(2, 2)
        compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True, dynamic=False)
        return [defaults, set_, compiler.is_compiling(), part(torch, "_dynamo").is_compiling(),
                plain_step(torch.ones(2)), other_step(torch.ones(2)),
                compiled(torch.ones(1, 2)).shape == model(torch.ones(1, 2)).shape]
    finally:
        (dynamo.cache_size_limit, dynamo.suppress_errors, inductor.coordinate_descent_tuning,
         inductor.triton.unique_kernel_names, inductor.fx_graph_cache) = kept


# ----- the attention kernels' flags ---------------------------------------------------------
def attention_kernel_flags(torch, nn, F):
    cuda, attention = torch.backends.cuda, part(torch, "nn.attention")
    flags = [cuda.flash_sdp_enabled, cuda.mem_efficient_sdp_enabled, cuda.math_sdp_enabled,
             cuda.cudnn_sdp_enabled]
    seen = [[f() for f in flags]]
    q = k = v = torch.arange(24.0).reshape(1, 2, 3, 4) / 10
    outs = []
    with cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False) as got:
        seen.append([f() for f in flags] + [got])
        outs.append(F.scaled_dot_product_attention(q, k, v, is_causal=True))
    seen.append([f() for f in flags])
    with attention.sdpa_kernel(attention.SDPBackend.MATH):
        seen.append([f() for f in flags])
        outs.append(F.scaled_dot_product_attention(q, k, v, is_causal=True))
    with attention.sdpa_kernel(backends=[attention.SDPBackend.FLASH_ATTENTION,
                                         attention.SDPBackend.MATH]):
        seen.append([f() for f in flags])
    cuda.enable_flash_sdp(False)
    seen.append([f() for f in flags])
    cuda.enable_flash_sdp(True)
    refused = []
    for bad in (lambda: attention.sdpa_kernel("math").__enter__(),
                lambda: cuda.enable_math_sdp(1)):
        try:
            bad()
            refused.append(None)
        except (AssertionError, RuntimeError) as error:
            refused.append(type(error).__name__)
    return [seen, outs, [f() for f in flags], refused, str(attention.SDPBackend.MATH),
            attention.SDPBackend.EFFICIENT_ATTENTION.value]


# ----- device blocks and the default device ---------------------------------------------------
def device_blocks(torch, nn, F):
    with torch.device("cpu") as block:
        made = [torch.zeros(2).device.type, nn.Linear(2, 3).weight.device.type,
                torch.tensor([1.0]).device.type, str(torch.get_default_device())]
    torch.set_default_device("cpu")
    kept = str(torch.get_default_device())
    torch.set_default_device(None)
    return [str(block), made, kept, str(torch.get_default_device())]


def memory_counters(torch, nn, F):
    if torch.cuda.is_available():
        pytest.skip("the counters of a machine with a GPU differ by its allocator")
    cuda = torch.cuda
    return [cuda.memory_allocated(), cuda.max_memory_allocated(), cuda.memory_reserved(),
            cuda.max_memory_reserved(), cuda.empty_cache(), torch.version.cuda]


# ----- a GradScaler on the CPU ---------------------------------------------------------------
def grad_scaler_on_cpu(torch, nn, F):
    torch.manual_seed(5)
    model = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
    x, y = torch.randn(4, 3), torch.randn(4, 2)
    trace = []
    for step in range(5):
        loss = F.mse_loss(model(x), y)
        scaled = scaler.scale(loss)
        scaled.backward()
        if step == 2:
            model.weight.grad[0, 0] = float("inf")                  # an overflow: skipped
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        trace.append([scaled.item(), scaler.get_scale()])
    half = scaler.scale(torch.tensor(3.0, dtype=torch.float16))
    saved = scaler.state_dict()
    again = torch.amp.GradScaler("cpu")
    again.load_state_dict(saved)
    errors = []
    for bad in (lambda: scaler.update(), lambda: again.load_state_dict({})):
        try:
            bad()
            errors.append(None)
        except (AssertionError, RuntimeError) as error:
            errors.append(type(error).__name__)
    off = torch.amp.GradScaler("cpu", enabled=False)
    older = part(torch, "cpu.amp").GradScaler(init_scale=8.0)      # torch.cpu.amp's: on the CPU
    return [trace, model.weight, half, half.dtype, saved, again.get_scale(), errors,
            scaler.is_enabled(), off.get_scale(), off.state_dict(), off.scale(loss) is loss,
            older.is_enabled(), older.scale(torch.tensor(2.0))]


# ----- autocast's queries, minGPT's @autocast() decorator ------------------------------------
def autocast_queries(torch, nn, F):
    amp = part(torch, "amp")
    outside = [torch.is_autocast_enabled(), torch.get_autocast_dtype("cpu"),
               torch.get_autocast_dtype("cuda"), amp.is_autocast_available("cpu"),
               amp.is_autocast_available("cuda")]
    with torch.autocast("cpu", dtype=torch.float16, enabled=False):
        inside = torch.get_autocast_dtype("cpu")
    from_cuda_amp = part(torch, "cuda.amp").autocast

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(3, 3)

        @from_cuda_amp()
        def forward(self, x):
            return self.proj(x).relu()

    torch.manual_seed(2)
    block = Block()
    return [outside, inside, block(torch.ones(2, 3)), torch.is_autocast_enabled()]


# ----- what grad-mode blocks bind, a loader's worker, the build --------------------------------
def grad_modes_and_workers(torch, nn, F):
    bound = []
    for block in (torch.no_grad(), torch.enable_grad(), torch.inference_mode(),
                  torch.set_grad_enabled(False)):
        with block as got:
            bound.append(got)

    class Words(torch.utils.data.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            worker = torch.utils.data.get_worker_info()
            return torch.tensor([i, -1 if worker is None else worker.id])

    seen = [batch for batch in torch.utils.data.DataLoader(Words(), batch_size=2)]
    return [bound, seen, torch.utils.data.get_worker_info()]


# ----- habits the files ran right at once --------------------------------------------------
def rotary_cache_and_top_p(torch, nn, F):
    # LLaMA's reference: RoPE through polar and view_as_complex, a KV cache written in
    # place under inference_mode, a causal mask offset by the start position; top-p sampling
    torch.manual_seed(9)
    heads, dim, width = 2, 4, 8
    freqs = 1.0 / (10000.0 ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    cis = torch.polar(torch.ones(12, dim // 2), torch.outer(torch.arange(12), freqs).float())
    wq, wk, wv = (nn.Linear(width, heads * dim, bias=False) for _ in range(3))
    cache_k, cache_v = torch.zeros(1, 12, heads, dim), torch.zeros(1, 12, heads, dim)

    def rotate(x, c):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * c.view(1, xc.shape[1], 1, xc.shape[-1])).flatten(3)

    @torch.inference_mode()
    def attend(h, start):
        b, t, _ = h.shape
        q, k = (rotate(w(h).view(b, t, heads, dim), cis[start:start + t]) for w in (wq, wk))
        cache_k[:b, start:start + t] = k
        cache_v[:b, start:start + t] = wv(h).view(b, t, heads, dim)
        keys = cache_k[:b, :start + t].transpose(1, 2)
        values = cache_v[:b, :start + t].transpose(1, 2)
        scores = q.transpose(1, 2) @ keys.transpose(2, 3) / math.sqrt(dim)
        if t > 1:
            mask = torch.full((1, 1, t, t), float("-inf"))
            scores = scores + torch.triu(mask, diagonal=start + 1)
        return (F.softmax(scores.float(), dim=-1) @ values).transpose(1, 2).reshape(b, t, -1)

    def top_p(probs, p):
        ordered, order = torch.sort(probs, dim=-1, descending=True)
        drop = torch.cumsum(ordered, dim=-1) - ordered > p
        ordered[drop] = 0.0
        ordered.div_(ordered.sum(dim=-1, keepdim=True))
        return torch.gather(order, -1, torch.multinomial(ordered, num_samples=1))

    x = torch.randn(1, 5, width)
    first, last = attend(x[:, :4], 0), attend(x[:, 4:], 4)
    picks = [top_p(torch.softmax(torch.randn(2, 7) / 0.8, dim=-1), 0.7) for _ in range(3)]
    return [first, last, cache_k[:, :5], picks, first.requires_grad,
            torch.is_inference_mode_enabled()]


def rotating_cache_and_banded_mask(torch, nn, F):
    # Mistral's reference: a sliding-window cache filled by scatter_ through a view of it,
    # a banded mask whose log gives -inf, grouped heads by repeat_interleave, `scores +=`
    torch.manual_seed(3)
    window, kv_heads, dim = 3, 1, 2
    cache = torch.empty(2, window, kv_heads, dim).fill_(7.0)
    positions = torch.arange(0, 5)
    values = torch.randn(2, 5, kv_heads, dim)
    where = (positions[-window:] % window)[None, :, None, None].repeat(1, 1, kv_heads, dim)
    cache[:1].scatter_(dim=1, index=where, src=values[:1, -window:])
    band = torch.full((5, 5), dtype=torch.float32, fill_value=1)
    mask = torch.log(torch.triu(torch.tril(band, diagonal=0), diagonal=-window))
    scores = torch.randn(1, 2, 5, 5)
    scores += mask[None, None, ...]
    keys = torch.repeat_interleave(values, repeats=2, dim=2)
    grouped = values[:, :, :, None, :].expand(2, 5, kv_heads, 2, dim).reshape(2, 5, 2, dim)
    return [cache, mask, F.softmax(scores, dim=-1), keys, (keys == grouped).all().item(),
            torch.LongTensor([4]).to(positions).dtype]


def low_rank_values(torch, nn, F):
    # a nanoGPT fork: each head's values replaced by their rank-2 SVD, gradients through it
    torch.manual_seed(1)
    v = torch.randn(3, 4, 3, dtype=torch.float64, requires_grad=True)
    rebuilt = torch.zeros_like(v)
    for i in range(3):
        u, s, vh = torch.linalg.svd(v[i], full_matrices=False)
        rebuilt[i] = u[:, :2] @ torch.diag(s[:2]) @ vh[:2, :]
    (rebuilt * torch.arange(36.0, dtype=torch.float64).reshape(3, 4, 3)).sum().backward()
    return [rebuilt, v.grad]


PROGRAMS = {f.__name__: f for f in (
    token_buffer, written_slot_gradient, selective_scan, script_module_model,
    compiler_settings, attention_kernel_flags, device_blocks, memory_counters,
    grad_scaler_on_cpu, autocast_queries, grad_modes_and_workers, rotary_cache_and_top_p,
    rotating_cache_and_banded_mask, low_rank_values)}

# torch's first import of its compiler's modules takes seconds
SLOW = {"compiler_settings"}
TOLERANCES = {"low_rank_values": {"rtol": 1e-9, "atol": 1e-10}}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW
                                  else name for name in PROGRAMS])
def test_the_habit_computes_what_it_computes_under_pytorch(name):
    expected, got = run_both(PROGRAMS[name])
    assert_close(got, expected, **TOLERANCES.get(name, {}))


def test_the_comparison_can_fail():
    expected, _ = run_both(token_buffer)
    changed = [[token + 1 for token in expected[0]]] + expected[1:]
    with pytest.raises(AssertionError):
        assert_close(changed, expected)


def test_a_meta_device_builds_shape_only_tensors():
    # torch builds shape-only tensors on "meta" (gpt-fast's _load_model), then loads the
    # weights with assign=True; the same here (tests/engine/test_meta_device_vs_torch.py)
    with mg.device("meta"):
        model = mg.nn.Linear(4, 3)
    assert model.weight.is_meta
    model.load_state_dict(mg.nn.Linear(4, 3).state_dict(), assign=True)
    assert model.weight.device == "cpu"

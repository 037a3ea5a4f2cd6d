"""Language-model files as their popular public implementations write them (T5, BERT, GPT-2
in the Hugging Face idiom, LLaMA-3 / Mistral, RWKV; the programs are in
``language_programs.py``), each run under PyTorch and here from the same weights (torch's
state_dict loaded here): forward outputs, every gradient, the weights after one optimizer
step and greedily generated tokens must agree, to 1e-9 in float64 and to rounding in
float32."""

import math

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

from language_programs import PROGRAMS  # noqa: E402
from torch_compare import LIBRARIES, under_both  # noqa: E402
from test_public_llm_habits import assert_close, part, plain  # noqa: E402

# T5 and LLaMA compute in float32 (their norms and rotary embeddings cast to it); the rest
# run in float64
TOLERANCES = {"t5": {"rtol": 2e-5, "atol": 2e-6}, "llama": {"rtol": 2e-5, "atol": 2e-6},
              "bert": {"rtol": 1e-9, "atol": 1e-12}, "gpt2": {"rtol": 1e-9, "atol": 1e-12},
              "rwkv": {"rtol": 1e-9, "atol": 1e-12}}


def run_both(program):
    expected, state = program(*LIBRARIES["torch"], None)
    got, _ = program(*LIBRARIES["microgradnorm"], state)
    return plain(expected), plain(got)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_file_computes_what_it_computes_under_pytorch(name):
    expected, got = run_both(PROGRAMS[name])
    assert_close(got, expected, **TOLERANCES[name])


def test_the_comparison_can_fail():
    expected, got = run_both(PROGRAMS["gpt2"])
    changed = [expected[0] * (1 + 1e-8)] + expected[1:]
    assert math.isfinite(changed[0])
    with pytest.raises(AssertionError):
        assert_close(changed, got, **TOLERANCES["gpt2"])


# ----- habits around the models: generation loops, masks, initialisations ---------------------
def run_habit(program):
    return under_both(program, plain)


def logits_processors(torch, nn, F):
    # Hugging Face's generation: a repetition penalty by gather/scatter_, top-k by the k-th
    # value, top-p over an ascending sort scattered back, finished rows padded, beams by a
    # flat topk split with a floor division
    torch.manual_seed(2)
    scores, input_ids = torch.randn(2, 9), torch.tensor([[1, 4, 4], [0, 2, 8]])
    seen = torch.gather(scores, 1, input_ids)
    seen = torch.where(seen < 0, seen * 1.3, seen / 1.3)
    scores.scatter_(1, input_ids, seen)
    drop = scores < torch.topk(scores, 5)[0][..., -1, None]
    top_k = scores.masked_fill(drop, -float("Inf"))
    sorted_logits, sorted_indices = torch.sort(top_k, descending=False)
    cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove = cumulative <= (1 - 0.8)
    remove[..., -1:] = 0
    remove = remove.scatter(1, sorted_indices, remove)
    top_p = top_k.masked_fill(remove, -float("Inf"))
    next_tokens = torch.argmax(nn.functional.softmax(top_p, dim=-1), dim=-1)
    unfinished = torch.ones(2, dtype=torch.long)
    unfinished[1] = 0
    next_tokens = next_tokens * unfinished + 0 * (1 - unfinished)
    eos = torch.tensor([next_tokens[0].item(), 7])
    unfinished = unfinished & ~torch.isin(next_tokens, eos)
    grown = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
    beams = F.log_softmax(torch.randn(2 * 3, 9), dim=-1).view(2, 3 * 9)
    best, flat = torch.topk(beams, 2 * 3, dim=1, largest=True, sorted=True)
    return [top_k, top_p, remove, grown, unfinished, unfinished.max() == 0, best,
            torch.div(flat, 9, rounding_mode="floor"), flat % 9]


def llama3_generation_habits(torch, nn, F):
    # LLaMA-3's reference: rope frequencies rescaled in a Python loop over 0-d tensors and
    # rebuilt by torch.tensor, prompt slots kept by where, token log-probabilities from
    # cross_entropy on (batch, vocab, time), stops by isin, `all()` over a bool tensor
    freqs = 1.0 / (500000.0 ** (torch.arange(0, 8, 2)[:4].float() / 8))
    new_freqs = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < 3:
            new_freqs.append(freq)
        elif wavelen > 100:
            new_freqs.append(freq / 8)
        else:
            smooth = (16 / wavelen - 1) / 3
            new_freqs.append((1 - smooth) * freq / 8 + smooth * freq)
    scaled = torch.tensor(new_freqs, dtype=freqs.dtype, device=freqs.device)
    torch.manual_seed(5)
    pad = -1
    tokens = torch.full((2, 6), pad, dtype=torch.long)
    tokens[0, :3], tokens[1, :2] = torch.tensor([3, 1, 4]), torch.tensor([2, 7])
    input_text_mask = tokens != pad
    eos_reached = torch.tensor([False] * 2)
    stop_tokens = torch.tensor([5, 6])
    logprobs = torch.zeros_like(tokens, dtype=torch.float)
    stops = []
    for cur_pos in range(2, 6):
        logits = torch.randn(2, cur_pos, 9)
        next_token = torch.argmax(logits[:, -1], dim=-1).reshape(-1)
        next_token = torch.where(input_text_mask[:, cur_pos], tokens[:, cur_pos], next_token)
        tokens[:, cur_pos] = next_token
        logprobs[:, 1: cur_pos + 1] = -F.cross_entropy(
            input=logits.transpose(1, 2), target=tokens[:, 1: cur_pos + 1],
            reduction="none", ignore_index=pad)
        eos_reached |= (~input_text_mask[:, cur_pos]) & torch.isin(next_token, stop_tokens)
        stops.append(bool(all(eos_reached)))
    return [scaled, tokens, logprobs, eos_reached, stops]


def attention_masks(torch, nn, F):
    # decoder masks as Hugging Face builds them; GPT-2's older uint8 buffer and -1e4 fill;
    # positions counted along a left-padded mask; Mistral's triu_ on a full -inf; SDPA with a
    # float mask and with grouped heads
    torch.manual_seed(8)
    attention_mask = torch.tensor([[0, 1, 1, 1], [1, 1, 1, 1]])
    seq_ids = torch.arange(4)
    causal = seq_ids[None, None, :].repeat(2, 4, 1) <= seq_ids[None, :, None]
    causal = causal.to(attention_mask.dtype)
    extended = causal[:, None, :, :] * attention_mask[:, None, None, :]
    inverted = (1.0 - extended.to(torch.float64)) * torch.finfo(torch.float64).min
    position_ids = attention_mask.long().cumsum(-1) - 1
    position_ids.masked_fill_(attention_mask == 0, 1)
    old = torch.tril(torch.ones((4, 4), dtype=torch.uint8)).view(1, 1, 4, 4)
    w = torch.randn(2, 2, 4, 4, dtype=torch.float64, requires_grad=True)
    b = old[:, :, 1:4, :4]
    masked = w[:, :, 1:] * b - 1e4 * (1 - b)
    newer = torch.where(old.bool()[:, :, 1:4, :4], w[:, :, 1:], torch.tensor(-1e4))
    full = torch.full((4, 4), float("-inf")).triu_(1)
    q = torch.randn(2, 4, 4, 3, dtype=torch.float64, requires_grad=True)
    k, v = torch.randn(2, 2, 4, 3, dtype=torch.float64), torch.randn(2, 2, 4, 3).double()
    sdpa = F.scaled_dot_product_attention(q, k.repeat_interleave(2, dim=1),
                                          v.repeat_interleave(2, dim=1), attn_mask=inverted)
    gqa = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    (sdpa.sum() + gqa.pow(2).sum() + masked.sum() + newer.exp().sum()).backward()
    return [extended, inverted[0, 0], position_ids, masked, newer, full, sdpa, gqa,
            q.grad, w.grad]


def initialisations(torch, nn, F):
    # BERT's and GPT-2's `_init_weights` through `apply`: normal_ on .data, the padding row
    # zeroed, norms filled; GPT-2's rescaled residual projections by parameter name; T5's
    # shift right with a fill of the ignored label
    torch.manual_seed(3)
    model = nn.Sequential(nn.Embedding(7, 4, padding_idx=1), nn.Linear(4, 4),
                          nn.LayerNorm(4, eps=1e-12))
    model.c_proj = nn.Linear(4, 4)

    def init(module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)

    model.apply(init)
    for name, p in model.named_parameters():
        if name == "c_proj.weight":
            p.data.normal_(mean=0.0, std=(0.02 / math.sqrt(2 * 2)))
    labels = torch.tensor([[5, 3, -100, -100], [2, 2, 6, -100]])
    shifted = labels.new_zeros(labels.shape)
    shifted[..., 1:] = labels[..., :-1].clone()
    shifted[..., 0] = 0
    shifted.masked_fill_(shifted == -100, 0)
    return [model.state_dict(), shifted]


def rwkv5_group_norm_and_state(torch, nn, F):
    # RWKV-5: heads' outputs normalised by a GroupNorm over (batch * time, channels), the
    # recurrence on a matrix state per head; RWKV-4's RNN mode writing its state rows in place
    # through F.layer_norm's keyword weights; T5's float16 clamp to finfo.max
    torch.manual_seed(7)
    b, t, h, s = 2, 3, 2, 3
    c = h * s
    ln_x = nn.GroupNorm(h, c, eps=64e-5)
    r, k, v = (torch.randn(b, t, h, s, dtype=torch.float64, requires_grad=True)
               for _ in range(3))
    w = torch.exp(-torch.exp(torch.linspace(-1, 1, h * s, dtype=torch.float64))).view(h, s, 1)
    u = torch.linspace(0.2, 0.5, h * s, dtype=torch.float64).view(h, s, 1)
    state = torch.zeros(b, h, s, s, dtype=torch.float64)
    outs = []
    for i in range(t):
        kv = k[:, i].unsqueeze(-1) @ v[:, i].unsqueeze(-2)               # (b, h, s, s)
        outs.append((r[:, i].unsqueeze(-2) @ (u * kv + state)).squeeze(-2))
        state = kv + w * state
    x = torch.stack(outs, dim=1).reshape(b * t, c)
    y = ln_x.double()(x).view(b, t, c)
    y.pow(2).sum().backward()
    rnn = torch.zeros(2 * 3, 4)
    for i in range(2):
        rnn[3 * i + 2] = -1e30
    xs = torch.randn(4)
    lw, lb = torch.linspace(0.5, 1.5, 4), torch.linspace(-0.1, 0.1, 4)
    for i in range(2):
        xn = F.layer_norm(xs, (4,), weight=lw, bias=lb)
        rnn[3 * i + 0] = xn
        rnn[3 * i + 1] = torch.maximum(rnn[3 * i + 2], xn)
        xs = xs + xn
    half = torch.tensor([[6.0e4, -1.0], [2.0, float("inf")]], dtype=torch.float16)
    bound = torch.where(torch.isinf(half).any(), torch.finfo(half.dtype).max - 1000,
                        torch.finfo(half.dtype).max)
    clamped = torch.clamp(half, min=-bound, max=bound)
    return [y, r.grad, k.grad, v.grad, ln_x.weight.grad, rnn, clamped, clamped.dtype,
            bound.dtype]


def half_precision_layers(torch, nn, F):
    # a checkpoint run in its half dtype: Hugging Face's Conv1D through addmm, Linear layers,
    # BLOOM's alibi through baddbmm, T5's norm (float32 statistics, back to the weight's
    # dtype); torch adds the bias in the float32 accumulator and rounds once
    torch.manual_seed(11)
    out = []
    for dtype in (torch.bfloat16, torch.float16):
        x = torch.randn(2, 5, 8).to(dtype).requires_grad_()
        weight = torch.randn(8, 6).to(dtype).requires_grad_()
        bias = torch.randn(6).to(dtype).requires_grad_()
        conv1d = torch.addmm(bias, x.view(-1, x.size(-1)), weight).view(2, 5, 6)
        linear = nn.Linear(8, 6).to(dtype)
        h = linear(x)
        norm_weight = nn.Parameter(torch.linspace(0.5, 1.5, 6).to(dtype))
        variance = h.to(torch.float32).pow(2).mean(-1, keepdim=True)
        normed = norm_weight * (h * torch.rsqrt(variance + 1e-6)).to(norm_weight.dtype)
        alibi = torch.randn(4, 1, 5).to(dtype)
        q, k = torch.randn(4, 5, 3).to(dtype), torch.randn(4, 3, 5).to(dtype)
        scores = alibi.baddbmm(batch1=q, batch2=k, beta=1.0, alpha=1 / math.sqrt(3))
        (conv1d.float().sum() + normed.float().pow(2).sum()).backward()
        out += [conv1d, h, normed, normed.dtype, scores, x.grad, weight.grad, bias.grad,
                linear.weight.grad, linear.bias.grad, norm_weight.grad]
    return out


def t5_training_habits(torch, nn, F):
    # T5's fine-tuning: Adafactor, label smoothing, blocks recomputed by checkpoint
    torch.manual_seed(12)
    embed = nn.Embedding(9, 4).double()
    block = nn.Sequential(nn.Linear(4, 4), nn.GELU(approximate="tanh"), nn.LayerNorm(4),
                          nn.Linear(4, 9)).double()
    params = list(embed.parameters()) + list(block.parameters())
    opt = torch.optim.Adafactor(params, lr=1e-2)
    checkpoint = part(torch, "utils.checkpoint").checkpoint
    losses = []
    for _ in range(3):
        logits = checkpoint(block, embed(torch.tensor([[1, 2, 3], [4, 5, 6]])),
                            use_reentrant=False)
        loss = F.cross_entropy(logits.view(-1, 9), torch.tensor([2, 3, -100, 5, 6, 0]),
                               label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    return [losses, block.state_dict(), embed.weight]


def half_precision_activations(torch, nn, F):
    # the activations of these files in a checkpoint's half dtype, each rounded once as
    # torch's kernels: SwiGLU's silu, GPT-2's gelu_new (tanh), BERT's hand-written exact GELU
    # (erf), RWKV's receptance (sigmoid), attention's softmax; sampling's softmax as a
    # method and a function
    torch.manual_seed(13)
    out = []
    for dtype in (torch.bfloat16, torch.float16):
        x = (torch.randn(4, 16) * 2).to(dtype).requires_grad_()
        gate = torch.randn(4, 16).to(dtype)
        swiglu = F.silu(x) * gate
        gelu_new = 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                               * (x + 0.044715 * torch.pow(x, 3.0))))
        gelu_erf = x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
        receptance = torch.sigmoid(x) * gate
        attention = nn.functional.softmax(x * 2, dim=-1)
        terms = (swiglu, gelu_new, gelu_erf, receptance, attention)
        grads_ = []
        for term in terms:
            x.grad = None
            term.backward(gate)
            grads_.append(x.grad)
        with torch.no_grad():
            probs, also = (x / 0.7).softmax(dim=-1), torch.softmax(x * 2, dim=-1)
        out += [*terms, *grads_, probs, also, [term.dtype for term in terms]]
    return out


HABITS = {f.__name__: f for f in (logits_processors, llama3_generation_habits,
                                  attention_masks, initialisations,
                                  rwkv5_group_norm_and_state, half_precision_layers,
                                  half_precision_activations, t5_training_habits)}

# these work in float32 in part: rounding
HABIT_TOLERANCES = {name: {"rtol": 1e-6, "atol": 1e-7} for name in (
    "logits_processors", "llama3_generation_habits", "rwkv5_group_norm_and_state")}
# one float16 ulp (below a bfloat16 one): where torch's float32 exp and sums round otherwise
# (its AVX-512 kernels), a value rounded once to float16 can land an ulp away (softmax's
# gradient, one element of 1,546 on an Intel Xeon)
HABIT_TOLERANCES["half_precision_activations"] = {"rtol": 2.0**-10, "atol": 2.0**-24}


@pytest.mark.parametrize("name", list(HABITS))
def test_the_habit_computes_what_it_computes_under_pytorch(name):
    expected, got = run_habit(HABITS[name])
    assert_close(got, expected, **HABIT_TOLERANCES.get(name, {"rtol": 1e-9, "atol": 1e-12}))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_softmax_and_log_softmax_methods_round_once(dtype):
    # the Tensor methods (the composite graphs) in a half dtype compute in float32 and round
    # once, as torch's kernels: torch's float32 result rounded equals ours; rounding after
    # each op (exp, sum, log, the difference) is an ulp off in places
    if dtype == "bfloat16" and not mg.dtypes.has_bfloat16():
        pytest.skip("bfloat16 needs ml_dtypes")
    values = (np.random.default_rng(5).standard_normal((64, 37)) * 4).astype(np.float32)
    ours = mg.tensor(values).to(getattr(mg, dtype))
    theirs = torch.tensor(values).to(getattr(torch, dtype)).float()
    for method in ("softmax", "log_softmax"):
        got = getattr(ours, method)(-1)
        assert got.dtype == getattr(mg, dtype)
        # our float32 result of the same values, rounded once, bit for bit; and that float32
        # result torch's to float32's last bits (compared rounded, torch's vectorized exp can
        # move a value across a rounding boundary: 1 element of 2,368 on an Intel Xeon)
        ours32 = getattr(ours.float(), method)(-1)
        np.testing.assert_array_equal(got.float().numpy(), ours32.to(got.dtype).float().numpy(),
                                      err_msg=method)
        np.testing.assert_allclose(ours32.numpy(), getattr(theirs, method)(-1).numpy(),
                                   rtol=1e-6, atol=2e-6, err_msg=method)   # x - ℓ: ℓ's ulp

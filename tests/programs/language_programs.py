"""Language models beside ``test_public_language_files.py``, each in the idiom of a popular
public implementation of its architecture, re-expressed small: a T5 encoder-decoder (its
float32 RMS norm, bucketed relative positions, no attention scaling), BERT (post-norm
LayerNorm at eps 1e-12, token-type and position embeddings, the additive mask from
``finfo.min``, the pooler and the tied masked-LM head), GPT-2 as Hugging Face writes it
(``Conv1D`` through ``addmm``, a boolean causal buffer, ``gelu_new``, a key/value cache),
LLaMA-3 / Mistral (complex rotary embeddings, grouped-query attention, SwiGLU, a sliding
window, sampling under ``inference_mode``) and RWKV's time mixing (a stable recurrence of
``exp`` and ``maximum`` over time).

A program takes one library's module triple (torch, nn, F) and ``state``: the torch run
passes None, keeps torch's initialisation and hands its state_dict on (as NumPy arrays); the
run here loads that state_dict, so both start from the same weights. It returns what it
computed (outputs, gradients, the weights after one optimizer step, generated tokens) and
the state it used."""

import math

import numpy as np


def share_weights(torch, model, state):
    """torch's fresh weights as arrays (the torch run), or ``state`` loaded (the run here)."""
    if state is None:
        return {key: value.detach().numpy().copy() for key, value in model.state_dict().items()}
    model.load_state_dict({key: torch.tensor(value) for key, value in state.items()})
    return state


def ids(torch, shape, high, seed):
    return torch.tensor(np.random.RandomState(seed).randint(0, high, size=shape))


def grads(model):
    return {name: p.grad for name, p in model.named_parameters() if p.grad is not None}


def weights(model):
    return {name: p.detach().clone() for name, p in model.named_parameters()}


# ----- T5: an encoder-decoder with an RMS norm in float32 and relative position buckets -----

def t5(torch, nn, F, state=None):
    d_model, d_kv, heads, d_ff, vocab, buckets, reach = 8, 4, 2, 12, 17, 8, 12

    class RMSNormT5(nn.Module):
        # no mean taken and no bias: the variance in float32 whatever the activations
        def __init__(self, size, eps=1e-6):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
            if self.weight.dtype in (torch.float16, torch.bfloat16):
                hidden_states = hidden_states.to(self.weight.dtype)
            return self.weight * hidden_states

    def bucket_of(relative, bidirectional):
        out = 0
        n = buckets
        if bidirectional:
            n //= 2
            out += (relative > 0).to(torch.long) * n
            relative = torch.abs(relative)
        else:
            relative = -torch.min(relative, torch.zeros_like(relative))
        exact = n // 2
        small = relative < exact
        # log(0) is -inf on the exact rows; `where` keeps them out of the answer
        far = exact + (torch.log(relative.float() / exact) / math.log(reach / exact)
                       * (n - exact)).to(torch.long)
        far = torch.min(far, torch.full_like(far, n - 1))
        return out + torch.where(small, relative, far)

    class Attention(nn.Module):
        def __init__(self, decoder, has_bias):
            super().__init__()
            self.decoder = decoder
            self.q, self.k, self.v, self.o = (nn.Linear(d_model, heads * d_kv, bias=False)
                                              for _ in range(4))
            if has_bias:
                self.relative_attention_bias = nn.Embedding(buckets, heads)
            self.has_bias = has_bias

        def position_bias(self, q_len, k_len):
            context = torch.arange(q_len, dtype=torch.long)[:, None]
            memory = torch.arange(k_len, dtype=torch.long)[None, :]
            bucket = bucket_of(memory - context, bidirectional=not self.decoder)
            values = self.relative_attention_bias(bucket)           # (q, k, heads)
            return values.permute([2, 0, 1]).unsqueeze(0)

        def forward(self, hidden, memory=None, bias=None, mask=None):
            b, q_len = hidden.shape[:2]
            source = hidden if memory is None else memory

            def shape(x):
                return x.view(b, -1, heads, d_kv).transpose(1, 2)

            q, k, v = shape(self.q(hidden)), shape(self.k(source)), shape(self.v(source))
            scores = torch.matmul(q, k.transpose(3, 2))             # T5 leaves out 1/sqrt(d)
            if bias is None:
                if self.has_bias:
                    bias = self.position_bias(q_len, k.shape[2])
                else:
                    bias = torch.zeros((1, heads, q_len, k.shape[2]), dtype=scores.dtype)
                if mask is not None:
                    bias = bias + mask
            scores += bias
            weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
            weights = nn.functional.dropout(weights, p=0.0, training=self.training)
            out = torch.matmul(weights, v).transpose(1, 2).contiguous().view(b, -1, heads * d_kv)
            return self.o(out), bias

    class DenseReluDense(nn.Module):
        def __init__(self):
            super().__init__()
            self.wi = nn.Linear(d_model, d_ff, bias=False)
            self.wo = nn.Linear(d_ff, d_model, bias=False)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.wo(self.act(self.wi(x)))

    class Block(nn.Module):
        def __init__(self, decoder, has_bias):
            super().__init__()
            self.norm1, self.attn = RMSNormT5(d_model), Attention(decoder, has_bias)
            self.decoder = decoder
            if decoder:
                self.norm2, self.cross = RMSNormT5(d_model), Attention(False, False)
            self.norm3, self.ff = RMSNormT5(d_model), DenseReluDense()

        def forward(self, h, bias=None, mask=None, memory=None):
            out, bias = self.attn(self.norm1(h), bias=bias, mask=mask)
            h = h + out
            if self.decoder:
                h = h + self.cross(self.norm2(h), memory=memory)[0]
            return h + self.ff(self.norm3(h)), bias

    class T5(nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = nn.Embedding(vocab, d_model)
            self.encoder = nn.ModuleList([Block(False, i == 0) for i in range(2)])
            self.decoder = nn.ModuleList([Block(True, i == 0) for i in range(2)])
            self.enc_norm, self.dec_norm = RMSNormT5(d_model), RMSNormT5(d_model)

        def encode(self, input_ids):
            h, bias = self.shared(input_ids), None
            for block in self.encoder:
                h, bias = block(h, bias=bias)
            return self.enc_norm(h)

        def forward(self, input_ids, decoder_input_ids, memory=None):
            memory = self.encode(input_ids) if memory is None else memory
            t = decoder_input_ids.shape[1]
            causal = torch.tril(torch.ones(t, t))[None, None]
            mask = (1.0 - causal) * torch.finfo(torch.float32).min
            h, bias = self.shared(decoder_input_ids), None
            for block in self.decoder:
                h, bias = block(h, bias=bias, mask=mask, memory=memory)
            h = self.dec_norm(h) * (d_model ** -0.5)               # tied head: rescaled
            return h @ self.shared.weight.t(), memory

    model = T5()
    state = share_weights(torch, model, state)
    source, labels = ids(torch, (2, 7), vocab, 1), ids(torch, (2, 5), vocab, 2)
    labels[1, -2:] = -100                                          # padding, ignored
    start = torch.zeros((2, 1), dtype=torch.long)
    shifted = torch.cat([start, labels[:, :-1]], dim=-1)
    shifted.masked_fill_(shifted == -100, 0)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    logits, _ = model(source, shifted)
    loss = nn.CrossEntropyLoss(ignore_index=-100)(logits.view(-1, vocab), labels.view(-1))
    loss.backward()
    gradients = grads(model)
    opt.step()
    model.eval()
    with torch.no_grad():
        memory, out = model.encode(source[:1]), start[:1]
        for _ in range(4):
            step_logits, _ = model(None, out, memory=memory)
            out = torch.cat([out, step_logits[:, -1].argmax(-1, keepdim=True)], dim=-1)
    near = torch.arange(-14, 15)[None, :]
    half = RMSNormT5(4).to(torch.bfloat16)
    halves = half(torch.linspace(-2, 3, 8).reshape(2, 4).to(torch.bfloat16))
    return [logits, loss, gradients, weights(model), out, bucket_of(near, True),
            bucket_of(near, False), halves, halves.dtype], state


# ----- BERT: post-norm blocks, an additive mask, a pooler and a tied masked-LM head ---------

def bert(torch, nn, F, state=None):
    hidden, heads, inner, vocab, positions, types = 8, 2, 16, 19, 12, 2

    class Embeddings(nn.Module):
        def __init__(self):
            super().__init__()
            self.word_embeddings = nn.Embedding(vocab, hidden, padding_idx=0)
            self.position_embeddings = nn.Embedding(positions, hidden)
            self.token_type_embeddings = nn.Embedding(types, hidden)
            self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)
            self.dropout = nn.Dropout(0.0)
            self.register_buffer("position_ids", torch.arange(positions).expand((1, -1)),
                                 persistent=False)
            self.register_buffer("token_type_ids", torch.zeros(self.position_ids.size(),
                                 dtype=torch.long), persistent=False)

        def forward(self, input_ids, token_type_ids=None):
            length = input_ids.size()[1]
            position_ids = self.position_ids[:, :length]
            if token_type_ids is None:
                token_type_ids = self.token_type_ids[:, :length].expand(input_ids.size(0),
                                                                        length)
            h = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
                 + self.position_embeddings(position_ids))
            return self.dropout(self.LayerNorm(h))

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.head_size = hidden // heads
            self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
            self.dense, self.LayerNorm = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, 1e-12)

        def scores_shape(self, x):
            return x.view(x.size()[:-1] + (heads, self.head_size)).permute(0, 2, 1, 3)

        def forward(self, h, extended_mask):
            q, k, v = (self.scores_shape(f(h)) for f in (self.query, self.key, self.value))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
            probs = nn.functional.softmax(scores + extended_mask, dim=-1)
            context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
            context = context.view(context.size()[:-2] + (hidden,))
            return self.LayerNorm(self.dense(context) + h)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = SelfAttention()
            self.intermediate = nn.Linear(hidden, inner)
            self.output, self.LayerNorm = nn.Linear(inner, hidden), nn.LayerNorm(hidden, 1e-12)

        def forward(self, h, extended_mask):
            h = self.attention(h, extended_mask)
            return self.LayerNorm(self.output(F.gelu(self.intermediate(h))) + h)

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.embeddings = Embeddings()
            self.layer = nn.ModuleList([Layer() for _ in range(2)])
            self.pooler = nn.Linear(hidden, hidden)
            self.transform = nn.Linear(hidden, hidden)
            self.transform_norm = nn.LayerNorm(hidden, eps=1e-12)
            self.decoder = nn.Linear(hidden, vocab, bias=False)
            self.bias = nn.Parameter(torch.zeros(vocab))
            self.decoder.bias = self.bias
            self.decoder.weight = self.embeddings.word_embeddings.weight      # tied
            self.seq_relationship = nn.Linear(hidden, 2)

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            dtype = self.pooler.weight.dtype
            extended = attention_mask[:, None, None, :].to(dtype=dtype)
            extended = (1.0 - extended) * torch.finfo(dtype).min
            h = self.embeddings(input_ids, token_type_ids)
            for layer in self.layer:
                h = layer(h, extended)
            pooled = torch.tanh(self.pooler(h[:, 0]))
            scores = self.decoder(self.transform_norm(nn.GELU()(self.transform(h))))
            return scores, self.seq_relationship(pooled)

    model = Bert().double()
    state = share_weights(torch, model, state)
    tokens = ids(torch, (2, 6), vocab, 3)
    attention_mask = torch.ones_like(tokens)
    attention_mask[1, 4:] = 0
    tokens[1, 4:] = 0
    token_types = torch.tensor([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 0, 0]])
    labels = torch.full_like(tokens, -100)
    labels[0, 2], labels[1, 1], labels[1, 3] = 5, 7, 2
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    scores, nsp = model(tokens, attention_mask, token_types)
    loss = F.cross_entropy(scores.view(-1, vocab), labels.view(-1)) + \
        F.cross_entropy(nsp.view(-1, 2), torch.tensor([0, 1]))
    loss.backward()
    gradients = grads(model)
    opt.step()
    plain, _ = model(tokens, attention_mask)                       # token types by buffer
    return [scores, nsp, loss, gradients, weights(model), plain, sorted(model.state_dict()),
            model.decoder.weight is model.embeddings.word_embeddings.weight], state


# ----- GPT-2 as Hugging Face writes it: Conv1D, a boolean causal buffer, a key/value cache --

def gpt2(torch, nn, F, state=None):
    n_embd, n_head, n_ctx, vocab = 8, 2, 16, 23

    class Conv1D(nn.Module):
        # a Linear with its weight stored transposed, (in, out)
        def __init__(self, nf, nx):
            super().__init__()
            self.nf = nf
            self.weight = nn.Parameter(torch.empty(nx, nf))
            self.bias = nn.Parameter(torch.zeros(nf))
            nn.init.normal_(self.weight, std=0.02)

        def forward(self, x):
            size_out = x.size()[:-1] + (self.nf,)
            x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
            return x.view(size_out)

    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                           * (x + 0.044715 * torch.pow(x, 3.0))))

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("bias", torch.tril(torch.ones((n_ctx, n_ctx),
                                 dtype=torch.bool)).view(1, 1, n_ctx, n_ctx), persistent=False)
            self.split_size, self.head_dim = n_embd, n_embd // n_head
            self.c_attn, self.c_proj = Conv1D(3 * n_embd, n_embd), Conv1D(n_embd, n_embd)
            self.attn_dropout = nn.Dropout(0.0)

        def _split_heads(self, tensor):
            new_shape = tensor.size()[:-1] + (n_head, self.head_dim)
            return tensor.view(new_shape).permute(0, 2, 1, 3)

        def _merge_heads(self, tensor):
            tensor = tensor.permute(0, 2, 1, 3).contiguous()
            return tensor.view(tensor.size()[:-2] + (n_head * self.head_dim,))

        def _attn(self, query, key, value):
            w = torch.matmul(query, key.transpose(-1, -2))
            w = w / torch.full([], value.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
            q_len, k_len = query.size(-2), key.size(-2)
            causal = self.bias[:, :, k_len - q_len:k_len, :k_len]
            floor = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
            w = torch.where(causal, w.to(w.dtype), floor)
            w = nn.functional.softmax(w, dim=-1).type(value.dtype)
            return torch.matmul(self.attn_dropout(w), value)

        def forward(self, h, layer_past=None, use_cache=False):
            query, key, value = self.c_attn(h).split(self.split_size, dim=2)
            query, key, value = (self._split_heads(t) for t in (query, key, value))
            if layer_past is not None:
                past_key, past_value = layer_past
                key = torch.cat((past_key, key), dim=-2)
                value = torch.cat((past_value, value), dim=-2)
            present = (key, value) if use_cache else None
            return self.c_proj(self._merge_heads(self._attn(query, key, value))), present

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(n_embd, eps=1e-5), Attention()
            self.ln_2 = nn.LayerNorm(n_embd, eps=1e-5)
            self.c_fc, self.c_proj = Conv1D(4 * n_embd, n_embd), Conv1D(n_embd, 4 * n_embd)

        def forward(self, h, layer_past=None, use_cache=False):
            out, present = self.attn(self.ln_1(h), layer_past, use_cache)
            h = out + h
            return h + self.c_proj(gelu_new(self.c_fc(self.ln_2(h)))), present

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(n_ctx, n_embd)
            self.h = nn.ModuleList([Block() for _ in range(2)])
            self.ln_f = nn.LayerNorm(n_embd, eps=1e-5)
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, input_ids, past_key_values=None, labels=None, use_cache=False):
            past_length = 0 if past_key_values is None else past_key_values[0][0].size(-2)
            if past_key_values is None:
                past_key_values = tuple([None] * len(self.h))
            position_ids = torch.arange(past_length, input_ids.size(-1) + past_length,
                                        dtype=torch.long).unsqueeze(0)
            h = self.wte(input_ids) + self.wpe(position_ids)
            presents = () if use_cache else None
            for block, layer_past in zip(self.h, past_key_values):
                h, present = block(h, layer_past, use_cache)
                if use_cache:
                    presents = presents + (present,)
            logits = self.lm_head(self.ln_f(h))
            loss = None
            if labels is not None:
                shift_logits = logits[..., :-1, :].contiguous()
                shift_labels = labels[..., 1:].contiguous()
                loss = nn.CrossEntropyLoss()(shift_logits.view(-1, shift_logits.size(-1)),
                                             shift_labels.view(-1))
            return loss, logits, presents

    model = GPT2().double()
    state = share_weights(torch, model, state)
    tokens = ids(torch, (2, 7), vocab, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95))
    loss, logits, _ = model(tokens, labels=tokens)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    gradients = grads(model)
    opt.step()
    opt.zero_grad(set_to_none=True)
    model.eval()
    with torch.no_grad():
        generated, past, step = tokens[:1, :3], None, tokens[:1, :3]
        for _ in range(5):
            _, step_logits, past = model(step, past_key_values=past, use_cache=True)
            step = torch.argmax(step_logits[:, -1, :], dim=-1).unsqueeze(-1)
            generated = torch.cat((generated, step), dim=1)
        _, full, _ = model(generated)                               # no cache: same logits
    return [loss, logits, gradients, weights(model), generated, full[:, -1],
            step_logits[:, -1], past[1][0].shape], state


# ----- LLaMA-3 / Mistral: complex rotary, grouped heads, SwiGLU, a window, sampling ---------

def llama(torch, nn, F, state=None):
    dim, n_heads, n_kv_heads, vocab, max_seq, window = 16, 4, 2, 29, 16, 3
    head_dim, n_rep = dim // n_heads, n_heads // n_kv_heads

    def precompute_freqs_cis(size, end, theta=500000.0):
        freqs = 1.0 / (theta ** (torch.arange(0, size, 2)[: (size // 2)].float() / size))
        t = torch.arange(end, device=freqs.device, dtype=torch.float32)
        freqs = torch.outer(t, freqs)
        return torch.polar(torch.ones_like(freqs), freqs)          # complex64

    def apply_rotary_emb(xq, xk, freqs_cis):
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        shape = [d if i == 1 or i == xq_.ndim - 1 else 1 for i, d in enumerate(xq_.shape)]
        freqs_cis = freqs_cis.view(*shape)
        xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)

    class RMSNorm(nn.Module):
        def __init__(self, size, eps=1e-5):
            super().__init__()
            self.eps, self.weight = eps, nn.Parameter(torch.ones(size))

        def _norm(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

        def forward(self, x):
            return self._norm(x.float()).type_as(x) * self.weight

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq = nn.Linear(dim, n_heads * head_dim, bias=False)
            self.wk = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
            self.wv = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
            self.wo = nn.Linear(n_heads * head_dim, dim, bias=False)
            self.cache_k = torch.zeros((1, max_seq, n_kv_heads, head_dim))
            self.cache_v = torch.zeros((1, max_seq, n_kv_heads, head_dim))

        def forward(self, x, start_pos, freqs_cis, mask, use_cache):
            bsz, seqlen, _ = x.shape
            xq = self.wq(x).view(bsz, seqlen, n_heads, head_dim)
            xk = self.wk(x).view(bsz, seqlen, n_kv_heads, head_dim)
            xv = self.wv(x).view(bsz, seqlen, n_kv_heads, head_dim)
            xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
            if use_cache:
                self.cache_k = self.cache_k.to(xq)
                self.cache_v = self.cache_v.to(xq)
                self.cache_k[:bsz, start_pos: start_pos + seqlen] = xk
                self.cache_v[:bsz, start_pos: start_pos + seqlen] = xv
                xk = self.cache_k[:bsz, : start_pos + seqlen]
                xv = self.cache_v[:bsz, : start_pos + seqlen]
            keys = torch.repeat_interleave(xk, repeats=n_rep, dim=2).transpose(1, 2)
            values = torch.repeat_interleave(xv, repeats=n_rep, dim=2).transpose(1, 2)
            xq = xq.transpose(1, 2)
            scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(head_dim)
            if mask is not None:
                scores = scores + mask
            scores = F.softmax(scores.float(), dim=-1).type_as(xq)
            output = torch.matmul(scores, values).transpose(1, 2).contiguous()
            return self.wo(output.view(bsz, seqlen, -1))

    class FeedForward(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.w1 = nn.Linear(dim, hidden, bias=False)
            self.w2 = nn.Linear(hidden, dim, bias=False)
            self.w3 = nn.Linear(dim, hidden, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention, self.feed_forward = Attention(), FeedForward(24)
            self.attention_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)

        def forward(self, x, start_pos, freqs_cis, mask, use_cache):
            h = x + self.attention(self.attention_norm(x), start_pos, freqs_cis, mask,
                                   use_cache)
            return h + self.feed_forward(self.ffn_norm(h))

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(vocab, dim)
            self.layers = torch.nn.ModuleList([Block() for _ in range(2)])
            self.norm, self.output = RMSNorm(dim), nn.Linear(dim, vocab, bias=False)
            self.freqs_cis = precompute_freqs_cis(head_dim, max_seq * 2)

        def forward(self, tokens, start_pos=0, use_cache=False, sliding=False):
            _bsz, seqlen = tokens.shape
            h = self.tok_embeddings(tokens)
            freqs_cis = self.freqs_cis[start_pos: start_pos + seqlen]
            mask = None
            if seqlen > 1 and sliding:
                # Mistral: ones kept in a band, whose log is 0 in it and -inf outside
                band = torch.full((seqlen, seqlen), fill_value=1)
                mask = torch.tril(band, diagonal=0).to(h.dtype)
                mask = torch.log(torch.triu(mask, diagonal=-window))
            elif seqlen > 1:
                mask = torch.full((seqlen, seqlen), float("-inf"))
                mask = torch.triu(mask, diagonal=1)
                mask = torch.hstack([torch.zeros((seqlen, start_pos)), mask]).type_as(h)
            for layer in self.layers:
                h = layer(h, start_pos, freqs_cis, mask, use_cache)
            return self.output(self.norm(h)).float()

    def sample_top_p(probs, p):
        probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
        probs_sum = torch.cumsum(probs_sort, dim=-1)
        mask = probs_sum - probs_sort > p
        probs_sort[mask] = 0.0
        probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
        pick = torch.gather(probs_idx, -1, torch.multinomial(probs_sort, num_samples=1))
        # the draw itself is the generator's: what it may draw is compared, not the draw
        kept = torch.zeros_like(probs).scatter(-1, probs_idx, probs_sort)
        return pick, kept

    @torch.inference_mode()
    def generate(model, prompt, steps):
        tokens = torch.full((1, prompt.shape[1] + steps), -1, dtype=torch.long)
        tokens[:, : prompt.shape[1]] = prompt
        prev_pos, kept_sets, picks_ok = 0, [], []
        for cur_pos in range(prompt.shape[1], tokens.shape[1]):
            logits = model(tokens[:, prev_pos:cur_pos], prev_pos, use_cache=True)
            probs = torch.softmax(logits[:, -1] / 0.8, dim=-1)
            pick, kept = sample_top_p(probs, 0.6)
            kept_sets.append(kept)
            picks_ok.append(bool(kept[0, pick[0, 0]] > 0))
            top_vals, top_idx = torch.topk(logits[:, -1], 3)
            next_token = torch.argmax(logits[:, -1], dim=-1)
            assert next_token.item() == top_idx[0, 0].item()
            tokens[:, cur_pos] = next_token
            prev_pos = cur_pos
        return tokens, kept_sets, picks_ok, top_vals, logits.is_inference()

    torch.manual_seed(0)
    model = Transformer()
    state = share_weights(torch, model, state)
    tokens = ids(torch, (2, 6), vocab, 5)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
    loss.backward()
    gradients = grads(model)
    opt.step()
    windowed = model(tokens, sliding=True)
    generated, kept, picks_ok, top_vals, inference = generate(model, tokens[:1, :3], 4)
    with torch.no_grad():
        full = model(generated[:, :-1])
    return [logits, loss, gradients, weights(model), windowed, generated, kept, picks_ok,
            top_vals, inference, full[:, -1]], state


# ----- RWKV: time mixing as a recurrence of exp and maximum, channel mixing -----------------

def rwkv(torch, nn, F, state=None):
    width, vocab, steps = 6, 11, 5

    class TimeMix(nn.Module):
        def __init__(self):
            super().__init__()
            self.time_decay = nn.Parameter(torch.linspace(-1.0, 0.5, width))
            self.time_first = nn.Parameter(torch.linspace(0.3, -0.4, width))
            self.time_mix_k = nn.Parameter(torch.linspace(0.2, 0.8, width)[None, None])
            self.time_mix_v = nn.Parameter(torch.linspace(0.7, 0.1, width)[None, None])
            self.time_mix_r = nn.Parameter(torch.full((1, 1, width), 0.5))
            self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
            self.key, self.value, self.receptance, self.output = (
                nn.Linear(width, width, bias=False) for _ in range(4))

        def forward(self, x):
            _b, t, _c = x.size()
            xx = self.time_shift(x)
            xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
            xv = x * self.time_mix_v + xx * (1 - self.time_mix_v)
            xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
            k, v, r = self.key(xk), self.value(xv), torch.sigmoid(self.receptance(xr))
            w, u = -torch.exp(self.time_decay), self.time_first
            aa = torch.zeros_like(k[:, 0])
            bb = torch.zeros_like(k[:, 0])
            pp = torch.full_like(k[:, 0], -1e38)
            outs = []
            for i in range(t):
                kt, vt = k[:, i], v[:, i]
                ww = u + kt
                p = torch.maximum(pp, ww)
                e1, e2 = torch.exp(pp - p), torch.exp(ww - p)
                outs.append((e1 * aa + e2 * vt) / (e1 * bb + e2))
                ww = pp + w
                p = torch.maximum(ww, kt)
                e1, e2 = torch.exp(ww - p), torch.exp(kt - p)
                aa, bb, pp = e1 * aa + e2 * vt, e1 * bb + e2, p
            return self.output(r * torch.stack(outs, dim=1))

    class ChannelMix(nn.Module):
        def __init__(self):
            super().__init__()
            self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
            self.time_mix_k = nn.Parameter(torch.full((1, 1, width), 0.4))
            self.key, self.value = nn.Linear(width, 4 * width, bias=False), \
                nn.Linear(4 * width, width, bias=False)
            self.receptance = nn.Linear(width, width, bias=False)

        def forward(self, x):
            xx = self.time_shift(x)
            xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
            kv = self.value(torch.square(torch.relu(self.key(xk))))
            return torch.sigmoid(self.receptance(x)) * kv

    class RWKV(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.ln0 = nn.Embedding(vocab, width), nn.LayerNorm(width)
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.att, self.ffn = TimeMix(), ChannelMix()
            self.ln_out, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)

        def forward(self, idx):
            x = self.ln0(self.emb(idx))
            x = x + self.att(self.ln1(x))
            x = x + self.ffn(self.ln2(x))
            return self.head(self.ln_out(x))

    model = RWKV().double()
    state = share_weights(torch, model, state)
    tokens = ids(torch, (2, steps + 1), vocab, 6)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, eps=1e-8)
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.view(-1, vocab), tokens[:, 1:].reshape(-1))
    loss.backward()
    gradients = grads(model)
    opt.step()
    return [logits, loss, gradients, weights(model)], state


PROGRAMS = {f.__name__: f for f in (t5, bert, gpt2, llama, rwkv)}

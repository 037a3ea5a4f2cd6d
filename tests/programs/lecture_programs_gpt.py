"""Transformer programs beside ``lecture_programs.py``: causal averaging written three ways and
one attention head; a character model grown from a lookup-table baseline to a small decoder
with a fused qkv attention, trained with AdamW and sampled; and a GPT-2-style training script
(tied embeddings, an init applied through ``self.apply`` with a flag attribute, AdamW groups,
gradient accumulation, clipping, a hand-set rate, autocast, token shards read through
np.memmap, a checkpoint saved and resumed, candidate endings ranked by masked losses, top-k
sampling).

Every program takes one library's module triple (torch, nn, F) and returns the list of what
it would print; ``test_lecture_programs.py`` runs it under both libraries."""

import inspect
import math
import os
import random
import tempfile
from dataclasses import dataclass

import numpy as np

NOUNS = ("heron", "kettle", "lantern", "ferry", "orchard", "beacon", "quarry", "willow")
ACTIONS = ("mends", "watches", "borrows", "paints", "follows", "carries")
PLACES = ("by the weir", "after supper", "in the fog", "near the mill", "at low tide")


def made_up_text(lines, seed):
    """``lines`` short sentences, one per line; fixed per seed."""
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        who, what = rng.sample(NOUNS, 2)
        sentence = f"the {who} {rng.choice(ACTIONS)} a {what}"
        out.append(sentence + (f" {rng.choice(PLACES)}" if rng.random() < 0.6 else "") + ".")
    return "\n".join(out) + "\n"


# ----- causal averaging, then one head of attention -------------------------------------------

def causal_averaging(torch, nn, F):
    """The mean over each prefix three ways (a loop over positions, a row-normalised
    lower-triangular matmul, a softmax over zeros masked_fill'ed with -inf), a hand-written
    row normalisation checked against F.layer_norm, and one causal attention head with the
    row peaks its softmax reaches at three score scales."""
    torch.manual_seed(8086)
    B, T, C = 2, 5, 3
    x = torch.randn(B, T, C)
    looped = torch.zeros(B, T, C)
    for t in range(T):
        looped[:, t] = x[:, :t + 1].mean(dim=1)
    lower = torch.tril(torch.ones(T, T))
    by_matmul = (lower / lower.sum(1, keepdim=True)) @ x
    weights = torch.zeros(T, T).masked_fill(lower == 0, float("-inf")).softmax(dim=-1)
    by_softmax = weights @ x
    report = [torch.allclose(looped, by_matmul), torch.allclose(looped, by_softmax),
              looped[1, 2].tolist(), (x.cumsum(1) / torch.arange(1, T + 1).view(1, T, 1)
                                      - looped).abs().max().item() < 1e-6]
    report += [str(weights[:3, :3]), repr(torch.randint(0, 7, (2, 3)))]

    def rows_normalised(x, gain, bias, eps=1e-5):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + eps) * gain + bias

    h = torch.randn(6, 10)
    gain, bias = torch.rand(10) + 0.5, torch.randn(10)
    mine = rows_normalised(h, gain, bias)
    report += [(mine - F.layer_norm(h, (10,), gain, bias)).abs().max().item() < 1e-5,
               mine[2].tolist()]

    size = 8
    q_proj, k_proj, v_proj = (nn.Linear(C, size, bias=False) for _ in range(3))
    q, k = q_proj(x), k_proj(x)
    raw = (q @ k.transpose(-2, -1)).masked_fill(lower == 0, float("-inf"))
    attn = F.softmax(raw * size ** -0.5, dim=-1)
    out = attn @ v_proj(x)
    # unscaled scores grow with head_size and push each row towards one-hot
    peaks = [F.softmax(raw * scale, dim=-1).max(-1).values.mean().item()
             for scale in (size ** -0.5, 1.0, 4.0)]
    return report + [attn[1].tolist(), list(out.shape), peaks]


# ----- a character decoder grown from a lookup table ------------------------------------------

def char_decoder(torch, nn, F):
    """A lookup-table baseline (nn.Embedding(V, V) as logits) and a small decoder: residual
    wrappers around a fused-qkv attention with a registered tril mask, masked_fill -inf and
    dropout, and a GELU MLP; batches cut by advanced indexing, AdamW, a @torch.no_grad()
    estimate between eval() and train(), sampling from a cropped context."""
    torch.manual_seed(4004)
    text = made_up_text(90, seed=701)
    chars = sorted(set(text))
    V = len(chars)
    to_id = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([to_id[ch] for ch in text], dtype=torch.long)
    cut = int(0.85 * len(data))
    splits = {"train": data[:cut], "val": data[cut:]}
    ctx, width, heads, depth, drop, batch = 12, 24, 4, 2, 0.1, 6
    offsets = torch.arange(ctx)

    def draw(split):
        source = splits[split]
        starts = torch.randint(0, len(source) - ctx, (batch, 1))
        return source[starts + offsets], source[starts + offsets + 1]

    class CausalMix(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width, bias=False)
            self.merge = nn.Linear(width, width)
            self.drop = nn.Dropout(drop)
            self.register_buffer("keep", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = (part.view(b, t, heads, -1).transpose(1, 2)
                       for part in self.qkv(x).chunk(3, dim=-1))
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
            scores = scores.masked_fill(self.keep[:, :, :t, :t] == 0, float("-inf"))
            mixed = self.drop(scores.softmax(dim=-1)) @ v
            return self.drop(self.merge(mixed.transpose(1, 2).reshape(b, t, width)))

    class NormedResidual(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.norm, self.inner = nn.LayerNorm(width), inner

        def forward(self, x):
            return x + self.inner(self.norm(x))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.places = nn.Embedding(V, width), nn.Embedding(ctx, width)
            layers = []
            for _ in range(depth):
                layers += [NormedResidual(CausalMix()),
                           NormedResidual(nn.Sequential(nn.Linear(width, 3 * width), nn.GELU(),
                                                 nn.Linear(3 * width, width), nn.Dropout(drop)))]
            self.body = nn.Sequential(*layers, nn.LayerNorm(width))
            self.head = nn.Linear(width, V)

        def forward(self, ids):
            x = self.tokens(ids) + self.places(torch.arange(ids.shape[1]))
            return self.head(self.body(x))

    def loss_of(model, x, y):
        logits = model(x)
        return F.cross_entropy(logits.view(-1, V), y.view(-1))

    @torch.no_grad()
    def estimate(model, rounds=2):
        model.eval()
        means = [torch.stack([loss_of(model, *draw(s)) for _ in range(rounds)]).mean().item()
                 for s in ("train", "val")]
        model.train()
        return means

    def sample(model, count):
        ids = torch.zeros((1, 1), dtype=torch.long)
        for _ in range(count):
            probs = F.softmax(model(ids[:, -ctx:])[:, -1, :], dim=-1)
            ids = torch.cat((ids, torch.multinomial(probs, num_samples=1)), dim=1)
        return "".join(chars[i] for i in ids[0].tolist())

    x, y = draw("train")
    report = [V, len(data), str(data[:24]), x.tolist(), torch.equal(x[:, 1:], y[:, :-1])]
    for model, steps, lr in ((nn.Embedding(V, V), 10, 2e-2), (Decoder(), 6, 4e-3)):
        report.append(sum(p.numel() for p in model.parameters()))
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        for step in range(steps):
            if step % 4 == 0:
                report += estimate(model)
            loss = loss_of(model, *draw("train"))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        report += [loss.item(), model.training, sample(model, ctx + 5)]
    model.eval()
    with torch.no_grad():                   # the first attention alone, on its own input
        probe = model.body[0].inner(torch.randn(2, ctx, width))
    return report + [probe.abs().mean().item(), probe[1, -1, :4].tolist()]


# ----- a GPT-2-style training script ----------------------------------------------------------

@dataclass
class Sizes:
    context: int = 16
    vocab: int = 96
    depth: int = 2
    heads: int = 2
    width: int = 24


def decoder_class(torch, nn, F):
    """A decoder whose layers are ModuleDicts run by one forward: scaled_dot_product_attention
    (is_causal=True) over a fused qkv, a tanh-GELU MLP, the unembedding tied to the token
    table, weights initialised through self.apply with a flag on the residual projections."""

    def initialise(module, depth):
        if isinstance(module, nn.Linear):
            std = 0.025 / math.sqrt(2 * depth) if getattr(module, "residual", False) else 0.025
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.025)

    class TinyDecoder(nn.Module):
        def __init__(self, sizes):
            super().__init__()
            self.sizes, w = sizes, sizes.width
            self.embed, self.where = nn.Embedding(sizes.vocab, w), nn.Embedding(sizes.context, w)
            self.layers = nn.ModuleList()
            for _ in range(sizes.depth):
                layer = nn.ModuleDict({"n1": nn.LayerNorm(w), "qkv": nn.Linear(w, 3 * w),
                                       "out": nn.Linear(w, w), "n2": nn.LayerNorm(w),
                                       "up": nn.Linear(w, 4 * w),
                                       "act": nn.GELU(approximate="tanh"),
                                       "down": nn.Linear(4 * w, w)})
                layer["out"].residual = layer["down"].residual = True
                self.layers.append(layer)
            self.final = nn.LayerNorm(w)
            self.unembed = nn.Linear(w, sizes.vocab, bias=False)
            self.unembed.weight = self.embed.weight
            self.apply(lambda m: initialise(m, sizes.depth))

        def attend(self, layer, x):
            b, t, w = x.size()
            q, k, v = layer["qkv"](layer["n1"](x)).split(w, dim=2)
            q, k, v = (z.view(b, t, self.sizes.heads, -1).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return layer["out"](y.transpose(1, 2).contiguous().view(b, t, w))

        def forward(self, ids):
            x = self.embed(ids) + self.where(torch.arange(ids.size(1), dtype=torch.long))
            for layer in self.layers:
                x = x + self.attend(layer, x)
                x = x + layer["down"](layer["act"](layer["up"](layer["n2"](x))))
            return self.unembed(self.final(x))

    return TinyDecoder


def adamw_for(torch, model, lr, decay, device):
    """Matrices decay, vectors do not; fused only where the signature has it and on a GPU."""
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    matrices = [p for _, p in named if p.dim() >= 2]
    vectors = [p for _, p in named if p.dim() < 2]
    has_fused = "fused" in inspect.signature(torch.optim.AdamW).parameters
    extra = {"fused": True} if has_fused and device == "cuda" else {}
    opt = torch.optim.AdamW([{"params": matrices, "weight_decay": decay},
                             {"params": vectors, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.97), eps=1e-8, **extra)
    return opt, [len(matrices), len(vectors), sum(p.numel() for p in matrices), has_fused]


def gpt2_style_script(torch, nn, F, autocast=True):
    """The script: seeds and matmul precision, uint16 token shards written to disk and read
    back through np.memmap at tensor offsets, gradient accumulation (loss / micro,
    loss_accum += loss.detach()), clip_grad_norm_, a warmup-then-cosine rate written into
    every param_group, periodic validation, a checkpoint of model and optimizer state saved
    and resumed for one step, candidate endings ranked by masked reduction='none' losses, and
    top-k sampling with gather from a private generator. With ``autocast`` the training
    forward runs under torch.autocast(device_type="cpu", dtype=torch.bfloat16)."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(9001)
    torch.set_float32_matmul_precision("high")
    sizes = Sizes()
    text = made_up_text(50, seed=702).replace("\n", " ")
    tokens = [ord(ch) - 32 for ch in text]                  # printable ASCII: ids 0..95
    B, T, micro, steps, warmup, peak, floor = 3, sizes.context, 2, 5, 2, 4e-3, 4e-4

    def rate(step):
        ramp = min(1.0, (step + 1) / warmup)
        progress = max(0.0, step + 1 - warmup) / (steps - warmup)
        return floor + (peak - floor) * ramp * 0.5 * (1 + math.cos(math.pi * progress))

    def nll(net, pair):
        ids, targets = pair
        return F.cross_entropy(net(ids).flatten(0, 1), targets.flatten())

    TinyDecoder = decoder_class(torch, nn, F)
    model = TinyDecoder(sizes).to(device)
    opt, groups = adamw_for(torch, model, peak, 0.1, device)
    report = [model.unembed.weight is model.embed.weight, sum(p.numel() for p in
                                                              model.parameters()),
              model.layers[0]["down"].weight.std().item(),
              model.layers[0]["up"].weight.std().item()] + groups
    with tempfile.TemporaryDirectory() as tmp:
        cut = int(0.8 * len(tokens))
        for name, part in (("shard_a.bin", tokens[:cut]), ("shard_b.bin", tokens[cut:])):
            np.array(part, dtype=np.uint16).tofile(os.path.join(tmp, name))
        shards = [np.memmap(os.path.join(tmp, name), dtype=np.uint16, mode="r")
                  for name in ("shard_a.bin", "shard_b.bin")]

        def batch_at(shard, starts):
            rows = [torch.from_numpy(shard[s:s + T + 1].astype(np.int64)) for s in starts]
            block = torch.stack(rows).to(device)
            return block[:, :-1], block[:, 1:]

        held_out = batch_at(shards[1], torch.arange(0, 2 * T, T))
        for step in range(steps):
            if step % 2 == 0:
                model.eval()
                with torch.no_grad():
                    report.append(nll(model, held_out).item())
                model.train()
            for group in opt.param_groups:
                group["lr"] = rate(step)
            opt.zero_grad()
            loss_accum = 0.0
            for _ in range(micro):
                pair = batch_at(shards[0], torch.randint(len(shards[0]) - T - 1, (B,)))
                with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=autocast):
                    loss = nll(model, pair) / micro
                loss_accum += loss.detach()
                loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            report += [loss_accum.item(), norm.item(), opt.param_groups[1]["lr"]]
        report.append(f"trained {steps} steps")
        path = os.path.join(tmp, "state.pt")
        torch.save({"weights": model.state_dict(), "adamw": opt.state_dict(), "step": step},
                   path)
        saved = torch.load(path)
        extra = batch_at(shards[0], torch.randint(len(shards[0]) - T - 1, (B,)))
        del shards

    twin = TinyDecoder(sizes).to(device)
    twin.load_state_dict(saved["weights"])
    twin_opt, _ = adamw_for(torch, twin, peak, 0.1, device)
    twin_opt.load_state_dict(saved["adamw"])
    for net, o in ((model, opt), (twin, twin_opt)):
        o.zero_grad(set_to_none=True)
        loss = nll(net, extra)
        loss.backward()
        o.step()
        report.append(loss.item())
    report += [all(torch.equal(a, b) for a, b in zip(model.parameters(), twin.parameters())),
               saved["step"], len(saved["weights"]), sorted(saved["weights"])[-2:]]

    # rank candidate endings of one prompt: the mean loss over each ending's own tokens
    prompt = [ord(ch) - 32 for ch in "the heron "]
    endings = [[ord(ch) - 32 for ch in e] for e in ("mends", "paints", "is", "hums a")]
    longest = len(prompt) + max(map(len, endings))
    ids = torch.zeros((len(endings), longest), dtype=torch.long)
    scored = torch.zeros((len(endings), longest - 1))
    for row, ending in enumerate(endings):
        ids[row, :len(prompt) + len(ending)] = torch.tensor(prompt + ending)
        scored[row, len(prompt) - 1:len(prompt) + len(ending) - 1] = 1.0
    model.eval()
    with torch.no_grad():
        logits = model(ids)
    per_token = F.cross_entropy(logits[:, :-1].reshape(-1, sizes.vocab), ids[:, 1:].reshape(-1),
                                reduction="none").view(len(endings), -1)
    mean_loss = (per_token * scored).sum(1) / scored.sum(1)
    report += [mean_loss.tolist(), mean_loss.argmin().item()]

    ids = torch.tensor([prompt[:4]] * 2).to(device)
    picker = torch.Generator(device=device).manual_seed(60221)
    with torch.no_grad():
        while ids.size(1) < 12:
            probs = F.softmax(model(ids)[:, -1, :], dim=-1)
            top_p, top_i = torch.topk(probs, 20, dim=-1)
            choice = torch.multinomial(top_p, 1, generator=picker)
            ids = torch.cat((ids, torch.gather(top_i, -1, choice)), dim=1)
    return report + [ids[:, 4:].tolist(), top_p.sum(-1).tolist()]

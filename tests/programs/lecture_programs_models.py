"""Layer-stack programs beside ``lecture_programs.py``: one generic hand-written layer type
driving a deep stack (with the activation, gradient and update statistics people plot) and a
model that merges neighbouring positions level by level; the same kind of model from torch.nn
layers; and a word generator written as a script (a Dataset, an endless loader, a recurrent
cell, top-k sampling).

Every program takes one library's module triple (torch, nn, F) and returns the list of what
it would print; ``test_lecture_programs.py`` runs it under both libraries."""

import itertools
import math
import random

from lecture_programs import coined_words, sampled_ids, spell, vocabulary, windows

# ----- one generic hand-written layer, and stacks of it ---------------------------------------


def layer_kit(torch):
    """``Layer(kind, ...)`` over the library's tensors. Kinds: "lookup" (a table indexed by
    ids), "affine" (x @ w [+ b]), "norm" (batch statistics over every axis but the last, with
    running estimates), "tanh" and "merge" (k neighbouring positions side by side). A Stack
    calls its layers in turn; each layer keeps its last output in ``.result``."""

    class Layer:
        def __init__(self, kind, size=None, out=None, bias=False, k=2, momentum=0.05):
            self.kind, self.k, self.momentum, self.training = kind, k, momentum, True
            self.weights = {}
            if kind == "lookup":
                self.weights["table"] = torch.randn((size, out))
            elif kind == "affine":
                self.weights["w"] = torch.randn((size, out)) * size ** -0.5
                if bias:
                    self.weights["b"] = torch.zeros(out)
            elif kind == "norm":
                self.weights = {"scale": torch.ones(size), "offset": torch.zeros(size)}
                self.mean, self.var = torch.zeros(size), torch.ones(size)

        def __call__(self, x):
            w = self.weights
            if self.kind == "lookup":
                y = w["table"][x]
            elif self.kind == "affine":
                y = x @ w["w"] + w["b"] if "b" in w else x @ w["w"]
            elif self.kind == "tanh":
                y = torch.tanh(x)
            elif self.kind == "merge":
                y = x.reshape(x.shape[0], x.shape[1] // self.k, x.shape[2] * self.k)
            else:
                y = self.normalise(x)
            self.result = y
            return y

        def normalise(self, x):
            if not self.training:
                return (x - self.mean) / torch.sqrt(self.var + 1e-5) * self.weights["scale"] \
                    + self.weights["offset"]
            axes = tuple(range(x.dim() - 1))
            mean, var = x.mean(axes), x.var(axes, unbiased=True)
            with torch.no_grad():
                self.mean = self.mean + self.momentum * (mean - self.mean)
                self.var = self.var + self.momentum * (var - self.var)
            return (x - mean) / torch.sqrt(var + 1e-5) * self.weights["scale"] \
                + self.weights["offset"]

    class Stack:
        def __init__(self, *layers):
            self.layers = list(layers)

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

        def params(self):
            return [p for layer in self.layers for p in layer.weights.values()]

        def set_training(self, flag):
            for layer in self.layers:
                layer.training = flag

    return Layer, Stack


def deep_stack_statistics(torch, nn, F):
    """Why 1/sqrt(fan_in) and tanh's gain (kaiming_normal_, calculate_gain, four tanh layers
    at three scales, a histogram), then
    a deep stack of affine/norm/tanh layers with the hidden weights scaled by 5/3 and the
    last one shrunk under no_grad; every layer's output retains its grad, and per tanh the
    mean, std, saturation and grad std are printed, with histc, histogram and the
    update-to-data ratios (log10 of std(lr * grad) / std(data))."""
    torch.manual_seed(777)
    w = torch.empty(64, 16)
    torch.nn.init.kaiming_normal_(w, mode="fan_in", nonlinearity="tanh")
    x, gain = torch.randn(400, 64), torch.nn.init.calculate_gain("tanh")
    report = [w.std().item(), gain]
    for scale in (1.0, 64 ** -0.5, gain * 64 ** -0.5):      # raw, fan-in, fan-in and gain
        h = x
        for _ in range(4):
            h = torch.tanh(h @ (torch.randn(64, 64) * scale))
        report += [h.std().item(), (h.abs() > 0.97).float().mean().item()]
    density, edges = torch.histogram((x[:, :16] @ w.T).flatten(), bins=10, density=True)
    report += [density.tolist(), [edges[0].item(), edges[-1].item()]]

    Layer, Stack = layer_kit(torch)
    words = coined_words(280, seed=611)
    letters, code = vocabulary(words)
    V, width, dim, hidden = len(letters), 3, 5, 36
    X, Y = windows(torch, words, code, width)
    stack = Stack(Layer("lookup", V, dim), Layer("merge", k=width),
                  Layer("affine", width * dim, hidden), Layer("norm", hidden), Layer("tanh"),
                  Layer("affine", hidden, hidden), Layer("norm", hidden), Layer("tanh"),
                  Layer("affine", hidden, hidden), Layer("norm", hidden), Layer("tanh"),
                  Layer("affine", hidden, V, bias=True))
    with torch.no_grad():
        for layer in stack.layers[2:-1]:
            if layer.kind == "affine":
                layer.weights["w"] *= 5 / 3
        stack.layers[-1].weights["w"] *= 0.1
    params = stack.params()
    for p in params:
        p.requires_grad = True
    report.append(sum(p.nelement() for p in params))
    lr, ratios = 0.08, []
    for _ in range(6):
        batch = torch.randint(0, len(X), (30,))
        logits = stack(X[batch]).squeeze(1)
        for layer in stack.layers[2:]:
            layer.result.retain_grad()
        loss = F.cross_entropy(logits, Y[batch])
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
            ratios.append([((lr * p.grad).std() / p.std()).log10().item() for p in params])
        report.append(loss.item())
    for layer in stack.layers:
        if layer.kind == "tanh":
            out = layer.result
            report += [out.mean().item(), out.std().item(),
                       (out.abs() > 0.97).float().mean().item(), out.grad.std().item()]
    out = stack.layers[4].result
    report.append(torch.histc(out, bins=6, min=-1, max=1).tolist())
    density, edges = torch.histogram(out.detach(), bins=5, density=True)
    report += [density.tolist(), edges.tolist()]
    report += [(p.grad.std() / p.std()).item() for p in params if p.ndim == 2]
    return report + [ratios[-1]]


def pairwise_merge_model(torch, nn, F):
    """Ids of eight positions, looked up, then merged in pairs three times, each merge an
    affine layer, a norm over (batch, position) of a 3-D tensor and a tanh; trained with a
    stepped rate, evaluated with training off (running estimates), sampled."""
    torch.manual_seed(271)
    Layer, Stack = layer_kit(torch)
    e = torch.randn(3, 6, 4)
    threes = torch.stack([e[:, i::3] for i in range(3)], dim=2).flatten(2)
    report = [torch.equal(Layer("merge", k=3)(e), threes), list(threes.shape)]
    words = coined_words(340, seed=612)
    random.Random(19).shuffle(words)
    letters, code = vocabulary(words)
    V, width, dim, hidden = len(letters), 8, 5, 28
    cut = int(0.9 * len(words))
    Xa, Ya = windows(torch, words[:cut], code, width)
    Xb, Yb = windows(torch, words[cut:], code, width)
    levels = []
    for fan_in in (2 * dim, 2 * hidden, 2 * hidden):
        levels += [Layer("merge"), Layer("affine", fan_in, hidden), Layer("norm", hidden),
                   Layer("tanh")]
    stack = Stack(Layer("lookup", V, dim), *levels, Layer("affine", hidden, V, bias=True))
    with torch.no_grad():
        stack.layers[-1].weights["w"] *= 0.2
    params = stack.params()
    for p in params:
        p.requires_grad = True
    report.append(sum(p.nelement() for p in params))
    curve = []
    for step in range(24):
        batch = torch.randint(0, len(Xa), (20,))
        logits = stack(Xa[batch])                          # (20, 1, V)
        loss = F.cross_entropy(logits.view(-1, V), Ya[batch])
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data += -(0.15 if step < 16 else 0.03) * p.grad
        curve.append(loss.log10().item())
    report += [curve[::6], torch.tensor(curve).view(4, 6).mean(1).tolist()]
    report += [[layer.kind, list(layer.result.shape)] for layer in stack.layers]
    stack.set_training(False)
    with torch.no_grad():
        report += [F.cross_entropy(stack(X).view(-1, V), Y).item()
                   for X, Y in ((Xa, Ya), (Xb, Yb))]
    report.append(stack.layers[3].var.mean().item())
    for _ in range(3):
        report.append(spell(letters, sampled_ids(
            torch, code["$"], width,
            lambda ctx: F.softmax(stack(torch.tensor([ctx]))[:, -1], dim=-1),
            lambda probs: torch.multinomial(probs, 1))))
    return report


def nn_sequential_model(torch, nn, F):
    """The same kind of model from torch.nn's layers (Embedding, Flatten, a Linear without
    bias, BatchNorm1d with a small momentum, Tanh) in a Sequential, the head shrunk through
    .data, SGD with momentum, then eval() on the running statistics it kept."""
    torch.manual_seed(5150)
    words = coined_words(260, seed=613)
    letters, code = vocabulary(words)
    V, width, dim, hidden = len(letters), 5, 4, 26
    X, Y = windows(torch, words, code, width)
    model = nn.Sequential(nn.Embedding(V, dim), nn.Flatten(),
                          nn.Linear(width * dim, hidden, bias=False),
                          nn.BatchNorm1d(hidden, momentum=0.02), nn.Tanh(), nn.Linear(hidden, V))
    model[-1].weight.data *= 0.2
    opt = torch.optim.SGD(model.parameters(), lr=0.08, momentum=0.8)
    report = [sum(p.nelement() for p in model.parameters()), [type(m).__name__ for m in model]]
    for step in range(9):
        batch = torch.randint(0, len(X), (24,))
        loss = F.cross_entropy(model(X[batch]), Y[batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 3 == 1:
            report.append(loss.item())
    norm = model[3]
    report += [norm.running_mean[-3:].tolist(), norm.running_var[-3:].tolist(),
               norm.num_batches_tracked.item(), norm.running_var.requires_grad]
    model.eval()
    with torch.no_grad():
        report += [F.cross_entropy(model(X), Y).item(), model[3].training]
    return report


# ----- a word generator written as a script ---------------------------------------------------

def word_generator_script(torch, nn, F):
    """A Dataset whose items are (input, target) rows with target -1 past the word's end
    (cross_entropy's ignore_index), a generator yielding batches forever from a DataLoader
    over RandomSampler(replacement=True), a recurrent cell over cat((x_t, state)) from a
    learned first state, a GELU written with tanh, AdamW, an inference_mode evaluation, and
    sampling with top-k masking (topk(...).values[:, [-1]]) or greedy argmax."""
    torch.manual_seed(1871)
    words = coined_words(240, seed=614)
    letters = sorted(set("".join(words)))
    longest = max(map(len, words))
    ids_of = {ch: i + 1 for i, ch in enumerate(letters)}       # 0 opens and closes a word

    class Words(torch.utils.data.Dataset):
        def __init__(self, items):
            self.items = items

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            ids = [ids_of[ch] for ch in self.items[i]]
            pad = longest - len(ids)
            return (torch.tensor([0] + ids + [0] * pad),
                    torch.tensor(ids + [0] + [-1] * pad))

    def forever(dataset, batch_size):
        sampler = torch.utils.data.RandomSampler(dataset, replacement=True, num_samples=10 ** 9)
        while True:
            yield from torch.utils.data.DataLoader(dataset, batch_size=batch_size,
                                                   sampler=sampler)

    def tanh_gelu(x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    class Recurrent(nn.Module):
        def __init__(self, vocab, emb=10, state=20, mid=28):
            super().__init__()
            self.table = nn.Embedding(vocab, emb)
            self.first = nn.Parameter(torch.zeros(state))
            self.step = nn.Linear(emb + state, state)
            self.up, self.down = nn.Linear(state, mid), nn.Linear(mid, vocab)

        def forward(self, ids):
            state = self.first.expand(ids.size(0), -1)
            states = []
            for x_t in self.table(ids).unbind(1):
                state = torch.tanh(self.step(torch.cat((x_t, state), dim=-1)))
                states.append(state)
            return self.down(tanh_gelu(self.up(torch.stack(states, dim=1))))

    def loss_of(model, src, tgt):
        logits = model(src)
        return F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), ignore_index=-1)

    @torch.no_grad()
    def extend(model, ids, count, top_k=None, greedy=False):
        for _ in range(count):
            last = model(ids)[:, -1, :]
            if top_k is not None:
                kth = torch.topk(last, top_k).values[:, [-1]]
                last = last.masked_fill(last < kth, -float("inf"))
            if greedy:
                nxt = last.argmax(dim=-1, keepdim=True)
            else:
                nxt = torch.multinomial(F.softmax(last, dim=-1), num_samples=1)
            ids = torch.cat((ids, nxt), dim=1)
        return ids

    train, held = Words(words[:210]), Words(words[210:])
    model = Recurrent(len(letters) + 1)
    probe = torch.linspace(-3, 3, 13)
    report = [f"{sum(p.numel() for p in model.parameters()) / 1e3:.2f}k parameters",
              len(train), train[1][1].tolist(),
              (tanh_gelu(probe) - F.gelu(probe, approximate="tanh")).abs().max().item() < 1e-6]
    opt = torch.optim.AdamW(model.parameters(), lr=4e-3, betas=(0.9, 0.98),
                            weight_decay=0.05)
    for step, (src, tgt) in enumerate(itertools.islice(forever(train, 6), 8)):
        loss = loss_of(model, src, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 3 == 0:
            report += [src[:, 1].tolist(), loss.item()]

    @torch.inference_mode()
    def mean_loss(dataset, batches=2):
        model.eval()
        loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True)
        values = [loss_of(model, src, tgt).item() for src, tgt in itertools.islice(loader,
                                                                                   batches)]
        model.train()
        return sum(values) / len(values)

    report += [mean_loss(train), mean_loss(held)]
    start = torch.zeros(3, 1, dtype=torch.long)
    for kwargs in ({}, {"top_k": 4}, {"greedy": True}):
        for row in extend(model, start, longest, **kwargs)[:, 1:].tolist():
            row = row[:row.index(0)] if 0 in row else row
            report.append(spell(["$"] + letters, row))
    return report

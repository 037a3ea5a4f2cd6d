"""Small from-scratch programs of the kind people write while learning PyTorch: a scalar
reverse-mode engine checked against torch's autograd, character models of coined words from a
count table to an MLP, batch statistics kept by hand, and a backward pass derived by hand for
every intermediate of a forward. Layer-stack models live in ``lecture_programs_models.py``,
transformer programs in ``lecture_programs_gpt.py``.

Every program takes one library's module triple (torch, nn, F), seeds its generators, runs a
few steps and returns the list of what it would print; ``test_lecture_programs.py`` runs it
under PyTorch and under microgradnorm and compares the two lists."""

import math
import random

SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "sha", "pe", "dra", "ul", "en",
             "os", "yb", "fi", "gor", "wex", "qa", "ith")


def coined_words(count, seed):
    """``count`` invented words glued from syllables, sometimes clipped; fixed per seed."""
    rng = random.Random(seed)
    words = []
    while len(words) < count:
        pieces = [rng.choice(SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 4)))]
        word = "".join(pieces)
        if len(word) > 3 and rng.random() < 0.3:
            word = word[:-1]
        words.append(word)
    return words


def vocabulary(words):
    """The letters in order with the boundary mark '$' last; the mark's id is len - 1."""
    letters = sorted(set("".join(words))) + ["$"]
    return letters, {ch: i for i, ch in enumerate(letters)}


def windows(torch, words, code, width):
    """(width preceding ids, next id) for every position of every word, padded with '$'."""
    stop = code["$"]
    rows, nexts = [], []
    for word in words:
        ids = [stop] * width + [code[ch] for ch in word] + [stop]
        for end in range(width, len(ids)):
            rows.append(ids[end - width:end])
            nexts.append(ids[end])
    return torch.tensor(rows), torch.tensor(nexts)


def spell(letters, ids):
    return "".join(letters[i] for i in ids)


# ----- a scalar reverse-mode engine ------------------------------------------------------------

class Node:
    """A float in a computation graph: its value, the nodes it was made from and the partial
    derivative of the value with respect to each of them; ``adjoint`` collects d(out)/d(self)."""

    __slots__ = ("value", "parents", "partials", "adjoint")

    def __init__(self, value, parents=(), partials=()):
        self.value, self.parents, self.partials = float(value), parents, partials
        self.adjoint = 0.0

    def __add__(self, other):
        other = lift(other)
        return Node(self.value + other.value, (self, other), (1.0, 1.0))

    def __mul__(self, other):
        other = lift(other)
        return Node(self.value * other.value, (self, other), (other.value, self.value))

    def __truediv__(self, other):
        other = lift(other)
        q = self.value / other.value
        return Node(q, (self, other), (1.0 / other.value, -q / other.value))

    def __pow__(self, k):
        return Node(self.value ** k, (self,), (k * self.value ** (k - 1),))

    def __neg__(self):
        return Node(-self.value, (self,), (-1.0,))

    def __sub__(self, other):
        return self + -lift(other)

    def __rsub__(self, other):
        return lift(other) + -self

    def __rtruediv__(self, other):
        return lift(other) / self

    __radd__ = __add__
    __rmul__ = __mul__


def lift(x):
    return x if isinstance(x, Node) else Node(x)


def elementwise(f, df):
    return lambda node: Node(f(node.value), (node,), (df(node.value),))


def _sigmoid(v):
    return 1.0 / (1.0 + math.exp(-v))


node_sin = elementwise(math.sin, math.cos)
node_log = elementwise(math.log, lambda v: 1.0 / v)
node_exp = elementwise(math.exp, math.exp)
node_sigmoid = elementwise(_sigmoid, lambda v: _sigmoid(v) * (1.0 - _sigmoid(v)))


def backpropagate(root):
    """Reverse mode without recursion: count each node's consumers, then release a node to
    pass its adjoint on only once every consumer has added into it (Kahn's order)."""
    waiting, stack, seen = {}, [root], {id(root)}
    while stack:
        for parent in stack.pop().parents:
            waiting[id(parent)] = waiting.get(id(parent), 0) + 1
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    root.adjoint = 1.0
    ready = [root]
    while ready:
        node = ready.pop()
        for parent, partial in zip(node.parents, node.partials):
            parent.adjoint += partial * node.adjoint
            waiting[id(parent)] -= 1
            if waiting[id(parent)] == 0:
                ready.append(parent)


def ripple(u, v, w, sin, log, exp, sigmoid):
    """The test expression: a product, a quotient, a reused input and four functions."""
    gate = sigmoid(u * v - w)
    bump = log(1 + u ** 2) * gate
    wave = sin(v * 3) / (w + 2)
    return bump + wave - exp(-0.5 * w * w) + (u - v) * (u - v) * 0.25


def scalar_reverse_mode(torch, nn, F):
    """``ripple`` on Nodes and on float64 tensors (torch.Tensor([...]).double() with
    requires_grad set afterwards), then a 2-5-1 sigmoid classifier of six points trained on
    Nodes, step by step beside the same net in torch with binary_cross_entropy."""
    start = (0.7, -1.3, 0.4)
    nodes = [Node(v) for v in start]
    out = ripple(*nodes, node_sin, node_log, node_exp, node_sigmoid)
    backpropagate(out)
    tensors = []
    for v in start:
        t = torch.Tensor([v]).double()
        t.requires_grad = True
        tensors.append(t)
    tout = ripple(*tensors, torch.sin, torch.log, torch.exp, torch.sigmoid)
    tout.backward()
    # torch.Tensor([v]) holds v rounded to float32, so the two agree to that rounding
    report = [tout.item(), [t.grad.item() for t in tensors], tout.dtype == torch.float64,
              abs(out.value - tout.item()) < 1e-6,
              max(abs(n.adjoint - t.grad.item()) for n, t in zip(nodes, tensors)) < 1e-6]

    gen = torch.Generator().manual_seed(90210)
    points = [(math.cos(1.1 * k), math.sin(0.7 * k) + 0.1 * k) for k in range(6)]
    labels = [0.0, 1.0, 1.0, 0.0, 1.0, 0.0]
    shapes = [(2, 5), (5,), (5, 1), (1,)]
    weights = [torch.randn(s, generator=gen, dtype=torch.float64) * 0.8 for s in shapes]
    flat = [[Node(v) for v in w.flatten().tolist()] for w in weights]
    w1, b1, w2, b2 = flat

    def node_forward(x):
        hidden = [node_sigmoid(x[0] * w1[j] + x[1] * w1[5 + j] + b1[j]) for j in range(5)]
        return node_sigmoid(sum((h * w2[j] for j, h in enumerate(hidden)), b2[0]))

    xs = torch.tensor(points, dtype=torch.float64)
    ys = torch.tensor(labels, dtype=torch.float64).unsqueeze(1)
    params = [w.clone().requires_grad_() for w in weights]
    everything = [n for group in flat for n in group]
    for _ in range(5):
        total = Node(0.0)
        for x, y in zip(points, labels):
            p = node_forward(x)
            total = total - (y * node_log(p) + (1 - y) * node_log(1 - p))
        loss = total / len(points)
        for n in everything:
            n.adjoint = 0.0
        backpropagate(loss)
        for n in everything:
            n.value -= 1.5 * n.adjoint
        probs = torch.sigmoid(torch.sigmoid(xs @ params[0] + params[1]) @ params[2] + params[3])
        tloss = F.binary_cross_entropy(probs, ys)
        tloss.backward()
        with torch.no_grad():
            for p in params:
                p -= 1.5 * p.grad
                p.grad = None
        report += [tloss.item(), abs(loss.value - tloss.item()) < 1e-12]
    return report + [len(everything), params[2].flatten().tolist()]


# ----- letter-pair statistics, then the same model as a one-hot linear layer -------------------

def pair_count_table(torch, nn, F):
    """An int32 table of letter pairs filled by ``T[a, b] += 1``, smoothed, normalised in
    place with keepdims, the broadcasting slip of dividing by a (V,) sum, words drawn by
    torch.multinomial from a seeded generator, and the mean negative log likelihood."""
    words = coined_words(250, seed=501)
    letters, code = vocabulary(words)
    V, stop = len(letters), code["$"]
    pairs = torch.zeros((V, V), dtype=torch.int32)
    for word in words:
        ids = [stop] + [code[ch] for ch in word] + [stop]
        for a, b in zip(ids[:-1], ids[1:]):
            pairs[a, b] += 1
    report = [V, pairs.sum().item(), pairs[stop].argmax().item(), str(pairs.dtype).split(".")[-1]]

    gen = torch.Generator().manual_seed(60606)
    weights = torch.tensor([3.0, 1.0, 0.5, 2.5])
    report.append(torch.multinomial(weights, 12, replacement=True, generator=gen).tolist())
    table = (pairs + 0.5).float()
    slipped = table / table.sum(1)           # divides column j by row j's total
    table /= table.sum(1, keepdims=True)
    report += [list(table.sum(1, keepdims=True).shape), table.sum(1)[:4].tolist(),
               slipped.sum(1)[:4].tolist(), torch.allclose(table, slipped)]
    for _ in range(6):
        ids = [stop]
        while len(ids) < 14:
            ids.append(torch.multinomial(table[ids[-1]], 1, replacement=True,
                                         generator=gen).item())
            if ids[-1] == stop:
                break
        report.append(spell(letters, [i for i in ids[1:] if i != stop]))

    firsts, seconds = [], []
    for word in words:
        ids = [stop] + [code[ch] for ch in word] + [stop]
        firsts += ids[:-1]
        seconds += ids[1:]
    logs = torch.log(table[torch.tensor(firsts), torch.tensor(seconds)])
    raw = pairs.float() / pairs.float().sum(1, keepdims=True)
    seen_logs = raw[firsts[0], seconds[0]].log()
    return report + [-logs.mean().item(), logs.sum().item(), len(firsts), seen_logs.item()]


def one_hot_pair_model(torch, nn, F):
    """The pair model as a linear layer: one-hot rows (F.one_hot(...).float()) times W plus
    b, the targets' odds picked by arange before normalising, an L2 penalty, updates written
    into .data, grads reset to None, a halving rate; then checked against cross_entropy, and
    words drawn one one-hot row at a time."""
    words = coined_words(180, seed=502)
    letters, code = vocabulary(words)
    V, stop = len(letters), code["$"]
    ids = [[stop] + [code[ch] for ch in w] + [stop] for w in words]
    src = torch.tensor([a for seq in ids for a in seq[:-1]])
    dst = torch.tensor([b for seq in ids for b in seq[1:]])
    gen = torch.Generator().manual_seed(20202)
    W = torch.randn((V, V), generator=gen, requires_grad=True)
    b = torch.zeros(V, requires_grad=True)
    rows = F.one_hot(src, num_classes=V).float()
    report = [src.numel(), rows.dtype == torch.float32, list(rows.shape),
              (rows @ W - W[src]).abs().max().item()]
    lr = 40.0
    for step in range(10):
        odds = torch.exp(rows @ W + b)
        wanted = odds[torch.arange(len(dst)), dst] / odds.sum(1)
        loss = 2e-4 * W.pow(2).sum() - torch.log(wanted).mean()
        W.grad = None
        b.grad = None
        loss.backward()
        W.data += -lr * W.grad
        b.data += -lr * b.grad
        if step % 3 == 2:
            report.append(loss.item())
            lr /= 2
    with torch.no_grad():
        report.append(F.cross_entropy(rows @ W + b, dst).item())
    for _ in range(4):
        seq = [stop]
        while len(seq) < 12:
            row = F.one_hot(torch.tensor([seq[-1]]), num_classes=V).float()
            probs = F.softmax(row @ W + b, dim=1)
            seq.append(torch.multinomial(probs, 1, generator=gen).item())
            if seq[-1] == stop:
                break
        report.append(spell(letters, [i for i in seq[1:] if i != stop]))
    return report


# ----- an MLP over an embedding table, then batch statistics by hand ---------------------------

def embedding_mlp(torch, nn, F):
    """A lookup E[X] of a 2-D int tensor, flattened with .view(-1, k) (the same as
    torch.cat(torch.unbind(e, 1), 1)), a tanh layer and cross_entropy; seeded randint
    batches and a rate sweep over 10**torch.linspace(...); split losses and sampled words."""
    words = coined_words(360, seed=503)
    letters, code = vocabulary(words)
    V, width, dim, hidden = len(letters), 4, 3, 48
    cut = int(0.85 * len(words))
    Xa, Ya = windows(torch, words[:cut], code, width)
    Xb, Yb = windows(torch, words[cut:], code, width)
    gen = torch.Generator().manual_seed(24601)
    E = torch.randn((V, dim), generator=gen)
    A = torch.randn((width * dim, hidden), generator=gen) * 0.3
    a = torch.randn(hidden, generator=gen) * 0.1
    B = torch.randn((hidden, V), generator=gen) * 0.1
    c = torch.zeros(V)
    params = [E, A, a, B, c]
    for p in params:
        p.requires_grad = True
    picked = E[Xa[:4]]
    report = [list(Xa.shape), sum(p.nelement() for p in params), list(picked.shape),
              torch.cat(torch.unbind(picked, 1), 1).equal(picked.view(-1, width * dim))]

    def logits_of(X):
        return torch.tanh(E[X].view(-1, width * dim) @ A + a) @ B + c

    exponents = torch.linspace(-2.0, 0.0, 45)
    rates = 10 ** exponents
    sweep = []
    for step in range(45):
        batch = torch.randint(0, len(Xa), (24,), generator=gen)
        loss = F.cross_entropy(logits_of(Xa[batch]), Ya[batch])
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data += -rates[step] * p.grad
        sweep.append((exponents[step].item(), loss.item()))
    report += [sweep[::11], rates[-1].item()]
    with torch.no_grad():
        report += [F.cross_entropy(logits_of(X), Y).item() for X, Y in ((Xa, Ya), (Xb, Yb))]
    for _ in range(3):
        report.append(spell(letters, sampled_ids(
            torch, code["$"], width,
            lambda ctx: F.softmax(logits_of(torch.tensor([ctx])), dim=1),
            lambda probs: torch.multinomial(probs, num_samples=1, generator=gen))))
    return report


def sampled_ids(torch, stop, width, probs_of, draw, longest=12):
    """Ids drawn one at a time from ``probs_of(context)`` until ``stop`` (or ``longest``),
    the context the last ``width`` ids, padded with ``stop``."""
    ctx, out = [stop] * width, []
    while len(out) < longest:
        nxt = draw(probs_of(ctx)).item()
        if nxt == stop:
            break
        out.append(nxt)
        ctx = ctx[1:] + [nxt]
    return out


def batch_statistics_by_hand(torch, nn, F):
    """A hidden layer normalised by its batch mean and .std(0, keepdim=True) with a gain
    and a shift, running statistics kept in place (mul_/add_) under no_grad, a gain-scaled
    init, the tanh saturation, a calibration pass over the whole split and losses from a
    @torch.no_grad() function with the running and the calibrated statistics."""
    words = coined_words(330, seed=504)
    letters, code = vocabulary(words)
    V, width, dim, hidden = len(letters), 3, 5, 40
    cut = int(0.88 * len(words))
    Xa, Ya = windows(torch, words[:cut], code, width)
    Xb, Yb = windows(torch, words[cut:], code, width)
    gen = torch.Generator().manual_seed(8675309)
    fan_in = width * dim
    E = torch.randn((V, dim), generator=gen)
    W = torch.randn((fan_in, hidden), generator=gen) * (5 / 3) / math.sqrt(fan_in)
    head = torch.randn((hidden, V), generator=gen) * 0.05
    head_b = torch.zeros(V)
    gain, shift = torch.ones((1, hidden)), torch.zeros((1, hidden))
    run_mu, run_sd = torch.zeros((1, hidden)), torch.ones((1, hidden))
    params = [E, W, head, head_b, gain, shift]
    for p in params:
        p.requires_grad_()

    def hidden(X, stats=None):
        """tanh of the normalised layer, with the batch's statistics unless given others."""
        z = E[X].view(len(X), -1) @ W
        if stats is None:
            stats = z.mean(0, keepdim=True), z.std(0, keepdim=True)
        mu, sd = stats
        return torch.tanh(gain * (z - mu) / sd + shift), stats

    @torch.no_grad()
    def loss_with(X, Y, stats):
        return F.cross_entropy(hidden(X, stats)[0] @ head + head_b, Y).item()

    report = []
    for step in range(30):
        batch = torch.randint(0, len(Xa), (40,), generator=gen)
        act, (mu, sd) = hidden(Xa[batch])
        with torch.no_grad():
            run_mu.mul_(0.9).add_(0.1 * mu)
            run_sd.mul_(0.9).add_(0.1 * sd)
        loss = F.cross_entropy(act @ head + head_b, Ya[batch])
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data += -(0.2 if step < 20 else 0.05) * p.grad
        if step % 6 == 0:
            report += [loss.item(), (act.abs() > 0.97).float().mean().item()]
    report += [run_mu.requires_grad, run_sd.mean().item(), sd.pow(2).mean().item()]
    with torch.no_grad():
        calibrated = hidden(Xa)[1]
    report += [(calibrated[0] - run_mu).abs().max().item(),
               (calibrated[1] - run_sd).abs().max().item()]
    for stats in (calibrated, (run_mu, run_sd)):
        report += [loss_with(Xa, Ya, stats), loss_with(Xb, Yb, stats)]
    return report


# ----- a backward pass derived by hand --------------------------------------------------------

def hand_derived_gradients(torch, nn, F):
    """A forward of small steps (lookup, flatten, matmul, batch normalisation with the
    biased variance and rsqrt, relu, an output layer, log-softmax through a shifted
    log-sum-exp, a one-hot mask picking the targets); every step keeps its grad
    (retain_grad) and a gradient worked out by hand for each is compared with autograd's:
    exactly or by allclose, and by the largest difference. Then the folded formulas for the
    softmax and the normalisation, and a few steps trained on hand gradients alone."""
    words = coined_words(260, seed=505)
    letters, code = vocabulary(words)
    V, width, dim, hidden, n, eps = len(letters), 3, 4, 24, 20, 1e-5
    X, Y = windows(torch, words, code, width)
    gen = torch.Generator().manual_seed(70707)
    E = torch.randn((V, dim), generator=gen) * 0.7
    W_in = torch.randn((width * dim, hidden), generator=gen) / math.sqrt(width * dim)
    gamma = 1.0 + 0.2 * torch.randn((1, hidden), generator=gen)
    beta = 0.2 * torch.randn((1, hidden), generator=gen)
    W_out = torch.randn((hidden, V), generator=gen) * 0.2
    b_out = torch.randn(V, generator=gen) * 0.1
    params = [E, W_in, gamma, beta, W_out, b_out]
    for p in params:
        p.requires_grad = True
    rows = torch.randint(0, len(X), (n,), generator=gen)
    Xn, Yn = X[rows], Y[rows]

    emb = E[Xn]
    flat = emb.view(n, -1)
    pre = flat @ W_in
    mu = pre.mean(0, keepdim=True)
    centered = pre - mu
    sq = centered ** 2
    var = sq.mean(0, keepdim=True)
    inv_std = torch.rsqrt(var + eps)
    normed = centered * inv_std
    scaled = normed * gamma + beta
    act = torch.relu(scaled)
    z = act @ W_out + b_out
    top = z.max(1, keepdim=True).values
    shifted = z - top
    expd = shifted.exp()
    total = expd.sum(1, keepdim=True)
    lse = total.log()
    logp = shifted - lse
    mask = F.one_hot(Yn, num_classes=V).to(logp.dtype)
    picked = (logp * mask).sum(1)
    loss = -picked.mean()
    steps = [emb, flat, pre, mu, centered, sq, var, inv_std, normed, scaled, act, z, top,
             shifted, expd, total, lse, logp, picked]
    for t in steps:
        t.retain_grad()
    loss.backward()

    d_picked = torch.full_like(picked, -1.0 / n)
    d_logp = mask * d_picked.unsqueeze(1)
    d_lse = -d_logp.sum(1, keepdim=True)
    d_total = d_lse / total
    d_expd = d_total.expand_as(expd)
    d_shifted = d_logp + expd * d_expd
    d_top = -d_shifted.sum(1, keepdim=True)
    d_z = d_shifted + torch.zeros_like(z).scatter_(1, z.max(1, keepdim=True).indices, d_top)
    d_b_out = d_z.sum(0)
    d_W_out = act.T @ d_z
    d_act = d_z @ W_out.T
    d_scaled = d_act * (scaled > 0).to(d_act.dtype)
    d_beta = d_scaled.sum(0, keepdim=True)
    d_gamma = (d_scaled * normed).sum(0, keepdim=True)
    d_normed = d_scaled * gamma
    d_inv_std = (d_normed * centered).sum(0, keepdim=True)
    d_var = d_inv_std * -0.5 * (var + eps) ** -1.5
    d_sq = d_var.expand_as(sq) / n
    d_centered = d_normed * inv_std + 2 * centered * d_sq
    d_mu = -d_centered.sum(0, keepdim=True)
    d_pre = d_centered + d_mu / n
    d_W_in = flat.T @ d_pre
    d_flat = d_pre @ W_in.T
    d_emb = d_flat.view_as(emb)
    d_E = torch.zeros_like(E).index_add_(0, Xn.flatten(), d_emb.reshape(-1, dim))

    def compare(label, mine, t):
        same = bool((mine == t.grad).all())
        worst = (mine - t.grad).abs().max().item()
        return [label, same or torch.allclose(mine, t.grad), worst < 1e-6]

    hand = [d_picked, d_logp, d_lse, d_total, d_expd, d_shifted, d_top, d_z, d_act, d_scaled,
            d_normed, d_inv_std, d_var, d_sq, d_centered, d_mu, d_pre, d_flat, d_emb]
    names = ["picked", "logp", "lse", "total", "expd", "shifted", "top", "z", "act", "scaled",
             "normed", "inv_std", "var", "sq", "centered", "mu", "pre", "flat", "emb"]
    report = [loss.item(), d_W_in.norm().item(), d_E.abs().sum().item()]
    report += [compare(name, d, t) for name, d, t in zip(names, hand, steps[::-1])]
    report += [compare(name, d, p) for name, d, p in
               zip(["E", "W_in", "gamma", "beta", "W_out", "b_out"],
                   [d_E, d_W_in, d_gamma, d_beta, d_W_out, d_b_out], params)]
    rows_of = F.one_hot(Xn.flatten(), num_classes=V).to(d_emb.dtype)
    report.append(compare("E by one-hot", rows_of.T @ d_emb.reshape(-1, dim), E))

    fused_z = (F.softmax(z, dim=1) - mask) / n
    report += [abs(F.cross_entropy(z, Yn).item() - loss.item()) < 1e-6,
               compare("z folded", fused_z, z)]
    fused_pre = inv_std / n * (n * d_normed - d_normed.sum(0)
                               - normed * (d_normed * normed).sum(0))
    report.append(compare("pre folded", fused_pre, pre))
    normed_ref = F.batch_norm(pre, None, None, training=True, eps=eps)
    report.append((normed_ref - normed).abs().max().item() < 1e-5)

    with torch.no_grad():
        for _ in range(4):
            rows = torch.randint(0, len(X), (n,), generator=gen)
            Xn, Yn = X[rows], Y[rows]
            flat = E[Xn].view(n, -1)
            pre = flat @ W_in
            centered = pre - pre.mean(0, keepdim=True)
            inv_std = torch.rsqrt((centered ** 2).mean(0, keepdim=True) + eps)
            normed = centered * inv_std
            scaled = normed * gamma + beta
            act = torch.relu(scaled)
            z = act @ W_out + b_out
            report.append(F.cross_entropy(z, Yn).item())
            d_z = F.softmax(z, dim=1)
            d_z[torch.arange(n), Yn] -= 1.0
            d_z /= n
            d_scaled = (d_z @ W_out.T) * (scaled > 0).to(z.dtype)
            d_normed = d_scaled * gamma
            d_pre = inv_std / n * (n * d_normed - d_normed.sum(0)
                                   - normed * (d_normed * normed).sum(0))
            d_E = torch.zeros_like(E).index_add_(0, Xn.flatten(),
                                                 (d_pre @ W_in.T).reshape(-1, dim))
            grads = [d_E, flat.T @ d_pre, (d_scaled * normed).sum(0, keepdim=True),
                     d_scaled.sum(0, keepdim=True), act.T @ d_z, d_z.sum(0)]
            for p, grad in zip(params, grads):
                p.data -= 0.3 * grad
    return report

"""Programs in the styles of a fourth set of PyTorch's own tutorials and notes: datasets and
data loaders, building models from containers, adjusting the learning rate, the mechanics of
autograd, tensor basics with broadcasting and type promotion, and the habits of a training
loop that saves and resumes a checkpoint.

Each program takes one library's module triple (torch, nn, F), seeds torch's generator, runs
on synthetic data in the default dtype and returns what it would print: numbers, flags,
orders, error class names and the values of small tensors as lists.
``test_public_tutorial_files_d.py`` runs it under both libraries and compares. The models,
names, sizes and constants are the programs' own."""

import io

from program_output import dtype_name, error_class, values


# ----- datasets and data loaders ---------------------------------------------------------------

def data_loading(torch, nn, F):
    """A map-style dataset of dicts padded by a custom ``collate_fn``, the default collation of
    dicts, an iterable dataset, the weighted, subset and batch samplers, ``random_split`` and a
    shuffling loader, each from a seeded generator."""
    data = torch.utils.data
    torch.manual_seed(0)
    printed = []

    class Phrases(data.Dataset):
        def __init__(self, count):
            g = torch.Generator().manual_seed(3)
            sizes = torch.randint(1, 6, (count,), generator=g).tolist()
            self.tokens = [torch.randint(1, 20, (k,), generator=g) for k in sizes]
            self.labels = torch.randint(0, 2, (count,), generator=g)

        def __len__(self):
            return len(self.tokens)

        def __getitem__(self, i):
            return {"tokens": self.tokens[i], "label": self.labels[i]}

    def pad_batch(items):
        rows = [item["tokens"] for item in items]
        padded = nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=0)
        return padded, torch.tensor([len(r) for r in rows]), torch.stack(
            [item["label"] for item in items])

    phrases = Phrases(10)
    shuffled = data.DataLoader(phrases, batch_size=4, shuffle=True, collate_fn=pad_batch,
                               generator=torch.Generator().manual_seed(7), num_workers=0)
    for _ in range(2):                      # two epochs: the generator moves on
        for padded, lengths, labels in shuffled:
            printed += [list(padded.shape), padded.tolist(), lengths.tolist(), labels.tolist()]
    printed.append(len(shuffled))

    pairs = [{"x": torch.full((2,), float(i)), "y": i, "name": f"n{i}"} for i in range(5)]
    for batch in data.DataLoader(pairs, batch_size=2):
        printed += [sorted(batch), values(batch["x"]), batch["y"].tolist(),
                    dtype_name(batch["y"].dtype), batch["name"]]

    class Countdown(data.IterableDataset):
        def __init__(self, start):
            self.start = start

        def __iter__(self):
            worker = data.get_worker_info()
            return iter([torch.tensor([float(k), k / 2]) for k in range(self.start, 0, -1)]
                        if worker is None else [])

    for drop_last in (False, True):
        batches = data.DataLoader(Countdown(7), batch_size=3, drop_last=drop_last)
        printed.append([values(b) for b in batches])

    train, held_out = data.random_split(phrases, [7, 3],
                                        generator=torch.Generator().manual_seed(42))
    thirds = data.random_split(range(10), [0.5, 0.3, 0.2],
                               generator=torch.Generator().manual_seed(1))
    printed += [list(train.indices), list(held_out.indices), len(train),
                [list(part) for part in thirds]]

    weights = torch.tensor([0.1, 0.1, 0.5, 1.0, 2.0])
    weighted = data.WeightedRandomSampler(weights, num_samples=12, replacement=True,
                                          generator=torch.Generator().manual_seed(1))
    subset = data.SubsetRandomSampler([1, 3, 5, 7, 9],
                                      generator=torch.Generator().manual_seed(2))
    batched = data.BatchSampler(data.SequentialSampler(range(10)), batch_size=3,
                                drop_last=True)
    printed += [list(weighted), list(subset), list(subset), list(batched), len(batched),
                len(data.BatchSampler(range(10), 3, drop_last=False))]
    by_sampler = data.DataLoader(phrases, collate_fn=pad_batch, batch_sampler=data.BatchSampler(
        subset, batch_size=2, drop_last=True))
    printed.append([lengths.tolist() for _, lengths, _ in by_sampler])

    pairs = data.TensorDataset(torch.arange(10.0).reshape(5, 2), torch.arange(5))
    printed += [[values(x) + values(y) for x, y in data.DataLoader(pairs, 2, shuffle=True)],
                error_class(lambda: len(data.DataLoader(Countdown(3)))),
                error_class(lambda: data.DataLoader(Countdown(3), shuffle=True)),
                error_class(lambda: data.random_split(range(10), [3, 3]))]
    return printed


# ----- building models --------------------------------------------------------------------------

def building_models(torch, nn, F):
    """Containers (ModuleList, ModuleDict, ParameterList, ParameterDict), the named iterators
    with prefixes and duplicates, ``apply`` with ``nn.init``, a non-persistent buffer, the
    state dict through ``torch.save``/``torch.load`` in memory, a non-strict load, a frozen
    submodule, ``extra_repr`` and the printed model."""
    torch.manual_seed(1)
    printed = []

    class Block(nn.Module):
        def __init__(self, width, scale):
            super().__init__()
            self.linear = nn.Linear(width, width)
            self.scale = scale
            self.register_buffer("calls", torch.zeros((), dtype=torch.int64))
            self.register_buffer("shift", torch.full((width,), 0.25), persistent=False)

        def extra_repr(self):
            return f"scale={self.scale}"

        def forward(self, x):
            self.calls += 1
            return torch.tanh(self.linear(x)) * self.scale + self.shift

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(4, 0.5), Block(4, 2.0)])
            self.heads = nn.ModuleDict({"mean": nn.Linear(4, 2), "spread": nn.Linear(4, 2)})
            self.gains = nn.ParameterList([nn.Parameter(torch.ones(4)) for _ in range(2)])
            self.offsets = nn.ParameterDict({"mean": nn.Parameter(torch.zeros(2)),
                                             "spread": nn.Parameter(torch.ones(2))})
            self.tied = self.heads["mean"]

        def forward(self, x):
            for block, gain in zip(self.blocks, self.gains):
                x = block(x) * gain
            return {k: head(x) + self.offsets[k] for k, head in self.heads.items()}

    net = Net()
    names = [[n for n, _ in net.named_modules()],
             [n for n, _ in net.named_modules(remove_duplicate=False)],
             [n for n, _ in net.named_modules(prefix="net")],
             [n for n, _ in net.named_parameters()],
             [n for n, _ in net.named_parameters(prefix="m", remove_duplicate=False)],
             [n for n, _ in net.blocks[1].named_parameters(recurse=False)],
             [n for n, _ in net.named_buffers()], list(net.state_dict())]
    printed += [str(net), names, len(list(net.modules())), len(list(net.children()))]

    def initialise(module):
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight, gain=nn.init.calculate_gain("tanh"))
            nn.init.constant_(module.bias, 0.1)
    printed.append(net.apply(initialise) is net)
    x = torch.randn(3, 4)
    out = net(x)
    printed += [values(out["mean"]), values(out["spread"]), net.blocks[0].calls.item()]

    buffer = io.BytesIO()
    torch.save(net.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    twin = Net()
    printed.append(str(twin.load_state_dict(state)))
    printed += [values(twin(x)["spread"]) == values(out["spread"]), twin.blocks[1].calls.item()]
    state.pop("heads.spread.bias")
    state["heads.extra.weight"] = torch.zeros(1)
    result = twin.load_state_dict(state, strict=False)
    printed += [result.missing_keys, result.unexpected_keys,
                error_class(lambda: twin.load_state_dict(state))]

    printed += [str(net.get_submodule("blocks.1.linear")), str(net.blocks[1:]),
                error_class(lambda: net.get_submodule("blocks.2")),
                type(net.state_dict(keep_vars=True)["gains.0"]).__name__]
    wrong = net.state_dict()
    wrong["heads.mean.weight"] = torch.zeros(3, 4)
    printed.append(error_class(lambda: twin.load_state_dict(wrong)))

    net.blocks[0].requires_grad_(False)
    printed.append([n for n, p in net.named_parameters() if p.requires_grad])
    total = sum(o.pow(2).sum() for o in net(x).values())
    total.backward()
    printed += [net.blocks[0].linear.weight.grad is None, values(net.gains[1].grad),
                values(net.offsets["spread"].grad), values(net.blocks[1].linear.bias.grad)]
    return printed


# ----- adjusting the learning rate --------------------------------------------------------------

def lr_schedules(torch, nn, F):
    """OneCycleLR (and its last step past the end), CosineAnnealingWarmRestarts stepped by
    fractional epochs, ReduceLROnPlateau on a noisy metric, SequentialLR, ChainedScheduler and
    a scheduler's state saved and restored mid-run."""
    torch.manual_seed(2)
    optim, schedules = torch.optim, torch.optim.lr_scheduler
    printed = []

    def fresh(lr=0.1):
        model = nn.Linear(3, 1)
        return model, optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    _, opt = fresh()
    cycle = schedules.OneCycleLR(opt, max_lr=0.5, total_steps=12, pct_start=0.25)
    trace = []
    for _ in range(12):
        opt.step()
        cycle.step()
        trace.append([cycle.get_last_lr()[0], opt.param_groups[0]["momentum"]])
    printed += [trace, error_class(cycle.step)]
    _, opt = fresh()
    linear = schedules.OneCycleLR(opt, max_lr=1.0, epochs=2, steps_per_epoch=4,
                                  anneal_strategy="linear", three_phase=True)
    printed.append([(opt.step(), linear.step(), linear.get_last_lr()[0])[2] for _ in range(8)])

    _, opt = fresh()
    triangle = schedules.CyclicLR(opt, 0.01, 0.1, step_size_up=2, mode="triangular2")
    printed.append([(opt.step(), triangle.step(), opt.param_groups[0]["lr"],
                     opt.param_groups[0]["momentum"])[2:] for _ in range(9)])

    _, opt = fresh()
    restarts = schedules.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.01)
    rows = 3
    for epoch in range(5):
        for i in range(rows):
            opt.step()
            restarts.step(epoch + i / rows)
            printed.append(restarts.get_last_lr()[0])
    printed.append([restarts.T_cur, restarts.T_i])

    _, opt = fresh()
    plateau = schedules.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1,
                                          threshold=0.01, cooldown=1, min_lr=0.002)
    noisy = (torch.linspace(1.0, 0.6, 12) + 0.08 * torch.randn(12)).tolist()
    for metric in noisy:
        opt.step()
        plateau.step(metric)
        printed.append([opt.param_groups[0]["lr"], plateau.num_bad_epochs,
                        plateau.cooldown_counter])

    _, opt = fresh()
    warm = schedules.LinearLR(opt, start_factor=0.1, total_iters=3)
    decay = schedules.ExponentialLR(opt, gamma=0.8)
    sequential = schedules.SequentialLR(opt, [warm, decay], milestones=[3])
    printed.append([(opt.step(), sequential.step(), sequential.get_last_lr()[0])[2]
                    for _ in range(7)])
    _, opt = fresh()
    chained = schedules.ChainedScheduler([schedules.ConstantLR(opt, factor=0.5, total_iters=2),
                                          schedules.ExponentialLR(opt, gamma=0.9)])
    printed.append([(opt.step(), chained.step(), chained.get_last_lr()[0])[2]
                    for _ in range(5)])

    def train(model, opt, scheduler, steps, data):
        for x, y in data[:steps]:
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
            scheduler.step()
        data[:steps] = []
        return [scheduler.get_last_lr()[0], values(model.weight)]

    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(8)]
    model, opt = fresh()
    cosine = schedules.CosineAnnealingLR(opt, T_max=8, eta_min=0.001)
    straight = train(model, opt, cosine, 8, list(batches))
    torch.manual_seed(2)
    model, opt = fresh()
    cosine = schedules.CosineAnnealingLR(opt, T_max=8, eta_min=0.001)
    rest = list(batches)
    train(model, opt, cosine, 4, rest)
    saved = {"model": model.state_dict(), "opt": opt.state_dict(), "lr": cosine.state_dict()}
    model, opt = fresh(lr=0.7)
    cosine = schedules.CosineAnnealingLR(opt, T_max=8, eta_min=0.001)
    model.load_state_dict(saved["model"])
    opt.load_state_dict(saved["opt"])
    cosine.load_state_dict(saved["lr"])
    printed += [saved["lr"]["last_epoch"], straight, train(model, opt, cosine, 4, rest)]
    return printed


# ----- autograd mechanics -----------------------------------------------------------------------

def autograd_mechanics(torch, nn, F):
    """``retain_grad`` and a hook that rescales a gradient, the three ways to stop recording,
    an in-place change of a saved tensor, freezing for fine-tuning, zeroing gradients, a
    retained graph run twice and a gradient penalty through ``create_graph``."""
    torch.manual_seed(3)
    printed = []
    x = torch.randn(4, requires_grad=True)
    hidden = x * 2
    hidden.retain_grad()
    hidden.register_hook(lambda g: g * 10)
    hidden.exp().sum().backward()
    printed += [values(hidden.grad), values(x.grad), x.is_leaf, hidden.is_leaf,
                hidden.grad_fn is not None]

    handle = x.register_hook(lambda g: -g)
    (x * 3).sum().backward()
    printed.append(values(x.grad))
    handle.remove()
    (x * 3).sum().backward()
    printed += [values(x.grad), error_class(lambda: (x * 2).backward()),
                error_class(lambda: x.add_(1))]
    unused = torch.randn(2, requires_grad=True)
    gx, gu = torch.autograd.grad((x * x).sum(), [x, unused], allow_unused=True)
    printed += [values(gx), gu is None, error_class(
        lambda: torch.autograd.grad((x * x).sum(), [x, unused]))]

    with torch.no_grad():
        quiet = x * 2
    with torch.inference_mode():
        frozen = x * 2
        printed.append(torch.is_inference_mode_enabled())
    with torch.set_grad_enabled(False):
        off = x * 2
        printed.append(torch.is_grad_enabled())
    printed += [quiet.requires_grad, frozen.requires_grad, off.requires_grad,
                frozen.is_inference(), quiet.is_inference(), torch.is_grad_enabled(),
                error_class(lambda: (frozen * x).sum().backward()),
                (quiet * x).requires_grad]

    a = torch.randn(3, requires_grad=True)
    squashed = a.sigmoid()
    printed.append(squashed._version)
    squashed.mul_(2)
    printed += [squashed._version, error_class(lambda: squashed.sum().backward())]

    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    for p in model[0].parameters():
        p.requires_grad_(False)
    data = torch.randn(6, 3)
    loss = model(data).pow(2).mean()
    loss.backward(retain_graph=True)
    first = values(model[2].weight.grad)
    loss.backward()
    printed += [model[0].weight.grad is None, first, values(model[2].weight.grad),
                error_class(loss.backward)]
    model[2].weight.grad.zero_()
    printed.append(values(model[2].bias.grad) != [0.0, 0.0])
    model.zero_grad(set_to_none=False)
    printed.append(values(model[2].bias.grad))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad(set_to_none=True)
    printed.append(model[2].bias.grad is None)
    model[0].requires_grad_(True)
    model(data).sum().backward()
    printed.append(values(model[0].bias.grad))

    critic = nn.Sequential(nn.Linear(3, 4), nn.Softplus(), nn.Linear(4, 1))
    real, fake = torch.randn(5, 3), torch.randn(5, 3)
    mix = torch.rand(5, 1)
    between = (mix * real + (1 - mix) * fake).requires_grad_(True)
    score = critic(between)
    slope, = torch.autograd.grad(score.sum(), between, create_graph=True)
    penalty = ((slope.norm(2, dim=1) - 1) ** 2).mean()
    penalty.backward()
    printed += [penalty.item(), slope.requires_grad, values(critic[0].weight.grad),
                between.grad is None]
    return printed


# ----- tensor basics ----------------------------------------------------------------------------

def tensor_basics(torch, nn, F):
    """Masks and index lists, gather and the scatters, view against reshape on a transposed
    tensor, strides and storage offsets, expand against repeat, ``where``, joining and
    splitting, ``einsum``, in-place broadcasting and the rules of type promotion."""
    torch.manual_seed(4)
    grid = torch.arange(12.0).reshape(3, 4)
    mask = grid % 3 == 1
    masked = grid.clone()
    masked[mask] = -1.0
    printed = [values(grid[mask]), values(grid[[0, 2]]), values(grid[[0, 2], [1, 3]]),
               values(grid[:, [3, 0]]), values(masked), values(grid[grid > 8])]

    where = torch.tensor([[0, 3], [1, 1], [2, 0]])
    printed.append(values(grid.gather(1, where)))
    printed.append(values(torch.zeros(3, 4).scatter_(1, where, torch.ones(3, 2) * 5)))
    printed.append(values(torch.zeros(3, 4).scatter_add_(1, where, torch.ones(3, 2))))
    printed.append(values(torch.zeros(4, 4).index_add_(0, torch.tensor([0, 2, 0]), grid, alpha=2)))

    flipped = grid.t()
    printed += [flipped.is_contiguous(), list(flipped.stride()), list(grid.stride()),
                error_class(lambda: flipped.view(12)), values(flipped.reshape(12)),
                values(flipped.contiguous().view(2, 6)), flipped.contiguous().is_contiguous()]
    corner = grid[1:, 2:]
    printed += [corner.storage_offset(), list(corner.stride()), corner.is_contiguous(),
                grid[:, 1].storage_offset()]

    cube = torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
    printed += [list(cube.stride()), error_class(lambda: cube.view(-1)),
                list(cube.reshape(4, 6).stride()), error_class(lambda: grid.gather(1, where + 2)),
                error_class(lambda: grid.gather(1, where.float()))]

    column = torch.tensor([[1.0], [2.0], [3.0]])
    expanded, repeated = column.expand(3, 4), column.repeat(2, 3)
    printed += [list(expanded.stride()), list(expanded.shape), list(repeated.shape),
                list(column.expand(-1, 2).shape), values(repeated), values(expanded)]

    noise = torch.randn(3, 4)
    printed += [values(torch.where(noise > 0, noise, torch.zeros(()))),
                [values(i) for i in torch.where(noise > 0.5)],
                values(torch.where(noise > 0, 1.0, -1.0))]

    parts = torch.chunk(torch.arange(10), 3)
    printed += [[len(p) for p in parts], [len(p) for p in torch.split(torch.arange(10), [2, 8])],
                list(torch.cat([grid, grid], dim=1).shape), list(torch.stack([grid, grid]).shape),
                list(torch.stack([grid, grid], dim=-1).shape)]

    a, b = torch.randn(2, 3), torch.randn(3, 4)
    square = torch.randn(3, 3)
    printed += [values(torch.einsum("ij,jk->ik", a, b)), values(torch.einsum("ii->i", square)),
                values(torch.einsum("bi,bi->b", a, a)), values(torch.einsum("ij->ji", a)),
                values(torch.einsum("i,j->ij", a[0], b[:, 0]))]

    target = torch.zeros(3, 4)
    target.add_(torch.arange(4.0))
    printed += [values(target), error_class(lambda: torch.zeros(3, 1).add_(torch.ones(1, 4))),
                list((torch.zeros(3, 1) + torch.ones(1, 4)).shape),
                error_class(lambda: torch.zeros(2, 3) + torch.zeros(3, 2))]

    ints = torch.tensor([1, 2, 3], dtype=torch.int32)
    halves = torch.tensor([1.0, 2.0], dtype=torch.float16)
    pairs = [(ints, 2.5), (ints, torch.tensor(2.5, dtype=torch.float64)), (ints, 2),
             (halves, torch.tensor(3.0, dtype=torch.float64)), (halves, 2.0),
             (torch.tensor([1, 2], dtype=torch.uint8), torch.tensor(1, dtype=torch.int8)),
             (torch.tensor([True]), 3), (torch.tensor([True]), 3.0),
             (ints, torch.tensor([1], dtype=torch.int64))]
    printed.append([dtype_name(torch.result_type(p, q)) for p, q in pairs])
    printed += [dtype_name((ints / ints).dtype), dtype_name((ints // 2).dtype),
                dtype_name((ints * True).dtype), dtype_name(ints.to(torch.float64).dtype),
                dtype_name((ints + 2.5).dtype),
                values(ints.to(torch.float16) + torch.tensor(0.5, dtype=torch.float64)),
                error_class(lambda: ints.add_(1.5)), error_class(lambda: ints.float().mean()),
                error_class(lambda: ints.mean()),
                error_class(lambda: torch.tensor([True]) - torch.tensor([True]))]
    return printed


# ----- habits of a training loop ----------------------------------------------------------------

def training_habits(torch, nn, F):
    """Dropout and BatchNorm in train and eval modes, seeded reproducibility, a checkpoint with
    the epoch, model, optimizer, loss and generator state resumed to the same continuation,
    ``clip_grad_norm_``'s return value, a learning rate edited by hand and gradients
    accumulated over micro-batches."""
    torch.manual_seed(5)
    printed = []

    def build():
        return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.3),
                             nn.Linear(8, 3))

    inputs, labels = torch.randn(32, 6), torch.randint(0, 3, (32,))
    loss_fn = nn.CrossEntropyLoss()

    def epoch(model, opt):
        model.train()
        losses, norms = [], []
        for i in range(0, 32, 8):
            loss = loss_fn(model(inputs[i:i + 8]), labels[i:i + 8])
            opt.zero_grad()
            loss.backward()
            norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0).item())
            opt.step()
            losses.append(loss.item())
        return losses, norms

    model = build()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        losses, norms = epoch(model, opt)
    printed += [losses, norms, model.training, model[3].training]
    model.eval()
    once, twice = model(inputs[:4]), model(inputs[:4])
    printed += [values(once) == values(twice), model[1].training,
                values(model[1].running_mean), model[1].num_batches_tracked.item()]

    buffer = io.BytesIO()
    torch.save({"epoch": 2, "model_state_dict": model.state_dict(),
                "optimizer_state_dict": opt.state_dict(), "loss": losses[-1],
                "rng": torch.get_rng_state()}, buffer)
    for group in opt.param_groups:
        group["lr"] *= 0.5
    onward = [epoch(model, opt) for _ in range(2)]

    buffer.seek(0)
    checkpoint = torch.load(buffer, weights_only=True)
    resumed, again = build(), None
    resumed_opt = torch.optim.SGD(resumed.parameters(), lr=0.3, momentum=0.5)
    resumed.load_state_dict(checkpoint["model_state_dict"])
    resumed_opt.load_state_dict(checkpoint["optimizer_state_dict"])
    torch.set_rng_state(checkpoint["rng"])
    resumed_opt.param_groups[0]["lr"] *= 0.5
    again = [epoch(resumed, resumed_opt) for _ in range(2)]
    printed += [checkpoint["epoch"], checkpoint["loss"], onward, again == onward,
                resumed_opt.param_groups[0]["lr"], resumed_opt.param_groups[0]["momentum"]]

    model.zero_grad()
    loss_fn(model(inputs[:8]), labels[:8]).backward()
    printed += [nn.utils.clip_grad_norm_(model.parameters(), 0.5, norm_type=float("inf")).item(),
                nn.utils.clip_grad_value_(model.parameters(), 0.01) is None,
                values(model[4].bias.grad)]
    model[0].bias.grad[0] = float("nan")
    printed.append(error_class(lambda: nn.utils.clip_grad_norm_(
        model.parameters(), 1.0, error_if_nonfinite=True)))

    torch.manual_seed(9)
    first = torch.randn(3)
    torch.manual_seed(9)
    printed.append(values(first) == values(torch.randn(3)))

    plain = nn.Linear(6, 3)
    whole = loss_fn(plain(inputs[:8]), labels[:8])
    whole.backward()
    full = values(plain.weight.grad)
    plain.zero_grad()
    for i in range(0, 8, 2):
        (loss_fn(plain(inputs[i:i + 2]), labels[i:i + 2]) / 4).backward()
    printed += [full, values(plain.weight.grad),
                torch.allclose(plain.weight.grad, torch.tensor(full).reshape(3, 6), atol=1e-6)]
    return printed

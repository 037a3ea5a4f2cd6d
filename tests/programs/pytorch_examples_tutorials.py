"""Programs in the styles of PyTorch's tutorials: the "Learning PyTorch with Examples" kind
(a cubic fitted to a sine by hand, by autograd, through a custom autograd.Function, with nn
and optim, with custom Modules and one whose depth changes per call), a transfer-learning
loop and the 60-minute blitz's tensors, autograd and small networks.

Each program exercises the calls and habits such tutorials teach, in models, names, sizes and
constants of its own. It takes the module triple (torch, nn, F) of one library, seeds torch's
generator, trains a tiny model on synthetic data for a few steps and returns what it would
print; ``test_pytorch_examples.py`` runs it under both libraries."""

import copy
import random

import numpy as np



# ----- the "Learning PyTorch with Examples" tutorial -------------------------------------------

def polynomial_by_hand(torch, nn, F):
    """Least squares for a cubic through sin(x) with plain tensors: the gradient of the summed
    squared error written out and applied in place, then the same fit by requires_grad and
    backward, the update under no_grad and the gradients reset to None."""
    torch.manual_seed(32)
    dtype = torch.float
    x = torch.linspace(-3.0, 3.0, 1200, dtype=dtype)
    target = torch.sin(x)
    powers = [torch.ones_like(x), x, x ** 2, x ** 3]          # the design's columns
    rate, printed = 2e-6, []

    def predict(coefficients):
        return sum(c * column for c, column in zip(coefficients, powers))

    def describe(coefficients):
        return " + ".join(f"{c.item():.4f} x^{k}" for k, c in enumerate(coefficients))

    coefficients = [torch.randn((), dtype=dtype) for _ in powers]
    for step in range(1, 41):
        residual = predict(coefficients) - target                # (1200,)
        if step % 10 == 0:
            printed.append(residual.pow(2).sum().item())
        # d/dc_k sum(residual²) = sum(2·residual·x^k): every slope before any update
        slopes = [(2.0 * residual * column).sum() for column in powers]
        for c, slope in zip(coefficients, slopes):
            c -= rate * slope
    printed.append(describe(coefficients))

    coefficients = [torch.randn((), dtype=dtype, requires_grad=True) for _ in powers]
    for step in range(1, 41):
        loss = (predict(coefficients) - target).pow(2).sum()
        if step % 10 == 0:
            printed.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for c in coefficients:
                c -= rate * c.grad
                c.grad = None
    first = coefficients[0]
    return printed + [c.item() for c in coefficients] + [first.requires_grad, first.is_leaf]


def chebyshev_function(torch, nn, F):
    """A custom autograd.Function, Chebyshev's T3(u) = 4u³ - 3u, whose backward is the
    derivative 12u² - 3 written by hand from the input kept by save_for_backward, inside the
    fitted model y = offset + scale·T3(shift + stretch·x)."""
    torch.manual_seed(33)

    class ChebyshevT3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, u):
            ctx.save_for_backward(u)
            return 4 * u ** 3 - 3 * u

        @staticmethod
        def backward(ctx, grad_output):
            (u,) = ctx.saved_tensors
            return grad_output * (12 * u ** 2 - 3)

    t3 = ChebyshevT3.apply
    x = torch.linspace(-2.0, 2.0, 900)
    target = torch.sin(x)
    # a start whose cubic already bends the way sin does on [-2, 2]
    params = [torch.full((), value, requires_grad=True) for value in (0.0, -0.5, 0.0, 0.4)]
    offset, scale, shift, stretch = params
    printed = []
    for step in range(1, 41):
        fit = offset + scale * t3(shift + stretch * x)
        loss = (fit - target).pow(2).sum()
        if step % 10 == 0:
            printed.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for param in params:
                param -= 1e-5 * param.grad
                param.grad = None
    return printed + [param.item() for param in params] + [fit.grad_fn is not None]


def polynomial_nn(torch, nn, F):
    """The cubic fit with nn: the design (x, x², x³) by unsqueeze(-1).pow of a tensor of
    exponents, Linear then Flatten(0, 1), a summed MSELoss, a hand-written update over
    model.parameters() under no_grad; then RMSprop, stepped plainly and with a closure."""
    torch.manual_seed(34)
    x = torch.linspace(-2.5, 2.5, 1500)
    target = torch.sin(x)
    exponents = torch.tensor([1, 2, 3])
    design = x.unsqueeze(-1).pow(exponents)                  # (1500, 3): x, x², x³
    squared_error = nn.MSELoss(reduction="sum")

    def cubic():
        return nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))   # (1500, 1) -> (1500,)

    printed = []
    model = cubic()
    for step in range(1, 31):
        loss = squared_error(model(design), target)
        if step % 15 == 0:
            printed.append(loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for weight in model.parameters():
                weight -= 4e-6 * weight.grad
    layer = model[0]
    printed += [layer.bias.item()] + [layer.weight[:, k].item() for k in range(3)]

    model = cubic()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=2e-3)
    for step in range(1, 31):
        loss = squared_error(model(design), target)
        if step % 15 == 0:
            printed.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def closure():                        # step(closure) returns the loss the closure gave
        optimizer.zero_grad()
        loss = squared_error(model(design), target)
        loss.backward()
        return loss
    printed += [optimizer.step(closure).item() for _ in range(3)]
    return printed + [model[0].weight.tolist(), design.dtype == x.dtype, list(design.shape)]


def polynomial_module(torch, nn, F):
    """Custom nn.Modules: a cubic of four scalar Parameters, evaluated by Horner's rule, with a
    method that writes it out, trained by SGD; and a net that holds the cubic as a submodule,
    whose forward draws its degree with random.randint and shares one Parameter among the
    powers above three, trained by SGD with momentum."""
    torch.manual_seed(35)
    random.seed(35)

    class Cubic(nn.Module):
        def __init__(self):
            super().__init__()
            self.c0 = nn.Parameter(torch.randn(()))
            self.c1 = nn.Parameter(torch.randn(()))
            self.c2 = nn.Parameter(torch.randn(()))
            self.c3 = nn.Parameter(torch.randn(()))

        def forward(self, x):
            return self.c0 + x * (self.c1 + x * (self.c2 + x * self.c3))

        def formula(self):
            return " + ".join(f"{c.item():.3f} x^{k}" for k, c in enumerate(self.parameters()))

    class RandomDegree(nn.Module):
        def __init__(self):
            super().__init__()
            self.low = Cubic()
            self.high = nn.Parameter(torch.randn(()))      # every power above 3 shares it

        def forward(self, x):
            y = self.low(x)
            for power in range(4, random.randint(4, 6)):   # degree 3, 4 or 5, drawn per call
                y = y + self.high * x ** power
            return y

    x = torch.linspace(-2.0, 2.0, 1000)
    target = torch.sin(x)

    def train(model, optimizer, steps=30):
        squared_error = nn.MSELoss(reduction="sum")
        logged = []
        for step in range(1, steps + 1):
            loss = squared_error(model(x), target)
            if step % 10 == 0:
                logged.append(loss.item())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return logged + [[param.item() for param in model.parameters()]]

    cubic = Cubic()
    printed = train(cubic, torch.optim.SGD(cubic.parameters(), lr=2e-5))
    varying = RandomDegree()
    printed += train(varying, torch.optim.SGD(varying.parameters(), lr=1e-6, momentum=0.9))
    return printed + [Cubic().formula().count("x")]


# ----- the transfer-learning tutorial ----------------------------------------------------------

def transfer_learning(torch, nn, F):
    """Fine-tuning: train and val phases under set_grad_enabled, the best weights kept by a
    deepcopy of the state dict and loaded back, StepLR; then a fixed feature extractor: a
    frozen trunk, a new head, only the head's parameters given to SGD."""
    StepLR = torch.optim.lr_scheduler.StepLR
    torch.manual_seed(36)

    class ThumbnailNet(nn.Module):
        def __init__(self, classes=7):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, 5, 3), nn.BatchNorm2d(5), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1))          # (N, 5, 1, 1)
            self.head = nn.Linear(5, classes)

        def forward(self, x):
            return self.head(torch.flatten(self.body(x), 1))

    def split(count):
        return torch.utils.data.TensorDataset(torch.randn(count, 3, 5, 5),
                                              torch.randint(0, 2, (count,)))

    splits = {"train": split(9), "val": split(6)}
    loaders = {name: torch.utils.data.DataLoader(samples, batch_size=3, shuffle=True)
               for name, samples in splits.items()}
    printed = []

    def run_phase(model, phase, loss_fn, optimizer):
        """One pass over a split: its mean loss and its accuracy, a float64 tensor."""
        training = phase == "train"
        model.train(training)
        loss_sum, hits = 0.0, 0
        for images, labels in loaders[phase]:
            optimizer.zero_grad()
            with torch.set_grad_enabled(training):     # no graph is kept while validating
                scores = model(images)
                _, guesses = torch.max(scores, 1)
                loss = loss_fn(scores, labels)
                if training:
                    loss.backward()
                    optimizer.step()
            loss_sum += loss.item() * images.size(0)
            hits += torch.sum(guesses == labels.data)
        return loss_sum / len(splits[phase]), hits.double() / len(splits[phase])

    def fit(model, loss_fn, optimizer, schedule, epochs):
        best_state, best_accuracy = copy.deepcopy(model.state_dict()), 0.0
        for _ in range(epochs):
            for phase in ("train", "val"):
                mean_loss, accuracy = run_phase(model, phase, loss_fn, optimizer)
                printed.extend([mean_loss, accuracy.item(), str(accuracy.dtype)[-7:]])
            schedule.step()
            if accuracy > best_accuracy:                  # the val phase's, run last
                best_accuracy = accuracy
                best_state = copy.deepcopy(model.state_dict())
        model.load_state_dict(best_state)
        return model

    loss_fn = nn.CrossEntropyLoss()
    tuned = ThumbnailNet()
    tuned.head = nn.Linear(tuned.head.in_features, 2)      # a fresh two-class head
    sgd = torch.optim.SGD(tuned.parameters(), lr=0.02, momentum=0.8)
    tuned = fit(tuned, loss_fn, sgd, StepLR(sgd, step_size=2, gamma=0.2), epochs=3)
    printed.append(tuned.head.weight.sum().item())

    frozen = ThumbnailNet()
    for weight in frozen.parameters():
        weight.requires_grad = False
    frozen.head = nn.Linear(frozen.head.in_features, 2)    # made after the freeze: trainable
    head_sgd = torch.optim.SGD(frozen.head.parameters(), lr=0.02, momentum=0.8)
    frozen = fit(frozen, loss_fn, head_sgd, StepLR(head_sgd, step_size=5, gamma=0.2), epochs=2)
    mode_before = frozen.training
    frozen.eval()
    with torch.no_grad():
        _, guesses = torch.max(frozen(splits["val"].tensors[0]), 1)
    frozen.train(mode=mode_before)
    return printed + [guesses.tolist(), frozen.body[1].running_mean.tolist(),
                      frozen.body[0].weight.grad is None]


# ----- the 60-minute blitz ---------------------------------------------------------------------

def blitz_tensors_and_autograd(torch, nn, F):
    """Tensor basics as the blitz teaches them (the *_like factories, new_ones, views, item,
    in-place adds, the NumPy bridge) and autograd's (a backward from a mean and from a vector,
    requires_grad_, no_grad, detach)."""
    torch.manual_seed(37)

    def creation():
        table = [[5, -2, 0], [1, 8, 3]]
        ints = torch.tensor(table)                                  # int64
        bridged = torch.from_numpy(np.array(table))
        uniform = torch.rand_like(ints, dtype=torch.float)
        size = (3, 2)
        return [torch.ones_like(ints).tolist(), uniform.tolist(), uniform.dtype == torch.float,
                bridged.tolist(), torch.rand(size).tolist(), torch.ones(size).sum().item(),
                torch.zeros(size).tolist()]

    def writes_and_sharing():
        grid = torch.ones(3, 3)
        grid[:, 2] = 0
        wide = torch.cat([grid, grid], dim=1)                       # (3, 6)
        seen = [wide.shape[1], grid.mul(grid).tolist(), (grid @ grid.T).tolist(),
                str(grid.device), list(grid.shape)]
        grid.add_(2)
        seen.append(grid.tolist())
        buffer = np.zeros(4)
        shared = torch.from_numpy(buffer)
        np.add(buffer, 3, out=buffer)           # the tensor sees the write: one memory
        return seen + [shared.tolist()]

    def older_factories():
        longs = torch.zeros(4, 2, dtype=torch.long)
        doubles = longs.new_ones(4, 2, dtype=torch.double)
        noise = torch.randn_like(doubles, dtype=torch.float)
        other = torch.rand(4, 2)
        total = torch.empty(4, 2)
        torch.add(noise, other, out=total)
        other.add_(noise)
        square = torch.randn(2, 6)
        return [noise.size()[0], list(noise.size()), total.tolist(), other[:, 0].tolist(),
                list(square.view(12).size()), list(square.view(-1, 3).size()),
                torch.randn(1).item()]

    def autograd_basics():
        leaf = torch.full((2, 3), 0.5, requires_grad=True)
        shifted = leaf * 4 - 1
        squared = 2 * shifted * shifted
        mean = squared.mean()
        mean.backward()
        seen = [squared.tolist(), mean.item(), leaf.grad.tolist(), shifted.grad_fn is not None]
        free = torch.randn(3, 2)
        free = (free + 2) / (free * free + 1)
        seen.append(free.requires_grad)
        free.requires_grad_(True)
        seen += [free.requires_grad, (free * free).sum().grad_fn is not None]
        seed = torch.randn(3, requires_grad=True)
        grown = seed * 3
        while grown.data.norm() < 500:
            grown = grown * 3
        grown.backward(torch.tensor([1.0, 0.01, 0.5], dtype=torch.float))   # a vector-Jacobian
        seen += [grown.tolist(), seed.grad.tolist(), seed.requires_grad,
                 (seed ** 2).requires_grad]
        with torch.no_grad():
            seen.append((seed ** 2).requires_grad)
        detached = seed.detach()
        return seen + [detached.requires_grad, seed.eq(detached).all().item()]

    return creation() + writes_and_sharing() + older_factories() + autograd_basics()


def blitz_networks(torch, nn, F):
    """A LeNet-like net in the blitz's manner: its parameters listed, a backward from a random
    gradient, the loss's grad_fn chain, a hand-written SGD update, then optim.SGD; and a small
    classifier's loop with predictions by torch.max and per-class counts."""
    torch.manual_seed(38)
    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")

    class LittleLeNet(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.conv_a = nn.Conv2d(1, 4, 3)
            self.conv_b = nn.Conv2d(4, 8, 4)
            self.fc_a = nn.Linear(8 * 3 * 3, 30)
            self.fc_b = nn.Linear(30, 20)
            self.fc_out = nn.Linear(20, classes)

        def forward(self, x):                                     # (N, 1, 20, 20)
            x = F.max_pool2d(F.relu(self.conv_a(x)), (2, 2))      # (N, 4, 9, 9)
            x = F.max_pool2d(F.relu(self.conv_b(x)), 2)           # (N, 8, 3, 3)
            x = F.relu(self.fc_a(torch.flatten(x, 1)))
            return self.fc_out(F.relu(self.fc_b(x)))

    net = LittleLeNet().to(device)
    weights = list(net.parameters())
    printed = [len(weights), list(weights[2].size())]
    probe = torch.randn(1, 1, 20, 20)
    scores = net(probe)
    printed.append(scores.tolist())
    net.zero_grad()
    scores.backward(torch.randn(1, 10))
    printed.append(net.conv_a.bias.grad.tolist())
    wanted = torch.randn(10).view(1, -1)
    mse = nn.MSELoss()
    loss = mse(net(probe), wanted)
    printed += [loss.item(), loss.grad_fn.next_functions[0][0] is not None]
    net.zero_grad()
    printed.append(net.conv_a.bias.grad)           # None: zero_grad drops the gradients
    loss.backward()
    printed.append(net.conv_a.bias.grad.tolist())
    for weight in net.parameters():
        weight.data.sub_(weight.grad.data * 0.02)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.02)
    optimizer.zero_grad()
    mse(net(probe), wanted).backward()
    optimizer.step()
    printed.append(mse(net(probe), wanted).item())

    shapes = ("circle", "square", "star", "cross")
    net.fc_out = nn.Linear(20, len(shapes))
    pictures, kinds = torch.randn(9, 1, 20, 20), torch.randint(0, len(shapes), (9,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(pictures, kinds),
                                         batch_size=3, shuffle=True)
    cross_entropy = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.002, momentum=0.8)
    for _ in range(2):
        window = 0.0
        for count, batch in enumerate(loader, 1):
            images, labels = batch[0].to(device), batch[1].to(device)
            optimizer.zero_grad()
            loss = cross_entropy(net(images), labels)
            loss.backward()
            optimizer.step()
            window += loss.item()
            if count % 3 == 0:
                printed.append(window / 3)
                window = 0.0
    right, seen = dict.fromkeys(shapes, 0), dict.fromkeys(shapes, 0)
    with torch.no_grad():
        _, guesses = torch.max(net(pictures), 1)
        for truth, guess in zip(kinds, guesses):
            name = shapes[truth]                   # a 0-d integer tensor indexes the tuple
            seen[name] += 1
            if truth == guess:
                right[name] += 1
    overall = (guesses == kinds).sum().item()
    return printed + [overall, kinds.size(0), sorted(right.items()), sorted(seen.items())]

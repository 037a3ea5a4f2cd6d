"""Programs in the styles of more of PyTorch's own tutorials: a deep Q-network on a replay
memory, adversarial examples by the fast gradient sign method, a convolution fused with batch
normalization through custom autograd.Functions, custom Functions that are twice
differentiable, the "what is torch.nn really?" walk from raw tensors to nn.Sequential and
DataLoaders, and a spatial transformer network.

Each program takes one library's module triple (torch, nn, F), seeds torch's generator (and
Python's ``random.Random`` where the tutorial draws with ``random``), runs on synthetic data
in the default dtype and returns what it computed: the initial weights, outputs, gradients,
losses and the weights after the optimizer's steps. ``test_public_tutorial_files.py`` runs it
under both libraries. The names, sizes and constants are the programs' own."""

import math
import random
from collections import deque, namedtuple

import numpy as np


def snapshot(model):
    """A model's state as NumPy arrays."""
    return {name: value.detach().clone().numpy() for name, value in model.state_dict().items()}


def gradients(model):
    return {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}


# ----- reinforcement learning: a deep Q-network --------------------------------------------
class GridWalk:
    """A corridor of ``length`` cells; the walker starts at ``start``, action 0 steps left,
    1 right. The last cell is the goal (reward 1, the episode ends); every other step costs
    0.04 and the episode is cut after ``limit`` steps. The observation is (position scaled
    to [0, 1], 1 where the goal is next door)."""

    def __init__(self, length=7, limit=10):
        self.length, self.limit = length, limit

    def reset(self, start):
        self.position, self.steps = start, 0
        return self.observe()

    def observe(self):
        return [self.position / (self.length - 1),
                1.0 if self.position == self.length - 2 else 0.0]

    def step(self, action):
        self.position = min(max(self.position + (1 if action == 1 else -1), 0),
                            self.length - 1)
        self.steps += 1
        terminated = self.position == self.length - 1
        reward = 1.0 if terminated else -0.04
        return self.observe(), reward, terminated, self.steps >= self.limit


def deep_q_network(torch, nn, F):
    """DQN: Transitions in a deque, sampled by ``random.sample``; an epsilon-greedy policy
    (``max(1).indices.view(1, 1)``); the batch by ``torch.cat`` and ``Transition(*zip(...))``;
    the non-final mask from a tuple of bools; ``gather`` of the taken actions; the target
    net's best value under no_grad; SmoothL1Loss, AdamW(amsgrad=True), clip_grad_value_; the
    target net soft-updated through two state_dicts."""
    torch.manual_seed(41)
    draws = random.Random(17)
    Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))

    class ReplayMemory:
        def __init__(self, capacity):
            self.memory = deque([], maxlen=capacity)

        def push(self, *args):
            self.memory.append(Transition(*args))

        def sample(self, batch_size):
            return draws.sample(self.memory, batch_size)

        def __len__(self):
            return len(self.memory)

    class DQN(nn.Module):
        def __init__(self, n_observations, n_actions):
            super().__init__()
            self.layer1 = nn.Linear(n_observations, 24)
            self.layer2 = nn.Linear(24, 24)
            self.layer3 = nn.Linear(24, n_actions)

        def forward(self, x):
            x = F.relu(self.layer1(x))
            x = F.relu(self.layer2(x))
            return self.layer3(x)

    batch_size, gamma, eps_start, eps_end, eps_decay, tau, lr = 6, 0.9, 0.9, 0.05, 40, 0.01, 3e-3
    dtype = torch.get_default_dtype()
    env = GridWalk()
    policy_net, target_net = DQN(2, 2), DQN(2, 2)
    target_net.load_state_dict(policy_net.state_dict())
    init = snapshot(policy_net)
    optimizer = torch.optim.AdamW(policy_net.parameters(), lr=lr, amsgrad=True)
    memory = ReplayMemory(200)
    steps_done, actions, losses, first_grads = 0, [], [], None

    def select_action(state):
        nonlocal steps_done
        sample = draws.random()
        threshold = eps_end + (eps_start - eps_end) * math.exp(-1.0 * steps_done / eps_decay)
        steps_done += 1
        if sample > threshold:
            with torch.no_grad():
                return policy_net(state).max(1).indices.view(1, 1)
        return torch.tensor([[draws.randrange(2)]], dtype=torch.long)

    def optimize_model():
        nonlocal first_grads
        if len(memory) < batch_size:
            return
        transitions = memory.sample(batch_size)
        batch = Transition(*zip(*transitions))
        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)),
                                      dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)

        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(batch_size)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * gamma) + reward_batch

        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        if first_grads is None:
            first_grads = gradients(policy_net)
        optimizer.step()
        losses.append(loss.item())

    for episode in range(4):
        state = torch.tensor(env.reset(start=episode % 3), dtype=dtype).unsqueeze(0)
        for _ in range(env.limit):
            action = select_action(state)
            actions.append(action.item())
            observation, reward, terminated, truncated = env.step(action.item())
            reward = torch.tensor([reward])
            next_state = (None if terminated else
                          torch.tensor(observation, dtype=dtype).unsqueeze(0))
            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model()

            target_net_state_dict = target_net.state_dict()
            policy_net_state_dict = policy_net.state_dict()
            for key in policy_net_state_dict:
                target_net_state_dict[key] = (policy_net_state_dict[key] * tau
                                              + target_net_state_dict[key] * (1 - tau))
            target_net.load_state_dict(target_net_state_dict)
            if terminated or truncated:
                break
    return {"init": init, "actions": actions, "losses": losses, "first_grads": first_grads,
            "policy": snapshot(policy_net), "target": snapshot(target_net),
            "memory": len(memory)}


# ----- adversarial examples: the fast gradient sign method ----------------------------------
def fgsm_attack(torch, nn, F):
    """FGSM: a small classifier trained a few steps, then for each epsilon every example it
    gets right is perturbed by epsilon·sign of the input's gradient (``data.requires_grad =
    True``, ``F.nll_loss``, ``model.zero_grad()``, ``data.grad.data``) in the denormalised
    image (``torch.tensor(mean).view(1, -1, 1, 1)``), clamped to [0, 1], normalised again and
    classified again (``output.max(1, keepdim=True)[1]``, ``.item()``)."""
    torch.manual_seed(42)
    mean, std = [0.2], [0.35]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
            self.conv2 = nn.Conv2d(4, 8, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(32, 16)
            self.fc2 = nn.Linear(16, 3)

        def forward(self, x):
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 32)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, training=self.training)
            return F.log_softmax(self.fc2(x), dim=1)

    def normalize(batch):
        return (batch - torch.tensor(mean).view(1, -1, 1, 1)) / torch.tensor(std).view(1, -1,
                                                                                        1, 1)

    def denorm(batch, mean=mean, std=std):
        if isinstance(mean, list):
            mean = torch.tensor(mean)
        if isinstance(std, list):
            std = torch.tensor(std)
        return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)

    def attack(image, epsilon, data_grad):
        sign_data_grad = data_grad.sign()
        perturbed_image = image + epsilon * sign_data_grad
        return torch.clamp(perturbed_image, 0, 1)

    model = Net()
    init = snapshot(model)
    images = torch.rand(8, 1, 20, 20)
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 1, 0])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    model.train()
    train_losses = []
    for _ in range(6):
        optimizer.zero_grad()
        loss = F.nll_loss(model(normalize(images)), labels)
        loss.backward()
        optimizer.step()
        train_losses.append(loss.item())

    model.eval()
    results = {"init": init, "train_losses": train_losses, "trained": snapshot(model)}
    for epsilon in (0.0, 0.4):
        correct, examples, input_grads = 0, [], []
        for index in range(len(images)):
            data, target = normalize(images[index:index + 1]), labels[index:index + 1]
            data.requires_grad = True
            output = model(data)
            init_pred = output.max(1, keepdim=True)[1]
            if init_pred.item() != target.item():
                continue
            loss = F.nll_loss(output, target)
            model.zero_grad()
            loss.backward()
            data_grad = data.grad.data
            input_grads.append(data_grad.clone())
            perturbed_data = attack(denorm(data), epsilon, data_grad)
            output = model(normalize(perturbed_data))
            final_pred = output.max(1, keepdim=True)[1]
            if final_pred.item() == target.item():
                correct += 1
            examples.append((init_pred.item(), final_pred.item(),
                             perturbed_data.squeeze().detach().cpu().numpy()))
        results[f"eps={epsilon}"] = {"accuracy": correct / float(len(images)),
                                     "examples": examples, "input_grads": input_grads}
    return results


# ----- fusing convolution and batch norm with custom Functions ------------------------------
def fused_conv_batch_norm(torch, nn, F):
    """A convolution and a batch norm as custom autograd.Functions with backward written by
    hand (``torch.nn.grad.conv2d_input`` / ``conv2d_weight``; the norm's gradient derived for
    an unbiased variance and eps added to the standard deviation), then one Function that
    fuses both and recomputes the convolution in backward; each gradchecked in double; a
    small net on the fused Function and the same net on the two Functions trained side by
    side."""
    torch.manual_seed(43)
    conv_grad = torch.nn.grad

    class Conv2D(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X, weight):
            ctx.save_for_backward(X, weight)
            return F.conv2d(X, weight)

        @staticmethod
        def backward(ctx, grad_out):
            X, weight = ctx.saved_tensors
            return (conv_grad.conv2d_input(X.shape, weight, grad_out),
                    conv_grad.conv2d_weight(X, weight.shape, grad_out))

    def per_channel(t):
        return t[None, :, None, None]

    def norm_forward(ctx, X, eps):
        # statistics over (N, H, W) per channel; the std unbiased and eps outside the root
        count = X.numel() / X.size(1)
        mean = X.sum(dim=(0, 2, 3)) / count
        std = torch.sqrt(X.var(dim=(0, 2, 3), unbiased=True))
        ctx.count, ctx.eps = count, eps
        return (X - per_channel(mean)) / per_channel(std + eps), mean, std

    def norm_backward(grad_out, X, mean, std, count, eps):
        # y = (x - m)/(s + eps): dy/dx = (g - mean g)/(s + eps)
        #   - (x - m)·sum(g·(x - m)) / ((s + eps)²·(count - 1)·s)
        centred = X - per_channel(mean)
        denom = per_channel(std + eps)
        spread = (grad_out * centred).sum(dim=(0, 2, 3))
        grad = (grad_out - per_channel(grad_out.sum(dim=(0, 2, 3)) / count)) / denom
        return grad - centred * per_channel(spread / ((std + eps) ** 2 * (count - 1) * std))

    class BatchNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X, eps=1e-3):
            out, mean, std = norm_forward(ctx, X, eps)
            ctx.save_for_backward(X, mean, std)
            return out

        @staticmethod
        def backward(ctx, grad_out):
            X, mean, std = ctx.saved_tensors
            return norm_backward(grad_out, X, mean, std, ctx.count, ctx.eps), None

    class FusedConvBN2DFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X, conv_weight, eps=1e-3):
            assert X.ndim == 4
            # only the inputs are kept: backward recomputes the convolution's output
            ctx.save_for_backward(X, conv_weight)
            out, mean, std = norm_forward(ctx, F.conv2d(X, conv_weight), eps)
            ctx.mean, ctx.std = mean, std
            return out

        @staticmethod
        def backward(ctx, grad_out):
            X, conv_weight = ctx.saved_tensors
            Y = F.conv2d(X, conv_weight)
            grad_Y = norm_backward(grad_out, Y, ctx.mean, ctx.std, ctx.count, ctx.eps)
            return (conv_grad.conv2d_input(X.shape, conv_weight, grad_Y),
                    conv_grad.conv2d_weight(X, conv_weight.shape, grad_Y), None)

    results = {}
    dt = torch.double
    weight = torch.rand(2, 2, 2, 2, requires_grad=True, dtype=dt)
    X = torch.rand(2, 2, 3, 3, requires_grad=True, dtype=dt)
    results["gradcheck conv"] = torch.autograd.gradcheck(Conv2D.apply, (X, weight))
    Xn = torch.rand(2, 3, 3, 3, requires_grad=True, dtype=dt)
    results["gradcheck bn"] = torch.autograd.gradcheck(BatchNorm.apply, (Xn,))
    results["gradcheck fused"] = torch.autograd.gradcheck(FusedConvBN2DFunction.apply,
                                                          (X, weight))

    class FusedConvBN(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, eps=1e-3):
            super().__init__()
            shape = (out_channels, in_channels, kernel_size, kernel_size)
            self.conv_weight = nn.Parameter(torch.empty(*shape))
            nn.init.kaiming_uniform_(self.conv_weight, a=math.sqrt(5))
            self.eps = eps

        def forward(self, X):
            return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

    class Unfused(FusedConvBN):
        def forward(self, X):
            return BatchNorm.apply(Conv2D.apply(X, self.conv_weight), self.eps)

    def net(block):
        return nn.Sequential(block(1, 4, 3), nn.ReLU(), block(4, 6, 3), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3),
                             nn.LogSoftmax(dim=1))

    data = torch.randn(8, 1, 9, 9)
    target = torch.tensor([0, 1, 2, 1, 0, 2, 2, 1])
    for name, block in (("fused", FusedConvBN), ("unfused", Unfused)):
        torch.manual_seed(44)
        model = net(block)
        state = {"init": snapshot(model), "losses": []}
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        for step in range(3):
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            if step == 0:
                state["output"], state["grads"] = output, gradients(model)
            optimizer.step()
            state["losses"].append(loss.item())
        state["after"] = snapshot(model)
        results[name] = state
    return results


# ----- double backward with custom Functions ------------------------------------------------
def double_backward_functions(torch, nn, F):
    """Custom Functions whose backward is itself differentiable: one saving its input, one its
    output, one returning its intermediate results as outputs so that backward's use of them
    is tracked, one with a non-differentiable output (``mark_non_differentiable``); each
    gradchecked and gradgradchecked, and its first and second derivatives taken by
    ``autograd.grad(create_graph=True)``."""
    torch.manual_seed(45)

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)     # an input: backward's use of it is recorded
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return grad_out * 2 * x

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = torch.exp(x)
            ctx.save_for_backward(result)     # an output: its own graph leads back to x
            return result

        @staticmethod
        def backward(ctx, grad_out):
            (result,) = ctx.saved_tensors
            return grad_out * result

    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx, expnegx = torch.exp(x), torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            # the intermediates leave as outputs so that the graph knows where they came from
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, grad_expx, grad_expnegx):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += grad_expx * expx
            grad_input -= grad_expnegx * expnegx
            return grad_input

    def sinh(x):
        return Sinh.apply(x)[0]

    class RowMax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, indices = x.max(dim=1)
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(x, indices)
            return values, indices

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            x, indices = ctx.saved_tensors
            grad = torch.zeros_like(x)
            return grad.scatter(1, indices.unsqueeze(1), grad_values.unsqueeze(1))

    def rowmax_cubed(x):
        values, indices = RowMax.apply(x)
        return Square.apply(values) * values, indices

    x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
    results = {}
    functions = {"square": Square.apply, "exp": Exp.apply, "sinh": sinh,
                 "rowmax": lambda x: rowmax_cubed(x)[0]}
    for name, fn in functions.items():
        results[f"{name} gradcheck"] = torch.autograd.gradcheck(fn, x)
        results[f"{name} gradgradcheck"] = torch.autograd.gradgradcheck(fn, x)
        out = fn(x)
        weights = torch.linspace(0.5, 1.5, out.numel(), dtype=torch.double).view(out.shape)
        (first,) = torch.autograd.grad(out, x, weights, create_graph=True)
        (second,) = torch.autograd.grad(first.sin().sum(), x)
        results[name] = {"out": out, "first": first, "second": second}
    values, indices = RowMax.apply(x)
    results["indices"] = {"indices": indices, "requires_grad": indices.requires_grad,
                          "values_requires_grad": values.requires_grad}
    return results


# ----- what is torch.nn really? ----------------------------------------------------------
def nn_really(torch, nn, F):
    """The walk from raw tensors to torch.nn: weights from ``randn / sqrt(784)`` made to need
    grad, log-softmax by hand, the negative log-likelihood by indexing, an update under
    no_grad and ``grad.zero_()``; then F.cross_entropy, an nn.Module of nn.Parameters,
    nn.Linear, optim.SGD, TensorDataset and DataLoader, a ``fit`` with validation, a CNN, a
    ``Lambda`` module in nn.Sequential with AdaptiveAvgPool2d, a WrappedDataLoader; on
    synthetic 28x28 "digits"."""
    torch.manual_seed(46)
    TensorDataset = torch.utils.data.TensorDataset
    DataLoader = torch.utils.data.DataLoader
    n_train, n_valid, bs, lr, epochs = 96, 48, 32, 0.5, 1
    x_train, x_valid = torch.rand(n_train, 784), torch.rand(n_valid, 784)
    y_train = (x_train[:, :392].sum(1) * 3).long() % 10
    y_valid = (x_valid[:, :392].sum(1) * 3).long() % 10
    results = {}

    weights = torch.randn(784, 10) / math.sqrt(784)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    loss_func = nll
    by_hand = []
    for _epoch in range(epochs):
        for i in range((n_train - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb, yb = x_train[start_i:end_i], y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
            by_hand.append(loss.item())
    results["by hand"] = {"losses": by_hand, "weights": weights, "bias": bias,
                          "accuracy": accuracy(model(x_valid), y_valid).item()}
    results["cross_entropy"] = F.cross_entropy(x_valid @ weights + bias, y_valid).item()

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    logistic = Mnist_Logistic()
    for i in range((n_train - 1) // bs + 1):
        xb, yb = x_train[i * bs:i * bs + bs], y_train[i * bs:i * bs + bs]
        loss = F.cross_entropy(logistic(xb), yb)
        loss.backward()
        with torch.no_grad():
            for p in logistic.parameters():
                p -= p.grad * lr
            logistic.zero_grad()
    results["Parameters"] = snapshot(logistic)

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        history = []
        for _epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                history.append(loss_batch(model, loss_func, xb, yb, opt)[0])
            model.eval()
            with torch.no_grad():
                losses, nums = zip(*[loss_batch(model, loss_func, xb, yb)
                                     for xb, yb in valid_dl])
            history.append(float(np.sum(np.multiply(losses, nums)) / np.sum(nums)))
        return history

    def get_data(train_ds, valid_ds, bs):
        return (DataLoader(train_ds, batch_size=bs, shuffle=True),
                DataLoader(valid_ds, batch_size=bs * 2))

    train_ds, valid_ds = TensorDataset(x_train, y_train), TensorDataset(x_valid, y_valid)
    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)

    class Mnist_LinearModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb):
            return self.lin(xb)

    linear = Mnist_LinearModel()
    opt = torch.optim.SGD(linear.parameters(), lr=lr)
    results["Linear"] = {"history": fit(epochs, linear, F.cross_entropy, opt, train_dl,
                                        valid_dl), "after": snapshot(linear)}

    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(8, 8, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(8, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))

    cnn = Mnist_CNN()
    opt = torch.optim.SGD(cnn.parameters(), lr=0.1, momentum=0.9)
    results["CNN"] = {"history": fit(epochs, cnn, F.cross_entropy, opt, train_dl, valid_dl),
                      "after": snapshot(cnn)}

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x, y):
        return x.view(-1, 1, 28, 28), y

    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl = dl
            self.func = func

        def __len__(self):
            return len(self.dl)

        def __iter__(self):
            for b in self.dl:
                yield self.func(*b)

    train_dl = WrappedDataLoader(train_dl, preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)
    sequential = nn.Sequential(
        nn.Conv2d(1, 8, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 8, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    init = snapshot(sequential)
    opt = torch.optim.SGD(sequential.parameters(), lr=0.1, momentum=0.9)
    results["Sequential"] = {"init": init, "batches": len(train_dl),
                             "history": fit(epochs, sequential, F.cross_entropy, opt, train_dl,
                                            valid_dl), "after": snapshot(sequential)}
    return results


# ----- spatial transformer networks ---------------------------------------------------------
def spatial_transformer(torch, nn, F):
    """A classifier behind a spatial transformer: a localisation net regresses the 2x3 affine
    matrix (its last layer started at the identity by ``weight.data.zero_()`` and
    ``bias.data.copy_``), ``F.affine_grid`` and ``F.grid_sample`` warp the input; dropout by
    ``F.dropout(x, training=self.training)``; a few SGD steps, then the warped images of a
    batch in eval mode."""
    torch.manual_seed(47)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, kernel_size=5)
            self.conv2 = nn.Conv2d(6, 8, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(128, 20)
            self.fc2 = nn.Linear(20, 4)
            self.localization = nn.Sequential(
                nn.Conv2d(1, 6, kernel_size=7), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
                nn.Conv2d(6, 8, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
            self.fc_loc = nn.Sequential(nn.Linear(8 * 3 * 3, 16), nn.ReLU(True),
                                        nn.Linear(16, 3 * 2))
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

        def stn(self, x):
            xs = self.localization(x)
            xs = xs.view(-1, 8 * 3 * 3)
            theta = self.fc_loc(xs)
            theta = theta.view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size())
            return F.grid_sample(x, grid), theta

        def forward(self, x):
            x, theta = self.stn(x)
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 128)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, training=self.training)
            return F.log_softmax(self.fc2(x), dim=1), theta

    model = Net()
    init = snapshot(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.rand(6, 1, 28, 28)
    target = torch.tensor([0, 3, 1, 2, 3, 0])
    model.train()
    losses, first = [], None
    for _ in range(3):
        optimizer.zero_grad()
        output, theta = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        if first is None:
            first = {"output": output, "theta": theta, "grads": gradients(model)}
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        warped, theta = model.stn(data[:2])
        output, _ = model(data)
    return {"init": init, "first": first, "losses": losses, "after": snapshot(model),
            "theta": theta, "warped": warped, "eval": output}

"""Programs in the styles of a third set of PyTorch's own tutorials: forward-mode automatic
differentiation, parametrizations, neural style transfer, hooks for the tensors autograd saves,
the optimizer's and learning-rate schedulers' habits, and custom autograd.Functions under the
``torch.func`` transforms.

Each program takes one library's module triple (torch, nn, F), seeds torch's generator, runs
on synthetic data in the default dtype and returns what it would print: numbers, flags,
strings and the values of small tensors as lists. ``test_public_tutorial_files_c.py`` runs it
under both libraries and compares. The models, names, sizes and constants are the programs'
own."""

import copy

import numpy as np

from program_output import values


# ----- forward-mode automatic differentiation ---------------------------------------------------

def forward_mode_ad(torch, nn, F):
    """Dual tensors inside ``dual_level``: a function of one dual and one plain input, the
    tangent gone once the level exits, a module's parameters swapped for duals (by
    ``delattr``/``setattr`` and by ``functional_call``), ``torch.func.jvp``, and a custom
    Function whose ``jvp`` uses what its forward stored on ``ctx``."""
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(5)
    printed = []

    def surface(x, y):
        return x.sin() * y + y ** 2

    primal, tangent, other = torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4)
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        unpacked = fwAD.unpack_dual(dual)
        printed += [unpacked.tangent is tangent, fwAD.unpack_dual(other).tangent is None]
        out = surface(dual, other)
        p, t = fwAD.unpack_dual(out)
        printed += [values(p), values(t), values(tangent * primal.cos() * other)]
    printed.append(fwAD.unpack_dual(out).tangent is None)

    model = nn.Linear(4, 3)
    inputs = torch.randn(6, 4)
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: torch.rand_like(p) for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        by_attributes = fwAD.unpack_dual(model(inputs)).tangent
    printed.append(values(by_attributes))

    fresh = nn.Linear(4, 3)
    with fwAD.dual_level():
        duals = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
        out = torch.func.functional_call(fresh, duals, (inputs,))
        by_call = fwAD.unpack_dual(out).tangent
    printed += [torch.allclose(by_call, by_attributes), values(by_call)]

    def loss_of_weight(weight):
        return F.mse_loss(inputs @ weight.t(), torch.zeros(6, 3))

    weight = params["weight"].detach()
    value, directional = torch.func.jvp(loss_of_weight, (weight,), (tangents["weight"],))
    printed += [value.item(), directional.item()]

    class Exponential(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = torch.exp(x)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, x_tangent):
            out_tangent = x_tangent * ctx.result
            del ctx.result
            return out_tangent

    x = torch.randn(2, 5, dtype=torch.float64)
    dx = torch.randn(2, 5, dtype=torch.float64)
    with fwAD.dual_level():
        out = Exponential.apply(fwAD.make_dual(x, dx))
        jvp = fwAD.unpack_dual(out).tangent
    printed += [values(jvp), torch.allclose(jvp, dx * x.exp())]
    x.requires_grad_(True)
    printed.append(torch.autograd.gradcheck(Exponential.apply, (x,), check_forward_ad=True,
                                            check_backward_ad=False,
                                            check_batched_grad=False))
    return printed


# ----- parametrizations -------------------------------------------------------------------------

def parametrizations(torch, nn, F):
    """``register_parametrization`` with a symmetric and a skew-symmetric map (chained with
    the matrix exponential into an orthogonal weight), ``parametrize.cached()``, assignment
    through ``right_inverse``, a tuple-valued ``right_inverse`` (``original0``/``original1``),
    ``remove_parametrizations`` both ways and ``parametrizations.orthogonal``, trained."""
    parametrize = torch.nn.utils.parametrize
    torch.manual_seed(9)
    printed = []

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Skew(nn.Module):
        def forward(self, X):
            upper = X.triu(1)
            return upper - upper.transpose(-1, -2)

    class MatrixExponential(nn.Module):
        def forward(self, X):
            return torch.matrix_exp(X)

    layer = nn.Linear(4, 4)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    W = layer.weight
    printed += [torch.allclose(W, W.T), values(W), type(layer).__name__,
                parametrize.is_parametrized(layer), parametrize.is_parametrized(layer, "bias"),
                sorted(name for name, _ in layer.named_parameters()),
                list(layer.parametrizations.weight.original.shape)]

    rotation = nn.Linear(3, 3)
    parametrize.register_parametrization(rotation, "weight", Skew())
    parametrize.register_parametrization(rotation, "weight", MatrixExponential())
    Q = rotation.weight
    printed += [torch.allclose(Q.T @ Q, torch.eye(3), atol=1e-5), values(Q),
                len(rotation.parametrizations.weight)]

    x = torch.randn(5, 4)
    with parametrize.cached():
        cached = [layer(x).sum().item() for _ in range(3)]
    printed += [cached, layer(x).sum().item()]

    target = torch.randn(4, 4)
    target = target + target.T
    layer.weight = target
    printed += [torch.allclose(layer.weight, target),
                values(layer.parametrizations.weight.original)]

    class Sum(nn.Module):
        def forward(self, X, Y):
            return X + Y

        def right_inverse(self, Z):
            return Z, torch.zeros_like(Z)

    split = nn.Linear(3, 2)
    before = split.weight.detach().clone()
    parametrize.register_parametrization(split, "weight", Sum())
    weight_params = split.parametrizations.weight
    printed += [hasattr(weight_params, "original0"), hasattr(weight_params, "original1"),
                torch.equal(weight_params.original0, before),
                values(weight_params.original1), torch.equal(split.weight, before)]
    with torch.no_grad():
        weight_params.original1.fill_(0.5)
    printed.append(values(split.weight))

    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        loss = layer(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        printed.append(loss.item())
    printed.append(values(layer.weight))
    kept = layer.weight.detach().clone()
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
    printed += [type(layer).__name__, torch.equal(layer.weight, kept),
                isinstance(layer.weight, nn.Parameter)]

    other = nn.Linear(4, 4)
    parametrize.register_parametrization(other, "weight", Symmetric())
    original = other.parametrizations.weight.original.detach().clone()
    parametrize.remove_parametrizations(other, "weight", leave_parametrized=False)
    printed += [torch.equal(other.weight, original), torch.allclose(other.weight, other.weight.T)]

    orth = torch.nn.utils.parametrizations.orthogonal(nn.Linear(4, 4))
    printed.append(torch.allclose(orth.weight.T @ orth.weight, torch.eye(4), atol=1e-5))
    optimizer = torch.optim.Adam(orth.parameters(), lr=0.05)
    goal = torch.randn(8, 4)
    inputs = torch.randn(8, 4)
    for _ in range(4):
        optimizer.zero_grad()
        loss = F.mse_loss(orth(inputs), goal)
        loss.backward()
        optimizer.step()
        printed.append(loss.item())
    printed += [torch.allclose(orth.weight.T @ orth.weight, torch.eye(4), atol=1e-5),
                values(orth.weight)]
    return printed


# ----- neural style transfer --------------------------------------------------------------------

def style_transfer(torch, nn, F, steps=2, max_iter=20):
    """A small convolutional feature extractor built here (in place of a pretrained VGG), a
    ``Normalization`` module first, content and style losses (a Gram matrix) inserted after
    chosen convolutions, the model cut after the last loss, and ``optim.LBFGS`` on the input
    image itself with a closure that clamps it to [0, 1] under ``no_grad``."""
    torch.manual_seed(17)
    size = 12
    content_img = torch.rand(1, 3, size, size)
    style_img = torch.rand(1, 3, size, size)
    features = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(inplace=True),
                             nn.Conv2d(6, 6, 3, padding=1), nn.ReLU(inplace=True),
                             nn.MaxPool2d(2),
                             nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(inplace=True),
                             nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True)).eval()
    features.requires_grad_(False)
    mean, std = torch.tensor([0.485, 0.456, 0.406]), torch.tensor([0.229, 0.224, 0.225])

    def gram_matrix(input):
        a, b, c, d = input.size()
        flat = input.view(a * b, c * d)
        G = torch.mm(flat, flat.t())
        return G.div(a * b * c * d)

    class ContentLoss(nn.Module):
        def __init__(self, target):
            super().__init__()
            self.target = target.detach()

        def forward(self, input):
            self.loss = F.mse_loss(input, self.target)
            return input

    class StyleLoss(nn.Module):
        def __init__(self, target_feature):
            super().__init__()
            self.target = gram_matrix(target_feature).detach()

        def forward(self, input):
            self.loss = F.mse_loss(gram_matrix(input), self.target)
            return input

    class Normalization(nn.Module):
        def __init__(self, mean, std):
            super().__init__()
            self.mean = mean.clone().detach().view(-1, 1, 1)
            self.std = std.clone().detach().view(-1, 1, 1)

        def forward(self, img):
            return (img - self.mean) / self.std

    content_layers, style_layers = ["conv_3"], ["conv_1", "conv_2", "conv_3", "conv_4"]
    model = nn.Sequential(Normalization(mean, std))
    content_losses, style_losses = [], []
    i = 0
    for layer in features.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = f"conv_{i}"
        elif isinstance(layer, nn.ReLU):
            name = f"relu_{i}"
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = f"pool_{i}"
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            content_losses.append(ContentLoss(target))
            model.add_module(f"content_loss_{i}", content_losses[-1])
        if name in style_layers:
            target_feature = model(style_img).detach()
            style_losses.append(StyleLoss(target_feature))
            model.add_module(f"style_loss_{i}", style_losses[-1])
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], (ContentLoss, StyleLoss)):
            break
    model = model[:(i + 1)]
    printed = [len(model), [name for name, _ in model.named_children()]]

    input_img = content_img.clone()
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = torch.optim.LBFGS([input_img], max_iter=max_iter)
    style_weight, content_weight = 1e4, 1.0
    scores = []

    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        model(input_img)
        style_score = sum(sl.loss for sl in style_losses) * style_weight
        content_score = sum(cl.loss for cl in content_losses) * content_weight
        loss = style_score + content_score
        loss.backward()
        scores.append((style_score.item(), content_score.item()))
        return style_score + content_score

    for _ in range(steps):
        printed.append(optimizer.step(closure).item())
    with torch.no_grad():
        input_img.clamp_(0, 1)
    printed += [len(scores), scores[:4], scores[-1], values(input_img)[:24],
                input_img.min().item(), input_img.max().item()]
    return printed


# ----- hooks for saved tensors ------------------------------------------------------------------

def saved_tensor_hooks(torch, nn, F):
    """What a node saves (``_saved_self``, ``_saved_result``, equal to but not the tensor),
    hooks on one saved tensor through ``_raw_saved_self``, ``saved_tensors_hooks`` around a
    forward (counting, and packing to copies), ``save_on_cpu``, and gradient hooks on a tensor
    (``register_hook``) and a module (``register_full_backward_hook``)."""
    torch.manual_seed(21)
    printed = []
    a = torch.randn(5, requires_grad=True)
    y = a.pow(2)
    printed += [a.equal(y.grad_fn._saved_self), a is y.grad_fn._saved_self]
    z = a.exp()
    printed += [z.equal(z.grad_fn._saved_result), z is z.grad_fn._saved_result]

    seen = []

    def pack_hook(x):
        seen.append(("pack", tuple(x.shape)))
        return x * 1

    def unpack_hook(x):
        seen.append(("unpack", tuple(x.shape)))
        return x

    w = a.pow(2)
    w.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
    w.sum().backward()
    printed += [seen[:], values(a.grad)]

    seen.clear()
    b = torch.randn(3, 4, requires_grad=True)
    c = torch.randn(4, 2, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        out = (b @ c).tanh().sum()
    out.backward()
    printed += [len([s for s in seen if s[0] == "pack"]), len(seen) % 2 == 0,
                values(b.grad), values(c.grad)]

    store = {}

    def pack_to_store(x):
        key = len(store)
        store[key] = x.detach().clone()
        return key

    def unpack_from_store(key):
        return store[key]

    d = torch.randn(6, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack_to_store, unpack_from_store):
        loss = (d.sin() * d.cos()).sum()
    loss.backward()
    printed += [len(store) > 0, values(d.grad), values(torch.cos(2 * d))]

    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 1))
    inputs = torch.randn(3, 4)
    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        model(inputs).sum().backward()
    reference = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(inputs).sum().backward()
    printed.append(all(torch.equal(p.grad, r) for p, r in zip(model.parameters(), reference)))

    e = torch.randn(4, requires_grad=True)
    handle = e.register_hook(lambda grad: grad * 2)
    (e * e).sum().backward()
    printed.append(values(e.grad))
    handle.remove()
    e.grad = None
    (e * e).sum().backward()
    printed.append(values(e.grad))

    grads_seen = []

    def module_hook(module, grad_input, grad_output):
        grads_seen.append((type(module).__name__, [values(g) for g in grad_output],
                           [None if g is None else values(g) for g in grad_input]))

    handle = model[1].register_full_backward_hook(module_hook)
    x = torch.randn(2, 4, requires_grad=True)
    model(x).sum().backward()
    handle.remove()
    model(x).sum().backward()
    printed += [len(grads_seen), grads_seen, values(x.grad)]
    return printed


# ----- optimizer and learning-rate scheduler habits ---------------------------------------------

def optimizer_habits(torch, nn, F):
    """Step pre- and post-hooks on an optimizer, its state dict saved mid-training and loaded
    into a fresh one (both continue alike), ``zero_grad(set_to_none=False)``, and the
    schedulers ``SequentialLR``, ``ChainedScheduler``, ``ReduceLROnPlateau`` and
    ``CosineAnnealingWarmRestarts`` read through ``get_last_lr()``."""
    lr_scheduler = torch.optim.lr_scheduler
    torch.manual_seed(31)
    printed = []
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    inputs, targets = torch.randn(10, 3), torch.randn(10, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01)
    calls = []
    pre = optimizer.register_step_pre_hook(
        lambda opt, args, kwargs: calls.append(("pre", opt.param_groups[0]["lr"])))
    post = optimizer.register_step_post_hook(lambda opt, args, kwargs: calls.append("post"))

    def train_step(model, optimizer):
        optimizer.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss.item()

    printed.append([train_step(model, optimizer) for _ in range(3)])
    pre.remove()
    post.remove()
    train_step(model, optimizer)
    printed.append(calls)

    state = optimizer.state_dict()
    printed += [sorted(state), sorted(state["state"]), sorted(state["state"][0]),
                state["state"][0]["step"].item(), state["param_groups"][0]["params"]]
    twin = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    twin.load_state_dict(model.state_dict())
    twin_optimizer = torch.optim.AdamW(twin.parameters(), lr=0.5)
    # a copy, as a checkpoint file would give: torch's loaded state shares the saved
    # dict's tensors where dtype and device agree, and the first optimizer keeps updating them
    twin_optimizer.load_state_dict(copy.deepcopy(state))
    printed.append(twin_optimizer.param_groups[0]["lr"])
    ours = [train_step(model, optimizer) for _ in range(3)]
    theirs = [train_step(twin, twin_optimizer) for _ in range(3)]
    printed += [ours, ours == theirs]

    optimizer.zero_grad(set_to_none=False)
    printed.append([p.grad is not None and not p.grad.any().item() for p in model.parameters()])
    optimizer.zero_grad()
    printed.append([p.grad is None for p in model.parameters()])

    def rates(make, steps, metric=None):
        weight = torch.zeros(2, requires_grad=True)
        opt = torch.optim.SGD([weight], lr=0.1, momentum=0.9)
        scheduler = make(opt)
        seen = []
        for step in range(steps):
            weight.sum().backward()
            opt.step()
            opt.zero_grad()
            if metric is None:
                scheduler.step()
                seen.append(scheduler.get_last_lr())
            else:
                scheduler.step(metric[step])
                seen.append(opt.param_groups[0]["lr"])
        return seen, values(weight)

    printed.append(rates(lambda opt: lr_scheduler.SequentialLR(
        opt, [lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3),
              lr_scheduler.ExponentialLR(opt, gamma=0.8)], milestones=[3]), 8))
    printed.append(rates(lambda opt: lr_scheduler.ChainedScheduler(
        [lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2),
         lr_scheduler.ExponentialLR(opt, gamma=0.9)]), 6))
    plateau = [1.0, 0.9, 0.9, 0.9, 0.95, 0.9, 0.92, 0.91, 0.93, 0.5]
    printed.append(rates(lambda opt: lr_scheduler.ReduceLROnPlateau(
        opt, mode="min", factor=0.5, patience=1, threshold=0.01), len(plateau), plateau))
    printed.append(rates(lambda opt: lr_scheduler.CosineAnnealingWarmRestarts(
        opt, T_0=3, T_mult=2, eta_min=0.001), 12))
    return printed


# ----- custom autograd.Function under torch.func ------------------------------------------------

def function_transforms(torch, nn, F):
    """autograd.Functions written for the transforms: ``forward`` without ``ctx``,
    ``setup_context`` saving with ``save_for_backward``; one of torch ops with
    ``generate_vmap_rule = True``, one through NumPy with its own ``vmap`` staticmethod;
    both under ``torch.func.grad``, ``vmap`` and ``jacrev``, against autograd."""
    torch.manual_seed(41)
    printed = []

    class Cube(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    def cube(x):
        return Cube.apply(x)[0]

    x = torch.randn(4)
    printed += [values(cube(x)), values(torch.func.grad(lambda t: cube(t).sum())(x)),
                values(torch.func.vmap(cube)(torch.randn(3, 2)))]
    second = torch.func.grad(torch.func.grad(lambda t: cube(t).sum()))
    printed.append(values(torch.func.vmap(second)(x)))
    printed.append(values(torch.func.jacrev(cube)(x)))

    def to_numpy(t):
        return t.detach().cpu().numpy()

    class NumpyTake(torch.autograd.Function):
        @staticmethod
        def forward(x, ind, ind_inv, dim):
            return torch.tensor(np.take_along_axis(to_numpy(x), to_numpy(ind), dim))

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None, None, None

        @staticmethod
        def vmap(info, in_dims, x, ind, ind_inv, dim):
            x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims
            logical_dim = x.dim() if x_bdim is None else x_bdim
            dim = dim if dim >= 0 else dim + logical_dim
            x = x.movedim(x_bdim, 0) if x_bdim is not None else x.expand(info.batch_size, *x.shape)
            ind = ind.movedim(ind_bdim, 0) if ind_bdim is not None else ind
            ind_inv = ind_inv.movedim(ind_inv_bdim, 0) if ind_inv_bdim is not None else ind_inv
            return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0

    class NumpySort(torch.autograd.Function):
        @staticmethod
        def forward(x, dim):
            ind = np.argsort(to_numpy(x), axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            result = np.take_along_axis(to_numpy(x), ind, axis=dim)
            return torch.tensor(result), torch.tensor(ind), torch.tensor(ind_inv)

        @staticmethod
        def setup_context(ctx, inputs, output):
            _, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output, _0, _1):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

        @staticmethod
        def vmap(info, in_dims, x, dim):
            x_bdim, _ = in_dims
            x = x.movedim(x_bdim, 0)
            dim = dim if dim >= 0 else dim + x.dim() - 1
            result = NumpySort.apply(x, dim + 1)
            return result, (0, 0, 0)

    x = torch.randn(5)
    weights = torch.arange(5.0)
    sorted_x, ind, _ = NumpySort.apply(x, 0)
    printed += [values(sorted_x), ind.tolist(), ind.dtype == torch.int64]

    def weighted_sort(t):
        return (NumpySort.apply(t, 0)[0] * weights).sum()

    by_grad = torch.func.grad(weighted_sort)(x)
    leaf = x.clone().requires_grad_(True)
    weighted_sort(leaf).backward()
    printed += [values(by_grad), torch.equal(by_grad, leaf.grad)]
    batch = torch.randn(3, 5)
    printed.append(values(torch.func.vmap(lambda t: NumpySort.apply(t, 0)[0])(batch)))
    printed.append(values(torch.func.vmap(torch.func.grad(weighted_sort))(batch)))
    printed.append(values(torch.func.vmap(lambda t: NumpySort.apply(t, 0)[0], in_dims=1)(
        batch.T.contiguous())))
    return printed

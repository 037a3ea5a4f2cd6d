"""Programs in the styles of public training recipes that mix data and targets: mixup with
its ``lam`` drawn from a Beta distribution, CutMix boxes cut from image batches, label
smoothing by the keyword and by hand, the focal loss, class weights, gradient accumulation
with gradient clipping, and an exponential moving average of the weights.

Each program takes one library's module triple (torch, nn, F), seeds torch's generator (and
NumPy's, where the recipe draws from it), runs on synthetic data in the default dtype and
returns what it would print: numbers, flags, orders, error class names and the values of
small tensors as lists. ``test_public_model_families.py`` runs it under both libraries and
compares. The models, names, sizes and constants are the programs' own."""

import copy

import numpy as np

from program_output import error_class, values


class SmallConvNet:
    """A tiny CNN for (N, 3, 8, 8) images, built from the library passed in."""

    def __new__(cls, nn, classes=4):
        return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(),
                             nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(8, classes))


# ----- mixup and CutMix ------------------------------------------------------------------------

def mixup_cutmix(torch, nn, F):
    """mixup as the reference code writes it (``np.random.beta``, ``torch.randperm``, the
    criterion mixed by ``lam``) and with ``torch.distributions.Beta``, CutMix's box from
    ``rand_bbox`` pasted by slicing and ``lam`` corrected by the box's area, and a few SGD
    steps of each."""
    torch.manual_seed(0)
    np.random.seed(0)
    printed = []

    def mixup_data(x, y, alpha=1.0):
        lam = np.random.beta(alpha, alpha) if alpha > 0 else 1
        batch_size = x.size()[0]
        index = torch.randperm(batch_size)
        mixed_x = lam * x + (1 - lam) * x[index, :]
        y_a, y_b = y, y[index]
        return mixed_x, y_a, y_b, lam

    def mixup_criterion(criterion, pred, y_a, y_b, lam):
        return lam * criterion(pred, y_a) + (1 - lam) * criterion(pred, y_b)

    def rand_bbox(size, lam):
        W, H = size[2], size[3]
        cut_rat = np.sqrt(1. - lam)
        cut_w, cut_h = int(W * cut_rat), int(H * cut_rat)
        cx, cy = np.random.randint(W), np.random.randint(H)
        bbx1, bby1 = np.clip(cx - cut_w // 2, 0, W), np.clip(cy - cut_h // 2, 0, H)
        bbx2, bby2 = np.clip(cx + cut_w // 2, 0, W), np.clip(cy + cut_h // 2, 0, H)
        return bbx1, bby1, bbx2, bby2

    model = SmallConvNet(nn)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    images, targets = torch.randn(6, 3, 8, 8), torch.randint(0, 4, (6,))
    beta = torch.distributions.Beta(torch.tensor([0.4]), torch.tensor([0.4]))
    for step in range(4):
        if step % 2 == 0:
            inputs, targets_a, targets_b, lam = mixup_data(images, targets, alpha=0.2)
            if step == 2:
                lam = beta.sample().item()
                index = torch.randperm(images.size(0))
                inputs = lam * images + (1 - lam) * images[index]
                targets_b = targets[index]
        else:
            lam = np.random.beta(1.0, 1.0)
            rand_index = torch.randperm(images.size()[0])
            targets_a, targets_b = targets, targets[rand_index]
            bbx1, bby1, bbx2, bby2 = rand_bbox(images.size(), lam)
            inputs = images.clone()
            inputs[:, :, bbx1:bbx2, bby1:bby2] = images[rand_index, :, bbx1:bbx2, bby1:bby2]
            lam = 1 - ((bbx2 - bbx1) * (bby2 - bby1) / (images.size()[-1] * images.size()[-2]))
            printed.append([int(bbx1), int(bby1), int(bbx2), int(bby2)])
        outputs = model(inputs)
        loss = mixup_criterion(criterion, outputs, targets_a, targets_b, lam)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        _, predicted = torch.max(outputs.data, 1)
        correct = (lam * predicted.eq(targets_a.data).cpu().sum().float()
                   + (1 - lam) * predicted.eq(targets_b.data).cpu().sum().float())
        printed += [float(lam), loss.item(), correct.item(), type(lam).__name__]

    # CutMix by torch.randint boxes, on a batch of four images
    x = torch.arange(2 * 1 * 4 * 4, dtype=torch.float32).reshape(2, 1, 4, 4)
    lam = torch.distributions.Beta(1.0, 1.0).sample()
    H, W = x.shape[2:]
    cut = int(H * torch.sqrt(1 - lam))
    cy, cx = torch.randint(H, (1,)).item(), torch.randint(W, (1,)).item()
    y1, y2 = max(cy - cut // 2, 0), min(cy + cut // 2, H)
    x1, x2 = max(cx - cut // 2, 0), min(cx + cut // 2, W)
    x[:, :, y1:y2, x1:x2] = x.flip(0)[:, :, y1:y2, x1:x2]
    printed += [lam.item(), [y1, y2, x1, x2], values(x), lam.dtype == torch.get_default_dtype()]
    return printed


# ----- label smoothing, focal loss and class weights -------------------------------------------

def smoothing_focal_weights(torch, nn, F):
    """Label smoothing by ``F.cross_entropy(label_smoothing=0.1)`` and by hand from soft
    targets (``torch.full_like``, ``scatter_``), the focal loss from
    ``binary_cross_entropy_with_logits(reduction="none")`` and ``torch.exp(-bce)``, inverse
    frequency class weights, and the gradients of each."""
    torch.manual_seed(1)
    printed = []
    logits = torch.randn(8, 5, requires_grad=True)
    target = torch.tensor([0, 1, 1, 2, 4, 4, 4, 3])

    class LabelSmoothingCrossEntropy(nn.Module):
        def __init__(self, smoothing=0.1):
            super().__init__()
            self.smoothing = smoothing
            self.confidence = 1.0 - smoothing

        def forward(self, x, target):
            logprobs = F.log_softmax(x, dim=-1)
            nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1)).squeeze(1)
            smooth_loss = -logprobs.mean(dim=-1)
            return (self.confidence * nll_loss + self.smoothing * smooth_loss).mean()

    def smooth_one_hot(target, classes, smoothing=0.1):
        true_dist = torch.full_like(logits, smoothing / (classes - 1))
        true_dist.scatter_(1, target.data.unsqueeze(1), 1.0 - smoothing)
        return true_dist

    builtin = F.cross_entropy(logits, target, label_smoothing=0.1)
    by_hand = LabelSmoothingCrossEntropy(0.1)(logits, target)
    soft = smooth_one_hot(target, 5)
    soft_loss = torch.sum(-soft * F.log_softmax(logits, dim=-1), dim=-1).mean()
    by_probs = F.cross_entropy(logits, soft)
    printed += [builtin.item(), by_hand.item(), soft_loss.item(), by_probs.item(),
                abs(builtin.item() - by_hand.item()) < 1e-6, values(soft[0])]
    builtin.backward()
    printed.append(values(logits.grad[:2]))

    counts = torch.bincount(target, minlength=5).to(logits.dtype)
    weights = counts.sum() / (len(counts) * counts.clamp(min=1))
    weighted = nn.CrossEntropyLoss(weight=weights, label_smoothing=0.05)
    printed += [values(weights), weighted(logits, target).item(),
                F.cross_entropy(logits, target, weight=weights, reduction="sum").item(),
                F.nll_loss(F.log_softmax(logits, 1), target, weight=weights,
                           ignore_index=4).item()]

    class FocalLoss(nn.Module):
        def __init__(self, alpha=0.25, gamma=2.0, reduction="mean"):
            super().__init__()
            self.alpha, self.gamma, self.reduction = alpha, gamma, reduction

        def forward(self, inputs, targets):
            bce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
            pt = torch.exp(-bce)
            alpha_t = self.alpha * targets + (1 - self.alpha) * (1 - targets)
            loss = alpha_t * (1 - pt) ** self.gamma * bce
            if self.reduction == "mean":
                return loss.mean()
            return loss.sum() if self.reduction == "sum" else loss

    x = torch.randn(6, 3, requires_grad=True)
    y = (torch.rand(6, 3) > 0.6).to(x.dtype)
    focal = FocalLoss()(x, y)
    focal.backward()
    pos_weight = (y.numel() - y.sum(0)) / y.sum(0).clamp(min=1)
    printed += [focal.item(), values(x.grad[0]), values(FocalLoss(reduction="none")(x, y)[1]),
                F.binary_cross_entropy_with_logits(x, y, pos_weight=pos_weight).item(),
                nn.BCEWithLogitsLoss(weight=torch.tensor([1.0, 2.0, 0.5]))(x, y).item(),
                values(pos_weight)]
    return printed


# ----- gradient accumulation, clipping and an EMA of the weights -------------------------------

def accumulation_clipping_ema(torch, nn, F):
    """Micro-batches whose loss is divided by ``accum_steps``, ``clip_grad_norm_`` returning
    the norm before clipping, ``clip_grad_value_``, an EMA model made by ``copy.deepcopy`` and
    updated by ``mul_().add_(alpha=)`` and by ``lerp_``, its buffers copied, and the EMA
    model's evaluation."""
    torch.manual_seed(2)
    printed = []
    model = nn.Sequential(nn.Linear(4, 16, bias=False), nn.BatchNorm1d(16), nn.SiLU(),
                          nn.Linear(16, 2))
    ema = copy.deepcopy(model)
    ema.eval()
    for p in ema.parameters():
        p.requires_grad_(False)
    twin = copy.deepcopy(ema)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    accum_steps, decay = 2, 0.9
    xs, ys = torch.randn(12, 4), torch.randn(12, 2)
    updates = 0

    @torch.no_grad()
    def update_ema(ema_model, model, decay):
        for ema_p, p in zip(ema_model.parameters(), model.parameters()):
            ema_p.mul_(decay).add_(p.detach(), alpha=1 - decay)
        for ema_b, b in zip(ema_model.buffers(), model.buffers()):
            ema_b.copy_(b)

    optimizer.zero_grad()
    for i, (x, y) in enumerate(zip(xs.split(3), ys.split(3))):
        loss = F.smooth_l1_loss(model(x), y, beta=0.5) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
            after = torch.norm(torch.stack([p.grad.norm(2) for p in model.parameters()]), 2)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            updates += 1
            d = min(decay, (1 + updates) / (10 + updates))
            update_ema(ema, model, d)
            with torch.no_grad():
                for t, p in zip(twin.parameters(), model.parameters()):
                    t.lerp_(p, 1 - d)
            printed += [total_norm.item(), after.item(), d, loss.item() * accum_steps,
                        isinstance(total_norm, torch.Tensor)]
    printed += [values(ema[0].weight[0]), values(ema[1].running_mean[:3]),
                ema[1].num_batches_tracked.item(),
                all(torch.allclose(a, b) for a, b in zip(ema.parameters(), twin.parameters()))]
    with torch.no_grad():
        printed += [values(ema(xs[:2])), values(model.eval()(xs[:2]))]
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.25)
    inf_norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=float("inf"))
    printed += [values(model[3].bias.grad), inf_norm.item(),
                nn.utils.clip_grad_norm_([p for p in model.parameters()], 10.0,
                                         error_if_nonfinite=True).item()]
    model[0].weight.grad[0, 0] = float("nan")
    printed.append(error_class(lambda: nn.utils.clip_grad_norm_(
        model.parameters(), 1.0, error_if_nonfinite=True)))
    return printed


# ----- timm's mixup targets and the weight-averaging helpers -----------------------------------

def timm_mixup_averaging(torch, nn, F):
    """timm's mixup with smoothed one-hot targets (``torch.full(...).scatter_``), the batch
    mixed in place with its flip, ``SoftTargetCrossEntropy``, an EMA by ``torch._foreach_``
    calls, ``torch.optim.swa_utils.AveragedModel`` with ``get_ema_multi_avg_fn`` and with
    ``avg_fn`` over the buffers, and ``update_bn`` over a loader."""
    torch.manual_seed(5)
    np.random.seed(5)
    printed = []
    swa_utils = torch.optim.swa_utils

    def one_hot(x, num_classes, on_value=1., off_value=0.):
        x = x.long().view(-1, 1)
        return torch.full((x.size()[0], num_classes), off_value, device=x.device).scatter_(
            1, x, on_value)

    def mixup_target(target, num_classes, lam=1., smoothing=0.0):
        off_value = smoothing / num_classes
        on_value = 1. - smoothing + off_value
        y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value)
        y2 = one_hot(target.flip(0), num_classes, on_value=on_value, off_value=off_value)
        return y1 * lam + y2 * (1. - lam)

    class SoftTargetCrossEntropy(nn.Module):
        def forward(self, x, target):
            loss = torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1)
            return loss.mean()

    model = nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.GELU(), nn.Linear(8, 3))
    ema_model = swa_utils.AveragedModel(model,
                                        multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9))
    swa_model = swa_utils.AveragedModel(
        model, avg_fn=lambda avg, new, n: 0.8 * avg + 0.2 * new, use_buffers=True)
    foreach_ema = copy.deepcopy(model).requires_grad_(False)
    criterion = SoftTargetCrossEntropy()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(6, 5), torch.tensor([0, 1, 2, 2, 1, 0])
    for _ in range(3):
        lam = float(np.random.beta(0.8, 0.8))
        inputs = x.clone()
        x_flipped = inputs.flip(0).mul_(1. - lam)
        inputs.mul_(lam).add_(x_flipped)
        target = mixup_target(y, 3, lam, smoothing=0.1)
        loss = criterion(model(inputs), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema_model.update_parameters(model)
        swa_model.update_parameters(model)
        with torch.no_grad():
            ema_params, model_params = list(foreach_ema.parameters()), list(model.parameters())
            torch._foreach_mul_(ema_params, 0.9)
            torch._foreach_add_(ema_params, model_params, alpha=0.1)
        printed += [lam, loss.item(), values(target[0]),
                    F.cross_entropy(model(inputs), target, label_smoothing=0.1).item()]
    printed += [ema_model.n_averaged.item(), values(ema_model.module[3].bias),
                values(swa_model.module[1].running_mean[:3]), values(foreach_ema[3].bias),
                values(swa_model.module[3].bias)]
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=3)
    swa_utils.update_bn(((xb,) for xb, _ in loader), ema_model)
    printed += [values(ema_model.module[1].running_var[:3]),
                ema_model.module[1].num_batches_tracked.item()]
    return printed

"""Programs in the style of public LoRA code (loralib, the PEFT tutorials, minLoRA): a
pretrained Linear frozen, low-rank adapters A and B beside it scaled by alpha / r, only the
``lora_`` parameters trained, the update merged into the weight and taken out again, and the
adapters alone saved and loaded; and a parametrization that adds the update to an attention
projection's weight.

Each program takes one library's module triple (torch, nn, F), seeds torch's generator, runs
on synthetic data in the default dtype and returns what it would print: numbers, flags,
orders, error class names and the values of small tensors as lists.
``test_public_model_families.py`` runs it under both libraries and compares. The models, names,
sizes and constants are the programs' own."""

import io
import math

from program_output import error_class, values


# ----- loralib: a Linear with adapters, merged and unmerged ------------------------------------

def lora_linear(torch, nn, F):
    """loralib's ``lora.Linear`` (an ``nn.Linear`` subclass with ``lora_A``, ``lora_B``, the
    scaling ``lora_alpha / r``, dropout on the adapter path, ``train(mode)`` that merges and
    unmerges), ``mark_only_lora_as_trainable``, ``lora_state_dict``, the trainable count by
    ``p.numel()``, a few AdamW steps on a frozen "pretrained" MLP, the merged weight
    against the unmerged output, and the adapters alone saved and loaded into a fresh copy."""
    torch.manual_seed(0)
    printed = []

    class LoRALayer:
        def __init__(self, r, lora_alpha, lora_dropout, merge_weights):
            self.r = r
            self.lora_alpha = lora_alpha
            if lora_dropout > 0.0:
                self.lora_dropout = nn.Dropout(p=lora_dropout)
            else:
                self.lora_dropout = lambda x: x
            self.merged = False
            self.merge_weights = merge_weights

    class Linear(nn.Linear, LoRALayer):
        def __init__(self, in_features, out_features, r=0, lora_alpha=1, lora_dropout=0.0,
                     fan_in_fan_out=False, merge_weights=True, **kwargs):
            nn.Linear.__init__(self, in_features, out_features, **kwargs)
            LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
                               merge_weights=merge_weights)
            self.fan_in_fan_out = fan_in_fan_out
            if r > 0:
                self.lora_A = nn.Parameter(self.weight.new_zeros((r, in_features)))
                self.lora_B = nn.Parameter(self.weight.new_zeros((out_features, r)))
                self.scaling = self.lora_alpha / self.r
                self.weight.requires_grad = False
            self.reset_parameters()
            if fan_in_fan_out:
                self.weight.data = self.weight.data.transpose(0, 1)

        def reset_parameters(self):
            nn.Linear.reset_parameters(self)
            if hasattr(self, "lora_A"):
                nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
                nn.init.zeros_(self.lora_B)

        def train(self, mode=True):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            nn.Linear.train(self, mode)
            if mode:
                if self.merge_weights and self.merged:
                    if self.r > 0:
                        self.weight.data -= T(self.lora_B @ self.lora_A) * self.scaling
                    self.merged = False
            else:
                if self.merge_weights and not self.merged:
                    if self.r > 0:
                        self.weight.data += T(self.lora_B @ self.lora_A) * self.scaling
                    self.merged = True
            return self

        def forward(self, x):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            if self.r > 0 and not self.merged:
                result = F.linear(x, T(self.weight), bias=self.bias)
                result += (self.lora_dropout(x) @ self.lora_A.transpose(0, 1)
                           @ self.lora_B.transpose(0, 1)) * self.scaling
                return result
            return F.linear(x, T(self.weight), bias=self.bias)

    def mark_only_lora_as_trainable(model, bias="none"):
        for n, p in model.named_parameters():
            if "lora_" not in n:
                p.requires_grad = False
        if bias == "lora_only":
            for m in model.modules():
                if isinstance(m, LoRALayer) and hasattr(m, "bias") and m.bias is not None:
                    m.bias.requires_grad = True

    def lora_state_dict(model, bias="none"):
        my_state_dict = model.state_dict()
        if bias == "none":
            return {k: my_state_dict[k] for k in my_state_dict if "lora_" in k}
        return {k: my_state_dict[k] for k in my_state_dict if "lora_" in k or "bias" in k}

    def build(r):
        return nn.Sequential(Linear(6, 12, r=r, lora_alpha=8, lora_dropout=0.1), nn.GELU(),
                             nn.LayerNorm(12),
                             Linear(12, 4, r=r, lora_alpha=8, fan_in_fan_out=True))

    pretrained = build(r=0)
    x = torch.randn(16, 6)
    y = (x[:, :3] - x[:, 3:]).sign().clamp(min=0).long().sum(-1)
    pretrained_state = pretrained.state_dict()

    model = build(r=4)
    result = model.load_state_dict(pretrained_state, strict=False)
    mark_only_lora_as_trainable(model, bias="lora_only")
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    printed += [sorted(result.missing_keys), result.unexpected_keys, trainable, total,
                f"trainable params: {trainable:,d} || all params: {total:,d} "
                f"|| trainable%: {100 * trainable / total:.4f}",
                [n for n, p in model.named_parameters() if p.requires_grad],
                values(model[0].lora_A[0]), values(model[0].lora_B).count(0.0)]

    params = [p for n, p in model.named_parameters() if "lora_" in n or n.endswith("bias")]
    opt = torch.optim.AdamW(params, lr=5e-2, weight_decay=0.0)
    for _ in range(5):
        model.train()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        printed += [loss.item(), model[0].weight.grad is None,
                    round(model[0].lora_B.grad.norm().item(), 6)]

    model.train()
    unmerged = model(x).detach()
    frozen = model[0].weight.detach().clone()
    model.eval()
    merged = model(x)
    delta = model[0].weight - frozen
    printed += [model[0].merged, torch.allclose(merged, unmerged, atol=1e-5),
                torch.linalg.matrix_rank(delta).item(),
                values((delta - model[0].lora_B @ model[0].lora_A * model[0].scaling).abs().max()),
                values(merged[:2])]
    model.train()
    printed += [model[0].merged, (model[0].weight - frozen).abs().max().item() < 1e-5]

    adapters = lora_state_dict(model)
    buffer = io.BytesIO()
    torch.save(adapters, buffer)
    buffer.seek(0)
    fresh = build(r=4)
    fresh.load_state_dict(pretrained_state, strict=False)
    loaded = torch.load(buffer, map_location="cpu", weights_only=True)
    for name in ("0.bias", "3.bias"):
        loaded[name] = model.state_dict()[name]
    missing, unexpected = fresh.load_state_dict(loaded, strict=False)
    fresh.eval()
    model.eval()
    printed += [sorted(adapters), sorted(missing), unexpected,
                torch.equal(fresh(x), model(x)), [list(v.shape) for v in adapters.values()]]
    return printed


# ----- PEFT and minLoRA habits: a wrapper, a parametrization, many adapters -------------------

def lora_wrappers(torch, nn, F):
    """A ``LoRALinear`` wrapper put in place of an attention block's projections by walking
    ``named_modules`` and ``setattr``, the base frozen by ``requires_grad_(False)``, rank-
    stabilised scaling ``alpha / sqrt(r)``; minLoRA's ``register_parametrization`` that adds
    ``B @ A * scale`` to a weight, with ``parametrize.cached()``, the merge by
    ``remove_parametrizations``; and a merge ``W += (B @ A) * scale`` under ``torch.no_grad``
    with its unmerge, the fused QKV projection and two adapters switched on one layer."""
    torch.manual_seed(1)
    parametrize = nn.utils.parametrize
    printed = []

    class LoRALinear(nn.Module):
        def __init__(self, base, rank=4, alpha=8, dropout=0.05, use_rslora=False):
            super().__init__()
            self.base = base
            self.base.requires_grad_(False)
            self.rank = rank
            self.scaling = alpha / math.sqrt(rank) if use_rslora else alpha / rank
            self.lora_dropout = nn.Dropout(dropout)
            self.lora_A = nn.Linear(base.in_features, rank, bias=False)
            self.lora_B = nn.Linear(rank, base.out_features, bias=False)
            nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
            nn.init.zeros_(self.lora_B.weight)
            self.merged = False

        def forward(self, x):
            out = self.base(x)
            if self.merged:
                return out
            return out + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling

        @torch.no_grad()
        def merge(self):
            self.base.weight += (self.lora_B.weight @ self.lora_A.weight) * self.scaling
            self.merged = True

        @torch.no_grad()
        def unmerge(self):
            self.base.weight -= (self.lora_B.weight @ self.lora_A.weight) * self.scaling
            self.merged = False

    class Attention(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2)
                       for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(13, 8)
            self.attn = Attention(8, 2)
            self.mlp = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 8))
            self.head = nn.Linear(8, 13)

        def forward(self, idx):
            h = self.embed(idx)
            h = h + self.attn(h)
            return self.head(h + self.mlp(h))

    def inject(model, target_modules, **options):
        for name, module in list(model.named_modules()):
            if isinstance(module, nn.Linear) and name.split(".")[-1] in target_modules:
                parent_name, _, child = name.rpartition(".")
                parent = model.get_submodule(parent_name)
                setattr(parent, child, LoRALinear(module, **options))

    model = Model()
    base_state = {k: v.clone() for k, v in model.state_dict().items()}
    idx = torch.randint(0, 13, (2, 6))
    before = model(idx).detach()
    model.requires_grad_(False)
    inject(model, ["qkv", "proj"], rank=2, alpha=4, use_rslora=True)
    printed += [[n for n, p in model.named_parameters() if p.requires_grad],
                sum(p.numel() for p in model.parameters() if p.requires_grad),
                torch.equal(model(idx), before), type(model.attn.qkv).__name__,
                model.attn.qkv.scaling]

    optimizer = torch.optim.Adam(
        [p for n, p in model.named_parameters() if "lora_" in n], lr=2e-2)
    for _ in range(4):
        logits = model(idx[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 13), idx[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        printed.append(loss.item())

    model.eval()
    with torch.no_grad():
        adapted = model(idx)
        for module in model.modules():
            if isinstance(module, LoRALinear):
                module.merge()
        merged = model(idx)
        for module in model.modules():
            if isinstance(module, LoRALinear):
                module.unmerge()
    restored = model.attn.qkv.base.weight
    printed += [torch.allclose(adapted, merged, atol=1e-5),
                (restored - base_state["attn.qkv.weight"]).abs().max().item() < 1e-6,
                values(adapted[0, 0, :4]), model.attn.qkv.base.weight.requires_grad]

    class LoRAParametrization(nn.Module):
        def __init__(self, fan_in, fan_out, rank=4, lora_dropout_p=0.0, lora_alpha=1):
            super().__init__()
            self.lora_A = nn.Parameter(torch.zeros((rank, fan_in)))
            self.lora_B = nn.Parameter(torch.zeros((fan_out, rank)))
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            self.scale = lora_alpha / rank
            self.lora_dropout = nn.Dropout(p=lora_dropout_p) if lora_dropout_p > 0 else (
                lambda x: x)
            self.dropout_fn = self._dropout if lora_dropout_p > 0 else lambda x: x
            self.register_buffer("lora_dropout_mask", torch.ones((1, fan_in),
                                                                 dtype=self.lora_A.dtype))
            self.enabled = True

        def _dropout(self, A):
            return A * self.lora_dropout(self.lora_dropout_mask)

        def forward(self, X):
            if self.enabled:
                return X + torch.matmul(self.lora_B, self.dropout_fn(self.lora_A)).view(
                    X.shape) * self.scale
            return X

    mlp = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 2))
    for layer in (mlp[0], mlp[2]):
        fan_out, fan_in = layer.weight.shape
        parametrize.register_parametrization(
            layer, "weight", LoRAParametrization(fan_in, fan_out, rank=2, lora_alpha=2,
                                                 lora_dropout_p=0.2))
    for n, p in mlp.named_parameters():
        p.requires_grad_("lora_" in n)
    printed += [[n for n, p in mlp.named_parameters() if p.requires_grad],
                parametrize.is_parametrized(mlp[0]), parametrize.is_parametrized(mlp[1])]
    opt = torch.optim.SGD([p for p in mlp.parameters() if p.requires_grad], lr=0.1,
                          momentum=0.9)
    data = torch.randn(10, 5)
    target = torch.randn(10, 2)
    for _ in range(3):
        loss = F.mse_loss(mlp(data), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        printed.append(loss.item())
    mlp.eval()
    with torch.no_grad(), parametrize.cached():
        cached = mlp(data)
    for layer in (mlp[0], mlp[2]):
        layer.parametrizations.weight[0].enabled = False
    plain = mlp(data).detach()
    for layer in (mlp[0], mlp[2]):
        layer.parametrizations.weight[0].enabled = True
    for layer in (mlp[0], mlp[2]):
        parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
    printed += [values(cached[0]), values(plain[0]), torch.allclose(mlp(data), cached),
                parametrize.is_parametrized(mlp[0]), sorted(mlp.state_dict()),
                error_class(lambda: parametrize.remove_parametrizations(mlp[0], "weight"))]

    class MultiAdapterLinear(nn.Linear):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.weight.requires_grad_(False)
            self.lora_A = nn.ParameterDict()
            self.lora_B = nn.ParameterDict()
            self.active_adapter = None

        def add_adapter(self, name, r):
            self.lora_A[name] = nn.Parameter(torch.empty(r, self.in_features))
            self.lora_B[name] = nn.Parameter(torch.zeros(self.out_features, r))
            nn.init.kaiming_uniform_(self.lora_A[name], a=math.sqrt(5))
            self.active_adapter = name

        def forward(self, x):
            out = super().forward(x)
            if self.active_adapter is None:
                return out
            A, B = self.lora_A[self.active_adapter], self.lora_B[self.active_adapter]
            return out + F.linear(F.linear(x, A), B)

    layer = MultiAdapterLinear(4, 3)
    layer.add_adapter("default", 2)
    layer.add_adapter("other", 1)
    with torch.no_grad():
        layer.lora_B["other"].normal_(std=0.02)
    x = torch.randn(2, 4)
    out_other = layer(x)
    layer.active_adapter = "default"
    out_default = layer(x)
    layer.active_adapter = None
    printed += [sorted(n for n, _ in layer.named_parameters()),
                torch.equal(out_default, layer(x)), values(out_other - layer(x)),
                error_class(lambda: layer.add_adapter("bad.name", 1))]
    return printed

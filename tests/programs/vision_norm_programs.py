"""Vision and diffusion models whose normalization sits at their core, each written the way its
popular public implementations write it (a ConvNeXt, a timm-style vision transformer, a
diffusion UNet with its DDPM noise schedule, a ResNet with the conv-BN fusion done for
inference). A program takes one library's module triple (torch, nn, F) and, optionally, the
initial weights to load (name -> NumPy array, from the other library's run); it builds the
model from a seed, trains it a step or two on synthetic data and returns what it computed,
the initial weights included under ``"init"``."""

import copy
import math

import numpy as np


def snapshot(torch, model):
    """The model's state as NumPy arrays, the way a port copies weights across."""
    return {name: value.detach().clone().numpy() for name, value in model.state_dict().items()}


def load(torch, model, weights):
    """``weights`` (name -> NumPy array) into ``model`` through ``load_state_dict``."""
    if weights is not None:
        model.load_state_dict({name: torch.from_numpy(array.copy())
                               for name, array in weights.items()})


def gradients(model):
    return {name: p.grad for name, p in model.named_parameters() if p.grad is not None}


# ----- ConvNeXt ---------------------------------------------------------------------------
def convnext(torch, nn, F, weights=None):
    torch.manual_seed(31)

    def drop_path(x, drop_prob=0.0, training=False, scale_by_keep=True):
        if drop_prob == 0.0 or not training:
            return x
        keep_prob = 1 - drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)      # one draw per sample, any rank
        random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
        if keep_prob > 0.0 and scale_by_keep:
            random_tensor.div_(keep_prob)
        return x * random_tensor

    class DropPath(nn.Module):
        def __init__(self, drop_prob=0.0, scale_by_keep=True):
            super().__init__()
            self.drop_prob = drop_prob
            self.scale_by_keep = scale_by_keep

        def forward(self, x):
            return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

        def extra_repr(self):
            return f"drop_prob={round(self.drop_prob, 3):0.3f}"

    class LayerNorm(nn.Module):
        # channels_last goes to F.layer_norm; channels_first normalises dim 1 by hand
        def __init__(self, normalized_shape, eps=1e-6, data_format="channels_last"):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(normalized_shape))
            self.bias = nn.Parameter(torch.zeros(normalized_shape))
            self.eps = eps
            self.data_format = data_format
            if self.data_format not in ["channels_last", "channels_first"]:
                raise NotImplementedError
            self.normalized_shape = (normalized_shape, )

        def forward(self, x):
            if self.data_format == "channels_last":
                return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
            u = x.mean(1, keepdim=True)
            s = (x - u).pow(2).mean(1, keepdim=True)
            x = (x - u) / torch.sqrt(s + self.eps)
            return self.weight[:, None, None] * x + self.bias[:, None, None]

    class Block(nn.Module):
        def __init__(self, dim, drop_path=0.0, layer_scale_init_value=1e-6):
            super().__init__()
            self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
            self.norm = LayerNorm(dim, eps=1e-6)
            self.pwconv1 = nn.Linear(dim, 4 * dim)
            self.act = nn.GELU()
            self.pwconv2 = nn.Linear(4 * dim, dim)
            self.gamma = nn.Parameter(layer_scale_init_value * torch.ones((dim)),
                                      requires_grad=True) if layer_scale_init_value > 0 else None
            self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

        def forward(self, x):
            input = x
            x = self.dwconv(x)
            x = x.permute(0, 2, 3, 1)       # (N, C, H, W) -> (N, H, W, C)
            x = self.norm(x)
            x = self.pwconv1(x)
            x = self.act(x)
            x = self.pwconv2(x)
            if self.gamma is not None:
                x = self.gamma * x
            x = x.permute(0, 3, 1, 2)
            return input + self.drop_path(x)

    class ConvNeXt(nn.Module):
        def __init__(self, in_chans=3, num_classes=5, depths=(1, 2), dims=(8, 16),
                     drop_path_rate=0.4, layer_scale_init_value=0.5, head_init_scale=1.0):
            super().__init__()
            self.downsample_layers = nn.ModuleList()
            stem = nn.Sequential(nn.Conv2d(in_chans, dims[0], kernel_size=2, stride=2),
                                 LayerNorm(dims[0], eps=1e-6, data_format="channels_first"))
            self.downsample_layers.append(stem)
            for i in range(len(dims) - 1):
                self.downsample_layers.append(nn.Sequential(
                    LayerNorm(dims[i], eps=1e-6, data_format="channels_first"),
                    nn.Conv2d(dims[i], dims[i + 1], kernel_size=2, stride=2)))
            self.stages = nn.ModuleList()
            dp_rates = [x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
            cur = 0
            for i in range(len(dims)):
                self.stages.append(nn.Sequential(*[
                    Block(dims[i], dp_rates[cur + j], layer_scale_init_value)
                    for j in range(depths[i])]))
                cur += depths[i]
            self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
            self.head = nn.Linear(dims[-1], num_classes)
            self.apply(self._init_weights)
            self.head.weight.data.mul_(head_init_scale)
            self.head.bias.data.mul_(head_init_scale)

        def _init_weights(self, m):
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.2)
                nn.init.constant_(m.bias, 0)

        def forward_features(self, x):
            for i in range(len(self.stages)):
                x = self.downsample_layers[i](x)
                x = self.stages[i](x)
            return self.norm(x.mean([-2, -1]))     # global average pooling, (N, C)

        def forward(self, x):
            return self.head(self.forward_features(x))

    model = ConvNeXt()
    init = snapshot(torch, model)
    load(torch, model, weights)
    images, labels = torch.randn(4, 3, 8, 8), torch.tensor([0, 3, 1, 4])
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-3, weight_decay=0.05)
    losses = []
    for _ in range(2):
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
        loss.backward()
        if not losses:
            first_grads = gradients(model)
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        logits = model(images)
    return {"init": init, "losses": losses, "grads": first_grads, "eval": logits,
            "after": snapshot(torch, model), "repr": repr(model.stages[1][1].drop_path)}


# ----- a timm-style vision transformer --------------------------------------------------
def vision_transformer(torch, nn, F, weights=None, fused_attn=True):
    torch.manual_seed(32)

    def named_apply(fn, module, name="", depth_first=True, include_root=False):
        if not depth_first and include_root:
            fn(module=module, name=name)
        for child_name, child_module in module.named_children():
            child_name = ".".join((name, child_name)) if name else child_name
            named_apply(fn=fn, module=child_module, name=child_name, depth_first=depth_first,
                        include_root=True)
        if depth_first and include_root:
            fn(module=module, name=name)
        return module

    def init_weights_vit_timm(module, name=""):
        if isinstance(module, nn.Linear):
            nn.init.trunc_normal_(module.weight, std=0.2)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif hasattr(module, "init_weights"):
            module.init_weights()

    class PatchEmbed(nn.Module):
        def __init__(self, img_size=8, patch_size=4, in_chans=3, embed_dim=12, norm_layer=None,
                     flatten=True, bias=True):
            super().__init__()
            self.img_size = (img_size, img_size)
            self.patch_size = (patch_size, patch_size)
            self.grid_size = tuple(s // p for s, p in zip(self.img_size, self.patch_size))
            self.num_patches = self.grid_size[0] * self.grid_size[1]
            self.flatten = flatten
            self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size,
                                  stride=patch_size, bias=bias)
            self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()

        def forward(self, x):
            B, C, H, W = x.shape
            torch._assert(H == self.img_size[0],
                          f"Input height ({H}) doesn't match model ({self.img_size[0]}).")
            torch._assert(W == self.img_size[1],
                          f"Input width ({W}) doesn't match model ({self.img_size[1]}).")
            x = self.proj(x)
            if self.flatten:
                x = x.flatten(2).transpose(1, 2)  # NCHW -> NLC
            return self.norm(x)

    class Attention(nn.Module):
        def __init__(self, dim, num_heads=2, qkv_bias=False, qk_norm=False, attn_drop=0.0,
                     proj_drop=0.0, norm_layer=nn.LayerNorm):
            super().__init__()
            assert dim % num_heads == 0, "dim should be divisible by num_heads"
            self.num_heads = num_heads
            self.head_dim = dim // num_heads
            self.scale = self.head_dim ** -0.5
            self.fused_attn = fused_attn
            self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
            self.q_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()
            self.k_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()
            self.attn_drop = nn.Dropout(attn_drop)
            self.proj = nn.Linear(dim, dim)
            self.proj_drop = nn.Dropout(proj_drop)

        def forward(self, x):
            B, N, C = x.shape
            qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3,
                                                                                     1, 4)
            q, k, v = qkv.unbind(0)
            q, k = self.q_norm(q), self.k_norm(k)
            if self.fused_attn:
                x = F.scaled_dot_product_attention(
                    q, k, v, dropout_p=self.attn_drop.p if self.training else 0.0)
            else:
                q = q * self.scale
                attn = q @ k.transpose(-2, -1)
                attn = attn.softmax(dim=-1)
                attn = self.attn_drop(attn)
                x = attn @ v
            x = x.transpose(1, 2).reshape(B, N, C)
            return self.proj_drop(self.proj(x))

    class LayerScale(nn.Module):
        def __init__(self, dim, init_values=1e-5, inplace=False):
            super().__init__()
            self.inplace = inplace
            self.gamma = nn.Parameter(init_values * torch.ones(dim))

        def forward(self, x):
            return x.mul_(self.gamma) if self.inplace else x * self.gamma

    class Mlp(nn.Module):
        def __init__(self, in_features, hidden_features, act_layer=nn.GELU, drop=0.0):
            super().__init__()
            self.fc1 = nn.Linear(in_features, hidden_features)
            self.act = act_layer()
            self.drop1 = nn.Dropout(drop)
            self.fc2 = nn.Linear(hidden_features, in_features)
            self.drop2 = nn.Dropout(drop)

        def forward(self, x):
            return self.drop2(self.fc2(self.drop1(self.act(self.fc1(x)))))

    class Block(nn.Module):
        def __init__(self, dim, num_heads, mlp_ratio=2.0, qkv_bias=True, qk_norm=True,
                     init_values=0.5, norm_layer=nn.LayerNorm):
            super().__init__()
            self.norm1 = norm_layer(dim)
            # the key's norm without a bias: softmax ignores a shift of a row's scores, so
            # that bias's gradient is rounding noise which Adam would blow up to lr-size steps
            self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias, qk_norm=qk_norm,
                                  norm_layer=lambda d: nn.LayerNorm(d, eps=1e-6, bias=False))
            self.ls1 = LayerScale(dim, init_values=init_values) if init_values else nn.Identity()
            self.norm2 = norm_layer(dim)
            self.mlp = Mlp(dim, int(dim * mlp_ratio), act_layer=lambda: nn.GELU("tanh"))
            self.ls2 = LayerScale(dim, init_values=init_values, inplace=True)

        def forward(self, x):
            x = x + self.ls1(self.attn(self.norm1(x)))
            return x + self.ls2(self.mlp(self.norm2(x)))

    class VisionTransformer(nn.Module):
        def __init__(self, num_classes=4, embed_dim=12, depth=2, num_heads=2,
                     global_pool="token"):
            super().__init__()
            norm_layer = lambda d: nn.LayerNorm(d, eps=1e-6)  # noqa: E731 (the files' habit)
            self.global_pool = global_pool
            self.num_prefix_tokens = 1
            self.patch_embed = PatchEmbed(embed_dim=embed_dim)
            num_patches = self.patch_embed.num_patches
            self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
            self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, embed_dim) * 0.02)
            self.pos_drop = nn.Dropout(p=0.0)
            self.blocks = nn.Sequential(*[Block(embed_dim, num_heads, norm_layer=norm_layer)
                                          for _ in range(depth)])
            self.norm = norm_layer(embed_dim)
            self.head = nn.Linear(embed_dim, num_classes)
            nn.init.trunc_normal_(self.pos_embed, std=0.02)
            nn.init.normal_(self.cls_token, std=1e-6)
            named_apply(init_weights_vit_timm, self)

        @torch.jit.ignore
        def no_weight_decay(self):
            return {"pos_embed", "cls_token"}

        def _pos_embed(self, x):
            x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
            return self.pos_drop(x + self.pos_embed)

        def forward(self, x):
            x = self.norm(self.blocks(self._pos_embed(self.patch_embed(x))))
            if self.global_pool == "avg":
                x = x[:, self.num_prefix_tokens:].mean(dim=1)
            else:
                x = x[:, 0]
            return self.head(x)

    def resample_abs_pos_embed(posemb, new_size, num_prefix_tokens=1,
                               interpolation="bicubic", antialias=True):
        # a checkpoint's position table fitted to another grid, prefix tokens kept
        prefix, posemb = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
        embed_dim, old = posemb.shape[-1], int(math.sqrt(posemb.shape[1]))
        posemb = posemb.reshape(1, old, old, -1).permute(0, 3, 1, 2)
        posemb = F.interpolate(posemb, size=new_size, mode=interpolation, antialias=antialias)
        posemb = posemb.permute(0, 2, 3, 1).reshape(1, -1, embed_dim)
        return torch.cat([prefix, posemb], dim=1)

    model = VisionTransformer()
    init = snapshot(torch, model)
    load(torch, model, weights)
    skip = model.no_weight_decay()
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim <= 1 or name.endswith(".bias") or name in skip:
            no_decay.append(param)
        else:
            decay.append(param)
    optimizer = torch.optim.AdamW([{"params": no_decay, "weight_decay": 0.0},
                                   {"params": decay, "weight_decay": 0.05}], lr=1e-2)
    images = torch.randn(3, 3, 8, 8)
    targets = torch.tensor([1, 0, 3])
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), targets)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    grads = gradients(model)
    optimizer.step()
    try:
        model(torch.randn(1, 3, 4, 8))
        refused = None
    except AssertionError as error:
        refused = str(error)
    with torch.no_grad():
        resampled = [resample_abs_pos_embed(model.pos_embed, size, interpolation=mode)
                     for size in ((3, 3), (1, 2)) for mode in ("bicubic", "bilinear")]
    return {"init": init, "loss": loss.item(), "norm": norm, "grads": grads,
            "resampled": resampled,
            "after": snapshot(torch, model), "skip": sorted(skip), "refused": refused,
            "groups": [len(g["params"]) for g in optimizer.param_groups]}


# ----- a diffusion UNet and its DDPM noise schedule ---------------------------------------
def diffusion_unet(torch, nn, F, weights=None):
    torch.manual_seed(33)

    def timestep_embedding(timesteps, dim, max_period=10000):
        half = dim // 2
        freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half,
                                                               dtype=torch.float32) / half
                          ).to(device=timesteps.device)
        args = timesteps[:, None].float() * freqs[None]
        embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
        if dim % 2:
            embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
        return embedding

    def zero_module(module):
        for p in module.parameters():
            p.detach().zero_()
        return module

    class GroupNorm32(nn.GroupNorm):
        def forward(self, x):
            return super().forward(x.float()).type(x.dtype)

    def normalization(channels):
        return GroupNorm32(32, channels)

    class ResBlock(nn.Module):
        def __init__(self, channels, emb_channels, out_channels=None, dropout=0.0,
                     use_scale_shift_norm=True):
            super().__init__()
            self.out_channels = out_channels or channels
            self.use_scale_shift_norm = use_scale_shift_norm
            self.in_layers = nn.Sequential(normalization(channels), nn.SiLU(),
                                           nn.Conv2d(channels, self.out_channels, 3, padding=1))
            self.emb_layers = nn.Sequential(nn.SiLU(), nn.Linear(
                emb_channels,
                2 * self.out_channels if use_scale_shift_norm else self.out_channels))
            self.out_layers = nn.Sequential(
                normalization(self.out_channels), nn.SiLU(), nn.Dropout(p=dropout),
                zero_module(nn.Conv2d(self.out_channels, self.out_channels, 3, padding=1)))
            if self.out_channels == channels:
                self.skip_connection = nn.Identity()
            else:
                self.skip_connection = nn.Conv2d(channels, self.out_channels, 1)

        def forward(self, x, emb):
            h = self.in_layers(x)
            emb_out = self.emb_layers(emb).type(h.dtype)
            while len(emb_out.shape) < len(h.shape):
                emb_out = emb_out[..., None]
            if self.use_scale_shift_norm:
                out_norm, out_rest = self.out_layers[0], self.out_layers[1:]
                scale, shift = torch.chunk(emb_out, 2, dim=1)
                h = out_norm(h) * (1 + scale) + shift
                h = out_rest(h)
            else:
                h = self.out_layers(h + emb_out)
            return self.skip_connection(x) + h

    class AttentionBlock(nn.Module):
        # the legacy order (heads split before q, k, v), scores through einsum, and the
        # other habit beside it: scores through baddbmm on an uninitialised tensor, beta=0
        def __init__(self, channels, num_heads=2, use_baddbmm=False):
            super().__init__()
            self.num_heads = num_heads
            self.use_baddbmm = use_baddbmm
            self.norm = normalization(channels)
            self.qkv = nn.Conv1d(channels, channels * 3, 1)
            self.proj_out = zero_module(nn.Conv1d(channels, channels, 1))

        def attention(self, qkv):
            bs, width, length = qkv.shape
            ch = width // (3 * self.num_heads)
            q, k, v = qkv.reshape(bs * self.num_heads, ch * 3, length).split(ch, dim=1)
            if self.use_baddbmm:
                q, k = q.transpose(1, 2), k.transpose(1, 2)          # (B*H, T, ch)
                empty = torch.empty(q.shape[0], q.shape[1], k.shape[1], dtype=q.dtype,
                                    device=q.device)
                weight = torch.baddbmm(empty, q, k.transpose(-1, -2), beta=0,
                                       alpha=1 / math.sqrt(ch))
            else:
                scale = 1 / math.sqrt(math.sqrt(ch))
                weight = torch.einsum("bct,bcs->bts", q * scale, k * scale)
            weight = torch.softmax(weight.float(), dim=-1).type(weight.dtype)
            a = torch.einsum("bts,bcs->bct", weight, v)
            return a.reshape(bs, -1, length)

        def forward(self, x):
            b, c, *spatial = x.shape
            x = x.reshape(b, c, -1)
            h = self.proj_out(self.attention(self.qkv(self.norm(x))))
            return (x + h).reshape(b, c, *spatial)

    class UNet(nn.Module):
        def __init__(self, in_channels=3, ch=64, emb=16):
            super().__init__()
            self.model_channels = ch
            self.time_embed = nn.Sequential(nn.Linear(ch, emb), nn.SiLU(), nn.Linear(emb, emb))
            self.conv_in = nn.Conv2d(in_channels, ch, 3, padding=1)
            self.down = ResBlock(ch, emb)
            self.downsample = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
            self.mid = nn.ModuleList([ResBlock(ch, emb), AttentionBlock(ch),
                                      AttentionBlock(ch, use_baddbmm=True)])
            self.up = ResBlock(2 * ch, emb, ch, use_scale_shift_norm=False)
            self.out = nn.Sequential(normalization(ch), nn.SiLU(),
                                     nn.Conv2d(ch, in_channels, 3, padding=1))

        def forward(self, x, timesteps):
            emb = self.time_embed(timestep_embedding(timesteps, self.model_channels))
            h = skip = self.down(self.conv_in(x), emb)
            h = self.downsample(h)
            h = self.mid[0](h, emb)
            h = self.mid[2](self.mid[1](h))
            h = F.interpolate(h, scale_factor=2, mode="nearest")
            h = self.up(torch.cat([h, skip], dim=1), emb)
            return self.out(h)

    class GaussianDiffusion(nn.Module):
        def __init__(self, model, timesteps=50):
            super().__init__()
            self.model = model
            self.num_timesteps = timesteps
            betas = torch.linspace(1e-4, 0.02, timesteps, dtype=torch.float64)
            alphas = 1.0 - betas
            alphas_cumprod = torch.cumprod(alphas, dim=0)
            alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
            register_buffer = lambda name, val: self.register_buffer(  # noqa: E731
                name, val.to(torch.float32))
            register_buffer("betas", betas)
            register_buffer("alphas_cumprod", alphas_cumprod)
            register_buffer("sqrt_alphas_cumprod", torch.sqrt(alphas_cumprod))
            register_buffer("sqrt_one_minus_alphas_cumprod", torch.sqrt(1.0 - alphas_cumprod))
            posterior_variance = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)
            register_buffer("posterior_log_variance_clipped",
                            torch.log(posterior_variance.clamp(min=1e-20)))

        @staticmethod
        def extract(a, t, x_shape):
            b, *_ = t.shape
            out = a.gather(-1, t)
            return out.reshape(b, *((1,) * (len(x_shape) - 1)))

        def q_sample(self, x_start, t, noise=None):
            noise = noise if noise is not None else torch.randn_like(x_start)
            return (self.extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
                    + self.extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)

        def forward(self, img):
            b = img.shape[0]
            t = torch.randint(0, self.num_timesteps, (b,), device=img.device).long()
            noise = torch.randn_like(img)
            x_noisy = self.q_sample(img, t, noise)
            return F.mse_loss(self.model(x_noisy, t), noise)

    diffusion = GaussianDiffusion(UNet())
    init = snapshot(torch, diffusion)
    load(torch, diffusion, weights)
    ema = copy.deepcopy(diffusion.model).eval().requires_grad_(False)
    # SGD, not Adam: in float32 a gradient at rounding level (an element of a zero-initialised
    # conv's) would take an lr-sized Adam step whose sign is the rounding's
    optimizer = torch.optim.SGD(diffusion.parameters(), lr=0.05, momentum=0.9)
    images = torch.rand(2, 3, 4, 4) * 2 - 1
    torch.manual_seed(5)               # one step, then the next step's loss at the new weights
    loss = diffusion(images)
    optimizer.zero_grad()
    loss.backward()
    grads = gradients(diffusion)
    optimizer.step()
    with torch.no_grad():         # the weights' moving average, by lists (torch._foreach_*)
        torch._foreach_lerp_(list(ema.parameters()),
                             [p.detach() for p in diffusion.model.parameters()], weight=0.1)
        torch._foreach_copy_(list(ema.buffers()) or [torch.zeros(1)],
                             list(diffusion.model.buffers()) or [torch.zeros(1)])
        grad_norms = torch._foreach_norm([p.grad for p in diffusion.parameters()])
    losses = [loss.item(), diffusion(images).item()]
    with torch.inference_mode():
        t = torch.full((2,), 10, dtype=torch.long)
        sample = ema(torch.randn(2, 3, 4, 4), t)
    buffers = {name: b for name, b in diffusion.named_buffers()}
    # a sampler's timesteps, last first: a reversed NumPy view must be copied for from_numpy
    timesteps = torch.from_numpy(np.arange(0, diffusion.num_timesteps)[::-1].copy())
    try:
        torch.from_numpy(np.arange(0, diffusion.num_timesteps)[::-1])
        reversed_view = None
    except ValueError as error:
        reversed_view = type(error).__name__
    return {"init": init, "losses": losses, "grads": grads, "sample": sample,
            "buffers": buffers, "after": snapshot(torch, diffusion), "grad_norms": grad_norms,
            "timesteps": timesteps, "reversed_view": reversed_view}


# ----- a ResNet, trained, then conv-BN fused for inference -----------------------------------
def resnet_fused(torch, nn, F, weights=None):
    torch.manual_seed(34)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self, layers=(1, 1), num_classes=3, zero_init_residual=False):
            super().__init__()
            self.inplanes = 8
            self.conv1 = nn.Conv2d(3, self.inplanes, 3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(self.inplanes)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(8, layers[0])
            self.layer2 = self._make_layer(16, layers[1], stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(16 * BasicBlock.expansion, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            if zero_init_residual:
                for m in self.modules():
                    if isinstance(m, BasicBlock) and m.bn2.weight is not None:
                        nn.init.constant_(m.bn2.weight, 0)

        def _make_layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes * BasicBlock.expansion:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes, 1, stride=stride, bias=False),
                    nn.BatchNorm2d(planes))
            layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes * BasicBlock.expansion
            layers += [BasicBlock(self.inplanes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer2(self.layer1(x))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    @torch.no_grad()
    def fuse_conv_bn(conv, bn):
        # fold the running statistics into the convolution: w' = w * g / sqrt(var + eps),
        # b' = (b - mean) * g / sqrt(var + eps) + beta
        fused = nn.Conv2d(conv.in_channels, conv.out_channels, kernel_size=conv.kernel_size,
                          stride=conv.stride, padding=conv.padding, bias=True)
        w_conv = conv.weight.clone().view(conv.out_channels, -1)
        w_bn = torch.diag(bn.weight.div(torch.sqrt(bn.eps + bn.running_var)))
        fused.weight.copy_(torch.mm(w_bn, w_conv).view(fused.weight.size()))
        if conv.bias is not None:
            b_conv = conv.bias
        else:
            b_conv = torch.zeros(conv.weight.size(0), device=conv.weight.device)
        b_bn = bn.bias - bn.weight.mul(bn.running_mean).div(torch.sqrt(bn.running_var + bn.eps))
        fused.bias.copy_(torch.matmul(w_bn, b_conv) + b_bn)
        return fused

    def fuse_model(model, by_library):
        fuse = torch.nn.utils.fusion.fuse_conv_bn_eval if by_library else fuse_conv_bn
        model = copy.deepcopy(model)
        model.conv1, model.bn1 = fuse(model.conv1, model.bn1), nn.Identity()
        for layer in (model.layer1, model.layer2):
            for block in layer:
                block.conv1, block.bn1 = fuse(block.conv1, block.bn1), nn.Identity()
                block.conv2, block.bn2 = fuse(block.conv2, block.bn2), nn.Identity()
                if block.downsample is not None:
                    block.downsample = fuse(block.downsample[0], block.downsample[1])
        return model

    model = ResNet(zero_init_residual=True)
    init = snapshot(torch, model)
    load(torch, model, weights)
    model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                                weight_decay=1e-4)
    images = torch.randn(4, 3, 8, 8).to(memory_format=torch.channels_last)
    labels = torch.tensor([0, 2, 1, 2])
    losses = []
    for _ in range(2):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        if not losses:
            first_grads = gradients(model)
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    # back to row-major before fusing: a channels_last weight's clone keeps its strides,
    # which torch's .view(out_channels, -1) refuses to flatten
    model = model.to(memory_format=torch.contiguous_format)
    with torch.no_grad():
        reference = model(images)
        by_hand = fuse_model(model, by_library=False)(images)
        by_library = fuse_model(model, by_library=True)(images)
    weight, bias = torch.nn.utils.fusion.fuse_conv_bn_weights(
        model.conv1.weight, None, model.bn1.running_mean, model.bn1.running_var,
        model.bn1.eps, model.bn1.weight, model.bn1.bias)
    return {"init": init, "losses": losses, "grads": first_grads, "eval": reference,
            "by_hand": by_hand, "by_library": by_library,
            "fused_gap": float(np.abs((by_hand - reference).numpy()).max()),
            "channels_last": [model.conv1.weight.is_contiguous(memory_format=torch.channels_last),
                              images.is_contiguous(memory_format=torch.channels_last),
                              images.is_contiguous()],
            "fused_weights": [weight, bias, type(weight).__name__],
            "buffers": {n: b for n, b in model.named_buffers()},
            "after": snapshot(torch, model)}

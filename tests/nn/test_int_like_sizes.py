"""Int-like sizes as PyTorch takes them, compared with PyTorch at test time.

Every int argument of the module constructors, factories and shape functions below is given
five stand-ins for its usual value: ``True``, ``False``, a NumPy ``int64``, a 0-d integer
tensor and a float. PyTorch's outcome (what it builds: its repr, parameter shapes and the
shape of one forward call; or the class of the exception it raises) is computed here, then
ours, and they must agree: the same outcome kind, equal reprs and shapes, or our exception a
subclass of torch's. A repr that prints ``np.int64(3)`` or ``tensor(3)`` where ours prints
``3`` counts as equal (torch keeps the object it was given; ours keeps its int).

A few outcomes of torch's are accidents we do not copy (a module that builds from a float
size and fails at its first call, say); ``KEPT`` lists them with the reason, as
docs/pytorch.md does, and its test checks that ours refuses at construction or builds what
runs. ``LEFT`` lists
the differences not yet followed; each must still differ, so following one fails the test
until its entry goes.
"""

import re

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

# warnings beside the point: the Transformers' nested-tensor path, the draws into a module
# of 0 features, torch's LSTM projection kernel
pytestmark = [pytest.mark.filterwarnings(f"ignore:{text}:UserWarning") for text in
              ("enable_nested_tensor", "Initializing zero-element", "LSTM with projections")]

KINDS = ("True", "False", "numpy", "tensor", "float")


def _stand_in(kind, lib, base):
    # the value given for an int argument whose usual value is ``base``
    return {"True": True, "False": False, "numpy": np.int64(base), "float": float(base),
            "tensor": None}[kind] if kind != "tensor" else lib.tensor(base)


def _modules():
    # (id, build(nn, v), usual value, forward input's shape or None)
    cases = []

    def add(name, build, base, shape=None):
        cases.append((name, build, base, shape))

    for d in (1, 2, 3):
        x = (2, 2) + (5,) * d
        conv, tconv = f"Conv{d}d", f"ConvTranspose{d}d"
        for cls in (conv, tconv):
            add(f"{cls}.in_channels", lambda nn, v, c=cls: getattr(nn, c)(v, 2, 1), 2, x)
            add(f"{cls}.out_channels", lambda nn, v, c=cls: getattr(nn, c)(2, v, 1), 2, x)
            add(f"{cls}.kernel_size", lambda nn, v, c=cls: getattr(nn, c)(2, 2, v), 1, x)
        for arg, base in (("stride", 1), ("padding", 1), ("dilation", 1), ("groups", 1)):
            add(f"{conv}.{arg}", lambda nn, v, c=conv, a=arg: getattr(nn, c)(2, 2, 1, **{a: v}),
                base, x)
        add(f"{tconv}.output_padding",
            lambda nn, v, c=tconv: getattr(nn, c)(2, 2, 1, stride=2, output_padding=v), 0, x)
        add(f"LazyConv{d}d.out_channels", lambda nn, v, d=d: getattr(nn, f"LazyConv{d}d")(v, 1),
            2)
        for pool in (f"MaxPool{d}d", f"AvgPool{d}d"):
            add(f"{pool}.kernel_size", lambda nn, v, p=pool: getattr(nn, p)(v), 1, x)
            add(f"{pool}.stride", lambda nn, v, p=pool: getattr(nn, p)(2, stride=v), 1, x)
        add(f"MaxPool{d}d.padding", lambda nn, v, d=d: getattr(nn, f"MaxPool{d}d")(2, padding=v),
            0, x)
        for pool in (f"AdaptiveAvgPool{d}d", f"AdaptiveMaxPool{d}d"):
            add(f"{pool}.output_size", lambda nn, v, p=pool: getattr(nn, p)(v), 1, x)
        for norm in (f"BatchNorm{d}d", f"InstanceNorm{d}d"):
            add(f"{norm}.num_features", lambda nn, v, n=norm: getattr(nn, n)(v), 2)
        for pad in (f"ConstantPad{d}d", f"ReflectionPad{d}d", f"ReplicationPad{d}d",
                    f"ZeroPad{d}d", f"CircularPad{d}d"):
            extra = (0.0,) if pad.startswith("Constant") else ()
            add(f"{pad}.padding", lambda nn, v, p=pad, e=extra: getattr(nn, p)(v, *e), 1, x)
    for cls in ("RNN", "LSTM", "GRU"):
        add(f"{cls}.input_size", lambda nn, v, c=cls: getattr(nn, c)(v, 4), 3, (2, 5, 3))
        add(f"{cls}.hidden_size", lambda nn, v, c=cls: getattr(nn, c)(3, v), 4, (2, 5, 3))
        add(f"{cls}.num_layers", lambda nn, v, c=cls: getattr(nn, c)(3, 4, num_layers=v), 1,
            (2, 5, 3))
        cell = cls + "Cell"
        add(f"{cell}.input_size", lambda nn, v, c=cell: getattr(nn, c)(v, 4), 3, (2, 3))
        add(f"{cell}.hidden_size", lambda nn, v, c=cell: getattr(nn, c)(3, v), 4, (2, 3))
    add("LSTM.proj_size", lambda nn, v: nn.LSTM(3, 4, proj_size=v), 1, (2, 5, 3))
    add("Linear.in_features", lambda nn, v: nn.Linear(v, 3), 2)
    add("Linear.out_features", lambda nn, v: nn.Linear(2, v), 3)
    add("Bilinear.in1_features", lambda nn, v: nn.Bilinear(v, 2, 3), 2)
    add("Bilinear.out_features", lambda nn, v: nn.Bilinear(2, 2, v), 3)
    add("LazyLinear.out_features", lambda nn, v: nn.LazyLinear(v), 3)
    add("Flatten.start_dim", lambda nn, v: nn.Flatten(v), 1, (2, 3, 4))
    add("Flatten.end_dim", lambda nn, v: nn.Flatten(0, v), 1, (2, 3, 4))
    add("Unflatten.dim", lambda nn, v: nn.Unflatten(v, (2, 2)), 1, (3, 4))
    add("PixelShuffle.upscale_factor", lambda nn, v: nn.PixelShuffle(v), 1, (1, 4, 2, 2))
    add("PixelUnshuffle.downscale_factor", lambda nn, v: nn.PixelUnshuffle(v), 1, (1, 1, 2, 2))
    add("ChannelShuffle.groups", lambda nn, v: nn.ChannelShuffle(v), 1, (1, 2, 2, 2))
    add("Upsample.size", lambda nn, v: nn.Upsample(size=v), 4, (1, 1, 2))
    add("Fold.output_size", lambda nn, v: nn.Fold((3, 3), v), 1, (1, 4, 9))
    add("Fold.kernel_size", lambda nn, v: nn.Fold(3, v), 1, (1, 1, 9))
    add("Unfold.kernel_size", lambda nn, v: nn.Unfold(v), 1, (1, 1, 3, 3))
    add("Unfold.stride", lambda nn, v: nn.Unfold(2, stride=v), 1, (1, 1, 3, 3))
    add("Embedding.num_embeddings", lambda nn, v: nn.Embedding(v, 2), 3)
    add("Embedding.embedding_dim", lambda nn, v: nn.Embedding(3, v), 2)
    add("Embedding.padding_idx", lambda nn, v: nn.Embedding(3, 2, padding_idx=v), 1)
    add("EmbeddingBag.num_embeddings", lambda nn, v: nn.EmbeddingBag(v, 2), 3)
    add("EmbeddingBag.embedding_dim", lambda nn, v: nn.EmbeddingBag(3, v), 2)
    add("EmbeddingBag.padding_idx", lambda nn, v: nn.EmbeddingBag(3, 2, padding_idx=v), 1)
    add("MultiheadAttention.embed_dim", lambda nn, v: nn.MultiheadAttention(v, 2), 4)
    add("MultiheadAttention.num_heads", lambda nn, v: nn.MultiheadAttention(4, v), 1)
    add("TransformerEncoderLayer.d_model", lambda nn, v: nn.TransformerEncoderLayer(v, 2, 8), 4)
    add("TransformerEncoderLayer.nhead", lambda nn, v: nn.TransformerEncoderLayer(4, v, 8), 1)
    add("TransformerEncoderLayer.dim_feedforward",
        lambda nn, v: nn.TransformerEncoderLayer(4, 2, v), 8)
    add("TransformerDecoderLayer.nhead", lambda nn, v: nn.TransformerDecoderLayer(4, v, 8), 1)
    add("Transformer.num_encoder_layers",
        lambda nn, v: nn.Transformer(4, 1, num_encoder_layers=v, num_decoder_layers=1,
                                     dim_feedforward=8), 1)
    # (no call: GroupNorm's first call compiles its kernels, seconds of this file's time)
    add("GroupNorm.num_groups", lambda nn, v: nn.GroupNorm(v, 2), 1)
    add("GroupNorm.num_channels", lambda nn, v: nn.GroupNorm(1, v), 2)
    add("LayerNorm.normalized_shape", lambda nn, v: nn.LayerNorm(v), 2, (3, 2))
    add("RMSNorm.normalized_shape", lambda nn, v: nn.RMSNorm(v), 2, (3, 2))
    add("LocalResponseNorm.size", lambda nn, v: nn.LocalResponseNorm(v), 2, (1, 3, 4))
    add("AdaptiveLogSoftmaxWithLoss.in_features",
        lambda nn, v: nn.AdaptiveLogSoftmaxWithLoss(v, 10, [5]), 4)
    add("AdaptiveLogSoftmaxWithLoss.n_classes",
        lambda nn, v: nn.AdaptiveLogSoftmaxWithLoss(4, v, [5]), 10)
    add("Softmax.dim", lambda nn, v: nn.Softmax(v), 1, (2, 3))
    add("GLU.dim", lambda nn, v: nn.GLU(v), 1, (2, 4))
    add("LPPool1d.kernel_size", lambda nn, v: nn.LPPool1d(2, v), 2, (1, 1, 4))
    add("LPPool2d.kernel_size", lambda nn, v: nn.LPPool2d(2, v), 2, (1, 1, 4, 4))
    add("FractionalMaxPool2d.output_size",
        lambda nn, v: nn.FractionalMaxPool2d(2, output_size=v), 2, (1, 1, 5, 5))
    add("FractionalMaxPool2d.kernel_size",
        lambda nn, v: nn.FractionalMaxPool2d(v, output_size=2), 2, (1, 1, 5, 5))
    add("FractionalMaxPool3d.output_size",
        lambda nn, v: nn.FractionalMaxPool3d(2, output_size=v), 2, (1, 1, 5, 5, 5))
    for d in (1, 2, 3):
        add(f"MaxUnpool{d}d.kernel_size", lambda nn, v, d=d: getattr(nn, f"MaxUnpool{d}d")(v), 2)
    add("AvgPool1d.padding", lambda nn, v: nn.AvgPool1d(3, padding=v), 1, (2, 2, 5))
    add("Upsample.size (2d)", lambda nn, v: nn.Upsample(size=v), 4, (1, 1, 2, 2))
    add("Upsample.size (3d)", lambda nn, v: nn.Upsample(size=v, mode="trilinear"), 4,
        (1, 1, 2, 2, 2))
    add("ChannelShuffle.groups (2 groups)", lambda nn, v: nn.ChannelShuffle(v), 2, (1, 4, 2))
    add("PixelShuffle.upscale_factor (2)", lambda nn, v: nn.PixelShuffle(v), 2, (1, 4, 2, 2))
    add("SyncBatchNorm.num_features", lambda nn, v: nn.SyncBatchNorm(v), 2)
    return cases


def _functions():
    # (id, call(lib, v), usual value): factories and shape functions
    cases = []

    def add(name, call, base):
        cases.append((name, call, base))

    for f in ("zeros", "ones", "empty", "rand", "randn"):
        add(f"{f}(v, 3)", lambda lib, v, f=f: getattr(lib, f)(v, 3), 2)
        add(f"{f}(2, v)", lambda lib, v, f=f: getattr(lib, f)(2, v), 3)
        add(f"{f}((2, v))", lambda lib, v, f=f: getattr(lib, f)((2, v)), 3)
    add("full((v, 3))", lambda lib, v: lib.full((v, 3), 1.0), 2)
    add("full((2, v))", lambda lib, v: lib.full((2, v), 1.0), 3)
    add("full(v)", lambda lib, v: lib.full(v, 1.0), 2)
    add("randint(v, size)", lambda lib, v: lib.randint(v, (2, 3)), 5)
    add("randint(5, (2, v))", lambda lib, v: lib.randint(5, (2, v)), 3)
    add("arange(v)", lambda lib, v: lib.arange(v), 3)
    add("arange(v, 3)", lambda lib, v: lib.arange(v, 3), 1)
    add("eye(v)", lambda lib, v: lib.eye(v), 3)
    add("eye(3, v)", lambda lib, v: lib.eye(3, v), 2)
    add("linspace(0, 1, v)", lambda lib, v: lib.linspace(0, 1, v), 3)
    add("logspace(0, 1, v)", lambda lib, v: lib.logspace(0, 1, v), 3)

    def six(lib):
        return lib.arange(6.0)

    def grid(lib):
        return lib.arange(6.0).view(2, 3)

    add("view(v, 3)", lambda lib, v: six(lib).view(v, 3), 2)
    add("view(2, v)", lambda lib, v: six(lib).view(2, v), 3)
    add("view(6, v)", lambda lib, v: six(lib).view(6, v), 1)
    add("reshape(6, v)", lambda lib, v: six(lib).reshape(6, v), 1)
    add("reshape((6, v))", lambda lib, v: six(lib).reshape((6, v)), 1)
    add("expand(v, 6)", lambda lib, v: six(lib).view(1, 6).expand(v, 6), 2)
    add("expand(2, v)", lambda lib, v: six(lib).view(1, 6).expand(2, v), 6)
    add("expand(6, v)", lambda lib, v: six(lib).view(6, 1).expand(6, v), 3)
    add("repeat(v)", lambda lib, v: six(lib).repeat(v), 2)
    add("repeat(2, v)", lambda lib, v: six(lib).repeat(2, v), 1)
    add("permute(v, 0)", lambda lib, v: grid(lib).permute(v, 0), 1)
    add("permute(1, v)", lambda lib, v: grid(lib).permute(1, v), 0)
    add("tile((2, v))", lambda lib, v: six(lib).tile((2, v)), 1)
    add("tile((v,))", lambda lib, v: six(lib).tile((v,)), 2)
    add("new_zeros(v)", lambda lib, v: six(lib).new_zeros(v), 2)
    add("new_zeros(2, v)", lambda lib, v: six(lib).new_zeros(2, v), 3)
    add("new_ones(v)", lambda lib, v: six(lib).new_ones(v), 2)
    add("new_ones((2, v))", lambda lib, v: six(lib).new_ones((2, v)), 3)
    add("new_empty(v)", lambda lib, v: six(lib).new_empty(v), 2)
    add("new_full((v,))", lambda lib, v: six(lib).new_full((v,), 1.0), 2)
    add("narrow(v, 0, 2)", lambda lib, v: grid(lib).narrow(v, 0, 2), 1)
    add("narrow(1, v, 2)", lambda lib, v: grid(lib).narrow(1, v, 2), 1)
    add("narrow(1, 0, v)", lambda lib, v: grid(lib).narrow(1, 0, v), 2)
    add("unflatten(v, (2, 3))", lambda lib, v: six(lib).unflatten(v, (2, 3)), 0)
    add("unflatten(0, (2, v))", lambda lib, v: six(lib).unflatten(0, (2, v)), 3)
    add("split(v)", lambda lib, v: six(lib).split(v), 2)
    add("split(1, v)", lambda lib, v: grid(lib).split(1, v), 1)
    add("split([v, 5])", lambda lib, v: six(lib).split([v, 5]), 1)
    add("chunk(v)", lambda lib, v: six(lib).chunk(v), 2)
    add("chunk(2, v)", lambda lib, v: grid(lib).chunk(2, v), 1)
    add("flatten(v)", lambda lib, v: grid(lib).flatten(v), 1)
    add("sum(v)", lambda lib, v: grid(lib).sum(v), 1)
    add("transpose(v, 0)", lambda lib, v: grid(lib).transpose(v, 0), 1)
    add("unsqueeze(v)", lambda lib, v: grid(lib).unsqueeze(v), 1)
    add("squeeze(v)", lambda lib, v: grid(lib).squeeze(v), 1)
    add("torch.split(x, v)", lambda lib, v: lib.split(six(lib), v), 2)
    add("permute((1, v))", lambda lib, v: grid(lib).permute((1, v)), 0)
    add("tile(v)", lambda lib, v: six(lib).tile(v), 2)
    add("movedim(v, 1)", lambda lib, v: grid(lib).movedim(v, 1), 0)
    add("movedim(0, v)", lambda lib, v: grid(lib).movedim(0, v), 1)
    add("movedim((0, 1), (1, v))", lambda lib, v: grid(lib).movedim((0, 1), (1, v)), 0)
    add("roll(v)", lambda lib, v: six(lib).roll(v), 1)
    add("roll(1, v)", lambda lib, v: grid(lib).roll(1, v), 1)
    add("roll((1, v), (0, 1))", lambda lib, v: grid(lib).roll((1, v), (0, 1)), 1)
    add("diag_embed(offset=v)", lambda lib, v: six(lib).diag_embed(offset=v), 1)
    add("diagonal(v)", lambda lib, v: grid(lib).diagonal(v), 1)
    add("rot90(v)", lambda lib, v: grid(lib).rot90(v), 1)
    add("flip(v)", lambda lib, v: grid(lib).flip(v), 1)
    add("flip((0, v))", lambda lib, v: grid(lib).flip((0, v)), 1)
    add("torch.flip(x, (0, v))", lambda lib, v: lib.flip(grid(lib), (0, v)), 1)
    add("repeat_interleave(v)", lambda lib, v: six(lib).repeat_interleave(v), 2)
    add("repeat_interleave(2, output_size=v)",
        lambda lib, v: six(lib).repeat_interleave(2, output_size=v), 12)
    add("squeeze((v,))", lambda lib, v: six(lib).view(1, 6).squeeze((v,)), 0)
    add("sum((0, v))", lambda lib, v: grid(lib).sum((0, v)), 1)
    add("unflatten(0, (6, v))", lambda lib, v: six(lib).unflatten(0, (6, v)), 1)
    add("Tensor(v)", lambda lib, v: lib.Tensor(v), 2)
    add("Tensor(2, v)", lambda lib, v: lib.Tensor(2, v), 3)
    cases.extend(_functional())
    return cases


def _functional():
    # (id, call(lib, v), usual value): the int arguments of nn.functional
    cases = []

    def add(name, call, base):
        cases.append((name, call, base))

    def F(lib):
        return lib.nn.functional

    def x(lib, *shape):
        return lib.ones(*shape)

    def ids(lib):
        return lib.tensor([0, 1, 2])

    add("F.one_hot(x, v)", lambda lib, v: F(lib).one_hot(ids(lib), v), 3)
    add("F.interpolate(size=v)", lambda lib, v: F(lib).interpolate(x(lib, 1, 1, 2), size=v), 4)
    add("F.interpolate(size=(v,))",
        lambda lib, v: F(lib).interpolate(x(lib, 1, 1, 2), size=(v,)), 4)
    add("F.interpolate(size=(2, v))",
        lambda lib, v: F(lib).interpolate(x(lib, 1, 1, 2, 2), size=(2, v)), 4)
    add("F.interpolate(size=(2, v), bilinear)",
        lambda lib, v: F(lib).interpolate(x(lib, 1, 1, 2, 2), size=(2, v), mode="bilinear"), 4)
    for mode in ("constant", "reflect", "replicate", "circular"):
        add(f"F.pad((v, 1), {mode})",
            lambda lib, v, m=mode: F(lib).pad(x(lib, 1, 1, 3), (v, 1), mode=m), 1)
        add(f"F.pad((1, v), {mode})",
            lambda lib, v, m=mode: F(lib).pad(x(lib, 1, 1, 3), (1, v), mode=m), 1)
    add("F.unfold(v)", lambda lib, v: F(lib).unfold(x(lib, 1, 1, 3, 3), v), 2)
    add("F.unfold((2, v))", lambda lib, v: F(lib).unfold(x(lib, 1, 1, 3, 3), (2, v)), 1)
    add("F.unfold(2, padding=(1, v))",
        lambda lib, v: F(lib).unfold(x(lib, 1, 1, 3, 3), 2, padding=(1, v)), 1)
    add("F.fold(v, 1)", lambda lib, v: F(lib).fold(x(lib, 1, 1, 9), v, 1), 3)
    add("F.fold((3, v), 1)", lambda lib, v: F(lib).fold(x(lib, 1, 1, 9), (3, v), 1), 3)
    add("F.pixel_shuffle(v)", lambda lib, v: F(lib).pixel_shuffle(x(lib, 1, 4, 2, 2), v), 2)
    add("F.pixel_unshuffle(v)",
        lambda lib, v: F(lib).pixel_unshuffle(x(lib, 1, 1, 2, 2), v), 2)
    add("F.embedding(padding_idx=v)",
        lambda lib, v: F(lib).embedding(ids(lib), x(lib, 3, 2), padding_idx=v), 1)
    add("F.embedding_bag(padding_idx=v)",
        lambda lib, v: F(lib).embedding_bag(ids(lib)[None], x(lib, 3, 2), padding_idx=v), 1)
    for d in (1, 2, 3):
        shape, lead = (1, 2) + (5,) * d, (2,) * (d - 1)
        for pool in (f"max_pool{d}d", f"avg_pool{d}d"):
            add(f"F.{pool}(v)", lambda lib, v, p=pool, s=shape: getattr(F(lib), p)(x(lib, *s), v),
                2)
            add(f"F.{pool}((.., v))",
                lambda lib, v, p=pool, s=shape, e=lead: getattr(F(lib), p)(x(lib, *s), e + (v,)),
                2)
            add(f"F.{pool}(2, stride=v)",
                lambda lib, v, p=pool, s=shape: getattr(F(lib), p)(x(lib, *s), 2, stride=v), 1)
            add(f"F.{pool}(2, padding=v)",
                lambda lib, v, p=pool, s=shape: getattr(F(lib), p)(x(lib, *s), 2, padding=v), 1)
        for pool in (f"adaptive_avg_pool{d}d", f"adaptive_max_pool{d}d"):
            add(f"F.{pool}(v)", lambda lib, v, p=pool, s=shape: getattr(F(lib), p)(x(lib, *s), v),
                2)
            add(f"F.{pool}((.., v))",
                lambda lib, v, p=pool, s=shape, e=lead: getattr(F(lib), p)(x(lib, *s), e + (v,)),
                2)
        conv, weight = f"conv{d}d", (2, 2) + (1,) * d
        for arg in ("stride", "padding", "dilation", "groups"):
            add(f"F.{conv}({arg}=v)",
                lambda lib, v, c=conv, s=shape, w=weight, a=arg:
                getattr(F(lib), c)(x(lib, *s), x(lib, *w), **{a: v}), 1)
        for arg in ("stride", "padding", "dilation"):
            add(f"F.{conv}({arg}=(.., v))",
                lambda lib, v, c=conv, s=shape, w=weight, a=arg, e=(1,) * (d - 1):
                getattr(F(lib), c)(x(lib, *s), x(lib, *w), **{a: e + (v,)}), 1)
        add(f"F.conv_transpose{d}d(output_padding=v)",
            lambda lib, v, d=d, s=shape, w=weight:
            getattr(F(lib), f"conv_transpose{d}d")(x(lib, *s), x(lib, *w), stride=2,
                                                   output_padding=v), 1)
    for fn in ("glu", "softmax", "log_softmax", "softmin", "normalize"):
        add(f"F.{fn}(dim=v)", lambda lib, v, f=fn: getattr(F(lib), f)(x(lib, 2, 4), dim=v), 1)
    add("F.cosine_similarity(dim=v)",
        lambda lib, v: F(lib).cosine_similarity(x(lib, 2, 3), x(lib, 2, 3), dim=v), 1)
    add("F.channel_shuffle(v)", lambda lib, v: F(lib).channel_shuffle(x(lib, 1, 4, 2), v), 2)
    add("F.local_response_norm(v)",
        lambda lib, v: F(lib).local_response_norm(x(lib, 1, 3, 4), v), 2)
    add("F.lp_pool1d(2, v)", lambda lib, v: F(lib).lp_pool1d(x(lib, 1, 1, 4), 2, v), 2)
    add("F.lp_pool2d(2, v)", lambda lib, v: F(lib).lp_pool2d(x(lib, 1, 1, 4, 4), 2, v), 2)
    add("F.group_norm(v)", lambda lib, v: F(lib).group_norm(x(lib, 2, 2, 3), v), 1)
    add("F.layer_norm((v,))", lambda lib, v: F(lib).layer_norm(x(lib, 3, 2), (v,)), 2)
    for loss in ("cross_entropy", "nll_loss"):
        add(f"F.{loss}(ignore_index=v)",
            lambda lib, v, f=loss: getattr(F(lib), f)(x(lib, 2, 3), lib.tensor([0, 1]),
                                                      ignore_index=v), 1)
    add("F.max_unpool1d(kernel_size=v)",
        lambda lib, v: F(lib).max_unpool1d(x(lib, 1, 1, 2), lib.tensor([[[0, 2]]]), v), 2)
    return cases


MODULES = {name: (build, base, shape) for name, build, base, shape in _modules()}
FUNCTIONS = {name: (call, base) for name, call, base in _functions()}

# torch's outcomes not copied (docs/pytorch.md, "Int-like sizes"): ours refuses at
# construction with a TypeError or ValueError naming the argument
_FORWARD_FAILS = "torch builds it and fails at the first call"
KEPT = {}
for _d in (1, 2, 3):
    for _arg, _kinds in (("stride", ("False", "float")), ("padding", ("float",)),
                         ("dilation", ("False", "float")), ("groups", ("True",))):
        for _k in _kinds:
            KEPT[f"Conv{_d}d.{_arg}", _k] = _FORWARD_FAILS
    KEPT[f"ConvTranspose{_d}d.output_padding", "float"] = _FORWARD_FAILS
    for _cls in (f"Conv{_d}d", f"ConvTranspose{_d}d"):
        KEPT[f"{_cls}.kernel_size", "False"] = "torch builds an empty kernel that cannot run"
    for _k in ("True", "False", "float"):
        KEPT[f"InstanceNorm{_d}d.num_features", _k] = "torch builds it only without weights"
        for _pad in ("ConstantPad", "ReflectionPad", "ReplicationPad", "ZeroPad",
                     "CircularPad"):
            KEPT[f"{_pad}{_d}d.padding", _k] = _FORWARD_FAILS
    KEPT[f"LazyConv{_d}d.out_channels", "float"] = "torch fails at the first call"
KEPT["LazyLinear.out_features", "float"] = "torch fails at the first call"
for _k in ("True", "False", "float"):
    KEPT["Unflatten.dim", _k] = _FORWARD_FAILS
for _k in ("True", "float"):
    KEPT["GroupNorm.num_groups", _k] = _FORWARD_FAILS
KEPT["GroupNorm.num_groups", "False"] = "torch's ZeroDivisionError"
for _cls in ("RNN", "LSTM", "GRU"):
    KEPT[f"{_cls}.num_layers", "True"] = "torch builds one layer and fails at the first call"
for _name in ("Flatten.start_dim", "Flatten.end_dim"):
    KEPT[_name, "float"] = _FORWARD_FAILS
for _name in ("Embedding.padding_idx", "EmbeddingBag.padding_idx"):
    for _k in ("True", "False"):
        KEPT[_name, _k] = "ours prints the row's int where torch prints the bool"
_CALL_FAILS = "torch's call fails on the value its constructor kept; ours runs"
for _d in (2, 3):
    for _pool in ("AdaptiveAvgPool", "AdaptiveMaxPool"):
        KEPT[f"{_pool}{_d}d.output_size", "numpy"] = _CALL_FAILS
        KEPT[f"{_pool}{_d}d.output_size", "tensor"] = _CALL_FAILS
for _name in ("Fold.output_size", "Fold.kernel_size", "Unfold.kernel_size", "Unfold.stride",
              "LPPool2d.kernel_size"):
    KEPT[_name, "tensor"] = _CALL_FAILS
KEPT["full(v)", "numpy"] = KEPT["full(v)", "tensor"] = "torch takes a bare int size only"
KEPT["split(v)", "numpy"] = KEPT["torch.split(x, v)", "numpy"] = \
    "torch reads a NumPy int as a list of sizes"
for _name in ("MultiheadAttention.num_heads", "TransformerEncoderLayer.nhead",
              "TransformerDecoderLayer.nhead"):
    KEPT[_name, "float"] = "torch builds a float head_dim"
for _name in ("Embedding.padding_idx", "EmbeddingBag.padding_idx"):
    KEPT[_name, "float"] = "torch's IndexError of its row write"

_REFUSED = "torch's parser refuses it here though it takes it elsewhere; ours takes the int"
for _name in ("F.unfold(v)", "F.fold(v, 1)", "F.lp_pool2d(2, v)"):
    KEPT[_name, "tensor"] = _REFUSED
for _d in (2, 3):
    for _pool in ("avg", "max"):
        KEPT[f"F.adaptive_{_pool}_pool{_d}d(v)", "numpy"] = _REFUSED
        KEPT[f"F.adaptive_{_pool}_pool{_d}d(v)", "tensor"] = _REFUSED
KEPT["F.max_unpool1d(kernel_size=v)", "numpy"] = _REFUSED
for _k in ("True", "False"):
    KEPT["F.max_unpool1d(kernel_size=v)", _k] = "torch reads a bool kernel as a size"
KEPT["F.group_norm(v)", "False"] = "torch's ZeroDivisionError"

# differences not yet followed (each checked to differ still)
LEFT = {}


def _normalised(text):
    # torch keeps the NumPy scalar or tensor it was given and prints it; ours keeps its int
    return re.sub(r"(?:np\.int64|tensor)\((-?\d+)\)", r"\1", text)


def _module_outcome(lib, name, kind):
    build, base, shape = MODULES[name]
    try:
        module = build(lib.nn, _stand_in(kind, lib, base))
    except Exception as error:                 # noqa: BLE001 (the class is the outcome)
        return ("raises", type(error))
    shapes = [None if "Uninitialized" in type(p).__name__ else tuple(p.shape)
              for p in module.parameters()]
    outcome = ["builds", _normalised(repr(module)), shapes]
    if shape is not None:
        lib.manual_seed(0)
        try:
            out = module(lib.randn(*shape))
            outcome.append(tuple((out[0] if isinstance(out, tuple) else out).shape))
        except Exception as error:             # noqa: BLE001
            outcome.append(("call raises", type(error)))
    return tuple(outcome)


def _function_outcome(lib, name, kind):
    call, base = FUNCTIONS[name]
    try:
        result = call(lib, _stand_in(kind, lib, base))
    except Exception as error:                 # noqa: BLE001
        return ("raises", type(error))
    if isinstance(result, (tuple, list)):
        return ("gives", [tuple(t.shape) for t in result])
    return ("gives", tuple(result.shape))


def _agree(theirs, ours):
    # the same outcome; an exception of ours a subclass of torch's (at build or call)
    if len(theirs) != len(ours) or theirs[0] != ours[0]:
        return False
    for a, b in zip(theirs, ours):
        if isinstance(a, tuple) and a[:1] in (("call raises",),) and isinstance(b, tuple):
            if b[:1] != a[:1] or not issubclass(b[1], a[1]):
                return False
        elif isinstance(a, type):
            if not (isinstance(b, type) and issubclass(b, a)):
                return False
        elif a != b:
            return False
    return True


@pytest.mark.parametrize("name", list(MODULES) + list(FUNCTIONS))
def test_int_like_argument_as_torch(name):
    """Each stand-in for the argument: ours as torch's; a ``LEFT`` one must still differ
    (drop its entry once it agrees); a ``KEPT`` one is the next test's."""
    outcome = _module_outcome if name in MODULES else _function_outcome
    wrong = []
    for kind in KINDS:
        if (name, kind) in KEPT:
            continue
        theirs, ours = outcome(torch, name, kind), outcome(mg, name, kind)
        if _agree(theirs, ours) == ((name, kind) in LEFT):
            wrong.append(f"given {kind}: torch {theirs}, ours {ours}"
                         + (" (agrees now: drop its LEFT entry)" if (name, kind) in LEFT
                            else ""))
    assert not wrong, f"{name}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name, kind", sorted(KEPT), ids=[f"{n}-{k}" for n, k in sorted(KEPT)])
def test_kept_differences(name, kind):
    """Where torch's outcome is an accident we do not copy, ours refuses at construction
    (TypeError or ValueError), or builds what runs; torch's still differs."""
    outcome = _module_outcome if name in MODULES else _function_outcome
    theirs, ours = outcome(torch, name, kind), outcome(mg, name, kind)
    if ours[0] == "raises":
        assert issubclass(ours[1], (TypeError, ValueError)), ours
    else:
        assert not any(isinstance(part, tuple) and part[:1] == ("call raises",)
                       for part in ours), ours
    assert not _agree(theirs, ours), f"torch now agrees: {theirs}; drop the KEPT entry"


def test_bool_size_first_refused_later_taken():
    """torch's factories refuse a bool as the first size and take one after it."""
    assert tuple(mg.zeros(3, True).shape) == tuple(torch.zeros(3, True).shape)
    with pytest.raises(TypeError):
        torch.zeros((True, 3))
    with pytest.raises(TypeError):
        mg.zeros((True, 3))


def test_legacy_constructor_refuses_negative_strides():
    """``Tensor(array)`` of a reversed view is torch's ValueError, as ``tensor`` is; the
    array is read as it is otherwise, and nothing is made of the failed call."""
    reversed_view = np.arange(4.0)[::-1]
    with pytest.raises(ValueError):
        torch.Tensor(reversed_view)
    with pytest.raises(ValueError, match="negative"):
        mg.Tensor(reversed_view)
    copy = reversed_view.copy()
    assert np.array_equal(mg.Tensor(copy).numpy(), torch.Tensor(copy).numpy())
    strided = np.zeros((2, 3))[:, ::2]           # positive strides, not contiguous: taken
    assert tuple(mg.Tensor(strided).shape) == tuple(torch.Tensor(strided).shape)

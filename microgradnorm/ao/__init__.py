"""``torch.ao``'s counterparts: ``ao.quantization.fuse_modules`` (folding a model's
Conv/Linear + BatchNorm (+ ReLU) runs into one module each) and the fused containers of
``ao.nn.intrinsic`` it builds. Nothing is quantized: the fusion is what float models use."""

from . import nn, quantization

__all__ = ["nn", "quantization"]

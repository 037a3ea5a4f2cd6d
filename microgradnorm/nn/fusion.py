r"""Folding an eval-mode BatchNorm into the convolution or linear layer before it
(``torch.nn.utils.fusion``, reached as ``nn.utils.fuse_conv_bn_eval``, ...).

In eval a BatchNorm is an affine map per channel, y = γ (x - μ) / √(σ² + ε) + β, so a
layer followed by it is one layer of weight W·s and bias (b - μ)·s + β, with
s = γ / √(σ² + ε) scaling each output channel.
"""

import copy

from .. import autograd
from .parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv, bn, transpose=False):
    r"""A copy of the eval-mode ``conv`` whose weight and bias fold in the eval-mode
    BatchNorm ``bn`` that follows it (``nn.utils.fuse_conv_bn_eval``): the copy's output is
    ``bn(conv(x))``. ``transpose``: ``conv`` is a transposed convolution (its output
    channels on the weight's dim 1).

    Example:
        >>> fused = nn.utils.fuse_conv_bn_eval(conv.eval(), bn.eval())
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    r"""The convolution weight and bias that fold in a BatchNorm's eval-mode map
    (``nn.utils.fuse_conv_bn_weights``): :math:`W s` (s on the output-channel dim) and
    :math:`(b - \mu) s + \beta`, :math:`s = \gamma / \sqrt{\sigma^2 + \epsilon}`; a missing
    ``conv_b``, ``bn_w``, ``bn_b`` counts as 0, 1, 0. Each is a new Parameter in its
    original dtype, requiring grad as the tensor it replaces.

    Shape:
        conv_w (C_out, C_in/groups, *k), or (C_in, C_out/groups, *k) with ``transpose``;
        the others (C_out,).

    Example:
        >>> w, b = nn.utils.fuse_conv_bn_weights(conv.weight, conv.bias, bn.running_mean,
        ...                                      bn.running_var, bn.eps, bn.weight, bn.bias)
    """
    bias_dtype = conv_w.dtype if conv_b is None else conv_b.dtype
    with autograd.no_grad():
        if conv_b is None:
            conv_b = bn_rm.new_zeros(bn_rm.shape)
        bn_w = bn_rm.new_ones(bn_rm.shape) if bn_w is None else bn_w
        bn_b = bn_rm.new_zeros(bn_rm.shape) if bn_b is None else bn_b
        rstd = (bn_rv + bn_eps).rsqrt()                                  # (C_out,)
        channel = (1, -1) if transpose else (-1, 1)
        scale = (bn_w * rstd).reshape(channel + (1,) * (conv_w.ndim - 2))
        weight = (conv_w * scale).to(conv_w.dtype)
        bias = ((conv_b - bn_rm) * rstd * bn_w + bn_b).to(bias_dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    r"""A copy of the eval-mode ``linear`` whose weight and bias fold in the eval-mode
    BatchNorm ``bn`` that follows it (``nn.utils.fuse_linear_bn_eval``): the copy's output
    is ``bn(linear(x))``. ``bn`` has ``linear.out_features`` features, or 1.

    Example:
        >>> fused = nn.utils.fuse_linear_bn_eval(linear.eval(), bn.eval())
    """
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            f"To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    r"""The linear weight and bias that fold in a BatchNorm's eval-mode map
    (``nn.utils.fuse_linear_bn_weights``): :math:`W s` (s on each output row) and
    :math:`(b - \mu) s + \beta`, :math:`s = \gamma / \sqrt{\sigma^2 + \epsilon}`; a missing
    ``linear_b`` counts as 0 (``bn_w`` and ``bn_b`` are needed). Each is a new Parameter in
    its original dtype, requiring grad as the tensor it replaces.

    Shape:
        linear_w (out_features, in_features); the others (out_features,) or (1,).

    Example:
        >>> w, b = nn.utils.fuse_linear_bn_weights(fc.weight, fc.bias, bn.running_mean,
        ...                                        bn.running_var, bn.eps, bn.weight, bn.bias)
    """
    for name, value in (("bn_w", bn_w), ("bn_b", bn_b)):
        if value is None:                   # torch's TypeError (a BatchNorm without affine)
            raise TypeError(f"fuse_linear_bn_weights: {name} must be a Tensor, got None (a "
                            "BatchNorm with affine=False)")
    bias_dtype = linear_w.dtype if linear_b is None else linear_b.dtype
    with autograd.no_grad():
        if linear_b is None:
            linear_b = bn_rm.new_zeros(bn_rm.shape)
        scale = bn_w * (bn_rv + bn_eps).rsqrt()                          # (out_features,)
        weight = linear_w * scale.unsqueeze(-1).to(linear_w.dtype)
        bias = ((linear_b - bn_rm) * scale + bn_b).to(bias_dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, linear_b.requires_grad)

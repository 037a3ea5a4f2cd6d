"""``torch.ao.quantization``'s module fusion: ``fuse_modules`` and ``fuse_modules_qat``.

``fuse_modules(model, [["conv", "bn", "relu"], ...])`` replaces each listed run of
submodules by one module and the rest of the run by ``nn.Identity``. In eval mode a
BatchNorm after a convolution or linear layer is folded into its weight and bias
(``nn.utils.fuse_conv_bn_eval``), so Conv+BN becomes one convolution and Conv+BN+ReLU a
``ConvReLU2d`` of it; Conv+ReLU, Linear+ReLU and BN+ReLU become the containers of
``ao.nn.intrinsic``. ``fuse_modules_qat`` keeps the BatchNorm (training mode): Conv+BN
becomes a ``ConvBn2d`` container. The fused model's output is the unfused model's, up to
rounding.
"""

import copy

from .. import nn
from ..nn.parametrize import type_before_parametrizations
from ..nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval
from .nn import intrinsic as nni

__all__ = ["fuse_conv_bn", "fuse_conv_bn_relu", "fuse_convtranspose_bn", "fuse_known_modules",
           "fuse_linear_bn", "fuse_modules", "fuse_modules_qat", "get_fuser_method"]


def _check_bn_for_qat(bn, channels, layer):
    if bn.num_features != channels:
        raise AssertionError(f"Output channel of {layer} must match num_features of "
                             f"{type(bn).__name__}")
    if not bn.affine:
        raise AssertionError(f"Only support fusing {type(bn).__name__} with affine set to "
                             "True")
    if not bn.track_running_stats:
        raise AssertionError(f"Only support fusing {type(bn).__name__} with "
                             "tracking_running_stats set to True")


_CONV_BN = {nn.Conv1d: nni.ConvBn1d, nn.Conv2d: nni.ConvBn2d, nn.Conv3d: nni.ConvBn3d}
_CONV_BN_RELU = {nn.Conv1d: nni.ConvBnReLU1d, nn.Conv2d: nni.ConvBnReLU2d,
                 nn.Conv3d: nni.ConvBnReLU3d}
_CONV_RELU = {nn.Conv1d: nni.ConvReLU1d, nn.Conv2d: nni.ConvReLU2d, nn.Conv3d: nni.ConvReLU3d}


def fuse_conv_bn(is_qat, conv, bn):
    """Conv + BatchNorm as one module: in eval, the convolution with the BatchNorm folded
    in; for QAT (``is_qat``), a ``ConvBn{1,2,3}d`` container of the two.

    Example:
        >>> fused = fuse_conv_bn(False, conv.eval(), bn.eval())
    """
    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if not is_qat:
        return fuse_conv_bn_eval(conv, bn)
    _check_bn_for_qat(bn, conv.out_channels, type(conv).__name__)
    fused = _CONV_BN.get(type(conv))
    if fused is None:
        raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn)}")
    return fused(conv, bn)


def fuse_conv_bn_relu(is_qat, conv, bn, relu):
    """Conv + BatchNorm + ReLU as one module: in eval, ``ConvReLU{1,2,3}d`` of the
    convolution with the BatchNorm folded in; for QAT, a ``ConvBnReLU{1,2,3}d`` container.

    Example:
        >>> fused = fuse_conv_bn_relu(False, conv.eval(), bn.eval(), nn.ReLU())
    """
    if not conv.training == bn.training == relu.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        _check_bn_for_qat(bn, conv.out_channels, type(conv).__name__)
        fused = _CONV_BN_RELU.get(type(conv))
        if fused is None:
            raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn, relu)}")
        return fused(conv, bn, relu)
    fused = _CONV_RELU.get(type(conv))
    if fused is None:
        raise NotImplementedError(f"Cannot fuse eval modules: {(conv, bn, relu)}")
    return fused(fuse_conv_bn_eval(conv, bn), relu)


def fuse_linear_bn(is_qat, linear, bn):
    """Linear + BatchNorm1d as one module: in eval, the linear layer with the BatchNorm
    folded in; for QAT, a ``LinearBn1d`` container.

    Example:
        >>> fused = fuse_linear_bn(False, linear.eval(), bn.eval())
    """
    if linear.training != bn.training:
        raise AssertionError("Linear and BN both must be in the same mode (train or eval).")
    if not is_qat:
        return fuse_linear_bn_eval(linear, bn)
    _check_bn_for_qat(bn, linear.out_features, "Linear")
    return nni.LinearBn1d(linear, bn)


def fuse_convtranspose_bn(is_qat, convt, bn):
    """ConvTranspose + BatchNorm as one transposed convolution (eval only).

    Example:
        >>> fused = fuse_convtranspose_bn(False, convt.eval(), bn.eval())
    """
    if convt.training != bn.training:
        raise AssertionError("ConvTranspose and BN both must be in the same mode (train or "
                             "eval).")
    if is_qat:
        raise Exception("Fusing ConvTranspose+BatchNorm not yet supported in QAT.")
    return fuse_conv_bn_eval(convt, bn, transpose=True)


def _pair(container):
    def fuser(is_qat, first, second):
        return container(first, second)
    return fuser


_FUSERS = {
    (nn.Conv1d, nn.BatchNorm1d): fuse_conv_bn,
    (nn.Conv1d, nn.BatchNorm1d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv2d, nn.BatchNorm2d): fuse_conv_bn,
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv3d, nn.BatchNorm3d): fuse_conv_bn,
    (nn.Conv3d, nn.BatchNorm3d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv1d, nn.ReLU): _pair(nni.ConvReLU1d),
    (nn.Conv2d, nn.ReLU): _pair(nni.ConvReLU2d),
    (nn.Conv3d, nn.ReLU): _pair(nni.ConvReLU3d),
    (nn.Linear, nn.BatchNorm1d): fuse_linear_bn,
    (nn.Linear, nn.ReLU): _pair(nni.LinearReLU),
    (nn.BatchNorm2d, nn.ReLU): _pair(nni.BNReLU2d),
    (nn.BatchNorm3d, nn.ReLU): _pair(nni.BNReLU3d),
    (nn.ConvTranspose1d, nn.BatchNorm1d): fuse_convtranspose_bn,
    (nn.ConvTranspose2d, nn.BatchNorm2d): fuse_convtranspose_bn,
    (nn.ConvTranspose3d, nn.BatchNorm3d): fuse_convtranspose_bn,
}


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The function fusing modules of the classes ``op_list`` (a tuple), from the default
    table updated by ``additional_fuser_method_mapping``; an AssertionError if none.

    Example:
        >>> get_fuser_method((nn.Conv2d, nn.BatchNorm2d)) is fuse_conv_bn
        True
    """
    table = {**_FUSERS, **(additional_fuser_method_mapping or {})}
    fuser = table.get(op_list)
    if fuser is None:
        raise AssertionError(f"did not find fuser method for: {op_list} ")
    return fuser


def fuse_known_modules(mod_list, is_qat, additional_fuser_method_mapping=None):
    """The modules replacing ``mod_list``: the fused module first, then one ``nn.Identity``
    per other module (in the first's training mode). The first module's forward pre-hooks
    and the last's forward hooks move to the fused module.

    Example:
        >>> fused, gone = fuse_known_modules([conv, bn], is_qat=False)
    """
    types = tuple(type_before_parametrizations(m) for m in mod_list)
    fuser = get_fuser_method(types, additional_fuser_method_mapping)
    fused = fuser(is_qat, *mod_list)
    for hook in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(hook)
    mod_list[0]._forward_pre_hooks.clear()
    for hook in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook)
    mod_list[-1]._forward_hooks.clear()
    rest = []
    for _ in mod_list[1:]:
        identity = nn.Identity()
        identity.training = mod_list[0].training
        rest.append(identity)
    return [fused] + rest


def _lookup(model, dotted):
    for part in dotted.split("."):
        model = getattr(model, part)
    return model


def _replace(model, dotted, module):
    *path, last = dotted.split(".")
    setattr(_lookup(model, ".".join(path)) if path else model, last, module)


def _fuse(model, modules_to_fuse, is_qat, inplace, fuser_func, fuse_custom_config_dict):
    if not inplace:
        model = copy.deepcopy(model)
    extra = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    groups = ([modules_to_fuse] if all(isinstance(m, str) for m in modules_to_fuse)
              else modules_to_fuse)
    for names in groups:
        replacements = fuser_func([_lookup(model, n) for n in names], is_qat, extra)
        for name, module in zip(names, replacements):
            _replace(model, name, module)
    return model


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                 fuse_custom_config_dict=None):
    """Fuse runs of submodules of an eval-mode ``model``: each run of names becomes one
    module (a BatchNorm folded into the layer before it), its other names ``nn.Identity``.

    Patterns: Conv{1,2,3}d+BatchNorm, Conv+BatchNorm+ReLU, Conv+ReLU, Linear+BatchNorm1d,
    Linear+ReLU, BatchNorm{2,3}d+ReLU, ConvTranspose+BatchNorm. A run in training mode with
    a BatchNorm to fold: an AssertionError (``fuse_modules_qat`` is the training form).

    Args:
        model: the Module holding the submodules.
        modules_to_fuse: a list of dotted names (``["conv", "bn", "relu"]``,
            ``"layer1.0.conv1"``), or a list of such lists.
        inplace: fuse ``model`` itself (default: a deep copy, returned).
        fuser_func: the function from a list of modules to their replacements.
        fuse_custom_config_dict: ``{"additional_fuser_method_mapping": {types: fuser}}``.

    Example:
        >>> fused = ao.quantization.fuse_modules(model.eval(), [["conv", "bn", "relu"]])
    """
    return _fuse(model, modules_to_fuse, False, inplace, fuser_func, fuse_custom_config_dict)


def fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                     fuse_custom_config_dict=None):
    """``fuse_modules`` for quantization-aware training: a training-mode run keeps its
    BatchNorm, Conv+BN becoming ``ConvBn2d(conv, bn)``, Conv+BN+ReLU ``ConvBnReLU2d``,
    Linear+BN ``LinearBn1d``.

    Example:
        >>> fused = ao.quantization.fuse_modules_qat(model.train(), [["conv", "bn"]])
    """
    return _fuse(model, modules_to_fuse, True, inplace, fuser_func, fuse_custom_config_dict)

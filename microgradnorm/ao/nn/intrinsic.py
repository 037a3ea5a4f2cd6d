"""``torch.ao.nn.intrinsic``: the containers ``fuse_modules`` puts in place of a run of
modules, each an ``nn.Sequential`` of those modules (run one after the other) whose class
names the pattern: ``ConvReLU2d(conv, relu)``, ``LinearReLU``, ``BNReLU2d``, and for
``fuse_modules_qat`` the training-mode ``ConvBn2d``, ``ConvBnReLU2d``, ``LinearBn1d``.
The constructor checks the modules' exact classes, as torch's (an AssertionError).

Example:
    >>> from microgradnorm.ao.nn.intrinsic import ConvReLU2d
    >>> fused = ConvReLU2d(nn.Conv2d(3, 8, 3), nn.ReLU())   # fused(x) == relu(conv(x))
"""

from ... import nn
from ...nn.parametrize import type_before_parametrizations

__all__ = ["BNReLU2d", "BNReLU3d", "ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d",
           "ConvBnReLU2d", "ConvBnReLU3d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d",
           "LinearBn1d", "LinearReLU"]


class _FusedModule(nn.Sequential):
    """The base of the fused containers: an ``nn.Sequential`` of the fused modules, whose
    ``_parts`` are the classes its modules must have, in order."""

    _parts = ()

    def __init__(self, *modules):
        found = [type_before_parametrizations(m) for m in modules]
        if len(found) != len(self._parts) or any(a is not b for a, b in
                                                 zip(found, self._parts)):
            names = " and ".join(t.__name__ for t in found)
            raise AssertionError(f"Incorrect types for input modules: {names}")
        super().__init__(*modules)


class ConvReLU1d(_FusedModule):
    """Conv1d then ReLU, one container: ``ConvReLU1d(conv1d, relu)``."""

    _parts = (nn.Conv1d, nn.ReLU)


class ConvReLU2d(_FusedModule):
    """Conv2d then ReLU, one container: ``ConvReLU2d(conv2d, relu)``."""

    _parts = (nn.Conv2d, nn.ReLU)


class ConvReLU3d(_FusedModule):
    """Conv3d then ReLU, one container: ``ConvReLU3d(conv3d, relu)``."""

    _parts = (nn.Conv3d, nn.ReLU)


class LinearReLU(_FusedModule):
    """Linear then ReLU, one container: ``LinearReLU(linear, relu)``."""

    _parts = (nn.Linear, nn.ReLU)


class BNReLU2d(_FusedModule):
    """BatchNorm2d then ReLU, one container: ``BNReLU2d(batchnorm2d, relu)``."""

    _parts = (nn.BatchNorm2d, nn.ReLU)


class BNReLU3d(_FusedModule):
    """BatchNorm3d then ReLU, one container: ``BNReLU3d(batchnorm3d, relu)``."""

    _parts = (nn.BatchNorm3d, nn.ReLU)


class ConvBn1d(_FusedModule):
    """Conv1d then BatchNorm1d, one container: ``ConvBn1d(conv1d, batchnorm1d)``."""

    _parts = (nn.Conv1d, nn.BatchNorm1d)


class ConvBn2d(_FusedModule):
    """Conv2d then BatchNorm2d, one container: ``ConvBn2d(conv2d, batchnorm2d)``."""

    _parts = (nn.Conv2d, nn.BatchNorm2d)


class ConvBn3d(_FusedModule):
    """Conv3d then BatchNorm3d, one container: ``ConvBn3d(conv3d, batchnorm3d)``."""

    _parts = (nn.Conv3d, nn.BatchNorm3d)


class ConvBnReLU1d(_FusedModule):
    """Conv1d, BatchNorm1d, ReLU: ``ConvBnReLU1d(conv, bn, relu)``."""

    _parts = (nn.Conv1d, nn.BatchNorm1d, nn.ReLU)


class ConvBnReLU2d(_FusedModule):
    """Conv2d, BatchNorm2d, ReLU: ``ConvBnReLU2d(conv, bn, relu)``."""

    _parts = (nn.Conv2d, nn.BatchNorm2d, nn.ReLU)


class ConvBnReLU3d(_FusedModule):
    """Conv3d, BatchNorm3d, ReLU: ``ConvBnReLU3d(conv, bn, relu)``."""

    _parts = (nn.Conv3d, nn.BatchNorm3d, nn.ReLU)


class LinearBn1d(_FusedModule):
    """Linear then BatchNorm1d, one container: ``LinearBn1d(linear, batchnorm1d)``."""

    _parts = (nn.Linear, nn.BatchNorm1d)

"""``nn.parallel``: ``DataParallel`` and ``DistributedDataParallel`` as torch runs them on a
machine without its accelerators, in one process.

``DataParallel(module)`` runs ``module`` itself, as torch's does where it finds no GPU
(``device_ids`` is ``[]``): ``DataParallel(m)(x)`` is ``m(x)``, its only child is
``.module``, so its state dict's keys start with ``module.``. Here it does so on a machine
with a GPU too: the module runs on whatever device holds it, and no replica is made.
``DistributedDataParallel`` needs a process group, which cannot exist here
(``mg.distributed``): building one raises torch's ValueError, so a training file's
``model = DDP(model)`` runs only where torch's would need ``torchrun``; the class is there for
``isinstance`` checks and imports."""

from .. import backend
from ..distributed import NOT_INITIALIZED
from .module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    """Runs ``module`` (``torch.nn.DataParallel`` without a GPU): the forward is
    ``module(*inputs, **kwargs)``.

    Args:
        module: the Module to run; kept as ``self.module``.
        device_ids, output_device, dim: taken; ``device_ids`` is ``[]`` as on torch's
            machines without a GPU.

    Example:
        >>> model = nn.DataParallel(nn.Linear(4, 2))
        >>> list(model.state_dict())                 # ['module.weight', 'module.bias']
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        """``self.module(*inputs, **kwargs)``. Shape: the module's."""
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """``torch.nn.parallel.data_parallel``: without a GPU, torch's RuntimeError (it finds no
    device type to scatter to); where CuPy sees one, ``module(*inputs, **module_kwargs)``
    on the device that holds it, no replica made. ``inputs``: a tuple of arguments or
    one argument."""
    if not backend.cuda_available():
        raise RuntimeError("device type could not be determined")
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))


class DistributedDataParallel(Module):
    """``torch.nn.parallel.DistributedDataParallel``: it needs a process group, and there is
    none here (``mg.distributed``), so building one raises torch's ValueError, whatever
    the arguments. Run the program as one process and use the model itself."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        raise ValueError(NOT_INITIALIZED)

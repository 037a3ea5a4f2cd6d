"""``torch.nn.utils.stateless``: the deprecated home of ``functional_call``, which lives in
``mg.func`` (as ``torch.func.functional_call``)."""

import warnings

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the tensors of ``parameters_and_buffers`` (a dict of
    ``{"0.weight": tensor}``) in place of the module's own, for this call only
    (``nn.utils.stateless.functional_call``): ``mg.func.functional_call``, after torch's
    FutureWarning that this name is deprecated.

    Example:
        >>> y = nn.utils.stateless.functional_call(model, {"weight": w}, (x,))
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                  "2.0 and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    from ..func import functional_call as call          # func imports nn: load it late
    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                strict=strict)

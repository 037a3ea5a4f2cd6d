"""A Module's conversions, as torch's: ``_apply(fn)`` runs ``fn`` on every parameter, its
``.grad`` and every buffer (children first), and ``to``, ``float``, ``double``, ``half``,
``bfloat16``, ``type``, ``cpu``, ``cuda``, ``to_empty`` and ``share_memory`` are ``_apply``
with a function of one tensor; so a model that overrides ``_apply`` (to move a cached
table along) sees every conversion. ``Module`` inherits them from ``ModuleConvert``.

A parameter keeps its object: it takes ``fn``'s result as its ``.data`` (its ``.grad`` too),
unless ``mg.__future__.set_overwrite_module_params_on_conversion(True)``, where each becomes
a new Parameter (``set_swap_module_params_on_conversion(True)``, which takes precedence,
keeps the objects). A buffer is replaced by ``fn``'s result."""

import warnings

from .. import __future__ as future
from .. import autograd, dtypes
from ..autograd import inference
from ..autograd.inputs import RequiresGradError
from ..ops import memory_formats
from ..ops.shape_arguments import to_arguments
from ..factories import zeros
from .parameter import Parameter


class ModuleConvert:
    """The conversion methods of ``Module`` (torch's names, arguments and order)."""

    def _apply(self, fn, recurse=True):
        """Run ``fn`` (Tensor -> Tensor) on each child (``recurse``), then on this module's
        parameters (and their ``.grad``), then its buffers; returns self. Override it (and
        call ``super()._apply(fn, recurse)``) to convert state that is no parameter or
        buffer with the module."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        overwrite = future.get_overwrite_module_params_on_conversion() and \
            not future.get_swap_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with autograd.no_grad():
                applied = fn(param)
            grad = param._grad
            # torch swaps in a new Parameter where the data cannot be set in place: between
            # the meta device and one with data (so to_empty unties tied weights, as torch's)
            if overwrite or (param.device.type == "meta") != (applied.device.type == "meta"):
                out = Parameter(applied, param.requires_grad)
                self._parameters[key] = out           # the table sets the attribute too
            else:
                param.data = applied
                if applied is not param:      # inference or not as made: torch's
                    param._version_box = inference.converted_counter(param._version_box,
                                                                     applied._version_box)
                out = param
            if grad is not None:
                with autograd.no_grad():
                    grad_applied = fn(grad)
                if out is not param:
                    out.grad = grad_applied.requires_grad_(grad.requires_grad)
                else:
                    grad.data = grad_applied
        for key, buffer in self._buffers.items():
            if buffer is not None:
                self._buffers[key] = fn(buffer)
        return self

    def to(self, *args, device=None, dtype=None, non_blocking=False, memory_format=None):
        """Move and/or cast (a floating or complex dtype: the floating and complex tensors
        only) every parameter and buffer, keeping the Parameter objects; returns self. Also
        ``to(device, dtype)`` and ``to(tensor)``, each with torch's ``non_blocking``
        (positional last too: copies are synchronous here) and ``memory_format``:
        ``mg.channels_last`` lays out each 4-D parameter and buffer (a convolution's weight)
        and its ``.grad`` channels-last, as torch's (its RuntimeError for a 5-D one, before
        anything changes; ``mg.channels_last_3d`` the 5-D ones).

        Example:
            >>> model.to(memory_format=mg.channels_last)        # conv weights (O, kH, kW, I)
        """
        if args and isinstance(args[-1], bool):
            args = args[:-1]                          # torch's positional non_blocking
        device, dtype = to_arguments("to()", args, device, dtype)
        if dtype is not None:
            if not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype)):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")
            if dtypes.is_complex(dtype):
                warnings.warn("Complex modules are a new feature: some modules may not work "
                              "as expected with complex parameters and buffers.",
                              stacklevel=2)
        shaped = memory_format not in (None, memory_formats.preserve_format)
        if memory_format is not None:
            memory_formats.check_format("to", memory_format)
        for tensor in (self.parameters() + self.buffers()) if shaped else ():
            if tensor.ndim in (4, 5):
                memory_formats.format_order(memory_format, tensor.ndim)   # torch's rank error

        def convert(t):
            cast = dtype if t.is_floating_point() or t.is_complex() else None
            if shaped and t.ndim in (4, 5):
                return t.to(device=device, dtype=cast, memory_format=memory_format)
            return t.to(device=device, dtype=cast)

        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Every parameter and buffer (and ``.grad``) given a new tensor of its shape and
        dtype on ``device`` (``empty_like``; torch leaves the values uninitialised, they are
        zeros here); returns self. From or to the meta device each parameter is a new
        Parameter, as torch's: weights tied before are two Parameters after (tie them again).

        Example:
            >>> model.to_empty(device="cpu")           # then load a state dict into it
        """
        device, dtype = to_arguments("to_empty()", (device,), None, None)
        if dtype is not None:                         # a dtype where the device goes
            raise TypeError(f"to_empty(): device must be a device, got {dtype}")
        return self._apply(lambda t: zeros(t.shape, dtype=t.dtype, device=device),
                           recurse=recurse)

    def cpu(self):
        """Every parameter and buffer ``.cpu()``; returns self."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Every parameter and buffer ``.cuda()`` (needs CuPy and a GPU); returns self."""
        return self._apply(lambda t: t.cuda())

    def float(self):
        """Every floating parameter and buffer ``.float()`` (float32); returns self."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Every floating parameter and buffer ``.double()`` (float64); returns self."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Every floating parameter and buffer ``.half()`` (float16); returns self."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Every floating parameter and buffer ``.bfloat16()`` (needs ml_dtypes)."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type):
        """Every parameter and buffer, the integer ones too, ``.type(dst_type)`` (torch's
        ``Module.type``); returns self. A non-floating ``dst_type`` for a parameter that
        requires grad is torch's RuntimeError, raised before anything changes."""
        dtype = zeros(0).type(dst_type).dtype          # Tensor.type reads dst_type
        if not (dtypes.is_floating(dtype) or dtypes.is_complex(dtype)) and \
                any(param.requires_grad for param in self.parameters()):
            raise RequiresGradError("data set to a tensor that requires gradients must be "
                                    f"floating point or complex dtype, got {dtype}")
        return self._apply(lambda t: t.type(dtype))

    def share_memory(self):
        """Every parameter and buffer ``.share_memory_()`` (one process holds the data
        here: nothing changes); returns self."""
        return self._apply(lambda t: t.share_memory_())

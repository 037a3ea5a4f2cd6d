"""The fused multiply-add compiled (``fma.fused_multiply_add``'s fast form): a·b + c for
float32 and float64 NumPy arrays by LLVM's ``llvm.fma`` intrinsic, which is IEEE's fma:
rounded once, with subnormals, overflow, inf, NaN and signed zeros as IEEE says. LLVM emits
one FMA instruction where the CPU has them (the loop vectorizes: 16 float32 or 8 float64
lanes on AVX-512) and a call of the C library's correctly rounded ``fma`` where not. The
bits are ``fma.numpy_fused_multiply_add``'s (tests/engine/test_fused_multiply_add.py). No
fast-math flags: they would let LLVM assume away NaN and inf."""

import numpy as np
from llvmlite import ir
from numba.extending import intrinsic

from .numba_jit import IEEE_OPTIONS, _jit

__all__ = ["fused_multiply_add"]


@intrinsic
def _fma(typingctx, a, b, c):
    """a·b + c rounded once, for three floats of one type: ``llvm.fma``."""
    def codegen(context, builder, signature, args):
        kind = args[0].type
        function = builder.module.declare_intrinsic("llvm.fma", [kind],
                                                    ir.FunctionType(kind, [kind, kind, kind]))
        return builder.call(function, args)
    return a(a, b, c), codegen


@_jit(options=IEEE_OPTIONS)
def _fma_loop(a, b, c, out):
    # b and c are arrays of a's size or one-element arrays (a number broadcast)
    if b.size == 1 and c.size == 1:
        for i in range(out.size):
            out[i] = _fma(a[i], b[0], c[0])
    elif b.size == 1:
        for i in range(out.size):
            out[i] = _fma(a[i], b[0], c[i])
    elif c.size == 1:
        for i in range(out.size):
            out[i] = _fma(a[i], b[i], c[0])
    else:
        for i in range(out.size):
            out[i] = _fma(a[i], b[i], c[i])


def fused_multiply_add(a, b, c):
    """a·b + c rounded once in a's dtype (float32 or float64 NumPy array a; b and c numbers
    or arrays broadcasting to a's shape, as ``fma.fused_multiply_add`` takes them)."""
    dtype = a.dtype
    b, c = np.asarray(b, dtype), np.asarray(c, dtype)
    shape = a.shape
    if (b.ndim and b.shape != shape) or (c.ndim and c.shape != shape):
        shape = np.broadcast_shapes(shape, b.shape, c.shape)
        a = np.broadcast_to(a, shape)                    # read element by element: all of it
        b, c = (np.broadcast_to(v, shape) if v.size != 1 else v for v in (b, c))
    out = np.empty(shape, dtype)
    _fma_loop(a.reshape(-1), b.reshape(-1), c.reshape(-1), out.reshape(-1))   # (b, c: 1 or n)
    return out

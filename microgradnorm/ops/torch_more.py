"""The rest of torch's math on tensors: the gamma family (``lgamma``, ``digamma``,
``polygamma``, ``mvlgamma``, the incomplete ``igamma``/``igammac``), ``i0``, ``gcd``/``lcm``,
``heaviside``, ``frexp``/``ldexp``, ``nextafter``, ``rsub``, ``renorm`` and their in-place forms;
torch's dtype and shape helpers (``result_type``, ``promote_types``, ``can_cast``,
``broadcast_shapes``); and torch's top-level in-place functions (``torch.exp_(x)`` is ``x.exp_()``).

The special functions are ``Unary`` nodes over the array functions of ``ops/gamma.py``, with
torch's closed-form gradients: lgamma' = digamma, digamma' = polygamma(1), polygamma(n)' =
polygamma(n + 1), i0' = i1, ∂P(a, x)/∂x = x^(a-1) e^-x / Γ(a) (none in a, as torch's),
each evaluated where torch evaluates it. At a float64 pole
this gives torch's value (inf, NaN or a huge number); at a float32 one it may give another
huge number (polygamma(1, -1): 6.6e32 here, 1.3e15 in torch). An integer or bool input
gives the default dtype; half precision computes in float32 and rounds once. ``mvlgamma``
and ``renorm`` are compositions; ``heaviside``'s backward raises, as torch's. ``METHODS``
names the functions ``ops/methods.py`` binds as ``Tensor`` methods."""

import numbers

import numpy as np

from .. import backend, dtypes
from .. import tensor as _tensor
from ..autograd.function import Function
from . import binary, elementwise, reductions
from .base import (_category, broadcast, broadcast_shape, check_tensor, constant,
                   normalize_axis, promote, result_dtype, result_type as tensors_result_type,
                   unbroadcast)
from .binary import in_place as binary_in_place
from .elementwise import Unary, _in_opmath, _unary
from .gamma import (LOG_PI, digamma_array, i0_array, i1_array, igamma_array, lgamma_array,
                    polygamma_array, trigamma_array)
from .pointwise import _in_place
from .return_types import frexp as frexp_result
from .special import _real_only


# ----- the gamma family and i0: one node each -------------------------------------------------
class Lgamma(Unary):
    saves = "x"

    def f(xp, x):
        _real_only("lgamma", x)
        return _in_opmath(lgamma_array, x)

    def df(grad, x):                         # d log|Γ(x)| = ψ(x): -inf at 0, NaN at -1, -2 ...
        return grad * digamma_array(x)


class Digamma(Unary):
    saves = "x"

    def f(xp, x):
        _real_only("digamma", x)
        return _in_opmath(digamma_array, x)

    def df(grad, x):                         # d ψ(x) = ψ'(x)
        return grad * trigamma_array(x)


class Polygamma(Function):
    """ψ⁽ⁿ⁾(x); its gradient is ψ⁽ⁿ⁺¹⁾(x)."""

    @staticmethod
    def forward(ctx, x, n):
        _real_only("polygamma", x)
        ctx.save_for_backward(x)
        ctx.n = n
        return _in_opmath(lambda wide: polygamma_array(n, wide), x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return grad * polygamma_array(ctx.n + 1, x)


class I0(Unary):
    saves = "x"

    def f(xp, x):
        _real_only("i0", x)
        return _in_opmath(i0_array, x)

    def df(grad, x):                         # d I0(x) = I1(x)
        return grad * i1_array(x)


lgamma = _unary("lgamma", Lgamma, "log|Γ(x)|, elementwise (``torch.lgamma``); inf at 0, at the "
                "negative integers and at ±inf. d/dx = ψ(x) (``digamma``).")
digamma = _unary("digamma", Digamma, "ψ(x) = d/dx log Γ(x), elementwise (``torch.digamma``): "
                 "-inf at 0, inf at -0, NaN at the negative integers. d/dx = ψ'(x) "
                 "(``polygamma(1, x)``).")
i0 = _unary("i0", I0, "I0(x) = Σₖ (x²/4)ᵏ / (k!)², the modified Bessel function of the "
            "first kind of order 0, elementwise (``torch.i0``). d/dx = I1(x).")


def polygamma(n, input):
    """ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function ψ = (log Γ)', elementwise
    (``torch.polygamma``): ψ⁽ⁿ⁾(x) = (-1)ⁿ⁺¹ n! Σₖ 1 / (x + k)ⁿ⁺¹ for n >= 1.

    Args:
        n: an int >= 0 (or a 0-d integer tensor); 0 is ``digamma``.
        input: the tensor; an integer or bool one gives the default dtype.

    The gradient is ψ⁽ⁿ⁺¹⁾(x). At the poles (0, -1, ...) torch's values: inf or -inf by n's
    parity (n >= 2), a large finite number for n = 1 at a negative integer.

    Example:
        >>> mg.polygamma(1, mg.tensor([1.0]))          # π²/6: tensor([1.6449])
    """
    if isinstance(n, _tensor.Tensor) and n.ndim == 0 and n.dtype.kind in "iu":
        n = n.item()
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"polygamma: n must be an int, got {type(n).__name__} {n!r}")
    if n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n, got {n}")
    return Polygamma.apply(check_tensor("polygamma", input), n=int(n))


def _polygamma_method(self, n):
    """``mg.polygamma(n, self)``: ψ⁽ⁿ⁾ of this tensor, elementwise."""
    return polygamma(n, self)


_polygamma_method.__name__ = _polygamma_method.__qualname__ = "polygamma"
polygamma.method = _polygamma_method          # x.polygamma(n): the tensor comes first


def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p``, elementwise
    (``torch.mvlgamma``): log Γₚ(x) = p(p - 1)/4 · log π + Σⱼ₌₀ᵖ⁻¹ log Γ(x - j/2), a sum of
    ``lgamma`` nodes (gradient Σⱼ ψ(x - j/2)). An integer input gives the default dtype
    (bool is refused, as torch's); ``p`` is an int >= 1."""
    check_tensor("mvlgamma", input)
    if input.dtype == np.bool_:
        raise RuntimeError("mvlgamma: the input tensor may not be a boolean tensor")
    dtypes.check_number("mvlgamma", "p", p, integer=True)
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    dtype = input.dtype if dtypes.is_floating(input.dtype) else dtypes.get_default_dtype()
    offsets = constant(input.xp.arange(-(p - 1) / 2, 0.5, 0.5).astype(dtype))     # (p,)
    terms = lgamma(input.astype(dtype, copy=False).unsqueeze(-1) + offsets)        # (..., p)
    return terms.sum(-1) + p * (p - 1) / 4 * LOG_PI


# ----- igamma, igammac: the regularized incomplete gamma functions ----------------------------
def _igamma_values(upper):
    # P(a, x) (Q with upper) of two arrays in float64 (igamma_array), or CuPy's
    def values(xp, a, x):
        if backend.is_cupy_array(a):
            import cupyx.scipy.special
            return (cupyx.scipy.special.gammaincc if upper else cupyx.scipy.special.gammainc)(a, x)
        return igamma_array(a, x, upper).astype(np.result_type(a, x), copy=False)
    return staticmethod(values)


def _igamma_slope(a, x):
    # dP/dx = x^(a-1) e^-x / Γ(a) (-dQ/dx), torch's formula, in float64
    with np.errstate(all="ignore"):
        wide_a, wide_x = a.astype(np.float64), x.astype(np.float64)
        return np.exp((wide_a - 1) * np.log(wide_x) - wide_x - lgamma_array(wide_a))


class Igamma(binary.Binary):
    """P(a, x); dP/dx = x^(a-1) e^-x / Γ(a); the derivative in a raises, as torch's."""
    name = "igamma"
    f = _igamma_values(upper=False)

    def da(grad, a, b, out):
        raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")

    def db(grad, a, b, out):
        return grad * _igamma_slope(a, b).astype(grad.dtype)


class Igammac(binary.Binary):
    """Q(a, x) = 1 - P(a, x); dQ/dx = -x^(a-1) e^-x / Γ(a); none in a, as torch's."""
    name = "igammac"
    f = _igamma_values(upper=True)

    def da(grad, a, b, out):
        raise NotImplementedError("the derivative for 'igammac: input' is not implemented.")

    def db(grad, a, b, out):
        return grad * -_igamma_slope(a, b).astype(grad.dtype)


def _incomplete_gamma(name, node, doc):
    # mg.igamma(input, other): two Tensors (no numbers, as torch's), a floating result
    def function(input, other):
        a, b = binary.operands(name, input, other, numbers_as=())
        dtype = np.dtype(tensors_result_type(a, b))
        if not dtypes.is_floating(dtype):
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{dtypes.torch_name(dtype)}'")
        return node.apply(a, b)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


igamma = _incomplete_gamma("igamma", Igamma, r"""The regularized lower incomplete gamma
    function :math:`P(a, x) = \frac{1}{\Gamma(a)} \int_0^x t^{a-1} e^{-t}\,dt`, a =
    ``input``, x = ``other``, broadcast (``torch.igamma``, ``torch.special.gammainc``):
    torch's methods (``ops/gamma.py``'s ``igamma_array``), NaN for a or x below 0 or both 0.
    d/dx = x^(a-1) e^-x / Γ(a); the derivative in a is not implemented (NotImplementedError
    in backward), as torch's. Floating tensors (no numbers).

    Example:
        >>> mg.igamma(mg.tensor([1.0]), mg.tensor([2.0]))            # 1 - e⁻²: [0.8647]
    """)
igammac = _incomplete_gamma("igammac", Igammac, r"""The regularized upper incomplete gamma
    function :math:`Q(a, x) = 1 - P(a, x)` (``torch.igammac``, ``torch.special.gammaincc``),
    computed directly where it is small; d/dx = -x^(a-1) e^-x / Γ(a), none in a, as torch's.

    Example:
        >>> mg.igammac(mg.tensor([1.0]), mg.tensor([2.0]))           # e⁻²: [0.1353]
    """)


# ----- integers: gcd, lcm ---------------------------------------------------------------------
def _integer_pair(fn, input, other):
    # both Tensors of integer dtypes, promoted as torch's; no gradient
    for name, value in (("input", input), ("other", other)):
        if not isinstance(value, _tensor.Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got "
                            f"{type(value).__name__}")
    a, b, dtype = promote(input._array, other._array)
    if dtype.kind not in "iu":
        raise NotImplementedError(f"{fn}: not implemented for {dtype} tensors (integer "
                                  "tensors only)")
    return a, b


def gcd(input, other):
    """The greatest common divisor, elementwise and >= 0, gcd(0, 0) = 0 (``torch.gcd``);
    integer tensors, broadcast and promoted."""
    a, b = _integer_pair("gcd", input, other)
    return constant(broadcast("gcd", input.xp.gcd, a, b))


def lcm(input, other):
    """The least common multiple, elementwise and >= 0, 0 where either is 0
    (``torch.lcm``): |a / gcd(a, b) · b|, which wraps on overflow as torch's (the abs taken
    after the product, where NumPy's ``lcm`` takes it before)."""
    a, b = _integer_pair("lcm", input, other)
    xp = input.xp

    def combine(a, b):
        dtype = a.dtype                          # a narrow product is whole before its abs,
        if dtype.itemsize < 4:                   # as C's promotion to int makes torch's
            a, b = a.astype(np.int32), b.astype(np.int32)
        divisor = xp.gcd(a, b)                   # 0 only where a and b are both 0
        out = xp.abs(a // xp.where(divisor == 0, 1, divisor) * b)
        return out.astype(dtype, copy=False)
    return constant(broadcast("lcm", combine, a, b))


# ----- heaviside, nextafter: elementwise with a fixed gradient --------------------------------
class Heaviside(Function):
    """0 where x < 0 (and NaN), ``values`` where x == 0, 1 where x > 0. torch defines no
    gradient: ``backward`` raises its error."""

    @staticmethod
    def forward(ctx, x, values):
        xp = backend.array_module(x)
        return broadcast("heaviside", lambda a, b: xp.where(a == 0, b, (a > 0).astype(a.dtype)),
                         x, values)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


def heaviside(input, values):
    """The Heaviside step function, elementwise (``torch.heaviside``): 0 for x < 0, ``values``
    (broadcast) where x = 0, 1 for x > 0; NaN gives 0, as torch's. Both tensors must have
    one dtype; no gradient is defined (backward raises RuntimeError, as torch's)."""
    for name, value in (("input", input), ("values", values)):
        if not isinstance(value, _tensor.Tensor):
            raise TypeError(f"heaviside(): argument '{name}' must be a Tensor, got "
                            f"{type(value).__name__}")
    if "c" in (input.dtype.kind, values.dtype.kind):
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype != values.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different "
                           f"dtypes ({input.dtype} and {values.dtype}).")
    return Heaviside.apply(input, values)


class Nextafter(Function):
    """The next float after x toward y, in their promoted floating dtype; torch's gradient:
    grad to x, but 0 where x == y (the result is y there), zeros to y."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.shapes = x.shape, y.shape
        ctx.equal = x == y if ctx.needs_input_grad[0] else None       # (broadcast)
        x, y, dtype = promote(x, y)
        if not dtypes.is_floating(dtype):
            raise NotImplementedError(f"nextafter: not implemented for {dtype} tensors "
                                      "(floating tensors only)")
        dtypes.check_float8_compute("nextafter", dtype)    # (e5m2's kind is "f": it would run)
        xp = backend.array_module(x)
        if dtype.kind != "f":                    # bfloat16: its neighbours in float32's bits
            return _nextafter_bfloat16(xp, x, y)
        return broadcast("nextafter", xp.nextafter, x, y)

    @staticmethod
    def backward(ctx, grad):
        x_shape, y_shape = ctx.shapes
        need_x, need_y = ctx.needs_input_grad
        xp = backend.array_module(grad)
        return (unbroadcast(xp.where(ctx.equal, 0, grad).astype(grad.dtype, copy=False),
                            x_shape) if need_x else None,
                xp.zeros(y_shape, grad.dtype) if need_y else None)


def _nextafter_bfloat16(xp, x, y):
    # bfloat16 is float32's top 16 bits: step the 16-bit pattern by one toward y
    x, y = xp.broadcast_arrays(x, y)
    bits = x.view(np.uint16).astype(np.int32)
    toward = xp.where((y > x) == (x >= 0), 1, -1)          # away from 0 or toward it
    stepped = xp.where(x == 0, xp.where(y > 0, 1, 0x8001), bits + toward)
    out = stepped.astype(np.uint16).view(x.dtype)
    return xp.where(xp.isnan(x) | xp.isnan(y), x + y, xp.where(x == y, y, out))


def nextafter(input, other):
    """The next representable float after ``input`` toward ``other``, elementwise
    (``torch.nextafter``); floating tensors, broadcast and promoted. The gradient passes
    to ``input`` unchanged where it differs from ``other``, else 0 (0 to ``other``), as
    torch's."""
    check_tensor("nextafter", input)
    check_tensor("nextafter", other)
    return Nextafter.apply(input, other)


# ----- frexp, ldexp ---------------------------------------------------------------------------
class Frexp(Function):
    """The mantissa x / 2^e for the exponents ``exponent`` (int32, kept); its gradient is
    grad / 2^e (torch's), both exact."""

    kept_options = ("exponent",)

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.exponent = exponent
        return _ldexp(x, -exponent)

    @staticmethod
    def backward(ctx, grad):
        return _ldexp(grad, -ctx.exponent)


def _ldexp(x, exponent):
    # x · 2^exponent exactly, in x's dtype (bfloat16 through float32, which holds it exactly)
    xp = backend.array_module(x)
    if x.dtype.kind != "f":
        return xp.ldexp(x.astype(np.float32), exponent).astype(x.dtype)
    return xp.ldexp(x, exponent)


def frexp(input):
    """x split into mantissa and exponent, x = mantissa · 2^exponent with 0.5 <= |mantissa|
    < 1 (``torch.frexp``): the named tuple ``(mantissa, exponent)``, the exponent int32; 0,
    inf and NaN give themselves and exponent 0. The mantissa's gradient is grad / 2^exponent.
    Floating tensors only (RuntimeError, as torch's)."""
    check_tensor("frexp", input)
    if not dtypes.is_floating(input.dtype):
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got "
                           f"{input.dtype}")
    data = input._array
    wide = data.astype(np.float32) if data.dtype.kind != "f" else data     # bfloat16
    exponent = input.xp.frexp(wide)[1].astype(np.int32, copy=False)
    return frexp_result(Frexp.apply(input, exponent=exponent), constant(exponent))


class Ldexp(Function):
    """x · 2^e for a floating x and integer exponents e, exact and in x's dtype; the
    gradient is grad · 2^e."""

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.shape = x.shape
        ctx.save_for_backward(exponent)          # an in-place change of it is caught
        return broadcast("ldexp", _ldexp, x, exponent.astype(np.int64, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (exponent,) = ctx.saved
        return unbroadcast(_ldexp(grad, exponent.astype(np.int64, copy=False)), ctx.shape)


def ldexp(input, other):
    """``input · 2^other``, elementwise and broadcast (``torch.ldexp``). A floating input with
    integer exponents stays in its dtype and is exact (2^other cannot overflow on the way;
    bool exponents beside it are refused, as torch's); otherwise it is ``input · 2.0 **
    other`` in the promoted dtype (integers give the default dtype), with pow's and mul's
    gradients."""
    for name, value in (("input", input), ("other", other)):
        if not isinstance(value, _tensor.Tensor):
            raise TypeError(f"ldexp(): argument '{name}' must be a Tensor, got "
                            f"{type(value).__name__}")
    if dtypes.is_floating(input.dtype) and other.dtype.kind in "biu":
        if other.dtype == np.bool_:                       # as torch's integer-exponent kernel
            raise NotImplementedError("ldexp: not implemented for bool exponents beside a "
                                      f"{input.dtype} input")
        return Ldexp.apply(input, other)
    if input.dtype.kind in "biu" or input.dtype == dtypes.float32:
        scale = elementwise.pow(2.0, other)           # 2.0 typed beside other, as torch's
    else:
        scale = elementwise.pow(constant(input.xp.asarray(2.0, dtype=input.dtype)), other)
    return binary.mul(input, scale)


# ----- rsub, renorm ---------------------------------------------------------------------------
def rsub(input, other, alpha=1):
    """``other - alpha · input`` (``torch.rsub``): ``sub`` with the operands swapped; ``other``
    may be a number. Bool operands are refused, as ``sub``'s."""
    check_tensor("rsub", input)
    return binary.sub(other, input, alpha=alpha)


def renorm(input, p, dim, maxnorm):
    """Each slice ``input.select(dim, i)`` whose p-norm exceeds ``maxnorm`` scaled down to
    it (``torch.renorm``): x · maxnorm / (‖x‖ₚ + 1e-7) there, x elsewhere, as torch's; a
    composition whose gradient includes the norm's.

    Args:
        input: a floating tensor of at least 2 dims.
        p: the norm's order, > 0 (inf too).
        dim: the dim whose slices are renormalized.
        maxnorm: the largest norm a slice keeps, >= 0.

    Example:
        >>> mg.renorm(mg.tensor([[1.0, 2.0], [3.0, 4.0]]), 2, 0, 2.0)   # rows of norm <= 2
    """
    check_tensor("renorm", input)
    p, maxnorm = dtypes.float_of(p, "renorm", "p"), dtypes.float_of(maxnorm, "renorm", "maxnorm")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    axis = normalize_axis("renorm", dim, input.ndim, single=True)
    others = tuple(d for d in range(input.ndim) if d != axis)
    # half precision: the norm and the scale in float32, as torch's (a float16 norm overflows)
    source = input.astype(dtypes.float32) if dtypes.is_half(input.dtype) else input
    norm = reductions.norm(source, p, dim=others, keepdim=True)     # (1, .., n, .., 1)
    scale = elementwise.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * scale.astype(input.dtype, copy=False)


# ----- the in-place forms ---------------------------------------------------------------------
def _checked(method):
    """``torch.<name>_(input, ...)`` for the in-place ``method``: input checked to be a
    Tensor first; ``.method`` is the method itself, which ``bind`` puts on Tensor."""
    name = method.__name__

    def function(input, *args, **kwargs):
        return method(check_tensor(name, input), *args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__, function.method = method.__doc__, method
    return function


def _on_a_copy(function):
    # a composition's in-place form: its inner nodes save what they read (renorm's norm saves
    # x), which must not be the memory the result is written into
    def on_copy(x, *args, **kwargs):
        return function(x.clone(), *args, **kwargs)
    return on_copy


lgamma_ = _checked(_in_place("lgamma", lgamma))
digamma_ = _checked(_in_place("digamma", digamma))
i0_ = _checked(_in_place("i0", i0))
polygamma_ = _checked(_in_place("polygamma", _polygamma_method))
mvlgamma_ = _checked(_in_place("mvlgamma", _on_a_copy(mvlgamma)))
renorm_ = _checked(_in_place("renorm", _on_a_copy(renorm)))
gcd_ = _checked(binary_in_place("gcd", gcd))
lcm_ = _checked(binary_in_place("lcm", lcm))
heaviside_ = _checked(binary_in_place("heaviside", heaviside))
ldexp_ = _checked(binary_in_place("ldexp", ldexp))
nextafter_ = _checked(binary_in_place("nextafter", nextafter))
igamma_ = _checked(binary_in_place("igamma", igamma))
igammac_ = _checked(binary_in_place("igammac", igammac))


# ----- dtypes and shapes: result_type, promote_types, can_cast, broadcast_shapes --------------
def _number_dtype(value):
    # the dtype torch gives a Python number by its category alone
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, numbers.Integral):
        return np.dtype(np.int64)
    if isinstance(value, complex):
        return dtypes.complex_of(dtypes.get_default_dtype())
    return dtypes.get_default_dtype()


def result_type(tensor=None, other=None, *, scalar=None, scalar1=None, scalar2=None):
    """The dtype torch's arithmetic gives ``tensor`` and ``other`` (``torch.result_type``),
    each a Tensor or a number: tensors with dims decide among themselves, then a 0-d tensor
    counts only where of a higher category (bool < integer < floating < complex), and then a
    number, which counts by its category alone (``x * 2.0`` keeps a float16 x half). By
    keyword, torch's names of its overloads: ``(tensor, other)``, ``(scalar, tensor)``,
    ``(scalar1, scalar2)``.

    Example:
        >>> mg.result_type(mg.tensor([1, 2]), 1.0)              # float32, the default dtype
    """
    if scalar1 is not None or scalar2 is not None:
        tensor, other = scalar1, scalar2
    elif scalar is not None:
        tensor, other = scalar, tensor
    tensors = [v for v in (tensor, other) if isinstance(v, _tensor.Tensor)]
    numbers_ = [v for v in (tensor, other) if not isinstance(v, _tensor.Tensor)]
    for name, value in zip(("tensor", "other"), (tensor, other)):
        if not isinstance(value, (_tensor.Tensor, numbers.Number, np.bool_)):
            raise TypeError(f"result_type(): {name} must be a Tensor or a number, got "
                            f"{type(value).__name__}")
    dtype = tensors_result_type(*tensors) if tensors else None
    for value in sorted(numbers_, key=lambda v: _category(_number_dtype(v))):
        number = _number_dtype(value)
        if dtype is None:
            dtype = number
        elif _category(number) > _category(dtype):
            dtype = result_dtype(np.empty(1, dtype), np.empty((), number))
    return dtypes.torch_dtype(dtype)


def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` cast to safely, by torch's table
    (``torch.promote_types``): uint8 with int8 is int16, float16 with bfloat16 float32, a
    higher category wins (int64 with float16 is float16)."""
    first = _as_dtype("promote_types", "type1", type1)
    second = _as_dtype("promote_types", "type2", type2)
    return dtypes.torch_dtype(result_dtype(np.empty(1, first), np.empty(1, second)))


def can_cast(from_, to):
    """Whether torch's in-place and ``out=`` rules let a ``from_`` result be written into a
    ``to`` tensor (``torch.can_cast``): not complex into real, not floating into integer,
    not a non-bool into bool; any other pair, narrowing included."""
    return _tensor._can_cast(_as_dtype("can_cast", "from_", from_),
                             _as_dtype("can_cast", "to", to))


def _as_dtype(fn, name, value):
    if dtypes.is_dtype(value) or isinstance(value, str) or (isinstance(value, type)
                                                             and issubclass(value, np.generic)):
        try:
            return dtypes.as_dtype(value)
        except TypeError:
            pass
    raise TypeError(f"{fn}(): argument '{name}' must be a dtype, got {type(value).__name__} "
                    f"{value!r}")


def broadcast_shapes(*shapes):
    """The shape tensors of ``shapes`` broadcast to, a ``Size`` (``torch.broadcast_shapes``),
    without making a tensor: each shape a sequence of ints or one int; compared from the last
    dim, each pair of sizes must be equal or one of them 1 (RuntimeError, as torch's)."""
    given = []
    for shape in shapes:
        shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
        for n in shape:
            if isinstance(n, bool) or not isinstance(n, numbers.Integral):
                raise TypeError(f"broadcast_shapes(): sizes must be ints, got {n!r} in "
                                f"{shape}")
            if n < 0:
                raise ValueError(f"broadcast_shapes(): a size is negative in {shape}")
        given.append(shape)
    return _tensor.Size(int(n) for n in broadcast_shape("broadcast_shapes", *given))


# ----- torch's top-level in-place functions: torch.exp_(x) is x.exp_() ------------------------
def _function_form(name):
    """``torch.<name>(input, ...)``: ``input.<name>(...)``, the Tensor method; anything but a
    Tensor is refused (TypeError) before anything runs."""
    def function(input, *args, **kwargs):
        return getattr(check_tensor(name, input), name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)`` (``torch.{name}``): in place, the method's rules."
    return function


abs_ = _function_form("abs_")
acos_ = _function_form("acos_")
acosh_ = _function_form("acosh_")
arccos_ = _function_form("arccos_")
arccosh_ = _function_form("arccosh_")
arcsin_ = _function_form("arcsin_")
arcsinh_ = _function_form("arcsinh_")
arctan_ = _function_form("arctan_")
arctanh_ = _function_form("arctanh_")
asin_ = _function_form("asin_")
asinh_ = _function_form("asinh_")
atan_ = _function_form("atan_")
atanh_ = _function_form("atanh_")
ceil_ = _function_form("ceil_")
clamp_ = _function_form("clamp_")
clamp_max_ = _function_form("clamp_max_")
clamp_min_ = _function_form("clamp_min_")
clip_ = _function_form("clip_")
cos_ = _function_form("cos_")
cosh_ = _function_form("cosh_")
deg2rad_ = _function_form("deg2rad_")
detach_ = _function_form("detach_")
erf_ = _function_form("erf_")
erfc_ = _function_form("erfc_")
exp2_ = _function_form("exp2_")
exp_ = _function_form("exp_")
expm1_ = _function_form("expm1_")
fill_ = _function_form("fill_")
fix_ = _function_form("fix_")
floor_ = _function_form("floor_")
frac_ = _function_form("frac_")
log10_ = _function_form("log10_")
log1p_ = _function_form("log1p_")
log2_ = _function_form("log2_")
log_ = _function_form("log_")
logit_ = _function_form("logit_")
nan_to_num_ = _function_form("nan_to_num_")
neg_ = _function_form("neg_")
negative_ = _function_form("negative_")
rad2deg_ = _function_form("rad2deg_")
reciprocal_ = _function_form("reciprocal_")
round_ = _function_form("round_")
rsqrt_ = _function_form("rsqrt_")
sigmoid_ = _function_form("sigmoid_")
sin_ = _function_form("sin_")
sinc_ = _function_form("sinc_")
sinh_ = _function_form("sinh_")
sqrt_ = _function_form("sqrt_")
square_ = _function_form("square_")
tan_ = _function_form("tan_")
tanh_ = _function_form("tanh_")
trunc_ = _function_form("trunc_")
xlogy_ = _function_form("xlogy_")
zero_ = _function_form("zero_")


def fill(input, value):
    """A new tensor of ``input``'s shape and dtype filled with ``value`` (``torch.fill``): in
    the graph, its gradient 0 to ``input`` (and the sum to a tensor ``value``)."""
    return check_tensor("fill", input).clone().fill_(value)


def numel(input):
    """The number of elements of ``input`` (``torch.numel``), ``input.numel()``."""
    return check_tensor("numel", input).numel()


def is_floating_point(input):
    """Whether ``input``'s dtype is a floating one (``torch.is_floating_point``)."""
    return check_tensor("is_floating_point", input).is_floating_point()


def detach(input):
    """``input.detach()`` (``torch.detach``): the same memory, outside the graph."""
    return check_tensor("detach", input).detach()


_FUNCTIONS = ("lgamma", "digamma", "polygamma", "mvlgamma", "i0", "gcd", "lcm", "heaviside",
              "nextafter", "frexp", "ldexp", "renorm", "igamma", "igammac")
METHODS = _FUNCTIONS + tuple(name + "_" for name in _FUNCTIONS if name != "frexp")

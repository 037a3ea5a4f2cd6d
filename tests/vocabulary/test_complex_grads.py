"""The elementwise functions of complex tensors against PyTorch: every ``Unary`` node of
ops/elementwise.py, ops/pointwise.py and ops/special.py (and the other one-input functions
beside them) gives torch's values and torch's gradient grad · conj(f'(z)) for a random
complex upstream, in complex128 and complex64, or refuses as torch does; ``pow`` and
``square`` likewise; and an in-place op whose result is complex refuses a real tensor with
torch's RuntimeError, changing nothing, without a ComplexWarning."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm.ops import elementwise, pointwise, special

# off the real axis, where log, sqrt and the inverse functions have their branch cuts
RNG = np.random.default_rng(0)
Z = RNG.uniform(-0.9, 0.9, 12) + 1j * RNG.choice([-1, 1], 12) * RNG.uniform(0.1, 0.9, 12)
UPSTREAM = RNG.standard_normal(12) + 1j * RNG.standard_normal(12)

# every Unary subclass of the three modules, by the function that applies it
UNARY = {"exp": elementwise.Exp, "log": elementwise.Log, "sqrt": elementwise.Sqrt,
         "rsqrt": elementwise.Rsqrt, "tanh": elementwise.Tanh, "sigmoid": elementwise.Sigmoid,
         "relu": elementwise.ReLU, "abs": elementwise.Abs, "erf": elementwise.Erf,
         "sin": pointwise.Sin, "cos": pointwise.Cos, "log10": pointwise.Log10,
         "log2": pointwise.Log2, "log1p": pointwise.Log1p, "expm1": pointwise.Expm1,
         "reciprocal": pointwise.Reciprocal, "tan": special.Tan, "sinh": special.Sinh,
         "cosh": special.Cosh, "asin": special.Asin, "acos": special.Acos,
         "atan": special.Atan, "asinh": special.Asinh, "acosh": special.Acosh,
         "atanh": special.Atanh, "erfc": special.Erfc, "erfinv": special.Erfinv,
         "exp2": special.Exp2, "sinc": special.Sinc}
# the other one-input functions of those modules
OTHERS = ("neg", "sign", "sgn", "square", "logit", "deg2rad", "rad2deg", "floor", "ceil",
          "trunc", "round", "frac", "nan_to_num", "signbit")
TOLERANCE = {"complex128": 1e-13, "complex64": 2e-5}


def test_every_unary_node_is_checked():
    defined = {c for module in (elementwise, pointwise, special) for c in vars(module).values()
               if isinstance(c, type) and issubclass(c, elementwise.Unary)
               and c is not elementwise.Unary and c.__module__ == module.__name__}
    assert defined == set(UNARY.values())


def _run(lib, name, dtype, *args):
    # (values, gradient) of lib.<name>(z, *args) with the upstream, or the exception raised
    try:
        z = lib.tensor(Z.astype(dtype), requires_grad=True)
        out = getattr(lib, name)(z, *args)
        upstream = UPSTREAM.astype(dtype) if out.is_complex() else UPSTREAM.real
        upstream = upstream.astype(str(out.dtype).removeprefix("torch."))
        out.backward(torch.tensor(upstream) if lib is torch else upstream)
    except Exception as error:                               # noqa: BLE001 (torch's class)
        return error
    return out.detach().numpy(), z.grad.numpy()


def check(name, dtype, *args):
    """mg.<name>(z, *args) against torch's: the same exception class, or one dtype, equal
    values and equal gradients."""
    theirs = _run(torch, name, dtype, *args)
    if isinstance(theirs, Exception):
        with pytest.raises(type(theirs)):
            got = _run(mg, name, dtype, *args)
            if isinstance(got, Exception):
                raise got
        return
    ours = _run(mg, name, dtype, *args)
    if isinstance(ours, Exception):
        raise ours
    (value, grad), (expected, expected_grad) = ours, theirs
    assert value.dtype == expected.dtype and grad.dtype == expected_grad.dtype
    rtol = TOLERANCE[dtype]
    np.testing.assert_allclose(value, expected, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(grad, expected_grad, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("name", sorted(UNARY) + list(OTHERS))
def test_one_input_functions_of_complex_tensors(name, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        check(name, dtype)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("exponent", [2, 3, -1, 0.5, -1.5, 0, 1])
def test_pow_of_a_complex_tensor(exponent, dtype):
    check("pow", dtype, exponent)


def test_sin_and_square_at_two_points():
    z = np.array([1 + 1j, -2 + 0.5j])
    upstream = np.array([0.3 - 1.2j, 0.7 + 0.4j])
    for name in ("sin", "square"):
        ours = mg.tensor(z, requires_grad=True)
        theirs = torch.tensor(z, requires_grad=True)
        getattr(mg, name)(ours).backward(upstream)
        getattr(torch, name)(theirs).backward(torch.tensor(upstream))
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-14)
    # d z² = 2z: grad · conj(2z)
    np.testing.assert_allclose(ours.grad.numpy(), upstream * np.conj(2 * z), rtol=1e-15)


@pytest.mark.parametrize("name", ["exp", "sin", "sigmoid", "reciprocal", "square"])
def test_a_real_input_still_gets_the_real_gradient(name):
    x = RNG.uniform(0.2, 2, 6)
    ours, theirs = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    getattr(mg, name)(ours).backward(UPSTREAM.real[:6])
    getattr(torch, name)(theirs).backward(torch.tensor(UPSTREAM.real[:6]))
    assert ours.grad.dtype == mg.float64
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-14)


# ----- a complex result into a real tensor, in place ------------------------------------------
COMPLEX_INTO_REAL = {
    "add_ alpha": lambda x, c: x.add_(c, alpha=2),
    "sub_ alpha": lambda x, c: x.sub_(c, alpha=2),
    "add_ number": lambda x, c: x.add_(1j, alpha=2),
    "addcmul_": lambda x, c: x.addcmul_(c, c),
    "addcmul_ mixed": lambda x, c: x.addcmul_(x, c),
    "addcdiv_": lambda x, c: x.addcdiv_(c, c),
    "float_power_": lambda x, c: x.float_power_(c),
    "float_power_ number": lambda x, c: x.float_power_(2j),
    "pow_": lambda x, c: x.pow_(c),
}


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize("case", sorted(COMPLEX_INTO_REAL))
def test_a_complex_result_into_a_real_tensor_raises(case, recorded):
    write = COMPLEX_INTO_REAL[case]
    for lib in (torch, mg):
        x = lib.ones(3, dtype=lib.float64)
        if recorded:                        # a graph records the write
            x = lib.ones(3, dtype=lib.float64, requires_grad=True).clone()
        c = lib.tensor(np.array([1 + 1j, 2j, 3]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")              # no ComplexWarning either
            with pytest.raises(RuntimeError, match="can't be cast|requires dtype"):
                write(x, c)
        np.testing.assert_array_equal(x.detach().numpy(), np.ones(3))


def test_a_complex_output_takes_a_complex_tensor_as_its_upstream_gradient():
    """backward(grad) of a complex output takes a complex Tensor as it takes an array, as
    torch's does; a real output still refuses one (the imaginary part would be lost)."""
    z = mg.tensor(np.array([1 + 2j, 3 - 1j]), requires_grad=True)
    (z * z).backward(mg.tensor(np.array([1 + 0j, 1j])))
    tz = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    (tz * tz).backward(torch.tensor([1 + 0j, 1j]))
    np.testing.assert_allclose(z.grad.numpy(), tz.grad.numpy())
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="complex"):
        (x * 2).backward(mg.tensor(np.array([1j, 1j])))

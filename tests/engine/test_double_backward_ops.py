"""Double backward through the reductions, scans, index writes, the arithmetic by name, the
three-operand updates, the step functions, the activations and the special functions: the
formulas of ops/double_backward.py, ops/double_backward_reductions.py and those beside the
nodes of activations.py, special.py and functional.py, against PyTorch in float64 (the
first gradient, then the gradient of a weighted sum of it with respect to the inputs and to
the output gradient, which has history too), and against finite differences of the first
gradient on hypothesis-drawn shapes."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import microgradnorm as mg


def _leaf(lib, array):
    if lib is torch:
        return torch.tensor(array, dtype=torch.float64, requires_grad=True)
    return mg.tensor(array, dtype=mg.float64, requires_grad=True)


def second_order(lib, fn, arrays, v, weights):
    """[the first gradients..., the inputs' .grad..., v's .grad] of fn at ``arrays`` (None
    where there is none): the first gradients taken with create_graph and the output
    gradient ``v`` a leaf, then Σ w·g backpropagated."""
    leaves, v = [_leaf(lib, a) for a in arrays], _leaf(lib, v)
    grads = lib.autograd.grad(fn(lib, *leaves), leaves, grad_outputs=v, create_graph=True,
                              allow_unused=True)
    total = sum((g * lib.tensor(w)).sum() for g, w in zip(grads, weights) if g is not None)
    if isinstance(total, (torch.Tensor, mg.Tensor)) and total.requires_grad:
        total.backward()
    firsts = [None if g is None else g.detach().numpy() for g in grads]
    return firsts + [None if t.grad is None else t.grad.numpy() for t in leaves + [v]]


def assert_matches_torch(fn, shapes, prepare=None, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    if prepare is not None:
        arrays = prepare(arrays)
    out_shape = fn(mg, *[mg.tensor(a, dtype=mg.float64) for a in arrays]).shape
    v = rng.standard_normal(out_shape)
    weights = [rng.standard_normal(s) for s in shapes]
    ours, theirs = (second_order(lib, fn, arrays, v, weights) for lib in (mg, torch))
    for a, b in zip(ours, theirs):
        if a is None and b is None:
            continue
        # an input no path reaches: None in one library may be zeros in the other
        a, b = (np.zeros_like(b) if a is None else a), (np.zeros_like(a) if b is None else b)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _ties(arrays):                  # rounded: maxima and medians shared by several elements
    return [np.round(a) for a in arrays]


def _zeros(arrays):                 # one zero in row 0, two in row 1
    x = arrays[0].copy()
    x[0, 1] = x[1, 2] = x[1, 3] = 0
    return [x, *arrays[1:]]


def _positive(arrays):
    return [np.abs(a) + 0.5 for a in arrays]


def _probabilities(arrays):
    return [1 / (1 + np.exp(-a)) for a in arrays]


INF = float("inf")
_IDX = np.array([[0, 1, 1, 3], [2, 2, 0, 0], [3, 1, 2, 0]])     # repeats: gradients add
_UNIQUE = np.array([[0, 1, 3], [2, 1, 0], [3, 0, 2]])

REDUCTIONS = {
    **{f"norm-p{p}": (lambda lib, x, p=p: (x * x.sin()).norm(p, dim=1), [(3, 4)], None)
       for p in (1, 2, INF, -INF, 3, 1.5, 0.5, 0)},
    "norm-all": (lambda lib, x: (x * x.sin()).norm(), [(3, 4)], None),
    "norm-p3-keepdim": (lambda lib, x: x.norm(3, dim=0, keepdim=True), [(3, 4)], None),
    "std": (lambda lib, x: (x * x).std(dim=1), [(3, 4)], None),
    "std-all": (lambda lib, x: (x * x).std(), [(3, 4)], None),
    "amax-ties": (lambda lib, x: (x * x).amax(1), [(3, 4)], _ties),
    "amin-ties-keepdim": (lambda lib, x: (x * x).amin(0, keepdim=True), [(3, 4)], _ties),
    "max-all-ties": (lambda lib, x: (x * x).max() * x, [(3, 4)], _ties),
    "min-all-ties": (lambda lib, x: (x * x).min() * x, [(3, 4)], _ties),
    "median-ties": (lambda lib, x: (x * x).median() * x, [(3, 4)], _ties),
    "nansum": (lambda lib, x: (x * x).nansum(1) * x.sum(1), [(3, 4)], None),
    "prod": (lambda lib, x: x.prod(1), [(3, 4)], None),
    "prod-zeros": (lambda lib, x: x.prod(1), [(3, 4)], _zeros),
    "prod-all-zeros": (lambda lib, x: x.prod(), [(3, 4)], _zeros),
    "prod-keepdim-zeros": (lambda lib, x: x.prod(0, keepdim=True), [(3, 4)], _zeros),
}

SCANS_AND_INDEXING = {
    "cumsum": (lambda lib, x: x.cumsum(1) ** 2, [(3, 4)], None),
    "cumprod": (lambda lib, x: x.cumprod(1), [(3, 4)], None),
    "cumprod-zeros": (lambda lib, x: x.cumprod(1), [(3, 4)], _zeros),
    "cumprod-zeros-dim0": (lambda lib, x: x.cumprod(0), [(3, 4)], _zeros),
    "logcumsumexp": (lambda lib, x: x.logcumsumexp(1), [(3, 4)], None),
    "logcumsumexp-dim0": (lambda lib, x: (x * x).logcumsumexp(0), [(3, 4)], None),
    "gather": (lambda lib, x: x.exp().gather(1, lib.tensor(_IDX)) * x.gather(1, lib.tensor(_IDX)),
               [(3, 4)], None),
    "scatter_add": (lambda lib, x, s: x.scatter_add(1, lib.tensor(_IDX), s * s).exp(),
                    [(3, 4), (3, 4)], None),
    "scatter": (lambda lib, x, s: x.scatter(1, lib.tensor(_UNIQUE), s * s).exp(),
                [(3, 4), (3, 3)], None),
    "index_add": (lambda lib, x, s: x.index_add(0, lib.tensor([0, 2, 0]), s * s).exp(),
                  [(3, 4), (3, 4)], None),
    "index_put": (lambda lib, x, s: x.index_put((lib.tensor([2, 0]),), s * s).exp(),
                  [(3, 4), (2, 4)], None),
    "index_put-broadcast": (lambda lib, x, s: x.index_put((lib.tensor([2, 0]),), s * s).sin(),
                            [(3, 4), (4,)], None),
    "index_put-accumulate": (lambda lib, x, s: x.index_put((lib.tensor([2, 0, 2]),), s * s,
                                                         accumulate=True).exp(),
                             [(3, 4), (3, 4)], None),
}

BINARY = {
    "add-alpha": (lambda lib, a, b: lib.add(a * a, b.exp(), alpha=2.5) * a, [(3, 4), (4,)]),
    "sub-alpha": (lambda lib, a, b: lib.sub(a * a, b * b, alpha=0.5) * b, [(3, 4), (3, 1)]),
    "atan2": (lambda lib, a, b: lib.atan2(a * a, b), [(3, 4), (4,)]),
    "hypot": (lambda lib, a, b: lib.hypot(a, b), [(3, 4), (4,)]),
    "logaddexp": (lambda lib, a, b: lib.logaddexp(a, b * b), [(3, 4), (4,)]),
    "logaddexp2": (lambda lib, a, b: lib.logaddexp2(a, b * b), [(3, 4), (4,)]),
    "copysign": (lambda lib, a, b: lib.copysign(a * a, b) * a, [(3, 4), (4,)]),
    "fmax": (lambda lib, a, b: lib.fmax(a * a, b) * a, [(3, 4), (4,)]),
    "fmin": (lambda lib, a, b: lib.fmin(a * a, b.sin()) * b, [(3, 4), (4,)]),
    "xlogy": (lambda lib, a, b: lib.xlogy(a * a, b * b), [(3, 4), (4,)]),
    "xlog1py": (lambda lib, a, b: lib.special.xlog1py(a * a, b * b), [(3, 4), (4,)]),
    "zeta-in-q": (lambda lib, q: lib.special.zeta(lib.tensor([[2.5], [3.0], [4.5]]), q * q + 1),
                  [(3, 4)]),
    "pow-of-number": (lambda lib, x: 2.5 ** (x * x) + 0.5 ** x, [(3, 4)]),
    "pow-tensor": (lambda lib, x, e: (x * x + 0.5) ** e.sin(), [(3, 4), (4,)]),
    "pow-tensor-zero-exponent": (lambda lib, x, e: x ** (e * 0) * x
                                 + x ** lib.tensor([0.0, 1.0, 2.0, 3.0]), [(3, 4), (4,)]),
    "remainder": (lambda lib, a, b: lib.remainder(a * a, b) * b, [(3, 4), (4,)]),
    "fmod": (lambda lib, a, b: lib.fmod(a * a, b) * b, [(3, 4), (4,)]),
    "nextafter": (lambda lib, x, y: lib.nextafter(x * x, y) * x, [(3, 4), (4,)]),
    "ldexp": (lambda lib, x: lib.ldexp(x * x, lib.tensor([1, 2, 3, 0])) * x, [(3, 4)]),
    "frexp": (lambda lib, x: lib.frexp(x * x)[0] * x, [(3, 4)]),
}

TERNARY_AND_STEPS = {
    "lerp": (lambda lib, a, b, w: lib.lerp(a * a, b.exp(), w.sin()), [(3, 4), (4,), (3, 1)]),
    "lerp-number": (lambda lib, a, b: lib.lerp(a * a, b.exp(), 0.3) * a, [(3, 4), (4,)]),
    "addcmul": (lambda lib, a, b, c: lib.addcmul(a * a, b.sin(), c * b, value=0.7) * a,
                [(3, 4), (4,), (3, 1)]),
    "addcdiv": (lambda lib, a, b, c: lib.addcdiv(a * a, b.sin(), c * c + 1, value=-1.3) * a,
                [(3, 4), (4,), (3, 1)]),
    "div-floor": (lambda lib, a, b: lib.div(a, b, rounding_mode="floor") * a * b, [(3, 4), (4,)]),
    "div-trunc": (lambda lib, a, b: lib.div(a, b, rounding_mode="trunc") + a * b, [(3, 4), (4,)]),
    "rounding-and-sign": (lambda lib, x: x.floor() * x + x.ceil() + x.round() * x
                          + x.trunc() * x + x.sign() * x * x + x.sgn() * x, [(3, 4)]),
    "round-decimals": (lambda lib, x: x.round(decimals=1) * x, [(3, 4)]),
    "sgn-complex": (lambda lib, a, b: (lib.complex(a, b).sgn() * lib.complex(b, a * a)).real
                    + lib.complex(a, b).sgn().imag * a, [(3, 4), (3, 4)]),
    "nan_to_num": (lambda lib, x: (x * x).nan_to_num() * x, [(3, 4)]),
}


def _rrelu(lib, x):
    lib.manual_seed(3)                     # the same slopes drawn in both libraries
    return lib.nn.functional.rrelu(x, training=True) * x


ACTIVATIONS_AND_SPECIAL = {
    "hardswish": (lambda lib, x: lib.nn.functional.hardswish(x * 3), None),
    "elu": (lambda lib, x: lib.nn.functional.elu(x, alpha=1.3), None),
    "selu": (lambda lib, x: lib.nn.functional.selu(x), None),
    "celu": (lambda lib, x: lib.nn.functional.celu(x, alpha=0.7), None),
    "softshrink": (lambda lib, x: lib.nn.functional.softshrink(x, 0.5) * x, None),
    "hardshrink": (lambda lib, x: lib.nn.functional.hardshrink(x, 0.5) * x, None),
    "rrelu": (_rrelu, None),
    "erfinv": (lambda lib, x: (x.tanh() * 0.9).erfinv(), None),
    "sinc": (lambda lib, x: x.sinc(), None),
    "lgamma": (lambda lib, x: x.lgamma(), _positive),
    "digamma": (lambda lib, x: x.digamma(), _positive),
    "polygamma": (lambda lib, x: lib.polygamma(2, x), _positive),
    "logit": (lambda lib, x: x.logit(), _probabilities),
    "logit-eps": (lambda lib, x: x.logit(eps=0.3) * x, _probabilities),
    "deg2rad-rad2deg": (lambda lib, x: x.deg2rad() * x + x.rad2deg() * x, None),
    "erfcx": (lambda lib, x: lib.special.erfcx(x), None),
    "log_ndtr": (lambda lib, x: lib.special.log_ndtr(x), None),
    "ndtri": (lambda lib, x: lib.special.ndtri(x), _probabilities),
    "entr": (lambda lib, x: lib.special.entr(x), _positive),
    "i0": (lambda lib, x: lib.i0(x), None),
    "i1": (lambda lib, x: lib.special.i1(x), None),
    "i0e": (lambda lib, x: lib.special.i0e(x), None),
    "i1e": (lambda lib, x: lib.special.i1e(x), None),
    "i1-i1e-at-zero": (lambda lib, x: lib.special.i1(x * 0) * x + lib.special.i1e(x * 0) * x, None),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_match_torch(name):
    fn, shapes, prepare = REDUCTIONS[name]
    assert_matches_torch(fn, shapes, prepare)


@pytest.mark.parametrize("name", sorted(SCANS_AND_INDEXING))
def test_scans_and_index_writes_match_torch(name):
    fn, shapes, prepare = SCANS_AND_INDEXING[name]
    assert_matches_torch(fn, shapes, prepare)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_arithmetic_matches_torch(name):
    fn, shapes = BINARY[name]
    assert_matches_torch(fn, shapes)


@pytest.mark.parametrize("name", sorted(TERNARY_AND_STEPS))
def test_ternary_and_step_functions_match_torch(name):
    fn, shapes = TERNARY_AND_STEPS[name]
    assert_matches_torch(fn, shapes)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS_AND_SPECIAL))
def test_activations_and_special_functions_match_torch(name):
    fn, prepare = ACTIVATIONS_AND_SPECIAL[name]
    assert_matches_torch(fn, [(3, 4)], prepare)


def _all_cases():
    # (fn, shapes, prepare) of every case above, by name
    cases = {}
    for table in (REDUCTIONS, SCANS_AND_INDEXING):
        cases.update(table)
    for table in (BINARY, TERNARY_AND_STEPS):
        cases.update({name: (fn, shapes, None) for name, (fn, shapes) in table.items()})
    cases.update({name: (fn, [(3, 4)], prepare)
                  for name, (fn, prepare) in ACTIVATIONS_AND_SPECIAL.items()})
    return cases


ALL_CASES = _all_cases()


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_the_first_gradient_in_float32_is_the_ordinary_backwards(name):
    # create_graph=True computes the first gradient by the Tensor formulas, in the input's
    # dtype: the same values as the array backward (rounding aside where a formula sums
    # in another order: cumprod beside a zero)
    fn, shapes, prepare = ALL_CASES[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    arrays = [a.astype(np.float32) for a in (prepare(arrays) if prepare else arrays)]
    found = []
    for create_graph in (False, True):
        leaves = [mg.tensor(a, requires_grad=True) for a in arrays]
        out = fn(mg, *leaves)
        v = mg.tensor(np.random.default_rng(1).standard_normal(out.shape).astype(out.dtype))
        grads = mg.autograd.grad(out, leaves, grad_outputs=v, create_graph=create_graph,
                                 allow_unused=True, materialize_grads=True)
        found.append([g.detach().numpy() for g in grads])
    for ordinary, recorded in zip(*found):
        assert recorded.dtype == ordinary.dtype == np.float32
        scale = np.abs(ordinary[np.isfinite(ordinary)]).max(initial=1.0)
        np.testing.assert_allclose(recorded, ordinary, rtol=1e-5, atol=1e-6 * scale)


def test_a_third_derivative_goes_through_the_formulas_again():
    # each formula's own nodes have formulas: differentiate three times, as torch
    def third(lib):
        x = _leaf(lib, [0.3, -1.2, 0.7, 1.1])
        y = (x[[0, 2, 0]] ** 4).sum() + x.cumprod(0).prod() + x.norm(3) \
            + lib.atan2(x, x * x + 1).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        (k,) = lib.autograd.grad(h.sum(), x)
        return k.detach().numpy()
    np.testing.assert_allclose(third(mg), third(torch), rtol=1e-10)


# ----- where torch's own double backward gives NaN or none ----------------------------------
def _hessian_vector(fn, x, v, w):
    # d<grad <fn(x), v>, w>/dx by double backward
    x = mg.tensor(x, dtype=mg.float64, requires_grad=True)
    (g,) = mg.autograd.grad(fn(x), x, grad_outputs=mg.tensor(v), create_graph=True)
    (g * mg.tensor(w)).sum().backward()
    return x.grad.numpy()


def test_norm_of_a_zero_slice_gives_zero_second_derivatives_where_torch_gives_nan():
    # torch's (x / n).masked_fill_(n == 0, 0) divides 0 by 0 in its own backward. (For
    # p < 2 but 1 the gradient near 0 has no derivative at all: NaN there, as torch's.)
    x = np.random.default_rng(1).standard_normal((3, 4))
    x[1] = 0
    for p in (1, 2, 3, INF):
        result = _hessian_vector(lambda t, p=p: t.norm(p, dim=1), x, np.ones(3), np.ones((3, 4)))
        assert np.isfinite(result).all() and (result[1] == 0).all()


def test_zero_to_a_positive_power_is_flat_twice():
    # 0 ** x is 0 for x > 0: torch's second derivative is NaN (0 · log 0), ours 0
    x = np.random.default_rng(2).standard_normal(5)
    result = _hessian_vector(lambda t: 0.0 ** (t * t + 0.1) * t, x, np.ones(5), np.ones(5))
    np.testing.assert_array_equal(result, 0)


def test_step_functions_give_constant_zero_gradients_as_torch():
    for lib in (mg, torch):
        x = _leaf(lib, [0.5, -1.5, 2.0])
        for y in (x.floor(), x.ceil(), x.round(), x.trunc(), x.sign(),
                  lib.div(x, 0.7, rounding_mode="floor")):
            (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
            assert not g.requires_grad and (g.detach().numpy() == 0).all()


def test_ops_torch_defines_no_derivative_for_still_refuse():
    x = mg.tensor([1.5, 2.5], dtype=mg.float64, requires_grad=True)
    y = mg.tensor([0.7, 1.1], dtype=mg.float64)
    with pytest.raises(RuntimeError, match="floor_divide"):
        mg.autograd.grad(mg.floor_divide(x, y).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="heaviside"):
        mg.autograd.grad(mg.heaviside(x, y).sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match="zeta"):
        mg.autograd.grad(mg.special.zeta(x + 1, y).sum(), x, create_graph=True)


# ----- finite differences of the first gradient, on drawn shapes ----------------------------
def _finite_difference(fn, arrays, v, weights, step=1e-6):
    def inner(values):                  # <grad <fn(x), v>, w> at values
        leaves = [mg.tensor(a, dtype=mg.float64, requires_grad=True) for a in values]
        grads = mg.autograd.grad(fn(*leaves), leaves, grad_outputs=mg.tensor(v),
                                 create_graph=True, allow_unused=True, materialize_grads=True)
        return sum(float((g.detach().numpy() * w).sum()) for g, w in zip(grads, weights))
    numerical = []
    for k, a in enumerate(arrays):
        slope = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            shifted = []
            for sign in (1, -1):
                moved = [np.array(b) for b in arrays]
                moved[k][i] += sign * step
                shifted.append(inner(moved))
            slope[i] = (shifted[0] - shifted[1]) / (2 * step)
        numerical.append(slope)
    return numerical


def _by_double_backward(fn, arrays, v, weights):
    leaves = [mg.tensor(a, dtype=mg.float64, requires_grad=True) for a in arrays]
    grads = mg.autograd.grad(fn(*leaves), leaves, grad_outputs=mg.tensor(v),
                             create_graph=True, allow_unused=True, materialize_grads=True)
    total = sum((g * mg.tensor(w)).sum() for g, w in zip(grads, weights))
    if total.requires_grad:
        total.backward()
    return [np.zeros_like(a) if t.grad is None else t.grad.numpy()
            for a, t in zip(arrays, leaves)]


def _dim(shape, rng):
    return int(rng.integers(len(shape))) if shape else 0


def _with_zeros(x, rng):
    return np.where(rng.random(x.shape) < 0.3, 0.0, x)


# each: (the function of the leaves, given the drawn shape and a generator; the leaves)
# each: (shape, generator) -> (the function of the leaves, the leaves)
def _norm_case(shape, rng):
    p, d = float(rng.choice([2.0, 3.0, 1.5])), _dim(shape, rng)
    if not shape:
        return (lambda x: x.norm(p) * x.sum()), [rng.standard_normal(shape) + 0.1]
    return (lambda x: x.norm(p, dim=d, keepdim=bool(d % 2)) * x.sum(),
            [rng.standard_normal(shape) + 0.1])


def _scan_case(method, zeros=False):
    def case(shape, rng):
        d, x = _dim(shape, rng), rng.standard_normal(shape)
        if method == "prod" and not shape:
            return (lambda x: x.prod()), [x]
        return (lambda x: getattr(x, method)(d) * x.sum()), [_with_zeros(x, rng) if zeros else x]
    return case


def _gather_case(shape, rng):
    # picks along a dim, repeats among them (an empty dim: nothing to pick)
    d = _dim(shape, rng)
    index = mg.tensor(rng.integers(0, shape[d], shape) if shape and shape[d]
                      else np.zeros(shape, np.int64))
    return (lambda x: x.exp().gather(d, index) * x if shape else x.exp() * x,
            [rng.standard_normal(shape)])


FINITE_DIFFERENCES = {
    "norm": _norm_case,
    "prod-with-zeros": _scan_case("prod", zeros=True),
    "cumprod-with-zeros": _scan_case("cumprod", zeros=True),
    "logcumsumexp": _scan_case("logcumsumexp"),
    "lerp-broadcast": lambda shape, rng: (
        lambda a, b, w: mg.lerp(a * a, b.exp(), w.sin()),
        [rng.standard_normal(shape), rng.standard_normal(shape[1:]),
         rng.standard_normal(shape[:1] + (1,) * max(len(shape) - 1, 0))]),
    "atan2-broadcast": lambda shape, rng: (
        lambda a, b: mg.atan2(a, b * b + 0.5) * a, [rng.standard_normal(shape),
                                                   rng.standard_normal(shape[1:])]),
    "hardsigmoid": lambda shape, rng: (         # torch has no double backward for it
        lambda x: mg.nn.functional.hardsigmoid(x) * x * x, [rng.standard_normal(shape) * 3]),
    "gather": _gather_case,
}


@pytest.mark.parametrize("name", sorted(FINITE_DIFFERENCES))
@settings(max_examples=25)
@given(shape=st.lists(st.integers(0, 3), max_size=2).map(tuple), seed=st.integers(0, 2**16))
def test_the_gradient_of_the_gradient_agrees_with_finite_differences(name, shape, seed):
    rng = np.random.default_rng(seed)
    fn, arrays = FINITE_DIFFERENCES[name](shape, rng)
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]          # 0-d: an array
    out_shape = fn(*[mg.tensor(a, dtype=mg.float64) for a in arrays]).shape
    v = rng.standard_normal(out_shape)
    weights = [rng.standard_normal(a.shape) for a in arrays]
    exact = _by_double_backward(fn, arrays, v, weights)
    for a, b in zip(exact, _finite_difference(fn, arrays, v, weights)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)

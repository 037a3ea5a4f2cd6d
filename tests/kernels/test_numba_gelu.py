"""The numba GELU kernels (``numba_cpu.gelu_forward`` / ``gelu_backward``) against the
reference kernels: float64 (libm's erf and exp) to a few ulps, float32 (in float32: a
vectorized exp and a rational of positive terms) within 0.8 (y) and 1.1 (dx) float32 eps of
the float64 result at the scale max(1, |x|) over a dense sweep, random points and the worst
points of every float32 in ±[0.5, 2] (0.75 and 1.05; PyTorch's float32: 3.1 and 2.6),
non-finite inputs and signed zeros as the reference, and what they hand to the blocked
kernels (half precision, views, mixed dtypes), exactly. The tanh form (x·σ(2u) with the
vectorized exp, float32 in float32): float64 within 4 eps, float32 within 2 float32 eps of
the float64 reference at that scale (the float32 reference itself: 0.95 and 1.9)."""

import numpy as np
import pytest

from microgradnorm.kernels import blocked, reference

pytest.importorskip("numba")
from microgradnorm.kernels import numba_cpu  # noqa: E402  (after the skip)

SPECIAL = [0.0, -0.0, 1e-30, -1e-30, 5e-324, 1.0, -1.0, 1.41421, -1.41421, 6.36, -6.37,
           30.0, -30.0, 1e10, -1e10, 3e38, -3e38, np.inf, -np.inf, np.nan,
           1.1491411, 0.93537587]     # the float32 kernel's worst y and dx in ±[0.5, 2]


def sweep(dtype, count=400_001, end=12.0):
    """A dense sweep of [-end, end], random points near 0 and of N(0, 9) (a grid misses
    the worst points of a polynomial), and the special values, in ``dtype``."""
    rng = np.random.default_rng(7)
    points = [np.linspace(-end, end, count), rng.uniform(-0.2, 0.2, count // 2),
              3 * rng.standard_normal(count // 2), SPECIAL]
    with np.errstate(over="ignore"):
        return np.concatenate(points).astype(dtype)


def both(x, dy, approximate="none"):
    """(y, dx) from the numba kernels and (y, dx) from the reference in float64."""
    ours = (numba_cpu.gelu_forward(x, approximate),
            numba_cpu.gelu_backward(dy, x, approximate))
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    exact = (reference.gelu_forward(x64, approximate),
             reference.gelu_backward(dy64, x64, approximate))
    return ours, exact


def assert_within(actual, expected, x, bound):
    """NaN and inf where the reference has them; elsewhere |actual - expected| <= bound ·
    max(1, |x|) (float32's eps or float64's, by the caller)."""
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    np.testing.assert_array_equal(actual[np.isinf(expected)], expected[np.isinf(expected)])
    scale = np.maximum(1.0, np.abs(x.astype(np.float64)))[finite]
    error = np.abs(actual[finite].astype(np.float64) - expected[finite]) / scale
    assert error.max() <= bound, (error.max(), x[finite][np.argmax(error)])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")          # -inf · 0 in the reference
@pytest.mark.parametrize("dtype, y_bound, dx_bound", [
    (np.float64, 4 * np.finfo(np.float64).eps, 4 * np.finfo(np.float64).eps),
    (np.float32, 0.8 * np.finfo(np.float32).eps, 1.1 * np.finfo(np.float32).eps)])
def test_the_numba_gelu_is_within_bound_of_the_float64_reference(dtype, y_bound, dx_bound):
    x = sweep(dtype)
    dy = np.ones_like(x)
    (y, dx), (y64, dx64) = both(x, dy)
    assert y.dtype == dx.dtype == dtype
    assert_within(y, y64, x, y_bound)
    assert_within(dx, dx64, x, dx_bound)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")          # -inf · 0 in the reference
@pytest.mark.parametrize("dtype, bound", [(np.float64, 4 * np.finfo(np.float64).eps),
                                          (np.float32, 2 * np.finfo(np.float32).eps)])
def test_the_numba_gelu_tanh_is_within_bound_of_the_float64_reference(dtype, bound):
    x = sweep(dtype, count=200_001, end=20.0)
    # where x² overflows the dtype dx is NaN, as in the reference in that dtype (below)
    x = x[~(np.abs(x) > np.sqrt(np.finfo(dtype).max))]
    dy = np.ones_like(x)
    (y, dx), (y64, dx64) = both(x, dy, "tanh")
    assert y.dtype == dx.dtype == dtype
    assert_within(y, y64, x, bound)
    assert_within(dx, dx64, x, bound)


def test_the_tanh_bound_can_fail():
    """The float32 tanh kernel is no worse than the float32 reference: and the reference's
    own error, 1.9 eps for dx, is over a bound of 1.5 eps."""
    x = sweep(np.float32, count=200_001, end=20.0)
    with np.errstate(invalid="ignore", over="ignore"):
        dx = reference.gelu_backward(np.ones_like(x), x, "tanh")
        dx64 = reference.gelu_backward(np.ones(x.shape), x.astype(np.float64), "tanh")
    with pytest.raises(AssertionError):
        assert_within(dx, dx64, x, 1.5 * np.finfo(np.float32).eps)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_signs_of_zero_and_the_gradient_are_the_references(dtype, approximate):
    x = np.array([-0.0, 0.0, -3.0, 2.0], dtype)
    dy = np.array([1.0, -1.0, 2.5, -0.5], dtype)
    (y, dx), (y64, dx64) = both(x, dy, approximate)
    np.testing.assert_array_equal(np.signbit(y), np.signbit(y64))
    np.testing.assert_allclose(dx, dx64, rtol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")          # x² overflows in the reference
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_far_negative_x_gives_the_references_signed_zeros_and_0_gives_a_half(dtype):
    """y = -0 and dx = +0 where Φ underflows (the polynomial's tail is clamped at 0); at 0
    the gradient is exactly 1/2, as PyTorch's."""
    x = -np.logspace(2, 38, 2000).astype(dtype)
    (y, dx), (y64, dx64) = both(x, np.ones_like(x))
    zeros = (y64 == 0) & (dx64 == 0)
    assert zeros.any()
    np.testing.assert_array_equal(np.signbit(y[zeros]), np.signbit(y64[zeros]))
    np.testing.assert_array_equal(np.signbit(dx[zeros]), np.signbit(dx64[zeros]))
    assert numba_cpu.gelu_backward(np.ones(1, dtype), np.zeros(1, dtype))[0] == 0.5


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (2, 3, 4)])
def test_any_contiguous_shape_runs_compiled(shape, approximate, monkeypatch):
    monkeypatch.setattr(blocked, "gelu_forward", None)          # a delegation would fail
    monkeypatch.setattr(blocked, "gelu_backward", None)
    x = np.random.default_rng(0).standard_normal(shape)
    y = numba_cpu.gelu_forward(x, approximate)
    dx = numba_cpu.gelu_backward(np.ones_like(x), x, approximate)
    assert y.shape == dx.shape == x.shape
    np.testing.assert_allclose(y, reference.gelu_forward(x, approximate), rtol=1e-14,
                               atol=1e-300)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_views_are_copied_and_run_compiled(approximate, monkeypatch):
    """A strided x and the broadcast ones of ``gelu(x).sum().backward()`` give what their
    C-contiguous copies give (the blocked kernels' exact form took twenty times as long)."""
    x = np.random.default_rng(3).standard_normal((4, 6))
    expected = (numba_cpu.gelu_forward(np.ascontiguousarray(x[:, ::2]), approximate),
                numba_cpu.gelu_backward(np.ones((4, 3)), np.ascontiguousarray(x[:, ::2]),
                                        approximate))
    monkeypatch.setattr(blocked, "gelu_forward", None)          # a delegation would fail
    monkeypatch.setattr(blocked, "gelu_backward", None)
    ones = np.broadcast_to(1.0, (4, 3))
    actual = (numba_cpu.gelu_forward(x[:, ::2], approximate),
              numba_cpu.gelu_backward(ones, x[:, ::2], approximate))
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(a, e)


def permuted():
    # views of a (3, 4, 5) array and the same views of a torch tensor (no axis of size 1:
    # its stride is torch's choice; torch's flip copies)
    return {"transposed": (lambda a: a[0].T, lambda t: t[0].t()),
            "permuted": (lambda a: a.transpose(2, 0, 1), lambda t: t.permute(2, 0, 1)),
            "permuted strided": (lambda a: a.transpose(1, 2, 0)[:, ::2],
                                 lambda t: t.permute(1, 2, 0)[:, ::2]),
            "reversed": (lambda a: a[::-1, :, ::-1], lambda t: t.flip(0, 2)),
            "broadcast": (lambda a: np.broadcast_to(a[0, 0], (3, 5)),
                          lambda t: t[0, 0].expand(3, 5))}


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("case", list(permuted()))
def test_a_permuted_x_keeps_its_layout_as_torchs_and_runs_compiled(case, approximate,
                                                                   monkeypatch):
    """y keeps x's memory order (torch's strides: ``F.gelu(x.t())`` is transposed too), and
    so does dx where dy's strides are x's; the values are the contiguous case's."""
    torch = pytest.importorskip("torch")
    view, torch_view = permuted()[case]
    a = np.random.default_rng(4).standard_normal((3, 4, 5))
    x = view(a)
    dy = view(np.random.default_rng(5).standard_normal((3, 4, 5)))
    expected = (numba_cpu.gelu_forward(np.ascontiguousarray(x), approximate),
                numba_cpu.gelu_backward(np.ascontiguousarray(dy), np.ascontiguousarray(x),
                                        approximate))
    monkeypatch.setattr(blocked, "gelu_forward", None)          # a delegation would fail
    monkeypatch.setattr(blocked, "gelu_backward", None)
    y, dx = numba_cpu.gelu_forward(x, approximate), numba_cpu.gelu_backward(dy, x, approximate)
    np.testing.assert_array_equal(y, expected[0])
    np.testing.assert_array_equal(dx, expected[1])
    theirs = torch.nn.functional.gelu(torch_view(torch.from_numpy(a)), approximate=approximate)
    assert [s // 8 for s in y.strides] == list(theirs.stride())
    assert dx.strides == y.strides


def delegated():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6))
    return {"tanh form in float16": (x.astype(np.float16), np.ones((4, 6), np.float16),
                                     "tanh"),
            "float16": (x.astype(np.float16), np.ones((4, 6), np.float16), "none"),
            "dy of another dtype": (x, np.ones((4, 6), np.float32), "none")}


@pytest.mark.parametrize("case", list(delegated()))
def test_the_rest_is_the_blocked_kernels_exactly(case, monkeypatch):
    x, dy, approximate = delegated()[case]
    expected = blocked.gelu_forward(x, approximate), blocked.gelu_backward(dy, x, approximate)
    calls = []
    for name in ("gelu_forward", "gelu_backward"):
        original = getattr(blocked, name)
        monkeypatch.setattr(blocked, name, lambda *a, _o=original, _n=name:
                            calls.append(_n) or _o(*a))
    actual = numba_cpu.gelu_forward(x, approximate), numba_cpu.gelu_backward(dy, x, approximate)
    first = int(case == "dy of another dtype")          # x alone: its forward runs compiled
    assert calls == ["gelu_forward", "gelu_backward"][first:]
    for a, e in zip(actual[first:], expected[first:]):
        assert a.dtype == e.dtype
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_huge_and_infinite_inputs_raise_no_warning(dtype):
    import warnings
    big = np.finfo(dtype).max / 2                      # x² overflows, in the dtype
    x = np.array([big, -big, np.inf, -np.inf, np.nan, 0.0], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, dx = numba_cpu.gelu_forward(x), numba_cpu.gelu_backward(np.ones_like(x), x)
    np.testing.assert_array_equal(np.isnan(dx), [False, False, True, True, True, False])
    assert y[0] == x[0] and dx[0] == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_tanh_forms_non_finite_and_huge_inputs_are_the_references(dtype):
    """y: ±inf, NaN, -0 for huge negative x, as the reference; dx: NaN where x² overflows
    (0·inf in the closed form), in the reference and in torch alike."""
    import warnings
    big = np.finfo(dtype).max / 2
    x = np.array([big, -big, 1e30, -1e30, np.inf, -np.inf, np.nan, 0.0, -30.0], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = numba_cpu.gelu_forward(x, "tanh")
        dx = numba_cpu.gelu_backward(np.ones_like(x), x, "tanh")
    with np.errstate(invalid="ignore", over="ignore"):
        y_ref = reference.gelu_forward(x, "tanh")
        dx_ref = reference.gelu_backward(np.ones_like(x), x, "tanh")
    np.testing.assert_array_equal(y, y_ref)
    number = ~np.isnan(y_ref)             # a NaN's sign is the CPU's and libm's choice
    np.testing.assert_array_equal(np.signbit(y[number]), np.signbit(y_ref[number]))
    np.testing.assert_array_equal(dx, dx_ref)


def _libm_tail_sweep():
    """x over [-40, 40] in steps of 2^-12, random points, subnormals and signed zeros, and
    Φ(-|x|) = erfc(a)/2 by libm (``math.erfc``) at the same a = |x|·√½ the kernel rounds."""
    import math
    rng = np.random.default_rng(11)
    x = np.concatenate([np.arange(-40, 40, 2.0**-12), rng.uniform(-40, 40, 100_000),
                        [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308]])
    a = np.abs(x) * reference.SQRT_HALF
    return x, 0.5 * np.array([math.erfc(v) for v in a])


def test_the_float64_tail_is_within_3_ulp_of_libms_erfc():
    """Φ(-|x|) of the float64 kernels (fdlibm's pieces, vectorized) against libm's erfc in
    ulp of libm's value, normal and subnormal results; measured worst: 3.0 ulp (and a
    result of half the smallest subnormal, near |x| = 38.5, that rounds to 0 where libm's
    gives 5e-324: allowed as 1 ulp)."""
    import numba
    from microgradnorm.kernels import numba_gelu

    @numba.njit(error_model="numpy")
    def tails(x, out):
        for i in range(x.size):
            out[i] = numba_gelu._gaussian_tail64(x[i])

    x, libm = _libm_tail_sweep()
    ours = np.empty_like(x)
    tails(x, ours)
    error = np.abs(ours - libm) / np.spacing(libm)
    assert error.max() <= 3.0, (error.max(), x[np.argmax(error)])


def test_float64_y_for_negative_x_is_x_times_libms_tail_to_a_few_ulp():
    """For x < 0, y = x·Φ(x) keeps its relative accuracy into the tail (no 1 + erf to
    cancel, as the reference's): y/x within 4 ulp of erfc(|x|/√2)/2 by libm, where y is
    normal (measured: 4.0, the tail's 3 and the roundings of x·Φ and of y/x), down to
    Φ = 2^-55; below, y = -0 where the reference's 1 + erf(x/√2) is 0."""
    x, libm = _libm_tail_sweep()
    negative = (x < -1e-300) & (libm >= 2.0**-55)
    y = numba_cpu.gelu_forward(x[negative])
    error = np.abs(y / x[negative] - libm[negative]) / np.spacing(libm[negative])
    assert error.max() <= 4.0, (error.max(), x[negative][np.argmax(error)])
    far = x[x < -8.4]
    y, expected = numba_cpu.gelu_forward(far), reference.gelu_forward(far)
    assert (expected == 0).all()
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(np.signbit(y), np.signbit(expected))


def test_the_float64_near_tail_is_the_full_forms_below_a_of_1_25():
    """The forward's first pass (``_gaussian_tail64_near``: only the pieces of a² and a - 1)
    gives the full form's Φ(-|x|) bit for bit where a = |x|/√2 < 1.25, and so within 3 ulp
    of libm's erfc there."""
    import numba
    from microgradnorm.kernels import numba_gelu

    @numba.njit(error_model="numpy")
    def tails(x, near, full):
        for i in range(x.size):
            near[i] = numba_gelu._gaussian_tail64_near(x[i])
            full[i] = numba_gelu._gaussian_tail64(x[i])

    x, libm = _libm_tail_sweep()
    inside = np.abs(x) * reference.SQRT_HALF < 1.25
    x, libm = x[inside], libm[inside]
    near, full = np.empty_like(x), np.empty_like(x)
    tails(x, near, full)
    np.testing.assert_array_equal(near, full)
    assert (np.abs(near - libm) / np.spacing(libm)).max() <= 3.0


def _near_and_far(case):
    """x of 7,500 float64 values: mostly near with wide stretches ("gathered"), mostly wide
    ("wide"), or wide but near at every 14th element, where the kernels' probe looks
    ("misjudged"); NaN and -inf sprinkled in."""
    rng = np.random.default_rng(3)
    widths = {"gathered": (1.0, 1.0, 5.0, 1.0, 0.1), "wide": (5.0, 0.5, 5.0, 1.0, 5.0),
              "misjudged": (30.0,) * 5}[case]
    x = np.concatenate([width * rng.standard_normal(1500) for width in widths])
    if case == "misjudged":
        x[::14] = 0.1 * rng.standard_normal(x[::14].size)
    x[::97] = np.nan
    x[::101] = -np.inf
    return x


@pytest.mark.parametrize("case", ["gathered", "wide", "misjudged"])
def test_float64_near_and_far_inputs_give_each_elements_own_y_and_dx(case):
    """The float64 kernels run x through the near pass and gather its far elements for the
    full form, or, where x is wide (seen at once or after the near pass), run the full form
    over all: either way an element's y and dx are the ones it gets alone, and y is within
    4 eps of the reference."""
    x = _near_and_far(case)
    dy = np.random.default_rng(4).standard_normal(x.size)
    y, dx = numba_cpu.gelu_forward(x), numba_cpu.gelu_backward(dy, x)
    alone = [(numba_cpu.gelu_forward(x[i:i + 1])[0],
              numba_cpu.gelu_backward(dy[i:i + 1], x[i:i + 1])[0]) for i in range(x.size)]
    np.testing.assert_array_equal(y, [y_i for y_i, _ in alone])
    np.testing.assert_array_equal(dx, [dx_i for _, dx_i in alone])
    with np.errstate(invalid="ignore"):
        assert_within(y, reference.gelu_forward(x), x, 4 * np.finfo(np.float64).eps)

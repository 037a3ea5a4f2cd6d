"""PyTorch's own reference inputs (``op_db`` OpInfos) run through the other forms of each op
(tests/helpers/opinfo_variants.py): the Tensor method (``x.add(y)``: values, dtype, shape and
the float64 gradients as the function's), the in-place method (``x.add_(y)``, or the
function's ``inplace=True`` for ``nn.functional``: the input itself returned, its values and
kept dtype, its version counter, the error class torch raises where promotion or
broadcasting would change ``self``, the refusal of a leaf that requires grad, the float64
gradients through ``clone().op_()``) and ``out=`` (the values written, ``out`` returned,
torch's dtype rules for ``out``, the resize of an ``out`` of the wrong shape and torch's
warning where it had elements), in float64 and float32.

The lists hold the (op, variant) pairs of tests/engine/test_opinfo_generic.py's ops that pass
every sample they take; the forms torch has and this package lacks are named apart. A pair
absent from both differs where docs/pytorch.md says so (``addbmm_`` of a smaller ``self``,
which torch resizes; the resize warning torch gives a right-sized ``out`` of ``matmul`` of a
vector and a matrix) or where torch's own composite kernels disagree among themselves on
``out``'s dtype (``diff`` with ``n=0``, ``inner`` of a 0-d tensor, ``linalg.matrix_power``
of some powers) or on the version counter (``dropout3d`` of an unbatched input, which torch
unsqueezes in place), or where torch's kernel fails on an argument it should take
(``normal(2.7, std, out=empty)`` of an empty ``out``: a RuntimeError of broadcasting).
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

from opinfo_generic import Unresolved, op_table  # noqa: E402
from opinfo_variants import ours, run_variant  # noqa: E402

pytestmark = pytest.mark.slow          # torch's tables take seconds to import

MAX_SAMPLES = 3
MAX_NUMEL = 10_000      # (the generic sweep runs the larger ones through the functions)

# (name, variant) of torch's op_db whose form passes every sample
METHOD = [
    ('__getitem__', ''), ('abs', ''), ('acos', ''), ('acosh', ''), ('add', ''), ('addbmm', ''),
    ('addcdiv', ''), ('addcmul', ''), ('addmm', ''), ('addmm', 'decomposed'), ('addmv', ''),
    ('addr', ''), ('all', ''), ('allclose', ''), ('amax', ''), ('amin', ''), ('aminmax', ''),
    ('angle', ''), ('any', ''), ('argmax', ''), ('argmin', ''), ('argsort', ''), ('argwhere', ''),
    ('as_strided', ''), ('as_strided', 'partial_views'), ('asin', ''), ('asinh', ''), ('atan', ''),
    ('atan2', ''), ('atanh', ''), ('baddbmm', ''), ('bernoulli', ''), ('bfloat16', ''), ('bmm', ''),
    ('bmm', 'triton_optimized'), ('bool', ''), ('broadcast_to', ''), ('byte', ''), ('cdouble', ''),
    ('ceil', ''), ('cfloat', ''), ('char', ''), ('cholesky', ''), ('cholesky_inverse', ''),
    ('cholesky_solve', ''), ('chunk', ''), ('clamp', ''), ('clamp_max', ''), ('clamp_min', ''),
    ('clone', ''), ('conj', ''), ('conj_physical', ''), ('contiguous', ''), ('copysign', ''),
    ('corrcoef', ''), ('cos', ''), ('cosh', ''), ('count_nonzero', ''), ('cov', ''), ('cross', ''),
    ('cummax', ''), ('cummin', ''), ('cumprod', ''), ('cumsum', ''), ('deg2rad', ''), ('diag', ''),
    ('diag_embed', ''), ('diagflat', ''), ('diagonal', ''), ('diagonal_scatter', ''), ('diff', ''),
    ('digamma', ''), ('dist', ''), ('div', 'floor_rounding'), ('div', 'no_rounding_mode'),
    ('div', 'trunc_rounding'), ('dot', ''), ('double', ''), ('dsplit', ''), ('eq', ''),
    ('equal', ''), ('erf', ''), ('erfc', ''), ('erfinv', ''), ('exp', ''), ('exp2', ''),
    ('expand', ''), ('expand_as', ''), ('expm1', ''), ('flatten', ''), ('flip', ''), ('fliplr', ''),
    ('flipud', ''), ('float', ''), ('float_power', ''), ('floor', ''), ('floor_divide', ''),
    ('fmax', ''), ('fmin', ''), ('fmod', ''), ('frac', ''), ('frexp', ''), ('gather', ''),
    ('ge', ''), ('geqrf', ''), ('gt', ''), ('half', ''), ('heaviside', ''), ('histc', ''),
    ('histogram', ''), ('hsplit', ''), ('hypot', ''), ('i0', ''), ('igamma', ''), ('igammac', ''),
    ('index_add', ''), ('index_copy', ''), ('index_fill', ''), ('index_put', ''),
    ('index_reduce', 'amax'), ('index_reduce', 'amin'), ('index_reduce', 'mean'),
    ('index_reduce', 'prod'), ('index_select', ''), ('inner', ''), ('int', ''), ('isclose', ''),
    ('isfinite', ''), ('isinf', ''), ('isnan', ''), ('isneginf', ''), ('isposinf', ''),
    ('isreal', ''), ('kron', ''), ('kthvalue', ''), ('ldexp', ''), ('le', ''), ('lerp', ''),
    ('lgamma', ''), ('log', ''), ('log10', ''), ('log1p', ''), ('log2', ''), ('log_softmax', ''),
    ('log_softmax', 'with_dtype'), ('logaddexp', ''), ('logaddexp2', ''), ('logcumsumexp', ''),
    ('logdet', ''), ('logical_and', ''), ('logical_not', ''), ('logical_or', ''),
    ('logical_xor', ''), ('logit', ''), ('logsumexp', ''), ('long', ''), ('lt', ''), ('lu', ''),
    ('lu_solve', ''), ('masked_fill', ''), ('masked_scatter', ''), ('masked_select', ''),
    ('matmul', ''), ('max', 'binary'), ('max', 'reduction_no_dim'), ('max', 'reduction_with_dim'),
    ('maximum', ''), ('mean', ''), ('median', ''), ('min', 'binary'), ('min', 'reduction_no_dim'),
    ('min', 'reduction_with_dim'), ('minimum', ''), ('mm', ''), ('mode', ''), ('movedim', ''),
    ('msort', ''), ('mul', ''), ('multinomial', ''), ('mv', ''), ('mvlgamma', 'mvlgamma_p_1'),
    ('mvlgamma', 'mvlgamma_p_3'), ('mvlgamma', 'mvlgamma_p_5'), ('nan_to_num', ''), ('nanmean', ''),
    ('nanmedian', ''), ('nanquantile', ''), ('nansum', ''), ('narrow', ''), ('narrow_copy', ''),
    ('ne', ''), ('neg', ''), ('new_empty', ''), ('new_empty_strided', ''), ('new_full', ''),
    ('new_ones', ''), ('new_zeros', ''), ('nextafter', ''), ('nonzero', ''), ('nonzero_static', ''),
    ('norm', ''), ('norm', 'fro'), ('norm', 'inf'), ('norm', 'nuc'), ('ormqr', ''), ('outer', ''),
    ('permute', ''), ('pinverse', ''), ('polygamma', 'polygamma_n_0'), ('positive', ''),
    ('pow', ''), ('prod', ''), ('put', ''), ('qr', ''), ('quantile', ''), ('rad2deg', ''),
    ('ravel', ''), ('reciprocal', ''), ('remainder', ''), ('renorm', ''), ('repeat', ''),
    ('repeat_interleave', ''), ('reshape', ''), ('reshape_as', ''), ('resolve_conj', ''),
    ('resolve_neg', ''), ('roll', ''), ('rot90', ''), ('round', ''), ('round', 'decimals_0'),
    ('round', 'decimals_3'), ('round', 'decimals_neg_3'), ('rsqrt', ''), ('scatter', ''),
    ('scatter_add', ''), ('scatter_reduce', 'amax'), ('scatter_reduce', 'amin'),
    ('scatter_reduce', 'mean'), ('scatter_reduce', 'prod'), ('scatter_reduce', 'sum'),
    ('select', ''), ('select_scatter', ''), ('sgn', ''), ('short', ''), ('sigmoid', ''),
    ('sign', ''), ('signbit', ''), ('sin', ''), ('sinc', ''), ('sinh', ''), ('slice_scatter', ''),
    ('softmax', ''), ('softmax', 'with_dtype'), ('sort', ''), ('split', ''), ('split', 'list_args'),
    ('split_with_sizes', ''), ('sqrt', ''), ('square', ''), ('squeeze', ''),
    ('squeeze', 'multiple'), ('std', ''), ('std', 'unbiased'), ('stft', ''), ('sub', ''),
    ('sum', ''), ('sum_to_size', ''), ('svd', ''), ('t', ''), ('take', ''), ('take_along_dim', ''),
    ('tan', ''), ('tanh', ''), ('tensor_split', ''), ('tile', ''), ('to', ''), ('topk', ''),
    ('trace', ''), ('transpose', ''), ('triangular_solve', ''), ('tril', ''), ('triu', ''),
    ('true_divide', ''), ('trunc', ''), ('unbind', ''), ('unflatten', ''), ('unfold', ''),
    ('unique', ''), ('unique_consecutive', ''), ('unsafe_chunk', ''), ('unsafe_split', ''),
    ('unsqueeze', ''), ('var', ''), ('var', 'unbiased'), ('vdot', ''), ('view', ''),
    ('view_as', ''), ('vsplit', ''), ('where', ''), ('xlogy', ''),
]
INPLACE = [
    ('abs', ''), ('acos', ''), ('acosh', ''), ('add', ''), ('addcdiv', ''), ('addcmul', ''),
    ('addmm', ''), ('addmm', 'decomposed'), ('addmv', ''), ('addr', ''), ('as_strided', ''),
    ('as_strided', 'partial_views'), ('asin', ''), ('asinh', ''), ('atan', ''), ('atan2', ''),
    ('atanh', ''), ('baddbmm', ''), ('cauchy', ''), ('ceil', ''), ('clamp', ''), ('clamp_max', ''),
    ('clamp_min', ''), ('conj_physical', ''), ('copysign', ''), ('cos', ''), ('cosh', ''),
    ('cumprod', ''), ('cumsum', ''),
    ('deg2rad', ''), ('digamma', ''), ('div', 'floor_rounding'), ('div', 'no_rounding_mode'),
    ('div', 'trunc_rounding'), ('eq', ''), ('erf', ''), ('erfc', ''), ('erfinv', ''), ('exp', ''),
    ('exp2', ''), ('expm1', ''), ('exponential', ''), ('fill', ''), ('float_power', ''),
    ('floor', ''), ('floor_divide', ''), ('fmod', ''), ('frac', ''), ('ge', ''), ('geometric', ''),
    ('gt', ''), ('heaviside', ''), ('hypot', ''), ('i0', ''), ('igamma', ''), ('igammac', ''),
    ('index_add', ''), ('index_copy', ''), ('index_fill', ''), ('index_put', ''),
    ('index_reduce', 'amax'), ('index_reduce', 'amin'), ('index_reduce', 'mean'),
    ('index_reduce', 'prod'), ('ldexp', ''), ('le', ''), ('lerp', ''), ('lgamma', ''), ('log', ''),
    ('log10', ''), ('log1p', ''), ('log2', ''), ('log_normal', ''), ('logical_and', ''),
    ('logical_not', ''), ('logical_or', ''), ('logical_xor', ''), ('logit', ''), ('lt', ''),
    ('masked_fill', ''), ('masked_scatter', ''), ('mul', ''), ('mvlgamma', 'mvlgamma_p_1'),
    ('mvlgamma', 'mvlgamma_p_3'), ('mvlgamma', 'mvlgamma_p_5'), ('nan_to_num', ''), ('ne', ''),
    ('neg', ''), ('nextafter', ''), ('nn.functional.alpha_dropout', ''), ('nn.functional.celu', ''),
    ('nn.functional.dropout', ''), ('nn.functional.dropout2d', ''), ('nn.functional.elu', ''),
    ('nn.functional.feature_alpha_dropout', 'with_train'),
    ('nn.functional.feature_alpha_dropout', 'without_train'), ('nn.functional.hardsigmoid', ''),
    ('nn.functional.leaky_relu', ''), ('nn.functional.mish', ''), ('nn.functional.rrelu', ''),
    ('nn.functional.selu', ''), ('nn.functional.silu', ''), ('nn.functional.threshold', ''),
    ('normal', 'in_place'), ('polygamma', 'polygamma_n_0'), ('pow', ''), ('put', ''),
    ('rad2deg', ''), ('reciprocal', ''), ('remainder', ''), ('renorm', ''), ('resize_', ''),
    ('resize_as_', ''), ('round', ''), ('round', 'decimals_0'), ('round', 'decimals_3'),
    ('round', 'decimals_neg_3'), ('rsqrt', ''), ('scatter', ''), ('scatter_add', ''),
    ('scatter_reduce', 'amax'), ('scatter_reduce', 'amin'), ('scatter_reduce', 'mean'),
    ('scatter_reduce', 'prod'), ('scatter_reduce', 'sum'), ('sgn', ''), ('sigmoid', ''),
    ('sign', ''), ('sin', ''), ('sinc', ''), ('sinh', ''), ('sqrt', ''), ('square', ''),
    ('squeeze', ''), ('squeeze', 'multiple'), ('sub', ''), ('t', ''), ('tan', ''), ('tanh', ''),
    ('transpose', ''), ('tril', ''), ('triu', ''), ('true_divide', ''), ('trunc', ''),
    ('uniform', ''), ('unsqueeze', ''), ('xlogy', ''), ('zero_', ''),
]
OUT = [
    ('abs', ''), ('acos', ''), ('acosh', ''), ('add', ''), ('addbmm', ''), ('addcdiv', ''),
    ('addcmul', ''), ('addmm', ''), ('addmm', 'decomposed'), ('addmv', ''), ('addr', ''),
    ('alias_copy', ''), ('all', ''), ('amax', ''), ('amin', ''), ('aminmax', ''), ('angle', ''),
    ('any', ''), ('arange', ''), ('argmax', ''), ('argmin', ''), ('as_strided_copy', ''),
    ('asin', ''), ('asinh', ''), ('atan', ''), ('atan2', ''), ('atanh', ''), ('baddbmm', ''),
    ('bernoulli', ''), ('bmm', ''), ('bucketize', ''), ('cat', ''), ('ceil', ''), ('cholesky', ''),
    ('clamp', ''), ('clamp_max', ''), ('clamp_min', ''), ('column_stack', ''), ('complex', ''),
    ('conj_physical', ''), ('copysign', ''), ('cos', ''), ('cosh', ''), ('cross', ''),
    ('cummax', ''), ('cummin', ''), ('cumprod', ''), ('cumsum', ''), ('deg2rad', ''), ('diag', ''),
    ('diagonal_copy', ''), ('digamma', ''), ('div', 'floor_rounding'), ('div', 'no_rounding_mode'),
    ('div', 'trunc_rounding'), ('dot', ''), ('dstack', ''), ('empty', ''), ('eq', ''), ('erf', ''),
    ('erfc', ''), ('erfinv', ''), ('exp', ''), ('exp2', ''), ('expand_copy', ''), ('expm1', ''),
    ('eye', ''), ('fft.fft', ''), ('fft.fft2', ''), ('fft.fftn', ''), ('fft.hfft', ''),
    ('fft.hfft2', ''), ('fft.hfftn', ''), ('fft.ifft', ''), ('fft.ifft2', ''), ('fft.ifftn', ''),
    ('fft.ihfft', ''), ('fft.ihfft2', ''), ('fft.irfft', ''), ('fft.irfft2', ''),
    ('fft.irfftn', ''), ('fft.rfft', ''), ('fft.rfft2', ''), ('fft.rfftn', ''), ('float_power', ''),
    ('floor', ''), ('floor_divide', ''), ('fmax', ''),
    ('fmin', ''), ('fmod', ''), ('frac', ''), ('frexp', ''), ('full', ''), ('gather', ''),
    ('ge', ''), ('geqrf', ''), ('gt', ''), ('heaviside', ''), ('histc', ''), ('histogram', ''),
    ('hstack', ''), ('hypot', ''), ('i0', ''), ('igamma', ''), ('igammac', ''), ('index_add', ''),
    ('index_copy', ''), ('index_reduce', 'amax'), ('index_reduce', 'amin'),
    ('index_reduce', 'mean'), ('index_reduce', 'prod'), ('index_select', ''), ('isin', ''),
    ('isneginf', ''), ('isposinf', ''), ('kron', ''), ('kthvalue', ''), ('ldexp', ''), ('le', ''),
    ('lerp', ''), ('lgamma', ''), ('linalg.cholesky', ''), ('linalg.cholesky_ex', ''),
    ('linalg.cond', ''), ('linalg.cross', ''), ('linalg.det', ''), ('linalg.eigvals', ''),
    ('linalg.eigvalsh', ''), ('linalg.householder_product', ''), ('linalg.inv', ''),
    ('linalg.inv_ex', ''), ('linalg.lstsq', ''), ('linalg.lu', ''), ('linalg.lu_factor', ''),
    ('linalg.lu_factor_ex', ''), ('linalg.lu_solve', ''), ('linalg.matrix_norm', ''),
    ('linalg.matrix_rank', ''), ('linalg.matrix_rank', 'hermitian'), ('linalg.multi_dot', ''),
    ('linalg.norm', ''), ('linalg.norm', 'subgradients_at_zero'), ('linalg.pinv', ''),
    ('linalg.pinv', 'hermitian'), ('linalg.qr', ''), ('linalg.slogdet', ''), ('linalg.solve', ''),
    ('linalg.solve_ex', ''), ('linalg.solve_triangular', ''), ('linalg.svd', ''),
    ('linalg.svdvals', ''), ('linalg.tensorinv', ''), ('linalg.tensorsolve', ''),
    ('linalg.vecdot', ''), ('linalg.vector_norm', ''), ('linspace', ''),
    ('linspace', 'tensor_overload'), ('log', ''), ('log10', ''), ('log1p', ''), ('log2', ''),
    ('log_softmax', ''), ('log_softmax', 'with_dtype'), ('logaddexp', ''), ('logaddexp2', ''),
    ('logcumsumexp', ''), ('logical_and', ''), ('logical_not', ''), ('logical_or', ''),
    ('logical_xor', ''), ('logit', ''), ('logspace', ''), ('logspace', 'tensor_overload'),
    ('logsumexp', ''), ('lt', ''), ('lu_unpack', ''), ('masked_select', ''), ('max', 'binary'),
    ('max', 'reduction_no_dim'), ('max', 'reduction_with_dim'), ('maximum', ''), ('mean', ''),
    ('min', 'binary'), ('min', 'reduction_no_dim'), ('min', 'reduction_with_dim'), ('minimum', ''),
    ('mm', ''), ('mode', ''), ('msort', ''), ('mul', ''), ('multinomial', ''), ('mv', ''),
    ('mvlgamma', 'mvlgamma_p_1'), ('mvlgamma', 'mvlgamma_p_3'), ('mvlgamma', 'mvlgamma_p_5'),
    ('nan_to_num', ''), ('nanmean', ''), ('nanquantile', ''), ('nansum', ''), ('narrow_copy', ''),
    ('ne', ''), ('neg', ''), ('nextafter', ''), ('nn.functional.normalize', ''), ('nonzero', ''),
    ('norm', ''), ('norm', 'fro'), ('norm', 'inf'), ('norm', 'nuc'), ('normal', ''), ('ones', ''),
    ('ormqr', ''), ('outer', ''), ('permute_copy', ''), ('polar', ''),
    ('polygamma', 'polygamma_n_0'), ('pow', ''), ('qr', ''), ('quantile', ''), ('rad2deg', ''),
    ('randn', ''), ('reciprocal', ''), ('remainder', ''), ('renorm', ''), ('round', ''),
    ('round', 'decimals_0'), ('round', 'decimals_3'), ('round', 'decimals_neg_3'), ('rsqrt', ''),
    ('scatter', ''), ('scatter_add', ''), ('scatter_reduce', 'amax'), ('scatter_reduce', 'amin'),
    ('scatter_reduce', 'mean'), ('scatter_reduce', 'prod'), ('scatter_reduce', 'sum'),
    ('searchsorted', ''), ('sgn', ''), ('sigmoid', ''), ('sign', ''), ('signbit', ''), ('sin', ''),
    ('sinc', ''), ('sinh', ''), ('slice_scatter', ''), ('softmax', ''), ('softmax', 'with_dtype'),
    ('sort', ''), ('special.bessel_j0', ''), ('special.bessel_y1', ''),
    ('special.chebyshev_polynomial_t', ''), ('special.chebyshev_polynomial_u', ''),
    ('special.chebyshev_polynomial_v', ''), ('special.chebyshev_polynomial_w', ''),
    ('special.entr', ''), ('special.erfcx', ''), ('special.hermite_polynomial_h', ''),
    ('special.hermite_polynomial_he', ''), ('special.i0e', ''), ('special.i1', ''),
    ('special.i1e', ''), ('special.laguerre_polynomial_l', ''),
    ('special.legendre_polynomial_p', ''), ('special.modified_bessel_i0', ''),
    ('special.modified_bessel_i1', ''), ('special.modified_bessel_k0', ''),
    ('special.modified_bessel_k1', ''), ('special.ndtr', ''), ('special.ndtri', ''),
    ('special.polygamma', 'special_polygamma_n_0'), ('special.scaled_modified_bessel_k0', ''),
    ('special.scaled_modified_bessel_k1', ''), ('special.shifted_chebyshev_polynomial_t', ''),
    ('special.shifted_chebyshev_polynomial_u', ''), ('special.shifted_chebyshev_polynomial_v', ''),
    ('special.shifted_chebyshev_polynomial_w', ''), ('special.spherical_bessel_j0', ''),
    ('special.xlog1py', ''), ('special.zeta', ''), ('split_with_sizes_copy', ''), ('sqrt', ''),
    ('square', ''),
    ('squeeze_copy', ''), ('stack', ''), ('std', ''), ('sub', ''), ('svd', ''), ('t_copy', ''),
    ('take', ''), ('take_along_dim', ''), ('tan', ''), ('tanh', ''), ('tensordot', ''),
    ('topk', ''), ('transpose_copy', ''), ('tril', ''), ('triu', ''), ('true_divide', ''),
    ('trunc', ''), ('unbind_copy', ''), ('unfold_copy', ''), ('unsqueeze_copy', ''), ('var', ''),
    ('vdot', ''), ('view_copy', ''), ('vstack', ''), ('where', ''), ('xlogy', ''), ('zeros', ''),
]

# the forms torch has that this package lacks
ABSENT_INPLACE = [
]
ABSENT_OUT = [
    ('equal', ''), ('histogramdd', ''), ('nn.functional.avg_pool2d', ''),
    ('nn.functional.avg_pool3d', ''),
    ('nn.functional.gelu', ''), ('nn.functional.hardshrink', ''), ('nn.functional.linear', ''),
    ('nn.functional.logsigmoid', ''), ('nn.functional.softplus', ''),
    ('nn.functional.softshrink', ''),
]
# functions that name ``out`` but refuse it (a TypeError), as docs/pytorch.md's ``out=`` row
OUT_REFUSED = [
    ('cholesky_inverse', ''), ('cholesky_solve', ''), ('linalg.ldl_factor', ''),
    ('linalg.ldl_factor_ex', ''), ('linalg.ldl_solve', ''), ('lu', ''), ('lu_solve', ''),
    ('triangular_solve', ''),
]

PAIRS = [("method", k) for k in METHOD] + [("inplace", k) for k in INPLACE] + \
    [("out", k) for k in OUT]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("variant,key", PAIRS,
                         ids=lambda v: v if isinstance(v, str) else ".".join(filter(None, v)))
def test_variant_matches_pytorch(variant, key, dtype):
    op = op_table()[key]
    dtype = getattr(torch, dtype)
    if dtype not in op.supported_dtypes("cpu"):
        pytest.skip(f"torch has no CPU {dtype} for {key[0]}")
    ran, failures = run_variant(op, variant, dtype, MAX_SAMPLES, MAX_NUMEL)
    assert not failures, "\n".join(failures)
    assert ran, "no sample ran"


@pytest.mark.parametrize("variant,keys", [("inplace", ABSENT_INPLACE), ("out", ABSENT_OUT)])
def test_absent_forms_are_absent(variant, keys):
    # a form added here belongs in the lists above, once its samples pass
    present = []
    for key in keys:
        try:
            ours(op_table()[key], variant)
            present.append(key)
        except Unresolved:
            pass
    assert not present, f"{variant} forms now present: {present}"


@pytest.mark.parametrize("key", OUT_REFUSED, ids=lambda k: k[0])
def test_refused_out_is_a_type_error(key):
    ran, failures = run_variant(op_table()[key], "out", torch.float64, 1)
    assert ran and failures and all("TypeError" in f and "out=" in f for f in failures)


@pytest.mark.parametrize("call", [
    lambda lib, out: lib.linalg.matrix_power(lib.ones(3, 3, dtype=lib.float64), 0, out=out),
    lambda lib, out: lib.linalg.matrix_power(lib.ones(3, 3, dtype=lib.float64), 1, out=out),
    lambda lib, out: lib.linalg.matrix_power(lib.ones(3, 3, dtype=lib.float64), 2, out=out),
    lambda lib, out: lib.linalg.matrix_power(lib.ones(3, 3, dtype=lib.float64), -1, out=out),
    lambda lib, out: lib.std(lib.ones(3, 4), 1, out=out),
    lambda lib, out: lib.var(lib.ones(3, 4), (0, 1), out=out),
    lambda lib, out: lib.var(lib.ones(3, 4), dim=(1, 0), keepdim=True, out=out),
], ids=["matrix_power0", "matrix_power1", "matrix_power2", "matrix_power-1", "std_dim",
        "var_all_dims", "var_all_dims_keepdim"])
@pytest.mark.parametrize("out_dtype", ["complex128", "float32", "int64"])
def test_out_dtype_of_composites(call, out_dtype):
    # the rules that hang on the arguments, beyond the samples above
    import microgradnorm as mg
    expected = actual = None
    try:
        call(torch, torch.empty(0, dtype=getattr(torch, out_dtype)))
    except Exception as error:          # noqa: BLE001 - its class is compared
        expected = type(error)
    try:
        call(mg, mg.empty(0, dtype=getattr(mg, out_dtype)))
    except Exception as error:          # noqa: BLE001
        actual = error
    if expected is None:
        assert actual is None, actual
    else:
        assert isinstance(actual, expected), (actual, expected)

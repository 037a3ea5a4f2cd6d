"""PyTorch's own reference inputs (``op_db`` OpInfos, ``reference_inputs``) run through this
package in the dtypes beside float64 and float32 that torch's suite runs them in: int64, bool,
float16 and bfloat16 (tests/helpers/opinfo_generic.py). Integer and bool results must equal
torch's; half-precision ones agree within ``torch.testing.assert_close``'s defaults for their
dtype, the tolerance torch's own tests use; dtypes and shapes must match.

``OPS`` maps each op to the dtypes it passes in (i: int64, b: bool, h: float16,
f: bfloat16). To keep the sweep short it takes the first few samples of each, leaves out the
samples holding a tensor of more than ``MAX_NUMEL`` elements (torch's long-vector samples),
the ops whose results do not depend on the dtype (views, reshapes, copies, factories, random
draws: test_opinfo_generic.py runs them), and the slowest ones (bfloat16 is swept on the
non-``nn.functional`` ops). ``EXPECTED`` lists the known differences, with why.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import microgradnorm as mg  # noqa: E402
from opinfo_generic import TORCH_TOLERANCES, op_table, run_op  # noqa: E402

pytestmark = pytest.mark.slow          # torch's tables take seconds to import

MAX_SAMPLES = 3
MAX_NUMEL = 1000
DTYPES = {"i": "int64", "b": "bool", "h": "float16", "f": "bfloat16"}

# (name, variant) of torch's op_db: the dtypes (DTYPES' letters) its samples pass in
OPS = {
    ('__getitem__', ''): 'bhf', ('abs', ''): 'ihf', ('acos', ''): 'ibhf', ('acosh', ''): 'ibhf',
    ('add', ''): 'ibhf', ('addbmm', ''): 'i', ('addcdiv', ''): 'hf', ('addcmul', ''): 'ihf',
    ('addmm', ''): 'ihf', ('addmm', 'decomposed'): 'ihf', ('addmv', ''): 'ihf', ('addr', ''): 'ib',
    ('all', ''): 'ibhf', ('allclose', ''): 'hf', ('amax', ''): 'ibhf', ('amin', ''): 'ibhf',
    ('aminmax', ''): 'ibhf', ('angle', ''): 'ibhf', ('any', ''): 'ibhf', ('argmax', ''): 'ihf',
    ('argmin', ''): 'ihf', ('argsort', ''): 'ibhf', ('argwhere', ''): 'ibhf', ('asin', ''): 'ibhf',
    ('asinh', ''): 'ibhf', ('atan', ''): 'ibhf', ('atan2', ''): 'ibhf', ('atanh', ''): 'ibhf',
    ('baddbmm', ''): 'ihf', ('bfloat16', ''): 'ibhf', ('bmm', ''): 'ihf',
    ('bmm', 'triton_optimized'): 'hf', ('bool', ''): 'ibhf', ('bucketize', ''): 'ihf',
    ('byte', ''): 'ibhf', ('cat', ''): 'ibhf', ('cdouble', ''): 'ibhf', ('ceil', ''): 'ihf',
    ('cfloat', ''): 'ibhf', ('char', ''): 'ibhf', ('clamp', ''): 'ihf', ('clamp_max', ''): 'ibhf',
    ('clamp_min', ''): 'ibhf', ('conj_physical', ''): 'ibhf', ('copysign', ''): 'ibhf',
    ('corrcoef', ''): 'ihf', ('cos', ''): 'ibhf', ('cosh', ''): 'ibhf',
    ('count_nonzero', ''): 'ibhf', ('cov', ''): 'ihf', ('cross', ''): 'ihf',
    ('cummax', ''): 'ibhf', ('cummin', ''): 'ibhf', ('cumprod', ''): 'ihf', ('cumsum', ''): 'ihf',
    ('cumulative_trapezoid', ''): 'ihf', ('deg2rad', ''): 'ibhf', ('diff', ''): 'ibhf',
    ('digamma', ''): 'ibhf', ('dist', ''): 'hf', ('div', 'floor_rounding'): 'ihf',
    ('div', 'no_rounding_mode'): 'ibhf', ('div', 'trunc_rounding'): 'ihf', ('dot', ''): 'ihf',
    ('double', ''): 'ibhf', ('einsum', ''): 'ihf', ('eq', ''): 'ibhf', ('equal', ''): 'ibhf',
    ('erf', ''): 'ibhf', ('erfc', ''): 'ibhf', ('erfinv', ''): 'ibhf', ('exp', ''): 'ibhf',
    ('exp2', ''): 'ibhf', ('expm1', ''): 'ibhf', ('float', ''): 'ibhf',
    ('float_power', ''): 'ibhf', ('floor', ''): 'ihf', ('floor_divide', ''): 'ihf',
    ('fmax', ''): 'ibhf', ('fmin', ''): 'ibhf', ('fmod', ''): 'ihf', ('frac', ''): 'hf',
    ('frexp', ''): 'hf', ('gather', ''): 'ibhf', ('ge', ''): 'ibhf', ('gradient', ''): 'ihf',
    ('gt', ''): 'ibhf', ('half', ''): 'ibhf', ('heaviside', ''): 'ibhf', ('histc', ''): 'hf',
    ('hypot', ''): 'hf', ('i0', ''): 'ibhf', ('igamma', ''): 'hf', ('igammac', ''): 'hf',
    ('index_add', ''): 'ibhf', ('index_fill', ''): 'ibhf', ('index_put', ''): 'ibhf',
    ('index_reduce', 'amax'): 'ihf', ('index_reduce', 'amin'): 'ihf',
    ('index_reduce', 'mean'): 'ihf', ('index_reduce', 'prod'): 'ihf', ('index_select', ''): 'ibhf',
    ('inner', ''): 'ihf', ('int', ''): 'ibhf', ('isclose', ''): 'ibhf', ('isfinite', ''): 'ibhf',
    ('isin', ''): 'ihf', ('isinf', ''): 'ibhf', ('isnan', ''): 'ibhf', ('isneginf', ''): 'ibhf',
    ('isposinf', ''): 'ibhf', ('isreal', ''): 'ibhf', ('kron', ''): 'ibhf',
    ('kthvalue', ''): 'ihf', ('ldexp', ''): 'ibhf', ('le', ''): 'ibhf', ('lerp', ''): 'hf',
    ('lgamma', ''): 'ibhf', ('log', ''): 'ibhf', ('log10', ''): 'ibhf', ('log1p', ''): 'ibhf',
    ('log2', ''): 'ibhf', ('log_softmax', 'with_dtype'): 'ibhf', ('logaddexp', ''): 'hf',
    ('logaddexp2', ''): 'hf', ('logcumsumexp', ''): 'hf', ('logical_and', ''): 'ibhf',
    ('logical_not', ''): 'ibhf', ('logical_or', ''): 'ibhf', ('logical_xor', ''): 'ibhf',
    ('logit', ''): 'ibhf', ('logsumexp', ''): 'ibhf', ('long', ''): 'ibhf', ('lt', ''): 'ibhf',
    ('masked_fill', ''): 'ibhf', ('masked_scatter', ''): 'ibhf', ('masked_select', ''): 'ibhf',
    ('matmul', ''): 'ihf', ('max', 'binary'): 'ibhf', ('max', 'reduction_no_dim'): 'ibhf',
    ('max', 'reduction_with_dim'): 'ibhf', ('maximum', ''): 'ibhf', ('mean', ''): 'hf',
    ('median', ''): 'ihf', ('min', 'binary'): 'ibhf', ('min', 'reduction_no_dim'): 'ibhf',
    ('min', 'reduction_with_dim'): 'ibhf', ('minimum', ''): 'ibhf', ('mm', ''): 'ihf',
    ('mode', ''): 'ibhf', ('msort', ''): 'ibhf', ('mul', ''): 'ibhf', ('mv', ''): 'ihf',
    ('mvlgamma', 'mvlgamma_p_1'): 'ihf', ('mvlgamma', 'mvlgamma_p_3'): 'ihf',
    ('mvlgamma', 'mvlgamma_p_5'): 'ihf', ('nan_to_num', ''): 'ibhf', ('nanmean', ''): 'hf',
    ('nanmedian', ''): 'ihf', ('nansum', ''): 'ibhf', ('ne', ''): 'ibhf', ('neg', ''): 'ihf',
    ('nextafter', ''): 'hf', ('nn.functional.adaptive_max_pool1d', ''): 'h',
    ('nn.functional.adaptive_max_pool2d', ''): 'h', ('nn.functional.adaptive_max_pool3d', ''): 'h',
    ('nn.functional.avg_pool1d', ''): 'ih', ('nn.functional.avg_pool2d', ''): 'ih',
    ('nn.functional.avg_pool3d', ''): 'i', ('nn.functional.bilinear', ''): 'i',
    ('nn.functional.binary_cross_entropy', ''): 'h',
    ('nn.functional.binary_cross_entropy_with_logits', ''): 'h', ('nn.functional.celu', ''): 'h',
    ('nn.functional.conv1d', ''): 'h', ('nn.functional.conv2d', ''): 'i',
    ('nn.functional.conv3d', ''): 'i', ('nn.functional.conv_transpose1d', ''): 'i',
    ('nn.functional.conv_transpose2d', ''): 'i', ('nn.functional.conv_transpose3d', ''): 'i',
    ('nn.functional.cosine_embedding_loss', ''): 'ibh',
    ('nn.functional.cosine_similarity', ''): 'h', ('nn.functional.elu', ''): 'h',
    ('nn.functional.embedding', ''): 'h', ('nn.functional.fractional_max_pool2d', ''): 'h',
    ('nn.functional.fractional_max_pool3d', ''): 'h', ('nn.functional.gaussian_nll_loss', ''): 'h',
    ('nn.functional.gelu', ''): 'h', ('nn.functional.glu', ''): 'h',
    ('nn.functional.hardshrink', ''): 'h', ('nn.functional.hardsigmoid', ''): 'h',
    ('nn.functional.hardswish', ''): 'h', ('nn.functional.hardtanh', ''): 'ih',
    ('nn.functional.hinge_embedding_loss', ''): 'h', ('nn.functional.kl_div', ''): 'h',
    ('nn.functional.l1_loss', ''): 'h', ('nn.functional.leaky_relu', ''): 'h',
    ('nn.functional.linear', ''): 'ih', ('nn.functional.linear_cross_entropy', ''): 'h',
    ('nn.functional.linear_cross_entropy', 'chunked'): 'h',
    ('nn.functional.local_response_norm', ''): 'ih', ('nn.functional.logsigmoid', ''): 'h',
    ('nn.functional.margin_ranking_loss', ''): 'ih', ('nn.functional.max_pool1d', ''): 'h',
    ('nn.functional.max_pool2d', ''): 'ih', ('nn.functional.max_pool3d', ''): 'ih',
    ('nn.functional.max_unpool3d', ''): 'h', ('nn.functional.max_unpool3d', 'grad'): 'h',
    ('nn.functional.mse_loss', ''): 'h', ('nn.functional.nll_loss', ''): 'h',
    ('nn.functional.normalize', ''): 'h', ('nn.functional.pairwise_distance', ''): 'ih',
    ('nn.functional.poisson_nll_loss', ''): 'ih', ('nn.functional.prelu', ''): 'h',
    ('nn.functional.relu', ''): 'ih', ('nn.functional.relu6', ''): 'ih',
    ('nn.functional.scaled_dot_product_attention', ''): 'h', ('nn.functional.selu', ''): 'h',
    ('nn.functional.silu', ''): 'h', ('nn.functional.smooth_l1_loss', ''): 'h',
    ('nn.functional.soft_margin_loss', ''): 'h', ('nn.functional.softmin', ''): 'h',
    ('nn.functional.softmin', 'with_dtype'): 'ih', ('nn.functional.softshrink', ''): 'h',
    ('nn.functional.softsign', ''): 'ih', ('nn.functional.tanhshrink', ''): 'ih',
    ('nn.functional.threshold', ''): 'ih', ('nn.functional.triplet_margin_loss', ''): 'ih',
    ('nn.functional.triplet_margin_with_distance_loss', ''): 'ih',
    ('nn.functional.upsample_bilinear', ''): 'h', ('nonzero', ''): 'ibhf',
    ('nonzero_static', ''): 'ibhf', ('norm', ''): 'hf', ('norm', 'fro'): 'hf',
    ('norm', 'inf'): 'hf', ('outer', ''): 'ibhf', ('polygamma', 'polygamma_n_0'): 'ibhf',
    ('pow', ''): 'ihf', ('prod', ''): 'ibhf', ('put', ''): 'ibhf', ('rad2deg', ''): 'ibhf',
    ('real', ''): 'ibhf', ('reciprocal', ''): 'ibhf', ('remainder', ''): 'ihf',
    ('renorm', ''): 'hf', ('repeat_interleave', ''): 'ibhf', ('round', ''): 'ihf',
    ('round', 'decimals_0'): 'hf', ('round', 'decimals_3'): 'f', ('round', 'decimals_neg_3'): 'f',
    ('rsqrt', ''): 'ibhf', ('rsub', ''): 'ihf', ('scatter', ''): 'ibhf',
    ('scatter_add', ''): 'ibhf', ('scatter_reduce', 'amax'): 'ibhf',
    ('scatter_reduce', 'amin'): 'ibhf', ('scatter_reduce', 'mean'): 'ihf',
    ('scatter_reduce', 'prod'): 'ibhf', ('scatter_reduce', 'sum'): 'ibhf',
    ('searchsorted', ''): 'ihf', ('select_scatter', ''): 'ibhf', ('sgn', ''): 'ibhf',
    ('short', ''): 'ibhf', ('sigmoid', ''): 'ibhf', ('sign', ''): 'ibhf', ('signbit', ''): 'ibhf',
    ('sin', ''): 'ibhf', ('sinc', ''): 'ibhf', ('sinh', ''): 'ibhf', ('softmax', ''): 'hf',
    ('softmax', 'with_dtype'): 'ibhf', ('sort', ''): 'ibhf', ('sqrt', ''): 'ibhf',
    ('square', ''): 'ibhf', ('std', ''): 'hf', ('std', 'unbiased'): 'hf', ('std_mean', ''): 'hf',
    ('std_mean', 'unbiased'): 'hf', ('sub', ''): 'ihf', ('sum', ''): 'ibhf', ('take', ''): 'ibhf',
    ('take_along_dim', ''): 'ibhf', ('tan', ''): 'bhf', ('tanh', ''): 'ibhf',
    ('tensordot', ''): 'ihf', ('to', ''): 'ibhf', ('topk', ''): 'ihf', ('trace', ''): 'ihf',
    ('trapezoid', ''): 'ihf', ('trapz', ''): 'ihf', ('true_divide', ''): 'ibhf',
    ('trunc', ''): 'ihf', ('unique', ''): 'ibhf', ('unique_consecutive', ''): 'ibhf',
    ('var', ''): 'hf', ('var', 'unbiased'): 'hf', ('var_mean', ''): 'hf',
    ('var_mean', 'unbiased'): 'hf', ('vdot', ''): 'ihf', ('where', ''): 'ibhf',
    ('xlogy', ''): 'ibhf',
}

_HALF_KERNELS = ("torch's CPU kernel rounds intermediate steps to the half dtype where this "
                 "package computes in float32 and rounds once: an ulp or more apart")
# (name, variant, dtype): why this package differs from torch there (docs/pytorch.md); an op
# both here and in OPS differs only in samples the sweep leaves out (later or larger ones)
EXPECTED = {
    ("complex", "", "float16"): "no complex32: NumPy has no complex half dtype",
    ("view_as_complex", "", "float16"): "no complex32: NumPy has no complex half dtype",
    ("einsum", "", "int32"): "torch sums an operand's own dims first, promoting to int64",
    ("einsum", "", "uint8"): "torch sums an operand's own dims first, promoting to int64",
    ("nn.functional.interpolate", "bilinear", "uint8"): "interpolation is floating only here",
    ("nn.functional.interpolate", "bicubic", "uint8"): "interpolation is floating only here",
    ("nn.functional.upsample_bilinear", "", "uint8"): "interpolation is floating only here",
    ("add", "", "float16"): "torch's scalar tail (a tensor under 32 elements) rounds "
                            "alpha * other to float16 before the sum; its vector loop once",
    ("sub", "", "float16"): "as add's",
    **{(name, "", "float16"): "torch's float16 kernel rounds once where oneDNN takes the call "
                              "(by CPU and arguments) and once per overlapping window where "
                              "its col2im does; this package rounds once "
                              "(tests/vocabulary/test_conv_more.py)"
       for name in ("nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d")},
    **{(name, variant, dtype): _HALF_KERNELS
       for name, variant in [
           ("addbmm", ""), ("addr", ""), ("grid_sampler_2d", ""), ("log_softmax", ""),
           ("special.ndtr", ""), ("nn.functional.adaptive_avg_pool1d", ""),
           ("nn.functional.adaptive_avg_pool2d", ""), ("nn.functional.adaptive_avg_pool3d", ""),
           ("nn.functional.bilinear", ""), ("nn.functional.embedding_bag", ""),
           ("nn.functional.interpolate", "area"), ("nn.functional.interpolate", "linear"),
           ("nn.functional.interpolate", "trilinear"),
           ("nn.functional.upsample_bilinear", "")]
       for dtype in ("float16", "bfloat16")},
    **{(name, "", "float16"): _HALF_KERNELS
       for name in ("special.i0e", "nn.functional.conv1d", "nn.functional.conv3d",
                    "nn.functional.huber_loss", "nn.functional.mish", "nn.functional.softplus",
                    "nn.functional.multilabel_soft_margin_loss",
                    "nn.functional.scaled_dot_product_attention")},
    **{(name, "", "bfloat16"): _HALF_KERNELS
       for name in ("nn.functional.softplus", "nn.functional.scaled_dot_product_attention")},
}

CASES = [(key, DTYPES[letter]) for key, letters in OPS.items() for letter in letters]


@pytest.mark.parametrize("key, dtype", CASES,
                         ids=[".".join(filter(None, key)) + f"-{dtype}" for key, dtype in CASES])
def test_reference_inputs_match_pytorch_in_dtype(key, dtype):
    op = op_table()[key]
    dtype = getattr(torch, dtype)
    assert dtype in op.supported_dtypes("cpu"), f"torch has no CPU {dtype} for {key[0]}"
    ran, failures = run_op(op, dtype, MAX_SAMPLES, TORCH_TOLERANCES, max_numel=MAX_NUMEL)
    assert not failures, "\n".join(failures)
    assert ran, "no sample ran"


def test_expected_differences_name_ops_and_dtypes_torch_runs():
    for name, variant, dtype in EXPECTED:
        op = op_table()[(name, variant)]
        assert getattr(torch, dtype) in op.supported_dtypes("cpu"), (name, dtype)


# ----- the differences the sweep found, each on a sample of its own ---------------------------


def _ours(t):
    return mg.tensor(t.float().numpy()).to(mg.bfloat16) if t.dtype == torch.bfloat16 else \
        mg.tensor(t.numpy())


@pytest.mark.parametrize("dtype", ["bool", "int64", "uint8", "float16", "bfloat16", "float32"])
@pytest.mark.parametrize("shape, dim", [((300,), 0), ((3, 40), 1), ((40, 3), 0), ((2, 17, 2), 1)])
@pytest.mark.parametrize("descending", [False, True])
def test_unstable_sort_orders_ties_as_torch(dtype, shape, dim, descending):
    generator = torch.Generator().manual_seed(len(shape) * 7 + dim)
    x = torch.randint(0, 3, shape, generator=generator).to(getattr(torch, dtype))
    if dtype == "float32":
        x.view(-1)[::7] = float("nan")
    expected = torch.sort(x, dim, descending)
    got = mg.sort(_ours(x), dim, descending)
    assert (got.indices.numpy() == expected.indices.numpy()).all()
    assert (mg.argsort(_ours(x), dim, descending).numpy() == expected.indices.numpy()).all()
    stable = torch.argsort(x, dim=dim, descending=descending, stable=True)
    assert (mg.argsort(_ours(x), dim, descending, stable=True).numpy() == stable.numpy()).all()


@pytest.mark.parametrize("dtype", ["bool", "int32", "uint8", "float16"])
def test_sum_to_size_of_a_0d_tensor_sums_as_torch(dtype):
    x = torch.tensor(1).to(getattr(torch, dtype))
    assert str(x.sum_to_size(()).dtype).endswith(str(_ours(x).sum_to_size(()).dtype))
    y = torch.ones(2).to(getattr(torch, dtype))
    assert str(y.sum_to_size((2,)).dtype).endswith(str(_ours(y).sum_to_size((2,)).dtype))


@pytest.mark.parametrize("value", [True, False, 2])
def test_constant_pad_takes_a_bool_value_as_torch(value):
    for x in (torch.tensor([[True, False]]), torch.tensor([[1.5, 2.0]])):
        expected = torch.constant_pad_nd(x, (1, 2), value)
        got = mg.constant_pad_nd(_ours(x), (1, 2), value)
        assert str(got.dtype) == str(expected.dtype)
        assert (got.numpy() == expected.numpy()).all()
    with pytest.raises(TypeError):
        mg.nn.functional.pad(mg.ones(2), (1, 1), value="1")


@pytest.mark.parametrize("dtype", ["int64", "uint8", "float64"])
def test_special_functions_of_0d_integers(dtype):
    x = torch.tensor(3, dtype=getattr(torch, dtype))
    for name in ("bessel_j0", "bessel_y1", "modified_bessel_k0", "scaled_modified_bessel_k1"):
        expected = getattr(torch.special, name)(x)
        got = getattr(mg.special, name)(_ours(x))
        assert got.shape == () and str(got.dtype) == str(expected.dtype)
        assert abs(float(got) - float(expected)) <= 1e-6 * abs(float(expected))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float16"])
def test_tensordot_over_a_size_one_dim_keeps_the_dtype(dtype):
    a = torch.arange(3).reshape(1, 1, 3).to(getattr(torch, dtype))
    b = torch.arange(4).reshape(2, 1, 2).to(getattr(torch, dtype))
    expected = torch.tensordot(a, b, dims=([0, 1], [2, 0]))
    got = mg.tensordot(_ours(a), _ours(b), dims=([0, 1], [2, 0]))
    assert str(got.dtype) == str(expected.dtype)
    assert (got.numpy() == expected.numpy()).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_variance_rounds_once_as_torch(dtype):
    x = (torch.randn(6, 5, 7, generator=torch.Generator().manual_seed(3)) * 6).to(
        getattr(torch, dtype))
    for name in ("var", "std"):
        expected = getattr(torch, name)(x, dim=1, correction=1.3)
        got = getattr(mg, name)(_ours(x), dim=1, correction=1.3)
        assert str(got.dtype) == f"torch.{dtype}"
        torch.testing.assert_close(torch.from_numpy(got.float().numpy()), expected.float(),
                                   **dict(zip(("rtol", "atol"), TORCH_TOLERANCES[x.dtype])))

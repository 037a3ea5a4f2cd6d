"""``repr(tensor)`` is PyTorch's text: every case compares ours with ``repr`` of the same
values as a torch tensor, with ``dtype=torch.X`` read as ``dtype=X`` (our dtypes are NumPy's)
and grad_fn names mapped where ours differ (``MulBackward`` for ``MulBackward0``)."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import microgradnorm as mg
from microgradnorm import printing

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _print_options_restored():
    """Each test starts from the default options, in both libraries, and leaves them so."""
    torch.set_printoptions(profile="default")
    mg.set_printoptions(profile="default")
    yield
    torch.set_printoptions(profile="default")
    mg.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


def torch_text(t):
    return repr(t)


def assert_prints_as_torch(array):
    """``array`` (NumPy, any dtype torch has) prints here as torch prints it."""
    array = np.ascontiguousarray(array)
    ours, theirs = mg.tensor(array), torch.from_numpy(array.copy())
    assert ours.dtype == array.dtype
    assert repr(ours) == torch_text(theirs)
    assert str(ours) == repr(ours)


def set_both(**options):
    torch.set_printoptions(**options)
    mg.set_printoptions(**options)


# ----- the options ------------------------------------------------------------------------
def test_print_options_follow_torchs_through_profiles_and_overrides():
    assert mg.get_printoptions() == torch._tensor_str.get_printoptions()
    calls = [dict(precision=2), dict(threshold=10, sci_mode=True), dict(edgeitems=1),
             dict(profile="short"), dict(profile="full", precision=6), dict(linewidth=120),
             dict(profile="default", sci_mode=False), dict()]
    for options in calls:
        set_both(**options)
        assert mg.get_printoptions() == torch._tensor_str.get_printoptions(), options


def test_an_unknown_profile_is_refused():
    # torch ignores it silently; a misspelt profile here says what the choices are
    with pytest.raises(ValueError, match="'default', 'full', 'short'"):
        mg.set_printoptions(profile="long")


def test_printoptions_block_restores_the_options():
    with printing.printoptions(precision=1, threshold=3), \
            torch._tensor_str.printoptions(precision=1, threshold=3):
        assert repr(mg.tensor([1.25, 2.0])) == repr(torch.tensor([1.25, 2.0])) == \
            "tensor([1.2, 2.0])"
        assert repr(mg.arange(10)) == repr(torch.arange(10))
    assert mg.get_printoptions() == torch._tensor_str.get_printoptions()


# ----- values -----------------------------------------------------------------------------
SHAPES = [(), (1,), (4,), (3, 4), (2, 3, 4), (2, 1, 2, 3)]
SCALES = [1e-6, 1e-4, 1e-2, 1.0, 1e3, 1e5, 1e8, 1e9]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normals_of_every_scale_print_as_torchs(shape, scale, dtype):
    assert_prints_as_torch((RNG.standard_normal(shape) * scale).astype(dtype))


CASES = {
    "integer-valued floats": np.array([1.0, -3.0, 20.0], np.float32),
    "large integer-valued floats": np.array([1.0, 2e9], np.float32),
    "nan inf mix": np.array([np.nan, np.inf, -np.inf, 1.5], np.float32),
    "nan inf with whole numbers": np.array([np.nan, 1.0, -np.inf], np.float32),
    "only nan": np.array([np.nan, np.nan]),
    "only zeros": np.zeros((2, 2), np.float32),
    "negative zero": np.array([-0.0, 0.0, 1.0], np.float32),
    "tiny and huge": np.array([1e-300, 1e300]),
    "int64": np.array([[-5, 100000], [3, 0]]),
    "int32": np.array([7, -12], np.int32),
    "uint8": np.array([0, 255], np.uint8),
    "bool": np.array([[True, False], [False, True]]),
    "0-d float": np.array(3.25, np.float32),
    "0-d int": np.array(7),
    "0-d bool": np.array(True),
    "0-d float64": np.array(-0.5),
    "empty": np.zeros(0, np.float32),
    "empty int64": np.zeros(0, np.int64),
    "empty 2-d": np.zeros((0, 3), np.float32),
    "empty 3-d int64": np.zeros((2, 0, 1), np.int64),
    "summarized 1-d": RNG.standard_normal(2000).astype(np.float32),
    "summarized 2-d": RNG.standard_normal((40, 40)).astype(np.float32),
    "summarized 3-d": RNG.standard_normal((11, 11, 11)).astype(np.float32),
    "summarized ints": np.arange(2000),
    "summarized, width from the edges only": np.concatenate(
        [np.ones(3), np.full(1000, 1e6), np.ones(3)]).astype(np.float32),
    "long row wraps": (np.arange(100) * 1.5).astype(np.float32),
    "long 2-d rows wrap": RNG.standard_normal((3, 30)).astype(np.float32),
    "long rows with a dtype suffix": RNG.standard_normal((3, 4)) * 1e-6,
    "float16": RNG.standard_normal((3, 50)).astype(np.float16),
    "float16 whole numbers": np.array([1, 2, 2048], np.float16),
}


@pytest.mark.parametrize("name", CASES)
def test_special_values_print_as_torchs(name):
    assert_prints_as_torch(CASES[name])


OPTIONS = [dict(precision=2), dict(precision=0), dict(precision=8), dict(sci_mode=True),
           dict(sci_mode=False), dict(threshold=5), dict(threshold=0),
           dict(threshold=5, edgeitems=1), dict(threshold=5, edgeitems=0),
           dict(linewidth=40), dict(linewidth=10), dict(linewidth=200), dict(profile="short"),
           dict(profile="full")]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}"
                                                                    for k, v in o.items()))
def test_print_options_change_the_text_as_torchs(options):
    set_both(**options)
    for name in ("integer-valued floats", "nan inf mix", "int64", "bool", "0-d float",
                 "empty 2-d", "summarized 2-d", "summarized 3-d", "long row wraps",
                 "long rows with a dtype suffix"):
        assert_prints_as_torch(CASES[name])
    assert_prints_as_torch((RNG.standard_normal((2, 3, 4)) * 1e-5).astype(np.float32))


OPTION_DRAWS = st.fixed_dictionaries({}, optional={
    "precision": st.integers(0, 8), "threshold": st.sampled_from([0, 5, 30, 1000]),
    "edgeitems": st.integers(0, 4), "linewidth": st.integers(10, 120),
    "sci_mode": st.booleans(), "profile": st.sampled_from(["default", "short", "full"])})
SHAPE_DRAWS = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=7)


@given(array=st.sampled_from([np.float32, np.float64]).flatmap(lambda dtype: hnp.arrays(
    dtype, SHAPE_DRAWS, elements=st.floats(width=np.dtype(dtype).itemsize * 8)
    | st.sampled_from([0.0, -0.0, 1.0, -2.0, 2.0 ** -24, 2.0 ** 32])),),
    options=OPTION_DRAWS)
def test_any_floats_under_any_options_print_as_torchs(array, options):
    set_both(**options)
    assert_prints_as_torch(array)


@given(array=hnp.arrays(st.sampled_from([np.int64, np.int32, np.int8, np.bool_]),
                        SHAPE_DRAWS),
       options=OPTION_DRAWS)
def test_any_ints_and_bools_under_any_options_print_as_torchs(array, options):
    set_both(**options)
    assert_prints_as_torch(array)


@pytest.mark.skipif(not mg.dtypes.has_bfloat16(), reason="bfloat16 needs ml_dtypes")
@pytest.mark.parametrize("scale", [1e-5, 1.0, 1e4])
def test_bfloat16_prints_as_torchs(scale):
    values = (RNG.standard_normal((3, 7)) * scale).astype(np.float32)
    values[0, :2] = [np.nan, 2.0]
    ours = mg.tensor(values.astype(mg.bfloat16))
    assert repr(ours) == torch_text(torch.from_numpy(values).to(torch.bfloat16))


# ----- suffixes ---------------------------------------------------------------------------
def test_the_dtype_suffix_follows_the_default_dtype():
    values = [1.5, 2.0]
    assert repr(mg.tensor(values)) == "tensor([1.5000, 2.0000])"
    assert repr(mg.tensor(values, dtype=mg.float64)) == \
        torch_text(torch.tensor(values, dtype=torch.float64))
    mg.set_default_dtype(mg.float64)
    torch.set_default_dtype(torch.float64)
    for dtype in (mg.float32, mg.float64, mg.float16):
        theirs = torch.tensor(values, dtype=getattr(torch, str(dtype).removeprefix("torch.")))
        assert repr(mg.tensor(values, dtype=dtype)) == torch_text(theirs)
    assert repr(mg.zeros(0, dtype=mg.float32)) == torch_text(torch.zeros(0, dtype=torch.float32))


def test_requires_grad_and_grad_fn_suffixes_read_as_torchs():
    values = RNG.standard_normal((2, 3)).astype(np.float32)
    x = mg.tensor(values, requires_grad=True)
    xt = torch.tensor(values, requires_grad=True)
    assert repr(x) == torch_text(xt) and repr(x).endswith("requires_grad=True)")
    assert repr(x * 2) == torch_text(xt * 2)
    assert repr((x * 2).sum()) == torch_text((xt * 2).sum())
    # the node's name(), as PyTorch's class name
    assert repr(x.exp()).endswith(f"grad_fn=<{x.exp().grad_fn.name()}>)")
    (x * x).sum().backward()
    (xt * xt).sum().backward()
    assert repr(x.grad) == torch_text(xt.grad)
    x64 = mg.tensor(values.astype(np.float64), requires_grad=True)
    assert repr(x64) == torch_text(torch.tensor(values.astype(np.float64), requires_grad=True))


def test_a_parameter_prints_as_torchs():
    values = RNG.standard_normal((2, 2)).astype(np.float32)
    ours, theirs = mg.nn.Parameter(mg.tensor(values)), torch.nn.Parameter(torch.tensor(values))
    assert repr(ours) == str(ours) == torch_text(theirs)


def test_a_suffix_that_passes_the_line_width_wraps_where_torchs_does():
    values = np.arange(6, dtype=np.float32) * 1.25 + 1000
    ours = mg.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    assert "\n       requires_grad=True)" in repr(ours)
    assert repr(ours) == torch_text(theirs)


class _CupyLike:
    """A stand-in for a CuPy array: the backend knows CuPy by the type's module."""

    __module__ = "cupy._core.core"

    def __init__(self, array):
        self.array = array

    def get(self):
        return self.array


def test_a_cuda_tensor_names_its_device_first_as_torch():
    values = np.linspace(-1, 1, 11)
    text = printing.tensor_repr(_CupyLike(values), requires_grad=True)
    assert "], device='cuda', dtype=torch.float64,\n       requires_grad=True)" in text
    # torch's layout for the same body and suffixes, its device spelt 'cuda:0'
    body = torch._tensor_str._tensor_str(torch.from_numpy(values), len("tensor("))
    theirs = torch._tensor_str._add_suffixes(
        "tensor(" + body, ["device='cuda:0'", "dtype=torch.float64", "requires_grad=True"],
        len("tensor("), False)
    assert text == theirs.replace("cuda:0", "cuda")


def test_a_lecture_prints_the_same_random_tensors():
    g, gt = mg.Generator().manual_seed(0), torch.Generator().manual_seed(0)
    assert repr(mg.rand(3, generator=g)) == repr(torch.rand(3, generator=gt))
    mg.manual_seed(0)
    torch.manual_seed(0)
    assert repr(mg.randn(2, 3)) == repr(torch.randn(2, 3))
    assert repr(mg.randint(0, 10, (4,))) == repr(torch.randint(0, 10, (4,)))


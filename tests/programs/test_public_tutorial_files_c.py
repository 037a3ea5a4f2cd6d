"""PyTorch's own tutorials, third set, run as written: forward-mode AD, parametrizations,
neural style transfer, hooks for saved tensors, the optimizer's and schedulers' habits and
custom autograd.Functions under torch.func. Each program (``tutorial_programs_c.py``) runs
under PyTorch and here from one seed (the generators agree bit for bit) and what it prints
must agree: rtol 1e-9 in float64, float32 rounding in float32."""

import pytest

torch = pytest.importorskip("torch")

import microgradnorm as mg  # noqa: E402
from torch_compare import (LIBRARIES, TUTORIAL_TOLERANCES,  # noqa: E402
                           assert_comparison_catches, assert_same_output, default_dtype)
from tutorial_programs_c import (forward_mode_ad, function_transforms,  # noqa: E402
                                 optimizer_habits, parametrizations, saved_tensor_hooks,
                                 style_transfer)

PROGRAMS = {"forward_mode_ad": forward_mode_ad,
            "parametrizations": parametrizations,
            "style_transfer": style_transfer,
            "saved_tensor_hooks": saved_tensor_hooks,
            "optimizer_habits": optimizer_habits,
            "function_transforms": function_transforms}


# L-BFGS's twenty inner iterations per step amplify float32's last-bit differences (the sums'
# order) past float32 rounding in the image; four iterations per step stay within it
OPTIONS = {("style_transfer", "float32"): {"max_iter": 4}}


def run(name, library, dtype):
    with default_dtype(dtype):
        return PROGRAMS[name](*LIBRARIES[library], **OPTIONS.get((name, dtype), {}))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_tutorial_prints_what_it_prints_under_pytorch(name, dtype):
    expected = run(name, "torch", dtype)
    got = run(name, "microgradnorm", dtype)
    assert_same_output(got, expected, **TUTORIAL_TOLERANCES[dtype])


def test_the_comparison_can_fail():
    """A printed number moved by more than the tolerance, or a flag flipped, fails."""
    expected = run("forward_mode_ad", "torch", "float64")
    assert_comparison_catches(expected, **TUTORIAL_TOLERANCES["float64"])


def exp_with_jvp(library):
    """exp as a custom Function with a forward-mode rule only (the tutorial's), and a wrong
    one when ``scale`` is not 1."""
    class Exp(library.autograd.Function):
        scale = 1.0

        @staticmethod
        def forward(ctx, x):
            ctx.result = x.exp()
            return ctx.result

        @staticmethod
        def jvp(ctx, tangent):
            return tangent * ctx.result * Exp.scale
    return Exp


@pytest.mark.parametrize("library", [torch, mg], ids=["torch", "microgradnorm"])
def test_a_custom_jvp_counts_once_where_its_input_also_takes_another_path(library):
    """x · Exp(x): the tangent is Exp's jvp times x plus exp(x) times the tangent, once."""
    fwAD, Exp = library.autograd.forward_ad, exp_with_jvp(library)
    x = library.tensor([0.5, -1.0, 2.0], dtype=library.float64)
    t = library.tensor([1.0, 2.0, -0.5], dtype=library.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        tangent = fwAD.unpack_dual(dual * Exp.apply(dual)).tangent
    expected = (t * x.exp() * (1 + x)).tolist()
    assert tangent.tolist() == pytest.approx(expected, rel=1e-12)


def test_gradcheck_checks_a_custom_jvp_as_torch_does():
    for library in (torch, mg):
        Exp = exp_with_jvp(library)
        x = library.tensor([0.3, -0.7], dtype=library.float64, requires_grad=True)
        check = dict(check_forward_ad=True, check_backward_ad=False, raise_exception=False)
        assert library.autograd.gradcheck(Exp.apply, (x,), **check) is True
        Exp.scale = 1.5
        assert library.autograd.gradcheck(Exp.apply, (x,), **check) is False


def test_saved_tensor_attributes_refuse_as_torch_does():
    """A second pair of hooks, an attribute the node does not have, a read after backward
    freed the node: torch's error classes."""
    for library in (torch, mg):
        a = library.randn(3, requires_grad=True)
        raw = a.pow(2).grad_fn._raw_saved_self
        raw.register_hooks(lambda t: t, lambda t: t)
        with pytest.raises(RuntimeError, match="already been set"):
            raw.register_hooks(lambda t: t, lambda t: t)
        y = a.exp()
        with pytest.raises(AttributeError, match="_saved_nothing"):
            _ = y.grad_fn._saved_nothing
        y.sum().backward()
        with pytest.raises(RuntimeError, match="freed"):
            _ = y.grad_fn._saved_result

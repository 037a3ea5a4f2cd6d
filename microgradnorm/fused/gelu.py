"""GELU, exact and tanh, twice: the composite graph of primitives (erf or tanh and the
products around them) and one fused node that saves only x and computes the closed-form
derivative in backward, as PyTorch's GELU does."""

from .. import ops
from ..autograd import op_group
from ..dtypes import ArgumentError
from ..kernels import for_array
from ..kernels.reference import KAPPA, SQRT_2_OVER_PI, SQRT_HALF
from . import arguments
from .twin import FusedFunction, Input, Option, Twin

__all__ = ["APPROXIMATIONS", "GELU", "gelu"]

APPROXIMATIONS = ("none", "tanh")


# ----- fused: one node, closed-form backward ----------------------------------------------
class Gelu(FusedFunction):
    """The kernels' ``gelu_forward`` and ``gelu_backward`` (numba's compiled loops by
    default where numba imports, ``kernels.reference`` the oracle)."""
    saved_names = ("x",)

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.approximate, ctx.kernels = approximate, for_array(x)
        ctx.save_for_backward(x)                     # the derivative reads x alone
        return ctx.kernels.gelu_forward(x, approximate)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        return ctx.kernels.gelu_backward(g, x, ctx.approximate)

    @staticmethod
    def recompute(ctx, x):                       # the twin, for double backward
        return composite_gelu(x, ctx.approximate)


# ----- composite: the graph of primitives -------------------------------------------------
def composite_gelu(x, approximate="none"):
    """The graph: ½x(1 + erf(x/√2)), or ½x(1 + tanh(√(2/π)(x + 0.044715x³)))."""
    if approximate == "tanh":
        inner = (x + KAPPA * x * x * x) * SQRT_2_OVER_PI
        return 0.5 * x * (1 + inner.tanh())
    return 0.5 * x * (1 + ops.erf(x * SQRT_HALF))


# ----- the public entry -------------------------------------------------------------------
def gelu(input, approximate="none", *, impl=None):
    r"""GELU :math:`x\,\Phi(x) = \tfrac12 x (1 + \mathrm{erf}(x/\sqrt2))`; with
    ``approximate="tanh"``, GPT-2's :math:`\tfrac12 x (1 + \tanh(\sqrt{2/\pi}(x + 0.044715 x^3)))`.

    ``impl="fused"`` is one node saving only x; ``"composite"`` the graph of primitives;
    None follows ``mg.norm_impl`` (fused by default) and so a model's ``set_impl``.

    Example:
        >>> F.gelu(mg.tensor([-1.0, 0.0, 1.0]))           # [-0.1587, 0, 0.8413]
    """
    arguments.check_tensor("gelu", "x", input)
    if approximate not in APPROXIMATIONS:
        raise ArgumentError(f"gelu: approximate must be 'none' or 'tanh', got "
                            f"{approximate!r}")
    impl = arguments.resolve_impl("gelu", impl)
    if impl == "composite":
        with op_group("gelu"):
            return composite_gelu(input, approximate)
    return Gelu.apply(input, approximate=approximate)


# ----- the spec ---------------------------------------------------------------------------
GELU = Twin(name="gelu", title="GELU", function=gelu, composite=composite_gelu, fused=Gelu,
            inputs=(Input("x", "x"),),
            call=lambda f, given, impl, **options: f(given["x"], impl=impl, **options),
            options=(Option("approximate", "none"),),
            torch=lambda tF, given, approximate: tF.gelu(given["x"], approximate=approximate))

"""The op table: the elementwise ops and reductions that the engine tests loop over, each
once, with its PyTorch counterpart and its input domain.

    from op_table import BINARY, REDUCTIONS, UNARY

``tests/engine/test_ops.py`` compares each with PyTorch in float64 (value and every
gradient) and runs ``mg.gradcheck``; ``test_fuzz.py`` draws them as program steps;
``test_bfloat16.py`` and ``test_zero_dim.py`` run them in bfloat16 and on 0-d tensors.
A new op is one row here (CONTRIBUTING.md, "Adding a primitive op").
"""

import dataclasses

import pytest

import microgradnorm as mg
import microgradnorm.functional as F

torch = pytest.importorskip("torch")


@dataclasses.dataclass(frozen=True)
class Op:
    name: str
    ours: object                 # the call on microgradnorm Tensors
    theirs: object = None        # the call on torch tensors; None: the same expression
    domain: str = "real"         # "real", "bounded" (kept small in long programs), "positive"
    ties: bool = False           # the gradient at equal values (or at 0) is a convention

    @property
    def torch(self):
        return self.theirs or self.ours

    def guard(self, t):
        """``t`` (any real values) mapped into the domain, for programs of ops, where an
        input is whatever the previous step made; a binary op guards its second operand."""
        if self.domain == "positive":
            return t * t + 0.5
        if self.domain == "bounded":
            return t.tanh()
        return t


def _table(*ops):
    return {op.name: op for op in ops}


UNARY = _table(
    Op("neg", lambda t: -t),
    Op("exp", lambda t: t.exp(), domain="bounded"),
    Op("log", lambda t: t.log(), domain="positive"),
    Op("sqrt", lambda t: t.sqrt(), domain="positive"),
    Op("rsqrt", lambda t: t.rsqrt(), domain="positive"),
    Op("tanh", lambda t: t.tanh()),
    Op("sigmoid", F.sigmoid, torch.sigmoid),
    Op("relu", lambda t: t.relu(), ties=True),
    Op("abs", lambda t: t.abs(), ties=True),
    Op("pow_2", lambda t: t ** 2),
    Op("pow_3", lambda t: t ** 3),
    Op("pow_0.5", lambda t: t ** 0.5, domain="positive"),
    Op("pow_-1", lambda t: t ** -1, domain="positive"),
    Op("ops.pow_3", lambda t: mg.ops.pow(t, 3), lambda t: torch.pow(t, 3)),
    Op("pow_base_2", lambda t: mg.pow(2.0, t), lambda t: torch.pow(2.0, t), domain="bounded"),
    Op("gelu_tanh", lambda t: F.gelu(t, "tanh"),
       lambda t: torch.nn.functional.gelu(t, approximate="tanh")),
    Op("softmax", lambda t: F.softmax(t, -1), lambda t: torch.softmax(t, -1)),
)

# The second operand of div is the one kept away from 0 ("positive" applies to it).
BINARY = _table(
    Op("add", lambda a, b: a + b),
    Op("sub", lambda a, b: a - b),
    Op("mul", lambda a, b: a * b),
    Op("div", lambda a, b: a / b, domain="positive"),
    Op("maximum", mg.maximum, torch.maximum, ties=True),
)


def _torch_dim(axis, t):
    return tuple(range(t.ndim)) if axis is None else axis


# (t, axis, keepdims): axis None, an int or a tuple
REDUCTIONS = _table(
    Op("sum", lambda t, axis, keep: t.sum(axis=axis, keepdims=keep),
       lambda t, axis, keep: torch.sum(t, dim=_torch_dim(axis, t), keepdim=keep)),
    Op("mean", lambda t, axis, keep: t.mean(axis=axis, keepdims=keep),
       lambda t, axis, keep: torch.mean(t, dim=_torch_dim(axis, t), keepdim=keep)),
    # values only over any dims: amax (x.max(dim) is (values, indices), tests/engine/
    # test_result_types.py)
    Op("max", lambda t, axis, keep: t.amax(axis=axis, keepdims=keep),
       lambda t, axis, keep: torch.amax(t, dim=_torch_dim(axis, t), keepdim=keep), ties=True),
)

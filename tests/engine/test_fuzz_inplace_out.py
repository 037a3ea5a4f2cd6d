"""Writes against PyTorch, drawn: the in-place methods over drawn dtypes, shapes and operands
(values, dtypes, shapes, the version counter, the exception classes: the dtype rule, a self
that would have to grow, integer and bool self, 0-d and empty self); the version counter
through views, ``detach()`` and ``.data``; in-place ops on leaves, views of leaves, expanded
tensors, saved tensors, views of recorded tensors (the gradient through the base); the shape
changes in place; and ``out=`` across the top-level functions that take it (the dtype rules,
the resizing and its warning, autograd's refusal, tuples of outs, an ``out`` that aliases an
input). Each case runs in both libraries and compares."""

import contextlib
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import microgradnorm as mg  # noqa: E402

INT_KINDS = ("int64", "int32", "uint8")


def outcome(fn):
    """("ok", value, warned) or ("raise", exception class, message)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
        return "ok", value, bool(caught)
    except Exception as error:          # noqa: BLE001  (compared with torch's below)
        return "raise", type(error), str(error)


def plain(value):
    """Tensors as (dtype name, shape, float64 array); tuples elementwise."""
    if isinstance(value, (tuple, list)):
        return tuple(plain(v) for v in value)
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        value = value.detach()
        name = str(value.dtype).split(".")[-1]
        if isinstance(value, torch.Tensor) and value.dtype == torch.bfloat16:
            value = value.float()
        array = np.asarray(value.numpy())
        return name, tuple(value.shape), array.astype(np.complex128 if array.dtype.kind == "c"
                                                     else np.float64)
    return value


def assert_close(ours, theirs, rtol):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            if isinstance(b, np.ndarray):
                assert a.shape == b.shape, (a, b)
                np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True)
            else:
                assert_close(a, b, rtol)
    else:
        assert ours == theirs, (ours, theirs)


def same(run, rtol=1e-5, message=None, warns=True):
    """Run ``run(lib)`` in both libraries: the same values (dtypes, shapes, versions), the
    same warning or none (``warns``: compared; torch gives some once a process), or an
    exception of torch's class (``message``: a phrase both messages hold)."""
    theirs = outcome(lambda: plain(run(torch)))
    ours = outcome(lambda: plain(run(mg)))
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "raise":
        assert issubclass(ours[1], theirs[1]), (ours, theirs)
        if message:
            assert message in ours[2] and message in theirs[2], (ours[2], theirs[2])
        return
    assert_close(ours[1], theirs[1], rtol)
    assert ours[2] == theirs[2] or not warns, ("warned", ours[2], theirs[2])


def draw(rng, shape, dtype):
    a = rng.standard_normal(shape) * 3
    if dtype == "bool":
        return a > 0
    if dtype in INT_KINDS:
        return np.abs(a).astype(dtype) + (1 if dtype == "uint8" else 0)
    return a.astype(np.float32 if dtype == "float16" else dtype)


def make(lib, array, dtype):
    t = lib.tensor(array.copy())
    return t.to(lib.float16) if dtype == "float16" else t


# ----- in-place methods: drawn self, operand, dtypes and shapes -----------------------------
UNARY = ("zero_", "exp_", "sqrt_", "neg_", "abs_", "sigmoid_", "tanh_", "relu_", "floor_",
         "round_", "sign_", "log_", "reciprocal_", "square_", "trunc_", "frac_",
         "nan_to_num_")
BINARY = ("add_", "sub_", "mul_", "div_", "pow_", "atan2_", "fmod_", "remainder_", "hypot_",
          "floor_divide_", "bitwise_and_", "logical_and_", "eq_", "lt_", "copy_",
          "maximum")
OTHER = ("clamp_", "clip_", "lerp_", "addcmul_", "addcdiv_", "masked_fill_", "fill_",
         "div_rounding")
DTYPES = ("float32", "float64", "int64", "int32", "bool", "uint8", "float16")
SHAPES = ((), (3,), (2, 3), (0,), (1, 3), (2, 1), (0, 3))


def inplace_call(op, lib, x, other, scalar, kind, mode):
    if op in UNARY:
        return getattr(x, op)()
    if op == "fill_":
        return x.fill_(other if kind and other.ndim == 0 or kind == 3 else scalar)
    if op == "masked_fill_":
        return x.masked_fill_(other > 0 if kind else x > 0, scalar)
    if op == "lerp_":
        return x.lerp_(other if kind else x, 0.3 if kind < 2 else other)
    if op in ("addcmul_", "addcdiv_"):
        return getattr(x, op)(other if kind else x, other if kind else x, value=scalar)
    if op in ("clamp_", "clip_"):
        return getattr(x, op)(min=other if kind else -1, max=scalar if kind == 2 else None)
    if op == "maximum":                     # an out-of-place op with self as out
        return lib.maximum(x, other if kind else x, out=x)
    if op == "div_rounding":
        return x.div_(other if kind else scalar, rounding_mode=mode)
    return getattr(x, op)(other if kind else scalar)


@pytest.mark.parametrize("seed", range(8))
def test_drawn_inplace_methods_match_torch(seed):
    rng = np.random.default_rng(seed)
    ops = UNARY + BINARY + OTHER
    for _ in range(70):
        op = ops[rng.integers(len(ops))]
        self_dtype, other_dtype = DTYPES[rng.integers(len(DTYPES))], DTYPES[rng.integers(7)]
        a = draw(rng, SHAPES[rng.integers(len(SHAPES))], self_dtype)
        b = draw(rng, SHAPES[rng.integers(len(SHAPES))], other_dtype)
        kind, scalar = int(rng.integers(4)), (2, 0.5, True, -1)[rng.integers(4)]
        mode = (None, "floor", "trunc")[rng.integers(3)]

        def run(lib, op=op, a=a, b=b, kind=kind, scalar=scalar, mode=mode,
                dtypes=(self_dtype, other_dtype)):
            x = make(lib, a, dtypes[0])
            view = x[...]                           # a view shares the counter
            result = inplace_call(op, lib, x, make(lib, b, dtypes[1]), scalar, kind, mode)
            assert result is x
            return x, x._version, view._version
        same(run, rtol=2e-3)


@pytest.mark.parametrize("case", [
    ("int self, float number", lambda lib: lib.ones(3, dtype=lib.int64).add_(1.5)),
    ("int self, float tensor", lambda lib: lib.ones(3, dtype=lib.int64).mul_(lib.ones(3))),
    ("bool self, int number", lambda lib: lib.ones(3, dtype=lib.bool).add_(1)),
    ("int self, true division", lambda lib: lib.tensor([5, -5, 7]).div_(2)),
    ("int self, float power", lambda lib: lib.tensor([5, -5, 7]).pow_(0.5)),
    ("complex into real", lambda lib: lib.zeros(2).add_(lib.tensor([1j, 2j]))),
])
def test_a_result_type_self_cannot_hold_is_torchs_runtime_error(case):
    same(case[1], message="can't be cast to the desired output type")


@pytest.mark.parametrize("case", [
    lambda lib: lib.ones(3).add_(lib.ones(2, 3)),
    lambda lib: lib.tensor(1.0).add_(lib.ones(1)),
    lambda lib: lib.zeros(0).add_(lib.ones(2, 0)),
    lambda lib: lib.zeros(3).masked_fill_(lib.ones(2, 3, dtype=lib.bool), 1),
    lambda lib: lib.zeros(3).copy_(lib.ones(2, 3)),
    lambda lib: lib.zeros(3).fill_(lib.ones(1)),
    lambda lib: lib.zeros(0, 3).fill_(lib.ones(0, 3)),
])
def test_a_self_that_would_have_to_grow_is_torchs_runtime_error(case):
    same(case)


@pytest.mark.parametrize("case", [
    lambda lib: lib.ones(2).add_(1, alpha=True),
    lambda lib: lib.ones(2).sub_(lib.ones(2), alpha=True),
    lambda lib: lib.ones(2).add_(lib.ones(2), alpha=False),
    lambda lib: lib.ones(2, dtype=lib.bool).add_(lib.ones(2, dtype=lib.bool), alpha=True),
    lambda lib: lib.ones(2, dtype=lib.int64).add_(lib.ones(2, dtype=lib.int64), alpha=0.5),
    lambda lib: lib.ones(2).add_(lib.ones(2), alpha=2),
    lambda lib: lib.ones(2).sub_(lib.ones(2), alpha=0.5),
])
def test_alpha_of_add_and_sub_in_place_is_checked_as_torchs(case):
    same(case)


@pytest.mark.parametrize("name", ["index_add", "scatter", "scatter_value", "scatter_add",
                                  "scatter_reduce_add", "scatter_reduce_amax",
                                  "scatter_reduce_mean", "scatter_reduce_int_mean",
                                  "scatter_float64_src", "scatter_add_float64_src",
                                  "index_add_float_alpha_into_int", "index_add_float64_src",
                                  "index_add_0d_self", "index_add_0d_source",
                                  "index_copy_more_dims"])
def test_index_writes_in_place_match_torch(name):
    def run(lib):
        index = lib.tensor([[0, 0], [2, 3]])
        src = lib.arange(4.0).reshape(2, 2)
        x = lib.ones(3, 4, dtype=lib.int64 if "int" in name else lib.float32)
        if name == "index_add":
            x.index_add_(0, lib.tensor([0, 2, 0]), lib.ones(3, 4), alpha=2)
        elif name == "scatter":
            x.scatter_(1, index, src)
        elif name == "scatter_value":
            x.scatter_(1, index, 2.5)
        elif name == "scatter_add":
            x.scatter_add_(1, index, src)
        elif name == "scatter_reduce_int_mean":
            x.scatter_reduce_(1, index, lib.arange(4).reshape(2, 2), "mean")
        elif name.startswith("scatter_reduce"):
            x.scatter_reduce_(1, index, src, name.split("_")[-1], include_self=False)
        elif name == "scatter_float64_src":
            x.scatter_(1, index, src.double())
        elif name == "scatter_add_float64_src":
            x.scatter_add_(1, index, src.double())
        elif name == "index_add_float_alpha_into_int":
            x.index_add_(0, lib.tensor([0, 2]), lib.ones(2, 4, dtype=lib.int64), alpha=2.5)
        elif name == "index_add_0d_self":
            x = lib.tensor(1.0)
            x.index_add_(0, lib.tensor([0]), lib.tensor([5.0]))
        elif name == "index_add_0d_source":
            x.index_add_(0, lib.tensor(0), lib.tensor(5.0))
        elif name == "index_copy_more_dims":
            x[0].index_copy_(0, lib.tensor([1]), lib.ones(1, 1))
        else:
            x.index_add_(0, lib.tensor([0, 2]), lib.ones(2, 4, dtype=lib.float64))
        return x, x._version
    same(run)


# ----- the version counter: views, detach(), .data, shape changes, out= ----------------------
def _versions(*tensors):
    return tuple(t._version for t in tensors)


def _setitem(x, index, value):
    x[index] = value


def _no_grad(lib, write):
    with lib.no_grad():
        return write()


VERSION_CASES = {
    "view and detach share": lambda lib: (
        lambda x: (lambda v, d: (x.add_(1), v.mul_(2), d.zero_(), _versions(x, v, d), x))(
            x[1:], x.detach()))(lib.zeros(3)),
    "setitem counts": lambda lib: (lambda x: (_setitem(x, 0, 1),
                                              _setitem(x, slice(1, None), lib.ones(2)),
                                              _versions(x), x))(lib.zeros(3)),
    "chain of views": lambda lib: (lambda x: (lambda v: (v.add_(1), _versions(x, v), x))(
        x[1:].t()[0]))(lib.zeros(3, 4)),
    "view(dtype)": lambda lib: (lambda x: (lambda v: (v.add_(1), _versions(x, v), x))(
        x.view(lib.int32)))(lib.zeros(4)),
    "T and mT": lambda lib: (lambda x: (x.T.add_(lib.arange(2.0)), x.mT[0].add_(1),
                                        _versions(x), x))(lib.zeros(2, 3)),
    "H": lambda lib: (lambda x: (x.H.add_(1), _versions(x), x))(lib.zeros(2, 3)),
    "real and imag": lambda lib: (lambda x: (x.real.add_(1), x.imag.fill_(2), _versions(x),
                                             x))(lib.zeros(3, dtype=lib.complex64)),
    "diagonal": lambda lib: (lambda x: (x.diagonal().add_(1), _versions(x), x))(
        lib.zeros(3, 3)),
    "unfold": lambda lib: (lambda x: (x.unfold(0, 2, 2).mul_(3), _versions(x), x))(
        lib.arange(6.0)),
    "t_ and friends": lambda lib: (lambda x: (x.t_(), x.unsqueeze_(0), x.squeeze_(),
                                              x.transpose_(0, 1), _versions(x),
                                              tuple(x.shape)))(lib.zeros(2, 3)),
    "squeeze_ dims": lambda lib: (lambda x: (x.squeeze_(0), x.squeeze_((0, 1)),
                                             _versions(x), tuple(x.shape)))(
        lib.zeros(1, 3, 1)),
    "resize_": lambda lib: (lambda x: (x.resize_(6), _versions(x), tuple(x.shape)))(
        lib.zeros(2, 3)),
    "copy_ broadcast and cast": lambda lib: (lambda x: (
        x.copy_(lib.tensor([1.7, -2.5, 3.2])), _versions(x), x))(
        lib.zeros(2, 3, dtype=lib.int32)),
    "copy_ complex into real": lambda lib: (lambda x: (x.copy_(lib.tensor([1 + 2j, 3j])),
                                                       x))(lib.zeros(2)),
    "in place under no_grad": lambda lib: (lambda x: (
        _no_grad(lib, lambda: x.add_(1)), _versions(x), x.requires_grad, x.grad_fn is None))(
        lib.zeros(3, requires_grad=True)),
    ".data bumps not the tensor's": lambda lib: (lambda x: (lambda d: (
        d.add_(1), _versions(x, d), x))(x.data))(lib.ones(3, requires_grad=True)),
    "detach() bumps the tensor's": lambda lib: (lambda x: (x.detach().add_(1),
                                                           _versions(x), x))(
        lib.ones(3, requires_grad=True)),
    "out= counts one": lambda lib: (lambda x: (lib.add(lib.ones(3), 1, out=x),
                                               _versions(x), x))(lib.zeros(3)),
    "out= resized counts one": lambda lib: (lambda x: (lib.exp(lib.ones(3), out=x),
                                                       _versions(x), x))(lib.zeros(0)),
    "empty self": lambda lib: (lambda x: (x.add_(lib.ones(3)), x.exp_(), _versions(x), x))(
        lib.zeros(0, 3)),
    "0-d self": lambda lib: (lambda x: (x.add_(lib.tensor(2.0)), x.mul_(3), _versions(x),
                                        x))(lib.tensor(1.0)),
    "set_": lambda lib: (lambda x, y: (x.set_(y), y.add_(1), _versions(x, y), x))(
        lib.arange(3.0), lib.zeros(2)),
}


@pytest.mark.parametrize("name", sorted(VERSION_CASES))
def test_version_counters_match_torch(name):
    same(VERSION_CASES[name], warns="complex" not in name)     # (torch's warns once)


# ----- in place and autograd ------------------------------------------------------------------
def _grads(*tensors):
    return tuple(t.grad for t in tensors)


AUTOGRAD_CASES = {
    "leaf": lambda lib: lib.ones(3, requires_grad=True).add_(1),
    "view of a leaf": lambda lib: lib.ones(3, requires_grad=True)[1:].add_(1),
    "expanded": lambda lib: lib.ones(1, 3).expand(2, 3).add_(1),
    "expanded, recorded": lambda lib: (lib.ones(1, 3, requires_grad=True) * 1).expand(2, 3)
    .mul_(2),
    "saved then written": lambda lib: (lambda x: (lambda y: (lambda z: (
        y.add_(1), z.sum().backward()))(y * y))(x * 2))(lib.ones(3, requires_grad=True)),
    "saved output then written": lambda lib: (lambda x: (lambda y: (
        y.add_(1), y.sum().backward()))(x.exp()))(lib.ones(3, requires_grad=True)),
    "saved, written under no_grad": lambda lib: (lambda x: (lambda y: (
        _no_grad(lib, lambda: y.mul_(2)), y.sum().backward()))(x.exp()))(
        lib.ones(3, requires_grad=True)),
    "saved, written through detach()": lambda lib: (lambda x: (lambda y: (
        y.detach().mul_(2), y.sum().backward()))(x.exp()))(lib.ones(3, requires_grad=True)),
    "saved, written through .data": lambda lib: (lambda x: (lambda y: (
        y.data.mul_(2), y.sum().backward(), x.grad))(x.exp()))(
        lib.ones(3, requires_grad=True)),
    "unsaved then written": lambda lib: (lambda x: (lambda y: (lambda z: (
        y.mul_(3), z.sum().backward(), x.grad))(y + 2))(x + 1))(
        lib.ones(3, requires_grad=True)),
    "resize_ of a leaf": lambda lib: lib.ones(3, requires_grad=True).resize_(4),
    "resize_ of a recorded tensor": lambda lib: (lib.ones(3, requires_grad=True) * 1)
    .resize_(4),
    "t_ of a leaf": lambda lib: lib.zeros(2, 3, requires_grad=True).t_(),
    "t_ of a view of a leaf": lambda lib: lib.zeros(2, 3, requires_grad=True)[1:].t_(),
    "unsqueeze_ of a view of a leaf": lambda lib: lib.zeros(3, requires_grad=True)[1:]
    .unsqueeze_(0),
    "squeeze_ of a view of a leaf": lambda lib: lib.zeros(3, 1, requires_grad=True)[:, 0]
    .squeeze_(),
}


@pytest.mark.parametrize("name", sorted(AUTOGRAD_CASES))
def test_inplace_autograd_errors_match_torch(name):
    same(AUTOGRAD_CASES[name])


def test_the_saved_tensor_error_names_the_versions():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x.exp()
        y.add_(1)
        y.sum().backward()
    same(run, message="modified by an inplace operation")
    with pytest.raises(RuntimeError, match="version 1; expected version 0"):
        run(mg)


GRADIENT_CASES = {
    "slice of a transposed slice": lambda lib, x: (lambda y: (
        y[1:].t()[0].mul_(lib.arange(3.0)), y))(x * 2),
    "column": lambda lib, x: (lambda y: (y[:, 1].mul_(5), y * y))(x * 1),
    "diagonal": lambda lib, x: (lambda y: (y.diagonal().mul_(3), y * y))(x * 1),
    "unfold": lambda lib, x: (lambda y: (y.reshape(-1).unfold(0, 2, 2).mul_(3), y * y))(
        x * 1),
    "view then base written": lambda lib, x: (lambda y: (lambda v: (
        y.mul_(lib.arange(12.0).reshape(3, 4)), v * v))(y.view(4, 3)))(x * 2),
    "view of a view": lambda lib, x: (lambda y: (y.view(4, 3)[0].mul_(3), y * y))(x * 2),
    "t_ of a recorded tensor": lambda lib, x: (lambda y: (y.t_(), y * lib.arange(3.0)))(
        x * 1),
    "pow_": lambda lib, x: (lambda y: (y.pow_(2), y))(x * 1),
    "exp_": lambda lib, x: (lambda y: (y.exp_(), y))(x * 1),
    "clamp_": lambda lib, x: (lambda y: (y.clamp_(0.5, 2.0), y))(x * 1),
    "mul_ by itself": lambda lib, x: (lambda y: (y.mul_(y), y))(x * 1),
    "lerp_": lambda lib, x: (lambda y: (y.lerp_(x.exp(), 0.3), y * y))(x * 1),
    "div_ floor": lambda lib, x: (lambda y: (y.div_(0.7, rounding_mode="floor"), y * y))(
        x * 1),
    "masked_fill_": lambda lib, x: (lambda y: (y.masked_fill_(x > 1, 0.5), y * y))(x * 1),
    "copy_ of another graph": lambda lib, x: (lambda y: (y.copy_(x.sin() * 2), y * y))(
        x * 1),
    "copy_ of float64 values": lambda lib, x: (lambda y: (y.copy_(x.double() * 3), y * y))(
        x * 1),
    "index_add_": lambda lib, x: (lambda y: (y.index_add_(0, lib.tensor([0, 2, 0]), x * 2),
                                             y * y))(x * 1),
    "scatter_add_": lambda lib, x: (lambda y: (
        y.scatter_add_(1, lib.tensor([[0, 1], [2, 3], [0, 0]]), x[:, :2] * 3), y * y))(
        x * 1),
    "addcmul_": lambda lib, x: (lambda y: (y.addcmul_(x, x.exp(), value=0.5), y))(x * 2),
    "no_grad write keeps the graph": lambda lib, x: (lambda y: (
        _no_grad(lib, lambda: y.add_(1)), y * 2))(x * 1),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_through_inplace_writes_match_torch(name):
    values = np.random.default_rng(len(name)).random((3, 4)) + 0.5

    def run(lib):
        x = lib.tensor(values.copy(), dtype=lib.float32, requires_grad=True)
        _, loss = GRADIENT_CASES[name](lib, x)
        loss.sum().backward()
        return loss, x.grad
    same(run)


# views (not of split/unbind: their outputs are plain views here), then an in-place op
VIEWS = (lambda v: v[1:], lambda v: v.t() if v.dim() == 2 else v,
         lambda v: v[:, 1] if v.dim() == 2 else v[1:],
         lambda v: v.diagonal() if v.dim() == 2 else v, lambda v: v.narrow(0, 0, 1),
         lambda v: v.unsqueeze(0), lambda v: v[..., ::2],
         lambda v: v.view(-1) if v.is_contiguous() else v,
         lambda v: v.select(0, 0) if v.dim() == 2 else v, lambda v: v.squeeze(),
         lambda v: v.mT if v.dim() == 2 else v, lambda v: v.real, lambda v: v.expand_as(v),
         lambda v: v.movedim(0, -1))
WRITES = (lambda v, lib, o: v.mul_(2), lambda v, lib, o: v.add_(o.sum()),
          lambda v, lib, o: v.exp_(), lambda v, lib, o: v.pow_(2),
          lambda v, lib, o: v.copy_(o.sum() * lib.ones(v.shape)),
          lambda v, lib, o: v.clamp_(0.5, 1.5), lambda v, lib, o: v.zero_(),
          lambda v, lib, o: v.fill_(3.0), lambda v, lib, o: v.sigmoid_(),
          lambda v, lib, o: v.masked_fill_(v > 1, 0.0),
          lambda v, lib, o: v.lerp_(o.mean() * lib.ones(v.shape), 0.5),
          lambda v, lib, o: v.div_(o.sum()), lambda v, lib, o: v.sub_(v),
          lambda v, lib, o: v.t_() if v.dim() == 2 else v.unsqueeze_(0),
          lambda v, lib, o: v.squeeze_(), lambda v, lib, o: v.unsqueeze_(0))


@pytest.mark.parametrize("seed", range(4))
def test_drawn_writes_through_chains_of_views_match_torch(seed):
    rng = np.random.default_rng(300 + seed)
    for _ in range(40):
        chain = rng.integers(len(VIEWS), size=rng.integers(1, 4)).tolist()
        write = int(rng.integers(len(WRITES)))
        kind = ("recorded", "leaf", "constant", "under no_grad")[rng.integers(4)]
        values = rng.random((3, 4)) + 0.5

        def run(lib, chain=chain, write=write, kind=kind, values=values):
            x = lib.tensor(values.copy(), dtype=lib.float32, requires_grad=kind != "constant")
            other = lib.tensor(values[0].copy(), dtype=lib.float32, requires_grad=True)
            y = x if kind in ("leaf", "constant") else x * 1
            view = y
            for index in chain:
                view = VIEWS[index](view)
            with lib.no_grad() if kind == "under no_grad" else contextlib.nullcontext():
                WRITES[write](view, lib, other)
            result = (y, view, y._version, view._version)
            if y.requires_grad:
                (y * y).sum().backward()
                result += (x.grad, other.grad)
            return result
        same(run, rtol=1e-4)


# ----- out= --------------------------------------------------------------------------------
OUT_CALLS = {
    "exp": lambda L, x: L.exp(x), "sqrt": lambda L, x: L.sqrt(x),
    "abs": lambda L, x: L.abs(x), "floor": lambda L, x: L.floor(x),
    "logical_not": lambda L, x: L.logical_not(x), "sign": lambda L, x: L.sign(x),
    "maximum": lambda L, x: L.maximum(x, x.flip(0)), "pow": lambda L, x: L.pow(x, x),
    "atan2": lambda L, x: L.atan2(x, x + 1), "eq": lambda L, x: L.eq(x, x.flip(0)),
    "lt": lambda L, x: L.lt(x, 0.5), "floor_divide": lambda L, x: L.floor_divide(x, 0.3),
    "lerp": lambda L, x: L.lerp(x, x * 2, 0.5), "addcmul": lambda L, x: L.addcmul(x, x, x),
    "add": lambda L, x: L.add(x, 1, alpha=2), "mul": lambda L, x: L.mul(x, x),
    "sum": lambda L, x: L.sum(x, 1), "sum keepdim": lambda L, x: L.sum(x, 0, keepdim=True),
    "sum all": lambda L, x: L.sum(x), "mean": lambda L, x: L.mean(x, 1),
    "prod": lambda L, x: L.prod(x, 1), "cumsum": lambda L, x: L.cumsum(x, 1),
    "amax": lambda L, x: L.amax(x, 1), "argmax": lambda L, x: L.argmax(x, 1),
    "logsumexp": lambda L, x: L.logsumexp(x, 1), "any": lambda L, x: L.any(x > 0.5),
    "matmul": lambda L, x: L.matmul(x, x.t()), "mm": lambda L, x: L.mm(x.t(), x),
    "bmm": lambda L, x: L.bmm(x[None], x.t()[None]), "mv": lambda L, x: L.mv(x, x[0]),
    "dot": lambda L, x: L.dot(x[0], x[1]), "outer": lambda L, x: L.outer(x[0], x[1]),
    "cat": lambda L, x: L.cat([x, x], 1), "stack": lambda L, x: L.stack([x, x]),
    "clamp": lambda L, x: L.clamp(x, 0.3, 0.8), "clamp tensor": lambda L, x: L.clamp(
        x, min=x.flip(0)), "where": lambda L, x: L.where(x > 0.5, x, x.flip(0)),
    "max dim": lambda L, x: L.max(x, 1), "min keepdim": lambda L, x: L.min(x, 0, True),
    "max all": lambda L, x: L.max(x), "sort": lambda L, x: L.sort(x, 1),
    "topk": lambda L, x: L.topk(x, 2), "kthvalue": lambda L, x: L.kthvalue(x, 2),
    "cummax": lambda L, x: L.cummax(x, 1), "tril": lambda L, x: L.tril(x),
    "index_select": lambda L, x: L.index_select(x, 1, L.tensor([2, 0])),
    "gather": lambda L, x: L.gather(x, 1, L.tensor([[2, 0], [1, 1]])),
    "linalg.inv": lambda L, x: L.linalg.inv(x[:, :2] + L.eye(2)),
    "linalg.vector_norm": lambda L, x: L.linalg.vector_norm(x, dim=1),
    "linalg.qr": lambda L, x: L.linalg.qr(x),
    "linalg.solve": lambda L, x: L.linalg.solve(x[:, :2] + L.eye(2), x[:, 2]),
    "linalg.eigh": lambda L, x: L.linalg.eigh(x[:, :2] @ x[:, :2].t()),
    "linalg.pinv": lambda L, x: L.linalg.pinv(x),
}
OUT_DTYPES = ("float32", "float64", "float16", "int64", "int32", "bool")
NOT_AN_OUT = {"eye", "tensor", "flip", "t"}


class _WithOut:
    """``lib`` whose functions (and ``linalg``'s) are called with ``out=out``."""

    def __init__(self, lib, out, namespace=None):
        self.lib, self.out, self.namespace = lib, out, namespace or lib

    def __getattr__(self, name):
        function = getattr(self.namespace, name)
        if name == "linalg":
            return _WithOut(self.lib, self.out, function)
        if name in NOT_AN_OUT:
            return function
        return lambda *args, **kwargs: function(*args, **kwargs, out=self.out)


def out_case(lib, name, values, out_dtypes, shape_kind, requires_grad, no_grad):
    x = lib.tensor(values.copy())
    plain_result = OUT_CALLS[name](lib, x)
    results = plain_result if isinstance(plain_result, tuple) else (plain_result,)
    outs = []
    for i, result in enumerate(results):
        dtype = (getattr(lib, out_dtypes[i]) if out_dtypes[i] != "same" else result.dtype)
        shape = {"empty": (0,), "right": tuple(result.shape), "wrong": (5,)}[shape_kind]
        outs.append(lib.zeros(shape, dtype=dtype))
    out = tuple(outs) if isinstance(plain_result, tuple) else outs[0]
    x.requires_grad_(requires_grad)
    with lib.no_grad() if no_grad else contextlib.nullcontext():
        returned = OUT_CALLS[name](_WithOut(lib, out), x)
    assert returned is out or all(r is o for r, o in zip(returned, out))
    return out, tuple(o._version for o in outs)


@pytest.mark.parametrize("seed", range(6))
def test_drawn_out_arguments_match_torch(seed):
    rng = np.random.default_rng(100 + seed)
    names = sorted(OUT_CALLS)
    values = (rng.random((2, 3)) + 0.2).astype(np.float32)
    for _ in range(50):
        name = names[rng.integers(len(names))]
        choices = ("same", "same", *OUT_DTYPES)             # the result's dtype, or drawn
        out_dtypes = (choices[rng.integers(len(choices))],
                      ("same", "int64", "float64")[rng.integers(3)])
        shape_kind = ("empty", "right", "wrong")[rng.integers(3)]
        requires_grad = bool(rng.random() < 0.2)
        no_grad = requires_grad and bool(rng.random() < 0.5)
        drawn = (name, values, out_dtypes, shape_kind, requires_grad, no_grad)
        same(lambda lib, drawn=drawn: out_case(lib, *drawn), rtol=2e-3)


@pytest.mark.parametrize("case", [
    ("exp into long", lambda L, x: L.exp(x, out=L.empty(0, dtype=L.int64)),
     "can't be cast to the desired output type"),
    ("mean into long", lambda L, x: L.mean(x, 1, out=L.empty(0, dtype=L.int64)),
     "can't be cast to the desired output type"),
    ("cat into long", lambda L, x: L.cat([x, x], out=L.empty(0, dtype=L.int64)), None),
    ("matmul into double", lambda L, x: L.matmul(x, x.t(), out=L.empty(0, dtype=L.float64)),
     "Expected out tensor to have dtype float, but got double instead"),
    ("max indices int32", lambda L, x: L.max(x, 1, out=(L.empty(0),
                                                         L.empty(0, dtype=L.int32))),
     "Expected out tensor to have dtype long int, but got int instead"),
    ("sort values double", lambda L, x: L.sort(x, out=(L.empty(0, dtype=L.float64),
                                                        L.empty(0, dtype=L.int64))), None),
    ("requires grad", lambda L, x: L.exp(x.requires_grad_(), out=L.empty(0)),
     "functions with out=... arguments don't support automatic differentiation"),
    ("out requires grad", lambda L, x: L.matmul(x, x.t(), out=L.empty(2, 2,
                                                                     requires_grad=True)),
     "functions with out=... arguments don't support automatic differentiation"),
    ("a comparison with grad", lambda L, x: L.eq(x.requires_grad_(), 1, out=L.empty(0)),
     None),
    ("sum over all", lambda L, x: L.sum(x, out=L.empty(0)), None),
    ("one out for two", lambda L, x: L.max(x, 1, out=L.empty(0)), None),
    ("two outs for one", lambda L, x: L.exp(x, out=(L.empty(0),)), None),
    ("a short tuple", lambda L, x: L.topk(x, 2, out=(L.empty(0),)), None),
    ("not a tensor", lambda L, x: L.exp(x, out=3), None),
    ("a list of outs", lambda L, x: L.max(x, 1, out=[L.empty(0), L.empty(0, dtype=L.int64)]),
     None),
    ("out overlapping the input", lambda L, x: L.exp(x, out=x[0]),
     "refer to a single memory location"),
    ("out the input itself", lambda L, x: (L.exp(x, out=x), x)),
    ("out of the other row", lambda L, x: (L.exp(x[0], out=x[1]), x)),
    ("cat into an input", lambda L, x: L.cat([x, x], out=x), None),
    ("median over all", lambda L, x: L.median(x, out=L.empty(0)), None),
    ("where of a condition alone", lambda L, x: L.where(x > 0.3, out=L.empty(0)), None),
    ("lerp of a number weight into double", lambda L, x: L.lerp(
        x, x * 2, 0.5, out=L.empty(0, dtype=L.float64))),
    ("lerp of a tensor weight into double", lambda L, x: L.lerp(
        x, x * 2, x, out=L.empty(0, dtype=L.float64)), None),
    ("linalg.pinv into double", lambda L, x: L.linalg.pinv(x, out=L.empty(0, dtype=L.float64))),
    ("linalg.matrix_power into double", lambda L, x: L.linalg.matrix_power(
        x[:, :2], 2, out=L.empty(0, dtype=L.float64)), None),
    ("linalg.inv into double", lambda L, x: L.linalg.inv(
        x[:, :2], out=L.empty(0, dtype=L.float64)), None),
    ("linalg.norm with grad", lambda L, x: L.linalg.norm(x.requires_grad_(), out=L.empty(0))),
    ("linalg.det with grad", lambda L, x: L.linalg.det(x[:, :2].detach().requires_grad_(),
                                                       out=L.empty(0)), None),
    ("argmax with grad", lambda L, x: L.argmax(x.requires_grad_(), 1,
                                               out=L.empty(0, dtype=L.int64))),
    ("sum into long with grad", lambda L, x: L.sum(x.requires_grad_(), 1,
                                                   out=L.empty(0, dtype=L.int64)), None),
    ("sum into long", lambda L, x: L.sum(x * 7, 1, out=L.empty(0, dtype=L.int64))),
    ("cumsum into double", lambda L, x: L.cumsum(x, 1, out=L.empty(0, dtype=L.float64))),
    ("an expanded out", lambda L, x: L.exp(x, out=L.zeros(1, 3).expand(2, 3)),
     "refers to a single memory location"),
    ("int into bool", lambda L, x: L.add(L.tensor([1, 2]), 1, out=L.zeros(2, dtype=L.bool)),
     "can't be cast to the desired output type"),
    ("complex into real", lambda L, x: L.exp(L.tensor([1j]), out=L.zeros(0)), None),
    ("real into complex", lambda L, x: L.exp(x, out=L.zeros(0, dtype=L.complex64))),
    ("a comparison into float", lambda L, x: L.lt(x, 0.5, out=L.zeros(0))),
    ("mixed cat into double", lambda L, x: L.cat([x.long(), x], out=L.zeros(0,
                                                                          dtype=L.float64))),
    ("sum into a 0-d out", lambda L, x: L.sum(x, (0, 1), out=L.zeros(()))),
    ("topk's outs counted once", lambda L, x: (lambda a, b: (
        L.topk(x[0], 2, out=(a, b)), a._version, b._version))(L.zeros(2),
                                                              L.zeros(2, dtype=L.int64))),
    ("a strided out", lambda L, x: (lambda o: (L.exp(x[:, :2], out=o), o.stride()))(
        L.empty(2, 3)[:, :2])),
    ("cumsum of a dtype into another", lambda L, x: L.cumsum(
        x, 1, dtype=L.float64, out=L.empty(0)), "Expected out tensor to have dtype double"),
    ("where of a number", lambda L, x: L.where(x > 0.3, x, 0.0, out=L.empty(0)), None),
    ("linalg.matmul into double", lambda L, x: L.linalg.matmul(
        x, x.t(), out=L.empty(0, dtype=L.float64)), "Expected out tensor to have dtype float"),
    ("linalg.solve_ex", lambda L, x: L.linalg.solve_ex(
        x[:, :2] + L.eye(2), x, out=(L.empty(0), L.empty(0, dtype=L.int32)))),
    ("linalg.householder_product into double", lambda L, x: L.linalg.householder_product(
        x.t(), x[0, :2], out=L.empty(0, dtype=L.float64))),
])
def test_out_rules_match_torch(case):
    name, call, *message = case
    values = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3) / 7

    def run(lib):
        return call(lib, lib.tensor(values.copy()))
    same(run, message=message[0] if message else None)


@pytest.mark.parametrize("had", [(0,), (2,), (2, 3), (6,)])
def test_an_out_of_the_wrong_size_is_resized_with_torchs_warning(had):
    def run(lib):
        out = lib.zeros(had)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.matmul(lib.ones(2, 3), lib.ones(3, 4), out=out)
        assert all(w.filename == __file__ for w in caught)      # names the caller's line
        return out, out._version, len(caught)
    same(run)


@pytest.mark.parametrize("name", ["exp", "sum", "cat", "max", "any", "linalg.inv"])
def test_functions_with_out_keep_their_name_signature_and_pickling(name):
    import inspect
    import pickle
    module, _, short = name.rpartition(".")
    ours = getattr(getattr(mg, module) if module else mg, short)
    assert pickle.loads(pickle.dumps(ours)) is ours             # by reference, as torch's
    assert ours.__doc__ == ours.__wrapped__.__doc__ and ours.__name__ == ours.__wrapped__.__name__
    assert "out" in inspect.signature(ours).parameters

"""Corners where this library once differed from torch, each run under both at test time:
``Tensor.grad_dtype``'s cast of a leaf's gradients, a non-reentrant checkpoint's second
unpack, meta tensors beside CPU ones, and the ``explain`` command's negative ``--eps``."""

import pytest

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as torch_checkpoint  # noqa: E402

import microgradnorm as mg  # noqa: E402
from microgradnorm import cli  # noqa: E402
from microgradnorm.utils import checkpoint as mg_checkpoint  # noqa: E402

LIBS = (torch, mg)


def outcome(run):
    """What ``run()`` gives, or the class name of what it raises."""
    try:
        return run()
    except Exception as error:              # noqa: BLE001 (the class is what is compared)
        return type(error).__name__


def same(run):
    theirs, ours = (outcome(lambda lib=L: run(lib)) for L in LIBS)
    assert theirs == ours, (theirs, ours)
    return ours


def dtype_name(dtype):
    return None if dtype is None else str(dtype).rsplit(".", 1)[-1]


# ----- Tensor.grad_dtype ----------------------------------------------------------------------
def leaf(L, dtype="float16", grad_dtype="float32"):
    x = L.tensor([1.0, 2.0, 3.0], dtype=getattr(L, dtype), requires_grad=True)
    if grad_dtype != "unset":
        x.grad_dtype = None if grad_dtype is None else getattr(L, grad_dtype)
    return x


@pytest.mark.parametrize("dtype, grad_dtype", [("float16", "float32"), ("bfloat16", "float32"),
                                               ("float64", "float32"), ("float32", "float16"),
                                               ("float32", "unset"), ("float16", None)])
def test_grad_dtype_casts_each_accumulated_gradient(dtype, grad_dtype):
    def run(L):
        x = leaf(L, dtype, grad_dtype)
        third = L.tensor([1 / 3] * 3, dtype=getattr(L, dtype))
        (x * third).sum().backward()
        first = (dtype_name(x.grad.dtype), x.grad.double().tolist())
        (x * third).sum().backward()                   # accumulated in the grad's dtype
        return first, dtype_name(x.grad.dtype), x.grad.double().tolist()
    same(run)


def test_hooks_and_autograd_grad_see_the_grad_dtype():
    def run(L):
        x, seen = leaf(L), []
        x.register_hook(lambda g: seen.append(("hook", dtype_name(g.dtype))))
        x.register_post_accumulate_grad_hook(
            lambda t: seen.append(("post", dtype_name(t.grad.dtype))))
        (x * 2).sum().backward()
        (g,) = L.autograd.grad((x * 2).sum(), [x])
        return seen, dtype_name(g.dtype)
    assert same(run)[1] == "float32"


@pytest.mark.parametrize("grad_dtype, given", [("unset", "float32"), ("float32", "float32"),
                                               ("float32", "float64"), (None, "float64"),
                                               ("float32", "float16")])
def test_assigning_grad_follows_grad_dtype(grad_dtype, given):
    def run(L):
        x = leaf(L, "float16", grad_dtype)
        x.grad = L.ones(3, dtype=getattr(L, given))
        return dtype_name(x.grad.dtype)
    same(run)


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
def test_grad_dtype_with_a_held_grad_and_on_other_tensors():
    def change_with_grad(L, new):
        x = leaf(L, "float32", "float64")
        x.grad = L.ones(3, dtype=L.float64)
        x.grad_dtype = None if new is None else getattr(L, new)
        (x * 3).sum().backward()
        return dtype_name(x.grad_dtype), dtype_name(x.grad.dtype), x.grad.tolist()

    for new in ("float32", None, "float64"):
        same(lambda L, new=new: change_with_grad(L, new))

    def no_grad_leaf(L):
        x = L.ones(2, dtype=L.float16)
        x.grad_dtype = L.float32                      # recorded before requires_grad
        x.requires_grad_()
        (x * 2).sum().backward()
        return dtype_name(x.grad.dtype)
    same(no_grad_leaf)
    same(lambda L: (L.ones(2, requires_grad=True) * 2).grad_dtype)
    same(lambda L: setattr(L.ones(2, requires_grad=True) * 2, "grad_dtype", None))

    def retained(L):
        y = leaf(L) * 2
        y.retain_grad()
        y.sum().backward()
        return dtype_name(y.grad.dtype)
    same(retained)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")
def test_grad_dtype_under_create_graph():
    def run(L):
        x = leaf(L)
        (x * x).sum().backward(create_graph=True)
        return dtype_name(x.grad.dtype), x.grad.requires_grad
    same(run)


# ----- non-reentrant checkpoint -----------------------------------------------------------------
def checkpointed(L, fn, x):
    C = torch_checkpoint if L is torch else mg_checkpoint
    return C.checkpoint(fn, x, use_reentrant=False)


def saving_function(L, reads):
    class Saving(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            for _ in range(reads):
                (saved,) = ctx.saved_tensors
            return g * saved
    return Saving


@pytest.mark.parametrize("reads", [1, 2])
def test_checkpoint_refuses_a_second_unpack_in_one_backward(reads):
    def run(L):
        x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        fn = saving_function(L, reads)
        checkpointed(L, lambda t: fn.apply(t.sin()).sum(), x).backward()
        return x.grad.tolist()
    out = same(run)
    assert (out == "CheckpointError") == (reads == 2)


@pytest.mark.parametrize("make", ["operand", "zero_d", "cast", "same"])
def test_determinism_check_sees_an_operand_of_another_dtype(make):
    def run(L):
        x = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        kinds = [L.float32, L.float64] if make != "same" else [L.float32, L.float32]

        def fn(t):
            kind = kinds.pop(0)
            if make == "cast":
                return t.to(kind).sin().sum()
            other = L.tensor(2.0, dtype=kind) if make == "zero_d" else L.ones(3, dtype=kind)
            return (t * other).sum()
        checkpointed(L, fn, x).backward()
        return x.grad.tolist()
    out = same(run)
    assert (out == "CheckpointError") == (make != "same")


def test_double_backward_through_a_checkpoint_recomputes_per_backward():
    def run(L):
        calls = []
        x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)

        def fn(t):
            calls.append(1)
            return (t.sin() * t.cos()).exp().sum()
        (g,) = L.autograd.grad(checkpointed(L, fn, x), [x], create_graph=True)
        (g2,) = L.autograd.grad(g.sum(), [x], create_graph=True)
        (g3,) = L.autograd.grad(g2.sum(), [x])
        return len(calls), [round(v, 12) for v in g3.tolist()]
    same(run)


# ----- meta beside CPU ------------------------------------------------------------------------
MIXES = {
    "meta @ cpu": lambda L, m, c: m @ L.ones(3, 4), "mm": lambda L, m, c: L.mm(m, L.ones(3, 4)),
    "linear": lambda L, m, c: L.nn.functional.linear(m, L.ones(4, 3)),
    "dot": lambda L, m, c: L.dot(m[0], c[0]), "mv": lambda L, m, c: L.mv(m, c[0]),
    "add": lambda L, m, c: m + c, "add 0-d": lambda L, m, c: m + L.tensor(2.0),
    "cpu + meta 0-d": lambda L, m, c: c + L.ones((), device="meta"),
    "lt": lambda L, m, c: m < c, "eq": lambda L, m, c: L.eq(m, c), "gt": lambda L, m, c: c > m,
    "lt 0-d": lambda L, m, c: m < L.tensor(1.0), "ne": lambda L, m, c: m != c,
    "lt_": lambda L, m, c: m.clone().lt_(c),
    "where meta cond": lambda L, m, c: L.where(m > 0, c, c),
    "where cpu cond": lambda L, m, c: L.where(c > 0, m, m),
    "where 0-d": lambda L, m, c: L.where(m > 0, m, L.tensor(0.0)),
    "add_ meta": lambda L, m, c: m.clone().add_(c), "add_ cpu": lambda L, m, c: c.clone().add_(m),
    "cat": lambda L, m, c: L.cat([m, c]),
}


@pytest.mark.parametrize("name", list(MIXES))
def test_meta_beside_cpu_as_torch(name):
    def run(L):
        try:
            out = MIXES[name](L, L.ones(2, 3, device="meta"), L.ones(2, 3))
        except RuntimeError:              # ours: a DeviceError, a RuntimeError subclass
            return "RuntimeError"
        return str(out.device), tuple(out.shape)
    same(run)


# ----- explain --eps ----------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_explain_takes_a_negative_eps_as_the_norms_do(capsys):
    x = torch.linspace(-1, 1, 4)
    torch.nn.functional.layer_norm(x, (4,), eps=-1.0)            # torch takes it
    mg.nn.functional.layer_norm(mg.linspace(-1, 1, 4), (4,), eps=-1.0)
    for eps, code in (("-1", 0), ("small", 2)):
        try:
            result = cli.main(["explain", "jacobian", "--dim", "4", f"--eps={eps}", "--no-plot"])
        except SystemExit as exit:                # argparse's refusal
            result = exit.code
        out, err = capsys.readouterr()
        assert (result or 0) == code, err
        if code:
            assert len(err.strip().splitlines()) == 1 and "--eps" in err
        else:
            assert "eps=-1" in out

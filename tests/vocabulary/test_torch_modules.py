"""The torch modules PyTorch files import, against torch on this CPU-only machine:
``mg.testing`` (assert_close's verdicts and messages, make_tensor's draws), ``mg.special``
(values and gradients, the tails, what is left out), ``mg.distributed`` and ``nn.parallel``
(one process, no process group), ``utils.checkpoint`` (values, gradients, dropout masks,
warnings, the memory saved), ``mg.jit``, ``mg.random``, ``mg.cpu``, ``is_nonzero`` and
``pin_memory``."""

import math
import re
import warnings
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as torch_checkpoint

import microgradnorm as mg
from microgradnorm import nn
from microgradnorm.utils.checkpoint import checkpoint, checkpoint_sequential


def outcome(call):
    """(exception class name, message with torch's and our prefixes dropped) or "ok"."""
    try:
        call()
    except Exception as error:
        message = str(error).replace("torch.", "")
        message = re.sub(r"<class '[\w.]*?(\w+)'>", r"<\1>", message)
        return type(error).__name__, message
    return "ok"


def both(call):
    """``call(lib)`` run with torch and with mg: the two outcomes."""
    return outcome(lambda: call(torch)), outcome(lambda: call(mg))


# ----- testing.assert_close -------------------------------------------------------------------
CLOSE_CASES = {
    "close": lambda L, A: A(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0000001])),
    "not close": lambda L, A: A(L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.5, 3.1])),
    "2-d": lambda L, A: A(L.zeros(3, 4, dtype=L.float32),
                          L.zeros(3, 4, dtype=L.float32) + L.eye(3, 4, dtype=L.float32)),
    "float64 scalars": lambda L, A: A(1.0, 1.1),
    "int and float": lambda L, A: A(1, 1.0),
    "ints": lambda L, A: A(2, 3),
    "bools": lambda L, A: A(True, False),
    "None": lambda L, A: A(None, None),
    "None and 1": lambda L, A: A(None, 1),
    "0-d": lambda L, A: A(L.tensor(2.0, dtype=L.float32), L.tensor(3.0, dtype=L.float32)),
    "shape": lambda L, A: A([L.ones(2)], [L.ones(3)]),
    "nested item": lambda L, A: A({"a": [L.ones(2), L.ones(2, dtype=L.float32)]},
                                  {"a": [L.ones(2), L.zeros(2, dtype=L.float32)]}),
    "keys": lambda L, A: A({"a": L.ones(2)}, {"b": L.zeros(2)}),
    "lengths": lambda L, A: A([1.0, 2.0], (1.0,)),
    "tuple and list": lambda L, A: A((1.0, 2.0), [1.0, 2.0]),
    "rtol alone": lambda L, A: A(L.ones(2), L.ones(2), rtol=1e-3),
    "atol alone": lambda L, A: A(L.ones(2), L.ones(2), atol=1e-3),
    "msg": lambda L, A: A(L.ones(2), L.zeros(2), msg="custom"),
    "callable msg": lambda L, A: A(L.ones(2), L.zeros(2), msg=lambda m: m.splitlines()[0]),
    "NaN": lambda L, A: A(L.tensor([float("nan")]), L.tensor([float("nan")])),
    "equal_nan": lambda L, A: A(L.tensor([float("nan")]), L.tensor([float("nan")]),
                                equal_nan=True),
    "inf": lambda L, A: A(L.tensor([1.0, math.inf], dtype=L.float32),
                          L.tensor([1.0, -math.inf], dtype=L.float32)),
    "tensor and array": lambda L, A: A(L.ones(2), np.ones(2)),
    "arrays": lambda L, A: A(np.ones(2), np.ones(2) + 1e-9),
    "tensor and list": lambda L, A: A(L.tensor([1.0]), [1.0]),
    "tensor and number": lambda L, A: A(L.tensor(1.0), 1.0),
    "strings": lambda L, A: A("a", "a"),
    "complex": lambda L, A: A(L.tensor([1 + 1j], dtype=L.complex64),
                              L.tensor([1 + 2j], dtype=L.complex64)),
    "check_dtype off": lambda L, A: A(L.tensor([1.0, 2.0]), L.tensor([1, 2]), check_dtype=False),
    "promoted": lambda L, A: A(L.tensor([1.0, 2.0, 3.0], dtype=L.float64),
                               L.tensor([1.0, 2.5, 3.1], dtype=L.float32), check_dtype=False),
    "stride": lambda L, A: A(L.ones(2, 3).t(), L.ones(2, 3).t().contiguous(),
                             check_stride=True),
    "subclass": lambda L, A: A(L.nn.Parameter(L.ones(2)), L.ones(2)),
    "no subclass": lambda L, A: A(L.nn.Parameter(L.ones(2)), L.ones(2), allow_subclasses=False),
    "numpy number": lambda L, A: A(np.float32(1.0), 1.0),
    "exact": lambda L, A: A(L.ones(2), L.ones(2) * (1 + 1e-12), rtol=0.0, atol=0.0),
}


@pytest.mark.parametrize("case", CLOSE_CASES)
def test_assert_close_verdicts_and_messages_are_torchs(case):
    theirs, ours = both(lambda L: CLOSE_CASES[case](L, L.testing.assert_close))
    assert ours == theirs


def test_assert_close_of_integers_and_dtypes():
    # integers: exact, "not equal"; the relative difference is float64 here (float32 in torch)
    theirs, ours = both(lambda L: L.testing.assert_close(L.tensor([[1, 2], [3, 4]]),
                                                         L.tensor([[1, 2], [3, 9]])))
    assert ours[0] == theirs[0] == "AssertionError"
    assert ours[1].splitlines()[:4] == theirs[1].splitlines()[:4]
    assert "Tensor-likes are not equal!" in ours[1]
    theirs, ours = both(lambda L: L.testing.assert_close(L.ones(2, dtype=L.float64),
                                                         L.ones(2, dtype=L.float32)))
    assert ours == theirs == ("AssertionError", "The values for attribute 'dtype' do not "
                              "match: float64 != float32.")


@pytest.mark.parametrize("dtype, rtol, atol", [
    ("float16", 1e-3, 1e-5), ("bfloat16", 1.6e-2, 1e-5), ("float32", 1.3e-6, 1e-5),
    ("float64", 1e-7, 1e-7), ("complex64", 1.3e-6, 1e-5), ("complex128", 1e-7, 1e-7)])
@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_assert_close_default_tolerances(dtype, rtol, atol, scale):
    expected = np.array([0.0, 0.5, 1.0, -4.0])
    actual = expected + scale * (atol + rtol * np.abs(expected))   # inside at 0.5, out at 3
    theirs, ours = both(lambda L: L.testing.assert_close(
        L.tensor(actual).to(getattr(L, dtype)), L.tensor(expected).to(getattr(L, dtype))))
    assert (ours == "ok") == (theirs == "ok")
    if dtype not in ("float16", "bfloat16"):      # half: the rounding of the values decides
        assert (ours == "ok") == (scale < 1)


def test_assert_allclose_is_deprecated_and_looser():
    for L in (torch, mg):
        with pytest.warns(FutureWarning, match="assert_allclose"):
            L.testing.assert_allclose(L.ones(2, dtype=L.float32), [1.00005, 1.0])
        with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="not close"):
            L.testing.assert_allclose(L.ones(2), L.zeros(2))


# ----- testing.make_tensor --------------------------------------------------------------------
@pytest.mark.parametrize("options", [
    dict(dtype="float32"), dict(dtype="float64", low=-1, high=1), dict(dtype="float16"),
    dict(dtype="bfloat16"), dict(dtype="int64"), dict(dtype="uint8"), dict(dtype="bool"),
    dict(dtype="int8", low=-200, high=300), dict(dtype="complex64"),
    dict(dtype="int32", exclude_zero=True), dict(dtype="float32", noncontiguous=True)])
def test_make_tensor_draws_torchs_values(options):
    made = []
    for L in (torch, mg):
        L.manual_seed(7)
        kwargs = dict(options, dtype=getattr(L, options["dtype"]))
        made.append(L.testing.make_tensor((3, 4), device="cpu", **kwargs))
    theirs, ours = made
    np.testing.assert_array_equal(ours.to(mg.float64 if options["dtype"] == "bfloat16" else
                                          ours.dtype).numpy(),
                                  theirs.to(torch.float64 if options["dtype"] == "bfloat16"
                                            else theirs.dtype).numpy())
    assert ours.shape == tuple(theirs.shape) and str(ours.dtype) == "torch." + options["dtype"]


def test_make_tensor_arguments():
    x = mg.testing.make_tensor(2, 3, dtype=mg.float64, device="cpu", requires_grad=True)
    assert x.shape == (2, 3) and x.requires_grad and bool(((x >= -9) & (x < 9)).all())
    for bad in (dict(dtype="int64", requires_grad=True), dict(dtype="float32", low=2, high=1),
                dict(dtype="float32", low=float("nan")), dict(dtype="uint8", low=-5, high=-1)):
        theirs, ours = both(lambda L, bad=bad: L.testing.make_tensor(
            2, device="cpu", **dict(bad, dtype=getattr(L, bad["dtype"]))))
        assert ours[0] == theirs[0] == "ValueError"


# ----- special --------------------------------------------------------------------------------
X = np.array([-30.0, -6.0, -1.5, -1.0, -0.3, 0.0, 0.4, 1.0, 2.5, 19.5, 20.5, 60.0, 705.0])
P = np.array([1e-300, 1e-20, 1e-9, 0.01, 0.3, 0.5, 0.8, 0.999, 1 - 1e-12])
POSITIVE = np.array([0.2, 0.5, 1.0, 2.5, 7.0])
# ndtr above -1.5: torch's (1 + erf(x/√2))/2 loses the left tail (test_special_tails...)
UNARY = {"erfcx": X, "log_ndtr": X, "ndtr": X[X >= -1.5], "ndtri": P, "entr": X, "i1": X,
         "i0e": X, "i1e": X, "expit": X[X >= -1.5], "gammaln": POSITIVE, "psi": POSITIVE,
         "digamma": POSITIVE, "erf": X, "erfc": X, "erfinv": P[3:-2] * 2 - 1, "exp2": X[X < 50],
         "expm1": X[X < 50], "log1p": P, "i0": X[X < 700], "sinc": X, "logit": P,
         "round": X, "modified_bessel_i0": X[X < 700], "modified_bessel_i1": X[X < 700],
         "spherical_bessel_j0": X}


def close(ours, theirs, rtol, atol=0.0):
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", UNARY)
def test_special_unary_values_and_gradients_are_torchs(name):
    data = UNARY[name]
    theirs = torch.tensor(data, requires_grad=True)
    ours = mg.tensor(data, requires_grad=True)
    t_out, m_out = getattr(torch.special, name)(theirs), getattr(mg.special, name)(ours)
    close(m_out.detach().numpy(), t_out.detach().numpy(), 1e-12)
    assert m_out.requires_grad == t_out.requires_grad        # no gradient: torch's has none
    if t_out.requires_grad:
        (t_grad,) = torch.autograd.grad(t_out.sum(), theirs)
        m_out.sum().backward()
        close(ours.grad.numpy(), t_grad.numpy(), 1e-10)
    f32 = data.astype(np.float32)
    close(getattr(mg.special, name)(mg.tensor(f32)).numpy(),
          getattr(torch.special, name)(torch.tensor(f32)).numpy(), 2e-6)


@pytest.mark.parametrize("name", ["erfcx", "log_ndtr", "ndtri", "entr", "i1", "i0e", "i1e"])
def test_special_nodes_pass_gradcheck(name):
    data = {"ndtri": np.array([0.02, 0.4, 0.9]), "entr": np.array([0.3, 1.2, 4.0])}.get(
        name, np.array([-2.2, -0.4, 0.7, 3.1]))
    assert mg.autograd.gradcheck(getattr(mg.special, name),
                                 (mg.tensor(data, requires_grad=True),))


def test_special_tails_are_precise():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = np.array([-37.5, -20.0, -10.0, -3.0])
    exact = [mpmath.ncdf(v) for v in x]
    # within the conditioning of x/√2's rounding: 2x²·2⁻⁵³ relative (3e-13 at -37.5)
    close(mg.special.ndtr(mg.tensor(x)).numpy(), [float(e) for e in exact], 4e-13)
    assert torch.special.ndtr(torch.tensor(x)).tolist()[:3] == [0.0, 0.0, 0.0]   # torch's
    close(mg.special.log_ndtr(mg.tensor(-1e3, dtype=mg.float64)).item(),
          float(mpmath.log(mpmath.ncdf(-1000))), 1e-15)
    close(mg.special.log_ndtr(mg.tensor(x)).numpy(), [float(mpmath.log(e)) for e in exact],
          1e-14)
    p = np.array([1e-300, 1e-100, 1e-17, 1e-10, 0.3])
    quantiles = mg.special.ndtri(mg.tensor(p)).numpy()         # Φ of them is p again, within
    close([float(mpmath.ncdf(mpmath.mpf(q))) for q in quantiles], p, 5e-13)   # x²·2⁻⁵³
    subnormal = mg.tensor(1e-320, dtype=mg.float64)             # 2q - 1 rounds to -1
    assert -38.3 < mg.special.ndtri(subnormal).item() < -38.2
    assert mg.special.ndtri(mg.tensor([0.0, 1.0, -0.1, 1.1])).tolist()[:2] == [-math.inf,
                                                                                math.inf]


def test_special_binary_functions_are_torchs():
    x, y = np.array([0.0, 0.0, 1.0, 2.0, -0.5, 3.0]), np.array([-1.0, 2.0, -1.0, 0.5, -2.0, 1.0])
    for args in ((x, y), (2.0, y), (x, 3)):
        t_args = [torch.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a
                  for a in args]
        m_args = [mg.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a
                  for a in args]
        t_out, m_out = torch.special.xlog1py(*t_args), mg.special.xlog1py(*m_args)
        close(m_out.detach().numpy(), t_out.detach().numpy(), 1e-14)
        tensors = [t for t in t_args if isinstance(t, torch.Tensor)]
        m_out.sum().backward()
        for t_grad, m in zip(torch.autograd.grad(t_out.sum(), tensors),
                             [m for m in m_args if isinstance(m, mg.Tensor)]):
            close(m.grad.numpy(), t_grad.numpy(), 1e-14)
    s, q = np.array([2.0, 3.5, 1.0, 0.5, 2.0, 4.0]), np.array([1.0, 2.0, 1.0, 1.0, -2.0, 0.3])
    t_q, m_q = torch.tensor(q, requires_grad=True), mg.tensor(q, requires_grad=True)
    t_out, m_out = torch.special.zeta(torch.tensor(s), t_q), mg.special.zeta(mg.tensor(s), m_q)
    close(m_out.detach().numpy(), t_out.detach().numpy(), 1e-13)
    m_out.sum().backward()
    close(m_q.grad.numpy(), torch.autograd.grad(t_out.sum(), t_q)[0].numpy(), 1e-13)
    m_s = mg.tensor(s, requires_grad=True)
    with pytest.raises(NotImplementedError, match="derivative for 'zeta'"):
        mg.special.zeta(m_s, m_q).sum().backward()


def test_special_names_torch_has_under_others():
    t = torch.tensor(np.random.default_rng(0).normal(size=(3, 4)))
    m = mg.tensor(t.numpy())
    for name, args in [("softmax", (1,)), ("log_softmax", (0,)), ("logsumexp", (1,))]:
        close(getattr(mg.special, name)(m, *args).numpy(),
              getattr(torch.special, name)(t, *args).numpy(), 1e-14)
    close(mg.special.multigammaln(mg.tensor([2.5, 3.0], dtype=mg.float64), 3).numpy(),
          torch.special.multigammaln(torch.tensor([2.5, 3.0], dtype=torch.float64), 3).numpy(),
          1e-13)
    close(mg.special.polygamma(2, m.abs() + 0.1).numpy(),
          torch.special.polygamma(2, t.abs() + 0.1).numpy(), 1e-12)
    assert mg.special.expit is mg.sigmoid and mg.special.gammaln is mg.lgamma


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_y1", "airy_ai", "modified_bessel_k0"])
def test_special_bessel_names_exist(name):
    # their values are compared with torch's in test_missing_vocabulary.py
    assert hasattr(torch.special, name) and hasattr(mg.special, name)
    with pytest.raises(AttributeError, match="has no attribute"):
        mg.special.no_such_function      # noqa: B018


# ----- distributed, nn.parallel ---------------------------------------------------------------
@pytest.mark.parametrize("call", [lambda L: L.distributed.get_rank(),
                                  lambda L: L.distributed.get_world_size(),
                                  lambda L: L.distributed.barrier(),
                                  lambda L: L.distributed.all_reduce(
                                      L.ones(2), op=L.distributed.ReduceOp.SUM),
                                  lambda L: L.distributed.broadcast(L.ones(2), 0),
                                  lambda L: L.distributed.destroy_process_group(),
                                  lambda L: L.nn.parallel.DistributedDataParallel(
                                      L.nn.Linear(2, 2)),
                                  lambda L: L.nn.parallel.data_parallel(L.nn.Linear(2, 2),
                                                                        L.ones(1, 2))])
def test_one_process_without_a_group_refuses_as_torch(call):
    theirs, ours = both(call)
    assert ours == theirs and ours != "ok"


def test_distributed_states_and_names():
    assert not mg.distributed.is_initialized() and not torch.distributed.is_initialized()
    assert mg.distributed.is_available() is False          # torch's CPU build: True (gloo)
    with pytest.raises(RuntimeError, match="one process"):
        mg.distributed.init_process_group(backend="gloo")
    assert {op.name for op in mg.distributed.ReduceOp} == {
        name for name in dir(torch.distributed.ReduceOp) if name.isupper()}
    assert mg.distributed.Backend("GLOO") == torch.distributed.Backend("GLOO") == "gloo"
    assert mg.distributed.group.WORLD is torch.distributed.group.WORLD is None


def test_nanogpt_style_imports_run_single_process():
    from microgradnorm.distributed import destroy_process_group, init_process_group  # noqa
    from microgradnorm.nn.parallel import DistributedDataParallel as DDP
    ddp = False                                  # nanoGPT: int(os.environ.get('RANK', -1)) != -1
    model = nn.Linear(4, 2)
    model = DDP(model) if ddp else model
    raw_model = model.module if ddp else model
    assert raw_model is model and not isinstance(model, DDP)
    assert issubclass(DDP, nn.Module)


def test_data_parallel_runs_the_module():
    made = []
    for L in (torch, mg):
        L.manual_seed(0)
        module = L.nn.Linear(3, 2).double()
        wrapped = L.nn.DataParallel(module)
        x = L.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=L.float64)
        assert wrapped.module is module and wrapped.device_ids == []
        made.append((list(wrapped.state_dict()), repr(wrapped), wrapped(x).detach().numpy(),
                     module(x).detach().numpy()))
    (t_keys, t_repr, t_out, _), (m_keys, m_repr, m_out, m_plain) = made
    assert m_keys == t_keys == ["module.weight", "module.bias"] and m_repr == t_repr
    np.testing.assert_array_equal(m_out, m_plain)
    close(m_out, t_out, 1e-12)
    assert mg.nn.DataParallel is mg.nn.parallel.DataParallel


# ----- utils.checkpoint -----------------------------------------------------------------------
def block(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(4, 8), L.nn.GELU(), L.nn.Dropout(0.3),
                           L.nn.Linear(8, 3)).double()


def run_checkpointed(L, use_reentrant, segments=None):
    # a checkpointed block with dropout, then a draw: values, gradients, the stream after
    model = block(L)
    x = L.tensor(np.linspace(-1, 1, 20).reshape(5, 4), dtype=L.float64, requires_grad=True)
    L.manual_seed(1)
    keywords = {} if use_reentrant is None else {"use_reentrant": use_reentrant}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if segments is None:
            y = (torch_checkpoint.checkpoint if L is torch else checkpoint)(model, x, **keywords)
        else:
            y = (torch_checkpoint.checkpoint_sequential if L is torch else
                 checkpoint_sequential)(model, segments, x, **keywords)
    after = L.rand(3)
    (y * y).sum().backward()
    return ([y.detach().numpy(), x.grad.numpy(), model[0].weight.grad.numpy(), after.numpy()],
            [str(w.message) for w in caught])


@pytest.mark.parametrize("use_reentrant", [True, False, None])
@pytest.mark.parametrize("segments", [None, 2])
def test_checkpoint_values_gradients_and_warnings_are_torchs(use_reentrant, segments):
    (theirs, t_warned), (ours, m_warned) = (run_checkpointed(L, use_reentrant, segments)
                                            for L in (torch, mg))
    for a, b in zip(ours, theirs):
        close(a, b, 1e-10, atol=1e-15)
    assert m_warned == t_warned
    assert bool(m_warned) == (use_reentrant is None)


def test_checkpoint_without_inputs_requiring_grad_and_its_errors():
    for L, run in ((torch, torch_checkpoint.checkpoint), (mg, checkpoint)):
        model = block(L)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
            y = run(model, L.ones(2, 4, dtype=L.float64), use_reentrant=True)
        assert not y.requires_grad                  # as torch's: no graph, no gradients
        assert run(model, L.ones(2, 4, dtype=L.float64), use_reentrant=False).requires_grad
        x = L.ones(2, dtype=L.float64, requires_grad=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            run(lambda a, foo: a, x, use_reentrant=True, foo=1)
        with pytest.raises(ValueError, match="context_fn"):
            run(lambda a: a, x, use_reentrant=True, debug=True)
        scaled = run(lambda a, scale: a * scale, x, use_reentrant=False, scale=3.0)
        first, second = run(lambda a, b: (a * 2, b + 1), x, x * 3, use_reentrant=True)
        (first.sum() + second.sum() + scaled.sum()).backward()
        assert x.grad.tolist() == [8.0, 8.0]


CHECKPOINT_OUTPUTS = {                      # what checkpointed functions return besides Tensors
    "hidden, None": lambda a: (a * 2, None),
    "int first": lambda a: (5, a * 2, a.detach()),
    "nested tuple": lambda a: (a * 2, (a * 3,)),
    "list": lambda a: [a * 2, 3],
    "dict": lambda a: {"o": a * 2},
    "no Tensor": lambda a: (None,),
    "None": lambda a: None,
}


def described(output, L):
    # an output's structure, each Tensor as (values, has a graph)
    if isinstance(output, L.Tensor):
        return output.detach().numpy().tolist(), output.requires_grad
    if isinstance(output, (tuple, list)):
        return type(output).__name__, [described(o, L) for o in output]
    if isinstance(output, dict):
        return {key: described(value, L) for key, value in output.items()}
    return output


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("case", CHECKPOINT_OUTPUTS)
def test_checkpoint_passes_non_tensor_outputs_through_as_torch(case, use_reentrant):
    seen = []
    for L, run in ((torch, torch_checkpoint.checkpoint), (mg, checkpoint)):
        x = L.tensor([3.0, 4.0], dtype=L.float64, requires_grad=True)
        output = run(CHECKPOINT_OUTPUTS[case], x, use_reentrant=use_reentrant)
        first = output[0] if isinstance(output, tuple) and output else None
        first = output[1] if isinstance(first, int) else first
        if isinstance(first, L.Tensor) and first.requires_grad:
            (first * first).sum().backward()
        seen.append((described(output, L), None if x.grad is None else x.grad.tolist()))
    assert seen[1] == seen[0]


def test_checkpoint_of_a_block_returning_hidden_and_none():
    # a transformer block's (hidden, None), with dropout recomputed from the forward's state
    results = []
    for L, run in ((torch, torch_checkpoint.checkpoint), (mg, checkpoint)):
        model = block(L)
        x = L.tensor(np.linspace(-1, 1, 20).reshape(5, 4), dtype=L.float64, requires_grad=True)
        L.manual_seed(1)
        hidden, cache = run(lambda h, model=model: (model(h), None), x, use_reentrant=True)
        (hidden * hidden).sum().backward()
        assert cache is None
        results.append([hidden.detach().numpy(), x.grad.numpy(), model[0].weight.grad.numpy()])
    for ours, theirs in zip(results[1], results[0]):
        close(ours, theirs, 1e-10, atol=1e-15)


def test_reentrant_checkpoint_keeps_only_its_inputs():
    mg.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(64, 64), nn.GELU()) for _ in range(4)])
    x = mg.randn(32, 64, requires_grad=True)
    plain = mg.graph_stats(model(x))
    kept = mg.graph_stats(checkpoint(model, x, use_reentrant=True))
    assert kept.nodes == 1
    assert kept.saved_bytes == x.numel() * x.element_size() < plain.saved_bytes / 8
    assert mg.graph_stats(checkpoint(model, x, use_reentrant=False)).nodes == plain.nodes


# ----- jit, random, cpu, is_nonzero, pin_memory -----------------------------------------------
def test_jit_returns_what_it_is_given():
    module = nn.Linear(2, 2)
    assert mg.jit.script(module) is module and mg.jit.trace(module, mg.ones(1, 2)) is module

    @mg.jit.ignore
    def kept(x):
        return x + 1

    @mg.jit.unused
    def unused(x):
        return x + 2
    assert (kept(1), unused(1), mg.jit.export(kept)(1), mg.jit.ignore(drop=False)(kept)(1)) \
        == (2, 3, 2, 2)
    with pytest.warns(FutureWarning, match="unused"):
        mg.jit.ignore(True)
    assert not mg.jit.is_scripting() and not mg.jit.is_tracing()
    assert mg.jit.Final is torch.jit.Final
    assert mg.jit.wait(mg.jit.fork(lambda a, b: a + b, 2, b=3)) == 5
    assert both(lambda L: L.jit.script(3))[1][0] == "TypeError"
    for refused in (lambda: mg.jit.save(module, "m.pt"), lambda: mg.jit.load("m.pt")):
        with pytest.raises(NotImplementedError, match="TorchScript"):
            refused()


JIT_ISINSTANCE = [(3, int), (True, int), (3, (str, float)), ([1, 2], List[int]),
                  ([1, "a"], List[int]), ({"a": [1]}, Dict[str, List[int]]),
                  ({"a": 1}, Dict[int, int]), ((1, "a"), Tuple[int, str]),
                  ((1,), Tuple[int, str]), (None, Optional[int]), ("a", Optional[int]),
                  ([1], list[int]), (3, int | None), ("x", "Tensor"), (["x"], "List[Tensor]"),
                  ([1], [int]), ([1], List), ({}, dict), (1, Optional), (1, 3)]


@pytest.mark.parametrize("obj, target_type", JIT_ISINSTANCE)
def test_jit_isinstance_is_torchs_eager_one(obj, target_type):
    def answer(L):
        # the verdict, or the error's class and message ("x": a tensor of L)
        kind = {"Tensor": L.Tensor, "List[Tensor]": List[L.Tensor]}[target_type] \
            if isinstance(target_type, str) else target_type
        value = [L.ones(1)] if obj == ["x"] else L.ones(1) if obj == "x" else obj
        try:
            return L.jit.isinstance(value, kind)
        except Exception as error:
            return type(error).__name__, str(error)
    assert answer(mg) == answer(torch)


def test_jit_attribute_script_method_and_the_names_left_out():
    with pytest.warns(UserWarning, match="inner type of a container is lost"):
        assert mg.jit.isinstance([], List[int])
    assert mg.jit.Attribute([1], List[int]) == [1]        # torch's with PYTORCH_JIT=0

    def method(self, x):
        return x
    assert mg.jit.script_method(method) is method
    assert issubclass(mg.jit.RecursiveScriptModule, mg.jit.ScriptModule)
    assert not isinstance(mg.jit.script(nn.Linear(2, 2)), mg.jit.RecursiveScriptModule)
    assert issubclass(mg.jit.TracerWarning, Warning)
    for name in ("CompilationUnit", "set_fusion_strategy", "save_jit_module_to_flatbuffer"):
        assert hasattr(torch.jit, name)
        with pytest.raises(AttributeError, match=f"torch.jit.{name}.*TorchScript compiler"):
            getattr(mg.jit, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        mg.jit.nothing                                    # noqa: B018


def test_random_fork_rng_restores_the_stream_as_torchs():
    drawn = []
    for L in (torch, mg):
        L.random.manual_seed(5)
        with L.random.fork_rng():
            inside = L.rand(3)
        after = L.rand(3)
        try:
            with L.random.fork_rng(devices=[]):
                L.rand(4)
                raise KeyError
        except KeyError:
            pass
        with L.random.fork_rng(enabled=False):
            L.rand(1)
        state = L.random.get_rng_state()
        last = L.rand(2)
        L.random.set_rng_state(state)
        drawn.append([inside.numpy(), after.numpy(), last.numpy(), L.rand(2).numpy(),
                      np.array([L.random.initial_seed()])])
    for a, b in zip(*drawn):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(drawn[1][0], drawn[1][1])     # the block's draw, again


def test_cpu_mps_is_nonzero_and_pin_memory():
    for L in (torch, mg):
        assert (L.cpu.is_available(), L.cpu.device_count(), L.cpu.current_device(),
                L.cpu.is_initialized(), L.cpu.synchronize()) == (True, 1, "cpu", True, None)
        with L.cpu.stream(L.cpu.current_stream()):
            L.ones(1)
        assert L.backends.mps.is_available() is False
    for value in ([0.5], [[0]], False, [1, 2], []):
        theirs, ours = both(lambda L, value=value: L.is_nonzero(L.tensor(value)))
        assert ours == theirs
    theirs, ours = both(lambda L: L.is_nonzero(3))
    assert ours == theirs and ours[0] == "TypeError"
    assert mg.is_nonzero(mg.tensor([[2.0]])) is True
    if not mg.cuda.is_available():             # torch's CPU-only answer
        theirs, ours = both(lambda L: L.ones(2).pin_memory())
        assert ours == theirs and ours[0] == "RuntimeError"
    assert mg.ones(2).is_pinned() is False

"""Reliability: gradient accumulation from threads, grad modes decorating generators."""

import threading

import numpy as np
import pytest
import torch

import microgradnorm as mg


def test_threads_backpropagating_into_one_leaf_lose_nothing():
    # NumPy releases the GIL inside +=: without a lock two threads read the same old sum
    w = mg.zeros(1000, 1000, dtype=mg.float64, requires_grad=True)

    def work():
        for _ in range(10):
            (w * 1.0).sum().backward()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert w.grad.numpy().min() == w.grad.numpy().max() == 40.0


def _trace(lib, decorate, tensor):
    @decorate
    def steps():
        for _ in range(2):
            sent = yield lib.is_grad_enabled()
            yield ((tensor * 2).requires_grad, sent)
    out, gen = [], steps()
    value = next(gen)
    while True:
        out.append((value, lib.is_grad_enabled()))
        try:
            value = gen.send("x")
        except StopIteration:
            return out


MODES = {
    "no_grad()": (lambda: mg.no_grad(), lambda: torch.no_grad()),
    "no_grad": (lambda: mg.no_grad, lambda: torch.no_grad),
    "inference_mode()": (lambda: mg.inference_mode(), lambda: torch.inference_mode()),
    "inference_mode": (lambda: mg.inference_mode, lambda: torch.inference_mode),
    "inference_mode(False)": (lambda: mg.inference_mode(False),
                              lambda: torch.inference_mode(False)),
    "set_grad_enabled(False)": (lambda: mg.set_grad_enabled(False),
                                lambda: torch.set_grad_enabled(False)),
}


@pytest.mark.parametrize("mode", MODES)
def test_a_grad_mode_decorating_a_generator_holds_at_every_resumption(mode):
    ours, theirs = MODES[mode]
    got = _trace(mg, ours(), mg.ones(1, requires_grad=True))
    expected = _trace(torch, theirs(), torch.ones(1, requires_grad=True))
    assert got == expected
    assert mg.is_grad_enabled()


def test_enable_grad_decorating_a_generator_inside_no_grad():
    with mg.no_grad(), torch.no_grad():
        got = _trace(mg, mg.enable_grad(), mg.ones(1, requires_grad=True))
        expected = _trace(torch, torch.enable_grad(), torch.ones(1, requires_grad=True))
        assert not mg.is_grad_enabled()
    assert got == expected and got[0] == (True, False)


def test_a_decorated_generator_closed_or_thrown_into_runs_inside_the_mode():
    seen = []

    @mg.no_grad()
    def steps():
        try:
            yield 1
            yield 2
        except ValueError:
            seen.append(("throw", mg.is_grad_enabled()))
            yield 3
        finally:
            seen.append(("finally", mg.is_grad_enabled()))
    gen = steps()
    next(gen)
    assert gen.throw(ValueError()) == 3 and mg.is_grad_enabled()
    gen.close()
    assert seen == [("throw", False), ("finally", False)] and mg.is_grad_enabled()


def test_a_decorated_generator_returns_its_value():
    @mg.no_grad
    def steps():
        yield 1
        return "done"
    gen = steps()
    next(gen)
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value == "done"


def test_inference_mode_records_no_graph_and_false_records_one():
    x = mg.ones(2, requires_grad=True)
    with mg.inference_mode():
        assert not (x * 2).requires_grad
    with mg.inference_mode(False):
        assert (x * 2).requires_grad
    with mg.no_grad(), mg.inference_mode(False):
        assert mg.is_grad_enabled()                  # torch's: grad on, even inside no_grad
    np.testing.assert_array_equal((x * 2).detach().numpy(), [2, 2])

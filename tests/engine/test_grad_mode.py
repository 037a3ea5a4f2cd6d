"""Grad mode and the scope stacks are per thread, as in PyTorch; ``enable_grad`` and
``set_grad_enabled`` work as context managers, decorators and (the latter) plain calls."""

import threading

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn


def test_no_grad_in_one_thread_leaves_other_threads_recording():
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with mg.no_grad():
            inside.set()
            release.wait(5)
            seen["worker"] = mg.is_grad_enabled()

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(5)
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0                                   # main thread: still recording
    seen["main"] = mg.is_grad_enabled()
    release.set()
    t.join()
    assert seen == {"main": True, "worker": False}
    assert y.grad_fn is not None


def test_overlapping_no_grad_blocks_in_two_threads_leave_grad_mode_on():
    # Thread A enters, B enters, A exits, B exits: with one process-wide flag, A's exit
    # restored True while B was inside, and B's exit then restored False for good.
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def a():
        with mg.no_grad():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b():
        a_in.wait(5)
        with mg.no_grad():
            b_in.set()
            a_out.wait(5)

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mg.is_grad_enabled()
    results = []
    t = threading.Thread(target=lambda: results.append(mg.is_grad_enabled()))
    t.start()
    t.join()
    assert results == [True]                      # a new thread starts with recording on


def test_module_scopes_are_per_thread():
    # Two threads call two different models at once; each node must carry its own
    # model's module path (the visualizer's labels).
    barrier = threading.Barrier(2, timeout=5)
    paths = {}

    class Waits(nn.Module):
        def __init__(self, name):
            super().__init__()
            self.inner = nn.Linear(3, 3)
            self.name = name

        def forward(self, x):
            barrier.wait()                        # both threads are inside a module now
            y = self.inner(x)
            barrier.wait()
            return y * 2.0

    def run(name):
        model = nn.Sequential(Waits(name))
        y = model(mg.ones(2, 3, requires_grad=True))
        paths[name] = (y.grad_fn.module, y.grad_fn.inputs[0].grad_fn.module)

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert paths["a"] == ("0", "0.inner") and paths["b"] == ("0", "0.inner")


def test_op_groups_are_per_thread():
    barrier = threading.Barrier(2, timeout=5)
    groups = {}

    def run(name):
        x = mg.tensor(np.random.default_rng(0).standard_normal((2, 4)), requires_grad=True)
        if name == "norm":
            with mg.autograd.op_group("layer_norm"):
                barrier.wait()
                barrier.wait()
                y = x * 2.0
        else:
            barrier.wait()
            y = x * 3.0                           # while the other thread is in its group
            barrier.wait()
        groups[name] = y.grad_fn.group

    threads = [threading.Thread(target=run, args=(n,)) for n in ("norm", "plain")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert groups["plain"] is None
    assert groups["norm"][0] == "layer_norm"


def test_enable_grad_inside_no_grad():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.no_grad():
        with mg.enable_grad():
            assert mg.is_grad_enabled()
            y = x * 2.0
        assert not mg.is_grad_enabled()
    assert y.grad_fn is not None


def test_decorators_set_the_mode_per_call():
    @mg.no_grad()
    def frozen(t):
        return t * 2.0, mg.is_grad_enabled()

    @mg.enable_grad()
    def recorded(t):
        return t * 2.0

    x = mg.tensor([1.0], requires_grad=True)
    y, mode = frozen(x)
    assert y.grad_fn is None and not mode and mg.is_grad_enabled()
    with mg.no_grad():
        assert recorded(x).grad_fn is not None
        assert not mg.is_grad_enabled()
    assert frozen.__name__ == "frozen"


def test_decorators_without_parentheses_as_in_torch():
    @mg.no_grad
    def frozen(t):
        return t * 2.0

    @mg.enable_grad
    def recorded(t):
        return t * 2.0

    x = mg.tensor([1.0], requires_grad=True)
    assert frozen(x).grad_fn is None and mg.is_grad_enabled()
    with mg.no_grad():
        assert recorded(x).grad_fn is not None
    assert frozen.__name__ == "frozen"
    with pytest.raises(TypeError, match="expected a function to decorate, got int"):
        mg.no_grad(3)


def test_set_grad_enabled_as_call_context_and_decorator():
    x = mg.tensor([1.0], requires_grad=True)
    try:
        mg.set_grad_enabled(False)
        assert not mg.is_grad_enabled()
        assert (x * 2.0).grad_fn is None
    finally:
        mg.set_grad_enabled(True)
    mode = mg.set_grad_enabled(False)
    with mode:
        assert not mg.is_grad_enabled() and mode.mode is False     # torch's attribute
    assert mg.is_grad_enabled() and mg.set_grad_enabled(True).mode is True

    @mg.set_grad_enabled(False)
    def f():
        return mg.is_grad_enabled()

    assert mg.is_grad_enabled()                   # decorating does not change the mode
    assert f() is False and mg.is_grad_enabled()
    with pytest.raises(TypeError, match="mode must be a bool"):
        mg.set_grad_enabled("no")
    assert mg.is_grad_enabled()


def test_grad_mode_restored_after_an_exception_in_a_decorated_function():
    @mg.no_grad()
    def boom():
        raise KeyError("x")

    with pytest.raises(KeyError):
        boom()
    assert mg.is_grad_enabled()


def test_exported():
    for name in ("enable_grad", "set_grad_enabled", "no_grad"):
        assert name in mg.__all__
    assert F is not None

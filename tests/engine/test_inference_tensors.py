"""Inference tensors (``inference_mode``), each behaviour compared with torch's at test time:
which tensors are inference tensors, the writes, ``requires_grad_(True)``, the saving for
backward and ``_version`` refused outside the mode (with torch's error class and words, and
nothing of ours changed: torch writes before it refuses), and everything allowed inside."""

import copy
import functools
import threading

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

LIBS = (mg, torch)
REFUSED_WRITE = "Inplace update to inference tensor outside InferenceMode"
REFUSED_SAVE = "Inference tensors cannot be saved for backward"


def outcome(fn):
    """("ok", None) or the error's class (checked to be torch's RuntimeError) and first words."""
    try:
        fn()
    except RuntimeError as error:
        return "RuntimeError", str(error)[:40]
    return "ok", None


def inference_ones(lib, *shape, **kwargs):
    with lib.inference_mode():
        return lib.ones(*shape, **kwargs)


def values(t):
    return np.array(t.detach().tolist()) if t.numel() else np.zeros(tuple(t.shape))


def test_which_tensors_are_inference_tensors():
    def marks(lib):
        normal = lib.ones(2, 3)
        with lib.inference_mode():
            made = lib.ones(2, 3)
            listed = lib.tensor([1.0, 2.0])
            like = lib.zeros_like(normal)
            result_of_normal = normal * 2
            view_of_normal = normal.view(6)
            with lib.inference_mode(False):
                turned_off = lib.ones(2)
            with lib.no_grad():                      # still inside inference mode
                nested_no_grad = lib.ones(2)
            copied, copied_normal = copy.deepcopy(made), copy.deepcopy(normal)
        with lib.no_grad():
            under_no_grad = lib.ones(2)
        return [t.is_inference() for t in (
            normal, made, listed, like, result_of_normal, view_of_normal, turned_off,
            nested_no_grad, under_no_grad, made.view(3, 2), made[0], made[1, 2], made.t(),
            made.detach(), made.clone(), made + 1, made.sum(), lib.ones_like(made),
            copied, copied_normal, copy.deepcopy(made))]
    assert marks(mg) == marks(torch)


def test_decorated_function_makes_inference_tensors():
    made = [lib.inference_mode()(lambda lib=lib: lib.ones(2))() for lib in LIBS]
    assert [t.is_inference() for t in made] == [True, True]


def test_inference_tensor_attributes_match():
    def attributes(lib):
        t = inference_ones(lib, 3)
        a = inference_ones(lib, 3, requires_grad=True)
        return t.is_leaf, t.grad_fn is None, t.requires_grad, a.requires_grad, a.is_leaf
    assert attributes(mg) == attributes(torch)


WRITES = {
    "add_": lambda lib, t: t.add_(1),
    "mul_": lambda lib, t: t.mul_(2),
    "iadd": lambda lib, t: t.__iadd__(1),
    "zero_": lambda lib, t: t.zero_(),
    "fill_": lambda lib, t: t.fill_(3.0),
    "setitem": lambda lib, t: t.__setitem__((0, 1), 5.0),
    "setitem_mask": lambda lib, t: t.__setitem__(t > 0, 7.0),
    "copy_": lambda lib, t: t.copy_(lib.zeros(2, 3)),
    "clamp_": lambda lib, t: t.clamp_(0.0, 0.5),
    "masked_fill_": lambda lib, t: t.masked_fill_(lib.ones(2, 3, dtype=lib.bool), 0.0),
    "uniform_": lambda lib, t: t.uniform_(),
    "t_": lambda lib, t: t.t_(),
    "resize_": lambda lib, t: t.resize_(4),
    "view_add_": lambda lib, t: t.view(6).add_(1),
    "row_add_": lambda lib, t: t[0].add_(1),
    "out_add": lambda lib, t: lib.add(lib.ones(2, 3), 1, out=t),
    "out_self": lambda lib, t: lib.mul(t, 2, out=t),
    "out_exp": lambda lib, t: lib.exp(lib.zeros(2, 3), out=t),
    "out_resized": lambda lib, t: lib.exp(lib.zeros(4), out=t),
    "out_sum": lambda lib, t: lib.sum(lib.ones(2, 3, 3), 2, out=t),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_inplace_write_outside_the_mode_is_refused_and_changes_nothing(name):
    write = WRITES[name]
    results = []
    for lib in LIBS:
        t = inference_ones(lib, 2, 3)
        before = values(t), tuple(t.shape)
        with pytest.warns(UserWarning) if name == "out_resized" and lib is torch else \
                _nothing():
            results.append(outcome(lambda lib=lib, t=t: write(lib, t)))
        if lib is mg:              # ours refuses before the write (torch's writes first)
            assert tuple(t.shape) == before[1]
            np.testing.assert_array_equal(values(t), before[0])
    assert results[0] == results[1]
    assert results[0][1].startswith(REFUSED_WRITE[:40])


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("name", sorted(WRITES))
def test_inplace_write_inside_the_mode_is_allowed(name):
    write = WRITES[name]
    got = []
    for lib in LIBS:
        lib.manual_seed(0)
        inference, normal = inference_ones(lib, 2, 3), lib.ones(2, 3)
        with lib.inference_mode(), pytest.warns(UserWarning) if name == "out_resized" \
                else _nothing():
            write(lib, inference)
            write(lib, normal)
        got.append((values(inference), values(normal), normal.is_inference(),
                    normal._version))
    for ours, theirs in zip(*got):
        if name == "uniform_" and isinstance(ours, np.ndarray):   # (drawn: the range only)
            assert ((ours >= 0) & (ours < 1)).all() and ours.shape == theirs.shape
        else:
            np.testing.assert_allclose(ours, theirs)


def test_inference_mode_false_and_other_threads_are_outside_the_mode():
    def run(lib):
        found = []
        t = inference_ones(lib, 3)
        with lib.inference_mode():
            with lib.inference_mode(False):
                found.append(outcome(lambda: t.add_(1)))
            thread = threading.Thread(target=lambda: found.append(outcome(lambda: t.add_(1))))
            thread.start()
            thread.join()
            found.append(outcome(lambda: t.add_(1)))
        with lib.no_grad():
            found.append(outcome(lambda: t.add_(1)))
        return found, values(t)
    ours, theirs = run(mg), run(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_array_equal(ours[1], [2.0, 2.0, 2.0])


def test_requires_grad_outside_the_mode():
    def run(lib):
        t = inference_ones(lib, 3)
        found = [outcome(lambda: t.requires_grad_(True)), t.requires_grad,
                 outcome(lambda: t.requires_grad_(False)), t.requires_grad,
                 outcome(lambda: t.view(3).requires_grad_()),
                 outcome(lambda: t.clone().requires_grad_())]
        found += [outcome(lambda: lib.nn.Parameter(t)),
                  lib.nn.Parameter(t, requires_grad=False).is_inference()]
        with lib.inference_mode():
            found += [outcome(lambda: t.requires_grad_(True)), t.requires_grad,
                      lib.nn.Parameter(lib.ones(2)).is_inference()]
        return found
    ours, theirs = run(mg), run(torch)
    assert ours == theirs
    assert ours[0][1].startswith("Setting requires_grad=True on inference")


SAVES = {
    "add": lambda lib, w, t, i: w + t,               # nothing saved: allowed
    "sub": lambda lib, w, t, i: (w - t).sum(),
    "cat": lambda lib, w, t, i: lib.cat([w, t]).sum(),
    "mul": lambda lib, w, t, i: w * t,               # t saved for w's gradient: refused
    "rmul": lambda lib, w, t, i: t * w,
    "div": lambda lib, w, t, i: w / t,
    "rdiv": lambda lib, w, t, i: t / w,
    "matmul": lambda lib, w, t, i: w @ t,
    "linear": lambda lib, w, t, i: lib.nn.functional.linear(w[None], t[None]),
    "index": lambda lib, w, t, i: w[i],
    "gather": lambda lib, w, t, i: w.gather(0, i),
    "embedding": lambda lib, w, t, i: lib.nn.functional.embedding(i, w[:, None]),
    "normal_result": lambda lib, w, t, i: w * (t + 1),  # an op's result outside: ordinary
    "clone": lambda lib, w, t, i: w * t.clone(),
    "mul_inplace": lambda lib, w, t, i: (w * 1).mul_(t),
    "add_inplace": lambda lib, w, t, i: (w * 1).add_(t),
}


@pytest.mark.parametrize("name", sorted(SAVES))
def test_saved_for_backward_by_a_recorded_op(name):
    results = []
    for lib in LIBS:
        with lib.inference_mode():
            t = lib.ones(3) * 2
            i = lib.tensor([0, 2])
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        run = functools.partial(SAVES[name], lib, w, t, i)
        results.append(outcome(run))
        with lib.no_grad():            # nothing recorded: nothing saved
            assert outcome(run)[0] == "ok"
    assert results[0] == results[1]
    assert (results[0][0] == "ok") == (name in ("add", "sub", "cat", "normal_result", "clone",
                                                "add_inplace"))


def test_gradient_flows_past_an_inference_tensor_that_is_not_saved():
    grads = []
    for lib in LIBS:
        t = inference_ones(lib, 3)
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        ((w + t) ** 2).sum().backward()
        grads.append(values(w.grad))
    np.testing.assert_allclose(*grads)


def test_version_counter():
    def run(lib):
        t, normal = inference_ones(lib, 3), lib.ones(3)
        found = [outcome(lambda: t._version)]
        with lib.inference_mode():
            normal.add_(1)
            found.append(outcome(lambda: t._version))
            found.append(normal._version)
        return found + [normal._version]
    ours, theirs = run(mg), run(torch)
    assert ours == theirs
    assert ours[0] == ("RuntimeError", "Inference tensors do not track version c")


def test_module_built_in_the_mode_then_trained():
    def run(lib):
        lib.manual_seed(0)
        with lib.inference_mode():
            model = lib.nn.Linear(3, 2)
            norm = lib.nn.BatchNorm1d(3)
        found = [model.weight.is_inference(), type(model.weight).__name__,
                 model.weight.requires_grad, norm.running_mean.is_inference()]
        x = lib.randn(4, 3, requires_grad=True)
        found.append(outcome(lambda: model(x)))             # the weight saved for x's grad
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        for p in model.parameters():
            p.grad = lib.ones_like(p)
        found.append(outcome(optimizer.step))
        found.append(outcome(lambda: lib.nn.init.zeros_(model.bias)))
        # running stats written, the weight saved: refused (torch names the write first)
        found.append(outcome(lambda: norm(lib.randn(4, 3)))[0])
        with lib.inference_mode():                                # evaluation: allowed
            found.append(outcome(lambda: model(lib.randn(4, 3))))
            found.append(outcome(lambda: norm(lib.randn(4, 3))))
        return found
    assert run(mg) == run(torch)


def test_module_built_outside_and_evaluated_inside_trains_afterwards():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4),
                                  lib.nn.Linear(4, 1))
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32))
        with lib.inference_mode():
            prediction = model(x)
        loss = ((model(x) - prediction.clone()) ** 2 + model(x)).mean()
        loss.backward()
        optimizer.step()
        return (prediction.is_inference(), outcome(lambda: model(x) * prediction),
                values(model[0].weight))
    ours, theirs = run(mg), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)


def test_custom_function_saving_an_inference_tensor():
    def run(lib):
        class Product(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(x, y)
                return x * y

            @staticmethod
            def backward(ctx, grad):
                x, y = ctx.saved_tensors
                return grad * y, grad * x

        t = inference_ones(lib, 3)
        w = lib.ones(3, requires_grad=True)
        return outcome(lambda: Product.apply(w, t)), outcome(lambda: Product.apply(w, t + 1))
    assert run(mg) == run(torch)


def _state_values(module):
    return {k: values(v) for k, v in module.state_dict().items()}


@pytest.mark.parametrize("writer", ["SGD", "Adam", "AdamW_foreach", "constant_", "orthogonal_",
                                    "trunc_normal_", "batch_norm_module"])
def test_writers_outside_the_tensor_methods_refuse_before_writing(writer):
    # torch writes, then refuses; here the same error, and nothing written
    def run(lib):
        lib.manual_seed(0)
        with lib.inference_mode():
            model = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))
        for p in model.parameters():
            p.grad = lib.ones_like(p)
        weight = model[0].weight
        call = {
            "SGD": lambda: lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9).step(),
            "Adam": lambda: lib.optim.Adam(model.parameters()).step(),
            "AdamW_foreach": lambda: lib.optim.AdamW(model.parameters(), foreach=True).step(),
            "constant_": lambda: lib.nn.init.constant_(weight, 3.0),
            "orthogonal_": lambda: lib.nn.init.orthogonal_(weight),
            "trunc_normal_": lambda: lib.nn.init.trunc_normal_(weight),
            "batch_norm_module": lambda: model(lib.randn(4, 3)),
        }[writer]
        before = _state_values(model)
        found = outcome(call)
        return found, before, _state_values(model)
    ours, theirs = run(mg), run(torch)
    assert ours[0] == theirs[0]
    assert ours[0][1].startswith(REFUSED_WRITE[:40])
    for name, before in ours[1].items():
        np.testing.assert_array_equal(ours[2][name], before, err_msg=name)


def test_functional_batch_norm_refuses_inference_statistics_in_training():
    # torch's kernel updates them without a word (docs/pytorch.md): refused here, unwritten
    with mg.inference_mode():
        mean, var = mg.zeros(3), mg.ones(3)
    found = outcome(lambda: mg.nn.functional.batch_norm(mg.randn(4, 3), mean, var,
                                                        training=True))
    assert found[1].startswith(REFUSED_WRITE[:40])
    np.testing.assert_array_equal(values(mean), [0.0, 0.0, 0.0])
    with torch.inference_mode():
        mean, var = torch.zeros(3), torch.ones(3)
    assert outcome(lambda: torch.nn.functional.batch_norm(torch.randn(4, 3), mean, var,
                                                          training=True))[0] == "ok"


def test_captured_step_refuses_an_inference_argument_its_replay_could_not_check():
    w = mg.ones(3, requires_grad=True)
    step = mg.capture(lambda x: (w * x).sum())
    step(mg.ones(3))
    step(mg.ones(3))
    t = inference_ones(mg, 3)
    with pytest.raises(RuntimeError, match="inference tensor"):
        step(t)
    eager = outcome(lambda: (w * t).sum())
    with torch.inference_mode():
        theirs = torch.ones(3)
    assert eager == outcome(lambda: (torch.ones(3, requires_grad=True) * theirs).sum())
    assert eager[1].startswith(REFUSED_SAVE[:40])
    assert w.grad is None

"""The normalization family's modules and bad arguments against PyTorch, run at test
time (the functionals' sweep is test_fuzz_norm_family.py): constructors, state dicts,
resets, lazy forms, gradient modes, requires_grad combinations, running statistics
(in place, of special values, on every CPU kernel), half precision, and the exception
classes of bad arguments."""
# Every lambda a loop makes here is called before the loop moves on (``outcome``, the
# call tables): the late binding B023 warns of cannot happen.
# ruff: noqa: B023

import itertools
import warnings

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import kernels, nn
from norm_parity import DTYPES, IMPLS, backward_both, close, outcome, pair, same_state, set_random

torch = pytest.importorskip("torch")
TF = torch.nn.functional


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ----- modules: constructors, state, resets, old state dicts ------------------------------
def test_row_modules():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 2, 5))
    specs = [("LayerNorm", (ns, eps, affine, bias))
             for ns, affine, bias, eps in itertools.product(
                 [5, (5,), [5], (2, 5), [2, 5]], (True, False), (True, False), (1e-5, 0.0))]
    specs += [("RMSNorm", (ns, eps, affine))
              for ns, affine, eps in itertools.product([5, (5,), [2, 5]], (True, False),
                                                       (None, 1e-5, 0.1))]
    for cls, args in specs:
        ours = getattr(nn, cls)(*args, dtype=mg.float64)
        theirs = getattr(torch.nn, cls)(*args, dtype=torch.float64)
        same_state((cls, args), ours, theirs)
        set_random(ours, theirs, rng)
        xs = pair(x)
        ys = (ours(xs[0]), theirs(xs[1]))
        close(*ys, what=(cls, args))
        backward_both(ys, rng.standard_normal(x.shape))
        close(xs[0].grad, xs[1].grad, what=(cls, args))
        for name, param in theirs.named_parameters():
            close(getattr(ours, name).grad, param.grad, what=(cls, args, name))
        ours.reset_parameters()
        theirs.reset_parameters()
        same_state((cls, args, "reset"), ours, theirs)


def test_channel_module_constructors():
    rng = np.random.default_rng(6)
    for groups, channels, affine, eps in itertools.product([1, 2, 4, 3, 0], [4, -2], (True, False),
                                                           (1e-5, 0.0)):
        if channels < 0 and not affine:
            continue        # torch builds it (no parameter to size); refused here, as 0
        made = outcome(lambda: nn.GroupNorm(groups, channels, eps, affine, dtype=mg.float64),
                       lambda: torch.nn.GroupNorm(groups, channels, eps, affine,
                                                  dtype=torch.float64))
        if made is None:
            continue
        same_state(("GroupNorm", groups, affine), *made)
        set_random(*made, rng)
        for shape in [(2, 4, 3), (2, 4), (4, 3), (1, 4, 1), (0, 4, 2)]:
            x = rng.standard_normal(shape)
            result = outcome(lambda: made[0](mg.tensor(x)), lambda: made[1](torch.tensor(x)),
                             shape)
            if result is not None:
                close(*result, what=(groups, shape))
    names = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
             "InstanceNorm3d", "SyncBatchNorm"]
    for cls, affine, track, momentum in itertools.product(names, (True, False), (True, False),
                                                          (0.1, None)):
        ours = getattr(nn, cls)(4, 1e-3, momentum, affine, track, dtype=mg.float64)
        theirs = getattr(torch.nn, cls)(4, 1e-3, momentum, affine, track, dtype=torch.float64)
        same_state((cls, affine, track, momentum), ours, theirs)
        for method in ("reset_running_stats", "reset_parameters"):
            getattr(ours, method)()
            getattr(theirs, method)()
            same_state((cls, method), ours, theirs)
    for cls, num_features in itertools.product(["BatchNorm1d", "BatchNorm2d"], [-1, 3.0, True]):
        assert outcome(lambda: getattr(nn, cls)(num_features),
                       lambda: getattr(torch.nn, cls)(num_features)) is None


def test_batch_norm_old_state_dict():
    """A state dict without ``num_batches_tracked`` (from before it existed) loads as torch's
    and keeps the count the module has."""
    rng = np.random.default_rng(12)
    for momentum in (0.1, None):
        ours = nn.BatchNorm2d(3, momentum=momentum, dtype=mg.float64)
        theirs = torch.nn.BatchNorm2d(3, momentum=momentum, dtype=torch.float64)
        for _ in range(3):
            x = rng.standard_normal((2, 3, 2, 2))
            ours(mg.tensor(x))
            theirs(torch.tensor(x))
        old = {k: v.clone() * 2 for k, v in theirs.state_dict().items()
               if k != "num_batches_tracked"}
        report = ours.load_state_dict({k: mg.tensor(v.numpy()) for k, v in old.items()})
        assert repr(report) == repr(theirs.load_state_dict(old))
        same_state(("old", momentum), ours, theirs)
        x = rng.standard_normal((2, 3, 2, 2))
        close(ours(mg.tensor(x)), theirs(torch.tensor(x)))
        same_state(("old, then a step", momentum), ours, theirs)
        bad = {**old, "running_mean": torch.zeros(4, dtype=torch.float64)}
        assert outcome(lambda: ours.load_state_dict({k: mg.tensor(v.numpy())
                                                     for k, v in bad.items()}),
                       lambda: theirs.load_state_dict(bad)) is None


@pytest.mark.parametrize("cls, shape", [
    ("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm1d", (4, 3, 5)), ("LazyBatchNorm2d", (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (2, 3, 2, 2, 2)), ("LazyInstanceNorm1d", (2, 3, 5)),
    ("LazyInstanceNorm2d", (2, 3, 4, 4)), ("LazyInstanceNorm3d", (2, 3, 2, 2, 2))])
def test_lazy_modules(cls, shape):
    rng = np.random.default_rng(len(shape))
    for affine, track, momentum in itertools.product((True, False), (True, False), (0.1, None)):
        tag = (cls, affine, track, momentum)
        ours = getattr(nn, cls)(1e-5, momentum, affine, track, dtype=mg.float64)
        theirs = getattr(torch.nn, cls)(1e-5, momentum, affine, track, dtype=torch.float64)
        for step in range(2):
            xs = pair(rng.standard_normal(shape))
            ys = (ours(xs[0]), theirs(xs[1]))
            close(*ys, what=tag + (step,))
            backward_both(ys, rng.standard_normal(shape))
            close(xs[0].grad, xs[1].grad, what=tag + (step,))
        assert type(ours).__name__ == type(theirs).__name__
        same_state(tag, ours, theirs)


# ----- gradient modes, requires_grad combinations, in-place statistics --------------------
def test_grad_modes():
    rng = np.random.default_rng(13)
    for mode, name in itertools.product(("no_grad", "inference_mode"),
                                        ("BatchNorm1d", "LayerNorm", "GroupNorm",
                                         "InstanceNorm1d", "RMSNorm")):
        args = {"BatchNorm1d": (3,), "LayerNorm": (5,), "GroupNorm": (3, 3),
                "InstanceNorm1d": (3, 1e-5, 0.1, True, True), "RMSNorm": (5,)}[name]
        ours = getattr(nn, name)(*args, dtype=mg.float64)
        theirs = getattr(torch.nn, name)(*args, dtype=torch.float64)
        x = rng.standard_normal((4, 3, 5))
        with getattr(mg, mode)(), getattr(torch, mode)():
            y, y_t = ours(mg.tensor(x)), theirs(torch.tensor(x))
        close(y, y_t, what=(mode, name))
        assert y.requires_grad == y_t.requires_grad and (y.grad_fn is None) == (y_t.grad_fn is None)
        for key, value in theirs.named_buffers():
            close(getattr(ours, key), value, what=(mode, name, key))


@pytest.mark.parametrize("impl", IMPLS)
def test_requires_grad_combinations(impl):
    rng = np.random.default_rng(14)
    x, r = rng.standard_normal((3, 4, 6)), rng.standard_normal((3, 4, 6))
    w6, b6, w4, b4 = (rng.standard_normal(n) for n in (6, 6, 4, 4))
    stats = (rng.standard_normal(4), rng.random(4) + 0.5)
    calls = {
        "layer_norm": (lambda X, R, w, b: F.layer_norm(X, (6,), w, b, impl=impl),
                       lambda X, R, w, b: TF.layer_norm(X, (6,), w, b), (w6, b6)),
        "rms_norm": (lambda X, R, w, b: F.rms_norm(X, (6,), w, impl=impl),
                     lambda X, R, w, b: TF.rms_norm(X, (6,), w), (w6, b6)),
        "group_norm": (lambda X, R, w, b: F.group_norm(X, 2, w, b, impl=impl),
                       lambda X, R, w, b: TF.group_norm(X, 2, w, b), (w4, b4)),
        "instance_norm": (lambda X, R, w, b: F.instance_norm(X, None, None, w, b, impl=impl),
                          lambda X, R, w, b: TF.instance_norm(X, None, None, w, b), (w4, b4)),
        "batch_norm": (lambda X, R, w, b: F.batch_norm(X, None, None, w, b, True, impl=impl),
                       lambda X, R, w, b: TF.batch_norm(X, None, None, w, b, True), (w4, b4)),
        "batch_norm eval": (
            lambda X, R, w, b: F.batch_norm(X, mg.tensor(stats[0]), mg.tensor(stats[1]), w, b,
                                            impl=impl),
            lambda X, R, w, b: TF.batch_norm(X, torch.tensor(stats[0]), torch.tensor(stats[1]),
                                             w, b), (w4, b4)),
        "add_layer_norm": (lambda X, R, w, b: sum(F.add_layer_norm(X, R, (6,), w, b, impl=impl)),
                           lambda X, R, w, b: TF.layer_norm(X + R, (6,), w, b) + (X + R),
                           (w6, b6)),
        "add_rms_norm": (lambda X, R, w, b: sum(F.add_rms_norm(X, R, (6,), w, impl=impl)),
                         lambda X, R, w, b: TF.rms_norm(X + R, (6,), w) + (X + R), (w6, b6)),
    }
    for (name, (ours, theirs, params)), flags in itertools.product(
            calls.items(), itertools.product((True, False), repeat=3)):
        if not any(flags):
            continue
        arrays = (x, r) + params
        wants = (flags[0], flags[0], flags[1], flags[2])
        m = [mg.tensor(a, requires_grad=f) for a, f in zip(arrays, wants)]
        t = [torch.tensor(a, requires_grad=f) for a, f in zip(arrays, wants)]
        y, y_t = ours(*m), theirs(*t)
        close(y, y_t, what=(name, flags))
        assert y.requires_grad == y_t.requires_grad, (name, flags)
        if not y_t.requires_grad:
            continue
        backward_both((y, y_t), rng.standard_normal(x.shape))
        for a, b in zip(m, t):
            close(a.grad, b.grad, what=(name, flags))


@pytest.mark.parametrize("impl", IMPLS)
def test_running_statistics_in_place(impl):
    """``F.batch_norm(training=True)`` and ``F.instance_norm`` move the Tensors they are
    given in place (a strided view of a larger buffer too), eval moves nothing;
    ``instance_norm`` moves their version counters as torch's."""
    rng = np.random.default_rng(15)
    x = rng.standard_normal((4, 3, 5))
    for training in (True, False):
        buffer, buffer_t = mg.tensor(rng.standard_normal(6)), None
        buffer_t = torch.tensor(buffer.numpy().copy())
        var, var_t = pair(rng.random(3) + 0.5, requires_grad=False)
        close(F.batch_norm(mg.tensor(x), buffer[::2], var, training=training, impl=impl),
              TF.batch_norm(torch.tensor(x), buffer_t[::2], var_t, training=training))
        close(buffer, buffer_t)
        close(var, var_t)
    mean, mean_t = pair(np.zeros(3), requires_grad=False)
    var, var_t = pair(np.ones(3), requires_grad=False)
    versions = mean._version, mean_t._version
    close(F.instance_norm(mg.tensor(x), mean, var, impl=impl),
          TF.instance_norm(torch.tensor(x), mean_t, var_t))
    assert mean._version - versions[0] == mean_t._version - versions[1]
    close(mean, mean_t)
    close(var, var_t)


@pytest.mark.parametrize("cpu_kernels", kernels.CPU_KERNELS)
def test_running_statistics_of_special_values(cpu_kernels):
    """A channel holding inf, NaN or one constant: the running statistics of BatchNorm and
    InstanceNorm (each sample's statistics averaged: inf stays inf, not NaN) as torch's, on
    every CPU kernel, in float64 and float32."""
    rng = np.random.default_rng(19)
    for kind, impl, cls, dtype in itertools.product(("inf", "-inf", "nan", "const"), IMPLS,
                                                    ("BatchNorm1d", "InstanceNorm1d"),
                                                    ("float64", "float32")):
        if kind == "const" and dtype == "float32":
            continue        # torch's float32 sums leave a constant channel a rounding residue
        md, td, tol = DTYPES[dtype]
        x = rng.standard_normal((4, 3, 5))
        if kind == "const":
            x[:, 2] = 3.3
        else:
            x[1, 1, 2] = float(kind)
        kwargs = {"track_running_stats": True} if cls.startswith("Instance") else {}
        ours = getattr(nn, cls)(3, dtype=md, impl=impl, **kwargs)
        theirs = getattr(torch.nn, cls)(3, dtype=td, **kwargs)
        tag = (kind, impl, cls, dtype)
        with mg.cpu_kernels(cpu_kernels):
            for training in (True, True, False):
                ours.train(training)
                theirs.train(training)
                close(ours(mg.tensor(x, dtype=md)), theirs(torch.tensor(x, dtype=td)), tol, tag)
                for name in ("running_mean", "running_var"):
                    close(getattr(ours, name), getattr(theirs, name), tol, tag + (name,))


# ----- half-precision modules -------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_modules_in_low_precision(dtype):
    rng = np.random.default_rng(16)
    md, td, tol = DTYPES[dtype]
    specs = [("BatchNorm1d", (3,), {}), ("BatchNorm2d", (3,), {}), ("LayerNorm", (5,), {}),
             ("GroupNorm", (3, 3), {}), ("RMSNorm", (5,), {}),
             ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True})]
    for (name, args, kwargs), impl in itertools.product(specs, IMPLS):
        shape = (2, 3, 4, 5) if name == "BatchNorm2d" else (4, 3, 5)
        ours = getattr(nn, name)(*args, dtype=md, impl=impl, **kwargs)
        theirs = getattr(torch.nn, name)(*args, dtype=td, **kwargs)
        set_random(ours, theirs, rng)
        for step, training in enumerate((True, True, False)):
            ours.train(training)
            theirs.train(training)
            x = rng.standard_normal(shape) * 2 + 1
            xs = pair(x, dtype)
            ys = (ours(xs[0]), theirs(xs[1]))
            scale = 1 if impl == "fused" else 4
            tag = (name, dtype, impl, step)
            close(*ys, tol * 3 * scale, tag)
            backward_both(ys, rng.standard_normal(shape), dtype)
            close(xs[0].grad, xs[1].grad, tol * 30 * scale, tag)
            for key, param in theirs.named_parameters():
                close(getattr(ours, key).grad, param.grad, tol * 30 * scale, tag + (key,))
            for key, value in theirs.named_buffers():
                close(getattr(ours, key), value, tol * 3 * scale, tag + (key,))


# ----- bad arguments: torch's exception classes -------------------------------------------
def _errors():
    x = np.random.default_rng(17).standard_normal((4, 3, 5))

    def both(ours, theirs):
        return (lambda: ours(mg, F, mg.tensor(x)), lambda: theirs(torch, TF, torch.tensor(x)))

    def f64(lib, *shape, fill=0.0):
        return lib.full(shape, fill, dtype=lib.float64)

    return {
        "layer_norm shape": both(lambda m, f, t: f.layer_norm(t, (4,)),
                                 lambda m, f, t: f.layer_norm(t, (4,))),
        "layer_norm too long": both(lambda m, f, t: f.layer_norm(t, (2, 4, 3, 5)),
                                    lambda m, f, t: f.layer_norm(t, (2, 4, 3, 5))),
        "layer_norm empty shape": both(lambda m, f, t: f.layer_norm(t, ()),
                                       lambda m, f, t: f.layer_norm(t, ())),
        "layer_norm weight shape": both(lambda m, f, t: f.layer_norm(t, (5,), f64(m, 4)),
                                        lambda m, f, t: f.layer_norm(t, (5,), f64(m, 4))),
        "layer_norm bias shape": both(lambda m, f, t: f.layer_norm(t, (5,), None, f64(m, 4)),
                                      lambda m, f, t: f.layer_norm(t, (5,), None, f64(m, 4))),
        "layer_norm weight dtype": both(
            lambda m, f, t: f.layer_norm(t, (5,), m.ones(5, dtype=m.float32)),
            lambda m, f, t: f.layer_norm(t, (5,), m.ones(5, dtype=m.float32))),
        "rms_norm shape": both(lambda m, f, t: f.rms_norm(t, (4,)),
                               lambda m, f, t: f.rms_norm(t, (4,))),
        "rms_norm weight shape": both(lambda m, f, t: f.rms_norm(t, (5,), f64(m, 4)),
                                      lambda m, f, t: f.rms_norm(t, (5,), f64(m, 4))),
        "group_norm divides": both(lambda m, f, t: f.group_norm(t, 2),
                                   lambda m, f, t: f.group_norm(t, 2)),
        "group_norm 0 groups": both(lambda m, f, t: f.group_norm(t, 0),
                                    lambda m, f, t: f.group_norm(t, 0)),
        "group_norm -1 groups": both(lambda m, f, t: f.group_norm(t, -3),
                                     lambda m, f, t: f.group_norm(t, -3)),
        "group_norm 1-d": both(lambda m, f, t: f.group_norm(t[0, 0], 1),
                               lambda m, f, t: f.group_norm(t[0, 0], 1)),
        "group_norm weight shape": both(lambda m, f, t: f.group_norm(t, 3, f64(m, 4)),
                                        lambda m, f, t: f.group_norm(t, 3, f64(m, 4))),
        "GroupNorm(0, 4)": (lambda: nn.GroupNorm(0, 4), lambda: torch.nn.GroupNorm(0, 4)),
        "batch_norm stat shape": both(
            lambda m, f, t: f.batch_norm(t, f64(m, 4), f64(m, 3, fill=1.0)),
            lambda m, f, t: f.batch_norm(t, f64(m, 4), f64(m, 3, fill=1.0))),
        "batch_norm weight shape": both(
            lambda m, f, t: f.batch_norm(t, None, None, f64(m, 4), training=True),
            lambda m, f, t: f.batch_norm(t, None, None, f64(m, 4), training=True)),
        "batch_norm stat dtype": both(
            lambda m, f, t: f.batch_norm(t, m.zeros(3), m.ones(3), training=True),
            lambda m, f, t: f.batch_norm(t, m.zeros(3), m.ones(3), training=True)),
        "batch_norm int stats": both(
            lambda m, f, t: f.batch_norm(t, m.zeros(3, dtype=m.int64), m.ones(3, dtype=m.int64)),
            lambda m, f, t: f.batch_norm(t, m.zeros(3, dtype=m.int64), m.ones(3, dtype=m.int64))),
        "batch_norm eval without stats": both(lambda m, f, t: f.batch_norm(t, None, None),
                                              lambda m, f, t: f.batch_norm(t, None, None)),
        "batch_norm 1-d training": both(
            lambda m, f, t: f.batch_norm(t[0, 0], None, None, training=True),
            lambda m, f, t: f.batch_norm(t[0, 0], None, None, training=True)),
        "batch_norm 0-d training": both(
            lambda m, f, t: f.batch_norm(t[0, 0, 0], None, None, training=True),
            lambda m, f, t: f.batch_norm(t[0, 0, 0], None, None, training=True)),
        "batch_norm momentum None": both(
            lambda m, f, t: f.batch_norm(t, f64(m, 3), f64(m, 3, fill=1.0), training=True,
                                         momentum=None),
            lambda m, f, t: f.batch_norm(t, f64(m, 3), f64(m, 3, fill=1.0), training=True,
                                         momentum=None)),
        "batch_norm eps 0 training": both(
            lambda m, f, t: f.batch_norm(t, None, None, training=True, eps=0.0),
            lambda m, f, t: f.batch_norm(t, None, None, training=True, eps=0.0)),
        "batch_norm one of the stats": both(
            lambda m, f, t: f.batch_norm(t, f64(m, 3), None, training=True),
            lambda m, f, t: f.batch_norm(t, f64(m, 3), None, training=True)),
        "batch_norm stat requires grad": both(
            lambda m, f, t: f.batch_norm(t, m.zeros(3, dtype=m.float64, requires_grad=True),
                                         f64(m, 3, fill=1.0), training=True),
            lambda m, f, t: f.batch_norm(t, m.zeros(3, dtype=m.float64, requires_grad=True),
                                         f64(m, 3, fill=1.0), training=True)),
        "instance_norm stat shape": both(
            lambda m, f, t: f.instance_norm(t, f64(m, 4), f64(m, 4, fill=1.0)),
            lambda m, f, t: f.instance_norm(t, f64(m, 4), f64(m, 4, fill=1.0))),
        "instance_norm eval without stats": both(
            lambda m, f, t: f.instance_norm(t, use_input_stats=False),
            lambda m, f, t: f.instance_norm(t, use_input_stats=False)),
        "instance_norm one of the stats": both(
            lambda m, f, t: f.instance_norm(t, f64(m, 3)),
            lambda m, f, t: f.instance_norm(t, f64(m, 3))),
        "instance_norm 1-d": both(lambda m, f, t: f.instance_norm(t[0, 0]),
                                  lambda m, f, t: f.instance_norm(t[0, 0])),
        "local_response_norm size 0": both(lambda m, f, t: f.local_response_norm(t, 0),
                                           lambda m, f, t: f.local_response_norm(t, 0)),
        "local_response_norm 2-d": both(lambda m, f, t: f.local_response_norm(t[0], 2),
                                        lambda m, f, t: f.local_response_norm(t[0], 2)),
        "normalize dim": both(lambda m, f, t: f.normalize(t[0, 0], dim=1),
                              lambda m, f, t: f.normalize(t[0, 0], dim=1)),
        "normalize int": (lambda: F.normalize(mg.tensor([[1, 2]])),
                          lambda: TF.normalize(torch.tensor([[1, 2]]))),
        "LayerNorm float32 on float64": both(lambda m, f, t: m.nn.LayerNorm(5)(t),
                                             lambda m, f, t: m.nn.LayerNorm(5)(t)),
        "BatchNorm1d float32 on float64": both(lambda m, f, t: m.nn.BatchNorm1d(3)(t),
                                               lambda m, f, t: m.nn.BatchNorm1d(3)(t)),
        "GroupNorm float32 on float64": both(lambda m, f, t: m.nn.GroupNorm(3, 3)(t),
                                             lambda m, f, t: m.nn.GroupNorm(3, 3)(t)),
        "BatchNorm1d wrong channels": both(lambda m, f, t: m.nn.BatchNorm1d(4)(t),
                                           lambda m, f, t: m.nn.BatchNorm1d(4)(t)),
        "InstanceNorm1d wrong channels": both(
            lambda m, f, t: m.nn.InstanceNorm1d(4, affine=True)(t),
            lambda m, f, t: m.nn.InstanceNorm1d(4, affine=True)(t)),
    }


def test_errors():
    for name, (ours, theirs) in _errors().items():
        assert outcome(ours, theirs, name) is None, name


def test_failed_call_changes_nothing():
    """A refused training call leaves the running statistics as they were."""
    x = mg.tensor(np.random.default_rng(18).standard_normal((4, 3, 5)))
    mean, var = mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64)
    with pytest.raises(RuntimeError):
        F.batch_norm(x, mean, mg.ones(4, dtype=mg.float64), training=True)
    with pytest.raises(RuntimeError):
        F.batch_norm(x, mean, var, mg.ones(4, dtype=mg.float64), training=True)
    assert (mean.numpy() == 0).all() and (var.numpy() == 1).all()
    assert mean._version == 0 and var._version == 0

"""A differential sweep of the normalization family against PyTorch, run at test time: the
modules (BatchNorm1d/2d/3d and their lazy forms, SyncBatchNorm in one process, LayerNorm,
GroupNorm, InstanceNorm1d/2d/3d and their lazy forms, RMSNorm, LocalResponseNorm) and the
functionals (batch_norm, layer_norm, group_norm, instance_norm, rms_norm,
local_response_norm, normalize, and the residual forms against the composition PyTorch users
write), both ``impl``s of every norm that has two.

Cases are drawn by seeded loops over constructor flags, train/eval switches, dtypes, special
values, layouts and ranks; each compares outputs, gradients (double backward too), running
statistics, state dicts and reprs. The modules' constructors, state and bad arguments are
test_fuzz_norm_modules.py's; the helpers both share, helpers/norm_parity.py's. The
documented differences (docs/pytorch.md) are left out: refused negative eps and momentum,
float32 rows whose squares overflow, the textbook composite graphs' half-precision overflow,
float32 parameters beside half input, a failed training call's ``num_batches_tracked``, the
layouts of some results."""
# Every lambda a loop makes here is called before the loop moves on (``outcome``, the
# call tables): the late binding B023 warns of cannot happen.
# ruff: noqa: B023

import itertools
import warnings

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from norm_parity import DTYPES, IMPLS, backward_both, close, grads, outcome, pair, same_state

torch = pytest.importorskip("torch")
TF = torch.nn.functional


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ----- BatchNorm modules: flags, steps, train/eval switches -------------------------------
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("cls, shape", [("BatchNorm1d", (4, 3)), ("BatchNorm1d", (4, 3, 5)),
                                        ("BatchNorm2d", (2, 3, 4, 5)),
                                        ("BatchNorm3d", (2, 3, 2, 3, 2)),
                                        ("SyncBatchNorm", (2, 3, 4, 2))])
def test_batch_norm_module_steps(cls, shape, impl):
    rng = np.random.default_rng(len(shape) + len(cls))
    for affine, track, momentum in itertools.product((True, False), (True, False),
                                                     (0.1, None, 1.0)):
        tag = (cls, shape, affine, track, momentum, impl)
        ours = getattr(nn, cls)(3, 1e-5, momentum, affine, track, dtype=mg.float64, impl=impl)
        theirs = getattr(torch.nn, cls)(3, 1e-5, momentum, affine, track, dtype=torch.float64)
        for step, training in enumerate((True, True, False, True)):
            ours.train(training)
            theirs.train(training)
            x, x_t = pair(rng.standard_normal(shape) * 3 + 1)
            ys = (ours(x), theirs(x_t))
            close(*ys, what=tag + (step,))
            backward_both(ys, rng.standard_normal(shape))
            close(x.grad, x_t.grad, what=tag + (step, "x"))
            for name, param in theirs.named_parameters():
                close(getattr(ours, name).grad, param.grad, what=tag + (step, name))
            for name, buffer in theirs.named_buffers():
                close(getattr(ours, name), buffer, what=tag + (step, name))
        same_state(tag, ours, theirs)


@pytest.mark.parametrize("cls, shape", [
    ("BatchNorm1d", (1, 3)), ("BatchNorm1d", (1, 3, 1)), ("BatchNorm1d", (1, 3, 2)),
    ("BatchNorm1d", (0, 3)), ("BatchNorm2d", (0, 3, 2, 2)), ("BatchNorm2d", (1, 3, 1, 1)),
    ("BatchNorm1d", (3,)), ("BatchNorm2d", (3, 4, 4)), ("BatchNorm1d", (2, 3, 4, 5)),
    ("BatchNorm1d", (4, 2)), ("BatchNorm3d", (2, 3, 2, 2)), ("SyncBatchNorm", (3,))])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_module_batches(cls, shape, training):
    """Batch of one in training (torch's "Expected more than 1 value per channel"), empty
    batches, unbatched or wrong-rank inputs, a wrong channel count: torch's class; a call
    that succeeds gives torch's values and running statistics."""
    ours = getattr(nn, cls)(3, dtype=mg.float64).train(training)
    theirs = getattr(torch.nn, cls)(3, dtype=torch.float64).train(training)
    x = np.random.default_rng(0).standard_normal(shape)
    result = outcome(lambda: ours(mg.tensor(x)), lambda: theirs(torch.tensor(x)), shape)
    if result is not None:
        close(*result)
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            close(getattr(ours, name), getattr(theirs, name), what=name)


# ----- InstanceNorm modules ---------------------------------------------------------------
@pytest.mark.parametrize("cls, shape", [
    ("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)), ("InstanceNorm1d", (3,)),
    ("InstanceNorm1d", (2, 3, 1)), ("InstanceNorm2d", (2, 3, 4, 5)), ("InstanceNorm2d", (3, 4, 5)),
    ("InstanceNorm3d", (2, 3, 2, 3, 2)), ("InstanceNorm3d", (3, 2, 3, 2)),
    ("InstanceNorm2d", (2, 4, 4, 5))])
def test_instance_norm_modules(cls, shape):
    rng = np.random.default_rng(len(shape))
    for affine, track, momentum in itertools.product((True, False), (True, False), (0.1, None)):
        for training in (True, False):
            tag = (cls, shape, affine, track, momentum, training)
            ours = getattr(nn, cls)(3, 1e-5, momentum, affine, track, dtype=mg.float64)
            theirs = getattr(torch.nn, cls)(3, 1e-5, momentum, affine, track,
                                            dtype=torch.float64)
            ours.train(training)
            theirs.train(training)
            x, x_t = pair(rng.standard_normal(shape) * 2 + 0.5)
            result = outcome(lambda: ours(x), lambda: theirs(x_t), tag)
            if result is not None:
                close(*result, what=tag)
                backward_both(result, rng.standard_normal(shape))
                close(x.grad, x_t.grad, what=tag)
                for name, param in theirs.named_parameters():
                    close(getattr(ours, name).grad, param.grad, what=tag + (name,))
            same_state(tag, ours, theirs)


# ----- LayerNorm and RMSNorm, functional: dtypes, shapes, special values ------------------
ROW_SHAPES = [((4, 6), 6), ((2, 3, 6), (6,)), ((2, 3, 6), [3, 6]), ((2, 3, 4), (2, 3, 4)),
              ((5,), 5), ((0, 4), 4), ((3, 1), 1)]
SPECIALS = ("normal", "const", "nan", "inf", "huge", "tiny")


def _special(rng, shape, special, dtype):
    x = rng.standard_normal(shape)
    half = dtype in ("float16", "bfloat16")
    if special == "const":
        x = np.full(shape, 0.3)
    elif special == "nan" and x.size:
        x.flat[0] = np.nan
    elif special == "inf" and x.size:
        x.flat[-1] = np.inf
    elif special == "huge":
        x = x * (1e3 if dtype == "float16" else 1e30)
    elif special == "tiny":
        x = x * (1e-3 if half else 1e-30)
    return x


def _row_case_documented(dtype, impl, special, shape):
    # float32 rows whose squared deviations overflow; the composite graph's half-precision
    # intermediates (docs/precision.md); torch's own cancellation in a row of one huge value
    return ((special == "huge" and dtype in ("float32", "bfloat16"))
            or (impl == "composite" and dtype in ("float16", "bfloat16")
                and special in ("tiny", "huge"))
            or (special == "huge" and shape[-1] == 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("impl", IMPLS)
def test_row_norms(dtype, impl):
    rng = np.random.default_rng(list(DTYPES).index(dtype))
    tol = DTYPES[dtype][2]
    for (shape, ns), with_params, special in itertools.product(ROW_SHAPES, ("wb", "w", ""),
                                                                SPECIALS):
        if _row_case_documented(dtype, impl, special, shape):
            continue
        if special != "normal" and with_params == "w":
            continue        # the statistics do not see the parameters: "wb" and "" suffice
        tag = (dtype, impl, shape, ns, with_params, special)
        x = _special(rng, shape, special, dtype)
        nshape = (ns,) if isinstance(ns, int) else tuple(ns)
        w = rng.standard_normal(nshape) if "w" in with_params else None
        b = rng.standard_normal(nshape) if "b" in with_params else None
        upstream = rng.standard_normal(shape)
        grad_tol = tol * (1e3 if special in ("huge", "tiny", "const") and dtype == "float32"
                          else 10)
        for name in ("layer_norm", "rms_norm"):
            xs, ws, bs = pair(x, dtype), pair(w, dtype), pair(b, dtype)
            if name == "layer_norm":
                ys = (F.layer_norm(xs[0], ns, ws[0], bs[0], 1e-5, impl=impl),
                      TF.layer_norm(xs[1], nshape if isinstance(ns, int) else ns, ws[1], bs[1],
                                    1e-5))
            else:           # "gemma": x̂·w rounded once, as torch's
                ys = (F.rms_norm(xs[0], ns, ws[0], None, impl=impl, casting="gemma"),
                      TF.rms_norm(xs[1], nshape if isinstance(ns, int) else ns, ws[1], None))
                bs = (None, None)
            close(*ys, tol, tag + (name,))
            if not x.size:
                continue
            backward_both(ys, upstream, dtype)
            for ours, theirs, what in zip(grads((xs[0], ws[0], bs[0])),
                                          grads((xs[1], ws[1], bs[1])), "xwb"):
                close(ours, theirs, grad_tol, tag + (name, what))


# ----- GroupNorm, InstanceNorm, BatchNorm functionals -------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("impl", IMPLS)
def test_group_norm(dtype, impl):
    rng = np.random.default_rng(7 + list(DTYPES).index(dtype))
    tol = DTYPES[dtype][2]
    cases = [((2, 6, 5), 3), ((2, 6, 5), 6), ((2, 6, 5), 1), ((3, 4), 2), ((2, 6, 2, 3), 2),
             ((2, 6, 2, 2, 2), 3), ((0, 6, 3), 3), ((1, 4, 1), 4), ((2, 6, 5), 4), ((6,), 3)]
    for (shape, groups), with_params, special in itertools.product(
            cases, ("wb", "w", ""), ("normal", "const", "nan")):
        tag = (dtype, impl, shape, groups, with_params, special)
        x = rng.standard_normal(shape) * 2 + 1
        if special == "const":
            x = np.full(shape, 0.7)
        elif special == "nan" and x.size:
            x.flat[1] = np.nan
        c = shape[1] if len(shape) > 1 else 0
        xs = pair(x, dtype)
        ws = pair(rng.standard_normal(c) if "w" in with_params else None, dtype)
        bs = pair(rng.standard_normal(c) if "b" in with_params else None, dtype)
        result = outcome(lambda: F.group_norm(xs[0], groups, ws[0], bs[0], 1e-5, impl=impl),
                         lambda: TF.group_norm(xs[1], groups, ws[1], bs[1], 1e-5), tag)
        if result is None or not x.size:
            continue
        if x.size // (shape[0] * groups) < 3 and dtype in ("float16", "bfloat16"):
            continue        # a group of two: x̂ = ±1 in exact arithmetic, its gradient 0;
            #                 half precision's results are its rounding
        close(*result, tol, tag)
        backward_both(result, rng.standard_normal(shape), dtype)
        for ours, theirs, what in zip(grads((xs[0], ws[0], bs[0])),
                                      grads((xs[1], ws[1], bs[1])), "xwb"):
            close(ours, theirs, tol * 10, tag + (what,))


@pytest.mark.slow
@pytest.mark.parametrize("impl", IMPLS)
def test_instance_and_batch_norm_functionals(impl):
    rng = np.random.default_rng(11)
    for dtype in ("float64", "float32"):
        tol = DTYPES[dtype][2]
        for shape, use_input_stats, with_stats, momentum in itertools.product(
                [(2, 3, 5), (2, 3, 2, 3), (1, 3, 4), (2, 3, 1, 1)], (True, False),
                (True, False), (0.1, 1.0)):
            tag = ("instance_norm", dtype, impl, shape, use_input_stats, with_stats, momentum)
            xs, ws, bs = (pair(rng.standard_normal(s), dtype) for s in (shape, 3, 3))
            stats = [pair(a, dtype, False) if with_stats else (None, None)
                     for a in (rng.standard_normal(3), rng.random(3) + 0.5)]
            result = outcome(
                lambda: F.instance_norm(xs[0], stats[0][0], stats[1][0], ws[0], bs[0],
                                        use_input_stats, momentum, 1e-5, impl=impl),
                lambda: TF.instance_norm(xs[1], stats[0][1], stats[1][1], ws[1], bs[1],
                                         use_input_stats, momentum, 1e-5), tag)
            for ours, theirs in stats:
                close(ours, theirs, tol, tag)
            if result is not None:
                close(*result, tol, tag)
                backward_both(result, rng.standard_normal(shape))
                for ours, theirs in zip(grads((xs[0], ws[0], bs[0])), grads((xs[1], ws[1], bs[1]))):
                    close(ours, theirs, tol * 10, tag)
    for dtype in DTYPES:
        tol = DTYPES[dtype][2]
        stat_dtype = "float32" if dtype in ("float16", "bfloat16") else dtype
        for shape, training, with_stats, params, momentum in itertools.product(
                [(4, 3), (2, 3, 5), (2, 3, 2, 3), (2, 3, 1, 2, 2)], (True, False), (True, False),
                ("wb", "b", ""), (0.1, 1.0)):
            if dtype in ("float16", "bfloat16") and params and with_stats:
                continue    # half parameters beside float32 statistics: torch refuses the mix
            tag = ("batch_norm", dtype, impl, shape, training, with_stats, params, momentum)
            xs = pair(rng.standard_normal(shape) * 2 + 1, dtype)
            ws = pair(rng.standard_normal(3) if "w" in params else None, dtype)
            bs = pair(rng.standard_normal(3) if "b" in params else None, dtype)
            stats = [pair(a, stat_dtype, False) if with_stats else (None, None)
                     for a in (rng.standard_normal(3), rng.random(3) + 0.5)]
            result = outcome(
                lambda: F.batch_norm(xs[0], stats[0][0], stats[1][0], ws[0], bs[0], training,
                                     momentum, 1e-5, impl=impl),
                lambda: TF.batch_norm(xs[1], stats[0][1], stats[1][1], ws[1], bs[1], training,
                                      momentum, 1e-5), tag)
            for ours, theirs in stats:
                close(ours, theirs, tol, tag)
            if result is not None:
                close(*result, tol, tag)
                backward_both(result, rng.standard_normal(shape), dtype)
                for ours, theirs in zip(grads((xs[0], ws[0], bs[0])), grads((xs[1], ws[1], bs[1]))):
                    close(ours, theirs, tol * 10, tag)


# ----- random shapes, float64, every option -----------------------------------------------
@pytest.mark.slow
def test_random_shapes():
    rng = np.random.default_rng(2024)
    for case in range(24):
        impl = IMPLS[case % 2]
        shape = tuple(int(s) for s in rng.integers(1, 5, size=rng.integers(2, 6)))
        c = shape[1]
        x = rng.standard_normal(shape) * rng.choice([1e-3, 1, 1e3]) + rng.choice([0, 5, -1e2])
        ns = shape[len(shape) - rng.integers(1, len(shape)):]
        groups = int(rng.choice([g for g in range(1, c + 1) if c % g == 0]))
        eps, momentum = float(rng.choice([1e-5, 1e-2])), float(rng.choice([0.0, 0.1, 1.0]))
        arrays = [x, rng.standard_normal(ns), rng.standard_normal(ns), rng.standard_normal(c),
                  rng.standard_normal(c)]
        stats = (rng.standard_normal(c), rng.random(c) + 0.2)
        calls = {
            "layer_norm": (lambda m, x, w, b, wc, bc, s: m.layer_norm(x, ns, w, b, eps), False),
            "rms_norm": (lambda m, x, w, b, wc, bc, s: m.rms_norm(x, ns, w, eps), False),
            "group_norm": (lambda m, x, w, b, wc, bc, s: m.group_norm(x, groups, wc, bc, eps),
                           False),
            "batch_norm": (lambda m, x, w, b, wc, bc, s: m.batch_norm(
                x, *s, wc, bc, True, momentum, eps), True),
            "batch_norm eval": (lambda m, x, w, b, wc, bc, s: m.batch_norm(
                x, *s, wc, bc, False, momentum, eps), True),
            "instance_norm": (lambda m, x, w, b, wc, bc, s: m.instance_norm(
                x, *s, wc, bc, True, momentum, eps), True),
        }
        for name, (call, running) in calls.items():
            tag = (case, name, impl, shape, ns, groups)
            ours = [mg.tensor(a, requires_grad=True) for a in arrays]
            theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
            ours_stats = [mg.tensor(s.copy()) for s in stats] if running else ()
            theirs_stats = [torch.tensor(s.copy()) for s in stats] if running else ()

            class Ours:           # F with this case's impl
                def __getattr__(self, attr):
                    return lambda *a: getattr(F, attr)(*a, impl=impl)

            result = outcome(lambda: call(Ours(), *ours, ours_stats),
                             lambda: call(TF, *theirs, theirs_stats), tag)
            for a, b in zip(ours_stats, theirs_stats):
                close(a, b, 1e-8, tag)
            if result is None:
                continue
            close(*result, 1e-7, tag)
            upstream = rng.standard_normal(shape)
            got = mg.grad((result[0] * mg.tensor(upstream)).sum(), ours, allow_unused=True)
            want = torch.autograd.grad((result[1] * torch.tensor(upstream)).sum(), theirs,
                                       allow_unused=True)
            for i, (a, b) in enumerate(zip(got, want)):
                b = torch.zeros(arrays[i].shape, dtype=torch.float64) if b is None else b
                a = mg.zeros(*arrays[i].shape, dtype=mg.float64) if a is None else a
                scale = max(1.0, float(np.abs(b.numpy()).max()))
                close(a, b, 1e-7 * scale, tag + (i,))


# ----- layouts: channels_last, transposed, strided ----------------------------------------
def _layouts(x):
    yield "contiguous", mg.tensor(x), torch.tensor(x)
    if x.ndim in (4, 5):
        fm = (mg.channels_last, torch.channels_last) if x.ndim == 4 else (
            mg.channels_last_3d, torch.channels_last_3d)
        yield ("channels_last", mg.tensor(x).contiguous(memory_format=fm[0]),
               torch.tensor(x).contiguous(memory_format=fm[1]))
    swapped = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    yield ("transposed", mg.tensor(swapped).transpose(-1, -2),
           torch.tensor(swapped).transpose(-1, -2))
    wide = np.repeat(x, 2, axis=-1)
    yield "strided", mg.tensor(wide)[..., ::2], torch.tensor(wide)[..., ::2]


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 2, 3, 4), (4, 3, 6)])
def test_layouts(shape):
    rng = np.random.default_rng(sum(shape))
    c = shape[1]
    for impl, (layout, x0, x0_t) in itertools.product(IMPLS, _layouts(rng.standard_normal(shape))):
        calls = {
            "batch_norm": (lambda x: F.batch_norm(x, None, None, None, None, True, impl=impl),
                           lambda x: TF.batch_norm(x, None, None, None, None, True)),
            "batch_norm eval": (
                lambda x: F.batch_norm(x, mg.zeros(c, dtype=mg.float64) + 0.5,
                                       mg.ones(c, dtype=mg.float64) * 2, impl=impl),
                lambda x: TF.batch_norm(x, torch.zeros(c, dtype=torch.float64) + 0.5,
                                        torch.ones(c, dtype=torch.float64) * 2)),
            "group_norm": (lambda x: F.group_norm(x, 3, impl=impl), lambda x: TF.group_norm(x, 3)),
            "instance_norm": (lambda x: F.instance_norm(x, impl=impl), TF.instance_norm),
            "layer_norm": (lambda x: F.layer_norm(x, x.shape[-2:], impl=impl),
                           lambda x: TF.layer_norm(x, x.shape[-2:])),
            "rms_norm": (lambda x: F.rms_norm(x, x.shape[-1:], impl=impl),
                         lambda x: TF.rms_norm(x, x.shape[-1:])),
            "normalize": (F.normalize, TF.normalize),
        }
        if not (layout == "transposed" and len(shape) == 5):   # torch's view refuses it
            calls["local_response_norm"] = (lambda x: F.local_response_norm(x, 3),
                                            lambda x: TF.local_response_norm(x, 3))
        for name, (ours, theirs) in calls.items():
            tag = (shape, impl, layout, name)
            x, x_t = x0.detach().requires_grad_(), x0_t.detach().requires_grad_()
            ys = (ours(x), theirs(x_t))
            close(*ys, what=tag)
            backward_both(ys, rng.standard_normal(shape))
            close(x.grad, x_t.grad, what=tag)
            if impl == "fused" and name in ("batch_norm", "batch_norm eval", "layer_norm"):
                assert tuple(ys[0].stride()) == tuple(ys[1].stride()), tag


# ----- double backward --------------------------------------------------------------------
def _double(tag, ours, theirs, arrays, rng):
    xs = [mg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, y_t = ours(*xs), theirs(*ts)
    upstream = rng.standard_normal(tuple(y_t.shape))
    first = mg.grad((y * mg.tensor(upstream)).sum(), xs, create_graph=True)
    first_t = torch.autograd.grad((y_t * torch.tensor(upstream)).sum(), ts, create_graph=True)
    directions = [rng.standard_normal(a.shape) for a in arrays]
    second = mg.grad(sum((g * mg.tensor(v)).sum() for g, v in zip(first, directions)), xs,
                     allow_unused=True)
    second_t = torch.autograd.grad(sum((g * torch.tensor(v)).sum()
                                       for g, v in zip(first_t, directions)), ts,
                                   allow_unused=True)
    for i, (a, b) in enumerate(zip(second, second_t)):
        b = torch.zeros(arrays[i].shape, dtype=torch.float64) if b is None else b
        a = mg.zeros(*arrays[i].shape, dtype=mg.float64) if a is None else a
        close(a, b, 1e-8, tag + (i,))


@pytest.mark.parametrize("impl", IMPLS)
def test_double_backward(impl):
    rng = np.random.default_rng(5)
    x, x5, w, b = (rng.standard_normal(s) for s in ((3, 4, 5), (3, 5), 4, 4))
    stats = (rng.standard_normal(4), rng.random(4) + 0.5)
    cases = {
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (5,), w, b, impl=impl),
                       lambda x, w, b: TF.layer_norm(x, (5,), w, b), [x5, w[:1].repeat(5),
                                                                      b[:1].repeat(5)]),
        "rms_norm": (lambda x, w: F.rms_norm(x, (5,), w, 1e-6, impl=impl),
                     lambda x, w: TF.rms_norm(x, (5,), w, 1e-6), [x5, rng.standard_normal(5)]),
        "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b, impl=impl),
                       lambda x, w, b: TF.group_norm(x, 2, w, b), [x, w, b]),
        "batch_norm train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, True, impl=impl),
                             lambda x, w, b: TF.batch_norm(x, None, None, w, b, True), [x, w, b]),
        "batch_norm eval": (
            lambda x, w, b: F.batch_norm(x, mg.tensor(stats[0]), mg.tensor(stats[1]), w, b,
                                         impl=impl),
            lambda x, w, b: TF.batch_norm(x, torch.tensor(stats[0]), torch.tensor(stats[1]), w,
                                          b), [x, w, b]),
        "instance_norm": (lambda x, w, b: F.instance_norm(x, None, None, w, b, impl=impl),
                          lambda x, w, b: TF.instance_norm(x, None, None, w, b), [x, w, b]),
        "add_layer_norm": (lambda x, r, w: sum(F.add_layer_norm(x, r, (5,), w, None, impl=impl)),
                           lambda x, r, w: TF.layer_norm(x + r, (5,), w) + (x + r),
                           [x5, rng.standard_normal((3, 5)), rng.standard_normal(5)]),
        "local_response_norm": (lambda x: F.local_response_norm(x, 3, 0.5, 0.75, 1.0),
                                lambda x: TF.local_response_norm(x, 3, 0.5, 0.75, 1.0), [x]),
        "normalize": (F.normalize, TF.normalize, [x5]),
    }
    for name, (ours, theirs, arrays) in cases.items():
        _double((name, impl), ours, theirs, arrays, rng)


# ----- the residual forms against torch users' composition --------------------------------
@pytest.mark.parametrize("impl", IMPLS)
def test_residual_forms(impl):
    rng = np.random.default_rng(3)
    for shape, ns, with_params in itertools.product([(4, 6), (2, 3, 6)], [(6,)], (True, False)):
        for name in ("add_layer_norm", "add_rms_norm"):
            arrays = [rng.standard_normal(s) for s in (shape, shape, ns, ns)]
            ours = [mg.tensor(a, requires_grad=True) for a in arrays]
            theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
            w, b = (ours[2], ours[3]) if with_params else (None, None)
            w_t, b_t = (theirs[2], theirs[3]) if with_params else (None, None)
            s_t = theirs[0] + theirs[1]
            if name == "add_layer_norm":
                y, s = F.add_layer_norm(ours[0], ours[1], ns, w, b, 1e-5, impl=impl)
                y_t = TF.layer_norm(s_t, ns, w_t, b_t, 1e-5)
            else:
                y, s = F.add_rms_norm(ours[0], ours[1], ns, w, 1e-6, impl=impl)
                y_t = TF.rms_norm(s_t, ns, w_t, 1e-6)
            tag = (name, impl, shape, with_params)
            close(y, y_t, what=tag)
            close(s, s_t, what=tag)
            g1, g2 = rng.standard_normal(shape), rng.standard_normal(shape)
            ((y * mg.tensor(g1)).sum() + (s * s * mg.tensor(g2)).sum()).backward()
            ((y_t * torch.tensor(g1)).sum() + (s_t * s_t * torch.tensor(g2)).sum()).backward()
            for a, t in zip(ours, theirs):
                close(a.grad, t.grad, what=tag)


# ----- LocalResponseNorm and normalize ----------------------------------------------------
def test_local_response_norm():
    rng = np.random.default_rng(9)
    for shape, size, (alpha, beta, k) in itertools.product(
            [(2, 5, 4), (2, 5, 3, 3), (1, 6, 2, 2, 2), (2, 5), (3, 4, 1), (0, 5, 3)],
            [1, 2, 3, 7], [(1e-4, 0.75, 1.0), (0.5, 0.5, 2.0), (0.0, 0.75, 1.0)]):
        tag = (shape, size, alpha, beta, k)
        x, x_t = pair(rng.standard_normal(shape))
        result = outcome(lambda: F.local_response_norm(x, size, alpha, beta, k),
                         lambda: TF.local_response_norm(x_t, size, alpha, beta, k), tag)
        assert repr(nn.LocalResponseNorm(size, alpha, beta, k)) == repr(
            torch.nn.LocalResponseNorm(size, alpha, beta, k))
        if result is None or not x.numel():
            continue
        close(*result, what=tag)
        backward_both(result, rng.standard_normal(shape))
        close(x.grad, x_t.grad, what=tag)
    for dtype in ("float32", "float16", "bfloat16"):
        x = rng.standard_normal((2, 6, 5))
        close(F.local_response_norm(mg.tensor(x, dtype=DTYPES[dtype][0]), 3, 1.0),
              TF.local_response_norm(torch.tensor(x, dtype=DTYPES[dtype][1]), 3, 1.0),
              DTYPES[dtype][2])


def test_normalize():
    rng = np.random.default_rng(10)
    for shape, p, dim, special in itertools.product(
            [(3, 4), (2, 3, 4), (5,), (0, 3), (3, 0)], [2.0, 1, float("inf"), 0.5, -1.0, 0.0],
            [0, -1], ("normal", "zero", "nan")):
        tag = (shape, p, dim, special)
        x = rng.standard_normal(shape)
        if special == "zero" and x.ndim > 1 and x.shape[0]:
            x[0] = 0
        elif special == "nan" and x.size:
            x.flat[0] = np.nan
        xs = pair(x)
        result = outcome(lambda: F.normalize(xs[0], p, dim), lambda: TF.normalize(xs[1], p, dim),
                         tag)
        if result is None or not x.size:
            continue
        close(*result, what=tag)
        backward_both(result, rng.standard_normal(shape))
        close(xs[0].grad, xs[1].grad, what=tag)
    x = rng.standard_normal((3, 4))
    for dtype in ("float32", "float16", "bfloat16"):
        close(F.normalize(mg.tensor(x, dtype=DTYPES[dtype][0])),
              TF.normalize(torch.tensor(x, dtype=DTYPES[dtype][1])), DTYPES[dtype][2])


def test_normalize_out():
    x = np.random.default_rng(1).standard_normal((3, 4))
    out, out_t = mg.empty(3, 4, dtype=mg.float64), torch.empty(3, 4, dtype=torch.float64)
    result = F.normalize(mg.tensor(x), dim=0, out=out)
    assert result is out and TF.normalize(torch.tensor(x), dim=0, out=out_t) is out_t
    close(out, out_t)
    x, x_t = pair(x)
    assert outcome(lambda: F.normalize(x, out=mg.empty(3, 4, dtype=mg.float64)),
                   lambda: TF.normalize(x_t, out=torch.empty(3, 4, dtype=torch.float64))) is None

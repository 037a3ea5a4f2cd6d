"""The norm family's modules and functions against PyTorch in their corners, each run in both
libraries at test time: forward values, the gradients of x and of every parameter, the
buffers after the call, and the exception class on input both refuse. Covers what the other
files of this folder do not: a normalized shape of every spelling, the lazy norms converted
before their first call, empty and one-sample batches, NaN in one row, momentum's corners,
old checkpoints, conversions, copies, weight and spectral normalization, and the documented
differences (docs/pytorch.md) asserted as they stand against torch's current answer."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F

torch = pytest.importorskip("torch")
tF = torch.nn.functional

LIBS = {"torch": (torch, tF), "mg": (mg, F)}


def numpy_of(value):
    if isinstance(value, torch.Tensor):
        value = value.detach()
        return (value.float() if value.dtype == torch.bfloat16 else value).numpy()
    array = np.asarray(value.detach().numpy() if hasattr(value, "detach") else value)
    return array.astype(np.float32) if str(array.dtype) == "bfloat16" else array


def assert_same(expected, actual, tol=1e-7, what=""):
    """Same shape, dtype and values (NaN where torch has NaN)."""
    if expected is None or actual is None:
        assert expected is None and actual is None, what
        return
    e, a = numpy_of(expected), numpy_of(actual)
    assert e.shape == a.shape and e.dtype == a.dtype, (what, e.shape, a.shape, e.dtype, a.dtype)
    np.testing.assert_allclose(a, e, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def outcome(run, lib):
    """run(lib, F) -> dict, or the exception it raised."""
    L, fn = LIBS[lib]
    try:
        return run(L, fn)
    except Exception as error:            # the class is compared, whatever it is
        return error


def assert_as_torch(run, tol=1e-7):
    """run in both libraries: the same exception class (ours may subclass torch's), or the
    same results, key by key."""
    expected, actual = outcome(run, "torch"), outcome(run, "mg")
    if isinstance(expected, Exception):
        assert isinstance(actual, type(expected)), (expected, actual)
        return
    assert not isinstance(actual, Exception), (expected, actual)
    assert expected.keys() == actual.keys()
    for key, value in expected.items():
        if hasattr(value, "shape"):
            assert_same(value, actual[key], tol, key)
        else:
            assert value == actual[key], (key, value, actual[key])


def module_run(cls, args, kwargs, x, train=True, calls=1, dtype="float64", xgrad=True):
    """A run of ``cls(*args, **kwargs)`` on x: parameters drawn, ``calls`` forward calls,
    backward of a drawn weighting of the output; the output, the gradients and buffers."""
    def run(L, _):
        m = getattr(L.nn, cls)(*args, **kwargs).to(getattr(L, dtype))
        rng = np.random.default_rng(0)
        with L.no_grad():
            for _, p in sorted(m.named_parameters()):
                p.copy_(L.tensor(rng.standard_normal(tuple(p.shape))))
        m.train(train)
        for _ in range(calls):
            xt = L.tensor(x).to(getattr(L, dtype)).requires_grad_(xgrad)
            y = m(xt)
        weights = L.tensor(rng.standard_normal(tuple(y.shape))).to(y.dtype)
        (y * weights).sum().backward()
        out = {"y": y, "x.grad": xt.grad}
        out.update({"grad " + n: p.grad for n, p in m.named_parameters()})
        out.update({"buffer " + n: b for n, b in m.named_buffers()})
        return out
    return run


RNG = np.random.default_rng(2024)
X3 = RNG.standard_normal((4, 3, 5))
NAN_ROW = X3.copy()
NAN_ROW[1, 0, 2] = np.nan
CONSTANT = np.ones((4, 3, 5)) * np.arange(1, 4)[None, :, None]

MODULES = [("BatchNorm1d", (3,), {}), ("BatchNorm1d", (3,), {"momentum": None}),
           ("BatchNorm1d", (3,), {"momentum": 1.0}),
           ("BatchNorm1d", (3,), {"affine": False}),
           ("BatchNorm1d", (3,), {"track_running_stats": False}),
           ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}),
           ("InstanceNorm1d", (3,), {"track_running_stats": True, "momentum": None}),
           ("GroupNorm", (3, 3), {}), ("GroupNorm", (1, 3), {"affine": False}),
           ("LayerNorm", (5,), {}), ("LayerNorm", ((3, 5),), {"bias": False}),
           ("LayerNorm", (5,), {"elementwise_affine": False}), ("RMSNorm", (5,), {}),
           ("RMSNorm", ([5],), {"eps": 1e-3}), ("LocalResponseNorm", (2,), {})]
INPUTS = {"drawn": X3, "nan in one row": NAN_ROW, "constant": CONSTANT,
          "transposed": np.ascontiguousarray(X3.transpose(2, 1, 0)).transpose(2, 1, 0),
          "one sample": X3[:1], "one value per channel": X3[:1, :, :1], "empty batch": X3[:0]}


def _id(case):
    cls, args, kwargs = case
    return f"{cls}{args}{kwargs}".replace(" ", "")


# train and eval differ only where running statistics are kept
MODES = [pytest.param(case, train, id=f"{_id(case)}-{'train' if train else 'eval'}")
         for case in MODULES for train in (True, False)
         if train or "Batch" in case[0] or case[2].get("track_running_stats")]


@pytest.mark.parametrize("x", INPUTS.values(), ids=INPUTS.keys())
@pytest.mark.parametrize("case, train", MODES)
def test_module_corner_as_torch(case, train, x):
    if case[0] == "InstanceNorm1d" and x.shape[0] == 0:
        pytest.skip("an empty batch: a documented difference (docs/pytorch.md), tested below")
    # two calls: the running statistics after the second say how momentum mixed them
    assert_as_torch(module_run(*case, x, train=train, calls=2), tol=1e-6)


@pytest.mark.parametrize("dtype, scale", [("float64", 1e30), ("float64", 1e-30),
                                          ("float32", 1e-30), ("float32", 1e10)])
@pytest.mark.parametrize("case", MODULES, ids=_id)
def test_module_far_from_one_as_torch(case, dtype, scale):
    tol = 1e-6 if dtype == "float64" else 2e-4
    assert_as_torch(module_run(*case, X3 * scale, dtype=dtype, xgrad=False), tol=tol)


# ----- normalized_shape, every spelling ---------------------------------------------------
SHAPES_BOTH_REFUSE = {"float": 5.0, "str": "5", "None": None, "bool": True,
                      "tuple of bool": (True,), "tuple of float": (5.0,), "empty": (),
                      "negative": (-5,), "0-d int tensor": "tensor(5)",
                      "list of 0-d float tensor": ["tensor(5.)"]}
SHAPES_BOTH_TAKE = {"tuple": (5,), "list": [5], "numpy int": (np.int64(5),),
                    "list of 0-d int tensor": ["tensor(5)"]}


def shape_in(L, shape):
    """The shape with its Tensor entries made by library L."""
    def one(value):
        if value == "tensor(5)":
            return L.tensor(5)
        return L.tensor(5.0) if value == "tensor(5.)" else value
    return [one(v) for v in shape] if isinstance(shape, list) else one(shape)


@pytest.mark.parametrize("shape", [*SHAPES_BOTH_REFUSE.values(), *SHAPES_BOTH_TAKE.values()],
                         ids=[*SHAPES_BOTH_REFUSE, *SHAPES_BOTH_TAKE])
@pytest.mark.parametrize("form", ["F.layer_norm", "F.rms_norm", "LayerNorm", "RMSNorm"])
def test_normalized_shape_spellings_as_torch(form, shape):
    x = X3[..., :5]

    def run(L, fn):
        ns = shape_in(L, shape)
        if form.startswith("F."):
            return {"y": getattr(fn, form[2:])(L.tensor(x), ns)}
        # torch builds LayerNorm(()) and refuses its call: both refuse by the call
        return {"y": getattr(L.nn, form)(ns).double()(L.tensor(x))}
    assert_as_torch(run)


@pytest.mark.parametrize("shape", [5.0, "5", None, True, (5.0,), "tensor(5)"])
def test_normalized_shape_of_no_ints_is_a_type_error(shape):
    # torch's TypeError, whether its function parses the argument or its module iterates it
    x = mg.tensor(X3)
    for call in (lambda ns: F.layer_norm(x, ns), lambda ns: F.rms_norm(x, ns),
                 mg.nn.LayerNorm, mg.nn.RMSNorm):
        with pytest.raises(TypeError, match="normalized_shape"):
            call(shape_in(mg, shape))


def test_an_int_normalized_shape_in_the_functions_is_the_modules_reading():
    # torch's F refuses the int its modules take (docs/pytorch.md); here both take it
    with pytest.raises(TypeError):
        tF.layer_norm(torch.tensor(X3), 5)
    assert_same(tF.layer_norm(torch.tensor(X3), (5,)), F.layer_norm(mg.tensor(X3), 5))
    assert_same(tF.rms_norm(torch.tensor(X3), (5,)), F.rms_norm(mg.tensor(X3), 5))


# ----- lazy norms converted before their first call ---------------------------------------
LAZY = [("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm2d", (2, 3, 2, 2)),
        ("LazyBatchNorm3d", (2, 3, 2, 1, 2)), ("LazyInstanceNorm1d", (2, 3, 4)),
        ("LazyInstanceNorm2d", (2, 3, 2, 2))]


@pytest.mark.parametrize("convert", ["double", "half", "to float64", "float"])
@pytest.mark.parametrize("cls, shape", LAZY)
def test_lazy_norm_converted_before_its_first_call_as_torch(cls, shape, convert):
    x, weights = RNG.standard_normal(shape), RNG.standard_normal(shape)

    def run(L, _):
        kwargs = {"affine": True, "track_running_stats": True} if "Instance" in cls else {}
        m = getattr(L.nn, cls)(**kwargs)
        m = m.to(L.float64) if convert == "to float64" else getattr(m, convert)()
        dtype = next(m.parameters()).dtype
        xt = L.tensor(x).to(dtype).requires_grad_()
        y = m(xt)
        # a drawn weighting: the plain sum's gradient is 0 in exact arithmetic, and the two
        # libraries' half-precision rounding noise about it is no comparison
        (y.float() * L.tensor(weights).float()).sum().backward()
        out = {"y": y.float(), "x.grad": xt.grad.float(), "class": type(m).__name__,
               "repr": repr(m), "keys": list(m.state_dict())}
        out.update({n: str(b.dtype).split(".")[-1] for n, b in m.state_dict().items()})
        return out
    assert_as_torch(run, tol=2e-3)


def test_lazy_norm_buffers_wait_through_a_conversion():
    m = mg.nn.LazyBatchNorm1d().double()
    assert m.has_uninitialized_params()
    assert isinstance(m.running_mean, mg.nn.UninitializedBuffer)
    m(mg.randn(4, 3, dtype="float64"))
    assert type(m) is mg.nn.BatchNorm1d and m.running_mean.dtype == np.float64


# ----- gradients: double backward, an edited output, stride-0 and transposed inputs --------
FUNCTIONS = {
    "layer_norm": lambda L, f, x, w, b: f.layer_norm(x, (4,), w[:4], b[:4]),
    "rms_norm": lambda L, f, x, w, b: f.rms_norm(x, (4,), w[:4]) + b[:4],
    "batch_norm": lambda L, f, x, w, b: f.batch_norm(x, None, None, w, b, training=True),
    "batch_norm eval": lambda L, f, x, w, b: f.batch_norm(
        x, L.zeros(6, dtype=L.float64) + 0.5, L.ones(6, dtype=L.float64) * 2, w, b),
    "group_norm": lambda L, f, x, w, b: f.group_norm(x, 3, w, b),
    "instance_norm": lambda L, f, x, w, b: f.instance_norm(x, weight=w, bias=b),
    "local_response_norm": lambda L, f, x, w, b: f.local_response_norm(x, 3) * w[:, None],
    "normalize": lambda L, f, x, w, b: f.normalize(x * w[:, None], dim=1) + b[:, None],
}
X = RNG.standard_normal((3, 6, 4))
W, B = np.linspace(0.5, 1.5, 6), np.linspace(-1.0, 1.0, 6)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_double_backward_as_torch(name):
    def run(L, f):
        x, w, b = (L.tensor(a).requires_grad_() for a in (X, W, B))
        y = FUNCTIONS[name](L, f, x, w, b)
        grads = L.autograd.grad((y * y * y).sum(), [x, w, b], create_graph=True)
        sum((g * g).sum() for g in grads).backward()
        return {"gx": grads[0], "gw": grads[1], "gb": grads[2], "ggx": x.grad,
                "ggw": w.grad, "ggb": b.grad}
    assert_as_torch(run, tol=1e-6)


@pytest.mark.parametrize("layout", ["expanded", "transposed", "output edited in place",
                                    "input edited after the call"])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_layouts_and_version_counters_as_torch(name, layout):
    def run(L, f):
        w, b = L.tensor(W).requires_grad_(), L.tensor(B).requires_grad_()
        if layout == "expanded":
            leaf = L.tensor(X[:1]).requires_grad_()
            x = leaf.expand(3, 6, 4)
        elif layout == "transposed":
            leaf = L.tensor(np.ascontiguousarray(X.transpose(0, 2, 1))).requires_grad_()
            x = leaf.transpose(1, 2)
        else:
            leaf = L.tensor(X).requires_grad_()
            x = leaf * 1
        y = FUNCTIONS[name](L, f, x, w, b)
        if layout == "output edited in place":
            y.mul_(2)                        # the norms save no output: allowed in both
        if layout == "input edited after the call":
            x.add_(1)                        # a saved input: both refuse the backward
        (y * L.tensor(X)).sum().backward()
        return {"y": y, "leaf": leaf.grad, "w": w.grad, "b": b.grad}
    assert_as_torch(run, tol=1e-6)


# ----- state: checkpoints, conversions, copies, repr ---------------------------------------
STATEFUL = [("BatchNorm2d", (3,), {}), ("BatchNorm1d", (3,), {"momentum": None}),
            ("BatchNorm3d", (3,), {"affine": False, "track_running_stats": False}),
            ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}),
            ("GroupNorm", (1, 3), {"eps": 1e-3}), ("LayerNorm", ((2, 3),), {"bias": False}),
            ("RMSNorm", (3,), {}), ("LocalResponseNorm", (2, 1e-3, 0.5, 2.0), {}),
            ("CrossMapLRN2d", (3,), {}), ("SyncBatchNorm", (3,), {})]


def state_of(m, prefix=""):
    """The state dict's entries (compared to a tolerance) and their dtypes' names."""
    state = m.state_dict()
    return {**{f"{prefix}{k}": v for k, v in state.items()},
            **{f"{prefix}{k} dtype": str(v.dtype).split(".")[-1] for k, v in state.items()}}


@pytest.mark.parametrize("change", ["repr", "half", "double", "to bfloat16", "deepcopy",
                                    "pickle", "reset_parameters", "metadata"])
@pytest.mark.parametrize("case", STATEFUL, ids=_id)
def test_module_state_as_torch(case, change):
    cls, args, kwargs = case

    def run(L, _):
        m = getattr(L.nn, cls)(*args, **kwargs)
        if change == "repr":
            return {"repr": repr(m)}
        if change == "metadata":
            return {"metadata": dict(L.nn.Sequential(m).state_dict()._metadata)}
        with L.no_grad():
            for p in m.parameters():
                p.fill_(3.0)
        m = {"half": lambda: m.half(), "double": lambda: m.double(),
             "to bfloat16": lambda: m.to(L.bfloat16), "deepcopy": lambda: copy.deepcopy(m),
             "pickle": lambda: pickle.loads(pickle.dumps(m)),
             "reset_parameters": lambda: (m.reset_parameters(), m)[1]
             if hasattr(m, "reset_parameters") else m}[change]()
        return state_of(m)
    assert_as_torch(run)


def _train_batch_norm(L, kwargs, calls=3):
    m = L.nn.BatchNorm1d(3, **kwargs).double()
    rng = np.random.default_rng(0)
    for _ in range(calls):
        m(L.tensor(rng.standard_normal((4, 3))))
    return m


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("version", [1, 2, None])
def test_checkpoint_without_num_batches_tracked_as_torch(version, strict):
    # torch's version-1 rule: a BatchNorm state saved before the counter existed loads
    # with the counter 0; a newer state lacking it is missing a key
    def run(L, _):
        m = _train_batch_norm(L, {})
        state = OrderedDict((k, v) for k, v in m.state_dict().items()
                            if not k.endswith("num_batches_tracked"))
        if version is not None:
            state._metadata = OrderedDict({"": {"version": version}})
        result = m.load_state_dict(state, strict=strict)
        return {**state_of(m), "missing": list(result.missing_keys)}
    assert_as_torch(run)


@pytest.mark.parametrize("kwargs", [{}, {"momentum": None}, {"momentum": 0.0},
                                    {"momentum": 1.0}], ids=str)
def test_running_statistics_and_reset_as_torch(kwargs):
    def run(L, _):
        m = _train_batch_norm(L, kwargs)
        trained = state_of(m, "trained ")
        m.reset_running_stats()
        return {**trained, **state_of(m, "reset ")}
    assert_as_torch(run)


# ----- weight and spectral normalization -------------------------------------------------
LINEAR_W = RNG.standard_normal((4, 3))
LINEAR_X = RNG.standard_normal((5, 3))


def _linear(L):
    m = L.nn.Linear(3, 4, bias=False).double()
    with L.no_grad():
        m.weight.copy_(L.tensor(LINEAR_W))
    return m


@pytest.mark.parametrize("form", ["hook", "parametrization"])
@pytest.mark.parametrize("option", ["weight_norm dim=0", "weight_norm dim=1",
                                    "weight_norm dim=None", "spectral_norm n=1",
                                    "spectral_norm n=3 eval", "spectral_norm dim=1"])
def test_weight_and_spectral_norm_as_torch(option, form):
    def run(L, _):
        L.manual_seed(0)                     # spectral_norm's u, v: torch's draws
        name, setting = option.split(" ", 1)
        utils = L.nn.utils.parametrizations if form == "parametrization" else L.nn.utils
        if name == "weight_norm":
            dim = setting.split("=")[1]
            m = utils.weight_norm(_linear(L), dim=None if dim == "None" else int(dim))
        elif setting.startswith("dim"):
            m = utils.spectral_norm(_linear(L), dim=1)
        else:
            n = int(setting.split()[0][2:])
            m = utils.spectral_norm(_linear(L), n_power_iterations=n)
            m.train(not setting.endswith("eval"))
        y = m(L.tensor(LINEAR_X))
        y.sum().backward()
        out = {"y": y, "keys": sorted(m.state_dict())}
        out.update({"grad " + n: p.grad for n, p in m.named_parameters()})
        return out
    assert_as_torch(run, tol=1e-6)


# ----- SyncBatchNorm ---------------------------------------------------------------------
def test_convert_sync_batchnorm_as_torch():
    def run(L, _):
        model = L.nn.Sequential(L.nn.Conv2d(3, 3, 1), L.nn.BatchNorm2d(3, momentum=None),
                                L.nn.Sequential(L.nn.BatchNorm1d(3, affine=False)))
        converted = L.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        return {"classes": [type(m).__name__ for m in converted.modules()],
                "keys": list(converted.state_dict()), "repr": repr(converted)}
    assert_as_torch(run)


@pytest.mark.parametrize("shape", [(2, 3), (1, 3), (2, 3, 4, 4)])
@pytest.mark.parametrize("train", [True, False])
def test_sync_batch_norm_call_as_torch(shape, train):
    assert_as_torch(module_run("SyncBatchNorm", (3,), {}, RNG.standard_normal(shape),
                               train=train), tol=1e-6)


# ----- the documented differences, against torch's current answer --------------------------
def test_float32_batch_norm_overflow_normalizes_where_torch_gives_the_bias():
    x = (X * 1e30).astype(np.float32)
    bias = np.linspace(-1, 1, 6).astype(np.float32)
    expected = tF.batch_norm(torch.tensor(x), None, None, None, torch.tensor(bias),
                             training=True)
    assert np.allclose(expected.numpy(), bias[None, :, None])   # torch: var = inf
    ours = F.batch_norm(mg.tensor(x), None, None, None, mg.tensor(bias), training=True)
    exact = tF.batch_norm(torch.tensor(x, dtype=torch.float64), None, None, None,
                          torch.tensor(bias, dtype=torch.float64), training=True)
    np.testing.assert_allclose(ours.numpy(), exact.numpy(), rtol=1e-5, atol=1e-5)


def test_float32_group_norm_overflow_gives_the_bias_where_torch_gives_nan():
    x = (X * 1e30).astype(np.float32)
    bias = np.linspace(-1, 1, 6).astype(np.float32)
    expected = tF.group_norm(torch.tensor(x), 6, None, torch.tensor(bias))
    assert torch.isnan(expected).any()
    ours = F.group_norm(mg.tensor(x), 6, None, mg.tensor(bias))
    np.testing.assert_array_equal(ours.numpy(), np.broadcast_to(bias[None, :, None], x.shape))


@pytest.mark.parametrize("cpu_kernels", mg.kernels.CPU_KERNELS)
@pytest.mark.parametrize("norm", ["instance_norm", "batch_norm"])
def test_eval_gradient_of_a_nan_element_is_finite_as_torch(norm, cpu_kernels):
    # given statistics: dx = rstd·w·dy, x̂ (NaN there) takes no part, on every kernel
    def run(L, f):
        x = L.tensor(NAN_ROW).requires_grad_()
        stats = L.zeros(3, dtype=L.float64) + 0.5, L.ones(3, dtype=L.float64) * 2
        weight = L.tensor(np.array([2.0, -1.0, 0.5]))
        if norm == "instance_norm":
            y = f.instance_norm(x, *stats, weight, use_input_stats=False)
        else:
            y = f.batch_norm(x, *stats, weight)
        y.sum().backward()
        return {"y": y, "x.grad": x.grad}
    previous = mg.get_cpu_kernels()
    mg.set_cpu_kernels(cpu_kernels)
    try:
        assert_as_torch(run)
    finally:
        mg.set_cpu_kernels(previous)


def test_instance_norm_of_an_empty_batch_is_empty_and_moves_no_statistic():
    # torch: IndexError with a weight, NaN running statistics without (docs/pytorch.md)
    m = mg.nn.InstanceNorm1d(3, affine=True, track_running_stats=True).double()
    with pytest.raises(IndexError):
        torch.nn.InstanceNorm1d(3, affine=True, track_running_stats=True).double()(
            torch.tensor(X3[:0]))
    assert m(mg.tensor(X3[:0])).shape == (0, 3, 5)
    np.testing.assert_array_equal(m.running_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(m.running_var.numpy(), np.ones(3))


def test_eval_batch_norm_gradient_does_not_depend_on_x():
    def run(L, f):
        x = L.tensor(X).requires_grad_()
        y = f.batch_norm(x, L.zeros(6, dtype=L.float64), L.ones(6, dtype=L.float64) * 4)
        grad, = L.autograd.grad(y.sum(), x, create_graph=True)
        return grad
    expected, ours = run(torch, tF), run(mg, F)
    assert_same(expected, ours)
    assert expected.requires_grad and not ours.requires_grad

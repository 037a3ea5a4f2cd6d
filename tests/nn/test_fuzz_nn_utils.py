"""nn.utils, the module containers and the Module API compared with torch: gradient clipping
of empty gradients, PackedSequence's casts, ParameterDict's repr, the BatchNorm fusions,
skip_init, to_empty, the deprecated names and members put straight into a module's tables."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

LIBS = [("torch", torch), ("mg", mg)]


def _array(tensor):
    return tensor.detach().numpy()


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as error:                 # noqa: BLE001 (the class is compared)
        return "error", error


@pytest.mark.parametrize("norm_type", [float("inf"), "inf", -float("inf"), -1.0, -0.5])
@pytest.mark.parametrize("shapes", [[(0,)], [(2,), (0, 3)], [(3, 0), ()]])
@pytest.mark.parametrize("fn", ["clip_grad_norm_", "get_total_norm"])
def test_norm_without_identity_of_an_empty_gradient_raises(fn, shapes, norm_type):
    results = {}
    for name, lib in LIBS:
        params = []
        for shape in shapes:
            param = lib.nn.Parameter(lib.zeros(shape))
            param.grad = lib.ones(shape)
            params.append(param)
        utils = lib.nn.utils
        if fn == "clip_grad_norm_":
            outcome = _outcome(lambda: utils.clip_grad_norm_(params, 1.0, norm_type))  # noqa
        else:
            grads = [p.grad for p in params]
            outcome = _outcome(lambda: utils.get_total_norm(grads, norm_type))      # noqa
        results[name] = outcome, [_array(p.grad).copy() for p in params]
    (t_status, t_value), t_grads = results["torch"]
    (m_status, m_value), m_grads = results["mg"]
    assert t_status == m_status
    if t_status == "error":
        assert isinstance(m_value, type(t_value))
    else:
        np.testing.assert_allclose(_array(m_value), _array(t_value))
    for t_grad, m_grad in zip(t_grads, m_grads):
        np.testing.assert_array_equal(m_grad, t_grad)       # a failed call changes nothing


@pytest.mark.parametrize("norm_type", [2.0, 0.0, 1.0, 3.0])
def test_norm_with_identity_of_an_empty_gradient(norm_type):
    values = {}
    for name, lib in LIBS:
        grads = [lib.zeros(0), lib.tensor([3.0, -4.0])]
        values[name] = _array(lib.nn.utils.get_total_norm(grads, norm_type))
    np.testing.assert_allclose(values["mg"], values["torch"], rtol=1e-6)


@pytest.mark.parametrize("method", ["double", "float", "half", "long", "int", "short", "char",
                                    "byte", "cpu"])
def test_packed_sequence_casts(method):
    data = np.array([[1.5, -2.0], [3.0, 0.25], [7.0, 1.0]])
    out = {}
    for name, lib in LIBS:
        seqs = [lib.tensor(data[:2]), lib.tensor(data[2:])]
        packed = getattr(lib.nn.utils.rnn.pack_sequence(seqs), method)()
        out[name] = packed, packed.is_pinned(), packed.is_cuda
    t_packed, m_packed = out["torch"][0], out["mg"][0]
    assert str(m_packed.data.dtype) == str(t_packed.data.dtype)
    np.testing.assert_array_equal(_array(m_packed.data), _array(t_packed.data))
    np.testing.assert_array_equal(_array(m_packed.batch_sizes), _array(t_packed.batch_sizes))
    assert out["mg"][1:] == out["torch"][1:]


def test_parameter_dict_repr_and_call():
    reprs = {}
    for name, lib in LIBS:
        params = lib.nn.ParameterDict({"a": lib.ones(2, 3, dtype=lib.float64),
                                       "b": lib.ones(1, dtype=lib.float16), "c": lib.ones(4)})
        reprs[name] = repr(params)
        with pytest.raises(TypeError):
            params()
        with pytest.raises(RuntimeError):
            params(1)
    assert reprs["mg"] == reprs["torch"]


def _layer_and_bn(lib, kind, dtype, bias, affine, seed):
    lib.manual_seed(seed)
    dtype = getattr(lib, dtype)
    if kind == "linear":
        return lib.nn.Linear(3, 4, bias=bias, dtype=dtype), lib.nn.BatchNorm1d(
            4, affine=affine, dtype=dtype)
    layer = {"conv1d": lib.nn.Conv1d, "conv2d": lib.nn.Conv2d,
             "conv_transpose2d": lib.nn.ConvTranspose2d, "conv3d": lib.nn.Conv3d}[kind]
    dims = {"conv1d": 1, "conv2d": 2, "conv_transpose2d": 2, "conv3d": 3}[kind]
    return layer(2, 4, 2, bias=bias, dtype=dtype), getattr(lib.nn, f"BatchNorm{dims}d")(
        4, affine=affine, dtype=dtype)


@pytest.mark.parametrize("kind", ["linear", "conv1d", "conv2d", "conv_transpose2d", "conv3d"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_fuse_batch_norm_eval(kind, dtype, bias, affine):
    rng = np.random.default_rng(len(kind) * 8 + bias * 2 + affine)
    stats = {"running_mean": rng.standard_normal(4), "running_var": rng.random(4) + 0.1}
    if affine:
        stats.update(weight=rng.standard_normal(4), bias=rng.standard_normal(4))
    (t_layer, t_bn), (m_layer, m_bn) = (_layer_and_bn(lib, kind, dtype, bias, affine, 3)
                                        for _, lib in LIBS)
    m_layer.load_state_dict({k: mg.tensor(_array(v).copy()) for k, v in
                             t_layer.state_dict().items()})
    for lib, bn in ((torch, t_bn), (mg, m_bn)):
        for key, value in stats.items():
            getattr(bn, key).data.copy_(lib.tensor(value))
    t_layer.eval(), t_bn.eval(), m_layer.eval(), m_bn.eval()
    if kind == "linear":
        t_call = lambda: torch.nn.utils.fuse_linear_bn_eval(t_layer, t_bn)   # noqa: E731
        m_call = lambda: mg.nn.utils.fuse_linear_bn_eval(m_layer, m_bn)      # noqa: E731
    else:
        transpose = kind == "conv_transpose2d"
        t_call = lambda: torch.nn.utils.fuse_conv_bn_eval(t_layer, t_bn, transpose)  # noqa
        m_call = lambda: mg.nn.utils.fuse_conv_bn_eval(m_layer, m_bn, transpose)     # noqa
    (t_status, t_fused), (m_status, m_fused) = _outcome(t_call), _outcome(m_call)
    assert t_status == m_status
    if t_status == "error":
        assert isinstance(m_fused, type(t_fused))
        return
    assert m_fused is not m_layer and m_fused.weight is not m_layer.weight
    tol = 1e-5 if dtype == "float32" else 1e-12
    for name in ("weight", "bias"):
        t_value, m_value = getattr(t_fused, name), getattr(m_fused, name)
        assert isinstance(m_value, mg.nn.Parameter)
        assert m_value.requires_grad == t_value.requires_grad
        assert str(m_value.dtype) == str(t_value.dtype)
        np.testing.assert_allclose(_array(m_value), _array(t_value), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", ["training", "no_stats", "features"])
def test_fuse_refusals(case):
    errors = {}
    for name, lib in LIBS:
        layer = lib.nn.Linear(3, 4)
        bn = lib.nn.BatchNorm1d(2 if case == "features" else 4,
                                track_running_stats=case != "no_stats")
        layer.train(case == "training")
        bn.eval()
        errors[name] = _outcome(lambda: lib.nn.utils.fuse_linear_bn_eval(layer, bn))  # noqa
    assert errors["torch"][0] == errors["mg"][0] == "error"
    assert type(errors["mg"][1]) is type(errors["torch"][1])


def test_skip_init_and_to_empty():
    for _, lib in LIBS:
        lib.manual_seed(0)
        module = lib.nn.utils.skip_init(lib.nn.Linear, 3, 2, dtype=lib.float64)
        drawn = lib.rand(3)
        lib.manual_seed(0)
        assert bool((lib.rand(3) == drawn).all())          # no draws for the skipped init
        assert module.weight.shape == (2, 3) and module.weight.dtype == lib.float64
        with pytest.raises(RuntimeError):
            lib.nn.utils.skip_init(lib.nn.ReLU)                 # takes no device
        with pytest.raises(RuntimeError):
            lib.nn.utils.skip_init(int)
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        weight = net[0].weight
        weight.grad = lib.ones(2, 2)
        assert net.to_empty(device="cpu") is net and net[0].weight is weight
        assert net[0].weight.grad.shape == (2, 2)
        assert net[1].num_batches_tracked.dtype == lib.int64
        with pytest.raises(TypeError):
            net.to_empty("cpu")                                # device is keyword-only


@pytest.mark.parametrize("fn", ["convert_conv2d_weight_memory_format",
                                "convert_conv3d_weight_memory_format"])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d", "contiguous_format"])
def test_convert_conv_weight_memory_format(fn, fmt):
    results = {}
    for name, lib in LIBS:
        net = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 2), lib.nn.Sequential(
            lib.nn.ConvTranspose2d(3, 2, 2)), lib.nn.Conv3d(1, 2, 2), lib.nn.Linear(2, 2))
        weight = net[0].weight
        status, value = _outcome(lambda: getattr(lib.nn.utils, fn)(net, getattr(lib, fmt)))  # noqa
        strides = [tuple(layer.weight.stride()) for layer in (net[0], net[1][0], net[2])]
        results[name] = status, type(value) if status == "error" else value is net, strides
        assert net[0].weight is weight
    assert results["mg"][0] == results["torch"][0]
    assert issubclass(results["mg"][1], results["torch"][1]) if results["mg"][0] == "error" \
        else results["mg"] == results["torch"]


def test_deprecated_names_warn_and_delegate():
    import microgradnorm.nn.utils.stateless as mg_stateless
    import torch.nn.utils.stateless as torch_stateless
    outs = {}
    for name, lib, stateless in (("torch", torch, torch_stateless), ("mg", mg, mg_stateless)):
        lib.manual_seed(0)
        layer = lib.nn.Linear(2, 2, dtype=lib.float64)
        param = lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))
        param.grad = lib.tensor([3.0, 4.0], dtype=lib.float64)
        with pytest.warns(FutureWarning):
            out = stateless.functional_call(layer, {"weight": lib.eye(2, dtype=lib.float64)},
                                            (lib.ones(1, 2, dtype=lib.float64),))
        with pytest.warns(FutureWarning):
            norm = lib.nn.utils.clip_grad_norm([param], 1.0)
        outs[name] = _array(out), _array(norm), _array(param.grad)
    for t_value, m_value in zip(outs["torch"], outs["mg"]):
        np.testing.assert_allclose(m_value, t_value, rtol=1e-12)


def test_members_put_straight_into_the_tables():
    names = {}
    for name, lib in LIBS:
        layer = lib.nn.Linear(2, 2)
        layer._parameters["scale"] = lib.nn.Parameter(lib.ones(1))
        layer._buffers["count"] = lib.zeros(1)
        layer._modules["act"] = lib.nn.ReLU()
        # (torch also reads them back as attributes, through a __getattr__ this package
        # leaves out to keep attribute access fast; the tables themselves agree)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert not hasattr(layer, "missing")
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'missing'"):
            layer.missing  # noqa: B018
        names[name] = (list(layer.state_dict()), [n for n, _ in layer.named_modules()],
                       [n for n, _ in layer.named_parameters()])
    assert names["mg"] == names["torch"]


@pytest.mark.parametrize("inverse", ["row", "double", "two"])
def test_parametrization_checked_against_the_tensor_before_right_inverse(inverse):
    outcomes = {}
    for name, lib in LIBS:
        class Reshaping(lib.nn.Module):
            def forward(self, *originals):
                return originals[0]

            def right_inverse(self, value):
                if inverse == "two":
                    return value[0], value
                return value[0] if inverse == "row" else value.double()

        layer = lib.nn.Linear(2, 2)
        weight, before = layer.weight, _array(layer.weight).copy()
        status, error = _outcome(lib.nn.utils.parametrize.register_parametrization, layer,
                                 "weight", Reshaping())
        outcomes[name] = status, type(error) if status == "error" else None
        if name == "mg":                        # a refused registration changes nothing here
            assert layer.weight is weight and type(layer) is lib.nn.Linear
            np.testing.assert_array_equal(_array(layer.weight), before)
    assert outcomes["mg"] == outcomes["torch"]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_parameters_to_vector_flattens_by_view(layout):
    outcomes = {}
    for name, lib in LIBS:
        base = lib.arange(24.0).reshape(2, 3, 2, 2)
        tensor = {"contiguous": base, "transposed": base.reshape(6, 4).t(),
                  "sliced": base[:, 1]}[layout]
        status, value = _outcome(lib.nn.utils.parameters_to_vector, [lib.ones(2), tensor])
        outcomes[name] = status, type(value) if status == "error" else _array(value).tolist()
    assert outcomes["mg"] == outcomes["torch"]


@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float16", "float32"),
                                    ("complex64",), ("complex128", "float64"), ("float32",)])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, "0.5", "tensor"])
def test_clip_grad_norm_dtypes(dtypes, norm_type, max_norm):
    results = {}
    for name, lib in LIBS:
        params = []
        for i, dtype in enumerate(dtypes):
            param = lib.nn.Parameter(lib.zeros(3, dtype=getattr(lib, dtype)))
            param.grad = (lib.arange(3.0) * (i + 1.5) - 1).to(getattr(lib, dtype))
            params.append(param)
        limit = lib.tensor(0.5) if max_norm == "tensor" else max_norm
        total = lib.nn.utils.clip_grad_norm_(params, limit, norm_type)
        results[name] = total, [p.grad for p in params]
    (t_total, t_grads), (m_total, m_grads) = results["torch"], results["mg"]
    assert str(m_total.dtype) == str(t_total.dtype)
    np.testing.assert_allclose(_array(m_total), _array(t_total), rtol=1e-6)
    for t_grad, m_grad in zip(t_grads, m_grads):      # the scale in each gradient's dtype
        np.testing.assert_array_equal(_array(m_grad), _array(t_grad))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_clip_scale_rounds_as_torch(dtype):
    # half precision: each step of max_norm / (n + 1e-6) beside a Python scalar in float32
    rng = np.random.default_rng(5)
    grad = rng.standard_normal(64).astype(dtype)
    totals = (10 ** rng.uniform(-3, 4, 40)).astype(dtype)
    for total, max_norm in zip(totals, rng.uniform(0.01, 5, 40)):
        grads = {}
        for name, lib in LIBS:
            param = lib.nn.Parameter(lib.zeros(64, dtype=getattr(lib, dtype)))
            param.grad = lib.tensor(grad)
            lib.nn.utils.clip_grads_with_norm_([param], float(max_norm), lib.tensor(total))
            grads[name] = _array(param.grad)
        np.testing.assert_array_equal(grads["mg"], grads["torch"])


@pytest.mark.parametrize("case", ["int_total", "complex_value", "clip_value_tensor"])
def test_clip_refusals_and_scalars(case):
    outcomes = {}
    for name, lib in LIBS:
        param = lib.nn.Parameter(lib.zeros(3, dtype=lib.complex64 if case == "complex_value"
                                           else lib.float32))
        param.grad = lib.tensor([-2.0, 0.25, 3.0]).to(param.dtype)
        if case == "int_total":
            status, value = _outcome(lib.nn.utils.get_total_norm, [lib.ones(2, dtype=lib.int64)])
        elif case == "complex_value":
            status, value = _outcome(lib.nn.utils.clip_grad_value_, [param], 0.5)
        else:
            status, value = _outcome(lib.nn.utils.clip_grad_value_, [param], lib.tensor(0.5))
        outcomes[name] = status, type(value) if status == "error" else None, _array(param.grad)
    assert outcomes["mg"][:2] == outcomes["torch"][:2]
    np.testing.assert_array_equal(outcomes["mg"][2], outcomes["torch"][2])


@pytest.mark.parametrize("version", [None, 1, 2, "no_metadata"])
@pytest.mark.parametrize("strict", [True, False])
def test_batch_norm_counter_optional_only_in_older_state_dicts(version, strict):
    from collections import OrderedDict
    outcomes = {}
    for name, lib in LIBS:
        net = lib.nn.Sequential(lib.nn.BatchNorm1d(3))
        state = OrderedDict((k, v) for k, v in net.state_dict().items()
                            if not k.endswith("num_batches_tracked"))
        if version != "no_metadata":
            state._metadata = {"0": {} if version is None else {"version": version}}
        status, value = _outcome(net.load_state_dict, state, strict)
        outcomes[name] = status, (isinstance(value, RuntimeError) if status == "error" else
                                  (list(value.missing_keys), list(value.unexpected_keys)))
    assert outcomes["mg"] == outcomes["torch"]

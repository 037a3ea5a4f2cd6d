"""The norms take the eps and momentum PyTorch takes and compute what it computes with them: a
negative eps (NaN wherever var + eps < 0, finite elsewhere), 0, NaN and inf, momenta outside
[0, 1], NaN and None (the cumulative average of the modules). Every norm of the registry
(``norms.SPECS``, read from its declaration) in every impl (``IMPLS``) on every CPU kernel
set (``CPU_KERNELS``), its outputs, gradients and running statistics against torch's; the
modules too. PyTorch's own refusals (BatchNorm's eps <= 0 in training, eps < 0 in eval) are
refused with its exception class; a string is still a TypeError. No RuntimeWarning escapes
(the suite makes one an error)."""

import math
import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import kernels
from microgradnorm.norms import SPECS
from microgradnorm.norms.arguments import IMPLS

torch = pytest.importorskip("torch")
TF = torch.nn.functional

EPSES = [-0.5, 0.0, math.nan, math.inf, -math.inf, 0.3]
MOMENTA = [1.5, -1.2, math.nan, 0.0, 1.0]
# the registry's norms with an eps (the others take none of these arguments)
EPS_SPECS = [spec for spec in SPECS.values() if spec.has_eps]
MOMENTUM_SPECS = [spec for spec in SPECS.values()
                  if any(option.name == "momentum" for option in spec.options)]


def available_cpu_kernels():
    names = []
    for name in kernels.CPU_KERNELS:
        try:
            with kernels.cpu_kernels(name):
                names.append(name)
        except RuntimeError:            # numba not installed
            pass
    return names


CPU = available_cpu_kernels()


def shape_of(spec):
    return (4, 6) if spec.ndim == (2, 2) else (3, 4, 6)


def inputs(spec, seed=0):
    """{name: float64 array}, x spread so that its statistics straddle 0.5: the rows (or
    channels) of a negative eps give NaN, the others stay finite."""
    arrays = spec.make_inputs(shape_of(spec), seed=seed)
    x = np.random.default_rng(seed).standard_normal(arrays[spec.x].shape)
    scale = np.geomspace(0.05, 3.0, x.shape[1]).reshape((1, -1) + (1,) * (x.ndim - 2))
    x = x * scale
    x[0, 0] = 0.5          # a constant row (channel of one sample): a mean and var exact
    arrays[spec.x] = x
    return arrays


def running_stats(spec, arrays):
    """The declared running statistics, the variances spread around 0.5 (eval's NaNs)."""
    running = spec.running_stats(arrays)
    if running is not None:
        var = [i.name for i in spec.inputs_of("running")][-1]
        running[var] = np.geomspace(0.1, 2.0, running[var].size)
    return running


def compare(ours, theirs, what):
    ours = np.asarray(ours, dtype=np.float64)
    theirs = theirs.detach().double().numpy() if isinstance(theirs, torch.Tensor) else theirs
    assert ours.shape == theirs.shape, what
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9, equal_nan=True,
                               err_msg=what)


def run_both(spec, impl, training, **options):
    """Our outputs, gradients and running statistics beside torch's, or the two exception
    classes where torch refuses (ours must be torch's or a subclass)."""
    arrays = inputs(spec)
    running = running_stats(spec, arrays)
    ours_in = {n: mg.tensor(a, requires_grad=n not in spec.constants) for n, a in arrays.items()}
    theirs_in = {n: torch.tensor(a, requires_grad=n not in spec.constants)
                 for n, a in arrays.items()}
    our_running = None if running is None else {n: mg.tensor(a.copy())
                                                for n, a in running.items()}
    their_running = None if running is None else {n: torch.tensor(a.copy())
                                                  for n, a in running.items()}
    try:
        theirs = spec.run_torch(TF, theirs_in, their_running, training=training, **options)
    except Exception as error:          # torch refuses: so must we, with its class
        with pytest.raises(type(error)):
            spec.run(ours_in, impl, our_running, training=training, **options)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ours = spec.run(ours_in, impl, our_running, training=training, **options)
        weights = [np.random.default_rng(i).standard_normal(o.shape) for i, o in
                   enumerate(ours)]
        loss = sum((o * mg.tensor(w)).sum() for o, w in zip(ours, weights))
        loss.backward()
    sum((t * torch.tensor(w)).sum() for t, w in zip(theirs, weights)).backward()
    for k, (o, t) in enumerate(zip(ours, theirs)):
        compare(o.detach().numpy(), t, f"{spec.name} {impl} output {k}")
    for name, tensor in ours_in.items():
        if name in spec.constants:
            continue
        theirs_grad = theirs_in[name].grad
        if theirs_grad is None:
            assert tensor.grad is None or not np.any(tensor.grad.numpy()), name
        else:
            compare(tensor.grad.numpy(), theirs_grad, f"{spec.name} {impl} grad of {name}")
    for name in our_running or ():
        compare(our_running[name].numpy(), their_running[name],
                f"{spec.name} {impl} {name}")


@pytest.mark.parametrize("kernel_set", CPU)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", EPS_SPECS, ids=lambda s: s.name)
def test_every_eps_is_taken_as_torch_takes_it(spec, impl, kernel_set):
    with kernels.cpu_kernels(kernel_set):
        for eps in EPSES:
            for training in ((True, False) if spec.running else (True,)):
                run_both(spec, impl, training, eps=eps)


@pytest.mark.parametrize("kernel_set", CPU)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spec", MOMENTUM_SPECS, ids=lambda s: s.name)
def test_every_momentum_updates_the_running_statistics_as_torch(spec, impl, kernel_set):
    with kernels.cpu_kernels(kernel_set):
        for momentum in MOMENTA:
            run_both(spec, impl, True, momentum=momentum)
            run_both(spec, impl, True, momentum=momentum, eps=math.nan)


@pytest.mark.parametrize("spec", EPS_SPECS + MOMENTUM_SPECS, ids=lambda s: s.name)
def test_a_string_eps_or_momentum_is_still_a_type_error(spec):
    arrays = {n: mg.tensor(a) for n, a in inputs(spec).items()}
    running = spec.running_stats(inputs(spec))
    running = None if running is None else {n: mg.tensor(a) for n, a in running.items()}
    name = "eps" if spec in EPS_SPECS else "momentum"
    with pytest.raises(TypeError, match=name):
        spec.run(arrays, "fused", running, **{name: "0.1"})


# ----- the modules ----------------------------------------------------------------------
# (class name, constructor arguments, x's shape); eps and momentum added by each test
CHANNEL_MODULES = [("BatchNorm1d", (4,), (5, 4)), ("BatchNorm2d", (4,), (3, 4, 2, 3)),
                   ("BatchNorm3d", (4,), (2, 4, 2, 2, 3)),
                   ("InstanceNorm1d", (4,), (3, 4, 6)), ("InstanceNorm2d", (4,), (2, 4, 3, 3))]
EPS_MODULES = CHANNEL_MODULES + [("LayerNorm", (6,), (3, 4, 6)), ("RMSNorm", (6,), (3, 4, 6)),
                                 ("GroupNorm", (2, 4), (3, 4, 6))]


def module_x(shape):
    x = np.random.default_rng(1).standard_normal(shape)
    return x * np.geomspace(0.05, 3.0, shape[1]).reshape((1, -1) + (1,) * (len(shape) - 2))


def run_modules(ours, theirs, shape, steps=2):
    """Train ``steps`` calls, then one in eval: outputs, gradients, buffers as torch's, and
    no RuntimeWarning."""
    for step in range(steps + 1):
        if step == steps:
            ours.eval()
            theirs.eval()
        x = module_x(shape) * (1 + step)
        xt = torch.tensor(x, requires_grad=True)
        xm = mg.tensor(x, requires_grad=True)
        try:
            yt = theirs(xt)
        except Exception as error:      # torch refuses (BatchNorm's eps <= 0): so do we
            with pytest.raises(type(error)):
                ours(xm)
            return
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            ym = ours(xm)
            w = np.random.default_rng(step).standard_normal(ym.shape)
            (ym * mg.tensor(w)).sum().backward()
        (yt * torch.tensor(w)).sum().backward()
        compare(ym.detach().numpy(), yt, f"{type(ours).__name__} output, step {step}")
        compare(xm.grad.numpy(), xt.grad, f"{type(ours).__name__} x.grad, step {step}")
    for name, param in theirs.named_parameters():
        compare(dict(ours.named_parameters())[name].grad.numpy(), param.grad, name)
    ours_buffers = dict(ours.named_buffers())
    for name, buffer in theirs.named_buffers():
        compare(ours_buffers[name].numpy(), buffer, name)


@pytest.mark.parametrize("eps", EPSES)
@pytest.mark.parametrize("name, args, shape", EPS_MODULES, ids=[m[0] for m in EPS_MODULES])
def test_norm_modules_take_any_eps_as_torch(name, args, shape, eps):
    kwargs = {"eps": eps}
    if name.startswith("InstanceNorm"):
        kwargs.update(affine=True, track_running_stats=True)
    run_modules(getattr(mg.nn, name)(*args, dtype=mg.float64, **kwargs),
                getattr(torch.nn, name)(*args, dtype=torch.float64, **kwargs), shape)


@pytest.mark.parametrize("momentum", MOMENTA + [None])
@pytest.mark.parametrize("name, args, shape", CHANNEL_MODULES,
                         ids=[m[0] for m in CHANNEL_MODULES])
def test_channel_modules_take_any_momentum_as_torch(name, args, shape, momentum):
    kwargs = {"momentum": momentum, "track_running_stats": True}
    if name.startswith("InstanceNorm"):
        kwargs["affine"] = True
    run_modules(getattr(mg.nn, name)(*args, dtype=mg.float64, **kwargs),
                getattr(torch.nn, name)(*args, dtype=torch.float64, **kwargs), shape, steps=3)


@pytest.mark.parametrize("name", ["LazyBatchNorm1d", "LazyInstanceNorm1d"])
def test_lazy_norms_take_any_eps_and_momentum_as_torch(name):
    kwargs = {"eps": -0.5, "momentum": -1.2}
    if name == "LazyBatchNorm1d":
        kwargs["eps"] = math.nan            # a negative eps: torch's refusal in training
    else:
        kwargs.update(affine=True, track_running_stats=True)
    run_modules(getattr(mg.nn, name)(dtype=mg.float64, **kwargs),
                getattr(torch.nn, name)(dtype=torch.float64, **kwargs), (3, 4, 6))


@pytest.mark.parametrize("eps", [-0.5, math.nan])
def test_transformer_layer_norm_eps_is_taken_as_torch(eps):
    ours = mg.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, layer_norm_eps=eps)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, layer_norm_eps=eps)
    assert ours.norm1.eps == theirs.norm1.eps or math.isnan(ours.norm1.eps)
    with pytest.raises(TypeError, match="layer_norm_eps"):
        mg.nn.TransformerEncoderLayer(8, 2, 16, layer_norm_eps="0.5")


def test_module_string_arguments_are_still_type_errors():
    with pytest.raises(TypeError, match="eps"):
        mg.nn.LayerNorm(4, eps="0.1")
    with pytest.raises(TypeError, match="momentum"):
        mg.nn.BatchNorm1d(4, momentum="0.1")


# ----- the kernels and the seed-style layers ----------------------------------------------
@pytest.mark.parametrize("kernel_set", CPU)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_kernels_give_torchs_nans_silently(kernel_set, dtype):
    """Each CPU kernel set's forward kernels, called on arrays, as torch's: NaN rows where
    var + eps < 0, no RuntimeWarning (sizes past the compiled kernels' thresholds too)."""
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {}
    for rows in (8, 64):
        x = (np.random.default_rng(2).standard_normal((rows, 256))
             * np.geomspace(0.05, 3.0, rows)[:, None]).astype(dtype)
        w = np.ones(256, dtype)
        b = np.zeros(256, dtype)
        x3 = x.reshape(4, rows // 4, 256)
        mean, var = np.zeros(rows // 4, dtype), np.geomspace(0.1, 2, rows // 4).astype(dtype)
        with kernels.cpu_kernels(kernel_set), warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            k = kernels.for_array(x)
            for eps in (-0.5, math.nan, math.inf, 0.0):
                t = torch.tensor(x)
                got = {
                    "layer_norm": (k.layer_norm_forward(x, w, b, eps)[0],
                                   TF.layer_norm(t, (256,), eps=eps)),
                    "rms_norm": (k.rms_norm_forward(x, w, eps, 0.0, "llama")[0],
                                 TF.rms_norm(t, (256,), eps=eps)),
                    "group_norm": (k.group_norm_forward(
                        x3, 2, *k.group_norm_statistics(x3, 2), None, None, eps)[0],
                        TF.group_norm(torch.tensor(x3), 2, eps=eps)),
                }
                if not eps < 0:                 # torch's batch_norm refuses eps < 0
                    got["batch_norm"] = (
                        k.batch_norm_forward(x3, mean, var, None, None, eps)[0],
                        TF.batch_norm(torch.tensor(x3), torch.tensor(mean), torch.tensor(var),
                                      eps=eps))
                for name, (ours, theirs) in got.items():
                    np.testing.assert_allclose(ours.reshape(theirs.shape), theirs.numpy(),
                                               equal_nan=True, err_msg=f"{name} eps={eps}",
                                               **tol)


def test_seed_style_layers_take_any_eps_and_momentum():
    from microgradnorm import layers
    x = module_x((5, 4, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        y = layers.LayerNorm(6, eps=-0.5).forward(x)
        compare(y, TF.layer_norm(torch.tensor(x), (6,), eps=-0.5), "layers.LayerNorm")
        y = layers.RMSNorm(6, eps=-0.5).forward(x)
        compare(y, TF.rms_norm(torch.tensor(x), (6,), eps=-0.5), "layers.RMSNorm")
        ours = layers.BatchNorm(4, eps=math.nan, momentum=-1.2)
        theirs = torch.nn.BatchNorm1d(4, eps=math.nan, momentum=-1.2, dtype=torch.float64)
        compare(ours.forward(x), theirs(torch.tensor(x)), "layers.BatchNorm")
        compare(ours.running_mean, theirs.running_mean, "layers.BatchNorm running_mean")
    with pytest.raises(TypeError, match="eps"):
        layers.LayerNorm(6, eps="0.5")

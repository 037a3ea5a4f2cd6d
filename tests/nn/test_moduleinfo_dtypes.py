"""PyTorch's ModuleInfo samples (``module_db``) for the modules of test_moduleinfo.py's table,
generated in float32, float16 and bfloat16: the module is built in both libraries from the
same constructor arguments and cast to the dtype, torch's parameters and buffers are copied
in, and in training and in eval mode the output, the gradients of the input and of every
parameter, and the buffers after the call must have torch's dtypes exactly and agree with
torch's values within the tolerance torch's own module tests use for the dtype, give or take
one ulp of the element (an exact value near a half-way point rounds to either side of it).

Torch's CPU kernels round some intermediate steps to the half dtype where this package
computes in float32 and rounds once; a result that differs from torch's by more than the
tolerance is accepted only where ``EXPECTED`` names the (module, dtype) with why, and there
it must be at least as close to the exact result (the same rounded inputs, parameters and
upstream gradient, in float64) as torch's, give or take an ulp of the tensor's scale. To keep
it fast the sweep takes ``MAX_SAMPLES`` samples of each mode, spread over torch's list.
"""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

pytestmark = pytest.mark.slow          # torch's tables take seconds to import
torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")
from test_moduleinfo import INFOS, MODULES  # noqa: E402
from torch_compare import one_torch_thread  # noqa: E402, F401 (autouse fixture)

MAX_SAMPLES = 3
DTYPES = ("float32", "float16", "bfloat16")
# (rtol, atol) of torch's module tests for the dtype
TOLERANCES = {"float64": (1e-7, 1e-9), "float32": (1e-5, 1e-5), "float16": (1e-3, 1e-3),
              "bfloat16": (1.6e-2, 1.6e-2)}
# the spacing of the dtype's numbers in [1, 2)
EPS = {"float64": 2.0 ** -52, "float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}

# (module, dtype): why this package differs from torch there (docs/pytorch.md)
EXPECTED = {
    **{("Embedding", dtype): "torch's backward adds each index's gradient row into the weight "
                             "gradient in the dtype, one at a time, rounding every sum"
       for dtype in ("float16", "bfloat16")},
    **{("LayerNorm", dtype): "torch's backward adds each row's term into the weight's and the "
                             "bias's gradients in the dtype, rounding every sum"
       for dtype in ("float16", "bfloat16")},
}


def to_numpy(t):
    t = t.detach()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy().astype(np.float64)


def mg_numpy(t):
    t = t.detach()
    return np.asarray(t.float() if str(t.dtype) == "torch.bfloat16" else t).astype(np.float64)


def to_mg(t, dtype):
    out = mg.tensor(to_numpy(t)).to(getattr(mg, dtype)) if t.is_floating_point() else \
        mg.tensor(t.numpy().copy())
    return out.requires_grad_(t.requires_grad)


def build(name, sample, dtype, training):
    """torch's module, ours and torch's in float64, from one state."""
    args, kwargs = sample.constructor_input.args, dict(sample.constructor_input.kwargs)
    cls = MODULES[name][0]
    torch.manual_seed(0)
    theirs = INFOS[name].module_cls(*args, **kwargs).to(getattr(torch, dtype))
    exact = INFOS[name].module_cls(*args, **kwargs).to(torch.float64)
    kwargs = {k: to_mg(v, "float64") if isinstance(v, torch.Tensor) else v    # _weight
              for k, v in kwargs.items()}
    ours = (cls(*args, **kwargs) if cls is not mg.nn.Embedding else cls(**kwargs))
    ours = ours.to(getattr(mg, dtype))
    state = theirs.state_dict()
    if state:
        ours.load_state_dict({k: to_mg(v, dtype) for k, v in state.items()})
        exact.load_state_dict({k: v.double() if v.is_floating_point() else v
                               for k, v in state.items()})
    for module in (theirs, ours, exact):
        module.train(training)
    return theirs, ours, exact


def results(name, sample, dtype, training):
    """{what: (ours, torch's, exact)}: the output, the buffers after the call and the
    gradients of the input and of every parameter, or a str saying why the sample is not
    run."""
    kwargs = dict(sample.constructor_input.kwargs)
    unsupported = sorted(set(kwargs) & set(MODULES[name][1]))
    if unsupported:
        return f"constructor argument(s) {unsupported}"
    inputs = list(sample.forward_input.args) + list(sample.forward_input.kwargs.values())
    if len(inputs) != 1:
        return f"forward takes one input here, the sample gives {len(inputs)}"
    theirs, ours, exact = build(name, sample, dtype, training)
    (x,) = inputs
    x_ours = to_mg(x, dtype)
    x_exact = x.detach().double().requires_grad_(x.requires_grad) if x.is_floating_point() \
        else x
    try:
        y_torch = theirs(x)
    except (RuntimeError, NotImplementedError) as error:    # not ours to test
        return f"torch refuses it: {str(error)[:80]}"
    y, y_exact = ours(x_ours), exact(x_exact)
    found = {"output": (y, y_torch, y_exact)}
    our_state, exact_state = ours.state_dict(), exact.state_dict()
    for key, value in theirs.state_dict().items():
        found[f"state {key} after the call"] = (our_state[key], value, exact_state[key])
    if not y_torch.requires_grad:
        return found
    upstream = torch.randn(tuple(y_torch.shape), generator=torch.Generator().manual_seed(0),
                           dtype=y_torch.dtype)
    names = ["input"] * x.requires_grad + [n for n, _ in theirs.named_parameters()]
    ours_params, exact_params = dict(ours.named_parameters()), dict(exact.named_parameters())
    grads = [torch.autograd.grad(y_torch, [x] * x.requires_grad + list(theirs.parameters()),
                                 upstream, allow_unused=True),
             mg.grad(y, [x_ours] * x.requires_grad + [ours_params[n] for n in names[
                 x.requires_grad:]], to_mg(upstream, dtype), allow_unused=True),
             torch.autograd.grad(y_exact, [x_exact] * x.requires_grad + [
                 exact_params[n] for n in names[x.requires_grad:]], upstream.double(),
                 allow_unused=True)]
    for i, n in enumerate(names):
        found[f"gradient of {n}"] = (grads[1][i], grads[0][i], grads[2][i])
    return found


def check(what, ours, theirs, exact, dtype, expected):
    """Raise AssertionError where ``ours`` differs from torch's ``theirs``."""
    if theirs is None:
        assert ours is None or not mg_numpy(ours).any(), f"{what}: torch's is None"
        return
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape"
    assert str(ours.dtype) == str(theirs.dtype), \
        f"{what}: dtype {ours.dtype} vs {theirs.dtype}"
    a, b = mg_numpy(ours), to_numpy(theirs)
    if not theirs.is_floating_point():
        np.testing.assert_array_equal(a, b, err_msg=what)
        return
    rtol, atol = TOLERANCES[dtype]
    # and one ulp of the element: where the exact value is near a half-way point, one rounding
    # of an intermediate (torch's or ours) puts the results on either side of it
    ulps = EPS[dtype] * 2.0 ** np.floor(np.log2(np.maximum(abs(a), abs(b)) + 1e-300))
    far = ~(abs(a - b) <= atol + rtol * abs(b) + ulps) & ~(np.isnan(a) & np.isnan(b))
    if not far.any():
        return
    assert expected, f"{what}: max |ours - torch's| {np.nanmax(abs(a - b)):.3g}\n" + \
        np.array2string(a[far][:5]) + " vs " + np.array2string(b[far][:5])
    c = to_numpy(exact)
    ulp = EPS[dtype] * max(np.nanmax(abs(c)), np.finfo(np.float64).tiny)
    assert np.nanmax(abs(a - c)) <= np.nanmax(abs(b - c)) + ulp, \
        f"{what}: ours is {np.nanmax(abs(a - c)):.3g} from the exact result, " \
        f"torch's {np.nanmax(abs(b - c)):.3g}"


CASES = [(name, dtype) for name in sorted(MODULES) for dtype in DTYPES]


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name, dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_moduleinfo_samples_match_pytorch_in_dtype(name, dtype, training):
    info = INFOS[name]
    torch.manual_seed(0)
    samples = info.module_inputs_func(info, device="cpu", dtype=getattr(torch, dtype),
                                      requires_grad=True, training=training)
    failures, skipped = [], []
    samples = samples[::-(-len(samples) // MAX_SAMPLES)]     # spread over torch's list
    for i, sample in enumerate(samples):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = results(name, sample, dtype, training)
                if isinstance(found, str):
                    skipped.append(found)
                    continue
                for what, (ours, theirs, exact) in found.items():
                    check(what, ours, theirs, exact, dtype, (name, dtype) in EXPECTED)
        except Exception as error:
            failures.append(f"sample {i} {sample.constructor_input.args} "
                            f"{sample.constructor_input.kwargs} "
                            f"{[tuple(a.shape) for a in sample.forward_input.args]}: "
                            f"{type(error).__name__}: {str(error)[:400]}")
    assert not failures, "\n".join(failures)
    assert len(skipped) < len(samples), f"every sample skipped: {set(skipped)}"


# Embedding's keywords, which torch's samples leave at their defaults
EMBEDDING = [dict(padding_idx=1), dict(padding_idx=-2, scale_grad_by_freq=True),
             dict(max_norm=1.5), dict(max_norm=0.8, norm_type=1.0, padding_idx=0),
             dict(scale_grad_by_freq=True), dict(_freeze=True)]


@pytest.mark.parametrize("dtype", ("float64",) + DTYPES)
@pytest.mark.parametrize("keywords", range(len(EMBEDDING) + 1),
                         ids=[",".join(k) for k in EMBEDDING] + ["_weight"])
def test_embedding_keywords_match_pytorch_in_dtype(keywords, dtype):
    from torch.testing._internal.common_modules import FunctionInput, ModuleInput
    generator = torch.Generator().manual_seed(keywords)
    kwargs = (EMBEDDING[keywords] if keywords < len(EMBEDDING) else
              dict(_weight=torch.randn(5, 3, generator=generator).to(getattr(torch, dtype))))
    indices = torch.randint(0, 5, (4, 6), generator=generator)
    sample = ModuleInput(FunctionInput(num_embeddings=5, embedding_dim=3, **kwargs),
                         FunctionInput(indices))
    for training in (True, False):
        found = results("Embedding", sample, dtype, training)
        for what, (ours, theirs, exact) in found.items():
            check(what, ours, theirs, exact, dtype, ("Embedding", dtype) in EXPECTED)


def test_expected_differences_name_modules_and_dtypes_of_the_sweep():
    for name, dtype in EXPECTED:
        assert name in MODULES and dtype in DTYPES, (name, dtype)


@pytest.mark.parametrize("name", ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"])
def test_float16_running_statistics_are_blended_once_as_torchs(name):
    # torch's kernel blends the batch's statistics into the float16 running ones in float32
    # and rounds once; rounding (1 - momentum)·running and momentum·batch first moves them
    generator = torch.Generator().manual_seed(1)
    theirs = getattr(torch.nn, name)(4, momentum=0.3).half()
    ours = getattr(mg.nn, name)(4, momentum=0.3).to(mg.float16)
    shape = (6, 4) + (5, 3, 2)[:int(name[-2])]          # (N, C, L), (N, C, H, W), ...
    for _ in range(6):
        x = (torch.randn(shape, generator=generator) * 3 + 2).half()
        theirs(x)
        ours(to_mg(x, "float16"))
        for key in ("running_mean", "running_var"):
            assert str(getattr(ours, key).dtype) == "torch.float16"
            np.testing.assert_array_equal(mg_numpy(getattr(ours, key)),
                                          to_numpy(getattr(theirs, key)), err_msg=key)

"""PyTorch's ModuleInfo samples (``module_db``) for every ``torch.nn`` module this package
has: the module is built in both libraries from the same constructor arguments, torch's
parameters and buffers are copied in, and in training and in eval mode the output, the
gradients of the input and of every parameter, and the buffers after the call must match
(float64). A sample is skipped only for an argument this package does not have. For every
class of ``module_db`` that ``nn`` has (95), each sample's constructor arguments build the
same ``repr``, state dict keys (in order) and parameter names as torch's, and each of its
``module_error_inputs`` that torch refuses is refused here with torch's exception class.
"""

import warnings

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn

pytestmark = pytest.mark.slow          # torch's tables take seconds to import
torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")
from torch.testing._internal.common_modules import module_db  # noqa: E402

RTOL, ATOL = 1e-7, 1e-9

# torch class name -> (microgradnorm class, constructor keywords it does not have)
MODULES = {
    "Linear": (nn.Linear, ()),
    "Embedding": (nn.Embedding, ()),
    "LayerNorm": (nn.LayerNorm, ()),
    "RMSNorm": (nn.RMSNorm, ()),
    "BatchNorm1d": (nn.BatchNorm1d, ()),
    "BatchNorm2d": (nn.BatchNorm2d, ()),
    "BatchNorm3d": (nn.BatchNorm3d, ()),
    "GroupNorm": (nn.GroupNorm, ()),
    "InstanceNorm1d": (nn.InstanceNorm1d, ()),
    "InstanceNorm2d": (nn.InstanceNorm2d, ()),
    "InstanceNorm3d": (nn.InstanceNorm3d, ()),
    "LocalResponseNorm": (nn.LocalResponseNorm, ()),
    "ReLU": (nn.ReLU, ()),
    "GELU": (nn.GELU, ()),
    "Tanh": (nn.Tanh, ()),
    "SiLU": (nn.SiLU, ()),
}
INFOS = {info.module_cls.__name__: info for info in module_db
         if info.module_cls.__name__ in MODULES}


def test_every_module_has_its_moduleinfo():
    assert sorted(INFOS) == sorted(MODULES)


def to_numpy(t):
    return t.detach().numpy().copy()


def run_sample(name, sample, training):
    """Compare one ModuleInput; returns None, or why it was skipped."""
    cls, missing = MODULES[name]
    args, kwargs = sample.constructor_input.args, dict(sample.constructor_input.kwargs)
    unsupported = sorted(set(kwargs) & set(missing))
    if unsupported:
        return f"{name}: constructor argument(s) {unsupported}"
    torch_module = INFOS[name].module_cls(*args, **kwargs).to(torch.float64)
    kwargs = {k: mg.tensor(to_numpy(v)) if isinstance(v, torch.Tensor) else v    # _weight
              for k, v in kwargs.items()}
    ours = (cls(*args, **kwargs) if cls is not nn.Embedding else cls(**kwargs)).to(mg.float64)
    state = {k: to_numpy(v) for k, v in torch_module.state_dict().items()}
    if state:
        ours.load_state_dict(state)
    torch_module.train(training)
    ours.train(training)
    inputs = list(sample.forward_input.args) + list(sample.forward_input.kwargs.values())
    if len(inputs) != 1:
        return f"{name}: forward takes one input here, the sample gives {len(inputs)}"
    (x,) = inputs
    x_ours = mg.tensor(to_numpy(x), requires_grad=x.requires_grad and x.dtype.is_floating_point)
    # called as the sample calls it: Linear's samples give ``input=`` by keyword
    keyword = next(iter(sample.forward_input.kwargs), None)
    y_torch, y = ((torch_module(**{keyword: x}), ours(**{keyword: x_ours})) if keyword
                  else (torch_module(x), ours(x_ours)))
    np.testing.assert_allclose(y.detach().numpy(), to_numpy(y_torch), RTOL, ATOL,
                               err_msg="output")
    for key, value in torch_module.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key], to_numpy(value), RTOL, ATOL,
                                   err_msg=f"buffer {key} after the call")
    if not y_torch.requires_grad:
        return None
    upstream = np.random.default_rng(0).standard_normal(tuple(y_torch.shape))
    torch_leaves = ([x] if x.requires_grad else []) + list(torch_module.parameters())
    our_leaves = ([x_ours] if x_ours.requires_grad else []) + \
        [dict(ours.named_parameters())[n] for n, _ in torch_module.named_parameters()]
    expected = torch.autograd.grad(y_torch, torch_leaves, torch.tensor(upstream),
                                   allow_unused=True)
    got = mg.grad(y, our_leaves, upstream)
    for i, (g, e, leaf) in enumerate(zip(got, expected, our_leaves)):
        np.testing.assert_allclose(np.zeros(leaf.shape) if g is None else g,
                                   np.zeros(leaf.shape) if e is None else e.numpy(),
                                   RTOL, ATOL, err_msg=f"gradient {i}")
    return None


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name", sorted(MODULES))
def test_moduleinfo_samples_match_pytorch(name, training):
    info = INFOS[name]
    samples = info.module_inputs_func(info, device="cpu", dtype=torch.float64,
                                      requires_grad=True, training=training)
    failures, skipped = [], []
    for i, sample in enumerate(samples):
        try:
            reason = run_sample(name, sample, training)
        except Exception as error:
            failures.append(f"sample {i} {sample.constructor_input} "
                            f"{[tuple(a.shape) for a in sample.forward_input.args]}: "
                            f"{type(error).__name__}: {str(error)[:300]}")
            continue
        if reason:
            skipped.append(reason)
    assert not failures, "\n".join(failures)
    assert len(skipped) < len(samples), f"every sample skipped: {set(skipped)}"


# ----- every module_db class nn has: built from each sample as torch's -----------------------
SHARED = sorted({info.module_cls.__name__ for info in module_db
                 if hasattr(nn, info.module_cls.__name__)})


def plain(value):
    # constructor arguments both libraries take as written: no tensors, modules, callables
    if isinstance(value, (tuple, list)):
        return all(plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


@pytest.mark.parametrize("name", SHARED)
def test_each_sample_builds_torchs_repr_state_keys_and_parameter_names(name):
    info = next(info for info in module_db if info.module_cls.__name__ == name)
    built = 0
    for sample in info.module_inputs_func(info, device="cpu", dtype=torch.float64,
                                          requires_grad=False, training=True)[:8]:
        args, kwargs = sample.constructor_input.args, sample.constructor_input.kwargs
        if not plain(list(args) + list(kwargs.values())):
            continue
        with warnings.catch_warnings():     # Transformer's nested-tensor note, in both
            warnings.simplefilter("ignore")
            theirs, ours = info.module_cls(*args, **kwargs), getattr(nn, name)(*args, **kwargs)
        assert repr(ours) == repr(theirs), (args, kwargs)
        assert list(ours.state_dict()) == list(theirs.state_dict()), (args, kwargs)
        assert ([n for n, _ in ours.named_parameters()]
                == [n for n, _ in theirs.named_parameters()]), (args, kwargs)
        built += 1
    # TransformerEncoder's samples all pass a layer module, LinearCrossEntropyLoss's a dtype,
    # FractionalMaxPool's their _random_samples tensors (tests/nn/test_moduleinfo_generic.py
    # builds them from every argument)
    assert built or name in ("TransformerEncoder", "LinearCrossEntropyLoss",
                             "FractionalMaxPool2d", "FractionalMaxPool3d")


# ----- module_error_inputs: what torch refuses is refused, with torch's class ---------------
ERRORS = sorted({info.module_cls.__name__ for info in module_db
                 if hasattr(nn, info.module_cls.__name__) and info.module_error_inputs_func})


def ours(value):
    if isinstance(value, torch.Tensor):
        return mg.tensor(to_numpy(value))
    if isinstance(value, torch.dtype):
        return getattr(mg, str(value).split(".")[-1])
    if isinstance(value, (tuple, list)):
        return type(value)(ours(v) for v in value)
    if isinstance(value, dict):
        return {key: ours(v) for key, v in value.items()}
    return value


def raised(cls, sample, forward, training, convert, cast):
    """The exception building ``cls`` from the sample (and calling it, for ``forward``)
    raises, or None."""
    constructor, inputs = sample.constructor_input, sample.forward_input
    try:
        module = cast(cls(*convert(constructor.args), **convert(dict(constructor.kwargs))))
        module.train(training)
        if forward:
            module(*convert(inputs.args), **convert(dict(inputs.kwargs)))
    except Exception as error:
        return error
    return None


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name", ERRORS)
def test_error_inputs_are_refused_with_torchs_class(name, training):
    from torch.testing._internal.common_modules import ModuleErrorEnum
    info = next(info for info in module_db if info.module_cls.__name__ == name)
    checked = 0
    for error_input in info.module_error_inputs_func(info, device="cpu", dtype=torch.float64,
                                                     requires_grad=True, training=training):
        sample = error_input.module_error_input
        args, kwargs = sample.constructor_input.args, sample.constructor_input.kwargs
        forward = error_input.error_on == ModuleErrorEnum.FORWARD_ERROR
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = raised(info.module_cls, sample, forward, training, lambda v: v,
                              lambda m: m.to(torch.float64))
            got = raised(getattr(nn, name), sample, forward, training, ours,
                         lambda m: m.to(mg.float64))
        if expected is None:                  # torch's table expects more than torch does
            continue
        assert got is not None, (args, kwargs)
        assert isinstance(got, type(expected)), (args, kwargs, got, expected)
        checked += 1
    assert checked or name == "NLLLoss"       # its one error input: torch takes it

"""Every public callable has a docstring.

Scope (what "public" means here): the names a user reaches from the documented namespaces
listed in PUBLIC_NAMESPACES (their ``__all__``, or for a module without one its names that
do not start with "_" and are defined in the package), and of each such class every method
and property whose name does not start with "_", defined on the class itself. Internal
modules (the primitive ``Function`` classes of ops/ and norms/, kernels, the cli
programs) are not in scope. A new public function or class in one of these namespaces
needs a docstring, or this test names it.

One exception: ``extra_repr`` overrides are documented once, on ``nn.Module``.
"""

import importlib
import inspect

import pytest

PUBLIC_NAMESPACES = ["microgradnorm", "microgradnorm.functional", "microgradnorm.nn",
                     "microgradnorm.optim", "microgradnorm.layers", "microgradnorm.train",
                     "microgradnorm.viz", "microgradnorm.checks", "microgradnorm.norms",
                     "microgradnorm.fused",
                     "microgradnorm.optim.lr_scheduler", "microgradnorm.utils.data",
                     "microgradnorm.utils.tensorboard", "microgradnorm.cuda",
                     "microgradnorm.linalg", "microgradnorm.testing", "microgradnorm.special",
                     "microgradnorm.distributed", "microgradnorm.jit", "microgradnorm.random",
                     "microgradnorm.cpu", "microgradnorm.utils.checkpoint",
                     "microgradnorm.nn.parallel", "microgradnorm.fft",
                     "microgradnorm.distributions", "microgradnorm.distributions.constraints"]
DOCUMENTED_ON_THE_BASE_CLASS = {"extra_repr"}


def public_objects(namespace):
    module = importlib.import_module(namespace)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items() if not n.startswith("_")
                 and getattr(obj, "__module__", "") == namespace]
    for name in names:
        obj = getattr(module, name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and \
                obj.__module__.startswith("microgradnorm"):
            yield obj


def own_members(cls):
    """(name, function) for each public method and property defined on ``cls`` itself."""
    for name, value in vars(cls).items():
        if name.startswith("_") or name in DOCUMENTED_ON_THE_BASE_CLASS:
            continue
        if isinstance(value, property):
            yield name, value.fget
        elif isinstance(value, (staticmethod, classmethod)):
            yield name, value.__func__
        elif inspect.isfunction(value):
            yield name, value


def callables_in_scope():
    seen = {}
    for namespace in PUBLIC_NAMESPACES:
        for obj in public_objects(namespace):
            qualname = f"{obj.__module__}.{obj.__qualname__}"
            seen[qualname] = obj
            if inspect.isclass(obj):
                for name, member in own_members(obj):
                    seen[f"{qualname}.{name}"] = member
    return seen


def test_scope_covers_the_api_people_use():
    names = callables_in_scope()
    for expected in ("microgradnorm.tensor.Tensor.sum", "microgradnorm.tensor.Tensor.shape",
                     "microgradnorm.nn.linear.Linear.forward",
                     "microgradnorm.autograd.gradients.grad",
                     "microgradnorm.layers.LayerNorm.backward", "microgradnorm.viz.draw",
                     "microgradnorm.norms.layer_norm.layer_norm",
                     "microgradnorm.optim.optimizers.AdamW"):
        assert expected in names
    assert len(names) > 150


def test_every_public_callable_has_a_docstring():
    missing = sorted(name for name, obj in callables_in_scope().items()
                     if not (obj.__doc__ or "").strip())
    assert not missing, ("public callables without a docstring (see this file's docstring "
                         "for the scope):\n  " + "\n  ".join(missing))


def nn_modules():
    from microgradnorm import nn
    return [obj for obj in public_objects("microgradnorm.nn") if inspect.isclass(obj)
            and issubclass(obj, nn.Module) and obj not in (nn.Module, nn.ModuleList,
                                                           nn.ModuleDict, nn.ParameterList,
                                                           nn.ParameterDict,
                                                           nn.Container)]   # no forward


@pytest.mark.parametrize("cls", nn_modules(), ids=lambda cls: cls.__name__)
def test_every_nn_forward_documents_its_shapes(cls):
    doc = vars(cls)["forward"].__doc__ if "forward" in vars(cls) else None
    assert doc and "Shape" in doc, f"nn.{cls.__name__}.forward: no docstring with 'Shape'"


@pytest.mark.parametrize("name", ["LayerNorm", "RMSNorm", "BatchNorm"])
@pytest.mark.parametrize("method", ["forward", "backward"])
def test_seed_style_forward_and_backward_document_formula_args_and_returns(name, method):
    from microgradnorm import layers
    doc = getattr(getattr(layers, name), method).__doc__ or ""
    assert "Args:" in doc and "Returns:" in doc and "rstd" in doc, f"layers.{name}.{method}"

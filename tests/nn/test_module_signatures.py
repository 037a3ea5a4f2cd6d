"""The argument names of every ``nn`` module class that ``torch.nn`` also has: ``forward``
takes torch's names (``m(input=x)``, as torch's own ModuleInfo samples call Linear), and the
constructor takes torch's arguments under torch's names, the positional ones in torch's
order (``nn.Linear(4, 2, True, "cpu", dtype)``). Where this package adds arguments
(``impl``, a norm's ``residual``) they come after torch's; the losses take torch's
deprecated ``size_average``/``reduce`` in their places too (test_loss_legacy_args.py
compares the losses' signatures whole)."""

import inspect

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm import nn


def shared_classes():
    for name in sorted(dir(nn)):
        ours, theirs = getattr(nn, name), getattr(torch.nn, name, None)
        if (inspect.isclass(ours) and issubclass(ours, nn.Module) and inspect.isclass(theirs)
                and issubclass(theirs, torch.nn.Module)):
            yield name


def parameters(function):
    return inspect.signature(function).parameters


def is_forward_unimplemented(cls):
    return cls.forward is torch.nn.Module.forward


@pytest.mark.parametrize("name", list(shared_classes()))
def test_forward_takes_torchs_argument_names(name):
    theirs = getattr(torch.nn, name)
    if is_forward_unimplemented(theirs):          # containers: torch's forward raises
        return
    torch_names = list(parameters(theirs.forward))
    our_names = list(parameters(getattr(nn, name).forward))
    assert our_names[:len(torch_names)] == torch_names, (name, our_names)


@pytest.mark.parametrize("name", list(shared_classes()))
def test_constructor_takes_torchs_arguments_in_torchs_order(name):
    theirs = parameters(getattr(torch.nn, name).__init__)
    if any(p.kind is p.VAR_POSITIONAL for p in theirs.values()):   # torch's RNN(*args)
        return
    ours = parameters(getattr(nn, name).__init__)
    missing = [n for n in theirs if n not in ours]
    assert not missing, (name, missing)

    def positional(params):
        return [n for n, p in params.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
    # ours may make torch's later options keyword-only, never reorder them
    assert positional(theirs)[:len(positional(ours))] == positional(ours), name


def test_linear_by_position_and_by_keyword_as_torch_in_float64():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    theirs = torch.nn.Linear(4, 2, True, "cpu", torch.float64)
    ours = nn.Linear(4, 2, True, "cpu", mg.float64)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    expected = theirs(input=torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(ours(input=mg.tensor(x)).detach().numpy(), expected, rtol=1e-12)
    assert ours.weight.dtype == np.float64


def test_embedding_and_activations_take_input_by_keyword():
    ids = np.array([[1, 0, 2]])
    theirs = torch.nn.Embedding(3, 2).double()
    ours = nn.Embedding(3, 2).to(mg.float64)
    ours.load_state_dict({"weight": theirs.weight.detach().numpy()})
    np.testing.assert_array_equal(ours(input=mg.tensor(ids)).detach().numpy(),
                                  theirs(input=torch.tensor(ids)).detach().numpy())
    x = np.linspace(-2, 2, 7)
    for name, args in (("ReLU", ()), ("GELU", ()), ("Tanh", ()), ("SiLU", ()),
                       ("Softmax", (0,)), ("Hardtanh", ())):
        np.testing.assert_allclose(
            getattr(nn, name)(*args)(input=mg.tensor(x)).numpy(),
            getattr(torch.nn, name)(*args)(input=torch.tensor(x)).numpy(), rtol=1e-12,
            err_msg=name)

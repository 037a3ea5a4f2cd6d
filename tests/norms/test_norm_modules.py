"""Every norm's nn module, found through the registry: for each place a norm declares, the
module a model builds there (``nn.make_norm``), with its defaults for a small width, against
PyTorch's twin of the norm (``Norm.run_torch``) on the module's own parameters and running
statistics: forward, backward into the input and every parameter, composite against fused,
a state_dict round trip and its repr, the residual call of a block's norm. A norm whose
module declares it (``norm = "<name>"``) is tested here without a line of its own."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn
from microgradnorm.norms import NORMS

torch = pytest.importorskip("torch")
TF = torch.nn.functional

WIDTH = 6
INPUT_SHAPES = {"row": (2, 3, WIDTH), "mlp": (5, WIDTH), "channel": (2, WIDTH, 3, 2)}
CASES = [pytest.param(name, place, id=f"{name}-{place}")
         for name, spec in NORMS.items() for place in spec.places]
TOL = 1e-12


def build(name, place):
    return nn.make_norm(name, WIDTH, dtype="float64", place=place)


def twin(module, name, x, upstream):
    """PyTorch's output and gradients (x first, then the module's parameters) for the
    module's norm on its own parameters, options and running statistics (copies)."""
    spec = NORMS[name]
    params = dict(module.named_parameters())
    given = {spec.x: torch.tensor(x, requires_grad=True)}
    given |= {n: torch.tensor(p.detach().numpy(), requires_grad=True)
              for n, p in params.items()}
    running = {n: torch.tensor(getattr(module, n).detach().numpy().copy())
               for n in spec.running if getattr(module, n, None) is not None}
    options = {o.name: getattr(module, o.name) for o in spec.options
               if o.torch and getattr(module, o.name, None) is not None}
    # a module without running statistics normalizes with the input's, in eval too
    training = module.training or not running
    y, = spec.run_torch(TF, given, running or None, training, **options)
    grads = torch.autograd.grad(y, list(given.values()), torch.tensor(upstream))
    return y.detach().numpy(), [g.numpy() for g in grads]


def forward_backward(module, x, upstream):
    t = mg.tensor(x, requires_grad=True)
    y = module(t)
    leaves = [t, *(p for _, p in module.named_parameters())]
    return y.detach().numpy(), [g.numpy() for g in mg.grad([y], leaves, [upstream])]


def test_every_place_of_every_norm_has_its_module_and_residual_forms_none():
    for name, spec in NORMS.items():
        for place in spec.places:
            cls = nn.module_for(name, place)
            assert issubclass(cls, nn.normalization.NormModule)
            assert NORMS[cls.norm] is spec
        if spec.residual:                    # the module of its norm, called with a residual
            assert spec.places == ()


@pytest.mark.parametrize("name, place", CASES)
def test_module_matches_torch_forward_and_every_gradient(name, place):
    module = build(name, place)
    rng = np.random.default_rng(0)
    for p in module.parameters():           # away from the initial ones and zeros
        p._array[...] += 0.3 * rng.standard_normal(p.shape)
    x = rng.standard_normal(INPUT_SHAPES[place])
    upstream = rng.standard_normal(x.shape)
    expected_y, expected_grads = twin(module, name, x, upstream)
    y, grads = forward_backward(module, x, upstream)
    np.testing.assert_allclose(y, expected_y, atol=TOL, rtol=0)
    assert len(grads) == len(expected_grads)
    for got, want in zip(grads, expected_grads):
        np.testing.assert_allclose(got, want, atol=TOL, rtol=0)


@pytest.mark.parametrize("name, place", CASES)
def test_composite_matches_fused_and_eval_mode_matches_torch(name, place):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(INPUT_SHAPES[place])
    upstream = rng.standard_normal(x.shape)
    sides = []
    for impl in ("composite", "fused"):
        module = build(name, place)
        module.set_impl(impl)
        sides.append(forward_backward(module, x, upstream))
        module.eval()
        np.testing.assert_allclose(forward_backward(module, x, upstream)[0],
                                   twin(module, name, x, upstream)[0], atol=TOL, rtol=0)
    (y_c, grads_c), (y_f, grads_f) = sides
    np.testing.assert_allclose(y_c, y_f, atol=TOL, rtol=0)
    for c, f in zip(grads_c, grads_f):
        np.testing.assert_allclose(c, f, atol=TOL, rtol=0)


@pytest.mark.parametrize("name, place", CASES)
def test_state_dict_round_trip_gives_the_same_module_and_repr_names_it(name, place):
    rng = np.random.default_rng(2)
    module = build(name, place)
    for p in module.parameters():
        p._array[...] += rng.standard_normal(p.shape)
    x = mg.tensor(rng.standard_normal(INPUT_SHAPES[place]))
    module(x)                                # training: running statistics move, if any
    fresh = build(name, place)
    fresh.load_state_dict(module.state_dict())
    for mode in ("eval", "train"):
        getattr(module, mode)()
        getattr(fresh, mode)()
        np.testing.assert_array_equal(fresh(x).detach().numpy(), module(x).detach().numpy())
    assert sorted(fresh.state_dict()) == sorted(module.state_dict())
    text = repr(fresh)
    assert text.startswith(type(fresh).__name__ + "(") and str(WIDTH) in text


@pytest.mark.parametrize("name, place", [c for c in CASES if c.values[1] == "row"])
def test_a_block_norm_takes_a_residual_and_returns_the_sum(name, place):
    module = build(name, place)
    rng = np.random.default_rng(3)
    x, r = (mg.tensor(rng.standard_normal(INPUT_SHAPES[place])) for _ in range(2))
    y, s = module(x, r)
    np.testing.assert_array_equal(s.detach().numpy(), (x + r).detach().numpy())
    np.testing.assert_allclose(y.detach().numpy(), module(x + r).detach().numpy(), atol=TOL)
    expected, _ = twin(module, name, (x + r).detach().numpy(), np.ones(x.shape))
    np.testing.assert_allclose(y.detach().numpy(), expected, atol=TOL, rtol=0)

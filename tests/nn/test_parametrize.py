"""``nn.utils.parametrize`` with user parametrizations, against PyTorch in float64: the
class swap, the state dict keys, the value computed at each access and once per
``cached()`` block, gradients reaching the original, ``right_inverse`` on assignment and at
registration, chained parametrizations, ``unsafe``, removal both ways, buffers, copies,
and the errors (torch's classes)."""

import copy
import pickle

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.nn.utils.parametrize as parametrize
from microgradnorm import nn

torch = pytest.importorskip("torch")
TOL = 1e-12


def parametrizations(T):
    """Symmetric (no right_inverse), Scale (a right_inverse), Counted (counts its calls)
    written for torch or microgradnorm."""

    class Symmetric(T.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

    class Scale(T.nn.Module):
        def forward(self, X):
            return 2.0 * X

        def right_inverse(self, W):
            return W / 2.0

    class Counted(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, X):
            self.calls += 1
            return X * 1.0

    return Symmetric, Scale, Counted


def build_both(build):
    torch.manual_seed(0)
    expected = build(torch, *parametrizations(torch))
    mg.manual_seed(0)
    actual = build(mg, *parametrizations(mg))
    return expected, actual


def square(T):
    return T.nn.Linear(4, 4).to(dtype=T.float64)


def close(actual, expected, what=""):
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=TOL,
                               atol=TOL, err_msg=what)


def same_state(actual, expected):
    want, got = expected.state_dict(), actual.state_dict()
    assert list(got) == list(want)
    for key in want:
        close(got[key], want[key], key)


def same_step(actual, expected):
    x = np.random.default_rng(0).standard_normal((3, 4))
    y_expected, y_actual = expected(torch.tensor(x)), actual(mg.tensor(x))
    close(y_actual, y_expected, "output")
    (y_expected ** 2).sum().backward()
    (y_actual ** 2).sum().backward()
    for (name, p_actual), (_, p_expected) in zip(actual.named_parameters(),
                                                  expected.named_parameters()):
        close(p_actual.grad, p_expected.grad, f"grad of {name}")


def test_register_swaps_the_class_and_renames_the_state():
    expected, actual = build_both(lambda T, Sym, Scale, Counted: T.nn.utils.parametrize.
                                  register_parametrization(square(T), "weight", Sym()))
    assert type(actual).__name__ == "ParametrizedLinear"
    assert isinstance(actual, nn.Linear)
    assert parametrize.type_before_parametrizations(actual) is nn.Linear
    assert parametrize.is_parametrized(actual) and parametrize.is_parametrized(actual, "weight")
    assert not parametrize.is_parametrized(actual, "bias")
    assert list(actual.state_dict()) == ["bias", "parametrizations.weight.original"]
    same_state(actual, expected)
    w = actual.weight.detach().numpy()
    np.testing.assert_array_equal(w, w.T)
    same_step(actual, expected)               # the gradient reaches original through P
    # other modules of the class keep theirs
    assert type(nn.Linear(2, 2)) is nn.Linear


def test_right_inverse_at_registration_and_on_assignment():
    expected, actual = build_both(lambda T, Sym, Scale, Counted: T.nn.utils.parametrize.
                                  register_parametrization(square(T), "weight", Scale()))
    same_state(actual, expected)              # original = W / 2: the value is unchanged
    w = np.arange(16.0).reshape(4, 4)
    original = actual.parametrizations.weight.original
    with torch.no_grad():
        expected.weight = torch.tensor(w)
    actual.weight = mg.tensor(w)
    assert actual.parametrizations.weight.original is original     # the optimizer's object
    same_state(actual, expected)
    close(actual.weight, expected.weight)
    same_step(actual, expected)


def test_each_access_computes_and_cached_computes_once():
    m = nn.Linear(3, 3)
    counted = parametrizations(mg)[2]()
    parametrize.register_parametrization(m, "weight", counted)
    calls = counted.calls                    # the registration's check is one
    first, second = m.weight, m.weight
    assert counted.calls == calls + 2 and first is not second
    with parametrize.cached():
        first = m.weight
        with parametrize.cached():           # nested: the same cache
            assert m.weight is first
        assert m.weight is first
    assert counted.calls == calls + 3
    assert m.weight is not first             # emptied when the outer block exits
    # torch counts the same
    t = torch.nn.Linear(3, 3)
    counted_torch = parametrizations(torch)[2]()
    torch.nn.utils.parametrize.register_parametrization(t, "weight", counted_torch)
    assert counted_torch.calls == calls


def test_a_forward_reads_the_weight_once():
    m = nn.Linear(3, 3)
    counted = parametrizations(mg)[2]()
    parametrize.register_parametrization(m, "weight", counted)
    calls = counted.calls
    m(mg.zeros(2, 3))
    assert counted.calls == calls + 1


def test_chained_parametrizations():
    def build(T, Sym, Scale, Counted):
        m = square(T)
        T.nn.utils.parametrize.register_parametrization(m, "weight", Scale())
        return T.nn.utils.parametrize.register_parametrization(m, "weight", Sym())

    expected, actual = build_both(build)
    assert len(actual.parametrizations.weight) == 2
    same_state(actual, expected)
    close(actual.weight, expected.weight)
    same_step(actual, expected)


def test_unsafe_allows_a_new_shape():
    class Row(nn.Module):
        def forward(self, X):
            return X[:1]

    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(nn.Linear(3, 3), "weight", Row())
    m = parametrize.register_parametrization(nn.Linear(3, 3), "weight", Row(), unsafe=True)
    assert m.weight.shape == (1, 3)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    def build(T, Sym, Scale, Counted):
        m = square(T)
        T.nn.utils.parametrize.register_parametrization(m, "weight", Sym())
        T.nn.utils.parametrize.register_parametrization(m, "bias", Scale())
        return m

    expected, actual = build_both(build)
    original = actual.parametrizations.weight.original
    torch.nn.utils.parametrize.remove_parametrizations(expected, "weight", leave)
    parametrize.remove_parametrizations(actual, "weight", leave)
    assert actual.weight is original and isinstance(actual.weight, nn.Parameter)
    assert type(actual).__name__ == "ParametrizedLinear"    # bias is still parametrized
    same_state(actual, expected)
    torch.nn.utils.parametrize.remove_parametrizations(expected, "bias", leave)
    parametrize.remove_parametrizations(actual, "bias", leave)
    assert type(actual) is nn.Linear and "parametrizations" not in actual._modules
    assert list(actual.state_dict()) == list(expected.state_dict())
    same_state(actual, expected)
    same_step(actual, expected)


def test_a_buffer_can_be_parametrized():
    m = nn.BatchNorm1d(3)
    Scale = parametrizations(mg)[1]
    m.running_var.fill_(3.0)
    parametrize.register_parametrization(m, "running_var", Scale())
    assert "parametrizations.running_var.original" in m.state_dict()
    assert not isinstance(m.parametrizations.running_var.original, nn.Parameter)
    np.testing.assert_allclose(m.running_var.numpy(), 3.0)


def test_state_dict_round_trip_and_into_torch():
    expected, actual = build_both(lambda T, Sym, Scale, Counted: T.nn.utils.parametrize.
                                  register_parametrization(square(T), "weight", Scale()))
    fresh = parametrize.register_parametrization(nn.Linear(4, 4, dtype="float64"), "weight",
                                                 parametrizations(mg)[1]())
    fresh.load_state_dict(actual.state_dict())
    same_state(fresh, expected)
    expected.load_state_dict({k: torch.tensor(v.numpy())
                              for k, v in fresh.state_dict().items()})
    close(fresh.weight, expected.weight)


def test_copies():
    m = parametrize.register_parametrization(nn.Linear(3, 3), "weight",
                                             parametrizations(mg)[0]())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)
    replica = copy.deepcopy(m)
    assert type(replica) is type(m)
    assert replica.parametrizations.weight.original is not m.parametrizations.weight.original
    close(replica.weight, m.weight)


def test_transfer_parametrizations_and_params():
    source = parametrize.register_parametrization(nn.Linear(3, 3), "weight",
                                                  parametrizations(mg)[1]())
    target = parametrize.transfer_parametrizations_and_params(source, nn.Linear(3, 3))
    assert target.parametrizations.weight.original is source.parametrizations.weight.original
    close(target.weight, source.weight)


def errors(T, Sym, Scale, Counted):
    class Row(T.nn.Module):
        def forward(self, X):
            return X[:1]

    def parametrized():
        return T.nn.utils.parametrize.register_parametrization(T.nn.Linear(3, 3), "weight",
                                                               Sym())
    reg = T.nn.utils.parametrize.register_parametrization
    return {
        "no such tensor": lambda: reg(T.nn.Linear(3, 3), "foo", Sym()),
        "not parametrized": lambda: T.nn.utils.parametrize.remove_parametrizations(
            T.nn.Linear(3, 3), "weight"),
        "a new shape": lambda: reg(T.nn.Linear(3, 3), "weight", Row()),
        "appended, a new shape": lambda: reg(parametrized(), "weight", Row()),
        "assigning without right_inverse": lambda: setattr(parametrized(), "weight",
                                                           T.eye(3)),
        "assigning a Parameter": lambda: setattr(parametrized(), "weight",
                                                 T.nn.Parameter(T.eye(3))),
    }


@pytest.mark.parametrize("what", list(errors(mg, *parametrizations(mg))))
def test_errors_are_torchs(what):
    with pytest.raises(Exception) as expected:
        errors(torch, *parametrizations(torch))[what]()
    with pytest.raises(expected.type):
        errors(mg, *parametrizations(mg))[what]()


def test_assigning_a_module_to_a_parametrized_name_is_refused_where_torch_hides_it():
    # torch registers the module as a child, which the property hides from every read
    # (module.weight is still the parametrized tensor); here the KeyError a Parameter gets
    # (docs/pytorch.md)
    expected, actual = build_both(lambda T, Sym, Scale, Counted: T.nn.utils.parametrize.
                                  register_parametrization(square(T), "weight", Sym()))
    expected.weight = torch.nn.ReLU()
    assert isinstance(expected.weight, torch.Tensor) and "weight" in dict(
        expected.named_children())
    before = list(actual.state_dict())
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        actual.weight = nn.ReLU()
    assert list(actual.state_dict()) == before and isinstance(actual.weight, mg.Tensor)
    assert [name for name, _ in actual.named_children()] == ["parametrizations"]


# ----- parametrizations.orthogonal ---------------------------------------------------------
def holder(T, shape):
    """A module with one parameter of ``shape`` drawn N(0, 1), used as ``x @ weight``."""

    class Holder(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = T.nn.Parameter(T.randn(*shape, dtype=T.float64))

        def forward(self, x):
            return x @ self.weight

    return Holder()


ORTHOGONAL = [((4, 4), {}), ((5, 3), {}), ((3, 5), {}), ((2, 4, 3), {}),
              ((4, 4), {"orthogonal_map": "cayley"}), ((3, 5), {"orthogonal_map": "cayley"}),
              ((5, 3), {"orthogonal_map": "matrix_exp"}),
              ((4, 4), {"orthogonal_map": "householder"}),
              ((5, 3), {"use_trivialization": False}), ((3, 5), {"use_trivialization": False})]


@pytest.mark.parametrize("shape, options", ORTHOGONAL)
def test_orthogonal(shape, options):
    def build(T):
        return T.nn.utils.parametrizations.orthogonal(holder(T, shape), **options)

    torch.manual_seed(0)
    expected = build(torch)
    mg.manual_seed(0)
    actual = build(mg)
    same_state(actual, expected)              # base: the weight's Q, completed by draws
    optimizers = (torch.optim.SGD(expected.parameters(), lr=0.2),
                  mg.optim.SGD(actual.parameters(), lr=0.2))
    rng = np.random.default_rng(5)
    for _ in range(3):                        # X moves away from -I: every map at work
        x = rng.standard_normal((2, shape[-2]))
        y_expected, y_actual = expected(torch.tensor(x)), actual(mg.tensor(x))
        close(y_actual, y_expected)
        (y_expected ** 3).sum().backward()
        (y_actual ** 3).sum().backward()
        close(actual.parametrizations.weight.original.grad,
              expected.parametrizations.weight.original.grad)
        for opt in optimizers:
            opt.step()
            opt.zero_grad()
        same_state(actual, expected)
    Q = actual.weight.detach().numpy()
    Q = Q if shape[-2] >= shape[-1] else np.swapaxes(Q, -1, -2)
    np.testing.assert_allclose(np.swapaxes(Q, -1, -2) @ Q, np.broadcast_to(
        np.eye(Q.shape[-1]), Q.shape[:-2] + (Q.shape[-1],) * 2), atol=1e-12)


def test_orthogonal_assignment_and_errors():
    m = nn.utils.parametrizations.orthogonal(holder(mg, (4, 4)))
    rotation = np.linalg.qr(np.random.default_rng(6).standard_normal((4, 4)))[0]
    m.weight = mg.tensor(rotation)            # orthogonal already: base takes it as it is
    close(m.weight, torch.tensor(rotation))
    with pytest.raises(ValueError, match="Expected a matrix"):
        nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="has no parameter or buffer"):
        nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), "foo")
    fixed = nn.utils.parametrizations.orthogonal(holder(mg, (3, 3)), use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        fixed.weight = mg.eye(3, dtype="float64")

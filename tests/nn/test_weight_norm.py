"""Weight normalization and spectral normalization, both forms (the hooks of
``nn.utils.weight_norm`` / ``spectral_norm`` and ``nn.utils.parametrizations``), against
PyTorch: the same seed builds both modules, then names, state dict keys and values,
outputs, every parameter's gradient, spectral norm's u and v through training steps and in
eval, the remove functions and the errors. float64 unless a test says float32; the
formulas are also checked against NumPy written here."""

import copy
import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import nn

torch = pytest.importorskip("torch")
TOL = 1e-12
F32 = 1e-5


def build_both(build, dtype="float64"):
    """``build(T)`` with T torch and microgradnorm, each after ``manual_seed(0)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.manual_seed(0)
        expected = build(torch, dtype)
        mg.manual_seed(0)
        actual = build(mg, dtype)
    return expected, actual


def linear(T, dtype, *args, **kwargs):
    return T.nn.Linear(5, 4, *args, **kwargs).to(dtype=getattr(T, dtype))


def conv(T, dtype):
    return T.nn.Conv2d(2, 3, 3).to(dtype=getattr(T, dtype))


def conv_transpose(T, dtype):
    return T.nn.ConvTranspose2d(2, 3, 3).to(dtype=getattr(T, dtype))


def close(actual, expected, tol=TOL, what=""):
    expected = expected.detach().numpy()
    actual = actual.detach().numpy()
    assert actual.shape == expected.shape, what
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, err_msg=what)


def same_state(actual, expected, tol=TOL):
    want, got = expected.state_dict(), actual.state_dict()
    assert list(got) == list(want)
    for key in want:
        close(got[key], want[key], tol, key)


def same_step(actual, expected, x, tol=TOL):
    """One forward and backward of sum(y²) on both; outputs and every gradient agree."""
    y_expected = expected(torch.tensor(x))
    y_actual = actual(mg.tensor(x))
    close(y_actual, y_expected, tol, "output")
    (y_expected ** 2).sum().backward()
    (y_actual ** 2).sum().backward()
    names = [name for name, _ in expected.named_parameters()]
    assert [name for name, _ in actual.named_parameters()] == names
    for (name, p_actual), (_, p_expected) in zip(actual.named_parameters(),
                                                  expected.named_parameters()):
        close(p_actual.grad, p_expected.grad, tol, f"grad of {name}")


def sgd_steps(actual, expected, shape, steps=3, tol=TOL, check=None):
    opt_expected = torch.optim.SGD(expected.parameters(), lr=0.1)
    opt_actual = mg.optim.SGD(actual.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    dtype = actual.parameters()[0].dtype
    for _ in range(steps):
        x = rng.standard_normal(shape).astype(dtype)
        opt_expected.zero_grad()
        opt_actual.zero_grad()
        same_step(actual, expected, x, tol)
        opt_expected.step()
        opt_actual.step()
        same_state(actual, expected, tol)
        if check is not None:
            check()


# ----- the formulas, against NumPy --------------------------------------------------------
def test_weight_norm_formula_is_g_v_over_the_norm():
    from microgradnorm.nn.weight_norm import norm_except_dim, weight_norm_formula
    rng = np.random.default_rng(0)
    v, g = rng.standard_normal((3, 4, 5)), rng.standard_normal((1, 4, 1))
    w = weight_norm_formula(mg.tensor(v), mg.tensor(g), dim=1).numpy()
    norm = np.sqrt((v ** 2).sum(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(w, g * v / norm, rtol=1e-14)
    whole = norm_except_dim(mg.tensor(v), 2, -1)
    assert whole.shape == () and np.isclose(float(whole), np.linalg.norm(v))
    np.testing.assert_allclose(norm_except_dim(mg.tensor(v[0, 0]), 2, 0).numpy(),
                               np.abs(v[0, 0]))


def test_spectral_norm_divides_by_u_w_v():
    m = nn.utils.spectral_norm(nn.Linear(6, 4, dtype="float64"), n_power_iterations=50)
    m.train()
    m(mg.zeros(1, 6, dtype="float64"))
    w, u, v = m.weight_orig.detach().numpy(), m.weight_u.numpy(), m.weight_v.numpy()
    np.testing.assert_allclose(m.weight.detach().numpy(), w / (u @ w @ v), rtol=1e-12)
    # 50 steps from torch's start: σ is the largest singular value
    assert np.isclose(u @ w @ v, np.linalg.svd(w, compute_uv=False)[0], rtol=1e-9)


# ----- the hook forms ----------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None, -1, -2])
def test_weight_norm_hook_linear(dim):
    expected, actual = build_both(
        lambda T, dt: T.nn.utils.weight_norm(linear(T, dt), dim=dim))
    assert [n for n, _ in actual.named_parameters()] == ["bias", "weight_g", "weight_v"]
    assert actual.weight_g.shape == tuple(expected.weight_g.shape)
    same_state(actual, expected)
    assert not isinstance(actual.weight, nn.Parameter)
    sgd_steps(actual, expected, (3, 5))


@pytest.mark.parametrize("dim", [0, 2, None])
def test_weight_norm_hook_conv(dim):
    expected, actual = build_both(lambda T, dt: T.nn.utils.weight_norm(conv(T, dt), dim=dim))
    same_state(actual, expected)
    sgd_steps(actual, expected, (2, 2, 5, 5), steps=2)


def test_weight_norm_hook_warns_as_torch():
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        nn.utils.weight_norm(nn.Linear(3, 4))


def test_remove_weight_norm():
    expected, actual = build_both(lambda T, dt: T.nn.utils.weight_norm(linear(T, dt)))
    sgd_steps(actual, expected, (3, 5), steps=1)
    torch.nn.utils.remove_weight_norm(expected)
    assert nn.utils.remove_weight_norm(actual) is actual
    assert isinstance(actual.weight, nn.Parameter)
    same_state(actual, expected)
    assert actual._forward_pre_hooks == {}
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(actual)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("iterations", [1, 3])
def test_spectral_norm_hook_u_v_and_training(dtype, iterations):
    expected, actual = build_both(lambda T, dt: T.nn.utils.spectral_norm(
        linear(T, dt), n_power_iterations=iterations), dtype)
    # drawn as torch draws them: the same bits
    for name in ("weight_u", "weight_v"):
        assert np.array_equal(getattr(actual, name).numpy(), getattr(expected, name).numpy())
    assert [n for n, _ in actual.named_parameters()] == ["bias", "weight_orig"]
    assert list(actual.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    tol = TOL if dtype == "float64" else F32
    x = np.random.default_rng(2).standard_normal((3, 5)).astype(dtype)
    sgd_steps(actual, expected, (3, 5), tol=tol, steps=3)
    # eval: no iteration, u and v stay
    expected.eval()
    actual.eval()
    u = actual.weight_u.numpy().copy()
    close(actual(mg.tensor(x)), expected(torch.tensor(x)), tol)
    assert np.array_equal(actual.weight_u.numpy(), u)
    same_state(actual, expected, tol)


@pytest.mark.parametrize("make, rows", [(conv, 3), (conv_transpose, 3)])
def test_spectral_norm_hook_conv_dims(make, rows):
    expected, actual = build_both(lambda T, dt: T.nn.utils.spectral_norm(make(T, dt)))
    assert actual.weight_u.shape == (rows,)          # ConvTranspose: dim 1, as torch
    same_state(actual, expected)
    sgd_steps(actual, expected, (2, 2, 5, 5), steps=2)


def test_spectral_norm_hook_two_forwards_then_backward():
    # a GAN's D(real) - D(fake): the in-place updates of u and v spare the first graph
    expected, actual = build_both(lambda T, dt: T.nn.utils.spectral_norm(linear(T, dt)))
    a, b = np.random.default_rng(3).standard_normal((2, 3, 5))
    loss_expected = expected(torch.tensor(a)).sum() - expected(torch.tensor(b)).sum()
    loss_actual = actual(mg.tensor(a)).sum() - actual(mg.tensor(b)).sum()
    loss_expected.backward()
    loss_actual.backward()
    close(loss_actual, loss_expected)
    close(actual.weight_orig.grad, expected.weight_orig.grad)
    same_state(actual, expected)


def test_spectral_norm_hook_state_dict_versions():
    expected, actual = build_both(lambda T, dt: T.nn.utils.spectral_norm(linear(T, dt)))
    sgd_steps(actual, expected, (3, 5), steps=1)
    assert actual.state_dict()._metadata == expected.state_dict()._metadata   # version 1
    # a version-0 state dict (torch before 1.1): W/σ saved, v missing; v is solved for
    expected.eval()
    expected(torch.zeros(1, 5, dtype=torch.float64))       # weight: the current W/σ
    old = {key: getattr(expected, key).detach().numpy().copy()
           for key in ("bias", "weight_orig", "weight", "weight_u")}

    def versioned(dictionary):
        dictionary = OrderedDict(dictionary)
        dictionary._metadata = OrderedDict({"": {"version": 1,
                                                 "spectral_norm": {"weight.version": 0}}})
        return dictionary

    expected_new, actual_new = build_both(lambda T, dt: T.nn.utils.spectral_norm(linear(T, dt)))
    expected_new.load_state_dict(versioned({k: torch.tensor(v) for k, v in old.items()}))
    actual_new.load_state_dict(versioned({k: mg.tensor(v) for k, v in old.items()}))
    same_state(actual_new, expected_new)
    actual_new.eval()                         # uᵀ W v is the saved σ again: W/σ as saved
    actual_new(mg.zeros(1, 5, dtype="float64"))
    np.testing.assert_allclose(actual_new.weight.detach().numpy(), old["weight"], rtol=1e-10)
    # a plain dict of version 1 (no metadata) loads as it is
    actual_new.load_state_dict({k: v.numpy() for k, v in actual.state_dict().items()})
    same_state(actual_new, expected)


def test_remove_spectral_norm():
    expected, actual = build_both(lambda T, dt: T.nn.utils.spectral_norm(linear(T, dt)))
    sgd_steps(actual, expected, (3, 5), steps=1)
    torch.nn.utils.remove_spectral_norm(expected)
    nn.utils.remove_spectral_norm(actual)
    assert isinstance(actual.weight, nn.Parameter) and actual.weight.requires_grad
    same_state(actual, expected)
    assert not actual._state_dict_hooks and not actual._load_state_dict_pre_hooks
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(actual)


# ----- the parametrization forms -----------------------------------------------------------
@pytest.mark.parametrize("make, dim", [(linear, 0), (linear, None), (conv, 1)])
def test_weight_norm_parametrization(make, dim):
    P = "parametrizations"
    expected, actual = build_both(
        lambda T, dt: T.nn.utils.parametrizations.weight_norm(make(T, dt), dim=dim))
    assert type(actual).__name__ == type(expected).__name__
    assert f"{P}.weight.original0" in actual.state_dict()
    same_state(actual, expected)
    close(actual.weight, expected.weight)
    shape = (3, 5) if make is linear else (2, 2, 5, 5)
    sgd_steps(actual, expected, shape, steps=2)
    # an assignment goes through right_inverse: g, v = ‖w‖, w
    w = np.random.default_rng(4).standard_normal(tuple(expected.weight.shape))
    with torch.no_grad():
        expected.weight = torch.tensor(w)
    actual.weight = mg.tensor(w)
    same_state(actual, expected)
    close(actual.weight, expected.weight)


def test_weight_norm_parametrization_loads_the_hook_forms_state_dict():
    expected, actual = build_both(lambda T, dt: T.nn.utils.weight_norm(linear(T, dt)))
    old = {k: v.detach().numpy() for k, v in expected.state_dict().items()}
    new = nn.utils.parametrizations.weight_norm(nn.Linear(5, 4, dtype="float64"))
    assert not new.load_state_dict(old).missing_keys
    close(new.weight, expected.weight)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("make, shape", [(linear, (3, 5)), (conv, (2, 2, 5, 5)),
                                         (conv_transpose, (2, 2, 4, 4))])
def test_spectral_norm_parametrization(dtype, make, shape):
    expected, actual = build_both(
        lambda T, dt: T.nn.utils.parametrizations.spectral_norm(make(T, dt)), dtype)
    tol = TOL if dtype == "float64" else F32
    assert list(actual.state_dict()) == list(expected.state_dict())
    assert "parametrizations.weight.0._u" in actual.state_dict()
    same_state(actual, expected, tol)          # 15 + 1 power steps at registration, as torch
    sgd_steps(actual, expected, shape, steps=3, tol=tol)
    expected.eval()
    actual.eval()
    u = actual.parametrizations.weight[0]._u.numpy().copy()
    close(actual.weight, expected.weight, tol)
    assert np.array_equal(actual.parametrizations.weight[0]._u.numpy(), u)


def test_spectral_norm_parametrization_of_a_vector_is_exact():
    expected, actual = build_both(
        lambda T, dt: T.nn.utils.parametrizations.spectral_norm(linear(T, dt), name="bias"))
    assert list(actual.state_dict()) == list(expected.state_dict())
    b = actual.parametrizations.bias.original.detach().numpy()
    np.testing.assert_allclose(actual.bias.detach().numpy(), b / np.linalg.norm(b),
                               rtol=1e-14)
    sgd_steps(actual, expected, (3, 5), steps=1)


def test_spectral_norm_parametrization_state_dict_round_trip():
    expected, actual = build_both(
        lambda T, dt: T.nn.utils.parametrizations.spectral_norm(linear(T, dt)))
    sgd_steps(actual, expected, (3, 5), steps=1)
    fresh = nn.utils.parametrizations.spectral_norm(nn.Linear(5, 4, dtype="float64"))
    fresh.load_state_dict(actual.state_dict())
    same_state(fresh, expected)
    into_torch = torch.nn.utils.parametrizations.spectral_norm(
        torch.nn.Linear(5, 4).double())
    into_torch.load_state_dict({k: torch.tensor(v.numpy())
                                for k, v in actual.state_dict().items()})
    fresh.eval()
    into_torch.eval()
    close(fresh.weight, into_torch.weight)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_of_spectral_norm(leave):
    expected, actual = build_both(
        lambda T, dt: T.nn.utils.parametrizations.spectral_norm(linear(T, dt)))
    original = actual.parametrizations.weight.original
    torch.nn.utils.parametrize.remove_parametrizations(expected, "weight", leave)
    nn.utils.parametrize.remove_parametrizations(actual, "weight", leave)
    assert type(actual) is nn.Linear and actual.weight is original   # the optimizer's
    same_state(actual, expected)


# ----- errors: torch's classes -------------------------------------------------------------
def scalar_parameter(T):
    """A module holding the 0-d parameter ``t``: no dim for weight norm to keep."""
    module = T.nn.Module()
    module.t = T.nn.Parameter(T.tensor(2.0))
    return module


ERRORS = [
    ("weight_norm, bad name", lambda T: T.nn.utils.weight_norm(T.nn.Linear(3, 4), "foo")),
    ("weight_norm, no parameter", lambda T: T.nn.utils.weight_norm(T.nn.ReLU())),
    ("weight_norm, None", lambda T: T.nn.utils.weight_norm(T.nn.Linear(3, 4, bias=False),
                                                            "bias")),
    ("weight_norm, a buffer", lambda T: T.nn.utils.weight_norm(T.nn.BatchNorm1d(3),
                                                                "running_mean")),
    ("weight_norm, dim", lambda T: T.nn.utils.weight_norm(T.nn.Linear(3, 4), dim=2)),
    ("weight_norm twice", lambda T: T.nn.utils.weight_norm(
        T.nn.utils.weight_norm(T.nn.Linear(3, 4)))),
    ("spectral_norm, bad name", lambda T: T.nn.utils.spectral_norm(T.nn.Linear(3, 4),
                                                                    "foo")),
    ("spectral_norm, None", lambda T: T.nn.utils.spectral_norm(
        T.nn.Linear(3, 4, bias=False), "bias")),
    ("spectral_norm twice", lambda T: T.nn.utils.spectral_norm(
        T.nn.utils.spectral_norm(T.nn.Linear(3, 4)))),
    ("spectral_norm, iterations", lambda T: T.nn.utils.spectral_norm(
        T.nn.Linear(3, 4), n_power_iterations=0)),
    ("P.weight_norm, bad name", lambda T: T.nn.utils.parametrizations.weight_norm(
        T.nn.Linear(3, 4), "foo")),
    ("P.spectral_norm, bad name", lambda T: T.nn.utils.parametrizations.spectral_norm(
        T.nn.Linear(3, 4), "foo")),
    ("P.spectral_norm, dim", lambda T: T.nn.utils.parametrizations.spectral_norm(
        T.nn.Linear(3, 4), dim=2)),
    ("P.spectral_norm, iterations", lambda T: T.nn.utils.parametrizations.spectral_norm(
        T.nn.Linear(3, 4), n_power_iterations=0)),
    ("P.weight_norm, leave unparametrized", lambda T: T.nn.utils.parametrize.
     remove_parametrizations(T.nn.utils.parametrizations.weight_norm(T.nn.Linear(3, 4)),
                             "weight", leave_parametrized=False)),
]
# weight norm of a 0-d parameter, or with a dim that is no int, in both forms
FORMS = {"weight_norm": lambda T: T.nn.utils.weight_norm,
         "P.weight_norm": lambda T: T.nn.utils.parametrizations.weight_norm}
DIM_ERRORS = [
    ("0-d", lambda T, weight_norm: weight_norm(scalar_parameter(T), "t")),
    ("0-d, dim None", lambda T, weight_norm: weight_norm(scalar_parameter(T), "t",
                                                         dim=None).t),
    ("0-d, dim 1", lambda T, weight_norm: weight_norm(scalar_parameter(T), "t", dim=1)),
    ("dim float", lambda T, weight_norm: weight_norm(T.nn.Linear(3, 4), dim=1.0)),
    ("dim bool", lambda T, weight_norm: weight_norm(T.nn.Linear(3, 4), dim=True)),
]
DIM_ERRORS = [(f"{form}, {what}", lambda T, form=form, call=call: call(T, FORMS[form](T)))
              for form in FORMS for what, call in DIM_ERRORS]
ERRORS += DIM_ERRORS


@pytest.mark.parametrize("what, call", ERRORS, ids=[what for what, _ in ERRORS])
def test_errors_are_torchs(what, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(Exception) as expected:
            call(torch)
        with pytest.raises(expected.type) as actual:
            call(mg)
    assert str(actual.value).split(" ")[0] == str(expected.value).split(" ")[0]


@pytest.mark.parametrize("what, call", DIM_ERRORS, ids=[what for what, _ in DIM_ERRORS])
def test_dim_errors_are_torchs_words(what, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(Exception) as expected:
            call(torch)
        with pytest.raises(expected.type, match=f"^{re.escape(str(expected.value))}$"):
            call(mg)


def test_a_failed_registration_changes_nothing():
    m = nn.Linear(3, 4)
    before = copy.deepcopy(m.state_dict())
    with pytest.raises(IndexError), pytest.warns(FutureWarning):
        nn.utils.weight_norm(m, dim=5)
    with pytest.raises(IndexError):
        nn.utils.parametrizations.spectral_norm(m, dim=5)
    with pytest.raises(TypeError), pytest.warns(FutureWarning):
        nn.utils.weight_norm(m, dim=1.0)
    with pytest.raises(TypeError):
        nn.utils.parametrizations.weight_norm(m, dim=1.0)
    assert type(m) is nn.Linear and list(m.state_dict()) == list(before)
    assert m._forward_pre_hooks == {}

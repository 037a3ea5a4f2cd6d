"""nn.init (PyTorch's formulas, in place, version bumped), ModuleDict / ParameterList /
ParameterDict (PyTorch's names), nn.functional as F, mg.save / mg.load, and mg.norm_impl
reaching every norm call, a user's F.layer_norm included."""

import math
import threading
import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn


def test_calculate_gain_matches_torch():
    for name, param in [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                        ("selu", None), ("leaky_relu", None), ("leaky_relu", 0.2)]:
        assert nn.init.calculate_gain(name, param) == pytest.approx(
            torch.nn.init.calculate_gain(name, param), rel=1e-15)


@pytest.mark.parametrize("fn, kwargs, std", [
    ("normal_", {"mean": 0.5, "std": 0.02}, lambda i, o: 0.02),
    ("xavier_uniform_", {}, lambda i, o: math.sqrt(6 / (i + o)) / math.sqrt(3)),
    ("xavier_normal_", {"gain": 2.0}, lambda i, o: 2 * math.sqrt(2 / (i + o))),
    ("kaiming_uniform_", {"nonlinearity": "relu"}, lambda i, o: math.sqrt(2 / i)),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"},
     lambda i, o: math.sqrt(2 / o)),
    ("trunc_normal_", {"std": 1.0, "a": -2.0, "b": 2.0}, lambda i, o: 0.8796),
])
def test_initialisers_draw_torchs_distribution_in_place(fn, kwargs, std):
    # the same formulas: the sample std of ours and of torch's against the formula's
    w = nn.Parameter(np.zeros((300, 200)))
    optimizer_view, version = w, w._version
    assert getattr(nn.init, fn)(w, **kwargs) is w and w is optimizer_view
    assert w._version == version + 1 and w.grad_fn is None
    w_t = torch.empty(300, 200, dtype=torch.float64)
    getattr(torch.nn.init, fn)(w_t, **kwargs)
    expected = std(200, 300)                 # fan_in = 200 columns, fan_out = 300 rows
    assert w.detach().std().item() == pytest.approx(expected, rel=0.02)
    assert w_t.numpy().std() == pytest.approx(expected, rel=0.02)
    if fn == "trunc_normal_":
        assert w.detach().abs().max().item() <= 2.0


def test_constant_fills_eye_orthogonal_and_bad_input():
    w = nn.Parameter(np.zeros((3, 5)))
    np.testing.assert_array_equal(nn.init.ones_(w).data, np.ones((3, 5)))
    np.testing.assert_array_equal(nn.init.zeros_(w).data, np.zeros((3, 5)))
    np.testing.assert_array_equal(nn.init.constant_(w, 0.3).data, np.full((3, 5), 0.3))
    np.testing.assert_array_equal(nn.init.eye_(w).data, torch.nn.init.eye_(
        torch.empty(3, 5)).numpy())
    q = nn.init.orthogonal_(w, gain=2.0).data
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(3), atol=1e-12)
    with pytest.raises(ValueError, match="at least 2 dims"):
        nn.init.xavier_uniform_(nn.Parameter(np.zeros(4)))
    with pytest.raises(ValueError, match="mode must be"):
        nn.init.kaiming_normal_(w, mode="fan")


def test_module_dict_and_parameter_containers_name_like_torch():
    def build(nn_, torch_):
        return nn_.ModuleDict(dict(
            wte=nn_.Embedding(5, 4), h=nn_.ModuleList([nn_.Linear(4, 4) for _ in range(2)]),
            ln_f=nn_.LayerNorm(4), extra=nn_.ParameterList([nn_.Parameter(torch_.ones(3))]),
            table=nn_.ParameterDict({"scale": nn_.Parameter(torch_.zeros(2))})))
    ours, theirs = build(nn, mg), build(torch.nn, torch)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert "h.1.bias" in ours.state_dict() and ours.wte is ours["wte"]
    assert list(ours.keys()) == list(theirs.keys()) and "ln_f" in ours and len(ours) == 5
    del ours["ln_f"]
    assert "ln_f" not in ours and not any(n.startswith("ln_f") for n in ours.state_dict())
    params = nn.ParameterList([mg.ones(2)])               # a Tensor becomes a Parameter
    assert isinstance(params[0], nn.Parameter) and params[0].requires_grad
    with pytest.raises(TypeError, match="Module"):
        nn.ModuleDict({"a": 3})


def test_nn_functional_is_functional():
    import microgradnorm.nn.functional as F1
    from microgradnorm.nn import functional as F2
    assert F1 is F2 is F and mg.nn.functional.gelu is F.gelu


def test_save_and_load_a_state_dict(tmp_path):
    model = nn.Linear(3, 2)
    mg.save(model.state_dict(), tmp_path / "m.npz")
    other = nn.Linear(3, 2)
    other.load_state_dict(mg.load(tmp_path / "m.npz"))
    np.testing.assert_array_equal(other.weight.data, model.weight.data)


class UserLayerNorm(nn.Module):
    """nanoGPT's: parameters of its own and a call of F.layer_norm without impl=."""

    def __init__(self, ndim):
        super().__init__()
        self.weight = nn.Parameter(mg.ones(ndim))
        self.bias = nn.Parameter(mg.zeros(ndim))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


def norm_nodes(y):
    return mg.graph_stats(y).by_op.get("LayerNorm", 0)


def test_set_impl_reaches_a_users_module_calling_f_layer_norm():
    model = nn.Sequential(nn.Linear(4, 4), UserLayerNorm(4), nn.LayerNorm(4)).double()
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 4)))
    fused = model(x)
    assert norm_nodes(fused) == 2
    composite = model.set_impl("composite")(x)
    assert norm_nodes(composite) == 0
    np.testing.assert_allclose(composite.data, fused.data, rtol=0, atol=1e-12)
    assert norm_nodes(model[1](x)) == 0          # a sub-module called on its own too
    assert norm_nodes(model.set_impl("fused")(x)) == 2


def test_norm_impl_block_is_per_thread_and_an_explicit_impl_warns():
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 4)), requires_grad=True)
    assert norm_nodes(F.layer_norm(x, 4)) == 1           # fused outside a block
    seen = {}
    with mg.norm_impl("composite"):
        assert mg.get_norm_impl() == "composite"
        assert norm_nodes(F.layer_norm(x, 4)) == 0
        worker = threading.Thread(target=lambda: seen.update(impl=mg.get_norm_impl()))
        worker.start()
        worker.join()
        with pytest.warns(UserWarning, match="impl='fused' given explicitly"):
            assert norm_nodes(F.layer_norm(x, 4, impl="fused")) == 1
    assert seen == {"impl": "fused"} and mg.get_norm_impl() == "fused"
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # outside a block: no warning
        assert norm_nodes(F.layer_norm(x, 4, impl="fused")) == 1
    with pytest.raises(ValueError, match="impl must be one of"):
        mg.norm_impl("fast")

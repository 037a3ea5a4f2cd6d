"""The activations, linear, embedding, one_hot, normalize and cosine_similarity of ``F``, and
the activation, shape and Embedding modules, against PyTorch: float64 values and the
gradient of a random upstream into each input, result dtypes, errors (PyTorch's classes),
0-d and empty inputs, in-place forms, reprs."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from torch_compare import check, pair, same, same_error

TF = torch.nn.functional






# ----- activations ----------------------------------------------------------------------------
ACTIVATIONS = {     # name: (ours, theirs), the options PyTorch's defaults and one other
    "relu": (F.relu, TF.relu),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2)),
    "leaky_relu_default": (F.leaky_relu, TF.leaky_relu),
    "elu": (F.elu, TF.elu),
    "elu_alpha": (lambda x: F.elu(x, 2.0), lambda x: TF.elu(x, 2.0)),
    "softplus": (F.softplus, TF.softplus),
    "softplus_beta": (lambda x: F.softplus(x, 2.0, 3.0), lambda x: TF.softplus(x, 2.0, 3.0)),
    "mish": (F.mish, TF.mish),
    "hardtanh": (F.hardtanh, TF.hardtanh),
    "hardtanh_bounds": (lambda x: F.hardtanh(x, -0.5, 2.0), lambda x: TF.hardtanh(x, -0.5, 2.0)),
    "logsigmoid": (F.logsigmoid, TF.logsigmoid),
}


def activation_inputs():
    data = 3 * np.random.default_rng(1).standard_normal(24)
    # the kinks, the bounds and softplus's threshold (βx = 3 at x = 1.5), and far out
    return np.concatenate([data, [0.0, -1.0, 1.0, -0.5, 2.0, 1.5, 20.0, 40.0, -40.0,
                                  700.0, -700.0, 1e-9]])


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_match_torch(name):
    ours, theirs = ACTIVATIONS[name]
    for shape in [(6, 6), (), (0, 3)]:
        data = activation_inputs()[:int(np.prod(shape))].reshape(shape)
        x, xt = pair(data)
        check(ours(x), theirs(xt), [(x, xt)])
    for dtype in ("float32", "int64", "bool"):            # result dtypes, or torch's error
        data = np.array([-2, 0, 3]).astype(dtype)
        same(lambda d=data: ours(mg.tensor(d)), lambda d=data: theirs(torch.tensor(d)))


@pytest.mark.parametrize("name", ["relu", "elu", "elu_alpha", "leaky_relu"])
def test_activation_gradients_at_nan_and_inf_as_torch(name):
    # torch's kernels send a NaN to the branch of x > 0 (they test x <= 0): it gets the
    # gradient of that side (ELU's vectorised loop gives NaN there: one answer here)
    ours, theirs = ACTIVATIONS[name]
    x, xt = pair(np.array([np.inf, -np.inf, np.nan, 1.0, -1.0, 0.0]))
    check(ours(x), theirs(xt), [(x, xt)])


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "elu", "mish", "hardtanh"])
def test_inplace_activations_write_into_the_input_and_keep_the_gradient(name):
    ours, theirs = getattr(F, name), getattr(TF, name)
    data = activation_inputs()
    x, xt = pair(data)
    h, ht = x * 1.5, xt * 1.5                               # non-leaves: in place is allowed
    y, yt = ours(h, inplace=True), theirs(ht, inplace=True)
    assert y is h
    check(y, yt, [(x, xt)])
    plain = mg.tensor(data)                                 # no graph: a plain write
    assert ours(plain, inplace=True) is plain
    np.testing.assert_allclose(plain.numpy(), theirs(torch.tensor(data)).numpy(), atol=1e-12)
    leaf, leaf_t = pair(data)                               # a leaf that requires grad
    same_error(lambda: ours(leaf, inplace=True), lambda: theirs(leaf_t, inplace=True))
    np.testing.assert_array_equal(leaf.detach().numpy(), data)


def test_activation_argument_errors_as_torch():
    x, xt = pair(np.ones(3))
    same_error(lambda: F.hardtanh(x, 1.0, -1.0), lambda: TF.hardtanh(xt, 1.0, -1.0))
    same_error(lambda: nn.Hardtanh(1.0, -1.0), lambda: torch.nn.Hardtanh(1.0, -1.0))
    with pytest.raises(TypeError):
        F.leaky_relu(x, "0.1")
    with pytest.raises(TypeError):
        F.softplus([1.0])


# ----- linear ---------------------------------------------------------------------------------
def test_linear_matches_torch():
    rng = np.random.default_rng(2)
    for x_shape, w_shape, bias in [((3, 4), (2, 4), True), ((2, 3, 4), (5, 4), False),
                                   ((4,), (2, 4), True), ((3, 4), (4,), False),
                                   ((0, 4), (2, 4), True), ((3, 4), (2, 4), "broadcast")]:
        x, xt = pair(rng.standard_normal(x_shape))
        w, wt = pair(rng.standard_normal(w_shape))
        b_shape = (3, 1) if bias == "broadcast" else w_shape[:1]
        b, bt = pair(rng.standard_normal(b_shape)) if bias else (None, None)
        inputs = [(x, xt), (w, wt)] + ([(b, bt)] if bias else [])
        check(F.linear(x, w, b), TF.linear(xt, wt, bt), inputs)
    same(lambda: F.linear(mg.tensor([[1, 2]]), mg.tensor([[3, 4]])),
         lambda: TF.linear(torch.tensor([[1, 2]]), torch.tensor([[3, 4]])))


def test_linear_errors_as_torch():
    x, xt = pair(np.ones((3, 4)))
    for w_shape, b_shape, w_dtype in [((2, 5), None, "float64"), ((2, 4), None, "float32"),
                                      ((2, 2, 4), None, "float64"), ((2, 4), (3,), "float64"),
                                      ((4,), (), "float64")]:
        def call(module, w_shape=w_shape, b_shape=b_shape, w_dtype=w_dtype):
            w = module.ones(w_shape, dtype=getattr(module, w_dtype))
            b = None if b_shape is None else module.ones(b_shape, dtype=module.float64)
            return (F if module is mg else TF).linear(
                x if module is mg else xt, w, b)
        same_error(lambda call=call: call(mg), lambda call=call: call(torch))
    same_error(lambda: F.linear(mg.tensor(1.0), mg.tensor(2.0)),
               lambda: TF.linear(torch.tensor(1.0), torch.tensor(2.0)))
    same_error(lambda: F.linear([1.0], mg.ones(2, 1)), lambda: TF.linear([1.0], torch.ones(2, 1)))
    assert x.grad is None


def test_linear_module_forward_is_f_linear():
    layer = nn.Linear(4, 3, dtype=mg.float64)
    x = mg.tensor(np.random.default_rng(3).standard_normal((2, 4)))
    np.testing.assert_array_equal(layer(x).detach().numpy(),
                                  F.linear(x, layer.weight, layer.bias).detach().numpy())


# ----- embedding ------------------------------------------------------------------------------
def test_embedding_padding_row_gets_no_gradient_as_torch():
    rng = np.random.default_rng(4)
    table = rng.standard_normal((6, 3))
    ids = np.array([[0, 5, 2], [2, 0, 0]])
    for padding_idx in (None, 0, 2, -1):
        w, wt = pair(table)
        check(F.embedding(mg.tensor(ids), w, padding_idx),
              TF.embedding(torch.tensor(ids), wt, padding_idx), [(w, wt)])
    w, wt = pair(table)
    check(F.embedding(mg.tensor(3), w, 3), TF.embedding(torch.tensor(3), wt, 3), [(w, wt)])
    empty = np.zeros((0, 2), np.int64)
    w, wt = pair(table)
    check(F.embedding(mg.tensor(empty), w), TF.embedding(torch.tensor(empty), wt), [(w, wt)])


def test_embedding_max_norm_renormalizes_the_rows_looked_up_as_torch():
    rng = np.random.default_rng(5)
    table = 2 * rng.standard_normal((6, 3))
    ids = np.array([1, 4, 4, 0])
    for max_norm, norm_type in [(1.0, 2.0), (0.5, 1.0), (1.5, np.inf)]:
        w, wt = pair(table)
        with torch.no_grad():              # torch writes into the leaf only outside a graph
            want = TF.embedding(torch.tensor(ids), wt, max_norm=max_norm, norm_type=norm_type)
        with mg.no_grad():
            got = F.embedding(mg.tensor(ids), w, max_norm=max_norm, norm_type=norm_type)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
        np.testing.assert_allclose(w.detach().numpy(), wt.detach().numpy(), rtol=1e-12)
        assert not np.array_equal(w.detach().numpy(), table)        # rows 1, 4, 0 shrank


def test_embedding_errors_as_torch():
    w, wt = pair(np.ones((5, 3)))
    for ids, weight_shape, padding_idx in [([5], (5, 3), None), ([-1], (5, 3), None),
                                           ([1], (5,), None), ([1], (5, 3), 5),
                                           ([1], (5, 3), -6)]:
        def call(module, ids=ids, shape=weight_shape, padding_idx=padding_idx):
            f = F.embedding if module is mg else TF.embedding
            return f(module.tensor(ids), module.ones(shape), padding_idx)
        same_error(lambda call=call: call(mg), lambda call=call: call(torch))
    with pytest.raises(TypeError, match="integer"):           # torch: a RuntimeError
        F.embedding(mg.tensor([1.0]), w)
    assert np.array_equal(F.embedding(mg.tensor([1]), w, sparse=True).detach().numpy(),
                          F.embedding(mg.tensor([1]), w).detach().numpy())   # dense gradient


def test_embedding_module_padding_pretrained_and_repr_as_torch():
    for padding_idx in (None, 1, -1):
        mg.manual_seed(3)
        torch.manual_seed(3)
        ours = nn.Embedding(5, 3, padding_idx=padding_idx, dtype=mg.float64)
        theirs = torch.nn.Embedding(5, 3, padding_idx=padding_idx, dtype=torch.float64)
        assert repr(ours) == repr(theirs) and ours.padding_idx == theirs.padding_idx
        np.testing.assert_array_equal(ours.weight.detach().numpy(),
                                      theirs.weight.detach().numpy())   # the padding row 0
        ids = np.array([[4, 1], [0, 4]])
        check(ours(ids), theirs(torch.tensor(ids)), [(ours.weight, theirs.weight)])
    table = np.arange(6.0).reshape(3, 2)
    for freeze in (True, False):
        ours = nn.Embedding.from_pretrained(mg.tensor(table), freeze=freeze, padding_idx=0)
        theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=freeze,
                                                    padding_idx=0)
        assert ours.weight.requires_grad == theirs.weight.requires_grad == (not freeze)
        assert repr(ours) == repr(theirs)
        np.testing.assert_array_equal(ours.weight.detach().numpy(), table)   # kept as given
    assert repr(nn.Embedding(4, 2, max_norm=1.0, norm_type=1.0)) == \
        repr(torch.nn.Embedding(4, 2, max_norm=1.0, norm_type=1.0))
    same_error(lambda: nn.Embedding(5, 3, padding_idx=5),
               lambda: torch.nn.Embedding(5, 3, padding_idx=5))
    same_error(lambda: nn.Embedding.from_pretrained(mg.ones(5)),
               lambda: torch.nn.Embedding.from_pretrained(torch.ones(5)))
    same_error(lambda: nn.Embedding(5, 3, _weight=mg.ones(4, 3)),
               lambda: torch.nn.Embedding(5, 3, _weight=torch.ones(4, 3)))


# ----- one_hot --------------------------------------------------------------------------------
def test_one_hot_matches_torch():
    cases = [([0, 2, 1], -1), ([[0, 2], [3, 1]], 5), (2, -1), (np.zeros(0, np.int64), 3),
             (np.zeros((2, 0), np.int64), 4)]
    for data, classes in cases:
        data = np.asarray(data, dtype=np.int64)
        same(lambda d=data, c=classes: F.one_hot(mg.tensor(d), c),
             lambda d=data, c=classes: TF.one_hot(torch.tensor(d), c))
    for data, classes in [([1, 2], 3.0), ([-1, 2], 3), ([3, 2], 3), ([1], -2), ([0], 0),
                          (np.zeros(0, np.int64), -1), (np.zeros(0, np.int64), 0)]:
        data = np.asarray(data, dtype=np.int64)
        same_error(lambda d=data, c=classes: F.one_hot(mg.tensor(d), c),
                   lambda d=data, c=classes: TF.one_hot(torch.tensor(d), c))
    for dtype in ("int32", "uint8", "bool", "float64"):
        data = np.array([1, 0]).astype(dtype)
        same_error(lambda d=data: F.one_hot(mg.tensor(d), 3),
                   lambda d=data: TF.one_hot(torch.tensor(d), 3))


# ----- normalize, cosine_similarity -----------------------------------------------------------
def test_normalize_matches_torch():
    rng = np.random.default_rng(6)
    data = rng.standard_normal((3, 4, 2))
    data[1, :, 0] = 0.0                                     # a zero norm: divided by eps
    for p, dim in [(2.0, 1), (1.0, -1), (np.inf, 0), (3.0, 2)]:
        x, xt = pair(data)
        check(F.normalize(x, p, dim), TF.normalize(xt, p, dim), [(x, xt)], atol=1e-9)
    for shape, dim in [((), 0), ((0, 3), 1)]:
        x, xt = pair(np.full(shape, 2.0))
        check(F.normalize(x, dim=dim), TF.normalize(xt, dim=dim), [(x, xt)])
    x, xt = pair(data)
    same_error(lambda: F.normalize(x, dim=3), lambda: TF.normalize(xt, dim=3))
    same_error(lambda: F.normalize(mg.tensor([[3, 4]])), lambda: TF.normalize(
        torch.tensor([[3, 4]])))
    assert F.normalize(mg.ones(2, 3)).dtype == mg.float32


@pytest.mark.parametrize("p", [-1.0, -2.5, 0.0, 0.5, -np.inf])
def test_normalize_takes_any_order_as_torch(p):
    # torch divides by x.norm(p) for every real p, negative and 0 included
    data = np.random.default_rng(8).standard_normal((2, 3, 4))
    data[0, 1, 2] = 0.0
    x, xt = pair(data)
    check(F.normalize(x, p, 1), TF.normalize(xt, p, 1), [(x, xt)], atol=1e-9)


def test_cosine_similarity_matches_torch():
    rng = np.random.default_rng(7)
    for shape1, shape2, dim in [((3, 4), (3, 4), 1), ((2, 3, 4), (3, 4), -1),
                                ((4,), (4,), 0), ((), (), 0), ((0, 3), (0, 3), 1),
                                ((2, 0), (2, 0), 1)]:
        a, at = pair(rng.standard_normal(shape1))
        b, bt = pair(rng.standard_normal(shape2))
        check(F.cosine_similarity(a, b, dim), TF.cosine_similarity(at, bt, dim),
              [(a, at), (b, bt)])
    tiny = np.array([[0.0, 0.0], [1e-10, 0.0], [1.0, 2.0]])  # norms at and below eps
    a, at = pair(tiny)
    b, bt = pair(np.ones((3, 2)))
    check(F.cosine_similarity(a, b), TF.cosine_similarity(at, bt), [(a, at), (b, bt)],
          atol=1e-6)
    same(lambda: F.cosine_similarity(mg.ones(2, 3), mg.ones(2, 3, dtype=mg.float64)),
         lambda: TF.cosine_similarity(torch.ones(2, 3), torch.ones(2, 3, dtype=torch.float64)))
    for ours, theirs in [
            (lambda: F.cosine_similarity(mg.tensor([[1, 2]]), mg.tensor([[1, 2]])),
             lambda: TF.cosine_similarity(torch.tensor([[1, 2]]), torch.tensor([[1, 2]]))),
            (lambda: F.cosine_similarity(mg.ones(3), mg.ones(3), dim=1),
             lambda: TF.cosine_similarity(torch.ones(3), torch.ones(3), dim=1)),
            (lambda: F.cosine_similarity(mg.ones(3), mg.ones(3), dim=0, eps=-1.0),
             lambda: TF.cosine_similarity(torch.ones(3), torch.ones(3), dim=0, eps=-1.0))]:
        same_error(ours, theirs)


# ----- activation and shape modules -----------------------------------------------------------
def module_pairs():
    return [(nn.ReLU(), torch.nn.ReLU()), (nn.ReLU(inplace=True), torch.nn.ReLU(True)),
            (nn.Sigmoid(), torch.nn.Sigmoid()),
            (nn.LeakyReLU(0.2, True), torch.nn.LeakyReLU(0.2, True)),
            (nn.ELU(), torch.nn.ELU()), (nn.ELU(2.0, True), torch.nn.ELU(2.0, True)),
            (nn.Softplus(2, 10), torch.nn.Softplus(2, 10)), (nn.Mish(), torch.nn.Mish()),
            (nn.Mish(True), torch.nn.Mish(True)), (nn.Hardtanh(), torch.nn.Hardtanh()),
            (nn.Hardtanh(-2, 2, True), torch.nn.Hardtanh(-2, 2, True)),
            (nn.Softmax(dim=1), torch.nn.Softmax(dim=1)),
            (nn.LogSoftmax(-1), torch.nn.LogSoftmax(-1)),
            (nn.Identity(3, a=4), torch.nn.Identity(3, a=4)),
            (nn.Flatten(), torch.nn.Flatten()), (nn.Flatten(0, 1), torch.nn.Flatten(0, 1)),
            (nn.Unflatten(1, (2, 2)), torch.nn.Unflatten(1, (2, 2))),
            (nn.Unflatten(-1, [3, -1]), torch.nn.Unflatten(-1, [3, -1]))]


def test_activation_and_shape_modules_match_torch_modules():
    data = np.random.default_rng(8).standard_normal((2, 4, 3))
    for ours, theirs in module_pairs():
        assert repr(ours) == repr(theirs)
        x, xt = pair(data)
        if getattr(theirs, "inplace", False):
            check(ours(x * 1.0), theirs(xt * 1.0), [(x, xt)])
        else:
            check(ours(x), theirs(xt), [(x, xt)])
    np.testing.assert_allclose(nn.Sigmoid()(data).numpy(), torch.sigmoid(torch.tensor(data)))


def test_softmax_without_dim_warns_and_picks_torchs_implicit_dim():
    for shape in [(), (3,), (2, 3), (2, 3, 4), (2, 3, 2, 2)]:
        data = np.random.default_rng(9).standard_normal(shape)
        for ours, theirs in [(nn.Softmax(), torch.nn.Softmax()),
                             (nn.LogSoftmax(), torch.nn.LogSoftmax())]:
            with pytest.warns(UserWarning, match="Implicit dimension"):
                got = ours(mg.tensor(data))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = theirs(torch.tensor(data))
            np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)


def test_shape_modules_errors_as_torch():
    for build, data in [(lambda m: m.Flatten(), np.array(1.0)),
                        (lambda m: m.Flatten(), np.ones(3)),
                        (lambda m: m.Unflatten(1, (2, 4)), np.ones((2, 10))),
                        (lambda m: m.Unflatten(2, (2, 5)), np.ones((2, 10))),
                        (lambda m: m.Unflatten(1, ()), np.ones((2, 1))),
                        (lambda m: m.Unflatten(1, 5), None),
                        (lambda m: m.Unflatten(1, (2.0, 5)), None)]:
        def call(module, build=build, data=data):
            layer = build(module.nn)
            return layer(module.tensor(data)) if data is not None else layer
        same_error(lambda call=call: call(mg), lambda call=call: call(torch))
    with pytest.raises(ValueError):                            # torch: a RuntimeError
        nn.Flatten(2, 1)(mg.ones(2, 3, 4))
    for shape in [(0, 3, 4), ()]:
        flat = torch.nn.Flatten(0, -1)(torch.zeros(shape)).shape
        assert nn.Flatten(0, -1)(mg.zeros(shape)).shape == tuple(flat)


def test_the_new_activations_build_mlps():
    for name in ("sigmoid", "leaky_relu", "elu", "softplus", "mish", "hardtanh"):
        model = nn.MLP(3, 4, 2, activation=name)
        assert type(model.layers[1]).__name__.lower().replace("_", "") == \
            name.replace("_", "")
        assert model(mg.ones(5, 3)).shape == (5, 2)

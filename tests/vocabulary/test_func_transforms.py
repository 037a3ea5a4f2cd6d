"""``mg.func``'s transforms (``grad``, ``grad_and_value``, ``vjp``, ``jacrev``, ``jacfwd``,
``hessian``, ``vmap``, ``stack_module_state``) against ``torch.func`` in float64: the
per-sample-gradient and model-ensembling recipes as torch's tutorials write them, Jacobians
and Hessians of small functions, nested transforms, ``vmap``'s in_dims, out_dims and
randomness, which results keep their history, and the errors, with torch's words. Each
reference is also checked against a loop of plain backward passes here."""

import re

import numpy as np
import pytest
import torch

import microgradnorm as mg

LIBS = (mg, torch)


def arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


def numpy(tree):
    # tensors of a (nested) result as arrays, for comparison
    if isinstance(tree, dict):
        return {k: numpy(v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return [numpy(v) for v in tree]
    return tree.detach().numpy() if isinstance(tree, (mg.Tensor, torch.Tensor)) else tree


def assert_same(ours, theirs, rtol=1e-12, atol=1e-13):
    if isinstance(ours, dict):
        assert list(ours) == list(theirs)
        for k in ours:
            assert_same(ours[k], theirs[k], rtol, atol)
    elif isinstance(ours, list):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, rtol, atol)
    else:
        assert np.shape(ours) == np.shape(theirs)
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


def both(run):
    """``run(lib)`` for mg and torch, as arrays."""
    return [numpy(run(lib)) for lib in LIBS]


def mlp(lib, seed=0, dtype="float64"):
    """A small MLP, torch's weights copied into ours."""
    torch.manual_seed(seed)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(),
                                 torch.nn.Linear(5, 2)).to(getattr(torch, dtype))
    if lib is torch:
        return theirs
    ours = mg.nn.Sequential(mg.nn.Linear(3, 5), mg.nn.Tanh(),
                            mg.nn.Linear(5, 2)).to(dtype=getattr(mg, dtype))
    ours.load_state_dict({k: mg.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours


# ---- the tutorials' recipes
@pytest.mark.parametrize("dtype, rtol, atol", [("float64", 1e-12, 1e-14),
                                               ("float32", 2e-5, 1e-6)])
def test_per_sample_gradients_as_torchs_tutorial(dtype, rtol, atol):
    data, labels = arrays((6, 3))[0].astype(dtype), np.array([0, 1, 1, 0, 1, 0])

    def per_sample(lib):
        model = mlp(lib, dtype=dtype)
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
            predictions = lib.func.functional_call(model, (params, buffers), (batch,))
            return lib.nn.functional.cross_entropy(predictions, targets)

        compute_sample_grad = lib.func.vmap(lib.func.grad(compute_loss),
                                            in_dims=(None, None, 0, 0))
        grads = compute_sample_grad(params, buffers, lib.tensor(data), lib.tensor(labels))
        assert not any(g.requires_grad for g in grads.values())
        return grads

    ours, theirs = both(per_sample)
    assert_same(ours, theirs, rtol, atol)
    model = mlp(mg, dtype=dtype)                  # and a loop of plain backward passes here
    for i in range(len(data)):
        model.zero_grad()
        loss = mg.nn.functional.cross_entropy(model(mg.tensor(data[i:i + 1])),
                                              mg.tensor(labels[i:i + 1]))
        loss.backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(ours[name][i], p.grad.numpy(), rtol=rtol, atol=atol)


def test_model_ensembling_with_stacked_state_as_torchs_tutorial():
    minibatches, = arrays((4, 7, 3), seed=1)

    def ensemble(lib):
        models = [mlp(lib, seed=s) for s in range(4)]
        params, buffers = lib.func.stack_module_state(models)
        assert all(p.is_leaf and p.requires_grad for p in params.values())
        base = models[0]

        def fmodel(params, buffers, x):
            return lib.func.functional_call(base, (params, buffers), (x,))

        same_batch = lib.vmap(fmodel, in_dims=(0, 0, None))(params, buffers,
                                                            lib.tensor(minibatches[0]))
        each_batch = lib.vmap(fmodel)(params, buffers, lib.tensor(minibatches))
        (each_batch ** 2).sum().backward()          # into the stacked leaves, as torch's
        return same_batch, each_batch, {k: p.grad for k, p in params.items()}

    ours, theirs = both(ensemble)
    assert_same(ours, theirs)
    loop = [mlp(mg, seed=s)(mg.tensor(minibatches[s])).detach().numpy() for s in range(4)]
    np.testing.assert_allclose(ours[1], np.stack(loop), rtol=1e-12)


def test_stack_module_state_stacks_buffers_and_checks_the_models():
    for lib in LIBS:
        nets = [lib.nn.BatchNorm1d(3) for _ in range(2)]
        nets[1].running_mean.fill_(2.0)
        params, buffers = lib.func.stack_module_state(nets)
        assert list(buffers) == ["running_mean", "running_var", "num_batches_tracked"]
        assert buffers["running_mean"].tolist() == [[0.0] * 3, [2.0] * 3]
        assert not buffers["running_mean"].requires_grad and params["weight"].shape == (2, 3)
        for models, words in [([], "Expected at least one model, got 0."),
                              ([nets[0], lib.nn.LayerNorm(3)], "of the same class."),
                              ([nets[0], lib.nn.BatchNorm1d(3).eval()], "training/eval mode")]:
            with pytest.raises(RuntimeError, match=re.escape(words)):
                lib.func.stack_module_state(models)
        frozen = lib.nn.BatchNorm1d(3)
        frozen.weight.requires_grad_(False)
        with pytest.raises(RuntimeError, match="Expected weight from each model to have the "
                                               "same .requires_grad"):
            lib.func.stack_module_state([nets[0], frozen])


# ---- Jacobians, Hessians, vjp
X, Y = arrays((3,), (3,), seed=2)


def f_two(lib, x, y):
    return (x.sin() * y.sum(), (x * y).exp())


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (-1,)])
def test_jacobians_of_two_outputs_as_torchs(transform, argnums):
    ours = numpy(getattr(mg.func, transform)(
        lambda x, y: f_two(mg, x, y), argnums=argnums)(mg.tensor(X), mg.tensor(Y)))
    # torch's jacfwd leaves the tangent of a negative argnum unset (a Jacobian of zeros):
    # its jacrev is the reference there
    reference = "jacrev" if argnums == (-1,) else transform
    theirs = numpy(getattr(torch.func, reference)(
        lambda x, y: f_two(torch, x, y), argnums=argnums)(torch.tensor(X), torch.tensor(Y)))
    assert_same(ours, theirs)
    x = mg.tensor(X)                   # against the engine's own reverse-mode Jacobian
    if argnums == 0:
        reference = mg.autograd.functional.jacobian(lambda x: f_two(mg, x, mg.tensor(Y)), x)
        assert_same(ours, numpy(reference))


def test_jacobian_of_a_dict_input_with_aux_and_chunks():
    def run(lib):
        def f(params, x):
            out = (params["w"] @ x + params["b"]).tanh()
            return out, {"norm": out.norm()}
        w, b, x = arrays((2, 3), (2,), (3,), seed=3)
        params = {"w": lib.tensor(w), "b": lib.tensor(b)}
        rev = lib.func.jacrev(f, has_aux=True, chunk_size=1)(params, lib.tensor(x))
        fwd = lib.func.jacfwd(f, 1, True)(params, lib.tensor(x))
        return rev, fwd
    ours, theirs = both(run)
    assert_same(ours, theirs)
    assert np.shape(ours[0][0]["w"]) == (2, 2, 3)


def test_hessian_and_jacobians_of_jacobians_as_torchs():
    def run(lib):
        def f(x, y):
            return (x.sin() * y).sum() + (x ** 2).prod()
        x, y = lib.tensor(X), lib.tensor(Y)
        return (lib.func.hessian(f)(x, y), lib.func.hessian(f, argnums=(0, 1))(x, y),
                lib.func.jacrev(lib.func.jacrev(f))(x, y),
                lib.func.jacfwd(lib.func.jacfwd(lambda x: x.sin() * x.sum()))(x))
    ours, theirs = both(run)
    assert_same(ours, theirs)
    x = mg.tensor(X)
    reference = mg.autograd.functional.hessian(lambda x: (x.sin() * mg.tensor(Y)).sum()
                                               + (x ** 2).prod(), x)
    assert_same(ours[0], numpy(reference))


def test_vjp_of_pytree_outputs_as_torchs():
    def run(lib):
        x, y = lib.tensor(X), lib.tensor(Y)
        out, vjp_fn, aux = lib.func.vjp(lambda x, y: ({"a": x.sin() * y, "b": (x @ y)},
                                                      x.cos()), x, y, has_aux=True)
        cotangents = {"a": lib.tensor(Y), "b": lib.tensor(2.0, dtype=lib.float64)}
        first, second = vjp_fn(cotangents), vjp_fn(cotangents)      # the graph is kept
        return out, first, second, aux, [t.requires_grad for t in (out["a"], *first, aux)]
    ours, theirs = both(run)
    assert_same(ours, theirs)


# ---- grad: nesting and history
def test_nested_grad_and_grad_and_value_as_torchs():
    def run(lib):
        x = lib.tensor(0.7, dtype=lib.float64)
        f = lambda x: x.sin() * x ** 3                                    # noqa: E731
        third = lib.func.grad(lib.func.grad(lib.func.grad(f)))(x)
        g, value = lib.func.grad_and_value(lambda x, y: (x * y).sum() ** 2,
                                           argnums=(0, 1))(lib.tensor(X), lib.tensor(Y))
        # an inner transform closing over the outer one's input
        mixed = lib.func.grad(lambda x: lib.func.grad(lambda y: (x * y) ** 2)(x))(x)
        (g_aux, (value_aux, aux)) = lib.func.grad_and_value(
            lambda x: (x.exp().sum(), {"x2": x * 2}), has_aux=True)(lib.tensor(X))
        return third, g, value, mixed, g_aux, value_aux, aux
    ours, theirs = both(run)
    assert_same(ours, theirs)
    x = 0.7                          # d3/dx3 (x^3 sin x), written out
    exact = 6 * np.sin(x) + 18 * x * np.cos(x) - 9 * x ** 2 * np.sin(x) - x ** 3 * np.cos(x)
    np.testing.assert_allclose(ours[0], exact, rtol=1e-12)


def test_results_keep_history_only_to_tensors_outside_the_transform():
    def run(lib):
        w = lib.tensor(Y, requires_grad=True)
        x = lib.tensor(X, requires_grad=True)
        plain = lib.func.grad(lambda x: (x.sin() * lib.tensor(Y)).sum())(lib.tensor(X))
        closed = lib.func.grad(lambda x: (x.sin() * w).sum())(lib.tensor(X))   # reaches w
        through = lib.func.grad(lambda x: (x ** 3).sum())(x)                  # reaches x
        (closed.sum() + through.sum()).backward()
        with lib.no_grad():           # a transform records inside an outer no_grad
            inside = lib.func.grad(lambda x: (x ** 3).sum())(lib.tensor(X))
        return ([plain.requires_grad, closed.requires_grad, through.requires_grad,
                 inside.requires_grad], w.grad, x.grad, inside)
    ours, theirs = both(run)
    assert ours[0] == theirs[0] == [False, True, True, False]
    assert_same(ours[1:], theirs[1:])


# ---- vmap
def test_vmap_in_dims_out_dims_and_kwargs_as_torchs():
    a, b, c = arrays((4, 3), (3, 4), (3,), seed=4)

    def run(lib):
        vmap = lib.vmap
        A, B, C = lib.tensor(a), lib.tensor(b), lib.tensor(c)
        return [vmap(lib.dot)(A, B.T),
                vmap(lib.dot, in_dims=(0, None))(A, C),
                vmap(lib.dot, in_dims=(-2, -1))(A, B),
                vmap(lambda x, y: x * y, in_dims=(1, None), out_dims=-1)(B, C[:, None]),
                vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(A),
                vmap(lambda d: d["x"] @ d["y"], in_dims=({"x": 0, "y": None},))(
                    {"x": A, "y": C}),
                vmap(lambda x, scale=1.0: x * scale)(A, scale=C),
                vmap(lambda x, s: (x * 2, lib.ones(2, dtype=lib.float64)),
                     in_dims=(0, None), out_dims=(0, None))(A, 3),
                vmap(lambda x, nothing: x.exp(), in_dims=(0, None))(A, None),
                vmap(lambda x: x * 2)(lib.zeros(0, 3, dtype=lib.float64)),
                vmap(lambda x: x.sum(0), in_dims=-1)(lib.zeros(3, 2, 0, dtype=lib.float64)),
                vmap(lambda x: x[:1], out_dims=(1,))(A)]
    ours, theirs = both(run)
    assert_same(ours, theirs)
    assert_same(ours[0], np.einsum("bd,db->b", a, b))


def test_vmap_composed_with_vmap_and_the_derivatives_as_torchs():
    x, y = arrays((2, 3, 4), (2, 3, 4), seed=5)

    def run(lib):
        dot = lib.vmap(lib.vmap(lib.dot))                 # (N1, N0, D), (N1, N0, D) -> (N1, N0)
        outer = lib.vmap(lib.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))
        rows = lib.tensor(x[0])                                                  # (3, 4)
        jacobians = lib.vmap(lib.func.jacrev(lambda v: v.sin().cumsum(0)))(rows)
        hessians = lib.vmap(lib.func.hessian(lambda v: v.tanh().prod()))(rows)
        through_vmap = lib.func.grad(lambda w: lib.vmap(lambda r: (r * w).tanh().sum())(rows)
                                     .pow(2).sum())(lib.tensor(y[0, 0]))
        jacobian_of_vmap = lib.func.jacrev(lib.vmap(lambda r: r.sin() * r.sum()))(rows)
        return (dot(lib.tensor(x), lib.tensor(y)),
                outer(lib.tensor(x[0, 0]), lib.tensor(y[0, 0])), jacobians, hessians,
                through_vmap, jacobian_of_vmap)
    ours, theirs = both(run)
    assert_same(ours, theirs)
    assert_same(ours[0], (x * y).sum(-1))


def test_vmap_randomness_as_torchs():
    def run(lib):
        zeros = lib.zeros(3, 4)
        lib.manual_seed(0)
        same = lib.vmap(lambda x: x + lib.rand(4), randomness="same")(zeros)
        after_same = lib.rand(2)
        lib.manual_seed(0)
        different = lib.vmap(lambda x: x + lib.rand(4), randomness="different")(zeros)
        lib.manual_seed(0)
        with pytest.raises(RuntimeError, match="called random operation while in randomness "
                                               "error mode"):
            lib.vmap(lambda x: x + lib.rand(4))(zeros)
        after_error = lib.rand(2)                          # the refused draw left no trace
        with pytest.raises(RuntimeError, match="randomness error mode"):
            lib.func.jacfwd(lambda x: x * lib.rand(4))(zeros[0])
        eval_mode = lib.vmap(lib.nn.Dropout(0.5).eval())(zeros)     # draws nothing
        return same, after_same, different, after_error, eval_mode
    ours, theirs = both(run)
    assert_same(ours, theirs, rtol=0, atol=0)
    np.testing.assert_array_equal(ours[0][0], ours[0][2])
    assert not np.array_equal(ours[2][0], ours[2][1])


# ---- errors, with torch's words
def errors_of(run):
    """(type, message) of ``run(lib)``'s error, for mg and torch."""
    found = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            run(lib)
        found.append((info.type, str(info.value)))
    return found


@pytest.mark.parametrize("case", [
    lambda lib, x: lib.func.grad(lambda x: x)(x),
    lambda lib, x: lib.func.grad(lambda x: 3.0)(x),
    lambda lib, x: lib.func.grad(lambda x: x.sum(), has_aux=True)(x),
    lambda lib, x: lib.func.grad(lambda x: x.sum(), argnums=2)(x),
    lambda lib, x: lib.func.grad(lambda x, y: x.sum(), argnums=(0, -2))(x, x),
    lambda lib, x: lib.func.grad(lambda x, y: x.sum(), argnums=())(x, x),
    lambda lib, x: lib.func.grad(lambda x, y: x.sum(), argnums=[0])(x, x),
    lambda lib, x: lib.func.grad(lambda x, y: x.sum(), argnums=1)(x, 3),
    lambda lib, x: lib.func.grad(lambda x: (x.sum(), 3), has_aux=True)(x),
    lambda lib, x: lib.func.vjp(lambda x: 3, x),
    lambda lib, x: lib.func.vjp(lambda x: None, x),
    lambda lib, x: lib.func.vjp(lambda x: (x > 0).long(), x),
    lambda lib, x: lib.func.vjp(lambda x: x.sin(), x)[1]((lib.ones(3),)),
    lambda lib, x: lib.func.jacrev(lambda x: x, chunk_size=0),
    lambda lib, x: lib.vmap(lambda x: x, randomness="foo"),
    lambda lib, x: lib.vmap(lambda x: x, chunk_size=0),
    lambda lib, x: lib.vmap(lambda x: x, in_dims=[0])(x),
    lambda lib, x: lib.vmap(lambda x: x)(),
    lambda lib, x: lib.vmap(lambda x, y: x, in_dims=(0,))(x, x),
    lambda lib, x: lib.vmap(lambda x: x, in_dims=1)(x),
    lambda lib, x: lib.vmap(lambda x: x, in_dims=(None,))(x),
    lambda lib, x: lib.vmap(lambda x: x, in_dims=0)(3.0),
    lambda lib, x: lib.vmap(lambda x: x, in_dims=("a",))(x),
    lambda lib, x: lib.vmap(lambda x, y: x + y)(x, lib.ones(2, 3)),
    lambda lib, x: lib.vmap(lambda x: x * 2, out_dims=None)(x),
    lambda lib, x: lib.vmap(lambda x: (x, None))(x),
    lambda lib, x: lib.vmap(lambda x, n: x)(x, None),
    lambda lib, x: lib.vmap(lambda x: 3)(x),
    lambda lib, x: lib.vmap(lambda x: x, out_dims="a")(x),
    lambda lib, x: lib.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(x),
])
def test_errors_as_torchs(case):
    (ours, our_words), (theirs, their_words) = errors_of(
        lambda lib: case(lib, lib.tensor(X)))
    assert ours is theirs, (our_words, their_words)
    # torch prints structures as TreeSpec(...); the words before them are the same
    assert our_words.split(" has structure ")[0] == their_words.split(" has structure ")[0]

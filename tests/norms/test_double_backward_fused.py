"""Double backward (``create_graph=True``) through the fused nodes: every ``FusedFunction``'s
``graph_backward`` differentiates its twin's composite graph, recomputed from the node's
inputs (fused/twin.py). Checked against PyTorch's double backward in float64 (and in
float32), against finite differences of the fused node's own first gradient, and for what
the recomputation must not do: move running statistics again, or walk on through the graph
that made the node's inputs. Every norm is read from the registry, its inputs from its
declaration."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from norm_cases import SPECS, cases, inputs, param_subsets, spec_id, trainings

import microgradnorm as mg
from microgradnorm.autograd import topological_order
from microgradnorm.fused import FUSED_OPS, FusedFunction
from microgradnorm.fused.attention import ScaledDotProductAttention
from microgradnorm.fused.gelu import Gelu
from microgradnorm.fused.softmax import CrossEntropy, LogSoftmax, Softmax
from microgradnorm.norms import NORMS

TOL = dict(rtol=1e-10, atol=1e-12)


# ----- the harness ----------------------------------------------------------------------
def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


def functions_in_graph(outputs):
    """The Function classes of the nodes that made ``outputs``."""
    return {node.function for node in topological_order(
        [o.grad_fn for o in outputs if o.grad_fn is not None])}


def second_order(lib, fn, arrays, seed=0):
    """(first gradients, leaves' .grad, outputs) for fn(lib, *leaves): g = grad(outputs,
    leaves, v, create_graph=True), then Σ w·g back-propagated; v and w drawn from ``seed``,
    the same values for either library. None stays None (no dependence)."""
    rng = np.random.default_rng(seed)
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    outputs = _outputs(fn(lib, *leaves))
    vs = [lib.tensor(rng.standard_normal(tuple(o.shape)).astype(arrays[0].dtype))
          for o in outputs]
    grads = lib.autograd.grad(outputs, leaves, vs, create_graph=True, allow_unused=True)
    ws = [rng.standard_normal(a.shape).astype(a.dtype) for a in arrays]
    terms = [(g * lib.tensor(w)).sum() for g, w in zip(grads, ws)
             if g is not None and g.requires_grad]
    if terms:
        sum(terms).backward()
    return ([None if g is None else g.detach().numpy() for g in grads],
            [None if t.grad is None else t.grad.numpy() for t in leaves], outputs)


def _same(a, b, **tol):
    if a is None and b is None:
        return
    if a is None or b is None:           # no gradient on one side: zeros on the other
        a, b = (np.zeros_like(b) if a is None else a), (np.zeros_like(a) if b is None else b)
    np.testing.assert_allclose(a, b, **tol)


def assert_matches_torch(fn, arrays, fused, seed=0, reference=None, **tol):
    """Ours (whose graph must hold the fused node ``fused``) against PyTorch: the first
    gradients and the leaves' gradients of Σ w·g. ``reference``: float64 arrays torch runs
    on instead (a float32 check)."""
    tol = tol or TOL
    ours_g, ours, outputs = second_order(mg, fn, arrays, seed)
    assert fused in functions_in_graph(outputs), f"no {fused.__name__} node in the graph"
    theirs_g, theirs, _ = second_order(torch, fn, reference or arrays, seed)
    for a, b in zip(ours_g + ours, theirs_g + theirs):
        _same(a, b, **tol)


def assert_matches_differences(fn, arrays, seed=0, step=1e-6, rtol=1e-5, atol=1e-7):
    """The double backward against central differences of the first gradient's Σ w·g, that
    gradient taken without create_graph (the fused node's own closed form)."""
    rng = np.random.default_rng(seed)
    shapes = [tuple(o.shape) for o in _outputs(fn(mg, *[mg.tensor(a) for a in arrays]))]
    vs = [rng.standard_normal(s) for s in shapes]
    ws = [rng.standard_normal(a.shape) for a in arrays]

    def weighted(values, create_graph):
        leaves = [mg.tensor(a, requires_grad=True) for a in values]
        grads = mg.autograd.grad(_outputs(fn(mg, *leaves)), leaves, [mg.tensor(v) for v in vs],
                                 create_graph=create_graph, allow_unused=True)
        return leaves, sum((g * mg.tensor(w)).sum() for g, w in zip(grads, ws) if g is not None)

    leaves, total = weighted(arrays, create_graph=True)
    if total.requires_grad:               # else the first gradient is constant: zeros
        total.backward()
    for k, a in enumerate(arrays):
        numerical = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            values = [b.copy() for b in arrays]
            ends = []
            for sign in (1, -1):
                values[k] = a.copy()
                values[k][i] += sign * step
                ends.append(weighted(values, create_graph=False)[1].item())
            numerical[i] = (ends[0] - ends[1]) / (2 * step)
        analytic = np.zeros_like(a) if leaves[k].grad is None else leaves[k].grad.numpy()
        np.testing.assert_allclose(analytic, numerical, rtol=rtol, atol=atol)


def _normal(*shapes, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


# ----- softmax, log_softmax, GELU, attention --------------------------------------------
def _functional(name, *args, **kwargs):
    return lambda lib, *t: getattr(lib.nn.functional, name)(*t, *args, **kwargs)


_TARGET = np.array([1, 0, 4, 2])                           # (4,) classes of (4, 5) logits
_IGNORED = np.array([1, -100, 4, -100])
_PROBABILITIES = np.random.default_rng(5).dirichlet(np.ones(5), size=4)        # (4, 5)


def _cross_entropy(target, weight=None, **options):
    """fn(lib, logits[, target]) of F.cross_entropy: ``target`` a constant (class indices or
    probabilities), or None for a second leaf (probabilities that take a gradient)."""
    def fn(lib, x, *given):
        t = given[0] if given else lib.tensor(target)
        w = None if weight is None else lib.tensor(weight)
        return lib.nn.functional.cross_entropy(x, t, w, **options)
    return fn


_WEIGHT = np.array([0.5, 2.0, 1.0, 0.25, 1.5])
OP_CASES = {
    "softmax-last": (_functional("softmax", dim=-1), [(3, 5)], Softmax),
    "softmax-dim0-3d": (_functional("softmax", dim=0), [(4, 3, 2)], Softmax),
    "softmax-0d": (_functional("softmax", dim=-1), [()], Softmax),
    "log_softmax-dim1": (_functional("log_softmax", dim=1), [(2, 3, 4)], LogSoftmax),
    "gelu": (_functional("gelu"), [(3, 4)], Gelu),
    "gelu-tanh": (_functional("gelu", approximate="tanh"), [(3, 4)], Gelu),
    "gelu-0d": (_functional("gelu"), [()], Gelu),
    "cross_entropy-mean": (_cross_entropy(_TARGET), [(4, 5)], CrossEntropy),
    "cross_entropy-sum": (_cross_entropy(_TARGET, reduction="sum"), [(4, 5)], CrossEntropy),
    "cross_entropy-none": (_cross_entropy(_TARGET, reduction="none"), [(4, 5)],
                           CrossEntropy),
    "cross_entropy-ignore_index": (_cross_entropy(_IGNORED), [(4, 5)], CrossEntropy),
    "cross_entropy-class-dims": (_cross_entropy(np.array([[1, 3, 0], [2, 2, 3]])),
                                 [(2, 4, 3)], CrossEntropy),
    "cross_entropy-weight": (_cross_entropy(_IGNORED, weight=_WEIGHT), [(4, 5)], LogSoftmax),
    "cross_entropy-smoothing": (_cross_entropy(_IGNORED, label_smoothing=0.2,
                                               reduction="sum"), [(4, 5)], LogSoftmax),
    "cross_entropy-weight-smoothing": (_cross_entropy(_TARGET, weight=_WEIGHT,
                                                      label_smoothing=0.1), [(4, 5)],
                                       LogSoftmax),
    "cross_entropy-probabilities": (_cross_entropy(_PROBABILITIES, weight=_WEIGHT,
                                                   label_smoothing=0.1), [(4, 5)],
                                    LogSoftmax),
    "cross_entropy-probabilities-target-grad": (_cross_entropy(None), [(4, 5), (4, 5)],
                                                LogSoftmax),
    "attention": (_functional("scaled_dot_product_attention"), [(2, 3, 4)] * 3,
                  ScaledDotProductAttention),
    "attention-causal-heads": (_functional("scaled_dot_product_attention", is_causal=True,
                                           scale=0.7), [(2, 2, 3, 4), (2, 2, 3, 4),
                                                        (2, 2, 3, 5)],
                               ScaledDotProductAttention),
    "attention-broadcast-kv": (_functional("scaled_dot_product_attention"),
                               [(2, 3, 4), (5, 4), (5, 2)], ScaledDotProductAttention),
    "attention-float-mask": (_functional("scaled_dot_product_attention"),
                             [(2, 3, 4), (2, 5, 4), (2, 5, 4), (3, 5)],
                             ScaledDotProductAttention),
}


def _bool_mask_attention(lib, q, k, v):
    keep = np.array([[True, False, True, True, False], [False, False, True, False, False],
                     [True, True, True, True, True]])
    return lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=lib.tensor(keep))


def _one_tensor_attention(lib, x):          # q = k = v, one tensor in three positions
    return lib.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=True)


OP_CASES |= {"attention-bool-mask": (_bool_mask_attention, [(2, 3, 4), (2, 5, 4), (2, 5, 3)],
                                     ScaledDotProductAttention),
             "attention-q-is-k-is-v": (_one_tensor_attention, [(2, 4, 3)],
                                       ScaledDotProductAttention)}


def _probability_arrays(shapes):
    logits, target = _normal(*shapes, seed=2)
    return [logits, np.abs(target) / np.abs(target).sum(-1, keepdims=True)]


def _case_arrays(name, shapes):
    if name == "cross_entropy-probabilities-target-grad":
        return _probability_arrays(shapes)
    return _normal(*shapes, seed=len(name))


def _twin_call(spec, names, constants):
    """fn(lib, *leaves) calling ``spec`` fused (ours) or PyTorch's twin on {name: leaf} and
    its constant inputs (class indices)."""
    def fn(lib, *leaves):
        given = dict(zip(names, leaves)) | {n: lib.tensor(a) for n, a in constants.items()}
        if lib is torch:
            return spec.run_torch(torch.nn.functional, given)
        return spec.run(given, "fused")
    return fn


@pytest.mark.parametrize("spec", FUSED_OPS.values(), ids=spec_id)
def test_every_fused_op_of_the_registry_matches_torch(spec):
    arrays = spec.make_inputs((4, 5) if spec.ndim[1] == 2 else (2, 3, 4), seed=3)
    names = [i.name for i in spec.inputs if i.differentiable]
    constants = {name: a for name, a in arrays.items() if name not in names}
    assert_matches_torch(_twin_call(spec, names, constants), [arrays[n] for n in names],
                         spec.fused)


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_fused_ops_match_torch(name):
    fn, shapes, fused = OP_CASES[name]
    assert_matches_torch(fn, _case_arrays(name, shapes), fused)


@pytest.mark.parametrize("name", ["softmax-dim0-3d", "log_softmax-dim1", "gelu-tanh",
                                  "cross_entropy-ignore_index", "cross_entropy-weight-smoothing",
                                  "attention-float-mask", "attention-q-is-k-is-v"])
def test_fused_ops_agree_with_finite_differences(name):
    fn, shapes, _ = OP_CASES[name]
    small = [tuple(min(n, 3) for n in s) for s in shapes] if name.startswith("attention") \
        else shapes
    if name == "attention-float-mask":
        small = [(3, 2), (3, 2), (3, 2), (3, 3)]
    assert_matches_differences(fn, _case_arrays(name, small))


def _dropout_attention(impl):
    def fn(lib, q, k, v):
        mg.manual_seed(7)                    # the same dropout mask on every call
        return mg.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.4,
                                                             impl=impl)
    return fn


def test_attention_with_dropout_keeps_its_mask_in_the_double_backward():
    # PyTorch draws another mask: the composite graph (same seed, same mask) is the oracle
    arrays = _normal((2, 3, 4), (2, 3, 4), (2, 3, 2), seed=4)
    fused, composite = (second_order(mg, _dropout_attention(impl), arrays, seed=1)
                        for impl in ("fused", "composite"))
    assert ScaledDotProductAttention in functions_in_graph(fused[2])
    for a, b in zip(fused[0] + fused[1], composite[0] + composite[1]):
        _same(a, b, **TOL)
    assert_matches_differences(_dropout_attention("fused"),
                               _normal((2, 2), (3, 2), (3, 2), seed=5))


# ----- the norms, from the registry -------------------------------------------------------
def _norm_call(spec, names, running, training, **options):
    """fn(lib, *leaves) calling ``spec`` fused (ours) or PyTorch's twin on {name: leaf},
    with fresh copies of the running statistics."""
    def fn(lib, *leaves):
        given = dict(zip(names, leaves))
        stats = None if running is None else {n: a.copy() for n, a in running.items()}
        if lib is torch:                 # in x's dtype: float64 for a float32 check's reference
            stats = None if stats is None else {n: torch.tensor(a, dtype=given[spec.x].dtype)
                                                 for n, a in stats.items()}
            return spec.run_torch(torch.nn.functional, given, stats, training, **options)
        return spec.run(given, "fused", stats, training, **options)
    return fn


def _norm_case_id(spec, params, training, eps):
    mode = "" if len(trainings(spec)) == 1 else "-train" if training else "-eval"
    return (f"{spec.name}-{'+'.join(params) or 'no_affine'}{mode}"
            f"{'' if eps is None else f'-eps{eps}'}")


NORM_CASES = [pytest.param(spec, params, training, eps,
                           id=_norm_case_id(spec, params, training, eps))
              for spec in SPECS for params in (param_subsets(spec)[0], spec.optional_params)
              for training in trainings(spec)
              for eps in ((None, 0.3) if spec.has_eps else (None,))]
NORM_SHAPE = (3, 4, 5)


def _norm_arrays(spec, shape, params, dtype=np.float64, seed=1):
    arrays, running = inputs(spec, shape, params, seed=seed, dtype=dtype)
    learned = {i.name for i in spec.inputs if i.differentiable}
    names = [name for name in arrays if name in learned]
    return names, [arrays[name] for name in names], running


@pytest.mark.parametrize("spec, params, training, eps", NORM_CASES)
def test_every_norm_matches_torch(spec, params, training, eps):
    names, arrays, running = _norm_arrays(spec, NORM_SHAPE, params)
    options = {} if eps is None else {"eps": eps}
    assert_matches_torch(_norm_call(spec, names, running, training, **options), arrays,
                         spec.fused)


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_every_norm_in_float32_matches_torch_in_float64(spec):
    names, arrays, running = _norm_arrays(spec, (4, 3, 6), spec.optional_params,
                                          dtype=np.float32)
    fn = _norm_call(spec, names, running, trainings(spec)[0])
    assert_matches_torch(fn, arrays, spec.fused, rtol=2e-4, atol=2e-4,
                         reference=[a.astype(np.float64) for a in arrays])


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@settings(max_examples=3)
@given(data=st.data())
def test_every_norm_agrees_with_finite_differences(spec, data):
    shape, params, training, seed = data.draw(cases(spec, max_dims=3, max_side=3))
    names, arrays, running = _norm_arrays(spec, shape, params, seed=seed % 1000)
    assert_matches_differences(_norm_call(spec, names, running, training), arrays,
                               seed=seed % 1000)


def _options_torch_lacks(spec):
    """[(label, {option: value})]: each variant of the options PyTorch's twin does not take,
    with its numbers moved off their defaults by one (RMSNorm's casting modes, offset 1)."""
    moved = {o.name: o.default + 1.0 for o in spec.options if not o.torch and not o.variants
             and isinstance(o.default, float)}
    return [(label, {**moved, **variant}) for label, variant in spec.variants()
            if moved or variant]


LOCAL_OPTION_CASES = [pytest.param(spec, options, id=f"{spec.name}{label}")
                      for spec in SPECS for label, options in _options_torch_lacks(spec)]


@pytest.mark.parametrize("spec, options", LOCAL_OPTION_CASES)
def test_options_torch_lacks_match_the_composite(spec, options):
    # the composite's own double backward is the oracle
    names, arrays, running = _norm_arrays(spec, (3, 4), spec.optional_params)
    options = {**options, **({"eps": 0.2} if spec.has_eps else {})}
    results = []
    for impl in ("fused", "composite"):
        def fn(lib, *leaves, impl=impl):
            return spec.run(dict(zip(names, leaves)), impl, running, **options)
        results.append(second_order(mg, fn, arrays, seed=3))
    assert spec.fused in functions_in_graph(results[0][2])
    for a, b in zip(results[0][0] + results[0][1], results[1][0] + results[1][1]):
        _same(a, b, **TOL)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.running], ids=spec_id)
def test_the_double_backward_leaves_running_statistics_alone(spec):
    names, arrays, running = _norm_arrays(spec, NORM_SHAPE, spec.optional_params)
    leaves = [mg.tensor(a, requires_grad=True) for a in arrays]
    outputs = spec.run(dict(zip(names, leaves)), "fused", running, True)
    after_forward = {n: a.copy() for n, a in running.items()}
    assert any(not np.array_equal(after_forward[n], a) for n, a in
               inputs(spec, NORM_SHAPE, seed=1)[1].items())        # the forward moved them
    grads = mg.autograd.grad(outputs, leaves, [mg.ones_like(o) for o in outputs],
                             create_graph=True)
    sum((g * g).sum() for g in grads).backward()
    for name, a in running.items():
        np.testing.assert_array_equal(a, after_forward[name])


# ----- what every fused node shares -------------------------------------------------------
def test_every_fused_node_of_the_registries_has_its_twin():
    for spec in [*NORMS.values(), *FUSED_OPS.values()]:
        assert spec.fused.recompute is not None, spec.name


def test_a_chain_of_fused_nodes_on_non_leaf_inputs_matches_torch():
    # each node's inputs made by other nodes, one tensor in three positions of attention
    target = np.array([[0, 3, 1], [2, 2, 0]])

    def fn(lib, x, w, gamma, beta):
        F = lib.nn.functional
        h = x @ w                                                     # (2, 3, 4)
        a = F.scaled_dot_product_attention(h, h, h, is_causal=True)
        y = F.gelu(F.layer_norm(a + h, (4,), gamma, beta), approximate="tanh")
        y = F.rms_norm(y * 2 + h, (4,), gamma, eps=0.1)
        return F.cross_entropy(y.reshape(-1, 4), lib.tensor(target).reshape(-1))

    arrays = _normal((2, 3, 3), (3, 4), (4,), (4,), seed=9)
    assert_matches_torch(fn, arrays, Gelu)
    assert_matches_differences(fn, arrays)


def test_each_node_recomputes_once_however_deep_the_graph(monkeypatch):
    # the composite's backward stops at the node's inputs: it never walks on through the
    # nodes that made them (which would recompute those again, once per node downstream)
    calls = []
    recompute = NORMS["layer_norm"].fused.recompute
    monkeypatch.setattr(NORMS["layer_norm"].fused, "recompute",
                        staticmethod(lambda ctx, *t: calls.append(1) or recompute(ctx, *t)))
    x = mg.tensor(_normal((3, 4), seed=2)[0], requires_grad=True)
    y = x
    for _ in range(6):
        y = mg.nn.functional.layer_norm(y * 1.5, (4,))
    (g,) = mg.autograd.grad((y * y.detach()).sum(), x, create_graph=True)
    assert len(calls) == 6
    (g * g).sum().backward()
    assert len(calls) == 6 and x.grad is not None


class _NoTwin(FusedFunction):
    """A fused node without a composite twin."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved
        return 2 * x * g


def test_a_fused_node_without_a_twin_gives_its_first_gradient_and_refuses_the_second():
    x = mg.tensor([1.0, 3.0], dtype=mg.float64, requires_grad=True)
    (g,) = mg.autograd.grad(_NoTwin.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [2.0, 6.0])
    with pytest.raises(RuntimeError, match="double backward through _NoTwinBackward0"):
        g.sum().backward()


@pytest.mark.parametrize("name, args", [("layer_norm", ((4,),)), ("softmax", (-1,)),
                                        ("gelu", ())], ids=["layer_norm", "softmax", "gelu"])
def test_a_zero_size_input_gives_zero_size_gradients_as_torch(name, args):
    # the entries make no fused node for it: as empty as x, the gradients too
    def run(lib):
        x = lib.tensor(np.zeros((0, 4)), requires_grad=True)
        y = getattr(lib.nn.functional, name)(x, *args)
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
        return tuple(g.shape)
    assert run(mg) == run(torch) == (0, 4)

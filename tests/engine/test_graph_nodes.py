"""The backward graph as PyTorch's code reads it (``autograd/graph.py``), against torch:
node names (``name()`` and the repr; the class is one ``Context`` here),
``next_functions`` walked from the loss down to the leaves' ``AccumulateGrad`` (the same
object for a leaf used twice), a ``make_dot``-style walker, node hooks before and after
the backward (values and replacements), calling a node, ``metadata``,
``get_gradient_edge`` and ``increment_version``."""

import numpy as np
import pytest
import torch

import microgradnorm as mg

RNG = np.random.default_rng(0)


def leaves(*shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    return ([mg.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def graph(lib, x, w, b):
    # ops whose PyTorch nodes are the Backward0 kind, as ours
    return ((x * w).tanh().exp() * b).sum()


def walk(root, leaves_):
    """Each node reached from ``root``, depth first: (name(), for each edge the index it
    carries and, for an AccumulateGrad, which leaf)."""
    seen, out, stack = set(), [], [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        edges = []
        for child, index in node.next_functions:
            leaf = getattr(child, "variable", None)
            edges.append((index, None if leaf is None
                          else next(i for i, t in enumerate(leaves_) if t is leaf)))
            stack.append(child)
        out.append((node.name(), tuple(edges)))
    return out


def test_node_names_and_edges_read_as_torchs():
    (x, w, b), (xt, wt, bt) = leaves((3, 4), (3, 4), (4,))
    ours, theirs = graph(mg, x, w, b), graph(torch, xt, wt, bt)
    assert ours.grad_fn.name() == "SumBackward0" == type(theirs.grad_fn).__name__
    assert repr(ours.grad_fn).startswith("<SumBackward0 object at 0x")
    assert type(ours.grad_fn) is mg.autograd.Context          # one class for every node
    assert walk(ours.grad_fn, [x, w, b]) == walk(theirs.grad_fn, [xt, wt, bt])
    assert ours.grad_fn.name == "Sum"                 # the op's name, as the visualizer's


def test_a_leaf_used_twice_has_one_accumulate_grad_and_constants_none():
    (x,), (xt,) = leaves((3,))
    for lib, leaf in ((mg, x), (torch, xt)):
        y = leaf * leaf + 1
        (mul, _), (constant, index) = y.grad_fn.next_functions
        first, second = mul.next_functions
        assert first[0] is second[0] and first[0].variable is leaf
        assert first[0].next_functions == ()
        assert constant is None and index == 0
        assert isinstance(mul, lib.autograd.graph.Node)
        assert isinstance(first[0], lib.autograd.graph.Node)


def test_a_multi_output_node_gives_each_edge_its_output_index():
    (x,), (xt,) = leaves((4, 6))
    assert [t.output_nr for t in x.split(2, 1)] == [t.output_nr for t in xt.split(2, 1)]
    assert x.output_nr == xt.output_nr == 0
    ours = [e[1] for e in (lambda a: a[0] * a[1])(x.split(3, 1)).grad_fn.next_functions]
    theirs = [e[1] for e in (lambda a: a[0] * a[1])(xt.split(3, 1)).grad_fn.next_functions]
    assert ours == theirs == [0, 1]


def test_the_graph_survives_backward_as_edges():
    (x, w, b), (xt, wt, bt) = leaves((3, 4), (3, 4), (4,))
    ours, theirs = graph(mg, x, w, b), graph(torch, xt, wt, bt)
    ours.backward(), theirs.backward()
    assert walk(ours.grad_fn, [x, w, b]) == walk(theirs.grad_fn, [xt, wt, bt])


def make_dot_labels(root):
    """The node labels a torchviz-style walker draws: node names, leaves by shape."""
    labels, seen = [], set()

    def add(fn):
        if fn is None or fn in seen:
            return
        seen.add(fn)
        if hasattr(fn, "variable"):
            labels.append(("leaf", tuple(fn.variable.size())))
        else:
            labels.append((fn.name(), len(fn.next_functions)))
        for u, _ in getattr(fn, "next_functions", ()):
            add(u)
    add(root)
    return sorted(labels)


def test_a_make_dot_walker_draws_the_same_graph():
    (x, w, b), (xt, wt, bt) = leaves((3, 4), (3, 4), (4,))
    assert make_dot_labels(graph(mg, x, w, b).grad_fn) == \
        make_dot_labels(graph(torch, xt, wt, bt).grad_fn)


def hooked(lib, x, w, b, calls):
    y = (x * w).tanh()
    z = (y * b).sum()
    mul = y.grad_fn.next_functions[0][0]
    handles = [
        y.grad_fn.register_prehook(lambda go: calls.append(("pre", go[0].shape)) or
                                   (go[0] * 3,)),
        mul.register_hook(lambda gi, go: calls.append(("post", len(gi), len(go))) or
                          (gi[0], gi[1] * 0 + 1)),
    ]
    return z, handles


def test_node_hooks_see_and_replace_gradients_as_torchs():
    (x, w, b), (xt, wt, bt) = leaves((3, 4), (3, 4), (4,))
    ours_calls, theirs_calls = [], []
    ours, _ = hooked(mg, x, w, b, ours_calls)
    theirs, _ = hooked(torch, xt, wt, bt, theirs_calls)
    ours.backward(), theirs.backward()
    assert len(ours_calls) == len(theirs_calls) == 2
    assert ours_calls[0][0] == "pre" and tuple(ours_calls[0][1]) == tuple(theirs_calls[0][1])
    assert ours_calls[1] == theirs_calls[1] == ("post", 2, 1)
    for a, t in ((x, xt), (w, wt), (b, bt)):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(w.grad.numpy(), np.ones((3, 4)))      # replaced


def test_a_removed_node_hook_no_longer_runs():
    (x, w, b), _ = leaves((3, 4), (3, 4), (4,))
    calls = []
    z, handles = hooked(mg, x, w, b, calls)
    assert all(isinstance(h, mg.utils.hooks.RemovableHandle) for h in handles)
    for handle in handles:
        handle.remove()
    z.backward()
    assert calls == []
    expected = (1 - np.tanh(x.detach().numpy() * w.detach().numpy()) ** 2) \
        * x.detach().numpy() * b.detach().numpy()
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-12)


def test_a_hook_returning_the_wrong_count_is_an_error_naming_it():
    (x,), _ = leaves((3,))
    y = x.exp()
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="a hook of a node returned 2 grad_inputs, "
                                           "expected 1"):
        y.sum().backward()
    with pytest.raises(TypeError, match="must be callable"):
        y.grad_fn.register_prehook(3)


def test_calling_a_node_runs_its_backward_as_torchs():
    (x, w), (xt, wt) = leaves((3,), (3,))
    g = RNG.standard_normal(3)
    ours = (x * w).grad_fn(mg.tensor(g))
    theirs = (xt * wt).grad_fn(torch.tensor(g))
    assert len(ours) == len(theirs) == 2
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), t.detach().numpy(), rtol=1e-12)
    single = x.exp().grad_fn(mg.tensor(g))
    np.testing.assert_allclose(single.numpy(), np.exp(x.detach().numpy()) * g, rtol=1e-12)


def test_metadata_gradient_edges_and_increment_version():
    (x,), (xt,) = leaves((3,))
    for lib, leaf in ((mg, x), (torch, xt)):
        y = leaf.exp()
        y.grad_fn.metadata["step"] = 7
        assert y.grad_fn.metadata == {"step": 7}
        edge = lib.autograd.graph.get_gradient_edge(y)
        assert edge.node is y.grad_fn and edge.output_nr == 0 and len(edge) == 3
        assert lib.autograd.graph.get_gradient_edge(leaf).node.variable is leaf
        lib.autograd.graph.increment_version(y)
        with pytest.raises(RuntimeError, match="modified"):
            y.sum().backward()


def test_prehooks_see_none_where_no_gradient_reached_and_hooks_none_where_none_is_needed():
    got = {}
    for lib in (mg, torch):
        x = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        a, _ = x.split(1)
        seen = []
        a.grad_fn.register_prehook(lambda go, seen=seen: seen.append([g is None for g in go]))
        a.sum().backward()
        y = lib.nn.functional.layer_norm(x, (2,), lib.ones(2, dtype=lib.float64),
                                         lib.zeros(2, dtype=lib.float64))
        y.grad_fn.register_hook(lambda gi, go, seen=seen: seen.append([g is None for g in gi]))
        y.sum().backward()
        got[lib] = (seen, x.grad.tolist())
    assert got[mg] == got[torch] == ([[False, True], [False, True, True]], got[torch][1])


def test_a_hook_may_not_change_a_gradients_shape_or_dtype():
    x = mg.ones(3, requires_grad=True)
    y = x.exp()
    y.grad_fn.register_prehook(lambda go: (go[0].sum(),))
    with pytest.raises(RuntimeError, match=r"a prehook of a node has changed grad_outputs\[0\]"):
        y.sum().backward()
    z = x.exp()
    z.grad_fn.register_hook(lambda gi, go: (gi[0].double(),))
    with pytest.raises(RuntimeError, match=r"a hook of a node has changed grad_inputs\[0\]"):
        z.sum().backward()


def test_the_leaf_nodes_hooks_metadata_and_lifetime_are_torchs():
    import copy
    import pickle
    for lib in (mg, torch):
        w = lib.ones(2, requires_grad=True)
        kept = w * 1                            # torch keeps the node while a graph holds it
        acc = kept.grad_fn.next_functions[0][0]
        seen = []
        acc.register_prehook(lambda go, seen=seen: seen.append(go[0].tolist()) or (go[0] * 2,))
        acc.register_hook(lambda gi, go, seen=seen: seen.append((gi, go[0].tolist())))
        acc.metadata["k"] = 1
        del acc
        (w * 3).sum().backward()
        assert seen == [[3.0, 3.0], ((), [6.0, 6.0])] and w.grad.tolist() == [6.0, 6.0]
        assert (w * 1).grad_fn.next_functions[0][0].metadata == {"k": 1}
    m = mg.nn.Linear(3, 2)
    walk(m(mg.ones(1, 3)).sum().grad_fn, list(m.parameters()))     # accumulators made
    pickle.dumps(m)                                                  # a leaf still pickles
    copied = copy.deepcopy(m.weight)
    assert (copied * 1).grad_fn.next_functions[0][0].variable is copied
    stats = mg.graph_stats((m.weight * 2).exp().sum())
    assert pickle.loads(pickle.dumps(stats)).by_op == stats.by_op == {"Mul": 1, "Exp": 1,
                                                                      "Sum": 1}
    assert stats.by_op.__class__ is dict and list(stats.by_op)[0]() == "MulBackward0"


def test_calling_a_node_checks_its_arguments_and_fills_none_as_torch():
    (x, w), (xt, wt) = leaves((2,), (2,))
    assert (x * w).grad_fn(None) == (None, None) == (xt * wt).grad_fn(None)
    with pytest.raises(RuntimeError, match="expected 1 gradients, one per output, got 2"):
        (x * w).grad_fn(mg.ones(2), mg.ones(2))
    a, b = x.split(1)
    grads = a.grad_fn(mg.ones(1), None)
    assert grads.tolist() == [1.0, 0.0]
    with pytest.raises(RuntimeError, match="gradient 0 has shape"):
        a.grad_fn(mg.ones(2), None)


def test_increment_version_takes_an_iterable_and_names_its_argument():
    (x,), _ = leaves((3,))
    y = x.exp()
    mg.autograd.graph.increment_version([y])
    with pytest.raises(RuntimeError, match="modified"):
        y.sum().backward()
    with pytest.raises(TypeError, match="increment_version: tensor must be a Tensor"):
        mg.autograd.graph.increment_version(3)


def test_a_node_hook_inside_a_captured_step_is_refused():
    w = mg.ones(2, requires_grad=True)

    @mg.capture
    def step(x):
        y = x * w
        y.grad_fn.register_prehook(lambda go: (go[0] * 0,))
        return y.exp().sum()
    with pytest.raises(mg.capture.__globals__["CaptureError"], match="the node of op #0"):
        step(mg.ones(2))

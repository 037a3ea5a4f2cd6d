"""Habits of public sequence, reinforcement-learning and scientific PyTorch files, each as a
short program run under PyTorch and here (the same text given either library's ``torch``,
``nn``, ``F``), the two outcomes compared to rounding. The habits: a physics-informed fit
whose collocation points are made once as ``tensor(..., requires_grad=True).float()`` and
reused by every LBFGS closure (a second backward through a node that holds no data), graph
convolutions over a COO adjacency (``sparse_coo_tensor``, ``torch.sparse.FloatTensor``,
``spmm``, ``sparse.mm``, ``to_dense``/``to_sparse``, ``coalesce``), skip-gram embeddings with
``Embedding(sparse=True)`` trained by ``optim.SparseAdam``, a float64 state given to float32
layers (torch's RuntimeError), and the legacy ``Variable(x, volatile=True)``."""

import functools
import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

from test_public_code_habits import assert_close  # noqa: E402
from torch_compare import under_both  # noqa: E402

assert_close = functools.partial(assert_close, rtol=1e-5, atol=1e-6)


def plain(value):
    """Tensors as nested lists of floats (sparse ones made dense), containers walked."""
    if isinstance(value, (torch.Tensor, mg.Tensor)):
        value = value.to_dense() if value.is_sparse else value
        return np.asarray(value.detach().numpy(), dtype=np.float64).tolist()
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def run_both(program, *args):
    return under_both(program, plain, *args, ignore=UserWarning)   # deprecations


# ----- a second backward through a node that holds no data -------------------------------

REUSED = {  # one node made once from leaves (float64 x, float32 y and w), read by every graph
    "float": lambda x, y, w: x.float(),
    "to float32": lambda x, y, w: x.to(torch_or_mg(x).float32),
    "plus a number": lambda x, y, w: y + 1.0,
    "leaf plus leaf": lambda x, y, w: y + w,
    "sum keeping dims": lambda x, y, w: w.sum(1, keepdim=True),
    "cast then viewed": lambda x, y, w: x.float().view(-1, 1),      # a chain of such nodes
    "sum transposed twice": lambda x, y, w: (y + w).t().t(),
    "leaf times leaf": lambda x, y, w: y * w,      # saves its inputs: refused in both
}


def torch_or_mg(t):
    return torch if isinstance(t, torch.Tensor) else mg


def reused_cast(torch, nn, F, make):
    """Collocation points cast once from float64 leaves; each step builds a new graph on
    them, differentiates twice (create_graph) and calls backward."""
    torch.manual_seed(4)
    x = torch.tensor(np.linspace(-1, 1, 5)[:, None], requires_grad=True)
    y = torch.tensor(np.linspace(-1, 1, 5)[:, None], dtype=torch.float32, requires_grad=True)
    w = torch.full((5, 1), 0.5, requires_grad=True)
    points = make(x, y, w)
    net = nn.Sequential(nn.Linear(1, 6), nn.Tanh(), nn.Linear(6, 1))
    out = []
    for _ in range(3):
        net.zero_grad()
        u = net(points)
        u_x = torch.autograd.grad(u, points, torch.ones_like(u), create_graph=True)[0]
        u_xx = torch.autograd.grad(u_x, points, torch.ones_like(u_x), create_graph=True)[0]
        loss = (u_xx + u).pow(2).mean()
        try:
            loss.backward()
        except RuntimeError:
            out.append("second backward refused")
            break
        out += [loss, net[0].weight.grad, x.grad, y.grad]
    return out


@pytest.mark.parametrize("name", list(REUSED))
def test_a_node_without_data_runs_again_as_torch_runs_it(name):
    expected, got = run_both(reused_cast, REUSED[name])
    assert_close(got, expected)


def lbfgs_with_cast_points(torch, nn, F):
    torch.manual_seed(5)
    t = torch.tensor(np.linspace(0, 1, 8)[:, None], requires_grad=True).float()
    net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.LBFGS(net.parameters(), max_iter=4, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        y = net(t)
        y_t = torch.autograd.grad(y.sum(), t, create_graph=True)[0]
        loss = (y_t - torch.cos(t)).pow(2).mean() + (y[0, 0] - 0.5) ** 2
        loss.backward()
        return loss
    return [opt.step(closure), opt.step(closure), net(t)]


def test_lbfgs_closures_reuse_points_cast_from_leaves():
    expected, got = run_both(lbfgs_with_cast_points)
    assert_close(got, expected)


# ----- graph convolutions over a COO adjacency --------------------------------------------

EDGES = {
    "plain": ([[0, 1, 2, 3], [1, 2, 3, 0]], (4, 4)),
    "repeated edges sum": ([[0, 0, 1, 3, 3], [1, 1, 2, 0, 0]], (4, 4)),
    "self loops, one empty row": ([[0, 1, 3, 0], [0, 1, 3, 3]], (4, 4)),
    "size inferred": ([[0, 1, 3], [2, 1, 3]], None),
}


def graph_convolution(torch, nn, F, edges, size, build):
    torch.manual_seed(6)
    indices = torch.tensor(edges)
    values = torch.linspace(0.5, 1.5, indices.shape[1])
    sized = (size,) if size else ()              # torch takes no size=None
    if build == "sparse_coo_tensor":
        adj = torch.sparse_coo_tensor(indices, values, *sized)
    elif build == "legacy FloatTensor":
        adj = torch.sparse.FloatTensor(indices, values, torch.Size(size or (4, 4)))
    elif build == "coalesce":                  # repeated edges summed, as GNN code does
        adj = torch.sparse_coo_tensor(indices, values, *sized).coalesce()
    elif build == "float indices":             # torch casts them to int64, rounded to zero
        adj = torch.sparse_coo_tensor(indices.float() + 0.25, values, *sized)
    else:                                      # a dense matrix made sparse
        adj = torch.sparse_coo_tensor(indices, values, *sized).to_dense().to_sparse()
    weight = nn.Parameter(torch.FloatTensor(3, 2))
    weight.data.uniform_(-0.5, 0.5)
    features = torch.randn(adj.shape[1], 3)
    hidden = torch.spmm(adj, torch.mm(features, weight))
    again = torch.sparse.mm(adj, hidden)
    loss = F.log_softmax(again, dim=1)[:, 0].sum()
    loss.backward()
    return [adj.to_dense(), hidden, again, weight.grad]


@pytest.mark.parametrize("build", ["sparse_coo_tensor", "legacy FloatTensor", "to_sparse",
                                   "coalesce", "float indices"])
@pytest.mark.parametrize("name", list(EDGES))
def test_graph_convolution_over_a_coo_adjacency(name, build):
    expected, got = run_both(graph_convolution, *EDGES[name], build)
    assert_close(got, expected)


def coo_values_gradient(torch, nn, F):
    values = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    adj = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [1, 0, 0]]), values, (2, 2))
    torch.spmm(adj, torch.tensor([[1.0, 2.0], [3.0, -1.0]])).pow(2).sum().backward()
    return [values.grad, adj.dtype == torch.float32]


def test_the_values_of_a_coo_tensor_get_gradients():
    expected, got = run_both(coo_values_gradient)
    assert_close(got, expected)


def coalesced_values_gradient(torch, nn, F):
    values = torch.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
    indices = torch.tensor([[0, 1, 1, 0], [1, 0, 0, 1]])
    adj = torch.sparse_coo_tensor(indices, values, (2, 2)).coalesce()
    torch.sparse.mm(adj, torch.tensor([[1.0, 2.0], [3.0, -1.0]])).pow(2).sum().backward()
    by_mm, values.grad = values.grad, None        # the next product's gradients alone
    flags = torch.sparse_coo_tensor(torch.tensor([[True, False], [False, True]]),
                                    torch.tensor([4.0, 5.0]), (2, 2))
    base = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    dense = torch.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    adj = torch.sparse_coo_tensor(indices, values, (2, 2)).coalesce()
    torch.sparse.addmm(base, adj, dense, beta=0.5, alpha=2.0).pow(2).sum().backward()
    return [adj.to_dense(), by_mm, flags.to_dense(), values.grad, base.grad, dense.grad]


def test_coalesce_and_addmm_pass_the_gradient_to_the_values():
    expected, got = run_both(coalesced_values_gradient)
    assert_close(got, expected)


# ----- skip-gram embeddings with sparse gradients and SparseAdam -------------------------

def skip_gram(torch, nn, F, padding_idx, maximize):
    torch.manual_seed(7)
    u = nn.Embedding(9, 4, sparse=True, padding_idx=padding_idx)
    v = nn.Embedding(9, 4, sparse=True)
    nn.init.uniform_(u.weight.data, -0.25, 0.25)
    opt = torch.optim.SparseAdam(list(u.parameters()) + list(v.parameters()), lr=0.05,
                                 betas=(0.8, 0.99), maximize=maximize)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 4)
    batches = [([1, 2, 2], [3, 4, 5], [[6, 7], [8, 0], [6, 6]]),
               ([0, 4, 1], [2, 2, 7], [[5, 3], [1, 8], [7, 0]]),
               ([3, 3, 5], [1, 6, 0], [[2, 4], [4, 4], [8, 1]])]
    out = []
    for centre, context, negatives in batches:
        opt.zero_grad()
        eu = u(torch.LongTensor(centre))
        score = F.logsigmoid(torch.clamp((eu * v(torch.tensor(context))).sum(1), -10, 10))
        negative = torch.bmm(v(torch.tensor(negatives)), eu.unsqueeze(2)).squeeze()
        loss = -(score + F.logsigmoid(-negative).sum(1)).mean()
        loss.backward()
        opt.step()
        sched.step()
        out += [loss, u.weight.grad, u.weight, v.weight, sched.get_last_lr()]
    return out


@pytest.mark.parametrize("padding_idx, maximize", [(None, False), (0, False), (None, True)])
def test_skip_gram_with_sparse_embeddings_and_sparse_adam(padding_idx, maximize):
    expected, got = run_both(skip_gram, padding_idx, maximize)
    assert_close(got, expected)


@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_sparse_embedding_with_scaled_gradients_fails_at_backward_as_torch(scale_grad_by_freq):
    outcomes = []
    for lib in (torch, mg):
        w = lib.ones(4, 2, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor([0, 0, 3]), w, sparse=True,
                                          scale_grad_by_freq=scale_grad_by_freq)
        try:
            out.sum().backward()
            outcomes.append(plain(w.grad))
        except RuntimeError as error:
            outcomes.append(str(error))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("options", [dict(lr=0.0), dict(eps=-1.0), dict(betas=(1.0, 0.9)),
                                     dict(betas=(0.9, -0.1))])
def test_sparse_adam_refuses_what_torch_refuses(options):
    p = mg.nn.Parameter(mg.ones(2))
    with pytest.raises(ValueError) as ours:
        mg.optim.SparseAdam([p], **options)
    with pytest.raises(ValueError) as theirs:
        torch.optim.SparseAdam([torch.nn.Parameter(torch.ones(2))], **options)
    assert str(ours.value) == str(theirs.value)


# ----- a float64 state given to a float32 model -----------------------------------------

MIXED = {
    "Linear": (lambda nn: nn.Linear(4, 2), (3, 4)),
    "LayerNorm": (lambda nn: nn.LayerNorm(4), (3, 4)),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(4), (3, 4)),
    "GroupNorm": (lambda nn: nn.GroupNorm(2, 4), (3, 4)),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(4, affine=True), (3, 4, 5)),
}


@pytest.mark.parametrize("name", list(MIXED))
def test_a_float64_input_to_float32_parameters_is_torch_error_class(name):
    make, shape = MIXED[name]
    classes = []
    for lib in (torch, mg):
        with pytest.raises(Exception) as caught:
            make(lib.nn)(lib.zeros(shape, dtype=lib.float64))
        classes.append(caught.type)
    assert classes[0] is RuntimeError and issubclass(classes[1], RuntimeError)


# ----- the legacy Variable(x, volatile=True) ----------------------------------------------

@pytest.mark.parametrize("requires_grad", [False, True])
def test_volatile_variable_warns_and_changes_nothing(requires_grad):
    outcomes = []
    for lib in (torch, mg):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                v = lib.autograd.Variable(lib.ones(2), requires_grad=requires_grad,
                                          volatile=True)
                outcome = v.requires_grad
            except ValueError as error:
                outcome = str(error)
        outcomes.append((outcome, [str(w.message) for w in caught]))
    assert outcomes[1] == outcomes[0]


def test_the_comparison_can_fail():
    expected, _ = run_both(coo_values_gradient)
    with pytest.raises(AssertionError):
        assert_close([np.add(expected[0], 1e-3).tolist(), expected[1]], expected)

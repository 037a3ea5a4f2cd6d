"""Programs in the style of public graph neural network code written without PyTorch
Geometric: an ``edge_index`` of shape (2, E), self loops and symmetric normalisation, message
passing by ``index_add_``, ``scatter_add_`` and ``scatter_reduce``, GCN, GraphSAGE and GAT
layers, a dense and a sparse adjacency, and node classification with masks.

Each program takes one library's module triple (torch, nn, F), seeds torch's generator, runs
on synthetic data in the default dtype and returns what it would print: numbers, flags,
orders, error class names and the values of small tensors as lists.
``test_public_model_families.py`` runs it under both libraries and compares. The graphs, models,
names, sizes and constants are the programs' own."""

from program_output import error_class, values


def two_communities(torch, num_nodes=12, features=5):
    """A small graph of two communities: an undirected ring in each, a few edges across,
    features drawn around each community's mean, labels by community (the programs' own)."""
    half = num_nodes // 2
    ring = torch.arange(half)
    src = torch.cat([ring, ring + half, torch.tensor([0, 3])])
    dst = torch.cat([(ring + 1) % half, (ring + 1) % half + half, torch.tensor([half, half + 2])])
    edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])], dim=0)
    y = (torch.arange(num_nodes) >= half).long()
    x = torch.randn(num_nodes, features) + y.unsqueeze(1).float() * 1.5
    return x.to(torch.get_default_dtype()), edge_index, y


# ----- GCN and GraphSAGE by index_add_ ---------------------------------------------------------

def gcn_node_classification(torch, nn, F):
    """A GCN as tutorials write it without PyG: self loops by ``torch.cat`` with
    ``torch.arange``, degrees by ``torch.bincount`` and by ``scatter_add_``, ``deg.pow(-0.5)``
    with the infinite entries zeroed, messages ``norm.view(-1, 1) * x[col]`` summed by
    ``index_add_``; node classification with train, validation and test masks,
    ``F.nll_loss(out[mask], y[mask])``, accuracy by ``(pred[mask] == y[mask]).sum().item()``;
    then a GraphSAGE mean aggregator, a max aggregator by ``scatter_reduce`` and
    ``torch_scatter``-style ``scatter`` written by hand."""
    torch.manual_seed(0)
    printed = []
    x, edge_index, y = two_communities(torch)
    num_nodes = x.size(0)

    def add_self_loops(edge_index, num_nodes):
        loop_index = torch.arange(0, num_nodes, dtype=torch.long, device=edge_index.device)
        loop_index = loop_index.unsqueeze(0).repeat(2, 1)
        return torch.cat([edge_index, loop_index], dim=1)

    def degree(index, num_nodes, dtype):
        out = torch.zeros((num_nodes, ), dtype=dtype, device=index.device)
        one = torch.ones((index.size(0), ), dtype=out.dtype, device=out.device)
        return out.scatter_add_(0, index, one)

    class GCNConv(nn.Module):
        def __init__(self, in_channels, out_channels):
            super().__init__()
            self.lin = nn.Linear(in_channels, out_channels, bias=False)
            self.bias = nn.Parameter(torch.empty(out_channels))
            self.reset_parameters()

        def reset_parameters(self):
            self.lin.reset_parameters()
            self.bias.data.zero_()

        def forward(self, x, edge_index):
            edge_index = add_self_loops(edge_index, num_nodes=x.size(0))
            x = self.lin(x)
            row, col = edge_index
            deg = degree(col, x.size(0), dtype=x.dtype)
            deg_inv_sqrt = deg.pow(-0.5)
            deg_inv_sqrt[deg_inv_sqrt == float("inf")] = 0
            norm = deg_inv_sqrt[row] * deg_inv_sqrt[col]
            out = torch.zeros_like(x)
            out.index_add_(0, col, norm.view(-1, 1) * x[row])
            return out + self.bias

    class GCN(nn.Module):
        def __init__(self, num_features, hidden_channels, num_classes):
            super().__init__()
            self.conv1 = GCNConv(num_features, hidden_channels)
            self.conv2 = GCNConv(hidden_channels, num_classes)

        def forward(self, x, edge_index):
            x = self.conv1(x, edge_index)
            x = x.relu()
            x = F.dropout(x, p=0.5, training=self.training)
            x = self.conv2(x, edge_index)
            return F.log_softmax(x, dim=1)

    perm = torch.randperm(num_nodes)
    train_mask = torch.zeros(num_nodes, dtype=torch.bool)
    val_mask = torch.zeros(num_nodes, dtype=torch.bool)
    test_mask = torch.zeros(num_nodes, dtype=torch.bool)
    train_mask[perm[:6]] = True
    val_mask[perm[6:9]] = True
    test_mask[perm[9:]] = True

    with_loops = add_self_loops(edge_index, num_nodes)
    deg = torch.bincount(with_loops[1], minlength=num_nodes)
    isolated = torch.zeros(3)
    isolated_inv = isolated.pow(-0.5)
    isolated_inv[isolated_inv == float("inf")] = 0
    printed += [list(edge_index.shape), edge_index.dtype == torch.long, deg.tolist(),
                values(degree(with_loops[1], num_nodes, x.dtype)), values(isolated_inv),
                int(train_mask.sum()), (train_mask & test_mask).any().item()]

    model = GCN(x.size(1), 8, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)

    def train():
        model.train()
        optimizer.zero_grad()
        out = model(x, edge_index)
        loss = F.nll_loss(out[train_mask], y[train_mask])
        loss.backward()
        optimizer.step()
        return loss

    def test():
        model.eval()
        out = model(x, edge_index)
        pred = out.argmax(dim=1)
        accs = []
        for mask in (train_mask, val_mask, test_mask):
            correct = (pred[mask] == y[mask]).sum()
            accs.append(int(correct) / int(mask.sum()))
        return accs

    for epoch in range(1, 11):
        loss = train()
        if epoch % 2 == 0:
            train_acc, val_acc, test_acc = test()
            printed.append(f"Epoch: {epoch:03d}, Loss: {loss:.4f}, Train: {train_acc:.4f}, "
                           f"Val: {val_acc:.4f}, Test: {test_acc:.4f}")
            printed.append(loss.item())
    with torch.no_grad():
        model.eval()
        out = model(x, edge_index)
    printed += [values(out[:3]), (out.argmax(1)[test_mask] == y[test_mask]).sum().item()]

    class SAGEConv(nn.Module):
        def __init__(self, in_channels, out_channels, aggr="mean"):
            super().__init__()
            self.aggr = aggr
            self.lin_l = nn.Linear(in_channels, out_channels)
            self.lin_r = nn.Linear(in_channels, out_channels, bias=False)

        def forward(self, x, edge_index):
            src, dst = edge_index
            if self.aggr == "max":
                index = dst.unsqueeze(-1).expand(-1, x.size(1))
                out = x.new_zeros(x.shape).scatter_reduce(0, index, x[src], reduce="amax",
                                                          include_self=False)
            else:
                out = torch.zeros_like(x).index_add_(0, dst, x[src])
                count = torch.bincount(dst, minlength=x.size(0)).clamp(min=1)
                out = out / count.unsqueeze(-1)
            return self.lin_l(out) + self.lin_r(x)

    torch.manual_seed(1)
    for aggr in ("mean", "max"):
        sage = nn.ModuleList([SAGEConv(5, 8, aggr), SAGEConv(8, 2, aggr)])
        opt = torch.optim.SGD(sage.parameters(), lr=0.1, momentum=0.9)
        for _ in range(4):
            h = F.relu(sage[0](x, edge_index))
            h = F.normalize(h, p=2.0, dim=-1)
            out = F.log_softmax(sage[1](h, edge_index), dim=-1)
            loss = F.nll_loss(out[train_mask], y[train_mask])
            opt.zero_grad()
            loss.backward()
            opt.step()
            printed.append(loss.item())
        printed.append(values(sage[0].lin_l.weight.grad[0]))

    # torch_scatter's scatter(src, index, dim, reduce) as people write it without the package
    def scatter(src, index, dim=0, dim_size=None, reduce="sum"):
        size = list(src.size())
        size[dim] = dim_size if dim_size is not None else int(index.max()) + 1
        index = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
        out = src.new_zeros(size)
        if reduce == "sum":
            return out.scatter_add_(dim, index, src)
        return out.scatter_reduce_(dim, index, src, reduce=reduce, include_self=False)

    src = torch.randn(7, 3, requires_grad=True)
    index = torch.tensor([0, 1, 0, 1, 2, 1, 4])
    results = {reduce: scatter(src, index, dim_size=6, reduce=reduce)
               for reduce in ("sum", "mean", "amax", "amin", "prod")}
    total = sum(r.sum() for r in results.values())
    total.backward()
    printed += [[values(r) for r in results.values()], values(src.grad),
                error_class(lambda: torch.zeros(3).index_add_(0, torch.tensor([0, 3]),
                                                              torch.ones(2))),
                error_class(lambda: torch.zeros(3).scatter_reduce(
                    0, torch.tensor([0, 1]), torch.ones(2), reduce="max"))]
    return printed


# ----- GAT, a dense and a sparse adjacency -----------------------------------------------------

def gat_and_adjacency(torch, nn, F):
    """A GAT layer (attention logits ``(h[src] * a_src).sum(-1)`` plus the destination's,
    ``F.leaky_relu(..., 0.2)``, a scatter softmax by ``scatter_reduce(..., "amax")``, ``exp``
    and ``index_add_``, two heads concatenated then averaged), trained on node labels; the
    same GCN propagation by a dense adjacency from ``torch.sparse_coo_tensor(...).to_dense()``
    and by ``torch.sparse.mm``, and a graph-level readout by ``index_add_`` over a batch
    vector with ``global_mean_pool``."""
    torch.manual_seed(2)
    printed = []
    x, edge_index, y = two_communities(torch, num_nodes=10, features=4)
    num_nodes = x.size(0)

    def softmax(src, index, num_nodes):
        src_max = torch.full((num_nodes,) + src.shape[1:], float("-inf"), dtype=src.dtype)
        index_expanded = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
        src_max = src_max.scatter_reduce(0, index_expanded, src, reduce="amax",
                                         include_self=False)
        out = (src - src_max[index]).exp()
        out_sum = torch.zeros((num_nodes,) + src.shape[1:], dtype=src.dtype)
        out_sum = out_sum.index_add(0, index, out)
        return out / (out_sum[index] + 1e-16)

    class GATConv(nn.Module):
        def __init__(self, in_channels, out_channels, heads=1, concat=True,
                     negative_slope=0.2, dropout=0.0):
            super().__init__()
            self.heads, self.out_channels, self.concat = heads, out_channels, concat
            self.negative_slope, self.dropout = negative_slope, dropout
            self.lin = nn.Linear(in_channels, heads * out_channels, bias=False)
            self.att_src = nn.Parameter(torch.empty(1, heads, out_channels))
            self.att_dst = nn.Parameter(torch.empty(1, heads, out_channels))
            self.bias = nn.Parameter(torch.zeros(heads * out_channels if concat
                                                 else out_channels))
            nn.init.xavier_uniform_(self.lin.weight)
            nn.init.xavier_uniform_(self.att_src)
            nn.init.xavier_uniform_(self.att_dst)

        def forward(self, x, edge_index, return_attention_weights=False):
            H, C = self.heads, self.out_channels
            loops = torch.arange(x.size(0), device=x.device)
            edge_index = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
            src, dst = edge_index[0], edge_index[1]
            h = self.lin(x).view(-1, H, C)
            alpha_src = (h * self.att_src).sum(dim=-1)
            alpha_dst = (h * self.att_dst).sum(-1)
            alpha = alpha_src[src] + alpha_dst[dst]
            alpha = F.leaky_relu(alpha, self.negative_slope)
            alpha = softmax(alpha, dst, x.size(0))
            alpha = F.dropout(alpha, p=self.dropout, training=self.training)
            msg = h[src] * alpha.unsqueeze(-1)
            out = torch.zeros_like(h).index_add_(0, dst, msg)
            out = out.view(-1, H * C) if self.concat else out.mean(dim=1)
            out = out + self.bias
            if return_attention_weights:
                return out, (edge_index, alpha)
            return out

    class GAT(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GATConv(4, 4, heads=2, dropout=0.3)
            self.conv2 = GATConv(8, 2, heads=2, concat=False)

        def forward(self, x, edge_index):
            x = F.dropout(x, p=0.2, training=self.training)
            x = F.elu(self.conv1(x, edge_index))
            return self.conv2(x, edge_index)

    train_mask = torch.rand(num_nodes) < 0.6
    model = GAT()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
    for _ in range(6):
        model.train()
        optimizer.zero_grad()
        out = model(x, edge_index)
        loss = F.cross_entropy(out[train_mask], y[train_mask])
        loss.backward()
        optimizer.step()
        printed.append(loss.item())
    model.eval()
    with torch.no_grad():
        out, (att_index, att) = model.conv1(x, edge_index, return_attention_weights=True)
        pred = model(x, edge_index).argmax(dim=-1)
    per_node = torch.zeros(num_nodes, 2).index_add_(0, att_index[1], att)
    printed += [list(att.shape), torch.allclose(per_node, torch.ones_like(per_node)),
                values(att[:4]), pred.tolist(),
                (pred[~train_mask] == y[~train_mask]).sum().item(), values(out[0])]

    # the GCN propagation D^-1/2 (A + I) D^-1/2 X three ways
    E = edge_index.size(1)
    weight = torch.ones(E)
    adj = torch.sparse_coo_tensor(edge_index, weight, (num_nodes, num_nodes))
    dense = adj.to_dense() + torch.eye(num_nodes)
    deg = dense.sum(dim=1)
    d_inv_sqrt = torch.diag(deg.pow(-0.5))
    norm_adj = d_inv_sqrt @ dense @ d_inv_sqrt
    by_dense = norm_adj @ x

    loops = torch.arange(num_nodes)
    full_index = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
    deg_vec = torch.zeros(num_nodes).scatter_add_(0, full_index[0],
                                                  torch.ones(full_index.size(1)))
    deg_inv_sqrt = deg_vec.pow(-0.5)
    edge_weight = deg_inv_sqrt[full_index[0]] * deg_inv_sqrt[full_index[1]]
    sparse_adj = torch.sparse_coo_tensor(full_index, edge_weight.to(x.dtype),
                                         size=(num_nodes, num_nodes)).coalesce()
    by_sparse = torch.sparse.mm(sparse_adj, x)
    by_index = torch.zeros_like(x).index_add_(
        0, full_index[1], edge_weight.to(x.dtype).view(-1, 1) * x[full_index[0]])
    printed += [values(sparse_adj.to_dense()[0]), torch.allclose(by_dense, by_sparse),
                torch.allclose(by_dense, by_index), values(by_sparse[:2]),
                torch.equal(norm_adj, norm_adj.t())]

    # a batch of two graphs and a mean-pooled readout for graph classification
    batch = torch.cat([torch.zeros(6, dtype=torch.long), torch.ones(4, dtype=torch.long)])

    def global_mean_pool(x, batch):
        size = int(batch.max().item() + 1)
        out = torch.zeros(size, x.size(1), dtype=x.dtype).index_add_(0, batch, x)
        count = torch.bincount(batch, minlength=size).to(x.dtype).clamp(min=1)
        return out / count.view(-1, 1)

    def global_max_pool(x, batch):
        size = int(batch.max()) + 1
        index = batch.view(-1, 1).expand_as(x)
        return torch.full((size, x.size(1)), float("-inf"), dtype=x.dtype).scatter_reduce(
            0, index, x, reduce="amax", include_self=True)

    readout = nn.Linear(8, 1)
    emb = model.conv1(x, edge_index)
    pooled = torch.cat([global_mean_pool(emb, batch), global_max_pool(emb, batch)], dim=1)
    graph_y = torch.tensor([1.0, 0.0])
    graph_loss = F.binary_cross_entropy_with_logits(readout(pooled[:, :8]).squeeze(-1),
                                                    graph_y)
    graph_loss.backward()
    printed += [list(pooled.shape), values(pooled), graph_loss.item(),
                values(model.conv1.att_src.grad), torch.unique(batch).tolist(),
                torch.sparse_coo_tensor(edge_index.float(), weight, (num_nodes, num_nodes))
                .to_dense().sum().item(),
                error_class(lambda: torch.sparse_coo_tensor(edge_index, weight, (4, 4),
                                                            check_invariants=True))]

    # to_undirected, coalescing and the edges of a node as utilities write them
    directed = torch.tensor([[0, 1, 1, 2, 3, 3], [1, 2, 2, 0, 1, 0]])
    both = torch.cat([directed, directed.flip(0)], dim=1)
    undirected = torch.unique(both, dim=1)
    key = undirected[0] * 4 + undirected[1]
    order = torch.argsort(key)
    neighbours = undirected[1][undirected[0] == 3]
    has_self_loops = bool((undirected[0] == undirected[1]).any())
    row_counts = torch.zeros(4, dtype=torch.long).index_add_(
        0, undirected[0], torch.ones_like(undirected[0]))
    ptr = torch.cat([torch.zeros(1, dtype=torch.long), row_counts.cumsum(0)])
    mean = torch.zeros(4, 2).index_reduce_(0, undirected[0], x[undirected[1], :2], "mean",
                                           include_self=False)
    summed = torch.sparse.sum(torch.sparse_coo_tensor(undirected, torch.ones(key.numel()),
                                                      (4, 4)), dim=1)
    printed += [undirected.tolist(), order.tolist(), neighbours.tolist(), has_self_loops,
                ptr.tolist(), values(mean), values(summed.to_dense()),
                torch.equal(summed.to_dense().long(), row_counts)]
    return printed

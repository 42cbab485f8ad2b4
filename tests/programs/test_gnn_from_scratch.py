"""Graph neural networks written without PyTorch Geometric, as the "GNN from scratch" tutorials and
PyG's own docs write the message-passing pattern: an edge_index of shape (2, E) with self loops by
torch.cat, degrees by torch.bincount(row, minlength=N), a MessagePassing-style base class
(propagate -> message on x.index_select(0, col) -> aggregate by torch.zeros(...).index_add_(0, row,
msg) or scatter_reduce(0, index, src, reduce="amax"/"mean", include_self=False) -> update); GCNConv with
deg.pow(-0.5) and norm[deg_inv_sqrt == inf] = 0 (masked_fill_), SAGEConv (mean aggregation, root
weight, F.normalize), GINConv with a learnable eps and an MLP; graph classification over a batch of
graphs (a batch vector by torch.repeat_interleave, global_mean_pool/global_max_pool by scatter_reduce
and global_add_pool by index_add_), node classification with a train mask, edge dropout by
torch.rand(E) >= p on a generator, and link prediction by a dot product of node pairs with negative
edges from torch.randint and BCE-with-logits. Seeds are torch.manual_seed in both libraries."""
import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from


def random_graphs(n_graphs, seed):
    """(x, edge_index, y) per graph: rings (label 0) and stars (label 1) of 5-8 nodes."""
    rng = np.random.default_rng(seed)
    graphs = []
    for g in range(n_graphs):
        n = int(rng.integers(5, 9))
        label = g % 2
        if label == 0:
            edges = [(i, (i + 1) % n) for i in range(n)]
        else:
            edges = [(0, i) for i in range(1, n)]
        e = np.array(edges + [(b, a) for a, b in edges]).T
        x = rng.normal(size=(n, 4)).astype(np.float32)
        graphs.append((x, e.astype(np.int64), label))
    return graphs


def gnn(torch, init=None, conv="gcn", task="graph"):
    nn = torch.nn
    F = torch.nn.functional

    def add_self_loops(edge_index, num_nodes):
        loop = torch.arange(num_nodes, dtype=torch.long).unsqueeze(0).repeat(2, 1)
        return torch.cat([edge_index, loop], dim=1)

    def degree(index, num_nodes, dtype=None):
        return torch.bincount(index, minlength=num_nodes).to(dtype or torch.float)

    class MessagePassing(nn.Module):
        def __init__(self, aggr="add"):
            super().__init__()
            self.aggr = aggr

        def propagate(self, edge_index, x, **kwargs):
            row, col = edge_index
            x_j = x.index_select(0, col)
            msg = self.message(x_j, **kwargs)
            out = self.aggregate(msg, row, x.size(0))
            return self.update(out, x)

        def message(self, x_j, **kwargs):
            return x_j

        def aggregate(self, msg, index, num_nodes):
            out = torch.zeros(num_nodes, msg.size(1), dtype=msg.dtype)
            if self.aggr == "add":
                return out.index_add_(0, index, msg)
            reduce = {"mean": "mean", "max": "amax"}[self.aggr]
            idx = index.unsqueeze(-1).expand_as(msg)
            return out.scatter_reduce(0, idx, msg, reduce=reduce, include_self=False)

        def update(self, aggr_out, x):
            return aggr_out

    class GCNConv(MessagePassing):
        def __init__(self, in_channels, out_channels):
            super().__init__(aggr="add")
            self.lin = nn.Linear(in_channels, out_channels, bias=False)
            self.bias = nn.Parameter(torch.zeros(out_channels))

        def forward(self, x, edge_index):
            edge_index = add_self_loops(edge_index, x.size(0))
            x = self.lin(x)
            row, col = edge_index
            deg = degree(col, x.size(0), dtype=x.dtype)
            deg_inv_sqrt = deg.pow(-0.5)
            deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float("inf"), 0)
            norm = deg_inv_sqrt[row] * deg_inv_sqrt[col]
            return self.propagate(edge_index, x, norm=norm) + self.bias

        def message(self, x_j, norm):
            return norm.view(-1, 1) * x_j

    class SAGEConv(MessagePassing):
        def __init__(self, in_channels, out_channels, normalize=True):
            super().__init__(aggr="mean")
            self.lin_l = nn.Linear(in_channels, out_channels)
            self.lin_r = nn.Linear(in_channels, out_channels, bias=False)
            self.normalize = normalize

        def forward(self, x, edge_index):
            out = self.propagate(edge_index, x)
            out = self.lin_l(out) + self.lin_r(x)
            if self.normalize:
                out = F.normalize(out, p=2.0, dim=-1)
            return out

    class GINConv(MessagePassing):
        def __init__(self, nn_module, train_eps=True):
            super().__init__(aggr="add")
            self.nn = nn_module
            self.eps = nn.Parameter(torch.Tensor([0.0])) if train_eps else 0.0

        def forward(self, x, edge_index):
            out = self.propagate(edge_index, x)
            return self.nn((1 + self.eps) * x + out)

    def make_conv(i, o):
        if conv == "gcn":
            return GCNConv(i, o)
        if conv == "sage":
            return SAGEConv(i, o)
        return GINConv(nn.Sequential(nn.Linear(i, o), nn.BatchNorm1d(o), nn.ReLU(), nn.Linear(o, o)))

    def global_add_pool(x, batch, size):
        return torch.zeros(size, x.size(1)).index_add_(0, batch, x)

    def global_mean_pool(x, batch, size):
        idx = batch.unsqueeze(-1).expand_as(x)
        return torch.zeros(size, x.size(1)).scatter_reduce(0, idx, x, reduce="mean", include_self=False)

    def global_max_pool(x, batch, size):
        idx = batch.unsqueeze(-1).expand_as(x)
        return torch.zeros(size, x.size(1)).scatter_reduce(0, idx, x, reduce="amax", include_self=False)

    class Net(nn.Module):
        def __init__(self, hidden=16, out=2):
            super().__init__()
            self.conv1 = make_conv(4, hidden)
            self.conv2 = make_conv(hidden, hidden)
            self.lin = nn.Linear(3 * hidden, out)

        def embed(self, x, edge_index):
            x = F.relu(self.conv1(x, edge_index))
            x = F.dropout(x, p=0.2, training=self.training)
            return self.conv2(x, edge_index)

        def forward(self, x, edge_index, batch, num_graphs):
            x = self.embed(x, edge_index)
            x = torch.cat([global_mean_pool(x, batch, num_graphs), global_max_pool(x, batch, num_graphs),
                           global_add_pool(x, batch, num_graphs)], dim=1)
            return self.lin(x)

    torch.manual_seed(0)
    graphs = random_graphs(12, 0)
    # one big disconnected graph, as PyG's Batch.from_data_list makes it
    xs, edges, offset = [], [], 0
    for x, e, _ in graphs:
        xs.append(torch.from_numpy(x))
        edges.append(torch.from_numpy(e) + offset)
        offset += x.shape[0]
    x = torch.cat(xs)
    edge_index = torch.cat(edges, dim=1)
    sizes = torch.tensor([g[0].shape[0] for g in graphs])
    batch = torch.repeat_interleave(torch.arange(len(graphs)), sizes)
    y = torch.tensor([g[2] for g in graphs])
    model = Net()
    result = {"degree": numpy_of(degree(edge_index[0], x.size(0)))}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses = []
    gen = torch.Generator().manual_seed(1)
    for epoch in range(6):
        model.train()
        optimizer.zero_grad()
        if task == "graph":
            out = model(x, edge_index, batch, len(graphs))
            loss = F.cross_entropy(out, y)
        elif task == "node":
            keep = torch.rand(edge_index.size(1), generator=gen) >= 0.2  # edge dropout
            h = model.embed(x, edge_index[:, keep])
            node_y = (degree(edge_index[0], x.size(0)) > 2).long()  # hubs of the stars
            train_mask = torch.arange(x.size(0)) % 3 != 0
            logits = model.lin(torch.cat([h, h, h], dim=1))
            loss = F.cross_entropy(logits[train_mask], node_y[train_mask])
        else:  # link prediction
            h = model.embed(x, edge_index)
            neg = torch.randint(0, x.size(0), edge_index.shape, generator=gen)
            pos_score = (h[edge_index[0]] * h[edge_index[1]]).sum(dim=-1)
            neg_score = (h[neg[0]] * h[neg[1]]).sum(dim=-1)
            scores = torch.cat([pos_score, neg_score])
            labels = torch.cat([torch.ones(pos_score.size(0)), torch.zeros(neg_score.size(0))])
            loss = F.binary_cross_entropy_with_logits(scores, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        pred = model(x, edge_index, batch, len(graphs)).argmax(dim=1)
    result.update(losses=losses, pred=numpy_of(pred), acc=int((pred == y).sum()),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


@pytest.mark.parametrize("conv", ["gcn", "sage", "gin"])
@pytest.mark.parametrize("task", ["graph", "node", "link"])
def test_gnn(conv, task):
    ref, got = compare_program(gnn, rtol=1e-3, atol=1e-4, conv=conv, task=task)
    assert ref["losses"][-1] < ref["losses"][0]

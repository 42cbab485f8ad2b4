"""A graph attention network in the style of the GAT reference implementations: node features and
an edge list (self loops added with torch.arange and torch.cat), per-edge attention logits from
the source and target halves of `a` (leaky_relu 0.2), a softmax over each node's incoming edges
written with scatter_reduce('amax', include_self=False), exp and index_add_ of the denominators,
messages aggregated by index_add_ and heads concatenated or averaged; ELU between layers,
xavier_uniform_ with gain 1.414, Adam with weight decay, masked node classification with
log_softmax/nll_loss over train_mask, accuracy on the test nodes; a jit.script-decorated helper
and degree normalisation by bincount for a GCN layer built from torch.sparse_coo_tensor."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

NODES, FEATS, CLASSES = 24, 6, 3


def graph(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, CLASSES, NODES)
    x = np.eye(CLASSES)[y] @ rng.standard_normal((CLASSES, FEATS)) + 0.5 * rng.standard_normal((NODES, FEATS))
    edges = [(i, j) for i in range(NODES) for j in range(NODES)
             if i != j and rng.random() < (0.3 if y[i] == y[j] else 0.04)]
    edge_index = np.array(edges, np.int64).T
    return x.astype(np.float32), y.astype(np.int64), edge_index


def gat(torch, init=None, epochs=12, heads=2, hidden=4):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    @torch.jit.script
    def add_self_loops(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
        loops = torch.arange(num_nodes, dtype=edge_index.dtype).unsqueeze(0).repeat(2, 1)
        return torch.cat([edge_index, loops], dim=1)

    def edge_softmax(scores, index, num_nodes):
        # scores (E, H): normalised over the edges that share a target node
        shape = (num_nodes,) + tuple(scores.shape[1:])
        expanded = index.view(-1, 1).expand_as(scores)
        node_max = torch.full(shape, float("-inf")).scatter_reduce(0, expanded, scores, reduce="amax",
                                                                    include_self=False)
        scores = (scores - node_max.index_select(0, index)).exp()
        denom = torch.zeros(shape).index_add_(0, index, scores)
        return scores / (denom[index] + 1e-16)

    class GATLayer(nn.Module):
        def __init__(self, in_features, out_features, heads, concat=True):
            super().__init__()
            self.heads, self.out_features, self.concat = heads, out_features, concat
            self.W = nn.Linear(in_features, heads * out_features, bias=False)
            self.a_src = nn.Parameter(torch.empty(1, heads, out_features))
            self.a_dst = nn.Parameter(torch.empty(1, heads, out_features))
            self.bias = nn.Parameter(torch.zeros(heads * out_features if concat else out_features))
            nn.init.xavier_uniform_(self.W.weight, gain=1.414)
            nn.init.xavier_uniform_(self.a_src, gain=1.414)
            nn.init.xavier_uniform_(self.a_dst, gain=1.414)

        def forward(self, x, edge_index):
            n = x.size(0)
            h = self.W(x).view(n, self.heads, self.out_features)
            src, dst = edge_index[0], edge_index[1]
            alpha_src = (h * self.a_src).sum(dim=-1)
            alpha_dst = (h * self.a_dst).sum(dim=-1)
            e = F.leaky_relu(alpha_src[src] + alpha_dst[dst], negative_slope=0.2)
            alpha = edge_softmax(e, dst, n)
            alpha = F.dropout(alpha, p=0.0, training=self.training)
            messages = h[src] * alpha.unsqueeze(-1)
            out = torch.zeros_like(h).index_add_(0, dst, messages)
            out = out.reshape(n, -1) if self.concat else out.mean(dim=1)
            self.last_alpha = alpha
            return out + self.bias

    class GAT(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = GATLayer(FEATS, hidden, heads)
            self.conv2 = GATLayer(hidden * heads, CLASSES, 1, concat=False)

        def forward(self, x, edge_index):
            x = F.elu(self.conv1(x, edge_index))
            return F.log_softmax(self.conv2(x, edge_index), dim=1)

    x_np, y_np, edges_np = graph()
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
    edge_index = add_self_loops(torch.from_numpy(edges_np), NODES)
    train_mask = torch.zeros(NODES, dtype=torch.bool)
    train_mask[:12] = True
    test_mask = ~train_mask
    model = GAT()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses = []
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        out = model(x, edge_index)
        loss = F.nll_loss(out[train_mask], y[train_mask])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        pred = model(x, edge_index).argmax(dim=1)
        correct = (pred[test_mask] == y[test_mask]).sum()
        acc = int(correct) / int(test_mask.sum())
        alpha_sums = torch.zeros(NODES).index_add_(0, edge_index[1], model.conv2.last_alpha[:, 0])

    # A GCN layer over a normalised sparse adjacency: D^-1/2 (A + I) D^-1/2 X W
    deg = torch.bincount(edge_index[1], minlength=NODES).float()
    norm = deg.pow(-0.5)
    norm[torch.isinf(norm)] = 0
    values = norm[edge_index[0]] * norm[edge_index[1]]
    adj = torch.sparse_coo_tensor(edge_index.flip(0), values, (NODES, NODES)).coalesce()
    propagated = torch.sparse.mm(adj, x)
    result.update(losses=losses, acc=acc, pred=numpy_of(pred), alpha_sums=numpy_of(alpha_sums),
                  propagated=numpy_of(propagated), nnz=adj._nnz(),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_graph_attention_network():
    ref, got = compare_program(gat, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(got["alpha_sums"], 1, rtol=1e-5)
    assert ref["losses"][-1] < ref["losses"][0]

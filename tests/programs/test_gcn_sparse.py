"""A graph convolutional network in the style of the PyTorch examples' GCN: node features and a
symmetrically normalised adjacency matrix D^-1/2 (A + I) D^-1/2 built as sparse COO tensors
(sparse_coo_tensor from an edge list, eye + sparse, diag(...).to_sparse(), sparse @ dense), two
graph convolutions through torch.mm / torch.spmm with a sparse left operand, log_softmax, NLL on
the training nodes, Adam with weight decay. The graph, features and labels come from NumPy."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

NODES, FEATURES, CLASSES = 40, 12, 3


def make_graph(seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, NODES)
    features = (rng.random((NODES, FEATURES)) < 0.3).astype(np.float32)
    features[:, labels] += 1  # a feature that tells the class
    edges = rng.integers(0, NODES, (2, 90))
    same = labels[edges[0]] == labels[edges[1]]
    return features, labels, edges[:, same | (rng.random(90) < 0.2)].astype(np.int32)


def gcn(torch, init=None, epochs=30):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class GraphConv(nn.Module):
        def __init__(self, input_dim, output_dim):
            super().__init__()
            self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
            nn.init.xavier_normal_(self.kernel)
            self.bias = nn.Parameter(torch.Tensor(output_dim))
            nn.init.zeros_(self.bias)

        def forward(self, x, adj):
            return torch.spmm(adj, torch.mm(x, self.kernel)) + self.bias

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.gc1 = GraphConv(FEATURES, 16)
            self.gc2 = GraphConv(16, CLASSES)

        def forward(self, x, adj):
            return F.log_softmax(self.gc2(F.relu(self.gc1(x, adj)), adj), dim=1)

    features_np, labels_np, edges = make_graph()
    features = torch.FloatTensor(features_np)
    scale = 1 / torch.sum(features, dim=1)
    scale[scale == float("inf")] = 0
    features = (torch.diag(scale).to_sparse() @ features).to_sparse()
    adj = torch.sparse_coo_tensor(edges, torch.ones(edges.shape[1]), (NODES, NODES), dtype=torch.int64)
    adj = torch.eye(NODES) + adj
    degree = torch.sqrt(1 / torch.sum(adj, dim=1))
    degree[degree == float("inf")] = 0
    degree = torch.diag(degree).to_sparse()
    adj = (degree @ adj @ degree).to_sparse()
    labels = torch.LongTensor(labels_np)
    train = torch.from_numpy(np.arange(0, NODES, 2))

    model = GCN()
    result = {"adj_nnz": adj.coalesce().values().shape[0], "adj": numpy_of(adj.to_dense())}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    criterion = nn.NLLLoss()
    losses = []
    for _ in range(epochs):
        model.train()
        optimizer.zero_grad()
        loss = criterion(model(features, adj)[train], labels[train])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(features, adj)
    result.update(losses=losses, out=numpy_of(out), accuracy=(out.argmax(1) == labels).float().mean().item(),
                  grads={k: numpy_of(v.grad) for k, v in model.named_parameters()})
    return result


def test_gcn_on_a_sparse_normalised_adjacency():
    ref, got = compare_program(gcn)
    assert ref["losses"][-1] < 0.5 * ref["losses"][0] and ref["accuracy"] > 0.6  # it learns (chance: 1/3)
    assert ref["adj_nnz"] == got["adj_nnz"]

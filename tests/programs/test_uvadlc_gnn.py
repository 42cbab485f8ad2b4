"""Phillip Lippe's UvA deep-learning tutorial 7 ("Graph Neural Networks") as written, PyTorch
Geometric and Lightning left out: the GCNLayer (num_neighbours by adj_matrix.sum(dim=-1,
keepdims=True), torch.bmm of the adjacency and the projected features) and the GATLayer (messages
viewed per head, edges from adj_matrix.nonzero(as_tuple=False), torch.index_select(input=...,
index=..., dim=0) of both ends, attention logits by torch.einsum('bhc,hc->bh'), a matrix made by
new_zeros(adj_matrix.shape + (heads,)).fill_(-9e15) and filled through a boolean mask of
adj_matrix[..., None].repeat(1, 1, 1, heads) == 1, softmax over neighbours, einsum('bijh,bjhc->bihc'))
run on the tutorial's 4-node example with weights set through .data and printed; then the
node-level experiment (GNNModel of layers from gnn_layer_by_name with ReLU(inplace=True) and
Dropout, the MLP baseline, NodeLevelGNN's masked CrossEntropyLoss and accuracy, SGD with momentum
and weight decay) on a local graph of the Cora kind, where geom_nn's GCNConv/GATConv are the
tutorial's own layers on a dense adjacency, and the graph-level model (a dropout and a Linear head
over mean-pooled node features, BCEWithLogitsLoss, AdamW) on a batch of small graphs. Seeds are
torch.manual_seed in both libraries, so the initial weights and the dropout masks agree."""
import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def layers(torch):
    nn = torch.nn
    F = nn.functional

    class MessagePassing(nn.Module):
        """Stands in for geom_nn.MessagePassing: the layers that take the graph as a second input."""

    class GCNLayer(MessagePassing):

        def __init__(self, c_in, c_out):
            super().__init__()
            self.projection = nn.Linear(c_in, c_out)

        def forward(self, node_feats, adj_matrix):
            """
            Inputs:
                node_feats - Tensor with node features of shape [batch_size, num_nodes, c_in]
                adj_matrix - Batch of adjacency matrices of the graph. If there is an edge from i to j, adj_matrix[b,i,j]=1 else 0.
                             Supports directed edges by non-symmetric matrices. Assumes to already have added the identity connections.
                             Shape: [batch_size, num_nodes, num_nodes]
            """
            # Num neighbours = number of incoming edges
            num_neighbours = adj_matrix.sum(dim=-1, keepdims=True)
            node_feats = self.projection(node_feats)
            node_feats = torch.bmm(adj_matrix, node_feats)
            node_feats = node_feats / num_neighbours
            return node_feats

    class GATLayer(MessagePassing):

        def __init__(self, c_in, c_out, num_heads=1, concat_heads=True, alpha=0.2):
            super().__init__()
            self.num_heads = num_heads
            self.concat_heads = concat_heads
            if self.concat_heads:
                assert c_out % num_heads == 0, "Number of output features must be a multiple of the count of heads."
                c_out = c_out // num_heads

            # Sub-modules and parameters needed in the layer
            self.projection = nn.Linear(c_in, c_out * num_heads)
            self.a = nn.Parameter(torch.Tensor(num_heads, 2 * c_out))  # One per head
            self.leakyrelu = nn.LeakyReLU(alpha)

            # Initialization from the original implementation
            nn.init.xavier_uniform_(self.projection.weight.data, gain=1.414)
            nn.init.xavier_uniform_(self.a.data, gain=1.414)

        def forward(self, node_feats, adj_matrix, print_attn_probs=False):
            batch_size, num_nodes = node_feats.size(0), node_feats.size(1)

            # Apply linear layer and sort nodes by head
            node_feats = self.projection(node_feats)
            node_feats = node_feats.view(batch_size, num_nodes, self.num_heads, -1)

            # We need to calculate the attention logits for every edge in the adjacency matrix
            # Doing this on all possible combinations of nodes is very expensive
            # => Create a tensor of [W*h_i||W*h_j] with i and j being the indices of all edges
            edges = adj_matrix.nonzero(as_tuple=False)  # Returns indices where the adjacency matrix is not 0 => edges
            node_feats_flat = node_feats.view(batch_size * num_nodes, self.num_heads, -1)
            edge_indices_row = edges[:, 0] * batch_size + edges[:, 1]
            edge_indices_col = edges[:, 0] * batch_size + edges[:, 2]
            a_input = torch.cat([
                torch.index_select(input=node_feats_flat, index=edge_indices_row, dim=0),
                torch.index_select(input=node_feats_flat, index=edge_indices_col, dim=0)
            ], dim=-1)  # Index select returns a tensor with node_feats_flat being indexed at the desired positions along dim=0

            # Calculate attention MLP output (independent for each head)
            attn_logits = torch.einsum('bhc,hc->bh', a_input, self.a)
            attn_logits = self.leakyrelu(attn_logits)

            # Map list of attention values back into a matrix
            attn_matrix = attn_logits.new_zeros(adj_matrix.shape + (self.num_heads,)).fill_(-9e15)
            attn_matrix[adj_matrix[..., None].repeat(1, 1, 1, self.num_heads) == 1] = attn_logits.reshape(-1)

            # Weighted average of attention
            attn_probs = F.softmax(attn_matrix, dim=2)
            if print_attn_probs:
                print("Attention probs\n", attn_probs.permute(0, 3, 1, 2))
            node_feats = torch.einsum('bijh,bjhc->bihc', attn_probs, node_feats)

            # If heads should be concatenated, we can do this by reshaping. Otherwise, take mean
            if self.concat_heads:
                node_feats = node_feats.reshape(batch_size, num_nodes, -1)
            else:
                node_feats = node_feats.mean(dim=2)

            return node_feats

    return MessagePassing, GCNLayer, GATLayer


def example_graph(torch, init=None):
    """The tutorial's cells on its 4-node graph, printed."""
    MessagePassing, GCNLayer, GATLayer = layers(torch)
    with captured_run(torch, 42) as out:
        node_feats = torch.arange(8, dtype=torch.float32).view(1, 4, 2)
        adj_matrix = torch.Tensor([[[1, 1, 0, 0],
                                    [1, 1, 1, 1],
                                    [0, 1, 1, 1],
                                    [0, 1, 1, 1]]])

        print("Node features:\n", node_feats)
        print("\nAdjacency matrix:\n", adj_matrix)

        layer = GCNLayer(c_in=2, c_out=2)
        layer.projection.weight.data = torch.Tensor([[1., 0.], [0., 1.]])
        layer.projection.bias.data = torch.Tensor([0., 0.])

        with torch.no_grad():
            out_feats = layer(node_feats, adj_matrix)

        print("Adjacency matrix", adj_matrix)
        print("Input features", node_feats)
        print("Output features", out_feats)

        layer = GATLayer(2, 2, num_heads=2)
        layer.projection.weight.data = torch.Tensor([[1., 0.], [0., 1.]])
        layer.projection.bias.data = torch.Tensor([0., 0.])
        layer.a.data = torch.Tensor([[-0.2, 0.3], [0.1, -0.1]])

        with torch.no_grad():
            out_feats = layer(node_feats, adj_matrix, print_attn_probs=True)

        print("Adjacency matrix", adj_matrix)
        print("Input features", node_feats)
        print("Output features", out_feats)
    return {"printed": printed_lines(out), "out_feats": numpy_of(out_feats)}


def make_graph(num_nodes, num_feats, num_classes, seed):
    """A Cora-like graph: bag-of-words features that lean on the class, edges mostly within a class,
    symmetric, with self-connections; train/val/test masks over the nodes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, num_classes, num_nodes)
    x = (rng.random((num_nodes, num_feats)) < 0.1 + 0.3 * (np.arange(num_feats) % num_classes == y[:, None]))
    same = y[:, None] == y[None, :]
    adj = np.triu(rng.random((num_nodes, num_nodes)) < np.where(same, 0.25, 0.03), 1)
    adj = (adj | adj.T | np.eye(num_nodes, dtype=bool)).astype(np.float32)
    split = rng.permutation(num_nodes)
    masks = [np.isin(np.arange(num_nodes), split[a:b]) for a, b in ((0, num_nodes // 2),
                                                                    (num_nodes // 2, 3 * num_nodes // 4),
                                                                    (3 * num_nodes // 4, num_nodes))]
    return x.astype(np.float32), y, adj, masks


def node_level(torch, init=None, model_name="GNN", layer_name="GCN", epochs=12):
    nn = torch.nn
    optim = torch.optim
    MessagePassing, GCNLayer, GATLayer = layers(torch)
    gnn_layer_by_name = {
        "GCN": lambda in_channels, out_channels, **kwargs: GCNLayer(in_channels, out_channels, **kwargs),
        "GAT": lambda in_channels, out_channels, **kwargs: GATLayer(in_channels, out_channels, **kwargs),
    }

    class GNNModel(nn.Module):

        def __init__(self, c_in, c_hidden, c_out, num_layers=2, layer_name="GCN", dp_rate=0.1, **kwargs):
            super().__init__()
            gnn_layer = gnn_layer_by_name[layer_name]

            layers = []
            in_channels, out_channels = c_in, c_hidden
            for l_idx in range(num_layers - 1):
                layers += [
                    gnn_layer(in_channels=in_channels,
                              out_channels=out_channels,
                              **kwargs),
                    nn.ReLU(inplace=True),
                    nn.Dropout(dp_rate)
                ]
                in_channels = c_hidden
            layers += [gnn_layer(in_channels=in_channels,
                                 out_channels=c_out,
                                 **kwargs)]
            self.layers = nn.ModuleList(layers)

        def forward(self, x, edge_index):
            for l in self.layers:
                # For graph layers, we need to add the "edge_index" tensor as additional input
                if isinstance(l, MessagePassing):
                    x = l(x, edge_index)
                else:
                    x = l(x)
            return x

    class MLPModel(nn.Module):

        def __init__(self, c_in, c_hidden, c_out, num_layers=2, dp_rate=0.1):
            super().__init__()
            layers = []
            in_channels, out_channels = c_in, c_hidden
            for l_idx in range(num_layers - 1):
                layers += [
                    nn.Linear(in_channels, out_channels),
                    nn.ReLU(inplace=True),
                    nn.Dropout(dp_rate)
                ]
                in_channels = c_hidden
            layers += [nn.Linear(in_channels, c_out)]
            self.layers = nn.Sequential(*layers)

        def forward(self, x, *args, **kwargs):
            return self.layers(x)

    class NodeLevelGNN(nn.Module):
        """The LightningModule's forward, configure_optimizers and steps (Lightning left out)."""

        def __init__(self, model_name, **model_kwargs):
            super().__init__()
            if model_name == "MLP":
                self.model = MLPModel(**model_kwargs)
            else:
                self.model = GNNModel(**model_kwargs)
            self.loss_module = nn.CrossEntropyLoss()

        def forward(self, data, mode="train"):
            x, edge_index = data.x, data.edge_index
            x = self.model(x, edge_index)

            # Only calculate the loss on the nodes corresponding to the mask
            if mode == "train":
                mask = data.train_mask
            elif mode == "val":
                mask = data.val_mask
            elif mode == "test":
                mask = data.test_mask
            else:
                assert False, "Unknown forward mode: %s" % mode

            loss = self.loss_module(x[mask], data.y[mask])
            acc = (x[mask].argmax(dim=-1) == data.y[mask]).sum().float() / mask.sum()
            return loss, acc

        def configure_optimizers(self):
            # We use SGD here, but Adam works as well
            optimizer = optim.SGD(self.parameters(), lr=0.1, momentum=0.9, weight_decay=2e-3)
            return optimizer

    class Data:
        """torch_geometric.data.Data's attributes as the steps read them (one graph, a batch of one)."""

    x, y, adj, masks = make_graph(30, 12, 4, seed=7)
    data = Data()
    # a batch of one graph: the layers take [1, N, C] features, the masks and labels are [1, N]
    data.x, data.y = torch.tensor(x)[None], torch.tensor(y)[None]
    data.edge_index = torch.tensor(adj)[None]
    data.train_mask, data.val_mask, data.test_mask = (torch.tensor(m)[None] for m in masks)

    torch.manual_seed(42)
    kwargs = dict(c_in=12, c_hidden=16, c_out=4, dp_rate=0.1)
    if model_name != "MLP":
        kwargs["layer_name"] = layer_name
        if layer_name == "GAT":
            kwargs["num_heads"] = 2
    model = NodeLevelGNN(model_name=model_name, **kwargs)
    init_state = {k: numpy_of(v) for k, v in model.state_dict().items()}
    optimizer = model.configure_optimizers()
    losses, accs = [], []
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        loss, acc = model(data, mode="train")
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        accs.append(acc.item())
        model.eval()
        with torch.no_grad():
            _, val_acc = model(data, mode="val")
    with torch.no_grad():
        _, test_acc = model(data, mode="test")
    return {"init": init_state, "losses": losses, "train_acc": accs, "val_acc": val_acc.item(),
            "test_acc": test_acc.item(), "state": {k: numpy_of(v) for k, v in model.state_dict().items()}}


def graph_level(torch, init=None, layer_name="GraphConv", epochs=8):
    """GraphGNNModel / GraphLevelGNN: node embeddings, mean over each graph's nodes as
    geom_nn.global_mean_pool, a dropout and a Linear head, BCEWithLogitsLoss on x.squeeze(dim=-1)
    against data.y.float(), accuracy from (x > 0).float(); AdamW(lr=1e-2, weight_decay=0.0)."""
    nn = torch.nn
    optim = torch.optim
    MessagePassing, GCNLayer, GATLayer = layers(torch)

    class GraphGNNModel(nn.Module):

        def __init__(self, c_in, c_hidden, c_out, dp_rate_linear=0.5, **kwargs):
            super().__init__()
            self.GNN = nn.ModuleList([GCNLayer(c_in, c_hidden), nn.ReLU(inplace=True), nn.Dropout(0.1),
                                      GCNLayer(c_hidden, c_hidden)])
            self.head = nn.Sequential(
                nn.Dropout(dp_rate_linear),
                nn.Linear(c_hidden, c_out)
            )

        def forward(self, x, adj_matrix):
            for l in self.GNN:
                x = l(x, adj_matrix) if isinstance(l, MessagePassing) else l(x)
            x = x.mean(dim=1)  # Average pooling
            x = self.head(x)
            return x

    class GraphLevelGNN(nn.Module):

        def __init__(self, **model_kwargs):
            super().__init__()
            self.c_out = model_kwargs["c_out"]
            self.model = GraphGNNModel(**model_kwargs)
            self.loss_module = nn.BCEWithLogitsLoss() if model_kwargs["c_out"] == 1 else nn.CrossEntropyLoss()

        def forward(self, x, adj_matrix, y, mode="train"):
            x = self.model(x, adj_matrix)
            x = x.squeeze(dim=-1)

            if self.c_out == 1:
                preds = (x > 0).float()
                y = y.float()
            else:
                preds = x.argmax(dim=-1)
            loss = self.loss_module(x, y)
            acc = (preds == y).sum().float() / preds.shape[0]
            return loss, acc

        def configure_optimizers(self):
            optimizer = optim.AdamW(self.parameters(), lr=1e-2, weight_decay=0.0)  # High lr because of small dataset and small model
            return optimizer

    rng = np.random.default_rng(3)
    graphs = [make_graph(10, 7, 2, seed=int(s)) for s in rng.integers(0, 1000, 16)]
    x = torch.tensor(np.stack([g[0] for g in graphs]))
    adj = torch.tensor(np.stack([g[2] for g in graphs]))
    y = torch.tensor((np.stack([g[2] for g in graphs]).sum(axis=(1, 2)) > 30).astype(np.int64))
    torch.manual_seed(42)
    model_kwargs = dict(c_in=7, c_hidden=16, c_out=1)
    model = GraphLevelGNN(**model_kwargs)
    init_state = {k: numpy_of(v) for k, v in model.state_dict().items()}
    optimizer = model.configure_optimizers()
    losses, accs = [], []
    for epoch in range(epochs):
        model.train()
        for b in range(0, 16, 8):
            optimizer.zero_grad()
            loss, acc = model(x[b:b + 8], adj[b:b + 8], y[b:b + 8])
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            accs.append(acc.item())
    model.eval()
    with torch.no_grad():
        _, test_acc = model(x, adj, y, mode="test")
    return {"init": init_state, "losses": losses, "accs": accs, "test_acc": test_acc.item(),
            "state": {k: numpy_of(v) for k, v in model.state_dict().items()}}


def test_uvadlc_gnn_example_graph():
    ref, got = compare_program(example_graph, rtol=1e-5, atol=1e-6)
    assert "Attention probs" in "\n".join(got["printed"])
    np.testing.assert_allclose(got["out_feats"][0, 0], [1.2913, 1.9800], atol=1e-4)


def test_uvadlc_gnn_node_level_gcn():
    compare_program(node_level, model_name="GNN", layer_name="GCN")


def test_uvadlc_gnn_node_level_gat():
    compare_program(node_level, rtol=1e-3, atol=1e-4, model_name="GNN", layer_name="GAT")


def test_uvadlc_gnn_node_level_mlp():
    compare_program(node_level, model_name="MLP")


def test_uvadlc_gnn_graph_level():
    compare_program(graph_level, rtol=1e-3, atol=1e-4)

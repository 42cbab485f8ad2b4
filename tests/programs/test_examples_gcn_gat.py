"""pytorch/examples' gcn/main.py and gat/main.py as published, the Cora download replaced by a
small cora.content / cora.cites pair written here in Cora's format (paper id, 0/1 word features,
class name; cited and citing ids) and read back by np.genfromtxt as load_cora does. GCN: GraphConv
with a torch.Tensor(input_dim, output_dim) kernel drawn by xavier_normal_, torch.mm of sparse
features and torch.spmm of the sparse adjacency, load_cora's features scaled by
torch.diag(1 / row sums).to_sparse() @ features (inf set to 0 by a boolean mask), the adjacency
torch.eye(V) + sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64) normalised
by degree_mat @ adj_mat @ degree_mat, features.to_sparse() and adj_mat.to_sparse(). GAT:
GraphAttentionLayer (W and a from torch.empty(size=...) with xavier_normal_, heads by view and
permute, scores by matmul with slices of `a` and .mT, torch.where(adj_mat > 0, e, -9e16 *
ones_like(e)), softmax, F.dropout with training=self.training, mean or concatenated heads),
torch.accelerator.is_available(). Both: torch.randperm splits, Adam with weight decay, NLLLoss
on index masks, train_iter/test printing every val_every epochs. Seeds as the scripts set them
(both libraries draw PyTorch's CPU streams: xavier draws, randperm, dropout masks), so the printed
logs are compared number by number, the timings taken out."""
import argparse
import re

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines

N_NODES, N_WORDS, CLASSES = 48, 30, ("Neural_Networks", "Theory", "Rule_Learning")


def write_cora(path):
    """A small citation graph in Cora's two files: ids that are not 0..V-1, a word-free paper
    (its feature row sums to 0, as load_cora's inf handling expects), and class names."""
    rng = np.random.default_rng(7)
    ids = rng.choice(np.arange(1000, 100000), N_NODES, replace=False)
    words = (rng.random((N_NODES, N_WORDS)) < 0.2).astype(int)
    words[5] = 0
    labels = rng.integers(0, len(CLASSES), N_NODES)
    path.mkdir(exist_ok=True)
    with open(path / "cora.content", "w") as f:
        for i in range(N_NODES):
            f.write("\t".join([str(ids[i]), *map(str, words[i]), CLASSES[labels[i]]]) + "\n")
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, N_NODES, (3 * N_NODES, 2)) if a != b}
    with open(path / "cora.cites", "w") as f:
        for a, b in sorted(pairs):
            f.write(f"{ids[a]}\t{ids[b]}\n")


def cora_loop(torch):
    """The scripts' train_iter, test and main loop (the same in both), as fit."""
    import time

    def train_iter(epoch, model, optimizer, criterion, input, target, mask_train, mask_val, print_every=10):
        start_t = time.time()
        model.train()
        optimizer.zero_grad()
        output = model(*input)
        loss = criterion(output[mask_train], target[mask_train])
        loss.backward()
        optimizer.step()
        loss_train, acc_train = test(model, criterion, input, target, mask_train)
        loss_val, acc_val = test(model, criterion, input, target, mask_val)
        if epoch % print_every == 0:
            print(f'Epoch: {epoch:04d} ({(time.time() - start_t):.4f}s) loss_train: {loss_train:.4f} '
                  f'acc_train: {acc_train:.4f} loss_val: {loss_val:.4f} acc_val: {acc_val:.4f}')

    def test(model, criterion, input, target, mask):
        model.eval()
        with torch.no_grad():
            output = model(*input)
            output, target = output[mask], target[mask]
            loss = criterion(output, target)
            acc = (output.argmax(dim=1) == target).float().sum() / len(target)
        return loss.item(), acc.item()

    def fit(model, optimizer, input, labels, splits, epochs, val_every):
        """Both scripts' main loop and final test."""
        idx_test, idx_val, idx_train = splits
        criterion = torch.nn.NLLLoss()
        for epoch in range(epochs):
            train_iter(epoch + 1, model, optimizer, criterion, input, labels, idx_train, idx_val, val_every)
        loss_test, acc_test = test(model, criterion, input, labels, idx_test)
        print(f'Test set results: loss {loss_test:.4f} accuracy {acc_test:.4f}')

    return fit


def read_cora(torch, path):
    """What both load_cora functions do first: scaled features, labels, adjacency with self loops."""
    import os
    content_path = os.path.join(path, 'cora.content')
    cites_path = os.path.join(path, 'cora.cites')
    content_tensor = np.genfromtxt(content_path, dtype=np.dtype(str))
    cites_tensor = np.genfromtxt(cites_path, dtype=np.int32)
    features = torch.FloatTensor(content_tensor[:, 1:-1].astype(np.int32))
    scale_vector = torch.sum(features, dim=1)
    scale_vector = 1 / scale_vector
    scale_vector[scale_vector == float('inf')] = 0
    scale_vector = torch.diag(scale_vector).to_sparse()
    features = scale_vector @ features
    classes, labels = np.unique(content_tensor[:, -1], return_inverse=True)
    labels = torch.LongTensor(labels)
    idx = content_tensor[:, 0].astype(np.int32)
    idx_map = {id: pos for pos, id in enumerate(idx)}
    edges = np.array(
        list(map(lambda edge: [idx_map[edge[0]], idx_map[edge[1]]],
                 cites_tensor)), dtype=np.int32)
    V = len(idx)
    E = edges.shape[0]
    adj_mat = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
    adj_mat = torch.eye(V) + adj_mat
    return features, labels, adj_mat


def gcn_main(torch, init=None, path=None, epochs=12, val_every=3, include_bias=True):
    nn, F, Adam = torch.nn, torch.nn.functional, torch.optim.Adam
    fit = cora_loop(torch)

    class GraphConv(nn.Module):
        def __init__(self, input_dim, output_dim, use_bias=False):
            super(GraphConv, self).__init__()
            self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
            nn.init.xavier_normal_(self.kernel)
            self.bias = None
            if use_bias:
                self.bias = nn.Parameter(torch.Tensor(output_dim))
                nn.init.zeros_(self.bias)

        def forward(self, input_tensor, adj_mat):
            support = torch.mm(input_tensor, self.kernel)
            output = torch.spmm(adj_mat, support)
            if self.bias is not None:
                output = output + self.bias
            return output

    class GCN(nn.Module):
        def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
            super(GCN, self).__init__()
            self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
            self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input_tensor, adj_mat):
            x = self.gc1(input_tensor, adj_mat)
            x = F.relu(x)
            x = self.dropout(x)
            x = self.gc2(x, adj_mat)
            return F.log_softmax(x, dim=1)

    def load_cora(path='./cora', device='cpu'):
        features, labels, adj_mat = read_cora(torch, path)
        degree_mat = torch.sum(adj_mat, dim=1)
        degree_mat = torch.sqrt(1 / degree_mat)
        degree_mat[degree_mat == float('inf')] = 0
        degree_mat = torch.diag(degree_mat).to_sparse()
        adj_mat = degree_mat @ adj_mat @ degree_mat
        return features.to_sparse().to(device), labels.to(device), adj_mat.to_sparse().to(device)

    with captured_run(torch, seed=42) as out:
        args = argparse.Namespace(no_cuda=True, no_mps=False, device='cpu', seed=42)  # the --no-cuda run
        use_cuda = not args.no_cuda and torch.cuda.is_available()
        use_mps = not args.no_mps and torch.backends.mps.is_available()
        torch.manual_seed(args.seed)
        if use_cuda:
            device = torch.device('cuda')
        elif use_mps:
            device = torch.device('mps')
        else:
            device = torch.device(args.device)
        print(f'Using {device} device')
        features, labels, adj_mat = load_cora(path=path, device=device)
        idx = torch.randperm(len(labels)).to(device)
        idx_test, idx_val, idx_train = idx[:12], idx[12:20], idx[20:]
        gcn = GCN(features.shape[1], 16, labels.max().item() + 1, include_bias, 0.5).to(device)
        optimizer = Adam(gcn.parameters(), lr=0.01, weight_decay=5e-4)
        fit(gcn, optimizer, (features, adj_mat), labels, (idx_test, idx_val, idx_train), epochs, val_every)
    layouts = [str(t.layout).split(".")[-1] for t in (features, adj_mat)]
    return {"printed": untimed(printed_lines(out)), "layouts": layouts,
            "adj": numpy_of(adj_mat.to_dense()), "features": numpy_of(features.to_dense()),
            "params": {k: numpy_of(v) for k, v in gcn.named_parameters()}}


def gat_main(torch, init=None, path=None, epochs=8, val_every=2, concat_heads=False):
    nn, F, Adam = torch.nn, torch.nn.functional, torch.optim.Adam
    fit = cora_loop(torch)

    class GraphAttentionLayer(nn.Module):
        def __init__(self, in_features: int, out_features: int, n_heads: int, concat: bool = False,
                     dropout: float = 0.4, leaky_relu_slope: float = 0.2):
            super(GraphAttentionLayer, self).__init__()
            self.n_heads = n_heads
            self.concat = concat
            self.dropout = dropout
            if concat:
                self.out_features = out_features
                assert out_features % n_heads == 0
                self.n_hidden = out_features // n_heads
            else:
                self.n_hidden = out_features
            self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
            self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
            self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
            self.softmax = nn.Softmax(dim=1)
            self.reset_parameters()

        def reset_parameters(self):
            nn.init.xavier_normal_(self.W)
            nn.init.xavier_normal_(self.a)

        def _get_attention_scores(self, h_transformed: torch.Tensor):
            source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
            target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])
            e = source_scores + target_scores.mT
            return self.leakyrelu(e)

        def forward(self, h: torch.Tensor, adj_mat: torch.Tensor):
            n_nodes = h.shape[0]
            h_transformed = torch.mm(h, self.W)
            h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
            h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
            e = self._get_attention_scores(h_transformed)
            connectivity_mask = -9e16 * torch.ones_like(e)
            e = torch.where(adj_mat > 0, e, connectivity_mask)
            attention = F.softmax(e, dim=-1)
            attention = F.dropout(attention, self.dropout, training=self.training)
            h_prime = torch.matmul(attention, h_transformed)
            if self.concat:
                h_prime = h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
            else:
                h_prime = h_prime.mean(dim=0)
            return h_prime

    class GAT(nn.Module):
        def __init__(self, in_features, n_hidden, n_heads, num_classes, concat=False, dropout=0.4,
                     leaky_relu_slope=0.2):
            super(GAT, self).__init__()
            self.gat1 = GraphAttentionLayer(in_features=in_features, out_features=n_hidden, n_heads=n_heads,
                                            concat=concat, dropout=dropout, leaky_relu_slope=leaky_relu_slope)
            self.gat2 = GraphAttentionLayer(in_features=n_hidden, out_features=num_classes, n_heads=1,
                                            concat=False, dropout=dropout, leaky_relu_slope=leaky_relu_slope)

        def forward(self, input_tensor: torch.Tensor, adj_mat: torch.Tensor):
            x = self.gat1(input_tensor, adj_mat)
            x = F.elu(x)
            x = self.gat2(x, adj_mat)
            return F.log_softmax(x, dim=1)

    def load_cora(path='./cora', device='cpu'):
        features, labels, adj_mat = read_cora(torch, path)
        return features.to(device), labels.to(device), adj_mat.to(device)

    with captured_run(torch, seed=13) as out:
        args = argparse.Namespace(no_accel=True, seed=13)  # the --no-accel run
        torch.manual_seed(args.seed)
        use_accel = not args.no_accel and torch.accelerator.is_available()
        if use_accel:
            device = torch.accelerator.current_accelerator()
        else:
            device = torch.device('cpu')
        print(f'Using {device} device')
        features, labels, adj_mat = load_cora(path=path, device=device)
        idx = torch.randperm(len(labels)).to(device)
        idx_test, idx_val, idx_train = idx[:12], idx[12:20], idx[20:]
        gat_net = GAT(in_features=features.shape[1], n_hidden=16, n_heads=4,
                      num_classes=labels.max().item() + 1, concat=concat_heads, dropout=0.6,
                      leaky_relu_slope=0.2).to(device)
        optimizer = Adam(gat_net.parameters(), lr=0.005, weight_decay=5e-4)
        fit(gat_net, optimizer, (features, adj_mat), labels, (idx_test, idx_val, idx_train), epochs, val_every)
    return {"printed": untimed(printed_lines(out)), "adj": numpy_of(adj_mat),
            "params": {k: numpy_of(v) for k, v in gat_net.named_parameters()}}


def untimed(lines):
    """The log without its wall-clock seconds, which are each run's own."""
    return type(lines)(re.sub(r"\(\d+\.\d+s\)", "(s)", line) for line in lines)


def test_gcn_example(tmp_path):
    write_cora(tmp_path / "cora")
    ref, got = compare_program(gcn_main, path=tmp_path / "cora")
    assert ref["printed"][0] == "Using cpu device" and len(ref["printed"]) == 6
    assert got["layouts"] == ["sparse_coo", "sparse_coo"]


def test_gcn_example_without_bias(tmp_path):
    write_cora(tmp_path / "cora")
    ref, got = compare_program(gcn_main, path=tmp_path / "cora", epochs=3, val_every=1, include_bias=False)
    assert "gc1.bias" not in got["params"]


def test_gat_example(tmp_path):
    write_cora(tmp_path / "cora")
    ref, got = compare_program(gat_main, path=tmp_path / "cora")
    assert len(ref["printed"]) == 6 and ref["printed"][-1].startswith("Test set results")
    assert got["adj"].dtype == np.float32 and got["adj"].diagonal().min() >= 1


def test_gat_example_concatenated_heads(tmp_path):
    write_cora(tmp_path / "cora")
    compare_program(gat_main, path=tmp_path / "cora", epochs=3, val_every=1, concat_heads=True)

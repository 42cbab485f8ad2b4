"""Recommender models as the much-read repositories write them, on implicit-feedback arrays made
here. Neural collaborative filtering (He et al.; guoyang9/NCF's NeuMF): GMF and MLP towers of
nn.Embedding tables, init.normal_(std=0.01) and xavier_uniform_/kaiming_uniform_(a=1,
nonlinearity='sigmoid'), torch.cat of the towers, BCEWithLogitsLoss with pos_weight against the
rarer positives, Adam, and hit-ratio/NDCG from torch.topk and torch.take. DeepFM
(rixwew/pytorch-fm's FeaturesLinear, FactorizationMachine and FeaturesEmbedding): one shared
nn.Embedding over all fields with offsets from np.cumsum, the second-order term as
(sum**2 - sum of squares), a deep MLP with BatchNorm1d and Dropout(0) on the flattened embeddings.
Wide and deep with nn.EmbeddingBag over multi-hot bags given by flat indices and offsets, the
modes 'sum' (with per_sample_weights), 'mean' and 'max', include_last_offset, padding_idx, and the
functional F.embedding_bag. The sparse=True embeddings with optim.SparseAdam are the one part that
is kept out (minitorch's autograd makes dense gradients only; see the module test)."""
import numpy as np

from prog_helpers import compare_program, numpy_of, split_bias_before_norm, start_from, state_numpy

N_USERS, N_ITEMS = 12, 20


def interactions(seed=0, n=96):
    """(user, item, label) arrays: a quarter of the pairs are positives."""
    rng = np.random.default_rng(seed)
    users = rng.integers(0, N_USERS, n)
    items = rng.integers(0, N_ITEMS, n)
    labels = ((users + items) % 4 == 0).astype(np.float32)
    return users, items, labels


def ncf(torch, init=None, factor_num=8, num_layers=2, dropout=0.0, epochs=3, batch_size=32, top_k=5):
    nn, optim = torch.nn, torch.optim

    class NCF(nn.Module):
        def __init__(self, user_num, item_num, factor_num, num_layers, dropout, model="NeuMF-end"):
            super().__init__()
            self.dropout = dropout
            self.model = model
            self.embed_user_GMF = nn.Embedding(user_num, factor_num)
            self.embed_item_GMF = nn.Embedding(item_num, factor_num)
            self.embed_user_MLP = nn.Embedding(user_num, factor_num * (2 ** (num_layers - 1)))
            self.embed_item_MLP = nn.Embedding(item_num, factor_num * (2 ** (num_layers - 1)))
            MLP_modules = []
            for i in range(num_layers):
                input_size = factor_num * (2 ** (num_layers - i))
                MLP_modules.append(nn.Dropout(p=self.dropout))
                MLP_modules.append(nn.Linear(input_size, input_size // 2))
                MLP_modules.append(nn.ReLU())
            self.MLP_layers = nn.Sequential(*MLP_modules)
            predict_size = factor_num * 2
            self.predict_layer = nn.Linear(predict_size, 1)
            self._init_weight_()

        def _init_weight_(self):
            nn.init.normal_(self.embed_user_GMF.weight, std=0.01)
            nn.init.normal_(self.embed_user_MLP.weight, std=0.01)
            nn.init.normal_(self.embed_item_GMF.weight, std=0.01)
            nn.init.normal_(self.embed_item_MLP.weight, std=0.01)
            for m in self.MLP_layers:
                if isinstance(m, nn.Linear):
                    nn.init.xavier_uniform_(m.weight)
            nn.init.kaiming_uniform_(self.predict_layer.weight, a=1, nonlinearity="sigmoid")
            for m in self.modules():
                if isinstance(m, nn.Linear) and m.bias is not None:
                    m.bias.data.zero_()

        def forward(self, user, item):
            embed_user_GMF = self.embed_user_GMF(user)
            embed_item_GMF = self.embed_item_GMF(item)
            output_GMF = embed_user_GMF * embed_item_GMF
            embed_user_MLP = self.embed_user_MLP(user)
            embed_item_MLP = self.embed_item_MLP(item)
            interaction = torch.cat((embed_user_MLP, embed_item_MLP), -1)
            output_MLP = self.MLP_layers(interaction)
            concat = torch.cat((output_GMF, output_MLP), -1)
            prediction = self.predict_layer(concat)
            return prediction.view(-1)

    torch.manual_seed(0)
    model = NCF(N_USERS, N_ITEMS, factor_num, num_layers, dropout)
    result = {}
    start_from(torch, model, init, result)
    users, items, labels = interactions()
    pos_weight = torch.tensor([(labels == 0).sum() / (labels == 1).sum()])
    loss_function = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(1)
    losses = []
    for epoch in range(epochs):
        model.train()
        order = rng.permutation(len(users))
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            user = torch.from_numpy(users[idx])
            item = torch.from_numpy(items[idx])
            label = torch.from_numpy(labels[idx])
            model.zero_grad()
            prediction = model(user, item)
            loss = loss_function(prediction, label)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())

    # leave-one-out evaluation: every user's scores over all items, the held-out item ranked
    model.eval()
    HR, NDCG, tops = [], [], []
    with torch.no_grad():
        for u in range(N_USERS):
            user = torch.full((N_ITEMS,), u, dtype=torch.long)
            item = torch.arange(N_ITEMS)
            predictions = model(user, item)
            _, indices = torch.topk(predictions, top_k)
            recommends = torch.take(item, indices).cpu().numpy().tolist()
            gt_item = (4 - u % 4) % 4
            HR.append(1 if gt_item in recommends else 0)
            NDCG.append(np.reciprocal(np.log2(recommends.index(gt_item) + 2)) if gt_item in recommends else 0)
            tops.append(recommends)
    result.update(losses=losses, HR=float(np.mean(HR)), NDCG=float(np.mean(NDCG)), tops=np.array(tops),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def deepfm(torch, init=None, embed_dim=4, mlp_dims=(16, 8), dropout=0.0, epochs=4):
    nn = torch.nn
    field_dims = np.array([N_USERS, N_ITEMS, 3, 5], dtype=np.int64)

    class FeaturesLinear(nn.Module):
        def __init__(self, field_dims, output_dim=1):
            super().__init__()
            self.fc = torch.nn.Embedding(sum(field_dims), output_dim)
            self.bias = torch.nn.Parameter(torch.zeros((output_dim,)))
            self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)

        def forward(self, x):
            x = x + x.new_tensor(self.offsets).unsqueeze(0)
            return torch.sum(self.fc(x), dim=1) + self.bias

    class FeaturesEmbedding(nn.Module):
        def __init__(self, field_dims, embed_dim):
            super().__init__()
            self.embedding = torch.nn.Embedding(sum(field_dims), embed_dim)
            self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)
            torch.nn.init.xavier_uniform_(self.embedding.weight.data)

        def forward(self, x):
            x = x + x.new_tensor(self.offsets).unsqueeze(0)
            return self.embedding(x)

    class FactorizationMachine(nn.Module):
        def __init__(self, reduce_sum=True):
            super().__init__()
            self.reduce_sum = reduce_sum

        def forward(self, x):
            square_of_sum = torch.sum(x, dim=1) ** 2
            sum_of_square = torch.sum(x ** 2, dim=1)
            ix = square_of_sum - sum_of_square
            if self.reduce_sum:
                ix = torch.sum(ix, dim=1, keepdim=True)
            return 0.5 * ix

    class MultiLayerPerceptron(nn.Module):
        def __init__(self, input_dim, embed_dims, dropout, output_layer=True):
            super().__init__()
            layers = list()
            for embed_dim in embed_dims:
                layers.append(torch.nn.Linear(input_dim, embed_dim))
                layers.append(torch.nn.BatchNorm1d(embed_dim))
                layers.append(torch.nn.ReLU())
                layers.append(torch.nn.Dropout(p=dropout))
                input_dim = embed_dim
            if output_layer:
                layers.append(torch.nn.Linear(input_dim, 1))
            self.mlp = torch.nn.Sequential(*layers)

        def forward(self, x):
            return self.mlp(x)

    class DeepFactorizationMachineModel(nn.Module):
        def __init__(self, field_dims, embed_dim, mlp_dims, dropout):
            super().__init__()
            self.linear = FeaturesLinear(field_dims)
            self.fm = FactorizationMachine(reduce_sum=True)
            self.embedding = FeaturesEmbedding(field_dims, embed_dim)
            self.embed_output_dim = len(field_dims) * embed_dim
            self.mlp = MultiLayerPerceptron(self.embed_output_dim, mlp_dims, dropout)

        def forward(self, x):
            embed_x = self.embedding(x)
            x = self.linear(x) + self.fm(embed_x) + self.mlp(embed_x.view(-1, self.embed_output_dim))
            return torch.sigmoid(x.squeeze(1))

    torch.manual_seed(0)
    model = DeepFactorizationMachineModel(field_dims, embed_dim, mlp_dims, dropout)
    result = {}
    start_from(torch, model, init, result)
    users, items, labels = interactions(seed=2, n=64)
    rng = np.random.default_rng(3)
    fields = np.stack([users, items, rng.integers(0, 3, 64), rng.integers(0, 5, 64)], axis=1)
    criterion = torch.nn.BCELoss()
    optimizer = torch.optim.Adam(params=model.parameters(), lr=0.01, weight_decay=1e-6)
    losses = []
    for epoch in range(epochs):
        model.train()
        for start in range(0, 64, 16):
            fields_b = torch.from_numpy(fields[start:start + 16])
            target = torch.from_numpy(labels[start:start + 16])
            y = model(fields_b)
            loss = criterion(y, target.float())
            model.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    with torch.no_grad():
        train_scores = model(torch.from_numpy(fields))
        model.eval()
        scores = model(torch.from_numpy(fields))
    # the eval-mode scores depend on the noisy biases (split_bias_before_norm): compared loosely
    state, noisy = split_bias_before_norm(state_numpy(model), ("mlp.mlp.0.bias", "mlp.mlp.4.bias"))
    result.update(losses=losses, train_scores=numpy_of(train_scores), state=state,
                  own={"scores": numpy_of(scores), "noisy": noisy})
    return result


def multi_hot_bags(rng, n, vocab, max_len):
    """n bags of 1..max_len ids each, as the flat ids and the offsets of each bag's start."""
    lengths = rng.integers(1, max_len + 1, n)
    ids = rng.integers(0, vocab, lengths.sum())
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return ids, offsets, lengths


def wide_and_deep(torch, init=None, steps=6, vocab=15, dim=6):
    nn, F = torch.nn, torch.nn.functional

    class WideAndDeep(nn.Module):
        def __init__(self, num_dense, vocab, dim):
            super().__init__()
            self.wide = nn.EmbeddingBag(vocab, 1, mode="sum")
            self.genres = nn.EmbeddingBag(vocab, dim, mode="mean")
            self.tags = nn.EmbeddingBag(vocab, dim, mode="max", padding_idx=0)
            self.history = nn.EmbeddingBag(vocab, dim, mode="sum", include_last_offset=True)
            self.deep = nn.Sequential(
                nn.Linear(3 * dim + num_dense, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))
            self.bias = nn.Parameter(torch.zeros(1))

        def forward(self, dense, wide_ids, wide_offsets, wide_weights, genre_ids, genre_offsets, tag_bags,
                    hist_ids, hist_offsets):
            wide = self.wide(wide_ids, wide_offsets, per_sample_weights=wide_weights)
            deep_in = torch.cat([self.genres(genre_ids, genre_offsets), self.tags(tag_bags),
                                 self.history(hist_ids, hist_offsets), dense], dim=1)
            return (wide + self.deep(deep_in) + self.bias).squeeze(1)

    torch.manual_seed(0)
    model = WideAndDeep(3, vocab, dim)
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(5)
    n = 24
    dense = rng.standard_normal((n, 3)).astype(np.float32)
    wide_ids, wide_offsets, wide_len = multi_hot_bags(rng, n, vocab, 4)
    wide_weights = rng.uniform(0.5, 2.0, len(wide_ids)).astype(np.float32)
    genre_ids, genre_offsets, _ = multi_hot_bags(rng, n, vocab, 3)
    tag_bags = rng.integers(0, vocab, (n, 3))  # a 2-D input is n bags of 3; id 0 is padding
    tag_bags[::5, :] = 0  # bags of padding only: max over nothing gives zeros
    hist_ids, hist_offsets, _ = multi_hot_bags(rng, n, vocab, 5)
    hist_offsets = np.append(hist_offsets, len(hist_ids))
    labels = (dense[:, 0] + (wide_len > 2) > 0.5).astype(np.float32)
    inputs = [torch.from_numpy(a) for a in (dense, wide_ids, wide_offsets, wide_weights, genre_ids,
                                             genre_offsets, tag_bags, hist_ids, hist_offsets)]
    target = torch.from_numpy(labels)
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(2.0))
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(*inputs), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    grads = {k: numpy_of(p.grad) for k, p in model.named_parameters()}
    # the functional form with the module's weights, and per-sample weights that take a gradient
    psw = torch.tensor(wide_weights, requires_grad=True)
    bag = F.embedding_bag(inputs[1], model.genres.weight, inputs[2], mode="sum", per_sample_weights=psw)
    bag.pow(2).sum().backward()
    result.update(losses=losses, grads=grads, bag=numpy_of(bag), psw_grad=numpy_of(psw.grad),
                  tags=numpy_of(model.tags(inputs[6])))
    return result


def test_ncf_neumf_with_pos_weight():
    ref, got = compare_program(ncf)
    assert ref["losses"][-1] < ref["losses"][0]
    assert ref["tops"].shape == (N_USERS, 5)


def test_deepfm():
    ref, got = compare_program(deepfm, rtol=1e-3, atol=1e-5)
    assert ref["losses"][-1] < ref["losses"][0]
    np.testing.assert_allclose(got["own"]["scores"], ref["own"]["scores"], rtol=3e-2, atol=1e-3)


def test_wide_and_deep_embedding_bags():
    ref, got = compare_program(wide_and_deep)
    assert ref["losses"][-1] < ref["losses"][0]
    np.testing.assert_array_equal(ref["tags"][::5], 0)  # all-padding bags
    assert np.abs(ref["psw_grad"]).min() > 0

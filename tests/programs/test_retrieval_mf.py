"""Two more recommender styles. Matrix factorisation with biases as fastai's collaborative-filtering
chapter writes it in plain PyTorch (DotProductBias: nn.Embedding factors and biases, the
dot product as (users * movies).sum(dim=1, keepdim=True), sigmoid_range through torch.sigmoid,
MSELoss, Adam with weight_decay, a random train/valid split with torch.randperm, and the most
similar movies by F.cosine_similarity / argsort). A two-tower retrieval model with in-batch
negatives (the YouTube/TFRS recipe in PyTorch): user and item towers over embeddings with
EmbeddingBag history features, F.normalize, a temperature-scaled u @ v.T logits matrix, the
log-Q correction that subtracts torch.log of each item's sampling probability, cross_entropy
against torch.arange(batch), and recall@k over the whole catalogue with torch.topk and
the catalogue coverage with torch.isin."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

N_USERS, N_ITEMS = 30, 40


def ratings(seed=0, n=400):
    rng = np.random.default_rng(seed)
    u_f, i_f = rng.standard_normal((N_USERS, 3)), rng.standard_normal((N_ITEMS, 3))
    users = rng.integers(0, N_USERS, n)
    items = rng.integers(0, N_ITEMS, n)
    r = np.clip(3 + (u_f[users] * i_f[items]).sum(1) + 0.3 * rng.standard_normal(n), 0.5, 5.0)
    return users, items, r.astype(np.float32)


def dot_product_bias(torch, init=None, n_factors=5, epochs=5, bs=64):
    nn, F = torch.nn, torch.nn.functional

    def sigmoid_range(x, low, high):
        return torch.sigmoid(x) * (high - low) + low

    class DotProductBias(nn.Module):
        def __init__(self, n_users, n_movies, n_factors, y_range=(0, 5.5)):
            super().__init__()
            self.user_factors = nn.Embedding(n_users, n_factors)
            self.user_bias = nn.Embedding(n_users, 1)
            self.movie_factors = nn.Embedding(n_movies, n_factors)
            self.movie_bias = nn.Embedding(n_movies, 1)
            self.y_range = y_range

        def forward(self, x):
            users = self.user_factors(x[:, 0])
            movies = self.movie_factors(x[:, 1])
            res = (users * movies).sum(dim=1, keepdim=True)
            res += self.user_bias(x[:, 0]) + self.movie_bias(x[:, 1])
            return sigmoid_range(res, *self.y_range)

    torch.manual_seed(42)
    model = DotProductBias(N_USERS, N_ITEMS, n_factors)
    result = {}
    start_from(torch, model, init, result)
    users, items, r = ratings()
    x_all = torch.tensor(np.stack([users, items], axis=1))
    y_all = torch.tensor(r).unsqueeze(1)
    idx = torch.randperm(len(r))
    train_idx, valid_idx = idx[:320], idx[320:]
    loss_func = nn.MSELoss()
    opt = torch.optim.Adam(model.parameters(), lr=5e-2, weight_decay=0.1 / 64)
    train_losses, valid_losses = [], []
    for epoch in range(epochs):
        model.train()
        for start in range(0, len(train_idx), bs):
            b = train_idx[start:start + bs]
            loss = loss_func(model(x_all[b]), y_all[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            train_losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            valid_losses.append(loss_func(model(x_all[valid_idx]), y_all[valid_idx]).item())
    movie_factors = model.movie_factors.weight
    distances = F.cosine_similarity(movie_factors, movie_factors[3][None])
    similar = distances.argsort(descending=True)[1:6]
    movie_bias = model.movie_bias.weight.squeeze()
    result.update(split=numpy_of(idx), train_losses=train_losses, valid_losses=valid_losses,
                  similar=numpy_of(similar), top_bias=numpy_of(movie_bias.argsort(descending=True)[:5]),
                  factors=numpy_of(movie_factors))
    return result


def two_tower(torch, init=None, dim=8, batch=16, steps=12, temperature=0.1, k=5):
    nn, F = torch.nn, torch.nn.functional
    users, items, r = ratings(seed=1, n=300)
    keep = r > 3.0  # implicit feedback: the good ratings are the positives
    users, items = users[keep], items[keep]
    freq = np.bincount(items, minlength=N_ITEMS) + 1.0
    item_prob = torch.tensor(freq / freq.sum(), dtype=torch.float32)
    rng = np.random.default_rng(2)
    history = [rng.integers(0, N_ITEMS, rng.integers(1, 5)) for _ in range(N_USERS)]
    hist_ids = torch.tensor(np.concatenate(history))
    hist_offsets = torch.tensor(np.cumsum([0] + [len(h) for h in history[:-1]]))

    class UserTower(nn.Module):
        def __init__(self):
            super().__init__()
            self.user_emb = nn.Embedding(N_USERS, dim)
            self.history = nn.EmbeddingBag(N_ITEMS, dim, mode="mean")
            self.mlp = nn.Sequential(nn.Linear(2 * dim, 16), nn.ReLU(), nn.Linear(16, dim))

        def forward(self, user_ids):
            hist = self.history(hist_ids, hist_offsets)[user_ids]
            return F.normalize(self.mlp(torch.cat([self.user_emb(user_ids), hist], dim=-1)), dim=-1)

    class ItemTower(nn.Module):
        def __init__(self):
            super().__init__()
            self.item_emb = nn.Embedding(N_ITEMS, dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, dim))

        def forward(self, item_ids):
            return F.normalize(self.mlp(self.item_emb(item_ids)), dim=-1)

    torch.manual_seed(0)
    user_tower, item_tower = UserTower(), ItemTower()
    result = {}
    start_from(torch, {"user": user_tower, "item": item_tower}, init, result)
    params = list(user_tower.parameters()) + list(item_tower.parameters())
    optimizer = torch.optim.AdamW(params, lr=1e-2)
    losses = []
    for step in range(steps):
        sel = rng.choice(len(users), batch, replace=False)
        u, i = torch.tensor(users[sel]), torch.tensor(items[sel])
        logits = user_tower(u) @ item_tower(i).T / temperature
        logits = logits - torch.log(item_prob[i])[None, :]  # log-Q correction of popular items
        loss = F.cross_entropy(logits, torch.arange(batch))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        all_items = item_tower(torch.arange(N_ITEMS))
        scores = user_tower(torch.arange(N_USERS)) @ all_items.T
        top = torch.topk(scores, k, dim=1).indices
        hit = (top[torch.tensor(users)] == torch.tensor(items)[:, None]).any(dim=1)
        covered = torch.isin(torch.arange(N_ITEMS), top.flatten())  # catalogue coverage of the top-k
    result.update(losses=losses, scores=numpy_of(scores), top=numpy_of(top), recall=hit.float().mean().item(),
                  coverage=int(covered.sum()))
    return result


def test_dot_product_bias():
    ref, got = compare_program(dot_product_bias, rtol=1e-3, atol=1e-5)
    assert ref["valid_losses"][-1] < ref["valid_losses"][0]
    assert sorted(ref["split"].tolist()) == list(range(400))


def test_two_tower_in_batch_negatives():
    ref, got = compare_program(two_tower, rtol=1e-3, atol=1e-5)
    assert ref["losses"][-1] < ref["losses"][0]
    assert ref["top"].shape == (N_USERS, 5)

"""A recommender as PyTorch's docs suggest for large embedding tables: user and item embeddings
with sparse=True (their gradients touch only the rows a batch looks up), an EmbeddingBag of each
user's history tags (mean, sparse, padding_idx), a small MLP over the concatenation; SparseAdam
steps the sparse tables and Adam the dense rest, with gradient clipping on the dense part, a
zero_grad that keeps emptied sparse grads every other step, and a per-batch BCE-with-logits loss.
The per-step losses, the sparse gradients' rows, the final weights and the moments SparseAdam keeps
match PyTorch's."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

USERS, ITEMS, TAGS, DIM = 12, 20, 9, 4
PAD = 0  # tag 0 pads the histories


def recommender(torch, init=None, steps=12, batch=6):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class Recommender(nn.Module):
        def __init__(self):
            super().__init__()
            self.users = nn.Embedding(USERS, DIM, sparse=True)
            self.items = nn.Embedding(ITEMS, DIM, sparse=True, max_norm=2.0)
            self.tags = nn.EmbeddingBag(TAGS, DIM, mode="mean", sparse=True, padding_idx=PAD)
            self.mlp = nn.Sequential(nn.Linear(3 * DIM, 8), nn.ReLU(), nn.Linear(8, 1))

        def forward(self, users, items, tags):
            u, v, t = self.users(users), self.items(items), self.tags(tags)
            return self.mlp(torch.cat([u * v, u + t, v], dim=1)).squeeze(1) + (u * v).sum(1)

    model = Recommender()
    result = {}
    start_from(torch, model, init, result)
    sparse_params = [model.users.weight, model.items.weight, model.tags.weight]
    dense_params = list(model.mlp.parameters())
    sparse_opt = torch.optim.SparseAdam(sparse_params, lr=0.05)
    dense_opt = torch.optim.Adam(dense_params, lr=0.01)
    rng = np.random.default_rng(4)
    batches = [(rng.integers(0, USERS, batch), rng.integers(0, ITEMS, batch),
                rng.integers(0, TAGS, (batch, 3))) for _ in range(3)]  # tags with repeats and padding
    losses, rows = [], []
    for step in range(steps):
        u, i, t = batches[step % 3]
        users, items, tags = torch.tensor(u), torch.tensor(i), torch.tensor(t)
        clicked = torch.tensor((u + i) % 2, dtype=torch.float32)  # a pattern the model can learn
        for opt in (sparse_opt, dense_opt):
            opt.zero_grad(set_to_none=step % 2 == 0)
        loss = F.binary_cross_entropy_with_logits(model(users, items, tags), clicked)
        loss.backward()
        rows.append([numpy_of(p.grad.coalesce().indices()) for p in sparse_params])
        torch.nn.utils.clip_grad_norm_(dense_params, 1.0)
        sparse_opt.step()
        dense_opt.step()
        losses.append(loss.item())
    moments = [numpy_of(sparse_opt.state[p]["exp_avg_sq"]) for p in sparse_params]
    result.update(losses=losses, rows=rows, moments=moments, state={k: numpy_of(v) for k, v in
                                                                    model.state_dict().items()})
    return result


def test_sparse_embeddings_with_sparse_adam():
    ref, got = compare_program(recommender)
    assert np.mean(ref["losses"][-3:]) < np.mean(ref["losses"][:3])

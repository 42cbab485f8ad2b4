"""juho-lee/set_transformer: modules.py's MAB, SAB, ISAB and PMA as published (heads split with
Q.split(dim_split, 2) and concatenated along the batch with torch.cat(..., 0), A = torch.softmax(
Q_.bmm(K_.transpose(1, 2)) / math.sqrt(dim_V), 2), the heads put back by
torch.cat((Q_ + A.bmm(V_)).split(Q.size(0), 0), 2), LayerNorms looked up by getattr(self, 'ln0',
None), nn.Parameter(torch.Tensor(1, num_inds, dim_out)) with xavier_uniform_), models.py's DeepSet
and SetTransformer, and the README's max_regression_demo notebook: SmallDeepSet (max pooling by
x.max(dim=1)[0]) and SmallSetTransformer trained with Adam and nn.L1Loss on sets of random lengths
(its gen_data on a seeded NumPy stream), on the CPU instead of .cuda()."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def set_transformer_modules(torch):
    """modules.py and models.py as published, for the library `torch`."""
    nn = torch.nn
    F = torch.nn.functional

    class MAB(nn.Module):
        def __init__(self, dim_Q, dim_K, dim_V, num_heads, ln=False):
            super(MAB, self).__init__()
            self.dim_V = dim_V
            self.num_heads = num_heads
            self.fc_q = nn.Linear(dim_Q, dim_V)
            self.fc_k = nn.Linear(dim_K, dim_V)
            self.fc_v = nn.Linear(dim_K, dim_V)
            if ln:
                self.ln0 = nn.LayerNorm(dim_V)
                self.ln1 = nn.LayerNorm(dim_V)
            self.fc_o = nn.Linear(dim_V, dim_V)

        def forward(self, Q, K):
            Q = self.fc_q(Q)
            K, V = self.fc_k(K), self.fc_v(K)

            dim_split = self.dim_V // self.num_heads
            Q_ = torch.cat(Q.split(dim_split, 2), 0)
            K_ = torch.cat(K.split(dim_split, 2), 0)
            V_ = torch.cat(V.split(dim_split, 2), 0)

            A = torch.softmax(Q_.bmm(K_.transpose(1, 2)) / math.sqrt(self.dim_V), 2)
            O = torch.cat((Q_ + A.bmm(V_)).split(Q.size(0), 0), 2)
            O = O if getattr(self, 'ln0', None) is None else self.ln0(O)
            O = O + F.relu(self.fc_o(O))
            O = O if getattr(self, 'ln1', None) is None else self.ln1(O)
            return O

    class SAB(nn.Module):
        def __init__(self, dim_in, dim_out, num_heads, ln=False):
            super(SAB, self).__init__()
            self.mab = MAB(dim_in, dim_in, dim_out, num_heads, ln=ln)

        def forward(self, X):
            return self.mab(X, X)

    class ISAB(nn.Module):
        def __init__(self, dim_in, dim_out, num_heads, num_inds, ln=False):
            super(ISAB, self).__init__()
            self.I = nn.Parameter(torch.Tensor(1, num_inds, dim_out))
            nn.init.xavier_uniform_(self.I)
            self.mab0 = MAB(dim_out, dim_in, dim_out, num_heads, ln=ln)
            self.mab1 = MAB(dim_in, dim_out, dim_out, num_heads, ln=ln)

        def forward(self, X):
            H = self.mab0(self.I.repeat(X.size(0), 1, 1), X)
            return self.mab1(X, H)

    class PMA(nn.Module):
        def __init__(self, dim, num_heads, num_seeds, ln=False):
            super(PMA, self).__init__()
            self.S = nn.Parameter(torch.Tensor(1, num_seeds, dim))
            nn.init.xavier_uniform_(self.S)
            self.mab = MAB(dim, dim, dim, num_heads, ln=ln)

        def forward(self, X):
            return self.mab(self.S.repeat(X.size(0), 1, 1), X)

    class DeepSet(nn.Module):
        def __init__(self, dim_input, num_outputs, dim_output, dim_hidden=128):
            super(DeepSet, self).__init__()
            self.num_outputs = num_outputs
            self.dim_output = dim_output
            self.enc = nn.Sequential(
                nn.Linear(dim_input, dim_hidden),
                nn.ReLU(),
                nn.Linear(dim_hidden, dim_hidden),
                nn.ReLU(),
                nn.Linear(dim_hidden, dim_hidden),
                nn.ReLU(),
                nn.Linear(dim_hidden, dim_hidden))
            self.dec = nn.Sequential(
                nn.Linear(dim_hidden, dim_hidden),
                nn.ReLU(),
                nn.Linear(dim_hidden, dim_hidden),
                nn.ReLU(),
                nn.Linear(dim_hidden, dim_hidden),
                nn.ReLU(),
                nn.Linear(dim_hidden, num_outputs * dim_output))

        def forward(self, X):
            X = self.enc(X).mean(-2)
            X = self.dec(X).reshape(-1, self.num_outputs, self.dim_output)
            return X

    class SetTransformer(nn.Module):
        def __init__(self, dim_input, num_outputs, dim_output,
                     num_inds=32, dim_hidden=128, num_heads=4, ln=False):
            super(SetTransformer, self).__init__()
            self.enc = nn.Sequential(
                ISAB(dim_input, dim_hidden, num_heads, num_inds, ln=ln),
                ISAB(dim_hidden, dim_hidden, num_heads, num_inds, ln=ln))
            self.dec = nn.Sequential(
                PMA(dim_hidden, num_heads, num_outputs, ln=ln),
                SAB(dim_hidden, dim_hidden, num_heads, ln=ln),
                SAB(dim_hidden, dim_hidden, num_heads, ln=ln),
                nn.Linear(dim_hidden, dim_output))

        def forward(self, X):
            return self.dec(self.enc(X))

    return MAB, SAB, ISAB, PMA, DeepSet, SetTransformer


def max_regression_program(torch, init=None, steps=6):
    """The max_regression_demo notebook, a few steps of each model, and models.py's two models once."""
    nn = torch.nn
    MAB, SAB, ISAB, PMA, DeepSet, SetTransformer = set_transformer_modules(torch)

    class SmallDeepSet(nn.Module):
        def __init__(self, pool="max"):
            super().__init__()
            self.enc = nn.Sequential(nn.Linear(in_features=1, out_features=64), nn.ReLU(),
                                     nn.Linear(in_features=64, out_features=64))
            self.dec = nn.Sequential(nn.Linear(in_features=64, out_features=64), nn.ReLU(),
                                     nn.Linear(in_features=64, out_features=1))
            self.pool = pool

        def forward(self, x):
            x = self.enc(x)
            if self.pool == "max":
                x = x.max(dim=1)[0]
            elif self.pool == "mean":
                x = x.mean(dim=1)
            elif self.pool == "sum":
                x = x.sum(dim=1)
            x = self.dec(x)
            return x

    class SmallSetTransformer(nn.Module):
        def __init__(self,):
            super().__init__()
            self.enc = nn.Sequential(
                SAB(dim_in=1, dim_out=64, num_heads=4),
                SAB(dim_in=64, dim_out=64, num_heads=4),
            )
            self.dec = nn.Sequential(
                PMA(dim=64, num_heads=4, num_seeds=1),
                nn.Linear(in_features=64, out_features=1),
            )

        def forward(self, x):
            x = self.enc(x)
            x = self.dec(x)
            return x.squeeze(-1)

    rng = np.random.RandomState(0)

    def gen_data(batch_size, max_length=10, test=False):
        length = rng.randint(1, max_length + 1)
        x = rng.randint(1, 100, (batch_size, length))
        y = np.max(x, axis=1)
        x, y = np.expand_dims(x, axis=2), np.expand_dims(y, axis=1)
        return x, y

    def train(model):
        optim = torch.optim.Adam(model.parameters(), lr=1e-4)
        criterion = nn.L1Loss()
        losses = []
        for _ in range(steps):
            x, y = gen_data(batch_size=2 ** 6, max_length=10)
            x, y = torch.from_numpy(x).float(), torch.from_numpy(y).float()
            loss = criterion(model(x), y)
            optim.zero_grad()
            loss.backward()
            optim.step()
            losses += [loss.item()]
        return losses

    torch.manual_seed(0)
    models = {"deepset": SmallDeepSet(), "settransformer": SmallSetTransformer(),
              "deepset_mean": SmallDeepSet(pool="mean"),
              "paper_deepset": DeepSet(3, 4, 2, dim_hidden=32),
              "paper_settransformer": SetTransformer(3, 4, 2, num_inds=8, dim_hidden=32, ln=True)}
    result = {"shapes": {k: {n: list(p.shape) for n, p in m.named_parameters()} for k, m in models.items()}}
    start_from(torch, models, init, result)
    result["losses"] = {k: train(models[k]) for k in ("deepset", "settransformer", "deepset_mean")}
    with torch.no_grad():
        x, y = gen_data(batch_size=8)
        x = torch.from_numpy(x).float()
        result["predictions"] = {k: numpy_of(models[k](x)) for k in ("deepset", "settransformer")}
    X = torch.from_numpy(rng.standard_normal((5, 7, 3)).astype(np.float32))
    for name in ("paper_deepset", "paper_settransformer"):
        out = models[name](X)
        out.pow(2).mean().backward()
        result[name] = {"out": numpy_of(out),
                        "grads": {n: numpy_of(p.grad) for n, p in models[name].named_parameters()}}
    return result


def test_set_transformer_max_regression():
    compare_program(max_regression_program, rtol=1e-3, atol=1e-4)

"""Training utilities as scripts use them: a classifier with nn.utils.parametrizations.weight_norm
and spectral_norm layers, an nn.MultiheadAttention pooling step (need_weights, averaged), einsum
for a bilinear score; OneCycleLR stepped per batch, stochastic weight averaging with
swa_utils.AveragedModel, SWALR and update_bn over a loader, metrics written as CSV lines instead of
tensorboard; a whole layer pickled by torch.save(module) and loaded with weights_only=False;
a WeightedRandomSampler's own draws checked by their frequencies."""
import csv
import io
import os

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

FEATS, CLASSES = 6, 3


def blobs(rng, n):
    y = rng.integers(0, CLASSES, n)
    centers = np.random.default_rng(7).standard_normal((CLASSES, FEATS)) * 2
    return (centers[y] + rng.standard_normal((n, FEATS))).astype(np.float32), y.astype(np.int64)


def training_utils(torch, init=None, tmp_path=None, epochs=3, batch=8):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    P = nn.utils.parametrizations

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = P.weight_norm(nn.Linear(FEATS, 16))
            self.bn = nn.BatchNorm1d(16)
            self.attn = nn.MultiheadAttention(4, num_heads=2, batch_first=True)
            self.query = nn.Parameter(torch.zeros(1, 1, 4))
            self.bilinear = nn.Parameter(torch.eye(4))
            self.fc2 = P.spectral_norm(nn.Linear(4, CLASSES))

        def forward(self, x):
            h = F.relu(self.bn(self.fc1(x)))
            tokens = h.view(-1, 4, 4)
            pooled, self.attention_weights = self.attn(self.query.expand(x.size(0), -1, -1), tokens, tokens,
                                                       need_weights=True, average_attn_weights=True)
            pooled = pooled.squeeze(1)
            score = torch.einsum("bi,ij,bj->b", pooled, self.bilinear, pooled)
            return self.fc2(pooled) + score.unsqueeze(1)

    model = Net()
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(0)
    x, y = blobs(rng, 48)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch, shuffle=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, epochs=epochs,
                                                    steps_per_epoch=len(loader))
    swa_model = torch.optim.swa_utils.AveragedModel(model)
    swa_scheduler = torch.optim.swa_utils.SWALR(optimizer, swa_lr=0.02, anneal_epochs=1)
    log = io.StringIO()
    writer = csv.writer(log)
    writer.writerow(["epoch", "step", "loss", "lr"])
    step = 0
    for epoch in range(epochs + 2):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            if epoch < epochs:
                scheduler.step()
            writer.writerow([epoch, step, f"{loss.item():.6f}", f"{optimizer.param_groups[0]['lr']:.6f}"])
            step += 1
        if epoch >= epochs:
            swa_model.update_parameters(model)
            swa_scheduler.step()
    torch.optim.swa_utils.update_bn(loader, swa_model)
    swa_model.eval()
    with torch.no_grad():
        xt, yt = blobs(rng, 30)
        swa_out = swa_model(torch.from_numpy(xt))
        model.eval()
        out = model(torch.from_numpy(xt))
        weights = model.attention_weights
    rows = list(csv.reader(io.StringIO(log.getvalue())))[1:]
    os.makedirs(tmp_path, exist_ok=True)
    path = os.path.join(str(tmp_path), "whole.pt")
    # A parametrized module pickles only through its state_dict; its attention layer pickles whole.
    torch.save(model.attn, path)
    loaded = torch.load(path, weights_only=False)
    with torch.no_grad():
        tokens = torch.from_numpy(xt[:, :4]).view(-1, 1, 4).repeat(1, 3, 1)
        reloaded = loaded(tokens, tokens, tokens)[0]
        direct = model.attn(tokens, tokens, tokens)[0]
    sampler = torch.utils.data.WeightedRandomSampler([0.1, 0.6, 0.3], num_samples=3000, replacement=True)
    draws = np.array(list(sampler))
    result.update(log=np.array([[float(v) for v in row] for row in rows]), swa_out=numpy_of(swa_out),
                  out=numpy_of(out), weights=numpy_of(weights), reloaded=numpy_of(reloaded), direct=numpy_of(direct),
                  n_averaged=int(swa_model.n_averaged), own={"draws": draws},
                  names=sorted(k for k, _ in model.named_parameters()),
                  sigma=float(torch.linalg.matrix_norm(model.fc2.weight.detach(), ord=2)),
                  swa_state={k: numpy_of(v) for k, v in swa_model.state_dict().items()})
    return result


def test_weight_norm_spectral_norm_swa_onecycle_pickled_model(tmp_path):
    # spectral_norm's power iteration starts from the library's own random vectors: after start_from
    # both hold PyTorch's (the u/v buffers are in the state_dict).
    ref, got = compare_program(training_utils, rtol=1e-3, atol=1e-4, mt_options={"tmp_path": tmp_path / "mt"},
                               tmp_path=tmp_path / "pt")
    np.testing.assert_allclose(got["reloaded"], got["direct"], rtol=1e-6)
    draws = got["own"]["draws"]
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 3000, [0.1, 0.6, 0.3], atol=0.03)
    assert got["n_averaged"] == 2

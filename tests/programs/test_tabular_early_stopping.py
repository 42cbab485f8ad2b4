"""A tabular model as the tabular tutorials write it (fastai's TabularModel done by hand in the
"PyTorch for tabular data" posts): one nn.Embedding per categorical column with the size rule
min(50, (n + 1) // 2), embedding Dropout, BatchNorm1d on the continuous columns, Linear ->
ReLU -> BatchNorm1d -> Dropout blocks in an nn.ModuleList, a TensorDataset and a shuffling
DataLoader, Adam with weight_decay, ReduceLROnPlateau(mode="min", factor, patience) stepped
with the validation loss, early stopping with a patience counter, the best weights kept by
copy.deepcopy(model.state_dict()) and loaded back at the end, and the classic
print(f"...{loss:.4f}") log of each epoch."""
import copy

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines, start_from

CATEGORIES = [4, 7, 3]  # levels of each categorical column


def table(seed, n):
    rng = np.random.default_rng(seed)
    cats = np.stack([rng.integers(0, k, n) for k in CATEGORIES], axis=1)
    conts = rng.standard_normal((n, 3)).astype(np.float32) * [1.0, 5.0, 0.1] + [0.0, 20.0, 1.0]
    logit = conts[:, 0] + (conts[:, 1] - 20) / 5 + (cats[:, 0] == 1) - (cats[:, 1] > 3)
    y = (logit + 0.3 * rng.standard_normal(n) > 0).astype(np.int64)
    return cats, conts.astype(np.float32), y


def tabular(torch, init=None, max_epochs=30, patience=3, lr=0.02):
    nn = torch.nn
    data = torch.utils.data

    class TabularModel(nn.Module):
        def __init__(self, emb_szs, n_cont, out_sz, layers, p=0.5):
            super().__init__()
            self.embeds = nn.ModuleList([nn.Embedding(ni, nf) for ni, nf in emb_szs])
            self.emb_drop = nn.Dropout(p)
            self.bn_cont = nn.BatchNorm1d(n_cont)
            layerlist = []
            n_emb = sum(nf for ni, nf in emb_szs)
            n_in = n_emb + n_cont
            for i in layers:
                layerlist.append(nn.Linear(n_in, i))
                layerlist.append(nn.ReLU(inplace=True))
                layerlist.append(nn.BatchNorm1d(i))
                layerlist.append(nn.Dropout(p))
                n_in = i
            layerlist.append(nn.Linear(layers[-1], out_sz))
            self.layers = nn.Sequential(*layerlist)

        def forward(self, x_cat, x_cont):
            embeddings = []
            for i, e in enumerate(self.embeds):
                embeddings.append(e(x_cat[:, i]))
            x = torch.cat(embeddings, 1)
            x = self.emb_drop(x)
            x_cont = self.bn_cont(x_cont)
            x = torch.cat([x, x_cont], 1)
            return self.layers(x)

    emb_szs = [(size, min(50, (size + 1) // 2)) for size in CATEGORIES]
    torch.manual_seed(33)
    model = TabularModel(emb_szs, 3, 2, [16, 8], p=0.2)
    result = {}
    start_from(torch, model, init, result)
    cats, conts, y = table(0, 96)
    v_cats, v_conts, v_y = table(1, 32)
    train_ds = data.TensorDataset(torch.tensor(cats), torch.tensor(conts), torch.tensor(y))
    train_loader = data.DataLoader(train_ds, batch_size=32, shuffle=True)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=1)
    best_loss = float("inf")
    best_state = None
    best_epoch = -1
    bad_epochs = 0
    history = []
    with captured_run(torch, seed=33) as out:
        for epoch in range(max_epochs):
            model.train()
            running = 0.0
            for x_cat, x_cont, target in train_loader:
                optimizer.zero_grad()
                loss = criterion(model(x_cat, x_cont), target)
                loss.backward()
                optimizer.step()
                running += loss.item() * target.size(0)
            train_loss = running / len(train_ds)
            model.eval()
            with torch.no_grad():
                val_out = model(torch.tensor(v_cats), torch.tensor(v_conts))
                val_loss = criterion(val_out, torch.tensor(v_y)).item()
                val_acc = (val_out.argmax(dim=1) == torch.tensor(v_y)).float().mean().item()
            scheduler.step(val_loss)
            history.append([train_loss, val_loss, val_acc, optimizer.param_groups[0]["lr"]])
            print(f"epoch: {epoch:3}  loss: {train_loss:.4f}  val_loss: {val_loss:.4f}  acc: {val_acc:.3f}  "
                  f"lr: {scheduler.get_last_lr()[0]:.5f}")
            if val_loss < best_loss:
                best_loss = val_loss
                best_epoch = epoch
                best_state = copy.deepcopy(model.state_dict())
                bad_epochs = 0
            else:
                bad_epochs += 1
                if bad_epochs >= patience:
                    print(f"Early stopping at epoch {epoch}")
                    break
    # the deep copy kept the best epoch's weights while training went on
    drifted = any(not torch.equal(best_state[k], v) for k, v in model.state_dict().items())
    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        best_val = criterion(model(torch.tensor(v_cats), torch.tensor(v_conts)), torch.tensor(v_y)).item()
    result.update(history=history, best_epoch=best_epoch, best_loss=best_loss, best_val=best_val, drifted=drifted,
                  printed=printed_lines(out), scheduler=scheduler.state_dict()["num_bad_epochs"],
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_tabular_model_early_stopping_best_state():
    ref, got = compare_program(tabular, rtol=1e-3, atol=1e-5)
    assert ref["drifted"] and got["drifted"]
    assert got["best_val"] == got["best_loss"]  # the restored weights are the best epoch's
    lrs = [row[3] for row in ref["history"]]
    assert lrs[-1] < lrs[0]  # the plateau scheduler halved the rate
    assert len(ref["history"]) < 30 and ref["printed"][-1].startswith("Early stopping")

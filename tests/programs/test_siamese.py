"""Siamese and triplet networks in the style of the PyTorch examples' siamese_network and common
metric-learning scripts: one shared CNN embedding (Conv2d, BatchNorm2d, AdaptiveAvgPool2d,
Flatten, F.normalize), a contrastive loss written out from F.pairwise_distance and clamp(min=0),
a pair head on |a - b| with BCEWithLogitsLoss, nn.TripletMarginLoss and a custom triplet loss from
torch.cdist, hardest negatives by masked max, F.cosine_similarity for verification; a TensorDataset
over NumPy arrays split by random_split with a seeded Generator, forward hooks collecting
embeddings, and ReduceLROnPlateau."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

CLASSES, SIDE = 4, 8


def glyphs(rng, n):
    protos = np.random.default_rng(99).random((CLASSES, 1, SIDE, SIDE)) > 0.5
    y = rng.integers(0, CLASSES, n)
    x = protos[y].astype(np.float32) + 0.3 * rng.standard_normal((n, 1, SIDE, SIDE)).astype(np.float32)
    return x, y.astype(np.int64)


def siamese(torch, init=None, steps=6, batch=16, margin=1.0):
    nn, F = torch.nn, torch.nn.functional
    DataLoader, TensorDataset, random_split = (torch.utils.data.DataLoader, torch.utils.data.TensorDataset,
                                                torch.utils.data.random_split)
    torch.manual_seed(0)

    class EmbeddingNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU(),
                nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten())
            self.fc = nn.Linear(32, 8)

        def forward(self, x):
            return F.normalize(self.fc(self.features(x)), p=2, dim=1)

    class SiameseNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = EmbeddingNet()
            self.head = nn.Linear(8, 1)

        def forward_once(self, x):
            return self.embedding(x)

        def forward(self, input1, input2):
            output1, output2 = self.forward_once(input1), self.forward_once(input2)
            return self.head(torch.abs(output1 - output2)).view(-1), output1, output2

    def contrastive_loss(output1, output2, label):
        euclidean_distance = F.pairwise_distance(output1, output2, keepdim=True)
        return torch.mean((1 - label) * torch.pow(euclidean_distance, 2)
                          + label * torch.pow(torch.clamp(margin - euclidean_distance, min=0.0), 2))

    def batch_hard_triplet(embeddings, labels):
        dist = torch.cdist(embeddings, embeddings)
        same = labels.unsqueeze(0) == labels.unsqueeze(1)
        hardest_pos = (dist * same.float()).max(dim=1)[0]
        hardest_neg = dist.masked_fill(same, float("inf")).min(dim=1).values
        return F.relu(hardest_pos - hardest_neg + 0.2).mean()

    net = SiameseNetwork()
    result = {}
    start_from(torch, net, init, result)
    rng = np.random.default_rng(0)
    x, y = glyphs(rng, 96)
    dataset = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    train_set, val_set = random_split(dataset, [0.75, 0.25], generator=torch.Generator().manual_seed(42))
    result["own"] = {"split": np.array(train_set.indices)}
    bce = nn.BCEWithLogitsLoss()
    triplet = nn.TripletMarginLoss(margin=margin, p=2)
    optimizer = torch.optim.Adam(net.parameters(), lr=5e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=0)
    losses = []
    net.train()
    for step in range(steps):
        idx = rng.integers(0, 72, batch)
        a, la = torch.from_numpy(x[idx]), torch.from_numpy(y[idx])
        idx2 = rng.integers(0, 72, batch)
        b, lb = torch.from_numpy(x[idx2]), torch.from_numpy(y[idx2])
        label = (la != lb).float()
        logits, o1, o2 = net(a, b)
        positives = torch.from_numpy(x[[int(rng.choice(np.flatnonzero(y[:72] == c))) for c in y[idx]]])
        negatives = torch.from_numpy(x[[int(rng.choice(np.flatnonzero(y[:72] != c))) for c in y[idx]]])
        anchor, pos, neg = net.forward_once(a), net.forward_once(positives), net.forward_once(negatives)
        loss = (contrastive_loss(o1, o2, label.unsqueeze(1)) + bce(logits, 1 - label) + triplet(anchor, pos, neg)
                + batch_hard_triplet(o1, la))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step(loss.item())
        losses.append([loss.item(), optimizer.param_groups[0]["lr"]])
    net.eval()
    collected = []
    handle = net.embedding.fc.register_forward_hook(lambda module, inp, out: collected.append(out.detach()))
    with torch.no_grad():
        xv, yv = glyphs(rng, 24)
        ev = net.forward_once(torch.from_numpy(xv))
        sims = F.cosine_similarity(ev.unsqueeze(1), ev.unsqueeze(0), dim=-1)
    handle.remove()
    net.forward_once(torch.from_numpy(xv[:2]))
    val_count = sum(len(b[0]) for b in DataLoader(val_set, batch_size=10))
    result.update(losses=np.array(losses), sims=numpy_of(sims), hooked=len(collected), raw=numpy_of(collected[0]),
                  val_count=val_count, state={k: numpy_of(v) for k, v in net.state_dict().items()})
    return result


def test_siamese_contrastive_and_triplet():
    ref, got = compare_program(siamese, rtol=1e-3, atol=1e-4)
    assert got["hooked"] == 1 and got["val_count"] == 24
    split = got["own"]["split"]
    assert sorted(split.tolist()) != list(range(72)) and len(set(split.tolist())) == 72

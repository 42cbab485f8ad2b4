"""pytorch/examples' snli classifier: a Bottle mixin that folds (T, B, D) inputs to (T*B, D) for
a Linear and back, an Encoder LSTM whose initial states are inputs.new_zeros(state_shape) and whose
sentence vector is ht[-1] or, bidirectional, ht[-2:].transpose(0, 1).contiguous().view(batch_size,
-1), a fixed embedding (weight.requires_grad = False after copying pretrained vectors), a projection
with ReLU, features torch.cat([prem, hypo, prem - hypo, prem * hypo], 1) into nn.Sequential(*lin_config)
of Linear/ReLU/Dropout, Adam over filter(lambda p: p.requires_grad, ...), the accuracy by
(torch.max(answer, 1)[1].view(label.size()) == label).sum().item(), and a dev pass under eval()."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def snli(torch, init=None, epochs=2, birnn=True):
    nn = torch.nn

    class Bottle(nn.Module):
        def forward(self, input):
            if len(input.size()) <= 2:
                return super(Bottle, self).forward(input)
            size = input.size()[:2]
            out = super(Bottle, self).forward(input.view(size[0] * size[1], -1))
            return out.view(size[0], size[1], -1)

    class Linear(Bottle, nn.Linear):
        pass

    class Encoder(nn.Module):
        def __init__(self, config):
            super(Encoder, self).__init__()
            self.config = config
            input_size = config["d_proj"] if config["projection"] else config["d_embed"]
            dropout = 0 if config["n_layers"] == 1 else config["dp_ratio"]
            self.rnn = nn.LSTM(input_size=input_size, hidden_size=config["d_hidden"], num_layers=config["n_layers"],
                               dropout=dropout, bidirectional=config["birnn"])

        def forward(self, inputs):
            batch_size = inputs.size()[1]
            state_shape = self.config["n_cells"], batch_size, self.config["d_hidden"]
            h0 = c0 = inputs.new_zeros(state_shape)
            outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
            return ht[-1] if not self.config["birnn"] else ht[-2:].transpose(0, 1).contiguous().view(batch_size, -1)

    class SNLIClassifier(nn.Module):
        def __init__(self, config):
            super(SNLIClassifier, self).__init__()
            self.config = config
            self.embed = nn.Embedding(config["n_embed"], config["d_embed"])
            self.projection = Linear(config["d_embed"], config["d_proj"])
            self.encoder = Encoder(config)
            self.dropout = nn.Dropout(p=config["dp_ratio"])
            self.relu = nn.ReLU()
            seq_in_size = 4 * config["d_hidden"]  # the four features below
            if self.config["birnn"]:
                seq_in_size *= 2
            lin_config = [seq_in_size] * 2
            self.out = nn.Sequential(
                Linear(*lin_config), self.relu, self.dropout,
                Linear(*lin_config), self.relu, self.dropout,
                Linear(seq_in_size, config["d_out"]))

        def forward(self, premise, hypothesis):
            prem_embed = self.embed(premise)
            hypo_embed = self.embed(hypothesis)
            if self.config["fix_emb"]:
                prem_embed = prem_embed.detach()
                hypo_embed = hypo_embed.detach()
            if self.config["projection"]:
                prem_embed = self.relu(self.projection(prem_embed))
                hypo_embed = self.relu(self.projection(hypo_embed))
            premise = self.encoder(prem_embed)
            hypothesis = self.encoder(hypo_embed)
            scores = self.out(torch.cat([premise, hypothesis, premise - hypothesis, premise * hypothesis], 1))
            return scores

    config = dict(n_embed=30, d_embed=12, d_proj=10, projection=True, d_hidden=8, n_layers=1, dp_ratio=0.0,
                  birnn=birnn, fix_emb=True, d_out=3)
    config["n_cells"] = config["n_layers"] * (2 if birnn else 1)
    torch.manual_seed(0)
    model = SNLIClassifier(config)
    rng = np.random.default_rng(0)
    vectors = torch.from_numpy(rng.standard_normal((30, 12)).astype(np.float32))
    model.embed.weight.data.copy_(vectors)
    model.embed.weight.requires_grad = False
    result = {"trainable": [n for n, p in model.named_parameters() if p.requires_grad]}
    start_from(torch, model, init, result)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01, betas=(0.9, 0.999))

    def batches(n):
        for _ in range(n):
            T1, T2, B = rng.integers(3, 7), rng.integers(3, 7), 5
            yield (torch.from_numpy(rng.integers(0, 30, (T1, B))), torch.from_numpy(rng.integers(0, 30, (T2, B))),
                   torch.from_numpy(rng.integers(0, 3, B)))

    train = list(batches(4))
    dev = list(batches(2))
    history = []
    for epoch in range(epochs):
        n_correct, n_total = 0, 0
        for premise, hypothesis, label in train:
            model.train()
            opt.zero_grad()
            answer = model(premise, hypothesis)
            n_correct += (torch.max(answer, 1)[1].view(label.size()) == label).sum().item()
            n_total += label.size(0)
            train_acc = 100. * n_correct / n_total
            loss = criterion(answer, label)
            loss.backward()
            opt.step()
            history.append([loss.item(), train_acc])
        model.eval()
        with torch.no_grad():
            n_dev_correct, dev_loss = 0, 0
            for premise, hypothesis, label in dev:
                answer = model(premise, hypothesis)
                n_dev_correct += (torch.max(answer, 1)[1].view(label.size()) == label).sum().item()
                dev_loss = criterion(answer, label)
            history.append([dev_loss.item(), 100. * n_dev_correct / 10])
    result.update(history=np.array(history), embed_unchanged=bool((model.embed.weight == vectors).all()),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_snli_bidirectional():
    compare_program(snli, rtol=1e-3, atol=1e-4)


def test_snli_unidirectional():
    compare_program(snli, birnn=False, rtol=1e-3, atol=1e-4)

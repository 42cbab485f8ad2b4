"""A text classifier in the style of the PyTorch text classification tutorial: a vocabulary built
from tokenised lines, a collate_batch that concatenates token ids and makes offsets by cumsum, a
DataLoader with that collate_fn, nn.EmbeddingBag (mean, sparse=False) and a Linear head with
uniform_ init, SGD with StepLR, clip_grad_norm_(0.1), accuracy by argmax; predict() under
no_grad for new text; then the same model with EmbeddingBag in 'sum' mode with per_sample_weights
and 'max' mode on a padded 2-D input."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

TOPICS = {
    0: "goal match team score player win league coach ball season",
    1: "market stock price bank trade profit share invest fund rate",
    2: "cpu chip code software data cloud phone app robot network",
}


def corpus(rng, n):
    lines = []
    for _ in range(n):
        label = int(rng.integers(0, 3))
        words = TOPICS[label].split()
        other = TOPICS[int(rng.integers(0, 3))].split()
        k = int(rng.integers(3, 9))
        text = [words[i] if rng.random() < 0.8 else other[i] for i in rng.integers(0, 10, k)]
        lines.append((label, " ".join(text)))
    return lines


def text_classifier(torch, init=None, epochs=3, batch=8, mode="mean"):
    nn = torch.nn
    DataLoader = torch.utils.data.DataLoader
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    train_iter = corpus(rng, 48)

    vocab = {"<unk>": 0}
    for _, line in train_iter:
        for token in line.split():
            vocab.setdefault(token, len(vocab))
    text_pipeline = lambda x: [vocab.get(token, 0) for token in x.split()]  # noqa: E731

    def collate_batch(batch):
        label_list, text_list, offsets, weights = [], [], [0], []
        for _label, _text in batch:
            label_list.append(_label)
            processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
            text_list.append(processed_text)
            offsets.append(processed_text.size(0))
            weights.append(torch.linspace(1.0, 0.5, processed_text.size(0)))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        return label_list, torch.cat(text_list), offsets, torch.cat(weights)

    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class):
            super().__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode=mode, sparse=False)
            self.fc = nn.Linear(embed_dim, num_class)
            self.init_weights()

        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets, weights=None):
            return self.fc(self.embedding(text, offsets, per_sample_weights=weights))

    model = TextClassificationModel(len(vocab), 16, 3)
    result = {}
    start_from(torch, model, init, result)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.1)
    dataloader = DataLoader(train_iter, batch_size=batch, shuffle=False, collate_fn=collate_batch)
    losses, accs = [], []
    for epoch in range(1, epochs + 1):
        model.train()
        total_acc, total_count = 0, 0
        for idx, (label, text, offsets, weights) in enumerate(dataloader):
            optimizer.zero_grad()
            predicted_label = model(text, offsets, weights if mode == "sum" else None)
            loss = criterion(predicted_label, label)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
            losses.append(loss.item())
        accs.append(total_acc / total_count)
        scheduler.step()

    def predict(text):
        with torch.no_grad():
            text = torch.tensor(text_pipeline(text))
            output = model(text, torch.tensor([0]))
            return output.argmax(1).item()

    result.update(losses=losses, accs=accs, predictions=[predict("stock price bank"), predict("team goal win"),
                                                         predict("robot unknownword chip")],
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    if mode == "max":
        padded = torch.tensor([[1, 2, 3], [4, 4, 5]])
        pooled = model.embedding(padded)
        pooled.sum().backward()
        result.update(pooled=numpy_of(pooled), pooled_grad=numpy_of(model.embedding.weight.grad))
    return result


def test_embedding_bag_text_classifier():
    ref, got = compare_program(text_classifier)
    assert ref["accs"][-1] > ref["accs"][0]


def test_embedding_bag_sum_with_weights_and_max():
    compare_program(text_classifier, mode="sum", epochs=2)
    compare_program(text_classifier, mode="max", epochs=1)

"""bentrevett's pytorch-sentiment-analysis notebooks (the 2023 rewrite), torchtext and the IMDb
download replaced by a vocabulary built by hand (collections.Counter, min_freq, "<unk>"/"<pad>",
lookup_indices, get_itos) over local reviews: 1 NBoW (Embedding with padding_idx, embedded.mean(dim=1),
Linear), 2 LSTM (bidirectional two-layer nn.LSTM with dropout, batch_first, fed by
pack_padded_sequence(embedded, length, batch_first=True, enforce_sorted=False), pad_packed_sequence,
hidden[-1]/hidden[-2] joined by torch.cat; initialize_weights with xavier_normal_ and orthogonal_
through model.apply; "pretrained" vectors copied into embedding.weight.data with the <unk> and <pad>
rows zeroed) and 3 CNN (Conv1d per filter size in an nn.ModuleList over embedded.permute(0, 2, 1),
relu, max(dim=-1).values, kaiming_normal_(nonlinearity="relu")). Each has get_collate_fn with
nn.utils.rnn.pad_sequence(batch_first=True) and torch.stack of labels, a DataLoader(shuffle=True)
whose order comes from torch.manual_seed(1234) in both libraries, train/evaluate loops with
get_accuracy (argmax(dim=-1).eq(label).sum() / batch_size), np.mean of the epoch's items, the best
validation loss saved by torch.save(model.state_dict(), ...) and loaded back, count_parameters, and
predict_sentiment (LongTensor(ids).unsqueeze(dim=0), softmax, argmax().item())."""
import collections
import os

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from

GOOD = "great wonderful superb moving brilliant fun charming delightful".split()
BAD = "awful boring dull terrible weak tedious clumsy painful".split()
FILLER = "the film movie plot acting was and a it story cast very really this of".split()


def reviews(n, seed):
    """[{"text", "label"}]: label 1 when the review holds more good words than bad ones."""
    rng = np.random.default_rng(seed)
    data = []
    for _ in range(n):
        label = int(rng.integers(0, 2))
        words = list(rng.choice(FILLER, rng.integers(3, 12)))
        strong = GOOD if label else BAD
        words += list(rng.choice(strong, rng.integers(1, 4))) + list(rng.choice(GOOD + BAD, rng.integers(0, 2)))
        rng.shuffle(words)
        data.append({"text": " ".join(words), "label": label})
    return data


class Vocab:
    """The part of torchtext's Vocab the notebooks use."""

    def __init__(self, tokens_iter, min_freq, specials):
        counts = collections.Counter(t for tokens in tokens_iter for t in tokens)
        self.itos = list(specials) + sorted(t for t, c in counts.items() if c >= min_freq and t not in specials)
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.default = None

    def set_default_index(self, index):
        self.default = index

    def __getitem__(self, token):
        return self.stoi.get(token, self.default)

    def __len__(self):
        return len(self.itos)

    def lookup_indices(self, tokens):
        return [self[t] for t in tokens]

    def get_itos(self):
        return self.itos


def sentiment(torch, init=None, notebook="nbow", path=None):
    nn = torch.nn
    seed = 1234
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True

    train_data, test_data = reviews(48, 0), reviews(16, 1)
    tokenizer = lambda s: s.lower().split()  # noqa: E731  (basic_english on plain words)
    max_length = 256
    min_length = 5  # the CNN notebook pads short reviews to its largest filter size

    def tokenize_example(example, tokenizer, max_length):
        tokens = tokenizer(example["text"])[:max_length]
        if notebook == "cnn" and len(tokens) < min_length:
            tokens += ["<pad>"] * (min_length - len(tokens))
        return {"tokens": tokens, "length": len(tokens)}

    train_data = [{**e, **tokenize_example(e, tokenizer, max_length)} for e in train_data]
    test_data = [{**e, **tokenize_example(e, tokenizer, max_length)} for e in test_data]
    n_valid = int(len(train_data) * 0.25)
    train_data, valid_data = train_data[n_valid:], train_data[:n_valid]

    min_freq = 2
    special_tokens = ["<unk>", "<pad>"]
    vocab = Vocab((e["tokens"] for e in train_data), min_freq=min_freq, specials=special_tokens)
    unk_index = vocab["<unk>"]
    pad_index = vocab["<pad>"]
    vocab.set_default_index(unk_index)

    def numericalize_example(example, vocab):
        ids = vocab.lookup_indices(example["tokens"])
        return {"ids": ids}

    def with_format(data):
        # datasets' .with_format(type="torch", columns=["ids", "label", "length"])
        return [{"ids": torch.tensor(e["ids"]), "label": torch.tensor(e["label"]),
                 "length": torch.tensor(e["length"])} for e in data]

    train_data = with_format([{**e, **numericalize_example(e, vocab)} for e in train_data])
    valid_data = with_format([{**e, **numericalize_example(e, vocab)} for e in valid_data])
    test_data = with_format([{**e, **numericalize_example(e, vocab)} for e in test_data])

    def get_collate_fn(pad_index):
        def collate_fn(batch):
            batch_ids = [i["ids"] for i in batch]
            batch_ids = nn.utils.rnn.pad_sequence(batch_ids, padding_value=pad_index, batch_first=True)
            batch_length = [i["length"] for i in batch]
            batch_length = torch.stack(batch_length)
            batch_label = [i["label"] for i in batch]
            batch_label = torch.stack(batch_label)
            batch = {"ids": batch_ids, "length": batch_length, "label": batch_label}
            return batch
        return collate_fn

    def get_data_loader(dataset, batch_size, pad_index, shuffle=False):
        collate_fn = get_collate_fn(pad_index)
        data_loader = torch.utils.data.DataLoader(
            dataset=dataset, batch_size=batch_size, collate_fn=collate_fn, shuffle=shuffle)
        return data_loader

    batch_size = 8
    train_data_loader = get_data_loader(train_data, batch_size, pad_index, shuffle=True)
    valid_data_loader = get_data_loader(valid_data, batch_size, pad_index)
    test_data_loader = get_data_loader(test_data, batch_size, pad_index)

    class NBoW(nn.Module):
        def __init__(self, vocab_size, embedding_dim, output_dim, pad_index):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
            self.fc = nn.Linear(embedding_dim, output_dim)

        def forward(self, ids):
            # ids = [batch size, seq len]
            embedded = self.embedding(ids)
            # embedded = [batch size, seq len, embedding dim]
            pooled = embedded.mean(dim=1)
            # pooled = [batch size, embedding dim]
            prediction = self.fc(pooled)
            # prediction = [batch size, output dim]
            return prediction

    class LSTM(nn.Module):
        def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, n_layers, bidirectional,
                     dropout_rate, pad_index):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim, n_layers, bidirectional=bidirectional,
                                dropout=dropout_rate, batch_first=True)
            self.fc = nn.Linear(hidden_dim * 2 if bidirectional else hidden_dim, output_dim)
            self.dropout = nn.Dropout(dropout_rate)

        def forward(self, ids, length):
            # ids = [batch size, seq len]
            # length = [batch size]
            embedded = self.dropout(self.embedding(ids))
            # embedded = [batch size, seq len, embedding dim]
            packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, length, batch_first=True,
                                                                enforce_sorted=False)
            packed_output, (hidden, cell) = self.lstm(packed_embedded)
            # hidden = [n layers * n directions, batch size, hidden dim]
            output, output_length = nn.utils.rnn.pad_packed_sequence(packed_output)
            # output = [batch size, seq len, hidden dim * n directions]
            if self.lstm.bidirectional:
                hidden = self.dropout(torch.cat([hidden[-1], hidden[-2]], dim=-1))
            else:
                hidden = self.dropout(hidden[-1])
            prediction = self.fc(hidden)
            return prediction

    class CNN(nn.Module):
        def __init__(self, vocab_size, embedding_dim, n_filters, filter_sizes, output_dim, dropout_rate,
                     pad_index):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
            self.convs = nn.ModuleList(
                [nn.Conv1d(embedding_dim, n_filters, filter_size) for filter_size in filter_sizes])
            self.fc = nn.Linear(len(filter_sizes) * n_filters, output_dim)
            self.dropout = nn.Dropout(dropout_rate)

        def forward(self, ids):
            # ids = [batch size, seq len]
            embedded = self.dropout(self.embedding(ids))
            embedded = embedded.permute(0, 2, 1)
            # embedded = [batch size, embedding dim, seq len]
            conved = [torch.relu(conv(embedded)) for conv in self.convs]
            # conved_n = [batch size, n filters, seq len - filter_sizes[n] + 1]
            pooled = [conved_n.max(dim=-1).values for conved_n in conved]
            # pooled_n = [batch size, n filters]
            cat = self.dropout(torch.cat(pooled, dim=-1))
            # cat = [batch size, n filters * len(filter_sizes)]
            prediction = self.fc(cat)
            return prediction

    def initialize_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.xavier_normal_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LSTM):
            for name, param in m.named_parameters():
                if "bias" in name:
                    nn.init.zeros_(param)
                elif "weight" in name:
                    nn.init.orthogonal_(param)
        elif isinstance(m, nn.Conv1d):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)

    vocab_size = len(vocab)
    embedding_dim = 16
    output_dim = 2
    if notebook == "nbow":
        model = NBoW(vocab_size, embedding_dim, output_dim, pad_index)
    elif notebook == "lstm":
        model = LSTM(vocab_size, embedding_dim, 12, output_dim, 2, True, 0.5, pad_index)
        model.apply(initialize_weights)
    else:
        model = CNN(vocab_size, embedding_dim, 6, [3, 4, 5], output_dim, 0.25, pad_index)
        model.apply(initialize_weights)

    def count_parameters(model):
        return sum(p.numel() for p in model.parameters() if p.requires_grad)

    result = {"params": f"The model has {count_parameters(model):,} trainable parameters"}
    if notebook != "nbow":
        # vectors.get_vecs_by_tokens(vocab.get_itos()): "pretrained" vectors from NumPy
        vectors = np.random.default_rng(5).normal(0, 0.5, (len(vocab.get_itos()), embedding_dim)).astype(np.float32)
        pretrained_embedding = torch.from_numpy(vectors)
        model.embedding.weight.data = pretrained_embedding
        model.embedding.weight.data[unk_index] = torch.zeros(embedding_dim)
        model.embedding.weight.data[pad_index] = torch.zeros(embedding_dim)
    start_from(torch, model, init, result)

    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    criterion = nn.CrossEntropyLoss()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    criterion = criterion.to(device)

    def get_accuracy(prediction, label):
        batch_size, _ = prediction.shape
        predicted_classes = prediction.argmax(dim=-1)
        correct_predictions = predicted_classes.eq(label).sum()
        accuracy = correct_predictions / batch_size
        return accuracy

    def forward(batch):
        ids = batch["ids"].to(device)
        if notebook == "lstm":
            return model(ids, batch["length"])
        return model(ids)

    def train(data_loader, model, criterion, optimizer, device):
        model.train()
        epoch_losses = []
        epoch_accs = []
        for batch in data_loader:
            label = batch["label"].to(device)
            prediction = forward(batch)
            loss = criterion(prediction, label)
            accuracy = get_accuracy(prediction, label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_losses.append(loss.item())
            epoch_accs.append(accuracy.item())
        return np.mean(epoch_losses), np.mean(epoch_accs)

    def evaluate(data_loader, model, criterion, device):
        model.eval()
        epoch_losses = []
        epoch_accs = []
        with torch.no_grad():
            for batch in data_loader:
                label = batch["label"].to(device)
                prediction = forward(batch)
                loss = criterion(prediction, label)
                accuracy = get_accuracy(prediction, label)
                epoch_losses.append(loss.item())
                epoch_accs.append(accuracy.item())
        return np.mean(epoch_losses), np.mean(epoch_accs)

    n_epochs = 4
    best_valid_loss = float("inf")
    metrics = collections.defaultdict(list)
    filename = os.path.join(path, f"{notebook}.pt")
    for epoch in range(n_epochs):
        train_loss, train_acc = train(train_data_loader, model, criterion, optimizer, device)
        valid_loss, valid_acc = evaluate(valid_data_loader, model, criterion, device)
        metrics["train_losses"].append(train_loss)
        metrics["train_accs"].append(train_acc)
        metrics["valid_losses"].append(valid_loss)
        metrics["valid_accs"].append(valid_acc)
        if valid_loss < best_valid_loss:
            best_valid_loss = valid_loss
            torch.save(model.state_dict(), filename)
    model.load_state_dict(torch.load(filename))
    test_loss, test_acc = evaluate(test_data_loader, model, criterion, device)

    def predict_sentiment(text, model, tokenizer, vocab, device):
        tokens = tokenizer(text)
        if notebook == "cnn" and len(tokens) < min_length:
            tokens += ["<pad>"] * (min_length - len(tokens))
        ids = vocab.lookup_indices(tokens)
        length = torch.LongTensor([len(ids)])
        tensor = torch.LongTensor(ids).unsqueeze(dim=0).to(device)
        prediction = model(tensor, length).squeeze(dim=0) if notebook == "lstm" else model(tensor).squeeze(dim=0)
        probability = torch.softmax(prediction, dim=-1)
        predicted_class = prediction.argmax(dim=-1).item()
        predicted_probability = probability[predicted_class].item()
        return predicted_class, predicted_probability

    predictions = [predict_sentiment(t, model, tokenizer, vocab, device)
                   for t in ["this film is great", "this film is terrible", "the plot was brilliant fun"]]
    result.update(metrics=dict(metrics), test=[test_loss, test_acc],
                  classes=[c for c, _ in predictions], probs=[p for _, p in predictions],
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


@pytest.mark.parametrize("notebook", ["nbow", "lstm", "cnn"])
def test_sentiment_notebook(notebook, tmp_path):
    ref, got = compare_program(sentiment, rtol=1e-3, atol=1e-4, notebook=notebook, path=str(tmp_path))
    assert got["params"] == ref["params"]
    assert ref["metrics"]["train_losses"][-1] < ref["metrics"]["train_losses"][0]

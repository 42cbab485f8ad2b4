"""The d2l book's (1.0 edition) natural-language-processing applications as written, with its
training helpers (train_batch_ch13 and train_ch13 wrapping the net in nn.DataParallel(net,
device_ids=devices) on try_all_gpus()'s devices, accuracy with argmax(axis=1) and .type(y.dtype),
evaluate_accuracy_gpu, Accumulator of float(tensor)) and its Vocab class; the IMDb and SNLI downloads
replaced by toy corpora made here, GloVe's glove.6b.100d by a NumPy table of the same role, the
Animator's plots and Timer left out. Sentiment analysis with TextCNN (two nn.Embedding tables
concatenated on dim=2, the constant one frozen by weight.requires_grad = False after
weight.data.copy_(embeds), permute(0, 2, 1), nn.Conv1d per kernel size in an nn.ModuleList,
nn.AdaptiveAvgPool1d(1), torch.squeeze(..., dim=-1), init_weights by type(module) in (nn.Linear,
nn.Conv1d) with xavier_uniform_, CrossEntropyLoss(reduction="none") and l.sum().backward()) and
predict_sentiment; natural language inference with the decomposable attention model (mlp() of
Dropout/Linear/ReLU/Flatten(start_dim=1), Attend by torch.bmm and F.softmax of e.permute(0, 2, 1),
Compare and Aggregate, an SNLIDataset whose items ((premise, hypothesis), label) collate into a list
X) and predict_snli ('entailment' if label == 0 ...). Randomness from torch.manual_seed (dropout
masks and shuffles are PyTorch's CPU streams in both libraries)."""
import collections

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of

POSITIVE = ["a great movie with a wonderful cast", "i loved this film and its great story",
            "wonderful acting and a great plot", "this is the best film of the year",
            "a moving and beautiful story", "great fun and wonderful music"]
NEGATIVE = ["a terrible movie with a boring plot", "i hated this film and its awful story",
            "boring acting and a terrible script", "this is the worst film of the year",
            "a dull and awful story", "awful music and boring scenes"]
SNLI = [("a man plays a guitar", "a man plays music", 0), ("a man plays a guitar", "a man sleeps", 1),
        ("a man plays a guitar", "a man plays for friends", 2), ("two dogs run in a field", "animals run", 0),
        ("two dogs run in a field", "the dogs sleep inside", 1), ("two dogs run in a field", "the dogs are happy", 2),
        ("a woman reads a book", "a woman is reading", 0), ("a woman reads a book", "a woman swims", 1),
        ("a woman reads a book", "a woman reads a novel", 2), ("kids play soccer", "children play a game", 0),
        ("kids play soccer", "kids are asleep", 1), ("kids play soccer", "kids play in the rain", 2)]


class Vocab:
    """Vocabulary for text (d2l's)."""

    def __init__(self, tokens=[], min_freq=0, reserved_tokens=[]):
        # Flatten a 2D list if needed
        if tokens and isinstance(tokens[0], list):
            tokens = [token for line in tokens for token in line]
        # Count token frequencies
        counter = collections.Counter(tokens)
        self.token_freqs = sorted(counter.items(), key=lambda x: x[1], reverse=True)
        # The list of unique tokens
        self.idx_to_token = list(sorted(set(['<unk>'] + reserved_tokens + [
            token for token, freq in self.token_freqs if freq >= min_freq])))
        self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}

    def __len__(self):
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, self.unk)
        return [self.__getitem__(token) for token in tokens]

    def to_tokens(self, indices):
        if hasattr(indices, '__len__') and len(indices) > 1:
            return [self.idx_to_token[int(index)] for index in indices]
        return self.idx_to_token[indices]

    @property
    def unk(self):  # Index for the unknown token
        return self.token_to_idx['<unk>']


def truncate_pad(line, num_steps, padding_token):
    """Truncate or pad sequences."""
    if len(line) > num_steps:
        return line[:num_steps]  # Truncate
    return line + [padding_token] * (num_steps - len(line))  # Pad


def glove_like(vocab, embed_size):
    # stands in for d2l.TokenEmbedding('glove.6b.100d')[vocab.idx_to_token]
    rng = np.random.default_rng(11)
    return rng.normal(0, 0.5, (len(vocab), embed_size)).astype(np.float32)


def d2l_helpers(torch):
    nn = torch.nn

    class Accumulator:
        """For accumulating sums over `n` variables."""

        def __init__(self, n):
            self.data = [0.0] * n

        def add(self, *args):
            self.data = [a + float(b) for a, b in zip(self.data, args)]

        def __getitem__(self, idx):
            return self.data[idx]

    def try_all_gpus():
        devices = [torch.device(f'cuda:{i}') for i in range(torch.cuda.device_count())]
        return devices if devices else [torch.device('cpu')]

    def accuracy(y_hat, y):
        """Compute the number of correct predictions."""
        if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
            y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())

    def evaluate_accuracy_gpu(net, data_iter, device=None):
        """Compute the accuracy for a model on a dataset using a GPU."""
        if isinstance(net, nn.Module):
            net.eval()  # Set the model to evaluation mode
            if not device:
                device = next(iter(net.parameters())).device
        # No. of correct predictions, no. of predictions
        metric = Accumulator(2)
        with torch.no_grad():
            for X, y in data_iter:
                if isinstance(X, list):
                    # Required for BERT Fine-tuning (to be covered later)
                    X = [x.to(device) for x in X]
                else:
                    X = X.to(device)
                y = y.to(device)
                metric.add(accuracy(net(X), y), y.numel())
        return metric[0] / metric[1]

    def train_batch_ch13(net, X, y, loss, trainer, devices):
        """Train for a minibatch with multiple GPUs (defined in Chapter 13)."""
        if isinstance(X, list):
            # Required for BERT fine-tuning (to be covered later)
            X = [x.to(devices[0]) for x in X]
        else:
            X = X.to(devices[0])
        y = y.to(devices[0])
        net.train()
        trainer.zero_grad()
        pred = net(X)
        l = loss(pred, y)  # noqa: E741
        l.sum().backward()
        trainer.step()
        train_loss_sum = l.sum()
        train_acc_sum = accuracy(pred, y)
        return train_loss_sum, train_acc_sum

    def train_ch13(net, train_iter, test_iter, loss, trainer, num_epochs, devices=try_all_gpus()):
        """Train a model with multiple GPUs (defined in Chapter 13)."""
        num_batches = len(train_iter)
        net = nn.DataParallel(net, device_ids=devices).to(devices[0])
        history = []
        for epoch in range(num_epochs):
            # Sum of training loss, sum of training accuracy, no. of examples, no. of predictions
            metric = Accumulator(4)
            for i, (features, labels) in enumerate(train_iter):
                l, acc = train_batch_ch13(net, features, labels, loss, trainer, devices)  # noqa: E741
                metric.add(l, acc, labels.shape[0], labels.numel())
            test_acc = evaluate_accuracy_gpu(net, test_iter)
            history.append((metric[0] / metric[2], metric[1] / metric[3], test_acc))
        return history, num_batches

    return try_all_gpus, train_ch13


def sentiment_cnn(torch, init=None):
    nn = torch.nn
    data = torch.utils.data
    try_all_gpus, train_ch13 = d2l_helpers(torch)
    torch.manual_seed(0)

    # d2l.load_data_imdb(batch_size, num_steps=500) on the toy reviews
    def load_data_imdb(batch_size, num_steps=500):
        train_data = [POSITIVE[:4] + NEGATIVE[:4], [1] * 4 + [0] * 4]
        test_data = [POSITIVE[4:] + NEGATIVE[4:], [1] * 2 + [0] * 2]
        train_tokens = [line.split() for line in train_data[0]]
        test_tokens = [line.split() for line in test_data[0]]
        vocab = Vocab(train_tokens, min_freq=1, reserved_tokens=['<pad>'])
        train_features = torch.tensor([truncate_pad(vocab[line], num_steps, vocab['<pad>'])
                                       for line in train_tokens])
        test_features = torch.tensor([truncate_pad(vocab[line], num_steps, vocab['<pad>'])
                                      for line in test_tokens])
        train_iter = data.DataLoader(data.TensorDataset(train_features, torch.tensor(train_data[1])),
                                     batch_size, shuffle=True)
        test_iter = data.DataLoader(data.TensorDataset(test_features, torch.tensor(test_data[1])),
                                    batch_size, shuffle=False)
        return train_iter, test_iter, vocab

    batch_size = 4
    train_iter, test_iter, vocab = load_data_imdb(batch_size, num_steps=10)

    class TextCNN(nn.Module):
        def __init__(self, vocab_size, embed_size, kernel_sizes, num_channels, **kwargs):
            super(TextCNN, self).__init__(**kwargs)
            self.embedding = nn.Embedding(vocab_size, embed_size)
            # The embedding layer not to be trained
            self.constant_embedding = nn.Embedding(vocab_size, embed_size)
            self.dropout = nn.Dropout(0.5)
            self.decoder = nn.Linear(sum(num_channels), 2)
            # The max-over-time pooling layer has no parameters, so this instance can be shared
            self.pool = nn.AdaptiveAvgPool1d(1)
            self.relu = nn.ReLU()
            # Create multiple one-dimensional convolutional layers
            self.convs = nn.ModuleList()
            for c, k in zip(num_channels, kernel_sizes):
                self.convs.append(nn.Conv1d(2 * embed_size, c, k))

        def forward(self, inputs):
            # Concatenate two embedding layer outputs with shape (batch size, no.
            # of tokens, token vector dimension) along vectors
            embeddings = torch.cat((
                self.embedding(inputs), self.constant_embedding(inputs)), dim=2)
            # Per the input format of one-dimensional convolutional layers,
            # rearrange the tensor so that the second dimension stores channels
            embeddings = embeddings.permute(0, 2, 1)
            # For each one-dimensional convolutional layer, after max-over-time
            # pooling, a tensor of shape (batch size, no. of channels, 1) is
            # obtained. Remove the last dimension and concatenate along channels
            encoding = torch.cat([
                torch.squeeze(self.relu(self.pool(conv(embeddings))), dim=-1)
                for conv in self.convs], dim=1)
            outputs = self.decoder(self.dropout(encoding))
            return outputs

    embed_size, kernel_sizes, nums_channels = 16, [3, 4, 5], [8, 8, 8]
    devices = try_all_gpus()
    net = TextCNN(len(vocab), embed_size, kernel_sizes, nums_channels)

    def init_weights(module):
        if type(module) in (nn.Linear, nn.Conv1d):
            nn.init.xavier_uniform_(module.weight)

    net.apply(init_weights)
    embeds = torch.tensor(glove_like(vocab, embed_size))
    net.embedding.weight.data.copy_(embeds)
    net.constant_embedding.weight.data.copy_(embeds)
    net.constant_embedding.weight.requires_grad = False

    lr, num_epochs = 0.01, 3
    trainer = torch.optim.Adam(net.parameters(), lr=lr)
    loss = nn.CrossEntropyLoss(reduction="none")
    history, num_batches = train_ch13(net, train_iter, test_iter, loss, trainer, num_epochs, devices)

    def predict_sentiment(net, vocab, sequence):
        """Predict the sentiment of a text sequence."""
        sequence = torch.tensor(vocab[sequence.split()], device=try_all_gpus()[0])
        label = torch.argmax(net(sequence.reshape(1, -1)), dim=1)
        return 'positive' if label == 1 else 'negative'

    net.eval()
    predictions = [predict_sentiment(net, vocab, s) for s in ("this movie is so great", "this movie is so bad")]
    return {"history": history, "predictions": predictions, "batches": num_batches,
            "state": {k: numpy_of(v) for k, v in net.state_dict().items()}}


def decomposable_attention(torch, init=None):
    nn = torch.nn
    F = torch.nn.functional
    data = torch.utils.data
    try_all_gpus, train_ch13 = d2l_helpers(torch)
    torch.manual_seed(0)

    class SNLIDataset(data.Dataset):
        """A customized dataset to load the SNLI dataset."""

        def __init__(self, dataset, num_steps, vocab=None):
            self.num_steps = num_steps
            all_premise_tokens = [p.split() for p in dataset[0]]
            all_hypothesis_tokens = [h.split() for h in dataset[1]]
            if vocab is None:
                self.vocab = Vocab(all_premise_tokens + all_hypothesis_tokens, min_freq=1,
                                   reserved_tokens=['<pad>'])
            else:
                self.vocab = vocab
            self.premises = self._pad(all_premise_tokens)
            self.hypotheses = self._pad(all_hypothesis_tokens)
            self.labels = torch.tensor(dataset[2])
            print('read ' + str(len(self.premises)) + ' examples')

        def _pad(self, lines):
            return torch.tensor([truncate_pad(self.vocab[line], self.num_steps, self.vocab['<pad>'])
                                 for line in lines])

        def __getitem__(self, idx):
            return (self.premises[idx], self.hypotheses[idx]), self.labels[idx]

        def __len__(self):
            return len(self.premises)

    def print(*args):
        pass

    def load_data_snli(batch_size, num_steps=50):
        train_data = [list(t) for t in zip(*SNLI[:9])]
        test_data = [list(t) for t in zip(*SNLI[9:])]
        train_set = SNLIDataset(train_data, num_steps)
        test_set = SNLIDataset(test_data, num_steps, train_set.vocab)
        train_iter = data.DataLoader(train_set, batch_size, shuffle=True)
        test_iter = data.DataLoader(test_set, batch_size, shuffle=False)
        return train_iter, test_iter, train_set.vocab

    batch_size, num_steps = 3, 8
    train_iter, test_iter, vocab = load_data_snli(batch_size, num_steps)

    def mlp(num_inputs, num_hiddens, flatten):
        net = []
        net.append(nn.Dropout(0.2))
        net.append(nn.Linear(num_inputs, num_hiddens))
        net.append(nn.ReLU())
        if flatten:
            net.append(nn.Flatten(start_dim=1))
        net.append(nn.Dropout(0.2))
        net.append(nn.Linear(num_hiddens, num_hiddens))
        net.append(nn.ReLU())
        if flatten:
            net.append(nn.Flatten(start_dim=1))
        return nn.Sequential(*net)

    class Attend(nn.Module):
        def __init__(self, num_inputs, num_hiddens, **kwargs):
            super(Attend, self).__init__(**kwargs)
            self.f = mlp(num_inputs, num_hiddens, flatten=False)

        def forward(self, A, B):
            f_A = self.f(A)
            f_B = self.f(B)
            e = torch.bmm(f_A, f_B.permute(0, 2, 1))
            beta = torch.bmm(F.softmax(e, dim=-1), B)
            alpha = torch.bmm(F.softmax(e.permute(0, 2, 1), dim=-1), A)
            return beta, alpha

    class Compare(nn.Module):
        def __init__(self, num_inputs, num_hiddens, **kwargs):
            super(Compare, self).__init__(**kwargs)
            self.g = mlp(num_inputs, num_hiddens, flatten=False)

        def forward(self, A, B, beta, alpha):
            V_A = self.g(torch.cat([A, beta], dim=2))
            V_B = self.g(torch.cat([B, alpha], dim=2))
            return V_A, V_B

    class Aggregate(nn.Module):
        def __init__(self, num_inputs, num_hiddens, num_outputs, **kwargs):
            super(Aggregate, self).__init__(**kwargs)
            self.h = mlp(num_inputs, num_hiddens, flatten=True)
            self.linear = nn.Linear(num_hiddens, num_outputs)

        def forward(self, V_A, V_B):
            # Sum up both sets of comparison vectors
            V_A = V_A.sum(dim=1)
            V_B = V_B.sum(dim=1)
            # Feed the concatenation of both summarization results into an MLP
            Y_hat = self.linear(self.h(torch.cat([V_A, V_B], dim=1)))
            return Y_hat

    class DecomposableAttention(nn.Module):
        def __init__(self, vocab, embed_size, num_hiddens, num_inputs_attend=100, num_inputs_compare=200,
                     num_inputs_agg=400, **kwargs):
            super(DecomposableAttention, self).__init__(**kwargs)
            self.embedding = nn.Embedding(len(vocab), embed_size)
            self.attend = Attend(num_inputs_attend, num_hiddens)
            self.compare = Compare(num_inputs_compare, num_hiddens)
            # There are 3 possible outputs: entailment, contradiction, and neutral
            self.aggregate = Aggregate(num_inputs_agg, num_hiddens, num_outputs=3)

        def forward(self, X):
            premises, hypotheses = X
            A = self.embedding(premises)
            B = self.embedding(hypotheses)
            beta, alpha = self.attend(A, B)
            V_A, V_B = self.compare(A, B, beta, alpha)
            Y_hat = self.aggregate(V_A, V_B)
            return Y_hat

    embed_size, num_hiddens, devices = 16, 32, try_all_gpus()
    net = DecomposableAttention(vocab, embed_size, num_hiddens, num_inputs_attend=16, num_inputs_compare=32,
                                num_inputs_agg=64)
    embeds = torch.tensor(glove_like(vocab, embed_size))
    net.embedding.weight.data.copy_(embeds)
    lr, num_epochs = 0.001, 3
    trainer = torch.optim.Adam(net.parameters(), lr=lr)
    loss = nn.CrossEntropyLoss(reduction="none")
    history, num_batches = train_ch13(net, train_iter, test_iter, loss, trainer, num_epochs, devices)

    def predict_snli(net, vocab, premise, hypothesis):
        """Predict the logical relationship between the premise and hypothesis."""
        net.eval()
        premise = torch.tensor(vocab[premise], device=try_all_gpus()[0])
        hypothesis = torch.tensor(vocab[hypothesis], device=try_all_gpus()[0])
        label = torch.argmax(net([premise.reshape((1, -1)), hypothesis.reshape((1, -1))]), dim=1)
        return 'entailment' if label == 0 else 'contradiction' if label == 1 else 'neutral'

    prediction = predict_snli(net, vocab, ['a', 'man', 'plays'], ['a', 'man', 'sleeps'])
    return {"history": history, "prediction": prediction, "batches": num_batches,
            "state": {k: numpy_of(v) for k, v in net.state_dict().items()}}


@pytest.mark.parametrize("program", [sentiment_cnn, decomposable_attention], ids=["textcnn", "decomposable"])
def test_d2l_nlp_application(program):
    compare_program(program, rtol=1e-3, atol=1e-4)

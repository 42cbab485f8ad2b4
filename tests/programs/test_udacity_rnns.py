"""Udacity's deep-learning-v2-pytorch recurrent notebooks as the solutions write them, randomness from
torch.manual_seed (both libraries draw PyTorch's CPU streams, LSTM dropout included) and NumPy's
np.random.seed. Character-level RNN (anna.txt replaced by a local text): chars = tuple(set(text)),
int2char/char2int, one_hot_encode by fancy assignment, get_batches yielding (x, y) with the
IndexError wrap, CharRNN (nn.LSTM(len(self.chars), n_hidden, n_layers, dropout=drop_prob,
batch_first=True), nn.Dropout, out.contiguous().view(-1, self.n_hidden), fc), init_hidden through
weight = next(self.parameters()).data and weight.new(...).zero_(), train() with Adam,
h = tuple([each.data for each in h]), net.zero_grad(), CrossEntropyLoss on targets.view(batch_size
*seq_length).long(), clip_grad_norm_, the validation every print_every and its "Epoch: {}/{}..."
lines; the checkpoint dict with the tokens saved through an open file and loaded back into a new
CharRNN; predict() with F.softmax(out, dim=1).data, p.topk(top_k), top_ch.numpy().squeeze() and
np.random.choice(top_ch, p=p/p.sum()), sample(net, size, prime='The', top_k=5). Sentiment RNN
(reviews.txt/labels.txt replaced by local reviews): punctuation stripped, Counter, vocab sorted by
counts.get, vocab_to_int from 1, encoded_labels, the zero-length filter, pad_features
(np.zeros(..., dtype=int), features[i, -len(row):] = np.array(row)[:seq_length]), the 0.8/0.1/0.1
split, TensorDataset/DataLoader(shuffle=True, batch_size), SentimentRNN (Embedding, two-layer
LSTM with dropout, nn.Dropout(0.3), fc, nn.Sigmoid, sig_out.view(batch_size, -1)[:, -1]),
BCELoss of output.squeeze() against labels.float(), the test loop (torch.round, pred.eq(labels.
float().view_as(pred)), np.squeeze(correct_tensor.numpy()), np.sum) and predict() of a new review
with 'Prediction value, pre-rounding: {:.6f}'.format(output.item())."""
from collections import Counter
from string import punctuation

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines

TEXT = ("Happy families are all alike; every unhappy family is unhappy in its own way.\n"
        "Everything was in confusion in the Oblonskys' house. The wife had discovered that the husband "
        "was carrying on an intrigue with a French girl, who had been a governess in their family, and "
        "she had announced to her husband that she could not go on living in the same house with him.\n") * 4

GOOD = ["great", "wonderful", "loved", "brilliant", "fun", "moving"]
BAD = ["boring", "awful", "hated", "dull", "weak", "terrible"]
FILL = ["the", "film", "was", "plot", "actors", "and", "a", "story", "it", "really", "i", "this"]


def local_reviews(n, seed):
    rng = np.random.default_rng(seed)
    reviews, labels = [], []
    for i in range(n):
        pos = bool(rng.integers(0, 2))
        k = int(rng.integers(5, 30))
        words = [str(w) for w in rng.choice(FILL, k)]
        for j in rng.integers(0, k, 3):
            words[j] = str(rng.choice(GOOD if pos else BAD))
        reviews.append(" ".join(words) + (" !" if i % 3 == 0 else "."))
        labels.append("positive" if pos else "negative")
    return "\n".join(reviews), "\n".join(labels)


def char_rnn(torch, init=None, tmp=None, epochs=2):
    nn = torch.nn
    F = torch.nn.functional
    res = {}
    with captured_run(torch) as out:
        text = TEXT
        print(text[:100])
        chars = tuple(sorted(set(text)))  # tuple(set(text)): sorted, so both runs' order agree
        int2char = dict(enumerate(chars))
        char2int = {ch: ii for ii, ch in int2char.items()}
        encoded = np.array([char2int[ch] for ch in text])
        print(encoded[:100])

        def one_hot_encode(arr, n_labels):
            one_hot = np.zeros((arr.size, n_labels), dtype=np.float32)
            one_hot[np.arange(one_hot.shape[0]), arr.flatten()] = 1.
            one_hot = one_hot.reshape((*arr.shape, n_labels))
            return one_hot

        test_seq = np.array([[3, 5, 1]])
        one_hot = one_hot_encode(test_seq, 8)
        print(one_hot)

        def get_batches(arr, batch_size, seq_length):
            batch_size_total = batch_size * seq_length
            n_batches = len(arr) // batch_size_total
            arr = arr[:n_batches * batch_size_total]
            arr = arr.reshape((batch_size, -1))
            for n in range(0, arr.shape[1], seq_length):
                x = arr[:, n:n + seq_length]
                y = np.zeros_like(x)
                try:
                    y[:, :-1], y[:, -1] = x[:, 1:], arr[:, n + seq_length]
                except IndexError:
                    y[:, :-1], y[:, -1] = x[:, 1:], arr[:, 0]
                yield x, y

        batches = get_batches(encoded, 8, 50)
        x, y = next(batches)
        print('x\n', x[:10, :10])
        print('\ny\n', y[:10, :10])
        train_on_gpu = torch.cuda.is_available()

        class CharRNN(nn.Module):
            def __init__(self, tokens, n_hidden=256, n_layers=2, drop_prob=0.5, lr=0.001):
                super().__init__()
                self.drop_prob = drop_prob
                self.n_layers = n_layers
                self.n_hidden = n_hidden
                self.lr = lr
                self.chars = tokens
                self.int2char = dict(enumerate(self.chars))
                self.char2int = {ch: ii for ii, ch in self.int2char.items()}
                self.lstm = nn.LSTM(len(self.chars), n_hidden, n_layers, dropout=drop_prob, batch_first=True)
                self.dropout = nn.Dropout(drop_prob)
                self.fc = nn.Linear(n_hidden, len(self.chars))

            def forward(self, x, hidden):
                r_output, hidden = self.lstm(x, hidden)
                out = self.dropout(r_output)
                out = out.contiguous().view(-1, self.n_hidden)
                out = self.fc(out)
                return out, hidden

            def init_hidden(self, batch_size):
                weight = next(self.parameters()).data
                if (train_on_gpu):
                    hidden = (weight.new(self.n_layers, batch_size, self.n_hidden).zero_().cuda(),
                              weight.new(self.n_layers, batch_size, self.n_hidden).zero_().cuda())
                else:
                    hidden = (weight.new(self.n_layers, batch_size, self.n_hidden).zero_(),
                              weight.new(self.n_layers, batch_size, self.n_hidden).zero_())
                return hidden

        def train(net, data, epochs=10, batch_size=10, seq_length=50, lr=0.001, clip=5, val_frac=0.1, print_every=10):
            net.train()
            opt = torch.optim.Adam(net.parameters(), lr=lr)
            criterion = nn.CrossEntropyLoss()
            val_idx = int(len(data) * (1 - val_frac))
            data, val_data = data[:val_idx], data[val_idx:]
            if (train_on_gpu):
                net.cuda()
            counter = 0
            n_chars = len(net.chars)
            for e in range(epochs):
                h = net.init_hidden(batch_size)
                for x, y in get_batches(data, batch_size, seq_length):
                    counter += 1
                    x = one_hot_encode(x, n_chars)
                    inputs, targets = torch.from_numpy(x), torch.from_numpy(y)
                    if (train_on_gpu):
                        inputs, targets = inputs.cuda(), targets.cuda()
                    h = tuple([each.data for each in h])
                    net.zero_grad()
                    output, h = net(inputs, h)
                    loss = criterion(output, targets.view(batch_size * seq_length).long())
                    loss.backward()
                    nn.utils.clip_grad_norm_(net.parameters(), clip)
                    opt.step()
                    if counter % print_every == 0:
                        val_h = net.init_hidden(batch_size)
                        val_losses = []
                        net.eval()
                        for x, y in get_batches(val_data, batch_size, seq_length):
                            x = one_hot_encode(x, n_chars)
                            x, y = torch.from_numpy(x), torch.from_numpy(y)
                            val_h = tuple([each.data for each in val_h])
                            inputs, targets = x, y
                            if (train_on_gpu):
                                inputs, targets = inputs.cuda(), targets.cuda()
                            output, val_h = net(inputs, val_h)
                            val_loss = criterion(output, targets.view(batch_size * seq_length).long())
                            val_losses.append(val_loss.item())
                        net.train()
                        print("Epoch: {}/{}...".format(e + 1, epochs),
                              "Step: {}...".format(counter),
                              "Loss: {:.4f}...".format(loss.item()),
                              "Val Loss: {:.4f}".format(np.mean(val_losses)))

        n_hidden = 64
        n_layers = 2
        net = CharRNN(chars, n_hidden, n_layers)
        print(net)
        batch_size = 4
        seq_length = 25
        n_epochs = epochs
        train(net, encoded, epochs=n_epochs, batch_size=batch_size, seq_length=seq_length, lr=0.01, print_every=4)

        model_name = tmp / 'rnn_x_epoch.net'
        checkpoint = {'n_hidden': net.n_hidden,
                      'n_layers': net.n_layers,
                      'state_dict': net.state_dict(),
                      'tokens': net.chars}
        with open(model_name, 'wb') as f:
            torch.save(checkpoint, f)

        def predict(net, char, h=None, top_k=None):
            x = np.array([[net.char2int[char]]])
            x = one_hot_encode(x, len(net.chars))
            inputs = torch.from_numpy(x)
            if (train_on_gpu):
                inputs = inputs.cuda()
            h = tuple([each.data for each in h])
            out, h = net(inputs, h)
            p = F.softmax(out, dim=1).data
            if (train_on_gpu):
                p = p.cpu()
            if top_k is None:
                top_ch = np.arange(len(net.chars))
            else:
                p, top_ch = p.topk(top_k)
                top_ch = top_ch.numpy().squeeze()
            p = p.numpy().squeeze()
            char = np.random.choice(top_ch, p=p / p.sum())
            return net.int2char[char], h

        def sample(net, size, prime='The', top_k=None):
            if (train_on_gpu):
                net.cuda()
            else:
                net.cpu()
            net.eval()
            chars = [ch for ch in prime]
            h = net.init_hidden(1)
            for ch in prime:
                char, h = predict(net, ch, h, top_k=top_k)
            chars.append(char)
            for ii in range(size):
                char, h = predict(net, chars[-1], h, top_k=top_k)
                chars.append(char)
            return ''.join(chars)

        np.random.seed(3)
        print(sample(net, 60, prime='The', top_k=5))
        with open(model_name, 'rb') as f:
            checkpoint = torch.load(f)
        loaded = CharRNN(checkpoint['tokens'], n_hidden=checkpoint['n_hidden'], n_layers=checkpoint['n_layers'])
        loaded.load_state_dict(checkpoint['state_dict'])
        np.random.seed(3)
        print(sample(loaded, 60, top_k=5, prime="Happy families"))
        res["fc"] = numpy_of(loaded.fc.weight)
        res["tokens_type"] = type(checkpoint['tokens']).__name__
    res["printed"] = printed_lines(out)
    return res


def sentiment_rnn(torch, init=None, epochs=2):
    nn = torch.nn
    res = {}
    with captured_run(torch) as out:
        reviews, labels = local_reviews(250, 0)
        print(reviews[:200])
        reviews = reviews.lower()
        all_text = ''.join([c for c in reviews if c not in punctuation])
        reviews_split = all_text.split('\n')
        all_text = ' '.join(reviews_split)
        words = all_text.split()
        counts = Counter(words)
        vocab = sorted(counts, key=counts.get, reverse=True)
        vocab_to_int = {word: ii for ii, word in enumerate(vocab, 1)}
        reviews_ints = []
        for review in reviews_split:
            reviews_ints.append([vocab_to_int[word] for word in review.split()])
        print('Unique words: ', len((vocab_to_int)))
        print('Tokenized review: \n', reviews_ints[:1])
        labels_split = labels.split('\n')
        encoded_labels = np.array([1 if label == 'positive' else 0 for label in labels_split])
        review_lens = Counter([len(x) for x in reviews_ints])
        print("Zero-length reviews: {}".format(review_lens[0]))
        print("Maximum review length: {}".format(max(review_lens)))
        non_zero_idx = [ii for ii, review in enumerate(reviews_ints) if len(review) != 0]
        reviews_ints = [reviews_ints[ii] for ii in non_zero_idx]
        encoded_labels = np.array([encoded_labels[ii] for ii in non_zero_idx])

        def pad_features(reviews_ints, seq_length):
            features = np.zeros((len(reviews_ints), seq_length), dtype=int)
            for i, row in enumerate(reviews_ints):
                features[i, -len(row):] = np.array(row)[:seq_length]
            return features

        seq_length = 20
        features = pad_features(reviews_ints, seq_length=seq_length)
        assert len(features) == len(reviews_ints), "Your features should have as many rows as reviews."
        assert len(features[0]) == seq_length, "Each feature row should contain seq_length values."
        print(features[:3, :10])
        split_frac = 0.8
        split_idx = int(len(features) * split_frac)
        train_x, remaining_x = features[:split_idx], features[split_idx:]
        train_y, remaining_y = encoded_labels[:split_idx], encoded_labels[split_idx:]
        test_idx = int(len(remaining_x) * 0.5)
        val_x, test_x = remaining_x[:test_idx], remaining_x[test_idx:]
        val_y, test_y = remaining_y[:test_idx], remaining_y[test_idx:]
        print("\t\t\tFeature Shapes:")
        print("Train set: \t\t{}".format(train_x.shape),
              "\nValidation set: \t{}".format(val_x.shape),
              "\nTest set: \t\t{}".format(test_x.shape))
        TensorDataset, DataLoader = torch.utils.data.TensorDataset, torch.utils.data.DataLoader
        train_data = TensorDataset(torch.from_numpy(train_x), torch.from_numpy(train_y))
        valid_data = TensorDataset(torch.from_numpy(val_x), torch.from_numpy(val_y))
        test_data = TensorDataset(torch.from_numpy(test_x), torch.from_numpy(test_y))
        batch_size = 25
        train_loader = DataLoader(train_data, shuffle=True, batch_size=batch_size)
        valid_loader = DataLoader(valid_data, shuffle=True, batch_size=batch_size)
        test_loader = DataLoader(test_data, shuffle=True, batch_size=batch_size)
        dataiter = iter(train_loader)
        sample_x, sample_y = next(dataiter)
        print('Sample input size: ', sample_x.size())
        print('Sample input: \n', sample_x[:2])
        print('Sample label size: ', sample_y.size())
        print('Sample label: \n', sample_y)
        train_on_gpu = torch.cuda.is_available()

        class SentimentRNN(nn.Module):
            def __init__(self, vocab_size, output_size, embedding_dim, hidden_dim, n_layers, drop_prob=0.5):
                super(SentimentRNN, self).__init__()
                self.output_size = output_size
                self.n_layers = n_layers
                self.hidden_dim = hidden_dim
                self.embedding = nn.Embedding(vocab_size, embedding_dim)
                self.lstm = nn.LSTM(embedding_dim, hidden_dim, n_layers, dropout=drop_prob, batch_first=True)
                self.dropout = nn.Dropout(0.3)
                self.fc = nn.Linear(hidden_dim, output_size)
                self.sig = nn.Sigmoid()

            def forward(self, x, hidden):
                batch_size = x.size(0)
                embeds = self.embedding(x)
                lstm_out, hidden = self.lstm(embeds, hidden)
                lstm_out = lstm_out.contiguous().view(-1, self.hidden_dim)
                out = self.dropout(lstm_out)
                out = self.fc(out)
                sig_out = self.sig(out)
                sig_out = sig_out.view(batch_size, -1)
                sig_out = sig_out[:, -1]
                return sig_out, hidden

            def init_hidden(self, batch_size):
                weight = next(self.parameters()).data
                if (train_on_gpu):
                    hidden = (weight.new(self.n_layers, batch_size, self.hidden_dim).zero_().cuda(),
                              weight.new(self.n_layers, batch_size, self.hidden_dim).zero_().cuda())
                else:
                    hidden = (weight.new(self.n_layers, batch_size, self.hidden_dim).zero_(),
                              weight.new(self.n_layers, batch_size, self.hidden_dim).zero_())
                return hidden

        vocab_size = len(vocab_to_int) + 1
        output_size = 1
        embedding_dim = 32
        hidden_dim = 48
        n_layers = 2
        net = SentimentRNN(vocab_size, output_size, embedding_dim, hidden_dim, n_layers)
        print(net)
        lr = 0.001
        criterion = nn.BCELoss()
        optimizer = torch.optim.Adam(net.parameters(), lr=lr)
        counter = 0
        print_every = 4
        clip = 5
        net.train()
        for e in range(epochs):
            h = net.init_hidden(batch_size)
            for inputs, labels in train_loader:
                counter += 1
                h = tuple([each.data for each in h])
                net.zero_grad()
                output, h = net(inputs, h)
                loss = criterion(output.squeeze(), labels.float())
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), clip)
                optimizer.step()
                if counter % print_every == 0:
                    val_h = net.init_hidden(batch_size)
                    val_losses = []
                    net.eval()
                    for inputs, labels in valid_loader:
                        val_h = tuple([each.data for each in val_h])
                        output, val_h = net(inputs, val_h)
                        val_loss = criterion(output.squeeze(), labels.float())
                        val_losses.append(val_loss.item())
                    net.train()
                    print("Epoch: {}/{}...".format(e + 1, epochs),
                          "Step: {}...".format(counter),
                          "Loss: {:.6f}...".format(loss.item()),
                          "Val Loss: {:.6f}".format(np.mean(val_losses)))
        test_losses = []
        num_correct = 0
        h = net.init_hidden(batch_size)
        net.eval()
        for inputs, labels in test_loader:
            h = tuple([each.data for each in h])
            output, h = net(inputs, h)
            test_loss = criterion(output.squeeze(), labels.float())
            test_losses.append(test_loss.item())
            pred = torch.round(output.squeeze())
            correct_tensor = pred.eq(labels.float().view_as(pred))
            correct = np.squeeze(correct_tensor.numpy()) if not train_on_gpu else np.squeeze(correct_tensor.cpu().numpy())
            num_correct += np.sum(correct)
        print("Test loss: {:.3f}".format(np.mean(test_losses)))
        test_acc = num_correct / len(test_loader.dataset)
        print("Test accuracy: {:.3f}".format(test_acc))

        def tokenize_review(test_review):
            test_review = test_review.lower()
            test_text = ''.join([c for c in test_review if c not in punctuation])
            test_words = test_text.split()
            test_ints = []
            test_ints.append([vocab_to_int.get(word, 0) for word in test_words])
            return test_ints

        def predict(net, test_review, sequence_length=200):
            net.eval()
            test_ints = tokenize_review(test_review)
            seq_length = sequence_length
            features = pad_features(test_ints, seq_length)
            feature_tensor = torch.from_numpy(features)
            batch_size = feature_tensor.size(0)
            h = net.init_hidden(batch_size)
            if (train_on_gpu):
                feature_tensor = feature_tensor.cuda()
            output, h = net(feature_tensor, h)
            pred = torch.round(output.squeeze())
            print('Prediction value, pre-rounding: {:.6f}'.format(output.item()))
            if (pred.item() == 1):
                print("Positive review detected!")
            else:
                print("Negative review detected.")
            return output.item()

        test_review_neg = 'The worst movie I have seen; acting was terrible and I want my money back. This movie had bad acting and the dialogue was slow.'
        test_review_pos = 'This movie had the best acting and the dialogue was so good. I loved it.'
        res["predictions"] = [predict(net, test_review_neg, seq_length), predict(net, test_review_pos, seq_length)]
        res["test_acc"] = float(test_acc)
    res["printed"] = printed_lines(out)
    return res


def test_udacity_char_rnn(tmp_path):
    for lib in ("torch", "minitorch"):
        (tmp_path / lib).mkdir()
    ref, got = compare_program(lambda torch, init=None: char_rnn(torch, tmp=tmp_path / torch.__name__),
                               rtol=1e-3, atol=1e-4)
    assert got["tokens_type"] == "tuple"
    assert any(line.startswith("The") for line in got["printed"])


def test_udacity_sentiment_rnn():
    compare_program(sentiment_rnn, rtol=1e-3, atol=1e-4)

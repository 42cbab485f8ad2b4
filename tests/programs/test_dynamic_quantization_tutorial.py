"""PyTorch's tutorial "(beta) Dynamic Quantization on an LSTM Word Language Model", as published:
the LSTMModel of the word_language_model example (Dropout, Embedding, a multi-layer LSTM, a Linear
decoder, init_weights, init_hidden by weight.new_zeros), the Dictionary and Corpus that tokenize
text files into torch.cat of int64 tensors, a model loaded from a saved state_dict with
torch.load(map_location=torch.device('cpu')), batchify / get_batch / repackage_hidden and the
evaluate loop, then torch.quantization.quantize_dynamic(model, {nn.LSTM, nn.Linear},
dtype=torch.qint8), print(quantized_model), print_size_of_model (torch.save of the state_dict
and os.path.getsize), torch.set_num_threads(1) and time_model_evaluation for both models.

The corpus is a small local text in place of Wikitext-2, and the model is small; the pretrained
weights are the PyTorch run's after a few training steps, saved and loaded as the tutorial loads
its checkpoint. Compared with PyTorch: everything printed (but the times), the size ratio, the
losses of both models and the quantized model's outputs."""
from __future__ import annotations

import contextlib
import io
import os
import time

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from test_word_lm import batchify, get_batch_bptt

TEXT = {
    "train": ["the cat sat on the mat", "the dog sat on the log", "a bird sang in the tall tree",
              "the cat saw the bird and the dog saw the cat", "a dog and a cat sat in the sun",
              "the bird flew over the tree and the mat"] * 4,
    "valid": ["the dog saw the bird in the tree", "a cat sat on the log"],
    "test": ["the bird sat on the mat and the cat sang", "a dog saw the tall tree in the sun",
             "the cat and the dog sat on the log"],
}


def write_corpus(folder: str) -> None:
    for split, lines in TEXT.items():
        with open(os.path.join(folder, f"{split}.txt"), "w", encoding="utf8") as f:
            f.write("\n".join(lines) + "\n")


def dynamic_quantization_tutorial(torch, init=None, data_dir=".", train_steps=8):
    nn = torch.nn
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    out = io.StringIO()
    result = {}

    # 1. Define the model
    class LSTMModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""

        def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
            super(LSTMModel, self).__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)

            self.init_weights()

            self.nhid = nhid
            self.nlayers = nlayers

        def init_weights(self):
            initrange = 0.1
            self.encoder.weight.data.uniform_(-initrange, initrange)
            self.decoder.bias.data.zero_()
            self.decoder.weight.data.uniform_(-initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            return decoded, hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))

    # 2. Load in the text data
    class Dictionary(object):
        def __init__(self):
            self.word2idx = {}
            self.idx2word = []

        def add_word(self, word):
            if word not in self.word2idx:
                self.idx2word.append(word)
                self.word2idx[word] = len(self.idx2word) - 1
            return self.word2idx[word]

        def __len__(self):
            return len(self.idx2word)

    class Corpus(object):
        def __init__(self, path):
            self.dictionary = Dictionary()
            self.train = self.tokenize(os.path.join(path, 'train.txt'))
            self.valid = self.tokenize(os.path.join(path, 'valid.txt'))
            self.test = self.tokenize(os.path.join(path, 'test.txt'))

        def tokenize(self, path):
            """Tokenizes a text file."""
            assert os.path.exists(path)
            # Add words to the dictionary
            with open(path, 'r', encoding="utf8") as f:
                for line in f:
                    words = line.split() + ['<eos>']
                    for word in words:
                        self.dictionary.add_word(word)

            # Tokenize file content
            with open(path, 'r', encoding="utf8") as f:
                idss = []
                for line in f:
                    words = line.split() + ['<eos>']
                    ids = []
                    for word in words:
                        ids.append(self.dictionary.word2idx[word])
                    idss.append(torch.tensor(ids).type(torch.int64))
                ids = torch.cat(idss)

            return ids

    corpus = Corpus(data_dir)

    # 3. Load the pretrained model (here: trained a few steps, saved, loaded as the tutorial loads it)
    ntokens = len(corpus.dictionary)
    model = LSTMModel(ntoken=ntokens, ninp=16, nhid=32, nlayers=2, dropout=0.0)
    start_from(torch, model, init, result)
    bptt = 6

    # batchify and get_batch as the tutorial's (the word_language_model example's, shared with
    # test_word_lm): the ids cut into bsz columns; bptt rows and the next rows as targets
    def get_batch(source, i):
        return get_batch_bptt(source, i, bptt)

    def repackage_hidden(h):
        """Wraps hidden states in new Tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        else:
            return tuple(repackage_hidden(v) for v in h)

    criterion = nn.CrossEntropyLoss()
    train_data = batchify(corpus.train, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    model.train()
    hidden = model.init_hidden(4)
    losses = []
    for step, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        if step == train_steps:
            break
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, ntokens), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    checkpoint = os.path.join(data_dir, f"word_language_model_quantize_{torch.__name__}.pth")
    torch.save(model.state_dict(), checkpoint)

    model = LSTMModel(ntoken=ntokens, ninp=16, nhid=32, nlayers=2, dropout=0.5)
    model.load_state_dict(torch.load(checkpoint, map_location=torch.device('cpu')))
    model.eval()
    with contextlib.redirect_stdout(out):
        print(model)

    # 4. Test dynamic quantization
    test_data = batchify(corpus.test, 1)
    eval_batch_size = 1

    def evaluate(model_, data_source):
        # Turn on evaluation mode which disables dropout.
        model_.eval()
        total_loss = 0.
        hidden = model_.init_hidden(eval_batch_size)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                output, hidden = model_(data, hidden)
                hidden = repackage_hidden(hidden)
                output_flat = output.view(-1, ntokens)
                total_loss += len(data) * criterion(output_flat, targets).item()
        return total_loss / (len(data_source) - 1)

    quantized_model = torch.quantization.quantize_dynamic(model, {nn.LSTM, nn.Linear}, dtype=torch.qint8)
    with contextlib.redirect_stdout(out):
        print(quantized_model)

    sizes = []

    def print_size_of_model(model):
        path = os.path.join(data_dir, "temp.p")
        torch.save(model.state_dict(), path)
        sizes.append(os.path.getsize(path))
        print('Size (MB):', os.path.getsize(path) / 1e6)
        os.remove(path)

    with contextlib.redirect_stdout(io.StringIO()) as size_lines:
        print_size_of_model(model)
        print_size_of_model(quantized_model)

    torch.set_num_threads(1)
    loss_lines = []

    def time_model_evaluation(model, test_data):
        s = time.time()
        loss = evaluate(model, test_data)
        elapsed = time.time() - s
        text = '''loss: {0:.3f}\nelapsed time (seconds): {1:.1f}'''.format(loss, elapsed)
        loss_lines.append(text.splitlines()[0])
        return loss

    try:
        float_loss = time_model_evaluation(model, test_data)
        quantized_loss = time_model_evaluation(quantized_model, test_data)
    finally:
        torch.set_num_threads(threads)

    with torch.no_grad():
        data, _ = get_batch(test_data, 0)
        q_out, (q_h, q_c) = quantized_model(data, quantized_model.init_hidden(1))
    result.update(
        printed=out.getvalue().replace("minitorch.", "torch."), losses=losses, loss_lines=loss_lines,
        float_loss=float_loss, quantized_loss=quantized_loss,
        quantized_output=numpy_of(q_out), quantized_state=[numpy_of(q_h), numpy_of(q_c)],
        quantized_weight=numpy_of(quantized_model.decoder.weight().int_repr()),
        own={"sizes": sizes, "size_ratio": sizes[1] / sizes[0], "size_lines": size_lines.getvalue()})
    return result


def test_dynamic_quantization_tutorial(tmp_path):
    write_corpus(str(tmp_path))
    ref, got = compare_program(dynamic_quantization_tutorial, data_dir=str(tmp_path), rtol=1e-4, atol=2e-5)
    # the quantized model's file is about a third of the float one's (its float Embedding stays);
    # the pickles differ a little (PyTorch's names each bias as a Parameter), the ratio hardly
    ratio, ref_ratio = got["own"]["size_ratio"], ref["own"]["size_ratio"]
    assert 0.25 < ratio < 0.6 and abs(ratio - ref_ratio) < 0.02, (got["own"]["sizes"], ref["own"]["sizes"])
    assert got["own"]["size_lines"].count("Size (MB):") == 2
    assert "DynamicQuantizedLSTM(16, 32, num_layers=2, dropout=0.5)" in got["printed"]
    assert "DynamicQuantizedLinear(in_features=32, out_features=" in got["printed"]
    assert abs(got["quantized_loss"] - got["float_loss"]) < 0.05  # quantization costs little accuracy
    assert ref["losses"][-1] < ref["losses"][0]


def dynamic_quantization_recipe(torch, init=None, data_dir="."):
    """PyTorch's recipe "Dynamic Quantization" (recipes/recipes/dynamic_quantization), as published:
    an LSTM wrapper module, quantize_dynamic, the sizes of both, and the mean absolute outputs and
    their difference."""
    nn = torch.nn
    result = {}

    class lstm_for_demonstration(nn.Module):
        """Elementary Long Short Term Memory style model which simply wraps nn.LSTM
           Not to be used for anything other than demonstration.
        """
        def __init__(self, in_dim, out_dim, depth):
            super(lstm_for_demonstration, self).__init__()
            self.lstm = nn.LSTM(in_dim, out_dim, depth)

        def forward(self, inputs, hidden):
            out, hidden = self.lstm(inputs, hidden)
            return out, hidden

    torch.manual_seed(29592)  # set the seed for reproducibility

    # shape parameters
    model_dimension = 8
    sequence_length = 20
    batch_size = 1
    lstm_depth = 1

    # random data for input (drawn from NumPy: the same in both runs)
    rng = np.random.default_rng(29592)
    inputs = torch.tensor(rng.normal(size=(sequence_length, batch_size, model_dimension)).astype(np.float32))
    hidden = (torch.tensor(rng.normal(size=(lstm_depth, batch_size, model_dimension)).astype(np.float32)),
              torch.tensor(rng.normal(size=(lstm_depth, batch_size, model_dimension)).astype(np.float32)))

    # here is our floating point instance
    float_lstm = lstm_for_demonstration(model_dimension, model_dimension, lstm_depth)
    start_from(torch, float_lstm, init, result)

    # this is the call that does the work
    quantized_lstm = torch.quantization.quantize_dynamic(
        float_lstm, {nn.LSTM, nn.Linear}, dtype=torch.qint8
    )

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        # show the changes that were made
        print('Here is the floating point version of this module:')
        print(float_lstm)
        print('')
        print('and now the quantized version:')
        print(quantized_lstm)

    def print_size_of_model(model, label=""):
        path = os.path.join(data_dir, "temp.p")
        torch.save(model.state_dict(), path)
        size = os.path.getsize(path)
        os.remove(path)
        return size

    # compare the sizes
    f = print_size_of_model(float_lstm, "fp32")
    q = print_size_of_model(quantized_lstm, "int8")

    # run the float model
    out1, hidden1 = float_lstm(inputs, hidden)
    mag1 = torch.mean(abs(out1)).item()
    # run the quantized model
    out2, hidden2 = quantized_lstm(inputs, hidden)
    mag2 = torch.mean(abs(out2)).item()
    # compare them
    Difference = torch.mean(abs(out1 - out2)).item()
    result.update(printed=out.getvalue().replace("minitorch.", "torch."), mag1=mag1, mag2=mag2,
                  difference=Difference, out2=numpy_of(out2), hidden2=[numpy_of(h) for h in hidden2],
                  own={"sizes": (f, q)})
    return result


def test_dynamic_quantization_recipe(tmp_path):
    ref, got = compare_program(dynamic_quantization_recipe, data_dir=str(tmp_path), rtol=1e-4, atol=2e-5)
    assert "DynamicQuantizedLSTM(8, 8)" in got["printed"]
    assert 0 < got["difference"] < 0.05 * got["mag1"]  # a small difference, as the recipe shows
    f, q = got["own"]["sizes"]
    tf, tq = ref["own"]["sizes"]
    assert q < f and abs(q / f - tq / tf) < 0.05

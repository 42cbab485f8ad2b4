"""The PyTorch examples' word_language_model with --model Transformer and with --model GRU --tied,
then generate.py, as model.py, main.py and generate.py write them: TransformerModel subclasses
nn.Transformer (its decoder attribute replaced by a Linear), PositionalEncoding fills a buffer
through pe[:, 0::2] = torch.sin(...), the causal mask is torch.log(torch.tril(torch.ones(sz, sz))),
outputs are F.log_softmax; main.py's train() with output.view(-1, ntokens), NLLLoss,
clip_grad_norm_, p.data.add_(p.grad, alpha=-lr), the '| epoch ...' log line, evaluate() and the
whole model saved by torch.save(model, f) and reloaded by torch.load(f, weights_only=False);
generate.py's input from torch.randint(ntokens, (1, 1), dtype=torch.long), word weights
output[-1].squeeze().div(temperature).exp(), torch.multinomial(word_weights, 1)[0],
torch.Tensor([[word_idx]]).long() concatenated for the Transformer and input.fill_(word_idx) for
the RNN. Dropout is on (0.2) and both libraries draw from torch.manual_seed(1111)."""
import io
import math
import time
from contextlib import redirect_stdout

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from
from test_word_lm import WORDS, clipped_sgd_step, model_py


def word_lm(torch, init=None, model_type="Transformer", epochs=2, bptt=6, batch_size=4, words=12, temperature=1.0):
    nn = torch.nn
    torch.manual_seed(1111)
    RNNModel, TransformerModel = model_py(torch)
    idx2word, word2idx = [], {}
    for w in WORDS + ["<eos>"]:
        if w not in word2idx:
            idx2word.append(w)
            word2idx[w] = len(idx2word) - 1
    ids = torch.tensor([word2idx[w] for w in (WORDS + ["<eos>"]) * 3]).type(torch.int64)
    ntokens = len(idx2word)

    def batchify(data, bsz):
        # Work out how cleanly we can divide the dataset into bsz parts.
        nbatch = data.size(0) // bsz
        # Trim off any extra elements that wouldn't cleanly fit (remainders).
        data = data.narrow(0, 0, nbatch * bsz)
        # Evenly divide the data across the bsz batches.
        data = data.view(bsz, -1).t().contiguous()
        return data

    def repackage_hidden(h):
        """Wraps hidden states in new Tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        else:
            return tuple(repackage_hidden(v) for v in h)

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].view(-1)
        return data, target

    train_data = batchify(ids, batch_size)
    val_data = batchify(ids[5:], 2)
    if model_type == 'Transformer':
        model = TransformerModel(ntokens, 16, 2, 32, 2, 0.2)
    else:
        model = RNNModel(model_type, ntokens, 16, 16, 2, 0.2, tie_weights=True)
    result = {}
    start_from(torch, model, init, result)
    criterion = nn.NLLLoss()
    lr, clip, log_interval = 5.0, 0.25, 3

    def evaluate(data_source):
        # Turn on evaluation mode which disables dropout.
        model.eval()
        total_loss = 0.
        if model_type != 'Transformer':
            hidden = model.init_hidden(data_source.size(1))
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                if model_type == 'Transformer':
                    output = model(data)
                    output = output.view(-1, ntokens)
                else:
                    output, hidden = model(data, hidden)
                    hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    def train():
        # Turn on training mode which enables dropout.
        model.train()
        total_loss = 0.
        start_time = time.time()
        if model_type != 'Transformer':
            hidden = model.init_hidden(batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            # Starting each batch, we detach the hidden state from how it was previously produced.
            model.zero_grad()
            if model_type == 'Transformer':
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            clipped_sgd_step(torch, model, loss, clip, lr)
            total_loss += loss.item()
            losses.append(loss.item())
            if batch % log_interval == 0 and batch > 0:
                cur_loss = total_loss / log_interval
                elapsed = time.time() - start_time
                print('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | ms/batch {:5.2f} | '
                      'loss {:5.2f} | ppl {:8.2f}'.format(epoch, batch, len(train_data) // bptt, lr,
                                                          elapsed * 1000 / log_interval, cur_loss,
                                                          math.exp(cur_loss)))
                total_loss = 0
                start_time = time.time()

    losses, val_losses, best_val_loss = [], [], None
    saved = io.BytesIO()
    log = io.StringIO()
    with redirect_stdout(log):
        for epoch in range(1, epochs + 1):
            train()
            val_loss = evaluate(val_data)
            val_losses.append(val_loss)
            if not best_val_loss or val_loss < best_val_loss:
                saved.seek(0)
                torch.save(model, saved)
                best_val_loss = val_loss
            else:
                # Anneal the learning rate if no improvement has been seen in the validation dataset.
                lr /= 4.0
    saved.seek(0)
    model = torch.load(saved, weights_only=False)
    if model_type in ['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU']:
        model.rnn.flatten_parameters()
    test_loss = evaluate(val_data)

    # generate.py
    model.eval()
    is_transformer_model = hasattr(model, 'model_type') and model.model_type == 'Transformer'
    if not is_transformer_model:
        hidden = model.init_hidden(1)
    torch.manual_seed(1111)
    input = torch.randint(ntokens, (1, 1), dtype=torch.long)
    generated, weights = [], []
    with torch.no_grad():  # no tracking history
        for i in range(words):
            if is_transformer_model:
                output = model(input, False)
                word_weights = output[-1].squeeze().div(temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                word_tensor = torch.Tensor([[word_idx]]).long()
                input = torch.cat([input, word_tensor], 0)
            else:
                output, hidden = model(input, hidden)
                word_weights = output.squeeze().div(temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                input.fill_(word_idx)
            generated.append(idx2word[word_idx])
            weights.append(numpy_of(word_weights))
    result.update(losses=losses, val_losses=val_losses, test_loss=test_loss, log_lines=log.getvalue().count("| epoch"),
                  reloaded_type=type(model).__name__.rsplit("_", 1)[0], first_weights=weights[0], generated=generated)
    return result


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")  # nn.Transformer without batch_first
@pytest.mark.parametrize("model_type", ["Transformer", "GRU"])
def test_word_language_model_transformer_and_tied_gru_generate(model_type):
    ref, got = compare_program(word_lm, model_type=model_type)
    assert ref["losses"][-1] < ref["losses"][0]
    assert got["log_lines"] == 2  # batch 3 of each epoch logs (log_interval 3)
    assert got["reloaded_type"].startswith("Transformer" if model_type == "Transformer" else "RNNModel")
    assert np.isclose(got["first_weights"].sum(), 1.0, rtol=1e-4)

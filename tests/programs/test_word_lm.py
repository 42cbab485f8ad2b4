"""A word-level language model in the style of the PyTorch examples' word_language_model: a
corpus turned into ids, batchify into columns, get_batch by bptt, an RNNModel (Embedding, LSTM,
Dropout, a decoder Linear with tied weights, init_weights with uniform_/zeros_), hidden states
repackaged by detach between batches, clip_grad_norm_, a hand-written SGD update
(p.data.add_(p.grad, alpha=-lr)), evaluation perplexity, the best model saved with torch.save of
its state_dict and loaded back with torch.load into a fresh model."""
import io
import math
import os

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

WORDS = ("the cat sat on the mat and the dog sat on the log while a bird sang in the tree "
         "and the cat saw the bird and the dog saw the cat").split()


def batchify(data, bsz):
    """main.py's batchify: the ids cut into bsz columns (trimmed to a multiple of bsz)."""
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch_bptt(source, i, bptt):
    """main.py's get_batch: bptt rows from row i, and the next rows' ids flattened as targets."""
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def clipped_sgd_step(torch, model, loss, clip, lr):
    """main.py's update: backward, clip_grad_norm_ (against exploding gradients in RNNs), then
    p.data.add_(p.grad, alpha=-lr)."""
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)


def model_py(torch):
    """model.py's classes for one library. They are bound at this module's top level under a name
    per library, so torch.save(model) pickles them as it pickles model.py's classes."""
    name = torch.__name__
    if f"TransformerModel_{name}" in globals():
        return globals()[f"RNNModel_{name}"], globals()[f"TransformerModel_{name}"]
    nn, F = torch.nn, torch.nn.functional

    class RNNModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""

        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
            super(RNNModel, self).__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            if tie_weights:
                if nhid != ninp:
                    raise ValueError('When using the tied flag, nhid must be equal to emsize')
                self.decoder.weight = self.encoder.weight
            self.init_weights()
            self.rnn_type = rnn_type
            self.nhid = nhid
            self.nlayers = nlayers

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            decoded = decoded.view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == 'LSTM':
                return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                        weight.new_zeros(self.nlayers, bsz, self.nhid))
            else:
                return weight.new_zeros(self.nlayers, bsz, self.nhid)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super(PositionalEncoding, self).__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0).transpose(0, 1)
            self.register_buffer('pe', pe)

        def forward(self, x):
            x = x + self.pe[:x.size(0), :]
            return self.dropout(x)

    class TransformerModel(nn.Transformer):
        """Container module with an encoder, a recurrent or transformer module, and a decoder."""

        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                                   num_encoder_layers=nlayers, num_decoder_layers=1,
                                                   dropout=dropout)
            self.model_type = 'Transformer'
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            self.init_weights()

        def _generate_square_subsequent_mask(self, sz):
            return torch.log(torch.tril(torch.ones(sz, sz)))

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, src, has_mask=True):
            if has_mask:
                device = src.device
                if self.src_mask is None or self.src_mask.size(0) != len(src):
                    mask = self._generate_square_subsequent_mask(len(src)).to(device)
                    self.src_mask = mask
            else:
                self.src_mask = None
            src = self.input_emb(src) * math.sqrt(self.ninp)
            src = self.pos_encoder(src)
            output = self.encoder(src, mask=self.src_mask)
            output = self.decoder(output)
            return F.log_softmax(output, dim=-1)

    for cls in (RNNModel, PositionalEncoding, TransformerModel):
        cls.__qualname__ = cls.__name__ = f"{cls.__name__}_{name}"
        globals()[cls.__name__] = cls
    return RNNModel, TransformerModel


def word_lm(torch, init=None, tmp_path=None, epochs=2, bptt=5, batch=4):
    nn = torch.nn
    torch.manual_seed(0)

    class Dictionary:
        def __init__(self):
            self.word2idx, self.idx2word = {}, []

        def add_word(self, word):
            if word not in self.word2idx:
                self.idx2word.append(word)
                self.word2idx[word] = len(self.idx2word) - 1
            return self.word2idx[word]

    dictionary = Dictionary()
    ids = torch.tensor([dictionary.add_word(w) for w in WORDS * 3]).type(torch.int64)
    ntokens = len(dictionary.idx2word)

    def get_batch(source, i):
        return get_batch_bptt(source, i, bptt)

    def repackage_hidden(h):
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    RNNModel, _ = model_py(torch)

    train_data = batchify(ids, batch)
    val_data = batchify(ids[7:], 2)
    model = RNNModel("LSTM", ntokens, 16, 16, 2, dropout=0.0, tie_weights=True)
    result = {}
    start_from(torch, model, init, result)
    criterion = nn.NLLLoss()
    lr, clip = 2.0, 0.25

    def evaluate(data_source):
        model.eval()
        total_loss = 0.0
        hidden = model.init_hidden(data_source.size(1))
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    losses, val_losses, best_val_loss = [], [], None
    os.makedirs(tmp_path, exist_ok=True)
    path = os.path.join(str(tmp_path), "model.pt")
    for epoch in range(epochs):
        model.train()
        hidden = model.init_hidden(batch)
        for batch_idx, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            clipped_sgd_step(torch, model, loss, clip, lr)
            losses.append(loss.item())
        val_loss = evaluate(val_data)
        val_losses.append([val_loss, math.exp(val_loss)])
        if not best_val_loss or val_loss < best_val_loss:
            with open(path, "wb") as f:
                torch.save(model.state_dict(), f)
            best_val_loss = val_loss
        else:
            lr /= 4.0
    fresh = RNNModel("LSTM", ntokens, 16, 16, 2, dropout=0.0, tie_weights=True)
    with open(path, "rb") as f:
        fresh.load_state_dict(torch.load(f, weights_only=True))
    fresh.rnn.flatten_parameters()
    buffer = io.BytesIO()
    torch.save({"epoch": epochs, "model": fresh.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer)
    model = fresh  # evaluate() reads the name model
    result.update(losses=losses, val=np.array(val_losses), reloaded_val=evaluate(val_data), epoch=checkpoint["epoch"],
                  state={k: numpy_of(v) for k, v in checkpoint["model"].items()})
    return result


def test_word_language_model_save_load(tmp_path):
    ref, got = compare_program(word_lm, mt_options={"tmp_path": tmp_path / "mt"}, tmp_path=tmp_path)
    assert ref["losses"][-1] < ref["losses"][0]
    # the reloaded model is the best one saved
    np.testing.assert_allclose(got["reloaded_val"], got["val"][:, 0].min(), rtol=1e-6)

"""The "Language Modeling with nn.Transformer" tutorial as its page runs it, on a local text in
place of WikiText-2 (torchtext's basic_english tokenizer and vocab written out: lower-case split,
ids by first appearance, '<unk>' first): TransformerModel (PositionalEncoding buffer filled by
pe[:, 0, 0::2] = torch.sin(position * div_term), TransformerEncoderLayer(d_model, nhead, d_hid,
dropout) in a TransformerEncoder, embedding * math.sqrt(d_model), init_weights by uniform_ and
zero_, the causal mask from nn.Transformer.generate_square_subsequent_mask(len(src))),
data_process with torch.cat(tuple(filter(lambda t: t.numel() > 0, data))), batchify by
view(bsz, seq_len).t().contiguous(), get_batch by bptt, CrossEntropyLoss, SGD(lr=5.0) with
StepLR(optimizer, 1.0, gamma=0.95), clip_grad_norm_(0.5), the log line with
scheduler.get_last_lr()[0] and math.exp(cur_loss), evaluate() under no_grad weighting by seq_len,
the best model's state_dict saved in a TemporaryDirectory and loaded back, then a test loss.
Dropout stays at the tutorial's 0.2: both libraries draw PyTorch's CPU streams from one seed."""
import math
import os
import time
from collections import Counter
from tempfile import TemporaryDirectory

import numpy as np

from prog_helpers import compare_program, start_from

TEXT = """the quick brown fox jumps over the lazy dog . a stitch in time saves nine .
all that glitters is not gold . the early bird catches the worm . when in rome do as the romans do .
actions speak louder than words . the pen is mightier than the sword . better late than never .
the fox and the dog are friends now . time and tide wait for no man . the bird sings in the morning ."""


def transformer_lm(torch, init=None, epochs=2, dropout=0.2):
    nn = torch.nn
    from_nn = torch.nn
    TransformerEncoder, TransformerEncoderLayer = from_nn.TransformerEncoder, from_nn.TransformerEncoderLayer
    device = torch.device("cpu")

    class TransformerModel(nn.Module):

        def __init__(self, ntoken: int, d_model: int, nhead: int, d_hid: int,
                     nlayers: int, dropout: float = 0.5):
            super().__init__()
            self.model_type = 'Transformer'
            self.pos_encoder = PositionalEncoding(d_model, dropout)
            encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
            self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers)
            self.embedding = nn.Embedding(ntoken, d_model)
            self.d_model = d_model
            self.linear = nn.Linear(d_model, ntoken)

            self.init_weights()

        def init_weights(self) -> None:
            initrange = 0.1
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.linear.bias.data.zero_()
            self.linear.weight.data.uniform_(-initrange, initrange)

        def forward(self, src, src_mask=None):
            src = self.embedding(src) * math.sqrt(self.d_model)
            src = self.pos_encoder(src)
            if src_mask is None:
                src_mask = nn.Transformer.generate_square_subsequent_mask(len(src)).to(device)
            output = self.transformer_encoder(src, src_mask)
            output = self.linear(output)
            return output

    class PositionalEncoding(nn.Module):

        def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)

            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer('pe', pe)

        def forward(self, x):
            x = x + self.pe[:x.size(0)]
            return self.dropout(x)

    # torchtext's get_tokenizer('basic_english') and build_vocab_from_iterator, written out
    def tokenizer(line):
        return line.lower().split()

    counts = Counter(tok for line in TEXT.splitlines() for tok in tokenizer(line))
    itos = ['<unk>'] + sorted(counts, key=lambda w: (-counts[w], w))
    stoi = {w: i for i, w in enumerate(itos)}

    def vocab(tokens):
        return [stoi.get(t, 0) for t in tokens]

    def data_process(raw_text_iter):
        data = [torch.tensor(vocab(tokenizer(item)), dtype=torch.long) for item in raw_text_iter]
        return torch.cat(tuple(filter(lambda t: t.numel() > 0, data)))

    lines = TEXT.splitlines()
    train_iter, val_iter, test_iter = lines + [""] + lines, lines[1:], lines[:2]
    train_data = data_process(train_iter)
    val_data = data_process(val_iter)
    test_data = data_process(test_iter)

    def batchify(data, bsz: int):
        seq_len = data.size(0) // bsz
        data = data[:seq_len * bsz]
        data = data.view(bsz, seq_len).t().contiguous()
        return data.to(device)

    batch_size = 4
    eval_batch_size = 2
    train_data = batchify(train_data, batch_size)  # shape ``[seq_len, batch_size]``
    val_data = batchify(val_data, eval_batch_size)
    test_data = batchify(test_data, eval_batch_size)

    bptt = 7

    def get_batch(source, i: int):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].reshape(-1)
        return data, target

    ntokens = len(itos)  # size of vocabulary
    emsize = 16  # embedding dimension
    d_hid = 32  # dimension of the feedforward network model in ``nn.TransformerEncoder``
    nlayers = 2  # number of ``nn.TransformerEncoderLayer`` in ``nn.TransformerEncoder``
    nhead = 2  # number of heads in ``nn.MultiheadAttention``
    torch.manual_seed(0)
    model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout).to(device)
    result = {"printed": []}
    start_from(torch, model, init, result)
    torch.manual_seed(1)

    criterion = nn.CrossEntropyLoss()
    lr = 5.0  # learning rate
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)

    def train(model) -> None:
        model.train()  # turn on train mode
        total_loss = 0.
        log_interval = 2
        start_time = time.time()

        num_batches = len(train_data) // bptt
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            output = model(data)
            output_flat = output.view(-1, ntokens)
            loss = criterion(output_flat, targets)

            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()

            total_loss += loss.item()
            if batch % log_interval == 0 and batch > 0:
                lr = scheduler.get_last_lr()[0]
                ms_per_batch = (time.time() - start_time) * 1000 / log_interval
                cur_loss = total_loss / log_interval
                ppl = math.exp(cur_loss)
                result["printed"].append(f'| epoch {epoch:3d} | {batch:5d}/{num_batches:5d} batches | '
                                         f'lr {lr:02.2f} | loss {cur_loss:5.2f} | ppl {ppl:8.2f}')
                assert ms_per_batch >= 0
                total_loss = 0
                start_time = time.time()

    def evaluate(model, eval_data) -> float:
        model.eval()  # turn on evaluation mode
        total_loss = 0.
        with torch.no_grad():
            for i in range(0, eval_data.size(0) - 1, bptt):
                data, targets = get_batch(eval_data, i)
                seq_len = data.size(0)
                output = model(data)
                output_flat = output.view(-1, ntokens)
                total_loss += seq_len * criterion(output_flat, targets).item()
        return total_loss / (len(eval_data) - 1)

    best_val_loss = float('inf')
    val_losses = []
    with TemporaryDirectory() as tempdir:
        best_model_params_path = os.path.join(tempdir, "best_model_params.pt")

        for epoch in range(1, epochs + 1):
            train(model)
            val_loss = evaluate(model, val_data)
            val_ppl = math.exp(val_loss)
            val_losses.append((val_loss, val_ppl))

            if val_loss < best_val_loss:
                best_val_loss = val_loss
                torch.save(model.state_dict(), best_model_params_path)

            scheduler.step()
        model.load_state_dict(torch.load(best_model_params_path))  # load best model states

    test_loss = evaluate(model, test_data)
    result.update(val=val_losses, test=(test_loss, math.exp(test_loss)), best=best_val_loss,
                  shapes=[tuple(train_data.shape), tuple(val_data.shape), tuple(test_data.shape)],
                  last_lr=scheduler.get_last_lr())
    return result


def test_transformer_language_model():
    compare_program(transformer_lm, rtol=1e-3, atol=1e-4)

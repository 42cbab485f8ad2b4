"""bentrevett's pytorch-seq2seq notebooks 1 and 2 in their 2023 rewrite, as written: Hugging Face's
bentrevett/multi30k dataset and spaCy tokenizers replaced by a toy German-English corpus split on
spaces, each example a dict of "de_ids"/"en_ids" tensors as dataset.with_format(type="torch")
returns them, and torchtext's build_vocab_from_iterator(min_freq=2, specials=[...]) with
set_default_index, lookup_indices and lookup_tokens replaced by a small Vocab of the same methods;
the best model saved to and loaded from a BytesIO in place of "tut1-model.pt". 1: Sequence to
Sequence Learning with Neural Networks (a 2-layer nn.LSTM encoder returning (hidden, cell) with
dropout between layers, the decoder stepping input.unsqueeze(0) and output.squeeze(0),
outputs = torch.zeros(trg_length, batch_size, trg_vocab_size).to(device) filled by outputs[t] = output,
teacher forcing by random.random(), init_weights of nn.init.uniform_(param.data, -0.08, 0.08) over
named_parameters). 2: Learning Phrase Representations (a GRU encoder whose context vector feeds every
decoder step: torch.cat((embedded, context), dim=2) and torch.cat((embedded.squeeze(0),
hidden.squeeze(0), context.squeeze(0)), dim=1), init of nn.init.normal_(mean=0, std=0.01)). Both:
collate_fn by nn.utils.rnn.pad_sequence(batch_ids, padding_value=pad_index), DataLoader(collate_fn=,
shuffle=True), count_parameters, Adam, CrossEntropyLoss(ignore_index=pad_index) over
output[1:].view(-1, output_dim), clip_grad_norm_, evaluate_fn with teacher_forcing_ratio 0, the
perplexity print through np.exp, translate_sentence by torch.LongTensor(ids).unsqueeze(-1) and
torch.LongTensor([inputs[-1]]). Randomness from seed = 1234 given to random, np.random, torch.manual_seed
and torch.cuda.manual_seed, torch.backends.cudnn.deterministic = True (dropout masks, shuffles and
teacher forcing agree between the libraries)."""
import io
import random

import numpy as np
import pytest

from prog_helpers import Printed, compare_program, numpy_of

DE = "ein zwei drei vier fuenf sechs sieben acht rot blau hund katze".split()
EN = "one two three four five six seven eight red blue dog cat".split()


def corpus(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        idx = rng.integers(0, len(DE), rng.integers(2, 6))
        out.append({"de": " ".join(DE[i] for i in idx), "en": " ".join(EN[i] for i in reversed(idx))})
    return out


class Vocab:  # stands in for torchtext.vocab.build_vocab_from_iterator's Vocab
    def __init__(self, token_lists, min_freq, specials):
        counts = {}
        for tokens in token_lists:
            for t in tokens:
                counts[t] = counts.get(t, 0) + 1
        self.itos = list(specials) + sorted((t for t, c in counts.items() if c >= min_freq and t not in specials),
                                            key=lambda t: (-counts[t], t))
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

    def lookup_tokens(self, indices):
        return [self.itos[i] for i in indices]

    def get_itos(self):
        return self.itos


def seq2seq_notebook(torch, init=None, notebook=1):
    nn = torch.nn
    optim = torch.optim
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    seed = 1234
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True

    train_data, valid_data, test_data = corpus(24, 0), corpus(8, 1), corpus(4, 2)
    max_length = 1_000
    lower = True
    sos_token = "<sos>"
    eos_token = "<eos>"

    def tokenize_example(example, en_nlp, de_nlp, max_length, lower, sos_token, eos_token):
        en_tokens = example["en"].split()[:max_length]  # [token.text for token in en_nlp.tokenizer(...)]
        de_tokens = example["de"].split()[:max_length]
        if lower:
            en_tokens = [token.lower() for token in en_tokens]
            de_tokens = [token.lower() for token in de_tokens]
        en_tokens = [sos_token] + en_tokens + [eos_token]
        de_tokens = [sos_token] + de_tokens + [eos_token]
        return {"en_tokens": en_tokens, "de_tokens": de_tokens}

    fn_kwargs = {"en_nlp": None, "de_nlp": None, "max_length": max_length, "lower": lower,
                 "sos_token": sos_token, "eos_token": eos_token}
    train_data = [{**e, **tokenize_example(e, **fn_kwargs)} for e in train_data]  # train_data.map(...)
    valid_data = [{**e, **tokenize_example(e, **fn_kwargs)} for e in valid_data]
    test_data = [{**e, **tokenize_example(e, **fn_kwargs)} for e in test_data]

    min_freq = 2
    unk_token = "<unk>"
    pad_token = "<pad>"
    special_tokens = [unk_token, pad_token, sos_token, eos_token]
    en_vocab = Vocab([e["en_tokens"] for e in train_data], min_freq=min_freq, specials=special_tokens)
    de_vocab = Vocab([e["de_tokens"] for e in train_data], min_freq=min_freq, specials=special_tokens)
    assert en_vocab[unk_token] == de_vocab[unk_token]
    assert en_vocab[pad_token] == de_vocab[pad_token]
    unk_index = en_vocab[unk_token]
    pad_index = en_vocab[pad_token]
    en_vocab.set_default_index(unk_index)
    de_vocab.set_default_index(unk_index)

    def numericalize_example(example, en_vocab, de_vocab):
        en_ids = en_vocab.lookup_indices(example["en_tokens"])
        de_ids = de_vocab.lookup_indices(example["de_tokens"])
        return {"en_ids": en_ids, "de_ids": de_ids}

    def with_torch_format(data):  # data.with_format(type="torch", columns=["en_ids", "de_ids"], ...)
        return [{**e, **{k: torch.tensor(v) for k, v in numericalize_example(e, en_vocab, de_vocab).items()}}
                for e in data]

    train_data, valid_data, test_data = map(with_torch_format, (train_data, valid_data, test_data))

    def get_collate_fn(pad_index):
        def collate_fn(batch):
            batch_en_ids = [example["en_ids"] for example in batch]
            batch_de_ids = [example["de_ids"] for example in batch]
            batch_en_ids = nn.utils.rnn.pad_sequence(batch_en_ids, padding_value=pad_index)
            batch_de_ids = nn.utils.rnn.pad_sequence(batch_de_ids, padding_value=pad_index)
            batch = {
                "en_ids": batch_en_ids,
                "de_ids": batch_de_ids,
            }
            return batch
        return collate_fn

    def get_data_loader(dataset, batch_size, pad_index, shuffle=False):
        collate_fn = get_collate_fn(pad_index)
        data_loader = torch.utils.data.DataLoader(
            dataset=dataset,
            batch_size=batch_size,
            collate_fn=collate_fn,
            shuffle=shuffle,
        )
        return data_loader

    batch_size = 8
    train_data_loader = get_data_loader(train_data, batch_size, pad_index, shuffle=True)
    valid_data_loader = get_data_loader(valid_data, batch_size, pad_index)
    test_data_loader = get_data_loader(test_data, batch_size, pad_index)

    if notebook == 1:
        class Encoder(nn.Module):
            def __init__(self, input_dim, embedding_dim, hidden_dim, n_layers, dropout):
                super().__init__()
                self.hidden_dim = hidden_dim
                self.n_layers = n_layers
                self.embedding = nn.Embedding(input_dim, embedding_dim)
                self.rnn = nn.LSTM(embedding_dim, hidden_dim, n_layers, dropout=dropout)
                self.dropout = nn.Dropout(dropout)

            def forward(self, src):
                # src = [src length, batch size]
                embedded = self.dropout(self.embedding(src))
                # embedded = [src length, batch size, embedding dim]
                outputs, (hidden, cell) = self.rnn(embedded)
                # hidden = [n layers * n directions, batch size, hidden dim]
                return hidden, cell

        class Decoder(nn.Module):
            def __init__(self, output_dim, embedding_dim, hidden_dim, n_layers, dropout):
                super().__init__()
                self.output_dim = output_dim
                self.hidden_dim = hidden_dim
                self.n_layers = n_layers
                self.embedding = nn.Embedding(output_dim, embedding_dim)
                self.rnn = nn.LSTM(embedding_dim, hidden_dim, n_layers, dropout=dropout)
                self.fc_out = nn.Linear(hidden_dim, output_dim)
                self.dropout = nn.Dropout(dropout)

            def forward(self, input, hidden, cell):
                # input = [batch size]
                input = input.unsqueeze(0)
                # input = [1, batch size]
                embedded = self.dropout(self.embedding(input))
                output, (hidden, cell) = self.rnn(embedded, (hidden, cell))
                prediction = self.fc_out(output.squeeze(0))
                # prediction = [batch size, output dim]
                return prediction, hidden, cell

        class Seq2Seq(nn.Module):
            def __init__(self, encoder, decoder, device):
                super().__init__()
                self.encoder = encoder
                self.decoder = decoder
                self.device = device
                assert encoder.hidden_dim == decoder.hidden_dim, \
                    "Hidden dimensions of encoder and decoder must be equal!"
                assert encoder.n_layers == decoder.n_layers, \
                    "Encoder and decoder must have equal number of layers!"

            def forward(self, src, trg, teacher_forcing_ratio):
                batch_size = trg.shape[1]
                trg_length = trg.shape[0]
                trg_vocab_size = self.decoder.output_dim
                # tensor to store decoder outputs
                outputs = torch.zeros(trg_length, batch_size, trg_vocab_size).to(self.device)
                # last hidden state of the encoder is used as the initial hidden state of the decoder
                hidden, cell = self.encoder(src)
                # first input to the decoder is the <sos> tokens
                input = trg[0, :]
                for t in range(1, trg_length):
                    output, hidden, cell = self.decoder(input, hidden, cell)
                    outputs[t] = output
                    teacher_force = random.random() < teacher_forcing_ratio
                    top1 = output.argmax(1)
                    input = trg[t] if teacher_force else top1
                return outputs

        def init_weights(m):
            for name, param in m.named_parameters():
                nn.init.uniform_(param.data, -0.08, 0.08)

        encoder_args, decoder_args = (len(de_vocab), 16, 32, 2, 0.5), (len(en_vocab), 16, 32, 2, 0.5)
    else:
        class Encoder(nn.Module):
            def __init__(self, input_dim, embedding_dim, hidden_dim, dropout):
                super().__init__()
                self.hidden_dim = hidden_dim
                self.embedding = nn.Embedding(input_dim, embedding_dim)
                self.rnn = nn.GRU(embedding_dim, hidden_dim)
                self.dropout = nn.Dropout(dropout)

            def forward(self, src):
                embedded = self.dropout(self.embedding(src))
                outputs, hidden = self.rnn(embedded)  # no cell state in GRU!
                return hidden

        class Decoder(nn.Module):
            def __init__(self, output_dim, embedding_dim, hidden_dim, dropout):
                super().__init__()
                self.hidden_dim = hidden_dim
                self.output_dim = output_dim
                self.embedding = nn.Embedding(output_dim, embedding_dim)
                self.rnn = nn.GRU(embedding_dim + hidden_dim, hidden_dim)
                self.fc_out = nn.Linear(embedding_dim + hidden_dim * 2, output_dim)
                self.dropout = nn.Dropout(dropout)

            def forward(self, input, hidden, context):
                input = input.unsqueeze(0)
                embedded = self.dropout(self.embedding(input))
                emb_con = torch.cat((embedded, context), dim=2)
                output, hidden = self.rnn(emb_con, hidden)
                output = torch.cat((embedded.squeeze(0), hidden.squeeze(0), context.squeeze(0)), dim=1)
                prediction = self.fc_out(output)
                return prediction, hidden

        class Seq2Seq(nn.Module):
            def __init__(self, encoder, decoder, device):
                super().__init__()
                self.encoder = encoder
                self.decoder = decoder
                self.device = device
                assert encoder.hidden_dim == decoder.hidden_dim, \
                    "Hidden dimensions of encoder and decoder must be equal!"

            def forward(self, src, trg, teacher_forcing_ratio):
                batch_size = trg.shape[1]
                trg_length = trg.shape[0]
                trg_vocab_size = self.decoder.output_dim
                outputs = torch.zeros(trg_length, batch_size, trg_vocab_size).to(self.device)
                context = self.encoder(src)
                hidden = context
                input = trg[0, :]
                for t in range(1, trg_length):
                    output, hidden = self.decoder(input, hidden, context)
                    outputs[t] = output
                    teacher_force = random.random() < teacher_forcing_ratio
                    top1 = output.argmax(1)
                    input = trg[t] if teacher_force else top1
                return outputs

        def init_weights(m):
            for name, param in m.named_parameters():
                nn.init.normal_(param.data, mean=0, std=0.01)

        encoder_args, decoder_args = (len(de_vocab), 16, 32, 0.5), (len(en_vocab), 16, 32, 0.5)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    encoder = Encoder(*encoder_args)
    decoder = Decoder(*decoder_args)
    model = Seq2Seq(encoder, decoder, device).to(device)
    model.apply(init_weights)

    def count_parameters(model):
        return sum(p.numel() for p in model.parameters() if p.requires_grad)

    print(f"The model has {count_parameters(model):,} trainable parameters")
    optimizer = optim.Adam(model.parameters())
    criterion = nn.CrossEntropyLoss(ignore_index=pad_index)

    def train_fn(model, data_loader, optimizer, criterion, clip, teacher_forcing_ratio, device):
        model.train()
        epoch_loss = 0
        for i, batch in enumerate(data_loader):
            src = batch["de_ids"].to(device)
            trg = batch["en_ids"].to(device)
            optimizer.zero_grad()
            output = model(src, trg, teacher_forcing_ratio)
            output_dim = output.shape[-1]
            output = output[1:].view(-1, output_dim)
            trg = trg[1:].view(-1)
            loss = criterion(output, trg)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            epoch_loss += loss.item()
        return epoch_loss / len(data_loader)

    def evaluate_fn(model, data_loader, criterion, device):
        model.eval()
        epoch_loss = 0
        with torch.no_grad():
            for i, batch in enumerate(data_loader):
                src = batch["de_ids"].to(device)
                trg = batch["en_ids"].to(device)
                output = model(src, trg, 0)  # turn off teacher forcing
                output_dim = output.shape[-1]
                output = output[1:].view(-1, output_dim)
                trg = trg[1:].view(-1)
                loss = criterion(output, trg)
                epoch_loss += loss.item()
        return epoch_loss / len(data_loader)

    n_epochs = 3
    clip = 1.0
    teacher_forcing_ratio = 0.5
    best_valid_loss = float("inf")
    saved = io.BytesIO()  # "tut1-model.pt" in the notebook
    for epoch in range(n_epochs):
        train_loss = train_fn(model, train_data_loader, optimizer, criterion, clip, teacher_forcing_ratio, device)
        valid_loss = evaluate_fn(model, valid_data_loader, criterion, device)
        if valid_loss < best_valid_loss:
            best_valid_loss = valid_loss
            saved.seek(0)
            torch.save(model.state_dict(), saved)
        print(f"\tTrain Loss: {train_loss:7.3f} | Train PPL: {np.exp(train_loss):7.3f}")
        print(f"\tValid Loss: {valid_loss:7.3f} | Valid PPL: {np.exp(valid_loss):7.3f}")

    saved.seek(0)
    model.load_state_dict(torch.load(saved))
    test_loss = evaluate_fn(model, test_data_loader, criterion, device)
    print(f"| Test Loss: {test_loss:.3f} | Test PPL: {np.exp(test_loss):7.3f} |")

    def translate_sentence(sentence, model, en_nlp, de_nlp, en_vocab, de_vocab, lower, sos_token, eos_token,
                           device, max_output_length=25):
        model.eval()
        with torch.no_grad():
            tokens = sentence.split() if isinstance(sentence, str) else [token for token in sentence]
            if lower:
                tokens = [token.lower() for token in tokens]
            tokens = [sos_token] + tokens + [eos_token]
            ids = de_vocab.lookup_indices(tokens)
            tensor = torch.LongTensor(ids).unsqueeze(-1).to(device)
            if notebook == 1:
                hidden, cell = model.encoder(tensor)
            else:
                context = model.encoder(tensor)
                hidden = context
            inputs = en_vocab.lookup_indices([sos_token])
            for _ in range(max_output_length):
                inputs_tensor = torch.LongTensor([inputs[-1]]).to(device)
                if notebook == 1:
                    output, hidden, cell = model.decoder(inputs_tensor, hidden, cell)
                else:
                    output, hidden = model.decoder(inputs_tensor, hidden, context)
                predicted_token = output.argmax(-1).item()
                inputs.append(predicted_token)
                if predicted_token == en_vocab[eos_token]:
                    break
            tokens = en_vocab.lookup_tokens(inputs)
        return tokens

    translation = translate_sentence(test_data[0]["de"], model, None, None, en_vocab, de_vocab, lower, sos_token,
                                     eos_token, device)
    return {"printed": Printed(printed), "translation": translation,
            "state": {k: numpy_of(v) for k, v in model.state_dict().items()}}


@pytest.mark.parametrize("notebook", [1, 2])
def test_bentrevett_seq2seq_2023(notebook):
    compare_program(seq2seq_notebook, notebook=notebook, rtol=1e-3, atol=1e-4)

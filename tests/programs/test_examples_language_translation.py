"""pytorch/examples' language_translation (main.py, src/model.py, src/data.py) as published, with
torchtext's Multi30k, spaCy tokenizers and build_vocab_from_iterator replaced by a toy corpus, a
whitespace tokenizer and a small vocabulary of the same interface (specials first, __call__ on a
token list, set_default_index, lookup_tokens). model.py: PositionalEncoding (den by torch.exp of
-torch.arange(0, emb_size, 2) * log(10000) / emb_size, sin/cos into strided slices, unsqueeze(-2),
register_buffer), Translator around nn.Transformer (positional src_mask, tgt_mask, None, padding
masks), xavier_uniform_ of every p.dim() > 1, encode/decode through transformer.encoder/decoder.
data.py: _seq_transform, _tensor_transform by torch.cat of tensors, a DataLoader over (src, tgt)
string pairs with a collate_fn of pad_sequence(padding_value=...), generate_square_subsequent_mask
by triu/transpose/masked_fill, create_mask with a bool src_mask. main.py: the logging set-up,
tqdm over the loaders, CrossEntropyLoss(ignore_index), Adam(betas=(0.9, 0.98), eps=1e-9), the loss
over logits.reshape(-1, logits.shape[-1]), validate, best/last state_dicts by torch.save, then
inference's torch.load and greedy_decode (torch.ones(1, 1).fill_(start).type(torch.long),
torch.max(prob, dim=1), type_as(src.data)) on the sentences input() would give. Weights start
equal; from the same seed both libraries draw the same dropout masks (PyTorch's CPU stream), so
the default --dropout 0.1 run is compared number by number."""
import argparse
import logging
import math

import numpy as np

from prog_helpers import compare_in_folders, numpy_of, start_from

SRC_WORDS = "ein zwei drei vier fuenf mann frau hund katze sieht laeuft schnell langsam der die das".split()
TGT_WORDS = "one two three four five man woman dog cat sees runs fast slow the a an".split()


def corpus(n, seed):
    """(German, English) sentence pairs, word for word, as Multi30k yields them (with newlines)."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n):
        ids = rng.integers(0, len(SRC_WORDS), rng.integers(2, 7))
        pairs.append((" ".join(SRC_WORDS[i] for i in ids) + "\n", " ".join(TGT_WORDS[i] for i in ids) + "\n"))
    return pairs


class Vocab:
    """What the script uses of torchtext's Vocab: specials first, then tokens by frequency."""

    def __init__(self, token_lists, specials):
        counts = {}
        for tokens in token_lists:
            for t in tokens:
                counts[t] = counts.get(t, 0) + 1
        self.itos = list(specials) + sorted((t for t in counts if t not in specials), key=lambda t: (-counts[t], t))
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.default = None

    def set_default_index(self, index):
        self.default = index

    def __call__(self, tokens):
        return [self.stoi.get(t, self.default) for t in tokens]

    def __len__(self):
        return len(self.itos)

    def lookup_tokens(self, indices):
        return [self.itos[int(i)] for i in indices]


def model_py(torch):
    nn = torch.nn

    class PositionalEncoding(nn.Module):
        def __init__(self, emb_size, dropout, maxlen=5000):
            super(PositionalEncoding, self).__init__()
            den = torch.exp(- torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            pos = torch.arange(0, maxlen).reshape(maxlen, 1)
            pos_embedding = torch.zeros((maxlen, emb_size))
            pos_embedding[:, 0::2] = torch.sin(pos * den)
            pos_embedding[:, 1::2] = torch.cos(pos * den)
            pos_embedding = pos_embedding.unsqueeze(-2)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer('pos_embedding', pos_embedding)

        def forward(self, token_embedding):
            return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])

    class Translator(nn.Module):
        def __init__(self, num_encoder_layers, num_decoder_layers, embed_size, num_heads, src_vocab_size,
                     tgt_vocab_size, dim_feedforward, dropout):
            super(Translator, self).__init__()
            self.src_embedding = nn.Embedding(src_vocab_size, embed_size)
            self.tgt_embedding = nn.Embedding(tgt_vocab_size, embed_size)
            self.pos_enc = PositionalEncoding(embed_size, dropout)
            self.transformer = nn.Transformer(
                d_model=embed_size,
                nhead=num_heads,
                num_encoder_layers=num_encoder_layers,
                num_decoder_layers=num_decoder_layers,
                dim_feedforward=dim_feedforward,
                dropout=dropout
            )
            self.ff = nn.Linear(embed_size, tgt_vocab_size)
            self._init_weights()

        def _init_weights(self):
            for p in self.parameters():
                if p.dim() > 1:
                    nn.init.xavier_uniform_(p)

        def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, memory_key_padding_mask):
            src_emb = self.pos_enc(self.src_embedding(src))
            tgt_emb = self.pos_enc(self.tgt_embedding(trg))
            outs = self.transformer(
                src_emb,
                tgt_emb,
                src_mask,
                tgt_mask,
                None,
                src_padding_mask,
                tgt_padding_mask,
                memory_key_padding_mask
            )
            return self.ff(outs)

        def encode(self, src, src_mask):
            embed = self.src_embedding(src)
            pos_enc = self.pos_enc(embed)
            return self.transformer.encoder(pos_enc, src_mask)

        def decode(self, tgt, memory, tgt_mask):
            embed = self.tgt_embedding(tgt)
            pos_enc = self.pos_enc(embed)
            return self.transformer.decoder(pos_enc, memory, tgt_mask)

    return Translator


def translation(torch, init=None, tmp_path=None, epochs=2, batch=4):
    from tqdm import tqdm
    pad_sequence = torch.nn.utils.rnn.pad_sequence
    DataLoader = torch.utils.data.DataLoader
    Translator = model_py(torch)
    DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    # src/data.py
    def _yield_tokens(iterable_data, tokenizer, src):
        index = 0 if src else 1
        for data in iterable_data:
            yield tokenizer(data[index])

    def get_data(opts):
        special_symbols = {"<unk>": 0, "<pad>": 1, "<bos>": 2, "<eos>": 3}
        train_iterator = corpus(12, 0)
        valid_iterator = corpus(5, 1)
        src_tokenizer = tgt_tokenizer = str.split
        src_vocab = Vocab(_yield_tokens(train_iterator, src_tokenizer, True), list(special_symbols.keys()))
        tgt_vocab = Vocab(_yield_tokens(train_iterator, tgt_tokenizer, False), list(special_symbols.keys()))
        src_vocab.set_default_index(special_symbols["<unk>"])
        tgt_vocab.set_default_index(special_symbols["<unk>"])

        def _seq_transform(*transforms):
            def func(txt_input):
                for transform in transforms:
                    txt_input = transform(txt_input)
                return txt_input
            return func

        def _tensor_transform(token_ids):
            return torch.cat(
                (torch.tensor([special_symbols["<bos>"]]),
                 torch.tensor(token_ids),
                 torch.tensor([special_symbols["<eos>"]]))
            )

        src_lang_transform = _seq_transform(src_tokenizer, src_vocab, _tensor_transform)
        tgt_lang_transform = _seq_transform(tgt_tokenizer, tgt_vocab, _tensor_transform)

        def _collate_fn(batch):
            src_batch, tgt_batch = [], []
            for src_sample, tgt_sample in batch:
                src_batch.append(src_lang_transform(src_sample.rstrip("\n")))
                tgt_batch.append(tgt_lang_transform(tgt_sample.rstrip("\n")))
            src_batch = pad_sequence(src_batch, padding_value=special_symbols["<pad>"])
            tgt_batch = pad_sequence(tgt_batch, padding_value=special_symbols["<pad>"])
            return src_batch, tgt_batch

        train_dataloader = DataLoader(train_iterator, batch_size=opts.batch, collate_fn=_collate_fn)
        valid_dataloader = DataLoader(valid_iterator, batch_size=opts.batch, collate_fn=_collate_fn)
        return (train_dataloader, valid_dataloader, src_vocab, tgt_vocab, src_lang_transform, tgt_lang_transform,
                special_symbols)

    def generate_square_subsequent_mask(size, device):
        mask = (torch.triu(torch.ones((size, size), device=device)) == 1).transpose(0, 1)
        mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
        return mask

    def create_mask(src, tgt, pad_idx, device):
        src_seq_len = src.shape[0]
        tgt_seq_len = tgt.shape[0]
        tgt_mask = generate_square_subsequent_mask(tgt_seq_len, device)
        src_mask = torch.zeros((src_seq_len, src_seq_len), device=device).type(torch.bool)
        src_padding_mask = (src == pad_idx).transpose(0, 1)
        tgt_padding_mask = (tgt == pad_idx).transpose(0, 1)
        return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask

    # main.py
    def greedy_decode(model, src, src_mask, max_len, start_symbol, end_symbol):
        src = src.to(DEVICE)
        src_mask = src_mask.to(DEVICE)
        memory = model.encode(src, src_mask)
        ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long).to(DEVICE)
        for _ in range(max_len - 1):
            memory = memory.to(DEVICE)
            tgt_mask = (generate_square_subsequent_mask(ys.size(0), DEVICE).type(torch.bool)).to(DEVICE)
            out = model.decode(ys, memory, tgt_mask)
            out = out.transpose(0, 1)
            prob = model.ff(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.item()
            ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
            if next_word == end_symbol:
                break
        return ys

    def inference(opts, sentences):
        _, _, src_vocab, tgt_vocab, src_transform, _, special_symbols = get_data(opts)
        model = Translator(num_encoder_layers=opts.enc_layers, num_decoder_layers=opts.dec_layers,
                           embed_size=opts.embed_size, num_heads=opts.attn_heads, src_vocab_size=len(src_vocab),
                           tgt_vocab_size=len(tgt_vocab), dim_feedforward=opts.dim_feedforward,
                           dropout=opts.dropout).to(DEVICE)
        model.load_state_dict(torch.load(opts.model_path))
        model.eval()
        translations = []
        for sentence in sentences:  # the script's `while True: sentence = input()`
            src = src_transform(sentence).view(-1, 1)
            num_tokens = src.shape[0]
            src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
            tgt_tokens = greedy_decode(model, src, src_mask, max_len=num_tokens + 5,
                                       start_symbol=special_symbols["<bos>"],
                                       end_symbol=special_symbols["<eos>"]).flatten()
            output_as_list = list(tgt_tokens.cpu().numpy())
            output_list_words = tgt_vocab.lookup_tokens(output_as_list)
            translations.append(" ".join(output_list_words).replace("<bos>", "").replace("<eos>", ""))
        return translations

    def batch_loss(model, src, tgt, loss_fn, special_symbols):
        """What train and validate do to each batch (the same lines in both)."""
        src = src.to(DEVICE)
        tgt = tgt.to(DEVICE)
        tgt_input = tgt[:-1, :]
        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input,
                                                                             special_symbols["<pad>"], DEVICE)
        logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, src_padding_mask)
        tgt_out = tgt[1:, :]
        return loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))

    def train(model, train_dl, loss_fn, optim, special_symbols, opts):
        losses = 0
        model.train()
        for src, tgt in tqdm(train_dl, ascii=True, disable=True):
            loss = batch_loss(model, src, tgt, loss_fn, special_symbols)
            optim.zero_grad()
            loss.backward()
            optim.step()
            losses += loss.item()
            if opts.dry_run:
                break
        return losses / len(list(train_dl))

    def validate(model, valid_dl, loss_fn, special_symbols):
        losses = 0
        model.eval()
        for src, tgt in tqdm(valid_dl, disable=True):
            losses += batch_loss(model, src, tgt, loss_fn, special_symbols).item()
        return losses / len(list(valid_dl))

    opts = argparse.Namespace(src="de", tgt="en", epochs=epochs, lr=1e-3, batch=batch, attn_heads=2, enc_layers=2,
                              dec_layers=2, embed_size=16, dim_feedforward=32, dropout=0.1,
                              logging_dir=str(tmp_path) + "/", dry_run=False, model_path=str(tmp_path) + "/best.pt")
    logger = logging.getLogger(f"{__name__}.{torch.__name__}")
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.info(f"Translation task: {opts.src} -> {opts.tgt}")
    logger.info(f"Using device: {DEVICE}")
    torch.manual_seed(0)  # as a fresh process would start (the script sets no seed)
    train_dl, valid_dl, src_vocab, tgt_vocab, _, _, special_symbols = get_data(opts)
    model = Translator(num_encoder_layers=opts.enc_layers, num_decoder_layers=opts.dec_layers,
                       embed_size=opts.embed_size, num_heads=opts.attn_heads, src_vocab_size=len(src_vocab),
                       tgt_vocab_size=len(tgt_vocab), dim_feedforward=opts.dim_feedforward,
                       dropout=opts.dropout).to(DEVICE)
    result = {}
    start_from(torch, model, init, result)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=special_symbols["<pad>"])
    optim = torch.optim.Adam(model.parameters(), lr=opts.lr, betas=(0.9, 0.98), eps=1e-9)
    best_val_loss = 1e6
    for idx, epoch in enumerate(range(1, opts.epochs + 1)):
        train_loss = train(model, train_dl, loss_fn, optim, special_symbols, opts)
        val_loss = validate(model, valid_dl, loss_fn, special_symbols)
        if val_loss < best_val_loss:
            best_val_loss = val_loss
            logger.info("New best model, saving...")
            torch.save(model.state_dict(), opts.logging_dir + "best.pt")
        torch.save(model.state_dict(), opts.logging_dir + "last.pt")
        logger.info(f"Epoch: {epoch}\n\tTrain loss: {train_loss:.3f}\n\tVal loss: {val_loss:.3f}")
    logger.removeHandler(handler)
    sentences = ["ein hund sieht die katze", "zwei frau laeuft schnell", "der vogel"]
    result.update(log=records, translations=inference(opts, sentences),
                  masks=[numpy_of(m) for m in create_mask(*next(iter(train_dl)), 1, DEVICE)],
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    # the key projection's bias shifts every score of a query alike, which softmax takes out: its
    # gradient is rounding noise only, which Adam scales into full steps (compared without it)
    E = opts.embed_size
    for k, v in result["params"].items():
        if k.endswith("in_proj_bias"):
            result["params"][k] = np.concatenate([v[:E], v[2 * E:]])
    return result


def test_language_translation_example(tmp_path):
    ref, got = compare_in_folders(translation, tmp_path, "tmp_path", rtol=1e-3, atol=1e-4)
    assert got["log"][:2] == ["Translation task: de -> en", "Using device: cpu"]
    assert all(t.strip() and "<" not in t for t in got["translations"])

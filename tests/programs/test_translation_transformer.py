"""The language-translation tutorial with nn.Transformer: token embeddings scaled by
math.sqrt(emb_size), a PositionalEncoding buffer built with torch.exp(- torch.arange(0, emb_size,
2) * math.log(10000) / emb_size) and unsqueeze(-2), a Seq2SeqTransformer wrapping
nn.Transformer(batch_first=False) with encode/decode methods, generate_square_subsequent_mask by
torch.triu(torch.ones((sz, sz))) == 1).transpose(0, 1) and masked_fill with float('-inf') / 0.0,
create_mask with padding masks (src == PAD_IDX).transpose(0, 1), batches through collate_fn and
pad_sequence(padding_value=PAD_IDX), CrossEntropyLoss(ignore_index=PAD_IDX), Adam with betas and
eps=1e-9, xavier_uniform_ of every p.dim() > 1, and greedy_decode with torch.max(prob, dim=1),
torch.ones(1, 1).fill_(start_symbol).type(torch.long) and torch.cat; nn.Transformer's own
generate_square_subsequent_mask is compared with the hand-made one."""
import math

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from

PAD_IDX, BOS_IDX, EOS_IDX = 1, 2, 3


def translation(torch, init=None, epochs=2):
    nn = torch.nn
    Tensor = torch.Tensor
    from_numpy = torch.from_numpy
    pad_sequence = torch.nn.utils.rnn.pad_sequence
    DEVICE = torch.device("cpu")

    class PositionalEncoding(nn.Module):
        def __init__(self, emb_size: int, dropout: float, maxlen: int = 50):
            super(PositionalEncoding, self).__init__()
            den = torch.exp(- torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            pos = torch.arange(0, maxlen).reshape(maxlen, 1)
            pos_embedding = torch.zeros((maxlen, emb_size))
            pos_embedding[:, 0::2] = torch.sin(pos * den)
            pos_embedding[:, 1::2] = torch.cos(pos * den)
            pos_embedding = pos_embedding.unsqueeze(-2)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer('pos_embedding', pos_embedding)

        def forward(self, token_embedding: Tensor):
            return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])

    class TokenEmbedding(nn.Module):
        def __init__(self, vocab_size: int, emb_size):
            super(TokenEmbedding, self).__init__()
            self.embedding = nn.Embedding(vocab_size, emb_size)
            self.emb_size = emb_size

        def forward(self, tokens: Tensor):
            return self.embedding(tokens.long()) * math.sqrt(self.emb_size)

    class Seq2SeqTransformer(nn.Module):
        def __init__(self, num_encoder_layers, num_decoder_layers, emb_size, nhead, src_vocab_size,
                     tgt_vocab_size, dim_feedforward=64, dropout=0.1):
            super(Seq2SeqTransformer, self).__init__()
            self.transformer = nn.Transformer(d_model=emb_size, nhead=nhead, num_encoder_layers=num_encoder_layers,
                                              num_decoder_layers=num_decoder_layers,
                                              dim_feedforward=dim_feedforward, dropout=dropout)
            self.generator = nn.Linear(emb_size, tgt_vocab_size)
            self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
            self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
            self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)

        def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                    memory_key_padding_mask):
            src_emb = self.positional_encoding(self.src_tok_emb(src))
            tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
            outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                    src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
            return self.generator(outs)

        def encode(self, src, src_mask):
            return self.transformer.encoder(self.positional_encoding(self.src_tok_emb(src)), src_mask)

        def decode(self, tgt, memory, tgt_mask):
            return self.transformer.decoder(self.positional_encoding(self.tgt_tok_emb(tgt)), memory, tgt_mask)

    def generate_square_subsequent_mask(sz):
        mask = (torch.triu(torch.ones((sz, sz), device=DEVICE)) == 1).transpose(0, 1)
        mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
        return mask

    def create_mask(src, tgt):
        src_seq_len = src.shape[0]
        tgt_seq_len = tgt.shape[0]
        tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
        src_mask = torch.zeros((src_seq_len, src_seq_len), device=DEVICE).type(torch.bool)
        src_padding_mask = (src == PAD_IDX).transpose(0, 1)
        tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
        return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask

    SRC_VOCAB_SIZE, TGT_VOCAB_SIZE = 20, 22
    torch.manual_seed(0)
    transformer = Seq2SeqTransformer(2, 2, 16, 2, SRC_VOCAB_SIZE, TGT_VOCAB_SIZE)
    for p in transformer.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    transformer = transformer.to(DEVICE)
    result = {"mask": numpy_of(generate_square_subsequent_mask(5)),
              "builtin_mask": numpy_of(nn.Transformer.generate_square_subsequent_mask(5))}
    start_from(torch, transformer, init, result)
    for m in transformer.modules():  # dropout draws differ between the libraries
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX)
    optimizer = torch.optim.Adam(transformer.parameters(), lr=0.0001, betas=(0.9, 0.98), eps=1e-9)

    rng = np.random.default_rng(0)
    pairs = []
    for _ in range(12):
        n_src, n_tgt = rng.integers(2, 7), rng.integers(2, 7)
        pairs.append((rng.integers(4, SRC_VOCAB_SIZE, n_src), rng.integers(4, TGT_VOCAB_SIZE, n_tgt)))

    def tensor_transform(token_ids):
        return torch.cat((torch.tensor([BOS_IDX]), torch.tensor(token_ids), torch.tensor([EOS_IDX])))

    def collate_fn(batch):
        src_batch, tgt_batch = [], []
        for src_sample, tgt_sample in batch:
            src_batch.append(tensor_transform(src_sample.tolist()))
            tgt_batch.append(tensor_transform(tgt_sample.tolist()))
        src_batch = pad_sequence(src_batch, padding_value=PAD_IDX)
        tgt_batch = pad_sequence(tgt_batch, padding_value=PAD_IDX)
        return src_batch, tgt_batch

    def train_epoch(model, optimizer):
        model.train()
        losses = 0
        train_dataloader = torch.utils.data.DataLoader(pairs, batch_size=4, collate_fn=collate_fn)
        for src, tgt in train_dataloader:
            src = src.to(DEVICE)
            tgt = tgt.to(DEVICE)
            tgt_input = tgt[:-1, :]
            src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
            logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, src_padding_mask)
            optimizer.zero_grad()
            tgt_out = tgt[1:, :]
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            loss.backward()
            optimizer.step()
            losses += loss.item()
        return losses / len(list(train_dataloader))

    def evaluate(model):
        model.eval()
        losses = 0
        val_dataloader = torch.utils.data.DataLoader(pairs[:8], batch_size=4, collate_fn=collate_fn)
        for src, tgt in val_dataloader:
            tgt_input = tgt[:-1, :]
            src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
            logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, src_padding_mask)
            tgt_out = tgt[1:, :]
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            losses += loss.item()
        return losses / len(list(val_dataloader))

    history = []
    for epoch in range(1, epochs + 1):
        train_loss = train_epoch(transformer, optimizer)
        val_loss = evaluate(transformer)
        history.append((train_loss, val_loss))
    result["history"] = np.array(history)

    def greedy_decode(model, src, src_mask, max_len, start_symbol):
        src = src.to(DEVICE)
        src_mask = src_mask.to(DEVICE)
        memory = model.encode(src, src_mask)
        ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long).to(DEVICE)
        for i in range(max_len - 1):
            memory = memory.to(DEVICE)
            tgt_mask = (generate_square_subsequent_mask(ys.size(0)).type(torch.bool)).to(DEVICE)
            out = model.decode(ys, memory, tgt_mask)
            out = out.transpose(0, 1)
            prob = model.generator(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.item()
            ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
            if next_word == EOS_IDX:
                break
        return ys

    transformer.eval()
    src = tensor_transform(pairs[0][0].tolist()).view(-1, 1)
    num_tokens = src.shape[0]
    src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
    tgt_tokens = greedy_decode(transformer, src, src_mask, max_len=num_tokens + 5, start_symbol=BOS_IDX).flatten()
    result["decoded"] = numpy_of(tgt_tokens)
    with torch.no_grad():
        memory = transformer.encode(src, src_mask)
    result["memory"] = numpy_of(memory)
    return result


# the tutorial's batch_first=False and float/bool masks draw these warnings from both libraries
@pytest.mark.filterwarnings("ignore:enable_nested_tensor", "ignore:Support for mismatched")
def test_translation_transformer_greedy_decode():
    compare_program(translation, rtol=1e-3, atol=1e-4)

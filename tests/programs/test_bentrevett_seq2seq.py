"""bentrevett's pytorch-seq2seq tutorials 4, 5 and 6 (torchtext's Field/BucketIterator replaced by
a vocabulary and batches built by hand over a toy translation, reversed words mapped to another
alphabet): 4, packed padded sequences and masking (a bidirectional GRU encoder over
pack_padded_sequence(embedded, src_len.to('cpu')), tanh(fc(torch.cat((hidden[-2,:,:], hidden[-1,:,:]),
dim = 1))), additive Attention with hidden.unsqueeze(1).repeat(1, src_len, 1) and
attention.masked_fill(mask == 0, -1e10), a decoder of bmm'd weighted context, teacher forcing by
random.random() < teacher_forcing_ratio, init_weights of normal_(std=0.01)/constant_); 5,
convolutional seq2seq (scale torch.sqrt(torch.FloatTensor([0.5])), positions by
torch.arange(0, src_len).unsqueeze(0).repeat(batch_size, 1), Conv1d + F.glu(dim = 1) residual
blocks, causal padding torch.zeros(...).fill_(trg_pad_idx) joined by torch.cat, attention by
torch.matmul with encoder conved/combined); 6, Attention is All You Need (MultiHeadAttentionLayer
with energy.masked_fill(mask == 0, -1e10), make_src_mask by unsqueeze(1).unsqueeze(2),
make_trg_mask by torch.tril(torch.ones((trg_len, trg_len))).bool(), xavier_uniform_ for
p.dim() > 1). All train with Adam, CrossEntropyLoss(ignore_index = TRG_PAD_IDX) over
output[1:].view(-1, output_dim) or output.contiguous().view(-1, output_dim), clip_grad_norm_,
epoch_time and math.exp(loss) for the perplexity, and translate_sentence by greedy argmax; random,
NumPy and torch seeded with SEED = 1234 in both libraries, dropout live."""
import math
import random
import time

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from

SRC_WORDS = "ein zwei drei vier fuenf sechs sieben acht neun zehn".split()
TRG_WORDS = "one two three four five six seven eight nine ten".split()


def pairs(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = rng.integers(0, 10, rng.integers(2, 7))
        out.append(([SRC_WORDS[i] for i in k], [TRG_WORDS[i] for i in k[::-1]]))
    return out


def field_vocab(sentences):
    """Field.build_vocab: <unk>, <pad>, <sos>, <eos> then the words in order."""
    itos = ["<unk>", "<pad>", "<sos>", "<eos>"] + sorted({w for s in sentences for w in s})
    return itos, {w: i for i, w in enumerate(itos)}


def batches(torch, data, src_stoi, trg_stoi, batch_size, batch_first, sort):
    """BucketIterator's batches: <sos> ... <eos>, padded with <pad>, longest source first when sort."""
    out = []
    for b in range(0, len(data), batch_size):
        chunk = data[b:b + batch_size]
        if sort:
            chunk = sorted(chunk, key=lambda p: len(p[0]), reverse=True)
        src = [[2] + [src_stoi[w] for w in s] + [3] for s, _ in chunk]
        trg = [[2] + [trg_stoi[w] for w in t] + [3] for _, t in chunk]
        src_len = [len(s) for s in src]
        pad = lambda seqs: [s + [1] * (max(map(len, seqs)) - len(s)) for s in seqs]  # noqa: E731
        src_t, trg_t = torch.tensor(pad(src)), torch.tensor(pad(trg))
        if not batch_first:
            src_t, trg_t = src_t.t().contiguous(), trg_t.t().contiguous()
        out.append((src_t, torch.tensor(src_len), trg_t))
    return out


def packed_padded(torch, device, INPUT_DIM, OUTPUT_DIM, SRC_PAD_IDX):
    nn = torch.nn
    F = torch.nn.functional

    class Encoder(nn.Module):
        def __init__(self, input_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout):
            super().__init__()
            self.embedding = nn.Embedding(input_dim, emb_dim)
            self.rnn = nn.GRU(emb_dim, enc_hid_dim, bidirectional=True)
            self.fc = nn.Linear(enc_hid_dim * 2, dec_hid_dim)
            self.dropout = nn.Dropout(dropout)

        def forward(self, src, src_len):
            # src = [src len, batch size]
            embedded = self.dropout(self.embedding(src))
            # need to explicitly put lengths on cpu!
            packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, src_len.to('cpu'))
            packed_outputs, hidden = self.rnn(packed_embedded)
            outputs, _ = nn.utils.rnn.pad_packed_sequence(packed_outputs)
            # outputs = [src len, batch size, hid dim * num directions]
            hidden = torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
            return outputs, hidden

    class Attention(nn.Module):
        def __init__(self, enc_hid_dim, dec_hid_dim):
            super().__init__()
            self.attn = nn.Linear((enc_hid_dim * 2) + dec_hid_dim, dec_hid_dim)
            self.v = nn.Linear(dec_hid_dim, 1, bias=False)

        def forward(self, hidden, encoder_outputs, mask):
            batch_size = encoder_outputs.shape[1]
            src_len = encoder_outputs.shape[0]
            # repeat decoder hidden state src_len times
            hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)
            encoder_outputs = encoder_outputs.permute(1, 0, 2)
            energy = torch.tanh(self.attn(torch.cat((hidden, encoder_outputs), dim=2)))
            attention = self.v(energy).squeeze(2)
            # attention = [batch size, src len]
            attention = attention.masked_fill(mask == 0, -1e10)
            return F.softmax(attention, dim=1)

    class Decoder(nn.Module):
        def __init__(self, output_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout, attention):
            super().__init__()
            self.output_dim = output_dim
            self.attention = attention
            self.embedding = nn.Embedding(output_dim, emb_dim)
            self.rnn = nn.GRU((enc_hid_dim * 2) + emb_dim, dec_hid_dim)
            self.fc_out = nn.Linear((enc_hid_dim * 2) + dec_hid_dim + emb_dim, output_dim)
            self.dropout = nn.Dropout(dropout)

        def forward(self, input, hidden, encoder_outputs, mask):
            input = input.unsqueeze(0)
            embedded = self.dropout(self.embedding(input))
            a = self.attention(hidden, encoder_outputs, mask)
            a = a.unsqueeze(1)
            encoder_outputs = encoder_outputs.permute(1, 0, 2)
            weighted = torch.bmm(a, encoder_outputs)
            weighted = weighted.permute(1, 0, 2)
            rnn_input = torch.cat((embedded, weighted), dim=2)
            output, hidden = self.rnn(rnn_input, hidden.unsqueeze(0))
            assert (output == hidden).all()
            embedded = embedded.squeeze(0)
            output = output.squeeze(0)
            weighted = weighted.squeeze(0)
            prediction = self.fc_out(torch.cat((output, weighted, embedded), dim=1))
            return prediction, hidden.squeeze(0), a.squeeze(1)

    class Seq2Seq(nn.Module):
        def __init__(self, encoder, decoder, src_pad_idx, device):
            super().__init__()
            self.encoder = encoder
            self.decoder = decoder
            self.src_pad_idx = src_pad_idx
            self.device = device

        def create_mask(self, src):
            mask = (src != self.src_pad_idx).permute(1, 0)
            return mask

        def forward(self, src, src_len, trg, teacher_forcing_ratio=0.5):
            batch_size = src.shape[1]
            trg_len = trg.shape[0]
            trg_vocab_size = self.decoder.output_dim
            # tensor to store decoder outputs
            outputs = torch.zeros(trg_len, batch_size, trg_vocab_size).to(self.device)
            encoder_outputs, hidden = self.encoder(src, src_len)
            # first input to the decoder is the <sos> tokens
            input = trg[0, :]
            mask = self.create_mask(src)
            for t in range(1, trg_len):
                output, hidden, _ = self.decoder(input, hidden, encoder_outputs, mask)
                outputs[t] = output
                teacher_force = random.random() < teacher_forcing_ratio
                top1 = output.argmax(1)
                input = trg[t] if teacher_force else top1
            return outputs

    attn = Attention(12, 12)
    enc = Encoder(INPUT_DIM, 8, 12, 12, 0.5)
    dec = Decoder(OUTPUT_DIM, 8, 12, 12, 0.5, attn)
    model = Seq2Seq(enc, dec, SRC_PAD_IDX, device).to(device)

    def init_weights(m):
        for name, param in m.named_parameters():
            if 'weight' in name:
                nn.init.normal_(param.data, mean=0, std=0.01)
            else:
                nn.init.constant_(param.data, 0)

    model.apply(init_weights)
    return model


def conv_seq2seq(torch, device, INPUT_DIM, OUTPUT_DIM, TRG_PAD_IDX):
    nn = torch.nn
    F = torch.nn.functional

    class Encoder(nn.Module):
        def __init__(self, input_dim, emb_dim, hid_dim, n_layers, kernel_size, dropout, device, max_length=100):
            super().__init__()
            assert kernel_size % 2 == 1, "Kernel size must be odd!"
            self.device = device
            self.scale = torch.sqrt(torch.FloatTensor([0.5])).to(device)
            self.tok_embedding = nn.Embedding(input_dim, emb_dim)
            self.pos_embedding = nn.Embedding(max_length, emb_dim)
            self.emb2hid = nn.Linear(emb_dim, hid_dim)
            self.hid2emb = nn.Linear(hid_dim, emb_dim)
            self.convs = nn.ModuleList([nn.Conv1d(in_channels=hid_dim, out_channels=2 * hid_dim,
                                                  kernel_size=kernel_size, padding=(kernel_size - 1) // 2)
                                        for _ in range(n_layers)])
            self.dropout = nn.Dropout(dropout)

        def forward(self, src):
            batch_size = src.shape[0]
            src_len = src.shape[1]
            pos = torch.arange(0, src_len).unsqueeze(0).repeat(batch_size, 1).to(self.device)
            tok_embedded = self.tok_embedding(src)
            pos_embedded = self.pos_embedding(pos)
            embedded = self.dropout(tok_embedded + pos_embedded)
            conv_input = self.emb2hid(embedded)
            conv_input = conv_input.permute(0, 2, 1)
            for i, conv in enumerate(self.convs):
                conved = conv(self.dropout(conv_input))
                conved = F.glu(conved, dim=1)
                conved = (conved + conv_input) * self.scale
                conv_input = conved
            conved = self.hid2emb(conved.permute(0, 2, 1))
            combined = (conved + embedded) * self.scale
            return conved, combined

    class Decoder(nn.Module):
        def __init__(self, output_dim, emb_dim, hid_dim, n_layers, kernel_size, dropout, trg_pad_idx, device,
                     max_length=100):
            super().__init__()
            self.kernel_size = kernel_size
            self.trg_pad_idx = trg_pad_idx
            self.device = device
            self.scale = torch.sqrt(torch.FloatTensor([0.5])).to(device)
            self.tok_embedding = nn.Embedding(output_dim, emb_dim)
            self.pos_embedding = nn.Embedding(max_length, emb_dim)
            self.emb2hid = nn.Linear(emb_dim, hid_dim)
            self.hid2emb = nn.Linear(hid_dim, emb_dim)
            self.attn_hid2emb = nn.Linear(hid_dim, emb_dim)
            self.attn_emb2hid = nn.Linear(emb_dim, hid_dim)
            self.fc_out = nn.Linear(emb_dim, output_dim)
            self.convs = nn.ModuleList([nn.Conv1d(in_channels=hid_dim, out_channels=2 * hid_dim,
                                                  kernel_size=kernel_size) for _ in range(n_layers)])
            self.dropout = nn.Dropout(dropout)

        def calculate_attention(self, embedded, conved, encoder_conved, encoder_combined):
            conved_emb = self.attn_hid2emb(conved.permute(0, 2, 1))
            combined = (conved_emb + embedded) * self.scale
            energy = torch.matmul(combined, encoder_conved.permute(0, 2, 1))
            attention = F.softmax(energy, dim=2)
            attended_encoding = torch.matmul(attention, encoder_combined)
            attended_encoding = self.attn_emb2hid(attended_encoding)
            attended_combined = (conved + attended_encoding.permute(0, 2, 1)) * self.scale
            return attention, attended_combined

        def forward(self, trg, encoder_conved, encoder_combined):
            batch_size = trg.shape[0]
            trg_len = trg.shape[1]
            pos = torch.arange(0, trg_len).unsqueeze(0).repeat(batch_size, 1).to(self.device)
            tok_embedded = self.tok_embedding(trg)
            pos_embedded = self.pos_embedding(pos)
            embedded = self.dropout(tok_embedded + pos_embedded)
            conv_input = self.emb2hid(embedded)
            conv_input = conv_input.permute(0, 2, 1)
            batch_size = conv_input.shape[0]
            hid_dim = conv_input.shape[1]
            for i, conv in enumerate(self.convs):
                conv_input = self.dropout(conv_input)
                padding = torch.zeros(batch_size, hid_dim, self.kernel_size - 1).fill_(self.trg_pad_idx).to(self.device)
                padded_conv_input = torch.cat((padding, conv_input), dim=2)
                conved = conv(padded_conv_input)
                conved = F.glu(conved, dim=1)
                attention, conved = self.calculate_attention(embedded, conved, encoder_conved, encoder_combined)
                conved = (conved + conv_input) * self.scale
                conv_input = conved
            conved = self.hid2emb(conved.permute(0, 2, 1))
            output = self.fc_out(self.dropout(conved))
            return output, attention

    class Seq2Seq(nn.Module):
        def __init__(self, encoder, decoder):
            super().__init__()
            self.encoder = encoder
            self.decoder = decoder

        def forward(self, src, trg):
            encoder_conved, encoder_combined = self.encoder(src)
            output, attention = self.decoder(trg, encoder_conved, encoder_combined)
            return output, attention

    enc = Encoder(INPUT_DIM, 8, 12, 2, 3, 0.25, device)
    dec = Decoder(OUTPUT_DIM, 8, 12, 2, 3, 0.25, TRG_PAD_IDX, device)
    return Seq2Seq(enc, dec).to(device)


def transformer(torch, device, INPUT_DIM, OUTPUT_DIM, SRC_PAD_IDX, TRG_PAD_IDX):
    nn = torch.nn

    class MultiHeadAttentionLayer(nn.Module):
        def __init__(self, hid_dim, n_heads, dropout, device):
            super().__init__()
            assert hid_dim % n_heads == 0
            self.hid_dim = hid_dim
            self.n_heads = n_heads
            self.head_dim = hid_dim // n_heads
            self.fc_q = nn.Linear(hid_dim, hid_dim)
            self.fc_k = nn.Linear(hid_dim, hid_dim)
            self.fc_v = nn.Linear(hid_dim, hid_dim)
            self.fc_o = nn.Linear(hid_dim, hid_dim)
            self.dropout = nn.Dropout(dropout)
            self.scale = torch.sqrt(torch.FloatTensor([self.head_dim])).to(device)

        def forward(self, query, key, value, mask=None):
            batch_size = query.shape[0]
            Q = self.fc_q(query)
            K = self.fc_k(key)
            V = self.fc_v(value)
            Q = Q.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
            K = K.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
            V = V.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
            energy = torch.matmul(Q, K.permute(0, 1, 3, 2)) / self.scale
            if mask is not None:
                energy = energy.masked_fill(mask == 0, -1e10)
            attention = torch.softmax(energy, dim=-1)
            x = torch.matmul(self.dropout(attention), V)
            x = x.permute(0, 2, 1, 3).contiguous()
            x = x.view(batch_size, -1, self.hid_dim)
            x = self.fc_o(x)
            return x, attention

    class PositionwiseFeedforwardLayer(nn.Module):
        def __init__(self, hid_dim, pf_dim, dropout):
            super().__init__()
            self.fc_1 = nn.Linear(hid_dim, pf_dim)
            self.fc_2 = nn.Linear(pf_dim, hid_dim)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            x = self.dropout(torch.relu(self.fc_1(x)))
            x = self.fc_2(x)
            return x

    class EncoderLayer(nn.Module):
        def __init__(self, hid_dim, n_heads, pf_dim, dropout, device):
            super().__init__()
            self.self_attn_layer_norm = nn.LayerNorm(hid_dim)
            self.ff_layer_norm = nn.LayerNorm(hid_dim)
            self.self_attention = MultiHeadAttentionLayer(hid_dim, n_heads, dropout, device)
            self.positionwise_feedforward = PositionwiseFeedforwardLayer(hid_dim, pf_dim, dropout)
            self.dropout = nn.Dropout(dropout)

        def forward(self, src, src_mask):
            _src, _ = self.self_attention(src, src, src, src_mask)
            src = self.self_attn_layer_norm(src + self.dropout(_src))
            _src = self.positionwise_feedforward(src)
            src = self.ff_layer_norm(src + self.dropout(_src))
            return src

    class Encoder(nn.Module):
        def __init__(self, input_dim, hid_dim, n_layers, n_heads, pf_dim, dropout, device, max_length=100):
            super().__init__()
            self.device = device
            self.tok_embedding = nn.Embedding(input_dim, hid_dim)
            self.pos_embedding = nn.Embedding(max_length, hid_dim)
            self.layers = nn.ModuleList([EncoderLayer(hid_dim, n_heads, pf_dim, dropout, device)
                                         for _ in range(n_layers)])
            self.dropout = nn.Dropout(dropout)
            self.scale = torch.sqrt(torch.FloatTensor([hid_dim])).to(device)

        def forward(self, src, src_mask):
            batch_size = src.shape[0]
            src_len = src.shape[1]
            pos = torch.arange(0, src_len).unsqueeze(0).repeat(batch_size, 1).to(self.device)
            src = self.dropout((self.tok_embedding(src) * self.scale) + self.pos_embedding(pos))
            for layer in self.layers:
                src = layer(src, src_mask)
            return src

    class DecoderLayer(nn.Module):
        def __init__(self, hid_dim, n_heads, pf_dim, dropout, device):
            super().__init__()
            self.self_attn_layer_norm = nn.LayerNorm(hid_dim)
            self.enc_attn_layer_norm = nn.LayerNorm(hid_dim)
            self.ff_layer_norm = nn.LayerNorm(hid_dim)
            self.self_attention = MultiHeadAttentionLayer(hid_dim, n_heads, dropout, device)
            self.encoder_attention = MultiHeadAttentionLayer(hid_dim, n_heads, dropout, device)
            self.positionwise_feedforward = PositionwiseFeedforwardLayer(hid_dim, pf_dim, dropout)
            self.dropout = nn.Dropout(dropout)

        def forward(self, trg, enc_src, trg_mask, src_mask):
            _trg, _ = self.self_attention(trg, trg, trg, trg_mask)
            trg = self.self_attn_layer_norm(trg + self.dropout(_trg))
            _trg, attention = self.encoder_attention(trg, enc_src, enc_src, src_mask)
            trg = self.enc_attn_layer_norm(trg + self.dropout(_trg))
            _trg = self.positionwise_feedforward(trg)
            trg = self.ff_layer_norm(trg + self.dropout(_trg))
            return trg, attention

    class Decoder(nn.Module):
        def __init__(self, output_dim, hid_dim, n_layers, n_heads, pf_dim, dropout, device, max_length=100):
            super().__init__()
            self.device = device
            self.tok_embedding = nn.Embedding(output_dim, hid_dim)
            self.pos_embedding = nn.Embedding(max_length, hid_dim)
            self.layers = nn.ModuleList([DecoderLayer(hid_dim, n_heads, pf_dim, dropout, device)
                                         for _ in range(n_layers)])
            self.fc_out = nn.Linear(hid_dim, output_dim)
            self.dropout = nn.Dropout(dropout)
            self.scale = torch.sqrt(torch.FloatTensor([hid_dim])).to(device)

        def forward(self, trg, enc_src, trg_mask, src_mask):
            batch_size = trg.shape[0]
            trg_len = trg.shape[1]
            pos = torch.arange(0, trg_len).unsqueeze(0).repeat(batch_size, 1).to(self.device)
            trg = self.dropout((self.tok_embedding(trg) * self.scale) + self.pos_embedding(pos))
            for layer in self.layers:
                trg, attention = layer(trg, enc_src, trg_mask, src_mask)
            output = self.fc_out(trg)
            return output, attention

    class Seq2Seq(nn.Module):
        def __init__(self, encoder, decoder, src_pad_idx, trg_pad_idx, device):
            super().__init__()
            self.encoder = encoder
            self.decoder = decoder
            self.src_pad_idx = src_pad_idx
            self.trg_pad_idx = trg_pad_idx
            self.device = device

        def make_src_mask(self, src):
            src_mask = (src != self.src_pad_idx).unsqueeze(1).unsqueeze(2)
            return src_mask

        def make_trg_mask(self, trg):
            trg_pad_mask = (trg != self.trg_pad_idx).unsqueeze(1).unsqueeze(2)
            trg_len = trg.shape[1]
            trg_sub_mask = torch.tril(torch.ones((trg_len, trg_len), device=self.device)).bool()
            trg_mask = trg_pad_mask & trg_sub_mask
            return trg_mask

        def forward(self, src, trg):
            src_mask = self.make_src_mask(src)
            trg_mask = self.make_trg_mask(trg)
            enc_src = self.encoder(src, src_mask)
            output, attention = self.decoder(trg, enc_src, trg_mask, src_mask)
            return output, attention

    enc = Encoder(INPUT_DIM, 16, 2, 4, 32, 0.1, device)
    dec = Decoder(OUTPUT_DIM, 16, 2, 4, 32, 0.1, device)
    model = Seq2Seq(enc, dec, SRC_PAD_IDX, TRG_PAD_IDX, device).to(device)

    def initialize_weights(m):
        if hasattr(m, 'weight') and m.weight.dim() > 1:
            nn.init.xavier_uniform_(m.weight.data)

    model.apply(initialize_weights)
    return model


def seq2seq(torch, init=None, tutorial=4):
    nn = torch.nn
    SEED = 1234
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.cuda.manual_seed(SEED)
    torch.backends.cudnn.deterministic = True
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    train_pairs, valid_pairs = pairs(32, 0), pairs(8, 1)
    src_itos, src_stoi = field_vocab([s for s, _ in train_pairs])
    trg_itos, trg_stoi = field_vocab([t for _, t in train_pairs])
    INPUT_DIM, OUTPUT_DIM = len(src_itos), len(trg_itos)
    SRC_PAD_IDX = TRG_PAD_IDX = 1
    batch_first = tutorial != 4
    train_iterator = batches(torch, train_pairs, src_stoi, trg_stoi, 8, batch_first, sort=tutorial == 4)
    valid_iterator = batches(torch, valid_pairs, src_stoi, trg_stoi, 8, batch_first, sort=tutorial == 4)

    if tutorial == 4:
        model = packed_padded(torch, device, INPUT_DIM, OUTPUT_DIM, SRC_PAD_IDX)
    elif tutorial == 5:
        model = conv_seq2seq(torch, device, INPUT_DIM, OUTPUT_DIM, TRG_PAD_IDX)
    else:
        model = transformer(torch, device, INPUT_DIM, OUTPUT_DIM, SRC_PAD_IDX, TRG_PAD_IDX)
    result = {}
    start_from(torch, model, init, result)

    def count_parameters(model):
        return sum(p.numel() for p in model.parameters() if p.requires_grad)

    printed = [f'The model has {count_parameters(model):,} trainable parameters']
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005 if tutorial != 6 else 0.0005 * 4)
    criterion = nn.CrossEntropyLoss(ignore_index=TRG_PAD_IDX)

    def run(src, src_len, trg, teacher_forcing_ratio):
        if tutorial == 4:
            output = model(src, src_len, trg, teacher_forcing_ratio)
            output_dim = output.shape[-1]
            return output[1:].view(-1, output_dim), trg[1:].view(-1)
        output, _ = model(src, trg[:, :-1])
        output_dim = output.shape[-1]
        return output.contiguous().view(-1, output_dim), trg[:, 1:].contiguous().view(-1)

    def train(model, iterator, optimizer, criterion, clip):
        model.train()
        epoch_loss = 0
        for i, (src, src_len, trg) in enumerate(iterator):
            optimizer.zero_grad()
            output, trg = run(src, src_len, trg, 0.5)
            loss = criterion(output, trg)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            epoch_loss += loss.item()
        return epoch_loss / len(iterator)

    def evaluate(model, iterator, criterion):
        model.eval()
        epoch_loss = 0
        with torch.no_grad():
            for i, (src, src_len, trg) in enumerate(iterator):
                output, trg = run(src, src_len, trg, 0)  # turn off teacher forcing
                loss = criterion(output, trg)
                epoch_loss += loss.item()
        return epoch_loss / len(iterator)

    def epoch_time(start_time, end_time):
        elapsed_time = end_time - start_time
        elapsed_mins = int(elapsed_time / 60)
        elapsed_secs = int(elapsed_time - (elapsed_mins * 60))
        return elapsed_mins, elapsed_secs

    N_EPOCHS = 4
    CLIP = 1
    best_valid_loss = float('inf')
    best_state = None
    losses = []
    for epoch in range(N_EPOCHS):
        start_time = time.time()
        train_loss = train(model, train_iterator, optimizer, criterion, CLIP)
        valid_loss = evaluate(model, valid_iterator, criterion)
        end_time = time.time()
        epoch_mins, epoch_secs = epoch_time(start_time, end_time)
        if valid_loss < best_valid_loss:
            best_valid_loss = valid_loss
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        printed.append(f'\tTrain Loss: {train_loss:.3f} | Train PPL: {math.exp(train_loss):7.3f}')
        printed.append(f'\t Val. Loss: {valid_loss:.3f} |  Val. PPL: {math.exp(valid_loss):7.3f}')
        losses.append([train_loss, valid_loss])
    model.load_state_dict(best_state)

    def translate_sentence(tokens, max_len=12):
        model.eval()
        tokens = ['<sos>'] + [t.lower() for t in tokens] + ['<eos>']
        src_indexes = [src_stoi[token] for token in tokens]
        trg_indexes = [trg_stoi['<sos>']]
        if tutorial == 4:
            src_tensor = torch.LongTensor(src_indexes).unsqueeze(1).to(device)
            src_len = torch.LongTensor([len(src_indexes)])
            with torch.no_grad():
                encoder_outputs, hidden = model.encoder(src_tensor, src_len)
            mask = model.create_mask(src_tensor)
            attentions = torch.zeros(max_len, 1, len(src_indexes)).to(device)
            for i in range(max_len):
                trg_tensor = torch.LongTensor([trg_indexes[-1]]).to(device)
                with torch.no_grad():
                    output, hidden, attention = model.decoder(trg_tensor, hidden, encoder_outputs, mask)
                attentions[i] = attention
                pred_token = output.argmax(1).item()
                trg_indexes.append(pred_token)
                if pred_token == trg_stoi['<eos>']:
                    break
            attention = attentions[:len(trg_indexes) - 1]
        else:
            src_tensor = torch.LongTensor(src_indexes).unsqueeze(0).to(device)
            with torch.no_grad():
                if tutorial == 5:
                    encoder_conved, encoder_combined = model.encoder(src_tensor)
                else:
                    src_mask = model.make_src_mask(src_tensor)
                    enc_src = model.encoder(src_tensor, src_mask)
            for i in range(max_len):
                trg_tensor = torch.LongTensor(trg_indexes).unsqueeze(0).to(device)
                with torch.no_grad():
                    if tutorial == 5:
                        output, attention = model.decoder(trg_tensor, encoder_conved, encoder_combined)
                    else:
                        trg_mask = model.make_trg_mask(trg_tensor)
                        output, attention = model.decoder(trg_tensor, enc_src, trg_mask, src_mask)
                pred_token = output.argmax(2)[:, -1].item()
                trg_indexes.append(pred_token)
                if pred_token == trg_stoi['<eos>']:
                    break
        trg_tokens = [trg_itos[i] for i in trg_indexes]
        return trg_tokens[1:], attention

    translation, attention = translate_sentence(train_pairs[0][0])
    printed.append(f'predicted trg = {translation}')
    # A key projection's bias adds the same q.b_k to every score of a query, which softmax cancels:
    # its gradient is rounding alone, which Adam turns into steps of lr either way. Not compared.
    result.update(printed="\n".join(printed), losses=losses, attention=numpy_of(attention),
                  state={k: numpy_of(v) for k, v in model.state_dict().items() if not k.endswith("fc_k.bias")})
    return result


@pytest.mark.parametrize("tutorial", [4, 5, 6])
def test_seq2seq_tutorial(tutorial):
    ref, got = compare_program(seq2seq, rtol=1e-3, atol=1e-4, tutorial=tutorial)
    assert ref["losses"][-1][0] < ref["losses"][0][0]

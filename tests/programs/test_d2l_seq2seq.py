"""The d2l book's machine-translation chapters (1.0 edition) on a toy corpus: sentences tokenised
and padded by truncate_pad with <pad>/<bos>/<eos>, valid lengths by (array != pad).type(torch.int32)
.sum(1); a Seq2SeqEncoder (Embedding, X.t().type(torch.int64), nn.GRU) initialised by init_seq2seq
through module._flat_weights_names; the Bahdanau decoder (AdditiveAttention with LazyLinear
W_q/W_k/w_v, masked_softmax over repeat_interleave'd valid lengths, a Python loop over time steps
with torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)); the Transformer (MultiHeadAttention
with transpose_qkv/transpose_output, DotProductAttention scaled by math.sqrt(d), PositionWiseFFN,
AddNorm, PositionalEncoding, decoder blocks keeping state[2][self.i] and dec_valid_lens =
torch.arange(1, num_steps + 1).repeat(batch_size, 1)); the padded-token-masked loss
(reduction='none' times mask), Adam with gradient clipping, greedy predict_step with argmax(2), and
the BLEU score."""
import collections
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

SRC_WORDS = "go run stop wait come look eat sleep read write".split()
TGT_WORDS = "va cours arrete attends viens regarde mange dors lis ecris".split()


def corpus(n, seed):
    """Pairs of 2--4 word sentences; the target says the words in reverse order."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n):
        idx = rng.integers(0, len(SRC_WORDS), rng.integers(2, 5))
        pairs.append(([SRC_WORDS[i] for i in idx], [TGT_WORDS[i] for i in idx[::-1]]))
    return pairs


def masked_softmax(torch, X, valid_lens):
    """Perform softmax operation by masking elements on the last axis."""
    # X: 3D tensor, valid_lens: 1D or 2D tensor
    def _sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    if valid_lens is None:
        return torch.nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # On the last axis, replace masked elements with a very large negative value, whose exponentiation outputs 0
        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return torch.nn.functional.softmax(X.reshape(shape), dim=-1)


def models(torch):
    nn = torch.nn

    def init_seq2seq(module):
        """Initialize weights for sequence-to-sequence learning."""
        if type(module) == nn.Linear:
            nn.init.xavier_uniform_(module.weight)
        if type(module) == nn.GRU:
            for param in module._flat_weights_names:
                if "weight" in param:
                    nn.init.xavier_uniform_(module._parameters[param])

    class Seq2SeqEncoder(nn.Module):
        """The RNN encoder for sequence-to-sequence learning."""
        def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, embed_size)
            self.rnn = nn.GRU(embed_size, num_hiddens, num_layers, dropout=dropout)
            self.apply(init_seq2seq)

        def forward(self, X, *args):
            # X shape: (batch_size, num_steps)
            embs = self.embedding(X.t().type(torch.int64))
            # embs shape: (num_steps, batch_size, embed_size)
            outputs, state = self.rnn(embs)
            # outputs shape: (num_steps, batch_size, num_hiddens)
            # state shape: (num_layers, batch_size, num_hiddens)
            return outputs, state

    class AdditiveAttention(nn.Module):
        """Additive attention."""
        def __init__(self, num_hiddens, dropout, **kwargs):
            super(AdditiveAttention, self).__init__(**kwargs)
            self.W_k = nn.LazyLinear(num_hiddens, bias=False)
            self.W_q = nn.LazyLinear(num_hiddens, bias=False)
            self.w_v = nn.LazyLinear(1, bias=False)
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens):
            queries, keys = self.W_q(queries), self.W_k(keys)
            # After dimension expansion, shape of queries: (batch_size, no. of queries, 1, num_hiddens) and shape
            # of keys: (batch_size, 1, no. of key-value pairs, num_hiddens). Sum them up with broadcasting
            features = queries.unsqueeze(2) + keys.unsqueeze(1)
            features = torch.tanh(features)
            # There is only one output of self.w_v, so we remove the last one-dimensional entry from the shape.
            scores = self.w_v(features).squeeze(-1)
            self.attention_weights = masked_softmax(torch, scores, valid_lens)
            # Shape of values: (batch_size, no. of key-value pairs, value dimension)
            return torch.bmm(self.dropout(self.attention_weights), values)

    class Seq2SeqAttentionDecoder(nn.Module):
        def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
            super().__init__()
            self.attention = AdditiveAttention(num_hiddens, dropout)
            self.embedding = nn.Embedding(vocab_size, embed_size)
            self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
            self.dense = nn.LazyLinear(vocab_size)
            self.apply(init_seq2seq)

        def init_state(self, enc_outputs, enc_valid_lens):
            # Shape of outputs: (num_steps, batch_size, num_hiddens).
            # Shape of hidden_state: (num_layers, batch_size, num_hiddens)
            outputs, hidden_state = enc_outputs
            return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)

        def forward(self, X, state):
            # Shape of enc_outputs: (batch_size, num_steps, num_hiddens).
            # Shape of hidden_state: (num_layers, batch_size, num_hiddens)
            enc_outputs, hidden_state, enc_valid_lens = state
            # Shape of the output X: (num_steps, batch_size, embed_size)
            X = self.embedding(X).permute(1, 0, 2)
            outputs, self._attention_weights = [], []
            for x in X:
                # Shape of query: (batch_size, 1, num_hiddens)
                query = torch.unsqueeze(hidden_state[-1], dim=1)
                # Shape of context: (batch_size, 1, num_hiddens)
                context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
                # Concatenate on the feature dimension
                x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
                # Reshape x as (1, batch_size, embed_size + num_hiddens)
                out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
                outputs.append(out)
                self._attention_weights.append(self.attention.attention_weights)
            # After fully connected layer transformation, shape of outputs: (num_steps, batch_size, vocab_size)
            outputs = self.dense(torch.cat(outputs, dim=0))
            return outputs.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]

        @property
        def attention_weights(self):
            return self._attention_weights

    class DotProductAttention(nn.Module):
        """Scaled dot product attention."""
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)

        # Shape of queries: (batch_size, no. of queries, d)
        # Shape of keys: (batch_size, no. of key-value pairs, d)
        # Shape of values: (batch_size, no. of key-value pairs, value dimension)
        # Shape of valid_lens: (batch_size,) or (batch_size, no. of queries)
        def forward(self, queries, keys, values, valid_lens=None):
            d = queries.shape[-1]
            # Swap the last two dimensions of keys with keys.transpose(1, 2)
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
            self.attention_weights = masked_softmax(torch, scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    class MultiHeadAttention(nn.Module):
        """Multi-head attention."""
        def __init__(self, num_hiddens, num_heads, dropout, bias=False, **kwargs):
            super().__init__()
            self.num_heads = num_heads
            self.attention = DotProductAttention(dropout)
            self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

        def transpose_qkv(self, X):
            """Transposition for parallel computation of multiple attention heads."""
            # Shape of input X: (batch_size, no. of queries or key-value pairs, num_hiddens). Shape of output X:
            # (batch_size, no. of queries or key-value pairs, num_heads, num_hiddens / num_heads)
            X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
            # Shape of output X: (batch_size, num_heads, no. of queries or key-value pairs, num_hiddens / num_heads)
            X = X.permute(0, 2, 1, 3)
            # Shape of output: (batch_size * num_heads, no. of queries or key-value pairs, num_hiddens / num_heads)
            return X.reshape(-1, X.shape[2], X.shape[3])

        def transpose_output(self, X):
            """Reverse the operation of transpose_qkv."""
            X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
            X = X.permute(0, 2, 1, 3)
            return X.reshape(X.shape[0], X.shape[1], -1)

        def forward(self, queries, keys, values, valid_lens):
            queries = self.transpose_qkv(self.W_q(queries))
            keys = self.transpose_qkv(self.W_k(keys))
            values = self.transpose_qkv(self.W_v(values))
            if valid_lens is not None:
                # On axis 0, copy the first item (scalar or vector) for num_heads times, then copy the next item,
                # and so on
                valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
            output = self.attention(queries, keys, values, valid_lens)
            output_concat = self.transpose_output(output)
            return self.W_o(output_concat)

    class PositionalEncoding(nn.Module):
        """Positional encoding."""
        def __init__(self, num_hiddens, dropout, max_len=1000):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            # Create a long enough P
            self.P = torch.zeros((1, max_len, num_hiddens))
            X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
                10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
            self.P[:, :, 0::2] = torch.sin(X)
            self.P[:, :, 1::2] = torch.cos(X)

        def forward(self, X):
            X = X + self.P[:, :X.shape[1], :].to(X.device)
            return self.dropout(X)

    class PositionWiseFFN(nn.Module):
        """The positionwise feed-forward network."""
        def __init__(self, ffn_num_hiddens, ffn_num_outputs):
            super().__init__()
            self.dense1 = nn.LazyLinear(ffn_num_hiddens)
            self.relu = nn.ReLU()
            self.dense2 = nn.LazyLinear(ffn_num_outputs)

        def forward(self, X):
            return self.dense2(self.relu(self.dense1(X)))

    class AddNorm(nn.Module):
        """The residual connection followed by layer normalization."""
        def __init__(self, norm_shape, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.ln = nn.LayerNorm(norm_shape)

        def forward(self, X, Y):
            return self.ln(self.dropout(Y) + X)

    class TransformerEncoderBlock(nn.Module):
        """The Transformer encoder block."""
        def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
            super().__init__()
            self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
            self.addnorm1 = AddNorm(num_hiddens, dropout)
            self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
            self.addnorm2 = AddNorm(num_hiddens, dropout)

        def forward(self, X, valid_lens):
            Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
            return self.addnorm2(Y, self.ffn(Y))

    class TransformerEncoder(nn.Module):
        """The Transformer encoder."""
        def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout, use_bias=False):
            super().__init__()
            self.num_hiddens = num_hiddens
            self.embedding = nn.Embedding(vocab_size, num_hiddens)
            self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
            self.blks = nn.Sequential()
            for i in range(num_blks):
                self.blks.add_module("block" + str(i), TransformerEncoderBlock(
                    num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias))

        def forward(self, X, valid_lens):
            # Since positional encoding values are between -1 and 1, the embedding values are multiplied by the
            # square root of the embedding dimension to rescale before they are summed up
            X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
            self.attention_weights = [None] * len(self.blks)
            for i, blk in enumerate(self.blks):
                X = blk(X, valid_lens)
                self.attention_weights[i] = blk.attention.attention.attention_weights
            return X

    class TransformerDecoderBlock(nn.Module):
        # The i-th block in the Transformer decoder
        def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
            super().__init__()
            self.i = i
            self.attention1 = MultiHeadAttention(num_hiddens, num_heads, dropout)
            self.addnorm1 = AddNorm(num_hiddens, dropout)
            self.attention2 = MultiHeadAttention(num_hiddens, num_heads, dropout)
            self.addnorm2 = AddNorm(num_hiddens, dropout)
            self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
            self.addnorm3 = AddNorm(num_hiddens, dropout)

        def forward(self, X, state):
            enc_outputs, enc_valid_lens = state[0], state[1]
            # During training, all the tokens of any output sequence are processed at the same time, so state[2][self.i]
            # is None as initialized. When decoding any output sequence token by token during prediction,
            # state[2][self.i] contains representations of the decoded output at the i-th block up to the current
            # time step
            if state[2][self.i] is None:
                key_values = X
            else:
                key_values = torch.cat((state[2][self.i], X), dim=1)
            state[2][self.i] = key_values
            if self.training:
                batch_size, num_steps, _ = X.shape
                # Shape of dec_valid_lens: (batch_size, num_steps), where every row is [1, 2, ..., num_steps]
                dec_valid_lens = torch.arange(1, num_steps + 1, device=X.device).repeat(batch_size, 1)
            else:
                dec_valid_lens = None
            # Self-attention
            X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
            Y = self.addnorm1(X, X2)
            # Encoder-decoder attention. Shape of enc_outputs: (batch_size, num_steps, num_hiddens)
            Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
            Z = self.addnorm2(Y, Y2)
            return self.addnorm3(Z, self.ffn(Z)), state

    class TransformerDecoder(nn.Module):
        def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout):
            super().__init__()
            self.num_hiddens = num_hiddens
            self.num_blks = num_blks
            self.embedding = nn.Embedding(vocab_size, num_hiddens)
            self.pos_encoding = PositionalEncoding(num_hiddens, dropout)
            self.blks = nn.Sequential()
            for i in range(num_blks):
                self.blks.add_module("block" + str(i), TransformerDecoderBlock(
                    num_hiddens, ffn_num_hiddens, num_heads, dropout, i))
            self.dense = nn.LazyLinear(vocab_size)

        def init_state(self, enc_outputs, enc_valid_lens):
            return [enc_outputs, enc_valid_lens, [None] * self.num_blks]

        def forward(self, X, state):
            X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
            self._attention_weights = [[None] * len(self.blks) for _ in range(2)]
            for i, blk in enumerate(self.blks):
                X, state = blk(X, state)
                # Decoder self-attention weights
                self._attention_weights[0][i] = blk.attention1.attention.attention_weights
                # Encoder-decoder attention weights
                self._attention_weights[1][i] = blk.attention2.attention.attention_weights
            return self.dense(X), state

        @property
        def attention_weights(self):
            return self._attention_weights

    return dict(Seq2SeqEncoder=Seq2SeqEncoder, Seq2SeqAttentionDecoder=Seq2SeqAttentionDecoder,
                TransformerEncoder=TransformerEncoder, TransformerDecoder=TransformerDecoder,
                AdditiveAttention=AdditiveAttention, PositionalEncoding=PositionalEncoding,
                TransformerEncoderBlock=TransformerEncoderBlock)


class Vocab:
    """Vocabulary for text, its tokens sorted as d2l's are."""
    def __init__(self, tokens, reserved_tokens):
        counter = collections.Counter(token for line in tokens for token in line)
        self.idx_to_token = list(sorted(set(['<unk>'] + reserved_tokens + list(counter))))
        self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}

    def __len__(self):
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, self.token_to_idx['<unk>'])
        return [self.__getitem__(token) for token in tokens]

    def to_tokens(self, indices):
        if hasattr(indices, '__len__') and len(indices) > 1:
            return [self.idx_to_token[int(index)] for index in indices]
        return self.idx_to_token[indices]


def bleu(pred_seq, label_seq, k):
    """Compute the BLEU."""
    pred_tokens, label_tokens = pred_seq.split(' '), label_seq.split(' ')
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    score = math.exp(min(0, 1 - len_label / len_pred))
    for n in range(1, min(k, len_pred) + 1):
        num_matches, label_subs = 0, collections.defaultdict(int)
        for i in range(len_label - n + 1):
            label_subs[' '.join(label_tokens[i: i + n])] += 1
        for i in range(len_pred - n + 1):
            if label_subs[' '.join(pred_tokens[i: i + n])] > 0:
                num_matches += 1
                label_subs[' '.join(pred_tokens[i: i + n])] -= 1
        score *= math.pow(num_matches / (len_pred - n + 1), math.pow(0.5, n))
    return score


def translate(torch, init=None, arch="bahdanau", num_steps=6, batch_size=16, steps=8, lr=0.005):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    pairs = corpus(batch_size * steps, seed=0)
    src_vocab = Vocab([s for s, _ in pairs], ['<pad>', '<bos>', '<eos>'])
    tgt_vocab = Vocab([t for _, t in pairs], ['<pad>', '<bos>', '<eos>'])

    def truncate_pad(line, num_steps, padding_token):
        """Truncate or pad sequences."""
        if len(line) > num_steps:
            return line[:num_steps]  # Truncate
        return line + [padding_token] * (num_steps - len(line))  # Pad

    def build_array(sentences, vocab, is_tgt=False):
        sentences = [s + ['<eos>'] for s in sentences]
        if is_tgt:
            sentences = [['<bos>'] + s for s in sentences]
        array = torch.tensor([truncate_pad(vocab[s], num_steps, vocab['<pad>']) for s in sentences])
        valid_len = (array != vocab['<pad>']).type(torch.int32).sum(1)
        return array, valid_len

    src, src_valid_len = build_array([s for s, _ in pairs], src_vocab)
    tgt, _ = build_array([t for _, t in pairs], tgt_vocab, is_tgt=True)
    dec_X, Y = tgt[:, :-1], tgt[:, 1:]

    d2l = models(torch)
    if arch == "bahdanau":
        encoder = d2l["Seq2SeqEncoder"](len(src_vocab), 16, 32, 2)
        decoder = d2l["Seq2SeqAttentionDecoder"](len(tgt_vocab), 16, 32, 2)
    else:
        encoder = d2l["TransformerEncoder"](len(src_vocab), 32, 64, 4, 2, 0.0)
        decoder = d2l["TransformerDecoder"](len(tgt_vocab), 32, 64, 4, 2, 0.0)

    class Seq2Seq(nn.Module):
        """The encoder--decoder architecture for sequence to sequence learning."""
        def __init__(self, encoder, decoder, tgt_pad):
            super().__init__()
            self.encoder, self.decoder, self.tgt_pad = encoder, decoder, tgt_pad

        def forward(self, enc_X, dec_X, *args):
            enc_all_outputs = self.encoder(enc_X, *args)
            dec_state = self.decoder.init_state(enc_all_outputs, *args)
            # Return decoder output only
            return self.decoder(dec_X, dec_state)[0]

        def loss(self, Y_hat, Y):
            Y_hat = Y_hat.reshape((-1, Y_hat.shape[-1]))
            l = F.cross_entropy(Y_hat, Y.reshape((-1,)), reduction='none')
            mask = (Y.reshape(-1) != self.tgt_pad).type(torch.float32)
            return (l * mask).sum() / mask.sum()

        def predict_step(self, batch, num_steps, save_attention_weights=False):
            src, tgt, src_valid_len, _ = batch
            enc_all_outputs = self.encoder(src, src_valid_len)
            dec_state = self.decoder.init_state(enc_all_outputs, src_valid_len)
            outputs, attention_weights = [tgt[:, (0)].unsqueeze(1), ], []
            for _ in range(num_steps):
                Y, dec_state = self.decoder(outputs[-1], dec_state)
                outputs.append(Y.argmax(2))
                # Save attention weights (to be covered later)
                if save_attention_weights:
                    attention_weights.append(self.decoder.attention_weights)
            return torch.cat(outputs[1:], 1), attention_weights

    model = Seq2Seq(encoder, decoder, tgt_pad=tgt_vocab['<pad>'])
    model.eval()
    with torch.no_grad():
        model(src[:2], dec_X[:2], src_valid_len[:2])  # materialise the lazy layers
    result = {}
    start_from(torch, model, init, result)
    optim = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    for step in range(steps):
        batch = slice(step * batch_size, (step + 1) * batch_size)
        Y_hat = model(src[batch], dec_X[batch], src_valid_len[batch])
        l = model.loss(Y_hat, Y[batch])
        optim.zero_grad()
        with torch.no_grad():
            l.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1)
            optim.step()
        losses.append(l.item())

    model.eval()
    tests = corpus(4, seed=5)
    t_src, t_len = build_array([s for s, _ in tests], src_vocab)
    t_tgt, _ = build_array([t for _, t in tests], tgt_vocab, is_tgt=True)
    with torch.no_grad():
        preds, weights = model.predict_step([t_src, t_tgt, t_len, None], num_steps, save_attention_weights=True)
    translations, scores = [], []
    for (s, t), p in zip(tests, preds):
        translation = []
        for token in tgt_vocab.to_tokens(p):
            if token == '<eos>':
                break
            translation.append(token)
        translations.append(' '.join(translation))
        scores.append(bleu(' '.join(translation), ' '.join(t), k=2) if translation else 0.0)
    last = weights[-1] if arch == "bahdanau" else weights[-1][1]
    result.update(losses=losses, translations=translations, bleu=scores, attention=numpy_of(last[-1]),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_seq2seq_bahdanau_attention():
    ref, got = compare_program(translate, arch="bahdanau")
    assert ref["losses"][-1] < ref["losses"][0]
    # the attention over padded source positions is zero (masked_softmax's -1e6)
    assert ref["attention"].shape == (4, 1, 6)


def test_transformer_encoder_decoder():
    ref, got = compare_program(translate, arch="transformer", lr=0.002)
    assert ref["losses"][-1] < ref["losses"][0]
    assert ref["attention"].shape == (16, 1, 6)  # batch * heads queries over the source

"""Harvard NLP's "The Annotated Transformer" (the 2022 version) as its notebook runs it, smaller:
EncoderDecoder, clones by copy.deepcopy into an nn.ModuleList, its own LayerNorm (x.std(-1,
keepdim=True) with a_2/b_2 Parameters), SublayerConnection taking lambdas, attention() with
scores.masked_fill(mask == 0, -1e9) and scores.softmax(dim=-1), MultiHeadedAttention zipping
self.linears with (query, key, value) and keeping self.attn, PositionalEncoding with pe[:, 0::2] =
torch.sin(...) and self.pe[:, : x.size(1)].requires_grad_(False), make_model's xavier_uniform_ for
p.dim() > 1; subsequent_mask by torch.triu(...).type(torch.uint8) == 0 and Batch.make_std_mask
with type_as; inference_test (torch.empty(1, 1).type_as(src.data).fill_(next_word)); the learning
schedule through LambdaLR(optimizer=..., lr_lambda=lambda step: rate(step, *example));
LabelSmoothing (x.data.clone().fill_, scatter_, torch.nonzero, index_fill_, KLDivLoss(reduction=
"sum")) on the notebook's example; example_simple_model's copy task (data_gen by torch.randint,
SimpleLossCompute returning sloss.data * norm, run_epoch with TrainState and its '%6.2f'-formatted
tensor losses, a DummyOptimizer subclassing torch.optim.Optimizer without calling its __init__, and
greedy_decode); and Part 3's collate_batch (torch.cat of <s>, ids and </s>, then
pad(processed, (0, max_padding - len(processed)), value=pad_id) and torch.stack). Seeds are
torch.manual_seed in both libraries, so data, dropout and initial weights agree."""
import copy
import math
import time

import numpy as np

from prog_helpers import compare_program, numpy_of


def annotated(torch, init=None, epochs=3):
    nn = torch.nn
    from_functional = torch.nn.functional
    log_softmax, pad = from_functional.log_softmax, from_functional.pad
    LambdaLR = torch.optim.lr_scheduler.LambdaLR
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args).replace("minitorch", "torch"))

    class DummyOptimizer(torch.optim.Optimizer):
        def __init__(self):
            self.param_groups = [{"lr": 0}]
            None

        def step(self):
            None

        def zero_grad(self, set_to_none=False):
            None

    class DummyScheduler:
        def step(self):
            None

    class EncoderDecoder(nn.Module):
        def __init__(self, encoder, decoder, src_embed, tgt_embed, generator):
            super(EncoderDecoder, self).__init__()
            self.encoder = encoder
            self.decoder = decoder
            self.src_embed = src_embed
            self.tgt_embed = tgt_embed
            self.generator = generator

        def forward(self, src, tgt, src_mask, tgt_mask):
            "Take in and process masked src and target sequences."
            return self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)

        def encode(self, src, src_mask):
            return self.encoder(self.src_embed(src), src_mask)

        def decode(self, memory, src_mask, tgt, tgt_mask):
            return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)

    class Generator(nn.Module):
        def __init__(self, d_model, vocab):
            super(Generator, self).__init__()
            self.proj = nn.Linear(d_model, vocab)

        def forward(self, x):
            return log_softmax(self.proj(x), dim=-1)

    def clones(module, N):
        "Produce N identical layers."
        return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])

    class Encoder(nn.Module):
        def __init__(self, layer, N):
            super(Encoder, self).__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)

        def forward(self, x, mask):
            for layer in self.layers:
                x = layer(x, mask)
            return self.norm(x)

    class LayerNorm(nn.Module):
        def __init__(self, features, eps=1e-6):
            super(LayerNorm, self).__init__()
            self.a_2 = nn.Parameter(torch.ones(features))
            self.b_2 = nn.Parameter(torch.zeros(features))
            self.eps = eps

        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            std = x.std(-1, keepdim=True)
            return self.a_2 * (x - mean) / (std + self.eps) + self.b_2

    class SublayerConnection(nn.Module):
        def __init__(self, size, dropout):
            super(SublayerConnection, self).__init__()
            self.norm = LayerNorm(size)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, sublayer):
            return x + self.dropout(sublayer(self.norm(x)))

    class EncoderLayer(nn.Module):
        def __init__(self, size, self_attn, feed_forward, dropout):
            super(EncoderLayer, self).__init__()
            self.self_attn = self_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 2)
            self.size = size

        def forward(self, x, mask):
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
            return self.sublayer[1](x, self.feed_forward)

    class Decoder(nn.Module):
        def __init__(self, layer, N):
            super(Decoder, self).__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)

        def forward(self, x, memory, src_mask, tgt_mask):
            for layer in self.layers:
                x = layer(x, memory, src_mask, tgt_mask)
            return self.norm(x)

    class DecoderLayer(nn.Module):
        def __init__(self, size, self_attn, src_attn, feed_forward, dropout):
            super(DecoderLayer, self).__init__()
            self.size = size
            self.self_attn = self_attn
            self.src_attn = src_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 3)

        def forward(self, x, memory, src_mask, tgt_mask):
            m = memory
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
            x = self.sublayer[1](x, lambda x: self.src_attn(x, m, m, src_mask))
            return self.sublayer[2](x, self.feed_forward)

    def subsequent_mask(size):
        "Mask out subsequent positions."
        attn_shape = (1, size, size)
        subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
        return subsequent_mask == 0

    def attention(query, key, value, mask=None, dropout=None):
        "Compute 'Scaled Dot Product Attention'"
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        if dropout is not None:
            p_attn = dropout(p_attn)
        return torch.matmul(p_attn, value), p_attn

    class MultiHeadedAttention(nn.Module):
        def __init__(self, h, d_model, dropout=0.1):
            super(MultiHeadedAttention, self).__init__()
            assert d_model % h == 0
            self.d_k = d_model // h
            self.h = h
            self.linears = clones(nn.Linear(d_model, d_model), 4)
            self.attn = None
            self.dropout = nn.Dropout(p=dropout)

        def forward(self, query, key, value, mask=None):
            if mask is not None:
                # Same mask applied to all h heads.
                mask = mask.unsqueeze(1)
            nbatches = query.size(0)
            # 1) Do all the linear projections in batch from d_model => h x d_k
            query, key, value = [
                lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                for lin, x in zip(self.linears, (query, key, value))
            ]
            # 2) Apply attention on all the projected vectors in batch.
            x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
            # 3) "Concat" using a view and apply a final linear.
            x = (x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k))
            del query
            del key
            del value
            return self.linears[-1](x)

    class PositionwiseFeedForward(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.1):
            super(PositionwiseFeedForward, self).__init__()
            self.w_1 = nn.Linear(d_model, d_ff)
            self.w_2 = nn.Linear(d_ff, d_model)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.w_2(self.dropout(self.w_1(x).relu()))

    class Embeddings(nn.Module):
        def __init__(self, d_model, vocab):
            super(Embeddings, self).__init__()
            self.lut = nn.Embedding(vocab, d_model)
            self.d_model = d_model

        def forward(self, x):
            return self.lut(x) * math.sqrt(self.d_model)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout, max_len=5000):
            super(PositionalEncoding, self).__init__()
            self.dropout = nn.Dropout(p=dropout)
            # Compute the positional encodings once in log space.
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:, : x.size(1)].requires_grad_(False)
            return self.dropout(x)

    def make_model(src_vocab, tgt_vocab, N=6, d_model=512, d_ff=2048, h=8, dropout=0.1):
        "Helper: Construct a model from hyperparameters."
        c = copy.deepcopy
        attn = MultiHeadedAttention(h, d_model)
        ff = PositionwiseFeedForward(d_model, d_ff, dropout)
        position = PositionalEncoding(d_model, dropout, max_len=64)
        model = EncoderDecoder(
            Encoder(EncoderLayer(d_model, c(attn), c(ff), dropout), N),
            Decoder(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout), N),
            nn.Sequential(Embeddings(d_model, src_vocab), c(position)),
            nn.Sequential(Embeddings(d_model, tgt_vocab), c(position)),
            Generator(d_model, tgt_vocab),
        )
        # Initialize parameters with Glorot / fan_avg.
        for p in model.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        return model

    def inference_test():
        test_model = make_model(11, 11, 2, d_model=32, d_ff=64, h=4)
        test_model.eval()
        src = torch.LongTensor([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]])
        src_mask = torch.ones(1, 1, 10)
        memory = test_model.encode(src, src_mask)
        ys = torch.zeros(1, 1).type_as(src)
        for i in range(9):
            out = test_model.decode(memory, src_mask, ys, subsequent_mask(ys.size(1)).type_as(src.data))
            prob = test_model.generator(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.data[0]
            ys = torch.cat([ys, torch.empty(1, 1).type_as(src.data).fill_(next_word)], dim=1)
        print("Example Untrained Model Prediction:", ys)

    class Batch:
        """Object for holding a batch of data with mask during training."""

        def __init__(self, src, tgt=None, pad=2):  # 2 = <blank>
            self.src = src
            self.src_mask = (src != pad).unsqueeze(-2)
            if tgt is not None:
                self.tgt = tgt[:, :-1]
                self.tgt_y = tgt[:, 1:]
                self.tgt_mask = self.make_std_mask(self.tgt, pad)
                self.ntokens = (self.tgt_y != pad).data.sum()

        @staticmethod
        def make_std_mask(tgt, pad):
            "Create a mask to hide padding and future words."
            tgt_mask = (tgt != pad).unsqueeze(-2)
            tgt_mask = tgt_mask & subsequent_mask(tgt.size(-1)).type_as(tgt_mask.data)
            return tgt_mask

    class TrainState:
        """Track number of steps, examples, and tokens processed"""
        step: int = 0  # Steps in the current epoch
        accum_step: int = 0  # Number of gradient accumulation steps
        samples: int = 0  # total # of examples used
        tokens: int = 0  # total # of tokens processed

    def run_epoch(data_iter, model, loss_compute, optimizer, scheduler, mode="train", accum_iter=1,
                  train_state=TrainState()):
        """Train a single epoch"""
        start = time.time()
        total_tokens = 0
        total_loss = 0
        tokens = 0
        n_accum = 0
        for i, batch in enumerate(data_iter):
            out = model.forward(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
            loss, loss_node = loss_compute(out, batch.tgt_y, batch.ntokens)
            if mode == "train" or mode == "train+log":
                loss_node.backward()
                train_state.step += 1
                train_state.samples += batch.src.shape[0]
                train_state.tokens += batch.ntokens
                if i % accum_iter == 0:
                    optimizer.step()
                    optimizer.zero_grad(set_to_none=True)
                    n_accum += 1
                    train_state.accum_step += 1
                scheduler.step()
            total_loss += loss
            total_tokens += batch.ntokens
            tokens += batch.ntokens
            if i % 40 == 1 and (mode == "train" or mode == "train+log"):
                lr = optimizer.param_groups[0]["lr"]
                elapsed = time.time() - start
                print(("Epoch Step: %6d | Accumulation Step: %3d | Loss: %6.2f "
                       + "| Tokens / Sec: %7.1f | Learning Rate: %6.1e")
                      % (i, n_accum, loss / batch.ntokens, tokens / elapsed, lr))
                start = time.time()
                tokens = 0
            del loss
            del loss_node
        return total_loss / total_tokens, train_state

    def rate(step, model_size, factor, warmup):
        if step == 0:
            step = 1
        return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))

    def example_learning_schedule():
        opts = [[512, 1, 40], [512, 1, 80], [256, 1, 40]]
        dummy_model = torch.nn.Linear(1, 1)
        learning_rates = []
        for idx, example in enumerate(opts):
            optimizer = torch.optim.Adam(dummy_model.parameters(), lr=1, betas=(0.9, 0.98), eps=1e-9)
            lr_scheduler = LambdaLR(optimizer=optimizer, lr_lambda=lambda step: rate(step, *example))
            tmp = []
            for step in range(200):
                tmp.append(optimizer.param_groups[0]["lr"])
                optimizer.step()
                lr_scheduler.step()
            learning_rates.append(tmp)
        learning_rates = torch.tensor(learning_rates)
        return learning_rates

    class LabelSmoothing(nn.Module):
        "Implement label smoothing."

        def __init__(self, size, padding_idx, smoothing=0.0):
            super(LabelSmoothing, self).__init__()
            self.criterion = nn.KLDivLoss(reduction="sum")
            self.padding_idx = padding_idx
            self.confidence = 1.0 - smoothing
            self.smoothing = smoothing
            self.size = size
            self.true_dist = None

        def forward(self, x, target):
            assert x.size(1) == self.size
            true_dist = x.data.clone()
            true_dist.fill_(self.smoothing / (self.size - 2))
            true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
            true_dist[:, self.padding_idx] = 0
            mask = torch.nonzero(target.data == self.padding_idx)
            if mask.dim() > 0:
                true_dist.index_fill_(0, mask.squeeze(), 0.0)
            self.true_dist = true_dist
            return self.criterion(x, true_dist.clone().detach())

    def example_label_smoothing():
        crit = LabelSmoothing(5, 0, 0.4)
        predict = torch.FloatTensor([[0, 0.2, 0.7, 0.1, 0]] * 5)
        loss = crit(x=predict.log(), target=torch.LongTensor([2, 1, 0, 3, 3]))
        return crit.true_dist, loss

    def loss(x, crit):
        d = x + 3 * 1
        predict = torch.FloatTensor([[0, x / d, 1 / d, 1 / d, 1 / d]])
        return crit(predict.log(), torch.LongTensor([1])).data

    def data_gen(V, batch_size, nbatches):
        "Generate random data for a src-tgt copy task."
        for i in range(nbatches):
            data = torch.randint(1, V, size=(batch_size, 10))
            data[:, 0] = 1
            src = data.requires_grad_(False).clone().detach()
            tgt = data.requires_grad_(False).clone().detach()
            yield Batch(src, tgt, 0)

    class SimpleLossCompute:
        "A simple loss compute and train function."

        def __init__(self, generator, criterion):
            self.generator = generator
            self.criterion = criterion

        def __call__(self, x, y, norm):
            x = self.generator(x)
            sloss = (self.criterion(x.contiguous().view(-1, x.size(-1)), y.contiguous().view(-1)) / norm)
            return sloss.data * norm, sloss

    def greedy_decode(model, src, src_mask, max_len, start_symbol):
        memory = model.encode(src, src_mask)
        ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)
        for i in range(max_len - 1):
            out = model.decode(memory, src_mask, ys, subsequent_mask(ys.size(1)).type_as(src.data))
            prob = model.generator(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.data[0]
            ys = torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1)
        return ys

    def collate_batch(batch, src_pipeline, tgt_pipeline, src_vocab, tgt_vocab, device, max_padding=12, pad_id=2):
        bs_id = torch.tensor([0], device=device)  # <s> token id
        eos_id = torch.tensor([1], device=device)  # </s> token id
        src_list, tgt_list = [], []
        for (_src, _tgt) in batch:
            processed_src = torch.cat(
                [bs_id, torch.tensor(src_vocab(src_pipeline(_src)), dtype=torch.int64, device=device), eos_id], 0)
            processed_tgt = torch.cat(
                [bs_id, torch.tensor(tgt_vocab(tgt_pipeline(_tgt)), dtype=torch.int64, device=device), eos_id], 0)
            src_list.append(
                # warning - overwrites values for negative values of padding - len
                pad(processed_src, (0, max_padding - len(processed_src)), value=pad_id))
            tgt_list.append(pad(processed_tgt, (0, max_padding - len(processed_tgt)), value=pad_id))
        src = torch.stack(src_list)
        tgt = torch.stack(tgt_list)
        return (src, tgt)

    result = {}
    torch.manual_seed(0)
    inference_test()
    result["schedule"] = numpy_of(example_learning_schedule())
    true_dist, ls_loss = example_label_smoothing()
    result["label_smoothing"] = [numpy_of(true_dist), ls_loss.item()]
    crit = LabelSmoothing(5, 0, 0.1)
    result["penalization"] = [float(loss(x, crit)) for x in range(1, 20)]
    result["mask"] = numpy_of(subsequent_mask(4))

    # example_simple_model
    V = 11
    criterion = LabelSmoothing(size=V, padding_idx=0, smoothing=0.0)
    model = make_model(V, V, N=2, d_model=32, d_ff=64, h=4)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
    lr_scheduler = LambdaLR(optimizer=optimizer, lr_lambda=lambda step: rate(
        step, model_size=model.src_embed[0].d_model, factor=1.0, warmup=400))
    batch_size = 16
    eval_losses = []
    for epoch in range(epochs):
        model.train()
        run_epoch(data_gen(V, batch_size, 4), model, SimpleLossCompute(model.generator, criterion), optimizer,
                  lr_scheduler, mode="train")
        model.eval()
        eval_losses.append(run_epoch(data_gen(V, batch_size, 2), model, SimpleLossCompute(model.generator, criterion),
                                     DummyOptimizer(), DummyScheduler(), mode="eval")[0].item())
    model.eval()
    src = torch.LongTensor([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]])
    max_len = src.shape[1]
    src_mask = torch.ones(1, 1, max_len)
    print(greedy_decode(model, src, src_mask, max_len=max_len, start_symbol=0))

    vocab = {w: i + 4 for i, w in enumerate("ein zwei drei one two three".split())}
    src, tgt = collate_batch([("ein zwei", "one two"), ("drei", "three")], str.split, str.split,
                             lambda toks: [vocab[t] for t in toks], lambda toks: [vocab[t] for t in toks], "cpu")
    result.update(eval_losses=eval_losses, collated=[numpy_of(src), numpy_of(tgt)],
                  printed="\n".join(p for p in printed if not p.startswith("Epoch Step")),
                  logged=[p.split("|")[2] for p in printed if p.startswith("Epoch Step")],
                  # linears[1] projects keys: its bias adds one constant to a query's scores, which
                  # softmax cancels, so its gradient is rounding alone (Adam makes steps of it).
                  state={k: numpy_of(v) for k, v in model.state_dict().items() if not k.endswith("linears.1.bias")})
    return result


def test_annotated_transformer():
    ref, got = compare_program(annotated, rtol=1e-3, atol=1e-4)
    assert got["logged"] and got["logged"] == ref["logged"]
    assert "Example Untrained Model Prediction: tensor([[0," in got["printed"]
    np.testing.assert_array_equal(got["collated"][0][1], [0, 6, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2])

"""codertimo's BERT-pytorch (bert_pytorch/) as its modules and trainer write it, with the corpus
file replaced by generated sentence pairs: the WordVocab's special indices, BERTDataset's
random_word masking (random.random, 15% of tokens: 80% [MASK], 10% random, 10% kept) and random_sent
next-sentence pairs, returned as {key: torch.tensor(value)} and batched by a DataLoader's default
collate of dicts; PositionalEmbedding (pe.require_grad = False on a tensor, register_buffer, sin/cos
written into pe[:, 0::2]), TokenEmbedding and SegmentEmbedding as nn.Embedding subclasses with
padding_idx=0, the hand-written GELU and LayerNorm (x.std(-1, keepdim=True)), SublayerConnection,
MultiHeadedAttention (linear layers zipped with (query, key, value), view/transpose, masked_fill(mask ==
0, -1e9)), the mask (x > 0).unsqueeze(1).repeat(1, x.size(1), 1).unsqueeze(1), BERTLM's
NextSentencePrediction and MaskedLanguageModel heads with nn.LogSoftmax, nn.NLLLoss(ignore_index=0) on
mask_lm_output.transpose(1, 2), Adam with weight_decay under ScheduledOptim (NumPy float64 learning
rates written into param_groups), the trainer's tqdm over enumerate(data_loader), the accuracy
argmax(dim=-1).eq(...).sum().item() and nelement(), and BERTTrainer.save's torch.save(self.bert.cpu(),
path) of the whole module, loaded back with torch.load(weights_only=False)."""
import io
import math
import random

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from

tqdm = pytest.importorskip("tqdm")


def make_corpus(n_lines, seed=0):
    """Lines 'sentence_a\\tsentence_b' as the corpus file holds them: words from a small vocabulary."""
    rng = np.random.default_rng(seed)
    words = [f"w{k}" for k in range(20)]
    lines = []
    for _ in range(n_lines):
        a = " ".join(words[j] for j in rng.integers(0, 20, rng.integers(3, 7)))
        b = " ".join(words[j] for j in rng.integers(0, 20, rng.integers(3, 7)))
        lines.append(f"{a}\t{b}")
    return lines


class WordVocab:
    """bert_pytorch.dataset.vocab.WordVocab's indices: pad 0, unk 1, eos 2, sos 3, mask 4, then the words."""

    def __init__(self, lines):
        self.pad_index, self.unk_index, self.eos_index, self.sos_index, self.mask_index = 0, 1, 2, 3, 4
        words = sorted({w for line in lines for w in line.replace("\t", " ").split()})
        self.itos = ["<pad>", "<unk>", "<eos>", "<sos>", "<mask>"] + words
        self.stoi = {w: k for k, w in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)


def publish(torch, cls):
    """Makes cls picklable as the package's module-level class is (torch.save of a whole module):
    a global of this test module, one per library."""
    name = f"{cls.__name__}_{torch.__name__}"
    cls.__qualname__ = name
    cls.__module__ = __name__
    globals()[name] = cls


def bert_program(torch, init=None, epochs=2, hidden=32, layers=2, heads=4, seq_len=16, tmp_dir=None):
    nn = torch.nn
    F = torch.nn.functional
    from_module = torch.utils.data
    Dataset, DataLoader = from_module.Dataset, from_module.DataLoader
    torch.manual_seed(0)
    random.seed(0)

    # ---- bert_pytorch/dataset/dataset.py ----
    class BERTDataset(Dataset):
        def __init__(self, lines, vocab, seq_len):
            self.vocab = vocab
            self.seq_len = seq_len
            self.lines = [line.split("\t") for line in lines]
            self.corpus_lines = len(self.lines)

        def __len__(self):
            return self.corpus_lines

        def __getitem__(self, item):
            t1, t2, is_next_label = self.random_sent(item)
            t1_random, t1_label = self.random_word(t1)
            t2_random, t2_label = self.random_word(t2)
            # [CLS] tag = SOS tag, [SEP] tag = EOS tag
            t1 = [self.vocab.sos_index] + t1_random + [self.vocab.eos_index]
            t2 = t2_random + [self.vocab.eos_index]
            t1_label = [self.vocab.pad_index] + t1_label + [self.vocab.pad_index]
            t2_label = t2_label + [self.vocab.pad_index]
            segment_label = ([1 for _ in range(len(t1))] + [2 for _ in range(len(t2))])[:self.seq_len]
            bert_input = (t1 + t2)[:self.seq_len]
            bert_label = (t1_label + t2_label)[:self.seq_len]
            padding = [self.vocab.pad_index for _ in range(self.seq_len - len(bert_input))]
            bert_input.extend(padding), bert_label.extend(padding), segment_label.extend(padding)
            output = {"bert_input": bert_input,
                      "bert_label": bert_label,
                      "segment_label": segment_label,
                      "is_next": is_next_label}
            return {key: torch.tensor(value) for key, value in output.items()}

        def random_word(self, sentence):
            tokens = sentence.split()
            output_label = []
            for i, token in enumerate(tokens):
                prob = random.random()
                if prob < 0.15:
                    prob /= 0.15
                    # 80% randomly change token to mask token
                    if prob < 0.8:
                        tokens[i] = self.vocab.mask_index
                    # 10% randomly change token to random token
                    elif prob < 0.9:
                        tokens[i] = random.randrange(len(self.vocab))
                    # 10% randomly change token to current token
                    else:
                        tokens[i] = self.vocab.stoi.get(token, self.vocab.unk_index)
                    output_label.append(self.vocab.stoi.get(token, self.vocab.unk_index))
                else:
                    tokens[i] = self.vocab.stoi.get(token, self.vocab.unk_index)
                    output_label.append(0)
            return tokens, output_label

        def random_sent(self, index):
            t1, t2 = self.get_corpus_line(index)
            # output_text, label(isNotNext:0, isNext:1)
            if random.random() > 0.5:
                return t1, t2, 1
            else:
                return t1, self.get_random_line(), 0

        def get_corpus_line(self, item):
            return self.lines[item][0], self.lines[item][1]

        def get_random_line(self):
            return self.lines[random.randrange(len(self.lines))][1]

    # ---- bert_pytorch/model ----
    class PositionalEmbedding(nn.Module):
        def __init__(self, d_model, max_len=512):
            super().__init__()
            # Compute the positional encodings once in log space.
            pe = torch.zeros(max_len, d_model).float()
            pe.require_grad = False
            position = torch.arange(0, max_len).float().unsqueeze(1)
            div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0)
            self.register_buffer('pe', pe)

        def forward(self, x):
            return self.pe[:, :x.size(1)]

    class SegmentEmbedding(nn.Embedding):
        def __init__(self, embed_size=512):
            super().__init__(3, embed_size, padding_idx=0)

    class TokenEmbedding(nn.Embedding):
        def __init__(self, vocab_size, embed_size=512):
            super().__init__(vocab_size, embed_size, padding_idx=0)

    class BERTEmbedding(nn.Module):
        def __init__(self, vocab_size, embed_size, dropout=0.1):
            super().__init__()
            self.token = TokenEmbedding(vocab_size=vocab_size, embed_size=embed_size)
            self.position = PositionalEmbedding(d_model=self.token.embedding_dim)
            self.segment = SegmentEmbedding(embed_size=self.token.embedding_dim)
            self.dropout = nn.Dropout(p=dropout)
            self.embed_size = embed_size

        def forward(self, sequence, segment_label):
            x = self.token(sequence) + self.position(sequence) + self.segment(segment_label)
            return self.dropout(x)

    class Attention(nn.Module):
        def forward(self, query, key, value, mask=None, dropout=None):
            scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
            if mask is not None:
                scores = scores.masked_fill(mask == 0, -1e9)
            p_attn = F.softmax(scores, dim=-1)
            if dropout is not None:
                p_attn = dropout(p_attn)
            return torch.matmul(p_attn, value), p_attn

    class MultiHeadedAttention(nn.Module):
        def __init__(self, h, d_model, dropout=0.1):
            super().__init__()
            assert d_model % h == 0
            # We assume d_v always equals d_k
            self.d_k = d_model // h
            self.h = h
            self.linear_layers = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(3)])
            self.output_linear = nn.Linear(d_model, d_model)
            self.attention = Attention()
            self.dropout = nn.Dropout(p=dropout)

        def forward(self, query, key, value, mask=None):
            batch_size = query.size(0)
            # 1) Do all the linear projections in batch from d_model => h x d_k
            query, key, value = [l(x).view(batch_size, -1, self.h, self.d_k).transpose(1, 2)
                                 for l, x in zip(self.linear_layers, (query, key, value))]
            # 2) Apply attention on all the projected vectors in batch.
            x, attn = self.attention(query, key, value, mask=mask, dropout=self.dropout)
            # 3) "Concat" using a view and apply a final linear.
            x = x.transpose(1, 2).contiguous().view(batch_size, -1, self.h * self.d_k)
            return self.output_linear(x)

    class GELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))

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

    class PositionwiseFeedForward(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.1):
            super(PositionwiseFeedForward, self).__init__()
            self.w_1 = nn.Linear(d_model, d_ff)
            self.w_2 = nn.Linear(d_ff, d_model)
            self.dropout = nn.Dropout(dropout)
            self.activation = GELU()

        def forward(self, x):
            return self.w_2(self.dropout(self.activation(self.w_1(x))))

    class TransformerBlock(nn.Module):
        def __init__(self, hidden, attn_heads, feed_forward_hidden, dropout):
            super().__init__()
            self.attention = MultiHeadedAttention(h=attn_heads, d_model=hidden)
            self.feed_forward = PositionwiseFeedForward(d_model=hidden, d_ff=feed_forward_hidden, dropout=dropout)
            self.input_sublayer = SublayerConnection(size=hidden, dropout=dropout)
            self.output_sublayer = SublayerConnection(size=hidden, dropout=dropout)
            self.dropout = nn.Dropout(p=dropout)

        def forward(self, x, mask):
            x = self.input_sublayer(x, lambda _x: self.attention.forward(_x, _x, _x, mask=mask))
            x = self.output_sublayer(x, self.feed_forward)
            return self.dropout(x)

    class BERT(nn.Module):
        def __init__(self, vocab_size, hidden=768, n_layers=12, attn_heads=12, dropout=0.1):
            super().__init__()
            self.hidden = hidden
            self.n_layers = n_layers
            self.attn_heads = attn_heads
            # paper noted they used 4*hidden_size for ff_network_hidden_size
            self.feed_forward_hidden = hidden * 4
            # embedding for BERT, sum of positional, segment, token embeddings
            self.embedding = BERTEmbedding(vocab_size=vocab_size, embed_size=hidden)
            # multi-layers transformer blocks, deep network
            self.transformer_blocks = nn.ModuleList(
                [TransformerBlock(hidden, attn_heads, hidden * 4, dropout) for _ in range(n_layers)])

        def forward(self, x, segment_info):
            # attention masking for padded token
            # torch.ByteTensor([batch_size, 1, seq_len, seq_len)
            mask = (x > 0).unsqueeze(1).repeat(1, x.size(1), 1).unsqueeze(1)
            # embedding the indexed sequence to sequence of vectors
            x = self.embedding(x, segment_info)
            # running over multiple transformer blocks
            for transformer in self.transformer_blocks:
                x = transformer.forward(x, mask)
            return x

    class NextSentencePrediction(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.linear = nn.Linear(hidden, 2)
            self.softmax = nn.LogSoftmax(dim=-1)

        def forward(self, x):
            return self.softmax(self.linear(x[:, 0]))

    class MaskedLanguageModel(nn.Module):
        def __init__(self, hidden, vocab_size):
            super().__init__()
            self.linear = nn.Linear(hidden, vocab_size)
            self.softmax = nn.LogSoftmax(dim=-1)

        def forward(self, x):
            return self.softmax(self.linear(x))

    class BERTLM(nn.Module):
        def __init__(self, bert, vocab_size):
            super().__init__()
            self.bert = bert
            self.next_sentence = NextSentencePrediction(self.bert.hidden)
            self.mask_lm = MaskedLanguageModel(self.bert.hidden, vocab_size)

        def forward(self, x, segment_label):
            x = self.bert(x, segment_label)
            return self.next_sentence(x), self.mask_lm(x)

    for cls in (PositionalEmbedding, SegmentEmbedding, TokenEmbedding, BERTEmbedding, Attention, MultiHeadedAttention,
                GELU, LayerNorm, SublayerConnection, PositionwiseFeedForward, TransformerBlock, BERT):
        publish(torch, cls)

    # ---- bert_pytorch/trainer ----
    class ScheduledOptim():
        '''A simple wrapper class for learning rate scheduling'''

        def __init__(self, optimizer, d_model, n_warmup_steps):
            self._optimizer = optimizer
            self.n_warmup_steps = n_warmup_steps
            self.n_current_steps = 0
            self.init_lr = np.power(d_model, -0.5)

        def step_and_update_lr(self):
            "Step with the inner optimizer"
            self._update_learning_rate()
            self._optimizer.step()

        def zero_grad(self):
            "Zero out the gradients by the inner optimizer"
            self._optimizer.zero_grad()

        def _get_lr_scale(self):
            return np.min([
                np.power(self.n_current_steps, -0.5),
                np.power(self.n_warmup_steps, -1.5) * self.n_current_steps])

        def _update_learning_rate(self):
            ''' Learning rate scheduling per step '''
            self.n_current_steps += 1
            lr = self.init_lr * self._get_lr_scale()
            for param_group in self._optimizer.param_groups:
                param_group['lr'] = lr

    class BERTTrainer:
        def __init__(self, bert, vocab_size, train_dataloader, test_dataloader=None,
                     lr=1e-4, betas=(0.9, 0.999), weight_decay=0.01, warmup_steps=10000,
                     with_cuda=True, cuda_devices=None, log_freq=10):
            # Setup cuda device for BERT training, argument -c, --cuda should be true
            cuda_condition = torch.cuda.is_available() and with_cuda
            self.device = torch.device("cuda:0" if cuda_condition else "cpu")
            # This BERT model will be saved every epoch
            self.bert = bert
            # Initialize the BERT Language Model, with BERT model
            self.model = BERTLM(bert, vocab_size).to(self.device)
            # Distributed GPU training if CUDA can detect more than 1 GPU
            if with_cuda and torch.cuda.device_count() > 1:
                print("Using %d GPUS for BERT" % torch.cuda.device_count())
                self.model = nn.DataParallel(self.model, device_ids=cuda_devices)
            # Setting the train and test data loader
            self.train_data = train_dataloader
            self.test_data = test_dataloader
            # Setting the Adam optimizer with hyper-param
            self.optim = torch.optim.Adam(self.model.parameters(), lr=lr, betas=betas, weight_decay=weight_decay)
            self.optim_schedule = ScheduledOptim(self.optim, self.bert.hidden, n_warmup_steps=warmup_steps)
            # Using Negative Log Likelihood Loss function for predicting the masked_token
            self.criterion = nn.NLLLoss(ignore_index=0)
            self.log_freq = log_freq
            self.log = []
            print("Total Parameters:", sum([p.nelement() for p in self.model.parameters()]))

        def train(self, epoch):
            self.iteration(epoch, self.train_data)

        def test(self, epoch):
            self.iteration(epoch, self.test_data, train=False)

        def iteration(self, epoch, data_loader, train=True):
            str_code = "train" if train else "test"
            # Setting the tqdm progress bar
            data_iter = tqdm.tqdm(enumerate(data_loader),
                                  desc="EP_%s:%d" % (str_code, epoch),
                                  total=len(data_loader),
                                  bar_format="{l_bar}{r_bar}", file=io.StringIO())
            avg_loss = 0.0
            total_correct = 0
            total_element = 0
            for i, data in data_iter:
                # 0. batch_data will be sent into the device(GPU or cpu)
                data = {key: value.to(self.device) for key, value in data.items()}
                # 1. forward the next_sentence_prediction and masked_lm model
                next_sent_output, mask_lm_output = self.model.forward(data["bert_input"], data["segment_label"])
                # 2-1. NLL(negative log likelihood) loss of is_next classification result
                next_loss = self.criterion(next_sent_output, data["is_next"])
                # 2-2. NLLLoss of predicting masked token word
                mask_loss = self.criterion(mask_lm_output.transpose(1, 2), data["bert_label"])
                # 2-3. Adding next_loss and mask_loss : 3.4 Pre-training Procedure
                loss = next_loss + mask_loss
                # 3. backward and optimization only in train
                if train:
                    self.optim_schedule.zero_grad()
                    loss.backward()
                    self.optim_schedule.step_and_update_lr()
                # next sentence prediction accuracy
                correct = next_sent_output.argmax(dim=-1).eq(data["is_next"]).sum().item()
                avg_loss += loss.item()
                total_correct += correct
                total_element += data["is_next"].nelement()
                post_fix = {
                    "epoch": epoch,
                    "iter": i,
                    "avg_loss": avg_loss / (i + 1),
                    "avg_acc": total_correct / total_element * 100,
                    "loss": loss.item()
                }
                if i % self.log_freq == 0:
                    data_iter.write(str(post_fix), file=io.StringIO())
                self.log.append([loss.item(), next_loss.item(), mask_loss.item()])
            self.summary = (avg_loss / len(data_iter), total_correct * 100.0 / total_element)

        def save(self, epoch, file_path="output/bert_trained.model"):
            output_path = file_path + ".ep%d" % epoch
            torch.save(self.bert.cpu(), output_path)
            self.bert.to(self.device)
            return output_path

    lines = make_corpus(24)
    vocab = WordVocab(lines)
    train_dataset = BERTDataset(lines, vocab, seq_len=seq_len)
    test_dataset = BERTDataset(make_corpus(8, seed=1), vocab, seq_len=seq_len)
    train_data_loader = DataLoader(train_dataset, batch_size=8, num_workers=0)
    test_data_loader = DataLoader(test_dataset, batch_size=8, num_workers=0)
    # dropout masks come from torch.manual_seed's stream, the same in both libraries
    bert = BERT(len(vocab), hidden=hidden, n_layers=layers, attn_heads=heads, dropout=0.1)
    trainer = BERTTrainer(bert, len(vocab), train_dataloader=train_data_loader, test_dataloader=test_data_loader,
                          lr=1e-3, betas=(0.9, 0.999), weight_decay=0.01, warmup_steps=20, with_cuda=False,
                          log_freq=2)
    result = {}
    start_from(torch, trainer.model, init, result)
    summaries = []
    for epoch in range(epochs):
        trainer.train(epoch)
        summaries.append(list(trainer.summary))
        if tmp_dir is not None:
            path = trainer.save(epoch, str(tmp_dir / "bert_trained.model"))
        trainer.test(epoch)
        summaries.append(list(trainer.summary))
    result["log"], result["summaries"] = trainer.log, summaries
    result["lr"] = float(trainer.optim.param_groups[0]["lr"])
    result["pe"] = numpy_of(bert.embedding.position.pe[0, :seq_len])
    result["token_grad"] = numpy_of(bert.embedding.token.weight.grad)
    if tmp_dir is not None:
        loaded = torch.load(path, weights_only=False)
        batch = next(iter(test_data_loader))
        loaded.eval(), bert.eval()
        with torch.no_grad():
            result["reloaded"] = numpy_of(loaded(batch["bert_input"], batch["segment_label"]))
            result["same"] = bool(torch.equal(loaded(batch["bert_input"], batch["segment_label"]),
                                              bert(batch["bert_input"], batch["segment_label"])))
    return result


def test_bert_pretraining_epochs():
    ref, got = compare_program(bert_program)
    assert ref["summaries"][2][0] < ref["summaries"][0][0]  # the second epoch's training loss is lower


def test_bert_trainer_saves_whole_module(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    ref, got = compare_program(bert_program, epochs=1, tmp_dir=tmp_path / "pt", mt_options={"tmp_dir": tmp_path / "mt"})
    assert got["same"] and ref["same"]

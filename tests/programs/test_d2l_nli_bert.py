"""The d2l book's (1.0 edition) "Natural Language Inference: Fine-Tuning BERT" as written, with the
book's BERT (BERTEncoder over its own TransformerEncoderBlock with valid lengths, a learnable
nn.Parameter(torch.randn(1, max_len, num_hiddens)) position embedding, BERTModel's LazyLinear
hidden/MaskLM/NextSentencePred); load_pretrained_model's download of bert.small replaced by a model
made and materialised here and saved/loaded through torch.save/load_state_dict with its vocab; the
SNLI download by the toy pairs of test_d2l_nlp_applications. SNLIBERTDataset tokenises premise and
hypothesis pairs in a multiprocessing.Pool(4) (pool.map over a bound method, so the dataset with its
labels tensor is pickled to the workers), truncates pairs to max_len - 3, pads with vocab['<pad>'] and
returns ((token_ids, segments, valid_len), label) items that a DataLoader collates into a list X;
BERTClassifier reuses bert.encoder and bert.hidden with a LazyLinear(3) output materialised by a first
batch, trained by train_ch13 (nn.DataParallel, CrossEntropyLoss(reduction='none'), Adam)."""
import multiprocessing
import os

from prog_helpers import compare_program, numpy_of, start_from
from test_d2l_nlp_applications import SNLI, Vocab, d2l_helpers
from test_d2l_seq2seq import models


def nli_bert(torch, init=None, tmp=None):
    nn = torch.nn
    try_all_gpus, train_ch13 = d2l_helpers(torch)
    TransformerEncoderBlock = models(torch)["TransformerEncoderBlock"]
    torch.manual_seed(0)

    def tokenize(lines, token='word'):
        return [line.split() for line in lines]

    def get_tokens_and_segments(tokens_a, tokens_b=None):
        """Get tokens of the BERT input sequence and their segment IDs."""
        tokens = ['<cls>'] + tokens_a + ['<sep>']
        segments = [0] * (len(tokens_a) + 2)
        if tokens_b is not None:
            tokens += tokens_b + ['<sep>']
            segments += [1] * (len(tokens_b) + 1)
        return tokens, segments

    class BERTEncoder(nn.Module):
        """BERT encoder."""
        def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout, max_len=1000,
                     **kwargs):
            super(BERTEncoder, self).__init__(**kwargs)
            self.token_embedding = nn.Embedding(vocab_size, num_hiddens)
            self.segment_embedding = nn.Embedding(2, num_hiddens)
            self.blks = nn.Sequential()
            for i in range(num_blks):
                self.blks.add_module(f"{i}", TransformerEncoderBlock(num_hiddens, ffn_num_hiddens, num_heads,
                                                                     dropout, True))
            # In BERT, positional embeddings are learnable, thus we create a
            # parameter of positional embeddings that are long enough
            self.pos_embedding = nn.Parameter(torch.randn(1, max_len, num_hiddens))

        def forward(self, tokens, segments, valid_lens):
            # Shape of `X` remains unchanged in the following code snippet:
            # (batch size, max sequence length, `num_hiddens`)
            X = self.token_embedding(tokens) + self.segment_embedding(segments)
            X = X + self.pos_embedding[:, :X.shape[1], :]
            for blk in self.blks:
                X = blk(X, valid_lens)
            return X

    class MaskLM(nn.Module):
        """The masked language model task of BERT."""
        def __init__(self, vocab_size, num_hiddens, **kwargs):
            super(MaskLM, self).__init__(**kwargs)
            self.mlp = nn.Sequential(nn.LazyLinear(num_hiddens), nn.ReLU(), nn.LayerNorm(num_hiddens),
                                     nn.LazyLinear(vocab_size))

        def forward(self, X, pred_positions):
            num_pred_positions = pred_positions.shape[1]
            pred_positions = pred_positions.reshape(-1)
            batch_size = X.shape[0]
            batch_idx = torch.arange(0, batch_size)
            batch_idx = torch.repeat_interleave(batch_idx, num_pred_positions)
            masked_X = X[batch_idx, pred_positions]
            masked_X = masked_X.reshape((batch_size, num_pred_positions, -1))
            mlm_Y_hat = self.mlp(masked_X)
            return mlm_Y_hat

    class NextSentencePred(nn.Module):
        """The next sentence prediction task of BERT."""
        def __init__(self, **kwargs):
            super(NextSentencePred, self).__init__(**kwargs)
            self.output = nn.LazyLinear(2)

        def forward(self, X):
            return self.output(X)

    class BERTModel(nn.Module):
        """The BERT model."""
        def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout, max_len=1000):
            super(BERTModel, self).__init__()
            self.encoder = BERTEncoder(vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout,
                                       max_len=max_len)
            self.hidden = nn.Sequential(nn.LazyLinear(num_hiddens), nn.Tanh())
            self.mlm = MaskLM(vocab_size, num_hiddens)
            self.nsp = NextSentencePred()

        def forward(self, tokens, segments, valid_lens=None, pred_positions=None):
            encoded_X = self.encoder(tokens, segments, valid_lens)
            if pred_positions is not None:
                mlm_Y_hat = self.mlm(encoded_X, pred_positions)
            else:
                mlm_Y_hat = None
            nsp_Y_hat = self.nsp(self.hidden(encoded_X[:, 0, :]))
            return encoded_X, mlm_Y_hat, nsp_Y_hat

    devices = try_all_gpus()
    # bert.small's download: a vocab and a pretrained model of its shapes, saved where the book reads them
    data_dir = tmp
    corpus = [s for p, h, _ in SNLI for s in (p, h)]
    pretrain_vocab = Vocab(tokenize(corpus), min_freq=1, reserved_tokens=['<pad>', '<mask>', '<cls>', '<sep>'])
    pretrained = BERTModel(len(pretrain_vocab), 32, ffn_num_hiddens=64, num_heads=4, num_blks=2, dropout=0.2,
                           max_len=64)
    pretrained(torch.zeros(1, 4, dtype=torch.long), torch.zeros(1, 4, dtype=torch.long), torch.tensor([4]),
               torch.zeros(1, 1, dtype=torch.long))
    result = {}
    start_from(torch, pretrained, init, result)
    torch.save(pretrained.state_dict(), os.path.join(data_dir, 'pretrained.params'))

    def load_pretrained_model(pretrained_model, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout,
                              max_len, devices):
        vocab = Vocab()
        vocab.idx_to_token = list(pretrain_vocab.idx_to_token)  # json.load of vocab.json in the book
        vocab.token_to_idx = {token: idx for idx, token in enumerate(vocab.idx_to_token)}
        bert = BERTModel(len(vocab), num_hiddens, ffn_num_hiddens=ffn_num_hiddens, num_heads=4, num_blks=2,
                         dropout=0.2, max_len=max_len)
        # Load pretrained BERT parameters
        bert.load_state_dict(torch.load(os.path.join(data_dir, 'pretrained.params')))
        return bert, vocab

    bert, vocab = load_pretrained_model('bert.small', num_hiddens=32, ffn_num_hiddens=64, num_heads=4,
                                        num_blks=2, dropout=0.1, max_len=64, devices=devices)
    read = []

    SNLIBERTDataset = snli_bert_dataset(torch, get_tokens_and_segments, read.append)

    # d2l.read_snli(data_dir, True/False): (premises, hypotheses, labels)
    def read_snli(is_train):
        rows = SNLI[:8] if is_train else SNLI[8:]
        return [p for p, _, _ in rows], [h for _, h, _ in rows], [lbl for _, _, lbl in rows]

    batch_size, max_len, num_workers = 4, 8, 0
    train_set = SNLIBERTDataset(read_snli(True), max_len, vocab)
    test_set = SNLIBERTDataset(read_snli(False), max_len, vocab)
    train_iter = torch.utils.data.DataLoader(train_set, batch_size, shuffle=True, num_workers=num_workers)
    test_iter = torch.utils.data.DataLoader(test_set, batch_size, num_workers=num_workers)

    class BERTClassifier(nn.Module):
        def __init__(self, bert):
            super(BERTClassifier, self).__init__()
            self.encoder = bert.encoder
            self.hidden = bert.hidden
            self.output = nn.LazyLinear(3)

        def forward(self, inputs):
            tokens_X, segments_X, valid_lens_x = inputs
            encoded_X = self.encoder(tokens_X, segments_X, valid_lens_x)
            return self.output(self.hidden(encoded_X[:, 0, :]))

    net = BERTClassifier(bert)
    lr, num_epochs = 1e-3, 3
    trainer = torch.optim.Adam(net.parameters(), lr=lr)
    loss = nn.CrossEntropyLoss(reduction='none')
    net(next(iter(train_iter))[0])
    torch.manual_seed(1)  # the output layer's initialisation, then dropout and shuffles
    net.output.reset_parameters()
    history, num_batches = train_ch13(net, train_iter, test_iter, loss, trainer, num_epochs, devices)
    result.update(read=read, tokens=train_set.all_token_ids.tolist(), segments=train_set.all_segments.tolist(),
                  valid_lens=train_set.valid_lens.tolist(), history=history, batches=num_batches,
                  state={k: numpy_of(v) for k, v in net.state_dict().items() if not k.endswith("W_k.bias")})
    # a key bias adds one constant to a query's scores, which softmax cancels: its gradient is
    # rounding alone, which Adam scales into full steps, so it differs between the libraries by design
    result["own"] = {k: numpy_of(v) for k, v in net.state_dict().items() if k.endswith("W_k.bias")}
    return result


def snli_bert_dataset(torch, get_tokens_and_segments, report):
    """SNLIBERTDataset for the library: a module-level class (pool.map pickles the dataset itself, as
    the book's module-level class is), registered under a name of its own per library."""
    def tokenize(lines, token='word'):
        return [line.split() for line in lines]

    class SNLIBERTDataset(torch.utils.data.Dataset):
        def __init__(self, dataset, max_len, vocab=None):
            all_premise_hypothesis_tokens = [[
                p_tokens, h_tokens] for p_tokens, h_tokens in zip(
                *[tokenize([s.lower() for s in sentences])
                  for sentences in dataset[:2]])]
            self.labels = torch.tensor(dataset[2])
            self.vocab = vocab
            self.max_len = max_len
            (self.all_token_ids, self.all_segments,
             self.valid_lens) = self._preprocess(all_premise_hypothesis_tokens)
            report('read ' + str(len(self.all_token_ids)) + ' examples')

        def _preprocess(self, all_premise_hypothesis_tokens):
            pool = multiprocessing.Pool(4)  # Use 4 worker processes
            out = pool.map(self._mp_worker, all_premise_hypothesis_tokens)
            pool.close()
            pool.join()
            all_token_ids = [token_ids for token_ids, segments, valid_len in out]
            all_segments = [segments for token_ids, segments, valid_len in out]
            valid_lens = [valid_len for token_ids, segments, valid_len in out]
            return (torch.tensor(all_token_ids, dtype=torch.long),
                    torch.tensor(all_segments, dtype=torch.long),
                    torch.tensor(valid_lens))

        def _mp_worker(self, premise_hypothesis_tokens):
            p_tokens, h_tokens = premise_hypothesis_tokens
            self._truncate_pair_of_tokens(p_tokens, h_tokens)
            tokens, segments = get_tokens_and_segments(p_tokens, h_tokens)
            token_ids = self.vocab[tokens] + [self.vocab['<pad>']] * (self.max_len - len(tokens))
            segments = segments + [0] * (self.max_len - len(segments))
            valid_len = len(tokens)
            return token_ids, segments, valid_len

        def _truncate_pair_of_tokens(self, p_tokens, h_tokens):
            # Reserve slots for '<CLS>', '<SEP>', and '<SEP>' tokens for the BERT input
            while len(p_tokens) + len(h_tokens) > self.max_len - 3:
                if len(p_tokens) > len(h_tokens):
                    p_tokens.pop()
                else:
                    h_tokens.pop()

        def __getitem__(self, idx):
            return (self.all_token_ids[idx], self.all_segments[idx], self.valid_lens[idx]), self.labels[idx]

        def __len__(self):
            return len(self.all_token_ids)
    SNLIBERTDataset.__qualname__ = SNLIBERTDataset.__name__ = "SNLIBERTDataset_" + torch.__name__
    globals()[SNLIBERTDataset.__qualname__] = SNLIBERTDataset
    return SNLIBERTDataset


def test_d2l_nli_fine_tuning_bert(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    compare_program(nli_bert, rtol=1e-3, atol=1e-4, tmp=str(tmp_path / "pt"), mt_options={"tmp": str(tmp_path / "mt")})

"""Stanford CS224n's assignment 4 (neural machine translation, the 2021 starter code) as written:
vocab.py's VocabEntry (word2id with <pad>/<s>/</s>/<unk>, words2indices, to_input_tensor through
utils.pad_sents, torch.tensor(..., dtype=torch.long, device=device) and torch.t), utils.batch_iter
(np.random.shuffle of the indices, each batch sorted by source length, longest first), and
nmt_model.py's NMT: ModelEmbeddings with padding_idx, a bidirectional nn.LSTM encoder over
pack_padded_sequence / pad_packed_sequence, h_projection / c_projection of
torch.cat((last_hidden[0], last_hidden[1]), 1), an nn.LSTMCell decoder stepping over
torch.split(Y, 1, dim=0), multiplicative attention by torch.bmm with
e_t.data.masked_fill_(enc_masks.bool(), -float('inf')) from generate_sent_masks, the combined output
tanh + Dropout, log_softmax and torch.gather(..., index=target_padded[1:].unsqueeze(-1), dim=-1)
times the target mask; run.py's training (p.data.uniform_(-0.1, 0.1) over the parameters, Adam,
loss = -model(src, tgt).sum() / batch_size, clip_grad_norm_ returning the norm, the ppl reports)
and evaluate_ppl under torch.no_grad(); and beam_search (expand of the encodings, torch.topk over
the flattened scores, torch.div(..., rounding_mode='floor') and %, h_t[live_hyp_ids]). The corpus
(Spanish-English) is replaced by a toy one: German-like sources made from the English words.
Randomness from torch.manual_seed and np.random.seed (dropout masks included: both libraries draw
PyTorch's CPU stream)."""
import math
import sys
from collections import Counter, namedtuple
from itertools import chain

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines

ENGLISH = ["the cat sat on the mat", "a dog runs in the park", "the bird sings a song", "my friend reads the book",
           "the sun is warm today", "a man eats an apple", "the child plays with a ball", "we walk to the river",
           "the old man sleeps", "she writes a long letter", "the dog sees the cat", "a bird flies over the river"]


def toy_corpus():
    """(source, target) sentence pairs: the source is the English sentence reversed with each word
    mapped to a made-up word, so that a model has something to learn."""
    def fake(w):
        return w[::-1] + "en"
    return [(" ".join(fake(w) for w in reversed(s.split())), s) for s in ENGLISH]


def nmt(torch, init=None, epochs=3):
    nn, F = torch.nn, torch.nn.functional
    pack_padded_sequence = torch.nn.utils.rnn.pack_padded_sequence
    pad_packed_sequence = torch.nn.utils.rnn.pad_packed_sequence
    r = {}

    # utils.py
    def pad_sents(sents, pad_token):
        sents_padded = []
        max_len = max(len(s) for s in sents)
        for s in sents:
            padded = [pad_token] * max_len
            padded[:len(s)] = s
            sents_padded.append(padded)
        return sents_padded

    def batch_iter(data, batch_size, shuffle=False):
        batch_num = math.ceil(len(data) / batch_size)
        index_array = list(range(len(data)))
        if shuffle:
            np.random.shuffle(index_array)
        for i in range(batch_num):
            indices = index_array[i * batch_size: (i + 1) * batch_size]
            examples = [data[idx] for idx in indices]
            examples = sorted(examples, key=lambda e: len(e[0]), reverse=True)
            src_sents = [e[0] for e in examples]
            tgt_sents = [e[1] for e in examples]
            yield src_sents, tgt_sents

    # vocab.py
    class VocabEntry(object):
        def __init__(self, word2id=None):
            if word2id:
                self.word2id = word2id
            else:
                self.word2id = dict()
                self.word2id['<pad>'] = 0   # Pad Token
                self.word2id['<s>'] = 1     # Start Token
                self.word2id['</s>'] = 2    # End Token
                self.word2id['<unk>'] = 3   # Unknown Token
            self.unk_id = self.word2id['<unk>']
            self.id2word = {v: k for k, v in self.word2id.items()}

        def __getitem__(self, word):
            return self.word2id.get(word, self.unk_id)

        def __contains__(self, word):
            return word in self.word2id

        def __len__(self):
            return len(self.word2id)

        def add(self, word):
            if word not in self:
                wid = self.word2id[word] = len(self)
                self.id2word[wid] = word
                return wid
            else:
                return self[word]

        def words2indices(self, sents):
            if type(sents[0]) == list:
                return [[self[w] for w in s] for s in sents]
            else:
                return [self[w] for w in sents]

        def to_input_tensor(self, sents, device):
            word_ids = self.words2indices(sents)
            sents_t = pad_sents(word_ids, self['<pad>'])
            sents_var = torch.tensor(sents_t, dtype=torch.long, device=device)
            return torch.t(sents_var)

        @staticmethod
        def from_corpus(corpus, size, freq_cutoff=2):
            vocab_entry = VocabEntry()
            word_freq = Counter(chain(*corpus))
            valid_words = [w for w, v in word_freq.items() if v >= freq_cutoff]
            top_k_words = sorted(valid_words, key=lambda w: word_freq[w], reverse=True)[:size]
            for word in top_k_words:
                vocab_entry.add(word)
            return vocab_entry

    class Vocab(object):
        def __init__(self, src_vocab, tgt_vocab):
            self.src = src_vocab
            self.tgt = tgt_vocab

    Hypothesis = namedtuple('Hypothesis', ['value', 'score'])

    class ModelEmbeddings(nn.Module):
        def __init__(self, embed_size, vocab):
            super(ModelEmbeddings, self).__init__()
            self.embed_size = embed_size
            src_pad_token_idx = vocab.src['<pad>']
            tgt_pad_token_idx = vocab.tgt['<pad>']
            self.source = nn.Embedding(len(vocab.src), embed_size, padding_idx=src_pad_token_idx)
            self.target = nn.Embedding(len(vocab.tgt), embed_size, padding_idx=tgt_pad_token_idx)

    class NMT(nn.Module):
        def __init__(self, embed_size, hidden_size, vocab, dropout_rate=0.2):
            super(NMT, self).__init__()
            self.model_embeddings = ModelEmbeddings(embed_size, vocab)
            self.hidden_size = hidden_size
            self.dropout_rate = dropout_rate
            self.vocab = vocab
            self.encoder = nn.LSTM(embed_size, hidden_size, bias=True, bidirectional=True)
            self.decoder = nn.LSTMCell(embed_size + hidden_size, hidden_size, bias=True)
            self.h_projection = nn.Linear(2 * hidden_size, hidden_size, bias=False)
            self.c_projection = nn.Linear(2 * hidden_size, hidden_size, bias=False)
            self.att_projection = nn.Linear(2 * hidden_size, hidden_size, bias=False)
            self.combined_output_projection = nn.Linear(3 * hidden_size, hidden_size, bias=False)
            self.target_vocab_projection = nn.Linear(hidden_size, len(vocab.tgt), bias=False)
            self.dropout = nn.Dropout(p=dropout_rate)

        def forward(self, source, target):
            # Compute sentence lengths
            source_lengths = [len(s) for s in source]

            # Convert list of lists into tensors
            source_padded = self.vocab.src.to_input_tensor(source, device=self.device)   # Tensor: (src_len, b)
            target_padded = self.vocab.tgt.to_input_tensor(target, device=self.device)   # Tensor: (tgt_len, b)

            enc_hiddens, dec_init_state = self.encode(source_padded, source_lengths)
            enc_masks = self.generate_sent_masks(enc_hiddens, source_lengths)
            combined_outputs = self.decode(enc_hiddens, enc_masks, dec_init_state, target_padded)
            P = F.log_softmax(self.target_vocab_projection(combined_outputs), dim=-1)

            # Zero out, probabilities for which we have nothing in the target text
            target_masks = (target_padded != self.vocab.tgt['<pad>']).float()

            # Compute log probability of generating true target words
            target_gold_words_log_prob = torch.gather(P, index=target_padded[1:].unsqueeze(-1),
                                                      dim=-1).squeeze(-1) * target_masks[1:]
            scores = target_gold_words_log_prob.sum(dim=0)
            return scores

        def encode(self, source_padded, source_lengths):
            enc_hiddens, dec_init_state = None, None
            X = self.model_embeddings.source(source_padded)
            X = pack_padded_sequence(X, source_lengths)
            enc_hiddens, (last_hidden, last_cell) = self.encoder(X)
            enc_hiddens, _ = pad_packed_sequence(enc_hiddens)
            enc_hiddens = enc_hiddens.permute(1, 0, 2)
            init_decoder_hidden = self.h_projection(torch.cat((last_hidden[0], last_hidden[1]), dim=1))
            init_decoder_cell = self.c_projection(torch.cat((last_cell[0], last_cell[1]), dim=1))
            dec_init_state = (init_decoder_hidden, init_decoder_cell)
            return enc_hiddens, dec_init_state

        def decode(self, enc_hiddens, enc_masks, dec_init_state, target_padded):
            # Chop of the <END> token for max length sentences.
            target_padded = target_padded[:-1]

            # Initialize the decoder state (hidden and cell)
            dec_state = dec_init_state

            # Initialize previous combined output vector o_{t-1} as zero
            batch_size = enc_hiddens.size(0)
            o_prev = torch.zeros(batch_size, self.hidden_size, device=self.device)

            # Initialize a list we will use to collect the combined output o_t on each step
            combined_outputs = []
            enc_hiddens_proj = self.att_projection(enc_hiddens)
            Y = self.model_embeddings.target(target_padded)
            for Y_t in torch.split(Y, 1, dim=0):
                Y_t = Y_t.squeeze(0)
                Ybar_t = torch.cat((Y_t, o_prev), dim=1)
                dec_state, o_t, e_t = self.step(Ybar_t, dec_state, enc_hiddens, enc_hiddens_proj, enc_masks)
                combined_outputs.append(o_t)
                o_prev = o_t
            combined_outputs = torch.stack(combined_outputs, dim=0)
            return combined_outputs

        def step(self, Ybar_t, dec_state, enc_hiddens, enc_hiddens_proj, enc_masks):
            combined_output = None
            dec_state = self.decoder(Ybar_t, dec_state)
            dec_hidden, dec_cell = dec_state
            e_t = torch.bmm(enc_hiddens_proj, dec_hidden.unsqueeze(2)).squeeze(2)

            # Set e_t to -inf where enc_masks has 1
            if enc_masks is not None:
                e_t.data.masked_fill_(enc_masks.bool(), -float('inf'))

            alpha_t = F.softmax(e_t, dim=1)
            a_t = torch.bmm(alpha_t.unsqueeze(1), enc_hiddens).squeeze(1)
            U_t = torch.cat((dec_hidden, a_t), dim=1)
            V_t = self.combined_output_projection(U_t)
            O_t = self.dropout(torch.tanh(V_t))

            combined_output = O_t
            return dec_state, combined_output, e_t

        def generate_sent_masks(self, enc_hiddens, source_lengths):
            enc_masks = torch.zeros(enc_hiddens.size(0), enc_hiddens.size(1), dtype=torch.float)
            for e_id, src_len in enumerate(source_lengths):
                enc_masks[e_id, src_len:] = 1
            return enc_masks.to(self.device)

        def beam_search(self, src_sent, beam_size=5, max_decoding_time_step=70):
            src_sents_var = self.vocab.src.to_input_tensor([src_sent], self.device)

            src_encodings, dec_init_vec = self.encode(src_sents_var, [len(src_sent)])
            src_encodings_att_linear = self.att_projection(src_encodings)

            h_tm1 = dec_init_vec
            att_tm1 = torch.zeros(1, self.hidden_size, device=self.device)

            eos_id = self.vocab.tgt['</s>']  # noqa: F841 (as in the starter code)

            hypotheses = [['<s>']]
            hyp_scores = torch.zeros(len(hypotheses), dtype=torch.float, device=self.device)
            completed_hypotheses = []

            t = 0
            while len(completed_hypotheses) < beam_size and t < max_decoding_time_step:
                t += 1
                hyp_num = len(hypotheses)

                exp_src_encodings = src_encodings.expand(hyp_num, src_encodings.size(1), src_encodings.size(2))

                exp_src_encodings_att_linear = src_encodings_att_linear.expand(hyp_num,
                                                                               src_encodings_att_linear.size(1),
                                                                               src_encodings_att_linear.size(2))

                y_tm1 = torch.tensor([self.vocab.tgt[hyp[-1]] for hyp in hypotheses], dtype=torch.long,
                                     device=self.device)
                y_t_embed = self.model_embeddings.target(y_tm1)

                x = torch.cat([y_t_embed, att_tm1], dim=-1)

                (h_t, cell_t), att_t, _ = self.step(x, h_tm1, exp_src_encodings, exp_src_encodings_att_linear,
                                                    enc_masks=None)

                # log probabilities over target words
                log_p_t = F.log_softmax(self.target_vocab_projection(att_t), dim=-1)

                live_hyp_num = beam_size - len(completed_hypotheses)
                contiuating_hyp_scores = (hyp_scores.unsqueeze(1).expand_as(log_p_t) + log_p_t).view(-1)
                top_cand_hyp_scores, top_cand_hyp_pos = torch.topk(contiuating_hyp_scores, k=live_hyp_num)

                prev_hyp_ids = torch.div(top_cand_hyp_pos, len(self.vocab.tgt), rounding_mode='floor')
                hyp_word_ids = top_cand_hyp_pos % len(self.vocab.tgt)

                new_hypotheses = []
                live_hyp_ids = []
                new_hyp_scores = []

                for prev_hyp_id, hyp_word_id, cand_new_hyp_score in zip(prev_hyp_ids, hyp_word_ids,
                                                                        top_cand_hyp_scores):
                    prev_hyp_id = prev_hyp_id.item()
                    hyp_word_id = hyp_word_id.item()
                    cand_new_hyp_score = cand_new_hyp_score.item()

                    hyp_word = self.vocab.tgt.id2word[hyp_word_id]
                    new_hyp_sent = hypotheses[prev_hyp_id] + [hyp_word]
                    if hyp_word == '</s>':
                        completed_hypotheses.append(Hypothesis(value=new_hyp_sent[1:-1],
                                                               score=cand_new_hyp_score))
                    else:
                        new_hypotheses.append(new_hyp_sent)
                        live_hyp_ids.append(prev_hyp_id)
                        new_hyp_scores.append(cand_new_hyp_score)

                if len(completed_hypotheses) == beam_size:
                    break

                live_hyp_ids = torch.tensor(live_hyp_ids, dtype=torch.long, device=self.device)
                h_tm1 = (h_t[live_hyp_ids], cell_t[live_hyp_ids])
                att_tm1 = att_t[live_hyp_ids]

                hypotheses = new_hypotheses
                hyp_scores = torch.tensor(new_hyp_scores, dtype=torch.float, device=self.device)

            if len(completed_hypotheses) == 0:
                completed_hypotheses.append(Hypothesis(value=hypotheses[0][1:], score=hyp_scores[0].item()))

            completed_hypotheses.sort(key=lambda hyp: hyp.score, reverse=True)

            return completed_hypotheses

        @property
        def device(self):
            """ Determine which device to place the Tensors upon, CPU or GPU.
            """
            return self.model_embeddings.source.weight.device

    # run.py
    def evaluate_ppl(model, dev_data, batch_size=32):
        was_training = model.training
        model.eval()

        cum_loss = 0.
        cum_tgt_words = 0.

        # no_grad() signals backend to throw away all gradients
        with torch.no_grad():
            for src_sents, tgt_sents in batch_iter(dev_data, batch_size):
                loss = -model(src_sents, tgt_sents).sum()

                cum_loss += loss.item()
                tgt_word_num_to_predict = sum(len(s[1:]) for s in tgt_sents)  # omitting leading `<s>`
                cum_tgt_words += tgt_word_num_to_predict

            ppl = np.exp(cum_loss / cum_tgt_words)

        if was_training:
            model.train()

        return ppl

    pairs = toy_corpus()
    src_sents = [s.split() for s, _ in pairs]
    tgt_sents = [['<s>'] + t.split() + ['</s>'] for _, t in pairs]
    vocab = Vocab(VocabEntry.from_corpus(src_sents, 1000, freq_cutoff=1),
                  VocabEntry.from_corpus([t[1:-1] for t in tgt_sents], 1000, freq_cutoff=1))
    train_data = list(zip(src_sents, tgt_sents))
    dev_data = train_data[:4]

    with captured_run(torch, seed=0) as out:
        np.random.seed(0)
        model = NMT(embed_size=16, hidden_size=24, dropout_rate=0.3, vocab=vocab)
        model.train()
        uniform_init = 0.1
        if np.abs(uniform_init) > 0.:
            print('uniformly initialize parameters [-%f, +%f]' % (uniform_init, uniform_init), file=sys.stdout)
            for p in model.parameters():
                p.data.uniform_(-uniform_init, uniform_init)
        r["init_sample"] = numpy_of(model.decoder.weight_ih[:3])
        vocab_mask = torch.ones(len(vocab.tgt))
        vocab_mask[vocab.tgt['<pad>']] = 0
        device = torch.device("cpu")
        model = model.to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        clip_grad = 5.0
        train_iter = report_loss = report_examples = report_tgt_words = 0
        grad_norms = []
        for epoch in range(1, epochs + 1):
            for src, tgt in batch_iter(train_data, batch_size=4, shuffle=True):
                train_iter += 1
                optimizer.zero_grad()
                batch_size = len(src)
                example_losses = -model(src, tgt)  # (batch_size,)
                batch_loss = example_losses.sum()
                loss = batch_loss / batch_size
                loss.backward()
                # clip gradient
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad)
                grad_norms.append(float(grad_norm))
                optimizer.step()
                batch_losses_val = batch_loss.item()
                report_loss += batch_losses_val
                tgt_words_num_to_predict = sum(len(s[1:]) for s in tgt)  # omitting leading `<s>`
                report_tgt_words += tgt_words_num_to_predict
                report_examples += batch_size
                if train_iter % 3 == 0:
                    print('epoch %d, iter %d, avg. loss %.2f, avg. ppl %.2f' % (
                        epoch, train_iter, report_loss / report_examples, math.exp(report_loss / report_tgt_words)))
                    train_iter_report = report_loss = report_examples = report_tgt_words = 0  # noqa: F841
            dev_ppl = evaluate_ppl(model, dev_data, batch_size=128)  # dev batch size can be a bit larger
            print('validation: iter %d, dev. ppl %f' % (train_iter, dev_ppl))
    r["printed"] = printed_lines(out)
    r["grad_norms"] = grad_norms
    r["masks"] = numpy_of(model.generate_sent_masks(torch.zeros(3, 5, 2), [5, 3, 1]))
    model.eval()
    hyps = model.beam_search(src_sents[0], beam_size=3, max_decoding_time_step=8)
    r["beam"] = [" ".join(h.value) for h in hyps]
    r["beam_scores"] = [h.score for h in hyps]
    r["state"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return r


def test_cs224n_nmt():
    ref, got = compare_program(nmt, rtol=1e-3, atol=1e-4)
    assert len(got["beam"]) >= 1 and got["printed"][0].startswith("uniformly initialize parameters")

"""The advanced NLP tutorial's BiLSTM-CRF tagger, written as the tutorial does: argmax and
log_sum_exp helpers (max score through vec[0, argmax(vec)], view(1, -1).expand(1, size)), a
bidirectional LSTM whose hidden state starts from torch.randn drawn here from NumPy, a transitions
Parameter with the START/STOP rows set to -10000 through .data, the forward algorithm over a
(1, tagset) forward_var built by torch.full, gold path scores by indexing with the tags tensor,
Viterbi decoding keeping backpointers as Python lists, and the negative log likelihood minimised
by SGD with weight_decay. Scores, paths and losses match PyTorch's."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

START_TAG, STOP_TAG = "<START>", "<STOP>"
EMBEDDING_DIM, HIDDEN_DIM = 5, 4
TRAINING = [
    ("the wall street journal reported today that apple corporation made money".split(), "B I I I O O O B I O O".split()),
    ("georgia tech is a university in georgia".split(), "B I O O O O B".split()),
]


def bilstm_crf(torch, init=None, epochs=3):
    nn, optim = torch.nn, torch.optim
    rng = np.random.default_rng(1)

    def argmax(vec):
        _, idx = torch.max(vec, 1)
        return idx.item()

    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return torch.tensor(idxs, dtype=torch.long)

    def log_sum_exp(vec):
        max_score = vec[0, argmax(vec)]
        max_score_broadcast = max_score.view(1, -1).expand(1, vec.size()[1])
        return max_score + torch.log(torch.sum(torch.exp(vec - max_score_broadcast)))

    class BiLSTM_CRF(nn.Module):
        def __init__(self, vocab_size, tag_to_ix, embedding_dim, hidden_dim):
            super().__init__()
            self.embedding_dim = embedding_dim
            self.hidden_dim = hidden_dim
            self.vocab_size = vocab_size
            self.tag_to_ix = tag_to_ix
            self.tagset_size = len(tag_to_ix)
            self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True)
            self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)
            self.transitions = nn.Parameter(torch.randn(self.tagset_size, self.tagset_size))
            self.transitions.data[tag_to_ix[START_TAG], :] = -10000
            self.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000
            self.hidden = self.init_hidden()

        def init_hidden(self):
            shape = (2, 1, self.hidden_dim // 2)
            return (torch.tensor(rng.standard_normal(shape), dtype=torch.float32),
                    torch.tensor(rng.standard_normal(shape), dtype=torch.float32))

        def _forward_alg(self, feats):
            init_alphas = torch.full((1, self.tagset_size), -10000.)
            init_alphas[0][self.tag_to_ix[START_TAG]] = 0.
            forward_var = init_alphas
            for feat in feats:
                alphas_t = []
                for next_tag in range(self.tagset_size):
                    emit_score = feat[next_tag].view(1, -1).expand(1, self.tagset_size)
                    trans_score = self.transitions[next_tag].view(1, -1)
                    next_tag_var = forward_var + trans_score + emit_score
                    alphas_t.append(log_sum_exp(next_tag_var).view(1))
                forward_var = torch.cat(alphas_t).view(1, -1)
            terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
            return log_sum_exp(terminal_var)

        def _get_lstm_features(self, sentence):
            self.hidden = self.init_hidden()
            embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
            lstm_out, self.hidden = self.lstm(embeds, self.hidden)
            lstm_out = lstm_out.view(len(sentence), self.hidden_dim)
            return self.hidden2tag(lstm_out)

        def _score_sentence(self, feats, tags):
            score = torch.zeros(1)
            tags = torch.cat([torch.tensor([self.tag_to_ix[START_TAG]], dtype=torch.long), tags])
            for i, feat in enumerate(feats):
                score = score + self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
            score = score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]
            return score

        def _viterbi_decode(self, feats):
            backpointers = []
            init_vvars = torch.full((1, self.tagset_size), -10000.)
            init_vvars[0][self.tag_to_ix[START_TAG]] = 0
            forward_var = init_vvars
            for feat in feats:
                bptrs_t = []
                viterbivars_t = []
                for next_tag in range(self.tagset_size):
                    next_tag_var = forward_var + self.transitions[next_tag]
                    best_tag_id = argmax(next_tag_var)
                    bptrs_t.append(best_tag_id)
                    viterbivars_t.append(next_tag_var[0][best_tag_id].view(1))
                forward_var = (torch.cat(viterbivars_t) + feat).view(1, -1)
                backpointers.append(bptrs_t)
            terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
            best_tag_id = argmax(terminal_var)
            path_score = terminal_var[0][best_tag_id]
            best_path = [best_tag_id]
            for bptrs_t in reversed(backpointers):
                best_tag_id = bptrs_t[best_tag_id]
                best_path.append(best_tag_id)
            start = best_path.pop()
            assert start == self.tag_to_ix[START_TAG]
            best_path.reverse()
            return path_score, best_path

        def neg_log_likelihood(self, sentence, tags):
            feats = self._get_lstm_features(sentence)
            forward_score = self._forward_alg(feats)
            gold_score = self._score_sentence(feats, tags)
            return forward_score - gold_score

        def forward(self, sentence):
            lstm_feats = self._get_lstm_features(sentence)
            score, tag_seq = self._viterbi_decode(lstm_feats)
            return score, tag_seq

    word_to_ix = {}
    for sentence, tags in TRAINING:
        for word in sentence:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}

    torch.manual_seed(1)
    model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, EMBEDDING_DIM, HIDDEN_DIM)
    result = {}
    start_from(torch, model, init, result)
    optimizer = optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
    with torch.no_grad():
        precheck_sent = prepare_sequence(TRAINING[0][0], word_to_ix)
        before = model(precheck_sent)
    losses = []
    for epoch in range(epochs):
        for sentence, tags in TRAINING:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = torch.tensor([tag_to_ix[t] for t in tags], dtype=torch.long)
            loss = model.neg_log_likelihood(sentence_in, targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    with torch.no_grad():
        after = model(precheck_sent)
    result.update(before_score=before[0].item(), before_path=before[1], after_score=after[0].item(),
                  after_path=after[1], losses=losses, transitions=numpy_of(model.transitions))
    return result


def test_bilstm_crf():
    ref, got = compare_program(bilstm_crf, rtol=1e-3, atol=1e-3)
    assert len(got["after_path"]) == len(TRAINING[0][0])

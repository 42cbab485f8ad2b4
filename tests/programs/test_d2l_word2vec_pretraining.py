"""The d2l book's (1.0 edition) "The Dataset for Pretraining Word Embeddings" and "Pretraining
word2vec" sections as written, the PTB download replaced by a few local sentences in its form and
d2l's Vocab, Accumulator and animator by the few lines of them a run uses: subsampling by
random.uniform against sqrt(t / frequency) (t = 1e-1 for the small corpus, the book's 1e-4),
get_centers_and_contexts over random.randint windows, the RandomGenerator caching
random.choices(population, sampling_weights, k=10000), noise words drawn with counter[...] ** 0.75
weights, batchify padding contexts and negatives with masks and labels into
torch.tensor(centers).reshape((-1, 1)) and friends, a PTBDataset in a DataLoader(shuffle=True,
collate_fn=batchify); then the skip-gram model (nn.Embedding pair in an nn.Sequential, torch.bmm of
embed_v(center) and embed_u(contexts_and_negatives).permute(0, 2, 1)), SigmoidBCELoss through
F.binary_cross_entropy_with_logits(weight=mask, reduction="none").mean(dim=1) checked against the
book's sigmd values, training with net.apply(init_weights) (xavier_uniform_ on each Embedding) and
Adam, the loss normalised by mask.sum(axis=1) * mask.shape[1], and get_similar_tokens through
torch.mv cosine similarities and torch.topk. Python's random and torch.manual_seed are seeded the
same in both runs, so the data, shuffles and weights agree."""
import collections
import math
import random

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines

SENTENCES = [
    "the cat sat on the mat with the dog",
    "a dog and a cat play in the park",
    "the market rose as stocks gained in new york",
    "stocks fell in the market on friday",
    "the dog ran to the park with a ball",
    "new york stocks rose on strong earnings",
    "the cat and the dog sleep on the mat",
    "earnings fell and the market dropped",
] * 6


class Vocab:
    """d2l's Vocab: tokens sorted by frequency after '<unk>' and the reserved ones, min_freq."""

    def __init__(self, tokens=[], min_freq=0, reserved_tokens=[]):
        if tokens and isinstance(tokens[0], list):
            tokens = [token for line in tokens for token in line]
        counter = collections.Counter(tokens)
        self.token_freqs = sorted(counter.items(), key=lambda x: x[1], reverse=True)
        self.idx_to_token = list(sorted(set(['<unk>'] + reserved_tokens + [
            token for token, freq in self.token_freqs if freq >= min_freq])))
        self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}

    def __len__(self):
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, self.unk)
        return [self.__getitem__(token) for token in tokens]

    def to_tokens(self, indices):
        if hasattr(indices, '__len__') and len(indices) > 1:
            return [self.idx_to_token[int(index)] for index in indices]
        return self.idx_to_token[indices]

    @property
    def unk(self):
        return self.token_to_idx['<unk>']


def word2vec(torch, init=None, num_epochs=3, embed_size=16):
    nn = torch.nn

    with captured_run(torch, 0) as out:
        random.seed(0)
        torch.manual_seed(0)

        def read_ptb():
            """Load the PTB dataset into a list of text lines."""
            return SENTENCES

        sentences = read_ptb()
        print(f'# sentences: {len(sentences)}')
        sentences = [line.split() for line in sentences]
        vocab = Vocab(sentences, min_freq=2)
        print(f'vocab size: {len(vocab)}')

        def subsample(sentences, vocab):
            """Subsample high-frequency words."""
            # Exclude unknown tokens ('<unk>')
            sentences = [[token for token in line if vocab[token] != vocab.unk]
                         for line in sentences]
            counter = collections.Counter([
                token for line in sentences for token in line])
            num_tokens = sum(counter.values())

            # Return True if `token` is kept during subsampling
            def keep(token):
                return (random.uniform(0, 1) <
                        math.sqrt(1e-1 / counter[token] * num_tokens))

            return ([[token for token in line if keep(token)] for line in sentences],
                    counter)

        subsampled, counter = subsample(sentences, vocab)

        def compare_counts(token):
            return (f'# of "{token}": '
                    f'before={sum([l.count(token) for l in sentences])}, '
                    f'after={sum([l.count(token) for l in subsampled])}')

        print(compare_counts('the'))
        corpus = [vocab[line] for line in subsampled]

        def get_centers_and_contexts(corpus, max_window_size):
            """Return center words and context words in skip-gram."""
            centers, contexts = [], []
            for line in corpus:
                # To form a "center word--context word" pair, each sentence needs to
                # have at least 2 words
                if len(line) < 2:
                    continue
                centers += line
                for i in range(len(line)):  # Context window centered at `i`
                    window_size = random.randint(1, max_window_size)
                    indices = list(range(max(0, i - window_size),
                                         min(len(line), i + 1 + window_size)))
                    # Exclude the center word from the context words
                    indices.remove(i)
                    contexts.append([line[idx] for idx in indices])
            return centers, contexts

        all_centers, all_contexts = get_centers_and_contexts(corpus, 3)
        print(f'# center-context pairs: {sum([len(contexts) for contexts in all_contexts])}')

        class RandomGenerator:
            """Randomly draw among {1, ..., n} according to n sampling weights."""
            def __init__(self, sampling_weights):
                # Exclude
                self.population = list(range(1, len(sampling_weights) + 1))
                self.sampling_weights = sampling_weights
                self.candidates = []
                self.i = 0

            def draw(self):
                if self.i == len(self.candidates):
                    # Cache `k` random sampling results
                    self.candidates = random.choices(
                        self.population, self.sampling_weights, k=10000)
                    self.i = 0
                self.i += 1
                return self.candidates[self.i - 1]

        def get_negatives(all_contexts, vocab, counter, K):
            """Return noise words in negative sampling."""
            # Sampling weights for words with indices 1, 2, ... (index 0 is the
            # excluded unknown token) in the vocabulary
            sampling_weights = [counter[vocab.to_tokens(i)]**0.75
                                for i in range(1, len(vocab))]
            all_negatives, generator = [], RandomGenerator(sampling_weights)
            for contexts in all_contexts:
                negatives = []
                while len(negatives) < len(contexts) * K:
                    neg = generator.draw()
                    # Noise words cannot be context words
                    if neg not in contexts:
                        negatives.append(neg)
                all_negatives.append(negatives)
            return all_negatives

        all_negatives = get_negatives(all_contexts, vocab, counter, 5)

        def batchify(data):
            """Return a minibatch of examples for skip-gram with negative sampling."""
            max_len = max(len(c) + len(n) for _, c, n in data)
            centers, contexts_negatives, masks, labels = [], [], [], []
            for center, context, negative in data:
                cur_len = len(context) + len(negative)
                centers += [center]
                contexts_negatives += [context + negative + [0] * (max_len - cur_len)]
                masks += [[1] * cur_len + [0] * (max_len - cur_len)]
                labels += [[1] * len(context) + [0] * (max_len - len(context))]
            return (torch.tensor(centers).reshape((-1, 1)), torch.tensor(
                contexts_negatives), torch.tensor(masks), torch.tensor(labels))

        x_1 = (1, [2, 2], [3, 3, 3, 3])
        x_2 = (1, [2, 2, 2], [3, 3])
        batch = batchify((x_1, x_2))

        names = ['centers', 'contexts_negatives', 'masks', 'labels']
        for name, data in zip(names, batch):
            print(name, '=', data)

        class PTBDataset(torch.utils.data.Dataset):
            def __init__(self, centers, contexts, negatives):
                assert len(centers) == len(contexts) == len(negatives)
                self.centers = centers
                self.contexts = contexts
                self.negatives = negatives

            def __getitem__(self, index):
                return (self.centers[index], self.contexts[index],
                        self.negatives[index])

            def __len__(self):
                return len(self.centers)

        dataset = PTBDataset(all_centers, all_contexts, all_negatives)
        data_iter = torch.utils.data.DataLoader(dataset, 64, shuffle=True, collate_fn=batchify, num_workers=0)
        for batch in data_iter:
            for name, data in zip(names, batch):
                print(name, 'shape:', data.shape)
            break

        embed = nn.Embedding(num_embeddings=20, embedding_dim=4)
        print(f'Parameter embedding_weight ({embed.weight.shape}, '
              f'dtype={embed.weight.dtype})')
        x = torch.tensor([[1, 2, 3], [4, 5, 6]])
        looked_up = embed(x)

        def skip_gram(center, contexts_and_negatives, embed_v, embed_u):
            v = embed_v(center)
            u = embed_u(contexts_and_negatives)
            pred = torch.bmm(v, u.permute(0, 2, 1))
            return pred

        print(skip_gram(torch.ones((2, 1), dtype=torch.long), torch.ones((2, 4), dtype=torch.long), embed, embed).shape)

        class SigmoidBCELoss(nn.Module):
            # Binary cross-entropy loss with masking
            def __init__(self):
                super().__init__()

            def forward(self, inputs, target, mask=None):
                out = nn.functional.binary_cross_entropy_with_logits(
                    inputs, target, weight=mask, reduction="none")
                return out.mean(dim=1)

        loss = SigmoidBCELoss()
        pred = torch.tensor([[1.1, -2.2, 3.3, -4.4]] * 2)
        label = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
        mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
        print(loss(pred, label, mask) * mask.shape[1] / mask.sum(axis=1))

        def sigmd(x):
            return -math.log(1 / (1 + math.exp(-x)))

        print(f'{(sigmd(1.1) + sigmd(2.2) + sigmd(-3.3) + sigmd(4.4)) / 4:.4f}')
        print(f'{(sigmd(-1.1) + sigmd(-2.2)) / 2:.4f}')

        net = nn.Sequential(nn.Embedding(num_embeddings=len(vocab), embedding_dim=embed_size),
                            nn.Embedding(num_embeddings=len(vocab), embedding_dim=embed_size))
        device = torch.device("cpu")

        def train(net, data_iter, lr, num_epochs, device=device):
            def init_weights(module):
                if type(module) == nn.Embedding:
                    nn.init.xavier_uniform_(module.weight)
            net.apply(init_weights)
            net = net.to(device)
            optimizer = torch.optim.Adam(net.parameters(), lr=lr)
            # Sum of normalized losses, no. of normalized losses
            metric = [0.0, 0.0]
            epoch_losses = []
            for epoch in range(num_epochs):
                for i, batch in enumerate(data_iter):
                    optimizer.zero_grad()
                    center, context_negative, mask, label = [
                        data.to(device) for data in batch]

                    pred = skip_gram(center, context_negative, net[0], net[1])
                    l = (loss(pred.reshape(label.shape).float(), label.float(), mask)
                         / mask.sum(axis=1) * mask.shape[1])
                    l.sum().backward()
                    optimizer.step()
                    metric[0] += float(l.sum())
                    metric[1] += l.numel()
                epoch_losses.append(metric[0] / metric[1])
            print(f'loss {metric[0] / metric[1]:.3f}')
            return epoch_losses

        lr = 0.01
        epoch_losses = train(net, data_iter, lr, num_epochs)

        def get_similar_tokens(query_token, k, embed):
            W = embed.weight.data
            x = W[vocab[query_token]]
            # Compute the cosine similarity. Add 1e-9 for numerical stability
            cos = torch.mv(W, x) / torch.sqrt(torch.sum(W * W, dim=1) *
                                              torch.sum(x * x) + 1e-9)
            topk = torch.topk(cos, k=k + 1)[1].cpu().numpy().astype('int32')
            for i in topk[1:]:  # Remove the input words
                print(f'cosine sim={float(cos[i]):.3f}: {vocab.to_tokens(i)}')

        get_similar_tokens('cat', 3, net[0])
    return {"printed": printed_lines(out), "looked_up": numpy_of(looked_up), "epoch_losses": epoch_losses,
            "embeddings": numpy_of(net[0].weight)}


def test_d2l_word2vec_pretraining():
    ref, got = compare_program(word2vec, rtol=1e-3, atol=1e-4)
    printed = "\n".join(got["printed"])
    assert "0.9352" in printed and "1.8462" in printed  # the book's sigmd checks

"""A word2vec skip-gram with negative sampling, as the embedding tutorials write it: a vocabulary
from collections.Counter with most_common, subsampling of frequent words by 1 - sqrt(t / f), context
windows, noise words drawn from the unigram distribution raised to 3/4 (torch.multinomial over
torch.tensor(freqs) ** 0.75 with replacement, compared by structure), two nn.Embedding tables
(max_norm=1 on the input one, uniform_(-0.5 / dim, 0.5 / dim) and zero init),
torch.bmm(emb_neg, emb_in.unsqueeze(2)).squeeze(), F.logsigmoid of positive and negated negative
scores, SparseAdam-free plain SGD, and the nearest words by F.cosine_similarity against
embeddings.weight with topk."""
import math
from collections import Counter

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

TEXT = ("the quick brown fox jumps over the lazy dog the dog sleeps and the fox runs "
        "a quick brown dog jumps over a lazy fox while the cat watches the dog and the fox ") * 3


def word2vec(torch, init=None, epochs=2, embed_dim=8, window=2, n_neg=3, max_norm=1.0):
    nn, F = torch.nn, torch.nn.functional
    words = TEXT.split()
    counts = Counter(words)
    vocab = [w for w, _ in counts.most_common()]
    word2idx = {w: i for i, w in enumerate(vocab)}
    total = sum(counts.values())
    freqs = [counts[w] / total for w in vocab]
    rng = np.random.default_rng(0)
    t = 1e-2
    keep = [w for w in words if rng.random() < 1 - math.sqrt(t / (counts[w] / total)) or counts[w] < 4]
    ids = [word2idx[w] for w in keep]
    pairs = [(ids[i], ids[j]) for i in range(len(ids))
             for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i]
    noise_dist = torch.tensor(freqs) ** 0.75
    noise_dist = noise_dist / noise_dist.sum()

    class SkipGramNeg(nn.Module):
        def __init__(self, n_vocab, n_embed, noise_dist=None):
            super().__init__()
            self.n_vocab = n_vocab
            self.n_embed = n_embed
            self.noise_dist = noise_dist
            self.in_embed = nn.Embedding(n_vocab, n_embed, max_norm=max_norm)
            self.out_embed = nn.Embedding(n_vocab, n_embed)
            self.in_embed.weight.data.uniform_(-0.5 / n_embed, 0.5 / n_embed)
            self.out_embed.weight.data.zero_()

        def forward_input(self, input_words):
            return self.in_embed(input_words)

        def forward_output(self, output_words):
            return self.out_embed(output_words)

        def forward_noise(self, batch_size, n_samples):
            noise_words = torch.multinomial(self.noise_dist, batch_size * n_samples, replacement=True)
            return self.out_embed(noise_words).view(batch_size, n_samples, self.n_embed)

    class NegativeSamplingLoss(nn.Module):
        def forward(self, input_vectors, output_vectors, noise_vectors):
            batch_size, embed_size = input_vectors.shape
            input_vectors = input_vectors.view(batch_size, embed_size, 1)
            output_vectors = output_vectors.view(batch_size, 1, embed_size)
            out_loss = torch.bmm(output_vectors, input_vectors).sigmoid().log()
            out_loss = out_loss.squeeze()
            noise_loss = torch.bmm(noise_vectors.neg(), input_vectors).sigmoid().log()
            noise_loss = noise_loss.squeeze().sum(1)
            return -(out_loss + noise_loss).mean()

    torch.manual_seed(0)
    model = SkipGramNeg(len(vocab), embed_dim, noise_dist=noise_dist)
    own = {"noise": list(model.forward_noise(4, n_neg).shape)}
    result = {"vocab": vocab, "npairs": len(pairs), "noise_dist": numpy_of(noise_dist), "own": own}
    start_from(torch, model, init, result)
    with torch.no_grad():  # a spread-out start (the tutorial's uniform init, drawn from NumPy here)
        model.in_embed.weight.copy_(torch.from_numpy(rng.uniform(-1, 1, (len(vocab), embed_dim)).astype(np.float32)))
        model.out_embed.weight.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, (len(vocab), embed_dim)).astype(np.float32)))
    criterion = NegativeSamplingLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    noise_np = noise_dist.numpy().astype(np.float64)
    noise_np /= noise_np.sum()
    losses = []
    for epoch in range(epochs):
        order = rng.permutation(len(pairs))
        for start in range(0, len(order), 32):
            batch = [pairs[k] for k in order[start:start + 32]]
            inputs = torch.tensor([b[0] for b in batch])
            targets = torch.tensor([b[1] for b in batch])
            input_vectors = model.forward_input(inputs)
            output_vectors = model.forward_output(targets)
            noise = torch.from_numpy(rng.choice(len(vocab), (len(batch), n_neg), p=noise_np))
            noise_vectors = model.forward_output(noise)
            loss = criterion(input_vectors, output_vectors, noise_vectors)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    result["losses"] = losses
    embeddings = model.in_embed.weight.detach()
    result["norms"] = numpy_of(embeddings.norm(dim=1))
    query = embeddings[word2idx["fox"]].unsqueeze(0)
    sims = F.cosine_similarity(query, embeddings, dim=1)
    values, nearest = sims.topk(3)
    result.update(sims=numpy_of(sims), nearest=[vocab[i] for i in nearest.tolist()],
                  embeddings=numpy_of(embeddings), out=numpy_of(model.out_embed.weight))
    return result


def test_word2vec_negative_sampling_max_norm():
    ref, got = compare_program(word2vec, rtol=1e-3, atol=1e-5)
    assert ref["norms"].max() < 1.1  # renormalised at each lookup (uniform(-1, 1) rows start near 1.6)
    assert got["own"]["noise"] == [4, 3, 8]

"""The word-embeddings tutorial: an N-gram language model (nn.Embedding of the context words,
view((1, -1)), a ReLU hidden layer, F.log_softmax, NLLLoss, SGD) trained on trigrams of a sonnet,
the context turned into torch.tensor([word_to_ix[w] for w in context], dtype=torch.long), the total
loss per epoch and one word's embedding read back; then continuous bag-of-words predicting a word
from the two on each side (the sum of their embeddings), and an nn.Embedding lookup of one word."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

SONNET = """When forty winters shall besiege thy brow, And dig deep trenches in thy beauty's field,
Thy youth's proud livery so gazed on now, Will be a totter'd weed of small worth held: Then being
asked, where all thy beauty lies, Where all the treasure of thy lusty days;""".split()
RAW_TEXT = """We are about to study the idea of a computational process. Computational processes
are abstract beings that inhabit computers. As they evolve, processes manipulate other abstract
things called data.""".split()
CONTEXT_SIZE, EMBEDDING_DIM = 2, 10


def ngram_model(torch, init=None, epochs=4):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    ngrams = [([SONNET[i - j - 1] for j in range(CONTEXT_SIZE)], SONNET[i])
              for i in range(CONTEXT_SIZE, len(SONNET))]
    vocab = set(SONNET)
    word_to_ix = {word: i for i, word in enumerate(sorted(vocab))}

    class NGramLanguageModeler(nn.Module):
        def __init__(self, vocab_size, embedding_dim, context_size):
            super().__init__()
            self.embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.linear1 = nn.Linear(context_size * embedding_dim, 32)
            self.linear2 = nn.Linear(32, vocab_size)

        def forward(self, inputs):
            embeds = self.embeddings(inputs).view((1, -1))
            out = F.relu(self.linear1(embeds))
            out = self.linear2(out)
            log_probs = F.log_softmax(out, dim=1)
            return log_probs

    torch.manual_seed(1)
    losses = []
    loss_function = nn.NLLLoss()
    model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
    result = {}
    start_from(torch, model, init, result)
    optimizer = optim.SGD(model.parameters(), lr=0.001)
    for epoch in range(epochs):
        total_loss = 0
        for context, target in ngrams:
            context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
            model.zero_grad()
            log_probs = model(context_idxs)
            loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        losses.append(total_loss)
    result.update(losses=losses, beauty=numpy_of(model.embeddings.weight[word_to_ix["beauty"]]))
    return result


def cbow_model(torch, init=None, epochs=5):
    nn, F = torch.nn, torch.nn.functional
    vocab = set(RAW_TEXT)
    word_to_ix = {word: i for i, word in enumerate(sorted(vocab))}
    data = []
    for i in range(CONTEXT_SIZE, len(RAW_TEXT) - CONTEXT_SIZE):
        context = [RAW_TEXT[i - 2], RAW_TEXT[i - 1], RAW_TEXT[i + 1], RAW_TEXT[i + 2]]
        data.append((context, RAW_TEXT[i]))

    class CBOW(nn.Module):
        def __init__(self, vocab_size, embedding_dim):
            super().__init__()
            self.embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.linear = nn.Linear(embedding_dim, vocab_size)

        def forward(self, inputs):
            embeds = self.embeddings(inputs).sum(dim=0, keepdim=True)
            return F.log_softmax(self.linear(embeds), dim=-1)

    def make_context_vector(context, word_to_ix):
        idxs = [word_to_ix[w] for w in context]
        return torch.tensor(idxs, dtype=torch.long)

    torch.manual_seed(1)
    model = CBOW(len(vocab), EMBEDDING_DIM)
    result = {"first_context": numpy_of(make_context_vector(data[0][0], word_to_ix))}
    start_from(torch, model, init, result)
    loss_function = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for epoch in range(epochs):
        total = torch.tensor(0.0)
        for context, target in data:
            optimizer.zero_grad()
            log_probs = model(make_context_vector(context, word_to_ix))
            loss = loss_function(log_probs, torch.tensor([word_to_ix[target]]))
            loss.backward()
            optimizer.step()
            total += loss.detach()
        losses.append(total.item())
    with torch.no_grad():
        predicted = [sorted(vocab)[model(make_context_vector(c, word_to_ix)).argmax(dim=1).item()] for c, _ in data[:5]]
    embeds = nn.Embedding(2, 5)
    hello_world = {"hello": 0, "world": 1}
    lookup = torch.tensor([hello_world["hello"]], dtype=torch.long)
    result.update(losses=losses, predicted=predicted, lookup_shape=tuple(embeds(lookup).shape),
                  weight=numpy_of(model.linear.weight))
    return result


def test_ngram_language_model():
    ref, got = compare_program(ngram_model, rtol=1e-3, atol=1e-4)
    assert got["losses"][-1] < got["losses"][0]


def test_cbow():
    ref, got = compare_program(cbow_model, rtol=1e-3, atol=1e-4)
    assert got["lookup_shape"] == (1, 5)

"""A character-level language model in the style of makemore: a three-character context through
an Embedding, a tanh hidden layer and the logits of the next character, trained with Adam on
mini-batches, then sampled a character at a time with torch.multinomial."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

WORDS = ("emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily elizabeth "
         "mila ella avery sofia camila aria scarlett victoria madison luna grace chloe penelope layla "
         "riley zoey nora lily eleanor hannah lillian addison aubrey ellie stella natalie zoe leah").split()
CHARS = "." + "".join(sorted(set("".join(WORDS))))
CONTEXT = 3


def dataset():
    """(contexts, next characters) as int64 arrays: '...emma.' gives '...'->'e', '..e'->'m', ..."""
    xs, ys = [], []
    for w in WORDS:
        context = [0] * CONTEXT
        for ch in w + ".":
            xs.append(context)
            ys.append(CHARS.index(ch))
            context = context[1:] + [CHARS.index(ch)]
    return np.array(xs, dtype=np.int64), np.array(ys, dtype=np.int64)


def char_lm(torch, init=None, steps=40, sample=False):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class CharMLP(nn.Module):
        def __init__(self, vocab, emb=8, hidden=64):
            super().__init__()
            self.emb = nn.Embedding(vocab, emb)
            self.hidden = nn.Linear(CONTEXT * emb, hidden)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, idx):  # idx (B, CONTEXT) -> logits (B, vocab)
            h = torch.tanh(self.hidden(self.emb(idx).view(idx.shape[0], -1)))
            return self.out(h)

    x_all, y_all = dataset()
    model = CharMLP(len(CHARS))
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        batch = rng.integers(0, len(y_all), size=32)
        logits = model(torch.from_numpy(x_all[batch]))
        loss = F.cross_entropy(logits, torch.from_numpy(y_all[batch]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        full_loss = F.cross_entropy(model(torch.from_numpy(x_all)), torch.from_numpy(y_all)).item()
    result.update(losses=losses, full_loss=full_loss, params={k: numpy_of(v) for k, v in model.named_parameters()})
    if sample:
        result.update(generate(torch, model))
    return result


def generate(torch, model, n_words=20, n_draws=4000):
    """Words sampled until '.', and the frequencies of n_draws next characters after '...'."""
    torch.manual_seed(42)
    model.eval()
    words = []
    with torch.no_grad():
        for _ in range(n_words):
            context, out = [0] * CONTEXT, []
            while len(out) < 20:
                probs = torch.softmax(model(torch.tensor([context])), dim=1)
                ix = torch.multinomial(probs, num_samples=1).item()
                if ix == 0:
                    break
                out.append(CHARS[ix])
                context = context[1:] + [ix]
            words.append("".join(out))
        probs = torch.softmax(model(torch.tensor([[0] * CONTEXT])), dim=1)[0]
        draws = torch.multinomial(probs, num_samples=n_draws, replacement=True)
    return {"probs": numpy_of(probs),
            "own": {"words": words, "frequencies": np.bincount(numpy_of(draws), minlength=len(CHARS)) / n_draws}}


def test_char_lm_training():
    ref, _ = compare_program(char_lm)
    assert ref["losses"][-1] < ref["losses"][0]


def test_char_lm_sampling_with_multinomial():
    ref, got = compare_program(char_lm, sample=True)
    for res in (ref, got):
        # The draws follow the model's distribution (4000 draws: standard errors up to 0.008)...
        np.testing.assert_allclose(res["own"]["frequencies"], res["probs"], atol=0.03)
        # ...and the words are made of the vocabulary's letters, 20 at most.
        assert all(set(w) <= set(CHARS[1:]) and len(w) <= 20 for w in res["own"]["words"])
    # minitorch's CPU generator is PyTorch's: after the same seed, the same words and draws
    assert got["own"]["words"] == ref["own"]["words"]
    np.testing.assert_array_equal(got["own"]["frequencies"], ref["own"]["frequencies"])

"""makemore parts 2 and 3: a character MLP over a block_size context built by build_dataset
(context = context[1:] + [ix]), an embedding table looked up by C[X], h = torch.tanh(embcat @ W1
+ b1), minibatches drawn by torch.randint(0, X.shape[0], (32,), generator=g), F.cross_entropy,
a step-decayed learning rate, split_loss under @torch.no_grad(); part 3's kaiming gain
(5/3)/((n_embd * block_size)**0.5), a batch norm written out with bnmeani/bnstdi and running
statistics updated under torch.no_grad(), the parameters' sum(p.nelement()), and a loss
computed with the calibrated statistics."""
import numpy as np

from prog_helpers import compare_program, numpy_of

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia", "harper", "evelyn",
         "abigail", "emily", "elizabeth", "mila", "ella", "avery", "sofia", "camila", "aria", "scarlett",
         "victoria", "madison", "luna", "grace", "chloe", "penelope", "layla", "riley", "zoey", "nora"]


def makemore_mlp(torch, init=None, steps=12, batchnorm=False):
    F = torch.nn.functional
    chars = sorted(list(set("".join(WORDS))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    vocab_size = len(stoi)
    block_size = 3

    def build_dataset(words):
        X, Y = [], []
        for w in words:
            context = [0] * block_size
            for ch in w + ".":
                ix = stoi[ch]
                X.append(context)
                Y.append(ix)
                context = context[1:] + [ix]
        X = torch.tensor(X)
        Y = torch.tensor(Y)
        return X, Y

    n1 = int(0.8 * len(WORDS))
    Xtr, Ytr = build_dataset(WORDS[:n1])
    Xdev, Ydev = build_dataset(WORDS[n1:])
    result = {"shapes": [list(Xtr.shape), list(Ytr.shape), list(Xdev.shape)], "own": {}}
    n_embd, n_hidden = 10, 64
    rng = np.random.default_rng(2147483647)

    def randn(*shape):
        return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))

    C = randn(vocab_size, n_embd)
    if batchnorm:
        W1 = randn(n_embd * block_size, n_hidden) * (5 / 3) / ((n_embd * block_size) ** 0.5)
        b1 = randn(n_hidden) * 0.01
        W2 = randn(n_hidden, vocab_size) * 0.01
        b2 = randn(vocab_size) * 0
        bngain = torch.ones((1, n_hidden))
        bnbias = torch.zeros((1, n_hidden))
        bnmean_running = torch.zeros((1, n_hidden))
        bnstd_running = torch.ones((1, n_hidden))
        parameters = [C, W1, W2, b2, bngain, bnbias]
    else:
        W1 = randn(n_embd * block_size, n_hidden)
        b1 = randn(n_hidden)
        W2 = randn(n_hidden, vocab_size)
        b2 = randn(vocab_size)
        parameters = [C, W1, b1, W2, b2]
    result["nparams"] = sum(p.nelement() for p in parameters)
    for p in parameters:
        p.requires_grad = True
    g = torch.Generator().manual_seed(2147483647)
    ix_own = torch.randint(0, Xtr.shape[0], (32,), generator=g)
    result["own"]["ix"] = numpy_of(ix_own)
    lossi, stepi = [], []
    for i in range(steps):
        ix = torch.from_numpy(rng.integers(0, Xtr.shape[0], 32))
        Xb, Yb = Xtr[ix], Ytr[ix]
        emb = C[Xb]
        embcat = emb.view(emb.shape[0], -1)
        hpreact = embcat @ W1
        if batchnorm:
            bnmeani = hpreact.mean(0, keepdim=True)
            bnstdi = hpreact.std(0, keepdim=True)
            hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
            with torch.no_grad():
                bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
                bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
        else:
            hpreact = hpreact + b1
        h = torch.tanh(hpreact)
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < steps // 2 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        stepi.append(i)
        lossi.append(loss.log10().item())
    result["lossi"] = lossi
    result["saturated"] = (h.abs() > 0.99).float().mean().item()

    @torch.no_grad()
    def split_loss(split):
        x, y = {"train": (Xtr, Ytr), "val": (Xdev, Ydev)}[split]
        emb = C[x]
        embcat = emb.view(emb.shape[0], -1)
        hpreact = embcat @ W1
        if batchnorm:
            hpreact = bngain * (hpreact - bnmean_running) / bnstd_running + bnbias
        else:
            hpreact = hpreact + b1
        h = torch.tanh(hpreact)
        logits = h @ W2 + b2
        return F.cross_entropy(logits, y).item()

    result["train"] = split_loss("train")
    result["val"] = split_loss("val")
    if batchnorm:
        with torch.no_grad():
            emb = C[Xtr]
            embcat = emb.view(emb.shape[0], -1)
            hpreact = embcat @ W1
            bnmean = hpreact.mean(0, keepdim=True)
            bnstd = hpreact.std(0, keepdim=True)
        result["calibrated"] = [numpy_of(bnmean), numpy_of(bnstd), numpy_of(bnmean_running)]
    # sampling with the library's own generator
    g = torch.Generator().manual_seed(2147483647 + 10)
    samples = []
    for _ in range(3):
        out, context = [], [0] * block_size
        while True:
            emb = C[torch.tensor([context])]
            hpre = emb.view(1, -1) @ W1
            if batchnorm:
                hpre = bngain * (hpre - bnmean_running) / bnstd_running + bnbias
            else:
                hpre = hpre + b1
            h = torch.tanh(hpre)
            probs = F.softmax(h @ W2 + b2, dim=1)
            ix = torch.multinomial(probs, num_samples=1, generator=g).item()
            context = context[1:] + [ix]
            out.append(ix)
            if ix == 0 or len(out) > 20:
                break
        samples.append(out)
    result["own"]["samples"] = samples
    result.update(C=numpy_of(C), W2=numpy_of(W2))
    return result


def test_makemore_mlp():
    ref, got = compare_program(makemore_mlp)
    assert ref["lossi"][-1] < ref["lossi"][0]


def test_makemore_mlp_manual_batchnorm():
    ref, got = compare_program(makemore_mlp, batchnorm=True)
    assert len(got["own"]["samples"]) == 3

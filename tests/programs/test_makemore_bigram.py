"""makemore part 1 as its notebook writes it: bigram counts in an int32 (27, 27) table filled by
N[ix1, ix2] += 1 over stoi lookups, rows normalised by P.sum(1, keepdims=True) after a +1
smoothing, names sampled with torch.multinomial(p, num_samples=1, replacement=True,
generator=g).item(), the average negative log likelihood; then the same model as one linear layer
over F.one_hot(xs, num_classes=27).float(), trained by hand: W.grad = None, loss.backward(),
W.data += -lr * W.grad, with a 0.01 * (W**2).mean() regulariser."""
import numpy as np

from prog_helpers import compare_program, numpy_of

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia", "harper", "evelyn",
         "abigail", "emily", "elizabeth", "mila", "ella", "avery", "sofia", "camila", "aria", "scarlett"]


def bigram(torch, init=None, steps=8):
    F = torch.nn.functional
    words = WORDS
    chars = sorted(list(set("".join(words))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    itos = {i: s for s, i in stoi.items()}
    V = len(stoi)
    N = torch.zeros((V, V), dtype=torch.int32)
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            ix1, ix2 = stoi[ch1], stoi[ch2]
            N[ix1, ix2] += 1
    result = {"N": numpy_of(N), "total": N.sum().item(), "row0": numpy_of(N[0])}
    p = N[0].float()
    p = p / p.sum()
    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)
    result["P"] = numpy_of(P)
    result["rowsums"] = numpy_of(P.sum(1))
    g = torch.Generator().manual_seed(2147483647)
    names = []
    for i in range(5):
        out = []
        ix = 0
        while True:
            p = P[ix]
            ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
            out.append(itos[ix])
            if ix == 0 or len(out) > 30:
                break
        names.append("".join(out))
    result["own"] = {"names": names}
    log_likelihood = 0.0
    n = 0
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            prob = P[stoi[ch1], stoi[ch2]]
            logprob = torch.log(prob)
            log_likelihood += logprob
            n += 1
    nll = -log_likelihood
    result["nll"] = (nll / n).item()

    xs, ys = [], []
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            xs.append(stoi[ch1])
            ys.append(stoi[ch2])
    xs = torch.tensor(xs)
    ys = torch.tensor(ys)
    num = xs.nelement()
    xenc = F.one_hot(xs, num_classes=V).float()
    result["xenc"] = [list(xenc.shape), str(xenc.dtype).split(".")[-1]]
    W = torch.from_numpy(np.random.default_rng(0).standard_normal((V, V)).astype(np.float32))
    W.requires_grad = True
    losses = []
    for k in range(steps):
        xenc = F.one_hot(xs, num_classes=V).float()
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdims=True)
        loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
        losses.append(loss.item())
        W.grad = None
        loss.backward()
        W.data += -50 * W.grad
    result.update(losses=losses, W=numpy_of(W))
    g = torch.Generator().manual_seed(2147483647)
    for i in range(3):
        ix = 0
        while True:
            xenc = F.one_hot(torch.tensor([ix]), num_classes=V).float()
            logits = xenc @ W
            counts = logits.exp()
            p = counts / counts.sum(1, keepdims=True)
            ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
            if ix == 0:
                break
    return result


def test_makemore_bigram_counts_and_one_hot_net():
    ref, got = compare_program(bigram)
    assert ref["losses"][-1] < ref["losses"][0]
    assert all(name.endswith(".") or len(name) > 30 for name in got["own"]["names"])

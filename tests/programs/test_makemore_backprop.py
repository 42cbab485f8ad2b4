"""makemore part 4, "becoming a backprop ninja": the MLP's forward pass broken into small steps
(logit_maxes, norm_logits, counts_sum_inv, bndiff2, bnvar with Bessel's 1/(n-1), ...), each
intermediate kept with retain_grad(), then the backward pass written by hand and compared with
autograd through a cmp() that reports torch.all(dt == t.grad).item(), torch.allclose(dt, t.grad)
and (dt - t.grad).abs().max().item(); the fused forms after: dlogits = F.softmax(logits, 1);
dlogits[range(n), Yb] -= 1, the batch norm backward in one line, dC accumulated by a loop over
Xb.shape, and an update from the manual gradients under torch.no_grad()."""
import numpy as np

from prog_helpers import compare_program, numpy_of


def backprop_ninja(torch, init=None, steps=3):
    F = torch.nn.functional
    rng = np.random.default_rng(42)
    vocab_size, n_embd, block_size, n_hidden, n = 27, 10, 3, 64, 32

    def randn(*shape):
        return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))

    C = randn(vocab_size, n_embd)
    W1 = randn(n_embd * block_size, n_hidden) * (5 / 3) / ((n_embd * block_size) ** 0.5)
    b1 = randn(n_hidden) * 0.1
    W2 = randn(n_hidden, vocab_size) * 0.1
    b2 = randn(vocab_size) * 0.1
    bngain = randn(1, n_hidden) * 0.1 + 1.0
    bnbias = randn(1, n_hidden) * 0.1
    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    for p in parameters:
        p.requires_grad = True
    Xtr = torch.from_numpy(rng.integers(0, vocab_size, (200, block_size)))
    Ytr = torch.from_numpy(rng.integers(0, vocab_size, 200))
    comparisons = {}

    def cmp(s, dt, t):
        ex = torch.all(dt == t.grad).item()
        app = torch.allclose(dt, t.grad)
        maxdiff = (dt - t.grad).abs().max().item()
        comparisons[s] = (app, maxdiff < 1e-5)
        return ex, app, maxdiff

    ix = torch.from_numpy(rng.integers(0, Xtr.shape[0], n))
    Xb, Yb = Xtr[ix], Ytr[ix]
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff ** 2
    bnvar = 1 / (n - 1) * (bndiff2).sum(0, keepdim=True)
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum ** -1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()
    for p in parameters:
        p.grad = None
    for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes, logits, h, hpreact,
              bnraw, bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani, embcat, emb]:
        t.retain_grad()
    loss.backward()
    result = {"loss": loss.item()}

    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
    dcounts = counts_sum_inv * dprobs
    dcounts_sum = (-counts_sum ** -2) * dcounts_sum_inv
    dcounts += torch.ones_like(counts) * dcounts_sum
    dnorm_logits = counts * dcounts
    dlogits = dnorm_logits.clone()
    dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
    dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1.0 - h ** 2) * dh
    dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
    dbnraw = bngain * dhpreact
    dbnbias = dhpreact.sum(0, keepdim=True)
    dbndiff = bnvar_inv * dbnraw
    dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
    dbnvar = (-0.5 * (bnvar + 1e-5) ** -1.5) * dbnvar_inv
    dbndiff2 = (1.0 / (n - 1)) * torch.ones_like(bndiff2) * dbnvar
    dbndiff += (2 * bndiff) * dbndiff2
    dhprebn = dbndiff.clone()
    dbnmeani = (-dbndiff).sum(0)
    dhprebn += 1.0 / n * (torch.ones_like(hprebn) * dbnmeani)
    dembcat = dhprebn @ W1.T
    dW1 = embcat.T @ dhprebn
    db1 = dhprebn.sum(0)
    demb = dembcat.view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            ix = Xb[k, j]
            dC[ix] += demb[k, j]
    for name, dt, t in [("logprobs", dlogprobs, logprobs), ("probs", dprobs, probs),
                        ("counts_sum_inv", dcounts_sum_inv, counts_sum_inv), ("counts_sum", dcounts_sum, counts_sum),
                        ("counts", dcounts, counts), ("norm_logits", dnorm_logits, norm_logits),
                        ("logit_maxes", dlogit_maxes, logit_maxes), ("logits", dlogits, logits), ("h", dh, h),
                        ("W2", dW2, W2), ("b2", db2, b2), ("hpreact", dhpreact, hpreact), ("bngain", dbngain, bngain),
                        ("bnbias", dbnbias, bnbias), ("bnraw", dbnraw, bnraw), ("bnvar_inv", dbnvar_inv, bnvar_inv),
                        ("bnvar", dbnvar, bnvar), ("bndiff2", dbndiff2, bndiff2), ("bndiff", dbndiff, bndiff),
                        ("bnmeani", dbnmeani, bnmeani), ("hprebn", dhprebn, hprebn), ("embcat", dembcat, embcat),
                        ("W1", dW1, W1), ("b1", db1, b1), ("emb", demb, emb), ("C", dC, C)]:
        cmp(name, dt, t)
    result["comparisons"] = {k: np.array(v) for k, v in comparisons.items()}
    result["grads"] = {k: numpy_of(v) for k, v in [("dC", dC), ("dW1", dW1), ("dlogits", dlogits)]}

    # exercise 2 and 3: the fused backward of cross entropy and of batch norm
    loss_fast = F.cross_entropy(logits, Yb)
    result["fast_diff"] = (loss_fast - loss).item()
    dlogits = F.softmax(logits, 1)
    dlogits[range(n), Yb] -= 1
    dlogits /= n
    result["dlogits_fused"] = cmp("logits_fused", dlogits, logits)[2] < 1e-6
    hpreact_fast = bngain * (hprebn - hprebn.mean(0, keepdim=True)) / torch.sqrt(
        hprebn.var(0, keepdim=True, unbiased=True) + 1e-5) + bnbias
    result["bn_fast"] = (hpreact_fast - hpreact).abs().max().item() < 1e-5
    dhprebn = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw
                                        * (dhpreact * bnraw).sum(0))
    result["dhprebn_fused"] = cmp("hprebn_fused", dhprebn, hprebn)[1]

    # exercise 4: training with the manual gradients only
    losses = []
    with torch.no_grad():
        for i in range(steps):
            ix = torch.from_numpy(rng.integers(0, Xtr.shape[0], n))
            Xb, Yb = Xtr[ix], Ytr[ix]
            emb = C[Xb]
            embcat = emb.view(emb.shape[0], -1)
            hprebn = embcat @ W1 + b1
            bnmean = hprebn.mean(0, keepdim=True)
            bnvar = hprebn.var(0, keepdim=True, unbiased=True)
            bnvar_inv = (bnvar + 1e-5) ** -0.5
            bnraw = (hprebn - bnmean) * bnvar_inv
            hpreact = bngain * bnraw + bnbias
            h = torch.tanh(hpreact)
            logits = h @ W2 + b2
            loss = F.cross_entropy(logits, Yb)
            dlogits = F.softmax(logits, 1)
            dlogits[range(n), Yb] -= 1
            dlogits /= n
            dh = dlogits @ W2.T
            dW2 = h.T @ dlogits
            db2 = dlogits.sum(0)
            dhpreact = (1.0 - h ** 2) * dh
            dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
            dbnbias = dhpreact.sum(0, keepdim=True)
            dhprebn = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw
                                                * (dhpreact * bnraw).sum(0))
            dembcat = dhprebn @ W1.T
            dW1 = embcat.T @ dhprebn
            db1 = dhprebn.sum(0)
            demb = dembcat.view(emb.shape)
            dC = torch.zeros_like(C)
            dC.index_add_(0, Xb.view(-1), demb.view(-1, n_embd))
            grads = [dC, dW1, db1, dW2, db2, dbngain, dbnbias]
            for p, grad in zip(parameters, grads):
                p.data += -0.1 * grad
            losses.append(loss.item())
    result["losses"] = losses
    result["W1"] = numpy_of(W1)
    return result


def test_makemore_manual_backprop():
    ref, got = compare_program(backprop_ninja, rtol=1e-3, atol=1e-5)
    assert all(ok for ok, _ in ref["comparisons"].values())

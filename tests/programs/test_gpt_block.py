"""A one-block GPT in nanoGPT's style: token and position embeddings, causal self-attention written
out (a registered tril mask, masked_fill with -inf, softmax), a GELU MLP, pre-LayerNorm residuals,
a tied language-model head, weights drawn by nn.init.normal_ (std 0.02); AdamW with decay only on
matrices, gradient clipping, next-character cross-entropy on a short text."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

TEXT = "the quick brown fox jumps over the lazy dog. " * 8
VOCAB = sorted(set(TEXT))
BLOCK, EMBD, HEADS = 16, 32, 4


def gpt(torch, init=None, steps=8, batch=8, clip=1.0):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            # No bias (nanoGPT's bias=False): the keys' bias has no gradient but rounding, which
            # AdamW turns into full-size steps that differ between any two libraries.
            self.c_attn = nn.Linear(EMBD, 3 * EMBD, bias=False)
            self.c_proj = nn.Linear(EMBD, EMBD)
            self.register_buffer("bias", torch.tril(torch.ones(BLOCK, BLOCK)).view(1, 1, BLOCK, BLOCK))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(EMBD, dim=2)
            k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)  # (B, nh, T, hs)
            q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(EMBD)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(EMBD)
            self.mlp = nn.Sequential(nn.Linear(EMBD, 4 * EMBD), nn.GELU(), nn.Linear(4 * EMBD, EMBD))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(len(VOCAB), EMBD)
            self.wpe = nn.Embedding(BLOCK, EMBD)
            self.block = Block()
            self.ln_f = nn.LayerNorm(EMBD)
            self.lm_head = nn.Linear(EMBD, len(VOCAB), bias=False)
            self.lm_head.weight = self.wte.weight  # weight tying
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, (nn.Linear, nn.Embedding)):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                torch.nn.init.zeros_(module.bias)

        def forward(self, idx, targets=None):
            pos = torch.arange(0, idx.size(1), dtype=torch.long)
            x = self.block(self.wte(idx) + self.wpe(pos))
            logits = self.lm_head(self.ln_f(x))
            if targets is None:
                return logits, None
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    model = GPT()
    result = {"own": {"init_std": {k: v.std().item() for k, v in model.named_parameters() if v.dim() >= 2}}}
    start_from(torch, model, init, result)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=3e-3, betas=(0.9, 0.95))
    data = np.array([VOCAB.index(c) for c in TEXT], dtype=np.int64)
    rng = np.random.default_rng(0)
    losses, norms = [], []
    model.train()
    for _ in range(steps):
        starts = rng.integers(0, len(data) - BLOCK - 1, batch)
        x = torch.from_numpy(np.stack([data[s:s + BLOCK] for s in starts]))
        y = torch.from_numpy(np.stack([data[s + 1:s + BLOCK + 1] for s in starts]))
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), clip)))
        optimizer.step()
        losses.append(loss.item())
    result.update(losses=losses, norms=norms, state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_gpt_block_adamw_grad_clipping():
    ref, got = compare_program(gpt)
    assert ref["losses"][-1] < ref["losses"][0]
    assert max(ref["norms"]) > 1.0  # the clipping did bite
    for std in got["own"]["init_std"].values():  # minitorch's own nn.init.normal_(std=0.02)
        assert 0.017 < std < 0.023

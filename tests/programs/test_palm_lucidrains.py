"""lucidrains' PaLM-pytorch (palm_pytorch/palm_pytorch.py, autoregressive_wrapper.py and train.py)
as published, at a tiny size, enwik8 replaced by a local byte string (np.frombuffer in place of
np.fromstring of the gzip file) and the .cuda() calls taken only where CUDA is available. What it
leans on: a LayerNorm without bias (F.layer_norm(x, x.shape[-1:], self.gamma, self.beta) with beta a
registered buffer), rotary embeddings (einsum("i , j -> i j"), rearrange "... (j d) -> ... j d",
x.unbind(dim=-2)), SwiGLU by chunk and F.silu, the parallel block's fused projection split by a tuple
of sizes, multi-query attention einsum("b h i d, b j d -> b h i j") against one key/value head,
cached buffers registered as None and re-registered (register_buffer(..., persistent=False)), a
causal mask torch.ones(..., dtype=torch.bool).triu(1) filled with -torch.finfo(sim.dtype).max,
embedding weight tying net[-1].weight = net[0].weight in an nn.Sequential, nn.init.normal_(std=0.02);
the AutoregressiveWrapper's generate under @torch.no_grad() and an eval_decorator, top_k by
torch.topk, torch.full_like(logits, float("-inf")) and probs.scatter_(1, ind, val),
torch.multinomial; train.py's TextSamplerDataset slicing data[rand_start : rand_start + seq_len + 1]
with a one-element tensor from torch.randint, cycle(DataLoader(...)), gradient accumulation,
clip_grad_norm_ and decode_token(chr(max(32, token))) of 0-d tensors. The seed is torch.manual_seed
(both libraries draw PyTorch's CPU streams: batches and samples agree)."""
import random

import numpy as np
import pytest

from prog_helpers import Printed, compare_program, numpy_of

einops = pytest.importorskip("einops")

ENWIK = (b"<page><title>Anarchism</title><text>Anarchism is a political philosophy and movement that is "
         b"sceptical of authority and rejects all involuntary, coercive forms of hierarchy.</text></page>") * 6


def palm_train(torch, init=None):
    from einops import rearrange

    nn = torch.nn
    F = torch.nn.functional
    einsum = torch.einsum
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    torch.manual_seed(0)
    random.seed(0)

    # palm_pytorch.py
    class LayerNorm(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.gamma = nn.Parameter(torch.ones(dim))
            self.register_buffer("beta", torch.zeros(dim))

        def forward(self, x):
            return F.layer_norm(x, x.shape[-1:], self.gamma, self.beta)

    class Residual(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x) + x

    class RotaryEmbedding(nn.Module):
        def __init__(self, dim):
            super().__init__()
            inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
            self.register_buffer("inv_freq", inv_freq)

        def forward(self, max_seq_len, *, device):
            seq = torch.arange(max_seq_len, device=device, dtype=self.inv_freq.dtype)
            freqs = einsum("i , j -> i j", seq, self.inv_freq)
            return torch.cat((freqs, freqs), dim=-1)

    def rotate_half(x):
        x = rearrange(x, "... (j d) -> ... j d", j=2)
        x1, x2 = x.unbind(dim=-2)
        return torch.cat((-x2, x1), dim=-1)

    def apply_rotary_pos_emb(pos, t):
        return (t * pos.cos()) + (rotate_half(t) * pos.sin())

    class SwiGLU(nn.Module):
        def forward(self, x):
            x, gate = x.chunk(2, dim=-1)
            return F.silu(gate) * x

    class ParallelTransformerBlock(nn.Module):
        def __init__(self, dim, dim_head=64, heads=8, ff_mult=4):
            super().__init__()
            self.norm = LayerNorm(dim)
            attn_inner_dim = dim_head * heads
            ff_inner_dim = dim * ff_mult
            self.fused_dims = (attn_inner_dim, dim_head, dim_head, (ff_inner_dim * 2))
            self.heads = heads
            self.scale = dim_head**-0.5
            self.rotary_emb = RotaryEmbedding(dim_head)
            self.fused_attn_ff_proj = nn.Linear(dim, sum(self.fused_dims), bias=False)
            self.attn_out = nn.Linear(attn_inner_dim, dim, bias=False)
            self.ff_out = nn.Sequential(
                SwiGLU(),
                nn.Linear(ff_inner_dim, dim, bias=False)
            )
            # for caching causal mask and rotary embeddings
            self.register_buffer("mask", None, persistent=False)
            self.register_buffer("pos_emb", None, persistent=False)

        def get_mask(self, n, device):
            if self.mask is not None and self.mask.shape[-1] >= n:
                return self.mask[:n, :n]
            mask = torch.ones((n, n), device=device, dtype=torch.bool).triu(1)
            self.register_buffer("mask", mask, persistent=False)
            return mask

        def get_rotary_embedding(self, n, device):
            if self.pos_emb is not None and self.pos_emb.shape[-2] >= n:
                return self.pos_emb[:n]
            pos_emb = self.rotary_emb(n, device=device)
            self.register_buffer("pos_emb", pos_emb, persistent=False)
            return pos_emb

        def forward(self, x):
            n, device, h = x.shape[1], x.device, self.heads
            # pre layernorm
            x = self.norm(x)
            # attention queries, keys, values, and feedforward inner
            q, k, v, ff = self.fused_attn_ff_proj(x).split(self.fused_dims, dim=-1)
            # split heads
            q = rearrange(q, "b n (h d) -> b h n d", h=h)
            # rotary embeddings
            positions = self.get_rotary_embedding(n, device)
            q, k = map(lambda t: apply_rotary_pos_emb(positions, t), (q, k))
            # scale
            q = q * self.scale
            # similarity
            sim = einsum("b h i d, b j d -> b h i j", q, k)
            # causal mask
            causal_mask = self.get_mask(n, device)
            sim = sim.masked_fill(causal_mask, -torch.finfo(sim.dtype).max)
            # attention
            attn = sim.softmax(dim=-1)
            # aggregate values
            out = einsum("b h i j, b j d -> b h i d", attn, v)
            # merge heads
            out = rearrange(out, "b h n d -> b n (h d)")
            return self.attn_out(out) + self.ff_out(ff)

    def PaLM(*, dim, num_tokens, depth, dim_head=64, heads=8, ff_mult=4):
        net = nn.Sequential(
            nn.Embedding(num_tokens, dim),
            *[
                Residual(ParallelTransformerBlock(dim=dim, dim_head=dim_head, heads=heads, ff_mult=ff_mult))
                for _ in range(depth)
            ],
            LayerNorm(dim),
            nn.Linear(dim, num_tokens, bias=False)
        )
        # they used embedding weight tied projection out to logits, not common, but works
        net[-1].weight = net[0].weight
        nn.init.normal_(net[0].weight, std=0.02)
        return net

    # autoregressive_wrapper.py
    def exists(val):
        return val is not None

    def eval_decorator(fn):
        def inner(model, *args, **kwargs):
            was_training = model.training
            model.eval()
            out = fn(model, *args, **kwargs)
            model.train(was_training)
            return out
        return inner

    def top_k(logits, thres=0.9):
        k = int((1 - thres) * logits.shape[-1])
        val, ind = torch.topk(logits, k)
        probs = torch.full_like(logits, float("-inf"))
        probs.scatter_(1, ind, val)
        return probs

    class AutoregressiveWrapper(nn.Module):
        def __init__(self, net, max_seq_len=2048, pad_value=0):
            super().__init__()
            self.max_seq_len = max_seq_len
            self.pad_value = pad_value
            self.net = net

        @torch.no_grad()
        @eval_decorator
        def generate(self, start_tokens, seq_len, eos_token=None, temperature=1.0, filter_thres=0.9, **kwargs):
            b, t, device = *start_tokens.shape, start_tokens.device
            out = start_tokens
            for _ in range(seq_len):
                logits = self.net(out, **kwargs)[:, -1, :]
                filtered_logits = top_k(logits, thres=filter_thres)
                probs = F.softmax(filtered_logits / temperature, dim=-1)
                sample = torch.multinomial(probs, 1)
                out = torch.cat((out, sample), dim=-1)
                if exists(eos_token):
                    is_eos_token = out == eos_token
                    if is_eos_token.any(dim=-1).all():
                        # mask out everything after the eos tokens
                        shifted_is_eos_tokens = F.pad(is_eos_token, (1, -1))
                        mask = shifted_is_eos_tokens.float().cumsum(dim=-1) >= 1
                        out = out.masked_fill(mask, self.pad_value)
                        break
            out = out[:, t:]
            return out

        def forward(self, x, **kwargs):
            x_inp, x_labels = x[:, :-1], x[:, 1:]
            logits = self.net(x_inp, **kwargs)
            return F.cross_entropy(rearrange(logits, "b c n -> b n c"), x_labels)

    # train.py
    NUM_BATCHES = 4
    BATCH_SIZE = 2
    GRADIENT_ACCUMULATE_EVERY = 2
    LEARNING_RATE = 2e-3
    VALIDATE_EVERY = 2
    GENERATE_EVERY = 3
    GENERATE_LENGTH = 8
    SEQ_LEN = 24

    def cycle(loader):
        while True:
            for data in loader:
                yield data

    def decode_token(token):
        return str(chr(max(32, token)))

    def decode_tokens(tokens):
        return "".join(list(map(decode_token, tokens)))

    # instantiate GPT-like decoder model
    model = PaLM(num_tokens=256, dim=32, depth=2, dim_head=8, heads=4)
    model = AutoregressiveWrapper(model, max_seq_len=SEQ_LEN)
    if torch.cuda.is_available():
        model.cuda()

    # prepare enwik8 data
    X = np.frombuffer(ENWIK, dtype=np.uint8).copy()
    trX, vaX = np.split(X, [int(len(X) * 0.8)])
    data_train, data_val = torch.from_numpy(trX), torch.from_numpy(vaX)

    class TextSamplerDataset(Dataset):
        def __init__(self, data, seq_len):
            super().__init__()
            self.data = data
            self.seq_len = seq_len

        def __getitem__(self, index):
            rand_start = torch.randint(0, self.data.size(0) - self.seq_len, (1,))
            full_seq = self.data[rand_start: rand_start + self.seq_len + 1].long()
            return full_seq.cuda() if torch.cuda.is_available() else full_seq

        def __len__(self):
            return self.data.size(0) // self.seq_len

    train_dataset = TextSamplerDataset(data_train, SEQ_LEN)
    val_dataset = TextSamplerDataset(data_val, SEQ_LEN)
    train_loader = cycle(DataLoader(train_dataset, batch_size=BATCH_SIZE))
    val_loader = cycle(DataLoader(val_dataset, batch_size=BATCH_SIZE))

    # optimizer
    optim = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    losses, samples = [], []
    for i in range(NUM_BATCHES):
        model.train()
        for __ in range(GRADIENT_ACCUMULATE_EVERY):
            loss = model(next(train_loader))
            loss.backward()
        print(f"training loss: {loss.item()}")
        losses.append(loss.item())
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optim.step()
        optim.zero_grad()
        if i % VALIDATE_EVERY == 0:
            model.eval()
            with torch.no_grad():
                loss = model(next(val_loader))
                print(f"validation loss: {loss.item()}")
        if i % GENERATE_EVERY == 0:
            model.eval()
            inp = random.choice(val_dataset)[:-1]
            prime = decode_tokens(inp)
            print("%s \n\n %s", (prime, "*" * 100))
            sample = model.generate(inp[None, ...], GENERATE_LENGTH)
            output_str = decode_tokens(sample[0])
            print(output_str, "\n")
            samples.append(sample.tolist())
    return {"printed": Printed("\n".join(printed).splitlines()), "losses": losses, "samples": samples,
            "state": {k: numpy_of(v) for k, v in model.state_dict().items()}}


def test_palm_train():
    compare_program(palm_train, rtol=1e-3, atol=1e-4)

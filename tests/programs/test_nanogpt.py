"""A nanoGPT-style model and training loop: a GPTConfig dataclass, causal attention through
F.scaled_dot_product_attention(is_causal=True) when hasattr(F, ...) says it exists, weight tying
of wte and lm_head, scaled init of c_proj weights, get_num_params, configure_optimizers splitting
decay/no-decay parameters by dim with `fused` looked up in inspect.signature(AdamW).parameters,
a get_lr warmup+cosine schedule written into param_groups, gradient accumulation, clip_grad_norm_,
estimate_loss under @torch.no_grad(), torch.autocast(device_type="cpu", dtype=bfloat16) through a
nullcontext/autocast switch, and generate() with top-k and torch.multinomial."""
import inspect
import math
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pytest

import minitorch
from prog_helpers import compare_program, numpy_of, start_from

TEXT = "to be or not to be that is the question whether tis nobler in the mind to suffer " * 6
CHARS = sorted(set(TEXT))


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = len(CHARS)
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = False



def generate(torch, model, idx, max_new_tokens, temperature=1.0, top_k=None):
    """nanoGPT's GPT.generate (llm.c's train_gpt2.py carries it unchanged): top-k sampling of
    max_new_tokens tokens, each from the logits of the last position of a block_size window."""
    F = torch.nn.functional
    with torch.no_grad():
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= model.config.block_size else idx[:, -model.config.block_size:]
            logits, _ = model(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
    return idx

def nanogpt(torch, init=None, max_iters=6, batch_size=4, grad_accum=2, dtype="float32", compile=False):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(1337)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device = "cuda" if torch.cuda.is_available() and False else "cpu"
    device_type = "cuda" if "cuda" in device else "cpu"
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    ctx = nullcontext() if dtype == "float32" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

    class LayerNorm(nn.Module):
        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(ndim))
            self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

        def forward(self, input):
            return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
            self.attn_dropout = nn.Dropout(config.dropout)
            self.resid_dropout = nn.Dropout(config.dropout)
            self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout
            self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")
            if not self.flash:
                self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                     .view(1, 1, config.block_size, config.block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            if self.flash:
                y = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                y = self.attn_dropout(F.softmax(att, dim=-1)) @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
            self.dropout = nn.Dropout(config.dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
            self.mlp = MLP(config)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=LayerNorm(config.n_embd, bias=config.bias),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        def get_num_params(self, non_embedding=True):
            n_params = sum(p.numel() for p in self.parameters())
            if non_embedding:
                n_params -= self.transformer.wpe.weight.numel()
            return n_params

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            assert t <= self.config.block_size, f"Cannot forward sequence of length {t}"
            pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is not None:
                logits = self.lm_head(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            else:
                logits = self.lm_head(x[:, [-1], :])
                loss = None
            return logits, loss

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            param_dict = {pn: p for pn, p in self.named_parameters()}
            param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
            optim_groups = [
                {"params": decay_params, "weight_decay": weight_decay},
                {"params": nodecay_params, "weight_decay": 0.0},
            ]
            num_decay_params = sum(p.numel() for p in decay_params)
            num_nodecay_params = sum(p.numel() for p in nodecay_params)
            fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
            use_fused = fused_available and device_type == "cuda"
            extra_args = dict(fused=True) if use_fused else dict()
            optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
            return optimizer, (num_decay_params, num_nodecay_params, fused_available)

        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            return generate(torch, self, idx, max_new_tokens, temperature, top_k)

    config = GPTConfig()
    model = GPT(config)
    result = {"num_params": model.get_num_params()}
    start_from(torch, model, init, result)
    if compile:
        model = torch.compile(model)
    optimizer, counts = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), device_type)
    result["counts"] = np.array(counts)
    data = np.array([CHARS.index(c) for c in TEXT], dtype=np.uint16)
    rng = np.random.default_rng(0)

    def get_batch():
        ix = torch.from_numpy(rng.integers(0, len(data) - config.block_size, batch_size))
        x = torch.stack([torch.from_numpy((data[i:i + config.block_size]).astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + config.block_size]).astype(np.int64)) for i in ix])
        return x, y

    def get_lr(it, warmup_iters=2, lr_decay_iters=6, learning_rate=1e-3, min_lr=1e-4):
        if it < warmup_iters:
            return learning_rate * (it + 1) / (warmup_iters + 1)
        if it > lr_decay_iters:
            return min_lr
        decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return min_lr + coeff * (learning_rate - min_lr)

    @torch.no_grad()
    def estimate_loss(eval_iters=2):
        model.eval()
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch()
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        model.train()
        return losses.mean()

    scaler_enabled = dtype == "float16"
    losses, norms = [], []
    X, Y = get_batch()
    for iter_num in range(max_iters):
        lr = get_lr(iter_num)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        for micro_step in range(grad_accum):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / grad_accum
            X, Y = get_batch()
            loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item() * grad_accum)
    result.update(losses=losses, norms=norms, val=estimate_loss().item(), scaler_enabled=scaler_enabled,
                  state={k: numpy_of(v.float()) for k, v in model.state_dict().items()})
    start = torch.zeros((1, 1), dtype=torch.long)
    torch.manual_seed(0)
    out = model.generate(start, 30, temperature=0.8, top_k=5)
    logits, _ = model(out[:, -config.block_size:])
    v, _ = torch.topk(logits[:, -1, :], 5)
    result["own"] = {"sample": numpy_of(out)}
    result["top5"] = numpy_of(v)
    return result


@pytest.fixture(autouse=True)
def tf32_flags_restored():
    """The program turns TF32 on for the whole process, as nanoGPT does: both libraries' flags
    are put back afterwards (later tests read their defaults)."""
    torch = pytest.importorskip("torch")
    saved = [(lib, lib.get_float32_matmul_precision(), lib.backends.cudnn.allow_tf32) for lib in (torch, minitorch)]
    yield
    for lib, precision, cudnn_tf32 in saved:
        lib.set_float32_matmul_precision(precision)
        lib.backends.cudnn.allow_tf32 = cudnn_tf32


def test_nanogpt_sdpa_fused_check_and_generation():
    ref, got = compare_program(nanogpt)
    assert ref["losses"][-1] < ref["losses"][0]
    sample = got["own"]["sample"]
    assert sample.shape == (1, 31) and sample.dtype == np.int64
    assert ((sample >= 0) & (sample < len(CHARS))).all()


def test_nanogpt_bfloat16_autocast():
    # Both autocast the region's linears and sdpa to bfloat16 and the loss to float32; the runs
    # agree to 1e-3 after 3 steps (3e-4 fails on 5 of 3072 c_attn weights: sums of bfloat16
    # products in another order), where 3e-2 was needed while minitorch cast nothing.
    ref, got = compare_program(nanogpt, dtype="bfloat16", max_iters=3, rtol=1e-3, atol=1e-3)
    assert ref["losses"][-1] < ref["losses"][0]


def test_nanogpt_compiled():
    compare_program(nanogpt, compile=True, max_iters=2)

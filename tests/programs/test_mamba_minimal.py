"""johnma2006/mamba-minimal's model.py and the generate() of its demo notebook, at a tiny size with
random weights in place of from_pretrained: a ModelArgs dataclass whose __post_init__ pads the
vocabulary and sets dt_rank, weight tying (lm_head.weight = embedding.weight), the MambaBlock's
in_proj split by x_and_res.split(split_size=[d_inner, d_inner], dim=1) after
rearrange('b l x -> b x l'), a depthwise causal nn.Conv1d (groups=d_inner, padding=d_conv - 1)
cut to [:, :, :l], A_log from repeat(torch.arange(1, n + 1), 'n -> d n'), F.softplus on dt_proj,
the selective scan through einops.einsum (two and three operands) and a Python loop over time
that stacks the outputs, RMSNorm by torch.rsqrt; then a few training steps (cross entropy, AdamW)
and the notebook's greedy and top-k generation (topk, probs[probs < values[:, -1, None]] = 0,
probs.sum(axis=1, keepdims=True), multinomial)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

import numpy as np
import pytest

from prog_helpers import compare_program, fit, numpy_of, start_from

einops = pytest.importorskip("einops")


@dataclass
class ModelArgs:
    d_model: int
    n_layer: int
    vocab_size: int
    d_state: int = 16
    expand: int = 2
    dt_rank: Union[int, str] = 'auto'
    d_conv: int = 4
    pad_vocab_size_multiple: int = 8
    conv_bias: bool = True
    bias: bool = False

    def __post_init__(self):
        self.d_inner = int(self.expand * self.d_model)

        if self.dt_rank == 'auto':
            self.dt_rank = math.ceil(self.d_model / 16)

        if self.vocab_size % self.pad_vocab_size_multiple != 0:
            self.vocab_size += (self.pad_vocab_size_multiple
                                - self.vocab_size % self.pad_vocab_size_multiple)


def mamba_module(torch):
    """model.py as published (from_pretrained left out: it downloads), for the library `torch`."""
    from einops import einsum, rearrange, repeat

    nn, F = torch.nn, torch.nn.functional

    class Mamba(nn.Module):
        def __init__(self, args: ModelArgs):
            """Full Mamba model."""
            super().__init__()
            self.args = args

            self.embedding = nn.Embedding(args.vocab_size, args.d_model)
            self.layers = nn.ModuleList([ResidualBlock(args) for _ in range(args.n_layer)])
            self.norm_f = RMSNorm(args.d_model)

            self.lm_head = nn.Linear(args.d_model, args.vocab_size, bias=False)
            self.lm_head.weight = self.embedding.weight  # Tie output projection to embedding weights.

        def forward(self, input_ids):
            x = self.embedding(input_ids)

            for layer in self.layers:
                x = layer(x)

            x = self.norm_f(x)
            logits = self.lm_head(x)

            return logits

    class ResidualBlock(nn.Module):
        def __init__(self, args: ModelArgs):
            """Simple block wrapping Mamba block with normalization and residual connection."""
            super().__init__()
            self.args = args
            self.mixer = MambaBlock(args)
            self.norm = RMSNorm(args.d_model)

        def forward(self, x):
            output = self.mixer(self.norm(x)) + x

            return output

    class MambaBlock(nn.Module):
        def __init__(self, args: ModelArgs):
            """A single Mamba block, as described in Figure 3 in Section 3.4 in the Mamba paper [1]."""
            super().__init__()
            self.args = args

            self.in_proj = nn.Linear(args.d_model, args.d_inner * 2, bias=args.bias)

            self.conv1d = nn.Conv1d(
                in_channels=args.d_inner,
                out_channels=args.d_inner,
                bias=args.conv_bias,
                kernel_size=args.d_conv,
                groups=args.d_inner,
                padding=args.d_conv - 1,
            )

            # x_proj takes in `x` and outputs the input-specific Δ, B, C
            self.x_proj = nn.Linear(args.d_inner, args.dt_rank + args.d_state * 2, bias=False)

            # dt_proj projects Δ from dt_rank to d_in
            self.dt_proj = nn.Linear(args.dt_rank, args.d_inner, bias=True)

            A = repeat(torch.arange(1, args.d_state + 1), 'n -> d n', d=args.d_inner)
            self.A_log = nn.Parameter(torch.log(A))
            self.D = nn.Parameter(torch.ones(args.d_inner))
            self.out_proj = nn.Linear(args.d_inner, args.d_model, bias=args.bias)

        def forward(self, x):
            (b, l, d) = x.shape

            x_and_res = self.in_proj(x)  # shape (b, l, 2 * d_in)
            x_and_res = rearrange(x_and_res, 'b l x -> b x l')
            (x, res) = x_and_res.split(split_size=[self.args.d_inner, self.args.d_inner], dim=1)

            x = self.conv1d(x)[:, :, :l]
            x = F.silu(x)

            y = self.ssm(x)

            y = y * F.silu(res)

            output = self.out_proj(rearrange(y, 'b d_model l -> b l d_model'))

            return output

        def ssm(self, x):
            (d_in, n) = self.A_log.shape

            A = -torch.exp(self.A_log.float())  # shape (d_in, n)
            D = self.D.float()

            x_dbl = rearrange(x, 'b d l -> b l d')
            x_dbl = self.x_proj(x_dbl)  # (b, l, dt_rank + 2*n)

            (delta, B, C) = x_dbl.split(split_size=[self.args.dt_rank, n, n], dim=-1)  # delta: (b, l, dt_rank). B, C: (b, l, n)
            delta = F.softplus(self.dt_proj(delta))  # (b, l, d_in)

            y = self.selective_scan(x, delta, A, B, C, D)  # This is similar to run_SSM(A, B, C, u) in The Annotated S4 [2]

            return y

        def selective_scan(self, u, delta, A, B, C, D):
            (b, d_in, l) = u.shape
            n = A.shape[1]

            # Discretize continuous parameters (Δ, A, B) using zero-order hold (ZOH) discretization
            deltaA = torch.exp(einsum(delta, A, 'b l d_in, d_in n -> b d_in l n'))
            deltaB_u = einsum(delta, B, u, 'b l d_in, b l n, b d_in l -> b d_in l n')

            # Perform selective scan (see scan_SSM() in The Annotated S4 [2])
            x = torch.zeros((b, d_in, n))
            ys = []
            for i in range(l):
                x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
                y = einsum(x, C[:, i, :], 'b d_in n, b n -> b d_in')
                ys.append(y)
            y = torch.stack(ys, dim=2)  # (b d_in l)

            if D is not None:
                y = y + u * rearrange(D, 'd_in -> d_in 1')

            return y

    class RMSNorm(nn.Module):
        def __init__(self,
                     d_model: int,
                     eps: float = 1e-5):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(d_model))

        def forward(self, x):
            output = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

            return output

    return Mamba


def generate(torch, model, input_ids, n_tokens_to_gen: int = 8, sample: bool = True, top_k: int = 5):
    """demo.ipynb's generate(), token ids in and out in place of the tokenizer."""
    F = torch.nn.functional
    model.eval()

    for token_n in range(n_tokens_to_gen):
        with torch.no_grad():
            indices_to_input = input_ids
            next_token_logits = model(indices_to_input)[:, -1]

        probs = F.softmax(next_token_logits, dim=-1)
        (batch, vocab_size) = probs.shape

        if top_k is not None:
            (values, indices) = torch.topk(probs, k=top_k)
            probs[probs < values[:, -1, None]] = 0
            probs = probs / probs.sum(axis=1, keepdims=True)

        if sample:
            next_indices = torch.multinomial(probs, num_samples=1)
        else:
            next_indices = torch.argmax(probs, dim=-1)[:, None]

        input_ids = torch.cat([input_ids, next_indices], dim=1)

    return input_ids


def mamba_program(torch, init=None, steps=3):
    Mamba = mamba_module(torch)
    F = torch.nn.functional
    torch.manual_seed(0)
    args = ModelArgs(d_model=16, n_layer=2, vocab_size=37, d_state=4)
    model = Mamba(args)
    result = {"vocab": args.vocab_size, "dt_rank": args.dt_rank,
              "nparams": sum(p.numel() for p in model.parameters()),
              "keys": sorted(model.state_dict().keys())}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(0)
    data = torch.from_numpy(rng.integers(0, 37, (3, 11)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)

    def loss_fn():
        logits = model(data[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), data[:, 1:].reshape(-1))

    result["losses"] = fit(optimizer, loss_fn, steps)
    result["grads"] = {n: numpy_of(p.grad) for n, p in model.named_parameters()}
    result["greedy"] = numpy_of(generate(torch, model, torch.tensor([[1, 2, 3], [4, 5, 6]]), sample=False))
    torch.manual_seed(1)
    sampled = generate(torch, model, torch.tensor([[7]]), sample=True)
    result["own"] = {"sampled": numpy_of(sampled)}
    assert sampled.shape == (1, 9) and int(sampled.max()) < args.vocab_size
    result["state"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return result


def test_mamba_minimal():
    compare_program(mamba_program)

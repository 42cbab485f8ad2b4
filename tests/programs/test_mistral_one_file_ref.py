"""mistralai's one_file_ref.py (mistral-src, the reference Mistral 7B implementation) on a tiny
random checkpoint: Transformer.from_folder reads params.json into the ModelArgs dataclass, sets
torch.set_default_tensor_type(torch.BFloat16Tensor) as it does on a CPU (so every parameter, the
rotating kv cache made by torch.empty and the activations are bfloat16), loads consolidated.00.pth
(written by PyTorch in bfloat16) with load_state_dict; rotary embeddings through torch.polar over
128_000 positions, view_as_complex / view_as_real and type_as, GQA by torch.repeat_interleave, the
rotating cache written by cache_k[:bsz].scatter_(dim=1, index=positions % sliding_window), the
banded causal mask log(triu(tril(full(..., 1)), diagonal=-sliding_window)), scores += mask[None,
None, ...]; generate() pre-fills the shortest prompt, then decodes one token at a time through the
cache past the sliding window, teacher-forcing the longer prompts (torch.where on input_mask), and
gathers the log-probabilities. A SentencePiece tokenizer is replaced by token ids (bos 1, pad -1 as
Mistral's tokenizer has them)."""
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of


@dataclass
class ModelArgs:
    dim: int
    n_layers: int
    head_dim: int
    hidden_dim: int
    n_heads: int
    n_kv_heads: int
    sliding_window: int
    norm_eps: float
    vocab_size: int

    max_batch_size: int = 0


PARAMS = dict(dim=32, n_layers=2, head_dim=8, hidden_dim=64, n_heads=4, n_kv_heads=2, sliding_window=8,
              norm_eps=1e-5, vocab_size=48)


def mistral_module(torch):
    """one_file_ref.py as published (fire and sentencepiece left out), for the library `torch`."""
    nn = torch.nn

    def repeat_kv(keys, values, repeats: int):
        keys = torch.repeat_interleave(keys, repeats=repeats, dim=2)
        values = torch.repeat_interleave(values, repeats=repeats, dim=2)
        return keys, values

    def _reshape_for_broadcast(freqs_cis, x):
        """
        freqs_cis: complex - (seq_len, head_dim / 2)
        x: complex - (bsz, seq_len, head_dim / 2)
        """
        ndim = x.ndim
        assert 1 < ndim
        assert freqs_cis.shape == (x.shape[1], x.shape[-1]), (
            freqs_cis.shape,
            (x.shape[1], x.shape[-1]),
        )
        shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
        return freqs_cis.view(*shape)

    def apply_rotary_emb(xq, xk, freqs_cis) -> Tuple:
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        freqs_cis = _reshape_for_broadcast(freqs_cis, xq_)
        xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)

    class Attention(nn.Module):
        def __init__(self, args: ModelArgs):
            super().__init__()
            self.args = args

            self.n_heads: int = args.n_heads
            self.n_kv_heads: int = args.n_kv_heads

            self.repeats = self.n_heads // self.n_kv_heads
            self.sliding_window = self.args.sliding_window

            self.scale = self.args.head_dim**-0.5

            self.wq = nn.Linear(args.dim, args.n_heads * args.head_dim, bias=False)
            self.wk = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
            self.wv = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
            self.wo = nn.Linear(args.n_heads * args.head_dim, args.dim, bias=False)
            self.cache_k = torch.empty(
                (
                    args.max_batch_size,
                    args.sliding_window,
                    self.n_kv_heads,
                    self.args.head_dim,
                )
            )
            self.cache_v = torch.empty(
                (
                    args.max_batch_size,
                    args.sliding_window,
                    self.n_kv_heads,
                    self.args.head_dim,
                )
            )

        def forward(self, x, freqs_cis, positions, mask: Optional = None):

            bsz, seqlen, _ = x.shape

            xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
            xq = xq.view(bsz, seqlen, self.n_heads, self.args.head_dim)
            xk = xk.view(bsz, seqlen, self.n_kv_heads, self.args.head_dim)
            xv = xv.view(bsz, seqlen, self.n_kv_heads, self.args.head_dim)
            xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)

            # The cache is a rotating buffer
            scatter_pos = (positions[-self.sliding_window:] % self.sliding_window)[None, :, None, None]
            scatter_pos = scatter_pos.repeat(bsz, 1, self.n_kv_heads, self.args.head_dim)
            self.cache_k[:bsz].scatter_(dim=1, index=scatter_pos, src=xk[:, -self.sliding_window:])
            self.cache_v[:bsz].scatter_(dim=1, index=scatter_pos, src=xv[:, -self.sliding_window:])

            if positions.shape[0] > 1:
                # prefill
                key, value = repeat_kv(xk, xv, self.repeats)
            else:
                cur_pos = positions[-1].item() + 1
                key, value = repeat_kv(self.cache_k[:bsz, :cur_pos, ...], self.cache_v[:bsz, :cur_pos, ...], self.repeats)

            query = xq.transpose(1, 2)
            key = key.transpose(1, 2)
            value = value.transpose(1, 2)
            # scores : [bsz, n_heads, seqlen | 1, seqlen]
            scores = torch.matmul(query, key.transpose(2, 3)) * self.scale

            if mask is not None:
                scores += mask[None, None, ...]

            scores = scores.float()
            scores = nn.functional.softmax(scores, dim=-1).type_as(query)
            output = torch.matmul(scores, value)  # (bs, n_local_heads, slen, head_dim)
            output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
            return self.wo(output)

    class FeedForward(nn.Module):
        def __init__(self, args: ModelArgs):
            super().__init__()

            self.w1 = nn.Linear(args.dim, args.hidden_dim, bias=False)
            self.w2 = nn.Linear(args.hidden_dim, args.dim, bias=False)
            self.w3 = nn.Linear(args.dim, args.hidden_dim, bias=False)

        def forward(self, x):
            return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))

    class RMSNorm(torch.nn.Module):
        def __init__(self, dim: int, eps: float = 1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def _norm(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

        def forward(self, x):
            output = self._norm(x.float()).type_as(x)
            return output * self.weight

    class TransformerBlock(nn.Module):
        def __init__(self, args: ModelArgs):
            super().__init__()
            self.n_heads = args.n_heads
            self.dim = args.dim
            self.attention = Attention(args)
            self.feed_forward = FeedForward(args=args)
            self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
            self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)
            self.args = args

        def forward(self, x, freqs_cis, positions, mask: Optional = None):
            r = self.attention.forward(self.attention_norm(x), freqs_cis, positions, mask)
            h = x + r
            r = self.feed_forward.forward(self.ffn_norm(h))
            out = h + r
            return out

    def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = torch.arange(end, device=freqs.device)  # type: ignore
        freqs = torch.outer(t, freqs).float()  # type: ignore
        return torch.polar(torch.ones_like(freqs), freqs)  # complex64

    class Transformer(nn.Module):
        def __init__(self, args: ModelArgs):
            super().__init__()
            self.args = args
            self.vocab_size = args.vocab_size
            self.n_layers = args.n_layers
            assert self.vocab_size > 0

            self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)

            self.layers = torch.nn.ModuleList(
                [TransformerBlock(args=args) for _ in range(args.n_layers)]
            )

            self.norm = RMSNorm(args.dim, eps=args.norm_eps)

            self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

            self.freqs_cis = precompute_freqs_cis(self.args.head_dim, 128_000).to(args.device)

        def forward(self, input_ids, positions):
            h = self.tok_embeddings(input_ids)
            freqs_cis = self.freqs_cis[positions]

            mask = None
            if input_ids.shape[1] > 1:
                seqlen = input_ids.shape[1]
                tensor = torch.full(
                    (seqlen, seqlen),
                    dtype=h.dtype,
                    fill_value=1,
                    device=h.device,
                )
                mask = torch.tril(tensor, diagonal=0).to(h.dtype)
                # make the mask banded to account for sliding window
                mask = torch.triu(mask, diagonal=-self.args.sliding_window)
                mask = torch.log(mask)

            for layer in self.layers:
                h = layer(h, freqs_cis, positions, mask)

            return self.output(self.norm(h)).float()

        @staticmethod
        def from_folder(folder: Path, max_batch_size: int = 1, device: str = "cuda"):
            with open(folder / 'params.json', 'r') as f:
                model_args = ModelArgs(**json.loads(f.read()))
            if device == "cuda":
                torch.set_default_tensor_type(torch.cuda.HalfTensor)
            else:
                torch.set_default_tensor_type(torch.BFloat16Tensor)
            model_args.max_batch_size = max_batch_size
            model_args.device = device
            model = Transformer(model_args).to(device=device)
            loaded = torch.load(folder / 'consolidated.00.pth')
            model.load_state_dict(loaded)
            return model

    @torch.no_grad()
    def generate(prompts: List[str], model: Transformer, tokenizer, max_tokens: int):
        device = model.args.device
        encoded_prompts = [tokenizer.encode(prompt) for prompt in prompts]
        prompt_lens = [len(x) for x in encoded_prompts]
        min_prompt_len = min(prompt_lens)
        max_prompt_len = max(prompt_lens)

        input_tokens = torch.full((len(prompts), max_prompt_len), tokenizer.pad_id, dtype=torch.long, device=device)
        for i, encoded in enumerate(encoded_prompts):
            input_tokens[i, :len(encoded)] = torch.tensor(encoded).to(input_tokens)
        input_mask = input_tokens != tokenizer.pad_id

        # pre-fill
        positions = torch.arange(0, min_prompt_len).to(device)
        logits = model.forward(input_tokens[:, :min_prompt_len], positions)
        logprobs = nn.functional.log_softmax(logits, dim=-1)

        # decode
        generated = []
        all_logprobs = [
            logprobs[:, :-1, :].gather(2, input_tokens[:, 1:min_prompt_len, None]).squeeze(-1),
        ]
        cur_pos = min_prompt_len
        for _ in range(max_tokens):
            next_token = torch.argmax(logprobs[:, -1, :], dim=-1)
            if cur_pos < input_mask.shape[1]:
                next_token = torch.where(input_mask[:, cur_pos], input_tokens[:, cur_pos], next_token)
            all_logprobs.append(
                logprobs[:, -1, :].gather(1, next_token[:, None]),
            )
            generated.append(next_token[:, None])
            logits = model.forward(next_token[:, None], torch.LongTensor([cur_pos]).to(next_token))
            logprobs = nn.functional.log_softmax(logits, dim=-1)
            cur_pos += 1

        all_logprobs = torch.cat(all_logprobs, 1)
        res = []
        if max_tokens > 0:
            generated = torch.cat(generated, 1)

            for i, x in enumerate(encoded_prompts):
                res.append(tokenizer.decode(x[:min_prompt_len] + generated[i].tolist()))
        return res, all_logprobs

    return Transformer, generate


class Tokenizer:
    """The ids of a prompt, in place of SentencePieceProcessor: "3 9 4" -> [bos, 3, 9, 4]."""
    bos_id, eos_id, pad_id = 1, 2, -1

    def encode(self, s: str) -> List[int]:
        return [self.bos_id, *map(int, s.split())]

    def decode(self, t: List[int]) -> str:
        return " ".join(map(str, t))


PROMPTS = ["5 9 12", "5 9 12 30 7", "40 3 3 8 19 22 11 6 2 17"]


def mistral_program(torch, init=None, model_path=None, max_tokens=9, device="cpu"):
    Transformer, generate = mistral_module(torch)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "torch.set_default_tensor_type", UserWarning)
            transformer = Transformer.from_folder(Path(model_path), max_batch_size=3, device=device)
        result = {"dtypes": sorted({str(p.dtype).split(".")[-1] for p in transformer.parameters()}),
                  "cache": str(transformer.layers[0].attention.cache_k.dtype).split(".")[-1],
                  "freqs": str(transformer.freqs_cis.dtype).split(".")[-1]}
        res, logprobs = generate(PROMPTS, transformer, Tokenizer(), max_tokens=max_tokens)
        result.update(res=res, logprobs=numpy_of(logprobs), lp_dtype=str(logprobs.dtype).split(".")[-1])
        # the prefill of a full prompt against the cached steps' last logits
        positions = torch.arange(0, 4, device=device)
        tokens = torch.tensor([[1, 5, 9, 12]] * 3, device=device)
        result["prefill"] = numpy_of(transformer.forward(tokens, positions).float())
    finally:
        torch.set_default_dtype(torch.float32)
    return result


def write_folder(folder: Path):
    """params.json and a random consolidated.00.pth in bfloat16, written by PyTorch."""
    torch = pytest.importorskip("torch")
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps(PARAMS))
    rng = np.random.default_rng(0)
    Transformer, _ = mistral_module(torch)
    args = ModelArgs(**PARAMS)
    args.device = "cpu"
    names = Transformer(args).state_dict()
    state = {k: torch.from_numpy((rng.standard_normal(v.shape) * (0.1 if v.ndim == 1 else 0.25)
                                  + (1.0 if v.ndim == 1 else 0.0)).astype(np.float32)).bfloat16()
             for k, v in names.items()}
    torch.save(state, folder / "consolidated.00.pth")


def test_mistral_one_file_ref_bfloat16(tmp_path):
    write_folder(tmp_path / "mistral-tiny")
    # bfloat16 activations: both libraries compute each op in float32 and round once (here they
    # agree to 5e-7), but a float32 sum in another order may round to the neighbouring bfloat16
    ref, got = compare_program(mistral_program, rtol=1e-3, atol=1e-3, model_path=tmp_path / "mistral-tiny")
    assert ref["dtypes"] == ["bfloat16"] and ref["cache"] == "bfloat16"

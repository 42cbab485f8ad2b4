"""karpathy/nano-llama31's llama31.py (Llama 3.1 inference in one file) on a tiny random checkpoint:
Llama.build reads params.json into ModelArgs (its own __init__ over **kwargs), torch.load(ckpt,
map_location="cpu", weights_only=True) of a PyTorch-written consolidated.00.pth, the default tensor
type switched to bfloat16 before the Transformer is built, load_state_dict(strict=False); Llama 3.1's
scaled rope (apply_scaling loops over the frequencies tensor in Python and rebuilds it with
torch.tensor(list of 0-d tensors)), the kv cache written by slice assignment
(cache_k[:bsz, start_pos:start_pos + seqlen] = xk) after cache_k.to(xq), repeat_kv by expand and
reshape, the cached-prefix mask by torch.hstack, @torch.inference_mode() forward and generate,
teacher-forced prompts (torch.where on input_text_mask), per-token logprobs by
-F.cross_entropy(logits.transpose(1, 2), reduction="none", ignore_index=pad_id), stop tokens by
torch.isin, eos_reached |= ~mask & ..., all(eos_reached) over a tensor, and sample_top_p (sort,
cumsum, probs_sort[mask] = 0.0, multinomial, gather). The script's "cuda" is "cpu" here (PyTorch's
build in the tests has no CUDA) and the tiktoken tokenizer is ids."""
import json
import math
import os
import time
import warnings
from pathlib import Path
from typing import List, Optional, Tuple, TypedDict

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of

PARAMS = dict(dim=32, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=64, multiple_of=16, ffn_dim_multiplier=1.3,
              norm_eps=1e-5, rope_theta=500000.0, use_scaled_rope=True)


class Tokenizer:
    """The ids of llama31.py's Tokenizer for a 64-word vocabulary (tiktoken left out)."""
    n_words, bos_id, eos_id, pad_id = 64, 60, 61, 62
    stop_tokens = [61, 63]

    def __init__(self, model_path=None):
        pass

    def encode(self, s: str, *, bos: bool, eos: bool) -> List[int]:
        return ([self.bos_id] if bos else []) + [int(t) for t in s.split()] + ([self.eos_id] if eos else [])

    def decode(self, t) -> str:
        return " ".join(map(str, t))


def llama31_module(torch, DEVICE="cpu"):
    """llama31.py as published (Tokenizer and fire left out), for the library `torch`; DEVICE is
    the script's "cuda"."""
    nn, F = torch.nn, torch.nn.functional

    class ModelArgs:
        dim: int = 4096
        n_layers: int = 32
        n_heads: int = 32
        n_kv_heads: Optional[int] = None
        vocab_size: int = -1
        multiple_of: int = 256  # make SwiGLU hidden layer size multiple of large power of 2
        ffn_dim_multiplier: Optional[float] = None
        norm_eps: float = 1e-5
        rope_theta: float = 500000
        use_scaled_rope: bool = False
        max_batch_size: int = 32
        max_seq_len: int = 2048

        def __init__(self, **kwargs):
            for k, v in kwargs.items():
                if hasattr(self, k):
                    setattr(self, k, v)
            if self.n_kv_heads is None:
                self.n_kv_heads = self.n_heads
            assert self.n_kv_heads <= self.n_heads
            assert self.n_heads % self.n_kv_heads == 0
            assert self.dim % self.n_heads == 0

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

    def apply_scaling(freqs):
        # Values obtained from grid search
        scale_factor = 8
        low_freq_factor = 1
        high_freq_factor = 4
        old_context_len = 8192  # original llama3 length

        low_freq_wavelen = old_context_len / low_freq_factor
        high_freq_wavelen = old_context_len / high_freq_factor
        new_freqs = []
        for freq in freqs:
            wavelen = 2 * math.pi / freq
            if wavelen < high_freq_wavelen:
                new_freqs.append(freq)
            elif wavelen > low_freq_wavelen:
                new_freqs.append(freq / scale_factor)
            else:
                assert low_freq_wavelen != high_freq_wavelen
                smooth = (old_context_len / wavelen - low_freq_factor) / (
                    high_freq_factor - low_freq_factor
                )
                new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
        return torch.tensor(new_freqs, dtype=freqs.dtype, device=freqs.device)

    def precompute_freqs_cis(
        dim: int, end: int, theta: float = 10000.0, use_scaled: bool = False
    ):
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = torch.arange(end, device=freqs.device, dtype=torch.float32)
        if use_scaled:
            freqs = apply_scaling(freqs)
        freqs = torch.outer(t, freqs)
        freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
        return freqs_cis

    def reshape_for_broadcast(freqs_cis, x):
        ndim = x.ndim
        assert 0 <= 1 < ndim
        assert freqs_cis.shape == (x.shape[1], x.shape[-1])
        shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
        return freqs_cis.view(*shape)

    def apply_rotary_emb(xq, xk, freqs_cis) -> Tuple:
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
        xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)

    def repeat_kv(x, n_rep: int):
        """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
        bs, slen, n_kv_heads, head_dim = x.shape
        if n_rep == 1:
            return x
        return (
            x[:, :, :, None, :]
            .expand(bs, slen, n_kv_heads, n_rep, head_dim)
            .reshape(bs, slen, n_kv_heads * n_rep, head_dim)
        )

    class Attention(nn.Module):
        def __init__(self, args: ModelArgs):
            super().__init__()
            self.n_kv_heads = args.n_heads if args.n_kv_heads is None else args.n_kv_heads
            # model_parallel_size = fs_init.get_model_parallel_world_size()
            model_parallel_size = 1 # AK: model parallel size is 1 for 1 GPU
            self.n_local_heads = args.n_heads // model_parallel_size
            self.n_local_kv_heads = self.n_kv_heads // model_parallel_size
            self.n_rep = self.n_local_heads // self.n_local_kv_heads
            self.head_dim = args.dim // args.n_heads

            self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False )
            self.wk = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
            self.wv = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
            self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)

            self.cache_k = torch.zeros(
                (
                    args.max_batch_size,
                    args.max_seq_len,
                    self.n_local_kv_heads,
                    self.head_dim,
                )
            ).to(DEVICE)
            self.cache_v = torch.zeros(
                (
                    args.max_batch_size,
                    args.max_seq_len,
                    self.n_local_kv_heads,
                    self.head_dim,
                )
            ).to(DEVICE)

        def forward(self, x, start_pos: int, freqs_cis, mask):
            bsz, seqlen, _ = x.shape
            xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)

            xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
            xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
            xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

            xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)

            self.cache_k = self.cache_k.to(xq)
            self.cache_v = self.cache_v.to(xq)

            self.cache_k[:bsz, start_pos : start_pos + seqlen] = xk
            self.cache_v[:bsz, start_pos : start_pos + seqlen] = xv

            keys = self.cache_k[:bsz, : start_pos + seqlen]
            values = self.cache_v[:bsz, : start_pos + seqlen]

            # repeat k/v heads if n_kv_heads < n_heads
            keys = repeat_kv(keys, self.n_rep)  # (bs, cache_len + seqlen, n_local_heads, head_dim)
            values = repeat_kv(values, self.n_rep)  # (bs, cache_len + seqlen, n_local_heads, head_dim)

            xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
            keys = keys.transpose(1, 2)  # (bs, n_local_heads, cache_len + seqlen, head_dim)
            values = values.transpose(
                1, 2
            )  # (bs, n_local_heads, cache_len + seqlen, head_dim)
            scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
            if mask is not None:
                scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
            scores = F.softmax(scores.float(), dim=-1).type_as(xq)
            output = torch.matmul(scores, values)  # (bs, n_local_heads, seqlen, head_dim)
            output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
            return self.wo(output)

    class FeedForward(nn.Module):
        def __init__(
            self,
            dim: int,
            hidden_dim: int,
            multiple_of: int,
            ffn_dim_multiplier: Optional[float],
        ):
            super().__init__()
            hidden_dim = int(2 * hidden_dim / 3)
            # custom dim factor multiplier
            if ffn_dim_multiplier is not None:
                hidden_dim = int(ffn_dim_multiplier * hidden_dim)
            hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
            self.w1 = nn.Linear(dim, hidden_dim, bias=False)
            self.w2 = nn.Linear(hidden_dim, dim, bias=False)
            self.w3 = nn.Linear(dim, hidden_dim, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class TransformerBlock(nn.Module):
        def __init__(self, layer_id: int, args: ModelArgs):
            super().__init__()
            self.n_heads = args.n_heads
            self.dim = args.dim
            self.head_dim = args.dim // args.n_heads
            self.attention = Attention(args)
            self.feed_forward = FeedForward(
                dim=args.dim,
                hidden_dim=4 * args.dim,
                multiple_of=args.multiple_of,
                ffn_dim_multiplier=args.ffn_dim_multiplier,
            )
            self.layer_id = layer_id
            self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
            self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)

        def forward(self, x, start_pos: int, freqs_cis, mask):
            h = x + self.attention(self.attention_norm(x), start_pos, freqs_cis, mask)
            out = h + self.feed_forward(self.ffn_norm(h))
            return out

    class Transformer(nn.Module):
        def __init__(self, params: ModelArgs):
            super().__init__()
            self.params = params
            self.vocab_size = params.vocab_size
            self.n_layers = params.n_layers

            self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)

            self.layers = torch.nn.ModuleList()
            for layer_id in range(params.n_layers):
                self.layers.append(TransformerBlock(layer_id, params))

            self.norm = RMSNorm(params.dim, eps=params.norm_eps)
            self.output = nn.Linear(params.dim, params.vocab_size, bias=False)

            self.freqs_cis = precompute_freqs_cis(
                params.dim // params.n_heads,
                params.max_seq_len * 2,
                params.rope_theta,
                params.use_scaled_rope,
            )

        @torch.inference_mode()
        def forward(self, tokens, start_pos: int):
            _bsz, seqlen = tokens.shape
            h = self.tok_embeddings(tokens)
            self.freqs_cis = self.freqs_cis.to(h.device)
            freqs_cis = self.freqs_cis[start_pos : start_pos + seqlen]

            mask = None
            if seqlen > 1:
                mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device)
                mask = torch.triu(mask, diagonal=1)
                # When performing key-value caching, we compute the attention scores
                # only for the new sequence. Thus, the matrix of scores is of size
                # (seqlen, cache_len + seqlen), and the only masked entries are (i, j) for
                # j > cache_len + i, since row i corresponds to token cache_len + i.
                mask = torch.hstack(
                    [torch.zeros((seqlen, start_pos), device=tokens.device), mask]
                ).type_as(h)

            for layer in self.layers:
                h = layer(h, start_pos, freqs_cis, mask)
            h = self.norm(h)
            output = self.output(h).float()
            return output

    class CompletionPrediction(TypedDict, total=False):
        generation: str
        tokens: List[str]  # not required
        logprobs: List[float]  # not required

    class Llama:

        @staticmethod
        def build(
            ckpt_dir: str,
            tokenizer_path: str,
            max_seq_len: int,
            max_batch_size: int,
            model_parallel_size: Optional[int] = 1, # AK: changed None -> 1
            seed: int = 1,
        ) -> "Llama":
            assert 1 <= max_seq_len <= 8192, f"max_seq_len must be between 1 and 8192, got {max_seq_len}."
            assert os.path.isdir(ckpt_dir), f"Checkpoint directory '{ckpt_dir}' does not exist."

            # seed must be the same in all processes
            torch.manual_seed(seed)

            start_time = time.time()
            checkpoints = sorted(Path(ckpt_dir).glob("*.pth"))
            assert len(checkpoints) > 0, f"no checkpoint files found in {ckpt_dir}"
            assert model_parallel_size == len(
                checkpoints
            ), f"Loading a checkpoint for MP={len(checkpoints)} but world size is {model_parallel_size}"
            ckpt_path = checkpoints[0]
            # AK: added weights_only=True because I was getting warning
            checkpoint = torch.load(ckpt_path, map_location="cpu", weights_only=True)
            with open(Path(ckpt_dir) / "params.json", "r") as f:
                params = json.loads(f.read())

            model_args: ModelArgs = ModelArgs(
                max_seq_len=max_seq_len,
                max_batch_size=max_batch_size,
                **params,
            )
            tokenizer = Tokenizer(model_path=tokenizer_path)
            assert model_args.vocab_size == tokenizer.n_words
            if DEVICE != "cuda":
                torch.set_default_tensor_type(torch.BFloat16Tensor)  # the script's choice, on a CPU
            elif torch.cuda.is_bf16_supported():
                torch.set_default_tensor_type(torch.cuda.BFloat16Tensor)
            else:
                torch.set_default_tensor_type(torch.cuda.HalfTensor)
            model = Transformer(model_args)
            model.load_state_dict(checkpoint, strict=False)
            return Llama(model, tokenizer)

        def __init__(self, model: Transformer, tokenizer: Tokenizer):
            self.model = model
            self.tokenizer = tokenizer

        @torch.inference_mode()
        def generate(
            self,
            prompt_tokens: List[List[int]],
            max_gen_len: int,
            temperature: float = 0.6,
            top_p: float = 0.9,
            logprobs: bool = False,
            echo: bool = False,
        ) -> Tuple:
            params = self.model.params
            bsz = len(prompt_tokens)
            assert bsz <= params.max_batch_size, (bsz, params.max_batch_size)

            min_prompt_len = min(len(t) for t in prompt_tokens)
            max_prompt_len = max(len(t) for t in prompt_tokens)
            assert max_prompt_len <= params.max_seq_len
            total_len = min(params.max_seq_len, max_gen_len + max_prompt_len)

            pad_id = self.tokenizer.pad_id
            tokens = torch.full((bsz, total_len), pad_id, dtype=torch.long, device=DEVICE)
            for k, t in enumerate(prompt_tokens):
                tokens[k, : len(t)] = torch.tensor(t, dtype=torch.long, device=DEVICE)
            if logprobs:
                token_logprobs = torch.zeros_like(tokens, dtype=torch.float)

            prev_pos = 0
            eos_reached = torch.tensor([False] * bsz, device=DEVICE)
            input_text_mask = tokens != pad_id

            if min_prompt_len == total_len:
                logits = self.model.forward(tokens, prev_pos)
                token_logprobs = -F.cross_entropy(
                    input=logits.transpose(1, 2),
                    target=tokens,
                    reduction="none",
                    ignore_index=pad_id,
                )

            stop_tokens = torch.tensor(list(self.tokenizer.stop_tokens))

            for cur_pos in range(min_prompt_len, total_len):
                logits = self.model.forward(tokens[:, prev_pos:cur_pos], prev_pos)
                if temperature > 0:
                    probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
                    next_token = sample_top_p(probs, top_p)
                else:
                    next_token = torch.argmax(logits[:, -1], dim=-1)

                next_token = next_token.reshape(-1)
                # only replace token if prompt has already been generated
                next_token = torch.where(
                    input_text_mask[:, cur_pos], tokens[:, cur_pos], next_token
                )
                tokens[:, cur_pos] = next_token
                if logprobs:
                    token_logprobs[:, prev_pos + 1 : cur_pos + 1] = -F.cross_entropy(
                        input=logits.transpose(1, 2),
                        target=tokens[:, prev_pos + 1 : cur_pos + 1],
                        reduction="none",
                        ignore_index=pad_id,
                    )
                eos_reached |= (~input_text_mask[:, cur_pos]) & (
                    torch.isin(next_token, stop_tokens)
                )
                prev_pos = cur_pos
                if all(eos_reached):
                    break

            if logprobs:
                token_logprobs = token_logprobs.tolist()
            out_tokens, out_logprobs = [], []
            for i, toks in enumerate(tokens.tolist()):
                # cut to max gen len
                start = 0 if echo else len(prompt_tokens[i])
                toks = toks[start : len(prompt_tokens[i]) + max_gen_len]
                probs = None
                if logprobs:
                    probs = token_logprobs[i][start : len(prompt_tokens[i]) + max_gen_len]
                # cut to after eos tok if any
                for stop_token in self.tokenizer.stop_tokens:
                    try:
                        eos_idx = toks.index(stop_token)
                        toks = toks[:eos_idx]
                        probs = probs[:eos_idx] if logprobs else None
                    except ValueError:
                        pass
                out_tokens.append(toks)
                out_logprobs.append(probs)
            return (out_tokens, out_logprobs if logprobs else None)

        def text_completion(
            self,
            prompts: List[str],
            temperature: float = 0.6,
            top_p: float = 0.9,
            max_gen_len: Optional[int] = None,
            logprobs: bool = False,
            echo: bool = False,
        ) -> List[CompletionPrediction]:
            if max_gen_len is None:
                max_gen_len = self.model.params.max_seq_len - 1
            prompt_tokens = [self.tokenizer.encode(x, bos=True, eos=False) for x in prompts]
            generation_tokens, generation_logprobs = self.generate(
                prompt_tokens=prompt_tokens,
                max_gen_len=max_gen_len,
                temperature=temperature,
                top_p=top_p,
                logprobs=logprobs,
                echo=echo,
            )
            if logprobs:
                return [
                    {
                        "generation": self.tokenizer.decode(t),
                        "tokens": [self.tokenizer.decode([x]) for x in t],
                        "logprobs": logprobs_i,
                    }
                    for t, logprobs_i in zip(generation_tokens, generation_logprobs)
                ]
            return [{"generation": self.tokenizer.decode(t)} for t in generation_tokens]

    def sample_top_p(probs, p):
        probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
        probs_sum = torch.cumsum(probs_sort, dim=-1)
        mask = probs_sum - probs_sort > p
        probs_sort[mask] = 0.0
        probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
        next_token = torch.multinomial(probs_sort, num_samples=1)
        next_token = torch.gather(probs_idx, -1, next_token)
        return next_token

    return ModelArgs, Transformer, Llama


PROMPTS = ["5 9 12", "5 9 12 30 7 11", "33 3 3 8 19", "1 2"]


def llama31_program(torch, init=None, ckpt_dir=None, device="cpu"):
    _, _, Llama = llama31_module(torch, device)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "torch.set_default_tensor_type", UserWarning)
            generator = Llama.build(ckpt_dir=str(ckpt_dir), tokenizer_path=None, max_seq_len=24, max_batch_size=4)
        model = generator.model
        result = {"dtypes": sorted({str(p.dtype).split(".")[-1] for p in model.parameters()}),
                  "freqs": numpy_of(torch.view_as_real(model.freqs_cis[:5]))}
        results = generator.text_completion(PROMPTS, max_gen_len=10, temperature=0.0, logprobs=True)
        result["greedy"] = [r["generation"] for r in results]
        result["logprobs"] = [np.array(r["logprobs"], dtype=np.float32) for r in results]
        echo, _ = generator.generate([[60, 5, 9]], max_gen_len=4, temperature=0.0, echo=True)
        result["echo"] = echo
        torch.manual_seed(3)
        sampled = generator.text_completion(PROMPTS[:2], max_gen_len=6, temperature=0.6, top_p=0.9)
        result["own"] = {"sampled": [r["generation"] for r in sampled]}
    finally:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "torch.set_default_tensor_type", UserWarning)
            torch.set_default_tensor_type(torch.FloatTensor)
    return result


def write_checkpoint(folder: Path):
    torch = pytest.importorskip("torch")
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps(PARAMS))
    ModelArgs, Transformer, _ = llama31_module(torch)
    shapes = {k: tuple(v.shape) for k, v in Transformer(ModelArgs(max_seq_len=24, max_batch_size=4, **PARAMS))
              .state_dict().items()}
    rng = np.random.default_rng(0)
    state = {k: torch.from_numpy((rng.standard_normal(s) * (0.1 if len(s) == 1 else 0.3) + (len(s) == 1))
                                 .astype(np.float32)).bfloat16() for k, s in shapes.items()}
    torch.save(state, folder / "consolidated.00.pth")


def test_nano_llama31_text_completion(tmp_path):
    write_checkpoint(tmp_path / "Meta-Llama-3.1-tiny")
    ref, got = compare_program(llama31_program, rtol=1e-3, atol=1e-3, ckpt_dir=tmp_path / "Meta-Llama-3.1-tiny")
    assert ref["dtypes"] == ["bfloat16"]

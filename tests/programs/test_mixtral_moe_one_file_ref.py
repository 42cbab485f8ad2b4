"""mistralai's moe_one_file_ref.py (the reference Mixtral 8x7B implementation) on a tiny random
checkpoint: TransformerArgs with a nested MoeArgs read by from_dict (simple_parsing's Serializable,
written out here), the model built under `with torch.device("meta")`, its load_state_dict override
(keys routed by prefix, then super().load_state_dict(loaded, assign=True, strict=True)) on a
checkpoint PyTorch wrote and torch.load(mmap=True) reads, then .to(device=..., dtype=torch.float16)
as from_folder's default; a lazily made kv cache (torch.empty on first use) written by scatter_,
the freqs_cis property cached outside the buffers, layers in an nn.ModuleDict, the sparse MoE layer
(torch.topk over the gate logits, softmax(dtype=torch.float).type_as, torch.where(selected ==
i) and results[batch_idx] += weights[batch_idx, nth_expert, None] * expert(...)), and generate()
with teacher forcing. The device is "cpu" where the script names "cuda"; the tokenizer is ids."""
import dataclasses
import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of


class Serializable:
    """simple_parsing.helpers.Serializable's from_dict: nested dataclass fields built from dicts."""

    @classmethod
    def from_dict(cls, d: dict):
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in d:
                v = d[f.name]
                if isinstance(v, dict) and isinstance(f.type, type) and dataclasses.is_dataclass(f.type):
                    v = f.type.from_dict(v)
                kwargs[f.name] = v
        return cls(**kwargs)


@dataclass
class MoeArgs(Serializable):
    num_experts: int
    num_experts_per_tok: int


@dataclass
class TransformerArgs(Serializable):
    dim: int
    n_layers: int
    head_dim: int
    hidden_dim: int
    n_heads: int
    n_kv_heads: int
    norm_eps: float
    vocab_size: int
    moe: MoeArgs

    # For rotary embeddings. If not set, will be inferred
    rope_theta: Optional[float] = None

    max_batch_size: int = 0
    max_seq_len: int = 0


PARAMS = dict(dim=32, n_layers=2, head_dim=8, hidden_dim=48, n_heads=4, n_kv_heads=2, norm_eps=1e-5, vocab_size=40,
              moe=dict(num_experts=4, num_experts_per_tok=2), rope_theta=1e6)


def moe_module(torch, device="cpu"):
    """moe_one_file_ref.py as published (fire, safetensors and mistral_common left out), for `torch`."""
    nn = torch.nn

    def repeat_kv(keys, values, repeats: int):
        keys = torch.repeat_interleave(keys, repeats=repeats, dim=2)
        values = torch.repeat_interleave(values, repeats=repeats, dim=2)
        return keys, values

    def _reshape_for_broadcast(freqs_cis, x):
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
        def __init__(self, args: TransformerArgs):
            super().__init__()
            self.args = args

            self.n_heads: int = args.n_heads
            self.n_kv_heads: int = args.n_kv_heads

            self.repeats = self.n_heads // self.n_kv_heads

            self.scale = self.args.head_dim**-0.5

            self.wq = nn.Linear(args.dim, args.n_heads * args.head_dim, bias=False)
            self.wk = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
            self.wv = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
            self.wo = nn.Linear(args.n_heads * args.head_dim, args.dim, bias=False)
            self._cache_k = None
            self._cache_v = None

        def get_caches(self, x) -> Tuple:
            dtype, device = x.dtype, x.device
            assert x.shape[0] <= self.args.max_batch_size
            assert x.shape[1] <= self.args.max_seq_len
            if self._cache_k is None:
                self._cache_k = torch.empty(
                    (
                        self.args.max_batch_size,
                        self.args.max_seq_len,
                        self.n_kv_heads,
                        self.args.head_dim,
                    ),
                    dtype=dtype,
                    device=device,
                )
            if self._cache_v is None:
                self._cache_v = torch.empty(
                    (
                        self.args.max_batch_size,
                        self.args.max_seq_len,
                        self.n_kv_heads,
                        self.args.head_dim,
                    ),
                    dtype=dtype,
                    device=device,
                )
            return self._cache_k, self._cache_v

        def forward(self, x, freqs_cis, positions, mask):
            bsz, seqlen, _ = x.shape

            cache_k, cache_v = self.get_caches(x)

            xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
            xq = xq.view(bsz, seqlen, self.n_heads, self.args.head_dim)
            xk = xk.view(bsz, seqlen, self.n_kv_heads, self.args.head_dim)
            xv = xv.view(bsz, seqlen, self.n_kv_heads, self.args.head_dim)
            xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)

            # Update cache
            scatter_pos = positions[None, :, None, None].repeat(bsz, 1, self.n_kv_heads, self.args.head_dim)
            cache_k[:bsz].scatter_(dim=1, index=scatter_pos, src=xk)
            cache_v[:bsz].scatter_(dim=1, index=scatter_pos, src=xv)

            if positions.shape[0] > 1:
                # prefill
                key, value = repeat_kv(xk, xv, self.repeats)
            else:
                assert mask is None
                cur_pos = int(positions[-1].item() + 1)
                key, value = repeat_kv(
                    cache_k[:bsz, :cur_pos, ...],
                    cache_v[:bsz, :cur_pos, ...],
                    self.repeats,
                )

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
        def __init__(self, args: TransformerArgs):
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

    class MoeLayer(nn.Module):
        def __init__(self, experts: List, gate, moe_args: MoeArgs):
            super().__init__()
            assert len(experts) > 0
            self.experts = nn.ModuleList(experts)
            self.gate = gate
            self.args = moe_args

        def forward(self, inputs):
            inputs_squashed = inputs.view(-1, inputs.shape[-1])
            gate_logits = self.gate(inputs_squashed)
            weights, selected_experts = torch.topk(gate_logits, self.args.num_experts_per_tok)
            weights = nn.functional.softmax(
                weights,
                dim=1,
                dtype=torch.float,
            ).type_as(inputs)
            results = torch.zeros_like(inputs_squashed)
            for i, expert in enumerate(self.experts):
                batch_idx, nth_expert = torch.where(selected_experts == i)
                results[batch_idx] += weights[batch_idx, nth_expert, None] * expert(inputs_squashed[batch_idx])
            return results.view_as(inputs)

    class TransformerBlock(nn.Module):
        def __init__(self, args: TransformerArgs):
            super().__init__()
            self.n_heads = args.n_heads
            self.dim = args.dim
            self.attention = Attention(args)
            self.feed_forward = MoeLayer(
                experts=[FeedForward(args=args) for _ in range(args.moe.num_experts)],
                gate=nn.Linear(args.dim, args.moe.num_experts, bias=False),
                moe_args=args.moe,
            )
            self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
            self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)
            self.args = args

        def forward(self, x, freqs_cis, positions, mask):
            r = self.attention.forward(self.attention_norm(x), freqs_cis, positions, mask)
            h = x + r
            r = self.feed_forward.forward(self.ffn_norm(h))
            out = h + r
            return out

    def precompute_freqs_cis(dim: int, end: int, theta: float):
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = torch.arange(end, device=freqs.device)  # type: ignore
        freqs = torch.outer(t, freqs).float()  # type: ignore
        return torch.polar(torch.ones_like(freqs), freqs)  # complex64

    class Transformer(nn.Module):
        def __init__(
            self,
            args: TransformerArgs,
            pipeline_rank: int = 0,
            num_pipeline_ranks: int = 1,
        ):
            super().__init__()
            self.args = args
            self.vocab_size = args.vocab_size
            assert self.vocab_size > 0
            assert pipeline_rank < num_pipeline_ranks, (pipeline_rank, num_pipeline_ranks)
            self.pipeline_rank = pipeline_rank
            self.num_pipeline_ranks = num_pipeline_ranks
            self._precomputed_freqs_cis = None

            # Modules specific to some ranks:
            self.tok_embeddings = None
            self.norm = None
            self.output = None
            if pipeline_rank == 0:
                self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
            if pipeline_rank == num_pipeline_ranks - 1:
                self.norm = RMSNorm(args.dim, eps=args.norm_eps)
                self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

            # Initialize all layers but slice off those not of this rank.
            layers = [TransformerBlock(args=args) for _ in range(args.n_layers)]
            num_layers_per_rank = math.ceil(args.n_layers / self.num_pipeline_ranks)
            offset = self.pipeline_rank * num_layers_per_rank
            end = min(args.n_layers, offset + num_layers_per_rank)
            self.layers = nn.ModuleDict({str(i): layers[i] for i in range(offset, end)})
            self.n_local_layers = len(self.layers)

        @property
        def dtype(self):
            return next(self.parameters()).dtype

        @property
        def device(self):
            return next(self.parameters()).device

        @property
        def freqs_cis(self):
            # We cache freqs_cis but need to take care that it is on the right device
            # and has the right dtype (complex64). The fact that the dtype is different
            # from the module's  dtype means we cannot register it as a buffer
            if self._precomputed_freqs_cis is None:
                theta = self.args.rope_theta or 1000000.0
                self._precomputed_freqs_cis = precompute_freqs_cis(self.args.head_dim, 128_000, theta)
            if self._precomputed_freqs_cis.device != self.device:
                self._precomputed_freqs_cis = self._precomputed_freqs_cis.to(device=self.device)
            return self._precomputed_freqs_cis

        def forward(self, input_ids, positions):
            freqs_cis = self.freqs_cis[positions]

            (bsz, seqlen) = input_ids.shape
            bsz * seqlen

            if self.pipeline_rank == 0:
                assert self.tok_embeddings is not None
                h = self.tok_embeddings(input_ids)
                assert h.shape == (bsz, seqlen, self.args.dim)
                assert h.dtype == self.dtype
            else:
                h = torch.empty(bsz, seqlen, self.args.dim, device=self.device, dtype=self.dtype)
                torch.distributed.recv(h, src=self.pipeline_rank - 1)

            mask = None
            if input_ids.shape[1] > 1:
                tensor = torch.full(
                    (seqlen, seqlen),
                    dtype=h.dtype,
                    fill_value=1,
                    device=h.device,
                )
                mask = torch.log(torch.tril(tensor, diagonal=0)).to(h.dtype)

            for layer in self.layers.values():
                h = layer(h, freqs_cis, positions, mask)

            if self.pipeline_rank < self.num_pipeline_ranks - 1:
                torch.distributed.send(h, dst=self.pipeline_rank + 1)
                outs = torch.empty(*h.shape[:-1], self.vocab_size, device=h.device, dtype=h.dtype)
            else:
                assert self.output is not None
                assert self.norm is not None
                outs = self.output(self.norm(h))
            if self.num_pipeline_ranks > 1:
                torch.distributed.broadcast(outs, src=self.num_pipeline_ranks - 1)
            return outs.float()

        def load_state_dict(self, state_dict, *args, **kwargs):
            state_to_load = {}
            skipped = set([])
            for k, v in state_dict.items():
                if k.startswith("tok_embeddings"):
                    if self.pipeline_rank == 0:
                        state_to_load[k] = v
                    else:
                        logging.debug(
                            "Skipping parameter %s at pipeline rank %d",
                            k,
                            self.pipeline_rank,
                        )
                        skipped.add(k)
                elif k.startswith("norm") or k.startswith("output"):
                    if self.pipeline_rank == self.num_pipeline_ranks - 1:
                        state_to_load[k] = v
                    else:
                        logging.debug(
                            "Skipping parameter %s at pipeline rank %d",
                            k,
                            self.pipeline_rank,
                        )
                        skipped.add(k)
                elif k.startswith("layers"):
                    layer_id = k.split(".")[1]
                    if layer_id in self.layers:
                        state_to_load[k] = v
                    else:
                        logging.debug(
                            "Skipping parameter %s at pipeline rank %d",
                            k,
                            self.pipeline_rank,
                        )
                        skipped.add(k)
                else:
                    raise ValueError(f"Unexpected key {k}")
            assert set(state_dict.keys()) == skipped.union(set(state_to_load.keys()))
            super().load_state_dict(state_to_load, *args, **kwargs)

        @staticmethod
        def from_folder(
            folder: Path,
            max_batch_size: int,
            max_seq_len: int,
            num_pipeline_ranks: int = 1,
            device="cuda",
            dtype=torch.float16,
        ) -> "Transformer":
            with open(folder / "params.json", "r") as f:
                model_args = TransformerArgs.from_dict(json.load(f))
            model_args.max_batch_size = max_batch_size
            model_args.max_seq_len = max_seq_len
            if num_pipeline_ranks > 1:
                pipeline_rank = torch.distributed.get_rank()
            else:
                pipeline_rank = 0
            with torch.device("meta"):
                model = Transformer(
                    model_args,
                    pipeline_rank=pipeline_rank,
                    num_pipeline_ranks=num_pipeline_ranks,
                )

            pt_model_file = Path(folder) / "consolidated.00.pth"
            assert pt_model_file.exists(), f"Make sure {pt_model_file} exists"
            loaded = torch.load(str(pt_model_file), mmap=True)

            model.load_state_dict(loaded, assign=True, strict=True)

            return model.to(device=device, dtype=dtype)

    @torch.no_grad()
    def generate(prompts: List[str], model: Transformer, tokenizer, max_tokens: int):
        encoded_prompts = [tokenizer.encode(prompt, bos=True, eos=False) for prompt in prompts]
        prompt_lens = [len(x) for x in encoded_prompts]
        min_prompt_len = min(prompt_lens)
        max_prompt_len = max(prompt_lens)

        input_tokens = torch.full(
            (len(prompts), max_prompt_len),
            tokenizer._model.pad_id(),
            dtype=torch.long,
            device=device,
        )
        for i, encoded in enumerate(encoded_prompts):
            input_tokens[i, : len(encoded)] = torch.tensor(encoded).to(input_tokens)
        input_mask = input_tokens != tokenizer._model.pad_id()

        # pre-fill
        positions = torch.arange(0, min_prompt_len).to(device)
        logits = model.forward(input_tokens[:, :min_prompt_len], positions)
        logprobs = nn.functional.log_softmax(logits, dim=-1)

        # decode
        generated = []
        all_logprobs = [
            logprobs[:, :-1, :].gather(2, input_tokens[:, 1:min_prompt_len, None]).squeeze(-1),
        ]
        for cur_pos in range(min_prompt_len, max_tokens):
            next_token = torch.argmax(logprobs[:, -1, :], dim=-1)
            if cur_pos < input_mask.shape[1]:
                next_token = torch.where(input_mask[:, cur_pos], input_tokens[:, cur_pos], next_token)
            all_logprobs.append(
                logprobs[:, -1, :].gather(1, next_token[:, None]),
            )
            generated.append(next_token[:, None])
            logits = model.forward(next_token[:, None], torch.LongTensor([cur_pos]).to(next_token))
            logprobs = nn.functional.log_softmax(logits, dim=-1)

        all_logprobs_merged = torch.cat(all_logprobs, 1)
        res = []
        if max_tokens > 0:
            generated = torch.cat(generated, 1)
            for i, x in enumerate(encoded_prompts):
                res.append(tokenizer.decode(x[:min_prompt_len] + generated[i].tolist()))
        return res, all_logprobs_merged

    return Transformer, generate


class Tokenizer:
    """mistral_common's tokenizer reduced to ids: "5 9" -> [bos, 5, 9]; _model.pad_id() is -1."""
    _model = type("SentencePieceProcessor", (), {"pad_id": staticmethod(lambda: -1)})()

    def encode(self, s: str, bos: bool = True, eos: bool = False) -> List[int]:
        return ([1] if bos else []) + [int(t) for t in s.split()] + ([2] if eos else [])

    def decode(self, t: List[int]) -> str:
        return " ".join(map(str, t))


PROMPTS = ["5 9 12", "5 9 12 30 7 11", "33 3 3 8 19"]


def moe_program(torch, init=None, model_path=None, dtype="float16", max_tokens=12, device="cpu"):
    Transformer, generate = moe_module(torch, device)
    transformer = Transformer.from_folder(Path(model_path), max_batch_size=3, max_seq_len=max_tokens, device=device,
                                          dtype=getattr(torch, dtype))
    result = {"dtypes": sorted({str(p.dtype).split(".")[-1] for p in transformer.parameters()}),
              "devices": sorted({p.device.type for p in transformer.parameters()}),
              "layers": list(transformer.layers.keys())}
    res, logprobs = generate(PROMPTS, transformer, Tokenizer(), max_tokens=max_tokens)
    result.update(res=res, logprobs=numpy_of(logprobs))
    return result


def write_folder(folder: Path):
    """params.json and a random consolidated.00.pth (bfloat16, as published), written by PyTorch."""
    torch = pytest.importorskip("torch")
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps(PARAMS))
    Transformer, _ = moe_module(torch)
    shapes = {k: tuple(v.shape) for k, v in Transformer(TransformerArgs.from_dict(PARAMS)).state_dict().items()}
    rng = np.random.default_rng(0)
    state = {k: torch.from_numpy((rng.standard_normal(s) * (0.1 if len(s) == 1 else 0.3) + (len(s) == 1))
                                 .astype(np.float32)).bfloat16() for k, s in shapes.items()}
    torch.save(state, folder / "consolidated.00.pth")


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_mixtral_moe_generate(tmp_path, dtype):
    write_folder(tmp_path / "mixtral-tiny")
    # float16 activations: each op computed in float32 and rounded, as PyTorch's CPU does; a float32
    # sum in another order may still round to the neighbouring half (1/1024 relative)
    tol = dict(rtol=1e-2, atol=1e-2) if dtype == "float16" else {}
    ref, got = compare_program(moe_program, model_path=tmp_path / "mixtral-tiny", dtype=dtype, **tol)
    assert ref["dtypes"] == [dtype] and ref["devices"] == ["cpu"]

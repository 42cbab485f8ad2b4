"""google/gemma_pytorch's gemma/model.py (Gemma 1, 2 and 3 text decoders) with a small GemmaConfig,
run as scripts/run.py runs it: the model built inside a set_default_dtype context manager, weights
read by load_weights from a checkpoint that PyTorch wrote ({'model_state_dict': ...}, loaded with
torch.load(mmap=True, weights_only=True) and strict=False), then generate(). What it exercises:
int8 quantised Linear and Embedding weights (nn.Parameter(torch.empty(..., dtype=torch.int8),
requires_grad=False) times weight_scaler.unsqueeze(-1)), weight_scaler made by the legacy
torch.Tensor(n) constructor, RMSNorm with a unit offset, rotary embeddings by
view_as_complex(stack(chunk(...))) on buffers of complex64 (index_select by position), the kv cache
written by index_copy_, GQA by repeat_interleave, q.mul_ on a transposed view, Gemma 2's logit
soft-capping and sliding-window local mask (triu/tril of -2.3819763e38), Gemma 3's q/k norms and two
rope tables, the Sampler (index_select, argmax or temperature, sort, cumsum, top-p/top-k by
torch.where, gather by argsort, multinomial), and generate's teacher-forced prefill (index_copy_
into token_ids, torch.where on the prompt mask). The SentencePiece tokenizer is replaced by ids."""
import contextlib
import dataclasses
import enum
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of


class AttentionType(enum.Enum):
    GLOBAL = 1
    LOCAL_SLIDING = 2


class Architecture(enum.Enum):
    GEMMA_1 = 1
    GEMMA_2 = 2
    GEMMA_3 = 3


@dataclasses.dataclass
class GemmaConfig:
    """gemma/config.py's GemmaConfig (the fields the text model reads)."""
    architecture: Architecture = Architecture.GEMMA_1
    vocab_size: int = 256000
    max_position_embeddings: int = 8192
    num_hidden_layers: int = 28
    num_attention_heads: int = 16
    num_key_value_heads: int = 16
    hidden_size: int = 3072
    intermediate_size: int = 24576
    head_dim: int = 256
    rms_norm_eps: float = 1e-6
    dtype: str = 'bfloat16'
    quant: bool = False
    tokenizer: Optional[str] = 'tokenizer/tokenizer.model'
    attn_types: Optional[Sequence[AttentionType]] = None
    sliding_window_size: Optional[int] = None
    final_logit_softcapping: Optional[float] = None
    attn_logit_softcapping: Optional[float] = None
    query_pre_attn_scalar: Optional[int] = None
    use_pre_ffw_norm: bool = False
    use_post_ffw_norm: bool = False
    rope_wave_length: Optional[dict] = None
    use_qk_norm: bool = False

    def get_dtype(self):
        """Gets the torch dtype from the config dtype string."""
        import minitorch
        torch = self._torch if hasattr(self, "_torch") else minitorch
        return {'float16': torch.float16, 'float': torch.float32, 'float32': torch.float32,
                'bfloat16': torch.bfloat16}.get(self.dtype, None)


def small_config(variant: str) -> GemmaConfig:
    common = dict(vocab_size=64, max_position_embeddings=32, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, hidden_size=32, intermediate_size=48, head_dim=8)
    if variant == "gemma1-quant":
        return GemmaConfig(quant=True, **common)
    if variant == "gemma2":
        return GemmaConfig(architecture=Architecture.GEMMA_2, use_pre_ffw_norm=True, use_post_ffw_norm=True,
                           final_logit_softcapping=30.0, attn_logit_softcapping=50.0, query_pre_attn_scalar=12,
                           attn_types=[AttentionType.LOCAL_SLIDING, AttentionType.GLOBAL], sliding_window_size=4,
                           **common)
    return GemmaConfig(architecture=Architecture.GEMMA_3, use_pre_ffw_norm=True, use_post_ffw_norm=True,
                       attn_types=[AttentionType.LOCAL_SLIDING, AttentionType.GLOBAL], sliding_window_size=4,
                       use_qk_norm=True, rope_wave_length={AttentionType.LOCAL_SLIDING: 10_000,
                                                           AttentionType.GLOBAL: 1_000_000}, **common)


class Tokenizer:
    """Ids in place of SentencePiece: "5 9" -> [bos, 5, 9]; Gemma's pad 0, eos 1, bos 2."""
    pad_id, eos_id, bos_id = 0, 1, 2

    def __init__(self, model_path):
        pass

    def encode(self, s: str, bos: bool = True, eos: bool = False) -> List[int]:
        return ([self.bos_id] if bos else []) + [int(t) for t in s.split()]

    def decode(self, t: List[int]) -> str:
        return " ".join(map(str, t))


def gemma_module(torch):
    """gemma/model.py as published (the text model), for the library `torch`."""
    nn, F = torch.nn, torch.nn.functional
    gemma_config = type("gemma_config", (), {"AttentionType": AttentionType, "Architecture": Architecture,
                                             "GemmaConfig": GemmaConfig})
    tokenizer = type("tokenizer", (), {"Tokenizer": Tokenizer})

    class Sampler(nn.Module):

        def __init__(self, vocab_size: int, config: gemma_config.GemmaConfig):
            super().__init__()
            self.vocab_size = vocab_size
            self.config = config

        @torch.no_grad()
        def forward(
            self,
            embedding: torch.Tensor,
            hidden_states: torch.Tensor,
            output_positions: torch.Tensor,
            temperatures: Union[torch.Tensor, None],
            top_ps: torch.Tensor,
            top_ks: torch.Tensor,
            embedding_bias: Optional[torch.Tensor] = None,
        ) -> Tuple[torch.Tensor, torch.Tensor]:
            # Select the last element for each sequence.
            # (batch_size, input_len, hidden_size) -> (batch_size, hidden_size)
            hidden_states = hidden_states.index_select(
                1, output_positions).squeeze(dim=1)
            logits = torch.matmul(hidden_states, embedding.t())
            if embedding_bias is not None:
                logits += embedding_bias
            if self.config.final_logit_softcapping is not None:
                logits = logits / self.config.final_logit_softcapping
                logits = torch.tanh(logits)
                logits = logits * self.config.final_logit_softcapping

            if temperatures is None:
                return torch.argmax(logits, dim=-1).squeeze(dim=-1), logits

            # Apply temperature scaling.
            logits.div_(temperatures.unsqueeze(dim=1))

            # Calculate probabilities with softmax.
            probs = torch.softmax(logits, dim=-1, dtype=torch.float)
            probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)

            # Apply top-p, top-k.
            probs_sum = torch.cumsum(probs_sort, dim=-1)
            top_ps_mask = (probs_sum - probs_sort) > top_ps.unsqueeze(dim=1)
            probs_sort = torch.where(top_ps_mask, 0, probs_sort)

            top_ks_mask = torch.arange(probs_idx.shape[-1],
                                       device=probs_idx.device)
            top_ks_mask = top_ks_mask.expand(probs_idx.shape[0], -1)
            top_ks_mask = top_ks_mask >= top_ks.unsqueeze(dim=1)
            probs_sort = torch.where(top_ks_mask, 0, probs_sort)

            # Re-normalization.
            probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
            probs = torch.gather(probs_sort,
                                 dim=-1,
                                 index=torch.argsort(probs_idx, dim=-1))

            next_token_ids = torch.multinomial(probs,
                                               num_samples=1,
                                               replacement=True).squeeze(dim=-1)
            return next_token_ids, logits

    def precompute_freqs_cis(dim: int,
                             end: int,
                             theta: float = 10000.0,
                             rope_scaling_factor: int = 1):
        """Precomputes the frequency cis."""
        freqs = 1.0 / (theta**(torch.arange(0, dim, 2)[:(dim // 2)].float() / dim))
        freqs = freqs/rope_scaling_factor
        t = torch.arange(end, device=freqs.device)
        freqs = torch.outer(t, freqs).float()
        freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
        return freqs_cis

    def apply_rotary_emb(x, freqs_cis):
        """Applies the rotary embedding to the query and key tensors."""
        x_ = torch.view_as_complex(
            torch.stack(torch.chunk(x.transpose(1, 2).float(), 2, dim=-1),
                        dim=-1))
        x_out = torch.view_as_real(x_ * freqs_cis).type_as(x)
        x_out = torch.cat(torch.chunk(x_out, 2, dim=-1), dim=-2)
        x_out = x_out.reshape(x_out.shape[0], x_out.shape[1], x_out.shape[2],
                              -1).transpose(1, 2)
        return x_out

    class Linear(nn.Module):

        def __init__(self, in_features: int, out_features: int, quant: bool):
            super().__init__()
            if quant:
                self.weight = nn.Parameter(
                    torch.empty((out_features, in_features), dtype=torch.int8),
                    requires_grad=False,
                )
                self.weight_scaler = nn.Parameter(torch.Tensor(out_features))
            else:
                self.weight = nn.Parameter(
                    torch.empty((out_features, in_features)),
                    requires_grad=False,
                )
            self.quant = quant

        def forward(self, x):
            weight = self.weight
            if self.quant:
                weight = weight * self.weight_scaler.unsqueeze(-1)
            output = F.linear(x, weight)
            return output

    class Embedding(nn.Module):

        def __init__(self, num_embeddings: int, embedding_dim: int, quant: bool):
            super().__init__()
            if quant:
                self.weight = nn.Parameter(
                    torch.empty((num_embeddings, embedding_dim), dtype=torch.int8),
                    requires_grad=False,
                )
                self.weight_scaler = nn.Parameter(torch.Tensor(num_embeddings))
            else:
                self.weight = nn.Parameter(
                    torch.empty((num_embeddings, embedding_dim)),
                    requires_grad=False,
                )
            self.quant = quant

        def forward(self, x):
            weight = self.weight
            if self.quant:
                weight = weight * self.weight_scaler.unsqueeze(-1)
            output = F.embedding(x, weight)
            return output

    class RMSNorm(torch.nn.Module):

        def __init__(
            self,
            dim: int,
            eps: float = 1e-6,
            add_unit_offset: bool = True,
        ):
            super().__init__()
            self.eps = eps
            self.add_unit_offset = add_unit_offset
            self.weight = nn.Parameter(torch.zeros(dim))

        def _norm(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

        def forward(self, x):
            # Llama does x.to(float16) * w whilst Gemma2 is (x * w).to(float16)
            # See https://github.com/huggingface/transformers/pull/29402
            output = self._norm(x.float())
            if self.add_unit_offset:
                output = output * (1 + self.weight.float())
            else:
                output = output * self.weight.float()
            return output.type_as(x)

    class GemmaMLP(nn.Module):

        def __init__(
            self,
            hidden_size: int,
            intermediate_size: int,
            quant: bool,
        ):
            super().__init__()
            self.gate_proj = Linear(hidden_size, intermediate_size, quant)
            self.up_proj = Linear(hidden_size, intermediate_size, quant)
            self.down_proj = Linear(intermediate_size, hidden_size, quant)

        def forward(self, x):
            gate = self.gate_proj(x)
            gate = F.gelu(gate, approximate="tanh")
            up = self.up_proj(x)
            fuse = gate * up
            outputs = self.down_proj(fuse)
            return outputs

    class GemmaAttention(nn.Module):

        def __init__(
            self,
            config: gemma_config.GemmaConfig,
            attn_type: gemma_config.AttentionType,
        ):
            super().__init__()

            self.num_heads = config.num_attention_heads
            self.num_kv_heads = config.num_key_value_heads

            assert self.num_heads % self.num_kv_heads == 0
            self.num_queries_per_kv = self.num_heads // self.num_kv_heads

            self.hidden_size = config.hidden_size
            self.head_dim = config.head_dim

            self.q_size = self.num_heads * self.head_dim
            self.kv_size = self.num_kv_heads * self.head_dim

            if config.query_pre_attn_scalar is not None:
                self.scaling = config.query_pre_attn_scalar**-0.5
            else:
                self.scaling = self.head_dim**-0.5

            self.qkv_proj = Linear(
                self.hidden_size,
                (self.num_heads + 2 * self.num_kv_heads) * self.head_dim,
                quant=config.quant)
            self.o_proj = Linear(
                self.num_heads * self.head_dim, self.hidden_size, quant=config.quant
            )
            self.query_norm = (
                RMSNorm(self.head_dim, eps=config.rms_norm_eps)
                if config.use_qk_norm
                else None
            )
            self.key_norm = (
                RMSNorm(self.head_dim, eps=config.rms_norm_eps)
                if config.use_qk_norm
                else None
            )

            self.attn_type = attn_type
            self.sliding_window_size = config.sliding_window_size
            self.attn_logit_softcapping = config.attn_logit_softcapping

        def forward(
            self,
            hidden_states,
            freqs_cis,
            kv_write_indices,
            kv_cache: Tuple,
            mask,
            local_mask=None,
        ):
            hidden_states_shape = hidden_states.shape
            assert len(hidden_states_shape) == 3

            batch_size, input_len, _ = hidden_states_shape

            qkv = self.qkv_proj(hidden_states)
            xq, xk, xv = qkv.split([self.q_size, self.kv_size, self.kv_size],
                                   dim=-1)

            xq = xq.view(batch_size, -1, self.num_heads, self.head_dim)
            xk = xk.view(batch_size, -1, self.num_kv_heads, self.head_dim)
            xv = xv.view(batch_size, -1, self.num_kv_heads, self.head_dim)

            if self.query_norm is not None and self.key_norm is not None:
                xq = self.query_norm(xq)
                xk = self.key_norm(xk)

            # Positional embedding.
            xq = apply_rotary_emb(xq, freqs_cis=freqs_cis)
            xk = apply_rotary_emb(xk, freqs_cis=freqs_cis)

            # Write new kv cache.
            # [batch_size, input_len, n_local_kv_heads, head_dim]
            k_cache, v_cache = kv_cache
            k_cache.index_copy_(1, kv_write_indices, xk)
            v_cache.index_copy_(1, kv_write_indices, xv)

            key = k_cache
            value = v_cache
            if self.num_kv_heads != self.num_heads:
                # [batch_size, max_seq_len, n_local_heads, head_dim]
                key = torch.repeat_interleave(key, self.num_queries_per_kv, dim=2)
                value = torch.repeat_interleave(value,
                                                self.num_queries_per_kv,
                                                dim=2)

            # [batch_size, n_local_heads, input_len, head_dim]
            q = xq.transpose(1, 2)
            # [batch_size, n_local_heads, max_seq_len, head_dim]
            k = key.transpose(1, 2)
            v = value.transpose(1, 2)

            # [batch_size, n_local_heads, input_len, max_seq_len]
            q.mul_(self.scaling)
            scores = torch.matmul(q, k.transpose(2, 3))
            if (
                self.attn_type == gemma_config.AttentionType.LOCAL_SLIDING
                and self.sliding_window_size is not None
                and local_mask is not None
            ):
                mask = local_mask

            if self.attn_logit_softcapping is not None:
                scores = scores / self.attn_logit_softcapping
                scores = torch.tanh(scores)
                scores = scores * self.attn_logit_softcapping

            scores = scores + mask
            scores = F.softmax(scores.float(), dim=-1).type_as(q)

            # [batch_size, n_local_heads, input_len, head_dim]
            output = torch.matmul(scores, v)

            # [batch_size, input_len, hidden_dim]
            output = (output.transpose(1, 2).contiguous().view(
                batch_size, input_len, -1))
            output = self.o_proj(output)
            return output

    class GemmaDecoderLayer(nn.Module):

        def __init__(
            self,
            config: gemma_config.GemmaConfig,
        ):
            super().__init__()
            self.attn_type = gemma_config.AttentionType.GLOBAL
            self.self_attn = GemmaAttention(
                config=config,
                attn_type=self.attn_type)
            self.mlp = GemmaMLP(
                hidden_size=config.hidden_size,
                intermediate_size=config.intermediate_size,
                quant=config.quant,
            )
            self.input_layernorm = RMSNorm(config.hidden_size,
                                           eps=config.rms_norm_eps)
            self.post_attention_layernorm = RMSNorm(config.hidden_size,
                                                    eps=config.rms_norm_eps)

        def forward(self, hidden_states, freqs_cis, kv_write_indices, kv_cache: Tuple, mask, local_mask):
            # Self Attention
            residual = hidden_states
            hidden_states = self.input_layernorm(hidden_states)
            hidden_states = self.self_attn(
                hidden_states=hidden_states,
                freqs_cis=freqs_cis,
                kv_write_indices=kv_write_indices,
                kv_cache=kv_cache,
                mask=mask,
            )
            hidden_states = residual + hidden_states

            # MLP
            residual = hidden_states
            hidden_states = self.post_attention_layernorm(hidden_states)
            hidden_states = self.mlp(hidden_states)
            hidden_states = residual + hidden_states

            return hidden_states

    class Gemma2DecoderLayer(nn.Module):
        def __init__(
            self,
            config: gemma_config.GemmaConfig,
            attn_type: gemma_config.AttentionType,
        ):
            super().__init__()
            self.attn_type = attn_type
            self.self_attn = GemmaAttention(
                config=config,
                attn_type=self.attn_type,
            )
            self.mlp = GemmaMLP(
                hidden_size=config.hidden_size,
                intermediate_size=config.intermediate_size,
                quant=config.quant,
            )
            self.input_layernorm = RMSNorm(config.hidden_size,
                                           eps=config.rms_norm_eps)
            self.post_attention_layernorm = RMSNorm(config.hidden_size,
                                                    eps=config.rms_norm_eps)
            self.pre_feedforward_layernorm = (
                RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
                if config.use_pre_ffw_norm
                else None
            )
            self.post_feedforward_layernorm = (
                RMSNorm(config.hidden_size, eps=config.rms_norm_eps)
                if config.use_post_ffw_norm
                else None
            )

        def forward(self, hidden_states, freqs_cis, kv_write_indices, kv_cache: Tuple, mask, local_mask):
            # Self Attention
            residual = hidden_states
            hidden_states = self.input_layernorm(hidden_states)
            hidden_states = self.self_attn(
                hidden_states=hidden_states,
                freqs_cis=freqs_cis,
                kv_write_indices=kv_write_indices,
                kv_cache=kv_cache,
                mask=mask,
                local_mask=local_mask,
            )
            hidden_states = self.post_attention_layernorm(hidden_states)
            hidden_states = residual + hidden_states

            # MLP
            residual = hidden_states
            if self.pre_feedforward_layernorm is not None:
                hidden_states = self.pre_feedforward_layernorm(hidden_states)
            hidden_states = self.mlp(hidden_states)
            if self.post_feedforward_layernorm is not None:
                hidden_states = self.post_feedforward_layernorm(hidden_states)
            hidden_states = residual + hidden_states

            return hidden_states

    class GemmaModel(nn.Module):

        def __init__(self, config: gemma_config.GemmaConfig):
            super().__init__()
            self.config = config
            self.vocab_size = config.vocab_size

            self.layers = nn.ModuleList()
            for i in range(config.num_hidden_layers):
                if config.architecture == gemma_config.Architecture.GEMMA_1:
                    self.layers.append(GemmaDecoderLayer(config))
                elif config.architecture in (
                    gemma_config.Architecture.GEMMA_2,
                    gemma_config.Architecture.GEMMA_3,
                ):
                    attn_type = (
                        config.attn_types[i % len(config.attn_types)]
                        if config.attn_types is not None
                        else gemma_config.AttentionType.GLOBAL
                    )
                    self.layers.append(Gemma2DecoderLayer(config, attn_type))
                else:
                    raise ValueError(f'Unknown architecture: {config.architecture}')
            self.norm = RMSNorm(config.hidden_size, eps=config.rms_norm_eps)

        def forward(self, hidden_states, freqs_cis: Mapping, kv_write_indices, kv_caches: List, mask, local_mask):
            for i in range(len(self.layers)):
                layer = self.layers[i]
                hidden_states = layer(
                    hidden_states=hidden_states,
                    freqs_cis=freqs_cis.get(layer.attn_type),
                    kv_write_indices=kv_write_indices,
                    kv_cache=kv_caches[i],
                    mask=mask,
                    local_mask=local_mask,
                )
            hidden_states = self.norm(hidden_states)
            return hidden_states

    class GemmaForCausalLM(nn.Module):

      def __init__(
            self,
            config: gemma_config.GemmaConfig,
        ):
        super().__init__()
        self.config = config
        assert config.hidden_size % config.num_attention_heads == 0

        max_seq_len = config.max_position_embeddings
        head_dim = config.head_dim
        vocab_size = config.vocab_size

        self.tokenizer = tokenizer.Tokenizer(config.tokenizer)
        self.embedder = Embedding(vocab_size, config.hidden_size, config.quant)
        self.model = GemmaModel(config)
        self.sampler = Sampler(vocab_size, config)

        # Pre-compute rotary embedding table.
        if config.architecture == gemma_config.Architecture.GEMMA_3:
          if config.rope_wave_length is None:
            raise ValueError('rope_wave_length must be provided for Gemma3.')

          rope_lengths = config.rope_wave_length
          defaults = {
                    gemma_config.AttentionType.LOCAL_SLIDING: 10_000,
                    gemma_config.AttentionType.GLOBAL: 10_000,
                }

          for attn_type, name in [
                    (gemma_config.AttentionType.LOCAL_SLIDING, 'local_freqs_cis'),
                    (gemma_config.AttentionType.GLOBAL, 'global_freqs_cis'),
                ]:
            theta = rope_lengths.get(
                        attn_type, defaults[attn_type]
                    )
            self._register_freqs_cis(name, head_dim, max_seq_len, theta=theta)

        else:
          self._register_freqs_cis('freqs_cis', head_dim, max_seq_len)

      def _register_freqs_cis(
            self, name: str, head_dim: int, max_seq_len: int, theta: int = 10_000
        ):
        self.register_buffer(
                name, precompute_freqs_cis(head_dim, max_seq_len * 2, theta=theta)
            )

      @torch.no_grad()
      def forward(
            self,
            input_token_ids,
            input_positions,
            kv_write_indices,
            kv_caches: List,
            mask,
            output_positions,
            temperatures,
            top_ps,
            top_ks,
            local_mask: torch.Tensor | None = None,
            **kwargs,
        ) -> Tuple:
        freqs_cis = {}

        if self.config.architecture == gemma_config.Architecture.GEMMA_3:
          freqs_cis[gemma_config.AttentionType.LOCAL_SLIDING] = (
                    self.local_freqs_cis.index_select(0, input_positions)
                )
          freqs_cis[gemma_config.AttentionType.GLOBAL] = (
                    self.global_freqs_cis.index_select(0, input_positions)
                )
        else:
          freqs_cis[gemma_config.AttentionType.LOCAL_SLIDING] = (
                    self.freqs_cis.index_select(0, input_positions)
                )
          freqs_cis[gemma_config.AttentionType.GLOBAL] = (
                    self.freqs_cis.index_select(0, input_positions)
                )

        kv_write_indices = input_positions

        # [batch_size, input_len, hidden_size]
        hidden_states = self.embedder(input_token_ids)
        # Gemma normalizes the embedding by sqrt(hidden_size).
        # Gemma2 downcasts the below to float16, causing sqrt(3072)=55.4256 to become 55.5
        # See https://github.com/huggingface/transformers/pull/29402
        normalizer = torch.tensor(self.config.hidden_size**0.5, dtype=hidden_states.dtype, device=hidden_states.device)
        hidden_states = hidden_states * normalizer

        hidden_states = self.model(
                hidden_states=hidden_states,
                freqs_cis=freqs_cis,
                kv_write_indices=kv_write_indices,
                kv_caches=kv_caches,
                mask=mask,
                local_mask=local_mask,
            )
        embedder_weight = self.embedder.weight
        if self.config.quant:
          embedder_weight = (
                    embedder_weight * self.embedder.weight_scaler.unsqueeze(-1))
        next_tokens, logits = self.sampler(
                embedding=embedder_weight,
                hidden_states=hidden_states,
                output_positions=output_positions,
                temperatures=temperatures,
                top_ps=top_ps,
                top_ks=top_ks,
            )
        return next_tokens, logits

      def generate(
            self,
            prompts: Union[str, Sequence[str]],
            device: Any,
            output_len: int = 100,
            temperature: Union[float, None] = 1.0,
            top_p: float = 0.95,
            top_k: int = 64,
        ) -> Union[str, Sequence[str]]:
        """Generates responses for given prompts using Gemma model."""
        # If a single prompt is provided, treat it as a batch of 1.
        is_str_prompt = isinstance(prompts, str)
        if is_str_prompt:
          prompts = [prompts]

        batch_size = len(prompts)
        prompt_tokens = [self.tokenizer.encode(prompt) for prompt in prompts]
        min_prompt_len = min(len(p) for p in prompt_tokens)
        max_prompt_len = max(len(p) for p in prompt_tokens)
        max_seq_len = max_prompt_len + output_len
        assert max_seq_len <= self.config.max_position_embeddings

        # build KV caches
        kv_caches = []
        for _ in range(self.config.num_hidden_layers):
          size = (batch_size, max_seq_len, self.config.num_key_value_heads,
                        self.config.head_dim)
          dtype = self.config.get_dtype()
          k_cache = torch.zeros(size=size, dtype=dtype, device=device)
          v_cache = torch.zeros(size=size, dtype=dtype, device=device)
          kv_caches.append((k_cache, v_cache))

        # prepare inputs
        token_ids_tensor = torch.full((batch_size, max_seq_len),
                                          self.tokenizer.pad_id, dtype=torch.int64)
        input_token_ids_tensor = torch.full((batch_size, min_prompt_len),
                                                self.tokenizer.pad_id,
                                                dtype=torch.int64)
        for i, p in enumerate(prompt_tokens):
          token_ids_tensor[i, :len(p)] = torch.tensor(p)
          input_token_ids_tensor[i, :min_prompt_len] = torch.tensor(
                    p[:min_prompt_len])
        token_ids_tensor = token_ids_tensor.to(device)
        input_token_ids_tensor = input_token_ids_tensor.to(device)
        prompt_mask_tensor = token_ids_tensor != self.tokenizer.pad_id
        input_positions_tensor = torch.arange(0, min_prompt_len,
                                                  dtype=torch.int64).to(device)
        mask_tensor = torch.full((1, 1, max_seq_len, max_seq_len),
                                     -2.3819763e38).to(torch.float)
        mask_tensor = torch.triu(mask_tensor, diagonal=1).to(device)
        local_mask_tensor = mask_tensor + torch.tril(
                torch.full((1, 1, max_seq_len, max_seq_len), -2.3819763e38, device=device),
                diagonal=-self.config.sliding_window_size,
            ) if self.config.sliding_window_size else None
        curr_mask_tensor = mask_tensor.index_select(2, input_positions_tensor)
        curr_local_mask_tensor = local_mask_tensor.index_select(
              2, input_positions_tensor
          ) if local_mask_tensor is not None else None
        output_positions_tensor = torch.LongTensor([min_prompt_len - 1]).to(device)
        temperatures_tensor = None if not temperature else torch.FloatTensor(
                [temperature] * batch_size).to(device)
        top_ps_tensor = torch.FloatTensor([top_p] * batch_size).to(device)
        top_ks_tensor = torch.LongTensor([top_k] * batch_size).to(device)
        output_index = torch.tensor(min_prompt_len, dtype=torch.int64).to(
                device)

        # Prefill up to min_prompt_len tokens, then treat other prefill as
        # decode and ignore output.
        for i in range(max_seq_len - min_prompt_len):
          next_token_ids, _ = self(
                    input_token_ids=input_token_ids_tensor,
                    input_positions=input_positions_tensor,
                    kv_write_indices=None,
                    kv_caches=kv_caches,
                    mask=curr_mask_tensor,
                    output_positions=output_positions_tensor,
                    temperatures=temperatures_tensor,
                    top_ps=top_ps_tensor,
                    top_ks=top_ks_tensor,
                    local_mask=curr_local_mask_tensor,
                )

          curr_prompt_mask = prompt_mask_tensor.index_select(
                    1, output_index).squeeze(dim=1)
          curr_token_ids = token_ids_tensor.index_select(
                    1, output_index).squeeze(dim=1)
          output_token_ids = torch.where(curr_prompt_mask, curr_token_ids,
                                               next_token_ids).unsqueeze(dim=1)
          token_ids_tensor.index_copy_(1, output_index, output_token_ids)

          input_token_ids_tensor = output_token_ids
          input_positions_tensor = output_index.unsqueeze(dim=-1)
          curr_mask_tensor = mask_tensor.index_select(2,
                                                            input_positions_tensor)
          curr_local_mask_tensor = local_mask_tensor.index_select(
                    2, input_positions_tensor
                ) if local_mask_tensor is not None else None
          output_positions_tensor = torch.tensor(0, dtype=torch.int64).to(
                    device)
          output_index = output_index + 1

        # Detokenization.
        token_ids = token_ids_tensor.tolist()
        results = []
        for i, tokens in enumerate(token_ids):
          trimmed_output = tokens[len(prompt_tokens[i]):len(prompt_tokens[i])
                                        + output_len]
          if self.tokenizer.eos_id in trimmed_output:
            eos_index = trimmed_output.index(self.tokenizer.eos_id)
            trimmed_output = trimmed_output[:eos_index]
          results.append(self.tokenizer.decode(trimmed_output))

        # If a string was provided as input, return a string as output.
        return results[0] if is_str_prompt else results

      def load_weights(self, model_path: str):
        self.load_state_dict(
            torch.load(
                model_path, mmap=True, weights_only=True,
            )['model_state_dict'],
            strict=False,
        )

    return GemmaForCausalLM


PROMPTS = ["5 9 12", "5 9 12 30 7 44", "40 3"]


def gemma_program(torch, init=None, variant="gemma1-quant", ckpt=None, device="cpu"):
    GemmaForCausalLM = gemma_module(torch)

    @contextlib.contextmanager
    def _set_default_tensor_type(dtype):
        """Sets the default torch dtype to the given dtype."""
        torch.set_default_dtype(dtype)
        yield
        torch.set_default_dtype(torch.float)

    model_config = small_config(variant)
    model_config._torch = torch
    model_config.dtype = "float32"  # run.py's choice on a CPU
    torch.manual_seed(0)
    device = torch.device(device)
    with _set_default_tensor_type(model_config.get_dtype()):
        model = GemmaForCausalLM(model_config)
        model.load_weights(str(ckpt))
        model = model.to(device).eval()
    result = {"dtypes": sorted({str(p.dtype).split(".")[-1] for p in model.parameters()}),
              "buffers": {k: str(v.dtype).split(".")[-1] for k, v in model.named_buffers()}}
    result["greedy"] = model.generate(PROMPTS, device, output_len=6, temperature=None)
    result["single"] = model.generate("7 7 7", device, output_len=4, temperature=None)
    torch.manual_seed(3)
    sampled = model.generate(PROMPTS, device, output_len=5, temperature=0.9, top_p=0.9, top_k=8)
    result["own"] = {"sampled": sampled}
    assert all(len(s.split()) <= 5 for s in sampled)
    # one forward with the sampler's logits, as the prefill sees them
    kv = [(torch.zeros(1, 8, 2, 8, device=device), torch.zeros(1, 8, 2, 8, device=device)) for _ in range(2)]
    mask = torch.triu(torch.full((1, 1, 8, 8), -2.3819763e38, device=device), diagonal=1)
    local = mask + torch.tril(torch.full((1, 1, 8, 8), -2.3819763e38, device=device), diagonal=-4)
    positions = torch.arange(0, 4, device=device)
    _, logits = model(input_token_ids=torch.tensor([[2, 5, 9, 12]], device=device), input_positions=positions,
                      kv_write_indices=None, kv_caches=kv, mask=mask.index_select(2, positions),
                      output_positions=torch.tensor([3], device=device), temperatures=None, top_ps=None, top_ks=None,
                      local_mask=local.index_select(2, positions))
    result["logits"] = numpy_of(logits)
    result["kv"] = numpy_of(kv[1][0])
    return result


def write_checkpoint(path, variant):
    """Random weights for the variant, as gemma's checkpoints hold them, saved by PyTorch."""
    torch = pytest.importorskip("torch")
    GemmaForCausalLM = gemma_module(torch)
    config = small_config(variant)
    config._torch = torch
    shapes = {k: (tuple(v.shape), v.dtype) for k, v in GemmaForCausalLM(config).state_dict().items()
              if "freqs_cis" not in k}
    rng = np.random.default_rng(0)
    state = {}
    for k, (shape, dtype) in shapes.items():
        if dtype == torch.int8:
            state[k] = torch.from_numpy(rng.integers(-127, 128, shape).astype(np.int8))
        elif k.endswith("weight_scaler"):
            state[k] = torch.from_numpy(rng.uniform(0.001, 0.004, shape).astype(np.float32))
        else:
            scale = 0.1 if len(shape) == 1 else 0.3
            state[k] = torch.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))
    torch.save({"model_state_dict": state}, path)


@pytest.mark.parametrize("variant", ["gemma1-quant", "gemma2", "gemma3"])
def test_gemma_generate(tmp_path, variant):
    write_checkpoint(tmp_path / "model.ckpt", variant)
    ref, got = compare_program(gemma_program, variant=variant, ckpt=tmp_path / "model.ckpt")
    assert all(ref["greedy"])

"""LLMs-from-scratch's bonus notebook "Comparing Efficient Multi-Head Attention Implementations"
(ch03/02_bonus_efficient-multihead-attention/mha-implementations.ipynb) as written, at a small size
(batch 2, 16 tokens, embedding 48, 4 heads; the notebook's 8, 1024, 768, 12): the CausalAttention
wrapper of chapter 3 (masked_fill_ of self.mask.bool()[:n, :n] with -torch.inf), Ch03_MHA,
MultiHeadAttentionCombinedQKV (qkv.view(...).permute(2, 0, 3, 1, 4) and qkv.unbind(0)), MHAEinsum
(nn.Parameter(torch.randn(d_in, d_out)) reset by nn.init.kaiming_uniform_(a=math.sqrt(5)) and
_calculate_fan_in_and_fan_out, torch.einsum projections and scores), MHAPyTorchScaledDotProduct
(F.scaled_dot_product_attention(is_causal=True)) and its variant with an explicit boolean mask
(attn_mask=~attn_mask), MHAPyTorchClass over nn.MultiheadAttention(batch_first=True, bias=False,
add_bias_kv=False) with need_weights True and False, and MHAPyTorchFlexAttention (a mask from
create_block_mask(causal, B=None, H=None, Q_LEN=n, KV_LEN=n, device=x.device) per forward, then
flex_attention(queries, keys, values, block_mask=...)), the version gate by packaging's parse_version
of torch.__version__; the outputs printed by shape, the tests file's copy_weights from Ch03_MHA into
MHAEinsum (W_query.copy_(weight.T) under no_grad) and its allclose check, the "does not attend to
future tokens" check, and the forward_backward timing loop's body (loss = output.sum(),
loss.backward(), embeddings.grad.zero_()) for the modules that train on the CPU. The FlexAttention
section runs on the CPU (forward only, as PyTorch allows there), as the notebook's first version ran
it whenever the version allowed; its later version also asks for CUDA. One torch.manual_seed(123)
at the top, so every module's weights agree between the libraries."""
import importlib
import math

import numpy as np
from packaging.version import parse as parse_version

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def mha_variants(torch, init=None, batch_size=2, context_len=16, embed_dim=48, num_heads=4):
    nn = torch.nn
    results = {}
    with captured_run(torch, 123) as out:
        torch.manual_seed(123)
        if torch.backends.mps.is_available():
            device = torch.device("mps")  # Apple Silicon GPU (Metal)
        elif torch.cuda.is_available():
            device = torch.device("cuda")  # NVIDIA GPU
        else:
            device = torch.device("cpu")  # CPU fallback
        embeddings = torch.randn((batch_size, context_len, embed_dim), device=device)

        class CausalAttention(nn.Module):

            def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
                super().__init__()
                self.d_out = d_out
                self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.dropout = nn.Dropout(dropout)  # New
                self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))  # New

            def forward(self, x):
                b, num_tokens, d_in = x.shape  # New batch dimension b
                keys = self.W_key(x)
                queries = self.W_query(x)
                values = self.W_value(x)

                attn_scores = queries @ keys.transpose(1, 2)  # Changed transpose
                attn_scores.masked_fill_(  # New, _ ops are in-place
                    self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
                attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
                attn_weights = self.dropout(attn_weights)  # New

                context_vec = attn_weights @ values
                return context_vec

        class Ch03_MHA_Wrapper(nn.Module):

            def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                super().__init__()
                self.heads = nn.ModuleList(
                    [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                     for _ in range(num_heads)]
                )
                self.out_proj = nn.Linear(d_out * num_heads, d_out * num_heads)

            def forward(self, x):
                context_vec = torch.cat([head(x) for head in self.heads], dim=-1)
                return self.out_proj(context_vec)

        mha_ch03_wrapper = Ch03_MHA_Wrapper(
            d_in=embed_dim,
            d_out=embed_dim // num_heads,
            context_length=context_len,
            dropout=0.0,
            num_heads=num_heads,
            qkv_bias=False
        ).to(device)

        out1 = mha_ch03_wrapper(embeddings)
        print(out1.shape)

        class Ch03_MHA(nn.Module):
            def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                super().__init__()
                assert d_out % num_heads == 0, "d_out must be divisible by num_heads"

                self.d_out = d_out
                self.num_heads = num_heads
                self.head_dim = d_out // num_heads  # Reduce the projection dim to match desired output dim

                self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.out_proj = nn.Linear(d_out, d_out)  # Linear layer to combine head outputs
                self.dropout = nn.Dropout(dropout)
                self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

            def forward(self, x):
                b, num_tokens, d_in = x.shape

                keys = self.W_key(x)  # Shape: (b, num_tokens, d_out)
                queries = self.W_query(x)
                values = self.W_value(x)

                # We implicitly split the matrix by adding a `num_heads` dimension
                # Unroll last dim: (b, num_tokens, d_out) -> (b, num_tokens, num_heads, head_dim)
                keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
                values = values.view(b, num_tokens, self.num_heads, self.head_dim)
                queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

                # Transpose: (b, num_tokens, num_heads, head_dim) -> (b, num_heads, num_tokens, head_dim)
                keys = keys.transpose(1, 2)
                queries = queries.transpose(1, 2)
                values = values.transpose(1, 2)

                # Compute scaled dot-product attention (aka self-attention) with a causal mask
                attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head

                # Original mask truncated to the number of tokens and converted to boolean
                mask_bool = self.mask.bool()[:num_tokens, :num_tokens]

                # Use the mask to fill attention scores
                attn_scores.masked_fill_(mask_bool, -torch.inf)

                attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
                attn_weights = self.dropout(attn_weights)

                # Shape: (b, num_tokens, num_heads, head_dim)
                context_vec = (attn_weights @ values).transpose(1, 2)

                # Combine heads, where self.d_out = self.num_heads * self.head_dim
                context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
                context_vec = self.out_proj(context_vec)  # optional projection

                return context_vec

        mha_ch03 = Ch03_MHA(
            d_in=embed_dim,
            d_out=embed_dim,
            context_length=context_len,
            dropout=0.0,
            num_heads=num_heads,
            qkv_bias=False
        ).to(device)

        out2 = mha_ch03(embeddings)
        print(out2.shape)

        class MultiHeadAttentionCombinedQKV(nn.Module):
            def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
                super().__init__()

                assert d_out % num_heads == 0, "d_out is indivisible by num_heads"

                self.num_heads = num_heads
                self.context_length = context_length
                self.head_dim = d_out // num_heads

                self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
                self.proj = nn.Linear(d_out, d_out)
                self.dropout = nn.Dropout(dropout)

                self.register_buffer(
                    "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
                )

            def forward(self, x):
                batch_size, num_tokens, embed_dim = x.shape

                # (b, num_tokens, embed_dim) --> (b, num_tokens, 3 * embed_dim)
                qkv = self.qkv(x)

                # (b, num_tokens, 3 * embed_dim) --> (b, num_tokens, 3, num_heads, head_dim)
                qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)

                # (b, num_tokens, 3, num_heads, head_dim) --> (3, b, num_heads, num_tokens, head_dim)
                qkv = qkv.permute(2, 0, 3, 1, 4)

                # (3, b, num_heads, num_tokens, head_dim) -> 3 times (b, num_head, num_tokens, head_dim)
                queries, keys, values = qkv.unbind(0)

                # (b, num_heads, num_tokens, head_dim) --> (b, num_heads, num_tokens, num_tokens)
                attn_scores = queries @ keys.transpose(-2, -1)
                attn_scores = attn_scores.masked_fill(
                    self.mask.bool()[:num_tokens, :num_tokens], -torch.inf
                )

                attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
                attn_weights = self.dropout(attn_weights)

                # (b, num_heads, num_tokens, num_tokens) --> (b, num_heads, num_tokens, head_dim)
                context_vec = attn_weights @ values

                # (b, num_heads, num_tokens, head_dim) --> (b, num_tokens, num_heads, head_dim)
                context_vec = context_vec.transpose(1, 2)

                # (b, num_tokens, num_heads, head_dim) --> (b, num_tokens, embed_dim)
                context_vec = context_vec.contiguous().view(batch_size, num_tokens, embed_dim)

                context_vec = self.proj(context_vec)

                return context_vec

        mha_combined_qkv = MultiHeadAttentionCombinedQKV(
            d_in=embed_dim,
            d_out=embed_dim,
            context_length=context_len,
            dropout=0.0,
            num_heads=num_heads,
            qkv_bias=False
        ).to(device)

        out3 = mha_combined_qkv(embeddings)
        print(out3.shape)

        class MHAEinsum(nn.Module):

            def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                super().__init__()
                assert d_out % num_heads == 0, "d_out must be divisible by num_heads"

                self.d_out = d_out
                self.num_heads = num_heads
                self.head_dim = d_out // num_heads

                self.W_query = nn.Parameter(torch.randn(d_in, d_out))
                self.W_key = nn.Parameter(torch.randn(d_in, d_out))
                self.W_value = nn.Parameter(torch.randn(d_in, d_out))

                if qkv_bias:
                    self.bias_q = nn.Parameter(torch.zeros(d_out))
                    self.bias_k = nn.Parameter(torch.zeros(d_out))
                    self.bias_v = nn.Parameter(torch.zeros(d_out))
                else:
                    self.register_parameter("bias_q", None)
                    self.register_parameter("bias_k", None)
                    self.register_parameter("bias_v", None)

                self.out_proj = nn.Linear(d_out, d_out)
                self.dropout = nn.Dropout(dropout)
                self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
                self.reset_parameters()

            def reset_parameters(self):
                nn.init.kaiming_uniform_(self.W_query, a=math.sqrt(5))
                nn.init.kaiming_uniform_(self.W_key, a=math.sqrt(5))
                nn.init.kaiming_uniform_(self.W_value, a=math.sqrt(5))
                if self.bias_q is not None:
                    fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.W_query)
                    bound = 1 / math.sqrt(fan_in)
                    nn.init.uniform_(self.bias_q, -bound, bound)
                    nn.init.uniform_(self.bias_k, -bound, bound)
                    nn.init.uniform_(self.bias_v, -bound, bound)

            def forward(self, x):
                b, n, _ = x.shape

                # Calculate Q, K, V using einsum, first perform linear transformations
                Q = torch.einsum("bnd,do->bno", x, self.W_query)
                K = torch.einsum("bnd,do->bno", x, self.W_key)
                V = torch.einsum("bnd,do->bno", x, self.W_value)

                # Add biases if they are used
                if self.bias_q is not None:
                    Q += self.bias_q
                    K += self.bias_k
                    V += self.bias_v

                # Reshape for multi-head attention
                Q = Q.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                K = K.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                V = V.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

                # Scaled dot-product attention
                scores = torch.einsum("bhnd,bhmd->bhnm", Q, K) / (self.head_dim ** 0.5)

                # Apply mask
                mask = self.mask[:n, :n]
                scores = scores.masked_fill(mask.bool(), -torch.inf)

                # Softmax and dropout
                attn_weights = torch.softmax(scores, dim=-1)
                attn_weights = self.dropout(attn_weights)

                # Aggregate the attended context vectors
                context_vec = torch.einsum("bhnm,bhmd->bhnd", attn_weights, V)

                # Combine heads and project the output
                context_vec = context_vec.transpose(1, 2).reshape(b, n, self.d_out)
                context_vec = self.out_proj(context_vec)

                return context_vec

        mha_einsum = MHAEinsum(
            d_in=embed_dim,
            d_out=embed_dim,
            context_length=context_len,
            dropout=0.0,
            num_heads=num_heads,
            qkv_bias=False
        ).to(device)

        out4 = mha_einsum(embeddings)
        print(out4.shape)

        class MHAPyTorchScaledDotProduct(nn.Module):
            def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
                super().__init__()

                assert d_out % num_heads == 0, "d_out is indivisible by num_heads"

                self.num_heads = num_heads
                self.context_length = context_length
                self.head_dim = d_out // num_heads
                self.d_out = d_out

                self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
                self.proj = nn.Linear(d_out, d_out)
                self.dropout = dropout

            def forward(self, x):
                batch_size, num_tokens, embed_dim = x.shape

                # (b, num_tokens, embed_dim) --> (b, num_tokens, 3 * embed_dim)
                qkv = self.qkv(x)

                # (b, num_tokens, 3 * embed_dim) --> (b, num_tokens, 3, num_heads, head_dim)
                qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)

                # (b, num_tokens, 3, num_heads, head_dim) --> (3, b, num_heads, num_tokens, head_dim)
                qkv = qkv.permute(2, 0, 3, 1, 4)

                # (3, b, num_heads, num_tokens, head_dim) -> 3 times (b, num_heads, num_tokens, head_dim)
                queries, keys, values = qkv

                use_dropout = 0. if not self.training else self.dropout

                context_vec = nn.functional.scaled_dot_product_attention(
                    queries, keys, values, attn_mask=None, dropout_p=use_dropout, is_causal=True)

                # Combine heads, where self.d_out = self.num_heads * self.head_dim
                context_vec = context_vec.transpose(1, 2).contiguous().view(batch_size, num_tokens, self.d_out)

                context_vec = self.proj(context_vec)

                return context_vec

        mha_pytorch_scaled = MHAPyTorchScaledDotProduct(
            d_in=embed_dim,
            d_out=embed_dim,
            context_length=context_len,
            dropout=0.0,
            num_heads=num_heads,
            qkv_bias=False
        ).to(device)

        out5 = mha_pytorch_scaled(embeddings)
        print(out5.shape)

        class MHAPyTorchSDPAWithoutFlash(nn.Module):
            def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
                super().__init__()

                assert d_out % num_heads == 0, "d_out is indivisible by num_heads"

                self.num_heads = num_heads
                self.context_length = context_length
                self.head_dim = d_out // num_heads
                self.d_out = d_out

                self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
                self.proj = nn.Linear(d_out, d_out)
                self.dropout = dropout
                self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

            def forward(self, x):
                batch_size, num_tokens, embed_dim = x.shape

                # (b, num_tokens, embed_dim) --> (b, num_tokens, 3 * embed_dim)
                qkv = self.qkv(x)

                # (b, num_tokens, 3 * embed_dim) --> (b, num_tokens, 3, num_heads, head_dim)
                qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)

                # (b, num_tokens, 3, num_heads, head_dim) --> (3, b, num_heads, num_tokens, head_dim)
                qkv = qkv.permute(2, 0, 3, 1, 4)

                # (3, b, num_heads, num_tokens, head_dim) -> 3 times (b, num_heads, num_tokens, head_dim)
                queries, keys, values = qkv

                use_dropout = 0. if not self.training else self.dropout

                # Ensure attn_mask is compatible with expected shape and `batch_first=True`
                # No need to manually adjust for num_heads; ensure it's right for the sequence
                if self.context_length >= num_tokens:
                    attn_mask = self.mask[:num_tokens, :num_tokens]
                else:
                    attn_mask = self.mask[:self.context_length, :self.context_length]

                # SDPA uses True for positions that may participate in attention
                context_vec = nn.functional.scaled_dot_product_attention(
                    queries, keys, values, attn_mask=~attn_mask, dropout_p=use_dropout, is_causal=False)

                # Combine heads, where self.d_out = self.num_heads * self.head_dim
                context_vec = context_vec.transpose(1, 2).contiguous().view(batch_size, num_tokens, self.d_out)

                context_vec = self.proj(context_vec)

                return context_vec

        mha_pytorch_sdpa_no_flash = MHAPyTorchSDPAWithoutFlash(
            d_in=embed_dim,
            d_out=embed_dim,
            context_length=context_len,
            dropout=0.0,
            num_heads=num_heads,
            qkv_bias=False
        ).to(device)

        out6 = mha_pytorch_sdpa_no_flash(embeddings)
        print(out6.shape)

        class MHAPyTorchClass(nn.Module):
            def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False, need_weights=True):
                super().__init__()

                self.context_length = context_length
                self.multihead_attn = nn.MultiheadAttention(
                    embed_dim=d_out,
                    num_heads=num_heads,
                    dropout=dropout,
                    bias=qkv_bias,
                    add_bias_kv=qkv_bias,
                    batch_first=True,
                )

                self.need_weights = need_weights
                self.proj = nn.Linear(d_out, d_out)
                self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

            def forward(self, x):
                batch_size, num_tokens, _ = x.shape

                # Ensure attn_mask is compatible with expected shape and `batch_first=True`
                # No need to manually adjust for num_heads; ensure it's right for the sequence
                if self.context_length >= num_tokens:
                    attn_mask = self.mask[:num_tokens, :num_tokens]
                else:
                    attn_mask = self.mask[:self.context_length, :self.context_length]

                # attn_mask broadcasting will handle batch_size dimension implicitly
                attn_output, _ = self.multihead_attn(
                    x, x, x, attn_mask=attn_mask, need_weights=self.need_weights
                )

                output = self.proj(attn_output)

                return output

        mha_pytorch_class_default = MHAPyTorchClass(
            d_in=embed_dim,
            d_out=embed_dim,
            context_length=context_len,
            dropout=0.0,
            num_heads=num_heads,
            qkv_bias=False
        ).to(device)

        out7 = mha_pytorch_class_default(embeddings)
        print(out7.shape)

        mha_pytorch_class_noweights = MHAPyTorchClass(
            d_in=embed_dim,
            d_out=embed_dim,
            context_length=context_len,
            dropout=0.0,
            num_heads=num_heads,
            qkv_bias=False,
            need_weights=False  # NEW!
        ).to(device)

        out8 = mha_pytorch_class_noweights(embeddings)
        print(out8.shape)

        def normalize_version(version):
            parsed_version = parse_version(version)
            return parse_version(f"{parsed_version.major}.{parsed_version.minor}.{parsed_version.micro}")

        current_version = normalize_version(torch.__version__)
        MIN_TORCH_VERSION = "2.5.0"
        required_version = parse_version(MIN_TORCH_VERSION)

        if current_version >= required_version:
            flex = importlib.import_module(f"{torch.__name__}.nn.attention.flex_attention")
            flex_attention, create_block_mask = flex.flex_attention, flex.create_block_mask

        def causal(b, h, q_idx, kv_idx):
            return q_idx >= kv_idx

        class MHAPyTorchFlexAttention(nn.Module):

            def __init__(self, d_in, d_out, num_heads, context_length, dropout=0.0, qkv_bias=False):
                super().__init__()

                assert d_out % num_heads == 0, "d_out is indivisible by num_heads"

                self.num_heads = num_heads
                self.context_length = context_length
                self.head_dim = d_out // num_heads
                self.d_out = d_out

                self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
                self.proj = nn.Linear(d_out, d_out)
                self.dropout = dropout

            def forward(self, x):
                batch_size, num_tokens, embed_dim = x.shape

                # (b, num_tokens, embed_dim) --> (b, num_tokens, 3 * embed_dim)
                qkv = self.qkv(x)

                # (b, num_tokens, 3 * embed_dim) --> (b, num_tokens, 3, num_heads, head_dim)
                qkv = qkv.view(batch_size, num_tokens, 3, self.num_heads, self.head_dim)

                # (b, num_tokens, 3, num_heads, head_dim) --> (3, b, num_heads, num_tokens, head_dim)
                qkv = qkv.permute(2, 0, 3, 1, 4)

                # (3, b, num_heads, num_tokens, head_dim) -> 3 times (b, num_heads, num_tokens, head_dim)
                queries, keys, values = qkv

                # Instead, we create a fresh mask each time:
                attn_mask = create_block_mask(causal, B=None, H=None, Q_LEN=num_tokens, KV_LEN=num_tokens, device=x.device)

                context_vec = flex_attention(queries, keys, values, block_mask=attn_mask)

                # Combine heads, where self.d_out = self.num_heads * self.head_dim
                context_vec = context_vec.transpose(1, 2).contiguous().view(batch_size, num_tokens, self.d_out)

                context_vec = self.proj(context_vec)

                return context_vec

        if current_version >= required_version:
            mha_pytorch_flex = MHAPyTorchFlexAttention(
                d_in=embed_dim,
                d_out=embed_dim,
                context_length=context_len,
                dropout=0.0,
                num_heads=num_heads,
                qkv_bias=False
            ).to(device)

            with torch.no_grad():
                out9 = mha_pytorch_flex(embeddings)
            print(out9.shape)

        # The tests file: the einsum module with the chapter 3 module's weights gives its output
        def copy_weights(from_mha, to_mha):
            with torch.no_grad():
                to_mha.W_query.copy_(from_mha.W_query.weight.T)
                to_mha.W_key.copy_(from_mha.W_key.weight.T)
                to_mha.W_value.copy_(from_mha.W_value.weight.T)

                to_mha.out_proj.weight.copy_(from_mha.out_proj.weight)
                to_mha.out_proj.bias.copy_(from_mha.out_proj.bias)

        mha_linear = Ch03_MHA(d_in=embed_dim, d_out=embed_dim, context_length=context_len, dropout=0.0,
                              num_heads=num_heads, qkv_bias=False).eval()
        mha_einsum_copy = MHAEinsum(d_in=embed_dim, d_out=embed_dim, context_length=context_len, dropout=0.0,
                                    num_heads=num_heads, qkv_bias=False).eval()
        copy_weights(mha_linear, mha_einsum_copy)
        x = torch.randn(batch_size, context_len, embed_dim)
        out_linear = mha_linear(x)
        out_einsum = mha_einsum_copy(x)
        assert out_linear.shape == out_einsum.shape == torch.Size([batch_size, context_len, embed_dim])
        print(torch.allclose(out_linear, out_einsum, atol=1e-5))

        model = MHAPyTorchSDPAWithoutFlash(d_in=12, d_out=12, context_length=4, dropout=0.0, num_heads=3,
                                           qkv_bias=False).eval()
        x = torch.randn(1, 4, 12)
        x_with_changed_future = x.clone()
        x_with_changed_future[:, 2:] += 10
        print(torch.allclose(model(x)[:, :2], model(x_with_changed_future)[:, :2], atol=1e-5))

        def forward_backward(func, embeddings):
            if embeddings.grad is not None:
                embeddings.grad.zero_()

            output = func(embeddings)
            loss = output.sum()
            loss.backward()

        embeddings.requires_grad_(True)
        grads = []
        for fn in (mha_ch03_wrapper, mha_ch03, mha_combined_qkv, mha_einsum, mha_pytorch_scaled,
                   mha_pytorch_sdpa_no_flash, mha_pytorch_class_default, mha_pytorch_class_noweights):
            forward_backward(fn, embeddings)
            grads.append(numpy_of(embeddings.grad))
        results["param_grads"] = {name: numpy_of(p.grad) for name, p in mha_pytorch_class_noweights.named_parameters()}
    results.update(printed=printed_lines(out), outs=[numpy_of(o) for o in (out1, out2, out3, out4, out5, out6, out7,
                                                                           out8, out9)],
                   grads=grads)
    return results


def test_mha_implementations():
    ref, got = compare_program(mha_variants, rtol=1e-4, atol=1e-5)
    assert got["printed"][-2:] == ["True", "True"]

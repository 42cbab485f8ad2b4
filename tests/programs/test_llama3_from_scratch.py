"""Sebastian Raschka's standalone Llama 3.2 from scratch (LLMs-from-scratch ch05/07_gpt_to_llama)
as written, at a toy size: FeedForward of three bias-free Linears with dtype=cfg["dtype"] and
F.silu gating, compute_rope_params with Llama 3's frequency smoothing (torch.where over
wavelengths, a boolean & of two comparisons), apply_rope through torch.cat((-x2, x1)) and
.to(dtype=x.dtype), GroupedQueryAttention with repeat_interleave(group_size, dim=1) and a bool
triu mask, nn.RMSNorm(eps=1e-5, dtype=...), non-persistent cos/sin buffers, the weights loaded
from NumPy arrays through the repository's assign(left, right, tensor_name) into nn.Parameter,
out_head tied to tok_emb; then logits, greedy generation and a few AdamW steps, in float32 and in
bfloat16 (the repository's default dtype)."""
import numpy as np
import pytest

from prog_helpers import assert_same_results, numpy_of, run_both

LLAMA32_CONFIG = {
    "vocab_size": 48,         # Vocabulary size
    "context_length": 16,     # Context length that was used to train the model
    "emb_dim": 32,            # Embedding dimension
    "n_heads": 4,             # Number of attention heads
    "n_layers": 2,            # Number of layers
    "hidden_dim": 64,         # Size of the intermediate dimension in FeedForward
    "n_kv_groups": 2,         # Key-Value groups for grouped-query attention
    "rope_base": 500_000.0,   # The base in RoPE's "theta"
    "rope_freq": {            # RoPE frequency scaling
        "factor": 32.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_context_length": 8,
    }
}


def llama3(torch, init=None, dtype="float32", steps=3):
    nn = torch.nn
    cfg = {**LLAMA32_CONFIG, "dtype": getattr(torch, dtype)}

    class FeedForward(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.fc1 = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], dtype=cfg["dtype"], bias=False)
            self.fc2 = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], dtype=cfg["dtype"], bias=False)
            self.fc3 = nn.Linear(cfg["hidden_dim"], cfg["emb_dim"], dtype=cfg["dtype"], bias=False)

        def forward(self, x):
            x_fc1 = self.fc1(x)
            x_fc2 = self.fc2(x)
            x = nn.functional.silu(x_fc1) * x_fc2
            return self.fc3(x)

    def compute_rope_params(head_dim, theta_base=10_000, context_length=4096, freq_config=None,
                            dtype=torch.float32):
        assert head_dim % 2 == 0, "Embedding dimension must be even"
        # Compute the inverse frequencies
        inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2, dtype=dtype)[: (head_dim // 2)].float()
                                         / head_dim))
        # Frequency adjustments
        if freq_config is not None:
            low_freq_wavelen = freq_config["original_context_length"] / freq_config["low_freq_factor"]
            high_freq_wavelen = freq_config["original_context_length"] / freq_config["high_freq_factor"]
            wavelen = 2 * torch.pi / inv_freq
            inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / freq_config["factor"], inv_freq)
            smooth_factor = (freq_config["original_context_length"] / wavelen - freq_config["low_freq_factor"]) / (
                freq_config["high_freq_factor"] - freq_config["low_freq_factor"])
            smoothed_inv_freq = ((1 - smooth_factor) * (inv_freq / freq_config["factor"])
                                 + smooth_factor * inv_freq)
            is_medium_freq = (wavelen <= low_freq_wavelen) & (wavelen >= high_freq_wavelen)
            inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
            inv_freq = inv_freq_llama
        # Generate position indices
        positions = torch.arange(context_length, dtype=dtype)
        # Compute the angles
        angles = positions.unsqueeze(1) * inv_freq.unsqueeze(0)  # Shape: (context_length, head_dim // 2)
        # Expand angles to match the head_dim
        angles = torch.cat([angles, angles], dim=1)  # Shape: (context_length, head_dim)
        # Precompute sine and cosine
        cos = torch.cos(angles)
        sin = torch.sin(angles)
        return cos, sin

    def apply_rope(x, cos, sin):
        # x: (batch_size, num_heads, seq_len, head_dim)
        batch_size, num_heads, seq_len, head_dim = x.shape
        assert head_dim % 2 == 0, "Head dimension must be even"
        # Split x into first half and second half
        x1 = x[..., : head_dim // 2]  # First half
        x2 = x[..., head_dim // 2:]  # Second half
        # Adjust sin and cos shapes
        cos = cos[:seq_len, :].unsqueeze(0).unsqueeze(0)  # Shape: (1, 1, seq_len, head_dim)
        sin = sin[:seq_len, :].unsqueeze(0).unsqueeze(0)
        # Apply the rotary transformation
        rotated = torch.cat((-x2, x1), dim=-1)
        x_rotated = (x * cos) + (rotated * sin)
        # It's ok to use lower-precision after applying cos and sin rotation
        return x_rotated.to(dtype=x.dtype)

    class GroupedQueryAttention(nn.Module):
        def __init__(self, d_in, d_out, num_heads, num_kv_groups, dtype=None):
            super().__init__()
            assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
            assert num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups"
            self.d_out = d_out
            self.num_heads = num_heads
            self.head_dim = d_out // num_heads
            self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=False, dtype=dtype)
            self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=False, dtype=dtype)
            self.num_kv_groups = num_kv_groups
            self.group_size = num_heads // num_kv_groups
            self.W_query = nn.Linear(d_in, d_out, bias=False, dtype=dtype)
            self.out_proj = nn.Linear(d_out, d_out, bias=False, dtype=dtype)

        def forward(self, x, mask, cos, sin):
            b, num_tokens, d_in = x.shape
            queries = self.W_query(x)  # Shape: (b, num_tokens, d_out)
            keys = self.W_key(x)  # Shape: (b, num_tokens, num_kv_groups * head_dim)
            values = self.W_value(x)  # Shape: (b, num_tokens, num_kv_groups * head_dim)
            # Reshape queries, keys, and values
            queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
            keys = keys.view(b, num_tokens, self.num_kv_groups, self.head_dim)
            values = values.view(b, num_tokens, self.num_kv_groups, self.head_dim)
            # Transpose keys, values, and queries
            keys = keys.transpose(1, 2)  # Shape: (b, num_kv_groups, num_tokens, head_dim)
            values = values.transpose(1, 2)  # Shape: (b, num_kv_groups, num_tokens, head_dim)
            queries = queries.transpose(1, 2)  # Shape: (b, num_heads, num_tokens, head_dim)
            # Apply RoPE
            keys = apply_rope(keys, cos, sin)
            queries = apply_rope(queries, cos, sin)
            # Expand keys and values to match the number of heads
            keys = keys.repeat_interleave(self.group_size, dim=1)  # Shape: (b, num_heads, num_tokens, head_dim)
            values = values.repeat_interleave(self.group_size, dim=1)
            # Compute scaled dot-product attention (aka self-attention) with a causal mask
            attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head
            # Use the mask to fill attention scores
            attn_scores = attn_scores.masked_fill(mask, -torch.inf)
            attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
            assert keys.shape[-1] == self.head_dim
            # Shape: (b, num_tokens, num_heads, head_dim)
            context_vec = (attn_weights @ values).transpose(1, 2)
            # Combine heads, where self.d_out = self.num_heads * self.head_dim
            context_vec = context_vec.reshape(b, num_tokens, self.d_out)
            context_vec = self.out_proj(context_vec)  # optional projection
            return context_vec

    class TransformerBlock(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.att = GroupedQueryAttention(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"], num_heads=cfg["n_heads"],
                                             num_kv_groups=cfg["n_kv_groups"], dtype=cfg["dtype"])
            self.ff = FeedForward(cfg)
            self.norm1 = nn.RMSNorm(cfg["emb_dim"], eps=1e-5, dtype=cfg["dtype"])
            self.norm2 = nn.RMSNorm(cfg["emb_dim"], eps=1e-5, dtype=cfg["dtype"])

        def forward(self, x, mask, cos, sin):
            # Shortcut connection for attention block
            shortcut = x
            x = self.norm1(x)
            x = self.att(x, mask, cos, sin)  # Shape [batch_size, num_tokens, emb_size]
            x = x + shortcut  # Add the original input back
            # Shortcut connection for feed-forward block
            shortcut = x
            x = self.norm2(x)
            x = self.ff(x)
            x = x + shortcut  # Add the original input back
            return x

    class Llama3Model(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            # Main model parameters
            self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"], dtype=cfg["dtype"])
            self.trf_blocks = nn.ModuleList(  # ModuleList since Sequential can only accept one input, and we need `x, mask, cos, sin`
                [TransformerBlock(cfg) for _ in range(cfg["n_layers"])]
            )
            self.final_norm = nn.RMSNorm(cfg["emb_dim"], eps=1e-5, dtype=cfg["dtype"])
            self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False, dtype=cfg["dtype"])
            # Reusable utilities
            cos, sin = compute_rope_params(head_dim=cfg["emb_dim"] // cfg["n_heads"], theta_base=cfg["rope_base"],
                                           context_length=cfg["context_length"], freq_config=cfg["rope_freq"])
            self.register_buffer("cos", cos, persistent=False)
            self.register_buffer("sin", sin, persistent=False)
            self.cfg = cfg

        def forward(self, in_idx):
            # Forward pass
            tok_embeds = self.tok_emb(in_idx)
            x = tok_embeds
            num_tokens = x.shape[1]
            mask = torch.triu(torch.ones(num_tokens, num_tokens, device=x.device, dtype=torch.bool), diagonal=1)
            for block in self.trf_blocks:
                x = block(x, mask, self.cos, self.sin)
            x = self.final_norm(x)
            logits = self.out_head(x.to(self.cfg["dtype"]))
            return logits

    def assign(left, right, tensor_name="unknown"):
        if left.shape != right.shape:
            raise ValueError(f"Shape mismatch in tensor '{tensor_name}'. Left: {left.shape}, Right: {right.shape}")
        if isinstance(right, torch.Tensor):
            return torch.nn.Parameter(right.clone().detach())
        else:
            return torch.nn.Parameter(torch.tensor(right))

    def load_weights_into_llama(model, param_config, params):
        model.tok_emb.weight = assign(model.tok_emb.weight, params["model.embed_tokens.weight"],
                                      "model.embed_tokens.weight")
        for l in range(param_config["n_layers"]):  # noqa: E741 (the repository's name)
            # The repository writes one assign per weight; the same pairs, as a table here.
            block = model.trf_blocks[l]
            for mod, hf in ((block.att.W_query, "self_attn.q_proj"), (block.att.W_key, "self_attn.k_proj"),
                            (block.att.W_value, "self_attn.v_proj"), (block.att.out_proj, "self_attn.o_proj"),
                            (block.norm1, "input_layernorm"), (block.ff.fc1, "mlp.gate_proj"),
                            (block.ff.fc2, "mlp.up_proj"), (block.ff.fc3, "mlp.down_proj"),
                            (block.norm2, "post_attention_layernorm")):
                name = f"model.layers.{l}.{hf}.weight"
                mod.weight = assign(mod.weight, params[name], name)
        # Load output layer weights
        model.final_norm.weight = assign(model.final_norm.weight, params["model.norm.weight"], "model.norm.weight")
        if "lm_head.weight" in params.keys():
            model.out_head.weight = assign(model.out_head.weight, params["lm_head.weight"], "lm_head.weight")
        else:
            model.out_head.weight = model.tok_emb.weight
            print("Model uses weight tying.")

    # "safetensors" weights as NumPy arrays, in the Hugging Face names and shapes
    rng = np.random.default_rng(0)
    E, H, KV = cfg["emb_dim"], cfg["hidden_dim"], cfg["emb_dim"] // cfg["n_heads"] * cfg["n_kv_groups"]
    shapes = {"model.embed_tokens.weight": (cfg["vocab_size"], E), "model.norm.weight": (E,)}
    shapes.update({f"model.layers.{l}.{hf}.weight": shape for l in range(cfg["n_layers"]) for hf, shape in (
        ("self_attn.q_proj", (E, E)), ("self_attn.k_proj", (KV, E)), ("self_attn.v_proj", (KV, E)),
        ("self_attn.o_proj", (E, E)), ("input_layernorm", (E,)), ("mlp.gate_proj", (H, E)), ("mlp.up_proj", (H, E)),
        ("mlp.down_proj", (E, H)), ("post_attention_layernorm", (E,)))})
    params = {k: (1.0 + 0.1 * rng.standard_normal(s) if len(s) == 1 else 0.2 * rng.standard_normal(s)).astype(np.float32)
              for k, s in shapes.items()}
    if dtype == "bfloat16":  # safetensors hands out bfloat16 tensors (NumPy has no bfloat16)
        params = {k: torch.tensor(v).to(torch.bfloat16) for k, v in params.items()}

    torch.manual_seed(123)
    model = Llama3Model(cfg)
    try:
        assign(model.tok_emb.weight, np.zeros((3, 3), np.float32), "bad")
    except ValueError as e:
        shape_error = str(e).replace("minitorch", "torch")
    load_weights_into_llama(model, cfg, params)
    tied = model.out_head.weight is model.tok_emb.weight
    buffers = sorted(k for k, _ in model.named_buffers())
    state_keys = sorted(model.state_dict())
    idx = torch.tensor(rng.integers(0, cfg["vocab_size"], (2, 10)))
    logits = model(idx)
    # greedy generation, as ch05's generate()
    out = idx[:1, :4]
    model.eval()
    for _ in range(5):
        with torch.no_grad():
            next_logits = model(out[:, -cfg["context_length"]:])[:, -1, :]
        out = torch.cat((out, torch.argmax(next_logits, dim=-1, keepdim=True)), dim=1)
    # a few AdamW steps on next-token prediction
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        logits_t = model(idx[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits_t.flatten(0, 1), idx[:, 1:].flatten())
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"shape_error": shape_error, "tied": tied, "buffers": buffers, "state_keys": state_keys,
            "logits": numpy_of(logits.float()), "logits_dtype": str(logits.dtype).split(".")[1],
            "cos": numpy_of(model.cos), "generated": numpy_of(out), "losses": losses,
            "emb": numpy_of(model.tok_emb.weight.float())}


@pytest.mark.parametrize("dtype,rtol,atol", [("float32", 2e-4, 2e-5), ("bfloat16", 3e-2, 3e-2)])
def test_llama32_from_scratch(dtype, rtol, atol):
    ref, got = run_both(llama3, dtype=dtype)
    if dtype == "bfloat16":  # a rounding step apart in bfloat16 can change which token is the argmax
        ref.pop("generated")
    assert_same_results(got, ref, rtol=rtol, atol=atol)
    assert got["tied"] and got["buffers"] == ["cos", "sin"] and "cos" not in got["state_keys"]
    assert got["logits_dtype"] == dtype
    assert ref["losses"][-1] < ref["losses"][0]

"""llm.c's train_gpt2.py, the PyTorch reference its C and CUDA trainers are checked against, at a
small size: NewGELU through math.sqrt(2.0 / math.pi) and torch.pow(input, 3.0), CausalSelfAttention
with c_attn split by qkv.split(self.n_embd, dim=2) and a registered tril "bias" buffer viewed to
(1, 1, T, T), GPT as an nn.ModuleDict of wte/wpe/h/ln_f with wte tied to lm_head, the inference-time
logits of x[:, [-1], :]; from_pretrained's copy of a checkpoint into model.state_dict() (the
Conv1D weights transposed with .t(), copy_ under torch.no_grad(), the .attn.bias buffers skipped),
the checkpoint here a dict of local arrays in place of the Hugging Face download; write_model and
write_state (a torch.zeros(256, dtype=torch.int32) header, parameters as float32 and as bfloat16
reinterpreted by t.view(torch.int16), x and y as int32, logits, loss and every gradient) into files
that are read back and compared byte for byte or value for value; the get_batch generator over
tokens[i:i+B*T].view(B, T); torch.optim.Adam(fused=...) stepped under a nullcontext, printing
"iteration {i}, loss: ..."; and generate() with temperature and top_k (torch.topk, then
logits[logits < v[:, [-1]]] = -float('Inf')) sampled by torch.multinomial from
torch.manual_seed(42), the same stream in both libraries. The later revision's configure_optimizers
(decay for dim() >= 2, 'fused' in inspect.signature(torch.optim.AdamW).parameters), its clipped
gradients (clip_grad_norm_) and warmup-then-decay get_lr run as a second variant."""
import inspect
import math
import os
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of
from test_nanogpt import generate

CONV1D = ['attn.c_attn.weight', 'attn.c_proj.weight', 'mlp.c_fc.weight', 'mlp.c_proj.weight']


def hf_checkpoint(config):
    """A GPT-2-shaped checkpoint as Hugging Face stores it (Conv1D weights as (in, out)), drawn by NumPy."""
    rng = np.random.default_rng(7)
    C, L, V, T = config["n_embd"], config["n_layer"], config["vocab_size"], config["block_size"]
    sd = {"transformer.wte.weight": rng.normal(0, 0.02, (V, C)), "transformer.wpe.weight": rng.normal(0, 0.01, (T, C))}
    for i in range(L):
        p = f"transformer.h.{i}."
        sd[p + "ln_1.weight"], sd[p + "ln_1.bias"] = 1 + rng.normal(0, 0.1, C), rng.normal(0, 0.1, C)
        sd[p + "attn.c_attn.weight"], sd[p + "attn.c_attn.bias"] = rng.normal(0, 0.02, (C, 3 * C)), rng.normal(0, 0.02, 3 * C)
        sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"] = rng.normal(0, 0.02, (C, C)), rng.normal(0, 0.02, C)
        sd[p + "attn.masked_bias"] = np.array(-1e4)
        sd[p + "ln_2.weight"], sd[p + "ln_2.bias"] = 1 + rng.normal(0, 0.1, C), rng.normal(0, 0.1, C)
        sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"] = rng.normal(0, 0.02, (C, 4 * C)), rng.normal(0, 0.02, 4 * C)
        sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"] = rng.normal(0, 0.02, (4 * C, C)), rng.normal(0, 0.02, C)
    sd["transformer.ln_f.weight"], sd["transformer.ln_f.bias"] = 1 + rng.normal(0, 0.1, C), rng.normal(0, 0.1, C)
    sd["lm_head.weight"] = sd["transformer.wte.weight"]
    return {k: v.astype(np.float32) for k, v in sd.items()}


def train_gpt2(torch, init=None, path=None, revision="reference"):
    nn = torch.nn
    F = torch.nn.functional
    printed = []

    def print0(*args, **kwargs):
        # modified print that only prints from the master process
        if int(os.environ.get("RANK", 0)) == 0:
            printed.append(" ".join(str(a) for a in args))

    class NewGELU(nn.Module):
        """Careful there are a few versions of GeLU, this one is the exact one used by OpenAI"""
        def forward(self, input):
            return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))

    class CausalSelfAttention(nn.Module):

        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            # key, query, value projections for all heads, but in a batch
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
            # output projection
            self.c_proj = nn.Linear(config.n_embd, config.n_embd)
            self.c_proj.LLMC_RESIDUAL_SCALE_FLAG = 1
            # regularization
            self.n_head = config.n_head
            self.n_embd = config.n_embd
            # not really a 'bias', more of a mask, but following the OpenAI/HF naming though
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))

        def forward(self, x):
            B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)
            qkv = self.c_attn(x)
            q, k, v = qkv.split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            if revision == "reference":
                # manual implementation of attention
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
                att = F.softmax(att, dim=-1)
                y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
            else:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # flash attention
            y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side
            # output projection
            y = self.c_proj(y)
            return y

    class MLP(nn.Module):

        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
            self.gelu = NewGELU() if revision == "reference" else nn.GELU(approximate='tanh')
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
            self.c_proj.LLMC_RESIDUAL_SCALE_FLAG = 1

        def forward(self, x):
            x = self.c_fc(x)
            x = self.gelu(x)
            x = self.c_proj(x)
            return x

    class Block(nn.Module):

        def __init__(self, config):
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.n_embd)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = nn.LayerNorm(config.n_embd)
            self.mlp = MLP(config)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            x = x + self.mlp(self.ln_2(x))
            return x

    @dataclass
    class GPTConfig:
        block_size: int = 1024
        vocab_size: int = 50257
        n_layer: int = 12
        n_head: int = 12
        n_embd: int = 768

    class GPT(nn.Module):

        def __init__(self, config):
            super().__init__()
            self.config = config

            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.lm_head.LLMC_SKIP_INIT = 1  # don't init this one, we will tie weights
            self.transformer.wte.weight = self.lm_head.weight  # https://paperswithcode.com/method/weight-tying
            if revision != "reference":
                # init all weights, use a torch rng object to be very careful
                self.init_rng = torch.Generator()
                self.init_rng.manual_seed(42)
                self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                # apply special scaled init to the residual projections, per GPT-2 paper
                std = 0.02 if not hasattr(module, 'LLMC_RESIDUAL_SCALE_FLAG') else 0.02 / math.sqrt(2 * self.config.n_layer)
                # we want to skip initializing lm_head, which shares parameters with wte
                # and wte was already initialized down below during the Embedding init
                if not hasattr(module, 'LLMC_SKIP_INIT'):
                    torch.nn.init.normal_(module.weight, mean=0.0, std=std, generator=self.init_rng)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02, generator=self.init_rng)

        def forward(self, idx, targets=None, return_logits=True):
            device = idx.device
            b, t = idx.size()
            assert t <= self.config.block_size, f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
            pos = torch.arange(0, t, dtype=torch.long, device=device)  # shape (t)

            # forward the GPT model itself
            tok_emb = self.transformer.wte(idx)  # token embeddings of shape (b, t, n_embd)
            pos_emb = self.transformer.wpe(pos)  # position embeddings of shape (t, n_embd)
            x = tok_emb + pos_emb

            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)

            if targets is not None:
                # if we are given some desired targets also calculate the loss
                logits = self.lm_head(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            else:
                # inference-time mini-optimization: only forward the lm_head on the very last position
                logits = self.lm_head(x[:, [-1], :])  # note: using list [-1] to preserve the time dim
                loss = None

            # there are performance reasons why not returning logits is prudent, if not needed
            if not return_logits:
                logits = None

            return logits, loss

        @classmethod
        def from_pretrained(cls, model_type):
            """Loads pretrained GPT-2 model weights (here: local arrays in Hugging Face's layout)"""
            print0("loading weights from pretrained gpt: %s" % model_type)
            config_args = {'tiny': dict(n_layer=2, n_head=2, n_embd=16)}[model_type]
            config_args['vocab_size'] = 50  # a small stand-in for GPT-2's 50257
            config_args['block_size'] = 16
            config = GPTConfig(**config_args)
            model = GPT(config)
            sd = model.state_dict()
            sd_keys = sd.keys()
            sd_keys = [k for k in sd_keys if not k.endswith('.attn.bias')]  # discard this mask / buffer, not a param

            # init a huggingface/transformers model
            sd_hf = {k: torch.from_numpy(v) for k, v in hf_checkpoint(config_args).items()}

            # copy while ensuring all of the parameters are aligned and match in names and shapes
            sd_keys_hf = sd_hf.keys()
            sd_keys_hf = [k for k in sd_keys_hf if not k.endswith('.attn.masked_bias')]  # ignore these, just a buffer
            sd_keys_hf = [k for k in sd_keys_hf if not k.endswith('.attn.bias')]  # same, just the mask (buffer)
            transposed = CONV1D
            assert len(sd_keys_hf) == len(sd_keys), f"mismatched keys: {len(sd_keys_hf)} != {len(sd_keys)}"
            for k in sd_keys_hf:
                if any(k.endswith(w) for w in transposed):
                    # special treatment for the Conv1D weights we need to transpose
                    assert sd_hf[k].shape[::-1] == sd[k].shape
                    with torch.no_grad():
                        sd[k].copy_(sd_hf[k].t())
                else:
                    # vanilla copy over the other parameters
                    assert sd_hf[k].shape == sd[k].shape
                    with torch.no_grad():
                        sd[k].copy_(sd_hf[k])

            return model

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            # start with all of the candidate parameters
            param_dict = {pn: p for pn, p in self.named_parameters()}
            # filter out those that do not require grad
            param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
            # create optim groups. Any parameters that is 2D will be weight decayed, otherwise no.
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
            optim_groups = [
                {'params': decay_params, 'weight_decay': weight_decay},
                {'params': nodecay_params, 'weight_decay': 0.0}
            ]
            num_decay_params = sum(p.numel() for p in decay_params)
            num_nodecay_params = sum(p.numel() for p in nodecay_params)
            print0(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} parameters")
            print0(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {num_nodecay_params:,} parameters")
            # Create AdamW optimizer and use the fused version if it is available
            fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
            use_fused = fused_available and device_type == 'cuda'
            print0(f"using fused AdamW: {use_fused}")
            optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, fused=use_fused)
            return optimizer

        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            # nanoGPT's generate, which llm.c's script carries unchanged
            return generate(torch, self, idx, max_new_tokens, temperature, top_k)

    # a few utilities for saving params/grads/activations to files for loading in C
    def write_fp32(tensor, file):
        t = tensor.detach().cpu().to(torch.float32)
        b = t.numpy().tobytes()
        file.write(b)

    def write_bf16(tensor, file):
        t = tensor.detach().cpu().to(torch.bfloat16)
        # numpy doesn't have bf16 datatype so we have to trick it
        t = t.view(torch.int16)  # trick: reinterpret as int16
        b = t.numpy().tobytes()
        file.write(b)

    def write_tensors(model_tensors, L, file, dtype):
        write_fun = write_fp32 if dtype == "float32" else write_bf16
        write_fun(model_tensors["transformer.wte.weight"], file)  # (V, C)
        write_fun(model_tensors["transformer.wpe.weight"], file)  # (T, C)
        for name in ["attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
                     "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"]:
            for i in range(L):
                write_fun(model_tensors[f"transformer.h.{i}.{name}"], file)
        # LayerNorms are at the end (kept in fp32)
        for name in ["ln_1.weight", "ln_1.bias", "ln_2.weight", "ln_2.bias"]:
            for i in range(L):
                write_fp32(model_tensors[f"transformer.h.{i}.{name}"], file)
        write_fp32(model_tensors["transformer.ln_f.weight"], file)  # (C, )
        write_fp32(model_tensors["transformer.ln_f.bias"], file)  # (C, )

    def write_model(model, filename, dtype):
        # 1) header is: version int, GPTConfig ints, padding to 1024 bytes
        assert dtype in {"float32", "bfloat16"}  # float16 todo maybe later
        version = {"float32": 2, "bfloat16": 3}[dtype]
        header = torch.zeros(256, dtype=torch.int32)
        header[0] = 20240326  # magic
        header[1] = version  # checkpoint version
        header[2] = model.config.block_size
        header[3] = model.config.vocab_size
        header[4] = model.config.n_layer
        header[5] = model.config.n_head
        header[6] = model.config.n_embd
        # 2) the parameters follow the header
        params = {name: param.cpu() for name, param in model.named_parameters()}
        with open(filename, "wb") as file:
            file.write(header.numpy().tobytes())
            write_tensors(params, model.config.n_layer, file, dtype)
        print0(f"wrote {os.path.basename(filename)}")

    def write_state(model, x, y, logits, loss, filename):
        header = torch.zeros(256, dtype=torch.int32)
        header[0] = 20240327  # magic
        header[1] = 2  # run state version = 2
        header[2] = x.size(0)  # batch size of the batch, B
        header[3] = x.size(1)  # temporal extent of the batch, T
        grads = {name: param.grad.cpu() for name, param in model.named_parameters()}
        with open(filename, "wb") as file:
            file.write(header.numpy().tobytes())
            file.write(x.cpu().numpy().astype("int32").tobytes())  # (B, T)
            file.write(y.cpu().numpy().astype("int32").tobytes())  # (B, T)
            write_fp32(logits.cpu(), file)
            write_fp32(loss.cpu(), file)
            write_tensors(grads, model.config.n_layer, file, "float32")
        print0(f"wrote {os.path.basename(filename)}")

    B, T = 4, 8
    num_iterations = 6
    device = "cpu"
    if torch.cuda.is_available():
        device = "cuda"
    elif hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
        device = "mps"
    print0(f"using device: {device}")
    ctx = torch.amp.autocast(device_type="cuda", dtype=torch.float32) if device == "cuda" else nullcontext()
    torch.manual_seed(42)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(42)
    torch.set_float32_matmul_precision('high')

    if revision == "reference":
        model = GPT.from_pretrained("tiny")
    else:
        model = GPT(GPTConfig(block_size=16, vocab_size=50, n_layer=2, n_head=2, n_embd=16))
    model.train()
    model.to(device)

    # np -> tensor, long, on device (the tokens file replaced by NumPy's draws)
    tokens = np.random.default_rng(3).integers(0, 50, 200).astype(np.int32)
    tokens = torch.tensor(tokens)
    tokens = tokens.to(torch.long)
    tokens = tokens.to(device)

    # lightweight dataloader
    def get_batch():
        assert B * T + 1 <= len(tokens), "not enough tokens"
        i = 0
        while True:
            x = tokens[i:i + B * T].view(B, T)
            y = tokens[i + 1:i + B * T + 1].view(B, T)
            yield x, y
            i += B * T
            if i + B * T + 1 >= len(tokens):
                i = 0  # in prod we'd want to randomize the start point a bit

    data_iter = iter(get_batch())
    x, y = next(data_iter)  # we'll overfit this batch below
    result = {"init_state": {k: numpy_of(v) for k, v in model.state_dict().items()}}

    if revision == "reference":
        logits, loss = model(x, y)
        loss.backward()
        files = {n: os.path.join(path, n) for n in ["gpt2_124M.bin", "gpt2_124M_bf16.bin", "gpt2_124M_debug_state.bin"]}
        write_model(model, files["gpt2_124M.bin"], dtype="float32")
        write_model(model, files["gpt2_124M_bf16.bin"], dtype="bfloat16")
        write_state(model, x, y, logits, loss, files["gpt2_124M_debug_state.bin"])
        raw = {n: open(f, "rb").read() for n, f in files.items()}
        result["model_f32"] = np.frombuffer(raw["gpt2_124M.bin"][1024:], dtype=np.float32).copy()
        result["bf16_bits"] = np.frombuffer(raw["gpt2_124M_bf16.bin"], dtype=np.int16).copy()
        result["state_ints"] = np.frombuffer(raw["gpt2_124M_debug_state.bin"][:1024 + 2 * 4 * B * T], dtype=np.int32).copy()
        result["state_floats"] = np.frombuffer(raw["gpt2_124M_debug_state.bin"][1024 + 2 * 4 * B * T:], dtype=np.float32).copy()
        adam_use_fused = device == "cuda"  # only works on CUDA (?)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, fused=adam_use_fused)
        get_lr = None
    else:
        optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95), device_type=device)
        warmup_iters, learning_rate_decay_frac, learning_rate = 2, 0.0, 1e-3

        def get_lr(it):
            min_lr = learning_rate * learning_rate_decay_frac
            # 1) linear warmup for warmup_iters steps
            if it < warmup_iters:
                return learning_rate * (it + 1) / warmup_iters
            # 2) if it > lr_decay_iters, return min learning rate
            if it > num_iterations:
                return min_lr
            # 3) in between, use cosine decay down to min learning rate
            decay_ratio = (it - warmup_iters) / (num_iterations - warmup_iters)
            assert 0 <= decay_ratio <= 1
            coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))  # coeff starts at 1 and goes to 0
            return min_lr + coeff * (learning_rate - min_lr)

    losses, norms = [], []
    for i in range(num_iterations):
        with ctx:
            if get_lr is None:
                logits, loss = model(x, y)
                del logits
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            else:
                model.train()
                optimizer.zero_grad(set_to_none=True)
                x, y = next(data_iter)
                _, loss = model(x, y, return_logits=False)
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                lr = get_lr(i)
                for param_group in optimizer.param_groups:
                    param_group['lr'] = lr
                optimizer.step()
                norms.append(norm.item())
        if device == "cuda":
            torch.cuda.synchronize()
        losses.append(loss.item())
        print0(f"iteration {i}, loss: {loss.item():.4f}")

    # one round of inference
    start_ids = [0]
    x = (torch.tensor(start_ids, dtype=torch.long, device=device)[None, ...])
    model.eval()
    y = model.generate(x, 12, temperature=1.0, top_k=8)
    print0(y[0].tolist())
    print0('---------------')
    result.update(losses=losses, norms=norms, printed="\n".join(printed),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


@pytest.mark.parametrize("revision", ["reference", "later"])
def test_train_gpt2(revision, tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    ref, got = compare_program(train_gpt2, rtol=1e-3, atol=1e-4, revision=revision, path=str(tmp_path / "pt"),
                               mt_options={"path": str(tmp_path / "mt")})
    assert ref["losses"][-1] < ref["losses"][0]
    if revision == "reference":
        np.testing.assert_array_equal(got["bf16_bits"], ref["bf16_bits"])
        assert ref["state_ints"][0] == 20240327
    else:
        assert "using fused AdamW: False" in got["printed"]

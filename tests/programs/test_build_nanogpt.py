"""Karpathy's build-nanogpt train_gpt2.py (the GPT-2 reproduction of "Let's reproduce GPT-2") as
published, made tiny: the edu_fineweb10B shards replaced by two small .npy token shards written
here in the same layout (edu_fineweb10B/edufineweb_{split}_NNNNNN.npy of uint16 ids), tiktoken's
gpt2 encoding replaced by a byte-level stand-in (encode/decode of UTF-8 bytes), HellaSwag's
download replaced by two local 4-way examples through get_most_likely_row. What it leans on: a
GPTConfig dataclass, nn.ModuleDict(dict(wte=..., h=nn.ModuleList(...))), weight tying
(self.transformer.wte.weight = self.lm_head.weight), self.apply(self._init_weights) with the
NANOGPT_SCALE_INIT attribute, qkv.split(self.n_embd, dim=2), F.scaled_dot_product_attention(q, k,
v, is_causal=True), nn.GELU(approximate='tanh'), configure_optimizers (param groups by p.dim(),
'fused' in inspect.signature(torch.optim.AdamW).parameters, AdamW(..., fused=use_fused)),
DataLoaderLite over np.load'ed shards (torch.tensor(npt, dtype=torch.long), views of slices),
torch.set_float32_matmul_precision('high'), torch.autocast(device_type=..., dtype=torch.bfloat16)
around the forward, gradient accumulation with loss_accum += loss.detach(), clip_grad_norm_
formatted with :.4f, the cosine get_lr written into every param_group, the log file, checkpoints
{'model', 'config', 'step', 'val_loss'} by torch.save, top-k sampling with torch.topk, a
torch.Generator(device=device) seeded 42 for torch.multinomial and torch.gather. The seed is
torch.manual_seed(1337) (both libraries draw PyTorch's CPU streams)."""
import inspect
import math
import os
import time
from dataclasses import dataclass

import numpy as np

from prog_helpers import Printed, compare_in_folders, numpy_of

TEXT = ("Hello, I'm a language model, and I write short lines of text about small models. "
        "The model reads bytes and learns which byte comes next. ") * 12


class ByteEncoding:  # stands in for tiktoken.get_encoding("gpt2")
    def encode(self, s):
        return list(s.encode("utf-8"))

    def decode(self, tokens):
        return bytes(t % 256 for t in tokens).decode("utf-8", errors="replace")


@dataclass
class GPTConfig:  # at module level, as in the script, so that the checkpoint can pickle it
    block_size: int = 1024  # max sequence length
    vocab_size: int = 50257  # number of tokens: 50,000 BPE merges + 256 bytes tokens + 1 <|endoftext|> token
    n_layer: int = 12  # number of layers
    n_head: int = 12  # number of heads
    n_embd: int = 768  # embedding dimension


def write_shards(data_root):
    ids = np.frombuffer(TEXT.encode("utf-8"), dtype=np.uint8).astype(np.uint16)
    os.makedirs(data_root, exist_ok=True)
    np.save(os.path.join(data_root, "edufineweb_val_000000.npy"), ids[:300])
    np.save(os.path.join(data_root, "edufineweb_train_000001.npy"), ids[300:700])
    np.save(os.path.join(data_root, "edufineweb_train_000002.npy"), ids[700:])


def train_gpt2(torch, init=None, workdir="."):
    nn = torch.nn
    F = torch.nn.functional
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    data_root = os.path.join(workdir, "edu_fineweb10B")
    write_shards(data_root)

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            # key, query, value projections for all heads, but in a batch
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
            # output projection
            self.c_proj = nn.Linear(config.n_embd, config.n_embd)
            self.c_proj.NANOGPT_SCALE_INIT = 1
            # regularization
            self.n_head = config.n_head
            self.n_embd = config.n_embd

        def forward(self, x):
            B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)
            qkv = self.c_attn(x)
            q, k, v = qkv.split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # flash attention
            y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side
            # output projection
            y = self.c_proj(y)
            return y

    class MLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
            self.gelu = nn.GELU(approximate='tanh')
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
            self.c_proj.NANOGPT_SCALE_INIT = 1

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
            # weight sharing scheme
            self.transformer.wte.weight = self.lm_head.weight
            # init params
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                std = 0.02
                if hasattr(module, 'NANOGPT_SCALE_INIT'):
                    std *= (2 * self.config.n_layer) ** -0.5
                torch.nn.init.normal_(module.weight, mean=0.0, std=std)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            # idx is of shape (B, T)
            B, T = idx.size()
            assert T <= self.config.block_size, \
                f"Cannot forward sequence of length {T}, block size is only {self.config.block_size}"
            # forward the token and posisition embeddings
            pos = torch.arange(0, T, dtype=torch.long, device=idx.device)  # shape (T)
            pos_emb = self.transformer.wpe(pos)  # position embeddings of shape (T, n_embd)
            tok_emb = self.transformer.wte(idx)  # token embeddings of shape (B, T, n_embd)
            x = tok_emb + pos_emb
            # forward the blocks of the transformer
            for block in self.transformer.h:
                x = block(x)
            # forward the final layernorm and the classifier
            x = self.transformer.ln_f(x)
            logits = self.lm_head(x)  # (B, T, vocab_size)
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
            return logits, loss

        def configure_optimizers(self, weight_decay, learning_rate, device_type):
            # start with all of the candidate parameters (that require grad)
            param_dict = {pn: p for pn, p in self.named_parameters()}
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
            if master_process:
                print(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} parameters")
                print(f"num non-decayed parameter tensors: {len(nodecay_params)}, "
                      f"with {num_nodecay_params:,} parameters")
            # Create AdamW optimizer and use the fused version if it is available
            fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
            use_fused = fused_available and device_type == "cuda"
            if master_process:
                print(f"using fused AdamW: {use_fused}")
            optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=(0.9, 0.95), eps=1e-8,
                                          fused=use_fused)
            return optimizer

    def load_tokens(filename):
        npt = np.load(filename)
        npt = npt.astype(np.int32)  # added after video
        ptt = torch.tensor(npt, dtype=torch.long)
        return ptt

    class DataLoaderLite:
        def __init__(self, B, T, process_rank, num_processes, split):
            self.B = B
            self.T = T
            self.process_rank = process_rank
            self.num_processes = num_processes
            assert split in {'train', 'val'}
            # get the shard filenames
            shards = os.listdir(data_root)
            shards = [s for s in shards if split in s]
            shards = sorted(shards)
            shards = [os.path.join(data_root, s) for s in shards]
            self.shards = shards
            assert len(shards) > 0, f"no shards found for split {split}"
            if master_process:
                print(f"found {len(shards)} shards for split {split}")
            self.reset()

        def reset(self):
            # state, init at shard zero
            self.current_shard = 0
            self.tokens = load_tokens(self.shards[self.current_shard])
            self.current_position = self.B * self.T * self.process_rank

        def next_batch(self):
            B, T = self.B, self.T
            buf = self.tokens[self.current_position: self.current_position + B * T + 1]
            x = (buf[:-1]).view(B, T)  # inputs
            y = (buf[1:]).view(B, T)  # targets
            # advance the position in the tensor
            self.current_position += B * T * self.num_processes
            # if loading the next batch would be out of bounds, advance to next shard
            if self.current_position + (B * T * self.num_processes + 1) > len(self.tokens):
                self.current_shard = (self.current_shard + 1) % len(self.shards)
                self.tokens = load_tokens(self.shards[self.current_shard])
                self.current_position = B * T * self.process_rank
            return x, y

    # helper function for HellaSwag eval
    def get_most_likely_row(tokens, mask, logits):
        # evaluate the autoregressive loss at all positions
        shift_logits = (logits[..., :-1, :]).contiguous()
        shift_tokens = (tokens[..., 1:]).contiguous()
        flat_shift_logits = shift_logits.view(-1, shift_logits.size(-1))
        flat_shift_tokens = shift_tokens.view(-1)
        shift_losses = F.cross_entropy(flat_shift_logits, flat_shift_tokens, reduction='none')
        shift_losses = shift_losses.view(tokens.size(0), -1)
        # now get the average loss just for the completion region (where mask == 1), in each row
        shift_mask = (mask[..., 1:]).contiguous()  # we must shift mask, so we start at the last prompt token
        masked_shift_losses = shift_losses * shift_mask
        # sum and divide by the number of 1s in the mask
        sum_loss = masked_shift_losses.sum(dim=1)
        avg_loss = sum_loss / shift_mask.sum(dim=1)
        # now we have a loss for each of the 4 completions
        # the one with the lowest loss is the most likely
        pred_norm = avg_loss.argmin().item()
        return pred_norm

    def iterate_examples(split):  # stands in for hellaswag.iterate_examples (a download)
        for ctx, endings, label in [("The model reads", [" bytes", " books", " lines", " text"], 0),
                                    ("Hello, I'm a", [" dog", " language model", " cat", " tree"], 1)]:
            yield dict(ctx=ctx, endings=endings, label=label)

    def render_example(example):  # hellaswag.render_example with the stand-in encoding
        ctx_tokens = enc.encode(example["ctx"])
        tok_rows, mask_rows = [], []
        for end in example["endings"]:
            end_tokens = enc.encode(end)
            tok_rows.append(ctx_tokens + end_tokens)
            mask_rows.append([0] * len(ctx_tokens) + [1] * len(end_tokens))
        max_len = max(len(row) for row in tok_rows)
        tokens = torch.zeros((4, max_len), dtype=torch.long)
        mask = torch.zeros((4, max_len), dtype=torch.long)
        for i, (tok_row, mask_row) in enumerate(zip(tok_rows, mask_rows)):
            tokens[i, :len(tok_row)] = torch.tensor(tok_row)
            mask[i, :len(mask_row)] = torch.tensor(mask_row)
        return None, tokens, mask, example["label"]

    # vanilla, non-DDP run
    ddp = False
    ddp_rank = 0
    ddp_world_size = 1
    master_process = True
    # attempt to autodetect device
    device = "cpu"
    if torch.cuda.is_available():
        device = "cuda"
    elif hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
        device = "mps"
    print(f"using device: {device}")
    # added after video, pytorch can be serious about it's device vs. device_type distinction
    device_type = "cuda" if device.startswith("cuda") else "cpu"

    torch.manual_seed(1337)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(1337)
    enc = ByteEncoding()

    total_batch_size = 128  # 2**19, ~0.5M, in number of tokens (2**7 here)
    B = 4  # micro batch size
    T = 16  # sequence length
    assert total_batch_size % (B * T * ddp_world_size) == 0, \
        "make sure total_batch_size is divisible by B * T * ddp_world_size"
    grad_accum_steps = total_batch_size // (B * T * ddp_world_size)
    if master_process:
        print(f"total desired batch size: {total_batch_size}")
        print(f"=> calculated gradient accumulation steps: {grad_accum_steps}")

    train_loader = DataLoaderLite(B=B, T=T, process_rank=ddp_rank, num_processes=ddp_world_size, split="train")
    val_loader = DataLoaderLite(B=B, T=T, process_rank=ddp_rank, num_processes=ddp_world_size, split="val")
    torch.set_float32_matmul_precision('high')

    # create model
    model = GPT(GPTConfig(block_size=32, vocab_size=256, n_layer=2, n_head=2, n_embd=32))
    model.to(device)
    use_compile = False  # torch.compile interferes with HellaSwag eval and Generation. TODO fix
    if use_compile:
        model = torch.compile(model)
    raw_model = model  # always contains the "raw" unwrapped model

    max_lr = 6e-4
    min_lr = max_lr * 0.1
    warmup_steps = 2
    max_steps = 6

    def get_lr(it):
        # 1) linear warmup for warmup_iters steps
        if it < warmup_steps:
            return max_lr * (it + 1) / warmup_steps
        # 2) if it > lr_decay_iters, return min learning rate
        if it > max_steps:
            return min_lr
        # 3) in between, use cosine decay down to min learning rate
        decay_ratio = (it - warmup_steps) / (max_steps - warmup_steps)
        assert 0 <= decay_ratio <= 1
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))  # coeff starts at 1 and goes to 0
        return min_lr + coeff * (max_lr - min_lr)

    # optimize!
    optimizer = raw_model.configure_optimizers(weight_decay=0.1, learning_rate=6e-4, device_type=device_type)

    # create the log directory we will write checkpoints to and log to
    log_dir = os.path.join(workdir, "log")
    os.makedirs(log_dir, exist_ok=True)
    log_file = os.path.join(log_dir, "log.txt")
    with open(log_file, "w") as f:  # open for writing to clear the file
        pass

    samples = []
    for step in range(max_steps):
        t0 = time.time()
        last_step = (step == max_steps - 1)

        # once in a while evaluate our validation loss
        if step % 3 == 0 or last_step:
            model.eval()
            val_loader.reset()
            with torch.no_grad():
                val_loss_accum = 0.0
                val_loss_steps = 2
                for _ in range(val_loss_steps):
                    x, y = val_loader.next_batch()
                    x, y = x.to(device), y.to(device)
                    with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
                        logits, loss = model(x, y)
                    loss = loss / val_loss_steps
                    val_loss_accum += loss.detach()
            if master_process:
                print(f"validation loss: {val_loss_accum.item():.4f}")
                with open(log_file, "a") as f:
                    f.write(f"{step} val {val_loss_accum.item():.4f}\n")
                if step > 0 and (step % 5000 == 0 or last_step):
                    # optionally write model checkpoints
                    checkpoint_path = os.path.join(log_dir, f"model_{step:05d}.pt")
                    checkpoint = {
                        'model': raw_model.state_dict(),
                        'config': raw_model.config,
                        'step': step,
                        'val_loss': val_loss_accum.item()
                    }
                    torch.save(checkpoint, checkpoint_path)

        # once in a while evaluate hellaswag
        if (step % 3 == 0 or last_step) and (not use_compile):
            num_correct_norm = 0
            num_total = 0
            for i, example in enumerate(iterate_examples("val")):
                # only process examples where i % ddp_world_size == ddp_rank
                if i % ddp_world_size != ddp_rank:
                    continue
                # render the example into tokens and labels
                _, tokens, mask, label = render_example(example)
                tokens = tokens.to(device)
                mask = mask.to(device)
                # get the logits
                with torch.no_grad():
                    with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
                        logits, loss = model(tokens)
                    pred_norm = get_most_likely_row(tokens, mask, logits)
                num_total += 1
                num_correct_norm += int(pred_norm == label)
            acc_norm = num_correct_norm / num_total
            if master_process:
                print(f"HellaSwag accuracy: {num_correct_norm}/{num_total}={acc_norm:.4f}")

        # once in a while generate from the model (except step 0, which is noise)
        if ((step > 0 and step % 3 == 0) or last_step) and (not use_compile):
            model.eval()
            num_return_sequences = 4
            max_length = 32
            tokens = enc.encode("Hello, I'm a language model,")
            tokens = torch.tensor(tokens, dtype=torch.long)
            tokens = tokens.unsqueeze(0).repeat(num_return_sequences, 1)
            xgen = tokens.to(device)
            sample_rng = torch.Generator(device=device)
            sample_rng.manual_seed(42 + ddp_rank)
            while xgen.size(1) < max_length:
                # forward the model to get the logits
                with torch.no_grad():
                    with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
                        logits, loss = model(xgen)  # (B, T, vocab_size)
                    # take the logits at the last position
                    logits = logits[:, -1, :]  # (B, vocab_size)
                    # get the probabilities
                    probs = F.softmax(logits, dim=-1)
                    # do top-k sampling of 50 (huggingface pipeline default)
                    topk_probs, topk_indices = torch.topk(probs, 50, dim=-1)
                    # select a token from the top-k probabilities
                    ix = torch.multinomial(topk_probs, 1, generator=sample_rng)  # (B, 1)
                    # gather the corresponding indices
                    xcol = torch.gather(topk_indices, -1, ix)  # (B, 1)
                    # append to the sequence
                    xgen = torch.cat((xgen, xcol), dim=1)
            # print the generated text
            for i in range(num_return_sequences):
                tokens = xgen[i, :max_length].tolist()
                decoded = enc.decode(tokens)
                # the script prints the decoded text; the top-k draws follow bfloat16 logits, which
                # differ in their last bit between the libraries, so the text goes under "own"
                samples.append(decoded)
                print(f"rank {ddp_rank} sample {i}: {len(tokens)} tokens")
            generated = xgen

        # do one step of the optimization
        model.train()
        optimizer.zero_grad()
        loss_accum = 0.0
        for micro_step in range(grad_accum_steps):
            x, y = train_loader.next_batch()
            x, y = x.to(device), y.to(device)
            with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
                logits, loss = model(x, y)
            # we have to scale the loss to account for gradient accumulation,
            # because the gradients are accumulated, so we need to scale the loss for each micro step
            loss = loss / grad_accum_steps
            loss_accum += loss.detach()
            loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        # determine and set the learning rate for this iteration
        lr = get_lr(step)
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr
        optimizer.step()
        if device_type == "cuda":
            torch.cuda.synchronize()  # wait for the GPU to finish work
        t1 = time.time()
        dt = t1 - t0  # time difference in seconds
        tokens_processed = train_loader.B * train_loader.T * grad_accum_steps * ddp_world_size
        tokens_per_sec = tokens_processed / max(dt, 1e-9)
        if master_process:
            print(f"step {step:5d} | loss: {loss_accum.item():.6f} | lr {lr:.4e} | norm: {norm:.4f} | "
                  f"tok/sec > 0: {tokens_per_sec > 0}")
            with open(log_file, "a") as f:
                f.write(f"{step} train {loss_accum.item():.6f}\n")

    checkpoint = torch.load(os.path.join(log_dir, f"model_{max_steps - 1:05d}.pt"), weights_only=False)
    with open(log_file) as f:
        log = f.read().splitlines()
    state = {k: numpy_of(v) for k, v in raw_model.state_dict().items()}
    # The tied embedding's rows of bytes that the batches rarely contain get gradients of rounding
    # size, which AdamW turns into steps of lr of either sign: compared by the losses only.
    tied = {k: state.pop(k) for k in ("transformer.wte.weight", "lm_head.weight")}
    return {"printed": Printed(printed), "log": Printed(log), "own": {"generated": numpy_of(generated), "samples": samples, **tied},
            "step": checkpoint["step"], "config": [checkpoint["config"].n_layer, checkpoint["config"].n_embd],
            "state": state}


def test_build_nanogpt_train_gpt2(tmp_path):
    # bfloat16 autocast rounds every matmul's inputs and outputs to 8 bits of mantissa: compare at
    # bfloat16's precision (PyTorch's oneDNN kernels and ours accumulate in a different order).
    ref, got = compare_in_folders(train_gpt2, tmp_path, "workdir", rtol=3e-2, atol=3e-3)
    assert ref["printed"][-1].startswith("step     5 | loss:")

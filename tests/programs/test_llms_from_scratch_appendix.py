"""LLMs-from-scratch appendices D and E as written: train_model with a linear learning-rate warmup
from initial_lr, cosine decay to min_lr written into every param_group's "lr", and gradient clipping
by clip_grad_norm_(max_norm=1.0) after the warmup; then LoRA for the chapter 6 classifier:
LoRALayer with A = nn.Parameter(torch.empty(in_dim, rank)) drawn by kaiming_uniform_(a=sqrt(5))
and B zeros, LinearWithLoRA, replace_linear_with_lora walking named_children with setattr,
every original parameter frozen, the trainable count, and a few AdamW steps. Both libraries draw
kaiming_uniform_ from torch.manual_seed(123), so the LoRA matrices must agree too."""
import math

from prog_helpers import compare_program, numpy_of, start_from
from test_llms_from_scratch import GPT_CONFIG, SPAM, TEXT, book, logged, make_tokenizer


def warmup_cosine(torch, init=None, n_epochs=3):
    b = book(torch)
    tokenizer, vocab = make_tokenizer()
    cfg = {**GPT_CONFIG, "vocab_size": len(vocab)}
    calc_loss_batch, log_evaluation = b["calc_loss_batch"], b["log_evaluation"]
    torch.manual_seed(123)
    train_loader = b["create_dataloader_v1"](TEXT, tokenizer, batch_size=4, max_length=cfg["context_length"],
                                             stride=cfg["context_length"], drop_last=True, shuffle=True)
    val_loader = b["create_dataloader_v1"](TEXT[-200:], tokenizer, batch_size=2, max_length=cfg["context_length"],
                                           stride=cfg["context_length"], drop_last=False, shuffle=False)
    model = b["GPTModel"](cfg)
    result = {}
    start_from(torch, model, init, result)
    device = torch.device("cpu")

    def train_model(model, train_loader, val_loader, optimizer, device, n_epochs, eval_freq, eval_iter,
                    start_context, tokenizer, warmup_steps, initial_lr=3e-05, min_lr=1e-6):
        train_losses, val_losses, track_tokens_seen, track_lrs = [], [], [], []
        tokens_seen, global_step = 0, -1
        # Retrieve the maximum learning rate from the optimizer
        peak_lr = optimizer.param_groups[0]["lr"]
        # Calculate the total number of iterations in the training process
        total_training_steps = len(train_loader) * n_epochs
        # Calculate the learning rate increment during the warmup phase
        lr_increment = (peak_lr - initial_lr) / warmup_steps
        for epoch in range(n_epochs):
            model.train()
            for input_batch, target_batch in train_loader:
                optimizer.zero_grad()
                global_step += 1
                # Adjust the learning rate based on the current phase (warmup or cosine annealing)
                if global_step < warmup_steps:
                    # Linear warmup
                    lr = initial_lr + global_step * lr_increment
                else:
                    # Cosine annealing after warmup
                    progress = ((global_step - warmup_steps) / (total_training_steps - warmup_steps))
                    lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))
                # Apply the calculated learning rate to the optimizer
                for param_group in optimizer.param_groups:
                    param_group["lr"] = lr
                track_lrs.append(lr)  # Store the current learning rate
                # Calculate and backpropagate the loss
                loss = calc_loss_batch(input_batch, target_batch, model, device)
                loss.backward()
                # Apply gradient clipping after the warmup phase to avoid exploding gradients
                if global_step > warmup_steps:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
                optimizer.step()
                tokens_seen += input_batch.numel()
                # Periodically evaluate the model on the training and validation sets
                if global_step % eval_freq == 0:
                    log_evaluation(model, train_loader, val_loader, device, eval_iter,
                                   (train_losses, val_losses, track_tokens_seen), tokens_seen, epoch, global_step,
                                   step_word="Iter")
        return train_losses, val_losses, track_tokens_seen, track_lrs

    peak_lr = 0.001
    optimizer = torch.optim.AdamW(model.parameters(), lr=peak_lr, weight_decay=0.1)
    total_steps = len(train_loader) * n_epochs
    warmup_steps = int(0.2 * total_steps)  # 20% warmup
    (train_losses, val_losses, tokens_seen, lrs), log = logged(
        train_model, model, train_loader, val_loader, optimizer, device, n_epochs=n_epochs, eval_freq=3,
        eval_iter=1, start_context="Every effort moves you", tokenizer=tokenizer, warmup_steps=warmup_steps,
        initial_lr=1e-5, min_lr=1e-5)
    result.update(train_losses=train_losses, val_losses=val_losses, tokens_seen=tokens_seen, lrs=lrs, log=log,
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def lora(torch, init=None, steps=4):
    b = book(torch, last_token=True)
    tokenizer, vocab = make_tokenizer(" ".join(t for t, _ in SPAM))
    cfg = {**GPT_CONFIG, "vocab_size": len(vocab), "context_length": 16, "drop_rate": 0.0}
    pad = vocab["<|endoftext|>"]

    class LoRALayer(torch.nn.Module):
        def __init__(self, in_dim, out_dim, rank, alpha):
            super().__init__()
            self.A = torch.nn.Parameter(torch.empty(in_dim, rank))
            torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))  # similar to standard weight initialization
            self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
            self.alpha = alpha

        def forward(self, x):
            x = self.alpha * (x @ self.A @ self.B)
            return x

    class LinearWithLoRA(torch.nn.Module):
        def __init__(self, linear, rank, alpha):
            super().__init__()
            self.linear = linear
            self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

        def forward(self, x):
            return self.linear(x) + self.lora(x)

    def replace_linear_with_lora(model, rank, alpha):
        for name, module in model.named_children():
            if isinstance(module, torch.nn.Linear):
                # Replace the Linear layer with LinearWithLoRA
                setattr(model, name, LinearWithLoRA(module, rank, alpha))
            else:
                # Recursively apply the same function to child modules
                replace_linear_with_lora(module, rank, alpha)

    model = b["GPTModel"](cfg)
    model.out_head = torch.nn.Linear(in_features=cfg["emb_dim"], out_features=2)
    result = {}
    start_from(torch, model, init, result)
    total_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    for param in model.parameters():
        param.requires_grad = False
    frozen = sum(p.numel() for p in model.parameters() if p.requires_grad)
    torch.manual_seed(123)
    replace_linear_with_lora(model, rank=4, alpha=8)
    lora_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    lora_A = {k: numpy_of(v) for k, v in model.named_parameters() if k.endswith("lora.A")}
    texts = [tokenizer.encode(t)[:10] for t, _ in SPAM]
    x = torch.tensor([t + [pad] * (10 - len(t)) for t in texts])
    y = torch.tensor([label for _, label in SPAM])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = b["calc_loss_batch"](x, y, model, torch.device("cpu"))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result.update(total_params=total_params, frozen=frozen, lora_params=lora_params, lora_A=lora_A, losses=losses,
                  names=[k for k, p in model.named_parameters() if p.requires_grad][:4],
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_llms_from_scratch_warmup_cosine_clipping():
    ref, got = compare_program(warmup_cosine)
    assert max(ref["lrs"]) > 5 * min(ref["lrs"])  # the warmup and the decay both happened
    assert "Iter 000003" in got["log"]


def test_llms_from_scratch_lora():
    ref, got = compare_program(lora)
    assert got["frozen"] == 0 and 0 < got["lora_params"] < got["total_params"]
    assert got["names"][0].endswith("W_query.lora.A")
    assert ref["losses"][-1] < ref["losses"][0]


def kv_cache(torch, init=None, max_new_tokens=6):
    """ch04/03_kv-cache's gpt_with_kv_cache.py: cache buffers registered as None
    (persistent=False) and grown by torch.cat, the mask rows picked by ptr_current_pos, position ids
    from current_pos, reset_kv_cache, and generate_text_simple_cached with and without the cache."""
    nn = torch.nn
    b = book(torch)
    tokenizer, vocab = make_tokenizer()
    cfg = {**GPT_CONFIG, "vocab_size": len(vocab), "context_length": 16}

    # The cache file repeats chapter 4's classes with use_cache threaded through; here they extend
    # the chapter's classes instead and write out only what the cache changes.
    class MultiHeadAttention(b["MultiHeadAttention"]):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
            self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1),
                                 persistent=False)
            self.register_buffer("cache_k", None, persistent=False)
            self.register_buffer("cache_v", None, persistent=False)
            self.ptr_current_pos = 0
            self.use_cache = False

        def forward(self, x):
            b, num_tokens, d_in = x.shape
            keys_new = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim)
            values_new = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim)
            queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim)
            if self.use_cache:
                if self.cache_k is None:
                    self.cache_k, self.cache_v = keys_new, values_new
                else:
                    self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
                    self.cache_v = torch.cat([self.cache_v, values_new], dim=1)
                keys, values = self.cache_k, self.cache_v
            else:
                keys, values = keys_new, values_new
            keys = keys.transpose(1, 2)
            queries = queries.transpose(1, 2)
            values = values.transpose(1, 2)
            attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head
            num_tokens_Q = queries.shape[-2]
            num_tokens_K = keys.shape[-2]
            if self.use_cache:
                mask_bool = self.mask.bool()[self.ptr_current_pos:self.ptr_current_pos + num_tokens_Q, :num_tokens_K]
                self.ptr_current_pos += num_tokens_Q
            else:
                mask_bool = self.mask.bool()[:num_tokens_Q, :num_tokens_K]
            attn_scores.masked_fill_(mask_bool, -torch.inf)
            attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
            context_vec = (attn_weights @ values).transpose(1, 2)
            return self.out_proj(context_vec.contiguous().view(b, num_tokens, self.d_out))

        def reset_cache(self):
            self.cache_k, self.cache_v = None, None
            self.ptr_current_pos = 0

    class TransformerBlock(b["TransformerBlock"]):
        def __init__(self, cfg):
            super().__init__(cfg)
            self.att = MultiHeadAttention(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"],
                                          context_length=cfg["context_length"], num_heads=cfg["n_heads"],
                                          dropout=cfg["drop_rate"], qkv_bias=cfg["qkv_bias"])

        def forward(self, x, use_cache=False):
            self.att.use_cache = use_cache
            return super().forward(x)

    class GPTModel(b["GPTModel"]):
        def __init__(self, cfg):
            super().__init__(cfg)
            self.trf_blocks = nn.ModuleList([TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
            self.current_pos = 0

        def forward(self, in_idx, use_cache=False):
            batch_size, seq_len = in_idx.shape
            tok_embeds = self.tok_emb(in_idx)
            if use_cache:
                pos_ids = torch.arange(self.current_pos, self.current_pos + seq_len, device=in_idx.device,
                                       dtype=torch.long)
                self.current_pos += seq_len
            else:
                pos_ids = torch.arange(0, seq_len, device=in_idx.device, dtype=torch.long)
            pos_embeds = self.pos_emb(pos_ids).unsqueeze(0)
            x = self.drop_emb(tok_embeds + pos_embeds)  # Shape [batch_size, num_tokens, emb_size]
            for blk in self.trf_blocks:
                x = blk(x, use_cache=use_cache)
            return self.out_head(self.final_norm(x))

        def reset_kv_cache(self):
            for blk in self.trf_blocks:
                blk.att.reset_cache()
            self.current_pos = 0

    def generate_text_simple_cached(model, idx, max_new_tokens, context_size=None, use_cache=True):
        model.eval()
        ctx_len = context_size or model.pos_emb.num_embeddings
        with torch.no_grad():
            if use_cache:
                # Init cache with full prompt
                model.reset_kv_cache()
                logits = model(idx[:, -ctx_len:], use_cache=True)
                for _ in range(max_new_tokens):
                    # a) pick the token with the highest log-probability (greedy sampling)
                    next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
                    # b) append it to the running sequence
                    idx = torch.cat([idx, next_idx], dim=1)
                    # c) feed model only the new token
                    logits = model(next_idx, use_cache=True)
            else:
                for _ in range(max_new_tokens):
                    logits = model(idx[:, -ctx_len:], use_cache=False)
                    next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
                    idx = torch.cat([idx, next_idx], dim=1)
        return idx

    torch.manual_seed(123)
    model = GPTModel(cfg)
    result = {}
    start_from(torch, model, init, result)
    encoded_tensor = torch.tensor(tokenizer.encode("Jack Gisburn rather a")).unsqueeze(0)
    cached = generate_text_simple_cached(model, encoded_tensor, max_new_tokens)
    cache_shape = list(model.trf_blocks[0].att.cache_k.shape)
    plain = generate_text_simple_cached(model, encoded_tensor, max_new_tokens, use_cache=False)
    result.update(cached=numpy_of(cached), plain=numpy_of(plain), cache_shape=cache_shape,
                  buffers=sorted(k for k, _ in model.named_buffers()), state_keys=len(model.state_dict()),
                  text=tokenizer.decode(cached.squeeze(0).tolist()))
    return result


def test_llms_from_scratch_kv_cache():
    ref, got = compare_program(kv_cache)
    assert (got["cached"] == got["plain"]).all()
    assert got["cache_shape"] == [1, 4 + 6, 2, 8]  # the prompt and every new token (each is fed back)
    assert got["buffers"] == ["trf_blocks.0.att.cache_k", "trf_blocks.0.att.cache_v", "trf_blocks.0.att.mask",
                              "trf_blocks.1.att.cache_k", "trf_blocks.1.att.cache_v", "trf_blocks.1.att.mask"]

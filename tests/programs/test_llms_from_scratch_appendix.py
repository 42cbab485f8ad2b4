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

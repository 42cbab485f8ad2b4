"""Karpathy's "Let's build GPT" lecture scripts (ng-video-lecture) as published, hyperparameters
made small and input.txt a local text: bigram.py (an Embedding(vocab_size, vocab_size) lookup
table, F.cross_entropy of logits.view(B*T, C)) and gpt.py (Head with a registered tril buffer and
masked_fill(self.tril[:T, :T] == 0, float('-inf')), MultiHeadAttention over an nn.ModuleList of
heads joined by torch.cat, FeedFoward, pre-LayerNorm Blocks in nn.Sequential(*[...]), Dropout
0.2 live during training); both with get_batch by torch.randint and torch.stack of slices taken
with tensor indices, estimate_loss under the @torch.no_grad() decorator filling losses[k] =
loss.item(), AdamW with zero_grad(set_to_none=True), and generate() by torch.multinomial,
printing as the scripts print. The seed is torch.manual_seed(1337) in both libraries (minitorch
draws PyTorch's CPU streams), so batches, dropout masks and samples agree number for number."""
import pytest

from prog_helpers import compare_program, numpy_of, start_from

TEXT = """Shall I compare thee to a summer's day?
Thou art more lovely and more temperate:
Rough winds do shake the darling buds of May,
And summer's lease hath all too short a date;
Sometime too hot the eye of heaven shines,
And often is his gold complexion dimm'd;
And every fair from fair sometime declines,
By chance or nature's changing course untrimm'd;
But thy eternal summer shall not fade,
Nor lose possession of that fair thou ow'st;
Nor shall death brag thou wander'st in his shade,
When in eternal lines to time thou grow'st:
So long as men can breathe or eyes can see,
So long lives this, and this gives life to thee.
"""


def lecture(torch, init=None, script="gpt"):
    nn = torch.nn
    F = torch.nn.functional
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    # hyperparameters
    batch_size = 8  # how many independent sequences will we process in parallel?
    block_size = 16  # what is the maximum context length for predictions?
    max_iters = 12
    eval_interval = 5
    learning_rate = 1e-2 if script == "bigram" else 3e-3
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    eval_iters = 4
    n_embd = 32
    n_head = 4
    n_layer = 2
    dropout = 0.2
    # ------------

    torch.manual_seed(1337)
    text = TEXT

    # here are all the unique characters that occur in this text
    chars = sorted(list(set(text)))
    vocab_size = len(chars)
    # create a mapping from characters to integers
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[c] for c in s]  # noqa: E731
    decode = lambda l: ''.join([itos[i] for i in l])  # noqa: E731,E741

    # Train and test splits
    data = torch.tensor(encode(text), dtype=torch.long)
    n = int(0.9 * len(data))  # first 90% will be train, rest val
    train_data = data[:n]
    val_data = data[n:]

    # data loading
    def get_batch(split):
        # generate a small batch of data of inputs x and targets y
        data = train_data if split == 'train' else val_data
        ix = torch.randint(len(data) - block_size, (batch_size,))
        x = torch.stack([data[i:i + block_size] for i in ix])
        y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
        x, y = x.to(device), y.to(device)
        return x, y

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ['train', 'val']:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    class Head(nn.Module):
        """ one head of self-attention """

        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))

            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k = self.key(x)   # (B,T,C)
            q = self.query(x)  # (B,T,C)
            # compute attention scores ("affinities")
            wei = q @ k.transpose(-2, -1) * C**-0.5  # (B, T, C) @ (B, C, T) -> (B, T, T)
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))  # (B, T, T)
            wei = F.softmax(wei, dim=-1)  # (B, T, T)
            wei = self.dropout(wei)
            # perform the weighted aggregation of the values
            v = self.value(x)  # (B,T,C)
            out = wei @ v  # (B, T, T) @ (B, T, C) -> (B, T, C)
            return out

    class MultiHeadAttention(nn.Module):
        """ multiple heads of self-attention in parallel """

        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(n_embd, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            out = torch.cat([h(x) for h in self.heads], dim=-1)
            out = self.dropout(self.proj(out))
            return out

    class FeedFoward(nn.Module):
        """ a simple linear layer followed by a non-linearity """

        def __init__(self, n_embd):
            super().__init__()
            self.net = nn.Sequential(
                nn.Linear(n_embd, 4 * n_embd),
                nn.ReLU(),
                nn.Linear(4 * n_embd, n_embd),
                nn.Dropout(dropout),
            )

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        """ Transformer block: communication followed by computation """

        def __init__(self, n_embd, n_head):
            # n_embd: embedding dimension, n_head: the number of heads we'd like
            super().__init__()
            head_size = n_embd // n_head
            self.sa = MultiHeadAttention(n_head, head_size)
            self.ffwd = FeedFoward(n_embd)
            self.ln1 = nn.LayerNorm(n_embd)
            self.ln2 = nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            x = x + self.ffwd(self.ln2(x))
            return x

    class BigramLanguageModel(nn.Module):
        # bigram.py's model: each token directly reads off the logits for the next token
        crop = False

        def __init__(self, vocab_size):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

        def forward(self, idx, targets=None):
            # idx and targets are both (B,T) tensor of integers
            logits = self.token_embedding_table(idx)  # (B,T,C)
            if targets is None:
                loss = None
            else:
                B, T, C = logits.shape
                loss = F.cross_entropy(logits.view(B * T, C), targets.view(B * T))
            return logits, loss

        def generate(self, idx, max_new_tokens):
            # idx is (B, T) array of indices in the current context
            for _ in range(max_new_tokens):
                # gpt.py crops idx to the last block_size tokens; bigram.py reads the whole context
                idx_cond = idx[:, -block_size:] if self.crop else idx
                logits, loss = self(idx_cond)  # get the predictions
                logits = logits[:, -1, :]  # focus only on the last time step: becomes (B, C)
                probs = F.softmax(logits, dim=-1)  # (B, C)
                idx_next = torch.multinomial(probs, num_samples=1)  # (B, 1)
                idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
            return idx

    class GPTLanguageModel(nn.Module):
        # gpt.py's model (the script calls it BigramLanguageModel too)
        crop = True

        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)  # final layer norm
            self.lm_head = nn.Linear(n_embd, vocab_size)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            tok_emb = self.token_embedding_table(idx)  # (B,T,C)
            pos_emb = self.position_embedding_table(torch.arange(T, device=device))  # (T,C)
            x = tok_emb + pos_emb  # (B,T,C)
            x = self.blocks(x)  # (B,T,C)
            x = self.ln_f(x)  # (B,T,C)
            logits = self.lm_head(x)  # (B,T,vocab_size)
            if targets is None:
                loss = None
            else:
                B, T, C = logits.shape
                logits = logits.view(B * T, C)
                targets = targets.view(B * T)
                loss = F.cross_entropy(logits, targets)
            return logits, loss

        generate = BigramLanguageModel.generate  # gpt.py's copy of it crops to block_size

    model = BigramLanguageModel(vocab_size) if script == "bigram" else GPTLanguageModel()
    m = model.to(device)
    result = {}
    start_from(torch, model, init, result)
    # print the number of parameters in the model
    print(sum(p.numel() for p in m.parameters()) / 1e6, 'M parameters')

    # create a PyTorch optimizer
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)

    losses_seen = []
    for iter in range(max_iters):
        # every once in a while evaluate the loss on train and val sets
        if iter % eval_interval == 0 or iter == max_iters - 1:
            losses = estimate_loss()
            print(f"step {iter}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        # sample a batch of data
        xb, yb = get_batch('train')
        # evaluate the loss
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses_seen.append(loss.item())

    # generate from the model
    context = torch.zeros((1, 1), dtype=torch.long, device=device)
    print(decode(m.generate(context, max_new_tokens=40)[0].tolist()))
    result.update(printed="\n".join(printed), losses=losses_seen,
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


@pytest.mark.parametrize("script", ["bigram", "gpt"])
def test_lecture_script(script):
    # Adam turns gradients that differ by rounding near zero into steps of lr: 1e-4 on weights.
    ref, got = compare_program(lecture, script=script, rtol=1e-3, atol=1e-4)
    assert ref["losses"][-1] < ref["losses"][0]
    assert "step 0: train loss" in got["printed"]

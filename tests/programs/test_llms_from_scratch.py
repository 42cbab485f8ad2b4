"""Sebastian Raschka's LLMs-from-scratch, chapters 2 to 7, as the book writes them, with the book's own
regex SimpleTokenizerV2 standing in for tiktoken: GPTDatasetV1 (sliding windows of token ids held
as torch.tensor per chunk) and create_dataloader_v1, token plus position embeddings; the attention
chapter's hand-rolled weights (inputs @ inputs.T, softmax, the tril-mask renormalisation,
masked_fill(mask.bool(), -torch.inf)), SelfAttention_v1 with nn.Parameter(torch.rand(...)),
CausalAttention with masked_fill_ on a registered triu buffer, MultiHeadAttentionWrapper and
MultiHeadAttention; the GPTModel chapter's own LayerNorm (var(unbiased=False)), GELU through
torch.sqrt(torch.tensor(2.0 / torch.pi)), FeedForward, TransformerBlock with drop_shortcut,
ExampleDeepNeuralNetwork's print_gradients and generate_text_simple; pretraining with
calc_loss_batch (logits.flatten(0, 1)), calc_loss_loader, evaluate_model, train_model_simple with
AdamW(weight_decay=0.1), generate with top-k through torch.where and temperature through
torch.multinomial, eos_id=None compared with ==, a checkpoint of model and optimizer state_dicts;
chapter 6's spam classifier (frozen parameters, a new out_head, the last block and final_norm
unfrozen, logits[:, -1, :], calc_accuracy_loader, classify_review) and chapter 7's instruction
fine-tuning (format_input, InstructionDataset, custom_collate_fn with ignore_index=-100 through
torch.nonzero(mask).squeeze(), functools.partial, responses cut out of the generated text).
Dropout and shuffling come from torch.manual_seed(123) in both libraries, as the book seeds them."""
import io
import re
from contextlib import redirect_stdout
from functools import partial

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

TEXT = ("I HAD always thought Jack Gisburn rather a cheap genius--though a good fellow enough--so it "
        "was no great surprise to me to hear that, in the height of his glory, he had dropped his "
        "painting, married a rich widow, and established himself in a villa on the Riviera. "
        "The height of his glory was the Riviera, and the widow was rich; the painting was dropped. "
        "It was no surprise: he had married, and the villa was a great villa. ") * 3


class SimpleTokenizerV2:
    """Chapter 2's tokenizer: the regex split, <|unk|> for unknown words; encode takes tiktoken's
    allowed_special keyword so the later chapters' calls run unchanged."""

    def __init__(self, vocab):
        self.str_to_int = vocab
        self.int_to_str = {i: s for s, i in vocab.items()}

    def encode(self, text, allowed_special=None):
        preprocessed = re.split(r'([,.:;?_!"()\']|--|\s)', text)
        preprocessed = [item.strip() for item in preprocessed if item.strip()]
        preprocessed = [item if item in self.str_to_int else "<|unk|>" for item in preprocessed]
        ids = [self.str_to_int[s] for s in preprocessed]
        return ids

    def decode(self, ids):
        text = " ".join([self.int_to_str[i] for i in ids])
        text = re.sub(r'\s+([,.:;?!"()\'])', r'\1', text)
        return text


def make_tokenizer(extra=""):
    preprocessed = re.split(r'([,.:;?_!"()\']|--|\s)', TEXT + extra)
    preprocessed = [item.strip() for item in preprocessed if item.strip()]
    all_tokens = sorted(set(preprocessed))
    all_tokens.extend(["<|endoftext|>", "<|unk|>"])
    vocab = {token: integer for integer, token in enumerate(all_tokens)}
    return SimpleTokenizerV2(vocab), vocab


def book(torch, last_token=False):
    """The book's classes and functions, written against the library passed in. last_token=True
    is chapter 6's calc_loss_batch (the classifier reads the last output token); its
    train_classifier_simple repeats train_model_simple's loop, so the chapter 6 program uses this one."""
    nn = torch.nn
    from_lib = torch.utils.data

    class GPTDatasetV1(from_lib.Dataset):
        def __init__(self, txt, tokenizer, max_length, stride):
            self.input_ids = []
            self.target_ids = []
            token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
            for i in range(0, len(token_ids) - max_length, stride):
                input_chunk = token_ids[i:i + max_length]
                target_chunk = token_ids[i + 1: i + max_length + 1]
                self.input_ids.append(torch.tensor(input_chunk))
                self.target_ids.append(torch.tensor(target_chunk))

        def __len__(self):
            return len(self.input_ids)

        def __getitem__(self, idx):
            return self.input_ids[idx], self.target_ids[idx]

    def create_dataloader_v1(txt, tokenizer, batch_size=4, max_length=256, stride=128, shuffle=True,
                             drop_last=True, num_workers=0):
        dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
        return from_lib.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                                   num_workers=num_workers)

    class SelfAttention_v1(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.W_query = nn.Parameter(torch.rand(d_in, d_out))
            self.W_key = nn.Parameter(torch.rand(d_in, d_out))
            self.W_value = nn.Parameter(torch.rand(d_in, d_out))

        def forward(self, x):
            keys = x @ self.W_key
            queries = x @ self.W_query
            values = x @ self.W_value
            attn_scores = queries @ keys.T  # omega
            attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
            context_vec = attn_weights @ values
            return context_vec

    class CausalAttention(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
            super().__init__()
            self.d_out = d_out
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))

        def forward(self, x):
            b, num_tokens, d_in = x.shape
            keys = self.W_key(x)
            queries = self.W_query(x)
            values = self.W_value(x)
            attn_scores = queries @ keys.transpose(1, 2)
            attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
            attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
            attn_weights = self.dropout(attn_weights)
            context_vec = attn_weights @ values
            return context_vec

    class MultiHeadAttentionWrapper(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                        for _ in range(num_heads)])

        def forward(self, x):
            return torch.cat([head(x) for head in self.heads], dim=-1)

    class MultiHeadAttention(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            assert (d_out % num_heads == 0), "d_out must be divisible by num_heads"
            self.d_out = d_out
            self.num_heads = num_heads
            self.head_dim = d_out // num_heads
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.out_proj = nn.Linear(d_out, d_out)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

        def forward(self, x):
            b, num_tokens, d_in = x.shape
            keys = self.W_key(x)  # Shape: (b, num_tokens, d_out)
            queries = self.W_query(x)
            values = self.W_value(x)
            keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
            values = values.view(b, num_tokens, self.num_heads, self.head_dim)
            queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
            keys = keys.transpose(1, 2)
            queries = queries.transpose(1, 2)
            values = values.transpose(1, 2)
            attn_scores = queries @ keys.transpose(2, 3)
            mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
            attn_scores.masked_fill_(mask_bool, -torch.inf)
            attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
            attn_weights = self.dropout(attn_weights)
            context_vec = (attn_weights @ values).transpose(1, 2)
            context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
            context_vec = self.out_proj(context_vec)
            return context_vec

    class LayerNorm(nn.Module):
        def __init__(self, emb_dim):
            super().__init__()
            self.eps = 1e-5
            self.scale = nn.Parameter(torch.ones(emb_dim))
            self.shift = nn.Parameter(torch.zeros(emb_dim))

        def forward(self, x):
            mean = x.mean(dim=-1, keepdim=True)
            var = x.var(dim=-1, keepdim=True, unbiased=False)
            norm_x = (x - mean) / torch.sqrt(var + self.eps)
            return self.scale * norm_x + self.shift

    class GELU(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return 0.5 * x * (1 + torch.tanh(
                torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))))

    class FeedForward(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.layers = nn.Sequential(
                nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
                GELU(),
                nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]),
            )

        def forward(self, x):
            return self.layers(x)

    class ExampleDeepNeuralNetwork(nn.Module):
        def __init__(self, layer_sizes, use_shortcut):
            super().__init__()
            self.use_shortcut = use_shortcut
            self.layers = nn.ModuleList([
                nn.Sequential(nn.Linear(layer_sizes[i], layer_sizes[i + 1]), GELU())
                for i in range(len(layer_sizes) - 1)])

        def forward(self, x):
            for layer in self.layers:
                layer_output = layer(x)
                if self.use_shortcut and x.shape == layer_output.shape:
                    x = x + layer_output
                else:
                    x = layer_output
            return x

    class TransformerBlock(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.att = MultiHeadAttention(
                d_in=cfg["emb_dim"], d_out=cfg["emb_dim"], context_length=cfg["context_length"],
                num_heads=cfg["n_heads"], dropout=cfg["drop_rate"], qkv_bias=cfg["qkv_bias"])
            self.ff = FeedForward(cfg)
            self.norm1 = LayerNorm(cfg["emb_dim"])
            self.norm2 = LayerNorm(cfg["emb_dim"])
            self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

        def forward(self, x):
            shortcut = x
            x = self.norm1(x)
            x = self.att(x)  # Shape [batch_size, num_tokens, emb_size]
            x = self.drop_shortcut(x)
            x = x + shortcut
            shortcut = x
            x = self.norm2(x)
            x = self.ff(x)
            x = self.drop_shortcut(x)
            x = x + shortcut
            return x

    class GPTModel(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
            self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
            self.drop_emb = nn.Dropout(cfg["drop_rate"])
            self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
            self.final_norm = LayerNorm(cfg["emb_dim"])
            self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

        def forward(self, in_idx):
            batch_size, seq_len = in_idx.shape
            tok_embeds = self.tok_emb(in_idx)
            pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
            x = tok_embeds + pos_embeds  # Shape [batch_size, num_tokens, emb_size]
            x = self.drop_emb(x)
            x = self.trf_blocks(x)
            x = self.final_norm(x)
            logits = self.out_head(x)
            return logits

    def generate_text_simple(model, idx, max_new_tokens, context_size):
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -context_size:]
            with torch.no_grad():
                logits = model(idx_cond)
            logits = logits[:, -1, :]
            probas = torch.softmax(logits, dim=-1)  # (batch, vocab_size)
            idx_next = torch.argmax(probas, dim=-1, keepdim=True)  # (batch, 1)
            idx = torch.cat((idx, idx_next), dim=1)  # (batch, n_tokens+1)
        return idx

    def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -context_size:]
            with torch.no_grad():
                logits = model(idx_cond)
            logits = logits[:, -1, :]
            if top_k is not None:
                top_logits, _ = torch.topk(logits, top_k)
                min_val = top_logits[:, -1]
                logits = torch.where(logits < min_val, torch.tensor(float("-inf")).to(logits.device), logits)
            if temperature > 0.0:
                logits = logits / temperature
                probs = torch.softmax(logits, dim=-1)  # (batch_size, context_len)
                idx_next = torch.multinomial(probs, num_samples=1)  # (batch_size, 1)
            else:
                idx_next = torch.argmax(logits, dim=-1, keepdim=True)  # (batch_size, 1)
            if idx_next == eos_id:
                break
            idx = torch.cat((idx, idx_next), dim=1)  # (batch_size, num_tokens+1)
        return idx

    def text_to_token_ids(text, tokenizer):
        encoded = tokenizer.encode(text, allowed_special={'<|endoftext|>'})
        encoded_tensor = torch.tensor(encoded).unsqueeze(0)  # add batch dimension
        return encoded_tensor

    def token_ids_to_text(token_ids, tokenizer):
        flat = token_ids.squeeze(0)  # remove batch dimension
        return tokenizer.decode(flat.tolist())

    def calc_loss_batch(input_batch, target_batch, model, device):
        input_batch, target_batch = input_batch.to(device), target_batch.to(device)
        if last_token:
            logits = model(input_batch)[:, -1, :]  # Logits of last output token
            return torch.nn.functional.cross_entropy(logits, target_batch)
        logits = model(input_batch)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
        return loss

    def calc_loss_loader(data_loader, model, device, num_batches=None):
        total_loss = 0.
        if len(data_loader) == 0:
            return float("nan")
        elif num_batches is None:
            num_batches = len(data_loader)
        else:
            num_batches = min(num_batches, len(data_loader))
        for i, (input_batch, target_batch) in enumerate(data_loader):
            if i < num_batches:
                loss = calc_loss_batch(input_batch, target_batch, model, device)
                total_loss += loss.item()
            else:
                break
        return total_loss / num_batches

    def evaluate_model(model, train_loader, val_loader, device, eval_iter):
        model.eval()
        with torch.no_grad():
            train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)
            val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)
        model.train()
        return train_loss, val_loss

    def log_evaluation(model, train_loader, val_loader, device, eval_iter, tracks, tokens_seen, epoch, global_step,
                       step_word="Step"):
        """What the book's training loops do every eval_freq steps (written out in each loop there):
        evaluate, append to the train/val/tokens tracks, print the losses."""
        train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
        for track, value in zip(tracks, (train_loss, val_loss, tokens_seen)):
            track.append(value)
        print(f"Ep {epoch+1} ({step_word} {global_step:06d}): "
              f"Train loss {train_loss:.3f}, Val loss {val_loss:.3f}")

    def generate_and_print_sample(model, tokenizer, device, start_context):
        model.eval()
        context_size = model.pos_emb.weight.shape[0]
        encoded = text_to_token_ids(start_context, tokenizer).to(device)
        with torch.no_grad():
            token_ids = generate_text_simple(model=model, idx=encoded, max_new_tokens=8, context_size=context_size)
        decoded_text = token_ids_to_text(token_ids, tokenizer)
        print(decoded_text.replace("\n", " "))  # Compact print format
        model.train()

    def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                           eval_freq, eval_iter, start_context, tokenizer):
        train_losses, val_losses, track_tokens_seen = [], [], []
        tokens_seen, global_step = 0, -1
        for epoch in range(num_epochs):
            model.train()
            for input_batch, target_batch in train_loader:
                optimizer.zero_grad()
                loss = calc_loss_batch(input_batch, target_batch, model, device)
                loss.backward()
                optimizer.step()
                tokens_seen += input_batch.numel()
                global_step += 1
                if global_step % eval_freq == 0:
                    log_evaluation(model, train_loader, val_loader, device, eval_iter,
                                   (train_losses, val_losses, track_tokens_seen), tokens_seen, epoch, global_step)
            generate_and_print_sample(model, tokenizer, device, start_context)
        return train_losses, val_losses, track_tokens_seen

    return dict(locals())


def logged(train, *args, **kwargs):
    """train(*args, **kwargs) and what it printed."""
    log = io.StringIO()
    with redirect_stdout(log):
        out = train(*args, **kwargs)
    return out, log.getvalue()


GPT_CONFIG = {"vocab_size": None, "context_length": 8, "emb_dim": 16, "n_heads": 2, "n_layers": 2,
              "drop_rate": 0.1, "qkv_bias": False}


def chapters_2_to_4(torch, init=None):
    nn = torch.nn
    b = book(torch)
    tokenizer, vocab = make_tokenizer()
    result = {}
    # chapter 2: the sliding-window dataset and embeddings
    torch.manual_seed(123)
    dataloader = b["create_dataloader_v1"](TEXT, tokenizer, batch_size=8, max_length=4, stride=4, shuffle=False)
    data_iter = iter(dataloader)
    inputs, targets = next(data_iter)
    token_embedding_layer = torch.nn.Embedding(len(vocab), 6)
    pos_embedding_layer = torch.nn.Embedding(4, 6)
    start_from(torch, {"tok": token_embedding_layer, "pos": pos_embedding_layer}, init and init["emb"],
               result.setdefault("emb", {}))
    token_embeddings = token_embedding_layer(inputs)
    pos_embeddings = pos_embedding_layer(torch.arange(4))
    input_embeddings = token_embeddings + pos_embeddings
    result.update(inputs=numpy_of(inputs), targets=numpy_of(targets), n_windows=len(dataloader.dataset),
                  input_embeddings=numpy_of(input_embeddings))
    # chapter 3: attention by hand, then the attention classes
    inputs = torch.tensor(
        [[0.43, 0.15, 0.89],  # Your     (x^1)
         [0.55, 0.87, 0.66],  # journey  (x^2)
         [0.57, 0.85, 0.64],  # starts   (x^3)
         [0.22, 0.58, 0.33],  # with     (x^4)
         [0.77, 0.25, 0.10],  # one      (x^5)
         [0.05, 0.80, 0.55]]  # step     (x^6)
    )
    query = inputs[1]
    attn_scores_2 = torch.empty(inputs.shape[0])
    for i, x_i in enumerate(inputs):
        attn_scores_2[i] = torch.dot(x_i, query)
    attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
    context_vec_2 = torch.zeros(query.shape)
    for i, x_i in enumerate(inputs):
        context_vec_2 += attn_weights_2[i] * x_i
    attn_scores = inputs @ inputs.T
    attn_weights = torch.softmax(attn_scores, dim=-1)
    all_context_vecs = attn_weights @ inputs
    context_length = attn_scores.shape[0]
    mask_simple = torch.tril(torch.ones(context_length, context_length))
    masked_simple = attn_weights * mask_simple
    row_sums = masked_simple.sum(dim=-1, keepdim=True)
    masked_simple_norm = masked_simple / row_sums
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    masked_weights = torch.softmax(masked / 3 ** 0.5, dim=1)
    torch.manual_seed(123)
    sa_v1 = b["SelfAttention_v1"](3, 2)
    start_from(torch, sa_v1, init and init["sa_v1"], result.setdefault("sa_v1", {}))
    batch = torch.stack((inputs, inputs), dim=0)
    torch.manual_seed(123)
    ca = b["CausalAttention"](3, 2, batch.shape[1], 0.0)
    mha_wrapper = b["MultiHeadAttentionWrapper"](3, 2, batch.shape[1], 0.0, num_heads=2)
    mha = b["MultiHeadAttention"](3, 2, batch.shape[1], 0.0, num_heads=2)
    start_from(torch, {"ca": ca, "wrap": mha_wrapper, "mha": mha}, init and init["attn"],
               result.setdefault("attn", {}))
    torch.manual_seed(123)
    dropout = torch.nn.Dropout(0.5)
    dropped = dropout(torch.ones(6, 6))
    result.update(attn_weights_2=numpy_of(attn_weights_2), context_vec_2=numpy_of(context_vec_2),
                  all_context_vecs=numpy_of(all_context_vecs), masked_simple_norm=numpy_of(masked_simple_norm),
                  masked_weights=numpy_of(masked_weights), sa_v1=numpy_of(sa_v1(inputs)),
                  ca=numpy_of(ca(batch)), wrap=numpy_of(mha_wrapper(batch)), mha=numpy_of(mha(batch)),
                  dropped=numpy_of(dropped), mask_buffers=[k for k, _ in mha.named_buffers()])
    # chapter 4: shortcut gradients, the GPT model, greedy generation
    layer_sizes = [3, 3, 3, 3, 3, 1]
    sample_input = torch.tensor([[1., 0., -1.]])
    grads = {}
    for use_shortcut in (False, True):
        torch.manual_seed(123)
        model = b["ExampleDeepNeuralNetwork"](layer_sizes, use_shortcut=use_shortcut)
        start_from(torch, model, init and init[f"deep{use_shortcut}"], result.setdefault(f"deep{use_shortcut}", {}))
        output = model(sample_input)
        target = torch.tensor([[0.]])
        loss = nn.MSELoss()
        loss = loss(output, target)
        loss.backward()
        for name, param in model.named_parameters():
            if 'weight' in name:
                grads[f"{use_shortcut} {name}"] = param.grad.abs().mean().item()
    cfg = {**GPT_CONFIG, "vocab_size": len(vocab)}
    torch.manual_seed(123)
    model = b["GPTModel"](cfg)
    start_from(torch, model, init and init["gpt"], result.setdefault("gpt", {}))
    batch = torch.stack([torch.tensor(tokenizer.encode(t)) for t in ("he had married a", "the villa was a")], dim=0)
    out = model(batch)
    total_params = sum(p.numel() for p in model.parameters())
    total_params_gpt2 = total_params - sum(p.numel() for p in model.out_head.parameters())
    total_size_mb = total_params * 4 / (1024 * 1024)
    block = b["TransformerBlock"](cfg)
    x = torch.rand(2, 4, cfg["emb_dim"])
    model.eval()
    encoded_tensor = torch.tensor(tokenizer.encode("Jack Gisburn was")).unsqueeze(0)
    out_ids = b["generate_text_simple"](model=model, idx=encoded_tensor, max_new_tokens=6,
                                        context_size=cfg["context_length"])
    decoded_text = tokenizer.decode(out_ids.squeeze(0).tolist())
    result.update(grads=grads, logits=numpy_of(out), total_params=total_params, total_params_gpt2=total_params_gpt2,
                  total_size_mb=total_size_mb, block_shape=list(block(x).shape), out_ids=numpy_of(out_ids),
                  decoded=decoded_text)
    return result


def pretraining(torch, init=None, num_epochs=3):
    b = book(torch)
    tokenizer, vocab = make_tokenizer()
    cfg = {**GPT_CONFIG, "vocab_size": len(vocab)}
    train_ratio = 0.90
    split_idx = int(train_ratio * len(TEXT))
    train_data = TEXT[:split_idx]
    val_data = TEXT[split_idx:]
    torch.manual_seed(123)
    train_loader = b["create_dataloader_v1"](train_data, tokenizer, batch_size=2, max_length=cfg["context_length"],
                                             stride=cfg["context_length"], drop_last=True, shuffle=True)
    val_loader = b["create_dataloader_v1"](val_data, tokenizer, batch_size=2, max_length=cfg["context_length"],
                                           stride=cfg["context_length"], drop_last=False, shuffle=False)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(123)
    model = b["GPTModel"](cfg)
    result = {}
    start_from(torch, model, init, result)
    model.to(device)
    with torch.no_grad():  # Disable gradient tracking for efficiency because we are not training, yet
        train_loss0 = b["calc_loss_loader"](train_loader, model, device)
        val_loss0 = b["calc_loss_loader"](val_loader, model, device)
    torch.manual_seed(123)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.004, weight_decay=0.1)
    (train_losses, val_losses, tokens_seen), log = logged(
        b["train_model_simple"], model, train_loader, val_loader, optimizer, device, num_epochs=num_epochs,
        eval_freq=5, eval_iter=5, start_context="Every effort moves you", tokenizer=tokenizer)
    model.to("cpu")
    model.eval()
    torch.manual_seed(123)
    greedy = b["generate"](model=model, idx=b["text_to_token_ids"]("the widow", tokenizer),
                           max_new_tokens=5, context_size=cfg["context_length"], top_k=None, temperature=0.0)
    torch.manual_seed(123)
    sampled = b["generate"](model=model, idx=b["text_to_token_ids"]("the widow", tokenizer),
                            max_new_tokens=5, context_size=cfg["context_length"], top_k=3, temperature=1.4)
    # the temperature section: sampling frequencies of a fixed distribution
    next_token_logits = torch.tensor([4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79])

    def softmax_with_temperature(logits, temperature):
        scaled_logits = logits / temperature
        return torch.softmax(scaled_logits, dim=0)

    probas = softmax_with_temperature(next_token_logits, 1.0)
    torch.manual_seed(123)
    sample = [torch.multinomial(probas, num_samples=1).item() for i in range(1_000)]
    sampled_ids = torch.bincount(torch.tensor(sample), minlength=len(probas))
    top_logits, top_pos = torch.topk(next_token_logits, 3)
    new_logits = torch.where(condition=next_token_logits < top_logits[-1], input=torch.tensor(float("-inf")),
                             other=next_token_logits)
    # save and resume
    buf = io.BytesIO()
    torch.save({"model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict()}, buf)
    buf.seek(0)
    checkpoint = torch.load(buf, weights_only=True)
    model2 = b["GPTModel"](cfg)
    model2.load_state_dict(checkpoint["model_state_dict"])
    optimizer2 = torch.optim.AdamW(model2.parameters(), lr=0.0005, weight_decay=0.1)
    optimizer2.load_state_dict(checkpoint["optimizer_state_dict"])
    model2.train()
    more, _ = logged(b["train_model_simple"], model2, train_loader, val_loader, optimizer2, device, num_epochs=1,
                     eval_freq=5, eval_iter=1, start_context="Every effort moves you", tokenizer=tokenizer)
    result.update(train_loss0=train_loss0, val_loss0=val_loss0, train_losses=train_losses, val_losses=val_losses,
                  tokens_seen=tokens_seen, log=log, greedy=numpy_of(greedy), sampled=numpy_of(sampled),
                  new_logits=numpy_of(new_logits), top_pos=numpy_of(top_pos), more=more,
                  state={k: numpy_of(v) for k, v in model2.state_dict().items()},
                  own={"freq": numpy_of(sampled_ids) / 1000.0, "probas": numpy_of(probas)})
    return result


SPAM = [("Free entry to win a rich villa, call now!", 1), ("Win a great prize: the villa is free, call now", 1),
        ("he had married a rich widow", 0), ("the painting was dropped", 0), ("call now to win the glory!", 1),
        ("Jack was no great genius", 0), ("It was a surprise to me", 0), ("free glory, win now", 1)]


def classification_finetuning(torch, init=None, num_epochs=2):
    b = book(torch, last_token=True)
    tokenizer, vocab = make_tokenizer(" ".join(t for t, _ in SPAM))
    pad_token_id = vocab["<|endoftext|>"]
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader

    class SpamDataset(Dataset):
        def __init__(self, data, tokenizer, max_length=None, pad_token_id=pad_token_id):
            self.data = data
            # Pre-tokenize texts
            self.encoded_texts = [tokenizer.encode(text) for text, _ in self.data]
            if max_length is None:
                self.max_length = self._longest_encoded_length()
            else:
                self.max_length = max_length
                # Truncate sequences if they are longer than max_length
                self.encoded_texts = [encoded_text[:self.max_length] for encoded_text in self.encoded_texts]
            # Pad sequences to the longest sequence
            self.encoded_texts = [encoded_text + [pad_token_id] * (self.max_length - len(encoded_text))
                                  for encoded_text in self.encoded_texts]

        def __getitem__(self, index):
            encoded = self.encoded_texts[index]
            label = np.int64(self.data[index][1])  # what pandas' .iloc[index]["Label"] hands out
            return (torch.tensor(encoded, dtype=torch.long), torch.tensor(label, dtype=torch.long))

        def __len__(self):
            return len(self.data)

        def _longest_encoded_length(self):
            max_length = 0
            for encoded_text in self.encoded_texts:
                encoded_length = len(encoded_text)
                if encoded_length > max_length:
                    max_length = encoded_length
            return max_length

    cfg = {**GPT_CONFIG, "vocab_size": len(vocab), "context_length": 16, "drop_rate": 0.0}
    train_dataset = SpamDataset(SPAM[:6], tokenizer=tokenizer)
    val_dataset = SpamDataset(SPAM[6:], max_length=train_dataset.max_length, tokenizer=tokenizer)
    torch.manual_seed(123)
    train_loader = DataLoader(dataset=train_dataset, batch_size=2, shuffle=True, num_workers=0, drop_last=True)
    val_loader = DataLoader(dataset=val_dataset, batch_size=2, num_workers=0, drop_last=False)
    model = b["GPTModel"](cfg)
    for param in model.parameters():
        param.requires_grad = False
    torch.manual_seed(123)
    num_classes = 2
    model.out_head = torch.nn.Linear(in_features=cfg["emb_dim"], out_features=num_classes)
    for param in model.trf_blocks[-1].parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    result = {}
    start_from(torch, model, init, result)
    device = torch.device("cpu")

    def calc_accuracy_loader(data_loader, model, device, num_batches=None):
        model.eval()
        correct_predictions, num_examples = 0, 0
        num_batches = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
        for i, (input_batch, target_batch) in enumerate(data_loader):
            if i >= num_batches:
                break
            input_batch, target_batch = input_batch.to(device), target_batch.to(device)
            with torch.no_grad():
                logits = model(input_batch)[:, -1, :]  # Logits of last output token
            predicted_labels = torch.argmax(logits, dim=-1)
            num_examples += predicted_labels.shape[0]
            correct_predictions += (predicted_labels == target_batch).sum().item()
        return correct_predictions / num_examples

    def classify_review(text, model, tokenizer, device, max_length=None, pad_token_id=pad_token_id):
        model.eval()
        input_ids = tokenizer.encode(text)
        supported_context_length = model.pos_emb.weight.shape[0]
        input_ids = input_ids[:min(max_length, supported_context_length)]
        input_ids += [pad_token_id] * (max_length - len(input_ids))
        input_tensor = torch.tensor(input_ids, device=device).unsqueeze(0)  # add batch dimension
        with torch.no_grad():
            logits = model(input_tensor)[:, -1, :]  # Logits of the last output token
        predicted_label = torch.argmax(logits, dim=-1).item()
        return "spam" if predicted_label == 1 else "not spam"

    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    torch.manual_seed(123)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.1)
    out, _ = logged(b["train_model_simple"], model, train_loader, val_loader, optimizer, device,
                    num_epochs=num_epochs, eval_freq=2, eval_iter=2, start_context="win", tokenizer=tokenizer)
    out += (calc_accuracy_loader(train_loader, model, device), calc_accuracy_loader(val_loader, model, device))
    reviews = [classify_review(t, model, tokenizer, device, max_length=train_dataset.max_length)
               for t in ("win a free villa now", "the widow was rich")]
    result.update(trainable=trainable, out=list(out), reviews=reviews, max_length=train_dataset.max_length,
                  frozen_grads=[p.grad is None for p in model.trf_blocks[0].parameters()],
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


INSTRUCTIONS = [
    {"instruction": "Name the painter.", "input": "", "output": "Jack Gisburn."},
    {"instruction": "Who was rich?", "input": "the widow", "output": "the widow was rich."},
    {"instruction": "Where was the villa?", "input": "", "output": "on the Riviera."},
    {"instruction": "What was dropped?", "input": "his painting", "output": "the painting was dropped."},
    {"instruction": "Was it a surprise?", "input": "", "output": "It was no surprise."},
]


def format_input(entry):
    instruction_text = (
        f"Below is an instruction that describes a task. "
        f"Write a response that appropriately completes the request."
        f"\n\n### Instruction:\n{entry['instruction']}"
    )
    input_text = f"\n\n### Input:\n{entry['input']}" if entry["input"] else ""
    return instruction_text + input_text


def instruction_finetuning(torch, init=None, num_epochs=2):
    b = book(torch)
    extra = " ".join(format_input(e) + f"\n\n### Response:\n{e['output']}" for e in INSTRUCTIONS)
    tokenizer, vocab = make_tokenizer(extra)
    pad = vocab["<|endoftext|>"]
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader

    class InstructionDataset(Dataset):
        def __init__(self, data, tokenizer):
            self.data = data
            # Pre-tokenize texts
            self.encoded_texts = []
            for entry in data:
                instruction_plus_input = format_input(entry)
                response_text = f"\n\n### Response:\n{entry['output']}"
                full_text = instruction_plus_input + response_text
                self.encoded_texts.append(tokenizer.encode(full_text))

        def __getitem__(self, index):
            return self.encoded_texts[index]

        def __len__(self):
            return len(self.data)

    def custom_collate_fn(batch, pad_token_id=pad, ignore_index=-100, allowed_max_length=None, device="cpu"):
        # Find the longest sequence in the batch
        batch_max_length = max(len(item) + 1 for item in batch)
        inputs_lst, targets_lst = [], []
        for item in batch:
            new_item = item.copy()
            # Add an <|endoftext|> token
            new_item += [pad_token_id]
            # Pad sequences to max_length
            padded = new_item + [pad_token_id] * (batch_max_length - len(new_item))
            inputs = torch.tensor(padded[:-1])  # Truncate the last token for inputs
            targets = torch.tensor(padded[1:])  # Shift +1 to the right for targets
            # Replace all but the first padding tokens in targets by ignore_index
            mask = targets == pad_token_id
            indices = torch.nonzero(mask).squeeze()
            if indices.numel() > 1:
                targets[indices[1:]] = ignore_index
            # Optionally truncate to maximum sequence length
            if allowed_max_length is not None:
                inputs = inputs[:allowed_max_length]
                targets = targets[:allowed_max_length]
            inputs_lst.append(inputs)
            targets_lst.append(targets)
        inputs_tensor = torch.stack(inputs_lst).to(device)
        targets_tensor = torch.stack(targets_lst).to(device)
        return inputs_tensor, targets_tensor

    device = torch.device("cpu")
    cfg = {**GPT_CONFIG, "vocab_size": len(vocab), "context_length": 48, "drop_rate": 0.0}
    customized_collate_fn = partial(custom_collate_fn, device=device, allowed_max_length=cfg["context_length"])
    inputs_1, inputs_2, inputs_3 = [0, 1, 2, 3, 4], [5, 6], [7, 8, 9]
    demo_inputs, demo_targets = custom_collate_fn([inputs_1, inputs_2, inputs_3])
    torch.manual_seed(123)
    train_loader = DataLoader(InstructionDataset(INSTRUCTIONS[:4], tokenizer), batch_size=2,
                              collate_fn=customized_collate_fn, shuffle=True, drop_last=True, num_workers=0)
    val_loader = DataLoader(InstructionDataset(INSTRUCTIONS[4:], tokenizer), batch_size=2,
                            collate_fn=customized_collate_fn, shuffle=False, drop_last=False, num_workers=0)
    model = b["GPTModel"](cfg)
    result = {}
    start_from(torch, model, init, result)
    torch.manual_seed(123)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.005, weight_decay=0.1)
    (train_losses, val_losses, tokens_seen), log = logged(
        b["train_model_simple"], model, train_loader, val_loader, optimizer, device, num_epochs=num_epochs,
        eval_freq=1, eval_iter=1, start_context=format_input(INSTRUCTIONS[0]), tokenizer=tokenizer)
    responses = []
    for entry in INSTRUCTIONS[:2]:
        input_text = format_input(entry)
        token_ids = b["generate"](model=model, idx=b["text_to_token_ids"](input_text, tokenizer).to(device),
                                  max_new_tokens=6, context_size=cfg["context_length"], eos_id=pad)
        generated_text = b["token_ids_to_text"](token_ids, tokenizer)
        response_text = generated_text[len(b["token_ids_to_text"](b["text_to_token_ids"](input_text, tokenizer),
                                                                  tokenizer)):].replace("### Response:", "").strip()
        responses.append(response_text)
    result.update(demo_inputs=numpy_of(demo_inputs), demo_targets=numpy_of(demo_targets), train_losses=train_losses,
                  val_losses=val_losses, tokens_seen=tokens_seen, log=log, responses=responses,
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_llms_from_scratch_data_attention_gpt_model():
    ref, got = compare_program(chapters_2_to_4)
    assert ref["grads"]["True layers.0.0.weight"] > 10 * ref["grads"]["False layers.0.0.weight"]
    assert ref["dropped"].sum() not in (0, 72)
    assert got["mask_buffers"] == ["mask"]


def test_llms_from_scratch_pretraining_generate_checkpoint():
    ref, got = compare_program(pretraining)
    assert ref["train_losses"][-1] < ref["train_losses"][0]
    assert "Ep 3 (Step" in got["log"]
    np.testing.assert_allclose(got["own"]["freq"], got["own"]["probas"], atol=0.05)


def test_llms_from_scratch_classification_finetuning():
    ref, got = compare_program(classification_finetuning)
    assert all(got["frozen_grads"])  # the frozen first block never got a gradient
    assert ref["trainable"] < sum(v.size for v in ref["init"].values())


def test_llms_from_scratch_instruction_finetuning():
    ref, got = compare_program(instruction_finetuning)
    assert (ref["demo_targets"] == -100).sum() == 5  # all pads after the first one
    assert ref["train_losses"][-1] < ref["train_losses"][0]

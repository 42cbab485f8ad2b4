"""Phillip Lippe's UvA deep-learning tutorial 6 ("Transformers and Multi-Head Attention") as
written, PyTorch Lightning replaced by the few lines of it that a run uses (a LightningModule base
whose save_hyperparameters() stores the __init__ arguments in self.hparams, and a loop that calls
training_step, backward, optimizer.step and, as the tutorial's optimizer_step override does, the
scheduler's step per iteration): scaled_dot_product with masked_fill(mask == 0, -9e15), expand_mask
to 4-D, a MultiheadAttention with one stacked qkv_proj (xavier_uniform_, bias.data.fill_(0)),
reshape / permute / chunk(3, dim=-1); EncoderBlock (post-norm, Dropout, ReLU(inplace=True)),
TransformerEncoder with get_attention_maps, PositionalEncoding registered with persistent=False,
CosineWarmupScheduler subclassing optim.lr_scheduler._LRScheduler (get_lr over self.base_lrs and
self.last_epoch), the ReverseDataset of torch.randint sequences and torch.flip labels, a DataLoader
with shuffle=True, drop_last=True and pin_memory=True, and ReversePredictor's loss over
F.one_hot(...).float() inputs and its accuracy. Sizes are smaller (2000 sequences of 16, one
epoch). Randomness from pl.seed_everything(42) (torch.manual_seed here): both libraries draw
PyTorch's CPU stream, weights, data and shuffles alike."""
import inspect
import math
from functools import partial

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of


def lightning_module(torch):
    """The part of pl.LightningModule these notebooks rely on: save_hyperparameters() keeps the
    calling __init__'s arguments (its **kwargs included) in self.hparams, read as attributes;
    log() keeps each logged value."""

    class AttributeDict(dict):
        __getattr__ = dict.__getitem__

    class LightningModule(torch.nn.Module):
        def save_hyperparameters(self):
            info = inspect.getargvalues(inspect.currentframe().f_back)
            hp = {k: info.locals[k] for k in info.args if k != "self"}
            hp.update(info.locals.get(info.keywords) or {})
            self.hparams = AttributeDict(hp)

        def log(self, name, value):
            self.logged = getattr(self, "logged", {})
            self.logged.setdefault(name, []).append(float(value.detach()))

    return LightningModule


def tutorial6(torch, init=None, size=2000, max_epochs=1):
    nn, optim, F, data = torch.nn, torch.optim, torch.nn.functional, torch.utils.data
    r = {}

    LightningModule = lightning_module(torch)

    torch.manual_seed(42)  # pl.seed_everything(42)

    def scaled_dot_product(q, k, v, mask=None):
        d_k = q.size()[-1]
        attn_logits = torch.matmul(q, k.transpose(-2, -1))
        attn_logits = attn_logits / math.sqrt(d_k)
        if mask is not None:
            attn_logits = attn_logits.masked_fill(mask == 0, -9e15)
        attention = F.softmax(attn_logits, dim=-1)
        values = torch.matmul(attention, v)
        return values, attention

    seq_len, d_k = 3, 2
    q = torch.randn(seq_len, d_k)
    k = torch.randn(seq_len, d_k)
    v = torch.randn(seq_len, d_k)
    values, attention = scaled_dot_product(q, k, v)
    r["sdp"] = [numpy_of(q), numpy_of(k), numpy_of(v), numpy_of(values), numpy_of(attention)]

    # Helper function to support different mask shapes.
    # Output shape supports (batch_size, number of heads, seq length, seq length)
    # If 2D: broadcasted over batch size and number of heads
    # If 3D: broadcasted over number of heads
    # If 4D: leave as is
    def expand_mask(mask):
        assert mask.ndim >= 2, "Mask must be at least 2-dimensional with seq_length x seq_length"
        if mask.ndim == 3:
            mask = mask.unsqueeze(1)
        while mask.ndim < 4:
            mask = mask.unsqueeze(0)
        return mask

    class MultiheadAttention(nn.Module):

        def __init__(self, input_dim, embed_dim, num_heads):
            super().__init__()
            assert embed_dim % num_heads == 0, "Embedding dimension must be 0 modulo number of heads."

            self.embed_dim = embed_dim
            self.num_heads = num_heads
            self.head_dim = embed_dim // num_heads

            # Stack all weight matrices 1...h together for efficiency
            # Note that in many implementations you see "bias=False" which is optional
            self.qkv_proj = nn.Linear(input_dim, 3 * embed_dim)
            self.o_proj = nn.Linear(embed_dim, embed_dim)

            self._reset_parameters()

        def _reset_parameters(self):
            # Original Transformer initialization, see PyTorch documentation
            nn.init.xavier_uniform_(self.qkv_proj.weight)
            self.qkv_proj.bias.data.fill_(0)
            nn.init.xavier_uniform_(self.o_proj.weight)
            self.o_proj.bias.data.fill_(0)

        def forward(self, x, mask=None, return_attention=False):
            batch_size, seq_length, _ = x.size()
            if mask is not None:
                mask = expand_mask(mask)
            qkv = self.qkv_proj(x)

            # Separate Q, K, V from linear output
            qkv = qkv.reshape(batch_size, seq_length, self.num_heads, 3 * self.head_dim)
            qkv = qkv.permute(0, 2, 1, 3)  # [Batch, Head, SeqLen, Dims]
            q, k, v = qkv.chunk(3, dim=-1)

            # Determine value outputs
            values, attention = scaled_dot_product(q, k, v, mask=mask)
            values = values.permute(0, 2, 1, 3)  # [Batch, SeqLen, Head, Dims]
            values = values.reshape(batch_size, seq_length, self.embed_dim)
            o = self.o_proj(values)

            if return_attention:
                return o, attention
            else:
                return o

    class EncoderBlock(nn.Module):

        def __init__(self, input_dim, num_heads, dim_feedforward, dropout=0.0):
            super().__init__()

            # Attention layer
            self.self_attn = MultiheadAttention(input_dim, input_dim, num_heads)

            # Two-layer MLP
            self.linear_net = nn.Sequential(
                nn.Linear(input_dim, dim_feedforward),
                nn.Dropout(dropout),
                nn.ReLU(inplace=True),
                nn.Linear(dim_feedforward, input_dim)
            )

            # Layers to apply in between the main layers
            self.norm1 = nn.LayerNorm(input_dim)
            self.norm2 = nn.LayerNorm(input_dim)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, mask=None):
            # Attention part
            attn_out = self.self_attn(x, mask=mask)
            x = x + self.dropout(attn_out)
            x = self.norm1(x)

            # MLP part
            linear_out = self.linear_net(x)
            x = x + self.dropout(linear_out)
            x = self.norm2(x)

            return x

    class TransformerEncoder(nn.Module):

        def __init__(self, num_layers, **block_args):
            super().__init__()
            self.layers = nn.ModuleList([EncoderBlock(**block_args) for _ in range(num_layers)])

        def forward(self, x, mask=None):
            for l in self.layers:
                x = l(x, mask=mask)
            return x

        def get_attention_maps(self, x, mask=None):
            attention_maps = []
            for l in self.layers:
                _, attn_map = l.self_attn(x, mask=mask, return_attention=True)
                attention_maps.append(attn_map)
                x = l(x)
            return attention_maps

    class PositionalEncoding(nn.Module):

        def __init__(self, d_model, max_len=5000):
            """
            Inputs
                d_model - Hidden dimensionality of the input.
                max_len - Maximum length of a sequence to expect.
            """
            super().__init__()

            # Create matrix of [SeqLen, HiddenDim] representing the positional encoding for max_len inputs
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0)

            # register_buffer => Tensor which is not a parameter, but should be part of the modules state.
            # Used for tensors that need to be on the same device as the module.
            # persistent=False tells PyTorch to not add the buffer to the state dict (e.g. when we save the model)
            self.register_buffer('pe', pe, persistent=False)

        def forward(self, x):
            x = x + self.pe[:, :x.size(1)]
            return x

    encod_block = PositionalEncoding(d_model=48, max_len=96)
    pe = encod_block.pe.squeeze().T.cpu().numpy()
    r["pe"] = [pe, sorted(encod_block.state_dict().keys()), [name for name, _ in encod_block.named_buffers()]]

    class CosineWarmupScheduler(optim.lr_scheduler._LRScheduler):

        def __init__(self, optimizer, warmup, max_iters):
            self.warmup = warmup
            self.max_num_iters = max_iters
            super().__init__(optimizer)

        def get_lr(self):
            lr_factor = self.get_lr_factor(epoch=self.last_epoch)
            return [base_lr * lr_factor for base_lr in self.base_lrs]

        def get_lr_factor(self, epoch):
            lr_factor = 0.5 * (1 + np.cos(np.pi * epoch / self.max_num_iters))
            if epoch <= self.warmup:
                lr_factor *= epoch * 1.0 / self.warmup
            return lr_factor

    # Needed for initializing the lr scheduler
    p = nn.Parameter(torch.empty(4, 4))
    optimizer = optim.Adam([p], lr=1e-3)
    lr_scheduler = CosineWarmupScheduler(optimizer=optimizer, warmup=100, max_iters=2000)
    epochs = list(range(2000))
    r["lr_factors"] = [lr_scheduler.get_lr_factor(e) for e in epochs]
    r["first_lr"] = [g["lr"] for g in optimizer.param_groups] + lr_scheduler.get_last_lr()

    class TransformerPredictor(LightningModule):

        def __init__(self, input_dim, model_dim, num_classes, num_heads, num_layers, lr, warmup, max_iters,
                     dropout=0.0, input_dropout=0.0):
            super().__init__()
            self.save_hyperparameters()
            self._create_model()

        def _create_model(self):
            # Input dim -> Model dim
            self.input_net = nn.Sequential(
                nn.Dropout(self.hparams.input_dropout),
                nn.Linear(self.hparams.input_dim, self.hparams.model_dim)
            )
            # Positional encoding for sequences
            self.positional_encoding = PositionalEncoding(d_model=self.hparams.model_dim)
            # Transformer
            self.transformer = TransformerEncoder(num_layers=self.hparams.num_layers,
                                                  input_dim=self.hparams.model_dim,
                                                  dim_feedforward=2 * self.hparams.model_dim,
                                                  num_heads=self.hparams.num_heads,
                                                  dropout=self.hparams.dropout)
            # Output classifier per sequence lement
            self.output_net = nn.Sequential(
                nn.Linear(self.hparams.model_dim, self.hparams.model_dim),
                nn.LayerNorm(self.hparams.model_dim),
                nn.ReLU(inplace=True),
                nn.Dropout(self.hparams.dropout),
                nn.Linear(self.hparams.model_dim, self.hparams.num_classes)
            )

        def forward(self, x, mask=None, add_positional_encoding=True):
            x = self.input_net(x)
            if add_positional_encoding:
                x = self.positional_encoding(x)
            x = self.transformer(x, mask=mask)
            x = self.output_net(x)
            return x

        @torch.no_grad()
        def get_attention_maps(self, x, mask=None, add_positional_encoding=True):
            x = self.input_net(x)
            if add_positional_encoding:
                x = self.positional_encoding(x)
            attention_maps = self.transformer.get_attention_maps(x, mask=mask)
            return attention_maps

        def configure_optimizers(self):
            optimizer = optim.Adam(self.parameters(), lr=self.hparams.lr)

            # Apply lr scheduler per step
            self.lr_scheduler = CosineWarmupScheduler(optimizer,
                                                      warmup=self.hparams.warmup,
                                                      max_iters=self.hparams.max_iters)
            return optimizer

    class ReverseDataset(data.Dataset):

        def __init__(self, num_categories, seq_len, size):
            super().__init__()
            self.num_categories = num_categories
            self.seq_len = seq_len
            self.size = size

            self.data = torch.randint(self.num_categories, size=(self.size, self.seq_len))

        def __len__(self):
            return self.size

        def __getitem__(self, idx):
            inp_data = self.data[idx]
            labels = torch.flip(inp_data, dims=(0,))
            return inp_data, labels

    dataset = partial(ReverseDataset, 10, 16)
    train_loader = data.DataLoader(dataset(size), batch_size=128, shuffle=True, drop_last=True, pin_memory=True)
    val_loader = data.DataLoader(dataset(size // 5), batch_size=128)
    inp_data, labels = train_loader.dataset[0]
    r["sample"] = [numpy_of(inp_data), numpy_of(labels)]

    class ReversePredictor(TransformerPredictor):

        def _calculate_loss(self, batch, mode="train"):
            # Fetch data and transform categories to one-hot vectors
            inp_data, labels = batch
            inp_data = F.one_hot(inp_data, num_classes=self.hparams.num_classes).float()

            # Perform prediction and calculate loss and accuracy
            preds = self.forward(inp_data, add_positional_encoding=True)
            loss = F.cross_entropy(preds.view(-1, preds.size(-1)), labels.view(-1))
            acc = (preds.argmax(dim=-1) == labels).float().mean()

            # Logging
            self.log(f"{mode}_loss", loss)
            self.log(f"{mode}_acc", acc)
            return loss, acc

        def training_step(self, batch, batch_idx):
            loss, _ = self._calculate_loss(batch, mode="train")
            return loss

        def validation_step(self, batch, batch_idx):
            _ = self._calculate_loss(batch, mode="val")

    model = ReversePredictor(input_dim=train_loader.dataset.num_categories, model_dim=32, num_heads=1,
                             num_classes=train_loader.dataset.num_categories, num_layers=1, dropout=0.0, lr=5e-4,
                             warmup=5, max_iters=max_epochs * len(train_loader))
    optimizer = model.configure_optimizers()
    for epoch in range(max_epochs):  # trainer.fit(model, train_loader, val_loader)
        model.train()
        for batch_idx, batch in enumerate(train_loader):
            loss = model.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            model.lr_scheduler.step()  # Step per iteration
        model.eval()
        with torch.no_grad():
            for batch_idx, batch in enumerate(val_loader):
                model.validation_step(batch, batch_idx)
    r["logged"] = model.logged
    r["lrs"] = model.lr_scheduler.get_last_lr()
    data_input, labels = next(iter(val_loader))
    inp_data = F.one_hot(data_input, num_classes=model.hparams.num_classes).float()
    attention_maps = model.get_attention_maps(inp_data)
    r["attention"] = [numpy_of(attention_maps[0][0, 0]), list(attention_maps[0].shape)]
    mask = torch.tril(torch.ones(16, 16))
    model.eval()
    r["masked"] = numpy_of(model(inp_data[:4], mask=mask))
    r["state"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return r


@pytest.mark.filterwarnings("ignore:'pin_memory' argument is set as true")  # no accelerator here
def test_uvadlc_transformer_tutorial():
    ref, got = compare_program(tutorial6, rtol=1e-3, atol=1e-4)
    assert "positional_encoding.pe" not in got["state"] and got["pe"][1] == [] and got["pe"][2] == ["pe"]
    assert len(got["logged"]["train_loss"]) == 2000 // 128

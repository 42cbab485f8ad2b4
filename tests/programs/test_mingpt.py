"""minGPT: a CfgNode config (attribute dict with merge_from_dict and a to_dict for printing), a GPT
with get_default_config(), NewGELU written with math.sqrt(2.0 / math.pi) and torch.pow,
CausalSelfAttention with a registered tril 'bias' buffer and masked_fill(... == 0,
float('-inf')), the parameter count by sum(p.numel() for p in self.transformer.parameters()),
configure_optimizers walking named_modules()/named_parameters() with fpn = '%s.%s' % (mn, pn)
if mn else pn into decay and no_decay sets by whitelist/blacklist module types, checks of
inter_params / union_params, AdamW groups with sorted(list(decay)) and betas; a Trainer with
a DataLoader over a RandomSampler(replacement=True, num_samples=...), callbacks by event
('on_batch_end'), iter_dt and time, model.zero_grad(set_to_none=True), clip_grad_norm_; and
generate() with do_sample=False through torch.topk(probs, k=1, dim=-1)."""
import math
import time
from collections import defaultdict

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


class CfgNode:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __str__(self):
        return self._str_helper(0)

    def _str_helper(self, indent):
        parts = []
        for k, v in self.__dict__.items():
            if isinstance(v, CfgNode):
                parts.append("%s:\n" % k)
                parts.append(v._str_helper(indent + 1))
            else:
                parts.append("%s: %s\n" % (k, v))
        return "".join(" " * (indent * 4) + p for p in parts)

    def to_dict(self):
        return {k: v.to_dict() if isinstance(v, CfgNode) else v for k, v in self.__dict__.items()}

    def merge_from_dict(self, d):
        self.__dict__.update(d)


def mingpt(torch, init=None, max_iters=5):
    nn, F = torch.nn, torch.nn.functional

    class NewGELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd)
            self.attn_dropout = nn.Dropout(config.attn_pdrop)
            self.resid_dropout = nn.Dropout(config.resid_pdrop)
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))
            self.n_head = config.n_head
            self.n_embd = config.n_embd

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.n_embd)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = nn.LayerNorm(config.n_embd)
            self.mlp = nn.ModuleDict(dict(
                c_fc=nn.Linear(config.n_embd, 4 * config.n_embd),
                c_proj=nn.Linear(4 * config.n_embd, config.n_embd),
                act=NewGELU(),
                dropout=nn.Dropout(config.resid_pdrop),
            ))
            m = self.mlp
            self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            x = x + self.mlpf(self.ln_2(x))
            return x

    class GPT(nn.Module):
        @staticmethod
        def get_default_config():
            C = CfgNode()
            C.model_type = 'gpt'
            C.n_layer = None
            C.n_head = None
            C.n_embd = None
            C.vocab_size = None
            C.block_size = None
            C.embd_pdrop = 0.1
            C.resid_pdrop = 0.1
            C.attn_pdrop = 0.1
            return C

        def __init__(self, config):
            super().__init__()
            assert config.vocab_size is not None
            assert config.block_size is not None
            self.block_size = config.block_size
            type_given = config.model_type is not None
            params_given = all([config.n_layer is not None, config.n_head is not None, config.n_embd is not None])
            assert type_given ^ params_given
            if type_given:
                config.merge_from_dict({'gpt-pico': dict(n_layer=2, n_head=2, n_embd=16)}[config.model_type])
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.embd_pdrop),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith('c_proj.weight'):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
            self.n_params = sum(p.numel() for p in self.transformer.parameters())

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            elif isinstance(module, nn.LayerNorm):
                torch.nn.init.zeros_(module.bias)
                torch.nn.init.ones_(module.weight)

        def configure_optimizers(self, train_config):
            decay = set()
            no_decay = set()
            whitelist_weight_modules = (torch.nn.Linear, )
            blacklist_weight_modules = (torch.nn.LayerNorm, torch.nn.Embedding)
            for mn, m in self.named_modules():
                for pn, p in m.named_parameters():
                    fpn = '%s.%s' % (mn, pn) if mn else pn
                    if pn.endswith('bias'):
                        no_decay.add(fpn)
                    elif pn.endswith('weight') and isinstance(m, whitelist_weight_modules):
                        decay.add(fpn)
                    elif pn.endswith('weight') and isinstance(m, blacklist_weight_modules):
                        no_decay.add(fpn)
            param_dict = {pn: p for pn, p in self.named_parameters()}
            inter_params = decay & no_decay
            union_params = decay | no_decay
            assert len(inter_params) == 0, "parameters %s made it into both decay/no_decay sets!" % (str(inter_params), )
            assert len(param_dict.keys() - union_params) == 0, \
                "parameters %s were not separated into either decay/no_decay set!" % (str(param_dict.keys() - union_params), )
            optim_groups = [
                {"params": [param_dict[pn] for pn in sorted(list(decay))], "weight_decay": train_config.weight_decay},
                {"params": [param_dict[pn] for pn in sorted(list(no_decay))], "weight_decay": 0.0},
            ]
            optimizer = torch.optim.AdamW(optim_groups, lr=train_config.learning_rate, betas=train_config.betas)
            return optimizer, (sorted(decay), sorted(no_decay))

        def forward(self, idx, targets=None):
            device = idx.device
            b, t = idx.size()
            assert t <= self.block_size, f"Cannot forward sequence of length {t}, block size is only {self.block_size}"
            pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0)
            tok_emb = self.transformer.wte(idx)
            pos_emb = self.transformer.wpe(pos)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            logits = self.lm_head(x)
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            return logits, loss

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, top_k)
                    logits[logits < v[:, [-1]]] = -float('Inf')
                probs = F.softmax(logits, dim=-1)
                if do_sample:
                    idx_next = torch.multinomial(probs, num_samples=1)
                else:
                    _, idx_next = torch.topk(probs, k=1, dim=-1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    class SortDataset(torch.utils.data.Dataset):
        def __init__(self, split, length=6, num_digits=3):
            self.length = length
            self.num_digits = num_digits
            rng = np.random.default_rng(0 if split == 'train' else 1)
            self.inputs = rng.integers(0, num_digits, (64, length))

        def __len__(self):
            return len(self.inputs)

        def get_vocab_size(self):
            return self.num_digits

        def get_block_size(self):
            return self.length * 2 - 1

        def __getitem__(self, idx):
            inp = torch.from_numpy(self.inputs[idx])
            sol = torch.sort(inp)[0]
            cat = torch.cat((inp, sol), dim=0)
            x = cat[:-1].clone()
            y = cat[1:].clone()
            y[:self.length - 1] = -1
            return x, y

    class Trainer:
        @staticmethod
        def get_default_config():
            C = CfgNode()
            C.device = 'auto'
            C.num_workers = 0
            C.max_iters = None
            C.batch_size = 8
            C.learning_rate = 5e-4
            C.betas = (0.9, 0.95)
            C.weight_decay = 0.1
            C.grad_norm_clip = 1.0
            return C

        def __init__(self, config, model, train_dataset):
            self.config = config
            self.model = model
            self.optimizer = None
            self.train_dataset = train_dataset
            self.callbacks = defaultdict(list)
            self.device = 'cuda' if config.device == 'auto' and torch.cuda.is_available() and False else 'cpu'
            self.model = self.model.to(self.device)
            self.iter_num = 0
            self.iter_time = 0.0
            self.iter_dt = 0.0

        def add_callback(self, onevent: str, callback):
            self.callbacks[onevent].append(callback)

        def trigger_callbacks(self, onevent: str):
            for callback in self.callbacks.get(onevent, []):
                callback(self)

        def run(self):
            model, config = self.model, self.config
            self.optimizer, self.groups = model.configure_optimizers(config)
            train_loader = torch.utils.data.DataLoader(
                self.train_dataset,
                sampler=torch.utils.data.SequentialSampler(self.train_dataset),
                shuffle=False,
                pin_memory=False,
                batch_size=config.batch_size,
                num_workers=config.num_workers,
            )
            self.own_sampler = list(torch.utils.data.RandomSampler(self.train_dataset, replacement=True,
                                                                   num_samples=int(1e3)))
            model.train()
            self.iter_num = 0
            self.iter_time = time.time()
            data_iter = iter(train_loader)
            while True:
                try:
                    batch = next(data_iter)
                except StopIteration:
                    data_iter = iter(train_loader)
                    batch = next(data_iter)
                batch = [t.to(self.device) for t in batch]
                x, y = batch
                logits, self.loss = model(x, y)
                model.zero_grad(set_to_none=True)
                self.loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
                self.optimizer.step()
                self.trigger_callbacks('on_batch_end')
                self.iter_num += 1
                tnow = time.time()
                self.iter_dt = tnow - self.iter_time
                self.iter_time = tnow
                if config.max_iters is not None and self.iter_num >= config.max_iters:
                    break

    torch.manual_seed(3407)
    train_dataset = SortDataset('train')
    model_config = GPT.get_default_config()
    model_config.model_type = 'gpt-pico'
    model_config.vocab_size = train_dataset.get_vocab_size()
    model_config.block_size = train_dataset.get_block_size()
    model_config.embd_pdrop = model_config.resid_pdrop = model_config.attn_pdrop = 0.0
    model = GPT(model_config)
    result = {"n_params": model.n_params, "config": str(model_config), "config_dict": sorted(model_config.to_dict())}
    start_from(torch, model, init, result)
    train_config = Trainer.get_default_config()
    train_config.learning_rate = 5e-4
    train_config.max_iters = max_iters
    trainer = Trainer(train_config, model, train_dataset)
    losses = []

    def batch_end_callback(trainer):
        losses.append(trainer.loss.item())
        assert trainer.iter_dt >= 0

    trainer.add_callback('on_batch_end', batch_end_callback)
    trainer.run()
    result["groups"] = list(trainer.groups)
    result["own"] = {"sampler": trainer.own_sampler}
    model.eval()
    x, _ = train_dataset[0]
    inp = x[:train_dataset.length].unsqueeze(0)
    with torch.no_grad():
        cat = model.generate(inp, train_dataset.length, do_sample=False)
    result.update(losses=losses, generated=numpy_of(cat), state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_mingpt_trainer_and_configure_optimizers():
    ref, got = compare_program(mingpt)
    assert len(got["own"]["sampler"]) == 1000

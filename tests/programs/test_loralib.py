"""microsoft/LoRA's loralib (layers.py and utils.py) on two small models, used as its README says:
lora.Embedding, lora.Linear, lora.MergedLinear (GPT-2's fused qkv with enable_lora=[True, False,
True] and fan_in_fan_out=True, its grouped F.conv1d of the B factors and zero_pad through a boolean
column index, result[:, self.lora_ind] = ...) and lora.Conv2d in place of the pretrained layers,
each a multiple-inheritance subclass (nn.Linear, LoRALayer) whose train(mode) merges the low-rank
update into weight.data on eval() and takes it out again on train(); the frozen weights
(requires_grad = False, weight.data = weight.data.transpose(0, 1)), mark_only_lora_as_trainable
with each bias mode, an optimizer over the parameters that still require grad, lora_state_dict
saved and loaded with strict=False into a fresh model, and the merged model's outputs equal to the
unmerged ones."""
import math
import types
from typing import Dict, List

import numpy as np
import pytest

from prog_helpers import compare_program, fit, numpy_of, start_from


def loralib(torch):
    """loralib/layers.py and loralib/utils.py as published, for the library `torch`."""
    nn, F = torch.nn, torch.nn.functional

    class LoRALayer():
        def __init__(
            self,
            r: int,
            lora_alpha: int,
            lora_dropout: float,
            merge_weights: bool,
        ):
            self.r = r
            self.lora_alpha = lora_alpha
            # Optional dropout
            if lora_dropout > 0.:
                self.lora_dropout = nn.Dropout(p=lora_dropout)
            else:
                self.lora_dropout = lambda x: x
            # Mark the weight as unmerged
            self.merged = False
            self.merge_weights = merge_weights

    class Embedding(nn.Embedding, LoRALayer):
        # LoRA implemented in a dense layer
        def __init__(
            self,
            num_embeddings: int,
            embedding_dim: int,
            r: int = 0,
            lora_alpha: int = 1,
            merge_weights: bool = True,
            **kwargs
        ):
            nn.Embedding.__init__(self, num_embeddings, embedding_dim, **kwargs)
            LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=0,
                               merge_weights=merge_weights)
            # Actual trainable parameters
            if r > 0:
                self.lora_A = nn.Parameter(self.weight.new_zeros((r, num_embeddings)))
                self.lora_B = nn.Parameter(self.weight.new_zeros((embedding_dim, r)))
                self.scaling = self.lora_alpha / self.r
                # Freezing the pre-trained weight matrix
                self.weight.requires_grad = False
            self.reset_parameters()

        def reset_parameters(self):
            nn.Embedding.reset_parameters(self)
            if hasattr(self, 'lora_A'):
                # initialize A the same way as the default for nn.Linear and B to zero
                nn.init.zeros_(self.lora_A)
                nn.init.normal_(self.lora_B)

        def train(self, mode: bool = True):
            nn.Embedding.train(self, mode)
            if mode:
                if self.merge_weights and self.merged:
                    # Make sure that the weights are not merged
                    if self.r > 0:
                        self.weight.data -= (self.lora_B @ self.lora_A).transpose(0, 1) * self.scaling
                    self.merged = False
            else:
                if self.merge_weights and not self.merged:
                    # Merge the weights and mark it
                    if self.r > 0:
                        self.weight.data += (self.lora_B @ self.lora_A).transpose(0, 1) * self.scaling
                    self.merged = True

        def forward(self, x):
            if self.r > 0 and not self.merged:
                result = nn.Embedding.forward(self, x)
                after_A = F.embedding(
                    x, self.lora_A.transpose(0, 1), self.padding_idx, self.max_norm,
                    self.norm_type, self.scale_grad_by_freq, self.sparse
                )
                result += (after_A @ self.lora_B.transpose(0, 1)) * self.scaling
                return result
            else:
                return nn.Embedding.forward(self, x)

    class Linear(nn.Linear, LoRALayer):
        # LoRA implemented in a dense layer
        def __init__(
            self,
            in_features: int,
            out_features: int,
            r: int = 0,
            lora_alpha: int = 1,
            lora_dropout: float = 0.,
            fan_in_fan_out: bool = False,  # Set this to True if the layer to replace stores weight like (fan_in, fan_out)
            merge_weights: bool = True,
            **kwargs
        ):
            nn.Linear.__init__(self, in_features, out_features, **kwargs)
            LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
                               merge_weights=merge_weights)

            self.fan_in_fan_out = fan_in_fan_out
            # Actual trainable parameters
            if r > 0:
                self.lora_A = nn.Parameter(self.weight.new_zeros((r, in_features)))
                self.lora_B = nn.Parameter(self.weight.new_zeros((out_features, r)))
                self.scaling = self.lora_alpha / self.r
                # Freezing the pre-trained weight matrix
                self.weight.requires_grad = False
            self.reset_parameters()
            if fan_in_fan_out:
                self.weight.data = self.weight.data.transpose(0, 1)

        def reset_parameters(self):
            nn.Linear.reset_parameters(self)
            if hasattr(self, 'lora_A'):
                # initialize A the same way as the default for nn.Linear and B to zero
                nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
                nn.init.zeros_(self.lora_B)

        def train(self, mode: bool = True):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            nn.Linear.train(self, mode)
            if mode:
                if self.merge_weights and self.merged:
                    # Make sure that the weights are not merged
                    if self.r > 0:
                        self.weight.data -= T(self.lora_B @ self.lora_A) * self.scaling
                    self.merged = False
            else:
                if self.merge_weights and not self.merged:
                    # Merge the weights and mark it
                    if self.r > 0:
                        self.weight.data += T(self.lora_B @ self.lora_A) * self.scaling
                    self.merged = True

        def forward(self, x):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            if self.r > 0 and not self.merged:
                result = F.linear(x, T(self.weight), bias=self.bias)
                result += (self.lora_dropout(x) @ self.lora_A.transpose(0, 1) @ self.lora_B.transpose(0, 1)) * self.scaling
                return result
            else:
                return F.linear(x, T(self.weight), bias=self.bias)

    class MergedLinear(nn.Linear, LoRALayer):
        # LoRA implemented in a dense layer
        def __init__(
            self,
            in_features: int,
            out_features: int,
            r: int = 0,
            lora_alpha: int = 1,
            lora_dropout: float = 0.,
            enable_lora: List[bool] = [False],
            fan_in_fan_out: bool = False,
            merge_weights: bool = True,
            **kwargs
        ):
            nn.Linear.__init__(self, in_features, out_features, **kwargs)
            LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
                               merge_weights=merge_weights)
            assert out_features % len(enable_lora) == 0, \
                'The length of enable_lora must divide out_features'
            self.enable_lora = enable_lora
            self.fan_in_fan_out = fan_in_fan_out
            # Actual trainable parameters
            if r > 0 and any(enable_lora):
                self.lora_A = nn.Parameter(
                    self.weight.new_zeros((r * sum(enable_lora), in_features)))
                self.lora_B = nn.Parameter(
                    self.weight.new_zeros((out_features // len(enable_lora) * sum(enable_lora), r))
                )  # weights for Conv1D with groups=sum(enable_lora)
                self.scaling = self.lora_alpha / self.r
                # Freezing the pre-trained weight matrix
                self.weight.requires_grad = False
                # Compute the indices
                self.lora_ind = self.weight.new_zeros(
                    (out_features, ), dtype=torch.bool
                ).view(len(enable_lora), -1)
                self.lora_ind[enable_lora, :] = True
                self.lora_ind = self.lora_ind.view(-1)
            self.reset_parameters()
            if fan_in_fan_out:
                self.weight.data = self.weight.data.transpose(0, 1)

        def reset_parameters(self):
            nn.Linear.reset_parameters(self)
            if hasattr(self, 'lora_A'):
                # initialize A the same way as the default for nn.Linear and B to zero
                nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
                nn.init.zeros_(self.lora_B)

        def zero_pad(self, x):
            result = x.new_zeros((*x.shape[:-1], self.out_features))
            result = result.view(-1, self.out_features)
            result[:, self.lora_ind] = x.reshape(
                -1, self.out_features // len(self.enable_lora) * sum(self.enable_lora)
            )
            return result.view((*x.shape[:-1], self.out_features))

        def train(self, mode: bool = True):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            nn.Linear.train(self, mode)
            if mode:
                if self.merge_weights and self.merged:
                    # Make sure that the weights are not merged
                    if self.r > 0 and any(self.enable_lora):
                        delta_w = F.conv1d(
                            self.lora_A.data.unsqueeze(0),
                            self.lora_B.data.unsqueeze(-1),
                            groups=sum(self.enable_lora)
                        ).squeeze(0)
                        self.weight.data -= self.zero_pad(T(delta_w * self.scaling))
                    self.merged = False
            else:
                if self.merge_weights and not self.merged:
                    # Merge the weights and mark it
                    if self.r > 0 and any(self.enable_lora):
                        delta_w = F.conv1d(
                            self.lora_A.data.unsqueeze(0),
                            self.lora_B.data.unsqueeze(-1),
                            groups=sum(self.enable_lora)
                        ).squeeze(0)
                        self.weight.data += self.zero_pad(T(delta_w * self.scaling))
                    self.merged = True

        def forward(self, x):
            def T(w):
                return w.transpose(0, 1) if self.fan_in_fan_out else w
            if self.merged:
                return F.linear(x, T(self.weight), bias=self.bias)
            else:
                result = F.linear(x, T(self.weight), bias=self.bias)
                if self.r > 0:
                    after_A = F.linear(self.lora_dropout(x), self.lora_A)
                    after_B = F.conv1d(
                        after_A.transpose(-2, -1),
                        self.lora_B.unsqueeze(-1),
                        groups=sum(self.enable_lora)
                    ).transpose(-2, -1)
                    result += self.zero_pad(after_B) * self.scaling
                return result

    class Conv2d(nn.Conv2d, LoRALayer):
        # LoRA implemented in a dense layer
        def __init__(
            self,
            in_channels: int,
            out_channels: int,
            kernel_size: int,
            r: int = 0,
            lora_alpha: int = 1,
            lora_dropout: float = 0.,
            merge_weights: bool = True,
            **kwargs
        ):
            nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, **kwargs)
            LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
                               merge_weights=merge_weights)
            assert type(kernel_size) is int
            # Actual trainable parameters
            if r > 0:
                self.lora_A = nn.Parameter(
                    self.weight.new_zeros((r * kernel_size, in_channels * kernel_size))
                )
                self.lora_B = nn.Parameter(
                    self.weight.new_zeros((out_channels * kernel_size, r * kernel_size))
                )
                self.scaling = self.lora_alpha / self.r
                # Freezing the pre-trained weight matrix
                self.weight.requires_grad = False
            self.reset_parameters()

        def reset_parameters(self):
            nn.Conv2d.reset_parameters(self)
            if hasattr(self, 'lora_A'):
                # initialize A the same way as the default for nn.Linear and B to zero
                nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
                nn.init.zeros_(self.lora_B)

        def train(self, mode: bool = True):
            nn.Conv2d.train(self, mode)
            if mode:
                if self.merge_weights and self.merged:
                    # Make sure that the weights are not merged
                    self.weight.data -= (self.lora_B @ self.lora_A).view(self.weight.shape) * self.scaling
                    self.merged = False
            else:
                if self.merge_weights and not self.merged:
                    # Merge the weights and mark it
                    self.weight.data += (self.lora_B @ self.lora_A).view(self.weight.shape) * self.scaling
                    self.merged = True

        def forward(self, x):
            if self.r > 0 and not self.merged:
                return F.conv2d(
                    x,
                    self.weight + (self.lora_B @ self.lora_A).view(self.weight.shape) * self.scaling,
                    self.bias, self.stride, self.padding, self.dilation, self.groups
                )
            return nn.Conv2d.forward(self, x)

    def mark_only_lora_as_trainable(model: nn.Module, bias: str = 'none') -> None:
        for n, p in model.named_parameters():
            if 'lora_' not in n:
                p.requires_grad = False
        if bias == 'none':
            return
        elif bias == 'all':
            for n, p in model.named_parameters():
                if 'bias' in n:
                    p.requires_grad = True
        elif bias == 'lora_only':
            for m in model.modules():
                if isinstance(m, LoRALayer) and \
                        hasattr(m, 'bias') and \
                        m.bias is not None:
                    m.bias.requires_grad = True
        else:
            raise NotImplementedError

    def lora_state_dict(model: nn.Module, bias: str = 'none') -> Dict:
        my_state_dict = model.state_dict()
        if bias == 'none':
            return {k: my_state_dict[k] for k in my_state_dict if 'lora_' in k}
        elif bias == 'all':
            return {k: my_state_dict[k] for k in my_state_dict if 'lora_' in k or 'bias' in k}
        elif bias == 'lora_only':
            to_return = {}
            for k in my_state_dict:
                if 'lora_' in k:
                    to_return[k] = my_state_dict[k]
                    bias_name = k.split('lora_')[0] + 'bias'
                    if bias_name in my_state_dict:
                        to_return[bias_name] = my_state_dict[bias_name]
            return to_return
        else:
            raise NotImplementedError

    # `import loralib as lora`: the module's names as attributes
    return types.SimpleNamespace(Embedding=Embedding, Linear=Linear, MergedLinear=MergedLinear, Conv2d=Conv2d,
                                 mark_only_lora_as_trainable=mark_only_lora_as_trainable,
                                 lora_state_dict=lora_state_dict)


def lora_models(torch):
    nn, F = torch.nn, torch.nn.functional
    lora = loralib(torch)

    class TinyGPT(nn.Module):
        """A GPT-2 block in the shape loralib's NLG example adapts: c_attn a MergedLinear over q, k, v
        (LoRA on q and v), c_proj a LoRA Linear, the token embedding a LoRA Embedding."""

        def __init__(self, vocab=30, d=16, heads=2, r=4):
            super().__init__()
            self.heads = heads
            self.wte = lora.Embedding(vocab, d, r=r, lora_alpha=8)
            self.wpe = nn.Embedding(12, d)
            self.ln = nn.LayerNorm(d)
            self.c_attn = lora.MergedLinear(d, 3 * d, r=r, lora_alpha=8, enable_lora=[True, False, True],
                                            fan_in_fan_out=True, merge_weights=True)
            self.c_proj = lora.Linear(d, d, r=r, lora_alpha=16)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            b, t = idx.shape
            x = self.wte(idx) + self.wpe(torch.arange(t))
            q, k, v = self.c_attn(self.ln(x)).split(x.shape[-1], dim=2)
            q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, -1))
            return self.head(x)

    class TinyCNN(nn.Module):
        def __init__(self, r=2):
            super().__init__()
            self.conv = lora.Conv2d(3, 6, 3, r=r, lora_alpha=4, padding=1)
            self.fc = lora.Linear(6, 5, r=r)

        def forward(self, x):
            return self.fc(F.adaptive_avg_pool2d(F.relu(self.conv(x)), 1).flatten(1))

    return lora, TinyGPT, TinyCNN


def lora_program(torch, init=None, bias="lora_only", steps=3):
    lora, TinyGPT, TinyCNN = lora_models(torch)
    F = torch.nn.functional
    torch.manual_seed(0)
    gpt, cnn = TinyGPT(), TinyCNN()
    result = {"keys": sorted(gpt.state_dict().keys()) + sorted(cnn.state_dict().keys()),
              "c_attn_weight": list(gpt.c_attn.weight.shape), "lora_ind": numpy_of(gpt.c_attn.lora_ind)}
    start_from(torch, {"gpt": gpt, "cnn": cnn}, init, result)
    # the B factors start at zero: give them values, as a fine-tuned checkpoint has
    with torch.no_grad():
        for name, p in list(gpt.named_parameters()) + list(cnn.named_parameters()):
            if name.endswith("lora_B") and not p.any():
                p.copy_(torch.linspace(-0.3, 0.3, p.numel()).view(p.shape))
    for m in (gpt, cnn):
        lora.mark_only_lora_as_trainable(m, bias=bias)
    result["trainable"] = sorted(n for n, p in list(gpt.named_parameters()) + list(cnn.named_parameters())
                                 if p.requires_grad)
    rng = np.random.default_rng(0)
    tokens = torch.from_numpy(rng.integers(0, 30, (3, 9)))
    images = torch.from_numpy(rng.standard_normal((4, 3, 6, 6)).astype(np.float32))
    labels = torch.from_numpy(rng.integers(0, 5, 4))
    params = [p for m in (gpt, cnn) for p in m.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-2)

    def loss_fn():
        logits = gpt(tokens[:, :-1])
        lm = F.cross_entropy(logits.reshape(-1, 30), tokens[:, 1:].reshape(-1))
        return lm + F.cross_entropy(cnn(images), labels)

    result["losses"] = fit(optimizer, loss_fn, steps)
    result["frozen_grads"] = [p.grad is None for p in gpt.parameters() if not p.requires_grad]
    train_out = [numpy_of(gpt(tokens)), numpy_of(cnn(images))]
    gpt.eval()
    cnn.eval()
    merged = [gpt.c_attn.merged, gpt.wte.merged, cnn.conv.merged]
    with torch.no_grad():
        eval_out = [numpy_of(gpt(tokens)), numpy_of(cnn(images))]
    for a, b in zip(train_out, eval_out):  # merging changes the arithmetic, not the function
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    result.update(train_out=train_out, eval_out=eval_out, merged=merged,
                  merged_weight=numpy_of(gpt.c_attn.weight))
    gpt.train()
    result["unmerged_weight"] = numpy_of(gpt.c_attn.weight)
    saved = lora.lora_state_dict(gpt, bias=bias)
    result["saved"] = sorted(saved)
    torch.manual_seed(5)
    fresh = TinyGPT()
    fresh.load_state_dict(gpt.state_dict(), strict=False)
    incompatible = fresh.load_state_dict(saved, strict=False)
    result["missing"] = sorted(incompatible.missing_keys)
    result["reloaded"] = numpy_of(fresh(tokens))
    return result


@pytest.mark.parametrize("bias", ["none", "lora_only", "all"])
def test_loralib(bias):
    compare_program(lora_program, bias=bias)

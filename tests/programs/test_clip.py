"""OpenAI CLIP's model.py at a tiny size, trained by open_clip's loop: a LayerNorm subclass that
computes in float32 (x.type(torch.float32), ret.type(orig_type)), QuickGELU (x * torch.sigmoid(1.702
* x)), ResidualAttentionBlock with nn.MultiheadAttention on (L, N, D) tensors (need_weights=False,
attn_mask moved by self.attn_mask.to(dtype=x.dtype, device=x.device)) and an MLP built from an
OrderedDict; the vision transformer (patch Conv2d without bias, class_embedding added to
torch.zeros(x.shape[0], 1, x.shape[-1], dtype=x.dtype, device=x.device), scale * torch.randn
parameters, permute(1, 0, 2) in and out, ln_post(x[:, 0, :]) @ self.proj); the text transformer
(token_embedding, the causal mask by torch.empty(L, L).fill_(float("-inf")).triu_(1), features
taken at the end token by x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ text_projection);
logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07)) and logit_scale.exp();
initialize_parameters' normal_ draws with proj_std / attn_std / fc_std; features normalised by
x / x.norm(dim=1, keepdim=True) in forward and by F.normalize(dim=-1) in the loss; open_clip's
ClipLoss (labels by torch.arange, (F.cross_entropy(logits_per_image, labels) +
F.cross_entropy(logits_per_text, labels)) / 2), AdamW with the gain/bias/logit_scale exclusion
groups, its cosine_lr warmup scheduler assigning param_group["lr"], clip_grad_norm_, and
logit_scale.clamp_(0, math.log(100)) under torch.no_grad() after each step; then zero-shot
classification: (100.0 * image_features @ text_features.T).softmax(dim=-1) and .topk(3). The image
encoder is the vision transformer or CLIP's ModifiedResNet (3-conv stem, anti-aliased Bottlenecks
with nn.AvgPool2d(stride) or nn.Identity(), downsample from an OrderedDict, bn3 weights zeroed by
initialize_parameters, AttentionPool2d through F.multi_head_attention_forward with separate q, k, v
projection weights and in_proj_bias=torch.cat([...]))."""
import math
from collections import OrderedDict

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

IMG, PATCH, CTX, VOCAB = 16, 4, 8, 20
EOT = VOCAB - 1


def clip_model(torch):
    nn, F = torch.nn, torch.nn.functional

    class LayerNorm(nn.LayerNorm):
        """Subclass torch's LayerNorm to handle fp16."""

        def forward(self, x):
            orig_type = x.dtype
            ret = super().forward(x.type(torch.float32))
            return ret.type(orig_type)

    class QuickGELU(nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(1.702 * x)

    class ResidualAttentionBlock(nn.Module):
        def __init__(self, d_model: int, n_head: int, attn_mask=None):
            super().__init__()

            self.attn = nn.MultiheadAttention(d_model, n_head)
            self.ln_1 = LayerNorm(d_model)
            self.mlp = nn.Sequential(OrderedDict([
                ("c_fc", nn.Linear(d_model, d_model * 4)),
                ("gelu", QuickGELU()),
                ("c_proj", nn.Linear(d_model * 4, d_model))
            ]))
            self.ln_2 = LayerNorm(d_model)
            self.attn_mask = attn_mask

        def attention(self, x):
            self.attn_mask = self.attn_mask.to(dtype=x.dtype, device=x.device) if self.attn_mask is not None else None
            return self.attn(x, x, x, need_weights=False, attn_mask=self.attn_mask)[0]

        def forward(self, x):
            x = x + self.attention(self.ln_1(x))
            x = x + self.mlp(self.ln_2(x))
            return x

    class Transformer(nn.Module):
        def __init__(self, width: int, layers: int, heads: int, attn_mask=None):
            super().__init__()
            self.width = width
            self.layers = layers
            self.resblocks = nn.Sequential(*[ResidualAttentionBlock(width, heads, attn_mask) for _ in range(layers)])

        def forward(self, x):
            return self.resblocks(x)

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, inplanes, planes, stride=1):
            super().__init__()

            # all conv layers have stride 1. an avgpool is performed after the second convolution when stride > 1
            self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu1 = nn.ReLU(inplace=True)

            self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.relu2 = nn.ReLU(inplace=True)

            self.avgpool = nn.AvgPool2d(stride) if stride > 1 else nn.Identity()

            self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * self.expansion)
            self.relu3 = nn.ReLU(inplace=True)

            self.downsample = None
            self.stride = stride

            if stride > 1 or inplanes != planes * Bottleneck.expansion:
                # downsampling layer is prepended with an avgpool, and the subsequent convolution has stride 1
                self.downsample = nn.Sequential(OrderedDict([
                    ("-1", nn.AvgPool2d(stride)),
                    ("0", nn.Conv2d(inplanes, planes * self.expansion, 1, stride=1, bias=False)),
                    ("1", nn.BatchNorm2d(planes * self.expansion))
                ]))

        def forward(self, x):
            identity = x

            out = self.relu1(self.bn1(self.conv1(x)))
            out = self.relu2(self.bn2(self.conv2(out)))
            out = self.avgpool(out)
            out = self.bn3(self.conv3(out))

            if self.downsample is not None:
                identity = self.downsample(x)

            out += identity
            out = self.relu3(out)
            return out

    class AttentionPool2d(nn.Module):
        def __init__(self, spacial_dim: int, embed_dim: int, num_heads: int, output_dim: int = None):
            super().__init__()
            self.positional_embedding = nn.Parameter(torch.randn(spacial_dim ** 2 + 1, embed_dim) / embed_dim ** 0.5)
            self.k_proj = nn.Linear(embed_dim, embed_dim)
            self.q_proj = nn.Linear(embed_dim, embed_dim)
            self.v_proj = nn.Linear(embed_dim, embed_dim)
            self.c_proj = nn.Linear(embed_dim, output_dim or embed_dim)
            self.num_heads = num_heads

        def forward(self, x):
            x = x.flatten(start_dim=2).permute(2, 0, 1)  # NCHW -> (HW)NC
            x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0)  # (HW+1)NC
            x = x + self.positional_embedding[:, None, :].to(x.dtype)  # (HW+1)NC
            x, _ = F.multi_head_attention_forward(
                query=x[:1], key=x, value=x,
                embed_dim_to_check=x.shape[-1],
                num_heads=self.num_heads,
                q_proj_weight=self.q_proj.weight,
                k_proj_weight=self.k_proj.weight,
                v_proj_weight=self.v_proj.weight,
                in_proj_weight=None,
                in_proj_bias=torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]),
                bias_k=None,
                bias_v=None,
                add_zero_attn=False,
                dropout_p=0,
                out_proj_weight=self.c_proj.weight,
                out_proj_bias=self.c_proj.bias,
                use_separate_proj_weight=True,
                training=self.training,
                need_weights=False
            )
            return x.squeeze(0)

    class ModifiedResNet(nn.Module):
        """A ResNet like torchvision's with a 3-conv stem and an avgpool in place of its max pool,
        anti-aliased strided convolutions (an avgpool before each), and a QKV attention pool in
        place of the final average pool."""

        def __init__(self, layers, output_dim, heads, input_resolution=224, width=64):
            super().__init__()
            self.output_dim = output_dim
            self.input_resolution = input_resolution

            # the 3-layer stem
            self.conv1 = nn.Conv2d(3, width // 2, kernel_size=3, stride=2, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(width // 2)
            self.relu1 = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(width // 2, width // 2, kernel_size=3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width // 2)
            self.relu2 = nn.ReLU(inplace=True)
            self.conv3 = nn.Conv2d(width // 2, width, kernel_size=3, padding=1, bias=False)
            self.bn3 = nn.BatchNorm2d(width)
            self.relu3 = nn.ReLU(inplace=True)
            self.avgpool = nn.AvgPool2d(2)

            # residual layers
            self._inplanes = width  # this is a *mutable* variable used during construction
            self.layer1 = self._make_layer(width, layers[0])
            self.layer2 = self._make_layer(width * 2, layers[1], stride=2)
            self.layer3 = self._make_layer(width * 4, layers[2], stride=2)
            self.layer4 = self._make_layer(width * 8, layers[3], stride=2)

            embed_dim = width * 32  # the ResNet feature dimension
            self.attnpool = AttentionPool2d(input_resolution // 32, embed_dim, heads, output_dim)

        def _make_layer(self, planes, blocks, stride=1):
            layers = [Bottleneck(self._inplanes, planes, stride)]

            self._inplanes = planes * Bottleneck.expansion
            for _ in range(1, blocks):
                layers.append(Bottleneck(self._inplanes, planes))

            return nn.Sequential(*layers)

        def forward(self, x):
            def stem(x):
                x = self.relu1(self.bn1(self.conv1(x)))
                x = self.relu2(self.bn2(self.conv2(x)))
                x = self.relu3(self.bn3(self.conv3(x)))
                x = self.avgpool(x)
                return x

            x = x.type(self.conv1.weight.dtype)
            x = stem(x)
            x = self.layer1(x)
            x = self.layer2(x)
            x = self.layer3(x)
            x = self.layer4(x)
            x = self.attnpool(x)

            return x

    class VisionTransformer(nn.Module):
        def __init__(self, input_resolution: int, patch_size: int, width: int, layers: int, heads: int,
                     output_dim: int):
            super().__init__()
            self.input_resolution = input_resolution
            self.output_dim = output_dim
            self.conv1 = nn.Conv2d(in_channels=3, out_channels=width, kernel_size=patch_size, stride=patch_size,
                                   bias=False)

            scale = width ** -0.5
            self.class_embedding = nn.Parameter(scale * torch.randn(width))
            self.positional_embedding = nn.Parameter(scale * torch.randn((input_resolution // patch_size) ** 2 + 1,
                                                                         width))
            self.ln_pre = LayerNorm(width)

            self.transformer = Transformer(width, layers, heads)

            self.ln_post = LayerNorm(width)
            self.proj = nn.Parameter(scale * torch.randn(width, output_dim))

        def forward(self, x):
            x = self.conv1(x)  # shape = [*, width, grid, grid]
            x = x.reshape(x.shape[0], x.shape[1], -1)  # shape = [*, width, grid ** 2]
            x = x.permute(0, 2, 1)  # shape = [*, grid ** 2, width]
            x = torch.cat([self.class_embedding.to(x.dtype) + torch.zeros(x.shape[0], 1, x.shape[-1], dtype=x.dtype,
                                                                          device=x.device), x], dim=1)
            x = x + self.positional_embedding.to(x.dtype)
            x = self.ln_pre(x)

            x = x.permute(1, 0, 2)  # NLD -> LND
            x = self.transformer(x)
            x = x.permute(1, 0, 2)  # LND -> NLD

            x = self.ln_post(x[:, 0, :])

            if self.proj is not None:
                x = x @ self.proj

            return x

    class CLIP(nn.Module):
        def __init__(self, embed_dim, image_resolution, vision_layers, vision_width, vision_patch_size,
                     context_length, vocab_size, transformer_width, transformer_heads, transformer_layers):
            super().__init__()

            self.context_length = context_length

            if isinstance(vision_layers, (tuple, list)):
                vision_heads = vision_width * 32 // 64
                self.visual = ModifiedResNet(
                    layers=vision_layers,
                    output_dim=embed_dim,
                    heads=vision_heads,
                    input_resolution=image_resolution,
                    width=vision_width
                )
            else:
                vision_heads = vision_width // 64 if vision_width >= 64 else 2
                self.visual = VisionTransformer(
                    input_resolution=image_resolution,
                    patch_size=vision_patch_size,
                    width=vision_width,
                    layers=vision_layers,
                    heads=vision_heads,
                    output_dim=embed_dim
                )

            self.transformer = Transformer(
                width=transformer_width,
                layers=transformer_layers,
                heads=transformer_heads,
                attn_mask=self.build_attention_mask()
            )

            self.vocab_size = vocab_size
            self.token_embedding = nn.Embedding(vocab_size, transformer_width)
            self.positional_embedding = nn.Parameter(torch.empty(self.context_length, transformer_width))
            self.ln_final = LayerNorm(transformer_width)

            self.text_projection = nn.Parameter(torch.empty(transformer_width, embed_dim))
            self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))

            self.initialize_parameters()

        def initialize_parameters(self):
            nn.init.normal_(self.token_embedding.weight, std=0.02)
            nn.init.normal_(self.positional_embedding, std=0.01)

            if isinstance(self.visual, ModifiedResNet):
                if self.visual.attnpool is not None:
                    std = self.visual.attnpool.c_proj.in_features ** -0.5
                    nn.init.normal_(self.visual.attnpool.q_proj.weight, std=std)
                    nn.init.normal_(self.visual.attnpool.k_proj.weight, std=std)
                    nn.init.normal_(self.visual.attnpool.v_proj.weight, std=std)
                    nn.init.normal_(self.visual.attnpool.c_proj.weight, std=std)

                for resnet_block in [self.visual.layer1, self.visual.layer2, self.visual.layer3, self.visual.layer4]:
                    for name, param in resnet_block.named_parameters():
                        if name.endswith("bn3.weight"):
                            nn.init.zeros_(param)

            proj_std = (self.transformer.width ** -0.5) * ((2 * self.transformer.layers) ** -0.5)
            attn_std = self.transformer.width ** -0.5
            fc_std = (2 * self.transformer.width) ** -0.5
            for block in self.transformer.resblocks:
                nn.init.normal_(block.attn.in_proj_weight, std=attn_std)
                nn.init.normal_(block.attn.out_proj.weight, std=proj_std)
                nn.init.normal_(block.mlp.c_fc.weight, std=fc_std)
                nn.init.normal_(block.mlp.c_proj.weight, std=proj_std)

            if self.text_projection is not None:
                nn.init.normal_(self.text_projection, std=self.transformer.width ** -0.5)

        def build_attention_mask(self):
            # lazily create causal attention mask, with full attention between the vision tokens
            # pytorch uses additive attention mask; fill with -inf
            mask = torch.empty(self.context_length, self.context_length)
            mask.fill_(float("-inf"))
            mask.triu_(1)  # zero out the lower diagonal
            return mask

        @property
        def dtype(self):
            return self.visual.conv1.weight.dtype

        def encode_image(self, image):
            return self.visual(image.type(self.dtype))

        def encode_text(self, text):
            x = self.token_embedding(text).type(self.dtype)  # [batch_size, n_ctx, d_model]

            x = x + self.positional_embedding.type(self.dtype)
            x = x.permute(1, 0, 2)  # NLD -> LND
            x = self.transformer(x)
            x = x.permute(1, 0, 2)  # LND -> NLD
            x = self.ln_final(x).type(self.dtype)

            # x.shape = [batch_size, n_ctx, transformer.width]
            # take features from the eot embedding (eot_token is the highest number in each sequence)
            x = x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.text_projection

            return x

        def forward(self, image, text):
            image_features = self.encode_image(image)
            text_features = self.encode_text(text)

            # normalized features
            image_features = image_features / image_features.norm(dim=1, keepdim=True)
            text_features = text_features / text_features.norm(dim=1, keepdim=True)

            # cosine similarity as logits
            logit_scale = self.logit_scale.exp()
            logits_per_image = logit_scale * image_features @ text_features.t()
            logits_per_text = logits_per_image.t()

            # shape = [global_batch_size, global_batch_size]
            return logits_per_image, logits_per_text

    class ClipLoss(nn.Module):
        """open_clip's loss on one device: symmetric cross-entropy over the similarity matrix."""

        def forward(self, image_features, text_features, logit_scale):
            device = image_features.device
            logits_per_image = logit_scale * image_features @ text_features.T
            logits_per_text = logit_scale * text_features @ image_features.T
            num_logits = logits_per_image.shape[0]
            labels = torch.arange(num_logits, device=device, dtype=torch.long)
            total_loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
            return total_loss

    return CLIP, ClipLoss


def assign_learning_rate(optimizer, new_lr):
    for param_group in optimizer.param_groups:
        param_group["lr"] = new_lr


def _warmup_lr(base_lr, warmup_length, step):
    return base_lr * (step + 1) / warmup_length


def cosine_lr(optimizer, base_lr, warmup_length, steps):
    def _lr_adjuster(step):
        if step < warmup_length:
            lr = _warmup_lr(base_lr, warmup_length, step)
        else:
            e = step - warmup_length
            es = steps - warmup_length
            lr = 0.5 * (1 + np.cos(np.pi * e / es)) * base_lr
        assign_learning_rate(optimizer, lr)
        return lr
    return _lr_adjuster


def pairs(rng, n, img=IMG):
    """Image-caption pairs of K concepts: an image holds its concept's pattern, its caption the
    concept's word after a few random filler tokens, then the end token EOT (the largest id) and
    padding zeros."""
    concepts = rng.integers(0, 4, n)
    r, c = np.meshgrid(np.arange(img), np.arange(img), indexing="ij")
    patterns = np.stack([np.sin(r / 2.0), np.sin(c / 2.0), np.sin((r + c) / 3.0), np.cos((r - c) / 3.0)])
    images = patterns[concepts][:, None].repeat(3, 1) + 0.3 * rng.standard_normal((n, 3, img, img))
    text = np.zeros((n, CTX), dtype=np.int64)
    for i, k in enumerate(concepts):
        length = int(rng.integers(1, CTX - 2))
        text[i, :length] = rng.integers(5, EOT, length)
        text[i, length] = 1 + k  # the concept's word
        text[i, length + 1] = EOT
    return images.astype(np.float32), text, concepts


def clip_training(torch, init=None, steps=5, batch=8, vision_layers=2, img=IMG, vision_width=32):
    F = torch.nn.functional
    torch.manual_seed(0)
    CLIP, ClipLoss = clip_model(torch)
    model = CLIP(embed_dim=16, image_resolution=img, vision_layers=vision_layers, vision_width=vision_width, vision_patch_size=PATCH,
                 context_length=CTX, vocab_size=VOCAB, transformer_width=24, transformer_heads=2,
                 transformer_layers=2)
    result = {"mask": numpy_of(model.transformer.resblocks[0].attn_mask)}
    start_from(torch, model, init, result)

    exclude = lambda n, p: p.ndim < 2 or "bn" in n or "ln" in n or "bias" in n or 'logit_scale' in n  # noqa: E731
    include = lambda n, p: not exclude(n, p)  # noqa: E731
    named_parameters = list(model.named_parameters())
    gain_or_bias_params = [p for n, p in named_parameters if exclude(n, p) and p.requires_grad]
    rest_params = [p for n, p in named_parameters if include(n, p) and p.requires_grad]
    optimizer = torch.optim.AdamW(
        [{"params": gain_or_bias_params, "weight_decay": 0.},
         {"params": rest_params, "weight_decay": 0.2}],
        lr=5e-4, betas=(0.9, 0.98), eps=1e-6)
    scheduler = cosine_lr(optimizer, 5e-4, 2, steps)
    loss = ClipLoss()

    rng = np.random.default_rng(1)
    losses, scales, lrs = [], [], []
    model.train()
    for step in range(steps):
        lrs.append(scheduler(step))
        images, texts, _ = pairs(rng, batch, img)
        images, texts = torch.from_numpy(images), torch.from_numpy(texts)
        image_features = F.normalize(model.encode_image(images), dim=-1)
        text_features = F.normalize(model.encode_text(texts), dim=-1)
        logit_scale = model.logit_scale.exp()
        total_loss = loss(image_features, text_features, logit_scale)
        optimizer.zero_grad()
        total_loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=2.0)
        optimizer.step()
        # Note: we clamp to 4.6052 = ln(100), as in the original paper.
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
        losses.append(total_loss.item())
        scales.append(logit_scale.item())

    # zero-shot: one prompt per concept ("<filler> <concept word> <eot>")
    model.eval()
    images, texts, concepts = pairs(np.random.default_rng(2), 6, img)
    prompts = np.zeros((4, CTX), dtype=np.int64)
    prompts[:, 0], prompts[:, 1], prompts[:, 2] = 5, np.arange(1, 5), EOT
    with torch.no_grad():
        image_features = model.encode_image(torch.from_numpy(images))
        text_features = model.encode_text(torch.from_numpy(prompts))
        image_features /= image_features.norm(dim=-1, keepdim=True)
        text_features /= text_features.norm(dim=-1, keepdim=True)
        similarity = (100.0 * image_features @ text_features.T).softmax(dim=-1)
        values, indices = similarity[0].topk(3)
        logits_per_image, logits_per_text = model(torch.from_numpy(images), torch.from_numpy(texts))
    result.update(losses=losses, scales=scales, lrs=lrs, similarity=numpy_of(similarity),
                  top_values=numpy_of(values), top_indices=numpy_of(indices),
                  logits_per_image=numpy_of(logits_per_image), logits_per_text=numpy_of(logits_per_text),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_clip_contrastive_training():
    ref, got = compare_program(clip_training)
    np.testing.assert_array_equal(got["logits_per_text"], got["logits_per_image"].T)
    assert np.isneginf(ref["mask"][0, 1]) and ref["mask"][1, 0] == 0
    assert ref["scales"][0] == np.float32(1 / 0.07)
    assert ref["losses"][-1] < ref["losses"][0]



def test_clip_modified_resnet():
    """CLIP's ResNet image encoder: anti-aliased Bottlenecks (an OrderedDict downsample keyed "-1",
    "0", "1"), zero-initialised bn3 weights, and the attention pool through
    F.multi_head_attention_forward with separate q/k/v projection weights."""
    ref, got = compare_program(clip_training, steps=3, vision_layers=(1, 1, 1, 1), img=32, vision_width=8)
    assert "visual.layer2.0.downsample.-1" not in ref["state"]  # the avgpool holds no state
    assert np.all(ref["init"]["visual.layer1.0.bn3.weight"] == 0)

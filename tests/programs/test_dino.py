"""facebookresearch/dino's self-distillation at a tiny size (vision_transformer.py, main_dino.py,
utils.py): a ViT whose interpolate_pos_encoding resizes the patch position embeddings for the
local crops by nn.functional.interpolate(..., scale_factor=(w0 / math.sqrt(N), h0 /
math.sqrt(N)), mode='bicubic') after the "+ 0.1" trick, with the int(w0) == shape check; the
DINOHead (MLP with GELU, nn.functional.normalize(x, dim=-1, p=2), a last layer made by
nn.utils.weight_norm whose weight_g is filled with 1 and frozen); MultiCropWrapper grouping crops
of one resolution by torch.cumsum(torch.unique_consecutive(..., return_counts=True)[1], 0) and
concatenating their outputs onto torch.empty(0); DINOLoss (a center buffer, the teacher
temperature schedule by np.concatenate of np.linspace and np.ones, student_output.chunk(ncrops),
F.softmax((teacher_output - self.center) / temp, dim=-1).detach().chunk(2), torch.sum(-q *
F.log_softmax(student_out[v], dim=-1), dim=-1), the center's EMA update under torch.no_grad());
the teacher loaded from the student's state_dict with requires_grad = False; get_params_groups
(no weight decay for biases and norms), AdamW, per-iteration lr / weight-decay / momentum cosine
schedules written into param_groups[i]["lr"] and param_groups[0]["weight_decay"],
utils.clip_gradients (p.grad.data.norm(2), p.grad.data.mul_(clip_coef)),
cancel_gradients_last_layer (p.grad = None during the first epoch), and the teacher's EMA by
param_k.data.mul_(m).add_((1 - m) * param_q.detach().data). Crops are cut from NumPy images:
two 16x16 global views and four 8x8 local views."""
import math
from functools import partial

import numpy as np

from prog_helpers import assert_same_results, numpy_of, run_both, start_from
from timm_layers import timm_layers

GLOBAL, LOCAL, PATCH, OUT_DIM = 16, 8, 4, 32


def dino_models(torch):
    nn, F = torch.nn, torch.nn.functional

    def trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.):
        return nn.init.trunc_normal_(tensor, mean, std, a, b)

    Mlp, DropPath, init_vit_weights = timm_layers(torch)

    class Attention(nn.Module):
        def __init__(self, dim, num_heads=8, qkv_bias=False, qk_scale=None, attn_drop=0., proj_drop=0.):
            super().__init__()
            self.num_heads = num_heads
            head_dim = dim // num_heads
            self.scale = qk_scale or head_dim ** -0.5
            self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
            self.attn_drop = nn.Dropout(attn_drop)
            self.proj = nn.Linear(dim, dim)
            self.proj_drop = nn.Dropout(proj_drop)

        def forward(self, x):
            B, N, C = x.shape
            qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            attn = (q @ k.transpose(-2, -1)) * self.scale
            attn = attn.softmax(dim=-1)
            attn = self.attn_drop(attn)
            x = (attn @ v).transpose(1, 2).reshape(B, N, C)
            x = self.proj_drop(self.proj(x))
            return x, attn

    class Block(nn.Module):
        def __init__(self, dim, num_heads, mlp_ratio=4., qkv_bias=False, drop_path=0., norm_layer=nn.LayerNorm):
            super().__init__()
            self.norm1 = norm_layer(dim)
            self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias)
            self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
            self.norm2 = norm_layer(dim)
            self.mlp = Mlp(in_features=dim, hidden_features=int(dim * mlp_ratio))

        def forward(self, x, return_attention=False):
            y, attn = self.attn(self.norm1(x))
            if return_attention:
                return attn
            x = x + self.drop_path(y)
            x = x + self.drop_path(self.mlp(self.norm2(x)))
            return x

    class PatchEmbed(nn.Module):
        def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768):
            super().__init__()
            self.num_patches = (img_size // patch_size) * (img_size // patch_size)
            self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

        def forward(self, x):
            return self.proj(x).flatten(2).transpose(1, 2)

    class VisionTransformer(nn.Module):
        def __init__(self, img_size=[224], patch_size=16, in_chans=3, num_classes=0, embed_dim=768, depth=12,
                     num_heads=12, mlp_ratio=4., qkv_bias=False, norm_layer=nn.LayerNorm):
            super().__init__()
            self.num_features = self.embed_dim = embed_dim
            self.patch_embed = PatchEmbed(img_size=img_size[0], patch_size=patch_size, in_chans=in_chans,
                                          embed_dim=embed_dim)
            num_patches = self.patch_embed.num_patches
            self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
            self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))
            self.blocks = nn.ModuleList([
                Block(dim=embed_dim, num_heads=num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias,
                      norm_layer=norm_layer) for i in range(depth)])
            self.norm = norm_layer(embed_dim)
            self.head = nn.Linear(embed_dim, num_classes) if num_classes > 0 else nn.Identity()
            trunc_normal_(self.pos_embed, std=.02)
            trunc_normal_(self.cls_token, std=.02)
            self.apply(self._init_weights)

        _init_weights = staticmethod(init_vit_weights)  # timm's trunc_normal_ Linear, unit LayerNorm

        def interpolate_pos_encoding(self, x, w, h):
            npatch = x.shape[1] - 1
            N = self.pos_embed.shape[1] - 1
            if npatch == N and w == h:
                return self.pos_embed
            class_pos_embed = self.pos_embed[:, 0]
            patch_pos_embed = self.pos_embed[:, 1:]
            dim = x.shape[-1]
            w0 = w // self.patch_embed.proj.kernel_size[0]
            h0 = h // self.patch_embed.proj.kernel_size[0]
            # we add a small number to avoid floating point error in the interpolation
            # see discussion at https://github.com/facebookresearch/dino/issues/8
            w0, h0 = w0 + 0.1, h0 + 0.1
            patch_pos_embed = nn.functional.interpolate(
                patch_pos_embed.reshape(1, int(math.sqrt(N)), int(math.sqrt(N)), dim).permute(0, 3, 1, 2),
                scale_factor=(w0 / math.sqrt(N), h0 / math.sqrt(N)),
                mode='bicubic',
            )
            assert int(w0) == patch_pos_embed.shape[-2] and int(h0) == patch_pos_embed.shape[-1]
            patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
            return torch.cat((class_pos_embed.unsqueeze(0), patch_pos_embed), dim=1)

        def prepare_tokens(self, x):
            B, nc, w, h = x.shape
            x = self.patch_embed(x)  # patch linear embedding
            # add the [CLS] token to the embed patch tokens
            cls_tokens = self.cls_token.expand(B, -1, -1)
            x = torch.cat((cls_tokens, x), dim=1)
            # add positional encoding to each token
            x = x + self.interpolate_pos_encoding(x, w, h)
            return x

        def forward(self, x):
            x = self.prepare_tokens(x)
            for blk in self.blocks:
                x = blk(x)
            x = self.norm(x)
            return x[:, 0]

        def get_last_selfattention(self, x):
            x = self.prepare_tokens(x)
            for i, blk in enumerate(self.blocks):
                if i < len(self.blocks) - 1:
                    x = blk(x)
                else:
                    # return attention of the last block
                    return blk(x, return_attention=True)

    class DINOHead(nn.Module):
        def __init__(self, in_dim, out_dim, use_bn=False, norm_last_layer=True, nlayers=3, hidden_dim=2048,
                     bottleneck_dim=256):
            super().__init__()
            nlayers = max(nlayers, 1)
            if nlayers == 1:
                self.mlp = nn.Linear(in_dim, bottleneck_dim)
            else:
                layers = [nn.Linear(in_dim, hidden_dim)]
                if use_bn:
                    layers.append(nn.BatchNorm1d(hidden_dim))
                layers.append(nn.GELU())
                for _ in range(nlayers - 2):
                    layers.append(nn.Linear(hidden_dim, hidden_dim))
                    if use_bn:
                        layers.append(nn.BatchNorm1d(hidden_dim))
                    layers.append(nn.GELU())
                layers.append(nn.Linear(hidden_dim, bottleneck_dim))
                self.mlp = nn.Sequential(*layers)
            self.apply(self._init_weights)
            self.last_layer = nn.utils.weight_norm(nn.Linear(bottleneck_dim, out_dim, bias=False))
            self.last_layer.weight_g.data.fill_(1)
            if norm_last_layer:
                self.last_layer.weight_g.requires_grad = False

        def _init_weights(self, m):
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=.02)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.constant_(m.bias, 0)

        def forward(self, x):
            x = self.mlp(x)
            x = nn.functional.normalize(x, dim=-1, p=2)
            x = self.last_layer(x)
            return x

    class MultiCropWrapper(nn.Module):
        """Forwards the crops of one resolution together (one forward pass per resolution), then
        the head on all of them at once."""

        def __init__(self, backbone, head):
            super(MultiCropWrapper, self).__init__()
            # disable layers dedicated to ImageNet labels classification
            backbone.fc, backbone.head = nn.Identity(), nn.Identity()
            self.backbone = backbone
            self.head = head

        def forward(self, x):
            # convert to list
            if not isinstance(x, list):
                x = [x]
            idx_crops = torch.cumsum(torch.unique_consecutive(
                torch.tensor([inp.shape[-1] for inp in x]),
                return_counts=True,
            )[1], 0)
            start_idx, output = 0, torch.empty(0).to(x[0].device)
            for end_idx in idx_crops:
                _out = self.backbone(torch.cat(x[start_idx: end_idx]))
                # The output is a tuple with XCiT model. See:
                # https://github.com/facebookresearch/xcit/blob/master/xcit.py#L404-L405
                if isinstance(_out, tuple):
                    _out = _out[0]
                # accumulate outputs
                output = torch.cat((output, _out))
                start_idx = end_idx
            # Run the head forward on the concatenated features.
            return self.head(output)

    class DINOLoss(nn.Module):
        def __init__(self, out_dim, ncrops, warmup_teacher_temp, teacher_temp, warmup_teacher_temp_epochs, nepochs,
                     student_temp=0.1, center_momentum=0.9):
            super().__init__()
            self.student_temp = student_temp
            self.center_momentum = center_momentum
            self.ncrops = ncrops
            self.register_buffer("center", torch.zeros(1, out_dim))
            # we apply a warm up for the teacher temperature because
            # a too high temperature makes the training instable at the beginning
            self.teacher_temp_schedule = np.concatenate((
                np.linspace(warmup_teacher_temp, teacher_temp, warmup_teacher_temp_epochs),
                np.ones(nepochs - warmup_teacher_temp_epochs) * teacher_temp
            ))

        def forward(self, student_output, teacher_output, epoch):
            """Cross-entropy between softmax outputs of the teacher and student networks."""
            student_out = student_output / self.student_temp
            student_out = student_out.chunk(self.ncrops)

            # teacher centering and sharpening
            temp = self.teacher_temp_schedule[epoch]
            teacher_out = F.softmax((teacher_output - self.center) / temp, dim=-1)
            teacher_out = teacher_out.detach().chunk(2)

            total_loss = 0
            n_loss_terms = 0
            for iq, q in enumerate(teacher_out):
                for v in range(len(student_out)):
                    if v == iq:
                        # we skip cases where student and teacher operate on the same view
                        continue
                    loss = torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1)
                    total_loss += loss.mean()
                    n_loss_terms += 1
            total_loss /= n_loss_terms
            self.update_center(teacher_output)
            return total_loss

        @torch.no_grad()
        def update_center(self, teacher_output):
            """Update center used for teacher output (one process: no all_reduce)."""
            batch_center = torch.sum(teacher_output, dim=0, keepdim=True)
            batch_center = batch_center / len(teacher_output)
            # ema update
            self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)

    vit_tiny = partial(VisionTransformer, patch_size=PATCH, embed_dim=24, depth=2, num_heads=2, mlp_ratio=2,
                       qkv_bias=True, norm_layer=partial(nn.LayerNorm, eps=1e-6))
    return vit_tiny, DINOHead, MultiCropWrapper, DINOLoss


def cosine_scheduler(base_value, final_value, epochs, niter_per_ep, warmup_epochs=0, start_warmup_value=0):
    warmup_schedule = np.array([])
    warmup_iters = warmup_epochs * niter_per_ep
    if warmup_epochs > 0:
        warmup_schedule = np.linspace(start_warmup_value, base_value, warmup_iters)
    iters = np.arange(epochs * niter_per_ep - warmup_iters)
    schedule = final_value + 0.5 * (base_value - final_value) * (1 + np.cos(np.pi * iters / len(iters)))
    schedule = np.concatenate((warmup_schedule, schedule))
    assert len(schedule) == epochs * niter_per_ep
    return schedule


def get_params_groups(model):
    regularized = []
    not_regularized = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        # we do not regularize biases nor Norm parameters
        if name.endswith(".bias") or len(param.shape) == 1:
            not_regularized.append(param)
        else:
            regularized.append(param)
    return [{'params': regularized}, {'params': not_regularized, 'weight_decay': 0.}]


def clip_gradients(model, clip):
    norms = []
    for name, p in model.named_parameters():
        if p.grad is not None:
            param_norm = p.grad.data.norm(2)
            norms.append(param_norm.item())
            clip_coef = clip / (param_norm + 1e-6)
            if clip_coef < 1:
                p.grad.data.mul_(clip_coef)
    return norms


def cancel_gradients_last_layer(epoch, model, freeze_last_layer):
    if epoch >= freeze_last_layer:
        return
    for n, p in model.named_parameters():
        if "last_layer" in n:
            p.grad = None


def multi_crop(rng, images, n_local=4):
    """DataAugmentationDINO without torchvision: two global crops (a random flip each) and
    n_local local crops, cut by NumPy from 20x20 images."""
    crops = []
    for size, count in ((GLOBAL, 2), (LOCAL, n_local)):
        for _ in range(count):
            y, x = rng.integers(0, images.shape[-1] - size + 1, 2)
            crop = images[:, :, y:y + size, x:x + size]
            if rng.uniform() < 0.5:
                crop = crop[:, :, :, ::-1]
            crops.append(np.ascontiguousarray(crop, dtype=np.float32))
    return crops


def dino(torch, init=None, epochs=2, iters_per_epoch=2, batch=3):
    torch.manual_seed(0)
    vit_tiny, DINOHead, MultiCropWrapper, DINOLoss = dino_models(torch)
    student = MultiCropWrapper(vit_tiny(img_size=[GLOBAL]), DINOHead(24, OUT_DIM, norm_last_layer=True,
                                                                      hidden_dim=32, bottleneck_dim=16))
    teacher = MultiCropWrapper(vit_tiny(img_size=[GLOBAL]), DINOHead(24, OUT_DIM, hidden_dim=32, bottleneck_dim=16))
    result = {"trainable": sorted(n for n, p in student.named_parameters() if p.requires_grad)}
    start_from(torch, student, init, result)
    # teacher and student start with the same weights
    teacher.load_state_dict(student.state_dict())
    # there is no backpropagation through the teacher, so no need for gradients
    for p in teacher.parameters():
        p.requires_grad = False

    ncrops = 6
    dino_loss = DINOLoss(OUT_DIM, ncrops, 0.04, 0.07, 1, epochs)
    params_groups = get_params_groups(student)
    optimizer = torch.optim.AdamW(params_groups)  # to use with ViTs
    niter = epochs * iters_per_epoch
    lr_schedule = cosine_scheduler(5e-3 * batch / 256 * 10, 1e-6, epochs, iters_per_epoch, warmup_epochs=1)
    wd_schedule = cosine_scheduler(0.04, 0.4, epochs, iters_per_epoch)
    momentum_schedule = cosine_scheduler(0.996, 1, epochs, iters_per_epoch)

    rng = np.random.default_rng(1)
    losses, norms = [], []
    for epoch in range(epochs):
        for it_in_epoch in range(iters_per_epoch):
            it = iters_per_epoch * epoch + it_in_epoch  # global training iteration
            for i, param_group in enumerate(optimizer.param_groups):
                param_group["lr"] = lr_schedule[it]
                if i == 0:  # only the first group is regularized
                    param_group["weight_decay"] = wd_schedule[it]
            images = [torch.from_numpy(c) for c in multi_crop(rng, rng.uniform(0, 1, (batch, 3, 20, 20)))]
            teacher_output = teacher(images[:2])  # only the 2 global views pass through the teacher
            student_output = student(images)
            loss = dino_loss(student_output, teacher_output, epoch)
            if not math.isfinite(loss.item()):
                raise RuntimeError("Loss is {}, stopping training".format(loss.item()))
            optimizer.zero_grad()
            loss.backward()
            norms.append(clip_gradients(student, 3.0))
            cancel_gradients_last_layer(epoch, student, 1)
            optimizer.step()
            # EMA update for the teacher
            with torch.no_grad():
                m = momentum_schedule[it]  # momentum parameter
                for param_q, param_k in zip(student.parameters(), teacher.parameters()):
                    param_k.data.mul_(m).add_((1 - m) * param_q.detach().data)
            losses.append(loss.item())
        if epoch == 0:
            result["v_after_epoch0"] = numpy_of(student.head.last_layer.weight_v)
    assert it == niter - 1
    crops = multi_crop(np.random.default_rng(2), np.random.default_rng(3).uniform(0, 1, (2, 3, 20, 20)))
    with torch.no_grad():
        attentions = teacher.backbone.get_last_selfattention(torch.from_numpy(crops[0]))
        local_features = teacher.backbone(torch.from_numpy(crops[2]))
    result.update(losses=losses, norms=norms, center=numpy_of(dino_loss.center),
                  attentions=numpy_of(attentions), local_features=numpy_of(local_features),
                  student={k: numpy_of(v) for k, v in student.state_dict().items()},
                  teacher={k: numpy_of(v) for k, v in teacher.state_dict().items()})
    return result


def test_dino():
    ref, got = run_both(dino)
    # The attention's k bias gets no gradient but rounding noise (softmax over the keys drops a
    # shift common to them), and AdamW turns such noise into steps of up to lr: that third of
    # qkv.bias is bounded by the steps' total, its q and v thirds compared as usual.
    bound = 2 * 5e-3 * 3 / 256 * 10 * 4
    for key in ("student", "teacher"):
        for name in [n for n in ref[key] if n.endswith("attn.qkv.bias")]:
            g, r = got[key].pop(name).reshape(3, -1), ref[key].pop(name).reshape(3, -1)
            np.testing.assert_allclose(g[1], r[1], rtol=0, atol=bound, err_msg=name)
            assert_same_results(g[0::2], r[0::2], path=name)
    assert_same_results(got, ref)
    assert "head.last_layer.weight_g" not in ref["trainable"] and "head.last_layer.weight_v" in ref["trainable"]
    # the last layer's gradients are cancelled during the first epoch: AdamW leaves it as it was
    for r in (ref, got):
        np.testing.assert_array_equal(r["v_after_epoch0"], ref["init"]["head.last_layer.weight_v"])
    assert np.abs(ref["student"]["head.last_layer.weight_v"] - ref["v_after_epoch0"]).max() > 1e-5
    np.testing.assert_allclose(ref["student"]["head.last_layer.weight_g"], 1.0)
    assert ref["attentions"].shape == (2, 2, 17, 17)

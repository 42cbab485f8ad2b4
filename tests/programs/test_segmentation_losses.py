"""Segmentation losses as the published libraries write them in torch ops, training a small
encoder-decoder on masks drawn with NumPy:
- segmentation_models_pytorch's losses: soft_dice_score and DiceLoss (a torch.nn.modules.loss._Loss
  with modes "binary" and "multiclass", from_logits through logsigmoid / log_softmax and exp,
  F.one_hot and permute, ignore_index masking, classes present in the batch only) and
  focal_loss_with_logits / FocalLoss (target.type(output.type()), exp(-logpt), alpha weighting,
  reduced_threshold with focal_term[pt < reduced_threshold] = 1, normalized, a loop over classes
  in multiclass mode);
- torchvision.ops.sigmoid_focal_loss (alpha_t and (1 - p_t) ** gamma, reductions; from the stand-in
  tests/programs/torchvision_ops.py);
- the multi-class FocalLoss of AdeelH/pytorch-multi-class-focal-loss (nll_loss with class weights
  and ignore_index over log_softmax, pt gathered at the true class).
Each loss is compared on fixed logits (value and gradient) and then used to train the model for a
few Adam steps; losses and parameters are compared with PyTorch."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from torchvision_ops import torchvision_ops


def smp_losses(torch):
    F = torch.nn.functional
    _Loss = torch.nn.modules.loss._Loss

    BINARY_MODE = "binary"
    MULTICLASS_MODE = "multiclass"

    def soft_dice_score(output, target, smooth=0.0, eps=1e-7, dims=None):
        assert output.size() == target.size()
        if dims is not None:
            intersection = torch.sum(output * target, dim=dims)
            cardinality = torch.sum(output + target, dim=dims)
        else:
            intersection = torch.sum(output * target)
            cardinality = torch.sum(output + target)
        dice_score = (2.0 * intersection + smooth) / (cardinality + smooth).clamp_min(eps)
        return dice_score

    class DiceLoss(_Loss):
        def __init__(self, mode, classes=None, log_loss=False, from_logits=True, smooth=0.0, ignore_index=None,
                     eps=1e-7):
            assert mode in {BINARY_MODE, MULTICLASS_MODE}
            super(DiceLoss, self).__init__()
            self.mode = mode
            if classes is not None:
                assert mode != BINARY_MODE, "Masking classes is not supported with mode=binary"
                classes = torch.tensor(classes, dtype=torch.long)
            self.classes = classes
            self.from_logits = from_logits
            self.smooth = smooth
            self.eps = eps
            self.log_loss = log_loss
            self.ignore_index = ignore_index

        def forward(self, y_pred, y_true):
            assert y_true.size(0) == y_pred.size(0)

            if self.from_logits:
                # Apply activations to get [0..1] class probabilities
                # Using Log-Exp as this gives more numerically stable result and does not cause vanishing gradient on
                # extreme values 0 and 1
                if self.mode == MULTICLASS_MODE:
                    y_pred = y_pred.log_softmax(dim=1).exp()
                else:
                    y_pred = F.logsigmoid(y_pred).exp()

            bs = y_true.size(0)
            num_classes = y_pred.size(1)
            dims = (0, 2)

            if self.mode == BINARY_MODE:
                y_true = y_true.view(bs, 1, -1)
                y_pred = y_pred.view(bs, 1, -1)

                if self.ignore_index is not None:
                    mask = y_true != self.ignore_index
                    y_pred = y_pred * mask
                    y_true = y_true * mask

            if self.mode == MULTICLASS_MODE:
                y_true = y_true.view(bs, -1)
                y_pred = y_pred.view(bs, num_classes, -1)

                if self.ignore_index is not None:
                    mask = y_true != self.ignore_index
                    y_pred = y_pred * mask.unsqueeze(1)

                    y_true = F.one_hot((y_true * mask).to(torch.long), num_classes)  # N,H*W -> N,H*W, C
                    y_true = y_true.permute(0, 2, 1) * mask.unsqueeze(1)  # N, C, H*W
                else:
                    y_true = F.one_hot(y_true, num_classes)  # N,H*W -> N,H*W, C
                    y_true = y_true.permute(0, 2, 1)  # N, C, H*W

            scores = self.compute_score(y_pred, y_true.type_as(y_pred), smooth=self.smooth, eps=self.eps, dims=dims)

            if self.log_loss:
                loss = -torch.log(scores.clamp_min(self.eps))
            else:
                loss = 1.0 - scores

            # Dice loss is undefined for non-empty classes
            # So we zero contribution of channel that does not have true pixels
            # NOTE: A better workaround would be to use loss term `mean(y_pred)`
            # for this case, however it will be a modified jaccard loss

            mask = y_true.sum(dims) > 0
            loss *= mask.to(loss.dtype)

            if self.classes is not None:
                loss = loss[self.classes]

            return self.aggregate_loss(loss)

        def aggregate_loss(self, loss):
            return loss.mean()

        def compute_score(self, output, target, smooth=0.0, eps=1e-7, dims=None):
            return soft_dice_score(output, target, smooth, eps, dims)

    def focal_loss_with_logits(output, target, gamma=2.0, alpha=0.25, reduction="mean", normalized=False,
                               reduced_threshold=None, eps=1e-6):
        target = target.type(output.type())

        logpt = F.binary_cross_entropy_with_logits(output, target, reduction="none")
        pt = torch.exp(-logpt)

        # compute the loss
        if reduced_threshold is None:
            focal_term = (1.0 - pt).pow(gamma)
        else:
            focal_term = ((1.0 - pt) / reduced_threshold).pow(gamma)
            focal_term[pt < reduced_threshold] = 1

        loss = focal_term * logpt

        if alpha is not None:
            loss *= alpha * target + (1 - alpha) * (1 - target)

        if normalized:
            norm_factor = focal_term.sum().clamp_min(eps)
            loss /= norm_factor

        if reduction == "mean":
            loss = loss.mean()
        if reduction == "sum":
            loss = loss.sum()
        if reduction == "batchwise_mean":
            loss = loss.sum(0)

        return loss

    class FocalLoss(_Loss):
        def __init__(self, mode, alpha=None, gamma=2.0, ignore_index=None, reduction="mean", normalized=False,
                     reduced_threshold=None):
            assert mode in {BINARY_MODE, MULTICLASS_MODE}
            super().__init__()

            self.mode = mode
            self.ignore_index = ignore_index
            self.focal_loss_fn = lambda output, target: focal_loss_with_logits(
                output, target, alpha=alpha, gamma=gamma, reduced_threshold=reduced_threshold,
                reduction=reduction, normalized=normalized)

        def forward(self, y_pred, y_true):
            if self.mode in {BINARY_MODE}:
                y_true = y_true.view(-1)
                y_pred = y_pred.view(-1)

                if self.ignore_index is not None:
                    # Filter predictions with ignore label from loss computation
                    not_ignored = y_true != self.ignore_index
                    y_pred = y_pred[not_ignored]
                    y_true = y_true[not_ignored]

                loss = self.focal_loss_fn(y_pred, y_true)

            elif self.mode == MULTICLASS_MODE:
                num_classes = y_pred.size(1)
                loss = 0

                # Filter anchors with -1 label from loss computation
                if self.ignore_index is not None:
                    not_ignored = y_true != self.ignore_index

                for cls in range(num_classes):
                    cls_y_true = (y_true == cls).long()
                    cls_y_pred = y_pred[:, cls, ...]

                    if self.ignore_index is not None:
                        cls_y_true = cls_y_true[not_ignored]
                        cls_y_pred = cls_y_pred[not_ignored]

                    loss += self.focal_loss_fn(cls_y_pred, cls_y_true)

            return loss

    return DiceLoss, FocalLoss


def adeelh_focal_loss(torch):
    nn, F = torch.nn, torch.nn.functional
    Tensor = torch.Tensor

    class FocalLoss(nn.Module):
        """Focal Loss, as described in https://arxiv.org/abs/1708.02002."""

        def __init__(self, alpha=None, gamma=0.0, reduction="mean", ignore_index=-100):
            if reduction not in ("mean", "sum", "none"):
                raise ValueError('Reduction must be one of: "mean", "sum", "none".')

            super().__init__()
            self.alpha = alpha
            self.gamma = gamma
            self.ignore_index = ignore_index
            self.reduction = reduction

            self.nll_loss = nn.NLLLoss(weight=alpha, reduction="none", ignore_index=ignore_index)

        def __repr__(self):
            arg_keys = ["alpha", "gamma", "ignore_index", "reduction"]
            arg_vals = [self.__dict__[k] for k in arg_keys]
            arg_strs = [f"{k}={v!r}" for k, v in zip(arg_keys, arg_vals)]
            arg_str = ", ".join(arg_strs)
            return f"{type(self).__name__}({arg_str})"

        def forward(self, x: Tensor, y: Tensor) -> Tensor:
            if x.ndim > 2:
                # (N, C, d1, d2, ..., dK) --> (N * d1 * ... * dK, C)
                c = x.shape[1]
                x = x.permute(0, *range(2, x.ndim), 1).reshape(-1, c)
                # (N, d1, d2, ..., dK) --> (N * d1 * ... * dK,)
                y = y.view(-1)

            unignored_mask = y != self.ignore_index
            y = y[unignored_mask]
            if len(y) == 0:
                return torch.tensor(0.0)
            x = x[unignored_mask]

            # compute weighted cross entropy term: -alpha * log(pt)
            # (alpha is already part of self.nll_loss)
            log_p = F.log_softmax(x, dim=-1)
            ce = self.nll_loss(log_p, y)

            # get true class column from each row
            all_rows = torch.arange(len(x))
            log_pt = log_p[all_rows, y]

            # compute focal term: (1 - pt)^gamma
            pt = log_pt.exp()
            focal_term = (1 - pt) ** self.gamma

            # the full loss: -alpha * ((1 - pt)^gamma) * log(pt)
            loss = focal_term * ce

            if self.reduction == "mean":
                loss = loss.mean()
            elif self.reduction == "sum":
                loss = loss.sum()

            return loss

    return FocalLoss


def masks(rng, n, size, num_classes, ignore_index):
    """Images (n, 3, size, size) and class masks with disks and squares of classes 1.., background 0,
    and a border of ignore_index."""
    yy, xx = np.mgrid[:size, :size]
    images = rng.standard_normal((n, 3, size, size)).astype(np.float32) * 0.3
    labels = np.zeros((n, size, size), dtype=np.int64)
    for i in range(n):
        for cls in range(1, num_classes):
            cy, cx = rng.integers(3, size - 3, 2)
            r = rng.integers(2, size // 4)
            inside = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r if cls % 2 else (abs(yy - cy) <= r) & (abs(xx - cx) <= r)
            labels[i][inside] = cls
            images[i, cls % 3][inside] += 1.0
    labels[:, :, 0] = ignore_index
    return images, labels


def segmentation(torch, init=None, steps=4, batch_size=2, size=16, num_classes=4):
    nn, F = torch.nn, torch.nn.functional
    DiceLoss, FocalLoss = smp_losses(torch)
    sigmoid_focal_loss = torchvision_ops(torch).sigmoid_focal_loss
    AdeelFocalLoss = adeelh_focal_loss(torch)
    torch.manual_seed(0)
    ignore_index = 255
    rng = np.random.default_rng(0)
    images, labels = masks(rng, steps * batch_size, size, num_classes, ignore_index)

    # the losses on fixed logits, value and gradient
    fixed = {}
    logits_np = rng.standard_normal((2, num_classes, 6, 6)).astype(np.float32) * 2
    target_np = rng.integers(0, num_classes, (2, 6, 6))
    target_np[0, 0, :3] = ignore_index
    binary_np = (rng.uniform(size=(2, 1, 6, 6)) > 0.6).astype(np.float32)
    cases = {
        "dice_mc": lambda x, y, b: DiceLoss("multiclass")(x, y.clamp_max(num_classes - 1)),
        "dice_mc_ignore_log": lambda x, y, b: DiceLoss("multiclass", ignore_index=ignore_index, log_loss=True,
                                                       smooth=1.0)(x, y),
        "dice_mc_classes": lambda x, y, b: DiceLoss("multiclass", classes=[1, 2])(x, y.clamp_max(num_classes - 1)),
        "dice_binary": lambda x, y, b: DiceLoss("binary")(x[:, :1], b),
        "focal_mc_ignore": lambda x, y, b: FocalLoss("multiclass", ignore_index=ignore_index)(x, y),
        "focal_binary_alpha": lambda x, y, b: FocalLoss("binary", alpha=0.25)(x[:, :1].contiguous(), b),
        "focal_reduced_normalized": lambda x, y, b: FocalLoss("binary", reduced_threshold=0.5, normalized=True)(
            x[:, :1].contiguous(), b),
        "tv_focal_mean": lambda x, y, b: sigmoid_focal_loss(x[:, :1], b, reduction="mean"),
        "tv_focal_sum_gamma3": lambda x, y, b: sigmoid_focal_loss(x[:, 1:2], b, alpha=-1, gamma=3, reduction="sum"),
        "adeelh": lambda x, y, b: AdeelFocalLoss(alpha=torch.tensor([0.1, 0.3, 0.3, 0.3]), gamma=2.0,
                                                 ignore_index=ignore_index)(x, y),
    }
    for name, fn in cases.items():
        x = torch.tensor(logits_np, requires_grad=True)
        loss = fn(x, torch.from_numpy(target_np), torch.from_numpy(binary_np))
        loss.backward()
        fixed[name] = {"loss": loss.item(), "grad": numpy_of(x.grad)}
    try:
        sigmoid_focal_loss(torch.zeros(2), torch.ones(2), reduction="avg")
    except ValueError as e:
        fixed["bad_reduction"] = str(e).split("\n")[0]

    class SegNet(nn.Module):
        def __init__(self, n_channels=3, n_classes=num_classes):
            super().__init__()
            self.enc1 = nn.Sequential(nn.Conv2d(n_channels, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                                      nn.ReLU(inplace=True))
            self.enc2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                                      nn.ReLU(inplace=True))
            self.up = nn.ConvTranspose2d(16, 8, kernel_size=2, stride=2)
            self.dec = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU(inplace=True))
            self.head = nn.Conv2d(8, n_classes, 1)
            self.aux = nn.Conv2d(8, 1, 1)  # a binary foreground head

        def forward(self, x):
            e1 = self.enc1(x)
            d = self.dec(torch.cat([e1, self.up(self.enc2(e1))], dim=1))
            return self.head(d), self.aux(d)

    model = SegNet()
    result = {"fixed": fixed}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    dice = DiceLoss("multiclass", ignore_index=ignore_index)
    focal = FocalLoss("multiclass", ignore_index=ignore_index)
    losses, parts = [], []
    for step in range(steps):
        x = torch.from_numpy(images[step * batch_size:(step + 1) * batch_size])
        y = torch.from_numpy(labels[step * batch_size:(step + 1) * batch_size])
        foreground = ((y > 0) & (y != ignore_index)).float().unsqueeze(1)
        optimizer.zero_grad()
        masks_pred, fg_pred = model(x)
        loss_dice = dice(masks_pred, y)
        loss_focal = focal(masks_pred, y)
        loss_fg = sigmoid_focal_loss(fg_pred, foreground, reduction="mean")
        loss = loss_dice + loss_focal + loss_fg
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        parts.append([loss_dice.item(), loss_focal.item(), loss_fg.item()])
    model.eval()
    with torch.no_grad():
        masks_pred, _ = model(torch.from_numpy(images[:batch_size]))
        pred = masks_pred.argmax(dim=1)
    result.update(losses=losses, parts=parts, pred_probs=numpy_of(masks_pred.softmax(dim=1)),
                  params={k: numpy_of(v) for k, v in model.named_parameters()},
                  buffers={k: numpy_of(v) for k, v in model.named_buffers()},
                  pred_dtype=str(pred.dtype).split(".")[-1],
                  repr=repr(AdeelFocalLoss(gamma=2.0)))
    return result


def test_segmentation_dice_and_focal_losses():
    ref, got = compare_program(segmentation)
    assert ref["fixed"]["bad_reduction"].startswith("Invalid Value for arg 'reduction': 'avg")
    assert len(ref["fixed"]) == 11 and ref["losses"][-1] < ref["losses"][0]

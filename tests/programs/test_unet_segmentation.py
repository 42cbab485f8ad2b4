"""The widely used Pytorch-UNet repository (milesial) on small images: DoubleConv (Conv2d without
bias, BatchNorm2d, ReLU(inplace=True)), Down (MaxPool2d then DoubleConv), Up with bilinear
nn.Upsample(scale_factor=2, align_corners=True) or ConvTranspose2d, the input padded by F.pad to
[diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2] before torch.cat([x2, x1], dim=1),
OutConv; the model and the images moved to memory_format=torch.channels_last; train_model's
RMSprop(weight_decay, momentum, foreach=True), ReduceLROnPlateau('max', patience), a
torch.amp.GradScaler(enabled=amp), torch.autocast(device.type, enabled=amp), the loss
criterion(masks_pred, true_masks) + dice_loss(F.softmax(masks_pred, dim=1).float(),
F.one_hot(true_masks, n_classes).permute(0, 3, 1, 2).float(), multiclass=True) with dice_coeff's
reduce_batch_first and epsilon, clip_grad_norm_, scaler.unscale_; evaluate() under
torch.inference_mode() with argmax masks one-hot encoded and the dice score stepping the scheduler.
The repository's learning rate (1e-5) is kept: RMSprop's first steps divide each gradient by its own
size, so at larger rates gradients that are zero up to rounding become lr-sized steps that differ
between any two libraries."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def unet_parts(torch):
    nn, F = torch.nn, torch.nn.functional

    class DoubleConv(nn.Module):
        """(convolution => [BN] => ReLU) * 2"""

        def __init__(self, in_channels, out_channels, mid_channels=None):
            super().__init__()
            if not mid_channels:
                mid_channels = out_channels
            self.double_conv = nn.Sequential(
                nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
                nn.BatchNorm2d(mid_channels),
                nn.ReLU(inplace=True),
                nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
                nn.BatchNorm2d(out_channels),
                nn.ReLU(inplace=True)
            )

        def forward(self, x):
            return self.double_conv(x)

    class Down(nn.Module):
        """Downscaling with maxpool then double conv"""

        def __init__(self, in_channels, out_channels):
            super().__init__()
            self.maxpool_conv = nn.Sequential(
                nn.MaxPool2d(2),
                DoubleConv(in_channels, out_channels)
            )

        def forward(self, x):
            return self.maxpool_conv(x)

    class Up(nn.Module):
        """Upscaling then double conv"""

        def __init__(self, in_channels, out_channels, bilinear=True):
            super().__init__()
            # if bilinear, use the normal convolutions to reduce the number of channels
            if bilinear:
                self.up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)
                self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
            else:
                self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
                self.conv = DoubleConv(in_channels, out_channels)

        def forward(self, x1, x2):
            x1 = self.up(x1)
            # input is CHW
            diffY = x2.size()[2] - x1.size()[2]
            diffX = x2.size()[3] - x1.size()[3]
            x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2,
                            diffY // 2, diffY - diffY // 2])
            x = torch.cat([x2, x1], dim=1)
            return self.conv(x)

    class OutConv(nn.Module):
        def __init__(self, in_channels, out_channels):
            super(OutConv, self).__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)

        def forward(self, x):
            return self.conv(x)

    class UNet(nn.Module):
        def __init__(self, n_channels, n_classes, bilinear=False, base=8):
            super(UNet, self).__init__()
            self.n_channels = n_channels
            self.n_classes = n_classes
            self.bilinear = bilinear
            self.inc = (DoubleConv(n_channels, base))
            self.down1 = (Down(base, base * 2))
            self.down2 = (Down(base * 2, base * 4))
            factor = 2 if bilinear else 1
            self.down3 = (Down(base * 4, base * 8 // factor))
            self.up1 = (Up(base * 8, base * 4 // factor, bilinear))
            self.up2 = (Up(base * 4, base * 2 // factor, bilinear))
            self.up3 = (Up(base * 2, base, bilinear))
            self.outc = (OutConv(base, n_classes))

        def forward(self, x):
            x1 = self.inc(x)
            x2 = self.down1(x1)
            x3 = self.down2(x2)
            x4 = self.down3(x3)
            x = self.up1(x4, x3)
            x = self.up2(x, x2)
            x = self.up3(x, x1)
            logits = self.outc(x)
            return logits

    return UNet


def dice_coeff(torch, input, target, reduce_batch_first=False, epsilon=1e-6):
    # Average of Dice coefficient for all batches, or for a single mask
    assert input.size() == target.size()
    assert input.dim() == 3 or not reduce_batch_first
    sum_dim = (-1, -2) if input.dim() == 2 or not reduce_batch_first else (-1, -2, -3)
    inter = 2 * (input * target).sum(dim=sum_dim)
    sets_sum = input.sum(dim=sum_dim) + target.sum(dim=sum_dim)
    sets_sum = torch.where(sets_sum == 0, inter, sets_sum)
    dice = (inter + epsilon) / (sets_sum + epsilon)
    return dice.mean()


def multiclass_dice_coeff(torch, input, target, reduce_batch_first=False, epsilon=1e-6):
    # Average of Dice coefficient for all classes
    return dice_coeff(torch, input.flatten(0, 1), target.flatten(0, 1), reduce_batch_first, epsilon)


def dice_loss(torch, input, target, multiclass=False):
    # Dice loss (objective to minimize) between 0 and 1
    fn = multiclass_dice_coeff if multiclass else dice_coeff
    return 1 - fn(torch, input, target, reduce_batch_first=True)


def make_masks(n, size, seed):
    """Images with a disc (class 1) and a square (class 2) on a noisy background (class 0)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size]
    images = rng.normal(0, 0.3, (n, 3, size, size))
    masks = np.zeros((n, size, size), dtype=np.int64)
    for i in range(n):
        cy, cx, r = rng.integers(5, size - 5, 2).tolist() + [rng.integers(2, 5)]
        disc = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
        sy, sx = rng.integers(0, size - 6, 2)
        square = np.zeros_like(disc)
        square[sy:sy + 5, sx:sx + 5] = True
        masks[i][disc] = 1
        masks[i][square & ~disc] = 2
        images[i, 0] += disc
        images[i, 1] += square
    return images.astype(np.float32), masks


def unet_training(torch, init=None, bilinear=False, epochs=2, batch_size=4, size=24, learning_rate=1e-5,
                  weight_decay=1e-8, momentum=0.999, gradient_clipping=1.0, amp=False):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    torch.manual_seed(0)
    device = torch.device('cpu')
    model = unet_parts(torch)(n_channels=3, n_classes=3, bilinear=bilinear)
    model = model.to(memory_format=torch.channels_last)
    result = {}
    start_from(torch, model, init, result)
    train_images, train_masks = make_masks(batch_size * 3, size, 0)
    val_images, val_masks = make_masks(batch_size, size, 1)
    optimizer = optim.RMSprop(model.parameters(), lr=learning_rate, weight_decay=weight_decay, momentum=momentum,
                              foreach=True)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, 'max', patience=0)  # goal: maximize Dice score
    grad_scaler = torch.amp.GradScaler(enabled=amp)
    criterion = nn.CrossEntropyLoss() if model.n_classes > 1 else nn.BCEWithLogitsLoss()

    @torch.inference_mode()
    def evaluate(net, dataloader, device, amp):
        net.eval()
        num_val_batches = len(dataloader)
        dice_score = 0
        # iterate over the validation set
        with torch.autocast(device.type if device.type != 'mps' else 'cpu', enabled=amp):
            for batch in dataloader:
                image, mask_true = batch['image'], batch['mask']
                # move images and labels to correct device and type
                image = image.to(device=device, dtype=torch.float32, memory_format=torch.channels_last)
                mask_true = mask_true.to(device=device, dtype=torch.long)
                # predict the mask
                mask_pred = net(image)
                assert mask_true.min() >= 0 and mask_true.max() < net.n_classes, \
                    'True mask indices should be in [0, n_classes['
                # convert to one-hot format
                mask_true = F.one_hot(mask_true, net.n_classes).permute(0, 3, 1, 2).float()
                mask_pred = F.one_hot(mask_pred.argmax(dim=1), net.n_classes).permute(0, 3, 1, 2).float()
                # compute the Dice score, ignoring background
                dice_score += multiclass_dice_coeff(torch, mask_pred[:, 1:], mask_true[:, 1:], reduce_batch_first=False)
        net.train()
        return dice_score / max(num_val_batches, 1)

    val_loader = [{'image': torch.from_numpy(val_images), 'mask': torch.from_numpy(val_masks)}]
    global_step = 0
    losses, scores, lrs, layouts = [], [], [], []
    for epoch in range(1, epochs + 1):
        model.train()
        epoch_loss = 0
        for b in range(0, len(train_images), batch_size):
            images = torch.from_numpy(train_images[b:b + batch_size])
            true_masks = torch.from_numpy(train_masks[b:b + batch_size])
            images = images.to(device=device, dtype=torch.float32, memory_format=torch.channels_last)
            true_masks = true_masks.to(device=device, dtype=torch.long)
            layouts.append(images.is_contiguous(memory_format=torch.channels_last))
            with torch.autocast(device.type if device.type != 'mps' else 'cpu', enabled=amp):
                masks_pred = model(images)
                loss = criterion(masks_pred, true_masks)
                loss += dice_loss(torch,
                                  F.softmax(masks_pred, dim=1).float(),
                                  F.one_hot(true_masks, model.n_classes).permute(0, 3, 1, 2).float(),
                                  multiclass=True
                                  )
            optimizer.zero_grad(set_to_none=True)
            grad_scaler.scale(loss).backward()
            grad_scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)
            grad_scaler.step(optimizer)
            grad_scaler.update()
            global_step += 1
            epoch_loss += loss.item()
            losses.append(loss.item())
        val_score = evaluate(model, val_loader, device, amp)
        scheduler.step(val_score)
        scores.append(float(val_score))
        lrs.append(optimizer.param_groups[0]['lr'])
    result.update(losses=losses, scores=scores, lrs=lrs, layouts=layouts,
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_unet_transposed_convolutions():
    ref, got = compare_program(unet_training, rtol=1e-3, atol=1e-4)
    assert all(ref["layouts"]) and all(got["layouts"])


def test_unet_bilinear():
    compare_program(unet_training, bilinear=True, rtol=1e-3, atol=1e-4)

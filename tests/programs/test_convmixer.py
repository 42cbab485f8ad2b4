"""locuslab/convmixer ("Patches Are All You Need?") with its CIFAR-10 train.py: the model as one
nn.Sequential built by a list comprehension (patch embedding by a strided Conv2d, GELU,
BatchNorm2d; per layer a Residual around a depthwise nn.Conv2d(dim, dim, kernel_size,
groups=dim, padding="same"), then a pointwise conv; AdaptiveAvgPool2d((1, 1)), Flatten, Linear);
the training loop's piecewise-linear one-cycle schedule lr_schedule = lambda t: np.interp([t],
[0, epochs*2//5, epochs*4//5, epochs], [0, lr_max, lr_max/20.0, 0])[0] written by
opt.param_groups[0].update(lr=lr) every batch, AdamW, torch.cuda.amp.GradScaler and
torch.cuda.amp.autocast (disabled: no GPU), scaler.unscale_ before clip_grad_norm_,
scaler.step / scaler.update, train accuracy by (output.max(1)[1] == y).sum().item(), and the
evaluation under model.eval() and torch.no_grad()."""
import warnings

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

IMG, CLASSES = 16, 4


def conv_mixer(torch):
    nn = torch.nn

    class Residual(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x) + x

    def ConvMixer(dim, depth, kernel_size=5, patch_size=2, n_classes=10):
        return nn.Sequential(
            nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size),
            nn.GELU(),
            nn.BatchNorm2d(dim),
            *[nn.Sequential(
                Residual(nn.Sequential(
                    nn.Conv2d(dim, dim, kernel_size, groups=dim, padding="same"),
                    nn.GELU(),
                    nn.BatchNorm2d(dim)
                )),
                nn.Conv2d(dim, dim, kernel_size=1),
                nn.GELU(),
                nn.BatchNorm2d(dim)
            ) for i in range(depth)],
            nn.AdaptiveAvgPool2d((1, 1)),
            nn.Flatten(),
            nn.Linear(dim, n_classes)
        )

    return ConvMixer


def batches(rng, n_batches, batch):
    """Four classes of 16x16 RGB images: stripes at four orientations, with noise."""
    r, c = np.meshgrid(np.arange(IMG), np.arange(IMG), indexing="ij")
    patterns = np.stack([np.sin(r), np.sin(c), np.sin(r + c), np.sin(r - c)])
    out = []
    for _ in range(n_batches):
        y = rng.integers(0, CLASSES, batch)
        x = patterns[y][:, None].repeat(3, 1) + 0.5 * rng.standard_normal((batch, 3, IMG, IMG))
        out.append((x.astype(np.float32), y))
    return out


def convmixer_train(torch, init=None, epochs=2, n_batches=2, batch=8, lr_max=0.01, clip_norm=True):
    nn = torch.nn
    torch.manual_seed(0)
    model = conv_mixer(torch)(16, 2, kernel_size=5, patch_size=2, n_classes=CLASSES)
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(1)
    trainloader = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in batches(rng, n_batches, batch)]
    testloader = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in batches(rng, 1, batch)]

    lr_schedule = lambda t: np.interp([t], [0, epochs * 2 // 5, epochs * 4 // 5, epochs],  # noqa: E731
                                      [0, lr_max, lr_max / 20.0, 0])[0]
    opt = torch.optim.AdamW(model.parameters(), lr=lr_max, weight_decay=0.01)
    criterion = nn.CrossEntropyLoss()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GradScaler and autocast warn that CUDA is not available
        scaler = torch.cuda.amp.GradScaler()

    log = []
    for epoch in range(epochs):
        train_loss, train_acc, n = 0, 0, 0
        for i, (X, y) in enumerate(trainloader):
            model.train()
            lr = lr_schedule(epoch + (i + 1) / len(trainloader))
            opt.param_groups[0].update(lr=lr)
            opt.zero_grad()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with torch.cuda.amp.autocast():
                    output = model(X)
                    loss = criterion(output, y)
            scaler.scale(loss).backward()
            if clip_norm:
                scaler.unscale_(opt)
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            train_loss += loss.item() * y.size(0)
            train_acc += (output.max(1)[1] == y).sum().item()
            n += y.size(0)
        model.eval()
        test_acc, m = 0, 0
        with torch.no_grad():
            for i, (X, y) in enumerate(testloader):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with torch.cuda.amp.autocast():
                        output = model(X)
                test_acc += (output.max(1)[1] == y).sum().item()
                m += y.size(0)
        log.append([epoch, lr, train_loss / n, train_acc / n, test_acc / m])
    result.update(log=log, logits=numpy_of(output), state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_convmixer():
    ref, got = compare_program(convmixer_train)
    assert ref["log"][-1][1] == 0.0  # the one-cycle schedule ends at zero
    assert "3.0.fn.0.weight" in ref["state"] and ref["state"]["3.0.fn.0.weight"].shape == (16, 1, 5, 5)

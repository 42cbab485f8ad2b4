"""facebookresearch/barlowtwins: main.py's BarlowTwins (a ResNet backbone whose fc is nn.Identity(),
the projector built from args.projector.split('-') of Linear(bias=False), BatchNorm1d and
ReLU(inplace=True), nn.BatchNorm1d(sizes[-1], affine=False) on the embeddings, the
cross-correlation c = self.bn(z1).T @ self.bn(z2) scaled in place by c.div_(batch_size),
on_diag = torch.diagonal(c).add_(-1).pow_(2).sum() (in-place ops on a view of a tensor that
requires grad) and off_diagonal's x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()), its LARS
optimizer (a torch.optim.Optimizer subclass under @torch.no_grad(): torch.where on norms,
torch.ones_like, state 'mu'), the weights/biases parameter groups by param.ndim, and
adjust_learning_rate's warm-up and cosine schedule written into optimizer.param_groups; the loop's
torch.cuda.amp.autocast() and torch.cuda.amp.GradScaler() (disabled without CUDA, in both
libraries). Left out: the process group (torch.distributed.all_reduce(c) of one process is c
itself) and the SyncBatchNorm conversion; a narrow torchvision ResNet-18 in place of ResNet-50 and
two noisy views of random images in place of the augmented ImageNet pairs."""
import math
import warnings

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from torchvision_models import torchvision_resnet


def barlow_module(torch):
    """main.py's model and optimizer as published, for the library `torch`."""
    nn = torch.nn
    optim = torch.optim
    BasicBlock, ResNet, resnet18 = torchvision_resnet(torch)

    def off_diagonal(x):
        # return a flattened view of the off-diagonal elements of a square matrix
        n, m = x.shape
        assert n == m
        return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()

    class BarlowTwins(nn.Module):
        def __init__(self, args):
            super().__init__()
            self.args = args
            self.backbone = resnet18(widths=(8, 16, 16, 32))  # torchvision.models.resnet50(zero_init_residual=True)
            self.backbone.fc = nn.Identity()

            # projector
            sizes = [32] + list(map(int, args.projector.split('-')))  # [2048] for ResNet-50
            layers = []
            for i in range(len(sizes) - 2):
                layers.append(nn.Linear(sizes[i], sizes[i + 1], bias=False))
                layers.append(nn.BatchNorm1d(sizes[i + 1]))
                layers.append(nn.ReLU(inplace=True))
            layers.append(nn.Linear(sizes[-2], sizes[-1], bias=False))
            self.projector = nn.Sequential(*layers)

            # normalization layer for the representations z1 and z2
            self.bn = nn.BatchNorm1d(sizes[-1], affine=False)

        def forward(self, y1, y2):
            z1 = self.projector(self.backbone(y1))
            z2 = self.projector(self.backbone(y2))

            # empirical cross-correlation matrix
            c = self.bn(z1).T @ self.bn(z2)

            # sum the cross-correlation matrix between all gpus
            c.div_(self.args.batch_size)

            on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
            off_diag = off_diagonal(c).pow_(2).sum()
            loss = on_diag + self.args.lambd * off_diag
            return loss

    class LARS(optim.Optimizer):
        def __init__(self, params, lr, weight_decay=0, momentum=0.9, eta=0.001,
                     weight_decay_filter=False, lars_adaptation_filter=False):
            defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                            eta=eta, weight_decay_filter=weight_decay_filter,
                            lars_adaptation_filter=lars_adaptation_filter)
            super().__init__(params, defaults)

        def exclude_bias_and_norm(self, p):
            return p.ndim == 1

        @torch.no_grad()
        def step(self):
            for g in self.param_groups:
                for p in g['params']:
                    dp = p.grad

                    if dp is None:
                        continue

                    if not g['weight_decay_filter'] or not self.exclude_bias_and_norm(p):
                        dp = dp.add(p, alpha=g['weight_decay'])

                    if not g['lars_adaptation_filter'] or not self.exclude_bias_and_norm(p):
                        param_norm = torch.norm(p)
                        update_norm = torch.norm(dp)
                        one = torch.ones_like(param_norm)
                        q = torch.where(param_norm > 0.,
                                        torch.where(update_norm > 0,
                                                    (g['eta'] * param_norm / update_norm), one), one)
                        dp = dp.mul(q)

                    param_state = self.state[p]
                    if 'mu' not in param_state:
                        param_state['mu'] = torch.zeros_like(p)
                    mu = param_state['mu']
                    mu.mul_(g['momentum']).add_(dp)

                    p.add_(mu, alpha=-g['lr'])

    return BarlowTwins, LARS, off_diagonal


class Args:
    projector = "64-64-64"
    batch_size = 8
    lambd = 0.0051
    weight_decay = 1e-6
    learning_rate_weights = 0.2
    learning_rate_biases = 0.0048
    epochs = 12


def adjust_learning_rate(args, optimizer, loader, step):
    max_steps = args.epochs * len(loader)
    warmup_steps = 10 * len(loader)
    base_lr = args.batch_size / 256
    if step < warmup_steps:
        lr = base_lr * step / warmup_steps
    else:
        step -= warmup_steps
        max_steps -= warmup_steps
        q = 0.5 * (1 + math.cos(math.pi * step / max_steps))
        end_lr = base_lr * 0.001
        lr = base_lr * q + end_lr * (1 - q)
    optimizer.param_groups[0]['lr'] = lr * args.learning_rate_weights
    optimizer.param_groups[1]['lr'] = lr * args.learning_rate_biases


def barlow_program(torch, init=None, epochs=2):
    args = Args()
    BarlowTwins, LARS, off_diagonal = barlow_module(torch)
    torch.manual_seed(0)
    model = BarlowTwins(args)
    result = {}
    start_from(torch, model, init, result)
    param_weights = []
    param_biases = []
    for param in model.parameters():
        if param.ndim == 1:
            param_biases.append(param)
        else:
            param_weights.append(param)
    parameters = [{'params': param_weights}, {'params': param_biases}]
    optimizer = LARS(parameters, lr=0, weight_decay=args.weight_decay,
                     weight_decay_filter=True,
                     lars_adaptation_filter=True)
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 1, (2 * args.batch_size, 3, 16, 16)).astype(np.float32)
    loader = [None, None]  # two batches an epoch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GradScaler and autocast of torch.cuda warn without CUDA
        scaler = torch.cuda.amp.GradScaler()
        losses, lrs = [], []
        for epoch in range(epochs):
            for step, _ in enumerate(loader, start=epoch * len(loader)):
                base = images[(step % 2) * args.batch_size:(step % 2 + 1) * args.batch_size]
                y1 = torch.from_numpy(base + rng.normal(0, 0.1, base.shape).astype(np.float32))
                y2 = torch.from_numpy(base[:, :, :, ::-1].copy())
                adjust_learning_rate(args, optimizer, loader, step)
                optimizer.zero_grad()
                with torch.cuda.amp.autocast():
                    loss = model.forward(y1, y2)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                losses.append(loss.item())
                lrs.append([g["lr"] for g in optimizer.param_groups])
    c = torch.arange(16.0).view(4, 4)
    result.update(losses=losses, lrs=lrs, off=numpy_of(off_diagonal(c)),
                  mu={k: numpy_of(optimizer.state[p]["mu"]) for k, p in model.named_parameters()},
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_barlow_twins():
    # mu holds gradient sums of size ~50 whose small elements are cancellations: atol at that scale
    compare_program(barlow_program, rtol=2e-3, atol=5e-3)

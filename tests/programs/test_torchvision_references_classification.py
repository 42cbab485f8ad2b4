"""torchvision's reference classification recipe (references/classification: train.py, utils.py,
transforms.py) with the ImageFolder download replaced by NumPy images and torchvision.models by the
tests' ResNet: utils.SmoothedValue (torch.tensor(list(deque)).median().item(), mean of a float32
tensor), MetricLogger (a defaultdict of meters, __getattr__, log_every printing with an eta from
datetime.timedelta), synchronize_between_processes through reduce_across_processes (torch.tensor of
[count, total] and .tolist() when torch.distributed is not initialised), accuracy under
torch.inference_mode (topk(maxk, 1, True, True), pred.eq(target[None]), flatten().sum(dtype=
torch.float32), the max(dim=1)[1] of mixed one-hot targets), set_weight_decay over
torch.nn.modules.batchnorm._BatchNorm, LayerNorm, GroupNorm, torch.nn.modules.instancenorm._InstanceNorm
and LocalResponseNorm with custom keys ("bias"), ExponentialMovingAverage as a subclass of
torch.optim.swa_utils.AveragedModel(use_buffers=True) with model_ema.n_averaged.fill_(0) in warmup;
RandomMixup and RandomCutmix (one_hot(...).to(dtype=batch.dtype), batch.roll(1, 0),
torch._sample_dirichlet, torch.rand(1).item(), torch.randint(W, (1,)), int(torch.clamp(...)), mul_/add_
in place) chosen by a RandomChoice in the DataLoader's collate_fn over default_collate;
CrossEntropyLoss(label_smoothing=) on class-probability targets, SGD(nesterov) or AdamW over the param
groups, LinearLR warmup then CosineAnnealingLR in SequentialLR(milestones=), clip_grad_norm_,
torch.cuda.amp.autocast(enabled=False), evaluate's len(dataset) != tensor check, and the checkpoint
dict with the model, optimizer, lr_scheduler, model_ema state_dicts and the argparse Namespace."""
import argparse
import datetime
import io
import math
import os
import random
import time
import warnings
from collections import defaultdict, deque
from contextlib import redirect_stdout

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from
from torchvision_models import torchvision_resnet

CLASSES = 6


def build_utils(torch):
    dist = torch.distributed
    F_t = torch.nn.functional
    Tensor = torch.Tensor

    class SmoothedValue:
        """Track a series of values and provide access to smoothed values over a
        window or the global series average.
        """

        def __init__(self, window_size=20, fmt=None):
            if fmt is None:
                fmt = "{median:.4f} ({global_avg:.4f})"
            self.deque = deque(maxlen=window_size)
            self.total = 0.0
            self.count = 0
            self.fmt = fmt

        def update(self, value, n=1):
            self.deque.append(value)
            self.count += n
            self.total += value * n

        def synchronize_between_processes(self):
            """
            Warning: does not synchronize the deque!
            """
            t = reduce_across_processes([self.count, self.total])
            t = t.tolist()
            self.count = int(t[0])
            self.total = t[1]

        @property
        def median(self):
            d = torch.tensor(list(self.deque))
            return d.median().item()

        @property
        def avg(self):
            d = torch.tensor(list(self.deque), dtype=torch.float32)
            return d.mean().item()

        @property
        def global_avg(self):
            return self.total / self.count

        @property
        def max(self):
            return max(self.deque)

        @property
        def value(self):
            return self.deque[-1]

        def __str__(self):
            return self.fmt.format(
                median=self.median, avg=self.avg, global_avg=self.global_avg, max=self.max, value=self.value
            )

    class MetricLogger:
        def __init__(self, delimiter="\t"):
            self.meters = defaultdict(SmoothedValue)
            self.delimiter = delimiter

        def update(self, **kwargs):
            for k, v in kwargs.items():
                if isinstance(v, torch.Tensor):
                    v = v.item()
                assert isinstance(v, (float, int))
                self.meters[k].update(v)

        def __getattr__(self, attr):
            if attr in self.meters:
                return self.meters[attr]
            if attr in self.__dict__:
                return self.__dict__[attr]
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

        def __str__(self):
            loss_str = []
            for name, meter in self.meters.items():
                loss_str.append(f"{name}: {str(meter)}")
            return self.delimiter.join(loss_str)

        def synchronize_between_processes(self):
            for meter in self.meters.values():
                meter.synchronize_between_processes()

        def add_meter(self, name, meter):
            self.meters[name] = meter

        def log_every(self, iterable, print_freq, header=None):
            i = 0
            if not header:
                header = ""
            start_time = time.time()
            end = time.time()
            iter_time = SmoothedValue(fmt="{avg:.4f}")
            data_time = SmoothedValue(fmt="{avg:.4f}")
            space_fmt = ":" + str(len(str(len(iterable)))) + "d"
            if torch.cuda.is_available():
                log_msg = self.delimiter.join(
                    [header, "[{0" + space_fmt + "}/{1}]", "eta: {eta}", "{meters}", "time: {time}", "data: {data}",
                     "max mem: {memory:.0f}"]
                )
            else:
                log_msg = self.delimiter.join(
                    [header, "[{0" + space_fmt + "}/{1}]", "eta: {eta}", "{meters}", "time: {time}", "data: {data}"]
                )
            MB = 1024.0 * 1024.0
            for obj in iterable:
                data_time.update(time.time() - end)
                yield obj
                iter_time.update(time.time() - end)
                if i % print_freq == 0:
                    eta_seconds = iter_time.global_avg * (len(iterable) - i)
                    eta_string = str(datetime.timedelta(seconds=int(eta_seconds)))
                    if torch.cuda.is_available():
                        print(
                            log_msg.format(
                                i, len(iterable), eta=eta_string, meters=str(self), time=str(iter_time),
                                data=str(data_time), memory=torch.cuda.max_memory_allocated() / MB,
                            )
                        )
                    else:
                        print(
                            log_msg.format(
                                i, len(iterable), eta=eta_string, meters=str(self), time=str(iter_time),
                                data=str(data_time)
                            )
                        )
                i += 1
                end = time.time()
            total_time = time.time() - start_time
            total_time_str = str(datetime.timedelta(seconds=int(total_time)))
            print(f"{header} Total time: {total_time_str}")

    class ExponentialMovingAverage(torch.optim.swa_utils.AveragedModel):
        """Maintains moving averages of model parameters using an exponential decay.
        ``ema_avg = decay * avg_model_param + (1 - decay) * model_param``
        `torch.optim.swa_utils.AveragedModel <https://pytorch.org/docs/stable/optim.html#custom-averaging-strategies>`_
        is used to compute the EMA.
        """

        def __init__(self, model, decay, device="cpu"):
            def ema_avg(avg_model_param, model_param, num_averaged):
                return decay * avg_model_param + (1 - decay) * model_param

            super().__init__(model, device, ema_avg, use_buffers=True)

    def accuracy(output, target, topk=(1,)):
        """Computes the accuracy over the k top predictions for the specified values of k"""
        with torch.inference_mode():
            maxk = max(topk)
            batch_size = target.size(0)
            if target.ndim == 2:
                target = target.max(dim=1)[1]
            _, pred = output.topk(maxk, 1, True, True)
            pred = pred.t()
            correct = pred.eq(target[None])
            res = []
            for k in topk:
                correct_k = correct[:k].flatten().sum(dtype=torch.float32)
                res.append(correct_k * (100.0 / batch_size))
            return res

    def is_dist_avail_and_initialized():
        if not dist.is_available():
            return False
        if not dist.is_initialized():
            return False
        return True

    def get_rank():
        if not is_dist_avail_and_initialized():
            return 0
        return dist.get_rank()

    def is_main_process():
        return get_rank() == 0

    def save_on_master(*args, **kwargs):
        if is_main_process():
            torch.save(*args, **kwargs)

    def reduce_across_processes(val):
        if not is_dist_avail_and_initialized():
            # nothing to sync, but we still convert to tensor for consistency with the distributed case.
            return torch.tensor(val)
        t = torch.tensor(val, device="cuda")
        dist.barrier()
        dist.all_reduce(t)
        return t

    def set_weight_decay(model, weight_decay, norm_weight_decay=None, norm_classes=None,
                         custom_keys_weight_decay=None):
        if not norm_classes:
            norm_classes = [
                torch.nn.modules.batchnorm._BatchNorm,
                torch.nn.LayerNorm,
                torch.nn.GroupNorm,
                torch.nn.modules.instancenorm._InstanceNorm,
                torch.nn.LocalResponseNorm,
            ]
        norm_classes = tuple(norm_classes)
        params = {
            "other": [],
            "norm": [],
        }
        params_weight_decay = {
            "other": weight_decay,
            "norm": norm_weight_decay,
        }
        custom_keys = []
        if custom_keys_weight_decay is not None:
            for key, weight_decay in custom_keys_weight_decay:
                params[key] = []
                params_weight_decay[key] = weight_decay
                custom_keys.append(key)

        def _add_params(module, prefix=""):
            for name, p in module.named_parameters(recurse=False):
                if not p.requires_grad:
                    continue
                is_custom_key = False
                for key in custom_keys:
                    target_name = f"{prefix}.{name}" if prefix != "" and "." in key else name
                    if key == target_name:
                        params[key].append(p)
                        is_custom_key = True
                        break
                if not is_custom_key:
                    if norm_weight_decay is not None and isinstance(module, norm_classes):
                        params["norm"].append(p)
                    else:
                        params["other"].append(p)
            for child_name, child_module in module.named_children():
                child_prefix = f"{prefix}.{child_name}" if prefix != "" else child_name
                _add_params(child_module, prefix=child_prefix)

        _add_params(model)
        param_groups = []
        for key in params:
            if len(params[key]) > 0:
                param_groups.append({"params": params[key], "weight_decay": params_weight_decay[key]})
        return param_groups

    # ---- transforms.py ----
    class RandomMixup(torch.nn.Module):
        """Randomly apply Mixup to the provided batch and targets."""

        def __init__(self, num_classes: int, p: float = 0.5, alpha: float = 1.0, inplace: bool = False) -> None:
            super().__init__()
            if num_classes < 1:
                raise ValueError(
                    f"Please provide a valid positive value for the num_classes. Got num_classes={num_classes}"
                )
            if alpha <= 0:
                raise ValueError("Alpha param can't be zero.")
            self.num_classes = num_classes
            self.p = p
            self.alpha = alpha
            self.inplace = inplace

        def forward(self, batch: Tensor, target: Tensor):
            if batch.ndim != 4:
                raise ValueError(f"Batch ndim should be 4. Got {batch.ndim}")
            if target.ndim != 1:
                raise ValueError(f"Target ndim should be 1. Got {target.ndim}")
            if not batch.is_floating_point():
                raise TypeError(f"Batch dtype should be a float tensor. Got {batch.dtype}.")
            if target.dtype != torch.int64:
                raise TypeError(f"Target dtype should be torch.int64. Got {target.dtype}")
            if not self.inplace:
                batch = batch.clone()
                target = target.clone()
            if target.ndim == 1:
                target = torch.nn.functional.one_hot(target, num_classes=self.num_classes).to(dtype=batch.dtype)
            if torch.rand(1).item() >= self.p:
                return batch, target
            # It's faster to roll the batch by one instead of shuffling it to create image pairs
            batch_rolled = batch.roll(1, 0)
            target_rolled = target.roll(1, 0)
            # Implemented as on mixup paper, page 3.
            lambda_param = float(torch._sample_dirichlet(torch.tensor([self.alpha, self.alpha]))[0])
            batch_rolled.mul_(1.0 - lambda_param)
            batch.mul_(lambda_param).add_(batch_rolled)
            target_rolled.mul_(1.0 - lambda_param)
            target.mul_(lambda_param).add_(target_rolled)
            return batch, target

    class RandomCutmix(torch.nn.Module):
        """Randomly apply Cutmix to the provided batch and targets."""

        def __init__(self, num_classes: int, p: float = 0.5, alpha: float = 1.0, inplace: bool = False) -> None:
            super().__init__()
            if num_classes < 1:
                raise ValueError("Please provide a valid positive value for the num_classes.")
            if alpha <= 0:
                raise ValueError("Alpha param can't be zero.")
            self.num_classes = num_classes
            self.p = p
            self.alpha = alpha
            self.inplace = inplace

        def forward(self, batch: Tensor, target: Tensor):
            if batch.ndim != 4:
                raise ValueError(f"Batch ndim should be 4. Got {batch.ndim}")
            if target.ndim != 1:
                raise ValueError(f"Target ndim should be 1. Got {target.ndim}")
            if not batch.is_floating_point():
                raise TypeError(f"Batch dtype should be a float tensor. Got {batch.dtype}.")
            if target.dtype != torch.int64:
                raise TypeError(f"Target dtype should be torch.int64. Got {target.dtype}")
            if not self.inplace:
                batch = batch.clone()
                target = target.clone()
            if target.ndim == 1:
                target = torch.nn.functional.one_hot(target, num_classes=self.num_classes).to(dtype=batch.dtype)
            if torch.rand(1).item() >= self.p:
                return batch, target
            # It's faster to roll the batch by one instead of shuffling it to create image pairs
            batch_rolled = batch.roll(1, 0)
            target_rolled = target.roll(1, 0)
            # Implemented as on cutmix paper, page 12 (with minor corrections on typos).
            lambda_param = float(torch._sample_dirichlet(torch.tensor([self.alpha, self.alpha]))[0])
            _, H, W = batch.shape[-3:]  # torchvision.transforms.functional.get_dimensions(batch)
            r_x = torch.randint(W, (1,))
            r_y = torch.randint(H, (1,))
            r = 0.5 * math.sqrt(1.0 - lambda_param)
            r_w_half = int(r * W)
            r_h_half = int(r * H)
            x1 = int(torch.clamp(r_x - r_w_half, min=0))
            y1 = int(torch.clamp(r_y - r_h_half, min=0))
            x2 = int(torch.clamp(r_x + r_w_half, max=W))
            y2 = int(torch.clamp(r_y + r_h_half, max=H))
            batch[:, :, y1:y2, x1:x2] = batch_rolled[:, :, y1:y2, x1:x2]
            lambda_param = float(1.0 - (x2 - x1) * (y2 - y1) / (W * H))
            target_rolled.mul_(1.0 - lambda_param)
            target.mul_(lambda_param).add_(target_rolled)
            return batch, target

    class RandomChoice:
        """torchvision.transforms.RandomChoice: one of the transforms, picked by random.choices."""

        def __init__(self, transforms, p=None):
            self.transforms = transforms
            self.p = p

        def __call__(self, *args):
            t = random.choices(self.transforms, weights=self.p)[0]
            return t(*args)

    return argparse.Namespace(**{k: v for k, v in locals().items() if not k.startswith("_")})


def train_one_epoch(torch, utils, model, criterion, optimizer, data_loader, device, epoch, args, model_ema=None,
                    scaler=None):
    nn = torch.nn
    model.train()
    metric_logger = utils.MetricLogger(delimiter="  ")
    metric_logger.add_meter("lr", utils.SmoothedValue(window_size=1, fmt="{value}"))
    metric_logger.add_meter("img/s", utils.SmoothedValue(window_size=10, fmt="{value}"))
    header = f"Epoch: [{epoch}]"
    losses = []
    for i, (image, target) in enumerate(metric_logger.log_every(data_loader, args.print_freq, header)):
        start_time = time.time()
        image, target = image.to(device), target.to(device)
        with torch.cuda.amp.autocast(enabled=scaler is not None):
            output = model(image)
            loss = criterion(output, target)
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            if args.clip_grad_norm is not None:
                # we should unscale the gradients of optimizer's assigned params if do gradient clipping
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            if args.clip_grad_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
            optimizer.step()
        if model_ema and i % args.model_ema_steps == 0:
            model_ema.update_parameters(model)
            if epoch < args.lr_warmup_epochs:
                # Reset ema buffer to keep copying weights during warmup period
                model_ema.n_averaged.fill_(0)
        acc1, acc5 = utils.accuracy(output, target, topk=(1, 5))
        batch_size = image.shape[0]
        metric_logger.update(loss=loss.item(), lr=optimizer.param_groups[0]["lr"])
        metric_logger.meters["acc1"].update(acc1.item(), n=batch_size)
        metric_logger.meters["acc5"].update(acc5.item(), n=batch_size)
        metric_logger.meters["img/s"].update(batch_size / (time.time() - start_time))
        losses.append(loss.item())
    return losses, metric_logger.loss.median, metric_logger.acc1.global_avg


def evaluate(torch, utils, model, criterion, data_loader, device, print_freq=100, log_suffix=""):
    model.eval()
    metric_logger = utils.MetricLogger(delimiter="  ")
    header = f"Test: {log_suffix}"
    num_processed_samples = 0
    with torch.inference_mode():
        for image, target in metric_logger.log_every(data_loader, print_freq, header):
            image = image.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            output = model(image)
            loss = criterion(output, target)
            acc1, acc5 = utils.accuracy(output, target, topk=(1, 5))
            # FIXME need to take into account that the datasets
            # could have been padded in distributed setup
            batch_size = image.shape[0]
            metric_logger.update(loss=loss.item())
            metric_logger.meters["acc1"].update(acc1.item(), n=batch_size)
            metric_logger.meters["acc5"].update(acc5.item(), n=batch_size)
            num_processed_samples += batch_size
    # gather the stats from all processes
    num_processed_samples = utils.reduce_across_processes(num_processed_samples)
    if (
        hasattr(data_loader.dataset, "__len__")
        and len(data_loader.dataset) != num_processed_samples
        and torch.distributed.get_rank() == 0
    ):
        # See FIXME above
        warnings.warn(
            f"It looks like the dataset has {len(data_loader.dataset)} samples, but {num_processed_samples} "
            "samples were used for the validation, which might bias the results. "
            "Try adjusting the batch size and / or the world size. "
            "Setting the world size to 1 is possible but not recommended for reproducibility."
        )
    metric_logger.synchronize_between_processes()
    print(f"{header} Acc@1 {metric_logger.acc1.global_avg:.3f} Acc@5 {metric_logger.acc5.global_avg:.3f}")
    return metric_logger.acc1.global_avg, metric_logger.loss.global_avg


def reference_recipe(torch, init=None, opt="sgd_nesterov", mixup_alpha=0.0, cutmix_alpha=0.0, model_ema=False,
                     output_dir=None, epochs=3):
    utils = build_utils(torch)
    nn = torch.nn
    default_collate = torch.utils.data.default_collate
    torch.manual_seed(0)
    random.seed(0)
    args = argparse.Namespace(
        opt=opt, lr=0.05, momentum=0.9, weight_decay=1e-4, norm_weight_decay=0.0, bias_weight_decay=0.0,
        transformer_embedding_decay=None, label_smoothing=0.1, mixup_alpha=mixup_alpha, cutmix_alpha=cutmix_alpha,
        lr_scheduler="cosineannealinglr", lr_warmup_epochs=1, lr_warmup_method="linear", lr_warmup_decay=0.1,
        lr_min=0.0, lr_step_size=30, lr_gamma=0.1, epochs=epochs, start_epoch=0, batch_size=8, print_freq=2,
        clip_grad_norm=1.0, model_ema=model_ema, model_ema_steps=2, model_ema_decay=0.9, world_size=1,
        amp=False, output_dir=output_dir, workers=0)
    device = torch.device("cpu")
    rng = np.random.default_rng(0)
    images = rng.standard_normal((32, 3, 16, 16)).astype(np.float32)
    labels = rng.integers(0, CLASSES, 32)
    for k, label in enumerate(labels):
        images[k, label % 3, : 2 + label, :] += 1.5  # a learnable cue per class
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(images[:24]), torch.from_numpy(labels[:24]))
    dataset_test = torch.utils.data.TensorDataset(torch.from_numpy(images[24:]), torch.from_numpy(labels[24:]))
    train_sampler = torch.utils.data.SequentialSampler(dataset)
    test_sampler = torch.utils.data.SequentialSampler(dataset_test)
    num_classes = CLASSES

    collate_fn = None
    mixup_transforms = []
    if args.mixup_alpha > 0.0:
        mixup_transforms.append(utils.RandomMixup(num_classes, p=1.0, alpha=args.mixup_alpha))
    if args.cutmix_alpha > 0.0:
        mixup_transforms.append(utils.RandomCutmix(num_classes, p=1.0, alpha=args.cutmix_alpha))
    if mixup_transforms:
        mixupcutmix = utils.RandomChoice(mixup_transforms)

        def collate_fn(batch):
            return mixupcutmix(*default_collate(batch))

    data_loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.batch_size, sampler=train_sampler, num_workers=args.workers, pin_memory=True,
        collate_fn=collate_fn,
    )
    data_loader_test = torch.utils.data.DataLoader(
        dataset_test, batch_size=args.batch_size, sampler=test_sampler, num_workers=args.workers, pin_memory=True
    )
    _, _, resnet18 = torchvision_resnet(torch)
    model = resnet18(num_classes=num_classes, layers=(1, 1, 1, 1), widths=(8, 8, 16, 16))
    model.to(device)
    result = {}
    start_from(torch, model, init, result)

    criterion = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    custom_keys_weight_decay = []
    if args.bias_weight_decay is not None:
        custom_keys_weight_decay.append(("bias", args.bias_weight_decay))
    if args.transformer_embedding_decay is not None:
        for key in ["class_token", "position_embedding", "relative_position_bias_table"]:
            custom_keys_weight_decay.append((key, args.transformer_embedding_decay))
    parameters = utils.set_weight_decay(
        model,
        args.weight_decay,
        norm_weight_decay=args.norm_weight_decay,
        custom_keys_weight_decay=custom_keys_weight_decay if len(custom_keys_weight_decay) > 0 else None,
    )
    result["groups"] = [len(g["params"]) for g in parameters]
    opt_name = args.opt.lower()
    if opt_name.startswith("sgd"):
        optimizer = torch.optim.SGD(parameters, lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay,
                                    nesterov="nesterov" in opt_name)
    elif opt_name == "rmsprop":
        optimizer = torch.optim.RMSprop(parameters, lr=args.lr, momentum=args.momentum,
                                        weight_decay=args.weight_decay, eps=0.0316, alpha=0.9)
    elif opt_name == "adamw":
        optimizer = torch.optim.AdamW(parameters, lr=args.lr, weight_decay=args.weight_decay)
    else:
        raise RuntimeError(f"Invalid optimizer {args.opt}. Only SGD, RMSprop and AdamW are supported.")
    scaler = torch.cuda.amp.GradScaler() if args.amp else None

    args.lr_scheduler = args.lr_scheduler.lower()
    if args.lr_scheduler == "steplr":
        main_lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=args.lr_step_size,
                                                            gamma=args.lr_gamma)
    elif args.lr_scheduler == "cosineannealinglr":
        main_lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(
            optimizer, T_max=args.epochs - args.lr_warmup_epochs, eta_min=args.lr_min)
    elif args.lr_scheduler == "exponentiallr":
        main_lr_scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=args.lr_gamma)
    if args.lr_warmup_epochs > 0:
        if args.lr_warmup_method == "linear":
            warmup_lr_scheduler = torch.optim.lr_scheduler.LinearLR(
                optimizer, start_factor=args.lr_warmup_decay, total_iters=args.lr_warmup_epochs)
        elif args.lr_warmup_method == "constant":
            warmup_lr_scheduler = torch.optim.lr_scheduler.ConstantLR(
                optimizer, factor=args.lr_warmup_decay, total_iters=args.lr_warmup_epochs)
        lr_scheduler = torch.optim.lr_scheduler.SequentialLR(
            optimizer, schedulers=[warmup_lr_scheduler, main_lr_scheduler], milestones=[args.lr_warmup_epochs])
    else:
        lr_scheduler = main_lr_scheduler

    model_without_ddp = model
    model_ema = None
    if args.model_ema:
        # Decay adjustment that aims to keep the decay independent of other hyper-parameters originally proposed at:
        # https://github.com/facebookresearch/pycls/blob/f8cd9627/pycls/core/net.py#L123
        adjust = args.world_size * args.batch_size * args.model_ema_steps / args.epochs
        alpha = 1.0 - args.model_ema_decay
        alpha = min(1.0, alpha * adjust)
        model_ema = utils.ExponentialMovingAverage(model_without_ddp, device=device, decay=1.0 - alpha)

    out = io.StringIO()
    epochs_log = []
    with redirect_stdout(out):
        for epoch in range(args.start_epoch, args.epochs):
            losses, median, acc1 = train_one_epoch(torch, utils, model, criterion, optimizer, data_loader, device,
                                                   epoch, args, model_ema, scaler)
            lr_scheduler.step()
            test_acc, test_loss = evaluate(torch, utils, model, criterion, data_loader_test, device=device)
            epoch_log = [losses, median, acc1, test_acc, test_loss, lr_scheduler.get_last_lr()]
            if model_ema:
                epoch_log += list(evaluate(torch, utils, model_ema, criterion, data_loader_test, device=device,
                                           log_suffix="EMA"))
            epochs_log.append(epoch_log)
            if args.output_dir:
                checkpoint = {
                    "model": model_without_ddp.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "lr_scheduler": lr_scheduler.state_dict(),
                    "epoch": epoch,
                    "args": args,
                }
                if model_ema:
                    checkpoint["model_ema"] = model_ema.state_dict()
                if scaler:
                    checkpoint["scaler"] = scaler.state_dict()
                utils.save_on_master(checkpoint, os.path.join(args.output_dir, f"model_{epoch}.pth"))
                utils.save_on_master(checkpoint, os.path.join(args.output_dir, "checkpoint.pth"))
    printed = out.getvalue()
    result["epochs"] = epochs_log
    result["printed_headers"] = sorted({line.split("[")[0].strip() for line in printed.splitlines()
                                        if line.startswith("Epoch")})
    result["fc_weight"] = numpy_of(model.fc.weight)
    if model_ema is not None:
        result["ema_state"] = {k: numpy_of(v) for k, v in model_ema.state_dict().items() if v.is_floating_point()}
        result["n_averaged"] = int(model_ema.n_averaged)
    if output_dir is not None:
        # resuming as train.py does with --resume
        checkpoint = torch.load(os.path.join(output_dir, "checkpoint.pth"), map_location="cpu", weights_only=False)
        model_without_ddp.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        lr_scheduler.load_state_dict(checkpoint["lr_scheduler"])
        args.start_epoch = checkpoint["epoch"] + 1
        if model_ema:
            model_ema.load_state_dict(checkpoint["model_ema"])
        result["resumed"] = {"start_epoch": args.start_epoch, "lr": lr_scheduler.get_last_lr(),
                             "opt": checkpoint["args"].opt}
    return result


def test_reference_recipe_sgd_nesterov_label_smoothing():
    ref, got = compare_program(reference_recipe, rtol=1e-3, atol=1e-4)
    assert ref["groups"] == [13, 12, 13]  # weights, norm weights, biases (bias_weight_decay=0.0)


def test_reference_recipe_mixup_cutmix_ema(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    compare_program(reference_recipe, opt="adamw", mixup_alpha=0.2, cutmix_alpha=1.0, model_ema=True, epochs=2,
                    output_dir=str(tmp_path / "pt"), mt_options={"output_dir": str(tmp_path / "mt")},
                    rtol=1e-3, atol=1e-4)

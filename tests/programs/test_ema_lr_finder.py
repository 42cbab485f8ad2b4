"""Weight averaging and learning-rate range tests as the published code writes them:
- timm's ModelEmaV2 (deepcopy, update_fn over state_dict values with copy_) and ModelEmaV3
  (get_decay with warmup, torch._foreach_lerp_ over the floating state, copy_ for the integer
  buffers, or over parameters only with buffers copied: exclude_buffers), both updated after each
  optimizer step of a BatchNorm MLP, and torch.optim.swa_utils.AveragedModel with
  multi_avg_fn=get_ema_multi_avg_fn(0.999) and use_buffers=True;
- davidtvs/pytorch-lr-finder's LRFinder: its ExponentialLR and LinearLR (subclasses of
  _LRScheduler with get_lr over base_lrs), StateCacher (deepcopy of the state_dicts), range_test
  with accumulation_steps (loss /= accumulation_steps, total_loss += loss), smoothing, divergence
  stop, _check_for_scheduler's "initial_lr" test, and reset() restoring model and optimizer, after
  which a fresh scheduler can be attached; then training at the suggested learning rate (the
  steepest descent of the smoothed curve) with gradient accumulation and
  zero_grad(set_to_none=True), whose grads are None between accumulation windows."""
import copy
import math
from copy import deepcopy

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def timm_ema(torch):
    nn = torch.nn

    class ModelEmaV2(nn.Module):
        def __init__(self, model, decay=0.9999, device=None):
            super().__init__()
            # make a copy of the model for accumulating moving average of weights
            self.module = deepcopy(model)
            self.module.eval()
            self.decay = decay
            self.device = device  # perform ema on different device from model if set
            if self.device is not None:
                self.module.to(device=device)

        def _update(self, model, update_fn):
            with torch.no_grad():
                for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                    if self.device is not None:
                        model_v = model_v.to(device=self.device)
                    ema_v.copy_(update_fn(ema_v, model_v))

        def update(self, model):
            self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)

        def set(self, model):
            self._update(model, update_fn=lambda e, m: m)

        def forward(self, *args, **kwargs):
            return self.module(*args, **kwargs)

    class ModelEmaV3(nn.Module):
        def __init__(self, model, decay=0.9999, min_decay=0.0, update_after_step=0, use_warmup=False,
                     warmup_gamma=1.0, warmup_power=2 / 3, device=None, foreach=True, exclude_buffers=False):
            super().__init__()
            # make a copy of the model for accumulating moving average of weights
            self.module = deepcopy(model)
            self.module.eval()
            self.decay = decay
            self.min_decay = min_decay
            self.update_after_step = update_after_step
            self.use_warmup = use_warmup
            self.warmup_gamma = warmup_gamma
            self.warmup_power = warmup_power
            self.foreach = foreach
            self.device = device  # perform ema on different device from model if set
            self.exclude_buffers = exclude_buffers
            if self.device is not None and device != next(model.parameters()).device:
                self.foreach = False  # cannot use foreach methods with different devices
                self.module.to(device=device)

        def get_decay(self, step=None):
            """
            Compute the decay factor for the exponential moving average.
            """
            if step is None:
                return self.decay

            step = max(0, step - self.update_after_step - 1)
            if step <= 0:
                return 0.0

            if self.use_warmup:
                decay = 1 - (1 + step / self.warmup_gamma) ** -self.warmup_power
                decay = max(min(decay, self.decay), self.min_decay)
            else:
                decay = self.decay

            return decay

        @torch.no_grad()
        def update(self, model, step=None):
            decay = self.get_decay(step)
            if self.exclude_buffers:
                self.apply_update_no_buffers_(model, decay)
            else:
                self.apply_update_(model, decay)

        def apply_update_(self, model, decay):
            # interpolate parameters and buffers
            if self.foreach:
                ema_lerp_values = []
                model_lerp_values = []
                for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                    if ema_v.is_floating_point():
                        ema_lerp_values.append(ema_v)
                        model_lerp_values.append(model_v)
                    else:
                        ema_v.copy_(model_v)

                if hasattr(torch, '_foreach_lerp_'):
                    torch._foreach_lerp_(ema_lerp_values, model_lerp_values, weight=1. - decay)
                else:
                    torch._foreach_mul_(ema_lerp_values, scalar=decay)
                    torch._foreach_add_(ema_lerp_values, model_lerp_values, alpha=1. - decay)
            else:
                for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                    if ema_v.is_floating_point():
                        ema_v.lerp_(model_v.to(device=self.device), weight=1. - decay)
                    else:
                        ema_v.copy_(model_v.to(device=self.device))

        def apply_update_no_buffers_(self, model, decay):
            # interpolate parameters, copy buffers
            ema_params = tuple(self.module.parameters())
            model_params = tuple(model.parameters())
            if self.foreach:
                if hasattr(torch, '_foreach_lerp_'):
                    torch._foreach_lerp_(ema_params, model_params, weight=1. - decay)
                else:
                    torch._foreach_mul_(ema_params, scalar=decay)
                    torch._foreach_add_(ema_params, model_params, alpha=1 - decay)
            else:
                for ema_p, model_p in zip(ema_params, model_params):
                    ema_p.lerp_(model_p.to(device=self.device), weight=1. - decay)

            for ema_b, model_b in zip(self.module.buffers(), model.buffers()):
                ema_b.copy_(model_b.to(device=self.device))

        @torch.no_grad()
        def set(self, model):
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                ema_v.copy_(model_v.to(device=self.device))

        def forward(self, *args, **kwargs):
            return self.module(*args, **kwargs)

    return ModelEmaV2, ModelEmaV3


def blobs(rng, n, d=8, k=3):
    centers = rng.standard_normal((k, d)) * 2
    y = rng.integers(0, k, n)
    x = centers[y] + rng.standard_normal((n, d))
    return x.astype(np.float32), y


def make_mlp(torch):
    nn = torch.nn
    return nn.Sequential(nn.Linear(8, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 3))


def ema_program(torch, init=None, steps=12, batch=16):
    ModelEmaV2, ModelEmaV3 = timm_ema(torch)
    swa_utils = torch.optim.swa_utils
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x_np, y_np = blobs(rng, steps * batch)
    model = make_mlp(torch)
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    criterion = torch.nn.CrossEntropyLoss()
    ema_v2 = ModelEmaV2(model, decay=0.9)
    ema_v3 = ModelEmaV3(model, decay=0.95, use_warmup=True, warmup_power=3 / 4)
    ema_v3_nobuf = ModelEmaV3(model, decay=0.8, exclude_buffers=True)
    ema_v3_loop = ModelEmaV3(model, decay=0.8, foreach=False, device="cpu")
    ema_swa = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9), use_buffers=True)
    losses, decays = [], []
    for step in range(steps):
        x = torch.from_numpy(x_np[step * batch:(step + 1) * batch])
        y = torch.from_numpy(y_np[step * batch:(step + 1) * batch])
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema_v2.update(model)
        ema_v3.update(model, step=step)
        ema_v3_nobuf.update(model)
        ema_v3_loop.update(model, step=step)
        ema_swa.update_parameters(model)
        losses.append(loss.item())
        decays.append(ema_v3.get_decay(step))
    x_eval = torch.from_numpy(x_np[:32])
    with torch.no_grad():
        outputs = {name: numpy_of(m(x_eval)) for name, m in
                   dict(v2=ema_v2, v3=ema_v3, v3_nobuf=ema_v3_nobuf, v3_loop=ema_v3_loop, swa=ema_swa).items()}
    result.update(losses=losses, decays=decays, outputs=outputs,
                  v2={k: numpy_of(v) for k, v in ema_v2.module.state_dict().items()},
                  v3={k: numpy_of(v) for k, v in ema_v3.module.state_dict().items()},
                  v3_nobuf={k: numpy_of(v) for k, v in ema_v3_nobuf.module.state_dict().items()},
                  v3_loop=[numpy_of(v) for v in ema_v3_loop.module.state_dict().values()],
                  swa={k: numpy_of(v) for k, v in ema_swa.state_dict().items()},
                  n_averaged=int(ema_swa.n_averaged))
    return result


def lr_finder_classes(torch):
    _LRScheduler = torch.optim.lr_scheduler._LRScheduler

    class LinearLR(_LRScheduler):
        """Linearly increases the learning rate between two boundaries over a number of iterations."""

        def __init__(self, optimizer, end_lr, num_iter, last_epoch=-1):
            self.end_lr = end_lr

            if num_iter <= 1:
                raise ValueError("`num_iter` must be larger than 1")
            self.num_iter = num_iter

            super(LinearLR, self).__init__(optimizer, last_epoch)

        def get_lr(self):
            # In earlier Pytorch versions last_epoch starts at -1, while in recent versions
            # it starts at 0. We need to adjust the math a bit to handle this. See
            # discussion at: https://github.com/davidtvs/pytorch-lr-finder/pull/42
            curr_iter = self.last_epoch
            r = curr_iter / (self.num_iter - 1)

            return [base_lr + r * (self.end_lr - base_lr) for base_lr in self.base_lrs]

    class ExponentialLR(_LRScheduler):
        """Exponentially increases the learning rate between two boundaries over a number of
        iterations."""

        def __init__(self, optimizer, end_lr, num_iter, last_epoch=-1):
            self.end_lr = end_lr

            if num_iter <= 1:
                raise ValueError("`num_iter` must be larger than 1")
            self.num_iter = num_iter

            super(ExponentialLR, self).__init__(optimizer, last_epoch)

        def get_lr(self):
            curr_iter = self.last_epoch
            r = curr_iter / (self.num_iter - 1)

            return [base_lr * (self.end_lr / base_lr) ** r for base_lr in self.base_lrs]

    class StateCacher(object):
        def __init__(self, in_memory, cache_dir=None):
            self.in_memory = in_memory
            self.cache_dir = cache_dir
            self.cached = {}

        def store(self, key, state_dict):
            if self.in_memory:
                self.cached.update({key: copy.deepcopy(state_dict)})
            else:
                raise NotImplementedError("this copy keeps the cache in memory")

        def retrieve(self, key):
            if key not in self.cached:
                raise KeyError("Target {} was not cached.".format(key))

            if self.in_memory:
                return self.cached.get(key)

    class DataLoaderIter(object):
        def __init__(self, data_loader):
            self.data_loader = data_loader
            self._iterator = iter(data_loader)

        @property
        def dataset(self):
            return self.data_loader.dataset

        def inputs_labels_from_batch(self, batch_data):
            if not isinstance(batch_data, list) and not isinstance(batch_data, tuple):
                raise ValueError(
                    "Your batch type is not supported: {}. Please inherit from "
                    "`TrainDataLoaderIter` or `ValDataLoaderIter` and override the "
                    "`inputs_labels_from_batch` method.".format(type(batch_data))
                )

            inputs, labels, *_ = batch_data

            return inputs, labels

        def __iter__(self):
            return self

        def __next__(self):
            batch = next(self._iterator)
            return self.inputs_labels_from_batch(batch)

    class TrainDataLoaderIter(DataLoaderIter):
        def __init__(self, data_loader, auto_reset=True):
            super().__init__(data_loader)
            self.auto_reset = auto_reset

        def __next__(self):
            try:
                batch = next(self._iterator)
                inputs, labels = self.inputs_labels_from_batch(batch)
            except StopIteration:
                if not self.auto_reset:
                    raise
                self._iterator = iter(self.data_loader)
                batch = next(self._iterator)
                inputs, labels = self.inputs_labels_from_batch(batch)

            return inputs, labels

    class LRFinder(object):
        def __init__(self, model, optimizer, criterion, device=None, memory_cache=True, cache_dir=None):
            # Check if the optimizer is already attached to a scheduler
            self.optimizer = optimizer
            self._check_for_scheduler()

            self.model = model
            self.criterion = criterion
            self.history = {"lr": [], "loss": []}
            self.best_loss = None
            self.memory_cache = memory_cache
            self.cache_dir = cache_dir

            # Save the original state of the model and optimizer so they can be restored if
            # needed
            self.model_device = next(self.model.parameters()).device
            self.state_cacher = StateCacher(memory_cache, cache_dir=cache_dir)
            self.state_cacher.store("model", self.model.state_dict())
            self.state_cacher.store("optimizer", self.optimizer.state_dict())

            # If device is None, use the same as the model
            if device:
                self.device = device
            else:
                self.device = self.model_device

        def reset(self):
            """Restores the model and optimizer to their initial states."""

            self.model.load_state_dict(self.state_cacher.retrieve("model"))
            self.optimizer.load_state_dict(self.state_cacher.retrieve("optimizer"))
            self.model.to(self.model_device)

        def range_test(self, train_loader, val_loader=None, start_lr=None, end_lr=10, num_iter=100,
                       step_mode="exp", smooth_f=0.05, diverge_th=5, accumulation_steps=1,
                       non_blocking_transfer=True):
            # Reset test results
            self.history = {"lr": [], "loss": []}
            self.best_loss = None

            # Move the model to the proper device
            self.model.to(self.device)

            # Check if the optimizer is already attached to a scheduler
            self._check_for_scheduler()

            # Set the starting learning rate
            if start_lr:
                self._set_learning_rate(start_lr)

            # Initialize the proper learning rate policy
            if step_mode.lower() == "exp":
                lr_schedule = ExponentialLR(self.optimizer, end_lr, num_iter)
            elif step_mode.lower() == "linear":
                lr_schedule = LinearLR(self.optimizer, end_lr, num_iter)
            else:
                raise ValueError("expected one of (exp, linear), got {}".format(step_mode))

            if smooth_f < 0 or smooth_f >= 1:
                raise ValueError("smooth_f is outside the range [0, 1[")

            # Create an iterator to get data batch by batch
            if isinstance(train_loader, torch.utils.data.DataLoader):
                train_iter = TrainDataLoaderIter(train_loader)
            elif isinstance(train_loader, TrainDataLoaderIter):
                train_iter = train_loader
            else:
                raise ValueError(
                    "`train_loader` has unsupported type: {}."
                    "Expected types are `torch.utils.data.DataLoader`"
                    "or child of `TrainDataLoaderIter`.".format(type(train_loader))
                )

            for iteration in range(num_iter):
                # Train on batch and retrieve loss
                loss = self._train_batch(train_iter, accumulation_steps,
                                         non_blocking_transfer=non_blocking_transfer)

                # Update the learning rate
                self.history["lr"].append(lr_schedule.get_lr()[0])
                lr_schedule.step()

                # Track the best loss and smooth it if smooth_f is specified
                if iteration == 0:
                    self.best_loss = loss
                else:
                    if smooth_f > 0:
                        loss = smooth_f * loss + (1 - smooth_f) * self.history["loss"][-1]
                    if loss < self.best_loss:
                        self.best_loss = loss

                # Check if the loss has diverged; if it has, stop the test
                self.history["loss"].append(loss)
                if loss > diverge_th * self.best_loss:
                    print("Stopping early, the loss has diverged")
                    break

            print("Learning rate search finished. See the graph with {finder_name}.plot()")

        def _set_learning_rate(self, new_lrs):
            if not isinstance(new_lrs, list):
                new_lrs = [new_lrs] * len(self.optimizer.param_groups)
            if len(new_lrs) != len(self.optimizer.param_groups):
                raise ValueError(
                    "Length of `new_lrs` is not equal to the number of parameter groups "
                    + "in the given optimizer"
                )

            for param_group, new_lr in zip(self.optimizer.param_groups, new_lrs):
                param_group["lr"] = new_lr

        def _check_for_scheduler(self):
            for param_group in self.optimizer.param_groups:
                if "initial_lr" in param_group:
                    raise RuntimeError("Optimizer already has a scheduler attached to it")

        def _train_batch(self, train_iter, accumulation_steps, non_blocking_transfer=True):
            self.model.train()
            total_loss = None  # for late initialization

            self.optimizer.zero_grad()
            for i in range(accumulation_steps):
                inputs, labels = next(train_iter)
                inputs, labels = self._move_to_device(inputs, labels, non_blocking=non_blocking_transfer)

                # Forward pass
                outputs = self.model(inputs)
                loss = self.criterion(outputs, labels)

                # Loss should be averaged in each step
                loss /= accumulation_steps

                loss.backward()

                if total_loss is None:
                    total_loss = loss
                else:
                    total_loss += loss

            self.optimizer.step()

            return total_loss.item()

        def _move_to_device(self, inputs, labels, non_blocking=True):
            def move(obj, device, non_blocking=True):
                if hasattr(obj, "to"):
                    return obj.to(device, non_blocking=non_blocking)
                elif isinstance(obj, tuple):
                    return tuple(move(o, device, non_blocking) for o in obj)
                elif isinstance(obj, list):
                    return [move(o, device, non_blocking) for o in obj]
                elif isinstance(obj, dict):
                    return {k: move(o, device, non_blocking) for k, o in obj.items()}
                else:
                    return obj

            inputs = move(inputs, self.device, non_blocking=non_blocking)
            labels = move(labels, self.device, non_blocking=non_blocking)
            return inputs, labels

    return LRFinder, ExponentialLR


def lr_finder_program(torch, init=None, num_iter=20, batch=8, accumulation=2, epochs=2):
    import contextlib
    import io

    LRFinder, ExponentialLR = lr_finder_classes(torch)
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    x_np, y_np = blobs(rng, 96)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(x_np), torch.from_numpy(y_np))
    trainloader = torch.utils.data.DataLoader(dataset, batch_size=batch, shuffle=False)
    model = make_mlp(torch)
    result = {}
    start_from(torch, model, init, result)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-7, weight_decay=1e-2)
    before = {k: numpy_of(v) for k, v in model.state_dict().items()}

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        lr_finder = LRFinder(model, optimizer, criterion, device="cpu")
        lr_finder.range_test(trainloader, end_lr=100, num_iter=num_iter, accumulation_steps=accumulation)
        history = dict(lr_finder.history)
        try:
            lr_finder.range_test(trainloader, end_lr=100, num_iter=num_iter)
        except RuntimeError as e:
            attached = str(e)
        lr_finder.reset()  # to reset the model and optimizer to their initial state
        linear = LRFinder(model, optimizer, criterion)
        linear.range_test(trainloader, start_lr=1e-3, end_lr=1.0, num_iter=5, step_mode="linear", smooth_f=0)
        linear_history = dict(linear.history)
        linear.reset()
    restored = all(np.array_equal(numpy_of(v), before[k]) for k, v in model.state_dict().items())

    # the steepest descent of the smoothed curve, as LRFinder.plot(suggest_lr=True) finds it
    losses = np.array(history["loss"])
    min_grad_idx = (np.gradient(np.array(losses))).argmin()
    suggested = history["lr"][min_grad_idx]

    # training at the suggestion, accumulating gradients over `accumulation` micro-batches
    for g in optimizer.param_groups:
        g["lr"] = suggested
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=suggested * 3,
                                                    total_steps=epochs * len(trainloader) // accumulation)
    train_losses, grads_none, lrs = [], [], []
    for epoch in range(epochs):
        for i, (inputs, labels) in enumerate(trainloader):
            loss = criterion(model(inputs), labels) / accumulation
            loss.backward()
            train_losses.append(loss.item())
            if (i + 1) % accumulation == 0:
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                grads_none.append(all(p.grad is None for p in model.parameters()))
                lrs.append(scheduler.get_last_lr()[0])
    result.update(history=history, linear_history=linear_history, attached=attached, restored=restored,
                  printed=printed.getvalue().splitlines(), suggested=suggested, train_losses=train_losses,
                  grads_none=grads_none, lrs=lrs, state={k: numpy_of(v) for k, v in model.state_dict().items()},
                  optimizer_keys=sorted(optimizer.param_groups[0]))
    return result


def test_timm_ema_and_averaged_model():
    ref, got = compare_program(ema_program)
    assert ref["n_averaged"] == 12 and ref["decays"][0] == 0.0 and 0 < ref["decays"][-1] < 0.95


def test_lr_finder_range_test_and_accumulation():
    ref, got = compare_program(lr_finder_program, rtol=1e-3, atol=1e-4)
    assert ref["attached"] == "Optimizer already has a scheduler attached to it" and ref["restored"]
    assert all(ref["grads_none"]) and len(ref["history"]["lr"]) > 3
    assert ref["printed"][-1].startswith("Learning rate search finished")

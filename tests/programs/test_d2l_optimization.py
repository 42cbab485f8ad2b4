"""The d2l book's optimization chapter (1.0 edition) as written, the airfoil download replaced by
local data of its shape: get_data_ch11 standardising with (data - data.mean(axis=0)) /
data.std(axis=0) and load_array's TensorDataset/DataLoader(shuffle=True); train_ch11 with w from
torch.normal(mean=0.0, std=0.01, size=(feature_dim, 1), requires_grad=True), linreg, squared_loss
and evaluate_loss every 200 examples; the from-scratch trainers sgd (p.data.sub_), sgd_momentum,
adagrad, rmsprop, adadelta and adam, each updating p[:] and its states v[:] / s[:] / delta[:] in
place under torch.no_grad() and zeroing p.grad.data; train_concise_ch11 with
net.apply(init_weights) (type(module) == nn.Linear, normal_(std=0.01)), MSELoss(reduction='none')
and torch.optim's SGD(momentum), Adagrad, RMSprop(alpha), Adadelta(rho) and Adam; and the
learning-rate scheduling section's LeNet train() with SquareRootScheduler, FactorScheduler,
CosineScheduler (warm-up) set into param_groups, and the built-in MultiStepLR and OneCycleLR,
told apart by scheduler.__module__ == lr_scheduler.__name__. Seeds are torch.manual_seed in both
libraries, so the shuffles and initial weights agree."""
import math

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from
from test_d2l_modern_cnns import make_images
from test_from_scratch import Accumulator


def airfoil():
    """airfoil_self_noise.dat's shape: 1503 rows of five features and the sound level."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5)).astype(np.float32) * [3, 1, 5, 2, 1] + [2000, 5, 0.1, 40, 0.01]
    y = X @ np.array([-0.002, -0.4, -30, 0.05, -100], np.float32) + rng.normal(0, 1, 300)
    return np.concatenate([X, y[:, None]], axis=1).astype(np.float32)


def optimization(torch, init=None, trainer="sgd"):
    nn = torch.nn
    data_mod = torch.utils.data

    def load_array(data_arrays, batch_size, is_train=True):
        dataset = data_mod.TensorDataset(*data_arrays)
        return data_mod.DataLoader(dataset, batch_size, shuffle=is_train)

    def get_data_ch11(batch_size=10, n=1500):
        data = airfoil()
        data = torch.from_numpy((data - data.mean(axis=0)) / data.std(axis=0))
        data_iter = load_array((data[:n, :-1], data[:n, -1]), batch_size, is_train=True)
        return data_iter, data.shape[1] - 1

    def linreg(X, w, b):
        return torch.matmul(X, w) + b

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    def evaluate_loss(net, data_iter, loss):
        metric = Accumulator(2)  # Sum of losses, no. of examples
        for X, y in data_iter:
            out = net(X)
            y = y.reshape(out.shape)
            l = loss(out, y)  # noqa: E741
            metric.add(l.sum(), l.numel())
        return metric[0] / metric[1]

    def train_ch11(trainer_fn, states, hyperparams, data_iter, feature_dim, num_epochs=2):
        # Initialization
        w = torch.normal(mean=0.0, std=0.01, size=(feature_dim, 1), requires_grad=True)
        b = torch.zeros((1), requires_grad=True)
        net, loss = lambda X: linreg(X, w, b), squared_loss
        n, curve = 0, []
        for _ in range(num_epochs):
            for X, y in data_iter:
                l = loss(net(X), y).mean()  # noqa: E741
                l.backward()
                trainer_fn([w, b], states, hyperparams)
                n += X.shape[0]
                if n % 200 == 0:
                    curve.append(evaluate_loss(net, data_iter, loss))
        return curve, [numpy_of(w), numpy_of(b)]

    def train_concise_ch11(trainer_fn, hyperparams, data_iter, num_epochs=4):
        # Initialization
        net = nn.Sequential(nn.Linear(5, 1))

        def init_weights(module):
            if type(module) == nn.Linear:
                torch.nn.init.normal_(module.weight, std=0.01)

        net.apply(init_weights)
        optimizer = trainer_fn(net.parameters(), **hyperparams)
        loss = nn.MSELoss(reduction='none')
        n, curve = 0, []
        for _ in range(num_epochs):
            for X, y in data_iter:
                optimizer.zero_grad()
                out = net(X)
                y = y.reshape(out.shape)
                l = loss(out, y)  # noqa: E741
                l.mean().backward()
                optimizer.step()
                n += X.shape[0]
                if n % 200 == 0:
                    curve.append(evaluate_loss(net, data_iter, loss) / 2)
        return curve, [numpy_of(p) for p in net.parameters()]

    def sgd(params, states, hyperparams):
        for p in params:
            p.data.sub_(hyperparams['lr'] * p.grad)
            p.grad.data.zero_()

    def init_momentum_states(feature_dim):
        v_w = torch.zeros((feature_dim, 1))
        v_b = torch.zeros(1)
        return (v_w, v_b)

    def sgd_momentum(params, states, hyperparams):
        for p, v in zip(params, states):
            with torch.no_grad():
                v[:] = hyperparams['momentum'] * v + p.grad
                p[:] -= hyperparams['lr'] * v
            p.grad.data.zero_()

    def init_adagrad_states(feature_dim):
        s_w = torch.zeros((feature_dim, 1))
        s_b = torch.zeros(1)
        return (s_w, s_b)

    def adagrad(params, states, hyperparams):
        eps = 1e-6
        for p, s in zip(params, states):
            with torch.no_grad():
                s[:] += torch.square(p.grad)
                p[:] -= hyperparams['lr'] * p.grad / torch.sqrt(s + eps)
            p.grad.data.zero_()

    def rmsprop(params, states, hyperparams):
        gamma, eps = hyperparams['gamma'], 1e-6
        for p, s in zip(params, states):
            with torch.no_grad():
                s[:] = gamma * s + (1 - gamma) * torch.square(p.grad)
                p[:] -= hyperparams['lr'] * p.grad / torch.sqrt(s + eps)
            p.grad.data.zero_()

    def init_adadelta_states(feature_dim):
        s_w, s_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
        delta_w, delta_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
        return ((s_w, delta_w), (s_b, delta_b))

    def adadelta(params, states, hyperparams):
        rho, eps = hyperparams['rho'], 1e-5
        for p, (s, delta) in zip(params, states):
            with torch.no_grad():
                # In-place updates via [:]
                s[:] = rho * s + (1 - rho) * torch.square(p.grad)
                g = (torch.sqrt(delta + eps) / torch.sqrt(s + eps)) * p.grad
                p[:] -= g
                delta[:] = rho * delta + (1 - rho) * g * g
            p.grad.data.zero_()

    def init_adam_states(feature_dim):
        v_w, v_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
        s_w, s_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
        return ((v_w, s_w), (v_b, s_b))

    def adam(params, states, hyperparams):
        beta1, beta2, eps = 0.9, 0.999, 1e-6
        for p, (v, s) in zip(params, states):
            with torch.no_grad():
                v[:] = beta1 * v + (1 - beta1) * p.grad
                s[:] = beta2 * s + (1 - beta2) * torch.square(p.grad)
                v_bias_corr = v / (1 - beta1 ** hyperparams['t'])
                s_bias_corr = s / (1 - beta2 ** hyperparams['t'])
                p[:] -= hyperparams['lr'] * v_bias_corr / (torch.sqrt(s_bias_corr) + eps)
            p.grad.data.zero_()
        hyperparams['t'] += 1

    torch.manual_seed(0)
    data_iter, feature_dim = get_data_ch11(10)
    scratch = {
        "sgd": (sgd, None, {'lr': 0.05}),
        "momentum": (sgd_momentum, init_momentum_states(feature_dim), {'lr': 0.02, 'momentum': 0.5}),
        "adagrad": (adagrad, init_adagrad_states(feature_dim), {'lr': 0.1}),
        "rmsprop": (rmsprop, init_adagrad_states(feature_dim), {'lr': 0.01, 'gamma': 0.9}),
        "adadelta": (adadelta, init_adadelta_states(feature_dim), {'rho': 0.9}),
        "adam": (adam, init_adam_states(feature_dim), {'lr': 0.01, 't': 1}),
    }[trainer]
    concise = {
        "sgd": (torch.optim.SGD, {'lr': 0.01}),
        "momentum": (torch.optim.SGD, {'lr': 0.005, 'momentum': 0.9}),
        "adagrad": (torch.optim.Adagrad, {'lr': 0.1}),
        "rmsprop": (torch.optim.RMSprop, {'lr': 0.01, 'alpha': 0.9}),
        "adadelta": (torch.optim.Adadelta, {'rho': 0.9}),
        "adam": (torch.optim.Adam, {'lr': 0.01}),
    }[trainer]
    curve, params = train_ch11(*scratch, data_iter, feature_dim)
    curve_c, params_c = train_concise_ch11(*concise, data_iter, num_epochs=2)
    return {"scratch": [curve, params], "concise": [curve_c, params_c]}


def lr_schedules(torch, init=None, schedule="square_root"):
    nn = torch.nn
    lr_scheduler = torch.optim.lr_scheduler

    def net_fn():
        model = nn.Sequential(
            nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(6, 16, kernel_size=5), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Flatten(),
            nn.Linear(16 * 2 * 2, 12), nn.ReLU(),
            nn.Linear(12, 8), nn.ReLU(),
            nn.Linear(8, 3))
        return model

    def accuracy(y_hat, y):
        if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
            y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())

    def evaluate_accuracy_gpu(net, data_iter, device=None):
        if isinstance(net, nn.Module):
            net.eval()  # Set the model to evaluation mode
            if not device:
                device = next(iter(net.parameters())).device
        metric = Accumulator(2)
        with torch.no_grad():
            for X, y in data_iter:
                X, y = X.to(device), y.to(device)
                metric.add(accuracy(net(X), y), y.numel())
        return metric[0] / metric[1]

    def train(net, train_iter, test_iter, num_epochs, loss, trainer, device, scheduler=None):
        net.to(device)
        log = []
        for epoch in range(num_epochs):
            metric = Accumulator(3)  # train_loss, train_acc, num_examples
            for i, (X, y) in enumerate(train_iter):
                net.train()
                trainer.zero_grad()
                X, y = X.to(device), y.to(device)
                y_hat = net(X)
                l = loss(y_hat, y)  # noqa: E741
                l.backward()
                trainer.step()
                with torch.no_grad():
                    metric.add(l * X.shape[0], accuracy(y_hat, y), X.shape[0])
                train_loss = metric[0] / metric[2]
                train_acc = metric[1] / metric[2]
            test_acc = evaluate_accuracy_gpu(net, test_iter)
            if scheduler:
                if scheduler.__module__ == lr_scheduler.__name__:
                    # Using PyTorch In-Built scheduler
                    scheduler.step()
                else:
                    # Using custom defined scheduler
                    for param_group in trainer.param_groups:
                        param_group['lr'] = scheduler(epoch)
            log.append([train_loss, train_acc, test_acc, trainer.param_groups[0]['lr']])
        return log

    class SquareRootScheduler:
        def __init__(self, lr=0.1):
            self.lr = lr

        def __call__(self, num_update):
            return self.lr * pow(num_update + 1.0, -0.5)

    class FactorScheduler:
        def __init__(self, factor=1, stop_factor_lr=1e-7, base_lr=0.1):
            self.factor = factor
            self.stop_factor_lr = stop_factor_lr
            self.base_lr = base_lr

        def __call__(self, num_update):
            self.base_lr = max(self.stop_factor_lr, self.base_lr * self.factor)
            return self.base_lr

    class CosineScheduler:
        def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0):
            self.base_lr_orig = base_lr
            self.max_update = max_update
            self.final_lr = final_lr
            self.warmup_steps = warmup_steps
            self.warmup_begin_lr = warmup_begin_lr
            self.max_steps = self.max_update - self.warmup_steps

        def get_warmup_lr(self, epoch):
            increase = (self.base_lr_orig - self.warmup_begin_lr) * float(epoch) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase

        def __call__(self, epoch):
            if epoch < self.warmup_steps:
                return self.get_warmup_lr(epoch)
            if epoch <= self.max_update:
                self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * (
                    1 + math.cos(math.pi * (epoch - self.warmup_steps) / self.max_steps)) / 2
            return self.base_lr

    torch.manual_seed(0)
    loss = nn.CrossEntropyLoss()
    device = torch.device('cpu')
    x, y = make_images(40, 16, 0)
    xt, yt = make_images(16, 16, 1)
    train_iter = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
                                             batch_size=8, shuffle=True)
    test_iter = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(xt), torch.from_numpy(yt)),
                                            batch_size=8)
    net = net_fn()
    result = {}
    start_from(torch, net, init, result)
    lr, num_epochs = 0.3, 5
    trainer = torch.optim.SGD(net.parameters(), lr=lr)
    if schedule == "square_root":
        scheduler = SquareRootScheduler(lr=0.3)
    elif schedule == "factor":
        scheduler = FactorScheduler(factor=0.9, stop_factor_lr=1e-2, base_lr=0.3)
    elif schedule == "cosine":
        scheduler = CosineScheduler(max_update=4, warmup_steps=2, base_lr=0.3, final_lr=0.01)
    elif schedule == "multistep":
        scheduler = lr_scheduler.MultiStepLR(trainer, milestones=[2, 4], gamma=0.5)
    else:
        scheduler = lr_scheduler.OneCycleLR(trainer, max_lr=0.5, total_steps=num_epochs)
    result["log"] = train(net, train_iter, test_iter, num_epochs, loss, trainer, device, scheduler)
    result["state"] = {k: numpy_of(v) for k, v in net.state_dict().items()}
    return result


@pytest.mark.parametrize("trainer", ["sgd", "momentum", "adagrad", "rmsprop", "adadelta", "adam"])
def test_optimizers_from_scratch_and_concise(trainer):
    ref, got = compare_program(optimization, trainer=trainer)
    assert ref["scratch"][0][-1] < ref["scratch"][0][0] or trainer == "adadelta"


@pytest.mark.parametrize("schedule", ["square_root", "factor", "cosine", "multistep", "one_cycle"])
def test_lr_schedules(schedule):
    ref, got = compare_program(lr_schedules, rtol=1e-3, atol=1e-4, schedule=schedule)
    lrs = [row[-1] for row in got["log"]]
    assert len(set(lrs)) > 1  # the schedule changed the rate

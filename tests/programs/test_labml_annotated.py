"""labml.ai's annotated paper implementations (labml_nn), their modules as written with labml's
Module taken as nn.Module: the optimizers package (GenericAdaptiveOptimizer subclassing
torch.optim.optimizer.Optimizer with defaults.update(...) before super().__init__(params, defaults),
a @torch.no_grad() step walking self.param_groups, grad = param.grad.data, grad.is_sparse, state =
self.state[param] initialised when len(state) == 0; WeightDecay decoupled or added by
grad.add(param.data, alpha=...); Adam with m.mul_(beta1).add_(grad, alpha=1 - beta1) and
v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2), the optimized and plain addcdiv_ updates;
AMSGrad through torch.maximum(v_max, v, out=v_max); RAdam's rectified step or its SGD fallback;
AdaBelief's grad_residual; Noam's warmup factor from get_lr), each training an MLP and checkpointed
through optimizer.state_dict()/load_state_dict() half-way (ints and tensors in the per-parameter
state); the LSTM of LSTMCells (hidden_lin + input_lin, ifgo.chunk(4, dim=-1), optional LayerNorms
in an nn.ModuleList, states from x.new_zeros or torch.unbind, torch.stack of outputs); and the
original GAN's label-smoothed losses (BCEWithLogitsLoss against labels from
torch.empty(n, 1).uniform_(r1, r2) registered as non-persistent buffers and re-registered when a
batch is larger). Seeds are torch.manual_seed in both libraries, so every draw agrees."""
import importlib
import math
from typing import Any, Dict, Tuple

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from


def optimizers(torch):
    """labml_nn/optimizers: __init__.py, adam.py, amsgrad.py, radam.py, ada_belief.py, noam.py."""
    nn = torch.nn
    # from torch.optim.optimizer import Optimizer
    Optimizer = importlib.import_module(f"{torch.__name__}.optim.optimizer").Optimizer

    class GenericAdaptiveOptimizer(Optimizer):
        def __init__(self, params, defaults: Dict[str, Any], lr: float, betas: Tuple[float, float], eps: float):
            # Check the hyper-parameters
            if not 0.0 <= lr:
                raise ValueError(f"Invalid learning rate: {lr}")
            if not 0.0 <= eps:
                raise ValueError(f"Invalid epsilon value: {eps}")
            if not 0.0 <= betas[0] < 1.0:
                raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
            if not 0.0 <= betas[1] < 1.0:
                raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
            # Add the hyper-parameters to the defaults
            defaults.update(dict(lr=lr, betas=betas, eps=eps))
            # Initialize the PyTorch optimizer.
            super().__init__(params, defaults)

        def init_state(self, state: Dict[str, any], group: Dict[str, any], param: nn.Parameter):
            pass

        def step_param(self, state: Dict[str, any], group: Dict[str, any], grad, param):
            pass

        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            # Iterate through the parameter groups
            for group in self.param_groups:
                # Iterate through the parameters in the parameter group
                for param in group['params']:
                    # Skip if the parameter has no gradient
                    if param.grad is None:
                        continue
                    # Get the gradient tensor
                    grad = param.grad.data
                    # We don't handle sparse gradients
                    if grad.is_sparse:
                        raise RuntimeError('GenericAdaptiveOptimizer does not support sparse gradients,'
                                           ' please consider SparseAdam instead')
                    # Get the state for the parameter
                    state = self.state[param]
                    # Initialize the state if state is uninitialized
                    if len(state) == 0:
                        self.init_state(state, group, param)
                    # Take the optimization step on the parameter
                    self.step_param(state, group, grad, param)
            # Return the loss, calculated from closure
            return loss

    class WeightDecay:
        def __init__(self, weight_decay: float = 0., weight_decouple: bool = True, absolute: bool = False):
            if not 0.0 <= weight_decay:
                raise ValueError(f"Invalid weight_decay value: {weight_decay}")
            self.absolute = absolute
            self.weight_decouple = weight_decouple
            self.weight_decay = weight_decay

        def defaults(self):
            return dict(weight_decay=self.weight_decay)

        def __call__(self, param, grad, group: Dict[str, any]):
            # If we are doing the decay on the parameter directly
            if self.weight_decouple:
                if self.absolute:
                    param.data.mul_(1.0 - group['weight_decay'])
                else:
                    param.data.mul_(1.0 - group['lr'] * group['weight_decay'])
                # Return the unmodified gradient
                return grad
            else:
                if group['weight_decay'] != 0:
                    # Add the weight decay to the gradient and return the modified gradient
                    return grad.add(param.data, alpha=group['weight_decay'])
                else:
                    return grad

    class Adam(GenericAdaptiveOptimizer):
        def __init__(self, params, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-16,
                     weight_decay: WeightDecay = WeightDecay(), optimized_update: bool = True,
                     defaults=None):
            defaults = {} if defaults is None else defaults
            defaults.update(weight_decay.defaults())
            super().__init__(params, defaults, lr, betas, eps)
            self.weight_decay = weight_decay
            self.optimized_update = optimized_update

        def init_state(self, state: Dict[str, any], group: Dict[str, any], param: nn.Parameter):
            # This is the number of optimizer steps taken on the parameter, $t$
            state['step'] = 0
            # Exponential moving average of gradients, $m_t$
            state['exp_avg'] = torch.zeros_like(param, memory_format=torch.preserve_format)
            # Exponential moving average of squared gradient values, $v_t$
            state['exp_avg_sq'] = torch.zeros_like(param, memory_format=torch.preserve_format)

        def get_mv(self, state: Dict[str, Any], group: Dict[str, Any], grad):
            beta1, beta2 = group['betas']
            m, v = state['exp_avg'], state['exp_avg_sq']
            m.mul_(beta1).add_(grad, alpha=1 - beta1)
            v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            return m, v

        def get_lr(self, state: Dict[str, any], group: Dict[str, any]):
            return group['lr']

        def adam_update(self, state: Dict[str, any], group: Dict[str, any], param, m, v):
            beta1, beta2 = group['betas']
            bias_correction1 = 1 - beta1 ** state['step']
            bias_correction2 = 1 - beta2 ** state['step']
            lr = self.get_lr(state, group)
            if self.optimized_update:
                denominator = v.sqrt().add_(group['eps'])
                step_size = lr * math.sqrt(bias_correction2) / bias_correction1
                param.data.addcdiv_(m, denominator, value=-step_size)
            else:
                denominator = (v.sqrt() / math.sqrt(bias_correction2)).add_(group['eps'])
                step_size = lr / bias_correction1
                param.data.addcdiv_(m, denominator, value=-step_size)

        def step_param(self, state: Dict[str, any], group: Dict[str, any], grad, param):
            grad = self.weight_decay(param, grad, group)
            m, v = self.get_mv(state, group, grad)
            state['step'] += 1
            self.adam_update(state, group, param, m, v)

    class AMSGrad(Adam):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16,
                     weight_decay: WeightDecay = WeightDecay(), optimized_update: bool = True,
                     amsgrad=True, defaults=None):
            defaults = {} if defaults is None else defaults
            defaults.update(dict(amsgrad=amsgrad))
            super().__init__(params, lr, betas, eps, weight_decay, optimized_update, defaults)

        def init_state(self, state: Dict[str, any], group: Dict[str, any], param: nn.Parameter):
            super().init_state(state, group, param)
            if group['amsgrad']:
                state['max_exp_avg_sq'] = torch.zeros_like(param, memory_format=torch.preserve_format)

        def get_mv(self, state: Dict[str, Any], group: Dict[str, Any], grad):
            m, v = super().get_mv(state, group, grad)
            if group['amsgrad']:
                v_max = state['max_exp_avg_sq']
                torch.maximum(v_max, v, out=v_max)
                return m, v_max
            else:
                return m, v

    class RAdam(AMSGrad):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                     weight_decay: WeightDecay = WeightDecay(), optimized_update: bool = True,
                     amsgrad=False, degenerated_to_sgd=True, defaults=None):
            self.degenerated_to_sgd = degenerated_to_sgd
            super().__init__(params, lr, betas, eps, weight_decay, optimized_update, amsgrad, defaults)

        def step_param(self, state: Dict[str, any], group: Dict[str, any], grad, param):
            grad = self.weight_decay(param, grad, group)
            m, v = self.get_mv(state, group, grad)
            state['step'] += 1
            self.r_adam_update(state, group, param, m, v)

        @staticmethod
        def calc_rectification_term(beta2: float, step: int):
            beta2_t = beta2 ** step
            rho_inf = 2 / (1 - beta2) - 1
            rho = rho_inf - 2 * step * beta2_t / (1 - beta2_t)
            # $r_t$ is tractable when $\rho_t >= 4$.
            if rho >= 5:
                r2 = (rho - 4) / (rho_inf - 4) * (rho - 2) / rho * rho_inf / (rho_inf - 2)
                return math.sqrt(r2)
            else:
                return None

        def r_adam_update(self, state: Dict[str, any], group: Dict[str, any], param, m, v):
            beta1, beta2 = group['betas']
            bias_correction1 = 1 - beta1 ** state['step']
            bias_correction2 = 1 - beta2 ** state['step']
            r = self.calc_rectification_term(beta2, state['step'])
            lr = self.get_lr(state, group)
            if r is not None:
                if self.optimized_update:
                    denominator = v.sqrt().add_(group['eps'])
                    step_size = lr * math.sqrt(bias_correction2) * r / bias_correction1
                    param.data.addcdiv_(m, denominator, value=-step_size)
                else:
                    denominator = (v.sqrt() / math.sqrt(bias_correction2)).add_(group['eps'])
                    step_size = lr * r / bias_correction1
                    param.data.addcdiv_(m, denominator, value=-step_size)
            elif self.degenerated_to_sgd:
                step_size = lr / bias_correction1
                param.data.add_(m, alpha=-step_size)

    class AdaBelief(RAdam):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16,
                     weight_decay: WeightDecay = WeightDecay(), amsgrad=False,
                     degenerate_to_sgd=True, rectify=True, defaults=None):
            defaults = {} if defaults is None else defaults
            super().__init__(params, lr, betas, eps, weight_decay, amsgrad, degenerate_to_sgd, defaults)
            self.rectify = rectify

        def init_state(self, state: Dict[str, any], group: Dict[str, any], param: nn.Parameter):
            state['step'] = 0
            state['exp_avg'] = torch.zeros_like(param, memory_format=torch.preserve_format)
            state['exp_avg_var'] = torch.zeros_like(param, memory_format=torch.preserve_format)
            if group['amsgrad']:
                state['max_exp_avg_var'] = torch.zeros_like(param, memory_format=torch.preserve_format)

        def get_ms(self, state: Dict[str, Any], group: Dict[str, Any], grad):
            beta1, beta2 = group['betas']
            m, s = state['exp_avg'], state['exp_avg_var']
            m.mul_(beta1).add_(grad, alpha=1 - beta1)
            grad_residual = grad - m
            s.mul_(beta2).addcmul_(grad_residual, grad_residual, value=1 - beta2)
            if group['amsgrad']:
                s_max = state['max_exp_avg_var']
                torch.maximum(s_max, s, out=s_max)
                return m, s_max
            else:
                return m, s

        def step_param(self, state: Dict[str, any], group: Dict[str, any], grad, param):
            grad = self.weight_decay(param, grad, group)
            m, s = self.get_ms(state, group, grad)
            state['step'] += 1
            if not self.rectify:
                self.adam_update(state, group, param, m, s + group['eps'])
            else:
                self.r_adam_update(state, group, param, m, s + group['eps'])

    class Noam(AMSGrad):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16,
                     weight_decay: WeightDecay = WeightDecay(), optimized_update: bool = True,
                     amsgrad=False, warmup=0, d_model=512, defaults=None):
            defaults = {} if defaults is None else defaults
            defaults.update(dict(warmup=warmup))
            super().__init__(params, lr, betas, eps, weight_decay, optimized_update, amsgrad, defaults)
            self.d_model = d_model

        def get_lr(self, state: Dict[str, any], group: Dict[str, any]):
            factor = min(state['step'] ** (-0.5), state['step'] * group['warmup'] ** (-1.5))
            return group['lr'] * self.d_model ** (-0.5) * factor

    return dict(WeightDecay=WeightDecay, Adam=Adam, AMSGrad=AMSGrad, RAdam=RAdam, AdaBelief=AdaBelief, Noam=Noam)


def optimizer_experiment(torch, init=None, name="Adam"):
    nn = torch.nn
    F = torch.nn.functional
    opts = optimizers(torch)
    WeightDecay = opts["WeightDecay"]
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(64, 6)).astype(np.float32))
    y = torch.tensor((rng.normal(size=64) > 0).astype(np.int64))
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
    result = {}
    start_from(torch, model, init, result)

    def make(params):
        if name == "Adam":
            return opts["Adam"](params, lr=0.01, weight_decay=WeightDecay(0.1, weight_decouple=False),
                                optimized_update=False)
        if name == "AMSGrad":
            return opts["AMSGrad"](params, lr=0.01, weight_decay=WeightDecay(0.01))
        if name == "RAdam":
            return opts["RAdam"](params, lr=0.05, betas=(0.9, 0.9))
        if name == "AdaBelief":
            return opts["AdaBelief"](params, lr=0.05, betas=(0.9, 0.9), weight_decay=WeightDecay(0.1, absolute=True),
                                     amsgrad=True)
        return opts["Noam"](params, lr=1.0, d_model=16, warmup=4)

    # two groups, as labml's configs pass model parameters: weights and biases apart
    groups = [{'params': [p for n, p in model.named_parameters() if n.endswith('weight')]},
              {'params': [p for n, p in model.named_parameters() if n.endswith('bias')], 'lr': 0.02}]
    if name == "Noam":
        groups[1].pop('lr')
    optimizer = make(groups)
    losses = []
    for step in range(10):
        if step == 5:
            # checkpoint and restore into a fresh optimizer over the same parameters
            saved = optimizer.state_dict()
            result["saved_steps"] = [s['step'] for s in saved['state'].values()]
            optimizer = make(groups)
            optimizer.load_state_dict(saved)

        def closure():
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss

        loss = optimizer.step(closure)
        losses.append(loss.item())
    result.update(losses=losses, state={k: numpy_of(v) for k, v in model.state_dict().items()},
                  opt_state=[numpy_of(v) for s in optimizer.state.values() for k, v in sorted(s.items())
                             if k != 'step'],
                  group_keys=sorted(optimizer.param_groups[0].keys()))
    return result


def lstm_and_gan_losses(torch, init=None, layer_norm=False):
    nn = torch.nn

    class LSTMCell(nn.Module):
        def __init__(self, input_size: int, hidden_size: int, layer_norm: bool = False):
            super().__init__()
            self.hidden_lin = nn.Linear(hidden_size, 4 * hidden_size)
            self.input_lin = nn.Linear(input_size, 4 * hidden_size, bias=False)
            if layer_norm:
                self.layer_norm = nn.ModuleList([nn.LayerNorm(hidden_size) for _ in range(4)])
                self.layer_norm_c = nn.LayerNorm(hidden_size)
            else:
                self.layer_norm = nn.ModuleList([nn.Identity() for _ in range(4)])
                self.layer_norm_c = nn.Identity()

        def forward(self, x, h, c):
            ifgo = self.hidden_lin(h) + self.input_lin(x)
            ifgo = ifgo.chunk(4, dim=-1)
            ifgo = [self.layer_norm[i](ifgo[i]) for i in range(4)]
            i, f, g, o = ifgo
            c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h_next = torch.sigmoid(o) * torch.tanh(self.layer_norm_c(c_next))
            return h_next, c_next

    class LSTM(nn.Module):
        def __init__(self, input_size: int, hidden_size: int, n_layers: int):
            super().__init__()
            self.n_layers = n_layers
            self.hidden_size = hidden_size
            self.cells = nn.ModuleList([LSTMCell(input_size, hidden_size, layer_norm)] +
                                       [LSTMCell(hidden_size, hidden_size, layer_norm) for _ in range(n_layers - 1)])

        def forward(self, x, state=None):
            n_steps, batch_size = x.shape[:2]
            if state is None:
                h = [x.new_zeros(batch_size, self.hidden_size) for _ in range(self.n_layers)]
                c = [x.new_zeros(batch_size, self.hidden_size) for _ in range(self.n_layers)]
            else:
                (h, c) = state
                h, c = list(torch.unbind(h)), list(torch.unbind(c))
            out = []
            for t in range(n_steps):
                inp = x[t]
                for layer in range(self.n_layers):
                    h[layer], c[layer] = self.cells[layer](inp, h[layer], c[layer])
                    inp = h[layer]
                out.append(h[-1])
            out = torch.stack(out)
            h = torch.stack(h)
            c = torch.stack(c)
            return out, (h, c)

    def _create_labels(n: int, r1: float, r2: float, device=None):
        return torch.empty(n, 1, requires_grad=False, device=device).uniform_(r1, r2)

    class DiscriminatorLogitsLoss(nn.Module):
        def __init__(self, smoothing: float = 0.2):
            super().__init__()
            self.loss_true = nn.BCEWithLogitsLoss()
            self.loss_false = nn.BCEWithLogitsLoss()
            self.smoothing = smoothing
            self.register_buffer('labels_true', _create_labels(4, 1.0 - smoothing, 1.0), False)
            self.register_buffer('labels_false', _create_labels(4, 0.0, smoothing), False)

        def forward(self, logits_true, logits_false):
            if len(logits_true) > len(self.labels_true):
                self.register_buffer("labels_true",
                                     _create_labels(len(logits_true), 1.0 - self.smoothing, 1.0, logits_true.device), False)
            if len(logits_false) > len(self.labels_false):
                self.register_buffer("labels_false",
                                     _create_labels(len(logits_false), 0.0, self.smoothing, logits_false.device), False)
            return (self.loss_true(logits_true, self.labels_true[:len(logits_true)]),
                    self.loss_false(logits_false, self.labels_false[:len(logits_false)]))

    class GeneratorLogitsLoss(nn.Module):
        def __init__(self, smoothing: float = 0.2):
            super().__init__()
            self.loss_true = nn.BCEWithLogitsLoss()
            self.smoothing = smoothing
            self.register_buffer('fake_labels', _create_labels(4, 1.0 - smoothing, 1.0), False)

        def forward(self, logits):
            if len(logits) > len(self.fake_labels):
                self.register_buffer("fake_labels",
                                     _create_labels(len(logits), 1.0 - self.smoothing, 1.0, logits.device), False)
            return self.loss_true(logits, self.fake_labels[:len(logits)])

    torch.manual_seed(3)
    lstm = LSTM(3, 5, 2)
    critic = nn.Linear(5, 1)
    result = {}
    start_from(torch, {"lstm": lstm, "critic": critic}, init, result)
    d_loss, g_loss = DiscriminatorLogitsLoss(), GeneratorLogitsLoss()
    result["buffers"] = sorted(k for k, _ in d_loss.named_buffers())
    result["state_keys"] = sorted(d_loss.state_dict().keys())  # non-persistent: none
    opt = torch.optim.Adam(list(lstm.parameters()) + list(critic.parameters()), lr=0.01)
    rng = np.random.default_rng(4)
    losses = []
    for step in range(4):
        real = torch.tensor(rng.normal(size=(6, 3 + step, 3)).astype(np.float32))  # (steps, batch, features)
        fake = torch.tensor(rng.normal(1.0, 1.0, size=(6, 3 + step, 3)).astype(np.float32))
        out_r, _ = lstm(real)
        out_f, (h, c) = lstm(fake)
        out_f2, _ = lstm(fake, (h, c))  # continued from the state: unbind path
        lt, lf = d_loss(critic(out_r[-1]), critic(out_f[-1]))
        lg = g_loss(critic(out_f2[-1]))
        loss = lt + lf + 0.5 * lg
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append([lt.item(), lf.item(), lg.item()])
    result.update(losses=losses, labels=[numpy_of(d_loss.labels_true), numpy_of(g_loss.fake_labels)],
                  lstm={k: numpy_of(v) for k, v in lstm.state_dict().items()})
    return result


@pytest.mark.parametrize("name", ["Adam", "AMSGrad", "RAdam", "AdaBelief", "Noam"])
def test_optimizer_from_scratch(name):
    ref, got = compare_program(optimizer_experiment, rtol=1e-4, atol=1e-5, name=name)
    assert got["saved_steps"] == [5, 5, 5, 5]
    assert ref["losses"][-1] < ref["losses"][0]


@pytest.mark.parametrize("layer_norm", [False, True])
def test_lstm_and_gan_losses(layer_norm):
    ref, got = compare_program(lstm_and_gan_losses, rtol=1e-4, atol=1e-5, layer_norm=layer_norm)
    assert got["state_keys"] == [] and got["buffers"] == ["labels_false", "labels_true"]
    assert got["labels"][0].shape == (6, 1)  # re-registered for the batch of 6

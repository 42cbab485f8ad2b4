"""Second-order training code as published scripts write it. pytorch-trpo (ikostrikov): a Gaussian
Policy (action_mean weights scaled by .data.mul_(0.1), an action_log_std Parameter expanded as the
mean), actions from torch.normal(action_mean, action_std) on the seeded generator, rollouts kept in
a Memory of namedtuples, torch.Tensor(...) built from lists of arrays and as uninitialised
(n, 1) buffers filled backwards for returns, deltas and GAE advantages, the value net fitted by
scipy.optimize.fmin_l_bfgs_b through get_flat_params_from/set_flat_params_to/get_flat_grad_from,
and trpo_step: the Fisher-vector product by a double torch.autograd.grad (create_graph=True) of
the mean KL, conjugate_gradients, the step scaled to max_kl and a backtracking linesearch on
f(True).data. And a Gauss-Newton / Newton curve fit with torch.autograd.functional.jacobian and
hessian (vectorize=True), solved with torch.linalg.solve."""
import math
from collections import namedtuple

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

Transition = namedtuple('Transition', ('state', 'action', 'mask', 'next_state', 'reward'))


class Memory(object):
    def __init__(self):
        self.memory = []

    def push(self, *args):
        """Saves a transition."""
        self.memory.append(Transition(*args))

    def sample(self):
        return Transition(*zip(*self.memory))

    def __len__(self):
        return len(self.memory)


def trpo(torch, init=None, iterations=3, steps_per_episode=10, episodes=4, gamma=0.995, tau=0.97, l2_reg=1e-3,
         max_kl=1e-2, damping=1e-1):
    nn = torch.nn
    Variable = torch.autograd.Variable
    scipy_optimize = __import__("scipy.optimize", fromlist=["fmin_l_bfgs_b"])
    torch.manual_seed(0)
    torch.set_default_dtype(torch.float64)
    try:
        class Policy(nn.Module):
            def __init__(self, num_inputs, num_outputs):
                super(Policy, self).__init__()
                self.affine1 = nn.Linear(num_inputs, 32)
                self.affine2 = nn.Linear(32, 32)
                self.action_mean = nn.Linear(32, num_outputs)
                self.action_mean.weight.data.mul_(0.1)
                self.action_mean.bias.data.mul_(0.0)
                self.action_log_std = nn.Parameter(torch.zeros(1, num_outputs))
                self.saved_actions = []
                self.rewards = []
                self.final_value = 0

            def forward(self, x):
                x = torch.tanh(self.affine1(x))
                x = torch.tanh(self.affine2(x))
                action_mean = self.action_mean(x)
                action_log_std = self.action_log_std.expand_as(action_mean)
                action_std = torch.exp(action_log_std)
                return action_mean, action_log_std, action_std

        class Value(nn.Module):
            def __init__(self, num_inputs):
                super(Value, self).__init__()
                self.affine1 = nn.Linear(num_inputs, 32)
                self.affine2 = nn.Linear(32, 32)
                self.value_head = nn.Linear(32, 1)
                self.value_head.weight.data.mul_(0.1)
                self.value_head.bias.data.mul_(0.0)

            def forward(self, x):
                x = torch.tanh(self.affine1(x))
                x = torch.tanh(self.affine2(x))
                state_values = self.value_head(x)
                return state_values

        def normal_log_density(x, mean, log_std, std):
            var = std.pow(2)
            log_density = -(x - mean).pow(2) / (2 * var) - 0.5 * math.log(2 * math.pi) - log_std
            return log_density.sum(1, keepdim=True)

        def get_flat_params_from(model):
            params = []
            for param in model.parameters():
                params.append(param.data.view(-1))
            flat_params = torch.cat(params)
            return flat_params

        def set_flat_params_to(model, flat_params):
            prev_ind = 0
            for param in model.parameters():
                flat_size = int(np.prod(list(param.size())))
                param.data.copy_(flat_params[prev_ind:prev_ind + flat_size].view(param.size()))
                prev_ind += flat_size

        def get_flat_grad_from(net, grad_grad=False):
            grads = []
            for param in net.parameters():
                if grad_grad:
                    grads.append(param.grad.grad.view(-1))
                else:
                    grads.append(param.grad.view(-1))
            flat_grad = torch.cat(grads)
            return flat_grad

        def conjugate_gradients(Avp, b, nsteps, residual_tol=1e-10):
            x = torch.zeros(b.size())
            r = b.clone()
            p = b.clone()
            rdotr = torch.dot(r, r)
            for i in range(nsteps):
                _Avp = Avp(p)
                alpha = rdotr / torch.dot(p, _Avp)
                x += alpha * p
                r -= alpha * _Avp
                new_rdotr = torch.dot(r, r)
                betta = new_rdotr / rdotr
                p = r + betta * p
                rdotr = new_rdotr
                if rdotr < residual_tol:
                    break
            return x

        def linesearch(model, f, x, fullstep, expected_improve_rate, max_backtracks=10, accept_ratio=.1):
            fval = f(True).data
            for (_n_backtracks, stepfrac) in enumerate(.5**np.arange(max_backtracks)):
                xnew = x + stepfrac * fullstep
                set_flat_params_to(model, xnew)
                newfval = f(True).data
                actual_improve = fval - newfval
                expected_improve = expected_improve_rate * stepfrac
                ratio = actual_improve / expected_improve
                if ratio.item() > accept_ratio and actual_improve.item() > 0:
                    return True, xnew
            return False, x

        def trpo_step(model, get_loss, get_kl, max_kl, damping):
            loss = get_loss()
            grads = torch.autograd.grad(loss, model.parameters())
            loss_grad = torch.cat([grad.view(-1) for grad in grads]).data

            def Fvp(v):
                kl = get_kl()
                kl = kl.mean()
                grads = torch.autograd.grad(kl, model.parameters(), create_graph=True)
                flat_grad_kl = torch.cat([grad.view(-1) for grad in grads])
                kl_v = (flat_grad_kl * Variable(v)).sum()
                grads = torch.autograd.grad(kl_v, model.parameters())
                flat_grad_grad_kl = torch.cat([grad.contiguous().view(-1) for grad in grads]).data
                return flat_grad_grad_kl + v * damping

            stepdir = conjugate_gradients(Fvp, -loss_grad, 10)
            shs = 0.5 * (stepdir * Fvp(stepdir)).sum(0, keepdim=True)
            lm = torch.sqrt(shs / max_kl)
            fullstep = stepdir / lm[0]
            neggdotstepdir = (-loss_grad * stepdir).sum(0, keepdim=True)
            prev_params = get_flat_params_from(model)
            success, new_params = linesearch(model, get_loss, prev_params, fullstep, neggdotstepdir / lm[0])
            set_flat_params_to(model, new_params)
            return loss, success

        num_inputs, num_actions = 2, 1
        policy_net = Policy(num_inputs, num_actions)
        value_net = Value(num_inputs)
        nets = {"policy": policy_net, "value": value_net}
        result = {}
        start_from(torch, nets, init, result)

        def select_action(state):
            state = torch.from_numpy(state).unsqueeze(0)
            action_mean, _, action_std = policy_net(Variable(state))
            action = torch.normal(action_mean, action_std)
            return action

        def update_params(batch):
            rewards = torch.Tensor(batch.reward)
            masks = torch.Tensor(batch.mask)
            actions = torch.Tensor(np.concatenate(batch.action, 0))
            states = torch.Tensor(np.array(batch.state))
            values = value_net(Variable(states))
            returns = torch.Tensor(actions.size(0), 1)
            deltas = torch.Tensor(actions.size(0), 1)
            advantages = torch.Tensor(actions.size(0), 1)
            prev_return = 0
            prev_value = 0
            prev_advantage = 0
            for i in reversed(range(rewards.size(0))):
                returns[i] = rewards[i] + gamma * prev_return * masks[i]
                deltas[i] = rewards[i] + gamma * prev_value * masks[i] - values.data[i]
                advantages[i] = deltas[i] + gamma * tau * prev_advantage * masks[i]
                prev_return = returns[i, 0]
                prev_value = values.data[i, 0]
                prev_advantage = advantages[i, 0]
            targets = Variable(returns)

            # Original code uses the same LBFGS to optimize the value loss
            def get_value_loss(flat_params):
                set_flat_params_to(value_net, torch.Tensor(flat_params))
                for param in value_net.parameters():
                    if param.grad is not None:
                        param.grad.data.fill_(0)
                values_ = value_net(Variable(states))
                value_loss = (values_ - targets).pow(2).mean()
                # weight decay
                for param in value_net.parameters():
                    value_loss += param.pow(2).sum() * l2_reg
                value_loss.backward()
                return (value_loss.data.double().numpy(), get_flat_grad_from(value_net).data.double().numpy())

            flat_params, _, opt_info = scipy_optimize.fmin_l_bfgs_b(
                get_value_loss, get_flat_params_from(value_net).double().numpy(), maxiter=5)
            set_flat_params_to(value_net, torch.Tensor(flat_params))
            advantages = (advantages - advantages.mean()) / advantages.std()
            action_means, action_log_stds, action_stds = policy_net(Variable(states))
            fixed_log_prob = normal_log_density(Variable(actions), action_means, action_log_stds,
                                                action_stds).data.clone()

            def get_loss(volatile=False):
                if volatile:
                    with torch.no_grad():
                        action_means, action_log_stds, action_stds = policy_net(Variable(states))
                else:
                    action_means, action_log_stds, action_stds = policy_net(Variable(states))
                log_prob = normal_log_density(Variable(actions), action_means, action_log_stds, action_stds)
                action_loss = -Variable(advantages) * torch.exp(log_prob - Variable(fixed_log_prob))
                return action_loss.mean()

            def get_kl():
                mean1, log_std1, std1 = policy_net(Variable(states))
                mean0 = Variable(mean1.data)
                log_std0 = Variable(log_std1.data)
                std0 = Variable(std1.data)
                kl = log_std1 - log_std0 + (std0.pow(2) + (mean0 - mean1).pow(2)) / (2.0 * std1.pow(2)) - 0.5
                return kl.sum(1, keepdim=True)

            loss, success = trpo_step(policy_net, get_loss, get_kl, max_kl, damping)
            return loss.item(), success, float(opt_info["funcalls"])

        # a point on a line pushed towards the origin: state (position, velocity), action a force
        rng = np.random.default_rng(0)
        log = []
        for i_episode in range(iterations):
            memory = Memory()
            reward_batch = 0
            for _ in range(episodes):
                state = rng.uniform(-1, 1, 2)
                for t in range(steps_per_episode):
                    action = select_action(state)
                    action = action.data[0].numpy()
                    next_state = np.array([state[0] + 0.1 * state[1], 0.9 * state[1] + 0.1 * np.clip(action[0], -2, 2)])
                    reward = -next_state[0] ** 2 - 0.01 * action[0] ** 2
                    reward_batch += reward
                    mask = 0 if t == steps_per_episode - 1 else 1
                    memory.push(state, np.array([action]), mask, next_state, reward)
                    state = next_state
            batch = memory.sample()
            loss, success, funcalls = update_params(batch)
            log.append([reward_batch / episodes, loss, float(success)])
        result.update(log=log, policy={k: numpy_of(v) for k, v in policy_net.named_parameters()},
                      value={k: numpy_of(v) for k, v in value_net.named_parameters()})
        return result
    finally:
        torch.set_default_dtype(torch.float32)


def gauss_newton_fit(torch, init=None, iterations=6):
    jacobian = torch.autograd.functional.jacobian
    hessian = torch.autograd.functional.hessian
    rng = np.random.default_rng(3)
    t = torch.tensor(np.linspace(0, 4, 30))
    y = torch.tensor(2.5 * np.exp(-1.3 * np.linspace(0, 4, 30)) + 0.5 + rng.normal(0, 0.02, 30))

    def model(params):
        a, k, c = params
        return a * torch.exp(-k * t) + c

    def residuals(params):
        return model(params) - y

    def loss(params):
        return 0.5 * (residuals(params) ** 2).sum()

    # Gauss-Newton with a Levenberg-Marquardt damping
    params = torch.tensor([1.0, 0.5, 0.0], dtype=torch.float64)
    lam = 1e-2
    history = []
    for it in range(iterations):
        J = jacobian(residuals, params, vectorize=True)
        r = residuals(params)
        A = J.T @ J + lam * torch.eye(3, dtype=torch.float64)
        step = torch.linalg.solve(A, -J.T @ r)
        params = params + step
        history.append([loss(params).item()] + params.tolist())
    # Newton's method from there, on the exact Hessian
    for it in range(2):
        H = hessian(loss, params)
        g = torch.autograd.functional.vjp(loss, params)[1]
        params = params - torch.linalg.solve(H, g)
        history.append([loss(params).item()] + params.tolist())
    return {"history": history, "H": numpy_of(H), "J_shape": tuple(J.shape)}


def test_trpo_fisher_vector_product_and_lbfgs_value():
    ref, got = compare_program(trpo, rtol=1e-5, atol=1e-7)
    assert [row[2] for row in ref["log"]] == [1.0, 1.0, 1.0]  # the linesearch accepted each step


def test_gauss_newton_and_newton_with_autograd_functional():
    ref, got = compare_program(gauss_newton_fit, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ref["history"][-1][1:], [2.5, 1.3, 0.5], atol=0.05)

"""OpenAI Spinning Up's PyTorch algorithms as published (spinup/algos/pytorch/ppo/core.py and
ppo.py, sac/core.py and sac.py), MPI left out (one process: mpi_avg is the identity, as Spinning
Up's own helpers are with one process) and gym replaced by two small environments written here
with stand-ins for gym.spaces.Box and Discrete. What they lean on: mlp() building nn.Sequential from
layer classes (nn.Identity as the output activation), count_vars by np.prod(p.shape),
discount_cumsum by scipy.signal.lfilter, Categorical(logits=...) and Normal(mu, std) with
log_prob(act).sum(axis=-1), a log_std Parameter from torch.as_tensor of a NumPy array,
torch.squeeze(v, -1), ac.step() under no_grad returning .numpy() arrays, PPOBuffer's
torch.as_tensor(v, dtype=torch.float32) of each NumPy buffer, the clipped objective with
torch.clamp/torch.min, ratio.gt(...) | ratio.lt(...) and torch.as_tensor(clipped,
dtype=torch.float32), pi.entropy(); SAC's squashed Gaussian (rsample, F.softplus(-2 * pi_action),
log-prob correction with np.log(2)), twin MLPQFunctions on torch.cat([obs, act], dim=-1),
deepcopy target networks frozen by requires_grad = False, q_params as an itertools.chain (consumed
by Adam, as published), and the Polyak update p_targ.data.mul_(polyak); p_targ.data.add_((1 -
polyak) * p.data). Randomness: torch.manual_seed and np.random.seed as the scripts call them (both
libraries draw PyTorch's CPU streams, so sampled actions agree)."""
import itertools
import time
from copy import deepcopy

import numpy as np
import pytest

from prog_helpers import Printed, compare_program, numpy_of

scipy_signal = pytest.importorskip("scipy.signal")


class Box:  # stands in for gym.spaces.Box
    def __init__(self, low, high, shape):
        self.low = np.full(shape, low, dtype=np.float32)
        self.high = np.full(shape, high, dtype=np.float32)
        self.shape = shape


class Discrete:  # stands in for gym.spaces.Discrete
    def __init__(self, n):
        self.n = n
        self.shape = ()


class Corridor:
    """A discrete environment: walk left or right along a line; the goal is at the right end."""

    def __init__(self):
        self.observation_space = Box(-1, 1, (4,))
        self.action_space = Discrete(2)

    def _obs(self):
        return np.array([self.pos / 5, 1.0, np.sin(self.pos), self.t / 20], dtype=np.float32)

    def reset(self):
        self.pos, self.t = 0, 0
        return self._obs()

    def step(self, a):
        self.pos += 1 if int(a) == 1 else -1
        self.t += 1
        done = self.pos >= 4 or self.pos <= -4
        return self._obs(), (1.0 if self.pos >= 4 else -0.05), done, {}


class Reacher:
    """A continuous environment: move a point towards the origin; reward minus the distance."""

    def __init__(self):
        self.observation_space = Box(-np.inf, np.inf, (3,))
        self.action_space = Box(-1.0, 1.0, (2,))
        self.rng = np.random.default_rng(0)

    def reset(self):
        self.x = self.rng.uniform(-1, 1, 2).astype(np.float32)
        return np.append(self.x, np.float32(0.0))

    def step(self, a):
        self.x = np.clip(self.x + 0.1 * a, -2, 2).astype(np.float32)
        d = float(np.linalg.norm(self.x))
        return np.append(self.x, np.float32(d)), -d, d < 0.05, {}


def ppo_program(torch, init=None):
    nn = torch.nn
    Normal = torch.distributions.normal.Normal
    Categorical = torch.distributions.categorical.Categorical
    Adam = torch.optim.Adam
    printed = []

    def print(*args, **kwargs):
        printed.append(" ".join(str(a) for a in args))

    # spinup/algos/pytorch/ppo/core.py
    def combined_shape(length, shape=None):
        if shape is None:
            return (length,)
        return (length, shape) if np.isscalar(shape) else (length, *shape)

    def mlp(sizes, activation, output_activation=nn.Identity):
        layers = []
        for j in range(len(sizes) - 1):
            act = activation if j < len(sizes) - 2 else output_activation
            layers += [nn.Linear(sizes[j], sizes[j + 1]), act()]
        return nn.Sequential(*layers)

    def count_vars(module):
        return sum([np.prod(p.shape) for p in module.parameters()])

    def discount_cumsum(x, discount):
        return scipy_signal.lfilter([1], [1, float(-discount)], x[::-1], axis=0)[::-1]

    class Actor(nn.Module):
        def _distribution(self, obs):
            raise NotImplementedError

        def _log_prob_from_distribution(self, pi, act):
            raise NotImplementedError

        def forward(self, obs, act=None):
            pi = self._distribution(obs)
            logp_a = None
            if act is not None:
                logp_a = self._log_prob_from_distribution(pi, act)
            return pi, logp_a

    class MLPCategoricalActor(Actor):
        def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
            super().__init__()
            self.logits_net = mlp([obs_dim] + list(hidden_sizes) + [act_dim], activation)

        def _distribution(self, obs):
            logits = self.logits_net(obs)
            return Categorical(logits=logits)

        def _log_prob_from_distribution(self, pi, act):
            return pi.log_prob(act)

    class MLPGaussianActor(Actor):
        def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
            super().__init__()
            log_std = -0.5 * np.ones(act_dim, dtype=np.float32)
            self.log_std = torch.nn.Parameter(torch.as_tensor(log_std))
            self.mu_net = mlp([obs_dim] + list(hidden_sizes) + [act_dim], activation)

        def _distribution(self, obs):
            mu = self.mu_net(obs)
            std = torch.exp(self.log_std)
            return Normal(mu, std)

        def _log_prob_from_distribution(self, pi, act):
            return pi.log_prob(act).sum(axis=-1)    # Last axis sum needed for Torch Normal distribution

    class MLPCritic(nn.Module):
        def __init__(self, obs_dim, hidden_sizes, activation):
            super().__init__()
            self.v_net = mlp([obs_dim] + list(hidden_sizes) + [1], activation)

        def forward(self, obs):
            return torch.squeeze(self.v_net(obs), -1)  # Critical to ensure v has right shape.

    class MLPActorCritic(nn.Module):
        def __init__(self, observation_space, action_space, hidden_sizes=(64, 64), activation=nn.Tanh):
            super().__init__()
            obs_dim = observation_space.shape[0]
            # policy builder depends on action space
            if isinstance(action_space, Box):
                self.pi = MLPGaussianActor(obs_dim, action_space.shape[0], hidden_sizes, activation)
            elif isinstance(action_space, Discrete):
                self.pi = MLPCategoricalActor(obs_dim, action_space.n, hidden_sizes, activation)
            # build value function
            self.v = MLPCritic(obs_dim, hidden_sizes, activation)

        def step(self, obs):
            with torch.no_grad():
                pi = self.pi._distribution(obs)
                a = pi.sample()
                logp_a = self.pi._log_prob_from_distribution(pi, a)
                v = self.v(obs)
            return a.numpy(), v.numpy(), logp_a.numpy()

        def act(self, obs):
            return self.step(obs)[0]

    # spinup/algos/pytorch/ppo/ppo.py
    class PPOBuffer:
        def __init__(self, obs_dim, act_dim, size, gamma=0.99, lam=0.95):
            self.obs_buf = np.zeros(combined_shape(size, obs_dim), dtype=np.float32)
            self.act_buf = np.zeros(combined_shape(size, act_dim), dtype=np.float32)
            self.adv_buf = np.zeros(size, dtype=np.float32)
            self.rew_buf = np.zeros(size, dtype=np.float32)
            self.ret_buf = np.zeros(size, dtype=np.float32)
            self.val_buf = np.zeros(size, dtype=np.float32)
            self.logp_buf = np.zeros(size, dtype=np.float32)
            self.gamma, self.lam = gamma, lam
            self.ptr, self.path_start_idx, self.max_size = 0, 0, size

        def store(self, obs, act, rew, val, logp):
            assert self.ptr < self.max_size     # buffer has to have room so you can store
            self.obs_buf[self.ptr] = obs
            self.act_buf[self.ptr] = act
            self.rew_buf[self.ptr] = rew
            self.val_buf[self.ptr] = val
            self.logp_buf[self.ptr] = logp
            self.ptr += 1

        def finish_path(self, last_val=0):
            path_slice = slice(self.path_start_idx, self.ptr)
            rews = np.append(self.rew_buf[path_slice], last_val)
            vals = np.append(self.val_buf[path_slice], last_val)
            # the next two lines implement GAE-Lambda advantage calculation
            deltas = rews[:-1] + self.gamma * vals[1:] - vals[:-1]
            self.adv_buf[path_slice] = discount_cumsum(deltas, self.gamma * self.lam)
            # the next line computes rewards-to-go, to be targets for the value function
            self.ret_buf[path_slice] = discount_cumsum(rews, self.gamma)[:-1]
            self.path_start_idx = self.ptr

        def get(self):
            assert self.ptr == self.max_size    # buffer has to be full before you can get
            self.ptr, self.path_start_idx = 0, 0
            # the next two lines implement the advantage normalization trick
            adv_mean, adv_std = np.mean(self.adv_buf), np.std(self.adv_buf)  # mpi_statistics_scalar
            self.adv_buf = (self.adv_buf - adv_mean) / adv_std
            data = dict(obs=self.obs_buf, act=self.act_buf, ret=self.ret_buf,
                        adv=self.adv_buf, logp=self.logp_buf)
            return {k: torch.as_tensor(v, dtype=torch.float32) for k, v in data.items()}

    def ppo(env_fn, actor_critic=MLPActorCritic, ac_kwargs=dict(), seed=0, steps_per_epoch=4000, epochs=50,
            gamma=0.99, clip_ratio=0.2, pi_lr=3e-4, vf_lr=1e-3, train_pi_iters=80, train_v_iters=80, lam=0.97,
            max_ep_len=1000, target_kl=0.01):
        # Random seed
        torch.manual_seed(seed)
        np.random.seed(seed)
        env = env_fn()
        obs_dim = env.observation_space.shape
        act_dim = env.action_space.shape
        ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
        var_counts = tuple(count_vars(module) for module in [ac.pi, ac.v])
        print('\nNumber of parameters: \t pi: %d, \t v: %d\n' % var_counts)
        local_steps_per_epoch = int(steps_per_epoch / 1)
        buf = PPOBuffer(obs_dim, act_dim, local_steps_per_epoch, gamma, lam)

        def compute_loss_pi(data):
            obs, act, adv, logp_old = data['obs'], data['act'], data['adv'], data['logp']
            # Policy loss
            pi, logp = ac.pi(obs, act)
            ratio = torch.exp(logp - logp_old)
            clip_adv = torch.clamp(ratio, 1 - clip_ratio, 1 + clip_ratio) * adv
            loss_pi = -(torch.min(ratio * adv, clip_adv)).mean()
            # Useful extra info
            approx_kl = (logp_old - logp).mean().item()
            ent = pi.entropy().mean().item()
            clipped = ratio.gt(1 + clip_ratio) | ratio.lt(1 - clip_ratio)
            clipfrac = torch.as_tensor(clipped, dtype=torch.float32).mean().item()
            pi_info = dict(kl=approx_kl, ent=ent, cf=clipfrac)
            return loss_pi, pi_info

        def compute_loss_v(data):
            obs, ret = data['obs'], data['ret']
            return ((ac.v(obs) - ret)**2).mean()

        pi_optimizer = Adam(ac.pi.parameters(), lr=pi_lr)
        vf_optimizer = Adam(ac.v.parameters(), lr=vf_lr)

        def update():
            data = buf.get()
            pi_l_old, pi_info_old = compute_loss_pi(data)
            pi_l_old = pi_l_old.item()
            v_l_old = compute_loss_v(data).item()
            # Train policy with multiple steps of gradient descent
            for i in range(train_pi_iters):
                pi_optimizer.zero_grad()
                loss_pi, pi_info = compute_loss_pi(data)
                kl = pi_info['kl']
                if kl > 1.5 * target_kl:
                    print('Early stopping at step %d due to reaching max kl.' % i)
                    break
                loss_pi.backward()
                pi_optimizer.step()
            # Value function learning
            for i in range(train_v_iters):
                vf_optimizer.zero_grad()
                loss_v = compute_loss_v(data)
                loss_v.backward()
                vf_optimizer.step()
            kl, ent, cf = pi_info['kl'], pi_info_old['ent'], pi_info['cf']
            print('LossPi %.5f LossV %.5f KL %.5f Entropy %.5f ClipFrac %.4f DeltaLossPi %.5f DeltaLossV %.5f' % (
                pi_l_old, v_l_old, kl, ent, cf, loss_pi.item() - pi_l_old, loss_v.item() - v_l_old))

        start_time = time.time()
        o, ep_ret, ep_len = env.reset(), 0, 0
        # Main loop: collect experience in env and update/log each epoch
        for epoch in range(epochs):
            for t in range(local_steps_per_epoch):
                a, v, logp = ac.step(torch.as_tensor(o, dtype=torch.float32))
                next_o, r, d, _ = env.step(a)
                ep_ret += r
                ep_len += 1
                # save and log
                buf.store(o, a, r, v, logp)
                # Update obs (critical!)
                o = next_o
                timeout = ep_len == max_ep_len
                terminal = d or timeout
                epoch_ended = t == local_steps_per_epoch - 1
                if terminal or epoch_ended:
                    if epoch_ended and not (terminal):
                        print('Warning: trajectory cut off by epoch at %d steps.' % ep_len, flush=True)
                    # if trajectory didn't reach terminal state, bootstrap value target
                    if timeout or epoch_ended:
                        _, v, _ = ac.step(torch.as_tensor(o, dtype=torch.float32))
                    else:
                        v = 0
                    buf.finish_path(v)
                    if terminal:
                        print('EpRet %.3f EpLen %d' % (ep_ret, ep_len))
                    o, ep_ret, ep_len = env.reset(), 0, 0
            # Perform PPO update!
            update()
            print('Epoch', epoch, 'Time', time.time() - start_time > 0)
        return ac

    discrete = ppo(Corridor, ac_kwargs=dict(hidden_sizes=[32] * 2), steps_per_epoch=64, epochs=2,
                   train_pi_iters=10, train_v_iters=10, max_ep_len=20)
    continuous = ppo(Reacher, ac_kwargs=dict(hidden_sizes=[32] * 2), steps_per_epoch=48, epochs=2,
                     train_pi_iters=10, train_v_iters=10, max_ep_len=16, seed=1)
    return {"printed": Printed(printed),
            "discrete": {k: numpy_of(v) for k, v in discrete.state_dict().items()},
            "continuous": {k: numpy_of(v) for k, v in continuous.state_dict().items()}}


def sac_program(torch, init=None):
    nn = torch.nn
    F = torch.nn.functional
    Normal = torch.distributions.normal.Normal
    Adam = torch.optim.Adam
    printed = []

    def print(*args, **kwargs):
        printed.append(" ".join(str(a) for a in args))

    def combined_shape(length, shape=None):
        if shape is None:
            return (length,)
        return (length, shape) if np.isscalar(shape) else (length, *shape)

    def mlp(sizes, activation, output_activation=nn.Identity):
        layers = []
        for j in range(len(sizes) - 1):
            act = activation if j < len(sizes) - 2 else output_activation
            layers += [nn.Linear(sizes[j], sizes[j + 1]), act()]
        return nn.Sequential(*layers)

    def count_vars(module):
        return sum([np.prod(p.shape) for p in module.parameters()])

    # spinup/algos/pytorch/sac/core.py
    LOG_STD_MAX = 2
    LOG_STD_MIN = -20

    class SquashedGaussianMLPActor(nn.Module):
        def __init__(self, obs_dim, act_dim, hidden_sizes, activation, act_limit):
            super().__init__()
            self.net = mlp([obs_dim] + list(hidden_sizes), activation, activation)
            self.mu_layer = nn.Linear(hidden_sizes[-1], act_dim)
            self.log_std_layer = nn.Linear(hidden_sizes[-1], act_dim)
            self.act_limit = act_limit

        def forward(self, obs, deterministic=False, with_logprob=True):
            net_out = self.net(obs)
            mu = self.mu_layer(net_out)
            log_std = self.log_std_layer(net_out)
            log_std = torch.clamp(log_std, LOG_STD_MIN, LOG_STD_MAX)
            std = torch.exp(log_std)
            # Pre-squash distribution and sample
            pi_distribution = Normal(mu, std)
            if deterministic:
                # Only used for evaluating policy at test time.
                pi_action = mu
            else:
                pi_action = pi_distribution.rsample()
            if with_logprob:
                logp_pi = pi_distribution.log_prob(pi_action).sum(axis=-1)
                logp_pi -= (2 * (np.log(2) - pi_action - F.softplus(-2 * pi_action))).sum(axis=1)
            else:
                logp_pi = None
            pi_action = torch.tanh(pi_action)
            pi_action = self.act_limit * pi_action
            return pi_action, logp_pi

    class MLPQFunction(nn.Module):
        def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
            super().__init__()
            self.q = mlp([obs_dim + act_dim] + list(hidden_sizes) + [1], activation)

        def forward(self, obs, act):
            q = self.q(torch.cat([obs, act], dim=-1))
            return torch.squeeze(q, -1)  # Critical to ensure q has right shape.

    class MLPActorCritic(nn.Module):
        def __init__(self, observation_space, action_space, hidden_sizes=(256, 256), activation=nn.ReLU):
            super().__init__()
            obs_dim = observation_space.shape[0]
            act_dim = action_space.shape[0]
            act_limit = action_space.high[0]
            # build policy and value functions
            self.pi = SquashedGaussianMLPActor(obs_dim, act_dim, hidden_sizes, activation, act_limit)
            self.q1 = MLPQFunction(obs_dim, act_dim, hidden_sizes, activation)
            self.q2 = MLPQFunction(obs_dim, act_dim, hidden_sizes, activation)

        def act(self, obs, deterministic=False):
            with torch.no_grad():
                a, _ = self.pi(obs, deterministic, False)
                return a.numpy()

    # spinup/algos/pytorch/sac/sac.py
    class ReplayBuffer:
        def __init__(self, obs_dim, act_dim, size):
            self.obs_buf = np.zeros(combined_shape(size, obs_dim), dtype=np.float32)
            self.obs2_buf = np.zeros(combined_shape(size, obs_dim), dtype=np.float32)
            self.act_buf = np.zeros(combined_shape(size, act_dim), dtype=np.float32)
            self.rew_buf = np.zeros(size, dtype=np.float32)
            self.done_buf = np.zeros(size, dtype=np.float32)
            self.ptr, self.size, self.max_size = 0, 0, size

        def store(self, obs, act, rew, next_obs, done):
            self.obs_buf[self.ptr] = obs
            self.obs2_buf[self.ptr] = next_obs
            self.act_buf[self.ptr] = act
            self.rew_buf[self.ptr] = rew
            self.done_buf[self.ptr] = done
            self.ptr = (self.ptr + 1) % self.max_size
            self.size = min(self.size + 1, self.max_size)

        def sample_batch(self, batch_size=32):
            idxs = np.random.randint(0, self.size, size=batch_size)
            batch = dict(obs=self.obs_buf[idxs], obs2=self.obs2_buf[idxs], act=self.act_buf[idxs],
                         rew=self.rew_buf[idxs], done=self.done_buf[idxs])
            return {k: torch.as_tensor(v, dtype=torch.float32) for k, v in batch.items()}

    def sac(env_fn, actor_critic=MLPActorCritic, ac_kwargs=dict(), seed=0, steps_per_epoch=4000, epochs=100,
            replay_size=int(1e6), gamma=0.99, polyak=0.995, lr=1e-3, alpha=0.2, batch_size=100, start_steps=10000,
            update_after=1000, update_every=50, num_test_episodes=10, max_ep_len=1000):
        torch.manual_seed(seed)
        np.random.seed(seed)
        env, test_env = env_fn(), env_fn()
        obs_dim = env.observation_space.shape
        act_dim = env.action_space.shape[0]
        # Action limit for clamping: critically, assumes all dimensions share the same bound!
        act_limit = env.action_space.high[0]
        # Create actor-critic module and target networks
        ac = actor_critic(env.observation_space, env.action_space, **ac_kwargs)
        ac_targ = deepcopy(ac)
        # Freeze target networks with respect to optimizers (only update via polyak averaging)
        for p in ac_targ.parameters():
            p.requires_grad = False
        # List of parameters for both Q-networks (save this for convenience)
        q_params = itertools.chain(ac.q1.parameters(), ac.q2.parameters())
        # Experience buffer
        replay_buffer = ReplayBuffer(obs_dim=obs_dim, act_dim=act_dim, size=replay_size)
        var_counts = tuple(count_vars(module) for module in [ac.pi, ac.q1, ac.q2])
        print('\nNumber of parameters: \t pi: %d, \t q1: %d, \t q2: %d\n' % var_counts)

        def compute_loss_q(data):
            o, a, r, o2, d = data['obs'], data['act'], data['rew'], data['obs2'], data['done']
            q1 = ac.q1(o, a)
            q2 = ac.q2(o, a)
            # Bellman backup for Q functions
            with torch.no_grad():
                # Target actions come from *current* policy
                a2, logp_a2 = ac.pi(o2)
                # Target Q-values
                q1_pi_targ = ac_targ.q1(o2, a2)
                q2_pi_targ = ac_targ.q2(o2, a2)
                q_pi_targ = torch.min(q1_pi_targ, q2_pi_targ)
                backup = r + gamma * (1 - d) * (q_pi_targ - alpha * logp_a2)
            # MSE loss against Bellman backup
            loss_q1 = ((q1 - backup)**2).mean()
            loss_q2 = ((q2 - backup)**2).mean()
            loss_q = loss_q1 + loss_q2
            # Useful info for logging
            q_info = dict(Q1Vals=q1.detach().numpy(), Q2Vals=q2.detach().numpy())
            return loss_q, q_info

        def compute_loss_pi(data):
            o = data['obs']
            pi, logp_pi = ac.pi(o)
            q1_pi = ac.q1(o, pi)
            q2_pi = ac.q2(o, pi)
            q_pi = torch.min(q1_pi, q2_pi)
            # Entropy-regularized policy loss
            loss_pi = (alpha * logp_pi - q_pi).mean()
            # Useful info for logging
            pi_info = dict(LogPi=logp_pi.detach().numpy())
            return loss_pi, pi_info

        # Set up optimizers for policy and q-function
        pi_optimizer = Adam(ac.pi.parameters(), lr=lr)
        q_optimizer = Adam(q_params, lr=lr)

        def update(data):
            # First run one gradient descent step for Q1 and Q2
            q_optimizer.zero_grad()
            loss_q, q_info = compute_loss_q(data)
            loss_q.backward()
            q_optimizer.step()
            # Freeze Q-networks so you don't waste computational effort
            # computing gradients for them during the policy learning step.
            for p in q_params:
                p.requires_grad = False
            # Next run one gradient descent step for pi.
            pi_optimizer.zero_grad()
            loss_pi, pi_info = compute_loss_pi(data)
            loss_pi.backward()
            pi_optimizer.step()
            # Unfreeze Q-networks so you can optimize it at next DDPG step.
            for p in q_params:
                p.requires_grad = True
            # Finally, update target networks by polyak averaging.
            with torch.no_grad():
                for p, p_targ in zip(ac.parameters(), ac_targ.parameters()):
                    # NB: We use an in-place operations "mul_", "add_" to update target
                    # params, as opposed to "mul" and "add", which would make new tensors.
                    p_targ.data.mul_(polyak)
                    p_targ.data.add_((1 - polyak) * p.data)
            print('LossQ %.5f LossPi %.5f Q1 %.4f LogPi %.4f' % (
                loss_q.item(), loss_pi.item(), q_info['Q1Vals'].mean(), pi_info['LogPi'].mean()))

        def get_action(o, deterministic=False):
            return ac.act(torch.as_tensor(o, dtype=torch.float32), deterministic)

        def test_agent():
            for j in range(num_test_episodes):
                o, d, ep_ret, ep_len = test_env.reset(), False, 0, 0
                while not (d or (ep_len == max_ep_len)):
                    # Take deterministic actions at test time
                    o, r, d, _ = test_env.step(get_action(o, True))
                    ep_ret += r
                    ep_len += 1
                print('TestEpRet %.4f TestEpLen %d' % (ep_ret, ep_len))

        total_steps = steps_per_epoch * epochs
        o, ep_ret, ep_len = env.reset(), 0, 0
        for t in range(total_steps):
            # Until start_steps have elapsed, randomly sample actions
            # from a uniform distribution for better exploration. Afterwards,
            # use the learned policy.
            if t > start_steps:
                a = get_action(o)
            else:
                a = np.random.uniform(-act_limit, act_limit, act_dim).astype(np.float32)  # env.action_space.sample()
            o2, r, d, _ = env.step(a)
            ep_ret += r
            ep_len += 1
            d = False if ep_len == max_ep_len else d
            replay_buffer.store(o, a, r, o2, d)
            o = o2
            # End of trajectory handling
            if d or (ep_len == max_ep_len):
                print('EpRet %.4f EpLen %d' % (ep_ret, ep_len))
                o, ep_ret, ep_len = env.reset(), 0, 0
            # Update handling
            if t >= update_after and t % update_every == 0:
                for j in range(update_every):
                    batch = replay_buffer.sample_batch(batch_size)
                    update(data=batch)
            # End of epoch handling
            if (t + 1) % steps_per_epoch == 0:
                test_agent()
        return ac, ac_targ

    ac, ac_targ = sac(Reacher, ac_kwargs=dict(hidden_sizes=[32] * 2), steps_per_epoch=40, epochs=2,
                      replay_size=1000, batch_size=16, start_steps=30, update_after=20, update_every=10,
                      num_test_episodes=2, max_ep_len=15)
    return {"printed": Printed(printed), "ac": {k: numpy_of(v) for k, v in ac.state_dict().items()},
            "targ": {k: numpy_of(v) for k, v in ac_targ.state_dict().items()}}


def test_spinningup_ppo():
    compare_program(ppo_program, rtol=2e-3, atol=2e-4)


def test_spinningup_sac():
    compare_program(sac_program, rtol=2e-3, atol=2e-4)

"""Two much-used reinforcement-learning scripts on toy environments written here, randomness from
torch.manual_seed (both libraries draw PyTorch's streams). CleanRL's ppo.py: layer_init with
torch.nn.init.orthogonal_(layer.weight, std) and constant_ bias, an Agent with critic and actor
heads, Categorical(logits=...) sample/log_prob/entropy (and ppo_continuous_action.py's Agent: an
nn.Parameter log std expanded with expand_as, Normal(mean, std) log_prob(...).sum(1) on a point
mass; the target_kl early stop), rollout buffers from torch.zeros((steps,
envs) + shape), the learning-rate annealing written into optimizer.param_groups[0]["lr"], GAE in a
reversed loop, minibatches from a shuffled np.arange, the clipped surrogate with clipfracs,
the clipped value loss, approx_kl, clip_grad_norm_, explained variance through np.var.
pranz24's pytorch-soft-actor-critic: weights_init_ (xavier_uniform_ gain=1), a GaussianPolicy with
action_scale/action_bias buffers, rsample through a tanh with the log-prob correction
torch.log(self.action_scale * (1 - y_t.pow(2)) + epsilon), twin QNetworks, soft_update and
hard_update through target_param.data.copy_, and the automatic entropy tuning of log_alpha."""
import numpy as np

from prog_helpers import compare_program, numpy_of

LOG_SIG_MAX = 2
LOG_SIG_MIN = -20
epsilon = 1e-6


class CorridorEnvs:
    """num_envs corridors of length 6: action 1 steps right (reward 1 at the end, then reset),
    0 steps left; the observation is the one-hot position."""

    def __init__(self, num_envs, length=6):
        self.n, self.length = num_envs, length
        self.pos = np.zeros(num_envs, dtype=np.int64)

    def obs(self):
        return np.eye(self.length, dtype=np.float32)[self.pos]

    def step(self, actions):
        self.pos = np.clip(self.pos + np.where(actions == 1, 1, -1), 0, self.length - 1)
        done = self.pos == self.length - 1
        reward = done.astype(np.float32) - 0.01
        self.pos[done] = 0
        return self.obs(), reward, done


class PointMassEnvs:
    """num_envs point masses on a line: the action (clipped to [-1, 1]) is a push, the reward is
    minus the squared distance to the origin; an episode ends after `horizon` steps."""

    def __init__(self, num_envs, horizon=8, seed=0):
        self.rng = np.random.default_rng(seed)
        self.n, self.horizon = num_envs, horizon
        self.single_observation_space_shape = (2,)
        self.single_action_space_shape = (1,)
        self.reset_all()

    def reset_all(self):
        self.pos = self.rng.uniform(-1, 1, self.n).astype(np.float32)
        self.vel = np.zeros(self.n, dtype=np.float32)
        self.t = np.zeros(self.n, dtype=np.int64)

    def obs(self):
        return np.stack([self.pos, self.vel], axis=1).astype(np.float32)

    def step(self, action):
        a = np.clip(action[:, 0], -1, 1)
        self.vel = 0.9 * self.vel + 0.1 * a
        self.pos = self.pos + self.vel
        self.t += 1
        reward = -(self.pos ** 2).astype(np.float32)
        done = self.t >= self.horizon
        self.pos[done] = self.rng.uniform(-1, 1, done.sum())
        self.vel[done] = 0
        self.t[done] = 0
        return self.obs(), reward, done


def ppo(torch, init=None, num_envs=4, num_steps=16, num_updates=3, update_epochs=2, num_minibatches=4,
        learning_rate=2.5e-3, gamma=0.99, gae_lambda=0.95, clip_coef=0.2, ent_coef=0.01, vf_coef=0.5,
        max_grad_norm=0.5, anneal_lr=True, clip_vloss=True, target_kl=None, continuous=False):
    """ppo.py, or with continuous=True ppo_continuous_action.py (the two scripts differ only in
    the environment, the Agent and the actions' dtype)."""
    nn, optim = torch.nn, torch.optim
    from_dist = torch.distributions.categorical
    Categorical = from_dist.Categorical
    Normal = torch.distributions.normal.Normal
    rng = np.random.default_rng(1)  # the script's np.random.seed(args.seed)
    torch.manual_seed(1)
    torch.backends.cudnn.deterministic = True
    device = torch.device("cpu")
    batch_size = int(num_envs * num_steps)
    minibatch_size = int(batch_size // num_minibatches)
    if continuous:
        envs = PointMassEnvs(num_envs)
        obs_shape, act_shape = envs.single_observation_space_shape, envs.single_action_space_shape
    else:
        envs = CorridorEnvs(num_envs)
        obs_shape, act_shape = (envs.length,), ()
    obs_dim, n_actions = int(np.array(obs_shape).prod()), 2

    def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
        torch.nn.init.orthogonal_(layer.weight, std)
        torch.nn.init.constant_(layer.bias, bias_const)
        return layer

    def tower(out_dim, std):  # the scripts' critic and actor: two Tanh layers of 64
        return nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, out_dim), std=std),
        )

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.critic = tower(1, std=1.0)
            self.actor = tower(n_actions, std=0.01)

        def get_value(self, x):
            return self.critic(x)

        def get_action_and_value(self, x, action=None):
            logits = self.actor(x)
            probs = Categorical(logits=logits)
            if action is None:
                action = probs.sample()
            return action, probs.log_prob(action), probs.entropy(), self.critic(x)

    class ContinuousAgent(nn.Module):
        def __init__(self):
            super().__init__()
            act_dim = int(np.prod(act_shape))
            self.critic = tower(1, std=1.0)
            self.actor_mean = tower(act_dim, std=0.01)
            self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))

        def get_value(self, x):
            return self.critic(x)

        def get_action_and_value(self, x, action=None):
            action_mean = self.actor_mean(x)
            action_logstd = self.actor_logstd.expand_as(action_mean)
            action_std = torch.exp(action_logstd)
            probs = Normal(action_mean, action_std)
            if action is None:
                action = probs.sample()
            return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x)

    agent = (ContinuousAgent() if continuous else Agent()).to(device)
    optimizer = optim.Adam(agent.parameters(), lr=learning_rate, eps=1e-5)
    # ALGO Logic: Storage setup
    obs = torch.zeros((num_steps, num_envs) + obs_shape).to(device)
    actions = torch.zeros((num_steps, num_envs) + act_shape).to(device)
    logprobs = torch.zeros((num_steps, num_envs)).to(device)
    rewards = torch.zeros((num_steps, num_envs)).to(device)
    dones = torch.zeros((num_steps, num_envs)).to(device)
    values = torch.zeros((num_steps, num_envs)).to(device)
    global_step = 0
    next_obs = torch.Tensor(envs.obs()).to(device)
    next_done = torch.zeros(num_envs).to(device)
    log = []
    for update in range(1, num_updates + 1):
        # Annealing the rate if instructed to do so.
        if anneal_lr:
            frac = 1.0 - (update - 1.0) / num_updates
            lrnow = frac * learning_rate
            optimizer.param_groups[0]["lr"] = lrnow
        for step in range(0, num_steps):
            global_step += 1 * num_envs
            obs[step] = next_obs
            dones[step] = next_done
            # ALGO LOGIC: action logic
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob
            # TRY NOT TO MODIFY: execute the game and log data.
            next_obs, reward, done = envs.step(action.cpu().numpy())
            rewards[step] = torch.tensor(reward).to(device).view(-1)
            next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(done).to(device)
        # bootstrap value if not done
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards).to(device)
            lastgaelam = 0
            for t in reversed(range(num_steps)):
                if t == num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values
        # flatten the batch
        b_obs = obs.reshape((-1,) + obs_shape)
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape((-1,) + act_shape)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)
        # Optimizing the policy and value network
        b_inds = np.arange(batch_size)
        clipfracs = []
        for epoch in range(update_epochs):
            rng.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                end = start + minibatch_size
                mb_inds = b_inds[start:end]
                mb_actions = b_actions[mb_inds] if continuous else b_actions.long()[mb_inds]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], mb_actions)
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    # calculate approx_kl http://joschu.net/blog/kl-approx.html
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > clip_coef).float().mean().item()]
                mb_advantages = b_advantages[mb_inds]
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                # Policy loss
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()
                # Value loss
                newvalue = newvalue.view(-1)
                if clip_vloss:
                    v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                    v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -clip_coef, clip_coef)
                    v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                    v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
                    v_loss = 0.5 * v_loss_max.mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - ent_coef * entropy_loss + v_loss * vf_coef
                optimizer.zero_grad()
                loss.backward()
                grad_norm = nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
                optimizer.step()
            if target_kl is not None and approx_kl > target_kl:
                break
        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        log.append([optimizer.param_groups[0]["lr"], v_loss.item(), pg_loss.item(), entropy_loss.item(),
                    old_approx_kl.item(), approx_kl.item(), np.mean(clipfracs), explained_var,
                    rewards.sum().item(), float(grad_norm), epoch])
    return {"log": log, "actions": numpy_of(actions), "params": {k: numpy_of(v) for k, v in agent.named_parameters()}}


def sac(torch, init=None, updates=6, batch_size=16, gamma=0.99, tau=0.005, lr=3e-3, hidden_size=32,
        automatic_entropy_tuning=True):
    nn, F = torch.nn, torch.nn.functional
    Normal = torch.distributions.Normal
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    num_inputs, action_dim = 3, 2

    # Initialize Policy weights
    def weights_init_(m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight, gain=1)
            torch.nn.init.constant_(m.bias, 0)

    def soft_update(target, source, tau):
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.data.copy_(target_param.data * (1.0 - tau) + param.data * tau)

    def hard_update(target, source):
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.data.copy_(param.data)

    class QNetwork(nn.Module):
        def __init__(self, num_inputs, num_actions, hidden_dim):
            super(QNetwork, self).__init__()
            # Q1 architecture
            self.linear1 = nn.Linear(num_inputs + num_actions, hidden_dim)
            self.linear2 = nn.Linear(hidden_dim, hidden_dim)
            self.linear3 = nn.Linear(hidden_dim, 1)
            # Q2 architecture
            self.linear4 = nn.Linear(num_inputs + num_actions, hidden_dim)
            self.linear5 = nn.Linear(hidden_dim, hidden_dim)
            self.linear6 = nn.Linear(hidden_dim, 1)
            self.apply(weights_init_)

        def forward(self, state, action):
            xu = torch.cat([state, action], 1)
            x1 = F.relu(self.linear1(xu))
            x1 = F.relu(self.linear2(x1))
            x1 = self.linear3(x1)
            x2 = F.relu(self.linear4(xu))
            x2 = F.relu(self.linear5(x2))
            x2 = self.linear6(x2)
            return x1, x2

    class GaussianPolicy(nn.Module):
        def __init__(self, num_inputs, num_actions, hidden_dim, action_space=None):
            super(GaussianPolicy, self).__init__()
            self.linear1 = nn.Linear(num_inputs, hidden_dim)
            self.linear2 = nn.Linear(hidden_dim, hidden_dim)
            self.mean_linear = nn.Linear(hidden_dim, num_actions)
            self.log_std_linear = nn.Linear(hidden_dim, num_actions)
            self.apply(weights_init_)
            # action rescaling
            if action_space is None:
                self.action_scale = torch.tensor(1.)
                self.action_bias = torch.tensor(0.)
            else:
                self.action_scale = torch.FloatTensor((action_space[1] - action_space[0]) / 2.)
                self.action_bias = torch.FloatTensor((action_space[1] + action_space[0]) / 2.)

        def forward(self, state):
            x = F.relu(self.linear1(state))
            x = F.relu(self.linear2(x))
            mean = self.mean_linear(x)
            log_std = self.log_std_linear(x)
            log_std = torch.clamp(log_std, min=LOG_SIG_MIN, max=LOG_SIG_MAX)
            return mean, log_std

        def sample(self, state):
            mean, log_std = self.forward(state)
            std = log_std.exp()
            normal = Normal(mean, std)
            x_t = normal.rsample()  # for reparameterization trick (mean + std * N(0,1))
            y_t = torch.tanh(x_t)
            action = y_t * self.action_scale + self.action_bias
            log_prob = normal.log_prob(x_t)
            # Enforcing Action Bound
            log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + epsilon)
            log_prob = log_prob.sum(1, keepdim=True)
            mean = torch.tanh(mean) * self.action_scale + self.action_bias
            return action, log_prob, mean

        def to(self, device):
            self.action_scale = self.action_scale.to(device)
            self.action_bias = self.action_bias.to(device)
            return super(GaussianPolicy, self).to(device)

    device = torch.device("cpu")
    action_space = (np.array([-2.0, -1.0]), np.array([2.0, 1.0]))
    critic = QNetwork(num_inputs, action_dim, hidden_size).to(device=device)
    critic_optim = torch.optim.Adam(critic.parameters(), lr=lr)
    critic_target = QNetwork(num_inputs, action_dim, hidden_size).to(device)
    hard_update(critic_target, critic)
    policy = GaussianPolicy(num_inputs, action_dim, hidden_size, action_space).to(device)
    policy_optim = torch.optim.Adam(policy.parameters(), lr=lr)
    if automatic_entropy_tuning:
        target_entropy = -torch.prod(torch.Tensor((action_dim,)).to(device)).item()
        log_alpha = torch.zeros(1, requires_grad=True, device=device)
        alpha_optim = torch.optim.Adam([log_alpha], lr=lr)
    alpha = 0.2
    # a replay buffer of random transitions: reward for actions close to a target set by the state
    states = rng.normal(size=(256, num_inputs)).astype(np.float32)
    acts = rng.uniform(-1, 1, (256, action_dim)).astype(np.float32)
    rewards_all = -np.square(acts - np.tanh(states[:, :action_dim])).sum(1, keepdims=True).astype(np.float32)
    next_states = np.roll(states, -1, axis=0)
    masks_all = (rng.random((256, 1)) > 0.05).astype(np.float32)
    log = []
    for updates_i in range(updates):
        idx = rng.integers(0, 256, batch_size)
        state_batch = torch.FloatTensor(states[idx]).to(device)
        next_state_batch = torch.FloatTensor(next_states[idx]).to(device)
        action_batch = torch.FloatTensor(acts[idx]).to(device)
        reward_batch = torch.FloatTensor(rewards_all[idx]).to(device)
        mask_batch = torch.FloatTensor(masks_all[idx]).to(device)
        with torch.no_grad():
            next_state_action, next_state_log_pi, _ = policy.sample(next_state_batch)
            qf1_next_target, qf2_next_target = critic_target(next_state_batch, next_state_action)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - alpha * next_state_log_pi
            next_q_value = reward_batch + mask_batch * gamma * (min_qf_next_target)
        # Two Q-functions to mitigate positive bias in the policy improvement step
        qf1, qf2 = critic(state_batch, action_batch)
        qf1_loss = F.mse_loss(qf1, next_q_value)  # JQ = E(st,at)~D[0.5(Q1(st,at) - r(st,at) - γ(E st+1~p[V(st+1)]))^2]
        qf2_loss = F.mse_loss(qf2, next_q_value)
        qf_loss = qf1_loss + qf2_loss
        critic_optim.zero_grad()
        qf_loss.backward()
        critic_optim.step()
        pi, log_pi, _ = policy.sample(state_batch)
        qf1_pi, qf2_pi = critic(state_batch, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        policy_loss = ((alpha * log_pi) - min_qf_pi).mean()  # Jπ = 𝔼st∼D,εt∼N[α * logπ(f(εt;st)|st) − Q(st,f(εt;st))]
        policy_optim.zero_grad()
        policy_loss.backward()
        policy_optim.step()
        if automatic_entropy_tuning:
            alpha_loss = -(log_alpha * (log_pi + target_entropy).detach()).mean()
            alpha_optim.zero_grad()
            alpha_loss.backward()
            alpha_optim.step()
            alpha = log_alpha.exp()
            alpha_tlogs = alpha.clone()  # For TensorboardX logs
        soft_update(critic_target, critic, tau)
        log.append([qf1_loss.item(), qf2_loss.item(), policy_loss.item(), alpha_loss.item(), alpha_tlogs.item()])
    with torch.no_grad():
        _, _, deterministic = policy.sample(torch.FloatTensor(states[:4]))
    return {"log": log, "deterministic": numpy_of(deterministic), "target_entropy": target_entropy,
            "target": {k: numpy_of(v) for k, v in critic_target.state_dict().items()},
            "policy": {k: numpy_of(v) for k, v in policy.state_dict().items()}}


def test_cleanrl_ppo():
    ref, got = compare_program(ppo, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose([row[0] for row in ref["log"]], [2.5e-3, 2.5e-3 * 2 / 3, 2.5e-3 / 3])


def test_cleanrl_ppo_continuous_action():
    ref, got = compare_program(ppo, rtol=1e-3, atol=1e-5, continuous=True, num_envs=2, update_epochs=3,
                               num_minibatches=2, learning_rate=3e-3, ent_coef=0.0)
    np.testing.assert_allclose([row[0] for row in ref["log"]], [3e-3, 2e-3, 1e-3])
    assert ref["actions"].shape == (16, 2, 1) and ref["actions"].dtype == np.float32
    assert ref["params"]["actor_logstd"][0, 0] != 0  # the state-independent log std learns


def test_cleanrl_ppo_target_kl_stops_early():
    ref, got = compare_program(ppo, rtol=1e-3, atol=1e-5, continuous=True, num_updates=2, target_kl=1e-6)
    assert [row[-1] for row in ref["log"]] == [0, 0]  # every update stopped after its first epoch


def test_soft_actor_critic():
    ref, got = compare_program(sac, rtol=1e-3, atol=1e-5)
    assert ref["target_entropy"] == -2.0 and np.abs(ref["deterministic"][:, 0]).max() <= 2.0

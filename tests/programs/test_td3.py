"""sfujim/TD3 (TD3.py, utils.ReplayBuffer and main.py's loop) on a hand-written continuous
environment instead of gym: an Actor ending in max_action * torch.tanh, a Critic with twin Q heads
(Q1 for the actor's loss), copy.deepcopy target networks, target policy smoothing with
(torch.randn_like(action) * policy_noise).clamp(-noise_clip, noise_clip), the clipped double-Q
target torch.min(target_Q1, target_Q2), F.mse_loss on both heads, the delayed policy update, the
soft update through zip(parameters) and param.data.copy_, a NumPy replay buffer whose samples
become torch.FloatTensor(...).to(device), exploration noise from np.random, and save/load of the
state dicts of the networks and their optimizers through torch.save/torch.load into a folder."""
import copy
import os

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


class ReplayBuffer(object):
    def __init__(self, state_dim, action_dim, max_size=int(1e6)):
        self.max_size = max_size
        self.ptr = 0
        self.size = 0
        self.state = np.zeros((max_size, state_dim))
        self.action = np.zeros((max_size, action_dim))
        self.next_state = np.zeros((max_size, state_dim))
        self.reward = np.zeros((max_size, 1))
        self.not_done = np.zeros((max_size, 1))

    def add(self, state, action, next_state, reward, done):
        self.state[self.ptr] = state
        self.action[self.ptr] = action
        self.next_state[self.ptr] = next_state
        self.reward[self.ptr] = reward
        self.not_done[self.ptr] = 1. - done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample(self, torch, device, batch_size, rng):
        ind = rng.integers(0, self.size, size=batch_size)
        return (
            torch.FloatTensor(self.state[ind]).to(device),
            torch.FloatTensor(self.action[ind]).to(device),
            torch.FloatTensor(self.next_state[ind]).to(device),
            torch.FloatTensor(self.reward[ind]).to(device),
            torch.FloatTensor(self.not_done[ind]).to(device)
        )


class Pendulumish:
    """A damped 2-D point pushed by a 2-D action in [-2, 2]; reward -|x|^2 - 0.01|a|^2."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.state_dim, self.action_dim, self.max_action = 4, 2, 2.0

    def reset(self):
        self.s = np.concatenate([self.rng.uniform(-1, 1, 2), np.zeros(2)])
        self.t = 0
        return self.s.copy()

    def step(self, a):
        pos, vel = self.s[:2], self.s[2:]
        vel = 0.8 * vel + 0.05 * np.clip(a, -self.max_action, self.max_action)
        pos = pos + vel
        self.s = np.concatenate([pos, vel])
        self.t += 1
        reward = -float(pos @ pos) - 0.01 * float(a @ a)
        return self.s.copy(), reward, self.t >= 10


def td3(torch, init=None, start_timesteps=40, max_timesteps=70, batch_size=16, expl_noise=0.1, discount=0.99,
        tau=0.005, policy_noise=0.2, noise_clip=0.5, policy_freq=2, folder=None):
    nn, F = torch.nn, torch.nn.functional
    device = torch.device("cpu")

    class Actor(nn.Module):
        def __init__(self, state_dim, action_dim, max_action):
            super(Actor, self).__init__()
            self.l1 = nn.Linear(state_dim, 32)
            self.l2 = nn.Linear(32, 32)
            self.l3 = nn.Linear(32, action_dim)
            self.max_action = max_action

        def forward(self, state):
            a = F.relu(self.l1(state))
            a = F.relu(self.l2(a))
            return self.max_action * torch.tanh(self.l3(a))

    class Critic(nn.Module):
        def __init__(self, state_dim, action_dim):
            super(Critic, self).__init__()
            # Q1 architecture
            self.l1 = nn.Linear(state_dim + action_dim, 32)
            self.l2 = nn.Linear(32, 32)
            self.l3 = nn.Linear(32, 1)
            # Q2 architecture
            self.l4 = nn.Linear(state_dim + action_dim, 32)
            self.l5 = nn.Linear(32, 32)
            self.l6 = nn.Linear(32, 1)

        def forward(self, state, action):
            sa = torch.cat([state, action], 1)
            q1 = F.relu(self.l1(sa))
            q1 = F.relu(self.l2(q1))
            q1 = self.l3(q1)
            q2 = F.relu(self.l4(sa))
            q2 = F.relu(self.l5(q2))
            q2 = self.l6(q2)
            return q1, q2

        def Q1(self, state, action):
            sa = torch.cat([state, action], 1)
            q1 = F.relu(self.l1(sa))
            q1 = F.relu(self.l2(q1))
            q1 = self.l3(q1)
            return q1

    class TD3(object):
        def __init__(self, state_dim, action_dim, max_action, discount=0.99, tau=0.005, policy_noise=0.2,
                     noise_clip=0.5, policy_freq=2):
            self.actor = Actor(state_dim, action_dim, max_action).to(device)
            self.actor_target = copy.deepcopy(self.actor)
            self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
            self.critic = Critic(state_dim, action_dim).to(device)
            self.critic_target = copy.deepcopy(self.critic)
            self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=3e-4)
            self.max_action = max_action
            self.discount = discount
            self.tau = tau
            self.policy_noise = policy_noise
            self.noise_clip = noise_clip
            self.policy_freq = policy_freq
            self.total_it = 0

        def select_action(self, state):
            state = torch.FloatTensor(state.reshape(1, -1)).to(device)
            return self.actor(state).cpu().data.numpy().flatten()

        def train(self, replay_buffer, batch_size=256):
            self.total_it += 1
            # Sample replay buffer
            state, action, next_state, reward, not_done = replay_buffer.sample(torch, device, batch_size, buffer_rng)
            with torch.no_grad():
                # Select action according to policy and add clipped noise
                noise = (
                    torch.randn_like(action) * self.policy_noise
                ).clamp(-self.noise_clip, self.noise_clip)
                next_action = (
                    self.actor_target(next_state) + noise
                ).clamp(-self.max_action, self.max_action)
                # Compute the target Q value
                target_Q1, target_Q2 = self.critic_target(next_state, next_action)
                target_Q = torch.min(target_Q1, target_Q2)
                target_Q = reward + not_done * self.discount * target_Q
            # Get current Q estimates
            current_Q1, current_Q2 = self.critic(state, action)
            # Compute critic loss
            critic_loss = F.mse_loss(current_Q1, target_Q) + F.mse_loss(current_Q2, target_Q)
            # Optimize the critic
            self.critic_optimizer.zero_grad()
            critic_loss.backward()
            self.critic_optimizer.step()
            log.append(critic_loss.item())
            # Delayed policy updates
            if self.total_it % self.policy_freq == 0:
                # Compute actor losse
                actor_loss = -self.critic.Q1(state, self.actor(state)).mean()
                # Optimize the actor
                self.actor_optimizer.zero_grad()
                actor_loss.backward()
                self.actor_optimizer.step()
                log.append(actor_loss.item())
                # Update the frozen target models
                for param, target_param in zip(self.critic.parameters(), self.critic_target.parameters()):
                    target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)
                for param, target_param in zip(self.actor.parameters(), self.actor_target.parameters()):
                    target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)

        def save(self, filename):
            torch.save(self.critic.state_dict(), filename + "_critic")
            torch.save(self.critic_optimizer.state_dict(), filename + "_critic_optimizer")
            torch.save(self.actor.state_dict(), filename + "_actor")
            torch.save(self.actor_optimizer.state_dict(), filename + "_actor_optimizer")

        def load(self, filename):
            self.critic.load_state_dict(torch.load(filename + "_critic"))
            self.critic_optimizer.load_state_dict(torch.load(filename + "_critic_optimizer"))
            self.critic_target = copy.deepcopy(self.critic)
            self.actor.load_state_dict(torch.load(filename + "_actor"))
            self.actor_optimizer.load_state_dict(torch.load(filename + "_actor_optimizer"))
            self.actor_target = copy.deepcopy(self.actor)

    env = Pendulumish(0)
    torch.manual_seed(0)
    np_rng = np.random.default_rng(0)  # main.py's np.random.seed(args.seed)
    buffer_rng = np.random.default_rng(1)
    log = []
    policy = TD3(env.state_dim, env.action_dim, env.max_action, discount, tau, policy_noise * env.max_action,
                 noise_clip * env.max_action, policy_freq)
    result = {}
    start_from(torch, {"actor": policy.actor, "critic": policy.critic}, init, result)
    policy.actor_target = copy.deepcopy(policy.actor)
    policy.critic_target = copy.deepcopy(policy.critic)
    replay_buffer = ReplayBuffer(env.state_dim, env.action_dim, max_size=1000)
    state, done = env.reset(), False
    episode_rewards, episode_reward = [], 0.0
    for t in range(int(max_timesteps)):
        # Select action randomly or according to policy
        if t < start_timesteps:
            action = np_rng.uniform(-env.max_action, env.max_action, env.action_dim)
        else:
            action = (
                policy.select_action(np.array(state))
                + np_rng.normal(0, env.max_action * expl_noise, size=env.action_dim)
            ).clip(-env.max_action, env.max_action)
        next_state, reward, done = env.step(action)
        replay_buffer.add(state, action, next_state, reward, float(done))
        state = next_state
        episode_reward += reward
        # Train agent after collecting sufficient data
        if t >= start_timesteps:
            policy.train(replay_buffer, batch_size)
        if done:
            episode_rewards.append(episode_reward)
            state, done = env.reset(), False
            episode_reward = 0.0
    result.update(log=log, episode_rewards=episode_rewards,
                  actor_target={k: numpy_of(v) for k, v in policy.actor_target.state_dict().items()},
                  critic={k: numpy_of(v) for k, v in policy.critic.state_dict().items()})
    if folder is not None:
        os.makedirs(folder, exist_ok=True)
        file_name = os.path.join(folder, "TD3_Pendulumish_0")
        policy.save(file_name)
        restored = TD3(env.state_dim, env.action_dim, env.max_action)
        restored.load(file_name)
        probe = np.linspace(-1, 1, env.state_dim)
        result["restored_action"] = restored.select_action(probe)
        result["action"] = policy.select_action(probe)
        result["restored_adam_step"] = float(restored.actor_optimizer.state_dict()["state"][0]["step"])
    return result


def test_td3(tmp_path):
    ref, got = compare_program(td3, rtol=1e-3, atol=1e-5, folder=str(tmp_path / "torch"),
                               mt_options={"folder": str(tmp_path / "minitorch")})
    np.testing.assert_array_equal(got["restored_action"], got["action"])
    assert got["restored_adam_step"] == 15.0  # 30 training steps, the actor stepped every other one
    assert len(ref["log"]) == 30 + 15

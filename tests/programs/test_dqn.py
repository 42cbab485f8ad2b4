"""The reinforcement-learning (DQN) tutorial on a local toy environment: a Transition namedtuple,
a ReplayMemory over a deque with sample(), a three-layer DQN, epsilon-greedy select_action with
policy_net(state).max(1).indices.view(1, 1) under no_grad, optimize_model transposing a batch of
transitions (Transition(*zip(*transitions))), a non-final mask as a bool tensor from map(lambda),
torch.cat of the states, gather of the taken actions' values, target_net(...).max(1).values,
SmoothL1Loss, AdamW(amsgrad=True), clip_grad_value_, and the soft update of the target network
through state_dict() dicts and load_state_dict. Every random choice comes from NumPy."""
import math
from collections import deque, namedtuple

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))
N_OBS, N_ACTIONS = 4, 2


class Corridor:
    """A cart on a line: the state is (position, velocity, target, time); action 0 pushes left,
    1 right; the episode ends at the target or after 12 steps."""

    def __init__(self, rng):
        self.rng = rng

    def reset(self):
        self.pos, self.vel, self.t = 0.0, 0.0, 0
        self.target = float(self.rng.choice([-1.0, 1.0]))
        return self.obs(), {}

    def obs(self):
        return np.array([self.pos, self.vel, self.target, self.t / 12], dtype=np.float32)

    def step(self, action):
        self.vel = 0.8 * self.vel + (0.1 if action == 1 else -0.1)
        self.pos += self.vel
        self.t += 1
        terminated = abs(self.pos - self.target) < 0.15
        truncated = self.t >= 12
        reward = 1.0 if terminated else -0.05 * abs(self.pos - self.target)
        return self.obs(), reward, terminated, truncated, {}


def dqn(torch, init=None, episodes=6, batch_size=8):
    nn, optim = torch.nn, torch.optim
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    GAMMA, EPS_START, EPS_END, EPS_DECAY, TAU, LR = 0.99, 0.9, 0.05, 50, 0.005, 1e-3

    class ReplayMemory:
        def __init__(self, capacity):
            self.memory = deque([], maxlen=capacity)

        def push(self, *args):
            self.memory.append(Transition(*args))

        def sample(self, batch_size):
            picks = rng.choice(len(self.memory), batch_size, replace=False)
            return [self.memory[i] for i in picks]

        def __len__(self):
            return len(self.memory)

    class DQN(nn.Module):
        def __init__(self, n_observations, n_actions):
            super().__init__()
            self.layer1 = nn.Linear(n_observations, 32)
            self.layer2 = nn.Linear(32, 32)
            self.layer3 = nn.Linear(32, n_actions)

        def forward(self, x):
            x = F.relu(self.layer1(x))
            x = F.relu(self.layer2(x))
            return self.layer3(x)

    torch.manual_seed(0)
    policy_net = DQN(N_OBS, N_ACTIONS)
    target_net = DQN(N_OBS, N_ACTIONS)
    result = {}
    start_from(torch, {"policy": policy_net, "target": target_net}, init, result)
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
    memory = ReplayMemory(1000)
    steps_done = 0
    env = Corridor(rng)

    def select_action(state):
        nonlocal steps_done
        sample = rng.random()
        eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
        steps_done += 1
        if sample > eps_threshold:
            with torch.no_grad():
                return policy_net(state).max(1).indices.view(1, 1)
        return torch.tensor([[int(rng.integers(N_ACTIONS))]], dtype=torch.long)

    losses = []

    def optimize_model():
        if len(memory) < batch_size:
            return
        transitions = memory.sample(batch_size)
        batch = Transition(*zip(*transitions))
        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(batch_size)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        losses.append(loss.item())

    durations, actions = [], []
    for i_episode in range(episodes):
        state, info = env.reset()
        state = torch.tensor(state, dtype=torch.float32).unsqueeze(0)
        for t in range(100):
            action = select_action(state)
            actions.append(action.item())
            observation, reward, terminated, truncated, _ = env.step(action.item())
            reward = torch.tensor([reward])
            done = terminated or truncated
            next_state = None if terminated else torch.tensor(observation, dtype=torch.float32).unsqueeze(0)
            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model()
            target_net_state_dict = target_net.state_dict()
            policy_net_state_dict = policy_net.state_dict()
            for key in policy_net_state_dict:
                target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
            target_net.load_state_dict(target_net_state_dict)
            if done:
                durations.append(t + 1)
                break
    durations_t = torch.tensor(durations, dtype=torch.float)
    result.update(losses=losses, durations=durations, actions=actions, mean_duration=durations_t.mean().item(),
                  target={k: numpy_of(v) for k, v in target_net.state_dict().items()},
                  policy={k: numpy_of(v) for k, v in policy_net.state_dict().items()})
    return result


def test_dqn_tutorial():
    ref, got = compare_program(dqn, rtol=1e-3, atol=1e-4)
    assert len(got["losses"]) > 10

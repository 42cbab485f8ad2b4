"""An actor-critic policy gradient in the style of the PyTorch examples (reinforcement_learning/
actor_critic.py and reinforce.py) on a small corridor environment written here: a shared body with
action and value heads, Categorical(probs) for the action (chosen by inverse CDF from NumPy
uniforms so both libraries take the same actions), log_prob kept in lists, discounted returns
normalised with mean/std and eps from np.finfo, policy and smooth_l1 value losses stacked and
summed, Adam; plus a REINFORCE policy with Categorical(logits=...) and entropy, and the library's
own sample() checked by its frequencies."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

STATES, ACTIONS, GOAL = 6, 2, 5


def corridor_step(state, action):
    state = max(0, min(GOAL, state + (1 if action == 1 else -1)))
    return state, (1.0 if state == GOAL else -0.1), state == GOAL


def one_hot(state):
    x = np.zeros(STATES, np.float32)
    x[state] = 1
    return x


def actor_critic(torch, init=None, episodes=6, gamma=0.9):
    nn, F = torch.nn, torch.nn.functional
    from collections import namedtuple
    Categorical = torch.distributions.Categorical
    SavedAction = namedtuple("SavedAction", ["log_prob", "value"])
    torch.manual_seed(0)
    eps = np.finfo(np.float32).eps.item()

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(STATES, 32)
            self.action_head = nn.Linear(32, ACTIONS)
            self.value_head = nn.Linear(32, 1)
            self.saved_actions, self.rewards = [], []

        def forward(self, x):
            x = F.relu(self.affine1(x))
            action_prob = F.softmax(self.action_head(x), dim=-1)
            return action_prob, self.value_head(x)

    model = Policy()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
    rng = np.random.default_rng(0)

    def select_action(state):
        state = torch.from_numpy(one_hot(state)).float()
        probs, state_value = model(state)
        m = Categorical(probs)
        cdf = np.cumsum(probs.detach().numpy())
        action = torch.tensor(int(min(np.searchsorted(cdf, rng.random()), ACTIONS - 1)))
        model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
        return action.item()

    def finish_episode():
        R = 0
        saved_actions = model.saved_actions
        policy_losses, value_losses, returns = [], [], []
        for r in model.rewards[::-1]:
            R = r + gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for (log_prob, value), R in zip(saved_actions, returns):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
        optimizer.zero_grad()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        loss.backward()
        optimizer.step()
        del model.rewards[:]
        del model.saved_actions[:]
        return loss.item()

    losses, lengths = [], []
    running_reward = 0
    for _ in range(episodes):
        state, ep_reward = 0, 0
        for t in range(1, 30):
            action = select_action(state)
            state, reward, done = corridor_step(state, action)
            model.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        lengths.append(t)
        losses.append(finish_episode())
    result.update(losses=losses, lengths=np.array(lengths), running_reward=running_reward,
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def reinforce(torch, init=None, episodes=5, gamma=0.95):
    nn = torch.nn
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(STATES, 16), nn.Tanh(), nn.Linear(16, ACTIONS))
    result = {}
    start_from(torch, policy, init, result)
    optimizer = torch.optim.RMSprop(policy.parameters(), lr=1e-2)
    rng = np.random.default_rng(1)
    losses = []
    for _ in range(episodes):
        log_probs, entropies, rewards, state = [], [], [], 0
        for _ in range(20):
            logits = policy(torch.from_numpy(one_hot(state)))
            dist = torch.distributions.Categorical(logits=logits)
            u = rng.random()
            action = torch.as_tensor(int(u > dist.probs[0].item()))
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            state, reward, done = corridor_step(state, action.item())
            rewards.append(reward)
            if done:
                break
        returns, R = [], 0.0
        for r in reversed(rewards):
            R = r + gamma * R
            returns.append(R)
        returns = torch.tensor(returns[::-1], dtype=torch.float32)
        if len(returns) > 1:
            returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = -(torch.stack(log_probs) * returns).sum() - 0.01 * torch.stack(entropies).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        dist = torch.distributions.Categorical(probs=torch.tensor([0.2, 0.5, 0.3]))
        draws = dist.sample((4000,))
    result.update(losses=losses, own={"draws": numpy_of(draws)},
                  params={k: numpy_of(v) for k, v in policy.named_parameters()})
    return result


def test_actor_critic():
    ref, got = compare_program(actor_critic, rtol=1e-3, atol=1e-4)
    assert ref["lengths"].min() >= GOAL


def test_reinforce_with_entropy():
    ref, got = compare_program(reinforce, rtol=1e-3, atol=1e-4)
    draws = got["own"]["draws"]
    assert draws.shape == (4000,) and draws.dtype == np.int64
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 4000, [0.2, 0.5, 0.3], atol=0.035)

"""CleanRL's c51.py (categorical DQN) as its single file writes it, with gym replaced by a small
vector-env stub with the same attributes (single_observation_space.shape, single_action_space.n,
reset(seed=) / step returning the five-tuple and final_observation infos) and stable-baselines3's
ReplayBuffer by one with the same add / sample(batch_size) interface (samples as torch tensors):
the seeding block (random.seed, np.random.seed, torch.manual_seed, torch.backends.cudnn.deterministic),
the QNetwork with register_buffer("atoms", torch.linspace(v_min, v_max, steps=n_atoms)) and an input size
from np.array(shape).prod(), get_action's softmax over logits.view(len(x), n, n_atoms) and
pmfs[torch.arange(len(x)), action], the linear epsilon schedule, Adam(eps=0.01 / batch_size), the
projection of the target distribution (clamp, floor, ceil, (l == u).float(), index_add_ row by
row into torch.zeros_like), the cross-entropy loss on old_pmfs.clamp(min=, max=).log(), the target
network copy through load_state_dict(state_dict()), and the saved {"model_weights", "args": vars(args)}
loaded back with torch.load for evaluation."""
import argparse
import os
import random
import time

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


class Discrete:
    def __init__(self, n):
        self.n = n


class Box:
    def __init__(self, shape):
        self.shape = shape


class ChainVecEnv:
    """num_envs chains of 5 states: action 1 moves right (reward 1 at the end, then the episode
    ends), action 0 moves left; observations are one-hot, episodes are cut at 10 steps."""

    def __init__(self, num_envs, n=5):
        self.num_envs, self.n = num_envs, n
        self.single_observation_space = Box((n,))
        self.single_action_space = Discrete(2)

    def _obs(self):
        return np.eye(self.n, dtype=np.float32)[self.pos]

    def reset(self, seed=None):
        self.pos = np.zeros(self.num_envs, dtype=np.int64)
        self.t = np.zeros(self.num_envs, dtype=np.int64)
        return self._obs(), {}

    def step(self, actions):
        self.pos = np.clip(self.pos + np.where(actions == 1, 1, -1), 0, self.n - 1)
        self.t += 1
        terminations = self.pos == self.n - 1
        truncations = (self.t >= 10) & ~terminations
        rewards = terminations.astype(np.float32)
        done = terminations | truncations
        infos = {}
        if done.any():
            infos["final_observation"] = np.array([self._obs()[k] if d else None for k, d in enumerate(done)],
                                                  dtype=object)
            infos["final_info"] = [{"episode": {"r": rewards[k], "l": self.t[k]}} if d else None
                                   for k, d in enumerate(done)]
            self.pos[done] = 0
            self.t[done] = 0
        return self._obs(), rewards, terminations, truncations, infos


def replay_buffer(torch, buffer_size, obs_shape, device):
    """stable_baselines3.common.buffers.ReplayBuffer's add/sample, samples as torch tensors."""

    class ReplayBufferSamples:
        def __init__(self, observations, actions, next_observations, dones, rewards):
            self.observations, self.actions = observations, actions
            self.next_observations, self.dones, self.rewards = next_observations, dones, rewards

    class ReplayBuffer:
        def __init__(self):
            self.obs = np.zeros((buffer_size,) + obs_shape, dtype=np.float32)
            self.next_obs = np.zeros_like(self.obs)
            self.actions = np.zeros((buffer_size, 1), dtype=np.int64)
            self.rewards = np.zeros((buffer_size, 1), dtype=np.float32)
            self.dones = np.zeros((buffer_size, 1), dtype=np.float32)
            self.pos, self.full = 0, False

        def add(self, obs, next_obs, action, reward, done, infos):
            for k in range(len(obs)):
                self.obs[self.pos], self.next_obs[self.pos] = obs[k], next_obs[k]
                self.actions[self.pos], self.rewards[self.pos], self.dones[self.pos] = action[k], reward[k], done[k]
                self.pos = (self.pos + 1) % buffer_size
                self.full = self.full or self.pos == 0

        def sample(self, batch_size):
            upper = buffer_size if self.full else self.pos
            inds = np.random.randint(0, upper, size=batch_size)
            to = lambda a: torch.tensor(a, device=device)  # noqa: E731
            return ReplayBufferSamples(to(self.obs[inds]), to(self.actions[inds]), to(self.next_obs[inds]),
                                       to(self.dones[inds]), to(self.rewards[inds]))

    return ReplayBuffer()


def c51_program(torch, init=None, total_timesteps=60, tmp_dir=None):
    nn = torch.nn
    optim = torch.optim
    args = argparse.Namespace(
        exp_name="c51", seed=1, torch_deterministic=True, cuda=True, n_atoms=11, v_min=-2, v_max=2,
        buffer_size=200, gamma=0.99, target_network_frequency=10, batch_size=8, start_e=1, end_e=0.05,
        exploration_fraction=0.5, learning_starts=20, train_frequency=2, learning_rate=2.5e-3, num_envs=2,
        total_timesteps=total_timesteps, save_model=tmp_dir is not None)

    class QNetwork(nn.Module):
        def __init__(self, env, n_atoms=101, v_min=-100, v_max=100):
            super().__init__()
            self.env = env
            self.n_atoms = n_atoms
            self.register_buffer("atoms", torch.linspace(v_min, v_max, steps=n_atoms))
            self.n = env.single_action_space.n
            self.network = nn.Sequential(
                nn.Linear(np.array(env.single_observation_space.shape).prod(), 32),
                nn.ReLU(),
                nn.Linear(32, 24),
                nn.ReLU(),
                nn.Linear(24, self.n * n_atoms),
            )

        def get_action(self, x, action=None):
            logits = self.network(x)
            # probability mass function for each action
            pmfs = torch.softmax(logits.view(len(x), self.n, self.n_atoms), dim=2)
            q_values = (pmfs * self.atoms).sum(2)
            if action is None:
                action = torch.argmax(q_values, 1)
            return action, pmfs[torch.arange(len(x)), action]

    def linear_schedule(start_e: float, end_e: float, duration: int, t: int):
        slope = (end_e - start_e) / duration
        return max(slope * t + start_e, end_e)

    run_name = f"chain__{args.exp_name}__{args.seed}__{int(time.time())}"
    # TRY NOT TO MODIFY: seeding
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")
    device = torch.device("cpu")  # the test compares CPU runs

    # env setup
    envs = ChainVecEnv(args.num_envs)
    assert isinstance(envs.single_action_space, Discrete), "only discrete action space is supported"

    q_network = QNetwork(envs, n_atoms=args.n_atoms, v_min=args.v_min, v_max=args.v_max).to(device)
    result = {}
    start_from(torch, q_network, init, result)
    optimizer = optim.Adam(q_network.parameters(), lr=args.learning_rate, eps=0.01 / args.batch_size)
    target_network = QNetwork(envs, n_atoms=args.n_atoms, v_min=args.v_min, v_max=args.v_max).to(device)
    target_network.load_state_dict(q_network.state_dict())

    rb = replay_buffer(torch, args.buffer_size, envs.single_observation_space.shape, device)
    start_time = time.time()
    losses, q_values_log, returns = [], [], []

    # TRY NOT TO MODIFY: start the game
    obs, _ = envs.reset(seed=args.seed)
    for global_step in range(args.total_timesteps):
        # ALGO LOGIC: put action logic here
        epsilon = linear_schedule(args.start_e, args.end_e, args.exploration_fraction * args.total_timesteps,
                                  global_step)
        if random.random() < epsilon:
            actions = np.array([random.randrange(envs.single_action_space.n) for _ in range(envs.num_envs)])
        else:
            actions, pmf = q_network.get_action(torch.Tensor(obs).to(device))
            actions = actions.cpu().numpy()

        # TRY NOT TO MODIFY: execute the game and log data.
        next_obs, rewards, terminations, truncations, infos = envs.step(actions)

        # TRY NOT TO MODIFY: record rewards for plotting purposes
        if "final_info" in infos:
            for info in infos["final_info"]:
                if info and "episode" in info:
                    returns.append([global_step, float(info["episode"]["r"])])

        # TRY NOT TO MODIFY: save data to reply buffer; handle `final_observation`
        real_next_obs = next_obs.copy()
        for idx, trunc in enumerate(truncations):
            if trunc:
                real_next_obs[idx] = infos["final_observation"][idx]
        rb.add(obs, real_next_obs, actions, rewards, terminations, infos)

        # TRY NOT TO MODIFY: CRUCIAL step easy to overlook
        obs = next_obs

        # ALGO LOGIC: training.
        if global_step > args.learning_starts:
            if global_step % args.train_frequency == 0:
                data = rb.sample(args.batch_size)
                with torch.no_grad():
                    _, next_pmfs = target_network.get_action(data.next_observations)
                    next_atoms = data.rewards + args.gamma * target_network.atoms * (1 - data.dones)
                    # projection
                    delta_z = target_network.atoms[1] - target_network.atoms[0]
                    tz = next_atoms.clamp(args.v_min, args.v_max)

                    b = (tz - args.v_min) / delta_z
                    l = b.floor().clamp(0, args.n_atoms - 1)  # noqa: E741
                    u = b.ceil().clamp(0, args.n_atoms - 1)
                    # (l == u).float() handles the case where bj is exactly an integer
                    # example bj = 1, then the upper ceiling should be uj= 2, and lj= 1
                    d_m_l = (u + (l == u).float() - b) * next_pmfs
                    d_m_u = (b - l) * next_pmfs
                    target_pmfs = torch.zeros_like(next_pmfs)
                    for i in range(target_pmfs.size(0)):
                        target_pmfs[i].index_add_(0, l[i].long(), d_m_l[i])
                        target_pmfs[i].index_add_(0, u[i].long(), d_m_u[i])

                _, old_pmfs = q_network.get_action(data.observations, data.actions.flatten())
                loss = (-(target_pmfs * old_pmfs.clamp(min=1e-5, max=1 - 1e-5).log()).sum(-1)).mean()

                if global_step % 10 == 0:
                    old_val = (old_pmfs * q_network.atoms).sum(1)
                    q_values_log.append(old_val.mean().item())
                    sps = int(global_step / (time.time() - start_time + 1e-9))

                # optimize the model
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())

            # update target network
            if global_step % args.target_network_frequency == 0:
                target_network.load_state_dict(q_network.state_dict())

    result.update(losses=losses, q_values=q_values_log, returns=returns,
                  head=numpy_of(q_network.network[4].weight))
    if args.save_model:
        model_path = os.path.join(str(tmp_dir), f"{args.exp_name}.cleanrl_model")
        model_data = {
            "model_weights": q_network.state_dict(),
            "args": vars(args),
        }
        torch.save(model_data, model_path)
        # cleanrl_utils/evals/c51_eval.py
        model = QNetwork(envs, n_atoms=args.n_atoms, v_min=args.v_min, v_max=args.v_max).to(device)
        model_data = torch.load(model_path, map_location="cpu")
        model.load_state_dict(model_data["model_weights"])
        model.eval()
        obs, _ = envs.reset()
        actions, _ = model.get_action(torch.Tensor(obs).to(device))
        result["eval_actions"] = actions.cpu().numpy()
        result["saved_args"] = sorted(model_data["args"])
    return result


def test_cleanrl_c51():
    ref, got = compare_program(c51_program)
    assert len(ref["losses"]) > 10


def test_cleanrl_c51_save_and_eval(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    compare_program(c51_program, total_timesteps=30, tmp_dir=tmp_path / "pt", mt_options={"tmp_dir": tmp_path / "mt"})

"""The "Train a Mario-playing RL Agent" tutorial (Double DQN) as published, with gym-super-mario-bros
and its wrappers (SkipFrame, GrayScaleObservation, ResizeObservation, FrameStack) replaced by a
small environment written here that returns the wrapped observation directly ((4, 84, 84) float32
frames in [0, 1]), the replay memory as the page's first edition wrote it (a deque sampled by
random.sample; the current page uses torchrl's TensorDictReplayBuffer), MetricLogger's matplotlib
plots left out, and the schedule shortened (burnin, learn_every, sync_every, save_every).
What it leans on: MarioNet with online and target nn.Sequential CNNs (Conv2d 8/4, 4/2, 3/1,
Flatten, Linear(3136, 512)), self.target.load_state_dict(self.online.state_dict()) and frozen
target parameters, net.float(), epsilon-greedy act() with state.__array__(),
torch.tensor(state, device=...).unsqueeze(0), torch.argmax(action_values, axis=1).item(); cache()
with torch.tensor([action]), torch.tensor([reward]), torch.tensor([done]); recall() by
map(torch.stack, zip(*batch)) and .squeeze(); td_estimate indexing Q[np.arange(0, batch_size),
action] with a NumPy array and a tensor; td_target under @torch.no_grad() with (1 - done.float());
SmoothL1Loss, Adam(lr=0.00025); checkpoints dict(model=..., exploration_rate=...) saved by
torch.save under a pathlib.Path. Randomness: torch.manual_seed for the weights, np.random and
random seeded for exploration and replay sampling."""
import random
from collections import deque
from pathlib import Path

import numpy as np

from prog_helpers import Printed, compare_in_folders, numpy_of


class MarioLike:
    """Stands in for gym_super_mario_bros with the tutorial's wrappers: 4 stacked 84x84 grey frames;
    action 1 ("right") moves a bright block right, action 0 ("right + A") jumps it; reaching x = 60
    sets info["flag_get"]."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.action_space_n = 2

    def _frame(self):
        f = self.rng.uniform(0, 0.1, (84, 84)).astype(np.float32)
        f[60 - 10 * self.jump:70 - 10 * self.jump, self.x:self.x + 8] = 1.0
        return f

    def reset(self):
        self.x, self.jump, self.t = 4, 0, 0
        self.frames = deque([self._frame()] * 4, maxlen=4)
        return np.stack(self.frames), {}

    def step(self, action):
        self.t += 1
        self.jump = 1 if action == 0 else 0
        self.x = min(self.x + (4 if action == 1 else 2), 60)
        self.frames.append(self._frame())
        reward = 1.0 if action == 1 else 0.5
        done = self.t >= 12
        return np.stack(self.frames), reward, done, False, {"flag_get": self.x >= 60}


def mario_tutorial(torch, init=None, save_root="."):
    nn = torch.nn
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    env = MarioLike()

    class MarioNet(nn.Module):
        """mini CNN structure
        input -> (conv2d + relu) x 3 -> flatten -> (dense + relu) x 2 -> output
        """

        def __init__(self, input_dim, output_dim):
            super().__init__()
            c, h, w = input_dim
            if h != 84:
                raise ValueError(f"Expecting input height: 84, got: {h}")
            if w != 84:
                raise ValueError(f"Expecting input width: 84, got: {w}")
            self.online = self.__build_cnn(c, output_dim)
            self.target = self.__build_cnn(c, output_dim)
            self.target.load_state_dict(self.online.state_dict())
            # Q_target parameters are frozen.
            for p in self.target.parameters():
                p.requires_grad = False

        def forward(self, input, model):
            if model == "online":
                return self.online(input)
            elif model == "target":
                return self.target(input)

        def __build_cnn(self, c, output_dim):
            return nn.Sequential(
                nn.Conv2d(in_channels=c, out_channels=32, kernel_size=8, stride=4),
                nn.ReLU(),
                nn.Conv2d(in_channels=32, out_channels=64, kernel_size=4, stride=2),
                nn.ReLU(),
                nn.Conv2d(in_channels=64, out_channels=64, kernel_size=3, stride=1),
                nn.ReLU(),
                nn.Flatten(),
                nn.Linear(3136, 512),
                nn.ReLU(),
                nn.Linear(512, output_dim),
            )

    class Mario:
        def __init__(self, state_dim, action_dim, save_dir):
            self.state_dim = state_dim
            self.action_dim = action_dim
            self.save_dir = save_dir
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
            # Mario's DNN to predict the most optimal action - we implement this in the Learn section
            self.net = MarioNet(self.state_dim, self.action_dim).float()
            self.net = self.net.to(device=self.device)
            self.exploration_rate = 1
            self.exploration_rate_decay = 0.9  # 0.99999975 on the page
            self.exploration_rate_min = 0.1
            self.curr_step = 0
            self.save_every = 40  # no. of experiences between saving Mario Net (5e5 on the page)

        def act(self, state):
            """
            Given a state, choose an epsilon-greedy action and update value of step.
            """
            # EXPLORE
            if np.random.rand() < self.exploration_rate:
                action_idx = np.random.randint(self.action_dim)
            # EXPLOIT
            else:
                state = state[0].__array__() if isinstance(state, tuple) else state.__array__()
                state = torch.tensor(state, device=self.device).unsqueeze(0)
                action_values = self.net(state, model="online")
                action_idx = torch.argmax(action_values, axis=1).item()
            # decrease exploration_rate
            self.exploration_rate *= self.exploration_rate_decay
            self.exploration_rate = max(self.exploration_rate_min, self.exploration_rate)
            # increment step
            self.curr_step += 1
            return action_idx

    class Mario(Mario):  # subclassing for continuity
        def __init__(self, state_dim, action_dim, save_dir):
            super().__init__(state_dim, action_dim, save_dir)
            self.memory = deque(maxlen=100000)
            self.batch_size = 8  # 32 on the page

        def cache(self, state, next_state, action, reward, done):
            """
            Store the experience to self.memory (replay buffer)
            """
            def first_if_tuple(x):
                return x[0] if isinstance(x, tuple) else x
            state = first_if_tuple(state).__array__()
            next_state = first_if_tuple(next_state).__array__()
            state = torch.tensor(state)
            next_state = torch.tensor(next_state)
            action = torch.tensor([action])
            reward = torch.tensor([reward])
            done = torch.tensor([done])
            self.memory.append((state, next_state, action, reward, done,))

        def recall(self):
            """
            Retrieve a batch of experiences from memory
            """
            batch = random.sample(self.memory, self.batch_size)
            state, next_state, action, reward, done = map(torch.stack, zip(*batch))
            return state, next_state, action.squeeze(), reward.squeeze(), done.squeeze()

    class Mario(Mario):
        def __init__(self, state_dim, action_dim, save_dir):
            super().__init__(state_dim, action_dim, save_dir)
            self.gamma = 0.9

        def td_estimate(self, state, action):
            current_Q = self.net(state, model="online")[
                np.arange(0, self.batch_size), action
            ]  # Q_online(s,a)
            return current_Q

        @torch.no_grad()
        def td_target(self, reward, next_state, done):
            next_state_Q = self.net(next_state, model="online")
            best_action = torch.argmax(next_state_Q, axis=1)
            next_Q = self.net(next_state, model="target")[
                np.arange(0, self.batch_size), best_action
            ]
            return (reward + (1 - done.float()) * self.gamma * next_Q).float()

    class Mario(Mario):
        def __init__(self, state_dim, action_dim, save_dir):
            super().__init__(state_dim, action_dim, save_dir)
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=0.00025)
            self.loss_fn = torch.nn.SmoothL1Loss()

        def update_Q_online(self, td_estimate, td_target):
            loss = self.loss_fn(td_estimate, td_target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            return loss.item()

        def sync_Q_target(self):
            self.net.target.load_state_dict(self.net.online.state_dict())

    class Mario(Mario):
        def save(self):
            save_path = (
                self.save_dir / f"mario_net_{int(self.curr_step // self.save_every)}.chkpt"
            )
            torch.save(
                dict(model=self.net.state_dict(), exploration_rate=self.exploration_rate),
                save_path,
            )
            print(f"MarioNet saved to {save_path.name} at step {self.curr_step}")

    class Mario(Mario):
        def __init__(self, state_dim, action_dim, save_dir):
            super().__init__(state_dim, action_dim, save_dir)
            self.burnin = 12  # min. experiences before training (1e4 on the page)
            self.learn_every = 3  # no. of experiences between updates to Q_online
            self.sync_every = 18  # no. of experiences between Q_target & Q_online sync (1e4 on the page)

        def learn(self):
            if self.curr_step % self.sync_every == 0:
                self.sync_Q_target()
            if self.curr_step % self.save_every == 0:
                self.save()
            if self.curr_step < self.burnin:
                return None, None
            if self.curr_step % self.learn_every != 0:
                return None, None
            # Sample from memory
            state, next_state, action, reward, done = self.recall()
            # Get TD Estimate
            td_est = self.td_estimate(state, action)
            # Get TD Target
            td_tgt = self.td_target(reward, next_state, done)
            # Backpropagate loss through Q_online
            loss = self.update_Q_online(td_est, td_tgt)
            return (td_est.mean().item(), loss)

    use_cuda = torch.cuda.is_available()
    print(f"Using CUDA: {use_cuda}")
    save_dir = Path(save_root) / "checkpoints" / "2026-01-01T00-00-00"  # datetime.now() on the page
    save_dir.mkdir(parents=True)
    mario = Mario(state_dim=(4, 84, 84), action_dim=env.action_space_n, save_dir=save_dir)
    episodes = 4
    history = []
    for e in range(episodes):
        state = env.reset()
        # Play the game!
        while True:
            # Run agent on the state
            action = mario.act(state)
            # Agent performs action
            next_state, reward, done, trunc, info = env.step(action)
            # Remember
            mario.cache(state, next_state, action, reward, done)
            # Learn
            q, loss = mario.learn()
            history.append((action, q, loss))
            # Update state
            state = next_state
            # Check if end of game
            if done or info["flag_get"]:
                break
        print(f"Episode {e} - Step {mario.curr_step} - Epsilon {mario.exploration_rate:.3f}")
    learned = [(a, q, l) for a, q, l in history if q is not None]
    checkpoint = torch.load(save_dir / "mario_net_1.chkpt")
    return {"printed": Printed(printed), "actions": [a for a, _, _ in history],
            "q": [q for _, q, _ in learned], "loss": [l for _, _, l in learned],
            "exploration_rate": checkpoint["exploration_rate"],
            "online": {k: numpy_of(v) for k, v in mario.net.online.state_dict().items()},
            "target": {k: numpy_of(v) for k, v in mario.net.target.state_dict().items()}}


def test_mario_rl_tutorial(tmp_path):
    ref, got = compare_in_folders(mario_tutorial, tmp_path, "save_root", rtol=1e-3, atol=1e-4)
    assert len(ref["loss"]) > 3

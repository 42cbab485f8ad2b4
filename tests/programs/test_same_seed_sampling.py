"""Programs whose randomness comes from the library's generator, run from the same seed under
both libraries and compared number for number: an MLP trained with Dropout and a convolutional
net with Dropout2d (their masks are PyTorch's CPU streams), and a policy with Beta-distributed
actions and a Gamma-prior latent model trained through rsample (PyTorch's gamma sampler and its
reparameterised gradient). Each library initialises its own weights from the seed."""
import numpy as np

from prog_helpers import compare_program, numpy_of


def dropout_mlp(torch, init=None, steps=8, batch=16):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 300), nn.ReLU(), nn.Dropout(0.3), nn.Linear(300, 40), nn.Tanh(),
                          nn.AlphaDropout(0.2), nn.Linear(40, 1))
    rng = np.random.default_rng(1)
    x_all = rng.standard_normal((steps * batch, 12)).astype(np.float32)
    y_all = np.sin(x_all.sum(1, keepdims=True)).astype(np.float32)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses, extra = [], []
    for step in range(steps):
        x = torch.from_numpy(x_all[step * batch:(step + 1) * batch])
        y = torch.from_numpy(y_all[step * batch:(step + 1) * batch])
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        # the functional forms and an in-place dropout, on sizes past the parallel grain
        extra.append(numpy_of(F.dropout(torch.ones(3000), 0.5).sum()))
        extra.append(numpy_of(F.dropout(torch.ones(40, 50), 0.1, training=True, inplace=True).sum()))
    return {"losses": losses, "extra": extra, "params": {k: numpy_of(v) for k, v in model.named_parameters()}}


def dropout2d_cnn(torch, init=None, steps=5):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(2, 6, 3, padding=1), nn.ReLU(), nn.Dropout2d(0.4), nn.Conv2d(6, 4, 3),
                          nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    rng = np.random.default_rng(2)
    x = torch.from_numpy(rng.standard_normal((8, 2, 6, 6)).astype(np.float32))
    target = torch.from_numpy(rng.integers(0, 3, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    feature = numpy_of(F.dropout2d(torch.ones(4, 7, 3, 3), 0.5))
    return {"losses": losses, "feature": feature, "params": {k: numpy_of(v) for k, v in model.named_parameters()}}


def beta_policy(torch, init=None, steps=6, batch=64):
    """A one-step bandit with actions in (0, 1) from a Beta policy; the reward's gradient flows
    through rsample (pathwise), plus a REINFORCE term through log_prob."""
    nn, D = torch.nn, torch.distributions
    torch.manual_seed(5)
    net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2), nn.Softplus())
    opt = torch.optim.Adam(net.parameters(), lr=5e-2)
    rng = np.random.default_rng(4)
    states = torch.from_numpy(rng.uniform(-1, 1, (batch, 3)).astype(np.float32))
    best = torch.sigmoid(states.sum(1))
    rewards, actions = [], []
    for _ in range(steps):
        c = net(states) + 0.5
        policy = D.Beta(c[:, 0], c[:, 1])
        a = policy.rsample()
        reward = -(a - best) ** 2
        sampled = policy.sample()
        reinforce = (policy.log_prob(sampled) * (-(sampled - best) ** 2).detach()).mean()
        loss = -reward.mean() - 0.1 * reinforce
        opt.zero_grad()
        loss.backward()
        opt.step()
        rewards.append(reward.mean().item())
        actions.append(numpy_of(a))
    return {"rewards": rewards, "actions": actions, "params": {k: numpy_of(v) for k, v in net.named_parameters()}}


def gamma_latent_model(torch, init=None, steps=6):
    """Positive latent rates z ~ Gamma(k, k / m) (a Gamma VAE's reparameterised latent) decoded
    to Poisson-like counts; trained through Gamma.rsample and a Chi2 and Dirichlet term."""
    nn, D = torch.nn, torch.distributions
    torch.manual_seed(9)
    enc = nn.Linear(5, 6)
    rng = np.random.default_rng(6)
    counts = torch.from_numpy(rng.poisson(3.0, (32, 5)).astype(np.float64)).float()
    opt = torch.optim.SGD(enc.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        h = nn.functional.softplus(enc(counts)) + 0.1
        shape, mean = h[:, :3], h[:, 3:]
        z = D.Gamma(shape, shape / mean).rsample()
        w = D.Dirichlet(h[:, :3] + 0.2).rsample()
        chi = D.Chi2(h[:, 3]).rsample()
        rate = (z * w).sum(1, keepdim=True) + chi.unsqueeze(1) * 0.01
        nll = (rate - counts * torch.log(rate)).mean()
        kl = D.kl_divergence(D.Gamma(shape, shape / mean), D.Gamma(torch.ones_like(shape), torch.ones_like(shape))).mean()
        loss = nll + 0.1 * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "params": {k: numpy_of(v) for k, v in enc.named_parameters()}}


def test_dropout_mlp_same_seed_same_numbers():
    ref, got = compare_program(dropout_mlp, rtol=1e-5, atol=1e-6)
    assert ref["losses"][0] != ref["losses"][1]


def test_dropout2d_cnn_same_seed_same_numbers():
    compare_program(dropout2d_cnn, rtol=1e-5, atol=1e-6)


def test_beta_policy_same_seed_same_numbers():
    compare_program(beta_policy, rtol=1e-4, atol=1e-5)


def test_gamma_latent_model_same_seed_same_numbers():
    compare_program(gamma_latent_model, rtol=1e-4, atol=1e-5)

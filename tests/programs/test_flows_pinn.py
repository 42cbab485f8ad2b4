"""Two research-notebook programs. A RealNVP normalizing flow on 2-D data: alternating binary
masks registered as a buffer from torch.from_numpy(np.array(...).astype(np.float32)), scale and
translation nets (Tanh in s), coupling layers computing z_ = mask * x + (1 - mask) * (x - t) *
torch.exp(-s) and log_det_J -= s.sum(dim=1), the prior a distributions.MultivariateNormal(
torch.zeros(2), torch.eye(2)) whose log_prob is the loss, sampling with prior.sample((n,)) and the
inverse pass. A physics-informed network for u'' = -pi^2 sin(pi x): collocation points with
requires_grad=True, du = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u),
create_graph=True)[0] taken twice, boundary conditions, a loss of residual and boundary MSE, Adam
then LBFGS with a closure."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def realnvp(torch, init=None, steps=5):
    nn = torch.nn
    distributions = torch.distributions

    class RealNVP(nn.Module):
        def __init__(self, nets, nett, mask, prior):
            super(RealNVP, self).__init__()
            self.prior = prior
            self.register_buffer("mask", mask)
            self.t = torch.nn.ModuleList([nett() for _ in range(len(mask))])
            self.s = torch.nn.ModuleList([nets() for _ in range(len(mask))])

        def g(self, z):
            x = z
            for i in range(len(self.t)):
                x_ = x * self.mask[i]
                s = self.s[i](x_) * (1 - self.mask[i])
                t = self.t[i](x_) * (1 - self.mask[i])
                x = x_ + (1 - self.mask[i]) * (x * torch.exp(s) + t)
            return x

        def f(self, x):
            log_det_J, z = x.new_zeros(x.shape[0]), x
            for i in reversed(range(len(self.t))):
                z_ = self.mask[i] * z
                s = self.s[i](z_) * (1 - self.mask[i])
                t = self.t[i](z_) * (1 - self.mask[i])
                z = (1 - self.mask[i]) * (z - t) * torch.exp(-s) + z_
                log_det_J -= s.sum(dim=1)
            return z, log_det_J

        def log_prob(self, x):
            z, logp = self.f(x)
            return self.prior.log_prob(z) + logp

        def sample(self, batchSize):
            z = self.prior.sample((batchSize, 1))
            logp = self.prior.log_prob(z)
            x = self.g(z)
            return x

    torch.manual_seed(0)
    nets = lambda: nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(), nn.Linear(16, 16), nn.LeakyReLU(),
                                 nn.Linear(16, 2), nn.Tanh())
    nett = lambda: nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(), nn.Linear(16, 16), nn.LeakyReLU(),
                                 nn.Linear(16, 2))
    masks = torch.from_numpy(np.array([[0, 1], [1, 0]] * 3).astype(np.float32))
    prior = distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    flow = RealNVP(nets, nett, masks, prior)
    result = {}
    start_from(torch, flow, init, result)
    optimizer = torch.optim.Adam([p for p in flow.parameters() if p.requires_grad == True], lr=1e-3)
    rng = np.random.default_rng(0)
    losses = []
    for t in range(steps):
        angle = rng.uniform(0, 2 * np.pi, 64)
        noisy_moons = np.stack([np.cos(angle), np.sin(angle)], 1) + 0.1 * rng.standard_normal((64, 2))
        loss = -flow.log_prob(torch.from_numpy(noisy_moons).float()).mean()
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
        losses.append(loss.item())
    result["losses"] = losses
    with torch.no_grad():
        z = torch.from_numpy(rng.standard_normal((8, 2)).astype(np.float32))
        x = flow.g(z)
        z_back, logdet = flow.f(x)
    result.update(x=numpy_of(x), z_back=numpy_of(z_back), logdet=numpy_of(logdet),
                  mask=numpy_of(flow.mask), prior_lp=numpy_of(prior.log_prob(z)))
    own = flow.sample(16).detach()
    result["own"] = {"sample": numpy_of(own)}
    result["sample_shape"] = list(own.shape)
    return result


def pinn(torch, init=None, adam_steps=5, lbfgs_steps=2, line_search_fn=None):
    nn = torch.nn

    class PINN(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))

        def forward(self, x):
            return self.net(x)

    torch.manual_seed(0)
    model = PINN()
    result = {}
    start_from(torch, model, init, result)
    x = torch.linspace(-1, 1, 32).view(-1, 1).requires_grad_(True)
    x_bc = torch.tensor([[-1.0], [1.0]])
    u_bc = torch.zeros_like(x_bc)

    def loss_fn():
        u = model(x)
        u_x = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
        u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
        f = -(math.pi ** 2) * torch.sin(math.pi * x)
        residual = u_xx - f
        loss_pde = torch.mean(residual ** 2)
        loss_bc = nn.MSELoss()(model(x_bc), u_bc)
        return loss_pde + loss_bc, loss_pde, loss_bc

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    history = []
    for epoch in range(adam_steps):
        optimizer.zero_grad()
        loss, lp, lb = loss_fn()
        loss.backward()
        optimizer.step()
        history.append([loss.item(), lp.item(), lb.item()])
    # (strong_wolfe's cubic interpolation here meets a bracket 1e-6 wide whose end values differ in
    # the last bit between the libraries, and picks another point: the fixed-step form is compared)
    lbfgs = torch.optim.LBFGS(model.parameters(), lr=0.05, max_iter=5, history_size=10,
                              line_search_fn=line_search_fn)

    def closure():
        lbfgs.zero_grad()
        loss = loss_fn()[0]
        loss.backward()
        return loss

    for _ in range(lbfgs_steps):
        history.append([lbfgs.step(closure).item(), 0.0, 0.0])
    result["history"] = np.array(history)
    x_test = torch.linspace(-1, 1, 9).view(-1, 1)
    with torch.no_grad():
        u_pred = model(x_test)
    u_exact = torch.sin(math.pi * x_test)
    result.update(u=numpy_of(u_pred), err=torch.max(torch.abs(u_pred - u_exact)).item(),
                  grad_x=numpy_of(x.grad) if x.grad is not None else None)
    if result["grad_x"] is None:
        del result["grad_x"]
    return result


def test_realnvp_flow():
    compare_program(realnvp, rtol=1e-3, atol=1e-4)


def test_pinn_double_grad_adam_lbfgs():
    compare_program(pinn, rtol=2e-3, atol=1e-4)

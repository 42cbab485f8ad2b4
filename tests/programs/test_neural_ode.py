"""torchdiffeq's examples with a fixed-step solver written here (classic RK4 over the t grid, for a
tensor or a tuple of tensors, as odeint(func, y0, t, method='rk4') is called): ode_demo.py (a
Lambda module making the true spiral with torch.mm(y**3, true_A), get_batch with np.random.choice
and torch.stack([true_y[s + i] ...], dim=0), an ODEFunc whose Linear layers are initialised by
nn.init.normal_(std=0.1) and constant_, RMSprop, RunningAverageMeter, the 'Iter {:04d} | Total
Loss {:.6f}' printout) and cnf.py (a HyperNetwork producing W, B, U from t, a CNF whose forward
enables grad inside with torch.set_grad_enabled(True), z.requires_grad_(True), and traces
d(dz/dt)/dz one coordinate at a time with torch.autograd.grad(create_graph=True), integrated from
t1 back to t0 as a (z, logp) tuple, a MultivariateNormal base log_prob, Adam)."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def odeint(torch, func, y0, t):
    """Classic fourth-order Runge-Kutta on the grid t (one step per interval); y0 a tensor or a
    tuple of tensors. Returns the states at every t stacked on a new first dimension."""
    is_tuple = isinstance(y0, tuple)
    y = y0 if is_tuple else (y0,)
    f = (lambda s, state: func(s, state)) if is_tuple else (lambda s, state: (func(s, state[0]),))
    ys = [y]
    for t0, t1 in zip(t[:-1], t[1:]):
        dt = t1 - t0
        k1 = f(t0, y)
        k2 = f(t0 + dt / 2, tuple(y_ + dt / 2 * k for y_, k in zip(y, k1)))
        k3 = f(t0 + dt / 2, tuple(y_ + dt / 2 * k for y_, k in zip(y, k2)))
        k4 = f(t1, tuple(y_ + dt * k for y_, k in zip(y, k3)))
        y = tuple(y_ + dt / 6 * (a + 2 * b + 2 * c + d) for y_, a, b, c, d in zip(y, k1, k2, k3, k4))
        ys.append(y)
    out = tuple(torch.stack([s[i] for s in ys]) for i in range(len(y)))
    return out if is_tuple else out[0]


class RunningAverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.reset()

    def reset(self):
        self.val = None
        self.avg = 0

    def update(self, val):
        if self.val is None:
            self.avg = val
        else:
            self.avg = self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val


def ode_demo(torch, init=None, data_size=200, batch_time=10, batch_size=20, niters=12, test_freq=4):
    nn, optim = torch.nn, torch.optim
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    device = torch.device('cpu')
    true_y0 = torch.tensor([[2., 0.]]).to(device)
    t = torch.linspace(0., 25., data_size).to(device)
    true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]]).to(device)

    class Lambda(nn.Module):
        def forward(self, t, y):
            return torch.mm(y**3, true_A)

    with torch.no_grad():
        true_y = odeint(torch, Lambda(), true_y0, t)

    def get_batch():
        s = torch.from_numpy(rng.choice(np.arange(data_size - batch_time, dtype=np.int64), batch_size, replace=False))
        batch_y0 = true_y[s]  # (M, D)
        batch_t = t[:batch_time]  # (T)
        batch_y = torch.stack([true_y[s + i] for i in range(batch_time)], dim=0)  # (T, M, D)
        return batch_y0.to(device), batch_t.to(device), batch_y.to(device)

    class ODEFunc(nn.Module):
        def __init__(self):
            super(ODEFunc, self).__init__()
            self.net = nn.Sequential(
                nn.Linear(2, 50),
                nn.Tanh(),
                nn.Linear(50, 2),
            )
            for m in self.net.modules():
                if isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, mean=0, std=0.1)
                    nn.init.constant_(m.bias, val=0)

        def forward(self, t, y):
            return self.net(y**3)

    func = ODEFunc().to(device)
    result = {}
    start_from(torch, func, init, result)
    optimizer = optim.RMSprop(func.parameters(), lr=1e-3)
    loss_meter = RunningAverageMeter(0.97)
    printed = []
    for itr in range(1, niters + 1):
        optimizer.zero_grad()
        batch_y0, batch_t, batch_y = get_batch()
        pred_y = odeint(torch, func, batch_y0, batch_t).to(device)
        loss = torch.mean(torch.abs(pred_y - batch_y))
        loss.backward()
        optimizer.step()
        loss_meter.update(loss.item())
        if itr % test_freq == 0:
            with torch.no_grad():
                pred_y = odeint(torch, func, true_y0, t)
                loss = torch.mean(torch.abs(pred_y - true_y))
                printed.append('Iter {:04d} | Total Loss {:.6f}'.format(itr, loss.item()))
    result.update(true_y=numpy_of(true_y), running=loss_meter.avg, printed=printed, pred_y=numpy_of(pred_y),
                  params={k: numpy_of(v) for k, v in func.named_parameters()})
    return result


def cnf(torch, init=None, niters=3, num_samples=64, hidden_dim=16, width=8, t0=0, t1=1, steps=4):
    nn = torch.nn
    torch.manual_seed(0)
    rng = np.random.default_rng(1)

    class HyperNetwork(nn.Module):
        """Hyper-network allowing f(z(t), t) to change with time."""
        def __init__(self, in_out_dim, hidden_dim, width):
            super().__init__()
            blocksize = width * in_out_dim
            self.fc1 = nn.Linear(1, hidden_dim)
            self.fc2 = nn.Linear(hidden_dim, hidden_dim)
            self.fc3 = nn.Linear(hidden_dim, 3 * blocksize + width)
            self.in_out_dim = in_out_dim
            self.hidden_dim = hidden_dim
            self.width = width
            self.blocksize = blocksize

        def forward(self, t):
            # predict params
            params = t.reshape(1, 1)
            params = torch.tanh(self.fc1(params))
            params = torch.tanh(self.fc2(params))
            params = self.fc3(params)
            # restructure
            params = params.reshape(-1)
            W = params[:self.blocksize].reshape(self.width, self.in_out_dim, 1)
            U = params[self.blocksize:2 * self.blocksize].reshape(self.width, 1, self.in_out_dim)
            G = params[2 * self.blocksize:3 * self.blocksize].reshape(self.width, 1, self.in_out_dim)
            U = U * torch.sigmoid(G)
            B = params[3 * self.blocksize:].reshape(self.width, 1, 1)
            return [W, B, U]

    def trace_df_dz(f, z):
        """Calculates the trace of the Jacobian df/dz."""
        sum_diag = 0.
        for i in range(z.shape[1]):
            sum_diag += torch.autograd.grad(f[:, i].sum(), z, create_graph=True)[0].contiguous()[:, i].contiguous()
        return sum_diag.contiguous()

    class CNF(nn.Module):
        """Adapted from the NumPy implementation at: https://gist.github.com/rtqichen/91924063aa4cc95e7ef30b3a5491cc52"""
        def __init__(self, in_out_dim, hidden_dim, width):
            super().__init__()
            self.in_out_dim = in_out_dim
            self.hidden_dim = hidden_dim
            self.width = width
            self.hyper_net = HyperNetwork(in_out_dim, hidden_dim, width)

        def forward(self, t, states):
            z = states[0]
            logp_z = states[1]
            batchsize = z.shape[0]
            with torch.set_grad_enabled(True):
                z.requires_grad_(True)
                W, B, U = self.hyper_net(t)
                Z = torch.unsqueeze(z, 0).repeat(self.width, 1, 1)
                h = torch.tanh(torch.matmul(Z, W) + B)
                dz_dt = torch.matmul(h, U).mean(0)
                dlogp_z_dt = -trace_df_dz(dz_dt, z).view(batchsize, 1)
            return (dz_dt, dlogp_z_dt)

    def get_batch(num_samples):
        """Two circles, as sklearn.datasets.make_circles would draw them."""
        angle = rng.uniform(0, 2 * np.pi, num_samples)
        radius = np.where(rng.random(num_samples) < 0.5, 0.5, 1.0)
        points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1) + rng.normal(0, 0.05, (num_samples, 2))
        x = torch.tensor(points).type(torch.float32)
        logp_diff_t1 = torch.zeros(num_samples, 1).type(torch.float32)
        return (x, logp_diff_t1)

    func = CNF(in_out_dim=2, hidden_dim=hidden_dim, width=width)
    result = {}
    start_from(torch, func, init, result)
    optimizer = torch.optim.Adam(func.parameters(), lr=1e-3)
    p_z0 = torch.distributions.MultivariateNormal(
        loc=torch.tensor([0.0, 0.0]),
        covariance_matrix=torch.tensor([[0.1, 0.0], [0.0, 0.1]])
    )
    losses = []
    for itr in range(1, niters + 1):
        optimizer.zero_grad()
        x, logp_diff_t1 = get_batch(num_samples)
        z_t, logp_diff_t = odeint(torch, func, (x, logp_diff_t1),
                                  torch.linspace(t1, t0, steps + 1).type(torch.float32))
        z_t0, logp_diff_t0 = z_t[-1], logp_diff_t[-1]
        logp_x = p_z0.log_prob(z_t0) - logp_diff_t0.view(-1)
        loss = -logp_x.mean(0)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result.update(losses=losses, z_t0=numpy_of(z_t0), logp=numpy_of(logp_diff_t0),
                  params={k: numpy_of(v) for k, v in func.named_parameters()})
    return result


def test_ode_demo_spiral():
    ref, got = compare_program(ode_demo, rtol=1e-3, atol=1e-4)
    assert [p[:9] for p in ref["printed"]] == ["Iter 0004", "Iter 0008", "Iter 0012"]
    assert ref["true_y"].shape == (200, 1, 2)


def test_continuous_normalizing_flow():
    ref, got = compare_program(cnf, rtol=1e-3, atol=1e-4)
    assert ref["z_t0"].shape == (64, 2) and np.isfinite(ref["losses"]).all()

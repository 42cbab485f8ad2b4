"""A Fourier neural operator (FNO-2d), as the neural-operator papers' code writes it: SpectralConv2d
weights made by self.scale * torch.rand(in, out, modes1, modes2, dtype=torch.cfloat) as complex
Parameters, x_ft = torch.fft.rfft2(x), a complex einsum("bixy,ioxy->boxy") on the kept low modes
written into torch.zeros(..., dtype=torch.cfloat) slices (out_ft[:, :, :m1, :m2] and the negative
frequencies out_ft[:, :, -m1:, :m2]), torch.fft.irfft2(out_ft, s=(h, w)), a pointwise Conv2d path,
F.gelu, a grid of torch.linspace coordinates repeated over the batch and concatenated on the last
dim, permute to channels-first and back, a relative L2 loss (torch.norm of differences over
torch.norm of targets), Adam over the real and complex parameters and StepLR."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def fno(torch, init=None, steps=3, modes=3, width=6, size=12):
    nn, F = torch.nn, torch.nn.functional

    class SpectralConv2d(nn.Module):
        def __init__(self, in_channels, out_channels, modes1, modes2):
            super(SpectralConv2d, self).__init__()
            self.in_channels = in_channels
            self.out_channels = out_channels
            self.modes1 = modes1
            self.modes2 = modes2
            self.scale = (1 / (in_channels * out_channels))
            self.weights1 = nn.Parameter(
                self.scale * torch.rand(in_channels, out_channels, self.modes1, self.modes2, dtype=torch.cfloat))
            self.weights2 = nn.Parameter(
                self.scale * torch.rand(in_channels, out_channels, self.modes1, self.modes2, dtype=torch.cfloat))

        def compl_mul2d(self, input, weights):
            return torch.einsum("bixy,ioxy->boxy", input, weights)

        def forward(self, x):
            batchsize = x.shape[0]
            x_ft = torch.fft.rfft2(x)
            out_ft = torch.zeros(batchsize, self.out_channels, x.size(-2), x.size(-1) // 2 + 1, dtype=torch.cfloat,
                                 device=x.device)
            out_ft[:, :, :self.modes1, :self.modes2] = \
                self.compl_mul2d(x_ft[:, :, :self.modes1, :self.modes2], self.weights1)
            out_ft[:, :, -self.modes1:, :self.modes2] = \
                self.compl_mul2d(x_ft[:, :, -self.modes1:, :self.modes2], self.weights2)
            x = torch.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)))
            return x

    class FNO2d(nn.Module):
        def __init__(self, modes1, modes2, width):
            super(FNO2d, self).__init__()
            self.modes1, self.modes2, self.width = modes1, modes2, width
            self.fc0 = nn.Linear(3, self.width)
            self.conv0 = SpectralConv2d(self.width, self.width, self.modes1, self.modes2)
            self.conv1 = SpectralConv2d(self.width, self.width, self.modes1, self.modes2)
            self.w0 = nn.Conv2d(self.width, self.width, 1)
            self.w1 = nn.Conv2d(self.width, self.width, 1)
            self.fc1 = nn.Linear(self.width, 16)
            self.fc2 = nn.Linear(16, 1)

        def forward(self, x):
            grid = self.get_grid(x.shape, x.device)
            x = torch.cat((x, grid), dim=-1)
            x = self.fc0(x)
            x = x.permute(0, 3, 1, 2)
            x = F.gelu(self.conv0(x) + self.w0(x))
            x = self.conv1(x) + self.w1(x)
            x = x.permute(0, 2, 3, 1)
            x = F.gelu(self.fc1(x))
            return self.fc2(x)

        def get_grid(self, shape, device):
            batchsize, size_x, size_y = shape[0], shape[1], shape[2]
            gridx = torch.tensor(np.linspace(0, 1, size_x), dtype=torch.float)
            gridx = gridx.reshape(1, size_x, 1, 1).repeat([batchsize, 1, size_y, 1])
            gridy = torch.linspace(0, 1, size_y)
            gridy = gridy.reshape(1, 1, size_y, 1).repeat([batchsize, size_x, 1, 1])
            return torch.cat((gridx, gridy), dim=-1).to(device)

    class LpLoss(object):
        def __init__(self, d=2, p=2, size_average=True, reduction=True):
            self.d, self.p, self.reduction, self.size_average = d, p, reduction, size_average

        def rel(self, x, y):
            num_examples = x.size()[0]
            diff_norms = torch.norm(x.reshape(num_examples, -1) - y.reshape(num_examples, -1), self.p, 1)
            y_norms = torch.norm(y.reshape(num_examples, -1), self.p, 1)
            if self.reduction:
                if self.size_average:
                    return torch.mean(diff_norms / y_norms)
                return torch.sum(diff_norms / y_norms)
            return diff_norms / y_norms

        def __call__(self, x, y):
            return self.rel(x, y)

    torch.manual_seed(0)
    model = FNO2d(modes, modes, width)
    w = model.conv0.weights1.detach()
    result = {"weights_dtype": str(w.dtype).split(".")[-1], "weights_shape": list(w.shape),
              "own": {"rand_range": [float(w.real.min()), float(w.imag.max())]},
              "count": sum(p.numel() for p in model.parameters())}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    myloss = LpLoss(size_average=False)
    rng = np.random.default_rng(0)
    losses = []
    for ep in range(steps):
        x = torch.from_numpy(rng.standard_normal((2, size, size, 1)).astype(np.float32))
        y = torch.from_numpy(rng.standard_normal((2, size, size, 1)).astype(np.float32))
        optimizer.zero_grad()
        out = model(x).reshape(2, size, size)
        l2 = myloss(out.view(2, -1), y.view(2, -1))
        l2.backward()
        optimizer.step()
        scheduler.step()
        losses.append(l2.item())
    result["losses"] = losses
    result["grad_w"] = numpy_of(model.conv1.weights2.grad)
    result["state"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    with torch.no_grad():
        result["pred"] = numpy_of(model(torch.from_numpy(rng.standard_normal((1, size, size, 1)).astype(np.float32))))
    return result


def test_fno2d_complex_spectral_weights():
    ref, got = compare_program(fno, rtol=1e-3, atol=1e-5)
    assert got["weights_dtype"] == "complex64"
    lo, hi = got["own"]["rand_range"]
    assert 0 <= lo and hi < 1 / 36

"""Blealtan/efficient-kan's src/efficient_kan/kan.py and its examples/mnist.py training loop on
random arrays in place of MNIST: KANLinear's parameters made by the legacy
torch.nn.Parameter(torch.Tensor(out, in)) constructor, the grid buffer from
torch.arange(...).expand(in_features, -1).contiguous(), B-spline bases by the Cox-de Boor recursion
on broadcast comparisons ((x >= grid[:, :-1]) & (x < grid[:, 1:])).to(x.dtype), spline weights
initialised under torch.no_grad() from noise by curve2coeff's batched torch.linalg.lstsq(A, B).solution,
kaiming_uniform_ with a = sqrt(5) * scale, the spline weight scaled by spline_scaler.unsqueeze(-1),
update_grid (@torch.no_grad: torch.bmm, torch.sort(x, dim=0)[0], indexing by
torch.linspace(..., dtype=torch.int64), torch.concatenate, self.grid.copy_(grid.T)) and the
regularization loss (abs().mean(-1), p * p.log()); AdamW with weight decay and ExponentialLR as the
example trains, then the eval loop's accuracy."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def kan_module(torch):
    """kan.py as published, for the library `torch`."""
    F = torch.nn.functional

    class KANLinear(torch.nn.Module):
        def __init__(
            self,
            in_features,
            out_features,
            grid_size=5,
            spline_order=3,
            scale_noise=0.1,
            scale_base=1.0,
            scale_spline=1.0,
            enable_standalone_scale_spline=True,
            base_activation=torch.nn.SiLU,
            grid_eps=0.02,
            grid_range=[-1, 1],
        ):
            super(KANLinear, self).__init__()
            self.in_features = in_features
            self.out_features = out_features
            self.grid_size = grid_size
            self.spline_order = spline_order

            h = (grid_range[1] - grid_range[0]) / grid_size
            grid = (
                (
                    torch.arange(-spline_order, grid_size + spline_order + 1) * h
                    + grid_range[0]
                )
                .expand(in_features, -1)
                .contiguous()
            )
            self.register_buffer("grid", grid)

            self.base_weight = torch.nn.Parameter(torch.Tensor(out_features, in_features))
            self.spline_weight = torch.nn.Parameter(
                torch.Tensor(out_features, in_features, grid_size + spline_order)
            )
            if enable_standalone_scale_spline:
                self.spline_scaler = torch.nn.Parameter(
                    torch.Tensor(out_features, in_features)
                )

            self.scale_noise = scale_noise
            self.scale_base = scale_base
            self.scale_spline = scale_spline
            self.enable_standalone_scale_spline = enable_standalone_scale_spline
            self.base_activation = base_activation()
            self.grid_eps = grid_eps

            self.reset_parameters()

        def reset_parameters(self):
            torch.nn.init.kaiming_uniform_(self.base_weight, a=math.sqrt(5) * self.scale_base)
            with torch.no_grad():
                noise = (
                    (
                        torch.rand(self.grid_size + 1, self.in_features, self.out_features)
                        - 1 / 2
                    )
                    * self.scale_noise
                    / self.grid_size
                )
                self.spline_weight.data.copy_(
                    (self.scale_spline if not self.enable_standalone_scale_spline else 1.0)
                    * self.curve2coeff(
                        self.grid.T[self.spline_order : -self.spline_order],
                        noise,
                    )
                )
                if self.enable_standalone_scale_spline:
                    # torch.nn.init.constant_(self.spline_scaler, self.scale_spline)
                    torch.nn.init.kaiming_uniform_(self.spline_scaler, a=math.sqrt(5) * self.scale_spline)

        def b_splines(self, x):
            assert x.dim() == 2 and x.size(1) == self.in_features

            grid = (
                self.grid
            )  # (in_features, grid_size + 2 * spline_order + 1)
            x = x.unsqueeze(-1)
            bases = ((x >= grid[:, :-1]) & (x < grid[:, 1:])).to(x.dtype)
            for k in range(1, self.spline_order + 1):
                bases = (
                    (x - grid[:, : -(k + 1)])
                    / (grid[:, k:-1] - grid[:, : -(k + 1)])
                    * bases[:, :, :-1]
                ) + (
                    (grid[:, k + 1 :] - x)
                    / (grid[:, k + 1 :] - grid[:, 1:(-k)])
                    * bases[:, :, 1:]
                )

            assert bases.size() == (
                x.size(0),
                self.in_features,
                self.grid_size + self.spline_order,
            )
            return bases.contiguous()

        def curve2coeff(self, x, y):
            assert x.dim() == 2 and x.size(1) == self.in_features
            assert y.size() == (x.size(0), self.in_features, self.out_features)

            A = self.b_splines(x).transpose(
                0, 1
            )  # (in_features, batch_size, grid_size + spline_order)
            B = y.transpose(0, 1)  # (in_features, batch_size, out_features)
            solution = torch.linalg.lstsq(
                A, B
            ).solution  # (in_features, grid_size + spline_order, out_features)
            result = solution.permute(
                2, 0, 1
            )  # (out_features, in_features, grid_size + spline_order)

            assert result.size() == (
                self.out_features,
                self.in_features,
                self.grid_size + self.spline_order,
            )
            return result.contiguous()

        @property
        def scaled_spline_weight(self):
            return self.spline_weight * (
                self.spline_scaler.unsqueeze(-1)
                if self.enable_standalone_scale_spline
                else 1.0
            )

        def forward(self, x):
            assert x.dim() == 2 and x.size(1) == self.in_features

            base_output = F.linear(self.base_activation(x), self.base_weight)
            spline_output = F.linear(
                self.b_splines(x).view(x.size(0), -1),
                self.scaled_spline_weight.view(self.out_features, -1),
            )
            return base_output + spline_output

        @torch.no_grad()
        def update_grid(self, x, margin=0.01):
            assert x.dim() == 2 and x.size(1) == self.in_features
            batch = x.size(0)

            splines = self.b_splines(x)  # (batch, in, coeff)
            splines = splines.permute(1, 0, 2)  # (in, batch, coeff)
            orig_coeff = self.scaled_spline_weight  # (out, in, coeff)
            orig_coeff = orig_coeff.permute(1, 2, 0)  # (in, coeff, out)
            unreduced_spline_output = torch.bmm(splines, orig_coeff)  # (in, batch, out)
            unreduced_spline_output = unreduced_spline_output.permute(
                1, 0, 2
            )  # (batch, in, out)

            # sort each channel individually to collect data distribution
            x_sorted = torch.sort(x, dim=0)[0]
            grid_adaptive = x_sorted[
                torch.linspace(
                    0, batch - 1, self.grid_size + 1, dtype=torch.int64, device=x.device
                )
            ]

            uniform_step = (x_sorted[-1] - x_sorted[0] + 2 * margin) / self.grid_size
            grid_uniform = (
                torch.arange(
                    self.grid_size + 1, dtype=torch.float32, device=x.device
                ).unsqueeze(1)
                * uniform_step
                + x_sorted[0]
                - margin
            )

            grid = self.grid_eps * grid_uniform + (1 - self.grid_eps) * grid_adaptive
            grid = torch.concatenate(
                [
                    grid[:1]
                    - uniform_step
                    * torch.arange(self.spline_order, 0, -1, device=x.device).unsqueeze(1),
                    grid,
                    grid[-1:]
                    + uniform_step
                    * torch.arange(1, self.spline_order + 1, device=x.device).unsqueeze(1),
                ],
                dim=0,
            )

            self.grid.copy_(grid.T)
            self.spline_weight.data.copy_(self.curve2coeff(x, unreduced_spline_output))

        def regularization_loss(self, regularize_activation=1.0, regularize_entropy=1.0):
            l1_fake = self.spline_weight.abs().mean(-1)
            regularization_loss_activation = l1_fake.sum()
            p = l1_fake / regularization_loss_activation
            regularization_loss_entropy = -torch.sum(p * p.log())
            return (
                regularize_activation * regularization_loss_activation
                + regularize_entropy * regularization_loss_entropy
            )

    class KAN(torch.nn.Module):
        def __init__(
            self,
            layers_hidden,
            grid_size=5,
            spline_order=3,
            scale_noise=0.1,
            scale_base=1.0,
            scale_spline=1.0,
            base_activation=torch.nn.SiLU,
            grid_eps=0.02,
            grid_range=[-1, 1],
        ):
            super(KAN, self).__init__()
            self.grid_size = grid_size
            self.spline_order = spline_order

            self.layers = torch.nn.ModuleList()
            for in_features, out_features in zip(layers_hidden, layers_hidden[1:]):
                self.layers.append(
                    KANLinear(
                        in_features,
                        out_features,
                        grid_size=grid_size,
                        spline_order=spline_order,
                        scale_noise=scale_noise,
                        scale_base=scale_base,
                        scale_spline=scale_spline,
                        base_activation=base_activation,
                        grid_eps=grid_eps,
                        grid_range=grid_range,
                    )
                )

        def forward(self, x, update_grid=False):
            for layer in self.layers:
                if update_grid:
                    layer.update_grid(x)
                x = layer(x)
            return x

        def regularization_loss(self, regularize_activation=1.0, regularize_entropy=1.0):
            return sum(
                layer.regularization_loss(regularize_activation, regularize_entropy)
                for layer in self.layers
            )

    return KAN


def kan_program(torch, init=None, epochs=2):
    KAN = kan_module(torch)
    nn = torch.nn
    torch.manual_seed(0)
    model = KAN([12, 8, 4])
    # the initial spline weights come from this library's lstsq on its own noise: checked for a fit
    layer = model.layers[0]
    with torch.no_grad():
        pts = layer.grid.T[layer.spline_order: -layer.spline_order]
        fit = torch.einsum("bfg,ofg->bfo", layer.b_splines(pts), layer.spline_weight)
    result = {"nparams": sum(p.numel() for p in model.parameters()), "grid": numpy_of(model.layers[0].grid),
              "keys": sorted(model.state_dict().keys()),
              "own": {"init_fit_range": float(fit.abs().max())}}
    assert float(fit.abs().max()) <= 0.1 / 5 * 0.5 + 1e-4  # the noise's range, interpolated exactly
    start_from(torch, model, init, result)

    rng = np.random.default_rng(0)
    images = rng.uniform(-1, 1, (64, 12)).astype(np.float32)
    labels = rng.integers(0, 4, 64)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)
    criterion = nn.CrossEntropyLoss()
    losses, lrs = [], []
    for epoch in range(epochs):
        model.train()
        for i in range(0, 64, 16):
            x = torch.from_numpy(images[i:i + 16]).view(-1, 12)
            y = torch.from_numpy(labels[i:i + 16])
            optimizer.zero_grad()
            output = model(x)
            loss = criterion(output, y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            output = model(torch.from_numpy(images))
            val_accuracy = (output.argmax(dim=1) == torch.from_numpy(labels)).float().mean().item()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    result.update(losses=losses, lrs=lrs, accuracy=val_accuracy)
    result["reg"] = model.regularization_loss().item()
    # grid update on data outside the initial range, as the README's update_grid=True pass does
    shifted = torch.from_numpy(images * 1.5 + 0.2)
    with torch.no_grad():
        before = model(shifted)
        after = model(shifted, update_grid=True)
    result.update(before=numpy_of(before), after=numpy_of(after), grids=[numpy_of(l.grid) for l in model.layers])
    result["state"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return result


def test_efficient_kan_training_and_grid_update():
    compare_program(kan_program, rtol=2e-3, atol=1e-4)

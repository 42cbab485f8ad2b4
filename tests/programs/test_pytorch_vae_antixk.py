"""AntixK's PyTorch-VAE models/vanilla_vae.py and models/beta_vae.py as published (BetaVAE repeats
VanillaVAE's encoder and decoder in the repository; here it subclasses it and keeps its own
__init__ additions and loss_function), trained by the loop its pytorch-lightning experiment.py runs
(training_step's loss_function(*results, M_N=kld_weight), log_dict of {key: val.item()},
Adam(lr, weight_decay) and ExponentialLR(gamma=scheduler_gamma) stepped per epoch), CelebA
replaced by local 64x64 RGB images in [-1, 1]. What it leans on: encoder blocks of Conv2d(stride=2,
padding=1), BatchNorm2d and LeakyReLU built in a loop of nn.Sequential, torch.flatten(result,
start_dim=1), result.view(-1, 512, 2, 2), hidden_dims.reverse() and ConvTranspose2d(kernel_size=3,
stride=2, padding=1, output_padding=1), the reparameterisation with torch.randn_like(std), the KL
term torch.mean(-0.5 * torch.sum(1 + log_var - mu ** 2 - log_var.exp(), dim=1), dim=0), sample()
with torch.randn(num_samples, latent_dim).to(current_device), BetaVAE's C_max = torch.Tensor(
[max_capacity]) moved by .to(input.device) and torch.clamp(..., 0, self.C_max.data[0]) with a
tensor as the bound, (kld_loss - C).abs(). Randomness from torch.manual_seed (both libraries draw
PyTorch's CPU streams, randn_like included)."""
from typing import List

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of


def celeba_like(n=8):
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (n, 3, 64, 64)).astype(np.float32) * 0.3
    for i in range(n):
        x[i, i % 3, 16:48, 8 * (i % 4):8 * (i % 4) + 24] = 0.8
    return x


def vae_program(torch, init=None, model_name="VanillaVAE"):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    Tensor = torch.Tensor
    torch.manual_seed(1265)

    class BaseVAE(nn.Module):
        def __init__(self) -> None:
            super(BaseVAE, self).__init__()

    class VanillaVAE(BaseVAE):
        def __init__(self, in_channels: int, latent_dim: int, hidden_dims: List = None, **kwargs) -> None:
            super(VanillaVAE, self).__init__()
            self.latent_dim = latent_dim
            modules = []
            if hidden_dims is None:
                hidden_dims = [32, 64, 128, 256, 512]
            # Build Encoder
            for h_dim in hidden_dims:
                modules.append(
                    nn.Sequential(
                        nn.Conv2d(in_channels, out_channels=h_dim,
                                  kernel_size=3, stride=2, padding=1),
                        nn.BatchNorm2d(h_dim),
                        nn.LeakyReLU())
                )
                in_channels = h_dim
            self.encoder = nn.Sequential(*modules)
            self.fc_mu = nn.Linear(hidden_dims[-1] * 4, latent_dim)
            self.fc_var = nn.Linear(hidden_dims[-1] * 4, latent_dim)
            # Build Decoder
            modules = []
            self.decoder_input = nn.Linear(latent_dim, hidden_dims[-1] * 4)
            hidden_dims.reverse()
            for i in range(len(hidden_dims) - 1):
                modules.append(
                    nn.Sequential(
                        nn.ConvTranspose2d(hidden_dims[i],
                                           hidden_dims[i + 1],
                                           kernel_size=3,
                                           stride=2,
                                           padding=1,
                                           output_padding=1),
                        nn.BatchNorm2d(hidden_dims[i + 1]),
                        nn.LeakyReLU())
                )
            self.decoder = nn.Sequential(*modules)
            self.final_layer = nn.Sequential(
                nn.ConvTranspose2d(hidden_dims[-1],
                                   hidden_dims[-1],
                                   kernel_size=3,
                                   stride=2,
                                   padding=1,
                                   output_padding=1),
                nn.BatchNorm2d(hidden_dims[-1]),
                nn.LeakyReLU(),
                nn.Conv2d(hidden_dims[-1], out_channels=3,
                          kernel_size=3, padding=1),
                nn.Tanh())

        def encode(self, input: Tensor) -> List[Tensor]:
            """
            Encodes the input by passing through the encoder network
            and returns the latent codes.
            """
            result = self.encoder(input)
            result = torch.flatten(result, start_dim=1)
            # Split the result into mu and var components
            # of the latent Gaussian distribution
            mu = self.fc_mu(result)
            log_var = self.fc_var(result)
            return [mu, log_var]

        def decode(self, z: Tensor) -> Tensor:
            """
            Maps the given latent codes
            onto the image space.
            """
            result = self.decoder_input(z)
            result = result.view(-1, 512, 2, 2)
            result = self.decoder(result)
            result = self.final_layer(result)
            return result

        def reparameterize(self, mu: Tensor, logvar: Tensor) -> Tensor:
            """
            Reparameterization trick to sample from N(mu, var) from
            N(0,1).
            """
            std = torch.exp(0.5 * logvar)
            eps = torch.randn_like(std)
            return eps * std + mu

        def forward(self, input: Tensor, **kwargs) -> List[Tensor]:
            mu, log_var = self.encode(input)
            z = self.reparameterize(mu, log_var)
            return [self.decode(z), input, mu, log_var]

        def loss_function(self, *args, **kwargs) -> dict:
            """
            Computes the VAE loss function.
            KL(N(\\mu, \\sigma), N(0, 1)) = \\log \\frac{1}{\\sigma} + \\frac{\\sigma^2 + \\mu^2}{2} - \\frac{1}{2}
            """
            recons = args[0]
            input = args[1]
            mu = args[2]
            log_var = args[3]
            kld_weight = kwargs['M_N']  # Account for the minibatch samples from the dataset
            recons_loss = F.mse_loss(recons, input)
            kld_loss = torch.mean(-0.5 * torch.sum(1 + log_var - mu ** 2 - log_var.exp(), dim=1), dim=0)
            loss = recons_loss + kld_weight * kld_loss
            return {'loss': loss, 'Reconstruction_Loss': recons_loss.detach(), 'KLD': -kld_loss.detach()}

        def sample(self, num_samples: int, current_device: int, **kwargs) -> Tensor:
            """
            Samples from the latent space and return the corresponding
            image space map.
            """
            z = torch.randn(num_samples, self.latent_dim)
            z = z.to(current_device)
            samples = self.decode(z)
            return samples

        def generate(self, x: Tensor, **kwargs) -> Tensor:
            """
            Given an input image x, returns the reconstructed image
            """
            return self.forward(x)[0]

    class BetaVAE(VanillaVAE):
        num_iter = 0  # Global static variable to keep track of iterations

        def __init__(self, in_channels: int, latent_dim: int, hidden_dims: List = None, beta: int = 4,
                     gamma: float = 1000., max_capacity: int = 25, Capacity_max_iter: int = 1e5,
                     loss_type: str = 'B', **kwargs) -> None:
            super(BetaVAE, self).__init__(in_channels, latent_dim, hidden_dims)
            self.beta = beta
            self.gamma = gamma
            self.loss_type = loss_type
            self.C_max = torch.Tensor([max_capacity])
            self.C_stop_iter = Capacity_max_iter

        def loss_function(self, *args, **kwargs) -> dict:
            self.num_iter += 1
            recons = args[0]
            input = args[1]
            mu = args[2]
            log_var = args[3]
            kld_weight = kwargs['M_N']  # Account for the minibatch samples from the dataset
            recons_loss = F.mse_loss(recons, input)
            kld_loss = torch.mean(-0.5 * torch.sum(1 + log_var - mu ** 2 - log_var.exp(), dim=1), dim=0)
            if self.loss_type == 'H':  # https://openreview.net/forum?id=Sy2fzU9gl
                loss = recons_loss + self.beta * kld_weight * kld_loss
            elif self.loss_type == 'B':  # https://arxiv.org/pdf/1804.03599.pdf
                self.C_max = self.C_max.to(input.device)
                C = torch.clamp(self.C_max / self.C_stop_iter * self.num_iter, 0, self.C_max.data[0])
                loss = recons_loss + self.gamma * kld_weight * (kld_loss - C).abs()
            else:
                raise ValueError('Undefined loss type.')
            return {'loss': loss}

    # configs/vae.yaml and configs/bbvae.yaml, smaller
    params = {"LR": 0.005, "weight_decay": 0.0, "scheduler_gamma": 0.95, "kld_weight": 0.00025}
    if model_name == "VanillaVAE":
        model = VanillaVAE(in_channels=3, latent_dim=16)
    else:
        model = BetaVAE(in_channels=3, latent_dim=16, loss_type='B', gamma=10.0, max_capacity=25,
                        Capacity_max_iter=10)
    optimizer = optim.Adam(model.parameters(), lr=params['LR'], weight_decay=params['weight_decay'])
    scheduler = optim.lr_scheduler.ExponentialLR(optimizer, gamma=params['scheduler_gamma'])
    images = torch.from_numpy(celeba_like())
    logged = []
    for epoch in range(2):
        for batch_idx in range(2):
            real_img = images[4 * batch_idx:4 * batch_idx + 4]
            labels = torch.zeros(4)
            curr_device = real_img.device
            results = model.forward(real_img, labels=labels)
            train_loss = model.loss_function(*results, M_N=params['kld_weight'], optimizer_idx=0,
                                              batch_idx=batch_idx)
            logged.append({key: val.item() for key, val in train_loss.items()})
            optimizer.zero_grad()
            train_loss['loss'].backward()
            optimizer.step()
        scheduler.step()
    model.eval()
    with torch.no_grad():
        samples = model.sample(4, curr_device)
        recons = model.generate(images[:2])
    # Every encoder and decoder convolution carries a bias into a BatchNorm2d: its gradient is rounding
    # noise, which Adam turns into steps of lr, and the running means (read in eval mode) follow
    # (see split_bias_before_norm): the eval-mode images are compared by shape, the losses loosely.
    return {"logged": [[v for _, v in sorted(d.items())] for d in logged], "lr": scheduler.get_last_lr(),
            "shapes": [list(samples.shape), list(recons.shape)],
            "own": {"samples": numpy_of(samples), "recons": numpy_of(recons)}}


@pytest.mark.parametrize("model_name", ["VanillaVAE", "BetaVAE"])
def test_pytorch_vae(model_name):
    ref, got = compare_program(vae_program, model_name=model_name, rtol=1e-2, atol=1e-3)
    # the first step's losses, before Adam has moved any weight, agree closely
    np.testing.assert_allclose(got["logged"][0], ref["logged"][0], rtol=1e-4, atol=1e-6)

"""WGAN-GP on small images as the much-copied EmilienDupont/wgan-gp repository writes it: a
Generator of Linear + ReLU, a view to (-1, 8 * dim, 4, 4) and ConvTranspose2d + BatchNorm2d +
ReLU ending in Sigmoid; a Discriminator of strided Conv2d + LeakyReLU(0.2) whose features are
x.view(batch_size, -1) into a Linear; a Trainer with Adam(betas=(.5, .9)), critic_iterations,
_critic_train_iteration / _generator_train_iteration, sample_generator from
torch.randn((num_samples, latent_dim)) wrapped in Variable, and _gradient_penalty: alpha =
torch.rand(batch_size, 1, 1, 1).expand_as(real_data), interpolated made a Variable with
requires_grad=True, torch_grad(outputs=..., inputs=..., grad_outputs=torch.ones(...),
create_graph=True, retain_graph=True)[0].view(batch_size, -1), gradients.norm(2, dim=1) logged and
torch.sqrt(torch.sum(gradients ** 2, dim=1) + 1e-12) penalised. A second critic ends in a global
average (adaptive_avg_pool2d to 1x1 straight on the input's channels mixed by a 1x1 conv), whose
input gradient must be a tensor of its own for the .view."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def wgan_gp(torch, init=None, epochs=2, batches=3, batch_size=8, latent_dim=8, dim=4, critic_iterations=2,
            gp_weight=10, pooled_critic=False, channels=1):
    nn = torch.nn
    Variable = torch.autograd.Variable
    torch_grad = torch.autograd.grad
    torch.manual_seed(0)

    class Generator(nn.Module):
        def __init__(self, img_size, latent_dim, dim):
            super(Generator, self).__init__()
            self.dim = dim
            self.latent_dim = latent_dim
            self.img_size = img_size
            self.feature_sizes = (self.img_size[0] // 4, self.img_size[1] // 4)
            self.latent_to_features = nn.Sequential(
                nn.Linear(latent_dim, 8 * dim * self.feature_sizes[0] * self.feature_sizes[1]),
                nn.ReLU()
            )
            self.features_to_image = nn.Sequential(
                nn.ConvTranspose2d(8 * dim, 4 * dim, 4, 2, 1),
                nn.ReLU(),
                nn.BatchNorm2d(4 * dim),
                nn.ConvTranspose2d(4 * dim, self.img_size[2], 4, 2, 1),
                nn.Sigmoid()
            )

        def forward(self, input_data):
            # Map latent into appropriate size for transposed convolutions
            x = self.latent_to_features(input_data)
            # Reshape
            x = x.view(-1, 8 * self.dim, self.feature_sizes[0], self.feature_sizes[1])
            # Return generated image
            return self.features_to_image(x)

        def sample_latent(self, num_samples):
            return torch.randn((num_samples, self.latent_dim))

    class Discriminator(nn.Module):
        def __init__(self, img_size, dim):
            super(Discriminator, self).__init__()
            self.img_size = img_size
            self.image_to_features = nn.Sequential(
                nn.Conv2d(self.img_size[2], dim, 4, 2, 1),
                nn.LeakyReLU(0.2),
                nn.Conv2d(dim, 2 * dim, 4, 2, 1),
                nn.LeakyReLU(0.2),
            )
            # 4 convolutions of stride 2, i.e. halving of size everytime
            # So output size will be 8 * (img_size / 2 ^ 4) * (img_size / 2 ^ 4)
            output_size = 2 * dim * (img_size[0] // 4) * (img_size[1] // 4)
            self.features_to_prob = nn.Sequential(
                nn.Linear(output_size, 1),
            )

        def forward(self, input_data):
            batch_size = input_data.size()[0]
            x = self.image_to_features(input_data)
            x = x.view(batch_size, -1)
            return self.features_to_prob(x)

    class PooledCritic(nn.Module):
        """A critic that scores each channel's global average first (as a 1x1-conv head would)."""
        def __init__(self, img_size, dim):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(img_size[2], dim), nn.LeakyReLU(0.2), nn.Linear(dim, 1))

        def forward(self, input_data):
            return self.head(self.pool(input_data))

    img_size = (16, 16, channels)
    generator = Generator(img_size=img_size, latent_dim=latent_dim, dim=dim)
    discriminator = (PooledCritic if pooled_critic else Discriminator)(img_size=img_size, dim=dim)
    models = {"G": generator, "D": discriminator}
    result = {}
    start_from(torch, models, init, result)
    # Initialize optimizers
    lr = 1e-4
    betas = (.5, .9)
    G_optimizer = torch.optim.Adam(generator.parameters(), lr=lr, betas=betas)
    D_optimizer = torch.optim.Adam(discriminator.parameters(), lr=lr, betas=betas)

    class Trainer():
        def __init__(self, generator, discriminator, gen_optimizer, dis_optimizer, gp_weight=10,
                     critic_iterations=5, print_every=50, use_cuda=False):
            self.G = generator
            self.G_opt = gen_optimizer
            self.D = discriminator
            self.D_opt = dis_optimizer
            self.losses = {'G': [], 'D': [], 'GP': [], 'gradient_norm': []}
            self.num_steps = 0
            self.use_cuda = use_cuda
            self.gp_weight = gp_weight
            self.critic_iterations = critic_iterations
            self.print_every = print_every

        def _critic_train_iteration(self, data):
            """ """
            # Get generated data
            batch_size = data.size()[0]
            generated_data = self.sample_generator(batch_size)
            # Calculate probabilities on real and generated data
            data = Variable(data)
            d_real = self.D(data)
            d_generated = self.D(generated_data)
            # Get gradient penalty
            gradient_penalty = self._gradient_penalty(data, generated_data)
            self.losses['GP'].append(gradient_penalty.item())
            # Create total loss and optimize
            self.D_opt.zero_grad()
            d_loss = d_generated.mean() - d_real.mean() + gradient_penalty
            d_loss.backward()
            self.D_opt.step()
            # Record loss
            self.losses['D'].append(d_loss.item())

        def _generator_train_iteration(self, data):
            """ """
            self.G_opt.zero_grad()
            # Get generated data
            batch_size = data.size()[0]
            generated_data = self.sample_generator(batch_size)
            # Calculate loss and optimize
            d_generated = self.D(generated_data)
            g_loss = - d_generated.mean()
            g_loss.backward()
            self.G_opt.step()
            # Record loss
            self.losses['G'].append(g_loss.item())

        def _gradient_penalty(self, real_data, generated_data):
            batch_size = real_data.size()[0]
            # Calculate interpolation
            alpha = torch.rand(batch_size, 1, 1, 1)
            alpha = alpha.expand_as(real_data)
            interpolated = alpha * real_data.data + (1 - alpha) * generated_data.data
            interpolated = Variable(interpolated, requires_grad=True)
            # Calculate probability of interpolated examples
            prob_interpolated = self.D(interpolated)
            # Calculate gradients of probabilities with respect to examples
            gradients = torch_grad(outputs=prob_interpolated, inputs=interpolated,
                                   grad_outputs=torch.ones(prob_interpolated.size()),
                                   create_graph=True, retain_graph=True)[0]
            # Gradients have shape (batch_size, num_channels, img_width, img_height),
            # so flatten to easily take norm per example in batch
            gradients = gradients.view(batch_size, -1)
            self.losses['gradient_norm'].append(gradients.norm(2, dim=1).mean().item())
            # Derivatives of the gradient close to 0 can cause problems because of
            # the square root, so manually calculate norm and add epsilon
            gradients_norm = torch.sqrt(torch.sum(gradients ** 2, dim=1) + 1e-12)
            # Return gradient penalty
            return self.gp_weight * ((gradients_norm - 1) ** 2).mean()

        def _train_epoch(self, data_loader):
            for i, data in enumerate(data_loader):
                self.num_steps += 1
                self._critic_train_iteration(data[0])
                # Only update generator every |critic_iterations| iterations
                if self.num_steps % self.critic_iterations == 0:
                    self._generator_train_iteration(data[0])

        def train(self, data_loader, epochs):
            for epoch in range(epochs):
                self._train_epoch(data_loader)

        def sample_generator(self, num_samples):
            latent_samples = Variable(self.G.sample_latent(num_samples))
            generated_data = self.G(latent_samples)
            return generated_data

    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:16, :16]
    images = np.stack([np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 8.0) for cy, cx in
                       rng.integers(4, 12, (batches * batch_size, 2))]).astype(np.float32)[:, None]
    images = np.concatenate([images, images[:, :, ::-1]], 1)[:, :channels]
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.zeros(len(images)))
    data_loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True)
    trainer = Trainer(generator, discriminator, G_optimizer, D_optimizer, gp_weight=gp_weight,
                      critic_iterations=critic_iterations, use_cuda=False)
    trainer.train(data_loader, epochs)
    generator.eval()
    with torch.no_grad():
        samples = trainer.sample_generator(4)
    result.update(losses=trainer.losses, samples=numpy_of(samples),
                  G={k: numpy_of(v) for k, v in generator.state_dict().items()},
                  D={k: numpy_of(v) for k, v in discriminator.state_dict().items()})
    return result


def test_wgan_gp_conv_critic():
    ref, got = compare_program(wgan_gp, rtol=1e-3, atol=1e-5)
    assert len(ref["losses"]["G"]) == 3 and len(ref["losses"]["gradient_norm"]) == 6


def test_wgan_gp_pooled_critic():
    compare_program(wgan_gp, pooled_critic=True, channels=2, rtol=1e-3, atol=1e-5)

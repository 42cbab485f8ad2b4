"""WGAN-GP on a toy 2-D distribution (eight Gaussians on a ring, as in the paper's gan_toy.py):
the critic's loss carries the gradient penalty, the norm of d critic / d input at points between
real and fake samples, taken with autograd.grad(create_graph=True) so that the penalty is itself
differentiated; several critic steps per generator step, Adam with betas (0.5, 0.9). Then the
same critic steps on images with a convolutional critic."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

LAMBDA = 10.0


def ring_of_gaussians(rng, n):
    angles = rng.integers(0, 8, n) * (np.pi / 4)
    centres = 2 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return (centres + 0.05 * rng.standard_normal((n, 2))).astype(np.float32)


def gradient_penalty(torch, critic, real, fake, alpha):
    """The mean of (|d critic / d x| - 1)^2 at x between real and fake; alpha (B, 1, ...) weighs real."""
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interpolates)
    gradients = torch.autograd.grad(outputs=scores, inputs=interpolates, grad_outputs=torch.ones_like(scores),
                                    create_graph=True, retain_graph=True)[0]
    return ((gradients.view(gradients.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()


def critic_step(torch, critic, optimizer, real, fake, alpha, penalties):
    """One step of the critic on its WGAN loss plus the penalty; appends the penalty, returns the loss."""
    optimizer.zero_grad()
    gp = gradient_penalty(torch, critic, real, fake, alpha)
    d_loss = critic(fake).mean() - critic(real).mean() + LAMBDA * gp
    d_loss.backward()
    optimizer.step()
    penalties.append(gp.item())
    return d_loss.item()


def wgan_gp(torch, init=None, iterations=6, critic_iters=3, batch=64):
    nn = torch.nn
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))
    critic = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
    result = {}
    start_from(torch, {"generator": generator, "critic": critic}, init, result)
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    rng = np.random.default_rng(0)

    def noise():
        return torch.from_numpy(rng.standard_normal((batch, 2)).astype(np.float32))

    d_losses, penalties, g_losses = [], [], []
    for _ in range(iterations):
        for p in critic.parameters():
            p.requires_grad_(True)
        for _ in range(critic_iters):
            real = torch.from_numpy(ring_of_gaussians(rng, batch))
            with torch.no_grad():
                fake = generator(noise())
            alpha = torch.from_numpy(rng.random((batch, 1)).astype(np.float32))
            d_losses.append(critic_step(torch, critic, opt_d, real, fake, alpha, penalties))
        for p in critic.parameters():
            p.requires_grad_(False)  # the generator step needs no critic gradients
        opt_g.zero_grad()
        g_loss = -critic(generator(noise())).mean()
        g_loss.backward()
        opt_g.step()
        g_losses.append(g_loss.item())
    result.update(d_losses=d_losses, penalties=penalties, g_losses=g_losses,
                  generator={k: numpy_of(v) for k, v in generator.named_parameters()},
                  critic={k: numpy_of(v) for k, v in critic.named_parameters()})
    return result


def test_wgan_gradient_penalty_double_backward():
    ref, _ = compare_program(wgan_gp)
    assert all(p >= 0 for p in ref["penalties"])
    assert ref["penalties"][-1] < ref["penalties"][0]  # the critic is pushed towards 1-Lipschitz


def image_critic_steps(torch, init=None, steps=3, batch=16):
    """Critic steps of WGAN-GP on 8x8 images: real ones are blobs, fake ones noise."""
    nn = torch.nn
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, stride=2, padding=1),
                           nn.ReLU(), nn.Flatten(), nn.Linear(16 * 2 * 2, 1))
    result = {}
    start_from(torch, critic, init, result)
    optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    rng = np.random.default_rng(0)
    grid = np.linspace(-1, 1, 8)
    d_losses, penalties = [], []
    for _ in range(steps):
        centres = rng.uniform(-0.5, 0.5, (batch, 2, 1, 1))
        real = np.exp(-((grid[None, None, :] - centres[:, :1]) ** 2 + (grid[None, :, None] - centres[:, 1:]) ** 2) * 4)
        real = torch.from_numpy(real.astype(np.float32))
        fake = torch.from_numpy(rng.random((batch, 1, 8, 8)).astype(np.float32))
        alpha = torch.from_numpy(rng.random((batch, 1, 1, 1)).astype(np.float32))
        d_losses.append(critic_step(torch, critic, optimizer, real, fake, alpha, penalties))
    result.update(d_losses=d_losses, penalties=penalties, critic={k: numpy_of(v) for k, v in critic.named_parameters()})
    return result


def test_wgan_gradient_penalty_conv_critic():
    compare_program(image_critic_steps)

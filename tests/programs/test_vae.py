"""A variational autoencoder (the PyTorch examples' VAE, smaller): an MLP encoder to mu and
logvar, the reparameterization trick, a sigmoid decoder, binary cross-entropy plus the KL term,
Adam. Training feeds the same NumPy noise to both libraries; the noise drawn by randn_like inside
the model and the samples decoded from randn are compared by their statistics."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

PIXELS, LATENT = 16, 4


def make_patterns(n, seed):
    """4x4 binary images: a random row and a random column lit, with flipped pixels."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 4, 4))
    x[np.arange(n), rng.integers(0, 4, n), :] = 1
    x[np.arange(n), :, rng.integers(0, 4, n)] = 1
    noise = rng.random(x.shape) < 0.05
    return np.where(noise, 1 - x, x).reshape(n, PIXELS).astype(np.float32)


def vae(torch, init=None, steps=60, batch=32):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(PIXELS, 32)
            self.fc_mu = nn.Linear(32, LATENT)
            self.fc_logvar = nn.Linear(32, LATENT)
            self.fc3 = nn.Linear(LATENT, 32)
            self.fc4 = nn.Linear(32, PIXELS)

        def encode(self, x):
            h = F.relu(self.fc1(x))
            return self.fc_mu(h), self.fc_logvar(h)

        def reparameterize(self, mu, logvar, eps=None):
            std = torch.exp(0.5 * logvar)
            if eps is None:
                eps = torch.randn_like(std)
            return mu + eps * std

        def decode(self, z):
            return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x, eps=None):
            mu, logvar = self.encode(x)
            return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar

    def loss_function(recon, x, mu, logvar):
        bce = F.binary_cross_entropy(recon, x, reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return bce + kld

    model = VAE()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = make_patterns(steps * batch, seed=0)
    rng = np.random.default_rng(1)
    losses = []
    model.train()
    for step in range(steps):
        x = torch.from_numpy(data[step * batch:(step + 1) * batch])
        eps = torch.from_numpy(rng.standard_normal((batch, LATENT)).astype(np.float32))
        recon, mu, logvar = model(x, eps)
        loss = loss_function(recon, x, mu, logvar)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item() / batch)

    model.eval()
    with torch.no_grad():
        x = torch.from_numpy(make_patterns(64, seed=2))
        mu, logvar = model.encode(x)
        recon = model.decode(mu)
        # The library's own noise: one image encoded 2000 times, standardised back.
        one_mu, one_logvar = mu[:1].expand(2000, LATENT), logvar[:1].expand(2000, LATENT)
        z = model.reparameterize(one_mu, one_logvar)
        standardised = (z - one_mu) / torch.exp(0.5 * one_logvar)
        samples = model.decode(torch.randn(500, LATENT))
    result.update(losses=losses, mu=numpy_of(mu), logvar=numpy_of(logvar), recon=numpy_of(recon),
                  params={k: numpy_of(v) for k, v in model.named_parameters()},
                  own={"standardised": numpy_of(standardised), "samples": numpy_of(samples)})
    return result


def test_vae_training_and_sampling():
    ref, got = compare_program(vae)
    assert np.mean(ref["losses"][-10:]) < np.mean(ref["losses"][:10])  # it learns
    for draws in (ref["own"], got["own"]):
        z = draws["standardised"]
        assert z.shape == (2000, LATENT)
        np.testing.assert_allclose(z.mean(0), 0, atol=0.12)  # 2000 normals: 5 standard errors
        np.testing.assert_allclose(z.std(0), 1, atol=0.08)
        samples = draws["samples"]
        assert samples.shape == (500, PIXELS) and ((samples > 0) & (samples < 1)).all()

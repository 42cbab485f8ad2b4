"""pytorch/examples' vae/main.py as published (the continuous-Bernoulli version), MNIST replaced by
a local dataset with torchvision's interface (ToTensor images in [0, 1], (image, label) items) and
torchvision.utils.save_image by a NumPy grid written with PIL, at a smaller size (96 training and
48 test images, batch 16, two epochs): VAE of fc1/fc21/fc22/fc3/fc4, reparameterize by
torch.randn_like, decode clamped by torch.clamp(min=1e-4, max=1 - 1e-4), cont_bern_log_norm with
torch.where over torch.max of two boolean masks (torch.le, torch.gt), torch.log(torch.tensor(2.0))
and torch.pow Taylor terms, F.binary_cross_entropy(reduction='sum') + NLNC + KLD, DataLoaders with
shuffle=True, the train/test logs, the reconstruction comparison by torch.cat and
recon_batch.view(args.batch_size, 1, 28, 28)[:n], and samples decoded from torch.randn(64, 20).
From the script's seed both libraries draw the same weights, shuffles and noise (PyTorch's CPU
stream), so the logs and the saved images are compared number by number."""
import argparse

import numpy as np

from prog_helpers import captured_run, compare_in_folders, numpy_of, printed_lines
from test_examples_forward_forward import local_mnist


def save_image(tensor, fp, nrow=8, padding=2):
    """torchvision.utils.save_image's grid (images in rows of nrow, `padding` pixels apart), as PNG."""
    from PIL import Image
    images = np.asarray(tensor.detach().cpu().numpy())
    n, _, h, w = images.shape
    rows = -(-n // nrow)
    grid = np.zeros((rows * (h + padding) + padding, nrow * (w + padding) + padding), np.float32)
    for k in range(n):
        r, c = divmod(k, nrow)
        grid[padding + r * (h + padding):padding + r * (h + padding) + h,
             padding + c * (w + padding):padding + c * (w + padding) + w] = images[k, 0]
    Image.fromarray(np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8)).save(fp)


def vae_main(torch, init=None, results=None, epochs=2):
    nn, optim, F = torch.nn, torch.optim, torch.nn.functional
    MNIST = local_mnist(torch, train_size=96, test_size=48)
    to_tensor = None  # transforms.ToTensor(): the local images are tensors in [0, 1] already
    with captured_run(torch, seed=1) as out:
        args = argparse.Namespace(batch_size=16, epochs=epochs, no_cuda=True, seed=1, log_interval=2)
        args.cuda = not args.no_cuda and torch.cuda.is_available()
        torch.manual_seed(args.seed)
        device = torch.device("cuda" if args.cuda else "cpu")
        kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}
        train_loader = torch.utils.data.DataLoader(
            MNIST('../data', train=True, download=True, transform=to_tensor),
            batch_size=args.batch_size, shuffle=True, **kwargs)
        test_loader = torch.utils.data.DataLoader(
            MNIST('../data', train=False, transform=to_tensor),
            batch_size=args.batch_size, shuffle=True, **kwargs)

        class VAE(nn.Module):
            def __init__(self):
                super(VAE, self).__init__()
                self.fc1 = nn.Linear(784, 400)
                self.fc21 = nn.Linear(400, 20)
                self.fc22 = nn.Linear(400, 20)
                self.fc3 = nn.Linear(20, 400)
                self.fc4 = nn.Linear(400, 784)

            def encode(self, x):
                h1 = F.relu(self.fc1(x))
                return self.fc21(h1), self.fc22(h1)

            def reparameterize(self, mu, logvar):
                std = torch.exp(0.5 * logvar)
                eps = torch.randn_like(std)
                return mu + eps * std

            def decode(self, z):
                h3 = F.relu(self.fc3(z))
                return torch.clamp(torch.sigmoid(self.fc4(h3)), min=1e-4, max=1.0 - 1e-4)

            def forward(self, x):
                mu, logvar = self.encode(x.view(-1, 784))
                z = self.reparameterize(mu, logvar)
                return self.decode(z), mu, logvar

        model = VAE().to(device)
        optimizer = optim.Adam(model.parameters(), lr=1e-3)

        def atanh(x):
            return 0.5 * (torch.log(1.0 + x) - torch.log(1.0 - x))

        def cont_bern_log_norm(lam, l_lim=0.49, u_lim=0.51):
            cut_lam = torch.where(torch.max(torch.le(lam, l_lim), torch.gt(lam, u_lim)), lam,
                                  l_lim * torch.ones_like(lam))
            log_norm = torch.log(torch.abs(2.0 * atanh(1 - 2.0 * cut_lam))) - torch.log(torch.abs(1 - 2.0 * cut_lam))
            taylor = (torch.log(torch.tensor(2.0)) + 4.0 / 3.0 * torch.pow(lam - 0.5, 2)
                      + 104.0 / 45.0 * torch.pow(lam - 0.5, 4))
            return torch.where(torch.max(torch.le(lam, l_lim), torch.gt(lam, u_lim)), log_norm, taylor)

        def loss_function(recon_x, x, mu, logvar):
            BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
            NLNC = -torch.sum(cont_bern_log_norm(recon_x))
            KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
            return BCE + NLNC + KLD

        def train(epoch):
            model.train()
            train_loss = 0
            for batch_idx, (data, _) in enumerate(train_loader):
                data = data.to(device)
                optimizer.zero_grad()
                recon_batch, mu, logvar = model(data)
                loss = loss_function(recon_batch, data, mu, logvar)
                loss.backward()
                train_loss += loss.item()
                optimizer.step()
                if batch_idx % args.log_interval == 0:
                    print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                        epoch, batch_idx * len(data), len(train_loader.dataset),
                        100. * batch_idx / len(train_loader),
                        loss.item() / len(data)))
            print('====> Epoch: {} Average loss: {:.4f}'.format(
                epoch, train_loss / len(train_loader.dataset)))

        def test(epoch):
            model.eval()
            test_loss = 0
            with torch.no_grad():
                for i, (data, _) in enumerate(test_loader):
                    data = data.to(device)
                    recon_batch, mu, logvar = model(data)
                    test_loss += loss_function(recon_batch, data, mu, logvar).item()
                    if i == 0:
                        n = min(data.size(0), 8)
                        comparison = torch.cat([data[:n],
                                                recon_batch.view(args.batch_size, 1, 28, 28)[:n]])
                        save_image(comparison.cpu(),
                                   str(results) + '/reconstruction_' + str(epoch) + '.png', nrow=n)
            test_loss /= len(test_loader.dataset)
            print('====> Test set loss: {:.4f}'.format(test_loss))

        for epoch in range(1, args.epochs + 1):
            train(epoch)
            test(epoch)
            with torch.no_grad():
                sample = torch.randn(64, 20).to(device)
                sample = model.decode(sample).cpu()
                save_image(sample.view(64, 1, 28, 28),
                           str(results) + '/sample_' + str(epoch) + '.png')
    from PIL import Image
    images = {f"{kind}_{e}": np.asarray(Image.open(f"{results}/{kind}_{e}.png"), dtype=np.float32)
              for kind in ("reconstruction", "sample") for e in range(1, epochs + 1)}
    return {"printed": printed_lines(out), "own": {"images": images}, "sample": numpy_of(sample),
            "params": {k: numpy_of(v) for k, v in model.named_parameters()}}


def test_vae_example(tmp_path):
    ref, got = compare_in_folders(vae_main, tmp_path, "results", rtol=1e-3, atol=1e-4)
    for name, image in ref["own"]["images"].items():  # a saved pixel is a rounded byte
        np.testing.assert_allclose(got["own"]["images"][name], image, atol=1, err_msg=name)
    printed = got["printed"]
    assert printed[0].startswith("Train Epoch: 1 [0/96 (0%)]\tLoss: ") and len(printed) == 10
    assert printed[-1].startswith("====> Test set loss: ")
    assert got["own"]["images"]["reconstruction_1"].shape == (2 * 30 + 2, 8 * 30 + 2)
    assert got["own"]["images"]["sample_2"].shape == (8 * 30 + 2, 8 * 30 + 2)

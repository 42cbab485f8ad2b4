"""Udacity's deep-learning-v2-pytorch convolutional autoencoders as the solution notebooks write
them, MNIST replaced by local 28x28 images in a Dataset returning (tensor, int) as torchvision's
ToTensor does, randomness from torch.manual_seed (both libraries draw PyTorch's CPU streams): the
ConvAutoencoder of Conv2d(1, 16, 3, padding=1)/Conv2d(16, 4, 3, padding=1) with MaxPool2d(2, 2) and
ConvTranspose2d(4, 16, 2, stride=2)/ConvTranspose2d(16, 1, 2, stride=2) ending in F.sigmoid; the
Upsampling_Solution variant through F.upsample(x, scale_factor=2, mode='nearest') and two more
convolutions; the denoising autoencoder (three encoder convolutions, ConvTranspose2d(8, 8, 3,
stride=2) to 7x7, two more up to 28x28, a Conv2d out), its inputs images + noise_factor *
torch.randn(*images.shape) clipped by np.clip(noisy_imgs, 0., 1.) on the tensor; MSELoss, Adam(lr=
0.001), train_loss += loss.item()*images.size(0) over the epoch, 'Epoch: {} \\tTraining Loss:
{:.6f}' lines, then output.view(batch_size, 1, 28, 28).detach().numpy() of a test batch."""

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def strokes(n, seed):
    rng = np.random.default_rng(seed)
    x = np.zeros((n, 1, 28, 28), np.float32)
    for i in range(n):
        r0, c0 = rng.integers(4, 14, 2)
        x[i, 0, r0:r0 + 10, c0:c0 + 3] = 1.0
        x[i, 0, r0 + 8:r0 + 11, c0:c0 + 10] = 0.8
    return x, rng.integers(0, 10, n)


def autoencoders(torch, init=None, n_epochs=3, batch_size=20):
    nn = torch.nn
    F = torch.nn.functional

    class LocalMNIST(torch.utils.data.Dataset):
        def __init__(self, train):
            self.data, self.targets = strokes(80 if train else 20, 0 if train else 1)

        def __len__(self):
            return len(self.data)

        def __getitem__(self, i):
            return torch.from_numpy(self.data[i]), int(self.targets[i])

    res = {}
    with captured_run(torch) as out:
        num_workers = 0
        train_loader = torch.utils.data.DataLoader(LocalMNIST(True), batch_size=batch_size, num_workers=num_workers)
        test_loader = torch.utils.data.DataLoader(LocalMNIST(False), batch_size=batch_size, num_workers=num_workers)

        class ConvAutoencoder(nn.Module):
            def __init__(self):
                super(ConvAutoencoder, self).__init__()
                self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
                self.conv2 = nn.Conv2d(16, 4, 3, padding=1)
                self.pool = nn.MaxPool2d(2, 2)
                self.t_conv1 = nn.ConvTranspose2d(4, 16, 2, stride=2)
                self.t_conv2 = nn.ConvTranspose2d(16, 1, 2, stride=2)

            def forward(self, x):
                x = F.relu(self.conv1(x))
                x = self.pool(x)
                x = F.relu(self.conv2(x))
                x = self.pool(x)
                x = F.relu(self.t_conv1(x))
                x = F.sigmoid(self.t_conv2(x))
                return x

        class UpsampleAutoencoder(nn.Module):
            def __init__(self):
                super(UpsampleAutoencoder, self).__init__()
                self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
                self.conv2 = nn.Conv2d(16, 4, 3, padding=1)
                self.pool = nn.MaxPool2d(2, 2)
                self.conv4 = nn.Conv2d(4, 16, 3, padding=1)
                self.conv5 = nn.Conv2d(16, 1, 3, padding=1)

            def forward(self, x):
                x = F.relu(self.conv1(x))
                x = self.pool(x)
                x = F.relu(self.conv2(x))
                x = self.pool(x)
                x = F.upsample(x, scale_factor=2, mode='nearest')
                x = F.relu(self.conv4(x))
                x = F.upsample(x, scale_factor=2, mode='nearest')
                x = F.sigmoid(self.conv5(x))
                return x

        class DenoiseAutoencoder(nn.Module):
            def __init__(self):
                super(DenoiseAutoencoder, self).__init__()
                self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
                self.conv2 = nn.Conv2d(32, 16, 3, padding=1)
                self.conv3 = nn.Conv2d(16, 8, 3, padding=1)
                self.pool = nn.MaxPool2d(2, 2)
                self.t_conv1 = nn.ConvTranspose2d(8, 8, 3, stride=2)
                self.t_conv2 = nn.ConvTranspose2d(8, 16, 2, stride=2)
                self.t_conv3 = nn.ConvTranspose2d(16, 32, 2, stride=2)
                self.conv_out = nn.Conv2d(32, 1, 3, padding=1)

            def forward(self, x):
                x = F.relu(self.conv1(x))
                x = self.pool(x)
                x = F.relu(self.conv2(x))
                x = self.pool(x)
                x = F.relu(self.conv3(x))
                x = self.pool(x)
                x = F.relu(self.t_conv1(x))
                x = F.relu(self.t_conv2(x))
                x = F.relu(self.t_conv3(x))
                x = F.sigmoid(self.conv_out(x))
                return x

        for Model, noise_factor in ((ConvAutoencoder, None), (UpsampleAutoencoder, None), (DenoiseAutoencoder, 0.5)):
            model = Model()
            print(model)
            criterion = nn.MSELoss()
            optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
            losses = []
            for epoch in range(1, n_epochs + 1):
                train_loss = 0.0
                for data in train_loader:
                    images, _ = data
                    if noise_factor is not None:
                        noisy_imgs = images + noise_factor * torch.randn(*images.shape)
                        noisy_imgs = np.clip(noisy_imgs, 0., 1.)
                        optimizer.zero_grad()
                        outputs = model(noisy_imgs)
                    else:
                        optimizer.zero_grad()
                        outputs = model(images)
                    loss = criterion(outputs, images)
                    loss.backward()
                    optimizer.step()
                    train_loss += loss.item() * images.size(0)
                train_loss = train_loss / len(train_loader)
                losses.append(train_loss)
                print('Epoch: {} \tTraining Loss: {:.6f}'.format(epoch, train_loss))
            dataiter = iter(test_loader)
            images, labels = next(dataiter)
            if noise_factor is not None:
                noisy_imgs = images + noise_factor * torch.randn(*images.shape)
                noisy_imgs = np.clip(noisy_imgs, 0., 1.)
                res["noisy_type"] = type(noisy_imgs).__name__
                output = model(noisy_imgs)
                noisy_imgs = noisy_imgs.numpy()
            else:
                output = model(images)
            images = images.numpy()
            output = output.view(batch_size, 1, 28, 28)
            output = output.detach().numpy()
            res[Model.__name__] = {"losses": losses, "output": output, "images": images}
    res["printed"] = printed_lines(out)
    return res


def test_udacity_conv_upsample_denoise_autoencoders():
    ref, got = compare_program(autoencoders, rtol=1e-3, atol=1e-4)
    assert got["noisy_type"] == ref["noisy_type"] == "Tensor"
    assert got["ConvAutoencoder"]["losses"][-1] < got["ConvAutoencoder"]["losses"][0]

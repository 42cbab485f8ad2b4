"""Super-resolution in the style of the PyTorch examples' super_resolution: an ESPCN-like net of
Conv2d + ReLU layers ending in a Conv2d to upscale**2 channels and nn.PixelShuffle, weights drawn
by init.orthogonal_ with calculate_gain('relu'); low-resolution inputs made by F.avg_pool2d from
the targets, MSELoss, Adam, PSNR by 10*log10(1/mse); the upscaled image checked against
F.pixel_unshuffle's inverse, and the Y channel path with clamp/round/byte of the output image."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

UPSCALE = 2


def smooth_images(rng, n, side=12):
    r, c = np.meshgrid(np.linspace(0, 1, side), np.linspace(0, 1, side), indexing="ij")
    f = rng.uniform(1, 4, (n, 2))
    x = 0.5 + 0.5 * np.sin(f[:, :1, None] * np.pi * r + f[:, 1:, None] * np.pi * c)
    return x[:, None].astype(np.float32)


def super_resolution(torch, init=None, steps=8, batch=6):
    nn, F, init_ = torch.nn, torch.nn.functional, torch.nn.init
    torch.manual_seed(123)

    class Net(nn.Module):
        def __init__(self, upscale_factor):
            super().__init__()
            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
            self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
            self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
            self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
            self._initialize_weights()

        def forward(self, x):
            x = self.relu(self.conv1(x))
            x = self.relu(self.conv2(x))
            x = self.relu(self.conv3(x))
            return self.pixel_shuffle(self.conv4(x))

        def _initialize_weights(self):
            init_.orthogonal_(self.conv1.weight, init_.calculate_gain("relu"))
            init_.orthogonal_(self.conv2.weight, init_.calculate_gain("relu"))
            init_.orthogonal_(self.conv3.weight, init_.calculate_gain("relu"))
            init_.orthogonal_(self.conv4.weight)

    model = Net(upscale_factor=UPSCALE)
    # orthogonal_ of the library's own draw: W W^T = gain^2 I over the flattened rows
    w = model.conv2.weight.detach().reshape(16, -1)
    result = {"own": {"gram": numpy_of(w @ w.t())}}
    start_from(torch, model, init, result)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    losses, psnrs = [], []
    for _ in range(steps):
        target = torch.from_numpy(smooth_images(rng, batch))
        input = F.avg_pool2d(target, UPSCALE)
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        target = torch.from_numpy(smooth_images(rng, 4))
        input = F.avg_pool2d(target, UPSCALE)
        prediction = model(input)
        mse = criterion(prediction, target)
        psnrs.append(10 * math.log10(1 / mse.item()))
        features = model.conv4(model.relu(model.conv3(model.relu(model.conv2(model.relu(model.conv1(input)))))))
        unshuffled = F.pixel_unshuffle(prediction, UPSCALE)
        out_img_y = prediction[0].detach().numpy()
        out_img_y *= 255.0
        out_img_y = out_img_y.clip(0, 255)
        as_bytes = (prediction[0, 0] * 255).clamp(0, 255).round().to(torch.uint8)
    result.update(losses=losses, psnr=psnrs, prediction=numpy_of(prediction), y=np.uint8(out_img_y[0]),
                  bytes=numpy_of(as_bytes), roundtrip=bool(torch.equal(unshuffled, features)))
    return result


def test_super_resolution_pixel_shuffle():
    ref, got = compare_program(super_resolution)
    assert got["roundtrip"] and ref["roundtrip"]
    np.testing.assert_allclose(got["own"]["gram"], 2 * np.eye(16), atol=1e-5)  # gain('relu')**2

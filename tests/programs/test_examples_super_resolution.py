"""pytorch/examples' super_resolution (model.py, data.py/dataset.py, main.py, super_resolve.py) as
published, run as a script whose `torch` is the library named by PROGRAM_TORCH: BSDS300's download
replaced by small JPEG-free PNG images written here, torchvision's CenterCrop/Resize/ToTensor by
PIL stand-ins of the same behaviour (Resize is PIL's bicubic, as torchvision's on PIL images), and
smaller sizes (8 training and 4 test images of 64x64, crop 60, upscale 3, batch 4, two epochs,
one DataLoader worker). model.py: Net of four Conv2d with tuple kernel/stride/padding, nn.ReLU and
nn.PixelShuffle, weights by init.orthogonal_(w, init.calculate_gain('relu')); dataset.py:
DatasetFromFolder loading each image's Y channel by Image.open(...).convert('YCbCr').split();
main.py: print(opt), DataLoader(num_workers=..., shuffle=True), MSELoss, Adam(lr=0.01), the epoch
logs, PSNR by 10 * log10(1 / mse.item()), checkpoints of the whole model by torch.save(model,
path); super_resolve.py: torch.load(path, weights_only=False) of that model, ToTensor(y).view(1, -1,
y.size[1], y.size[0]), out[0].detach().numpy() * 255 clipped into an 'L' image merged with bicubic
Cb/Cr and saved. Both libraries' runs (same seed, shuffles and initial weights) are compared
line by line and pixel by pixel."""
import argparse
import importlib
import os
import re
import sys
from math import log10
from pathlib import Path

import numpy as np
from PIL import Image

from prog_helpers import Printed, assert_same_results, run_script

torch = importlib.import_module(os.environ.get("PROGRAM_TORCH", "minitorch"))
nn = torch.nn
init = torch.nn.init
optim = torch.optim
DataLoader = torch.utils.data.DataLoader


# ---- torchvision.transforms on PIL images, as far as data.py uses them ----

class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class CenterCrop:
    def __init__(self, size):
        self.size = size

    def __call__(self, img):
        left, top = int(round((img.size[0] - self.size) / 2.0)), int(round((img.size[1] - self.size) / 2.0))
        return img.crop((left, top, left + self.size, top + self.size))


class Resize:
    def __init__(self, size):
        self.size = size

    def __call__(self, img):
        return img.resize((self.size, self.size), Image.BICUBIC)


class ToTensor:
    def __call__(self, pic):
        return torch.from_numpy(np.asarray(pic, dtype=np.float32) / 255.0).unsqueeze(0)


# ---- model.py ----

class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


# ---- dataset.py and data.py ----

def is_image_file(filename):
    return any(filename.endswith(extension) for extension in [".png", ".jpg", ".jpeg"])


def load_img(filepath):
    img = Image.open(filepath).convert('YCbCr')
    y, _, _ = img.split()
    return y


class DatasetFromFolder(torch.utils.data.Dataset):
    def __init__(self, image_dir, input_transform=None, target_transform=None):
        super(DatasetFromFolder, self).__init__()
        self.image_filenames = [os.path.join(image_dir, x) for x in sorted(os.listdir(image_dir)) if is_image_file(x)]
        self.input_transform = input_transform
        self.target_transform = target_transform

    def __getitem__(self, index):
        input = load_img(self.image_filenames[index])
        target = input.copy()
        if self.input_transform:
            input = self.input_transform(input)
        if self.target_transform:
            target = self.target_transform(target)
        return input, target

    def __len__(self):
        return len(self.image_filenames)


def download_bsd300(dest="dataset"):
    """The BSDS300 images, here drawn: smooth shapes on gradients, as RGB PNGs."""
    output_image_dir = os.path.join(dest, "BSDS300/images")
    for split, n, seed in (("train", 8, 0), ("test", 4, 1)):
        os.makedirs(os.path.join(output_image_dir, split), exist_ok=True)
        rng = np.random.default_rng(seed)
        yy, xx = np.mgrid[0:64, 0:64] / 63.0
        for k in range(n):
            a, b, c = rng.uniform(0.2, 1, 3)
            r = np.hypot(xx - rng.uniform(0.2, 0.8), yy - rng.uniform(0.2, 0.8))
            img = np.stack([a * xx, b * yy, c * (r < rng.uniform(0.2, 0.4))], -1) + 0.05 * rng.random((64, 64, 3))
            Image.fromarray((np.clip(img, 0, 1) * 255).astype(np.uint8)).save(
                os.path.join(output_image_dir, split, f"{k}.png"))
    return output_image_dir


def calculate_valid_crop_size(crop_size, upscale_factor):
    return crop_size - (crop_size % upscale_factor)


def input_transform(crop_size, upscale_factor):
    return Compose([CenterCrop(crop_size), Resize(crop_size // upscale_factor), ToTensor()])


def target_transform(crop_size):
    return Compose([CenterCrop(crop_size), ToTensor()])


def get_set(split, upscale_factor):
    """data.py's get_training_set and get_test_set (the same but for the folder)."""
    root_dir = download_bsd300()
    image_dir = os.path.join(root_dir, split)
    crop_size = calculate_valid_crop_size(61, upscale_factor)
    return DatasetFromFolder(image_dir, input_transform=input_transform(crop_size, upscale_factor),
                             target_transform=target_transform(crop_size))


def get_training_set(upscale_factor):
    return get_set("train", upscale_factor)


def get_test_set(upscale_factor):
    return get_set("test", upscale_factor)


# ---- main.py ----

def main():
    opt = argparse.Namespace(upscale_factor=3, batchSize=4, testBatchSize=2, nEpochs=2, lr=0.01, cuda=False,
                             mps=False, device='cpu', threads=1, seed=123)
    print(opt)
    if opt.cuda and not torch.cuda.is_available():
        raise Exception("No GPU found, please run without --cuda")
    if not opt.mps and torch.backends.mps.is_available():
        raise Exception("Found mps device, please run with --mps to enable macOS GPU")
    torch.manual_seed(opt.seed)
    use_mps = opt.mps and torch.backends.mps.is_available()
    if opt.cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device(opt.device)
    print('===> Loading datasets')
    train_set = get_training_set(opt.upscale_factor)
    test_set = get_test_set(opt.upscale_factor)
    training_data_loader = DataLoader(dataset=train_set, num_workers=opt.threads, batch_size=opt.batchSize,
                                      shuffle=True)
    testing_data_loader = DataLoader(dataset=test_set, num_workers=opt.threads, batch_size=opt.testBatchSize,
                                     shuffle=False)
    print('===> Building model')
    model = Net(upscale_factor=opt.upscale_factor).to(device)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=opt.lr)

    def train(epoch):
        epoch_loss = 0
        for iteration, batch in enumerate(training_data_loader, 1):
            input, target = batch[0].to(device), batch[1].to(device)
            optimizer.zero_grad()
            loss = criterion(model(input), target)
            epoch_loss += loss.item()
            loss.backward()
            optimizer.step()
            print("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(epoch, iteration, len(training_data_loader), loss.item()))
        print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(epoch, epoch_loss / len(training_data_loader)))

    def test():
        avg_psnr = 0
        with torch.no_grad():
            for batch in testing_data_loader:
                input, target = batch[0].to(device), batch[1].to(device)
                prediction = model(input)
                mse = criterion(prediction, target)
                psnr = 10 * log10(1 / mse.item())
                avg_psnr += psnr
        print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))

    def checkpoint(epoch):
        model_out_path = "model_epoch_{}.pth".format(epoch)
        torch.save(model, model_out_path)
        print("Checkpoint saved to {}".format(model_out_path))

    for epoch in range(1, opt.nEpochs + 1):
        train(epoch)
        test()
        checkpoint(epoch)


# ---- super_resolve.py ----

def super_resolve():
    opt = argparse.Namespace(input_image="dataset/BSDS300/images/test/0.png", model="model_epoch_2.pth",
                             output_filename="out.png", cuda=False)
    print(opt)
    img = Image.open(opt.input_image).convert('YCbCr')
    y, cb, cr = img.split()
    model = torch.load(opt.model, weights_only=False)
    img_to_tensor = ToTensor()
    input = img_to_tensor(y).view(1, -1, y.size[1], y.size[0])
    if opt.cuda:
        model = model.cuda()
        input = input.cuda()
    out = model(input)
    out = out.cpu()
    out_img_y = out[0].detach().numpy()
    out_img_y *= 255.0
    out_img_y = out_img_y.clip(0, 255)
    out_img_y = Image.fromarray(np.uint8(out_img_y[0]), mode='L')
    out_img_cb = cb.resize(out_img_y.size, Image.BICUBIC)
    out_img_cr = cr.resize(out_img_y.size, Image.BICUBIC)
    out_img = Image.merge('YCbCr', [out_img_y, out_img_cb, out_img_cr]).convert('RGB')
    out_img.save(opt.output_filename)
    print('output image saved to ', opt.output_filename)


if __name__ == '__main__':
    main()
    super_resolve()


# ---- the test ----

def run(library, folder):
    folder.mkdir()
    out = run_script([Path(__file__).resolve()], folder, PROGRAM_TORCH=library).stdout
    lines = Printed(re.sub(r"\b(minitorch|torch)\b", "torch", out).splitlines())
    return {"printed": lines, "image": np.asarray(Image.open(folder / "out.png"), dtype=np.float32)}


def test_super_resolution_example(tmp_path):
    import pytest
    pytest.importorskip("torch")
    ref, got = run("torch", tmp_path / "pt"), run("minitorch", tmp_path / "mt")
    image_ref, image_got = ref.pop("image"), got.pop("image")
    assert_same_results(got, ref, rtol=1e-3, atol=1e-4)
    assert image_got.shape == (64 * 3, 64 * 3, 3)  # the whole 64x64 test image, upscaled
    np.testing.assert_allclose(image_got, image_ref, atol=1)  # bytes of the same image, rounding apart
    assert got["printed"][-1] == "output image saved to  out.png"

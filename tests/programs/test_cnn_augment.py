"""A small CNN classifies 10x10 images of bars, crosses and rings, trained with Adam on random
horizontal flips and random 8x8 crops (centre crops at evaluation); a bias-free convolution feeds
BatchNorm2d (a bias there has no gradient but rounding, which Adam would amplify), max pooling.
The training run draws its flips and crops from NumPy so that both libraries see the same batches;
the same augmentation drawn from each library's generator is checked for structure."""
import numpy as np
import pytest

import minitorch
from prog_helpers import compare_program, numpy_of, start_from

SIZE, CROP = 10, 8


def make_images(n, seed):
    """(n, 1, 10, 10) float32 images of four classes, with noise; and their int64 labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, size=n)
    images = 0.3 * rng.standard_normal((n, 1, SIZE, SIZE))
    for img, label in zip(images, labels):
        r, c = rng.integers(3, 7, size=2)
        if label in (0, 2):
            img[0, r, 1:-1] += 1  # a horizontal bar (and the cross's)
        if label in (1, 2):
            img[0, 1:-1, c] += 1  # a vertical bar
        if label == 3:
            img[0, 2:8, 2:8] += 1
            img[0, 3:7, 3:7] -= 1  # a ring
    return images.astype(np.float32), labels.astype(np.int64)


def flip_crop(torch, images, flip, top, left):
    """Each image flipped left-right where flip says, then cropped to CROP x CROP at (top, left)."""
    out = []
    for img, f, t, l in zip(images, flip.tolist(), top.tolist(), left.tolist()):
        if f:
            img = torch.flip(img, dims=[-1])
        out.append(img[:, t:t + CROP, l:l + CROP])
    return torch.stack(out)


def torch_draws(torch, n):
    """Flips and crop offsets as a PyTorch user draws them (RandomHorizontalFlip, RandomCrop)."""
    return torch.rand(n) < 0.5, torch.randint(0, SIZE - CROP + 1, (n,)), torch.randint(0, SIZE - CROP + 1, (n,))


def numpy_draws(rng, n):
    return rng.random(n) < 0.5, rng.integers(0, SIZE - CROP + 1, n), rng.integers(0, SIZE - CROP + 1, n)


def cnn_classifier(torch, init=None, steps=30, batch=32):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 4),
    )
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    images, labels = make_images(steps * batch, seed=0)
    rng = np.random.default_rng(1)
    losses = []
    model.train()
    for step in range(steps):
        x = torch.from_numpy(images[step * batch:(step + 1) * batch])
        y = torch.from_numpy(labels[step * batch:(step + 1) * batch])
        x = flip_crop(torch, x, *numpy_draws(rng, batch))
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    model.eval()
    test_images, test_labels = make_images(128, seed=2)
    margin = (SIZE - CROP) // 2
    with torch.no_grad():
        logits = model(torch.from_numpy(test_images)[:, :, margin:margin + CROP, margin:margin + CROP])
    accuracy = (logits.argmax(1) == torch.from_numpy(test_labels)).float().mean().item()
    result.update(losses=losses, logits=numpy_of(logits), accuracy=accuracy, state={
        k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_cnn_classifier_flip_crop_training():
    ref, got = compare_program(cnn_classifier)
    assert ref["accuracy"] > 0.5


@pytest.mark.parametrize("lib", ["minitorch", "torch"])
def test_cnn_flip_crop_drawn_by_the_library(lib):
    torch = minitorch if lib == "minitorch" else pytest.importorskip("torch")
    images, _ = make_images(400, seed=3)
    torch.manual_seed(0)
    flip, top, left = torch_draws(torch, len(images))
    out = numpy_of(flip_crop(torch, torch.from_numpy(images), flip, top, left))
    assert out.shape == (400, 1, CROP, CROP)
    flip, top, left = numpy_of(flip), numpy_of(top), numpy_of(left)
    for img, o, f, t, l in zip(images, out, flip, top, left):
        np.testing.assert_array_equal(o, (img[..., ::-1] if f else img)[:, t:t + CROP, l:l + CROP])
    assert 0.4 < flip.mean() < 0.6  # 400 fair coins: 4 standard errors either side
    assert set(top.tolist()) == set(left.tolist()) == {0, 1, 2}

"""A small convolutional network, written as PyTorch code: `import minitorch as torch` is the only
change.

Conv2d -> ReLU -> MaxPool2d -> Conv2d -> ReLU -> AdaptiveAvgPool2d -> Flatten -> Linear, run on a
batch of 8 random 3x32x32 images. Run: python examples/cnn.py
"""
import minitorch as torch
from minitorch import nn
from minitorch._journey import format_tree, record

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d((1, 1)),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


model = SmallCNN()
print(model)

images = torch.randn(8, 3, 32, 32)
with torch.no_grad():
    logits = model(images)
print("input", tuple(images.shape), "-> logits", tuple(logits.shape))
assert tuple(logits.shape) == (8, 10)

# The path of the first convolution: im2col and one sgemm per image, in OpenBLAS.
_, events = record(model.features[0], images[:2])
print(format_tree(events))

"""Fine-tuning the last layer in the style of the PyTorch transfer-learning tutorial: a small
ResNet-like backbone (BasicBlock with downsample, BatchNorm2d, AdaptiveAvgPool2d), its parameters
frozen with requires_grad = False, model.fc replaced by a new Linear using fc.in_features; a
train/val loop with torch.set_grad_enabled(phase == 'train'), torch.max(outputs, 1),
running_corrects as a tensor made .double() for the accuracy, copy.deepcopy of the best
state_dict; StepLR; then unfreezing layer4 with requires_grad_(True) and two param groups at
different learning rates, and counting trainable parameters."""
import copy

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from torchvision_models import torchvision_resnet


def shapes(rng, n, side=12):
    y = rng.integers(0, 2, n)
    x = 0.2 * rng.standard_normal((n, 3, side, side)).astype(np.float32)
    x[y == 0, :, 3:9, 5:7] += 1  # a vertical bar
    x[y == 1, :, 5:7, 3:9] += 1  # a horizontal bar
    return x, y.astype(np.int64)


def finetune(torch, init=None, epochs=3, batch=8):
    nn = torch.nn
    torch.manual_seed(0)

    BasicBlock = torchvision_resnet(torch)[0]

    class ResNet(nn.Module):
        def __init__(self, num_classes=10):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = BasicBlock(8, 8)
            self.layer4 = BasicBlock(8, 16, 2, nn.Sequential(nn.Conv2d(8, 16, 1, 2, bias=False), nn.BatchNorm2d(16)))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(16, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

        def forward(self, x):
            x = self.layer4(self.layer1(self.relu(self.bn1(self.conv1(x)))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    model_conv = ResNet()
    for param in model_conv.parameters():
        param.requires_grad = False
    num_ftrs = model_conv.fc.in_features
    model_conv.fc = nn.Linear(num_ftrs, 2)
    result = {}
    start_from(torch, model_conv, init, result)
    criterion = nn.CrossEntropyLoss()
    optimizer_conv = torch.optim.SGD(model_conv.fc.parameters(), lr=0.01, momentum=0.9)
    exp_lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer_conv, step_size=2, gamma=0.1)
    rng = np.random.default_rng(0)
    data = {phase: shapes(rng, 24) for phase in ("train", "val")}
    dataset_sizes = {phase: len(data[phase][1]) for phase in data}

    def train_model(model, optimizer, scheduler, num_epochs):
        best_model_wts = copy.deepcopy(model.state_dict())
        best_acc = 0.0
        history = []
        for epoch in range(num_epochs):
            for phase in ["train", "val"]:
                if phase == "train":
                    model.train()
                else:
                    model.eval()
                running_loss, running_corrects = 0.0, 0
                x, y = data[phase]
                for i in range(0, len(y), batch):
                    inputs, labels = torch.from_numpy(x[i:i + batch]), torch.from_numpy(y[i:i + batch])
                    optimizer.zero_grad()
                    with torch.set_grad_enabled(phase == "train"):
                        outputs = model(inputs)
                        _, preds = torch.max(outputs, 1)
                        loss = criterion(outputs, labels)
                        if phase == "train":
                            loss.backward()
                            optimizer.step()
                    running_loss += loss.item() * inputs.size(0)
                    running_corrects += torch.sum(preds == labels.data)
                if phase == "train":
                    scheduler.step()
                epoch_loss = running_loss / dataset_sizes[phase]
                epoch_acc = running_corrects.double() / dataset_sizes[phase]
                history.append([epoch_loss, epoch_acc.item()])
                if phase == "val" and epoch_acc > best_acc:
                    best_acc = epoch_acc
                    best_model_wts = copy.deepcopy(model.state_dict())
        model.load_state_dict(best_model_wts)
        return model, history, float(best_acc)

    model_conv, history, best_acc = train_model(model_conv, optimizer_conv, exp_lr_scheduler, epochs)
    frozen_grads = [p.grad is None for n, p in model_conv.named_parameters() if not n.startswith("fc.")]
    model_conv.layer4.requires_grad_(True)
    trainable = sum(p.numel() for p in model_conv.parameters() if p.requires_grad)
    optimizer = torch.optim.Adam([
        {"params": model_conv.layer4.parameters(), "lr": 1e-4},
        {"params": model_conv.fc.parameters()},
    ], lr=1e-3)
    model_conv, history2, _ = train_model(model_conv, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, 1), 1)
    result.update(history=np.array(history + history2), best_acc=best_acc, all_frozen=all(frozen_grads),
                  trainable=trainable, lrs=[g["lr"] for g in optimizer.param_groups],
                  state={k: numpy_of(v) for k, v in model_conv.state_dict().items()})
    return result


def test_finetune_last_layer_then_unfreeze():
    ref, got = compare_program(finetune, rtol=1e-3, atol=1e-4)
    assert got["all_frozen"] and got["trainable"] == ref["trainable"]

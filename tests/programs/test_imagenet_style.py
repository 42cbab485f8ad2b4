"""The PyTorch examples' imagenet and regression scripts in miniature: AverageMeter and
ProgressMeter printing through format strings, accuracy(output, target, topk=(1, 3)) with
output.topk(maxk, 1, True, True), pred.t(), eq against target.view(1, -1).expand_as(pred) and
correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100 / batch); a ResNet-ish model trained
with SGD(momentum, weight_decay) and a per-epoch lr adjustment written into param_groups; a
save_checkpoint of a dict with epoch, arch, state_dict, best_acc1 and optimizer, copied with shutil
when best, resumed into a fresh model and optimizer; the polynomial-regression example's features
by torch.cat([x ** i for i in range(1, 5)], 1) fitted by manual updates until the loss is small."""
import io
import os
import shutil
from contextlib import redirect_stdout
from enum import Enum

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

CLASSES = 5


class Summary(Enum):
    NONE, AVERAGE, SUM, COUNT = 0, 1, 2, 3


class AverageMeter:
    def __init__(self, name, fmt=":f", summary_type=Summary.AVERAGE):
        self.name, self.fmt, self.summary_type = name, fmt, summary_type
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
        return fmtstr.format(**self.__dict__)


class ProgressMeter:
    def __init__(self, num_batches, meters, prefix=""):
        num_digits = len(str(num_batches // 1))
        fmt = "{:" + str(num_digits) + "d}"
        self.batch_fmtstr = "[" + fmt + "/" + fmt.format(num_batches) + "]"
        self.meters, self.prefix = meters, prefix

    def display(self, batch):
        entries = [self.prefix + self.batch_fmtstr.format(batch)]
        entries += [str(meter) for meter in self.meters]
        print("\t".join(entries))


def accuracy(torch, output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified values of k (the
    examples' accuracy, with the library passed in)."""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def imagenet_style(torch, init=None, tmp_path=None, epochs=2, batch=10):
    nn = torch.nn
    torch.manual_seed(0)

    def make_model():
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
            nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(8, CLASSES))

    model = make_model()
    result = {}
    start_from(torch, model, init, result)
    criterion = nn.CrossEntropyLoss()
    base_lr = 0.1
    optimizer = torch.optim.SGD(model.parameters(), base_lr, momentum=0.9, weight_decay=1e-4)
    rng = np.random.default_rng(0)
    protos = rng.standard_normal((CLASSES, 3, 8, 8)).astype(np.float32)

    def batches(n):
        for _ in range(n):
            target = rng.integers(0, CLASSES, batch)
            images = protos[target] + rng.standard_normal((batch, 3, 8, 8)).astype(np.float32)
            yield torch.from_numpy(images), torch.from_numpy(target)

    def save_checkpoint(state, is_best, filename):
        torch.save(state, filename)
        if is_best:
            shutil.copyfile(filename, os.path.join(os.path.dirname(filename), "model_best.pth.tar"))

    os.makedirs(tmp_path, exist_ok=True)
    best_acc1, log, printed = 0, [], io.StringIO()
    for epoch in range(epochs):
        lr = base_lr * (0.1 ** (epoch // 1))
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        losses, top1, top3 = AverageMeter("Loss", ":.4e"), AverageMeter("Acc@1", ":6.2f"), AverageMeter("Acc@3", ":6.2f")
        progress = ProgressMeter(4, [losses, top1, top3], prefix="Epoch: [{}]".format(epoch))
        model.train()
        for i, (images, target) in enumerate(batches(4)):
            output = model(images)
            loss = criterion(output, target)
            acc1, acc3 = accuracy(torch, output, target, topk=(1, 3))
            losses.update(loss.item(), images.size(0))
            top1.update(acc1[0], images.size(0))
            top3.update(acc3[0], images.size(0))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with redirect_stdout(printed):
                progress.display(i + 1)
        model.eval()
        val1 = AverageMeter("Acc@1", ":6.2f")
        with torch.no_grad():
            for images, target in batches(2):
                val1.update(accuracy(torch, model(images), target)[0].item(), images.size(0))
        acc1 = val1.avg
        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)
        save_checkpoint({"epoch": epoch + 1, "arch": "tiny", "state_dict": model.state_dict(), "best_acc1": best_acc1,
                         "optimizer": optimizer.state_dict()}, is_best, os.path.join(str(tmp_path), "checkpoint.pth.tar"))
        log.append([losses.avg, float(top1.avg), float(top3.avg), acc1])
    checkpoint = torch.load(os.path.join(str(tmp_path), "model_best.pth.tar"), map_location="cpu")
    resumed = make_model()
    resumed.load_state_dict(checkpoint["state_dict"])
    optimizer2 = torch.optim.SGD(resumed.parameters(), base_lr, momentum=0.9, weight_decay=1e-4)
    optimizer2.load_state_dict(checkpoint["optimizer"])
    momentum = [numpy_of(optimizer2.state[p]["momentum_buffer"]) for p in resumed.parameters()]

    # regression example: fit a degree-4 polynomial
    W_target = torch.from_numpy(rng.standard_normal((4, 1)).astype(np.float32)) * 5
    b_target = torch.from_numpy(rng.standard_normal(1).astype(np.float32)) * 5

    def make_features(x):
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, 5)], 1)

    def poly_desc(W, b):
        result = "y = "
        for i, w in enumerate(W):
            result += "{:+.2f} x^{} ".format(w, i + 1)
        result += "{:+.2f}".format(b[0])
        return result

    fc = torch.nn.Linear(W_target.size(0), 1)
    with torch.no_grad():
        fc.weight.zero_()
        fc.bias.zero_()
    for batch_idx in range(1, 200):
        random = torch.from_numpy(rng.uniform(-1, 1, 32).astype(np.float32))
        x = make_features(random)
        y = x.mm(W_target) + b_target.item()
        fc.zero_grad()
        output = torch.nn.functional.smooth_l1_loss(fc(x), y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        if loss < 1e-3:
            break
    result.update(log=np.array(log), printed=printed.getvalue().count("\n"), epoch=checkpoint["epoch"],
                  best=checkpoint["best_acc1"], momentum=momentum, learned=poly_desc(fc.weight.view(-1), fc.bias),
                  reg=[batch_idx, loss])
    return result


def test_imagenet_style_meters_topk_checkpoint_and_regression(tmp_path):
    ref, got = compare_program(imagenet_style, rtol=1e-3, atol=1e-4, tmp_path=tmp_path / "pt",
                               mt_options={"tmp_path": tmp_path / "mt"})
    assert got["printed"] == 8 and got["learned"].startswith("y = ")

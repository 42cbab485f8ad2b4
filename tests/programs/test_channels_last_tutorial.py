"""The "(beta) Channels Last Memory Format in PyTorch" tutorial as its page runs it on a CPU: the
strides of torch.empty(N, C, H, W) before and after x.to(memory_format=torch.channels_last),
back by torch.contiguous_format, x.contiguous(memory_format=...), is_contiguous(memory_format=
...), torch.empty(..., memory_format=torch.channels_last), the permute alternative and its
strides, the special cases of size-1 dims (both formats at once), clone and empty_like keeping
the format; a Conv2d converted by model.to(memory_format=torch.channels_last) on a channels-last
input (its output channels-last), elementwise ops, BatchNorm2d, ReLU, pooling and upsampling
keeping the format; then a small CNN trained a few SGD steps in channels-last against the same CNN
in the contiguous format, and the layouts of its activations recorded by forward hooks."""
import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from


def channels_last(torch, init=None, steps=3, layouts_of_ops=True):
    nn, F = torch.nn, torch.nn.functional
    cl = torch.channels_last
    result = {}
    N, C, H, W = 10, 3, 32, 32
    x = torch.empty(N, C, H, W)
    strides = [x.stride()]
    x = x.to(memory_format=torch.channels_last)
    strides += [tuple(x.shape), x.stride()]
    x = x.to(memory_format=torch.contiguous_format)
    strides.append(x.stride())
    x = x.contiguous(memory_format=torch.channels_last)
    strides.append(x.stride())
    strides.append(x.is_contiguous(memory_format=torch.channels_last))
    x = torch.empty(N, H, W, C)
    x = x.permute(0, 3, 1, 2)  # Here permute refers to the order of dims in memory
    strides += [x.stride(), x.is_contiguous(memory_format=torch.channels_last)]
    x = torch.empty(N, C, H, W, memory_format=torch.channels_last)
    strides += [x.stride(), x.clone().stride(), torch.empty_like(x).stride(),
                x.contiguous().stride(), x.contiguous().is_contiguous()]
    special_x = torch.empty(4, 1, 4, 4)
    strides += [special_x.is_contiguous(memory_format=torch.channels_last),
                special_x.is_contiguous(memory_format=torch.contiguous_format)]
    special_x = torch.empty(4, 4, 1, 1)
    strides += [special_x.is_contiguous(memory_format=torch.channels_last),
                special_x.is_contiguous(memory_format=torch.contiguous_format)]
    result["strides"] = [str(s) for s in strides]

    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    model = torch.nn.Conv2d(8, 4, 3)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                        nn.Upsample(scale_factor=2, mode="nearest"), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                        nn.Linear(32, 5))
    ref = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                        nn.Upsample(scale_factor=2, mode="nearest"), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                        nn.Linear(32, 5))
    start_from(torch, {"conv": model, "net": net}, init, result)
    ref.load_state_dict(net.state_dict())

    model = model.to(memory_format=torch.channels_last)  # Replace with your model
    inp = torch.tensor(rng.integers(1, 10, (2, 8, 4, 4)), dtype=torch.float32, requires_grad=True)
    inp = inp.to(device="cpu", memory_format=torch.channels_last, dtype=torch.float32)
    out = model(inp)
    result["conv"] = {"weight_cl": model.weight.is_contiguous(memory_format=cl), "out": numpy_of(out)}
    if layouts_of_ops:
        result["conv"]["out_cl"] = out.is_contiguous(memory_format=torch.channels_last)

    y = torch.tensor(rng.standard_normal((2, 8, 5, 6)), dtype=torch.float32).contiguous(memory_format=cl)
    kept = [(y + 1).is_contiguous(memory_format=cl), (y * y).is_contiguous(memory_format=cl),
            torch.relu(y).is_contiguous(memory_format=cl), y.sigmoid().is_contiguous(memory_format=cl),
            F.max_pool2d(y, 2).is_contiguous(memory_format=cl), F.avg_pool2d(y, 2).is_contiguous(memory_format=cl),
            F.interpolate(y, scale_factor=2).is_contiguous(memory_format=cl),
            (y + torch.ones(8, 1, 1)).is_contiguous(memory_format=cl)]
    if layouts_of_ops:
        result["kept"] = kept

    layouts = []
    for m in net:
        m.register_forward_hook(lambda mod, i, o: layouts.append(
            (type(mod).__name__, o.dim() == 4 and o.is_contiguous(memory_format=cl))))
    net = net.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    losses, ref_losses = [], []
    for _ in range(steps):
        images = torch.tensor(rng.standard_normal((4, 3, 8, 8)), dtype=torch.float32)
        labels = torch.tensor(rng.integers(0, 5, 4))
        for m, o, store, xin in ((net, opt, losses, images.to(memory_format=cl)), (ref, opt_ref, ref_losses, images)):
            o.zero_grad()
            loss = F.cross_entropy(m(xin), labels)
            loss.backward()
            o.step()
            store.append(loss.item())
    result.update(losses=losses, same_as_contiguous=np.allclose(losses, ref_losses, rtol=1e-5, atol=1e-6),
                  weight=numpy_of(net[4].weight), running=numpy_of(net[1].running_mean))
    if layouts_of_ops:
        result.update(layouts=layouts[:len(net)], grad_cl=net[0].weight.grad.is_contiguous(memory_format=cl))
    return result


def test_channels_last_memory_format():
    """The tutorial's strides, format checks, values and training, without the layouts of the
    ops' results (below)."""
    compare_program(channels_last, layouts_of_ops=False)


def test_channels_last_memory_format_propagates():
    compare_program(channels_last)

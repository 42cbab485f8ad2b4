"""The pytorch.org recipes about state dicts and checkpoints, as their pages run them: "What is a
state_dict" (the recipe's Net of conv1/pool/conv2/fc1-3, SGD(lr=0.001, momentum=0.9), printing each
param_tensor's size and each optimizer state_dict entry); "Saving and loading a general
checkpoint" (torch.save of {'epoch', 'model_state_dict', 'optimizer_state_dict', 'loss'}, a fresh
model and optimizer restored by load_state_dict, model.train() and training resumed);
"Saving and loading multiple models in one file" (netA/netB with their optimizers in one dict);
"Save and load across devices" (map_location=torch.device('cpu'), map_location='cpu', a
dict of locations); "Tips for loading an nn.Module from a checkpoint" (torch.load(mmap=True,
weights_only=True), a model built under `with torch.device('meta')`, load_state_dict(assign=True)
so the meta parameters take the loaded tensors, and a model state_dict's parameters saved one by
one being loaded lazily)."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def lenet(torch):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = x.view(-1, 16 * 5 * 5)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

    return Net


def state_dict_recipes(torch, init=None, path=None, steps=2):
    nn = torch.nn
    optim = torch.optim
    Net = lenet(torch)
    rng = np.random.default_rng(0)
    inputs = torch.tensor(rng.standard_normal((4, 3, 32, 32)), dtype=torch.float32)
    labels = torch.tensor(rng.integers(0, 10, 4))
    criterion = nn.CrossEntropyLoss()

    torch.manual_seed(0)
    net = Net()
    result = {}
    start_from(torch, net, init, result)
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

    lines = ["Model's state_dict:"]
    for param_tensor in net.state_dict():
        lines.append(f"{param_tensor}\t{net.state_dict()[param_tensor].size()}")
    lines.append("Optimizer's state_dict:")
    for var_name in optimizer.state_dict():
        lines.append(f"{var_name}\t{optimizer.state_dict()[var_name]}")
    result["printed"] = [ln.replace(torch.__name__, "torch") for ln in lines]

    def train(model, opt, n):
        losses = []
        for _ in range(n):
            opt.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    # Saving and loading a general checkpoint
    EPOCH, LOSS = 5, train(net, optimizer, steps)[-1]
    PATH = str(path / "model.pt")
    torch.save({
        'epoch': EPOCH,
        'model_state_dict': net.state_dict(),
        'optimizer_state_dict': optimizer.state_dict(),
        'loss': LOSS,
    }, PATH)
    model = Net()
    optimizer2 = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    checkpoint = torch.load(PATH, weights_only=True)
    model.load_state_dict(checkpoint['model_state_dict'])
    optimizer2.load_state_dict(checkpoint['optimizer_state_dict'])
    epoch = checkpoint['epoch']
    loss = checkpoint['loss']
    model.train()
    result["checkpoint"] = {"epoch": epoch, "loss": loss,
                            "state": sorted(checkpoint['optimizer_state_dict']['state'][0])}
    result["resumed"] = train(model, optimizer2, steps)
    result["continued"] = train(net, optimizer, steps)

    # Saving and loading multiple models in one file
    class NetB(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(10, 3)

        def forward(self, x):
            return self.fc(x)

    netA, netB = Net(), NetB()
    netA.load_state_dict(net.state_dict())
    netB.fc.weight.data.copy_(torch.tensor(np.linspace(-1, 1, 30).reshape(3, 10), dtype=torch.float32))
    optimizerA = optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
    optimizerB = optim.SGD(netB.parameters(), lr=0.001, momentum=0.9)
    PATH2 = str(path / "model2.pt")
    torch.save({
        'modelA_state_dict': netA.state_dict(),
        'modelB_state_dict': netB.state_dict(),
        'optimizerA_state_dict': optimizerA.state_dict(),
        'optimizerB_state_dict': optimizerB.state_dict(),
    }, PATH2)
    modelA, modelB = Net(), NetB()
    optimA = optim.SGD(modelA.parameters(), lr=0.001, momentum=0.9)
    optimB = optim.SGD(modelB.parameters(), lr=0.001, momentum=0.9)
    checkpoint = torch.load(PATH2, weights_only=True)
    modelA.load_state_dict(checkpoint['modelA_state_dict'])
    modelB.load_state_dict(checkpoint['modelB_state_dict'])
    optimA.load_state_dict(checkpoint['optimizerA_state_dict'])
    optimB.load_state_dict(checkpoint['optimizerB_state_dict'])
    modelA.eval()
    modelB.eval()
    result["multi"] = numpy_of(modelB(modelA(inputs)))

    # Save on CPU, load on CPU (across devices)
    device = torch.device('cpu')
    PATH3 = str(path / "model3.pt")
    torch.save(net.state_dict(), PATH3)
    for location in (device, 'cpu', {'cuda:0': 'cpu'}, lambda storage, loc: storage):
        m = Net()
        m.load_state_dict(torch.load(PATH3, map_location=location, weights_only=True))
        m.to(device)
        result.setdefault("across", []).append(numpy_of(m(inputs)))

    # Tips for loading an nn.Module from a checkpoint: mmap, meta device, assign=True
    state_dict = torch.load(PATH3, mmap=True, weights_only=True)
    with torch.device('meta'):
        meta_m = Net()
    result["meta"] = (str(meta_m.fc1.weight.device), meta_m.fc1.weight.is_meta)
    meta_m.load_state_dict(state_dict, assign=True)
    result["assigned"] = {"where": (str(meta_m.fc1.weight.device), type(meta_m.fc1.weight).__name__,
                                    meta_m.fc1.weight.requires_grad), "out": numpy_of(meta_m(inputs))}
    m2 = Net()
    m2.load_state_dict(state_dict)
    result["copied_not_shared"] = m2.fc1.weight.data_ptr() != state_dict["fc1.weight"].data_ptr()
    return result


def test_state_dict_checkpoint_recipes(tmp_path):
    compare_program(state_dict_recipes, path=tmp_path)

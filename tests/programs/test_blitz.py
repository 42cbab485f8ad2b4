"""The "Deep Learning with PyTorch: a 60 Minute Blitz" pages: "Neural Networks" (LeNet-style
Net with conv1/conv2, F.max_pool2d(F.relu(...), (2, 2)) and with 2, torch.flatten(x, 1),
list(net.parameters()) and params[0].size(), net.zero_grad() then out.backward(torch.randn)
with the draw from NumPy, an MSELoss against target.view(1, -1), loss.grad_fn.next_functions[0][0]
walked by name, conv1.bias.grad before and after backward, a manual SGD loop with
f.data.sub_(f.grad.data * lr), then optim.SGD); "Training a classifier" (a CIFAR-style Net on
3x16x16 images from NumPy, running_loss printed every few minibatches, torch.max(outputs, 1),
total/correct counts, per-class accuracy in dicts keyed by class name, zip over labels and
predictions, PATH save of the state_dict and reload into a new Net)."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

CLASSES = ("plane", "car", "bird", "cat")


def neural_networks(torch, init=None):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, input):
            c1 = F.relu(self.conv1(input))
            s2 = F.max_pool2d(c1, (2, 2))
            c3 = F.relu(self.conv2(s2))
            s4 = F.max_pool2d(c3, 2)
            s4 = torch.flatten(s4, 1)
            f5 = F.relu(self.fc1(s4))
            f6 = F.relu(self.fc2(f5))
            return self.fc3(f6)

    torch.manual_seed(0)
    net = Net()
    result = {"repr": repr(net).splitlines()[1]}
    start_from(torch, net, init, result)
    params = list(net.parameters())
    rng = np.random.default_rng(0)
    input = torch.tensor(rng.standard_normal((1, 1, 32, 32)), dtype=torch.float32)
    out = net(input)
    net.zero_grad()
    out.backward(torch.tensor(rng.standard_normal((1, 10)), dtype=torch.float32))
    result.update(n_params=len(params), conv1_size=tuple(params[0].size()), out=numpy_of(out),
                  conv1_grad=numpy_of(net.conv1.weight.grad))
    output = net(input)
    target = torch.tensor(rng.standard_normal(10), dtype=torch.float32)
    target = target.view(1, -1)
    criterion = nn.MSELoss()
    loss = criterion(output, target)
    chain = [type(loss.grad_fn).__name__, type(loss.grad_fn.next_functions[0][0]).__name__,
             type(loss.grad_fn.next_functions[0][0].next_functions[0][0]).__name__]
    net.zero_grad()
    before = net.conv1.bias.grad
    loss.backward()
    result.update(loss=loss.item(), chain=chain, before_none=before is None, after=numpy_of(net.conv1.bias.grad))
    learning_rate = 0.01
    for f in net.parameters():
        f.data.sub_(f.grad.data * learning_rate)
    optimizer = optim.SGD(net.parameters(), lr=0.01)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        output = net(input)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result["losses"] = losses
    return result


def training_a_classifier(torch, init=None, path=None, epochs=2, batch_size=4):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 3)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 8, 3)
            self.fc1 = nn.Linear(8 * 2 * 2, 32)
            self.fc2 = nn.Linear(32, 16)
            self.fc3 = nn.Linear(16, len(CLASSES))

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    rng = np.random.default_rng(1)
    labels_all = rng.integers(0, len(CLASSES), 48)
    colours = rng.random((len(CLASSES), 3, 1, 1))
    images = (colours[labels_all] + 0.3 * rng.standard_normal((48, 3, 14, 14))).astype(np.float32)
    images = (images - 0.5) / 0.5
    trainset = torch.utils.data.TensorDataset(torch.tensor(images[:32]), torch.tensor(labels_all[:32]))
    testset = torch.utils.data.TensorDataset(torch.tensor(images[32:]), torch.tensor(labels_all[32:]))
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=batch_size, shuffle=False, num_workers=0)
    testloader = torch.utils.data.DataLoader(testset, batch_size=batch_size, shuffle=False)

    torch.manual_seed(0)
    net = Net()
    result = {}
    start_from(torch, net, init, result)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    printed = []
    for epoch in range(epochs):
        running_loss = 0.0
        for i, data in enumerate(trainloader, 0):
            inputs, labels = data
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            if i % 4 == 3:
                printed.append(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 4:.3f}")
                running_loss = 0.0
    PATH = path / "cifar_net.pth"
    torch.save(net.state_dict(), PATH)
    dataiter = iter(testloader)
    images_b, labels_b = next(dataiter)
    net = Net()
    net.load_state_dict(torch.load(PATH, weights_only=True))
    outputs = net(images_b)
    _, predicted = torch.max(outputs, 1)
    correct = total = 0
    with torch.no_grad():
        for data in testloader:
            images_t, labels_t = data
            outputs = net(images_t)
            _, predicted_t = torch.max(outputs.data, 1)
            total += labels_t.size(0)
            correct += (predicted_t == labels_t).sum().item()
    correct_pred = {classname: 0 for classname in CLASSES}
    total_pred = {classname: 0 for classname in CLASSES}
    with torch.no_grad():
        for data in testloader:
            images_t, labels_t = data
            outputs = net(images_t)
            _, predictions = torch.max(outputs, 1)
            for label, prediction in zip(labels_t, predictions):
                if label == prediction:
                    correct_pred[CLASSES[label]] += 1
                total_pred[CLASSES[label]] += 1
    per_class = {c: (100 * float(correct_pred[c]) / total_pred[c]) if total_pred[c] else -1.0 for c in CLASSES}
    result.update(printed=printed, predicted=" ".join(f"{CLASSES[predicted[j]]:5s}" for j in range(batch_size)),
                  accuracy=100 * correct // total, per_class=per_class, outputs=numpy_of(outputs))
    return result


def test_neural_networks_page():
    ref, got = compare_program(neural_networks, rtol=1e-4, atol=1e-5)
    assert got["chain"] == ["MseLossBackward0", "AddmmBackward0", "AccumulateGrad"]  # addmm(bias, ...): bias first
    assert got["before_none"] and got["n_params"] == 10


def test_training_a_classifier(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    ref, got = compare_program(training_a_classifier, rtol=1e-3, atol=1e-4, path=tmp_path / "pt",
                               mt_options={"path": tmp_path / "mt"})
    assert got["printed"] == ref["printed"]

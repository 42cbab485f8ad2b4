"""Udacity's deep-learning-v2-pytorch "intro-to-pytorch" notebooks, parts 1 to 6, as their solutions
are written, MNIST and Fashion-MNIST replaced by local 28x28 images in a Dataset that returns
(tensor, int) as torchvision's do (normalised by (x - 0.5) / 0.5 as transforms.Normalize((0.5,),
(0.5,)) does), randomness from torch.manual_seed (both libraries draw PyTorch's CPU streams).
Part 1: activation(x) = 1/(1+torch.exp(-x)), features = torch.randn((1, 5)), weights =
torch.randn_like(features), torch.sum(features * weights) + bias, torch.mm(features,
weights.view(5,1)), a two-layer network by hand, torch.from_numpy(a) sharing memory with b.mul_(2).
Part 2: images.view(images.shape[0], -1), softmax by torch.exp(x)/torch.sum(torch.exp(x),
dim=1).view(-1, 1), a Network class (hidden/output Linear, sigmoid/softmax modules, then F.sigmoid
and F.softmax), model.fc1.weight.data.normal_(std=0.01) and bias.data.fill_(0), nn.Sequential
built positionally and from an OrderedDict, model[0] and model.fc1. Part 3: nn.CrossEntropyLoss on
logits, LogSoftmax with NLLLoss, autograd (x.requires_grad, y = x**2, y.grad_fn, z = y.mean(),
z.backward(), x.grad against x/2), the weight gradient before and after loss.backward(), one
optim.SGD(lr=0.01) step printed, then training with running_loss and print(f"Training loss:
{running_loss/len(trainloader)}"), ps = torch.exp(logps). Part 4/5: the Fashion-MNIST Classifier
(x.view(x.shape[0], -1), F.log_softmax), Adam(lr=0.003), the validation loop (ps.topk(1, dim=1),
equals = top_class == labels.view(*top_class.shape), torch.mean(equals.type(torch.FloatTensor))),
the Classifier with nn.Dropout(p=0.2) and model.eval()/model.train() (masks from PyTorch's streams),
"Epoch: {}/{}.. " format lines. Part 6: fc_model.Network with an nn.ModuleList of hidden layers
extended by zip(hidden_layers[:-1], hidden_layers[1:]), its train/validation functions, the
checkpoint dict {'input_size', 'output_size', 'hidden_layers', 'state_dict'} saved by torch.save and
rebuilt by load_checkpoint, and the RuntimeError of loading the state_dict into a model of other
sizes ("Error(s) in loading state_dict for Network" with "size mismatch for")."""
from collections import OrderedDict

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def digit_arrays(n, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = rng.uniform(0, 0.3, (n, 1, 28, 28)).astype(np.float32)
    for i, c in enumerate(labels):
        images[i, 0, 2 * c + 2:2 * c + 6, 4:24] += 0.6
        images[i, 0, 4:24, 2 * c + 2:2 * c + 5] += 0.3 * (c % 3)
    return np.clip(images, 0, 1), labels


def make_loader(torch, n, seed, shuffle):
    class LocalImages(torch.utils.data.Dataset):
        def __init__(self):
            self.data, self.targets = digit_arrays(n, seed)

        def __len__(self):
            return len(self.data)

        def __getitem__(self, i):
            return (torch.from_numpy(self.data[i]) - 0.5) / 0.5, int(self.targets[i])

    return torch.utils.data.DataLoader(LocalImages(), batch_size=64, shuffle=shuffle)


def parts_1_to_3(torch, init=None):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    res = {}
    with captured_run(torch) as out:
        def activation(x):
            return 1 / (1 + torch.exp(-x))

        torch.manual_seed(7)
        features = torch.randn((1, 5))
        weights = torch.randn_like(features)
        bias = torch.randn((1, 1))
        y = activation(torch.sum(features * weights) + bias)
        y2 = activation((features * weights).sum() + bias)
        y3 = activation(torch.mm(features, weights.view(5, 1)) + bias)
        print(y, y2, y3)
        torch.manual_seed(7)
        features = torch.randn((1, 3))
        n_input = features.shape[1]
        n_hidden = 2
        n_output = 1
        W1 = torch.randn(n_input, n_hidden)
        W2 = torch.randn(n_hidden, n_output)
        B1 = torch.randn((1, n_hidden))
        B2 = torch.randn((1, n_output))
        h = activation(torch.mm(features, W1) + B1)
        output = activation(torch.mm(h, W2) + B2)
        print(output)
        a = np.random.default_rng(0).random((4, 3))
        b = torch.from_numpy(a)
        print(b.numpy() is not a, b.dtype)
        b.mul_(2)
        res["shared"] = a.copy()

        trainloader = make_loader(torch, 256, 0, True)
        dataiter = iter(trainloader)
        images, labels = next(dataiter)
        print(type(images).__name__, images.shape, labels.shape)
        inputs = images.view(images.shape[0], -1)
        w1 = torch.randn(784, 256)
        b1 = torch.randn(256)
        w2 = torch.randn(256, 10)
        b2 = torch.randn(10)
        h = activation(torch.mm(inputs, w1) + b1)
        out_ = torch.mm(h, w2) + b2

        def softmax(x):
            return torch.exp(x) / torch.sum(torch.exp(x), dim=1).view(-1, 1)

        probabilities = softmax(out_)
        print(probabilities.shape)
        print(probabilities.sum(dim=1)[:4])
        res["manual_probs"] = numpy_of(probabilities)

        class Network(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = nn.Linear(784, 256)
                self.output = nn.Linear(256, 10)
                self.sigmoid = nn.Sigmoid()
                self.softmax = nn.Softmax(dim=1)

            def forward(self, x):
                x = self.hidden(x)
                x = self.sigmoid(x)
                x = self.output(x)
                x = self.softmax(x)
                return x

        model = Network()
        print(model)

        class Network2(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = nn.Linear(784, 256)
                self.output = nn.Linear(256, 10)

            def forward(self, x):
                x = F.sigmoid(self.hidden(x))
                x = F.softmax(self.output(x), dim=1)
                return x

        class Network3(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(784, 128)
                self.fc2 = nn.Linear(128, 64)
                self.fc3 = nn.Linear(64, 10)

            def forward(self, x):
                x = self.fc1(x)
                x = F.relu(x)
                x = self.fc2(x)
                x = F.relu(x)
                x = self.fc3(x)
                x = F.softmax(x, dim=1)
                return x

        res["net2"] = numpy_of(Network2()(inputs[:3]))
        model = Network3()
        print(model.fc1.weight.shape, model.fc1.bias.shape)
        model.fc1.bias.data.fill_(0)
        model.fc1.weight.data.normal_(std=0.01)
        images.resize_(64, 1, 784)
        img_idx = 0
        ps = model.forward(images[img_idx, :])
        res["ps"] = numpy_of(ps)
        input_size = 784
        hidden_sizes = [128, 64]
        output_size = 10
        model = nn.Sequential(nn.Linear(input_size, hidden_sizes[0]),
                              nn.ReLU(),
                              nn.Linear(hidden_sizes[0], hidden_sizes[1]),
                              nn.ReLU(),
                              nn.Linear(hidden_sizes[1], output_size),
                              nn.Softmax(dim=1))
        print(model)
        print(model[0], model[0].weight.shape)
        model = nn.Sequential(OrderedDict([
            ('fc1', nn.Linear(input_size, hidden_sizes[0])),
            ('relu1', nn.ReLU()),
            ('fc2', nn.Linear(hidden_sizes[0], hidden_sizes[1])),
            ('relu2', nn.ReLU()),
            ('output', nn.Linear(hidden_sizes[1], output_size)),
            ('softmax', nn.Softmax(dim=1))]))
        print(model)
        print(model[0])
        print(model.fc1)

        # part 3
        model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
        criterion = nn.CrossEntropyLoss()
        images, labels = next(iter(trainloader))
        images = images.view(images.shape[0], -1)
        logits = model(images)
        loss = criterion(logits, labels)
        print(loss)
        model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10),
                              nn.LogSoftmax(dim=1))
        criterion = nn.NLLLoss()
        logps = model(images)
        loss = criterion(logps, labels)
        print(loss)
        x = torch.randn(2, 2, requires_grad=True)
        print(x)
        y = x**2
        print(y)
        print(y.grad_fn)
        z = y.mean()
        print(z)
        print(x.grad)
        z.backward()
        print(x.grad)
        print(x / 2)
        print('Before backward pass: \n', model[0].weight.grad)
        loss.backward()
        print('After backward pass: \n', model[0].weight.grad.shape)
        res["weight_grad"] = numpy_of(model[0].weight.grad)
        optimizer = optim.SGD(model.parameters(), lr=0.01)
        print('Initial weights - ', model[0].weight[:1, :4])
        images, labels = next(iter(trainloader))
        images.resize_(64, 784)
        optimizer.zero_grad()
        output = model(images)
        loss = criterion(output, labels)
        loss.backward()
        print('Gradient -', model[0].weight.grad[:1, :4])
        optimizer.step()
        print('Updated weights - ', model[0].weight[:1, :4])
        model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10),
                              nn.LogSoftmax(dim=1))
        criterion = nn.NLLLoss()
        optimizer = optim.SGD(model.parameters(), lr=0.003)
        epochs = 5
        for e in range(epochs):
            running_loss = 0
            for images, labels in trainloader:
                images = images.view(images.shape[0], -1)
                optimizer.zero_grad()
                output = model(images)
                loss = criterion(output, labels)
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            else:
                print(f"Training loss: {running_loss/len(trainloader)}")
        images, labels = next(iter(trainloader))
        img = images[0].view(1, 784)
        with torch.no_grad():
            logps = model(img)
        ps = torch.exp(logps)
        res["trained_ps"] = numpy_of(ps)
    res["printed"] = printed_lines(out)
    return res


def parts_4_to_6(torch, init=None, tmp=None, epochs=3):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    res = {}
    with captured_run(torch) as out:
        trainloader = make_loader(torch, 256, 2, True)
        testloader = make_loader(torch, 128, 3, True)

        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(784, 256)
                self.fc2 = nn.Linear(256, 128)
                self.fc3 = nn.Linear(128, 64)
                self.fc4 = nn.Linear(64, 10)

            def forward(self, x):
                x = x.view(x.shape[0], -1)
                x = F.relu(self.fc1(x))
                x = F.relu(self.fc2(x))
                x = F.relu(self.fc3(x))
                x = F.log_softmax(self.fc4(x), dim=1)
                return x

        model = Classifier()
        criterion = nn.NLLLoss()
        optimizer = optim.Adam(model.parameters(), lr=0.003)
        for e in range(epochs):
            running_loss = 0
            for images, labels in trainloader:
                log_ps = model(images)
                loss = criterion(log_ps, labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            else:
                print(f"Training loss: {running_loss}")

        images, labels = next(iter(testloader))
        ps = torch.exp(model(images))
        print(ps.shape)
        top_p, top_class = ps.topk(1, dim=1)
        print(top_class[:10, :])
        equals = top_class == labels.view(*top_class.shape)
        accuracy = torch.mean(equals.type(torch.FloatTensor))
        print(f'Accuracy: {accuracy.item()*100}%')

        class DropoutClassifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(784, 256)
                self.fc2 = nn.Linear(256, 128)
                self.fc3 = nn.Linear(128, 64)
                self.fc4 = nn.Linear(64, 10)
                self.dropout = nn.Dropout(p=0.2)

            def forward(self, x):
                x = x.view(x.shape[0], -1)
                x = self.dropout(F.relu(self.fc1(x)))
                x = self.dropout(F.relu(self.fc2(x)))
                x = self.dropout(F.relu(self.fc3(x)))
                x = F.log_softmax(self.fc4(x), dim=1)
                return x

        model = DropoutClassifier()
        criterion = nn.NLLLoss()
        optimizer = optim.Adam(model.parameters(), lr=0.003)
        steps = 0
        train_losses, test_losses = [], []
        for e in range(epochs):
            running_loss = 0
            for images, labels in trainloader:
                optimizer.zero_grad()
                log_ps = model(images)
                loss = criterion(log_ps, labels)
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            else:
                test_loss = 0
                accuracy = 0
                with torch.no_grad():
                    model.eval()
                    for images, labels in testloader:
                        log_ps = model(images)
                        test_loss += criterion(log_ps, labels)
                        ps = torch.exp(log_ps)
                        top_p, top_class = ps.topk(1, dim=1)
                        equals = top_class == labels.view(*top_class.shape)
                        accuracy += torch.mean(equals.type(torch.FloatTensor))
                model.train()
                train_losses.append(running_loss / len(trainloader))
                test_losses.append(test_loss / len(testloader))
                print("Epoch: {}/{}.. ".format(e + 1, epochs),
                      "Training Loss: {:.3f}.. ".format(train_losses[-1]),
                      "Test Loss: {:.3f}.. ".format(test_losses[-1]),
                      "Test Accuracy: {:.3f}".format(accuracy / len(testloader)))
        res["dropout_losses"] = [train_losses, [t.item() for t in test_losses]]

        # part 6: fc_model.py
        class Network(nn.Module):
            def __init__(self, input_size, output_size, hidden_layers, drop_p=0.5):
                super().__init__()
                self.hidden_layers = nn.ModuleList([nn.Linear(input_size, hidden_layers[0])])
                layer_sizes = zip(hidden_layers[:-1], hidden_layers[1:])
                self.hidden_layers.extend([nn.Linear(h1, h2) for h1, h2 in layer_sizes])
                self.output = nn.Linear(hidden_layers[-1], output_size)
                self.dropout = nn.Dropout(p=drop_p)

            def forward(self, x):
                for each in self.hidden_layers:
                    x = F.relu(each(x))
                    x = self.dropout(x)
                x = self.output(x)
                return F.log_softmax(x, dim=1)

        def validation(model, testloader, criterion):
            accuracy = 0
            test_loss = 0
            for images, labels in testloader:
                images = images.resize_(images.size()[0], 784)
                output = model.forward(images)
                test_loss += criterion(output, labels).item()
                ps = torch.exp(output)
                equality = (labels.data == ps.max(1)[1])
                accuracy += equality.type_as(torch.FloatTensor()).mean()
            return test_loss, accuracy

        def train(model, trainloader, testloader, criterion, optimizer, epochs=5, print_every=40):
            steps = 0
            running_loss = 0
            for e in range(epochs):
                model.train()
                for images, labels in trainloader:
                    steps += 1
                    images.resize_(images.size()[0], 784)
                    optimizer.zero_grad()
                    output = model.forward(images)
                    loss = criterion(output, labels)
                    loss.backward()
                    optimizer.step()
                    running_loss += loss.item()
                    if steps % print_every == 0:
                        model.eval()
                        with torch.no_grad():
                            test_loss, accuracy = validation(model, testloader, criterion)
                        print("Epoch: {}/{}.. ".format(e + 1, epochs),
                              "Training Loss: {:.3f}.. ".format(running_loss / print_every),
                              "Test Loss: {:.3f}.. ".format(test_loss / len(testloader)),
                              "Test Accuracy: {:.3f}".format(accuracy / len(testloader)))
                        running_loss = 0
                        model.train()

        model = Network(784, 10, [512, 256, 128])
        criterion = nn.NLLLoss()
        optimizer = optim.Adam(model.parameters(), lr=0.001)
        train(model, trainloader, testloader, criterion, optimizer, epochs=2, print_every=2)
        print("Our model: \n\n", model, '\n')
        print("The state dict keys: \n\n", model.state_dict().keys())
        path = tmp / "checkpoint.pth"
        torch.save(model.state_dict(), path)
        state_dict = torch.load(path)
        print(state_dict.keys())
        model.load_state_dict(state_dict)
        model2 = Network(784, 10, [400, 200, 100])
        try:
            model2.load_state_dict(state_dict)
        except RuntimeError as e:
            msg = str(e)
            print(msg.splitlines()[0])
            print(sum("size mismatch for" in line for line in msg.splitlines()))
        checkpoint = {'input_size': 784,
                      'output_size': 10,
                      'hidden_layers': [each.out_features for each in model.hidden_layers],
                      'state_dict': model.state_dict()}
        torch.save(checkpoint, path)

        def load_checkpoint(filepath):
            checkpoint = torch.load(filepath)
            model = Network(checkpoint['input_size'], checkpoint['output_size'], checkpoint['hidden_layers'])
            model.load_state_dict(checkpoint['state_dict'])
            return model

        model = load_checkpoint(path)
        print(model)
        model.eval()
        images, labels = next(iter(testloader))
        with torch.no_grad():
            res["loaded_out"] = numpy_of(model(images.view(images.shape[0], -1)))
    res["printed"] = printed_lines(out)
    return res


def test_udacity_parts_1_to_3():
    ref, got = compare_program(parts_1_to_3, rtol=1e-3, atol=1e-4)
    np.testing.assert_array_equal(got["shared"], ref["shared"])  # b.mul_(2) doubled the NumPy array
    assert "<PowBackward0 object at" in "".join(got["printed"])


def test_udacity_parts_4_to_6(tmp_path):
    for lib in ("torch", "minitorch"):
        (tmp_path / lib).mkdir()
    ref, got = compare_program(lambda torch, init=None: parts_4_to_6(torch, tmp=tmp_path / torch.__name__),
                               rtol=1e-3, atol=1e-4)
    assert "Error(s) in loading state_dict for Network:" in got["printed"]

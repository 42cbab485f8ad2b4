"""The "Learn the Basics" pages as written, randomness from torch.manual_seed (both libraries
draw PyTorch's CPU streams), FashionMNIST replaced by local arrays: "Tensors" (torch.tensor of
lists, from_numpy, ones_like, rand_like(x_data, dtype=torch.float), rand/ones/zeros of a shape
tuple, .shape/.dtype/.device, tensor[0], tensor[:, 0], tensor[..., -1], tensor[:, 1] = 0,
torch.cat([tensor, tensor, tensor], dim=1), @ / matmul / matmul(out=) with rand_like, * / mul /
mul(out=), sum().item(), add_(5), the NumPy bridge both ways); "Transforms" (the target's
Lambda(lambda y: torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)));
"Automatic Differentiation" (w, b with requires_grad, binary_cross_entropy_with_logits, the
grad_fn names, w.grad/b.grad, no_grad and detach, the Jacobian-product section with torch.eye(4, 5,
requires_grad=True), out.backward(torch.ones_like(out), retain_graph=True) twice and after
inp.grad.zero_()); "Optimizing Model Parameters" (a NeuralNetwork of Flatten and a Linear/ReLU
stack, train_loop printing f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]" and test_loop printing
f"Test Error: \\n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \\n", epochs of
"Epoch {t+1}\\n-------------------------------")."""
import re

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def tensors_transforms_autograd(torch, init=None):
    result = {}
    torch.manual_seed(0)
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    np_array = np.array(data)
    x_np = torch.from_numpy(np_array)
    x_ones = torch.ones_like(x_data)  # retains the properties of x_data
    x_rand = torch.rand_like(x_data, dtype=torch.float)  # overrides the datatype of x_data
    shape = (2, 3,)
    rand_tensor = torch.rand(shape)
    ones_tensor = torch.ones(shape)
    zeros_tensor = torch.zeros(shape)
    result["made"] = [numpy_of(t) for t in (x_data, x_np, x_ones, x_rand, rand_tensor, ones_tensor, zeros_tensor)]
    tensor = torch.rand(3, 4)
    result["attrs"] = [str(tensor.shape).replace(torch.__name__, "torch"), str(tensor.dtype).split(".")[-1],
                       str(tensor.device)]
    tensor = torch.ones(4, 4)
    picks = [numpy_of(tensor[0]), numpy_of(tensor[:, 0]), numpy_of(tensor[..., -1])]
    tensor[:, 1] = 0
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)
    z1 = tensor * tensor
    z2 = tensor.mul(tensor)
    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    agg = tensor.sum()
    agg_item = agg.item()
    tensor.add_(5)
    result.update(picks=picks, ops=[numpy_of(t) for t in (tensor, t1, y1, y2, y3, z1, z2, z3)],
                  agg=(agg_item, type(agg_item).__name__))
    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    n2 = np.ones(5)
    t2 = torch.from_numpy(n2)
    np.add(n2, 1, out=n2)
    result["bridge"] = [n.copy(), numpy_of(t2)]

    def target_transform(y):
        return torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)

    result["one_hot"] = [numpy_of(target_transform(y)) for y in (0, 3, 9)]

    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    result["grad_fns"] = [type(z.grad_fn).__name__, type(loss.grad_fn).__name__]
    loss.backward()
    result["grads"] = [numpy_of(w.grad), numpy_of(b.grad)]
    z = torch.matmul(x, w) + b
    flags = [z.requires_grad]
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    flags.append(z.requires_grad)
    z = torch.matmul(x, w) + b
    z_det = z.detach()
    flags.append(z_det.requires_grad)
    result["flags"] = flags

    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    first = numpy_of(inp.grad)
    out.backward(torch.ones_like(out), retain_graph=True)
    second = numpy_of(inp.grad)
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    result["jacobian_products"] = [first, second, numpy_of(inp.grad)]
    return result


def optimization_loop(torch, init=None, epochs=2):
    nn = torch.nn
    rng = np.random.default_rng(1)
    images = torch.tensor(rng.random((40, 1, 6, 6)), dtype=torch.float32)
    labels = torch.tensor(rng.integers(0, 10, 40))
    training_data = torch.utils.data.TensorDataset(images[:32], labels[:32])
    test_data = torch.utils.data.TensorDataset(images[32:], labels[32:])
    batch_size = 8
    train_dataloader = torch.utils.data.DataLoader(training_data, batch_size=batch_size)
    test_dataloader = torch.utils.data.DataLoader(test_data, batch_size=batch_size)

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(6 * 6, 32),
                nn.ReLU(),
                nn.Linear(32, 32),
                nn.ReLU(),
                nn.Linear(32, 10),
            )

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    torch.manual_seed(0)
    model = NeuralNetwork()
    result = {"printed": [], "losses": [], "tests": []}
    start_from(torch, model, init, result)
    printed = result["printed"]
    learning_rate = 1e-1

    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

    def train_loop(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        # Set the model to training mode - important for batch normalization and dropout layers
        # Unnecessary in this situation but added for best practices
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            # Compute prediction and loss
            pred = model(X)
            loss = loss_fn(pred, y)

            # Backpropagation
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

            if batch % 2 == 0:
                loss, current = loss.item(), batch * batch_size + len(X)
                printed.append(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")
                result["losses"].append(loss)

    def test_loop(dataloader, model, loss_fn):
        # Set the model to evaluation mode - important for batch normalization and dropout layers
        # Unnecessary in this situation but added for best practices
        model.eval()
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        test_loss, correct = 0, 0

        # Evaluating the model with torch.no_grad() ensures that no gradients are computed during test mode
        # also serves to reduce unnecessary gradient computations and memory usage for tensors with requires_grad=True
        with torch.no_grad():
            for X, y in dataloader:
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()

        test_loss /= num_batches
        correct /= size
        printed.append(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
        result["tests"].append((correct, test_loss))

    for t in range(epochs):
        printed.append(f"Epoch {t+1}\n-------------------------------")
        train_loop(train_dataloader, model, loss_fn, optimizer)
        test_loop(test_dataloader, model, loss_fn)
    printed.append("Done!")
    # the lines compared digit-blind (a float's last printed digit may round either way); the
    # numbers they print are compared within tolerance
    result["printed"] = [re.sub(r"\d", "#", line) for line in printed]
    return result


def test_tensors_transforms_autograd_pages():
    compare_program(tensors_transforms_autograd)


def test_optimization_loop_page():
    compare_program(optimization_loop)

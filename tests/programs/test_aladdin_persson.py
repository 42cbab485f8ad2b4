"""Aladdin Persson's Machine-Learning-Collection PyTorch basics, as their scripts run: the tensor
basics walk-through (initialisation, dtype conversions, NumPy round trips, math with out=,
true_divide, in-place ops, matrix_power, bmm, broadcasting, reductions, sort, clamp, any/all,
fancy and boolean indexing, where, unique, ndimension, numel, view/reshape/t/contiguous, cat,
permute, chunk, unsqueeze/squeeze) with everything it prints compared as text (the library's
name left aside); the simple fully connected network with check_accuracy (model.eval(), no_grad,
scores.max(1), model.train()), init weights through self.modules() with kaiming_uniform_ and
constant_, save_checkpoint/load_checkpoint with "state_dict" and "optimizer", and
ReduceLROnPlateau stepped on the epoch's mean loss."""
import io

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def tensor_basics(torch, init=None):
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args).replace("minitorch", "torch"))

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    # ===== Initializing Tensor =====
    my_tensor = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.float32, device="cpu", requires_grad=True)
    print(my_tensor)
    print(f"Type of Tensor {my_tensor.dtype}")
    print(f"Device Tensor is on {my_tensor.device}")
    print(f"Shape of tensor {my_tensor.shape}")
    print(f"Requires gradient: {my_tensor.requires_grad}")
    x = torch.empty(size=(3, 3))  # Tensor of shape 3x3 with uninitialized data
    print(x.shape, x.dtype)
    x = torch.zeros((3, 3))
    print(x)
    x = torch.rand((3, 3))
    print(x)
    x = torch.ones((3, 3))
    print(x)
    x = torch.eye(5, 5)
    print(x)
    x = torch.arange(start=0, end=5, step=1)
    print(x)
    x = torch.linspace(start=0.1, end=1, steps=10)
    print(x)
    x = torch.empty(size=(1, 5)).normal_(mean=0, std=1)
    print(x)
    x = torch.empty(size=(1, 5)).uniform_(0, 1)
    print(x)
    x = torch.diag(torch.ones(3))
    print(x)
    # Initialize and convert tensors to other types (int, float, double)
    tensor = torch.arange(4)  # [0, 1, 2, 3] Initialized as int64 by default
    print(f"Converted Boolean: {tensor.bool()}")
    print(f"Converted int16 {tensor.short()}")
    print(f"Converted int64 {tensor.long()}")
    print(f"Converted float16 {tensor.half()}")
    print(f"Converted float32 {tensor.float()}")
    print(f"Converted float64 {tensor.double()}")
    # Array to Tensor conversion and vice-versa
    np_array = np.zeros((5, 5))
    tensor = torch.from_numpy(np_array)
    np_array_again = tensor.numpy()
    print(tensor.dtype, type(np_array_again).__name__, np_array_again.dtype)

    # ===== Tensor Math & Comparison Operations =====
    x = torch.tensor([1, 2, 3])
    y = torch.tensor([9, 8, 7])
    # -- Addition --
    z1 = torch.empty(3)
    torch.add(x, y, out=z1)
    print(z1)
    z2 = torch.add(x, y)
    z = x + y
    print(z2, z)
    # -- Subtraction --
    z = x - y
    print(z)
    # -- Division (A bit clunky) --
    z = torch.true_divide(x, y)
    print(z)
    # -- Inplace Operations --
    t = torch.zeros(3)
    t.add_(x)  # Whenever we have operation followed by _ it will mutate the tensor in place
    t += x  # Also inplace: t = t + x is not inplace, bit confusing.
    print(t)
    # -- Exponentiation (Element wise if vector or matrices) --
    z = x.pow(2)
    z = x ** 2
    print(z)
    # -- Simple Comparison --
    z = x > 0
    print(z)
    z = x < 0
    print(z)
    # -- Matrix Multiplication --
    x1 = torch.rand((2, 5))
    x2 = torch.rand((5, 3))
    x3 = torch.mm(x1, x2)  # Matrix multiplication of x1 and x2, out shape: 2x3
    x3 = x1.mm(x2)  # Similar as line above
    print(x3)
    # -- Matrix Exponentiation --
    matrix_exp = torch.rand(5, 5)
    print(matrix_exp.matrix_power(3))
    # -- Element wise Multiplication --
    z = x * y
    print(z)
    # -- Dot product --
    z = torch.dot(x, y)
    print(z)
    # -- Batch Matrix Multiplication --
    batch = 32
    n = 10
    m = 20
    p = 30
    tensor1 = torch.rand((batch, n, m))
    tensor2 = torch.rand((batch, m, p))
    out_bmm = torch.bmm(tensor1, tensor2)  # Will be shape: (b x n x p)
    print(out_bmm.shape, out_bmm[0, :2, :3])
    # -- Example of broadcasting --
    x1 = torch.rand((5, 5))
    x2 = torch.ones((1, 5))
    z = x1 - x2  # Shape of z is 5x5: How?
    z = x1 ** x2  # Shape of z is 5x5: How?
    print(z)
    # Other useful tensor operations
    sum_x = torch.sum(x, dim=0)  # Sum of x across dim=0 (which is the only dim in our case), sum_x = 6
    values, indices = torch.max(x, dim=0)  # Can also do x.max(dim=0)
    print(sum_x, values, indices)
    values, indices = torch.min(x, dim=0)  # Can also do x.min(dim=0)
    print(values, indices)
    abs_x = torch.abs(x)  # Returns x where abs function has been applied to every element
    z = torch.argmax(x, dim=0)  # Gets index of the maximum value
    print(abs_x, z)
    z = torch.argmin(x, dim=0)  # Gets index of the minimum value
    mean_x = torch.mean(x.float(), dim=0)  # mean requires x to be float
    print(z, mean_x)
    z = torch.eq(x, y)  # Element wise comparison, in this case z = [False, False, False]
    print(z)
    sorted_y, indices = torch.sort(y, dim=0, descending=False)
    print(sorted_y, indices)
    z = torch.clamp(x, min=0)
    print(z)
    x = torch.tensor([1, 0, 1, 1, 1], dtype=torch.bool)  # True/False values
    z = torch.any(x)  # will return True, can also do x.any() instead of torch.any(x)
    print(z)
    z = torch.all(x)  # will return False (since not all are True), can also do x.all() instead of torch.all()
    print(z)

    # ============= Tensor Indexing =============
    batch_size = 10
    features = 25
    x = torch.rand((batch_size, features))
    # Get first examples features
    print(x[0].shape)  # shape [25], this is same as doing x[0,:]
    # Get the first feature for all examples
    print(x[:, 0].shape)  # shape [10]
    # For example: Want to access third example in the batch and the first ten features
    print(x[2, 0:10].shape)  # shape: [10]
    # For example we can use this to, assign certain elements
    x[0, 0] = 100
    print(x[0, :3])
    # Fancy Indexing
    x = torch.arange(10)
    indices = [2, 5, 8]
    print(x[indices])  # x[indices] = [2, 5, 8]
    x = torch.rand((3, 5))
    rows = torch.tensor([1, 0])
    cols = torch.tensor([4, 0])
    print(x[rows, cols])  # Gets second row fifth column and first row first column
    # More advanced indexing
    x = torch.arange(10)
    print(x[(x < 2) | (x > 8)])  # will be [0, 1, 9]
    print(x[x.remainder(2) == 0])  # will be [0, 2, 4, 6, 8]
    # Useful operations for indexing
    print(torch.where(x > 5, x, x * 2))  # gives [0, 2, 4, 6, 8, 10, 6, 7, 8, 9], all values x > 5 yield x, else x*2
    x = torch.tensor([0, 0, 1, 2, 2, 3, 4]).unique()  # x = [0, 1, 2, 3, 4]
    print(x)
    print(x.ndimension())  # The number of dimensions, in this case 1. if x.shape is 5x5x5 ndim would be 3
    x = torch.arange(10)
    print(x.numel())  # The number of elements in x (in this case it's trivial because it's just a vector)

    # ============= Tensor Reshaping =============
    x = torch.arange(9)
    # Let's say we want to reshape it to be 3x3
    x_3x3 = x.view(3, 3)
    # We can also do (view and reshape are very similar)
    x_3x3 = x.reshape(3, 3)
    y = x_3x3.t()
    print(y.is_contiguous())  # This will return False and if we try to use view now, it won't work!
    # y.view(9) would cause an error, reshape however won't
    print(y.contiguous().view(9))  # Calling .contiguous() before view and it works
    try:
        y.view(9)
        print("view worked")
    except RuntimeError as error:
        print(type(error).__name__, error)
    # Moving on to another operation, let's say we want to add two tensors dimensions togethor
    x1 = torch.rand(2, 5)
    x2 = torch.rand(2, 5)
    print(torch.cat((x1, x2), dim=0).shape)  # Shape: 4x5
    print(torch.cat((x1, x2), dim=1).shape)  # Shape 2x10
    # Let's say we want to unroll x1 into one long vector with 10 elements, we can do:
    z = x1.view(-1)  # And -1 will unroll everything
    print(z)
    # If we instead have an additional dimension and we wish to keep those as is we can do:
    batch = 64
    x = torch.rand((batch, 2, 5))
    z = x.view(batch, -1)  # And z.shape would be 64x10, this is very useful stuff and is used all the time
    print(z.shape)
    # Let's say we want to switch x axis so that instead of 64x2x5 we have 64x5x2
    z = x.permute(0, 2, 1)
    print(z.shape, z.is_contiguous())
    # Splits x last dimension into chunks of 2 (since 5 is not integer div by 2) the last dimension
    # will be smaller, so it will split it into two tensors: 64x2x3 and 64x2x2
    z = torch.chunk(x, chunks=2, dim=1)
    print(z[0].shape)
    print(z[1].shape)
    # Let's say we want to add an additional dimension
    x = torch.arange(10)  # Shape is [10], let's say we want to add an additional so we have 1x10
    print(x.unsqueeze(0).shape)  # 1x10
    print(x.unsqueeze(1).shape)  # 10x1
    # Let's say we have x which is 1x1x10 and we want to remove a dim so we have 1x10
    x = torch.arange(10).unsqueeze(0).unsqueeze(1)
    # Perhaps unsurprisingly
    z = x.squeeze(1)  # can also do .squeeze(0) both returns 1x10
    print(z.shape)
    return {"printed": printed}


def fully_connected(torch, init=None, num_epochs=3, batch_size=16, learning_rate=0.001):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    from_data = torch.utils.data
    torch.manual_seed(0)
    device = torch.device("cpu")
    input_size, num_classes = 64, 4

    class NN(nn.Module):
        def __init__(self, input_size, num_classes):
            super(NN, self).__init__()
            self.fc1 = nn.Linear(input_size, 50)
            self.fc2 = nn.Linear(50, num_classes)
            self.initialize_weights()

        def forward(self, x):
            x = F.relu(self.fc1(x))
            x = self.fc2(x)
            return x

        def initialize_weights(self):
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    nn.init.kaiming_uniform_(m.weight)
                    nn.init.constant_(m.bias, 0)

    def save_checkpoint(state, filename):
        print_log.append("=> Saving checkpoint")
        torch.save(state, filename)

    def load_checkpoint(checkpoint, model, optimizer):
        print_log.append("=> Loading checkpoint")
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])

    def check_accuracy(loader, model):
        num_correct = 0
        num_samples = 0
        model.eval()
        with torch.no_grad():
            for x, y in loader:
                x = x.to(device=device)
                y = y.to(device=device)
                x = x.reshape(x.shape[0], -1)
                scores = model(x)
                _, predictions = scores.max(1)
                num_correct += (predictions == y).sum()
                num_samples += predictions.size(0)
            accuracy = float(num_correct) / float(num_samples) * 100
            print_log.append(f"Got {num_correct} / {num_samples} with accuracy {accuracy:.2f}")
        model.train()
        return num_correct / num_samples

    rng = np.random.default_rng(0)
    prototypes = rng.standard_normal((num_classes, 1, 8, 8))
    targets = rng.integers(0, num_classes, 96)
    images = (prototypes[targets] + rng.normal(0, 1.0, (96, 1, 8, 8))).astype(np.float32)
    train_dataset = from_data.TensorDataset(torch.from_numpy(images[:64]), torch.from_numpy(targets[:64]))
    test_dataset = from_data.TensorDataset(torch.from_numpy(images[64:]), torch.from_numpy(targets[64:]))
    train_loader = from_data.DataLoader(dataset=train_dataset, batch_size=batch_size, shuffle=False)
    test_loader = from_data.DataLoader(dataset=test_dataset, batch_size=batch_size, shuffle=False)

    model = NN(input_size=input_size, num_classes=num_classes).to(device)
    result, print_log = {}, []
    start_from(torch, model, init, result)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=learning_rate)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.1, patience=0)
    buffer = io.BytesIO()
    epoch_losses, lrs = [], []
    for epoch in range(num_epochs):
        losses = []
        if epoch == 2:
            checkpoint = {"state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}
            save_checkpoint(checkpoint, buffer)
        for batch_idx, (data, targets) in enumerate(train_loader):
            # Get data to cuda if possible
            data = data.to(device=device)
            targets = targets.to(device=device)
            # Get to correct shape
            data = data.reshape(data.shape[0], -1)
            # forward
            scores = model(data)
            loss = criterion(scores, targets)
            losses.append(loss.item())
            # backward
            optimizer.zero_grad()
            loss.backward()
            # gradient descent or adam step
            optimizer.step()
        mean_loss = sum(losses) / len(losses)
        scheduler.step(mean_loss)
        epoch_losses.append(mean_loss)
        lrs.append(optimizer.param_groups[0]["lr"])
    train_acc = check_accuracy(train_loader, model)
    test_acc = check_accuracy(test_loader, model)
    buffer.seek(0)
    load_checkpoint(torch.load(buffer), model, optimizer)
    restored = check_accuracy(test_loader, model)
    result.update(losses=epoch_losses, lrs=lrs, log=print_log, accuracies=[float(a) for a in
                                                                           (train_acc, test_acc, restored)],
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_tensor_basics_printout():
    ref, got = compare_program(tensor_basics)
    assert len(ref["printed"]) > 60
    for want, have in zip(ref["printed"], got["printed"]):
        assert have == want


def test_fully_connected_with_checkpoint_and_plateau():
    ref, got = compare_program(fully_connected)
    assert ref["log"][0] == "=> Saving checkpoint" and ref["log"][-2] == "=> Loading checkpoint"

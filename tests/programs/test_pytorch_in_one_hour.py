"""Sebastian Raschka's "PyTorch in One Hour" (LLMs-from-scratch appendix A) as written: tensor
basics (tensor0d..tensor3d, dtypes, .to(torch.float32), reshape/view/.T/matmul/@), the logistic
regression forward pass with F.binary_cross_entropy, torch.autograd.grad with retain_graph then
loss.backward(), NeuralNetwork of nn.Sequential, the parameter count over requires_grad, a forward
under no_grad with torch.softmax, ToyDataset and DataLoader(shuffle=True, drop_last=True) from
torch.manual_seed(123), the training loop printing f"{loss:.2f}" of a 0-d tensor, predictions,
compute_accuracy summing torch.sum(compare) into a float, the device chosen through cuda/mps
availability, and torch.save/torch.load(weights_only=True) of the state_dict."""
import io
from contextlib import redirect_stdout

from prog_helpers import compare_program, numpy_of


def one_hour(torch, init=None, num_epochs=3):
    F = torch.nn.functional  # the guide's `import torch.nn.functional as F`
    grad = torch.autograd.grad
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader
    result = {}
    # A.2 tensors
    tensor0d = torch.tensor(1)
    tensor1d = torch.tensor([1, 2, 3])
    tensor2d = torch.tensor([[1, 2], [3, 4]])
    tensor3d = torch.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
    floatvec = torch.tensor([1.0, 2.0, 3.0])
    result["dtypes"] = [str(t.dtype).split(".")[1] for t in (tensor0d, tensor1d, floatvec, tensor1d.to(torch.float32))]
    tensor2d = torch.tensor([[1, 2, 3], [4, 5, 6]])
    result.update(shape=list(tensor2d.shape), reshaped=numpy_of(tensor2d.reshape(3, 2)),
                  viewed=numpy_of(tensor2d.view(3, 2)), T=numpy_of(tensor2d.T),
                  matmul=numpy_of(tensor2d.matmul(tensor2d.T)), at=numpy_of(tensor2d @ tensor2d.T),
                  t3=numpy_of(tensor3d), t0=tensor0d.item())
    # A.3, A.4 logistic regression and autograd
    y = torch.tensor([1.0])  # true label
    x1 = torch.tensor([1.1])  # input feature
    w1 = torch.tensor([2.2], requires_grad=True)  # weight parameter
    b = torch.tensor([0.0], requires_grad=True)  # bias unit
    z = x1 * w1 + b  # net input
    a = torch.sigmoid(z)  # activation & output
    loss = F.binary_cross_entropy(a, y)
    grad_L_w1 = grad(loss, w1, retain_graph=True)
    grad_L_b = grad(loss, b, retain_graph=True)
    loss.backward()
    result.update(bce=loss.item(), grad_L_w1=numpy_of(grad_L_w1[0]), grad_L_b=numpy_of(grad_L_b[0]),
                  w1_grad=numpy_of(w1.grad), b_grad=numpy_of(b.grad))

    # A.5 multilayer networks
    class NeuralNetwork(torch.nn.Module):
        def __init__(self, num_inputs, num_outputs):
            super().__init__()
            self.layers = torch.nn.Sequential(
                # 1st hidden layer
                torch.nn.Linear(num_inputs, 30),
                torch.nn.ReLU(),
                # 2nd hidden layer
                torch.nn.Linear(30, 20),
                torch.nn.ReLU(),
                # output layer
                torch.nn.Linear(20, num_outputs),
            )

        def forward(self, x):
            logits = self.layers(x)
            return logits

    torch.manual_seed(123)
    model = NeuralNetwork(50, 3)
    num_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    X = torch.rand((1, 50))
    with torch.no_grad():
        out = torch.softmax(model(X), dim=1)
    result.update(num_params=num_params, w0_shape=list(model.layers[0].weight.shape),
                  first_weights=numpy_of(model.layers[0].weight), probs50=numpy_of(out), X=numpy_of(X))

    # A.6 data loaders
    X_train = torch.tensor([[-1.2, 3.1], [-0.9, 2.9], [-0.5, 2.6], [2.3, -1.1], [2.7, -1.5]])
    y_train = torch.tensor([0, 0, 0, 1, 1])
    X_test = torch.tensor([[-0.8, 2.8], [2.6, -1.6]])
    y_test = torch.tensor([0, 1])

    class ToyDataset(Dataset):
        def __init__(self, X, y):
            self.features = X
            self.labels = y

        def __getitem__(self, index):
            one_x = self.features[index]
            one_y = self.labels[index]
            return one_x, one_y

        def __len__(self):
            return self.labels.shape[0]

    train_ds = ToyDataset(X_train, y_train)
    test_ds = ToyDataset(X_test, y_test)
    torch.manual_seed(123)
    train_loader = DataLoader(dataset=train_ds, batch_size=2, shuffle=True, num_workers=0, drop_last=True)
    test_loader = DataLoader(dataset=test_ds, batch_size=2, shuffle=False, num_workers=0)
    batches = [(numpy_of(x), numpy_of(y)) for x, y in train_loader]

    # A.7 training loop
    if torch.cuda.is_available():
        device = torch.device("cuda")
    elif torch.backends.mps.is_available():
        device = torch.device("mps")
    else:
        device = torch.device("cpu")
    torch.manual_seed(123)
    model = NeuralNetwork(num_inputs=2, num_outputs=2)
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    log = io.StringIO()
    with redirect_stdout(log):
        for epoch in range(num_epochs):
            model.train()
            for batch_idx, (features, labels) in enumerate(train_loader):
                features, labels = features.to(device), labels.to(device)
                logits = model(features)
                loss = F.cross_entropy(logits, labels)  # Loss function
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                # Logging
                print(f"Epoch: {epoch+1:03d}/{num_epochs:03d}"
                      f" | Batch {batch_idx:03d}/{len(train_loader):03d}"
                      f" | Train/Val Loss: {loss:.2f}")
            model.eval()
    model.eval()
    with torch.no_grad():
        outputs = model(X_train.to(device))
    torch.set_printoptions(sci_mode=False)
    probas = torch.softmax(outputs, dim=1)
    printed = str(probas)
    torch.set_printoptions(profile="default")
    predictions = torch.argmax(probas, dim=1)

    def compute_accuracy(model, dataloader):
        model = model.eval()
        correct = 0.0
        total_examples = 0
        for idx, (features, labels) in enumerate(dataloader):
            features, labels = features.to(device), labels.to(device)
            with torch.no_grad():
                logits = model(features)
            predictions = torch.argmax(logits, dim=1)
            compare = labels == predictions
            correct += torch.sum(compare)
            total_examples += len(compare)
        return (correct / total_examples).item()

    # A.8 saving and loading
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    loaded = NeuralNetwork(2, 2)  # needs to match the original model exactly
    loaded.load_state_dict(torch.load(buf, weights_only=True))
    result.update(batches=batches, log=log.getvalue(), probas=numpy_of(probas), printed=printed,
                  predictions=numpy_of(predictions), n_correct=torch.sum(predictions == y_train.to(device)).item(),
                  train_acc=compute_accuracy(model, train_loader), test_acc=compute_accuracy(model, test_loader),
                  loaded=numpy_of(loaded(X_test)))
    return result


def test_pytorch_in_one_hour():
    ref, got = compare_program(one_hour)
    assert got["log"].count("Train/Val Loss") == 6
    assert ref["n_correct"] == 5 and ref["test_acc"] == 1.0

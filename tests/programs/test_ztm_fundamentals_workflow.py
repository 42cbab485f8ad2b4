"""mrdbourke's "Zero to Mastery Learn PyTorch" notebooks 00 and 01 as written, randomness from
torch.manual_seed (both libraries draw PyTorch's CPU streams). 00 PyTorch fundamentals: scalar,
vector, MATRIX and TENSOR with .ndim/.shape/.item(), torch.rand(size=(224, 224, 3)),
zeros/ones/arange(start=0, end=10, step=1)/zeros_like(input=...), float_16_tensor by
torch.tensor(..., dtype=torch.float16, device=None, requires_grad=False), arithmetic and
torch.multiply, matmul against @ and a hand loop, tensor_A @ tensor_B.T, an nn.Linear(in_features=2,
out_features=6) on the matrix, min/max/mean of .type(torch.float32)/sum, argmax/argmin,
.type(torch.float16)/.type(torch.int8), reshape/view (sharing memory through z[:, 0] = 5),
torch.stack, squeeze/unsqueeze/permute, indexing, the NumPy bridge both ways,
reproducibility (two torch.rand(3, 4) unequal, equal after torch.manual_seed(seed=RANDOM_SEED) and
torch.random.manual_seed), device-agnostic code (device = "cuda" if torch.cuda.is_available() else
"cpu", tensor.to(device), .cpu().numpy()). 01 workflow: X = torch.arange(start, end,
step).unsqueeze(dim=1), y = weight * X + bias, an 80/20 split, LinearRegressionModel of two
nn.Parameter(torch.randn(1, dtype=torch.float), requires_grad=True), list(parameters()) and
state_dict(), predictions under torch.inference_mode(), nn.L1Loss, SGD(params=..., lr=0.01), the
training loop printing f"Epoch: {epoch} | MAE Train Loss: {loss} | MAE Test Loss: {test_loss} "
(a 0-d tensor formatted by its item()), loss.detach().numpy() kept for the curves, torch.save of the
state_dict to models/01_pytorch_workflow_model_0.pth through pathlib and loaded into a new
model, then LinearRegressionModelV2 (an nn.Linear(1, 1)) moved to the device and trained 1000 epochs,
next(model.parameters()).device. The printed text and every number match PyTorch's."""
from pathlib import Path

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def fundamentals(torch):
    res = {}
    with captured_run(torch) as out:
        scalar = torch.tensor(7)
        print(scalar, scalar.ndim, scalar.item())
        vector = torch.tensor([7, 7])
        print(vector, vector.ndim, vector.shape)
        MATRIX = torch.tensor([[7, 8], [9, 10]])
        print(MATRIX, MATRIX.ndim, MATRIX[1], MATRIX.shape)
        TENSOR = torch.tensor([[[1, 2, 3], [3, 6, 9], [2, 4, 5]]])
        print(TENSOR, TENSOR.ndim, TENSOR.shape, TENSOR[0])
        torch.manual_seed(42)
        random_tensor = torch.rand(size=(3, 4))
        print(random_tensor, random_tensor.dtype)
        random_image_size_tensor = torch.rand(size=(224, 224, 3))
        print(random_image_size_tensor.shape, random_image_size_tensor.ndim)
        res["image_sum"] = random_image_size_tensor.sum().item()
        zeros = torch.zeros(size=(3, 4))
        ones = torch.ones(size=(3, 4))
        print(zeros, zeros.dtype, ones, ones.dtype)
        zero_to_ten = torch.arange(start=0, end=10, step=1)
        print(zero_to_ten, torch.zeros_like(input=zero_to_ten))
        float_32_tensor = torch.tensor([3.0, 6.0, 9.0], dtype=None, device=None, requires_grad=False)
        print(float_32_tensor.shape, float_32_tensor.dtype, float_32_tensor.device)
        float_16_tensor = torch.tensor([3.0, 6.0, 9.0], dtype=torch.float16)
        print(float_16_tensor.dtype, float_16_tensor * float_32_tensor)
        some_tensor = torch.rand(3, 4)
        print(f"Shape of tensor: {some_tensor.shape}")
        print(f"Datatype of tensor: {some_tensor.dtype}")
        print(f"Device tensor is stored on: {some_tensor.device}")

        tensor = torch.tensor([1, 2, 3])
        print(tensor + 10, tensor * 10, tensor - 10, torch.multiply(tensor, 10), tensor * tensor)
        tensor = tensor - 10
        tensor = tensor + 10
        print(tensor, torch.matmul(tensor, tensor), tensor @ tensor)
        value = 0
        for i in range(len(tensor)):
            value += tensor[i] * tensor[i]
        print(value)
        tensor_A = torch.tensor([[1, 2], [3, 4], [5, 6]], dtype=torch.float32)
        tensor_B = torch.tensor([[7, 10], [8, 11], [9, 12]], dtype=torch.float32)
        print(tensor_A)
        print(tensor_B.T)
        print(f"Original shapes: tensor_A = {tensor_A.shape}, tensor_B = {tensor_B.shape}\n")
        print(f"New shapes: tensor_A = {tensor_A.shape} (same as above), tensor_B.T = {tensor_B.T.shape}\n")
        print(f"Multiplying: {tensor_A.shape} * {tensor_B.T.shape} <- inner dimensions match\n")
        output = torch.matmul(tensor_A, tensor_B.T)
        print(output)
        print(f"\nOutput shape: {output.shape}")
        print(torch.mm(tensor_A, tensor_B.T))
        try:
            torch.matmul(tensor_A, tensor_B)
        except RuntimeError as e:
            print(type(e).__name__, e)
        torch.manual_seed(42)
        linear = torch.nn.Linear(in_features=2, out_features=6)
        x = tensor_A
        output = linear(x)
        print(f"Input shape: {x.shape}\n")
        print(f"Output:\n{output}\n\nOutput shape: {output.shape}")
        res["linear_out"] = numpy_of(output)

        x = torch.arange(0, 100, 10)
        print(x)
        print(f"Minimum: {x.min()}")
        print(f"Maximum: {x.max()}")
        print(f"Mean: {x.type(torch.float32).mean()}")
        print(f"Sum: {x.sum()}")
        print(torch.max(x), torch.min(x), torch.mean(x.type(torch.float32)), torch.sum(x))
        try:
            x.mean()
        except RuntimeError as e:
            print(type(e).__name__, e)
        tensor = torch.arange(10, 100, 10)
        print(f"Tensor: {tensor}")
        print(f"Index where max value occurs: {tensor.argmax()}")
        print(f"Index where min value occurs: {tensor.argmin()}")
        tensor = torch.arange(10., 100., 10.)
        print(tensor.dtype)
        tensor_float16 = tensor.type(torch.float16)
        print(tensor_float16)
        tensor_int8 = tensor.type(torch.int8)
        print(tensor_int8)

        x = torch.arange(1., 8.)
        print(x, x.shape)
        x_reshaped = x.reshape(1, 7)
        print(x_reshaped, x_reshaped.shape)
        z = x.view(1, 7)
        print(z, z.shape)
        z[:, 0] = 5
        print(z, x)
        x_stacked = torch.stack([x, x, x, x], dim=0)
        print(x_stacked)
        print(f"Previous tensor: {x_reshaped}")
        print(f"Previous shape: {x_reshaped.shape}")
        x_squeezed = x_reshaped.squeeze()
        print(f"\nNew tensor: {x_squeezed}")
        print(f"New shape: {x_squeezed.shape}")
        x_unsqueezed = x_squeezed.unsqueeze(dim=0)
        print(f"\nNew tensor: {x_unsqueezed}")
        print(f"New shape: {x_unsqueezed.shape}")
        x_original = torch.rand(size=(224, 224, 3))
        x_permuted = x_original.permute(2, 0, 1)
        print(f"Previous shape: {x_original.shape}")
        print(f"New shape: {x_permuted.shape}")
        res["permuted_strides"] = x_permuted.stride()

        x = torch.arange(1, 10).reshape(1, 3, 3)
        print(x, x.shape)
        print(f"First square bracket:\n{x[0]}")
        print(f"Second square bracket: {x[0][0]}")
        print(f"Third square bracket: {x[0][0][0]}")
        print(x[:, 0], x[:, :, 1], x[:, 1, 1], x[0, 0, :])

        array = np.arange(1.0, 8.0)
        tensor = torch.from_numpy(array)
        print(array, tensor)
        print(torch.arange(1.0, 8.0).dtype, tensor.dtype)
        array = array + 1
        print(array, tensor)
        tensor = torch.ones(7)
        numpy_tensor = tensor.numpy()
        print(tensor, numpy_tensor, numpy_tensor.dtype)
        tensor = tensor + 1
        print(tensor, numpy_tensor)

        random_tensor_A = torch.rand(3, 4)
        random_tensor_B = torch.rand(3, 4)
        print(f"Tensor A:\n{random_tensor_A}\n")
        print(f"Tensor B:\n{random_tensor_B}\n")
        print("Does Tensor A equal Tensor B? (anywhere)")
        print(random_tensor_A == random_tensor_B)
        RANDOM_SEED = 42
        torch.manual_seed(seed=RANDOM_SEED)
        random_tensor_C = torch.rand(3, 4)
        torch.random.manual_seed(seed=RANDOM_SEED)
        random_tensor_D = torch.rand(3, 4)
        print(f"Tensor C:\n{random_tensor_C}\n")
        print(f"Tensor D:\n{random_tensor_D}\n")
        print("Does Tensor C equal Tensor D? (anywhere)")
        print(random_tensor_C == random_tensor_D)

        device = "cuda" if torch.cuda.is_available() else "cpu"
        tensor = torch.tensor([1, 2, 3])
        print(tensor, tensor.device)
        tensor_on_gpu = tensor.to(device)
        tensor_back_on_cpu = tensor_on_gpu.cpu().numpy()
        print(tensor_back_on_cpu, tensor_on_gpu.cpu())
    res["printed"] = printed_lines(out)
    res["device"] = device
    return res


def workflow(torch, tmp):
    nn = torch.nn  # from torch import nn

    res = {}
    with captured_run(torch) as out:
        weight = 0.7
        bias = 0.3
        start = 0
        end = 1
        step = 0.02
        X = torch.arange(start, end, step).unsqueeze(dim=1)
        y = weight * X + bias
        print(X[:10], y[:10])
        train_split = int(0.8 * len(X))
        X_train, y_train = X[:train_split], y[:train_split]
        X_test, y_test = X[train_split:], y[train_split:]
        print(len(X_train), len(y_train), len(X_test), len(y_test))

        class LinearRegressionModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.weights = nn.Parameter(torch.randn(1, dtype=torch.float), requires_grad=True)
                self.bias = nn.Parameter(torch.randn(1, dtype=torch.float), requires_grad=True)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.weights * x + self.bias

        torch.manual_seed(42)
        model_0 = LinearRegressionModel()
        print(list(model_0.parameters()))
        print(model_0.state_dict())
        with torch.inference_mode():
            y_preds = model_0(X_test)
        print(f"Number of testing samples: {len(X_test)}")
        print(f"Number of predictions made: {len(y_preds)}")
        print(f"Predicted values:\n{y_preds}")
        print(y_test - y_preds)

        loss_fn = nn.L1Loss()
        optimizer = torch.optim.SGD(params=model_0.parameters(), lr=0.01)
        torch.manual_seed(42)
        epochs = 100
        train_loss_values = []
        test_loss_values = []
        epoch_count = []
        for epoch in range(epochs):
            model_0.train()
            y_pred = model_0(X_train)
            loss = loss_fn(y_pred, y_train)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            model_0.eval()
            with torch.inference_mode():
                test_pred = model_0(X_test)
                test_loss = loss_fn(test_pred, y_test.type(torch.float))
                if epoch % 10 == 0:
                    epoch_count.append(epoch)
                    train_loss_values.append(loss.detach().numpy())
                    test_loss_values.append(test_loss.detach().numpy())
                    print(f"Epoch: {epoch} | MAE Train Loss: {loss} | MAE Test Loss: {test_loss} ")
        print("The model learned the following values for weights and bias:")
        print(model_0.state_dict())
        print("\nAnd the original values for weights and bias are:")
        print(f"weights: {weight}, bias: {bias}")
        model_0.eval()
        with torch.inference_mode():
            y_preds = model_0(X_test)

        MODEL_PATH = Path(tmp) / "models"
        MODEL_PATH.mkdir(parents=True, exist_ok=True)
        MODEL_NAME = "01_pytorch_workflow_model_0.pth"
        MODEL_SAVE_PATH = MODEL_PATH / MODEL_NAME
        torch.save(obj=model_0.state_dict(), f=MODEL_SAVE_PATH)
        loaded_model_0 = LinearRegressionModel()
        print(loaded_model_0.load_state_dict(torch.load(f=MODEL_SAVE_PATH)))
        loaded_model_0.eval()
        with torch.inference_mode():
            loaded_model_preds = loaded_model_0(X_test)
        print(y_preds == loaded_model_preds)

        device = "cuda" if torch.cuda.is_available() else "cpu"

        class LinearRegressionModelV2(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear_layer = nn.Linear(in_features=1, out_features=1)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.linear_layer(x)

        torch.manual_seed(42)
        model_1 = LinearRegressionModelV2()
        print(model_1, model_1.state_dict())
        print(next(model_1.parameters()).device)
        model_1.to(device)
        loss_fn = nn.L1Loss()
        optimizer = torch.optim.SGD(params=model_1.parameters(), lr=0.01)
        torch.manual_seed(42)
        epochs = 1000
        X_train = X_train.to(device)
        X_test = X_test.to(device)
        y_train = y_train.to(device)
        y_test = y_test.to(device)
        for epoch in range(epochs):
            model_1.train()
            y_pred = model_1(X_train)
            loss = loss_fn(y_pred, y_train)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            model_1.eval()
            with torch.inference_mode():
                test_pred = model_1(X_test)
                test_loss = loss_fn(test_pred, y_test)
            if epoch % 100 == 0:
                print(f"Epoch: {epoch} | Train loss: {loss} | Test loss: {test_loss}")
        from pprint import pprint
        pprint(model_1.state_dict())
        model_1.eval()
        with torch.inference_mode():
            y_preds_1 = model_1(X_test)
        MODEL_SAVE_PATH = MODEL_PATH / "01_pytorch_workflow_model_1.pth"
        torch.save(obj=model_1.state_dict(), f=MODEL_SAVE_PATH)
        loaded_model_1 = LinearRegressionModelV2()
        loaded_model_1.load_state_dict(torch.load(MODEL_SAVE_PATH))
        loaded_model_1.to(device)
        print(f"Loaded model:\n{loaded_model_1}")
        print(f"Model on device:\n{next(loaded_model_1.parameters()).device}")
        loaded_model_1.eval()
        with torch.inference_mode():
            loaded_model_1_preds = loaded_model_1(X_test)
        print(y_preds_1 == loaded_model_1_preds)
    res.update(printed=printed_lines(out), train_curve=np.array(train_loss_values),
               test_curve=np.array(test_loss_values), epoch_count=epoch_count,
               preds=numpy_of(y_preds), preds_1=numpy_of(y_preds_1),
               params=[numpy_of(p) for p in model_1.parameters()])
    return res


def test_ztm_00_fundamentals():
    ref, got = compare_program(lambda torch, init=None: fundamentals(torch))
    assert "Does Tensor C equal Tensor D? (anywhere)" in got["printed"]


def test_ztm_01_workflow(tmp_path):
    ref, got = compare_program(lambda torch, init=None: workflow(torch, tmp_path / torch.__name__))
    assert got["train_curve"][-1] < got["train_curve"][0]
    assert any(line.startswith("Epoch: 90 | MAE Train Loss: 0.") for line in got["printed"])

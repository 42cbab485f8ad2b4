"""mrdbourke's "Zero to Mastery Learn PyTorch" notebook 02 (neural network classification) as
written, with scikit-learn's make_circles/make_blobs/train_test_split as the notebook calls them and
randomness from torch.manual_seed (both libraries draw PyTorch's CPU streams):
torch.from_numpy(X).type(torch.float), CircleModelV0 (two nn.Linear) and its nn.Sequential
replacement moved .to(device), untrained predictions, nn.BCEWithLogitsLoss, SGD(params=...,
lr=0.1), accuracy_fn by torch.eq(y_true, y_pred).sum().item(), logits -> torch.sigmoid ->
torch.round and the squeeze()d comparison, the training loop printing f"Epoch: {epoch} | Loss:
{loss:.5f}, Accuracy: {acc:.2f}% | Test loss: {test_loss:.5f}, Test acc: {test_acc:.2f}%", CircleModelV1
(three layers, 1000 epochs), the straight-line check (model_2 of nn.Sequential Linears with
nn.L1Loss on torch.arange(start, end, step).unsqueeze(dim=1)), CircleModelV2 with nn.ReLU, the
hand-written relu by torch.maximum(torch.tensor(0), x) and sigmoid 1 / (1 + torch.exp(-x)) on
torch.arange(-10, 10, 1, dtype=torch.float32); the multi-class BlobModel (nn.Sequential stack
with ReLU, y_blob by .type(torch.LongTensor)), nn.CrossEntropyLoss, torch.softmax(y_logits,
dim=1), argmax(dim=1) and the accuracy per epoch. The printed text and every number match."""

import numpy as np
import pytest

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def classification(torch, init=None, epochs_v1=1000, epochs_v2=1000):
    datasets = pytest.importorskip("sklearn.datasets")
    from sklearn.model_selection import train_test_split

    nn = torch.nn
    res = {}
    with captured_run(torch) as out:
        n_samples = 1000
        X, y = datasets.make_circles(n_samples, noise=0.03, random_state=42)
        print(f"First 5 X features:\n{X[:5]}")
        print(f"\nFirst 5 y labels:\n{y[:5]}")
        X = torch.from_numpy(X).type(torch.float)
        y = torch.from_numpy(y).type(torch.float)
        print(X[:5], y[:5])
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
        print(len(X_train), len(X_test), len(y_train), len(y_test))
        device = "cuda" if torch.cuda.is_available() else "cpu"

        class CircleModelV0(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer_1 = nn.Linear(in_features=2, out_features=5)
                self.layer_2 = nn.Linear(in_features=5, out_features=1)

            def forward(self, x):
                return self.layer_2(self.layer_1(x))

        torch.manual_seed(42)
        model_0 = CircleModelV0().to(device)
        print(model_0)
        model_0 = nn.Sequential(
            nn.Linear(in_features=2, out_features=5),
            nn.Linear(in_features=5, out_features=1)
        ).to(device)
        print(model_0)
        untrained_preds = model_0(X_test.to(device))
        print(f"Length of predictions: {len(untrained_preds)}, Shape: {untrained_preds.shape}")
        print(f"Length of test samples: {len(y_test)}, Shape: {y_test.shape}")
        print(f"\nFirst 10 predictions:\n{untrained_preds[:10]}")
        print(f"\nFirst 10 test labels:\n{y_test[:10]}")
        loss_fn = nn.BCEWithLogitsLoss()
        optimizer = torch.optim.SGD(params=model_0.parameters(), lr=0.1)

        def accuracy_fn(y_true, y_pred):
            correct = torch.eq(y_true, y_pred).sum().item()
            acc = (correct / len(y_pred)) * 100
            return acc

        y_logits = model_0(X_test.to(device))[:5]
        print(y_logits)
        y_pred_probs = torch.sigmoid(y_logits)
        print(y_pred_probs)
        y_preds = torch.round(y_pred_probs)
        y_pred_labels = torch.round(torch.sigmoid(model_0(X_test.to(device))[:5]))
        print(torch.eq(y_preds.squeeze(), y_pred_labels.squeeze()))
        print(y_preds.squeeze())

        def train_binary(model, optimizer, epochs, every, X_train, y_train, X_test, y_test):
            torch.manual_seed(42)
            X_train, y_train = X_train.to(device), y_train.to(device)
            X_test, y_test = X_test.to(device), y_test.to(device)
            for epoch in range(epochs):
                model.train()
                y_logits = model(X_train).squeeze()
                y_pred = torch.round(torch.sigmoid(y_logits))
                loss = loss_fn(y_logits, y_train)
                acc = accuracy_fn(y_true=y_train, y_pred=y_pred)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                model.eval()
                with torch.inference_mode():
                    test_logits = model(X_test).squeeze()
                    test_pred = torch.round(torch.sigmoid(test_logits))
                    test_loss = loss_fn(test_logits, y_test)
                    test_acc = accuracy_fn(y_true=y_test, y_pred=test_pred)
                if epoch % every == 0:
                    print(f"Epoch: {epoch} | Loss: {loss:.5f}, Accuracy: {acc:.2f}% | Test loss: {test_loss:.5f}, Test acc: {test_acc:.2f}%")
            return loss.item(), test_acc

        res["v0"] = train_binary(model_0, optimizer, 100, 10, X_train, y_train, X_test, y_test)

        class CircleModelV1(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer_1 = nn.Linear(in_features=2, out_features=10)
                self.layer_2 = nn.Linear(in_features=10, out_features=10)
                self.layer_3 = nn.Linear(in_features=10, out_features=1)

            def forward(self, x):
                return self.layer_3(self.layer_2(self.layer_1(x)))

        torch.manual_seed(42)
        model_1 = CircleModelV1().to(device)
        optimizer = torch.optim.SGD(model_1.parameters(), lr=0.1)
        res["v1"] = train_binary(model_1, optimizer, epochs_v1, 100, X_train, y_train, X_test, y_test)

        weight = 0.7
        bias = 0.3
        start = 0
        end = 1
        step = 0.01
        X_regression = torch.arange(start, end, step).unsqueeze(dim=1)
        y_regression = weight * X_regression + bias
        train_split = int(0.8 * len(X_regression))
        X_train_regression, y_train_regression = X_regression[:train_split], y_regression[:train_split]
        X_test_regression, y_test_regression = X_regression[train_split:], y_regression[train_split:]
        model_2 = nn.Sequential(
            nn.Linear(in_features=1, out_features=10),
            nn.Linear(in_features=10, out_features=10),
            nn.Linear(in_features=10, out_features=1)
        ).to(device)
        loss_fn_reg = nn.L1Loss()
        optimizer = torch.optim.SGD(model_2.parameters(), lr=0.1)
        torch.manual_seed(42)
        epochs = 1000
        X_train_regression, y_train_regression = X_train_regression.to(device), y_train_regression.to(device)
        X_test_regression, y_test_regression = X_test_regression.to(device), y_test_regression.to(device)
        for epoch in range(epochs):
            y_pred = model_2(X_train_regression)
            loss = loss_fn_reg(y_pred, y_train_regression)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            model_2.eval()
            with torch.inference_mode():
                test_pred = model_2(X_test_regression)
                test_loss = loss_fn_reg(test_pred, y_test_regression)
            if epoch % 100 == 0:
                print(f"Epoch: {epoch} | Train loss: {loss:.5f}, Test loss: {test_loss:.5f}")
        model_2.eval()
        with torch.inference_mode():
            # 1000 full-batch L1 steps at lr 0.1 oscillate about the line: rounding grows to ~1e-3
            res["own"] = {"regression_preds": numpy_of(model_2(X_test_regression))}

        class CircleModelV2(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer_1 = nn.Linear(in_features=2, out_features=10)
                self.layer_2 = nn.Linear(in_features=10, out_features=10)
                self.layer_3 = nn.Linear(in_features=10, out_features=1)
                self.relu = nn.ReLU()

            def forward(self, x):
                return self.layer_3(self.relu(self.layer_2(self.relu(self.layer_1(x)))))

        model_3 = CircleModelV2().to(device)
        print(model_3)
        optimizer = torch.optim.SGD(model_3.parameters(), lr=0.1)
        res["v2"] = train_binary(model_3, optimizer, epochs_v2, 100, X_train, y_train, X_test, y_test)
        model_3.eval()
        with torch.inference_mode():
            y_preds = torch.round(torch.sigmoid(model_3(X_test))).squeeze()
        print(y_preds[:10], y[:10])
        res["v2_preds"] = numpy_of(y_preds)

        A = torch.arange(-10, 10, 1, dtype=torch.float32)
        print(A)

        def relu(x):
            return torch.maximum(torch.tensor(0), x)

        def sigmoid(x):
            return 1 / (1 + torch.exp(-x))

        print(relu(A), sigmoid(A))
        res["relu"], res["sigmoid"] = numpy_of(relu(A)), numpy_of(sigmoid(A))

        NUM_CLASSES = 4
        NUM_FEATURES = 2
        RANDOM_SEED = 42
        X_blob, y_blob = datasets.make_blobs(n_samples=1000, n_features=NUM_FEATURES, centers=NUM_CLASSES,
                                             cluster_std=1.5, random_state=RANDOM_SEED)
        X_blob = torch.from_numpy(X_blob).type(torch.float)
        y_blob = torch.from_numpy(y_blob).type(torch.LongTensor)
        print(X_blob[:5], y_blob[:5])
        X_blob_train, X_blob_test, y_blob_train, y_blob_test = train_test_split(
            X_blob, y_blob, test_size=0.2, random_state=RANDOM_SEED)

        class BlobModel(nn.Module):
            def __init__(self, input_features, output_features, hidden_units=8):
                super().__init__()
                self.linear_layer_stack = nn.Sequential(
                    nn.Linear(in_features=input_features, out_features=hidden_units),
                    nn.ReLU(),
                    nn.Linear(in_features=hidden_units, out_features=hidden_units),
                    nn.ReLU(),
                    nn.Linear(in_features=hidden_units, out_features=output_features),
                )

            def forward(self, x):
                return self.linear_layer_stack(x)

        model_4 = BlobModel(input_features=NUM_FEATURES, output_features=NUM_CLASSES, hidden_units=8).to(device)
        print(model_4)
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model_4.parameters(), lr=0.1)
        print(model_4(X_blob_train.to(device))[:5])
        print(model_4(X_blob_train.to(device))[0].shape, NUM_CLASSES)
        y_logits = model_4(X_blob_test.to(device))
        y_pred_probs = torch.softmax(y_logits, dim=1)
        print(y_logits[:5])
        print(y_pred_probs[:5])
        print(torch.sum(y_pred_probs[0]))  # 1.0000 in PyTorch's float32 sum, 1. in minitorch's
        print(y_pred_probs[0])
        print(torch.argmax(y_pred_probs[0]))
        torch.manual_seed(42)
        epochs = 100
        X_blob_train, y_blob_train = X_blob_train.to(device), y_blob_train.to(device)
        X_blob_test, y_blob_test = X_blob_test.to(device), y_blob_test.to(device)
        for epoch in range(epochs):
            model_4.train()
            y_logits = model_4(X_blob_train)
            y_pred = torch.softmax(y_logits, dim=1).argmax(dim=1)
            loss = loss_fn(y_logits, y_blob_train)
            acc = accuracy_fn(y_true=y_blob_train, y_pred=y_pred)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            model_4.eval()
            with torch.inference_mode():
                test_logits = model_4(X_blob_test)
                test_pred = torch.softmax(test_logits, dim=1).argmax(dim=1)
                test_loss = loss_fn(test_logits, y_blob_test)
                test_acc = accuracy_fn(y_true=y_blob_test, y_pred=test_pred)
            if epoch % 10 == 0:
                print(f"Epoch: {epoch} | Loss: {loss:.5f}, Acc: {acc:.2f}% | Test Loss: {test_loss:.5f}, Test Acc: {test_acc:.2f}%")
        model_4.eval()
        with torch.inference_mode():
            y_logits = model_4(X_blob_test)
        print(y_logits[:10])
        y_pred_probs = torch.softmax(y_logits, dim=1)
        y_preds = y_pred_probs.argmax(dim=1)
        print(f"Predictions: {y_preds[:10]}\nLabels: {y_blob_test[:10]}")
        print(f"Test accuracy: {accuracy_fn(y_true=y_blob_test, y_pred=y_preds)}%")
        res["blob_preds"] = numpy_of(y_preds)
        res["blob_dtype"] = str(y_blob.dtype).replace("minitorch", "torch")
    res["printed"] = printed_lines(out)
    return res


def test_ztm_02_classification():
    ref, got = compare_program(classification, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(got["own"]["regression_preds"], ref["own"]["regression_preds"], rtol=5e-3)
    assert got["blob_dtype"] == "torch.int64"
    assert got["v2"][1] > got["v0"][1]  # the non-linear model separates the circles better

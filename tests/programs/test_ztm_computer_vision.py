"""mrdbourke's "Zero to Mastery Learn PyTorch" notebook 03 (computer vision) as written, torchvision's
FashionMNIST replaced by a local Dataset of 28x28 uint8 images of ten patterns with the same
interface (train= and transform=ToTensor(), (image, label) items, .classes and .class_to_idx), and
randomness from torch.manual_seed (both libraries draw PyTorch's CPU streams): DataLoader(batch_size=
BATCH_SIZE, shuffle=True) and next(iter(...)), torch.randint(0, len(batch), size=[1]).item(),
nn.Flatten's output shape, FashionMNISTModelV0 (Flatten, two Linears) trained with train and test loops
written in the notebook over tqdm(range(epochs)) (train_loss accumulated from loss, divided by
len(train_dataloader), batch % 400 progress prints, test_loss/test_acc under inference_mode),
eval_model returning {"model_name": model.__class__.__name__, "model_loss": loss.item(), "model_acc":
acc}, FashionMNISTModelV1 (ReLU) and the train_step/test_step functions with .to(device),
FashionMNISTModelV2 (TinyVGG: Conv2d(kernel_size=3, stride=1, padding=1)/ReLU/MaxPool2d twice, a
Linear of hidden_units*7*7); the convolution cells (torch.randn(size=(32, 3, 64, 64)), an unbatched
conv_layer(test_image), Conv2d(kernel_size=(5, 5), stride=2) with its state_dict shapes,
MaxPool2d(kernel_size=2) on torch.randn(size=(1, 1, 2, 2))); make_predictions (unsqueeze, softmax
of the squeezed logit, torch.stack) over random.sample(list(test_data), k=9) from random.seed(42),
pred_probs.argmax(dim=1); the model saved with torch.save(obj=model_2.state_dict(), f=...), loaded,
evaluated again and checked by torch.isclose(..., atol=1e-08, rtol=0.0001). Timings are left out."""
import random
from pathlib import Path

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines

CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
           "Ankle boot"]


def fashion_arrays(n, seed):
    """n 28x28 uint8 images, class c a blob at a place and size of its own plus noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    yy, xx = np.mgrid[0:28, 0:28]
    images = np.empty((n, 28, 28), np.uint8)
    for i, c in enumerate(labels):
        cy, cx, r = 6 + 2 * (c % 5) + rng.integers(-1, 2), 8 + 3 * (c // 5) * 2 + rng.integers(-1, 2), 4 + c % 3
        blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2.0 * r * r))
        images[i] = np.clip(230 * blob + rng.normal(0, 20, (28, 28)), 0, 255).astype(np.uint8)
    return images, labels


def computer_vision(torch, init=None, tmp=None, n_train=384, n_test=96, epochs=3):
    nn = torch.nn
    from tqdm.auto import tqdm

    class ToTensor:
        """torchvision.transforms.ToTensor on an (H, W) uint8 array: a (1, H, W) float in [0, 1]."""

        def __call__(self, pic):
            return torch.from_numpy(pic[:, :, None]).permute((2, 0, 1)).contiguous().to(dtype=torch.float32).div(255)

    class FashionMNIST(torch.utils.data.Dataset):
        classes = CLASSES

        def __init__(self, root, train=True, download=False, transform=None, target_transform=None):
            self.data, self.targets = fashion_arrays(n_train if train else n_test, 0 if train else 1)
            self.transform, self.target_transform = transform, target_transform
            self.class_to_idx = {_class: i for i, _class in enumerate(self.classes)}

        def __len__(self):
            return len(self.data)

        def __getitem__(self, index):
            img, target = self.data[index], int(self.targets[index])
            if self.transform is not None:
                img = self.transform(img)
            if self.target_transform is not None:
                target = self.target_transform(target)
            return img, target

    res = {}
    with captured_run(torch) as out:
        train_data = FashionMNIST(root="data", train=True, download=True, transform=ToTensor(), target_transform=None)
        test_data = FashionMNIST(root="data", train=False, download=True, transform=ToTensor())
        image, label = train_data[0]
        print(image.shape, label)
        print(len(train_data.data), len(train_data.targets), len(test_data.data), len(test_data.targets))
        class_names = train_data.classes
        print(class_names, train_data.class_to_idx)
        print(f"Image shape: {image.shape}")

        DataLoader = torch.utils.data.DataLoader  # from torch.utils.data import DataLoader
        BATCH_SIZE = 32
        train_dataloader = DataLoader(train_data, batch_size=BATCH_SIZE, shuffle=True)
        test_dataloader = DataLoader(test_data, batch_size=BATCH_SIZE, shuffle=False)
        print(f"Dataloaders: {train_dataloader, test_dataloader}".count("DataLoader object"))
        print(f"Length of train dataloader: {len(train_dataloader)} batches of {BATCH_SIZE}")
        print(f"Length of test dataloader: {len(test_dataloader)} batches of {BATCH_SIZE}")
        train_features_batch, train_labels_batch = next(iter(train_dataloader))
        print(train_features_batch.shape, train_labels_batch.shape)
        torch.manual_seed(42)
        random_idx = torch.randint(0, len(train_features_batch), size=[1]).item()
        img, label = train_features_batch[random_idx], train_labels_batch[random_idx]
        print(f"Image size: {img.shape}")
        print(f"Label: {label}, label size: {label.shape}")

        flatten_model = nn.Flatten()
        x = train_features_batch[0]
        output = flatten_model(x)
        print(f"Shape before flattening: {x.shape} -> [color_channels, height, width]")
        print(f"Shape after flattening: {output.shape} -> [color_channels, height*width]")

        class FashionMNISTModelV0(nn.Module):
            def __init__(self, input_shape: int, hidden_units: int, output_shape: int):
                super().__init__()
                self.layer_stack = nn.Sequential(
                    nn.Flatten(),
                    nn.Linear(in_features=input_shape, out_features=hidden_units),
                    nn.Linear(in_features=hidden_units, out_features=output_shape)
                )

            def forward(self, x):
                return self.layer_stack(x)

        torch.manual_seed(42)
        model_0 = FashionMNISTModelV0(input_shape=784, hidden_units=10, output_shape=len(class_names))
        model_0.to("cpu")

        def accuracy_fn(y_true, y_pred):
            correct = torch.eq(y_true, y_pred).sum().item()
            acc = (correct / len(y_pred)) * 100
            return acc

        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(params=model_0.parameters(), lr=0.1)
        torch.manual_seed(42)
        for epoch in tqdm(range(epochs), disable=True):
            print(f"Epoch: {epoch}\n-------")
            train_loss = 0
            for batch, (X, y) in enumerate(train_dataloader):
                model_0.train()
                y_pred = model_0(X)
                loss = loss_fn(y_pred, y)
                train_loss += loss
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if batch % 4 == 0:
                    print(f"Looked at {batch * len(X)}/{len(train_dataloader.dataset)} samples")
            train_loss /= len(train_dataloader)
            test_loss, test_acc = 0, 0
            model_0.eval()
            with torch.inference_mode():
                for X, y in test_dataloader:
                    test_pred = model_0(X)
                    test_loss += loss_fn(test_pred, y)
                    test_acc += accuracy_fn(y_true=y, y_pred=test_pred.argmax(dim=1))
                test_loss /= len(test_dataloader)
                test_acc /= len(test_dataloader)
            print(f"\nTrain loss: {train_loss:.5f} | Test loss: {test_loss:.5f}, Test acc: {test_acc:.2f}%\n")

        torch.manual_seed(42)

        def eval_model(model, data_loader, loss_fn, accuracy_fn, device="cpu"):
            loss, acc = 0, 0
            model.eval()
            with torch.inference_mode():
                for X, y in data_loader:
                    X, y = X.to(device), y.to(device)
                    y_pred = model(X)
                    loss += loss_fn(y_pred, y)
                    acc += accuracy_fn(y_true=y, y_pred=y_pred.argmax(dim=1))
                loss /= len(data_loader)
                acc /= len(data_loader)
            return {"model_name": model.__class__.__name__, "model_loss": loss.item(), "model_acc": acc}

        model_0_results = eval_model(model=model_0, data_loader=test_dataloader, loss_fn=loss_fn, accuracy_fn=accuracy_fn)
        print(model_0_results)
        res["model_0_results"] = model_0_results

        device = "cuda" if torch.cuda.is_available() else "cpu"

        class FashionMNISTModelV1(nn.Module):
            def __init__(self, input_shape: int, hidden_units: int, output_shape: int):
                super().__init__()
                self.layer_stack = nn.Sequential(
                    nn.Flatten(),
                    nn.Linear(in_features=input_shape, out_features=hidden_units),
                    nn.ReLU(),
                    nn.Linear(in_features=hidden_units, out_features=output_shape),
                    nn.ReLU()
                )

            def forward(self, x: torch.Tensor):
                return self.layer_stack(x)

        torch.manual_seed(42)
        model_1 = FashionMNISTModelV1(input_shape=784, hidden_units=10, output_shape=len(class_names)).to(device)
        print(next(model_1.parameters()).device)
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(params=model_1.parameters(), lr=0.1)

        def train_step(model, data_loader, loss_fn, optimizer, accuracy_fn, device=device):
            train_loss, train_acc = 0, 0
            model.to(device)
            for batch, (X, y) in enumerate(data_loader):
                X, y = X.to(device), y.to(device)
                y_pred = model(X)
                loss = loss_fn(y_pred, y)
                train_loss += loss
                train_acc += accuracy_fn(y_true=y, y_pred=y_pred.argmax(dim=1))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            train_loss /= len(data_loader)
            train_acc /= len(data_loader)
            print(f"Train loss: {train_loss:.5f} | Train accuracy: {train_acc:.2f}%")

        def test_step(data_loader, model, loss_fn, accuracy_fn, device=device):
            test_loss, test_acc = 0, 0
            model.to(device)
            model.eval()
            with torch.inference_mode():
                for X, y in data_loader:
                    X, y = X.to(device), y.to(device)
                    test_pred = model(X)
                    test_loss += loss_fn(test_pred, y)
                    test_acc += accuracy_fn(y_true=y, y_pred=test_pred.argmax(dim=1))
                test_loss /= len(data_loader)
                test_acc /= len(data_loader)
                print(f"Test loss: {test_loss:.5f} | Test accuracy: {test_acc:.2f}%\n")

        torch.manual_seed(42)
        for epoch in tqdm(range(epochs), disable=True):
            print(f"Epoch: {epoch}\n---------")
            train_step(data_loader=train_dataloader, model=model_1, loss_fn=loss_fn, optimizer=optimizer,
                       accuracy_fn=accuracy_fn)
            test_step(data_loader=test_dataloader, model=model_1, loss_fn=loss_fn, accuracy_fn=accuracy_fn)
        torch.manual_seed(42)
        model_1_results = eval_model(model=model_1, data_loader=test_dataloader, loss_fn=loss_fn,
                                     accuracy_fn=accuracy_fn, device=device)
        print(model_1_results)
        res["model_1_results"] = model_1_results

        class FashionMNISTModelV2(nn.Module):
            """Model architecture copying TinyVGG from: https://poloclub.github.io/cnn-explainer/"""

            def __init__(self, input_shape: int, hidden_units: int, output_shape: int):
                super().__init__()
                self.block_1 = nn.Sequential(
                    nn.Conv2d(in_channels=input_shape, out_channels=hidden_units, kernel_size=3, stride=1, padding=1),
                    nn.ReLU(),
                    nn.Conv2d(in_channels=hidden_units, out_channels=hidden_units, kernel_size=3, stride=1, padding=1),
                    nn.ReLU(),
                    nn.MaxPool2d(kernel_size=2, stride=2)
                )
                self.block_2 = nn.Sequential(
                    nn.Conv2d(hidden_units, hidden_units, 3, padding=1),
                    nn.ReLU(),
                    nn.Conv2d(hidden_units, hidden_units, 3, padding=1),
                    nn.ReLU(),
                    nn.MaxPool2d(2)
                )
                self.classifier = nn.Sequential(
                    nn.Flatten(),
                    nn.Linear(in_features=hidden_units * 7 * 7, out_features=output_shape)
                )

            def forward(self, x: torch.Tensor):
                x = self.block_1(x)
                x = self.block_2(x)
                x = self.classifier(x)
                return x

        torch.manual_seed(42)
        model_2 = FashionMNISTModelV2(input_shape=1, hidden_units=10, output_shape=len(class_names)).to(device)
        print(model_2)

        torch.manual_seed(42)
        images = torch.randn(size=(32, 3, 64, 64))
        test_image = images[0]
        print(f"Image batch shape: {images.shape} -> [batch_size, color_channels, height, width]")
        print(f"Single image shape: {test_image.shape} -> [color_channels, height, width]")
        torch.manual_seed(42)
        conv_layer = nn.Conv2d(in_channels=3, out_channels=10, kernel_size=3, stride=1, padding=0)
        res["unbatched_conv"] = numpy_of(conv_layer(test_image))
        print(conv_layer(test_image.unsqueeze(dim=0)).shape)
        torch.manual_seed(42)
        conv_layer_2 = nn.Conv2d(in_channels=3, out_channels=10, kernel_size=(5, 5), stride=2, padding=0)
        print(conv_layer_2(test_image.unsqueeze(dim=0)).shape)
        print(f"conv_layer_2 weight shape: \n{conv_layer_2.weight.shape} -> [out_channels=10, in_channels=3, kernel_size=5, kernel_size=5]")
        print(f"\nconv_layer_2 bias shape: \n{conv_layer_2.bias.shape} -> [out_channels=10]")
        print(list(conv_layer_2.state_dict().keys()))
        print(f"Test image original shape: {test_image.shape}")
        print(f"Test image with unsqueezed dimension: {test_image.unsqueeze(dim=0).shape}")
        max_pool_layer = nn.MaxPool2d(kernel_size=2)
        test_image_through_conv = conv_layer(test_image.unsqueeze(dim=0))
        print(f"Shape after going through conv_layer(): {test_image_through_conv.shape}")
        test_image_through_conv_and_max_pool = max_pool_layer(test_image_through_conv)
        print(f"Shape after going through conv_layer() and max_pool_layer(): {test_image_through_conv_and_max_pool.shape}")
        torch.manual_seed(42)
        random_tensor = torch.randn(size=(1, 1, 2, 2))
        print(f"Random tensor:\n{random_tensor}")
        print(f"Random tensor shape: {random_tensor.shape}")
        max_pool_tensor = max_pool_layer(random_tensor)
        print(f"\nMax pool tensor:\n{max_pool_tensor} <- this is the maximum value from random_tensor")
        print(f"Max pool tensor shape: {max_pool_tensor.shape}")

        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(params=model_2.parameters(), lr=0.1)
        torch.manual_seed(42)
        for epoch in tqdm(range(epochs), disable=True):
            print(f"Epoch: {epoch}\n---------")
            train_step(data_loader=train_dataloader, model=model_2, loss_fn=loss_fn, optimizer=optimizer,
                       accuracy_fn=accuracy_fn, device=device)
            test_step(data_loader=test_dataloader, model=model_2, loss_fn=loss_fn, accuracy_fn=accuracy_fn,
                      device=device)
        model_2_results = eval_model(model=model_2, data_loader=test_dataloader, loss_fn=loss_fn,
                                     accuracy_fn=accuracy_fn, device=device)
        print(model_2_results)
        res["model_2_results"] = model_2_results

        def make_predictions(model: torch.nn.Module, data: list, device: torch.device = device):
            pred_probs = []
            model.eval()
            with torch.inference_mode():
                for sample in data:
                    sample = torch.unsqueeze(sample, dim=0).to(device)
                    pred_logit = model(sample)
                    pred_prob = torch.softmax(pred_logit.squeeze(), dim=0)
                    pred_probs.append(pred_prob.cpu())
            return torch.stack(pred_probs)

        random.seed(42)
        test_samples = []
        test_labels = []
        for sample, label in random.sample(list(test_data), k=9):
            test_samples.append(sample)
            test_labels.append(label)
        print(f"Test sample image shape: {test_samples[0].shape}\nTest sample label: {test_labels[0]} ({class_names[test_labels[0]]})")
        pred_probs = make_predictions(model=model_2, data=test_samples)
        print(pred_probs[:2])
        pred_classes = pred_probs.argmax(dim=1)
        print(test_labels, pred_classes)
        res["pred_probs"] = numpy_of(pred_probs)

        MODEL_PATH = Path(tmp) / "models"
        MODEL_PATH.mkdir(parents=True, exist_ok=True)
        MODEL_SAVE_PATH = MODEL_PATH / "03_pytorch_computer_vision_model_2.pth"
        print(f"Saving model to: {MODEL_SAVE_PATH.name}")
        torch.save(obj=model_2.state_dict(), f=MODEL_SAVE_PATH)
        loaded_model_2 = FashionMNISTModelV2(input_shape=1, hidden_units=10, output_shape=10)
        loaded_model_2.load_state_dict(torch.load(f=MODEL_SAVE_PATH))
        loaded_model_2 = loaded_model_2.to(device)
        torch.manual_seed(42)
        loaded_model_2_results = eval_model(model=loaded_model_2, data_loader=test_dataloader, loss_fn=loss_fn,
                                            accuracy_fn=accuracy_fn)
        print(loaded_model_2_results)
        print(torch.isclose(torch.tensor(model_2_results["model_loss"]),
                            torch.tensor(loaded_model_2_results["model_loss"]), atol=1e-08, rtol=0.0001))
    res["printed"] = printed_lines(out)
    return res


def test_ztm_03_computer_vision(tmp_path):
    ref, got = compare_program(lambda torch, init=None: computer_vision(torch, tmp=tmp_path / torch.__name__),
                               rtol=1e-3, atol=1e-4)
    assert got["printed"][-1] == "tensor(True)"
    assert got["model_2_results"]["model_name"] == "FashionMNISTModelV2"

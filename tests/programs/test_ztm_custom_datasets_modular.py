"""mrdbourke's "Zero to Mastery Learn PyTorch" notebooks 04 (custom datasets) and 05 (going modular)
as written, the pizza_steak_sushi download replaced by small JPEG-free PNG images written by PIL into
data/pizza_steak_sushi/{train,test}/{class}/ here, torchvision's transforms by classes of the same
behaviour (Resize through PIL, RandomHorizontalFlip by torch.rand(1) < p, ToTensor), and
randomness from torch.manual_seed (both libraries draw PyTorch's CPU streams): walk_through_dir by
os.walk, find_classes by os.scandir, ImageFolderCustom(Dataset) over pathlib glob("*/*.png") with
load_image by Image.open, __len__ and __getitem__ returning (transform(img), class_idx), DataLoaders
with shuffle=True, the TinyVGG of model_builder.py (Conv2d(padding=0), a Linear of hidden_units*13*13
for 64x64 images), a dummy forward on torch.randn(size=[1, 3, 64, 64]), engine.py's train_step,
test_step and train (results dict of train_loss/train_acc/test_loss/test_acc, y_pred_class by
torch.argmax(torch.softmax(y_pred, dim=1), dim=1), the test accuracy from argmax(dim=1) under
inference_mode, the per-epoch f-string), train.py's NUM_EPOCHS/BATCH_SIZE/HIDDEN_UNITS/LEARNING_RATE
with Adam, and utils.save_model's assert on the suffix and torch.save(obj=model.state_dict(), f=...).
The printed text and every number match PyTorch's."""
import os
import pathlib

import numpy as np
import pytest

from prog_helpers import captured_run, compare_program, printed_lines

CLASS_NAMES = ["pizza", "steak", "sushi"]


def write_images(root: pathlib.Path, n_train=6, n_test=3):
    """RGB images of 72x80 per class (a disc, a bar, rings), PNG, as the download's folders hold."""
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(4)
    yy, xx = np.mgrid[0:72, 0:80]
    for split, n in (("train", n_train), ("test", n_test)):
        for c, name in enumerate(CLASS_NAMES):
            d = root / split / name
            d.mkdir(parents=True, exist_ok=True)
            for i in range(n):
                cy, cx = rng.integers(20, 52), rng.integers(20, 60)
                r2 = (yy - cy) ** 2 + (xx - cx) ** 2
                shape = [r2 < 300, np.abs(yy - cy) < 6, np.cos(np.sqrt(r2) / 3) > 0.5][c]
                img = rng.integers(0, 60, (72, 80, 3))
                img[shape] += np.array([[200, 60, 40], [120, 40, 20], [230, 230, 230]][c]) - 30
                Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(d / f"{name}_{i}.png")


def custom_datasets_modular(torch, init=None, data_root=None, save_dir=None, NUM_EPOCHS=5):
    from PIL import Image

    nn = torch.nn
    Dataset = torch.utils.data.Dataset  # from torch.utils.data import Dataset
    DataLoader = torch.utils.data.DataLoader
    from typing import Dict, List, Tuple

    class Resize:
        def __init__(self, size):
            self.size = size

        def __call__(self, img):
            return img.resize(self.size[::-1], Image.BILINEAR)

    class RandomHorizontalFlip:
        def __init__(self, p=0.5):
            self.p = p

        def __call__(self, img):
            if torch.rand(1) < self.p:
                return img.transpose(Image.FLIP_LEFT_RIGHT)
            return img

    class ToTensor:
        def __call__(self, pic):
            arr = np.array(pic, copy=True)
            return torch.from_numpy(arr).permute((2, 0, 1)).contiguous().to(dtype=torch.float32).div(255)

    class Compose:
        def __init__(self, transforms):
            self.transforms = transforms

        def __call__(self, img):
            for t in self.transforms:
                img = t(img)
            return img

    res = {}
    with captured_run(torch) as out:
        image_path = pathlib.Path(data_root)

        def walk_through_dir(dir_path):
            for dirpath, dirnames, filenames in sorted(os.walk(dir_path)):
                print(f"There are {len(dirnames)} directories and {len(filenames)} images in '{pathlib.Path(dirpath).relative_to(image_path.parent)}'.")

        walk_through_dir(image_path)
        train_dir = image_path / "train"
        test_dir = image_path / "test"

        def find_classes(directory: str) -> Tuple[List[str], Dict[str, int]]:
            classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
            if not classes:
                raise FileNotFoundError(f"Couldn't find any classes in {directory}.")
            class_to_idx = {cls_name: i for i, cls_name in enumerate(classes)}
            return classes, class_to_idx

        print(find_classes(train_dir))

        class ImageFolderCustom(Dataset):
            def __init__(self, targ_dir: str, transform=None) -> None:
                self.paths = sorted(pathlib.Path(targ_dir).glob("*/*.png"))
                self.transform = transform
                self.classes, self.class_to_idx = find_classes(targ_dir)

            def load_image(self, index: int) -> Image.Image:
                image_path = self.paths[index]
                return Image.open(image_path)

            def __len__(self) -> int:
                return len(self.paths)

            def __getitem__(self, index: int) -> Tuple[torch.Tensor, int]:
                img = self.load_image(index)
                class_name = self.paths[index].parent.name
                class_idx = self.class_to_idx[class_name]
                if self.transform:
                    return self.transform(img), class_idx
                else:
                    return img, class_idx

        train_transforms = Compose([
            Resize((64, 64)),
            RandomHorizontalFlip(p=0.5),
            ToTensor()
        ])
        test_transforms = Compose([
            Resize((64, 64)),
            ToTensor()
        ])
        train_data_custom = ImageFolderCustom(targ_dir=train_dir, transform=train_transforms)
        test_data_custom = ImageFolderCustom(targ_dir=test_dir, transform=test_transforms)
        print(len(train_data_custom), len(test_data_custom))
        print(train_data_custom.classes, train_data_custom.class_to_idx)
        img_custom, label_custom = train_data_custom[0]
        print(f"Image shape: {img_custom.shape} -> [color_channels, height, width]")
        print(f"Image datatype: {img_custom.dtype}")
        print(f"Image label: {label_custom}")
        res["first_image_mean"] = img_custom.mean().item()

        # going_modular/model_builder.py
        class TinyVGG(nn.Module):
            """Creates the TinyVGG architecture."""

            def __init__(self, input_shape: int, hidden_units: int, output_shape: int) -> None:
                super().__init__()
                self.conv_block_1 = nn.Sequential(
                    nn.Conv2d(in_channels=input_shape, out_channels=hidden_units, kernel_size=3, stride=1, padding=0),
                    nn.ReLU(),
                    nn.Conv2d(in_channels=hidden_units, out_channels=hidden_units, kernel_size=3, stride=1, padding=0),
                    nn.ReLU(),
                    nn.MaxPool2d(kernel_size=2, stride=2)
                )
                self.conv_block_2 = nn.Sequential(
                    nn.Conv2d(hidden_units, hidden_units, kernel_size=3, padding=0),
                    nn.ReLU(),
                    nn.Conv2d(hidden_units, hidden_units, kernel_size=3, padding=0),
                    nn.ReLU(),
                    nn.MaxPool2d(2)
                )
                self.classifier = nn.Sequential(
                    nn.Flatten(),
                    nn.Linear(in_features=hidden_units * 13 * 13, out_features=output_shape)
                )

            def forward(self, x: torch.Tensor):
                return self.classifier(self.conv_block_2(self.conv_block_1(x)))

        # going_modular/data_setup.py (ImageFolderCustom in place of datasets.ImageFolder)
        NUM_WORKERS = 0  # os.cpu_count() in the notebook

        def create_dataloaders(train_dir: str, test_dir: str, transform, batch_size: int, num_workers: int = NUM_WORKERS):
            train_data = ImageFolderCustom(train_dir, transform=transform)
            test_data = ImageFolderCustom(test_dir, transform=transform)
            class_names = train_data.classes
            train_dataloader = DataLoader(train_data, batch_size=batch_size, shuffle=True, num_workers=num_workers,
                                          pin_memory=True)
            test_dataloader = DataLoader(test_data, batch_size=batch_size, shuffle=False, num_workers=num_workers,
                                         pin_memory=True)
            return train_dataloader, test_dataloader, class_names

        # going_modular/engine.py
        def train_step(model, dataloader, loss_fn, optimizer, device) -> Tuple[float, float]:
            model.train()
            train_loss, train_acc = 0, 0
            for batch, (X, y) in enumerate(dataloader):
                X, y = X.to(device), y.to(device)
                y_pred = model(X)
                loss = loss_fn(y_pred, y)
                train_loss += loss.item()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                y_pred_class = torch.argmax(torch.softmax(y_pred, dim=1), dim=1)
                train_acc += (y_pred_class == y).sum().item() / len(y_pred)
            train_loss = train_loss / len(dataloader)
            train_acc = train_acc / len(dataloader)
            return train_loss, train_acc

        def test_step(model, dataloader, loss_fn, device) -> Tuple[float, float]:
            model.eval()
            test_loss, test_acc = 0, 0
            with torch.inference_mode():
                for batch, (X, y) in enumerate(dataloader):
                    X, y = X.to(device), y.to(device)
                    test_pred_logits = model(X)
                    loss = loss_fn(test_pred_logits, y)
                    test_loss += loss.item()
                    test_pred_labels = test_pred_logits.argmax(dim=1)
                    test_acc += ((test_pred_labels == y).sum().item() / len(test_pred_labels))
            test_loss = test_loss / len(dataloader)
            test_acc = test_acc / len(dataloader)
            return test_loss, test_acc

        def train(model, train_dataloader, test_dataloader, optimizer, loss_fn, epochs: int, device) -> Dict[str, List]:
            results = {"train_loss": [], "train_acc": [], "test_loss": [], "test_acc": []}
            for epoch in range(epochs):
                train_loss, train_acc = train_step(model=model, dataloader=train_dataloader, loss_fn=loss_fn,
                                                   optimizer=optimizer, device=device)
                test_loss, test_acc = test_step(model=model, dataloader=test_dataloader, loss_fn=loss_fn, device=device)
                print(
                    f"Epoch: {epoch+1} | "
                    f"train_loss: {train_loss:.4f} | "
                    f"train_acc: {train_acc:.4f} | "
                    f"test_loss: {test_loss:.4f} | "
                    f"test_acc: {test_acc:.4f}"
                )
                results["train_loss"].append(train_loss)
                results["train_acc"].append(train_acc)
                results["test_loss"].append(test_loss)
                results["test_acc"].append(test_acc)
            return results

        # going_modular/utils.py
        def save_model(model: torch.nn.Module, target_dir: str, model_name: str):
            target_dir_path = pathlib.Path(target_dir)
            target_dir_path.mkdir(parents=True, exist_ok=True)
            assert model_name.endswith(".pth") or model_name.endswith(".pt"), "model_name should end with '.pt' or '.pth'"
            model_save_path = target_dir_path / model_name
            print(f"[INFO] Saving model to: {model_save_path.name}")
            torch.save(obj=model.state_dict(), f=model_save_path)
            return model_save_path

        # notebook 04: TinyVGG on the custom data, a dummy forward first
        torch.manual_seed(42)
        model_0 = TinyVGG(input_shape=3, hidden_units=10, output_shape=len(train_data_custom.classes))
        print(model_0)
        dummy = model_0(torch.randn(size=[1, 3, 64, 64]))
        print(dummy.shape)
        BATCH_SIZE = 4
        train_dataloader_custom = DataLoader(dataset=train_data_custom, batch_size=BATCH_SIZE, num_workers=0, shuffle=True)
        test_dataloader_custom = DataLoader(dataset=test_data_custom, batch_size=BATCH_SIZE, num_workers=0, shuffle=False)
        img_batch, label_batch = next(iter(train_dataloader_custom))
        print(f"Custom image shape: {img_batch.shape} -> [batch_size, color_channels, height, width]")
        print(f"Custom label shape: {label_batch.shape}")
        loss_fn = nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(params=model_0.parameters(), lr=0.001)
        model_0_results = train(model=model_0, train_dataloader=train_dataloader_custom,
                                test_dataloader=test_dataloader_custom, optimizer=optimizer, loss_fn=loss_fn,
                                epochs=NUM_EPOCHS, device="cpu")
        res["model_0_results"] = model_0_results

        # going_modular/train.py
        HIDDEN_UNITS = 10
        LEARNING_RATE = 0.001
        device = "cuda" if torch.cuda.is_available() else "cpu"
        data_transform = Compose([
            Resize((64, 64)),
            ToTensor()
        ])
        train_dataloader, test_dataloader, class_names = create_dataloaders(
            train_dir=train_dir, test_dir=test_dir, transform=data_transform, batch_size=BATCH_SIZE)
        model = TinyVGG(input_shape=3, hidden_units=HIDDEN_UNITS, output_shape=len(class_names)).to(device)
        loss_fn = torch.nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
        res["modular_results"] = train(model=model, train_dataloader=train_dataloader, test_dataloader=test_dataloader,
                                       loss_fn=loss_fn, optimizer=optimizer, epochs=NUM_EPOCHS, device=device)
        path = save_model(model=model, target_dir=save_dir, model_name="05_going_modular_script_mode_tinyvgg_model.pth")
        try:
            save_model(model=model, target_dir=save_dir, model_name="model.bin")
        except AssertionError as e:
            print(e)
        loaded = TinyVGG(input_shape=3, hidden_units=HIDDEN_UNITS, output_shape=len(class_names))
        print(loaded.load_state_dict(torch.load(path)))
    res["printed"] = printed_lines(out)
    return res


def test_ztm_04_05_custom_datasets_going_modular(tmp_path):
    data_root = tmp_path / "data" / "pizza_steak_sushi"
    write_images(data_root)
    ref, got = compare_program(lambda torch, init=None: custom_datasets_modular(
        torch, data_root=data_root, save_dir=tmp_path / torch.__name__ / "models"), rtol=1e-3, atol=1e-4)
    assert got["printed"][0] == "There are 2 directories and 0 images in 'pizza_steak_sushi'."
    assert "model_name should end with '.pt' or '.pth'" in got["printed"]
    assert got["printed"][-1] == "<All keys matched successfully>"

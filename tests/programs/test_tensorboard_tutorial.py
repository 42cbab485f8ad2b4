"""The TensorBoard pages as they run, with event files read back by TensorBoard's own
EventAccumulator: the recipe "How to use TensorBoard with PyTorch" (SummaryWriter(log_dir),
x = torch.arange(-5, 5, 0.1).view(-1, 1), a Linear fitted by SGD with writer.add_scalar
("Loss/train", loss, epoch) each epoch, flush, close) and "Visualizing Models, Data, and
Training with TensorBoard" (a grid of images made by hand in place of torchvision's make_grid,
matplotlib_imshow-free add_image, add_graph(net, images), add_embedding(features,
metadata=class_labels, label_img=images.unsqueeze(1)), 'training loss' every few steps as
running_loss / n at epoch * len(trainloader) + i, add_pr_curve per class from softmax
probabilities, add_histogram of a weight, add_hparams)."""
import numpy as np
import pytest

from prog_helpers import compare_program, start_from

EventAccumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator").EventAccumulator


def read_events(log_dir):
    acc = EventAccumulator(str(log_dir), size_guidance={"scalars": 0, "images": 0, "tensors": 0, "histograms": 0})
    acc.Reload()
    tags = acc.Tags()
    scalars = {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in sorted(tags.get("scalars", []))}
    images = {t: [(e.step, e.width, e.height) for e in acc.Images(t)] for t in sorted(tags.get("images", []))}
    tensors = {t: len(acc.Tensors(t)) for t in sorted(tags.get("tensors", []))}
    hist = {t: [(h.step, h.histogram_value.num) for h in acc.Histograms(t)] for t in sorted(tags.get("histograms", []))}
    return {"scalars": scalars, "images": images, "tensors": tensors, "histograms": hist,
            "graph": bool(tags.get("graph"))}


def tensorboard_pages(torch, init=None, path=None, epochs=10):
    nn, F = torch.nn, torch.nn.functional
    SummaryWriter = __import__(torch.__name__ + ".utils.tensorboard", fromlist=["SummaryWriter"]).SummaryWriter
    rng = np.random.default_rng(0)
    result = {}

    # the recipe
    writer = SummaryWriter(str(path / "recipe"))
    x = torch.arange(-5, 5, 0.1).view(-1, 1)
    y = -5 * x + 0.1 * torch.tensor(rng.standard_normal(tuple(x.size())), dtype=torch.float32)
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
    start_from(torch, {"model": model, "net": net}, init, result)
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_model(iter):
        for epoch in range(iter):
            y1 = model(x)
            loss = criterion(y1, y)
            writer.add_scalar("Loss/train", loss, epoch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    train_model(epochs)
    writer.flush()
    writer.close()
    result["recipe"] = read_events(path / "recipe")

    # the tutorial, on 8x8 "images" of three classes
    classes = ('bar', 'cross', 'ring')
    images = torch.tensor(rng.random((6, 1, 8, 8)), dtype=torch.float32)
    labels = torch.tensor([0, 1, 2, 0, 1, 2])
    writer = SummaryWriter(str(path / "tutorial"))
    # create grid of images (torchvision.utils.make_grid: the images side by side, padded by 2)
    img_grid = torch.zeros(1, 12, 62)
    for k in range(6):
        img_grid[:, 2:10, 2 + 10 * k:10 + 10 * k] = images[k]
    writer.add_image('four_fashion_mnist_images', img_grid)
    writer.add_graph(net, images)
    features = images.view(-1, 8 * 8)
    class_labels = [classes[lab] for lab in labels]
    writer.add_embedding(features, metadata=class_labels, label_img=images)

    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    running_loss = 0.0
    trainloader = [(images[i:i + 2], labels[i:i + 2]) for i in range(0, 6, 2)]
    for epoch in range(2):
        for i, data in enumerate(trainloader, 0):
            inputs, lab = data
            opt.zero_grad()
            outputs = net(inputs)
            loss = F.cross_entropy(outputs, lab)
            loss.backward()
            opt.step()
            running_loss += loss.item()
            if i % 2 == 1:
                writer.add_scalar('training loss', running_loss / 2, epoch * len(trainloader) + i)
                running_loss = 0.0
    class_probs = []
    class_label = []
    with torch.no_grad():
        for data in trainloader:
            imgs, lab = data
            output = net(imgs)
            class_probs_batch = [F.softmax(el, dim=0) for el in output]
            class_probs.append(class_probs_batch)
            class_label.append(lab)
    test_probs = torch.cat([torch.stack(batch) for batch in class_probs])
    test_label = torch.cat(class_label)

    def add_pr_curve_tensorboard(class_index, test_probs, test_label, global_step=0):
        tensorboard_truth = test_label == class_index
        tensorboard_probs = test_probs[:, class_index]
        writer.add_pr_curve(classes[class_index], tensorboard_truth, tensorboard_probs, global_step=global_step)

    for i in range(len(classes)):
        add_pr_curve_tensorboard(i, test_probs, test_label)
    writer.add_histogram('fc.weight', net[3].weight, 0)
    writer.add_hparams({'lr': 0.01, 'bsize': 2}, {'hparam/loss': float(loss.item())})
    writer.close()
    events = read_events(path / "tutorial")
    events["scalars"] = {k: v for k, v in events["scalars"].items() if not k.startswith("hparam")}
    result["tutorial"] = events
    result["projector"] = sorted(p.name for p in (path / "tutorial").rglob("*") if p.suffix in (".tsv", ".pbtxt"))
    return result


def test_tensorboard_recipe_and_tutorial(tmp_path):
    pytest.importorskip("tensorboard")
    compare_program(tensorboard_pages, path=tmp_path / "torch", mt_options={"path": tmp_path / "minitorch"})

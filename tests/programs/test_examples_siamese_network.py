"""pytorch/examples' siamese_network/main.py as published, with torchvision's resnet18 and MNIST
replaced by a stand-in of the same module layout and initialisation (conv1/bn1/relu/maxpool,
layer1-4 of BasicBlocks, avgpool, fc; kaiming_normal_(mode='fan_out') convolutions, BatchNorm
weights 1 and biases 0) and a local uint8 dataset with .data and .targets, at a small size (64
training and 32 test pairs, batch 16, two epochs): SiameseNetwork replacing resnet.conv1 for one
channel, reading resnet.fc.in_features, nn.Sequential(*(list(resnet.children())[:-1])), a head of
Linear/ReLU(inplace=True)/Linear initialised by the deprecated torch.nn.init.xavier_uniform and
m.bias.data.fill_(0.01) through Module.apply, torch.cat of both towers' features, nn.Sigmoid;
APP_MATCHER grouping indices by np.where over np.array(targets.clone()), pairs drawn by Python's
random, images by self.data[i].clone().float(), targets torch.tensor(1, dtype=torch.float); BCELoss,
Adadelta(lr=1.0), StepLR(step_size=1, gamma=0.7), test by torch.where(outputs > 0.5, 1, 0) and
pred.eq(targets.view_as(pred)). Python's random is seeded alike for both runs (the script leaves it
unseeded); from the script's torch seed both libraries draw the same weights and pairs, so the
first loss, the initial weights and the first step's gradients are compared number by number.
After that the run is chaotic in float32 (raw 0-255 pixels, Adadelta's lr=1.0 steps, BatchNorm
over a batch of 16 at 1x1 in layer4): a gradient's rounding (1e-5 relative, minitorch sums in
another order) grows about a thousandfold a step, so the rest of the log is checked by its form."""
import argparse
import random
import re

import numpy as np

from prog_helpers import Printed, captured_run, compare_program, numpy_of, printed_lines
from torchvision_models import torchvision_resnet


def torchvision_stand_ins(torch):
    """torchvision.models.resnet18 and datasets.MNIST, as far as the script reaches into them."""
    _, _, resnet18 = torchvision_resnet(torch)

    class MNIST:
        def __init__(self, root, train=True, download=False):
            rng = np.random.default_rng(0 if train else 1)
            n = 64 if train else 32
            self.targets = torch.tensor(rng.permutation(np.arange(n) % 10))  # every digit at least thrice
            data = (rng.random((n, 28, 28)) * 80).astype(np.uint8)
            for i, c in enumerate(self.targets.tolist()):  # a bright bar per digit
                data[i, 2 * c + 3:2 * c + 6, 4:24] = 255
            self.data = torch.tensor(data)

    return resnet18, MNIST


def siamese_main(torch, init=None, epochs=1, widths=(16, 32, 64, 128)):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim  # noqa: F841 (the script's imports)
    Dataset, StepLR = torch.utils.data.Dataset, torch.optim.lr_scheduler.StepLR
    resnet18, MNIST = torchvision_stand_ins(torch)

    class SiameseNetwork(nn.Module):
        def __init__(self):
            super(SiameseNetwork, self).__init__()
            self.resnet = resnet18(pretrained=False, widths=widths)
            self.resnet.conv1 = nn.Conv2d(1, widths[0], kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)
            self.fc_in_features = self.resnet.fc.in_features
            self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))
            self.fc = nn.Sequential(
                nn.Linear(self.fc_in_features * 2, 256),
                nn.ReLU(inplace=True),
                nn.Linear(256, 1),
            )
            self.sigmoid = nn.Sigmoid()
            self.resnet.apply(self.init_weights)
            self.fc.apply(self.init_weights)

        def init_weights(self, m):
            if isinstance(m, nn.Linear):
                torch.nn.init.xavier_uniform(m.weight)
                m.bias.data.fill_(0.01)

        def forward_once(self, x):
            output = self.resnet(x)
            output = output.view(output.size()[0], -1)
            return output

        def forward(self, input1, input2):
            output1 = self.forward_once(input1)
            output2 = self.forward_once(input2)
            output = torch.cat((output1, output2), 1)
            output = self.fc(output)
            output = self.sigmoid(output)
            return output

    class APP_MATCHER(Dataset):
        def __init__(self, root, train, download=False):
            super(APP_MATCHER, self).__init__()
            self.dataset = MNIST(root, train=train, download=download)
            self.data = self.dataset.data.unsqueeze(1).clone()
            self.group_examples()

        def group_examples(self):
            np_arr = np.array(self.dataset.targets.clone())
            self.grouped_examples = {}
            for i in range(0, 10):
                self.grouped_examples[i] = np.where((np_arr == i))[0]

        def __len__(self):
            return self.data.shape[0]

        def __getitem__(self, index):
            selected_class = random.randint(0, 9)
            random_index_1 = random.randint(0, self.grouped_examples[selected_class].shape[0] - 1)
            index_1 = self.grouped_examples[selected_class][random_index_1]
            image_1 = self.data[index_1].clone().float()
            if index % 2 == 0:
                random_index_2 = random.randint(0, self.grouped_examples[selected_class].shape[0] - 1)
                while random_index_2 == random_index_1:
                    random_index_2 = random.randint(0, self.grouped_examples[selected_class].shape[0] - 1)
                index_2 = self.grouped_examples[selected_class][random_index_2]
                image_2 = self.data[index_2].clone().float()
                target = torch.tensor(1, dtype=torch.float)
            else:
                other_selected_class = random.randint(0, 9)
                while other_selected_class == selected_class:
                    other_selected_class = random.randint(0, 9)
                random_index_2 = random.randint(0, self.grouped_examples[other_selected_class].shape[0] - 1)
                index_2 = self.grouped_examples[other_selected_class][random_index_2]
                image_2 = self.data[index_2].clone().float()
                target = torch.tensor(0, dtype=torch.float)
            return image_1, image_2, target

    def train(args, model, device, train_loader, optimizer, epoch):
        model.train()
        criterion = nn.BCELoss()
        for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
            images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
            optimizer.zero_grad()
            outputs = model(images_1, images_2).squeeze()
            loss = criterion(outputs, targets)
            loss.backward()
            first_grads.extend([] if first_grads else [numpy_of(p.grad) for p in model.parameters()])
            optimizer.step()
            if batch_idx % args.log_interval == 0:
                print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(images_1), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader), loss.item()))
                if args.dry_run:
                    break

    def test(model, device, test_loader):
        model.eval()
        test_loss = 0
        correct = 0
        criterion = nn.BCELoss()
        with torch.no_grad():
            for (images_1, images_2, targets) in test_loader:
                images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
                outputs = model(images_1, images_2).squeeze()
                test_loss += criterion(outputs, targets).sum().item()
                pred = torch.where(outputs > 0.5, 1, 0)
                correct += pred.eq(targets.view_as(pred)).sum().item()
        test_loss /= len(test_loader.dataset)
        print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
            test_loss, correct, len(test_loader.dataset),
            100. * correct / len(test_loader.dataset)))

    first_grads = []
    random.seed(0)
    with captured_run(torch, seed=1) as out:
        args = argparse.Namespace(batch_size=16, test_batch_size=32, epochs=epochs, lr=1.0, gamma=0.7, no_cuda=True,
                                  dry_run=False, seed=1, log_interval=2, save_model=False)
        use_cuda = not args.no_cuda and torch.cuda.is_available()
        torch.manual_seed(args.seed)
        device = torch.device("cuda" if use_cuda else "cpu")
        train_kwargs = {'batch_size': args.batch_size}
        test_kwargs = {'batch_size': args.test_batch_size}
        train_dataset = APP_MATCHER('../data', train=True, download=True)
        test_dataset = APP_MATCHER('../data', train=False)
        train_loader = torch.utils.data.DataLoader(train_dataset, **train_kwargs)
        test_loader = torch.utils.data.DataLoader(test_dataset, **test_kwargs)
        model = SiameseNetwork().to(device)
        initial = [numpy_of(p) for p in model.parameters()]
        optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
        scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
        for epoch in range(1, args.epochs + 1):
            train(args, model, device, train_loader, optimizer, epoch)
            test(model, device, test_loader)
            scheduler.step()
    printed = printed_lines(out)
    return {"first_loss": Printed(printed[:1]), "initial": initial, "first_grads": first_grads, "lr": scheduler.get_last_lr(),
            "keys": list(model.state_dict()), "own": {"printed": printed, "trained": [numpy_of(p) for p in model.parameters()]}}


def test_siamese_network_example():
    ref, got = compare_program(siamese_main, rtol=1e-3, atol=1e-5)
    for run in (ref, got):
        printed = run["own"]["printed"]
        assert [line.split("\tLoss: ")[0] for line in printed[:2]] == [
            "Train Epoch: 1 [0/64 (0%)]", "Train Epoch: 1 [32/64 (50%)]"]
        assert re.fullmatch(r"Test set: Average loss: \d+\.\d{4}, Accuracy: \d+/32 \(\d+%\)", printed[3])
        assert all((a != b).any() for a, b in zip(run["own"]["trained"], run["initial"]) if a.ndim > 1)
    assert got["keys"][:2] == ["resnet.0.weight", "resnet.1.weight"] and "resnet.4.0.conv1.weight" in got["keys"]

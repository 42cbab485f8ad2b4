"""Stanford CS231n's PyTorch assignments as their notebooks write them, CIFAR-10/MNIST replaced by
local images and SqueezeNet by a small CNN: PyTorch.ipynb part II (barebones: flatten by
x.view(N, -1), random_weight from torch.randn(shape, device=device, dtype=dtype) *
np.sqrt(2. / fan_in) with fan_in from np.prod, w.requires_grad = True, zero_weight, F.conv2d with
padding, updates w -= learning_rate * w.grad and w.grad.zero_() under torch.no_grad(),
check_accuracy_part2 printing 'Got %d / %d correct (%.2f%%)' of tensors), part III (TwoLayerFC and
ThreeLayerConvNet modules with nn.init.kaiming_normal_, train_part34 with x.to(device=device,
dtype=dtype)), part IV (nn.Sequential with a Flatten module, SGD(momentum=0.9, nesterov=True)), all
over a DataLoader with sampler.SubsetRandomSampler(range(NUM_TRAIN)); NetworkVisualization
(saliency from scores.gather(1, y.view(-1, 1)).squeeze() and X.grad.data.abs() max over channels,
a fooling image stepping X_fooling.data += learning_rate * (grad / grad.norm()), class
visualization with model.type(dtype), jitter by torch.cat of slices, img.data.copy_, per-channel
img.data[:, c].clamp_ and blur_image through scipy's gaussian_filter1d and
torch.Tensor(X_np).type_as(X)); and GANs-PyTorch (sample_noise by torch.rand(...) * 2 - 1,
Flatten/Unflatten modules, initialize_weights by xavier_uniform_ through apply, BCEWithLogitsLoss
bce_loss, the vanilla and least-squares losses, a DC-GAN of Conv2d/ConvTranspose2d/BatchNorm
layers, run_a_gan with .type(dtype) for dtype = torch.FloatTensor and its
'Iter: {}, D: {:.4}, G:{:.4}' prints). Seeds are torch.manual_seed and random.seed in both
libraries."""
import random

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter1d

from prog_helpers import compare_program, numpy_of, start_from
from test_d2l_modern_cnns import make_images


class Split:
    """torchvision's CIFAR10(train=...) as the notebooks index it: (image, label) with .train."""

    def __init__(self, torch, train, n, size, channels, seed):
        x, y = make_images(n, size, seed)
        self.x = np.repeat(x, channels, axis=1)
        self.y = y
        self.train = train
        self.torch = torch

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.torch.from_numpy(self.x[i]), int(self.y[i])


def assignment_pytorch(torch, init=None, part="II"):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    sampler = torch.utils.data.sampler
    DataLoader = torch.utils.data.DataLoader
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    NUM_TRAIN = 40
    cifar10_train = Split(torch, True, 56, 8, 3, 0)
    loader_train = DataLoader(cifar10_train, batch_size=8, sampler=sampler.SubsetRandomSampler(range(NUM_TRAIN)))
    loader_val = DataLoader(cifar10_train, batch_size=8, sampler=sampler.SubsetRandomSampler(range(NUM_TRAIN, 56)))
    USE_GPU = True
    dtype = torch.float32  # We will be using float throughout this tutorial.
    if USE_GPU and torch.cuda.is_available():
        device = torch.device('cuda')
    else:
        device = torch.device('cpu')
    # Constant to control how frequently we print train loss.
    print_every = 2
    print('using device:', device)
    torch.manual_seed(0)

    def flatten(x):
        N = x.shape[0]  # read in N, C, H, W
        return x.view(N, -1)  # "flatten" the C * H * W values into a single vector per image

    def three_layer_convnet(x, params):
        conv_w1, conv_b1, conv_w2, conv_b2, fc_w, fc_b = params
        scores = None
        x = F.relu(F.conv2d(x, conv_w1, conv_b1, padding=2))
        x = F.relu(F.conv2d(x, conv_w2, conv_b2, padding=1))
        scores = flatten(x).mm(fc_w) + fc_b
        return scores

    def random_weight(shape):
        if len(shape) == 2:  # FC weight
            fan_in = shape[0]
        else:
            fan_in = np.prod(shape[1:])  # conv weight [out_channel, in_channel, kH, kW]
        # randn is standard normal distribution generator.
        w = torch.randn(shape, device=device, dtype=dtype) * np.sqrt(2. / fan_in)
        w.requires_grad = True
        return w

    def zero_weight(shape):
        return torch.zeros(shape, device=device, dtype=dtype, requires_grad=True)

    def check_accuracy_part2(loader, model_fn, params):
        split = 'val' if loader.dataset.train else 'test'
        print('Checking accuracy on the %s set' % split)
        num_correct, num_samples = 0, 0
        with torch.no_grad():
            for x, y in loader:
                x = x.to(device=device, dtype=dtype)  # move to device, e.g. GPU
                y = y.to(device=device, dtype=torch.int64)
                scores = model_fn(x, params)
                _, preds = scores.max(1)
                num_correct += (preds == y).sum()
                num_samples += preds.size(0)
            acc = float(num_correct) / num_samples
            print('Got %d / %d correct (%.2f%%)' % (num_correct, num_samples, 100 * acc))

    def train_part2(model_fn, params, learning_rate):
        for t, (x, y) in enumerate(loader_train):
            # Move the data to the proper device (GPU or CPU)
            x = x.to(device=device, dtype=dtype)
            y = y.to(device=device, dtype=torch.long)
            # Forward pass: compute scores and loss
            scores = model_fn(x, params)
            loss = F.cross_entropy(scores, y)
            loss.backward()
            with torch.no_grad():
                for w in params:
                    w -= learning_rate * w.grad
                    # Manually zero the gradients after running the backward pass
                    w.grad.zero_()
            if t % print_every == 0:
                print('Iteration %d, loss = %.4f' % (t, loss.item()))
                check_accuracy_part2(loader_val, model_fn, params)
                print()

    class TwoLayerFC(nn.Module):
        def __init__(self, input_size, hidden_size, num_classes):
            super().__init__()
            # assign layer objects to class attributes
            self.fc1 = nn.Linear(input_size, hidden_size)
            # nn.init package contains convenient initialization methods
            nn.init.kaiming_normal_(self.fc1.weight)
            self.fc2 = nn.Linear(hidden_size, num_classes)
            nn.init.kaiming_normal_(self.fc2.weight)

        def forward(self, x):
            # forward always defines connectivity
            x = flatten(x)
            scores = self.fc2(F.relu(self.fc1(x)))
            return scores

    class ThreeLayerConvNet(nn.Module):
        def __init__(self, in_channel, channel_1, channel_2, num_classes):
            super().__init__()
            self.conv1 = nn.Conv2d(in_channel, channel_1, 5, padding=2)
            nn.init.kaiming_normal_(self.conv1.weight)
            self.conv2 = nn.Conv2d(channel_1, channel_2, 3, padding=1)
            nn.init.kaiming_normal_(self.conv2.weight)
            self.fc = nn.Linear(channel_2 * 8 * 8, num_classes)
            nn.init.kaiming_normal_(self.fc.weight)

        def forward(self, x):
            scores = None
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            scores = self.fc(flatten(x))
            return scores

    class Flatten(nn.Module):
        def forward(self, x):
            return flatten(x)

    def check_accuracy_part34(loader, model):
        if loader.dataset.train:
            print('Checking accuracy on validation set')
        else:
            print('Checking accuracy on test set')
        num_correct = 0
        num_samples = 0
        model.eval()  # set model to evaluation mode
        with torch.no_grad():
            for x, y in loader:
                x = x.to(device=device, dtype=dtype)  # move to device, e.g. GPU
                y = y.to(device=device, dtype=torch.long)
                scores = model(x)
                _, preds = scores.max(1)
                num_correct += (preds == y).sum()
                num_samples += preds.size(0)
            acc = float(num_correct) / num_samples
            print('Got %d / %d correct (%.2f)' % (num_correct, num_samples, 100 * acc))

    def train_part34(model, optimizer, epochs=1):
        model = model.to(device=device)  # move the model parameters to CPU/GPU
        for e in range(epochs):
            for t, (x, y) in enumerate(loader_train):
                model.train()  # put model to training mode
                x = x.to(device=device, dtype=dtype)  # move to device, e.g. GPU
                y = y.to(device=device, dtype=torch.long)
                scores = model(x)
                loss = F.cross_entropy(scores, y)
                # Zero out all of the gradients for the variables which the optimizer
                # will update.
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if t % print_every == 0:
                    print('Iteration %d, loss = %.4f' % (t, loss.item()))
                    check_accuracy_part34(loader_val, model)
                    print()

    result = {}
    if part == "II":
        channel_1, channel_2 = 6, 4
        conv_w1 = random_weight((channel_1, 3, 5, 5))
        conv_b1 = zero_weight((channel_1,))
        conv_w2 = random_weight((channel_2, channel_1, 3, 3))
        conv_b2 = zero_weight((channel_2,))
        fc_w = random_weight((channel_2 * 8 * 8, 3))
        fc_b = zero_weight((3,))
        params = [conv_w1, conv_b1, conv_w2, conv_b2, fc_w, fc_b]
        train_part2(three_layer_convnet, params, 3e-2)
        result["params"] = [numpy_of(p) for p in params]
    else:
        if part == "III-fc":
            model = TwoLayerFC(3 * 8 * 8, 16, 3)
            optimizer = optim.SGD(model.parameters(), lr=1e-2)
        elif part == "III-conv":
            model = ThreeLayerConvNet(3, 6, 4, 3)
            optimizer = optim.SGD(model.parameters(), lr=3e-3)
        else:
            model = nn.Sequential(Flatten(), nn.Linear(3 * 8 * 8, 16), nn.ReLU(), nn.Linear(16, 3))
            optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9, nesterov=True)
        start_from(torch, model, init, result)
        train_part34(model, optimizer, epochs=2)
        result["state"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    result["printed"] = "\n".join(printed)
    return result


def network_visualization(torch, init=None):
    nn = torch.nn
    dtype = torch.FloatTensor
    random.seed(0)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(6 * 4 * 4, 3))
    result = {}
    start_from(torch, model, init, result)
    # We don't want to train the model, so tell PyTorch not to compute gradients
    # with respect to model parameters.
    for param in model.parameters():
        param.requires_grad = False
    data = Split(torch, True, 5, 8, 3, 4)
    X = torch.stack([data[i][0] for i in range(5)])
    y = torch.LongTensor([data[i][1] for i in range(5)])
    SQUEEZENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    SQUEEZENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)

    def compute_saliency_maps(X, y, model):
        # Make sure the model is in "test" mode
        model.eval()
        # Make input tensor require gradient
        X.requires_grad_()
        saliency = None
        scores = model(X)
        scores = scores.gather(1, y.view(-1, 1)).squeeze()
        scores.backward(torch.ones(scores.shape))
        saliency, _ = torch.max(X.grad.data.abs(), dim=1)
        return saliency

    def make_fooling_image(X, target_y, model):
        # Initialize our fooling image to the input image, and make it require gradient
        X_fooling = X.clone()
        X_fooling = X_fooling.requires_grad_()
        learning_rate = 1
        for i in range(100):
            scores = model(X_fooling)
            _, index = scores.max(dim=1)
            if index[0] == target_y:
                break
            score = scores[0, target_y]
            score.backward()
            grad = X_fooling.grad.data
            X_fooling.data += learning_rate * (grad / grad.norm())
            X_fooling.grad.zero_()
        return X_fooling, i

    def jitter(X, ox, oy):
        if ox != 0:
            left = X[:, :, :, :-ox]
            right = X[:, :, :, -ox:]
            X = torch.cat([right, left], dim=3)
        if oy != 0:
            top = X[:, :, :-oy]
            bottom = X[:, :, -oy:]
            X = torch.cat([bottom, top], dim=2)
        return X

    def blur_image(X, sigma=1):
        X_np = X.cpu().clone().numpy()
        X_np = gaussian_filter1d(X_np, sigma, axis=2)
        X_np = gaussian_filter1d(X_np, sigma, axis=3)
        X.copy_(torch.Tensor(X_np).type_as(X))
        return X

    def class_visualization_update_step(img, model, target_y, l2_reg, learning_rate):
        scores = model(img)
        target_score = scores[0, target_y] - l2_reg * torch.square(torch.linalg.norm(img))
        target_score.backward()
        img.data += learning_rate * (img.grad / torch.linalg.norm(img.grad))
        img.grad.zero_()

    def create_class_visualization(target_y, model, dtype, **kwargs):
        model.type(dtype)
        l2_reg = kwargs.pop('l2_reg', 1e-3)
        learning_rate = kwargs.pop('learning_rate', 25)
        num_iterations = kwargs.pop('num_iterations', 100)
        blur_every = kwargs.pop('blur_every', 10)
        max_jitter = kwargs.pop('max_jitter', 16)
        # Randomly initialize the image as a PyTorch Tensor, and make it requires gradient.
        img = torch.randn(1, 3, 8, 8).mul_(1.0).type(dtype).requires_grad_()
        for t in range(num_iterations):
            # Randomly jitter the image a bit; this gives slightly nicer results
            ox, oy = random.randint(0, max_jitter), random.randint(0, max_jitter)
            img.data.copy_(jitter(img.data, ox, oy))
            class_visualization_update_step(img, model, target_y, l2_reg, learning_rate)
            # Undo the random jitter
            img.data.copy_(jitter(img.data, -ox, -oy))
            # As regularizer, clamp and periodically blur the image
            for c in range(3):
                lo = float(-SQUEEZENET_MEAN[c] / SQUEEZENET_STD[c])
                hi = float((1.0 - SQUEEZENET_MEAN[c]) / SQUEEZENET_STD[c])
                img.data[:, c].clamp_(min=lo, max=hi)
            if t % blur_every == 0:
                blur_image(img.data, sigma=0.5)
        return img.data.cpu()

    saliency = compute_saliency_maps(X, y, model)
    X_fooling, steps = make_fooling_image(X[:1].detach(), (int(y[0]) + 1) % 3, model)
    vis = create_class_visualization(2, model, dtype, num_iterations=12, blur_every=5, max_jitter=3,
                                     learning_rate=5)
    result.update(saliency=numpy_of(saliency), fooling=numpy_of(X_fooling), steps=steps, vis=numpy_of(vis))
    return result


def gans(torch, init=None, kind="vanilla"):
    nn = torch.nn
    optim = torch.optim
    dtype = torch.FloatTensor
    NOISE_DIM = 16
    batch_size = 8
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    def sample_noise(batch_size, dim, seed=None):
        if seed is not None:
            torch.manual_seed(seed)
        return torch.rand(batch_size, dim) * 2 - 1

    class Flatten(nn.Module):
        def forward(self, x):
            N, C, H, W = x.size()  # read in N, C, H, W
            return x.view(N, -1)  # "flatten" the C * H * W values into a single vector per image

    class Unflatten(nn.Module):
        def __init__(self, N=-1, C=128, H=7, W=7):
            super(Unflatten, self).__init__()
            self.N = N
            self.C = C
            self.H = H
            self.W = W

        def forward(self, x):
            return x.view(self.N, self.C, self.H, self.W)

    def initialize_weights(m):
        if isinstance(m, nn.Linear) or isinstance(m, nn.ConvTranspose2d):
            nn.init.xavier_uniform_(m.weight.data)

    def discriminator(seed=None):
        if seed is not None:
            torch.manual_seed(seed)
        return nn.Sequential(Flatten(), nn.Linear(144, 32), nn.LeakyReLU(0.01), nn.Linear(32, 32),
                             nn.LeakyReLU(0.01), nn.Linear(32, 1))

    def generator(noise_dim=NOISE_DIM, seed=None):
        if seed is not None:
            torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(noise_dim, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                             nn.Linear(32, 144), nn.Tanh())

    def build_dc_classifier(batch_size):
        return nn.Sequential(
            Unflatten(batch_size, 1, 12, 12),
            nn.Conv2d(1, 8, 3, 1), nn.LeakyReLU(0.01), nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 8, 3, 1), nn.LeakyReLU(0.01), nn.MaxPool2d(2, 2),
            Flatten(), nn.Linear(8 * 1 * 1, 8), nn.LeakyReLU(0.01), nn.Linear(8, 1))

    def build_dc_generator(noise_dim=NOISE_DIM):
        return nn.Sequential(
            nn.Linear(noise_dim, 64), nn.ReLU(), nn.BatchNorm1d(64),
            nn.Linear(64, 8 * 3 * 3), nn.ReLU(), nn.BatchNorm1d(8 * 3 * 3),
            Unflatten(-1, 8, 3, 3),
            nn.ConvTranspose2d(8, 4, 4, 2, 1), nn.ReLU(), nn.BatchNorm2d(4),
            nn.ConvTranspose2d(4, 1, 4, 2, 1), nn.Tanh(), Flatten())

    def bce_loss(input, target):
        bce = nn.BCEWithLogitsLoss()
        return bce(input.squeeze(), target)

    def discriminator_loss(logits_real, logits_fake):
        true_labels = torch.ones_like(logits_real).type(dtype)
        return bce_loss(logits_real, true_labels.squeeze()) + bce_loss(logits_fake, 1 - true_labels.squeeze())

    def generator_loss(logits_fake):
        return bce_loss(logits_fake, torch.ones_like(logits_fake).type(dtype).squeeze())

    def ls_discriminator_loss(scores_real, scores_fake):
        return 0.5 * torch.mean((scores_real - 1) ** 2) + 0.5 * torch.mean(scores_fake ** 2)

    def ls_generator_loss(scores_fake):
        return 0.5 * torch.mean((scores_fake - 1) ** 2)

    def get_optimizer(model):
        return optim.Adam(model.parameters(), lr=1e-3, betas=(0.5, 0.999))

    def run_a_gan(D, G, D_solver, G_solver, discriminator_loss, generator_loss, loader_train, show_every=250,
                  batch_size=128, noise_size=96, num_epochs=10):
        images = []
        iter_count = 0
        for epoch in range(num_epochs):
            for x, _ in loader_train:
                if len(x) != batch_size:
                    continue
                D_solver.zero_grad()
                real_data = x.type(dtype)
                logits_real = D(2 * (real_data - 0.5)).type(dtype)
                g_fake_seed = sample_noise(batch_size, noise_size).type(dtype)
                fake_images = G(g_fake_seed).detach()
                logits_fake = D(fake_images.view(batch_size, 1, 12, 12))
                d_total_error = discriminator_loss(logits_real, logits_fake)
                d_total_error.backward()
                D_solver.step()
                G_solver.zero_grad()
                g_fake_seed = sample_noise(batch_size, noise_size).type(dtype)
                fake_images = G(g_fake_seed)
                gen_logits_fake = D(fake_images.view(batch_size, 1, 12, 12))
                g_error = generator_loss(gen_logits_fake)
                g_error.backward()
                G_solver.step()
                if (iter_count % show_every == 0):
                    print('Iter: {}, D: {:.4}, G:{:.4}'.format(iter_count, d_total_error.item(), g_error.item()))
                    imgs_numpy = fake_images.data.cpu().numpy()
                    images.append(imgs_numpy[0:4])
                iter_count += 1
        return images

    torch.manual_seed(0)
    mnist_train = Split(torch, True, 36, 12, 1, 0)
    mnist_train.x = (mnist_train.x - mnist_train.x.min()) / (mnist_train.x.max() - mnist_train.x.min())
    loader_train = torch.utils.data.DataLoader(mnist_train, batch_size=batch_size,
                                               sampler=torch.utils.data.sampler.SubsetRandomSampler(range(32)))
    if kind == "dc":
        D = build_dc_classifier(batch_size).type(dtype)
        D.apply(initialize_weights)
        G = build_dc_generator().type(dtype)
        G.apply(initialize_weights)
    else:
        D = discriminator().type(dtype)
        G = generator().type(dtype)
    result = {}
    start_from(torch, {"D": D, "G": G}, init, result)
    D_solver = get_optimizer(D)
    G_solver = get_optimizer(G)
    losses = (ls_discriminator_loss, ls_generator_loss) if kind == "ls" else (discriminator_loss, generator_loss)
    images = run_a_gan(D, G, D_solver, G_solver, *losses, loader_train, show_every=3, batch_size=batch_size,
                       noise_size=NOISE_DIM, num_epochs=2)
    result.update(images=images, printed="\n".join(printed),
                  D={k: numpy_of(v) for k, v in D.state_dict().items()},
                  G={k: numpy_of(v) for k, v in G.state_dict().items()})
    return result


@pytest.mark.parametrize("part", ["II", "III-fc", "III-conv", "IV"])
def test_pytorch_notebook(part):
    ref, got = compare_program(assignment_pytorch, rtol=1e-3, atol=1e-4, part=part)
    assert "Iteration 0, loss = " in got["printed"] and "correct (" in got["printed"]


def test_network_visualization():
    ref, got = compare_program(network_visualization, rtol=1e-3, atol=1e-4)
    assert got["saliency"].shape == (5, 8, 8)


@pytest.mark.parametrize("kind", ["vanilla", "ls", "dc"])
def test_gans(kind):
    # The DC generator's Linear -> ReLU -> BatchNorm units that are positive over the whole batch
    # have a bias gradient of rounding alone (the norm removes the constant); Adam makes steps of
    # lr from it, which the next iterations carry: 1e-3 there.
    atol = 1e-3 if kind == "dc" else 1e-4
    ref, got = compare_program(gans, rtol=1e-3, atol=atol, kind=kind)
    assert got["printed"].startswith("Iter: 0, D: ")

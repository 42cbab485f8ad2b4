"""Sebastian Raschka's deeplearning-models notebooks (pytorch_ipynb) as they are written, MNIST and
CIFAR-10 replaced by small local images in a Dataset that returns (tensor, int) as torchvision's
do: softmax regression (weights zeroed through .detach().zero_(), (logits, probas) outputs,
'Epoch: %03d/%03d | Batch %03d/%03d | Cost: %.4f' formatting a 0-d tensor, compute_accuracy under
torch.set_grad_enabled(False)); the MLP with BatchNorm1d before the activation and the one with
F.dropout(training=self.training), weights drawn by .detach().normal_(0.0, 0.1); VGG16 (smaller
channels) of nn.Sequential blocks with the "same padding" arithmetic, ReLU(True), init through
self.modules() with .detach().normal_(0, 0.05), trained by helper_train.train_classifier_simple_v1
whose helpers test every output with isinstance(logits, torch.distributed.rpc.api.RRef); the
ResNet example's ResidualBlock with a strided 1x1 shortcut; the convolutional autoencoder with
F.interpolate(scale_factor=2, mode='nearest') and binary_cross_entropy_with_logits; and the GAN
(generator/discriminator nn.Sequential with LeakyReLU(inplace=True) and Dropout, noise by
torch.zeros(...).uniform_(-1.0, 1.0), BCE with valid/fake targets, two Adam optimizers). Seeds are
torch.manual_seed(random_seed) in both libraries, so shuffling, dropout and noise agree."""
import time

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from
from test_d2l_modern_cnns import make_images


def loaders(torch, size, channels, batch_size, n_train=48, n_test=24):
    """MNIST/CIFAR-10 as datasets.MNIST(..., transform=transforms.ToTensor()) hands them out."""
    class Images(torch.utils.data.Dataset):
        def __init__(self, seed, n):
            x, y = make_images(n, size, seed)
            self.x = (x - x.min()) / (x.max() - x.min())  # ToTensor's [0, 1] range
            self.x = np.repeat(self.x, channels, axis=1)
            self.y = y

        def __getitem__(self, index):
            return torch.tensor(self.x[index]), int(self.y[index])

        def __len__(self):
            return self.y.shape[0]

    train_loader = torch.utils.data.DataLoader(dataset=Images(0, n_train), batch_size=batch_size, shuffle=True)
    test_loader = torch.utils.data.DataLoader(dataset=Images(1, n_test), batch_size=batch_size, shuffle=False)
    return train_loader, test_loader


def build(torch, notebook, num_features, num_classes):
    nn = torch.nn
    F = torch.nn.functional

    class SoftmaxRegression(torch.nn.Module):
        def __init__(self, num_features, num_classes):
            super(SoftmaxRegression, self).__init__()
            self.linear = torch.nn.Linear(num_features, num_classes)
            self.linear.weight.detach().zero_()
            self.linear.bias.detach().zero_()

        def forward(self, x):
            logits = self.linear(x)
            probas = F.softmax(logits, dim=1)
            return logits, probas

    class MLP(torch.nn.Module):
        def __init__(self, num_features, num_classes, num_hidden_1=32, num_hidden_2=16, drop_proba=None):
            super(MLP, self).__init__()
            self.drop_proba = drop_proba
            ### 1st hidden layer
            self.linear_1 = torch.nn.Linear(num_features, num_hidden_1)
            self.linear_1.weight.detach().normal_(0.0, 0.1)
            self.linear_1.bias.detach().zero_()
            self.linear_1_bn = torch.nn.BatchNorm1d(num_hidden_1)
            ### 2nd hidden layer
            self.linear_2 = torch.nn.Linear(num_hidden_1, num_hidden_2)
            self.linear_2.weight.detach().normal_(0.0, 0.1)
            self.linear_2.bias.detach().zero_()
            self.linear_2_bn = torch.nn.BatchNorm1d(num_hidden_2)
            ### Output layer
            self.linear_out = torch.nn.Linear(num_hidden_2, num_classes)
            self.linear_out.weight.detach().normal_(0.0, 0.1)
            self.linear_out.bias.detach().zero_()

        def forward(self, x):
            out = self.linear_1(x)
            if self.drop_proba is None:
                # note that batchnorm is in the classic
                # sense placed before the activation
                out = self.linear_1_bn(out)
            out = F.relu(out)
            if self.drop_proba is not None:
                out = F.dropout(out, p=self.drop_proba, training=self.training)
            out = self.linear_2(out)
            if self.drop_proba is None:
                out = self.linear_2_bn(out)
            out = F.relu(out)
            if self.drop_proba is not None:
                out = F.dropout(out, p=self.drop_proba, training=self.training)
            logits = self.linear_out(out)
            probas = F.softmax(logits, dim=1)
            return logits, probas

    class VGG16(torch.nn.Module):
        def __init__(self, num_features, num_classes, c=(4, 8, 16, 16, 16)):
            super(VGG16, self).__init__()
            # calculate same padding:
            # (w - k + 2*p)/s + 1 = o
            # => p = (s(o-1) - w + k)/2
            self.block_1 = nn.Sequential(
                nn.Conv2d(in_channels=3, out_channels=c[0], kernel_size=(3, 3), stride=(1, 1),
                          # (1(32-1)- 32 + 3)/2 = 1
                          padding=1),
                nn.ReLU(),
                nn.Conv2d(in_channels=c[0], out_channels=c[0], kernel_size=(3, 3), stride=(1, 1), padding=1),
                nn.ReLU(),
                nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2)))
            self.block_2 = nn.Sequential(
                nn.Conv2d(in_channels=c[0], out_channels=c[1], kernel_size=(3, 3), stride=(1, 1), padding=1),
                nn.ReLU(),
                nn.Conv2d(in_channels=c[1], out_channels=c[1], kernel_size=(3, 3), stride=(1, 1), padding=1),
                nn.ReLU(),
                nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2)))
            blocks = []
            for cin, cout in [(c[1], c[2]), (c[2], c[3]), (c[3], c[4])]:
                blocks.append(nn.Sequential(
                    nn.Conv2d(in_channels=cin, out_channels=cout, kernel_size=(3, 3), stride=(1, 1), padding=1),
                    nn.ReLU(),
                    nn.Conv2d(in_channels=cout, out_channels=cout, kernel_size=(3, 3), stride=(1, 1), padding=1),
                    nn.ReLU(),
                    nn.Conv2d(in_channels=cout, out_channels=cout, kernel_size=(3, 3), stride=(1, 1), padding=1),
                    nn.ReLU(),
                    nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2))))
            self.block_3, self.block_4, self.block_5 = blocks
            self.classifier = nn.Sequential(
                nn.Linear(c[4], 32),
                nn.ReLU(True),
                nn.Linear(32, 32),
                nn.ReLU(True),
                nn.Linear(32, num_classes))
            self.flat = c[4]
            for m in self.modules():
                if isinstance(m, torch.nn.Conv2d):
                    m.weight.detach().normal_(0, 0.05)
                    if m.bias is not None:
                        m.bias.detach().zero_()
                elif isinstance(m, torch.nn.Linear):
                    m.weight.detach().normal_(0, 0.05)
                    m.bias.detach().detach().zero_()

        def forward(self, x):
            x = self.block_1(x)
            x = self.block_2(x)
            x = self.block_3(x)
            x = self.block_4(x)
            x = self.block_5(x)
            logits = self.classifier(x.view(-1, self.flat))
            return logits

    class ResidualBlock(torch.nn.Module):
        def __init__(self, channels):
            super(ResidualBlock, self).__init__()
            self.block = torch.nn.Sequential(
                torch.nn.Conv2d(in_channels=channels[0], out_channels=channels[1], kernel_size=(3, 3),
                                stride=(2, 2), padding=1),
                torch.nn.BatchNorm2d(channels[1]),
                torch.nn.ReLU(inplace=True),
                torch.nn.Conv2d(in_channels=channels[1], out_channels=channels[2], kernel_size=(1, 1),
                                stride=(1, 1), padding=0),
                torch.nn.BatchNorm2d(channels[2]))
            self.shortcut = torch.nn.Sequential(
                torch.nn.Conv2d(in_channels=channels[0], out_channels=channels[2], kernel_size=(1, 1),
                                stride=(2, 2), padding=0),
                torch.nn.BatchNorm2d(channels[2]))

        def forward(self, x):
            shortcut = x
            block = self.block(x)
            shortcut = self.shortcut(x)
            x = torch.nn.functional.relu(block + shortcut)
            return x

    class ConvNet(torch.nn.Module):
        def __init__(self, num_classes):
            super(ConvNet, self).__init__()
            self.residual_block_1 = ResidualBlock(channels=[1, 4, 8])
            self.residual_block_2 = ResidualBlock(channels=[8, 8, 16])
            self.linear_1 = torch.nn.Linear(4 * 4 * 16, num_classes)

        def forward(self, x):
            out = self.residual_block_1(x)
            out = self.residual_block_2(out)
            logits = self.linear_1(out.view(-1, 4 * 4 * 16))
            probas = F.softmax(logits, dim=1)
            return logits, probas

    class ConvolutionalAutoencoder(torch.nn.Module):
        def __init__(self):
            super(ConvolutionalAutoencoder, self).__init__()
            ### ENCODER
            # 16x16x1 => 16x16x4
            self.conv_1 = torch.nn.Conv2d(in_channels=1, out_channels=4, kernel_size=(3, 3), stride=(1, 1), padding=1)
            # 16x16x4 => 8x8x4
            self.pool_1 = torch.nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2), padding=0)
            # 8x8x4 => 8x8x8
            self.conv_2 = torch.nn.Conv2d(in_channels=4, out_channels=8, kernel_size=(3, 3), stride=(1, 1), padding=1)
            # 8x8x8 => 4x4x8
            self.pool_2 = torch.nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2), padding=0)
            ### DECODER
            # 4x4x8 => 8x8x4
            self.conv_3 = torch.nn.Conv2d(in_channels=8, out_channels=4, kernel_size=(3, 3), stride=(1, 1), padding=1)
            # 8x8x4 => 16x16x1
            self.conv_4 = torch.nn.Conv2d(in_channels=4, out_channels=1, kernel_size=(3, 3), stride=(1, 1), padding=1)

        def forward(self, x):
            ### ENCODER
            x = self.conv_1(x)
            x = F.leaky_relu(x)
            x = self.pool_1(x)
            x = self.conv_2(x)
            x = F.leaky_relu(x)
            x = self.pool_2(x)
            ### DECODER
            x = F.interpolate(x, scale_factor=2, mode='nearest')
            x = self.conv_3(x)
            x = F.leaky_relu(x)
            x = F.interpolate(x, scale_factor=2, mode='nearest')
            x = self.conv_4(x)
            x = F.leaky_relu(x)
            logits = x
            probas = torch.sigmoid(logits)
            return logits, probas

    if notebook == "softmax-regression":
        return SoftmaxRegression(num_features=num_features, num_classes=num_classes)
    if notebook == "mlp-batchnorm":
        return MLP(num_features=num_features, num_classes=num_classes)
    if notebook == "mlp-dropout":
        return MLP(num_features=num_features, num_classes=num_classes, drop_proba=0.5)
    if notebook == "cnn-vgg16":
        return VGG16(num_features=num_features, num_classes=num_classes)
    if notebook == "resnet-ex-1":
        return ConvNet(num_classes=num_classes)
    return ConvolutionalAutoencoder()


def train_classifier_simple_v1(torch, num_epochs, model, optimizer, device, train_loader, valid_loader=None,
                               loss_fn=None, logging_interval=100, skip_epoch_stats=False, print=print):
    """helper_train.py's loop with helper_evaluate.py's compute_accuracy and compute_epoch_loss."""
    F = torch.nn.functional

    def compute_accuracy(model, data_loader, device):
        model.eval()
        with torch.no_grad():
            correct_pred, num_examples = 0, 0
            for i, (features, targets) in enumerate(data_loader):
                features = features.to(device)
                targets = targets.to(device)
                logits = model(features)
                if isinstance(logits, torch.distributed.rpc.api.RRef):
                    logits = logits.local_value()
                _, predicted_labels = torch.max(logits, 1)
                num_examples += targets.size(0)
                correct_pred += (predicted_labels == targets).sum()
        return correct_pred.float() / num_examples * 100

    def compute_epoch_loss(model, data_loader, device):
        model.eval()
        curr_loss, num_examples = 0., 0
        with torch.no_grad():
            for features, targets in data_loader:
                features = features.to(device)
                targets = targets.to(device)
                logits = model(features)
                if isinstance(logits, torch.distributed.rpc.api.RRef):
                    logits = logits.local_value()
                loss = F.cross_entropy(logits, targets, reduction='sum')
                num_examples += targets.size(0)
                curr_loss += loss
            curr_loss = curr_loss / num_examples
            return curr_loss

    log_dict = {'train_loss_per_batch': [], 'train_acc_per_epoch': [], 'train_loss_per_epoch': [],
                'valid_acc_per_epoch': [], 'valid_loss_per_epoch': []}
    if loss_fn is None:
        loss_fn = F.cross_entropy
    for epoch in range(num_epochs):
        model.train()
        for batch_idx, (features, targets) in enumerate(train_loader):
            features = features.to(device)
            targets = targets.to(device)
            # FORWARD AND BACK PROP
            logits = model(features)
            if isinstance(logits, torch.distributed.rpc.api.RRef):
                logits = logits.local_value()
            loss = loss_fn(logits, targets)
            optimizer.zero_grad()
            loss.backward()
            # UPDATE MODEL PARAMETERS
            optimizer.step()
            # LOGGING
            log_dict['train_loss_per_batch'].append(loss.item())
            if not batch_idx % logging_interval:
                print('Epoch: %03d/%03d | Batch %04d/%04d | Loss: %.4f'
                      % (epoch + 1, num_epochs, batch_idx, len(train_loader), loss))
        if not skip_epoch_stats:
            model.eval()
            with torch.set_grad_enabled(False):  # save memory during inference
                train_acc = compute_accuracy(model, train_loader, device)
                train_loss = compute_epoch_loss(model, train_loader, device)
                print('***Epoch: %03d/%03d | Train. Acc.: %.3f%% | Loss: %.3f' % (
                      epoch + 1, num_epochs, train_acc, train_loss))
                log_dict['train_loss_per_epoch'].append(train_loss.item())
                log_dict['train_acc_per_epoch'].append(train_acc.item())
                if valid_loader is not None:
                    valid_acc = compute_accuracy(model, valid_loader, device)
                    valid_loss = compute_epoch_loss(model, valid_loader, device)
                    print('***Epoch: %03d/%03d | Valid. Acc.: %.3f%% | Loss: %.3f' % (
                          epoch + 1, num_epochs, valid_acc, valid_loss))
                    log_dict['valid_loss_per_epoch'].append(valid_loss.item())
                    log_dict['valid_acc_per_epoch'].append(valid_acc.item())
    return log_dict


def notebook_run(torch, init=None, notebook="softmax-regression"):
    F = torch.nn.functional
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    ##########################
    ### SETTINGS
    ##########################
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    random_seed = 1
    learning_rate = {"softmax-regression": 0.1, "cnn-vgg16": 0.001, "resnet-ex-1": 0.01}.get(notebook, 0.05)
    num_epochs = 3
    batch_size = 16
    num_classes = 3
    size = 32 if notebook == "cnn-vgg16" else 16
    channels = 3 if notebook == "cnn-vgg16" else 1
    num_features = size * size
    flat = notebook in ("softmax-regression", "mlp-batchnorm", "mlp-dropout")

    torch.manual_seed(random_seed)
    train_loader, test_loader = loaders(torch, size, channels, batch_size)
    model = build(torch, notebook, num_features, num_classes)
    model = model.to(device)
    result = {}
    start_from(torch, model, init, result)

    if notebook == "cnn-vgg16":
        optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
        log = train_classifier_simple_v1(torch, num_epochs, model, optimizer, device, train_loader,
                                         valid_loader=test_loader, logging_interval=2, print=print)
        result.update(log=log, printed="\n".join(printed),
                      state={k: numpy_of(v) for k, v in model.state_dict().items()})
        return result

    if notebook == "conv-autoencoder":
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

    def compute_accuracy(net, data_loader):
        net.eval()
        correct_pred, num_examples = 0, 0
        with torch.no_grad():
            for features, targets in data_loader:
                features = features.view(-1, num_features).to(device) if flat else features.to(device)
                targets = targets.to(device)
                logits, probas = net(features)
                _, predicted_labels = torch.max(probas, 1)
                num_examples += targets.size(0)
                correct_pred += (predicted_labels == targets).sum()
            return correct_pred.float() / num_examples * 100

    costs = []
    start_time = time.time()
    for epoch in range(num_epochs):
        model.train()
        for batch_idx, (features, targets) in enumerate(train_loader):
            features = features.view(-1, num_features).to(device) if flat else features.to(device)
            targets = targets.to(device)
            ### FORWARD AND BACK PROP
            logits, probas = model(features)
            if notebook == "conv-autoencoder":
                cost = F.binary_cross_entropy_with_logits(logits, features)
            else:
                cost = F.cross_entropy(logits, targets)
            optimizer.zero_grad()
            cost.backward()
            ### UPDATE MODEL PARAMETERS
            optimizer.step()
            costs.append(cost.item())
            ### LOGGING
            if not batch_idx % 2:
                print('Epoch: %03d/%03d | Batch %03d/%03d | Cost: %.4f'
                      % (epoch + 1, num_epochs, batch_idx, len(train_loader), cost))
        if notebook != "conv-autoencoder":
            with torch.set_grad_enabled(False):
                print('Epoch: %03d/%03d training accuracy: %.2f%%' % (
                      epoch + 1, num_epochs, compute_accuracy(model, train_loader)))
        elapsed = (time.time() - start_time) / 60
        assert elapsed >= 0
    if notebook != "conv-autoencoder":
        with torch.set_grad_enabled(False):  # save memory during inference
            print('Test accuracy: %.2f%%' % (compute_accuracy(model, test_loader)))
    else:
        features, _ = next(iter(test_loader))
        with torch.no_grad():
            result["decoded"] = numpy_of(model(features.to(device))[1])
    result.update(costs=costs, printed="\n".join(printed),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def gan(torch, init=None):
    nn = torch.nn
    F = torch.nn.functional
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    random_seed = 123
    generator_learning_rate = 0.001
    discriminator_learning_rate = 0.001
    NUM_EPOCHS = 3
    BATCH_SIZE = 16
    LATENT_DIM = 8
    IMG_SHAPE = (1, 16, 16)
    IMG_SIZE = 1
    for x in IMG_SHAPE:
        IMG_SIZE *= x

    torch.manual_seed(random_seed)
    train_loader, _ = loaders(torch, 16, 1, BATCH_SIZE)

    class GAN(torch.nn.Module):
        def __init__(self):
            super(GAN, self).__init__()
            self.generator = nn.Sequential(
                nn.Linear(LATENT_DIM, 32),
                nn.LeakyReLU(inplace=True),
                nn.Dropout(p=0.5),
                nn.Linear(32, IMG_SIZE),
                nn.Tanh())
            self.discriminator = nn.Sequential(
                nn.Linear(IMG_SIZE, 32),
                nn.LeakyReLU(inplace=True),
                nn.Dropout(p=0.5),
                nn.Linear(32, 1),
                nn.Sigmoid())

        def generator_forward(self, z):
            img = self.generator(z)
            return img

        def discriminator_forward(self, img):
            pred = model.discriminator(img)
            return pred.view(-1)

    model = GAN()
    model = model.to(device)
    result = {}
    start_from(torch, model, init, result)
    optim_gener = torch.optim.Adam(model.generator.parameters(), lr=generator_learning_rate)
    optim_discr = torch.optim.Adam(model.discriminator.parameters(), lr=discriminator_learning_rate)

    discr_costs = []
    gener_costs = []
    for epoch in range(NUM_EPOCHS):
        model = model.train()
        for batch_idx, (features, targets) in enumerate(train_loader):
            features = (features - 0.5) * 2.
            features = features.view(-1, IMG_SIZE).to(device)
            targets = targets.to(device)
            valid = torch.ones(targets.size(0)).float().to(device)
            fake = torch.zeros(targets.size(0)).float().to(device)
            ### FORWARD AND BACK PROP
            # Make new images
            z = torch.zeros((targets.size(0), LATENT_DIM)).uniform_(-1.0, 1.0).to(device)
            generated_features = model.generator_forward(z)
            # Loss for fooling the discriminator
            discr_pred = model.discriminator_forward(generated_features)
            gener_loss = F.binary_cross_entropy(discr_pred, valid)
            optim_gener.zero_grad()
            gener_loss.backward()
            optim_gener.step()
            # Train Discriminator
            discr_pred_real = model.discriminator_forward(features.view(-1, IMG_SIZE))
            real_loss = F.binary_cross_entropy(discr_pred_real, valid)
            discr_pred_fake = model.discriminator_forward(generated_features.detach())
            fake_loss = F.binary_cross_entropy(discr_pred_fake, fake)
            discr_loss = 0.5 * (real_loss + fake_loss)
            optim_discr.zero_grad()
            discr_loss.backward()
            optim_discr.step()
            discr_costs.append(discr_loss.item())
            gener_costs.append(gener_loss.item())
    model.eval()
    # Make new images
    z = torch.zeros((5, LATENT_DIM)).uniform_(-1.0, 1.0).to(device)
    generated_features = model.generator_forward(z)
    imgs = generated_features.view(-1, 16, 16)
    result.update(discr_costs=discr_costs, gener_costs=gener_costs, imgs=numpy_of(imgs),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


@pytest.mark.parametrize("notebook", ["softmax-regression", "mlp-batchnorm", "mlp-dropout", "cnn-vgg16",
                                      "resnet-ex-1", "conv-autoencoder"])
def test_notebook(notebook):
    ref, got = compare_program(notebook_run, rtol=1e-3, atol=1e-4, notebook=notebook)
    assert "Epoch: 001/003" in got["printed"]


def test_gan():
    ref, got = compare_program(gan, rtol=1e-3, atol=1e-4)
    assert np.isfinite(ref["gener_costs"]).all()

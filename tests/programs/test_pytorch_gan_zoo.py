"""eriklindernoren's PyTorch-GAN (implementations/cgan/cgan.py, acgan/acgan.py, wgan/wgan.py) as
published, with the argparse options passed as a list (smaller sizes and one short epoch), MNIST
(datasets.MNIST with Resize(img_size), ToTensor and Normalize([0.5], [0.5])) replaced by a local
Dataset of images in [-1, 1] with (tensor, int) items, and torchvision's save_image replaced by a
stand-in that keeps the grid's array. What the scripts lean on: FloatTensor = torch.cuda.FloatTensor
if cuda else torch.FloatTensor (and LongTensor) built from NumPy arrays and from sizes
(FloatTensor(batch_size, 1).fill_(1.0)), Variable(..., requires_grad=False), imgs.type(FloatTensor),
nn.BatchNorm1d(out_feat, 0.8) (eps given positionally), LeakyReLU(0.2, inplace=True) after Dropout,
the label Embedding concatenated with the noise or multiplied into it (torch.mul), model.apply(
weights_init_normal) matching classname.find("Conv"), Upsample(scale_factor=2), Dropout2d,
nn.Softmax() without dim, BCELoss and CrossEntropyLoss on the auxiliary head, NumPy accuracy of
.data.cpu().numpy(), RMSprop and weight clipping by p.data.clamp_. Randomness: NumPy's for noise
and labels (np.random.seed), PyTorch's streams for weights, shuffles and dropout masks
(torch.manual_seed; minitorch draws the same)."""
import argparse

import numpy as np
import pytest

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def mnist_like(torch, img_size, n=96):
    class MNIST(torch.utils.data.Dataset):
        def __init__(self):
            rng = np.random.default_rng(3)
            self.targets = rng.integers(0, 10, n)
            self.data = rng.uniform(-1, -0.4, (n, 1, img_size, img_size)).astype(np.float32)
            for i, c in enumerate(self.targets):
                self.data[i, 0, c + 2:c + 6, 4:img_size - 4] = 0.9

        def __len__(self):
            return n

        def __getitem__(self, index):
            return torch.from_numpy(self.data[index]), int(self.targets[index])

    return MNIST()


def make_parser(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--n_epochs", type=int, default=200, help="number of epochs of training")
    parser.add_argument("--batch_size", type=int, default=64, help="size of the batches")
    parser.add_argument("--lr", type=float, default=0.0002, help="adam: learning rate")
    parser.add_argument("--b1", type=float, default=0.5, help="adam: decay of first order momentum of gradient")
    parser.add_argument("--b2", type=float, default=0.999, help="adam: decay of first order momentum of gradient")
    parser.add_argument("--n_cpu", type=int, default=8, help="number of cpu threads to use during batch generation")
    parser.add_argument("--latent_dim", type=int, default=100, help="dimensionality of the latent space")
    parser.add_argument("--n_classes", type=int, default=10, help="number of classes for dataset")
    parser.add_argument("--img_size", type=int, default=32, help="size of each image dimension")
    parser.add_argument("--channels", type=int, default=1, help="number of image channels")
    parser.add_argument("--clip_value", type=float, default=0.01, help="lower and upper clip value for disc. weights")
    parser.add_argument("--n_critic", type=int, default=5, help="number of training steps for discriminator per iter")
    parser.add_argument("--sample_interval", type=int, default=400, help="interval between image sampling")
    return parser.parse_args(argv)


ARGV = ["--n_epochs", "1", "--batch_size", "32", "--latent_dim", "16", "--img_size", "16", "--sample_interval", "2"]


def cgan(torch, init=None):
    nn = torch.nn
    Variable = torch.autograd.Variable
    saved = []

    def save_image(tensor, path, nrow=8, normalize=False):  # stands in for torchvision.utils.save_image
        saved.append((path, numpy_of(tensor)))

    with captured_run(torch, seed=0) as out:
        np.random.seed(0)
        opt = make_parser(ARGV)
        print(opt)
        img_shape = (opt.channels, opt.img_size, opt.img_size)
        cuda = True if torch.cuda.is_available() else False

        class Generator(nn.Module):
            def __init__(self):
                super(Generator, self).__init__()
                self.label_emb = nn.Embedding(opt.n_classes, opt.n_classes)

                def block(in_feat, out_feat, normalize=True):
                    layers = [nn.Linear(in_feat, out_feat)]
                    if normalize:
                        layers.append(nn.BatchNorm1d(out_feat, 0.8))
                    layers.append(nn.LeakyReLU(0.2, inplace=True))
                    return layers

                self.model = nn.Sequential(
                    *block(opt.latent_dim + opt.n_classes, 128, normalize=False),
                    *block(128, 256),
                    *block(256, 512),
                    *block(512, 1024),
                    nn.Linear(1024, int(np.prod(img_shape))),
                    nn.Tanh()
                )

            def forward(self, noise, labels):
                # Concatenate label embedding and image to produce input
                gen_input = torch.cat((self.label_emb(labels), noise), -1)
                img = self.model(gen_input)
                img = img.view(img.size(0), *img_shape)
                return img

        class Discriminator(nn.Module):
            def __init__(self):
                super(Discriminator, self).__init__()
                self.label_embedding = nn.Embedding(opt.n_classes, opt.n_classes)
                self.model = nn.Sequential(
                    nn.Linear(opt.n_classes + int(np.prod(img_shape)), 512),
                    nn.LeakyReLU(0.2, inplace=True),
                    nn.Linear(512, 512),
                    nn.Dropout(0.4),
                    nn.LeakyReLU(0.2, inplace=True),
                    nn.Linear(512, 512),
                    nn.Dropout(0.4),
                    nn.LeakyReLU(0.2, inplace=True),
                    nn.Linear(512, 1),
                )

            def forward(self, img, labels):
                # Concatenate label embedding and image to produce input
                d_in = torch.cat((img.view(img.size(0), -1), self.label_embedding(labels)), -1)
                validity = self.model(d_in)
                return validity

        # Loss functions
        adversarial_loss = torch.nn.MSELoss()
        # Initialize generator and discriminator
        generator = Generator()
        discriminator = Discriminator()
        if cuda:
            generator.cuda()
            discriminator.cuda()
            adversarial_loss.cuda()
        dataloader = torch.utils.data.DataLoader(mnist_like(torch, opt.img_size), batch_size=opt.batch_size,
                                                 shuffle=True)
        # Optimizers
        optimizer_G = torch.optim.Adam(generator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
        optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
        FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
        LongTensor = torch.cuda.LongTensor if cuda else torch.LongTensor

        def sample_image(n_row, batches_done):
            """Saves a grid of generated digits ranging from 0 to n_classes"""
            # Sample noise
            z = Variable(FloatTensor(np.random.normal(0, 1, (n_row ** 2, opt.latent_dim))))
            # Get labels ranging from 0 to n_classes for n rows
            labels = np.array([num for _ in range(n_row) for num in range(n_row)])
            labels = Variable(LongTensor(labels))
            gen_imgs = generator(z, labels)
            save_image(gen_imgs.data, "images/%d.png" % batches_done, nrow=n_row, normalize=True)

        for epoch in range(opt.n_epochs):
            for i, (imgs, labels) in enumerate(dataloader):
                batch_size = imgs.shape[0]
                # Adversarial ground truths
                valid = Variable(FloatTensor(batch_size, 1).fill_(1.0), requires_grad=False)
                fake = Variable(FloatTensor(batch_size, 1).fill_(0.0), requires_grad=False)
                # Configure input
                real_imgs = Variable(imgs.type(FloatTensor))
                labels = Variable(labels.type(LongTensor))
                #  Train Generator
                optimizer_G.zero_grad()
                # Sample noise and labels as generator input
                z = Variable(FloatTensor(np.random.normal(0, 1, (batch_size, opt.latent_dim))))
                gen_labels = Variable(LongTensor(np.random.randint(0, opt.n_classes, batch_size)))
                # Generate a batch of images
                gen_imgs = generator(z, gen_labels)
                # Loss measures generator's ability to fool the discriminator
                validity = discriminator(gen_imgs, gen_labels)
                g_loss = adversarial_loss(validity, valid)
                g_loss.backward()
                optimizer_G.step()
                #  Train Discriminator
                optimizer_D.zero_grad()
                # Loss for real images
                validity_real = discriminator(real_imgs, labels)
                d_real_loss = adversarial_loss(validity_real, valid)
                # Loss for fake images
                validity_fake = discriminator(gen_imgs.detach(), gen_labels)
                d_fake_loss = adversarial_loss(validity_fake, fake)
                # Total discriminator loss
                d_loss = (d_real_loss + d_fake_loss) / 2
                d_loss.backward()
                optimizer_D.step()
                print(
                    "[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss: %f]"
                    % (epoch, opt.n_epochs, i, len(dataloader), d_loss.item(), g_loss.item())
                )
                batches_done = epoch * len(dataloader) + i
                if batches_done % opt.sample_interval == 0:
                    sample_image(n_row=10, batches_done=batches_done)
        state = {k: numpy_of(v) for k, v in generator.state_dict().items()}
    return {"printed": printed_lines(out), "saved": saved, "generator": state}


def acgan(torch, init=None):
    nn = torch.nn
    Variable = torch.autograd.Variable
    saved = []

    def save_image(tensor, path, nrow=8, normalize=False):  # stands in for torchvision.utils.save_image
        saved.append((path, numpy_of(tensor)))

    with captured_run(torch, seed=0) as out:
        np.random.seed(0)
        opt = make_parser(ARGV)
        print(opt)
        cuda = True if torch.cuda.is_available() else False

        def weights_init_normal(m):
            classname = m.__class__.__name__
            if classname.find("Conv") != -1:
                torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
            elif classname.find("BatchNorm2d") != -1:
                torch.nn.init.normal_(m.weight.data, 1.0, 0.02)
                torch.nn.init.constant_(m.bias.data, 0.0)

        class Generator(nn.Module):
            def __init__(self):
                super(Generator, self).__init__()
                self.label_emb = nn.Embedding(opt.n_classes, opt.latent_dim)
                self.init_size = opt.img_size // 4  # Initial size before upsampling
                self.l1 = nn.Sequential(nn.Linear(opt.latent_dim, 128 * self.init_size ** 2))
                self.conv_blocks = nn.Sequential(
                    nn.BatchNorm2d(128),
                    nn.Upsample(scale_factor=2),
                    nn.Conv2d(128, 128, 3, stride=1, padding=1),
                    nn.BatchNorm2d(128, 0.8),
                    nn.LeakyReLU(0.2, inplace=True),
                    nn.Upsample(scale_factor=2),
                    nn.Conv2d(128, 64, 3, stride=1, padding=1),
                    nn.BatchNorm2d(64, 0.8),
                    nn.LeakyReLU(0.2, inplace=True),
                    nn.Conv2d(64, opt.channels, 3, stride=1, padding=1),
                    nn.Tanh(),
                )

            def forward(self, noise, labels):
                gen_input = torch.mul(self.label_emb(labels), noise)
                out = self.l1(gen_input)
                out = out.view(out.shape[0], 128, self.init_size, self.init_size)
                img = self.conv_blocks(out)
                return img

        class Discriminator(nn.Module):
            def __init__(self):
                super(Discriminator, self).__init__()

                def discriminator_block(in_filters, out_filters, bn=True):
                    """Returns layers of each discriminator block"""
                    block = [nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2, inplace=True),
                             nn.Dropout2d(0.25)]
                    if bn:
                        block.append(nn.BatchNorm2d(out_filters, 0.8))
                    return block

                self.conv_blocks = nn.Sequential(
                    *discriminator_block(opt.channels, 16, bn=False),
                    *discriminator_block(16, 32),
                    *discriminator_block(32, 64),
                    *discriminator_block(64, 128),
                )
                # The height and width of downsampled image
                ds_size = opt.img_size // 2 ** 4
                # Output layers
                self.adv_layer = nn.Sequential(nn.Linear(128 * ds_size ** 2, 1), nn.Sigmoid())
                self.aux_layer = nn.Sequential(nn.Linear(128 * ds_size ** 2, opt.n_classes), nn.Softmax())

            def forward(self, img):
                out = self.conv_blocks(img)
                out = out.view(out.shape[0], -1)
                validity = self.adv_layer(out)
                label = self.aux_layer(out)
                return validity, label

        # Loss functions
        adversarial_loss = torch.nn.BCELoss()
        auxiliary_loss = torch.nn.CrossEntropyLoss()
        # Initialize generator and discriminator
        generator = Generator()
        discriminator = Discriminator()
        if cuda:
            generator.cuda()
            discriminator.cuda()
            adversarial_loss.cuda()
            auxiliary_loss.cuda()
        # Initialize weights
        generator.apply(weights_init_normal)
        discriminator.apply(weights_init_normal)
        dataloader = torch.utils.data.DataLoader(mnist_like(torch, opt.img_size), batch_size=opt.batch_size,
                                                 shuffle=True)
        # Optimizers
        optimizer_G = torch.optim.Adam(generator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
        optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
        FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
        LongTensor = torch.cuda.LongTensor if cuda else torch.LongTensor

        def sample_image(n_row, batches_done):
            """Saves a grid of generated digits ranging from 0 to n_classes"""
            # Sample noise
            z = Variable(FloatTensor(np.random.normal(0, 1, (n_row ** 2, opt.latent_dim))))
            # Get labels ranging from 0 to n_classes for n rows
            labels = np.array([num for _ in range(n_row) for num in range(n_row)])
            labels = Variable(LongTensor(labels))
            gen_imgs = generator(z, labels)
            save_image(gen_imgs.data, "images/%d.png" % batches_done, nrow=n_row, normalize=True)

        for epoch in range(opt.n_epochs):
            for i, (imgs, labels) in enumerate(dataloader):
                batch_size = imgs.shape[0]
                # Adversarial ground truths
                valid = Variable(FloatTensor(batch_size, 1).fill_(1.0), requires_grad=False)
                fake = Variable(FloatTensor(batch_size, 1).fill_(0.0), requires_grad=False)
                # Configure input
                real_imgs = Variable(imgs.type(FloatTensor))
                labels = Variable(labels.type(LongTensor))
                #  Train Generator
                optimizer_G.zero_grad()
                # Sample noise and labels as generator input
                z = Variable(FloatTensor(np.random.normal(0, 1, (batch_size, opt.latent_dim))))
                gen_labels = Variable(LongTensor(np.random.randint(0, opt.n_classes, batch_size)))
                # Generate a batch of images
                gen_imgs = generator(z, gen_labels)
                # Loss measures generator's ability to fool the discriminator
                validity, pred_label = discriminator(gen_imgs)
                g_loss = 0.5 * (adversarial_loss(validity, valid) + auxiliary_loss(pred_label, gen_labels))
                g_loss.backward()
                optimizer_G.step()
                #  Train Discriminator
                optimizer_D.zero_grad()
                # Loss for real images
                real_pred, real_aux = discriminator(real_imgs)
                d_real_loss = (adversarial_loss(real_pred, valid) + auxiliary_loss(real_aux, labels)) / 2
                # Loss for fake images
                fake_pred, fake_aux = discriminator(gen_imgs.detach())
                d_fake_loss = (adversarial_loss(fake_pred, fake) + auxiliary_loss(fake_aux, gen_labels)) / 2
                # Total discriminator loss
                d_loss = (d_real_loss + d_fake_loss) / 2
                # Calculate discriminator accuracy
                pred = np.concatenate([real_aux.data.cpu().numpy(), fake_aux.data.cpu().numpy()], axis=0)
                gt = np.concatenate([labels.data.cpu().numpy(), gen_labels.data.cpu().numpy()], axis=0)
                d_acc = np.mean(np.argmax(pred, axis=1) == gt)
                d_loss.backward()
                optimizer_D.step()
                print(
                    "[Epoch %d/%d] [Batch %d/%d] [D loss: %f, acc: %d%%] [G loss: %f]"
                    % (epoch, opt.n_epochs, i, len(dataloader), d_loss.item(), 100 * d_acc, g_loss.item())
                )
                batches_done = epoch * len(dataloader) + i
                if batches_done % opt.sample_interval == 0:
                    sample_image(n_row=10, batches_done=batches_done)
        state = {k: numpy_of(v) for k, v in generator.state_dict().items()}
    return {"printed": printed_lines(out), "saved": saved, "generator": state}


def wgan(torch, init=None):
    nn = torch.nn
    Variable = torch.autograd.Variable
    saved = []

    def save_image(tensor, path, nrow=8, normalize=False):  # stands in for torchvision.utils.save_image
        saved.append((path, numpy_of(tensor)))

    with captured_run(torch, seed=0) as out:
        np.random.seed(0)
        opt = make_parser(ARGV + ["--lr", "0.00005", "--n_critic", "2"])
        print(opt)
        img_shape = (opt.channels, opt.img_size, opt.img_size)
        cuda = True if torch.cuda.is_available() else False

        class Generator(nn.Module):
            def __init__(self):
                super(Generator, self).__init__()

                def block(in_feat, out_feat, normalize=True):
                    layers = [nn.Linear(in_feat, out_feat)]
                    if normalize:
                        layers.append(nn.BatchNorm1d(out_feat, 0.8))
                    layers.append(nn.LeakyReLU(0.2, inplace=True))
                    return layers

                self.model = nn.Sequential(
                    *block(opt.latent_dim, 128, normalize=False),
                    *block(128, 256),
                    *block(256, 512),
                    *block(512, 1024),
                    nn.Linear(1024, int(np.prod(img_shape))),
                    nn.Tanh()
                )

            def forward(self, z):
                img = self.model(z)
                img = img.view(img.shape[0], *img_shape)
                return img

        class Discriminator(nn.Module):
            def __init__(self):
                super(Discriminator, self).__init__()
                self.model = nn.Sequential(
                    nn.Linear(int(np.prod(img_shape)), 512),
                    nn.LeakyReLU(0.2, inplace=True),
                    nn.Linear(512, 256),
                    nn.LeakyReLU(0.2, inplace=True),
                    nn.Linear(256, 1),
                )

            def forward(self, img):
                img_flat = img.view(img.shape[0], -1)
                validity = self.model(img_flat)
                return validity

        # Initialize generator and discriminator
        generator = Generator()
        discriminator = Discriminator()
        if cuda:
            generator.cuda()
            discriminator.cuda()
        dataloader = torch.utils.data.DataLoader(mnist_like(torch, opt.img_size), batch_size=opt.batch_size,
                                                 shuffle=True)
        # Optimizers
        optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=opt.lr)
        optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=opt.lr)
        Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
        batches_done = 0
        for epoch in range(opt.n_epochs):
            for i, (imgs, _) in enumerate(dataloader):
                # Configure input
                real_imgs = Variable(imgs.type(Tensor))
                #  Train Discriminator
                optimizer_D.zero_grad()
                # Sample noise as generator input
                z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim))))
                # Generate a batch of images
                fake_imgs = generator(z).detach()
                # Adversarial loss
                loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))
                loss_D.backward()
                optimizer_D.step()
                # Clip weights of discriminator
                for p in discriminator.parameters():
                    p.data.clamp_(-opt.clip_value, opt.clip_value)
                # Train the generator every n_critic iterations
                if i % opt.n_critic == 0:
                    optimizer_G.zero_grad()
                    # Generate a batch of images
                    gen_imgs = generator(z)
                    # Adversarial loss
                    loss_G = -torch.mean(discriminator(gen_imgs))
                    loss_G.backward()
                    optimizer_G.step()
                    print(
                        "[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss: %f]"
                        % (epoch, opt.n_epochs, batches_done % len(dataloader), len(dataloader), loss_D.item(),
                           loss_G.item())
                    )
                if batches_done % opt.sample_interval == 0:
                    save_image(gen_imgs.data[:25], "images/%d.png" % batches_done, nrow=5, normalize=True)
                batches_done += 1
        state = {k: numpy_of(v) for k, v in discriminator.state_dict().items()}
    return {"printed": printed_lines(out), "saved": saved, "discriminator": state}


@pytest.mark.parametrize("script", [cgan, acgan, wgan], ids=["cgan", "acgan", "wgan"])
def test_pytorch_gan_script(script):
    # Adam/RMSprop turn rounding-level gradient differences into steps of lr: compare loosely.
    compare_program(script, rtol=2e-3, atol=2e-4)

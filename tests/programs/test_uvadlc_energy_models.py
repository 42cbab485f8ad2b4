"""Phillip Lippe's UvA deep-learning tutorial 8 ("Deep Energy-Based Generative Models") as written,
MNIST replaced by local 28x28 images normalised to [-1, 1] as the tutorial's Normalize((0.5,),
(0.5,)) does, PyTorch Lightning by the loop a run makes (training_step, backward, optimizer.step,
the StepLR per epoch; validation_step under no_grad): a Swish module, the CNNModel of strided
Conv2d (padding=4 to reach 16x16) ending in Linear layers and squeeze(dim=-1); the Sampler's
buffer of torch.rand((1,)+img_shape)*2-1 examples, np.random.binomial and random.choices for the
batch, and its Langevin dynamics in generate_samples: p.requires_grad = False over the model's
parameters, inp_imgs.requires_grad = True, torch.is_grad_enabled() and torch.set_grad_enabled(True)
called as a function (and restored the same way), noise.normal_(0, 0.005) into a buffer,
inp_imgs.data.add_ / clamp_, -model(inp_imgs) summed and backward, inp_imgs.grad.data.clamp_,
grad.detach_() and zero_(); chunk into the buffer; the training step's real_imgs.add_(noise).clamp_
in place on the batch, the regularisation and contrastive-divergence losses over
cnn(...).chunk(2, dim=0); Adam with betas=(beta1, 0.999); then the tutorial's out-of-distribution
checks (random images' energy, compare_images of flipped and shifted digits). Smaller: 32 images,
batch 8, 20 Langevin steps in training, two epochs. Randomness from pl.seed_everything(42):
torch.manual_seed, random.seed and np.random.seed, so both libraries draw the same streams."""
import random

import numpy as np

from prog_helpers import compare_program, numpy_of
from test_examples_forward_forward import local_mnist
from test_uvadlc_transformers import lightning_module


def tutorial8(torch, init=None, epochs=2, mcmc_steps=20):
    nn, optim, data = torch.nn, torch.optim, torch.utils.data
    device = torch.device("cpu")
    r = {}

    LightningModule = lightning_module(torch)

    # pl.seed_everything(42)
    random.seed(42)
    np.random.seed(42)
    torch.manual_seed(42)

    MNIST = local_mnist(torch, train_size=32, test_size=16)
    transform = lambda img: (img - 0.5) / 0.5  # transforms.Normalize((0.5,), (0.5,)) after ToTensor
    train_set = MNIST(root="data", train=True, transform=transform, download=True)
    test_set = MNIST(root="data", train=False, transform=transform, download=True)
    train_loader = data.DataLoader(train_set, batch_size=8, shuffle=True, drop_last=True, num_workers=0,
                                   pin_memory=False)
    test_loader = data.DataLoader(test_set, batch_size=8, shuffle=False, drop_last=False, num_workers=0)

    class Swish(nn.Module):

        def forward(self, x):
            return x * torch.sigmoid(x)

    class CNNModel(nn.Module):

        def __init__(self, hidden_features=32, out_dim=1, **kwargs):
            super().__init__()
            # We increase the hidden dimension over layers. Here pre-calculated for simplicity.
            c_hid1 = hidden_features // 2
            c_hid2 = hidden_features
            c_hid3 = hidden_features * 2

            # Series of convolutions and Swish activation functions
            self.cnn_layers = nn.Sequential(
                nn.Conv2d(1, c_hid1, kernel_size=5, stride=2, padding=4),  # [16x16] - Larger padding to get 32x32 image
                Swish(),
                nn.Conv2d(c_hid1, c_hid2, kernel_size=3, stride=2, padding=1),  # [8x8]
                Swish(),
                nn.Conv2d(c_hid2, c_hid3, kernel_size=3, stride=2, padding=1),  # [4x4]
                Swish(),
                nn.Conv2d(c_hid3, c_hid3, kernel_size=3, stride=2, padding=1),  # [2x2]
                Swish(),
                nn.Flatten(),
                nn.Linear(c_hid3 * 4, c_hid3),
                Swish(),
                nn.Linear(c_hid3, out_dim)
            )

        def forward(self, x):
            x = self.cnn_layers(x).squeeze(dim=-1)
            return x

    class Sampler:

        def __init__(self, model, img_shape, sample_size, max_len=8192):
            """
            Inputs:
                model - Neural network to use for modeling E_theta
                img_shape - Shape of the images to model
                sample_size - Batch size of the samples
                max_len - Maximum number of data points to keep in the buffer
            """
            super().__init__()
            self.model = model
            self.img_shape = img_shape
            self.sample_size = sample_size
            self.max_len = max_len
            self.examples = [(torch.rand((1,) + img_shape) * 2 - 1) for _ in range(self.sample_size)]

        def sample_new_exmps(self, steps=60, step_size=10):
            """
            Function for getting a new batch of "fake" images.
            Inputs:
                steps - Number of iterations in the MCMC algorithm
                step_size - Learning rate nu in the algorithm above
            """
            # Choose 95% of the batch from the buffer, 5% generate from scratch
            n_new = np.random.binomial(self.sample_size, 0.05)
            rand_imgs = torch.rand((n_new,) + self.img_shape) * 2 - 1
            old_imgs = torch.cat(random.choices(self.examples, k=self.sample_size - n_new), dim=0)
            inp_imgs = torch.cat([rand_imgs, old_imgs], dim=0).detach().to(device)

            # Perform MCMC sampling
            inp_imgs = Sampler.generate_samples(self.model, inp_imgs, steps=steps, step_size=step_size)

            # Add new images to the buffer and remove old ones if needed
            self.examples = list(inp_imgs.to(torch.device("cpu")).chunk(self.sample_size, dim=0)) + self.examples
            self.examples = self.examples[:self.max_len]
            return inp_imgs

        @staticmethod
        def generate_samples(model, inp_imgs, steps=60, step_size=10, return_img_per_step=False):
            """
            Function for sampling images for a given model.
            Inputs:
                model - Neural network to use for modeling E_theta
                inp_imgs - Images to start from for sampling. If you want to generate new images, enter noise between -1 and 1.
                steps - Number of iterations in the MCMC algorithm.
                step_size - Learning rate nu in the algorithm above
                return_img_per_step - If True, we return the sample at every iteration of the MCMC
            """
            # Before MCMC: set model parameters to "required_grad=False"
            # because we are only interested in the gradients of the input.
            is_training = model.training
            model.eval()
            for p in model.parameters():
                p.requires_grad = False
            inp_imgs.requires_grad = True

            # Enable gradient calculation if not already the case
            had_gradients_enabled = torch.is_grad_enabled()
            torch.set_grad_enabled(True)

            # We use a buffer tensor in which we generate noise each loop iteration.
            # More efficient than creating a new tensor every iteration.
            noise = torch.randn(inp_imgs.shape, device=inp_imgs.device)

            # List for storing generations at each step (for later analysis)
            imgs_per_step = []

            # Loop over K (steps)
            for _ in range(steps):
                # Part 1: Add noise to the input.
                noise.normal_(0, 0.005)
                inp_imgs.data.add_(noise.data)
                inp_imgs.data.clamp_(min=-1.0, max=1.0)

                # Part 2: calculate gradients for the current input.
                out_imgs = -model(inp_imgs)
                out_imgs.sum().backward()
                inp_imgs.grad.data.clamp_(-0.03, 0.03)  # For stabilizing and preventing too high gradients

                # Apply gradients to our current samples
                inp_imgs.data.add_(-step_size * inp_imgs.grad.data)
                inp_imgs.grad.detach_()
                inp_imgs.grad.zero_()
                inp_imgs.data.clamp_(min=-1.0, max=1.0)

                if return_img_per_step:
                    imgs_per_step.append(inp_imgs.clone().detach())

            # Reactivate gradients for parameters for training
            for p in model.parameters():
                p.requires_grad = True
            model.train(is_training)

            # Reset gradient calculation to setting before this function
            torch.set_grad_enabled(had_gradients_enabled)

            if return_img_per_step:
                return torch.stack(imgs_per_step, dim=0)
            else:
                return inp_imgs

    class DeepEnergyModel(LightningModule):

        def __init__(self, img_shape, batch_size, alpha=0.1, lr=1e-4, beta1=0.0, **CNN_args):
            super().__init__()
            self.save_hyperparameters()

            self.cnn = CNNModel(**CNN_args)
            self.sampler = Sampler(self.cnn, img_shape=img_shape, sample_size=batch_size)
            self.example_input_array = torch.zeros(1, *img_shape)

        def forward(self, x):
            z = self.cnn(x)
            return z

        def configure_optimizers(self):
            # Energy models can have issues with momentum as the loss surfaces changes with its parameters.
            # Hence, we set it to 0 by default.
            optimizer = optim.Adam(self.parameters(), lr=self.hparams.lr, betas=(self.hparams.beta1, 0.999))
            scheduler = optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.97)  # Exponential decay over epochs
            return [optimizer], [scheduler]

        def training_step(self, batch, batch_idx):
            # We add minimal noise to the original images to prevent the model from focusing on purely "clean" inputs
            real_imgs, _ = batch
            small_noise = torch.randn_like(real_imgs) * 0.005
            real_imgs.add_(small_noise).clamp_(min=-1.0, max=1.0)

            # Obtain samples
            fake_imgs = self.sampler.sample_new_exmps(steps=mcmc_steps, step_size=10)

            # Predict energy score for all images
            inp_imgs = torch.cat([real_imgs, fake_imgs], dim=0)
            real_out, fake_out = self.cnn(inp_imgs).chunk(2, dim=0)

            # Calculate losses
            reg_loss = self.hparams.alpha * (real_out ** 2 + fake_out ** 2).mean()
            cdiv_loss = fake_out.mean() - real_out.mean()
            loss = reg_loss + cdiv_loss

            # Logging
            self.log('loss', loss)
            self.log('loss_regularization', reg_loss)
            self.log('loss_contrastive_divergence', cdiv_loss)
            self.log('metrics_avg_real', real_out.mean())
            self.log('metrics_avg_fake', fake_out.mean())
            return loss

        def validation_step(self, batch, batch_idx):
            # For validating, we calculate the contrastive divergence between purely random images and unseen examples
            # Note that the validation/test step of energy-based models depends on what we are interested in the model
            real_imgs, _ = batch
            fake_imgs = torch.rand_like(real_imgs) * 2 - 1

            inp_imgs = torch.cat([real_imgs, fake_imgs], dim=0)
            real_out, fake_out = self.cnn(inp_imgs).chunk(2, dim=0)

            cdiv = fake_out.mean() - real_out.mean()
            self.log('val_contrastive_divergence', cdiv)
            self.log('val_fake_out', fake_out.mean())
            self.log('val_real_out', real_out.mean())

    model = DeepEnergyModel(img_shape=(1, 28, 28), batch_size=train_loader.batch_size, lr=1e-4, beta1=0.0)
    r["hparams"] = sorted(model.hparams)
    [optimizer], [scheduler] = model.configure_optimizers()
    for epoch in range(epochs):  # trainer.fit(model, train_loader, test_loader)
        model.train()
        for batch_idx, batch in enumerate(train_loader):
            loss = model.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        model.eval()
        with torch.no_grad():
            for batch_idx, batch in enumerate(test_loader):
                model.validation_step(batch, batch_idx)
    r["logged"] = model.logged
    r["grad_enabled"] = torch.is_grad_enabled()
    r["requires_grad"] = [p.requires_grad for p in model.parameters()]
    r["buffer"] = [numpy_of(torch.cat(model.sampler.examples[:4])), len(model.sampler.examples)]

    # GenerateCallback: images from noise, every step kept
    model.eval()
    start_imgs = torch.rand((2,) + model.hparams["img_shape"]).to(model.example_input_array.device)
    start_imgs = start_imgs * 2 - 1
    torch.set_grad_enabled(True)  # Tracking gradients for sampling necessary
    imgs_per_step = Sampler.generate_samples(model.cnn, start_imgs, steps=8, step_size=10, return_img_per_step=True)
    torch.set_grad_enabled(False)
    r["per_step"] = [list(imgs_per_step.shape), numpy_of(imgs_per_step[-1])]
    r["grad_after"] = torch.is_grad_enabled()
    torch.set_grad_enabled(True)

    # Out-of-distribution detection
    with torch.no_grad():
        rand_imgs = torch.rand((16,) + model.hparams.img_shape)
        rand_imgs = rand_imgs * 2 - 1.0
        rand_out = model.cnn(rand_imgs).mean()
    r["rand_out"] = rand_out.item()

    @torch.no_grad()
    def compare_images(img1, img2):
        imgs = torch.stack([img1, img2], dim=0)
        score1, score2 = model.cnn(imgs).cpu().chunk(2, dim=0)
        return score1.item(), score2.item()

    test_imgs, _ = next(iter(test_loader))
    exmp_img = test_imgs[0]
    img_noisy = exmp_img + torch.randn_like(exmp_img) * 0.3
    img_noisy.clamp_(min=-1.0, max=1.0)
    r["noisy"] = compare_images(exmp_img, img_noisy)
    img_flipped = exmp_img.flip(dims=(1, 2))
    r["flipped"] = compare_images(exmp_img, img_flipped)
    img_tiny = torch.zeros_like(exmp_img) - 1
    img_tiny[:, exmp_img.shape[1] // 2:, exmp_img.shape[2] // 2:] = exmp_img[:, ::2, ::2]
    r["tiny"] = compare_images(exmp_img, img_tiny)
    r["params"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return r


def test_uvadlc_energy_models():
    ref, got = compare_program(tutorial8, rtol=2e-3, atol=2e-4)
    assert got["grad_enabled"] and not got["grad_after"] and all(got["requires_grad"])
    assert len(got["logged"]["loss"]) == 2 * 4 and got["buffer"][1] == 8 + 2 * 4 * 8

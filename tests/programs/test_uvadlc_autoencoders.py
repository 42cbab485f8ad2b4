"""Phillip Lippe's UvA deep-learning tutorial 9 ("Deep Autoencoders") as written, CIFAR-10 replaced
by small local RGB images normalised to [-1, 1] as the tutorial's Normalize((0.5,), (0.5,)) does,
PyTorch Lightning by the loop a run makes: the Encoder (strided Conv2d with GELU, nn.Flatten, a
Linear to the latent), the Decoder (Linear + GELU, x.reshape(x.shape[0], -1, 4, 4), ConvTranspose2d
with output_padding=1 and stride 2, Tanh), the Autoencoder with example_input_array of torch.zeros,
the reconstruction loss F.mse_loss(x, x_hat, reduction="none").sum(dim=[1, 2, 3]).mean(dim=[0]),
Adam with ReduceLROnPlateau(mode="min", factor=0.2, patience, min_lr) stepped on the validation
loss, compare_imgs with reduction="sum" against a shifted image, the GenerateCallback's
reconstructions under torch.no_grad() and torch.stack([input_imgs, reconst_imgs], dim=1).flatten(0, 1),
embed_imgs collecting torch.cat of encodings, and find_similar_images by torch.cdist(key_embeds[None, :],
img_embeds[None, :], p=2) and torch.sort. Seeds are torch.manual_seed in both libraries, so the
weights and the shuffles agree."""
import numpy as np

from prog_helpers import compare_program, numpy_of
from test_uvadlc_simclr import make_rgb_images


def autoencoder(torch, init=None, latent_dim=16, epochs=3):
    nn = torch.nn
    F = nn.functional
    optim = torch.optim
    data = torch.utils.data
    device = torch.device("cpu")

    class Encoder(nn.Module):
        def __init__(self, num_input_channels: int, base_channel_size: int, latent_dim: int, act_fn: object = nn.GELU):
            """
            Args:
               num_input_channels : Number of input channels of the image. For CIFAR, this parameter is 3
               base_channel_size : Number of channels we use in the first convolutional layers. Deeper layers might use a duplicate of it.
               latent_dim : Dimensionality of latent representation z
               act_fn : Activation function used throughout the encoder network
            """
            super().__init__()
            c_hid = base_channel_size
            self.net = nn.Sequential(
                nn.Conv2d(num_input_channels, c_hid, kernel_size=3, padding=1, stride=2),  # 32x32 => 16x16
                act_fn(),
                nn.Conv2d(c_hid, c_hid, kernel_size=3, padding=1),
                act_fn(),
                nn.Conv2d(c_hid, 2 * c_hid, kernel_size=3, padding=1, stride=2),  # 16x16 => 8x8
                act_fn(),
                nn.Conv2d(2 * c_hid, 2 * c_hid, kernel_size=3, padding=1),
                act_fn(),
                nn.Conv2d(2 * c_hid, 2 * c_hid, kernel_size=3, padding=1, stride=2),  # 8x8 => 4x4
                act_fn(),
                nn.Flatten(),  # Image grid to single feature vector
                nn.Linear(2 * 16 * c_hid, latent_dim),
            )

        def forward(self, x):
            return self.net(x)

    class Decoder(nn.Module):
        def __init__(self, num_input_channels: int, base_channel_size: int, latent_dim: int, act_fn: object = nn.GELU):
            super().__init__()
            c_hid = base_channel_size
            self.linear = nn.Sequential(nn.Linear(latent_dim, 2 * 16 * c_hid), act_fn())
            self.net = nn.Sequential(
                nn.ConvTranspose2d(
                    2 * c_hid, 2 * c_hid, kernel_size=3, output_padding=1, padding=1, stride=2
                ),  # 4x4 => 8x8
                act_fn(),
                nn.Conv2d(2 * c_hid, 2 * c_hid, kernel_size=3, padding=1),
                act_fn(),
                nn.ConvTranspose2d(2 * c_hid, c_hid, kernel_size=3, output_padding=1, padding=1, stride=2),  # 8x8 => 16x16
                act_fn(),
                nn.Conv2d(c_hid, c_hid, kernel_size=3, padding=1),
                act_fn(),
                nn.ConvTranspose2d(
                    c_hid, num_input_channels, kernel_size=3, output_padding=1, padding=1, stride=2
                ),  # 16x16 => 32x32
                nn.Tanh(),  # The input images is scaled between -1 and 1, hence the output has to be bounded as well
            )

        def forward(self, x):
            x = self.linear(x)
            x = x.reshape(x.shape[0], -1, 4, 4)
            x = self.net(x)
            return x

    class Autoencoder(nn.Module):
        def __init__(
            self,
            base_channel_size: int,
            latent_dim: int,
            encoder_class: object = Encoder,
            decoder_class: object = Decoder,
            num_input_channels: int = 3,
            width: int = 32,
            height: int = 32,
        ):
            super().__init__()
            # Creating encoder and decoder
            self.encoder = encoder_class(num_input_channels, base_channel_size, latent_dim)
            self.decoder = decoder_class(num_input_channels, base_channel_size, latent_dim)
            # Example input array needed for visualizing the graph of the network
            self.example_input_array = torch.zeros(2, num_input_channels, width, height)

        def forward(self, x):
            """The forward function takes in an image and returns the reconstructed image."""
            z = self.encoder(x)
            x_hat = self.decoder(z)
            return x_hat

        def _get_reconstruction_loss(self, batch):
            """Given a batch of images, this function returns the reconstruction loss (MSE in our case)"""
            x, _ = batch  # We do not need the labels
            x_hat = self.forward(x)
            loss = F.mse_loss(x, x_hat, reduction="none")
            loss = loss.sum(dim=[1, 2, 3]).mean(dim=[0])
            return loss

        def configure_optimizers(self):
            optimizer = optim.Adam(self.parameters(), lr=1e-3)
            # Using a scheduler is optional but can be helpful.
            # The scheduler reduces the LR if the validation performance hasn't improved for the last N epochs
            scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.2, patience=1, min_lr=5e-5)
            return {"optimizer": optimizer, "lr_scheduler": scheduler, "monitor": "val_loss"}

    imgs, labels = make_rgb_images(6, 32, seed=4)
    imgs = (imgs - 0.5) / 0.5  # transforms.Normalize((0.5,), (0.5,))
    val_imgs, val_labels = make_rgb_images(2, 32, seed=5)
    val_imgs = (val_imgs - 0.5) / 0.5
    train_set = data.TensorDataset(torch.tensor(imgs), torch.tensor(labels))
    val_set = data.TensorDataset(torch.tensor(val_imgs), torch.tensor(val_labels))

    def compare_imgs(img1, img2, title_prefix=""):
        # Calculate MSE loss between both images
        loss = F.mse_loss(img1, img2, reduction="sum")
        return loss.item()

    img, _ = train_set[0]
    img_shifted = torch.roll(img, shifts=1, dims=1)
    img_shifted[:, :1, :] = img[:, :1, :]  # Fill up the empty first row with the original
    img_blurred = F.avg_pool2d(img[None], kernel_size=3, stride=1, padding=1, count_include_pad=False)[0]
    result = {"compare": [compare_imgs(img, img_shifted, "Shifted -"), compare_imgs(img, img_blurred, "Blurred -")]}

    torch.manual_seed(42)
    train_loader = data.DataLoader(train_set, batch_size=6, shuffle=True, drop_last=True, pin_memory=True, num_workers=0)
    val_loader = data.DataLoader(val_set, batch_size=6, shuffle=False, drop_last=False, num_workers=0)
    model = Autoencoder(base_channel_size=4, latent_dim=latent_dim)
    result["init"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    result["example_out"] = numpy_of(model(model.example_input_array))
    conf = model.configure_optimizers()
    optimizer, scheduler = conf["optimizer"], conf["lr_scheduler"]
    losses, val_losses, lrs = [], [], []
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            optimizer.zero_grad()
            loss = model._get_reconstruction_loss(batch)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            val_loss = sum(model._get_reconstruction_loss(batch) for batch in val_loader) / len(val_loader)
        scheduler.step(val_loss)
        val_losses.append(val_loss.item())
        lrs.append(optimizer.param_groups[0]["lr"])

    # GenerateCallback: the first input images and their reconstructions, side by side
    input_imgs = torch.stack([val_set[i][0] for i in range(4)], dim=0)
    with torch.no_grad():
        model.eval()
        reconst_imgs = model(input_imgs.to(device))
        model.train()
    grid = torch.stack([input_imgs, reconst_imgs], dim=1).flatten(0, 1)

    def embed_imgs(model, data_loader):
        # Encode all images in the data_laoder using model, and return both images and encodings
        img_list, embed_list = [], []
        model.eval()
        for imgs, _ in data_loader:
            with torch.no_grad():
                z = model.encoder(imgs.to(device))
            img_list.append(imgs)
            embed_list.append(z)
        return (torch.cat(img_list, dim=0), torch.cat(embed_list, dim=0))

    train_img_embeds = embed_imgs(model, data.DataLoader(train_set, batch_size=4, shuffle=False))
    test_img_embeds = embed_imgs(model, val_loader)

    def find_similar_images(query_img, query_z, key_embeds, K=8):
        # Find closest K images. We use the euclidean distance here but other like cosine distance can also be used.
        dist = torch.cdist(query_z[None, :], key_embeds[1], p=2.0)
        dist = dist.squeeze(dim=0)
        dist, indices = torch.sort(dist)
        # Plot K closest images
        imgs_to_display = torch.cat([query_img[None], key_embeds[0][indices[:K]]], dim=0)
        return numpy_of(dist[:K]), numpy_of(indices[:K]), tuple(imgs_to_display.shape)

    similar = [find_similar_images(test_img_embeds[0][i], test_img_embeds[1][i], key_embeds=train_img_embeds, K=5)
               for i in range(2)]
    result.update(losses=losses, val_losses=val_losses, lrs=lrs, grid=numpy_of(grid),
                  embeds=numpy_of(train_img_embeds[1]), similar_dist=[s[0] for s in similar],
                  similar_idx=[s[1] for s in similar], similar_shape=[s[2] for s in similar],
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_uvadlc_autoencoder():
    ref, got = compare_program(autoencoder, rtol=1e-3, atol=1e-4)
    assert got["similar_shape"][0] == (6, 3, 32, 32)
    assert np.all(np.diff(got["similar_dist"][0]) >= 0)

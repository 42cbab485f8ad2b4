"""Phillip Lippe's UvA deep-learning tutorial 11 ("Normalizing Flows for image modeling") as written,
MNIST replaced by local 28x28 images discretised to int32 as the tutorial's transform does
((sample * 255).to(torch.int32)), PyTorch Lightning by the loop a run makes: ImageFlow (a prior
torch.distributions.normal.Normal(loc=0.0, scale=1.0) with log_prob(z).sum(dim=[1,2,3]), bits per
dimension by np.log2(np.exp(1)) / np.prod(imgs.shape[1:]), the importance-sampled test_step with
torch.logsumexp, sample() under @torch.no_grad() from prior.sample(sample_shape=...)),
Dequantization (the invertible sigmoid with F.softplus, torch.rand_like(z).detach(),
torch.floor(z).clamp(min=0, max=quants-1).to(torch.int32)) and its invertibility check through
torch.where(a != b), VariationalDequantization, CouplingLayer (a scaling_factor Parameter,
register_buffer('mask', mask), nn_out.chunk(2, dim=1), torch.tanh(s / s_fac) * s_fac, ldj +=
s.sum(dim=[1,2,3])), create_checkerboard_mask (torch.meshgrid(..., indexing='ij') of int32
aranges, torch.fmod) and create_channel_mask, ConcatELU, LayerNormChannels
(x.var(dim=1, unbiased=False, keepdim=True)), GatedConv and GatedConvNet with its last layer's
weight.data.zero_(), SqueezeFlow (reshape / permute to 4C channels and back, the tutorial's print
of torch.arange(1,17).view(1, 1, 4, 4)) and SplitFlow; the simple and the multi-scale flows of the
tutorial, trained a few steps with Adam and StepLR(1, gamma=0.99), evaluated and sampled. Smaller:
16 images, batch 8. Randomness from pl.seed_everything(42) (torch.manual_seed): both libraries
draw PyTorch's CPU stream for the dequantisation noise and the prior's samples."""
import numpy as np
import pytest

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines
from test_examples_forward_forward import local_mnist
from test_uvadlc_transformers import lightning_module


def tutorial11(torch, init=None, steps=2, flows=("simple", "multiscale")):
    nn, optim, F, data = torch.nn, torch.optim, torch.nn.functional, torch.utils.data
    device = torch.device("cpu")
    LightningModule = lightning_module(torch)
    r = {}
    torch.manual_seed(42)

    # Convert images from 0-1 to 0-255 (integers)
    def discretize(sample):
        return (sample * 255).to(torch.int32)

    MNIST = local_mnist(torch, train_size=16, test_size=8)
    train_set = MNIST(root="data", train=True, transform=discretize, download=True)
    test_set = MNIST(root="data", train=False, transform=discretize, download=True)
    train_loader = data.DataLoader(train_set, batch_size=8, shuffle=True, drop_last=False)
    test_loader = data.DataLoader(test_set, batch_size=8, shuffle=False, drop_last=False)

    class ImageFlow(LightningModule):

        def __init__(self, flows, import_samples=8):
            """
            Inputs:
                flows - A list of flows (each a nn.Module) that should be applied on the images.
                import_samples - Number of importance samples to use during testing (see explanation below). Can be changed at any time
            """
            super().__init__()
            self.flows = nn.ModuleList(flows)
            self.import_samples = import_samples
            # Create prior distribution for final latent space
            self.prior = torch.distributions.normal.Normal(loc=0.0, scale=1.0)
            # Example input for visualizing the graph
            self.example_input_array = train_set[0][0].unsqueeze(dim=0)

        def forward(self, imgs):
            # The forward function is only used for visualizing the graph
            return self._get_likelihood(imgs)

        def encode(self, imgs):
            # Given a batch of images, return the latent representation z and ldj of the transformations
            z, ldj = imgs, torch.zeros(imgs.shape[0], device=device)
            for flow in self.flows:
                z, ldj = flow(z, ldj, reverse=False)
            return z, ldj

        def _get_likelihood(self, imgs, return_ll=False):
            """
            Given a batch of images, return the likelihood of those.
            If return_ll is True, this function returns the log likelihood of the input.
            Otherwise, the ouptut metric is bits per dimension (scaled negative log likelihood)
            """
            z, ldj = self.encode(imgs)
            log_pz = self.prior.log_prob(z).sum(dim=[1, 2, 3])
            log_px = ldj + log_pz
            nll = -log_px
            # Calculating bits per dimension
            bpd = nll * np.log2(np.exp(1)) / np.prod(imgs.shape[1:])
            return bpd.mean() if not return_ll else log_px

        @torch.no_grad()
        def sample(self, img_shape, z_init=None):
            """
            Sample a batch of images from the flow.
            """
            # Sample latent representation from prior
            if z_init is None:
                z = self.prior.sample(sample_shape=img_shape).to(device)
            else:
                z = z_init.to(device)

            # Transform z to x by inverting the flows
            ldj = torch.zeros(img_shape[0], device=device)
            for flow in reversed(self.flows):
                z, ldj = flow(z, ldj, reverse=True)
            return z

        def configure_optimizers(self):
            optimizer = optim.Adam(self.parameters(), lr=1e-3)
            # An scheduler is optional, but can help in flows to get the last bpd improvement
            scheduler = optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.99)
            return [optimizer], [scheduler]

        def training_step(self, batch, batch_idx):
            # Normalizing flows are trained by maximum likelihood => return bpd
            loss = self._get_likelihood(batch[0])
            self.log('train_bpd', loss)
            return loss

        def validation_step(self, batch, batch_idx):
            loss = self._get_likelihood(batch[0])
            self.log('val_bpd', loss)

        def test_step(self, batch, batch_idx):
            # Perform importance sampling during testing => estimate likelihood M times for each image
            samples = []
            for _ in range(self.import_samples):
                img_ll = self._get_likelihood(batch[0], return_ll=True)
                samples.append(img_ll)
            img_ll = torch.stack(samples, dim=-1)

            # To average the probabilities, we need to go from log-space to exp, and back to log.
            # Logsumexp provides us a stable implementation for this
            img_ll = torch.logsumexp(img_ll, dim=-1) - np.log(self.import_samples)

            # Calculate final bpd
            bpd = -img_ll * np.log2(np.exp(1)) / np.prod(batch[0].shape[1:])
            bpd = bpd.mean()

            self.log('test_bpd', bpd)

    class Dequantization(nn.Module):

        def __init__(self, alpha=1e-5, quants=256):
            """
            Inputs:
                alpha - small constant that is used to scale the original input.
                        Prevents dealing with values very close to 0 and 1 when inverting the sigmoid
                quants - Number of possible discrete values (usually 256 for 8-bit image)
            """
            super().__init__()
            self.alpha = alpha
            self.quants = quants

        def forward(self, z, ldj, reverse=False):
            if not reverse:
                z, ldj = self.dequant(z, ldj)
                z, ldj = self.sigmoid(z, ldj, reverse=True)
            else:
                z, ldj = self.sigmoid(z, ldj, reverse=False)
                z = z * self.quants
                ldj += np.log(self.quants) * np.prod(z.shape[1:])
                z = torch.floor(z).clamp(min=0, max=self.quants - 1).to(torch.int32)
            return z, ldj

        def sigmoid(self, z, ldj, reverse=False):
            # Applies an invertible sigmoid transformation
            if not reverse:
                ldj += (-z - 2 * F.softplus(-z)).sum(dim=[1, 2, 3])
                z = torch.sigmoid(z)
            else:
                z = z * (1 - self.alpha) + 0.5 * self.alpha  # Scale to prevent boundaries 0 and 1
                ldj += np.log(1 - self.alpha) * np.prod(z.shape[1:])
                ldj += (-torch.log(z) - torch.log(1 - z)).sum(dim=[1, 2, 3])
                z = torch.log(z) - torch.log(1 - z)
            return z, ldj

        def dequant(self, z, ldj):
            # Transform discrete values to continuous volumes
            z = z.to(torch.float32)
            z = z + torch.rand_like(z).detach()
            z = z / self.quants
            ldj -= np.log(self.quants) * np.prod(z.shape[1:])
            return z, ldj

    # Testing invertibility of dequantization layer
    with captured_run(torch, seed=42) as out:
        orig_img = train_set[0][0].unsqueeze(dim=0)
        ldj = torch.zeros(1,)
        dequant_module = Dequantization()
        deq_img, ldj = dequant_module(orig_img, ldj, reverse=False)
        reconst_img, ldj = dequant_module(deq_img, ldj, reverse=True)

        d1, d2 = torch.where(orig_img.squeeze() != reconst_img.squeeze())
        if len(d1) != 0:
            print("Dequantization was not invertible.")
            for i in range(d1.shape[0]):
                print("Original value:", orig_img[0, 0, d1[i], d2[i]].item())
                print("Reconstructed value:", reconst_img[0, 0, d1[i], d2[i]].item())
        else:
            print("Successfully inverted dequantization")
    r["dequant"] = [numpy_of(deq_img), numpy_of(ldj), str(reconst_img.dtype).split(".")[1]]
    r["own"] = {"invertible": printed_lines(out)}  # a float32 round trip: 1 in 784 may fall below

    class VariationalDequantization(Dequantization):

        def __init__(self, var_flows, alpha=1e-5):
            """
            Inputs:
                var_flows - A list of flow transformations to use for modeling q(u|x)
                alpha - Small constant, see Dequantization for details
            """
            super().__init__(alpha=alpha)
            self.flows = nn.ModuleList(var_flows)

        def dequant(self, z, ldj):
            z = z.to(torch.float32)
            img = (z / 255.0) * 2 - 1  # We condition the flows on x, i.e. the original image

            # Prior of u is a uniform distribution as before
            # As most flow transformations are defined on [-infinity,+infinity], we apply an inverse sigmoid first.
            deq_noise = torch.rand_like(z).detach()
            deq_noise, ldj = self.sigmoid(deq_noise, ldj, reverse=True)
            for flow in self.flows:
                deq_noise, ldj = flow(deq_noise, ldj, reverse=False, orig_img=img)
            deq_noise, ldj = self.sigmoid(deq_noise, ldj, reverse=False)

            # After the flows, apply u as in standard dequantization
            z = (z + deq_noise) / 256.0
            ldj -= np.log(256.0) * np.prod(z.shape[1:])
            return z, ldj

    class CouplingLayer(nn.Module):

        def __init__(self, network, mask, c_in):
            """
            Coupling layer inside a normalizing flow.
            Inputs:
                network - A PyTorch nn.Module constituting the deep neural network for mu and sigma.
                          Output shape should be twice the channel size as the input.
                mask - Binary mask (0 or 1) where 0 denotes that the element should be transformed,
                       while 1 means the latent will be used as input to the NN.
                c_in - Number of input channels
            """
            super().__init__()
            self.network = network
            self.scaling_factor = nn.Parameter(torch.zeros(c_in))
            # Register mask as buffer as it is a tensor which is not a parameter,
            # but should be taken into account when the model is saved
            self.register_buffer('mask', mask)

        def forward(self, z, ldj, reverse=False, orig_img=None):
            """
            Inputs:
                z - Latent input to the flow
                ldj - The current ldj of the previous flows.
                      The ldj of this layer will be added to this tensor.
                reverse - If True, we apply the inverse of the layer.
                orig_img (optional) - Only needed in VarDeq. Allows external
                                      input to condition the flow on (e.g. original image)
            """
            # Apply network to masked input
            z_in = z * self.mask
            if orig_img is None:
                nn_out = self.network(z_in)
            else:
                nn_out = self.network(torch.cat([z_in, orig_img], dim=1))
            s, t = nn_out.chunk(2, dim=1)

            # Stabilize scaling output
            s_fac = self.scaling_factor.exp().view(1, -1, 1, 1)
            s = torch.tanh(s / s_fac) * s_fac

            # Mask outputs (only transform the second part)
            s = s * (1 - self.mask)
            t = t * (1 - self.mask)

            # Affine transformation
            if not reverse:
                # Whether we first shift and then scale, or the other way round,
                # is a design choice, and usually does not have a big impact
                z = (z + t) * torch.exp(s)
                ldj += s.sum(dim=[1, 2, 3])
            else:
                z = (z * torch.exp(-s)) - t
                ldj -= s.sum(dim=[1, 2, 3])

            return z, ldj

    def create_checkerboard_mask(h, w, invert=False):
        x, y = torch.arange(h, dtype=torch.int32), torch.arange(w, dtype=torch.int32)
        xx, yy = torch.meshgrid(x, y, indexing='ij')
        mask = torch.fmod(xx + yy, 2)
        mask = mask.to(torch.float32).view(1, 1, h, w)
        if invert:
            mask = 1 - mask
        return mask

    def create_channel_mask(c_in, invert=False):
        mask = torch.cat([torch.ones(c_in // 2, dtype=torch.float32),
                          torch.zeros(c_in - c_in // 2, dtype=torch.float32)])
        mask = mask.view(1, c_in, 1, 1)
        if invert:
            mask = 1 - mask
        return mask

    checkerboard_mask = create_checkerboard_mask(h=8, w=8).expand(-1, 2, -1, -1)
    channel_mask = create_channel_mask(c_in=2).expand(-1, -1, 8, 8)
    r["masks"] = [numpy_of(checkerboard_mask), numpy_of(channel_mask)]

    class ConcatELU(nn.Module):
        """
        Activation function that applies ELU in both direction (inverted and plain).
        Allows non-linearity while providing strong gradients for any input (important for final convolution)
        """

        def forward(self, x):
            return torch.cat([F.elu(x), F.elu(-x)], dim=1)

    class LayerNormChannels(nn.Module):

        def __init__(self, c_in, eps=1e-5):
            """
            This module applies layer norm across channels in an image.
            Inputs:
                c_in - Number of channels of the input
                eps - Small constant to stabilize std
            """
            super().__init__()
            self.gamma = nn.Parameter(torch.ones(1, c_in, 1, 1))
            self.beta = nn.Parameter(torch.zeros(1, c_in, 1, 1))
            self.eps = eps

        def forward(self, x):
            mean = x.mean(dim=1, keepdim=True)
            var = x.var(dim=1, unbiased=False, keepdim=True)
            y = (x - mean) / torch.sqrt(var + self.eps)
            y = y * self.gamma + self.beta
            return y

    class GatedConv(nn.Module):

        def __init__(self, c_in, c_hidden):
            """
            This module applies a two-layer convolutional ResNet block with input gate
            Inputs:
                c_in - Number of channels of the input
                c_hidden - Number of hidden dimensions we want to model (usually similar to c_in)
            """
            super().__init__()
            self.net = nn.Sequential(
                ConcatELU(),
                nn.Conv2d(2 * c_in, c_hidden, kernel_size=3, padding=1),
                ConcatELU(),
                nn.Conv2d(2 * c_hidden, 2 * c_in, kernel_size=1)
            )

        def forward(self, x):
            out = self.net(x)
            val, gate = out.chunk(2, dim=1)
            return x + val * torch.sigmoid(gate)

    class GatedConvNet(nn.Module):

        def __init__(self, c_in, c_hidden=32, c_out=-1, num_layers=3):
            """
            Module that summarizes the previous blocks to a full convolutional neural network.
            Inputs:
                c_in - Number of input channels
                c_hidden - Number of hidden dimensions to use within the network
                c_out - Number of output channels. If -1, 2 times the input channels are used (affine coupling)
                num_layers - Number of gated ResNet blocks to apply
            """
            super().__init__()
            c_out = c_out if c_out > 0 else 2 * c_in
            layers = []
            layers += [nn.Conv2d(c_in, c_hidden, kernel_size=3, padding=1)]
            for layer_index in range(num_layers):
                layers += [GatedConv(c_hidden, c_hidden),
                           LayerNormChannels(c_hidden)]
            layers += [ConcatELU(),
                       nn.Conv2d(2 * c_hidden, c_out, kernel_size=3, padding=1)]
            self.nn = nn.Sequential(*layers)

            self.nn[-1].weight.data.zero_()
            self.nn[-1].bias.data.zero_()

        def forward(self, x):
            return self.nn(x)

    def create_simple_flow(use_vardeq=True):
        flow_layers = []
        if use_vardeq:
            vardeq_layers = [CouplingLayer(network=GatedConvNet(c_in=2, c_out=2, c_hidden=16),
                                           mask=create_checkerboard_mask(h=28, w=28, invert=(i % 2 == 1)),
                                           c_in=1) for i in range(4)]
            flow_layers += [VariationalDequantization(var_flows=vardeq_layers)]
        else:
            flow_layers += [Dequantization()]

        for i in range(8):
            flow_layers += [CouplingLayer(network=GatedConvNet(c_in=1, c_hidden=32),
                                          mask=create_checkerboard_mask(h=28, w=28, invert=(i % 2 == 1)),
                                          c_in=1)]

        flow_model = ImageFlow(flow_layers).to(device)
        return flow_model

    class SqueezeFlow(nn.Module):

        def forward(self, z, ldj, reverse=False):
            B, C, H, W = z.shape
            if not reverse:
                # Forward direction: H x W x C => H/2 x W/2 x 4C
                z = z.reshape(B, C, H // 2, 2, W // 2, 2)
                z = z.permute(0, 1, 3, 5, 2, 4)
                z = z.reshape(B, 4 * C, H // 2, W // 2)
            else:
                # Reverse direction: H/2 x W/2 x 4C => H x W x C
                z = z.reshape(B, C // 4, 2, 2, H, W)
                z = z.permute(0, 1, 4, 2, 5, 3)
                z = z.reshape(B, C // 4, H * 2, W * 2)
            return z, ldj

    with captured_run(torch, seed=42) as out:
        sq_flow = SqueezeFlow()
        rand_img = torch.arange(1, 17).view(1, 1, 4, 4)
        print("Image (before)\n", rand_img)
        forward_img, _ = sq_flow(rand_img, ldj=None, reverse=False)
        print("\nImage (forward)\n", forward_img.permute(0, 2, 3, 1))  # Permute for readability
        reconst_img, _ = sq_flow(forward_img, ldj=None, reverse=True)
        print("\nImage (reverse)\n", reconst_img)
    r["squeeze"] = printed_lines(out)

    class SplitFlow(nn.Module):

        def __init__(self):
            super().__init__()
            self.prior = torch.distributions.normal.Normal(loc=0.0, scale=1.0)

        def forward(self, z, ldj, reverse=False):
            if not reverse:
                z, z_split = z.chunk(2, dim=1)
                ldj += self.prior.log_prob(z_split).sum(dim=[1, 2, 3])
            else:
                z_split = self.prior.sample(sample_shape=z.shape).to(device)
                z = torch.cat([z, z_split], dim=1)
                ldj -= self.prior.log_prob(z_split).sum(dim=[1, 2, 3])
            return z, ldj

    def create_multiscale_flow():
        flow_layers = []

        vardeq_layers = [CouplingLayer(network=GatedConvNet(c_in=2, c_out=2, c_hidden=16),
                                       mask=create_checkerboard_mask(h=28, w=28, invert=(i % 2 == 1)),
                                       c_in=1) for i in range(4)]
        flow_layers += [VariationalDequantization(vardeq_layers)]

        flow_layers += [CouplingLayer(network=GatedConvNet(c_in=1, c_hidden=32),
                                      mask=create_checkerboard_mask(h=28, w=28, invert=(i % 2 == 1)),
                                      c_in=1) for i in range(2)]
        flow_layers += [SqueezeFlow()]
        for i in range(2):
            flow_layers += [CouplingLayer(network=GatedConvNet(c_in=4, c_hidden=48),
                                          mask=create_channel_mask(c_in=4, invert=(i % 2 == 1)),
                                          c_in=4)]
        flow_layers += [SplitFlow(),
                        SqueezeFlow()]
        for i in range(4):
            flow_layers += [CouplingLayer(network=GatedConvNet(c_in=8, c_hidden=64),
                                          mask=create_channel_mask(c_in=8, invert=(i % 2 == 1)),
                                          c_in=8)]

        flow_model = ImageFlow(flow_layers).to(device)
        return flow_model

    def train_flow(flow, model_name="MNISTFlow_simple"):
        # trainer.fit(flow, train_loader, val_loader) for a few steps, then trainer.test
        [optimizer], [scheduler] = flow.configure_optimizers()
        flow.train()
        step = 0
        while step < steps:
            for batch_idx, batch in enumerate(train_loader):
                loss = flow.training_step(batch, batch_idx)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                step += 1
                if step == steps:
                    break
            scheduler.step()
        flow.eval()
        with torch.no_grad():
            for batch_idx, batch in enumerate(test_loader):
                flow.validation_step(batch, batch_idx)
                flow.test_step(batch, batch_idx)
        return flow

    for name in flows:
        torch.manual_seed(44)
        flow = train_flow(create_simple_flow(use_vardeq=True) if name == "simple" else create_multiscale_flow())
        r[name] = {"logged": flow.logged, "n_params": sum(p.numel() for p in flow.parameters()),
                   "buffers": sorted({n.split(".")[-1] for n, _ in flow.named_buffers()})}
        torch.manual_seed(44)
        samples = flow.sample(img_shape=[4, 8, 7, 7] if name == "multiscale" else [4, 1, 28, 28])
        r[name]["samples"] = [numpy_of(samples), str(samples.dtype).split(".")[1]]
        r[name]["state"] = {k: numpy_of(v) for k, v in flow.state_dict().items()}
    return r


@pytest.mark.parametrize("flow", ["simple", "multiscale"])
def test_uvadlc_flows(flow):
    ref, got = compare_program(tutorial11, rtol=2e-3, atol=2e-4, flows=(flow,))
    assert got["squeeze"][0] == "Image (before)" and len(got[flow]["logged"]["train_bpd"]) == 2
    assert got[flow]["buffers"] == ["mask"]

"""Phillip Lippe's UvA deep-learning tutorial 12 ("Autoregressive Image Modeling", PixelCNN) as
written, MNIST replaced by local 28x28 images discretised to int64 as the tutorial's transform does
((sample * 255).to(torch.long)), PyTorch Lightning by the loop a run makes: MaskedConvolution
(padding from the mask's shape and the dilation, register_buffer('mask', mask[None,None]),
self.conv.weight.data *= self.mask in forward), the vertical and horizontal stack convolutions,
the receptive-field demonstration (weights filled with ones, out[0,:,h//2,w//2].sum() backward
with retain_graph=True, img.grad.abs(), img.grad.fill_(0), stacked over layers), GatedMaskedConv
(chunk(2, dim=1), tanh * sigmoid gates, the vertical-to-horizontal 1x1 convolution), PixelCNN
with dilations 2 and 4, a 256-way output reshaped to [Batch, Classes, Channels, Height, Width] and
F.cross_entropy(pred, x, reduction='none') over that 5-D layout, bpd by np.log2(np.exp(1)),
training with Adam and StepLR, and sample() under @torch.no_grad(): pixel by pixel, the image cut
to its upper rows, F.softmax and torch.multinomial(probs, num_samples=1).squeeze(dim=-1) written
into img[:,c,h,w], also completing images whose lower half is set to -1. Smaller: 16 training
images, hidden size 16, samples of 4 images of 6x6 (the tutorial's 16 of 28x28), completions of one row. Randomness from
pl.seed_everything (torch.manual_seed): both libraries draw PyTorch's CPU stream, so the samples
agree pixel for pixel."""
import numpy as np

from prog_helpers import compare_program, numpy_of
from test_examples_forward_forward import local_mnist
from test_uvadlc_transformers import lightning_module


def tutorial12(torch, init=None, steps=3):
    nn, optim, F, data = torch.nn, torch.optim, torch.nn.functional, torch.utils.data
    device = torch.device("cpu")
    LightningModule = lightning_module(torch)
    r = {}
    torch.manual_seed(42)

    # Convert images from 0-1 to 0-255 (integers). We use the long datatype as we will use the images as labels as well
    def discretize(sample):
        return (sample * 255).to(torch.long)

    MNIST = local_mnist(torch, train_size=16, test_size=8)
    train_set = MNIST(root="data", train=True, transform=discretize, download=True)
    test_set = MNIST(root="data", train=False, transform=discretize, download=True)
    train_loader = data.DataLoader(train_set, batch_size=8, shuffle=True, drop_last=True)
    test_loader = data.DataLoader(test_set, batch_size=8, shuffle=False, drop_last=False)

    class MaskedConvolution(nn.Module):

        def __init__(self, c_in, c_out, mask, **kwargs):
            """
            Implements a convolution with mask applied on its weights.
            Inputs:
                c_in - Number of input channels
                c_out - Number of output channels
                mask - Tensor of shape [kernel_size_H, kernel_size_W] with 0s where
                       the convolution should be masked, and 1s otherwise.
                kwargs - Additional arguments for the convolution
            """
            super().__init__()
            # For simplicity: calculate padding automatically
            kernel_size = (mask.shape[0], mask.shape[1])
            dilation = 1 if "dilation" not in kwargs else kwargs["dilation"]
            padding = tuple([dilation * (kernel_size[i] - 1) // 2 for i in range(2)])
            # Actual convolution
            self.conv = nn.Conv2d(c_in, c_out, kernel_size, padding=padding, **kwargs)

            # Mask as buffer => it is no parameter but still a tensor of the module
            # (must be moved with the devices)
            self.register_buffer('mask', mask[None, None])

        def forward(self, x):
            self.conv.weight.data *= self.mask  # Ensures zero's at masked positions
            return self.conv(x)

    class VerticalStackConvolution(MaskedConvolution):

        def __init__(self, c_in, c_out, kernel_size=3, mask_center=False, **kwargs):
            # Mask out all pixels below. For efficiency, we could also reduce the kernel
            # size in height, but for simplicity, we stick with masking here.
            mask = torch.ones(kernel_size, kernel_size)
            mask[kernel_size // 2 + 1:, :] = 0

            # For the very first convolution, we will also mask the center row
            if mask_center:
                mask[kernel_size // 2, :] = 0

            super().__init__(c_in, c_out, mask, **kwargs)

    class HorizontalStackConvolution(MaskedConvolution):

        def __init__(self, c_in, c_out, kernel_size=3, mask_center=False, **kwargs):
            # Mask out all pixels on the left. Note that our kernel has a size of 1
            # in height because we only look at the pixel in the same row.
            mask = torch.ones(1, kernel_size)
            mask[0, kernel_size // 2 + 1:] = 0

            # For the very first convolution, we will also mask the center pixel
            if mask_center:
                mask[0, kernel_size // 2] = 0

            super().__init__(c_in, c_out, mask, **kwargs)

    inp_img = torch.zeros(1, 1, 11, 11)
    inp_img.requires_grad_()
    fields = []

    def show_center_recep_field(img, out):
        """
        Calculates the gradients of the input with respect to the output center pixel,
        and visualizes the overall receptive field.
        Inputs:
            img - Input image for which we want to calculate the receptive field on.
            out - Output features/loss which is used for backpropagation, and should be
                  the output of the network/computation graph.
        """
        # Determine gradients
        loss = out[0, :, img.shape[2] // 2, img.shape[3] // 2].sum()  # L1 loss for simplicity
        loss.backward(retain_graph=True)  # Retain graph as we want to stack multiple layers and show the receptive field of all of them
        img_grads = img.grad.abs()
        img.grad.fill_(0)  # Reset grads

        # Plot receptive field
        img = img_grads.squeeze().cpu().numpy()
        fields.append(img > 0)

    horiz_conv = HorizontalStackConvolution(c_in=1, c_out=1, kernel_size=3, mask_center=True)
    horiz_conv.conv.weight.data.fill_(1)
    horiz_conv.conv.bias.data.fill_(0)
    horiz_img = horiz_conv(inp_img)
    show_center_recep_field(inp_img, horiz_img)

    vert_conv = VerticalStackConvolution(c_in=1, c_out=1, kernel_size=3, mask_center=True)
    vert_conv.conv.weight.data.fill_(1)
    vert_conv.conv.bias.data.fill_(0)
    vert_img = vert_conv(inp_img)
    show_center_recep_field(inp_img, vert_img)

    horiz_noc_conv = HorizontalStackConvolution(c_in=1, c_out=1, kernel_size=3, mask_center=False)
    horiz_noc_conv.conv.weight.data.fill_(1)
    horiz_noc_conv.conv.bias.data.fill_(0)
    vert_noc_conv = VerticalStackConvolution(c_in=1, c_out=1, kernel_size=3, mask_center=False)
    vert_noc_conv.conv.weight.data.fill_(1)
    vert_noc_conv.conv.bias.data.fill_(0)

    # We reuse our convolutions from the 4 layers here. Note that in a real network,
    # these would be 4 different layers with different weights
    vert_img = vert_conv(inp_img)
    horiz_img = horiz_conv(inp_img) + vert_img
    for l_idx in range(4):
        vert_img = vert_noc_conv(vert_img)
        horiz_img = horiz_noc_conv(horiz_img) + vert_img
        show_center_recep_field(inp_img, horiz_img)
    r["fields"] = fields

    class GatedMaskedConv(nn.Module):

        def __init__(self, c_in, **kwargs):
            """
            Gated Convolution block implemented the computation graph shown above.
            """
            super().__init__()
            self.conv_vert = VerticalStackConvolution(c_in, c_out=2 * c_in, **kwargs)
            self.conv_horiz = HorizontalStackConvolution(c_in, c_out=2 * c_in, **kwargs)
            self.conv_vert_to_horiz = nn.Conv2d(2 * c_in, 2 * c_in, kernel_size=1, padding=0)
            self.conv_horiz_1x1 = nn.Conv2d(c_in, c_in, kernel_size=1, padding=0)

        def forward(self, v_stack, h_stack):
            # Vertical stack (left)
            v_stack_feat = self.conv_vert(v_stack)
            v_val, v_gate = v_stack_feat.chunk(2, dim=1)
            v_stack_out = torch.tanh(v_val) * torch.sigmoid(v_gate)

            # Horizontal stack (right)
            h_stack_feat = self.conv_horiz(h_stack)
            h_stack_feat = h_stack_feat + self.conv_vert_to_horiz(v_stack_feat)
            h_val, h_gate = h_stack_feat.chunk(2, dim=1)
            h_stack_feat = torch.tanh(h_val) * torch.sigmoid(h_gate)
            h_stack_out = self.conv_horiz_1x1(h_stack_feat)
            h_stack_out = h_stack_out + h_stack

            return v_stack_out, h_stack_out

    class PixelCNN(LightningModule):

        def __init__(self, c_in, c_hidden):
            super().__init__()
            self.save_hyperparameters()

            # Initial convolutions skipping the center pixel
            self.conv_vstack = VerticalStackConvolution(c_in, c_hidden, mask_center=True)
            self.conv_hstack = HorizontalStackConvolution(c_in, c_hidden, mask_center=True)
            # Convolution block of PixelCNN. We use dilation instead of downscaling
            self.conv_layers = nn.ModuleList([
                GatedMaskedConv(c_hidden),
                GatedMaskedConv(c_hidden, dilation=2),
                GatedMaskedConv(c_hidden),
                GatedMaskedConv(c_hidden, dilation=4),
                GatedMaskedConv(c_hidden),
                GatedMaskedConv(c_hidden, dilation=2),
                GatedMaskedConv(c_hidden)
            ])
            # Output classification convolution (1x1)
            self.conv_out = nn.Conv2d(c_hidden, c_in * 256, kernel_size=1, padding=0)

            self.example_input_array = train_set[0][0][None]

        def forward(self, x):
            """
            Forward image through model and return logits for each pixel.
            Inputs:
                x - Image tensor with integer values between 0 and 255.
            """
            # Scale input from 0 to 255 back to -1 to 1
            x = (x.float() / 255.0) * 2 - 1

            # Initial convolutions
            v_stack = self.conv_vstack(x)
            h_stack = self.conv_hstack(x)
            # Gated Convolutions
            for layer in self.conv_layers:
                v_stack, h_stack = layer(v_stack, h_stack)
            # 1x1 classification convolution
            # Apply ELU before 1x1 convolution for non-linearity on residual connection
            out = self.conv_out(F.elu(h_stack))

            # Output dimensions: [Batch, Classes, Channels, Height, Width]
            out = out.reshape(out.shape[0], 256, out.shape[1] // 256, out.shape[2], out.shape[3])
            return out

        def calc_likelihood(self, x):
            # Forward pass with bpd likelihood calculation
            pred = self.forward(x)
            nll = F.cross_entropy(pred, x, reduction='none')
            bpd = nll.mean(dim=[1, 2, 3]) * np.log2(np.exp(1))
            return bpd.mean()

        @torch.no_grad()
        def sample(self, img_shape, img=None):
            """
            Sampling function for the autoregressive model.
            Inputs:
                img_shape - Shape of the image to generate (B,C,H,W)
                img (optional) - If given, this tensor will be used as
                                 a starting image. The pixels to fill
                                 should be -1 in the input tensor.
            """
            # Create empty image
            if img is None:
                img = torch.zeros(img_shape, dtype=torch.long).to(device) - 1
            # Generation loop
            for h in range(img_shape[2]):
                for w in range(img_shape[3]):
                    for c in range(img_shape[1]):
                        # Skip if not to be filled (-1)
                        if (img[:, c, h, w] != -1).all().item():
                            continue
                        # For efficiency, we only have to input the upper part of the image
                        # as all other parts will be skipped by the masked convolutions anyways
                        pred = self.forward(img[:, :, :h + 1, :])
                        probs = F.softmax(pred[:, :, c, h, w], dim=-1)
                        img[:, c, h, w] = torch.multinomial(probs, num_samples=1).squeeze(dim=-1)
            return img

        def configure_optimizers(self):
            optimizer = optim.Adam(self.parameters(), lr=1e-3)
            scheduler = optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.99)
            return [optimizer], [scheduler]

        def training_step(self, batch, batch_idx):
            loss = self.calc_likelihood(batch[0])
            self.log('train_bpd', loss)
            return loss

        def validation_step(self, batch, batch_idx):
            loss = self.calc_likelihood(batch[0])
            self.log('val_bpd', loss)

        def test_step(self, batch, batch_idx):
            loss = self.calc_likelihood(batch[0])
            self.log('test_bpd', loss)

    model = PixelCNN(c_in=1, c_hidden=16)
    r["hparams"] = dict(model.hparams)
    r["example"] = list(model.example_input_array.shape)
    [optimizer], [scheduler] = model.configure_optimizers()
    step = 0
    model.train()
    while step < steps:  # trainer.fit(model, train_loader, val_loader)
        for batch_idx, batch in enumerate(train_loader):
            loss = model.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step == steps:
                break
        scheduler.step()
    model.eval()
    with torch.no_grad():
        for batch_idx, batch in enumerate(test_loader):
            model.validation_step(batch, batch_idx)
            model.test_step(batch, batch_idx)
    r["logged"] = model.logged
    r["num_params"] = sum(np.prod(p.shape) for p in model.parameters())

    torch.manual_seed(1)  # pl.seed_everything(1)
    samples = model.sample(img_shape=(4, 1, 6, 6))
    r["samples"] = [numpy_of(samples), str(samples.dtype).split(".")[1]]

    def autocomplete_image(img):
        # Remove lower half of the image
        img_init = img.clone()
        img_init[:, 10:, :] = -1
        # Generate 2 possible completions (cut to 11 rows here)
        torch.manual_seed(1)
        img_init = img_init[:, :11, :].unsqueeze(0).expand(2, 1, 11, 28).clone()
        img_generated = model.sample(img_init.shape, img_init)
        return img_generated

    completed = autocomplete_image(train_set[1][0])
    r["completed"] = [numpy_of(completed[:, :, 10:, :]), bool((completed[:, :, :10] == train_set[1][0][:, :10]).all())]
    r["state"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return r


def test_uvadlc_pixelcnn():
    ref, got = compare_program(tutorial12, rtol=1e-3, atol=1e-4)
    fields = got["fields"]
    assert fields[0].sum() == 1 and fields[1].sum() == 3 and fields[-1].sum() > fields[2].sum()
    assert (got["samples"][0] >= 0).all() and got["completed"][1]

"""pytorch/examples' fast_neural_style: a TransformerNet of ConvLayer (ReflectionPad2d(kernel_size
// 2) then Conv2d), InstanceNorm2d(affine=True), ResidualBlocks and UpsampleConvLayer
(torch.nn.functional.interpolate(x_in, mode='nearest', scale_factor=upsample)); a VGG-like
loss network whose slices are nn.Sequential built by add_module(str(x), features[x]) over a
frozen features stack (requires_grad = False) returning a namedtuple of relu outputs;
gram_matrix through features.view(b, ch, w * h), transpose(1, 2) and bmm / (ch * h * w);
normalize_batch with weight.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1) and div_(255.0);
content loss MSE on relu2_2, style loss summed over grams with gm_s[:n_batch, :, :]; Adam; and
the stylised output clamp(0, 255) of the eval model under torch.no_grad(), checkpointed by
state_dict with the deprecated running_* keys of InstanceNorm deleted by re.search."""
import re
from collections import namedtuple

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def fast_neural_style(torch, init=None, steps=3):
    nn = torch.nn

    class ConvLayer(torch.nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride):
            super(ConvLayer, self).__init__()
            reflection_padding = kernel_size // 2
            self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
            self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

        def forward(self, x):
            out = self.reflection_pad(x)
            out = self.conv2d(out)
            return out

    class ResidualBlock(torch.nn.Module):
        def __init__(self, channels):
            super(ResidualBlock, self).__init__()
            self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
            self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
            self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
            self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
            self.relu = torch.nn.ReLU()

        def forward(self, x):
            residual = x
            out = self.relu(self.in1(self.conv1(x)))
            out = self.in2(self.conv2(out))
            out = out + residual
            return out

    class UpsampleConvLayer(torch.nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
            super(UpsampleConvLayer, self).__init__()
            self.upsample = upsample
            reflection_padding = kernel_size // 2
            self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
            self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

        def forward(self, x):
            x_in = x
            if self.upsample:
                x_in = torch.nn.functional.interpolate(x_in, mode='nearest', scale_factor=self.upsample)
            out = self.reflection_pad(x_in)
            out = self.conv2d(out)
            return out

    class TransformerNet(torch.nn.Module):
        def __init__(self):
            super(TransformerNet, self).__init__()
            self.conv1 = ConvLayer(3, 8, kernel_size=5, stride=1)
            self.in1 = torch.nn.InstanceNorm2d(8, affine=True)
            self.conv2 = ConvLayer(8, 16, kernel_size=3, stride=2)
            self.in2 = torch.nn.InstanceNorm2d(16, affine=True)
            self.res1 = ResidualBlock(16)
            self.res2 = ResidualBlock(16)
            self.deconv1 = UpsampleConvLayer(16, 8, kernel_size=3, stride=1, upsample=2)
            self.in4 = torch.nn.InstanceNorm2d(8, affine=True)
            self.deconv3 = ConvLayer(8, 3, kernel_size=5, stride=1)
            self.relu = torch.nn.ReLU()

        def forward(self, X):
            y = self.relu(self.in1(self.conv1(X)))
            y = self.relu(self.in2(self.conv2(y)))
            y = self.res1(y)
            y = self.res2(y)
            y = self.relu(self.in4(self.deconv1(y)))
            y = self.deconv3(y)
            return y

    class Vgg(torch.nn.Module):
        def __init__(self, features, requires_grad=False):
            super(Vgg, self).__init__()
            self.slice1 = torch.nn.Sequential()
            self.slice2 = torch.nn.Sequential()
            for x in range(2):
                self.slice1.add_module(str(x), features[x])
            for x in range(2, 5):
                self.slice2.add_module(str(x), features[x])
            if not requires_grad:
                for param in self.parameters():
                    param.requires_grad = False

        def forward(self, X):
            h = self.slice1(X)
            h_relu1_2 = h
            h = self.slice2(h)
            h_relu2_2 = h
            vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2'])
            return vgg_outputs(h_relu1_2, h_relu2_2)

    def gram_matrix(y):
        (b, ch, h, w) = y.size()
        features = y.view(b, ch, w * h)
        features_t = features.transpose(1, 2)
        gram = features.bmm(features_t) / (ch * h * w)
        return gram

    def normalize_batch(batch):
        mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
        std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
        batch = batch.div_(255.0)
        return (batch - mean) / std

    torch.manual_seed(42)
    features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
                             nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True))
    transformer = TransformerNet()
    vgg = Vgg(features, requires_grad=False)
    result = {}
    start_from(torch, {"transformer": transformer, "vgg": vgg}, init, result)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    mse_loss = torch.nn.MSELoss()
    rng = np.random.default_rng(0)
    style = torch.from_numpy((rng.random((1, 3, 12, 12)) * 255).astype(np.float32)).repeat(2, 1, 1, 1)
    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]
    content_weight, style_weight = 1e5, 1e10
    history = []
    for batch_id in range(steps):
        x = torch.from_numpy((rng.random((2, 3, 12, 12)) * 255).astype(np.float32))
        n_batch = len(x)
        optimizer.zero_grad()
        y = transformer(x)
        y = normalize_batch(y)
        x = normalize_batch(x)
        features_y = vgg(y)
        features_x = vgg(x)
        content_loss = content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)
        style_loss = 0.
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
        style_loss *= style_weight
        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()
        history.append([content_loss.item(), style_loss.item()])
    result["history"] = np.array(history)
    transformer.eval()
    state = transformer.state_dict()
    for k in list(state.keys()):
        if re.search(r'in\d+\.running_(mean|var)$', k):
            del state[k]
    style_model = TransformerNet()
    style_model.load_state_dict(state)
    style_model.eval()
    with torch.no_grad():
        content_image = torch.from_numpy((rng.random((3, 12, 12)) * 255).astype(np.float32)).unsqueeze(0)
        output = style_model(content_image).cpu()
    img = output[0].clone().clamp(0, 255).numpy()
    img = img.transpose(1, 2, 0).astype("uint8")
    # truncation to uint8 may split a value within rounding of an integer: kept out of the comparison
    result["own"] = {"img": img}
    result.update(output=numpy_of(output), keys=sorted(state.keys()),
                  grads_none=[p.grad is None for p in vgg.parameters()])
    return result


def test_fast_neural_style():
    ref, got = compare_program(fast_neural_style, rtol=1e-3, atol=1e-3)
    img = got["own"]["img"]
    assert img.dtype == np.uint8 and img.shape == (12, 12, 3)
    assert np.abs(img.astype(int) - ref["own"]["img"].astype(int)).max() <= 1

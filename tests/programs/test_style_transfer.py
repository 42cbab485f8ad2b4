"""Neural style transfer in the style of the PyTorch tutorial: a small VGG-like feature stack
(Conv2d/ReLU/MaxPool2d), rebuilt into an nn.Sequential with a Normalization module in front and
ContentLoss/StyleLoss modules (Gram matrices by mm, targets .detach()ed) inserted after chosen
convolutions by walking .children() and add_module; the model trimmed after the last loss; the
input image optimised by LBFGS with requires_grad_(True), clamped in place under no_grad."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

SIDE = 16


def style_transfer(torch, init=None, num_steps=6):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    content_img = torch.from_numpy(rng.random((1, 3, SIDE, SIDE)).astype(np.float32))
    style_img = torch.from_numpy(rng.random((1, 3, SIDE, SIDE)).astype(np.float32))

    cnn = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
        nn.MaxPool2d(2, 2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True),
    ).eval()
    result = {}
    start_from(torch, cnn, init, result)
    cnn.requires_grad_(False)

    class ContentLoss(nn.Module):
        def __init__(self, target):
            super().__init__()
            self.target = target.detach()

        def forward(self, input):
            self.loss = F.mse_loss(input, self.target)
            return input

    def gram_matrix(input):
        a, b, c, d = input.size()
        features = input.view(a * b, c * d)
        G = torch.mm(features, features.t())
        return G.div(a * b * c * d)

    class StyleLoss(nn.Module):
        def __init__(self, target_feature):
            super().__init__()
            self.target = gram_matrix(target_feature).detach()

        def forward(self, input):
            self.loss = F.mse_loss(gram_matrix(input), self.target)
            return input

    class Normalization(nn.Module):
        def __init__(self, mean, std):
            super().__init__()
            self.mean = torch.tensor(mean).view(-1, 1, 1)
            self.std = torch.tensor(std).view(-1, 1, 1)

        def forward(self, img):
            return (img - self.mean) / self.std

    def get_style_model_and_losses(cnn, style_img, content_img, content_layers=("conv_4",),
                                   style_layers=("conv_1", "conv_2", "conv_3", "conv_4")):
        normalization = Normalization([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        content_losses, style_losses = [], []
        model = nn.Sequential(normalization)
        i = 0
        for layer in cnn.children():
            if isinstance(layer, nn.Conv2d):
                i += 1
                name = "conv_{}".format(i)
            elif isinstance(layer, nn.ReLU):
                name = "relu_{}".format(i)
                layer = nn.ReLU(inplace=False)
            elif isinstance(layer, nn.MaxPool2d):
                name = "pool_{}".format(i)
            elif isinstance(layer, nn.BatchNorm2d):
                name = "bn_{}".format(i)
            else:
                raise RuntimeError("Unrecognized layer: {}".format(layer.__class__.__name__))
            model.add_module(name, layer)
            if name in content_layers:
                target = model(content_img).detach()
                content_loss = ContentLoss(target)
                model.add_module("content_loss_{}".format(i), content_loss)
                content_losses.append(content_loss)
            if name in style_layers:
                target_feature = model(style_img).detach()
                style_loss = StyleLoss(target_feature)
                model.add_module("style_loss_{}".format(i), style_loss)
                style_losses.append(style_loss)
        for i in range(len(model) - 1, -1, -1):
            if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
                break
        model = model[:(i + 1)]
        return model, style_losses, content_losses

    input_img = content_img.clone()
    model, style_losses, content_losses = get_style_model_and_losses(cnn, style_img, content_img)
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = torch.optim.LBFGS([input_img])
    style_weight, content_weight = 1e4, 1
    run = [0]
    trace = []
    while run[0] <= num_steps:
        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = sum(sl.loss for sl in style_losses) * style_weight
            content_score = sum(cl.loss for cl in content_losses) * content_weight
            loss = style_score + content_score
            loss.backward()
            run[0] += 1
            trace.append([style_score.item(), content_score.item()])
            return style_score + content_score
        optimizer.step(closure)
    with torch.no_grad():
        input_img.clamp_(0, 1)
    result.update(trace=np.array(trace), image=numpy_of(input_img), names=[n for n, _ in model.named_children()],
                  grad_free=all(not p.requires_grad for p in model.parameters()))
    return result


def test_style_transfer_lbfgs_on_the_image():
    # LBFGS's line-search-free steps amplify rounding; the image stays close.
    ref, got = compare_program(style_transfer, rtol=2e-3, atol=2e-4)
    assert ref["trace"][-1].sum() < ref["trace"][0].sum()
    assert got["names"][-1] == "style_loss_4"

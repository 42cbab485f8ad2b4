"""jacobgil's pytorch-grad-cam, its core as the package writes it, on a small VGG-like model in place
of torchvision's (the target layer its in-place ReLU features[-1]): ActivationsAndGradients (two
register_forward_hook handles per target layer, the second registering
output.register_hook(_store_grad) only when output.requires_grad, activations kept as
activation.cpu().detach(), gradients prepended in reverse order, handles removed by release());
BaseCAM.forward (model.eval(), targets from np.argmax of outputs.cpu().data.numpy(),
ClassifierOutputTarget indexing model_output[self.category], the loss as Python sum() of target
outputs, backward(retain_graph=True), per-layer cams in NumPy, scaled by scale_cam_image with PIL's
bilinear resize standing in for cv2.resize); GradCAM's np.mean(grads, axis=(2, 3)) and GradCAM++'s
alpha weights; ScoreCAM (torch.from_numpy of the activations through
nn.UpsamplingBilinear2d(size=...), per-channel min/max by view(...).max(dim=-1)[0], masked inputs
input_tensor[:, None] * upsampled[:, :, None] scored under no_grad, torch.nn.Softmax(dim=-1) of
torch.Tensor(scores)); and guided backpropagation (GuidedBackpropReLU, an old-style
autograd.Function with torch.addcmul of type_as'd zeros and save_for_backward, swapped for every
nn.ReLU by replace_all_layer_type_recursive through model._modules and back). Seeds are
torch.manual_seed in both libraries."""
import numpy as np
from PIL import Image

from prog_helpers import compare_program, start_from


def scale_cam_image(cam, target_size=None):
    result = []
    for img in cam:
        img = img - np.min(img)
        img = img / (1e-7 + np.max(img))
        if target_size is not None:
            img = np.asarray(Image.fromarray(img).resize(target_size, Image.BILINEAR))  # cv2.resize
        result.append(img)
    result = np.float32(result)
    return result


def grad_cam(torch, init=None):
    nn = torch.nn
    F = torch.nn.functional
    Function = torch.autograd.Function

    class ActivationsAndGradients:
        """ Class for extracting activations and
        registering gradients from targetted intermediate layers """

        def __init__(self, model, target_layers, reshape_transform):
            self.model = model
            self.gradients = []
            self.activations = []
            self.reshape_transform = reshape_transform
            self.handles = []
            for target_layer in target_layers:
                self.handles.append(target_layer.register_forward_hook(self.save_activation))
                # Because of https://github.com/pytorch/pytorch/issues/61519,
                # we don't use backward hook to record gradients.
                self.handles.append(target_layer.register_forward_hook(self.save_gradient))

        def save_activation(self, module, input, output):
            activation = output
            if self.reshape_transform is not None:
                activation = self.reshape_transform(activation)
            self.activations.append(activation.cpu().detach())

        def save_gradient(self, module, input, output):
            if not hasattr(output, "requires_grad") or not output.requires_grad:
                # You can only register hooks on tensor requires grad.
                return

            # Gradients are computed in reverse order
            def _store_grad(grad):
                if self.reshape_transform is not None:
                    grad = self.reshape_transform(grad)
                self.gradients = [grad.cpu().detach()] + self.gradients

            output.register_hook(_store_grad)

        def __call__(self, x):
            self.gradients = []
            self.activations = []
            return self.model(x)

        def release(self):
            for handle in self.handles:
                handle.remove()

    class ClassifierOutputTarget:
        def __init__(self, category):
            self.category = category

        def __call__(self, model_output):
            if len(model_output.shape) == 1:
                return model_output[self.category]
            return model_output[:, self.category]

    class BaseCAM:
        def __init__(self, model, target_layers, reshape_transform=None, uses_gradients=True):
            self.model = model.eval()
            self.target_layers = target_layers
            self.reshape_transform = reshape_transform
            self.uses_gradients = uses_gradients
            self.activations_and_grads = ActivationsAndGradients(self.model, target_layers, reshape_transform)

        def get_cam_image(self, input_tensor, target_layer, targets, activations, grads, eigen_smooth=False):
            weights = self.get_cam_weights(input_tensor, target_layer, targets, activations, grads)
            weighted_activations = weights[:, :, None, None] * activations
            cam = weighted_activations.sum(axis=1)
            return cam

        def forward(self, input_tensor, targets, eigen_smooth=False):
            outputs = self.activations_and_grads(input_tensor)
            if targets is None:
                target_categories = np.argmax(outputs.cpu().data.numpy(), axis=-1)
                targets = [ClassifierOutputTarget(category) for category in target_categories]
            if self.uses_gradients:
                self.model.zero_grad()
                loss = sum([target(output) for target, output in zip(targets, outputs)])
                loss.backward(retain_graph=True)
            cam_per_layer = self.compute_cam_per_layer(input_tensor, targets, eigen_smooth)
            return self.aggregate_multi_layers(cam_per_layer)

        def get_target_width_height(self, input_tensor):
            width, height = input_tensor.size(-1), input_tensor.size(-2)
            return width, height

        def compute_cam_per_layer(self, input_tensor, targets, eigen_smooth):
            activations_list = [a.cpu().data.numpy() for a in self.activations_and_grads.activations]
            grads_list = [g.cpu().data.numpy() for g in self.activations_and_grads.gradients]
            target_size = self.get_target_width_height(input_tensor)
            cam_per_target_layer = []
            # Loop over the saliency image from every layer
            for i in range(len(self.target_layers)):
                target_layer = self.target_layers[i]
                layer_activations = None
                layer_grads = None
                if i < len(activations_list):
                    layer_activations = activations_list[i]
                if i < len(grads_list):
                    layer_grads = grads_list[i]
                cam = self.get_cam_image(input_tensor, target_layer, targets, layer_activations, layer_grads,
                                         eigen_smooth)
                cam = np.maximum(cam, 0)
                scaled = scale_cam_image(cam, target_size)
                cam_per_target_layer.append(scaled[:, None, :])
            return cam_per_target_layer

        def aggregate_multi_layers(self, cam_per_target_layer):
            cam_per_target_layer = np.concatenate(cam_per_target_layer, axis=1)
            cam_per_target_layer = np.maximum(cam_per_target_layer, 0)
            result = np.mean(cam_per_target_layer, axis=1)
            return scale_cam_image(result)

        def __call__(self, input_tensor, targets=None, aug_smooth=False, eigen_smooth=False):
            return self.forward(input_tensor, targets, eigen_smooth)

        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc_value, exc_tb):
            self.activations_and_grads.release()

    class GradCAM(BaseCAM):
        def get_cam_weights(self, input_tensor, target_layer, target_category, activations, grads):
            return np.mean(grads, axis=(2, 3))

    class GradCAMPlusPlus(BaseCAM):
        def get_cam_weights(self, input_tensor, target_layers, target_category, activations, grads):
            grads_power_2 = grads**2
            grads_power_3 = grads_power_2 * grads
            # Equation 19 in https://arxiv.org/abs/1710.11063
            sum_activations = np.sum(activations, axis=(2, 3))
            eps = 0.000001
            aij = grads_power_2 / (2 * grads_power_2 + sum_activations[:, :, None, None] * grads_power_3 + eps)
            # Now bring back the ReLU from eq.7 in the paper,
            # And zero out aijs where the activations are 0
            aij = np.where(grads != 0, aij, 0)
            weights = np.maximum(grads, 0) * aij
            weights = np.sum(weights, axis=(2, 3))
            return weights

    class ScoreCAM(BaseCAM):
        def __init__(self, model, target_layers, reshape_transform=None):
            super(ScoreCAM, self).__init__(model, target_layers, reshape_transform=reshape_transform,
                                           uses_gradients=False)

        def get_cam_weights(self, input_tensor, target_layer, targets, activations, grads):
            with torch.no_grad():
                upsample = torch.nn.UpsamplingBilinear2d(size=input_tensor.shape[-2:])
                activation_tensor = torch.from_numpy(activations)
                activation_tensor = activation_tensor.to(self.model.device if hasattr(self.model, "device")
                                                         else input_tensor.device)
                upsampled = upsample(activation_tensor)
                maxs = upsampled.view(upsampled.size(0), upsampled.size(1), -1).max(dim=-1)[0]
                mins = upsampled.view(upsampled.size(0), upsampled.size(1), -1).min(dim=-1)[0]
                maxs, mins = maxs[:, :, None, None], mins[:, :, None, None]
                upsampled = (upsampled - mins) / (maxs - mins + 1e-8)
                input_tensors = input_tensor[:, None, :, :] * upsampled[:, :, None, :, :]
                BATCH_SIZE = 4
                scores = []
                for target, tensor in zip(targets, input_tensors):
                    for i in range(0, tensor.size(0), BATCH_SIZE):
                        batch = tensor[i: i + BATCH_SIZE, :]
                        outputs = [target(o).cpu().item() for o in self.model(batch)]
                        scores.extend(outputs)
                scores = torch.Tensor(scores)
                scores = scores.view(activations.shape[0], activations.shape[1])
                weights = torch.nn.Softmax(dim=-1)(scores).numpy()
                return weights

    class GuidedBackpropReLU(Function):
        @staticmethod
        def forward(self, input_img):
            positive_mask = (input_img > 0).type_as(input_img)
            output = torch.addcmul(torch.zeros(input_img.size()).type_as(input_img), input_img, positive_mask)
            self.save_for_backward(input_img, output)
            return output

        @staticmethod
        def backward(self, grad_output):
            input_img, output = self.saved_tensors
            grad_input = None
            positive_mask_1 = (input_img > 0).type_as(grad_output)
            positive_mask_2 = (grad_output > 0).type_as(grad_output)
            grad_input = torch.addcmul(
                torch.zeros(input_img.size()).type_as(input_img),
                torch.addcmul(torch.zeros(input_img.size()).type_as(input_img), grad_output, positive_mask_1),
                positive_mask_2)
            return grad_input

    class GuidedBackpropReLUasModule(torch.nn.Module):
        def __init__(self):
            super(GuidedBackpropReLUasModule, self).__init__()

        def forward(self, input_img):
            return GuidedBackpropReLU.apply(input_img)

    def replace_all_layer_type_recursive(model, old_layer_type, new_layer):
        for name, layer in model._modules.items():
            if isinstance(layer, old_layer_type):
                model._modules[name] = new_layer
            replace_all_layer_type_recursive(layer, old_layer_type, new_layer)

    class GuidedBackpropReLUModel:
        def __init__(self, model, device):
            self.model = model
            self.model.eval()
            self.device = device
            self.model = self.model.to(self.device)

        def forward(self, input_img):
            return self.model(input_img)

        def __call__(self, input_img, target_category=None):
            replace_all_layer_type_recursive(self.model, torch.nn.ReLU, GuidedBackpropReLUasModule())
            input_img = input_img.to(self.device)
            input_img = input_img.requires_grad_(True)
            output = self.forward(input_img)
            if target_category is None:
                target_category = np.argmax(output.cpu().data.numpy())
            loss = output[0, target_category]
            loss.backward(retain_graph=True)
            output = input_img.grad.cpu().data.numpy()
            output = output[0, :, :, :]
            output = output.transpose((1, 2, 0))
            replace_all_layer_type_recursive(self.model, GuidedBackpropReLUasModule, torch.nn.ReLU())
            return output

    class SmallVGG(nn.Module):
        # torchvision's VGG layout, small: the usual target layer is features[-1], an in-place ReLU
        def __init__(self, num_classes=4):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.classifier = nn.Sequential(nn.Linear(16, 16), nn.ReLU(True), nn.Linear(16, num_classes))

        def forward(self, x):
            x = self.avgpool(self.features(x))
            return self.classifier(torch.flatten(x, 1))

    torch.manual_seed(0)
    model = SmallVGG()
    result = {}
    start_from(torch, model, init, result)
    # a few training steps so that the running statistics are not the initial ones
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = torch.tensor(rng.normal(size=(6, 3, 12, 12)).astype(np.float32))
        loss = F.cross_entropy(model(x), torch.tensor(rng.integers(0, 4, 6)))
        opt.zero_grad()
        loss.backward()
        opt.step()
    input_tensor = torch.tensor(rng.normal(size=(2, 3, 12, 12)).astype(np.float32))
    target_layers = [model.features[-1]]
    with GradCAM(model=model, target_layers=target_layers) as cam:
        result["gradcam"] = cam(input_tensor=input_tensor)
        result["n_hooks"] = len(model.features[-1]._forward_hooks)
    result["hooks_after"] = len(model.features[-1]._forward_hooks)
    with GradCAMPlusPlus(model=model, target_layers=[model.features[2], model.features[-1]]) as cam:
        result["gradcampp"] = cam(input_tensor=input_tensor, targets=[ClassifierOutputTarget(1),
                                                                      ClassifierOutputTarget(2)])
    with ScoreCAM(model=model, target_layers=target_layers) as cam:
        result["scorecam"] = cam(input_tensor=input_tensor)
    gb_model = GuidedBackpropReLUModel(model=model, device="cpu")
    result["guided"] = gb_model(input_tensor[:1].clone(), target_category=None)
    # one nn.ReLU() instance is put back in all four places, and modules() lists it once
    result["relus_back"] = [sum(isinstance(m, nn.ReLU) for m in model.modules()),
                            sum(isinstance(m, nn.ReLU) for _, m in model.named_modules(remove_duplicate=False))]
    return result


def test_grad_cam():
    ref, got = compare_program(grad_cam, rtol=1e-3, atol=1e-4)
    assert got["n_hooks"] == 2 and got["hooks_after"] == 0
    assert got["gradcam"].shape == (2, 12, 12) and got["relus_back"] == [1, 4]

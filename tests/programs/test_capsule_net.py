"""The widely copied capsule-network implementation (dynamic routing between capsules), smaller: a
softmax over any dim written by transpose/contiguous/view, the augmentation that shifts images by
slices into torch.zeros(*x.size()), a CapsuleLayer whose primary capsules are a ModuleList of Conv2d
(outputs torch.cat(..., dim=-1) and squash) and whose digit capsules route by agreement (priors =
x[None, :, :, None, :] @ self.route_weights[:, None, :, :, :], logits from
Variable(torch.zeros(*priors.size())), three iterations), a CapsuleNet whose decoder masks the
capsules by torch.eye(NUM_CLASSES).index_select(dim=0, index=...), and the margin loss plus
nn.MSELoss(size_average=False) reconstruction; Adam."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

NUM_CLASSES = 3
NUM_ROUTING_ITERATIONS = 3


def capsule_net(torch, init=None, steps=4, batch_size=8):
    nn, F = torch.nn, torch.nn.functional
    Variable = torch.autograd.Variable
    torch.manual_seed(0)
    rng = np.random.default_rng(0)

    def softmax(input, dim=1):
        transposed_input = input.transpose(dim, len(input.size()) - 1)
        softmaxed_output = F.softmax(transposed_input.contiguous().view(-1, transposed_input.size(-1)), dim=-1)
        return softmaxed_output.view(*transposed_input.size()).transpose(dim, len(input.size()) - 1)

    def augmentation(x, max_shift=2):
        _, _, height, width = x.size()
        h_shift, w_shift = rng.integers(-max_shift, max_shift + 1, size=2)
        source_height_slice = slice(max(0, h_shift), h_shift + height)
        source_width_slice = slice(max(0, w_shift), w_shift + width)
        target_height_slice = slice(max(0, -h_shift), -h_shift + height)
        target_width_slice = slice(max(0, -w_shift), -w_shift + width)
        shifted_image = torch.zeros(*x.size())
        shifted_image[:, :, source_height_slice, source_width_slice] = x[:, :, target_height_slice, target_width_slice]
        return shifted_image.float()

    class CapsuleLayer(nn.Module):
        def __init__(self, num_capsules, num_route_nodes, in_channels, out_channels, kernel_size=None, stride=None,
                     num_iterations=NUM_ROUTING_ITERATIONS):
            super(CapsuleLayer, self).__init__()
            self.num_route_nodes = num_route_nodes
            self.num_iterations = num_iterations
            self.num_capsules = num_capsules
            if num_route_nodes != -1:
                self.route_weights = nn.Parameter(torch.randn(num_capsules, num_route_nodes, in_channels, out_channels))
            else:
                self.capsules = nn.ModuleList(
                    [nn.Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride, padding=0) for _ in
                     range(num_capsules)])

        def squash(self, tensor, dim=-1):
            squared_norm = (tensor ** 2).sum(dim=dim, keepdim=True)
            scale = squared_norm / (1 + squared_norm)
            return scale * tensor / torch.sqrt(squared_norm)

        def forward(self, x):
            if self.num_route_nodes != -1:
                priors = x[None, :, :, None, :] @ self.route_weights[:, None, :, :, :]
                logits = Variable(torch.zeros(*priors.size()))
                for i in range(self.num_iterations):
                    probs = softmax(logits, dim=2)
                    outputs = self.squash((probs * priors).sum(dim=2, keepdim=True))
                    if i != self.num_iterations - 1:
                        delta_logits = (priors * outputs).sum(dim=-1, keepdim=True)
                        logits = logits + delta_logits
            else:
                outputs = [capsule(x).view(x.size(0), -1, 1) for capsule in self.capsules]
                outputs = torch.cat(outputs, dim=-1)
                outputs = self.squash(outputs)
            return outputs

    class CapsuleNet(nn.Module):
        def __init__(self):
            super(CapsuleNet, self).__init__()
            self.conv1 = nn.Conv2d(in_channels=1, out_channels=32, kernel_size=5, stride=1)
            self.primary_capsules = CapsuleLayer(num_capsules=8, num_route_nodes=-1, in_channels=32, out_channels=8,
                                                 kernel_size=5, stride=2)
            self.digit_capsules = CapsuleLayer(num_capsules=NUM_CLASSES, num_route_nodes=8 * 6 * 6, in_channels=8,
                                               out_channels=16)
            self.decoder = nn.Sequential(
                nn.Linear(16 * NUM_CLASSES, 64),
                nn.ReLU(inplace=True),
                nn.Linear(64, 128),
                nn.ReLU(inplace=True),
                nn.Linear(128, 400),
                nn.Sigmoid()
            )

        def forward(self, x, y=None):
            x = F.relu(self.conv1(x), inplace=True)
            x = self.primary_capsules(x)
            x = self.digit_capsules(x).squeeze().transpose(0, 1)
            classes = (x ** 2).sum(dim=-1) ** 0.5
            classes = F.softmax(classes, dim=-1)
            if y is None:
                # In all batches, get the most active capsule.
                _, max_length_indices = classes.max(dim=1)
                y = Variable(torch.eye(NUM_CLASSES)).index_select(dim=0, index=max_length_indices.data)
            reconstructions = self.decoder((x * y[:, :, None]).reshape(x.size(0), -1))
            return classes, reconstructions

    class CapsuleLoss(nn.Module):
        def __init__(self):
            super(CapsuleLoss, self).__init__()
            self.reconstruction_loss = nn.MSELoss(size_average=False)

        def forward(self, images, labels, classes, reconstructions):
            left = F.relu(0.9 - classes, inplace=True) ** 2
            right = F.relu(classes - 0.1, inplace=True) ** 2
            margin_loss = labels * left + 0.5 * (1. - labels) * right
            margin_loss = margin_loss.sum()
            assert torch.numel(images) == torch.numel(reconstructions)
            images = images.view(reconstructions.size()[0], -1)
            reconstruction_loss = self.reconstruction_loss(reconstructions, images)
            return (margin_loss + 0.0005 * reconstruction_loss) / images.size(0)

    model = CapsuleNet()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters())
    capsule_loss = CapsuleLoss()
    # images: a bright square in one of three corners
    labels_all = rng.integers(0, NUM_CLASSES, steps * batch_size)
    # uint8 (N, 20, 20) images as MNIST's tensors are
    data = rng.integers(0, 50, (steps * batch_size, 20, 20)).astype(np.uint8)
    for i, c in enumerate(labels_all):
        r, col = [(2, 2), (2, 12), (12, 7)][c]
        data[i, r:r + 6, col:col + 6] = 255
    losses, accuracies = [], []
    model.train()
    for step in range(steps):
        sample = {"data": torch.from_numpy(data[step * batch_size:(step + 1) * batch_size]),
                  "labels": torch.from_numpy(labels_all[step * batch_size:(step + 1) * batch_size])}
        data_b = augmentation(sample["data"].unsqueeze(1).float() / 255.0)
        labels = torch.eye(NUM_CLASSES).index_select(dim=0, index=sample["labels"])
        data_b, labels = Variable(data_b), Variable(labels)
        classes, reconstructions = model(data_b, labels)
        loss = capsule_loss(data_b, labels, classes, reconstructions)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        accuracies.append(float((classes.max(dim=1)[1] == sample["labels"]).float().mean()))
    model.eval()
    with torch.no_grad():
        classes, reconstructions = model(torch.from_numpy(data[:batch_size]).unsqueeze(1).float() / 255.0)
    result.update(losses=losses, accuracies=accuracies, classes=numpy_of(classes),
                  reconstructions=numpy_of(reconstructions), params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_capsule_network_dynamic_routing():
    ref, got = compare_program(capsule_net, rtol=1e-3, atol=1e-4)
    assert ref["classes"].shape == (8, NUM_CLASSES) and ref["reconstructions"].shape == (8, 400)
    np.testing.assert_allclose(ref["classes"].sum(1), 1, rtol=1e-5)

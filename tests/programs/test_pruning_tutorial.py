"""The pruning tutorial (torch.nn.utils.prune) as its page runs it on LeNet: named_parameters and
named_buffers before and after prune.random_unstructured (weight_orig and weight_mask), the
_forward_pre_hooks OrderedDict, l1_unstructured on the bias by an absolute amount, iterative
ln_structured(n=2, dim=0) on top of the earlier mask and the PruningContainer's history found by
hook._tensor_name, the state_dict's keys, prune.remove, pruning every Conv2d and Linear found by
named_modules, global_unstructured with prune.L1Unstructured and the sparsity printout, and a
custom FooBarPruningMethod(prune.BasePruningMethod) with PRUNING_TYPE = 'unstructured'. The
random mask comes from the seeded generator, so both libraries prune the same entries. Then the
pruned LeNet is fine-tuned a few SGD steps: pruned weights stay zero, weight_orig learns."""
import importlib

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def pruning(torch, init=None, steps=4):
    nn, F = torch.nn, torch.nn.functional
    prune = importlib.import_module(torch.__name__ + ".nn.utils.prune")  # import torch.nn.utils.prune as prune
    torch.manual_seed(0)

    class LeNet(nn.Module):
        def __init__(self):
            super(LeNet, self).__init__()
            # 1 input image channel, 6 output channels, 5x5 square conv kernel
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5x5 image dimension
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(-1, int(x.nelement() / x.shape[0]))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

    model = LeNet()
    result, log = {}, []
    start_from(torch, model, init, result)
    module = model.conv1
    log.append([name for name, _ in module.named_parameters()])
    log.append([name for name, _ in module.named_buffers()])
    prune.random_unstructured(module, name="weight", amount=0.3)
    log.append([name for name, _ in module.named_parameters()])
    log.append([name for name, _ in module.named_buffers()])
    # drawn from the seeded generator: PyTorch's stream, so the same mask in both libraries
    result["random_mask"] = numpy_of(module.weight_mask)
    log.append(len(module._forward_pre_hooks))
    prune.l1_unstructured(module, name="bias", amount=3)
    log.append(len(module._forward_pre_hooks))
    result["bias"] = numpy_of(module.bias)
    # Iterative pruning
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    result["weight"] = numpy_of(module.weight)
    for hook in module._forward_pre_hooks.values():
        if hook._tensor_name == "weight":  # select out the correct hook
            break
    log.append([type(h).__name__ for h in hook])  # pruning history in the container
    log.append(list(model.state_dict().keys()))
    prune.remove(module, 'weight')
    log.append([name for name, _ in module.named_parameters()])
    log.append([name for name, _ in module.named_buffers()])

    new_model = LeNet()
    for name, module in new_model.named_modules():
        # prune 20% of connections in all 2D-conv layers
        if isinstance(module, torch.nn.Conv2d):
            prune.l1_unstructured(module, name='weight', amount=0.2)
        # prune 40% of connections in all linear layers
        elif isinstance(module, torch.nn.Linear):
            prune.l1_unstructured(module, name='weight', amount=0.4)
    log.append(list(dict(new_model.named_buffers()).keys()))  # to verify that all masks exist

    model = LeNet()
    model.load_state_dict({k: torch.tensor(v) for k, v in (result["init"] if init is None else init).items()})
    parameters_to_prune = (
        (model.conv1, 'weight'),
        (model.conv2, 'weight'),
        (model.fc1, 'weight'),
        (model.fc2, 'weight'),
        (model.fc3, 'weight'),
    )
    prune.global_unstructured(
        parameters_to_prune,
        pruning_method=prune.L1Unstructured,
        amount=0.2,
    )
    for name in ("conv1", "conv2", "fc1", "fc2", "fc3"):
        layer = getattr(model, name)
        log.append("Sparsity in {}.weight: {:.2f}%".format(
            name, 100. * float(torch.sum(layer.weight == 0)) / float(layer.weight.nelement())))
    log.append(
        "Global sparsity: {:.2f}%".format(
            100. * float(
                torch.sum(model.conv1.weight == 0)
                + torch.sum(model.conv2.weight == 0)
                + torch.sum(model.fc1.weight == 0)
                + torch.sum(model.fc2.weight == 0)
                + torch.sum(model.fc3.weight == 0)
            )
            / float(
                model.conv1.weight.nelement()
                + model.conv2.weight.nelement()
                + model.fc1.weight.nelement()
                + model.fc2.weight.nelement()
                + model.fc3.weight.nelement()
            )
        )
    )

    class FooBarPruningMethod(prune.BasePruningMethod):
        """Prune every other entry in a tensor
        """
        PRUNING_TYPE = 'unstructured'

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    def foobar_unstructured(module, name):
        """Prunes tensor corresponding to parameter called `name` in `module`
        by removing every other entry in the tensors.
        """
        FooBarPruningMethod.apply(module, name)
        return module

    foobar_unstructured(model.fc3, name='bias')
    result["foobar_mask"] = numpy_of(model.fc3.bias_mask)
    log.append(prune.is_pruned(model))

    # fine-tune the globally pruned model: the masks hold, the originals learn
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((8, 1, 32, 32)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 10, 8))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    grad = numpy_of(model.fc1.weight_orig.grad)
    for module, name in parameters_to_prune:
        prune.remove(module, name)
    result.update(log=log, losses=losses, fc1_grad=grad,
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_pruning_tutorial():
    ref, got = compare_program(pruning)
    log = ref["log"]
    assert log[2] == ["bias", "weight_orig"] and log[3] == ["weight_mask"]
    assert log[4:6] == [1, 2] and log[6] == ["RandomUnstructured", "LnStructured"]
    assert log[16] == "Global sparsity: 20.00%" and log[17] is True
    np.testing.assert_array_equal(ref["foobar_mask"], np.arange(10) % 2)
    assert (ref["bias"] == 0).sum() == 3
    assert (np.abs(ref["weight"]).sum((1, 2, 3)) == 0).sum() == 3  # ln_structured zeroed 3 of 6 channels
    assert ref["random_mask"].sum() == 150 - 45  # 30% of 150 pruned
    assert "fc1.weight_orig" not in ref["state"] and (ref["state"]["fc1.weight"] == 0).mean() > 0.05

"""Recipes and tutorials about hooks and devices, as their pages run them: "How to save memory by
fusing the optimizer step into the backward pass" (an Adam per parameter in optimizer_dict,
p.register_post_accumulate_grad_hook(optimizer_hook) stepping and zeroing during backward,
loss.sum().backward() as the whole update), checked against the usual loop; optimizer hooks
(register_step_pre_hook/register_step_post_hook on an optimizer, the global
torch.optim.optimizer.register_optimizer_step_pre_hook/post hook, the handles removed,
register_state_dict_post_hook and register_load_state_dict_pre_hook/post_hook editing and reading
the state); "Reasoning about shapes in PyTorch" (a Conv2d and its input on device='meta', a
LeNet-like MyModel built under `with torch.device("meta")`, a forward hook on every named module
printing f"Shape of output to {module} is {output.shape}."); "Changing default device"
(torch.set_default_device, torch.get_default_device, `with torch.device(...)` for a Linear)."""
import importlib

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from test_state_dict_recipes import lenet


def optimizer_in_backward(torch, init=None, steps=3):
    nn = torch.nn
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
    reference = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
    result = {}
    start_from(torch, model, init, result)
    reference.load_state_dict(model.state_dict())
    images = [torch.tensor(rng.random((1, 3, 8, 8)), dtype=torch.float32) for _ in range(steps)]

    # Instead of having just *one* optimizer, we will have a ``dict`` of optimizers
    # for every parameter so we could reference them in our hook.
    optimizer_dict = {p: torch.optim.Adam([p], foreach=False) for p in model.parameters()}

    # Define our hook, which will call the optimizer ``step()`` and ``zero_grad()``
    def optimizer_hook(parameter) -> None:
        optimizer_dict[parameter].step()
        optimizer_dict[parameter].zero_grad()

    # Register the hook onto every parameter
    handles = [p.register_post_accumulate_grad_hook(optimizer_hook) for p in model.parameters()]

    def train(model, fake_image):
        loss = model.forward(fake_image)
        loss.sum().backward()
        # optimizer update --> no longer needed!

    for fake_image in images:
        train(model, fake_image)
    result["grads_none"] = [p.grad is None for p in model.parameters()]
    result["fused"] = [numpy_of(p) for p in model.parameters()]

    optimizer = torch.optim.Adam(reference.parameters())
    for fake_image in images:
        loss = reference(fake_image)
        loss.sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    result["usual"] = [numpy_of(p) for p in reference.parameters()]
    for h in handles:
        h.remove()
    loss = model(images[0]).sum()
    loss.backward()
    result["after_remove"] = [p.grad is not None for p in model.parameters()]
    return result


def optimizer_hooks(torch, init=None, steps=3):
    nn = torch.nn
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((8, 4)), dtype=torch.float32)
    y = torch.tensor(rng.standard_normal((8, 1)), dtype=torch.float32)
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    result = {}
    start_from(torch, model, init, result)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    log = []

    def pre_hook(optimizer, args, kwargs):
        log.append(("pre", type(optimizer).__name__, len(args), sorted(kwargs)))

    def post_hook(optimizer, args, kwargs):
        log.append(("post", optimizer.param_groups[0]["lr"]))

    def global_pre(optimizer, args, kwargs):
        log.append(("global_pre",))

    def global_post(optimizer, args, kwargs):
        log.append(("global_post",))

    h1 = opt.register_step_pre_hook(pre_hook)
    h2 = opt.register_step_post_hook(post_hook)
    # from torch.optim.optimizer import register_optimizer_step_pre_hook, ..._post_hook
    optimizer_module = importlib.import_module(torch.__name__ + ".optim.optimizer")
    g1 = optimizer_module.register_optimizer_step_pre_hook(global_pre)
    g2 = optimizer_module.register_optimizer_step_post_hook(global_post)
    losses = []
    try:
        for step in range(steps):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if step == 0:
                h1.remove()
                g1.remove()
    finally:
        g1.remove()
        g2.remove()
    h2.remove()
    opt.step()
    result.update(log=log, losses=losses)

    def sd_post(optimizer, state_dict):
        state_dict["note"] = "saved by hook"
        return state_dict

    seen = []

    def load_pre(optimizer, state_dict):
        seen.append(sorted(state_dict))
        state_dict = dict(state_dict)
        state_dict.pop("note", None)
        return state_dict

    def load_post(optimizer):
        seen.append(("loaded", len(optimizer.state)))

    opt.register_state_dict_post_hook(sd_post)
    sd = opt.state_dict()
    fresh = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    fresh.register_load_state_dict_pre_hook(load_pre)
    fresh.register_load_state_dict_post_hook(load_post)
    fresh.load_state_dict(sd)
    result.update(note=sd["note"], seen=seen, lr=fresh.param_groups[0]["lr"],
                  buf=numpy_of(fresh.state[model.weight]["momentum_buffer"]))
    return result


def reasoning_about_shapes(torch, init=None):
    nn = torch.nn
    a = torch.ones(2, 3, 10, 10, device='meta')
    conv = torch.nn.Conv2d(3, 5, 2, device='meta')
    out = conv(a)
    result = {"conv": (tuple(out.shape), str(out.device), str(out.dtype).replace(torch.__name__, "torch"))}

    MyModel = lenet(torch)  # the recipe's MyModel is the tutorials' LeNet (conv1/pool/conv2/fc1-3)

    printed = []

    def fw_hook(module, input, output):
        printed.append(f"Shape of output to {module} is {output.shape}.".replace(torch.__name__, "torch"))

    # Any tensor created within this torch.device context manager will be
    # on the meta device.
    with torch.device("meta"):
        net = MyModel()
        inp = torch.randn((1024, 3, 32, 32))

    for name, layer in net.named_modules():
        layer.register_forward_hook(fw_hook)

    out = net(inp)
    result.update(printed=printed, out=(tuple(out.shape), out.is_meta),
                  params=[str(p.device) for p in net.parameters()])

    # Changing default device
    before = str(torch.get_default_device())
    torch.set_default_device('meta')
    try:
        made = (str(torch.get_default_device()), str(torch.randn(3).device), str(nn.Linear(2, 3).weight.device))
        with torch.device('cpu'):
            mod = torch.nn.Linear(20, 30)
            inside = (str(mod.weight.device), str(mod(torch.randn(128, 20)).device))
    finally:
        torch.set_default_device(None)
    result.update(before=before, made=made, inside=inside, after=str(torch.get_default_device()))
    return result


def test_optimizer_step_in_backward():
    compare_program(optimizer_in_backward, rtol=1e-4, atol=1e-5)


def test_optimizer_hooks():
    compare_program(optimizer_hooks)


def test_reasoning_about_shapes_and_default_device():
    compare_program(reasoning_about_shapes)

"""Mixed precision and gradient accumulation as the recipes and training scripts write them on a CPU:
the AMP recipe's make_model (Linear/ReLU stack from a list of layers), torch.autocast(device_type=
"cpu", dtype=torch.bfloat16, enabled=use_amp) around the forward and the loss, a
torch.amp.GradScaler("cpu", enabled=use_amp) with scale(loss).backward(), unscale_ before
clip_grad_norm_, step/update, zero_grad(set_to_none=True), and a checkpoint dict holding the
scaler's state_dict; then a small CNN trained by gradient accumulation (loss / accumulation_steps,
step every accumulation_steps micro-batches) with its forward under autocast, the output dtype
(bfloat16 for conv/linear, float32 for the loss) checked as the recipe says."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

# bfloat16 keeps 8 bits of mantissa: one rounding of a product is 2**-9 relative
BF16_RTOL, BF16_ATOL = 3e-2, 3e-3


def amp_recipe(torch, init=None, epochs=3, batch_size=16, in_size=32, out_size=8, num_layers=3, use_amp=True):
    device = "cpu"
    torch.manual_seed(0)

    def make_model(in_size, out_size, num_layers):
        layers = []
        for _ in range(num_layers - 1):
            layers.append(torch.nn.Linear(in_size, in_size))
            layers.append(torch.nn.ReLU())
        layers.append(torch.nn.Linear(in_size, out_size))
        return torch.nn.Sequential(*tuple(layers)).to(device)

    rng = np.random.default_rng(0)
    num_batches = 4
    data = [torch.from_numpy(rng.standard_normal((batch_size, in_size)).astype(np.float32)) for _ in range(num_batches)]
    targets = [torch.from_numpy(rng.standard_normal((batch_size, out_size)).astype(np.float32))
               for _ in range(num_batches)]
    loss_fn = torch.nn.MSELoss().to(device)

    net = make_model(in_size, out_size, num_layers)
    result = {}
    start_from(torch, net, init, result)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", enabled=use_amp)
    losses, dtypes, norms = [], [], []
    for epoch in range(epochs):
        for input, target in zip(data, targets):
            with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=use_amp):
                output = net(input)
                loss = loss_fn(output, target)
            # output is bfloat16 because linear layers autocast to bfloat16;
            # loss is float32 because mse_loss layers autocast to float32.
            assert output.dtype is (torch.bfloat16 if use_amp else torch.float32)
            assert loss.dtype is torch.float32
            scaler.scale(loss).backward()
            # Unscales the gradients of optimizer's assigned params in-place
            scaler.unscale_(opt)
            # Since the gradients of optimizer's assigned params are now unscaled, clips as usual.
            norms.append(float(torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5)))
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)  # set_to_none=True here can modestly improve performance
            losses.append(loss.item())
            dtypes.append(str(output.dtype).split(".")[-1])
    checkpoint = {"model": net.state_dict(), "optimizer": opt.state_dict(), "scaler": scaler.state_dict()}
    net2 = make_model(in_size, out_size, num_layers)
    net2.load_state_dict(checkpoint["model"])
    opt2 = torch.optim.SGD(net2.parameters(), lr=0.01)
    opt2.load_state_dict(checkpoint["optimizer"])
    scaler2 = torch.amp.GradScaler("cpu", enabled=use_amp)
    scaler2.load_state_dict(checkpoint["scaler"])
    with torch.no_grad(), torch.autocast(device_type=device, dtype=torch.bfloat16):
        evaluated = net2(data[0]).float()
    result.update(losses=losses, dtypes=dtypes, norms=norms, scale=scaler2.get_scale(),
                  scaler_keys=sorted(checkpoint["scaler"]), evaluated=numpy_of(evaluated),
                  params={k: numpy_of(v) for k, v in net.named_parameters()})
    return result


def accumulation_cnn(torch, init=None, micro_batches=8, accumulation_steps=4, batch_size=4):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
            self.fc = nn.Linear(16 * 4 * 4, 5)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            return self.fc(torch.flatten(x, 1))

    model = Net()
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(1)
    images = rng.standard_normal((micro_batches * batch_size, 1, 16, 16)).astype(np.float32)
    labels = rng.integers(0, 5, micro_batches * batch_size)
    loader = [(torch.from_numpy(images[i:i + batch_size]), torch.from_numpy(labels[i:i + batch_size]))
              for i in range(0, len(images), batch_size)]
    loss_function = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.zero_grad()  # Reset gradients tensors
    losses, steps, dtypes = [], [], set()
    for i, (inputs, labels) in enumerate(loader):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            predictions = model(inputs)  # Forward pass
            dtypes.add(str(predictions.dtype))
        loss = loss_function(predictions.float(), labels)  # Compute loss function
        loss = loss / accumulation_steps  # Normalize our loss (if averaged)
        loss.backward()  # Backward pass
        losses.append(loss.item())
        if (i + 1) % accumulation_steps == 0:  # Wait for several backward steps
            steps.append(numpy_of(model.fc.weight.grad))
            optimizer.step()  # Now we can do an optimizer step
            model.zero_grad()  # Reset gradients tensors
    result.update(losses=losses, grads=steps, dtypes=[d.split(".")[-1] for d in sorted(dtypes)],
                  grad_dtype=str(model.conv1.weight.dtype).split(".")[-1],
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_amp_recipe_bfloat16_with_grad_scaler():
    ref, got = compare_program(amp_recipe, rtol=BF16_RTOL, atol=BF16_ATOL)
    assert set(ref["dtypes"]) == {"bfloat16"} and ref["scale"] == 65536.0
    assert ref["scaler_keys"] == ["_growth_tracker", "backoff_factor", "growth_factor", "growth_interval", "scale"]


def test_amp_recipe_disabled_is_float32():
    ref, got = compare_program(amp_recipe, use_amp=False)
    assert set(ref["dtypes"]) == {"float32"} and ref["scale"] == 1.0 and ref["scaler_keys"] == []


def test_gradient_accumulation_under_autocast():
    ref, got = compare_program(accumulation_cnn, rtol=BF16_RTOL, atol=BF16_ATOL)
    assert len(ref["grads"]) == 2 and ref["dtypes"] == ["bfloat16"] and ref["grad_dtype"] == "float32"

"""The pytorch.org recipes and "Basics" pages as scripts run them: "Build the neural network"
(NeuralNetwork with nn.Flatten + nn.Sequential stack, model(X), nn.Softmax(dim=1)(logits),
pred_probab.argmax(1), named_parameters with size and [:2] slices, the layer-by-layer walk
through Flatten, Linear(in_features=, out_features=), ReLU); "Save and load the model"
(torch.save of the state_dict and of the whole model, torch.load(weights_only=True) into a fresh
model, torch.load(weights_only=False) of the model object, model.eval()); "Warmstarting a model"
(netA's state_dict loaded into a different netB with strict=False, the returned
missing/unexpected keys); "Zeroing out gradients" (an optimizer loop with zero_grad() and with
set_to_none=False, gradients accumulating without it); "Reproducibility" (manual_seed,
use_deterministic_algorithms, a seeded torch.Generator for a DataLoader's shuffle and
worker_init_fn from initial_seed(), two runs equal); "Profiler" (profile(activities=
[ProfilerActivity.CPU], record_shapes=True, profile_memory=True) around record_function("model_inference"),
key_averages() and group_by_input_shape, table(sort_by="cpu_time_total", row_limit=10))."""
import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from

PIX = 6


def build_save_load(torch, init=None, path=None):
    nn = torch.nn

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(PIX * PIX, 16), nn.ReLU(),
                nn.Linear(16, 16), nn.ReLU(),
                nn.Linear(16, 10),
            )

        def forward(self, x):
            x = self.flatten(x)
            return self.linear_relu_stack(x)

    # torch.save(model) pickles the class by name, as a script's module-level class: one per library here
    NeuralNetwork.__qualname__ = NeuralNetwork.__name__ = f"NeuralNetwork_{torch.__name__}"
    globals()[NeuralNetwork.__name__] = NeuralNetwork
    torch.manual_seed(0)
    model = NeuralNetwork().to("cpu")
    result = {"repr": repr(model).replace(NeuralNetwork.__name__, "NeuralNetwork")}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(0)
    X = torch.tensor(rng.random((1, PIX, PIX)), dtype=torch.float32)
    logits = model(X)
    pred_probab = nn.Softmax(dim=1)(logits)
    y_pred = pred_probab.argmax(1)
    input_image = torch.tensor(rng.random((3, PIX, PIX)), dtype=torch.float32)
    flat_image = nn.Flatten()(input_image)
    layer1 = nn.Linear(in_features=PIX * PIX, out_features=20)
    hidden1 = nn.ReLU()(layer1(flat_image))
    result.update(probab=numpy_of(pred_probab), y_pred=y_pred.item(), flat_size=tuple(flat_image.size()),
                  hidden_size=tuple(hidden1.size()), hidden_nonneg=bool((hidden1 >= 0).all()),
                  params=[(name, tuple(param.size()), numpy_of(param[:2])) for name, param in model.named_parameters()])

    torch.save(model.state_dict(), path / "model_weights.pth")
    fresh = NeuralNetwork()
    fresh.load_state_dict(torch.load(path / "model_weights.pth", weights_only=True))
    fresh.eval()
    torch.save(model, path / "model.pth")
    whole = torch.load(path / "model.pth", weights_only=False)
    result.update(fresh=numpy_of(fresh(X)), whole=numpy_of(whole(X)), whole_type=type(whole) is NeuralNetwork)

    class NetB(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(nn.Linear(PIX * PIX, 16), nn.ReLU(), nn.Linear(16, 16))
            self.head = nn.Linear(16, 3)

    netB = NetB()
    keys = netB.load_state_dict(torch.load(path / "model_weights.pth", weights_only=True), strict=False)
    result.update(missing=sorted(keys.missing_keys), unexpected=sorted(keys.unexpected_keys),
                  warm=numpy_of(netB.linear_relu_stack[2].weight))
    return result


def zeroing_and_reproducibility(torch, init=None, epochs=2):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((24, 5)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, 24))

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    result = {}
    start_from(torch, net, init, result)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    running = []
    for epoch in range(epochs):
        running_loss = 0.0
        for i in range(0, 24, 6):
            inputs, labels = x[i:i + 6], y[i:i + 6]
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        running.append(running_loss)
    optimizer.zero_grad(set_to_none=False)
    zeros = all(p.grad is not None and not p.grad.any() for p in net.parameters())
    F.cross_entropy(net(x), y).backward()
    first = numpy_of(net[0].weight.grad)
    F.cross_entropy(net(x), y).backward()
    result.update(running=running, zeros=zeros, accumulated=numpy_of(net[0].weight.grad) / first, first=first)
    optimizer.zero_grad()
    result["none_after"] = all(p.grad is None for p in net.parameters())

    def seeded_run():
        torch.manual_seed(0)
        torch.use_deterministic_algorithms(True)
        try:
            g = torch.Generator()
            g.manual_seed(0)

            def seed_worker(worker_id):
                worker_seed = torch.initial_seed() % 2 ** 32
                np.random.seed(worker_seed)

            ds = torch.utils.data.TensorDataset(x, y)
            dl = torch.utils.data.DataLoader(ds, batch_size=6, shuffle=True, worker_init_fn=seed_worker, generator=g)
            order = [yb.tolist() for _, yb in dl]
            noise = torch.randn(4)
            drop = nn.Dropout(0.5)(torch.ones(8))
        finally:
            torch.use_deterministic_algorithms(False)
        return order, noise.tolist(), drop.tolist(), torch.initial_seed(), torch.are_deterministic_algorithms_enabled()

    a, b = seeded_run(), seeded_run()
    result["own"] = {"same_twice": a[:4] == b[:4], "sorted_labels": sorted(sum(a[0], [])) == sorted(y.tolist()),
                     "seed": a[3], "det_after": a[4]}
    return result


def profiler_recipe(torch, init=None):
    nn = torch.nn
    from_profiler = torch.profiler
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    result = {}
    start_from(torch, model, init, result)
    inputs = torch.tensor(np.random.default_rng(2).standard_normal((5, 3, 16, 16)), dtype=torch.float32)
    with from_profiler.profile(activities=[from_profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        with from_profiler.record_function("model_inference"):
            out = model(inputs)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    shapes_table = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total", row_limit=10)
    with from_profiler.profile(activities=[from_profiler.ProfilerActivity.CPU], profile_memory=True,
                               record_shapes=True) as mprof:
        model(inputs)
    mem_table = mprof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=10)
    events = {e.key: e for e in prof.key_averages()}
    conv_key = next(k for k in events if "conv" in k)
    result.update(out=numpy_of(out), has_inference="model_inference" in table, lines=len(table.splitlines()) > 4,
                  has_shapes="Input Shapes" in shapes_table, has_mem="CPU Mem" in mem_table,
                  inference_count=events["model_inference"].count,
                  own={"conv_key": conv_key, "cpu_total_positive": events["model_inference"].cpu_time_total > 0})
    return result


@pytest.mark.filterwarnings("ignore:minitorch.load with weights_only=False")  # minitorch's own note
def test_build_save_load_warmstart(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    ref, got = compare_program(build_save_load, path=tmp_path / "pt", mt_options={"path": tmp_path / "mt"})
    assert got["whole_type"]
    assert got["missing"] == ["head.bias", "head.weight"] and got["unexpected"] == ["linear_relu_stack.4.bias",
                                                                                  "linear_relu_stack.4.weight"]
    assert got["repr"].startswith("NeuralNetwork(\n  (flatten): Flatten(start_dim=1, end_dim=-1)")


def test_zeroing_gradients_and_reproducibility():
    ref, got = compare_program(zeroing_and_reproducibility, rtol=1e-4, atol=1e-5)
    assert got["zeros"] and got["none_after"]
    np.testing.assert_allclose(got["accumulated"], 2, rtol=1e-5)
    assert got["own"]["same_twice"] and got["own"]["sorted_labels"] and got["own"]["seed"] == 0
    assert not got["own"]["det_after"]


def test_profiler_recipe():
    ref, got = compare_program(profiler_recipe)
    assert got["has_inference"] and got["has_shapes"] and got["has_mem"] and got["inference_count"] == 1
    assert got["own"]["cpu_total_positive"]

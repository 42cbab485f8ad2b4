"""The autograd pages as they run their examples: "Autograd mechanics" (saved tensors
y.grad_fn._saved_self / _saved_result and identity against equality, freezing a backbone by
requires_grad = False and replacing the classifier, an optimizer over model.fc.parameters();
no_grad, inference_mode and set_grad_enabled, model.eval(); in-place correctness (an in-place
change of a saved tensor raising RuntimeError with "modified by an inplace operation");
multithreaded backward from several threads; complex gradients (the conjugate Wirtinger
convention on |z|^2); hooks for saved tensors (y.grad_fn._raw_saved_self.register_hooks with
pack/unpack, saved_tensors_hooks as a context); tensor hooks, grad_fn prehooks and hooks, and
their order) and "Understanding requires_grad, retain_grad, Leaf, and Non-leaf Tensors" (x, W, b,
z = x @ W + b, y_pred = relu(z), the mse loss, the table of is_leaf/requires_grad/retains_grad
printed with f-string alignment, retain_grad on non-leaves, the gradients after backward, the
UserWarning for .grad of a non-leaf, detach and requires_grad_)."""
import threading
import warnings

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def autograd_mechanics(torch, init=None):
    nn, optim = torch.nn, torch.optim
    rng = np.random.default_rng(0)

    def randn(*shape):
        return torch.tensor(rng.standard_normal(shape), dtype=torch.float32)

    result = {}
    x = randn(5).requires_grad_()
    y = x.pow(2)
    result["saved_self"] = (x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self)
    y = x.exp()
    result["saved_result"] = (y.equal(y.grad_fn._saved_result), y is y.grad_fn._saved_result)

    # Setting requires_grad: fine-tuning a pretrained model's classifier only
    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU())
            self.fc = nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(self.features(x))

    torch.manual_seed(0)
    model = Backbone()
    new_fc = nn.Linear(8, 3)
    start_from(torch, {"model": model, "fc": new_fc}, init, result)
    for param in model.parameters():
        param.requires_grad = False
    # Replace the last fully-connected layer
    # Parameters of newly constructed modules have requires_grad=True by default
    model.fc = new_fc
    # Optimize only the classifier
    optimizer = optim.SGD(model.fc.parameters(), lr=1e-2, momentum=0.9)
    inputs, labels = randn(10, 6), torch.tensor(rng.integers(0, 3, 10))
    for _ in range(3):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(inputs), labels)
        loss.backward()
        optimizer.step()
    result["frozen"] = ([p.grad is None for p in model.features.parameters()], numpy_of(model.fc.weight),
                        loss.item())

    # Grad modes
    with torch.no_grad():
        a = model(inputs)
    with torch.inference_mode():
        b = model(inputs)
    with torch.set_grad_enabled(False):
        c = model(inputs)
    model.eval()
    d = model(inputs)
    result["modes"] = (a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, model.training)

    # In-place correctness checks
    x = randn(4).requires_grad_()
    y = x.sigmoid()
    y.mul_(2)  # sigmoid saved its result; modifying it is caught at backward
    try:
        y.sum().backward()
        result["inplace_check"] = "no error"
    except RuntimeError as e:
        result["inplace_check"] = "modified by an inplace operation" in str(e)
    result["version"] = y._version

    # Multithreaded autograd
    grads = []

    def train_fn():
        x = torch.ones(5, 5, requires_grad=True)
        # forward
        y = (x + 3) * (x + 4) * 0.5
        # backward
        y.sum().backward()
        # potential optimizer update
        grads.append(numpy_of(x.grad))

    # User write their own threading code to drive the train_fn
    threads = []
    for _ in range(4):
        p = threading.Thread(target=train_fn, args=())
        p.start()
        threads.append(p)

    for p in threads:
        p.join()
    result["threads"] = grads

    # Complex autograd: the gradient is the conjugate Wirtinger derivative
    z = torch.tensor(rng.standard_normal(3) + 1j * rng.standard_normal(3), dtype=torch.complex64, requires_grad=True)
    (z.abs() ** 2).sum().backward()
    result["complex"] = numpy_of(z.grad)

    # Hooks for saved tensors
    x = randn(5).requires_grad_()
    y = x.pow(2)
    seen = []

    def pack_hook(t):
        seen.append("pack")
        return t.detach().clone()

    def unpack_hook(t):
        seen.append("unpack")
        return t

    y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
    y.sum().backward()
    result["raw_saved"] = (seen, numpy_of(x.grad))

    saved = []

    def pack(t):
        saved.append(tuple(t.shape))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        w = randn(3, 4).requires_grad_()
        out = (w * w.sin()).sum()
    out.backward()
    result["ctx_saved"] = (sorted(saved), numpy_of(w.grad))

    # Backward hooks: tensor hooks, grad_fn prehooks and hooks
    order = []
    t = randn(3).requires_grad_()
    u = t * 2
    v = u.exp()
    u.register_hook(lambda g: order.append(("tensor hook u", numpy_of(g).round(4).tolist())))
    v.grad_fn.register_prehook(lambda gout: order.append(("prehook exp", len(gout))))
    v.grad_fn.register_hook(lambda gin, gout: order.append(("hook exp", len(gin), len(gout))))
    t.register_hook(lambda g: g * 10)
    v.sum().backward()
    result["hooks"] = (order, numpy_of(t.grad))
    return result


def leaf_nonleaf(torch, init=None):
    F = torch.nn.functional
    result = {}
    x = torch.ones((1, 3))
    W = torch.ones((3, 2), requires_grad=True)
    b = torch.ones((1, 2), requires_grad=True)
    y = torch.ones((1, 2))

    z = (x @ W) + b
    y_pred = F.relu(z)
    loss = F.mse_loss(y_pred, y)

    tensors = [x, W, b, z, y_pred, loss]
    names = ["x", "W", "b", "z", "y_pred", "loss"]

    def table():
        lines = [f"{'Tensor':<7}|{'is_leaf':>9}|{'requires_grad':>15}|{'retains_grad':>14}"]
        for t, n in zip(tensors, names):
            lines.append(f"{n:<7}|{str(t.is_leaf):>9}|{str(t.requires_grad):>15}|{str(t.retains_grad):>14}")
        return lines

    result["before"] = table()
    z.retain_grad()
    y_pred.retain_grad()
    loss.retain_grad()
    result["after_retain"] = table()
    loss.backward()
    result["grads"] = [numpy_of(t.grad) if t.grad is not None else "None" for t in (W, b, z, y_pred, loss)]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        z2 = x @ W
        z2.sum().backward()
        missing = z2.grad
    result["nonleaf_warning"] = (missing is None, any("non-leaf Tensor" in str(w.message) for w in caught))
    d = W.detach()
    result["detach"] = (d.is_leaf, d.requires_grad, d.requires_grad_().is_leaf)
    try:
        z.requires_grad_(False)
        result["nonleaf_off"] = "ran"
    except RuntimeError as e:
        result["nonleaf_off"] = str(e).split("\n")[0]
    return result


def test_autograd_mechanics():
    compare_program(autograd_mechanics)


def test_leaf_and_non_leaf_tensors():
    compare_program(leaf_nonleaf)

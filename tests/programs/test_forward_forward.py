"""Hinton's forward-forward training as in the PyTorch examples' mnist_forward_forward: the label
written into the first pixels of each input (x_[range(n), y] = x.max()), negative data from wrong
labels, layers trained one at a time on a softplus of goodness (the mean square of a ReLU layer on
length-normalised inputs) against a threshold, each with its own Adam; prediction by the label with
the most goodness. Data, labels and the wrong labels come from NumPy."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

PIXELS, CLASSES = 30, 5


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, CLASSES, n)
    centres = rng.standard_normal((CLASSES, PIXELS))
    x = centres[y] + 0.3 * rng.standard_normal((n, PIXELS))
    wrong = (y + rng.integers(1, CLASSES, n)) % CLASSES
    return x.astype(np.float32), y, wrong


def forward_forward(torch, init=None, epochs=40, threshold=2.0):
    nn = torch.nn

    def overlay_y_on_x(x, y):
        x_ = x.clone()
        x_[:, :CLASSES] *= 0.0
        x_[range(x.shape[0]), y] = x.max()
        return x_

    class Layer(nn.Linear):
        def __init__(self, in_features, out_features):
            super().__init__(in_features, out_features)
            self.relu = torch.nn.ReLU()

        def forward(self, x):
            x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
            return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

        def train_layer(self, x_pos, x_neg, losses):
            opt = torch.optim.Adam(self.parameters(), lr=0.03)
            for _ in range(epochs):
                g_pos = self.forward(x_pos).pow(2).mean(1)
                g_neg = self.forward(x_neg).pow(2).mean(1)
                loss = torch.log1p(torch.exp(torch.cat([-g_pos + threshold, g_neg - threshold]))).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            return self.forward(x_pos).detach(), self.forward(x_neg).detach()

    torch.manual_seed(0)
    model = nn.Sequential(Layer(PIXELS, 24), Layer(24, 24))
    result = {}
    start_from(torch, model, init, result)
    x_np, y_np, wrong_np = make_data(120, seed=0)
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
    h_pos, h_neg = overlay_y_on_x(x, y), overlay_y_on_x(x, torch.from_numpy(wrong_np))
    losses = []
    for layer in model:
        h_pos, h_neg = layer.train_layer(h_pos, h_neg, losses)

    def predict(x):
        goodness_per_label = []
        for label in range(CLASSES):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in model:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        return torch.cat(goodness_per_label, 1)

    x_test, y_test, _ = make_data(60, seed=1)
    with torch.no_grad():
        goodness = predict(torch.from_numpy(x_test))
    result.update(losses=losses, goodness=numpy_of(goodness), predicted=numpy_of(goodness.argmax(1)),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    result["error"] = float((result["predicted"] != y_test).mean())
    return result


def test_forward_forward_training():
    # Adam on near-zero gradients magnifies float32 rounding: a looser tolerance than the default.
    ref, got = compare_program(forward_forward, rtol=2e-3, atol=2e-4)
    losses = np.array(ref["losses"]).reshape(2, -1)  # each layer's own training
    assert (losses[:, -1] < 0.7 * losses[:, 0]).all()

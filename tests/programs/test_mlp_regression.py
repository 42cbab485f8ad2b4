"""An MLP fits a noisy sine with SGD (momentum, Nesterov, weight decay) and a StepLR schedule,
full batch, the first script of many tutorials."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def mlp_regression(torch, init=None, steps=30):
    nn = torch.nn
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, size=(64, 1)).astype(np.float32)
    y = (np.sin(x) + 0.1 * rng.standard_normal(x.shape)).astype(np.float32)
    x, y = torch.from_numpy(x), torch.from_numpy(y)

    model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    loss_fn = nn.MSELoss()

    losses, lrs = [], []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        lrs.append(scheduler.get_last_lr()[0])

    model.eval()
    with torch.no_grad():
        grid = torch.linspace(-3, 3, 7).unsqueeze(1)
        prediction = model(grid)
    result.update(losses=losses, lrs=lrs, prediction=numpy_of(prediction),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_mlp_regression_sgd_momentum_steplr():
    ref, got = compare_program(mlp_regression)
    assert ref["losses"][-1] < 0.5 * ref["losses"][0]  # the program does learn
    np.testing.assert_allclose(got["lrs"][-1], 0.05 * 0.5 ** 3)

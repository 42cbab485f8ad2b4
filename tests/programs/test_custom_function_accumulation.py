"""A binary classifier with a custom autograd.Function (a straight-through sign, as in binarised
networks), BCEWithLogitsLoss with pos_weight for the rare class, gradients accumulated over four
micro-batches before each step, Adam and CosineAnnealingLR."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def straight_through_sign(torch):
    class SignSTE(torch.autograd.Function):
        """sign(x) forward; the gradient passes where |x| <= 1 (hard tanh's), zero elsewhere."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sign(x)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * (x.abs() <= 1).to(grad_output.dtype)

    return SignSTE.apply


def binarised_classifier(torch, init=None, steps=8, accumulate=4, micro=16):
    nn = torch.nn
    torch.manual_seed(0)
    sign = straight_through_sign(torch)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(12, 32)
            self.fc2 = nn.Linear(32, 1)

        def forward(self, x):
            return self.fc2(sign(self.fc1(x))).squeeze(-1)

    model = Net()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps, eta_min=1e-4)
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([4.0]))
    rng = np.random.default_rng(0)
    w = rng.standard_normal(12)
    losses, lrs = [], []
    for _ in range(steps):
        optimizer.zero_grad()
        total = 0.0
        for _ in range(accumulate):
            x = rng.standard_normal((micro, 12)).astype(np.float32)
            y = (x @ w > 1.2).astype(np.float32)  # about one in five positive
            loss = criterion(model(torch.from_numpy(x)), torch.from_numpy(y)) / accumulate
            loss.backward()
            total += loss.item()
        optimizer.step()
        scheduler.step()
        losses.append(total)
        lrs.append(optimizer.param_groups[0]["lr"])
    result.update(losses=losses, lrs=lrs, params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_custom_function_bce_pos_weight_accumulation_cosine():
    ref, got = compare_program(binarised_classifier)
    assert got["lrs"][-1] == ref["lrs"][-1] and abs(got["lrs"][-1] - 1e-4) < 1e-12

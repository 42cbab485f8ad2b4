"""pytorch/examples' regression/main.py as published: a degree-4 polynomial with W_target =
torch.randn(POLY_DEGREE, 1) * 5, features by torch.cat([x ** i for i in ...], 1) of x.unsqueeze(1),
f(x) = x.mm(W_target) + b_target.item(), a torch.nn.Linear fitted with F.smooth_l1_loss by
fc.zero_grad() and param.data.add_(-0.1 * param.grad) over batches from itertools.count(1) until
the loss is under 1e-3, then poly_desc formatting 0-d tensors with '{:+.2f}'.format(w). The data
are the script's own torch.randn draws from a shared seed (both libraries draw PyTorch's CPU
stream). The stopping batch depends on where a noisy loss first dips under 1e-3: float32 rounding
(minitorch sums in another order) moves it after a few hundred batches, so the first 200 losses
are compared number by number and the end of the run by what it must reach."""
import re
from itertools import count

import numpy as np

from prog_helpers import (ATOL, RTOL, assert_same_results, captured_run, compare_program, numpy_of,
                          printed_lines, run_both)


def regression_main(torch, init=None, seed=0, compared=200):
    F = torch.nn.functional
    losses = []
    with captured_run(torch, seed=seed) as out:
        POLY_DEGREE = 4
        W_target = torch.randn(POLY_DEGREE, 1) * 5
        b_target = torch.randn(1) * 5

        def make_features(x):
            """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
            x = x.unsqueeze(1)
            return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)

        def f(x):
            """Approximated function."""
            return x.mm(W_target) + b_target.item()

        def poly_desc(W, b):
            """Creates a string description of a polynomial."""
            result = 'y = '
            for i, w in enumerate(W):
                result += '{:+.2f} x^{} '.format(w, i + 1)
            result += '{:+.2f}'.format(b[0])
            return result

        def get_batch(batch_size=32):
            """Builds a batch i.e. (x, f(x)) pair."""
            random = torch.randn(batch_size)
            x = make_features(random)
            y = f(x)
            return x, y

        fc = torch.nn.Linear(W_target.size(0), 1)
        for batch_idx in count(1):
            batch_x, batch_y = get_batch()
            fc.zero_grad()
            output = F.smooth_l1_loss(fc(batch_x), batch_y)
            loss = output.item()
            losses.append(loss)
            output.backward()
            for param in fc.parameters():
                param.data.add_(-0.1 * param.grad)
            if loss < 1e-3:
                break
        print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
        print('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
        print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
    printed = printed_lines(out)
    res = {"losses": losses[:compared], "target": [numpy_of(W_target), numpy_of(b_target)], "actual": printed[2],
           "own": {"printed": printed, "learned": numpy_of(fc.weight), "batches": batch_idx}}
    if compared is None:
        res["printed"] = printed
    return res


POLY = re.compile(r"y = " + " ".join([r"([-+]\d+\.\d\d) x\^%d" % i for i in range(1, 5)]) + r" ([-+]\d+\.\d\d)$")


def coefficients(line):
    m = POLY.search(line)
    assert m, line
    return [float(c) for c in m.groups()]


def test_regression_example():
    ref, got = compare_program(regression_main)
    for run in (ref, got):
        printed = run["own"]["printed"]
        m = re.fullmatch(r"Loss: (\d\.\d{6}) after (\d+) batches", printed[0])
        assert m and float(m[1]) < 1e-3 and int(m[2]) == run["own"]["batches"] > 200
        learned, actual = coefficients(printed[1]), coefficients(printed[2])
        assert max(abs(a - b) for a, b in zip(learned, actual)) < 0.3, printed
    # the actual polynomial is printed from the targets' 0-d tensors: '{:+.2f}'.format(tensor)
    assert coefficients(got["actual"]) == [round(float(v), 2) for v in [*got["target"][0].ravel(), got["target"][1][0]]]


def test_regression_example_whole_log_from_a_seed_that_stops_at_the_same_batch():
    """Seed 1's run stops at the same batch under both libraries: the whole log is compared, the
    first 200 losses as closely as everywhere, the rest within 1e-2: float32 rounding differences
    compound over the steps (the x^4 features reach ~100), and how far they get by step ~280
    depends on the BLAS build and the kernels it picks for the CPU (scipy-openblas32 0.3.34 moved
    step 283 by 2.6e-4 relative; on an AVX-512 FP16 machine steps 220-256 differ by up to 4e-3)."""
    ref, got = run_both(regression_main, seed=1, compared=None)
    assert len(got["losses"]) == got["own"]["batches"] == len(ref["losses"]) > 200
    head = {**got, "losses": got["losses"][:200]}
    assert_same_results(head, {**ref, "losses": ref["losses"][:200]}, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got["losses"][200:], ref["losses"][200:], rtol=1e-2, atol=ATOL)

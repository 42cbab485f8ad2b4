"""ctc_loss and CTCLoss against PyTorch: losses and gradients of log_probs (leaf, or through
log_softmax) for padded and concatenated targets, per-sample input and target lengths, each
reduction, a nonzero blank, empty targets, impossible alignments with and without zero_infinity,
unbatched input; errors with PyTorch's messages."""
import numpy as np
import pytest

import minitorch
from minitorch import nn
from helpers import check_grad, same_as_torch, same_error

rng = np.random.default_rng(0)

LOG_PROBS = np.log(rng.dirichlet(np.ones(5), (7, 3)))  # (T, N, C) float64
PADDED = np.array([[1, 2, 2], [3, 1, 4], [4, 4, 1]])
INPUT_LENGTHS = np.array([7, 5, 6])
TARGET_LENGTHS = np.array([3, 2, 0])


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_ctc_loss_matches_torch(reduction, layout):
    same_as_torch(lambda lib, x, y, il, tl: F(lib).ctc_loss(x, y, il, tl, reduction=reduction),
                  [LOG_PROBS, PADDED, INPUT_LENGTHS, TARGET_LENGTHS], layout=layout, atol=1e-10)
    same_as_torch(lambda lib, x, y, il, tl: F(lib).ctc_loss(x.log_softmax(2), y, il, tl, reduction=reduction),
                  [LOG_PROBS.astype(np.float32), PADDED, INPUT_LENGTHS, TARGET_LENGTHS], layout=layout, atol=1e-5)


def test_ctc_loss_concatenated_targets_blank_tuples_unbatched_and_module():
    flat = np.array([1, 2, 2, 3, 1])
    same_as_torch(lambda lib, x, y, il, tl: F(lib).ctc_loss(x, y, il, tl), [LOG_PROBS, flat, INPUT_LENGTHS,
                                                                           TARGET_LENGTHS], atol=1e-10)
    no_zero = PADDED  # y - 1: labels 0..3, and blank the last class (no label may be the blank)
    same_as_torch(lambda lib, x, y: F(lib).ctc_loss(x, y - 1, (7, 5, 6), (3, 2, 1), blank=4), [LOG_PROBS, no_zero],
                  atol=1e-10)
    same_as_torch(lambda lib, x, y: F(lib).ctc_loss(x[:, 0], y[0], (7,), (3,)), [LOG_PROBS, PADDED], atol=1e-10)
    same_as_torch(lambda lib, x, y, il, tl: lib.nn.CTCLoss(reduction="sum")(x, y, il, tl),
                  [LOG_PROBS, PADDED, INPUT_LENGTHS, TARGET_LENGTHS], atol=1e-10)
    check_grad(lambda m, x: F(m).ctc_loss(x.log_softmax(2), m.tensor(PADDED), m.tensor(INPUT_LENGTHS),
                                          m.tensor(TARGET_LENGTHS)), [LOG_PROBS])


def test_ctc_loss_impossible_alignments():
    il = np.array([2, 2, 2])  # too short for the first target (1, 2, 2: four steps at least)
    same_as_torch(lambda lib, x, y, il, tl: F(lib).ctc_loss(x, y, il, tl, reduction="none", zero_infinity=True),
                  [LOG_PROBS, PADDED, il, TARGET_LENGTHS], atol=1e-10)
    out = F(minitorch).ctc_loss(minitorch.tensor(LOG_PROBS), minitorch.tensor(PADDED), minitorch.tensor(il),
                                minitorch.tensor(TARGET_LENGTHS), reduction="none")
    assert np.isinf(out.numpy()[0]) and np.isfinite(out.numpy()[1:]).all()
    assert repr(nn.CTCLoss()) == "CTCLoss()"


@pytest.mark.parametrize("call", [
    lambda lib, x, y, il, tl: F(lib).ctc_loss(x, y, il, tl + 2),
    lambda lib, x, y, il, tl: F(lib).ctc_loss(x, y, il + 1, tl),
    lambda lib, x, y, il, tl: F(lib).ctc_loss(x, y, il[:1], tl),
    lambda lib, x, y, il, tl: F(lib).ctc_loss(x, y, il, tl[:2]),
    lambda lib, x, y, il, tl: F(lib).ctc_loss(x, y, il, tl, blank=5),
    lambda lib, x, y, il, tl: F(lib).ctc_loss(x, y, il, tl, reduction="x"),
])
def test_ctc_loss_errors(call):
    same_error(call, LOG_PROBS, PADDED, INPUT_LENGTHS, TARGET_LENGTHS)

"""torch.nn.functional.ctc_loss (Graves et al.'s connectionist temporal classification), as a
composite: the forward (alpha) recursion over the time steps in log space, vectorised over the
batch and the extended label sequence (blank, l1, blank, l2, ..., blank), so that autograd
gives the gradient, for every device.

Unreachable states hold a large negative finite number rather than -inf (so that a logsumexp of
only unreachable states has a finite gradient, 0, where -inf gives NaN); a loss beyond it is an
impossible alignment, inf, or 0 with zero_infinity. PyTorch's ctc_loss returns as the gradient
of log_probs exp(log_probs) - (each class's share of the alignments), the gradient through a
log_softmax that produced them; the loss here adds a term of value 0 with gradient exp(log_probs)
over each sample's time steps, so the gradients are PyTorch's (for targets without the blank
class, which PyTorch's documentation rules out; an impossible alignment's gradient is finite
here, NaN in PyTorch, unless zero_infinity)."""
from __future__ import annotations

import minitorch as _minitorch
from minitorch import Tensor
from minitorch._checks import _tensors

__all__ = ["ctc_loss"]

_UNREACHABLE = -1e30  # the log-probability of a state no alignment reaches (see above)


def _lengths(value, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value.to(device=like.device, dtype=_minitorch.int64).reshape(-1)
    return _minitorch.tensor(list(value) if hasattr(value, "__len__") else [value], dtype=_minitorch.int64,
                             device=like.device)


def _padded_targets(targets: Tensor, target_lengths: Tensor, n: int, smax: int) -> Tensor:
    """targets as (N, smax): padded ones cut, concatenated ones (sum of target_lengths) split."""
    if targets.dim() == 2:
        return targets[:, :smax].to(_minitorch.int64)
    starts = target_lengths.cumsum(0) - target_lengths
    pos = starts.unsqueeze(1) + _minitorch.arange(smax, device=targets.device)
    limit = max(targets.numel() - 1, 0)
    return targets.to(_minitorch.int64).reshape(-1)[pos.clamp_max(limit)] if targets.numel() else \
        _minitorch.zeros(n, smax, dtype=_minitorch.int64, device=targets.device)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """log_probs (T, N, C) or (T, C), targets (N, S) padded or (sum of target_lengths)
    concatenated, input_lengths and target_lengths (N): -log p(target | input) per sample, 'mean'
    the mean of the losses each divided by its target length, or 'sum' or 'none'."""
    _tensors("ctc_loss", log_probs=log_probs, targets=targets)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = targets if batched or targets.dim() != 1 else targets.unsqueeze(0)
    t_len, n, classes = lp.shape
    il, tl = _lengths(input_lengths, lp), _lengths(target_lengths, lp)
    if il.numel() != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.numel() != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    smax = int(tl.max()) if n else 0
    if tg.dim() == 2 and tg.shape[1] < smax:
        raise RuntimeError(f"Expected tensor to have size at least {smax} at dimension 1, but got size "
                           f"{tg.shape[1]} for argument #2 'targets' (while checking arguments for "
                           "ctc_loss_allocate_outputs)")
    if n and int(il.max()) > t_len:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_len}, but got value {int(il.max())} "
                           "(while checking arguments for ctc_loss_allocate_outputs)")
    dev = lp.device
    labels = _padded_targets(tg, tl, n, smax)
    # the extended sequences (N, L): blank at even positions, the labels at odd ones
    length = 2 * smax + 1
    ext = _minitorch.full((n, length), blank, dtype=_minitorch.int64, device=dev)
    if smax:
        ext[:, 1::2] = labels
    s = _minitorch.arange(length, device=dev)
    inside = s < (2 * tl + 1).unsqueeze(1)
    before = _minitorch.cat([ext.new_full((n, 2), -1), ext[:, :-2]], 1)
    skip = (s >= 2) & (ext != before)  # a label may follow the one before it unless equal
    emit = lp.gather(2, ext.unsqueeze(0).expand(t_len, n, length))  # (T, N, L)
    far = _minitorch.full((n, length), _UNREACHABLE, dtype=lp.dtype, device=dev)
    alpha = far.clone()
    if t_len:
        alpha = _minitorch.where((s < 2) & inside, emit[0], far)
    for t in range(1, t_len):
        one = _minitorch.cat([far[:, :1], alpha[:, :-1]], 1)
        two = _minitorch.where(skip, _minitorch.cat([far[:, :2], alpha[:, :-2]], 1), far)
        step = _minitorch.stack([alpha, one, two]).logsumexp(0) + emit[t]
        alpha = _minitorch.where(inside & (t < il).unsqueeze(1), step, alpha)
    last = (2 * tl).unsqueeze(1)
    ends = _minitorch.cat([alpha.gather(1, last),
                           _minitorch.where(tl.unsqueeze(1) > 0, alpha.gather(1, (last - 1).clamp_min(0)),
                                            far[:, :1])], 1)
    loss = -ends.logsumexp(1)
    # PyTorch's gradient adds exp(log_probs) over each sample's time steps (a term of value 0)
    steps = (_minitorch.arange(t_len, device=dev).unsqueeze(1) < il).unsqueeze(2)
    e = lp.exp() * steps
    loss = loss + (e - e.detach()).sum((0, 2))
    impossible = loss > -_UNREACHABLE / 2
    if zero_infinity:
        loss = _minitorch.where(impossible, _minitorch.zeros_like(loss), loss)
    else:
        loss = _minitorch.where(impossible, _minitorch.full_like(loss, float("inf")), loss)
    if not batched:
        loss = loss.reshape(())
    if reduction == "mean":
        return (loss / tl.clamp_min(1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}  # PyTorch's at::Reduction numbers


def ctc_loss_op(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
                reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """torch.ctc_loss, the op under F.ctc_loss: reduction is PyTorch's number (0 none, 1 mean,
    2 sum; another number leaves the losses unreduced, as PyTorch's does). Without reduction
    PyTorch 2.13's binding returns the unreduced losses, and so does this."""
    if not isinstance(reduction, int) or isinstance(reduction, bool):
        raise TypeError(f"ctc_loss(): argument 'reduction' (position 6) must be int, not {type(reduction).__name__}")
    return ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _REDUCTIONS.get(reduction, "none"),
                    zero_infinity)


ctc_loss_op.__name__ = ctc_loss_op.__qualname__ = "ctc_loss"

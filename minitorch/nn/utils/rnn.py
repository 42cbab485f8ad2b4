"""Variable-length sequences for the recurrent layers, as torch.nn.utils.rnn: pad_sequence, and the
PackedSequence that pack_padded_sequence / pack_sequence build and pad_packed_sequence undoes.

A PackedSequence holds the time steps one after another, each with only the sequences still running
(batch_sizes[t] rows, longest sequences first); sorted_indices / unsorted_indices record the order
when the batch was not sorted by length. Written over existing ops (F.pad, cat, stack, index_select).
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, List, Optional, Sequence, Union

import minitorch
from minitorch import Tensor
from minitorch.nn import functional as F

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
    "unpad_sequence", "pack_sequence", "unpack_sequence",
]

_PackedSequenceBase = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """(data, batch_sizes, sorted_indices, unsorted_indices); build it with pack_padded_sequence or
    pack_sequence."""

    def __new__(cls, data: Any, batch_sizes: Optional[Tensor] = None, sorted_indices: Optional[Tensor] = None,
                unsorted_indices: Optional[Tensor] = None) -> "PackedSequence":
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        idx = [None if t is None else t.to(data.device) for t in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *idx)

    def cuda(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self.to("cuda")

    def cpu(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self.to("cpu")

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation: Optional[Tensor]) -> Optional[Tensor]:
    """The inverse of a permutation of 0..n-1 (None stays None)."""
    if permutation is None:
        return None
    return minitorch.argsort(permutation)


def _pad_dim0(t: Tensor, size: int, value: float, left: bool = False) -> Tensor:
    """t (L, *) padded with value to (size, *) along dim 0."""
    extra = size - t.size(0)
    if extra == 0:
        return t
    return F.pad(t, [0, 0] * (t.dim() - 1) + ([extra, 0] if left else [0, extra]), value=value)


def pad_sequence(sequences: Union[Tensor, List[Tensor]], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stacks sequences (L_i, *) into (T, B, *) (or (B, T, *)), padding each to the longest."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.size(0) for s in sequences)
    padded = [_pad_dim0(s, longest, padding_value, padding_side == "left") for s in sequences]
    return minitorch.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> List[Tensor]:
    """The list of sequences pad_sequence stacked, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences.unbind(0), lengths.tolist())]


def pack_padded_sequence(input: Tensor, lengths: Union[Tensor, Sequence[int]], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Packs a padded batch (T, B, *) (or (B, T, *)) of sequences of the given lengths."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=minitorch.int64, device="cpu")
    else:
        lengths = minitorch.tensor(list(lengths), dtype=minitorch.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = minitorch.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    sizes = [int(n) for n in lengths.tolist()]
    if sizes and sizes[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(a < b for a, b in zip(sizes, sizes[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
            "you do not need ONNX exportability."
        )
    if batch_first:
        input = input.transpose(0, 1)
    batch_sizes = [sum(1 for n in sizes if n > t) for t in range(sizes[0])]
    data = minitorch.cat([input[t, :b] for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, minitorch.tensor(batch_sizes, dtype=minitorch.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: Optional[int] = None) -> tuple:
    """(padded (T, B, *) or (B, T, *), lengths): the inverse of pack_padded_sequence."""
    sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    max_seq_length = len(sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    steps = [_pad_dim0(s, sizes[0], padding_value) for s in sequence.data.split(sizes, 0)]
    padded = minitorch.stack(steps, 0)
    padded = _pad_dim0(padded, max_seq_length, padding_value)
    lengths = minitorch.tensor([sum(1 for b in sizes if b > i) for i in range(sizes[0])], dtype=minitorch.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pack_sequence(sequences: List[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of sequences (L_i, *)."""
    lengths = minitorch.tensor([s.size(0) for s in sequences], dtype=minitorch.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> List[Tensor]:
    """The list of sequences a PackedSequence holds."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

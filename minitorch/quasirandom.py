"""torch.quasirandom: SobolEngine, the Sobol' low-discrepancy sequence (Joe and Kuo's direction
numbers, as PyTorch's), optionally scrambled (Owen's linear matrix scrambling and a random digital
shift, PyTorch's construction).

The direction numbers of the first MAXDIM dimensions come from the compact table _sobol_table
(each dimension's primitive polynomial and initial numbers m_1..m_s) and are expanded, every
dimension at once, by the recurrence v_j = v_j-s ^ (v_j-s >> s) ^ XOR_k a_k v_j-k (in PyTorch's
integer form, before the scaling by 2^(30-j)). Point k of the sequence is the XOR of the direction
numbers selected by the bits of the Gray code k ^ (k >> 1), with the shift: this is the point that
PyTorch's draw reaches by XOR-ing one direction number per step (the one of the lowest zero bit of
the step count), so a draw of n points is a few tensor operations over (n, dimension), never a
loop over points, and unscrambled points equal PyTorch's exactly.
"""
from __future__ import annotations

from typing import Optional

from ._sobol_table import MAXDIM as _TABLE_DIMS, TABLE as _TABLE

__all__ = ["SobolEngine"]


def _mt():
    import minitorch

    return minitorch


def _parse_table(dimension: int):
    """poly (D,), degree (D,), m (D, max degree) as int64 tensors for the first D dimensions"""
    mt = _mt()
    rows = [[int(v, 16) for v in line.split()] for line in _TABLE.splitlines()[:dimension]]
    width = max(1, max(len(r) - 1 for r in rows))
    poly = mt.tensor([r[0] for r in rows], dtype=mt.int64)
    degree = mt.tensor([len(r) - 1 for r in rows], dtype=mt.int64)
    m = mt.tensor([r[1:] + [0] * (width - len(r) + 1) for r in rows], dtype=mt.int64)
    return poly, degree, m


def _direction_numbers(dimension: int, maxbit: int):
    """(dimension, maxbit) int64: column j holds each dimension's direction number v_j scaled by
    2^(maxbit-1-j); the first dimension's are all 1 before scaling (PyTorch's initial state)"""
    mt = _mt()
    poly, degree, m = _parse_table(dimension)
    state = mt.zeros(dimension, maxbit, dtype=mt.int64)
    for j in range(maxbit):
        col = m[:, j] if j < m.shape[1] else mt.zeros(dimension, dtype=mt.int64)
        # v_j = v_j-s ^ XOR_{k < s, bit s-1-k of the polynomial set} 2^(k+1) v_j-k-1 (for j >= s)
        new = state.gather(1, (j - degree).clamp(min=0).unsqueeze(1)).squeeze(1)
        for k in range(min(j, int(degree.max()))):
            use = (k < degree) & (((poly >> (degree - 1 - k).clamp(min=0)) & 1) == 1)
            new = new ^ mt.where(use, state[:, j - k - 1] << (k + 1), 0)
        state[:, j] = mt.where(j < degree, col, new)
    state[0] = 1
    return state * (1 << (maxbit - 1 - mt.arange(maxbit, dtype=mt.int64)))


class SobolEngine:
    """The Sobol' sequence in [0, 1)^dimension. draw(n) returns the next n points (n, dimension),
    draw_base2(m) the next 2^m (keeping the total a power of 2), fast_forward(n) skips n, reset()
    starts over. With scramble=True the points are randomized (seeded by seed) but keep the
    sequence's balance: every 2^m consecutive points from the start still fill each elementary
    interval once."""

    MAXBIT = 30
    MAXDIM = _TABLE_DIMS

    def __init__(self, dimension: int, scramble: bool = False, seed: Optional[int] = None) -> None:
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]")
        mt = _mt()
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self.sobolstate = _direction_numbers(dimension, self.MAXBIT)
        if not self.scramble:
            self.shift = mt.zeros(self.dimension, dtype=mt.int64)
        else:
            self._scramble()
        self.quasi = self.shift.clone(memory_format=mt.contiguous_format)
        # in the default dtype, then converted by draw, as PyTorch's first point
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _points(self, start: int, n: int, dtype):
        """points start .. start+n-1 of the sequence, (n, dimension) in dtype, and the last one's
        integer form"""
        mt = _mt()
        if n <= 0:
            return mt.empty(0, self.dimension, dtype=dtype), self.quasi
        k = mt.arange(start, start + n, dtype=mt.int64)
        gray = k ^ (k >> 1)
        q = self.shift.expand(n, self.dimension).clone()
        for b in range(min(self.MAXBIT, max(start + n, 1).bit_length())):
            q = q ^ (((gray >> b) & 1).unsqueeze(1) * self.sobolstate[:, b])
        return (q.to(mt.float64) / 2.0 ** self.MAXBIT).to(dtype), q[-1].clone()

    def draw(self, n: int = 1, out=None, dtype=None):
        """The next n points of the sequence, (n, dimension), in dtype (the default dtype)."""
        mt = _mt()
        if dtype is None:
            dtype = mt.get_default_dtype()
        if self.num_generated == 0:
            first = self._first_point.to(dtype)
            if n == 1:
                result = first
            else:
                rest, self.quasi = self._points(1, n - 1, dtype)
                result = mt.cat((first, rest), dim=-2)
        else:
            result, self.quasi = self._points(self.num_generated, n, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out=None, dtype=None):
        """The next 2^m points; the total drawn must stay a power of 2 (the sequence's balance)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require n to be a power of 2. "
                             f"{self.num_generated} points have been previously generated, then: "
                             f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> "SobolEngine":
        """Back to the first point."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> "SobolEngine":
        """Skips the next n points."""
        total = self.num_generated + n
        if total > 0:
            _, self.quasi = self._points(total - 1, 1, _mt().float64)
        self.num_generated = total
        return self

    def _scramble(self) -> None:
        """A random digital shift and, per dimension, a random lower-triangular binary matrix
        (unit diagonal) applied to every direction number over GF(2), PyTorch's construction."""
        mt = _mt()
        g = None
        if self.seed is not None:
            g = mt.Generator()
            g.manual_seed(self.seed)
        bits = self.MAXBIT
        shift_ints = mt.randint(2, (self.dimension, bits), generator=g)
        self.shift = (shift_ints * (1 << mt.arange(bits, dtype=mt.int64))).sum(1)
        ltm = mt.randint(2, (self.dimension, bits, bits), generator=g).tril()
        ltm.diagonal(0, -2, -1).fill_(1)
        # row p of the matrix acts as the integer whose bit k is column bits-1-k: L[d, p, k]
        lbits = ltm.flip(-1).to(mt.float64)
        vbits = ((self.sobolstate.unsqueeze(-1) >> mt.arange(bits, dtype=mt.int64)) & 1).to(mt.float64)
        parity = (vbits @ lbits.transpose(-2, -1)).to(mt.int64) % 2  # (D, j, p)
        weights = 1 << (bits - 1 - mt.arange(bits, dtype=mt.int64))
        self.sobolstate = (parity * weights).sum(-1)

    def __repr__(self) -> str:
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt += ["scramble=True"]
        if self.seed is not None:
            fmt += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt) + ")"

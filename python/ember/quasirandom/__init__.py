"""Quasi-random sequences: the Sobol engine (torch.quasirandom.SobolEngine).

Note [Sobol direction numbers]
Dimension d's direction numbers come from Joe and Kuo's table (new-joe-kuo-6.21201: a primitive
polynomial and up to 18 initial values per dimension, joe_kuo_21201.npz beside this file): the first
values are the table's, the rest follow the polynomial's recurrence
m_j = m_{j-s} ^ (m_{j-s} << s) ^ XOR_k a_k (m_{j-k} << k), and each m_j is stored shifted to the top of
MAXBIT bits. Points follow the Gray-code order (each point flips the direction number of the lowest
zero bit of its index), so the sequence is PyTorch's. Scrambling draws PyTorch's random shift and
lower-triangular matrices from a generator seeded as PyTorch seeds it, so scrambled points match too.
"""

from __future__ import annotations

import functools
import os

import ember

__all__ = ["SobolEngine"]

_TABLE = None
# Points are computed in blocks of 2^_BLOCK_BITS consecutive indices (SobolEngine._advance).
_BLOCK_BITS = 10


def _table():
    import numpy as np

    global _TABLE
    if _TABLE is None:
        with np.load(os.path.join(os.path.dirname(__file__), "joe_kuo_21201.npz")) as data:
            _TABLE = (data["poly"].astype(np.int64), data["vinit"].astype(np.int64))
    return _TABLE


@functools.lru_cache(maxsize=4)
def _direction_numbers(dimension, maxbit):
    """(dimension, maxbit) int64 direction numbers, unscrambled (Note [Sobol direction numbers]), read-only
    (the few dimensions used last are kept).
    The recurrence runs for every dimension at once, one column j per step."""
    import numpy as np

    poly, vinit = _table()
    poly = poly[:dimension]
    degree = np.zeros(dimension, dtype=np.int64)
    degree[1:] = np.floor(np.log2(poly[1:])).astype(np.int64)  # exact: poly < 2**20
    # the polynomial's inner coefficients a_k, k = 1 .. degree - 1
    top = int(degree.max(initial=0))
    coefficient = [(k < degree) & (((poly >> np.maximum(degree - k, 0)) & 1) == 1) for k in range(top)]
    rows = np.arange(dimension)
    m = np.zeros((dimension, maxbit), dtype=np.int64)
    m[:, 0] = vinit[:dimension, 0]
    for j in range(1, maxbit):
        back = m[rows, np.maximum(j - degree, 0)]
        new = back ^ (back << degree)
        for k in range(1, min(top, j + 1)):
            new ^= np.where(coefficient[k], m[:, j - k] << k, 0)
        initial = vinit[:dimension, j] if j < vinit.shape[1] else 0
        m[:, j] = np.where(j < degree, initial, new)
    m[0, :] = 1
    m <<= maxbit - 1 - np.arange(maxbit)
    m.setflags(write=False)
    return m


def _parity(x):
    """1 where x (non-negative, below 2**32) has an odd number of set bits."""
    for shift in (16, 8, 4, 2, 1):
        x = x ^ (x >> shift)
    return x & 1


def _scrambled(v, ltm, maxbit):
    """v multiplied over GF(2) by the lower-triangular bit matrices ltm (unit diagonal), per dimension."""
    import numpy as np

    ltm = ltm.copy()
    idx = np.arange(maxbit)
    ltm[:, idx, idx] = 1
    rows = (ltm << (maxbit - 1 - idx)).sum(-1)  # row p of each matrix as a maxbit-bit integer
    # bit p of out[:, j] is the parity of row p AND v[:, j]
    parity = _parity(rows[:, :, None] & v[:, None, :])
    return (parity << (maxbit - 1 - idx)[None, :, None]).sum(1)


class SobolEngine:
    """SobolEngine(dimension, scramble=False, seed=None): draws points of a Sobol sequence in [0, 1)^dimension,
    optionally scrambled (Owen's linear matrix scramble with a digital shift)."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        import numpy as np

        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self._v = _direction_numbers(dimension, self.MAXBIT)
        self._low = None
        self._shift = np.zeros(dimension, dtype=np.int64)
        if self.scramble:
            self._scramble()
        self._quasi = self._shift.copy()
        self.num_generated = 0

    @property
    def sobolstate(self):
        return ember.from_numpy(self._v.copy())

    @property
    def shift(self):
        return ember.from_numpy(self._shift.copy())

    @property
    def quasi(self):
        return ember.from_numpy(self._quasi.copy())

    @property
    def _first_point(self):
        # an integer tensor divided by a number: the default dtype, as PyTorch computes it
        return (ember.from_numpy(self._shift.copy()) / 2**self.MAXBIT).reshape(1, -1)

    def _scramble(self):
        import numpy as np

        g = ember.Generator()
        if self.seed is not None:
            g.manual_seed(self.seed)
        else:
            g.seed()
        shift_bits = ember.randint(2, (self.dimension, self.MAXBIT), generator=g).numpy()
        self._shift = shift_bits @ (2 ** np.arange(self.MAXBIT, dtype=np.int64))
        ltm = np.tril(ember.randint(2, (self.dimension, self.MAXBIT, self.MAXBIT), generator=g).numpy())
        self._v = _scrambled(self._v, ltm, self.MAXBIT)

    def _low_points(self):
        """(2^_BLOCK_BITS, dimension): the unshifted points of the indices below 2^_BLOCK_BITS, in order.
        The Gray codes of [2^b, 2^(b+1)) are those of [0, 2^b) reversed with bit b set, so the table
        doubles one bit at a time."""
        import numpy as np

        if self._low is None:
            vt = np.ascontiguousarray(self._v.T)
            low = np.zeros((1, self.dimension), dtype=np.uint32)
            vt = vt.astype(np.uint32)
            for b in range(_BLOCK_BITS):
                low = np.concatenate([low, low[::-1] ^ vt[b]])
            self._low = low
        return self._low

    def _gray_point(self, index):
        """The unshifted point of index: the XOR of the direction numbers of the set bits of gray(index)."""
        import numpy as np

        gray = index ^ (index >> 1)
        point = np.zeros(self.dimension, dtype=np.int64)
        for b in range(self.MAXBIT):
            if (gray >> b) & 1:
                point ^= self._v[:, b]
        return point

    def _advance(self, n, counter):
        """The next n points (uint32 numerators, below 2^MAXBIT, (n, dimension)), after the point of index counter.
        Point s is the XOR of the direction numbers of the set bits of gray(s) (each Gray-code step flips
        one of them; Note [Sobol direction numbers]), XOR-ed with the last point drawn and the unshifted
        point of counter, which is the shift. Indices run in blocks of 2^_BLOCK_BITS:
        gray(B * 2^k + j) = gray(B) << k ^ (B & 1) << (k - 1) ^ gray(j), so a point is a block's high part
        XOR the block-independent low part of j."""
        import numpy as np

        if n == 0:
            return np.empty((0, self.dimension), dtype=np.uint32)
        k = _BLOCK_BITS
        first = counter + 1
        low = self._low_points().reshape(-1)
        blocks = np.arange(first >> k, ((first + n - 1) >> k) + 1, dtype=np.int64)
        high_bits = ((blocks ^ (blocks >> 1)) << k) ^ ((blocks & 1) << (k - 1))
        high = np.empty((blocks.size, self.dimension), dtype=np.int64)
        high[:] = self._quasi ^ self._gray_point(counter)
        for b in range(k - 1, self.MAXBIT):
            rows = ((high_bits >> b) & 1).astype(bool)
            if rows.any():
                high[rows] ^= self._v[:, b]
        # every block's high part repeated over its 2^k rows, then XOR-ed with the low parts, in place
        points = np.tile(high.astype(np.uint32), 1 << k)
        points ^= low
        start = first - (int(blocks[0]) << k)
        points = points.reshape(-1, self.dimension)[start : start + n]
        self._quasi = points[-1].astype(np.int64)
        return points

    def _scale_into(self, result, points):
        """result[...] = points / 2^MAXBIT, result float32 or float64: the numerators convert with one
        rounding and the power-of-two scale is exact, which is PyTorch's cast-then-scale."""
        import numpy as np

        np.multiply(points, result.dtype.type(1.0 / 2**self.MAXBIT), out=result, dtype=result.dtype, casting="unsafe")

    def _scaled(self, points, dtype):
        import numpy as np

        floats = {ember.float32: np.float32, ember.float64: np.float64}
        if dtype in floats:
            result = np.empty(points.shape, dtype=floats[dtype])
            self._scale_into(result, points)
            return ember.from_numpy(result)
        return ember.from_numpy(points.astype(np.int64)).to(dtype) * (1.0 / 2**self.MAXBIT)

    def draw(self, n=1, out=None, dtype=None):
        """The next n points, an (n, dimension) tensor of dtype (the default dtype when None)."""
        import numpy as np

        dtype = ember.get_default_dtype() if dtype is None else dtype
        rows = n - 1 if self.num_generated == 0 else n
        if rows < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {rows}: [{rows}, {self.dimension}]")
        floats = {ember.float32: np.float32, ember.float64: np.float64}
        if self.num_generated == 0 and dtype in floats and ember.get_default_dtype() in floats:
            scaled = np.empty((n, self.dimension), dtype=floats[dtype])
            self._scale_into(scaled[1:], self._advance(n - 1, 0))
            # the first point is computed in the default dtype (_first_point)
            scaled[:1] = (self._shift * (1.0 / 2**self.MAXBIT)).astype(floats[ember.get_default_dtype()])
            result = ember.from_numpy(scaled)
        elif self.num_generated == 0:
            result = self._first_point.to(dtype)
            if n > 1:
                result = ember.cat([result, self._scaled(self._advance(n - 1, 0), dtype)], dim=-2)
        else:
            result = self._scaled(self._advance(n, self.num_generated - 1), dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next 2^m points; the total drawn must stay a power of 2, which keeps the sequence balanced."""
        n = 2**m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError(
                "The balance properties of Sobol' points require "
                f"n to be a power of 2. {self.num_generated} points have been "
                f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                "If you still want to do this, please use "
                "'SobolEngine.draw()' instead."
            )
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point."""
        self._quasi = self._shift.copy()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skips the next n points."""
        last = self.num_generated + n - 1
        if n > 0 and last > 0:
            self._quasi = self._quasi ^ self._gray_point(max(self.num_generated - 1, 0)) ^ self._gray_point(last)
        self.num_generated += n
        return self

    def __repr__(self):
        fmt_string = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt_string += ["scramble=True"]
        if self.seed is not None:
            fmt_string += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt_string) + ")"

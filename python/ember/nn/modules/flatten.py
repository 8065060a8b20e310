"""Flatten and Unflatten, as torch.nn."""

from __future__ import annotations

from ember.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


def _wrap(dim, ndim):
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        lo, hi = -max(ndim, 1), max(ndim, 1) - 1
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    return dim % max(ndim, 1)


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one."""

    __constants__ = (
        "start_dim",
        "end_dim",
    )

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        if hasattr(input, "flatten"):
            return input.flatten(self.start_dim, self.end_dim)
        shape = list(input.shape)
        if not shape:
            return input.reshape([1])
        s, e = _wrap(self.start_dim, len(shape)), _wrap(self.end_dim, len(shape))
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        n = 1
        for v in shape[s : e + 1]:
            n *= v
        return input.reshape(shape[:s] + [n] + shape[e + 1 :])

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension dim into unflattened_size."""

    __constants__ = (
        "dim",
        "unflattened_size",
    )

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input):
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError(
                        "unflattened_size must be tuple of ints, "
                        + f"but found element of type {type(elem).__name__} at pos {idx}"
                    )
            return
        raise TypeError(
            f"unflattened_size must be a tuple of ints, but found type {type(input).__name__}"
        )

    def forward(self, input):
        if hasattr(input, "unflatten"):
            return input.unflatten(self.dim, self.unflattened_size)
        shape = list(input.shape)
        d = _wrap(self.dim, len(shape))
        sizes = list(self.unflattened_size)
        if -1 in sizes:
            known = 1
            for v in sizes:
                if v != -1:
                    known *= v
            sizes[sizes.index(-1)] = shape[d] // known if known else 0
        return input.reshape(shape[:d] + sizes + shape[d + 1 :])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

"""ember.functional: the torch namespace's functions that PyTorch writes in
Python (torch.functional), under the same module path."""

from __future__ import annotations

import ember

_NAMES = (
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "block_diag",
    "cdist",
    "chain_matmul",
    "einsum",
    "istft",
    "lu",
    "norm",
    "meshgrid",
    "pca_lowrank",
    "split",
    "stft",
    "svd_lowrank",
    "tensordot",
    "unique",
    "unique_consecutive",
    "unravel_index",
)
__all__ = list(_NAMES)


def __getattr__(name):
    # Resolved at use, so each name is the top-level function itself.
    if name in __all__:
        return getattr(ember, name)
    raise AttributeError(f"module 'ember.functional' has no attribute '{name}'")


def __dir__():
    return sorted(__all__)

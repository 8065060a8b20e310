"""ember.distributed.algorithms: the Join context manager for uneven inputs
and DDP's communication hooks."""

from ember.distributed.algorithms.join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]

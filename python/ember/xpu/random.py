"""XPU random number generators. Seeds given before the (never coming)
initialisation are kept for it, as PyTorch queues them; reading a state
needs a device."""

from __future__ import annotations

from typing import Any

from ember._absent_backend import queue_reseed, queue_seed
from ember.xpu._common import _lazy_init

__all__ = [
    "get_rng_state",
    "get_rng_state_all",
    "initial_seed",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "set_rng_state",
    "set_rng_state_all",
]


def get_rng_state(device: Any = "xpu"):
    _lazy_init()


def get_rng_state_all() -> list:
    return []


def set_rng_state(new_state: Any, device: Any = "xpu") -> None:
    pass


def set_rng_state_all(new_states: Any) -> None:
    for state in new_states:
        set_rng_state(state)


manual_seed = manual_seed_all = queue_seed
seed = seed_all = queue_reseed


def initial_seed() -> int:
    _lazy_init()

"""MTIA memory statistics: empty without a device."""

from __future__ import annotations

from typing import Any

__all__ = ["memory_stats", "max_memory_allocated", "memory_allocated", "reset_peak_memory_stats"]


def memory_stats(device: Any = None) -> dict:
    return {}


def max_memory_allocated(device: Any = None) -> int:
    return memory_stats(device).get("dram", {}).get("peak_bytes", 0)


def memory_allocated(device: Any = None) -> int:
    return memory_stats(device).get("dram", {}).get("allocated_bytes", 0)


def reset_peak_memory_stats(device: Any = None) -> None:
    pass

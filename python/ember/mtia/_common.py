"""The errors of ember.mtia calls in a build without the MTIA backend, and its
device indices."""

from __future__ import annotations

from typing import Any

import ember


def no_backend(call: str):
    raise RuntimeError(f"Cannot execute {call}() without MTIA backend.")


def _lazy_init() -> None:
    raise AssertionError(
        "Torch not compiled with MTIA enabled. Ensure you have `import mtia.host_runtime.torch_mtia.dynamic_library` "
        "in your python src file and include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!"
    )


def device_index(device: Any, optional: bool = False) -> int:
    """The index of an MTIA device; None (or 'mtia') asks for the current
    device when `optional`, which needs the backend."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = ember.device(device)
    index = None
    if isinstance(device, ember.device):
        if device.type not in ("mtia", "cpu"):
            raise ValueError(f"Expected a mtia or cpu device, but got: {device}")
        if device.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {device}")
        index = device.index
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        no_backend("getCurrentDevice")
    return index

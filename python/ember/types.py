"""Type aliases used in Ember's annotations and .pyi stubs."""

from __future__ import annotations

from typing import Union

from ember._C import device as _device

Number = Union[int, float, bool]
Device = Union[_device, str, int, None]


class Generator:  # placeholder until random generators arrive
    pass

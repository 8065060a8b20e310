"""Type aliases used in Ember's annotations and .pyi stubs."""

from __future__ import annotations

from ember._C import device as _device

Number = int | float | bool
Device = _device | str | int | None


class Generator:  # placeholder until random generators arrive
    pass

"""ember.utils.hooks: RemovableHandle, the object hook registrations return."""

from __future__ import annotations

import itertools

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """handle.remove() undoes the registration; also a context manager."""

    _ids = itertools.count()

    def __init__(self, hooks_dict=None, *, extra_dict=None):
        self.hooks_dict_ref = hooks_dict
        self.id = next(RemovableHandle._ids)
        self.active = True

    def remove(self) -> None:
        self.active = False
        if self.hooks_dict_ref is not None:
            self.hooks_dict_ref.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()

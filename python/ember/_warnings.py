"""Where Ember's warnings point: the user's line, not Ember's own frames."""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel() -> int:
    """The warnings.warn stacklevel of the first caller outside the ember package
    (counted from the caller of this function)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


_WARNED: set = set()


def warn_once(key, message: str, category: type = UserWarning) -> None:
    """A warning PyTorch gives once per process (TORCH_WARN_ONCE), at the
    user's line."""
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(message, category, stacklevel=user_stacklevel())

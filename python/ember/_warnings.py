"""Where Ember's warnings point: the user's line, not Ember's own frames."""

from __future__ import annotations

import os
import sys

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel() -> int:
    """The warnings.warn stacklevel of the first caller outside the ember package
    (counted from the caller of this function)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level

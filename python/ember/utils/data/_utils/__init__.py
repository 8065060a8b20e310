"""Internals of ember.utils.data: collation, worker processes, shared memory."""

from __future__ import annotations

import sys
import traceback

# How often a waiting worker checks that the main process is alive, and the
# main process that its workers are (seconds).
MP_STATUS_CHECK_INTERVAL = 5.0


class KeyErrorMessage(str):
    """A str whose repr is itself, so a KeyError shows a multi-line message."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text, to be
    raised again in the main process."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


from . import collate, fetch, random, shared, worker  # noqa: E402,F401

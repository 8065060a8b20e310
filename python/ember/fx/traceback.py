"""Node metadata carried across graph transformations."""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["preserve_node_meta", "has_preserved_node_meta", "set_stack_trace", "format_stack", "get_current_meta"]

_preserve = False
_current_meta: dict = {}


@contextmanager
def preserve_node_meta(enable: bool = True):
    global _preserve
    saved = _preserve
    _preserve = enable
    try:
        yield
    finally:
        _preserve = saved


def has_preserved_node_meta() -> bool:
    return _preserve


def set_stack_trace(stack: list) -> None:
    if _preserve and stack:
        _current_meta["stack_trace"] = "".join(stack)


def format_stack() -> list:
    import traceback as _tb

    if _preserve:
        return [_current_meta.get("stack_trace", "")]
    return _tb.format_list(_tb.extract_stack()[:-1])


def get_current_meta() -> dict:
    return _current_meta

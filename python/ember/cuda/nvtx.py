"""ember.cuda.nvtx: NVTX ranges and marks for NVIDIA's profilers. Ember has
no NVTX binding: each call raises as in a build without it."""

from contextlib import contextmanager

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


class _NVTXStub:
    @staticmethod
    def _fail(*args, **kwargs):
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")

    rangePushA = _fail
    rangePop = _fail
    markA = _fail


_nvtx = _NVTXStub()


def range_push(msg):
    return _nvtx.rangePushA(msg)


def range_pop():
    return _nvtx.rangePop()


def range_start(msg) -> int:
    return _nvtx.rangeStartA(msg)


def range_end(range_id) -> None:
    _nvtx.rangeEnd(range_id)


def mark(msg):
    return _nvtx.markA(msg)


@contextmanager
def range(msg, *args, **kwargs):
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()

"""ember.cpu: the CPU as a device module (streams and events are trivial on
the CPU: work is done when a call returns)."""

import os
from contextlib import AbstractContextManager
from functools import lru_cache
from types import MappingProxyType

from ember.cpu import amp

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "amp",
    "current_device",
    "current_stream",
    "device_count",
    "get_capabilities",
    "is_available",
    "is_initialized",
    "set_device",
    "stream",
    "synchronize",
]


def is_available():
    return True


def is_initialized():
    return True


def current_device():
    return "cpu"


def device_count():
    return 1


def set_device(device):
    """There is one CPU device; nothing to select."""


def synchronize(device=None):
    """CPU work is complete when a call returns."""


class Stream:
    def __init__(self, priority=-1):
        self.priority = priority

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_stream = Stream()
_current = _default_stream


def current_stream(device=None):
    return _current


class StreamContext(AbstractContextManager):
    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self):
        global _current
        if self.stream is None:
            return
        self.prev_stream, _current = _current, self.stream

    def __exit__(self, exc_type, exc, tb):
        global _current
        if self.stream is None:
            return
        _current = self.prev_stream


def stream(stream):
    return StreamContext(stream)


# /proc/cpuinfo flag -> capability name, for the x86 names PyTorch reports.
_X86_FLAGS = {
    "sse": "sse",
    "sse2": "sse2",
    "pni": "sse3",
    "ssse3": "ssse3",
    "sse4_1": "sse4_1",
    "sse4_2": "sse4_2",
    "sse4a": "sse4a",
    "avx": "avx",
    "avx2": "avx2",
    "avx_vnni": "avx_vnni",
    "avx512f": "avx512_f",
    "avx512cd": "avx512_cd",
    "avx512dq": "avx512_dq",
    "avx512bw": "avx512_bw",
    "avx512vl": "avx512_vl",
    "avx512ifma": "avx512_ifma",
    "avx512vbmi": "avx512_vbmi",
    "avx512_vbmi2": "avx512_vbmi2",
    "avx512_bitalg": "avx512_bitalg",
    "avx512_vpopcntdq": "avx512_vpopcntdq",
    "avx512_vnni": "avx512_vnni",
    "avx512_bf16": "avx512_bf16",
    "avx512_fp16": "avx512_fp16",
    "avx512_vp2intersect": "avx512_vp2intersect",
    "avx512_4vnniw": "avx512_4vnniw",
    "avx512_4fmaps": "avx512_4fmaps",
    "avx_vnni_int8": "avx_vnni_int8",
    "avx_vnni_int16": "avx_vnni_int16",
    "avx_ne_convert": "avx_ne_convert",
    "amx_bf16": "amx_bf16",
    "amx_tile": "amx_tile",
    "amx_int8": "amx_int8",
    "amx_fp16": "amx_fp16",
    "fma": "fma3",
    "fma4": "fma4",
    "f16c": "f16c",
    "bmi1": "bmi",
    "bmi2": "bmi2",
    "popcnt": "popcnt",
    "abm": "lzcnt",
    "aes": "aes",
    "sha_ni": "sha",
    "clflush": "clflush",
    "clflushopt": "clflushopt",
    "clwb": "clwb",
    "avx10_1": "avx10_1",
    "avx10_2": "avx10_2",
}


def _cpuinfo():
    try:
        with open("/proc/cpuinfo") as f:
            return f.read()
    except OSError:
        return ""


@lru_cache(None)
def get_capabilities():
    """The CPU's instruction-set features and cache sizes, read once."""
    import platform

    text = _cpuinfo()
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    flags = set(fields.get("flags", "").split())
    caps = {name: flag in flags for flag, name in _X86_FLAGS.items()} if platform.machine() == "x86_64" else {}
    caps["architecture"] = platform.machine()
    caps["num_logical_cores"] = os.cpu_count() or 1
    physical = {(b.get("physical id"), b.get("core id")) for b in _blocks(text)}
    caps["num_physical_cores"] = len(physical) if physical != {(None, None)} else caps["num_logical_cores"]
    caps["num_sockets"] = len({b.get("physical id") for b in _blocks(text)}) or 1
    caps["cpu_name"] = " ".join(fields.get("model name", platform.processor()).split()[:2])
    for level, key in (("index0", "l1d_cache_size"), ("index2", "l2_cache_size")):
        size = _cache_size(level)
        if size:
            caps[key] = size
    return MappingProxyType(caps)


def _blocks(text):
    for block in text.strip().split("\n\n"):
        entry = {}
        for line in block.splitlines():
            k, _, v = line.partition(":")
            entry[k.strip()] = v.strip()
        yield entry


def _cache_size(index):
    try:
        with open(f"/sys/devices/system/cpu/cpu0/cache/{index}/size") as f:
            text = f.read().strip()
    except OSError:
        return None
    scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
    return int(text.rstrip("KM")) * scale

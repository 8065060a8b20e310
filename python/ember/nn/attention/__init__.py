"""ember.nn.attention: choosing the kernel behind scaled_dot_product_attention.

On the CPU two kernels exist, the fused (flash) kernel and the math
composition; the efficient, cuDNN and overrideable kernels serve CUDA only.
"""

from __future__ import annotations

import contextlib
import enum
import warnings  # noqa: F401 - part of the namespace, as in PyTorch
from collections.abc import Iterable  # noqa: F401 - part of the namespace
from typing import Union  # noqa: F401 - part of the namespace

from ember import backends as _backends
from ember.backends import SDPAParams

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# Whether scaled_dot_product_attention warns when it falls back to the math kernel.
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The kernels scaled_dot_product_attention can run."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__


_SWITCH = {
    SDPBackend.MATH: "math",
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
    SDPBackend.CUDNN_ATTENTION: "cudnn",
    SDPBackend.OVERRIDEABLE: "overrideable",
}


def warn(message):
    if WARN_FOR_UNFUSED_KERNELS:
        warnings.warn(message, stacklevel=2)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Runs the block with only `backends` enabled; with set_priority, they are
    tried in the order given, before the others."""
    assert isinstance(backends, (list, SDPBackend)), (
        f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got {type(backends).__name__}"
    )
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    saved_switches, saved_order = dict(_backends._sdp), list(_backends._sdp_order)
    for backend, switch in _SWITCH.items():
        _backends._sdp[switch] = backend in chosen
    if set_priority:
        first = [int(b) for b in chosen if isinstance(b, SDPBackend) and b is not SDPBackend.ERROR]
        _backends._sdp_order[:] = first + [b for b in _backends._SDP_DEFAULT_ORDER if b not in first]
    try:
        yield {}
    finally:
        _backends._sdp.update(saved_switches)
        _backends._sdp_order[:] = saved_order


def can_use_flash_attention(params, debug=False):
    return _backends.cuda.can_use_flash_attention(params, debug)


def can_use_efficient_attention(params, debug=False):
    return _backends.cuda.can_use_efficient_attention(params, debug)


# Alternative flash-attention implementations are CUDA kernels from separate
# packages; activating one imports its package, which registers its kernels.
def _importer(module):
    def register():
        import importlib

        importlib.import_module(module)

    return register


_flash_impls = {"FA3": _importer("flash_attn_interface"), "FA4": _importer("flash_attn")}
_active_flash_impl = [None]


def list_flash_attention_impls():
    return list(_flash_impls)


def current_flash_attention_impl():
    return _active_flash_impl[0]


def register_flash_attention_impl(impl, *, register_fn):
    _flash_impls[impl] = register_fn


def activate_flash_attention_impl(impl):
    if impl not in _flash_impls:
        raise ValueError(
            f"Unknown flash attention impl '{impl}'. Available implementations: {list_flash_attention_impls()}"
        )
    _flash_impls[impl]()
    _active_flash_impl[0] = impl


def restore_flash_attention_impl():
    _active_flash_impl[0] = None

"""Anomaly detection: detect_anomaly and set_detect_anomaly, as PyTorch's."""

import os
import traceback
import warnings

from ember import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# PyTorch raises its report from C++, so the message ends with the place it was raised.
_TRIGGERED_AT = " (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/python_anomaly_mode.cpp:122.)"


def _forward_trace():
    """The Python stack of a node made in anomaly mode, up to the last frame
    outside ember: PyTorch records it from C++, where the innermost Python
    frame is the caller of the operator."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_PACKAGE_DIR):
        frames.pop()
    return "".join(traceback.format_list(frames))


def _report(name, trace):
    return f"Error detected in {name}. Traceback of forward call that caused the error:\n{trace}{_TRIGGERED_AT}"


class detect_anomaly:  # noqa: N801  (PyTorch's name)
    """Context manager and decorator: backward reports the forward call of a
    failing node and, with check_nan, fails on NaN gradients."""

    def __init__(self, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled "
            "for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        _C._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapped


class set_detect_anomaly:  # noqa: N801
    """Turns anomaly detection on or off; as a context manager, restores the
    previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C._set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)

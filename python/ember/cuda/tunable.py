"""ember.cuda.tunable: TunableOp's switches (GEMM algorithms chosen by
timing them on the device). A build without CUDA has none of them
(AttributeError, as PyTorch's CPU build); a CUDA build keeps the settings,
and Ember's backend has no tunable operators to apply them to yet."""

from __future__ import annotations

import os  # noqa: F401 - part of the namespace, as in PyTorch
import warnings

import ember
from ember.cuda._utils import _is_compiled

__all__ = [
    "enable", "is_enabled", "tuning_enable", "tuning_is_enabled", "record_untuned_enable",
    "record_untuned_is_enabled", "set_max_tuning_duration", "get_max_tuning_duration",
    "set_max_tuning_iterations", "get_max_tuning_iterations", "set_filename", "get_filename", "get_results",
    "get_validators", "read_file", "tune_gemm_in_file", "set_rotating_buffer_size", "get_rotating_buffer_size",
    "set_numerical_check_tolerances", "mgpu_tune_gemm_in_file",
]  # fmt: skip

_settings = {
    "enabled": False,
    "tuning_enabled": True,
    "record_untuned": False,
    "max_tuning_duration": 30,
    "max_tuning_iterations": 100,
    "filename": "",
    "rotating_buffer_size": -1,
    "numerical_check": (False, 1e-5, 1e-5),
}


def _setting(c_name: str, key: str, value=None, *, read: bool):
    if not _is_compiled():
        raise AttributeError(f"module 'ember._C' has no attribute '{c_name}'")
    if read:
        return _settings[key]
    _settings[key] = value
    return None


def enable(val: bool = True) -> None:
    _setting("_cuda_tunableop_enable", "enabled", bool(val), read=False)


def is_enabled() -> bool:
    return _setting("_cuda_tunableop_is_enabled", "enabled", read=True)


def tuning_enable(val: bool = True) -> None:
    _setting("_cuda_tunableop_tuning_enable", "tuning_enabled", bool(val), read=False)


def tuning_is_enabled() -> bool:
    return _setting("_cuda_tunableop_tuning_is_enabled", "tuning_enabled", read=True)


def record_untuned_enable(val: bool = True) -> None:
    _setting("_cuda_record_untuned_enable", "record_untuned", bool(val), read=False)


def record_untuned_is_enabled() -> bool:
    return _setting("_cuda_record_untuned_is_enabled", "record_untuned", read=True)


def set_max_tuning_duration(duration: int) -> None:
    _setting("_cuda_tunableop_set_max_tuning_duration", "max_tuning_duration", int(duration), read=False)


def get_max_tuning_duration() -> int:
    return _setting("_cuda_tunableop_get_max_tuning_duration", "max_tuning_duration", read=True)


def set_max_tuning_iterations(iterations: int) -> None:
    _setting("_cuda_tunableop_set_max_tuning_iterations", "max_tuning_iterations", int(iterations), read=False)


def get_max_tuning_iterations() -> int:
    return _setting("_cuda_tunableop_get_max_tuning_iterations", "max_tuning_iterations", read=True)


def set_filename(filename: str, insert_device_ordinal: bool = False) -> None:
    _setting("_cuda_tunableop_set_filename", "filename", str(filename), read=False)


def get_filename() -> str:
    return _setting("_cuda_tunableop_get_filename", "filename", read=True)


def get_results() -> tuple:
    _setting("_cuda_tunableop_get_results", "enabled", read=True)
    return ()


def get_validators() -> tuple:
    _setting("_cuda_tunableop_get_validators", "enabled", read=True)
    return ()


def read_file(filename: str | None = None) -> bool:
    if filename is None:
        filename = get_filename()
    _setting("_cuda_tunableop_read_file", "enabled", read=True)
    return False


def set_rotating_buffer_size(buffer_size: int) -> None:
    _setting("_cuda_tunableop_set_rotating_buffer_size", "rotating_buffer_size", int(buffer_size), read=False)


def get_rotating_buffer_size() -> int:
    return _setting("_cuda_tunableop_get_rotating_buffer_size", "rotating_buffer_size", read=True)


def set_numerical_check_tolerances(enable: bool, atol: float = 1e-5, rtol: float = 1e-5) -> None:
    _setting("_cuda_tunableop_set_numerical_check_tolerances", "numerical_check", (enable, atol, rtol), read=False)


def _check_tuning_assertions() -> None:
    if is_enabled() is False:
        warnings.warn("TunableOp was disabled. Trying to enable now.", stacklevel=2)
        enable(True)
    if is_enabled() is not True:
        raise AssertionError("is_enabled() must be True")
    if tuning_is_enabled() is not True:
        raise AssertionError("tuning_is_enabled() must be True")
    if record_untuned_is_enabled() is not False:
        raise AssertionError("record_untuned_is_enabled() must be False")


def tune_gemm_in_file(filename: str) -> None:
    if not is_enabled():
        raise AssertionError("TunableOp is not enabled")
    if not tuning_is_enabled():
        raise AssertionError("Tuning is not enabled")
    ember.cuda.current_device()
    raise RuntimeError("ember's CUDA backend has no tunable GEMM yet")


def mgpu_tune_gemm_in_file(filename_pattern: str, num_gpus: int) -> None:
    import glob

    entries = set()
    for path in glob.glob(filename_pattern):
        with open(path) as file:
            entries.update(line for line in file if line.startswith(("Gemm", "ScaledGemm")))
    total = ember.cuda.device_count()
    if not (1 <= num_gpus <= total):
        raise AssertionError(f"num_gpus must be between 1 and {total}, got {num_gpus}")
    _check_tuning_assertions()
    raise RuntimeError("ember's CUDA backend has no tunable GEMM yet")

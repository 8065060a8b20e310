"""Tests that need a CUDA device (Ember's and PyTorch's); without one every
test here is skipped with the reason shown."""

import pytest


def _reason() -> str | None:
    try:
        import torch

        import ember
    except ImportError as e:
        return f"needs ember and torch: {e}"
    if not ember.cuda.is_available():
        return "needs a CUDA device: ember.cuda.is_available() is False"
    if not torch.cuda.is_available():
        return "needs PyTorch with CUDA to compare against"
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_cuda: needs a CUDA device")


def pytest_collection_modifyitems(config, items):
    reason = _reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "tests/cuda" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)

"""GPU tests: each file marks itself `pytest.mark.requires_cuda`; without a
usable CUDA device those tests are skipped with the reason shown (unless
EMBER_CUDA_TESTS_DEVICE=cpu runs them on the CPU, see _compare.py)."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch", reason="the oracle (PyTorch) is installed by the test set-up")
import ember  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_cuda: needs a CUDA device visible to Ember")


def pytest_collection_modifyitems(config, items):
    if ember.cuda.is_available() or os.environ.get("EMBER_CUDA_TESTS_DEVICE") == "cpu":
        return
    skip = pytest.mark.skip(reason="no CUDA device: ember.cuda.is_available() is False")
    for item in items:
        if "requires_cuda" in item.keywords:
            item.add_marker(skip)

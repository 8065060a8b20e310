"""Shared GPU fixtures: tests here run only where Ember sees a CUDA device;
elsewhere each is skipped with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

import ember


def _cuda_reason() -> str:
    try:
        if ember.cuda.is_available():
            return ""
    except Exception as e:  # a build without the CUDA backend
        return f"ember.cuda is unusable: {e}"
    return "no CUDA device: ember.cuda.is_available() is False"


def pytest_collection_modifyitems(config, items):
    reason = _cuda_reason()
    if not reason:
        return
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.skip(reason=reason))

"""Whole scripts written for PyTorch run under `import ember as torch` and
print exactly what they print under PyTorch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.py"))


def run(source: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=300)


def as_ember(source: str) -> str:
    """The one change a user makes: `import torch` becomes `import ember as torch`."""
    return source.replace("import torch\n", "import ember as torch\n", 1)


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_script_output_matches_torch(script):
    source = script.read_text()
    want = run(source)
    assert want.returncode == 0, want.stderr
    got = run(as_ember(source))
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout

"""The four training scripts of tests/scripts/train (MLP, CNN, LSTM, GPT),
written for PyTorch, run unchanged under `import ember as torch`: the printed
text must be the same, numbers equal to the printed digits up to float32
summation-order differences (one unit in the last printed place, or 1e-4
relative)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "scripts" / "train").glob("*.py"))
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+")


def run(source: str) -> str:
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def close(got: str, want: str) -> bool:
    """Equal up to one unit in the last printed place, or 1e-4 relative."""
    if "." not in want:
        return got == want  # counts and indices are exact
    a, b = float(got), float(want)
    decimals = len(want.split(".")[1].split("e")[0]) if "." in want else 0
    unit = 10.0**-decimals * (10.0 ** int(want.split("e")[1]) if "e" in want else 1.0)
    return abs(a - b) <= 1.001 * unit + 1e-4 * abs(b)


def compare(got: str, want: str):
    for n, (g, w) in enumerate(zip(got.splitlines(), want.splitlines(), strict=True), 1):
        assert NUMBER.sub("#", g) == NUMBER.sub("#", w), f"line {n}: {g!r} != {w!r}"
        for x, y in zip(NUMBER.findall(g), NUMBER.findall(w)):
            assert close(x, y), f"line {n}: {g!r} != {w!r}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_training_script_matches_torch(script):
    source = script.read_text()
    assert "import torch\n" in source
    want = run(source)
    got = run(source.replace("import torch\n", "import ember as torch\n", 1))
    compare(got, want)


def test_compare_catches_differences():
    compare("step 1 loss 0.50000", "step 1 loss 0.50001")
    compare("grad norm 0.3065", "grad norm 0.3066")
    with pytest.raises(AssertionError):
        compare("step 1 loss 0.5010", "step 1 loss 0.5000")
    with pytest.raises(AssertionError):
        compare("grad norm 0.3063", "grad norm 0.3066")
    with pytest.raises(AssertionError):
        compare("step 1 loss 0.5", "step 2 loss 0.5")
    with pytest.raises(ValueError):
        compare("a\nb", "a")

"""LeakSanitizer over a short training loop (tools/training_memory.py) in a
subprocess: an MLP with Adam and a DataLoader with workers leave no
unreleased block of Ember's, and RSS does not grow with the steps."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "training_memory.py"
SUPPRESSIONS = ROOT / "tools" / "lsan_suppressions.txt"


def liblsan():
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    out = subprocess.run([gcc, "-print-file-name=liblsan.so"], capture_output=True, text=True).stdout.strip()
    return out if os.path.isabs(out) and os.path.exists(out) else None


def run_script(args, env_extra=None, timeout=900):
    env = dict(os.environ, OMP_NUM_THREADS="1", **(env_extra or {}))
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""), reason="the sanitizer build runs make asan-leaks")
def test_training_loop_has_no_leak():
    lib = liblsan()
    if lib is None:
        pytest.skip("the LeakSanitizer runtime (liblsan, from gcc) is not installed")
    proc = run_script(
        ["--steps", "20", "--interval", "10", "--workers", "2"],
        {
            "LD_PRELOAD": lib,
            "PYTHONMALLOC": "malloc",
            "LSAN_OPTIONS": f"suppressions={SUPPRESSIONS}:print_suppressions=0:fast_unwind_on_malloc=0",
        },
    )
    assert "LeakSanitizer" not in proc.stderr, proc.stderr[-6000:]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "step     20" in proc.stdout


def test_rss_flat_over_training_steps():
    proc = run_script(["--steps", "600", "--interval", "100", "--max-growth-mb", "8"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("step")]
    assert len(lines) == 6

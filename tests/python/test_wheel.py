"""The release wheel (`make wheel`) installed into a fresh virtual environment
without compilers runs wheel_smoke.py.

Building the wheel from scratch takes longer than a CI test may, so this runs
under `make wheel-test` (EMBER_WHEEL_TEST=1, after `make wheel`) and is
skipped otherwise.
"""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMOKE = Path(__file__).with_name("wheel_smoke.py")

pytestmark = pytest.mark.skipif(
    os.environ.get("EMBER_WHEEL_TEST") != "1", reason="needs the wheel of `make wheel`; run `make wheel-test`"
)


def _wheel() -> Path:
    wheels = sorted((ROOT / "dist").glob("ember-*+cpu*-manylinux_*.whl"), key=lambda p: p.stat().st_mtime)
    assert wheels, "no manylinux wheel in dist/: run `make wheel` first"
    return wheels[-1]


def test_wheel_is_manylinux_cpu_with_gloo_vendored():
    wheel = _wheel()
    assert "+cpu" in wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert any(n.startswith("ember.libs/libgloo") for n in names), names
    # oneDNN and OpenBLAS come from their own wheels, not copies.
    assert not any("libdnnl" in n or "libscipy_openblas" in n for n in names)
    assert not any("libember_cuda" in n for n in names)
    # SLEEF, opened at run time, travels beside libember_cpu where the build machine had it.
    if Path("/usr/lib/x86_64-linux-gnu/libsleef.so.3").exists():
        assert "ember/lib/libsleef.so.3" in names, names


def test_installed_wheel_runs_smoke_script(tmp_path):
    wheel = _wheel()
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    # No compilers: binary packages only, and no compiler to find if one were asked for.
    no_compiler = dict(os.environ, CC="/bin/false", CXX="/bin/false")
    no_compiler.pop("PYTHONPATH", None)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--only-binary=:all:", str(wheel)], check=True, env=no_compiler
    )
    out = subprocess.run(
        [str(python), str(SMOKE)], cwd=tmp_path, env=no_compiler, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for check in (
        "tensor_ops",
        "autograd",
        "training_step",
        "convolution_through_onednn",
        "save_load",
        "distributed_gloo",
    ):
        assert f"{check} ok" in out.stdout, out.stdout
    # The library ember imported is the installed one, loading oneDNN from its wheel.
    where = subprocess.run(
        [str(python), "-c", "import ember; print(ember.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=no_compiler,
        check=True,
    ).stdout
    assert str(env_dir) in where

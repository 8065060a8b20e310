"""The release wheel (`make wheel`) installed into a fresh virtual environment
without compilers runs wheel_smoke.py; the CUDA wheel (`make wheel-cuda`),
where one was built, carries the CUDA library, depends on NVIDIA's wheels
instead of copying them, and runs the same script on the CPU.

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


def _newest(pattern: str) -> Path | None:
    wheels = sorted((ROOT / "dist").glob(pattern), key=lambda p: p.stat().st_mtime)
    return wheels[-1] if wheels else None


def _wheel() -> Path:
    wheel = _newest("ember-*+cpu*-manylinux_*.whl")
    assert wheel, "no manylinux wheel in dist/: run `make wheel` first"
    return wheel


def _requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]


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


def test_cpu_wheel_depends_on_cpu_libraries_only():
    names = [r.split(";")[0].split(">")[0].split("=")[0].strip() for r in _requires(_wheel())]
    assert {"numpy", "scipy-openblas32", "onednn-cpu-gomp"} <= set(names), names
    assert not any(n.startswith("nvidia") for n in names), names


def _cuda_wheel() -> Path:
    wheel = _newest("ember-*+cu*-manylinux_*.whl")
    if wheel is None:
        pytest.skip("no CUDA wheel in dist/: `make wheel-cuda` builds one")
    return wheel


def test_cuda_wheel_carries_cuda_library_and_depends_on_nvidia_wheels(tmp_path):
    wheel = _cuda_wheel()
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        z.extract("ember/lib/libember_cuda.so", tmp_path)
    assert "ember/lib/libember_cuda.so" in names, names
    # cuBLAS, NCCL, cuDNN and the driver are the NVIDIA wheels' and the system's, never copies.
    assert not any(k in n for n in names for k in ("libcublas", "libnccl", "libcudnn", "libcuda.so")), names
    requires = " ".join(_requires(wheel))
    for dist in ("nvidia-cublas", "nvidia-nccl-cu", "nvidia-cudnn-cu", "onednn-cpu-gomp"):
        assert dist in requires, requires
    dynamic = subprocess.run(
        ["readelf", "-d", str(tmp_path / "ember/lib/libember_cuda.so")], capture_output=True, text=True, check=True
    ).stdout
    assert "$ORIGIN/../../nvidia/" in dynamic, dynamic
    assert "libcudart" not in dynamic  # the runtime is linked statically


def _installed(wheel: Path, tmp_path: Path) -> tuple[Path, dict]:
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    # No compilers: binary packages only, and no compiler to find if one were asked for.
    no_compiler = dict(os.environ, CC="/bin/false", CXX="/bin/false")
    no_compiler.pop("PYTHONPATH", None)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--only-binary=:all:", str(wheel)], check=True, env=no_compiler
    )
    return python, no_compiler


def _run(python: Path, env: dict, cwd: Path, *args: str) -> str:
    out = subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_installed_cuda_wheel_runs_smoke_script_on_cpu(tmp_path):
    python, env = _installed(_cuda_wheel(), tmp_path)
    assert "training_step ok" in _run(python, env, tmp_path, str(SMOKE))
    built = _run(python, env, tmp_path, "-c", "import ember; print(ember.version.cuda, ember.backends.cuda.is_built())")
    assert built.split()[0].startswith("13.") and built.split()[1] == "True", built


def test_installed_wheel_runs_smoke_script(tmp_path):
    python, no_compiler = _installed(_wheel(), tmp_path)
    out = _run(python, no_compiler, tmp_path, str(SMOKE))
    for check in (
        "tensor_ops",
        "autograd",
        "training_step",
        "convolution_through_onednn",
        "save_load",
        "distributed_gloo",
    ):
        assert f"{check} ok" in out, out
    # The library ember imported is the installed one, loading oneDNN from its wheel.
    assert str(tmp_path / "env") in _run(python, no_compiler, tmp_path, "-c", "import ember; print(ember.__file__)")

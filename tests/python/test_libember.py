"""The C++ distribution (`make libember`): examples/cpp builds against the
unpacked archive and runs, with no Python package on any search path."""

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "release"


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None, reason="cmake/ninja missing")
@pytest.mark.skipif(not (BUILD / "lib" / "libember_cpu.so").exists(), reason="needs the build of `make build`")
def test_examples_cpp_builds_and_runs_against_libember(tmp_path):
    packed = subprocess.run([sys.executable, str(ROOT / "tools" / "build" / "libember.py"), str(BUILD), "-o",
                             str(tmp_path / "dist")], capture_output=True, text=True, timeout=900)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    archive = Path(packed.stdout.strip().splitlines()[-1])
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "unpacked")
    assert "libember/ember/share/cmake/Ember/EmberConfig.cmake" in names
    assert not any("libember_python" in n or "/_C." in n for n in names)
    prefix = tmp_path / "unpacked" / "libember"
    # No virtual environment, PYTHONPATH or LD_LIBRARY_PATH: only the archive.
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV")}
    build = tmp_path / "build"
    cfg = subprocess.run(["cmake", "-S", str(ROOT / "examples" / "cpp"), "-B", str(build), "-G", "Ninja",
                          f"-DCMAKE_PREFIX_PATH={prefix}"], capture_output=True, text=True, env=env, timeout=300)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    assert f"in {prefix}" in cfg.stdout
    bld = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True, env=env, timeout=600)
    assert bld.returncode == 0, bld.stdout + bld.stderr
    exe = build / "ember_example"
    deps = subprocess.run(["ldd", str(exe)], capture_output=True, text=True, env=env).stdout
    assert "libpython" not in deps and "not found" not in deps, deps
    # Its dependencies load from the archive too (those this build links).
    built = subprocess.run(["ldd", str(BUILD / "lib" / "libember_cpu.so")], capture_output=True, text=True).stdout
    wanted = ["libember_cpu.so"] + [lib for lib in ("libdnnl.so.3", "libscipy_openblas.so") if lib in built]
    for lib in wanted:
        assert str(prefix / "ember" / "lib" / lib) in deps, deps
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith("OK")

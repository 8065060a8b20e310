"""Packs the C++ distribution (as PyTorch's libtorch archive):

    libember/ember/include/ember/...       headers (generated ones included)
    libember/ember/lib/libember_*.so       the C++ libraries, no Python layer and no
                                           CUDA backend (a CPU distribution: cuBLAS
                                           alone would add 600 MB)
    libember/ember/lib/libdnnl.so.3, libscipy_openblas.so
                                           their dependencies, found through $ORIGIN
    libember/ember/share/cmake/Ember/      EmberConfig.cmake for find_package(Ember)

A C++ project points CMAKE_PREFIX_PATH at libember/ (CMake looks in
<prefix>/ember/share/cmake/Ember). Usage:

    python tools/build/libember.py [BUILD_DIR] [-o dist]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Files of the installed package that belong to the Python layer.
PYTHON_ONLY = re.compile(r"^(_C\..*|.*\.py|.*\.pyi|libember_python\.so.*)$")
CUDA_ONLY = re.compile(r"^libember_cuda\.so.*$")
DEPENDENCIES = ("libdnnl.so", "libscipy_openblas")


def dependency_paths(library: Path) -> list[Path]:
    """Where the loader finds oneDNN and OpenBLAS for `library` (ldd's answer)."""
    out = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m and m.group(1).startswith(DEPENDENCIES):
            found.append((m.group(1), Path(m.group(2))))
    return found


def pack(build_dir: Path, out_dir: Path) -> Path:
    version = (ROOT / "VERSION").read_text().strip()
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / "stage"
        subprocess.run(["cmake", "--install", str(build_dir), "--prefix", str(stage)], check=True,
                       stdout=subprocess.DEVNULL)
        top = Path(tmp) / "libember" / "ember"
        top.mkdir(parents=True)
        for part in ("include", "share"):
            shutil.copytree(stage / "ember" / part, top / part)
        (top / "lib").mkdir()
        for lib in (stage / "ember" / "lib").iterdir():
            if not PYTHON_ONLY.match(lib.name) and not CUDA_ONLY.match(lib.name):
                shutil.copy2(lib, top / "lib" / lib.name, follow_symlinks=False)
        # The build tree's copy has absolute RUNPATHs, so ldd finds the dependencies.
        for name, path in dependency_paths(build_dir / "lib" / "libember_cpu.so"):
            shutil.copy2(path.resolve(), top / "lib" / name)
        out_dir.mkdir(parents=True, exist_ok=True)
        archive = out_dir / f"libember-{version}.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(Path(tmp) / "libember", arcname="libember")
    return archive


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir", nargs="?", default=str(ROOT / "build" / "release"))
    ap.add_argument("-o", "--out", default=str(ROOT / "dist"))
    args = ap.parse_args()
    print(pack(Path(args.build_dir), Path(args.out)))


if __name__ == "__main__":
    main()

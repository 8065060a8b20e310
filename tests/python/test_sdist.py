"""The sdist (`python -m build --sdist`, `make sdist`) carries what a wheel
build needs and nothing of a local build. Building a wheel from it in a clean
environment is `make sdist-wheel` (too long for CI)."""

import importlib.metadata
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_sdist_holds_the_sources_and_no_build_outputs(tmp_path):
    # The `build` distribution, not the build/ folder of a checkout (a namespace package from the cwd).
    try:
        importlib.metadata.version("build")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("needs the `build` package (make sdist installs it)")
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    (sdist,) = tmp_path.glob("ember-*.tar.gz")
    version = (ROOT / "VERSION").read_text().strip()
    # No git hash: a wheel built from the sdist (no .git) gets the same version.
    assert sdist.name == f"ember-{version}.tar.gz"
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in (
        "pyproject.toml",
        "CMakeLists.txt",
        "VERSION",
        "src/ember/ops/ops.yaml",
        "tools/build/ember_version.py",
        "tools/codegen/main.py",
        "src/ember/extension/include/torch/library.h",
        "python/ember/__init__.py",
    ):
        assert needed in names, needed
    for outside in ("build/", ".venv/", "dist/", "examples/cpp/build/"):
        assert not any(name.startswith(outside) for name in names), outside

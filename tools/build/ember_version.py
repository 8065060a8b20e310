"""Metadata provider for scikit-build-core: the version and the dependencies.

Version: from a git checkout ``X.Y.Z+git<sha7>``; from an sdist (no git) the
plain ``X.Y.Z`` of the VERSION file. EMBER_BUILD_VARIANT (``cpu``, ``cu130``)
leads the local version as in PyTorch's wheels: ``X.Y.Z+cpu`` or, from git,
``X.Y.Z+cpu.git<sha7>``.

Dependencies: the CPU libraries every wheel loads, and for a CUDA variant
(``cu*``) the NVIDIA wheels its libraries find through RUNPATHs: cuBLAS and
NCCL no older than the ones it was built against (build requirements, so
installed in the build environment), cuDNN 9 (opened at run time).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def git_sha(root: Path = ROOT) -> str | None:
    """Full hash of HEAD, or None outside a git checkout."""
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def full_version(root: Path = ROOT) -> str:
    base = (root / "VERSION").read_text().strip()
    sha = git_sha(root)
    parts = [os.environ.get("EMBER_BUILD_VARIANT", "")] + ([f"git{sha[:7]}"] if sha else [])
    local = ".".join(p for p in parts if p)
    return f"{base}+{local}" if local else base


CPU_DEPENDENCIES = [
    "scipy-openblas32",
    "onednn-cpu-gomp>=2023.2",
    "numpy",
    "mkl==2024.2.0; platform_system == 'Linux' and platform_machine == 'x86_64'",
]


def _at_least_built(dist: str) -> str:
    """``dist>=M.N,<M+1`` from the version installed where the wheel is built."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major, minor = version(dist).split(".")[:2]
    except PackageNotFoundError:
        return dist
    return f"{dist}>={major}.{minor},<{int(major) + 1}"


def dependencies(variant: str | None = None) -> list[str]:
    variant = os.environ.get("EMBER_BUILD_VARIANT", "") if variant is None else variant
    if not variant.startswith("cu"):
        return list(CPU_DEPENDENCIES)
    cuda = [
        _at_least_built("nvidia-cublas"),
        _at_least_built(f"nvidia-nccl-cu{variant[2:4]}"),
        f"nvidia-cudnn-cu{variant[2:4]}>=9,<10",
    ]
    return CPU_DEPENDENCIES + [f"{d}; platform_system == 'Linux'" for d in cuda]


def _building_sdist() -> bool:
    # The backend gives providers no hint of the artefact; an sdist carries
    # the plain version so that building from it (no git) agrees with it.
    import inspect

    return any(frame.function == "build_sdist" for frame in inspect.stack())


def dynamic_metadata(field: str, settings: dict | None = None) -> str | list[str]:
    if field == "dependencies":
        return dependencies()
    if field != "version":
        raise ValueError(f"ember_version provides 'version' and 'dependencies', not {field!r}")
    if _building_sdist():
        return (ROOT / "VERSION").read_text().strip()
    return full_version()


if __name__ == "__main__":
    print(full_version())

"""Version provider for scikit-build-core: VERSION file plus the git hash.

From a git checkout the version is ``X.Y.Z+git<sha7>``; from an sdist (no git)
it is the plain ``X.Y.Z`` of the VERSION file. EMBER_BUILD_VARIANT (``cpu``,
``cu130``) leads the local version as in PyTorch's wheels: ``X.Y.Z+cpu`` or,
from git, ``X.Y.Z+cpu.git<sha7>``.
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
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def full_version(root: Path = ROOT) -> str:
    base = (root / "VERSION").read_text().strip()
    sha = git_sha(root)
    parts = [os.environ.get("EMBER_BUILD_VARIANT", "")] + ([f"git{sha[:7]}"] if sha else [])
    local = ".".join(p for p in parts if p)
    return f"{base}+{local}" if local else base


def _building_sdist() -> bool:
    # The backend gives providers no hint of the artefact; an sdist carries
    # the plain version so that building from it (no git) agrees with it.
    import inspect

    return any(frame.function == "build_sdist" for frame in inspect.stack())


def dynamic_metadata(field: str, settings: dict | None = None) -> str:
    if field != "version":
        raise ValueError(f"ember_version provides only 'version', not {field!r}")
    if _building_sdist():
        return (ROOT / "VERSION").read_text().strip()
    return full_version()


if __name__ == "__main__":
    print(full_version())

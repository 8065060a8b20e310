"""Checks the source tree's layout rules and lists every fault:

- a file under src/ember/<layer> includes only the layers its row below names
  (layers point one way: core <- ops <- autograd <- cpu/cuda <- python, and
  core <- ops <- distributed <- python); cuda may also include the kernel
  interfaces of cpu/ (its *Stubs.h headers), whose CUDA entries it fills;
- no source file is longer than MAX_LINES lines.

Usage: python tools/check_layers.py [repo root]; exit status 1 on any fault.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

# Layer (folder under src/ember) -> layers its files may include.
ALLOWED_INCLUDES = {
    "core": {"core"},
    "ops": {"core", "ops"},
    "autograd": {"core", "ops", "autograd"},
    "cpu": {"core", "ops", "autograd", "cpu"},
    "cuda": {"core", "ops", "autograd", "cuda"},
    "distributed": {"core", "ops", "distributed"},
    "extension": {"core", "ops", "autograd", "extension"},
    "python": {"core", "ops", "autograd", "cpu", "distributed", "extension", "python"},
}

# Headers of another layer a layer may include: cuda fills the CUDA entries of
# the stubs that cpu/*Stubs.h declare.
ALLOWED_HEADERS = {"cuda": re.compile(r"ember/cpu/\w*Stubs\.h")}

MAX_LINES = 1500
LENGTH_CHECKED_FOLDERS = ("src", "tools", "python", "tests", "benchmarks", "examples")
LENGTH_CHECKED_SUFFIXES = (".cpp", ".h", ".cu", ".cuh", ".c", ".py")
C_SUFFIXES = (".cpp", ".h", ".cu", ".cuh", ".c")
SKIPPED_FOLDERS = {"build", "output", "__pycache__"}

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def _layer_of_include(path: str, including_file: Path, ember_root: Path) -> str | None:
    """The layer an include names, or None when it is outside Ember's sources.

    Headers directly under ember/ (the generated BuildConfig.h) belong to no
    layer and may be included by all."""
    if path.startswith("ember/"):
        parts = path.split("/")
        return parts[1] if len(parts) > 2 else None
    resolved = (including_file.parent / path).resolve()
    try:
        rel = resolved.relative_to(ember_root.resolve())
    except ValueError:
        return None
    return rel.parts[0] if len(rel.parts) > 1 else None


def include_faults(root: Path) -> list[str]:
    ember_root = root / "src" / "ember"
    faults = []
    for layer_dir in sorted(p for p in ember_root.iterdir() if p.is_dir()):
        layer = layer_dir.name
        allowed = ALLOWED_INCLUDES.get(layer)
        if allowed is None:
            faults.append(f"src/ember/{layer}: a layer missing from ALLOWED_INCLUDES in tools/check_layers.py")
            continue
        for file in sorted(layer_dir.rglob("*")):
            if file.suffix not in C_SUFFIXES or not file.is_file():
                continue
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
            for number, line in enumerate(lines, 1):
                match = _INCLUDE.match(line)
                if not match:
                    continue
                target = _layer_of_include(match.group(1), file, ember_root)
                exception = ALLOWED_HEADERS.get(layer)
                if exception is not None and exception.fullmatch(match.group(1)):
                    continue
                if target is not None and target not in allowed:
                    rel = file.relative_to(root)
                    faults.append(f"{rel}:{number}: {layer} may not include {target}/ ({match.group(1)})")
    return faults


def length_faults(root: Path, max_lines: int = MAX_LINES) -> list[str]:
    faults = []
    for folder in LENGTH_CHECKED_FOLDERS:
        for dirpath, dirnames, filenames in os.walk(root / folder):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_FOLDERS and not d.startswith("."))
            for name in sorted(filenames):
                if not name.endswith(LENGTH_CHECKED_SUFFIXES):
                    continue
                file = Path(dirpath) / name
                with open(file, "rb") as f:
                    count = sum(1 for _ in f)
                if count > max_lines:
                    faults.append(f"{file.relative_to(root)}: {count} lines, more than {max_lines}")
    return faults


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    faults = include_faults(root) + length_faults(root)
    for fault in faults:
        print(fault)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

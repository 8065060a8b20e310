"""Lists the pointwise operators of ops.yaml (entries with `pointwise:`)
that have no CUDA kernel, and prints their count.

A CUDA kernel is registered in src/ember/cuda/ with
EMBER_REGISTER_CUDA_POINTWISE(op, fn) (cuda/kernels/Register.h) or one of
the kernel-file macros that expand to it; overloads share their operator's
stub, so an operator counts once.

Usage: python tools/cuda_pointwise_coverage.py [repo root]; exit status 1
when any operator lacks a CUDA kernel.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

# Macros whose first argument is the operator a kernel is registered for.
_DIRECT = re.compile(
    r"\b(?:EMBER_REGISTER_CUDA_POINTWISE|EMBER_CUDA_UNARY_KERNEL(?:_NAMED)?|EMBER_CUDA_BINARY_KERNEL|"
    r"EMBER_COMPARE_KERNEL|EMBER_ACT_KERNEL|EMBER_BINARY_KERNEL|EMBER_SPECIAL_KERNEL|EMBER_UNARY_KERNEL|EMBER_TO_BOOL_KERNEL|EMBER_ARITH_KERNEL|EMBER_KERNEL)\(\s*(\w+)\s*[,)]"
)
_PREFIXED = re.compile(r"\bEMBER_POLYNOMIAL_KERNEL\(\s*(\w+)\s*,")  # registers special_<name>
# Entries of an X-macro list of operators: `_(name, expression)` lines.
_LIST_ENTRY = re.compile(r"^\s*_\((\w+),", re.MULTILINE)
_MACRO_PARAMS = {"op", "name"}  # parameter names inside macro definitions


def pointwise_ops(root: Path) -> list[str]:
    entries = yaml.safe_load((root / "src/ember/ops/ops.yaml").read_text())
    names: list[str] = []
    for e in entries:
        if isinstance(e, dict) and "pointwise" in e:
            name = e["func"].split("(", 1)[0].split(".", 1)[0]
            if name not in names:
                names.append(name)
    return names


def cuda_registered(root: Path) -> set[str]:
    found: set[str] = set()
    for path in sorted((root / "src/ember/cuda").rglob("*")):
        if path.suffix not in (".cu", ".cpp", ".cuh"):
            continue
        text = path.read_text()
        found.update(_DIRECT.findall(text))
        found.update("special_" + n for n in _PREFIXED.findall(text))
        found.update(_LIST_ENTRY.findall(text))
    return found - _MACRO_PARAMS


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    ops = pointwise_ops(root)
    registered = cuda_registered(root)
    missing = [op for op in ops if op not in registered]
    for op in missing:
        print(f"no CUDA kernel: {op}")
    print(f"{len(ops) - len(missing)} of {len(ops)} pointwise operators have a CUDA kernel; {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

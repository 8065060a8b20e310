"""The source tree's rules: layers include only the layers below them, no
source file is over 1,500 lines, and ruff finds nothing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_checker():
    spec = importlib.util.spec_from_file_location("check_layers", ROOT / "tools" / "check_layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_layers = _load_checker()


def test_layers_point_one_way():
    assert check_layers.include_faults(ROOT) == []


def test_no_source_file_over_the_length_limit():
    assert check_layers.length_faults(ROOT) == []


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_check_finds_upward_includes(tmp_path):
    ember = tmp_path / "src" / "ember"
    _write(ember / "core" / "Fine.h", '#include "ember/core/Other.h"\n#include "ember/BuildConfig.h"\n')
    _write(ember / "core" / "Up.h", '#include <vector>\n#include "ember/ops/Tensor.h"\n')
    _write(ember / "ops" / "native" / "Kernel.cpp", '// x\n#include <ember/cpu/Stubs.h>\n')
    _write(ember / "autograd" / "Relative.cpp", '#include "../python/PyTensor.h"\n')
    _write(ember / "python" / "Binding.cpp", '#include "ember/cpu/IndexStubs.h"\n#include "ember/autograd/Node.h"\n')
    assert check_layers.include_faults(tmp_path) == [
        "src/ember/autograd/Relative.cpp:1: autograd may not include python/ (../python/PyTensor.h)",
        "src/ember/core/Up.h:2: core may not include ops/ (ember/ops/Tensor.h)",
        "src/ember/ops/native/Kernel.cpp:2: ops may not include cpu/ (ember/cpu/Stubs.h)",
    ]


def test_check_names_a_layer_missing_from_its_table(tmp_path):
    _write(tmp_path / "src" / "ember" / "metal" / "Kernel.cpp", '#include "ember/core/Error.h"\n')
    faults = check_layers.include_faults(tmp_path)
    assert faults == ["src/ember/metal: a layer missing from ALLOWED_INCLUDES in tools/check_layers.py"]


def test_check_finds_long_files(tmp_path):
    _write(tmp_path / "python" / "long.py", "x = 1\n" * 1501)
    _write(tmp_path / "python" / "limit.py", "x = 1\n" * 1500)
    _write(tmp_path / "src" / "ember" / "cpu" / "Long.cpp", "//\n" * 1600)
    _write(tmp_path / "examples" / "build" / "Generated.cpp", "//\n" * 1600)
    _write(tmp_path / "tests" / "notes.txt", "x\n" * 1600)
    assert check_layers.length_faults(tmp_path) == [
        "src/ember/cpu/Long.cpp: 1600 lines, more than 1500",
        "python/long.py: 1501 lines, more than 1500",
    ]


def test_ruff_finds_nothing():
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (requirements-test.txt installs it)")
    folders = ["python", "tools", "tests", "benchmarks", "examples"]
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *folders],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_clang_format_finds_nothing():
    """src/ is formatted with the pinned clang-format (requirements-test.txt) and .clang-format."""
    binary = Path(sys.executable).with_name("clang-format")
    if not binary.exists():
        pytest.skip("clang-format is not installed (requirements-test.txt installs it)")
    files = sorted(str(p) for p in (ROOT / "src").rglob("*") if p.suffix in (".cpp", ".h", ".cu", ".cuh"))
    result = subprocess.run(
        [str(binary), "--dry-run", "--Werror", *files], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr[-4000:]

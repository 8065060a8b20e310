"""The GPU check's host side: the summary tools/gpu_check.sh writes from
pytest's JUnit XML, and tests/cuda skipping with its reason where Ember's
CUDA backend has no device."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ember

ROOT = Path(__file__).resolve().parents[2]


def _summary_module():
    spec = importlib.util.spec_from_file_location("gpu_check_summary", ROOT / "tools" / "gpu_check_summary.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="6">
<testcase classname="test_opdb" name="test_values[add-float32]"/>
<testcase classname="test_opdb" name="test_values[sub-float32]"/>
<testcase classname="test_opdb" name="test_values[exp-float16]">
  <failure message="AssertionError: exp[float16] ember cuda vs ember cpu: Tensor-likes are not close!">trace</failure>
</testcase>
<testcase classname="test_opdb" name="test_values[cumsum-float32]">
  <skipped type="pytest.xfail" message="no CUDA kernel for cumsum"/>
</testcase>
<testcase classname="test_opdb" name="test_values[cumsum-float64]">
  <skipped type="pytest.xfail" message="no CUDA kernel for cumsum"/>
</testcase>
<testcase classname="test_programs" name="test_cnn_autocast_bf16">
  <skipped type="pytest.skip" message="torch 2.13.0 has no CUDA device: no comparison"/>
</testcase>
</testsuite></testsuites>
"""


def test_summary_counts_failures_and_missing_kernels(tmp_path):
    xml = tmp_path / "tests.xml"
    xml.write_text(JUNIT)
    log = tmp_path / "tests.log"
    log.write_text("collected 6 items\n=== 1 failed, 2 passed, 1 skipped, 2 xfailed in 3.2s ===\n")
    text = _summary_module().summarise(str(xml), str(log))
    lines = text.splitlines()
    assert lines[0] == "  2 passed, 1 failed, 0 error, 2 xfailed, 1 skipped"
    assert "  skipped 1: torch 2.13.0 has no CUDA device: no comparison" in lines
    assert any("test_values[exp-float16]: AssertionError: exp[float16] ember cuda vs ember cpu" in ln for ln in lines)
    assert "  operators without a CUDA kernel (1):" in lines
    assert "    cumsum" in lines
    assert lines[-1] == "  log: === 1 failed, 2 passed, 1 skipped, 2 xfailed in 3.2s ==="


def test_summary_without_results(tmp_path):
    text = _summary_module().summarise(str(tmp_path / "missing.xml"), str(tmp_path / "missing.log"))
    assert text.splitlines()[0].startswith("  no test results")
    assert "0 passed, 0 failed" in text


@pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present: tests/cuda runs for real")
def test_cuda_tests_skip_with_reason(tmp_path):
    """Without a device every test under tests/cuda is skipped, and the reason says why."""
    env = dict(os.environ, CI="true")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "tests" / "cuda" / "test_programs.py"), "-p", "no:cacheprovider",
         "-rs", "-o", "addopts=", "--junitxml", str(tmp_path / "r.xml")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "passed" not in proc.stdout.splitlines()[-1], proc.stdout[-500:]
    reason = "Ember was built without CUDA" if not ember.cuda._is_compiled() else "no CUDA device"
    assert "SKIPPED [" in proc.stdout and reason in proc.stdout, proc.stdout[-1000:]
    assert "ember cuda: not available" in proc.stdout


@pytest.mark.parametrize("model", ["cnn", "transformer"])
def test_training_programs_on_cpu(model):
    """tests/cuda/test_programs.py's programs, run on the CPU here (autocast bf16 + GradScaler):
    the harness works and Ember prints torch's losses to bf16 precision."""
    spec = importlib.util.spec_from_file_location("cuda_programs", ROOT / "tests" / "cuda" / "test_programs.py")
    programs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(programs)
    torch = pytest.importorskip("torch")
    build, shape = {"cnn": (programs._cnn, (4, 3, 16, 16)), "transformer": (programs._transformer, (4, 8, 32))}[model]
    mine = programs.train(ember, build, shape, "cpu")
    theirs = programs.train(torch, build, shape, "cpu")
    assert len(mine) == programs.STEPS
    for m, t in zip(mine, theirs):
        lm, lt = float(m.split()[3]), float(t.split()[3])
        assert abs(lm - lt) <= programs.LOSS_RTOL * abs(lt), f"ember: {m} | torch: {t}"
        assert m.split()[5] == t.split()[5], f"ember: {m} | torch: {t}"


CRASH = "worker 'gw8' crashed while running 'tests/cuda/test_opdb.py::test_values[pow-uint8]'"
CRASHED_JUNIT = f"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="2">
<testcase classname="tests.cuda.test_opdb" name="test_values[add-float32]"/>
<testcase classname="tests.cuda.test_opdb" name="test_values[pow-uint8]">
  <error message="failed on setup with &quot;{CRASH}&quot;">{CRASH}</error>
</testcase>
</testsuite></testsuites>
"""


def test_summary_names_every_crashed_test(tmp_path):
    """Crashes reported in the XML and those only in the log are all named, beyond the failure cap."""
    xml = tmp_path / "tests.xml"
    xml.write_text(CRASHED_JUNIT)
    log = tmp_path / "tests.log"
    log.write_text(
        "replacing crashed worker gw8\n"
        "[gw3] node down: worker 'gw3' crashed while running 'tests/cuda/test_opdb.py::test_values[bce-float16]'\n"
        "=== 1 passed, 1 error in 2.0s ===\n"
    )
    module = _summary_module()
    module.MAX_SHOWN = 0  # the crash list is not capped with the failures
    lines = module.summarise(str(xml), str(log)).splitlines()
    at = lines.index("  crashed (2):")
    assert lines[at + 1 : at + 3] == [
        "    tests/cuda/test_opdb.py::test_values[bce-float16]",
        "    tests/cuda/test_opdb.py::test_values[pow-uint8]",
    ]


def test_summary_without_crashes_has_no_crash_list(tmp_path):
    xml = tmp_path / "tests.xml"
    xml.write_text(JUNIT)
    text = _summary_module().summarise(str(xml), str(tmp_path / "missing.log"))
    assert "crashed" not in text


def test_gpu_check_survives_plugins_and_crashes():
    """pytest-benchmark is kept out and crashed workers are replaced without limit."""
    script = (ROOT / "tools" / "gpu_check.sh").read_text()
    assert "-p no:benchmark" in script
    assert "--max-worker-restart" in script


def _plugin_fixture_params():
    """Test parameters under tests/cuda named like a fixture of a pytest plugin
    on the GPU machine (pytest-benchmark's `benchmark` stopped a whole run)."""
    import ast

    reserved = {"benchmark", "benchmark_weave"}
    found = []
    for path in sorted((ROOT / "tests" / "cuda").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                found += [f"{path.name}::{node.name}({a.arg})" for a in node.args.args if a.arg in reserved]
    return found


def test_cuda_tests_use_no_plugin_fixture_names():
    assert _plugin_fixture_params() == []


def _cuda_compare_module():
    spec = importlib.util.spec_from_file_location("cuda_compare", ROOT / "tests" / "cuda" / "cuda_compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_same_exception_needs_type_and_message():
    """A CUDA-only refusal passes only where torch's CUDA raises the same type and message."""
    same = _cuda_compare_module().same_exception
    msg = "\"addmm_cuda\" not implemented for 'Int'"
    assert same(NotImplementedError(msg), NotImplementedError(msg))
    assert not same(NotImplementedError(msg), RuntimeError(msg))
    assert not same(NotImplementedError(msg), NotImplementedError(msg.replace("Int", "Long")))
    assert not same(NotImplementedError(msg), None)

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
    text = _summary_module().summarise(str(tmp_path / "no-results.tsv"), str(xml), str(log))
    lines = text.splitlines()
    assert lines[0] == "  2 passed, 1 failed, 2 xfailed, 1 skipped"
    assert "  skipped 1: torch 2.13.0 has no CUDA device: no comparison" in lines
    assert "        1 x AssertionError: exp[float16] ember cuda vs ember cpu: Tensor-likes are not close!" in lines
    assert "  operators without a CUDA kernel (1):" in lines
    assert "    cumsum" in lines
    assert lines[-1] == "  log: === 1 failed, 2 passed, 1 skipped, 2 xfailed in 3.2s ==="


# What tests/cuda/conftest.py appends as tests end (EMBER_CUDA_RESULTS).
RESULTS = (
    "passed\ttests/cuda/test_opdb.py::test_values[add-float32]\t\n"
    "failed\ttests/cuda/test_opdb.py::test_values[abs-float32]\t"
    "AssertionError: abs[float32,s0] ember cuda vs torch cuda: strides (1,) != (2,)\n"
    "failed\ttests/cuda/test_opdb.py::test_values[neg-float64]\t"
    "AssertionError: neg[float64,s3] ember cuda vs torch cuda: strides (4,) != (5,)\n"
    "failed\ttests/cuda/test_opdb.py::test_values[exp-float16]\tRuntimeError: CUDA error: invalid argument\n"
    "cuda-error\ttests/cuda/test_opdb.py::test_values[take-int64]\t"
    "the CUDA context broke during this test: RuntimeError: CUDA error: an illegal memory access\n"
    "error\ttests/cuda/test_opdb.py::test_values[take-int64]\t"
    "worker 'gw3' crashed while running 'tests/cuda/test_opdb.py::test_values[take-int64]'\n"
    "xfailed\ttests/cuda/test_opdb.py::test_values[cumsum-float32]\tno CUDA kernel for aten::cumsum\n"
)


def test_summary_groups_failures_by_cause(tmp_path):
    """One line per cause (case names and numbers folded), most frequent first; the tests
    that broke the CUDA context or crashed their worker listed apart."""
    results = tmp_path / "results.tsv"
    results.write_text(RESULTS)
    text = _summary_module().summarise(str(results), str(tmp_path / "missing.xml"), str(tmp_path / "missing.log"))
    lines = text.splitlines()
    assert lines[0] == "  1 passed, 3 failed, 1 error, 1 cuda-error, 1 xfailed"
    assert "  broke the CUDA context (1):" in lines
    assert "  crashed their worker (1):" in lines
    assert "    tests/cuda/test_opdb.py::test_values[take-int64]" in lines
    assert "  failures by cause (3 in 2 groups, first 2):" in lines
    strides = lines.index("        2 x AssertionError: abs[float32,s0] ember cuda vs torch cuda: strides (1,) != (2,)")
    assert lines[strides + 2] == "        1 x RuntimeError: CUDA error: invalid argument"
    assert "    aten::cumsum" in lines


def test_summary_without_results(tmp_path):
    missing = [str(tmp_path / name) for name in ("missing.tsv", "missing.xml", "missing.log")]
    text = _summary_module().summarise(*missing)
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
    module.MAX_GROUPS = 0  # the crash list is not capped with the failures
    lines = module.summarise(str(tmp_path / "no-results.tsv"), str(xml), str(log)).splitlines()
    at = lines.index("  crashed their worker (2):")
    assert lines[at + 1 : at + 3] == [
        "    tests/cuda/test_opdb.py::test_values[bce-float16]",
        "    tests/cuda/test_opdb.py::test_values[pow-uint8]",
    ]


def test_summary_without_crashes_has_no_crash_list(tmp_path):
    xml = tmp_path / "tests.xml"
    xml.write_text(JUNIT)
    text = _summary_module().summarise(str(tmp_path / "no-results.tsv"), str(xml), str(tmp_path / "missing.log"))
    assert "crashed" not in text


def test_gpu_check_survives_plugins_and_crashes():
    """pytest-benchmark is kept out and crashed workers are replaced without limit."""
    script = (ROOT / "tools" / "gpu_check.sh").read_text()
    assert "-p no:benchmark" in script
    assert "--max-worker-restart" in script
    assert "EMBER_CUDA_RESULTS=" in script and "--timeout-method thread" in script


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


def test_cuda_conftest_records_outcomes_as_they_happen(tmp_path):
    """tests/cuda/conftest.py appends each outcome, with the exception's own line, to
    EMBER_CUDA_RESULTS (what the GPU check summarises when a run is cut off)."""
    (tmp_path / "test_sample.py").write_text(
        "import pytest\n"
        "def test_ok():\n    pass\n"
        "def test_bad():\n    assert 1 == 2, 'abs[float32,s0] ember cuda vs torch cuda: values differ'\n"
        "def test_missing():\n    pytest.xfail('no CUDA kernel for aten::foo')\n"
    )
    results = tmp_path / "results.tsv"
    env = dict(os.environ, CI="true", EMBER_CUDA_RESULTS=str(results), EMBER_CUDA_TESTS_DEVICE="cpu")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests" / "cuda"), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(tmp_path / "test_sample.py"), "-p", "conftest", "-p", "no:cacheprovider",
         "-o", "addopts=", "--rootdir", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = [line.split("\t") for line in results.read_text().splitlines()]
    message = "AssertionError: abs[float32,s0] ember cuda vs torch cuda: values differ | assert 1 == 2"
    assert rows == [
        ["passed", "test_sample.py::test_ok", ""],
        ["failed", "test_sample.py::test_bad", message],
        ["xfailed", "test_sample.py::test_missing", "no CUDA kernel for aten::foo"],
    ]

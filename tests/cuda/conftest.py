"""Tests of the CUDA backend. Every test here needs a GPU that Ember's CUDA
backend can use; without one each test is skipped with the reason (no CUDA
build, no driver, no device), so a CPU-only run shows what it did not check.

Results are compared with Ember's CPU result (already held to PyTorch's) and,
where the installed torch has CUDA, with torch's CUDA result directly."""

from __future__ import annotations

import os
import re
import sys

import pytest
from cuda_compare import MISSING_KERNELS, CudaComparer, cuda_skip_reason

import ember

# EMBER_CUDA_TESTS_DEVICE=cpu runs the tests written on _compare.py with Ember
# on the CPU: a check of those tests on a machine without a GPU.
_SKIP_REASON = None if os.environ.get("EMBER_CUDA_TESTS_DEVICE") == "cpu" else cuda_skip_reason()


# EMBER_CUDA_RESULTS=path: one line per test outcome, appended as it happens
# (tab-separated outcome, test id, first lines of the message), so a run cut
# off by its time budget still says what failed and why (tools/gpu_check.sh).
_RESULTS = os.environ.get("EMBER_CUDA_RESULTS")


def _record(outcome, nodeid, message=""):
    if not _RESULTS:
        return
    # pytest's "E " lines hold the exception; xdist adds a "[gwN] linux -- Python" line.
    lines = [x.strip() for x in str(message).splitlines() if x.strip() and not re.match(r"\[gw\d+\] ", x)]
    errors = [x[1:].strip() for x in lines if x.startswith("E ")]
    text = " | ".join(errors or lines)[:600]
    with open(_RESULTS, "a", encoding="utf-8") as f:  # O_APPEND: whole lines from every process
        f.write(f"{outcome}\t{nodeid}\t{text}\n")
    if outcome in ("failed", "error", "cuda-error"):
        # The whole report (its end: the assertion and values) beside the summary line.
        with open(_RESULTS + ".long", "a", encoding="utf-8") as f:
            f.write(f"==== {outcome} {nodeid}\n{str(message)[-3000:]}\n")


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_cuda: needs a GPU that Ember's CUDA backend can use")


def pytest_runtest_logreport(report):
    """Each test's outcome into EMBER_CUDA_RESULTS, written by the process that
    collects the reports (the controller under pytest-xdist, which also reports
    a crashed worker's test)."""
    if not _RESULTS or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if report.when == "call" or report.outcome != "passed":
        if hasattr(report, "wasxfail"):
            _record("xfailed", report.nodeid, report.wasxfail)
        elif report.outcome == "skipped":
            if report.when != "teardown":
                _record("skipped", report.nodeid, report.longrepr[-1] if isinstance(report.longrepr, tuple) else "")
        elif report.outcome == "failed":
            _record("failed" if report.when == "call" else "error", report.nodeid, report.longreprtext)
        else:
            _record("passed", report.nodeid)


@pytest.fixture(autouse=True)
def _cuda_context_check(request):
    """After each test, a device synchronisation: an asynchronous CUDA error
    (an illegal address, a device-side assertion) is sticky and would fail
    every later test of the process, so it is pinned on the test that caused
    it and the process exits (pytest-xdist starts a fresh worker)."""
    yield
    if _SKIP_REASON or os.environ.get("EMBER_CUDA_TESTS_DEVICE") == "cpu":
        return
    try:
        ember.cuda.synchronize()
    except Exception as err:  # noqa: BLE001 - any failure here means a broken context
        message = f"the CUDA context broke during this test: {type(err).__name__}: {err}"
        _record("cuda-error", request.node.nodeid, message)
        sys.stderr.write(f"\n{request.node.nodeid}: {message}\n")
        sys.stderr.flush()
        os._exit(70)


def pytest_collection_modifyitems(config, items):
    """Every test under tests/cuda requires CUDA; without it each is skipped, visibly."""
    for item in items:
        if "tests/cuda/" not in str(item.fspath).replace("\\", "/"):
            continue
        item.add_marker(pytest.mark.requires_cuda)
        if _SKIP_REASON:
            item.add_marker(pytest.mark.skip(reason=_SKIP_REASON))


def pytest_report_header(config):
    if _SKIP_REASON:
        return f"ember cuda: not available ({_SKIP_REASON})"
    try:
        name = ember.cuda.get_device_name(0)
    except Exception as err:  # noqa: BLE001 - the header must not stop the run
        name = f"name unknown ({type(err).__name__}: {err})"
    return f"ember cuda: {ember.cuda.device_count()} device(s), {name}"


@pytest.fixture(scope="session")
def torch_cuda():
    """The real torch when it has CUDA; else the comparisons that need it skip."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip(f"torch {torch.__version__} has no CUDA device: no comparison with torch's CUDA results")
    return torch


@pytest.fixture
def cuda_compare():
    """compare(fn, *torch_args, tol=None): runs fn(lib, *args) on Ember CUDA,
    Ember CPU and (if available) torch CUDA and asserts that the results agree."""
    return CudaComparer()


def pytest_terminal_summary(terminalreporter):
    """The operators found without a CUDA kernel, with their count."""
    if not MISSING_KERNELS:
        return
    names = sorted(MISSING_KERNELS)
    terminalreporter.section(f"operators without a CUDA kernel: {len(names)}")
    for name in names:
        rows = sorted(MISSING_KERNELS[name])
        terminalreporter.write_line(f"{name}: reached by {len(rows)} case(s), e.g. {rows[0]}")

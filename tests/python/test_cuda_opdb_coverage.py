"""tools/cuda_opdb_coverage.py: the classification of ops.yaml operators from
the CUDA sources, the nesting of profiler events into calls, and the rule that
a composite reaches CUDA only when every call it makes does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tools import cuda_opdb_coverage as cov  # noqa: E402


@pytest.fixture(scope="module")
def classified():
    return cov.classify(ROOT)


def test_classification_of_known_operators(classified):
    status, by_base = classified
    assert status["add.Tensor"][:2] == ("generic", True)  # served by cuda/RegisterGeneric.cpp
    assert status["sum"][:2] == ("generic", True)  # ops.yaml names sum_out for CUDA
    assert status["index_select"][:2] == ("kernel", True)  # kernels/IndexKernels.cu fills its entry
    assert status["exp"][:2] == ("pointwise", True)
    assert status["reshape"][:2] == ("composite", True)
    assert status["_fft_c2c"][:2] == ("kernel", True)  # cuda/fft/SpectralOps.cpp fills its entry
    assert status["mkldnn_rnn_layer"][:2] == ("missing", False)  # a oneDNN operator, CPU only
    assert "add.Tensor" in by_base["add"]


def test_a_generic_function_needs_cuda_kernels_for_its_stubs(tmp_path):
    bodies = {
        "front_out": [(tmp_path / "a.cpp", "{ helper(x); cpu::known_stub(it); }")],
        "helper": [(tmp_path / "a.cpp", "{ cpu::unknown_stub(it); }")],
    }
    faults = cov.generic_faults("front_out", bodies, {"known_stub"}, data=False)
    assert faults == ["helper: unknown_stub has no CUDA kernel"]
    assert cov.generic_faults("front_out", bodies, {"known_stub", "unknown_stub"}, data=False) == []


def test_events_nest_by_time_span():
    events = [
        ("aten::outer", 0.0, 10.0, 0, []),
        ("aten::inner", 1.0, 2.0, 0, []),
        ("aten::deep", 1.5, 1.8, 0, []),
        ("aten::second", 3.0, 4.0, 0, []),
        ("aten::next", 11.0, 12.0, 0, []),
    ]
    assert cov.nest(events) == [
        ("outer", [("inner", [("deep", [])]), ("second", [])]),
        ("next", []),
    ]


def test_a_composite_reaches_cuda_when_all_its_calls_do():
    status = {
        "comp": ("composite", True, ""),
        "good": ("kernel", True, ""),
        "bad": ("missing", False, "CPU kernel only"),
        "bad.other": ("kernel", True, ""),
    }
    by_base = {"comp": ["comp"], "good": ["good"], "bad": ["bad", "bad.other"]}
    gaps = {}
    assert cov.reaches(("comp", [("good", [])]), status, by_base, gaps)
    assert not cov.reaches(("comp", [("good", []), ("bad", [])]), status, by_base, gaps)
    assert gaps == {"bad": status["bad"]}  # one overload without a kernel fails the name
    # A direct kernel reaches CUDA whatever its CPU implementation calls.
    assert cov.reaches(("good", [("bad", [])]), status, by_base, {})


def test_host_entries_are_counted_apart(classified):
    status, _ = classified
    assert status["_linalg_lapack_getrf"][:2] == ("host", True)  # cuda/HostLinalg.cpp
    hosts = set()
    by_base = {"_linalg_lapack_getrf": ["_linalg_lapack_getrf"]}
    assert cov.reaches(("_linalg_lapack_getrf", []), status, by_base, {}, hosts)
    assert hosts == {"_linalg_lapack_getrf"}

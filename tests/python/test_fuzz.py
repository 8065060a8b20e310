"""A short fixed-seed run of the differential fuzzer (tools/fuzz/fuzz.py):
no call may crash Ember, hang it, or leave a Python error behind. The other
classes (values that differ, calls PyTorch refuses and Ember accepts, other
exception types) are reported, not asserted."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_fuzz_short_run(tmp_path):
    out = tmp_path / "fuzz.json"
    cmd = [sys.executable, str(ROOT / "tools" / "fuzz" / "fuzz.py"), "--seeds", "0", "1", "2", "--calls", "3000",
           "--batch", "500", "--timeout", "20", "--json", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    report = json.loads(out.read_text())
    summary = report["summary"]
    print(json.dumps(summary))
    bad = [f for f in report["findings"] if f["class"] in ("crash", "hang", "leaked")]
    assert summary["calls"] == 9000
    assert not bad, "\n".join(f"{f['class']}: {f['code']}  {json.dumps(f['detail'])}" for f in bad)


def test_svd_results_compared_by_their_invariants():
    # Two valid SVDs of a rank-one matrix whose null-space vectors differ:
    # the singular values and U diag(S) V^H agree, so the fuzzer calls them equal.
    sys.path.insert(0, str(ROOT / "tools" / "fuzz"))
    import fuzz
    from conftest import torch

    a = torch.full((3, 4), 0.5, dtype=torch.float64)
    u, s, vh = torch.linalg.svd(a)
    q = torch.linalg.qr(torch.randn(2, 2, dtype=torch.float64)).Q
    u2, vh2 = u.clone(), vh.clone()
    u2[:, 1:3] = u[:, 1:3] @ q
    vh2[1:3] = q.mT @ vh[1:3]
    assert not torch.allclose(u, u2)
    code = "torch.linalg.svd(x)"
    one = fuzz._normalize(fuzz._svd_invariants(code, (u, s, vh)))
    two = fuzz._normalize(fuzz._svd_invariants(code, (u2, s, vh2)))
    assert fuzz.same(one, two)
    # A wrong factor is still a difference.
    bad = fuzz._normalize(fuzz._svd_invariants(code, (u2, s * 2, vh2)))
    assert not fuzz.same(one, bad)

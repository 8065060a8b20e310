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

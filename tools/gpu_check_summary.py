"""Summarises a pytest run of tests/cuda for tools/gpu_check.sh: the count of
each outcome, the failures grouped by their message (numbers and bracketed
case names folded, so one cause is one line, with its count and an example),
the tests that broke the CUDA context or crashed their worker, the operators
without a CUDA kernel, and the log's last lines. The outcomes come from the
results file that tests/cuda/conftest.py appends to as each test ends, so a
run cut off by its time budget is summarised too; the JUnit XML is used when
that file is empty.
Usage: gpu_check_summary.py results.tsv tests.xml tests.log"""

from __future__ import annotations

import collections
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

MAX_GROUPS = 40
# pytest-xdist's words for a test whose worker process died (a segfault, an abort).
CRASHED = re.compile(r"worker '[^'\n]+' crashed while running '([^'\n]+)'")
ORDER = ("passed", "failed", "error", "cuda-error", "xfailed", "skipped")


def read_results(path):
    """(outcome, test id, message) for each line of the results file."""
    rows = []
    text = Path(path).read_text(errors="replace") if Path(path).exists() else ""
    for line in text.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3:
            rows.append(tuple(parts))
    return rows


def read_junit(path):
    """The same rows from a JUnit XML file (empty when it is missing)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return []
    rows = []
    for case in root.iter("testcase"):
        nodeid = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome, message = "passed", ""
        for child in case:
            text = child.get("message") or child.text or ""
            if child.tag in ("failure", "error"):
                outcome, message = ("failed" if child.tag == "failure" else "error"), text
            elif child.tag == "skipped":
                outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
                message = text
        rows.append((outcome, nodeid, " | ".join(x.strip() for x in message.splitlines() if x.strip())[:600]))
    return rows


def cause(message):
    """A failure message with what varies between cases of one cause folded:
    the file position, bracketed case names, numbers."""
    m = re.sub(r"^\S+\.py:\d+: ", "", message)
    m = re.sub(r"\S*\[[^\]]*\]", "<case>", m)
    m = re.sub(r"0x[0-9a-f]+", "0x.", m)
    m = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", m)
    return m[:160]


def summarise(results_path, xml_path, log_path):
    rows = read_results(results_path) or read_junit(xml_path)
    lines = []
    if not rows:
        lines.append("  no test results")
    counts = collections.Counter(outcome for outcome, _, _ in rows)
    lines.append("  " + ", ".join(f"{counts[k]} {k}" for k in ORDER if counts[k] or k in ORDER[:2]))
    skip_reasons = collections.Counter(msg for outcome, _, msg in rows if outcome == "skipped")
    for reason, n in skip_reasons.most_common(3):
        lines.append(f"  skipped {n}: {reason[:200]}")
    broke = [(nodeid, msg) for outcome, nodeid, msg in rows if outcome == "cuda-error"]
    if broke:
        lines.append(f"  broke the CUDA context ({len(broke)}):")
        lines += [f"    {nodeid}: {msg[:200]}" for nodeid, msg in broke]
    log = Path(log_path).read_text(errors="replace") if Path(log_path).exists() else ""
    crashed = sorted(set(CRASHED.findall(log)) | {c for _, _, msg in rows for c in CRASHED.findall(msg)})
    if crashed:
        lines.append(f"  crashed their worker ({len(crashed)}):")
        lines += [f"    {c}" for c in crashed]
    groups = collections.defaultdict(list)
    for outcome, nodeid, msg in rows:
        if outcome in ("failed", "error") and not CRASHED.search(msg):
            groups[cause(msg)].append((nodeid, msg))
    if groups:
        ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))
        n_fail = sum(len(v) for v in groups.values())
        lines.append(f"  failures by cause ({n_fail} in {len(groups)} groups, first {min(len(groups), MAX_GROUPS)}):")
        for _, cases in ranked[:MAX_GROUPS]:
            nodeid, msg = cases[0]
            lines.append(f"    {len(cases):5d} x {msg[:240]}")
            lines.append(f"            e.g. {nodeid.split('::')[-1][:120]}")
    missing = collections.Counter(
        msg.split("no CUDA kernel for ")[-1]
        for outcome, _, msg in rows
        if outcome == "xfailed" and "no CUDA kernel for " in msg
    )
    if missing:
        lines.append(f"  operators without a CUDA kernel ({len(missing)}):")
        lines.append("    " + " ".join(sorted(missing)))
    tail = log.splitlines()[-3:]
    lines += [f"  log: {t.strip()[:200]}" for t in tail if t.strip()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarise(*sys.argv[1:4]))

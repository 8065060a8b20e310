"""Summarises a pytest run for tools/gpu_check.sh: counts of passed, failed,
errors, skipped and expected failures from the JUnit XML, the first line of
each failure (at most MAX_SHOWN), the operators without a CUDA kernel (from
the expected failures' reasons), every test whose worker process crashed
(named in the XML or the log, all of them), and the log's last lines.
Usage: gpu_check_summary.py tests.xml tests.log"""

from __future__ import annotations

import collections
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

MAX_SHOWN = 40
# pytest-xdist's words for a test whose worker process died (a segfault, an abort).
CRASHED = re.compile(r"worker '[^']+' crashed while running '([^']+)'")


def first_line(text):
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def summarise(xml_path, log_path):
    lines = []
    counts = collections.Counter()
    failures = []
    skip_reasons = collections.Counter()
    missing = collections.Counter()  # operator without a CUDA kernel -> cases
    crashed_in_xml = []
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError) as err:
        lines.append(f"  no test results ({err})")
        root = None
    for case in root.iter("testcase") if root is not None else ():
        name = f"{case.get('classname', '')}::{case.get('name', '')}".split(".")[-1]
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                failures.append(f"{name}: {first_line(child.get('message') or child.text)}")
                crashed_in_xml += CRASHED.findall(f"{child.get('message') or ''}\n{child.text or ''}")
            elif child.tag == "skipped":
                xfail = child.get("type") == "pytest.xfail"
                outcome = "xfailed" if xfail else "skipped"
                reason = first_line(child.get("message"))
                if not xfail:
                    skip_reasons[reason] += 1
                elif "no CUDA kernel for " in reason:
                    missing[reason.split("no CUDA kernel for ")[-1]] += 1
        counts[outcome] += 1
    order = ("passed", "failed", "error", "xfailed", "skipped")
    lines.append("  " + ", ".join(f"{counts[k]} {k}" for k in order))
    for reason, n in skip_reasons.most_common(3):
        lines.append(f"  skipped {n}: {reason}")
    if failures:
        lines.append(f"  failures ({len(failures)}, first {min(len(failures), MAX_SHOWN)}):")
        lines += [f"    {f}" for f in failures[:MAX_SHOWN]]
    if missing:
        lines.append(f"  operators without a CUDA kernel ({len(missing)}):")
        lines.append("    " + " ".join(sorted(missing)))
    log = Path(log_path).read_text(errors="replace") if Path(log_path).exists() else ""
    crashed = sorted(set(crashed_in_xml) | set(CRASHED.findall(log)))
    if crashed:
        lines.append(f"  crashed ({len(crashed)}):")
        lines += [f"    {c}" for c in crashed]
    tail = log.splitlines()[-3:]
    lines += [f"  log: {t.strip()[:200]}" for t in tail if t.strip()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarise(sys.argv[1], sys.argv[2]))

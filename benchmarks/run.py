"""Times Ember and PyTorch side by side, in one process, on identical inputs.

    python benchmarks/run.py [--threads 1 2] [--filter REGEX] [--repeat 7]
                             [--json results.json] [--markdown BENCHMARKS.md]
                             [--package]

Each case is timed for both libraries in alternation, `--repeat` times, and
the table reports medians and the ratio Ember/PyTorch (lower is better).
Benchmarks never fail: a case a library cannot run is reported as n/a.
`--package` also builds a wheel from scratch (no ccache) and reports its
build time and size, next to the size of PyTorch's CPU wheel when pip's
find-links folder holds it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import torch  # noqa: E402
from cases import CASES  # noqa: E402

import ember  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def machine() -> dict:
    cpu, flags = platform.processor(), []
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = [f for f in line.split(":", 1)[1].split() if f in ("avx2", "fma", "avx512f", "avx512bw",
                                                                          "avx512_bf16", "amx_tile")]
                break
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    torch_blas = next((ln.strip() for ln in torch.__config__.show().splitlines() if "Math Kernel" in ln
                       or "BLAS" in ln), "unknown")
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "flags": " ".join(flags),
        "ember": ember.__version__,
        "torch": torch.__version__,
        "ember_blas": ember._C._blas_info(),
        "torch_blas": torch_blas,
        "ember_cpu_capability": ember._C._cpu_capability(),
        "commit": commit.strip(),
        "date": time.strftime("%Y-%m-%d"),
    }


def time_once(fn, min_time=0.02) -> float:
    """Seconds per call, calibrating the loop so one timing lasts ~min_time."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time or n >= 1 << 20:
            return dt / n
        n *= 2 if dt == 0 else max(2, int(min_time / dt * 1.2))


def run_case(case, threads: int, repeat: int):
    result = {"group": case.group, "case": case.name, "threads": threads, "target": case.target}
    fns = {}
    for name, lib in (("ember", ember), ("torch", torch)):
        if name == "torch" and case.torch_max_threads is not None and threads > case.torch_max_threads:
            result["torch"], result["torch_error"] = None, f"not run above {case.torch_max_threads} thread(s): it hangs"
            continue
        try:
            lib.set_num_threads(threads)
            fns[name] = case.make(lib)
            fns[name]()  # warm up
        except Exception as e:  # noqa: BLE001
            result[name] = None
            result[name + "_error"] = f"{type(e).__name__}: {e}"[:120]
    times = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in list(fns.items()):
            (ember if name == "ember" else torch).set_num_threads(threads)
            try:
                times[name].append(time_once(fn))
            except Exception as e:  # noqa: BLE001 - a call that fails after the warm-up is n/a too
                result[name + "_error"] = f"{type(e).__name__}: {e}"[:120]
                del fns[name], times[name]
                result[name] = None
    for name in fns:
        result[name] = statistics.median(times[name])
    if result.get("ember") and result.get("torch"):
        result["ratio"] = result["ember"] / result["torch"]
    return result


def import_times(repeat=5) -> dict:
    def best(mod):
        ts = []
        for _ in range(repeat):
            out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {mod}"], capture_output=True,
                                 text=True)
            last = [ln for ln in out.stderr.splitlines() if re.search(rf"\| {mod}$", ln)]
            ts.append(int(last[-1].split("|")[1]) / 1e6 if last else float("nan"))
        return min(ts)

    e, t = best("ember"), best("torch")
    return {"group": "package", "case": "import time (s)", "threads": 1, "ember": e, "torch": t, "ratio": e / t,
            "target": 0.1}


def fmt_time(s):
    if s is None:
        return "n/a"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_value(r, key):
    v = r.get(key)
    if r.get("unit") == "MB":
        return "n/a" if v is None else f"{v / 1e6:.3g} MB"
    return fmt_time(v)


def table(results) -> str:
    lines = ["| group | case | threads | ember | torch | ratio | target |", "|---|---|---|---|---|---|---|"]
    for r in results:
        ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "n/a"
        mark = "" if not r.get("ratio") else (" ok" if r["ratio"] <= r["target"] else " MISS")
        lines.append(f"| {r['group']} | {r['case']} | {r['threads']} | {fmt_value(r, 'ember')} | "
                     f"{fmt_value(r, 'torch')} | {ratio}{mark} | {r['target']} |")
    return "\n".join(lines)


def torch_wheel() -> Path | None:
    """PyTorch's wheel in pip's find-links folders, if it is there."""
    out = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"], capture_output=True,
                         text=True).stdout
    folders = (os.environ.get("PIP_FIND_LINKS", "") + " " + out).split()
    version = torch.__version__.split("+")[0]
    for folder in folders:
        hits = sorted(Path(folder).glob(f"torch-{version}*.whl")) if Path(folder).is_dir() else []
        if hits:
            return hits[0]
    return None


def package_rows() -> list:
    """A clean wheel build of Ember (no ccache): its time and the wheel's size."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CCACHE_DISABLE="1")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp,
                        f"-Cbuild-dir={tmp}/build", str(ROOT)], check=True, env=env)
        seconds = time.perf_counter() - start
        wheel = next(Path(tmp).glob("ember-*.whl"))
        size = wheel.stat().st_size
        with zipfile.ZipFile(wheel) as z:
            cuda = any("libember_cuda" in name for name in z.namelist())
    what = "with the CUDA backend" if cuda else "CPU only"
    peer = torch_wheel()
    peer_size = peer.stat().st_size if peer else None
    return [
        {"group": "package", "case": f"clean wheel build, no ccache, {what} (s)", "threads": os.cpu_count(),
         "ember": seconds,
         "torch": None, "ratio": None, "target": "-"},
        {"group": "package", "case": f"wheel size, {what}", "threads": "-", "unit": "MB", "ember": size,
         "torch": peer_size,
         "ratio": size / peer_size if peer_size else None, "target": 0.1},
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--filter", default="")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--no-import", action="store_true")
    ap.add_argument("--package", action="store_true", help="also time a clean wheel build and compare wheel sizes")
    args = ap.parse_args()

    info = machine()
    results = []
    for threads in args.threads:
        for case in CASES:
            if args.filter and not re.search(args.filter, case.group + " " + case.name):
                continue
            r = run_case(case, threads, args.repeat)
            results.append(r)
            print(f"{r['group']:12s} {r['case']:40s} t={threads} ember {fmt_time(r.get('ember')):>10s} "
                  f"torch {fmt_time(r.get('torch')):>10s} ratio {r.get('ratio', float('nan')):.2f}", flush=True)
    if not args.no_import and not args.filter:
        results.append(import_times())
    if args.package:
        results.extend(package_rows())
    header = "\n".join(f"- {k}: {v}" for k, v in info.items())
    text = f"{header}\n\n{table(results)}\n"
    print("\n" + text)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": info, "results": results}, indent=2))
    if args.markdown:
        Path(args.markdown).write_text("# Benchmarks\n\nRatio = Ember time / PyTorch time (median; lower is better), "
                                       "both timed in one process on identical inputs, alternating.\n"
                                       "Regenerate with `make bench`.\n\n" + text)


if __name__ == "__main__":
    main()

"""Counts the rows of the operator database (tests/python/opdb) that reach a
CUDA kernel, and lists the operators that stop the others.

How a row is judged, without a GPU:
1. The row's samples run on the CPU under Ember's profiler; every operator
   call (aten::NAME events, nested by their time spans) is recorded.
2. Each operator of ops.yaml is classified from the sources:
   - pointwise: its stub has a CUDA kernel (tools/cuda_pointwise_coverage.py);
   - kernel: libember_cuda fills its dispatch table's CUDA entry with a CUDA
     function (`dispatch::NAME_kernels[...] = ...`);
   - generic: the same native function serves the CPU and CUDA (ops.yaml
     names it for CUDA, or libember_cuda serves the CPU entry with
     `serve_cuda`); it runs on CUDA when every stub its body (and the
     same-file functions it calls) reaches has a CUDA kernel, and it touches
     no data directly (`data_ptr`, accessors);
   - host: libember_cuda computes it on the host for CUDA tensors
     (`EMBER_CUDA_HOST_ENTRY`: copies in, the CPU kernel, copies out); it
     reaches CUDA tensors but is no device code, and is counted apart;
   - composite (CompositeImplicitAutograd / CompositeExplicitAutograd): runs
     where the operators it calls run;
   - missing: a CPU kernel only.
3. A call reaches CUDA when its operator is pointwise/kernel/generic and
   covered, or composite and all its nested calls reach CUDA. A row reaches
   CUDA when every outermost call of every sample does.

The profiler names operators without their overload, so an operator name
counts as covered only when every overload of it is.

Usage: python tools/cuda_opdb_coverage.py [--rows] [--ops]; prints the count
last. Exit status 0 (a report, not a gate).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "python"))
sys.path.insert(0, str(ROOT / "tests" / "cuda"))

from cuda_pointwise_coverage import cuda_registered  # noqa: E402

# ---- the sources ---------------------------------------------------------------------

_STUB_CUDA = re.compile(r"\b(\w+_stub)\.cuda\s*=")
_STUB_MACRO = re.compile(r"\bEMBER_REGISTER_CUDA_DISPATCH\(\s*(\w+_stub)\b")
_TABLE_FILL = re.compile(r"\bdispatch::(\w+_kernels)\[[^\]]*\]\s*=[^=]")
_TABLE_ON_HOST = re.compile(r"\bEMBER_CUDA_HOST_ENTRY\(\s*(\w+)\s*,")
_TABLE_SERVED = re.compile(r"\b(?:serve_cuda|EMBER_CUDA_SERVE_GENERIC)\(\s*(?:dispatch::)?(\w+_kernels)\s*\)")
_STUB_USE = re.compile(r"\b(\w+_stub)\b")
_DIRECT_DATA = re.compile(
    r"\bis_meta\(\)|\bto_vector\b|\bitem<|\bdata_ptr\b|\bdata<|\baccessor<|\bparallel_for\b|\bconst_data_ptr\b"
)
_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(")


def cuda_sources(root: Path) -> str:
    return "\n".join(
        p.read_text() for p in sorted((root / "src/ember/cuda").rglob("*")) if p.suffix in (".cu", ".cpp", ".cuh", ".h")
    )


def cuda_stubs(root: Path, text: str) -> set[str]:
    stubs = set(_STUB_CUDA.findall(text)) | set(_STUB_MACRO.findall(text))
    stubs.discard("stub")  # the macro's parameter
    stubs |= {op + "_stub" for op in cuda_registered(root)}
    return stubs


def function_bodies(root: Path) -> dict[str, list[tuple[Path, str]]]:
    """Top-level C++ function definitions of the CPU library: name -> [(file, body)]."""
    bodies: dict[str, list[tuple[Path, str]]] = defaultdict(list)
    head = re.compile(r"^[A-Za-z][\w:<>,&*\s]*?[\s&*]([a-z_][a-z0-9_]*)\(", re.MULTILINE)
    for path in sorted((root / "src/ember").rglob("*.cpp")):
        if "cuda" in path.parts or "python" in path.parts:
            continue
        text = path.read_text()
        for m in head.finditer(text):
            # The body: from the first '{' after the parameter list to its match.
            depth, i = 0, m.end() - 1
            while i < len(text):
                c = text[i]
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        break
                i += 1
            j = i + 1
            while j < len(text) and text[j] not in "{;":
                j += 1
            if j >= len(text) or text[j] == ";":
                continue
            depth, k = 0, j
            while k < len(text):
                if text[k] == "{":
                    depth += 1
                elif text[k] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            bodies[m.group(1)].append((path, text[j : k + 1]))
    return bodies


_OPERATOR_NAMES: set[str] = set()


# Stubs a generic function calls for CPU tensors only (behind an is_cpu() test):
# CUDA tensors take another branch there, so they need no CUDA kernel.
_HOST_ONLY_STUBS = {"complex_row_sum_stub"}  # sum_like in cpu/ReduceOps.cpp


def generic_faults(name: str, bodies, stubs: set[str], depth: int = 5, seen=None, data: bool = True) -> list[str]:
    """Why the native function `name` cannot run on CUDA as it is ([] when it can): a stub it
    reaches without a CUDA kernel, or (with `data`) host access to tensor data, a hint only:
    device-aware functions read pointers to hand them to either device's kernel."""
    seen = set() if seen is None else seen
    if name in seen:
        return []
    seen.add(name)
    if name not in bodies:
        return [f"{name}: definition not found"]
    faults = []
    for path, body in bodies[name]:
        if data and _DIRECT_DATA.search(body):
            faults.append(f"{name} ({path.name}) reads data on the host")
        for stub in sorted(set(_STUB_USE.findall(body))):
            if stub not in stubs and stub not in _HOST_ONLY_STUBS and not stub.startswith("EMBER_"):
                faults.append(f"{name}: {stub} has no CUDA kernel")
        if depth > 0:
            for callee in sorted(set(_CALL.findall(body))):
                # Operators are judged on their own; other functions are followed.
                if callee in bodies and callee != name and callee not in _OPERATOR_NAMES:
                    faults += generic_faults(callee, bodies, stubs, depth - 1, seen, data)
    return faults


def classify(root: Path):
    """Operator full name -> (kind, covered, reason); and base name -> full names."""
    from codegen.cpp import table_name
    from codegen.load import load_operators

    ops = load_operators(root / "src/ember/ops/ops.yaml")
    _OPERATOR_NAMES.update(op.name for op in ops)
    _OPERATOR_NAMES.update(op.name + "_out" for op in ops)
    text = cuda_sources(root)
    stubs = cuda_stubs(root, text)
    pointwise = cuda_registered(root)
    filled = set(_TABLE_FILL.findall(text))
    served = set(_TABLE_SERVED.findall(text))
    on_host = {name + "_kernels" for name in _TABLE_ON_HOST.findall(text)}
    bodies = function_bodies(root)
    out, by_base = {}, defaultdict(list)
    for op in ops:
        full = op.schema.full_name
        by_base[op.name].append(full)
        d = dict(op.dispatch)
        table = table_name(op)
        if op.pointwise is not None:
            ok = op.name in pointwise
            out[full] = ("pointwise", ok, "" if ok else f"{op.name}_stub has no CUDA kernel")
        elif table in on_host:
            out[full] = ("host", True, "computed on the host")
        elif table in filled:
            out[full] = ("kernel", True, "")
        elif "CUDA" in d or table in served:
            fn = d.get("CUDA", d.get("CPU"))
            if "CUDA" in d and d["CUDA"] != d.get("CPU"):
                out[full] = ("kernel", True, "")
                continue
            faults = generic_faults(fn, bodies, stubs, data=False)
            out[full] = ("generic", not faults, "; ".join(faults))
        elif op.composite_implicit or op.composite_explicit:
            out[full] = ("composite", True, "")
        else:
            out[full] = ("missing", False, "CPU kernel only")
    return out, by_base


def candidates(root: Path) -> list[str]:
    """Operators with a CPU kernel only whose native function could serve CUDA as it is."""
    from codegen.load import load_operators

    ops = load_operators(root / "src/ember/ops/ops.yaml")
    status, _ = classify(root)
    text = cuda_sources(root)
    stubs = cuda_stubs(root, text)
    bodies = function_bodies(root)
    found = []
    for op in ops:
        d = dict(op.dispatch)
        full = op.schema.full_name
        if status[full][0] == "missing" and "CPU" in d and d.get("Meta") == d["CPU"]:
            faults = generic_faults(d["CPU"], bodies, stubs)
            found.append(f"{full}: {'generic' if not faults else '; '.join(faults)}")
    return found


# ---- the trace -----------------------------------------------------------------------


def trace_row(row, ember, torch):
    """Outermost operator calls of the row's samples, each a (name, children) tree."""
    from opdb.core import torch_dtype

    from ember import _C

    dtypes = row.dtypes_on("cuda")
    if not dtypes:
        return None
    dtype = "float32" if "float32" in dtypes else dtypes[0]
    fn = row.resolve(ember)
    from cuda_compare import to_ember

    trees = []
    for s in row.samples(torch_dtype(dtype)):
        args, kwargs = to_ember(s.args, "cpu"), to_ember(s.kwargs, "cpu")
        _C._profiler_start(False)
        try:
            fn(*args, **kwargs)
        except Exception:  # noqa: BLE001, S110 - bad-input samples raise; their calls still count
            pass
        finally:
            events = _C._profiler_stop()
        trees += nest(events)
    return trees


def nest(events):
    """Trees of (name, children) from events (name, start, end, thread, shapes) in start order."""
    roots, stack = [], []
    for name, start, end, *_ in events:
        node = (name.removeprefix("aten::"), [])
        while stack and not (stack[-1][1] <= start and end <= stack[-1][2]):
            stack.pop()
        (stack[-1][0][1] if stack else roots).append(node)
        stack.append((node, start, end))
    return roots


def base_status(name, status, by_base):
    """(covered, kind, missing overloads) of a profiler name (an in-place call ends in '_')."""
    fulls = by_base.get(name) or by_base.get(name.removesuffix("_"))
    if not fulls:
        return True, "composite", []  # not an ops.yaml operator: runs its parts
    kinds = {status[f][0] for f in fulls}
    missing = [f for f in fulls if not status[f][1]]
    kind = "composite" if kinds == {"composite"} else "direct"
    return not missing, kind, missing


def reaches(node, status, by_base, gaps, hosts=None):
    """Whether the call reaches CUDA; records the operators without a kernel in
    gaps and those computed on the host in hosts."""
    name, children = node
    covered, kind, missing = base_status(name, status, by_base)
    if hosts is not None:
        hosts.update(
            f for f in by_base.get(name) or by_base.get(name.removesuffix("_")) or [] if status[f][0] == "host"
        )
    if kind == "composite" or (not covered and children and all(status[f][0] == "composite" for f in missing)):
        ok = True
        for c in children:
            ok = reaches(c, status, by_base, gaps, hosts) and ok
        return ok
    if not covered:
        for f in missing:
            gaps[f] = status[f]
    return covered


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", action="store_true", help="list every row with its result")
    ap.add_argument("--ops", action="store_true", help="classify ops.yaml only (no trace)")
    ap.add_argument("--candidates", action="store_true", help="CPU-only operators whose function could serve CUDA")
    opts = ap.parse_args(argv[1:])
    status, by_base = classify(ROOT)
    if opts.candidates:
        for line in candidates(ROOT):
            print(line)
        return 0
    if opts.ops:
        for full, (kind, ok, why) in sorted(status.items()):
            print(f"{full}: {kind}{'' if ok else ' MISSING: ' + why}")
        n = sum(1 for v in status.values() if v[1])
        print(f"{n} of {len(status)} ops.yaml operators reach a CUDA kernel")
        return 0

    import torch
    from opdb import OP_DB

    import ember

    gaps, rows_missing, covered, total, host_rows = {}, defaultdict(list), 0, 0, 0
    for row in OP_DB:
        trees = trace_row(row, ember, torch)
        if trees is None:
            continue
        total += 1
        row_gaps: dict = {}
        row_hosts: set = set()
        ok = all([reaches(t, status, by_base, row_gaps, row_hosts) for t in trees])
        covered += ok
        host_rows += ok and bool(row_hosts)
        for f in row_gaps:
            rows_missing[f].append(row.id)
        gaps.update(row_gaps)
        if opts.rows:
            print(f"{row.id}: {'cuda' if ok else 'MISSING ' + ', '.join(sorted(row_gaps))}")
    print(f"operators the database reaches without a CUDA kernel: {len(gaps)}")
    for f in sorted(gaps, key=lambda f: (-len(rows_missing[f]), f)):
        kind, _, why = gaps[f]
        rows = rows_missing[f]
        print(f"  {f} ({kind}: {why}) <- {len(rows)} row(s): {', '.join(rows[:4])}{' ...' if len(rows) > 4 else ''}")
    print(
        f"{covered} of {total} operator-database rows reach a CUDA kernel ({host_rows} of them through operators "
        f"computed on the host); {total - covered} do not"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

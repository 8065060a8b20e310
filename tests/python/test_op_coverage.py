"""The operator table: every operator of ops.yaml × every dtype × cpu.

Two checks keep a new operator from going untested:
- each public operator has a row in the operator database (tests/python/opdb)
  or a stated reason in its EXCLUDED list;
- every operator whose required arguments are tensors, numbers or a dim is
  called with small inputs of every dtype in Ember and in torch: both must
  raise the same exception type, or give the same dtype, shape and values.
`python tests/python/test_op_coverage.py` prints the table."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest
import yaml
from conftest import DTYPE_NAMES, dtypes, to_torch, torch
from opdb import EXCLUDED, OP_DB

import ember

ROOT = Path(__file__).resolve().parents[2]
OPS_YAML = ROOT / "src" / "ember" / "ops" / "ops.yaml"
# Ops drawing random numbers or building tensors from sizes have their own files.
SKIP_SECTIONS = ("random sampling", "factories")


def load_ops():
    ops, section = [], ""
    lines = OPS_YAML.read_text().splitlines()
    for line in lines:
        if line.startswith("# ----"):
            section = line
        if line.startswith("- func:"):
            ops.append({"section": section, "text": [line]})
        elif ops and line.startswith("  "):
            ops[-1]["text"].append(line)
    result = []
    for op in ops:
        entry = yaml.safe_load("\n".join(op["text"]))[0]
        schema = entry["func"]
        name = schema.split("(")[0]
        base = name.split(".")[0]
        args = schema[schema.index("(") + 1 : schema.rindex(")")].split(") ->")[0]
        result.append(
            {
                "name": name,
                "base": base,
                "args": args,
                "section": op["section"],
                "python": entry.get("python", True) in (True, "manual"),
                "variants": entry.get("variants", "function"),
            }
        )
    return result


OPS = load_ops()
PUBLIC = sorted(
    {op["base"] for op in OPS if op["python"] and not op["base"].startswith("_") and "backward" not in op["base"]}
)


def split_args(args):
    depth, cur, out = 0, "", []
    for ch in args:
        depth += 1 if ch in "[(" else (-1 if ch in "])" else 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def required_args(op):
    """The positional arguments without defaults, as (type, name)."""
    result = []
    for arg in split_args(op["args"]):
        if arg == "*":
            break
        if "=" in arg:
            continue
        typ, name = arg.rsplit(" ", 1)
        result.append((typ, name))
    return result


SAMPLES = {"self": [[0.0, 1.5, -2.0], [3.0, 0.5, 4.0]], "other": [2.0, -1.0, 0.5]}


def tensor_pair(name, dname, i):
    values = SAMPLES.get(name, SAMPLES["other"] if i else SAMPLES["self"])
    if dname == "bool":
        values = (
            [[bool(v) for v in row] for row in values] if isinstance(values[0], list) else [bool(v) for v in values]
        )
    elif dname in ("uint8", "int8", "int16", "int32", "int64"):
        values = (
            [[abs(int(v)) for v in row] for row in values]
            if isinstance(values[0], list)
            else [abs(int(v)) for v in values]
        )
    ed, td = dtypes(dname)
    return ember.tensor(values, dtype=ed), torch.tensor(values, dtype=td)


def build_call(op, dname):
    """(ember args, torch args) or None when the op needs other arguments."""
    if op["name"].endswith("_") or ".out" in op["name"] or op["base"].endswith("_"):
        return None
    if op["base"].startswith("_") or "backward" in op["base"]:
        return None
    if not op["python"] or any(op["section"].find(s) >= 0 for s in SKIP_SECTIONS):
        return None
    e_args, t_args = [], []
    for i, (typ, name) in enumerate(required_args(op)):
        typ = re.sub(r"\(.*?\)", "", typ)
        if typ == "Tensor":
            e, t = tensor_pair(name, dname, i)
        elif typ == "Tensor[]":
            e1, t1 = tensor_pair("self", dname, 0)
            e, t = [e1, e1], [t1, t1]
        elif typ == "Scalar":
            e = t = 2
        elif typ == "int" and name in ("dim", "dim0", "source"):
            e = t = 1 if name != "source" else 0
        elif typ == "int" and name in ("dim1", "destination"):
            e = t = 0 if name == "dim1" else 1
        else:
            return None
        e_args.append(e)
        t_args.append(t)
    return e_args, t_args


def callable_of(lib, op):
    """torch.name, else torch.nn.functional.name, torch.linalg.name or
    torch.special.name (where PyTorch puts those operators), else the Tensor method."""
    base = op["base"]
    if "function" in op["variants"]:
        places = [(lib.nn.functional, base), (lib.linalg, base.removeprefix("linalg_")), (lib, base)]
        if base.startswith("special_"):
            places.insert(0, (lib.special, base.removeprefix("special_")))
        if hasattr(lib._C, "_nn"):  # torch._C._nn.log_sigmoid is F.logsigmoid
            places.insert(1, (lib._C._nn, base))
        elif base == "log_sigmoid":
            places.insert(1, (lib.nn.functional, "logsigmoid"))
        for where, name in places:
            if hasattr(where, name):
                return getattr(where, name)
    return lambda first, *rest: getattr(first, base)(*rest)


def same(e, t):
    if isinstance(t, (tuple, list)):
        return isinstance(e, (tuple, list)) and len(e) == len(t) and all(same(a, b) for a, b in zip(e, t))
    if not isinstance(t, torch.Tensor):
        return e == t or (isinstance(t, float) and math.isnan(t) and math.isnan(e))
    if str(e.dtype) != str(t.dtype) or tuple(e.shape) != tuple(t.shape):
        return False
    got = to_torch(e)
    if t.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        return torch.allclose(got.double(), t.double(), rtol=1e-3, atol=1e-5, equal_nan=True)
    return torch.equal(got, t)


def run_cell(op, dname):
    """'ok', 'raises' (both raise the same type), 'skip', or a failure text."""
    call = build_call(op, dname)
    if call is None:
        return "skip"
    e_args, t_args = call
    results = []
    for lib, args in ((ember, e_args), (torch, t_args)):
        try:
            results.append((callable_of(lib, op)(*args), None))
        except Exception as exc:  # noqa: BLE001 - compared by type below
            results.append((None, exc))
    (e, e_exc), (t, t_exc) = results
    if t_exc is not None or e_exc is not None:
        if t_exc is not None and e_exc is not None and type(e_exc) is type(t_exc):
            return "raises"
        return f"ember {e_exc!r} vs torch {t_exc!r}"
    return "ok" if same(e, t) else f"values differ: ember {e!r} vs torch {t!r}"


CELLS = [(op, d) for op in OPS if build_call(op, "float32") is not None for d in DTYPE_NAMES]


# Cells where Ember differs from PyTorch on purpose, each a strict xfail.
NO_COMPLEX32 = "float16 parts make complex32, which Ember does not have (docs/decisions/0020-complex-dtypes.md)"
BF16_SPECIAL = "bfloat16 rounded once from float; PyTorch's vector loop rounds steps to bfloat16 (a few ulps apart)"
KNOWN_DIFFERENCES = {
    ("complex", "float16"): NO_COMPLEX32,
    ("special_i0e", "bfloat16"): BF16_SPECIAL,
}


def _cell_param(op, d):
    reason = KNOWN_DIFFERENCES.get((op["name"], d))
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(op, d, id=f"{op['name']}-{d}", marks=marks)


@pytest.mark.parametrize("op,dname", [_cell_param(op, d) for op, d in CELLS])
def test_operator_dtype_cell(op, dname):
    result = run_cell(op, dname)
    assert result in ("ok", "raises"), result


def test_every_public_operator_has_a_test():
    """Every public operator of ops.yaml has a row in the operator database
    (tests/python/opdb, run by test_opdb.py) or a reason in its EXCLUDED list."""
    rows = {row.name for row in OP_DB}
    missing = [name for name in PUBLIC if name not in rows and name not in EXCLUDED]
    assert not missing, f"operators without a row in tests/python/opdb: {missing}"


def test_database_names_are_operators():
    """Rows and exclusions name real public operators; an exclusion of an
    operator that has a row is stale."""
    from ember import _nn_toplevel, _ops_grouped, _ops_math, _ops_shape, _ops_views

    rows = {row.name for row in OP_DB}
    # Operators written in Python have rows too, without an ops.yaml entry: ember.linalg's
    # (under PyTorch's operator names), the composites of _ops_math/_ops_shape/_ops_views/_ops_grouped
    # and the top-level functional forms (torch.embedding_bag).
    python_ops = {f"linalg_{name}" for name in ember.linalg.__all__} | set(ember.linalg.TOP_LEVEL)
    composites = (_ops_math, _ops_shape, _ops_views, _ops_grouped, _nn_toplevel)
    known = set(PUBLIC) | python_ops | {name for module in composites for name in module.__all__}
    # ... and private operators of ops.yaml that a functional form runs on (_ctc_loss for ctc_loss)
    known |= {op["base"] for op in OPS if op["python"] and op["base"].startswith("_")}
    # ... and the operators behind x[...] (index.Tensor, slice.Tensor, alias), which have no Python name
    known |= {op["base"] for op in OPS if op["base"] in ("index", "slice", "alias")}
    assert not rows - known, f"rows of unknown operators: {sorted(rows - known)}"
    assert not set(EXCLUDED) - set(PUBLIC), f"unknown exclusions: {sorted(set(EXCLUDED) - set(PUBLIC))}"
    assert not set(EXCLUDED) & rows, f"excluded yet with a row: {sorted(set(EXCLUDED) & rows)}"


def test_table_is_not_empty():
    assert len(CELLS) >= 100 * len(DTYPE_NAMES) // 2 and len(PUBLIC) > 150


if __name__ == "__main__":
    width = max(len(op["name"]) for op in OPS)
    short = {"bool": "b", "uint8": "u8", "bfloat16": "bf16"}
    heads = [short.get(d, d.replace("float", "f").replace("int", "i")) for d in DTYPE_NAMES]
    print("operator".ljust(width), " ".join(h.rjust(5) for h in heads), " (device cpu)")
    for op in OPS:
        cells = [run_cell(op, d) for d in DTYPE_NAMES]
        marks = {"ok": "ok", "raises": "err", "skip": "-"}
        print(op["name"].ljust(width), " ".join(marks.get(c, "FAIL").rjust(5) for c in cells))
    sys.exit(0)

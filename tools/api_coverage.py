"""How much of PyTorch's public API Ember has, per namespace.

    python tools/api_coverage.py            prints the coverage per namespace
    python tools/api_coverage.py --missing  also lists the names still missing
    python tools/api_coverage.py --write    rewrites KNOWN_GAPS in tests/python/api_coverage_lists.py

A namespace's public names are those of dir() without a leading underscore,
read in a fresh interpreter (what dir(torch) holds depends on which
submodules were imported before). tests/python/test_api_coverage.py fails
when a name Ember had disappears (a name neither in OUT_OF_SCOPE nor in
KNOWN_GAPS is missing) and when a known gap is closed but still listed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LISTS = ROOT / "tests" / "python" / "api_coverage_lists.py"

# namespace -> dotted path below torch / ember ("" is the package itself)
NAMESPACES = {
    "torch": "",
    "Tensor": "Tensor",
    "nn": "nn",
    "nn.functional": "nn.functional",
    "nn.init": "nn.init",
    "nn.utils": "nn.utils",
    "nn.utils.rnn": "nn.utils.rnn",
    "optim": "optim",
    "optim.lr_scheduler": "optim.lr_scheduler",
    "testing": "testing",
    "amp": "amp",
    "cuda": "cuda",
    "autograd": "autograd",
    "autograd.functional": "autograd.functional",
    "autograd.forward_ad": "autograd.forward_ad",
    "autograd.graph": "autograd.graph",
    "linalg": "linalg",
    "fft": "fft",
    "special": "special",
    "distributions": "distributions",
    "utils.data": "utils.data",
    "utils.checkpoint": "utils.checkpoint",
    "multiprocessing": "multiprocessing",
    "distributed": "distributed",
    "func": "func",
}

_PROBE = r"""
import importlib, json, sys

def names(package, path):
    obj = importlib.import_module(package)
    if path == "Tensor":
        obj = obj.Tensor
    elif path:
        try:
            obj = importlib.import_module(package + "." + path)
        except Exception:
            return None
    return sorted(n for n in dir(obj) if not n.startswith("_"))

import torch, ember
paths = json.loads(sys.argv[1])
out = {}
for key, path in paths.items():
    out[key] = {"torch": names("torch", path), "ember": names("ember", path)}
print(json.dumps(out))
"""


def public_names():
    """{namespace: {"torch": [...], "ember": [...] or None}} read in a fresh interpreter."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", _PROBE, json.dumps(NAMESPACES)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def missing_per_namespace(names=None):
    """{namespace: sorted names torch has and Ember lacks}."""
    names = public_names() if names is None else names
    out = {}
    for key, found in names.items():
        ours = set(found["ember"] or ())
        out[key] = sorted(set(found["torch"]) - ours)
    return out


def load_lists():
    namespace = {}
    exec(compile(LISTS.read_text(), str(LISTS), "exec"), namespace)  # noqa: S102
    return namespace["OUT_OF_SCOPE"], namespace["KNOWN_GAPS"]


def report(names, out_of_scope, show_missing):
    print(f"{'namespace':<22}{'torch':>7}{'ember':>7}{'cover':>8}{'in scope':>10}{'cover':>8}")
    for key, found in names.items():
        theirs = set(found["torch"])
        ours = theirs & set(found["ember"] or ())
        scope = theirs - set(out_of_scope.get(key, {}))
        pct = 100.0 * len(ours) / max(len(theirs), 1)
        pct_scope = 100.0 * len(ours & scope) / max(len(scope), 1)
        print(f"{key:<22}{len(theirs):>7}{len(ours):>7}{pct:>7.1f}%{len(scope):>10}{pct_scope:>7.1f}%")
        if show_missing:
            gaps = sorted(scope - ours)
            if gaps:
                print("    missing: " + ", ".join(gaps))


def write_known_gaps(missing, out_of_scope):
    text = LISTS.read_text()
    start = text.index("KNOWN_GAPS = {")
    gaps = {key: sorted(set(names) - set(out_of_scope.get(key, {}))) for key, names in missing.items()}
    lines = ["KNOWN_GAPS = {"]
    for key, names in gaps.items():
        if not names:
            lines.append(f"    {json.dumps(key)}: [],")
            continue
        lines.append(f"    {json.dumps(key)}: [")
        lines += [f"        {json.dumps(name)}," for name in names]
        lines.append("    ],")
    lines.append("}")
    LISTS.write_text(text[:start] + "\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--missing", action="store_true", help="list the names still missing")
    parser.add_argument("--write", action="store_true", help="rewrite KNOWN_GAPS from this build")
    args = parser.parse_args()
    names = public_names()
    out_of_scope, _ = load_lists()
    report(names, out_of_scope, args.missing)
    if args.write:
        write_known_gaps(missing_per_namespace(names), out_of_scope)
        print(f"wrote {LISTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

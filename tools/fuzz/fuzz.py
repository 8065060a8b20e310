"""Differential fuzzer: random calls into Ember and PyTorch, compared.

Each generated call is one line of Python, such as
``torch.add(torch.arange(6.).reshape(2, 3).t(), 2**63)``, evaluated once with
``torch`` bound to PyTorch and once with ``torch`` bound to Ember (``F`` is
each library's ``nn.functional``). Targets are the public functions, Tensor
methods, ``nn.functional`` and ``linalg`` functions both libraries have;
arguments are drawn from tensors of every dtype, complex64/complex128
included (``linalg`` calls mostly get square matrices), and of awkward
shapes and layouts (0-dim,
empty, transposed, sliced, expanded so that elements overlap, NaN/inf
values), small and huge Python ints (2**62, 2**63, 2**64, negatives),
floats, bools, None, strings, int lists (including negative and huge sizes),
dtypes and tensor lists, with a few keyword arguments (dim=, keepdim=,
dtype=, out=).

Calls run in batches, each batch in a worker subprocess with one thread and
a capped address space. The worker prints a marker before each library's
call, so when it dies (a signal) or stops making progress (a hang) the
parent knows the call and the library, reruns that call alone in a fresh
process to confirm it, and reports it as a one-line reproducer; the batch
then resumes after it.

Each call is classified:

- ``crash``: Ember's process died (SIGSEGV, SIGFPE, abort).
- ``hang``: Ember's call ran past the per-call timeout.
- ``leaked``: Ember raised ``SystemError`` (a C function that returned with
  a Python error set), or a trivial call made right after it did.
- ``values_differ``: both returned, the results (or the inputs after an
  in-place call) differ in type, dtype, shape or value.
- ``accepted_refused``: PyTorch raised, Ember returned.
- ``refused_accepted``: Ember raised, PyTorch returned.
- ``other_exception``: both raised, with different exception classes
  (compared by their first built-in base: ``RuntimeError``, ``TypeError``...).
- ``ok``: same result, or the same class of exception.
Calls where PyTorch itself crashes or hangs, or leaves the process broken for
Ember's call (Ember's call alone runs fine), are counted as ``torch_failed``
and otherwise ignored; a crash or hang that does not happen again when the
call is rerun alone (a timeout on a loaded machine) is ``unconfirmed``.

Short run (the test ``tests/python/test_fuzz.py`` runs this with fixed seeds
and asserts no crash, hang or leaked error)::

    .venv/bin/python tools/fuzz/fuzz.py --seeds 0 1 --calls 1500

Long run (hours; prints every finding with its reproducer, ``--json`` writes
the summary and the findings)::

    .venv/bin/python tools/fuzz/fuzz.py --seeds $(seq 0 99) --calls 1000 \\
        --batch 250 --timeout 20 --json /tmp/fuzz.json --show values_differ,accepted_refused

The summary line is followed by the counts scaled to 100,000 calls.
``EMBER_FUZZ_MEM_GB`` caps each worker's address space (default 6; 0 for no
cap, as a sanitizer build needs).

Reproduce one finding::

    .venv/bin/python tools/fuzz/fuzz.py --repro "torch.zeros(3).fill_(2**63)"
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import time

CLASSES = (
    "crash",
    "hang",
    "leaked",
    "values_differ",
    "accepted_refused",
    "refused_accepted",
    "other_exception",
    "ok",
    "torch_failed",
    "unconfirmed",
)

# Results whose values are unspecified (uninitialised memory): compared by
# type, dtype and shape only.
UNINITIALISED = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
# Results PyTorch leaves unspecified up to signs (singular vectors from a
# random projection): compared by type, dtype and shape as well.
SIGN_AMBIGUOUS = {"pca_lowrank", "svd_lowrank"}
# PyTorch's median along a dim of an expanded (stride-0) tensor reads memory
# past the storage (its values change from run to run): compared likewise.
READS_PAST_EXPANDED = {"median", "nanmedian"}


def _values_defined(code):
    if any(f".{n}(" in code for n in UNINITIALISED | SIGN_AMBIGUOUS):
        return False
    return not (".expand(" in code and any(f".{n}(" in code for n in READS_PAST_EXPANDED))


def _svd_invariants(code, r):
    """An SVD's singular vectors are unspecified (signs, and any basis of a
    repeated or zero singular value's space): compared are the singular
    values and the product U diag(S) V^H."""
    if not (isinstance(r, tuple) and len(r) == 3) or "_grad(" in code:
        return r
    kind = "linalg" if "linalg.svd(" in code else "svd" if ".svd(" in code else None
    if kind is None:
        return r
    u, s, v = r
    k = s.shape[-1]
    vh = v[..., :k, :] if kind == "linalg" else v[..., :k].mH
    return (s, (u[..., :k] * s.unsqueeze(-2).to(u.dtype)) @ vh)

# Names never called: global state, files, processes, printing, slow or
# unbounded work, and things that cannot be compared.
SKIP = {
    "set_default_dtype", "set_default_tensor_type", "set_default_device", "manual_seed", "seed", "initial_seed",
    "set_rng_state", "get_rng_state", "set_grad_enabled", "set_printoptions", "set_num_threads",
    "set_num_interop_threads", "use_deterministic_algorithms", "set_deterministic_debug_mode", "save", "load",
    "from_file", "compile", "set_flush_denormal", "set_anomaly_enabled", "set_float32_matmul_precision",
    "inference_mode", "no_grad", "enable_grad", "autocast", "jit", "export", "vmap", "from_numpy", "frombuffer",
    "numpy", "tolist", "storage", "untyped_storage", "data_ptr", "share_memory_", "pin_memory", "is_pinned",
    "register_hook", "register_post_accumulate_grad_hook", "backward", "retain_grad", "set_", "cuda", "to_sparse",
    "typename", "is_storage", "get_default_dtype", "get_default_device", "Generator", "Size", "Tensor",
    "dtype", "device", "layout", "memory_format", "finfo", "iinfo", "cdist", "item", "apply_", "map_", "record_stream",
    "element_size", "nbytes", "itemsize", "__array__", "new", "type", "resize_", "resize_as_", "sym_not",
    "random_", "get_num_threads", "get_num_interop_threads", "is_grad_enabled", "is_inference_mode_enabled",
    "are_deterministic_algorithms_enabled", "classproperty", "istft", "stft",
    # Addresses and paths of the library's own files: never equal across libraries.
    "const_data_ptr", "mutable_data_ptr", "get_file_path",
}

INTS = [0, 1, 2, 3, -1, -2, 5, 2**31, 2**62, 2**63 - 1, 2**63, 2**64, -(2**63), -(2**63) - 1, -(2**62)]
FLOATS = ["0.5", "-1.5", "2.0", "float('nan')", "float('inf')", "-float('inf')", "1e300", "0.0", "(0.5-1j)"]
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
FLOATING = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
SHAPES = [(), (0,), (1,), (3,), (2, 3), (3, 1), (1, 4, 1), (2, 0, 3), (2, 2, 3), (2, 3, 2, 2)]
# linalg draws square (batches of) matrices more often.
SQUARE = [(2, 2), (3, 3), (2, 3, 3), (0, 0), (1, 1), (2, 0, 0)]
# Namespaces fuzzed besides the top level, Tensor and nn.functional.
NAMESPACES = ("linalg",)


def _int(rng):
    v = rng.choice(INTS) if rng.random() < 0.35 else rng.randint(-3, 4)
    return str(v) if abs(v) < 2**20 else _bigint(v)


def _bigint(v):
    for b in (31, 62, 63, 64):
        for off in (-1, 0):
            if v == 2**b + off:
                return f"2**{b}" + ("-1" if off else "")
            if v == -(2**b) + off:
                return f"-2**{b}" + ("-1" if off else "")
    return str(v)


# The dtype and shape most tensors of the current call share, so that more
# calls get past the argument checks.
_CALL = {"dtype": "float32", "shape": (2, 3)}


def _tensor(rng, grad=False):
    dtype = _CALL["dtype"] if rng.random() < 0.6 else rng.choice(DTYPES)
    shape = _CALL["shape"] if rng.random() < 0.6 else rng.choice(SHAPES)
    n = math.prod(shape)
    kind = rng.random()
    if kind < 0.08:
        base = "torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0, 1.5, -2.0])"
        if dtype in FLOATING or dtype in COMPLEX:
            return f"{base}.to(torch.{dtype})"
        return f"torch.tensor([0, 1, -3, 7, 2, -1]).to(torch.{dtype})"
    if dtype == "bool":
        expr = f"(torch.arange({n}) % 3 == 0)"
    elif dtype in COMPLEX:
        expr = f"((torch.arange({n}, dtype=torch.float64) * 0.73 - 1.9) * (1 - 0.5j) + 0.25j).to(torch.{dtype})"
    elif dtype in FLOATING:
        expr = f"(torch.arange({n}, dtype=torch.float64) * 0.73 - 1.9).to(torch.{dtype})"
    else:
        expr = f"(torch.arange({n}) % 7 - 3).to(torch.{dtype})"
    expr += f".reshape({shape!r})"
    layout = rng.random()
    if layout < 0.12 and len(shape) >= 2:
        expr += ".transpose(0, -1)"
    elif layout < 0.2 and len(shape) >= 1:
        expr = expr.replace(f"arange({n})", f"arange({2 * n})").replace(f"arange({n},", f"arange({2 * n},")
        expr = expr.replace(f".reshape({shape!r})", f".reshape({(2 * shape[0],) + shape[1:]!r})[::2]")
    elif layout < 0.3:
        big = rng.choice([(3, 4), (2, 3, 4), (4,), (2, 2)])
        fill = "0.5" if dtype in FLOATING or dtype in COMPLEX else "1"
        expr = f"torch.full((1,), {fill}).to(torch.{dtype}).expand({big!r})"
    if grad and dtype in ("float32", "float64"):
        expr += ".requires_grad_()"
    return expr


def _value(rng, depth=0):
    r = rng.random()
    if r < 0.45:
        return _tensor(rng)
    if r < 0.62:
        return _int(rng)
    if r < 0.70:
        return rng.choice(FLOATS)
    if r < 0.73:
        return rng.choice(["True", "False"])
    if r < 0.76:
        return "None"
    if r < 0.78:
        return rng.choice(["'mean'", "'sum'", "'abc'", "''"])
    if r < 0.90:
        k = rng.randint(0, 3)
        return "(" + "".join(_int(rng) + ", " for _ in range(k)) + ")"
    if r < 0.94:
        return f"torch.{rng.choice(DTYPES)}"
    if depth == 0:
        return "[" + ", ".join(_value(rng, 1) for _ in range(rng.randint(0, 3))) + "]"
    return _tensor(rng)


TENSOR_NAMES = {
    "input", "other", "tensor", "self", "weight", "bias", "target", "mask", "index", "indices", "src", "source",
    "mat", "mat1", "mat2", "vec", "vec1", "vec2", "batch1", "batch2", "tensor1", "tensor2", "end", "exponent",
    "values", "x", "x1", "x2", "y", "query", "key", "value", "running_mean", "running_var", "boundaries", "A", "B",
    "min", "max", "var", "log_input", "anchor", "positive", "negative", "grad", "out",
}
INT_NAMES = {
    "dim", "dim0", "dim1", "dim2", "k", "n", "diagonal", "offset", "chunks", "sections", "repeats", "groups",
    "num_classes", "output_size", "p", "start_dim", "end_dim", "source_dim", "destination", "shifts", "dims",
    "num_samples", "bins", "minlength", "decimals", "steps", "row", "col", "upscale_factor", "downscale_factor",
    "blank", "ignore_index", "padding_idx", "split_size_or_sections", "split_size", "step", "size", "shape",
    "kernel_size", "stride", "padding", "dilation", "output_padding", "ndim", "axis",
}
BOOL_NAMES = {"keepdim", "descending", "stable", "sorted", "largest", "upper", "right", "inplace", "training",
              "accumulate", "unbiased", "return_counts", "return_inverse", "ceil_mode", "count_include_pad",
              "align_corners", "log_target", "full", "is_causal", "return_indices", "include_self"}
FLOAT_NAMES = {"alpha", "beta", "eps", "momentum", "negative_slope", "lambd", "threshold", "margin", "scale",
               "rtol", "atol", "dropout_p", "delta", "min_val", "max_val", "fill_value", "q"}


def _for_param(rng, name):
    """A value for a parameter, usually of the kind its name suggests, sometimes anything."""
    if rng.random() < 0.15:
        return _value(rng)
    if name in TENSOR_NAMES:
        return _tensor(rng)
    if name in INT_NAMES:
        if rng.random() < 0.3:
            return "(" + "".join(_int(rng) + ", " for _ in range(rng.randint(1, 3))) + ")"
        return _int(rng)
    if name in BOOL_NAMES:
        return rng.choice(["True", "False"])
    if name == "dtype":
        return f"torch.{rng.choice(DTYPES)}"
    if name == "reduction":
        return rng.choice(["'mean'", "'sum'", "'none'", "'bad'"])
    if name in FLOAT_NAMES:
        return rng.choice([*FLOATS, _int(rng)])
    return _value(rng)


_SIGS = {}


def _parse_doc_line(name, line):
    inner = line[len(name) + 1 : line.rindex(")")]
    params, kwonly, depth, tok = [], False, 0, ""
    for ch in inner + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            tok = tok.strip()
            if tok == "*":
                kwonly = True
            elif tok:
                pname = tok.split("=")[0].strip().lstrip("*").split(":")[0].strip()
                # "*size" (varargs) is given as one int or one tuple.
                params.append((pname, "=" not in tok, kwonly))
            tok = ""
        else:
            tok += ch
    return params


def signatures(kind, name):
    """Parameter lists [(name, required, keyword_only)] from PyTorch's docstrings or signatures."""
    import inspect

    import torch

    key = (kind, name)
    if key in _SIGS:
        return _SIGS[key]
    modules = {"fn": torch, "method": torch.Tensor, "F": torch.nn.functional}
    obj = getattr(modules[kind] if kind in modules else getattr(torch, kind), name)
    sigs = []
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        line = line.strip()
        if line.startswith(name + "(") and ")" in line:
            sigs.append(_parse_doc_line(name, line))
    if not sigs:
        try:
            sig = inspect.signature(obj)
            sigs.append([
                (p.name, p.default is inspect.Parameter.empty and p.kind != p.VAR_POSITIONAL, p.kind == p.KEYWORD_ONLY)
                for p in sig.parameters.values()
                if p.kind != p.VAR_KEYWORD
            ])
        except (TypeError, ValueError):
            pass
    _SIGS[key] = sigs
    return sigs


def _args_for(rng, kind, name, grad):
    """Positional and keyword argument strings for one call (self excluded for methods)."""
    sigs = signatures(kind, name)
    if not sigs or rng.random() < 0.1:
        args = [_value(rng) for _ in range(rng.choice([0, 1, 1, 2, 2, 3]))]
        if kind != "method" and rng.random() < 0.8:
            args.insert(0, _tensor(rng, grad))
        return args, []
    params = rng.choice(sigs)
    args, kwargs = [], []
    for i, (pname, required, kwonly) in enumerate(params):
        if not required and rng.random() < 0.6:
            continue
        v = _tensor(rng, grad) if i == 0 and kind != "method" and pname in TENSOR_NAMES else _for_param(rng, pname)
        if kwonly or kwargs or (not required and rng.random() < 0.5):
            kwargs.append(f"{pname}={v}")
        else:
            args.append(v)
    return args, kwargs


def targets(lib):
    """(kind, name) pairs of the public callables both libraries have."""
    import torch

    found = []
    for kind, mod_e, mod_t in (
        ("fn", lib, torch),
        ("method", lib.Tensor, torch.Tensor),
        ("F", lib.nn.functional, torch.nn.functional),
        *((ns, getattr(lib, ns), getattr(torch, ns)) for ns in NAMESPACES),
    ):
        for name in sorted(dir(mod_e)):
            if name.startswith("_") or name in SKIP or not hasattr(mod_t, name):
                continue
            obj = getattr(mod_e, name, None)
            if callable(obj) and not isinstance(obj, type):
                found.append((kind, name))
    return found


def generate(seed, count, names):
    """`count` one-line calls, the same for a given seed and target list."""
    rng = random.Random(seed)
    calls = []
    for _ in range(count):
        kind, name = rng.choice(names)
        _CALL["dtype"] = rng.choice(["float32", "float32", "float64", "int64", *DTYPES])
        _CALL["shape"] = rng.choice(SQUARE if kind in NAMESPACES and rng.random() < 0.7 else SHAPES)
        grad = rng.random() < 0.1
        args, kwargs = _args_for(rng, kind, name, grad)
        if kind == "fn":
            head = f"torch.{name}"
        elif kind == "F":
            head = f"F.{name}"
        elif kind in NAMESPACES:
            head = f"torch.{kind}.{name}"
        else:
            head = f"(_s := {_tensor(rng, grad)}).{name}"
        call = f"{head}({', '.join(args + kwargs)})"
        if grad:
            call = f"_grad({call})"
        calls.append(call)
    return calls


# ---- evaluation (worker side) ------------------------------------------------


def _grad_fn(lib):
    def _grad(r):
        # Backward through a floating result, returning the result and the
        # gradients of the leaves it came from.
        if isinstance(r, lib.Tensor) and r.requires_grad and r.dtype in (lib.float32, lib.float64) and r.numel():
            leaves = _grad.leaves
            r.sum().backward()
            return r, [leaf.grad for leaf in leaves]
        return r

    return _grad


def _builtin_base(exc):
    for k in type(exc).__mro__:
        if k.__module__ == "builtins":
            return k.__name__
    return type(exc).__name__


def _normalize(x, depth=0, values=True):
    """A comparable, JSON-friendly form of a result."""
    name = type(x).__module__.split(".")[0]
    if hasattr(x, "dtype") and hasattr(x, "shape") and name in ("torch", "ember"):
        t = x.detach()
        if t.is_complex():
            t = t.resolve_conj()
            vals = [t.real.tolist(), t.imag.tolist()] if t.numel() <= 4096 and values else f"<{t.numel()} elements>"
            return ["T", str(t.dtype).split(".")[-1], list(t.shape), vals]
        vals = t.tolist() if t.numel() <= 4096 and values else f"<{t.numel()} elements>"
        return ["T", str(t.dtype).split(".")[-1], list(t.shape), vals]
    if isinstance(x, (list, tuple)) and depth < 3:
        return ["L", [_normalize(v, depth + 1, values) for v in x]]
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    if type(x).__name__ in ("Size",):
        return ["S", list(x)]
    if type(x).__name__ in ("dtype", "device"):
        return ["D", str(x).split(".")[-1]]
    if isinstance(x, complex):
        return ["C", x.real, x.imag]
    return ["O", type(x).__name__]


def _close(a, b, tol):
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= tol * (1 + abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    return a == b


def same(a, b):
    tol = 1e-4
    if isinstance(b, list) and b and b[0] == "T" and b[1] in ("float16", "bfloat16", "complex32"):
        tol = 2e-2
    return _close(a, b, tol)


def run_one(lib, code, lib_name=""):
    """Evaluate `code` with `torch` bound to `lib`: ('ok', normalized, inputs) or ('exc', class, message)."""
    lib.manual_seed(0)
    grad = _grad_fn(lib)
    env = {"torch": lib, "F": lib.nn.functional, "_grad": grad}
    grad.leaves = []
    orig_rg = lib.Tensor.requires_grad_

    def rg(self, flag=True):
        out = orig_rg(self, flag)
        grad.leaves.append(out)
        return out

    try:
        lib.Tensor.requires_grad_ = rg
        r = _svd_invariants(code, eval(code, env))  # noqa: S307 - the fuzzer's own generated code
        norm = _normalize(r, values=_values_defined(code))
        inputs = _normalize(env.get("_s"))  # self after a method call (in-place ones)
        return ("ok", norm, inputs)
    except BaseException as e:  # noqa: BLE001 - every outcome is data here
        if isinstance(e, KeyboardInterrupt):
            raise
        return ("exc", _builtin_base(e), str(e).split("\n")[0][:200])
    finally:
        lib.Tensor.requires_grad_ = orig_rg


def classify(t_res, e_res, leaked_after):
    if t_res[0] == "exc" and t_res[1] == "SystemError":
        return "torch_failed"  # PyTorch's own leaked error
    if leaked_after or (e_res[0] == "exc" and e_res[1] == "SystemError"):
        return "leaked"
    if t_res[0] == "exc" and e_res[0] == "exc":
        return "ok" if t_res[1] == e_res[1] else "other_exception"
    if t_res[0] == "exc":
        return "accepted_refused"
    if e_res[0] == "exc":
        return "refused_accepted"
    return "ok" if same(e_res[1], t_res[1]) and same(e_res[2], t_res[2]) else "values_differ"


def worker(calls, start):
    """Run calls[start:], one JSON line per call on stdout, markers before each library."""
    import resource
    import warnings

    warnings.simplefilter("ignore")

    # 0: no cap (a sanitizer build reserves terabytes of shadow address space).
    limit = int(os.environ.get("EMBER_FUZZ_MEM_GB", "6")) << 30
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import torch

    import ember

    torch.set_num_threads(1)
    # EMBER_FUZZ_ONLY=ember: Ember's call alone (telling Ember's crashes from PyTorch's corruptions).
    ember_only = os.environ.get("EMBER_FUZZ_ONLY") == "ember"
    out = sys.stdout
    for i in range(start, len(calls)):
        out.write(f"START {i} torch\n")
        out.flush()
        t_res = ("exc", "skipped", "") if ember_only else run_one(torch, calls[i])
        out.write(f"START {i} ember\n")
        out.flush()
        e_res = run_one(ember, calls[i])
        leaked = False
        try:
            ember.zeros(1).add(1)
        except SystemError:
            leaked = True
        except BaseException:  # noqa: BLE001, S110 - only a SystemError is a leak
            pass
        cls = classify(t_res, e_res, leaked)
        out.write("DONE " + json.dumps([i, cls, t_res[:2] if t_res[0] == "exc" else ["ok"],
                                        e_res[:2] if e_res[0] == "exc" else ["ok"]]) + "\n")
        out.flush()


# ---- driver (parent side) ----------------------------------------------------


def _spawn(calls_file, start, ember_only=False):
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONFAULTHANDLER="")
    if ember_only:
        env["EMBER_FUZZ_ONLY"] = "ember"
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", calls_file, str(start)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


class _Lines:
    """Lines from a worker's stdout, read from the file descriptor itself so
    that select() sees every byte not yet returned (a buffered reader would
    hide lines that have already arrived)."""

    def __init__(self, proc):
        self.fd = proc.stdout.fileno()
        self.buf = b""

    def read(self, deadline):
        import select

        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    return ""  # end of file: the worker exited
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode() + "\n"


def run_batch(calls, timeout, tmpdir, results, ember_only=False):
    """Run `calls`, restarting after each crash or hang; fill `results` (index -> (class, detail))."""
    path = os.path.join(tmpdir, f"calls-{os.getpid()}-{time.monotonic_ns()}.json")
    with open(path, "w") as f:
        json.dump(calls, f)
    start = 0
    while start < len(calls):
        proc = _spawn(path, start, ember_only)
        lines = _Lines(proc)
        current, lib = start, "torch"
        deadline = time.monotonic() + timeout + 30  # imports
        failed = None
        while True:
            line = lines.read(deadline)
            if line is None:
                failed = "hang"
                proc.kill()
                break
            if not line:
                proc.wait()
                if proc.returncode != 0:
                    failed = f"crash (signal {-proc.returncode})" if proc.returncode < 0 else "crash"
                break
            if line.startswith("START"):
                _, idx, lib = line.split()
                current = int(idx)
                deadline = time.monotonic() + timeout
            elif line.startswith("DONE"):
                i, cls, t, e = json.loads(line[5:])
                results[i] = (cls, {"torch": t, "ember": e})
        proc.wait()
        if failed is None:
            break
        kind = "hang" if failed == "hang" else "crash"
        results[current] = ("torch_failed" if lib == "torch" else kind, {"lib": lib, "how": failed})
        start = current + 1
    os.unlink(path)


def repro(code, timeout, ember_only=False):
    """Run one call in a fresh process and say what happened, for the report."""
    results = {}
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        run_batch([code], timeout, d, results, ember_only)
    return results.get(0, ("crash", {"how": "no result"}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--calls", type=int, default=1000, help="calls per seed")
    ap.add_argument("--batch", type=int, default=500, help="calls per worker process")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds one call may take")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes at once")
    ap.add_argument("--json", help="write the summary and findings here")
    ap.add_argument("--show", default="crash,hang,leaked", help="classes whose reproducers are printed")
    ap.add_argument("--repro", help="run this one call and print its class")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        with open(a.worker[0]) as f:
            worker(json.load(f), int(a.worker[1]))
        return 0
    if a.repro:
        print(repro(a.repro, a.timeout))
        return 0
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    import ember

    names = targets(ember)
    calls = []
    for s in a.seeds:
        calls += generate(s, a.calls, names)
    results = {}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as d, ThreadPoolExecutor(a.jobs) as pool:
        batches = []
        for b in range(0, len(calls), a.batch):
            part = {}
            batches.append((b, part, pool.submit(run_batch, calls[b : b + a.batch], a.timeout, d, part)))
        for b, part, fut in batches:
            fut.result()
            for i, v in part.items():
                results[b + i] = v
    counts = {c: 0 for c in CLASSES}
    findings = []
    for i, code in enumerate(calls):
        cls, detail = results.get(i, ("crash", {"how": "no result"}))
        counts[cls] += 1
        if cls not in ("ok", "torch_failed"):
            findings.append({"class": cls, "code": code, "detail": detail})
    # A crash or hang must reproduce alone, in a fresh process, to count; and
    # with Ember's call alone in it: a PyTorch call that writes out of bounds
    # (its triu into some strided out= tensors) can break the process for the
    # Ember call that follows it.
    for f in findings:
        if f["class"] in ("crash", "hang"):
            cls, detail = repro(f["code"], a.timeout)
            f["alone"] = cls
            if cls in ("crash", "hang") and repro(f["code"], a.timeout, ember_only=True)[0] not in ("crash", "hang"):
                cls = f["alone"] = "torch_failed"
            if cls not in ("crash", "hang"):
                new = "torch_failed" if cls == "torch_failed" else "unconfirmed"
                counts[f["class"]] -= 1
                counts[new] += 1
                f["class"] = new
    show = set(a.show.split(","))
    for f in findings:
        if f["class"] in show:
            print(f"{f['class']:16} {f['code']}\n{'':16} {json.dumps(f['detail'])[:300]}")
    summary = {"calls": len(calls), "seconds": round(time.monotonic() - t0, 1), **counts}
    print(json.dumps(summary))
    scale = 100_000 / max(len(calls), 1)
    print("per 100,000 calls:", json.dumps({c: round(n * scale) for c, n in counts.items() if c != "ok"}))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": summary, "findings": findings}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

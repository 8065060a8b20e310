"""Shared helpers: PyTorch is the oracle every Ember result is compared with."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, settings

torch = pytest.importorskip("torch", reason="the oracle (torch==2.13.0) is installed by the test set-up")
from opdb.core import cpu_flags  # noqa: E402,F401 - shared with the test files

import ember  # noqa: E402

# Hypothesis settings for every test file, set here once. "ember-dev" explores
# new examples on each run; "ember-ci" (when CI is set) replays the same ones.
# EMBER_HYP_EXAMPLES changes the number of examples of both.
settings.register_profile(
    "ember-dev",
    max_examples=int(os.environ.get("EMBER_HYP_EXAMPLES", 15)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large],
)
settings.register_profile(
    "ember-ci", settings.get_profile("ember-dev"), derandomize=True, database=None, print_blob=True
)
settings.load_profile("ember-ci" if os.environ.get("CI") else "ember-dev")

# Same names in both libraries.
DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]


def dtypes(name):
    return getattr(ember, name), getattr(torch, name)


def to_torch(e):
    """An Ember tensor as a torch tensor with the same values, dtype and shape."""
    t = torch.tensor(e.tolist(), dtype=getattr(torch, str(e.dtype).split(".")[1]))
    return t.reshape(tuple(e.shape))


def assert_same(e, t, rtol=None, atol=None):
    """Values, dtype and shape of an Ember result equal torch's."""
    assert str(e.dtype) == str(t.dtype), f"dtype {e.dtype} != {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != {tuple(t.shape)}"
    got = to_torch(e)
    if t.dtype.is_complex and rtol is not None:
        # complex results to a tolerance only when one is given (exact otherwise)
        torch.testing.assert_close(got, t, rtol=rtol, atol=rtol if atol is None else atol, equal_nan=True)
    elif t.dtype.is_floating_point:
        if rtol is None:
            rtol = {torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float32: 1e-6, torch.float64: 1e-12}[t.dtype]
        if atol is None:
            atol = rtol
        torch.testing.assert_close(got, t, rtol=rtol, atol=atol, equal_nan=True)
    else:
        assert torch.equal(got, t), f"{got} != {t}"


def pair(values, dtype_name, shape=None, requires_grad=False):
    """The same data as an (ember, torch) pair."""
    ed, td = dtypes(dtype_name)
    e = ember.tensor(values, dtype=ed)
    t = torch.tensor(values, dtype=td)
    if shape is not None:
        e, t = e.reshape(shape), t.reshape(shape)
    if requires_grad:
        e.requires_grad_(True)
        t.requires_grad_(True)
    return e, t


def isclose(a, b, tol=1e-6):
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def machine_has_avx512():
    """Whether this CPU has the AVX-512 subsets both libraries' AVX512 kernels need."""
    return {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= cpu_flags()


def run_under_capability(cap, module, fn):
    """Runs module.fn() in a fresh process on the kernels of one CPU
    capability (EMBER_CPU_CAPABILITY) and asserts that it succeeded; the
    oracle runs its kernels of the same capability (ATEN_CPU_CAPABILITY)."""
    import os
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    script = f"import sys; sys.path.insert(0, {here!r}); import {module} as t; print(t.{fn}())"
    env = dict(os.environ, EMBER_CPU_CAPABILITY=cap, ATEN_CPU_CAPABILITY=cap)
    r = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600, check=False, cwd=here
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


# Ember computes with MKL where it is installed (Note [MKL for matrix products]);
# these functions are then MKL's VML, as PyTorch's are, in float32/float64.
HAS_MKL = "Math Kernel Library" in ember.__config__.show()
VML_OPS = frozenset("sqrt exp log log2 log10 sin cos tan asin acos atan tanh erf erfc".split())
# And with libsleef on the AVX2 or AVX512 kernels (Note [SLEEF for vector
# math]): the functions PyTorch's kernels of the same capability take from
# SLEEF, at the same vector width.
HAS_SLEEF = (
    "SLEEF: not loaded" not in ember.__config__.show()
    and ember._C._cpu_capability() in ("AVX2", "AVX512")
    and ember._C._cpu_capability() == torch.backends.cpu.get_cpu_capability()
)
# Those of them that are Tensor functions: computed in PyTorch's loop shapes (the
# leftover elements and strided rows of some by libm), so a result depends on
# where its element sits, as in PyTorch.
SLEEF_OPS = frozenset("expm1 log1p sinh cosh exp2 atanh lgamma pow atan2 hypot sigmoid".split())


@pytest.fixture
def exact_torch_sqrt(monkeypatch):
    """PyTorch's CPU sqrt comes from MKL's vector library and is not correctly
    rounded (about 0.6% of results are one ulp off). Ember with MKL computes
    the same; without it Ember's is correctly rounded, and torch's sqrt is made
    exact so that every other step of the update must agree bit for bit."""

    if HAS_MKL:
        return  # Ember's sqrt is MKL's too (Note [MKL for elementwise functions]): nothing to align

    def sqrt(self):
        import numpy as np

        return torch.from_numpy(np.sqrt(self.detach().numpy()))

    def sqrt_(self):
        self.copy_(sqrt(self))
        return self

    monkeypatch.setattr(torch.Tensor, "sqrt", sqrt)
    monkeypatch.setattr(torch.Tensor, "sqrt_", sqrt_)

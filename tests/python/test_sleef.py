"""SLEEF's vector functions (Note [SLEEF for vector math]): with libsleef
loaded on the AVX2 or AVX512 kernels, the functions PyTorch computes with
SLEEF give the bits of PyTorch's kernels of the same capability in every
element, contiguous or strided, with the remainder of odd lengths; softmax
and log_softmax (forward and backward) too, and a small training loop prints
PyTorch's losses step by step. Each capability the machine has is checked
again in a process of its own (AVX512 only where the CPU has it)."""

import os

import numpy as np
import pytest
from conftest import HAS_MKL, HAS_SLEEF, machine_has_avx512, run_under_capability, torch

import ember

pytestmark = pytest.mark.skipif(
    not HAS_SLEEF, reason="libsleef not loaded, or not the AVX2/AVX512 kernels of both libraries"
)

DTYPES = ["float32", "float64"]
# Lengths: whole vectors, odd remainders, shorter than one vector, and one
# long enough to split across two threads.
LENGTHS = [100003, 77, 5, 16]


def values(name, n, dname, seed=0):
    rng = np.random.default_rng(seed)
    if name == "log1p":
        x = np.concatenate([rng.uniform(-0.99, 5, n // 2), np.exp(rng.uniform(-20, 20, n - n // 2))])
    elif name == "atanh":
        x = rng.uniform(-1, 1, n)
    elif name in ("expm1", "sinh", "cosh", "exp2"):
        x = rng.uniform(-90, 90, n)
    else:
        x = rng.normal(0, 3, n)
    x = x.astype(dname)
    rng.shuffle(x)
    return x


def same_bits(e, t):
    a, b = e.numpy(), t.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    bad = np.nonzero(~((a == b) | (np.isnan(a) & np.isnan(b))))[0]
    assert bad.size == 0, f"{bad.size} of {a.size} differ, first at {bad[:5]}: {a[bad[:5]]} vs {b[bad[:5]]}"


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dname", DTYPES)
@pytest.mark.parametrize("name", ["expm1", "log1p", "sinh", "cosh", "exp2", "lgamma", "atanh", "sigmoid"])
def test_unary_is_pytorchs(name, dname, n):
    x = values(name, n, dname)
    e, t = ember.from_numpy(x), torch.from_numpy(x)
    same_bits(getattr(ember, name)(e), getattr(torch, name)(t))
    same_bits(getattr(ember, name)(e[::3]), getattr(torch, name)(t[::3]))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dname", DTYPES)
@pytest.mark.parametrize("name", ["pow", "atan2", "hypot"])
def test_binary_is_pytorchs(name, dname, n):
    rng = np.random.default_rng(1)
    a = rng.normal(0, 3, n).astype(dname)
    b = rng.normal(0, 3, n).astype(dname)
    if name == "pow":
        a = np.abs(a)
    f = getattr(ember, name), getattr(torch, name)
    ea, ta, eb, tb = ember.from_numpy(a), torch.from_numpy(a), ember.from_numpy(b), torch.from_numpy(b)
    same_bits(f[0](ea, eb), f[1](ta, tb))
    same_bits(f[0](ea[::2], eb[::2]), f[1](ta[::2], tb[::2]))
    same_bits(f[0](ea, ember.tensor(2.5, dtype=ea.dtype)), f[1](ta, torch.tensor(2.5, dtype=ta.dtype)))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dname", DTYPES)
@pytest.mark.parametrize("exponent", [4, 1.7, -3, 2.5])
def test_pow_scalar_exponent_is_pytorchs(exponent, dname, threads):
    # The remainders of each thread's range too (100003 elements split in two).
    x = np.abs(np.random.default_rng(5).normal(0, 3, 100003)).astype(dname)
    before = ember.get_num_threads(), torch.get_num_threads()
    ember.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        same_bits(ember.from_numpy(x) ** exponent, torch.from_numpy(x) ** exponent)
        same_bits(ember.from_numpy(x)[::2] ** exponent, torch.from_numpy(x)[::2] ** exponent)
    finally:
        ember.set_num_threads(before[0])
        torch.set_num_threads(before[1])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(64, 4096), (33, 10), (17, 7), (5, 3), (40, 1001), (8, 16), (3, 100003)])
@pytest.mark.parametrize("dname", DTYPES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_and_backward_are_pytorchs(log, dname, shape, threads):
    # One thread and two: PyTorch's serial and threaded paths round the
    # gradient's sum differently (Ember follows, see dot_reduce_all).
    rng = np.random.default_rng(2)
    x = rng.normal(0, 3, shape).astype(dname)
    g = rng.normal(0, 1, shape).astype(dname)
    name = "log_softmax" if log else "softmax"
    backward = "_log_softmax_backward_data" if log else "_softmax_backward_data"
    before = ember.get_num_threads(), torch.get_num_threads()
    ember.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        ey = getattr(ember, name)(ember.from_numpy(x), -1)
        ty = getattr(torch, name)(torch.from_numpy(x), -1)
        same_bits(ey, ty)
        same_bits(
            getattr(ember, backward)(ember.from_numpy(g), ey, -1, ey.dtype),
            getattr(torch, backward)(torch.from_numpy(g), ty, -1, ty.dtype),
        )
    finally:
        ember.set_num_threads(before[0])
        torch.set_num_threads(before[1])


def training_losses(lib, steps):
    # Polynomial features (x ** 4 among them), a two-layer MLP with sigmoid,
    # softmax cross-entropy, SGD with momentum: the printed loss of each step.
    rng = np.random.RandomState(0)
    params = [
        rng.randn(16, 12).astype(np.float32) * 0.3,
        rng.randn(16).astype(np.float32) * 0.1,
        rng.randn(5, 16).astype(np.float32) * 0.3,
        rng.randn(5).astype(np.float32) * 0.1,
    ]
    w1, b1, w2, b2 = (lib.from_numpy(p.copy()).requires_grad_(True) for p in params)
    opt = lib.optim.SGD([w1, b1, w2, b2], lr=0.05, momentum=0.9)
    printed = []
    for _ in range(steps):
        x = lib.from_numpy(rng.randn(64, 3).astype(np.float32))
        target = lib.from_numpy(rng.randint(0, 5, 64).astype(np.int64))
        feats = lib.cat([x, x**2, x**3, x**4], 1)
        h = lib.sigmoid(lib.nn.functional.linear(feats, w1, b1))
        logits = lib.nn.functional.linear(h, w2, b2)
        loss = lib.nn.functional.cross_entropy(logits, target) + 0.01 * lib.softmax(logits, 1).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        printed.append(f"Loss: {loss.item():.6f} {loss.item()!r}")
    return printed


@pytest.mark.skipif(
    not HAS_MKL, reason="Linear's products are PyTorch's only with MKL (Note [MKL for matrix products])"
)
def test_training_loop_prints_pytorchs_losses():
    assert training_losses(ember, 60) == training_losses(torch, 60)


def test_build_reports_sleef():
    line = next(x for x in ember.__config__.show().splitlines() if "SLEEF" in x)
    assert line.strip().startswith("- SLEEF: ") and line.endswith("libsleef.so.3"), line


def test_without_sleef_the_own_vector_math_runs():
    # EMBER_SLEEF=0: Ember's own functions, within an ulp or so of PyTorch's.
    import os
    import subprocess
    import sys

    script = (
        "import ember, numpy as np\n"
        "assert 'SLEEF: not loaded' in ember.__config__.show()\n"
        "x = ember.from_numpy(np.random.default_rng(0).normal(0, 3, (9, 1001)).astype(np.float32))\n"
        "for y in (ember.softmax(x, 1), ember.log_softmax(x, 1).exp(), ember.expm1(x), ember.sigmoid(x)):\n"
        "    assert ember.isfinite(y).all()\n"
        "print(float(ember.softmax(x, 1).sum(1).sub(1).abs().max()))\n"
    )
    env = dict(os.environ, EMBER_SLEEF="0")
    cmd = [sys.executable, "-c", script]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert float(r.stdout) < 1e-5


def complex_values(dname, n, seed=6):
    real = "float32" if dname == "complex64" else "float64"
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 3, (2, n)) * np.exp(rng.uniform(-5, 5, (2, n)))
    z[:, ::97] = 0  # zeros take sgn's zero branch
    z[0, 5::89] = 0
    return (z[0] + 1j * z[1]).astype(dname), real


@pytest.mark.parametrize("n", [4000, 77, 5, 16])
@pytest.mark.parametrize("dname", ["complex64", "complex128"])
def test_complex_abs_and_sgn_are_pytorchs(dname, n):
    # Note [Complex abs and sgn with SLEEF]: SLEEF's hypot and a division per
    # part on contiguous rows, libm's hypot and the complex quotient elsewhere.
    z, _ = complex_values(dname, n)
    e, t = ember.from_numpy(z), torch.from_numpy(z)
    for ev, tv in ((e, t), (e[::3], t[::3]), (e[1:], t[1:])):
        for name in ("abs", "sgn"):
            got, want = getattr(ev, name)(), getattr(tv, name)()
            if got.is_complex():
                same_bits(got.real.contiguous(), want.real.contiguous())
                same_bits(got.imag.contiguous(), want.imag.contiguous())
            else:
                same_bits(got, want)


def test_complex_sgn_default_is_pytorchs():
    # The DEFAULT kernels: PyTorch's complex division in every element.
    run_under_capability("default", "test_sleef", "_check_complex")


def _check_complex():
    for dname in ("complex64", "complex128"):
        for n in (4000, 77, 5):
            test_complex_abs_and_sgn_are_pytorchs(dname, n)
    return ember._C._cpu_capability()


def _check_all():
    """The bit comparisons above, in a process forced to one capability."""
    assert HAS_SLEEF, (ember._C._cpu_capability(), torch.backends.cpu.get_cpu_capability())
    for dname in DTYPES:
        for n in (100003, 77, 5):
            for name in ("expm1", "log1p", "sinh", "cosh", "exp2", "lgamma", "atanh", "sigmoid"):
                test_unary_is_pytorchs(name, dname, n)
            for name in ("pow", "atan2", "hypot"):
                test_binary_is_pytorchs(name, dname, n)
        for exponent in (4, 1.7):
            test_pow_scalar_exponent_is_pytorchs(exponent, dname, 1)
        for log in (False, True):
            for shape in ((40, 1001), (17, 7), (3, 100003)):
                for threads in (1, 2):
                    test_softmax_forward_and_backward_are_pytorchs(log, dname, shape, threads)
    _check_complex()
    return ember._C._cpu_capability()


@pytest.mark.skipif(os.environ.get("EMBER_CPU_CAPABILITY") is not None, reason="already under a chosen build")
@pytest.mark.parametrize("cap", ["avx2", "avx512"])
def test_each_capability_is_pytorchs_same_capability(cap):
    # AVX2 on every x86 machine with SLEEF; AVX512 where the CPU has it (16
    # floats / 8 doubles a vector, SLEEF's avx512f forms).
    if cap == "avx512" and not machine_has_avx512():
        pytest.skip("this CPU has no AVX-512")
    run_under_capability(cap, "test_sleef", "_check_all")

"""The special functions on CUDA (their formulas are ops/SpecialMath.h, shared
with the CPU kernels): Ember's CUDA result against Ember's CPU result and,
where the installed PyTorch has CUDA, against PyTorch's CUDA result, over
wide ranges of both signs with zeros, infinities and NaN; the dtypes each
function takes and PyTorch's error for the others. Skips, with the reason,
without a CUDA device."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
TORCH_CUDA = torch.cuda.is_available()

# name -> (call, dtypes, float32 relative tolerance). The device's libm
# (exp, log, sin, cos, sqrt) differs from the host's by an ulp or two; the
# formulas around them are the same.
BESSEL = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
]
FLOAT_ONLY = BESSEL + ["modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0"]
ALL_FLOATING = ["i0e", "i1e", "entr", "i1"]
SPECIAL = {name: ["float32", "float64"] for name in FLOAT_ONLY}
SPECIAL.update({name: ["float16", "bfloat16", "float32", "float64"] for name in ALL_FLOATING})
TOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-13}

VALUES = [
    0.0,
    -0.0,
    1e-6,
    -1e-6,
    1e-5,
    0.5,
    -0.5,
    1.0,
    2.0,
    2.09,
    -2.09,
    4.999,
    5.0,
    5.001,
    8.0,
    8.33,
    -8.0,
    20.0,
    -20.0,
    100.0,
    103.9,
    -100.0,
    700.0,
    1e10,
    -1e10,
    float("inf"),
    float("-inf"),
    float("nan"),
]


def values(dtype):
    rng = np.random.default_rng(0)
    sweep = np.logspace(-6, 3, 200)
    return np.concatenate([VALUES, sweep, -sweep, rng.uniform(-12, 12, 300)]).astype(
        "float32" if dtype == "bfloat16" else dtype
    )


def to_numpy(t):
    t = t.cpu()
    if t.dtype in (ember.float16, ember.bfloat16):
        t = t.float()
    return np.array(t.tolist(), dtype=np.float64)


def close(got, want, dtype):
    tol = TOL[dtype]
    # relative where the values are normal, absolute near zeros of the functions
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 1e-3, equal_nan=True)


@pytest.mark.parametrize("name", sorted(SPECIAL))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_special_unary(name, dtype):
    fn = getattr(ember.special, name)
    data = values(dtype).tolist()
    x_cpu = ember.tensor(data, dtype=getattr(ember, dtype))
    x_gpu = x_cpu.to("cuda")
    if dtype not in SPECIAL[name]:
        with pytest.raises(NotImplementedError, match=f'"{name}_cuda" not implemented for'):
            fn(x_gpu)
        return
    got = fn(x_gpu)
    assert got.device.type == "cuda" and got.dtype == x_cpu.dtype
    close(to_numpy(got), to_numpy(fn(x_cpu)), dtype)
    if TORCH_CUDA:
        want = getattr(torch.special, name)(torch.tensor(data, dtype=getattr(torch, dtype), device="cuda"))
        close(to_numpy(got), np.array(want.cpu().double().tolist()), dtype)


@pytest.mark.parametrize("name", BESSEL)
def test_layouts(name):
    fn = getattr(ember.special, name)
    base = ember.linspace(-10, 10, 7 * 5, dtype=ember.float64).reshape(7, 5)
    for x in (base.t(), base[::2], base[0, 0], base[:0]):
        got = fn(x.to("cuda"))
        assert tuple(got.shape) == tuple(x.shape)
        close(to_numpy(got), to_numpy(fn(x)), "float64")
    out = ember.empty(0, dtype=ember.float64, device="cuda")
    assert fn(base.to("cuda"), out=out) is out
    close(to_numpy(out), to_numpy(fn(base)), "float64")


def test_error_names():
    x = ember.ones(3, dtype=ember.float16, device="cuda")
    for name in BESSEL:
        with pytest.raises(NotImplementedError, match=f"\"{name}_cuda\" not implemented for 'Half'"):
            getattr(ember.special, name)(x)

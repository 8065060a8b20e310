"""Every pointwise operator on CUDA: Ember's CUDA result against Ember's CPU
result and, where the installed PyTorch has CUDA, against PyTorch's CUDA
result; every dtype the operator takes, contiguous, transposed, broadcast,
0-dim and empty operands, and 0-dim CPU tensors mixed with CUDA tensors.
Skips, with the reason, without a CUDA device."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
TORCH_CUDA = torch.cuda.is_available()

INT = ["uint8", "int8", "int16", "int32", "int64"]
FLOAT = ["float16", "bfloat16", "float32", "float64"]
ALL = ["bool", *INT, *FLOAT]
TOL = {"float16": (2e-3, 1e-2), "bfloat16": (1.6e-2, 5e-2), "float32": (2e-6, 1e-5), "float64": (1e-12, 1e-12)}


def sample(dtype: str, shape, low=-4.0, high=4.0, seed=0):
    """numpy data for an Ember/PyTorch tensor of dtype (bfloat16 as float32)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INT:
        lo = 0 if dtype == "uint8" else max(int(low), -100)
        return rng.integers(lo, max(int(high), lo + 2), size=shape).astype(dtype)
    values = rng.uniform(low, high, size=shape)
    return values.astype("float32" if dtype == "bfloat16" else dtype)


def make(mod, data, dtype: str, device: str):
    return mod.tensor(data.tolist() if data.ndim else data.item(), dtype=getattr(mod, dtype), device=device)


def to_numpy(t):
    t = t.cpu()
    if t.dtype in (ember.bfloat16, ember.float16) or str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return np.array(t.tolist())


def check_close(got, want, dtype: str):
    """Exact for bool and integral results; the tolerance of the result's
    floating dtype (or the input's, when that is wider) otherwise."""
    got_np, want_np = to_numpy(got), to_numpy(want)
    assert got_np.shape == want_np.shape
    result = str(got.dtype).rsplit(".", 1)[-1]
    if result in TOL:
        atol, rtol = max(TOL[result], TOL.get(dtype, (0, 0)))
        np.testing.assert_allclose(got_np, want_np, atol=atol, rtol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want_np)


def _divisor(b):
    """b with its zeros made ones for integral dtypes: an integer division by zero
    raises on the CPU (ZeroDivisionError) and is undefined on CUDA."""
    return b if b.dtype.is_floating_point else b.masked_fill(b == 0, 1)


# name -> (function of (module, *tensors), number of tensor inputs, dtypes, input range)
def _special(name):
    return lambda m, *a: getattr(m.special, name)(*a)


UNARY_FLOAT = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
    "erfinv",
    "lgamma",
    "digamma",
    "sigmoid",
    "reciprocal",
    "deg2rad",
    "rad2deg",
    "sinc",
    "i0",
    "logit",
    "frac",
]
RANGES = {
    "log": (0.1, 4),
    "log1p": (-0.9, 4),
    "log2": (0.1, 4),
    "log10": (0.1, 4),
    "sqrt": (0.1, 4),
    "rsqrt": (0.1, 4),
    "asin": (-0.99, 0.99),
    "acos": (-0.99, 0.99),
    "atanh": (-0.99, 0.99),
    "acosh": (1.01, 4),
    "erfinv": (-0.99, 0.99),
    "logit": (0.01, 0.99),
    "digamma": (0.1, 6),
    "lgamma": (0.1, 6),
}
SPECS = {name: (lambda m, x, n=name: getattr(m, n)(x), 1, FLOAT, RANGES.get(name, (-3, 3))) for name in UNARY_FLOAT}
for name in [
    "i0e",
    "i1",
    "i1e",
    "entr",
    "erfcx",
    "log_ndtr",
    "ndtri",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "spherical_bessel_j0",
]:
    rng_ = (0.01, 0.99) if name == "ndtri" else (-3, 3)
    dts = FLOAT if name in ("i0e", "i1", "i1e", "entr") else ["float32", "float64"]
    SPECS["special_" + name] = (_special(name), 1, dts, rng_)
SPECS.update(
    {
        "abs": (lambda m, x: m.abs(x), 1, INT[1:] + FLOAT, (-5, 5)),
        "neg": (lambda m, x: m.neg(x), 1, INT[1:] + FLOAT, (-5, 5)),
        "sign": (lambda m, x: m.sign(x), 1, ALL, (-5, 5)),
        "floor": (lambda m, x: m.floor(x), 1, INT + FLOAT, (-5, 5)),
        "ceil": (lambda m, x: m.ceil(x), 1, INT + FLOAT, (-5, 5)),
        "round": (lambda m, x: m.round(x), 1, INT + FLOAT, (-5, 5)),
        "round_decimals": (lambda m, x: m.round(x, decimals=2), 1, FLOAT, (-5, 5)),
        "trunc": (lambda m, x: m.trunc(x), 1, INT + FLOAT, (-5, 5)),
        "bitwise_not": (lambda m, x: m.bitwise_not(x), 1, ["bool", *INT], (-50, 50)),
        "logical_not": (lambda m, x: m.logical_not(x), 1, ALL, (-2, 2)),
        "isnan": (lambda m, x: m.isnan(x), 1, ALL, (-2, 2)),
        "isinf": (lambda m, x: m.isinf(x), 1, ALL, (-2, 2)),
        "isfinite": (lambda m, x: m.isfinite(x), 1, ALL, (-2, 2)),
        "signbit": (lambda m, x: m.signbit(x), 1, ALL, (-2, 2)),
        "nan_to_num": (lambda m, x: m.nan_to_num(m.log(x)), 1, FLOAT, (-2, 2)),
        "relu": (lambda m, x: m.relu(x), 1, INT[1:] + FLOAT, (-3, 3)),
        "silu": (lambda m, x: m.nn.functional.silu(x), 1, FLOAT, (-3, 3)),
        "gelu": (lambda m, x: m.nn.functional.gelu(x), 1, FLOAT, (-3, 3)),
        "gelu_tanh": (lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), 1, FLOAT, (-3, 3)),
        "leaky_relu": (lambda m, x: m.nn.functional.leaky_relu(x, 0.2), 1, FLOAT, (-3, 3)),
        "elu": (lambda m, x: m.nn.functional.elu(x, 0.7), 1, FLOAT, (-3, 3)),
        "softplus": (lambda m, x: m.nn.functional.softplus(x, 2.0, 3.0), 1, FLOAT, (-3, 3)),
        "hardtanh": (lambda m, x: m.nn.functional.hardtanh(x, -0.5, 0.7), 1, FLOAT, (-3, 3)),
        "hardsigmoid": (lambda m, x: m.nn.functional.hardsigmoid(x), 1, FLOAT, (-5, 5)),
        "hardswish": (lambda m, x: m.nn.functional.hardswish(x), 1, FLOAT, (-5, 5)),
        "mish": (lambda m, x: m.nn.functional.mish(x), 1, FLOAT, (-3, 3)),
        "log_sigmoid": (lambda m, x: m.nn.functional.logsigmoid(x), 1, FLOAT, (-3, 3)),
        "threshold": (lambda m, x: m.nn.functional.threshold(x, 0.5, -1.0), 1, INT[1:] + FLOAT, (-3, 3)),
        "polygamma2": (lambda m, x: m.polygamma(2, x), 1, ["float32", "float64"], (0.5, 4)),
        "polygamma1": (lambda m, x: m.polygamma(1, x), 1, ["float32", "float64"], (0.5, 4)),
        "clamp": (lambda m, x: m.clamp(x, -1, 2), 1, INT[1:] + FLOAT, (-3, 3)),
        "clamp_min": (lambda m, x: m.clamp_min(x, 0.5), 1, FLOAT, (-3, 3)),
        "pow_scalar": (lambda m, x: m.pow(x, 3), 1, INT[1:] + FLOAT, (-3, 3)),
        "pow_half": (lambda m, x: m.pow(x, 0.5), 1, FLOAT, (0.1, 3)),
        "pow_generic": (lambda m, x: m.pow(x, 1.7), 1, FLOAT, (0.1, 3)),
        "mul_number": (lambda m, x: x * 0.1, 1, FLOAT, (-3, 3)),
        "div_number": (lambda m, x: x / 3, 1, FLOAT, (-3, 3)),
        "floor_div_number": (lambda m, x: m.floor_divide(x, 0.7), 1, FLOAT, (-3, 3)),
        "add_number": (lambda m, x: x + 1.5, 1, FLOAT, (-3, 3)),
    }
)
BINARY = {
    "add": (lambda m, a, b: m.add(a, b, alpha=2), ALL[1:]),
    "sub": (lambda m, a, b: m.sub(a, b, alpha=3), ALL[1:]),
    "mul": (lambda m, a, b: m.mul(a, b), ALL),
    "div": (lambda m, a, b: m.div(a, b), FLOAT),
    "div_trunc": (lambda m, a, b: m.div(a, _divisor(b), rounding_mode="trunc"), INT[1:] + FLOAT),
    "floor_divide": (lambda m, a, b: m.floor_divide(a, _divisor(b)), INT[1:] + FLOAT),
    "remainder": (lambda m, a, b: m.remainder(a, _divisor(b)), INT[1:] + FLOAT),
    "fmod": (lambda m, a, b: m.fmod(a, _divisor(b)), INT[1:] + FLOAT),
    "pow": (lambda m, a, b: m.pow(m.abs(a), m.abs(b)), INT[1:] + FLOAT),
    "maximum": (lambda m, a, b: m.maximum(a, b), ALL),
    "minimum": (lambda m, a, b: m.minimum(a, b), ALL),
    "fmax": (lambda m, a, b: m.fmax(a, b), ALL),
    "fmin": (lambda m, a, b: m.fmin(a, b), ALL),
    "atan2": (lambda m, a, b: m.atan2(a, b), FLOAT),
    "copysign": (lambda m, a, b: m.copysign(a, b), FLOAT),
    "hypot": (lambda m, a, b: m.hypot(a, b), FLOAT),
    "logaddexp": (lambda m, a, b: m.logaddexp(a, b), FLOAT),
    "logaddexp2": (lambda m, a, b: m.logaddexp2(a, b), FLOAT),
    "xlogy": (lambda m, a, b: m.xlogy(a, m.abs(b)), FLOAT),
    "xlog1py": (lambda m, a, b: m.special.xlog1py(a, m.abs(b)), FLOAT),
    "zeta": (lambda m, a, b: m.special.zeta(m.abs(a) + 1.5, m.abs(b) + 0.5), ["float32", "float64"]),
    "igamma": (lambda m, a, b: m.igamma(m.abs(a) + 0.1, m.abs(b)), ["float32", "float64"]),
    "igammac": (lambda m, a, b: m.igammac(m.abs(a) + 0.1, m.abs(b)), ["float32", "float64"]),
    "eq": (lambda m, a, b: m.eq(a, b), ALL),
    "ne": (lambda m, a, b: m.ne(a, b), ALL),
    "lt": (lambda m, a, b: m.lt(a, b), ALL),
    "le": (lambda m, a, b: m.le(a, b), ALL),
    "gt": (lambda m, a, b: m.gt(a, b), ALL),
    "ge": (lambda m, a, b: m.ge(a, b), ALL),
    "logical_and": (lambda m, a, b: m.logical_and(a, b), ALL),
    "logical_or": (lambda m, a, b: m.logical_or(a, b), ALL),
    "logical_xor": (lambda m, a, b: m.logical_xor(a, b), ALL),
    "bitwise_and": (lambda m, a, b: m.bitwise_and(a, b), ["bool", *INT]),
    "bitwise_or": (lambda m, a, b: m.bitwise_or(a, b), ["bool", *INT]),
    "bitwise_xor": (lambda m, a, b: m.bitwise_xor(a, b), ["bool", *INT]),
    "bitwise_left_shift": (lambda m, a, b: m.bitwise_left_shift(a, m.abs(b) % 9), INT[1:]),
    "bitwise_right_shift": (lambda m, a, b: m.bitwise_right_shift(a, m.abs(b) % 9), INT[1:]),
    "tanh_backward": (lambda m, a, b: m.ops.aten.tanh_backward(a, b), FLOAT),
    "sigmoid_backward": (lambda m, a, b: m.ops.aten.sigmoid_backward(a, b), FLOAT),
    "silu_backward": (lambda m, a, b: m.ops.aten.silu_backward(a, b), FLOAT),
    "threshold_backward": (lambda m, a, b: m.ops.aten.threshold_backward(a, b, 0.3), FLOAT),
    "gelu_backward": (lambda m, a, b: m.ops.aten.gelu_backward(a, b), FLOAT),
    "where": (lambda m, a, b: m.where(a > 0, a, b), ALL[1:]),
    "lerp": (lambda m, a, b: m.lerp(a, b, 0.3), FLOAT),
    "lerp_tensor": (lambda m, a, b: m.lerp(a, b, m.sigmoid(a)), FLOAT),
    "clamp_tensor": (lambda m, a, b: m.clamp(a, b, b + 1), INT[1:] + FLOAT),
    "addcmul": (lambda m, a, b: m.addcmul(a, b, a, value=0.5), INT[1:] + FLOAT),
    "addcdiv": (lambda m, a, b: m.addcdiv(a, b, m.abs(a) + 1, value=0.5), FLOAT),
}
for poly in [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]:
    BINARY[poly] = (lambda m, a, b, p=poly: getattr(m.special, p)(a / 4, m.floor(m.abs(b) * 3)), ["float32", "float64"])

LAYOUTS = ["contiguous", "transposed", "broadcast", "zero_dim", "empty", "cpu_scalar"]


def operands(dtype, layout, n, low, high, mod, device):
    """n tensors of the layout on device; cpu_scalar makes the last a 0-dim CPU tensor."""
    shape = {"zero_dim": (), "empty": (0, 3)}.get(layout, (5, 7))
    out = []
    for k in range(n):
        data = sample(dtype, shape, low, high, seed=k)
        dev = device
        if layout == "broadcast" and k == n - 1:
            data = sample(dtype, (7,), low, high, seed=k)
        if layout == "cpu_scalar" and k == n - 1 and n > 1:
            data, dev = sample(dtype, (), low, high, seed=k), "cpu"
        t = make(mod, data, dtype, dev)
        if layout == "transposed" and t.dim() == 2:
            t = make(mod, np.ascontiguousarray(data.T), dtype, dev).t()
        out.append(t)
    return out


def run_case(fn, n, dtype, layout, low, high):
    cpu = fn(ember, *operands(dtype, layout, n, low, high, ember, "cpu"))
    cuda = fn(ember, *operands(dtype, layout, n, low, high, ember, "cuda"))
    assert cuda.device.type == "cuda"
    assert cuda.dtype == cpu.dtype and tuple(cuda.shape) == tuple(cpu.shape)
    check_close(cuda, cpu, dtype)
    if TORCH_CUDA:
        want = fn(torch, *operands(dtype, layout, n, low, high, torch, "cuda"))
        assert tuple(cuda.stride()) == tuple(want.stride())
        check_close(cuda, want, dtype)


UNARY_CASES = [(name, dt) for name, (_, _, dts, _) in SPECS.items() for dt in dts]
BINARY_CASES = [(name, dt) for name, (_, dts) in BINARY.items() for dt in dts]


@pytest.mark.parametrize("layout", LAYOUTS[:5])
@pytest.mark.parametrize("name,dtype", UNARY_CASES)
def test_unary(name, dtype, layout):
    fn, n, _, (low, high) = SPECS[name]
    run_case(fn, n, dtype, layout, low, high)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,dtype", BINARY_CASES)
def test_binary(name, dtype, layout):
    fn, _ = BINARY[name]
    run_case(fn, 2, dtype, layout, -4, 4)


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_copy_casts(src, dst):
    # float -> uint8 of a negative value is undefined in C++; PyTorch's too
    low = 0 if (src in FLOAT and dst == "uint8") else -100
    data = sample(src, (6, 5), low, 100)
    x = make(ember, data, src, "cuda")
    got = x.t().to(getattr(ember, dst))
    want = make(ember, data, src, "cpu").t().to(getattr(ember, dst))
    assert got.device.type == "cuda" and got.dtype == want.dtype
    check_close(got, want, dst)
    y = ember.empty((5, 6), dtype=getattr(ember, dst), device="cuda")
    y.copy_(x.t())
    check_close(y, want, dst)


@pytest.mark.parametrize("dtype", ALL)
def test_fill_and_zero(dtype):
    t = ember.empty((4, 9), dtype=getattr(ember, dtype), device="cuda")
    t.t().fill_(1)
    assert to_numpy(t).tolist() == [[1] * 9] * 4
    t[:, ::2].zero_()
    assert to_numpy(t)[:, ::2].sum() == 0


def test_large_strided_and_vector_tails():
    # 4 elements a thread: sizes around the vector width and a sliced start
    for n in [1, 3, 4, 5, 511, 512, 513, 4099]:
        x = ember.arange(n + 1, dtype=ember.float32).to("cuda")[1:]
        check_close(x * 2 + 1, ember.arange(n + 1, dtype=ember.float32)[1:] * 2 + 1, "float32")


def test_dtype_errors_name_cuda_kernels():
    x = ember.ones(3, dtype=ember.bool, device="cuda")
    with pytest.raises(NotImplementedError, match=r'"abs_cuda" not implemented for \'Bool\''):
        ember.abs(x)
    with pytest.raises(NotImplementedError, match=r'"floor_cuda" not implemented for \'Bool\''):
        ember.floor(x)


def test_mixed_devices_need_cpu_scalars():
    a = ember.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + ember.ones(3)
    check_close(a + ember.tensor(2.0), ember.full((3,), 3.0), "float32")
    half = a * ember.tensor(0.5, dtype=ember.float64)  # a 0-dim CPU tensor does not promote
    assert half.dtype == ember.float32 and to_numpy(half).tolist() == [0.5] * 3

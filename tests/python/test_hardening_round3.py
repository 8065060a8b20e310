"""Findings of a third held-out fuzzing round (tools/fuzz/fuzz.py, new seeds),
one class each, compared with PyTorch: values, exception classes and
messages."""

from __future__ import annotations

import pytest
from conftest import torch
from test_hardening import check_same

import ember

C64 = "torch.tensor([1 + 2j, 0j, -0.5j, 3 + 0j])"
DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "uint8"]


def _numbers_into_kernels():
    calls = {
        "elu": "F.elu({x}, alpha={v})",
        "elu_": "F.elu_({x}, alpha={v})",
        "celu": "F.celu({x}, alpha={v})",
        "leaky_relu": "F.leaky_relu({x}, {v})",
        "softplus_beta": "F.softplus({x}, beta={v})",
        "softplus_threshold": "F.softplus({x}, threshold={v})",
        "threshold": "F.threshold({x}, {v}, 0)",
        "threshold_value": "F.threshold({x}, 0, {v})",
        "threshold_": "F.threshold_({x}, {v}, 0)",
        "hardshrink": "F.hardshrink({x}, {v})",
        "softshrink": "F.softshrink({x}, {v})",
        "rrelu": "F.rrelu({x}, 0.1, {v})",
        "add_alpha": "{x}.add(1, alpha={v})",
        "sub_alpha": "torch.sub({x}, 1, alpha={v})",
        "addcmul": "{x}.addcmul({x}, {x}, value={v})",
        "addcdiv": "{x}.addcdiv({x}, {x} + 3, value={v})",
        "lerp": "{x}.lerp({x}, {v})",
    }
    cases = []
    for name, call in calls.items():
        for dtype in DTYPES:
            for v in ("1e300", "(0.5-1j)", "70000.0", "-300", "float('inf')", "0.25"):
                x = f"torch.tensor([1.0, -2.0, 0.5]).to(torch.{dtype})"
                cases.append(pytest.param(call.format(x=x, v=v), id=f"{name}-{dtype}-{v}"))
    return cases


# PyTorch's kernels convert their number arguments to the element type or to
# the type they compute in (float for float16/bfloat16): a number that does
# not fit is "value cannot be converted to type ... without overflow".
@pytest.mark.parametrize("code", _numbers_into_kernels())
def test_number_arguments_convert_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        "F.celu(torch.ones(2), 0)",
        "F.celu(torch.ones(2, dtype=torch.int64), 0.5 - 1j)",
        "F.rrelu(torch.ones(2), 0.5, 0.2)",
        "F.rrelu(torch.ones(2), float('nan'), 0.2)",
        "F.rrelu(torch.ones(2), 0.1, float('inf'), True)",
        "F.rrelu(torch.ones(2, dtype=torch.int64), 0.1, 0.2, True)",
        "F.rrelu(torch.ones(2, dtype=torch.float16), 0.1, 0.2, True)",
        "F.rrelu_(torch.ones(2), True)",
        "F.rrelu(torch.ones(2), 0.1, 1e300, True)",
        "F.rrelu(torch.ones(2, dtype=torch.bfloat16), 0.1, 1e300, True)",
        "F.rrelu(torch.ones(2, dtype=torch.float64), 0.1, 0.5j, True)",
        "F.softshrink(torch.ones(2), -1.0)",
        "F.softshrink(torch.ones(2, dtype=torch.float16), float('nan'))",
        "F.softshrink(torch.ones(2, dtype=torch.int32), 0.5 - 1j)",
    ],
)
def test_activation_bounds_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # integer, bool and complex inputs of floating-only kernels
        "F.glu(torch.ones(2, dtype=torch.complex64))",
        "F.glu(torch.ones(2, 0, 3, dtype=torch.int16), -3)",
        "F.glu(torch.ones(4, dtype=torch.bool))",
        "F.glu(torch.ones(3, dtype=torch.int64))",
        "F.prelu(torch.ones(2, dtype=torch.int8), torch.ones(1, dtype=torch.int8))",
        "F.prelu(torch.ones(0, dtype=torch.int8), torch.ones((), dtype=torch.int8))",
        "F.prelu(torch.ones(2, dtype=torch.bool), torch.ones(1, dtype=torch.bool))",
        "F.prelu(torch.ones(2, dtype=torch.int8), torch.ones(3, dtype=torch.int8))",
        "torch.kl_div(torch.ones(2, dtype=torch.int64), torch.ones(2))",
        "torch.kl_div(torch.ones(2), torch.ones(2, dtype=torch.int64))",
        "F.kl_div(torch.ones(2, dtype=torch.bool), torch.ones(2, dtype=torch.bool))",
        "F.soft_margin_loss(torch.ones(2, dtype=torch.int32), torch.ones(2, dtype=torch.int32))",
        "F.soft_margin_loss(torch.ones(2, dtype=torch.int64), torch.ones(2))",
        # the loss has input's dtype
        "F.huber_loss(torch.ones(2, dtype=torch.int16), torch.ones(2, dtype=torch.float64))",
        "F.huber_loss(torch.tensor([1.0, 2.3]), torch.tensor([0.3, 1.7], dtype=torch.float64), reduction='none')",
        "F.huber_loss(torch.tensor([1.0, 2.3]), torch.tensor([0.3, 1.7], dtype=torch.float64))",
        "F.huber_loss(torch.tensor([1.0, 2.3]), torch.tensor([0.3, 1.7], dtype=torch.float64), "
        "weight=torch.tensor([2.0, 1.0]))",
        # N is checked before the rank; a number is a one-element vector
        "torch.linalg.vander(torch.ones(1))",
        "torch.linalg.vander(torch.ones(3), N=1)",
        "torch.linalg.vander(torch.ones(3), N=0)",
        "torch.linalg.vander(torch.ones(()))",
        "torch.linalg.vander(torch.tensor(2.0), N=3)",
        "torch.linalg.vander(torch.ones(3, dtype=torch.bool), N=1)",
        # dims in range
        "torch.norm_except_dim(torch.ones(1), 0, -3)",
        "torch.norm_except_dim(torch.ones(2, 3), 2, 5)",
        "torch.logcumsumexp(torch.ones(2), 5)",
        "torch.logcumsumexp(torch.tensor(1.0), 1)",
        "torch.logcumsumexp(torch.ones(2, dtype=torch.int64), 5)",
        # out= must have input's dtype (checked first)
        "torch.logcumsumexp(torch.ones(2), 0, out=torch.zeros(2, dtype=torch.float64))",
        "torch.logcumsumexp(torch.ones(2, dtype=torch.int64), 0, out=torch.zeros(2))",
        "torch.logcumsumexp(torch.ones(2), 7, out=torch.zeros(2, dtype=torch.float16))",
        # bool results only
        "torch.isposinf(torch.ones(2), out=torch.zeros(2))",
        "torch.isneginf(torch.ones(2, dtype=torch.int64), out=torch.zeros(2, dtype=torch.int64))",
        "torch.isposinf(torch.ones(2, dtype=torch.complex64), out=torch.zeros(2))",
        "torch.isposinf(torch.tensor([float('inf'), 1.0]), out=torch.zeros(3, dtype=torch.bool))",
    ],
)
def test_checks_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # complex operands count by their truth value (nonzero)
        f"torch.logical_not({C64})",
        f"{C64}.logical_not_()",
        f"torch.logical_and({C64}, torch.tensor([0.0, 1.0, 2.0, 0.0]))",
        f"torch.logical_or(torch.zeros(4, dtype=torch.int32), {C64})",
        f"torch.logical_xor(torch.ones(4), {C64}, out=torch.zeros(4))",
        f"{C64}.logical_or_(torch.zeros(4))",
        f"{C64}.reshape(2, 2).t().logical_xor(torch.tensor([1j, 0j]))",
        f"torch.all({C64})",
        f"torch.any({C64})",
        f"torch.all({C64}.reshape(2, 2), 0)",
        f"torch.any({C64}.reshape(2, 2), dim=1, keepdim=True)",
        f"torch.all({C64}.reshape(2, 2), dim=(0, 1))",
        "torch.all(torch.zeros(2, 0, dtype=torch.complex128))",
        "torch.any(torch.full((1,), 0.5, dtype=torch.complex128).expand(2, 3))",
        # the variance of complex numbers is real
        "torch.var(torch.tensor([1 + 2j, 3 - 1j, 0.5j, -2 + 0j]))",
        "torch.var(torch.tensor([1 + 2j, 3 - 1j, 0.5j, -2 + 0j]), correction=0)",
        "torch.std(torch.tensor([[1 + 2j, 3 - 1j], [0.5j, -2 + 0j]], dtype=torch.complex128), 0)",
        "torch.var_mean(torch.tensor([1 + 2j, 3 - 1j, 0.5j, -2 + 0j]))",
        "torch.std_mean(torch.tensor([[1 + 2j, 3 - 1j], [0.5j, -2 + 0j]]), 1, keepdim=True)",
        "torch.var(torch.tensor([1 + 2j, 3 - 1j, 0.5j, -2 + 0j]), out=torch.empty(0, dtype=torch.float64))",
        "torch.std(torch.tensor([1 + 2j, 3 - 1j]), out=torch.empty(0, dtype=torch.int64))",
        "torch.var(torch.tensor(1 + 2j), correction=2)",
        "torch.var(torch.zeros(0, dtype=torch.complex64))",
    ],
)
def test_complex_logic_and_variance_as_torch(code):
    check_same(code)


def test_complex_std_value():
    x = torch.tensor([1 + 2j, 3 - 1j, 0.5j, -2 + 0j, 7.25 - 3j])
    e = ember.tensor(x.tolist())
    for fn in ("std", "var"):
        t, r = getattr(torch, fn)(x), getattr(ember, fn)(e)
        assert str(r.dtype) == str(t.dtype)
        assert abs(r.item() - t.item()) <= 1e-6 * abs(t.item())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_vector_with_one_element_zero_stride_vector(dtype):
    # The gradient of an expanded vector: a one-element vector with stride 0
    # went to BLAS with increment 0, which BLAS refuses (the result was
    # uninitialised memory).
    results = []
    for lib in (torch, ember):
        x = lib.full((1,), 0.5, dtype=getattr(lib, dtype)).expand(4).requires_grad_()
        other = (lib.arange(4, dtype=lib.float64) * 0.73 - 1.9).to(getattr(lib, dtype)).reshape(1, 4, 1)
        x.matmul(other).sum().backward()
        mv = lib.mv(
            lib.arange(6.0, dtype=getattr(lib, dtype)).reshape(6, 1), lib.ones(1, dtype=getattr(lib, dtype)).expand(1)
        )
        results.append((x.grad.tolist(), mv.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("cut", ["half", "ten"])
def test_truncated_archive_is_a_broken_archive(tmp_path, cut):
    # A truncated checkpoint keeps its zip header: PyTorch's RuntimeError
    # naming the archive, not the legacy pickle's UnpicklingError.
    outcomes = []
    for lib in (torch, ember):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({"w": lib.arange(1000.0)}, path)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if cut == "half" else data[:10])
        with pytest.raises(RuntimeError) as info:
            lib.load(path)
        outcomes.append(str(info.value).split(":")[0])
    assert outcomes[0] == outcomes[1] == "PytorchStreamReader failed reading zip archive"


@pytest.mark.parametrize(
    "code",
    [
        # complex norms are the norms of the magnitudes
        "torch.dist(torch.tensor([1 + 1j, 2j]), torch.tensor([1j, 2j]))",
        "torch.norm(torch.tensor([1 + 1j, 2j]))",
        "torch.norm(torch.tensor([1 + 1j, 2j]), 3)",
        "torch.linalg.vector_norm(torch.tensor([[1 + 1j, 2j], [3, 4j]], dtype=torch.complex128), float('inf'), 1)",
        "torch.linalg.vector_norm(torch.tensor([1 + 1j, 2j]), dtype=torch.complex128)",
        "torch.linalg.vector_norm(torch.tensor([1 + 1j, 2j]), dtype=torch.float32)",
        # clamp's bounds convert to the result's type; complex bounds
        "torch.ones(2, dtype=torch.bfloat16).clamp(0.5 - 1j)",
        "torch.ones(2, dtype=torch.bfloat16).clone().clamp_(0.5 - 1j)",
        "torch.ones(2, dtype=torch.bfloat16).clamp_min(0.5 - 1j)",
        "torch.ones(2, dtype=torch.bfloat16).clamp(max=0.5 - 1j)",
        "torch.ones(2, dtype=torch.int32).clamp(0.5 - 1j)",
        "torch.ones(2, dtype=torch.bfloat16).clamp(1e300)",
        "torch.ones(2, dtype=torch.int32).clamp(1e300)",
        "torch.ones(2, dtype=torch.int32).clamp(2**40)",
        "torch.ones(2, dtype=torch.int16).clamp_max(2**63 - 1)",
        "torch.ones(2, dtype=torch.int16).clamp(-(2**31), 2**31)",
        "torch.ones(2, dtype=torch.int64).clamp_max(2**63)",
        "torch.ones(2, dtype=torch.bfloat16).clamp(float('nan'))",
        "torch.ones(2, dtype=torch.uint8).clamp(-300)",
        "torch.ones(2, dtype=torch.uint8).clamp(300)",
        "torch.ones(2, dtype=torch.float16).clamp_max(-(2**62))",
        "torch.ones(2).clamp(0.5 + 0j)",
        "torch.ones(2, dtype=torch.int16).clamp(-3, 2)",
        # result dtypes and sizes named by the caller
        "torch.angle(torch.ones(3, dtype=torch.bfloat16), out=torch.zeros(0, dtype=torch.int64))",
        "torch.ones(2, dtype=torch.bfloat16).nanmean(dtype=torch.bool)",
        "torch.ones(4).nanmean(keepdim=True, dtype=torch.int64)",
        "torch.ones(4).nanmean(dtype=torch.float16)",
        "torch.ones(2, 2, 3, dtype=torch.int8).repeat_interleave(4, output_size=2**31)",
        "torch.ones(0, dtype=torch.int64).repeat_interleave(2, output_size=2)",
        "torch.ones(3, 1).repeat_interleave(1, output_size=-1)",
        "torch.ones(3, 1).repeat_interleave(2, dim=0, output_size=6)",
        "torch.float_power(torch.ones(3), 2, out=torch.zeros(3))",
        "torch.float_power(torch.ones(3), 5, out=torch.zeros(3, dtype=torch.complex64))",
        "torch.float_power(torch.ones(3), 2, out=torch.zeros(3, dtype=torch.float64))",
        "F.kl_div(torch.ones(2, dtype=torch.complex64), torch.ones(2, dtype=torch.int64))",
        "F.kl_div(torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.complex64))",
        # tau has one dimension less than the input
        "torch.linalg.householder_product(torch.ones(2, 2), torch.ones(2, 2))",
        "torch.orgqr(torch.ones(2, 3, 2, 2), torch.ones(2, 3, 2, 2))",
        # cross: bool input first, then one dtype
        "torch.cross(torch.ones(3, dtype=torch.int64), torch.ones(3))",
        "torch.linalg.cross(torch.ones(3, 3, dtype=torch.int64), torch.ones(3, 3, dtype=torch.float64))",
        "torch.cross(torch.ones(2, 3, dtype=torch.int8), torch.ones(2, 3, dtype=torch.int64), "
        "out=torch.zeros(2, 3, dtype=torch.int8))",
        "torch.cross(torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.int64))",
        "torch.cross(torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.bool))",
        # feature dropout returns early before it needs two dimensions
        "F.dropout2d(torch.ones(3), p=0)",
        "F.dropout2d(torch.ones(3), True)",
        "F.dropout3d(torch.tensor(1.0), False)",
        "F.dropout2d(torch.ones(3), 0.5)",
        # renorm: p > 0, two dimensions, dim in range
        "torch.ones(2, 3).renorm(3, -(2**63), 2**63)",
        "torch.ones(2).renorm(3, 3, 2**31)",
        "torch.ones(2, 3).renorm(0, 1, 2)",
        "torch.ones(2, 3).renorm(-1, 1, 2)",
        "torch.ones(2, 3).renorm(float('nan'), 1, 2)",
        # mode's dim in range
        "torch.ones(1, 4, 1, dtype=torch.int8).mode(2**63 - 1, True)",
        "torch.ones(1, 4, 1, dtype=torch.int8).mode(3)",
        "torch.tensor(2).mode(0)",
        "torch.tensor([1 + 1j]).mode(4)",
    ],
)
def test_norms_clamp_and_result_checks_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # an empty index is not checked (dtype, rank): nothing is read or written
        "torch.gather(torch.ones(2, 3), 0, torch.ones(0, 3, dtype=torch.float16))",
        "torch.gather(torch.ones(2, 3), 0, torch.ones(0, dtype=torch.int64))",
        "torch.gather(torch.ones(2, 3), 0, torch.ones(0, 1, 1, dtype=torch.float32))",
        "torch.gather(torch.ones(2, 3), 5, torch.ones(0, dtype=torch.int64))",
        "torch.ones(2, 3).scatter_add_(0, torch.ones(0, dtype=torch.int8), torch.ones(6))",
        "torch.ones(2, 3).scatter(0, torch.ones(0, 3, dtype=torch.float32), 1.0)",
        "torch.ones(2, 3).scatter(0, torch.ones(0, 3, dtype=torch.float32), torch.ones(2, 3))",
        "torch.ones(2, 3).scatter_reduce(0, torch.ones(0, 3, dtype=torch.float32), torch.ones(2, 3), 'sum')",
        "torch.take_along_dim(torch.ones(0, dtype=torch.uint8), torch.ones(0, dtype=torch.float32))",
        # a non-empty one is
        "torch.gather(torch.ones(2, 3), 0, torch.ones(1, 3, dtype=torch.float16))",
        "torch.gather(torch.ones(2, 3), 0, torch.ones(1, dtype=torch.int64))",
        "torch.ones(2, 3).scatter_add_(0, torch.ones(1, dtype=torch.int64), torch.ones(6))",
        "torch.take_along_dim(torch.ones(2, 3), torch.ones(0, 3, dtype=torch.int32), 0)",
    ],
)
def test_empty_index_is_not_checked(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # an empty input gives the empty result before tolerances broadcast
        "torch.linalg.pinv(torch.ones(2, 0, 0), torch.full((1,), 1).to(torch.uint8).expand((2, 2)))",
        "torch.linalg.pinv(torch.ones(2, 3, 0), atol=torch.ones(4, 1, 1))",
        "torch.linalg.pinv(torch.ones(2, 0, 3))",
        "torch.linalg.pinv(torch.ones(3, 3), torch.ones(2, 1))",
    ],
)
def test_pinv_shapes_as_torch(code):
    check_same(code)


@pytest.mark.parametrize(
    "code",
    [
        # complex tensors have storage classes (no legacy tensor type)
        "str(torch.ones(2, dtype=torch.complex64).storage_type())",
        "str(torch.ones(2, dtype=torch.complex128).storage_type())",
        "str(torch.ones(2, dtype=torch.bool).storage_type())",
        "torch.ones(2, dtype=torch.complex64).storage_type()(3).size()",
        # one storage object, not one address: two empty storages are not set to each other
        "torch.ones(0).is_set_to(torch.ones(0))",
        "torch.ones(0, dtype=torch.float16).is_set_to(torch.ones(0))",
        "(lambda a: a.is_set_to(a))(torch.ones(0))",
        "(lambda a: a.is_set_to(a[:]))(torch.ones(3))",
        "torch.ones(3).is_set_to(torch.ones(3))",
    ],
)
def test_storage_identity_as_torch(code):
    check_same(code)


C24 = "((torch.arange(24, dtype=torch.float64) * 0.73 - 1.9) * (1 - 0.5j) + 0.25j)"


@pytest.mark.parametrize(
    "code",
    [
        # complex scans accumulate in complex<double>, products part by part
        f"torch.cumsum({C24}.to(torch.complex64).reshape(2, 3, 4), 1)",
        f"torch.cumprod({C24}.to(torch.complex64).reshape(4, 6)[:, ::2], 0)",
        "torch.cumsum(torch.ones(4, dtype=torch.int16), 0, dtype=torch.complex64)",
        "torch.cumsum(torch.arange(4.0), 0, out=torch.zeros(4, dtype=torch.complex64))",
        f"torch.linalg.vander({C24}.to(torch.complex64)[:4])",
        "torch.cumprod(torch.tensor([1 + 1j, float('inf'), 2j, complex(float('nan'), 1)]), 0)",
        "torch.cumsum(torch.tensor(1 + 2j), 0)",
        f"torch.cumulative_trapezoid({C24}.to(torch.complex64).reshape(2, 12))",
        "torch.tensor([1 + 1j, 2j]).cumsum_(0)",
        # complex sums of 0-dim tensors
        "torch.sum(torch.tensor(1 + 2j, dtype=torch.complex128))",
        "torch.mean(torch.tensor(1 + 2j))",
        "torch.sum(torch.tensor(1 + 2j), 0, keepdim=True)",
    ],
)
def test_complex_scans_and_scalar_sums_as_torch(code):
    check_same(code)


def test_complex128_cumprod_close_to_torch():
    # complex128 products round in the last bits as the compilers contract them
    code = f"torch.cumprod({C24}.to(torch.complex128).reshape(2, 3, 4), -1)"
    t = eval(code, {"torch": torch})  # noqa: S307 - the test's own code
    e = eval(code, {"torch": ember})  # noqa: S307
    assert str(e.dtype) == str(t.dtype) and list(e.shape) == list(t.shape)
    assert torch.allclose(torch.tensor(e.tolist(), dtype=t.dtype), t, rtol=1e-14, atol=0)

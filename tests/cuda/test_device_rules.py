"""CUDA operators where the device, dtype or layout rules decide the result:
0-dim CPU tensors as numbers of a CUDA operator, the refusal of other CPU
tensors, float-to-uint8 copies, log_sigmoid's strides, group_norm's
statistics dtype, scatter_reduce's reductions, and the errors of integer
matrix products and of tensor_split's CUDA indices. Each against torch's CUDA
result (or exception) where torch has CUDA, and against Ember's CPU result."""

from __future__ import annotations

import pytest
from cuda_compare import assert_close, same_exception, torch_has_cuda

import ember

torch = pytest.importorskip("torch")


def _tensor(lib, data, dtype, device):
    return lib.tensor(data, dtype=getattr(lib, dtype), device=device)


def _run(fn, tol=None, strides=True):
    """fn(lib, device) on Ember CUDA, against Ember CPU and torch CUDA."""
    got = fn(ember, "cuda")
    assert_close(got, fn(ember, "cpu"), tol, "ember cuda vs ember cpu", strides=False)
    if torch_has_cuda():
        assert_close(got, fn(torch, "cuda"), tol, "ember cuda vs torch cuda", strides)
    return got


def _raises_as_torch(fn, expected_type, expected_message):
    """fn(lib, 'cuda') raises on Ember what it raises on torch's CUDA (else what is given)."""
    with pytest.raises(Exception) as got:
        fn(ember, "cuda")
    if torch_has_cuda():
        with pytest.raises(Exception) as want:
            fn(torch, "cuda")
        assert same_exception(got.value, want.value), f"ember {got.value!r}, torch {want.value!r}"
    else:
        assert type(got.value) is expected_type, repr(got.value)
        assert str(got.value) == expected_message


# ---- 0-dim CPU tensors are numbers of a CUDA operator --------------------------------

X = [[1.5, -2.0, 0.25], [3.0, -0.5, 4.0]]

MIXED = {
    "where_cpu_other": lambda m, d, t: m.where(_tensor(m, X, t, d) > 0, _tensor(m, X, t, d), _tensor(m, 7, t, "cpu")),
    "where_cpu_self": lambda m, d, t: m.where(_tensor(m, X, t, d) > 0, _tensor(m, -3, t, "cpu"), _tensor(m, X, t, d)),
    "where_cpu_cond": lambda m, d, t: m.where(
        _tensor(m, True, "bool", "cpu"), _tensor(m, X, t, d), _tensor(m, 1, t, d)
    ),
    "where_cpu_both": lambda m, d, t: m.where(
        _tensor(m, X, t, d) > 0, _tensor(m, 2, t, "cpu"), _tensor(m, 5, t, "cpu")
    ),
    "where_python_number": lambda m, d, t: m.where(_tensor(m, X, t, d) > 0, 2.5, _tensor(m, X, t, d)),
    "add_cpu_second": lambda m, d, t: m.add(_tensor(m, X, t, d), _tensor(m, 3, t, "cpu")),
    "add_cpu_first": lambda m, d, t: m.add(_tensor(m, 3, t, "cpu"), _tensor(m, X, t, d)),
    "mul_cpu_first_float": lambda m, d, t: m.mul(_tensor(m, 0.5, "float64", "cpu"), _tensor(m, X, t, d)),
    "ge_cpu_second": lambda m, d, t: m.ge(_tensor(m, X, t, d), _tensor(m, 1, t, "cpu")),
    "maximum_cpu_first": lambda m, d, t: m.maximum(_tensor(m, 1, t, "cpu"), _tensor(m, X, t, d)),
}


@pytest.mark.parametrize("dtype", ["int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("case", list(MIXED))
def test_cpu_scalar_operands(case, dtype):
    """A 0-dim CPU tensor joins a CUDA operator as a number, in any operand position."""
    got = _run(lambda m, d: MIXED[case](m, d, dtype))
    assert got.device.type == "cuda"


@pytest.mark.parametrize("first_on_cpu", [False, True])
def test_cpu_tensor_with_dims_is_refused(first_on_cpu):
    def fn(m, d):
        a, b = _tensor(m, [1.0, 2.0], "float32", d), _tensor(m, [3.0, 4.0], "float32", "cpu")
        return m.add(b, a) if first_on_cpu else m.add(a, b)

    message = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    _raises_as_torch(fn, RuntimeError, message)


# Operators whose CUDA entry checks that its tensors share one device (PyTorch's
# generated check, `device_check` in ops.yaml), and the fused pointwise ones
# that refuse some CPU numbers: (call, the message torch's CUDA build gives).
_V = [[1.0, 2.0], [3.0, 4.0]]
MIXED_REFUSED = {
    "logaddexp": (
        lambda m, d: m.logaddexp(_tensor(m, _V, "float32", d), _tensor(m, 2.0, "float32", "cpu")),
        "Expected all tensors to be on the same device, but got other is on cpu, different from other tensors on "
        "cuda:0 (when checking argument in method wrapper_CUDA_logaddexp)",
    ),
    "logaddexp_cpu_first": (
        lambda m, d: m.logaddexp(_tensor(m, 2.0, "float32", "cpu"), _tensor(m, _V, "float32", d)),
        "Expected all tensors to be on the same device, but got other is on cuda:0, different from other tensors "
        "on cpu (when checking argument in method wrapper_CUDA_logaddexp)",
    ),
    "clamp_tensor": (
        lambda m, d: m.clamp(_tensor(m, _V, "float32", d), min=_tensor(m, 2.0, "float32", "cpu")),
        "Expected all tensors to be on the same device, but got min is on cpu, different from other tensors on "
        "cuda:0 (when checking argument in method wrapper_CUDA_clamp_Tensor)",
    ),
    "mm": (
        lambda m, d: m.mm(_tensor(m, _V, "float32", d), _tensor(m, _V, "float32", "cpu")),
        "Expected all tensors to be on the same device, but got mat2 is on cpu, different from other tensors on "
        "cuda:0 (when checking argument in method wrapper_CUDA_mm)",
    ),
    "index_select": (
        lambda m, d: m.index_select(_tensor(m, _V, "float32", d), 0, _tensor(m, [1, 0], "int64", "cpu")),
        "Expected all tensors to be on the same device, but got index is on cpu, different from other tensors on "
        "cuda:0 (when checking argument in method wrapper_CUDA__index_select)",
    ),
    "addcmul_self": (
        lambda m, d: m.addcmul(
            _tensor(m, 1.0, "float32", "cpu"), _tensor(m, _V, "float32", d), _tensor(m, _V, "float32", d)
        ),
        "CPU Scalar support for self argument is not supported when calling addcmul on CUDA tensors.",
    ),
    "addcmul_tensor1": (
        lambda m, d: m.addcmul(
            _tensor(m, _V, "float32", d), _tensor(m, 1.0, "float32", "cpu"), _tensor(m, _V, "float32", d)
        ),
        "CPU Scalar support for tensor1 argument is not supported when calling addcmul on CUDA tensors. However, "
        "CPU Scalar support for tensor2 is supported, please swap your tensor1 and tensor2 terms.",
    ),
    "addcdiv_tensor2": (
        lambda m, d: m.addcdiv(
            _tensor(m, _V, "float32", d), _tensor(m, _V, "float32", d), _tensor(m, 2.0, "float32", "cpu")
        ),
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
    ),
}


@pytest.mark.parametrize("case", list(MIXED_REFUSED))
def test_mixed_devices_refused_as_torch(case):
    fn, message = MIXED_REFUSED[case]
    _raises_as_torch(fn, RuntimeError, message)


def test_addcmul_takes_a_cpu_number_as_tensor2():
    got = _run(
        lambda m, d: m.addcmul(
            _tensor(m, _V, "float32", d), _tensor(m, _V, "float32", d), _tensor(m, 2.0, "float32", "cpu")
        )
    )
    assert got.device.type == "cuda"


# ---- conversions, layouts, dtypes ----------------------------------------------------


@pytest.mark.parametrize("src", ["float64", "float32", "float16", "bfloat16"])
def test_copy_float_to_uint8_wraps_as_the_cpu(src):
    """A float reaches uint8 through int64: -2.0 gives 254, 300.0 gives 44."""
    values = [-2.0, -1.5, 0.0, 0.75, 2.0, 255.0, 256.0, 300.0, -128.0]

    def fn(m, d):
        out = m.zeros(len(values), dtype=m.uint8, device=d)
        return out.copy_(_tensor(m, values, src, d))

    got = _run(fn)
    assert got.cpu().tolist()[0] == 254


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_log_sigmoid_result_follows_input_layout(dtype):
    def fn(m, d):
        x = _tensor(m, [[0.5, -1.0, 2.0, -3.0], [1.0, 0.0, -0.25, 4.0], [-2.0, 3.0, 0.1, -0.1]], dtype, d)
        return m.nn.functional.logsigmoid(x.t())

    got = _run(fn)
    assert tuple(got.stride()) == (1, 4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_group_norm_statistics_dtype(dtype):
    """mean and rstd have the input's dtype (the parameters share it), as torch's CUDA kernel."""

    def fn(m, d):
        x = m.linspace(-2.0, 3.0, 24, dtype=m.float32, device=d).reshape(2, 4, 3).to(getattr(m, dtype))
        w = m.linspace(0.5, 1.5, 4, dtype=m.float32, device=d).to(getattr(m, dtype))
        b = m.linspace(-0.5, 0.5, 4, dtype=m.float32, device=d).to(getattr(m, dtype))
        return m.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5)

    # The normalised values in 16 bits may round the other way than the CPU's (one unit in the last place).
    _, mean, rstd = _run(fn, tol=(1.6e-2, 1e-2))
    assert mean.dtype == getattr(ember, dtype) and rstd.dtype == getattr(ember, dtype)


# ---- scatter_reduce --------------------------------------------------------------------


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float32", "float64"])
def test_scatter_reduce(dtype, reduce, include_self):
    """Repeated targets combine with the reduction asked for (not a product)."""
    if dtype == "bool" and reduce == "mean":
        pytest.skip("bool mean: not implemented (a division)")
    self_vals = [[1, 0, 2, 0], [3, 1, 0, 2], [0, 2, 1, 1]]
    src_vals = [[2, 3, 0, 1], [1, 0, 3, 2], [3, 1, 2, 0], [0, 2, 1, 3]]
    index = [[0, 1, 2, 0], [1, 1, 0, 2], [2, 0, 2, 1], [0, 2, 1, 1]]

    def fn(m, d):
        s = _tensor(m, self_vals, dtype, d)
        src = _tensor(m, src_vals, dtype, d)
        idx = m.tensor(index, device=d)
        return s.scatter_reduce(0, idx, src, reduce, include_self=include_self)

    if dtype == "bool" and reduce in ("prod", "amax", "amin"):
        # PyTorch's CUDA scatter kernel of these takes no bool (the CPU's does).
        message = "\"cuda_scatter_gather_base_kernel_func\" not implemented for 'Bool'"
        _raises_as_torch(fn, NotImplementedError, message)
        return
    _run(fn, tol=(1e-6, 1e-6))


# ---- refusals: the same exception as torch's CUDA ------------------------------------


def _ints(m, d, *shape):
    return m.arange(1, 1 + int(torch.tensor(shape).prod()), device=d).reshape(shape).to(m.int32)


PRODUCTS = {
    "mm": (lambda m, d: m.mm(_ints(m, d, 2, 3), _ints(m, d, 3, 2)), "addmm_cuda"),
    "addmm": (lambda m, d: m.addmm(_ints(m, d, 2, 2), _ints(m, d, 2, 3), _ints(m, d, 3, 2)), "addmm_cuda"),
    "matmul_2d": (lambda m, d: m.matmul(_ints(m, d, 2, 3), _ints(m, d, 3, 2)), "addmm_cuda"),
    "bmm": (lambda m, d: m.bmm(_ints(m, d, 2, 2, 3), _ints(m, d, 2, 3, 2)), "baddbmm_cuda"),
    "bmm_one_batch": (lambda m, d: m.bmm(_ints(m, d, 1, 2, 3), _ints(m, d, 1, 3, 2)), "baddbmm_cuda"),
    "baddbmm": (
        lambda m, d: m.baddbmm(_ints(m, d, 2, 2, 2), _ints(m, d, 2, 2, 3), _ints(m, d, 2, 3, 2)),
        "baddbmm_cuda",
    ),
    "addbmm": (lambda m, d: m.addbmm(_ints(m, d, 2, 2), _ints(m, d, 2, 2, 3), _ints(m, d, 2, 3, 2)), "addmm_cuda"),
    "mv": (lambda m, d: m.mv(_ints(m, d, 2, 3), _ints(m, d, 3)), "addmv_impl_cuda"),
    "addmv": (lambda m, d: m.addmv(_ints(m, d, 2), _ints(m, d, 2, 3), _ints(m, d, 3)), "addmv_impl_cuda"),
    "matmul_2d_1d": (lambda m, d: m.matmul(_ints(m, d, 2, 3), _ints(m, d, 3)), "addmv_impl_cuda"),
    "dot": (lambda m, d: m.dot(_ints(m, d, 3), _ints(m, d, 3)), "dot"),
    "vdot": (lambda m, d: m.vdot(_ints(m, d, 3), _ints(m, d, 3)), "dot"),
    "matmul_1d": (lambda m, d: m.matmul(_ints(m, d, 3), _ints(m, d, 3)), "dot"),
}


@pytest.mark.parametrize("op", list(PRODUCTS))
def test_integer_products_raise_as_torch(op):
    fn, kernel = PRODUCTS[op]
    _raises_as_torch(fn, NotImplementedError, f"\"{kernel}\" not implemented for 'Int'")


def test_integer_product_without_work_computes():
    """An empty inner dim computes nothing, so no dtype error (as in PyTorch)."""
    got = _run(lambda m, d: m.mm(m.ones(2, 0, dtype=m.int32, device=d), m.ones(0, 3, dtype=m.int32, device=d)))
    assert got.cpu().tolist() == [[0, 0, 0], [0, 0, 0]]


def test_tensor_split_indices_on_cuda_raise_as_torch():
    _raises_as_torch(
        lambda m, d: m.tensor_split(m.arange(6, device=d), m.tensor([1, 3], device=d)),
        RuntimeError,
        "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on cuda:0",
    )

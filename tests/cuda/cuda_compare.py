"""Comparing an Ember CUDA result with Ember's CPU result and with torch's
CUDA result: values, dtype, shape and strides, exactly or within a tolerance."""

from __future__ import annotations

import math

import ember

try:
    import torch
except ImportError:  # the CUDA tests need torch only to build inputs and compare
    torch = None

# CUDA's math library and reduction orders differ from the CPU's: a float result
# may differ by a few ulps, more where a reduction sums many terms.
CUDA_TOL = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (8e-3, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}

# Operators found without a CUDA kernel in this run: name -> cases that reached
# them (filled by test_opdb.py, listed in the session summary by conftest.py).
MISSING_KERNELS: dict[str, set[str]] = {}


def cuda_skip_reason():
    """Why Ember's CUDA backend cannot run here, or '' when it can."""
    if not hasattr(ember, "cuda") or not ember.cuda._is_compiled():
        return "Ember was built without CUDA"
    try:
        if ember.cuda.device_count() == 0:
            return "no CUDA device: " + _init_error()
    except Exception as err:  # noqa: BLE001 - any failure to query means no usable device
        return f"no CUDA device: {err}"
    return ""


def _init_error():
    try:
        ember.cuda.init()
    except Exception as err:  # noqa: BLE001 - the driver's own words
        return str(err)
    return "none found"


def torch_has_cuda():
    return torch is not None and torch.cuda.is_available()


def dtype_name(dtype):
    return str(dtype).split(".")[-1]


def to_ember(obj, device):
    """torch arguments as Ember's on `device`: tensors with the same values,
    strides and storage offset; containers element by element."""
    if torch is not None and isinstance(obj, torch.Tensor):
        t = obj.detach().cpu()
        dt = getattr(ember, dtype_name(t.dtype))
        if t.is_contiguous() or t.numel() == 0:
            e = ember.tensor(t.tolist(), dtype=dt).reshape(tuple(t.shape))
        else:
            flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
            e = ember.tensor(flat.tolist(), dtype=dt).as_strided(tuple(t.shape), t.stride(), t.storage_offset())
        if device != "cpu":
            # Keep the layout: copy into a tensor of the same strides on the device.
            dev = ember.empty_strided(tuple(e.shape), e.stride(), dtype=dt, device=device) if e.numel() else None
            e = dev.copy_(e) if dev is not None else e.to(device)
        return e
    if torch is not None and isinstance(obj, torch.dtype):
        return getattr(ember, dtype_name(obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_ember(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: to_ember(v, device) for k, v in obj.items()}
    if isinstance(obj, str) and obj in ("cpu", "cuda"):
        return device
    return obj


def to_torch_cuda(obj):
    """torch arguments on CUDA with the strides to_ember gives Ember's (`.to`
    would make a tensor with gaps contiguous)."""
    if isinstance(obj, torch.Tensor):
        t = obj.detach()
        if t.numel() == 0 or t.is_contiguous():
            return t.to("cuda")
        return torch.empty_strided(tuple(t.shape), t.stride(), dtype=t.dtype, device="cuda").copy_(t)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_torch_cuda(o) for o in obj)
    if isinstance(obj, dict):
        return {k: to_torch_cuda(v) for k, v in obj.items()}
    return obj


def as_torch(e):
    """An Ember tensor (any device) as a torch CPU tensor with its values."""
    t = torch.tensor(e.detach().to("cpu").tolist(), dtype=getattr(torch, dtype_name(e.dtype)))
    return t.reshape(tuple(e.shape))


def tolerance(dtype, tol=None):
    """The row's tolerance, widened to at least CUDA's."""
    base = CUDA_TOL.get(dtype, (0.0, 0.0))
    if tol is None:
        return base
    return max(tol[0], base[0]), max(tol[1], base[1])


def assert_close(got, expected, tol=None, where="", strides=True, exact=False, device="cuda"):
    """got (Ember, on cuda) matches expected (an Ember or torch result):
    structure, dtype, shape, strides, and values within `tol` (exact when
    exact=True or for integer and bool results)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{where}: expected a sequence, got {type(got).__name__}"
        assert len(got) == len(expected), f"{where}: {len(got)} results != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_close(g, e, tol, f"{where}[{i}]", strides, exact, device)
        return
    if not _is_tensor(expected):
        if isinstance(expected, float) and math.isnan(expected):
            assert math.isnan(got), f"{where}: {got} != nan"
        else:
            assert got == expected, f"{where}: {got!r} != {expected!r}"
        return
    assert isinstance(got, ember.Tensor), f"{where}: expected a tensor, got {type(got).__name__}"
    assert got.device.type == device, f"{where}: result on {got.device}, not {device}"
    name = dtype_name(expected.dtype)
    assert dtype_name(got.dtype) == name, f"{where}: dtype {got.dtype} != {expected.dtype}"
    assert tuple(got.shape) == tuple(expected.shape), f"{where}: shape {tuple(got.shape)} != {tuple(expected.shape)}"
    if strides and got.numel() > 1:
        assert tuple(got.stride()) == tuple(expected.stride()), (
            f"{where}: strides {tuple(got.stride())} != {tuple(expected.stride())}"
        )
    mine = as_torch(got)
    theirs = as_torch(expected) if isinstance(expected, ember.Tensor) else expected.detach().cpu()
    if theirs.dtype.is_floating_point or theirs.dtype.is_complex:
        rtol, atol = (0.0, 0.0) if exact else tolerance(name, tol)
        torch.testing.assert_close(mine, theirs, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"{where}: {m}")
    else:
        assert torch.equal(mine, theirs), f"{where}: {mine} != {theirs}"


def _is_tensor(x):
    return isinstance(x, ember.Tensor) or (torch is not None and isinstance(x, torch.Tensor))


class CudaComparer:
    """compare(fn, *args, tol=None, **kwargs) with fn(lib, *args, **kwargs) and
    torch CPU tensors as args: Ember on cuda against Ember on cpu (values,
    dtype, shape, strides), then against torch on cuda where it has CUDA."""

    def __call__(self, fn, *args, tol=None, exact=False, strides=True, cuda_order=False, **kwargs):
        """cuda_order: the result follows torch's CUDA kernel where it differs
        from the CPU's (the index among ties): compared with torch's CUDA
        result only, where torch has CUDA."""
        got = fn(ember, *to_ember(args, "cuda"), **to_ember(kwargs, "cuda"))
        if not (cuda_order and torch_has_cuda()):
            on_cpu = fn(ember, *to_ember(args, "cpu"), **to_ember(kwargs, "cpu"))
            assert_close(got, on_cpu, tol, "ember cuda vs ember cpu", strides, exact)
        if torch_has_cuda():
            expected = fn(torch, *to_torch_cuda(args), **to_torch_cuda(kwargs))
            assert_close(got, expected, tol, "ember cuda vs torch cuda", strides, exact)
        return got


def same_exception(mine, theirs):
    """Whether Ember's exception is torch's: the same type and the same message."""
    return theirs is not None and type(mine) is type(theirs) and str(mine) == str(theirs)


# Operator database rows whose CUDA results follow torch's CUDA kernels where
# Ember's CPU results follow torch's CPU ones (docs/decisions/0058): the order
# of ties in unstable sorts of short lines, median's index among equal values,
# 16-bit scans and round(decimals=) rounding every step, gelu(+inf) against
# the CPU's AVX-512 path (NaN there, as PyTorch's), the saved statistics of
# batch and layer normalisation (float32 for 16-bit inputs on CUDA, the input's
# dtype on the CPU), 16-bit logit (PyTorch's CPU kernel rounds differently
# for strided input). Where torch has CUDA, these rows are compared with
# torch's CUDA result only.
TORCH_CUDA_ORDER_ROWS = frozenset(
    {
        "sort",
        "argsort",
        "median",
        "nanmedian",
        "cumsum",
        "cumprod",
        "round.decimals",
        "gelu",
        "native_batch_norm",
        "native_layer_norm",
        "logit",
        "logit.eps",
    }
)


def compares_with_cpu(row_id):
    """Whether a database row's CUDA result is held to Ember's CPU result too."""
    return not (torch_has_cuda() and row_id in TORCH_CUDA_ORDER_ROWS)

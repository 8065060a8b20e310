"""Every row of the operator database (tests/python/opdb) on CUDA: each sample
for each dtype the row lists for cuda, against Ember's CPU result and, where
torch has CUDA, against torch's CUDA result; then the gradients of the float
rows against Ember's CPU gradients.

An operator whose CUDA kernel is not registered yet is an expected failure
named by the operator; the session summary lists them with their count, so
the gap is visible and shrinks as kernels land. A sample that raises on CUDA
but not on the CPU passes only where torch's CUDA raises the same exception
type with the same message; without torch CUDA it fails."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

torch = pytest.importorskip("torch", reason="torch builds the samples of the operator database")

from cuda_compare import (  # noqa: E402
    MISSING_KERNELS,
    assert_close,
    compares_with_cpu,
    same_exception,
    to_ember,
    to_torch_cuda,
    torch_has_cuda,
)
from opdb import OP_DB  # noqa: E402
from opdb.core import torch_dtype  # noqa: E402

import ember  # noqa: E402

# The dispatcher's words for an operator without a CUDA kernel (ops/Dispatch.cpp).
_NO_KERNEL = re.compile(r"Could not run '([^']+)' with arguments from the 'CUDA' backend")


def _params():
    out = []
    for row in OP_DB:
        for dt in row.dtypes_on("cuda"):
            out.append(pytest.param(row, dt, id=f"{row.id}-{dt}"))
    return out


def _grad_params():
    return [pytest.param(row, id=row.id) for row in OP_DB if row.supports_grad]


def _call(fn, args, kwargs, where):
    """fn(*args, **kwargs); a missing CUDA kernel becomes an expected failure naming it."""
    try:
        return fn(*args, **kwargs), None
    except NotImplementedError as err:
        m = _NO_KERNEL.search(str(err))
        if m is None:
            return None, err
        MISSING_KERNELS.setdefault(m.group(1), set()).add(where)
        pytest.xfail(f"no CUDA kernel for {m.group(1)}")
    except Exception as err:  # noqa: BLE001 - compared with the CPU's exception type
        return None, err


def _has_tensor(obj):
    if isinstance(obj, torch.Tensor):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_tensor(o) for o in obj)
    if isinstance(obj, dict):
        return any(_has_tensor(o) for o in obj.values())
    return False


def _torch_cuda_error(fn_t, s, placed):
    """What torch's CUDA build raises for the sample (None when it computes a result)."""
    try:
        fn_t(*to_torch_cuda(s.args), **to_torch_cuda(s.kwargs), **placed)
    except Exception as err:  # noqa: BLE001 - compared with Ember's exception
        return err
    return None


def _check_sample(row, dtype, s):
    where = f"{row.id}[{dtype},{s.name}]"
    fn_e, fn_t = row.resolve(ember), row.resolve(torch)
    # A factory (no tensor argument) is asked for its result on the device.
    placed = {} if _has_tensor([s.args, s.kwargs]) else {"device": "cuda"}
    on_cpu, cpu_err = _call(fn_e, to_ember(s.args, "cpu"), to_ember(s.kwargs, "cpu"), where)
    got, cuda_err = _call(fn_e, to_ember(s.args, "cuda"), {**to_ember(s.kwargs, "cuda"), **placed}, where)
    if cpu_err is not None and cuda_err is None and torch_has_cuda() and _torch_cuda_error(fn_t, s, placed) is None:
        # A dtype only PyTorch's CUDA kernel takes (16-bit antialiased interpolation):
        # compared with torch's CUDA result.
        expected = fn_t(*to_torch_cuda(s.args), **to_torch_cuda(s.kwargs), **placed)
        assert_close(got, expected, row.tol.get(dtype), f"{where} ember cuda vs torch cuda", row.check_strides)
        return
    if cpu_err is not None:
        # Bad input: CUDA raises what the CPU raises (index checks may be device-side asserts in
        # PyTorch; Ember checks on the host, so the type is the CPU's).
        assert cuda_err is not None, f"{where}: cpu raised {cpu_err!r}, cuda did not"
        if type(cuda_err) is not type(cpu_err) and torch_has_cuda():
            # PyTorch's CUDA build may refuse otherwise (cuDNN's errors for integer convolutions).
            torch_err = _torch_cuda_error(fn_t, s, placed)
            message = f"{where}: ember cuda raised {cuda_err!r}, torch cuda {torch_err!r}"
            assert same_exception(cuda_err, torch_err), message
            return
        assert type(cuda_err) is type(cpu_err), f"{where}: cuda raised {cuda_err!r}, cpu {cpu_err!r}"
        return
    if cuda_err is not None:
        # Right only where torch's CUDA build refuses the same way (no integer products
        # in cuBLAS; tensor_split's indices on the CPU): the same type and message.
        if not torch_has_cuda():
            raise cuda_err
        torch_err = _torch_cuda_error(fn_t, s, placed)
        if not same_exception(cuda_err, torch_err):
            raise AssertionError(f"{where}: ember cuda raised {cuda_err!r}, torch cuda {torch_err!r}") from cuda_err
        return
    tol = row.tol.get(dtype)
    strides = row.check_strides
    if row.compare_values and compares_with_cpu(row.id):
        # Strides follow torch's CUDA kernels where they differ from the CPU's (nonzero):
        # compared with torch's CUDA result when there is one, else with Ember's CPU result.
        assert_close(got, on_cpu, tol, f"{where} ember cuda vs ember cpu", strides and not torch_has_cuda())
    if "polynomial" in row.id and s.name == "edge":
        # Degrees inf and NaN: PyTorch's CUDA kernels convert them as the GPU
        # does (inf to 2**63 - 1, NaN to 0) and some then loop 2**63 times;
        # Ember's give the CPU's answers (the Ember CPU comparison above).
        return
    if torch_has_cuda() and row.compare_values:
        try:
            expected = fn_t(*to_torch_cuda(s.args), **to_torch_cuda(s.kwargs), **placed)
        except Exception:  # noqa: BLE001 - torch's CUDA build may refuse what its CPU build takes
            return
        assert_close(got, expected, tol, f"{where} ember cuda vs torch cuda", strides)


@pytest.mark.parametrize("row,dtype", _params())
def test_values(row, dtype):
    """Values, dtypes, shapes (and strides where the row checks them) on CUDA."""
    for s in row.samples(torch_dtype(dtype)):
        _check_sample(row, dtype, s)


def _leaves(obj, found):
    if isinstance(obj, ember.Tensor) and obj.dtype.is_floating_point:
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, found)
    elif isinstance(obj, dict):
        for o in obj.values():
            _leaves(o, found)
    return found


def _grads(row, s, device, where):
    """Gradients of sum(out * weight) for every float input of the sample, on `device`."""
    args = to_ember(s.args, device)
    kwargs = to_ember(s.kwargs, device)
    inputs = [t for i, t in enumerate(_leaves([args, kwargs], [])) if i not in row.no_grad_args]
    for t in inputs:
        t.requires_grad_(True)
    out, err = _call(row.grad_callable(ember), args, kwargs, where)
    if err is not None:
        return None
    outs = [
        o
        for o in (out if isinstance(out, (tuple, list)) else [out])
        if getattr(o, "requires_grad", False) and o.dtype.is_floating_point
    ]
    if not outs:
        return None
    total = None
    for k, o in enumerate(outs):
        if o.numel() > 1:
            w = ember.linspace(0.5, 1.5, o.numel(), dtype=o.dtype).reshape(tuple(o.shape)).to(device)
        else:
            w = ember.ones(tuple(o.shape), dtype=o.dtype).to(device)
        term = (o * w).sum()
        total = term if total is None else total + term
    grads = ember.autograd.grad(total, [t for t in inputs if t.requires_grad], allow_unused=True)
    return [g.to("cpu") if g is not None else None for g in grads]


@pytest.mark.parametrize("row", _grad_params())
def test_gradients(row):
    """float32 gradients on CUDA equal the CPU's within CUDA's tolerance."""
    if "float32" not in row.dtypes_on("cuda"):
        pytest.skip(f"{row.id} has no float32 on cuda")
    checked = 0
    for s in row.samples(torch.float32):
        if not s.grad:
            continue
        where = f"{row.id}[grad,{s.name}]"
        on_cpu = _grads(row, s, "cpu", where)
        if on_cpu is None:
            continue
        got = _grads(row, s, "cuda", where)
        assert got is not None, f"{where}: no gradient on cuda"
        assert len(got) == len(on_cpu), f"{where}: {len(got)} gradients != {len(on_cpu)}"
        for i, (g, c) in enumerate(zip(got, on_cpu)):
            assert (g is None) == (c is None), f"{where}[{i}]: gradient defined on one device only"
            if g is not None:
                torch.testing.assert_close(
                    torch.tensor(g.tolist()), torch.tensor(c.tolist()), rtol=1e-4, atol=1e-5, equal_nan=True
                )
        checked += 1
        if checked == 2:
            break

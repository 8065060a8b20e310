"""Every row of the operator database (tests/python/opdb) against PyTorch, on
every device present: values, dtypes, shapes, strides, exception types, the
method / out= / in-place forms, gradients and second gradients, and the meta
device (shapes, dtypes and strides without data).

`python tests/python/test_opdb.py --table` prints the case counts."""

from __future__ import annotations

import contextlib
import math
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

torch = pytest.importorskip(
    "torch", reason="the oracle (torch==2.13.0) is installed by the test set-up"
)
from opdb import OP_DB, devices, meta_available  # noqa: E402
from opdb.core import ALL_DTYPES, dtype_name, leaf, to_ember, to_torch, torch_dtype  # noqa: E402
from opdb.forward_ad_gaps import FORWARD_AD_GAPS  # noqa: E402
from opdb.gradgrad_gaps import GRADGRAD_GAPS, TORCH_HAS_NO_GRADGRAD  # noqa: E402
from opdb.meta_gaps import META_GAPS  # noqa: E402

import ember  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DEVICES = devices()
# A backward formula composes several roundings, which the two libraries may
# associate differently: gradients are compared to a few ulp, not bit for bit.
GRAD_TOL = (1e-12, 1e-13)
# A tangent formula may differ from PyTorch's in form (derived from the
# backward formula, or a composite's own parts): compared to a few more ulp.
FORWARD_TOL = (1e-10, 1e-12)
FLAGS = (
    "supports_grad",
    "supports_gradgrad",
    "supports_out",
    "supports_inplace",
    "supports_meta",
    "method",
    "check_strides",
)


# ---- comparing -----------------------------------------------------------------------


def assert_same(got, expected, tol=None, where=""):
    """Ember's result equals torch's: structure, dtypes, shapes, values
    (exact, NaN equal to NaN, unless the row gives a tolerance)."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, ember.Tensor), (
            f"{where}: expected a tensor, got {type(got).__name__}"
        )
        assert dtype_name(got.dtype) == dtype_name(expected.dtype), (
            f"{where}: dtype {got.dtype} != {expected.dtype}"
        )
        assert tuple(got.shape) == tuple(expected.shape), (
            f"{where}: shape {tuple(got.shape)} != {tuple(expected.shape)}"
        )
        if got.device.type == "meta" or expected.device.type == "meta" or tol == "shape":
            return
        mine = to_torch(got)
        if expected.dtype.is_floating_point or expected.dtype.is_complex:
            rtol, atol = tol or (0.0, 0.0)
            torch.testing.assert_close(
                mine,
                expected.detach(),
                rtol=rtol,
                atol=atol,
                equal_nan=True,
                msg=lambda m: f"{where}: {m}",
            )
        else:
            assert torch.equal(mine, expected), f"{where}: {mine} != {expected}"
    elif isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)), (
            f"{where}: expected a sequence, got {type(got).__name__}"
        )
        assert len(got) == len(expected), f"{where}: {len(got)} results != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, tol, f"{where}[{i}]")
    elif isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(got), f"{where}: {got} != nan"
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def assert_same_strides(got, expected, where=""):
    if isinstance(expected, torch.Tensor):
        if expected.numel() > 1:
            assert got.stride() == expected.stride(), (
                f"{where}: strides {got.stride()} != {expected.stride()}"
            )
    elif isinstance(expected, (tuple, list)):
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same_strides(g, e, f"{where}[{i}]")


def run_pair(fn_e, fn_t, sample, device="cpu", tol=None, where="", strides=False):
    """Runs a sample through both libraries; when torch raises, Ember must
    raise the same exception type. Returns (ember result, torch result) or None."""
    e_args, e_kwargs = to_ember(sample.args, device), to_ember(sample.kwargs, device)
    t_args, t_kwargs = sample.args, sample.kwargs
    if device == "meta":
        t_args, t_kwargs = to_meta(t_args), to_meta(t_kwargs)
    try:
        expected = fn_t(*t_args, **t_kwargs)
    except Exception as err:  # noqa: BLE001 - compared by type
        try:
            fn_e(*e_args, **e_kwargs)
        except Exception as mine:  # noqa: BLE001
            assert isinstance(mine, type(err)), f"{where}: ember raised {mine!r}, torch {err!r}"
            return None
        pytest.fail(f"{where}: torch raised {err!r}, ember did not")
    got = fn_e(*e_args, **e_kwargs)
    assert_same(got, expected, tol, where)
    if strides:
        assert_same_strides(got, expected, where)
    return got, expected


def to_meta(obj):
    if isinstance(obj, torch.Tensor):
        return obj.to("meta")
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_meta(o) for o in obj)
    if isinstance(obj, dict):
        return {k: to_meta(v) for k, v in obj.items()}
    return obj


# ---- parameters ----------------------------------------------------------------------


def cases(test, per_dtype=False, device_list=None, flag=None):
    """pytest params of (row[, dtype][, device]) with the row's strict xfails."""
    out = []
    for row in OP_DB:
        if flag and not getattr(row, flag):
            continue
        for device in device_list or [None]:
            dts = row.dtypes_on(device or "cpu") if per_dtype else [None]
            for dt in dts:
                key = f"{test}/{dt}" if dt and f"{test}/{dt}" in row.xfail else test
                if key not in row.xfail and device and f"{test}@{device}" in row.xfail:
                    key = f"{test}@{device}"
                marks = (
                    [pytest.mark.xfail(strict=True, reason=row.xfail[key])]
                    if key in row.xfail
                    else []
                )
                values = [row] + ([dt] if per_dtype else []) + ([device] if device_list else [])
                ident = "-".join(
                    [row.id] + ([dt] if per_dtype else []) + ([device] if device_list else [])
                )
                out.append(pytest.param(*values, id=ident, marks=marks))
    return out


@contextlib.contextmanager
def known_difference(row, test, sample):
    """A difference listed in the row as "test:sample name" must still happen
    (strict, like xfail); the other samples of the test run as usual."""
    reason = row.xfail.get(f"{test}:{sample.name}")
    if reason is None:
        yield
        return
    try:
        yield
    except (Exception, pytest.fail.Exception):  # noqa: BLE001 - the listed difference
        return
    pytest.fail(
        f"{row.id}[{sample.name}] now matches PyTorch; remove the known difference: {reason}"
    )


def first_dtype(row, device="cpu"):
    dts = row.dtypes_on(device)
    for preferred in ("float32", "float64", "int64"):
        if preferred in dts:
            return preferred
    return dts[0]


# ---- values, dtypes, shapes ------------------------------------------------------------------


@pytest.mark.parametrize("row,dtype,device", cases("values", per_dtype=True, device_list=DEVICES))
def test_values(row, dtype, device):
    fn_e, fn_t = row.resolve(ember), row.resolve(torch)
    tol = row.tol.get(dtype)
    tol = tol if row.compare_values else "shape"
    for s in row.samples(torch_dtype(dtype)):
        with known_difference(row, f"values/{dtype}", s):
            run_pair(fn_e, fn_t, s, device, tol, where=f"{row.id}[{s.name}]")


@pytest.mark.parametrize("row", cases("strides", flag="check_strides"))
def test_strides(row):
    """Output strides as PyTorch's, where it promises them (pointwise, views)."""
    fn_e, fn_t = row.resolve(ember), row.resolve(torch)
    dt = first_dtype(row)
    # Values are the values test's business; a known value difference there only skips them here.
    compare = row.compare_values and f"values/{dt}" not in row.xfail and "values" not in row.xfail
    tol = row.tol.get(dt) if compare else "shape"
    for s in row.samples(torch_dtype(dt)):
        run_pair(fn_e, fn_t, s, "cpu", tol, where=f"{row.id}[{s.name}]", strides=True)


@pytest.mark.parametrize("row,device", cases("dtypes", device_list=DEVICES))
def test_unsupported_dtypes(row, device):
    """Dtypes outside the row: torch raises, and Ember raises the same type."""
    fn_e, fn_t = row.resolve(ember), row.resolve(torch)
    for dt in ALL_DTYPES:
        if dt in row.dtypes_on(device):
            continue
        s = row.samples(torch_dtype(dt))[0]
        try:
            fn_t(*s.args, **s.kwargs)
        except Exception as err:  # noqa: BLE001
            with pytest.raises(type(err)):
                fn_e(*to_ember(s.args, device), **to_ember(s.kwargs, device))
            continue
        pytest.fail(f"torch accepts {dt} for {row.id}[{s.name}]: add it to the row's dtypes")


@pytest.mark.parametrize("row,device", cases("errors", device_list=DEVICES, flag="error_inputs"))
def test_error_inputs(row, device):
    """Inputs PyTorch rejects: the same exception type and message."""
    fn_e, fn_t = row.resolve(ember), row.resolve(torch)
    for s in row.error_inputs():
        with pytest.raises(Exception) as err:
            fn_t(*s.args, **s.kwargs)
        with pytest.raises(err.type) as mine:
            fn_e(*to_ember(s.args, device), **to_ember(s.kwargs, device))
        assert str(mine.value) == str(err.value), f"{row.id}[{s.name}]: message differs"


# ---- method, out=, in-place ---------------------------------------------------------------


@pytest.mark.parametrize("row,device", cases("method", device_list=DEVICES, flag="method"))
def test_method(row, device):
    fn_e, fn_t = row.method_callable(), row.method_callable()
    dt = first_dtype(row, device)  # the values test covers the other dtypes
    for s in row.samples(torch_dtype(dt)):
        if isinstance(s.args[0], torch.Tensor):
            run_pair(fn_e, fn_t, s, device, row.tol.get(dt), where=f"{row.id}[{dt},{s.name}]")


def empty_like_result(lib, expected, device):
    if isinstance(expected, (tuple, list)):
        return tuple(empty_like_result(lib, e, device) for e in expected)
    dt = getattr(lib, dtype_name(expected.dtype))
    return lib.empty(0, dtype=dt, device=device if lib is ember else "cpu")


@pytest.mark.parametrize("row,device", cases("out", device_list=DEVICES, flag="supports_out"))
def test_out(row, device):
    """out= gets the result (resized from empty) and is what the call returns."""
    fn_e, fn_t = row.resolve(ember), row.resolve(torch)
    for dt in row.dtypes_on(device):
        for s in row.samples(torch_dtype(dt)):
            with known_difference(row, "out", s):
                check_out(row, fn_e, fn_t, s, dt, device)


def check_out(row, fn_e, fn_t, s, dt, device):
    try:
        expected = fn_t(*s.args, **s.kwargs)
    except Exception:  # noqa: BLE001 - the values test covers errors
        return
    t_out, e_out = (
        empty_like_result(torch, expected, device),
        empty_like_result(ember, expected, device),
    )
    e_args, e_kwargs = to_ember(s.args, device), to_ember(s.kwargs, device)
    where = f"{row.id}[{dt},{s.name}] out="
    try:
        t_ret = fn_t(*s.args, **s.kwargs, out=t_out)
    except Exception as err:  # noqa: BLE001 - e.g. no out= form for a Python-scalar first argument
        with pytest.raises(type(err)):
            fn_e(*e_args, **e_kwargs, out=e_out)
        return
    e_ret = fn_e(*e_args, **e_kwargs, out=e_out)
    assert_same(e_out, t_out, row.tol.get(dt), where)
    assert_same(e_ret, t_ret, row.tol.get(dt), where)
    if not isinstance(e_out, tuple):
        assert e_ret is e_out, f"{where}: the call does not return out"


@pytest.mark.parametrize(
    "row,device", cases("inplace", device_list=DEVICES, flag="supports_inplace")
)
def test_inplace(row, device):
    """x.name_(...) writes into x and returns x; where torch refuses (a result
    dtype or shape that x cannot hold), Ember raises the same type."""
    for dt in row.dtypes_on(device):
        for s in row.samples(torch_dtype(dt)):
            if isinstance(s.args[0], torch.Tensor):
                with known_difference(row, "inplace", s):
                    check_inplace(row, s, dt, device)


def check_inplace(row, s, dt, device):
    fn = row.method_callable(inplace=True)
    s.args = (s.args[0].clone(), *s.args[1:])
    e_self = to_ember(s.args[0], device)
    e_args = (e_self, *to_ember(tuple(s.args[1:]), device))
    where = f"{row.id}_[{dt},{s.name}]"
    try:
        expected = fn(*s.args, **s.kwargs)
    except Exception as err:  # noqa: BLE001
        with pytest.raises(type(err)):
            fn(*e_args, **to_ember(s.kwargs, device))
        return
    got = fn(*e_args, **to_ember(s.kwargs, device))
    assert got is e_self, f"{where}: does not return self"
    assert_same(e_self, expected, row.tol.get(dt), where)


# ---- gradients ---------------------------------------------------------------------------


def float_leaves(obj, found):
    if isinstance(obj, torch.Tensor) and obj.dtype.is_floating_point:
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            float_leaves(o, found)
    elif isinstance(obj, dict):
        for o in obj.values():
            float_leaves(o, found)
    return found


def as_leaves(obj):
    if isinstance(obj, torch.Tensor):
        return leaf(obj, True)
    if isinstance(obj, (list, tuple)):
        return type(obj)(as_leaves(o) for o in obj)
    if isinstance(obj, dict):
        return {k: as_leaves(v) for k, v in obj.items()}
    return obj


def substitute(obj, inputs):
    """obj with its tensors that require grad replaced, in order, by `inputs`."""
    if isinstance(obj, ember.Tensor) and obj.requires_grad:
        return inputs.pop(0)
    if isinstance(obj, (list, tuple)):
        return type(obj)(substitute(o, inputs) for o in obj)
    if isinstance(obj, dict):
        return {k: substitute(v, inputs) for k, v in obj.items()}
    return obj


def differentiable_outputs(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in differentiable_outputs(x)]
    return [out] if getattr(out, "requires_grad", False) else []


def grad_samples(row, limit=2):
    if row.grad_inputs is not None:
        return row.grad_inputs()[:limit]
    found = []
    fn_t = row.grad_callable(torch)
    for s in row.samples(torch.float64):
        if len(found) == limit:
            break
        if not s.grad or not any(t.numel() for t in float_leaves(s.args, [])):
            continue
        try:  # error samples belong to the values test
            fn_t(*s.args, **s.kwargs)
        except Exception:  # noqa: BLE001, S112
            continue
        found.append(s)
    return found


def prepared(row, s):
    """(torch args, kwargs, inputs), (ember args, kwargs, inputs) with every float
    tensor a leaf that requires grad (same strides in both)."""
    t_args = tuple(a if i in row.no_grad_args else as_leaves(a) for i, a in enumerate(s.args))
    t_kwargs = as_leaves(s.kwargs)
    e_args = tuple(
        to_ember(a, requires_grad=i not in row.no_grad_args) for i, a in enumerate(t_args)
    )
    e_kwargs = to_ember(t_kwargs, requires_grad=True)
    t_in = [t for t in float_leaves([t_args, t_kwargs], []) if t.requires_grad]
    e_in = [e for e in _ember_floats([e_args, e_kwargs], []) if e.requires_grad]
    return (t_args, t_kwargs, t_in), (e_args, e_kwargs, e_in)


def _ember_floats(obj, found):
    if isinstance(obj, ember.Tensor) and obj.dtype.is_floating_point:
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _ember_floats(o, found)
    elif isinstance(obj, dict):
        for o in obj.values():
            _ember_floats(o, found)
    return found


def weighted_sum(lib, outs, weights):
    total = None
    for o, w in zip(outs, weights):
        term = (o * w).sum()
        total = term if total is None else total + term
    return total


def first_and_second(lib, fn, args, kwargs, inputs, weights, weights2, second):
    outs = differentiable_outputs(fn(*args, **kwargs))
    if not outs:
        return None, None
    ws = [w if lib is torch else to_ember(w) for w in weights[: len(outs)]]
    loss = weighted_sum(lib, outs, ws)
    grads = lib.autograd.grad(loss, inputs, allow_unused=True, create_graph=second)
    if not second:
        return grads, None
    used = [(g, w) for g, w in zip(grads, weights2) if g is not None and g.requires_grad]
    if not used:  # the gradient does not depend on the inputs: a zero second derivative
        return grads, [None] * len(inputs)
    loss2 = weighted_sum(
        lib, [g for g, _ in used], [w if lib is torch else to_ember(w) for _, w in used]
    )
    return grads, lib.autograd.grad(loss2, inputs, allow_unused=True)


def _weights(shapes, seed):
    gen = torch.Generator().manual_seed(seed)
    return [torch.rand(s, generator=gen, dtype=torch.float64) + 0.5 for s in shapes]


def check_gradients(row, second):
    fn_e, fn_t = row.grad_callable(ember), row.grad_callable(torch)
    samples = grad_samples(row)
    assert samples, f"{row.id}: no float64 sample for the gradient tests"
    for s in samples:
        with known_difference(row, "gradgrad" if second else "grad", s):
            check_gradient_sample(row, fn_e, fn_t, s, second)


def check_gradient_sample(row, fn_e, fn_t, s, second):
    (ta, tk, ti), (ea, ek, ei) = prepared(row, s)
    t_outs = differentiable_outputs(fn_t(*ta, **tk))
    weights = _weights([tuple(o.shape) for o in t_outs], 1)
    weights2 = _weights([tuple(x.shape) for x in ti], 2)
    tg, tg2 = first_and_second(torch, fn_t, ta, tk, ti, weights, weights2, second)
    eg, eg2 = first_and_second(ember, fn_e, ea, ek, ei, weights, weights2, second)
    where = f"{row.id}[{s.name}]"
    if tg is None:  # e.g. a conversion to an integer dtype
        assert eg is None, f"{where}: torch's result does not require grad, ember's does"
        return
    assert_grads(eg, tg, GRAD_TOL, where + " grad")
    if second:
        assert_grads(eg2, tg2, row.gradgrad_tol or GRAD_TOL, where + " grad of grad", none_is_zero=True)


def assert_grads(got, expected, tol, where, none_is_zero=False):
    """With none_is_zero a missing second derivative (a gradient that does not
    depend on the input, so it has no graph) equals PyTorch's zeros."""
    assert got is not None, f"{where}: ember output does not require grad"
    for i, (g, e) in enumerate(zip(got, expected)):
        if e is None:
            assert g is None or not bool((g != 0).any()), f"{where}[{i}]: torch None, ember {g}"
        elif g is None and none_is_zero:
            assert not bool((e != 0).any()), f"{where}[{i}]: ember None, torch {e}"
        else:
            assert g is not None, f"{where}[{i}]: ember None"
            assert_same(g, e, tol, f"{where}[{i}]")


@pytest.mark.parametrize("row", cases("grad", flag="supports_grad"))
def test_grad(row):
    """Ember's gradients equal PyTorch's on the same float64 inputs."""
    check_gradients(row, second=False)


@pytest.mark.parametrize("row", cases("gradgrad", flag="supports_gradgrad"))
def test_gradgrad(row):
    """Second derivatives (create_graph=True) equal PyTorch's."""
    check_gradients(row, second=True)


def ember_function(fn, args, kwargs):
    def call(*inputs):
        pool = list(inputs)
        new_args = substitute(args, pool)
        return fn(*new_args, **substitute(kwargs, pool))

    return call


@pytest.mark.parametrize("row", cases("gradcheck", flag="supports_grad"))
def test_gradcheck(row):
    """ember.autograd.gradcheck: analytical against numerical derivatives."""
    fn_e = row.grad_callable(ember)
    s = grad_samples(row, limit=1)[0]
    _, (ea, ek, ei) = prepared(row, s)
    assert ember.autograd.gradcheck(
        ember_function(fn_e, ea, ek), tuple(ei), eps=1e-6, atol=1e-5, rtol=1e-3
    )


def _complex_leaves(obj, found):
    if isinstance(obj, ember.Tensor) and obj.dtype.is_complex:
        found.append(obj.detach().requires_grad_(True))
        return found[-1]
    if isinstance(obj, (list, tuple)):
        return type(obj)(_complex_leaves(o, found) for o in obj)
    if isinstance(obj, dict):
        return {k: _complex_leaves(v, found) for k, v in obj.items()}
    return obj


# linalg rows whose complex gradient is not there yet, with the reason.
COMPLEX_GRAD_GAPS: dict[str, str] = {}


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            r,
            id=r.id,
            marks=[pytest.mark.xfail(strict=True, reason=COMPLEX_GRAD_GAPS[r.id])] if r.id in COMPLEX_GRAD_GAPS else [],
        )
        for r in OP_DB
        if r.family == "linalg" and r.supports_grad and "complex128" in r.dtypes_on("cpu")
    ],
)
def test_gradcheck_complex(row):
    """gradcheck of the complex128 samples of linalg rows: PyTorch's complex
    gradients (conjugate Wirtinger), checked part by part against numerical ones."""
    fn_e = row.grad_callable(ember)
    samples = [s for s in row.samples(torch.complex128) if s.grad][:1]
    assert samples, f"{row.id}: no complex128 sample"
    s = samples[0]
    inputs = []
    ea = _complex_leaves(to_ember(s.args), inputs)
    ek = _complex_leaves(to_ember(s.kwargs), inputs)
    assert ember.autograd.gradcheck(ember_function(fn_e, ea, ek), tuple(inputs), eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("row", cases("gradgradcheck", flag="supports_gradgrad"))
def test_gradgradcheck(row):
    fn_e = row.grad_callable(ember)
    s = grad_samples(row, limit=1)[0]
    _, (ea, ek, ei) = prepared(row, s)
    known_gap = row.id in GRADGRAD_GAPS
    passed = ember.autograd.gradgradcheck(
        ember_function(fn_e, ea, ek), tuple(ei), eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=not known_gap
    )
    if known_gap:
        assert not passed, f"{row.id} now passes gradgradcheck; drop it from GRADGRAD_GAPS"


@pytest.mark.parametrize("row_id", sorted(TORCH_HAS_NO_GRADGRAD))
def test_gradgrad_torch_has_none(row_id):
    """Rows whose double backward PyTorch refuses: Ember raises the same
    exception type, or (where listed) computes one that gradgradcheck accepts."""
    row = next(r for r in OP_DB if r.id == row_id)
    assert row.supports_grad and not row.supports_gradgrad, row_id
    fn_e, fn_t = row.grad_callable(ember), row.grad_callable(torch)
    s = grad_samples(row, limit=1)[0]
    (ta, tk, ti), (ea, ek, ei) = prepared(row, s)
    weights = _weights([tuple(o.shape) for o in differentiable_outputs(fn_t(*ta, **tk))], 1)
    weights2 = _weights([tuple(x.shape) for x in ti], 2)
    with pytest.raises(Exception) as torch_err:  # noqa: PT011 - the type is compared below
        first_and_second(torch, fn_t, ta, tk, ti, weights, weights2, True)
    if TORCH_HAS_NO_GRADGRAD[row_id] == "raises":
        with pytest.raises(torch_err.type):
            first_and_second(ember, fn_e, ea, ek, ei, weights, weights2, True)
    else:
        assert ember.autograd.gradgradcheck(
            ember_function(fn_e, ea, ek), tuple(ei), eps=1e-6, atol=1e-5, rtol=1e-3
        )


# ---- forward-mode AD -------------------------------------------------------------------------


def _duals(lib, obj, pool):
    """obj with its tensors that require grad replaced by dual tensors whose
    tangents come, in order, from `pool`."""
    if isinstance(obj, (ember.Tensor, torch.Tensor)) and obj.requires_grad:
        tangent = pool.pop(0)
        return lib.autograd.forward_ad.make_dual(obj.detach(), tangent if lib is torch else to_ember(tangent))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_duals(lib, o, pool) for o in obj)
    if isinstance(obj, dict):
        return {k: _duals(lib, v, pool) for k, v in obj.items()}
    return obj


def _output_tangents(lib, out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _output_tangents(lib, o)]
    if isinstance(out, (ember.Tensor, torch.Tensor)) and (out.is_floating_point() or out.is_complex()):
        return [lib.autograd.forward_ad.unpack_dual(out).tangent]
    return []


def forward_tangents(lib, fn, args, kwargs, tangents):
    """The outputs' tangents of fn at args with the given input tangents;
    raises what the library raises."""
    fwad = lib.autograd.forward_ad
    with fwad.dual_level():
        pool = list(tangents)
        out = fn(*_duals(lib, args, pool), **_duals(lib, kwargs, pool))
        return [None if t is None else t.clone() for t in _output_tangents(lib, out)]


@pytest.mark.parametrize("row", cases("forward_ad", flag="supports_grad"))
def test_forward_ad(row):
    """Forward-mode AD: the outputs' tangents equal PyTorch's for random input
    tangents. Rows PyTorch has no forward formula for are skipped; rows Ember
    has none for are listed in opdb/forward_ad_gaps.py."""
    fn_e, fn_t = row.grad_callable(ember), row.grad_callable(torch)
    samples = grad_samples(row)
    assert samples, f"{row.id}: no float64 sample for the forward-AD test"
    for s in samples:
        with known_difference(row, "forward_ad", s):
            check_forward_sample(row, fn_e, fn_t, s)


def check_forward_sample(row, fn_e, fn_t, s):
    """One sample's output tangents against PyTorch's."""
    (ta, tk, ti), (ea, ek, ei) = prepared(row, s)
    tangents = _weights([tuple(x.shape) for x in ti], 3)
    where = f"{row.id}[{s.name}] tangent"
    try:
        expected = forward_tangents(torch, fn_t, ta, tk, tangents)
    except NotImplementedError:
        pytest.skip("PyTorch has no forward-mode formula for this operator either")
    try:
        got = forward_tangents(ember, fn_e, ea, ek, tangents)
    except NotImplementedError as err:
        if row.id in FORWARD_AD_GAPS:
            pytest.xfail(f"no forward-mode formula yet: {err}")
        raise
    assert row.id not in FORWARD_AD_GAPS, f"{row.id} now has a forward formula; drop it from FORWARD_AD_GAPS"
    assert len(got) == len(expected), f"{where}: {len(got)} outputs, torch {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        if e is None:
            assert g is None or not bool((g != 0).any()), f"{where}[{i}]: torch None, ember {g}"
            continue
        assert g is not None, f"{where}[{i}]: ember has no tangent"
        assert_same(g, e, FORWARD_TOL, f"{where}[{i}]")


# ---- meta ------------------------------------------------------------------------------------


def meta_difference_kind(err):
    """The META_REASONS key of a meta case's failure."""
    msg = str(err)
    if "strides" in msg and "!=" in msg:
        return "strides"
    if "with Meta tensors" in msg:
        return "nokernel"
    if "not implemented for" in msg:
        return "dtype"
    if "item() cannot be called on meta tensors" in msg:
        return "item"
    if "ember did not" in msg:
        return "accepts"
    return "error_text"


@pytest.mark.parametrize("row", cases("meta", flag="supports_meta"))
def test_meta(row):
    """On the meta device: PyTorch's shapes, dtypes and strides, or its exception type.
    The kinds of difference a row still shows are listed in opdb/meta_gaps.py."""
    if not meta_available():
        pytest.skip("ember has no meta device yet")
    fn_e, fn_t = row.resolve(ember), row.resolve(torch)
    known = set(META_GAPS.get(row.id, ()))
    seen = set()
    for dt in row.dtypes_on("meta"):
        for s in row.samples(torch_dtype(dt)):
            where = f"{row.id}[{dt},{s.name}] meta"
            try:
                run_pair(fn_e, fn_t, s, "meta", where=where, strides=True)
            except (Exception, pytest.fail.Exception) as err:  # noqa: BLE001 - classified below
                kind = meta_difference_kind(err)
                if kind not in known:
                    raise
                seen.add(kind)
    gone = known - seen
    assert not gone, f"{row.id}: meta now matches PyTorch for {sorted(gone)}; remove them from opdb/meta_gaps.py"


# ---- the table ---------------------------------------------------------------------------------


def table():
    ops = sorted({row.name for row in OP_DB})
    present = DEVICES + (["meta"] if meta_available() else [])
    print(f"rows: {len(OP_DB)}   operators: {len(ops)}   devices present: {', '.join(present)}")
    for device in ("cpu", "meta", "cuda"):
        n = sum(
            len(row.dtypes_on(device)) for row in OP_DB if device != "meta" or row.supports_meta
        )
        note = "" if device in present else "  (device not present: declared only)"
        print(f"operator x dtype cases on {device}: {n}{note}")
    families = {}
    for row in OP_DB:
        families[row.family] = families.get(row.family, 0) + 1
    print("rows per family: " + ", ".join(f"{k} {v}" for k, v in sorted(families.items())))
    for flag in FLAGS:
        print(f"rows with {flag}: {sum(bool(getattr(row, flag)) for row in OP_DB)}")
    by_reason = {}
    for row in OP_DB:
        for key, reason in row.xfail.items():
            by_reason.setdefault(reason, []).append(f"{row.id}[{key}]")
    total = sum(len(v) for v in by_reason.values())
    print(f"known differences (strict xfails): {total} cases, {len(by_reason)} distinct")
    for reason, where in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(where[:4]) + (f", ... ({len(where)} cases)" if len(where) > 4 else "")
        print(f"  - {reason}\n      {shown}")


if __name__ == "__main__":
    if "--table" in sys.argv:
        warnings.simplefilter("ignore")
        table()
    else:
        sys.exit(pytest.main([__file__, "-q"]))

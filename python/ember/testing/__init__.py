"""ember.testing: assert_close and make_tensor, as torch.testing, with
PyTorch's default tolerances and failure messages."""

from __future__ import annotations

import collections.abc
import math

import ember

__all__ = ["assert_close", "make_tensor", "assert_allclose"]

# (rtol, atol) by dtype: the defaults of torch.testing.assert_close.
_TOLERANCES = {
    ember.float16: (1e-3, 1e-5),
    ember.bfloat16: (1.6e-2, 1e-5),
    ember.float32: (1.3e-6, 1e-5),
    ember.float64: (1e-7, 1e-7),
}


class _Failure(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


def _tolerances(*dtypes, rtol, atol):
    if (rtol is None) ^ (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}."
        )
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _attribute_mismatch(name, actual, expected):
    raise _Failure(AssertionError, f"The values for attribute '{name}' do not match: {actual} != {expected}.")


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    if actual.shape != expected.shape:
        _attribute_mismatch("shape", actual.shape, expected.shape)
    if check_device and actual.device != expected.device:
        _attribute_mismatch("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        _attribute_mismatch("dtype", actual.dtype, expected.dtype)
    if check_stride and actual.stride() != expected.stride():
        _attribute_mismatch("stride()", actual.stride(), expected.stride())
    rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=rtol, atol=atol)
    a, e = actual.detach(), expected.detach()
    if a.dtype != e.dtype:
        common = ember.promote_types(a.dtype, e.dtype)
        a, e = a.to(common), e.to(common)
    if not a.is_floating_point():  # differences of integers in int64 (no uint8 wrap-around)
        a, e = a.to(ember.int64), e.to(ember.int64)
    if a.numel() == 0:
        return
    if a.is_floating_point():
        close = ember.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        close = a == e
    if bool(close.all()):
        return
    mismatches = int((~close).sum())
    total = a.numel()
    abs_diff = (a - e).abs()
    rel_diff = abs_diff / e.abs()
    equal = rtol == 0 and atol == 0
    if a.dim() == 0:
        lines = [
            f"Scalars are not {'equal' if equal else 'close'}!",
            "",
            f"Expected {e.item()} but got {a.item()}.",
            f"Absolute difference: {abs_diff.item()}" + ("" if equal else f" (up to {atol} allowed)"),
            f"Relative difference: {rel_diff.item()}" + ("" if equal else f" (up to {rtol} allowed)"),
        ]
        raise _Failure(AssertionError, "\n".join(lines))
    lines = [
        f"Tensor-likes are not {'equal' if equal else 'close'}!",
        "",
        f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})",
    ]
    for name, diff, tol in (("absolute", abs_diff, atol), ("relative", rel_diff, rtol)):
        flat = diff.flatten()
        idx = int(flat.argmax())
        value = flat[idx].item()
        where = _unravel(idx, tuple(a.shape))
        line = f"Greatest {name} difference: {value} at index {where}"
        if not equal:
            line += f" (up to {tol} allowed)"
        lines.append(line)
    raise _Failure(AssertionError, "\n".join(lines))


def _unravel(flat_index, shape):
    out = []
    for size in reversed(shape):
        out.append(flat_index % size)
        flat_index //= size
    return tuple(reversed(out))


def _compare_numbers(actual, expected, rtol, atol, equal_nan):
    floating = isinstance(actual, float) or isinstance(expected, float)
    if rtol is None and atol is None:
        rtol, atol = (1e-7, 1e-7) if floating else (0.0, 0.0)
    else:
        rtol, atol = _tolerances(rtol=rtol, atol=atol)
    if math.isnan(actual) and math.isnan(expected) and equal_nan:
        return
    abs_diff = abs(actual - expected)
    if abs_diff <= atol + rtol * abs(expected) and not (math.isnan(actual) or math.isnan(expected)):
        return
    if actual == expected:
        return
    try:
        rel_diff = abs_diff / abs(expected)
    except ZeroDivisionError:
        rel_diff = math.inf
    equal = rtol == 0 and atol == 0
    lines = [f"Scalars are not {'equal' if equal else 'close'}!", "", f"Expected {expected} but got {actual}."]
    lines.append(f"Absolute difference: {abs_diff}" + ("" if equal else f" (up to {atol} allowed)"))
    lines.append(f"Relative difference: {rel_diff}" + ("" if equal else f" (up to {rtol} allowed)"))
    raise _Failure(AssertionError, "\n".join(lines))


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) or isinstance(x, bool)


def _compare(actual, expected, path, opts):
    if isinstance(actual, ember.Tensor) and isinstance(expected, ember.Tensor):
        return _compare_tensors(actual, expected, **opts)
    if _is_number(actual) and _is_number(expected):
        if isinstance(actual, bool) or isinstance(expected, bool):
            if actual != expected:
                raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
            return None
        return _compare_numbers(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"])
    if (
        isinstance(actual, collections.abc.Sequence)
        and isinstance(expected, collections.abc.Sequence)
        and not isinstance(actual, str)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare_item(a, e, path + [i], opts)
        return None
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise _Failure(
                AssertionError,
                f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                f"{sorted(set(expected) - set(actual))}\nExtra keys in the actual mapping: "
                f"{sorted(set(actual) - set(expected))}",
            )
        for key in expected:
            _compare_item(actual[key], expected[key], path + [key], opts)
        return None
    if actual is None and expected is None:
        return None
    raise _Failure(
        TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}."
    )


def _compare_item(actual, expected, path, opts):
    try:
        _compare(actual, expected, path, opts)
    except _Failure as f:
        if f.kind is AssertionError and path and "The failure occurred for item" not in f.message:
            where = "".join(f"[{p!r}]" for p in path)
            f.message += f"\n\nThe failure occurred for item {where}"
        raise


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    msg=None,
):
    """Raises AssertionError (with PyTorch's message) unless actual and expected are close."""
    if (rtol is None) ^ (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}."
        )
    opts = dict(
        rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
        check_stride=check_stride,
    )
    try:
        _compare_item(actual, expected, [], opts)
    except _Failure as f:
        if f.kind is not AssertionError:
            raise f.kind(f.message) from None
        message = f.message
        if callable(msg):
            message = msg(message)
        elif msg is not None:
            message = msg
        raise AssertionError(message) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated alias kept by PyTorch; compares with equal_nan=True by default."""
    if not isinstance(actual, ember.Tensor):
        actual = ember.tensor(actual)
    if not isinstance(expected, ember.Tensor):
        expected = ember.tensor(expected, dtype=actual.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of random values in [low, high) (defaults as PyTorch's: -9..9)."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    if dtype == ember.bool:
        result = ember.randint(0, 2, shape, device=device).to(ember.bool)
    elif dtype.is_floating_point:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        result = ember.empty(shape, dtype=ember.float64, device=device).uniform_(lo, hi).to(dtype)
    else:
        info = ember.iinfo(dtype)
        lo = max(info.min, -9) if low is None else int(low)
        hi = min(info.max, 10) if high is None else int(high)
        result = ember.randint(lo, hi, shape, device=device, dtype=dtype)
    if exclude_zero:
        result[result == 0] = 1 if dtype == ember.bool or not dtype.is_floating_point else ember.finfo(dtype).tiny
    if noncontiguous and result.numel() > 1:
        result = ember.repeat_interleave(result, 2, dim=-1)[..., ::2]
    if memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result

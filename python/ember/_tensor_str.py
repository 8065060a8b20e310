"""Tensor printing with PyTorch's rules (precision, int/sci modes,
summarisation, 80-column wrapping, suffixes), so output matches byte for byte."""

from __future__ import annotations

import math


class _PrintOptions:
    # a plain class: dataclasses would add a sixth of Ember's import time
    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Sets printing options (same arguments and profiles as PyTorch)."""
    if profile is not None:
        presets = {
            "default": (4, 1000, 3, 80),
            "short": (2, 1000, 2, 80),
            "full": (4, math.inf, 3, 80),
        }
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = presets[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    return dict(vars(PRINT_OPTS))


def _nested(values, shape):
    """Row-major flat list -> nested lists of `shape`."""
    if not shape:
        return values[0]
    if len(shape) == 1:
        return list(values)
    step = len(values) // shape[0] if shape[0] else 0
    return [_nested(values[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def _summarized_values(data, shape, summarize, edge):
    """Values the formatter sees: for summarised tensors only the edges."""
    out = []

    def walk(x, dims):
        if not dims:
            out.append(x)
            return
        n = dims[0]
        idx = list(range(edge)) + list(range(n - edge, n)) if summarize and n > 2 * edge else range(n)
        for i in idx:
            walk(x[i], dims[1:])

    walk(data, list(shape))
    return out


class _Formatter:
    """Column width and mode from the values shown (PyTorch's rules)."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:
            return
        absv = [abs(v) for v in finite]
        lo, hi = min(absv), max(absv)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in finite)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in finite)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in finite)

    def width(self):
        return self.max_width

    def format(self, v) -> str:
        p = PRINT_OPTS.precision
        if not self.floating:
            ret = str(v)
        elif self.sci_mode:
            ret = f"{v:{self.max_width}.{p}e}"
        elif self.int_mode:
            ret = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            ret = f"{v:.{p}f}"
        return (self.max_width - len(ret)) * " " + ret


class _ComplexFormatter:
    """Real and imaginary parts formatted with their own widths and modes."""

    def __init__(self, values):
        self.real = _Formatter([v.real for v in values], True)
        self.imag = _Formatter([v.imag for v in values], True)

    def width(self):
        # one more for the "j"
        return self.real.width() + self.imag.width() + 1

    def format(self, v) -> str:
        re = self.real.format(v.real)
        im = (self.imag.format(v.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im


def _vector_str(row, indent, summarize, fmt, edge):
    elem_width = fmt.width() + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / elem_width))
    if summarize and len(row) > 2 * edge:
        items = [fmt.format(v) for v in row[:edge]] + [" ..."] + [fmt.format(v) for v in row[-edge:]]
    else:
        items = [fmt.format(v) for v in row]
    lines = [items[i : i + per_line] for i in range(0, len(items), per_line)]
    text = [", ".join(line) for line in lines]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(text) + "]"


def _tensor_str_nested(data, shape, indent, summarize, fmt, edge):
    dim = len(shape)
    if dim == 0:
        return fmt.format(data)
    if dim == 1:
        return _vector_str(data, indent, summarize, fmt, edge)
    if summarize and shape[0] > 2 * edge:
        rows = [_tensor_str_nested(data[i], shape[1:], indent + 1, summarize, fmt, edge) for i in range(edge)]
        rows += ["..."]
        rows += [
            _tensor_str_nested(data[i], shape[1:], indent + 1, summarize, fmt, edge)
            for i in range(shape[0] - edge, shape[0])
        ]
    else:
        rows = [_tensor_str_nested(data[i], shape[1:], indent + 1, summarize, fmt, edge) for i in range(shape[0])]
    sep = "," + "\n" * (dim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def _body(t, indent):
    import ember

    if t.numel() == 0:
        return "[]"
    shape = list(t.shape)
    values = t.detach().tolist()
    summarize = t.numel() > PRINT_OPTS.threshold
    edge = PRINT_OPTS.edgeitems
    floating = t.dtype.is_floating_point
    if t.dim() == 0:
        seen = [values]
    else:
        seen = _summarized_values(values, shape, summarize, edge)
    if t.dtype == ember.float8_e8m0fnu:
        # PyTorch measures float8_e8m0fnu's values through their bytes: byte 0 (2**-127) counts as zero
        seen = [v for v in seen if v != 2.0**-127]
    if floating and t.dtype in (ember.float16, ember.bfloat16):
        seen = [float(v) for v in seen]
    fmt = _ComplexFormatter(seen) if t.dtype.is_complex else _Formatter(seen, floating)
    if t.dim() == 0:
        return fmt.format(values)
    return _tensor_str_nested(values, shape, indent, summarize, fmt, edge)


def _add_suffixes(s, suffixes, indent, force_newline=False):
    """The suffixes after the values, wrapped as PyTorch counts the last line
    (one more than its length at first; a sparse COO tensor starts a line)."""
    last = len(s) - s.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last + len(suffix) + 2 > PRINT_OPTS.linewidth:
            s += ",\n" + " " * indent + suffix
            last = indent + len(suffix)
            force_newline = False
        else:
            s += ", " + suffix
            last += len(suffix) + 2
    return s + ")"


def _str(t, *, tensor_contents=None):
    import ember

    # A subclass other than Parameter prints under its own name.
    plain = type(t) is ember.Tensor or type(t) is ember.nn.Parameter
    prefix = "tensor(" if plain else f"{type(t).__name__}("
    indent = len(prefix)
    suffixes = []
    default_dtype = ember.get_default_dtype()
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.is_meta:
        # No data to show: the size always, the dtype unless it is the default.
        suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype != default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        return _add_suffixes(prefix + "...", suffixes + _grad_suffixes(t), indent)
    if t.numel() == 0 and t.dim() != 1:
        suffixes.append(f"size={tuple(t.shape)}")
    default_complex = ember.complex128 if default_dtype == ember.float64 else ember.complex64
    show_dtype = t.dtype not in (default_dtype, default_complex, ember.int64, ember.bool)
    if t.numel() == 0 and t.dtype != default_dtype:
        show_dtype = True
    body = tensor_contents if tensor_contents is not None else _body(t, indent)
    if show_dtype:
        suffixes.append(f"dtype={t.dtype}")
    return _add_suffixes(prefix + body, suffixes + _grad_suffixes(t), indent)


def _grad_suffixes(t):
    from ember.autograd.forward_ad import _tangent_for_printing

    tangent = _tangent_for_printing(t)
    out = [f"tangent={tangent}"] if tangent is not None else []
    return out + _history_suffixes(t)


def _history_suffixes(t):
    grad_fn = t.grad_fn
    if grad_fn is not None:
        name = type(grad_fn).__name__
        if name == "CppFunction":  # a C++ custom function: its node's own name
            name = grad_fn.name().rsplit("::", 1)[-1]
        return [f"grad_fn=<{name}>"]
    if t.requires_grad:
        return ["requires_grad=True"]
    return []

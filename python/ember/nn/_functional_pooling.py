"""conv_transpose1d, adaptive pooling in 1-d and max adaptive pooling, max unpooling:
functions of ember.nn.functional with torch.nn.functional's signatures and checks.

Note [Adaptive max pooling as a gather]
Output cell (i, j) covers input rows [floor(i*H/OH), ceil((i+1)*H/OH)) and the
same formula over columns. adaptive_max_pool2d gathers each cell's window in
row-major order (padded to the largest window with a -inf sentinel), finds the
first maximum (or NaN) in that order, as PyTorch's kernel picks it, and gathers
the values at those positions, so the gradient reaches exactly those inputs.
Where the windows tile the input exactly it is max_pool2d with kernel = stride.
"""

from __future__ import annotations

import ember

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "conv_transpose1d",
    "max_unpool1d",
    "max_unpool2d",
]


def _scalar_name(t):
    if t.dtype.is_complex:
        return "ComplexFloat" if t.element_size() == 8 else "ComplexDouble"
    return t.type().split(".")[-1][: -len("Tensor")]


def _require_floating(t, name):
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_scalar_name(t)}'")


def _output_size_with_default(output_size, input_shape):
    """The adaptive pools' output_size with None taken from the input's last
    dims; an input with no more dims than output_size has is refused with
    PyTorch's ValueError, before the kernel's own checks."""
    if isinstance(output_size, int):
        return output_size
    n = len(output_size)
    if len(input_shape) <= n:
        raise ValueError(f"Input dimension should be at least {n + 1}")
    return [d if v is None else v for v, d in zip(output_size, input_shape[len(input_shape) - n :])]


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-d transposed convolution (the gradient of conv1d with respect to its input)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input of size: "
            f"{list(input.shape)}"
        )
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    out = ember.convolution(
        x,
        weight,
        bias,
        list(_tuple(stride, 1)),
        list(_tuple(padding, 1)),
        list(_tuple(dilation, 1)),
        True,
        list(_tuple(output_padding, 1)),
        groups,
    )
    return out if batched else out.squeeze(0)


def _check_1d(input, name):
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 'self' "
            f"(while checking arguments for {name})"
        )


def _one_int(output_size, name):
    size = _tuple(output_size, 1)
    if len(size) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(size)})")
    return size[0]


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of the last dim to output_size positions."""
    size = _one_int(output_size, "adaptive_avg_pool1d")
    _check_1d(input, "adaptive_avg_pool1d")
    return ember.adaptive_avg_pool2d(input.unsqueeze(-2), [1, size]).squeeze(-2)


def _windows(n_in, n_out):
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _window_table(in_sizes, out_sizes, device):
    """(cells, K) flat positions of each output cell's window, row-major, padded with the plane's size
    (a -inf sentinel)."""
    import itertools

    spans = [_windows(n, o) for n, o in zip(in_sizes, out_sizes)]
    strides = [1] * len(in_sizes)
    for d in range(len(in_sizes) - 2, -1, -1):
        strides[d] = strides[d + 1] * in_sizes[d + 1]
    plane = strides[0] * in_sizes[0]
    k = 1
    for dim_spans in spans:
        k *= max(e - s for s, e in dim_spans)
    table = []
    for cell_spans in itertools.product(*spans):
        ranges = [range(s0, s1) for s0, s1 in cell_spans]
        cell = [sum(i * st for i, st in zip(pos, strides)) for pos in itertools.product(*ranges)]
        table.append(cell + [plane] * (k - len(cell)))
    return ember.tensor(table, dtype=ember.int64, device=device)


def _int64_sizes(sizes):
    """Sizes as PyTorch's argument parser reads an int list: a Python int
    outside int64 is its ValueError, before the operator's checks."""
    for v in _tuple(sizes, 1):
        if isinstance(v, int) and not -(2**63) <= v < 2**63:
            raise ValueError("Overflow when unpacking long long")
    return sizes


def _check_nonempty_planes(input, name):
    for i in range(1, input.dim()):
        if input.size(i) == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {i} being empty"
            )


def _adaptive_max(x, out_sizes, name="adaptive_max_pool2d"):
    """(values, flat indices) of adaptive max pooling of the last len(out_sizes) dims;
    `name` is the kernel PyTorch names when it refuses the dtype.

    Note [Adaptive max pooling as a gather]."""
    n = len(out_sizes)
    in_sizes = list(x.shape[-n:])
    if n == 2 and all(o > 0 and i % o == 0 for i, o in zip(in_sizes, out_sizes)):
        kernel = [i // o for i, o in zip(in_sizes, out_sizes)]
        return ember.max_pool2d_with_indices(x, kernel, kernel, [0, 0], [1, 1], False)
    lead = list(x.shape[:-n])
    out_sizes = list(out_sizes)
    # The results first: a negative, overflowing or impossible size raises
    # PyTorch's error here, before the window table is built cell by cell.
    empty = ember.empty(lead + out_sizes, dtype=x.dtype, device=x.device)
    empty_indices = ember.empty(lead + out_sizes, dtype=ember.int64, device=x.device)
    _require_floating(x, name)  # the kernel's dtype check, after the results are made
    if 0 in out_sizes or x.numel() == 0:
        return empty, empty_indices
    del empty, empty_indices
    table = _window_table(in_sizes, out_sizes, x.device)
    k = table.size(1)
    flat = x.reshape(lead + [-1])
    with ember.no_grad():
        padded = ember.cat([flat, ember.full(lead + [1], float("-inf"), dtype=x.dtype, device=x.device)], -1)
        windows = padded.gather(-1, table.view(-1).expand(lead + [table.numel()])).view(lead + list(table.shape))
        top = windows.amax(-1, keepdim=True)
        hit = windows == top
        if not x.is_meta and bool(top.isnan().any()):
            hit.logical_or_(windows.isnan())
        # the first hit in row-major order: the largest of (k - position) over the hits
        rank = ember.arange(k, 0, -1, dtype=ember.float32, device=x.device)
        first = k - ember.where(hit, rank, 0.0).amax(-1).to(ember.int64)
        where = table.expand(lead + list(table.shape)).gather(-1, first.unsqueeze(-1)).squeeze(-1)
    values = flat.gather(-1, where)
    return values.view(lead + out_sizes), where.view(lead + out_sizes)


def _adaptive_max_2d(x, oh, ow):
    if x.dim() in (3, 4) and not x.is_meta and x.device.type == "cpu":
        return ember.adaptive_max_pool2d(x, [oh, ow])
    return _adaptive_max(x, [oh, ow])


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    output_size = _int64_sizes(_output_size_with_default(output_size, input.shape))
    if input.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    _check_nonempty_planes(input, "adaptive_max_pool3d")
    size = _tuple(output_size, 3)
    if len(size) != 3:
        raise RuntimeError(f"adaptive_max_pool3d(): internal error: output_size.size() must be 3 (got {len(size)})")
    sizes = [input.size(-3 + i) if v is None else v for i, v in enumerate(size)]
    return _adaptive_max(input, sizes, "adaptive_max_pool3d_cpu")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of the last three dims to output_size; with return_indices also the flat positions."""
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    output_size = _int64_sizes(_output_size_with_default(output_size, input.shape))
    if input.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    size = _tuple(output_size, 2)
    if len(size) != 2:
        raise RuntimeError(f"adaptive_max_pool2d(): internal error: output_size.size() must be 2 (got {len(size)})")
    # (the dtype is checked after the sizes, by the operator or _adaptive_max)
    oh = input.size(-2) if size[0] is None else size[0]
    ow = input.size(-1) if size[1] is None else size[1]
    return _adaptive_max_2d(input, oh, ow)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of the last two dims to output_size; with return_indices also the flat positions."""
    out, idx = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    size = _one_int(_int64_sizes(output_size), "adaptive_max_pool1d")
    _check_1d(input, "adaptive_max_pool1d")
    _check_nonempty_planes(input, "adaptive_max_pool1d")
    out, idx = _adaptive_max_2d(input.unsqueeze(-2), 1, size)
    return out.squeeze(-2), idx.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of the last dim to output_size positions."""
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def _ntuple(x, n):
    # PyTorch's _single/_pair/_triple: any iterable (a tensor too) as a tuple.
    import collections.abc

    return tuple(x) if isinstance(x, collections.abc.Iterable) else (x,) * n


def _check_bool(cond):
    # torch._check's refusal of a condition that is not a bool.
    if not isinstance(cond, bool):
        if isinstance(cond, ember.Tensor):
            raise TypeError(
                "cond must be a bool, but got a Tensor. For tensor conditions, use torch._check_tensor_all() to "
                "assert that all elements are true."
            )
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    return cond


def _unpool_size(input, kernel, stride, padding, output_size):
    """PyTorch's _unpool_output_size, in its order."""
    n = len(kernel)
    shape = input.size()
    default = [(shape[-n + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        size = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length of "
                f"'{len(output_size)}'"
            )
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
        size = output_size
    for d in range(n):
        if not _check_bool(size[d] >= 0):
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                f"output_size[{d}]={size[d]}"
            )
    return size


_UNPOOL_BINDINGS = {}


def _unpool_binding(n):
    # The checks of torch._C._nn.max_unpool{2,3}d's arguments.
    from ember import _argcheck

    if n not in _UNPOOL_BINDINGS:
        text = (
            "max_unpool2d(Tensor input, Tensor indices, int[2] output_size)"
            if n == 2
            else "max_unpool3d(Tensor input, Tensor indices, int[3] output_size, int[3] stride, int[3] padding)"
        )
        _UNPOOL_BINDINGS[n] = _argcheck.Binding(text)
    return _UNPOOL_BINDINGS[n]


def _unpool(input, indices, size, stride=None, padding=None, shown_size=None):
    """Scatters each plane's values to their flat positions in a zero plane of
    the given spatial size, with the checks of PyTorch's kernels in their order."""
    if stride is not None:
        _unpool_binding(3)(input, indices, size, stride, padding)
        if indices.dtype != ember.int64:
            raise RuntimeError("elements in indices should be type int64")
        if input.dim() not in (4, 5):
            raise RuntimeError(
                f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with {input.dim()} dimensions."
            )
        if len(size) != 3:
            raise RuntimeError(
                "There should be exactly three elements (depth, height, width) in output_size, but got "
                f"{len(size)} elements."
            )
    else:
        _unpool_binding(2)(input, indices, size)
        if indices.dtype != ember.int64:
            raise RuntimeError(f"elements in indices should be type int64 but got: {_scalar_name(indices)}")
        if len(size) != 2:
            raise RuntimeError(
                f"There should be exactly two elements (height, width) in output_size, but got {len(size)} elements."
            )
        if input.dim() not in (3, 4):
            raise RuntimeError(
                f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with {input.dim()} dimensions."
            )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) but got "
            f"indices tensor with shape: {list(indices.shape)}"
        )
    _require_floating(input, "max_unpool3d" if len(size) == 3 else "max_unpool2d")
    n = len(size)
    size = [int(s) for s in size]
    lead = list(input.shape[:-n])
    plane = 1
    for s in size:
        plane *= s
    if indices.numel() and not indices.is_meta and (int(indices.min()) < 0 or int(indices.max()) >= plane):
        bad = int(indices.max()) if int(indices.max()) >= plane else int(indices.min())
        raise RuntimeError(
            f"Found an invalid max index: {bad} (output volumes are of size {'x'.join(map(str, shown_size or size))})"
        )
    from ember.autograd.function import _composite_node

    def unpool(t):
        out = ember.zeros(lead + [plane], dtype=t.dtype, device=t.device)
        return out.scatter(-1, indices.flatten(-n), t.flatten(-n)).view(lead + list(size))

    return _composite_node(f"MaxUnpool{n}DBackward0", unpool, input)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool1d: each value back at its index, zeros elsewhere."""
    kernel = _ntuple(kernel_size, 1)
    stride = kernel if stride is None else _ntuple(stride, 1)
    size = list(_unpool_size(input, kernel, stride, _ntuple(padding, 1), output_size)) + [1]
    return _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool2d: each value back at its flat index, zeros elsewhere."""
    kernel = _ntuple(kernel_size, 2)
    stride = kernel if stride is None else _ntuple(stride, 2)
    size = _unpool_size(input, kernel, stride, _ntuple(padding, 2), output_size)
    return _unpool(input, indices, size)

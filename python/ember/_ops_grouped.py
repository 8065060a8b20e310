"""Reductions over groups of elements: multi-dimensional histograms (torch.histogramdd) and reductions of
consecutive segments (torch.segment_reduce)."""

from __future__ import annotations

import builtins
import math

from ember import _C, _argcheck
from ember._ops_math import _not_implemented, _scalar_name, return_type

__all__ = ["histogramdd", "segment_reduce"]
METHODS: list[str] = []

_histogramdd_t = return_type("histogramdd", ("hist", "bin_edges"))


def _ember():
    import ember

    return ember


def _c_name(dtype):
    return {"Float": "float", "Double": "double"}.get(_scalar_name(dtype), _scalar_name(dtype))


def _dim_edges(extremes, d, spec, lo_hi, dtype):
    """The bin edges of dimension d: the given tensor, or spec equal bins over lo_hi (default the column's
    min and max, extremes(d), widened by 0.5 both ways when they coincide)."""
    ember = _ember()
    if isinstance(spec, _C.TensorBase):
        if spec.dtype != dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with "
                f"dtype {_c_name(dtype)} and bins for dimension {d} with dtype {_c_name(spec.dtype)}"
            )
        if spec.dim() != 1:
            raise RuntimeError(
                f"torch.histogramdd: bins tensor should have one dimension, but got {spec.dim()} dimensions in the "
                f"bins tensor for dimension {d}"
            )
        if spec.numel() == 0:
            raise RuntimeError(
                f"torch.histogramdd: bins tensor should have at least 1 element, but got {spec.numel()} elements "
                f"in the bins tensor for dimension {d}"
            )
        return spec.clone()
    if spec <= 0:
        raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {spec} for dimension {d}")
    if lo_hi is not None:
        lo, hi = lo_hi
    else:
        lo, hi = extremes(d)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError(
            f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for dimension {d}"
        )
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return ember.linspace(lo, hi, spec + 1, dtype=dtype)


def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """(hist, bin_edges): counts (or weights) of the points that are input's innermost rows, in a grid of
    bins; the last bin of each dimension includes its right edge."""
    ember = _ember()
    _argcheck.tensor("histogramdd", "input", 1, input)
    # CPU kernels only in PyTorch: edges from bin counts first, or the counts in given edges
    tensor_bins = not isinstance(bins, int) and builtins.any(isinstance(b, _C.TensorBase) for b in bins)
    op = "aten::_histogramdd_from_bin_tensors" if tensor_bins else "aten::_histogramdd_bin_edges"
    _argcheck.cpu_only(op, input, weight, *(bins if tensor_bins else ()))
    if input.dtype not in (ember.float32, ember.float64):
        _not_implemented("histogramdd", input.dtype)
    if input.dim() < 2 and input.dim() != 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if input.device.type == "meta":
        raise NotImplementedError(
            "aten::_histogramdd_bin_edges: attempted to run this operator with Meta tensors, but there was no fake "
            "impl or Meta kernel registered."
        )
    n_dims = input.size(-1)
    points = input.reshape(-1, n_dims)
    if isinstance(bins, int):
        specs = [bins] * n_dims
    else:
        specs = list(bins)
        if len(specs) != n_dims:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if range is not None:
        if len(range) != 2 * n_dims:
            raise RuntimeError(
                f"torch.histogramdd: for a {n_dims}-dimensional histogram range should have {2 * n_dims} "
                f"elements, but got {len(range)}"
            )
        ranges = [(builtins.float(range[2 * d]), builtins.float(range[2 * d + 1])) for d in builtins.range(n_dims)]
    else:
        ranges = [None] * n_dims
    bounds = []

    def extremes(d):
        # every column's min and max, found once
        if not bounds:
            if points.numel():
                lo, hi = _C._histogramdd_extremes(points).tolist()
                bounds.extend(zip(lo, hi))
            else:
                bounds.extend([(0.0, 0.0)] * n_dims)
        return bounds[d]

    edges = [_dim_edges(extremes, d, specs[d], ranges[d], input.dtype) for d in builtins.range(n_dims)]
    counts = [e.numel() - 1 for e in edges]
    # edges made from bin counts are binned by division, as PyTorch does
    linear = not builtins.any(isinstance(spec, _C.TensorBase) for spec in specs)
    hist = _C._histogramdd_counts(points, edges, None if weight is None else weight.reshape(-1), linear)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * n_dims
            shape[d] = counts[d]
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
    if out is not None:
        out[0].copy_(hist)
        return _histogramdd_t((out[0], tuple(edges)))
    return _histogramdd_t((hist, tuple(edges)))


# ---- segment_reduce ----------------------------------------------------------------------------
_SEGMENT_REDUCE = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "amax", "min": "amin"}
_EMPTY_VALUE = {"sum": 0.0, "prod": 1.0, "mean": 0.0, "max": float("-inf"), "min": float("inf")}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Reductions of consecutive segments of data along axis, the segments given by their lengths (or by
    offsets, their boundaries); a row of lengths per index of the dimensions before axis. An empty segment
    gives initial, or the reduction's identity (nan for a mean); initial also joins every reduction."""
    ember = _ember()
    name = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    if name not in _SEGMENT_REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    axis = axis + data.dim() if axis < 0 else axis
    if not data.is_floating_point():
        _not_implemented("_segment_reduce_cpu", data.dtype)
    if lengths is not None:
        if lengths.dtype not in (ember.int32, ember.int64):
            _not_implemented("_segment_reduce_lengths_cpu_kernel1", lengths.dtype)
        bounds = ember.cat([ember.zeros_like(lengths[..., :1]), lengths.cumsum(-1)], -1)
    else:
        if offsets.dtype not in (ember.int32, ember.int64):
            _not_implemented("_segment_reduce_offsets_cpu_kernel1", offsets.dtype)
        bounds = offsets
    bounds = bounds.long()
    if bounds.dim() != axis + 1:
        raise RuntimeError("segment_reduce(): Expected lengths/offsets to have axis + 1 dimensions")
    size = data.size(axis)
    if not unsafe and lengths is not None:
        if not bool((lengths >= 0).all()):
            raise RuntimeError("lengths contains negative value!")
        if not bool((bounds[..., -1] == size).all()):
            raise RuntimeError(
                "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) "
                "when !unsafe."
            )
    if data.device.type in ("cpu", "cuda"):  # Note [Segment reductions]
        return ember._segment_reduce(data, bounds, name, axis, initial)
    segments = bounds.size(-1) - 1
    lead = list(data.shape[:axis])
    # the segment of every position: searchsorted(bounds, position, right=True) - 1, clamped
    seg = _C._segment_ids(bounds, size)
    trail = [1] * (data.dim() - axis - 1)
    index = seg.reshape(lead + [size] + trail).expand(data.shape)
    out_shape = list(data.shape)
    out_shape[axis] = segments
    start = ember.full(out_shape, _EMPTY_VALUE[name], dtype=data.dtype)
    # A sum starting from the zeros of start is the sum of the segment alone (no pass that first resets
    # the receiving positions); the other reductions leave start out.
    summed = name in ("sum", "mean")
    out = start.scatter_reduce(axis, index, data, "sum" if summed else _SEGMENT_REDUCE[name], include_self=summed)
    if name == "mean":
        count = (bounds[..., 1:] - bounds[..., :-1]).to(data.dtype).reshape(lead + [segments] + trail)
        if initial is not None:
            return (out + initial) / count.clamp(min=1)
        return out / count
    if initial is None:
        return out
    if name == "sum":
        return out + initial
    if name == "prod":
        return out * initial
    bound = ember.full((), initial, dtype=data.dtype)
    return ember.maximum(out, bound) if name == "max" else ember.minimum(out, bound)

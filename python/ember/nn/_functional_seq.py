"""Padding, one_hot, interpolation, sliding blocks (unfold/fold), attention
and a few helpers of ember.nn.functional, with torch.nn.functional's
signatures, defaults and errors."""

from __future__ import annotations

import math

import ember

__all__ = [
    "pad",
    "one_hot",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "unfold",
    "fold",
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
]


def _pair(v):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v, v)


# ---- padding ------------------------------------------------------------------------

_PAD_OPS = {
    ("reflect", 2): "reflection_pad1d",
    ("reflect", 4): "reflection_pad2d",
    ("reflect", 6): "reflection_pad3d",
    ("replicate", 2): "replication_pad1d",
    ("replicate", 4): "replication_pad2d",
    ("replicate", 6): "replication_pad3d",
}


def _pad_circular(input, pad):
    nd = input.dim()
    k = len(pad) // 2
    # Negative padding crops first; what is left wraps around.
    x = input
    for i in range(k):
        dim = nd - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        n = x.size(dim)
        if left < 0 or right < 0:
            lo, hi = max(-left, 0), max(-right, 0)
            if n - lo - hi <= 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension.")
            x = x.narrow(dim, lo, n - lo - hi)
    pos = [max(p, 0) for p in pad]
    for i in range(k):
        dim = nd - 1 - i
        if pos[2 * i] > x.size(dim) or pos[2 * i + 1] > x.size(dim):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    shape = list(x.shape)
    for i in range(k):
        shape[nd - 1 - i] += pos[2 * i] + pos[2 * i + 1]
    out = ember.empty(shape, dtype=x.dtype)
    center = out
    for i in range(k):
        dim = nd - 1 - i
        center = center.narrow(dim, pos[2 * i], x.size(dim))
    center.copy_(x)
    # Dim by dim over the full extent of the others: corners come out right
    # because every later dim copies from rows its predecessors completed.
    for i in range(k):
        dim = nd - 1 - i
        left, right, n = pos[2 * i], pos[2 * i + 1], x.size(dim)
        if left > 0:
            out.narrow(dim, 0, left).copy_(out.narrow(dim, n, left))
        if right > 0:
            out.narrow(dim, left + n, right).copy_(out.narrow(dim, left, right))
    return out


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad)//2 dims; pad lists (left, right) from the last dim backwards."""
    pad = [int(p) for p in pad]
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = input.dim()
    if len(pad) > nd * 2:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension "
            f"but got padding length {len(pad)} and input of dimension {nd}"
        )
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        return ember.constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    size_ok = {2: (2, 3), 4: (3, 4), 6: (4, 5)}.get(len(pad), ())
    if nd not in size_ok:
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode == "circular":
        return _pad_circular(input, pad)
    return getattr(ember, _PAD_OPS[(mode, len(pad))])(input, pad)


# ---- one_hot ----------------------------------------------------------------------------


def one_hot(tensor, num_classes=-1):
    """Index tensor -> int64 tensor with a trailing dim of num_classes holding 1 at each index."""
    if tensor.dtype != ember.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return ember.zeros(list(tensor.shape) + [num_classes], dtype=ember.int64)
    lo, hi = int(tensor.min()), int(tensor.max())
    if lo < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = hi + 1
    elif hi >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = ember.zeros(list(tensor.shape) + [num_classes], dtype=ember.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


# ---- interpolation ------------------------------------------------------------------------

_LINEAR_MODES = ("linear", "bilinear", "bicubic", "trilinear")


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Resizes the spatial dims (all dims after the first two) of input."""
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please provide "
                    "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * dim
        scale_factors = None
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                    "(s1, s2, ...,sK) format."
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
        output_size = None
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError(
            "recompute_scale_factor is not meaningful with an explicit size."
        )
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scale_factors = None

    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor as input"
        )
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False

    nd = input.dim()
    if mode in ("nearest", "nearest-exact") and nd in (3, 4, 5):
        stem = "upsample_nearest" if mode == "nearest" else "_upsample_nearest_exact"
        return getattr(ember, f"{stem}{nd - 2}d")(input, output_size, scale_factors)
    if mode == "area" and nd == 4:
        return ember.nn.functional.adaptive_avg_pool2d(input, output_size)
    if mode == "linear" and nd == 3:
        return ember.upsample_linear1d(input, output_size, align_corners, scale_factors)
    if mode == "bilinear" and nd == 4:
        if antialias:
            raise NotImplementedError("antialiased bilinear interpolation is not supported")
        return ember.upsample_bilinear2d(input, output_size, align_corners, scale_factors)
    if mode in ("linear", "bilinear", "trilinear") and nd in (3, 4, 5):
        need = {"linear": 3, "bilinear": 4, "trilinear": 5}[mode]
        if nd != need:
            raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {need}D input")
    if nd in (3, 4, 5) and mode in ("bicubic", "trilinear", "area", "lanczos"):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported for {nd}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: "
        "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
        f"(got {mode})"
    )


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- sliding blocks -------------------------------------------------------------------------


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C, H, W) -> (N, C*kh*kw, L): every sliding block as a column."""
    return ember.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C*kh*kw, L) -> (N, C, H, W): sums the sliding blocks back into an image."""
    return ember.col2im(
        input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    )


# ---- dropout and softmax used by attention ------------------------------------------------------


def _dropout(input, p, training):
    # input * mask / (1 - p), the mask drawn by bernoulli_ as PyTorch on the CPU.
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * ember.zeros_like(input)
    noise = ember.empty_like(input).bernoulli_(1 - p)
    noise.div_(1 - p)
    return input * noise


def _softmax(input, dim):
    return ember.softmax(input, dim)


# ---- attention --------------------------------------------------------------------------------


def _bool_mask_to_float(mask, dtype):
    if mask is not None and mask.dtype == ember.bool:
        return ember.zeros(list(mask.shape), dtype=dtype).masked_fill(mask.logical_not(), float("-inf"))
    return mask


def _causal_mask(L, S):
    # Allowed where the key position is at most the query position (lower triangle).
    return ember.arange(S).unsqueeze(0) <= ember.arange(L).unsqueeze(1)


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """softmax(Q K^T * scale + mask) V, computed as PyTorch's math path."""
    if enable_gqa:
        raise NotImplementedError("scaled_dot_product_attention: enable_gqa is not supported")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must be at least 2-D")
    if _use_flash(query, key, value, attn_mask, dropout_p):
        mask = _bool_mask_to_float(attn_mask, query.dtype)
        return ember._scaled_dot_product_flash_attention_for_cpu(
            query, key, value, 0.0, is_causal, attn_mask=mask, scale=scale
        )[0]
    L, S, E = query.size(-2), key.size(-2), query.size(-1)
    s = (1.0 / math.sqrt(E)) if scale is None else scale
    factor = math.sqrt(s)
    if is_causal:
        attn_mask = _causal_mask(L, S)
    mask = _bool_mask_to_float(attn_mask, query.dtype)
    q = query * factor
    attn = ember.matmul(q, key.transpose(-2, -1) * factor)
    if mask is not None:
        attn = attn + mask
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:
        attn = _dropout(attn, dropout_p, True)
    return ember.matmul(attn, value)


def _use_flash(q, k, v, mask, dropout_p):
    # The cases where PyTorch's CPU dispatcher picks its fused kernel.
    if dropout_p != 0.0 or q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        return False
    if mask is not None and mask.requires_grad:
        return False
    if q.dtype not in (ember.float32, ember.float64, ember.float16, ember.bfloat16):
        return False
    if q.size(0) != k.size(0) or q.size(0) != v.size(0) or q.size(1) != k.size(1) or q.size(1) != v.size(1):
        return False
    if not (q.size(-1) == k.size(-1) == v.size(-1)):
        return False
    if q.size(-2) == 0 or k.size(-2) == 0:
        return False
    return q.stride(-1) == 1 and k.stride(-1) == 1 and v.stride(-1) == 1


def _safe_softmax(x):
    # Rows that are all -inf give zeros (and zero gradients) instead of NaN.
    full = (x == float("-inf")).all(-1, keepdim=True)
    if not bool(full.any()):
        return ember.softmax(x, -1)
    return ember.softmax(x.masked_fill(full, 0.0), -1).masked_fill(full, 0.0)


def _in_projection_packed(q, k, v, w, b):
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        q_proj = linear(q, w_q, b_q)
        kv = linear(k, w_kv, b_kv)
        kv = kv.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def linear(input, weight, bias=None):
    return ember.nn.functional.linear(input, weight, bias)


def _canonical_mask(mask, mask_name, other_name, other, target_type):
    if mask is None:
        return None
    if mask.dtype != ember.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if other is not None and other.dtype != mask.dtype:
        import warnings

        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both instead.",
            stacklevel=3,
        )
    if mask.dtype == ember.bool:
        return ember.zeros(list(mask.shape), dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """Multi-head attention over (L, N, E) inputs (or unbatched (L, E)), as torch's functional."""
    batched = query.dim() == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.size(0)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", "attn_mask", attn_mask, query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, None, query.dtype)
        if key_padding_mask is not None:
            is_causal = False

    if not use_separate_proj_weight:
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q = linear(query, q_proj_weight, b_q)
        k = linear(key, k_proj_weight, b_k)
        v = linear(value, v_proj_weight, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        k = ember.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = ember.cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.view(k.size(0), bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k
    v = v.view(v.size(0), bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v

    if add_zero_attn:
        k = ember.cat([k, ember.zeros([bsz * num_heads, 1, head_dim], dtype=k.dtype)], 1)
        v = ember.cat([v, ember.zeros([bsz * num_heads, 1, head_dim], dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.size(1)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got {tuple(key_padding_mask.shape)}"
            )
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len
        )
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0

    if need_weights:
        _B, _Nt, E = q.shape
        q_scaled = q * math.sqrt(1.0 / float(E))
        if attn_mask is not None:
            attn_output_weights = ember.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            attn_output_weights = ember.bmm(q_scaled, k.transpose(-2, -1))
        attn_output_weights = _softmax(attn_output_weights, -1)
        if dropout_p > 0.0:
            attn_output_weights = _dropout(attn_output_weights, dropout_p, True)
        attn_output = ember.bmm(attn_output_weights, v)
        attn_output = attn_output.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
        attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        attn_output_weights = attn_output_weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_output_weights = attn_output_weights.mean(dim=1)
        if not batched:
            attn_output = attn_output.squeeze(1)
            attn_output_weights = attn_output_weights.squeeze(0)
        return attn_output, attn_output_weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = attn_output.permute(2, 0, 1, 3).contiguous().view(bsz * tgt_len, embed_dim)
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None

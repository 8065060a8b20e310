"""Attention functions of ember.nn.functional (scaled_dot_product_attention,
multi_head_attention_forward) and their helpers, with torch.nn.functional's
signatures, defaults and errors."""

from __future__ import annotations

import math
import warnings

import ember
from ember import backends as _backends
from ember.nn._functional_nn import _dropout
from ember.nn._functional_spatial import pad

__all__ = [
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
]


def _softmax(input, dim):
    return ember.softmax(input, dim)


def _bool_mask_to_float(mask, dtype):
    if mask is not None and mask.dtype == ember.bool:
        zeros = ember.zeros(list(mask.shape), dtype=dtype, device=mask.device)
        return zeros.masked_fill(mask.logical_not(), float("-inf"))
    return mask


def _causal_mask(L, S, device):
    # Allowed where the key position is at most the query position (lower triangle).
    return ember.arange(S, device=device).unsqueeze(0) <= ember.arange(L, device=device).unsqueeze(1)


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """softmax(Q K^T * scale + mask) V, by the first enabled kernel that takes
    the inputs (ember.nn.attention.sdpa_kernel): the fused kernel or the math path."""
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must be at least 2-D")
    gqa_refusal = None
    if enable_gqa:
        if key.dim() == 4 and value.dim() == 4 and query.dim() == 4 and key.shape[:2] != value.shape[:2]:
            gqa_refusal = (
                "Both fused kernels require key and value to have the same num_heads and batch_size but got: "
                f"Key sizes: {list(key.shape)}, Value sizes: {list(value.shape)}, Query sizes: {list(query.shape)} "
                "instead."
            )
        key, value = _repeat_kv_heads(query, key, value)
    flash_refusal = _flash_refusal(query, key, value, attn_mask, dropout_p)
    if flash_refusal is None and gqa_refusal is not None:
        flash_refusal = gqa_refusal
    # The CPU tries its fused kernel, then the math path (the priority order
    # set by sdpa_kernel(set_priority=True) orders the CUDA kernels only);
    # CUDA tensors take the math path (the fused kernel is PyTorch's CPU one).
    on_cpu = query.device.type == "cpu"
    for backend in ("flash", "math"):
        if backend == "flash" and on_cpu and _backends._sdp["flash"] and flash_refusal is None:
            if query.size(-2) == 0 or key.size(-2) == 0:
                break  # nothing to attend over: the math path gives the empty or zero result
            mask = _bool_mask_to_float(attn_mask, query.dtype)
            return ember._scaled_dot_product_flash_attention_for_cpu(
                query, key, value, 0.0, is_causal, attn_mask=mask, scale=scale
            )[0]
        if backend == "math" and _backends._sdp["math"]:
            break
    else:
        if not (_backends._sdp["math"] or _backends._sdp["flash"] or _backends._sdp["overrideable"]):
            raise RuntimeError(
                "No viable backend for scaled_dot_product_attention was found. This is likely due to turning off "
                "both the math kernel and the fused kernels."
            )
        warnings.warn("Flash attention kernel not used because:", stacklevel=2)
        if flash_refusal:
            warnings.warn(flash_refusal, stacklevel=2)
        raise RuntimeError("No available kernel.  Aborting execution.")
    return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale)


def _repeat_kv_heads(query, key, value):
    # Grouped-query attention: each key/value head serves a group of query heads.
    heads = query.size(-3) if query.dim() >= 3 else 1
    kv_heads = [t.size(-3) if t.dim() >= 3 else 1 for t in (key, value)]
    if any(h == 0 or heads % h != 0 for h in kv_heads):
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return tuple(t.repeat_interleave(heads // h, -3) if h != heads else t for t, h in zip((key, value), kv_heads))


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale):
    L, S, E = query.size(-2), key.size(-2), query.size(-1)
    s = (1.0 / math.sqrt(E)) if scale is None else scale
    factor = math.sqrt(s)
    if is_causal:
        attn_mask = _causal_mask(L, S, query.device)
    mask = _bool_mask_to_float(attn_mask, query.dtype)
    q = query * factor
    attn = ember.matmul(q, key.transpose(-2, -1) * factor)
    if mask is not None:
        attn = attn + mask
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:
        attn = _dropout(attn, dropout_p, True)
    return ember.matmul(attn, value)


def _flash_refusal(q, k, v, mask, dropout_p):
    """Why PyTorch's CPU dispatcher would not pick its fused kernel (its
    warning text), or None when it would; "" when it gives no reason."""
    if dropout_p != 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        return (
            "All fused kernels requires query, key and value to be 4 dimensional, but got "
            f"Query dim: {q.dim()}, Key dim: {k.dim()}, Value dim: {v.dim()} instead."
        )
    sizes = [list(t.shape) for t in (q, k, v)]
    if not (q.size(0) == k.size(0) == v.size(0)):
        return (
            "For dense inputs, both fused kernels require query, key and value to have the same batch_size. "
            f"Query.sizes(): {sizes[0]}, Key.sizes(): {sizes[1]}, Value.sizes(): {sizes[2]} instead. To broadcast "
            "dense inputs, try using unsqueeze and expand_to before passing them into the kernel."
        )
    if not (q.size(1) == k.size(1) == v.size(1)):
        return (
            "For dense input, both fused kernels require query, key and value to have the same num_heads. "
            f"Query.sizes(): {sizes[0]}, Key sizes(): {sizes[1]}, Value sizes(): {sizes[2]} instead. To broadcast "
            "dense inputs, try using unsqueeze and expand_to before passing them into the kernel."
        )
    if mask is not None and mask.dim() not in (2, 4):
        return (
            "Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); "
            "4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})"
        )
    if not (q.size(-1) == k.size(-1) == v.size(-1)):
        return (
            "Flash attention requires q,k,v to have the same last dimension. Got "
            f"Query.size(-1): {q.size(-1)}, Key.size(-1): {k.size(-1)}, Value.size(-1): {v.size(-1)} instead."
        )
    if q.dtype not in (ember.float32, ember.float64, ember.float16, ember.bfloat16) or not (
        q.dtype == k.dtype == v.dtype
    ):
        names = [_DTYPE_NAMES.get(t.dtype, str(t.dtype).split(".")[-1]) for t in (q, k, v)]
        return (
            "Expected query, key and value to all be of dtype: {Float, Double, BFloat16, Half}. Got "
            f"Query dtype: {names[0]}, Key dtype: {names[1]}, and Value dtype: {names[2]} instead."
        )
    if q.stride(-1) != 1 or k.stride(-1) != 1 or v.stride(-1) != 1:
        return (
            "All fused kernels require the last dimension of the input to have stride 1. Got "
            f"Query.stride(-1): {q.stride(-1)}, Key.stride(-1): {k.stride(-1)}, Value.stride(-1): {v.stride(-1)}"
        )
    if mask is not None and mask.requires_grad:
        return ""
    return None


# c10's short dtype names, as the fused kernel's warnings print them.
_DTYPE_NAMES = {
    ember.float32: "float",
    ember.float64: "double",
    ember.float16: "c10::Half",
    ember.bfloat16: "c10::BFloat16",
    ember.int32: "int",
    ember.int64: "long int",
    ember.int16: "short int",
    ember.int8: "signed char",
    ember.uint8: "unsigned char",
    ember.bool: "bool",
}


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


def _none_or_dtype(input):  # noqa: A002 - PyTorch's name
    """The tensor's dtype (None for None)."""
    if input is None:
        return None
    if isinstance(input, ember.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask as an additive float mask (-inf where True); a float mask
    as it is. Warns when the other mask given with it has another dtype."""
    if mask is None:
        return None
    if mask.dtype != ember.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and other_type != mask.dtype:
        import warnings

        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both instead.",
            stacklevel=3,
        )
    if mask.dtype == ember.bool:
        return ember.zeros(list(mask.shape), dtype=target_type, device=mask.device).masked_fill(mask, float("-inf"))
    return mask


def _check_attention_ranks(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched; PyTorch's AssertionErrors for ranks that do not fit."""
    rank = query.dim()
    if rank not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {rank}-D query tensor")
    kind = "batched (3-D)" if rank == 3 else "unbatched (2-D)"
    if key.dim() != rank or value.dim() != rank:
        raise AssertionError(
            f"For {kind} `query`, expected `key` and `value` to be {rank}-D"
            f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != rank - 1:
        raise AssertionError(
            f"For {kind} `query`, expected `key_padding_mask` to be `None` or {rank - 1}-D"
            f" but found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.dim()}-D tensor instead"
            )
        expected = (num_heads, query.shape[0], key.shape[0])
        if rank == 2 and attn_mask.dim() == 3 and attn_mask.shape != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return rank == 3


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
    batched = _check_attention_ranks(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.size(0)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")

    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
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
        k = ember.cat([k, ember.zeros([bsz * num_heads, 1, head_dim], dtype=k.dtype, device=k.device)], 1)
        v = ember.cat([v, ember.zeros([bsz * num_heads, 1, head_dim], dtype=v.dtype, device=v.device)], 1)
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
        kpm = (
            key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
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

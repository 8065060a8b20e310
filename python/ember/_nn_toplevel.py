"""The functional forms PyTorch also exposes at its top level (torch.conv3d,
torch.dropout, torch.kl_div, torch.lstm_cell, ...), with the top level's own
signatures: losses take the reduction as an enum int, dropouts take (input, p,
train) and pooling's stride defaults to an empty list."""

from __future__ import annotations

import ember
from ember import _argcheck
from ember.nn import _functional_nn as _fnn
from ember.nn import functional as F

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "alpha_dropout",
    "alpha_dropout_",
    "avg_pool1d",
    "bilinear",
    "channel_shuffle",
    "conv3d",
    "conv_tbc",
    "conv_transpose1d",
    "conv_transpose3d",
    "affine_grid_generator",
    "cosine_embedding_loss",
    "cosine_similarity",
    "ctc_loss",
    "grid_sampler",
    "dropout",
    "dropout_",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "frobenius_norm",
    "gru_cell",
    "hardshrink",
    "hinge_embedding_loss",
    "instance_norm",
    "kl_div",
    "lstm_cell",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool3d",
    "native_channel_shuffle",
    "native_dropout",
    "native_norm",
    "norm_except_dim",
    "nuclear_norm",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "prelu",
    "rms_norm",
    "rnn_relu_cell",
    "rnn_tanh_cell",
    "rrelu",
    "rrelu_",
    "triplet_margin_loss",
    "lstm",
    "gru",
    "rnn_tanh",
    "rnn_relu",
    "embedding_bag",
]

_REDUCTION_NAMES = {0: "none", 1: "mean", 2: "sum"}


def _reduction_name(reduction):
    if reduction not in _REDUCTION_NAMES:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTION_NAMES[reduction]


# ---- convolution and pooling ------------------------------------------------------------------
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return F.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return F.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return F.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_tbc(input, weight, bias, pad=0):
    return F.conv_tbc(input, weight, bias, pad)


def _stride_or_none(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else stride


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride_or_none(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride_or_none(stride), padding, dilation, ceil_mode, True)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _stride_or_none(stride), padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    return F.avg_pool1d(input, kernel_size, _stride_or_none(stride), padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    return F.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """(values, indices), as the top-level form always returns both."""
    return F.adaptive_max_pool1d(input, output_size, True)


# ---- dropout ------------------------------------------------------------------------------------
def dropout(input, p, train):
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    return F.dropout(input, p, train, True)


def feature_dropout(input, p, train):
    _fnn._check_p(p)
    return _fnn._feature_dropout(input, p, train, False)


def feature_dropout_(input, p, train):
    _fnn._check_p(p)
    return _fnn._feature_dropout(input, p, train, True)


def alpha_dropout(input, p, train):
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return F.alpha_dropout(input, p, train, True)


def feature_alpha_dropout(input, p, train):
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return F.feature_alpha_dropout(input, p, train, True)


def native_dropout(input, p, train):
    """(output, keep mask); the mask is all True outside training."""
    if input.numel() == 0:  # PyTorch: the input itself and an empty mask of its dtype
        return input, ember.empty_like(input)
    if train is None or train:
        if p == 1:
            return input * ember.zeros([], dtype=input.dtype), ember.zeros_like(input, dtype=ember.bool)
        mask = ember.empty_like(input).bernoulli_(1 - p)
        scale = 1.0 / (1 - p) if p < 1 else 0.0
        return input * mask * scale, mask.to(ember.bool)
    return input.clone(), ember.ones_like(input, dtype=ember.bool)


# ---- activations and normalisation ------------------------------------------------------------
def prelu(input, weight):
    return F.prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu_(input, lower, upper, training)


def hardshrink(input, lambd=0.5):
    return F.hardshrink(input, lambd)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


def bilinear(input1, input2, weight, bias=None):
    return F.bilinear(input1, input2, weight, bias)


def pixel_shuffle(input, upscale_factor):
    return F.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return F.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    return F.channel_shuffle(input, groups)


def native_channel_shuffle(input, groups):
    return F.channel_shuffle(input, groups)


# ---- distances and losses ---------------------------------------------------------------------
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return F.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return F.pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2.0):
    return F.pdist(input, p)


# The top-level losses PyTorch binds with `int reduction=Mean` default to no
# reduction (0) when called from Python; F's functions reduce by default.
def kl_div(input, target, reduction=0, log_target=False):
    return F.kl_div(input, target, reduction=_reduction_name(reduction), log_target=log_target)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction_name(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    # The operator broadcasts its operands (the ranks are nn.functional's check
    # only); a reduction other than mean (1) or sum (2) leaves the loss as it is.
    from ember.nn._functional_losses import _reduce

    return _reduce((-target * (input1 - input2) + margin).clamp_min_(0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction_name(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction_name(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction_name(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    return F.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, _reduction_name(reduction), zero_infinity
    )


# ---- sampling grids -----------------------------------------------------------------------------
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sample with the modes as PyTorch's enum ints."""
    return F.grid_sample(input, grid, _INTERPOLATIONS[interpolation_mode], _PADDINGS[padding_mode], align_corners)


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, size, align_corners)


# ---- norms --------------------------------------------------------------------------------------
def frobenius_norm(input, dim=(), keepdim=False):
    dim = [dim] if isinstance(dim, int) else list(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    return ember.linalg.vector_norm(input, 2, dim if dim else None, keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(
                "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
                if input.dim() < 2
                else f"nuclear_norm: Expected a 2D tensor, but got a {input.dim()}D tensor instead."
            )
        dim = (-2, -1)
    elif isinstance(dim, int):
        dim = (dim, dim)  # one int for PyTorch's int[2]: used for both dims
    return ember.linalg.matrix_norm(input, "nuc", tuple(dim), keepdim)


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """As PyTorch, defined for sparse tensors only: dense input is refused."""
    raise NotImplementedError(
        "Could not run 'aten::native_norm' with arguments from the 'CPU' backend. "
        "'aten::native_norm' is only available for sparse tensors."
    )


def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm of v over every dimension but dim, shaped to broadcast against v (weight_norm's g)."""
    if dim == -1:
        return ember.linalg.vector_norm(v, pow)
    _argcheck.wrap_dim(dim, v.dim())
    dim = dim % v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    if not others:
        # Over no dimension: the norm of each element alone.
        return ember.linalg.vector_norm(v.unsqueeze(-1), pow, -1)
    return ember.linalg.vector_norm(v, pow, others, True)


def _weight_norm(v, g, dim=0):
    """v * (g / norm_except_dim(v, 2, dim)); one WeightNormInterfaceBackward0 node for dim 0
    or the last dim, where PyTorch runs its fused kernel."""
    from ember.nn.utils.weight_norm import _weight_norm as weight_norm

    return weight_norm(v, g, dim)


# ---- recurrent cells ----------------------------------------------------------------------------
def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    gi = F.linear(input, w_ih, b_ih)
    gh = F.linear(hx, w_hh, b_hh)
    return gi, gh


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return ember.tanh(gi + gh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return ember.relu(gi + gh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """(h', c') of one LSTM step; hx is (h, c); gates in PyTorch's order i, f, g, o."""
    h, c = hx
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, -1)
    c_next = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
    return ember.sigmoid(o) * ember.tanh(c_next), c_next


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' of one GRU step; gates in PyTorch's order r, z, n."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = ember.sigmoid(i_r + h_r)
    z = ember.sigmoid(i_z + h_z)
    n = ember.tanh(i_n + r * h_n)
    return (1 - z) * n + z * hx


# ---- whole-sequence recurrent layers -------------------------------------------------------------
def _run_layers(cell, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """Every layer and direction of a stacked recurrent net, step by step with cell.
    hx is a tuple of (layers * directions, batch, hidden) states; params are PyTorch's flat
    list: w_ih, w_hh (, b_ih, b_hh) per layer and direction."""
    directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != num_layers * directions * per:
        raise RuntimeError(f"Expected {num_layers * directions * per} parameters, got {len(params)}")
    if input.dim() != 3:
        # the top-level forms take batched input only (the modules add the batch dimension)
        raise IndexError(f"Dimension out of range: expected 3-D input, got {input.dim()}-D")
    x = input.transpose(0, 1) if batch_first else input
    states = list(hx)
    finals = [[] for _ in states]
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            k = (layer * directions + direction) * per
            weights = list(params[k : k + per]) + [None] * (4 - per)
            state = tuple(s[layer * directions + direction] for s in states)
            steps = range(x.shape[0] - 1, -1, -1) if direction else range(x.shape[0])
            seq = [None] * x.shape[0]
            for t in steps:
                state = cell(x[t], state, *weights)
                seq[t] = state[0]
            outputs.append(ember.stack(seq))
            for i, s in enumerate(state):
                finals[i].append(s)
        x = outputs[0] if directions == 1 else ember.cat(outputs, 2)
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    out = x.transpose(0, 1) if batch_first else x
    return out, [ember.stack(f) for f in finals]


def _as_pair(cell):
    return lambda x, state, *w: (cell(x, state[0], *w),)


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """(output, h_n, c_n) of a stacked LSTM, as torch.lstm."""
    out, (h, c) = _run_layers(
        lambda x, s, *w: lstm_cell(x, s, *w),
        input,
        tuple(hx),
        params,
        has_biases,
        num_layers,
        dropout,
        train,
        bidirectional,
        batch_first,
    )
    return out, h, c


def _single_state_layers(name, cell):
    """The multi-layer form of a cell with one hidden state (gru, rnn_tanh, rnn_relu)."""

    def run(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        out, (h,) = _run_layers(
            _as_pair(cell), input, (hx,), params, has_biases, num_layers, dropout, train, bidirectional, batch_first
        )
        return out, h

    run.__name__ = run.__qualname__ = name
    return run


gru = _single_state_layers("gru", gru_cell)
rnn_tanh = _single_state_layers("rnn_tanh", rnn_tanh_cell)
rnn_relu = _single_state_layers("rnn_relu", rnn_relu_cell)


# ---- embedding bags -----------------------------------------------------------------------------
_BAG_MODES = ("sum", "mean", "max")


def _bag_marks(n, starts, dtype):
    """The bag of each of n indices as PyTorch's CPU kernel numbers it: a bag starts at each offset and runs
    to the next one, so indices past the last offset of include_last_offset belong to the last bag."""
    marks = ember.zeros(n + 1, dtype=dtype, device=starts.device)
    if starts.numel():
        marks.index_add_(0, starts.long(), ember.ones(starts.numel(), dtype=dtype, device=starts.device))
        marks[0] -= 1
    return marks.cumsum(0, dtype=dtype)[:n]


def embedding_bag(
    weight,
    indices,
    offsets,
    scale_grad_by_freq=False,
    mode=0,
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """(output, offset2bag, bag_size, max_indices) as torch.embedding_bag: mode is 0 (sum), 1 (mean) or 2
    (max), a negative padding_idx means none; the three index tensors are PyTorch's CPU kernel's
    bookkeeping, which its backward reads."""
    if mode not in (0, 1, 2):
        raise RuntimeError(f"Unknown mode for embedding_bag_backward with mode = {mode}")
    pad = None if padding_idx is None or padding_idx < 0 else padding_idx
    output = F.embedding_bag(
        indices,
        weight,
        offsets,
        scale_grad_by_freq=scale_grad_by_freq,
        mode=_BAG_MODES[mode],
        sparse=sparse,
        per_sample_weights=per_sample_weights,
        include_last_offset=include_last_offset,
        padding_idx=pad,
    )
    dtype = indices.dtype
    kw = {"dtype": dtype, "device": indices.device}
    if indices.dim() == 2:
        indices, offsets = indices.reshape(-1), ember.arange(0, indices.numel(), indices.size(1), **kw)
    n = indices.numel()
    starts = offsets[:-1] if include_last_offset else offsets
    fast_sum = mode == 0 and pad is None and weight.dtype in (ember.float32, ember.float16, ember.bfloat16)
    offset2bag = ember.empty(0, **kw) if fast_sum else _bag_marks(n, starts, dtype)
    if mode == 0:
        zeros = ember.zeros(offsets.numel(), **kw)
        return output, offset2bag, zeros, zeros.clone()
    bags = starts.numel()
    ends = ember.cat([starts[1:], ember.tensor([n], **kw)]) if bags else starts
    bag_size = ends - starts
    if pad is not None and n:
        padded = (indices == pad).to(dtype)
        bag_size = bag_size - ember.zeros(bags, **kw).index_add_(0, offset2bag.long(), padded)
    if mode == 1:
        return output, offset2bag, bag_size, bag_size.clone()
    # mode max: the first index of each bag that holds the bag's maximum, per column
    dim = weight.size(1)
    max_indices = ember.zeros((bags, dim), **kw)
    bag = offset2bag.long()
    ends_out = offsets[1:] if include_last_offset else None
    keep = ember.ones(n, dtype=ember.bool, device=indices.device)
    if ends_out is not None and n:
        keep = ember.arange(n, device=indices.device) < int(offsets[-1])
    if pad is not None:
        keep = keep & (indices != pad)
    pos = keep.nonzero().squeeze(1)
    if pos.numel():
        rows = weight.detach().index_select(0, indices.long().index_select(0, pos))
        hit = rows == output.detach().index_select(0, bag.index_select(0, pos))
        first = ember.where(hit, pos.unsqueeze(1).expand(-1, dim), n)
        where = ember.full((bags, dim), n, dtype=ember.int64, device=indices.device)
        where = where.scatter_reduce(0, bag.index_select(0, pos).unsqueeze(1).expand(-1, dim), first, "amin")
        found = where < n
        picked = indices.long().index_select(0, where.clamp(max=max(n - 1, 0)).reshape(-1)).reshape(bags, dim)
        max_indices = ember.where(found, picked, 0).to(dtype)
    return output, offset2bag, bag_size, max_indices

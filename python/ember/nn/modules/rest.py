"""CTCLoss, FractionalMaxPool2d/3d, CrossMapLRN2d and AdaptiveLogSoftmaxWithLoss, as torch.nn."""

from __future__ import annotations

from collections import namedtuple

import ember
from ember.nn import functional as F
from ember.nn.modules.container import ModuleList, Sequential
from ember.nn.modules.linear import Linear
from ember.nn.modules.loss import _Loss
from ember.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss", "CTCLoss", "CrossMapLRN2d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


class CTCLoss(_Loss):
    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _FractionalMaxPoolNd(Module):
    _dims = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        dims = self._dims
        self.kernel_size = _ntuple(kernel_size, dims)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, dims) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, dims) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{type(self).__name__} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        pool = F.fractional_max_pool2d if self._dims == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _dims = 3


class CrossMapLRN2d(Module):
    """Local response normalisation across channels of 4-D input:
    x / (k + alpha/size * sum of x^2 over the channels within (size-1)//2 either side)^beta,
    the sum formed as PyTorch's running sum forms it."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(
                f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead."
            )
        reach = int((self.size - 1) / 2 + 1)  # PyTorch's pre_pad
        half = reach - 1
        squares = input * input
        channels = input.shape[1]
        first = squares.narrow(1, 0, 1)
        if half:
            pad = squares.new_zeros((squares.shape[0], half) + tuple(squares.shape[2:]))
            squares = ember.cat([pad, squares, pad], 1)
        total = squares.narrow(1, 0, channels)
        for shift in range(1, 2 * half + 1):
            total = total + squares.narrow(1, shift, channels)
        if channels > reach:
            # as PyTorch's running sum, channel 0 never leaves the window once it has passed
            keeps_first = (ember.arange(channels) >= reach).to(input.dtype).reshape(1, channels, 1, 1)
            total = total + first * keeps_first
        scale = total * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Softmax over many classes as a head (frequent classes plus one entry per tail
    cluster) and tail clusters of decreasing projection size."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None,
                 dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > (n_classes - 1)
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
                "where each value is between 1 and n_classes-1"
            )
        factory = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input, target):
        if target.dim() == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input.dim() != 2:
                raise RuntimeError(
                    f"1D target tensor expects 2D input tensors, but found inputs with size {input.size()}"
                )
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError(
                    f"0D target tensor expects 1D input tensors, but found inputs with size {input.size()}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target.dim() > 0
        x = input if batched else input.unsqueeze(0)
        target = target if batched else target.unsqueeze(0)
        batch = target.size(0)
        head_logprob = F.log_softmax(self.head(x), dim=1)
        in_shortlist = target < self.shortlist_size
        head_column = target.clone()
        cluster_part = x.new_zeros(batch)
        covered = int(in_shortlist.sum())
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            head_column = ember.where(mask, ember.full_like(head_column, self.shortlist_size + i), head_column)
            cluster_logprob = F.log_softmax(self.tail[i](x.index_select(0, rows)), dim=1)
            local = cluster_logprob.gather(1, (target.index_select(0, rows) - low).unsqueeze(1)).squeeze(1)
            cluster_part = cluster_part.index_add(0, rows, local)
            covered += rows.numel()
        if covered != batch:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        output = head_logprob.gather(1, head_column.unsqueeze(1)).squeeze(1) + cluster_part
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, x, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](x), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return ember.cat(parts, 1)

    def log_prob(self, input):
        """The log-probabilities of every class, (N, n_classes) or (n_classes,)."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row."""
        return self.log_prob(input).argmax(-1)

"""LinearCrossEntropyOptions: how F.linear_cross_entropy splits the batch into chunks."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import ember

__all__ = ["LinearCrossEntropyOptions"]

_POLICIES = ("auto", "accurate", "balanced", "compact")
_ACC_DTYPES = (ember.float16, ember.bfloat16, ember.float32, ember.float64)


class _AutoChoice(NamedTuple):
    acc_policy: str
    chunking_method: str


# What "auto" means per (device type, input dtype); other pairs take _AUTO_OTHER.
# On the CPU a 16-bit matmul is emulated, so the float32 policy is chosen there.
_AUTO_CHOICES = {
    ("cuda", ember.bfloat16): _AutoChoice("compact", "aspect_ratio:2"),
    ("cuda", ember.float16): _AutoChoice("compact", "aspect_ratio:2"),
    ("cpu", ember.bfloat16): _AutoChoice("accurate", "aspect_ratio"),
    ("cpu", ember.float16): _AutoChoice("accurate", "aspect_ratio"),
}
_AUTO_OTHER = _AutoChoice("compact", "aspect_ratio:2")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _aspect_ratio_rows(method: str, num_batches: int, in_features: int, num_classes: int) -> int:
    """Rows per chunk so that a chunk's logits take about the input's memory ("aspect_ratio:N" divides by N)."""
    divisor = int(method.split(":", 1)[1]) if ":" in method else 1
    target = _ceil_div(num_batches, _ceil_div(num_classes, in_features))
    return min((1 << (target - 1).bit_length()) // divisor, num_batches)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Opts F.linear_cross_entropy into its chunked form: the batch is processed
    ``batch_chunk_size`` rows at a time, so the full (N, C) logits never exist.

    ``acc_policy`` ("auto", "accurate", "balanced", "compact") trades precision
    for memory when ``acc_dtype`` is wider than the input; ``chunking_method``
    ("auto", "aspect_ratio", "aspect_ratio:N" or None) picks the chunk size
    from the shapes; ``allow_retain_graph`` keeps the precomputed gradients for
    a second backward of a "mean"/"sum" loss.
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: ember.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        method = self.chunking_method
        if method is not None and method != "auto":
            name, colon, divisor = method.partition(":")
            if not colon:
                divisor = "1"
            if name != "aspect_ratio" or not divisor.isdigit() or int(divisor) <= 0:
                raise ValueError(f"invalid chunking_method: {method!r}")
        size = self.batch_chunk_size
        if size is not None and not (isinstance(size, int) and size > 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, torch.float64}, "
                f"got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick automatically."
            )

    @staticmethod
    def _ceil_div(a: int, b: int) -> int:
        return _ceil_div(a, b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        """float32 for 16-bit inputs where a mixed-precision matmul exists (CPU; CUDA by capability), else None."""
        if device is None or dtype not in (ember.float16, ember.bfloat16):
            return None
        if device.type == "cpu":
            return ember.float32
        if device.type == "cuda":
            if not ember.cuda.is_available():
                return None
            major, _ = ember.cuda.get_device_capability(device)
            return ember.float32 if major >= (8 if dtype == ember.bfloat16 else 7) else None
        return None

    def _compute_batch_chunk_size(self, num_batches, in_features, num_classes, method=None) -> int:
        method = str(method if method is not None else self.chunking_method)
        if method.startswith("aspect_ratio"):
            return _aspect_ratio_rows(method, num_batches, in_features, num_classes)
        raise AssertionError(f"unhandled chunking_method: {method!r}")

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """These options with every "auto"/None resolved for one call."""
        policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None  # an explicit size wins over the automatic one
        if policy == "auto" or method == "auto":
            choice = _AUTO_CHOICES.get((device.type, dtype), _AUTO_OTHER) if device is not None else _AUTO_OTHER
            policy = choice.acc_policy if policy == "auto" else policy
            method = choice.chunking_method if method == "auto" else method
        rows = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is not None:
            rows = self._compute_batch_chunk_size(num_batches, in_features, num_classes, method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != rows:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give "
                    f"different chunk sizes ({self.batch_chunk_size} vs {rows}); pass only one."
                )
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            auto = self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto" else None
            acc_dtype = auto if auto is not None else dtype
        return dataclasses.replace(
            self, acc_policy=policy, chunking_method=method, batch_chunk_size=max(1, rows), acc_dtype=acc_dtype
        )

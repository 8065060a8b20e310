"""Variable-length sequences: PackedSequence and the pack / pad helpers, as torch.nn.utils.rnn.

Note [Packed layout]
A PackedSequence holds the time steps of a batch sorted by decreasing length,
one after the other: step t contributes the first batch_sizes[t] sequences.
Packing and padding are one index_select / index_copy_ with the row index of
every (t, b) pair that exists, so autograd comes from those ops.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

import ember
from ember._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


def copy_method_params(source_method):
    """A decorator that gives the decorated method ``source_method``'s
    parameters for type checkers; at run time the method is unchanged."""

    def keep(func):
        return func

    return keep


PackedSequence_ = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def bind(optional, fn):
    """fn(optional), or None when optional is None."""
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The data and batch sizes of a packed batch of sequences (Note [Packed layout])."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_init_args(data, batch_sizes, sorted_indices, unsorted_indices))

    def _with_data(self, data):
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def pin_memory(self):
        return type(self)(
            self.data.pin_memory(),
            self.batch_sizes,
            bind(self.sorted_indices, lambda t: t.pin_memory()),
            bind(self.unsorted_indices, lambda t: t.pin_memory()),
        )

    def to(self, *args, **kwargs):
        """Converts data's dtype or device (the indices follow the device); self when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        non_blocking = bool(kwargs.get("non_blocking", False))

        def move(t):
            return t.to(data.device, non_blocking=non_blocking)

        return type(self)(data, self.batch_sizes, bind(self.sorted_indices, move), bind(self.unsorted_indices, move))

    def cuda(self, *args, **kwargs):
        ex = ember.empty(0, dtype=self.data.dtype, device=self.data.device).cuda(*args, **kwargs)
        if ex.device == self.data.device:
            return self.to(*args, **kwargs)
        kwargs["device"] = ex.device
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        ex = ember.empty(0, dtype=self.data.dtype, device=self.data.device).cpu(*args, **kwargs)
        if ex.device == self.data.device:
            return self.to(*args, **kwargs)
        kwargs["device"] = ex.device
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=ember.double)

    def float(self):
        return self.to(dtype=ember.float)

    def half(self):
        return self.to(dtype=ember.half)

    def long(self):
        return self.to(dtype=ember.long)

    def int(self):
        return self.to(dtype=ember.int)

    def short(self):
        return self.to(dtype=ember.short)

    def char(self):
        return self.to(dtype=ember.int8)

    def byte(self):
        return self.to(dtype=ember.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _init_args(data, batch_sizes, sorted_indices, unsorted_indices):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                "manually. They should be instantiated by functions like pack_sequence and "
                "pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    """The inverse of a 1-D permutation tensor (None stays None)."""
    if permutation is None:
        return None
    output = ember.empty_like(permutation)
    output.scatter_(0, permutation, ember.arange(0, permutation.numel(), device=permutation.device))
    return output


def _batch_sizes_of(lengths):
    """batch_sizes[t] = how many of the decreasing lengths exceed t."""
    sizes, b = [], len(lengths)
    for t in range(lengths[0]):
        while lengths[b - 1] <= t:
            b -= 1
        sizes.append(b)
    return sizes


def _packed_rows(batch_sizes, stride_t, stride_b):
    """Row of every packed element in a padded tensor flattened over (time, batch)."""
    return [t * stride_t + b * stride_b for t, bs in enumerate(batch_sizes) for b in range(bs)]


def _pack_padded(input, lengths, batch_first):
    if lengths.dim() != 1:
        raise RuntimeError(
            f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D cpu Long tensor"
        )
    steps, batch = (input.size(1), input.size(0)) if batch_first else (input.size(0), input.size(1))
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    lens = lengths.tolist()
    if len(lens) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size={batch})"
        )
    if lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if any(lens[i] < lens[i + 1] for i in range(batch - 1)):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
            "if you do not need ONNX exportability."
        )
    if lens[0] > steps:
        raise RuntimeError(
            f"Expected the longest sequence to fit the input: lengths[0] is {lens[0]} but the input has {steps} steps"
        )
    sizes = _batch_sizes_of(lens)
    rows = _packed_rows(sizes, 1, steps) if batch_first else _packed_rows(sizes, batch, 1)
    flat = input.flatten(0, 1) if input.dim() > 1 else input
    data = flat.index_select(0, ember.tensor(rows, dtype=ember.int64, device=input.device))
    return data, ember.tensor(sizes, dtype=ember.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *)) of sequences of the given lengths."""
    if not isinstance(lengths, Tensor):
        lengths = ember.as_tensor(lengths, dtype=ember.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=ember.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = ember.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Pads a PackedSequence back to (T, B, *) (or (B, T, *)); returns it and the lengths."""
    sizes = sequence.batch_sizes.tolist()
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_len}"
            )
        max_len = total_length
    data = sequence.data
    batch = sizes[0]
    trailing = list(data.shape[1:])
    shape = [batch, max_len] if batch_first else [max_len, batch]
    padded = ember.full(shape + trailing, padding_value, dtype=data.dtype, device=data.device)
    rows = _packed_rows(sizes, 1, max_len) if batch_first else _packed_rows(sizes, batch, 1)
    padded.view([batch * max_len] + trailing).index_copy_(
        0, ember.tensor(rows, dtype=ember.int64, device=data.device), data
    )
    lengths = [sum(1 for bs in sizes if bs > b) for b in range(batch)]
    lengths = ember.tensor(lengths, dtype=ember.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences of shape (L_i, *) into (T, B, *) (or (B, T, *)), padding each to the longest."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            f"pad_sequence: Expected iterable for input sequences, but got arg of type: {type(sequences)}"
        )
    sequences = tuple(sequences)
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    max_len = max(s.size(0) for s in sequences)
    batch = len(sequences)
    trailing = list(first.shape[1:])
    shape = [batch, max_len] if batch_first else [max_len, batch]
    out = ember.full(shape + trailing, padding_value, dtype=first.dtype, device=first.device)
    for i, s in enumerate(sequences):
        n = s.size(0)
        start = 0 if padding_side == "right" else max_len - n
        target = out.select(0, i).narrow(0, start, n) if batch_first else out.narrow(0, start, n).select(1, i)
        target.copy_(s)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    idx = ember.arange(padded_sequences.shape[1], device=lengths.device)
    if len(padded_sequences) != len(lengths):
        raise ValueError(
            "zip() argument 2 is shorter than argument 1"
            if len(lengths) < len(padded_sequences)
            else "zip() argument 2 is longer than argument 1"
        )
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """pad_sequence followed by pack_padded_sequence."""
    lengths = ember.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

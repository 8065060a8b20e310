"""Tensor methods that change which memory a tensor views: resize_, resize_as_, set_ (in place, the
storage shared with other tensors), is_set_to, the deprecated out-of-place resize and resize_as; and
torch.from_file, a tensor over a memory-mapped file."""

from __future__ import annotations

import errno
import os
import warnings

from ember import _C
from ember._size import Size
from ember._warnings import user_stacklevel

__all__ = ["as_strided_", "from_file", "resize_as_", "slice_inverse"]
METHODS = ["is_set_to", "slice_inverse", "resize", "resize_", "resize_as", "resize_as_", "set_"]


def _ember():
    import ember

    return ember


def _sizes(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple, Size)):
        return [int(s) for s in size[0]]
    return [int(s) for s in size]


def _check_inplace(self):
    if self.requires_grad:
        if self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _strides_for(sizes, memory_format):
    ember = _ember()
    return ember.empty(sizes, device="meta", memory_format=memory_format).stride()


def resize_(self, *size, memory_format=None):
    """Resizes self in place: contiguous strides for the new shape (memory_format's when given), the storage
    grown when it is too small; the old contents stay where they were in memory."""
    sizes = _sizes(size)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if list(self.shape) == sizes and memory_format is None:
        return self
    strides = _strides_for(sizes, memory_format or _C.contiguous_format)
    _C._resize_tensor_(self, sizes, list(strides))
    return self


def resize_as_(self, the_template, memory_format=None):
    """self.resize_(the_template.shape)."""
    return resize_(self, the_template.shape, memory_format=memory_format)


def _cpp_name(dtype):
    ember = _ember()
    names = {
        ember.float32: "float",
        ember.float64: "double",
        ember.float16: "c10::Half",
        ember.bfloat16: "c10::BFloat16",
        ember.int64: "long int",
        ember.int32: "int",
        ember.int16: "short int",
        ember.int8: "signed char",
        ember.uint8: "unsigned char",
        ember.bool: "bool",
        ember.complex64: "c10::complex<float>",
        ember.complex128: "c10::complex<double>",
    }
    return names.get(dtype, str(dtype))


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Makes self view source: a tensor (its storage, offset, sizes and strides) or a storage (from
    storage_offset, with size and stride; the whole storage as one row by default); no source gives an
    empty storage."""
    ember = _ember()
    from ember.storage import TypedStorage, UntypedStorage

    _check_inplace(self)
    if source is None:
        source = ember.empty(0, dtype=self.dtype, device=self.device)
    if isinstance(source, ember.Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError(
                f"Could not set tensor of type {_cpp_name(source.dtype)} to a tensor of type {_cpp_name(self.dtype)}"
            )
        if size is None:
            storage_offset, size, stride = source.storage_offset(), list(source.shape), list(source.stride())
        base = source
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        if isinstance(source, TypedStorage):
            if source.dtype != self.dtype:
                raise RuntimeError(
                    f"Expected a Storage of type {self.dtype} or an UntypedStorage, but got type {source.dtype} "
                    "for argument 1 'storage'"
                )
            source = source._untyped_storage
        base = source._bytes
        if size is None:
            size = [source.nbytes() // self.element_size() - storage_offset]
    else:
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not {type(source).__name__}")
    size = [int(s) for s in size]
    if stride is None or len(stride) == 0:
        stride = list(_strides_for(size, _C.contiguous_format))
    extent = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(s > 0 for s in size) else 0
    needed = (storage_offset + extent) * self.element_size() if extent else 0
    if needed > base.untyped_storage().nbytes():
        # PyTorch grows the source's storage to hold the view
        _C._resize_tensor_(base, [needed // base.element_size() - base.storage_offset()], [1])
    _C._set_tensor_storage(self, base, int(storage_offset), size, [int(s) for s in stride])
    return self


def is_set_to(self, tensor):
    """True when self and tensor view the same memory the same way: one storage, offset, sizes and
    strides."""
    # The same storage object, not only the same address: two empty
    # storages both have address 0.
    return (
        self.untyped_storage()._cdata == tensor.untyped_storage()._cdata
        and self.untyped_storage().nbytes() == tensor.untyped_storage().nbytes()
        and self.storage_offset() == tensor.storage_offset()
        and self.shape == tensor.shape
        and self.stride() == tensor.stride()
    )


def as_strided_(input, size, stride, storage_offset=None):  # noqa: A002
    """torch.as_strided_: input.as_strided_ (input's sizes, strides and offset change, its storage stays)."""
    return input.as_strided_(size, stride, storage_offset)


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):  # noqa: A002
    """The inverse of src = base.slice(dim, start, end, step) where input is the slice: a view of input's
    memory with src's sizes, strides and offset (the base the slice was taken from)."""
    return input.as_strided(src.shape, src.stride(), src.storage_offset())


def _resize_message(sizes, numel, self):
    return (
        f"requested resize to {'x'.join(str(s) for s in sizes)} ({numel} elements in total), but the "
        f"given tensor has a size of {'x'.join(str(s) for s in self.shape)} ({self.numel()} elements). "
        "autograd's resize can only change the shape of a given tensor, while preserving the number of elements. "
    )


def resize(self, *size):
    """Deprecated: self viewed with a new shape of the same number of elements."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=user_stacklevel())
    # The sizes are the arguments themselves, multiplied as given, as in
    # PyTorch: a tuple is not unpacked (its "product" never matches), a
    # tensor compares elementwise.
    numel = 1
    for s in size:
        numel = numel * s
    if numel != self.numel():
        raise RuntimeError(_resize_message(size, numel, self))
    return self.contiguous().view(_sizes(size))


def resize_as(self, tensor):
    """Deprecated: self viewed with tensor's shape, of the same number of elements."""
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=user_stacklevel())
    sizes = list(tensor.shape)
    if tensor.numel() != self.numel():
        raise RuntimeError(_resize_message(sizes, tensor.numel(), self))
    return self.contiguous().view(sizes)


def from_file(
    filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False
):
    """A CPU tensor of size elements over a memory-mapped file: shared=True writes changes to the file (and
    grows it to the mapping's size), otherwise the mapping is private (copy on write)."""
    ember = _ember()
    import numpy as np

    dtype = ember.get_default_dtype() if dtype is None else dtype
    nbytes = int(size) * ember.empty(0, dtype=dtype).element_size()
    mode = "read-write" if shared else "read-only"
    try:
        fd = os.open(filename, os.O_RDWR | os.O_CREAT if shared else os.O_RDONLY)
    except OSError as e:
        code = e.errno or errno.EIO
        raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: {os.strerror(code)} ({code})") from None
    try:
        file_size = os.fstat(fd).st_size
        if file_size < nbytes:
            if not shared:
                raise RuntimeError(
                    f"file <{filename}> size <{file_size}> is smaller than the required mapping size <{nbytes}>"
                )
            os.ftruncate(fd, nbytes)
    finally:
        os.close(fd)
    if nbytes == 0:
        t = ember.empty(0, dtype=dtype)
    else:
        mapped = np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c", shape=(nbytes,))
        t = ember.from_numpy(mapped).view(dtype)
    return t.requires_grad_(requires_grad)

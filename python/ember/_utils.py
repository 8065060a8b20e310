"""Rebuild functions for unpickling tensors (what torch._utils holds).

Checkpoints name torch's functions (torch._utils._rebuild_tensor_v2, ...);
ember.serialization maps those names to the functions here."""

from __future__ import annotations

from collections import OrderedDict

from ember import _C


def _rebuild_tensor(storage, storage_offset, size, stride):
    # storage: a TypedStorage (its dtype gives the element type)
    return storage._untyped_storage._tensor(
        storage.dtype, storage_offset, tuple(size), tuple(stride)
    )


def _rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if metadata:
        set_tensor_metadata(t, metadata)
    if requires_grad:
        t.requires_grad_(True)
    # backward_hooks: always an empty OrderedDict in files (hooks are not saved)
    return t


def get_tensor_metadata(t):
    """The conjugate and negative bits, as PyTorch saves them beside a tensor."""
    metadata = {}
    if t.is_conj():
        metadata["conj"] = True
    if t.is_neg():
        metadata["neg"] = True
    return metadata


def set_tensor_metadata(t, metadata):
    t._set_conj(bool(metadata.get("conj", False)))
    t._set_neg(bool(metadata.get("neg", False)))


def _rebuild_tensor_v3(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
):
    from ember.storage import TypedStorage

    if isinstance(storage, TypedStorage):  # an untyped storage loads as bytes
        storage = storage._untyped_storage
    return _rebuild_tensor_v2(
        TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True),
        storage_offset,
        size,
        stride,
        requires_grad,
        backward_hooks,
        metadata,
    )


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    import ember

    return ember.empty_strided(size, stride, dtype=dtype, device="meta", requires_grad=requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from ember.nn import Parameter

    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if type(ret) is not new_type:
        ret = new_type._make_subclass(new_type, ret, ret.requires_grad)
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None and getattr(setstate, "__qualname__", "").split(".")[0] not in (
        "object",
        "Tensor",
    ):
        ret.__setstate__(state)
    else:
        ret = _set_obj_state(ret, state)
    return ret


def _get_obj_state(obj):
    """The Python-level state of a tensor (its __dict__, plus slots), as
    PyTorch saves it next to the tensor's data."""
    import copyreg

    d = getattr(obj, "__dict__", None) or {}
    slots = copyreg._slotnames(type(obj))
    if slots:
        return (d, {name: getattr(obj, name) for name in slots if hasattr(obj, name)})
    return d


def _set_obj_state(obj, state):
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    if dict_state:
        for k, v in dict_state.items():
            setattr(obj, k, v)
    if slots_state:
        for k, v in slots_state.items():
            setattr(obj, k, v)
    return obj


# ---- plain pickling (pickle.dumps, multiprocessing) --------------------------------


def _rebuild_tensor_from_bytes(
    data, dtype_name, storage_offset, size, stride, requires_grad, device="cpu", metadata=None
):
    import ember
    from ember.storage import TypedStorage, UntypedStorage

    untyped = UntypedStorage.from_buffer(data)
    if device != "cpu":
        untyped = untyped.to(device=device)
    storage = TypedStorage(wrap_storage=untyped, dtype=getattr(ember, dtype_name), _internal=True)
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, OrderedDict(), metadata)


def _reduce_tensor(t):
    """Tensor.__reduce_ex__: the storage's bytes plus the view geometry; a
    subclass or Python attributes go through _rebuild_from_type_v2."""
    from ember import Tensor

    state = _get_obj_state(t)
    if type(t) is Tensor and not state:
        raw = _C._storage_bytes(t)  # the whole storage: offset and strides refer to it
        if raw.device.type != "cpu":
            raw = raw.to("cpu")
        data = bytes(raw.numpy())
        return (
            _rebuild_tensor_from_bytes,
            # the dtype by name: pickling a dtype object makes pickle search every module for it
            (
                data,
                str(t.dtype).split(".")[1],
                t.storage_offset(),
                tuple(t.shape),
                t.stride(),
                t.requires_grad,
                str(t.device),
                get_tensor_metadata(t),
            ),
        )
    plain = t.detach()
    if t.requires_grad:
        plain.requires_grad_(True)
    return (_rebuild_from_type_v2, (_identity, type(t), (plain,), state))


def _identity(x):
    return x


def is_compiling() -> bool:
    """Deprecated spelling of ember.compiler.is_compiling."""
    import warnings

    from ember._warnings import user_stacklevel

    warnings.warn(
        "`torch._utils.is_compiling` is deprecated. Use `torch.compiler.is_compiling` instead.",
        stacklevel=user_stacklevel(),
    )
    import ember

    return ember.compiler.is_compiling()


def _get_device_index(device, optional: bool = False, allow_cpu: bool = False) -> int:
    """The index of an accelerator device given as an int, a string or a
    device; None (or a device without an index) means the current device of
    its type when `optional`; a CPU device is -1 when `allow_cpu`."""
    import ember

    if isinstance(device, str):
        device = ember.device(device)
    index = None
    if isinstance(device, ember.device):
        if not allow_cpu and device.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {device}")
        index = -1 if device.type == "cpu" else device.index
    elif isinstance(device, int):
        index = device
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        index = ember.cuda.current_device() if ember.cuda.is_available() else None
    return index

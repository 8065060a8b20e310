"""Activation checkpointing (torch.utils.checkpoint): run a piece of the
model without keeping its intermediate tensors, and run it again during
backward to get them. The RNG state is restored for the second run, so
dropout draws the same masks.

use_reentrant=True runs the piece without a graph and records one node
(CheckpointFunctionBackward) that runs it again and backpropagates through
it. use_reentrant=False records the usual graph but drops what its nodes
save (saved_tensors_hooks), recomputing it the first time backward needs it:
it works with autograd.grad, keyword arguments and inputs that need no
gradient, as PyTorch's."""

from __future__ import annotations

import contextlib
import enum
import warnings
from collections import defaultdict

import ember
from ember.autograd.function import Function
from ember.overrides import TorchFunctionMode

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "get_device_states",
    "set_device_states",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "DefaultDeviceType",
    "set_checkpoint_debug_enabled",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
    "SAC_IGNORED_OPS",
    "GraphExecGroup",
]


class CheckpointError(RuntimeError):
    pass


def detach_variable(inputs):
    if isinstance(inputs, tuple):
        out = []
        for inp in inputs:
            if not isinstance(inp, ember.Tensor):
                out.append(inp)
                continue
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            out.append(x)
        return tuple(out)
    raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, ember.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def get_device_states(*args):
    """No accelerator state to save on a CPU-only build: ([], [])."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    return None


class DefaultDeviceType:
    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


_early_stop = True
_debug = False


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    global _early_stop
    prev, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    global _debug
    prev, _debug = _debug, enabled
    try:
        yield
    finally:
        _debug = prev


def _autocast_states():
    """The autocast settings of the CPU and CUDA at the forward run, which the
    recomputation runs under again (as PyTorch's checkpoint)."""
    return [
        (device, {"enabled": ember.is_autocast_enabled(device), "dtype": ember.get_autocast_dtype(device),
                  "cache_enabled": ember.is_autocast_cache_enabled()})
        for device in ("cuda", "cpu")
    ]  # fmt: skip


@contextlib.contextmanager
def _autocast_as(states):
    with contextlib.ExitStack() as stack:
        for device, kwargs in states:
            stack.enter_context(ember.amp.autocast(device, **kwargs))
        yield


class CheckpointFunction(Function):
    """Runs run_function without a graph; backward runs it again with one."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.autocast_states = _autocast_states()
        if preserve_rng_state:
            ctx.fwd_cpu_state = ember.get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, ember.Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with ember.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with ember.random.fork_rng(devices=[], enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                ember.set_rng_state(ctx.fwd_cpu_state)
            with ember.enable_grad(), _autocast_as(ctx.autocast_states):
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, ember.Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, args) if isinstance(o, ember.Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        ember.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(inp.grad if isinstance(inp, ember.Tensor) else None for inp in detached)
        return (None, None) + grads


class _SavedInputs(ember.autograd.Function):
    """Saves the tensor arguments of a checkpointed call as autograd saves
    tensors (through the saved-tensor hooks active around the call, which
    PyTorch's checkpoint also applies to its inputs); the recomputation
    reads them back through its node's saved_tensors."""

    @staticmethod
    def forward(ctx, anchor, *tensors):
        ctx.save_for_backward(*tensors)
        return ember.empty((0,))


def _saved_inputs(args):
    """A function returning args, its tensors restored from their saves."""
    where = [i for i, a in enumerate(args) if isinstance(a, ember.Tensor)]
    if not ember.is_grad_enabled() or not where:
        return lambda: args
    # the anchor requires grad, so the node (holding the saves) is recorded
    node = _SavedInputs.apply(ember.empty((0,), requires_grad=True), *(args[i] for i in where)).grad_fn

    def restore():
        restored = list(args)
        for i, t in zip(where, node.saved_tensors):
            restored[i] = t
        return restored

    return restore


def _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs, context_fn=noop_context_fn):
    """Runs function with the graph recorded but its saved tensors dropped
    (saved_tensors_hooks); the first time backward needs one, function runs
    again (same RNG state) and the recomputed tensors are handed out in the
    order they were saved. context_fn's first context wraps the forward run,
    its second the recomputation; with selective checkpointing the tensors
    saved by the nodes of operators whose outputs the policy keeps are kept
    too, and those operators are not run again."""
    forward_ctx, recompute_ctx = context_fn()
    selective = forward_ctx if isinstance(forward_ctx, _CachingMode) else None
    rng_state = ember.get_rng_state() if preserve_rng_state else None
    autocast_states = _autocast_states()
    count = [0]
    kept = {} if selective is None else selective.kept_saves
    # One recomputation per backward call (graph task), or per GraphExecGroup:
    # key -> (recomputed tensors, forward save index -> position, indices unpacked)
    frames = {}
    inputs = _saved_inputs(args)

    def pack(tensor):
        count[0] += 1
        if selective is not None:
            selective.note_save(count[0] - 1, tensor)
        return count[0] - 1

    def recompute():
        recomputed = []

        def keep(t):
            recomputed.append(t)
            return len(recomputed) - 1

        with ember.random.fork_rng(devices=[], enabled=preserve_rng_state):
            if rng_state is not None:
                ember.set_rng_state(rng_state)
            with (
                ember.enable_grad(),
                _autocast_as(autocast_states),
                recompute_ctx,
                ember.autograd.graph.saved_tensors_hooks(keep, recomputed.__getitem__),
            ):
                function(*inputs(), **kwargs)
        slots = {i: n for n, i in enumerate(i for i in range(count[0]) if i not in kept)}
        return recomputed, slots, set()

    def unpack(index):
        if index in kept:
            return kept[index]
        group = GraphExecGroup._get_current_group()
        key = group if group is not None else ("task", ember._C._current_graph_task_id())
        if key not in frames:
            frames[key] = recompute()
        recomputed, slots, unpacked = frames[key]
        if group is not None and index in unpacked:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                "Performing two backward calls that overlap (i.e. require the same saved activation in order to "
                "compute gradients) is not allowed while under the torch.utils.checkpoint.GraphExecGroup context. "
                "If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please "
                "open an issue with details on your use case."
            )
        position = slots.get(index, len(recomputed))
        if position >= len(recomputed):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {count[0] - len(kept)}\n"
                f"Number of tensors saved during recomputation: {len(recomputed)}"
            )
        unpacked.add(index)
        if group is None and len(unpacked) == len(slots):
            del frames[key]  # every recomputed tensor handed out: the next backward call recomputes
        return recomputed[position]

    with forward_ctx, ember.autograd.graph.saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


_exec_group = None


class GraphExecGroup:
    """Backward calls made inside one instance share the recomputation of
    the (non-reentrant) checkpointed regions they reach: each region runs
    again at most once, where otherwise every backward call recomputes it.
    The calls must not need the same saved tensor twice."""

    def __enter__(self):
        global _exec_group
        if _exec_group is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {_exec_group}")
        _exec_group = self
        return self

    def __exit__(self, *args):
        global _exec_group
        _exec_group = None

    @classmethod
    def _get_current_group(cls):
        return _exec_group


def checkpoint(
    function,
    *args,
    use_reentrant=None,
    context_fn=noop_context_fn,
    determinism_check="default",
    debug=False,
    preserve_rng_state=True,
    **kwargs,
):
    """function(*args, **kwargs), recomputed during backward instead of keeping its activations."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs, context_fn)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a sequence of modules in `segments` checkpointed chunks (the last one kept)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
            "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
            "variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    if isinstance(functions, ember.nn.Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end, functions), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ---- selective activation checkpointing ----------------------------------------------------------


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an operator's output: save it
    in the forward (not recomputed) or recompute it in the backward. MUST_*
    and PREFER_* act alike here (PREFER_* may be overridden by a compiler)."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVING = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)


class SelectiveCheckpointContext:
    """The first argument of a policy function: whether the call is the
    recomputation, and the operator's output."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


_T = ember.Tensor
# Metadata queries: never handed to the policy, never cached.
SAC_IGNORED_OPS = {_T.size, _T.dim, _T.stride, _T.storage_offset, _T.numel, _T.is_contiguous, _T.detach}


def _ignored(func):
    # property reads (x.shape, x.dtype, ...) reach the mode as a descriptor's __get__
    return func in SAC_IGNORED_OPS or type(func).__name__ == "method-wrapper"


def _map_leaves(fn, out, kind):
    if isinstance(out, kind):
        return fn(out)
    if isinstance(out, (tuple, list)):
        return type(out)(_map_leaves(fn, o, kind) for o in out)
    return out


class _Cached:
    """An output kept by the forward: its value (detached), whether it
    required grad, and its version to detect a later in-place change."""

    def __init__(self, tensor):
        self.value = tensor.detach()
        self.requires_grad = tensor.requires_grad
        self.version = tensor._version

    def get(self, allow_mutation):
        if not allow_mutation and self.value._version != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
        value = self.value.detach()
        if not self.requires_grad:
            return value
        # requires grad as the original did, so the nodes after it record (and save) as in the
        # forward; a copy, since a leaf that requires grad cannot be modified in place
        return value.requires_grad_().clone()


_RECOMPUTE = object()
_SAC_MISMATCH = (
    "This can happen if the operations in the checkpointed region are nondeterministic or depend on global "
    "state that changed between forward and backward."
)


class _CachingMode(TorchFunctionMode):
    """The forward of a selectively checkpointed region: every operator's
    output the policy saves is cached, with what its node saved."""

    def __init__(self, policy_fn, storage):
        super().__init__()
        self.policy_fn = policy_fn
        self.storage = storage
        self.calls = defaultdict(int)
        self.kept_saves = {}
        self._pending = None

    def note_save(self, index, tensor):
        if self._pending is not None:
            self._pending.append((index, tensor))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _ignored(func):
            return func(*args, **kwargs)
        outer, self._pending = self._pending, []
        try:
            out = func(*args, **kwargs)
            saves = self._pending
        finally:
            self._pending = outer
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out), func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        index = self.calls[func]
        self.calls[func] += 1
        if policy in _SAVING:
            self.storage[func][index] = _map_leaves(_Cached, out, ember.Tensor)
            self.kept_saves.update(saves)
        else:
            self.storage[func][index] = _RECOMPUTE
            if outer is not None:
                outer.extend(saves)
        return out


class _CachedMode(TorchFunctionMode):
    """The recomputation: operators whose output was cached return it
    instead of running again."""

    def __init__(self, storage, allow_cache_entry_mutation):
        super().__init__()
        self.storage = storage
        self.allow_mutation = allow_cache_entry_mutation
        self.calls = defaultdict(int)

    def __enter__(self):
        self.calls.clear()  # each recomputation (one per backward call) replays the calls from the start
        return super().__enter__()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _ignored(func):
            return func(*args, **kwargs)
        index = self.calls[func]
        self.calls[func] += 1
        entries = self.storage.get(func)
        if entries is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. {_SAC_MISMATCH}")
        if index not in entries:
            raise RuntimeError(
                f"{func} invocation index {index} encountered during backward but not found in storage. {_SAC_MISMATCH}"
            )
        entry = entries[index]
        if entry is _RECOMPUTE:
            return func(*args, **kwargs)
        return _map_leaves(lambda c: c.get(self.allow_mutation), entry, _Cached)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recomputation) contexts for checkpoint(..., context_fn=...)
    that save the outputs of the operators a policy picks and recompute the
    rest. policy_fn(ctx, op, *args, **kwargs) returns a CheckpointPolicy (or a
    bool, True for MUST_SAVE); a list of operators saves exactly those. The
    operators are the Ember functions and Tensor methods the region calls
    (ember.matmul, ember.nn.functional.linear, Tensor.mul, ...)."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not callable(op):
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. ")
        ops = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE

    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = defaultdict(dict)
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)

"""DistributedDataParallel: one model replica per process, gradients averaged
across the processes while backward runs.

Note [DDP gradient buckets]
Parameters are packed into buckets in reverse registration order (roughly the
order backward produces their gradients), split by dtype, the first bucket
capped at 1 MiB and the others at bucket_cap_mb. A hook after each
parameter's gradient accumulation copies the gradient, times 1/world_size,
into its bucket; a full bucket is all-reduced (SUM) asynchronously, buckets
always started in index order so every rank issues the same sequence. When
the last bucket has started, the hook waits for all of them and writes the
averaged gradients back into .grad.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import ember
import ember.distributed as dist
from ember.nn.modules.module import Module

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25
_DEFAULT_FIRST_BUCKET_BYTES = 1 * _MB


class _Bucket:
    def __init__(self, params, dtype):
        self.params = params
        self.offsets = []
        total = 0
        for p in params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = ember.zeros(total, dtype=dtype)
        self.pending = len(params)
        self.work = None


def _tensors_in(obj):
    if isinstance(obj, ember.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors_in(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors_in(x)


def _reached_variables(outputs):
    """The ids of the leaf tensors the outputs' autograd graphs reach."""
    seen, reached = set(), set()
    visited = []  # keeps the node objects alive, so that their ids stay unique
    stack = [t.grad_fn for t in _tensors_in(outputs) if t.grad_fn is not None]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        visited.append(fn)
        variable = getattr(fn, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        stack.extend(f for f, _ in fn.next_functions)
    return reached


class DistributedDataParallel(Module):
    """Wraps a module so that backward averages its gradients over the group."""

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim=0,
        broadcast_buffers=None,
        init_sync=True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters=False,
        check_reduction=False,
        gradient_as_bucket_view=False,
        static_graph=False,
        delay_all_reduce_named_params=None,
        param_to_hook_all_reduce=None,
        mixed_precision=None,
        device_mesh=None,
        skip_all_reduce_unused_params=False,
        bucket_cap_mb_list=None,
        batched_grad_copy=False,
        forward_sync_buffers=None,
    ):
        super().__init__()
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter that requires a "
                "gradient."
            )
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        self.process_group = dist._get_default_group() if process_group is None else process_group
        self.module = module
        self.dim = dim
        self.device_ids = None
        self.output_device = None
        self.device = params[0].device
        if broadcast_buffers is not None:
            if forward_sync_buffers is not None:
                warnings.warn(
                    "Both `broadcast_buffers` and `forward_sync_buffers` were specified. `broadcast_buffers` is "
                    "deprecated and its value is ignored when `forward_sync_buffers` is provided.",
                    FutureWarning,
                    stacklevel=2,
                )
            else:
                warnings.warn(
                    "`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: unlike "
                    "`broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at init. If you "
                    "rely on buffers NOT being synced at init (e.g. rank-local buffers), keep using "
                    "`broadcast_buffers=False` until `init_sync_buffers` is available.",
                    FutureWarning,
                    stacklevel=2,
                )
        if forward_sync_buffers is not None:
            self.forward_sync_buffers = forward_sync_buffers
            init_sync_buffers = True
        else:
            self.forward_sync_buffers = True if broadcast_buffers is None else broadcast_buffers
            init_sync_buffers = self.forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.broadcast_bucket_size = int(250 * _MB)
        cap_mb = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * _MB)
        first_cap = _DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        self._params = params
        self._world = dist.get_world_size(self.process_group)
        if init_sync:
            states = [p.detach() for p in module.parameters()]
            if init_sync_buffers:
                states += [b for b in module.buffers()]
            self._broadcast_coalesced(states)
        self._buckets = self._assign_buckets(params, first_cap, self.bucket_bytes_cap)
        self._slot = {}
        for bi, bucket in enumerate(self._buckets):
            for pi, p in enumerate(bucket.params):
                self._slot[id(p)] = (bi, pi)
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]
        self._reset_reduction()
        self._expect_reduction = False

    # ---- set-up ---------------------------------------------------------------

    def _broadcast_coalesced(self, tensors):
        """Rank 0's values of the tensors, one broadcast per dtype."""
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with ember.no_grad():
            for group in by_dtype.values():
                flat = ember.cat([t.reshape(-1) for t in group])
                dist.broadcast(flat, src=dist.get_global_rank(self.process_group, 0), group=self.process_group)
                offset = 0
                for t in group:
                    t.copy_(flat[offset : offset + t.numel()].view(t.shape))
                    offset += t.numel()

    @staticmethod
    def _assign_buckets(params, first_cap, cap):
        buckets, open_ = [], {}
        for p in reversed(params):
            entry = open_.setdefault(p.dtype, [[], 0])
            entry[0].append(p)
            entry[1] += p.numel() * p.element_size()
            limit = first_cap if not buckets else cap
            if entry[1] >= limit:
                buckets.append(_Bucket(entry[0], p.dtype))
                del open_[p.dtype]
        for dtype, (ps, _) in open_.items():
            buckets.append(_Bucket(ps, dtype))
        return buckets

    # ---- the reduction ------------------------------------------------------------

    def _reset_reduction(self):
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._next_bucket = 0
        self._unused = []
        self._marked_unused = False
        self._used = set()

    def _grad_ready(self, param):
        if not self.require_backward_grad_sync:
            return
        if not self._marked_unused:
            self._marked_unused = True
            for p in self._unused:
                self._mark_ready(p, None)
        self._used.add(id(param))
        self._mark_ready(param, param.grad)

    def _mark_ready(self, param, grad):
        bi, pi = self._slot[id(param)]
        bucket = self._buckets[bi]
        view = bucket.buffer[bucket.offsets[pi] : bucket.offsets[pi] + param.numel()]
        with ember.no_grad():
            if grad is None:
                view.zero_()
            else:
                if grad.data_ptr() != view.data_ptr():
                    view.copy_(grad.reshape(-1))
                view.mul_(1.0 / self._world)
        bucket.pending -= 1
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            b = self._buckets[self._next_bucket]
            b.work = dist.all_reduce(b.buffer, group=self.process_group, async_op=True)
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finalize()

    def _finalize(self):
        used_anywhere = None
        if self.find_unused_parameters:
            flags = ember.tensor([1 if id(p) in self._used else 0 for p in self._params], dtype=ember.int32)
            dist.all_reduce(flags, group=self.process_group)
            used_anywhere = {id(p) for p, f in zip(self._params, flags.tolist()) if f}
        with ember.no_grad():
            for bucket in self._buckets:
                bucket.work.wait()
                for p, offset in zip(bucket.params, bucket.offsets):
                    if used_anywhere is not None and id(p) not in used_anywhere:
                        continue
                    reduced = bucket.buffer[offset : offset + p.numel()].view(p.shape)
                    if self.gradient_as_bucket_view:
                        # .grad is the bucket's memory from now on; the next
                        # backward accumulates into it in place.
                        if p.grad is None or p.grad.data_ptr() != reduced.data_ptr():
                            p.grad = reduced
                    elif p.grad is None:
                        p.grad = reduced.clone()
                    else:
                        p.grad.copy_(reduced)
        self._expect_reduction = False
        self._reset_reduction()

    # ---- forward -------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        if self._expect_reduction and ember.is_grad_enabled():
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`."
            )
        if self.forward_sync_buffers and self._world > 1:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast_coalesced(buffers)
        self._reset_reduction()
        outputs = self.module(*inputs, **kwargs)
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self._expect_reduction = not self.find_unused_parameters
            if self.find_unused_parameters:
                reached = _reached_variables(outputs)
                self._unused = [p for p in self._params if id(p) not in reached]
                self._expect_reduction = len(self._unused) < len(self._params)
        else:
            self._expect_reduction = False
        return outputs

    @contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside the context; the next synced backward averages them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    @property
    def broadcast_buffers(self):
        return self.forward_sync_buffers

    @broadcast_buffers.setter
    def broadcast_buffers(self, value):
        self.forward_sync_buffers = value

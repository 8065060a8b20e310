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

import inspect
import warnings
from contextlib import contextmanager

import ember
import ember.distributed as dist
from ember.distributed.algorithms.join import Join, Joinable, JoinHook
from ember.futures import Future
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
        self.work = None  # a Work, or the Future a communication hook returned

    def wait(self):
        """The reduced bucket, copied into buffer when a hook returned another tensor."""
        if isinstance(self.work, Future):
            result = self.work.wait()
            if not isinstance(result, ember.Tensor):
                raise RuntimeError("Communication hook's Future must hold a tensor")
            if result.data_ptr() != self.buffer.data_ptr():
                with ember.no_grad():
                    self.buffer.copy_(result.reshape(-1))
        else:
            self.work.wait()


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


class _DDPJoinHook(JoinHook):
    """On a joined rank, the collectives a training rank's iteration issues,
    with zeros (Note [Join protocol])."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        self.ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self):
        ddp = self.ddp
        if ddp._syncs_buffers():
            ddp._broadcast_coalesced(list(ddp.module.buffers()), ddp._common_rank(False))
        flag = ember.zeros(1)
        dist.all_reduce(flag, group=ddp.process_group)
        should_sync = flag.item() != 0
        ddp.require_forward_param_sync = should_sync
        if not should_sync:
            return
        ddp._rebuild_buckets()
        # Zeros in buffers of their own: this rank's gradients stay as they are.
        real = [b.buffer for b in ddp._buckets]
        for b in ddp._buckets:
            b.buffer = ember.zeros_like(b.buffer)
        try:
            for index in range(len(ddp._buckets)):
                ddp._start_bucket(index)
            if ddp._detects_unused():
                flags = ember.zeros(len(ddp._params), dtype=ember.int32)
                dist.all_reduce(flags, group=ddp.process_group)
            for b in ddp._buckets:
                b.wait()
        finally:
            for b, buffer in zip(ddp._buckets, real):
                b.buffer = buffer
            ddp._reset_reduction()

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        source = ddp._common_rank(is_last_joiner)
        states = [p.detach() for p in ddp.module.parameters()]
        if ddp.forward_sync_buffers:
            states += list(ddp.module.buffers())
        ddp._broadcast_coalesced(states, source)


class DistributedDataParallel(Module, Joinable):
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
        Joinable.__init__(self)
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
        self._first_cap = first_cap
        # Note [DDP bucket rebuild]: the first iteration reduces one bucket per
        # dtype; its backward records the order gradients become ready, and
        # the next forward rebuilds capped buckets in that order. With
        # find_unused_parameters (and no static graph) the capped buckets
        # are built at once, from the registration order, and kept.
        self._ready_order = []
        self._rebuild = "record"
        if find_unused_parameters and not static_graph:
            self._rebuild = None
            self._set_buckets(list(reversed(self._assign_buckets(params, first_cap, self.bucket_bytes_cap))))
        else:
            self._set_buckets(self._assign_buckets(params, float("inf"), float("inf")))
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]
        self._comm_hook = None
        self._comm_hook_state = None
        self._divide_by_initial_world_size = True
        self._reset_reduction()
        self._expect_reduction = False

    # ---- set-up ---------------------------------------------------------------

    def _broadcast_coalesced(self, tensors, group_src=0):
        """Group rank group_src's values of the tensors, one broadcast per dtype."""
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with ember.no_grad():
            for group in by_dtype.values():
                flat = ember.cat([t.reshape(-1) for t in group])
                dist.broadcast(flat, src=dist.get_global_rank(self.process_group, group_src), group=self.process_group)
                offset = 0
                for t in group:
                    t.copy_(flat[offset : offset + t.numel()].view(t.shape))
                    offset += t.numel()

    def _set_buckets(self, buckets):
        self._buckets = buckets
        self._slot = {}
        for bi, bucket in enumerate(buckets):
            for pi, p in enumerate(bucket.params):
                self._slot[id(p)] = (bi, pi)

    def _rebuild_buckets(self):
        """Capped buckets in the order the first iteration's gradients became ready (Note [DDP bucket rebuild])."""
        if self._rebuild != "ready":
            return
        self._rebuild = None
        seen = {id(p) for p in self._ready_order}
        order = self._ready_order + [p for p in reversed(self._params) if id(p) not in seen]
        self._set_buckets(self._assign_buckets(order, self._first_cap, self.bucket_bytes_cap))

    @staticmethod
    def _assign_buckets(params, first_cap, cap):
        """Buckets of params in the given order, per dtype, each closed once it reaches its cap in bytes."""
        buckets, open_ = [], {}
        for p in params:
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
        if self._rebuild == "record":
            self._ready_order.append(param)
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
                if self._comm_hook is None:
                    view.mul_(1.0 / self._world)
        bucket.pending -= 1
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._start_bucket(self._next_bucket)
        if self._next_bucket == len(self._buckets):
            self._finalize()

    def _start_bucket(self, index):
        """Starts bucket index's reduction: an all_reduce, or the communication hook."""
        b = self._buckets[index]
        if self._comm_hook is None:
            b.work = dist.all_reduce(b.buffer, group=self.process_group, async_op=True)
        else:
            grad_bucket = dist.GradBucket(index, b.buffer, b.params, b.offsets, index == len(self._buckets) - 1)
            with ember.no_grad():
                b.work = self._comm_hook(self._comm_hook_state, grad_bucket)
            if not isinstance(b.work, Future):
                raise RuntimeError(
                    "Communication hook: return annotation should be torch.futures.Future[torch.Tensor]."
                )
        self._next_bucket = index + 1

    def _detects_unused(self):
        return self.find_unused_parameters or self.static_graph

    def _finalize(self):
        used_anywhere = None
        if self._detects_unused():
            flags = ember.tensor([1 if id(p) in self._used else 0 for p in self._params], dtype=ember.int32)
            dist.all_reduce(flags, group=self.process_group)
            used_anywhere = {id(p) for p, f in zip(self._params, flags.tolist()) if f}
        with ember.no_grad():
            for bucket in self._buckets:
                bucket.wait()
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
        if self._rebuild == "record":
            self._rebuild = "ready"
        self._reset_reduction()

    # ---- forward -------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        if self._expect_reduction and ember.is_grad_enabled():
            missing = " ".join(str(i) for i, p in enumerate(self._params) if id(p) not in self._used)
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs "
                "participate in calculating loss. \nIf you already have done the above, then the distributed data "
                "parallel module wasn't able to locate the output tensors in the return value of your module's "
                "`forward` function. Please include the loss function and the structure of the return value of "
                "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\nParameter "
                f"indices which did not receive grad for rank {dist.get_rank(self.process_group)}: {missing}\n In "
                "addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to "
                "print out information about which particular parameters did not receive gradient on this rank as "
                "part of this error"
            )
        Join.notify_join_context(self)
        joining = self._join_config.enable
        if self._syncs_buffers() and (self._world > 1 or joining):
            self._broadcast_coalesced(list(self.module.buffers()), self._common_rank(True) if joining else 0)
        if joining:
            # Tells the joined ranks whether this iteration's backward reduces.
            flag = ember.ones(1) if self.require_backward_grad_sync else ember.zeros(1)
            dist.all_reduce(flag, group=self.process_group, async_op=True)
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self._rebuild_buckets()
        self._reset_reduction()
        outputs = self.module(*inputs, **kwargs)
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self._expect_reduction = not self._detects_unused()
            if self._detects_unused():
                reached = _reached_variables(outputs)
                self._unused = [p for p in self._params if id(p) not in reached]
                self._expect_reduction = len(self._unused) < len(self._params) and not self.static_graph
        else:
            self._expect_reduction = False
        return outputs

    def _syncs_buffers(self):
        has_buffers = any(True for _ in self.module.buffers())
        return self.require_forward_param_sync and self.forward_sync_buffers and has_buffers

    def _common_rank(self, candidate):
        """The highest group rank among those passing candidate=True."""
        rank = ember.tensor([dist.get_rank(self.process_group) if candidate else -1])
        dist.all_reduce(rank, op=dist.ReduceOp.MAX, group=self.process_group)
        if rank.item() == -1:
            raise ValueError(
                "BUG! Expected rank_cond to be true for at least one process. This indicates a bug in PyTorch, "
                "please report an issue."
            )
        return rank.item()

    # ---- communication hooks ----------------------------------------------------

    def register_comm_hook(self, state, hook):
        """hook(state, bucket) reduces each bucket instead of the all_reduce; it returns a Future of the result."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        annotation = sig.parameters["bucket"].annotation if "bucket" in sig.parameters else inspect.Parameter.empty
        if annotation is not inspect.Parameter.empty and annotation != dist.GradBucket:
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if sig.return_annotation is not inspect.Signature.empty and sig.return_annotation != Future[ember.Tensor]:
            raise ValueError("Communication hook: return annotation should be torch.futures.Future[torch.Tensor].")
        if getattr(hook, "__name__", "") in ("bf16_compress_hook", "bf16_compress_wrapper_hook"):
            raise TypeError("BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+ or XPU and XCCL")
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._comm_hook = hook
        self._comm_hook_state = state

    def _register_builtin_comm_hook(self, comm_hook_type):
        from ember.distributed.algorithms.ddp_comm_hooks import default_hooks

        hooks = {
            dist.BuiltinCommHookType.ALLREDUCE: default_hooks.allreduce_hook,
            dist.BuiltinCommHookType.FP16_COMPRESS: default_hooks.fp16_compress_hook,
        }
        if self._comm_hook is not None:
            raise RuntimeError("register_builtin_comm_hook or register_comm_hook can only be called once.")
        self._comm_hook = hooks[comm_hook_type]
        self._comm_hook_state = self.process_group

    # ---- uneven inputs ------------------------------------------------------------

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """A Join context for training with a different number of inputs per rank."""
        return Join(
            [self],
            enable,
            throw_on_early_termination,
            divide_by_initial_world_size=divide_by_initial_world_size,
        )

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def _set_static_graph(self):
        if self.static_graph:
            warnings.warn(
                "You've set static_graph to be True, no need to set it again.",
                stacklevel=2,
            )
            return
        self.static_graph = True

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

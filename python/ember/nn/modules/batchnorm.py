"""Batch normalisation modules: BatchNorm1d, BatchNorm2d, as torch.nn."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "SyncBatchNorm"]


class _NormBase(Module):
    """Parameters (weight, bias) and running statistics (running_mean,
    running_var, num_batches_tracked) shared by the batch norms."""

    _version = 2
    __constants__ = (
        "track_running_stats",
        "momentum",
        "eps",
        "num_features",
        "affine",
    )

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__()
        import ember

        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(ember.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(ember.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer(
                "running_mean", ember.zeros(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "running_var", ember.ones(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "num_batches_tracked", ember.zeros((), dtype=ember.long, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (
            "{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
            "track_running_stats={track_running_stats}"
        ).format(**self.__dict__, use_bias=self.bias is not None)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):  # fmt: skip
        # Version 2 added num_batches_tracked: older state dicts (and plain
        # dicts, without versions) keep the module's count.
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            tracked = self.num_batches_tracked
            usable = tracked is not None and tracked.device.type != "meta"
            import ember

            state_dict[key] = tracked if usable else ember.tensor(0, dtype=ember.long)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)  # fmt: skip


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        # momentum=None means a cumulative moving average.
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = (
                1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
            )
        # Batch statistics in training, and in eval when there are no running ones.
        bn_training = (
            True if self.training else (self.running_mean is None and self.running_var is None)
        )
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_buffers else None,
            self.running_var if use_buffers else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics are reduced over a process group while training in a distributed job;
    outside one (and on a machine without GPUs) it is the plain batch norm of any input of 2 or more dims."""

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        process_group=None,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        group = self._sync_group(input) if bn_training and self.training else None
        if group is None:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        from ember.nn.modules._sync_batchnorm import sync_batch_norm

        return sync_batch_norm(
            input, self.weight, self.bias, self.running_mean, self.running_var, self.eps, factor, group
        )

    def _sync_group(self, input):
        """The process group to reduce statistics over, or None when training is local."""
        import ember.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            return None
        if input.device.type not in ("cuda", "hpu", "xpu", "privateuseone"):
            raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
        group = self.process_group if self.process_group else dist.group.WORLD
        return group if dist.get_world_size(group) > 1 else None

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every batch norm in it replaced by a SyncBatchNorm sharing its parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out

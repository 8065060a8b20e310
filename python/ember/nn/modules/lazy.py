"""Lazy modules: the input size of the first call fixes the parameters' shapes; the module then becomes
its plain counterpart (LazyConv2d -> Conv2d), as torch.nn's lazy modules."""

from __future__ import annotations

import ember
from ember.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from ember.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ember.nn.modules.extra import BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from ember.nn.modules.module import Module
from ember.nn.parameter import UninitializedBuffer, UninitializedParameter

__all__ = [
    "LazyModuleMixin",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


def _is_lazy(t):
    return isinstance(t, (UninitializedParameter, UninitializedBuffer))


class LazyModuleMixin:
    """The first call runs initialize_parameters(*args, **kwargs), then the module becomes cls_to_become."""

    cls_to_become = None

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        return any(_is_lazy(t) for t in [*self._parameters.values(), *self._buffers.values()])

    def __call__(self, *args, **kwargs):
        if isinstance(self, LazyModuleMixin):
            self.initialize_parameters(*args, **kwargs)
            if self.has_uninitialized_params():
                raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
            if self.cls_to_become is not None:
                self.__class__ = self.cls_to_become
        return Module.__call__(self, *args, **kwargs)


class _LazyConvMixin(LazyModuleMixin):
    _spatial = 1

    def _make_lazy(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        with ember.no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._spatial + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


def _lazy_conv(name, base, spatial, transposed):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, *rest, device=None, dtype=None, **kw):
        names = ("output_padding", "groups", "bias", "dilation") if transposed else ("dilation", "groups", "bias")
        opts = dict(zip(names, rest))
        opts.update(kw)
        bias = opts.pop("bias", True)
        base.__init__(self, 0, 0, kernel_size, stride, padding, bias=False, device=device, dtype=dtype, **opts)
        self._make_lazy(out_channels, bias, device, dtype)

    return type(name, (_LazyConvMixin, base), {"__init__": __init__, "cls_to_become": base, "_spatial": spatial})


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, 1, False)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, 2, False)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, 3, False)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", ConvTranspose1d, 1, True)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", ConvTranspose2d, 2, True)
LazyConvTranspose3d = _lazy_conv("LazyConvTranspose3d", ConvTranspose3d, 3, True)


class _LazyNormMixin(LazyModuleMixin):
    def _make_lazy(self, affine, track_running_stats, bias, device, dtype):
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = ember.tensor(0, dtype=ember.long, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with ember.no_grad():
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(name, base):
    def __init__(
        self,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        base.__init__(self, 0, eps, momentum, False, False, device, dtype, bias=False)
        self._make_lazy(affine, track_running_stats, bias, device, dtype)

    return type(name, (_LazyNormMixin, base), {"__init__": __init__, "cls_to_become": base})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d)

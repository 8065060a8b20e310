"""DataParallel as CPU-only PyTorch runs it: no devices to replicate to, so the wrapped module runs as is."""

from __future__ import annotations

from ember.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps module (as `.module`, so state_dict keys start with "module."); forward calls it directly."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional DataParallel: without an accelerator there is no device to run on (PyTorch's error)."""
    raise RuntimeError("device type could not be determined")

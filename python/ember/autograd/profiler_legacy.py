"""ember.autograd.profiler_legacy: the profiler without the Kineto tracer,
as torch.autograd.profiler_legacy. Ember's profiler records through its own
C++ layer in every case, so this is the same recorder."""

from ember import _C
from ember.autograd._profiler_event import _legacy_records, _parse_legacy_records
from ember.autograd.profiler import DeviceType, ProfilerConfig, ProfilerState
from ember.autograd.profiler import profile as _profile
from ember.autograd.profiler_util import EventList, FunctionEvent

__all__ = ["DeviceType", "EventList", "FunctionEvent", "ProfilerConfig", "ProfilerState", "profile"]


class profile(_profile):  # noqa: N801  (PyTorch's name)
    """Records the operators run inside the block (legacy interface: no
    Kineto options)."""

    def __init__(
        self,
        enabled=True,
        *,
        use_cuda=False,
        record_shapes=False,
        with_flops=False,
        profile_memory=False,
        with_stack=False,
        with_modules=False,
    ):
        super().__init__(
            enabled,
            use_cuda=use_cuda,
            record_shapes=record_shapes,
            with_flops=with_flops,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_modules=with_modules,
        )

    def _stop(self):
        # Through the legacy record stream (ProfilerEvent push/pop pairs), as PyTorch's legacy profiler.
        self._records = _legacy_records(_C._profiler_stop())
        self.function_events = _parse_legacy_records(self._records)

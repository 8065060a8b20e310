"""ember.autograd.profiler: per-operator timings recorded by the C++ layer
(every operator call and backward node while profiling is on)."""

import enum
import functools
from typing import NamedTuple

from ember import _C
from ember.autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg

__all__ = [
    "DeviceType",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "ProfilerConfig",
    "ProfilerState",
    "kineto_available",
    "profile",
    "record_function",
]


class _IntEnum(enum.Enum):
    """An enum shown as PyTorch shows its C++ enums, usable as an int."""

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value


class ProfilerState(_IntEnum):
    """Which profiler is (to be) on."""

    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9


class DeviceType(_IntEnum):
    """Device kinds, numbered as PyTorch numbers them."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


class ProfilerConfig(NamedTuple):
    """The settings a profiler runs with (profile.config())."""

    state: ProfilerState
    report_input_shapes: bool
    profile_memory: bool
    with_stack: bool
    with_flops: bool
    with_modules: bool
    experimental_config: object = None
    trace_id: str = ""


def kineto_available() -> bool:
    """Whether the Kineto tracer is built in: Ember's profiler records through
    its own C++ layer, without Kineto."""
    return False


def _events_from(raw):
    events = EventList(
        FunctionEvent(
            i, name, thread, start, end, shapes, is_user_annotation=not name.startswith(("aten::", "autograd::"))
        )
        for i, (name, start, end, thread, shapes) in enumerate(raw)
    )
    events._build_tree()
    return events


class profile:  # noqa: N801  (PyTorch's name)
    """Records the operators run inside the block; results through
    key_averages(), table(), events() and export_chrome_trace()."""

    def __init__(
        self,
        enabled=True,
        *,
        use_cuda=False,
        use_device=None,
        record_shapes=False,
        with_flops=False,
        profile_memory=False,
        with_stack=False,
        with_modules=False,
        use_kineto=False,
        use_cpu=True,
        experimental_config=None,
        acc_events=False,
        custom_trace_id_callback=None,
    ):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.entered = False
        self.function_events = None
        self._raw = []
        self.acc_events = acc_events

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start()
        return self

    def _start(self):
        _C._profiler_start(self.record_shapes)

    def _stop(self):
        raw = _C._profiler_stop()
        self._raw = self._raw + raw if self.acc_events else raw
        self.function_events = _events_from(self._raw)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        self._stop()
        self.entered = False
        return False

    def config(self):
        """The ProfilerConfig this profiler records with."""
        return ProfilerConfig(
            ProfilerState.CPU,
            self.record_shapes,
            self.profile_memory,
            self.with_stack,
            self.with_flops,
            self.with_modules,
            self.experimental_config,
        )

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def events(self):
        self._check_finish()
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ):
        self._check_finish()
        return self.function_events.table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def export_chrome_trace(self, path):
        self._check_finish()
        self.function_events.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def __str__(self):
        return self.table() if self.function_events is not None else "<unfinished profile>"


class record_function:  # noqa: N801
    """A labelled scope in the profile (context manager or decorator)."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.handle = 0

    def __enter__(self):
        self.handle = _C._record_function_enter(self.name)
        return self

    def __exit__(self, *exc):
        if self.handle:
            _C._record_function_exit(self.handle)
            self.handle = 0
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped

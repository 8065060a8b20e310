"""ember.profiler: the operator profiler with PyTorch's profile/schedule API
(CPU activity; timings recorded by the C++ layer)."""

import enum
import os
import time

from ember.autograd import profiler as _autograd_profiler
from ember.autograd.profiler import record_function
from ember.autograd.profiler_util import EventList

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __str__(self):
        return f"ProfilerActivity.{self.name}"

    __repr__ = __str__


def supported_activities():
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action for each step number: skip_first steps, then cycles of
    wait, warmup and active steps (repeat cycles, 0 = forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        import warnings

        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """Writes each finished recording as a Chrome trace into dir_name."""

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{os.uname().nodename}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            import gzip
            import shutil

            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)

    return handler


class profile(_autograd_profiler.profile):  # noqa: N801
    """PyTorch's torch.profiler.profile: activities, an optional schedule
    stepped by step(), and on_trace_ready called after each recording."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        super().__init__(record_shapes=record_shapes, acc_events=acc_events)
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule or _default_schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._recording = False

    def _transition(self, prev, current):
        """Warm-up steps record and are discarded; a recording ends after a
        RECORD_AND_SAVE step (or early, at NONE) and goes to on_trace_ready."""
        if self._recording and (prev == ProfilerAction.RECORD_AND_SAVE or current == ProfilerAction.NONE):
            discard = prev == ProfilerAction.WARMUP
            self._stop()
            self._recording = False
            if not discard and self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if current == ProfilerAction.NONE:
            return
        if not self._recording or (prev == ProfilerAction.WARMUP and current != ProfilerAction.WARMUP):
            self._start()  # a fresh recording: warm-up events are dropped
            self._recording = True

    def start(self):
        self._transition(ProfilerAction.NONE, self.current_action)

    def stop(self):
        if self._recording:
            self._stop()
            self._recording = False
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def step(self):
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transition(prev, self.current_action)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def events(self):
        return self.function_events if self.function_events is not None else EventList()

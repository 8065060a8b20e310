"""Timer: timeit for tensors — warm-up, a fixed thread count, accelerator
synchronisation, and replicates summarised by a Measurement."""

from __future__ import annotations

import enum
import textwrap
import timeit
from collections.abc import Callable
from typing import Any

import ember
from ember.utils.benchmark.utils import common

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """The clock of measurements: waits for the accelerator's queued work."""
    if ember.accelerator.is_available():
        ember.accelerator.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Times a Python statement (`stmt`, after `setup`, with `globals`) on
    `num_threads` threads. timeit() runs it a given number of times;
    blocked_autorange() and adaptive_autorange() choose a block size that
    makes the clock's overhead negligible and collect replicates."""

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("Timer measures Python statements; C++ statements are not supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be moved to `setup`."
            )
        self._language = Language.PYTHON
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", ember)
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Runs `stmt` `number` times (after a warm-up of a hundredth of that)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number, [self._timeit(number=number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measure(self, number, can_stop, min_run_time, max_run_time=None, callback=None) -> list[float]:
        """Blocks of `number` runs until `min_run_time` has passed and
        `can_stop(times)` agrees, or `max_run_time` has passed."""
        times: list[float] = []
        total, stop = 0.0, False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                stop = can_stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Runs per block: powers of ten until the clock's overhead is at most
        1e-4 of a block lasting at least min_run_time / 1000."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = ember.tensor([self._timeit(0) for _ in range(5)]).median().item()
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(
        self, callback: Callable[[int, float], Any] | None = None, min_run_time: float = 0.2
    ) -> common.Measurement:
        """Blocks of runs until `min_run_time` seconds have been measured."""
        number = self._estimate_block_size(min_run_time)
        times = self._measure(number, lambda times: True, min_run_time, callback=callback)
        return common.Measurement(number, times, self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], Any] | None = None,
    ) -> common.Measurement:
        """Blocks of runs until IQR / median < `threshold` (after more than 3
        blocks and `min_run_time`) or `max_run_time` seconds."""
        number = self._estimate_block_size(min_run_time=0.05)

        def confident(times: list[float]) -> bool:
            return len(times) > 3 and common.Measurement(number, times, self._task_spec).meets_confidence(threshold)

        times = self._measure(number, confident, min_run_time, max_run_time, callback=callback)
        return common.Measurement(number, times, self._task_spec)

    def collect_callgrind(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("Instruction counts (Callgrind) are not supported; use blocked_autorange().")


def _clean(code: str) -> str:
    """Dedented, without a leading newline or trailing whitespace."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()

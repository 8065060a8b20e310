"""What the benchmark utilities share: a task's description (TaskSpec), the
result of timing it (Measurement) and the helpers that format times."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import textwrap
from collections.abc import Iterable, Iterator
from typing import Any

import ember

__all__ = [
    "TaskSpec",
    "Measurement",
    "select_unit",
    "unit_to_english",
    "trim_sigfig",
    "ordered_unique",
    "set_torch_threads",
]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer runs and how its results are labelled (all but globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (else the one-line statement), with the sub-label."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        heading = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{heading}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The task's lines in a Measurement's repr; a multi-line part is
        followed by an empty line."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_TASK_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def _quantiles(sorted_times: tuple[float, ...]) -> tuple[float, float, float, float]:
    """Median, mean, 25th and 75th percentiles (linear interpolation)."""
    t = ember.tensor(sorted_times, dtype=ember.float64)
    q = ember.quantile(t, ember.tensor([0.5, 0.25, 0.75], dtype=ember.float64)).tolist()
    return q[0], t.mean().item(), q[1], q[2]


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """Times of `number_per_run` runs of a task, one per replicate, with their
    statistics; the task's fields read as attributes (m.label, m.stmt...)."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list[float]:
        """Seconds per run of each replicate."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._compute()
        return self._median

    @property
    def mean(self) -> float:
        self._compute()
        return self._mean

    @property
    def iqr(self) -> float:
        self._compute()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """Digits of the median the spread of the interquartile times
        supports (a 90 % confidence interval), between 1 and 4."""
        self._compute()
        n = len(self._sorted_times)
        upper = int(ember.tensor(3 * n / 4).ceil())
        middle = self._sorted_times[n // 4 : upper]
        std = ember.tensor(middle).std(unbiased=False).item()
        sqrt_n = ember.tensor(len(middle)).sqrt().item()
        interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        digits = int(ember.tensor(ember.tensor(self._median / interval).log10().item()).floor())
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._compute()
        return bool(self._warnings)

    def _compute(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        self._median, self._mean, self._p25, self._p75 = _quantiles(self._sorted_times)
        for threshold, note in (
            (_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
            (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation."),
        ):
            if not self.meets_confidence(threshold):
                share = self.iqr / self.median * 100
                self._warnings += (
                    f"  WARNING: Interquartile range is {share:.1f}% of the median measurement.\n           {note}",
                )
                break

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._compute()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}")
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        per = "per measurement," if n > 1 else ","
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {per} "
            f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        )
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One Measurement per task, holding every replicate's per-run times
        (number_per_run 1, no metadata)."""
        groups: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec) for spec, times in groups.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit that gives `t` seconds one to three leading digits."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(ember.tensor(t).log10().item() // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """`x` rounded to `n` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(ember.tensor(x).abs().log10().ceil().item())
    scale = 10 ** (magnitude - n)
    return float(ember.tensor(x / scale).round() * scale)


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Runs the block with `n` intra-op threads."""
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(n)
        yield
    finally:
        ember.set_num_threads(before)

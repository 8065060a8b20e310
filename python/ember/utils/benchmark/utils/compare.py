"""Compare: Measurements laid out as tables, one per label, a row per
(threads, env, sub-label) and a column per description."""

from __future__ import annotations

import collections
import enum
import itertools
from typing import Any

import ember
from ember.utils.benchmark.utils import common

__all__ = ["Colorize", "Compare"]

_BEST = "\033[92m"
_GOOD = "\033[34m"
_BAD = "\033[2m\033[91m"
_VERY_BAD = "\033[31m"
_BOLD = "\033[1m"
_END = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(value: float) -> int:
    return int(ember.tensor(value).log10().ceil())


class _Column:
    """The number format of one description's cells: as many integer digits as
    the largest needs, and (when trimming) the decimals the least precise
    cell supports."""

    def __init__(self, groups, time_scale, trim, highlight):
        self.groups = groups
        cells = [m for m in itertools.chain.from_iterable(groups)]
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in cells if m)
        digits = [_leading_digits(m.median / time_scale) if m else None for m in cells]
        integer = max(d for d in digits if d is not None)
        if trim:
            decimals = min(max(m.significant_figures - d, 0) for d, m in zip(digits, cells) if m is not None)
        else:
            decimals = 1
        width = integer + decimals + (1 if decimals else 0)
        self.template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def cell(self, value: float | None, sigfigs: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self.cell(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return self.template.format(value, note)


def _color(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _END * 2
    if value >= best * 2:
        return _BAD + text + _END * 2
    return text


class _Table:
    def __init__(self, results: list[common.Measurement], colorize: Colorize, trim: bool, highlight: bool):
        if len({r.label for r in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results, self.colorize, self.highlight = results, colorize, highlight
        self.label = results[0].label
        self.unit, self.scale = common.select_unit(min(r.median for r in results))
        self.row_keys = common.ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
        self.row_keys.sort(key=lambda k: k[:2])
        self.col_keys = common.ordered_unique(r.description for r in results)
        grid: list[list[Any]] = [[None] * len(self.col_keys) for _ in self.row_keys]
        rows = {k: i for i, k in enumerate(self.row_keys)}
        cols = {k: j for j, k in enumerate(self.col_keys)}
        for r in results:
            grid[rows[(r.num_threads, r.env, r.as_row_name)]][cols[r.description]] = r
        self.grid = grid
        envs = {r.env for r in results}
        self.render_env = len(envs) > 1
        self.env_width = max(len(e) for e in envs) if self.render_env else 0
        # Row groups: consecutive rows of one thread count.
        self.group_of, self.thread_heading, self.show_env = [], [], []
        groups: list[list[list[Any]]] = []
        prior_threads, prior_env = -1, ""
        for (threads, env, _), row in zip(self.row_keys, grid):
            new_group = threads != prior_threads
            if new_group:
                prior_threads, prior_env = threads, ""
                groups.append([])
            self.group_of.append(len(groups) - 1)
            self.thread_heading.append(threads if new_group else None)
            self.show_env.append(self.render_env and env != prior_env)
            groups[-1].append(row)
            prior_env = env
        self.columns = [
            _Column([tuple(row[j] for row in g) for g in groups], self.scale, trim, highlight)
            for j in range(len(self.col_keys))
        ]

    def _row_strings(self, i: int) -> list[str]:
        row = self.grid[i]
        first = next(r for r in row if r is not None)
        env = f"({first.env})" if self.show_env[i] else ""
        out = ["  " + env.ljust(self.env_width + 4) + first.as_row_name]
        for m, column in zip(row, self.columns):
            if m is None:
                out.append(column.cell(None, 1, None))
            else:
                spread = m.iqr / m.median if m.has_warnings else None
                out.append(column.cell(m.median / self.scale, m.significant_figures, spread))
        return out

    def _best_values(self, i: int, n: int) -> list[Any]:
        row = self.grid[i]
        if self.colorize == Colorize.ROWWISE:
            return [min(r.median for r in row if r is not None)] * n
        if self.colorize == Colorize.COLUMNWISE:
            best = []
            for column in self.columns:
                medians = [r.median for r in column.groups[self.group_of[i]] if r is not None]
                best.append(min(medians) if medians else None)
            return best
        return [-1] * n

    def render(self) -> str:
        strings = [[""] + list(self.col_keys)] + [self._row_strings(i) for i in range(len(self.grid))]
        n = max(len(s) for s in strings)
        for s in strings:
            s.extend([""] * (n - len(s)))
        widths = [max(len(s[j]) for s in strings) for j in range(n)]
        lines = ["  |  ".join(text.center(w) for text, w in zip(strings[0], widths))]
        overall = len(lines[0])
        for i, s in enumerate(strings[1:]):
            if self.thread_heading[i] is not None:
                lines.append(f"{self.thread_heading[i]} threads: ".ljust(overall, "-"))
            cells = [s[0].ljust(widths[0])]
            for text, w, m, best in zip(s[1:], widths[1:], self.grid[i], self._best_values(i, len(s))):
                text = text.center(w)
                if self.colorize != Colorize.NONE and m is not None and best is not None:
                    text = _color(text, m.median, best)
                cells.append(text)
            lines.append("  |  ".join(cells))
        warned = self.highlight and any(r.has_warnings for r in self.results)
        title = (" " + (self.label or "") + " ").center(overall - 2, "-")
        legend = "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n" if warned else ""
        body = "\n".join(lines)
        return f"[{title}]\n{body}\n\nTimes are in {common.unit_to_english(self.unit)}s ({self.unit}).\n{legend}"


class Compare:
    """Tables of many Measurements (print(compare) or compare.print()):
    replicates of one task are merged, each label gets a table."""

    def __init__(self, results: list[common.Measurement]) -> None:
        self._results: list[common.Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> list[str]:
        by_label: dict[Any, list[common.Measurement]] = collections.defaultdict(list)
        for r in common.Measurement.merge(self._results):
            by_label[r.label].append(r)
        return [
            _Table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
            for group in by_label.values()
        ]

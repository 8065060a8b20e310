"""ember.utils.benchmark against torch.utils.benchmark: Measurements built
from the same times print and summarise the same, Compare lays out the same
tables, and Timer runs statements with PyTorch's API."""

from __future__ import annotations

import pytest

import ember
import ember.utils.benchmark as eb

tb = pytest.importorskip("torch.utils.benchmark")

TIMES = [
    [1e-4, 1.2e-4, 1.1e-4, 0.9e-4, 1.5e-4, 1.0e-4],
    [2.5e-3],
    [2e-9, 3e-9, 2.5e-9],
    [1.0, 1.3, 0.7, 2.0, 1.1],
    [5e-7, 5.1e-7, 4.9e-7, 5.05e-7, 9e-7, 5e-7, 5.02e-7],
]
SPECS = [
    dict(stmt="a + b", setup="pass", label="add", sub_label="small", description="d"),
    dict(stmt="x", setup="y = 1"),
    dict(stmt="x\nz", setup="pass", num_threads=4),
    dict(stmt="for i in range(3):\n  y = i", setup="a = 1\nb = 2", sub_label="loop"),
    dict(stmt="f(x)", setup="", label="f", env="A"),
]


def body(measurement) -> str:
    """A Measurement's repr without its first line (the object's address)."""
    return "\n".join(repr(measurement).splitlines()[1:])


@pytest.mark.parametrize("times", TIMES)
@pytest.mark.parametrize("spec", range(len(SPECS)))
def test_measurement(times, spec):
    ours = eb.Measurement(7, times, eb.TaskSpec(**SPECS[spec]))
    theirs = tb.Measurement(7, times, tb.TaskSpec(**SPECS[spec]))
    assert body(ours) == body(theirs)
    for name in ("median", "mean", "iqr", "significant_figures", "has_warnings", "times", "title", "as_row_name",
                 "env", "label", "num_threads"):  # fmt: skip
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.meets_confidence(0.2) == theirs.meets_confidence(0.2)
    assert ours.task_spec.summarize() == theirs.task_spec.summarize()


@pytest.mark.parametrize("value", [3.14159, 123456.0, 0.000123456, 5e-6, 2.5, 1e-10, 4e-4, 999.5])
def test_format_helpers(value):
    assert eb.select_unit(value) == tb.select_unit(value)
    for n in (1, 2, 3, 4):
        assert eb.trim_sigfig(value, n) == tb.trim_sigfig(value, n)


def measurements(lib):
    out = []
    for i, (label, sub, desc) in enumerate(
        [
            ("add", "f32", "n=1"),
            ("add", "f32", "n=8"),
            ("add", "f64", "n=1"),
            ("add", "f64", "n=8"),
            ("mul", "f32", "n=1"),
        ]
    ):
        for threads in (1, 4):
            base = 1e-5 * (i + 1) * (1 + threads / 10)
            spread = (1.0, 1.05, 0.97, 1.3, 1.01) if i % 2 else (1.0, 1.5, 0.6, 1.3, 1.01)
            spec = lib.TaskSpec("a+b", "pass", label=label, sub_label=sub, description=desc, num_threads=threads)
            out.append(lib.Measurement(100, [base * f for f in spread], spec))
    for env in ("A", "Bee"):
        spec = lib.TaskSpec("s", "pass", label="L", env=env, description="c")
        out.append(lib.Measurement(1, [1e-3, 1.1e-3, 1.2e-3, 1.0e-3], spec))
    out.append(lib.Measurement(1, [2e-3, 2.2e-3], lib.TaskSpec("t", "pass", label="L", env="A", description="c2")))
    return out


@pytest.mark.parametrize("options", [(), ("trim",), ("trim", "highlight"), ("colorize",), ("rowwise", "highlight")])
def test_compare(options):
    tables = []
    for lib in (eb, tb):
        compare = lib.Compare(measurements(lib))
        if "trim" in options:
            compare.trim_significant_figures()
        if "highlight" in options:
            compare.highlight_warnings()
        if "colorize" in options or "rowwise" in options:
            compare.colorize(rowwise="rowwise" in options)
        tables.append(str(compare))
    assert tables[0] == tables[1]


def test_merge_and_errors():
    merged = eb.Measurement.merge(measurements(eb)[:2] * 2)
    assert [(m.number_per_run, len(m.raw_times)) for m in merged] == [(1, 10), (1, 10)]
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        eb.Compare([1])
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        eb.Timer(lambda: 1)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        eb.Timer("x", global_setup="import x")
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        eb.Timer().autorange()


def test_timer_runs_the_statement():
    calls = []
    timer = eb.Timer("f()", setup="n = 0", globals={"f": lambda: calls.append(1)}, label="L", description="d")
    m = timer.timeit(50)
    assert (m.number_per_run, len(m.raw_times), m.title) == (50, 1, "L")
    assert len(calls) == 50 + 2  # and the warm-up
    blocks = []
    m = eb.Timer("torch.ones(4) + 1").blocked_autorange(callback=lambda n, t: blocks.append(n), min_run_time=0.02)
    assert len(blocks) == len(m.raw_times) and all(n == m.number_per_run for n in blocks)
    assert sum(m.raw_times) >= 0.02 and m.median > 0
    m = eb.Timer("sum(range(50))", num_threads=2).adaptive_autorange(min_run_time=0.01, max_run_time=0.1)
    assert len(m.raw_times) >= 1 and m.num_threads == 2
    before = ember.get_num_threads()
    eb.Timer("pass", num_threads=1).timeit(10)
    assert ember.get_num_threads() == before

"""The operator profiler against PyTorch's: the recorded operators, nesting,
shapes, schedules, and the summary table's layout."""

from __future__ import annotations

import json

import pytest
from conftest import torch

import ember


def _program(L):
    x = L.ones(16, 16, requires_grad=True)
    with L.autograd.profiler.record_function("block"):
        y = L.mm(x, x)
    y.sum().backward()
    return x


def _profile(L, **kwargs):
    with L.autograd.profiler.profile(**kwargs) as prof:
        _program(L)
    return prof


def test_records_operators_and_backward_nodes_as_pytorch_names_them():
    names = {}
    for L in (ember, torch):
        prof = _profile(L)
        names[L.__name__] = {e.key for e in prof.key_averages()}
    for name in ("block", "aten::mm", "aten::sum", "autograd::engine::evaluate_function: MmBackward0",
                 "autograd::engine::evaluate_function: SumBackward0"):
        assert name in names["torch"], name
        assert name in names["ember"], name


def test_nesting_counts_and_shapes():
    prof = _profile(ember, record_shapes=True)
    events = prof.events()
    block = next(e for e in events if e.name == "block")
    assert [c.name for c in block.cpu_children] == ["aten::mm"]
    mm = block.cpu_children[0]
    assert mm.input_shapes == [[16, 16], [16, 16]]
    assert mm.cpu_parent is block
    assert block.self_cpu_time_total == pytest.approx(block.cpu_time_total - mm.cpu_time_total)
    by_key = {(a.key, str(a.input_shapes)): a for a in prof.key_averages(group_by_input_shape=True)}
    expected = {(a.key, str(a.input_shapes)): a for a in _profile(torch, record_shapes=True).key_averages(
        group_by_input_shape=True)}
    key = ("aten::mm", "[[16, 16], [16, 16]]")
    assert by_key[key].count == expected[key].count == 3  # forward and MmBackward0's two products
    total = sum(e.self_cpu_time_total for e in events)
    assert prof.self_cpu_time_total == pytest.approx(total)
    assert all(e.self_cpu_time_total >= 0 for e in events)


def test_table_layout_matches_pytorch():
    tables = {L.__name__: _profile(L, record_shapes=True).key_averages(group_by_input_shape=True).table(
        sort_by="cpu_time_total") for L in (ember, torch)}
    for name, text in tables.items():
        lines = text.split("\n")
        assert lines[0] == lines[2] and set(lines[0]) == {"-", " "}, name
        assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                    "CPU", "time", "avg", "#", "of", "Calls", "Input", "Shapes"], name
        assert lines[-3] == lines[0] and lines[-2].startswith("Self CPU time total: ") and lines[-1] == ""
        widths = [len(col) for col in lines[0].split("  ") if col]
        assert widths[1:7] == [12] * 6
    # Same column arithmetic: each row as wide as the separator.
    for text in tables.values():
        lines = text.split("\n")
        assert all(len(row) == len(lines[0]) for row in lines[1:-3] if row)


def test_profiling_off_records_nothing_and_chrome_trace(tmp_path):
    with ember.autograd.profiler.profile(enabled=False) as prof:
        _program(ember)
    assert prof.function_events is None
    with ember.autograd.profiler.profile() as prof:
        ember.ones(2) + 1
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    entries = json.loads(path.read_text())
    assert {"aten::ones", "aten::add"} <= {e["name"] for e in entries}
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in entries)
    with ember.autograd.profiler.profile() as prof2:
        pass
    assert len(prof2.events()) == 0


@pytest.mark.parametrize(
    "args",
    [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=1, active=1, repeat=2),
     dict(wait=2, warmup=0, active=3, repeat=1, skip_first=3), dict(wait=1, warmup=1, active=1, skip_first_wait=1)],
)
def test_schedule_matches_pytorch(args):
    with pytest.warns(UserWarning) if args["warmup"] == 0 else _nothing():
        s_e = ember.profiler.schedule(**args)
    s_t = torch.profiler.schedule(**args)
    assert [s_e(i).name for i in range(14)] == [s_t(i).name for i in range(14)]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_scheduled_profile_calls_on_trace_ready_as_pytorch():
    def run(L):
        seen = []

        def ready(prof):
            seen.append(sorted({e.key for e in prof.key_averages() if e.key.startswith("step")}))

        with L.profiler.profile(activities=[L.profiler.ProfilerActivity.CPU],
                                schedule=L.profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
                                on_trace_ready=ready) as prof:
            for i in range(10):
                with L.profiler.record_function(f"step{i}"):
                    L.ones(2) * 2
                prof.step()
        return seen

    assert run(ember) == run(torch)


def test_profiler_activity_names():
    assert [str(a) for a in ember.profiler.ProfilerActivity] == [
        str(getattr(torch.profiler.ProfilerActivity, n)) for n in ("CPU", "XPU", "MTIA", "CUDA", "HPU", "PrivateUse1")
    ]

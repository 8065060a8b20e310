"""Profiler results: events, their per-name averages and PyTorch's summary
table."""

import json
from collections import defaultdict

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _in_unit(time_us, unit):
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(unit)
    return _format_time(time_us) if scale is None else f"{time_us / scale:.3f}{unit}"


class FunctionEvent:
    """One timed call: an operator, a backward node or a record_function
    scope. Times are in microseconds."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, is_user_annotation=False):
        self.id = id
        self.name = name
        self.key = name
        self.trace_name = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = end_us
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.is_user_annotation = is_user_annotation
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1
        self.node_id = -1
        self.is_async = False
        self.is_remote = False
        self.device_type = "cpu"

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one key (name, and input shapes when grouped by them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = None
        self.is_user_annotation = False
        self.cpu_parent = None
        self.node_id = -1
        self.is_async = False

    def add(self, evt):
        if self.key is None:
            self.key = evt.key
            self.input_shapes = evt.input_shapes
            self.is_user_annotation = evt.is_user_annotation
        self.count += evt.count
        self.cpu_time_total += evt.cpu_time_total
        self.self_cpu_time_total += evt.self_cpu_time_total
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


class EventList(list):
    """Profiled events, with PyTorch's summaries."""

    def __init__(self, *args, **kwargs):
        kwargs.pop("use_device", None)
        kwargs.pop("profile_memory", None)
        kwargs.pop("with_flops", None)
        super().__init__(*args, **kwargs)

    def _build_tree(self):
        """Links each event to the innermost event of its thread that encloses it."""
        open_by_thread = defaultdict(list)
        for evt in sorted(self, key=lambda e: (e.start_us, -e.end_us)):
            stack = open_by_thread[evt.thread]
            while stack and stack[-1].end_us <= evt.start_us:
                stack.pop()
            if stack and evt.end_us <= stack[-1].end_us:
                evt.cpu_parent = stack[-1]
                stack[-1].cpu_children.append(evt)
            stack.append(evt)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        groups = {}
        for evt in self:
            key = (evt.key, str(evt.input_shapes)) if group_by_input_shapes else evt.key
            groups.setdefault(key, FunctionEventAvg()).add(evt)
        if not group_by_input_shapes:
            for avg in groups.values():
                avg.input_shapes = None
        return EventList(groups.values())

    def total_average(self):
        total = FunctionEventAvg()
        for evt in self:
            total.add(evt)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return _build_table(self, sort_by, header, row_limit, max_name_column_width, max_shapes_column_width,
                            top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        entries = [
            {"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total, "tid": e.thread,
             "pid": "CPU functions", "args": {}}
            for e in self
        ]
        with open(path, "w") as f:
            json.dump(entries, f)

    def __str__(self):
        return self.table()


def _build_table(events, sort_by, header, row_limit, max_name_width, max_shapes_width, top_level_only, time_unit):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device")), reverse=True)
    has_shapes = any(e.input_shapes for e in events)  # None or [] shows no column
    name_width = max(len(e.key) for e in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_width is not None:
        shapes_width = min(shapes_width, max_shapes_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total_self = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[: max_name_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total_self), _in_unit(e.self_cpu_time_total, time_unit),
               _format_time_share(e.cpu_time_total, total_self), _in_unit(e.cpu_time_total, time_unit),
               _in_unit(e.cpu_time, time_unit), e.count]
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        lines.append(row_format.format(*row))
    lines += [separator, f"Self CPU time total: {_in_unit(total_self, time_unit)}"]
    return "\n".join(lines) + "\n"

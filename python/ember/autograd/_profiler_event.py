"""ProfilerEvent: the legacy profiler's records, one per push (a scope
opens), pop (it closes) or mark, per thread, as torch.autograd.ProfilerEvent.
Ember's recorder keeps (name, start, end, thread, shapes) intervals; they are
turned into this stream and parsed back into FunctionEvents by
profiler_legacy.profile."""

from __future__ import annotations

from ember.autograd.profiler_util import EventList, FunctionEvent

_NO_CONSTRUCTOR = "ember._C._autograd.ProfilerEvent: No constructor defined!"


class ProfilerEvent:
    """One legacy profiler record: kind() is "push", "pop" or "mark"; a pop
    has the handle() of the push it closes."""

    __slots__ = ("_kind", "_name", "_thread", "_handle", "_start_us", "_shapes")

    def __init__(self, *args, **kwargs):
        raise TypeError(_NO_CONSTRUCTOR)

    @classmethod
    def _record(cls, kind, name, thread, handle, start_us, shapes=()):
        event = object.__new__(cls)
        event._kind, event._name, event._thread = kind, name, thread
        event._handle, event._start_us, event._shapes = handle, start_us, [list(s) for s in shapes]
        return event

    def kind(self) -> str:
        return self._kind

    def name(self) -> str:
        return self._name

    def thread_id(self) -> int:
        return self._thread

    def fwd_thread_id(self) -> int:
        return 0

    def device(self) -> int:
        return -1

    def handle(self) -> int:
        return self._handle

    def node_id(self) -> int:
        return -1

    def is_remote(self) -> bool:
        return False

    def is_async(self) -> bool:
        return False

    def sequence_nr(self) -> int:
        return -1

    def shapes(self) -> list:
        return [list(s) for s in self._shapes]

    def start_us(self) -> float:
        return self._start_us

    def cpu_elapsed_us(self, other) -> float:
        """Microseconds from this event to other."""
        if not isinstance(other, ProfilerEvent):
            raise TypeError(f"cpu_elapsed_us(): expected a ProfilerEvent, got {type(other).__name__}")
        return other._start_us - self._start_us

    def cuda_elapsed_us(self, other) -> float:
        raise RuntimeError("Events were not recorded for CUDA")

    def has_cuda(self) -> bool:
        return False

    def cpu_memory_usage(self) -> int:
        return 0

    def cuda_memory_usage(self) -> int:
        return 0

    def flops(self) -> int:
        return 0

    def scope(self) -> int:
        return 0

    def correlation_id(self) -> int:
        return 0

    def stack(self) -> list:
        return []


ProfilerEvent.__module__ = "ember._C._autograd"


def _legacy_records(raw, start_us=None):
    """The recorder's intervals as per-thread push/pop streams, each opened by
    a "__start_profile" mark."""
    by_thread: dict[int, list] = {}
    for name, start, end, thread, shapes in raw:
        by_thread.setdefault(thread, []).append((start, -end, name, shapes))
    out = []
    handle = 0
    for thread in sorted(by_thread):
        spans = sorted(by_thread[thread], key=lambda s: (s[0], s[1]))
        first = spans[0][0] if start_us is None else start_us
        events = [ProfilerEvent._record("mark", "__start_profile", thread, 0, first)]
        open_spans: list[tuple[float, int]] = []
        for start, neg_end, name, shapes in spans:
            while open_spans and open_spans[-1][0] <= start:
                end, h = open_spans.pop()
                events.append(ProfilerEvent._record("pop", "", thread, h, end))
            handle += 1
            events.append(ProfilerEvent._record("push", name, thread, handle, start, shapes))
            open_spans.append((-neg_end, handle))
        while open_spans:
            end, h = open_spans.pop()
            events.append(ProfilerEvent._record("pop", "", thread, h, end))
        out.append(events)
    return out


def _parse_legacy_records(thread_records):
    """FunctionEvents from per-thread push/pop streams (a push and its pop
    share a handle), in the order their scopes closed, their parents and
    children linked."""
    events = []
    for records in thread_records:
        pushed = {}
        for record in records:
            if record.kind() == "push":
                pushed[record.handle()] = record
            elif record.kind() == "pop" and record.handle() in pushed:
                push = pushed.pop(record.handle())
                name = push.name()
                events.append(
                    FunctionEvent(
                        len(events),
                        name,
                        push.thread_id(),
                        push.start_us(),
                        record.start_us(),
                        push.shapes(),
                        is_user_annotation=not name.startswith(("aten::", "autograd::")),
                    )
                )
    result = EventList(events)
    result._build_tree()
    return result

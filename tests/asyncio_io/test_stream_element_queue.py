"""The element queues of the async wait operator, as pure state machines (no threads, no loop)."""

from __future__ import annotations

import pytest

from flott.runtime.operators.stream_element_queue import (
    OrderedStreamElementQueue,
    QueueEntry,
    RecordEntry,
    StreamElementQueue,
    UnorderedStreamElementQueue,
    WatermarkEntry,
)


def emitted(entries: list[QueueEntry]) -> list[object]:
    """What leaves: a record's results, or ``("wm", t)`` for a watermark."""
    out: list[object] = []
    for entry in entries:
        if isinstance(entry, WatermarkEntry):
            out.append(("wm", entry.timestamp))
        else:
            assert entry.results is not None
            out.extend(entry.results)
    return out


def put(q: StreamElementQueue, value: object) -> RecordEntry:
    entry = q.try_put(value)
    assert entry is not None
    return entry


def test_ordered_queue_holds_completed_records_until_those_before_them_completed() -> None:
    q = OrderedStreamElementQueue(10)
    a, b, c = put(q, "a"), put(q, "b"), put(q, "c")
    q.complete(c, ["C"])
    q.complete(b, ["B1", "B2"])
    assert q.pop_completed() == []
    q.complete(a, [])
    assert emitted(q.pop_completed()) == ["B1", "B2", "C"]
    assert q.is_empty()


def test_ordered_queue_keeps_watermarks_in_place() -> None:
    q = OrderedStreamElementQueue(10)
    a = put(q, "a")
    assert q.try_put_watermark(5)
    b = put(q, "b")
    q.complete(b, ["B"])
    assert q.pop_completed() == []
    q.complete(a, ["A"])
    assert emitted(q.pop_completed()) == ["A", ("wm", 5), "B"]


def test_unordered_queue_emits_in_completion_order_between_watermarks() -> None:
    q = UnorderedStreamElementQueue(10)
    a, b, c = put(q, "a"), put(q, "b"), put(q, "c")
    q.complete(c, ["C"])
    assert emitted(q.pop_completed()) == ["C"]
    q.complete(a, ["A"])
    assert emitted(q.pop_completed()) == ["A"]
    assert q.size() == 1
    q.complete(b, ["B"])
    assert emitted(q.pop_completed()) == ["B"]
    assert q.is_empty()


def test_unordered_queue_never_lets_a_record_overtake_a_watermark() -> None:
    q = UnorderedStreamElementQueue(10)
    a = put(q, "a")
    assert q.try_put_watermark(7)
    b = put(q, "b")
    assert q.try_put_watermark(9)
    c = put(q, "c")
    q.complete(c, ["C"])
    q.complete(b, ["B"])
    assert q.pop_completed() == [], "everything waits for the record before the first watermark"
    q.complete(a, ["A"])
    assert emitted(q.pop_completed()) == ["A", ("wm", 7), "B", ("wm", 9), "C"]
    assert q.is_empty()


def test_unordered_queue_emits_a_watermark_at_once_when_nothing_is_before_it() -> None:
    q = UnorderedStreamElementQueue(10)
    assert q.try_put_watermark(1)
    assert q.try_put_watermark(2)
    assert emitted(q.pop_completed()) == [("wm", 1), ("wm", 2)]
    a = put(q, "a")
    q.complete(a, ["A"])
    assert emitted(q.pop_completed()) == ["A"]
    assert q.is_empty()


@pytest.mark.parametrize("queue_class", [OrderedStreamElementQueue, UnorderedStreamElementQueue])
def test_capacity_counts_records_and_watermarks_until_they_leave(queue_class: type) -> None:
    q: StreamElementQueue = queue_class(2)
    a = put(q, "a")
    assert q.try_put_watermark(3)
    assert q.is_full()
    assert q.try_put("b") is None
    assert not q.try_put_watermark(4)
    q.complete(a, ["A"])
    assert q.is_full(), "completed but not popped still takes room"
    assert emitted(q.pop_completed()) == ["A", ("wm", 3)]
    assert q.size() == 0 and q.try_put("b") is not None


@pytest.mark.parametrize("queue_class", [OrderedStreamElementQueue, UnorderedStreamElementQueue])
def test_entries_are_everything_not_yet_emitted_in_input_order(queue_class: type) -> None:
    q: StreamElementQueue = queue_class(10)
    a, b = put(q, "a"), put(q, "b")
    assert q.try_put_watermark(4)
    c, d = put(q, "c"), put(q, "d")
    q.complete(d, ["D"])
    q.complete(b, ["B"])
    q.pop_completed()
    remaining = [e.timestamp if isinstance(e, WatermarkEntry) else e.value for e in q.entries()]  # type: ignore[attr-defined]
    if queue_class is OrderedStreamElementQueue:
        assert remaining == ["a", "b", 4, "c", "d"]
    else:
        assert remaining == ["a", 4, "c", "d"], "b left already; d waits behind the watermark"
    q.complete(a, ["A"])
    q.complete(c, ["C"])
    q.pop_completed()
    assert q.entries() == [] and q.is_empty()


def test_a_second_completion_of_an_entry_is_ignored() -> None:
    q = UnorderedStreamElementQueue(4)
    a = put(q, "a")
    q.complete(a, ["first"])
    q.complete(a, ["second"])
    assert emitted(q.pop_completed()) == ["first"]
    assert q.is_empty()


def test_records_keep_their_timestamps() -> None:
    q = OrderedStreamElementQueue(4)
    entry = q.try_put("a", 1234)
    assert entry is not None and entry.timestamp == 1234


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        OrderedStreamElementQueue(0)

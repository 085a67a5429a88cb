"""Timers: the processing-time service, the timer queue in keyed state and the internal timer service.

All pure and synchronous: time is a hand-driven clock, watermarks are plain calls.
"""

from __future__ import annotations

import pickle
from typing import Any

from flott.runtime.operators.processing_time import ProcessingTimeService
from flott.runtime.operators.timer_service import InternalTimerService, KeyedTimerService
from flott.runtime.state.heap import HeapKeyedStateBackend
from flott.runtime.state.heap.heap_timer_queue import HeapTimerQueue
from flott.runtime.state.key_groups import KeyGroupRange, assign_to_key_group


class Clock:
    def __init__(self, now: int = 0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


# --------------------------------------------------------------------------- ProcessingTimeService


def test_processing_time_callbacks_fire_in_time_order_once_due() -> None:
    clock = Clock(100)
    pts = ProcessingTimeService(clock)
    fired: list[tuple[str, int]] = []
    pts.register_timer(300, lambda t: fired.append(("c", t)))
    pts.register_timer(150, lambda t: fired.append(("a", t)))
    cancelled = pts.register_timer(200, lambda t: fired.append(("x", t)))
    pts.register_timer(250, lambda t: fired.append(("b", t)))
    cancelled.cancel()
    assert pts.next_due() == 150
    assert pts.fire_due() == 0
    clock.now = 260
    assert pts.fire_due() == 2
    assert fired == [("a", 150), ("b", 250)]
    assert pts.next_due() == 300
    clock.now = 1000
    pts.fire_due()
    assert fired[-1] == ("c", 300) and pts.next_due() is None


def test_a_callback_may_register_the_next_one_and_quiesce_drops_everything() -> None:
    clock = Clock(0)
    pts = ProcessingTimeService(clock)
    ticks: list[int] = []

    def tick(t: int) -> None:
        ticks.append(t)
        pts.register_timer(t + 10, tick)

    pts.register_timer(10, tick)
    clock.now = 35
    pts.fire_due()
    assert ticks == [10, 20, 30]
    pts.quiesce()
    clock.now = 100
    assert pts.fire_due() == 0 and pts.num_pending() == 0
    pts.register_timer(101, tick)
    assert pts.next_due() is None, "a quiesced service takes no new timers"
    assert ProcessingTimeService(clock), "an empty service is truthy (no __len__ trap)"


# --------------------------------------------------------------------------- HeapTimerQueue


def test_timer_queue_deduplicates_orders_by_time_and_deletes() -> None:
    q = HeapTimerQueue("t")
    assert q.add(30, "a", None)
    assert q.add(10, "b", None)
    assert not q.add(30, "a", None), "same (timestamp, key, namespace) is one timer"
    assert q.add(30, "a", "w1")
    assert q.add(20, "a", None)
    assert len(q) == 4 and q.peek_timestamp() == 10
    assert q.remove(20, "a", None) and not q.remove(20, "a", None)
    assert q.timers_of_key("a") == [(30, None), (30, "w1")]
    assert q.poll(5) is None
    assert q.poll(100) == (10, "b", None)
    rest = {q.poll(100), q.poll(100)}
    assert rest == {(30, "a", None), (30, "a", "w1")}
    assert q.poll(100) is None and len(q) == 0 and q.peek_timestamp() is None


def test_timer_queue_reuses_a_timestamp_after_its_bucket_emptied() -> None:
    q = HeapTimerQueue("t")
    q.add(10, "a", None)
    q.remove(10, "a", None)
    q.add(10, "b", None)
    q.add(5, "c", None)
    assert [q.poll(100), q.poll(100), q.poll(100)] == [(5, "c", None), (10, "b", None), None]


def test_timer_queue_splits_by_key_group_and_restores() -> None:
    q = HeapTimerQueue("t")
    timers = [(t, f"k{t % 7}", None) for t in range(50)]
    q.restore(timers)
    groups = q.entries_by_key_group(128)
    assert sum(map(len, groups.values())) == 50
    for group, entries in groups.items():
        assert all(assign_to_key_group(key, 128) == group for _, key, _ in entries)
    copy = HeapTimerQueue("t")
    copy.restore(pickle.loads(pickle.dumps([e for entries in groups.values() for e in entries])))
    assert list(copy) == list(q)


# --------------------------------------------------------------------------- InternalTimerService


class Recording:
    def __init__(self, backend: HeapKeyedStateBackend) -> None:
        self.backend = backend
        self.fired: list[tuple[str, int, Any, Any]] = []

    def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        assert self.backend.current_key == key, "the timer's key is the current key while it fires"
        self.fired.append(("event", timestamp, key, namespace))

    def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        assert self.backend.current_key == key
        self.fired.append(("processing", timestamp, key, namespace))


def service(clock: Clock) -> tuple[InternalTimerService, Recording, ProcessingTimeService]:
    backend = HeapKeyedStateBackend(128, KeyGroupRange(0, 127))
    pts = ProcessingTimeService(clock)
    rec = Recording(backend)
    return InternalTimerService("test", backend, pts, rec), rec, pts


def test_event_time_timers_fire_in_timestamp_order_when_the_watermark_passes() -> None:
    timers, rec, _ = service(Clock())
    backend = timers._backend
    for key, ts in [("a", 30), ("b", 10), ("a", 20), ("b", 30), ("a", 20)]:
        backend.current_key = key
        timers.register_event_time_timer(None, ts)
    backend.current_key = "b"
    timers.delete_event_time_timer(None, 30)
    timers.advance_watermark(19)
    assert rec.fired == [("event", 10, "b", None)]
    timers.advance_watermark(30)
    assert rec.fired[1:] == [("event", 20, "a", None), ("event", 30, "a", None)]
    assert timers.current_watermark == 30
    timers.advance_watermark(1000)
    assert len(rec.fired) == 3, "each timer fires once; the deleted one never"


def test_timers_live_in_the_keyed_state_backend() -> None:
    timers, _, _ = service(Clock())
    backend = timers._backend
    backend.current_key = "k"
    timers.register_event_time_timer("ns", 5)
    queues = backend.timer_queues()
    assert set(queues) == {"_timer_state/event_test", "_timer_state/processing_test"}
    assert list(queues["_timer_state/event_test"]) == [(5, "k", "ns")]


def test_processing_time_timers_fire_on_the_clock_and_reschedule_for_earlier_ones() -> None:
    clock = Clock(1000)
    timers, rec, pts = service(clock)
    backend = timers._backend
    backend.current_key = "a"
    timers.register_processing_time_timer(None, 1500)
    assert pts.next_due() == 1500
    backend.current_key = "b"
    timers.register_processing_time_timer(None, 1200)
    assert pts.next_due() == 1200, "an earlier timer moves the wake-up"
    timers.register_processing_time_timer(None, 1800)
    clock.now = 1199
    pts.fire_due()
    assert rec.fired == []
    clock.now = 1600
    pts.fire_due()
    assert rec.fired == [("processing", 1200, "b", None), ("processing", 1500, "a", None)]
    assert pts.next_due() == 1800
    clock.now = 2000
    pts.fire_due()
    assert rec.fired[-1] == ("processing", 1800, "b", None)
    assert pts.next_due() is None


def test_keyed_timer_service_is_what_user_code_sees() -> None:
    clock = Clock(42)
    timers, rec, _ = service(clock)
    user = KeyedTimerService(timers)
    timers._backend.current_key = "x"
    assert user.current_processing_time() == 42
    user.register_event_time_timer(7)
    user.register_event_time_timer(7)
    user.register_event_time_timer(9)
    user.delete_event_time_timer(9)
    timers.advance_watermark(100)
    assert rec.fired == [("event", 7, "x", None)]
    assert user.current_watermark() == 100

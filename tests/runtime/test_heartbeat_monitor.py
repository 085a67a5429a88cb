"""The heartbeat monitor, driven by events and an explicit clock (no sockets, no sleeping on time)."""

from __future__ import annotations

import asyncio

from flott.runtime.heartbeat.heartbeat_manager import check_period, watch_heartbeats
from flott.runtime.heartbeat.heartbeat_monitor import (
    HeartbeatMonitor,
    HeartbeatReceived,
    TargetRegistered,
    TargetTimedOut,
    TargetUnregistered,
    Tick,
)


def test_a_target_that_goes_quiet_times_out_once_with_the_message_it_gets() -> None:
    monitor = HeartbeatMonitor(timeout_s=5)
    assert monitor.handle(TargetRegistered("te-1", "TaskExecutor te-1 (127.0.0.1:4000)"), 0) == []
    assert monitor.handle(TargetRegistered("te-2", "TaskExecutor te-2"), 1) == []
    assert monitor.next_timeout() == 5
    assert monitor.handle(Tick(), 5) == []  # exactly the timeout is not yet past it
    assert monitor.handle(HeartbeatReceived("te-2"), 4) == []
    assert monitor.handle(Tick(), 5.5) == [
        TargetTimedOut("te-1", "heartbeat of TaskExecutor te-1 (127.0.0.1:4000) timed out after 5000 ms")
    ]
    assert not monitor.is_monitored("te-1") and monitor.is_monitored("te-2")
    assert monitor.handle(Tick(), 6) == []  # reported once, then forgotten
    assert monitor.next_timeout() == 9
    assert monitor.handle(Tick(), 9.1) == [
        TargetTimedOut("te-2", "heartbeat of TaskExecutor te-2 timed out after 5000 ms")
    ]
    assert len(monitor) == 0 and monitor.next_timeout() is None


def test_heartbeats_keep_a_target_alive_and_only_a_tick_reports_timeouts() -> None:
    monitor = HeartbeatMonitor(timeout_s=2)
    monitor.handle(TargetRegistered("a", "A"), 0)
    monitor.handle(TargetRegistered("b", "B"), 0)
    for t in range(1, 10):
        assert monitor.handle(HeartbeatReceived("a"), t) == []
    # b is long overdue, but a heartbeat of another target (an RPC method) does not report it ...
    assert monitor.is_monitored("b")
    # ... nor a tick about another target ...
    assert monitor.handle(Tick("a"), 9.5) == []
    # ... the next tick does
    assert [t.target_id for t in monitor.handle(Tick(), 9.5)] == ["b"]
    assert monitor.last_heartbeat("a") == 9


def test_unknown_late_and_out_of_order_heartbeats() -> None:
    monitor = HeartbeatMonitor(timeout_s=2)
    assert monitor.handle(HeartbeatReceived("ghost"), 0) == []
    assert not monitor.is_monitored("ghost")  # a heartbeat does not register a target
    monitor.handle(TargetRegistered("a", "A"), 5)
    monitor.handle(HeartbeatReceived("a"), 3)  # a reply that was sent before the registration
    assert monitor.last_heartbeat("a") == 5
    monitor.handle(TargetUnregistered("a"), 6)
    assert monitor.handle(Tick(), 100) == [] and monitor.last_heartbeat("a") is None
    monitor.handle(TargetRegistered("a", "A"), 100)  # registering again starts afresh
    monitor.handle(TargetRegistered("a", "A again"), 101)
    assert monitor.handle(Tick(), 103.5) == [
        TargetTimedOut("a", "heartbeat of A again timed out after 2000 ms")
    ]


def test_check_period_is_a_fifth_of_the_timeout_bounded_by_the_interval() -> None:
    assert check_period(interval_s=10, timeout_s=50) == 10
    assert check_period(interval_s=10, timeout_s=5) == 1
    assert check_period(interval_s=10, timeout_s=0.1) == 0.05


def test_the_shell_ticks_on_the_injected_clock_and_hands_over_timeouts() -> None:
    now = [0.0]
    monitor = HeartbeatMonitor(timeout_s=60)
    monitor.handle(TargetRegistered("te", "TaskExecutor te"), 0)
    reported: list[TargetTimedOut] = []

    async def main() -> None:
        done = asyncio.Event()

        async def on_timeout(t: TargetTimedOut) -> None:
            reported.append(t)
            done.set()

        watch = watch_heartbeats(monitor, lambda: now[0], 0.01, on_timeout)
        watcher = asyncio.get_running_loop().create_task(watch)
        await asyncio.sleep(0.05)
        assert reported == []  # the injected clock has not moved
        now[0] = 61.0
        await asyncio.wait_for(done.wait(), 30)
        watcher.cancel()

    asyncio.run(main())
    assert reported == [TargetTimedOut("te", "heartbeat of TaskExecutor te timed out after 60000 ms")]


def test_a_failing_reaction_does_not_stop_the_watching() -> None:
    now = [0.0]
    monitor = HeartbeatMonitor(timeout_s=1)
    monitor.handle(TargetRegistered("a", "A"), 0)
    monitor.handle(TargetRegistered("b", "B"), 0.5)
    reported: list[str] = []

    async def main() -> None:
        done = asyncio.Event()

        async def on_timeout(t: TargetTimedOut) -> None:
            reported.append(t.target_id)
            if t.target_id == "a":
                raise RuntimeError("the reaction failed")
            done.set()

        watcher = asyncio.get_running_loop().create_task(
            watch_heartbeats(monitor, lambda: now[0], 0.01, on_timeout)
        )
        now[0] = 1.2  # a times out, b not yet
        async with asyncio.timeout(30):
            while not reported:
                await asyncio.sleep(0.01)
        now[0] = 2.0
        await asyncio.wait_for(done.wait(), 30)
        watcher.cancel()

    asyncio.run(main())
    assert reported == ["a", "b"]

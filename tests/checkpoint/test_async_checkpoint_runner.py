"""The asynchronous part of a task's checkpoints: bounded, in order, cancellable, failures decline.

A fake writer stands in for the state files (it blocks on an event the test releases), so each
rule is checked without storage or sockets.
"""

from __future__ import annotations

import threading

import pytest

from flott.runtime.checkpoint.errors import CheckpointCancelledError
from flott.runtime.checkpoint.metadata import TaskStateSnapshot
from flott.runtime.tasks.async_checkpoint_runner import AsyncCheckpointRunner, AsyncSnapshotPart

WAIT_S = 10.0  # only an upper bound for a thread to get somewhere; never a threshold


class Responder:
    def __init__(self) -> None:
        self.events: list[tuple[str, int, object]] = []
        self.changed = threading.Condition()

    def acknowledge(self, checkpoint_id: int, snapshot: TaskStateSnapshot) -> None:
        with self.changed:
            self.events.append(("ack", checkpoint_id, snapshot))
            self.changed.notify_all()

    def decline(self, checkpoint_id: int, reason: str) -> None:
        with self.changed:
            self.events.append(("decline", checkpoint_id, reason))
            self.changed.notify_all()

    def wait_for(self, n: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.events) >= n, WAIT_S)


class FakeWriter:
    """Writes ``files`` one at a time, each after ``gate`` is set; checks cancellation between."""

    def __init__(self, checkpoint_id: int, files: int = 3, fail_at: int | None = None) -> None:
        self.checkpoint_id = checkpoint_id
        self.files = files
        self.fail_at = fail_at
        self.gate = threading.Event()
        self.started = threading.Event()
        self.written: list[int] = []
        self.cleaned = False
        self.released = False

    def write(self, cancelled: threading.Event) -> TaskStateSnapshot:
        self.started.set()
        for i in range(self.files):
            assert self.gate.wait(WAIT_S)
            if cancelled.is_set():
                raise CheckpointCancelledError("cancelled")
            if i == self.fail_at:
                raise OSError("disk full")
            self.written.append(i)
        return TaskStateSnapshot()

    def cleanup(self) -> None:
        self.cleaned = True
        self.written.clear()

    def release(self) -> None:
        self.released = True

    def part(self) -> AsyncSnapshotPart:
        return AsyncSnapshotPart(self.checkpoint_id, self.write, self.cleanup, self.release)


def test_the_task_thread_returns_before_the_state_is_written_and_the_ack_follows_the_write() -> None:
    responder = Responder()
    runner = AsyncCheckpointRunner("t", responder, max_in_flight=2)
    writer = FakeWriter(1)
    assert runner.submit(writer.part())
    assert writer.started.wait(WAIT_S)
    assert responder.events == []  # nothing acknowledged while the files are being written
    writer.gate.set()
    responder.wait_for(1)
    assert responder.events[0][:2] == ("ack", 1)
    assert writer.written == [0, 1, 2] and writer.released and not writer.cleaned
    runner.close(cancel=False)


def test_acknowledgements_go_out_in_checkpoint_order() -> None:
    responder = Responder()
    runner = AsyncCheckpointRunner("t", responder, max_in_flight=3)
    writers = [FakeWriter(i) for i in (1, 2, 3)]
    for w in writers:
        assert runner.submit(w.part())
    for w in reversed(writers):
        w.gate.set()
    responder.wait_for(3)
    assert [e[1] for e in responder.events] == [1, 2, 3]
    runner.close(cancel=False)


def test_at_most_max_in_flight_parts_and_submit_waits_for_a_slot() -> None:
    responder = Responder()
    runner = AsyncCheckpointRunner("t", responder, max_in_flight=1)
    first, second = FakeWriter(1), FakeWriter(2)
    assert runner.submit(first.part())
    submitted = threading.Event()

    def submit_second() -> None:
        runner.submit(second.part())
        submitted.set()

    t = threading.Thread(target=submit_second)
    t.start()
    assert first.started.wait(WAIT_S)
    assert not submitted.is_set() and runner.in_flight == 1
    first.gate.set()
    assert submitted.wait(WAIT_S)
    second.gate.set()
    responder.wait_for(2)
    t.join(WAIT_S)
    assert [e[:2] for e in responder.events] == [("ack", 1), ("ack", 2)]
    runner.close(cancel=False)


def test_an_aborted_checkpoint_stops_its_writer_cleans_up_and_neither_acks_nor_declines() -> None:
    responder = Responder()
    runner = AsyncCheckpointRunner("t", responder, max_in_flight=2)
    aborted, next_one = FakeWriter(1, files=5), FakeWriter(2)
    runner.submit(aborted.part())
    runner.submit(next_one.part())
    assert aborted.started.wait(WAIT_S)
    runner.abort(1)
    aborted.gate.set()
    next_one.gate.set()
    responder.wait_for(1)
    runner.close(cancel=False)
    assert aborted.cleaned and aborted.written == []
    assert [e[:2] for e in responder.events] == [("ack", 2)]


def test_a_failure_while_writing_cleans_up_and_declines_with_the_error() -> None:
    responder = Responder()
    runner = AsyncCheckpointRunner("t", responder)
    writer = FakeWriter(7, fail_at=1)
    writer.gate.set()
    runner.submit(writer.part())
    responder.wait_for(1)
    kind, cid, reason = responder.events[0]
    assert (kind, cid) == ("decline", 7) and "disk full" in str(reason)
    assert writer.cleaned and writer.written == []
    runner.close(cancel=False)


def test_closing_with_cancel_stops_every_part_in_flight() -> None:
    responder = Responder()
    runner = AsyncCheckpointRunner("t", responder, max_in_flight=2)
    running, queued = FakeWriter(1), FakeWriter(2)
    running_part = running.part()
    runner.submit(running_part)
    runner.submit(queued.part())
    assert running.started.wait(WAIT_S)
    closer = threading.Thread(target=runner.close, args=(True,))
    closer.start()
    assert running_part.cancelled.wait(WAIT_S)
    running.gate.set()
    closer.join(WAIT_S)
    assert running.cleaned and queued.cleaned
    assert not queued.started.is_set()
    assert responder.events == []
    late = FakeWriter(3)
    assert not runner.submit(late.part()) and late.cleaned  # a closed runner takes no more


def test_a_task_cancelled_while_waiting_for_a_slot_gives_up_the_capture() -> None:
    runner = AsyncCheckpointRunner("t", Responder(), max_in_flight=1)
    first, second = FakeWriter(1), FakeWriter(2)
    runner.submit(first.part())
    assert not runner.submit(second.part(), task_cancelled=lambda: True)
    assert second.cleaned
    first.gate.set()
    runner.close(cancel=True)


def test_max_in_flight_must_be_positive() -> None:
    with pytest.raises(ValueError):
        AsyncCheckpointRunner("t", None, max_in_flight=0)

"""A checkpoint trigger reaches a source task between two records, however slow its chain is.

Time is an injected clock that the chained user function advances (50 ms per record, as in
bench/checkpoint_bench.py's slow-map row), so the assertions count records, not seconds.
"""

from __future__ import annotations

import threading
from typing import Any

from flott.runtime.checkpoint.metadata import TaskStateSnapshot
from flott.runtime.execution.environment import OutputEdge, TriggerCheckpointMail
from flott.runtime.io.network.api import CheckpointBarrier
from flott.runtime.jobgraph import JobEdge, PartitionerDescriptor, new_id
from flott.runtime.tasks.source_batch_size import MAILBOX_LATENCY_TARGET_NS, SourceBatchSize
from flott.runtime.tasks.stream_task import StreamTask
from tests.operators.task_harness import (
    Blobs,
    CollectingPartitionWriter,
    CollectionSource,
    make_env,
    op,
    vertex,
)

MS = 1_000_000

# --- the batch size, as a state machine -----------------------------------------------------


def test_cheap_records_grow_the_batch_to_the_configured_size() -> None:
    size = SourceBatchSize(1024)
    assert size.size == 1
    sizes = [size.observe(size.size, size.size * 3_000) for _ in range(12)]  # 3 µs per record
    assert sizes[:4] == [2, 4, 8, 16] and sizes[-1] == 1024


def test_a_record_slower_than_the_target_makes_batches_of_one() -> None:
    size = SourceBatchSize(1024)
    for _ in range(5):
        size.observe(size.size, size.size * 3_000)
    assert size.size == 32
    assert size.observe(32, 32 * 50 * MS) == 1  # the chain became slow: one record at a time
    assert size.observe(1, 50 * MS) == 1


def test_the_batch_shrinks_in_proportion_to_its_cost() -> None:
    size = SourceBatchSize(1024)
    size.size = 1024
    assert size.observe(1024, 4 * MAILBOX_LATENCY_TARGET_NS) == 256


def test_short_batches_from_the_source_and_backpressure_free_time_do_not_grow_it() -> None:
    size = SourceBatchSize(1024)
    size.size = 64
    assert size.observe(10, 1_000) == 64  # the source had only 10: no sign that 128 would be cheap
    assert size.observe(0, 0) == 64
    assert size.observe(64, MAILBOX_LATENCY_TARGET_NS * 3 // 4) == 64  # near the target: stays


# --- a source task with a slow chained map ----------------------------------------------------

_NOW = [0]
_SEEN: list[Any] = []
_TRIGGER_AT: list[int] = []
_MAILBOX: list[Any] = []


def fake_nanos() -> int:
    return _NOW[0]


def slow_map(value: int) -> int:
    """50 ms of the injected clock per record; posts the trigger while record ``_TRIGGER_AT`` runs."""
    _NOW[0] += 50 * MS
    _SEEN.append(value)
    if len(_SEEN) in _TRIGGER_AT:
        _MAILBOX[0].put(TriggerCheckpointMail(len(_SEEN), 0, "CHECKPOINT", _MAILBOX[1]))
    return value * 10


class BarrierRecordingWriter(CollectingPartitionWriter):
    """Records, per barrier it is sent, how many records the chain had processed by then (the
    synchronous part of the checkpoint ends when the barrier goes out)."""

    def __init__(self, num_subpartitions: int) -> None:
        super().__init__(num_subpartitions)
        self.barriers: list[tuple[int, int]] = []

    def broadcast_event(self, event: object) -> None:
        if isinstance(event, CheckpointBarrier):
            self.barriers.append((event.checkpoint_id, len(_SEEN)))


class Responder:
    def __init__(self) -> None:
        self.acks: list[tuple[int, int]] = []
        """(checkpoint id, records the chain had processed when the acknowledgement was sent:
        after the asynchronous part, so possibly later than the barrier)."""
        self.lock = threading.Lock()

    def acknowledge(self, checkpoint_id: int, snapshot: TaskStateSnapshot) -> None:
        with self.lock:
            self.acks.append((checkpoint_id, len(_SEEN)))

    def decline(self, checkpoint_id: int, reason: str) -> None:
        raise AssertionError(f"checkpoint {checkpoint_id} declined: {reason}")


def test_trigger_during_a_slow_record_is_taken_right_after_it(tmp_path: Any) -> None:
    """Flink's mailbox takes the barrier between two records: here the snapshot comes right after
    the record during which the trigger arrived, not after the rest of a 1,024-record batch."""
    _NOW[0] = 0
    _SEEN.clear()
    _TRIGGER_AT[:] = [3, 700]
    blobs = Blobs()
    v = vertex("src", 1, op(blobs, "source", CollectionSource(range(2000))), op(blobs, "map", slow_map))
    out = BarrierRecordingWriter(1)
    e = JobEdge(id=new_id(), source=v.id, target=new_id(), partitioner=PartitionerDescriptor(kind="forward"))
    env = make_env(v, blobs, outputs=[OutputEdge(e, out)])
    responder = Responder()
    env.checkpoint_responder = responder
    _MAILBOX[:] = [env.mailbox, str(tmp_path)]
    StreamTask(env, nanos=fake_nanos).invoke()
    # Record 3 is the third of the task's life: the first batches (1, 2 records) are the
    # slow start; from then on each batch is one record, so the trigger is handled next.
    assert out.barriers == [(3, 3), (700, 700)]
    assert [cid for cid, _ in responder.acks] == [3, 700]
    assert out.records() == [x * 10 for x in range(2000)]
    assert env.metrics.num_records_out == 2000


def test_cheap_records_still_travel_in_full_batches(tmp_path: Any) -> None:
    """With records far under the target the source polls full batches again (few per-batch costs)."""
    polls: list[int] = []
    blobs = Blobs()
    source = CollectionSource(range(10_000))
    v = vertex("src", 1, op(blobs, "source", source), op(blobs, "map", lambda x: x + 1))
    out = CollectingPartitionWriter(1)
    e = JobEdge(id=new_id(), source=v.id, target=new_id(), partitioner=PartitionerDescriptor(kind="forward"))
    env = make_env(v, blobs, outputs=[OutputEdge(e, out)])
    ticks = iter(range(0, 10**12, 1_000))  # every clock reading 1 µs later: batches look cheap
    task = StreamTask(env, nanos=lambda: next(ticks))
    original_build = task._run_source_loop

    def run_source_loop(chain: Any, outputs: Any) -> None:
        reader = chain.source.reader
        poll = reader.poll_batch

        def counted(n: int) -> Any:
            polls.append(n)
            return poll(n)

        reader.poll_batch = counted
        original_build(chain, outputs)

    task._run_source_loop = run_source_loop  # type: ignore[method-assign]
    task.invoke()
    assert out.records() == [x + 1 for x in range(10_000)]
    assert polls[:11] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    assert set(polls[11:]) == {1024}

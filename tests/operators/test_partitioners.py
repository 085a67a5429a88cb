"""Stream partitioners over batches, and the RecordWriter's buffering around them."""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Any

import numpy as np
import pytest

from flott.common import Types
from flott.errors import UserCodeError
from flott.runtime.execution.environment import TaskIOMetrics
from flott.runtime.jobgraph import PartitionerDescriptor, PartitionerKind
from flott.runtime.operators.declared_output_type import DeclaredOutputType
from flott.runtime.partitioner import (
    BroadcastPartitioner,
    ForwardPartitioner,
    GlobalPartitioner,
    KeyGroupStreamPartitioner,
    RebalancePartitioner,
    RescalePartitioner,
    ShufflePartitioner,
    StreamPartitioner,
    create_partitioner,
)
from flott.runtime.state.key_groups import assign_key_to_parallel_operator
from flott.runtime.tasks.record_writer import RecordWriter, RecordWriterDelegate
from tests.operators.task_harness import CollectingPartitionWriter


def distribute(partitioner: StreamPartitioner, channels: int, *batches: list[Any]) -> list[list[Any]]:
    partitioner.setup(channels)
    buffers: list[list[Any]] = [[] for _ in range(channels)]
    for batch in batches:
        partitioner.distribute(batch, buffers)
    return buffers


def test_hash_partitioner_routes_every_key_to_one_subtask_every_time() -> None:
    rng = random.Random(7)
    keys = [f"user-{rng.randrange(500)}" for _ in range(5000)] + list(range(300)) + [(1, "x"), (2, "y")] * 10
    records = [(k, i) for i, k in enumerate(keys)]
    part = KeyGroupStreamPartitioner(lambda r: r[0], max_parallelism=128)
    batches = [records[i : i + 97] for i in range(0, len(records), 97)]
    buffers = distribute(part, 4, *batches)
    owner: dict[Any, set[int]] = {}
    for channel, buffer in enumerate(buffers):
        for key, _ in buffer:
            owner.setdefault(key, set()).add(channel)
    assert all(len(channels) == 1 for channels in owner.values())
    assert sum(map(len, buffers)) == len(records)
    # The same channel as the stateless computation, i.e. as any other process would pick.
    for key, channels in owner.items():
        assert channels == {assign_key_to_parallel_operator(key, 128, 4)}
    # A second partitioner instance agrees (no per-instance randomness).
    again = distribute(KeyGroupStreamPartitioner(lambda r: r[0], 128), 4, records)
    assert again == buffers
    assert min(map(len, buffers)) > 0


def test_hash_partitioner_on_timestamped_records_keys_the_value() -> None:
    values = [(f"k{i % 37}", i) for i in range(1000)]
    stamped = [(v, 1000 + i) for i, v in enumerate(values)]
    plain = distribute(KeyGroupStreamPartitioner(lambda v: v[0], 128), 4, values)
    timed = distribute(KeyGroupStreamPartitioner(lambda v: v[0], 128, timestamped=True), 4, stamped)
    assert [[v for v, _ in buffer] for buffer in timed] == plain
    assert all(ts == 1000 + v[1] for buffer in timed for v, ts in buffer)
    with pytest.raises(TypeError, match="unhashable key of type list"):
        distribute(KeyGroupStreamPartitioner(lambda v: [v], 128, timestamped=True), 2, [(1, 5)])


def test_rebalance_is_round_robin_across_batches() -> None:
    part = RebalancePartitioner(random.Random(1))
    buffers = distribute(part, 3, list(range(5)), list(range(5, 11)))
    assert sorted(map(len, buffers)) == [3, 4, 4]
    flat = sorted(x for b in buffers for x in b)
    assert flat == list(range(11))
    # consecutive records go to consecutive channels
    where = {x: c for c, b in enumerate(buffers) for x in b}
    assert all(where[i + 1] == (where[i] + 1) % 3 for i in range(10))


@pytest.mark.parametrize(
    ("producers", "consumers", "expected"),
    [
        (2, 4, {0: {0, 1}, 1: {2, 3}}),
        (4, 2, {0: {0}, 1: {0}, 2: {1}, 3: {1}}),
        (3, 3, {0: {0}, 1: {1}, 2: {2}}),
    ],
)
def test_rescale_only_connects_neighbouring_subtasks(producers: int, consumers: int, expected: dict) -> None:
    for subtask in range(producers):
        buffers = distribute(RescalePartitioner(subtask, producers), consumers, list(range(40)))
        assert {c for c, b in enumerate(buffers) if b} == expected[subtask]


def test_forward_global_broadcast_shuffle() -> None:
    assert distribute(ForwardPartitioner(2), 4, [1, 2]) == [[], [], [1, 2], []]
    assert distribute(ForwardPartitioner(2), 1, [1, 2]) == [[1, 2]]
    assert distribute(GlobalPartitioner(), 3, [1, 2]) == [[1, 2], [], []]
    assert distribute(BroadcastPartitioner(), 3, [1, 2]) == [[1, 2], [1, 2], [1, 2]]
    shuffled = distribute(ShufflePartitioner(random.Random(3)), 4, list(range(4000)))
    assert sorted(x for b in shuffled for x in b) == list(range(4000))
    assert all(800 < len(b) < 1200 for b in shuffled)


def test_create_partitioner_knows_every_edge_kind() -> None:
    kinds: list[PartitionerKind] = ["forward", "rebalance", "rescale", "shuffle", "broadcast", "global"]
    for kind in kinds:
        p = create_partitioner(
            PartitionerDescriptor(kind=kind), subtask_index=0, parallelism=1, max_parallelism=128
        )
        assert isinstance(p, StreamPartitioner)
    hashed = create_partitioner(
        PartitionerDescriptor(kind="hash", key_selector="x"),
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        key_selector=lambda r: r,
    )
    assert isinstance(hashed, KeyGroupStreamPartitioner)


def test_record_writer_emits_batch_size_buffers_and_keeps_the_rest() -> None:
    out = CollectingPartitionWriter(2)
    metrics = TaskIOMetrics()
    writer = RecordWriter(
        out, KeyGroupStreamPartitioner(lambda x: x % 2, 128), batch_size=10, metrics=metrics
    )
    writer.write(list(range(15)))
    emitted = [len(b) for part in out.buffers for b in part]
    assert all(n >= 10 for n in emitted)
    assert writer.pending_since_ns is not None
    writer.write(list(range(15, 100)))
    writer.flush()
    assert sorted(out.records()) == list(range(100))
    assert Counter(x % 2 for x in out.records(0)).most_common(1)[0][1] == len(out.records(0))
    assert writer.pending_since_ns is None
    assert all(len(b) <= 19 for part in out.buffers for b in part)
    assert metrics.num_buffers_out == sum(len(p) for p in out.buffers)


def test_record_writer_splits_huge_batches() -> None:
    out = CollectingPartitionWriter(1)
    writer = RecordWriter(out, ForwardPartitioner(0), batch_size=100, metrics=TaskIOMetrics())
    writer.write(list(range(1050)))
    assert [len(b) for b in out.buffers[0]] == [100] * 10
    writer.finish()
    assert [len(b) for b in out.buffers[0]] == [100] * 10 + [50] and out.finished


class SelfMeasuringWriter(CollectingPartitionWriter):
    """Like the network's ResultPartition: counts the time emit really waited for credit."""

    back_pressured_time_ns = 0

    def emit(self, subpartition: int, records: list[Any]) -> None:
        time.sleep(0.01)  # "serialising": busy, not back-pressured
        self.back_pressured_time_ns += 5
        super().emit(subpartition, records)


def test_back_pressure_is_what_the_writer_measured_when_it_measures() -> None:
    metrics = TaskIOMetrics()
    writer = RecordWriter(SelfMeasuringWriter(1), ForwardPartitioner(0), batch_size=2, metrics=metrics)
    writer.write([1, 2])
    assert metrics.back_pressured_time_ns == 5 and metrics.num_buffers_out == 1
    plain = TaskIOMetrics()
    slow = RecordWriter(CollectingPartitionWriter(1), ForwardPartitioner(0), batch_size=1, metrics=plain)
    slow.write([1])
    assert plain.back_pressured_time_ns > 0


def _typed_delegate(
    writers: int, declared_type: Any, *, timestamped: bool = False
) -> tuple[RecordWriterDelegate, list[CollectingPartitionWriter]]:
    """A task's outputs as RecordWriterDelegate.create builds them: ``writers`` hash-partitioned
    edges of a producer that declared ``declared_type``."""
    outs = [CollectingPartitionWriter(2) for _ in range(writers)]
    metrics = TaskIOMetrics()
    record_writers = [
        RecordWriter(
            out,
            KeyGroupStreamPartitioner(lambda v: v[0], 128, timestamped=timestamped),
            batch_size=4,
            metrics=metrics,
        )
        for out in outs
    ]
    declared = DeclaredOutputType.of(declared_type, "pair", "t (1/1)", keyed=True, timestamped=timestamped)
    return RecordWriterDelegate(record_writers, metrics, -1, None, timestamped, declared), outs


@pytest.mark.parametrize("timestamped", [False, True])
def test_declared_type_checked_in_the_hash_partitioners_loop_as_in_front_of_it(timestamped: bool) -> None:
    """One hash-partitioned output takes the check into its routing loop; two outputs check the
    batch in front of their partitioners. Both deliver the same converted records to the same
    channels and refuse a record that does not fit with PyFlink's error."""
    declared = Types.TUPLE([Types.STRING(), Types.FLOAT()])
    values = [(f"k{i % 7}", i if i % 3 else i + 0.1) for i in range(40)]
    batch = [(v, 100 + i) for i, v in enumerate(values)] if timestamped else values
    delivered = []
    for writers in (1, 2):
        delegate, outs = _typed_delegate(writers, declared, timestamped=timestamped)
        delegate.write(batch)
        delegate.flush()
        delivered.append([outs[0].records(0), outs[0].records(1)])
    assert delivered[0] == delivered[1]
    records = delivered[0][0] + delivered[0][1]
    got = sorted(r[0] if timestamped else r for r in records)
    # An int declared FLOAT arrives as a float, a double declared FLOAT rounded to 32 bits.
    assert got == sorted((k, float(np.float32(x))) for k, x in values)
    assert all(type(v[1]) is float for v in got)
    for writers in (1, 2):
        delegate, _ = _typed_delegate(writers, declared, timestamped=timestamped)
        bad = [("k", 1.0), ("k", "x")]
        with pytest.raises(UserCodeError, match="'pair' emitted"):
            delegate.write([(v, 1) for v in bad] if timestamped else bad)

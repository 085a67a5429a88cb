"""Priority events (an unaligned checkpoint's barrier) overtake queued buffers without credit.

Real sockets between two ShuffleEnvironments: the producer's subpartition is full and the
consumer's channel holds its whole credit's worth of frames when the barrier is sent; it must
still arrive first, say what it overtook on each side, and leave credit-based flow control
exactly as it was (no deadlock, no extra buffers in flight).
"""

from __future__ import annotations

import time

import pytest
from conftest import EnvFactory, Worker

from flott.errors import TaskCancelledError
from flott.runtime.io.network import EndOfPartition, InputChannelSpec
from flott.runtime.io.network.api import CheckpointBarrier
from flott.runtime.io.network.partition import ResultPartition
from flott.runtime.io.network.protocol import HEADER_SIZE
from flott.runtime.io.network.record_codec import deserialize

pytestmark = pytest.mark.timeout(30)


def barrier(cid: int) -> CheckpointBarrier:
    return CheckpointBarrier(cid, 0, "CHECKPOINT", f"/chk-{cid}")


def test_priority_event_goes_ahead_of_the_queue_and_returns_what_it_overtook() -> None:
    partition = ResultPartition("p", 1, buffers_per_channel=3)
    sub = partition.subpartition(0)
    for i in range(3):
        partition.emit(0, [i])
    overtaken = partition.broadcast_priority_event(barrier(1))
    assert overtaken == [[[0], [1], [2]]]
    second = partition.broadcast_priority_event(barrier(2))
    assert second == [[[0], [1], [2]]], "a priority event queues behind earlier ones, not before"
    taken = [sub.take_one()[0] for _ in range(5)]
    assert [type(t) for t in taken[:2]] == [CheckpointBarrier, CheckpointBarrier]
    assert [t.checkpoint_id for t in taken[:2]] == [1, 2]  # type: ignore[union-attr]
    assert taken[2:] == [[0], [1], [2]]


def test_priority_event_does_not_wait_for_space_but_a_released_partition_refuses_it() -> None:
    partition = ResultPartition("p", 2, buffers_per_channel=1)
    partition.emit(0, ["a"])
    partition.emit(1, ["b"])
    assert partition.broadcast_priority_event(barrier(1)) == [[["a"]], [["b"]]]
    partition.release()
    with pytest.raises(TaskCancelledError):
        partition.broadcast_priority_event(barrier(2))


def test_remote_reader_sends_priority_events_without_credit() -> None:
    partition = ResultPartition("p", 1, buffers_per_channel=2)
    sub = partition.subpartition(0)
    partition.emit(0, [1])
    partition.emit(0, [2])
    partition.broadcast_priority_event(barrier(1))
    taken, error = sub.take_many(0)
    assert error is None and len(taken) == 1, "no credit: only the priority event goes"
    taken, error = sub.take_many(1)
    assert taken == [[1]], "the priority event used no slot of the credit"


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_barrier_overtakes_in_flight_data_under_backpressure(make_env: EnvFactory, mode: str) -> None:
    credit = 3
    producer_env = make_env(buffers_per_channel=credit)
    consumer_env = producer_env if mode == "local" else make_env(buffers_per_channel=credit)
    partition = producer_env.create_result_partition("job1-ds1-0-0", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "job1-ds1-0-0", 0)])
    before = [[i] for i in range(10)]
    after = [[i] for i in range(10, 20)]

    def produce_until_blocked() -> None:
        for batch in before:
            partition.emit(0, batch)

    producer = Worker(produce_until_blocked, "producer")
    producer.start()
    # The consumer polls nothing: the producer fills its subpartition (and the consumer's credit)
    # and blocks in emit. That is backpressure.
    deadline = time.monotonic() + 5
    while not partition.is_back_pressured and time.monotonic() < deadline:
        time.sleep(0.01)
    assert partition.is_back_pressured
    if mode == "remote":
        channel = gate.channels[0]
        while channel.num_queued_buffers < credit and time.monotonic() < deadline:
            time.sleep(0.01)
        assert channel.num_queued_buffers == credit, "the consumer holds a full credit's worth"

    # The barrier is added from the producer's side while its task thread is blocked (in the
    # runtime the task thread adds it itself, between two emits).
    overtaken_at_producer = partition.broadcast_priority_event(barrier(7))[0]
    if mode == "remote":
        while channel.num_queued_buffers < credit + 1 and time.monotonic() < deadline:
            time.sleep(0.01)  # the barrier frame is on its way (it needs no credit)
        assert channel.num_queued_buffers == credit + 1

    first = gate.poll(5)
    assert first is not None and type(first[1]) is CheckpointBarrier and first[1].checkpoint_id == 7
    overtaken_at_consumer = gate.overtaken(0)
    if mode == "local":
        assert overtaken_at_consumer == 0
    else:
        assert overtaken_at_consumer == credit

    def produce_rest() -> bool:
        producer.finish()
        for batch in after:
            partition.emit(0, batch)
        partition.finish()
        return partition.wait_until_consumed(5)

    rest = Worker(produce_rest, "producer-rest")
    rest.start()
    received: list[object] = []
    max_queued = 0
    while not gate.is_finished:
        item = gate.poll(5)
        assert item is not None, f"stalled after {len(received)} items: credit was lost"
        received.append(item[1])
        if mode == "remote":
            max_queued = max(max_queued, gate.channels[0].num_queued_buffers)
    assert rest.finish() is True
    assert isinstance(received[-1], EndOfPartition)
    batches = [r for r in received if isinstance(r, list)]
    assert batches == before + after, "the barrier overtook data; the data itself stays in order"
    # Every buffer emitted before the barrier is in exactly one of the two overtaken sets, and
    # overtaken_at_consumer items are the first ones the consumer gets after the barrier.
    # (a remote reader's buffers are serialised already: decode them as the consumer would)
    decoded = [
        b if isinstance(b, list) else deserialize(b.frame[HEADER_SIZE:])  # type: ignore[attr-defined]
        for b in overtaken_at_producer
    ]
    assert batches[overtaken_at_consumer : overtaken_at_consumer + len(decoded)] == decoded
    # Everything queued when the barrier went is overtaken exactly once: a full subpartition,
    # plus (remote) a full credit's worth at the consumer; the blocked emit comes after it.
    assert overtaken_at_consumer + len(decoded) == (2 * credit if mode == "remote" else credit)
    if mode == "remote":
        assert max_queued <= credit, "the barrier took no credit and gave none back"


def test_remote_channel_records_in_flight_data_where_it_arrives(make_env: EnvFactory) -> None:
    """An unaligned checkpoint's input state of a remote channel: what is queued when recording
    starts plus what arrives until the channel's barrier, without the task processing any of it."""
    credit = 3
    producer_env, consumer_env = make_env(buffers_per_channel=credit), make_env(buffers_per_channel=credit)
    partition = producer_env.create_result_partition("job1-ds1-0-0", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "job1-ds1-0-0", 0)])
    channel = gate.channels[0]
    for i in range(credit):
        partition.emit(0, [i])
    deadline = time.monotonic() + 5
    while channel.num_queued_buffers < credit and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gate.start_recording(0, after_barrier=False) is True
    first = gate.poll(5)
    assert first is not None and first[1] == [0], "the task goes on processing as usual"
    partition.emit(0, [credit])  # the poll gave credit back: this one is sent while recording
    while channel.num_queued_buffers < credit and time.monotonic() < deadline:
        time.sleep(0.01)
    overtaken = partition.broadcast_priority_event(barrier(1))[0]
    polled = gate.poll(5)
    while polled is not None and type(polled[1]) is not CheckpointBarrier:
        polled = gate.poll(5)
    assert polled is not None
    recorded = [deserialize(p) for p in gate.take_recording(0)]
    decoded = [
        b if isinstance(b, list) else deserialize(b.frame[HEADER_SIZE:])  # type: ignore[attr-defined]
        for b in overtaken
    ]
    assert recorded + decoded == [[i] for i in range(credit + 1)], (
        "each batch before the barrier is in exactly one side's channel state"
    )
    partition.finish()

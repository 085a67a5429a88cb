"""Data moves correctly: local and remote channels, ordering, events, all-to-all, fairness."""

from __future__ import annotations

import threading
import time

import msgspec
import pytest
from conftest import EnvFactory, Worker

from flott.errors import DataExchangeError
from flott.runtime.io.network import ChannelEvent, EndOfPartition, InputChannelSpec, SingleInputGate

pytestmark = pytest.mark.timeout(30)


class Marker(ChannelEvent, frozen=True):
    """A test event travelling in band with the data."""

    seq: int


def drain(gate: SingleInputGate, timeout: float = 5.0) -> list[tuple[int, object]]:
    """Poll until every channel ended; fail if nothing arrives for ``timeout`` seconds."""
    out: list[tuple[int, object]] = []
    while not gate.is_finished:
        item = gate.poll(timeout)
        assert item is not None, f"gate stalled after {len(out)} items"
        out.append(item)
    return out


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_single_channel_delivers_every_batch_and_event_in_order(make_env: EnvFactory, mode: str) -> None:
    producer_env = make_env(buffers_per_channel=2)
    consumer_env = producer_env if mode == "local" else make_env(buffers_per_channel=2)
    partition = producer_env.create_result_partition("job1-ds1-0-0", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "job1-ds1-0-0", 0)])
    sent: list[list[tuple[int, str]]] = []

    def produce() -> bool:
        for i in range(200):
            batch = [(i, f"r{j}") for j in range(i % 7 + 1)]
            sent.append(batch)
            partition.emit(0, batch)
            if i % 50 == 49:
                partition.broadcast_event(Marker(i))
        partition.finish()
        return partition.wait_until_consumed(5)

    producer = Worker(produce, "producer")
    producer.start()
    received = drain(gate)
    assert producer.finish() is True

    assert all(index == 0 for index, _ in received)
    items = [item for _, item in received]
    assert isinstance(items[-1], EndOfPartition)
    batches = [item for item in items if isinstance(item, list)]
    events = [item for item in items if isinstance(item, Marker)]
    assert batches == sent
    assert [e.seq for e in events] == [49, 99, 149, 199]
    # events sit exactly where they were broadcast
    assert items.index(events[0]) == 50
    if mode == "local":
        assert all(a is b for a, b in zip(batches, sent, strict=True)), "local channels must not copy"
    else:
        assert consumer_env.metrics.buffers_received == 204
        assert producer_env.metrics.buffers_sent == 205  # 200 buffers + 4 events + EndOfPartition
    assert gate.num_buffers_received == 200
    # a fully consumed partition is forgotten by its environment
    assert producer_env.partition_ids == []
    assert gate.poll(0.01) is None


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_consumer_may_start_before_producer_emits(make_env: EnvFactory, mode: str) -> None:
    producer_env = make_env()
    consumer_env = producer_env if mode == "local" else make_env()
    partition = producer_env.create_result_partition("p", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "p", 0)])
    assert gate.poll(0.05) is None  # nothing yet: times out
    partition.emit(0, [1, 2, 3])
    assert gate.poll(5) == (0, [1, 2, 3])
    partition.finish()
    index, item = gate.poll(5) or (None, None)
    assert index == 0 and isinstance(item, EndOfPartition)
    assert gate.is_finished


def test_all_to_all_between_three_task_executors(make_env: EnvFactory) -> None:
    """3 producers x 3 consumers on 3 environments: 1 local + 2 remote channels per consumer."""
    envs = [make_env(buffers_per_channel=2) for _ in range(3)]
    n, batches = 3, 60
    partitions = [env.create_result_partition(f"job-ds-{p}-0", n) for p, env in enumerate(envs)]
    gates = [
        envs[c].create_input_gate([InputChannelSpec(envs[p].address, f"job-ds-{p}-0", c) for p in range(n)])
        for c in range(n)
    ]

    def produce(p: int) -> bool:
        for seq in range(batches):
            for c in range(n):
                partitions[p].emit(c, [(p, c, seq, k) for k in range(10)])
        partitions[p].finish()
        return partitions[p].wait_until_consumed(10)

    producers = [Worker(lambda p=p: produce(p), f"producer-{p}") for p in range(n)]
    consumers = [Worker(lambda g=g: drain(g), f"consumer-{c}") for c, g in enumerate(gates)]
    for t in producers + consumers:
        t.start()
    results = [w.finish() for w in consumers]
    assert all(w.finish() is True for w in producers)

    for c, received in enumerate(results):
        per_channel: dict[int, list[int]] = {p: [] for p in range(n)}
        for index, item in received:
            if isinstance(item, list):
                assert all(r[0] == index and r[1] == c for r in item)
                per_channel[index].append(item[0][2])
        assert per_channel == {p: list(range(batches)) for p in range(n)}
    # one shared connection per pair of environments (consumer side opens it)
    for env in envs:
        assert env.metrics.connections_opened == 2
        assert env.partition_ids == []


def test_poll_is_fair_across_channels(make_env: EnvFactory) -> None:
    env = make_env(buffers_per_channel=4)
    partitions = [env.create_result_partition(f"p{i}", 1) for i in range(3)]
    for i, partition in enumerate(partitions):
        for seq in range(4):
            partition.emit(0, [i, seq])
    gate = env.create_input_gate([InputChannelSpec(env.address, f"p{i}", 0) for i in range(3)])
    order = [item[0] for item in (gate.poll(1) for _ in range(12)) if item is not None]
    assert len(order) == 12
    # round robin: every window of three polls sees every channel once
    for start in range(0, 12, 3):
        assert sorted(order[start : start + 3]) == [0, 1, 2]


def test_channels_to_one_producer_share_one_connection(make_env: EnvFactory) -> None:
    producer_env, consumer_env = make_env(), make_env()
    partition = producer_env.create_result_partition("p", 4)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "p", i) for i in range(4)])
    for i in range(4):
        partition.emit(i, [i])
    partition.finish()
    received = drain(gate)
    assert sorted(item for _, item in received if isinstance(item, list)) == [[0], [1], [2], [3]]
    assert consumer_env.metrics.connections_opened == 1
    assert partition.wait_until_consumed(5)
    # the idle connection is closed once every channel on it ended
    deadline = time.monotonic() + 5
    while consumer_env.snapshot_metrics()["num_connections"] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert consumer_env.snapshot_metrics()["num_connections"] == 0


def test_large_batch_spans_many_tcp_reads(make_env: EnvFactory) -> None:
    producer_env, consumer_env = make_env(), make_env()
    partition = producer_env.create_result_partition("big", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "big", 0)])
    big = [(f"{i:0100d}", i) for i in range(50_000)]  # ~5.5 MB pickled
    partition.emit(0, big)
    partition.finish()
    received = drain(gate)
    assert received[0] == (0, big)
    assert consumer_env.metrics.bytes_received > 5_000_000


def test_zero_channel_gate_and_zero_subpartition_partition(make_env: EnvFactory) -> None:
    env = make_env()
    gate = env.create_input_gate([])
    assert gate.is_finished and gate.poll(None) is None
    partition = env.create_result_partition("empty", 0)
    assert partition.wait_until_consumed(0.01) is False
    partition.finish()
    assert partition.wait_until_consumed(0.01) is True


def test_release_partitions_by_prefix_and_by_ids(make_env: EnvFactory) -> None:
    env = make_env()
    for pid in ("jobA-1", "jobA-2", "jobB-1", "jobB-2"):
        env.create_result_partition(pid, 1)
    assert env.release_partitions("jobA-") == 2
    assert sorted(env.partition_ids) == ["jobB-1", "jobB-2"]
    assert env.release_partitions(["jobB-2", "unknown"]) == 1
    assert env.release_partition("jobB-1") is True
    assert env.release_partition("jobB-1") is False
    assert env.partition_ids == []
    with pytest.raises(DataExchangeError, match="already registered"):
        env.create_result_partition("x", 1)
        env.create_result_partition("x", 1)


def test_channel_spec_is_wire_data() -> None:
    """Deployment descriptors carry specs through msgpack; they must round-trip."""
    spec = InputChannelSpec("10.0.0.1:6121", "job-ds-3-0", 2)
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(spec), type=InputChannelSpec) == spec


def test_records_of_classes_defined_in_user_code_cross_the_network(make_env: EnvFactory) -> None:
    """Classes the job script defines are not importable by name in a TaskExecutor; they still travel."""

    class Purchase:  # a local class: plain pickle refuses it, like a class from the user's __main__
        def __init__(self, user: str, amount: float) -> None:
            self.user, self.amount = user, amount

    producer_env, consumer_env = make_env(), make_env()
    partition = producer_env.create_result_partition("p", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "p", 0)])
    partition.emit(0, [Purchase("ann", 3.5), Purchase("bob", 1.0)])
    partition.emit(0, [Purchase("cid", 2.0)])
    partition.emit(0, [(1, lambda x: x + 1)])
    partition.finish()
    received = [item for _, item in drain(gate) if isinstance(item, list)]
    assert [(p.user, p.amount) for p in received[0] + received[1]] == [
        ("ann", 3.5),
        ("bob", 1.0),
        ("cid", 2.0),
    ]
    # every batch maps back to one and the same class on the consumer
    assert type(received[0][0]) is type(received[1][0])
    assert received[2][0][1](41) == 42


def test_unserialisable_record_fails_the_emit(make_env: EnvFactory) -> None:
    producer_env, consumer_env = make_env(), make_env()
    partition = producer_env.create_result_partition("p", 1)
    gate = consumer_env.create_input_gate([InputChannelSpec(producer_env.address, "p", 0)])
    deadline = time.monotonic() + 5
    while not partition.subpartition(0).has_consumer and time.monotonic() < deadline:
        time.sleep(0.005)
    with pytest.raises(TypeError, match="lock"):
        partition.emit(0, [threading.Lock()])
    partition.emit(0, ["fine"])  # the failed batch was never queued; the channel still works
    partition.finish()
    assert drain(gate)[0] == (0, ["fine"])

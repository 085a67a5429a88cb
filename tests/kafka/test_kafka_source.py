"""The Kafka source's reader against the test broker: assignment, offsets initializers, stopping,
snapshot and restore at other parallelisms (no record lost or read twice), bad records."""

from __future__ import annotations

import pickle
import uuid

import cloudpickle
import pytest

from flott.common import Types
from flott.common.serialization import SimpleStringSchema
from flott.datastream.connectors.base import Boundedness, split_share
from flott.datastream.connectors.kafka import (
    KafkaOffsetResetStrategy,
    KafkaOffsetsInitializer,
    KafkaRecord,
    KafkaRecordDeserializationSchema,
    KafkaSource,
    KafkaSourceBuilder,
    KafkaTopicPartition,
)
from flott.datastream.connectors.kafka_source import java_string_hash, new_owned_partitions, split_owner
from flott.datastream.formats.json import JsonRowDeserializationSchema
from flott.errors import ConfigurationError
from tests.kafka.broker import Broker


def builder(broker: Broker, topic: str) -> KafkaSourceBuilder:
    return (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap)
        .set_topics(topic)
        .set_value_only_deserializer(SimpleStringSchema())
    )


def drain(reader: object, max_records: int = 50) -> list:
    out: list = []
    while (batch := reader.poll_batch(max_records)) is not None:  # type: ignore[attr-defined]
        out.extend(batch)
    reader.close()  # type: ignore[attr-defined]
    return out


def read_all(source: KafkaSource, parallelism: int = 1) -> list:
    source = cloudpickle.loads(cloudpickle.dumps(source))
    return [r for i in range(parallelism) for r in drain(source.create_reader(i, parallelism))]


@pytest.fixture
def topic3(kafka_broker: Broker) -> str:
    topic = kafka_broker.create_topic(partitions=3)
    for p in range(3):
        kafka_broker.produce(topic, [f"{p}:{i}".encode() for i in range(40)], partition=p)
    return topic


def test_partitions_are_owned_as_flink_assigns_them() -> None:
    assert java_string_hash("orders") == -1008770331  # Java: "orders".hashCode()
    assert java_string_hash("") == 0
    owners = [split_owner("orders", p, 4) for p in range(8)]
    start = ((java_string_hash("orders") * 31) & 0x7FFFFFFF) % 4
    assert owners == [(start + p) % 4 for p in range(8)]


def test_bounded_reading_at_any_parallelism_reads_each_record_once(kafka_broker: Broker, topic3: str) -> None:
    source = builder(kafka_broker, topic3).set_bounded(KafkaOffsetsInitializer.latest()).build()
    assert source.get_boundedness() is Boundedness.BOUNDED
    assert source.get_produced_type() == Types.STRING()
    expected = sorted(f"{p}:{i}" for p in range(3) for i in range(40))
    for parallelism in (1, 2, 5):
        assert sorted(read_all(source, parallelism)) == expected
    per_partition = [r for r in read_all(source) if r.startswith("1:")]
    assert per_partition == [f"1:{i}" for i in range(40)], "in order within a partition"


def test_snapshot_then_restore_at_other_parallelisms_loses_and_duplicates_nothing(
    kafka_broker: Broker, topic3: str
) -> None:
    source = builder(kafka_broker, topic3).set_bounded(KafkaOffsetsInitializer.latest()).build()
    before: list = []
    pooled: list = []
    for i in range(2):
        reader = source.create_reader(i, 2)
        while len(before) < 25 * (i + 1):
            before.extend(reader.poll_batch(7) or [])
        pooled.extend(pickle.loads(pickle.dumps(reader.snapshot_state(1))))
        reader.poll_batch(7)  # read after the barrier: lost with the crash, read again after restore
        reader.close()
    assert [e for e in pooled if e[0] == "kafka-reader"] == [("kafka-reader", 0, 2), ("kafka-reader", 1, 2)]
    everything = sorted(f"{p}:{i}" for p in range(3) for i in range(40))
    for new_p in (1, 3):
        after = []
        for i in range(new_p):
            restored = cloudpickle.loads(cloudpickle.dumps(source))
            # UNION state: every new subtask sees all old splits and keeps the partitions it owns
            reader = restored.restore_reader(i, new_p, pooled)
            owned = {tp for tp in reader.active_split_keys()}
            assert owned == {(topic3, p) for p in range(3) if split_owner(topic3, p, new_p) == i}
            after.extend(drain(reader))
        assert sorted(before + after) == everything
    # state without reader headers (checkpoints of older versions): each takes its share as given
    legacy = [e for e in pooled if e[0] != "kafka-reader"]
    after = []
    for i in range(2):
        restored = cloudpickle.loads(cloudpickle.dumps(source))
        after.extend(drain(restored.restore_reader(i, 2, split_share(legacy, i, 2))))
    assert sorted(before + after) == everything


def test_new_partitions_are_new_to_the_job_and_owned_by_the_flink_rule() -> None:
    known = {("a", 0), ("a", 1)}
    listed = [("a", 0), ("a", 1), ("a", 2), ("a", 3), ("b", 0)]
    for parallelism in (1, 2, 3):
        taken = []
        for subtask in range(parallelism):
            new, mine = new_owned_partitions(listed, known, subtask, parallelism)
            assert new == [("a", 2), ("a", 3), ("b", 0)]
            assert all(split_owner(t, p, parallelism) == subtask for t, p in mine)
            taken.extend(mine)
        assert sorted(taken) == new, "each new partition is taken by exactly one subtask"


def test_partition_discovery_defaults_are_flinks(kafka_broker: Broker) -> None:
    unbounded = builder(kafka_broker, "t").build()
    assert unbounded._settings["discovery_ms"] == 300_000  # KafkaSourceOptions' 5 minutes
    bounded = builder(kafka_broker, "t").set_property("partition.discovery.interval.ms", "10")
    assert bounded.set_bounded(KafkaOffsetsInitializer.latest()).build()._settings["discovery_ms"] == -1
    set_off = builder(kafka_broker, "t").set_property("partition.discovery.interval.ms", "0").build()
    assert set_off._settings["discovery_ms"] == 0
    with pytest.raises(ConfigurationError, match="not a number"):
        builder(kafka_broker, "t").set_property("partition.discovery.interval.ms", "soon").build()


def _poll_until(reader: object, want: int, timeout_s: float = 30.0) -> list:
    import time

    out: list = []
    deadline = time.monotonic() + timeout_s
    while len(out) < want and time.monotonic() < deadline:
        out.extend(reader.poll_batch(100) or [])  # type: ignore[attr-defined]
    return out


def test_topics_matching_the_pattern_created_while_reading_are_read_from_their_start(
    kafka_broker: Broker,
) -> None:
    stem = f"disc-{uuid.uuid4().hex[:6]}"
    first = kafka_broker.create_topic(partitions=2, name=f"{stem}-a")
    for p in range(2):
        kafka_broker.produce(first, [f"a{p}:{i}".encode() for i in range(10)], partition=p)
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(kafka_broker.bootstrap)
        .set_topic_pattern(stem + "-.*")
        .set_value_only_deserializer(SimpleStringSchema())
        .set_starting_offsets(KafkaOffsetsInitializer.latest())  # the initial partitions: the user's
        .set_property("partition.discovery.interval.ms", "100")
        .build()
    )
    readers = [cloudpickle.loads(cloudpickle.dumps(source)).create_reader(i, 2) for i in range(2)]
    try:
        for r in readers:
            assert r.poll_batch(100) == []
        kafka_broker.produce(first, [b"a0:late"], partition=0)
        second = kafka_broker.create_topic(partitions=3, name=f"{stem}-b")
        for p in range(3):
            kafka_broker.produce(second, [f"b{p}:{i}".encode() for i in range(5)], partition=p)
        got = []
        for _ in range(2):
            for r in readers:
                got.extend(_poll_until(r, 16 - len(got), timeout_s=5))
        # the old topic from "latest", the new one from its start (Flink: EARLIEST for discovered partitions)
        assert sorted(got) == sorted(["a0:late"] + [f"b{p}:{i}" for p in range(3) for i in range(5)])
        owners = {k for i, r in enumerate(readers) for k in r.active_split_keys() if k[0] == second}
        assert owners == {(second, p) for p in range(3)}
        for i, r in enumerate(readers):
            assert all(split_owner(t, p, 2) == i for t, p in r.active_split_keys())
        state = [e for r in readers for e in r.snapshot_state(7)]
        assert {(e[0], e[1]) for e in state if e[0] != "kafka-reader"} == {
            (first, 0), (first, 1), (second, 0), (second, 1), (second, 2)
        }, "discovered partitions are in the checkpoint"
    finally:
        for r in readers:
            r.close()
    # restored from that state, a topic created meanwhile is read from its start; nothing else again
    third = kafka_broker.create_topic(partitions=1, name=f"{stem}-c")
    kafka_broker.produce(third, [b"c0:0", b"c0:1"], partition=0)
    again = [source.restore_reader(i, 3, state) for i in range(3)]
    assert sorted(r for reader in again for r in _poll_until(reader, 2, timeout_s=5)) == ["c0:0", "c0:1"]
    for reader in again:
        assert _poll_until(reader, 1, timeout_s=0.5) == []
        reader.close()


def test_offsets_initializers(kafka_broker: Broker) -> None:
    topic = kafka_broker.create_topic(partitions=2)
    for p in range(2):
        kafka_broker.produce(
            topic,
            [f"{p}:{i}".encode() for i in range(10)],
            partition=p,
            timestamps=[1000 + i for i in range(10)],
        )
    latest = KafkaOffsetsInitializer.latest()

    def read(start: KafkaOffsetsInitializer, group: str | None = None) -> list:
        b = builder(kafka_broker, topic).set_starting_offsets(start).set_bounded(latest)
        if group:
            b.set_group_id(group)
        return sorted(read_all(b.build()))

    assert len(read(KafkaOffsetsInitializer.earliest())) == 20
    assert read(KafkaOffsetsInitializer.latest()) == []
    specific = KafkaOffsetsInitializer.offsets(
        {KafkaTopicPartition(topic, 0): 7, KafkaTopicPartition(topic, 1): 9}
    )
    assert read(specific) == ["0:7", "0:8", "0:9", "1:9"]
    group = f"g-{uuid.uuid4().hex[:6]}"
    with pytest.raises(ConfigurationError, match="no committed offset"):
        read(KafkaOffsetsInitializer.committed_offsets(), group)
    assert (
        len(read(KafkaOffsetsInitializer.committed_offsets(KafkaOffsetResetStrategy.EARLIEST), group)) == 20
    )
    assert read(KafkaOffsetsInitializer.committed_offsets(KafkaOffsetResetStrategy.LATEST), group) == []
    # offsets committed to the group when a checkpoint completes are where committed_offsets starts
    source = builder(kafka_broker, topic).set_group_id(group).set_bounded(latest).build()
    reader = source.create_reader(0, 1)
    got: list = []
    while len(got) < 5:
        got.extend(reader.poll_batch(1) or [])
    reader.snapshot_state(3)
    reader.notify_checkpoint_complete(3)
    reader.close()
    rest = read(KafkaOffsetsInitializer.committed_offsets(), group)
    assert sorted(got + rest) == sorted(f"{p}:{i}" for p in range(2) for i in range(10))
    if not kafka_broker.is_tansu:  # Tansu 0.6 answers a time lookup with the offset of the batch
        assert read(KafkaOffsetsInitializer.timestamp(1008)) == ["0:8", "0:9", "1:8", "1:9"]
    stop_at = KafkaOffsetsInitializer.offsets(
        {KafkaTopicPartition(topic, 0): 2, KafkaTopicPartition(topic, 1): 1}
    )
    bounded = builder(kafka_broker, topic).set_bounded(stop_at).build()
    assert sorted(read_all(bounded)) == ["0:0", "0:1", "1:0"]


def test_partitions_and_topic_patterns_select_what_is_read(kafka_broker: Broker, topic3: str) -> None:
    latest = KafkaOffsetsInitializer.latest()
    only = (
        KafkaSource.builder()
        .set_bootstrap_servers(kafka_broker.bootstrap)
        .set_partitions({KafkaTopicPartition(topic3, 2)})
        .set_value_only_deserializer(SimpleStringSchema())
        .set_bounded(latest)
        .build()
    )
    assert sorted(read_all(only, 2)) == sorted(f"2:{i}" for i in range(40))
    pattern = (
        KafkaSource.builder()
        .set_bootstrap_servers(kafka_broker.bootstrap)
        .set_topic_pattern(topic3[:-3] + "...")
        .set_value_only_deserializer(SimpleStringSchema())
        .set_bounded(latest)
        .build()
    )
    assert len(read_all(pattern)) == 120


def test_records_with_metadata_and_undecodable_records(kafka_broker: Broker) -> None:
    topic = kafka_broker.create_topic()
    kafka_broker.produce(
        topic, [b'{"a": 1}', b"not json", b'{"a": 3}'], partition=0, keys=[b"k1", b"k2", b"k3"]
    )
    row = Types.ROW_NAMED(["a"], [Types.INT()])
    latest = KafkaOffsetsInitializer.latest()
    meta = (
        builder(kafka_broker, topic)
        .set_deserializer(
            KafkaRecordDeserializationSchema.with_metadata(SimpleStringSchema(), SimpleStringSchema())
        )
        .set_bounded(latest)
        .build()
    )
    records = read_all(meta)
    assert [(r.key, r.value, r.partition, r.offset) for r in records] == [
        ("k1", '{"a": 1}', 0, 0),
        ("k2", "not json", 0, 1),
        ("k3", '{"a": 3}', 0, 2),
    ]
    assert all(isinstance(r, KafkaRecord) and r.topic == topic and r.timestamp for r in records)
    strict = builder(kafka_broker, topic).set_value_only_deserializer(
        JsonRowDeserializationSchema.builder().type_info(row).build()
    )
    with pytest.raises(ValueError, match=f"{topic}-0 offset 1"):
        read_all(strict.set_bounded(latest).build())
    lenient = builder(kafka_broker, topic).set_value_only_deserializer(
        JsonRowDeserializationSchema.builder().type_info(row).ignore_parse_errors().build()
    )
    assert [r.a for r in read_all(lenient.set_bounded(latest).build())] == [1, 3]


def test_builder_refuses_what_it_cannot_do(kafka_broker: Broker) -> None:
    with pytest.raises(ConfigurationError, match="bootstrap servers"):
        KafkaSource.builder().set_topics("t").set_value_only_deserializer(SimpleStringSchema()).build()
    with pytest.raises(ConfigurationError, match="no topics"):
        KafkaSource.builder().set_bootstrap_servers("x:1").set_value_only_deserializer(
            SimpleStringSchema()
        ).build()
    with pytest.raises(ConfigurationError, match="deserializer"):
        KafkaSource.builder().set_bootstrap_servers("x:1").set_topics("t").build()
    base = builder(kafka_broker, "t")
    with pytest.raises(ConfigurationError, match="group id"):
        builder(kafka_broker, "t").set_starting_offsets(KafkaOffsetsInitializer.committed_offsets()).build()
    with pytest.raises(ConfigurationError, match=r"No such configuration property: \"no.such.thing\""):
        builder(kafka_broker, "t").set_properties({"no.such.thing": "10"}).build()
    with pytest.raises(ConfigurationError, match="set by the source"):
        builder(kafka_broker, "t").set_property("enable.auto.commit", "true").build()
    with pytest.raises(ConfigurationError, match=r"max\.poll\.records is a property of Kafka's Java"):
        builder(kafka_broker, "t").set_property("max.poll.records", "500").build()
    with pytest.raises(ConfigurationError, match="earliest"):
        base.set_bounded(KafkaOffsetsInitializer.earliest())
    # accepted: discovery off, a librdkafka property, a client id prefix
    source = (
        builder(kafka_broker, "t")
        .set_property("partition.discovery.interval.ms", "-1")
        .set_property("fetch.min.bytes", "1")
        .set_client_id_prefix("me")
        .build()
    )
    assert source.get_boundedness() is Boundedness.CONTINUOUS_UNBOUNDED
    assert source._settings["client_id_prefix"] == "me"
    assert source._settings["config"]["fetch.min.bytes"] == "1"


def test_a_reader_that_is_not_polled_stops_fetching(kafka_broker: Broker) -> None:
    """Backpressure: while the task is blocked downstream it does not poll, and librdkafka stops
    fetching once its prefetch queue (queued.max.messages.kbytes, 8 MB) is full: nothing is
    buffered without bound. Checked with librdkafka's own statistics of the reader's consumer."""
    import json
    import time

    import confluent_kafka as ck

    topic = kafka_broker.create_topic()

    producer = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap, "linger.ms": 20})
    value = b"v" * 1000
    for _ in range(40_000):  # 40 MB
        while True:
            try:
                producer.produce(topic, value, partition=0)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0
    source = builder(kafka_broker, topic).build()
    stats: list[dict] = []
    source._settings["config"].update(
        {"statistics.interval.ms": 200, "stats_cb": lambda s: stats.append(json.loads(s))}
    )
    reader = source.create_reader(0, 1)
    try:
        assert len(_poll_until(reader, 100)) >= 100
        time.sleep(3.0)  # blocked downstream: no poll
        assert len(_poll_until(reader, 1)) >= 1  # serves the statistics taken while it was not polled
        last = stats[-2]
        fetchq_bytes = sum(
            tp["fetchq_size"]
            for t in last["topics"].values()
            for tp in t["partitions"].values()
            if tp["partition"] >= 0
        )
        # librdkafka overshoots the 8 MB by what one fetch brings (Tansu answers with whole batches)
        assert 0 < fetchq_bytes <= 16 * 1024 * 1024, f"{fetchq_bytes} of the topic's 40 MB prefetched"
        assert len(_poll_until(reader, 1000)) >= 1000, "reading goes on where it was"
    finally:
        reader.close()

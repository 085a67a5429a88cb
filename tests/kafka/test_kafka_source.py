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
from flott.datastream.connectors.kafka_source import java_string_hash, split_owner
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
    for new_p in (1, 3):
        after = []
        for i in range(new_p):
            restored = cloudpickle.loads(cloudpickle.dumps(source))
            after.extend(drain(restored.restore_reader(i, new_p, split_share(pooled, i, new_p))))
        assert sorted(before + after) == sorted(f"{p}:{i}" for p in range(3) for i in range(40))


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
    from flott.errors import NotYetSupportedError

    with pytest.raises(NotYetSupportedError, match=r"partition\.discovery\.interval\.ms"):
        builder(kafka_broker, "t").set_property("partition.discovery.interval.ms", "10000").build()
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

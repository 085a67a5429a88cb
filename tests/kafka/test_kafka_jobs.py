"""Kafka jobs on a real embedded cluster (TaskExecutor processes) against the test broker."""

from __future__ import annotations

import time

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Types
from flott.common.serialization import SimpleStringSchema
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors import DeliveryGuarantee
from flott.datastream.connectors.kafka import (
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
)
from tests.kafka.broker import Broker
from tests.kafka.committed_view import summary, topic_view


def source_of(broker: Broker, topic: str, group: str | None = None) -> KafkaSource:
    builder = (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap)
        .set_topics(topic)
        .set_value_only_deserializer(SimpleStringSchema())
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_bounded(KafkaOffsetsInitializer.latest())
    )
    if group:
        builder.set_group_id(group)
    return builder.build()


def sink_to(broker: Broker, topic: str, guarantee: DeliveryGuarantee, prefix: str) -> KafkaSink:
    return (
        KafkaSink.builder()
        .set_bootstrap_servers(broker.bootstrap)
        .set_record_serializer(
            KafkaRecordSerializationSchema.builder()
            .set_topic(topic)
            .set_value_serialization_schema(SimpleStringSchema())
            .build()
        )
        .set_delivery_guarantee(guarantee)
        .set_transactional_id_prefix(prefix)
        .build()
    )


def test_bounded_kafka_to_map_to_kafka_exactly_once_reads_every_record_once(
    embedded: EmbeddedExecutor, kafka_broker: Broker
) -> None:
    src = kafka_broker.create_topic(partitions=3)
    dst = kafka_broker.create_topic(partitions=2)
    n = 3000
    for p in range(3):
        kafka_broker.produce(src, [f"{i}".encode() for i in range(p, n, 3)], partition=p)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    (
        env.from_source(source_of(kafka_broker, src), WatermarkStrategy.no_watermarks(), "kafka")
        .uid("kafka-in")
        .map(lambda s: f"x{s}", output_type=Types.STRING())
        .sink_to(sink_to(kafka_broker, dst, DeliveryGuarantee.EXACTLY_ONCE, f"eo-{time.time_ns()}"))
        .uid("kafka-out")
    )
    env.execute("kafka to kafka")
    got = sorted(m.value().decode() for m in kafka_broker.read(dst, expect=n, idle_s=1.0))
    want = sorted(f"x{i}" for i in range(n))
    assert got == want, _what_the_topic_holds(kafka_broker, dst, got, want)


def _what_the_topic_holds(broker: Broker, topic: str, got: list[str], want: list[str]) -> str:
    """The failure message of an exactly-once check: which records are missing or doubled and what
    the topic's raw log holds (committed, aborted and still open transactions, as Kafka's
    read_committed rules see them), so a failure in CI says whether missing records sit in a
    transaction left open or were never written."""
    missing = sorted(set(want) - set(got), key=lambda v: int(v[1:]))
    doubled = sorted({v for v in got if got.count(v) > 1})
    raw = {m.value().decode() for m in broker.read(topic, committed_only=False, idle_s=1.0, timeout_s=15)}
    return (
        f"{len(got)} of {len(want)} records read committed; {len(missing)} missing (first {missing[:10]}, "
        f"{sum(v in raw for v in missing)} of them in the log uncommitted), {len(doubled)} doubled; "
        f"raw log: {summary(topic_view(broker.bootstrap, topic, 2))}"
    )


def test_kafka_timestamps_are_event_time_under_a_watermark_strategy_without_assigner(
    embedded: EmbeddedExecutor, kafka_broker: Broker
) -> None:
    """As in Flink: with ``for_monotonous_timestamps()`` and no timestamp assigner, the records'
    Kafka timestamps drive event-time windows."""
    from flott.common.time import Time
    from flott.datastream.window import TumblingEventTimeWindows

    src = kafka_broker.create_topic(partitions=2)
    for p in range(2):
        ts = [100_000 + i * 1000 for i in range(p, 30, 2)]  # (0 would mean "now" to the producer)
        kafka_broker.produce(src, [str(t).encode() for t in ts], partition=p, timestamps=ts)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    counts = (
        env.from_source(source_of(kafka_broker, src), WatermarkStrategy.for_monotonous_timestamps(), "kafka")
        .map(lambda s: ("all", 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda t: t[0])
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    with counts.execute_and_collect("event time from kafka") as results:
        got = list(results)
    assert sorted(c for _, c in got) == [10, 10, 10]


def test_per_partition_watermarks_wait_for_the_partition_that_lags() -> None:
    from flott.runtime.operators.timestamps_watermarks import SplitWatermarks
    from flott.runtime.operators.watermark import LONG_MIN

    wm = SplitWatermarks(out_of_orderness_ms=5)
    wm.retain([("t", 0), ("t", 1)])
    wm.observe([("t", 0), ("t", 0)], [100, 200])
    assert wm.current_watermark() == LONG_MIN, "partition 1 has no records yet: no watermark"
    wm.observe([("t", 1)], [50])
    assert wm.current_watermark() == 50 - 5 - 1
    wm.observe([("t", 1), ("t", 0)], [None, 300])
    assert wm.current_watermark() == 44, "records without timestamps do not move time"
    wm.retain([("t", 0)])  # partition 1 reached its stopping offset
    assert wm.current_watermark() == 300 - 5 - 1


def test_a_subtask_without_partitions_is_idle_and_does_not_hold_event_time_back(
    embedded: EmbeddedExecutor, kafka_broker: Broker
) -> None:
    """One partition, two source subtasks, unbounded: the subtask with nothing to read is idle (as
    Flink's reader without splits), so the windows downstream fire on the other's watermarks."""
    from flott.common.time import Time
    from flott.datastream.window import TumblingEventTimeWindows

    src = kafka_broker.create_topic(partitions=1)
    ts = [100_000 + i * 1000 for i in range(20)] + [200_000]
    kafka_broker.produce(src, [str(t).encode() for t in ts], partition=0, timestamps=ts)
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(kafka_broker.bootstrap)
        .set_topics(src)
        .set_value_only_deserializer(SimpleStringSchema())
        .build()
    )
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    counts = (
        env.from_source(source, WatermarkStrategy.for_monotonous_timestamps(), "kafka")
        .map(lambda s: ("all", 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda t: t[0])
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    got = counts.execute_and_collect("idle subtask", limit=2)  # with a limit: a list, the job cancelled
    assert sorted(c for _, c in got) == [10, 10]

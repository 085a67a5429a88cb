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
    assert got == sorted(f"x{i}" for i in range(n))

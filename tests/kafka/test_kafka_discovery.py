"""Partition discovery in a running job: topics matching the pattern and partitions added to a
subscribed topic while the job runs are read from their start, each record exactly once.

Tansu 0.6 has no CreatePartitions (KIP-195): adding partitions to a topic runs only against a real
Kafka (FLOTT_KAFKA_BOOTSTRAP); new topics matching the pattern run on both.
"""

from __future__ import annotations

import collections
import time
import uuid
from pathlib import Path

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Types
from flott.common.serialization import Encoder, SimpleStringSchema
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.kafka import KafkaOffsetsInitializer, KafkaSource
from tests.e2e.conftest import read_output_lines, wait_running
from tests.kafka.broker import Broker


def _wait_lines(out: Path, n: int, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while len(read_output_lines(out)) < n:
        assert time.monotonic() < deadline, f"{len(read_output_lines(out))} of {n} records arrived"
        time.sleep(0.2)


def _produce(broker: Broker, topic: str, partitions: range, label: str, per_partition: int) -> list[str]:
    values = []
    for p in partitions:
        batch = [f"{label}{p}-{i}" for i in range(per_partition)]
        broker.produce(topic, [v.encode() for v in batch], partition=p)
        values.extend(batch)
    return values


def _job(broker: Broker, pattern: str, out: Path, checkpoints: Path) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints.as_uri())
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap)
        .set_topic_pattern(pattern)
        .set_value_only_deserializer(SimpleStringSchema())
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_property("partition.discovery.interval.ms", "300")
        .build()
    )
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka")
        .uid("kafka-in")
        .map(lambda s: f"got-{s}", output_type=Types.STRING())
        .uid("mapped")
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
        .uid("files")
    )
    return env


def test_new_topics_and_partitions_are_discovered_while_the_job_runs(
    embedded: EmbeddedExecutor, kafka_broker: Broker, tmp_path: Path
) -> None:
    stem = f"dj-{uuid.uuid4().hex[:6]}"
    first = kafka_broker.create_topic(partitions=2, name=f"{stem}-first")
    expected = _produce(kafka_broker, first, range(2), "a", 50)
    out = tmp_path / "out"
    client = _job(kafka_broker, stem + "-.*", out, tmp_path / "chk").execute_async("discovery")
    wait_running(client)
    _wait_lines(out, len(expected))

    second = kafka_broker.create_topic(partitions=3, name=f"{stem}-second")
    expected += _produce(kafka_broker, second, range(3), "b", 40)
    if not kafka_broker.is_tansu:  # Tansu 0.6 has no CreatePartitions
        from confluent_kafka.admin import NewPartitions

        admin = kafka_broker.admin()
        for future in admin.create_partitions([NewPartitions(first, 4)]).values():
            future.result(30)
        deadline = time.monotonic() + 30
        while len(admin.list_topics(first, timeout=10).topics[first].partitions) < 4:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        expected += _produce(kafka_broker, first, range(2, 4), "a", 30)
    expected += _produce(kafka_broker, first, range(2), "late", 5)  # the old partitions go on
    _wait_lines(out, len(expected))
    client.stop_with_savepoint(False, str(tmp_path / "sp")).result(timeout=120)
    got = collections.Counter(read_output_lines(out))
    assert got == collections.Counter(f"got-{v}" for v in expected)

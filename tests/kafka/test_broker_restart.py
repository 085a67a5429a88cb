"""A Kafka job while its broker is killed (SIGKILL by PID) and started again on the same port with
the same data: the job recovers, as Flink's does (the clients reconnect; what fails restarts from
the last checkpoint), and its output is exact.

The broker is a Tansu whose data is in an S3 server on loopback (moto), so it survives the
broker's process. Not run against FLOTT_KAFKA_BOOTSTRAP: the test must own the broker's process.
"""

from __future__ import annotations

import collections
import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Types
from flott.common.restart_strategy import RestartStrategies
from flott.common.serialization import Encoder, SimpleStringSchema
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors import DeliveryGuarantee
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.kafka import (
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
    KafkaTopicPartition,
)
from tests.e2e.conftest import read_output_lines, wait_running
from tests.kafka.broker import BOOTSTRAP_ENV, RestartableBroker, restartable_tansu

pytest.importorskip("moto.server", reason="the broker restart test needs moto's S3 server (the test extra)")

PARTITIONS = 4
PER_PARTITION = 600


@pytest.fixture
def restartable(tmp_path: Path) -> Iterator[RestartableBroker]:
    if os.environ.get(BOOTSTRAP_ENV):
        pytest.skip("the broker restart test starts and kills its own broker")
    with restartable_tansu(tmp_path) as broker:
        yield broker


def _slowly(s: str) -> str:
    if int(s) % 20 == 0:
        time.sleep(0.05)  # about 8 s of work at parallelism 2: the broker dies in the middle
    return f"out-{s}"


def _fill(restartable: RestartableBroker) -> str:
    """Records produced in batches (one S3 object per batch keeps the slow storage quick)."""
    import confluent_kafka as ck

    topic = restartable.broker.create_topic(partitions=PARTITIONS)
    producer = ck.Producer({"bootstrap.servers": restartable.broker.bootstrap, "linger.ms": 50})
    for p in range(PARTITIONS):
        for i in range(p, PARTITIONS * PER_PARTITION, PARTITIONS):
            producer.produce(topic, str(i).encode(), partition=p)
    assert producer.flush(60) == 0
    return topic


def test_a_job_recovers_when_its_broker_is_killed_and_started_again(
    embedded: EmbeddedExecutor, restartable: RestartableBroker, tmp_path: Path
) -> None:
    broker = restartable.broker
    src = _fill(restartable)
    dst = broker.create_topic(partitions=2)
    n = PARTITIONS * PER_PARTITION
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().set_checkpoint_storage_dir((tmp_path / "chk").as_uri())
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(30, 500))
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap)
        .set_topics(src)
        .set_value_only_deserializer(SimpleStringSchema())
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        # exact stopping offsets: Tansu's high watermark of a batched partition is not its end
        .set_bounded(
            KafkaOffsetsInitializer.offsets(
                {KafkaTopicPartition(src, p): PER_PARTITION for p in range(PARTITIONS)}
            )
        )
        .build()
    )
    stream = (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka")
        .uid("kafka-in")
        .map(_slowly, output_type=Types.STRING())
        .uid("mapped")
    )
    out = tmp_path / "out"
    stream.sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build()).uid("files")
    sink = (
        KafkaSink.builder()
        .set_bootstrap_servers(broker.bootstrap)
        .set_record_serializer(
            KafkaRecordSerializationSchema.builder()
            .set_topic(dst)
            .set_value_serialization_schema(SimpleStringSchema())
            .build()
        )
        .set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE)
        .set_transactional_id_prefix(f"r-{uuid.uuid4().hex[:6]}")
        .build()
    )
    stream.sink_to(sink).uid("kafka-out")
    client = env.execute_async("kafka through a broker restart")
    wait_running(client)
    outage: list[float] = []
    running_at_kill: list[bool] = []

    def restart_the_broker() -> None:
        deadline = time.monotonic() + 60
        while not read_output_lines(out) and time.monotonic() < deadline:
            time.sleep(0.1)  # until a checkpoint completed: the job is under way
        restartable.kill()
        outage.append(time.monotonic())
        running_at_kill.append(not client.get_job_status().result().is_globally_terminal_state())
        time.sleep(3.0)
        restartable.start()
        outage.append(time.monotonic())

    thread = threading.Thread(target=restart_the_broker)
    thread.start()
    client.get_job_execution_result().result(timeout=300)
    thread.join()
    assert len(outage) == 2, "the broker was not restarted"
    assert running_at_kill == [True], "the job ended before the broker was killed; make it longer"
    expected = collections.Counter(f"out-{i}" for i in range(n))
    got = collections.Counter(read_output_lines(out))
    assert got == expected, (
        f"file sink: {sum((expected - got).values())} lost, {sum((got - expected).values())} duplicated"
    )
    assert len(read_output_lines(out)) == n, "the file sink is exact: nothing twice"
    written = collections.Counter(
        m.value().decode() for m in broker.read(dst, committed_only=False, expect=n, idle_s=2.0)
    )
    assert not expected - written, f"kafka sink (at least once): {sum((expected - written).values())} lost"

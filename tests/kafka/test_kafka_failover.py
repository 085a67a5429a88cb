"""Kafka jobs under failures on a real embedded cluster: TaskExecutors SIGKILLed mid-job, and
stop-with-savepoint then resume at another parallelism.

Kafka -> FileSink checks the source alone (offsets in checkpoints, restored exactly). Kafka ->
Kafka with EXACTLY_ONCE checks both ends for no loss and no duplicates: on a real Kafka
(FLOTT_KAFKA_BOOTSTRAP) read with read_committed; on Tansu, which writes transaction markers but
shows aborted records to read_committed readers, by reading the output's raw log and applying
Kafka's read_committed rules (tests/kafka/committed_view.py), in the savepoint test too.
"""

from __future__ import annotations

import collections
import threading
import time
import uuid
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
)
from tests.e2e.conftest import read_output_lines
from tests.e2e.test_checkpointing import task_executor_processes, wait_running
from tests.kafka.broker import Broker
from tests.kafka.committed_view import (
    committed_values,
    committed_view,
    partition_log,
    summary,
    topic_view,
)

PARTITIONS = 4


def _slowly(s: str) -> str:
    if int(s) % 200 == 0:
        time.sleep(0.01)  # keeps the job running long enough to be killed mid-way
    return f"out-{s}"


def fill(broker: Broker, n: int, start: int = 0) -> str:
    topic = broker.create_topic(partitions=PARTITIONS)
    append(broker, topic, start, n)
    return topic


def append(broker: Broker, topic: str, start: int, end: int) -> None:
    for p in range(PARTITIONS):
        broker.produce(
            topic, [str(i).encode() for i in range(start, end) if i % PARTITIONS == p], partition=p
        )


def kafka_job(
    broker: Broker,
    src: str,
    parallelism: int,
    checkpoints: Path,
    *,
    bounded: bool = True,
    out_dir: Path | None = None,
    out_topic: str | None = None,
    prefix: str = "",
    savepoint: str | None = None,
) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints.as_uri())
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(20, 200))
    if savepoint is not None:
        env.configure({"execution.savepoint.path": savepoint})
    builder = (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap)
        .set_topics(src)
        .set_value_only_deserializer(SimpleStringSchema())
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
    )
    if bounded:
        builder.set_bounded(KafkaOffsetsInitializer.latest())
    stream = (
        env.from_source(builder.build(), WatermarkStrategy.no_watermarks(), "kafka")
        .uid("kafka-in")
        .key_by(lambda s: int(s) % 5, key_type=Types.INT())
        .map(_slowly, output_type=Types.STRING())
        .uid("mapped")
    )
    if out_dir is not None:
        stream.sink_to(FileSink.for_row_format(str(out_dir), Encoder.simple_string_encoder()).build()).uid(
            "files"
        )
    else:
        assert out_topic is not None
        sink = (
            KafkaSink.builder()
            .set_bootstrap_servers(broker.bootstrap)
            .set_record_serializer(
                KafkaRecordSerializationSchema.builder()
                .set_topic(out_topic)
                .set_value_serialization_schema(SimpleStringSchema())
                .build()
            )
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .set_transactional_id_prefix(prefix)
            .build()
        )
        stream.sink_to(sink).uid("kafka-out")
    return env


def kill_task_executors(client: object, times: int, every_s: float) -> tuple[threading.Thread, list[int]]:
    kills: list[int] = []

    def killer() -> None:
        for _ in range(times):
            time.sleep(every_s)
            victims = task_executor_processes()
            if not victims or client.get_job_status().result().is_globally_terminal_state():  # type: ignore[attr-defined]
                return
            victims[0].kill()
            kills.append(victims[0].pid)

    thread = threading.Thread(target=killer)
    thread.start()
    return thread, kills


def not_rewrites_of_committed_transactions(
    broker: Broker, topic: str, partitions: int, twice: set[str]
) -> set[str]:
    """Of the records visible twice, those that are not a committed transaction's record and its
    copy by the sink's recovery: the copy is in the same partition and written by the same producer
    id (recovery uses the transaction's transactional id) with a higher epoch."""
    copies: dict[str, list[tuple[int, int, int]]] = collections.defaultdict(list)
    for p in range(partitions):
        batches = partition_log(broker.bootstrap, topic, p)
        producer_at = {r.offset: (b.producer_id, b.producer_epoch) for b in batches for r in b.records}
        for r in committed_view(batches).visible:
            value = r.value.decode() if r.value is not None else ""
            if value in twice:
                copies[value].append((p, *producer_at[r.offset]))
    return {
        v
        for v in twice
        if not (
            len(copies[v]) == 2
            and copies[v][0][:2] == copies[v][1][:2]
            and copies[v][0][2] < copies[v][1][2]
        )
    }


def counts(lines: list[str]) -> collections.Counter[str]:
    return collections.Counter(lines)


def test_kafka_to_file_sink_is_exact_after_task_executor_kills(
    embedded: EmbeddedExecutor, kafka_broker: Broker, tmp_path: Path
) -> None:
    n = 30_000
    src = fill(kafka_broker, n)
    out = tmp_path / "out"
    client = kafka_job(kafka_broker, src, 2, tmp_path / "chk", out_dir=out).execute_async("kafka to files")
    wait_running(client)
    thread, kills = kill_task_executors(client, 2, 1.5)
    client.get_job_execution_result().result(timeout=240)
    thread.join()
    assert len(kills) == 2, "the job ended before it could be killed twice; make it longer"
    got = counts(read_output_lines(out))
    assert got == counts([f"out-{i}" for i in range(n)]), (
        f"missing {len(set(map(str, range(n))) - {s[4:] for s in got})}, "
        f"duplicated {sum(c - 1 for c in got.values() if c > 1)}"
    )


def test_kafka_to_kafka_exactly_once_after_task_executor_kills_read_committed_exactly(
    embedded: EmbeddedExecutor, kafka_broker: Broker, tmp_path: Path
) -> None:
    n = 30_000
    src = fill(kafka_broker, n)
    dst = kafka_broker.create_topic(partitions=3)
    env = kafka_job(kafka_broker, src, 2, tmp_path / "chk", out_topic=dst, prefix=f"k-{uuid.uuid4().hex[:6]}")
    client = env.execute_async("kafka to kafka, killed")
    wait_running(client)
    thread, kills = kill_task_executors(client, 2, 1.5)
    client.get_job_execution_result().result(timeout=240)
    thread.join()
    assert len(kills) == 2, "the job ended before it could be killed twice; make it longer"
    expected = counts(f"out-{i}" for i in range(n))
    if kafka_broker.is_tansu:
        # Tansu writes COMMIT/ABORT markers (also when fencing) but shows aborted records to
        # read_committed readers and can hold its last stable offset back: the output is read raw
        # and filtered by Kafka's read_committed rules (tests/kafka/committed_view.py)
        views = topic_view(kafka_broker.bootstrap, dst, 3)
        got = counts(committed_values(views))
        detail = summary(views)
    else:
        records = kafka_broker.read(dst, expect=n, idle_s=2.0)
        got = counts(m.value().decode() for m in records)
        detail = ""
    assert not expected - got, f"{sum((expected - got).values())} records lost; {detail}"
    if kafka_broker.is_tansu and got != expected:
        # Tansu deviation (issue 17, tests/kafka/test_broker.py): it hides a group's committed
        # transactional offset while another transaction is open in that partition, so the sink's
        # recovery reads the commit marker of a committed transaction as unset and writes its
        # records again. In the duplicate runs analysed, every record found twice was one copy in a
        # committed transaction and one in the recovery's rewrite of it. A real Kafka
        # (FLOTT_KAFKA_BOOTSTRAP) shows the offset; there the check below is exact.
        unexplained = not_rewrites_of_committed_transactions(kafka_broker, dst, 3, set(got - expected))
        assert not unexplained, f"records twice, not by a recovery's rewrite: {sorted(unexplained)[:10]}"
        pytest.xfail(f"{sum((got - expected).values())} records written again by recovery on Tansu; {detail}")
    assert got == expected, f"{sum((got - expected).values())} records duplicated; {detail}"


def test_stop_with_savepoint_and_resume_at_another_parallelism_continues_at_the_right_offsets(
    embedded: EmbeddedExecutor, kafka_broker: Broker, tmp_path: Path
) -> None:
    first_n, n = 6_000, 12_000
    src = fill(kafka_broker, first_n)
    dst = kafka_broker.create_topic(partitions=2)
    prefix = f"s-{uuid.uuid4().hex[:6]}"
    chk, sp = tmp_path / "chk", tmp_path / "sp"

    def job(parallelism: int, savepoint: str | None) -> StreamExecutionEnvironment:
        return kafka_job(
            kafka_broker,
            src,
            parallelism,
            chk,
            bounded=False,
            out_topic=dst,
            prefix=prefix,
            savepoint=savepoint,
        )

    first = job(2, None).execute_async("p2")
    wait_running(first)
    deadline = time.monotonic() + 120
    # Progress is watched on everything written: with a later transaction open, Tansu's read_committed
    # readers sometimes miss records of committed ones. The exact checks below read committed-only,
    # after stop-with-savepoint has committed the last transaction.
    while len(kafka_broker.read(dst, committed_only=False, idle_s=0.3, timeout_s=5)) < first_n // 3:
        assert time.monotonic() < deadline, "nothing written"
    savepoint1 = first.stop_with_savepoint(False, str(sp)).result(timeout=120)
    after_first = counts(m.value().decode() for m in kafka_broker.read(dst, idle_s=1.0))
    assert after_first and max(after_first.values()) == 1
    append(kafka_broker, src, first_n, n)  # written while no job runs

    second = job(3, savepoint1).execute_async("p3")
    wait_running(second)
    deadline = time.monotonic() + 180
    while len(kafka_broker.read(dst, committed_only=False, idle_s=0.3, timeout_s=5)) < n:
        assert time.monotonic() < deadline, "the resumed job did not catch up"
    second.stop_with_savepoint(False, str(sp)).result(timeout=120)
    expected = counts(f"out-{i}" for i in range(n))
    if kafka_broker.is_tansu:
        # Tansu's read_committed readers see aborted records and can be held back by a fenced
        # transaction: its raw log is read with Kafka's read_committed rules instead
        views = topic_view(kafka_broker.bootstrap, dst, 2)
        got = counts(committed_values(views))
        detail = summary(views)
    else:
        records = kafka_broker.read(dst, expect=n, idle_s=1.0)
        got = counts(m.value().decode() for m in records)
        detail = ""
    assert not expected - got, f"{sum((expected - got).values())} records lost; {detail}"
    if kafka_broker.is_tansu and got != expected:
        # Tansu hides the sink's commit markers while other transactions are open (see the kill test)
        unexplained = not_rewrites_of_committed_transactions(kafka_broker, dst, 2, set(got - expected))
        assert not unexplained, f"records twice, not by a recovery's rewrite: {sorted(unexplained)[:10]}"
        pytest.xfail(f"{sum((got - expected).values())} records written again by recovery on Tansu; {detail}")
    assert got == expected, f"{sum((got - expected).values())} records duplicated; {detail}"

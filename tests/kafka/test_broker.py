"""The test broker itself: records produced to a fresh topic are read back, per partition, in order."""

from __future__ import annotations

from tests.kafka.broker import Broker


def test_the_broker_stores_and_returns_records_per_partition(kafka_broker: Broker) -> None:
    topic = kafka_broker.create_topic(partitions=2)
    kafka_broker.produce(topic, [b"a0", b"a1"], partition=0)
    kafka_broker.produce(topic, [b"b0"], partition=1)
    got = kafka_broker.read(topic, expect=3, idle_s=0.5)
    per_partition = {p: [m.value() for m in got if m.partition() == p] for p in (0, 1)}
    assert per_partition == {0: [b"a0", b"a1"], 1: [b"b0"]}

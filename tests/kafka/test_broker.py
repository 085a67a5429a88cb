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


def _group_offset(broker: Broker, group: str, topic: str, partition: int) -> int:
    import confluent_kafka as ck

    consumer = ck.Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "isolation.level": "read_uncommitted",
        }
    )
    try:
        (tp,) = consumer.committed([ck.TopicPartition(topic, partition)], timeout=10)
        return int(tp.offset)
    finally:
        consumer.close()


def test_a_committed_transactional_offset_and_another_transaction_open_on_its_partition(
    kafka_broker: Broker,
) -> None:
    """Kafka shows a group's offset once the transaction that committed it (TxnOffsetCommit) is
    committed, whatever other transactions do. Tansu 0.6 hides it (OffsetFetch answers "no offset")
    while another producer has a transaction open with records in that partition, and shows it
    once that transaction ends. The KafkaSink's recovery reads such an offset (its marker) to know
    whether a transaction was committed; after a failure the crashed writers' next transactions are
    still open, so on Tansu it takes committed transactions for uncommitted and writes them again
    (the duplicates of the kill test, issue 17)."""
    import confluent_kafka as ck

    topic = kafka_broker.create_topic(partitions=2)
    group = f"g-{topic}"
    consumer = ck.Consumer({"bootstrap.servers": kafka_broker.bootstrap, "group.id": group})
    metadata = consumer.consumer_group_metadata()
    consumer.close()
    config = {"bootstrap.servers": kafka_broker.bootstrap}
    first = ck.Producer({**config, "transactional.id": f"{topic}-first"})
    first.init_transactions(30)
    first.begin_transaction()
    first.produce(topic, b"a", partition=0)
    first.flush(30)
    first.send_offsets_to_transaction([ck.TopicPartition(topic, 0, 1_000)], metadata, 30)
    other = ck.Producer({**config, "transactional.id": f"{topic}-other"})
    other.init_transactions(30)
    other.begin_transaction()
    other.produce(topic, b"b", partition=0)
    other.flush(30)
    first.commit_transaction(30)
    while_open = _group_offset(kafka_broker, group, topic, 0)
    other.abort_transaction(30)
    after = _group_offset(kafka_broker, group, topic, 0)
    assert after == 1_000
    if kafka_broker.is_tansu:
        assert while_open == ck.OFFSET_INVALID, "Tansu shows the offset now: the sink's recovery is exact"
    else:
        assert while_open == 1_000

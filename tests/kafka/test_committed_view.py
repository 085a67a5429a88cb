"""The raw-log reader of tests/kafka/committed_view.py: Kafka's read_committed rules on hand-made
RecordBatch v2 bytes (no broker), then on the test broker's own log of transactions driven by hand
with confluent-kafka (committed, aborted, fenced while open), compared with what the broker's
read_committed consumers get."""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest

from tests.kafka.broker import Broker
from tests.kafka.committed_view import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    committed_values,
    committed_view,
    decode_batches,
    partition_log,
    read_log,
    summary,
    topic_view,
)

pytest.importorskip("kafka.record", reason="the raw-log reader needs kafka-python (the test extra)")

PLAIN = -1


def batch_bytes(
    base_offset: int,
    values: list[bytes] | None = None,
    *,
    pid: int = PLAIN,
    epoch: int = -1,
    control: int | None = None,
) -> bytes:
    """One RecordBatch v2 as a broker stores it: data records, or a control batch (COMMIT/ABORT)."""
    from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
    from kafka.record.util import calc_crc32c

    transactional = pid != PLAIN
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=transactional,
        producer_id=pid,
        producer_epoch=epoch if transactional else -1,
        base_sequence=0 if transactional else -1,
        batch_size=1 << 20,
    )
    if control is None:
        for i, value in enumerate(values or []):
            builder.append(i, timestamp=1000 + i, key=None, value=value, headers=[])
    else:
        key = struct.pack(">hh", 0, control)  # version 0, type
        builder.append(0, timestamp=1000, key=key, value=b"\0\0\0\0\0\0", headers=[])
    buf = bytearray(builder.build())
    struct.pack_into(">q", buf, 0, base_offset)  # set by the broker, outside the CRC
    if control is not None:
        at = DefaultRecordBatch.ATTRIBUTES_OFFSET
        (attributes,) = struct.unpack_from(">h", buf, at)
        struct.pack_into(">h", buf, at, attributes | DefaultRecordBatch.CONTROL_MASK)
        crc = calc_crc32c(memoryview(buf)[at:])
        struct.pack_into(">I", buf, DefaultRecordBatch.CRC_OFFSET, crc)
    return bytes(buf)


def view_of(*batches: bytes) -> Any:
    return committed_view(decode_batches(b"".join(batches)))


def visible(*batches: bytes) -> list[bytes | None]:
    return [r.value for r in view_of(*batches).visible]


def test_decoding_reads_the_header_fields_and_the_marker_type() -> None:
    data = batch_bytes(5, [b"a", b"b"], pid=7, epoch=3)
    data += batch_bytes(7, pid=7, epoch=3, control=CONTROL_COMMIT)
    first, marker = decode_batches(data)
    assert (first.base_offset, first.last_offset, first.producer_id, first.producer_epoch) == (5, 6, 7, 3)
    assert first.transactional and first.control is None
    assert [(r.offset, r.value) for r in first.records] == [(5, b"a"), (6, b"b")]
    assert marker.transactional and marker.control == CONTROL_COMMIT and marker.records == ()
    plain = decode_batches(batch_bytes(0, [b"p"]))[0]
    assert not plain.transactional and plain.producer_id == -1 and plain.control is None


def test_a_cut_last_batch_is_left_out_and_a_bad_crc_refused() -> None:
    whole = batch_bytes(0, [b"a"]) + batch_bytes(1, [b"b"])
    assert [b.base_offset for b in decode_batches(whole[:-3])] == [0]
    broken = bytearray(batch_bytes(0, [b"a"]))
    broken[-1] ^= 0xFF
    with pytest.raises(ValueError, match="CRC"):
        decode_batches(bytes(broken))


def test_committed_records_are_visible_aborted_and_open_ones_not() -> None:
    view = view_of(
        batch_bytes(0, [b"plain"]),
        batch_bytes(1, [b"c1", b"c2"], pid=1, epoch=0),
        batch_bytes(3, pid=1, epoch=0, control=CONTROL_COMMIT),
        batch_bytes(4, [b"a1"], pid=1, epoch=0),
        batch_bytes(5, pid=1, epoch=0, control=CONTROL_ABORT),
        batch_bytes(6, [b"o1"], pid=2, epoch=0),
        batch_bytes(7, [b"plain2"]),
    )
    assert [r.value for r in view.visible] == [b"plain", b"c1", b"c2", b"plain2"]
    assert (view.committed_transactions, view.aborted_transactions, view.aborted_records) == (1, 1, 1)
    (still_open,) = view.open_transactions
    assert (still_open.producer_id, still_open.first_offset, len(still_open.records)) == (2, 6, 1)


def test_interleaved_producers_are_decided_by_their_own_markers() -> None:
    got = visible(
        batch_bytes(0, [b"x1"], pid=1, epoch=0),
        batch_bytes(1, [b"y1"], pid=2, epoch=0),
        batch_bytes(2, [b"x2"], pid=1, epoch=0),
        batch_bytes(3, pid=2, epoch=0, control=CONTROL_ABORT),
        batch_bytes(4, [b"y2"], pid=2, epoch=0),
        batch_bytes(5, pid=1, epoch=0, control=CONTROL_COMMIT),
        batch_bytes(6, pid=2, epoch=0, control=CONTROL_COMMIT),
    )
    assert got == [b"x1", b"x2", b"y2"]


def test_a_fenced_open_transaction_is_aborted_with_or_without_its_marker() -> None:
    with_marker = view_of(
        batch_bytes(0, [b"old"], pid=3, epoch=0),
        batch_bytes(1, pid=3, epoch=0, control=CONTROL_ABORT),  # what Tansu writes on initTransactions
        batch_bytes(2, [b"new"], pid=3, epoch=1),
        batch_bytes(3, pid=3, epoch=1, control=CONTROL_COMMIT),
    )
    without = view_of(
        batch_bytes(0, [b"old"], pid=3, epoch=0),
        batch_bytes(1, [b"new"], pid=3, epoch=1),  # the new epoch writes: the old one was fenced
        batch_bytes(2, pid=3, epoch=1, control=CONTROL_COMMIT),
    )
    for view in (with_marker, without):
        assert [r.value for r in view.visible] == [b"new"]
        assert view.aborted_records == 1 and not view.open_transactions
    assert (with_marker.fenced_without_marker, without.fenced_without_marker) == (0, 1)


def test_writes_of_a_fenced_epoch_are_dropped_and_a_bumped_marker_epoch_closes_the_transaction() -> None:
    view = view_of(
        batch_bytes(0, [b"t1"], pid=4, epoch=1),
        batch_bytes(1, pid=4, epoch=2, control=CONTROL_COMMIT),  # Kafka 4's transactions v2 bump at the end
        batch_bytes(2, [b"zombie"], pid=4, epoch=1),
        batch_bytes(3, pid=4, epoch=1, control=CONTROL_COMMIT),
        batch_bytes(4, [b"t2"], pid=4, epoch=2),
        batch_bytes(5, pid=4, epoch=3, control=CONTROL_COMMIT),
    )
    assert [r.value for r in view.visible] == [b"t1", b"t2"]
    assert view.zombie_batches == 2


# --- against the test broker, transactions driven by hand ---------------------------------------


def test_the_log_is_read_to_the_high_watermark_past_an_answer_without_batches() -> None:
    # Tansu sometimes answers a fetch below the high watermark with no records: the kill test then
    # read a whole partition as empty and reported its records lost (issue 17)
    log = decode_batches(batch_bytes(0, [b"a", b"b"]) + batch_bytes(2, [b"c"]))
    high_watermark = 3  # Tansu's: the last batch's base offset + 1
    answers = iter([[], [], log, []])
    asked: list[int] = []

    def fetch(offset: int) -> tuple[int, list[Any]]:
        asked.append(offset)
        return high_watermark, next(answers)

    got = read_log(fetch, "t/0", timeout_s=5)
    assert [r.value for b in got for r in b.records] == [b"a", b"b", b"c"]
    assert asked == [0, 0, 0, 3]


def test_a_log_that_stays_short_of_its_high_watermark_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="below the high watermark 5"):
        read_log(lambda offset: (5, []), "t/0", timeout_s=0.2)


def transactional(broker: Broker, tid: str) -> Any:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": tid, "linger.ms": 5})
    producer.init_transactions(30)
    return producer


def one_transaction(producer: Any, topic: str, values: list[str], partitions: int, *, end: str) -> None:
    producer.begin_transaction()
    for i, value in enumerate(values):
        producer.produce(topic, value.encode(), partition=i % partitions)
    if end == "commit":
        producer.commit_transaction(30)
    elif end == "abort":
        producer.flush(30)
        producer.abort_transaction(30)
    else:
        assert end == "open"
        assert producer.flush(30) == 0


def test_the_broker_log_of_committed_aborted_and_fenced_transactions(kafka_broker: Broker) -> None:
    """Two partitions; a plain record, a committed, an aborted transaction, one left open and then
    fenced by a new producer of its transactional id (which commits), and a second producer's
    transaction committed around them. The view has exactly the committed and plain records; the
    log has a marker for every transaction in every partition it wrote to (also the fenced one,
    whose ABORT the broker writes at initTransactions)."""
    topic = kafka_broker.create_topic(partitions=2)
    tid, other_tid = f"v-{uuid.uuid4().hex[:8]}", f"w-{uuid.uuid4().hex[:8]}"
    kafka_broker.produce(topic, [b"plain"], partition=0)
    first = transactional(kafka_broker, tid)
    one_transaction(first, topic, ["c1", "c2", "c3"], 2, end="commit")
    one_transaction(first, topic, ["a1", "a2"], 2, end="abort")
    other = transactional(kafka_broker, other_tid)
    other.begin_transaction()
    other.produce(topic, b"o1", partition=1)
    assert other.flush(30) == 0
    one_transaction(first, topic, ["f1", "f2"], 2, end="open")
    fencer = transactional(kafka_broker, tid)  # fences `first`: its open transaction is aborted
    one_transaction(fencer, topic, ["n1", "n2"], 2, end="commit")
    other.produce(topic, b"o2", partition=0)
    other.commit_transaction(30)

    views = topic_view(kafka_broker.bootstrap, topic, 2)
    expected = ["plain", "c1", "c2", "c3", "n1", "n2", "o1", "o2"]
    assert sorted(committed_values(views)) == sorted(expected), summary(views)
    for view in views.values():
        assert not view.open_transactions and view.zombie_batches == 0, summary(views)
        assert view.fenced_without_marker == 0, "the broker wrote no ABORT marker when fencing"
    assert sum(v.aborted_records for v in views.values()) == 4  # a1, a2, f1, f2
    assert sum(v.committed_transactions for v in views.values()) == 6  # c, n, o: each in both partitions
    log0 = partition_log(kafka_broker.bootstrap, topic, 0)
    fenced_pid = next(b.producer_id for b in log0 if any(r.value == b"f1" for r in b.records))
    new_pid = next(b.producer_id for b in log0 if any(r.value == b"n1" for r in b.records))
    assert fenced_pid == new_pid, "a transactional id keeps its producer id across initTransactions"

    read = kafka_broker.read(topic, expect=len(expected), idle_s=1.0)
    consumer_sees = sorted(m.value().decode() for m in read)
    if kafka_broker.is_tansu:
        # Tansu's Fetch answers list no aborted transactions, so its read_committed readers get the
        # aborted records; and its last stable offset stays at the first offset of a transaction
        # that began while another was open (here n1/n2, begun while o1 was), also once all are
        # decided, so those readers get nothing from there on
        aborted = ["a1", "a2", "f1", "f2"]
        assert set(aborted) <= set(consumer_sees), consumer_sees
        assert set(consumer_sees) <= {*expected, *aborted}, consumer_sees
    else:
        assert consumer_sees == sorted(expected)
    for producer in (first, fencer, other):
        producer.flush(1)

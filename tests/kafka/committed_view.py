"""What a ``read_committed`` consumer of a real Kafka would read from a topic, computed from its raw log.

Tansu 0.6 (the test broker) keeps transactions the way Kafka does on disk: every transactional
batch carries its producer id and epoch, and committing, aborting, or fencing (a later
``initTransactions`` of the same transactional id) writes a control batch (attributes bit 5, one
record whose key is ``version:int16, type:int16``, 0 ABORT, 1 COMMIT) to each partition of the
transaction. What it does not do is tell consumers which transactions were aborted: its Fetch
answers leave ``AbortedTransactions`` empty also for ``isolation_level=1``, so librdkafka's
``read_committed`` filtering lets aborted records through. :func:`committed_view` does the
filtering Kafka's consumers do, on batches fetched raw (Fetch v4, ``read_uncommitted``) and
decoded with kafka-python's RecordBatch v2 reader.

The rules, per partition in offset order, are Kafka's (KIP-98):

* a non-transactional batch is visible;
* a transactional batch joins the open transaction of its producer id; records of that
  transaction become visible when a COMMIT marker of the producer follows, and are dropped when
  an ABORT marker follows;
* a transactional batch of a higher epoch than the producer's open transaction means that the
  transactional id was fenced in between: Kafka aborts the open transaction then (it writes the
  ABORT marker before the new epoch may write), so the open one counts as aborted even without a
  marker in the log (``fenced_without_marker`` counts these; Tansu wrote the marker in every case
  the tests saw);
* a batch or marker of an epoch below the newest one seen for its producer id is a fenced
  producer's write that Kafka would have refused (``zombie_batches`` counts them; dropped);
* a transaction still open at the end of the log is not visible (a real Kafka reader waits for
  it, and sees nothing of it once ``transaction.timeout.ms`` aborts it); ``open_transactions``
  lists them.

It reads from the node given as bootstrap, so it is for single-node brokers (Tansu, or one Kafka
broker), where that node leads every partition.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FETCH_VERSION = 4  # the first with isolation_level and LastStableOffset; Kafka 4 still accepts it
READ_UNCOMMITTED = 0
CONTROL_ABORT, CONTROL_COMMIT = 0, 1


@dataclass(frozen=True)
class Record:
    offset: int
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True)
class Batch:
    """One RecordBatch v2's header fields that transactions need, and its records.

    ``control`` is None for a data batch, else the marker's type (CONTROL_ABORT or CONTROL_COMMIT)."""

    base_offset: int
    last_offset: int
    producer_id: int
    producer_epoch: int
    transactional: bool
    control: int | None
    records: tuple[Record, ...]


@dataclass
class OpenTransaction:
    producer_id: int
    producer_epoch: int
    records: list[Record] = field(default_factory=list)

    @property
    def first_offset(self) -> int:
        return self.records[0].offset


@dataclass
class PartitionView:
    """The records a read_committed reader gets, and what the log had besides."""

    visible: list[Record] = field(default_factory=list)
    committed_transactions: int = 0
    aborted_transactions: int = 0
    aborted_records: int = 0
    fenced_without_marker: int = 0
    zombie_batches: int = 0
    open_transactions: list[OpenTransaction] = field(default_factory=list)

    def summary(self) -> str:
        opened = [
            (t.producer_id, t.producer_epoch, t.first_offset, len(t.records)) for t in self.open_transactions
        ]
        return (
            f"{len(self.visible)} visible, {self.committed_transactions} transactions committed, "
            f"{self.aborted_transactions} aborted ({self.aborted_records} records, "
            f"{self.fenced_without_marker} by fencing without a marker), "
            f"{self.zombie_batches} batches of fenced epochs, "
            f"open (pid, epoch, first offset, records): {opened}"
        )


def committed_view(batches: list[Batch]) -> PartitionView:
    """Apply Kafka's read_committed rules (module docstring) to one partition's batches."""
    view = PartitionView()
    open_tx: dict[int, OpenTransaction] = {}
    newest_epoch: dict[int, int] = {}

    def abort(tx: OpenTransaction) -> None:
        view.aborted_transactions += 1
        view.aborted_records += len(tx.records)

    visible: list[Record] = []
    for batch in sorted(batches, key=lambda b: b.base_offset):
        if not batch.transactional:
            if batch.control is not None:
                raise ValueError(f"a control batch at {batch.base_offset} that is not transactional")
            visible.extend(batch.records)
            continue
        pid, epoch = batch.producer_id, batch.producer_epoch
        if epoch < newest_epoch.get(pid, -1):
            view.zombie_batches += 1
            continue
        newest_epoch[pid] = epoch
        tx = open_tx.get(pid)
        if batch.control is None:
            if tx is not None and tx.producer_epoch < epoch:
                abort(tx)  # fenced: Kafka aborts the open transaction before the new epoch writes
                view.fenced_without_marker += 1
                tx = None
            if tx is None:
                tx = open_tx[pid] = OpenTransaction(pid, epoch)
            tx.records.extend(batch.records)
            continue
        if tx is None:
            continue  # a marker for a transaction with nothing in this partition
        del open_tx[pid]
        if batch.control == CONTROL_COMMIT:
            view.committed_transactions += 1
            visible.extend(tx.records)
        elif batch.control == CONTROL_ABORT:
            abort(tx)
        else:
            raise ValueError(f"unknown control type {batch.control} at {batch.base_offset}")
    view.visible = sorted(visible, key=lambda r: r.offset)
    view.open_transactions = sorted(open_tx.values(), key=lambda t: t.first_offset)
    return view


def decode_batches(data: bytes) -> list[Batch]:
    """Complete RecordBatch v2 batches in ``data`` (a Fetch answer's records; a cut last one is left out)."""
    from kafka.record.memory_records import MemoryRecords

    records = MemoryRecords(data)
    out: list[Batch] = []
    while records.has_next():
        raw: Any = records.next_batch()
        if raw is None:
            break
        if raw.magic != 2:
            raise ValueError(f"message format v{raw.magic} at {raw.base_offset}: only v2 has transactions")
        if not raw.validate_crc():
            raise ValueError(f"bad CRC in the batch at {raw.base_offset}")
        control: int | None = None
        recs: list[Record] = []
        for r in raw:
            if raw.is_control_batch:
                control = int(r.type)
            else:
                recs.append(Record(int(r.offset), r.key, r.value))
        out.append(
            Batch(
                base_offset=int(raw.base_offset),
                last_offset=int(raw.last_offset),
                producer_id=int(raw.producer_id),
                producer_epoch=int(raw.producer_epoch),
                transactional=bool(raw.is_transactional),
                control=control,
                records=tuple(recs),
            )
        )
    return out


def _recv(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("the broker closed the connection")
        buf += chunk
    return bytes(buf)


def fetch_raw(sock: socket.socket, topic: str, partition: int, offset: int, correlation: int) -> Any:
    """One Fetch v4 ``read_uncommitted`` round trip; returns the partition's answer."""
    from kafka.protocol.consumer import FetchRequest, FetchResponse

    max_bytes = 8 << 20
    request = FetchRequest(
        replica_id=-1,
        max_wait_ms=10,  # Tansu 0.6 answers max_wait_ms=0 with no partitions at all
        min_bytes=0,
        max_bytes=max_bytes,
        isolation_level=READ_UNCOMMITTED,
        topics=[
            FetchRequest.FetchTopic(
                topic=topic,
                partitions=[
                    FetchRequest.FetchTopic.FetchPartition(
                        partition=partition, fetch_offset=offset, partition_max_bytes=max_bytes
                    )
                ],
            )
        ],
        version=FETCH_VERSION,
    )
    request.with_header(correlation_id=correlation, client_id="flott-tests-raw-log")
    sock.sendall(request.encode(header=True, framed=True))
    (size,) = struct.unpack(">i", _recv(sock, 4))
    response = FetchResponse.decode(_recv(sock, size), version=FETCH_VERSION, header=True)
    answers = [p for t in response.responses for p in t.partitions if p.partition_index == partition]
    if len(answers) != 1:
        raise RuntimeError(f"Fetch {topic}/{partition}@{offset}: no answer for the partition: {response}")
    answer = answers[0]
    if answer.error_code:
        raise RuntimeError(f"Fetch {topic}/{partition}@{offset}: error code {answer.error_code}")
    return answer


def partition_log(bootstrap: str, topic: str, partition: int, timeout_s: float = 30.0) -> list[Batch]:
    """Every batch of one partition, read raw from offset 0 up to its high watermark.

    Tansu 0.6 reports the high watermark as the last batch's base offset + 1 (not its last
    offset + 1), so the log is read once the offset passed it. Until then an answer without
    batches is asked again: Tansu sometimes answers a fetch below the high watermark with no
    records (seen under load on the kill test's output), and taking that for the end read a
    partition as empty."""
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        correlations = iter(range(1, 1_000_000_000))

        def fetch(offset: int) -> tuple[int, list[Batch]]:
            answer = fetch_raw(sock, topic, partition, offset, next(correlations))
            return int(answer.high_watermark), decode_batches(answer.records or b"")

        return read_log(fetch, f"{topic}/{partition}", timeout_s)


def read_log(
    fetch: Callable[[int], tuple[int, list[Batch]]], name: str, timeout_s: float = 30.0
) -> list[Batch]:
    """The batches ``fetch(offset) -> (high watermark, batches from offset)`` gives from offset 0
    until the offset reached the high watermark (see :func:`partition_log`)."""
    out: list[Batch] = []
    offset = 0
    deadline = time.monotonic() + timeout_s
    while True:
        high_watermark, batches = fetch(offset)
        new = [b for b in batches if b.last_offset >= offset]
        if new:
            out.extend(new)
            offset = new[-1].last_offset + 1
            continue
        if offset >= high_watermark:
            return out
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{name}: no batches at offset {offset}, below the high watermark {high_watermark}, "
                f"for {timeout_s:.0f} s"
            )
        time.sleep(0.05)


def topic_view(bootstrap: str, topic: str, partitions: int) -> dict[int, PartitionView]:
    """:func:`committed_view` of every partition of ``topic``."""
    return {p: committed_view(partition_log(bootstrap, topic, p)) for p in range(partitions)}


def committed_values(views: dict[int, PartitionView]) -> list[str]:
    """The visible records' values as text, over all partitions."""
    return [r.value.decode() for v in views.values() for r in v.visible if r.value is not None]


def summary(views: dict[int, PartitionView]) -> str:
    return "; ".join(f"partition {p}: {v.summary()}" for p, v in sorted(views.items()))

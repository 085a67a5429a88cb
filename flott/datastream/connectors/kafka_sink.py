"""The Kafka sink's writer: NONE, AT_LEAST_ONCE (flush at every checkpoint) and EXACTLY_ONCE.

EXACTLY_ONCE is Flink's two-phase commit with one Kafka transaction per checkpoint and subtask:
records go to the broker as they come, inside a transaction; at the barrier the writer flushes
(every record delivered) and *pre-commits*: the transaction stays open, its producer is kept, and
the committable (below) goes into the checkpoint; when the checkpoint completes the runtime calls
``KafkaSink.commit`` and the kept producer commits. Records after the barrier go to a new
transaction with a new producer. Transactional ids are ``<prefix>-<subtask>-<n>``, ``n`` being the
id of the checkpoint after which the transaction started (plus one), as Flink names them. Every
barrier moves the writer to the next id, also when its transaction is empty (the empty one is
dropped and the next id's producer is initialised in the background), a barrier after checkpoints
the subtask never saw initialises the ids it skips, and a writer initialises its first id when it
opens: so the ids a writer has used are consecutive from the one it started with, which is what
lets a restored writer find every transaction its predecessors left open.

Lingering transactions (Flink's ``TransactionAborter``): a writer starting at checkpoint ``k``
(0 for a fresh job) initialises ``<prefix>-<s>-<n>`` for ``n = k+1, k+2, ...``, which fences the
producer that had the id (the broker aborts its open transaction), until an id the broker had
never seen (producer epoch 0, read from librdkafka's statistics, the only place the Python client
shows it). It does so for its own subtask ``s = i`` and then for ``s = i + p, i + 2p, ...`` (p the
new parallelism), stopping at the first such subtask that had nothing to abort: after scaling
down from X to p subtasks, subtask ``i`` cleans up every old subtask ``j < X`` with
``j mod p = i``, so no transaction of a subtask that no longer exists waits for the broker's
``transaction.timeout.ms`` (and holds ``read_committed`` readers of its partitions back until then).
This runs on the writer's background thread before its first transaction starts.

The crash between checkpoint completion and commit. Flink's Java writer resumes the
pre-committed transaction after a restart by setting the producer id and epoch through
reflection and committing. librdkafka (so confluent-kafka) cannot: a new producer with the
transactional id can only fence and abort. flott does not need to resume, because every
committable says how to tell whether it was committed and how to write it again:

* inside each transaction the writer also commits a *marker*: an offset of the consumer group
  ``<prefix>-<subtask>`` on a partition it wrote to (``send_offsets_to_transaction``), a value
  larger than any earlier marker of that group (microseconds since the epoch). The broker makes it
  visible atomically with the records, so "committed" is exactly "the group's offset >= marker";
* the committable lists the offsets of the transaction's records per partition (runs of
  consecutive offsets), and records of an open or aborted transaction stay readable with
  ``isolation.level=read_uncommitted`` until retention removes them.

Recovery (``KafkaSink.commit`` with a committable whose producer is gone, after a restore) first
fences the old transactional id (the broker finishes a commit the old producer had asked for, or
aborts its transaction), then checks the marker; if the transaction was not committed, it reads
those records back and writes them again in a new transaction with the marker, committed at once.
(Checking before fencing could race with a commit in flight: the marker would read as unset,
the old commit land after, and the records be there twice.)
Committing is so idempotent, as the runtime
requires, and does not depend on the broker keeping the old transaction open: a transaction
the broker aborted on ``transaction.timeout.ms`` is written again too (Flink loses it).

Failures are for good: the first record not delivered (``message.timeout.ms``, a broker error), a
flush that timed out, or a transaction call that raised (``_TIMED_OUT`` from
``send_offsets_to_transaction`` or ``commit_transaction`` when a record of the transaction timed
out: librdkafka then refuses to commit it) is kept, and every later write, pre-commit and flush
raises it. A pre-commit that raises fails the task (the synchronous part of a checkpoint, see
:mod:`flott.runtime.tasks.subtask_checkpoint_coordinator`), which closes the writer (its open
transaction is aborted) and restarts from the last completed checkpoint as the restart strategy
allows, as Flink's KafkaWriter does.

Known limits: markers compare wall-clock microseconds, so a host whose clock is behind by more
than a checkpoint interval can confuse the check after a rescale onto it. Tansu 0.6 (the test
broker) writes COMMIT/ABORT markers (also for a fenced producer's open transaction) but leaves the
aborted-transaction list of its Fetch answers empty, so ``read_committed`` consumers see aborted
records there; the tests apply Kafka's read_committed rules to its raw log instead
(tests/kafka/committed_view.py). Tansu 0.6 also hides a group's committed transactional offset
while another transaction is open with records in that partition (tests/kafka/test_broker.py);
after a failure the crashed writers' next transactions and the other subtasks' new ones are open,
so on Tansu recovery reads the marker as unset and writes committed transactions again
(duplicates; never loss). A real Kafka shows the offset, and the check is exact there.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from flott.datastream.connectors.base import DeliveryGuarantee

log = logging.getLogger(__name__)

_TIMEOUT_S = 60.0


def _marker_value(last: int) -> int:
    return max(time.time_ns() // 1000, last + 1)


class KafkaWriter:
    """One subtask's writer (created on the task thread; every call comes from it)."""

    def __init__(self, settings: dict[str, Any], subtask_index: int, parallelism: int) -> None:
        import confluent_kafka as ck

        self._ck = ck
        self._config = dict(settings["config"])
        self._guarantee: DeliveryGuarantee = settings["guarantee"]
        self._eos = self._guarantee is DeliveryGuarantee.EXACTLY_ONCE
        self._prefix: str = settings["prefix"]
        self._subtask = subtask_index
        self._parallelism = parallelism
        schema = settings["serializer"]
        schema._value_schema.open()
        if schema._key_schema is not None:
            schema._key_schema.open()
        self._value = schema._value_schema.serialize
        self._key = schema._key_schema.serialize if schema._key_schema is not None else None
        self._topic: str | None = schema._topic
        self._selector = schema._topic_selector
        self._partitioner = schema._partitioner
        self._partitions: dict[str, list[int]] = {}
        self._transactional = False
        self._next_name = 1
        self._started = False
        self._lingering: Future[list[str]] | None = None
        self._producer: Any = None
        self._failure: str | None = None
        """The first failure (a record not delivered, a flush timed out, a transaction call that
        raised): kept for good, see :meth:`_check`."""
        self._undelivered = 0
        self._runs: dict[tuple[str, int], list[list[int]]] = {}
        self._precommitted: dict[str, Any] = {}
        self._last_marker = 0
        self._group_metadata: Any = None
        self._next: Future[Any] | None = None
        """The next transaction's producer, initialised in the background after a barrier (a round
        trip or two to the transaction coordinator the task thread does not wait for)."""
        self._background: ThreadPoolExecutor | None = None
        self._on_delivery = self._track if self._eos else self._note_error

    # --- runtime hooks ----------------------------------------------------------------------

    def set_transactional(self, enabled: bool = True) -> None:
        self._transactional = enabled
        if enabled and self._eos and not self._started:
            self._start()  # the first id is initialised now: ids in use stay consecutive

    def _start(self) -> None:
        """Abort what earlier writers left open, then initialise the first transaction (background)."""
        self._started = True
        background = self._background_executor()
        self._lingering = background.submit(
            abort_lingering_transactions,
            self._config,
            self._prefix,
            self._subtask,
            self._parallelism,
            self._next_name,
        )
        self._next = background.submit(self._transactional_producer, self._next_name)

    def _background_executor(self) -> ThreadPoolExecutor:
        if self._background is None:
            self._background = ThreadPoolExecutor(1, thread_name_prefix="kafka-sink-next-transaction")
        return self._background

    def set_restored_checkpoint_id(self, checkpoint_id: int) -> None:
        """The job restores from ``checkpoint_id``: the crashed writer's open transaction has the next id."""
        self._next_name = checkpoint_id + 1

    # --- writing ----------------------------------------------------------------------------

    def _transactional_id(self, name: int) -> str:
        return f"{self._prefix}-{self._subtask}-{name}"

    def _current(self) -> Any:
        producer = self._producer
        if producer is not None:
            return producer
        if self._eos:
            if not self._started:
                self._start()
            lingering, self._lingering = self._lingering, None
            if lingering is not None:
                try:
                    aborted = lingering.result()
                    if aborted:
                        log.info("KafkaSink: aborted lingering transactions %s", aborted)
                except Exception as e:
                    log.warning("KafkaSink: aborting lingering transactions failed: %s", e)
            upcoming, self._next = self._next, None
            try:
                if upcoming is not None:
                    producer = upcoming.result()
                else:
                    producer = self._transactional_producer(self._next_name)
            except self._ck.KafkaException as e:
                tid = self._transactional_id(self._next_name)
                raise self._failed(f"starting transaction {tid}: {e}") from e
        else:
            producer = self._ck.Producer(dict(self._config))
        self._producer = producer
        return producer

    def _transactional_producer(self, name: int, skipped: range = range(0)) -> Any:
        for gap in skipped:
            # An id no transaction got (its barrier never reached this subtask): initialised all the
            # same, so the broker has seen every id this writer passed and the lingering-transaction
            # aborter, which stops at the first id the broker never saw, goes on past it. (Flink's
            # KafkaWriter filled such gaps the same way before its naming strategies.)
            gap_id = self._transactional_id(gap)
            self._ck.Producer({**self._config, "transactional.id": gap_id}).init_transactions(_TIMEOUT_S)
        producer = self._ck.Producer({**self._config, "transactional.id": self._transactional_id(name)})
        producer.init_transactions(_TIMEOUT_S)
        producer.begin_transaction()
        return producer

    def _prepare_next(self, skipped: range = range(0)) -> None:
        background = self._background_executor()
        self._next = background.submit(self._transactional_producer, self._next_name, skipped)

    def _discard_empty(self) -> None:
        """Drop the producers of ids whose transactions got no records (in the background)."""
        producer, self._producer = self._producer, None
        upcoming, self._next = self._next, None
        if producer is None and upcoming is None:
            return

        def discard() -> None:
            # Transactions without records: a failure here loses nothing (the next id gets its own
            # producer), so it is only logged.
            try:
                for p in (producer, upcoming.result() if upcoming is not None else None):
                    if p is not None:
                        p.abort_transaction(_TIMEOUT_S)  # nothing was added: no broker round trip
            except Exception as e:
                log.warning("KafkaSink: dropping an empty transaction failed: %s", e)

        self._background_executor().submit(discard)

    def write_batch(self, records: list) -> None:
        self._check()
        producer = self._current()
        produce = producer.produce
        value_of, key_of = self._value, self._key
        topic, selector, partitioner = self._topic, self._selector, self._partitioner
        on_delivery = self._on_delivery
        for record in records:
            value = value_of(record)
            key = key_of(record) if key_of is not None else None
            t = topic if topic is not None else selector.apply(record)  # type: ignore[union-attr]
            while True:
                try:
                    if partitioner is None:
                        produce(t, value, key, on_delivery=on_delivery)
                    else:
                        produce(
                            t,
                            value,
                            key,
                            partitioner(record, key, value, t, self._partitions_of(t)),
                            on_delivery=on_delivery,
                        )
                    break
                except BufferError:  # librdkafka's queue is full: let deliveries drain
                    producer.poll(0.1)
                except self._ck.KafkaException as e:  # e.g. the transaction is in an error state
                    raise self._failed(f"producing to {t}: {e}") from e
        producer.poll(0)
        self._check()  # a delivery report polled just now: fail at once, as Flink's mailbox check

    def _partitions_of(self, topic: str) -> list[int]:
        parts = self._partitions.get(topic)
        if parts is None:
            md = self._producer.list_topics(topic, timeout=_TIMEOUT_S)
            parts = self._partitions[topic] = sorted(md.topics[topic].partitions)
        return parts

    def _note_error(self, err: Any, msg: Any) -> None:
        if err is not None:
            self._undelivered += 1
            self._record(f"first undelivered record: {msg.topic()}-{msg.partition()}: {err.str()}")

    def _track(self, err: Any, msg: Any) -> None:
        """Delivery report of a transactional record: remember its offset (runs per partition)."""
        if err is not None:
            self._note_error(err, msg)
            return
        key = (msg.topic(), msg.partition())
        offset = msg.offset()
        runs = self._runs.get(key)
        if runs is None:
            self._runs[key] = [[offset, offset + 1]]
        elif runs[-1][1] == offset:
            runs[-1][1] = offset + 1
        else:
            runs.append([offset, offset + 1])

    # --- failure ----------------------------------------------------------------------------
    #
    # A writer that lost a record, or whose transaction is in doubt, must never pre-commit again:
    # the records of its open transaction before the failure would be committed without the lost
    # ones and a later checkpoint would complete past them. So the first failure is kept and every
    # later write_batch, prepare_commit and flush raises it; the task fails (a failed pre-commit is
    # a failed synchronous checkpoint part, see flott.runtime.tasks.subtask_checkpoint_coordinator),
    # close() aborts the open transaction, and the job restarts from the last completed checkpoint.
    # Flink's KafkaWriter clears its async exception once thrown, but the throw fails its task
    # (from write, from flush at the barrier, or from the mailbox action the delivery callback
    # posts), so it never writes again either; keeping it here makes that so whatever catches it.

    def _record(self, cause: str) -> None:
        if self._failure is None:
            self._failure = cause
            log.warning("KafkaSink (subtask %d): %s", self._subtask, cause)

    def _failed(self, cause: str) -> RuntimeError:
        """Record ``cause`` (if it is the first failure) and return the error to raise."""
        self._record(cause)
        return self._error()

    def _error(self) -> RuntimeError:
        count = f" ({self._undelivered} records not delivered)" if self._undelivered else ""
        return RuntimeError(
            f"KafkaSink (subtask {self._subtask}) failed{count}: {self._failure}; the writer takes "
            "no more records (the task fails; its restart strategy may restart the job from the last "
            "completed checkpoint)"
        )

    def _check(self) -> None:
        if self._failure is not None:
            raise self._error()

    def _flush_all(self) -> None:
        self._check()
        producer = self._producer
        if producer is not None:
            left = producer.flush(_TIMEOUT_S)
            if left:
                self._record(f"{left} records not delivered within {_TIMEOUT_S:.0f} s")
        self._check()

    # --- checkpoints ------------------------------------------------------------------------

    def prepare_commit(self, checkpoint_id: int) -> list[Any]:
        self._check()
        if self._guarantee is DeliveryGuarantee.NONE:
            return []
        self._flush_all()
        if not self._eos:
            return []  # at least once: flushed
        if self._producer is not None and self._runs:
            committables = [self._precommit()]
        else:
            committables = []  # nothing in the transaction: its id is dropped all the same
            self._discard_empty()
        # Barriers this subtask did not see (checkpoints aborted before they reached it) skip ids:
        # those between the transaction just ended and the next one are initialised first.
        skipped = range(self._next_name + 1, checkpoint_id + 1)
        self._next_name = checkpoint_id + 1
        self._prepare_next(skipped)
        return committables

    def _precommit(self) -> tuple:
        """Marker into the open transaction; keep its producer for the commit."""
        producer = self._producer
        (marker_topic, marker_partition) = min(self._runs)
        self._last_marker = marker = _marker_value(self._last_marker)
        group = f"{self._prefix}-{self._subtask}"
        tid = self._transactional_id(self._next_name)
        try:
            producer.send_offsets_to_transaction(
                [self._ck.TopicPartition(marker_topic, marker_partition, marker)],
                self._group_metadata_of(group),
                _TIMEOUT_S,
            )
        except self._ck.KafkaException as e:
            raise self._failed(f"pre-committing transaction {tid} (its commit marker): {e}") from e
        runs = tuple((t, p, tuple(map(tuple, r))) for (t, p), r in sorted(self._runs.items()))
        self._precommitted[tid] = producer
        self._producer = None
        self._runs = {}
        return ("kafka-transaction", tid, group, marker_topic, marker_partition, marker, runs)

    def _group_metadata_of(self, group: str) -> Any:
        if self._group_metadata is None:
            consumer = self._ck.Consumer(
                {"bootstrap.servers": self._config["bootstrap.servers"], "group.id": group}
            )
            self._group_metadata = consumer.consumer_group_metadata()
            consumer.close()
        return self._group_metadata

    def commit_precommitted(self, tid: str) -> bool:
        """Commit the pre-committed transaction ``tid`` if this writer holds it."""
        producer = self._precommitted.pop(tid, None)
        if producer is None:
            return False
        try:
            producer.commit_transaction(_TIMEOUT_S)
        except self._ck.KafkaException as e:
            # The checkpoint is complete and holds the committable: the task fails and recovery
            # commits (or writes again) the transaction after the restart.
            raise self._failed(f"committing transaction {tid}: {e}") from e
        return True

    def flush(self, end_of_input: bool) -> None:
        if not (self._eos and end_of_input):
            self._flush_all()
            return
        # End of input: what is left in the open transaction is committed now (the runtime committed
        # every pre-committed transaction before).
        for tid in list(self._precommitted):
            self.commit_precommitted(tid)
        self._check()
        if self._producer is not None:
            self._flush_all()
            try:
                self._producer.commit_transaction(_TIMEOUT_S)
            except self._ck.KafkaException as e:
                raise self._failed(f"committing the last transaction at the end of input: {e}") from e
            self._producer = None
            self._runs = {}

    def close(self) -> None:
        """Without end of input (cancel, failure): the open transaction is aborted; pre-committed ones
        are left for recovery (their records stay readable, see the module docstring)."""
        producer, self._producer = self._producer, None
        upcoming, self._next = self._next, None
        if upcoming is not None:
            try:
                upcoming.result().abort_transaction(5.0)
            except Exception as e:
                log.debug("KafkaSink: aborting the prepared next transaction: %s", e)
        if self._background is not None:
            self._background.shutdown(wait=False)
        if producer is not None and self._eos:
            try:
                producer.abort_transaction(5.0)
            except self._ck.KafkaException as e:
                log.debug("KafkaSink: aborting on close: %s", e)
        elif producer is not None:
            producer.flush(5.0)
        self._precommitted.clear()


def fence_transactional_id(config: dict[str, Any], tid: str) -> int:
    """Make the broker abort whatever transaction ``tid`` has open (a new producer fences the old);
    returns the producer epoch the broker gave the new producer: 0 means ``tid`` was never used."""
    import confluent_kafka as ck

    stats: list[str] = []
    producer = ck.Producer(
        {**config, "transactional.id": tid, "statistics.interval.ms": 10, "stats_cb": stats.append}
    )
    producer.init_transactions(_TIMEOUT_S)
    deadline = time.monotonic() + _TIMEOUT_S
    while time.monotonic() < deadline:
        producer.poll(0.01)
        for raw in stats:
            eos = json.loads(raw).get("eos") or {}
            if int(eos.get("producer_id", -1)) >= 0:
                return int(eos["producer_epoch"])
        stats.clear()
    raise RuntimeError(f"KafkaSink: librdkafka reported no producer epoch for {tid}")


def abort_lingering_transactions(
    config: dict[str, Any], prefix: str, subtask: int, parallelism: int, start: int
) -> list[str]:
    """Fence every transactional id earlier writers may have left open (Flink's TransactionAborter,
    see the module docstring); returns the ids that had been used."""
    fenced: list[str] = []
    owner = subtask
    while True:
        used = 0
        n = start
        while fence_transactional_id(config, f"{prefix}-{owner}-{n}") > 0:
            fenced.append(f"{prefix}-{owner}-{n}")
            used += 1
            n += 1
        if used == 0:
            return fenced  # no such subtask (and none with a higher number)
        owner += parallelism


def commit_transactions(
    settings: dict[str, Any], writer: KafkaWriter | None, committables: list[Any]
) -> None:
    """Commit ``committables`` in order: with the writer's kept producer, else by recovery."""
    for c in committables:
        if not (isinstance(c, list | tuple) and len(c) == 7 and c[0] == "kafka-transaction"):
            raise ValueError(f"KafkaSink: not a Kafka committable: {c!r}")
        tid = str(c[1])
        if writer is not None and writer.commit_precommitted(tid):
            continue
        recover_transaction(settings["config"], c)


def recover_transaction(config: dict[str, Any], committable: Any) -> int:
    """Commit a pre-committed transaction whose producer is gone; returns the records re-written
    (0: it was committed already). See the module docstring."""
    import confluent_kafka as ck

    _, tid, group, marker_topic, marker_partition, marker, runs = committable
    # Fence first, read the marker after: the crashed producer may have sent its EndTxn(COMMIT)
    # before it died, and until the broker has written that commit the marker offset reads as
    # unset. init_transactions returns only once the broker has finished (committed) or aborted
    # the old transaction, so the marker read after it is stable; the records of an aborted
    # transaction stay in the log, read back below with read_uncommitted.
    producer = ck.Producer({**config, "transactional.id": tid})
    producer.init_transactions(_TIMEOUT_S)
    consumer = ck.Consumer(
        {
            "bootstrap.servers": config["bootstrap.servers"],
            "group.id": group,
            "enable.auto.commit": False,
            "isolation.level": "read_uncommitted",
        }
    )
    try:
        (tp,) = consumer.committed([ck.TopicPartition(marker_topic, marker_partition)], timeout=_TIMEOUT_S)
        if tp.error is not None:  # no answer is not "not committed": writing again could duplicate
            raise RuntimeError(f"KafkaSink: cannot read the commit marker of {tid}: {tp.error}")
        if tp.offset >= marker:
            return 0
        records = _read_runs(ck, consumer, runs)
        metadata = consumer.consumer_group_metadata()
    finally:
        consumer.close()
    producer.begin_transaction()
    for topic, partition, key, value, headers, timestamp in records:
        while True:
            try:
                producer.produce(topic, value, key, partition, timestamp=timestamp, headers=headers)
                break
            except BufferError:
                producer.poll(0.1)
    producer.send_offsets_to_transaction(
        [ck.TopicPartition(marker_topic, marker_partition, marker)], metadata, _TIMEOUT_S
    )
    producer.commit_transaction(_TIMEOUT_S)
    log.warning(
        "KafkaSink: transaction %s of a completed checkpoint was not committed before a failure: "
        "its %d records were written again and committed",
        tid,
        len(records),
    )
    return len(records)


def _read_runs(ck: Any, consumer: Any, runs: Any) -> list[tuple]:
    """The records at exactly the offsets in ``runs`` (open or aborted transactions included)."""
    wanted: dict[tuple[str, int], set[int]] = {}
    for topic, partition, ranges in runs:
        offsets = wanted.setdefault((topic, int(partition)), set())
        for lo, hi in ranges:
            offsets.update(range(int(lo), int(hi)))
    total = sum(len(v) for v in wanted.values())
    consumer.assign([ck.TopicPartition(t, p, min(offs)) for (t, p), offs in wanted.items()])
    found: dict[tuple[str, int, int], tuple] = {}
    deadline = time.monotonic() + _TIMEOUT_S
    last_wanted = {key: max(offs) for key, offs in wanted.items()}
    done: set[tuple[str, int]] = set()
    while len(done) < len(wanted):
        if time.monotonic() > deadline:
            break
        for m in consumer.consume(1000, 0.2):
            if m.error() is not None:
                continue
            key = (m.topic(), m.partition())
            if m.offset() in wanted.get(key, ()):
                ts_type, ts = m.timestamp()
                found[(key[0], key[1], m.offset())] = (
                    key[0],
                    key[1],
                    m.key(),
                    m.value(),
                    m.headers(),
                    ts if ts_type else 0,
                )
            if m.offset() >= last_wanted.get(key, -1):
                done.add(key)
    if len(found) != total:
        raise RuntimeError(
            f"KafkaSink: recovering a pre-committed transaction: {total - len(found)} of its {total} "
            "records are no longer in the log (retention?); they cannot be committed"
        )
    return [found[k] for k in sorted(found)]

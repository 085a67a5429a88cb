"""The Kafka source's reader: one split per partition, assigned by flott, positions in checkpoints.

Flink's KafkaSource has an enumerator that assigns partitions to readers; flott's readers need
none, because the assignment is a pure function every reader computes alike: partition ``p`` of
topic ``t`` belongs to subtask ``((hash(t) * 31 & 0x7FFFFFFF) % n + p) % n`` with Java's
``String.hashCode`` (Flink's ``KafkaSourceEnumerator.getSplitOwner``, so a job reads the same
partitions on the same subtasks as on Flink). The consumer is given its partitions with
``assign()``: there is no consumer-group rebalancing (Kafka's group protocol would move
partitions behind the checkpoint's back).

A split is ``(topic, partition, next offset, stopping offset or None)``: plain and self-contained.
Starting and stopping offsets are resolved to numbers when a fresh reader starts (on the
TaskExecutor, as Flink's enumerator resolves them when it assigns a split), so what a checkpoint
stores is exact and restoring never asks the broker where "latest" is now.

Checkpoints hold every reader's splits as UNION state (``union_split_state``), headed by a
``("kafka-reader", subtask, parallelism)`` entry, with the splits that reached their stopping
offset kept as ``(t, p, stop, stop)``: a restored reader sees the splits of *all* old readers,
keeps those it owns by the rule above at the new parallelism (rescaling redistributes partitions
as a fresh start would assign them), and knows every partition the job has ever read, which is
what Flink's enumerator keeps (``assignedPartitions``) and what partition discovery needs.
Splits without a header (checkpoints written before) are taken as this reader's share.

Partition discovery (``partition.discovery.interval.ms``, Flink's default 5 minutes for unbounded
sources, off for bounded ones as Flink's builder forces): each reader lists the subscribed topics
(or the topics matching the pattern) in a background thread every interval and takes the
partitions that are new to the job and that it owns, from the *earliest* offset (Flink's
enumerator: partitions found after its first discovery start at EARLIEST; their stopping offsets
come from the stopping initializer). A restored reader discovers once when it starts (as Flink's
restored enumerator does), so partitions created while the job was down are read from their
start. An unbounded source never ends (also once every split reached a stopping offset), as in
Flink.

Where the position comes from: ``Consumer.position()`` after the records handed out (the offset of
the next record the consumer will deliver, past transaction markers and aborted records), taken
between two ``poll_batch`` calls, which is when the runtime snapshots.

Data path: ``consume(max_records)`` on the task thread (librdkafka fetches on its own threads and
releases the GIL while it waits), values deserialised in one pass; per record only the error check
and the deserialiser. Backpressure: while the task is blocked downstream it does not call
``consume``; librdkafka stops fetching once its prefetch queue (``queued.max.messages.kbytes``,
8 MB here unless set) is full, so nothing is buffered without bound.

Offsets are committed to the consumer group when a checkpoint completes
(``commit.offsets.on.checkpoint``, with a group id), for monitoring only: restore uses the checkpoint.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from flott.common.serialization import SimpleStringSchema
from flott.errors import ConfigurationError

log = logging.getLogger(__name__)

_POLL_TIMEOUT_S = 0.05
_META_TIMEOUT_S = 30.0
_EARLIEST, _LATEST = -2, -1  # librdkafka's OFFSET_BEGINNING / OFFSET_END
READER_TAG = "kafka-reader"


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def split_owner(topic: str, partition: int, parallelism: int) -> int:
    """The subtask that reads ``topic``/``partition`` (Flink's ``getSplitOwner``)."""
    start = ((java_string_hash(topic) * 31) & 0x7FFFFFFF) % parallelism
    return (start + partition) % parallelism


def normalize_splits(splits: Iterable[Any]) -> list[tuple[str, int, int, int | None]]:
    return parse_state(splits)[0]


def parse_state(entries: Iterable[Any]) -> tuple[list[tuple[str, int, int, int | None]], bool]:
    """The splits in restored state, and whether it is a whole job's (UNION, reader headers present)."""
    out = []
    union = False
    for split in entries:
        if isinstance(split, list | tuple) and len(split) == 3 and split[0] == READER_TAG:
            union = True
            continue
        try:
            topic, partition, offset, stop = split
        except (TypeError, ValueError):
            raise ValueError(f"not a Kafka split (topic, partition, offset, stop): {split!r}") from None
        out.append((str(topic), int(partition), int(offset), None if stop is None else int(stop)))
    return out, union


def new_owned_partitions(
    listed: Iterable[tuple[str, int]], known: set[tuple[str, int]], subtask: int, parallelism: int
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Of the partitions a discovery ``listed``: those new to the job, and of them the ones this
    subtask owns (and so starts reading)."""
    new = sorted(set(listed) - known)
    return new, [tp for tp in new if split_owner(tp[0], tp[1], parallelism) == subtask]


class KafkaSourceReader:
    """Reads its splits with one librdkafka consumer (created on the task thread)."""

    union_split_state = True
    """The runtime keeps the splits as UNION state (see the module docstring)."""

    def __init__(
        self,
        settings: dict[str, Any],
        subtask_index: int,
        splits: list[Any],
        parallelism: int = 1,
        known: set[tuple[str, int]] | None = None,
    ) -> None:
        import confluent_kafka as ck

        self._ck = ck
        self._settings = settings
        config = dict(settings["config"])
        config.update(
            {
                "group.id": settings["group_id"] or "flott-kafka-source",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "enable.partition.eof": True,
            }
        )
        if settings["client_id_prefix"]:
            config["client.id"] = f"{settings['client_id_prefix']}-{subtask_index}"
        self._client_config = config
        self._consumer: Any = ck.Consumer(config)
        self._subtask = subtask_index
        self._parallelism = parallelism
        self._splits: dict[tuple[str, int], list[Any]] = {}
        """(topic, partition) -> [start offset, stop offset or None]; start is used until consumed."""
        self._finished: dict[tuple[str, int], int] = {}
        """Partitions of this reader that reached their stopping offset (kept in snapshots)."""
        self._known: set[tuple[str, int]] | None = known
        """Every partition the job reads or has read (None: not known yet, see ``restore``)."""
        self._pending_commits: dict[int, list[Any]] = {}
        deserializer = settings["deserializer"]
        self._deserializer = deserializer
        self._value = deserializer._value_schema
        self._value.open()
        if deserializer._key_schema is not None:
            deserializer._key_schema.open()
        self._decode = _fast_decoder(self._value)
        self._stopping = False
        self._emit_timestamps = False
        self._batch_keys: list[tuple[str, int]] = []
        interval = int(settings.get("discovery_ms") or 0)
        fixed = settings["subscription"][0] == "partitions"  # nothing to discover
        self._discovery_s = interval / 1000 if interval > 0 and not fixed else 0.0
        self._discovery_due = time.monotonic() + self._discovery_s
        self._discovery: Future[Any] | None = None
        self._background: ThreadPoolExecutor | None = None
        self._meta_client: Any = None
        """A consumer of the background thread: metadata and offsets for discovery (never assigned)."""
        self._assigned = False
        self._add_splits(normalize_splits(splits))

    def _add_splits(self, splits: list[tuple[str, int, int, int | None]]) -> None:
        tps = []
        for topic, partition, offset, stop in splits:
            key = (topic, partition)
            if self._known is not None:
                self._known.add(key)
            if stop is not None and offset >= stop:
                self._finished[key] = stop  # finished before the snapshot
                continue
            self._splits[key] = [offset, stop]
            self._stopping = self._stopping or stop is not None
            tps.append(self._ck.TopicPartition(topic, partition, offset))
        if tps and self._assigned:
            self._consumer.incremental_assign(tps)  # discovered partitions join the assignment
        elif tps:
            self._consumer.assign(tps)
            self._assigned = True

    # --- creation ---------------------------------------------------------------------------

    @classmethod
    def create(cls, settings: dict[str, Any], subtask_index: int, parallelism: int) -> KafkaSourceReader:
        """A fresh reader: this subtask's partitions, offsets resolved now (the user's initializers)."""
        reader = cls(settings, subtask_index, [], parallelism)
        try:
            listed = reader._discover(reader._consumer)
            partitions = [tp for tp in listed if split_owner(tp[0], tp[1], parallelism) == subtask_index]
            splits = reader._initial_splits(reader._consumer, partitions, settings["starting"])
        except BaseException:
            reader.close()
            raise
        reader._known = set(listed)
        reader._add_splits(splits)
        return reader

    @classmethod
    def restore(
        cls, settings: dict[str, Any], subtask_index: int, splits: list[Any], parallelism: int = 1
    ) -> KafkaSourceReader:
        """A reader of restored state: of a whole job's (UNION) state the splits it owns, and the
        partitions new since the snapshot from their earliest offset; else exactly ``splits``."""
        parsed, union = parse_state(splits)
        if not union:
            return cls(settings, subtask_index, parsed, parallelism)
        mine = [s for s in parsed if split_owner(s[0], s[1], parallelism) == subtask_index]
        reader = cls(settings, subtask_index, mine, parallelism, known={(s[0], s[1]) for s in parsed})
        if settings["subscription"][0] != "partitions":
            try:
                reader._take_discovered(reader._discover_new(reader._consumer, reader._known))
            except BaseException:
                reader.close()
                raise
        return reader

    def _initial_splits(
        self, client: Any, partitions: list[tuple[str, int]], starting: Any
    ) -> list[tuple[str, int, int, int | None]]:
        settings = self._settings
        starts = self._resolve(client, starting, partitions)
        stops = (
            self._resolve(client, settings["stopping"], partitions)
            if settings["stopping"] is not None
            else dict.fromkeys(partitions)
        )
        return [(t, p, starts[(t, p)], stops[(t, p)]) for t, p in partitions]

    def _discover_new(
        self, client: Any, known: set[tuple[str, int]] | None
    ) -> tuple[list[tuple[str, int]], list[tuple[str, int, int, int | None]]]:
        """The partitions new to the job (not in ``known``; None: everything listed counts as
        known), and splits of those this reader owns, from EARLIEST (as Flink starts partitions
        found after its first discovery). Safe on the background thread: reads only ``known``."""
        from flott.datastream.connectors.kafka import KafkaOffsetsInitializer

        listed = self._discover(client, missing_ok=True)
        if known is None:
            return listed, []  # state of an older checkpoint: what exists now counts as known
        new, mine = new_owned_partitions(listed, known, self._subtask, self._parallelism)
        splits = self._initial_splits(client, mine, KafkaOffsetsInitializer.earliest()) if mine else []
        if mine:
            log.info("KafkaSource: subtask %d reads the new partitions %s", self._subtask, mine)
        return new, splits

    def _take_discovered(
        self, found: tuple[list[tuple[str, int]], list[tuple[str, int, int, int | None]]]
    ) -> None:
        new, splits = found
        if self._known is None:
            self._known = set()
        self._known.update(new)
        self._add_splits(splits)

    def _discover(self, client: Any, missing_ok: bool = False) -> list[tuple[str, int]]:
        kind, what = self._settings["subscription"]
        if kind == "partitions":
            return [(t, int(p)) for t, p in what]
        md = client.list_topics(timeout=_META_TIMEOUT_S)
        if kind == "topics":
            missing = [t for t in what if t not in md.topics or md.topics[t].error is not None]
            if missing and not missing_ok:
                raise ConfigurationError(f"KafkaSource: topics {missing} do not exist on {self._bootstrap()}")
            names = [t for t in what if t not in missing]
        else:
            pattern = re.compile(what)
            names = sorted(t for t in md.topics if pattern.fullmatch(t) and not t.startswith("__"))
        return [(t, p) for t in names for p in sorted(md.topics[t].partitions)]

    def _bootstrap(self) -> str:
        return str(self._settings["config"].get("bootstrap.servers"))

    def _resolve(self, client: Any, initializer: Any, partitions: list[tuple[str, int]]) -> dict:
        """Offsets of ``partitions`` per ``initializer`` (a KafkaOffsetsInitializer), as numbers."""
        ck = self._ck
        kind = initializer._kind
        out: dict[tuple[str, int], int] = {}
        need_committed: list[tuple[str, int]] = []
        if kind == "offsets":
            for tp in partitions:
                if tp in initializer._offsets:
                    out[tp] = initializer._offsets[tp]
                else:
                    need_committed.append(tp)
        elif kind == "committed":
            need_committed = list(partitions)
        elif kind == "timestamp" and partitions:
            found = client.offsets_for_times(
                [ck.TopicPartition(t, p, initializer._timestamp) for t, p in partitions],
                timeout=_META_TIMEOUT_S,
            )
            for found_tp in found:
                out[(found_tp.topic, found_tp.partition)] = (
                    found_tp.offset
                    if found_tp.offset >= 0
                    else self._watermarks(client, found_tp.topic, found_tp.partition)[1]
                )
        for tp in partitions:
            if kind in ("earliest", "latest"):
                low, high = self._watermarks(client, *tp)
                out[tp] = low if kind == "earliest" else high
        if need_committed:
            committed = client.committed(
                [ck.TopicPartition(t, p) for t, p in need_committed], timeout=_META_TIMEOUT_S
            )
            for ctp in committed:
                key = (ctp.topic, ctp.partition)
                if ctp.offset >= 0:
                    out[key] = ctp.offset
                    continue
                reset = initializer._reset.name
                if reset == "NONE":
                    raise ConfigurationError(
                        f"KafkaSource: group {self._settings['group_id']!r} has no committed offset for "
                        f"{ctp.topic}-{ctp.partition} and the offset reset strategy is NONE"
                    )
                low, high = self._watermarks(client, *key)
                out[key] = low if reset == "EARLIEST" else high
        return out

    def _watermarks(self, client: Any, topic: str, partition: int) -> tuple[int, int]:
        low, high = client.get_watermark_offsets(
            self._ck.TopicPartition(topic, partition), timeout=_META_TIMEOUT_S
        )
        return int(low), int(high)

    # --- partition discovery (background thread) --------------------------------------------

    def _discovery_step(self, now: float) -> None:
        """Start a discovery when one is due; take the partitions of a finished one."""
        future = self._discovery
        if future is None:
            if self._background is None:
                self._background = ThreadPoolExecutor(1, thread_name_prefix="kafka-partition-discovery")
            known = None if self._known is None else set(self._known)
            self._discovery = self._background.submit(self._discover_in_background, known)
            return
        if not future.done():
            return
        self._discovery = None
        self._discovery_due = now + self._discovery_s
        try:
            found = future.result()
        except Exception as e:  # the broker is unreachable for now: try again next interval
            log.warning(
                "KafkaSource: partition discovery failed (retrying in %.0f s): %s", self._discovery_s, e
            )
            return
        self._take_discovered(found)

    def _discover_in_background(self, known: set[tuple[str, int]] | None) -> Any:
        if self._meta_client is None:
            client_id = f"{self._client_config.get('client.id', 'flott-kafka-source')}-discovery"
            self._meta_client = self._ck.Consumer({**self._client_config, "client.id": client_id})
        return self._discover_new(self._meta_client, known)

    # --- reading ----------------------------------------------------------------------------

    def set_emit_timestamps(self, enabled: bool = True) -> None:
        """Hand out ``(value, Kafka timestamp)`` pairs (the job uses event time from them)."""
        self._emit_timestamps = enabled

    def active_split_keys(self) -> Any:
        """The partitions still being read (per-partition watermarks)."""
        return self._splits.keys()

    def batch_split_keys(self) -> list[tuple[str, int]]:
        """The partition of each record of the last batch, in order (per-partition watermarks)."""
        return self._batch_keys

    def poll_batch(self, max_records: int) -> list | None:
        if self._discovery_s:
            now = time.monotonic()
            if now >= self._discovery_due:
                self._discovery_step(now)
        if not self._splits:
            if self._settings["bounded"]:
                return None
            time.sleep(_POLL_TIMEOUT_S)  # an unbounded source never ends (Flink)
            return []
        messages = self._consumer.consume(max_records, _POLL_TIMEOUT_S)
        if not messages:
            return []
        if not (self._stopping or self._emit_timestamps or self._deserializer._metadata):
            values: list[Any] = []
            append = values.append
            for m in messages:
                if m.error() is None:
                    append(m.value())
                else:
                    self._on_event(m)
            try:
                return self._decode(values)
            except Exception:
                self._find_bad_record([m for m in messages if m.error() is None])
                raise
        return self._slow_batch(messages)

    def _slow_batch(self, messages: list[Any]) -> list:
        """Per record: stopping offsets (records at or past the stop are not emitted) and metadata."""
        out = []
        keys: list[tuple[str, int]] = []
        self._batch_keys = keys
        finished = []
        deserializer = self._deserializer
        emit_timestamps = self._emit_timestamps
        for m in messages:
            if m.error() is not None:
                self._on_event(m)
                continue
            key = (m.topic(), m.partition())
            split = self._splits.get(key)
            if split is None:
                continue  # a partition finished in this batch
            stop = split[1]
            if stop is not None and m.offset() >= stop:
                finished.append(key)
                continue
            try:
                value = self._value.deserialize(m.value())
                if deserializer._metadata:
                    raw_key = m.key()
                    if deserializer._key_schema is not None and raw_key is not None:
                        raw_key = deserializer._key_schema.deserialize(raw_key)
                    ts_type, ts = m.timestamp()
                    value = _record(m, raw_key, value, ts if ts_type else None)
            except Exception as e:
                raise _bad_record(m, e) from e
            if value is not None:
                keys.append(key)
                if emit_timestamps:
                    ts_type, ts = m.timestamp()
                    out.append((value, ts if ts_type else None))
                else:
                    out.append(value)
            if stop is not None and m.offset() + 1 >= stop:
                finished.append(key)
        for key in finished:
            self._finish(key)
        return out

    def _on_event(self, m: Any) -> None:
        err = m.error()
        if err.code() == self._ck.KafkaError._PARTITION_EOF:
            key = (m.topic(), m.partition())
            split = self._splits.get(key)
            if split is not None and split[1] is not None and m.offset() >= split[1]:
                self._finish(key)
            return
        if err.fatal() or not err.retriable():
            raise RuntimeError(f"KafkaSource: reading {m.topic()}-{m.partition()} failed: {err.str()}")
        log.warning("KafkaSource: %s (retrying)", err.str())

    def _finish(self, key: tuple[str, int]) -> None:
        """A partition reached its stopping offset: no more of it is read."""
        split = self._splits.pop(key, None)
        if split is None:
            return
        self._finished[key] = split[1]
        self._consumer.incremental_unassign([self._ck.TopicPartition(key[0], key[1])])

    def _find_bad_record(self, messages: list[Any]) -> None:
        for m in messages:
            try:
                self._value.deserialize(m.value())
            except Exception as e:
                raise _bad_record(m, e) from e

    # --- checkpoints ------------------------------------------------------------------------

    def snapshot_state(self, checkpoint_id: int) -> list[tuple]:
        """A header naming this reader, every unfinished split at the offset of the next record it
        will hand out, and the finished ones as ``(t, p, stop, stop)`` (UNION state)."""
        ck = self._ck
        if self._splits:
            positions = self._consumer.position([ck.TopicPartition(t, p) for t, p in self._splits])
            for tp in positions:
                if tp.offset >= 0:
                    self._splits[(tp.topic, tp.partition)][0] = tp.offset
        out: list[tuple] = [(t, p, s[0], s[1]) for (t, p), s in self._splits.items()]
        if self._settings["commit_offsets"] and out:
            self._pending_commits[checkpoint_id] = out
        finished = [(t, p, stop, stop) for (t, p), stop in self._finished.items()]
        return [(READER_TAG, self._subtask, self._parallelism), *out, *finished]

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Commit the checkpoint's offsets to the group (asynchronously; monitoring only)."""
        done = [c for c in self._pending_commits if c <= checkpoint_id]
        if not done:
            return
        offsets = self._pending_commits[max(done)]
        for c in done:
            del self._pending_commits[c]
        if offsets:
            tps = [self._ck.TopicPartition(t, p, o) for t, p, o, _ in offsets]
            try:
                self._consumer.commit(offsets=tps, asynchronous=True)
            except self._ck.KafkaException as e:
                log.warning("KafkaSource: committing offsets to the group failed: %s", e)

    def close(self) -> None:
        background, self._background = self._background, None
        if background is not None:
            background.shutdown(wait=True, cancel_futures=True)  # the discovery client is free after
        meta, self._meta_client = self._meta_client, None
        if meta is not None:
            meta.close()
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()


def _record(m: Any, key: Any, value: Any, timestamp: int | None) -> Any:
    from flott.datastream.connectors.kafka import KafkaRecord

    return KafkaRecord(m.topic(), m.partition(), m.offset(), timestamp, key, value, list(m.headers() or []))


def _bad_record(m: Any, e: Exception) -> Exception:
    return ValueError(
        f"KafkaSource: cannot deserialize the record at {m.topic()}-{m.partition()} offset {m.offset()}: "
        f"{type(e).__name__}: {e}"
    )


def _fast_decoder(schema: Any) -> Any:
    """A function decoding a list of values at once; a plain loop for SimpleStringSchema in UTF-8."""
    if type(schema) is SimpleStringSchema and schema.get_charset().upper().replace("_", "-") == "UTF-8":
        return lambda values: [v.decode() for v in values]
    deserialize = schema.deserialize

    def decode(values: list[bytes]) -> list[Any]:
        out = list(map(deserialize, values))
        return [v for v in out if v is not None] if None in out else out  # None: skip the record

    return decode

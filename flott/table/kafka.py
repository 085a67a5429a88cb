"""The ``kafka`` and ``upsert-kafka`` table connectors, on flott's DataStream KafkaSource / KafkaSink.

Options are Flink's (flink-connector-kafka's table docs); each one a table declares is either
implemented or refused when the table is declared, never accepted and ignored:

* ``kafka``: an append-only table. ``topic`` (``a;b`` for several when read) or ``topic-pattern``,
  ``properties.*`` handed to librdkafka (``properties.group.id``, ``properties.auto.offset.reset``
  for ``group-offsets`` read by flott), ``format`` / ``value.format`` (json, csv, raw),
  ``key.format`` + ``key.fields``, ``key.fields-prefix``, ``value.fields-include``,
  ``scan.startup.mode`` (earliest-offset, latest-offset, group-offsets, timestamp, specific-offsets),
  ``scan.bounded.mode`` (unbounded, latest-offset, group-offsets, timestamp, specific-offsets),
  ``sink.delivery-guarantee``, ``sink.transactional-id-prefix``, ``sink.parallelism``; metadata
  columns ``topic``, ``partition``, ``offset``, ``timestamp``, ``timestamp-type`` when read.
* ``upsert-kafka``: a changelog keyed by the PRIMARY KEY. Written: the key from the key columns,
  ``+I``/``+U`` as the row's value, ``-D`` as a tombstone (a null value), ``-U`` dropped. Read from
  the earliest offset: the latest value per key, normalized to a changelog as Flink's
  ChangelogNormalize does (``+I`` first, ``-U``/``+U`` on a change, ``-D`` on a tombstone).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Iterator
from typing import Any

from flott.common.serialization import ByteArraySchema, SerializationSchema
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream.connectors.base import DeliveryGuarantee
from flott.datastream.connectors.kafka import (
    KafkaOffsetResetStrategy,
    KafkaOffsetsInitializer,
    KafkaRecordDeserializationSchema,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
    KafkaTopicPartition,
)
from flott.datastream.functions import FilterFunction, FlatMapFunction, KeyedProcessFunction
from flott.datastream.state import ValueStateDescriptor
from flott.errors import NotYetSupportedError
from flott.table import runtime
from flott.table.filesystem import CsvLineFormat, JsonLineFormat, JsonRowParser
from flott.table.planner import table_error, validation_error
from flott.table.types import DataType

__all__ = ["KafkaConnector", "UpsertKafkaConnector", "check_kafka_formats", "check_kafka_options"]

_COMMON = {
    "connector",
    "topic",
    "properties.bootstrap.servers",
    "key.format",
    "key.fields-prefix",
    "value.format",
    "value.fields-include",
    "sink.parallelism",
    "sink.delivery-guarantee",
    "sink.transactional-id-prefix",
}
_KAFKA_ONLY = {
    "format",
    "key.fields",
    "topic-pattern",
    "scan.startup.mode",
    "scan.startup.specific-offsets",
    "scan.startup.timestamp-millis",
    "scan.bounded.mode",
    "scan.bounded.specific-offsets",
    "scan.bounded.timestamp-millis",
    "sink.partitioner",
}
_UPSERT_ONLY = {"scan.bounded.mode", "scan.bounded.specific-offsets", "scan.bounded.timestamp-millis"}
_NOT_YET = {
    "scan.topic-partition-discovery.interval": "partition discovery of table sources",
    "scan.parallelism": "a scan parallelism",
    "sink.semantic": "the deprecated sink.semantic (use sink.delivery-guarantee)",
    "sink.buffer-flush.max-rows": "upsert-kafka's sink buffer",
    "sink.buffer-flush.interval": "upsert-kafka's sink buffer",
}
_FORMATS = ("json", "csv", "raw")
_FORMAT_OPTIONS = {"csv": ("field-delimiter", "null-literal"), "json": (), "raw": ()}
_STARTUP = ("earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets")
_BOUNDED = ("unbounded", "latest-offset", "group-offsets", "timestamp", "specific-offsets")
_GUARANTEES = {
    "at-least-once": DeliveryGuarantee.AT_LEAST_ONCE,
    "exactly-once": DeliveryGuarantee.EXACTLY_ONCE,
    "none": DeliveryGuarantee.NONE,
}
METADATA_KEYS = {"topic", "partition", "offset", "timestamp", "timestamp-type"}
"""The readable metadata of Flink's Kafka source flott gives (``headers`` and ``leader-epoch`` not yet)."""


def _qualified(name: str) -> str:
    return f"default_catalog.default_database.{name}"


def _missing(option: str) -> Exception:
    return validation_error(
        f"One or more required options are missing.\n\nMissing required options are:\n\n{option}"
    )


def _enum(options: dict[str, str], key: str, allowed: Iterable[str], default: str) -> str:
    value = options.get(key, default)
    allowed = list(allowed)
    if value not in allowed:
        raise validation_error(
            f"Invalid value for option '{key}'. Expected one of [{', '.join(allowed)}], but was: {value}"
        )
    return value


def check_kafka_options(
    kind: str,
    name: str,
    names: list[str],
    metadata: dict[str, str],
    primary_key: list[str] | None,
    options: dict[str, str],
) -> None:
    """Flink's validation of a kafka / upsert-kafka table, at declaration; raises what Flink would
    (or NotYetSupportedError for Flink's options flott does not implement)."""
    allowed = _COMMON | (_KAFKA_ONLY if kind == "kafka" else _UPSERT_ONLY)
    value_format = options.get("value.format", options.get("format"))
    key_format = options.get("key.format")
    for fmt, prefixes in ((value_format, ("", "value.")), (key_format, ("key.",))):
        for option in _FORMAT_OPTIONS.get(fmt or "", ()):
            allowed |= {f"{p}{fmt}.{option}" for p in prefixes}
    unknown = []
    for key in sorted(options):
        if key in allowed or (key.startswith("properties.") and len(key) > len("properties.")):
            continue
        if key in _NOT_YET:
            raise NotYetSupportedError(
                f"the {kind} connector's option '{key}' ({_NOT_YET[key]}) is not yet supported by flott"
            )
        bare = key.removeprefix("key.").removeprefix("value.")
        if bare.split(".", 1)[0] in _FORMATS and "." in bare:
            raise NotYetSupportedError(
                f"the format option '{key}' is not yet supported by flott's {kind} connector"
            )
        unknown.append(key)
    if unknown:
        raise validation_error(
            f"Unsupported options found for '{kind}'.\n\nUnsupported options:\n\n" + "\n".join(unknown)
        )
    if "properties.bootstrap.servers" not in options:
        raise _missing("properties.bootstrap.servers")
    if kind == "kafka" and "format" in options and "value.format" in options:
        raise validation_error("Only one of 'format' and 'value.format' can be set.")
    if value_format is None:
        raise _missing("value.format" if kind == "upsert-kafka" else "format")
    for fmt in (value_format, key_format):
        if fmt is not None and fmt not in _FORMATS:
            raise NotYetSupportedError(
                f"the format '{fmt}' is not yet supported by flott's {kind} connector (it has json, csv, raw)"
            )
    if kind == "kafka":
        if ("topic" in options) == ("topic-pattern" in options):
            raise (
                validation_error("Option 'topic' and 'topic-pattern' shouldn't be set together.")
                if ("topic" in options)
                else _missing("topic")
            )
        if primary_key:
            raise validation_error(
                f"The Kafka table '{_qualified(name)}' with '{value_format}' format doesn't support defining "
                "PRIMARY KEY constraint on the table, because it can't guarantee the semantic of primary key."
            )
        if key_format is not None and not options.get("key.fields"):
            raise validation_error(
                "A key format 'key.format' requires the declaration of one or more of key fields using "
                "'key.fields'."
            )
        if options.get("key.fields") and key_format is None:
            raise validation_error(
                "The option 'key.fields' can only be declared if a key format is defined using 'key.format'."
            )
        _enum(options, "scan.startup.mode", _STARTUP, "group-offsets")
        _enum(options, "scan.bounded.mode", _BOUNDED, "unbounded")
        partitioner = options.get("sink.partitioner", "default")
        if partitioner != "default":
            raise NotYetSupportedError(
                f"'sink.partitioner' = '{partitioner}' is not yet supported by flott (it partitions as "
                "Kafka's producer does: 'default')"
            )
    else:
        if "topic" not in options:
            raise _missing("topic")
        if key_format is None:
            raise _missing("key.format")
        if not primary_key:
            raise validation_error(
                "'upsert-kafka' tables require to define a PRIMARY KEY constraint. The PRIMARY KEY specifies "
                "which columns should be read from or write to the Kafka message key. The PRIMARY KEY also "
                "defines records in the 'upsert-kafka' table should update or delete on which keys."
            )
        _enum(options, "scan.bounded.mode", _BOUNDED, "unbounded")
    if ";" in options.get("topic", "") and kind == "upsert-kafka":
        raise validation_error("The 'upsert-kafka' connector only supports a single topic")
    include = _enum(options, "value.fields-include", ("ALL", "EXCEPT_KEY"), "ALL")
    if options.get("key.fields-prefix") and include != "EXCEPT_KEY":
        raise validation_error(
            "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. "
            "Set it to 'EXCEPT_KEY' instead to avoid field overlaps."
        )
    physical = [n for n in names if n not in metadata]
    for field in _key_fields(options, primary_key):
        if field not in physical:
            raise validation_error(
                f"Could not find the field '{field}' in the table schema for usage in the key format. "
                f"A key field must be a regular, physical column. The following columns can be selected in "
                f"the 'key.fields' option:\n[{', '.join(physical)}]"
            )
    prefix = options.get("key.fields-prefix", "")
    for field in _key_fields(options, primary_key):
        if not field.startswith(prefix):
            raise validation_error(
                f"All fields in 'key.fields' must be prefixed with '{prefix}' when option "
                f"'key.fields-prefix' is set but field '{field}' is not prefixed."
            )
    for column, key in metadata.items():
        if key not in METADATA_KEYS:
            raise NotYetSupportedError(
                f"the metadata key '{key}' (column '{column}') is not yet supported by flott's {kind} "
                f"connector (it reads {', '.join(sorted(METADATA_KEYS))})"
            )
        if kind == "upsert-kafka":
            raise NotYetSupportedError("metadata columns of an upsert-kafka table are not yet supported")
    guarantee = _enum(options, "sink.delivery-guarantee", _GUARANTEES, "at-least-once")
    if guarantee == "exactly-once" and not options.get("sink.transactional-id-prefix"):
        raise validation_error(
            "sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE."
        )


def _key_fields(options: dict[str, str], primary_key: list[str] | None) -> list[str]:
    if primary_key:
        return list(primary_key)
    text = options.get("key.fields", "")
    return [f.strip() for f in text.split(";") if f.strip()]


# --------------------------------------------------------------------------- formats


class RowBytes:
    """One format (json, csv, raw) over some of the table's columns: their values to a message's
    bytes and back, as Flink's formats write and read them."""

    def __init__(
        self,
        fmt: str,
        options: dict[str, str],
        prefixes: tuple[str, ...],
        names: list[str],
        types: list[DataType],
    ) -> None:
        self.fmt, self.names, self.types = fmt, names, types

        def opt(option: str, default: str | None) -> str | None:
            for p in prefixes:
                if f"{p}{fmt}.{option}" in options:
                    return options[f"{p}{fmt}.{option}"]
            return default

        self._line: Any = None
        self._parse: Any = None
        if fmt == "json":
            self._line, self._parse = JsonLineFormat(names, types), JsonRowParser(names, types)
        elif fmt == "csv":
            delimiter = opt("field-delimiter", ",") or ","
            null_literal = opt("null-literal", None)
            self._line = CsvLineFormat(types, delimiter, null_literal or "")
            self._parse = runtime.CsvRowParser(names, types, delimiter, null_literal)
        else:
            columns = ", ".join(f"`{n}` {t}" for n, t in zip(names, types, strict=True))
            if len(types) != 1:
                raise validation_error(
                    f"The 'raw' format only supports single physical column. However the defined schema "
                    f"contains multiple physical columns: [{columns}]"
                )
            if types[0].type_root not in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
                raise NotYetSupportedError(
                    f"the raw format of a {types[0]} column is not yet supported by flott (it has STRING "
                    "and BYTES columns)"
                )

    def encode(self, vals: tuple[Any, ...]) -> bytes | None:
        if self.fmt == "raw":
            v = vals[0]
            return None if v is None else (v.encode() if isinstance(v, str) else bytes(v))
        line: str = self._line.map((0, vals))
        return line.encode()

    def decode(self, data: bytes) -> tuple[Any, ...] | None:
        if self.fmt == "raw":
            return (data.decode() if self.types[0].type_root in ("CHAR", "VARCHAR") else data,)
        rows = list(self._parse.flat_map(data.decode()))
        return rows[0][1] if rows else None


class _Layout:
    """Where a table's columns come from: key format, value format, metadata (Flink's decoding
    projections), by index into the table's columns."""

    def __init__(self, table: Any) -> None:
        options = table.options
        metadata: dict[str, str] = table.metadata
        physical = [i for i, n in enumerate(table.names) if n not in metadata]
        prefix = options.get("key.fields-prefix", "")
        key_names = _key_fields(options, table.primary_key)
        self.key = [table.names.index(n) for n in key_names]
        if options.get("value.fields-include", "ALL") == "EXCEPT_KEY":
            self.value = [i for i in physical if i not in self.key]
        else:
            self.value = physical
        self.metadata = [(table.names.index(n), k) for n, k in metadata.items()]
        self.width = len(table.names)
        value_format = options.get("value.format", options.get("format", "json"))
        self.value_format = RowBytes(
            value_format,
            options,
            ("value.", ""),
            [table.names[i] for i in self.value],
            [table.types[i] for i in self.value],
        )
        self.key_format: RowBytes | None = None
        if self.key:
            self.key_format = RowBytes(
                options["key.format"],
                options,
                ("key.",),
                [n[len(prefix) :] for n in key_names],
                [table.types[i] for i in self.key],
            )


def check_kafka_formats(table: Any) -> None:
    """The key and value formats over their columns (raw takes one column), checked at declaration."""
    _Layout(table)


# --------------------------------------------------------------------------- reading


def _metadata_value(record: Any, key: str) -> Any:
    if key == "topic":
        return record.topic
    if key == "partition":
        return record.partition
    if key == "offset":
        return record.offset
    if key == "timestamp":
        ts = record.timestamp
        return None if ts is None else _dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=ts)
    return "CreateTime" if record.timestamp is not None else "NoTimestampType"


class RecordToRow(FlatMapFunction):
    """A consumed KafkaRecord to the table's row: ``(+I, row)`` for kafka; for upsert-kafka
    ``(+U, row)`` or ``(-D, key columns)`` on a tombstone (ChangelogNormalize orders them)."""

    def __init__(self, layout: _Layout, upsert: bool) -> None:
        self.layout, self.upsert = layout, upsert

    def flat_map(self, value: Any) -> Iterator[Any]:
        layout = self.layout
        row: list[Any] = [None] * layout.width
        if value.value is None:
            if not self.upsert:
                return  # a tombstone in an append-only table: Flink's formats skip a null message
            kind = 3
        else:
            vals = layout.value_format.decode(value.value)
            if vals is None:
                return
            for i, v in zip(layout.value, vals, strict=True):
                row[i] = v
            kind = 2 if self.upsert else 0
        if layout.key_format is not None and value.key is not None:
            keys = layout.key_format.decode(value.key)
            if keys is not None:
                for i, v in zip(layout.key, keys, strict=True):
                    row[i] = v
        for i, key in layout.metadata:
            row[i] = _metadata_value(value, key)
        yield (kind, tuple(row))


class ChangelogNormalize(KeyedProcessFunction):
    """Upserts and deletes per key to a changelog: the last row per key in keyed state; a
    first upsert is ``+I``, a changed one ``-U`` old + ``+U`` new, an unchanged one nothing, a
    delete ``-D`` of the last row (nothing when the key has none), as Flink's ChangelogNormalize."""

    def __init__(self, state_ttl_ms: int = 0) -> None:
        self.state_ttl_ms = state_ttl_ms
        self._state: Any = None

    def open(self, runtime_context: Any) -> None:
        descriptor = runtime.with_state_ttl(
            ValueStateDescriptor("changelog-normalize", None), self.state_ttl_ms
        )
        self._state = runtime_context.get_state(descriptor)

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        kind, row = value
        before = self._state.value()
        if kind == 3:
            if before is None:
                return None
            self._state.clear()
            return [(3, before)]
        if before == row:
            return None
        self._state.update(row)
        return [(0, row)] if before is None else [(1, before), (2, row)]


def _offsets(text: str, topic: str, key: str) -> dict[KafkaTopicPartition, int]:
    out = {}
    for part in text.split(";"):
        fields = dict(f.split(":", 1) for f in part.split(",") if ":" in f)
        if set(fields) != {"partition", "offset"}:
            raise validation_error(
                f"Invalid properties '{key}' should follow the format "
                f"'partition:0,offset:42;partition:1,offset:300', but is '{text}'."
            )
        out[KafkaTopicPartition(topic, int(fields["partition"]))] = int(fields["offset"])
    return out


def _initializer(
    table: Any, mode: str, which: str, reset: KafkaOffsetResetStrategy
) -> KafkaOffsetsInitializer:
    options = table.options
    if mode == "earliest-offset":
        return KafkaOffsetsInitializer.earliest()
    if mode == "latest-offset":
        return KafkaOffsetsInitializer.latest()
    if mode == "group-offsets":
        return KafkaOffsetsInitializer.committed_offsets(reset)
    if mode == "timestamp":
        key = f"scan.{which}.timestamp-millis"
        if key not in options:
            raise _missing(key)
        return KafkaOffsetsInitializer.timestamp(int(options[key]))
    key = f"scan.{which}.specific-offsets"
    if key not in options:
        raise _missing(key)
    topics = options.get("topic", "").split(";")
    if len(topics) != 1 or not topics[0]:
        raise NotYetSupportedError(
            f"'{key}' of several topics or a topic pattern is not yet supported by flott"
        )
    return KafkaOffsetsInitializer.offsets(_offsets(options[key], topics[0], key))


def _properties(options: dict[str, str]) -> dict[str, str]:
    return {
        k[len("properties.") :]: v
        for k, v in options.items()
        if k.startswith("properties.") and k not in ("properties.bootstrap.servers", "properties.group.id")
    }


def _source_stream(ctx: Any, table: Any, upsert: bool) -> Any:
    options = table.options
    props = _properties(options)
    reset_text = props.pop("auto.offset.reset", "none").lower()
    resets = {
        "earliest": KafkaOffsetResetStrategy.EARLIEST,
        "latest": KafkaOffsetResetStrategy.LATEST,
        "none": KafkaOffsetResetStrategy.NONE,
    }
    if reset_text not in resets:
        raise validation_error(
            f"'properties.auto.offset.reset' must be earliest, latest or none, not {reset_text}"
        )
    builder = (
        KafkaSource.builder()
        .set_bootstrap_servers(options["properties.bootstrap.servers"])
        .set_deserializer(KafkaRecordDeserializationSchema.with_metadata(ByteArraySchema()))
        .set_properties(props)
    )
    if "topic-pattern" in options:
        builder.set_topic_pattern(options["topic-pattern"])
    else:
        builder.set_topics(*[t.strip() for t in options["topic"].split(";") if t.strip()])
    startup = "earliest-offset" if upsert else options.get("scan.startup.mode", "group-offsets")
    group = options.get("properties.group.id")
    if group is None and "group-offsets" in (startup, options.get("scan.bounded.mode")):
        group = f"KafkaSource-{_qualified(table.name)}"
    if group is not None:
        builder.set_group_id(group)
    builder.set_starting_offsets(_initializer(table, startup, "startup", resets[reset_text]))
    bounded = options.get("scan.bounded.mode", "unbounded")
    if bounded != "unbounded":
        builder.set_bounded(_initializer(table, bounded, "bounded", KafkaOffsetResetStrategy.LATEST))
    elif not ctx.streaming:
        raise validation_error(
            f"Querying an unbounded table '{_qualified(table.name)}' in batch mode is not allowed. The table "
            "source is unbounded."
        )
    records = ctx.env.from_source(
        builder.build(), WatermarkStrategy.no_watermarks(), f"KafkaSource-{table.name}"
    )
    rows = (
        records.flat_map(RecordToRow(_Layout(table), upsert))
        .name("KafkaRows")
        .set_parallelism(records.transformation.parallelism)
    )
    if not upsert:
        return ctx.uid(rows, "kafka-source")
    if not ctx.streaming:
        raise table_error(
            "Querying a table in batch mode is currently only possible for INSERT-only table sources. "
            f"But the source for table '{_qualified(table.name)}' produces other changelog messages than "
            "just INSERT."
        )
    keys = tuple(table.names.index(k) for k in table.primary_key)
    normalized = rows.key_by(runtime.TupleKeySelector(keys)).process(ChangelogNormalize(ctx.state_ttl_ms))
    return ctx.uid(normalized.name("ChangelogNormalize"), "changelog-normalize")


# --------------------------------------------------------------------------- writing


class _ValueSchema(SerializationSchema):
    """A table row's value bytes; a ``-D`` row (upsert-kafka) is a tombstone (None)."""

    def __init__(self, layout: _Layout) -> None:
        super().__init__()
        self.layout = layout

    def serialize(self, element: Any) -> Any:
        kind, vals = element
        if kind == 3:
            return None
        return self.layout.value_format.encode(tuple(vals[i] for i in self.layout.value))


class _KeySchema(SerializationSchema):
    def __init__(self, layout: _Layout) -> None:
        super().__init__()
        self.layout = layout

    def serialize(self, element: Any) -> Any:
        vals = element[1]
        assert self.layout.key_format is not None
        return self.layout.key_format.encode(tuple(vals[i] for i in self.layout.key))


class _NotUpdateBefore(FilterFunction):
    def filter(self, value: Any) -> bool:
        return bool(value[0] != 1)


def _sink_stream(ctx: Any, table: Any, ds: Any, updating: bool, upsert: bool) -> None:
    options = table.options
    if table.metadata:
        raise NotYetSupportedError(
            f"writing to the kafka table '{table.name}' with metadata columns is not yet supported by flott"
        )
    if updating and not upsert:
        raise table_error(
            f"Table sink '{_qualified(table.name)}' doesn't support consuming update and delete changes "
            "which is produced by an updating query (use the 'upsert-kafka' connector for a changelog)"
        )
    if ";" in options.get("topic", ";") or "topic-pattern" in options:
        raise validation_error(
            "Currently only a single topic is supported as a sink of the kafka connector "
            f"(table '{_qualified(table.name)}')"
        )
    layout = _Layout(table)
    serializer = (
        KafkaRecordSerializationSchema.builder()
        .set_topic(options["topic"])
        .set_value_serialization_schema(_ValueSchema(layout))
    )
    if layout.key_format is not None:
        serializer.set_key_serialization_schema(_KeySchema(layout))
    guarantee = _GUARANTEES[options.get("sink.delivery-guarantee", "at-least-once")]
    builder = (
        KafkaSink.builder()
        .set_bootstrap_servers(options["properties.bootstrap.servers"])
        .set_record_serializer(serializer.build())
        .set_delivery_guarantee(guarantee)
    )
    if "sink.transactional-id-prefix" in options:
        builder.set_transactional_id_prefix(options["sink.transactional-id-prefix"])
    for k, v in _properties(options).items():
        builder.set_property(k, v)
    sink_parallelism = int(options["sink.parallelism"]) if "sink.parallelism" in options else None
    if upsert:
        ds = (
            ds.filter(_NotUpdateBefore())
            .name("DropUpdateBefore")
            .set_parallelism(ds.transformation.parallelism)
        )
        if sink_parallelism is not None and sink_parallelism != ds.transformation.parallelism:
            keys = tuple(table.names.index(k) for k in table.primary_key)
            ds = ds.key_by(runtime.TupleKeySelector(keys))  # a key's changes stay in order
    sink = ds.sink_to(builder.build()).name(f"KafkaSink-{table.name}")
    ctx.uid(sink, "kafka-sink")
    if sink_parallelism is not None:
        sink.set_parallelism(sink_parallelism)


class KafkaConnector:
    updating_source = False

    def source_stream(self, ctx: Any, table: Any) -> Any:
        return _source_stream(ctx, table, upsert=False)

    def sink_stream(self, ctx: Any, table: Any, ds: Any, updating: bool) -> None:
        _sink_stream(ctx, table, ds, updating, upsert=False)


class UpsertKafkaConnector:
    updating_source = True

    def source_stream(self, ctx: Any, table: Any) -> Any:
        return _source_stream(ctx, table, upsert=True)

    def sink_stream(self, ctx: Any, table: Any, ds: Any, updating: bool) -> None:
        _sink_stream(ctx, table, ds, updating, upsert=True)

"""Table connectors: ``print``, ``blackhole``, ``datagen`` (bounded), ``filesystem``, ``kafka`` and
``upsert-kafka`` (flott.table.kafka) as in Flink, on DataStream sinks/sources.

A ConnectorTable is what ``CREATE TABLE ... WITH (...)`` or a TableDescriptor declares. Every option
a connector does not implement is refused when the table is declared (Flink fails on unknown options
too, at planning), so nothing is silently ignored.
"""

from __future__ import annotations

import random
from typing import Any

from flott.common.serialization import Encoder
from flott.common.typeinfo import Types
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream.connectors.file_sink import (
    BucketAssigner,
    ElementBucketAssigner,
    FileSink,
    RollingPolicy,
)
from flott.datastream.connectors.file_source import (
    FileEnumeratorProvider,
    FileSource,
    StreamFormat,
)
from flott.datastream.connectors.print_sink import PrintSink
from flott.errors import NotYetSupportedError
from flott.table import runtime
from flott.table.filesystem import (
    CsvLineFormat,
    JsonLineFormat,
    JsonRowParser,
    PartitionedLine,
    ProjectedLine,
    _Never,
    partition_filter,
    partitions,
)
from flott.table.kafka import KafkaConnector, UpsertKafkaConnector, check_kafka_formats, check_kafka_options
from flott.table.planner import validation_error
from flott.table.types import DataType

_OPTIONS = {
    "print": {"connector", "print-identifier", "standard-error", "sink.parallelism"},
    "blackhole": {"connector"},
    "datagen": {"connector", "number-of-rows", "rows-per-second"},
    "filesystem": {"connector", "path", "format", "csv.field-delimiter", "csv.null-literal"},
}


_FILESYSTEM_OPTION_PREFIXES = (
    "sink.",
    "source.",
    "partition.",
    "auto-compaction",
    "compaction.",
    "csv.",
    "json.",
)
"""Flink's own filesystem/format options flott does not implement (refused as not yet supported)."""


class ConnectorTable:
    def __init__(
        self, name: str, names: list[str], types: list[DataType], options: dict[str, str], connector: Any
    ) -> None:
        self.name, self.names, self.types, self.options, self.connector = (
            name,
            names,
            types,
            options,
            connector,
        )
        self.computed: tuple[str, list[tuple[str, Any]]] | None = None  # the DDL text, declared columns
        self.watermark: Any = None  # the DDL's WATERMARK FOR clause (flott.table.sql_windows)
        self.partition_keys: list[str] = []  # PARTITIONED BY (filesystem: k=v directories)
        self.primary_key: list[str] = []  # PRIMARY KEY (...) NOT ENFORCED (upsert-kafka's message key)
        self.metadata: dict[str, str] = {}  # column -> metadata key (``METADATA FROM 'offset'``)
        self.virtual: set[str] = set()  # metadata columns declared VIRTUAL (read, never written)

    def check_insert(self, node: Any) -> None:
        if len(node.types) != len(self.types):
            raise validation_error(
                f"Column types of query result and sink for '{_qualified(self.name)}' do not match.\n"
                f"Cause: Different number of columns.\n\n"
                f"Query schema: [{_columns(node.names, node.types)}]\n"
                f"Sink schema:  [{_columns(self.names, self.types)}]"
            )


def _columns(names: list[str], types: list[DataType]) -> str:
    return ", ".join(f"{n}: {t}" for n, t in zip(names, types, strict=True))


def _qualified(name: str) -> str:
    return f"default_catalog.default_database.{name}"


def connector_table(
    name: str,
    names: list[str],
    types: list[DataType],
    options: dict[str, str],
    partition_keys: list[str] | None = None,
    primary_key: list[str] | None = None,
    metadata: dict[str, tuple[str, bool]] | None = None,
) -> ConnectorTable:
    """The connector table ``CREATE TABLE`` / a TableDescriptor declares, its options checked.
    ``metadata`` maps a column to its metadata key and whether it is VIRTUAL."""
    kind = options.get("connector")
    if kind is None:
        raise validation_error(
            f"Table options do not contain an option key 'connector' for discovering a connector. "
            f"Table: {_qualified(name)}"
        )
    connector = _CONNECTORS.get(kind)
    if connector is None:
        raise NotYetSupportedError(
            f"the table connector '{kind}' is not yet supported (flott has: {', '.join(sorted(_CONNECTORS))})"
        )
    for k in primary_key or []:
        if k not in names:
            raise validation_error(f"Invalid primary key 'PK_{k}'. Column '{k}' does not exist.")
    if kind in ("kafka", "upsert-kafka"):
        keys = {n: k for n, (k, _) in (metadata or {}).items()}
        check_kafka_options(kind, name, names, keys, primary_key, options)
        table = ConnectorTable(name, names, types, dict(options), connector())
        table.primary_key, table.metadata = list(primary_key or []), keys
        table.virtual = {n for n, (_, virtual) in (metadata or {}).items() if virtual}
        check_kafka_formats(table)
        if partition_keys:
            raise NotYetSupportedError(f"PARTITIONED BY is not yet supported for the '{kind}' connector")
        return table
    if primary_key:
        raise NotYetSupportedError(
            f"a PRIMARY KEY on a '{kind}' table is not yet supported by flott (upsert-kafka tables take one)"
        )
    if metadata:
        raise NotYetSupportedError(
            f"METADATA columns of a '{kind}' table are not yet supported by flott (kafka tables have them)"
        )
    allowed = set(_OPTIONS[kind])
    if kind == "datagen":
        for n in names:
            allowed |= {f"fields.{n}.{o}" for o in ("kind", "start", "end", "min", "max", "length")}
    if kind == "filesystem":
        for required in ("path", "format"):
            if required not in options:
                raise validation_error(
                    "One or more required options are missing.\n\nMissing required options are:\n\n"
                    + required
                )
        if options["format"] not in ("csv", "json"):
            raise NotYetSupportedError(
                f"the filesystem connector's format '{options['format']}' is not yet supported by flott "
                "(it reads and writes csv and json)"
            )
        if options["format"] != "csv":
            allowed = {o for o in allowed if not o.startswith("csv.")}
    unknown = sorted(set(options) - allowed)
    flinks = [o for o in unknown if kind == "filesystem" and o.startswith(_FILESYSTEM_OPTION_PREFIXES)]
    if flinks:
        raise NotYetSupportedError(
            f"the filesystem connector's option(s) {', '.join(flinks)} are not yet supported by flott "
            "(it implements path, format, csv.field-delimiter, csv.null-literal and PARTITIONED BY)"
        )
    if unknown:
        raise validation_error(
            f"Unsupported options found for '{kind}'.\n\nUnsupported options:\n\n" + "\n".join(unknown)
        )
    table = ConnectorTable(name, names, types, dict(options), connector())
    if partition_keys:
        if kind != "filesystem":
            raise NotYetSupportedError(
                f"PARTITIONED BY is not yet supported for the '{kind}' connector (flott partitions "
                "filesystem tables)"
            )
        for k in partition_keys:
            if k not in names:
                raise validation_error(
                    f"Partition column '{k}' not defined in the table schema. Available columns: "
                    f"[{', '.join(repr(n) for n in names)}]"
                )
        if len(partition_keys) == len(names):
            raise validation_error("Cannot partition a table by all its columns")
        table.partition_keys = list(partition_keys)
    return table


class PrintConnector:
    def source_stream(self, ctx: Any, table: ConnectorTable) -> Any:
        raise validation_error("Connector 'print' can only be used as a sink. It cannot be used as a source.")

    def sink_stream(self, ctx: Any, table: ConnectorTable, ds: Any, updating: bool) -> None:
        out = ds.map(runtime.RowToString(table.types))
        identifier = table.options.get("print-identifier")
        if table.options.get("standard-error", "false").lower() == "true":
            sink = out._sink(PrintSink(identifier, to_stderr=True), "Print to Std. Err")
        else:
            sink = out.print(identifier)
        if "sink.parallelism" in table.options:
            sink.set_parallelism(int(table.options["sink.parallelism"]))
        elif ds.transformation.parallelism is not None:
            # Flink's sinks take their input's parallelism unless told otherwise: rows of a VALUES
            # (one subtask) print without a subtask prefix
            out.set_parallelism(ds.transformation.parallelism)
            sink.set_parallelism(ds.transformation.parallelism)


class _Discard:
    def write_batch(self, records: list[Any]) -> None:
        pass

    def flush(self, end_of_input: bool) -> None:
        pass

    def close(self) -> None:
        pass


class BlackholeSink:
    def create_writer(self, subtask_index: int, parallelism: int, input_type: object | None) -> _Discard:
        return _Discard()


class BlackholeConnector:
    def source_stream(self, ctx: Any, table: ConnectorTable) -> Any:
        raise validation_error(
            "Connector 'blackhole' can only be used as a sink. It cannot be used as a source."
        )

    def sink_stream(self, ctx: Any, table: ConnectorTable, ds: Any, updating: bool) -> None:
        ds._sink(BlackholeSink(), "BlackHole")


class DatagenConnector:
    """Bounded datagen: ``number-of-rows`` rows, ``sequence`` fields counting from start to end,
    ``random`` fields (the default) drawn within min/max (numbers) or of a length (strings)."""

    def source_stream(self, ctx: Any, table: ConnectorTable) -> Any:
        opts = table.options
        if "rows-per-second" in opts:
            raise NotYetSupportedError("datagen 'rows-per-second' (rate limiting) is not yet supported")
        seq = [n for n in table.names if opts.get(f"fields.{n}.kind") == "sequence"]
        if "number-of-rows" in opts:
            count = int(opts["number-of-rows"])
        elif seq:
            count = min(int(opts[f"fields.{n}.end"]) - int(opts[f"fields.{n}.start"]) + 1 for n in seq)
        else:
            raise NotYetSupportedError(
                "an unbounded datagen table (no 'number-of-rows' and no sequence field) is not yet supported"
            )
        rng = random.Random()
        rows = [
            tuple(self._value(opts, n, t, i, rng) for n, t in zip(table.names, table.types, strict=True))
            for i in range(count)
        ]
        return ctx.env.from_collection([(0, r) for r in rows]).name(f"Source: {table.name}")

    @staticmethod
    def _value(opts: dict[str, str], name: str, t: DataType, i: int, rng: random.Random) -> Any:
        root = t.type_root
        if opts.get(f"fields.{name}.kind") == "sequence":
            v = int(opts[f"fields.{name}.start"]) + i
            return str(v) if root in ("CHAR", "VARCHAR") else v
        if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
            bits = {"TINYINT": 7, "SMALLINT": 15, "INTEGER": 31, "BIGINT": 63}[root]
            lo = int(opts.get(f"fields.{name}.min", -(2**bits)))
            hi = int(opts.get(f"fields.{name}.max", 2**bits - 1))
            return rng.randint(lo, hi)
        if root in ("FLOAT", "DOUBLE"):
            lo_f = float(opts.get(f"fields.{name}.min", -1.7e308 if root == "DOUBLE" else -3.4e38))
            hi_f = float(opts.get(f"fields.{name}.max", 1.7e308 if root == "DOUBLE" else 3.4e38))
            return rng.uniform(lo_f, hi_f)
        if root in ("CHAR", "VARCHAR"):
            n = int(opts.get(f"fields.{name}.length", 100))
            return "".join(rng.choice("0123456789abcdef") for _ in range(n))
        if root in ("BINARY", "VARBINARY"):  # random bytes, 100 of them unless the type is shorter
            n = int(opts.get(f"fields.{name}.length", str(min(100, t.length))))  # type: ignore[attr-defined]
            return rng.randbytes(n)
        if root == "BOOLEAN":
            return rng.random() < 0.5
        raise NotYetSupportedError(f"datagen values of type {t} are not yet supported")

    def sink_stream(self, ctx: Any, table: ConnectorTable, ds: Any, updating: bool) -> None:
        raise validation_error(
            "Connector 'datagen' can only be used as a source. It cannot be used as a sink."
        )


class FileSystemConnector:
    """The filesystem connector as a bounded source of csv files: every file under ``path`` (or the
    file itself), each read whole by one subtask, lines parsed to the table's columns (an empty
    field is NULL for non-string columns, as Flink's csv format reads it). Writing is refused."""

    def pruned_source_stream(self, ctx: Any, table: ConnectorTable, condition: Any) -> Any:
        """Partition pruning: only the directories whose values pass the condition's conjuncts
        on partition columns alone are read."""
        return self.source_stream(ctx, table, partition_filter(table, condition))

    def source_stream(self, ctx: Any, table: ConnectorTable, keep: Any = None) -> Any:
        if not table.partition_keys:
            return self._files_stream(ctx, table, table.options["path"], table.names, table.types, ())
        streams = []
        keys = table.partition_keys
        data = [(n, t) for n, t in zip(table.names, table.types, strict=True) if n not in keys]
        for directory, values in partitions(table.options["path"], keys):
            typed = tuple(
                None if v is None else runtime._csv_value(table.types[table.names.index(k)], v)
                for k, v in zip(keys, values, strict=True)
            )
            placed = [(table.names.index(k), v) for k, v in zip(keys, typed, strict=True)]
            if keep is not None and not keep(placed):
                continue
            streams.append(
                self._files_stream(
                    ctx, table, directory, [n for n, _ in data], [t for _, t in data], tuple(placed)
                )
            )
        if not streams:
            return ctx.env.from_collection([(0, tuple(None for _ in table.names))]).filter(
                _Never()
            ).name(f"{table.name}[no partitions]")
        return streams[0].union(*streams[1:]) if len(streams) > 1 else streams[0]

    def _files_stream(
        self,
        ctx: Any,
        table: ConnectorTable,
        path: str,
        names: list[str],
        types: list[DataType],
        placed: tuple[tuple[int, Any], ...],
    ) -> Any:
        source = (
            FileSource.for_record_stream_format(StreamFormat.text_line_format(), path)
            .set_file_enumerator(FileEnumeratorProvider.default_non_splittable_file_enumerator())
            .build()
        )
        lines = ctx.env.from_source(source, WatermarkStrategy.no_watermarks(), f"{table.name}[files]")
        parse: Any
        if table.options["format"] == "json":
            parse = JsonRowParser(names, types, placed)
        else:
            delimiter = table.options.get("csv.field-delimiter", ",")
            null_literal = table.options.get("csv.null-literal")
            parse = runtime.CsvRowParser(names, types, delimiter, null_literal, placed)
        return lines.flat_map(parse).name("CsvRows").set_parallelism(lines.transformation.parallelism)

    def sink_stream(self, ctx: Any, table: ConnectorTable, ds: Any, updating: bool) -> None:
        if updating:
            raise validation_error(
                f"Table sink '{_qualified(table.name)}' doesn't support consuming update changes"
            )
        fmt: Any
        keys = [table.names.index(k) for k in table.partition_keys]
        data = [i for i in range(len(table.names)) if i not in keys]
        names, types = [table.names[i] for i in data], [table.types[i] for i in data]
        if table.options["format"] == "json":
            fmt = JsonLineFormat(names, types)
        else:
            fmt = CsvLineFormat(
                types,
                table.options.get("csv.field-delimiter", ","),
                table.options.get("csv.null-literal", ""),
            )
        assigner = BucketAssigner.base_path_bucket_assigner()
        if keys:
            assigner = ElementBucketAssigner()
            lines = ds.map(PartitionedLine(fmt, keys, data, table.partition_keys)).name("Format")
        else:
            lines = ds.map(ProjectedLine(fmt, data), output_type=Types.STRING()).name("Format")
        sink = (
            FileSink.for_row_format(table.options["path"], Encoder.simple_string_encoder())
            .with_bucket_assigner(assigner)
            .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
            .build()
        )
        lines.sink_to(sink).name(f"Filesystem: {table.name}")


_CONNECTORS: dict[str, Any] = {
    "print": PrintConnector,
    "blackhole": BlackholeConnector,
    "datagen": DatagenConnector,
    "filesystem": FileSystemConnector,
    "kafka": KafkaConnector,
    "upsert-kafka": UpsertKafkaConnector,
}

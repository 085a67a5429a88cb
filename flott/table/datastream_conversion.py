"""DataStream <-> Table: ``from_data_stream``, ``to_data_stream``, ``to_changelog_stream``.

A DataStream becomes a table through a ``DataStreamScan``: a chained map that turns each record
(a Row, a tuple, or one atomic value) into the table runtime's ``(kind, values)`` pair. Its columns
come from the stream's declared output type as PyFlink derives them: a Row's fields by name, all
nullable; a tuple's fields ``f0, f1, ...`` with Java's primitive types (int, long, double, boolean
...) ``NOT NULL``; an atomic type one column ``f0`` (``NOT NULL`` when primitive). A stream without a
declared type (pickled Python objects, Flink's ``RAW``) is refused: the planner cannot type it.

The other way, the table's plan is translated onto the StreamTableEnvironment's own
StreamExecutionEnvironment at once (as PyFlink adds the table's operators to it), and a map turns
the ``(kind, values)`` pairs into named ``Row``s with their RowKind, typed ``Types.ROW_NAMED`` so
``print()`` shows ``+I[a,1]``/``-U[a,1]`` as PyFlink does. ``to_data_stream`` is for insert-only
tables: an updating one (a streaming GROUP BY, an outer join) is refused with Flink's TableException.
"""

from __future__ import annotations

import decimal
from typing import Any

from flott.common.time import Instant
from flott.common.typeinfo import (
    JAVA_PRIMITIVE_TYPES,
    BasicArrayTypeInfo,
    BasicType,
    BasicTypeInfo,
    DateTypeInfo,
    ListTypeInfo,
    MapTypeInfo,
    ObjectArrayTypeInfo,
    PickledBytesTypeInfo,
    PrimitiveArrayTypeInfo,
    RowTypeInfo,
    TimestampTypeInfo,
    TimeTypeInfo,
    TupleTypeInfo,
    TypeInformation,
    Types,
)
from flott.common.types import Row, RowKind
from flott.datastream.functions import MapFunction
from flott.errors import NotYetSupportedError
from flott.table.expression import Expression
from flott.table.plan import PlanNode, TranslationContext
from flott.table.planner import table_error, validation_error
from flott.table.types import (
    ArrayType,
    BigIntType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    MapType,
    RowField,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

__all__ = ["DataStreamScan", "from_data_stream", "to_changelog_stream", "to_data_stream"]

_ANONYMOUS_SINK = "*anonymous_datastream_sink${}*"



# --------------------------------------------------------------------------- type mapping


def data_type_of(info: TypeInformation, primitive_not_null: bool) -> DataType:
    """The SQL type Flink derives for a TypeInformation (``Types.LONG`` is ``BIGINT``)."""
    if isinstance(info, BasicTypeInfo):
        b = info.basic_type
        nullable = not (primitive_not_null and b in JAVA_PRIMITIVE_TYPES)  # Java primitives: NOT NULL
        basic: dict[BasicType, DataType] = {
            BasicType.STRING: VarCharType(VarCharType.MAX_LENGTH, True),
            BasicType.CHAR: VarCharType(VarCharType.MAX_LENGTH, nullable),
            BasicType.BOOLEAN: BooleanType(nullable),
            BasicType.BYTE: TinyIntType(nullable),
            BasicType.SHORT: SmallIntType(nullable),
            BasicType.INT: IntType(nullable),
            BasicType.LONG: BigIntType(nullable),
            BasicType.FLOAT: FloatType(nullable),
            BasicType.DOUBLE: DoubleType(nullable),
            BasicType.BIG_DEC: DecimalType(38, 18),
            BasicType.BIG_INT: DecimalType(38, 0),
            BasicType.INSTANT: LocalZonedTimestampType(9),
        }
        return basic[b]
    if isinstance(info, DateTypeInfo):
        return DateType()
    if isinstance(info, TimeTypeInfo):
        return TimeType(0)
    if isinstance(info, TimestampTypeInfo):
        return TimestampType(3)
    if isinstance(info, PrimitiveArrayTypeInfo) and info.get_element_type() == Types.BYTE():
        return VarBinaryType(VarBinaryType.MAX_LENGTH)
    if isinstance(info, (BasicArrayTypeInfo, ObjectArrayTypeInfo, PrimitiveArrayTypeInfo)):
        primitive = isinstance(info, PrimitiveArrayTypeInfo)
        return ArrayType(data_type_of(info.get_element_type(), primitive))
    if isinstance(info, ListTypeInfo):
        return ArrayType(data_type_of(info.elem_type, False))
    if isinstance(info, MapTypeInfo):
        return MapType(data_type_of(info.get_key_type(), False), data_type_of(info.get_value_type(), False))
    if isinstance(info, RowTypeInfo):
        fields = zip(info.get_field_names(), info.get_field_types(), strict=True)
        return RowType([RowField(n, data_type_of(t, False)) for n, t in fields])
    raise NotYetSupportedError(f"a DataStream field of type {info} is not yet supported in flott.table")


def type_info_of(t: DataType) -> TypeInformation:
    """The DataStream type of a table column, as PyFlink's ``to_data_stream`` gives it."""
    root = t.type_root
    simple = {
        "CHAR": Types.STRING,
        "VARCHAR": Types.STRING,
        "BOOLEAN": Types.BOOLEAN,
        "TINYINT": Types.BYTE,
        "SMALLINT": Types.SHORT,
        "INTEGER": Types.INT,
        "BIGINT": Types.LONG,
        "FLOAT": Types.FLOAT,
        "DOUBLE": Types.DOUBLE,
        "DECIMAL": Types.BIG_DEC,
        "DATE": Types.SQL_DATE,
        "TIME_WITHOUT_TIME_ZONE": Types.SQL_TIME,
        "TIMESTAMP_WITHOUT_TIME_ZONE": Types.SQL_TIMESTAMP,
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE": Types.INSTANT,
    }
    if root in simple:
        return simple[root]()
    if root in ("BINARY", "VARBINARY"):
        return Types.PRIMITIVE_ARRAY(Types.BYTE())
    if isinstance(t, ArrayType):
        return Types.OBJECT_ARRAY(type_info_of(t.element_type))
    if isinstance(t, MapType):
        return Types.MAP(type_info_of(t.key_type), type_info_of(t.value_type))
    if isinstance(t, RowType):
        return Types.ROW_NAMED(t.field_names(), [type_info_of(f) for f in t.field_types()])
    raise NotYetSupportedError(f"converting a table column of type {t} to a DataStream is not yet supported")


# --------------------------------------------------------------------------- DataStream -> Table


def _plain(v: Any) -> Any:
    """A DataStream value as the table runtime holds it (an Instant as its UTC wall time)."""
    if isinstance(v, Instant):
        import datetime

        since = datetime.timedelta(seconds=v.seconds, microseconds=v.nanos // 1000)
        return datetime.datetime(1970, 1, 1) + since
    return v


class RecordToValues(MapFunction):
    """One stream record as ``(INSERT, values)`` of the chosen fields (by position)."""

    def __init__(self, kind: str, names: list[str], picks: list[int], converters: list[Any]) -> None:
        self.kind, self.names, self.picks, self.converters = kind, names, picks, converters

    def map(self, value: Any) -> tuple[int, tuple[Any, ...]]:
        if self.kind == "atomic":
            fields: Any = [value]
        elif isinstance(value, Row):
            fields_of = value.__dict__.get("_fields")
            if value.get_row_kind() != RowKind.INSERT:
                raise table_error(
                    "Error during input conversion from external DataStream API "
                    "records to internal "
                    f"Table API data structures: from_data_stream expects insert-only records, got a "
                    f"{value.get_row_kind().name} row {value!r} (use from_changelog_stream)"
                )
            fields = value.get_fields_by_names(self.names) if fields_of is not None else list(value)
        else:
            fields = value
        out = []
        for i, c in zip(self.picks, self.converters, strict=True):
            v = _plain(fields[i])
            out.append(c(v) if c is not None and v is not None else v)
        return 0, tuple(out)


class DataStreamScan(PlanNode):
    """A DataStream as a table (``from_data_stream``): its records converted to the table's rows."""

    def __init__(self, stream: Any, names: list[str], types: list[DataType], convert: RecordToValues) -> None:
        self.stream, self.names, self.types, self.convert = stream, names, types, convert

    def _translate(self, ctx: TranslationContext) -> Any:
        if self.stream.get_execution_environment() is not ctx.env:
            raise validation_error(
                "The DataStream of this table belongs to another StreamExecutionEnvironment than the "
                "StreamTableEnvironment's"
            )
        parallelism = self.stream.transformation.parallelism
        out = self.stream.map(self.convert).name("SourceConversion").set_parallelism(parallelism)
        return ctx.uid(out, "source-conversion")


def _derived(info: TypeInformation) -> tuple[str, list[str], list[DataType]]:
    if info is None or isinstance(info, PickledBytesTypeInfo):
        raise NotYetSupportedError(
            "from_data_stream of a DataStream without a declared output type (pickled Python objects, "
            "RAW in PyFlink) is not yet supported by flott: declare it, e.g. "
            "type_info=Types.ROW_NAMED(['name', 'score'], [Types.STRING(), Types.INT()])"
        )
    if isinstance(info, RowTypeInfo):
        names = info.get_field_names()
        return "row", names, [data_type_of(t, False) for t in info.get_field_types()]
    if isinstance(info, TupleTypeInfo):
        types = info.get_field_types()
        return "tuple", [f"f{i}" for i in range(len(types))], [data_type_of(t, True) for t in types]
    return "atomic", ["f0"], [data_type_of(info, True)]


_INTEGRAL = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")


def _converter(name: str, derived: DataType, declared: DataType) -> Any:
    """How a field's value becomes the declared column's (None: as it is); refuses real casts."""
    a, b = derived.type_root, declared.type_root
    strings = a in ("CHAR", "VARCHAR") and b in ("CHAR", "VARCHAR")
    if a == b or strings or (a in _INTEGRAL and b in _INTEGRAL):
        return None
    if a in (*_INTEGRAL, "FLOAT") and b in ("FLOAT", "DOUBLE"):
        return float
    if a in _INTEGRAL and b == "DECIMAL":
        return decimal.Decimal
    raise NotYetSupportedError(
        f"from_data_stream: the Schema declares column '{name}' as {declared} for a stream field of "
        f"type {derived}; converting between them is not yet supported by flott"
    )


def from_data_stream(t_env: Any, data_stream: Any, fields_or_schema: tuple[Any, ...]) -> Any:
    from flott.table.schema import Schema
    from flott.table.table import Table

    kind, names, types = _derived(data_stream.get_type())
    if not fields_or_schema:
        picks = list(range(len(names)))
        convert = RecordToValues(kind, names, picks, [None] * len(names))
        node = DataStreamScan(data_stream, names, types, convert)
        return Table(node, t_env)
    if len(fields_or_schema) == 1 and isinstance(fields_or_schema[0], Schema):
        schema = fields_or_schema[0]
        picks, converters = [], []
        for n, t in zip(schema.names, schema.types, strict=True):
            if n not in names:
                raise validation_error(
                    f"Unable to find a field named '{n}' in the physical data type derived from the given "
                    "type information for schema declaration. Make sure that the type information is not a "
                    f"generic raw type. Currently available fields are: [{', '.join(names)}]"
                )
            i = names.index(n)
            picks.append(i)
            converters.append(_converter(n, types[i], t))
        convert = RecordToValues(kind, names, picks, converters)
        return Table(DataStreamScan(data_stream, list(schema.names), list(schema.types), convert), t_env)
    if all(isinstance(f, Expression) for f in fields_or_schema):
        return Table(_by_expressions(data_stream, kind, names, types, list(fields_or_schema)), t_env)
    raise ValueError(f"Invalid arguments for 'fields': {fields_or_schema!r}")


def _by_expressions(
    stream: Any, kind: str, names: list[str], types: list[DataType], exprs: list[Expression]
) -> DataStreamScan:
    """Fields named by expressions: by name when they reference the stream's fields (reordered,
    projected, renamed with ``alias``), else by position (renamed). Their types are nullable."""
    refs: list[tuple[str, str]] = []
    for e in exprs:
        inner = e.args[0] if e.kind == "alias" else e
        if inner.kind == "call" and inner.value in ("rowtime", "proctime"):
            raise NotYetSupportedError(
                f"from_data_stream with a .{inner.value} attribute is not yet supported by flott: declare "
                "event time with a Schema's watermark (SQL: WATERMARK FOR) instead"
            )
        if inner.kind != "col":
            raise validation_error(
                f"Field reference expression or alias on field expression expected, got {e}"
            )
        refs.append((str(inner.value), e.names[0] if e.kind == "alias" else str(inner.value)))
    by_name = any(ref in names for ref, _ in refs)
    if by_name:
        missing = [ref for ref, _ in refs if ref not in names]
        if missing:
            raise validation_error(
                f"Cannot resolve field [{missing[0]}], input field list:[{', '.join(names)}]."
            )
        picks = [names.index(ref) for ref, _ in refs]
    else:
        if len(refs) != len(names):
            raise validation_error("Number of expressions does not match number of input fields.")
        picks = list(range(len(names)))
    out_names = [new for _, new in refs]
    out_types = [types[i].with_nullability(True) for i in picks]
    convert = RecordToValues(kind, names, picks, [None] * len(picks))
    return DataStreamScan(stream, out_names, out_types, convert)


# --------------------------------------------------------------------------- Table -> DataStream


class ConversionContext(TranslationContext):
    """A translation onto the user's environment: its operator uids carry the conversion's number,
    so two conversions (or a conversion and a later ``execute()``) in one job never share a uid."""

    number: int = 0

    def uid(self, ds: Any, kind: str) -> Any:
        self.uids += 1
        return ds.uid(f"table-conversion{self.number}-{kind}-{self.uids}")


class ValuesToRow(MapFunction):
    """``(kind, values)`` as a named Row with its RowKind (``Row(k='a', s=1)``, ``-U``)."""

    _KINDS = (RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE)

    def __init__(self, names: list[str], ltz: list[int]) -> None:
        self.names, self.ltz = names, ltz

    def map(self, value: Any) -> Row:
        kind, vals = value
        if self.ltz:
            vals = list(vals)
            for i in self.ltz:
                if vals[i] is not None:
                    vals[i] = _instant(vals[i])
        row = Row(*vals)
        row.set_field_names(self.names)
        row.set_row_kind(self._KINDS[kind])
        return row


def _instant(wall_utc: Any) -> Instant:
    import datetime

    delta = wall_utc - datetime.datetime(1970, 1, 1)
    seconds = delta.days * 86_400 + delta.seconds
    return Instant(seconds, delta.microseconds * 1000)


def _node_description(node: PlanNode) -> str:
    """The updating operator (the deepest one: what produces the updates), as Flink names it."""
    from flott.table.plan import _children

    for child in _children(node):
        if child.is_updating(True):
            return _node_description(child)
    names = {"Aggregate": "GroupAggregate", "WindowAggregate": "WindowAggregate"}
    name = type(node).__name__
    columns = ", ".join(node.names)
    key_count = getattr(node, "key_count", None)
    group = f"groupBy=[{', '.join(node.names[:key_count])}], " if key_count else ""
    return f"{names.get(name, name)}({group}select=[{columns}])"


def _convert(t_env: Any, table: Any, names: list[str], types: list[DataType]) -> Any:
    streaming = t_env._streaming
    env = t_env._new_stream_env()
    t_env._conversions = getattr(t_env, "_conversions", 0) + 1
    ctx = ConversionContext(env, streaming, env.get_parallelism())
    ctx.number = t_env._conversions
    ds = table._node.translate(ctx)
    ltz = [i for i, t in enumerate(types) if t.type_root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE"]
    info = Types.ROW_NAMED(names, [type_info_of(t) for t in types])
    out = ds.map(ValuesToRow(names, ltz), output_type=info).name("SinkConversion")
    return ctx.uid(out.set_parallelism(ds.transformation.parallelism), "sink-conversion")


def _sink_name(t_env: Any) -> str:
    t_env._anonymous_sinks = getattr(t_env, "_anonymous_sinks", 0) + 1
    return _ANONYMOUS_SINK.format(t_env._anonymous_sinks)


def to_data_stream(t_env: Any, table: Any) -> Any:
    node = table._node
    sink = _sink_name(t_env)
    if node.is_updating(t_env._streaming):
        raise table_error(
            f"Table sink '{sink}' doesn't support consuming update changes which "
            "is produced by node "
            f"{_node_description(node)}"
        )
    return _convert(t_env, table, list(node.names), list(node.types))


def to_changelog_stream(t_env: Any, table: Any, target_schema: Any = None, changelog_mode: Any = None) -> Any:
    node = table._node
    sink = _sink_name(t_env)
    if changelog_mode is not None:
        raise NotYetSupportedError(
            "to_changelog_stream with a ChangelogMode is not yet supported by flott (the default, all "
            "row kinds, is)"
        )
    names, types = list(node.names), list(node.types)
    if target_schema is not None:
        declared = list(zip(target_schema.names, target_schema.types, strict=True))
        matches = len(declared) == len(names) and all(
            n == dn and (t.type_root == dt.type_root or {t.type_root, dt.type_root} <= set(_INTEGRAL))
            for n, t, (dn, dt) in zip(names, types, declared, strict=False)
        )
        if not matches:
            raise validation_error(
                f"Column types of query result and sink for '{sink}' do not match.\n\n"
                f"Query schema: [{', '.join(f'{n}: {t}' for n, t in zip(names, types, strict=True))}]\n"
                f"Sink schema:  [{', '.join(f'{n}: {t}' for n, t in declared)}]"
            )
        types = [dt for _, dt in declared]
    return _convert(t_env, table, names, types)

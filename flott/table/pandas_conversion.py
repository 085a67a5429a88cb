"""``Table.to_pandas()`` and ``TableEnvironment.from_pandas()``: a Table to a pandas DataFrame and back.

PyFlink moves the rows through Arrow batches and lets pyarrow make the DataFrame, so the dtypes a
PyFlink user sees are pyarrow's ``Table.to_pandas()`` defaults for Flink's Arrow types; flott has no
Arrow step and builds the same columns directly (measured on PyFlink 2.3 with pandas 2.2, pyarrow 16):

- TINYINT..BIGINT: int8..int64, or float64 (NaN for null) when the column holds a null;
- BOOLEAN: bool, or object (True/False/None) when it holds a null;
- FLOAT float32, DOUBLE float64 (NaN for null);
- CHAR/VARCHAR, BINARY/VARBINARY, DECIMAL (``Decimal`` at the type's scale), DATE, TIME: object;
- TIMESTAMP(p): datetime64[s|ms|us|ns] by precision (0, 1-3, 4-6, 7-9), NaT for null;
- TIMESTAMP_LTZ(p): the same, localized to the session time zone (``datetime64[ms, Etc/UTC]``);
- ARRAY: object holding numpy arrays (their dtype by the same rules), MAP: lists of (key, value)
  tuples (a nullable key type is refused, as Flink's Arrow writer refuses it), ROW: dicts whose
  values follow the column rules per field (an INT field with a null anywhere gives floats);
- an empty result: ``DataFrame.from_records([], columns=names)``, every column object.

pandas is optional (the ``pandas`` extra): it is imported only here, when a conversion is asked for.
"""

from __future__ import annotations

import datetime as _dt
import decimal
from typing import TYPE_CHECKING, Any

from flott.errors import NotYetSupportedError, TableError
from flott.table.plan import PlanNode, Union, Values
from flott.table.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    MapType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    _Chars,
    _Integral,
)

if TYPE_CHECKING:
    from flott.table.table import Table
    from flott.table.table_environment import TableEnvironment

__all__ = ["frame_to_plan", "rows_to_frame"]

_INT_DTYPES = {TinyIntType: "int8", SmallIntType: "int16", IntType: "int32", BigIntType: "int64"}
_INT_RANGES = {TinyIntType: 8, SmallIntType: 16, IntType: 32, BigIntType: 64}
_INT_BY_SIZE: dict[int, type[_Integral]] = {1: TinyIntType, 2: SmallIntType, 4: IntType, 8: BigIntType}
_UNIT_PRECISION = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _pandas() -> Any:
    """pandas, imported when a conversion runs: flott itself does not need it."""
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - the test extra installs pandas
        raise ImportError(
            "Table.to_pandas() and TableEnvironment.from_pandas() need pandas; install it "
            "(pip install 'flott[pandas]')"
        ) from e
    return pandas


# --- to_pandas ------------------------------------------------------------------------------------


def _unit(precision: int) -> str:
    """pyarrow's timestamp unit for a Flink precision (PyFlink's to_arrow_type)."""
    if precision == 0:
        return "s"
    if precision <= 3:
        return "ms"
    if precision <= 6:
        return "us"
    return "ns"


def _objects(np: Any, values: list[Any]) -> Any:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _python_value(t: DataType, v: Any) -> Any:
    """A value inside a MAP or ROW, as pyarrow's ``as_py`` gives it."""
    if v is None:
        return None
    if isinstance(t, DecimalType):
        return decimal.Decimal(v).quantize(decimal.Decimal(1).scaleb(-t.scale))
    if isinstance(t, BinaryType):
        return bytes(v)
    if isinstance(t, ArrayType):
        return [_python_value(t.element_type, e) for e in v]
    if isinstance(t, MapType):
        return [(_python_value(t.key_type, k), _python_value(t.value_type, x)) for k, x in v.items()]
    if isinstance(t, RowType):
        return {f.name: _python_value(f.data_type, x) for f, x in zip(t.fields, list(v), strict=False)}
    return v


def _numpy_column(np: Any, t: DataType, values: list[Any]) -> Any:
    """The numpy array pyarrow's to_pandas makes of a column (or an ARRAY's elements) of type t."""
    has_null = any(v is None for v in values)
    if isinstance(t, _Integral):
        if has_null:
            return np.array([float("nan") if v is None else float(v) for v in values], dtype="float64")
        return np.array(values, dtype=_INT_DTYPES[type(t)])
    if isinstance(t, BooleanType):
        return _objects(np, values) if has_null else np.array(values, dtype=bool)
    if isinstance(t, FloatType | DoubleType):
        dtype = "float32" if isinstance(t, FloatType) else "float64"
        return np.array([float("nan") if v is None else v for v in values], dtype=dtype)
    if isinstance(t, TimestampType):
        micros = np.array(
            [np.datetime64("NaT", "us") if v is None else np.datetime64(v, "us") for v in values],
            dtype="datetime64[us]",
        )
        return micros.astype(f"datetime64[{_unit(t.precision)}]")
    if isinstance(t, ArrayType):
        arrays = [None if v is None else _numpy_column(np, t.element_type, list(v)) for v in values]
        return _objects(np, arrays)
    if isinstance(t, RowType):  # dicts whose values follow the column rules field by field
        fields = []
        for k, f in enumerate(t.fields):
            child = _numpy_column(np, f.data_type, [None if v is None else list(v)[k] for v in values])
            fields.append(child.tolist() if child.dtype.kind in "biuf" else list(child))
        rows = [
            None if v is None else {f.name: fields[k][i] for k, f in enumerate(t.fields)}
            for i, v in enumerate(values)
        ]
        return _objects(np, rows)
    if isinstance(t, _Chars | DecimalType | DateType | TimeType | MapType):
        return _objects(np, [_python_value(t, v) for v in values])
    raise NotYetSupportedError(f"Table.to_pandas: a column of type {t} is not yet supported by flott")


def materialize(rows: Any) -> list[list[Any]]:
    """The rows a changelog ends with: PyFlink's to_pandas keeps inserts and update-afters and
    drops the row each update-before or delete retracts."""
    out: list[list[Any]] = []
    for r in rows:
        values = list(r)
        if r.get_row_kind().value in (0, 2):  # +I, +U
            out.append(values)
        elif values in out:  # -U, -D
            out.remove(values)
    return out


def local_time_zone(t_env: TableEnvironment) -> str:
    """The session time zone's id as Java's ZoneId gives it; flott computes in UTC only."""
    return t_env.get_config().get_local_timezone()


def rows_to_frame(table: Table) -> Any:
    pd = _pandas()
    import numpy as np

    names = list(table._node.names)
    types = list(table._node.types)
    for t in types:  # refused before the job runs
        _check_convertible(t)
    with table.execute().collect() as rows:
        data = materialize(rows)
    if not data:
        return pd.DataFrame.from_records([], columns=names)
    columns: dict[str, Any] = {}
    for i, (name, t) in enumerate(zip(names, types, strict=True)):
        array = _numpy_column(np, t, [r[i] for r in data])
        series = pd.Series(array, dtype=array.dtype)
        if isinstance(t, LocalZonedTimestampType):
            series = series.dt.tz_localize(local_time_zone(table._t_env))
        columns[name] = series
    return pd.DataFrame(columns)


def _check_convertible(t: DataType) -> None:
    convertible = (_Integral, BooleanType, FloatType, DoubleType, TimestampType, _Chars, DecimalType)
    if isinstance(t, ArrayType):
        _check_convertible(t.element_type)
    elif isinstance(t, MapType):
        if t.key_type.is_nullable:  # Flink's Arrow writer refuses it (IllegalArgumentException)
            raise TableError("Map key type should be non-nullable")
        _check_convertible(t.key_type)
        _check_convertible(t.value_type)
    elif isinstance(t, RowType):
        for f in t.fields:
            _check_convertible(f.data_type)
    elif isinstance(t, DateType | TimeType):
        pass
    elif not isinstance(t, convertible):
        raise NotYetSupportedError(f"Table.to_pandas: a column of type {t} is not yet supported by flott")


# --- from_pandas ----------------------------------------------------------------------------------


def _is_null(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float):
        return v != v
    import numpy as np

    if isinstance(v, np.floating):
        return bool(np.isnan(v))
    if isinstance(v, np.datetime64):
        return bool(np.isnat(v))
    pd = _pandas()
    return v is pd.NaT or v is pd.NA


def _cannot_convert(v: Any, target: str) -> TableError:
    return TableError(f"Could not convert {v!r} with type {type(v).__name__}: tried to convert to {target}")


def _infer_object(name: str, values: list[Any]) -> DataType:
    """The type pyarrow infers for an object column (strings, bytes, Decimals, dates, lists)."""
    present = [v for v in values if not _is_null(v)]
    if not present:
        raise NotYetSupportedError(
            f"from_pandas: the column '{name}' holds only nulls (Flink's NULL type), "
            "which flott does not support yet; pass its type in the schema"
        )
    kinds = {type(v) for v in present}
    if kinds <= {str}:
        return VarCharType(VarCharType.MAX_LENGTH)
    if kinds <= {bytes, bytearray}:
        return VarBinaryType(VarBinaryType.MAX_LENGTH)
    if kinds <= {bool}:
        return BooleanType()
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return BigIntType()
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return DoubleType()
    if kinds <= {decimal.Decimal}:
        scale = max(max(0, -int(v.as_tuple().exponent)) for v in present)
        whole = max(len(v.as_tuple().digits) + int(v.as_tuple().exponent) for v in present)
        return DecimalType(min(38, max(whole, 1) + scale), scale)
    if all(isinstance(v, _dt.date) and not isinstance(v, _dt.datetime) for v in present):
        return DateType()
    if kinds <= {_dt.time}:
        return TimeType(6)
    if all(isinstance(v, list | tuple) for v in present):
        return ArrayType(_infer_object(name, [e for v in present for e in v]))
    if len(kinds) > 1:  # pyarrow refuses such a column too (ArrowInvalid)
        raise TableError(
            f"from_pandas: the column '{name}' mixes values of "
            f"{', '.join(sorted(k.__name__ for k in kinds))}; no one type holds them"
        )
    raise NotYetSupportedError(
        f"from_pandas: no Flink type is inferred for the column '{name}' "
        f"(values of {next(iter(kinds)).__name__}) by flott yet; pass its type in the schema"
    )


def _infer(name: str, series: Any) -> DataType:
    """The Flink type PyFlink gives a column: pyarrow's type for its dtype, through from_arrow_type."""
    pd = _pandas()
    dtype = series.dtype
    if isinstance(dtype, pd.DatetimeTZDtype):
        return TimestampType(_UNIT_PRECISION[dtype.unit])
    if isinstance(dtype, pd.StringDtype):
        return VarCharType(VarCharType.MAX_LENGTH)
    kind = getattr(dtype, "kind", "")
    if kind == "b":
        return BooleanType()
    if kind == "i":
        return _INT_BY_SIZE[dtype.itemsize]()
    if kind == "f" and dtype.itemsize in (4, 8):
        return FloatType() if dtype.itemsize == 4 else DoubleType()
    if kind == "M":
        import numpy as np

        return TimestampType(_UNIT_PRECISION[np.datetime_data(dtype)[0]])
    if kind == "O":
        return _infer_object(name, list(series))
    raise NotYetSupportedError(
        f"from_pandas: the column '{name}' of dtype {dtype} has no Flink type in flott"
    )


def _timestamp(v: Any) -> _dt.datetime:
    pd = _pandas()
    ts = pd.Timestamp(v)
    if ts.tzinfo is not None:  # pyarrow stores an aware timestamp as UTC
        ts = ts.tz_convert("UTC").tz_localize(None)
    if ts.nanosecond:
        raise NotYetSupportedError(
            f"from_pandas: the timestamp {ts} has nanoseconds; flott's timestamps hold microseconds"
        )
    result: _dt.datetime = ts.to_pydatetime()
    return result


def _convert(t: DataType, v: Any) -> Any:
    """One DataFrame value as flott holds a value of type t (pyarrow's conversion rules)."""
    if _is_null(v):
        return None
    if isinstance(t, _Integral):
        if isinstance(v, float) or (type(v).__module__ == "numpy" and hasattr(v, "is_integer")):
            if not float(v).is_integer():
                raise TableError(f"Float value {v} was truncated converting to {str(t).split()[0]}")
            v = int(v)
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise _cannot_convert(v, str(t))
        v, bits = int(v), _INT_RANGES[type(t)]
        if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
            raise TableError(f"Integer value {v} not in range: {-(2 ** (bits - 1))} to {2 ** (bits - 1) - 1}")
        return v
    if isinstance(t, BooleanType):
        if not hasattr(v, "__bool__") or type(v).__name__ not in ("bool", "bool_"):
            raise _cannot_convert(v, str(t))
        return bool(v)
    if isinstance(t, FloatType | DoubleType):
        if isinstance(v, str | bytes) or not hasattr(v, "__float__"):
            raise _cannot_convert(v, str(t))
        return float(v)
    if isinstance(t, BinaryType):
        if not isinstance(v, bytes | bytearray):
            raise _cannot_convert(v, str(t))
        return bytes(v)
    if isinstance(t, _Chars):
        if not isinstance(v, str):
            raise _cannot_convert(v, str(t))
        return v
    if isinstance(t, DecimalType):
        if not isinstance(v, decimal.Decimal | int):
            raise _cannot_convert(v, str(t))
        return decimal.Decimal(v).quantize(decimal.Decimal(1).scaleb(-t.scale))
    if isinstance(t, TimestampType):
        return _timestamp(v)
    if isinstance(t, DateType):
        if isinstance(v, _dt.datetime) or type(v).__name__ == "Timestamp":
            return _timestamp(v).date()
        if not isinstance(v, _dt.date):
            raise _cannot_convert(v, str(t))
        return v
    if isinstance(t, TimeType):
        if not isinstance(v, _dt.time):
            raise _cannot_convert(v, str(t))
        return v
    if isinstance(t, ArrayType):
        if isinstance(v, str | bytes) or not hasattr(v, "__iter__"):
            raise _cannot_convert(v, str(t))
        return [_convert(t.element_type, e) for e in v]
    if isinstance(t, MapType):
        pairs = v.items() if isinstance(v, dict) else v
        return {_convert(t.key_type, k): _convert(t.value_type, x) for k, x in pairs}
    raise NotYetSupportedError(f"from_pandas: a column of type {t} is not yet supported by flott")


def _schema(pdf: Any, schema: Any) -> tuple[list[str], list[DataType]]:
    columns = [pdf.iloc[:, i] for i in range(pdf.shape[1])]
    frame_names = [str(c) for c in pdf.columns]
    if schema is None:
        return frame_names, [_infer(n, c) for n, c in zip(frame_names, columns, strict=True)]
    if isinstance(schema, RowType):
        names, types = schema.field_names(), schema.field_types()
    elif isinstance(schema, list | tuple) and schema and all(isinstance(s, str) for s in schema):
        names = list(schema)
        types = [_infer(n, c) for n, c in zip(frame_names, columns, strict=False)]
    elif isinstance(schema, list | tuple) and schema and all(isinstance(s, DataType) for s in schema):
        names, types = frame_names, list(schema)
    else:
        raise TypeError(
            "Unsupported schema type, it could only be of RowType, a list of str or a list of "
            f"DataType, got {schema}"
        )
    if len(names) != len(frame_names) or len(types) != len(frame_names):
        raise TableError(
            f"from_pandas: the schema has {max(len(names), len(types))} fields but the DataFrame "
            f"{len(frame_names)} columns ({', '.join(frame_names)})"
        )
    return names, types


def frame_to_plan(t_env: TableEnvironment, pdf: Any, schema: Any, splits_num: int) -> PlanNode:
    """The DataFrame's rows as a plan: ``splits_num`` slices, each its own source (as PyFlink's
    Arrow source reads one slice per parallel task), unioned."""
    pd = _pandas()
    if not isinstance(pdf, pd.DataFrame):
        raise TypeError(f"Unsupported type, expected pandas.DataFrame, got {type(pdf)}")
    if isinstance(splits_num, bool) or not isinstance(splits_num, int) or splits_num < 1:
        raise TableError(f"from_pandas: splits_num must be a positive number of splits, got {splits_num!r}")
    names, types = _schema(pdf, schema)
    columns = []
    for i, (name, t) in enumerate(zip(names, types, strict=True)):
        values = [_convert(t, v) for v in pdf.iloc[:, i].tolist()]
        if not t.is_nullable and any(v is None for v in values):
            raise TableError(f"from_pandas: the column '{name}' of type {t} holds a null")
        columns.append(values)
    rows = [tuple(r) for r in zip(*columns, strict=True)] if columns else [() for _ in range(len(pdf))]
    step = max(1, -(-len(rows) // splits_num))
    slices = [rows[start : start + step] for start in range(0, len(rows), step)] or [[]]
    nodes: list[PlanNode] = [Values(s, list(names), list(types)) for s in slices]
    return nodes[0] if len(nodes) == 1 else Union(nodes)


# --- vectorized (pandas) UDFs ---------------------------------------------------------------------


def column_series(t: DataType, values: list[Any], time_zone: str = "Etc/UTC") -> Any:
    """The pandas.Series a vectorized UDF receives for one argument: the column PyFlink's Arrow
    batch gives (the same dtypes as to_pandas: int64, or float64 with NaN when the batch holds a
    null; bool, or object with None; datetime64[ms] for TIMESTAMP(3) ...)."""
    pd = _pandas()
    import numpy as np

    _check_convertible(t)
    array = _numpy_column(np, t, values)
    series = pd.Series(array, dtype=array.dtype)
    if isinstance(t, LocalZonedTimestampType):
        series = series.dt.tz_localize(time_zone)
    return series


def from_pandas_value(t: DataType, v: Any) -> Any:
    """One value a vectorized UDF returned (numpy scalar, NaN, Timestamp ...) as flott holds a
    value of type t, by pyarrow's conversion rules (NaN/NaT/None are null)."""
    return _convert(t, v)

"""Table.to_pandas() and TableEnvironment.from_pandas(): PyFlink 2.3's dtypes, schemas and refusals.

The dtypes asserted here are the ones PyFlink 2.3 (pandas 2.2, pyarrow 16) gave for the same types.
"""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from flott.common.types import Row
from flott.errors import NotYetSupportedError, TableError
from flott.table import DataTypes, EnvironmentSettings, TableEnvironment
from flott.table.expressions import col

pytestmark = pytest.mark.processes  # to_pandas() runs the job on a local cluster


def _batch() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_batch_mode())


ALL_TYPES = DataTypes.ROW(
    [
        DataTypes.FIELD("ti", DataTypes.TINYINT()),
        DataTypes.FIELD("si", DataTypes.SMALLINT()),
        DataTypes.FIELD("i", DataTypes.INT()),
        DataTypes.FIELD("bi", DataTypes.BIGINT()),
        DataTypes.FIELD("b", DataTypes.BOOLEAN()),
        DataTypes.FIELD("f", DataTypes.FLOAT()),
        DataTypes.FIELD("d", DataTypes.DOUBLE()),
        DataTypes.FIELD("s", DataTypes.STRING()),
        DataTypes.FIELD("dc", DataTypes.DECIMAL(5, 2)),
        DataTypes.FIELD("dt", DataTypes.DATE()),
        DataTypes.FIELD("tm", DataTypes.TIME()),
        DataTypes.FIELD("ts3", DataTypes.TIMESTAMP(3)),
        DataTypes.FIELD("ts0", DataTypes.TIMESTAMP(0)),
        DataTypes.FIELD("ts6", DataTypes.TIMESTAMP(6)),
        DataTypes.FIELD("ltz", DataTypes.TIMESTAMP_LTZ(3)),
        DataTypes.FIELD("byt", DataTypes.BYTES()),
        DataTypes.FIELD("arr", DataTypes.ARRAY(DataTypes.INT())),
        DataTypes.FIELD("mp", DataTypes.MAP(DataTypes.STRING().not_null(), DataTypes.INT())),
    ]
)
ROW = (
    1, 1, 1, 1, True, 1.5, 2.5, "ab", decimal.Decimal("2.5"), dt.date(2024, 1, 2), dt.time(10, 11, 12),
    dt.datetime(2024, 1, 2, 3, 4, 5, 123000), dt.datetime(2024, 1, 2, 3, 4, 6),
    dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
    dt.datetime(1970, 1, 1, 0, 0, 1), b"\x01\x02", [1, 2], {"k": 1},
)  # fmt: skip


def test_dtypes_without_nulls() -> None:
    df = _batch().from_elements([ROW], ALL_TYPES).to_pandas()
    assert list(df.dtypes.astype(str)) == [
        "int8", "int16", "int32", "int64", "bool", "float32", "float64", "object", "object", "object",
        "object", "datetime64[ms]", "datetime64[s]", "datetime64[us]", "datetime64[ms, Etc/UTC]",
        "object", "object", "object",
    ]  # fmt: skip
    first = df.iloc[0]
    assert first["dc"] == decimal.Decimal("2.50") and str(first["dc"]) == "2.50"  # at the type's scale
    assert first["dt"] == dt.date(2024, 1, 2) and first["tm"] == dt.time(10, 11, 12)
    assert first["ltz"] == pd.Timestamp("1970-01-01 00:00:01", tz="UTC")
    assert first["byt"] == b"\x01\x02"
    assert first["arr"].dtype == np.int32 and list(first["arr"]) == [1, 2]  # a numpy array, as pyarrow's
    assert first["mp"] == [("k", 1)]  # a MAP is a list of (key, value) pairs
    assert isinstance(df.index, pd.RangeIndex)


def test_nulls_turn_integers_into_float64_and_booleans_into_objects() -> None:
    nulls = tuple([None] * len(ROW))
    df = _batch().from_elements([ROW, nulls], ALL_TYPES).to_pandas()
    dtypes = dict(zip(df.columns, df.dtypes.astype(str), strict=True))
    assert [dtypes[c] for c in ("ti", "si", "i", "bi")] == ["float64"] * 4
    assert dtypes["b"] == "object" and list(df["b"]) == [True, None]
    assert dtypes["f"] == "float32" and np.isnan(df["f"][1])
    assert dtypes["ts3"] == "datetime64[ms]" and df["ts3"][1] is pd.NaT
    assert dtypes["ltz"] == "datetime64[ms, Etc/UTC]"
    assert list(df["s"]) == ["ab", None] and dtypes["s"] == "object"


def test_nested_values_follow_the_column_rules_and_a_nullable_map_key_is_refused() -> None:
    xy = DataTypes.ROW([DataTypes.FIELD("x", DataTypes.INT()), DataTypes.FIELD("y", DataTypes.STRING())])
    schema = DataTypes.ROW(
        [
            DataTypes.FIELD("a", DataTypes.ARRAY(DataTypes.INT())),
            DataTypes.FIELD("s", DataTypes.ARRAY(DataTypes.STRING())),
            DataTypes.FIELD("r", xy),
        ]
    )
    rows = [([1, None], ["p", None], Row(1, "q")), (None, None, None)]
    df = _batch().from_elements(rows, schema).to_pandas()
    assert df["a"][0].dtype == np.float64 and np.isnan(df["a"][0][1]) and df["a"][1] is None
    assert df["s"][0].dtype == object and list(df["s"][0]) == ["p", None]
    assert df["r"].tolist() == [{"x": 1.0, "y": "q"}, None]  # PyFlink: x is a float (the column has a null)
    assert isinstance(df["r"][0]["x"], float)
    nullable_key = DataTypes.ROW([DataTypes.FIELD("m", DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()))])
    with pytest.raises(TableError, match="Map key type should be non-nullable"):
        _batch().from_elements([({"k": 1},)], nullable_key).to_pandas()


def test_an_empty_result_has_object_columns() -> None:
    t = _batch().from_elements([(1, "x")], ["a", "b"]).where(col("a") > 5)
    df = t.to_pandas()
    assert df.shape == (0, 2) and list(df.columns) == ["a", "b"]
    assert list(df.dtypes.astype(str)) == ["object", "object"]


def test_an_updating_table_gives_its_final_rows() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t = env.from_elements([(1, "a"), (2, "b"), (3, "a")], ["k", "g"])
    df = t.group_by(col("g")).select(col("g"), col("k").sum.alias("s")).to_pandas()
    assert sorted(map(tuple, df.values.tolist())) == [("a", 4), ("b", 2)]
    assert list(df.dtypes.astype(str)) == ["object", "int64"]


def test_from_pandas_infers_the_types_pyflink_infers() -> None:
    frame = pd.DataFrame(
        {
            "i64": [1, 2],
            "i32": np.array([1, 2], dtype="int32"),
            "i8": np.array([1, 2], dtype="int8"),
            "f64": [1.5, np.nan],
            "f32": np.array([1.5, 2.5], dtype="float32"),
            "s": ["x", None],
            "b": [True, False],
            "tsms": pd.to_datetime(["2024-01-01 00:00:01", "2024-01-01 00:00:02"]).astype("datetime64[ms]"),
            "tsns": pd.to_datetime(["2024-01-01", "2024-01-02"]).astype("datetime64[ns]"),
            "d": [dt.date(2024, 1, 1), None],
            "dec": [decimal.Decimal("1.25"), decimal.Decimal("2.5")],
            "byt": [b"a", b"b"],
            "lst": [[1, 2], [3]],
        }
    )
    t = _batch().from_pandas(frame)
    assert [str(x) for x in t.get_schema().get_field_data_types()] == [
        "BIGINT", "INT", "TINYINT", "DOUBLE", "FLOAT", "STRING", "BOOLEAN", "TIMESTAMP(3)",
        "TIMESTAMP(9)", "DATE", "DECIMAL(3, 2)", "BYTES", "ARRAY<BIGINT>",
    ]  # fmt: skip
    with t.execute().collect() as rows:
        got = [tuple(r) for r in rows]
    assert got[1][3] is None and got[1][5] is None and got[1][9] is None  # NaN and None are nulls
    assert got[0][7] == dt.datetime(2024, 1, 1, 0, 0, 1) and got[0][12] == [1, 2]


def test_from_pandas_schema_forms() -> None:
    env = _batch()
    frame = pd.DataFrame({"a": [1, 2], "b": [1.5, None]})
    names = env.from_pandas(frame, ["x", "y"])
    assert names.get_schema().get_field_names() == ["x", "y"]
    assert [str(x) for x in names.get_schema().get_field_data_types()] == ["BIGINT", "DOUBLE"]
    typed = env.from_pandas(frame, [DataTypes.INT(), DataTypes.FLOAT()])
    assert typed.get_schema().get_field_names() == ["a", "b"]
    assert [str(x) for x in typed.get_schema().get_field_data_types()] == ["INT", "FLOAT"]
    row = DataTypes.ROW([DataTypes.FIELD("p", DataTypes.BIGINT()), DataTypes.FIELD("q", DataTypes.DOUBLE())])
    df = env.from_pandas(frame, row).to_pandas()
    assert list(df.columns) == ["p", "q"] and df["p"].tolist() == [1, 2]


def test_a_timezone_aware_column_is_stored_as_utc() -> None:
    frame = pd.DataFrame({"t": pd.to_datetime(["2024-01-01 00:00:01"]).tz_localize("Europe/Berlin")})
    with _batch().from_pandas(frame).execute().collect() as rows:
        assert [tuple(r) for r in rows] == [(dt.datetime(2023, 12, 31, 23, 0, 1),)]


def test_splits_num_cuts_the_frame_into_sources_and_keeps_every_row() -> None:
    env = _batch()
    frame = pd.DataFrame({"a": list(range(10))})
    t = env.from_pandas(frame, splits_num=3)
    assert sorted(t.to_pandas()["a"].tolist()) == list(range(10))
    assert t.explain().count("Values") >= 3


@pytest.mark.parametrize(
    ("frame", "schema", "error", "message"),
    [
        ([1, 2], None, TypeError, "Unsupported type, expected pandas.DataFrame"),
        (pd.DataFrame({"a": [1]}), [1], TypeError, "Unsupported schema type"),
        (pd.DataFrame({"a": [1]}), ["a", "b"], TableError, "the schema has 2 fields"),
        (pd.DataFrame({"a": ["x"]}), [DataTypes.INT()], TableError, "Could not convert 'x'"),
        (pd.DataFrame({"a": [300]}), [DataTypes.TINYINT()], TableError, "not in range"),
        (pd.DataFrame({"a": [1.5]}), [DataTypes.INT()], TableError, "truncated"),
        (pd.DataFrame({"a": pd.Series([1, "x"], dtype=object)}), None, TableError, "mixes values"),
        (pd.DataFrame({"a": pd.Series([None], dtype=object)}), None, NotYetSupportedError, "only nulls"),
        (pd.DataFrame({"a": np.array([1], dtype="uint8")}), None, NotYetSupportedError, "uint8"),
    ],
)
def test_from_pandas_refusals(frame: object, schema: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        _batch().from_pandas(frame, schema)


def test_from_pandas_refuses_a_null_in_a_not_null_column_and_a_bad_splits_num() -> None:
    env = _batch()
    row = DataTypes.ROW([DataTypes.FIELD("a", DataTypes.BIGINT().not_null())])
    with pytest.raises(TableError, match="holds a null"):
        env.from_pandas(pd.DataFrame({"a": [1.0, None]}), row)
    with pytest.raises(TableError, match="splits_num"):
        env.from_pandas(pd.DataFrame({"a": [1]}), splits_num=0)


def test_flott_imports_without_pandas() -> None:
    # a process where importing pandas fails: flott.table still imports; to_pandas says what is missing
    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "from flott.table import EnvironmentSettings, TableEnvironment\n"
        "env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())\n"
        "try:\n"
        "    env.from_elements([(1,)], ['a']).to_pandas()\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert "need pandas" in out.stdout and "flott[pandas]" in out.stdout

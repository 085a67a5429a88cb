"""Planning without running: Flink's messages for mistakes (measured on PyFlink 2.3), derived types,
the tableau printer, and refusals of what flott does not plan yet."""

from __future__ import annotations

import datetime
import decimal

import pytest

from flott.errors import NotYetSupportedError, SqlParseError, TableValidationError
from flott.table import DataTypes, EnvironmentSettings, TableEnvironment
from flott.table.expressions import col
from flott.table.table_result import TableResult


@pytest.fixture
def t_env() -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.create_temporary_view("T", env.from_elements([(1, "Hi", 1.5)], ["a", "b", "c"]))
    return env


# What PyFlink 2.3 printed (as the message of the Java exception) for each statement.
SQL_MISTAKES = [
    (
        "SELECT x FROM T",
        TableValidationError,
        "org.apache.flink.table.api.ValidationException: SQL validation failed. At line 1, column 8: "
        "Column 'x' not found in any table",
    ),
    (
        "SELECT a FROM Nope",
        TableValidationError,
        "org.apache.flink.table.api.ValidationException: SQL validation failed. From line 1, column 15 to "
        "line 1, column 18: Object 'Nope' not found",
    ),
    (
        "SELECT a, COUNT(*) FROM T",
        TableValidationError,
        "org.apache.flink.table.api.ValidationException: SQL validation failed. At line 1, column 8: "
        "Expression 'a' is not being grouped",
    ),
    (
        "SELECT a FROM T WHERE",
        SqlParseError,
        'org.apache.flink.table.api.SqlParserEOFException: Encountered "<EOF>" at line 1, column 21.',
    ),
]


@pytest.mark.parametrize(("sql", "error", "message"), SQL_MISTAKES)
def test_sql_mistakes_get_flinks_messages(
    t_env: TableEnvironment, sql: str, error: type, message: str
) -> None:
    with pytest.raises(error) as raised:
        t_env.sql_query(sql)
    assert str(raised.value) == message


def test_an_unknown_column_in_the_table_api_names_the_input_fields(t_env: TableEnvironment) -> None:
    with pytest.raises(TableValidationError) as raised:
        t_env.from_path("T").select(col("zz"))
    assert str(raised.value) == (
        "org.apache.flink.table.api.ValidationException: "
        "Cannot resolve field [zz], input field list:[a, b, c]."
    )


def test_derived_types_follow_flink(t_env: TableEnvironment) -> None:
    schema = t_env.sql_query(
        "SELECT a / 2 AS q, MOD(a, 2) AS m, CHAR_LENGTH(b) AS n, c * 2 AS d, CAST(a AS STRING) AS s, "
        "a * 1.5 AS e FROM T"
    ).get_schema()
    assert str(schema) == (
        "root\n |-- q: BIGINT\n |-- m: INT\n |-- n: INT\n |-- d: DOUBLE\n |-- s: STRING\n"
        " |-- e: DECIMAL(22, 1)\n"
    )
    grouped = t_env.sql_query("SELECT b, COUNT(*) AS n, AVG(a) AS m, SUM(c) AS s FROM T GROUP BY b")
    assert (
        str(grouped.get_schema())
        == "root\n |-- b: STRING\n |-- n: BIGINT NOT NULL\n |-- m: BIGINT\n |-- s: DOUBLE\n"
    )


def test_unnamed_columns_are_named_as_flink_names_them(t_env: TableEnvironment) -> None:
    t = t_env.from_path("T")
    names = t.select(col("a"), col("a") + 1, col("a").cast(DataTypes.INT()), (col("c") * 2).alias("d"))
    assert names.get_schema().get_field_names() == ["a", "_c1", "a-INT", "d"]
    assert t_env.sql_query("SELECT a, a + 1, UPPER(b) AS u FROM T").get_schema().get_field_names() == [
        "a",
        "EXPR$1",
        "u",
    ]


def test_tableau_widths_come_from_the_types(capsys: pytest.CaptureFixture[str]) -> None:
    # PyFlink 2.3's print() of this row, streaming mode
    types = [
        DataTypes.DECIMAL(10, 2),
        DataTypes.DATE(),
        DataTypes.TIMESTAMP(3),
        DataTypes.TIME(),
        DataTypes.TINYINT(),
    ]
    row = (
        decimal.Decimal("1.50"),
        datetime.date(2024, 1, 2),
        datetime.datetime(2024, 1, 2, 3, 4, 5, 123000),
        datetime.time(1, 2, 3),
        7,
    )
    TableResult(["d", "dt", "ts", "tm", "ti"], types, streaming=True, rows=[row]).print()
    assert capsys.readouterr().out == (
        "+----+--------------+------------+-------------------------+----------+--------+\n"
        "| op |            d |         dt |                      ts |       tm |     ti |\n"
        "+----+--------------+------------+-------------------------+----------+--------+\n"
        "| +I |         1.50 | 2024-01-02 | 2024-01-02 03:04:05.123 | 01:02:03 |      7 |\n"
        "+----+--------------+------------+-------------------------+----------+--------+\n"
        "1 row in set\n"
    )


def test_long_values_are_cut_and_empty_results_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    TableResult(["b"], [DataTypes.STRING()], streaming=False, rows=[("a" * 40,), (None,)]).print()
    TableResult(["x"], [DataTypes.INT()], streaming=True, rows=[]).print()
    assert capsys.readouterr().out == (
        "+--------------------------------+\n"
        "|                              b |\n"
        "+--------------------------------+\n"
        "| aaaaaaaaaaaaaaaaaaaaaaaaaaa... |\n"
        "|                         <NULL> |\n"
        "+--------------------------------+\n"
        "2 rows in set\n"
        "Empty set\n"
    )


@pytest.mark.parametrize(
    ("sql", "construct"),
    [
        ("SELECT a FROM T ORDER BY a", "ORDER"),
        ("SELECT a FROM T LIMIT 3", "LIMIT"),
        ("SELECT * FROM T CROSS JOIN T AS u", "CROSS JOIN"),
        ("SELECT a FROM T INTERSECT SELECT a FROM T", "INTERSECT"),
    ],
)
def test_what_is_not_planned_is_refused_by_name(t_env: TableEnvironment, sql: str, construct: str) -> None:
    with pytest.raises(NotYetSupportedError, match=construct):
        t_env.sql_query(sql)


def test_unknown_connector_options_are_refused(t_env: TableEnvironment) -> None:
    with pytest.raises(TableValidationError, match="Unsupported options found for 'print'"):
        t_env.execute_sql("CREATE TABLE s (a INT) WITH ('connector' = 'print', 'colour' = 'red')")
    with pytest.raises(NotYetSupportedError, match="'jdbc' is not yet supported"):
        t_env.execute_sql("CREATE TABLE j (a INT) WITH ('connector' = 'jdbc')")
    missing = r"Missing required options are:\n\nproperties\.bootstrap\.servers"
    with pytest.raises(TableValidationError, match=missing):
        t_env.execute_sql("CREATE TABLE k (a INT) WITH ('connector' = 'kafka')")


@pytest.mark.parametrize(
    ("sql", "construct"),
    [
        ("SELECT a FROM T WHERE DESCRIPTOR(a) IS NULL", "DESCRIPTOR outside a window table-valued function"),
        ("SELECT a, SUM(a) OVER (PARTITION BY b ORDER BY a) FROM T", "OVER aggregations"),
    ],
)
def test_flink_dialect_constructs_not_planned_are_refused_by_name(
    t_env: TableEnvironment, sql: str, construct: str
) -> None:
    with pytest.raises(NotYetSupportedError, match=construct):
        t_env.execute_sql(sql)


def test_a_keyword_where_a_column_is_expected_is_a_syntax_error_at_its_position(
    t_env: TableEnvironment,
) -> None:
    with pytest.raises(SqlParseError) as raised:
        t_env.execute_sql("SELECT id name, FROM t WHERE")
    # PyFlink 2.3's message for the same statement
    assert "SQL parse failed. Incorrect syntax near the keyword 'FROM' at line 1, column 17" in str(
        raised.value
    )


def test_batch_order_by_is_planned_and_streaming_order_by_refused() -> None:
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.create_temporary_view("T", batch.from_elements([(1, "a")], ["x", "y"]))
    assert batch.sql_query("SELECT x, y FROM T ORDER BY x DESC LIMIT 2").get_schema().get_field_names() == [
        "x",
        "y",
    ]
    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    stream.create_temporary_view("T", stream.from_elements([(1, "a")], ["x", "y"]))
    with pytest.raises(NotYetSupportedError, match="ORDER BY / LIMIT in streaming mode"):
        stream.sql_query("SELECT x FROM T ORDER BY x")


def test_compiled_calls_and_casts_find_their_own_constants_when_operands_add_literals() -> None:
    """A UDF or CAST whose operands hold literals (``add(a, 100)``, ``CAST(a + 1 AS STRING)``)
    must call the function and caster it registered, not the literal registered after it."""
    from flott.table.planner import Rex, calc_source
    from flott.table.runtime import CompiledCode
    from flott.table.udf import udf

    @udf(result_type=DataTypes.BIGINT())
    def add(i: int, j: int) -> int:
        return i + j

    bigint = DataTypes.BIGINT()
    a = Rex("input", bigint, index=0)
    hundred = Rex("lit", bigint, value=100)
    call = Rex("udf", bigint, value=add, operands=[a, hundred])
    cast = Rex(
        "cast",
        DataTypes.STRING(),
        value="cast",
        operands=[Rex("call", bigint, value="plus", operands=[a, hundred])],
    )
    consts: list[object] = []
    source = calc_source([call, cast], None, consts, [])
    assert CompiledCode(source, consts).function()((1,)) == (101, "101")


def test_table_options_flott_does_not_honour_are_refused_when_set() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    # unset, the zone is what flott computes in; PyFlink names the machine's zone (Etc/UTC here)
    assert t_env.get_config().get_local_timezone() == "Etc/UTC"
    t_env.get_config().set("table.local-time-zone", "UTC")  # what flott computes in anyway
    assert t_env.get_config().get_local_timezone() == "UTC"
    with pytest.raises(NotYetSupportedError, match=r"table\.exec\.mini-batch\.enabled"):
        t_env.get_config().set("table.exec.mini-batch.enabled", "true")
    with pytest.raises(NotYetSupportedError, match="Asia/Tokyo"):
        t_env.get_config().set_local_timezone("Asia/Tokyo")


def test_substring_checks_its_operand_types_as_calcite() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.create_temporary_view("t", env.from_elements([(1, "a")], ["id", "name"]))
    assert env.sql_query("SELECT SUBSTRING(name, id, 1) FROM t").get_schema().get_field_names() == ["EXPR$0"]
    with pytest.raises(TableValidationError) as failure:
        env.sql_query("SELECT SUBSTRING(id, name) FROM t")
    shown = "'SUBSTRING(<BIGINT>, <VARCHAR(2147483647)>)'"
    assert f"Cannot apply 'SUBSTRING' to arguments of type {shown}" in str(failure.value)


def test_explain_shows_flotts_plan_tree_under_flinks_section_headings(t_env: TableEnvironment) -> None:
    plan = t_env.explain_sql("SELECT b, COUNT(*) FROM T GROUP BY b")
    headings = [line for line in plan.splitlines() if line.startswith("==")]
    sections = ["Abstract Syntax Tree", "Optimized Physical Plan", "Optimized Execution Plan"]
    assert headings == [f"== {s} ==" for s in sections]
    assert "Aggregate(fields=[" in plan and "+- " in plan
    first = t_env.sql_query("SELECT a FROM T").explain().splitlines()[:2]
    assert first == ["== Abstract Syntax Tree ==", "Calc(fields=[a: BIGINT])"]
    rows = list(t_env.execute_sql("EXPLAIN PLAN FOR SELECT a FROM T").collect())
    assert len(rows) == 1 and rows[0][0] == t_env.explain_sql("SELECT a FROM T")
    with pytest.raises(NotYetSupportedError, match="explain details"):
        t_env.execute_sql("EXPLAIN CHANGELOG_MODE SELECT a FROM T")


def test_binary_types_in_ddl_and_type_strings_are_flinks(t_env: TableEnvironment) -> None:
    """BYTES is a type sqlglot's Spark dialect lacks: flott reads it, alone and nested, and keeps
    BINARY/VARBINARY lengths as Flink does (schema prints measured on PyFlink 2.3)."""
    from flott.table.sql_types import parse_type

    t_env.execute_sql(
        "CREATE TABLE bin (b BYTES, c VARBINARY(3), d BINARY(2), v VARBINARY, e BINARY, "
        "m MAP<STRING, BYTES>, a ARRAY<BYTES>) WITH ('connector' = 'blackhole')"
    )
    types = [str(t) for t in t_env.from_path("bin").get_schema().get_field_data_types()]
    assert types == [
        "BYTES", "VARBINARY(3)", "BINARY(2)", "BYTES", "BINARY(1)", "MAP<STRING, BYTES>", "ARRAY<BYTES>",
    ]
    assert str(parse_type("ROW<x BYTES> NOT NULL")) == "ROW<`x` BYTES> NOT NULL"
    assert str(parse_type("MAP<STRING, BYTES>")) == "MAP<STRING, BYTES>"


def test_the_bytes_stand_in_cannot_be_written_by_a_program(t_env: TableEnvironment) -> None:
    """flott spells BYTES as JSONB for sqlglot; a program's own JSONB gets Flink's unknown-type error."""
    unknown = r"From line 1, column 19 to line 1, column 23: Unknown identifier 'JSONB'"
    with pytest.raises(TableValidationError, match=unknown):
        t_env.execute_sql("CREATE TABLE s (j JSONB) WITH ('connector' = 'blackhole')")


INSERT_COLUMN_MISTAKES = [  # what PyFlink 2.3 said (after "SQL validation failed. ")
    ("INSERT INTO p (c) VALUES (1)", "At line 1, column 16: Unknown target column 'c'"),
    (
        "INSERT INTO p (a, a) VALUES (1, 2)",
        "At line 1, column 19: Target column 'a' is assigned more than once",
    ),
    (
        "INSERT INTO q (b) VALUES ('x')",
        "At line 0, column 0: Column 'a' has no default value and does not allow NULLs",
    ),
    (
        "INSERT INTO p (a) VALUES (1, 'x')",
        "From line 1, column 19 to line 1, column 33: Number of columns must match number of query columns",
    ),
]


@pytest.mark.parametrize(("statement", "message"), INSERT_COLUMN_MISTAKES)
def test_insert_column_list_mistakes_get_flinks_messages(statement: str, message: str) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql("CREATE TABLE p (a INT, b STRING) WITH ('connector' = 'print')")
    env.execute_sql("CREATE TABLE q (a INT NOT NULL, b STRING) WITH ('connector' = 'print')")
    with pytest.raises(TableValidationError) as caught:
        env.execute_sql(statement)
    prefix = "org.apache.flink.table.api.ValidationException: SQL validation failed. "
    assert str(caught.value) == prefix + message


def test_the_not_null_enforcer_takes_flinks_values_only() -> None:
    from flott.errors import ConfigurationError

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.exec.sink.not-null-enforcer", "DROP")
    unparsable = r"Could not parse value 'drop2' for key 'table\.exec\.sink\.not-null-enforcer'"
    with pytest.raises(ConfigurationError, match=unparsable):
        env.get_config().set("table.exec.sink.not-null-enforcer", "drop2")


ROW_FIELD_MISTAKES = [  # what PyFlink 2.3 said
    (
        "SELECT p.zzz FROM j",
        "From line 1, column 8 to line 1, column 12: Column 'p.zzz' not found in table 'j'",
    ),
    ("SELECT id.x FROM j", "From line 1, column 8 to line 1, column 9: Table 'id' not found"),
]


@pytest.fixture
def rows_env() -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql("CREATE TABLE j (id INT, p ROW<name STRING, n INT>) WITH ('connector' = 'blackhole')")
    return env


@pytest.mark.parametrize(("statement", "message"), ROW_FIELD_MISTAKES)
def test_row_field_mistakes_get_flinks_messages(
    rows_env: TableEnvironment, statement: str, message: str
) -> None:
    with pytest.raises(TableValidationError) as caught:
        rows_env.execute_sql(statement)
    prefix = "org.apache.flink.table.api.ValidationException: SQL validation failed. "
    assert str(caught.value) == prefix + message


def test_row_fields_in_the_table_api_are_typed_and_named_as_flink_does(
    rows_env: TableEnvironment,
) -> None:
    schema = rows_env.from_path("j").select(col("p").get("name"), col("p").get(1)).get_schema()
    assert schema.get_field_names() == ["p$name", "p$_1"]
    assert [str(t) for t in schema.get_field_data_types()] == ["STRING", "INT"]
    for bad, call in [
        (col("p").get("zzz"), "get(ROW<`name` STRING, `n` INT>, CHAR(3) NOT NULL)"),
        (col("id").get("x"), "get(INT, CHAR(1) NOT NULL)"),
        (col("p").get(5), "get(ROW<`name` STRING, `n` INT>, INT NOT NULL)"),
    ]:
        with pytest.raises(TableValidationError) as caught:
            rows_env.from_path("j").select(bad)
        assert str(caught.value).endswith("Invalid function call:\n" + call)


def test_row_types_in_ddl_keep_positions_of_what_follows(rows_env: TableEnvironment) -> None:
    """A ROW type is cut out of the text sqlglot reads; a mistake after it is still reported where
    the user wrote it."""
    rows_env.execute_sql(
        "CREATE TABLE r (a ROW<x INT, y ROW(z STRING)>, b INT) WITH ('connector' = 'blackhole')"
    )
    types = [str(t) for t in rows_env.from_path("r").get_schema().get_field_data_types()]
    assert types == ["ROW<`x` INT, `y` ROW<`z` STRING>>", "INT"]
    ddl = "CREATE TABLE r2 (a ROW<x INT, y ROW(z STRING)>, c AS nope + 1) WITH ('connector' = 'blackhole')"
    column = ddl.index("nope") + 1
    where = f"From line 1, column {column} to line 1, column {column + 3}: "
    with pytest.raises(TableValidationError, match=where + "Column 'nope' not found in any table"):
        rows_env.execute_sql(ddl)

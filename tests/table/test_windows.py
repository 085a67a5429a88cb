"""Event time in flott.table, planned without running: the watermark and window TVF syntax cut out
of the statement, window assigners, the SQL watermark generator, the window aggregation's schema and
the refusals (what runs is in the corpus: sql_*_window, sql_window_late_data, table_group_windows)."""

from __future__ import annotations

from typing import Any

import pytest

from flott.api.streaming.windowing import TimeWindow
from flott.errors import NotYetSupportedError, TableValidationError
from flott.table import EnvironmentSettings, TableEnvironment
from flott.table.expressions import col, lit
from flott.table.sql_windows import PLACEHOLDER, rewrite
from flott.table.window import Session, Slide, Tumble
from flott.table.window_aggregate import (
    CumulativeEventTimeWindows,
    SqlWatermarkGenerators,
    WindowAggregate,
    from_millis,
    to_millis,
)

BIDS = """CREATE TABLE bids (
    id BIGINT,
    item AS CONCAT('item-', CAST(MOD(id, 3) AS STRING)),
    ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0',
        'fields.id.end' = '9')"""


@pytest.fixture
def t_env() -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(BIDS)
    return env


def test_the_watermark_clause_is_cut_out_keeping_every_other_position() -> None:
    out = rewrite(BIDS)
    assert out.watermark is not None and out.watermark.column == "ts"
    assert out.watermark.expression.sql() == "ts - INTERVAL '1' SECOND"
    assert "WATERMARK" not in out.text and len(out.text) == len(BIDS)
    assert out.text.count("\n") == BIDS.count("\n")
    assert out.text.index("WITH") == BIDS.index("WITH")


def test_a_window_tvf_call_becomes_a_placeholder_table_with_its_arguments_parsed() -> None:
    sql = (
        "SELECT user_name, COUNT(*) FROM TABLE(\n  SESSION(TABLE clicks PARTITION BY user_name, "
        "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY user_name, window_start, window_end"
    )
    out = rewrite(sql)
    (name, call), = out.tvfs.items()
    assert name.startswith(PLACEHOLDER) and f"FROM {name}" in out.text
    assert (call.kind, call.table, call.partition_keys, call.time_column, call.intervals_ms) == (
        "SESSION", "clicks", ["user_name"], "ts", [5000]
    )
    assert out.text.index("GROUP BY") == sql.index("GROUP BY") and out.text.count("\n") == 1
    hop = rewrite("SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '2' MINUTE, INTERVAL '1' HOUR))")
    assert next(iter(hop.tvfs.values())).intervals_ms == [120_000, 3_600_000]


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("SELECT * FROM TABLE(TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '1' "
         "SECOND))", NotYetSupportedError, "named arguments"),
        ("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '1' SECOND))",
         TableValidationError, "offset argument is not yet supported"),
        ("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MONTH))",
         NotYetSupportedError, "interval unit MONTH"),
        ("SELECT * FROM TABLE(HOP(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND, "
         "INTERVAL '2' SECOND))", TableValidationError, "only SESSION does"),
    ],
)
def test_window_tvf_calls_flott_does_not_plan_are_refused(sql: str, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        rewrite(sql)


def test_cumulate_assigns_each_element_to_every_window_of_its_cycle_that_ends_after_it() -> None:
    cumulate = CumulativeEventTimeWindows(size=6000, step=2000)
    windows = cumulate.assign_windows(None, 2500, None)  # type: ignore[arg-type]
    assert list(windows) == [TimeWindow(0, 4000), TimeWindow(0, 6000)]
    assert list(cumulate.assign_windows(None, -1, None)) == [  # type: ignore[arg-type]
        TimeWindow(-6000, 0)
    ]


class _Watermarks:
    def __init__(self) -> None:
        self.emitted: list[int] = []

    def emit_watermark(self, timestamp: int) -> None:
        self.emitted.append(timestamp)


def test_the_sql_watermark_is_emitted_after_a_row_moving_it_past_the_interval(
    t_env: TableEnvironment,
) -> None:
    node: Any = t_env._scan("bids")
    generator = SqlWatermarkGenerators(_compiled(node.watermark), 200)()
    out = _Watermarks()
    for ms in (0, 100, 1150, 1300, 1500, 900):
        generator.on_event((0, (None, None, from_millis(ms))), ms, out)
    assert out.emitted == [300], "ts - 1 s, from 0: only a row moving it more than 200 ms emits it"
    generator.on_periodic_emit(out)
    assert out.emitted == [300, 500], "the periodic tick emits what rows moved it since"
    generator.on_event((0, (None, None, from_millis(1600))), 1600, out)
    generator.on_periodic_emit(out)
    generator.on_periodic_emit(out)
    assert out.emitted == [300, 500, 600]


def _compiled(rex: Any) -> Any:
    from flott.table.planner import calc_source
    from flott.table.runtime import CompiledCode

    consts: list[Any] = []
    return CompiledCode(calc_source([rex], None, consts, []), consts)


def test_time_values_are_utc_epoch_milliseconds() -> None:
    assert to_millis(from_millis(-4000)) == -4000
    assert str(from_millis(1500)) == "1970-01-01 00:00:01.500000"


def test_a_window_aggregation_has_the_window_columns_as_timestamp_3(t_env: TableEnvironment) -> None:
    table = t_env.sql_query(
        "SELECT window_start, window_end, item, COUNT(*) AS n, SUM(id) AS total "
        "FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end, item"
    )
    schema = table.get_schema()
    assert [str(t) for t in schema.get_field_data_types()] == [
        "TIMESTAMP(3) NOT NULL", "TIMESTAMP(3) NOT NULL", "STRING", "BIGINT NOT NULL", "BIGINT"
    ]
    assert isinstance(table._node.input, WindowAggregate)  # type: ignore[attr-defined]


def test_a_window_tvf_needs_a_time_attribute(t_env: TableEnvironment) -> None:
    t_env.execute_sql("CREATE TABLE plain (id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen', "
                      "'number-of-rows' = '1')")
    with pytest.raises(TableValidationError, match="requires the timecol is a time attribute type"):
        t_env.sql_query("SELECT window_start, window_end, COUNT(*) FROM TABLE(TUMBLE(TABLE plain, "
                        "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end")


def test_a_watermark_needs_a_timestamp_column_of_precision_up_to_3(t_env: TableEnvironment) -> None:
    with pytest.raises(TableValidationError, match="must be of type TIMESTAMP"):
        t_env.execute_sql("CREATE TABLE w (id BIGINT, WATERMARK FOR id AS id) WITH ('connector' = 'datagen')")
    with pytest.raises(TableValidationError, match="not defined in the table schema"):
        t_env.execute_sql("CREATE TABLE w (id BIGINT, WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')")


def test_session_tvf_rows_without_the_window_aggregation_are_refused(t_env: TableEnvironment) -> None:
    table = t_env.sql_query("SELECT * FROM TABLE(SESSION(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' SECOND))")
    assert table.get_schema().get_field_names()[-3:] == ["window_start", "window_end", "window_time"]
    with pytest.raises(NotYetSupportedError, match="SESSION window TVF whose rows are not aggregated"):
        table.execute()


def test_hop_size_must_be_a_multiple_of_its_slide(t_env: TableEnvironment) -> None:
    with pytest.raises(TableValidationError, match="integral multiple of slide"):
        t_env.sql_query(
            "SELECT window_start, window_end, COUNT(*) FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), "
            "INTERVAL '4' SECOND, INTERVAL '6' SECOND)) GROUP BY window_start, window_end"
        )


def test_table_api_group_windows_name_unaliased_window_properties_expr_n(t_env: TableEnvironment) -> None:
    bids = t_env.from_path("bids")
    t = bids.window(Slide.over(lit(10).seconds).every(lit(5).seconds).on(col("ts")).alias("w")) \
        .group_by(col("w")).select(col("w").start, col("w").end, col("id").count.alias("n"))
    assert t.get_schema().get_field_names() == ["EXPR$0", "EXPR$1", "n"]
    with pytest.raises(TableValidationError, match="must be used in the GroupBy clause"):
        bids.window(Tumble.over(lit(5).seconds).on(col("ts")).alias("w")).group_by(col("item"))
    with pytest.raises(NotYetSupportedError, match="row-count windows"):
        Session.with_gap(lit(5))


TUMBLE_10S = "TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))"


def test_a_where_on_the_input_columns_of_a_window_tvf_filters_before_the_windows(
    t_env: TableEnvironment,
) -> None:
    table = t_env.sql_query(
        f"SELECT window_start, COUNT(*) AS n FROM {TUMBLE_10S} WHERE id > 3 GROUP BY window_start, window_end"
    )
    aggregate = table._node.input  # type: ignore[attr-defined]
    assert isinstance(aggregate, WindowAggregate)
    assert aggregate.tvf.input.condition is not None  # type: ignore[attr-defined]
    with pytest.raises(NotYetSupportedError, match="filtered on window columns or projected first"):
        t_env.sql_query(
            f"SELECT window_start, COUNT(*) FROM {TUMBLE_10S} "
            "WHERE window_start > TIMESTAMP '1970-01-01 00:00:00' GROUP BY window_start, window_end"
        ).execute()

"""The filesystem table connector: csv/json files as Flink writes them, PARTITIONED BY directories,
partition pruning, refused options; TableDescriptor computed columns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flott.errors import NotYetSupportedError, TableValidationError
from flott.table import DataTypes, EnvironmentSettings, Schema, TableDescriptor, TableEnvironment

pytestmark = pytest.mark.processes  # the INSERTs and SELECTs run jobs on a local cluster


def _files(path: Path) -> dict[str, list[str]]:
    """Visible files' lines by directory relative to ``path`` (hidden in-progress files left out)."""
    out: dict[str, list[str]] = {}
    for root, _, names in os.walk(path):
        for name in names:
            if not name.startswith("."):
                rel = os.path.relpath(root, path)
                out.setdefault(rel, []).extend((Path(root) / name).read_text().splitlines())
    return {k: sorted(v) for k, v in out.items()}


def _rows(env: TableEnvironment, sql: str) -> list[tuple[object, ...]]:
    with env.execute_sql(sql).collect() as rows:
        return sorted((tuple(r) for r in rows), key=repr)


def test_csv_and_json_lines_are_rendered_as_flinks_formats(tmp_path: Path) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    src = env.from_elements(
        [(1, "a b", 2.5e10, True), (2, None, None, False), (3, 'q"', 1.0, None)], ["id", "s", "d", "b"]
    )
    for fmt in ("csv", "json"):
        env.execute_sql(
            f"CREATE TABLE {fmt}_t (id BIGINT, s STRING, d DOUBLE, b BOOLEAN) WITH "
            f"('connector' = 'filesystem', 'path' = '{tmp_path / fmt}', 'format' = '{fmt}')"
        )
        src.execute_insert(f"{fmt}_t").wait()
    assert _files(tmp_path / "csv") == {
        ".": ['1,"a b",2.5E10,true', "2,,,false", '3,"q""",1.0,']
    }
    assert _files(tmp_path / "json") == {
        ".": [
            '{"id":1,"s":"a b","d":2.5E10,"b":true}',
            '{"id":2,"s":null,"d":null,"b":false}',
            '{"id":3,"s":"q\\"","d":1.0,"b":null}',
        ]
    }
    assert _rows(env, "SELECT * FROM json_t") == sorted(
        [(1, "a b", 2.5e10, True), (2, None, None, False), (3, 'q"', 1.0, None)], key=repr
    )


def test_partitioned_table_writes_k_v_directories_and_prunes_on_read(tmp_path: Path) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        f"CREATE TABLE p (id BIGINT, c STRING) PARTITIONED BY (c) WITH "
        f"('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')"
    )
    env.from_elements([(1, "de"), (2, "a/b"), (3, None), (4, "de")], ["id", "c"]).execute_insert("p").wait()
    assert _files(tmp_path) == {
        "c=de": ["1", "4"],
        "c=a%2Fb": ["2"],
        "c=__DEFAULT_PARTITION__": ["3"],
    }
    assert _rows(env, "SELECT id, c FROM p") == sorted(
        [(1, "de"), (2, "a/b"), (3, None), (4, "de")], key=repr
    )
    # a partition whose files the filter must never open: pruned, the query does not fail
    (tmp_path / "c=xx").mkdir()
    (tmp_path / "c=xx" / "broken").write_text("not,a,row,of,this,table\n")
    assert _rows(env, "SELECT id FROM p WHERE c = 'de' AND id > 1") == [(4,)]
    with pytest.raises(Exception, match="fields"):
        _rows(env, "SELECT id FROM p WHERE id > 1")


def test_an_empty_csv_field_is_an_empty_string_null_only_by_literal_and_fails_a_number(
    tmp_path: Path,
) -> None:
    """As PyFlink: Flink writes NULL as an empty field but does not read an empty number back as NULL."""
    (tmp_path / "in.csv").write_text("1,a,2.5\n2,,\n")
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    columns = "(id INT, s STRING, d DOUBLE)"
    env.execute_sql(
        f"CREATE TABLE strict_t {columns} WITH "
        f"('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')"
    )
    with pytest.raises(Exception, match="Fail to deserialize at field: d"):
        _rows(env, "SELECT * FROM strict_t")
    env.execute_sql(
        f"CREATE TABLE nulls_t {columns} WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
        "'format' = 'csv', 'csv.null-literal' = '')"
    )
    assert _rows(env, "SELECT * FROM nulls_t") == [(1, "a", 2.5), (2, None, None)]


def test_streaming_insert_commits_its_files_and_leaves_no_in_progress_ones(tmp_path: Path) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("execution.checkpointing.interval", "200 ms")
    env.execute_sql(
        f"CREATE TABLE s (id BIGINT, k STRING) PARTITIONED BY (k) WITH "
        f"('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'json')"
    )
    env.from_elements([(i, str(i % 2)) for i in range(100)], ["id", "k"]).execute_insert("s").wait()
    files = _files(tmp_path)
    assert sorted(files) == ["k=0", "k=1"]
    assert len(files["k=0"]) == 50 and files["k=1"][0].startswith('{"id":')
    hidden = [n for _, _, names in os.walk(tmp_path) for n in names if n.startswith(".")]
    assert hidden == []


@pytest.mark.parametrize(
    ("with_", "error", "message"),
    [
        ("'format' = 'parquet'", NotYetSupportedError, "format 'parquet' is not yet supported"),
        ("'format' = 'csv', 'sink.rolling-policy.file-size' = '1MB'", NotYetSupportedError,
         "sink.rolling-policy.file-size are not yet supported"),
        ("'format' = 'csv', 'partition.default-name' = 'x'", NotYetSupportedError,
         "partition.default-name are not yet supported"),
        ("'format' = 'json', 'csv.null-literal' = 'x'", NotYetSupportedError, "csv.null-literal"),
        ("'format' = 'csv', 'no-such-option' = 'x'", TableValidationError,
         "Unsupported options found for 'filesystem'"),
    ],
)
def test_options_flott_does_not_implement_are_refused(
    tmp_path: Path, with_: str, error: type[Exception], message: str
) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    with pytest.raises(error, match=message):
        env.execute_sql(
            f"CREATE TABLE t (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', {with_})"
        )


def test_partitioned_by_is_refused_for_other_connectors_and_unknown_columns() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    with pytest.raises(NotYetSupportedError, match="PARTITIONED BY is not yet supported for the 'print'"):
        env.execute_sql(
            "CREATE TABLE t (id BIGINT, k STRING) PARTITIONED BY (k) WITH ('connector' = 'print')"
        )
    with pytest.raises(TableValidationError, match="Partition column 'nope'"):
        env.execute_sql(
            "CREATE TABLE t (id BIGINT) PARTITIONED BY (nope) "
            "WITH ('connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'csv')"
        )


def test_descriptor_computed_column_is_evaluated_and_printed_in_the_schema() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.create_temporary_table(
        "src",
        TableDescriptor.for_connector("datagen")
        .schema(
            Schema.new_builder().column("id", DataTypes.BIGINT()).column_by_expression("d", "id * 2").build()
        )
        .option("number-of-rows", "3")
        .option("fields.id.kind", "sequence")
        .option("fields.id.start", "1")
        .option("fields.id.end", "3")
        .build(),
    )
    assert _rows(env, "SELECT id, d FROM src") == [(1, 2), (2, 4), (3, 6)]
    assert str(env.from_path("src").get_schema()) == "root\n |-- id: BIGINT\n |-- d: BIGINT AS `id` * 2\n"

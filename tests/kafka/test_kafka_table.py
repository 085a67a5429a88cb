"""The Table/SQL ``kafka`` and ``upsert-kafka`` connectors against the test broker: INSERT INTO a
kafka table and read it back bounded (keys, metadata columns), a GROUP BY into upsert-kafka (the
topic holds upserts, no -U) read back as a changelog, tombstones as deletes; what is refused."""

from __future__ import annotations

import json

import pytest

from flott.common import RowKind
from flott.errors import NotYetSupportedError, TableValidationError
from flott.table import EnvironmentSettings, TableEnvironment
from tests.kafka.broker import Broker

pytestmark = pytest.mark.processes  # the INSERTs and SELECTs run jobs on a local cluster


def _with(broker: Broker, topic: str, **extra: str) -> str:
    """A WITH clause; on Tansu one record per produce request (its high watermark of batched
    records is the last batch's base offset + 1, which would end a bounded read early)."""
    options = {"topic": topic, "properties.bootstrap.servers": broker.bootstrap, **extra}
    if broker.is_tansu:
        options["properties.batch.num.messages"] = "1"
    return ", ".join(f"'{k}' = '{v}'" for k, v in options.items())


def _rows(env: TableEnvironment, sql: str) -> list[tuple[object, ...]]:
    with env.execute_sql(sql).collect() as rows:
        return sorted((tuple(r) for r in rows), key=repr)


def test_insert_into_kafka_then_read_back_bounded_with_keys_and_metadata(kafka_broker: Broker) -> None:
    topic = kafka_broker.create_topic(partitions=1)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        "CREATE TABLE orders (id BIGINT, item STRING, price DOUBLE) WITH ('connector' = 'kafka', "
        "'format' = 'json', 'key.format' = 'json', 'key.fields' = 'id', "
        f"'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', {_with(kafka_broker, topic)})"
    )
    env.execute_sql(
        "INSERT INTO orders SELECT * FROM (VALUES (1, 'apple', 1.5), (2, 'pear', CAST(NULL AS DOUBLE)), "
        "(3, 'fig', 3.0)) AS t(id, item, price)"
    ).wait()
    messages = kafka_broker.read(topic, expect=3)
    assert sorted((m.key(), m.value()) for m in messages) == [
        (b'{"id":1}', b'{"id":1,"item":"apple","price":1.5}'),
        (b'{"id":2}', b'{"id":2,"item":"pear","price":null}'),
        (b'{"id":3}', b'{"id":3,"item":"fig","price":3.0}'),
    ]
    assert _rows(env, "SELECT id, item, price FROM orders WHERE id > 1") == [(2, "pear", None), (3, "fig", 3.0)]
    env.execute_sql(
        "CREATE TABLE orders_meta (`partition` INT METADATA VIRTUAL, `off` BIGINT METADATA FROM 'offset' VIRTUAL, "
        "`ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', item STRING) WITH ('connector' = 'kafka', "
        "'value.format' = 'json', 'value.fields-include' = 'ALL', 'scan.startup.mode' = 'earliest-offset', "
        f"'scan.bounded.mode' = 'latest-offset', {_with(kafka_broker, topic)})"
    )
    got = _rows(env, "SELECT `partition`, `off`, item, ts IS NOT NULL FROM orders_meta")
    assert sorted(r[1] for r in got) == [0, 1, 2]  # the VALUES rows are written in no set order
    assert sorted((r[0], r[2], r[3]) for r in got) == [(0, "apple", True), (0, "fig", True), (0, "pear", True)]


def test_csv_and_raw_formats_and_specific_offsets(kafka_broker: Broker) -> None:
    topic = kafka_broker.create_topic(partitions=1)
    kafka_broker.produce(topic, [b"a,1", b"b,2", b"c,"])
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        "CREATE TABLE c (name STRING, n INT) WITH ('connector' = 'kafka', 'format' = 'csv', "
        "'csv.null-literal' = '', 'scan.startup.mode' = 'specific-offsets', "
        "'scan.startup.specific-offsets' = 'partition:0,offset:1', "
        f"'scan.bounded.mode' = 'latest-offset', {_with(kafka_broker, topic)})"
    )
    assert _rows(env, "SELECT * FROM c") == [("b", 2), ("c", None)]
    env.execute_sql(
        "CREATE TABLE r (line STRING) WITH ('connector' = 'kafka', 'format' = 'raw', "
        f"'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', {_with(kafka_broker, topic)})"
    )
    assert _rows(env, "SELECT UPPER(line) FROM r") == [("A,1",), ("B,2",), ("C,",)]


def test_group_by_into_upsert_kafka_and_its_changelog_read_back(kafka_broker: Broker) -> None:
    src = kafka_broker.create_topic(partitions=1)
    dst = kafka_broker.create_topic(partitions=1)
    words = ["a", "b", "a", "c", "a", "b"]
    kafka_broker.produce(src, [json.dumps({"word": w}).encode() for w in words])
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        "CREATE TABLE words (word STRING) WITH ('connector' = 'kafka', 'format' = 'json', "
        f"'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', {_with(kafka_broker, src)})"
    )
    env.execute_sql(
        "CREATE TABLE counts (word STRING, cnt BIGINT, PRIMARY KEY (word) NOT ENFORCED) WITH ("
        "'connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json', "
        f"'scan.bounded.mode' = 'latest-offset', {_with(kafka_broker, dst)})"
    )
    env.get_config().set("parallelism.default", "1")
    env.execute_sql("INSERT INTO counts SELECT word, COUNT(*) FROM words GROUP BY word").wait()
    messages = kafka_broker.read(dst, expect=6)
    # every +I/+U is an upsert of the key's message; no -U reaches the topic
    assert [(m.key(), m.value()) for m in messages] == [
        (b'{"word":"a"}', b'{"word":"a","cnt":1}'),
        (b'{"word":"b"}', b'{"word":"b","cnt":1}'),
        (b'{"word":"a"}', b'{"word":"a","cnt":2}'),
        (b'{"word":"c"}', b'{"word":"c","cnt":1}'),
        (b'{"word":"a"}', b'{"word":"a","cnt":3}'),
        (b'{"word":"b"}', b'{"word":"b","cnt":2}'),
    ]
    # a tombstone deletes its key
    kafka_broker.produce(dst, [None], keys=[b'{"word":"c"}'])  # type: ignore[list-item]
    with env.execute_sql("SELECT * FROM counts").collect() as rows:
        changelog = [(r.get_row_kind(), tuple(r)) for r in rows]
    final: dict[object, tuple[object, ...]] = {}
    for kind, row in changelog:
        if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            final[row[0]] = row
        elif kind in (RowKind.DELETE, RowKind.UPDATE_BEFORE):
            assert final.pop(row[0]) == row  # a retraction names the row it retracts
    assert final == {"a": ("a", 3), "b": ("b", 2)}
    assert (RowKind.DELETE, ("c", 1)) in changelog
    assert changelog[:2] == [(RowKind.INSERT, ("a", 1)), (RowKind.INSERT, ("b", 1))]
    assert (RowKind.UPDATE_BEFORE, ("a", 1)) in changelog and (RowKind.UPDATE_AFTER, ("a", 2)) in changelog
    # the compacted view, aggregated again: the latest value per key only
    with env.execute_sql("SELECT SUM(cnt) FROM counts").collect() as rows:
        sums = [(r.get_row_kind(), r[0]) for r in rows]
    assert sums[-1] == (RowKind.UPDATE_AFTER, 5)


def test_options_flink_has_and_flott_does_not_are_refused_when_declared() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    base = "'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9'"

    def create(columns: str, options: str) -> None:
        env.execute_sql(f"CREATE TABLE x ({columns}) WITH ({base}, {options})")

    with pytest.raises(NotYetSupportedError, match="json.ignore-parse-errors"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'json.ignore-parse-errors' = 'true'")
    with pytest.raises(NotYetSupportedError, match="avro"):
        create("a INT", "'connector' = 'kafka', 'format' = 'avro'")
    with pytest.raises(NotYetSupportedError, match="sink.partitioner"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'sink.partitioner' = 'fixed'")
    with pytest.raises(NotYetSupportedError, match="scan.topic-partition-discovery.interval"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'scan.topic-partition-discovery.interval' = '1s'")
    with pytest.raises(NotYetSupportedError, match="headers"):
        create("a INT, h STRING METADATA FROM 'headers'", "'connector' = 'kafka', 'format' = 'json'")
    with pytest.raises(TableValidationError, match="Unsupported options found for 'kafka'"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'no-such-option' = '1'")
    with pytest.raises(TableValidationError, match="require to define a PRIMARY KEY"):
        create("a INT", "'connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json'")
    with pytest.raises(TableValidationError, match="doesn't support defining PRIMARY KEY"):
        create("a INT, PRIMARY KEY (a) NOT ENFORCED", "'connector' = 'kafka', 'format' = 'json'")
    with pytest.raises(TableValidationError, match="NOT ENFORCED"):
        create("a INT, PRIMARY KEY (a)", "'connector' = 'upsert-kafka', 'key.format' = 'json', "
               "'value.format' = 'json'")
    with pytest.raises(TableValidationError, match="sink.transactional-id-prefix must be specified"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once'")
    with pytest.raises(TableValidationError, match="'key.fields'"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'key.format' = 'json'")
    with pytest.raises(TableValidationError, match="Invalid value for option 'scan.startup.mode'"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'scan.startup.mode' = 'beginning'")
    with pytest.raises(TableValidationError, match="only supports single physical column"):
        create("a INT, b INT", "'connector' = 'kafka', 'format' = 'raw'")

"""The Table/SQL ``kafka`` and ``upsert-kafka`` connectors against the test broker: INSERT INTO a
kafka table and read it back bounded (keys, metadata columns), a GROUP BY into upsert-kafka (the
topic holds upserts, no -U) read back as a changelog, tombstones as deletes.
What is refused: tests/table/test_kafka_options.py."""

from __future__ import annotations

import json

import pytest

from flott.common import RowKind
from flott.table import EnvironmentSettings, TableEnvironment
from tests.kafka.broker import Broker

pytestmark = pytest.mark.processes  # the INSERTs and SELECTs run jobs on a local cluster

BOUNDED = "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'"


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
        f"{BOUNDED}, {_with(kafka_broker, topic)})"
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
    assert _rows(env, "SELECT id, item, price FROM orders WHERE id > 1") == [
        (2, "pear", None),
        (3, "fig", 3.0),
    ]
    env.execute_sql(
        "CREATE TABLE orders_meta (`partition` INT METADATA VIRTUAL, "
        "`off` BIGINT METADATA FROM 'offset' VIRTUAL, "
        "`ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', item STRING) WITH ('connector' = 'kafka', "
        "'value.format' = 'json', 'value.fields-include' = 'ALL', 'scan.startup.mode' = 'earliest-offset', "
        f"'scan.bounded.mode' = 'latest-offset', {_with(kafka_broker, topic)})"
    )
    got = _rows(env, "SELECT `partition`, `off`, item, ts IS NOT NULL FROM orders_meta")
    assert sorted(r[1] for r in got) == [0, 1, 2]  # the VALUES rows are written in no set order
    assert sorted((r[0], r[2], r[3]) for r in got) == [
        (0, "apple", True),
        (0, "fig", True),
        (0, "pear", True),
    ]


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
        f"{BOUNDED}, {_with(kafka_broker, topic)})"
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
        f"{BOUNDED}, {_with(kafka_broker, src)})"
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


def test_table_descriptor_upsert_kafka_exactly_once_with_key_prefix(kafka_broker: Broker) -> None:
    """TableDescriptor.for_connector with a primary key; a key prefix with EXCEPT_KEY values; the
    exactly-once sink (Kafka transactions committed on the job's end)."""
    from flott.table import DataTypes, Schema, TableDescriptor

    topic = kafka_broker.create_topic(partitions=2)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    builder = TableDescriptor.for_connector("upsert-kafka").schema(
        Schema.new_builder()
        .column("k_id", DataTypes.BIGINT())
        .column("name", DataTypes.STRING())
        .primary_key("k_id")
        .build()
    )
    options = {
        "topic": topic,
        "properties.bootstrap.servers": kafka_broker.bootstrap,
        "key.format": "json",
        "key.fields-prefix": "k_",
        "value.format": "csv",
        "value.fields-include": "EXCEPT_KEY",
        "scan.bounded.mode": "latest-offset",
        "sink.delivery-guarantee": "exactly-once",
        "sink.transactional-id-prefix": f"tx-{topic}",
    }
    if kafka_broker.is_tansu:
        options["properties.batch.num.messages"] = "1"
    for k, v in options.items():
        builder.option(k, v)
    env.create_temporary_table("people", builder.build())
    env.from_elements([(1, "ann"), (2, "bo"), (1, "anna")], ["k_id", "name"]).execute_insert("people").wait()
    messages = kafka_broker.read(topic, expect=3)  # read_committed: only committed transactions
    assert sorted((m.key(), m.value()) for m in messages) == sorted(
        [(b'{"id":1}', b"ann"), (b'{"id":2}', b"bo"), (b'{"id":1}', b"anna")]
    )
    with env.execute_sql("SELECT * FROM people").collect() as rows:
        changelog = [(r.get_row_kind(), tuple(r)) for r in rows]
    final = {row[0]: row for kind, row in changelog if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER)}
    assert len(final) == 2 and final[2] == (2, "bo") and final[1][1] in ("ann", "anna")
